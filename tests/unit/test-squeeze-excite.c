/*
 * com.graphcc::SqueezeExcite (runtime/kernels/squeeze-excite.c) against
 * plain double-precision loops written here: the mean over the spatial
 * axes, act(W1 s + b1), gate(W2 h + b2), x times the gate, on shapes of
 * every kind: odd channel counts, hidden widths below, at and past a
 * vector of 16 with tails, 1x1 to 112x112 spatial, 1-D and 3-D, batch 2,
 * each act and gate, 1 and 2 threads (the second must split the work).
 *
 * Tolerance: |y - want| <= 2e-6 |x| + 1e-7. The gate is in [0, 1] with
 * slope at most 1/4 (sigmoid) or alpha (hard), so y's error is |x| times
 * the gate's, and the gate's is a few float32 roundings of its dot
 * products (of inputs in [-1, 1), at most 1152 terms: ~1e-6 relative).
 */
#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/nn-par.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static uint32_t rng_state = 11;

static float rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0);
}

typedef struct se_case {
	int64_t n, c, cm;
	int rank;	  /* of x: 3 to 5 */
	int64_t sp[3];	  /* spatial dims (rank - 2 of them) */
	const char *act;  /* relu, swish, none */
	const char *gate; /* sigmoid, hardsigmoid */
	int threads;
	int split; /* with 2 threads: the work must be split */
} se_case;

static void reference(const se_case *sc, int64_t sp, const float *x, const float *w1,
		      const float *b1, const float *w2, const float *b2, double *y)
{
	double *s = malloc((size_t)sc->c * sizeof(double)),
	       *h = malloc((size_t)sc->cm * sizeof(double));
	for (int64_t b = 0; b < sc->n; b++) {
		const float *xb = x + b * sc->c * sp;
		for (int64_t c = 0; c < sc->c; c++) {
			double acc = 0;
			for (int64_t i = 0; i < sp; i++)
				acc += xb[c * sp + i];
			s[c] = acc / (double)sp;
		}
		for (int64_t o = 0; o < sc->cm; o++) {
			double acc = b1[o];
			for (int64_t c = 0; c < sc->c; c++)
				acc += (double)w1[o * sc->c + c] * s[c];
			h[o] = !strcmp(sc->act, "relu")	   ? (acc > 0 ? acc : 0)
			       : !strcmp(sc->act, "swish") ? acc / (1 + exp(-acc))
							   : acc;
		}
		for (int64_t c = 0; c < sc->c; c++) {
			double z = b2[c];
			for (int64_t o = 0; o < sc->cm; o++)
				z += (double)w2[c * sc->cm + o] * h[o];
			double g = !strcmp(sc->gate, "sigmoid") ? 1 / (1 + exp(-z))
								: fmin(1, fmax(0, 0.3 * z + 0.45));
			for (int64_t i = 0; i < sp; i++)
				y[(b * sc->c + c) * sp + i] = xb[c * sp + i] * g;
		}
	}
	free(s);
	free(h);
}

/* Runs the case against the reference; its output copied to `keep` when
 * given. */
