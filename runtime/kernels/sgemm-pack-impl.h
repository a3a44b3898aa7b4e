/* What sgemm-pack.c and conv-direct.c share inside: the target attribute
 * and the vector epilogue. x86-64 with GCC or Clang only. */
#ifndef GC_K_SGEMM_PACK_IMPL_H
#define GC_K_SGEMM_PACK_IMPL_H

#include <immintrin.h>

#include "sgemm-pack.h"

#define GC_PK_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

/* e^x as vmath.h's gc_vm_expf, 16 lanes. */
static inline __attribute__((always_inline)) GC_PK_TARGET __m512 gc_pk_exp(__m512 x)
{
	__m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-104.0f)), _mm512_set1_ps(89.0f));
	const __m512 magic = _mm512_set1_ps(12582912.0f);
	__m512 n = _mm512_sub_ps(_mm512_add_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
					       magic),
				 magic);
	__m512 r = _mm512_sub_ps(xc, _mm512_mul_ps(n, _mm512_set1_ps(0.693359375f)));
	r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(-2.12194440e-4f)));
	static const float c[] = {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
				  1.6666665459e-1f, 5.0000001201e-1f};
	__m512 q = _mm512_set1_ps(1.9875691500e-4f);
	for (int i = 0; i < 5; i++)
		q = _mm512_add_ps(_mm512_mul_ps(q, r), _mm512_set1_ps(c[i]));
	q = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(_mm512_mul_ps(q, r), r), r),
			  _mm512_set1_ps(1.0f));
	__m512i ni = _mm512_cvtps_epi32(n), n1 = _mm512_srai_epi32(ni, 1);
	__m512i n2 = _mm512_sub_epi32(ni, n1), bias = _mm512_set1_epi32(127);
	__m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, bias), 23));
	__m512 s2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, bias), 23));
	__m512 y = _mm512_mul_ps(_mm512_mul_ps(q, s1), s2);
	return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
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
		__m512 d = _mm512_add_ps(_mm512_set1_ps(1.0f), gc_pk_exp(_mm512_sub_ps(
								    _mm512_setzero_ps(), r)));
		r = _mm512_div_ps(r, d);
	} else if (e->act == GC_NN_ACT_HSWISH) {
		__m512 h = _mm512_add_ps(_mm512_mul_ps(_mm512_set1_ps(e->slope), r),
					 _mm512_set1_ps(e->offset));
		h = _mm512_min_ps(_mm512_set1_ps(1.0f), _mm512_max_ps(_mm512_setzero_ps(), h));
		r = _mm512_mul_ps(r, h);
	}
	return r;
}

#endif
