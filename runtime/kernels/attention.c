/* The LLM building blocks of opset 23: Attention (scaled dot-product
 * attention with masks, causal masking, grouped/multi-query heads and a KV
 * cache) and RotaryEmbedding. float32 kernels; float16 and bfloat16 run
 * through them (gc_nn_half_setup). */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../blas.h"
#include "kutil.h"
#include "nn-par.h"
#include "nn.h"
#include "vmath.h"

GC_NN_O3

/* ---- Attention ---- */

/* Rows of scores a part computes at once, and the threads with a scores
 * buffer of their own in scratch. */
#define ATT_ROWS 64
#define ATT_SLOTS 8

typedef struct att_state {
	gc_nn_base base;
	int64_t B, Hq, Hkv, S, L, P, T, D, Dv; /* batch, heads, q/kv/past/total lengths, head sizes */
	int in3d;			       /* Q, K, V, Y are (batch, seq, heads * size) */
	int causal, mode, qk_out, mask_bool;
	float scale, softcap;
	int64_t ms[4];	 /* attn_mask strides over (B, Hq, S, T); 0 where broadcast */
	uint64_t k_off, v_off; /* scratch: K and V of the total sequence when not outputs */
	uint64_t slot_off, slot_bytes;
} att_state;

typedef struct att_job {
	const att_state *st;
	const float *q, *kc, *vc, *mf;
	const bool *mb;
	float *y, *qk;
	char *slots;
	int64_t blocks; /* row blocks per (batch, head) */
} att_job;

GC_NN_SIMD static void att_softmax_row(float *r, int64_t n)
{
	float mx = gc_vm_max_f32(r, n);
	if (mx == -INFINITY) { /* every key masked: a zero row, as ONNX's errata says */
		memset(r, 0, (size_t)n * sizeof *r);
		return;
	}
	float sum = 0;
	for (int64_t i = 0; i < n; i++) {
		r[i] = gc_vm_expf_neg(r[i] - mx);
		sum += r[i];
	}
	float inv = 1.0f / sum;
	for (int64_t i = 0; i < n; i++) { /* no denormals (see norm.c's Softmax) */
		float v = r[i] * inv;
		r[i] = v < FLT_MIN ? 0.0f : v;
	}
}

/* Softcap, mask and causal frontier, softmax, on rows s0.. of one head.
 * Rows are T apart; only their first Te keys are live (the others are past
 * the causal frontier of every row here). */
GC_NN_SIMD static void att_rows(const att_job *j, int64_t b, int64_t h, int64_t s0, int64_t m,
				float *sc, int64_t Te)
{
	const att_state *st = j->st;
	int64_t T = Te;
	for (int64_t i = 0; i < m; i++) {
		float *r = sc + i * st->T;
		int64_t s = s0 + i;
		float *qk = j->qk ? j->qk + ((b * st->Hq + h) * st->S + s) * st->T : NULL;
		if (qk && st->mode == 0)
			memcpy(qk, r, (size_t)T * sizeof *r);
		if (st->softcap > 0) {
			float c = st->softcap, ic = 1.0f / st->softcap;
			for (int64_t t = 0; t < T; t++)
				r[t] = c * gc_vm_tanhf(r[t] * ic);
		}
		if (qk && st->mode == 1)
			memcpy(qk, r, (size_t)T * sizeof *r);
		int64_t mo = b * st->ms[0] + h * st->ms[1] + s * st->ms[2], mt = st->ms[3];
		if (j->mb) {
			for (int64_t t = 0; t < T; t++)
				r[t] = j->mb[mo + t * mt] ? r[t] : -INFINITY;
		} else if (j->mf) {
			for (int64_t t = 0; t < T; t++)
				r[t] += j->mf[mo + t * mt];
		}
		if (st->causal)
			for (int64_t t = s + st->P + 1; t < T; t++)
				r[t] = -INFINITY;
		if (qk && st->mode == 2)
			memcpy(qk, r, (size_t)T * sizeof *r);
		att_softmax_row(r, T);
		if (qk && st->mode == 3)
			memcpy(qk, r, (size_t)T * sizeof *r);
	}
}

