/*
 * The built-in operations: one list, X(Name, min inputs, max inputs,
 * min outputs, max outputs), gathered from the kernel families. It generates
 * the op enum, the name table and the prepare table; an op missing its
 * prepare function does not link.
 */
#ifndef GC_OPS_H
#define GC_OPS_H

#include "kernel.h"
#include "kernels/algebra.h"
#include "kernels/control.h"
#include "kernels/detection.h"
#include "kernels/elementwise.h"
#include "kernels/fused.h"
#include "kernels/grad.h"
#include "kernels/loss.h"
#include "kernels/nn.h"
#include "kernels/quant.h"
#include "kernels/random.h"
#include "kernels/reduce.h"
#include "kernels/resample.h"
#include "kernels/rnn.h"
#include "kernels/select.h"
#include "kernels/shape.h"
#include "kernels/signal.h"
#include "kernels/text.h"
#include "kernels/training.h"

#define GC_OP_LIST(X)                                                          \
	GC_OPS_ALGEBRA(X)                                                      \
	GC_OPS_DETECTION(X)                                                    \
	GC_OPS_ELEMENTWISE(X)                                                  \
	GC_OPS_LOSS(X)                                                         \
	GC_OPS_NN(X)                                                           \
	GC_OPS_QUANT(X)                                                        \
	GC_OPS_QUANT_GRAPHCC(X)                                                \
	GC_OPS_RANDOM(X)                                                       \
	GC_OPS_REDUCE(X)                                                       \
	GC_OPS_RESAMPLE(X)                                                     \
	GC_OPS_RNN(X)                                                          \
	GC_OPS_SELECT(X)                                                       \
	GC_OPS_SHAPE(X)                                                        \
	GC_OPS_SIGNAL(X)                                                       \
	GC_OPS_TEXT(X)                                                         \
	GC_OPS_TRAINING(X)                                                     \
	GC_OPS_CONTROL(X)                                                      \
	GC_OPS_SEQUENCE(X)                                                     \
	GC_OPS_FUSED(X)                                                         \
	GC_OPS_GRAD(X)

typedef enum gc_op {
	GC_OP_NONE,
#define GC_X_(name, ...) GC_OP_##name,
	GC_OP_LIST(GC_X_)
#undef GC_X_
	GC_OP_CUSTOM, /* bound to an op package's kernel */
	GC_OP_COUNT
} gc_op;

#define GC_X_(name, ...)                                                       \
	int gc_prepare_##name(gc_kctx *k, gc_node *n, gc_tensor *const *in,       \
			      gc_tensor *const *out);
GC_OP_LIST(GC_X_)
#undef GC_X_

#define GC_ARITY_MAX 2147483647

typedef struct gc_op_info {
	const char *name;
	int32_t min_in, max_in, min_out, max_out;
	gc_prepare_fn prepare;
} gc_op_info;

/* Indexed by gc_op; GC_OP_NONE and GC_OP_CUSTOM have no prepare. */
extern const gc_op_info gc_op_table[GC_OP_COUNT];

/* The built-in op for (domain, op_type); GC_OP_NONE if there is none.
 * Built-in ops live in the default domain ("" or "ai.onnx") unless
 * gc_op_domain says otherwise. */
gc_op gc_op_lookup(const char *domain, const char *op_type);
bool gc_domain_is_default(const char *domain);
/* The domain op lives in: "" for ONNX's default domain. */
const char *gc_op_domain(gc_op op);

/* The last opset of ONNX's default domain graphcc implements: every op
 * version up to it is listed in op-versions.h, followed or refused. */
#define GC_ONNX_OPSET_MAX 23

/* What graphcc declines beyond op-versions.h, and why (runtime/op-declines.c):
 * what == NULL: an op graphcc has no kernel for, refused in a model of opset
 * >= since with the reason; otherwise `what` names the element type or
 * attribute the op's kernel refuses by name. */
typedef struct gc_op_decline {
	const char *op;
	int32_t since;
	const char *what;
	const char *reason;
} gc_op_decline;
extern const gc_op_decline gc_op_declines[];
extern const int gc_op_n_declines;
/* The version row that refuses op_type (default domain) at opset; NULL when
 * none does. */
const gc_op_decline *gc_op_declined(const char *op_type, int64_t opset);
/* Is version an opset of domain graphcc implements? lo and hi get the range
 * it does (for a domain of op packages: 1 to INT32_MAX). */
bool gc_opset_supported(const char *domain, int64_t version, int64_t *lo, int64_t *hi);

/* Whether node n's op exists at the node's opset and graphcc follows the
 * op's version there (op-versions.h); else an error on k naming both. */
int gc_op_version_check(gc_kctx *k, const gc_node *n);
/* Row i of op-versions.h (for `graphcc ops`); -1 past the last. */
int gc_op_version_row(int i, gc_op *op, int32_t *version, bool *is_new, const char **reason);

#endif
