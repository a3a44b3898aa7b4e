/*
 * Linear quantization as ONNX defines it: QuantizeLinear (per tensor, per
 * axis or per block; y = saturate(round_half_even(x / scale) + zero_point),
 * uint8 or int8, and int16 or uint16 from opset 21; float8 from opset 19:
 * y = x / scale + zero_point rounded to the float8 type, out of range
 * saturated or not by attribute saturate, as Cast-19), DequantizeLinear (y =
 * (x - zero_point) * scale; output_dtype from opset 23), DynamicQuantize-
 * Linear (uint8, scale and zero point from the data, in float32 as ONNX's
 * reference computes them), MatMulInteger (int32 accumulation of
 * (a - a_zero_point)(b - b_zero_point)) and QLinearMatMul (the same,
 * requantized with per-tensor scales).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../fileio.h"
#include "float8.h"
#include "nn-par.h"
#include "qconv.h"
#include "qgemm.h"
#include "quant.h"
#include "value-impl.h"

static bool q8(gc_dtype t)
{
	return t == GC_DTYPE_UINT8 || t == GC_DTYPE_INT8;
}

static inline int32_t ld8(const gc_tensor *t, int64_t i)
{
	return t->dtype == GC_DTYPE_UINT8 ? ((const uint8_t *)t->data)[i]
					  : ((const int8_t *)t->data)[i];
}

static inline void st8(gc_tensor *t, int64_t i, float v)
{
	float lo = t->dtype == GC_DTYPE_UINT8 ? 0.0f : -128.0f;
	float hi = t->dtype == GC_DTYPE_UINT8 ? 255.0f : 127.0f;
	v = isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
	if (t->dtype == GC_DTYPE_UINT8)
		((uint8_t *)t->data)[i] = (uint8_t)v;
	else
		((int8_t *)t->data)[i] = (int8_t)v;
}

/* Requantizes c into element i of 8-bit t as the integer GEMM's epilogue
 * does (gc_qrequant1); relu: not below the zero point. */
static inline void st8q(gc_tensor *t, int64_t i, int64_t c, float scale, float zero, bool relu)
{
	bool u = t->dtype == GC_DTYPE_UINT8;
	float lo = u ? 0.0f : -128.0f, hi = u ? 255.0f : 127.0f;
	if (relu && zero > lo)
		lo = zero;
	int32_t v = gc_qrequant1(c, scale, zero, lo, hi);
	if (u)
		((uint8_t *)t->data)[i] = (uint8_t)v;
	else
		((int8_t *)t->data)[i] = (int8_t)v;
}

/* ---- QuantizeLinear / DequantizeLinear ------------------------------------ */

/* x viewed as [outer, len, inner] around the scale's axis (len 1 per
 * tensor). Blocked (opset 21, block > 0): the scale has x's shape with
 * ceil(len / block) along the axis, so element (o, c, j) takes scale
 * (o, c / block, j). */
typedef struct qlin_plan {
	int64_t outer, len, inner;
	int64_t block, nblk;
	bool saturate; /* float8 outputs (QuantizeLinear-19) */
} qlin_plan;

/* A quantized value (a float8 type too) as a double. */
static inline double qv_load(const gc_tensor *t, int64_t i)
{
	return gc_fsmall_is(t->dtype) ? gc_fsmall_to_f32(((const uint8_t *)t->data)[i], t->dtype)
				      : gc_kv_load(t, i);
}

static inline int64_t qlin_at(const qlin_plan *p, int64_t o, int64_t c, int64_t j)
{
	return p->block ? (o * p->nblk + c / p->block) * p->inner + j : c;
}

/* The per-tensor float -> 8-bit QuantizeLinear, cut into runs of whole
 * 64-element lines over the pool (DynamicQuantizeLinear's too). */
#define QUANT_CYCLES 1.0
typedef struct qf32_job {
	const float *x;
	int64_t n;
	float scale, zero;
	bool to_unsigned;
	uint8_t *y;
} qf32_job;

static void qf32_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const qf32_job *j = arg;
	int64_t lo, hi;
	gc_nn_part_range((j->n + 63) / 64, part, parts, &lo, &hi);
	hi = hi * 64 < j->n ? hi * 64 : j->n;
	if (lo * 64 < hi)
		gc_qquantize_f32(j->x + lo * 64, hi - lo * 64, j->scale, j->zero, j->to_unsigned,
				 j->y + lo * 64);
}

static int run_quantize(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const qlin_plan *p = n->state;
	const gc_tensor *x = in[0], *s = in[1], *z = n->n_in > 2 ? in[2] : NULL;
	bool fast = x->dtype == GC_DTYPE_FLOAT && q8(out[0]->dtype) && !p->block &&
		    !gc_reference_kernels();
	/* per tensor: one block */
	int64_t outer = fast && p->len == 1 ? 1 : p->outer;
	int64_t inner = fast && p->len == 1 ? p->outer * p->inner : p->inner;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t c = 0; c < p->len; c++) {
			int64_t at = (o * p->len + c) * inner;
			if (fast) {
				float sc = (float)gc_kv_load(s, c);
				float zp = z ? (float)ld8(z, c) : 0.0f;
				qf32_job j = { (const float *)x->data + at, inner, sc, zp,
					       out[0]->dtype == GC_DTYPE_UINT8,
					       (uint8_t *)out[0]->data + at };
				/* about a cycle an element (a multiply; a division
				 * where the vector code does not go: qgemm.c) */
				gc_nn_run_parts(gc_nn_par_threads(k->threads, QUANT_CYCLES * (double)inner),
						(inner + 63) / 64, qf32_part, &j);
				continue;
			}
			for (int64_t j = 0; j < p->inner; j++) {
				int64_t i = (o * p->len + c) * p->inner + j, q = qlin_at(p, o, c, j);
				float sc = (float)gc_kv_load(s, q);
				float zp = z ? (float)qv_load(z, q) : 0.0f;
				float v = (float)gc_kv_load(x, i) / sc;
				if (gc_fsmall_is(out[0]->dtype)) {
					((uint8_t *)out[0]->data)[i] =
					    gc_f32_to_fsmall(v + zp, out[0]->dtype, p->saturate);
					continue;
				}
				v = rintf(v) + zp;
				if (q8(out[0]->dtype))
					st8(out[0], i, v);
				else
					gc_kv_store(out[0], i, isnan(v) ? 0.0 : (double)v);
			}
		}
	return 0;
}

