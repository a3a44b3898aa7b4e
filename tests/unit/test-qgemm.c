/*
 * The integer GEMM of the quantized ops (runtime/kernels/qgemm.c) against a
 * plain int64 triple loop, exactly: every core this CPU has (plain C,
 * AVX-VNNI, AVX-512 VNNI), every type pair (uint8/int8 A and B), zero
 * points absent, per tensor, per row of A and per column of B, the byte
 * extremes (0, 255, -128, 127), sizes around the 8-row tiles, 4-byte
 * quads, 16-column panels and 48-column chunks, and AMX's 16-row blocks and
 * 16 quads of k (whole, and with rows and quads left over: AMX where the
 * CPU and OS allow), on one and on two threads;
 * and the epilogue's requantization against gc_qrequant1 of the exact sums;
 * the quantize loops bit for bit against the division they stand for.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <graphcc/runtime.h>

#include "check.h"
#include "kernels/nn-par.h"
#include "kernels/qconv.h"
#include "kernels/qgemm.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

/* Random bytes, a quarter of them at the type's extremes. */
static void fill(uint8_t *p, int64_t n)
{
	static const uint8_t edge[] = { 0, 255, 0x80, 0x7f };
	for (int64_t i = 0; i < n; i++)
		p[i] = rnd() % 4 == 0 ? edge[rnd() % 4] : (uint8_t)rnd();
}

static int32_t val(const uint8_t *p, bool u, int64_t i)
{
	return u ? p[i] : (int8_t)p[i];
}

static int run_case(gc_qgemm_isa isa, int threads, int64_t m, int64_t k, int64_t n, bool au,
		    bool bu, int zmode)
{
	uint8_t *a = malloc((size_t)(m * k + 1)), *b = malloc((size_t)(k * n + 1));
	uint8_t za[128], zb[128]; /* per row / column: m, n <= 128 */
	int8_t *pk = malloc((size_t)gc_qgemm_b_bytes(k, n));
	int32_t *cs = malloc((size_t)n * 4), *c = malloc((size_t)(m * n) * 4);
	fill(a, m * k);
	fill(b, k * n);
	fill(za, 128);
	fill(zb, 128);
	gc_qgemm_pack_b(b, bu, k, n, n, pk, cs);
	gc_qgemm_b pb = { k, n, pk, cs, bu ? 128 : 0 };
	/* zmode 0: none, 1: per tensor, 2: per row / per column */
	gc_qgemm_zp zp = { zmode ? za : NULL, zmode ? zb : NULL, zmode == 2, zmode == 2 };
	void *work = malloc((size_t)gc_qgemm_work_bytes(m, k, n, au));
	gc_qgemm(isa, threads, a, au, k, m, &pb, &zp, c, n, NULL, work);
	/* requantized by the epilogue: per tensor scale, uint8 or int8 */
	bool yu = rnd() % 2;
	float scale = 1.0f / (float)(1 + rnd() % 5000), zy = (float)(rnd() % 50);
	uint8_t *y8 = malloc((size_t)(m * n));
	gc_qgemm_out req = { .ldc = n, .y_unsigned = yu, .scale = &scale, .zy = zy,
			     .lo = yu ? 0.0f : -128.0f, .hi = yu ? 255.0f : 127.0f, .y8 = y8 };
	gc_qgemm(isa, threads, a, au, k, m, &pb, &zp, NULL, n, &req, work);
	free(work);
	int bad = 0;
	for (int64_t i = 0; i < m && !bad; i++)
		for (int64_t j = 0; j < n && !bad; j++) {
			int64_t zai = zmode ? val(za, au, zmode == 2 ? i : 0) : 0;
			int64_t zbj = zmode ? val(zb, bu, zmode == 2 ? j : 0) : 0;
			int64_t want = 0;
			for (int64_t t = 0; t < k; t++)
				want += (val(a, au, i * k + t) - zai) * (val(b, bu, t * n + j) - zbj);
			int32_t q = gc_qrequant1(want, scale, zy, req.lo, req.hi);
			int32_t got = yu ? y8[i * n + j] : (int8_t)y8[i * n + j];
			if (q != got) {
				fprintf(stderr, "%s: requantized C[%lld][%lld] = %d, want %d\n",
					gc_qgemm_isa_name(isa), (long long)i, (long long)j, got, q);
				bad = 1;
			}
			if (want != c[i * n + j]) {
				fprintf(stderr,
					"%s, %d threads, m %lld k %lld n %lld, A %s B %s, zero points "
					"%d: C[%lld][%lld] = %d, want %lld\n",
					gc_qgemm_isa_name(isa), threads, (long long)m, (long long)k,
					(long long)n, au ? "u8" : "s8", bu ? "u8" : "s8", zmode,
					(long long)i, (long long)j, c[i * n + j], (long long)want);
				bad = 1;
			}
		}
	free(a);
	free(b);
	free(pk);
	free(cs);
	free(c);
	free(y8);
	return bad;
}

