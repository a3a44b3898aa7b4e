/*
 * com.graphcc::QLinearAdd: the 8-bit Add of QDQ models (lib/pass-qdq-elem.c
 * makes it from DequantizeLinear, DequantizeLinear -> Add -> QuantizeLinear),
 * with ONNX Runtime's com.microsoft::QLinearAdd inputs (A, A_scale,
 * A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point; scales
 * float32 scalars, zero points one value of their tensor's type, uint8 or
 * int8 each) and ONNX broadcasting. Each element is what the float nodes
 * compute, operation by operation in float32:
 *
 *   c = saturate(rint(((A - za) * sa + (B - zb) * sb) / sc) + zc)
 *
 * so the fused graph gives the unfused one's bytes. graphcc's attribute
 * _gc_activation "Relu" with inputs 8 and 9 (R_scale, R_zero_point) adds the
 * DequantizeLinear(C) -> Relu -> QuantizeLinear(R) that ResNet-style blocks
 * put after the Add: r = saturate(rint(max((c - zc) * sc, 0) / sr) + zr),
 * written instead of c. With AVX-512 VBMI that tail is a 256-byte table of
 * c's values (qadd512_lut): one division an element, not two. When every
 * scale and zero point is a constant, the AVX-512 loops divide with a
 * multiply by the reciprocal and one FMA correction step instead
 * (qadd_div16), 64 elements an iteration (qadd512_fast), once prepare has
 * checked on all 65536 byte pairs that this gives the division's bytes
 * (qadd_recip_ok). (A 64 KiB table of the pairs, gathered from, was faster
 * than the division on Intel but slower on AMD Zen 4, whose gathers are
 * slow; this has no gather or division, and on Zen 4 takes less than half
 * the table's time.)
 */
#include "elementwise-impl.h"
#include "lanes.h"

#include <math.h>
#include <string.h>

#include "../fileio.h" /* gc_reference_kernels */
#include "../ops.h"
#include "nn.h"

typedef struct qadd_arg {
	float za, sa, zb, sb, sc, zc, lo, hi; /* lo, hi: c's type's range */
	bool relu;
	float sr, zr, rlo, rhi; /* the Relu's QuantizeLinear */
	bool recip;		/* divide as qadd_div16: by rc = 1 / sc, rr = 1 / sr */
	float rc, rr;
} qadd_arg;

/* One element; no contraction (a multiply-add would round differently from
 * the separate nodes), rint rounding half to even as QuantizeLinear's. */
#define QADD_ONE(a, b, p, out)                                                                     \
	do {                                                                                       \
		float s_ = ((float)(a) - (p)->za) * (p)->sa + ((float)(b) - (p)->zb) * (p)->sb;   \
		float c_ = rintf(s_ / (p)->sc) + (p)->zc;                                          \
		c_ = c_ > (p)->lo ? c_ : (p)->lo;                                                  \
		c_ = c_ < (p)->hi ? c_ : (p)->hi;                                                  \
		if ((p)->relu) {                                                                   \
			float t_ = (c_ - (p)->zc) * (p)->sc;                                       \
			t_ = t_ < 0 ? 0.0f : t_;                                                   \
			c_ = rintf(t_ / (p)->sr) + (p)->zr;                                        \
			c_ = c_ > (p)->rlo ? c_ : (p)->rlo;                                        \
			c_ = c_ < (p)->rhi ? c_ : (p)->rhi;                                        \
		}                                                                                  \
		(out) = (int32_t)c_;                                                               \
	} while (0)

#define QADD_DEFINE(TA, TB, TC, sfx)                                                               \
	__attribute__((optimize("fp-contract=off"))) GC_NN_SIMD static void qadd_##sfx(           \
	    int64_t n, const void *const *in, const int64_t *inc, void *out, const void *arg)     \
	{                                                                                          \
		const qadd_arg *p = arg;                                                           \
		const TA *a = in[0];                                                               \
		const TB *b = in[1];                                                               \
		TC *c = out;                                                                       \
		int32_t v;                                                                         \
		if (inc[0] && inc[1]) {                                                            \
			for (int64_t i = 0; i < n; i++) {                                          \
				QADD_ONE(a[i], b[i], p, v);                                        \
				c[i] = (TC)v;                                                      \
			}                                                                          \
			return;                                                                    \
		}                                                                                  \
		for (int64_t i = 0; i < n; i++) {                                                  \
			QADD_ONE(a[i * inc[0]], b[i * inc[1]], p, v);                              \
			c[i] = (TC)v;                                                              \
		}                                                                                  \
	}