static int run_dequantize(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const qlin_plan *p = n->state;
	const gc_tensor *x = in[0], *s = in[1], *z = n->n_in > 2 ? in[2] : NULL;
	bool fast = q8(x->dtype) && out[0]->dtype == GC_DTYPE_FLOAT && !p->block &&
		    !gc_reference_kernels();
	int64_t outer = fast && p->len == 1 ? 1 : p->outer;
	int64_t inner = fast && p->len == 1 ? p->outer * p->inner : p->inner;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t c = 0; c < p->len; c++) {
			int64_t at = (o * p->len + c) * inner;
			if (fast) {
				float sc = (float)gc_kv_load(s, c);
				double zp = z ? gc_kv_load(z, c) : 0.0;
				gc_qdequantize_8((const uint8_t *)x->data + at, x->dtype == GC_DTYPE_UINT8,
						 inner, (float)zp, sc, (float *)out[0]->data + at);
				continue;
			}
			for (int64_t j = 0; j < p->inner; j++) {
				int64_t i = (o * p->len + c) * p->inner + j, q = qlin_at(p, o, c, j);
				float sc = (float)gc_kv_load(s, q);
				double zp = z ? qv_load(z, q) : 0.0;
				gc_kv_store(out[0], i, (double)((float)(qv_load(x, i) - zp) * sc));
			}
		}
	return 0;
}

/* The types of quantized tensors: 8-bit integers always, float8 from
 * opset 19, 16-bit integers from opset 21, float4e2m1 from 23 (int32 is
 * DequantizeLinear's input only). */
static bool qint(gc_dtype t, int opset)
{
	return q8(t) || (opset >= 19 && gc_f8_is(t)) ||
	       (opset >= 21 && (t == GC_DTYPE_INT16 || t == GC_DTYPE_UINT16)) ||
	       (opset >= 23 && t == GC_DTYPE_FLOAT4E2M1);
}

/* Where each scale applies: per tensor, per axis, or (block_size, opset
 * 21) per block along the axis. */
static int qlin_layout(gc_kctx *k, gc_node *n, const gc_tensor *x, const gc_tensor *s,
		       const char *sn, qlin_plan *p)
{
	char s1[96], s2[96];
	int64_t axis = n->opset >= 13 ? gc_attr_i(k, "axis", 1) : 1;
	int64_t block = n->opset >= 21 ? gc_attr_i(k, "block_size", 0) : 0;
	if (gc_kok(k))
		return gc_kok(k);
	int64_t ns = gc_tensor_numel(s);
	p->outer = gc_tensor_numel(x);
	p->len = p->inner = 1;
	if (block < 0)
		return gc_kerr(k, GC_EINVAL, "attribute 'block_size' = %" PRId64 "; must be >= 0",
			       block);
	if (block == 0 && s->rank == 0)
		return 0;
	if (block == 0 && s->rank == 1 && ns == 1) /* ONNX's reference: one value, per tensor */
		return 0;
	if (block == 0 && s->rank != 1)
		return gc_kerr(k, GC_EINVAL,
			       "input '%s' must be a scalar or 1-D (or x's rank, with attribute "
			       "block_size)", sn);
	int32_t a;
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	p->outer = 1;
	for (int i = 0; i < a; i++)
		p->outer *= x->dims[i];
	p->len = x->dims[a];
	for (int i = a + 1; i < x->rank; i++)
		p->inner *= x->dims[i];
	if (block == 0) {
		if (x->dims[a] != ns)
			return gc_kerr(k, GC_EINVAL,
				       "input '%s' has %" PRId64 " values, but axis %d of 'x' has %" PRId64,
				       sn, ns, a, x->dims[a]);
		return 0;
	}
	p->block = block;
	p->nblk = (x->dims[a] + block - 1) / block;
	int ok = s->rank == x->rank;
	for (int i = 0; ok && i < x->rank; i++)
		ok = s->dims[i] == (i == a ? p->nblk : x->dims[i]);
	if (!ok)
		return gc_kerr(k, GC_EINVAL,
			       "input '%s' %s does not fit x %s in blocks of %" PRId64
			       " along axis %d (expected %" PRId64 " there, x's dims elsewhere)",
			       sn, gc_shape_str(s->dims, s->rank, s1, sizeof s1),
			       gc_shape_str(x->dims, x->rank, s2, sizeof s2), block, a, p->nblk);
	return 0;
}

/* The quantized type QuantizeLinear writes: the zero point's, else
 * attribute output_dtype (opset 21), else uint8. */
static int qlin_out_type(gc_kctx *k, gc_node *n, const gc_tensor *z, gc_dtype *ot)
{
	int64_t odt = n->opset >= 21 ? gc_attr_i(k, "output_dtype", 0) : 0;
	if (gc_kok(k))
		return gc_kok(k);
	*ot = z ? z->dtype : odt ? (gc_dtype)odt : GC_DTYPE_UINT8;
	if (odt && z && odt != z->dtype)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'output_dtype' = %" PRId64 " differs from y_zero_point's "
			       "type %s", odt, gc_dtype_name(z->dtype));
	if (odt < 0 || odt >= GC_DTYPE_COUNT || !qint(*ot, n->opset))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "quantizing to %s (type %d%s) is not supported: graphcc quantizes to "
			       "int8, uint8%s at opset %d", gc_dtype_name(*ot), (int)*ot,
			       z ? ", y_zero_point's" : odt ? ", output_dtype" : "",
			       n->opset >= 23	 ? ", int16, uint16, the float8 types and float4e2m1"
			       : n->opset >= 21 ? ", int16, uint16 and the float8 types"
			       : n->opset >= 19 ? " and the float8 types"
						: "",
			       (int)n->opset);
	return 0;
}

/* DequantizeLinear-23's output_dtype: the output type (x_scale's when 0). */
static int dq_out_type(gc_kctx *k, gc_node *n, gc_dtype *ot)
{
	int64_t odt = n->opset >= 23 ? gc_attr_i(k, "output_dtype", 0) : 0;
	if (gc_kok(k) || !odt)
		return gc_kok(k);
	if (odt != GC_DTYPE_FLOAT && odt != GC_DTYPE_FLOAT16 && odt != GC_DTYPE_BFLOAT16)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'output_dtype' = %" PRId64 " must be float32 (1), "
			       "float16 (10) or bfloat16 (16)", odt);
	*ot = (gc_dtype)odt;
	return 0;
}

