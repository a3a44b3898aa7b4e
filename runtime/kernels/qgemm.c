/* Integer GEMM (qgemm.h): rows of A broadcast 4 bytes at a time against
 * packed B chunks (48 columns), one u8 x s8 core per ISA, the zero points
 * and the requantization in the epilogue, tiles split over the nn-par pool. */
#include "qgemm.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../fileio.h"
#include "lanes.h"
#include "nn-par.h"
#include "nn.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define QG_X86 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

GC_NN_O3

#define MR GC_QG_MR
#define NC GC_QG_NC
#define CW (GC_QG_NR * GC_QG_NC) /* a chunk's columns */
#define QG_QSTRIDE GC_QG_QSTRIDE

gc_qgemm_isa gc_qgemm_isa_best(void)
{
	if (gc_reference_kernels())
		return GC_QGEMM_C;
#ifdef QG_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
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

#ifdef QG_X86
enum { ARCH_GET_XCOMP_PERM = 0x1022, ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };

static int amx_cpu;	     /* AMX-INT8 on the CPU, its state enabled by the OS */
static atomic_int amx_granted; /* seen granted (it is never taken back) */

/* AMX-TILE and AMX-INT8 (CPUID leaf 7 EDX bits 24, 25) beside AVX-512
 * VNNI, and the tile state enabled by the OS (XCR0 bits 17, 18). */
static void amx_cpu_init(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
	    !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512vnni") ||
	    !__get_cpuid_count(7, 0, &a, &b, &c, &d) ||
	    !(d >> 24 & 1) || !(d >> 25 & 1) || !__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1))
		return;
	unsigned lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	amx_cpu = (lo >> 17 & 3) == 3;
}

static bool amx_cpu_has(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, amx_cpu_init);
	return amx_cpu;
}

/* Whether Linux lets this process use the tile data (asked by anyone). */
static bool amx_permitted(void)
{
	if (atomic_load_explicit(&amx_granted, memory_order_relaxed))
		return true;
	unsigned long long mask = 0;
	if (syscall(SYS_arch_prctl, ARCH_GET_XCOMP_PERM, &mask) || !(mask >> XFEATURE_XTILEDATA & 1))
		return false;
	atomic_store_explicit(&amx_granted, 1, memory_order_relaxed);
	return true;
}
#endif

bool gc_qgemm_amx_request(void)
{
#ifdef QG_X86
	if (!amx_cpu_has())
		return false;
	if (!amx_permitted())
		syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
	return amx_permitted();
#else
	return false;
#endif
}

gc_qgemm_isa gc_qgemm_isa_gemm(void)
{
	gc_qgemm_isa best = gc_qgemm_isa_best();
#ifdef QG_X86
	if (best == GC_QGEMM_AVX512VNNI && amx_cpu_has() && amx_permitted())
		return GC_QGEMM_AMX;
#endif
	return best;
}

const char *gc_qgemm_isa_name(gc_qgemm_isa isa)
{
	static const char *const names[GC_QGEMM_ISA_COUNT] = { "c", "avx-vnni", "avx512-vnni",
							       "amx" };
	return (unsigned)isa < GC_QGEMM_ISA_COUNT ? names[isa] : "?";
}

int64_t gc_qgemm_b_bytes(int64_t k, int64_t n)
{
	return gc_qg_chunks(n) * NC * gc_qg_k4(k) * GC_QG_NR;
}

GC_NN_SIMD void gc_qgemm_pack_b(const void *b, bool b_unsigned, int64_t k, int64_t n,
				int64_t ldb, int8_t *data, int32_t *colsum)
{
	int64_t kq = gc_qg_k4(k) / 4, np = gc_qg_chunks(n) * NC;
	uint8_t flip = b_unsigned ? 0x80 : 0; /* u8 - 128 as s8: the top bit flipped */
	memset(data, 0, (size_t)gc_qgemm_b_bytes(k, n));
	for (int64_t p = 0; p < np; p++) {
		int64_t j0 = p * GC_QG_NR, nr = n - j0 < GC_QG_NR ? n - j0 : GC_QG_NR;
		/* chunk-major: a quad's NC panels side by side (QG_QSTRIDE bytes) */
		int8_t *dp = data + p / NC * kq * QG_QSTRIDE + p % NC * 64;
		int32_t cs[GC_QG_NR] = { 0 };
		if (nr <= 0)
			continue;
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
				memcpy(dp + t / 4 * QG_QSTRIDE, w, sizeof w);
			}
		for (; t < k; t++) {
			const uint8_t *src = (const uint8_t *)b + t * ldb + j0;
			int8_t *d = dp + t / 4 * QG_QSTRIDE + t % 4;
			for (int64_t jj = 0; jj < nr; jj++) {
				int8_t v = (int8_t)(src[jj] ^ flip);
				d[jj * 4] = v;
				cs[jj] += v;
			}
		}
		memcpy(colsum + j0, cs, (size_t)nr * sizeof *cs);
	}
}

int gc_qgemm_unpack_b(const char *key, const void *src, uint64_t src_bytes, void *dst,
		      uint64_t nbytes)
{
	int64_t k, n;
	int u;
	char tail;
	if (sscanf(key, "q8b1 %" SCNd64 " %" SCNd64 " %d %c", &k, &n, &u, &tail) != 3 || k < 1 ||
	    n < 1 || k > ((int64_t)1 << 30) || n > ((int64_t)1 << 30) || (u != 0 && u != 1) ||
	    (double)k * (double)n != (double)nbytes || nbytes > src_bytes ||
	    (double)gc_qgemm_b_bytes(k, n) + 4.0 * (double)n != (double)src_bytes)
		return GC_EINVAL;
	int64_t kq = gc_qg_k4(k) / 4;
	uint8_t flip = u ? 0x80 : 0;
	for (int64_t t = 0; t < k; t++)
		for (int64_t j = 0; j < n; j++) {
			int64_t p = j / GC_QG_NR;
			const uint8_t *dp = (const uint8_t *)src + p / NC * kq * QG_QSTRIDE + p % NC * 64;
			((uint8_t *)dst)[t * n + j] = dp[t / 4 * QG_QSTRIDE + j % GC_QG_NR * 4 + t % 4] ^ flip;
		}
	return 0;
}

