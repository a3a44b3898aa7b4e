
BinputJ≥B╥д∙Fщдац©сю/AT╥"EBё©