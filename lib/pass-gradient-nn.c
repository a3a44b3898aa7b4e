/*
 * The Gradient pass's rules for the ops networks are made of: Conv,
 * ConvTranspose, Gemm, MaxPool, AveragePool, GlobalAveragePool, Flatten,
 * Squeeze, Unsqueeze, Dropout (inference), Expand, Softmax, LogSoftmax,
 * SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, LayerNormalization,
 * BatchNormalization (training and inference mode),
 * Concat, Split, Slice (any steps), Gather, Where, Pow, Erf, Clip,
 * LeakyRelu. Where the backward is no short chain of ONNX ops, it is one of
 * graphcc's own backward kernels (runtime/kernels/grad.h, com.graphcc):
 * ConvGradInput, ConvGradWeight, MaxPoolGrad, AveragePoolGrad,
 * NegativeLogLikelihoodLossGrad. Checked against torch.autograd by
 * tests/e2e/cases_gradient_nn.py.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "pass-gradient-impl.h"

static const char *const nn_ops[] = {
    "Conv",	"ConvTranspose", "Gemm",	  "MaxPool",	"AveragePool",
    "GlobalAveragePool", "Flatten", "Squeeze", "Unsqueeze", "Dropout",
    "Expand",	"Softmax",	 "LogSoftmax", "SoftmaxCrossEntropyLoss",
    "NegativeLogLikelihoodLoss", "LayerNormalization", "BatchNormalization", "Concat", "Split",
    "Slice",	"Gather",	 "Where",	  "Pow",	"Erf",
    "Clip",	"LeakyRelu",	 NULL};

bool gc_grad_has_rule_nn(const gc_irnode *n)
{
	if (n->domain[0] && strcmp(n->domain, "ai.onnx"))
		return false;
	for (int i = 0; nn_ops[i]; i++)
		if (!strcmp(n->op_type, nn_ops[i]))
			return true;
	return false;
}

static const gc_attr *attr(const gc_irnode *n, const char *name)
{
	for (int i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

static int64_t attr_i(const gc_irnode *n, const char *name, int64_t def)
{
	const gc_attr *a = attr(n, name);
	return a && a->type == GC_ATTR_INT ? a->v.i : def;
}

static double attr_f(const gc_irnode *n, const char *name, double def)
{
	const gc_attr *a = attr(n, name);
	return a && a->type == GC_ATTR_FLOAT ? a->v.f : def;
}

/* An int constant's values (int32 or int64, at most max); -1 when v is not
 * such a constant. */
static int64_t const_ints_of(grad *c, int32_t v, int64_t *out, int64_t max)
{
	const gc_tensor *t = v >= 0 ? c->g->values[v].constant : NULL;
	if (!t || (t->dtype != GC_DTYPE_INT64 && t->dtype != GC_DTYPE_INT32) || t->rank > 1)
		return -1;
	int64_t n = gc_tensor_numel(t);
	if (n > max)
		return -1;
	for (int64_t i = 0; i < n; i++)
		out[i] = t->dtype == GC_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
						    : ((const int32_t *)t->data)[i];
	return n;
}

static int32_t com_node(grad *c, const char *op, int32_t n_in, const int32_t *ins,
			int32_t n_attr, const gc_attr *attrs, const vshape *s)
{
	int32_t v;
	return gc_grad_add_multi(c, GC_DOMAIN_GRAPHCC, op, n_in, ins, n_attr, attrs, 1, s, &v) ? -1
												   : v;
}

static int32_t bool_node(grad *c, const char *op, int32_t a, int32_t b)
{
	int32_t r = b >= 0 ? gc_grad_binary(c, op, a, b) : gc_grad_unary(c, op, a);
	if (r >= 0)
		c->shape[r].dtype = GC_DTYPE_BOOL;
	return r;
}

/* Where(cond, t, f) with the shape of t (cond and f broadcast into it). */
static int32_t where(grad *c, int32_t cond, int32_t t, int32_t f)
{
	if (cond < 0 || t < 0 || f < 0)
		return -1;
	int32_t ins[3] = {cond, t, f};
	vshape s = c->shape[t];
	return gc_grad_add_node(c, "Where", 3, ins, 0, NULL, &s);
}

static int32_t scale(grad *c, int32_t v, double k)
{
	if (v < 0 || k == 1)
		return v;
	int32_t kc = gc_grad_const_scalar(c, c->shape[v].dtype, k);
	return kc < 0 ? -1 : gc_grad_binary(c, "Mul", v, kc);
}

static int32_t mul(grad *c, int32_t a, int32_t b)
{
	return a < 0 || b < 0 ? -1 : gc_grad_binary(c, "Mul", a, b);
}

static int32_t sub(grad *c, int32_t a, int32_t b)
{
	return a < 0 || b < 0 ? -1 : gc_grad_binary(c, "Sub", a, b);
}

/* ReduceSum over one axis, keepdims. */
static int32_t sum_axis(grad *c, int32_t v, int64_t axis)
{
	return v < 0 ? -1 : gc_grad_reduce_sum(c, v, 1, &axis);
}

/* Softmax's (log: LogSoftmax's) input gradient along axis, from its
 * output y: y (dz - sum(dz y)); dz - exp(y) sum(dz). */
static int32_t softmax_back(grad *c, int32_t dz, int32_t y, int64_t axis, bool log)
{
	if (log) {
		int32_t e = gc_grad_unary(c, "Exp", y);
		return sub(c, dz, mul(c, e, sum_axis(c, dz, axis)));
	}
	int32_t p = mul(c, dz, y);
	return mul(c, y, sub(c, dz, sum_axis(c, p, axis)));
}

