2a	b
c d2xBX