static int prepare_qlin(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			bool quantize)
{
	const gc_tensor *x = in[0], *s = in[1], *z = n->n_in > 2 ? in[2] : NULL;
	const char *sn = quantize ? "y_scale" : "x_scale";
	const char *zn = quantize ? "y_zero_point" : "x_zero_point";
	bool half_scales = n->opset >= 19;
	int64_t prec = n->opset >= 23 && quantize ? gc_attr_i(k, "precision", 0) : 0;
	if (gc_kok(k))
		return gc_kok(k);
	if (prec != 0 && prec != GC_DTYPE_FLOAT)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attribute 'precision' = %" PRId64 ": graphcc divides in float32 (1)",
			       prec);
	if (quantize ? !(gc_kv_float(x->dtype) || (n->opset >= 19 && x->dtype == GC_DTYPE_INT32))
		     : !(qint(x->dtype, n->opset) || x->dtype == GC_DTYPE_INT32))
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'x' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	if (s->dtype != GC_DTYPE_FLOAT &&
	    !(half_scales && (s->dtype == GC_DTYPE_FLOAT16 || s->dtype == GC_DTYPE_BFLOAT16)))
		return gc_kerr(k, GC_EINVAL, "input '%s' must be float32%s, not %s", sn,
			       half_scales ? ", float16 or bfloat16" : "", gc_dtype_name(s->dtype));
	if (z && !quantize && z->dtype != x->dtype)
		return gc_kerr(k, GC_EINVAL, "input '%s' of type %s does not fit input 'x' (%s)",
			       zn, gc_dtype_name(z->dtype), gc_dtype_name(x->dtype));
	qlin_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p || qlin_layout(k, n, x, s, sn, p))
		return gc_kok(k);
	if (z && !gc_same_shape(z, s))
		return gc_kerr(k, GC_EINVAL, "input '%s' must have the shape of '%s'", zn, sn);
	gc_dtype ot = half_scales ? s->dtype : GC_DTYPE_FLOAT;
	if (quantize && qlin_out_type(k, n, z, &ot))
		return gc_kok(k);
	if (!quantize && dq_out_type(k, n, &ot))
		return gc_kok(k);
	p->saturate = n->opset >= 19 && gc_attr_i(k, "saturate", 1) != 0;
	if (gc_kok(k))
		return gc_kok(k);
	gc_set_shape(out[0], ot, x->rank, x->dims);
	n->run = quantize ? run_quantize : run_dequantize;
	return 0;
}

int gc_prepare_QuantizeLinear(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_qlin(k, n, in, out, true);
}

int gc_prepare_DequantizeLinear(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_qlin(k, n, in, out, false);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------ */

/* DynamicQuantizeLinear's range, part by part: min(0, x) and max(0, x)
 * of each run of whole 64-element lines (exact: any order gives them). */
typedef struct dynq_job {
	const float *x;
	int64_t n;
	float lo[GC_NN_PAR_MAX * 4], hi[GC_NN_PAR_MAX * 4];
} dynq_job;

static void dynq_range_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	dynq_job *j = arg;
	int64_t lo, hi;
	gc_nn_part_range((j->n + 63) / 64, part, parts, &lo, &hi);
	hi = hi * 64 < j->n ? hi * 64 : j->n;
	j->lo[part] = j->hi[part] = 0;
	if (lo * 64 < hi)
		gc_qdyn_range(j->x + lo * 64, hi - lo * 64, &j->lo[part], &j->hi[part]);
}

static int run_dynq(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)n;
	const float *x = in[0]->data;
	int64_t total = gc_tensor_numel(in[0]);
	/* the range (~0.1 cycle an element) and the store, each a job (or
	 * a call here at one thread) */
	int t = gc_nn_par_threads(k->threads, QUANT_CYCLES * (double)total);
	int64_t lines = (total + 63) / 64;
	int parts = gc_nn_par_parts(t, lines);
	dynq_job rj; /* (its minima and maxima set by the parts) */
	rj.x = x;
	rj.n = total;
	gc_nn_parallel(t, parts, dynq_range_part, &rj);
	float mn = 0, mx = 0;
	for (int p = 0; p < parts; p++) {
		mn = rj.lo[p] < mn ? rj.lo[p] : mn;
		mx = rj.hi[p] > mx ? rj.hi[p] : mx;
	}
	float scale = (mx - mn) / 255.0f;
	float zp = scale != 0 ? rintf(0.0f - mn / scale) : 0.0f;
	zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
	uint8_t *y = out[0]->data;
	qf32_job j = { x, total, scale, zp, true, y };
	if (scale != 0)
		gc_nn_run_parts(t, lines, qf32_part, &j);
	else
		memset(y, (int)zp, (size_t)total);
	*(float *)out[1]->data = scale;
	*(uint8_t *)out[2]->data = (uint8_t)zp;
	return 0;
}

int gc_prepare_DynamicQuantizeLinear(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				     gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (x->dtype != GC_DTYPE_FLOAT)
		return gc_kerr(k, GC_EINVAL, "input 'x' must be float32, not %s",
			       gc_dtype_name(x->dtype));
	gc_set_shape(out[0], GC_DTYPE_UINT8, x->rank, x->dims);
	for (int i = 1; i < 3; i++)
		if (out[i])
			gc_set_shape(out[i], i == 1 ? GC_DTYPE_FLOAT : GC_DTYPE_UINT8, 0, NULL);
	n->run = run_dynq;
	return 0;
}

/* ---- MatMulInteger / QLinearMatMul ---------------------------------------- */

typedef struct imm_plan {
	int64_t m, kd, nn, batch;
	int32_t brank;							  /* broadcast batch rank */
	int64_t bdims[GC_MAX_RANK], astr[GC_MAX_RANK], bstr[GC_MAX_RANK]; /* batch strides */
	bool a_rows, b_cols;  /* zero points per row of A / per column of B */
	int ia, ib, iaz, ibz; /* input indices; -1 absent */
	int ias, ibs, iys, iyz;
	int ibias; /* QLinearMatMul's int32 bias per column (fuse-qdq-matmul); -1 absent */
	bool relu; /* _gc_activation "Relu" (fuse-qdq-matmul): y not below its zero point */
	/* MatMulInteger with _gc_to_float (fuse-dynq-matmul): y = float(C) *
	 * (in[ias] * in[ibs]) [+ in[ibias] per column] [Relu], float32 */
	bool to_float;
	/* The integer GEMM (qgemm.h), unless GRAPHCC_REFERENCE_KERNELS: B
	 * packed at prepare when it is a constant without batch (pb), else
	 * into scratch on each run; QLinearMatMul's int32 sums in scratch. */
	bool fast;
	bool fold; /* B has no batch, one zero point for A: one GEMM of batch * m rows */
	gc_qgemm_isa isa;
	gc_qgemm_b pb;
	uint64_t pack_bytes; /* scratch for B: packed bytes, then column sums */
} imm_plan;