static void att_part(void *arg, int part, int parts, int slot)
{
	const att_job *j = arg;
	const att_state *st = j->st;
	float *sc = (float *)(j->slots + (uint64_t)slot * st->slot_bytes);
	int64_t lo, hi, group = st->Hq / st->Hkv;
	gc_nn_part_range(st->B * st->Hq * j->blocks, part, parts, &lo, &hi);
	for (int64_t it = lo; it < hi; it++) {
		int64_t bh = it / j->blocks, s0 = it % j->blocks * ATT_ROWS;
		int64_t b = bh / st->Hq, h = bh % st->Hq, hk = h / group;
		int64_t m = st->S - s0 < ATT_ROWS ? st->S - s0 : ATT_ROWS;
		const float *q, *kc = j->kc + (b * st->Hkv + hk) * st->T * st->D;
		const float *vc = j->vc + (b * st->Hkv + hk) * st->T * st->Dv;
		float *y;
		int64_t ldq, ldy;
		if (st->in3d) {
			ldq = st->Hq * st->D;
			ldy = st->Hq * st->Dv;
			q = j->q + (b * st->S + s0) * ldq + h * st->D;
			y = j->y + (b * st->S + s0) * ldy + h * st->Dv;
		} else {
			ldq = st->D;
			ldy = st->Dv;
			q = j->q + (bh * st->S + s0) * ldq;
			y = j->y + (bh * st->S + s0) * ldy;
		}
		/* causal: keys past the block's last row are masked for all of it
		 * (the qk output wants every score, so it keeps them) */
		int64_t Te = st->T;
		if (st->causal && !j->qk && s0 + m + st->P < Te)
			Te = s0 + m + st->P;
		gc_sgemm(false, true, (int)m, (int)Te, (int)st->D, st->scale, q, (int)ldq, kc,
			 (int)st->D, 0.0f, sc, (int)st->T);
		att_rows(j, b, h, s0, m, sc, Te);
		gc_sgemm(false, false, (int)m, (int)st->Dv, (int)Te, 1.0f, sc, (int)st->T, vc,
			 (int)st->Dv, 0.0f, y, (int)ldy);
	}
}

/* Writes past (B, H, P, E) then new (3-D: (B, L, H*E); 4-D: (B, H, L, E))
 * as (B, H, P + L, E) into cat. */
static void att_concat(const att_state *st, int64_t H, int64_t E, const float *past,
		       const float *cur, float *cat)
{
	int64_t P = st->P, L = st->L, T = st->T;
	for (int64_t b = 0; b < st->B; b++)
		for (int64_t h = 0; h < H; h++) {
			float *dst = cat + (b * H + h) * T * E;
			if (P)
				memcpy(dst, past + (b * H + h) * P * E, (size_t)(P * E) * sizeof *dst);
			dst += P * E;
			if (!st->in3d) {
				memcpy(dst, cur + (b * H + h) * L * E, (size_t)(L * E) * sizeof *dst);
				continue;
			}
			for (int64_t l = 0; l < L; l++)
				memcpy(dst + l * E, cur + (b * L + l) * H * E + h * E,
				       (size_t)E * sizeof *dst);
		}
}