QADD_DEFINE(uint8_t, uint8_t, uint8_t, uuu)
QADD_DEFINE(uint8_t, uint8_t, int8_t, uus)
QADD_DEFINE(uint8_t, int8_t, uint8_t, usu)
QADD_DEFINE(uint8_t, int8_t, int8_t, uss)
QADD_DEFINE(int8_t, uint8_t, uint8_t, suu)
QADD_DEFINE(int8_t, uint8_t, int8_t, sus)
QADD_DEFINE(int8_t, int8_t, uint8_t, ssu)
QADD_DEFINE(int8_t, int8_t, int8_t, sss)

/* Indexed by A, B, C (the output) signed (1) or unsigned (0). */
static const gc_ew_fn qadd_fns[8] = { qadd_uuu, qadd_uus, qadd_usu, qadd_uss,
				      qadd_suu, qadd_sus, qadd_ssu, qadd_sss };

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define T512 __attribute__((target("avx512f,avx512bw,avx512vl"), optimize("fp-contract=off")))

/* 16 bytes (or a broadcast one) as floats. */
T512 static inline __m512 ld16(const void *p, int64_t i, int64_t inc, bool sgn, __mmask16 m)
{
	if (!inc) {
		int32_t v = sgn ? ((const int8_t *)p)[0] : ((const uint8_t *)p)[0];
		return _mm512_set1_ps((float)v);
	}
	__m128i b = _mm_maskz_loadu_epi8(m, (const char *)p + i);
	return _mm512_cvtepi32_ps(sgn ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b));
}

#define TVBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"), optimize("fp-contract=off")))

/* x / d of 16 lanes, rounded as the division, from rd = 1 / d (itself
 * rounded): q0 = x * rd is within about an ulp of x / d, the FMA gives its
 * remainder x - q0 * d exactly, and q0 + remainder * rd rounds to x / d
 * (Markstein's theorem; the caller has checked it on every value it meets).
 * 3 multiply-adds where a 16-lane division takes 5 to 10 cycles' throughput
 * on AMD Zen 4 and Intel alike. */
T512 static inline __m512 qadd_div16(__m512 x, __m512 d, __m512 rd, bool recip)
{
	if (!recip)
		return _mm512_div_ps(x, d);
	__m512 q = _mm512_mul_ps(x, rd);
	return _mm512_fmadd_ps(_mm512_fnmadd_ps(q, d, x), rd, q);
}

/* c = saturate(rint(s / sc) + zc) of 16 lanes, as QADD_ONE. */
T512 static inline __m512 qadd_c16(const void *a, const void *b, int64_t i, const int64_t *inc,
				   const qadd_arg *p, bool sa_, bool sb_, __mmask16 m)
{
	__m512 fa = _mm512_mul_ps(_mm512_sub_ps(ld16(a, i, inc[0], sa_, m), _mm512_set1_ps(p->za)),
				  _mm512_set1_ps(p->sa));
	__m512 fb = _mm512_mul_ps(_mm512_sub_ps(ld16(b, i, inc[1], sb_, m), _mm512_set1_ps(p->zb)),
				  _mm512_set1_ps(p->sb));
	__m512 v = _mm512_roundscale_ps(qadd_div16(_mm512_add_ps(fa, fb), _mm512_set1_ps(p->sc),
						   _mm512_set1_ps(p->rc), p->recip),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	v = _mm512_add_ps(v, _mm512_set1_ps(p->zc));
	return _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(p->lo)), _mm512_set1_ps(p->hi));
}

/* The Relu's requantization of c's 16 values (floats in [lo, hi]), as
 * QADD_ONE, as the int32 bytes. */
T512 static inline __m512i qadd_r16(__m512 v, const qadd_arg *p)
{
	__m512 t = _mm512_max_ps(_mm512_mul_ps(_mm512_sub_ps(v, _mm512_set1_ps(p->zc)),
					       _mm512_set1_ps(p->sc)),
				 _mm512_setzero_ps());
	v = _mm512_roundscale_ps(qadd_div16(t, _mm512_set1_ps(p->sr), _mm512_set1_ps(p->rr), p->recip),
				 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	v = _mm512_add_ps(v, _mm512_set1_ps(p->zr));
	v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(p->rlo)), _mm512_set1_ps(p->rhi));
	return _mm512_cvtps_epi32(v);
}