GC_NN_SIMD void gc_qgemm_pack_a(const void *a, bool a_unsigned, int64_t m, int64_t k,
				int64_t lda, uint8_t *data, int32_t *rowsum)
{
	int64_t k4 = gc_qg_k4(k);
	uint8_t flip = a_unsigned ? 0 : 0x80; /* s8 + 128 as u8 */
	for (int64_t i = 0; i < m; i++) {
		const uint8_t *src = (const uint8_t *)a + i * lda;
		uint8_t *d = data + i * k4;
		int32_t s = 0;
		for (int64_t t = 0; t < k; t++) {
			d[t] = src[t] ^ flip;
			s += d[t];
		}
		for (int64_t t = k; t < k4; t++)
			d[t] = 0;
		if (rowsum)
			rowsum[i] = s;
	}
}

/* ---- the cores: acc[r][0..CW) for rows a[0..mr) (qgemm.h's gc_qgemm_tile) ---- */

/* Tap tap's first quad in B's chunk and in A's rows (gc_qgemm_kloop). */
static inline int64_t b_tapoff(const gc_qgemm_kloop *kl, int64_t tap)
{
	return kl->tapoff ? kl->tapoff[tap] : tap * kl->kqt * kl->cs;
}

static inline int64_t a_tapoff(const gc_qgemm_kloop *kl, int64_t tap)
{
	return kl->a_tapoff ? kl->a_tapoff[tap] : tap * kl->kqt * kl->a_ks;
}

static void tile_c(const uint8_t *const *a, int mr, int np, const gc_qgemm_kloop *kl,
		   const int8_t *bp, int32_t *acc)
{
	memset(acc, 0, sizeof(int32_t) * (size_t)(mr * CW));
	for (int64_t tap = 0; tap < kl->ntaps; tap++)
		for (int64_t cq = 0; cq < kl->kqt; cq++) {
			const int8_t *bq = bp + b_tapoff(kl, tap) + cq * kl->cs;
			for (int r = 0; r < mr; r++) {
				const uint8_t *u = a[r] + a_tapoff(kl, tap) + cq * kl->a_ks;
				int32_t *c = acc + r * CW;
				if (kl->a_signed) {
					const int8_t *sa = (const int8_t *)u;
					const uint8_t *ub = (const uint8_t *)bq;
					for (int jj = 0; jj < np * GC_QG_NR; jj++)
						c[jj] += sa[0] * ub[jj * 4] + sa[1] * ub[jj * 4 + 1] +
							 sa[2] * ub[jj * 4 + 2] + sa[3] * ub[jj * 4 + 3];
					continue;
				}
				for (int jj = 0; jj < np * GC_QG_NR; jj++)
					c[jj] += u[0] * bq[jj * 4] + u[1] * bq[jj * 4 + 1] +
						 u[2] * bq[jj * 4 + 2] + u[3] * bq[jj * 4 + 3];
			}
		}
}

#ifdef QG_X86
#define T512 __attribute__((target("avx512f,avx512bw,avx512vnni")))

/* Accumulators v (C's int32 values) to C's bytes as int32: v times the
 * scale sc, clamped to [flo, fhi] = [lo - zy, hi - zy] (integers: rint
 * commutes with the clamp; NaN gives lo - zy, so lo), rounded as it
 * converts, + zy: the values of rint, + zy, clamp in a multiply and four
 * operations. */
__attribute__((target("avx512f"))) static inline __m512i requant16(__m512i v, __m512 sc,
								   __m512 flo, __m512 fhi,
								   __m512i zy)
{
	__m512 f = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(v), sc), flo), fhi);
	return _mm512_add_epi32(_mm512_cvt_roundps_epi32(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
				zy);
}

#define T256 __attribute__((target("avx2,avxvnni")))
#define AI static inline __attribute__((always_inline))