static int att_run_f32(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const att_state *st = n->state;
	char *s = k->scratch;
	float *kc = gc_nn_has_out(n, out, 1) ? out[1]->data : (float *)(s + st->k_off);
	float *vc = gc_nn_has_out(n, out, 2) ? out[2]->data : (float *)(s + st->v_off);
	const float *pk = n->n_in > 4 && in[4] ? in[4]->data : NULL;
	const float *pv = n->n_in > 5 && in[5] ? in[5]->data : NULL;
	att_concat(st, st->Hkv, st->D, pk, in[1]->data, kc);
	att_concat(st, st->Hkv, st->Dv, pv, in[2]->data, vc);
	const gc_tensor *mask = n->n_in > 3 ? in[3] : NULL;
	att_job j = {st,
		     in[0]->data,
		     kc,
		     vc,
		     mask && !st->mask_bool ? mask->data : NULL,
		     mask && st->mask_bool ? mask->data : NULL,
		     out[0]->data,
		     st->qk_out ? out[3]->data : NULL,
		     s + st->slot_off,
		     (st->S + ATT_ROWS - 1) / ATT_ROWS};
	int64_t items = st->B * st->Hq * j.blocks;
	double cycles = 2.0 * (double)(st->B * st->Hq * st->S) * (double)st->T *
			(double)(st->D + st->Dv + 8);
	int t = gc_nn_par_threads(k->threads < ATT_SLOTS ? k->threads : ATT_SLOTS, cycles);
	if (items == 0 || st->T == 0) {
		/* no keys: every row is fully masked, so zero */
		if (gc_tensor_numel(out[0]) > 0)
			memset(out[0]->data, 0, (size_t)gc_tensor_numel(out[0]) * sizeof(float));
		if (j.qk && gc_tensor_numel(out[3]) > 0)
			memset(j.qk, 0, (size_t)gc_tensor_numel(out[3]) * sizeof(float));
		return 0;
	}
	gc_nn_run_parts(t, items, att_part, &j);
	return 0;
}

/* Reads Q, K, V's layout into st: 4-D (B, H, seq, size) or 3-D (B, seq,
 * H * size) with the head counts from the attributes. */
static int att_layout(gc_kctx *k, att_state *st, const gc_tensor *q, const gc_tensor *kk,
		      const gc_tensor *v)
{
	char s1[96], s2[96], s3[96];
	int64_t qh = gc_attr_i(k, "q_num_heads", 0), kvh = gc_attr_i(k, "kv_num_heads", 0);
	if (gc_kok(k))
		return gc_kok(k);
	int r = q->rank;
	if ((r != 3 && r != 4) || kk->rank != r || v->rank != r)
		return gc_kerr(k, GC_EINVAL,
			       "Q %s, K %s and V %s must all be 3-D (batch, sequence, hidden) or "
			       "all 4-D (batch, heads, sequence, head size)",
			       gc_shape_str(q->dims, q->rank, s1, sizeof s1),
			       gc_shape_str(kk->dims, kk->rank, s2, sizeof s2),
			       gc_shape_str(v->dims, v->rank, s3, sizeof s3));
	st->B = q->dims[0];
	if (kk->dims[0] != st->B || v->dims[0] != st->B)
		return gc_kerr(k, GC_EINVAL, "Q, K and V must have the same batch size (%" PRId64
			       ", %" PRId64 ", %" PRId64 ")", q->dims[0], kk->dims[0], v->dims[0]);
	if (r == 4) {
		st->Hq = q->dims[1];
		st->Hkv = kk->dims[1];
		st->S = q->dims[2];
		st->L = kk->dims[2];
		st->D = q->dims[3];
		st->Dv = v->dims[3];
		if (v->dims[1] != st->Hkv || v->dims[2] != st->L || kk->dims[3] != st->D)
			return gc_kerr(k, GC_EINVAL,
				       "K %s and V %s must have the same heads and sequence "
				       "length, and K Q's head size %" PRId64,
				       gc_shape_str(kk->dims, 4, s2, sizeof s2),
				       gc_shape_str(v->dims, 4, s3, sizeof s3), st->D);
		return 0;
	}
	st->in3d = 1;
	if (qh <= 0 || kvh <= 0)
		return gc_kerr(k, GC_EINVAL,
			       "3-D Q, K and V need attributes q_num_heads and kv_num_heads "
			       "(positive; got %" PRId64 " and %" PRId64 ")", qh, kvh);
	st->Hq = qh;
	st->Hkv = kvh;
	st->S = q->dims[1];
	st->L = kk->dims[1];
	if (q->dims[2] % qh || kk->dims[2] % kvh || v->dims[2] % kvh || v->dims[1] != st->L)
		return gc_kerr(k, GC_EINVAL,
			       "Q %s, K %s, V %s do not split into q_num_heads %" PRId64
			       " and kv_num_heads %" PRId64 " heads of one sequence length",
			       gc_shape_str(q->dims, 3, s1, sizeof s1),
			       gc_shape_str(kk->dims, 3, s2, sizeof s2),
			       gc_shape_str(v->dims, 3, s3, sizeof s3), qh, kvh);
	st->D = q->dims[2] / qh;
	st->Dv = v->dims[2] / kvh;
	if (kk->dims[2] / kvh != st->D)
		return gc_kerr(k, GC_EINVAL,
			       "K's head size %" PRId64 " differs from Q's %" PRId64,
			       kk->dims[2] / kvh, st->D);
	return 0;
}

