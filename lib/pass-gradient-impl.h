/*
 * The Gradient pass's shared parts (lib/pass-gradient.c): the lowering's
 * state, the helpers that add backward nodes, and the rule families kept in
 * their own files (pass-gradient-nn.c: networks' ops; pass-gradient-custom.c:
 * op-package operations through their manifest's gradient:).
 */
#ifndef GC_PASS_GRADIENT_IMPL_H
#define GC_PASS_GRADIENT_IMPL_H

#include <graphcc/graphcc.h>

#include <stdbool.h>

#include "graph-impl.h"

#define GC_GRAD_MAX_IO 16

/* A tensor's type and shape, as the compiled copy of the graph says. */
typedef struct vshape {
	gc_dtype dtype; /* UNDEFINED: not known */
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
} vshape;

typedef struct grad {
	gc_graph *g;
	const gc_compile_options *opt;
	gc_error *err;
	char who[300];	    /* "Gradient 'name'", for messages */
	const char *prefix; /* new tensors are named "<prefix>/<Op>.<n>" */
	int64_t opset;	    /* of the default domain */
	int32_t seq;
	vshape *shape; /* per value; grows with the graph */
	int32_t cap;
} grad;

int gc_grad_nomem(grad *c);
int gc_grad_track(grad *c, int32_t v, const vshape *s);
char *gc_grad_fresh_name(grad *c, const char *what);
int gc_grad_add_multi(grad *c, const char *domain, const char *op, int32_t n_in,
		      const int32_t *ins, int32_t n_attr, const gc_attr *attrs, int32_t n_out,
		      const vshape *s, int32_t *outs);
int32_t gc_grad_add_node_into(grad *c, const char *op, int32_t n_in, const int32_t *ins,
			      int32_t n_attr, const gc_attr *attrs, const vshape *s, int32_t into);
int32_t gc_grad_add_node(grad *c, const char *op, int32_t n_in, const int32_t *ins,
			 int32_t n_attr, const gc_attr *attrs, const vshape *s);
int32_t gc_grad_add_constant(grad *c, const char *what, const gc_tensor *t);
int32_t gc_grad_const_fill(grad *c, gc_dtype dt, int32_t rank, const int64_t *dims, double v);
int32_t gc_grad_const_scalar(grad *c, gc_dtype dt, double v);
int32_t gc_grad_const_ints(grad *c, const char *what, int32_t n, const int64_t *v);
bool gc_grad_same_shape(const vshape *a, const vshape *b);
void gc_grad_broadcast(const vshape *a, const vshape *b, vshape *o);
int32_t gc_grad_unary(grad *c, const char *op, int32_t a);
int32_t gc_grad_binary(grad *c, const char *op, int32_t a, int32_t b);
int32_t gc_grad_reshape(grad *c, int32_t v, const vshape *shape);
int32_t gc_grad_reduce_sum(grad *c, int32_t v, int32_t n_axes, const int64_t *axes);
int32_t gc_grad_sum_to(grad *c, int32_t g, const vshape *shape);
int32_t gc_grad_transpose_last(grad *c, int32_t v);
int32_t gc_grad_matmul(grad *c, int32_t a, int32_t b);
int gc_grad_accumulate(grad *c, int32_t *gv, int32_t v, int32_t d);
int gc_grad_refuse(grad *c, int32_t node, const char *why);

/*
 * A rule family: adds to gv the gradients of node's inputs marked in
 * `reached`, from dz[j], the gradient of its output j (-1: none reaches
 * it). *handled is false when the family has no rule for the node.
 */
int gc_grad_rule_nn(grad *c, int32_t node, const int32_t *dz, const bool *reached, int32_t *gv,
		    bool *handled);
int gc_grad_rule_custom(grad *c, int32_t node, const int32_t *dz, const bool *reached,
			int32_t *gv, bool *handled);
/* Whether a family has a rule for n (checked before any node is added). */
bool gc_grad_has_rule_nn(const gc_irnode *n);
bool gc_grad_has_rule_custom(grad *c, const gc_irnode *n);

#endif