/* Softmax and LogSoftmax: from opset 13 along one axis; before, over the
 * input coerced to 2-D at axis (default 1). */
static int32_t softmax_rule(grad *c, const gc_irnode *nd, int32_t dz, bool log)
{
	int32_t x = nd->in[0], y = nd->out[0];
	vshape xs = c->shape[x];
	int64_t axis = attr_i(nd, "axis", c->opset >= 13 ? -1 : 1);
	if (axis < 0)
		axis += xs.rank;
	if (c->opset >= 13)
		return softmax_back(c, dz, y, axis, log);
	vshape two = {.dtype = xs.dtype, .rank = 2, .dims = {1, 1}};
	for (int i = 0; i < xs.rank; i++)
		two.dims[i < axis ? 0 : 1] *= xs.dims[i];
	int32_t d2 = gc_grad_reshape(c, dz, &two), y2 = d2 < 0 ? -1 : gc_grad_reshape(c, y, &two);
	int32_t r = y2 < 0 ? -1 : softmax_back(c, d2, y2, 1, log);
	return r < 0 ? -1 : gc_grad_reshape(c, r, &xs);
}

/* Slice of v along axis, [lo, hi) by step (steps other than 1 from opset 10,
 * which has the steps input). */
static int32_t slice_step(grad *c, int32_t v, int64_t axis, int64_t lo, int64_t hi, int64_t step,
			  int64_t len)
{
	vshape s = c->shape[v];
	s.dims[axis] = len;
	if (c->opset >= 10) {
		int32_t st = gc_grad_const_ints(c, "starts", 1, &lo);
		int32_t en = st < 0 ? -1 : gc_grad_const_ints(c, "ends", 1, &hi);
		int32_t ax = en < 0 ? -1 : gc_grad_const_ints(c, "axes", 1, &axis);
		int32_t sp = ax < 0 || step == 1 ? ax : gc_grad_const_ints(c, "steps", 1, &step);
		int32_t ins[5] = {v, st, en, ax, sp};
		return sp < 0 ? -1 : gc_grad_add_node(c, "Slice", step == 1 ? 4 : 5, ins, 0, NULL, &s);
	}
	gc_attr at[3] = {{.name = "starts", .type = GC_ATTR_INTS, .n = 1, .v.ints = &lo},
			 {.name = "ends", .type = GC_ATTR_INTS, .n = 1, .v.ints = &hi},
			 {.name = "axes", .type = GC_ATTR_INTS, .n = 1, .v.ints = &axis}};
	return gc_grad_add_node(c, "Slice", 1, &v, 3, at, &s);
}

static int32_t slice_axis(grad *c, int32_t v, int64_t axis, int64_t lo, int64_t hi)
{
	return slice_step(c, v, axis, lo, hi, 1, hi - lo);
}

/* v padded with zeros (pads: ONNX's begins then ends) to shape s. */
static int32_t pad_to(grad *c, int32_t v, const int64_t *pads, const vshape *s)
{
	if (v < 0)
		return -1;
	if (c->opset >= 11) {
		int32_t p = gc_grad_const_ints(c, "pads", 2 * s->rank, pads);
		int32_t ins[2] = {v, p};
		return p < 0 ? -1 : gc_grad_add_node(c, "Pad", 2, ins, 0, NULL, s);
	}
	gc_attr at = {.name = "pads", .type = GC_ATTR_INTS, .n = 2 * s->rank, .v.ints = (int64_t *)pads};
	return gc_grad_add_node(c, "Pad", 1, &v, 1, &at, s);
}

/* The attributes of a convolution that its backward kernels take. */
static int32_t conv_attrs(const gc_irnode *nd, gc_attr *out)
{
	static const char *const keep[] = {"auto_pad", "dilations", "group", "kernel_shape",
					   "pads", "strides"};
	int32_t n = 0;
	for (int i = 0; i < nd->n_attr; i++)
		for (size_t j = 0; j < sizeof keep / sizeof keep[0]; j++)
			if (!strcmp(nd->attrs[i].name, keep[j]))
				out[n++] = nd->attrs[i];
	return n;
}

/* A bias's gradient: dz summed over every axis but 1, as a vector. */
static int32_t bias_back(grad *c, int32_t dz, int32_t b)
{
	vshape s = c->shape[dz];
	int64_t axes[GC_MAX_RANK];
	int32_t n = 0;
	for (int i = 0; i < s.rank; i++)
		if (i != 1)
			axes[n++] = i;
	int32_t r = gc_grad_reduce_sum(c, dz, n, axes);
	vshape bs = c->shape[b];
	return r < 0 ? -1 : gc_grad_reshape(c, r, &bs);
}

static int64_t ints_at(const gc_irnode *nd, const char *name, int64_t i, int64_t n, int64_t def)
{
	const gc_attr *a = attr(nd, name);
	if (!a || a->type != GC_ATTR_INTS || a->n < n)
		return def;
	return a->v.ints[a->n - n + i];
}

/*
 * ConvTranspose is the adjoint of a Conv over its output. Per spatial axis,
 * as the forward kernel places it (runtime/kernels/conv.c): the output
 * starts `head` into the full output s (in - 1) + output_padding + (k - 1)
 * dil + 1, of which the windows reach the first R = s (in - 1) + (k - 1) dil
 * + 1. *dz is cropped to that reach, and pads (out: begins, ends) are the
 * Conv's explicit pads over it. Returns 1 outside the rule.
 */
