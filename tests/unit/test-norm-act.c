/*
 * InstanceNormalization and GroupNormalization (opsets 18 and 21) with a
 * fused activation (runtime/kernels/nn-act.h's _gc_ attributes, as
 * lib/pass-activation.c writes them) against plain double-precision loops
 * written here: every activation, odd channel counts and planes, batch 2,
 * float32 and float64, 1 and 2 threads.
 *
 * Tolerance: |y - want| <= 1e-5 (1 + |want|) for float32 (the mean and
 * variance are float32 sums of at most a few thousand terms of inputs
 * around 1), 1e-12 (1 + |want|) for float64.
 */
#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fused-act.h"
#include "harness.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static uint32_t rng_state = 3;

static double rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

static const act_case ACTS[] = {
    {NULL, 0, 0, 0, 0, 0, 0},		{"Relu", 0, 0, 0, 0, 0, 0},
    {"Clip", 1, 1, -0.5f, 0.75f, 0, 0}, {"LeakyRelu", 0, 0, 0, 0, 0.1f, 0},
    {"Swish", 0, 0, 0, 0, 0, 0},	{"HardSwish", 0, 0, 0, 0, 0.4f, 0.45f},
};

typedef struct norm_case {
	int64_t n, c, h, w;
	int64_t groups; /* 0: InstanceNormalization */
	int opset;	/* GroupNormalization: 18 (scale per group) or 21 (per channel) */
	int dbl, threads;
} norm_case;

static int norm_check(const norm_case *nc, const act_case *a)
{
	int64_t sp = nc->h * nc->w, nx = nc->n * nc->c * sp;
	int64_t groups = nc->groups ? nc->groups : nc->c, cpg = nc->c / groups;
	int64_t np = nc->groups && nc->opset < 21 ? groups : nc->c;
	double *x = malloc((size_t)nx * sizeof(double)),
	       *want = malloc((size_t)nx * sizeof(double));
	double sc[64], bi[64];
	for (int64_t i = 0; i < nx; i++)
		x[i] = rnd() * 2 + 0.5;
	for (int64_t i = 0; i < np; i++) {
		sc[i] = 0.5 + rnd() * 0.5 + 0.5;
		bi[i] = rnd();
	}
	for (int64_t b = 0; b < nc->n; b++)
		for (int64_t g = 0; g < groups; g++) {
			const double *xs = x + (b * nc->c + g * cpg) * sp;
			double m = 0, v = 0;
			for (int64_t i = 0; i < cpg * sp; i++)
				m += xs[i];
			m /= (double)(cpg * sp);
			for (int64_t i = 0; i < cpg * sp; i++)
				v += (xs[i] - m) * (xs[i] - m);
			v /= (double)(cpg * sp);
			for (int64_t c = 0; c < cpg; c++) {
				int64_t p = np == nc->c ? g * cpg + c : g;
				for (int64_t i = 0; i < sp; i++) {
					int64_t at = (b * nc->c + g * cpg + c) * sp + i;
					want[at] = act_apply(
					    a, (x[at] - m) / sqrt(v + 1e-5) * sc[p] + bi[p]);
				}
			}
		}
	gc_dtype dt = nc->dbl ? GC_DTYPE_DOUBLE : GC_DTYPE_FLOAT;
	size_t es = nc->dbl ? sizeof(double) : sizeof(float);
	void *xv = malloc((size_t)nx * es), *sv = malloc((size_t)np * es),
	     *bv = malloc((size_t)np * es);
	for (int64_t i = 0; i < nx; i++)
		nc->dbl ? (void)(((double *)xv)[i] = x[i]) : (void)(((float *)xv)[i] = (float)x[i]);
	for (int64_t i = 0; i < np; i++) {
		nc->dbl ? (void)(((double *)sv)[i] = sc[i])
			: (void)(((float *)sv)[i] = (float)sc[i]);
		nc->dbl ? (void)(((double *)bv)[i] = bi[i])
			: (void)(((float *)bv)[i] = (float)bi[i]);
	}
	gc_tensor tx = harness_tensor(dt, 4, (int64_t[]){nc->n, nc->c, nc->h, nc->w}, xv);
	gc_tensor ts = harness_tensor(dt, 1, (int64_t[]){np}, sv);
	gc_tensor tb = harness_tensor(dt, 1, (int64_t[]){np}, bv);
	gc_tensor *ins[] = {&tx, &ts, &tb};
	gc_attr attrs[8];
	int nattr = 0;
	if (nc->groups)
		attrs[nattr++] =
		    (gc_attr){.name = "num_groups", .type = GC_ATTR_INT, .v.i = nc->groups};
	nattr = act_attrs(a, attrs, nattr);
	harness_run h;
	harness_threads = nc->threads;
	int rc = nc->groups ? harness_op(&h, gc_prepare_GroupNormalization, "GroupNormalization",
					 nc->opset, 3, ins, 1, nattr, attrs)
			    : harness_op(&h, gc_prepare_InstanceNormalization,
					 "InstanceNormalization", 13, 3, ins, 1, nattr, attrs);
	harness_threads = 1;
	int ok = rc == 0;
	if (rc)
		fprintf(stderr, "  failed: %s\n", h.err.msg);
	double tol = nc->dbl ? 1e-12 : 1e-5;
	for (int64_t i = 0; ok && i < nx; i++) {
		double got = nc->dbl ? ((const double *)h.out[0].data)[i]
				     : ((const float *)h.out[0].data)[i];
		if (!(fabs(got - want[i]) <= tol * (1 + fabs(want[i])))) {
			fprintf(stderr, "  element %lld: got %.17g, expected %.17g\n", (long long)i,
				got, want[i]);
			ok = 0;
		}
	}
	if (!ok)
		fprintf(
		    stderr,
		    "  case: n %lld c %lld %lldx%lld groups %lld opset %d %s threads %d act %s\n",
		    (long long)nc->n, (long long)nc->c, (long long)nc->h, (long long)nc->w,
		    (long long)nc->groups, nc->opset, nc->dbl ? "f64" : "f32", nc->threads,
		    a->name ? a->name : "none");
	harness_free(&h);
	free(x);
	free(want);
	free(xv);
	free(sv);
	free(bv);
	return ok;
}

static void test_norm_act(void)
{
	static const norm_case cases[] = {
	    {2, 5, 7, 9, 0, 13, 0, 1},	  /* InstanceNormalization */
	    {1, 12, 33, 35, 0, 13, 0, 2}, /* split over 2 threads */
	    {2, 6, 5, 3, 0, 13, 1, 1},	  /* float64 */
	    {2, 12, 9, 11, 3, 21, 0, 1},  /* GroupNormalization, per channel */
	    {1, 32, 31, 33, 8, 21, 0, 2}, /* the U-Net's, smaller, 2 threads */
	    {2, 10, 6, 7, 5, 18, 0, 1},	  /* opset 18: per group */
	    {1, 8, 5, 5, 2, 21, 1, 2},	  /* float64 */
	};
	for (int i = 0; i < LEN(cases); i++)
		for (int j = 0; j < LEN(ACTS); j++)
			CHECK(norm_check(&cases[i], &ACTS[j]));
}

TEST_MAIN(TEST(test_norm_act))
