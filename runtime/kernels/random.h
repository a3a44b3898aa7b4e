/*
 * Random ops (docs/random.md): X(Name, min_in, max_in, min_out, max_out).
 * Training-mode Dropout lives with Dropout (shape.c) and draws its mask
 * here (gc_random_dropout_setup).
 */
#ifndef GC_K_RANDOM_H
#define GC_K_RANDOM_H

#include "../kernel.h"

#define GC_OPS_RANDOM(X)                                                                           \
	X(RandomUniform, 0, 0, 1, 1)                                                               \
	X(RandomNormal, 0, 0, 1, 1)                                                                \
	X(RandomUniformLike, 1, 1, 1, 1)                                                           \
	X(RandomNormalLike, 1, 1, 1, 1)                                                            \
	X(Bernoulli, 1, 1, 1, 1)                                                                   \
	X(Multinomial, 1, 1, 1, 1)

/* Dropout with training_mode true and this ratio (in [0, 1)): out[0] =
 * x * mask / (1 - ratio), out[1] (when wanted) the bool mask, the mask
 * drawn as RandomUniform's values >= ratio. x is float, double, float16
 * or bfloat16. Sets n->run and n->state. */
int gc_random_dropout_setup(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			    double ratio);

#endif