static int convt_adjoint(grad *c, const gc_irnode *nd, int32_t *dz, int64_t *pads)
{
	vshape xs = c->shape[nd->in[0]], ws = c->shape[nd->in[1]];
	int32_t nsp = xs.rank - 2;
	const gc_attr *ap = attr(nd, "auto_pad");
	const char *mode = ap && ap->type == GC_ATTR_STRING ? ap->v.s : "NOTSET";
	bool upper = !strcmp(mode, "SAME_UPPER"), lower = !strcmp(mode, "SAME_LOWER");
	bool valid = !strcmp(mode, "VALID"), shaped = attr(nd, "output_shape") != NULL;
	if (nsp < 1 || ws.rank != xs.rank || c->shape[*dz].rank != xs.rank)
		return 1;
	for (int32_t i = 0; i < nsp; i++) {
		int64_t in = xs.dims[2 + i], k = ws.dims[2 + i], o = c->shape[*dz].dims[2 + i];
		int64_t st = ints_at(nd, "strides", i, nsp, 1), dl = ints_at(nd, "dilations", i, nsp, 1);
		int64_t op = ints_at(nd, "output_padding", i, nsp, 0), head;
		if (in < 1 || k < 1 || o < 1)
			return 1;
		int64_t reach = st * (in - 1) + (k - 1) * dl + 1, full = reach + op;
		if (shaped || upper || lower) {
			int64_t want = shaped ? ints_at(nd, "output_shape", i, nsp, 0) : in * st;
			int64_t total = full - want > 0 ? full - want : 0;
			head = upper ? total / 2 : total - total / 2;
		} else {
			head = valid ? 0 : ints_at(nd, "pads", i, 2 * nsp, 0);
		}
		int64_t keep = reach - head < o ? reach - head : o;
		if (keep < 1)
			return 1;
		if (keep < o && (*dz = slice_axis(c, *dz, 2 + i, 0, keep)) < 0)
			return c->err->code;
		pads[i] = head;
		pads[nsp + i] = reach - head - keep;
	}
	return 0;
}

static int conv_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached, int32_t *gv,
		     bool transpose)
{
	int32_t x = nd->in[0], w = nd->in[1], b = nd->n_in > 2 ? nd->in[2] : -1, dzc = dz;
	gc_attr at[8];
	int64_t pads[2 * GC_MAX_RANK];
	int32_t na = conv_attrs(nd, at), rc = 0;
	if (transpose) { /* explicit pads over dz cropped to the windows' reach */
		if ((rc = convt_adjoint(c, nd, &dzc, pads)))
			return rc;
		int32_t kept = 0;
		for (int32_t i = 0; i < na; i++)
			if (strcmp(at[i].name, "auto_pad") && strcmp(at[i].name, "pads"))
				at[kept++] = at[i];
		at[kept++] = (gc_attr){.name = "pads", .type = GC_ATTR_INTS,
				       .n = 2 * (c->shape[x].rank - 2), .v.ints = pads};
		na = kept;
	}
	if (reached[x]) {
		vshape xs = c->shape[x];
		int32_t ins[3] = {dzc, w, x};
		int32_t d = transpose ? gc_grad_add_node(c, "Conv", 2, ins, na, at, &xs)
				      : com_node(c, "ConvGradInput", 3, ins, na, at, &xs);
		if ((rc = gc_grad_accumulate(c, gv, x, d)))
			return rc;
	}
	if (reached[w]) {
		vshape ws = c->shape[w];
		/* ConvTranspose is Conv's adjoint: its weight gradient is Conv's
		 * with the roles of input and output swapped */
		int32_t ins[3] = {transpose ? x : dzc, transpose ? dzc : x, w};
		if ((rc = gc_grad_accumulate(c, gv, w,
					     com_node(c, "ConvGradWeight", 3, ins, na, at, &ws))))
			return rc;
	}
	if (b >= 0 && reached[b])
		rc = gc_grad_accumulate(c, gv, b, bias_back(c, dz, b));
	return rc;
}

/* Gemm: Y = alpha op(A) op(B) + beta C. */
static int gemm_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached, int32_t *gv)
{
	int32_t a = nd->in[0], b = nd->in[1], cc = nd->n_in > 2 ? nd->in[2] : -1;
	bool ta = attr_i(nd, "transA", 0) != 0, tb = attr_i(nd, "transB", 0) != 0;
	double alpha = attr_f(nd, "alpha", 1.0), beta = attr_f(nd, "beta", 1.0);
	int rc = 0;
	if (reached[a]) { /* dA = dz op(B)^T, or op(B) dz^T when transA */
		int32_t d = ta ? gc_grad_matmul(c, tb ? gc_grad_transpose_last(c, b) : b,
						gc_grad_transpose_last(c, dz))
			       : gc_grad_matmul(c, dz, tb ? b : gc_grad_transpose_last(c, b));
		if ((rc = gc_grad_accumulate(c, gv, a, scale(c, d, alpha))))
			return rc;
	}
	if (reached[b]) { /* dB = op(A)^T dz, or dz^T op(A) when transB */
		int32_t d = tb ? gc_grad_matmul(c, gc_grad_transpose_last(c, dz),
						ta ? gc_grad_transpose_last(c, a) : a)
			       : gc_grad_matmul(c, ta ? a : gc_grad_transpose_last(c, a), dz);
		if ((rc = gc_grad_accumulate(c, gv, b, scale(c, d, alpha))))
			return rc;
	}
	if (cc >= 0 && reached[cc]) {
		vshape cs = c->shape[cc];
		rc = gc_grad_accumulate(c, gv, cc, scale(c, gc_grad_sum_to(c, dz, &cs), beta));
	}
	return rc;
}

