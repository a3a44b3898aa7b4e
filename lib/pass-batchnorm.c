/*
 * fold-batchnorm: Conv (any group count) whose output only an inference
 * BatchNormalization reads, with constant weights, bias and normalisation
 * parameters, becomes one Conv:
 *
 *     s = scale / sqrt(var + epsilon)
 *     W'[m, ...] = W[m, ...] * s[m]
 *     B'[m] = (B[m] - mean[m]) * s[m] + beta[m]
 *
 * computed in double, stored in the weights' type (float32 or float64). The
 * new weights are new constants: W may be shared with another Conv. Whatever
 * BatchNormalization's prepare would refuse (training mode, spatial=0,
 * training outputs, parameters of another shape or type) is left for it to
 * refuse.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "graph-edit.h"

/* The BatchNormalization's epsilon, or a negative number when the node is not
 * plain inference with per-channel parameters. relu: NULL refuses a fused
 * activation; else *relu says whether fuse-activation moved a Relu in (any
 * other activation is refused). */
static double bn_epsilon(gc_edit *e, int32_t bn, int *relu)
{
	const gc_irnode *n = &e->g->nodes[bn];
	if (n->n_in != 5 || n->n_out < 1 || n->out[0] < 0)
		return -1;
	for (int j = 1; j < n->n_out; j++)
		if (n->out[j] >= 0)
			return -1; /* training outputs: prepare refuses them */
	double eps = 1e-5f;
	for (int i = 0; i < n->n_attr; i++) {
		const gc_attr *a = &n->attrs[i];
		if (!strcmp(a->name, "epsilon")) {
			if (a->type != GC_ATTR_FLOAT || !(a->v.f >= 0))
				return -1;
			eps = a->v.f;
		} else if (!strcmp(a->name, "momentum")) {
			continue;
		} else if (!strcmp(a->name, "spatial") || !strcmp(a->name, "is_test")) {
			if (a->type != GC_ATTR_INT || a->v.i != 1)
				return -1;
		} else if (!strcmp(a->name, "training_mode")) {
			if (a->type != GC_ATTR_INT || a->v.i != 0)
				return -1;
		} else if (relu && !strcmp(a->name, "_gc_activation")) {
			if (a->type != GC_ATTR_STRING || strcmp(a->v.s, "Relu"))
				return -1;
			*relu = 1;
		} else {
			return -1;
		}
	}
	return eps;
}

/* Folds BatchNormalization node bn into the Conv that feeds it, when it can.
 * Returns 1 when folded, 0 when not, negative on error. */
