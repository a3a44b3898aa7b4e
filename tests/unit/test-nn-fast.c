/*
 * The packed AVX-512 kernels (runtime/kernels/sgemm-pack.h) against plain
 * double-precision loops written here, and against the reference path
 * (OpenBLAS and plain loops, chosen with GRAPHCC_NN_REFERENCE=1), on many
 * shapes: odd channel counts, tails of every tile, strides, pads,
 * dilations, groups, depthwise, 1x1 to 7x7, 1-D to 3-D, each fused
 * activation with and without bias; Gemm and MatMul are test-nn-gemm.c's.
 *
 * Inputs are pseudo-random in [-1, 1) (not exact in float32). Tolerance: a
 * result may differ from the float64 value by 1e-5 of the sum of the
 * absolute values of its products (plus 1e-6): float32 accumulation over
 * K terms is off by about sqrt(K) * 6e-8 of that sum.
 *
 * On a CPU without AVX-512 both runs take the reference path; the tests
 * still check it against the plain loops.
 */
#include <graphcc/runtime.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "fused-act.h"
#include "harness.h"
#include "kernels/nn-act.h"
#include "kernels/nn-par.h"
#include "kernels/nn.h"
#include "kernels/sgemm-pack.h"
#include "test-nn-fast.h"

/* ---- Conv ---- */

typedef struct conv_case {
	int nsp;	    /* spatial dims, 1..3 */
	int64_t n, c, m, g; /* batch, channels, groups */
	int64_t in[3];	    /* spatial sizes (the last nsp used) */
	int64_t k[3], s[3], d[3], plo[3], phi[3];
	int bias;
	int fast; /* the packed kernels must take it (on an AVX-512 CPU) */
} conv_case;

/* 3-D arrays of a case, leading dims 1 for lower ranks. */
static void conv_geom(const conv_case *cc, int64_t *in, int64_t *k, int64_t *s, int64_t *d,
		      int64_t *plo, int64_t *phi, int64_t *out)
{
	int off = 3 - cc->nsp;
	for (int i = 0; i < 3; i++) {
		int j = i - off;
		in[i] = j >= 0 ? cc->in[j] : 1;
		k[i] = j >= 0 ? cc->k[j] : 1;
		s[i] = j >= 0 ? cc->s[j] : 1;
		d[i] = j >= 0 ? cc->d[j] : 1;
		plo[i] = j >= 0 ? cc->plo[j] : 0;
		phi[i] = j >= 0 ? cc->phi[j] : 0;
		out[i] = (in[i] + plo[i] + phi[i] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
	}
}

static void naive_conv(const conv_case *cc, const float *x, const float *w, const float *b,
		       const act_case *a, double *y, double *mag)
{
	int64_t in[3], k[3], s[3], d[3], plo[3], phi[3], out[3];
	conv_geom(cc, in, k, s, d, plo, phi, out);
	int64_t cg = cc->c / cc->g, mg = cc->m / cc->g;
	int64_t isp = in[0] * in[1] * in[2], osp = out[0] * out[1] * out[2];
	for (int64_t bi = 0; bi < cc->n; bi++)
		for (int64_t m = 0; m < cc->m; m++)
			for (int64_t o = 0; o < osp; o++) {
				int64_t oz = o / (out[1] * out[2]), oy = o / out[2] % out[1],
					ox = o % out[2];
				double acc = b ? b[m] : 0, am = b ? fabs(b[m]) : 0;
				int64_t gi = m / mg;
				for (int64_t ci = 0; ci < cg; ci++)
					for (int64_t a0 = 0; a0 < k[0]; a0++)
						for (int64_t a1 = 0; a1 < k[1]; a1++)
							for (int64_t a2 = 0; a2 < k[2]; a2++) {
								int64_t iz =
								    oz * s[0] - plo[0] + a0 * d[0];
								int64_t iy =
								    oy * s[1] - plo[1] + a1 * d[1];
								int64_t ix =
								    ox * s[2] - plo[2] + a2 * d[2];
								if (iz < 0 || iz >= in[0] ||
								    iy < 0 || iy >= in[1] ||
								    ix < 0 || ix >= in[2])
									continue;
								double xv =
								    x[(bi * cc->c + gi * cg + ci) *
									  isp +
								      (iz * in[1] + iy) * in[2] +
								      ix];
								double wv =
								    w[((m * cg + ci) * k[0] + a0) *
									  k[1] * k[2] +
								      a1 * k[2] + a2];
								acc += xv * wv;
								am += fabs(xv * wv);
							}
				int64_t at = (bi * cc->m + m) * osp + o;
				y[at] = act_apply(a, acc);
				mag[at] = am;
			}
}

/* One case with one activation: fast and reference against the loops. */
static int conv_check(const conv_case *cc, const act_case *a)
{
	int64_t in[3], k[3], s[3], d[3], plo[3], phi[3], out[3];
	conv_geom(cc, in, k, s, d, plo, phi, out);
	int64_t cg = cc->c / cc->g, taps = k[0] * k[1] * k[2];
	int64_t nx = cc->n * cc->c * in[0] * in[1] * in[2];
	int64_t ny = cc->n * cc->m * out[0] * out[1] * out[2];
	float *x = rnd_buf(nx), *w = rnd_buf(cc->m * cg * taps), *b = rnd_buf(cc->m);
	double *want = malloc((size_t)ny * sizeof(double)),
	       *mag = malloc((size_t)ny * sizeof(double));
	naive_conv(cc, x, w, cc->bias ? b : NULL, a, want, mag);
	int64_t xd[5] = {cc->n, cc->c}, wd[5] = {cc->m, cg};
	for (int i = 0; i < cc->nsp; i++) {
		xd[2 + i] = cc->in[i];
		wd[2 + i] = cc->k[i];
	}
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 2 + cc->nsp, xd, x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 2 + cc->nsp, wd, w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){cc->m}, b);
	gc_tensor *ins[] = {&tx, &tw, &tb};
	int64_t pads[6], strides[3], dils[3];
	for (int i = 0; i < cc->nsp; i++) {
		pads[i] = cc->plo[i];
		pads[cc->nsp + i] = cc->phi[i];
		strides[i] = cc->s[i];
		dils[i] = cc->d[i];
	}
	gc_attr attrs[8] = {
	    {.name = "pads", .type = GC_ATTR_INTS, .n = 2 * cc->nsp, .v.ints = pads},
	    {.name = "strides", .type = GC_ATTR_INTS, .n = cc->nsp, .v.ints = strides},
	    {.name = "dilations", .type = GC_ATTR_INTS, .n = cc->nsp, .v.ints = dils},
	    {.name = "group", .type = GC_ATTR_INT, .v.i = cc->g},
	};
	int nattr = act_attrs(a, attrs, 4);
	harness_run fast, ref;
	int ok = run_both(gc_prepare_Conv, "Conv", cc->bias ? 3 : 2, ins, nattr, attrs, &fast,
			  &ref) == 0;
	ok = ok && close_to("fast", fast.out[0].data, want, mag, ny);
	ok = ok && close_to("reference", ref.out[0].data, want, mag, ny);
	if (ok && cc->fast && gc_pk_usable() && fast.node.run == ref.node.run) {
		fprintf(stderr, "  the packed kernels did not take this case\n");
		ok = 0;
	}
	if (!ok)
		fprintf(stderr,
			"  conv case: nsp %d n %lld c %lld m %lld g %lld in %lldx%lldx%lld k "
			"%lldx%lldx%lld s %lld,%lld,%lld d %lld,%lld,%lld pads %lld,%lld,%lld/"
			"%lld,%lld,%lld bias %d act %s\n",
			cc->nsp, (long long)cc->n, (long long)cc->c, (long long)cc->m,
			(long long)cc->g, (long long)in[0], (long long)in[1], (long long)in[2],
			(long long)k[0], (long long)k[1], (long long)k[2], (long long)s[0],
			(long long)s[1], (long long)s[2], (long long)d[0], (long long)d[1],
			(long long)d[2], (long long)plo[0], (long long)plo[1], (long long)plo[2],
			(long long)phi[0], (long long)phi[1], (long long)phi[2], cc->bias,
			a->name ? a->name : "none");
	harness_free(&fast);
	harness_free(&ref);
	free(x);
	free(w);
	free(b);
	free(want);
	free(mag);
	return ok;
}

/* 2-D case shorthand: square kernel, stride, pad and dilation. */
#define C2(n_, c_, m_, g_, h_, w_, k_, s_, p_, d_, bias_, fast_)                                   \
	{                                                                                          \
		.nsp = 2, .n = n_, .c = c_, .m = m_, .g = g_, .in = {h_, w_}, .k = {k_, k_},       \
		.s = {s_, s_}, .d = {d_, d_}, .plo = {p_, p_}, .phi = {p_, p_}, .bias = bias_,     \
		.fast = fast_                                                                      \
	}

/* 1-D case shorthand: kernel, stride, pads, dilation. */
#define C1(n_, c_, m_, g_, w_, k_, s_, plo_, phi_, d_, bias_, fast_)                               \
	{                                                                                          \
		.nsp = 1, .n = n_, .c = c_, .m = m_, .g = g_, .in = {w_}, .k = {k_}, .s = {s_},    \
		.d = {d_}, .plo = {plo_}, .phi = {phi_}, .bias = bias_, .fast = fast_              \
	}

static int conv_cases(const conv_case *cases, int n, int all_acts)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < (all_acts ? LEN(ACTS) : 1); j++)
			if (!conv_check(&cases[i], &ACTS[all_acts ? j : i % LEN(ACTS)]))
				return 0;
	return 1;
}