/* past_key (B, Hkv, P, D) and past_value (B, Hkv, P, Dv): both or neither. */
static int att_past(gc_kctx *k, att_state *st, const gc_tensor *pk, const gc_tensor *pv)
{
	char s1[96], s2[96];
	if (!pk && !pv)
		return 0;
	if (!pk || !pv)
		return gc_kerr(k, GC_EINVAL, "past_key and past_value must be given together");
	st->P = pk->rank == 4 ? pk->dims[2] : -1;
	int64_t want_k[4] = {st->B, st->Hkv, st->P, st->D}, want_v[4] = {st->B, st->Hkv, st->P, st->Dv};
	if (pk->rank != 4 || pv->rank != 4 || memcmp(pk->dims, want_k, sizeof want_k) ||
	    memcmp(pv->dims, want_v, sizeof want_v))
		return gc_kerr(k, GC_EINVAL,
			       "past_key %s and past_value %s must be (batch %" PRId64
			       ", kv heads %" PRId64 ", past length, head size %" PRId64 " / %" PRId64
			       ")",
			       gc_shape_str(pk->dims, pk->rank, s1, sizeof s1),
			       gc_shape_str(pv->dims, pv->rank, s2, sizeof s2), st->B, st->Hkv,
			       st->D, st->Dv);
	return 0;
}

/* attn_mask: bool, or Q's float type; broadcast to (B, Hq, S, T). */
static int att_mask(gc_kctx *k, att_state *st, const gc_tensor *m, gc_dtype qt)
{
	char s1[96];
	if (!m)
		return 0;
	if (m->dtype != GC_DTYPE_BOOL && m->dtype != qt)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attn_mask has type %s; graphcc takes a bool mask or one of Q's "
			       "type (%s), as ONNX Runtime does",
			       gc_dtype_name(m->dtype), gc_dtype_name(qt));
	st->mask_bool = m->dtype == GC_DTYPE_BOOL;
	int64_t full[4] = {st->B, st->Hq, st->S, st->T}, stride = 1;
	if (m->rank > 4)
		return gc_kerr(k, GC_EINVAL, "attn_mask has rank %d; at most 4", m->rank);
	for (int d = 3; d >= 0; d--) {
		int md = d - (4 - m->rank);
		int64_t dim = md >= 0 ? m->dims[md] : 1;
		if (dim != 1 && dim != full[d])
			return gc_kerr(k, GC_EINVAL,
				       "attn_mask %s does not broadcast to (batch %" PRId64
				       ", q heads %" PRId64 ", q length %" PRId64
				       ", total length %" PRId64 ")",
				       gc_shape_str(m->dims, m->rank, s1, sizeof s1), full[0],
				       full[1], full[2], full[3]);
		st->ms[d] = dim == 1 ? 0 : stride;
		stride *= dim;
	}
	return 0;
}