static inline int32_t quad(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* MR_ rows by NP_ panels (constants once inlined): NP_ loads and MR_
 * broadcasts for MR_ NP_ vpdpbusd a quad. */
T512 AI void tile512_n(const uint8_t *const *a, const int mr_, const int np_,
		       const gc_qgemm_kloop *kl, const int8_t *bp, int32_t *acc, const bool sw)
{
	__m512i c[MR][NC];
#pragma GCC unroll 8
	for (int r = 0; r < mr_; r++)
#pragma GCC unroll 3
		for (int p = 0; p < np_; p++)
			c[r][p] = _mm512_setzero_si512();
	const uint8_t *ar[MR];
#pragma GCC unroll 8
	for (int r = 0; r < mr_; r++)
		ar[r] = a[r];
	int64_t kqt = kl->kqt, cs = kl->cs, a_ks = kl->a_ks;
	for (int64_t tap = 0; tap < kl->ntaps; tap++) {
		const int8_t *b = bp + b_tapoff(kl, tap);
		int64_t off = a_tapoff(kl, tap);
		for (int64_t cq = 0; cq < kqt; cq++, b += cs, off += a_ks) {
			__m512i x[NC];
#pragma GCC unroll 3
			for (int p = 0; p < np_; p++)
				x[p] = _mm512_loadu_si512(b + 64 * p);
#pragma GCC unroll 8
			for (int r = 0; r < mr_; r++) {
				__m512i av = _mm512_set1_epi32(quad(ar[r] + off));
#pragma GCC unroll 3
				for (int p = 0; p < np_; p++) /* u8 operand first */
					c[r][p] = sw ? _mm512_dpbusd_epi32(c[r][p], x[p], av)
						     : _mm512_dpbusd_epi32(c[r][p], av, x[p]);
			}
		}
	}
#pragma GCC unroll 8
	for (int r = 0; r < mr_; r++)
#pragma GCC unroll 3
		for (int p = 0; p < np_; p++)
			_mm512_storeu_si512(acc + r * CW + 16 * p, c[r][p]);
}

#define TILE512_NP(np_, sw)                                                                \
	switch (mr) {                                                                       \
	case 1: tile512_n(a, 1, np_, kl, bp, acc, sw); break;                               \
	case 2: tile512_n(a, 2, np_, kl, bp, acc, sw); break;                               \
	case 3: tile512_n(a, 3, np_, kl, bp, acc, sw); break;                               \
	case 4: tile512_n(a, 4, np_, kl, bp, acc, sw); break;                               \
	case 5: tile512_n(a, 5, np_, kl, bp, acc, sw); break;                               \
	case 6: tile512_n(a, 6, np_, kl, bp, acc, sw); break;                               \
	case 7: tile512_n(a, 7, np_, kl, bp, acc, sw); break;                               \
	default: tile512_n(a, 8, np_, kl, bp, acc, sw); break;                              \
	}

/* The tile for u8 A (sw false) or s8 A (sw true): each mr and np its own. */
#define TILE512_FN(name, sw)                                                               \
	T512 static void name(const uint8_t *const *a, int mr, int np,                      \
			      const gc_qgemm_kloop *kl, const int8_t *bp, int32_t *acc)     \
	{                                                                                   \
		if (np == 1)                                                                \
			TILE512_NP(1, sw)                                                   \
		else if (np == 2)                                                           \
			TILE512_NP(2, sw)                                                   \
		else                                                                        \
			TILE512_NP(3, sw)                                                   \
	}

TILE512_FN(tile512_u8a, false)
TILE512_FN(tile512_s8a, true)

/* AVX-VNNI: a panel at a time, four rows by 16 columns (8 accumulators). */
T256 static void tile256(const uint8_t *const *a, int mr, int np, const gc_qgemm_kloop *kl,
			 const int8_t *bp, int32_t *acc)
{
	for (int r0 = 0; r0 < mr; r0 += 4) {
		for (int p = 0; p < np; p++) {
			const uint8_t *ar[4];
			for (int r = 0; r < 4; r++)
				ar[r] = a[r0 + r < mr ? r0 + r : r0];
			__m256i c[4][2];
			for (int r = 0; r < 4; r++)
				c[r][0] = c[r][1] = _mm256_setzero_si256();
			for (int64_t tap = 0; tap < kl->ntaps; tap++) {
				const int8_t *b = bp + b_tapoff(kl, tap) + p * 64;
				int64_t off = a_tapoff(kl, tap);
				for (int64_t cq = 0; cq < kl->kqt; cq++, b += kl->cs, off += kl->a_ks) {
					__m256i x0 = _mm256_loadu_si256((const __m256i *)b);
					__m256i x1 = _mm256_loadu_si256((const __m256i *)(b + 32));
					for (int r = 0; r < 4; r++) {
						__m256i av = _mm256_set1_epi32(quad(ar[r] + off));
						if (kl->a_signed) { /* u8 operand first */
							c[r][0] = _mm256_dpbusd_avx_epi32(c[r][0], x0, av);
							c[r][1] = _mm256_dpbusd_avx_epi32(c[r][1], x1, av);
							continue;
						}
						c[r][0] = _mm256_dpbusd_avx_epi32(c[r][0], av, x0);
						c[r][1] = _mm256_dpbusd_avx_epi32(c[r][1], av, x1);
					}
				}
			}
			for (int r = 0; r < 4 && r0 + r < mr; r++) {
				int32_t *o = acc + (r0 + r) * CW + p * GC_QG_NR;
				_mm256_storeu_si256((__m256i *)o, c[r][0]);
				_mm256_storeu_si256((__m256i *)(o + 8), c[r][1]);
			}
		}
	}
}
#endif

void gc_qgemm_tile(gc_qgemm_isa isa, const uint8_t *const *a, int mr, int np,
		   const gc_qgemm_kloop *kl, const int8_t *bp, int32_t *acc)
{
#ifdef QG_X86
	if (isa == GC_QGEMM_AVX512VNNI) {
		if (kl->a_signed)
			tile512_s8a(a, mr, np, kl, bp, acc);
		else
			tile512_u8a(a, mr, np, kl, bp, acc);
		return;
	}
	if (isa == GC_QGEMM_AVXVNNI) {
		tile256(a, mr, np, kl, bp, acc);
		return;
	}
#endif
	(void)isa;
	tile_c(a, mr, np, kl, bp, acc);
}

/* ---- the epilogue ---- */

int32_t gc_qrequant1(int64_t c, float scale, float zero, float lo, float hi)
{
	float f = rintf((float)c * scale) + zero;
	f = f > lo ? f : lo; /* NaN: lo */
	f = f < hi ? f : hi;
	return (int32_t)f;
}

float gc_qscale(float xs, float ws, double ys)
{
	return (float)((double)(xs * ws) / ys);
}

#ifdef QG_X86
/* epi512's common case: 8-bit output, no column terms but the pixel sums
 * (colv, with rowz). The same operations, the row constants and the
 * column masks read once (not again after each byte store). */
T512 static void epi512_q8(const gc_qgemm_out *o, int64_t i0, int mr, int64_t j0, int nc,
			   const int32_t *acc)
{
	__m512i rc[MR], rz[MR];
	__m512 sc[MR];
	const __m512 flo = _mm512_set1_ps(o->lo - o->zy), fhi = _mm512_set1_ps(o->hi - o->zy);
	const __m512i zy = _mm512_set1_epi32((int32_t)o->zy);
	const int32_t *colv = o->rowz && o->colv ? o->colv + (j0 - o->col0) : NULL;
	char *y = (char *)o->y8 + i0 * o->ldc + j0;
	int64_t ldc = o->ldc;
	for (int r = 0; r < mr; r++) {
		int64_t i = i0 + r;
		rc[r] = _mm512_set1_epi32(o->rowc ? o->rowc[i] : 0);
		rz[r] = _mm512_set1_epi32(o->rowz ? o->rowz[i] : 0);
		sc[r] = _mm512_set1_ps(o->scale[i * o->scale_step]);
	}
	for (int j = 0; j < nc; j += 16) {
		__mmask16 k = gc_lanes16(nc - j);
		__m512i cv = colv ? _mm512_maskz_loadu_epi32(k, colv + j) : _mm512_setzero_si512();
		for (int r = 0; r < mr; r++) {
			__m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + r * CW + j), rc[r]);
			if (colv)
				v = _mm512_sub_epi32(v, _mm512_mullo_epi32(rz[r], cv));
			_mm512_mask_cvtepi32_storeu_epi8(y + r * ldc + j, k,
							 requant16(v, sc[r], flo, fhi, zy));
		}
	}
}