/* 1x1 convolutions: the row GEMM (long rows) and the channel kernel
 * (short ones), every tail of their tiles. */
static void test_fast_conv_1x1(void)
{
	rng_state = 1;
	static const conv_case cases[] = {
	    C2(1, 16, 64, 1, 54, 54, 1, 1, 0, 1, 1, 1),	 /* long rows */
	    C2(1, 24, 144, 1, 56, 56, 1, 1, 0, 1, 1, 1), /* N tail 16 of 48 */
	    C2(1, 3, 5, 1, 9, 11, 1, 1, 0, 1, 1, 1),	 /* tiny, M tail */
	    C2(1, 7, 13, 1, 40, 41, 1, 1, 0, 1, 0, 1),	 /* M 8 + 5, N odd */
	    C2(1, 320, 1280, 1, 7, 7, 1, 1, 0, 1, 1, 1), /* short rows, K in 3 blocks */
	    C2(1, 129, 200, 1, 7, 7, 1, 1, 0, 1, 1, 1),	 /* k 129: blocks of 65 and 64 */
	    C2(1, 96, 48, 1, 13, 13, 1, 1, 0, 1, 1, 1),	 /* 32 + 16 channels */
	    C2(1, 64, 33, 1, 5, 5, 1, 1, 0, 1, 0, 1),	 /* 32 + 1 channels */
	    C2(2, 32, 40, 1, 9, 9, 1, 2, 0, 1, 1, 1),	 /* stride 2, batch 2 */
	    C2(2, 8, 24, 2, 30, 30, 1, 1, 0, 1, 1, 1),	 /* groups */
	    C2(2, 260, 20, 1, 23, 23, 1, 1, 0, 1, 1, 1), /* k 260: 3 blocks of 87 */
	    C2(2, 2100, 20, 1, 9, 9, 1, 1, 0, 1, 1, 1),	 /* k in 17 blocks of 124 */
	};
	CHECK(conv_cases(cases, LEN(cases), 1));
}

/* Strided 1x1 convolutions, their pixels copied together first (take):
 * on the row GEMM (long outputs: tails of the panels and of the 8-row
 * tiles, groups, batches, unequal strides, 1-D and 3-D) and on the channel
 * kernel (short ones of many channels: resnet50's downsampling at 14x14
 * and 7x7, batches, groups), odd input sizes, rows of 16 and more pixels
 * (the copy's lane permutes) and fewer. */
static void test_fast_conv_1x1_strided(void)
{
	rng_state = 11;
	static const conv_case cases[] = {
	    C2(1, 24, 40, 1, 111, 97, 1, 2, 0, 1, 1, 1), /* 56 x 49: N tail 8, M 5 x 8 */
	    C2(2, 18, 20, 2, 64, 70, 1, 2, 0, 1, 0, 1),	 /* groups, batch 2, M tail */
	    C2(1, 8, 16, 1, 150, 149, 1, 3, 0, 1, 1, 1), /* stride 3 */
	    {.nsp = 2,
	     .n = 1,
	     .c = 16,
	     .m = 12,
	     .g = 1,
	     .in = {50, 61},
	     .k = {1, 1},
	     .s = {2, 1},
	     .d = {1, 1},
	     .bias = 1,
	     .fast = 1}, /* strided along h only */
	    {.nsp = 2,
	     .n = 1,
	     .c = 9,
	     .m = 33,
	     .g = 1,
	     .in = {40, 121},
	     .k = {1, 1},
	     .s = {1, 2},
	     .d = {1, 1},
	     .bias = 1,
	     .fast = 1}, /* along w only */
	    {.nsp = 1,
	     .n = 2,
	     .c = 12,
	     .m = 24,
	     .g = 1,
	     .in = {1999},
	     .k = {1},
	     .s = {2},
	     .d = {1},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 3,
	     .n = 1,
	     .c = 6,
	     .m = 20,
	     .g = 1,
	     .in = {7, 40, 41},
	     .k = {1, 1, 1},
	     .s = {2, 2, 2},
	     .d = {1, 1, 1},
	     .bias = 1,
	     .fast = 1},
	    C2(1, 256, 96, 1, 27, 28, 1, 2, 0, 1, 1, 1),  /* 14 x 14 */
	    C2(2, 128, 80, 1, 13, 14, 1, 2, 0, 1, 1, 1),  /* 7 x 7, batch 2 */
	    C2(2, 64, 64, 2, 29, 29, 1, 2, 0, 1, 0, 1),	  /* 15 x 15, groups */
	    C2(1, 96, 40, 1, 67, 67, 1, 4, 0, 1, 1, 1),	  /* stride 4, 17 wide */
	    C2(1, 32, 32, 1, 112, 111, 1, 2, 0, 1, 1, 1), /* regnet's */
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 1, 1));
}

/* 3x3, 5x5, 7x7 and odd kernels on the channel kernel. */
static void test_fast_conv_spatial(void)
{
	rng_state = 2;
	static const conv_case cases[] = {
	    C2(1, 16, 32, 1, 14, 14, 3, 1, 1, 1, 1, 1),
	    C2(1, 5, 7, 1, 17, 19, 3, 1, 1, 1, 1, 1),	/* odd channels, tiles 10 + 9 */
	    C2(1, 16, 40, 1, 28, 28, 3, 2, 1, 1, 1, 1), /* stride 2, 32 + 8 channels */
	    C2(1, 3, 64, 1, 37, 37, 7, 2, 3, 1, 1, 1),	/* a stem */
	    C2(1, 8, 48, 1, 11, 12, 5, 1, 2, 1, 0, 1),	/* 5x5, 32 + 16 */
	    C2(1, 12, 17, 1, 15, 29, 3, 1, 2, 2, 1, 1), /* dilation 2 */
	    C2(2, 64, 64, 1, 7, 7, 3, 1, 1, 1, 1, 1),	/* 7x7 maps, batch 2 */
	    C2(1, 16, 16, 1, 9, 9, 3, 1, 0, 1, 1, 1),	/* no pads */
	    C2(1, 8, 24, 4, 15, 16, 3, 1, 1, 1, 1, 1),	/* groups of 2 -> 6 */
	    C2(1, 8, 80, 2, 10, 10, 3, 2, 1, 1, 1, 1),	/* groups of 40: 32 + 8 */
	    C2(1, 4, 8, 1, 3, 3, 3, 1, 1, 1, 1, 1),	/* output as small as the kernel */
	    /* pads past the window: rows 0, 1, 9 and 10 read only pads (their
	     * tiles no steps), the others some of the window's rows; pairs of
	     * 7-pixel rows, the last one alone and only pads */
	    C2(1, 20, 40, 1, 5, 9, 3, 1, 4, 1, 1, 1),
	    C2(1, 8, 16, 1, 3, 3, 3, 1, 3, 1, 1, 1),
	    C2(1, 6, 20, 1, 30, 31, 3, 3, 1, 1, 1, 0),	/* stride 3: reference path */
	    C2(1, 5, 20, 1, 6, 70, 3, 1, 2, 1, 1, 1),	/* rows of 64 and more: copied by libc */
	    C2(1, 7, 16, 1, 5, 63, 5, 1, 2, 1, 1, 1),	/* 63 wide: by vectors, 4 of them */
	    C2(1, 8, 72, 1, 96, 96, 3, 1, 1, 1, 1, 1),	/* 2.6 MB out: its lines prefetched, 32 + 32 + 8 */
	    /* the next panel's weights prefetched whole (1.15 MB), and in part
	     * (4.3 MB: its first CHAN_PF_MAX bytes) */
	    C2(1, 1000, 48, 1, 5, 5, 3, 1, 1, 1, 1, 1),
	    C2(1, 3700, 40, 1, 4, 4, 3, 1, 1, 1, 1, 1),
	    /* read in place, the edge columns' windows copied (conv-direct.c's
	     * edge_build): a 3x3 s2's left column, groups, a batch and a
	     * right edge, both edges at stride 1, 5x5 s2, dilation 2 */
	    C2(1, 16, 40, 1, 64, 64, 3, 2, 1, 1, 1, 1),
	    C2(2, 32, 32, 4, 60, 57, 3, 2, 1, 1, 1, 1),
	    C2(1, 8, 24, 1, 120, 120, 3, 1, 1, 1, 1, 1),
	    C2(1, 6, 20, 1, 100, 110, 5, 2, 2, 1, 0, 1),
	    C2(1, 8, 16, 1, 100, 100, 3, 2, 2, 2, 1, 1),
	};
	CHECK(conv_cases(cases, LEN(cases), 1));
	/* uneven pads, strides and kernels per axis */
	static const conv_case odd[] = {
	    {.nsp = 2,
	     .n = 1,
	     .c = 6,
	     .m = 18,
	     .g = 1,
	     .in = {13, 16},
	     .k = {5, 3},
	     .s = {2, 1},
	     .d = {1, 1},
	     .plo = {0, 1},
	     .phi = {2, 0},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 1,
	     .c = 4,
	     .m = 35,
	     .g = 1,
	     .in = {9, 20},
	     .k = {1, 3},
	     .s = {1, 2},
	     .d = {1, 3},
	     .plo = {1, 0},
	     .phi = {0, 3},
	     .bias = 0,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 1,
	     .c = 3,
	     .m = 9,
	     .g = 1,
	     .in = {8, 8},
	     .k = {3, 3},
	     .s = {4, 1},
	     .d = {1, 1},
	     .plo = {1, 1},
	     .phi = {1, 1},
	     .bias = 1,
	     .fast = 1},
	};
	CHECK(conv_cases(odd, LEN(odd), 0));
}