/* QADD_ONE 16 lanes at a time: each operation the scalar one (IEEE, round
 * to nearest even), so the bytes are the same. */
T512 static void qadd512(int64_t n, const void *a, const void *b, const int64_t *inc, void *c,
			 const qadd_arg *p, bool sa_, bool sb_)
{
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
		__m512 v = qadd_c16(a, b, i, inc, p, sa_, sb_, m);
		__m512i q = p->relu ? qadd_r16(v, p) : _mm512_cvtps_epi32(v);
		_mm512_mask_cvtepi32_storeu_epi8((char *)c + i, m, q);
	}
}

/* qadd512 with the Relu: its requantization depends on c alone, one of the
 * 256 integers [lo, hi], so it is a table of their qadd_r16 bytes (qadd_lut,
 * once a run), looked up with two two-register byte permutes (c - lo's low 7 bits) and a
 * blend on its 8th bit: no second division. */
T512 static void qadd_lut(const qadd_arg *p, uint8_t lut[256])
{
	for (int k = 0; k < 256; k += 16) {
		__m512i i = _mm512_add_epi32(_mm512_set1_epi32(k), _mm512_set_epi32(15, 14, 13, 12, 11, 10,
										   9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
		__m512 v = _mm512_add_ps(_mm512_set1_ps(p->lo), _mm512_cvtepi32_ps(i));
		_mm_storeu_si128((__m128i *)(lut + k), _mm512_cvtepi32_epi8(qadd_r16(v, p)));
	}
}

TVBMI static void qadd512_lut(int64_t n, const void *a, const void *b, const int64_t *inc, void *c,
			      const qadd_arg *p, bool sa_, bool sb_, const uint8_t lut[256])
{
	const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
	const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
	const __m512i lo = _mm512_set1_epi32((int32_t)p->lo);
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = n - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (n - i)) - 1);
		/* c - lo in [0, 255]: each int32 lane's low byte the index */
		__m512i x = _mm512_sub_epi32(_mm512_cvtps_epi32(qadd_c16(a, b, i, inc, p, sa_, sb_, m)), lo);
		__m512i r = _mm512_mask_blend_epi8(_mm512_movepi8_mask(x),
						   _mm512_permutex2var_epi8(t0, x, t1),
						   _mm512_permutex2var_epi8(t2, x, t3));
		_mm512_mask_cvtepi32_storeu_epi8((char *)c + i, m, r);
	}
}

/* 16 bytes from p + i under mask m, or the broadcast one (inc 0), as int32. */
T512 static inline __m512i ld16i(const void *p, int64_t i, int64_t inc, bool sgn, __mmask16 m)
{
	__m128i b = inc ? _mm_maskz_loadu_epi8(m, (const char *)p + i)
			: _mm_set1_epi8(*(const char *)p);
	return sgn ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
}

/* The run's constants of qadd_fast, broadcast once. */
typedef struct qadd_vk {
	__m512 za, sa, zb, sb, sc, rc;
	__m512i zc;
} qadd_vk;

/* rint(s / sc) + zc of 16 lanes as int32: QADD_ONE's c before its clamp,
 * rounding half to even as roundscale does; a quotient too large for an
 * int32 comes out wrong, which qadd_recip_ok sees. */
T512 static inline __m512i qadd_q16(const void *a, const void *b, int64_t i, const int64_t *inc,
				    bool sa_, bool sb_, __mmask16 m, const qadd_vk *k)
{
	__m512 fa = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(ld16i(a, i, inc[0], sa_, m)), k->za),
				  k->sa);
	__m512 fb = _mm512_mul_ps(_mm512_sub_ps(_mm512_cvtepi32_ps(ld16i(b, i, inc[1], sb_, m)), k->zb),
				  k->sb);
	__m512 q = qadd_div16(_mm512_add_ps(fa, fb), k->sc, k->rc, true);
	return _mm512_add_epi32(_mm512_cvt_roundps_epi32(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
				k->zc);
}

/* c of the 64 elements from i (mask m) as bytes of C's type: qadd_q16's
 * int32 lanes packed with signed saturation, which is the clamp to C's type. */
