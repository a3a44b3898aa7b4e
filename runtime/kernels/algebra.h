/* Cumulative sums, tensor contractions and matrix ops:
 * X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_ALGEBRA_H
#define GC_K_ALGEBRA_H

#define GC_OPS_ALGEBRA(X)                                                                          \
	X(CumSum, 2, 2, 1, 1)                                                                      \
	X(EyeLike, 1, 1, 1, 1)                                                                     \
	X(Einsum, 1, 2147483647, 1, 1)                                                             \
	X(Det, 1, 1, 1, 1)                                                                         \
	X(MeanVarianceNormalization, 1, 1, 1, 1)

#endif
