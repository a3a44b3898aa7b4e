/*
 * 2-D ConvTranspose (runtime/kernels/conv.c: a GEMM, then the columns
 * scattered into the output planes, split by output channel over the
 * threads) against plain double-precision loops written here, at 1, 2 and
 * 3 threads: groups, strides, pads, dilations, output_padding, batch 2,
 * with and without bias, the U-Net's 2x2 stride-2 up-convolution.
 *
 * Inputs are pseudo-random in [-1, 1). Tolerance: 1e-5 of the sum of the
 * absolute values of an output's products (plus 1e-6), as test-nn-fast.c.
 */
#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static uint32_t rng_state = 5;

static float rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0);
}

typedef struct convt_case {
	int64_t n, c, m, g, h, w, kh, kw, sh, sw, dh, dw;
	int64_t pt, pl, pb, pr, oph, opw;
	int bias;
} convt_case;

static int convt_check(const convt_case *cc, int threads)
{
	int64_t cg = cc->c / cc->g, mg = cc->m / cc->g;
	int64_t oh = (cc->h - 1) * cc->sh + (cc->kh - 1) * cc->dh + 1 + cc->oph - cc->pt - cc->pb;
	int64_t ow = (cc->w - 1) * cc->sw + (cc->kw - 1) * cc->dw + 1 + cc->opw - cc->pl - cc->pr;
	int64_t nx = cc->n * cc->c * cc->h * cc->w, nw = cc->c * mg * cc->kh * cc->kw;
	int64_t ny = cc->n * cc->m * oh * ow;
	float *x = malloc((size_t)nx * sizeof(float)), *w = malloc((size_t)nw * sizeof(float));
	float *b = malloc((size_t)cc->m * sizeof(float));
	double *want = calloc((size_t)ny, sizeof(double)),
	       *mag = calloc((size_t)ny, sizeof(double));
	for (int64_t i = 0; i < nx; i++)
		x[i] = rnd();
	for (int64_t i = 0; i < nw; i++)
		w[i] = rnd();
	for (int64_t i = 0; i < cc->m; i++)
		b[i] = rnd();
	for (int64_t bi = 0; bi < cc->n; bi++)
		for (int64_t mo = 0; mo < cc->m; mo++) {
			double *yp = want + (bi * cc->m + mo) * oh * ow, *mp = mag + (yp - want);
			for (int64_t p = 0; p < oh * ow; p++) {
				yp[p] = cc->bias ? b[mo] : 0;
				mp[p] = cc->bias ? fabs(b[mo]) : 0;
			}
			int64_t gi = mo / mg, ml = mo % mg;
			for (int64_t ci = gi * cg; ci < (gi + 1) * cg; ci++)
				for (int64_t ih = 0; ih < cc->h; ih++)
					for (int64_t iw = 0; iw < cc->w; iw++)
						for (int64_t a = 0; a < cc->kh; a++)
							for (int64_t e = 0; e < cc->kw; e++) {
								int64_t y0 = ih * cc->sh - cc->pt +
									     a * cc->dh;
								int64_t x0 = iw * cc->sw - cc->pl +
									     e * cc->dw;
								if (y0 < 0 || y0 >= oh || x0 < 0 ||
								    x0 >= ow)
									continue;
								double v =
								    (double)x[((bi * cc->c + ci) *
										   cc->h +
									       ih) *
										  cc->w +
									      iw] *
								    w[((ci * mg + ml) * cc->kh +
								       a) *
									  cc->kw +
								      e];
								yp[y0 * ow + x0] += v;
								mp[y0 * ow + x0] += fabs(v);
							}
		}
	gc_tensor tx =
	    harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){cc->n, cc->c, cc->h, cc->w}, x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){cc->c, mg, cc->kh, cc->kw}, w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){cc->m}, b);
	gc_tensor *ins[] = {&tx, &tw, &tb};
	gc_attr attrs[] = {{.name = "strides",
			    .type = GC_ATTR_INTS,
			    .n = 2,
			    .v.ints = (const int64_t[]){cc->sh, cc->sw}},
			   {.name = "dilations",
			    .type = GC_ATTR_INTS,
			    .n = 2,
			    .v.ints = (const int64_t[]){cc->dh, cc->dw}},
			   {.name = "pads",
			    .type = GC_ATTR_INTS,
			    .n = 4,
			    .v.ints = (const int64_t[]){cc->pt, cc->pl, cc->pb, cc->pr}},
			   {.name = "output_padding",
			    .type = GC_ATTR_INTS,
			    .n = 2,
			    .v.ints = (const int64_t[]){cc->oph, cc->opw}},
			   {.name = "group", .type = GC_ATTR_INT, .v.i = cc->g}};
	harness_run h;
	harness_threads = threads;
	int rc = harness_op(&h, gc_prepare_ConvTranspose, "ConvTranspose", 11, cc->bias ? 3 : 2,
			    ins, 1, LEN(attrs), attrs);
	harness_threads = 1;
	int ok = rc == 0 && h.out[0].rank == 4 && h.out[0].dims[2] == oh && h.out[0].dims[3] == ow;
	if (rc)
		fprintf(stderr, "  failed: %s\n", h.err.msg);
	for (int64_t i = 0; ok && i < ny; i++) {
		double got = ((const float *)h.out[0].data)[i];
		if (!(fabs(got - want[i]) <= 1e-5 * mag[i] + 1e-6)) {
			fprintf(stderr, "  element %lld: got %.9g, expected %.9g\n", (long long)i,
				got, want[i]);
			ok = 0;
		}
	}
	if (!ok)
		fprintf(
		    stderr,
		    "  case: n %lld c %lld m %lld g %lld in %lldx%lld k %lldx%lld s %lld,%lld d "
		    "%lld,%lld threads %d\n",
		    (long long)cc->n, (long long)cc->c, (long long)cc->m, (long long)cc->g,
		    (long long)cc->h, (long long)cc->w, (long long)cc->kh, (long long)cc->kw,
		    (long long)cc->sh, (long long)cc->sw, (long long)cc->dh, (long long)cc->dw,
		    threads);
	harness_free(&h);
	free(x);
	free(w);
	free(b);
	free(want);
	free(mag);
	return ok;
}

static void test_convt_threads(void)
{
	static const convt_case cases[] = {
	    /* the U-Net's up-convolution, smaller */
	    {1, 64, 32, 1, 16, 16, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 1},
	    /* groups, odd everything, overlapping taps */
	    {2, 20, 18, 2, 9, 11, 3, 2, 2, 3, 1, 1, 1, 0, 0, 1, 1, 2, 1},
	    {1, 12, 35, 1, 23, 17, 3, 3, 1, 1, 2, 2, 2, 1, 1, 2, 0, 0, 0},
	    {2, 9, 27, 3, 31, 30, 4, 4, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	};
	for (int i = 0; i < LEN(cases); i++)
		for (int t = 1; t <= 3; t++)
			CHECK(convt_check(&cases[i], t));
}

TEST_MAIN(TEST(test_convt_threads))
