/* What sgemm-pack.c and conv-direct.c share inside: the target attribute
 * and the vector epilogue. x86-64 with GCC or Clang only. */
#ifndef GC_K_SGEMM_PACK_IMPL_H
#define GC_K_SGEMM_PACK_IMPL_H

#include <immintrin.h>

#include "sgemm-pack.h"

#define GC_PK_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))

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
	}
	return r;
}

#endif