/* 1-D and 3-D convolutions. */
static void test_fast_conv_1d_3d(void)
{
	rng_state = 3;
	static const conv_case cases[] = {
	    {.nsp = 1,
	     .n = 2,
	     .c = 5,
	     .m = 20,
	     .g = 1,
	     .in = {50},
	     .k = {3},
	     .s = {1},
	     .d = {1},
	     .plo = {1},
	     .phi = {1},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 1,
	     .n = 1,
	     .c = 16,
	     .m = 33,
	     .g = 1,
	     .in = {31},
	     .k = {5},
	     .s = {2},
	     .d = {2},
	     .plo = {0},
	     .phi = {3},
	     .bias = 0,
	     .fast = 1},
	    {.nsp = 3,
	     .n = 1,
	     .c = 3,
	     .m = 17,
	     .g = 1,
	     .in = {5, 6, 7},
	     .k = {3, 3, 3},
	     .s = {1, 1, 1},
	     .d = {1, 1, 1},
	     .plo = {1, 1, 1},
	     .phi = {1, 1, 1},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 3,
	     .n = 1,
	     .c = 4,
	     .m = 8,
	     .g = 2,
	     .in = {6, 5, 9},
	     .k = {2, 1, 3},
	     .s = {2, 1, 2},
	     .d = {1, 1, 1},
	     .plo = {0, 0, 1},
	     .phi = {1, 0, 1},
	     .bias = 1,
	     .fast = 1},
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 1, 1));
}

/* Convolutions on the row GEMM over each output row's im2col (conv.c's
 * tap_rows). 1-D: one input channel and a long kernel at stride 4 (an
 * audio net's first layer), strides above 2 that the channel kernel does
 * not take, dilation, groups, asymmetric pads, an output shorter than a
 * panel or a tile, one output, batches. 2-D at stride 1 with few input
 * channels (a network's first layer) or small groups: pads, dilation,
 * rows of a panel and a tail, batches. Most of them the tiles read in
 * place (conv.c's tap_direct), one with K above 1024 in blocks of it (sgemm-pack.c's panel_kc),
 * some in panels across the rows (tap_wrap). */
static void test_fast_conv_taps(void)
{
	rng_state = 19;
	static const conv_case cases[] = {
	    C1(1, 1, 64, 1, 1600, 80, 4, 40, 40, 1, 1, 1),
	    C1(2, 1, 20, 1, 333, 80, 4, 40, 37, 1, 1, 1),
	    C1(1, 3, 13, 1, 101, 7, 3, 2, 5, 2, 0, 1),
	    C1(1, 4, 18, 2, 90, 5, 5, 0, 4, 3, 1, 1),
	    C1(1, 2, 9, 1, 40, 11, 3, 7, 0, 1, 1, 1),
	    C1(1, 5, 33, 1, 17, 5, 4, 1, 1, 1, 1, 1),
	    C1(1, 1, 8, 1, 10, 10, 3, 0, 0, 1, 1, 1),
	    C1(1, 3, 20, 1, 2000, 80, 4, 40, 40, 1, 1, 1),  /* K 240 */
	    C1(1, 13, 20, 1, 2000, 80, 4, 40, 40, 1, 1, 1), /* K 1040: 2 blocks of 520 */
	    C2(1, 3, 64, 1, 40, 61, 3, 1, 1, 1, 1, 1),
	    C2(2, 3, 21, 1, 19, 53, 3, 1, 2, 2, 1, 1),
	    C2(1, 32, 32, 4, 28, 28, 3, 1, 1, 1, 0, 1),
	    /* panels across the rows (conv.c's tap_wrap): without pads the
	     * input itself (tap_input), batches; pads and dilation */
	    C2(1, 8, 16, 1, 40, 40, 3, 1, 0, 1, 1, 1),
	    C2(2, 24, 32, 1, 21, 61, 3, 1, 0, 1, 0, 1),
	    C2(1, 8, 16, 1, 30, 50, 3, 1, 1, 1, 1, 1),
	    C2(2, 8, 20, 1, 25, 41, 3, 1, 2, 2, 1, 1),
	    {.nsp = 2,
	     .n = 1,
	     .c = 2,
	     .m = 9,
	     .g = 1,
	     .in = {12, 70},
	     .k = {2, 5},
	     .s = {3, 1},
	     .d = {1, 1},
	     .plo = {1, 0},
	     .phi = {0, 3},
	     .bias = 1,
	     .fast = 1},
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 1, 1));
}

/* First layers (1-3 input channels) at strides 2-4 on the row GEMM by
 * output row: the padded input split into its stride phases by lane
 * permutes (16 of each at a time, the rest masked) or element by
 * element (stride 3); every pad from 0 to kernel - 1 on either side,
 * odd sizes, rows shorter than a vector, unequal strides and pads; rows
 * the tiles read in place (tap_direct), whole panels and a tail. */
static void test_fast_conv_first(void)
{
	rng_state = 23;
	static const conv_case cases[] = {
	    C2(1, 3, 32, 1, 37, 45, 3, 2, 0, 1, 1, 1),	/* inception's, 22 wide */
	    C2(1, 3, 32, 1, 35, 71, 3, 2, 1, 1, 1, 1),	/* regnet's, 36 wide */
	    C2(2, 3, 21, 1, 29, 67, 3, 2, 2, 1, 0, 1),	/* pads 2 */
	    C2(1, 1, 9, 1, 40, 99, 2, 2, 1, 1, 1, 1),	/* even kernel, 1 channel */
	    C2(1, 2, 16, 1, 33, 77, 7, 2, 3, 1, 1, 1),	/* resnet's 7x7 */
	    C2(1, 3, 64, 1, 29, 223, 7, 2, 3, 1, 1, 1),	/* resnet's stem, 112 wide */
	    C2(2, 3, 8, 1, 21, 205, 7, 2, 3, 1, 0, 1),	/* 103 wide: 48 + 48 + 7 */
	    C2(1, 3, 12, 1, 30, 70, 7, 2, 5, 1, 1, 1),	/* pads 5 */
	    C2(1, 3, 64, 1, 47, 91, 11, 4, 2, 1, 1, 1), /* alexnet's */
	    C2(1, 2, 10, 1, 31, 139, 5, 4, 4, 1, 0, 1), /* stride 4, pads 4 */
	    C2(1, 3, 11, 1, 26, 83, 5, 3, 1, 1, 1, 1),	/* stride 3 */
	    C2(1, 3, 8, 1, 21, 150, 4, 3, 3, 1, 1, 1),	/* stride 3, pads 3 */
	    {.nsp = 2,
	     .n = 1,
	     .c = 3,
	     .m = 17,
	     .g = 1,
	     .in = {19, 101},
	     .k = {3, 6},
	     .s = {1, 2},
	     .d = {1, 1},
	     .plo = {0, 5},
	     .phi = {2, 0},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 1,
	     .c = 3,
	     .m = 8,
	     .g = 1,
	     .in = {40, 70},
	     .k = {5, 3},
	     .s = {3, 4},
	     .d = {1, 2},
	     .plo = {4, 0},
	     .phi = {1, 3},
	     .bias = 1,
	     .fast = 1},
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 2, 1));
}

/* `bytes` (rounded up to pages) between two pages no access is allowed to:
 * the first usable byte, or NULL when mmap or mprotect fails (a caller's
 * failed check). guarded_free unmaps it. */
static char *guarded(size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + pg - 1) / pg * pg;
	char *base = mmap(NULL, n + 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mprotect(base, pg, PROT_NONE) || mprotect(base + pg + n, pg, PROT_NONE)) {
		munmap(base, n + 2 * pg);
		return NULL;
	}
	return base + pg;
}

static void guarded_free(char *p, size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + pg - 1) / pg * pg;
	munmap(p - pg, n + 2 * pg);
}

/* One case of test_fast_split: gc_pk_split_pad of a row of w floats
 * (lo < 0: gc_pk_split of the s (n - 1) + phases floats it may read) placed
 * at the start (at_end 0) or the end of the accessible page at base, so
 * that a read before or past it faults; 0 when dst is right (each phase's
 * row followed by a gap that must stay as it was). */
static int split_case(char *base, size_t pg, int64_t s, int phases, int64_t n, int64_t lo,
		      int64_t w, int at_end)
{
	float dst[5 * 80];
	int64_t len = lo < 0 ? s * (n - 1) + phases : w, ld = n + 7;
	float *src = at_end ? (float *)(void *)(base + pg) - len : (float *)(void *)base;
	for (int64_t i = 0; i < len; i++)
		src[i] = (float)(i + 1);
	for (int i = 0; i < LEN(dst); i++)
		dst[i] = -1;
	if (lo < 0)
		gc_pk_split(src, s, n, phases, dst, ld);
	else
		gc_pk_split_pad(src, lo, w, s, n, phases, dst, ld);
	for (int64_t r = 0; r < 5; r++)
		for (int64_t i = 0; i < ld; i++) {
			int64_t j = s * i + r - (lo < 0 ? 0 : lo);
			float want = r >= phases || i >= n ? -1 : j >= 0 && j < len ? (float)(j + 1) : 0;
			if (dst[r * ld + i] != want) {
				fprintf(stderr,
					"  split s %lld phases %d n %lld lo %lld w %lld: phase %lld "
					"[%lld] %g, want %g\n",
					(long long)s, phases, (long long)n, (long long)lo, (long long)len,
					(long long)r, (long long)i, (double)dst[r * ld + i], (double)want);
				return 1;
			}
		}
	return 0;
}

