2a
b2axb2aébBX