/* gc_qgemm_epilogue in AVX-512, 16 columns at a time (masked at the end). */
T512 static void epi512(const gc_qgemm_out *o, int64_t i0, int mr, int64_t j0, int nc,
			const int32_t *acc)
{
	for (int j = 0; j < nc; j += 16) {
		__mmask16 k = gc_lanes16(nc - j);
		int64_t cj = j0 - o->col0 + j;
		__m512i cv = o->colv ? _mm512_maskz_loadu_epi32(k, o->colv + cj) : _mm512_setzero_si512();
		__m512i cz = o->colz ? _mm512_maskz_loadu_epi32(k, o->colz + cj) : _mm512_setzero_si512();
		__m512i cc = o->colc ? _mm512_maskz_loadu_epi32(k, o->colc + cj) : _mm512_setzero_si512();
		for (int r = 0; r < mr; r++) {
			int64_t i = i0 + r;
			/* masked: a scattered run's acc may end inside the last 16 */
			__m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + r * CW + j), cc);
			if (o->rowc)
				v = _mm512_add_epi32(v, _mm512_set1_epi32(o->rowc[i]));
			if (o->rowz)
				v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(o->rowz[i]), cv));
			if (o->rowy)
				v = _mm512_sub_epi32(v, _mm512_mullo_epi32(_mm512_set1_epi32(o->rowy[i]), cz));
			if (o->f32) {
				__m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(o->scale[0]));
				if (o->colf)
					f = _mm512_add_ps(f, _mm512_maskz_loadu_ps(k, o->colf + cj));
				if (o->frelu) /* x < 0 ? 0 : x, as the Relu kernel */
					f = _mm512_mask_blend_ps(
					    _mm512_cmp_ps_mask(f, _mm512_setzero_ps(), _CMP_LT_OQ), f,
					    _mm512_setzero_ps());
				_mm512_mask_storeu_ps(o->f32 + i * o->ldc + j0 + j, k, f);
				continue;
			}
			if (!o->y8) {
				_mm512_mask_storeu_epi32(o->c32 + i * o->ldc + j0 + j, k, v);
				continue;
			}
			_mm512_mask_cvtepi32_storeu_epi8(
			    (char *)o->y8 + i * o->ldc + j0 + j, k,
			    requant16(v, _mm512_set1_ps(o->scale[i * o->scale_step]),
				      _mm512_set1_ps(o->lo - o->zy), _mm512_set1_ps(o->hi - o->zy),
				      _mm512_set1_epi32((int32_t)o->zy)));
		}
	}
}
#endif

static void epi_c(const gc_qgemm_out *o, int64_t i0, int mr, int64_t j0, int nc,
		  const int32_t *acc);

/* The float output of one row: no multiply-add contraction, so that it
 * rounds as the separate Cast, Mul and Add nodes do. */
__attribute__((optimize("fp-contract=off"), noinline)) static void
epi_f32(const gc_qgemm_out *o, int64_t i, int64_t j0, int nc, const int32_t *v)
{
	float *y = o->f32 + i * o->ldc + j0, s = o->scale[0];
	for (int j = 0; j < nc; j++) {
		float f = (float)v[j] * s;
		if (o->colf)
			f = f + o->colf[j0 - o->col0 + j];
		y[j] = o->frelu && f < 0 ? 0.0f : f; /* as the Relu kernel */
	}
}

void gc_qgemm_epilogue(const gc_qgemm_out *o, int64_t i0, int mr, int64_t j0, int nc,
		       const int32_t *acc)
{
#ifdef QG_X86
	if (o->isa == GC_QGEMM_AVX512VNNI) {
		if (o->y8 && !o->f32 && !o->colc && !o->colz && !o->rowy)
			epi512_q8(o, i0, mr, j0, nc, acc);
		else
			epi512(o, i0, mr, j0, nc, acc);
		return;
	}
#endif
	epi_c(o, i0, mr, j0, nc, acc);
}

#ifdef QG_X86
#define T512VL __attribute__((target("avx512f,avx512bw,avx512vl")))

/* 8 rows of 16 bytes (b[r]) as 16 rows of 8: row c's in the low (c even) or
 * high half of t[c / 2]. */
