/*
 * Backward kernels that the Gradient pass (lib/pass-gradient.c) emits for
 * the forward ops whose gradient is not a short chain of ONNX ops, in
 * graphcc's domain (com.graphcc): X(Name, min_in, max_in, min_out, max_out).
 * Each takes the forward op's attributes unchanged. Kernels in grad.c.
 *
 *   ConvGradInput(dY, W, X) -> dX       Conv's input gradient (X: its shape)
 *   ConvGradWeight(dY, X, W) -> dW      Conv's weight gradient (W: its shape)
 *   MaxPoolGrad(dY, X) -> dX            dY to each window's (first) maximum
 *   AveragePoolGrad(dY, X) -> dX        dY spread over each window, / count
 *   NegativeLogLikelihoodLossGrad(dL, input, target[, weight]) -> dInput
 *   ReluGrad(dY, X) -> dX               dY where X > 0, else 0 (PyTorch's rule at 0)
 */
#ifndef GC_K_GRAD_H
#define GC_K_GRAD_H

#define GC_OPS_GRAD(X)                                                                             \
	X(ConvGradInput, 3, 3, 1, 1)                                                               \
	X(ConvGradWeight, 3, 3, 1, 1)                                                              \
	X(MaxPoolGrad, 2, 2, 1, 1)                                                                 \
	X(AveragePoolGrad, 2, 2, 1, 1)                                                             \
	X(NegativeLogLikelihoodLossGrad, 3, 4, 1, 1)                                               \
	X(ReluGrad, 2, 2, 1, 1)

#endif