T512 static inline __m512i qadd_c64(const void *a, const void *b, int64_t i, const int64_t *inc,
				    bool sa_, bool sb_, __mmask64 m, bool c_signed, const qadd_vk *k)
{
	/* the packs leave each 16-byte lane's 4-byte groups of q[0..3] side by side */
	const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
	__m512i q[4];
	for (int j = 0; j < 4; j++)
		q[j] = qadd_q16(a, b, i + 16 * j, inc, sa_, sb_, (__mmask16)(m >> 16 * j), k);
	__m512i w0 = _mm512_packs_epi32(q[0], q[1]), w1 = _mm512_packs_epi32(q[2], q[3]);
	__m512i v = c_signed ? _mm512_packs_epi16(w0, w1) : _mm512_packus_epi16(w0, w1);
	return _mm512_permutexvar_epi32(order, v);
}

T512 static inline qadd_vk qadd_consts(const qadd_arg *p)
{
	return (qadd_vk){ _mm512_set1_ps(p->za), _mm512_set1_ps(p->sa), _mm512_set1_ps(p->zb),
			  _mm512_set1_ps(p->sb), _mm512_set1_ps(p->sc), _mm512_set1_ps(p->rc),
			  _mm512_set1_epi32((int32_t)p->zc) };
}

/* qadd512 with the reciprocal, 64 elements an iteration. */
T512 static void qadd512_fast(int64_t n, const void *a, const void *b, const int64_t *inc, void *c,
			      const qadd_arg *p, bool sa_, bool sb_)
{
	const qadd_vk k = qadd_consts(p);
	for (int64_t i = 0; i < n; i += 64) {
		__mmask64 m = gc_lanes64(n - i);
		_mm512_mask_storeu_epi8((char *)c + i, m,
					qadd_c64(a, b, i, inc, sa_, sb_, m, p->lo < 0, &k));
	}
}

/* qadd512_lut with the reciprocal, 64 elements an iteration: the lookup
 * on c's bytes, whose index c - lo is the byte itself, or a signed one's
 * with its top bit flipped. */
TVBMI static void qadd512_fast_lut(int64_t n, const void *a, const void *b, const int64_t *inc,
				   void *c, const qadd_arg *p, bool sa_, bool sb_, const uint8_t lut[256])
{
	const __m512i t0 = _mm512_loadu_si512(lut), t1 = _mm512_loadu_si512(lut + 64);
	const __m512i t2 = _mm512_loadu_si512(lut + 128), t3 = _mm512_loadu_si512(lut + 192);
	const __m512i flip = _mm512_set1_epi8(p->lo < 0 ? (char)0x80 : 0);
	const qadd_vk k = qadd_consts(p);
	for (int64_t i = 0; i < n; i += 64) {
		__mmask64 m = gc_lanes64(n - i);
		__m512i x = _mm512_xor_si512(qadd_c64(a, b, i, inc, sa_, sb_, m, p->lo < 0, &k), flip);
		__m512i r = _mm512_mask_blend_epi8(_mm512_movepi8_mask(x),
						   _mm512_permutex2var_epi8(t0, x, t1),
						   _mm512_permutex2var_epi8(t2, x, t3));
		_mm512_mask_storeu_epi8((char *)c + i, m, r);
	}
}
#endif

typedef struct qadd_run_arg {
	qadd_arg p;
	gc_ew_fn fn;
	bool a_signed, b_signed, vec, vbmi;
	uint8_t lut[256]; /* vbmi with the Relu: qadd_lut */
} qadd_run_arg;

typedef struct qadd_state {
	gc_ew_fn fn;
	bool relu, vec, vbmi;
	bool recip; /* qadd_arg's: checked by qadd_recip_ok */
	/* every scale and zero point a constant: the run's arguments, made
	 * once at prepare (the Relu's table among them) */
	bool fixed;
	qadd_run_arg args;
	gc_ew_plan plan;
} qadd_state;

