/*
 * The optimizers of the domain ai.onnx.preview.training (opset 1):
 * X(Name, min_in, max_in, min_out, max_out). These ops live in that domain,
 * not the default one (runtime/ops.c's domain table says so); Gradient, the
 * domain's fourth op, is no kernel but a graph pass (lib/pass-gradient.c).
 */
#ifndef GC_K_TRAINING_H
#define GC_K_TRAINING_H

#define GC_DOMAIN_TRAINING "ai.onnx.preview.training"

#define GC_OPS_TRAINING(X)                                                                         \
	X(Adagrad, 5, GC_ARITY_MAX, 1, GC_ARITY_MAX)                                               \
	X(Adam, 6, GC_ARITY_MAX, 1, GC_ARITY_MAX)                                                  \
	X(Momentum, 5, GC_ARITY_MAX, 1, GC_ARITY_MAX)

#endif
