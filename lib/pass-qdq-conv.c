/*
 * fuse-qdq-conv: a float Conv wrapped in QDQ runs as one QLinearConv on the
 * integer GEMM. The pattern (what ONNX Runtime's quantizer writes):
 *
 *   DequantizeLinear(xq, xs, xz) ─┐
 *   DequantizeLinear(wq, ws, wz) ─┼─ Conv ─[Relu]─ QuantizeLinear(ys, yz) ─ yq
 *   bias: a float constant, or DequantizeLinear(int32 bq, xs * ws, 0) ─┘
 *
 * with xs, xz, ys, yz constant per tensor, wq a constant with ws, wz per
 * tensor or per output channel (axis 0), and the Conv (and Relu) output read
 * only by the next node of the chain. The Conv becomes QLinearConv(xq, xs,
 * xz, wq, ws, wz, ys, yz, bq) writing yq; a float bias is quantized to int32
 * with scale xs * ws (round half to even); a Relu is kept as the graphcc
 * attribute _gc_activation "Relu" (the output clamped below at yz, which is
 * what quantizing max(y, 0) gives). The DequantizeLinear nodes nothing else
 * reads go with dead-node removal. Anything else keeps the float Conv.
 */
#include <math.h>
#include <string.h>

#include "../runtime/build.h" /* GC_DOMAIN_GRAPHCC */
#include "graph-edit.h"

typedef struct qp {
	int32_t q, s, z; /* values: quantized tensor, scale, zero point */
	const gc_tensor *st, *zt;
} qp;

/* DequantizeLinear or QuantizeLinear node i's inputs, when its scale and
 * zero point are constants (zero point present), with `per` values allowed
 * (1, or also `channels` on axis 0). */
static bool qdq_params(gc_edit *e, int32_t i, int64_t channels, qp *p)
{
	const gc_irnode *n = &e->g->nodes[i];
	if (n->n_in != 3 || n->in[0] < 0 || n->in[1] < 0 || n->in[2] < 0 || n->n_out != 1)
		return false;
	p->q = n->in[0];
	p->s = n->in[1];
	p->z = n->in[2];
	p->st = gc_edit_const(e, p->s);
	p->zt = gc_edit_const(e, p->z);
	if (!p->st || !p->zt || p->st->dtype != GC_DTYPE_FLOAT)
		return false;
	int64_t ns = gc_tensor_numel(p->st), nz = gc_tensor_numel(p->zt);
	if (ns != nz || (ns != 1 && ns != channels) || p->st->rank > 1 ||
	    gc_edit_attr(e, i, "block_size") || gc_edit_attr(e, i, "output_dtype"))
		return false;
	if (ns > 1) {
		const gc_attr *ax = gc_edit_attr(e, i, "axis");
		if (!ax || ax->type != GC_ATTR_INT || ax->v.i != 0)
			return false;
	}
	return p->zt->dtype == GC_DTYPE_UINT8 || p->zt->dtype == GC_DTYPE_INT8 ||
	       p->zt->dtype == GC_DTYPE_INT32;
}

static int32_t producer_of(gc_edit *e, int32_t v, const char *op)
{
	int32_t p = v >= 0 ? e->g->values[v].producer : -1;
	return p >= 0 && !gc_edit_is_removed(e, p) && gc_edit_is_op(e, p, op) ? p : -1;
}

/* The bias as int32 with scale xs * ws[m]: a DequantizeLinear of int32 with
 * that scale (as float32 computes it) and zero point 0 as it is, a float
 * constant quantized. -1 when neither (or out of memory, err set). */
