/* What sgemm-pack.c, conv-direct.c and conv-dw.c share inside: the target
 * attribute, the vector epilogue and a 16 x 16 transpose. x86-64 with GCC or Clang only. */
#ifndef GC_K_SGEMM_PACK_IMPL_H
#define GC_K_SGEMM_PACK_IMPL_H

#include <immintrin.h>

#include "sgemm-pack.h"
#include "vmath.h"

#define GC_PK_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

/* The kernels' inner helpers (GC_PK_INLINE) are inlined into each of their
 * specialised variants, where the const int parameters fold. A sanitizer
 * build (GC_PK_GENERIC: the Makefile's SAN=1 and SAN=thread) calls them
 * instead, one instrumented copy of each: inlined, instrumented and
 * optimised, the variants of sgemm-pack.c took gcc 223 s and clang 318 s to
 * compile (30 s plain; generic, 6 s each), and CI's fuzz step spent 800 of
 * its 954 s compiling. The same source lines run either way; only whether
 * the constants fold differs. */
#ifndef GC_PK_GENERIC
#define GC_PK_INLINE static inline __attribute__((always_inline)) GC_PK_TARGET
#elif defined(__clang__)
#define GC_PK_INLINE static __attribute__((noinline)) GC_PK_TARGET
#else
#define GC_PK_INLINE static __attribute__((noinline, noclone)) GC_PK_TARGET
/* (with the counts not folded, gcc cannot see that the loops write every
 * register a later loop reads) */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/*
 * t = e^-|x| and v = 1 / (1 + t), 16 lanes: sigmoid(|x|) is v, and
 * sigmoid(x) is t v for x < 0 (1 + t is in [1, 2] and never overflows).
 * v from rcp14 and one Newton step (no division: vdivps would cost as much
 * as all the rest). The exponential: n = round(a log2 e), a - n ln 2 in two
 * steps, the polynomial of vmath.h's gc_vm_expf (GC_VM_EXP_P*), scaled by 2^n
 * (scalef: no bit tricks, underflow to 0 below e^-104). NaN lanes come out
 * as t and v of -104: the callers keep NaN themselves.
 */
static inline __attribute__((always_inline)) GC_PK_TARGET void gc_pk_sig_parts(__m512 x, __m512 *t,
									      __m512 *v)
{
	const __m512 one = _mm512_set1_ps(1.0f);
	__m512 a = _mm512_or_ps(x, _mm512_set1_ps(-0.0f)); /* -|x| */
	a = _mm512_max_ps(a, _mm512_set1_ps(-104.0f));
	__m512 n = _mm512_roundscale_ps(_mm512_mul_ps(a, _mm512_set1_ps(1.44269504088896341f)),
					_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(GC_VM_LN2_HI), a);
	r = _mm512_fnmadd_ps(n, _mm512_set1_ps(GC_VM_LN2_LO), r);
	__m512 q = _mm512_set1_ps(GC_VM_EXP_P0);
	q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(GC_VM_EXP_P1));
	q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(GC_VM_EXP_P2));
	q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(GC_VM_EXP_P3));
	q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(GC_VM_EXP_P4));
	q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(GC_VM_EXP_P5));
	q = _mm512_add_ps(_mm512_fmadd_ps(q, _mm512_mul_ps(r, r), r), one);
	*t = _mm512_scalef_ps(q, n);
	__m512 d = _mm512_add_ps(one, *t), w = _mm512_rcp14_ps(d);
	*v = _mm512_fmadd_ps(w, _mm512_fnmadd_ps(d, w, one), w);
}

/* x sigmoid(x) (SiLU), within ~3 ulp of the value in double. NaN stays NaN
 * (x times anything). */
static inline __attribute__((always_inline)) GC_PK_TARGET __m512 gc_pk_silu(__m512 x)
{
	__m512 t, v;
	gc_pk_sig_parts(x, &t, &v);
	__mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
	return _mm512_mul_ps(x, _mm512_mask_mul_ps(v, neg, v, t));
}

/* The activation of e on r. The constant comes first in max/min, so that
 * NaN passes through as the plain loops have it. */
static inline __attribute__((always_inline)) GC_PK_TARGET __m512 gc_pk_act(__m512 r,
									   const gc_pk_epi *e)
{
	if (e->act == GC_NN_ACT_CLAMP) {
		r = _mm512_max_ps(_mm512_set1_ps(e->lo), r);
		r = _mm512_min_ps(_mm512_set1_ps(e->hi), r);
	} else if (e->act == GC_NN_ACT_LEAKY) {
		__mmask16 neg = _mm512_cmp_ps_mask(r, _mm512_setzero_ps(), _CMP_LT_OQ);
		r = _mm512_mask_mul_ps(r, neg, r, _mm512_set1_ps(e->slope));
	} else if (e->act == GC_NN_ACT_SWISH) {
		r = gc_pk_silu(r);
	} else if (e->act == GC_NN_ACT_HSWISH) {
		__m512 h = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(e->slope), r),
					 _mm512_set1_ps(e->offset));
		h = _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), h));
		r = _mm512_mul_ps(r, h);
	}
	return r;
}

/* Transposes the 16 x 16 block r (r[i] lane j becomes r[j] lane i). */
static inline __attribute__((always_inline)) GC_PK_TARGET void gc_pk_transpose16(__m512 *r)
{
	__m512 t[16];
#pragma GCC unroll 8
	for (int i = 0; i < 8; i++) {
		t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
		t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
	}
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		r[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
		r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
		r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
		r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
	}
#pragma GCC unroll 4
	for (int q = 0; q < 4; q++) {
		__m512 u0 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88);
		__m512 u1 = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xDD);
		__m512 u2 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88);
		__m512 u3 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xDD);
		t[q] = _mm512_shuffle_f32x4(u0, u2, 0x88);
		t[8 + q] = _mm512_shuffle_f32x4(u0, u2, 0xDD);
		t[4 + q] = _mm512_shuffle_f32x4(u1, u3, 0x88);
		t[12 + q] = _mm512_shuffle_f32x4(u1, u3, 0xDD);
	}
#pragma GCC unroll 16
	for (int i = 0; i < 16; i++)
		r[i] = t[i];
}

#endif