static void qadd_any(int64_t n, const void *const *in, const int64_t *inc, void *out,
		     const void *arg)
{
	const qadd_run_arg *r = arg;
#if defined(__x86_64__) && defined(__GNUC__)
	if (r->vec && r->p.recip && r->p.relu && r->vbmi) {
		qadd512_fast_lut(n, in[0], in[1], inc, out, &r->p, r->a_signed, r->b_signed, r->lut);
		return;
	}
	if (r->vec && r->p.recip && !r->p.relu) {
		qadd512_fast(n, in[0], in[1], inc, out, &r->p, r->a_signed, r->b_signed);
		return;
	}
	if (r->vec && r->p.relu && r->vbmi) {
		qadd512_lut(n, in[0], in[1], inc, out, &r->p, r->a_signed, r->b_signed, r->lut);
		return;
	}
	if (r->vec) {
		qadd512(n, in[0], in[1], inc, out, &r->p, r->a_signed, r->b_signed);
		return;
	}
#endif
	r->fn(n, in, inc, out, &r->p);
}

static bool is8(gc_dtype t)
{
	return t == GC_DTYPE_UINT8 || t == GC_DTYPE_INT8;
}

static float zval(const gc_tensor *z)
{
	return z->dtype == GC_DTYPE_UINT8 ? (float)((const uint8_t *)z->data)[0]
					  : (float)((const int8_t *)z->data)[0];
}

static void range8(gc_dtype t, float *lo, float *hi)
{
	*lo = t == GC_DTYPE_UINT8 ? 0.0f : -128.0f;
	*hi = t == GC_DTYPE_UINT8 ? 255.0f : 127.0f;
}

/* The run's parameters from the inputs (the scales, zero points, types). */
static void qadd_args(const qadd_state *s, gc_tensor *const *in, qadd_run_arg *r)
{
	*r = (qadd_run_arg){ .p = { .za = zval(in[2]), .sa = *(const float *)in[1]->data,
				    .zb = zval(in[5]), .sb = *(const float *)in[4]->data,
				    .sc = *(const float *)in[6]->data, .zc = zval(in[7]),
				    .relu = s->relu, .recip = s->recip },
			     .fn = s->fn, .a_signed = in[0]->dtype == GC_DTYPE_INT8,
			     .b_signed = in[3]->dtype == GC_DTYPE_INT8, .vec = s->vec,
			     .vbmi = s->vbmi };
	range8(in[7]->dtype, &r->p.lo, &r->p.hi);
	r->p.rc = 1.0f / r->p.sc;
	if (s->relu) {
		r->p.sr = *(const float *)in[8]->data;
		r->p.zr = zval(in[9]);
		range8(in[9]->dtype, &r->p.rlo, &r->p.rhi);
		r->p.rr = 1.0f / r->p.sr;
	}
#if defined(__x86_64__) && defined(__GNUC__)
	/* the Relu's table by division always: the one qadd_recip_ok checked with */
	qadd_arg d = r->p;
	d.recip = false;
	if (r->vec && r->vbmi && s->relu)
		qadd_lut(&d, r->lut);
#endif
}

/* Whether qadd_div16's reciprocal gives the division's bytes on every pair
 * of input bytes (A's byte against B's 256, a row at a time): the whole
 * domain of an op whose scales and zero points are constants. */
static bool qadd_recip_ok(qadd_state *s, gc_tensor *const *in)
{
	qadd_run_arg div, rcp;
	s->recip = false;
	qadd_args(s, in, &div);
	rcp = div;
	rcp.p.recip = true;
	uint8_t bs[256], want[256], got[256];
	for (int b = 0; b < 256; b++)
		bs[b] = (uint8_t)b;
	for (int a = 0; a < 256; a++) {
		uint8_t ab = (uint8_t)a;
		const void *src[2] = { &ab, bs };
		const int64_t inc[2] = { 0, 1 };
		qadd_any(256, src, inc, want, &div);
		qadd_any(256, src, inc, got, &rcp);
		if (memcmp(want, got, sizeof want))
			return false;
	}
	return true;
}

static int run_qadd(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const qadd_state *s = n->state;
	const void *src[2] = { in[0]->data, in[3]->data };
	qadd_run_arg fresh;
	const qadd_run_arg *r = &s->args;
	if (!s->fixed) {
		qadd_args(s, in, &fresh);
		r = &fresh;
	}
	gc_ew_plan_run_par(k->threads, &s->plan, qadd_any, r, src, out[0]->data);
	return 0;
}