static int32_t int_bias(gc_edit *e, int32_t b, float xs, const gc_tensor *ws, int64_t m)
{
	int32_t dq = producer_of(e, b, "DequantizeLinear");
	if (dq >= 0) {
		qp p;
		const gc_tensor *bq;
		if (!qdq_params(e, dq, m, &p) || p.zt->dtype != GC_DTYPE_INT32 ||
		    !(bq = gc_edit_const(e, p.q)) || bq->dtype != GC_DTYPE_INT32 ||
		    gc_tensor_numel(bq) != m)
			return -1;
		int64_t nsb = gc_tensor_numel(p.st);
		for (int64_t i = 0; i < m; i++) {
			float want = xs * ((const float *)ws->data)[gc_tensor_numel(ws) > 1 ? i : 0];
			if (((const float *)p.st->data)[nsb > 1 ? i : 0] != want ||
			    ((const int32_t *)p.zt->data)[nsb > 1 ? i : 0] != 0)
				return -1;
		}
		return p.q;
	}
	const gc_tensor *bf = gc_edit_const(e, b);
	if (!bf || bf->dtype != GC_DTYPE_FLOAT || gc_tensor_numel(bf) != m)
		return -1;
	int64_t dims[1] = { m };
	void *data;
	int32_t v = gc_edit_add_constant(e, "qdq_bias", GC_DTYPE_INT32, 1, dims, &data);
	for (int64_t i = 0; v >= 0 && i < m; i++) {
		double s = (double)(xs * ((const float *)ws->data)[gc_tensor_numel(ws) > 1 ? i : 0]);
		double q = s > 0 ? nearbyint(((const float *)bf->data)[i] / s) : 0;
		if (!(q >= -2147483648.0 && q <= 2147483647.0))
			return -1;
		((int32_t *)data)[i] = (int32_t)q;
	}
	return v;
}

/* The two quantized inputs of node n: x per tensor, w a constant (its
 * DequantizeLinear's parameters per tensor, or `per` values on axis 0 when
 * per_axis0; the weight's channels per_axis0 ? dims[0] : 1). */
static bool dq_inputs(gc_edit *e, const gc_irnode *n, bool per_axis0, qp *x, qp *w,
		      const gc_tensor **wq)
{
	int32_t dx = producer_of(e, n->in[0], "DequantizeLinear");
	int32_t dw = producer_of(e, n->in[1], "DequantizeLinear");
	*wq = dw >= 0 ? gc_edit_const(e, e->g->nodes[dw].in[0]) : NULL;
	if (dx < 0 || !*wq || (*wq)->rank < 2)
		return false;
	return qdq_params(e, dx, 1, x) && qdq_params(e, dw, per_axis0 ? (*wq)->dims[0] : 1, w) &&
	       x->zt->dtype != GC_DTYPE_INT32 && w->zt->dtype == (*wq)->dtype &&
	       w->zt->dtype != GC_DTYPE_INT32;
}

/* v -> [Relu ->] QuantizeLinear (per tensor, 8-bit), each link read once:
 * the QuantizeLinear node (*y its parameters, *relu the Relu or -1), or -1. */
static int32_t relu_quantize(gc_edit *e, int32_t v, qp *y, int32_t *relu)
{
	gc_graph *g = e->g;
	int32_t next = gc_edit_only_reader(e, v);
	*relu = -1;
	if (next >= 0 && gc_edit_is_op(e, next, "Relu") && g->nodes[next].n_in == 1 &&
	    g->nodes[next].n_attr == 0 && g->nodes[next].n_out == 1) {
		*relu = next;
		next = gc_edit_only_reader(e, g->nodes[next].out[0]);
	}
	if (next < 0 || !gc_edit_is_op(e, next, "QuantizeLinear") || !qdq_params(e, next, 1, y) ||
	    y->zt->dtype == GC_DTYPE_INT32 || g->nodes[next].out[0] < 0)
		return -1;
	return next;
}

static int set_relu(gc_edit *e, int32_t c)
{
	gc_attr a = { .name = "_gc_activation", .type = GC_ATTR_STRING };
	a.v.s = "Relu";
	a.n = 4;
	return gc_edit_set_attr(e, c, &a) ? e->err->code : 0;
}

/* Node c becomes op (keeping its attributes when keep) with the 8 inputs
 * and a bias (-1: none) in ins, writing q's output; q and relu (-1: none)
 * go, the Relu becoming _gc_activation. */
static int make_qlinear(gc_edit *e, int32_t c, const char *op, bool keep, const int32_t ins[9],
			int32_t q, int32_t relu)
{
	gc_graph *g = e->g;
	gc_attr *attrs = g->nodes[c].attrs;
	int32_t n_attr = g->nodes[c].n_attr, yq = g->nodes[q].out[0];
	if (relu >= 0)
		gc_edit_remove_node(e, relu);
	gc_edit_remove_node(e, q);
	if (gc_edit_set_op(e, c, "", op, 0))
		return e->err->code;
	if (keep) {
		g->nodes[c].attrs = attrs;
		g->nodes[c].n_attr = n_attr;
	}
	for (int j = 0; j < (ins[8] >= 0 ? 9 : 8); j++)
		if (gc_edit_set_input(e, c, j, ins[j]))
			return e->err->code;
	gc_edit_set_output(e, c, 0, yq);
	return relu >= 0 && set_relu(e, c) ? e->err->code : 1;
}

