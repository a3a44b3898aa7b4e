/*
 * fold-pad: a Pad of constant zeros on the spatial axes only, read by
 * nothing but an AveragePool or a Conv, becomes that node's own padding
 * (PyTorch exports avg_pool2d(x, 3, 1, 1), inception_v3's, as Pad +
 * AveragePool at opset 13; the Pad copied each tensor once more). A Conv
 * multiplies zeros either way. An AveragePool without padding averaged the
 * padded zeros as taps, which is count_include_pad = 1 on the folded pads; a
 * pool that already pads without counting them keeps its Pad. MaxPool
 * would need a pad of -inf and is left alone.
 */
#include <string.h>

#include "graph-edit.h"

#define FOLD_MAX_RANK 8 /* N, C and up to 6 spatial axes */

static bool attr_is(const gc_attr *a, const char *s)
{
	return a && a->type == GC_ATTR_STRING && a->n == (int64_t)strlen(s) &&
	       !memcmp(a->v.s, s, (size_t)a->n);
}

/* Pad node i's pads (begins, then ends) when it pads with constant zeros,
 * by non-negative amounts and on axes 2.. only; returns the rank, or 0. */
static int32_t zero_spatial_pads(gc_edit *e, int32_t i, int64_t *pads)
{
	const gc_irnode *n = &e->g->nodes[i];
	const gc_attr *mode = gc_edit_attr(e, i, "mode");
	if (n->n_in < 1 || n->n_out != 1 || (mode && !attr_is(mode, "constant")))
		return 0;
	int64_t np = 0;
	if (gc_graph_opset(e->g, "") < 11) {
		const gc_attr *p = gc_edit_attr(e, i, "pads"), *v = gc_edit_attr(e, i, "value");
		if (n->n_in != 1 || !p || p->type != GC_ATTR_INTS || p->n > 2 * FOLD_MAX_RANK ||
		    (v && (v->type != GC_ATTR_FLOAT || v->v.f != 0)))
			return 0;
		np = p->n;
		memcpy(pads, p->v.ints, (size_t)np * sizeof *pads);
	} else {
		/* opset 18's axes input: not folded */
		if (n->n_in < 2 || n->in[1] < 0 || (n->n_in > 3 && n->in[3] >= 0))
			return 0;
		const gc_tensor *t = gc_edit_const(e, n->in[1]);
		if (!t || t->dtype != GC_DTYPE_INT64 || t->rank != 1 ||
		    gc_tensor_numel(t) > 2 * FOLD_MAX_RANK)
			return 0;
		np = gc_tensor_numel(t);
		memcpy(pads, t->data, (size_t)np * sizeof *pads);
		double v;
		if (n->n_in > 2 && n->in[2] >= 0 &&
		    (!gc_edit_const_scalar(e, n->in[2], NULL, &v) || v != 0))
			return 0;
	}
	int32_t rank = (int32_t)(np / 2);
	if (np % 2 || rank < 3 || pads[0] || pads[1] || pads[rank] || pads[rank + 1])
		return 0;
	for (int32_t j = 0; j < np; j++)
		if (pads[j] < 0)
			return 0;
	return rank;
}

/* Whether reader r takes the pads: an AveragePool (that counts its own
 * padding, or has none) or a Conv, with explicit pads. */
static bool takes_pads(gc_edit *e, int32_t r, int32_t nsp)
{
	bool avg = gc_edit_is_op(e, r, "AveragePool");
	if (!avg && !gc_edit_is_op(e, r, "Conv"))
		return false;
	const gc_attr *ap = gc_edit_attr(e, r, "auto_pad");
	if (ap && !attr_is(ap, "NOTSET"))
		return false;
	const gc_attr *p = gc_edit_attr(e, r, "pads");
	if (p && (p->type != GC_ATTR_INTS || p->n != 2 * nsp))
		return false;
	if (!avg)
		return true;
	const gc_attr *cip = gc_edit_attr(e, r, "count_include_pad");
	if (cip && cip->type != GC_ATTR_INT)
		return false;
	if (cip && cip->v.i == 1)
		return true;
	for (int64_t j = 0; p && j < p->n; j++)
		if (p->v.ints[j])
			return false;
	return true;
}

static int fold_one(gc_edit *e, int32_t i)
{
	int64_t pads[2 * FOLD_MAX_RANK];
	int32_t rank = zero_spatial_pads(e, i, pads);
	int32_t y = e->g->nodes[i].out[0];
	int32_t r = rank && y >= 0 ? gc_edit_only_reader(e, y) : -1;
	int32_t nsp = rank - 2;
	if (r < 0 || e->g->nodes[r].n_in < 1 || e->g->nodes[r].in[0] != y || !takes_pads(e, r, nsp))
		return 0;
	const gc_attr *old = gc_edit_attr(e, r, "pads");
	int64_t sum[2 * FOLD_MAX_RANK];
	/* pads from a file may be anything: a sum that overflows stays a Pad
	 * (whose own checks name it) */
	for (int32_t d = 0; d < nsp; d++)
		if (__builtin_add_overflow(pads[2 + d], old ? old->v.ints[d] : 0, &sum[d]) ||
		    __builtin_add_overflow(pads[rank + 2 + d], old ? old->v.ints[nsp + d] : 0,
					   &sum[nsp + d]))
			return 0;
	gc_attr a = {.name = "pads", .type = GC_ATTR_INTS, .n = 2 * nsp};
	a.v.ints = sum;
	int rc = gc_edit_set_attr(e, r, &a);
	if (!rc && gc_edit_is_op(e, r, "AveragePool")) {
		gc_attr c = {.name = "count_include_pad", .type = GC_ATTR_INT, .n = 1};
		c.v.i = 1;
		rc = gc_edit_set_attr(e, r, &c);
	}
	if (!rc)
		rc = gc_edit_set_input(e, r, 0, e->g->nodes[i].in[0]);
	if (rc)
		return rc;
	gc_edit_remove_node(e, i);
	return 1;
}

int gc_pass_fold_pad(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Pad", NULL};
	return gc_edit_each(ctx, ops, fold_one);
}
