/*
 * fuse-gelu: the exact (erf) form of GELU as PyTorch exports it,
 *
 *     Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)
 *
 * (any operand order; Mul(x, 1/sqrt 2) for the Div; the 0.5 applied to x
 * first, Mul(Mul(x, 0.5), Add(...)), too) becomes one com.graphcc::Gelu(x)
 * node (runtime/kernels/fused.h): one vectorised pass instead of five, no
 * intermediate tensors. Every intermediate must be read by the next node of
 * the chain alone and not be a graph output; the constants must be scalars
 * (within 1e-6 of sqrt 2 or 1/sqrt 2; 1 and 0.5 exactly).
 */
#include <math.h>

#include "../runtime/build.h" /* GC_DOMAIN_GRAPHCC */
#include "graph-edit.h"

/* The producer of v when it is a built-in `op` node with two inputs and one
 * output, v is read once and is not a graph output; else -1. */
static int32_t inner(gc_edit *e, int32_t v, const char *op)
{
	if (v < 0 || gc_edit_uses(e, v) != 1 || gc_edit_is_pinned(e, v))
		return -1;
	int32_t p = e->g->values[v].producer;
	if (p < 0 || !gc_edit_is_op(e, p, op))
		return -1;
	const gc_irnode *n = &e->g->nodes[p];
	return n->n_in == 2 && n->n_out == 1 && !n->n_attr && n->in[0] >= 0 && n->in[1] >= 0
		   ? p
		   : -1;
}

/* Node p (two inputs) has a constant scalar operand within tol of want: its
 * other operand, or -1. */
static int32_t other_than_const(gc_edit *e, int32_t p, double want, double tol)
{
	const gc_irnode *n = &e->g->nodes[p];
	double c;
	for (int side = 0; side < 2; side++)
		if (gc_edit_const_scalar(e, n->in[side], NULL, &c) && fabs(c - want) <= tol)
			return n->in[1 - side];
	return -1;
}

/* add = Add(Erf(x / sqrt 2), 1): x and the chain's nodes (div, erf), or -1. */
static int32_t erf_term(gc_edit *e, int32_t add, int32_t *div, int32_t *erf)
{
	int32_t ev = other_than_const(e, add, 1.0, 0);
	if (ev < 0 || gc_edit_uses(e, ev) != 1 || gc_edit_is_pinned(e, ev))
		return -1;
	*erf = e->g->values[ev].producer;
	if (*erf < 0 || !gc_edit_is_op(e, *erf, "Erf"))
		return -1;
	const gc_irnode *en = &e->g->nodes[*erf];
	if (en->n_in != 1 || en->n_out != 1 || en->n_attr)
		return -1;
	int32_t x = -1;
	if ((*div = inner(e, en->in[0], "Div")) >= 0) {
		const gc_irnode *dn = &e->g->nodes[*div];
		double c;
		if (gc_edit_const_scalar(e, dn->in[1], NULL, &c) && fabs(c - M_SQRT2) <= 1e-6)
			x = dn->in[0];
	} else if ((*div = inner(e, en->in[0], "Mul")) >= 0) {
		x = other_than_const(e, *div, M_SQRT1_2, 1e-6);
	}
	return x;
}

static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *out = &g->nodes[i];
	if (out->n_in != 2 || out->n_out != 1 || out->out[0] < 0 || out->n_attr)
		return 0;
	int32_t x = -1, mid = -1, add = -1, div = -1, erf = -1;
	/* Mul(Mul(x, add), 0.5) */
	int32_t mv = other_than_const(e, i, 0.5, 0);
	if ((mid = inner(e, mv, "Mul")) >= 0) {
		const gc_irnode *m = &g->nodes[mid];
		for (int side = 0; side < 2 && x < 0; side++) {
			add = inner(e, m->in[1 - side], "Add");
			if (add >= 0 && erf_term(e, add, &div, &erf) == m->in[side])
				x = m->in[side];
		}
	}
	/* Mul(Mul(x, 0.5), add) */
	for (int side = 0; side < 2 && x < 0; side++) {
		mid = inner(e, out->in[side], "Mul");
		add = inner(e, out->in[1 - side], "Add");
		if (mid < 0 || add < 0)
			continue;
		int32_t hx = other_than_const(e, mid, 0.5, 0);
		if (hx >= 0 && erf_term(e, add, &div, &erf) == hx)
			x = hx;
	}
	if (x < 0)
		return 0;
	int rc = gc_edit_set_op(e, erf, GC_DOMAIN_GRAPHCC, "Gelu", 1);
	if (!rc)
		rc = gc_edit_set_input(e, erf, 0, x);
	if (rc)
		return rc;
	gc_edit_remove_node(e, div);
	gc_edit_remove_node(e, add);
	gc_edit_remove_node(e, mid);
	gc_edit_absorb(e, erf, i);
	return 1;
}

int gc_pass_fuse_gelu(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Mul", NULL};
	return gc_edit_each(ctx, ops, fuse_one);
}