/* SoftmaxCrossEntropyLoss = NLL(LogSoftmax(scores, axis 1)); its second
 * output, when named, is that LogSoftmax (and may carry a gradient too). */
static int sce_rule(grad *c, const gc_irnode *nd, const int32_t *dzs, const bool *reached,
		    int32_t *gv, bool nll)
{
	int32_t x = nd->in[0], t = nd->in[1], w = nd->n_in > 2 ? nd->in[2] : -1;
	if (!reached[x])
		return 0;
	vshape xs = c->shape[x];
	int32_t logp = nll ? x : nd->n_out > 1 ? nd->out[1] : -1;
	if (logp < 0) {
		if (c->opset < 13 && xs.rank > 2)
			return 1;
		gc_attr ax = {.name = "axis", .type = GC_ATTR_INT, .n = 1, .v.i = 1};
		logp = gc_grad_add_node(c, "LogSoftmax", 1, &x, 1, &ax, &xs);
	}
	int32_t d = -1;
	if (dzs[0] >= 0) {
		const gc_attr *keep[2] = {attr(nd, "reduction"), attr(nd, "ignore_index")};
		gc_attr at[2];
		int32_t na = 0;
		for (int i = 0; i < 2; i++)
			if (keep[i])
				at[na++] = *keep[i];
		int32_t ins[4] = {dzs[0], logp, t, w};
		d = logp < 0 ? -1
			     : com_node(c, "NegativeLogLikelihoodLossGrad", w >= 0 ? 4 : 3, ins, na,
					at, &xs);
	}
	if (!nll && nd->n_out > 1 && dzs[1] >= 0)
		d = d < 0 ? dzs[1] : gc_grad_binary(c, "Add", d, dzs[1]);
	if (!nll)
		d = d < 0 ? -1 : softmax_back(c, d, logp, 1, true);
	return gc_grad_accumulate(c, gv, x, d);
}

/* Normalisation over the axes in `axes` with statistics from the batch
 * (LayerNormalization; BatchNormalization in training mode): xhat =
 * (x - mean) rstd, y = xhat scale + b, scale and b broadcast as `ps` and
 * `pb` (the shapes they are read as). dX = rstd (g - mean(g) - xhat mean(g xhat)),
 * g = dY scale; dScale, dB: dY xhat and dY summed to their shapes. */
static int norm_back(grad *c, int32_t x, int32_t sc, int32_t b, int32_t dz, const int64_t *axes,
		     int32_t na, double eps, const vshape *ps, const vshape *pb, const bool *reached,
		     int32_t *gv)
{
	vshape xs = c->shape[x];
	int64_t cnt = 1;
	for (int32_t i = 0; i < na; i++)
		cnt *= xs.dims[axes[i]];
	double k = 1.0 / (double)cnt;
	gc_dtype dt = xs.dtype;
	int32_t mean = scale(c, gc_grad_reduce_sum(c, x, na, axes), k);
	int32_t xc = sub(c, x, mean);
	int32_t var = xc < 0 ? -1 : scale(c, gc_grad_reduce_sum(c, mul(c, xc, xc), na, axes), k);
	int32_t e = gc_grad_const_scalar(c, dt, eps), one = gc_grad_const_scalar(c, dt, 1);
	int32_t sd = var < 0 || e < 0 ? -1 : gc_grad_unary(c, "Sqrt", gc_grad_binary(c, "Add", var, e));
	int32_t rstd = sd < 0 || one < 0 ? -1 : gc_grad_binary(c, "Div", one, sd);
	int32_t xhat = mul(c, xc, rstd);
	int32_t scb = gc_grad_reshape(c, sc, ps);
	int rc = 0;
	if (reached[x]) {
		int32_t g = mul(c, dz, scb);
		int32_t mg = g < 0 ? -1 : scale(c, gc_grad_reduce_sum(c, g, na, axes), k);
		int32_t gx = mul(c, g, xhat);
		int32_t mgx = gx < 0 ? -1 : scale(c, gc_grad_reduce_sum(c, gx, na, axes), k);
		int32_t d = mul(c, rstd, sub(c, sub(c, g, mg), mul(c, xhat, mgx)));
		if ((rc = gc_grad_accumulate(c, gv, x, d)))
			return rc;
	}
	if (reached[sc]) {
		vshape ss = c->shape[sc];
		int32_t m = mul(c, dz, xhat);
		m = m < 0 ? -1 : gc_grad_sum_to(c, m, ps);
		if ((rc = gc_grad_accumulate(c, gv, sc, m < 0 ? -1 : gc_grad_reshape(c, m, &ss))))
			return rc;
	}
	if (b >= 0 && reached[b]) {
		vshape bs = c->shape[b];
		int32_t m = gc_grad_sum_to(c, dz, pb);
		rc = gc_grad_accumulate(c, gv, b, m < 0 ? -1 : gc_grad_reshape(c, m, &bs));
	}
	return rc;
}

/* Tensor v as NumPy broadcasting reads it against a tensor of rank `rank`
 * (leading 1s). */
static vshape right_aligned(const vshape *v, int32_t rank)
{
	vshape r = *v;
	r.rank = rank;
	for (int32_t i = 0; i < rank; i++) {
		int32_t j = i - (rank - v->rank);
		r.dims[i] = j >= 0 ? v->dims[j] : 1;
	}
	return r;
}