static int32_t zp_at(const gc_tensor *z, bool per, int64_t i)
{
	return z ? ld8(z, per ? i : 0) : 0;
}

/* The to_float output: the Cast, Mul (by the scales' product, in float)
 * and Add nodes fused, each rounding as on its own; a Relu as the Relu kernel. */
static float to_float_scale(const imm_plan *p, gc_tensor *const *in)
{
	return *(const float *)in[p->ias]->data * *(const float *)in[p->ibs]->data;
}

__attribute__((optimize("fp-contract=off"))) static void
store_f32(const imm_plan *p, gc_tensor *const *in, gc_tensor *y, int64_t oi, int32_t c, int64_t j)
{
	float f = (float)c * to_float_scale(p, in);
	if (p->ibias >= 0)
		f = f + ((const float *)in[p->ibias]->data)[j];
	((float *)y->data)[oi] = p->relu && f < 0 ? 0.0f : f;
}

static void imm_run(const imm_plan *p, gc_tensor *const *in, gc_tensor *y, bool requant)
{
	const gc_tensor *a = in[p->ia], *b = in[p->ib];
	const gc_tensor *az = p->iaz >= 0 ? in[p->iaz] : NULL,
			*bz = p->ibz >= 0 ? in[p->ibz] : NULL;
	float scale = 1, yzp = 0;
	if (requant) {
		scale = gc_qscale((float)gc_kv_load(in[p->ias], 0), (float)gc_kv_load(in[p->ibs], 0),
				  gc_kv_load(in[p->iys], 0));
		yzp = (float)ld8(in[p->iyz], 0);
	}
	for (int64_t bi = 0; bi < p->batch; bi++) {
		int64_t r = bi, aoff = 0, boff = 0;
		for (int d = p->brank - 1; d >= 0; d--) {
			int64_t ix = r % p->bdims[d];
			r /= p->bdims[d];
			aoff += ix * p->astr[d];
			boff += ix * p->bstr[d];
		}
		for (int64_t i = 0; i < p->m; i++)
			for (int64_t j = 0; j < p->nn; j++) {
				int64_t acc = 0;
				int32_t za = zp_at(az, p->a_rows, i), zb = zp_at(bz, p->b_cols, j);
				for (int64_t t = 0; t < p->kd; t++)
					acc += (int64_t)(ld8(a, aoff + i * p->kd + t) - za) *
					       (ld8(b, boff + t * p->nn + j) - zb);
				int64_t oi = (bi * p->m + i) * p->nn + j;
				if (p->to_float) {
					store_f32(p, in, y, oi, (int32_t)acc, j);
					continue;
				}
				if (p->ibias >= 0)
					acc += ((const int32_t *)in[p->ibias]->data)[j];
				if (requant)
					st8q(y, oi, acc, scale, yzp, p->relu);
				else
					((int32_t *)y->data)[oi] = (int32_t)acc;
			}
	}
}

/* imm_run on the integer GEMM: per batch item, B packed (or the packed
 * constant), C in y (MatMulInteger) or requantized into y by the GEMM's
 * epilogue (QLinearMatMul). */
static void imm_fast(const imm_plan *p, gc_kctx *k, gc_tensor *const *in, gc_tensor *y,
		     bool requant)
{
	const gc_tensor *a = in[p->ia], *b = in[p->ib];
	const gc_tensor *az = p->iaz >= 0 ? in[p->iaz] : NULL,
			*bz = p->ibz >= 0 ? in[p->ibz] : NULL;
	gc_qgemm_zp zp = { az ? az->data : NULL, bz ? bz->data : NULL, p->a_rows, p->b_cols };
	char *scratch = k->scratch;
	float scale = 1;
	gc_qgemm_out req = { 0 };
	if (requant) {
		bool yu = y->dtype == GC_DTYPE_UINT8;
		scale = gc_qscale((float)gc_kv_load(in[p->ias], 0), (float)gc_kv_load(in[p->ibs], 0),
				  gc_kv_load(in[p->iys], 0));
		req = (gc_qgemm_out){ .ldc = p->nn, .y_unsigned = yu, .scale = &scale,
				      .zy = (float)ld8(in[p->iyz], 0), .lo = yu ? 0.0f : -128.0f,
				      .hi = yu ? 255.0f : 127.0f,
				      .colc = p->ibias >= 0 ? in[p->ibias]->data : NULL };
		if (p->relu && req.zy > req.lo)
			req.lo = req.zy;
	}
	if (p->to_float) {
		scale = to_float_scale(p, in);
		req = (gc_qgemm_out){ .ldc = p->nn, .scale = &scale, .frelu = p->relu,
				      .colf = p->ibias >= 0 ? in[p->ibias]->data : NULL };
		requant = true;
	}
	bool a_u = a->dtype == GC_DTYPE_UINT8, b_u = b->dtype == GC_DTYPE_UINT8;
	/* B without batch, A's zero point one: A's batch is more rows of one GEMM */
	int64_t batch = p->fold ? 1 : p->batch, m = p->fold ? p->batch * p->m : p->m;
	for (int64_t bi = 0; bi < batch; bi++) {
		int64_t r = bi, aoff = 0, boff = 0;
		for (int d = p->brank - 1; d >= 0; d--) {
			int64_t ix = r % p->bdims[d];
			r /= p->bdims[d];
			aoff += ix * p->astr[d];
			boff += ix * p->bstr[d];
		}
		gc_qgemm_b pb = p->pb;
		if (!pb.data) {
			int8_t *data = (int8_t *)scratch;
			int32_t *cs = (int32_t *)(data + gc_qgemm_b_bytes(p->kd, p->nn));
			gc_qgemm_pack_b((const uint8_t *)b->data + boff, b_u, p->kd, p->nn, p->nn, data,
					cs);
			pb = (gc_qgemm_b){ p->kd, p->nn, data, cs, b_u ? 128 : 0 };
		}
		int64_t mn = m * p->nn;
		if (p->to_float)
			req.f32 = (float *)y->data + bi * mn;
		else
			req.y8 = (uint8_t *)y->data + bi * mn;
		gc_qgemm(p->isa, k->threads, (const uint8_t *)a->data + aoff, a_u, p->kd, m, &pb,
			 &zp, (int32_t *)y->data + bi * mn, p->nn, requant ? &req : NULL,
			 scratch + p->pack_bytes);
	}
}