/* Conv node c into QLinearConv when it sits in the pattern: 1 when fused. */
static int fuse_one(gc_edit *e, int32_t c)
{
	const gc_irnode *n = &e->g->nodes[c];
	if (n->n_in < 2 || n->n_in > 3 || n->n_out != 1 || n->out[0] < 0 ||
	    gc_edit_attr(e, c, "_gc_activation"))
		return 0;
	qp x, w, y;
	const gc_tensor *wq;
	int32_t relu, next;
	if (!dq_inputs(e, n, true, &x, &w, &wq) || wq->rank < 3 ||
	    (next = relu_quantize(e, n->out[0], &y, &relu)) < 0)
		return 0;
	int32_t bias = -1;
	if (n->n_in == 3 && n->in[2] >= 0 &&
	    (bias = int_bias(e, n->in[2], ((const float *)x.st->data)[0], w.st, wq->dims[0])) < 0)
		return e->err->code ? e->err->code : 0;
	const int32_t ins[9] = { x.q, x.s, x.z, w.q, w.s, w.z, y.s, y.z, bias };
	return make_qlinear(e, c, "QLinearConv", true, ins, next, relu); /* Conv's attributes */
}

int gc_pass_fuse_qdq_conv(gc_pass_ctx *ctx)
{
	static const char *const ops[] = { "Conv", NULL };
	return gc_edit_each(ctx, ops, fuse_one);
}

/*
 * fuse-qdq-matmul: the same for MatMul and Gemm with a constant weight:
 *
 *   DequantizeLinear(aq, as, az) ─┐
 *   DequantizeLinear(wq, ws, wz) ─┴─ MatMul | Gemm ─[Relu]─ QuantizeLinear(ys, yz)
 *
 * (all per tensor; Gemm with transA 0, alpha and beta 1, a bias C of N
 * values as for Conv) becomes QLinearMatMul(aq, as, az, wq [K, N], ws, wz,
 * ys, yz[, bias]) on the integer GEMM, the bias (int32, scale as * ws) and
 * the Relu (_gc_activation) graphcc's additions to QLinearMatMul, applied in
 * its epilogue; a Gemm's transB weight is stored transposed.
 */

/* Gemm node c computes A B' + C with A not transposed and unit factors. */
static bool plain_gemm(gc_edit *e, int32_t c, bool *trans_b)
{
	const gc_attr *ta = gc_edit_attr(e, c, "transA"), *tb = gc_edit_attr(e, c, "transB");
	const gc_attr *al = gc_edit_attr(e, c, "alpha"), *be = gc_edit_attr(e, c, "beta");
	*trans_b = tb && tb->type == GC_ATTR_INT && tb->v.i;
	return (!ta || (ta->type == GC_ATTR_INT && !ta->v.i)) &&
	       (!al || (al->type == GC_ATTR_FLOAT && al->v.f == 1.0f)) &&
	       (!be || (be->type == GC_ATTR_FLOAT && be->v.f == 1.0f));
}

/* wq [N, K] as a new constant [K, N], or -1. */
static int32_t transposed(gc_edit *e, const gc_tensor *wq)
{
	int64_t nn = wq->dims[0], kk = wq->dims[1], dims[2] = { kk, nn };
	void *data;
	int32_t v = gc_edit_add_constant(e, "qdq_weight_t", wq->dtype, 2, dims, &data);
	for (int64_t i = 0; v >= 0 && i < nn; i++)
		for (int64_t t = 0; t < kk; t++)
			((uint8_t *)data)[t * nn + i] = ((const uint8_t *)wq->data)[i * kk + t];
	return v;
}

static int fuse_mm(gc_edit *e, int32_t c)
{
	gc_graph *g = e->g;
	const gc_irnode *n = &g->nodes[c];
	bool gemm = gc_edit_is_op(e, c, "Gemm"), trans_b = false;
	if (n->n_in < 2 || n->n_in > (gemm ? 3 : 2) || n->n_out != 1 || n->out[0] < 0 ||
	    (gemm && !plain_gemm(e, c, &trans_b)))
		return 0;
	int32_t av = n->in[0];
	if (av >= 0 && g->values[av].rank >= 0 && g->values[av].rank < 1)
		return 0;
	qp a, w, y;
	const gc_tensor *wq;
	int32_t relu, next;
	if (!dq_inputs(e, n, false, &a, &w, &wq) || wq->rank != 2 ||
	    (next = relu_quantize(e, n->out[0], &y, &relu)) < 0)
		return 0;
	int64_t nn = wq->dims[trans_b ? 0 : 1];
	int32_t bias = -1;
	if (n->n_in == 3 && n->in[2] >= 0 &&
	    (bias = int_bias(e, n->in[2], ((const float *)a.st->data)[0], w.st, nn)) < 0)
		return e->err->code ? e->err->code : 0;
	int32_t wv = trans_b ? transposed(e, wq) : w.q;
	if (wv < 0)
		return e->err->code;
	const int32_t ins[9] = { a.q, a.s, a.z, wv, w.s, w.z, y.s, y.z, bias };
	return make_qlinear(e, c, "QLinearMatMul", false, ins, next, relu);
}