/* gc_pk_split (the strided 1x1's take) and gc_pk_split_pad (the tap path's
 * phase copy of a padded row, made from the input row) against a plain
 * loop: strides 2 to 5 (2 and 4 vectorized), every phase count, rows of 1 to
 * 70 (every tail of its 16 lanes), 0-3 pads before and rows that end
 * before, at or after the last phase's reach (pads after). */
static void test_fast_split(void)
{
	if (!gc_pk_usable())
		return;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *base = guarded(pg);
	CHECK(base != NULL);
	int bad = 0;
	for (int64_t s = 2; s <= 5; s++)
		for (int phases = 1; phases <= s; phases++)
			for (int64_t n = 1; n <= 70 && !bad; n++) {
				bad = split_case(base, pg, s, phases, n, -1, 0, 1);
				for (int64_t lo = 0; lo <= 3 && !bad; lo++)
					for (int64_t d = -2; d <= 2 && !bad; d++) {
						int64_t w = s * (n - 1) + phases - lo + d * 7;
						for (int e = 0; e < 2 && !bad && w > 0; e++)
							bad = split_case(base, pg, s, phases, n, lo, w, e);
					}
			}
	CHECK(!bad);
	guarded_free(base, pg);
}

/* The flat depthwise kernel's masked loads reach up to a row and a column
 * before the first plane and after the last: with the input between pages
 * no access is allowed to, none of those may fault, and the outputs are a
 * plain loop's (planes of 4 to 31 rows and 8 to 28 columns, 64 to 1024
 * outputs; pads 1 and 2 with dilation 2). */
static void test_fast_dw_flat_edges(void)
{
	if (!gc_pk_usable())
		return;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (3 * 32 * 32 * sizeof(float) + pg - 1) / pg * pg;
	char *base = guarded(span);
	CHECK(base != NULL);
	const int64_t c = 3;
	float wt[3 * 9], bias[3], y[3 * 32 * 32];
	for (int i = 0; i < LEN(wt); i++)
		wt[i] = (float)(i % 7) - 3;
	for (int i = 0; i < 3; i++)
		bias[i] = (float)i;
	gc_nn_act none = {.kind = GC_NN_ACT_NONE};
	int bad = 0;
	for (int64_t h = 4; h <= 32 && !bad; h += 3)
		for (int64_t w = 8; w <= 32 && !bad; w += 5)
			for (int64_t d = 1; d <= 2 && !bad; d++)
				for (int end = 0; end <= 1 && !bad; end++) {
					int64_t sp = h * w, in[3] = {1, h, w}, k[3] = {1, 3, 3};
					int64_t one[3] = {1, 1, 1}, dil[3] = {1, d, d};
					int64_t lo[3] = {0, d, d}, out[3] = {1, h, w};
					if (sp < 64 || sp > 1024)
						continue;
					/* the planes right after the first page or right
					 * before the last */
					float *x = end ? (float *)(void *)(base + span) - c * sp
						       : (float *)(void *)base;
					for (int64_t i = 0; i < c * sp; i++)
						x[i] = (float)(i % 11) - 5;
					gc_pk_dw p;
					CHECK_INT(gc_pk_dw_plan(&p, 1, c, 1, in, k, one, dil, lo, out,
								&none),
						  0);
					CHECK(p.flat);
					CHECK_INT(gc_pk_dw_pack(&p, wt), 0);
					gc_pk_dw_run(&p, x, wt, bias, y, NULL, 1);
					for (int64_t ch = 0; ch < c && !bad; ch++)
						for (int64_t o = 0; o < sp && !bad; o++) {
							float want = bias[ch];
							for (int64_t t = 0; t < 9; t++) {
								int64_t r = o / w + (t / 3 - 1) * d,
									q = o % w + (t % 3 - 1) * d;
								if (r >= 0 && r < h && q >= 0 && q < w)
									want += wt[ch * 9 + t] *
										x[ch * sp + r * w + q];
							}
							if (y[ch * sp + o] != want) {
								fprintf(stderr,
									"  dw flat %lldx%lld d %lld: "
									"[%lld][%lld] %g, want %g\n",
									(long long)h, (long long)w,
									(long long)d, (long long)ch,
									(long long)o, (double)y[ch * sp + o],
									(double)want);
								bad = 1;
							}
						}
					gc_pk_dw_free(&p);
				}
	CHECK(!bad);
	guarded_free(base, span);
}

/* Depthwise: 16 channels at a time (rows of up to 16 outputs) and along
 * the row (longer rows, channel multipliers): the row kernel of 3x3, 5x5
 * and 7x7 at strides 1 and 2 reads the input unpadded, every tail of its
 * 4 rows at a time and of its 16 columns; the flat kernel (3x3 stride 1,
 * 64 to 1024 outputs a plane) every tail of its 8 vectors and of its last
 * vector. */
static void test_fast_conv_depthwise(void)
{
	rng_state = 4;
	static const conv_case cases[] = {
	    C2(1, 32, 32, 32, 14, 16, 3, 1, 1, 1, 1, 1),  /* flat, 14 vectors */
	    C2(1, 20, 20, 20, 14, 14, 3, 1, 1, 1, 1, 1),  /* flat, 8 + 5 vectors, 4 lanes */
	    C2(2, 17, 17, 17, 32, 32, 3, 1, 1, 1, 1, 1),  /* flat, the largest plane */
	    C2(1, 9, 9, 9, 8, 8, 3, 1, 1, 1, 0, 1),	  /* flat, the smallest plane */
	    C2(1, 12, 12, 12, 9, 13, 3, 1, 2, 2, 1, 1),	  /* flat, dilation 2, 117 outputs */
	    C2(1, 16, 16, 16, 16, 15, 3, 2, 1, 1, 1, 1),  /* blocked, stride 2 */
	    C2(1, 16, 16, 16, 7, 9, 3, 1, 1, 1, 1, 1),	  /* blocked, 63 outputs */
	    C2(1, 21, 21, 21, 15, 15, 3, 2, 1, 1, 1, 1),  /* blocked, stride 2, 16 + 5 */
	    C2(1, 21, 21, 21, 15, 17, 3, 2, 1, 1, 1, 1),  /* rows of 9, stride 2 */
	    C2(1, 18, 18, 18, 40, 45, 3, 1, 1, 1, 1, 1),  /* along rows */
	    C2(2, 8, 8, 8, 9, 50, 3, 2, 1, 1, 0, 1),	  /* stride 2, long rows */
	    C2(1, 16, 16, 16, 12, 12, 5, 1, 2, 1, 1, 1),  /* 5x5 */
	    C2(1, 17, 17, 17, 14, 40, 3, 1, 2, 2, 1, 1),  /* dilation 2 */
	    C2(1, 6, 12, 6, 11, 35, 3, 1, 1, 1, 1, 1),	  /* multiplier 2 */
	    C2(1, 4, 8, 4, 21, 40, 3, 2, 1, 1, 1, 1),	  /* multiplier 2, stride 2 */
	    C2(1, 5, 5, 5, 23, 37, 3, 1, 1, 1, 0, 1),	  /* 3x3 along rows, 4 + 3 */
	    C2(1, 960, 960, 960, 7, 7, 3, 1, 1, 1, 1, 1), /* mobilenet's last */
	    C2(1, 40, 40, 40, 60, 30, 3, 2, 0, 1, 1, 1),  /* no pads, large band */
	    C2(1, 7, 7, 7, 19, 37, 3, 2, 1, 1, 1, 1),	  /* rows, stride 2, 16 + 3 */
	    C2(1, 6, 6, 6, 23, 41, 5, 1, 2, 1, 1, 1),	  /* rows, 5x5 */
	    C2(1, 5, 5, 5, 37, 45, 5, 2, 2, 1, 0, 1),	  /* rows, 5x5 stride 2 */
	    C2(1, 3, 3, 3, 13, 35, 7, 1, 3, 1, 1, 1),	  /* rows, 7x7 */
	    C2(1, 3, 3, 3, 17, 47, 7, 2, 3, 1, 1, 1),	  /* rows, 7x7 stride 2 */
	};
	CHECK(conv_cases(cases, LEN(cases), 1));
	static const conv_case odd[] = {
	    {.nsp = 2,
	     .n = 1,
	     .c = 9,
	     .m = 9,
	     .g = 9,
	     .in = {12, 21},
	     .k = {3, 1},
	     .s = {1, 2},
	     .d = {1, 1},
	     .plo = {1, 0},
	     .phi = {0, 1},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 1,
	     .n = 1,
	     .c = 20,
	     .m = 20,
	     .g = 20,
	     .in = {70},
	     .k = {7},
	     .s = {1},
	     .d = {1},
	     .plo = {3},
	     .phi = {3},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 1,
	     .c = 5,
	     .m = 5,
	     .g = 5,
	     .in = {10, 10},
	     .k = {3, 3},
	     .s = {3, 3},
	     .d = {1, 1},
	     .plo = {1, 1},
	     .phi = {1, 1},
	     .bias = 1,
	     .fast = 0},
	    /* the flat kernel: uneven pads that keep the width */
	    {.nsp = 2,
	     .n = 1,
	     .c = 6,
	     .m = 6,
	     .g = 6,
	     .in = {12, 20},
	     .k = {3, 3},
	     .s = {1, 1},
	     .d = {1, 1},
	     .plo = {0, 2},
	     .phi = {2, 0},
	     .bias = 1,
	     .fast = 1},
	    /* the row kernel: uneven pads, wider than the kernel; rows
	     * narrower than a vector and than the pads around them */
	    {.nsp = 2,
	     .n = 1,
	     .c = 4,
	     .m = 4,
	     .g = 4,
	     .in = {9, 33},
	     .k = {3, 3},
	     .s = {1, 1},
	     .d = {1, 1},
	     .plo = {0, 3},
	     .phi = {2, 0},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 2,
	     .c = 3,
	     .m = 3,
	     .g = 3,
	     .in = {11, 40},
	     .k = {5, 5},
	     .s = {2, 2},
	     .d = {1, 1},
	     .plo = {4, 1},
	     .phi = {0, 4},
	     .bias = 0,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 1,
	     .c = 3,
	     .m = 3,
	     .g = 3,
	     .in = {5, 10},
	     .k = {3, 3},
	     .s = {1, 1},
	     .d = {1, 1},
	     .plo = {1, 5},
	     .phi = {1, 5},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 2,
	     .n = 1,
	     .c = 2,
	     .m = 2,
	     .g = 2,
	     .in = {6, 7},
	     .k = {7, 7},
	     .s = {2, 2},
	     .d = {1, 1},
	     .plo = {3, 20},
	     .phi = {3, 19},
	     .bias = 1,
	     .fast = 1},
	};
	CHECK(conv_cases(odd, LEN(odd), 0));
}

