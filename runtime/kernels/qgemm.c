/* Integer GEMM (qgemm.h): packed B, one u8 x s8 core per ISA, tiles of 4
 * rows by 2 panels (32 columns) split over the nn-par pool. */
#include "qgemm.h"

#include <math.h>
#include <string.h>

#include "../fileio.h"
#include "nn-par.h"
#include "nn.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define QG_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

GC_NN_O3

#define MR 4 /* rows per tile */
#define NP 2 /* panels per tile */

gc_qgemm_isa gc_qgemm_isa_best(void)
{
	if (gc_reference_kernels())
		return GC_QGEMM_C;
#ifdef QG_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vnni"))
		return GC_QGEMM_AVX512VNNI;
	/* AVX-VNNI: CPUID leaf 7, subleaf 1, EAX bit 4 (asked directly: older
	 * compilers' __builtin_cpu_supports do not know the name) */
	unsigned a = 0, b = 0, c = 0, d = 0;
	if (__builtin_cpu_supports("avx2") && __get_cpuid_count(7, 1, &a, &b, &c, &d) &&
	    (a >> 4 & 1))
		return GC_QGEMM_AVXVNNI;
#endif
	return GC_QGEMM_C;
}

const char *gc_qgemm_isa_name(gc_qgemm_isa isa)
{
	static const char *const names[GC_QGEMM_ISA_COUNT] = { "c", "avx-vnni", "avx512-vnni" };
	return (unsigned)isa < GC_QGEMM_ISA_COUNT ? names[isa] : "?";
}

static int64_t quads(int64_t k)
{
	return (k + 3) / 4;
}

static int64_t panels(int64_t n)
{
	return (n + GC_QG_NR - 1) / GC_QG_NR;
}

int64_t gc_qgemm_b_bytes(int64_t k, int64_t n)
{
	return panels(n) * quads(k) * GC_QG_NR * 4;
}

GC_NN_SIMD void gc_qgemm_pack_b(const void *b, bool b_unsigned, int64_t k, int64_t n,
				int64_t ldb, int8_t *data, int32_t *colsum)
{
	int64_t kq = quads(k);
	uint8_t flip = b_unsigned ? 0x80 : 0; /* u8 - 128 as s8: the top bit flipped */
	for (int64_t p = 0; p * GC_QG_NR < n; p++) {
		int64_t j0 = p * GC_QG_NR, nr = n - j0 < GC_QG_NR ? n - j0 : GC_QG_NR;
		int8_t *dp = data + p * kq * GC_QG_NR * 4;
		int32_t cs[GC_QG_NR] = { 0 };
		if (nr < GC_QG_NR || k % 4)
			memset(dp, 0, (size_t)(kq * GC_QG_NR * 4));
		int64_t t = 0;
		if (nr == GC_QG_NR) /* four rows at a time: a column's quad at once */
			for (; t + 4 <= k; t += 4) {
				const uint8_t *r0 = (const uint8_t *)b + t * ldb + j0;
				const uint8_t *r1 = r0 + ldb, *r2 = r1 + ldb, *r3 = r2 + ldb;
				uint8_t w[GC_QG_NR * 4];
				for (int jj = 0; jj < GC_QG_NR; jj++) {
					uint8_t a0 = r0[jj] ^ flip, a1 = r1[jj] ^ flip, a2 = r2[jj] ^ flip,
						a3 = r3[jj] ^ flip;
					w[jj * 4] = a0;
					w[jj * 4 + 1] = a1;
					w[jj * 4 + 2] = a2;
					w[jj * 4 + 3] = a3;
					cs[jj] += (int8_t)a0 + (int8_t)a1 + (int8_t)a2 + (int8_t)a3;
				}
				memcpy(dp + t / 4 * GC_QG_NR * 4, w, sizeof w);
			}
		for (; t < k; t++) {
			const uint8_t *src = (const uint8_t *)b + t * ldb + j0;
			int8_t *d = dp + t / 4 * GC_QG_NR * 4 + t % 4;
			for (int64_t jj = 0; jj < nr; jj++) {
				int8_t v = (int8_t)(src[jj] ^ flip);
				d[jj * 4] = v;
				cs[jj] += v;
			}
		}
		memcpy(colsum + j0, cs, (size_t)nr * sizeof *cs);
	}
}

/* The 4 bytes of row a from k-quad kk as unsigned bytes (int8 rows get
 * +128: xor 0x80), zero past k. */
static inline int32_t quad_at(const uint8_t *a, int64_t k, int64_t kk, uint32_t flip)
{
	uint32_t v = 0;
	int64_t t = kk * 4;
	memcpy(&v, a + t, (size_t)(k - t >= 4 ? 4 : k - t));
	return (int32_t)(v ^ flip);
}

