/*
 * The integer convolution (runtime/kernels/qconv.c) on every core this CPU
 * has (plain C, AVX-VNNI, AVX-512 VNNI) against a plain int64 loop, exactly:
 * the channel-quad path (stride 1, dilations, uneven pads, strides as
 * phases, channels not a multiple of 4, groups, 3-D; pixels as the tiles'
 * rows where the planner picks them, on up to 4 threads) and the im2col blocks
 * (stride with dilation), uint8/int8 x and w, zero points (w's per output
 * channel), the int32 output and the requantized one (per-channel scale,
 * bias, Relu) against gc_qrequant1 of the exact sums, on one and two
 * threads. (The e2e quant/int8-conv checks the same kernels through
 * graphcc run against NumPy, on this CPU's best core only.)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "check.h"
#include "kernels/nn-par.h"
#include "kernels/qconv.h"

static uint64_t rng_state = 0x2545f4914f6cdd1du;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static int32_t val(const uint8_t *p, bool u, int64_t i)
{
	return u ? p[i] : (int8_t)p[i];
}

typedef struct ccase {
	int64_t c, h, w, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
	int64_t d, kd, pd; /* 3-D: depth, kernel depth, pads on both ends (0: 2-D) */
} ccase;

/* y[m][od][oh][ow] = sum (x - zx)(w - zw[m]) (+ bias), int64. */
static void reference(const ccase *t, const gc_qconv *q, const uint8_t *x, const uint8_t *w,
		      int32_t zx, const uint8_t *zw, const int32_t *bias, int64_t *y)
{
	int64_t cg = t->c / t->group, mg = t->m / t->group, oh = q->out[1], ow = q->out[2];
	int64_t d = q->in[0], kd = q->k[0], pd = q->pad[0], od = q->out[0];
	for (int64_t m = 0; m < t->m; m++)
		for (int64_t z = 0; z < od * oh; z++)
			for (int64_t j = 0; j < ow; j++) {
				int64_t acc = bias[m], g = m / mg, i = z % oh;
				for (int64_t ci = 0; ci < cg; ci++)
					for (int64_t e = 0; e < kd; e++)
						for (int64_t a = 0; a < t->kh; a++)
							for (int64_t b = 0; b < t->kw; b++) {
								int64_t id = z / oh - pd + e;
								int64_t ih = i * t->sh - t->pt + a * t->dh;
								int64_t iw = j * t->sw - t->pl + b * t->dw;
								int64_t c = g * cg + ci;
								int64_t xv = id < 0 || id >= d || ih < 0 || ih >= t->h ||
										     iw < 0 || iw >= t->w
										 ? zx
										 : val(x, q->x_unsigned,
										       ((c * d + id) * t->h + ih) * t->w + iw);
								int64_t wv = val(w, q->w_unsigned,
										 (((m * cg + ci) * kd + e) * t->kh + a) *
											 t->kw +
										     b);
								acc += (xv - zx) * (wv - val(zw, q->w_unsigned, m));
							}
				y[(m * od * oh + z) * ow + j] = acc;
			}
}

enum {
	ZW0 = 1,   /* the weights' zero point 0 after the sign swap (no pixel sums) */
	PROWS = 2, /* the case must plan pixels as the tiles' rows; unpacked back too */
};