/* Weights a node computes (unknown at prepare): depthwise still takes the
 * packed kernels, reading them at run time; the others the reference path. */
static void test_fast_conv_weights_unknown(void)
{
	rng_state = 9;
	static const conv_case cases[] = {
	    C2(1, 21, 21, 21, 15, 15, 3, 2, 1, 1, 1, 1), /* blocked */
	    C2(1, 18, 18, 18, 40, 45, 3, 1, 1, 1, 1, 1), /* along rows */
	    C2(1, 33, 33, 33, 7, 7, 3, 1, 1, 1, 1, 1),	 /* blocked, two rows a tile */
	    C2(1, 20, 20, 20, 14, 14, 3, 1, 1, 1, 1, 1), /* flat */
	    C2(1, 16, 40, 1, 14, 14, 3, 1, 1, 1, 1, 0),	 /* reference */
	};
	weights_unknown = 1;
	int ok = conv_cases(cases, LEN(cases), 0);
	weights_unknown = 0;
	CHECK(ok);
}

/* NaN and infinity pass through the fused activation as the plain loops
 * have them. */
static void test_fast_conv_nan(void)
{
	float x[2 * 6 * 6], w[4 * 2 * 9], b[4] = {0.5f, -0.5f, 0, 1};
	for (int i = 0; i < LEN(x); i++)
		x[i] = (float)(i % 7) / 7;
	for (int i = 0; i < LEN(w); i++)
		w[i] = (float)(i % 5 - 2) / 4;
	x[14] = NAN;
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 2, 6, 6}, x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){4, 2, 3, 3}, w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){4}, b);
	gc_tensor *ins[] = {&tx, &tw, &tb};
	gc_attr attrs[] = {
	    {.name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = (const int64_t[]){1, 1, 1, 1}},
	    {.name = "_gc_activation", .type = GC_ATTR_STRING, .n = 4, .v.s = "Relu"}};
	harness_run fast, ref;
	int rc = run_both(gc_prepare_Conv, "Conv", 3, ins, 2, attrs, &fast, &ref);
	int same = rc == 0;
	for (int i = 0; same && i < 4 * 36; i++) {
		float f = ((float *)fast.out[0].data)[i], r = ((float *)ref.out[0].data)[i];
		same = isnan(f) == isnan(r) && (isnan(f) || fabsf(f - r) <= 1e-6f);
	}
	int nans = 0;
	for (int i = 0; rc == 0 && i < 4 * 36; i++)
		nans += isnan(((float *)fast.out[0].data)[i]);
	harness_free(&fast);
	harness_free(&ref);
	CHECK_INT(rc, 0);
	CHECK(same);
	CHECK_INT(nans, 4 * 9); /* each output channel: the 3x3 around the NaN */
}

/* The fused Swish (x sigmoid(x)) over the whole float range: a depthwise
 * 1x1 of weights 1 hands its input to the
 * epilogue unchanged. Against x / (1 + e^-x) in double: within 1e-6 of it
 * relative (8 ulp) where the result is a normal float, 1e-38 absolute
 * where it underflows; NaN and infinities as the reference path has them. Both depthwise kernels:
 * 16 channels at a time (short rows) and along the row (long ones). */
static void test_fast_conv_swish_range(void)
{
	static const int64_t shapes[][2] = {{5, 11}, {3, 70}};
	const act_case swish = {"Swish", 0, 0, 0, 0, 0, 0};
	for (int si = 0; si < LEN(shapes); si++) {
		int64_t c = 17, h = shapes[si][0], wd = shapes[si][1], n = c * h * wd;
		float *x = malloc((size_t)n * sizeof(float)), w[17];
		for (int64_t i = 0; i < n; i++) /* -120 .. 120, dense near 0 */
			x[i] = (float)(120 * pow((double)(i % 401 - 200) / 200, 3));
		static const float special[] = {0.0f,	 -0.0f,	   INFINITY, -INFINITY, NAN,
						FLT_MAX, -FLT_MAX, FLT_MIN,  -FLT_MIN,	1e-40f,
						-1e-40f, -87.5f,   -88.8f,   -103.9f,	-104.5f,
						88.8f,	 1e-3f};
		for (int i = 0; i < LEN(special); i++)
			x[i * 7] = special[i];
		for (int ci = 0; ci < c; ci++)
			w[ci] = 1;
		gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, c, h, wd}, x);
		gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){c, 1, 1, 1}, w);
		gc_tensor *ins[] = {&tx, &tw};
		gc_attr attrs[8] = {{.name = "group", .type = GC_ATTR_INT, .v.i = c}};
		int nattr = act_attrs(&swish, attrs, 1);
		harness_run fast, ref;
		int rc = run_both(gc_prepare_Conv, "Conv", 2, ins, nattr, attrs, &fast, &ref),
		    bad = 0;
		for (int64_t i = 0; rc == 0 && i < n && bad < 5; i++) {
			float f = ((float *)fast.out[0].data)[i], r = ((float *)ref.out[0].data)[i];
			double want = (double)x[i] / (1 + exp(-(double)x[i]));
			int ok;
			if (!isfinite(x[i]) || !isfinite(want))
				ok = isnan(f) == isnan(r) && (isnan(f) || f == r);
			else if (fabs(want) >= FLT_MIN)
				ok = fabs(f - want) <= 1e-6 * fabs(want);
			else
				ok = fabs(f - want) <= 1e-38;
			if (!ok)
				fprintf(stderr,
					"  swish(%.9g): got %.9g, reference path %.9g, want %.9g\n",
					(double)x[i], (double)f, (double)r, want);
			bad += !ok;
		}
		if (rc == 0 && gc_pk_usable() && fast.node.run == ref.node.run) {
			fprintf(stderr, "  the packed kernels did not take the %lldx%lld case\n",
				(long long)h, (long long)wd);
			bad++;
		}
		harness_free(&fast);
		harness_free(&ref);
		free(x);
		CHECK_INT(rc, 0);
		CHECK_INT(bad, 0);
	}
}

/* ---- threads ---- */

/* Split over threads, every kernel gives the bytes one thread gives (each
 * output is computed by one thread, in the same order). The cases are
 * large enough for gc_nn_par_threads to use 2 or 3 threads. */
/* Case cc (with a fused Relu) gives the same bytes on 2 and 3 threads as
 * on one, and is split over them (on an AVX-512 CPU); the pool's jobs in
 * the 2-thread run go to *jobs2 (unless NULL). */
static int conv_threads_jobs(const conv_case *cc, int ci, uint64_t *jobs2)
{
	int64_t in[3], k[3], s[3], d[3], plo[3], phi[3], out[3];
	conv_geom(cc, in, k, s, d, plo, phi, out);
	int64_t cg = cc->c / cc->g, ny = cc->n * cc->m * out[1] * out[2];
	float *x = rnd_buf(cc->n * cc->c * in[1] * in[2]), *w = rnd_buf(cc->m * cg * k[1] * k[2]);
	float *b = rnd_buf(cc->m);
	/* the last nsp of the 2-D arrays */
	int nsp = cc->nsp, o = 3 - nsp;
	int64_t xd[4] = {cc->n, cc->c, in[o], in[2]}, wd[4] = {cc->m, cg, k[o], k[2]};
	int64_t pads[4] = {plo[o], plo[2]}, strides[2] = {s[o], s[2]}, dils[2] = {d[o], d[2]};
	pads[nsp] = phi[o];
	pads[nsp + 1] = phi[2];
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 2 + nsp, xd, x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 2 + nsp, wd, w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){cc->m}, b);
	gc_tensor *ins[] = {&tx, &tw, &tb};
	gc_attr attrs[] = {
	    {.name = "pads", .type = GC_ATTR_INTS, .n = 2 * nsp, .v.ints = pads},
	    {.name = "strides", .type = GC_ATTR_INTS, .n = nsp, .v.ints = strides},
	    {.name = "dilations", .type = GC_ATTR_INTS, .n = nsp, .v.ints = dils},
	    {.name = "group", .type = GC_ATTR_INT, .v.i = cc->g},
	    {.name = "_gc_activation", .type = GC_ATTR_STRING, .n = 4, .v.s = "Relu"}};
	harness_run h;
	gc_runtime_init(NULL, NULL);
	int rc = harness_op(&h, gc_prepare_Conv, "Conv", 13, 3, ins, 1, LEN(attrs), attrs);
	float *y2 = malloc((size_t)ny * sizeof(float)), *y3 = malloc((size_t)ny * sizeof(float));
	uint64_t jobs = gc_nn_par_jobs();
	int ok = rc == 0 && rerun(&h, ins, 2, y2) == 0;
	if (jobs2)
		*jobs2 = gc_nn_par_jobs() - jobs;
	ok = ok && rerun(&h, ins, 3, y3) == 0;
	ok = ok && !memcmp(h.out[0].data, y2, (size_t)ny * sizeof(float)) &&
	     !memcmp(h.out[0].data, y3, (size_t)ny * sizeof(float));
	int split = !gc_pk_usable() || gc_nn_par_jobs() > jobs;
	if (!ok || !split)
		fprintf(stderr, "  conv case %d: %s\n", ci,
			rc    ? h.err.msg
			: !ok ? "differs"
			      : "not split over the threads");
	/* the first element that differs on 3 threads */
	for (int64_t i = 0; rc == 0 && i < ny; i++)
		if (memcmp((float *)h.out[0].data + i, y3 + i, 4)) {
			fprintf(stderr, "  element %lld: %.9g on 1 thread, %.9g on 3\n",
				(long long)i, (double)((float *)h.out[0].data)[i], (double)y3[i]);
			break;
		}
	harness_free(&h);
	free(x);
	free(w);
	free(b);
	free(y2);
	free(y3);
	return ok && split;
}