int gc_pass_fuse_qdq_matmul(gc_pass_ctx *ctx)
{
	static const char *const ops[] = { "MatMul", "Gemm", NULL };
	return gc_edit_each(ctx, ops, fuse_mm);
}

/*
 * fuse-dynq-matmul: what quantize_dynamic writes around MatMulInteger,
 *
 *   MatMulInteger(aq, wq, az, wz) ─ Cast(float) ─ Mul(·, Mul(as, ws)) ─[Add(·, bias)]─[Relu]
 *
 * (as, ws: float scalars, the scale of a DynamicQuantizeLinear or
 * constants; or Mul by one float constant; bias a float constant of N
 * values), becomes one MatMulInteger with graphcc's attribute _gc_to_float
 * and inputs 4 to 6 (as, ws, bias): the GEMM's epilogue writes the float
 * result, rounding as the separate nodes do. Each link read once.
 */

static bool float_scalar(gc_edit *e, int32_t v)
{
	const gc_tensor *t = v >= 0 ? gc_edit_const(e, v) : NULL;
	if (t)
		return t->dtype == GC_DTYPE_FLOAT && gc_tensor_numel(t) == 1;
	int32_t p = producer_of(e, v, "DynamicQuantizeLinear");
	return p >= 0 && e->g->nodes[p].n_out > 1 && e->g->nodes[p].out[1] == v;
}

/* The two scales whose product Mul node m multiplies x by: *sa, *sb. */
static bool scale_pair(gc_edit *e, int32_t m, int32_t x, int32_t *sa, int32_t *sb)
{
	const gc_irnode *n = &e->g->nodes[m];
	if (n->n_in != 2 || n->n_out != 1 || (n->in[0] != x && n->in[1] != x) ||
	    n->in[0] == n->in[1])
		return false;
	int32_t s = n->in[0] == x ? n->in[1] : n->in[0];
	int32_t pm = producer_of(e, s, "Mul");
	if (pm >= 0 && gc_edit_only_reader(e, s) == m && e->g->nodes[pm].n_in == 2 &&
	    float_scalar(e, e->g->nodes[pm].in[0]) && float_scalar(e, e->g->nodes[pm].in[1])) {
		*sa = e->g->nodes[pm].in[0];
		*sb = e->g->nodes[pm].in[1];
		return true;
	}
	const gc_tensor *t = gc_edit_const(e, s);
	if (!t || t->dtype != GC_DTYPE_FLOAT || gc_tensor_numel(t) != 1)
		return false;
	void *one;
	*sa = s;
	*sb = gc_edit_add_constant(e, "dynq_one", GC_DTYPE_FLOAT, 0, NULL, &one);
	if (*sb < 0)
		return false;
	*(float *)one = 1.0f;
	return true;
}

/* The node reading v once that is op_type (with `ins` inputs), or -1. */
static int32_t next_op(gc_edit *e, int32_t v, const char *op_type, int32_t ins)
{
	int32_t r = gc_edit_only_reader(e, v);
	return r >= 0 && gc_edit_is_op(e, r, op_type) && e->g->nodes[r].n_in == ins &&
			       e->g->nodes[r].n_out == 1 && e->g->nodes[r].out[0] >= 0
		   ? r
		   : -1;
}

