/*
 * Ops that graphcc's own passes make from chains that exporters write out
 * (lib/pass-fuse-*.c), in graphcc's domain, so that no ONNX model's op
 * changes meaning: X(Name, min_in, max_in, min_out, max_out). Kernels in
 * elementwise-unary.c; a model may use them directly too.
 *
 *   com.graphcc::Swish(x) = x * sigmoid(x)                (SiLU)
 *   com.graphcc::Gelu(x)  = x / 2 * (1 + erf(x / sqrt 2))  (GELU, exact form)
 *   com.graphcc::SqueezeExcite(x, W1, B1, W2, B2) = x * gate(W2 act(W1 mean(x) + B1) + B2)
 *                          (squeeze-and-excitation; squeeze-excite.c)
 */
#ifndef GC_K_FUSED_H
#define GC_K_FUSED_H

#define GC_DOMAIN_GRAPHCC "com.graphcc"

#define GC_OPS_FUSED(X)                                                                            \
	X(Swish, 1, 1, 1, 1)                                                                       \
	X(Gelu, 1, 1, 1, 1)                                                                        \
	X(SqueezeExcite, 5, 5, 1, 1)

/* Fused ops that ONNX adopted later in its default domain, with the same
 * meaning (op-versions.h says from which opset): Gelu-20 (with its
 * approximate="tanh" form too). */
#define GC_OPS_FUSED_IN_ONNX(X) X(Gelu)

#endif