static int conv_threads_same(const conv_case *cc, int ci)
{
	return conv_threads_jobs(cc, ci, NULL);
}

/*
 * Dilated convolutions whose taps read padding at some or all outputs
 * (conv-live.c: taps dead at every output dropped, the rest by regions of
 * one set of live taps): dilations 1 to 40 on small and larger maps, pads
 * equal to, below and above the dilation, strides 1 and 2, groups 1 and
 * depthwise, each activation in turn; a 7x7 on a 2x2 map; the same bytes
 * on 1 to 3 threads.
 */
static void test_fast_conv_dilated(void)
{
	rng_state = 12;
	for (int64_t d = 1; d <= 40; d++) {
		int64_t pads[3] = {d, d > 1 ? d - 1 : 0, d + 3};
		for (int pi = 0; pi < 3; pi++) {
			int64_t p = pads[pi], s = 1 + (d + pi) % 2, map = d % 3 ? 16 : 27;
			int64_t kdw = 4 * d + 1 <= map + 2 * p ? 5 : 3;
			conv_case cc[] = {
			    C2(1, 6, 20, 1, map, map + 1, 3, s, p, d, (int)(d & 1), 0),
			    C2(1, 12, 12, 12, map, map, kdw, s, p, d, 1, 0), /* depthwise */
			};
			CHECK(conv_check(&cc[0], &ACTS[(d + pi) % LEN(ACTS)]));
			CHECK(conv_check(&cc[1], &ACTS[(d + 2 * pi) % LEN(ACTS)]));
		}
	}
	static const conv_case cases[] = {
	    C2(1, 40, 24, 1, 16, 16, 3, 1, 12, 12, 1, 1), /* ASPP: by regions */
	    C2(1, 40, 24, 1, 16, 16, 3, 1, 24, 24, 1, 1), /* ASPP: a 1x1 */
	    C2(2, 33, 41, 1, 16, 16, 3, 1, 36, 36, 1, 1), /* batch 2 */
	    C2(1, 7, 9, 1, 2, 2, 7, 1, 3, 1, 1, 1),	  /* 7x7 on 2x2 */
	    C2(1, 16, 16, 16, 16, 16, 5, 1, 4, 2, 1, 1),  /* depthwise, dilation 2 */
	    C2(1, 16, 16, 16, 8, 8, 3, 1, 8, 8, 1, 1),	  /* depthwise: the centre */
	    C2(1, 64, 72, 1, 32, 32, 3, 1, 4, 4, 1, 1),	  /* fcn_resnet50's layer 4: rows skipped */
	    C2(2, 24, 36, 1, 20, 18, 3, 2, 10, 10, 1, 1), /* regions, stride 2 */
	    /* uneven pads: the live window's trailing pad shrinks */
	    {.nsp = 2, .n = 1, .c = 8, .m = 16, .g = 1, .in = {10, 12}, .k = {3, 5},
	     .s = {1, 1}, .d = {9, 3}, .plo = {9, 1}, .phi = {2, 11}, .bias = 1, .fast = 1},
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	static const conv_case big[] = {
	    C2(1, 960, 100, 1, 16, 16, 3, 1, 12, 12, 1, 1), /* by regions, M tail 4 */
	    C2(1, 320, 64, 1, 16, 16, 3, 1, 24, 24, 1, 1),  /* a 1x1 */
	};
	for (int ci = 0; ci < LEN(big); ci++)
		CHECK(conv_threads_same(&big[ci], ci));
}

/* The channel kernel over k (input channels x taps) deeper than its K
 * block (1024 steps: conv-direct.c's CHAN_KB), each tile's sums carried
 * from block to block: k not a multiple of the block (2 to 10 blocks),
 * more tiles than a group keeps (16; 64 deeper than CHAN_DEEP_K) and
 * fewer, rows paired in one tile,
 * 32 + 8 and 32 + 16 channels, groups, batch 2, stride 2, dilation, every
 * activation; then the same bytes at 1 to 3 threads (conv_threads_same:
 * the rows split at any tile, the sums in the one-thread order). */
static void test_fast_conv_deep_k(void)
{
	rng_state = 12;
	static const conv_case cases[] = {
	    C2(2, 150, 40, 1, 9, 9, 3, 1, 1, 1, 1, 1),	 /* k 1350: 2 blocks, 9 tiles */
	    C2(1, 130, 48, 1, 20, 20, 3, 1, 1, 1, 1, 1), /* 40 tiles: groups 16 + 16 + 8 */
	    C2(1, 600, 64, 2, 8, 8, 3, 1, 1, 1, 1, 1),	 /* groups, k 2700: 3 blocks */
	    C2(2, 260, 36, 1, 5, 5, 3, 1, 1, 1, 0, 1),	 /* rows in pairs, no bias */
	    C2(1, 1100, 40, 1, 4, 6, 3, 1, 1, 1, 1, 1),	 /* k 9900: 10 blocks of 990 */
	    C2(1, 120, 24, 1, 17, 16, 3, 2, 1, 1, 1, 1), /* stride 2, 16 channels */
	    C2(1, 128, 33, 1, 12, 12, 3, 1, 0, 2, 1, 1), /* dilation 2, 32 + 1 */
	    /* deeper than CHAN_DEEP_K (8192): groups of 64 tiles, their sums
	     * in the scratch after the padded copy (120 tiles a panel: 64 +
	     * 56, 32 + 16 channels), and after the edge columns' windows
	     * (stride 2: 60 tiles) */
	    C2(1, 920, 48, 1, 40, 40, 3, 1, 1, 1, 1, 1),
	    C2(1, 1000, 20, 1, 60, 60, 3, 2, 1, 1, 1, 1),
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 2, 1));
	for (int ci = 0; ci < 4; ci++)
		CHECK(conv_threads_same(&cases[ci], ci));
	CHECK(conv_threads_same(&cases[LEN(cases) - 2], 4));
	CHECK(conv_threads_same(&cases[LEN(cases) - 1], 5));
	/* shallower K blocks: a 1x1 on the channel kernel (short rows) in
	 * blocks of at most 128 (conv-direct.c: CHAN_KB_1X1), 600 in 5 of
	 * 120, 4 tiles a group, 6 panels of 32 and one of 8 channels; a 3x3
	 * of k up to 1024 in blocks of at most 144 (CHAN_KB_WINDOW), 333 in 3
	 * of 111 */
	static const conv_case blocked[] = {
	    C2(1, 600, 200, 1, 7, 7, 1, 1, 0, 1, 1, 1),
	    C2(1, 37, 40, 1, 18, 18, 3, 1, 1, 1, 1, 1),
	};
	CHECK(conv_cases(blocked, LEN(blocked), 1));
	for (int ci = 0; ci < LEN(blocked); ci++)
		CHECK(conv_threads_same(&blocked[ci], 6 + ci));
}

/* A batch's items whole to the threads (conv-direct.c's batch_part):
 * a padded copy, the edge columns' windows or a deep panel's sums a
 * thread, the items left over (5 at 2 threads, 4 at 3) one by one, against
 * the double-precision loops and the same bytes as one thread; 4 items at
 * 2 threads go in one job of the pool (one by one they had been 4). */