/* One tile: acc[r][c] for rows a[0..MR) and the NP panels at bp (each
 * kq * 64 bytes apart), all of k. */
static void tile_c(const uint8_t *const *a, int64_t k, const int8_t *bp, int64_t pstride,
		   uint32_t flip, int32_t acc[MR][NP * GC_QG_NR])
{
	int64_t kq = quads(k);
	memset(acc, 0, sizeof(int32_t) * MR * NP * GC_QG_NR);
	for (int64_t kk = 0; kk < kq; kk++)
		for (int r = 0; r < MR; r++) {
			int32_t q = quad_at(a[r], k, kk, flip);
			uint8_t u[4];
			memcpy(u, &q, 4);
			for (int p = 0; p < NP; p++) {
				const int8_t *b = bp + p * pstride + kk * GC_QG_NR * 4;
				for (int jj = 0; jj < GC_QG_NR; jj++)
					acc[r][p * GC_QG_NR + jj] += u[0] * b[jj * 4] + u[1] * b[jj * 4 + 1] +
								     u[2] * b[jj * 4 + 2] + u[3] * b[jj * 4 + 3];
			}
		}
}

#ifdef QG_X86
__attribute__((target("avx512f,avx512bw,avx512vnni"))) static void
tile_512(const uint8_t *const *a, int64_t k, const int8_t *bp, int64_t pstride, uint32_t flip,
	 int32_t acc[MR][NP * GC_QG_NR])
{
	__m512i c00 = _mm512_setzero_si512(), c01 = c00, c10 = c00, c11 = c00, c20 = c00,
		c21 = c00, c30 = c00, c31 = c00;
	int64_t kq = quads(k), full = k / 4;
	const int8_t *b0 = bp, *b1 = bp + pstride;
	for (int64_t kk = 0; kk < kq; kk++) {
		__m512i x0 = _mm512_loadu_si512(b0 + kk * 64), x1 = _mm512_loadu_si512(b1 + kk * 64);
		__m512i a0, a1, a2, a3;
		if (kk < full) {
			int32_t q[4];
			for (int r = 0; r < MR; r++) {
				memcpy(&q[r], a[r] + kk * 4, 4);
				q[r] = (int32_t)((uint32_t)q[r] ^ flip);
			}
			a0 = _mm512_set1_epi32(q[0]);
			a1 = _mm512_set1_epi32(q[1]);
			a2 = _mm512_set1_epi32(q[2]);
			a3 = _mm512_set1_epi32(q[3]);
		} else {
			a0 = _mm512_set1_epi32(quad_at(a[0], k, kk, flip));
			a1 = _mm512_set1_epi32(quad_at(a[1], k, kk, flip));
			a2 = _mm512_set1_epi32(quad_at(a[2], k, kk, flip));
			a3 = _mm512_set1_epi32(quad_at(a[3], k, kk, flip));
		}
		c00 = _mm512_dpbusd_epi32(c00, a0, x0);
		c01 = _mm512_dpbusd_epi32(c01, a0, x1);
		c10 = _mm512_dpbusd_epi32(c10, a1, x0);
		c11 = _mm512_dpbusd_epi32(c11, a1, x1);
		c20 = _mm512_dpbusd_epi32(c20, a2, x0);
		c21 = _mm512_dpbusd_epi32(c21, a2, x1);
		c30 = _mm512_dpbusd_epi32(c30, a3, x0);
		c31 = _mm512_dpbusd_epi32(c31, a3, x1);
	}
	_mm512_storeu_si512(acc[0], c00);
	_mm512_storeu_si512(acc[0] + 16, c01);
	_mm512_storeu_si512(acc[1], c10);
	_mm512_storeu_si512(acc[1] + 16, c11);
	_mm512_storeu_si512(acc[2], c20);
	_mm512_storeu_si512(acc[2] + 16, c21);
	_mm512_storeu_si512(acc[3], c30);
	_mm512_storeu_si512(acc[3] + 16, c31);
}

__attribute__((target("avx2,avxvnni"))) static void
tile_256(const uint8_t *const *a, int64_t k, const int8_t *bp, int64_t pstride, uint32_t flip,
	 int32_t acc[MR][NP * GC_QG_NR])
{
	int64_t kq = quads(k);
	for (int p = 0; p < NP; p++) {
		const int8_t *b = bp + p * pstride;
		__m256i c[MR][2];
		for (int r = 0; r < MR; r++)
			c[r][0] = c[r][1] = _mm256_setzero_si256();
		for (int64_t kk = 0; kk < kq; kk++) {
			__m256i x0 = _mm256_loadu_si256((const __m256i *)(b + kk * 64));
			__m256i x1 = _mm256_loadu_si256((const __m256i *)(b + kk * 64 + 32));
			for (int r = 0; r < MR; r++) {
				__m256i av = _mm256_set1_epi32(quad_at(a[r], k, kk, flip));
				c[r][0] = _mm256_dpbusd_avx_epi32(c[r][0], av, x0);
				c[r][1] = _mm256_dpbusd_avx_epi32(c[r][1], av, x1);
			}
		}
		for (int r = 0; r < MR; r++) {
			_mm256_storeu_si256((__m256i *)(acc[r] + p * GC_QG_NR), c[r][0]);
			_mm256_storeu_si256((__m256i *)(acc[r] + p * GC_QG_NR + 8), c[r][1]);
		}
	}
}
#endif

