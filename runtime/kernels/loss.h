/* Loss functions. X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_LOSS_H
#define GC_K_LOSS_H

#define GC_OPS_LOSS(X)                                                                             \
	X(NegativeLogLikelihoodLoss, 2, 3, 1, 1)                                                   \
	X(SoftmaxCrossEntropyLoss, 2, 3, 1, 2)

#endif
