/*
 * Accuracy of the vectorised float32 functions (runtime/kernels/vmath.h) as
 * the kernels run them on this CPU (the AVX-512, AVX2 or baseline clone the
 * loader picked), and of the recurrent ops' AVX-512 gates (sgemm-pack.h's
 * gc_pk_sigmoid and gc_pk_tanh, where the CPU has AVX-512): each op runs
 * over a strided sweep of every float32 of a range (2^21 inputs evenly
 * spaced in the ordered bit patterns, both ends included; all 2^31 would
 * take minutes under the sanitizers) and each result is compared with
 * libm's in double, the error counted in float32 ulps of the
 * exact value (ulps of the smallest normal below it). The measured maxima are
 * printed as a table; each must stay within the stated bound. Then the
 * special values (infinities, NaN, 0, negative logs).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "expect.h"
#include "harness.h"
#include "kernels/sgemm-pack.h"

#define SWEEP (1 << 21)

static double r_exp(double x) { return exp(x); }
static double r_log(double x) { return log(x); }
static double r_tanh(double x) { return tanh(x); }
static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_erf(double x) { return erf(x); }
static double r_softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; } /* NaN stays */
static double r_hsig(double x) { return clamp01((double)0.2f * x + 0.5); } /* alpha is a float */
static double r_hswish(double x) { return x * clamp01(x / 6 + 0.5); }
static double r_mish(double x) { return x * tanh(r_softplus(x)); }
static double r_swish(double x) { return x / (1 + exp(-x)); }
static double r_gelu(double x) { return 0.5 * x * (1 + erf(x / sqrt(2.0))); }

typedef struct vm_case {
	const char *op;
	gc_prepare_fn prepare;
	double (*ref)(double);
	float lo, hi;
	double bound;	  /* ulps */
	double abs_bound; /* or, when not 0, absolute error (piecewise-linear functions, whose
			     x * a + b cancels to 0 at the kinks: ulps there say nothing) */
	/* or, not NULL, a kernel's in-place function rather than the op
	 * (the recurrent ops' AVX-512 gates, sgemm-pack.h): where
	 * gc_pk_usable */
	void (*vec)(float *v, int64_t n);
} vm_case;

/* clang-format off */
static const vm_case vm_cases[] = {
	{"Exp", gc_prepare_Exp, r_exp, -103.9f, 88.7f, 2, 0, NULL},
	{"Log", gc_prepare_Log, r_log, 1e-45f, FLT_MAX, 2, 0, NULL},
	{"Tanh", gc_prepare_Tanh, r_tanh, -10.0f, 10.0f, 3, 0, NULL},
	{"Sigmoid", gc_prepare_Sigmoid, r_sigmoid, -87.0f, 88.0f, 3, 0, NULL},
	{"Erf", gc_prepare_Erf, r_erf, -5.0f, 5.0f, 6, 0, NULL},
	{"Softplus", gc_prepare_Softplus, r_softplus, -87.0f, 88.0f, 3, 0, NULL},
	{"HardSigmoid", gc_prepare_HardSigmoid, r_hsig, -8.0f, 8.0f, 0, 1.2e-7, NULL},
	{"HardSwish", gc_prepare_HardSwish, r_hswish, -8.0f, 8.0f, 0, 1e-6, NULL},
	{"Mish", gc_prepare_Mish, r_mish, -20.0f, 20.0f, 4, 0, NULL},
	{"Swish", gc_prepare_Swish, r_swish, -87.0f, 88.0f, 4, 0, NULL},
	/* x/2 (1 + erf(x / sqrt 2)) cancels for negative x (as in the
	 * graph it replaces): ulps where it does not, the absolute error over
	 * the whole range */
	{"Gelu", gc_prepare_Gelu, r_gelu, -1.0f, 10.0f, 8, 0, NULL},
	{"Gelu", gc_prepare_Gelu, r_gelu, -10.0f, 10.0f, 0, 2e-6, NULL},
	{"gc_pk_tanh", NULL, r_tanh, -10.0f, 10.0f, 3, 0, gc_pk_tanh},
	{"gc_pk_sigmoid", NULL, r_sigmoid, -87.0f, 88.0f, 3, 0, gc_pk_sigmoid},
};
/* clang-format on */

/* float <-> an integer that orders like the float */
static int64_t ordered(float f)
{
	int32_t b;
	memcpy(&b, &f, 4);
	return b < 0 ? -(int64_t)(b & 0x7fffffff) : b;
}

static float from_ordered(int64_t o)
{
	int32_t b = o < 0 ? (int32_t)(-o) | (int32_t)0x80000000 : (int32_t)o;
	float f;
	memcpy(&f, &b, 4);
	return f;
}