static int att_attrs(gc_kctx *k, att_state *st)
{
	st->causal = gc_attr_i(k, "is_causal", 0) != 0;
	st->mode = (int)gc_attr_i(k, "qk_matmul_output_mode", 0);
	st->softcap = gc_attr_f(k, "softcap", 0.0f);
	int64_t prec = gc_attr_i(k, "softmax_precision", GC_DTYPE_FLOAT);
	st->scale = gc_attr_find(k->node, "scale") ? gc_attr_f(k, "scale", 1.0f)
						   : (float)(1.0 / sqrt((double)(st->D ? st->D : 1)));
	if (gc_kok(k))
		return gc_kok(k);
	if (st->mode < 0 || st->mode > 3)
		return gc_kerr(k, GC_EINVAL, "attribute qk_matmul_output_mode = %d; expected 0..3",
			       st->mode);
	if (prec != GC_DTYPE_FLOAT && prec != GC_DTYPE_FLOAT16 && prec != GC_DTYPE_BFLOAT16 &&
	    prec != GC_DTYPE_DOUBLE)
		return gc_kerr(k, GC_EINVAL,
			       "attribute softmax_precision = %" PRId64
			       "; expected a float type (1, 10, 11 or 16)",
			       prec);
	if (!(st->softcap >= 0))
		return gc_kerr(k, GC_EINVAL, "attribute softcap = %g; must be >= 0",
			       (double)st->softcap);
	return 0;
}

int gc_prepare_Attention(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *q = in[0], *kk = in[1], *v = in[2];
	const gc_tensor *mask = n->n_in > 3 ? in[3] : NULL;
	const gc_tensor *pk = n->n_in > 4 ? in[4] : NULL, *pv = n->n_in > 5 ? in[5] : NULL;
	gc_dtype dt = q->dtype;
	if (dt != GC_DTYPE_FLOAT && !gc_nn_is_half(dt))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "Q has type %s; graphcc's Attention takes float32, float16 and "
			       "bfloat16 (float64: not supported)",
			       gc_dtype_name(dt));
	if (kk->dtype != dt || v->dtype != dt || (pk && pk->dtype != dt) || (pv && pv->dtype != dt))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "Q, K, V, past_key and past_value must have one type (Q is %s, K %s, "
			       "V %s)",
			       gc_dtype_name(dt), gc_dtype_name(kk->dtype), gc_dtype_name(v->dtype));
	att_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	if (att_layout(k, st, q, kk, v) || att_past(k, st, pk, pv))
		return gc_kok(k);
	if (st->Hkv <= 0 || st->Hq % st->Hkv)
		return gc_kerr(k, GC_EINVAL,
			       "q heads (%" PRId64 ") must be a multiple of kv heads (%" PRId64 ")",
			       st->Hq, st->Hkv);
	st->T = st->P + st->L;
	if (att_attrs(k, st) || att_mask(k, st, mask, dt))
		return gc_kok(k);
	gc_error be = {0};
	if (gc_blas_init(&be))
		return gc_kerr(k, be.code, "%s", be.msg);
	bool pres_k = gc_nn_has_out(n, out, 1), pres_v = gc_nn_has_out(n, out, 2);
	if (st->in3d) {
		int64_t yd[3] = {st->B, st->S, st->Hq * st->Dv};
		gc_set_shape(out[0], dt, 3, yd);
	} else {
		int64_t yd[4] = {st->B, st->Hq, st->S, st->Dv};
		gc_set_shape(out[0], dt, 4, yd);
	}
	int64_t kd[4] = {st->B, st->Hkv, st->T, st->D}, vd[4] = {st->B, st->Hkv, st->T, st->Dv};
	int64_t qd[4] = {st->B, st->Hq, st->S, st->T};
	if (pres_k)
		gc_set_shape(out[1], dt, 4, kd);
	if (pres_v)
		gc_set_shape(out[2], dt, 4, vd);
	if (gc_nn_has_out(n, out, 3)) {
		st->qk_out = 1;
		gc_set_shape(out[3], dt, 4, qd);
	}
	st->k_off = 0;
	st->v_off = pres_k ? 0 : gc_nn_align((uint64_t)(st->B * st->Hkv * st->T * st->D) * 4);
	st->slot_off =
		st->v_off + (pres_v ? 0 : gc_nn_align((uint64_t)(st->B * st->Hkv * st->T * st->Dv) * 4));
	st->slot_bytes = gc_nn_align((uint64_t)ATT_ROWS * (uint64_t)st->T * 4);
	uint64_t scratch = st->slot_off + ATT_SLOTS * st->slot_bytes;
	if (gc_nn_is_half(dt))
		return gc_nn_half_setup(k, n, in, out, att_run_f32, scratch);
	n->scratch_bytes = scratch;
	n->run = att_run_f32;
	return 0;
}

