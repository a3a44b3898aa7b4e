/*
 * fuse-layernorm: LayerNormalization as exporters write it out before opset
 * 17 (torch.nn.LayerNorm at opset 13 and ConvNeXt's/Swin's norms):
 *
 *     m = ReduceMean(x, axes)        d = Sub(x, m)
 *     v = ReduceMean(Pow(d, 2), axes)
 *     n = Div(d, Sqrt(Add(v, eps)))  [y = Mul(n, gamma)  [z = Add(y, beta)]]
 *
 * becomes one LayerNormalization(x, gamma, beta) node (the kernel of
 * runtime/kernels/norm.c: one pass for the moments, one for the result,
 * instead of nine passes and eight intermediate tensors). Conditions: axes
 * (the attribute, or the constant input from opset 18 on) are the last k
 * axes, written negative or, when x's rank is known, as indices; keepdims 1;
 * the exponent 2, eps, gamma and beta constants (gamma and beta of rank <= k,
 * so that they broadcast inside the normalised axes only); every
 * intermediate read only inside the chain and not a graph output. Without
 * the Mul, gamma is a constant 1. The result is a built-in
 * LayerNormalization whatever the model's opset (graphcc's kernel does not
 * depend on it).
 */
#include <math.h>
#include <string.h>

#include "graph-edit.h"

/* The producer of v if it is a built-in `op` node with one output, v read
 * `uses` times and not a graph output; else -1. */
static int32_t chain(gc_edit *e, int32_t v, const char *op, int32_t uses)
{
	if (v < 0 || gc_edit_uses(e, v) != uses || gc_edit_is_pinned(e, v))
		return -1;
	int32_t p = e->g->values[v].producer;
	if (p < 0 || !gc_edit_is_op(e, p, op) || e->g->nodes[p].n_out != 1)
		return -1;
	return p;
}

/* ReduceMean node r over x's last axes: 0 and the first axis (negative),
 * else -1. */
static int mean_axes(gc_edit *e, int32_t r, int64_t *first, int64_t *count)
{
	const gc_irnode *n = &e->g->nodes[r];
	const int64_t *axes = NULL;
	int64_t na = 0;
	for (int k = 0; k < n->n_attr; k++) {
		const gc_attr *a = &n->attrs[k];
		if (!strcmp(a->name, "axes") && a->type == GC_ATTR_INTS) {
			axes = a->v.ints;
			na = a->n;
		} else if (!strcmp(a->name, "keepdims") && a->type == GC_ATTR_INT) {
			if (a->v.i != 1)
				return -1;
		} else if (strcmp(a->name, "noop_with_empty_axes")) {
			return -1;
		}
	}
	int64_t buf[8];
	if (n->n_in == 2 && n->in[1] >= 0) {
		const gc_tensor *t = gc_edit_const(e, n->in[1]);
		if (axes || !t || t->rank != 1 || t->dtype != GC_DTYPE_INT64 || t->dims[0] > 8)
			return -1;
		na = t->dims[0];
		for (int64_t k = 0; k < na; k++)
			buf[k] = (int64_t)gc_kv_load(t, k);
		axes = buf;
	} else if (n->n_in != 1) {
		return -1;
	}
	if (!axes || na < 1 || na > 8)
		return -1;
	int32_t x = n->in[0];
	const gc_value *xv = &e->g->values[x];
	int32_t rank = xv->has_info ? xv->rank : -1;
	/* each axis, made negative, must be one of -na .. -1, all different */
	bool seen[8] = {false};
	for (int64_t k = 0; k < na; k++) {
		int64_t a = axes[k];
		if (a >= 0) {
			if (rank < 0 || a >= rank)
				return -1;
			a -= rank;
		}
		if (a < -na || a >= 0 || seen[a + na])
			return -1;
		seen[a + na] = true;
	}
	*first = -na;
	*count = na;
	return 0;
}

/* A constant of rank <= k and the given type: gamma or beta; where x's
 * dims are known, each of its dims 1 or x's (it must not broadcast x). */
static bool affine_const(gc_edit *e, int32_t v, int32_t x, gc_dtype dt, int64_t k)
{
	const gc_tensor *t = gc_edit_const(e, v);
	if (!t || t->dtype != dt || t->rank > k)
		return false;
	const gc_value *xv = &e->g->values[x];
	if (!xv->has_info || xv->rank < t->rank)
		return true;
	for (int32_t d = 0; d < t->rank; d++) {
		int64_t xd = xv->dims[xv->rank - t->rank + d];
		if (t->dims[d] != 1 && xd >= 0 && !xv->dim_names[xv->rank - t->rank + d] &&
		    t->dims[d] != xd)
			return false;
	}
	return true;
}