/* The error of y in float32 ulps of the exact value r. */
static double ulp_err(float y, double r)
{
	if (isnan(r))
		return isnan(y) ? 0 : INFINITY;
	if (fabs(r) > FLT_MAX) /* the float result is an infinity */
		return (double)y == (r > 0 ? INFINITY : -INFINITY) ? 0 : INFINITY;
	if (!isfinite(y))
		return INFINITY;
	double a = fabs(r), u = 0x1p-149;
	if (a >= 0x1p-126) {
		int e;
		frexp(a, &e);
		u = ldexp(1.0, e - 24);
	}
	return fabs((double)y - r) / u;
}

static int run_unary(gc_prepare_fn prepare, const char *op, const float *x, float *y, int64_t n)
{
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 1, D(n), x);
	gc_tensor *in[] = {&tx};
	harness_run h;
	int rc = harness_op(&h, prepare, op, 14, 1, in, 1, 0, NULL);
	if (rc)
		fprintf(stderr, "  %s: %s\n", op, h.err.msg);
	else
		memcpy(y, h.out[0].data, (size_t)n * sizeof *y);
	harness_free(&h);
	return rc;
}

/* y = the case's function of x, or 1 when it does not run on this CPU. */
static int run_case(const vm_case *vc, const float *x, float *y, int64_t n)
{
	if (!vc->vec)
		return run_unary(vc->prepare, vc->op, x, y, n) ? -1 : 0;
	if (!gc_pk_usable())
		return 1;
	memcpy(y, x, (size_t)n * sizeof *y);
	vc->vec(y, n);
	return 0;
}

static void test_vmath_ulp_table(void)
{
	float *x = malloc(SWEEP * sizeof *x), *y = malloc(SWEEP * sizeof *y);
	printf("  %-12s %-26s %10s %10s %10s  %s\n", "function", "range (strided sweep)", "max ulp",
	       "max abs", "bound", "worst input");
	for (size_t c = 0; c < sizeof vm_cases / sizeof vm_cases[0]; c++) {
		const vm_case *vc = &vm_cases[c];
		int64_t a = ordered(vc->lo), b = ordered(vc->hi);
		for (int64_t i = 0; i < SWEEP; i++)
			x[i] = from_ordered(a + (b - a) * i / (SWEEP - 1));
		int rc = run_case(vc, x, y, SWEEP);
		CHECK(rc >= 0);
		if (rc)
			continue;
		double worst = 0, worst_abs = 0;
		float wx = 0;
		for (int64_t i = 0; i < SWEEP; i++) {
			double r = vc->ref((double)x[i]);
			double e = ulp_err(y[i], r), ea = fabs((double)y[i] - r);
			if (vc->abs_bound ? !(ea <= worst_abs) : !(e <= worst))
				wx = x[i];
			worst = e > worst || isnan(e) ? e : worst;
			worst_abs = ea > worst_abs || isnan(ea) ? ea : worst_abs;
		}
		double got = vc->abs_bound ? worst_abs : worst;
		double bound = vc->abs_bound ? vc->abs_bound : vc->bound;
		printf("  %-12s [%-11.4g, %11.4g] %10.3f %10.2g %10.2g%s  %.9g\n", vc->op,
		       (double)vc->lo, (double)vc->hi, worst, worst_abs, bound,
		       vc->abs_bound ? " abs" : " ulp", (double)wx);
		if (!(got <= bound))
			fprintf(stderr, "  %s: error %.3g at x = %.9g, above the bound %.3g\n", vc->op,
				got, (double)wx, bound);
		CHECK(got <= bound);
	}
	free(x);
	free(y);
}

static void test_vmath_special_values(void)
{
	static const float xs[] = {INFINITY, -INFINITY, NAN, 0.0f, -0.0f, -1.0f, 1e-45f, 200.0f,
				   -200.0f};
	enum { N = sizeof xs / sizeof xs[0] };
	float y[N];
	for (size_t c = 0; c < sizeof vm_cases / sizeof vm_cases[0]; c++) {
		const vm_case *vc = &vm_cases[c];
		int rc = run_case(vc, xs, y, N);
		CHECK(rc >= 0);
		for (int i = 0; !rc && i < N; i++) {
			double r = vc->ref((double)xs[i]);
			/* beyond the ranges above only the value's class and, for
			 * finite results, 1e-6 relative are asked */
			int ok = isnan(r) ? isnan(y[i])
				 : isinf(r) || fabs(r) > FLT_MAX
				     ? (double)y[i] == (r > 0 ? INFINITY : -INFINITY)
				     : fabs((double)y[i] - r) <= 1e-6 * fabs(r) + 1e-37;
			if (!ok)
				fprintf(stderr, "  %s(%g) = %.9g, libm says %.9g\n", vc->op,
					(double)xs[i], (double)y[i], r);
			CHECK(ok);
		}
	}
}

TEST_MAIN(TEST(test_vmath_ulp_table), TEST(test_vmath_special_values))
