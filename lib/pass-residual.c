/*
 * fuse-residual: Add(Conv(x, W, B), z) where nothing else reads the Conv's
 * output (and it is no graph output) becomes one Conv(x, W, B, z) carrying
 * the graphcc-internal attribute _gc_residual = 1: the kernels add z in the
 * same pass over the output as the bias (runtime/kernels/conv.c), and a
 * Relu (or another activation fuse-activation takes) after the Add then
 * moves into the Conv as well, applied after the sum. This is a ResNet
 * block's tail: Conv, BatchNormalization (folded before this pass), Add,
 * Relu.
 *
 * The passes do not know the shapes of values in between: z must have the
 * Conv output's shape for the fused epilogue, and is refused here when what
 * is known says it broadcasts instead (a declared or constant z of another
 * rank, another channel count, or a spatial dim of 1, unless the Conv's
 * output is declared with z's very shape). A z whose shape the pass could
 * not see and that turns out to broadcast is still computed right: the
 * Conv's prepare broadcasts it as Add would, on the reference path.
 *
 * Runs after fold-batchnorm (which needs the Conv's output read by the
 * BatchNormalization alone) and before fuse-activation (which must find the
 * Relu after the Add, not the Conv's own).
 */
#include <string.h>

#include "graph-edit.h"

/* v's shape when the graph says it (a constant, or a declared value with
 * every dim known): its rank, or -1. */
static int32_t known_shape(gc_edit *e, int32_t v, int64_t *dims)
{
	const gc_tensor *t = gc_edit_const(e, v);
	if (t) {
		memcpy(dims, t->dims, (size_t)t->rank * sizeof *dims);
		return t->rank;
	}
	const gc_value *val = &e->g->values[v];
	if (val->rank < 0)
		return -1;
	for (int32_t d = 0; d < val->rank; d++)
		if (val->dims[d] <= 0 || val->dim_names[d])
			return -1;
	memcpy(dims, val->dims, (size_t)val->rank * sizeof *dims);
	return val->rank;
}

/* Whether what is known of z's shape allows it to be the residual of Conv
 * node p (output x) without broadcasting. */
static bool same_shape(gc_edit *e, int32_t p, int32_t x, int32_t z)
{
	int64_t zd[GC_MAX_RANK], xd[GC_MAX_RANK], wd[GC_MAX_RANK];
	int32_t zr = known_shape(e, z, zd), xr = known_shape(e, x, xd);
	if (zr >= 0 && xr >= 0)
		return zr == xr && !memcmp(zd, xd, (size_t)zr * sizeof *zd);
	if (zr < 0)
		return true; /* prepare broadcasts it should it differ */
	int32_t wr = known_shape(e, e->g->nodes[p].in[1], wd);
	if (wr >= 0 && (zr != wr || zd[1] != wd[0]))
		return false;
	for (int32_t d = 2; d < zr; d++)
		if (zd[d] == 1)
			return false;
	return zr >= 3;
}

/* Fuses Add node i into a Conv that one of its inputs comes from: 1 when
 * fused. */
static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *add = &g->nodes[i];
	if (add->n_in != 2 || add->n_out != 1 || add->out[0] < 0 || add->n_attr)
		return 0;
	for (int side = 0; side < 2; side++) {
		int32_t x = add->in[side], z = add->in[1 - side];
		if (x < 0 || z < 0 || x == z || gc_edit_uses(e, x) != 1 || gc_edit_is_pinned(e, x))
			continue;
		int32_t p = g->values[x].producer;
		if (p < 0 || !gc_edit_is_op(e, p, "Conv"))
			continue;
		const gc_irnode *conv = &g->nodes[p];
		if (conv->n_in < 2 || conv->n_in > 3 || conv->n_out != 1 || conv->out[0] != x ||
		    gc_edit_attr(e, p, "_gc_activation") || gc_edit_attr(e, p, "_gc_residual") ||
		    !same_shape(e, p, x, z))
			continue;
		gc_dtype wt = gc_edit_known_dtype(e, conv->in[1]), zt = gc_edit_known_dtype(e, z);
		if (wt != GC_DTYPE_UNDEFINED && zt != GC_DTYPE_UNDEFINED && wt != zt)
			continue;
		gc_attr mark = {.name = "_gc_residual", .type = GC_ATTR_INT, .v.i = 1};
		int rc = gc_edit_set_attr(e, p, &mark);
		if (!rc)
			rc = gc_edit_set_input(e, p, 3, z);
		if (rc)
			return rc;
		gc_edit_absorb(e, p, i);
		return 1;
	}
	return 0;
}

int gc_pass_fuse_residual(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Add", NULL};
	/* Add broadcasts numpy-style from opset 7 on (before, by attribute) */
	if (gc_graph_opset(ctx->g, "") < 7)
		return 0;
	return gc_edit_each(ctx, ops, fuse_one);
}