static int fuse_dynq(gc_edit *e, int32_t c)
{
	gc_graph *g = e->g;
	const gc_irnode *n = &g->nodes[c];
	if (n->n_in < 2 || n->n_in > 4 || n->n_out != 1 || n->out[0] < 0 ||
	    gc_edit_attr(e, c, "_gc_to_float"))
		return 0;
	int32_t cast = next_op(e, n->out[0], "Cast", 1);
	const gc_attr *to = cast >= 0 ? gc_edit_attr(e, cast, "to") : NULL;
	if (!to || to->type != GC_ATTR_INT || to->v.i != GC_DTYPE_FLOAT)
		return 0;
	int32_t mul = next_op(e, g->nodes[cast].out[0], "Mul", 2), sa, sb;
	if (mul < 0 || !scale_pair(e, mul, g->nodes[cast].out[0], &sa, &sb))
		return e->err->code ? e->err->code : 0;
	int32_t last = mul, bias = -1;
	const gc_tensor *wq = gc_edit_const(e, n->in[1]);
	int32_t add = next_op(e, g->nodes[mul].out[0], "Add", 2);
	if (add >= 0 && wq && wq->rank == 2) {
		const gc_irnode *an = &g->nodes[add];
		int32_t b = an->in[0] == g->nodes[mul].out[0] ? an->in[1] : an->in[0];
		const gc_tensor *bt = gc_edit_const(e, b);
		if (bt && bt->dtype == GC_DTYPE_FLOAT && bt->rank == 1 && bt->dims[0] == wq->dims[1]) {
			bias = b;
			last = add;
		}
	}
	int32_t relu = next_op(e, g->nodes[last].out[0], "Relu", 1);
	if (relu >= 0 && g->nodes[relu].n_attr == 0)
		last = relu;
	else
		relu = -1;
	int32_t y = g->nodes[last].out[0];
	int32_t chain[4] = { cast, mul, bias >= 0 ? add : -1, relu };
	for (int i = 0; i < 4; i++)
		if (chain[i] >= 0)
			gc_edit_remove_node(e, chain[i]);
	const int32_t ins[3] = { sa, sb, bias };
	for (int j = 0; j < (bias >= 0 ? 3 : 2); j++)
		if (gc_edit_set_input(e, c, 4 + j, ins[j]))
			return e->err->code;
	gc_edit_set_output(e, c, 0, y);
	gc_attr at = { .name = "_gc_to_float", .type = GC_ATTR_INT, .v.i = 1 };
	if (gc_edit_set_attr(e, c, &at))
		return e->err->code;
	return relu >= 0 && set_relu(e, c) ? e->err->code : 1;
}

int gc_pass_fuse_dynq_matmul(gc_pass_ctx *ctx)
{
	static const char *const ops[] = { "MatMulInteger", NULL };
	return gc_edit_each(ctx, ops, fuse_dynq);
}

/*
 * fuse-qdq-maxpool and fuse-qdq-add: the 8-bit ops between the integer
 * convolutions of a QDQ network.
 *
 *   DequantizeLinear(xq, s, z) ─ MaxPool ─ QuantizeLinear(s, z)
 *
 * with the same per-tensor parameters (s > 0, finite) runs MaxPool on xq
 * itself: max commutes with the increasing dequantization, and quantizing
 * (q - z) s with scale s gives back q (|q - z| < 2^8, far from a rounding
 * boundary), so the output is the unfused one's. And
 *
 *   DequantizeLinear(aq, sa, za) ─┐
 *   DequantizeLinear(bq, sb, zb) ─┴─ Add ─ QuantizeLinear(sc, zc)
 *      [─ DequantizeLinear(sc, zc) ─ Relu ─ QuantizeLinear(sr, zr)]
 *
 * (per tensor, 8-bit, each link read once) becomes com.graphcc::QLinearAdd
 * (elementwise-qlinear.c), which computes what the float nodes do, in their
 * order and rounding; the bracketed tail is its _gc_activation "Relu" with
 * inputs 8 and 9 (sr, zr).
 */

/* The same per-tensor 8-bit parameters (scale bits, zero point and type). */
static bool same_qp(const qp *a, const qp *b)
{
	return gc_tensor_numel(a->st) == 1 && gc_tensor_numel(b->st) == 1 &&
	       a->zt->dtype == b->zt->dtype && a->zt->dtype != GC_DTYPE_INT32 &&
	       !memcmp(a->st->data, b->st->data, 4) && !memcmp(a->zt->data, b->zt->data, 1);
}

/* The QuantizeLinear (per tensor, 8-bit) that alone reads v, or -1. */
static int32_t quantize_reader(gc_edit *e, int32_t v, qp *y)
{
	int32_t q = gc_edit_only_reader(e, v);
	if (q < 0 || !gc_edit_is_op(e, q, "QuantizeLinear") || !qdq_params(e, q, 1, y) ||
	    y->zt->dtype == GC_DTYPE_INT32 || e->g->nodes[q].out[0] < 0)
		return -1;
	return q;
}

