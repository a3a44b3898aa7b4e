/* Ops that pick or reorder elements by value or index:
 * X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_SELECT_H
#define GC_K_SELECT_H

#define GC_OPS_SELECT(X)                                                                           \
	X(TopK, 2, 2, 2, 2)                                                                        \
	X(Hardmax, 1, 1, 1, 1)                                                                     \
	X(NonZero, 1, 1, 1, 1)                                                                     \
	X(Compress, 2, 2, 1, 1)                                                                    \
	X(Scatter, 3, 3, 1, 1)                                                                     \
	X(ReverseSequence, 2, 2, 1, 1)                                                             \
	X(Unique, 1, 1, 1, 4)                                                                      \
	X(MaxUnpool, 2, 3, 1, 1)

#endif