typedef struct qjob {
	gc_qgemm_isa isa;
	const uint8_t *a;
	int64_t lda, m, ldc;
	uint32_t flip;	 /* A int8: read as A + 128 */
	int32_t a_shift; /* 128 for an int8 A */
	bool a_unsigned;
	const gc_qgemm_b *b;
	const gc_qgemm_zp *zp;
	int32_t *c;
	const int32_t *rowsum; /* of A as read (int8 rows + 128) */
	int64_t row_tiles, col_tiles;
} qjob;

static int32_t zp_value(const void *z, bool is_unsigned, int64_t i)
{
	if (!z)
		return 0;
	return is_unsigned ? ((const uint8_t *)z)[i] : ((const int8_t *)z)[i];
}

static void tile_job(const qjob *j, int64_t tile)
{
	const gc_qgemm_b *b = j->b;
	/* row tiles fastest: a panel pair stays in cache while the rows pass */
	int64_t i0 = tile % j->row_tiles * MR, p0 = tile / j->row_tiles * NP;
	int64_t np = panels(b->n), pstride = quads(b->k) * GC_QG_NR * 4;
	const uint8_t *rows[MR];
	for (int r = 0; r < MR; r++) /* rows past m repeat row i0 (results dropped) */
		rows[r] = j->a + (i0 + r < j->m ? i0 + r : i0) * j->lda;
	const int8_t *bp = b->data + p0 * pstride;
	int32_t acc[MR][NP * GC_QG_NR];
	/* a last lone panel: the tile reads it twice */
	int64_t ps = p0 + 1 < np ? pstride : 0;
#ifdef QG_X86
	if (j->isa == GC_QGEMM_AVX512VNNI)
		tile_512(rows, b->k, bp, ps, j->flip, acc);
	else if (j->isa == GC_QGEMM_AVXVNNI)
		tile_256(rows, b->k, bp, ps, j->flip, acc);
	else
#endif
		tile_c(rows, b->k, bp, ps, j->flip, acc);
	const gc_qgemm_zp *zp = j->zp;
	int64_t c0 = p0 * GC_QG_NR, nc = b->n - c0 < NP * GC_QG_NR ? b->n - c0 : NP * GC_QG_NR;
	const int32_t *colsum = b->colsum + c0;
	for (int r = 0; r < MR && i0 + r < j->m; r++) {
		int64_t rowsum = j->rowsum[i0 + r];
		int64_t za = zp_value(zp->za, j->a_unsigned, zp->za_rows ? i0 + r : 0) + j->a_shift;
		int32_t *out = j->c + (i0 + r) * j->ldc + c0;
		if (zp->zb_cols) {
			for (int64_t jj = 0; jj < nc; jj++) {
				int64_t zb = zp_value(zp->zb, b->shift != 0, c0 + jj) - b->shift;
				out[jj] = (int32_t)(acc[r][jj] - zb * rowsum - za * colsum[jj] +
						    b->k * za * zb);
			}
			continue;
		}
		/* one zb: the row's part once, then one multiply-add a column */
		int64_t zb = zp_value(zp->zb, b->shift != 0, 0) - b->shift;
		int64_t base = b->k * za * zb - zb * rowsum;
		for (int64_t jj = 0; jj < nc; jj++)
			out[jj] = (int32_t)(acc[r][jj] + base - za * colsum[jj]);
	}
}

static void part(void *arg, int p, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	int64_t lo, hi;
	gc_nn_part_range(j->row_tiles * j->col_tiles, p, parts, &lo, &hi);
	for (int64_t t = lo; t < hi; t++)
		tile_job(j, t);
}

