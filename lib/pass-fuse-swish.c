/*
 * fuse-swish: Mul(x, Sigmoid(x)) (either order; SiLU/Swish as PyTorch
 * exports it) becomes one com.graphcc::Swish(x) node (runtime/kernels/
 * fused.h): one vectorised pass over x instead of two, and no intermediate
 * tensor. The Sigmoid's output must be read by that Mul alone and not be a
 * graph output.
 */
#include "../runtime/build.h" /* GC_DOMAIN_GRAPHCC */
#include "graph-edit.h"

static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *mul = &g->nodes[i];
	if (mul->n_in != 2 || mul->n_out != 1 || mul->out[0] < 0 || mul->n_attr)
		return 0;
	for (int side = 0; side < 2; side++) {
		int32_t x = mul->in[side], sv = mul->in[1 - side];
		if (x < 0 || sv < 0 || x == sv || gc_edit_uses(e, sv) != 1 ||
		    gc_edit_is_pinned(e, sv))
			continue;
		int32_t s = g->values[sv].producer;
		if (s < 0 || !gc_edit_is_op(e, s, "Sigmoid"))
			continue;
		const gc_irnode *sg = &g->nodes[s];
		if (sg->n_in != 1 || sg->in[0] != x || sg->n_out != 1 || sg->n_attr)
			continue;
		int rc = gc_edit_set_op(e, s, GC_DOMAIN_GRAPHCC, "Swish", 1);
		if (rc)
			return rc;
		gc_edit_absorb(e, s, i);
		return 1;
	}
	return 0;
}

int gc_pass_fuse_swish(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Mul", NULL};
	return gc_edit_each(ctx, ops, fuse_one);
}