static int fold_one(gc_edit *e, int32_t bn)
{
	gc_graph *g = e->g;
	double eps = bn_epsilon(e, bn, NULL);
	if (eps < 0)
		return 0;
	int32_t x = g->nodes[bn].in[0];
	if (x < 0 || gc_edit_uses(e, x) != 1 || gc_edit_is_pinned(e, x))
		return 0;
	int32_t conv = g->values[x].producer;
	if (conv < 0 || !gc_edit_is_op(e, conv, "Conv"))
		return 0;
	const gc_irnode *cn = &g->nodes[conv];
	if (cn->n_in < 2 || cn->n_in > 3 || cn->n_out != 1 || cn->out[0] != x)
		return 0;
	const gc_tensor *w = gc_edit_const(e, cn->in[1]);
	const gc_tensor *b = cn->n_in > 2 && cn->in[2] >= 0 ? gc_edit_const(e, cn->in[2]) : NULL;
	if (!w || (cn->n_in > 2 && cn->in[2] >= 0 && !b))
		return 0;
	if ((w->dtype != GC_DTYPE_FLOAT && w->dtype != GC_DTYPE_DOUBLE) || w->rank < 3)
		return 0;
	int64_t m = w->dims[0];
	if (b && (b->dtype != w->dtype || b->rank != 1 || b->dims[0] != m))
		return 0;
	const gc_tensor *p[4];
	for (int i = 0; i < 4; i++) {
		p[i] = gc_edit_const(e, g->nodes[bn].in[1 + i]);
		if (!p[i] || p[i]->dtype != w->dtype || p[i]->rank != 1 || p[i]->dims[0] != m)
			return 0;
	}
	const gc_tensor *scale = p[0], *beta = p[1], *mean = p[2], *var = p[3];
	double *s = gc_malloc((size_t)(m ? m : 1) * sizeof *s);
	if (!s)
		return gc_error_set(e->err, GC_ENOMEM, "out of memory folding BatchNormalization");
	for (int64_t c = 0; c < m; c++)
		s[c] = gc_kv_load(scale, c) / sqrt(gc_kv_load(var, c) + eps);

	/* New names from the Conv's: "<conv>/W_bn", "<conv>/B_bn". */
	const char *base = cn->name[0] ? cn->name : g->values[x].name;
	size_t len = strlen(base) + 8;
	char *hint = gc_malloc(len);
	void *wd, *bd;
	int32_t wv = -1, bv = -1;
	if (!hint) {
		gc_free(s);
		return gc_error_set(e->err, GC_ENOMEM, "out of memory folding BatchNormalization");
	}
	snprintf(hint, len, "%s/W_bn", base);
	wv = gc_edit_add_constant(e, hint, w->dtype, w->rank, w->dims, &wd);
	snprintf(hint, len, "%s/B_bn", base);
	int64_t bdims[1] = {m};
	if (wv >= 0)
		bv = gc_edit_add_constant(e, hint, w->dtype, 1, bdims, &bd);
	gc_free(hint);
	if (wv < 0 || bv < 0) {
		gc_free(s);
		return e->err->code;
	}
	/* add_constant may have moved the values array, not the tensors */
	int64_t per = m ? gc_tensor_numel(w) / m : 0;
	gc_tensor wt = {.dtype = w->dtype, .data = wd}, bt = {.dtype = w->dtype, .data = bd};
	for (int64_t c = 0; c < m; c++) {
		for (int64_t k = 0; k < per; k++)
			gc_kv_store(&wt, c * per + k, gc_kv_load(w, c * per + k) * s[c]);
		double b0 = b ? gc_kv_load(b, c) : 0;
		gc_kv_store(&bt, c, (b0 - gc_kv_load(mean, c)) * s[c] + gc_kv_load(beta, c));
	}
	gc_free(s);

	int rc;
	if ((rc = gc_edit_set_input(e, conv, 1, wv)) || (rc = gc_edit_set_input(e, conv, 2, bv)))
		return rc;
	gc_edit_absorb(e, conv, bn);
	return 1;
}

int gc_pass_fold_batchnorm(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"BatchNormalization", NULL};
	return gc_edit_each(ctx, ops, fold_one);
}

/*
 * fuse-batchnorm-input: an inference BatchNormalization (with a Relu that
 * fuse-activation moved in, or none) whose output only a 1x1, stride-1,
 * unpadded, ungrouped Conv reads, as its input X, moves into that Conv:
 *
 *     a = scale / sqrt(var + epsilon),  b = beta - mean * a
 *     Conv(X, W, B[, z]) reads max(0, X a[c] + b[c]) (or X a + b)
 *
 * with a and b as its inputs 4 and 5 and the graphcc-internal attribute
 * _gc_input_affine = 2 (with the Relu) or 1. This is a pre-activation
 * network's block (densenet: BatchNormalization, Relu, 1x1 Conv), where the
 * BatchNormalization cannot fold into a Conv's weights through the Relu:
 * the Conv's kernel applies it as it copies its input (runtime/kernels/
 * conv.c), instead of a pass of its own that writes a tensor as large as
 * its input for the Conv to read back. Runs after fuse-activation.
 */