/* ---- RotaryEmbedding ---- */

typedef struct rope_state {
	gc_nn_base base;
	int64_t B, S, H, D, R; /* batch, sequence, heads, head size, rotated dims */
	int in3d, interleaved, has_pos;
	int64_t max_pos; /* rows of cos/sin when indexed by position_ids */
} rope_state;

typedef struct rope_job {
	const rope_state *st;
	const float *x, *cs, *sn;
	const int64_t *pos;
	float *y;
} rope_job;

GC_NN_SIMD static void rope_head(const rope_state *st, const float *x, const float *c,
				 const float *s, float *y)
{
	int64_t half = st->R / 2;
	if (st->interleaved) {
		for (int64_t i = 0; i < half; i++) {
			float a = x[2 * i], b = x[2 * i + 1];
			y[2 * i] = c[i] * a - s[i] * b;
			y[2 * i + 1] = s[i] * a + c[i] * b;
		}
	} else {
		for (int64_t i = 0; i < half; i++) {
			float a = x[i], b = x[i + half];
			y[i] = c[i] * a - s[i] * b;
			y[i + half] = s[i] * a + c[i] * b;
		}
	}
	for (int64_t i = st->R; i < st->D; i++)
		y[i] = x[i];
}

static void rope_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const rope_job *j = arg;
	const rope_state *st = j->st;
	int64_t lo, hi, half = st->R / 2;
	gc_nn_part_range(st->B * st->S, part, parts, &lo, &hi);
	for (int64_t bs = lo; bs < hi; bs++) {
		int64_t b = bs / st->S, s = bs % st->S, row = bs;
		if (j->pos)
			row = j->pos[bs]; /* checked by rope_run_f32 */
		const float *c = j->cs + row * half, *sn = j->sn + row * half;
		for (int64_t h = 0; h < st->H; h++) {
			int64_t off = st->in3d ? (bs * st->H + h) * st->D
					       : ((b * st->H + h) * st->S + s) * st->D;
			rope_head(st, j->x + off, c, sn, j->y + off);
		}
	}
}

static int rope_run_f32(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const rope_state *st = n->state;
	rope_job j = {st, in[0]->data, in[1]->data, in[2]->data,
		      st->has_pos ? in[3]->data : NULL, out[0]->data};
	int64_t rows = st->B * st->S;
	for (int64_t i = 0; j.pos && i < rows; i++)
		if (j.pos[i] < 0 || j.pos[i] >= st->max_pos)
			return gc_kerr(k, GC_EINVAL,
				       "position_ids[%" PRId64 "] = %" PRId64
				       "; cos_cache has %" PRId64 " positions",
				       i, j.pos[i], st->max_pos);
	gc_nn_run_parts(gc_nn_par_threads(k->threads, (double)(rows * st->H * st->D)), rows,
			rope_part, &j);
	return 0;
}