static int se_check(const se_case *sc, float *keep)
{
	int64_t sp = 1, xd[5] = {sc->n, sc->c};
	for (int i = 0; i < sc->rank - 2; i++) {
		sp *= sc->sp[i];
		xd[2 + i] = sc->sp[i];
	}
	int64_t nx = sc->n * sc->c * sp;
	float *x = malloc((size_t)nx * sizeof(float));
	float *w1 = malloc((size_t)(sc->cm * sc->c) * sizeof(float)),
	      *b1 = malloc((size_t)sc->cm * sizeof(float));
	float *w2 = malloc((size_t)(sc->cm * sc->c) * sizeof(float)),
	      *b2 = malloc((size_t)sc->c * sizeof(float));
	double *want = malloc((size_t)nx * sizeof(double));
	for (int64_t i = 0; i < nx; i++)
		x[i] = rnd() + 0.25f; /* means away from 0 */
	for (int64_t i = 0; i < sc->cm * sc->c; i++) {
		w1[i] = rnd() * 4 / sqrtf((float)sc->c);
		w2[i] = rnd() * 4 / sqrtf((float)sc->cm);
	}
	for (int64_t i = 0; i < sc->cm; i++)
		b1[i] = rnd();
	for (int64_t i = 0; i < sc->c; i++)
		b2[i] = rnd();
	reference(sc, sp, x, w1, b1, w2, b2, want);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, sc->rank, xd, x);
	gc_tensor tw1 = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){sc->cm, sc->c, 1, 1}, w1);
	gc_tensor tb1 = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){sc->cm}, b1);
	gc_tensor tw2 = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){sc->c, sc->cm, 1, 1}, w2);
	gc_tensor tb2 = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){sc->c}, b2);
	gc_tensor *ins[] = {&tx, &tw1, &tb1, &tw2, &tb2};
	gc_attr attrs[] = {
	    {.name = "act", .type = GC_ATTR_STRING, .n = (int64_t)strlen(sc->act), .v.s = sc->act},
	    {.name = "gate",
	     .type = GC_ATTR_STRING,
	     .n = (int64_t)strlen(sc->gate),
	     .v.s = sc->gate},
	    {.name = "alpha", .type = GC_ATTR_FLOAT, .v.f = 0.3f},
	    {.name = "beta", .type = GC_ATTR_FLOAT, .v.f = 0.45f}};
	harness_run h;
	harness_threads = sc->threads;
	uint64_t jobs = gc_nn_par_jobs();
	int rc = harness_op(&h, gc_prepare_SqueezeExcite, "SqueezeExcite", 1, 5, ins, 1, LEN(attrs),
			    attrs);
	int split = gc_nn_par_jobs() > jobs;
	harness_threads = 1;
	int ok = rc == 0;
	if (rc)
		fprintf(stderr, "  failed: %s\n", h.err.msg);
	for (int64_t i = 0; ok && i < nx; i++) {
		double got = ((const float *)h.out[0].data)[i];
		if (!(fabs(got - want[i]) <= 2e-6 * fabs(x[i]) + 1e-7)) {
			fprintf(stderr, "  element %lld: got %.9g, expected %.9g\n", (long long)i,
				got, want[i]);
			ok = 0;
		}
	}
	if (ok && sc->split && !split) {
		fprintf(stderr, "  2 threads: the work was not split\n");
		ok = 0;
	}
	if (!ok)
		fprintf(stderr,
			"  case: n %lld c %lld cm %lld rank %d sp %lldx%lldx%lld act %s gate %s "
			"threads %d\n",
			(long long)sc->n, (long long)sc->c, (long long)sc->cm, sc->rank,
			(long long)sc->sp[0], (long long)sc->sp[1], (long long)sc->sp[2], sc->act,
			sc->gate, sc->threads);
	if (ok && keep)
		memcpy(keep, h.out[0].data, (size_t)nx * sizeof(float));
	harness_free(&h);
	free(x);
	free(w1);
	free(b1);
	free(w2);
	free(b2);
	free(want);
	return ok;
}

static void test_se_shapes(void)
{
	static const se_case cases[] = {
	    {1, 24, 8, 4, {17, 17}, "relu", "hardsigmoid", 1, 0},
	    {2, 37, 20, 4, {5, 3}, "swish", "sigmoid", 1, 0},	     /* 16 + 4 hidden */
	    {1, 40, 16, 4, {1, 1}, "none", "sigmoid", 2, 0},	     /* 1x1: too little to split */
	    {1, 33, 3, 3, {29}, "relu", "sigmoid", 1, 0},	     /* 1-D */
	    {1, 19, 35, 5, {3, 4, 5}, "swish", "hardsigmoid", 1, 0}, /* 3-D, 32 + 3 hidden */
	    {2, 1152, 48, 4, {7, 7}, "swish", "sigmoid", 2, 1},	     /* efficientnet's last */
	    {1, 960, 240, 4, {7, 7}, "relu", "hardsigmoid", 2, 1},   /* mobilenet_v3's last */
	    {1, 32, 8, 4, {112, 112}, "swish", "sigmoid", 2, 1},     /* efficientnet's first */
	    {1, 97, 19, 4, {61, 67}, "none", "hardsigmoid", 2, 1}, /* odd sizes, ~2.6x the minimum share */
	};
	for (int i = 0; i < LEN(cases); i++)
		CHECK(se_check(&cases[i], NULL));
}

/* The same bytes at 1, 2 and 3 threads: each channel's mean, hidden unit
 * and gate is computed the same way whichever part (and phase of the one
 * job) it falls in; hidden widths below the parts a phase has (3 < 8). */
static void test_se_threads_same_bytes(void)
{
	static const se_case cases[] = {
	    {1, 97, 19, 4, {61, 67}, "none", "hardsigmoid", 1, 0},
	    {2, 1152, 48, 4, {7, 7}, "swish", "sigmoid", 1, 0},
	    {1, 200, 3, 4, {40, 40}, "relu", "sigmoid", 1, 0},
	};
	for (int i = 0; i < LEN(cases); i++) {
		se_case sc = cases[i];
		int64_t nx = sc.n * sc.c * sc.sp[0] * sc.sp[1];
		float *one = calloc((size_t)nx, sizeof(float)), *more = calloc((size_t)nx, sizeof(float));
		rng_state = 5;
		CHECK(se_check(&sc, one));
		for (sc.threads = 2, sc.split = 1; sc.threads <= 3; sc.threads++) {
			rng_state = 5;
			CHECK(se_check(&sc, more));
			CHECK(!memcmp(one, more, (size_t)nx * sizeof(float)));
		}
		free(one);
		free(more);
	}
}

TEST_MAIN(TEST(test_se_shapes), TEST(test_se_threads_same_bytes))
