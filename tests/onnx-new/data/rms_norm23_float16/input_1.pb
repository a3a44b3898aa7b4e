
BscaleJw8򐛦敫旰(9鹾,