static bool conv_unit_input(gc_edit *e, int32_t conv, int64_t c, gc_dtype dt)
{
	const gc_irnode *cn = &e->g->nodes[conv];
	if (cn->n_in < 2 || cn->n_in > 4 || cn->n_out != 1 ||
	    gc_edit_attr(e, conv, "_gc_input_affine"))
		return false;
	const gc_tensor *w = gc_edit_const(e, cn->in[1]);
	if (!w || w->dtype != dt || w->rank < 3 || w->dims[1] != c)
		return false;
	for (int32_t d = 2; d < w->rank; d++)
		if (w->dims[d] != 1)
			return false;
	for (int i = 0; i < cn->n_attr; i++) {
		const gc_attr *a = &cn->attrs[i];
		bool ok = true;
		if (!strcmp(a->name, "group"))
			ok = a->type == GC_ATTR_INT && a->v.i == 1;
		else if (!strcmp(a->name, "strides") || !strcmp(a->name, "pads"))
			for (int64_t j = 0; j < a->n; j++)
				ok = ok && a->type == GC_ATTR_INTS &&
				     a->v.ints[j] == (a->name[0] == 's' ? 1 : 0);
		if (!ok)
			return false;
	}
	return true;
}

static int bn_input_one(gc_edit *e, int32_t bn)
{
	gc_graph *g = e->g;
	int relu = 0;
	double eps = bn_epsilon(e, bn, &relu);
	if (eps < 0)
		return 0;
	const gc_irnode *bnn = &g->nodes[bn];
	int32_t x = bnn->in[0], y = bnn->out[0];
	int32_t conv = x >= 0 ? gc_edit_only_reader(e, y) : -1;
	if (conv < 0 || !gc_edit_is_op(e, conv, "Conv") || g->nodes[conv].in[0] != y)
		return 0;
	const gc_tensor *p[4];
	for (int i = 0; i < 4; i++)
		if (!(p[i] = gc_edit_const(e, bnn->in[1 + i])) || p[i]->rank != 1 ||
		    p[i]->dtype != p[0]->dtype || p[i]->dims[0] != p[0]->dims[0])
			return 0;
	int64_t c = p[0]->dims[0];
	gc_dtype dt = p[0]->dtype;
	if ((dt != GC_DTYPE_FLOAT && dt != GC_DTYPE_DOUBLE) || !conv_unit_input(e, conv, c, dt))
		return 0;
	const char *base = bnn->name[0] ? bnn->name : g->values[y].name;
	size_t len = strlen(base) + 8;
	char *hint = gc_malloc(len);
	if (!hint)
		return gc_error_set(e->err, GC_ENOMEM, "out of memory moving BatchNormalization");
	void *ad = NULL, *bd = NULL;
	int64_t dims[1] = {c};
	snprintf(hint, len, "%s/a_in", base);
	int32_t av = gc_edit_add_constant(e, hint, dt, 1, dims, &ad), bv = -1;
	snprintf(hint, len, "%s/b_in", base);
	if (av >= 0)
		bv = gc_edit_add_constant(e, hint, dt, 1, dims, &bd);
	gc_free(hint);
	if (av < 0 || bv < 0)
		return e->err->code;
	gc_tensor at = {.dtype = dt, .data = ad}, bt = {.dtype = dt, .data = bd};
	for (int64_t i = 0; i < c; i++) {
		double s = gc_kv_load(p[0], i) / sqrt(gc_kv_load(p[3], i) + eps);
		gc_kv_store(&at, i, s);
		gc_kv_store(&bt, i, gc_kv_load(p[1], i) - gc_kv_load(p[2], i) * s);
	}
	gc_attr mark = {.name = "_gc_input_affine", .type = GC_ATTR_INT, .v.i = relu ? 2 : 1};
	int rc;
	if ((rc = gc_edit_set_attr(e, conv, &mark)) || (rc = gc_edit_set_input(e, conv, 4, av)) ||
	    (rc = gc_edit_set_input(e, conv, 5, bv)) || (rc = gc_edit_set_input(e, conv, 0, x)))
		return rc;
	gc_edit_remove_node(e, bn);
	return 1;
}

int gc_pass_fuse_batchnorm_input(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"BatchNormalization", NULL};
	return gc_edit_each(ctx, ops, bn_input_one);
}
