/*
 * fuse-activation: a Relu, Clip or LeakyRelu whose input is a Conv, Gemm,
 * MatMul, InstanceNormalization, GroupNormalization or (float)
 * BatchNormalization output that nothing else reads moves into that node, as
 * the graphcc-internal attributes runtime/kernels/nn-act.h describes
 * (_gc_activation, _gc_min, _gc_max, _gc_alpha, _gc_beta); the kernel
 * applies it with its bias (and a residual fuse-residual moved into a Conv),
 * in the same pass over the output. The node then writes the activation's
 * output. Anything the activation's own prepare
 * would refuse (other attributes, bounds that are not constant scalars of
 * the producer's type) keeps the node. On float32/float64 outputs the same
 * goes for com.graphcc::Swish (SiLU, after fuse-swish), HardSwish, and
 * Mul(x, HardSigmoid(x)) (HardSwish as opset-13 exports have it; the Conv's
 * output read by those two nodes alone).
 */
#include <math.h>
#include <string.h>

#include "../runtime/build.h" /* GC_DOMAIN_GRAPHCC */
#include "graph-edit.h"

typedef struct act_desc {
	const char *kind;
	bool has_min, has_max, has_alpha, has_beta;
	float min, max, alpha, beta;
} act_desc;

/* A Clip bound (input j of node i): absent, or a constant float scalar that
 * a float attribute holds exactly. */
static bool clip_bound(gc_edit *e, int32_t i, int j, gc_dtype want, bool *has, float *val)
{
	const gc_irnode *n = &e->g->nodes[i];
	*has = false;
	if (j >= n->n_in || n->in[j] < 0)
		return true;
	const gc_tensor *t = gc_edit_const(e, n->in[j]);
	if (!t || !gc_kv_float(t->dtype) || gc_tensor_numel(t) != 1)
		return false;
	if (want != GC_DTYPE_UNDEFINED && t->dtype != want)
		return false;
	double d = gc_kv_load(t, 0);
	if (isnan(d) || (double)(float)d != d)
		return false;
	*has = true;
	*val = (float)d;
	return true;
}

/* What activation node i computes, when it is one the kernels can fuse.
 * `dtype`: the producer's element type when known. */
static bool read_activation(gc_edit *e, int32_t i, gc_dtype dtype, act_desc *d)
{
	const gc_irnode *n = &e->g->nodes[i];
	memset(d, 0, sizeof *d);
	if (n->n_out != 1 || n->out[0] < 0 || n->n_in < 1 || n->in[0] < 0)
		return false;
	if (gc_edit_is_op(e, i, "Relu")) {
		d->kind = "Relu";
		return n->n_in == 1 && n->n_attr == 0;
	}
	bool flt = dtype == GC_DTYPE_FLOAT || dtype == GC_DTYPE_DOUBLE;
	if (!strcmp(n->domain, GC_DOMAIN_GRAPHCC) && !strcmp(n->op_type, "Swish")) {
		d->kind = "Swish";
		return flt && n->n_in == 1 && n->n_attr == 0;
	}
	if (gc_edit_is_op(e, i, "HardSwish")) {
		d->kind = "HardSwish";
		return flt && n->n_in == 1 && n->n_attr == 0;
	}
	if (gc_edit_is_op(e, i, "LeakyRelu")) {
		d->kind = "LeakyRelu";
		d->has_alpha = true;
		d->alpha = 0.01f;
		if (n->n_in != 1 || n->n_attr > 1)
			return false;
		if (n->n_attr == 1) {
			const gc_attr *a = &n->attrs[0];
			if (strcmp(a->name, "alpha") || a->type != GC_ATTR_FLOAT)
				return false;
			d->alpha = a->v.f;
		}
		return true;
	}
	if (gc_edit_is_op(e, i, "Clip")) {
		d->kind = "Clip";
		if (gc_graph_opset(e->g, "") < 11) {
			if (n->n_in != 1)
				return false;
			for (int k = 0; k < n->n_attr; k++) {
				const gc_attr *a = &n->attrs[k];
				if (a->type != GC_ATTR_FLOAT)
					return false;
				if (!strcmp(a->name, "min")) {
					d->has_min = true;
					d->min = a->v.f;
				} else if (!strcmp(a->name, "max")) {
					d->has_max = true;
					d->max = a->v.f;
				} else {
					return false;
				}
			}
			return true;
		}
		if (n->n_in > 3 || n->n_attr)
			return false;
		return clip_bound(e, i, 1, dtype, &d->has_min, &d->min) &&
		       clip_bound(e, i, 2, dtype, &d->has_max, &d->max);
	}
	return false;
}