static int fuse_pool(gc_edit *e, int32_t c)
{
	const gc_irnode *n = &e->g->nodes[c];
	if (n->n_in != 1 || n->n_out != 1 || n->out[0] < 0)
		return 0;
	int32_t dq = producer_of(e, n->in[0], "DequantizeLinear"), q;
	qp x, y;
	if (dq < 0 || !qdq_params(e, dq, 1, &x) || (q = quantize_reader(e, n->out[0], &y)) < 0 ||
	    !same_qp(&x, &y))
		return 0;
	float s = ((const float *)x.st->data)[0];
	if (!(s > 0) || !isfinite(s))
		return 0;
	int32_t yq = e->g->nodes[q].out[0];
	gc_edit_remove_node(e, q);
	if (gc_edit_set_input(e, c, 0, x.q))
		return e->err->code;
	gc_edit_set_output(e, c, 0, yq);
	return 1;
}

int gc_pass_fuse_qdq_maxpool(gc_pass_ctx *ctx)
{
	static const char *const ops[] = { "MaxPool", NULL };
	return gc_edit_each(ctx, ops, fuse_pool);
}

/* After QuantizeLinear q (parameters y): DequantizeLinear(y) ─ Relu ─
 * QuantizeLinear, each read once; that last node (*r its parameters,
 * nodes[0..1] the other two) or -1. */
static int32_t relu_tail(gc_edit *e, int32_t q, const qp *y, qp *r, int32_t nodes[2])
{
	gc_graph *g = e->g;
	qp d;
	int32_t dq = gc_edit_only_reader(e, g->nodes[q].out[0]);
	if (dq < 0 || !gc_edit_is_op(e, dq, "DequantizeLinear") || !qdq_params(e, dq, 1, &d) ||
	    d.q != g->nodes[q].out[0] || !same_qp(&d, y) || g->nodes[dq].out[0] < 0)
		return -1;
	int32_t relu = gc_edit_only_reader(e, g->nodes[dq].out[0]);
	if (relu < 0 || !gc_edit_is_op(e, relu, "Relu") || g->nodes[relu].n_in != 1 ||
	    g->nodes[relu].n_attr != 0 || g->nodes[relu].n_out != 1 || g->nodes[relu].out[0] < 0)
		return -1;
	nodes[0] = dq;
	nodes[1] = relu;
	return quantize_reader(e, g->nodes[relu].out[0], r);
}

static int fuse_add(gc_edit *e, int32_t c)
{
	gc_graph *g = e->g;
	const gc_irnode *n = &g->nodes[c];
	if (n->n_in != 2 || n->n_out != 1 || n->out[0] < 0)
		return 0;
	int32_t da = producer_of(e, n->in[0], "DequantizeLinear");
	int32_t db = producer_of(e, n->in[1], "DequantizeLinear"), q, tail[2];
	qp a, b, y, r;
	if (da < 0 || db < 0 || !qdq_params(e, da, 1, &a) || !qdq_params(e, db, 1, &b) ||
	    a.zt->dtype == GC_DTYPE_INT32 || b.zt->dtype == GC_DTYPE_INT32 ||
	    (q = quantize_reader(e, n->out[0], &y)) < 0)
		return 0;
	int32_t last = relu_tail(e, q, &y, &r, tail);
	int32_t out = g->nodes[last >= 0 ? last : q].out[0];
	if (last >= 0) {
		gc_edit_remove_node(e, last);
		gc_edit_remove_node(e, tail[1]);
		gc_edit_remove_node(e, tail[0]);
	}
	gc_edit_remove_node(e, q);
	if (gc_edit_set_op(e, c, GC_DOMAIN_GRAPHCC, "QLinearAdd", 0))
		return e->err->code;
	const int32_t ins[10] = { a.q, a.s, a.z, b.q, b.s, b.z, y.s, y.z, r.s, r.z };
	for (int j = 0; j < (last >= 0 ? 10 : 8); j++)
		if (gc_edit_set_input(e, c, j, ins[j]))
			return e->err->code;
	gc_edit_set_output(e, c, 0, out);
	return last >= 0 && set_relu(e, c) ? e->err->code : 1;
}

int gc_pass_fuse_qdq_add(gc_pass_ctx *ctx)
{
	static const char *const ops[] = { "Add", NULL };
	return gc_edit_each(ctx, ops, fuse_add);
}