static int rope_caches(gc_kctx *k, rope_state *st, const gc_tensor *cs, const gc_tensor *sn,
		       const gc_tensor *pos)
{
	char s1[96], s2[96];
	int64_t half = st->R / 2;
	if (pos) {
		int64_t pd[2] = {st->B, st->S};
		if (pos->dtype != GC_DTYPE_INT64 || pos->rank != 2 || memcmp(pos->dims, pd, sizeof pd))
			return gc_kerr(k, GC_EINVAL,
				       "position_ids (%s %s) must be int64 (batch %" PRId64
				       ", sequence %" PRId64 ")",
				       gc_dtype_name(pos->dtype),
				       gc_shape_str(pos->dims, pos->rank, s1, sizeof s1), st->B,
				       st->S);
		st->has_pos = 1;
		st->max_pos = cs->rank == 2 ? cs->dims[0] : 0;
	}
	int ok = gc_same_shape(cs, sn) && cs->rank == (pos ? 2 : 3) &&
		 cs->dims[cs->rank - 1] == half;
	if (ok && !pos)
		ok = cs->dims[0] == st->B && cs->dims[1] == st->S;
	if (!ok)
		return gc_kerr(k, GC_EINVAL,
			       "cos_cache %s and sin_cache %s must be %s with last dim %" PRId64
			       " (rotary dims / 2)",
			       gc_shape_str(cs->dims, cs->rank, s1, sizeof s1),
			       gc_shape_str(sn->dims, sn->rank, s2, sizeof s2),
			       pos ? "(max position + 1, *), as position_ids are given"
				   : "(batch, sequence, *), as there are no position_ids",
			       half);
	return 0;
}

int gc_prepare_RotaryEmbedding(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			       gc_tensor *const *out)
{
	char s1[96];
	const gc_tensor *x = in[0], *cs = in[1], *sn = in[2];
	const gc_tensor *pos = n->n_in > 3 ? in[3] : NULL;
	int64_t heads = gc_attr_i(k, "num_heads", 0), rdim = gc_attr_i(k, "rotary_embedding_dim", 0);
	int interleaved = gc_attr_i(k, "interleaved", 0) != 0;
	if (gc_kok(k))
		return gc_kok(k);
	if (x->dtype != GC_DTYPE_FLOAT && !gc_nn_is_half(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "X has type %s; expected float32, float16 or bfloat16",
			       gc_dtype_name(x->dtype));
	if (cs->dtype != x->dtype || sn->dtype != x->dtype)
		return gc_kerr(k, GC_EINVAL, "cos_cache and sin_cache must have X's type (%s)",
			       gc_dtype_name(x->dtype));
	rope_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->interleaved = interleaved;
	if (x->rank == 4) {
		st->B = x->dims[0];
		st->H = x->dims[1];
		st->S = x->dims[2];
		st->D = x->dims[3];
	} else if (x->rank == 3) {
		if (heads <= 0 || x->dims[2] % heads)
			return gc_kerr(k, GC_EINVAL,
				       "3-D X %s needs attribute num_heads dividing its hidden size "
				       "(got %" PRId64 ")",
				       gc_shape_str(x->dims, 3, s1, sizeof s1), heads);
		st->in3d = 1;
		st->B = x->dims[0];
		st->S = x->dims[1];
		st->H = heads;
		st->D = x->dims[2] / heads;
	} else {
		return gc_kerr(k, GC_EINVAL, "X %s must be 3-D or 4-D",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	}
	st->R = rdim ? rdim : st->D;
	if (st->R < 0 || st->R > st->D || st->R % 2)
		return gc_kerr(k, GC_EINVAL,
			       "rotary_embedding_dim %" PRId64 " must be even and at most the head "
			       "size %" PRId64,
			       st->R, st->D);
	if (rope_caches(k, st, cs, sn, pos))
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, rope_run_f32, 0);
	n->run = rope_run_f32;
	return 0;
}