/* LayerNormalization over axes [axis, rank). */
static int layernorm_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached,
			  int32_t *gv)
{
	int32_t x = nd->in[0], b = nd->n_in > 2 ? nd->in[2] : -1;
	vshape xs = c->shape[x], ps = right_aligned(&c->shape[nd->in[1]], xs.rank);
	vshape pb = b >= 0 ? right_aligned(&c->shape[b], xs.rank) : ps;
	int64_t axis = attr_i(nd, "axis", -1), axes[GC_MAX_RANK];
	if (axis < 0)
		axis += xs.rank;
	int32_t na = 0;
	for (int64_t i = axis; i < xs.rank; i++)
		axes[na++] = i;
	return norm_back(c, x, nd->in[1], b, dz, axes, na, attr_f(nd, "epsilon", 1e-5), &ps, &pb,
			 reached, gv);
}

/* BatchNormalization: in training mode (opset 14 on, training_mode=1) as
 * normalisation over every axis but 1; in inference mode (the running
 * statistics constants) y = x s + t per channel: dX = dY scale / sqrt(var +
 * eps), dScale = sum dY xhat, dB = sum dY. The statistics inputs get none. */
static int batchnorm_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached,
			  int32_t *gv)
{
	int32_t x = nd->in[0], sc = nd->in[1], b = nd->in[2], mean = nd->in[3], var = nd->in[4];
	vshape xs = c->shape[x], ps = xs;
	double eps = attr_f(nd, "epsilon", 1e-5);
	int64_t axes[GC_MAX_RANK];
	int32_t na = 0;
	for (int i = 0; i < xs.rank; i++) {
		ps.dims[i] = i == 1 ? xs.dims[1] : 1;
		if (i != 1)
			axes[na++] = i;
	}
	if (reached[mean] || reached[var])
		return 1;
	if (c->opset >= 14 && attr_i(nd, "training_mode", 0))
		return norm_back(c, x, sc, b, dz, axes, na, eps, &ps, &ps, reached, gv);
	int32_t e = gc_grad_const_scalar(c, xs.dtype, eps);
	int32_t vb = gc_grad_reshape(c, var, &ps), mb = gc_grad_reshape(c, mean, &ps);
	int32_t sd = vb < 0 || e < 0 ? -1 : gc_grad_unary(c, "Sqrt", gc_grad_binary(c, "Add", vb, e));
	int32_t one = gc_grad_const_scalar(c, xs.dtype, 1);
	int32_t rstd = sd < 0 || one < 0 ? -1 : gc_grad_binary(c, "Div", one, sd);
	int rc = 0;
	if (reached[x] &&
	    (rc = gc_grad_accumulate(c, gv, x, mul(c, dz, mul(c, gc_grad_reshape(c, sc, &ps), rstd)))))
		return rc;
	if (reached[sc]) {
		vshape ss = c->shape[sc];
		int32_t m = mul(c, dz, mul(c, sub(c, x, mb), rstd));
		m = m < 0 ? -1 : gc_grad_sum_to(c, m, &ps);
		if ((rc = gc_grad_accumulate(c, gv, sc, m < 0 ? -1 : gc_grad_reshape(c, m, &ss))))
			return rc;
	}
	if (reached[b]) {
		vshape bs = c->shape[b];
		int32_t m = gc_grad_sum_to(c, dz, &ps);
		rc = gc_grad_accumulate(c, gv, b, m < 0 ? -1 : gc_grad_reshape(c, m, &bs));
	}
	return rc;
}

static int concat_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached, int32_t *gv)
{
	int64_t axis = attr_i(nd, "axis", 0), off = 0;
	if (axis < 0)
		axis += c->shape[dz].rank;
	for (int32_t i = 0; i < nd->n_in; i++) {
		int32_t x = nd->in[i];
		int64_t len = c->shape[x].dims[axis];
		if (reached[x]) {
			int rc = gc_grad_accumulate(c, gv, x, slice_axis(c, dz, axis, off, off + len));
			if (rc)
				return rc;
		}
		off += len;
	}
	return 0;
}

/* Split: the outputs' gradients (zeros for those none reaches) concatenated. */
static int split_rule(grad *c, const gc_irnode *nd, const int32_t *dzs, int32_t *gv)
{
	int32_t x = nd->in[0], parts[GC_GRAD_MAX_IO];
	vshape xs = c->shape[x];
	int64_t axis = attr_i(nd, "axis", 0);
	if (axis < 0)
		axis += xs.rank;
	for (int32_t j = 0; j < nd->n_out; j++) {
		vshape os = c->shape[nd->out[j]];
		parts[j] = dzs[j] >= 0 ? dzs[j] : gc_grad_const_fill(c, os.dtype, os.rank, os.dims, 0);
		if (parts[j] < 0)
			return c->err->code;
	}
	gc_attr at = {.name = "axis", .type = GC_ATTR_INT, .n = 1, .v.i = axis};
	return gc_grad_accumulate(c, gv, x, gc_grad_add_node(c, "Concat", nd->n_out, parts, 1, &at, &xs));
}

/* One axis of a Slice, as ONNX clamps it: the first index taken and how
 * many are taken, step apart. */
static void slice_range(int64_t d, int64_t s, int64_t e, int64_t step, int64_t *first,
			int64_t *count)
{
	s = s < 0 ? s + d : s;
	e = e < 0 ? e + d : e;
	int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? d : d - 1;
	s = s < 0 ? 0 : s > hi ? hi : s; /* a start clamps to [0, d] or [0, d - 1] */
	e = e < lo ? lo : e > hi ? hi : e;
	*first = s;
	if (step > 0)
		*count = e > s ? (e - s - 1) / step + 1 : 0;
	else
		*count = s > e ? (s - e - 1) / -step + 1 : 0;
}

/* dz's axis a holding the `count` elements taken `step` apart, spread to
 * ascending order with step - 1 zeros between them; *first becomes the
 * lowest index taken. */
