/*
 * fuse-matmul-bias: MatMul by constant 2-D weights [K, N] followed by an Add
 * of a constant bias [N] (a torch Linear on a 3-D input exports so) becomes
 * one MatMul carrying the bias as the graphcc-internal tensor attribute
 * _gc_bias, added by the kernel in one pass over the output (and, after
 * fuse-activation, with the activation). Only a rank-1 bias: it broadcasts
 * over the last axis without changing the output's shape, whatever the
 * input's rank.
 */
#include <string.h>

#include "graph-edit.h"

/* Fuses Add node i when one of its inputs is such a MatMul: 1 when fused. */
static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *add = &g->nodes[i];
	if (add->n_in != 2 || add->n_out != 1 || add->out[0] < 0 || add->n_attr)
		return 0;
	for (int side = 0; side < 2; side++) {
		int32_t x = add->in[side], c = add->in[1 - side];
		if (x < 0 || c < 0 || x == c || gc_edit_uses(e, x) != 1 || gc_edit_is_pinned(e, x))
			continue;
		int32_t p = g->values[x].producer;
		if (p < 0 || !gc_edit_is_op(e, p, "MatMul"))
			continue;
		const gc_irnode *mm = &g->nodes[p];
		if (mm->n_in != 2 || mm->n_out != 1 || mm->out[0] != x || mm->n_attr)
			continue;
		const gc_tensor *w = gc_edit_const(e, mm->in[1]);
		const gc_tensor *b = gc_edit_const(e, c);
		if (!w || !b || w->rank != 2 ||
		    (w->dtype != GC_DTYPE_FLOAT && w->dtype != GC_DTYPE_DOUBLE))
			continue;
		if (b->dtype != w->dtype || b->rank != 1 || b->dims[0] != w->dims[1])
			continue;
		gc_attr a = {.name = "_gc_bias", .type = GC_ATTR_TENSOR};
		a.v.t = b;
		int rc = gc_edit_set_attr(e, p, &a);
		if (rc)
			return rc;
		gc_edit_absorb(e, p, i);
		return 1;
	}
	return 0;
}

int gc_pass_fuse_matmul_bias(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Add", NULL};
	/* Add broadcasts numpy-style from opset 7 on */
	if (gc_graph_opset(ctx->g, "") < 7)
		return 0;
	return gc_edit_each(ctx, ops, fuse_one);
}
