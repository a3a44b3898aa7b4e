/*
 * fuse-squeeze-excite: the squeeze-and-excitation block as torchvision's
 * MobileNetV3 and EfficientNet export it,
 *
 *   Mul(x, Gate(Conv(Act(Conv(GlobalAveragePool(x), W1, B1)), W2, B2)))
 *
 * with Act a Relu, a com.graphcc::Swish (SiLU, after fuse-swish) or nothing,
 * Gate a Sigmoid or HardSigmoid, and both Convs 1x1 with constant float32
 * weights and biases and no strides, pads, dilations or groups, becomes one
 * com.graphcc::SqueezeExcite(x, W1, B1, W2, B2) node (runtime/kernels/
 * squeeze-excite.c). Every intermediate must be read by the next node of
 * the chain alone and be no graph output. x is float32 as W1 is (Conv's
 * inputs share their type).
 * Runs before fuse-activation, which would move the Relu into the Conv.
 */
#include <string.h>

#include "../runtime/build.h" /* GC_DOMAIN_GRAPHCC */
#include "graph-edit.h"

/* The producer of v when v is read once (by the chain) and is no output. */
static int32_t chain_producer(gc_edit *e, int32_t v)
{
	if (v < 0 || gc_edit_uses(e, v) != 1 || gc_edit_is_pinned(e, v))
		return -1;
	return e->g->values[v].producer;
}

/* An int list attribute absent or all `want`. */
static bool ints_all(gc_edit *e, int32_t node, const char *name, int64_t want)
{
	const gc_attr *a = gc_edit_attr(e, node, name);
	if (!a)
		return true;
	if (a->type != GC_ATTR_INTS)
		return false;
	for (int64_t i = 0; i < a->n; i++)
		if (a->v.ints[i] != want)
			return false;
	return true;
}

/* A constant float32 [rows, cols, 1...] (cols 0: [rows]). */
static bool const_shape(gc_edit *e, int32_t v, int64_t rows, int64_t cols)
{
	const gc_tensor *t = v >= 0 ? gc_edit_const(e, v) : NULL;
	if (!t || t->dtype != GC_DTYPE_FLOAT || t->dims[0] != rows)
		return false;
	if (!cols)
		return t->rank == 1;
	if (t->rank < 3 || t->dims[1] != cols)
		return false;
	for (int i = 2; i < t->rank; i++)
		if (t->dims[i] != 1)
			return false;
	return true;
}

/* Node c is a 1x1 Conv with constant weights and bias and no strides,
 * pads, dilations or groups: its weights' [out, in] through *o, *in_ch. */
static bool conv_1x1(gc_edit *e, int32_t c, int64_t *o, int64_t *in_ch)
{
	if (c < 0 || !gc_edit_is_op(e, c, "Conv"))
		return false;
	const gc_irnode *n = &e->g->nodes[c];
	if (n->n_in != 3 || n->n_out != 1 || n->in[1] < 0 || n->in[2] < 0)
		return false;
	for (int32_t a = 0; a < n->n_attr; a++) {
		const char *nm = n->attrs[a].name;
		if (strcmp(nm, "kernel_shape") && strcmp(nm, "strides") && strcmp(nm, "pads") &&
		    strcmp(nm, "dilations") && strcmp(nm, "group") && strcmp(nm, "auto_pad"))
			return false;
	}
	const gc_attr *g = gc_edit_attr(e, c, "group"), *ap = gc_edit_attr(e, c, "auto_pad");
	if ((g && (g->type != GC_ATTR_INT || g->v.i != 1)) ||
	    (ap && (ap->type != GC_ATTR_STRING || strcmp(ap->v.s, "NOTSET"))) ||
	    !ints_all(e, c, "kernel_shape", 1) || !ints_all(e, c, "strides", 1) ||
	    !ints_all(e, c, "pads", 0) || !ints_all(e, c, "dilations", 1))
		return false;
	const gc_tensor *w = gc_edit_const(e, n->in[1]);
	if (!w || w->rank < 3)
		return false;
	*o = w->dims[0];
	*in_ch = w->dims[1];
	return const_shape(e, n->in[1], *o, *in_ch) && const_shape(e, n->in[2], *o, 0);
}

static int set_str(gc_edit *e, int32_t node, const char *name, const char *v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_STRING, .n = (int64_t)strlen(v)};
	a.v.s = v;
	return gc_edit_set_attr(e, node, &a);
}