static int32_t slice_spread(grad *c, int32_t dz, int64_t a, int64_t *first, int64_t count,
			    int64_t step)
{
	if (step < 0) { /* reverse: the lowest index comes first */
		dz = slice_step(c, dz, a, -1, INT64_MIN, -1, count);
		*first += (count - 1) * step;
		step = -step;
	}
	if (step == 1 || count == 1 || dz < 0)
		return dz;
	vshape s = c->shape[dz], t = s;
	for (int32_t i = s.rank; i > a + 1; i--)
		t.dims[i] = t.dims[i - 1];
	t.rank++;
	t.dims[a + 1] = 1;
	int64_t pads[2 * GC_MAX_RANK] = {0};
	pads[t.rank + a + 1] = step - 1;
	int32_t u = gc_grad_reshape(c, dz, &t);
	t.dims[a + 1] = step;
	int32_t p = pad_to(c, u, pads, &t);
	s.dims[a] = count * step;
	int32_t r = p < 0 ? -1 : gc_grad_reshape(c, p, &s);
	return r < 0 ? -1 : slice_axis(c, r, a, 0, (count - 1) * step + 1);
}

/* Slice's starts, ends, axes and steps (constants); -1 when not known. */
static int64_t slice_args(grad *c, const gc_irnode *nd, int64_t *st, int64_t *ax, int64_t *en,
			  int64_t *sp)
{
	int64_t ns, ne, na, nsp;
	if (c->opset >= 10) {
		ns = const_ints_of(c, nd->in[1], st, GC_MAX_RANK);
		ne = const_ints_of(c, nd->in[2], en, GC_MAX_RANK);
		bool axes = nd->n_in > 3 && nd->in[3] >= 0, steps = nd->n_in > 4 && nd->in[4] >= 0;
		na = axes ? const_ints_of(c, nd->in[3], ax, GC_MAX_RANK) : ns;
		nsp = steps ? const_ints_of(c, nd->in[4], sp, GC_MAX_RANK) : ns;
		for (int64_t i = 0; i < ns; i++) {
			if (!axes)
				ax[i] = i;
			if (!steps)
				sp[i] = 1;
		}
	} else {
		const gc_attr *a = attr(nd, "starts"), *b = attr(nd, "ends"), *x3 = attr(nd, "axes");
		ns = a ? a->n : -1;
		ne = b ? b->n : -1;
		na = x3 ? x3->n : ns;
		nsp = ns;
		for (int64_t i = 0; i < ns && i < GC_MAX_RANK; i++) {
			st[i] = a->v.ints[i];
			en[i] = i < ne ? b->v.ints[i] : 0;
			ax[i] = x3 ? x3->v.ints[i] : i;
			sp[i] = 1;
		}
	}
	return ns < 0 || ne != ns || na != ns || nsp != ns || ns > GC_MAX_RANK ? -1 : ns;
}

/* Slice: dz's elements put back where they were taken from (any steps),
 * zeros elsewhere. */
static int slice_rule(grad *c, const gc_irnode *nd, int32_t dz, int32_t *gv)
{
	int32_t x = nd->in[0];
	vshape xs = c->shape[x];
	int64_t st[GC_MAX_RANK], en[GC_MAX_RANK], ax[GC_MAX_RANK], sp[GC_MAX_RANK];
	int64_t ns = slice_args(c, nd, st, ax, en, sp);
	if (ns < 0 || ns > xs.rank)
		return 1;
	int64_t pads[2 * GC_MAX_RANK] = {0};
	bool seen[GC_MAX_RANK] = {false};
	for (int64_t i = 0; i < ns; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + xs.rank : ax[i], first, count;
		if (a < 0 || a >= xs.rank || seen[a] || sp[i] == 0 || xs.dims[a] < 0)
			return 1;
		seen[a] = true;
		slice_range(xs.dims[a], st[i], en[i], sp[i], &first, &count);
		if (count == 0) /* nothing taken: no gradient flows */
			return gc_grad_accumulate(c, gv, x,
						  gc_grad_const_fill(c, xs.dtype, xs.rank, xs.dims, 0));
		dz = slice_spread(c, dz, a, &first, count, sp[i]);
		int64_t len = (count - 1) * (sp[i] < 0 ? -sp[i] : sp[i]) + 1;
		pads[a] = first;
		pads[xs.rank + a] = xs.dims[a] - first - len;
	}
	return gc_grad_accumulate(c, gv, x, pad_to(c, dz, pads, &xs));
}

/* Gather along axis: dx (pre, D, post) = OneHot(indices, D)^T (D, K) @ dz
 * (pre, K, post), so that repeated indices add up. */
