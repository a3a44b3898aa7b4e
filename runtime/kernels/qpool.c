/*
 * 8-bit MaxPool by rows (qpool.h): the window's input rows are reduced into
 * one padded row buffer (bytewise max, which vectorises), then each output
 * takes the max of its columns there. int8 runs as uint8 with the top bit
 * flipped (x ^ 0x80 keeps the order), the padding as 0, the lowest value.
 */
#include "qpool.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "lanes.h"
#include "pool-impl.h"

GC_NN_O3

#if defined(__x86_64__) && defined(__GNUC__)
#define T512Q __attribute__((target("avx512f,avx512bw,avx512vbmi")))

/* max3_rows over all of [a, b), 64 bytes at a time, the last masked (no
 * scalar tail: resnet's 112-byte rows are 64 + 48). */
T512Q static int64_t max3_rows512(const uint8_t *r, int64_t d, int64_t a, int64_t b, uint8_t flip,
				  uint8_t *buf)
{
	const __m512i f = _mm512_set1_epi8((char)flip);
	for (int64_t i = a; i < b; i += 64) {
		__mmask64 m = gc_lanes64(b - i);
		__m512i v0 = _mm512_maskz_loadu_epi8(m, r + i);
		__m512i v1 = _mm512_maskz_loadu_epi8(m, r + i + d);
		__m512i v2 = _mm512_maskz_loadu_epi8(m, r + i + 2 * d);
		__m512i v = _mm512_max_epu8(_mm512_max_epu8(_mm512_xor_si512(v0, f), _mm512_xor_si512(v1, f)),
					    _mm512_xor_si512(v2, f));
		_mm512_mask_storeu_epi8(buf + i, m, v);
	}
	return b;
}

/* max3_s2 for all ow_n outputs, 32 at a time: bytes 2o, 2o + 1, 2o + 2 of
 * the 65 from 2 * o0 picked by byte permutes (VBMI), reading only the
 * 2 ow_n + 1 bytes of the row. */
T512Q static int64_t max3_s2_512(const uint8_t *b, int64_t ow_n, uint8_t flip, uint8_t *y)
{
	const __m512i f = _mm512_set1_epi8((char)flip);
	const __m512i one = _mm512_set1_epi8(1), two = _mm512_set1_epi8(2);
	/* byte j of the low 32: 2j (the high 32, unused, repeat them) */
	static const uint8_t even[64] = {
		0, 2,  4,  6,  8,  10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42,
		44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 0, 2,  4,  6,  8,  10, 12, 14, 16, 18, 20, 22,
		24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62 };
	const __m512i idx = _mm512_loadu_si512(even);
	const int64_t len = 2 * ow_n + 1;
	for (int64_t o = 0; o < ow_n; o += 32) {
		int64_t at = 2 * o, left = len - at;
		__mmask64 m0 = gc_lanes64(left);
		__mmask64 m1 = left > 64 ? 1 : 0;
		__m512i lo = _mm512_maskz_loadu_epi8(m0, b + at);
		__m512i hi = _mm512_maskz_loadu_epi8(m1, b + at + 64);
		__m512i v = _mm512_max_epu8(_mm512_permutex2var_epi8(lo, idx, hi),
					    _mm512_permutex2var_epi8(lo, _mm512_add_epi8(idx, one), hi));
		v = _mm512_max_epu8(v, _mm512_permutex2var_epi8(lo, _mm512_add_epi8(idx, two), hi));
		int64_t n = ow_n - o < 32 ? ow_n - o : 32;
		_mm512_mask_storeu_epi8(y + o, ((__mmask64)1 << n) - 1, _mm512_xor_si512(v, f));
	}
	return ow_n;
}
#endif

/* y[o] = max(b[2o], b[2o + 1], b[2o + 2]) ^ flip, 16 at a time while the
 * 34 bytes read lie in the row (2 ow_n + 1 bytes), or all with v512: the
 * outputs done. */
static int64_t max3_s2(const uint8_t *b, int64_t ow_n, uint8_t flip, uint8_t *y, bool v512)
{
	int64_t o = 0;
#if defined(__x86_64__) && defined(__GNUC__)
	if (v512)
		return max3_s2_512(b, ow_n, flip, y);
	const __m128i lo = _mm_set1_epi16(0xff), f = _mm_set1_epi8((char)flip);
	for (; o + 16 < ow_n; o += 16) {
		__m128i v0 = _mm_loadu_si128((const __m128i *)(b + 2 * o));
		__m128i v1 = _mm_loadu_si128((const __m128i *)(b + 2 * o + 16));
		__m128i w0 = _mm_loadu_si128((const __m128i *)(b + 2 * o + 2));
		__m128i w1 = _mm_loadu_si128((const __m128i *)(b + 2 * o + 18));
		__m128i ev = _mm_packus_epi16(_mm_and_si128(v0, lo), _mm_and_si128(v1, lo));
		__m128i od = _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8));
		__m128i nx = _mm_packus_epi16(_mm_and_si128(w0, lo), _mm_and_si128(w1, lo));
		__m128i m = _mm_max_epu8(_mm_max_epu8(ev, od), nx);
		_mm_storeu_si128((__m128i *)(y + o), _mm_xor_si128(m, f));
	}