static int one(const ccase *t, gc_qgemm_isa isa, bool xu, bool wu, bool requant, int threads,
	       int flags)
{
	gc_qconv q = { .n = 1, .c = t->c, .m = t->m, .group = t->group, .x_unsigned = xu,
		       .w_unsigned = wu, .isa = isa };
	int64_t in[3] = { t->d ? t->d : 1, t->h, t->w }, k[3] = { t->kd ? t->kd : 1, t->kh, t->kw };
	int64_t s[3] = { 1, t->sh, t->sw }, d[3] = { 1, t->dh, t->dw };
	int64_t p0[3] = { t->pd, t->pt, t->pl }, p1[3] = { t->pd, t->pb, t->pr };
	for (int i = 0; i < 3; i++) {
		q.in[i] = in[i];
		q.k[i] = k[i];
		q.stride[i] = s[i];
		q.dil[i] = d[i];
		q.pad[i] = p0[i];
		q.out[i] = (in[i] + p0[i] + p1[i] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
	}
	gc_qconv_plan(&q);
	int64_t cg = t->c / t->group, osz = q.out[0] * q.out[1] * q.out[2];
	int64_t nx = t->c * in[0] * t->h * t->w, nw = t->m * cg * k[0] * t->kh * t->kw;
	uint8_t *x = malloc((size_t)nx), *w = malloc((size_t)nw), zw[128];
	for (int64_t i = 0; i < nx; i++)
		x[i] = rnd() % 5 == 0 ? (rnd() % 2 ? 0 : 255) : (uint8_t)rnd();
	for (int64_t i = 0; i < nw; i++)
		w[i] = rnd() % 5 == 0 ? (rnd() % 2 ? 0x80 : 0x7f) : (uint8_t)rnd();
	for (int i = 0; i < 128; i++) /* ZW0: int8 0, uint8 128 (w - 128 as stored) */
		zw[i] = flags & ZW0 ? (wu ? 128 : 0) : (uint8_t)(rnd() % 9);
	int32_t zx = xu ? (int32_t)(rnd() % 200) + 20 : (int32_t)(rnd() % 100) - 50;
	int32_t bias[128];
	float ws[128];
	for (int i = 0; i < 128; i++) {
		bias[i] = (int32_t)(rnd() % 4001) - 2000;
		ws[i] = 0.001f * (float)(1 + rnd() % 20);
	}
	void *wpack = malloc((size_t)gc_qconv_w_bytes(&q));
	gc_qconv_pack_w(&q, w, wpack);
	q.wpack = wpack;
	int bad = 0;
	if (flags & PROWS) { /* planned so, and the packing's key gives w back */
		char key[128];
		uint8_t *back = malloc((size_t)nw);
		gc_qconv_key(&q, key, sizeof key);
		int rc = gc_qconv_unpack(key, wpack, gc_qconv_w_bytes(&q), back, (uint64_t)nw);
		if (!q.prows || rc != 0 || memcmp(back, w, (size_t)nw)) {
			fprintf(stderr, "c %lld m %lld %lldx%lld: prows %d, unpack %d (%s)\n",
				(long long)t->c, (long long)t->m, (long long)t->h, (long long)t->w,
				(int)q.prows, rc, key);
			bad = 1;
		}
		free(back);
	}
	void *scratch = malloc((size_t)gc_qconv_scratch(&q));
	int64_t *want = malloc((size_t)(t->m * osz) * 8);
	int32_t *y32 = malloc((size_t)(t->m * osz) * 4);
	static const int32_t nobias[128];
	reference(t, &q, x, w, zx, zw, requant ? bias : nobias, want);
	gc_qconv_args a = { .x = x, .w = w, .zx = zx, .zw = zw, .zw_rows = true,
			    .bias = requant ? bias : NULL, .requant = requant, .relu = requant,
			    .y_unsigned = true, .xs = 0.05f, .zy = 9.0f, .ws = ws, .ws_rows = true,
			    .ys = 3.0, .y = y32 };
	gc_qconv_run(&q, &a, scratch, threads);
	for (int64_t m = 0; m < t->m && !bad; m++)
		for (int64_t i = 0; i < osz && !bad; i++) {
			int64_t e = want[m * osz + i];
			int32_t got = requant ? ((const uint8_t *)y32)[m * osz + i] : y32[m * osz + i];
			int32_t exp = requant ? gc_qrequant1(e, gc_qscale(0.05f, ws[m], 3.0), 9.0f, 9.0f,
							    255.0f)
					      : (int32_t)e;
			if (got != exp) {
				fprintf(stderr,
					"%s, %d threads, c %lld %lldx%lld m %lld k %lldx%lld s %lld,%lld d "
					"%lld,%lld g %lld, x %s w %s%s: y[%lld][%lld] = %d, want %d\n",
					gc_qgemm_isa_name(isa), threads, (long long)t->c, (long long)t->h,
					(long long)t->w, (long long)t->m, (long long)t->kh, (long long)t->kw,
					(long long)t->sh, (long long)t->sw, (long long)t->dh,
					(long long)t->dw, (long long)t->group, xu ? "u8" : "s8",
					wu ? "u8" : "s8", requant ? ", requantized" : "", (long long)m,
					(long long)i, got, exp);
				bad = 1;
			}
		}
	free(x);
	free(w);
	free(wpack);
	free(scratch);
	free(want);
	free(y32);
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

static void test_qconv_exact(void)
{
	static const ccase cases[] = {
		/* c  h  w   m kh kw sh sw dh dw pt pl pb pr g  d kd pd */
		{ 8, 9, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },   /* 3x3 */
		{ 6, 7, 11, 10, 3, 2, 1, 1, 2, 3, 2, 0, 1, 3, 1, 0, 0, 0 }, /* dilated, uneven pads, c % 4 */
		{ 5, 13, 12, 9, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, 0, 0, 0 }, /* a stem: 7x7 stride 2 */
		{ 8, 11, 9, 12, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0 }, /* 1x1 stride 2: one phase */
		{ 12, 7, 8, 12, 3, 3, 1, 2, 2, 1, 0, 1, 2, 1, 3, 0, 0, 0 }, /* groups, stride on one axis */
		{ 5, 13, 12, 6, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 0, 0, 0 }, /* stride and dilation: im2col */
		{ 3, 30, 31, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 }, /* several chunks, 20 rows */
		/* stride-2 rows of 16+ phase pixels: the gather's overlapping tail */
		{ 6, 5, 45, 10, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0 },
		{ 5, 3, 41, 12, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0 },
		/* rows under 32 pixels packed 32 at a time across rows (resnet's
		 * 7x7 outputs: 9 and 8 pixels a padded row) */
		{ 12, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },
		{ 12, 14, 14, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },
	};
	gc_qgemm_isa best = gc_qgemm_isa_best();
	int failed = 0, runs = 0;
	gc_nn_par_acquire();
	for (int isa = GC_QGEMM_C; isa <= (int)best; isa++) {
		if (isa == GC_QGEMM_AVXVNNI && !avx_vnni())
			continue;
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			for (int v = 0; v < 4; v++) {
				failed += one(&cases[i], (gc_qgemm_isa)isa, v & 1, v >> 1,
					      (v + (int)i) % 2 == 1, 1 + (int)(rnd() % 2), 0);
				runs++;
			}
	}
	gc_nn_par_release();
	printf("qconv: %d cases up to %s\n", runs, gc_qgemm_isa_name(best));
	CHECK_INT(failed, 0);
}

/* Output pixels as the tiles' rows (q->prows): pixel counts not a
 * multiple of 8 (tiles of 4 to 8), channels past a chunk of 48 and not a
 * multiple of 16 (a last chunk of one panel), strides of 2 (read from the
 * padded image, no phases), a single output row, 3-D; weights with and
 * without zero points (the pixel sums, and the transposed epilogue's
 * vector form), int32 and requantized outputs, on 1 to 4 threads, every
 * core, exactly. */
static void test_qconv_prows(void)
{
	static const ccase cases[] = {
		/* c  h  w   m kh kw sh sw dh dw pt pl pb pr g  d kd pd */
		{ 16, 5, 7, 53, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },   /* 35 pixels, 48 + 5 channels */
		/* enough work for 4 threads: resnet's 7x7 (2 chunks + 4 channels),
		 * and 14x13 -> 7x7 at stride 2 */
		{ 200, 7, 7, 100, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },
		{ 200, 14, 13, 112, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },
		{ 8, 1, 9, 16, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0 },    /* one row of 9: tiles of 4, 5 */
		/* stride 2 along the width only, rows of 16+ (the planes of the
		 * padded image: no phases) */
		{ 64, 6, 20, 48, 3, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0 },
		/* 3-D, 3 slabs of 4x5: a tile's pixels cross slabs (padding rows) */
		{ 8, 4, 5, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 1 },
	};
	gc_qgemm_isa best = gc_qgemm_isa_best();
	int failed = 0, runs = 0;
	gc_nn_par_acquire();
	uint64_t jobs = gc_nn_par_jobs();
	for (int isa = GC_QGEMM_C; isa <= (int)best; isa++) {
		if (isa == GC_QGEMM_AVXVNNI && !avx_vnni())
			continue;
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
			for (int v = 0; v < 8; v++) {
				failed += one(&cases[i], (gc_qgemm_isa)isa, v & 1, v >> 1 & 1, v % 3 != 2,
					      1 + (v + (int)i) % 4, PROWS | (v >> 2 ? ZW0 : 0));
				runs++;
			}
	}
	jobs = gc_nn_par_jobs() - jobs;
	gc_nn_par_release();
	printf("qconv prows: %d cases up to %s, %llu split\n", runs, gc_qgemm_isa_name(best),
	       (unsigned long long)jobs);
	CHECK_INT(failed, 0);
	CHECK(jobs > 0);
}

TEST_MAIN(TEST(test_qconv_exact), TEST(test_qconv_prows))