T512VL static inline void transpose8x16(const __m128i b[8], __m128i t[8])
{
	__m128i p[8], u[8];
	for (int i = 0; i < 4; i++) {
		p[i] = _mm_unpacklo_epi8(b[2 * i], b[2 * i + 1]);
		p[4 + i] = _mm_unpackhi_epi8(b[2 * i], b[2 * i + 1]);
	}
	/* p[i]: rows 2i, 2i + 1 of columns 0..7; p[4 + i]: of columns 8..15 */
	for (int h = 0; h < 2; h++)
		for (int i = 0; i < 2; i++) {
			u[4 * h + i] = _mm_unpacklo_epi16(p[4 * h + 2 * i], p[4 * h + 2 * i + 1]);
			u[4 * h + 2 + i] = _mm_unpackhi_epi16(p[4 * h + 2 * i], p[4 * h + 2 * i + 1]);
		}
	/* u[4h + i]: rows 4i..4i+3 of columns 8h + 0..3; u[4h + 2 + i]: of 8h + 4..7 */
	for (int g = 0; g < 4; g++) {
		t[2 * g] = _mm_unpacklo_epi32(u[2 * g], u[2 * g + 1]);
		t[2 * g + 1] = _mm_unpackhi_epi32(u[2 * g], u[2 * g + 1]);
	}
}

/* gc_qgemm_epilogue_t's common case (epi512_q8's): a pixel row of 16
 * channels at a time, their bytes transposed, mr bytes stored a channel. */
T512VL static void epi512_q8_t(const gc_qgemm_out *o, int64_t i0, int nc, int64_t j0, int mr,
			       const int32_t *acc)
{
	const __m512 flo = _mm512_set1_ps(o->lo - o->zy), fhi = _mm512_set1_ps(o->hi - o->zy);
	const __m512i zy = _mm512_set1_epi32((int32_t)o->zy);
	const int32_t *colv = o->rowz && o->colv ? o->colv + (j0 - o->col0) : NULL;
	__mmask16 rows = (__mmask16)((1u << mr) - 1);
	for (int c = 0; c < nc; c += 16) {
		__mmask16 k = gc_lanes16(nc - c);
		int64_t i = i0 + c;
		__m512i rc = o->rowc ? _mm512_maskz_loadu_epi32(k, o->rowc + i) : _mm512_setzero_si512();
		__m512i rz = colv ? _mm512_maskz_loadu_epi32(k, o->rowz + i) : _mm512_setzero_si512();
		__m512 sc = o->scale_step ? _mm512_maskz_loadu_ps(k, o->scale + i)
					  : _mm512_set1_ps(o->scale[0]);
		__m128i b[8], t[8];
		for (int r = 0; r < 8; r++) {
			if (r >= mr) {
				b[r] = _mm_setzero_si128();
				continue;
			}
			__m512i v = _mm512_add_epi32(_mm512_maskz_loadu_epi32(k, acc + r * CW + c), rc);
			if (colv)
				v = _mm512_sub_epi32(v, _mm512_mullo_epi32(rz, _mm512_set1_epi32(colv[r])));
			b[r] = _mm512_cvtepi32_epi8(requant16(v, sc, flo, fhi, zy));
		}
		transpose8x16(b, t);
		char *y = (char *)o->y8 + i * o->ldc + j0;
		for (int cc = 0; cc < 16 && c + cc < nc; cc++) {
			__m128i v = cc % 2 ? _mm_unpackhi_epi64(t[cc / 2], t[cc / 2]) : t[cc / 2];
			_mm_mask_storeu_epi8(y + cc * o->ldc, rows, v);
		}
	}
}
#endif

void gc_qgemm_epilogue_t(const gc_qgemm_out *o, int64_t i0, int nc, int64_t j0, int mr,
			 const int32_t *acc)
{
#ifdef QG_X86
	if (o->isa == GC_QGEMM_AVX512VNNI && o->y8 && !o->f32 && !o->colc && !o->colz && !o->rowy) {
		epi512_q8_t(o, i0, nc, j0, mr, acc);
		return;
	}
#endif
	/* else transposed back, 8 of C's rows at a time */
	int32_t tr[MR * CW];
	for (int c = 0; c < nc; c += MR) {
		int mc = nc - c < MR ? nc - c : MR;
		for (int i = 0; i < mc; i++)
			for (int r = 0; r < mr; r++)
				tr[i * CW + r] = acc[r * CW + c + i];
		gc_qgemm_epilogue(o, i0 + c, mc, j0, mr, tr);
	}
}

/* The sums in uint32: they wrap as the int32 result does. */
GC_NN_SIMD static void epi_c(const gc_qgemm_out *o, int64_t i0, int mr, int64_t j0, int nc,
			     const int32_t *acc)
{
	uint32_t cv[CW] = { 0 }, cz[CW] = { 0 }, cc[CW] = { 0 };
	for (int j = 0; o->colc && j < nc; j++)
		cc[j] = (uint32_t)o->colc[j0 - o->col0 + j];
	for (int j = 0; o->colv && j < nc; j++)
		cv[j] = (uint32_t)o->colv[j0 - o->col0 + j];
	for (int j = 0; o->colz && j < nc; j++)
		cz[j] = (uint32_t)o->colz[j0 - o->col0 + j];
	for (int r = 0; r < mr; r++) {
		int64_t i = i0 + r;
		uint32_t rc = o->rowc ? (uint32_t)o->rowc[i] : 0, rz = o->rowz ? (uint32_t)o->rowz[i] : 0,
			 ry = o->rowy ? (uint32_t)o->rowy[i] : 0;
		const int32_t *a = acc + r * CW;
		int32_t v[CW];
		for (int j = 0; j < nc; j++)
			v[j] = (int32_t)((uint32_t)a[j] + cc[j] + rc - rz * cv[j] - ry * cz[j]);
		if (o->f32) {
			epi_f32(o, i, j0, nc, v);
			continue;
		}
		if (!o->y8) {
			memcpy(o->c32 + i * o->ldc + j0, v, (size_t)nc * 4);
			continue;
		}
		float s = o->scale[i * o->scale_step], zy = o->zy, lo = o->lo, hi = o->hi;
		if (o->y_unsigned) {
			uint8_t *y = (uint8_t *)o->y8 + i * o->ldc + j0;
			for (int j = 0; j < nc; j++) {
				float f = rintf((float)v[j] * s) + zy;
				f = f > lo ? f : lo;
				f = f < hi ? f : hi;
				y[j] = (uint8_t)(int32_t)f;
			}
		} else {
			int8_t *y = (int8_t *)o->y8 + i * o->ldc + j0;
			for (int j = 0; j < nc; j++) {
				float f = rintf((float)v[j] * s) + zy;
				f = f > lo ? f : lo;
				f = f < hi ? f : hi;
				y[j] = (int8_t)(int32_t)f;
			}
		}
	}
}