#else
	(void)b;
	(void)flip;
	(void)y;
	(void)v512;
#endif
	return o;
}

/* buf[i] = max(r[i], r[i + d], r[i + 2d]) ^ flip for i from a, 16 at a time
 * (a row's 112 bytes had 48 left to a scalar loop after the compiler's
 * 64), or all with v512: the index reached. */
static int64_t max3_rows(const uint8_t *r, int64_t d, int64_t a, int64_t b, uint8_t flip,
			 uint8_t *buf, bool v512)
{
	int64_t i = a;
#if defined(__x86_64__) && defined(__GNUC__)
	if (v512)
		return max3_rows512(r, d, a, b, flip, buf);
	const __m128i f = _mm_set1_epi8((char)flip);
	for (; i + 16 <= b; i += 16) {
		__m128i v0 = _mm_loadu_si128((const __m128i *)(r + i));
		__m128i v1 = _mm_loadu_si128((const __m128i *)(r + i + d));
		__m128i v2 = _mm_loadu_si128((const __m128i *)(r + i + 2 * d));
		__m128i m = _mm_max_epu8(_mm_max_epu8(_mm_xor_si128(v0, f), _mm_xor_si128(v1, f)),
					 _mm_xor_si128(v2, f));
		_mm_storeu_si128((__m128i *)(buf + i), m);
	}
#else
	(void)r;
	(void)d;
	(void)flip;
	(void)buf;
	(void)v512;
#endif
	return i;
}


bool gc_maxpool8_v512(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vbmi");
#else
	return false;
#endif
}

GC_NN_SIMD void gc_maxpool8_rows(const gc_nn_window *w, bool sgn, bool v512, const void *x,
				 void *y, int64_t in_sp, int64_t out_sp, int64_t c0, int64_t c1,
				 uint8_t *buf, int64_t row_len)
{
	const uint8_t flip = sgn ? 0x80 : 0;
	int64_t H = w->in[1], W = w->in[2], pl = w->pad_lo[2];
	/* the buffer's columns [a, b) hold input columns [a - pl, b - pl) */
	int64_t a = pl < row_len ? pl : row_len, b = pl + W < row_len ? pl + W : row_len;
	int64_t s2 = w->stride[2], d2 = w->dil[2], k2 = w->k[2], ow_n = w->out[2];
	/* the padding columns stay 0; each row writes all of [a, b) */
	memset(buf, 0, (size_t)a);
	memset(buf + b, 0, (size_t)(row_len - b));
	for (int64_t ch = c0; ch < c1; ch++) {
		const uint8_t *xc = (const uint8_t *)x + ch * in_sp;
		uint8_t *yc = (uint8_t *)y + ch * out_sp;
		for (int64_t oh = 0; oh < w->out[1]; oh++, yc += ow_n) {
			int64_t s1 = oh * w->stride[1] - w->pad_lo[1], l1, h1, d1 = w->dil[1] * W;
			gc_pool_taps(s1, w->k[1], w->dil[1], H, &l1, &h1);
			const uint8_t *xr = h1 > l1 ? xc + (s1 + l1 * w->dil[1]) * W - pl : xc;
			if (h1 - l1 == 3) /* the common case in one pass */
				for (int64_t i = max3_rows(xr, d1, a, b, flip, buf, v512); i < b; i++) {
					uint8_t v0 = xr[i] ^ flip, v1 = xr[i + d1] ^ flip, v2 = xr[i + 2 * d1] ^ flip;
					v0 = v1 > v0 ? v1 : v0;
					buf[i] = v2 > v0 ? v2 : v0;
				}
			else if (h1 > l1)
				for (int64_t i = a; i < b; i++)
					buf[i] = xr[i] ^ flip;
			else
				memset(buf + a, 0, (size_t)(b - a));
			for (int64_t t = l1 + 1; h1 - l1 != 3 && t < h1; t++) {
				xr += d1;
				for (int64_t i = a; i < b; i++) {
					uint8_t v = xr[i] ^ flip;
					buf[i] = v > buf[i] ? v : buf[i];
				}
			}
			if (s2 == 2 && k2 == 3 && d2 == 1) /* the common 3x3 / 2 */
				for (int64_t o = max3_s2(buf, ow_n, flip, yc, v512); o < ow_n; o++) {
					uint8_t m = buf[2 * o], m1 = buf[2 * o + 1], m2 = buf[2 * o + 2];
					m = m1 > m ? m1 : m;
					yc[o] = (uint8_t)((m2 > m ? m2 : m) ^ flip);
				}
			else
				for (int64_t o = 0; o < ow_n; o++) {
					uint8_t m = 0;
					for (int64_t t = 0; t < k2; t++) {
						uint8_t v = buf[o * s2 + t * d2];
						m = v > m ? v : m;
					}
					yc[o] = (uint8_t)(m ^ flip);
				}
		}
	}
}