static int gather_rule(grad *c, const gc_irnode *nd, int32_t dz, int32_t *gv)
{
	int32_t x = nd->in[0], idx = nd->in[1];
	vshape xs = c->shape[x], is = c->shape[idx];
	int64_t axis = attr_i(nd, "axis", 0), pre = 1, post = 1, k = 1;
	if (axis < 0)
		axis += xs.rank;
	for (int i = 0; i < xs.rank; i++)
		if (i < axis)
			pre *= xs.dims[i];
		else if (i > axis)
			post *= xs.dims[i];
	for (int i = 0; i < is.rank; i++)
		k *= is.dims[i];
	int64_t depth = xs.dims[axis];
	vshape flat = {.dtype = is.dtype, .rank = 1, .dims = {k}};
	vshape d3 = {.dtype = xs.dtype, .rank = 3, .dims = {pre, k, post}};
	vshape oh = {.dtype = xs.dtype, .rank = 2, .dims = {k, depth}};
	int32_t fi = gc_grad_reshape(c, idx, &flat);
	int32_t dep = fi < 0 ? -1 : gc_grad_const_ints(c, "depth", 1, &depth);
	gc_tensor vt = {.dtype = xs.dtype, .rank = 1, .dims = {2}};
	double vd[2] = {0, 1};
	float vf[2] = {0, 1};
	vt.data = xs.dtype == GC_DTYPE_DOUBLE ? (void *)vd : (void *)vf;
	int32_t vals = dep < 0 ? -1 : gc_grad_add_constant(c, "onehot_values", &vt);
	int32_t ins[3] = {fi, dep, vals};
	int32_t o = vals < 0 ? -1 : gc_grad_add_node(c, "OneHot", 3, ins, 0, NULL, &oh);
	int32_t ot = o < 0 ? -1 : gc_grad_transpose_last(c, o);
	int32_t g3 = ot < 0 ? -1 : gc_grad_reshape(c, dz, &d3);
	int32_t m = g3 < 0 ? -1 : gc_grad_matmul(c, ot, g3);
	return gc_grad_accumulate(c, gv, x, m < 0 ? -1 : gc_grad_reshape(c, m, &xs));
}

/* Clip: dz where min <= x <= max (PyTorch's rule at the bounds), else 0. */
static int32_t clip_back(grad *c, const gc_irnode *nd, int32_t dz)
{
	int32_t x = nd->in[0], lo = nd->n_in > 1 ? nd->in[1] : -1, hi = nd->n_in > 2 ? nd->in[2] : -1;
	gc_dtype dt = c->shape[x].dtype;
	const gc_attr *amin = attr(nd, "min"), *amax = attr(nd, "max");
	if (lo < 0 && amin)
		lo = gc_grad_const_scalar(c, dt, amin->v.f);
	if (hi < 0 && amax)
		hi = gc_grad_const_scalar(c, dt, amax->v.f);
	int32_t m = -1;
	if (lo >= 0)
		m = bool_node(c, "Not", bool_node(c, "Less", x, lo), -1);
	if (hi >= 0) {
		int32_t h = bool_node(c, "Not", bool_node(c, "Greater", x, hi), -1);
		m = m < 0 ? h : bool_node(c, "And", m, h);
	}
	if (m < 0)
		return lo < 0 && hi < 0 ? dz : -1;
	return where(c, m, dz, gc_grad_const_scalar(c, dt, 0));
}

/* Clip's bounds given as inputs: each takes dz where x is beyond it,
 * summed to its (scalar) shape. */
static int clip_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached, int32_t *gv)
{
	int32_t x = nd->in[0], rc = 0;
	if (reached[x] && (rc = gc_grad_accumulate(c, gv, x, clip_back(c, nd, dz))))
		return rc;
	for (int32_t i = 1; i < nd->n_in && i < 3; i++) {
		int32_t b = nd->in[i];
		if (b < 0 || !reached[b])
			continue;
		vshape bs = c->shape[b];
		int32_t beyond = bool_node(c, i == 1 ? "Less" : "Greater", x, b);
		int32_t d = beyond < 0 ? -1 : where(c, beyond, dz, gc_grad_const_scalar(c, bs.dtype, 0));
		if ((rc = gc_grad_accumulate(c, gv, b, d < 0 ? -1 : gc_grad_sum_to(c, d, &bs))))
			return rc;
	}
	return 0;
}

/* Pow: da = dz b a^(b-1), db = dz z log(a). */
static int pow_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached, int32_t *gv)
{
	int32_t a = nd->in[0], b = nd->in[1], z = nd->out[0];
	gc_dtype dt = c->shape[a].dtype;
	int rc = 0;
	if (reached[a]) {
		int32_t bf = b;
		if (c->shape[b].dtype != dt) {
			gc_attr to = {.name = "to", .type = GC_ATTR_INT, .n = 1, .v.i = (int64_t)dt};
			vshape s = c->shape[b];
			s.dtype = dt;
			bf = gc_grad_add_node(c, "Cast", 1, &b, 1, &to, &s);
		}
		int32_t one = gc_grad_const_scalar(c, dt, 1);
		int32_t p = one < 0 || bf < 0 ? -1 : gc_grad_binary(c, "Pow", a, sub(c, bf, one));
		int32_t d = mul(c, dz, mul(c, bf, p));
		vshape as = c->shape[a];
		if ((rc = gc_grad_accumulate(c, gv, a, d < 0 ? -1 : gc_grad_sum_to(c, d, &as))))
			return rc;
	}
	if (reached[b]) {
		int32_t d = mul(c, dz, mul(c, z, gc_grad_unary(c, "Log", a)));
		vshape bs = c->shape[b];
		rc = gc_grad_accumulate(c, gv, b, d < 0 ? -1 : gc_grad_sum_to(c, d, &bs));
	}
	return rc;
}

static int where_rule(grad *c, const gc_irnode *nd, int32_t dz, const bool *reached, int32_t *gv)
{
	int32_t cond = nd->in[0];
	for (int i = 1; i < 3; i++) {
		int32_t v = nd->in[i];
		if (!reached[v])
			continue;
		int32_t zero = gc_grad_const_scalar(c, c->shape[dz].dtype, 0);
		int32_t w = i == 1 ? where(c, cond, dz, zero) : zero < 0 ? -1 : where(c, cond, zero, dz);
		if (i == 2 && w >= 0) /* Where(cond, 0, dz) has the shape of all three */
			c->shape[w] = c->shape[dz];
		vshape vs = c->shape[v];
		int rc = gc_grad_accumulate(c, gv, v, w < 0 ? -1 : gc_grad_sum_to(c, w, &vs));
		if (rc)
			return rc;
	}
	return 0;
}