static void test_fast_conv_batch(void)
{
	rng_state = 21;
	static const conv_case cases[] = {
	    C2(4, 40, 48, 1, 20, 20, 3, 1, 1, 1, 1, 1),	  /* padded copies */
	    C2(5, 24, 40, 1, 40, 40, 3, 2, 1, 1, 1, 1),	  /* stride 2: edge windows */
	    C2(3, 1000, 20, 1, 12, 12, 3, 1, 1, 1, 1, 1), /* k 9000: deep sums */
	    C2(4, 64, 64, 2, 14, 14, 3, 1, 1, 1, 0, 1),	  /* groups, no bias */
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	for (int ci = 0; ci < LEN(cases); ci++) {
		uint64_t jobs = 0;
		CHECK(conv_threads_jobs(&cases[ci], 20 + ci, &jobs));
		if (ci == 0 && gc_pk_usable())
			CHECK_INT((int)jobs, 1);
	}
}

/* Planes whose channels would crowd a few L1 sets
 * (gc_pk_channels_crowd): a stride-1 3x3 on 128x128 and 96x96 inputs reads
 * the padded copy, not the input in place; padded planes of 64x64 (a 62x62
 * input), 32x32 (a 28x28 one with pads 2 and dilation 2, in groups) and
 * 16x16 (14x14) get a line of slack a channel; a stride-2 one and an
 * 84x84 one still read in place; 1x1s on planes of 32x32, 16x64 (groups,
 * batch 2) and 16x16, whose row GEMM copies each panel first. The plans,
 * then the outputs against the loops, every activation on the first of
 * each kind, and the same bytes at 1 to 3 threads. */
static int plan_of(int64_t c, int64_t m, int64_t g, int64_t hw, int64_t s, int64_t pad,
		   int64_t dil, gc_pk_conv *p)
{
	int64_t in[3] = {1, hw, hw}, k[3] = {1, 3, 3}, st[3] = {1, s, s}, d[3] = {1, dil, dil};
	int64_t lo[3] = {0, pad, pad}, o = (hw + 2 * pad - dil * 2 - 1) / s + 1, out[3] = {1, o, o};
	gc_nn_act none = {.kind = GC_NN_ACT_NONE};
	return gc_pk_conv_plan(p, 1, c, m, g, in, k, st, d, lo, out, &none, INT64_MAX);
}

static void test_fast_conv_crowded_planes(void)
{
	static const struct {
		int64_t c, m, g, hw, s, pad, dil;
		int edge;
		int64_t pin_sp; /* 0: not padded (read in place) */
	} plans[] = {
	    {64, 64, 1, 128, 1, 1, 1, 0, 130 * 130},
	    {16, 24, 1, 96, 1, 1, 1, 0, 98 * 98},
	    {64, 64, 1, 62, 1, 1, 1, 0, 64 * 64 + 16},
	    {32, 64, 2, 28, 1, 2, 2, 0, 32 * 32 + 16},
	    {256, 256, 1, 14, 1, 1, 1, 0, 16 * 16 + 16},
	    {64, 64, 1, 128, 2, 1, 1, 1, 0},
	    {64, 64, 1, 84, 1, 1, 1, 1, 0},
	    {64, 64, 1, 28, 1, 1, 1, 0, 30 * 30},
	};
	for (int i = 0; i < LEN(plans) && gc_pk_usable(); i++) {
		gc_pk_conv p;
		CHECK_INT(plan_of(plans[i].c, plans[i].m, plans[i].g, plans[i].hw, plans[i].s,
				  plans[i].pad, plans[i].dil, &p),
			  0);
		CHECK_INT(p.edge, plans[i].edge);
		if (plans[i].pin_sp)
			CHECK_INT(p.pin_sp, plans[i].pin_sp);
		gc_pk_conv_free(&p);
	}
	rng_state = 15;
	static const conv_case cases[] = {
	    C2(1, 16, 40, 1, 128, 128, 3, 1, 1, 1, 1, 1),
	    C2(1, 16, 40, 1, 62, 62, 3, 1, 1, 1, 1, 1),
	    C2(1, 32, 64, 2, 28, 28, 3, 1, 2, 2, 1, 1),
	    C2(2, 64, 48, 1, 14, 14, 3, 1, 1, 1, 0, 1),
	    C2(1, 16, 32, 1, 96, 96, 3, 1, 1, 1, 1, 1),
	    /* 1x1s on the row GEMM, their panels copied (conv.c's v_copy) */
	    C2(1, 72, 56, 1, 32, 32, 1, 1, 0, 1, 1, 1),
	    C2(2, 24, 40, 2, 16, 64, 1, 1, 0, 1, 1, 1),
	    C2(1, 64, 16, 1, 16, 16, 1, 1, 0, 1, 0, 1),
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 1, 1));
	CHECK(conv_cases(cases + 5, 1, 1));
	for (int i = 0; i < 2; i++)
		CHECK(conv_threads_same(&cases[i], i));
	CHECK(conv_threads_same(&cases[5], 5));
}

/* A column window kh x 1: stride sh and dilation dh down, pads ph above
 * and below, pwl and pwh left and right. */
#define CK(n_, c_, m_, g_, h_, w_, kh_, sh_, dh_, ph_, pwl_, pwh_)                                 \
	{                                                                                          \
		.nsp = 2, .n = n_, .c = c_, .m = m_, .g = g_, .in = {h_, w_}, .k = {kh_, 1},       \
		.s = {sh_, 1}, .d = {dh_, 1}, .plo = {ph_, pwl_}, .phi = {ph_, pwh_}, .bias = 1,   \
		.fast = 1                                                                          \
	}

/*
 * Column windows (7x1, 3x1: one pixel wide) at stride 1, whose planes the
 * channel kernel takes as one long row (gc_pk_conv_rows): vertical pads
 * and none, pads along w too (zero columns in the padded copy), vertical
 * dilation, groups, deep k (K blocks over a row of 21 tiles), batches,
 * planes of 6 pixels (two in a tile), 3-D ones over depth slices at depth
 * strides 1 and 2; and a column window at stride 2 down (rows as rows);
 * the same bytes on 1 to 3 threads.
 */
static void test_fast_conv_column(void)
{
	rng_state = 14;
	static const conv_case cases[] = {
	    CK(1, 40, 48, 1, 17, 17, 7, 1, 1, 3, 0, 0),	  /* inception_v3's 7x1, 32 + 16 */
	    CK(2, 24, 20, 1, 8, 8, 3, 1, 1, 1, 0, 0),	  /* 3x1 at 8x8, batch 2 */
	    CK(1, 192, 40, 1, 17, 17, 7, 1, 1, 3, 0, 0),  /* k 1344: 2 blocks, 21 tiles */
	    CK(1, 8, 33, 1, 11, 13, 5, 1, 2, 4, 0, 0),	  /* dilation 2 down */
	    CK(1, 6, 16, 1, 9, 10, 3, 1, 1, 1, 2, 1),	  /* pads along w */
	    CK(1, 16, 24, 4, 12, 15, 3, 1, 1, 1, 0, 0),	  /* groups of 4 -> 6 */
	    CK(1, 10, 18, 1, 20, 9, 7, 1, 1, 0, 0, 0),	  /* no pads */
	    CK(1, 4, 8, 1, 3, 2, 3, 1, 1, 1, 0, 0),	  /* a plane of 6 */
	    CK(1, 5, 20, 1, 7, 7, 3, 1, 1, 4, 0, 0),	  /* rows 0-1 of 13 (a tile): pads */
	    CK(1, 12, 20, 1, 15, 11, 3, 2, 1, 1, 0, 0),	  /* stride 2 down: by rows */
	    {.nsp = 3, /* a row a depth slice */
	     .n = 1,
	     .c = 5,
	     .m = 12,
	     .g = 1,
	     .in = {4, 6, 7},
	     .k = {3, 3, 1},
	     .s = {1, 1, 1},
	     .d = {1, 1, 1},
	     .plo = {1, 1, 0},
	     .phi = {1, 1, 0},
	     .bias = 1,
	     .fast = 1},
	    {.nsp = 3, /* depth stride 2, slices of 6 in pairs */
	     .n = 2,
	     .c = 3,
	     .m = 17,
	     .g = 1,
	     .in = {5, 2, 3},
	     .k = {2, 1, 1},
	     .s = {2, 1, 1},
	     .d = {1, 1, 1},
	     .plo = {0, 0, 0},
	     .phi = {1, 0, 0},
	     .bias = 0,
	     .fast = 1},
	};
	CHECK(conv_cases(cases, LEN(cases), 0));
	CHECK(conv_cases(cases, 2, 1));
	CHECK(conv_threads_same(&cases[0], 0));
	CHECK(conv_threads_same(&cases[2], 2));
}