/* Node n (two inputs) with a constant operand fit for gamma/beta: that
 * operand, and in *other the other; else -1. */
static int32_t affine_operand(gc_edit *e, int32_t n, int32_t from, int32_t x, gc_dtype dt,
			      int64_t k)
{
	const gc_irnode *nd = &e->g->nodes[n];
	if (nd->n_in != 2 || nd->n_attr)
		return -1;
	for (int side = 0; side < 2; side++)
		if (nd->in[1 - side] == from && affine_const(e, nd->in[side], x, dt, k))
			return nd->in[side];
	return -1;
}

static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *div = &g->nodes[i];
	if (div->n_in != 2 || div->n_out != 1 || div->n_attr || div->out[0] < 0)
		return 0;
	int32_t dv = div->in[0];
	int32_t sq = chain(e, div->in[1], "Sqrt", 1);
	int32_t sub = chain(e, dv, "Sub", 2);
	if (sq < 0 || sub < 0 || g->nodes[sq].n_in != 1 || g->nodes[sub].n_in != 2)
		return 0;
	int32_t add = chain(e, g->nodes[sq].in[0], "Add", 1);
	if (add < 0 || g->nodes[add].n_in != 2)
		return 0;
	double eps = 0;
	gc_dtype dt = GC_DTYPE_UNDEFINED;
	int32_t vv = -1;
	for (int side = 0; side < 2 && vv < 0; side++)
		if (gc_edit_const_scalar(e, g->nodes[add].in[side], &dt, &eps))
			vv = g->nodes[add].in[1 - side];
	int32_t rm2 = chain(e, vv, "ReduceMean", 1);
	if (rm2 < 0 || !(eps >= 0) || dt != GC_DTYPE_FLOAT)
		return 0;
	int32_t pw = chain(e, g->nodes[rm2].in[0], "Pow", 1);
	double two = 0;
	if (pw < 0 || g->nodes[pw].n_in != 2 || g->nodes[pw].in[0] != dv ||
	    !gc_edit_const_scalar(e, g->nodes[pw].in[1], NULL, &two) || two != 2)
		return 0;
	int32_t x = g->nodes[sub].in[0];
	int32_t rm1 = chain(e, g->nodes[sub].in[1], "ReduceMean", 1);
	if (x < 0 || rm1 < 0 || g->nodes[rm1].in[0] != x)
		return 0;
	int64_t a1, k1, a2, k2;
	if (mean_axes(e, rm1, &a1, &k1) || mean_axes(e, rm2, &a2, &k2) || a1 != a2 || k1 != k2)
		return 0;
	/* the affine part, when it follows */
	int32_t last = i, mul = -1, badd = -1, gamma = -1, beta = -1;
	int32_t r = gc_edit_only_reader(e, div->out[0]);
	if (r >= 0 && gc_edit_is_op(e, r, "Mul") &&
	    (gamma = affine_operand(e, r, div->out[0], x, dt, k1)) >= 0) {
		mul = last = r;
		r = gc_edit_only_reader(e, g->nodes[mul].out[0]);
		if (r >= 0 && gc_edit_is_op(e, r, "Add") &&
		    (beta = affine_operand(e, r, g->nodes[mul].out[0], x, dt, k1)) >= 0)
			badd = last = r;
	}
	if (gamma < 0) {
		float *one;
		gamma = gc_edit_add_constant(e, "layernorm_scale", dt, 1, (int64_t[]){1},
					     (void **)&one);
		if (gamma < 0)
			return e->err->code;
		*one = 1.0f;
	}
	int rc = gc_edit_set_op(e, rm1, "", "LayerNormalization", 1);
	if (!rc)
		rc = gc_edit_set_input(e, rm1, 1, gamma);
	if (!rc && beta >= 0)
		rc = gc_edit_set_input(e, rm1, 2, beta);
	gc_attr ax = {.name = "axis", .type = GC_ATTR_INT};
	ax.v.i = a1;
	gc_attr ep = {.name = "epsilon", .type = GC_ATTR_FLOAT};
	ep.v.f = (float)eps;
	if (!rc)
		rc = gc_edit_set_attr(e, rm1, &ax);
	if (!rc)
		rc = gc_edit_set_attr(e, rm1, &ep);
	if (rc)
		return rc;
	int32_t gone[] = {sub, pw, rm2, add, sq, mul, badd};
	for (size_t k = 0; k < sizeof gone / sizeof gone[0]; k++)
		if (gone[k] >= 0 && gone[k] != last)
			gc_edit_remove_node(e, gone[k]);
	if (last != i)
		gc_edit_remove_node(e, i);
	gc_edit_absorb(e, rm1, last);
	return 1;
}

int gc_pass_fuse_layernorm(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Div", NULL};
	return gc_edit_each(ctx, ops, fuse_one);
}