/* The single-output rules: the gradient of input 0, -1 on an error, or
 * OUT_OF_RULE when the node's attributes put it out of reach. */
#define OUT_OF_RULE (-2)
static int32_t simple_rule(grad *c, const gc_irnode *nd, const char *op, int32_t dz)
{
	int32_t a = nd->in[0];
	vshape as = c->shape[a];
	gc_dtype dt = as.dtype;
	if (!strcmp(op, "Flatten") || !strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze"))
		return gc_grad_reshape(c, dz, &as);
	if (!strcmp(op, "Dropout")) { /* inference only: the identity */
		int64_t tm = 0;
		if (nd->n_in > 2 && nd->in[2] >= 0) {
			const gc_tensor *t = c->g->values[nd->in[2]].constant;
			if (!t || t->dtype != GC_DTYPE_BOOL || gc_tensor_numel(t) != 1)
				return OUT_OF_RULE;
			tm = *(const uint8_t *)t->data;
		}
		return tm ? OUT_OF_RULE : dz;
	}
	if (!strcmp(op, "Expand"))
		return gc_grad_sum_to(c, dz, &as);
	if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
		int32_t ins[2] = {dz, a};
		return com_node(c, op[0] == 'M' ? "MaxPoolGrad" : "AveragePoolGrad", 2, ins,
				nd->n_attr, nd->attrs, &as);
	}
	if (!strcmp(op, "GlobalAveragePool")) {
		int64_t sp = 1;
		for (int i = 2; i < as.rank; i++)
			sp *= as.dims[i];
		int32_t shp = gc_grad_const_ints(c, "shape", as.rank, as.dims);
		int32_t ins[2] = {dz, shp};
		int32_t e = shp < 0 ? -1 : gc_grad_add_node(c, "Expand", 2, ins, 0, NULL, &as);
		return scale(c, e, 1.0 / (double)sp);
	}
	if (!strcmp(op, "Softmax") || !strcmp(op, "LogSoftmax"))
		return softmax_rule(c, nd, dz, op[0] == 'L');
	if (!strcmp(op, "Erf")) {
		int32_t sq = mul(c, a, a);
		int32_t e = sq < 0 ? -1 : gc_grad_unary(c, "Exp", gc_grad_unary(c, "Neg", sq));
		return mul(c, dz, scale(c, e, 2.0 / sqrt(3.14159265358979323846)));
	}
	if (!strcmp(op, "LeakyRelu")) {
		int32_t zero = gc_grad_const_scalar(c, dt, 0);
		int32_t pos = zero < 0 ? -1 : bool_node(c, "Greater", a, zero);
		return where(c, pos, dz, scale(c, dz, attr_f(nd, "alpha", 0.01)));
	}
	return OUT_OF_RULE;
}

int gc_grad_rule_nn(grad *c, int32_t node, const int32_t *dzs, const bool *reached, int32_t *gv,
		    bool *handled)
{
	/* a copy: adding nodes may move the nodes array */
	const gc_irnode nd = c->g->nodes[node];
	const char *op = nd.op_type;
	*handled = gc_grad_has_rule_nn(&nd);
	if (!*handled)
		return 0;
	int32_t dz = dzs[0];
	bool multi = !strcmp(op, "Split") || !strcmp(op, "SoftmaxCrossEntropyLoss");
	for (int j = 1; j < nd.n_out && !multi; j++)
		if (dzs[j] >= 0)
			return gc_grad_refuse(c, node, ": only its first output is differentiated");
	if (dz < 0 && !multi)
		return 0;
	int rc = 0;
	if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose"))
		rc = conv_rule(c, &nd, dz, reached, gv, op[4] == 'T');
	else if (!strcmp(op, "Gemm"))
		rc = gemm_rule(c, &nd, dz, reached, gv);
	else if (!strcmp(op, "SoftmaxCrossEntropyLoss") || !strcmp(op, "NegativeLogLikelihoodLoss"))
		rc = sce_rule(c, &nd, dzs, reached, gv, op[0] == 'N');
	else if (!strcmp(op, "LayerNormalization"))
		rc = layernorm_rule(c, &nd, dz, reached, gv);
	else if (!strcmp(op, "BatchNormalization"))
		rc = batchnorm_rule(c, &nd, dz, reached, gv);
	else if (!strcmp(op, "Concat"))
		rc = concat_rule(c, &nd, dz, reached, gv);
	else if (!strcmp(op, "Split"))
		rc = reached[nd.in[0]] ? split_rule(c, &nd, dzs, gv) : 0;
	else if (!strcmp(op, "Pow"))
		rc = pow_rule(c, &nd, dz, reached, gv);
	else if (!strcmp(op, "Where"))
		rc = where_rule(c, &nd, dz, reached, gv);
	else if (!strcmp(op, "Clip"))
		rc = clip_rule(c, &nd, dz, reached, gv);
	else if (!reached[nd.in[0]])
		rc = 0;
	else if (!strcmp(op, "Slice"))
		rc = slice_rule(c, &nd, dz, gv);
	else if (!strcmp(op, "Gather"))
		rc = gather_rule(c, &nd, dz, gv);
	else {
		int32_t d = simple_rule(c, &nd, op, dz);
		rc = d == OUT_OF_RULE ? 1 : gc_grad_accumulate(c, gv, nd.in[0], d);
	}
	if (rc == 1)
		return gc_grad_refuse(c, node, ": its attributes or inputs are outside the rule "
					       "(see lib/pass-gradient-nn.c)");
	return rc;
}