/* Whether node p can take a fused activation, and its element type when
 * known. */
static bool fusable_producer(gc_edit *e, int32_t p, gc_dtype *dtype)
{
	const gc_irnode *n = &e->g->nodes[p];
	*dtype = GC_DTYPE_UNDEFINED;
	if (n->n_out != 1 || gc_edit_attr(e, p, "_gc_activation"))
		return false;
	if (gc_edit_is_op(e, p, "Conv") || gc_edit_is_op(e, p, "Gemm")) {
		/* a Conv's fourth input: a residual fuse-residual added */
		int max_in = gc_edit_attr(e, p, "_gc_residual") ? 4 : 3;
		if (n->n_in < 2 || n->n_in > max_in)
			return false;
		for (int j = 0; j < n->n_in && *dtype == GC_DTYPE_UNDEFINED; j++)
			*dtype = gc_edit_known_dtype(e, n->in[j]);
		return true;
	}
	if (gc_edit_is_op(e, p, "InstanceNormalization") ||
	    gc_edit_is_op(e, p, "GroupNormalization")) {
		/* float types only; Relu too needs the type known */
		if (n->n_in != 3)
			return false;
		for (int j = 0; j < 3 && *dtype == GC_DTYPE_UNDEFINED; j++)
			*dtype = gc_edit_known_dtype(e, n->in[j]);
		return gc_kv_float(*dtype);
	}
	if (gc_edit_is_op(e, p, "BatchNormalization")) {
		/* what fold-batchnorm left (after no Conv: densenet's pre-activation
		 * blocks); its kernel applies the activation in the same pass, in
		 * float32 or float64 */
		if (n->n_in != 5)
			return false;
		for (int j = 0; j < n->n_in && *dtype == GC_DTYPE_UNDEFINED; j++)
			*dtype = gc_edit_known_dtype(e, n->in[j]);
		return *dtype == GC_DTYPE_FLOAT || *dtype == GC_DTYPE_DOUBLE;
	}
	if (gc_edit_is_op(e, p, "MatMul")) {
		/* the MatMul kernel fuses into float outputs only: the type must
		 * be known */
		if (n->n_in != 2)
			return false;
		*dtype = gc_edit_known_dtype(e, n->in[1]);
		if (*dtype == GC_DTYPE_UNDEFINED)
			*dtype = gc_edit_known_dtype(e, n->in[0]);
		return *dtype == GC_DTYPE_FLOAT || *dtype == GC_DTYPE_DOUBLE;
	}
	return false;
}

static int set_float(gc_edit *e, int32_t node, const char *name, float v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOAT};
	a.v.f = v;
	return gc_edit_set_attr(e, node, &a);
}

