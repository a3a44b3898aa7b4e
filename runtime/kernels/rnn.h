/* Recurrent layers: X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_RNN_H
#define GC_K_RNN_H

#define GC_OPS_RNN(X)                                                                              \
	X(RNN, 3, 6, 0, 2)                                                                         \
	X(GRU, 3, 6, 0, 2)                                                                         \
	X(LSTM, 3, 8, 0, 3)

#endif