/* ---- gc_qgemm ---- */

static bool a_copied(int64_t k, bool a_unsigned)
{
	return !a_unsigned || k % 4;
}

uint64_t gc_qgemm_work_bytes(int64_t m, int64_t k, int64_t n, bool a_unsigned)
{
	uint64_t copy = a_copied(k, a_unsigned) ? gc_nn_align((uint64_t)(m * gc_qg_k4(k))) : 0;
	return copy + 3 * gc_nn_align((uint64_t)m * 4) + 2 * gc_nn_align((uint64_t)n * 4);
}

typedef struct qjob {
	gc_qgemm_isa isa;
	const uint8_t *a;
	int64_t lda, m, n, kq, row_tiles;
	const int8_t *b;
	gc_qgemm_out out;
} qjob;

static void part(void *arg, int p, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	int64_t lo, hi;
	gc_nn_part_range(j->row_tiles * gc_qg_chunks(j->n), p, parts, &lo, &hi);
	int32_t acc[MR * CW];
	for (int64_t t = lo; t < hi; t++) {
		/* row tiles fastest: a chunk of B stays in cache while A's rows pass */
		int64_t i0 = t % j->row_tiles * MR, ch = t / j->row_tiles, j0 = ch * CW;
		int mr = j->m - i0 < MR ? (int)(j->m - i0) : MR;
		const uint8_t *rows[MR];
		for (int r = 0; r < mr; r++)
			rows[r] = j->a + (i0 + r) * j->lda;
		gc_qgemm_kloop kl = { .a_ks = 4, .ntaps = 1, .kqt = j->kq, .cs = QG_QSTRIDE };
		int nc = j->n - j0 < CW ? (int)(j->n - j0) : CW;
		gc_qgemm_tile(j->isa, rows, mr, (nc + GC_QG_NR - 1) / GC_QG_NR, &kl,
			      j->b + ch * j->kq * QG_QSTRIDE, acc);
		gc_qgemm_epilogue(&j->out, i0, mr, j0, nc, acc);
	}
}

#ifdef QG_X86
/*
 * The AMX blocks of gc_qgemm: 16 rows by a chunk (3 panels of 16 columns).
 * Tiles 0-2 hold the chunk's three 16 x 16 int32 sums, 3 sixteen rows of A
 * by 16 quads (64 bytes), 4-6 the three panels' 16 quads: a packed chunk's
 * quad is its 3 panels side by side (QG_QSTRIDE bytes), so a panel's 16
 * quads load as a tile with that stride. One configuration for all.
 */
#define TAMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vnni")))

typedef struct amx_cfg {
	uint8_t palette, start_row, reserved[14];
	uint16_t colsb[16];
	uint8_t rows[16];
} amx_cfg;

TAMX static void amx_config(void)
{
	amx_cfg c;
	memset(&c, 0, sizeof c);
	c.palette = 1;
	for (int t = 0; t < 7; t++) {
		c.colsb[t] = 64;
		c.rows[t] = 16;
	}
	_tile_loadconfig(&c);
}

/* acc (row stride CW) = the sums over quads [0, kq16) (a multiple of 16)
 * of rows a (stride lda) and the np panels of the chunk at bp. */
TAMX static void amx_block(const uint8_t *a, int64_t lda, int np, int64_t kq16,
			   const int8_t *bp, int32_t *acc)
{
	_tile_zero(0);
	_tile_zero(1);
	_tile_zero(2);
	for (int64_t q = 0; q < kq16; q += 16) {
		const int8_t *b = bp + q * QG_QSTRIDE;
		_tile_loadd(3, a + q * 4, lda);
		_tile_loadd(4, b, QG_QSTRIDE);
		_tile_dpbusd(0, 3, 4);
		if (np > 1) {
			_tile_loadd(5, b + 64, QG_QSTRIDE);
			_tile_dpbusd(1, 3, 5);
		}
		if (np > 2) {
			_tile_loadd(6, b + 128, QG_QSTRIDE);
			_tile_dpbusd(2, 3, 6);
		}
	}
	_tile_stored(0, acc, CW * 4);
	_tile_stored(1, acc + 16, CW * 4);
	_tile_stored(2, acc + 32, CW * 4);
}

/* Blocks of 16 rows and a chunk, row blocks fastest. Rows past the last
 * whole block, and the quads past the last 16, go to the AVX-512 VNNI
 * tile (8 rows at a time). */