static int run_mmi(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const imm_plan *p = n->state;
	if (p->fast)
		imm_fast(p, k, in, out[0], false);
	else
		imm_run(p, in, out[0], false);
	return 0;
}

static int run_qlmm(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const imm_plan *p = n->state;
	if (p->fast)
		imm_fast(p, k, in, out[0], true);
	else
		imm_run(p, in, out[0], true);
	return 0;
}

/* Chooses the integer GEMM for plan p (B packed once, kept with the node
 * and in a .gcb, when it is a constant without batch) and sizes scratch. */
static int imm_choose(gc_kctx *k, gc_node *n, gc_tensor *const *in, imm_plan *p)
{
	if (gc_reference_kernels())
		return 0;
	p->fast = true;
	p->isa = gc_qgemm_isa_gemm();
	const gc_tensor *b = in[p->ib];
	bool b_batched = false, b_u = b->dtype == GC_DTYPE_UINT8;
	for (int d = 0; d < p->brank; d++)
		b_batched |= p->bstr[d] != 0;
	int64_t bbytes = gc_qgemm_b_bytes(p->kd, p->nn), cs = p->nn * 4;
	uint64_t work = gc_qgemm_work_bytes(p->m, p->kd, p->nn, in[p->ia]->dtype == GC_DTYPE_UINT8);
	p->pack_bytes = ((uint64_t)(bbytes + cs) + 63) & ~(uint64_t)63;
	n->scratch_bytes = p->pack_bytes + work;
	if (b_batched)
		return 0;
	bool a_whole = true; /* A has every batch dim (none broadcast) */
	for (int d = 0; d < p->brank; d++)
		a_whole &= p->astr[d] != 0 || p->bdims[d] == 1;
	p->fold = a_whole && !p->a_rows;
	work = gc_qgemm_work_bytes(p->fold ? p->batch * p->m : p->m, p->kd, p->nn,
				   in[p->ia]->dtype == GC_DTYPE_UINT8);
	n->scratch_bytes = p->pack_bytes + work;
	char key[96];
	void *fill;
	snprintf(key, sizeof key, "q8b1 %" PRId64 " %" PRId64 " %d", p->kd, p->nn, (int)b_u);
	/* replaces: a .gcb keeps only the packed B (gc_qgemm_unpack_b) */
	const int8_t *data = gc_kpacked(k, n, in, p->ib, key, (uint64_t)(bbytes + cs), true, &fill);
	if (!data)
		return gc_kok(k);
	if (fill)
		gc_qgemm_pack_b(b->data, b_u, p->kd, p->nn, p->nn, fill,
				(int32_t *)((int8_t *)fill + bbytes));
	p->pb = (gc_qgemm_b){ p->kd, p->nn, data, (const int32_t *)(data + bbytes), b_u ? 128 : 0 };
	p->pack_bytes = 0;
	n->scratch_bytes = work;
	return 0;
}

static int prepare_imm(gc_kctx *k, gc_tensor *const *in, gc_tensor *const *out, imm_plan *p,
		       gc_dtype ot)
{
	const gc_tensor *a = in[p->ia], *b = in[p->ib];
	char s1[128], s2[128];
	if (!q8(a->dtype) || !q8(b->dtype))
		return gc_kerr(k, GC_EINVAL,
			       "inputs 'A' and 'B' must be uint8 or int8, not %s and %s",
			       gc_dtype_name(a->dtype), gc_dtype_name(b->dtype));
	bool a1 = a->rank == 1 && b->rank == 2; /* a vector: one row, its dim dropped */
	if ((a->rank < 2 && !a1) || b->rank < 2 || a->dims[a->rank - 1] != b->dims[b->rank - 2])
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "inputs 'A' %s and 'B' %s: need rank >= 2 (or a 1-D A, 2-D B) and "
			       "A's last dim equal to B's second-to-last",
			       gc_shape_str(a->dims, a->rank, s1, sizeof s1),
			       gc_shape_str(b->dims, b->rank, s2, sizeof s2));
	p->m = a1 ? 1 : a->dims[a->rank - 2];
	p->kd = a->dims[a->rank - 1];
	p->nn = b->dims[b->rank - 1];
	int32_t ar = a1 ? 0 : a->rank - 2, br = b->rank - 2;
	p->brank = ar > br ? ar : br;
	p->batch = 1;
	int64_t as = p->m * p->kd, bs = p->kd * p->nn;
	for (int d = p->brank - 1; d >= 0; d--) {
		int ai = d - (p->brank - ar), bi = d - (p->brank - br);
		int64_t ad = ai >= 0 ? a->dims[ai] : 1, bd = bi >= 0 ? b->dims[bi] : 1;
		if (ad != bd && ad != 1 && bd != 1)
			return gc_kerr(k, GC_EINVAL,
				       "batch dims of 'A' %s and 'B' %s do not broadcast",
				       gc_shape_str(a->dims, a->rank, s1, sizeof s1),
				       gc_shape_str(b->dims, b->rank, s2, sizeof s2));
		p->bdims[d] = ad > bd ? ad : bd;
		p->astr[d] = ad == 1 ? 0 : as;
		p->bstr[d] = bd == 1 ? 0 : bs;
		as *= ad;
		bs *= bd;
		p->batch *= p->bdims[d];
	}
	const gc_tensor *az = p->iaz >= 0 ? in[p->iaz] : NULL,
			*bz = p->ibz >= 0 ? in[p->ibz] : NULL;
	if (az) {
		int64_t c = gc_tensor_numel(az);
		if (az->dtype != a->dtype || (c != 1 && c != p->m))
			return gc_kerr(k, GC_EINVAL,
				       "A's zero point must be %s with 1 or %" PRId64 " values",
				       gc_dtype_name(a->dtype), p->m);
		p->a_rows = c != 1;
	}
	if (bz) {
		int64_t c = gc_tensor_numel(bz);
		if (bz->dtype != b->dtype || (c != 1 && c != p->nn))
			return gc_kerr(k, GC_EINVAL,
				       "B's zero point must be %s with 1 or %" PRId64 " values",
				       gc_dtype_name(b->dtype), p->nn);
		p->b_cols = c != 1;
	}
	int64_t dims[GC_MAX_RANK];
	int32_t orank = p->brank + 2;
	memcpy(dims, p->bdims, sizeof(int64_t) * (size_t)p->brank);
	dims[orank - 2] = p->m;
	dims[orank - 1] = p->nn;
	if (a1)
		dims[--orank - 1] = p->nn;
	gc_set_shape(out[0], ot, orank, dims);
	return 0;
}