/* CPUID leaf 7, subleaf 1, EAX bit 4 */
static bool avx_vnni(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	unsigned a = 0, b = 0, c = 0, d = 0;
	return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1);
#else
	return false;
#endif
}

/* The CPU has AMX-INT8 beside AVX-512 VNNI, its state enabled by the OS
 * (CPUID leaf 7 EDX bits 24, 25; OSXSAVE; XCR0 bits 17, 18). */
static bool cpu_amx(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	unsigned a = 0, b = 0, c = 0, d = 0, lo, hi;
	if (gc_qgemm_isa_best() != GC_QGEMM_AVX512VNNI || !__get_cpuid_count(7, 0, &a, &b, &c, &d) ||
	    !(d >> 24 & 1) || !(d >> 25 & 1) || !__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1))
		return false;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo >> 17 & 3) == 3;
#else
	return false;
#endif
}

/* Whether Linux lets this process use the AMX tile data. */
static bool amx_permitted(void)
{
#if defined(__x86_64__) && defined(__linux__)
	unsigned long long mask = 0;
	return !syscall(SYS_arch_prctl, 0x1022 /* ARCH_GET_XCOMP_PERM */, &mask) && (mask >> 18 & 1);
#else
	return false;
#endif
}

/* The library changes nothing of its host by itself (runtime.h): without
 * gc_init_options.amx it neither asks Linux for the tile state nor uses
 * AMX; with it, it does exactly when the CPU has AMX. (First in this file:
 * the permission, once given, stays for the process.) */
static void test_amx_opt_in(void)
{
	bool has = cpu_amx();
	if (!amx_permitted()) {
		CHECK_INT(gc_runtime_init(NULL, NULL), 0);
		CHECK(!amx_permitted());
		CHECK(gc_qgemm_isa_gemm() != GC_QGEMM_AMX);
	}
	CHECK_INT(gc_runtime_init(&(gc_init_options){ .amx = 1 }, NULL), 0);
	CHECK_INT(amx_permitted(), has);
	CHECK_INT(gc_qgemm_isa_gemm() == GC_QGEMM_AMX, has);
	CHECK_INT(gc_runtime_init(NULL, NULL), 0);
	printf("amx: %s\n", has ? "used once asked for" : "not on this CPU");
}

static void test_qgemm_exact(void)
{
	gc_qgemm_amx_request(); /* so that the AMX blocks are tested where the CPU has them */
	static const int64_t ms[] = { 1, 3, 4, 8, 9, 16, 17, 33, 48 },
			     ks[] = { 1, 3, 4, 5, 7, 64, 130, 196, 256 },
			     ns[] = { 1, 15, 16, 17, 33, 47, 48, 49, 100 };
	gc_qgemm_isa best = gc_qgemm_isa_gemm();
	int failed = 0, runs = 0;
	gc_nn_par_acquire();
	for (int isa = GC_QGEMM_C; isa <= (int)best; isa++) {
		if (isa == GC_QGEMM_AVXVNNI && best == GC_QGEMM_AVX512VNNI && !avx_vnni())
			continue;
		for (size_t mi = 0; mi < 9; mi++)
			for (size_t ki = 0; ki < 9; ki++)
				for (size_t ni = 0; ni < 9; ni++) {
					int combo = (int)(rnd() % 4), zmode = (int)(rnd() % 3);
					int threads = 1 + (int)(rnd() % 2);
					failed += run_case((gc_qgemm_isa)isa, threads, ms[mi], ks[ki],
							   ns[ni], combo & 1, combo >> 1, zmode);
					runs++;
				}
	}
	gc_nn_par_release();
	printf("qgemm: %d cases up to %s\n", runs, gc_qgemm_isa_name(best));
	CHECK_INT(failed, 0);
}