static int set_float(gc_edit *e, int32_t node, const char *name, float v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOAT, .n = 1};
	a.v.f = v;
	return gc_edit_set_attr(e, node, &a);
}

/* The gate node's alpha and beta (HardSigmoid's defaults when absent):
 * false when an attribute is not a float. */
static bool gate_params(gc_edit *e, int32_t gate, float *alpha, float *beta)
{
	const gc_attr *a = gc_edit_attr(e, gate, "alpha"), *b = gc_edit_attr(e, gate, "beta");
	*alpha = a ? a->v.f : 0.2f;
	*beta = b ? b->v.f : 0.5f;
	return (!a || a->type == GC_ATTR_FLOAT) && (!b || b->type == GC_ATTR_FLOAT) &&
	       e->g->nodes[gate].n_attr == (a != NULL) + (b != NULL);
}

/* Rewrites Mul node i when it ends such a block: 1 when fused. */
static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *mul = &g->nodes[i];
	if (mul->n_in != 2 || mul->n_out != 1 || mul->n_attr)
		return 0;
	for (int side = 0; side < 2; side++) {
		int32_t x = mul->in[side];
		int32_t gate = chain_producer(e, mul->in[1 - side]);
		if (x < 0 || gate < 0)
			continue;
		bool hard = gc_edit_is_op(e, gate, "HardSigmoid");
		float alpha, beta;
		if ((!hard && !gc_edit_is_op(e, gate, "Sigmoid")) || g->nodes[gate].n_in != 1 ||
		    !gate_params(e, gate, &alpha, &beta) || (!hard && g->nodes[gate].n_attr))
			continue;
		int32_t c2 = chain_producer(e, g->nodes[gate].in[0]), c1 = -1, act = -1;
		int64_t c2o, c2i, c1o, c1i;
		if (!conv_1x1(e, c2, &c2o, &c2i))
			continue;
		int32_t a = chain_producer(e, g->nodes[c2].in[0]);
		const char *kind = "none";
		if (a >= 0 && gc_edit_is_op(e, a, "Relu") && !g->nodes[a].n_attr) {
			kind = "relu";
		} else if (a >= 0 && !strcmp(g->nodes[a].domain, GC_DOMAIN_GRAPHCC) &&
			   !strcmp(g->nodes[a].op_type, "Swish")) {
			kind = "swish";
		}
		if (strcmp(kind, "none")) {
			if (g->nodes[a].n_in != 1)
				continue;
			act = a;
			c1 = chain_producer(e, g->nodes[a].in[0]);
		} else {
			c1 = a;
		}
		if (!conv_1x1(e, c1, &c1o, &c1i) || c1o != c2i || c2o != c1i)
			continue;
		int32_t gap = chain_producer(e, g->nodes[c1].in[0]);
		if (gap < 0 || !gc_edit_is_op(e, gap, "GlobalAveragePool") ||
		    g->nodes[gap].n_in != 1 || g->nodes[gap].in[0] != x || g->nodes[gap].n_attr)
			continue;
		int32_t w1 = g->nodes[c1].in[1], b1 = g->nodes[c1].in[2];
		int32_t w2 = g->nodes[c2].in[1], b2 = g->nodes[c2].in[2];
		int rc = gc_edit_set_op(e, i, GC_DOMAIN_GRAPHCC, "SqueezeExcite", 0);
		const int32_t ins[5] = {x, w1, b1, w2, b2};
		for (int j = 0; j < 5 && !rc; j++)
			rc = gc_edit_set_input(e, i, j, ins[j]);
		if (!rc)
			rc = set_str(e, i, "act", kind);
		if (!rc)
			rc = set_str(e, i, "gate", hard ? "hardsigmoid" : "sigmoid");
		if (!rc && hard)
			rc = set_float(e, i, "alpha", alpha);
		if (!rc && hard)
			rc = set_float(e, i, "beta", beta);
		if (rc)
			return rc;
		const int32_t gone[5] = {gate, c2, act, c1, gap};
		for (int j = 0; j < 5; j++)
			if (gone[j] >= 0)
				gc_edit_remove_node(e, gone[j]);
		return 1;
	}
	return 0;
}

int gc_pass_fuse_squeeze_excite(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Mul", NULL};
	return gc_edit_each(ctx, ops, fuse_one);
}