int gc_prepare_MatMulInteger(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	imm_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->ia = 0;
	p->ib = 1;
	p->iaz = n->n_in > 2 && in[2] ? 2 : -1;
	p->ibz = n->n_in > 3 && in[3] ? 3 : -1;
	p->ibias = -1;
	p->to_float = gc_attr_i(k, "_gc_to_float", 0) != 0;
	const char *act = gc_attr_s(k, "_gc_activation", NULL);
	if (gc_kok(k))
		return gc_kok(k);
	if (p->to_float || n->n_in > 4) {
		/* fuse-dynq-matmul's form: inputs 4 and 5 the scales, 6 the bias */
		if (!p->to_float || n->n_in < 6 || !in[4] || !in[5])
			return gc_kerr(k, GC_EINVAL,
				       "inputs 4 to 6 are graphcc's (attribute _gc_to_float): the "
				       "two scales and an optional bias");
		for (int i = 4; i < 6; i++)
			if (in[i]->dtype != GC_DTYPE_FLOAT || gc_tensor_numel(in[i]) != 1)
				return gc_kerr(k, GC_EINVAL, "input %d must be one float32 value", i);
		p->ias = 4;
		p->ibs = 5;
		p->ibias = n->n_in > 6 && in[6] ? 6 : -1;
	}
	if (act && (strcmp(act, "Relu") || !p->to_float))
		return gc_kerr(k, GC_EINVAL,
			       "attribute _gc_activation is \"%s\"; graphcc fuses only Relu into "
			       "a MatMulInteger with _gc_to_float", act);
	p->relu = act != NULL;
	if (prepare_imm(k, in, out, p, p->to_float ? GC_DTYPE_FLOAT : GC_DTYPE_INT32) ||
	    imm_choose(k, n, in, p))
		return gc_kok(k);
	if (p->ibias >= 0 && (in[6]->dtype != GC_DTYPE_FLOAT || gc_tensor_numel(in[6]) != p->nn))
		return gc_kerr(k, GC_EINVAL, "input 6 (the bias) must be float32 with %" PRId64
			       " values", p->nn);
	n->run = run_mmi;
	return 0;
}

int gc_prepare_QLinearMatMul(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const char *const names[] = {"a",       "a_scale",     "a_zero_point",
					    "b",       "b_scale",     "b_zero_point",
					    "y_scale", "y_zero_point"};
	for (int i = 0; i < 8; i++) {
		if (!in[i])
			return gc_kerr(k, GC_EINVAL, "input '%s' is missing", names[i]);
		if ((i == 1 || i == 2 || i == 4 || i == 5 || i == 6 || i == 7) &&
		    gc_tensor_numel(in[i]) != 1)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "input '%s' must hold one value (per-tensor quantization)",
				       names[i]);
	}
	static const int scales[] = {1, 4, 6};
	for (int i = 0; i < 3; i++)
		if (in[scales[i]]->dtype != GC_DTYPE_FLOAT)
			return gc_kerr(k, GC_EINVAL, "input '%s' must be float32, not %s",
				       names[scales[i]], gc_dtype_name(in[scales[i]]->dtype));
	if (!q8(in[7]->dtype))
		return gc_kerr(k, GC_EINVAL, "input 'y_zero_point' must be uint8 or int8, not %s",
			       gc_dtype_name(in[7]->dtype));
	imm_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->ia = 0;
	p->ias = 1;
	p->iaz = 2;
	p->ib = 3;
	p->ibs = 4;
	p->ibz = 5;
	p->iys = 6;
	p->iyz = 7;
	p->ibias = n->n_in > 8 && in[8] ? 8 : -1;
	const char *act = gc_attr_s(k, "_gc_activation", NULL);
	if (gc_kok(k))
		return gc_kok(k);
	if (act && strcmp(act, "Relu"))
		return gc_kerr(k, GC_EINVAL,
			       "attribute _gc_activation is \"%s\"; graphcc fuses only Relu into "
			       "QLinearMatMul", act);
	p->relu = act != NULL;
	if (prepare_imm(k, in, out, p, in[7]->dtype) || imm_choose(k, n, in, p))
		return gc_kok(k);
	if (p->ibias >= 0 && (in[8]->dtype != GC_DTYPE_INT32 || gc_tensor_numel(in[8]) != p->nn))
		return gc_kerr(k, GC_EINVAL,
			       "input 8 (graphcc's fused bias) must be int32 with %" PRId64 " values",
			       p->nn);
	n->run = run_qlmm;
	return 0;
}

/* ---- ConvInteger / QLinearConv -------------------------------------------- */

/*
 * A direct integer convolution over 1 to 3 spatial axes (viewed as 3, the
 * missing ones of size 1): groups, strides, dilations, pads or auto_pad.
 * Taps in the padding contribute nothing (the input is padded with its zero
 * point). w's zero point and QLinearConv's w_scale may be per output
 * channel.
 */
typedef struct iconv_plan {
	int64_t n, c, m, group;
	int64_t in[3], k[3], out[3], stride[3], dil[3], pad[3];
	bool requant;
	bool relu; /* _gc_activation "Relu" (fuse-qdq-conv): y clamped below at its zero point */
	int ix, ixz, iw, iwz, ixs, iws, iys, iyz, ib;
	gc_qconv fast; /* run_iconv_fast's */
} iconv_plan;

/* QLinearConv's x scale, y scale and y zero point (0 for ConvInteger). */
static void iconv_scales(const iconv_plan *p, gc_tensor *const *in, double *xs, double *ys,
			 float *yz)
{
	*xs = *ys = 0;
	*yz = 0;
	if (!p->requant)
		return;
	*xs = (float)gc_kv_load(in[p->ixs], 0);
	*ys = gc_kv_load(in[p->iys], 0);
	*yz = (float)ld8(in[p->iyz], 0);
}