/* The convolution's work items for th threads (qconv.c): at least 4 a
 * thread where the row tiles allow, and a multiple of th when one of the th
 * counts from there is (56x56 on 2 threads: 9 blocks of chunks, 18 items). */
static void test_qconv_split_rows(void)
{
	CHECK_INT(9 * gc_qconv_split_rows(2, 9, 8), 18);
	for (int th = 1; th <= 4; th++)
		for (int64_t blocks = 1; blocks <= 40; blocks++)
			for (int64_t tiles = 1; tiles <= 64; tiles++) {
				int64_t c = gc_qconv_split_rows(th, blocks, tiles);
				CHECK(c >= 1 && c <= tiles);
				if (th == 1) {
					CHECK_INT(c, 1);
					continue;
				}
				int64_t r = (4 * th + blocks - 1) / blocks;
				CHECK(c >= (r < tiles ? r : tiles));
				bool even = false;
				for (int64_t d = r; d < r + th && d <= tiles; d++)
					even |= blocks * d % th == 0;
				CHECK(!even || blocks * c % th == 0);
			}
}

/* The quantize loop (QuantizeLinear's, DynamicQuantizeLinear's store)
 * against rintf(x / scale) + zero saturated, NaN 0, written out here: bit
 * for bit, on the half-way points k + 1/2 (times the scale, and the floats
 * beside them), random values, zeros, infinities, NaN, huge and tiny ones,
 * over scales from 2^-110 to 2^110, zero points at both ends. */
static void test_quantize_exact(void)
{
	enum { N = 4099 };
	static float x[N];
	static uint8_t got[N];
	const float zeros_u[] = { 0, 1, 128, 255 }, zeros_s[] = { -128, -1, 0, 127 };
	int bad = 0, cases = 0;
	for (int si = 0; si < 40; si++) {
		float scale = si < 4 ? (float[]){ 1.0f / 255, 0.0123f, 3.0f, 1.0f }[si]
				     : ldexpf(1.0f + (float)(rnd() % 1000) / 1000, (int)(rnd() % 221) - 110);
		for (int i = 0; i < N; i++) {
			float h = ((float)(int)(rnd() % 801) - 400.5f) * scale, v;
			switch (rnd() % 8) {
			case 0: v = h; break;
			case 1: v = nextafterf(h, INFINITY); break;
			case 2: v = nextafterf(h, -INFINITY); break;
			case 3: v = ((float)rnd() / 4294967296.0f - 0.5f) * 600 * scale; break;
			case 4: v = (float[]){ 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3e38f, -3e38f,
					       1e-38f, -1e-45f }[rnd() % 9];
				break;
			default: v = (float)(int)(rnd() % 512 - 256) * scale; break;
			}
			x[i] = v;
		}
		for (int zi = 0; zi < 8; zi++) {
			bool u = zi < 4;
			float zero = u ? zeros_u[zi] : zeros_s[zi - 4];
			int n = N - (int)(rnd() % 20);
			gc_qquantize_f32(x, n, scale, zero, u, got);
			cases++;
			for (int i = 0; i < n && !bad; i++) {
				float w = rintf(x[i] / scale) + zero, lo = u ? 0 : -128, hi = u ? 255 : 127;
				w = w != w ? 0 : w < lo ? lo : w > hi ? hi : w;
				int g = u ? got[i] : (int8_t)got[i];
				if (g != (int)w) {
					fprintf(stderr, "quantize %a / %a + %g: %d, want %d\n", (double)x[i],
						(double)scale, (double)zero, g, (int)w);
					bad = 1;
				}
			}
		}
	}
	printf("quantize: %d cases\n", cases);
	CHECK_INT(bad, 0);
}

TEST_MAIN(TEST(test_amx_opt_in), TEST(test_qgemm_exact), TEST(test_qconv_split_rows), TEST(test_quantize_exact))