static void test_fast_threads(void)
{
	rng_state = 8;
	static const conv_case convs[] = {
	    C2(2, 32, 72, 1, 30, 30, 3, 1, 1, 1, 1, 1),	   /* channel kernel, 32 + 32 + 8 */
	    /* small weights: by rows first (conv-direct.c: rows_first) */
	    C2(1, 64, 64, 1, 28, 28, 3, 1, 1, 1, 1, 1),
	    C2(1, 16, 64, 1, 60, 60, 1, 1, 0, 1, 1, 1),	   /* row GEMM */
	    C2(2, 24, 40, 1, 111, 97, 1, 2, 0, 1, 1, 1),   /* row GEMM, strided */
	    C2(2, 256, 128, 1, 28, 27, 1, 2, 0, 1, 1, 1),  /* channel kernel, strided */
	    C2(2, 96, 96, 96, 112, 112, 3, 2, 1, 1, 1, 1), /* depthwise blocked */
	    C2(1, 48, 48, 48, 100, 100, 3, 1, 1, 1, 1, 1), /* depthwise along rows */
	    /* depthwise blocked, 16 + 4 channels in 3 bands of rows: the
	     * threads split the bands */
	    C2(1, 20, 20, 20, 150, 27, 3, 1, 1, 1, 1, 1),
	    /* small planes of many channels (mobile nets' last stages): still
	     * worth 2 threads */
	    C2(1, 960, 960, 960, 7, 7, 3, 1, 1, 1, 1, 1),
	    C2(1, 576, 576, 576, 14, 14, 3, 2, 1, 1, 1, 1),
	    C2(1, 672, 672, 672, 14, 14, 5, 2, 2, 1, 1, 1),
	    /* 1-D: the channel kernel's one row cut in runs of tiles (2
	     * panels), the row GEMM over an im2col (tap_rows) */
	    C1(1, 64, 64, 1, 1000, 3, 1, 1, 1, 1, 1, 1),
	    C1(1, 1, 64, 1, 16000, 80, 4, 40, 40, 1, 1, 1),
	    C2(1, 3, 64, 1, 120, 120, 3, 1, 1, 1, 1, 1), /* by output row */
	    /* first layers: the input's copy split too */
	    C2(1, 3, 32, 1, 299, 299, 3, 2, 0, 1, 1, 1),
	    C2(2, 3, 64, 1, 131, 133, 7, 2, 3, 1, 1, 1),
	    C2(1, 3, 64, 1, 227, 227, 11, 4, 2, 1, 1, 1),
	    C2(1, 3, 64, 1, 120, 223, 7, 2, 3, 1, 1, 1), /* taps read in place */
	    C2(1, 3, 24, 1, 120, 117, 5, 3, 2, 1, 1, 1),
	    /* the tap path's bands of rows over groups of 8 channels, and a
	     * 1-D one of 3 column panels */
	    C2(1, 64, 64, 8, 56, 56, 3, 1, 1, 1, 1, 1),
	    C1(1, 64, 128, 1, 600, 8, 4, 2, 2, 1, 1, 1),
	};
	for (int ci = 0; ci < LEN(convs); ci++)
		CHECK(conv_threads_same(&convs[ci], ci));
	int64_t m = 40, n = 500, kk = 300;
	float *A = rnd_buf(m * kk), *B = rnd_buf(kk * n), *C = rnd_buf(n);
	gc_tensor tA = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){m, kk}, A);
	gc_tensor tB = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){kk, n}, B);
	gc_tensor tC = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){n}, C);
	gc_tensor *ins[] = {&tA, &tB, &tC};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Gemm, "Gemm", 13, 3, ins, 1, 0, NULL);
	float *y4 = malloc((size_t)(m * n) * sizeof(float));
	int ok = rc == 0 && rerun(&h, ins, 4, y4) == 0 &&
		 !memcmp(h.out[0].data, y4, (size_t)(m * n) * sizeof(float));
	harness_free(&h);
	free(A);
	free(B);
	free(C);
	free(y4);
	CHECK(ok);
	/* a MatMul to a narrow output (5 panels, the last partial; 13 tiles of
	 * rows, the last partial): its rows are split, each part packing its own */
	m = 100, n = 200, kk = 300;
	A = rnd_buf(m * kk), B = rnd_buf(kk * n), C = rnd_buf(n);
	gc_tensor mA = harness_tensor(GC_DTYPE_FLOAT, 3, (int64_t[]){1, m, kk}, A);
	gc_tensor mB = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){kk, n}, B);
	gc_tensor mC = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){n}, C);
	gc_tensor *mins[] = {&mA, &mB};
	gc_attr mattrs[] = {{.name = "_gc_bias", .type = GC_ATTR_TENSOR, .v.t = &mC},
			    {.name = "_gc_activation", .type = GC_ATTR_STRING, .n = 4, .v.s = "Relu"}};
	rc = harness_op(&h, gc_prepare_MatMul, "MatMul", 13, 2, mins, 1, LEN(mattrs), mattrs);
	float *y2 = malloc((size_t)(m * n) * sizeof(float));
	y4 = malloc((size_t)(m * n) * sizeof(float));
	uint64_t jobs = gc_nn_par_jobs();
	ok = rc == 0 && rerun(&h, mins, 2, y2) == 0 && rerun(&h, mins, 3, y4) == 0 &&
	     !memcmp(h.out[0].data, y2, (size_t)(m * n) * sizeof(float)) &&
	     !memcmp(h.out[0].data, y4, (size_t)(m * n) * sizeof(float));
	ok = ok && (!gc_pk_usable() || gc_nn_par_jobs() > jobs);
	if (!ok)
		fprintf(stderr, "  matmul split by rows: %s\n", rc ? h.err.msg : "differs");
	harness_free(&h);
	free(A);
	free(B);
	free(C);
	free(y2);
	free(y4);
	CHECK(ok);
	/* 2-8 rows by B read in place (few_rows), B [k][n] and B [n][k], and
	 * one row by B [n][k] streamed (gemv_run): the columns split, each
	 * result summed in the one-thread order */
	for (int c = 0; c < 3; c++) {
		int tb = c > 0;
		m = c < 2 ? 5 : 1, n = 3001, kk = c < 2 ? 67 : 331;
		A = rnd_buf(m * kk), B = rnd_buf(kk * n);
		gc_tensor fA = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){m, kk}, A);
		gc_tensor fB = harness_tensor(GC_DTYPE_FLOAT, 2,
					      tb ? (int64_t[]){n, kk} : (int64_t[]){kk, n}, B);
		gc_tensor *fins[] = {&fA, &fB};
		gc_attr fattrs[] = {{.name = "transB", .type = GC_ATTR_INT, .v.i = tb}};
		rc = harness_op(&h, gc_prepare_Gemm, "Gemm", 13, 2, fins, 1, 1, fattrs);
		y2 = malloc((size_t)(m * n) * sizeof(float));
		y4 = malloc((size_t)(m * n) * sizeof(float));
		jobs = gc_nn_par_jobs();
		ok = rc == 0 && rerun(&h, fins, 2, y2) == 0 && rerun(&h, fins, 3, y4) == 0 &&
		     !memcmp(h.out[0].data, y2, (size_t)(m * n) * sizeof(float)) &&
		     !memcmp(h.out[0].data, y4, (size_t)(m * n) * sizeof(float));
		ok = ok && rerun(&h, fins, 4, y4) == 0 &&
		     !memcmp(h.out[0].data, y4, (size_t)(m * n) * sizeof(float));
		ok = ok && (!gc_pk_usable() || gc_nn_par_jobs() > jobs);
		if (!ok)
			fprintf(stderr, "  gemm of %lld rows, transB %d: %s\n", (long long)m, tb,
				rc ? h.err.msg : "differs");
		harness_free(&h);
		free(A);
		free(B);
		free(y2);
		free(y4);
		CHECK(ok);
	}
	/* Softmax over the last axis (attention's scores), its rows split */
	int64_t rows = 4 * 96, len = 97;
	A = rnd_buf(rows * len);
	gc_tensor sx = harness_tensor(GC_DTYPE_FLOAT, 3, (int64_t[]){4, 96, len}, A);
	gc_tensor *sins[] = {&sx};
	rc = harness_op(&h, gc_prepare_Softmax, "Softmax", 13, 1, sins, 1, 0, NULL);
	y2 = malloc((size_t)(rows * len) * sizeof(float));
	jobs = gc_nn_par_jobs();
	ok = rc == 0 && rerun(&h, sins, 2, y2) == 0 && gc_nn_par_jobs() > jobs &&
	     !memcmp(h.out[0].data, y2, (size_t)(rows * len) * sizeof(float));
	if (!ok)
		fprintf(stderr, "  softmax split by rows: %s\n", rc ? h.err.msg : "differs");
	harness_free(&h);
	free(A);
	free(y2);
	CHECK(ok);
}

/* Sessions on several threads, each splitting its kernels: one of them has
 * the pool at a time, the others run their parts themselves; all give the
 * one-thread bytes. */
typedef struct par_caller {
	harness_run *h;
	gc_tensor **in;
	float *y;
	int rc;
} par_caller;

static void *par_caller_run(void *p)
{
	par_caller *c = p;
	for (int i = 0; i < 5 && !c->rc; i++)
		c->rc = rerun(c->h, c->in, 2, c->y);
	return NULL;
}

static void test_fast_threads_callers(void)
{
	rng_state = 10;
	int64_t ny = 64 * 30 * 30;
	float *x = rnd_buf(32 * 30 * 30), *w = rnd_buf(64 * 32 * 9), *b = rnd_buf(64);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 32, 30, 30}, x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){64, 32, 3, 3}, w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){64}, b);
	gc_tensor *ins[] = {&tx, &tw, &tb};
	gc_attr attrs[] = {{.name = "pads",
			    .type = GC_ATTR_INTS,
			    .n = 4,
			    .v.ints = (const int64_t[]){1, 1, 1, 1}}};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Conv, "Conv", 13, 3, ins, 1, LEN(attrs), attrs);
	par_caller c[3];
	pthread_t th[3];
	int started = 0;
	for (int i = 0; i < 3; i++)
		c[i] = (par_caller){.h = &h, .in = ins, .y = malloc((size_t)ny * sizeof(float))};
	while (rc == 0 && started < 3 &&
	       !pthread_create(&th[started], NULL, par_caller_run, &c[started]))
		started++;
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	int ok = rc == 0 && started == 3;
	for (int i = 0; ok && i < 3; i++) {
		ok = c[i].rc == 0 && !memcmp(c[i].y, h.out[0].data, (size_t)ny * sizeof(float));
		if (!ok)
			fprintf(stderr, "  caller %d: rc %d or different bytes\n", i, c[i].rc);
	}
	for (int i = 0; i < 3; i++)
		free(c[i].y);
	harness_free(&h);
	free(x);
	free(w);
	free(b);
	CHECK_INT(rc, 0);
	CHECK(ok);
}

TEST_MAIN(TEST(test_fast_conv_1x1), TEST(test_fast_conv_1x1_strided), TEST(test_fast_conv_spatial), TEST(test_fast_conv_column),
	  TEST(test_fast_conv_deep_k), TEST(test_fast_conv_batch), TEST(test_fast_conv_crowded_planes), TEST(test_fast_conv_1d_3d), TEST(test_fast_conv_depthwise),
	  TEST(test_fast_conv_weights_unknown), TEST(test_fast_conv_nan),
	  TEST(test_fast_conv_swish_range), TEST(test_fast_conv_taps), TEST(test_fast_conv_first),
	  TEST(test_fast_split), TEST(test_fast_dw_flat_edges), TEST(test_fast_conv_dilated), TEST(test_fast_threads),
	  TEST(test_fast_threads_callers))