static int run_iconv(gc_kctx *k, const gc_node *node, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const iconv_plan *p = node->state;
	const gc_tensor *x = in[p->ix], *w = in[p->iw];
	const gc_tensor *xz = p->ixz >= 0 ? in[p->ixz] : NULL,
			*wz = p->iwz >= 0 ? in[p->iwz] : NULL;
	const gc_tensor *bias = p->ib >= 0 ? in[p->ib] : NULL;
	int32_t zx = xz ? ld8(xz, 0) : 0;
	int64_t cg = p->c / p->group, mg = p->m / p->group;
	int64_t isz = p->in[0] * p->in[1] * p->in[2], ksz = p->k[0] * p->k[1] * p->k[2];
	int64_t osz = p->out[0] * p->out[1] * p->out[2];
	double xs, ys;
	float yz;
	iconv_scales(p, in, &xs, &ys, &yz);
	for (int64_t b = 0; b < p->n; b++)
		for (int64_t m = 0; m < p->m; m++) {
			int64_t g = m / mg;
			int32_t zw = wz ? ld8(wz, gc_tensor_numel(wz) > 1 ? m : 0) : 0;
			float scale = 0;
			if (p->requant) {
				const gc_tensor *ws = in[p->iws];
				scale = gc_qscale(
				    (float)xs, (float)gc_kv_load(ws, gc_tensor_numel(ws) > 1 ? m : 0), ys);
			}
			for (int64_t o0 = 0; o0 < p->out[0]; o0++)
				for (int64_t o1 = 0; o1 < p->out[1]; o1++)
					for (int64_t o2 = 0; o2 < p->out[2]; o2++) {
						int64_t acc =
						    bias ? ((const int32_t *)bias->data)[m] : 0;
						for (int64_t ci = 0; ci < cg; ci++) {
							int64_t c = g * cg + ci;
							int64_t xb = (b * p->c + c) * isz;
							int64_t wb = (m * cg + ci) * ksz;
							for (int64_t k0 = 0; k0 < p->k[0]; k0++) {
								int64_t i0 = o0 * p->stride[0] -
									     p->pad[0] +
									     k0 * p->dil[0];
								if (i0 < 0 || i0 >= p->in[0])
									continue;
								for (int64_t k1 = 0; k1 < p->k[1];
								     k1++) {
									int64_t i1 =
									    o1 * p->stride[1] -
									    p->pad[1] +
									    k1 * p->dil[1];
									if (i1 < 0 ||
									    i1 >= p->in[1])
										continue;
									for (int64_t k2 = 0;
									     k2 < p->k[2]; k2++) {
										int64_t i2 =
										    o2 * p->stride
											     [2] -
										    p->pad[2] +
										    k2 * p->dil[2];
										if (i2 < 0 ||
										    i2 >= p->in[2])
											continue;
										int64_t xv =
										    ld8(x,
											xb +
											    (i0 *
												 p->in
												     [1] +
											     i1) *
												p->in
												    [2] +
											    i2) -
										    zx;
										int64_t wv =
										    ld8(w,
											wb +
											    (k0 *
												 p->k[1] +
											     k1) *
												p->k[2] +
											    k2) -
										    zw;
										acc += xv * wv;
									}
								}
							}
						}
						int64_t oi = (b * p->m + m) * osz +
							     (o0 * p->out[1] + o1) * p->out[2] + o2;
						if (p->requant)
							st8q(out[0], oi, acc, scale, yz, p->relu);
						else
							((int32_t *)out[0]->data)[oi] =
							    (int32_t)acc;
					}
		}
	return 0;
}

/* run_iconv on the integer convolution (qconv.h). */
static int run_iconv_fast(gc_kctx *k, const gc_node *node, gc_tensor *const *in,
			  gc_tensor *const *out)
{
	const iconv_plan *p = node->state;
	const gc_tensor *xz = p->ixz >= 0 ? in[p->ixz] : NULL,
			*wz = p->iwz >= 0 ? in[p->iwz] : NULL;
	gc_qconv_args a = { .x = in[p->ix]->data, .w = in[p->iw]->data,
			    .zx = xz ? ld8(xz, 0) : 0, .zw = wz ? wz->data : NULL,
			    .zw_rows = wz && gc_tensor_numel(wz) > 1,
			    .bias = p->ib >= 0 ? in[p->ib]->data : NULL, .requant = p->requant,
			    .relu = p->relu, .y_unsigned = out[0]->dtype == GC_DTYPE_UINT8,
			    .y = out[0]->data };
	if (p->requant) {
		const gc_tensor *ws = in[p->iws];
		double xs;
		iconv_scales(p, in, &xs, &a.ys, &a.zy);
		a.xs = (float)xs;
		a.ws = ws->data;
		a.ws_rows = gc_tensor_numel(ws) > 1;
	}
	gc_qconv_run(&p->fast, &a, k->scratch, k->threads);
	return 0;
}

/* Chooses the integer convolution: the weights packed once (kept with the
 * node and in a .gcb) when they are a constant, else on each run. */
static int iconv_choose(gc_kctx *k, gc_node *n, gc_tensor *const *in, iconv_plan *p)
{
	gc_qconv *q = &p->fast;
	*q = (gc_qconv){ .n = p->n, .c = p->c, .m = p->m, .group = p->group,
			 .x_unsigned = in[p->ix]->dtype == GC_DTYPE_UINT8,
			 .w_unsigned = in[p->iw]->dtype == GC_DTYPE_UINT8,
			 .isa = gc_qgemm_isa_best() };
	for (int i = 0; i < 3; i++) {
		q->in[i] = p->in[i];
		q->k[i] = p->k[i];
		q->out[i] = p->out[i];
		q->stride[i] = p->stride[i];
		q->dil[i] = p->dil[i];
		q->pad[i] = p->pad[i];
	}
	gc_qconv_plan(q);
	char key[96];
	void *fill;
	gc_qconv_key(q, key, sizeof key);
	/* replaces: a .gcb keeps only the packed weights (gc_qconv_unpack) */
	q->wpack = gc_kpacked(k, n, in, p->iw, key, gc_qconv_w_bytes(q), true, &fill);
	if (gc_kok(k))
		return gc_kok(k);
	if (fill)
		gc_qconv_pack_w(q, in[p->iw]->data, fill);
	n->scratch_bytes = gc_qconv_scratch(q);
	n->run = run_iconv_fast;
	return 0;
}

