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
#include "kernels/loss.h"
#include "kernels/nn.h"
#include "kernels/quant.h"
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
	GC_OPS_FUSED(X)

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

/* The last opset of ONNX's default domain graphcc implements (where an
 * op's newer version is not followed yet, gc_op_declines says so). */
#define GC_ONNX_OPSET_MAX 23

/* An ONNX op version, element type or attribute graphcc declines, and why
 * (runtime/op-declines.c). what == NULL: every node of op `op` in a model
 * of opset >= since is refused at compile time; otherwise `what` names the
 * type or attribute the op's kernel refuses by name. */
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

#endif
