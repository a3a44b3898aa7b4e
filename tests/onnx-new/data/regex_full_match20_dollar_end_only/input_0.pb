2ab2ab
BX