void gc_qgemm(gc_qgemm_isa isa, int threads, const void *a, bool a_unsigned, int64_t lda,
	      int64_t m, const gc_qgemm_b *b, const gc_qgemm_zp *zp, int32_t *c, int64_t ldc,
	      int32_t *rowsum)
{
	if (m <= 0 || b->n <= 0)
		return;
	for (int64_t i = 0; i < m; i++) {
		int32_t s = 0;
		if (a_unsigned)
			for (int64_t t = 0; t < b->k; t++)
				s += ((const uint8_t *)a)[i * lda + t];
		else
			for (int64_t t = 0; t < b->k; t++)
				s += ((const int8_t *)a)[i * lda + t] + 128;
		rowsum[i] = s;
	}
	qjob j = { .isa = isa, .a = a, .lda = lda, .m = m, .ldc = ldc,
		   .flip = a_unsigned ? 0 : 0x80808080u, .a_shift = a_unsigned ? 0 : 128,
		   .a_unsigned = a_unsigned, .b = b, .zp = zp, .c = c, .rowsum = rowsum,
		   .row_tiles = (m + MR - 1) / MR, .col_tiles = (panels(b->n) + NP - 1) / NP };
	int64_t tiles = j.row_tiles * j.col_tiles;
	int t = gc_nn_par_threads(threads, (double)m * (double)b->n * (double)b->k / 16);
	gc_nn_parallel(t, gc_nn_par_parts(t, tiles), part, &j);
}

/* ---- DynamicQuantizeLinear's loops ---- */

/* y = saturate(rint(x / scale) + zp) (scale != 0), in vector code where the
 * CPU has it (rint: round half to even, as the scalar rintf). NaN gives 0. */
GC_NN_SIMD void gc_qdyn_store(const float *x, int64_t total, float scale, float zp, uint8_t *y)
{
	for (int64_t i = 0; i < total; i++) {
		float v = rintf(x[i] / scale) + zp;
		v = v > 0 ? v : 0; /* NaN: 0 */
		v = v < 255 ? v : 255;
		y[i] = (uint8_t)(int32_t)v;
	}
}

GC_NN_SIMD void gc_qdyn_range(const float *x, int64_t total, float *lo, float *hi)
{
	/* 16 lanes (a select each, which vectorises), then the lanes; a NaN
	 * never replaces a lane's value */
	float mn[16] = { 0 }, mx[16] = { 0 };
	int64_t i = 0;
	for (; i + 16 <= total; i += 16)
		for (int l = 0; l < 16; l++) {
			mn[l] = x[i + l] < mn[l] ? x[i + l] : mn[l];
			mx[l] = x[i + l] > mx[l] ? x[i + l] : mx[l];
		}
	for (; i < total; i++) {
		mn[0] = x[i] < mn[0] ? x[i] : mn[0];
		mx[0] = x[i] > mx[0] ? x[i] : mx[0];
	}
	for (int l = 1; l < 16; l++) {
		mn[0] = mn[l] < mn[0] ? mn[l] : mn[0];
		mx[0] = mx[l] > mx[0] ? mx[l] : mx[0];
	}
	*lo = mn[0];
	*hi = mx[0];
}


/* ---- requantization and QuantizeLinear / DequantizeLinear loops ---- */

/* v (already rounded, not NaN) saturated into element i of a uint8 or
 * int8 y; lo raised by a fused Relu. */
static inline __attribute__((always_inline)) void store8(void *y, int64_t i, float v, float lo,
							 bool to_unsigned)
{
	float hi = to_unsigned ? 255.0f : 127.0f;
	v = v > lo ? v : lo;
	v = v < hi ? v : hi;
	if (to_unsigned)
		((uint8_t *)y)[i] = (uint8_t)(int32_t)v;
	else
		((int8_t *)y)[i] = (int8_t)(int32_t)v;
}

GC_NN_SIMD void gc_qrequant(const int32_t *c, int64_t n, int32_t bias, double mult, float zero,
			    bool relu, bool to_unsigned, void *y)
{
	float lo = to_unsigned ? 0.0f : -128.0f;
	if (relu && zero > lo)
		lo = zero;
	for (int64_t i = 0; i < n; i++)
		store8(y, i, (float)rint((double)((int64_t)c[i] + bias) * mult) + zero, lo,
		       to_unsigned);
}

GC_NN_SIMD void gc_qquantize_f32(const float *x, int64_t n, float scale, float zero,
				 bool to_unsigned, void *y)
{
	float lo = to_unsigned ? 0.0f : -128.0f;
	for (int64_t i = 0; i < n; i++) {
		float v = rintf(x[i] / scale) + zero;
		store8(y, i, v == v ? v : 0.0f /* NaN: 0 */, lo, to_unsigned);
	}
}

GC_NN_SIMD void gc_qdequantize_8(const void *x, bool from_unsigned, int64_t n, float zero,
				 float scale, float *y)
{
	if (from_unsigned)
		for (int64_t i = 0; i < n; i++)
			y[i] = ((float)((const uint8_t *)x)[i] - zero) * scale;
	else
		for (int64_t i = 0; i < n; i++)
			y[i] = ((float)((const int8_t *)x)[i] - zero) * scale;
}