/* Fuses activation node i into its producer when it can: 1 when fused. */
static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *n = &g->nodes[i];
	if (n->n_in < 1 || n->in[0] < 0 || n->n_out != 1 || n->out[0] < 0)
		return 0;
	int32_t x = n->in[0];
	if (gc_edit_uses(e, x) != 1 || gc_edit_is_pinned(e, x))
		return 0;
	int32_t p = g->values[x].producer;
	gc_dtype dtype;
	if (p < 0 || g->nodes[p].out[0] != x || !fusable_producer(e, p, &dtype))
		return 0;
	act_desc d;
	if (!read_activation(e, i, dtype, &d))
		return 0;
	if (strcmp(d.kind, "Relu") && dtype != GC_DTYPE_UNDEFINED && !gc_kv_float(dtype))
		return 0;
	gc_attr kind = {.name = "_gc_activation", .type = GC_ATTR_STRING};
	kind.v.s = d.kind;
	kind.n = (int64_t)strlen(d.kind);
	int rc = gc_edit_set_attr(e, p, &kind);
	if (!rc && d.has_min)
		rc = set_float(e, p, "_gc_min", d.min);
	if (!rc && d.has_max)
		rc = set_float(e, p, "_gc_max", d.max);
	if (!rc && d.has_alpha)
		rc = set_float(e, p, "_gc_alpha", d.alpha);
	if (!rc && d.has_beta)
		rc = set_float(e, p, "_gc_beta", d.beta);
	if (rc)
		return rc;
	gc_edit_absorb(e, p, i);
	return 1;
}

/* HardSigmoid node h's alpha and beta (its defaults when absent); false
 * for other attributes. */
static bool hsig_params(const gc_irnode *h, float *alpha, float *beta)
{
	*alpha = 0.2f;
	*beta = 0.5f;
	for (int k = 0; k < h->n_attr; k++) {
		const gc_attr *a = &h->attrs[k];
		if (a->type != GC_ATTR_FLOAT)
			return false;
		if (!strcmp(a->name, "alpha"))
			*alpha = a->v.f;
		else if (!strcmp(a->name, "beta"))
			*beta = a->v.f;
		else
			return false;
	}
	return true;
}

/* Mul node i = x * HardSigmoid(x), x a float Conv/Gemm/MatMul output read
 * by those two alone: the producer takes HardSwish; 1 when fused. */
static int fuse_hswish_mul(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *m = &g->nodes[i];
	if (m->n_in != 2 || m->n_out != 1 || m->out[0] < 0 || m->n_attr)
		return 0;
	for (int side = 0; side < 2; side++) {
		int32_t x = m->in[side], hv = m->in[1 - side];
		if (x < 0 || hv < 0 || x == hv || gc_edit_uses(e, x) != 2 ||
		    gc_edit_uses(e, hv) != 1 || gc_edit_is_pinned(e, x) || gc_edit_is_pinned(e, hv))
			continue;
		int32_t h = g->values[hv].producer, p = g->values[x].producer;
		if (h < 0 || p < 0 || !gc_edit_is_op(e, h, "HardSigmoid"))
			continue;
		const gc_irnode *hn = &g->nodes[h];
		act_desc d = {.kind = "HardSwish", .has_alpha = true, .has_beta = true};
		gc_dtype dtype;
		if (hn->n_in != 1 || hn->in[0] != x || hn->n_out != 1 ||
		    !hsig_params(hn, &d.alpha, &d.beta) || g->nodes[p].out[0] != x ||
		    !fusable_producer(e, p, &dtype) ||
		    (dtype != GC_DTYPE_FLOAT && dtype != GC_DTYPE_DOUBLE))
			continue;
		gc_attr kind = {.name = "_gc_activation", .type = GC_ATTR_STRING};
		kind.v.s = d.kind;
		kind.n = (int64_t)strlen(d.kind);
		int rc = gc_edit_set_attr(e, p, &kind);
		if (!rc)
			rc = set_float(e, p, "_gc_alpha", d.alpha);
		if (!rc)
			rc = set_float(e, p, "_gc_beta", d.beta);
		if (rc)
			return rc;
		gc_edit_remove_node(e, h);
		gc_edit_absorb(e, p, i);
		return 1;
	}
	return 0;
}

int gc_pass_fuse_activation(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Relu",      "Clip", "LeakyRelu",
					  "HardSwish", GC_DOMAIN_GRAPHCC "::Swish", NULL};
	static const char *const muls[] = {"Mul", NULL};
	int rc = gc_edit_each(ctx, ops, fuse_one);
	return rc ? rc : gc_edit_each(ctx, muls, fuse_hswish_mul);
}