TAMX static void part_amx(void *arg, int p, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	int64_t blocks = (j->m + 15) / 16, lo, hi, kq16 = j->kq / 16 * 16;
	gc_nn_part_range(blocks * gc_qg_chunks(j->n), p, parts, &lo, &hi);
	int32_t acc[16 * CW], tail[MR * CW];
	amx_config();
	for (int64_t t = lo; t < hi; t++) {
		int64_t i0 = t % blocks * 16, ch = t / blocks, j0 = ch * CW;
		int mr = j->m - i0 < 16 ? (int)(j->m - i0) : 16;
		int nc = j->n - j0 < CW ? (int)(j->n - j0) : CW, np = (nc + GC_QG_NR - 1) / GC_QG_NR;
		const int8_t *bp = j->b + ch * j->kq * QG_QSTRIDE;
		if (mr == 16)
			amx_block(j->a + i0 * j->lda, j->lda, np, kq16, bp, acc);
		for (int r0 = 0; r0 < mr; r0 += MR) {
			int rows_n = mr - r0 < MR ? mr - r0 : MR, whole = mr == 16;
			int64_t q0 = whole ? kq16 : 0;
			const uint8_t *rows[MR];
			for (int r = 0; r < rows_n; r++)
				rows[r] = j->a + (i0 + r0 + r) * j->lda + q0 * 4;
			int32_t *out = acc + r0 * CW;
			if (q0 < j->kq) {
				gc_qgemm_kloop kl = { .a_ks = 4, .ntaps = 1, .kqt = j->kq - q0,
						      .cs = QG_QSTRIDE };
				gc_qgemm_tile(j->isa, rows, rows_n, np, &kl,
					      bp + q0 * QG_QSTRIDE, whole ? tail : out);
				for (int i = 0; whole && i < rows_n * CW; i++)
					out[i] += tail[i];
			}
			gc_qgemm_epilogue(&j->out, i0 + r0, rows_n, j0, nc, out);
		}
	}
	_tile_release();
}
#endif

static int32_t zp_value(const void *z, bool is_unsigned, int64_t i)
{
	if (!z)
		return 0;
	return is_unsigned ? ((const uint8_t *)z)[i] : ((const int8_t *)z)[i];
}

void gc_qgemm(gc_qgemm_isa isa, int threads, const void *a, bool a_unsigned, int64_t lda,
	      int64_t m, const gc_qgemm_b *b, const gc_qgemm_zp *zp, int32_t *c, int64_t ldc,
	      const gc_qgemm_out *req, void *work)
{
	int64_t k = b->k, n = b->n;
	if (m <= 0 || n <= 0)
		return;
	char *w = work;
	const uint8_t *arows = a;
	int32_t *rowsum;
	bool b_u = b->shift != 0;
	bool zb_any = b->shift != 0;
	for (int64_t j = 0; zp->zb && j < (zp->zb_cols ? n : 1) && !zb_any; j++)
		zb_any = zp_value(zp->zb, b_u, j) != 0;
	if (a_copied(k, a_unsigned)) {
		uint8_t *ac = (uint8_t *)w;
		w += gc_nn_align((uint64_t)(m * gc_qg_k4(k)));
		rowsum = (int32_t *)w;
		gc_qgemm_pack_a(a, a_unsigned, m, k, lda, ac, zb_any ? rowsum : NULL);
		arows = ac;
		lda = gc_qg_k4(k);
	} else {
		rowsum = (int32_t *)w;
		for (int64_t i = 0; zb_any && i < m; i++) {
			int32_t s = 0;
			for (int64_t t = 0; t < k; t++)
				s += ((const uint8_t *)a)[i * lda + t];
			rowsum[i] = s;
		}
	}
	w += gc_nn_align((uint64_t)m * 4);
	int32_t *rowc = (int32_t *)w, *rowz = rowc + gc_nn_align((uint64_t)m * 4) / 4;
	int32_t *colv = rowz + gc_nn_align((uint64_t)m * 4) / 4;
	int32_t *colz = colv + gc_nn_align((uint64_t)n * 4) / 4;
	int32_t a_shift = a_unsigned ? 0 : 128;
	bool za_any = a_shift != 0;
	for (int64_t i = 0; i < m; i++) {
		rowz[i] = zp_value(zp->za, a_unsigned, zp->za_rows ? i : 0) + a_shift;
		za_any |= rowz[i] != 0;
	}
	for (int64_t j = 0; j < n; j++) {
		colz[j] = zp_value(zp->zb, b_u, zp->zb_cols ? j : 0) - b->shift;
		colv[j] = (int32_t)((uint32_t)b->colsum[j] - (uint32_t)k * (uint32_t)colz[j]);
	}
	/* the vector core of the tiles and the epilogue (AMX: AVX-512 VNNI) */
	gc_qgemm_isa vec = isa == GC_QGEMM_AMX ? GC_QGEMM_AVX512VNNI : isa;
	qjob j = { .isa = vec, .a = arows, .lda = lda, .m = m, .n = n, .kq = gc_qg_k4(k) / 4,
		   .row_tiles = (m + MR - 1) / MR, .b = b->data };
	if (req)
		j.out = *req;
	else
		j.out = (gc_qgemm_out){ .c32 = c, .ldc = ldc };
	j.out.rowz = za_any ? rowz : NULL;
	j.out.colv = colv;
	j.out.rowc = j.out.rowy = j.out.colz = NULL;
	j.out.col0 = 0;
	j.out.isa = vec;
	if (zb_any && !zp->zb_cols) {
		for (int64_t i = 0; i < m; i++)
			rowc[i] = (int32_t)(0u - (uint32_t)colz[0] * (uint32_t)rowsum[i]);
		j.out.rowc = rowc;
	} else if (zb_any) {
		j.out.rowy = rowsum;
		j.out.colz = colz;
	}
	int64_t tiles = j.row_tiles * gc_qg_chunks(n);
	double cycles = (double)(j.row_tiles * MR) * (double)(gc_qg_chunks(n) * CW) *
			(double)gc_qg_k4(k) / (isa == GC_QGEMM_C ? 2 : 64);
	int t = gc_nn_par_threads(threads, cycles);
#ifdef QG_X86
	/* AMX: blocks of 16 rows with 16 quads of k or more */
	if (isa == GC_QGEMM_AMX && m >= 16 && j.kq >= 16) {
		gc_nn_run_parts(t, (m + 15) / 16 * gc_qg_chunks(n), part_amx, &j);
		return;
	}
#endif
	gc_nn_run_parts(t, tiles, part, &j);
}