/* Input i: one float32 scale (scale) or one 8-bit zero point of type t. */
static int check_param(gc_kctx *k, gc_tensor *const *in, int i, bool scale, gc_dtype t)
{
	static const char *const names[] = { "A",	     "A_scale", "A_zero_point", "B",
					     "B_scale",	     "B_zero_point", "C_scale", "C_zero_point",
					     "R_scale",	     "R_zero_point" };
	if (!in[i])
		return gc_kerr(k, GC_EINVAL, "input '%s' is missing", names[i]);
	if (gc_tensor_numel(in[i]) != 1)
		return gc_kerr(k, GC_EUNSUPPORTED, "input '%s' must hold one value (per tensor)",
			       names[i]);
	if (scale ? in[i]->dtype != GC_DTYPE_FLOAT : in[i]->dtype != t)
		return gc_kerr(k, GC_EINVAL, "input '%s' must be %s, not %s", names[i],
			       scale ? "float32" : gc_dtype_name(t), gc_dtype_name(in[i]->dtype));
	return 0;
}

/* The AVX-512 loop: on a CPU with AVX-512BW, not under the reference kernels. */
static bool qadd_vec(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	return !gc_reference_kernels() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
	return false;
#endif
}

/* With the Relu: the table lookup of qadd512_lut. */
static bool qadd_vbmi(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return __builtin_cpu_supports("avx512vbmi");
#else
	return false;
#endif
}

int gc_prepare_QLinearAdd(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const char *act = gc_attr_s(k, "_gc_activation", NULL);
	if (gc_kok(k))
		return gc_kok(k);
	if (act && strcmp(act, "Relu"))
		return gc_kerr(k, GC_EINVAL,
			       "attribute _gc_activation is \"%s\"; QLinearAdd takes only Relu", act);
	bool relu = act != NULL;
	if (relu != (n->n_in == 10))
		return gc_kerr(k, GC_EINVAL,
			       relu ? "_gc_activation \"Relu\" needs inputs 8 and 9 (R_scale, "
				      "R_zero_point)"
				    : "inputs 8 and 9 come only with _gc_activation \"Relu\"");
	if (!in[0] || !in[3] || !is8(in[0]->dtype) || !is8(in[3]->dtype))
		return gc_kerr(k, GC_EINVAL, "inputs 'A' and 'B' must be uint8 or int8");
	if (!in[7] || !is8(in[7]->dtype) || (relu && (!in[9] || !is8(in[9]->dtype))))
		return gc_kerr(k, GC_EINVAL, "the output zero points must be uint8 or int8");
	static const int scales[] = { 1, 4, 6, 8 };
	for (int i = 0; i < (relu ? 4 : 3); i++)
		if (check_param(k, in, scales[i], true, GC_DTYPE_FLOAT))
			return k->err->code;
	if (check_param(k, in, 2, false, in[0]->dtype) || check_param(k, in, 5, false, in[3]->dtype) ||
	    check_param(k, in, 7, false, in[7]->dtype) ||
	    (relu && check_param(k, in, 9, false, in[9]->dtype)))
		return k->err->code;
	const gc_tensor *ops[2] = { in[0], in[3] };
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
	if (gc_broadcast_shapes(k, 2, ops, &rank, dims))
		return k->err->code;
	/* c saturates to C_zero_point's type; the output is R's with the Relu */
	gc_dtype ot = in[relu ? 9 : 7]->dtype;
	/* the reciprocal where the parameters are constants (its check, once,
	 * costs about two runs over 65536 elements) */
	bool fixed = true;
	for (int j = 1; j < (relu ? 10 : 8); j++)
		fixed &= j == 3 || gc_kfixed(k, in, j) != NULL;
	qadd_state *s = gc_kstate(k, n, sizeof *s);
	if (!s)
		return gc_kok(k);
	s->relu = relu;
	s->vec = qadd_vec();
	s->vbmi = s->vec && qadd_vbmi();
	s->fn = qadd_fns[(in[0]->dtype == GC_DTYPE_INT8) * 4 + (in[3]->dtype == GC_DTYPE_INT8) * 2 +
			 (ot == GC_DTYPE_INT8)];
	s->recip = s->vec && fixed && qadd_recip_ok(s, in);
	s->fixed = fixed;
	if (fixed)
		qadd_args(s, in, &s->args);
	gc_set_shape(out[0], ot, rank, dims);
	gc_ew_plan_init(&s->plan, 2, ops, rank, dims, ot);
	n->inplace_ok = gc_same_shape(in[0], out[0]);
	n->run = run_qadd;
	return 0;
}
