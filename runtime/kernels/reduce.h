/* Reductions over axes. X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_REDUCE_H
#define GC_K_REDUCE_H

#define GC_OPS_REDUCE(X)                                                                           \
	X(ReduceMean, 1, 2, 1, 1)                                                                  \
	X(ReduceSum, 1, 2, 1, 1)                                                                   \
	X(ReduceMax, 1, 2, 1, 1)                                                                   \
	X(ReduceMin, 1, 2, 1, 1)                                                                   \
	X(ReduceProd, 1, 2, 1, 1)                                                                  \
	X(ReduceL1, 1, 2, 1, 1)                                                                    \
	X(ReduceL2, 1, 2, 1, 1)                                                                    \
	X(ReduceLogSum, 1, 2, 1, 1)                                                                \
	X(ReduceLogSumExp, 1, 2, 1, 1)                                                             \
	X(ReduceSumSquare, 1, 2, 1, 1)                                                             \
	X(ArgMax, 1, 1, 1, 1)                                                                      \
	X(ArgMin, 1, 1, 1, 1)

#endif