/* ---- DynamicQuantizeLinear's loops ---- */

#ifdef QG_X86
/*
 * rint(x / scale) + zero clamped to [lo, hi] (NaN: 0), for 16 floats,
 * mostly without a division (vdivps is ~10 cycles a vector, most of a
 * quantize loop's time): y = x * r, r = 1 / scale, is within 2^-12 of the
 * quotient while |y| <= 2^11 (beyond, y and the quotient both saturate: a
 * zero point lies in [-128, 255]), so rint(y) is rint(x / scale) unless y
 * is within 2^-10 of a half-way point; a vector with such a lane (or a NaN,
 * an infinity) is divided. Bit for bit the division loop's result, for
 * scale in [2^-100, 2^100].
 */
T512 static inline __m512 quant16(__m512 x, __m512 sc, __m512 r, __m512 zero, __m512 lo,
				  __m512 hi)
{
	__m512 y = _mm512_mul_ps(x, r);
	__m512 t = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m512 d = _mm512_abs_ps(_mm512_sub_ps(y, t)); /* NaN for a NaN or an infinity */
	if (_mm512_cmp_ps_mask(d, _mm512_set1_ps(0.5f - 0x1p-10f), _CMP_NLT_UQ)) {
		t = _mm512_roundscale_ps(_mm512_div_ps(x, sc),
					 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
		t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), t,
					 _mm512_sub_ps(_mm512_setzero_ps(), zero)); /* NaN: 0 */
	}
	return _mm512_min_ps(_mm512_max_ps(_mm512_add_ps(t, zero), lo), hi);
}

static bool quant16_ok(float scale)
{
	return gc_qgemm_isa_best() == GC_QGEMM_AVX512VNNI && scale >= 0x1p-100f &&
	       scale <= 0x1p100f;
}

/* n floats of x quantized (quant16) to bytes of y, signed or not. */
T512 static void quantize512(const float *x, int64_t n, float scale, float zero, bool to_unsigned,
			     void *y)
{
	__m512 sc = _mm512_set1_ps(scale), r = _mm512_set1_ps(1.0f / scale);
	__m512 z = _mm512_set1_ps(zero), lo = _mm512_set1_ps(to_unsigned ? 0.0f : -128.0f),
	       hi = _mm512_set1_ps(to_unsigned ? 255.0f : 127.0f);
	int64_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512i q = _mm512_cvtps_epi32(quant16(_mm512_loadu_ps(x + i), sc, r, z, lo, hi));
		_mm_storeu_si128((__m128i *)((char *)y + i), to_unsigned ? _mm512_cvtusepi32_epi8(q)
									 : _mm512_cvtsepi32_epi8(q));
	}
	if (i < n) {
		__mmask16 k = (__mmask16)((1u << (n - i)) - 1);
		__m512i q = _mm512_cvtps_epi32(quant16(_mm512_maskz_loadu_ps(k, x + i), sc, r, z, lo, hi));
		if (to_unsigned)
			_mm512_mask_cvtusepi32_storeu_epi8((uint8_t *)y + i, k, q);
		else
			_mm512_mask_cvtsepi32_storeu_epi8((int8_t *)y + i, k, q);
	}
}
#endif

#ifdef QG_X86
/* Four 16-lane minima and maxima; vminps keeps the lane's value when x is
 * NaN (it returns its second operand then). */
T512 static void range512(const float *x, int64_t total, float *lo, float *hi)
{
	__m512 mn[4], mx[4];
	for (int l = 0; l < 4; l++)
		mn[l] = mx[l] = _mm512_setzero_ps();
	int64_t i = 0;
	for (; i + 64 <= total; i += 64)
		for (int l = 0; l < 4; l++) {
			__m512 v = _mm512_loadu_ps(x + i + 16 * l);
			mn[l] = _mm512_min_ps(v, mn[l]);
			mx[l] = _mm512_max_ps(v, mx[l]);
		}
	for (; i < total; i += 16) {
		__mmask16 k = total - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (total - i)) - 1);
		__m512 v = _mm512_maskz_loadu_ps(k, x + i); /* 0 past the end: min(0, x) anyway */
		mn[0] = _mm512_min_ps(v, mn[0]);
		mx[0] = _mm512_max_ps(v, mx[0]);
	}
	for (int l = 1; l < 4; l++) {
		mn[0] = _mm512_min_ps(mn[l], mn[0]);
		mx[0] = _mm512_max_ps(mx[l], mx[0]);
	}
	*lo = _mm512_reduce_min_ps(mn[0]);
	*hi = _mm512_reduce_max_ps(mx[0]);
}
#endif

GC_NN_SIMD static void range_c(const float *x, int64_t total, float *lo, float *hi)
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

void gc_qdyn_range(const float *x, int64_t total, float *lo, float *hi)
{
#ifdef QG_X86
	if (gc_qgemm_isa_best() == GC_QGEMM_AVX512VNNI) {
		range512(x, total, lo, hi);
		return;
	}
#endif
	range_c(x, total, lo, hi);
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

GC_NN_SIMD void gc_qquantize_f32(const float *x, int64_t n, float scale, float zero,
				 bool to_unsigned, void *y)
{
#ifdef QG_X86
	if (quant16_ok(scale)) {
		quantize512(x, n, scale, zero, to_unsigned, y);
		return;
	}
#endif
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