static int prepare_iconv(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			 iconv_plan *p)
{
	const gc_tensor *x = in[p->ix], *w = in[p->iw];
	const char *auto_pad = gc_attr_s(k, "auto_pad", "NOTSET");
	const char *act = gc_attr_s(k, "_gc_activation", NULL);
	if (act && (strcmp(act, "Relu") || !p->requant))
		return gc_kerr(k, GC_EINVAL,
			       "attribute _gc_activation is \"%s\"; graphcc fuses only Relu into "
			       "QLinearConv",
			       act);
	p->relu = act != NULL;
	const int64_t *ks, *pads, *strides, *dils;
	int64_t nk = gc_attr_ints(k, "kernel_shape", &ks), np_ = gc_attr_ints(k, "pads", &pads);
	int64_t ns = gc_attr_ints(k, "strides", &strides), nd = gc_attr_ints(k, "dilations", &dils);
	int64_t group = gc_attr_i(k, "group", 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (!q8(x->dtype) || !q8(w->dtype))
		return gc_kerr(k, GC_EINVAL,
			       "inputs 'x' and 'w' must be uint8 or int8, not %s and %s",
			       gc_dtype_name(x->dtype), gc_dtype_name(w->dtype));
	int sp = x->rank - 2;
	if (sp < 1 || sp > 3 || w->rank != x->rank)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "needs x and w of rank 3 to 5 (1 to 3 spatial axes)");
	if ((nk && nk != sp) || (np_ && np_ != 2 * sp) || (ns && ns != sp) || (nd && nd != sp))
		return gc_kerr(k, GC_EINVAL,
			       "kernel_shape, pads, strides or dilations do not fit %d "
			       "spatial axes",
			       sp);
	if (group <= 0 || x->dims[1] % group || w->dims[0] % group ||
	    w->dims[1] * group != x->dims[1])
		return gc_kerr(k, GC_EINVAL,
			       "channels (x %" PRId64 ", w %" PRId64 "x%" PRId64
			       ") do not fit group %" PRId64,
			       x->dims[1], w->dims[0], w->dims[1], group);
	p->n = x->dims[0];
	p->c = x->dims[1];
	p->m = w->dims[0];
	p->group = group;
	int64_t odims[GC_MAX_RANK] = {p->n, p->m};
	for (int i = 0; i < 3; i++) {
		int s = i - (3 - sp); /* spatial index, negative for padding axes */
		bool real = s >= 0;
		p->in[i] = real ? x->dims[2 + s] : 1;
		p->k[i] = real ? w->dims[2 + s] : 1;
		p->stride[i] = real && ns ? strides[s] : 1;
		p->dil[i] = real && nd ? dils[s] : 1;
		int64_t pb = real && np_ ? pads[s] : 0, pe = real && np_ ? pads[sp + s] : 0;
		int64_t ek = (p->k[i] - 1) * p->dil[i] + 1;
		if (real && (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER"))) {
			int64_t o = (p->in[i] + p->stride[i] - 1) / p->stride[i];
			int64_t tot = (o - 1) * p->stride[i] + ek - p->in[i];
			tot = tot > 0 ? tot : 0;
			pb = auto_pad[5] == 'U' ? tot / 2 : tot - tot / 2;
			pe = tot - pb;
		} else if (real && !strcmp(auto_pad, "VALID")) {
			pb = pe = 0;
		}
		p->pad[i] = pb;
		p->out[i] = (p->in[i] + pb + pe - ek) / p->stride[i] + 1;
		if (p->out[i] <= 0 || p->stride[i] <= 0 || p->dil[i] <= 0)
			return gc_kerr(k, GC_EINVAL,
				       "spatial axis %d: no output (input %" PRId64
				       ", kernel %" PRId64 ")",
				       s, p->in[i], p->k[i]);
		if (real)
			odims[2 + s] = p->out[i];
	}
	if (p->ixz >= 0 && (gc_tensor_numel(in[p->ixz]) != 1 || in[p->ixz]->dtype != x->dtype))
		return gc_kerr(k, GC_EINVAL, "x's zero point must be one %s value",
			       gc_dtype_name(x->dtype));
	if (p->iwz >= 0 && (in[p->iwz]->dtype != w->dtype || (gc_tensor_numel(in[p->iwz]) != 1 &&
							      gc_tensor_numel(in[p->iwz]) != p->m)))
		return gc_kerr(k, GC_EINVAL,
			       "w's zero point must be %s with 1 or %" PRId64 " values",
			       gc_dtype_name(w->dtype), p->m);
	if (p->ib >= 0 &&
	    (in[p->ib]->dtype != GC_DTYPE_INT32 || gc_tensor_numel(in[p->ib]) != p->m))
		return gc_kerr(k, GC_EINVAL, "input 'B' must be int32 with %" PRId64 " values",
			       p->m);
	gc_set_shape(out[0], p->requant ? in[p->iyz]->dtype : GC_DTYPE_INT32, x->rank, odims);
	n->run = run_iconv;
	if (!gc_reference_kernels())
		return iconv_choose(k, n, in, p);
	return 0;
}

int gc_prepare_ConvInteger(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	iconv_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->ix = 0;
	p->iw = 1;
	p->ixz = n->n_in > 2 && in[2] ? 2 : -1;
	p->iwz = n->n_in > 3 && in[3] ? 3 : -1;
	p->ixs = p->iws = p->iys = p->iyz = p->ib = -1;
	return prepare_iconv(k, n, in, out, p);
}

int gc_prepare_QLinearConv(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const char *const names[] = {"x",       "x_scale",     "x_zero_point",
					    "w",       "w_scale",     "w_zero_point",
					    "y_scale", "y_zero_point"};
	for (int i = 0; i < 8; i++)
		if (!in[i])
			return gc_kerr(k, GC_EINVAL, "input '%s' is missing", names[i]);
	static const int scales[] = {1, 4, 6};
	for (int i = 0; i < 3; i++)
		if (in[scales[i]]->dtype != GC_DTYPE_FLOAT)
			return gc_kerr(k, GC_EINVAL, "input '%s' must be float32, not %s",
				       names[scales[i]], gc_dtype_name(in[scales[i]]->dtype));
	if (gc_tensor_numel(in[1]) != 1 || gc_tensor_numel(in[6]) != 1 ||
	    gc_tensor_numel(in[7]) != 1)
		return gc_kerr(k, GC_EINVAL,
			       "x_scale, y_scale and y_zero_point must hold one value");
	if (!q8(in[7]->dtype))
		return gc_kerr(k, GC_EINVAL, "input 'y_zero_point' must be uint8 or int8, not %s",
			       gc_dtype_name(in[7]->dtype));
	if (gc_tensor_numel(in[4]) != 1 && gc_tensor_numel(in[4]) != in[3]->dims[0])
		return gc_kerr(k, GC_EINVAL, "input 'w_scale' must hold 1 or M values");
	iconv_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->requant = true;
	p->ix = 0;
	p->ixs = 1;
	p->ixz = 2;
	p->iw = 3;
	p->iws = 4;
	p->iwz = 5;
	p->iys = 6;
	p->iyz = 7;
	p->ib = n->n_in > 8 && in[8] ? 8 : -1;
	return prepare_iconv(k, n, in, out, p);
}
