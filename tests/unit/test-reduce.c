/*
 * Unit tests for the reduction kernels (reduce.c). Expected values were
 * computed offline with NumPy 1.24 in float64 (np.sum, np.mean, np.max,
 * np.prod, np.argmax, ...; log-sum-exp with the max-shifted formula) on the
 * inputs below and pasted as literals. Float32 results are compared with a
 * tolerance of 1e-5 relative (stated per check); integer results exactly.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/kutil.h"
#include "kernels/value-impl.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* ---- NumPy-computed expectations ---------------------------------------- */
/* exp_sum_ax1_keep: shape [3, 1, 5] */
static const float exp_sum_ax1_keep[15] = {-4.5f, 2.5f, -2.0f, 5.0f,  0.5f, -2.5f, 4.5f, 0.0f,
					   -4.5f, 2.5f, -0.5f, -5.0f, 2.0f, -2.5f, 4.5f};
/* exp_sum_axm1: shape [3, 4] */
static const float exp_sum_axm1[12] = {-2.0f, 1.5f,  -0.75f, 2.75f, -5.25f, 4.0f,
				       -4.0f, 5.25f, -2.75f, 0.75f, -1.5f,  2.0f};
/* exp_sum_all: shape [1, 1, 1] */
static const float exp_sum_all[1] = {0.0f};
/* exp_sum_ax02: shape [4] */
static const float exp_sum_ax02[4] = {-10.0f, 6.25f, -6.25f, 10.0f};
/* exp_mean_last: shape [3, 1] */
static const float exp_mean_last[3] = {0.0f, -0.05405405405405406f, 0.0472972972972973f};
/* exp_mean_hw: shape [2, 3, 1, 1] */
static const float exp_mean_hw[6] = {0.075f, 0.0f, -0.075f, -0.15f, 0.0625f, -0.0125f};
/* exp_mean_ax1: shape [2, 7] */
static const float exp_mean_ax1[14] = {
    -2.0f, -0.25f, 1.5f, -0.5833333333333334f, -0.75f, 1.0f, 0.8333333333333334f, 0.25f, 2.0f,
    -2.0f, -0.25f, 1.5f, -0.5833333333333334f, -0.75f};
/* exp_max_ax1: shape [2, 4] */
static const float exp_max_ax1[8] = {-0.25f, 1.5f, 2.0f, 2.5f, 2.25f, 2.75f, 1.25f, 1.75f};
/* exp_min_ax02: shape [1, 3, 1] */
static const float exp_min_ax02[3] = {-2.75f, -2.0f, -2.75f};
/* exp_prod_ax2: shape [2, 3] */
static const float exp_prod_ax2[6] = {5.15625f, 1.5f, -0.703125f, -1.71875f, -0.0f, -3.8671875f};
/* exp_l1_ax1: shape [2, 4] */
static const float exp_l1_ax1[8] = {4.5f, 2.75f, 5.25f, 5.25f, 5.5f, 5.0f, 2.5f, 5.0f};
/* exp_l2_ax2: shape [2, 3] */
static const float exp_l2_ax2[6] = {3.9210967853395307f, 3.2113081446662823f, 3.020761493398643f,
				    3.2210246816812815f, 3.344772040064913f,  3.799671038392666f};
/* exp_logsum_all: shape [] */
static const float exp_logsum_all[1] = {3.5765502691400166f};
/* exp_sumsq_ax0: shape [3, 4] */
static const float exp_sumsq_ax0[12] = {8.5625f, 8.5625f, 2.125f, 6.5f, 7.3125f, 3.125f,
					4.0f,	 7.0625f, 5.125f, 2.5f, 7.8125f, 8.125f};
/* exp_lse_big: shape [6] */
static const float exp_lse_big[6] = {1002.6899745687107f, 1002.2007236660459f, 1001.7604307093549f,
				     1003.0104307093549f, 1002.7982633193435f, 1001.4507236660459f};
/* exp_lse_small: shape [2, 4] */
static const float exp_lse_small[8] = {
    0.06378086333725794f, 1.813780863337258f,  2.2605270342534887f, 2.5486789240491117f,
    2.5105270342534887f,  2.7986789240491117f, 1.5637808633372579f, 2.0105270342534887f};
/* exp_mean_i32: shape [2] */
static const int32_t exp_mean_i32[2] = {-1, 3};
/* exp_l2_i32: shape [3] */
static const int32_t exp_l2_i32[3] = {8, 4, 9};
/* exp_max_i32: shape [3] */
static const int32_t exp_max_i32[3] = {4, 2, 9};
/* exp_sum_i64: shape [2] */
static const int64_t exp_sum_i64[2] = {3999999997, 5000000007};
/* exp_prod_i64: shape [2] */
static const int64_t exp_prod_i64[2] = {1553255926290448384, -21};
/* exp_argmax_1: shape [3] */
static const int64_t exp_argmax_1[3] = {1, 0, 0};
/* exp_argmax_1_last: shape [3] */
static const int64_t exp_argmax_1_last[3] = {2, 3, 3};
/* exp_argmin_0: shape [4] */
static const int64_t exp_argmin_0[4] = {2, 2, 2, 2};
/* exp_argmin_0_last: shape [4] */
static const int64_t exp_argmin_0_last[4] = {2, 2, 2, 2};
/* exp_argmax_nan: shape [2] */
static const int64_t exp_argmax_nan[2] = {1, 0};
/* exp_max_nan: shape [2] */
static const float exp_max_nan[2] = {NAN, 2.0f};
/* exp_min_nan: shape [2] */
static const float exp_min_nan[2] = {NAN, -1.0f};
/* exp_sum_f16: shape [6] */
static const float exp_sum_f16[6] = {-0.75f, 2.25f, -0.5f, 2.5f, -0.25f, -3.0f};
/* exp_max_u8: shape [2] */
static const int64_t exp_max_u8[2] = {250, 255};

/* ---- helpers ------------------------------------------------------------ */

static gc_tensor tens(gc_dtype dt, int32_t rank, const int64_t *dims, const void *data)
{
	return harness_tensor(dt, rank, dims, data);
}

static gc_attr a_i(const char *name, int64_t v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INT};
	a.v.i = v;
	return a;
}

static gc_attr a_ints(const char *name, const int64_t *v, int64_t n)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INTS, .n = n};
	a.v.ints = v;
	return a;
}

static int shape_is(const gc_tensor *t, gc_dtype dt, int32_t rank, const int64_t *dims)
{
	int ok = t->dtype == dt && t->rank == rank;
	for (int i = 0; ok && i < rank; i++)
		ok = t->dims[i] == dims[i];
	if (!ok) {
		char a[128], b[128];
		fprintf(stderr, "  got %s %s, expected %s %s\n", gc_dtype_name(t->dtype),
			gc_shape_str(t->dims, t->rank, a, sizeof a), gc_dtype_name(dt),
			gc_shape_str(dims, rank, b, sizeof b));
	}
	return ok;
}

/* |got - want| <= rtol * max(1, |want|); NaN must match NaN. */
static int near_f64(const double *got, const float *want, int64_t n, double rtol)
{
	for (int64_t i = 0; i < n; i++) {
		double g = got[i], w = want[i];
		if (isnan(w) && isnan(g))
			continue;
		if (isinf(w) && g == w)
			continue;
		if (!(fabs(g - w) <= rtol * fmax(1.0, fabs(w)))) {
			fprintf(stderr, "  element %lld: got %.9g, expected %.9g (rtol %g)\n",
				(long long)i, g, w, rtol);
			return 0;
		}
	}
	return 1;
}

/* Output 0 of h converted to double, for any float type. */
static double *as_f64(const gc_tensor *t)
{
	int64_t n = gc_tensor_numel(t);
	double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
	for (int64_t i = 0; i < n; i++) {
		switch (t->dtype) {
		case GC_DTYPE_FLOAT:
			d[i] = ((const float *)t->data)[i];
			break;
		case GC_DTYPE_DOUBLE:
			d[i] = ((const double *)t->data)[i];
			break;
		case GC_DTYPE_FLOAT16:
			d[i] = gc_f16_to_f32(((const uint16_t *)t->data)[i]);
			break;
		case GC_DTYPE_BFLOAT16:
			d[i] = gc_bf16_to_f32(((const uint16_t *)t->data)[i]);
			break;
		default:
			d[i] = NAN;
		}
	}
	return d;
}

static int out_near(const gc_tensor *t, const float *want, int64_t n, double rtol)
{
	if (gc_tensor_numel(t) != n) {
		fprintf(stderr, "  %lld elements, expected %lld\n", (long long)gc_tensor_numel(t),
			(long long)n);
		return 0;
	}
	double *d = as_f64(t);
	int ok = near_f64(d, want, n, rtol);
	free(d);
	return ok;
}

static int same_i64(const void *got, const int64_t *want, int64_t n)
{
	const int64_t *g = got;
	for (int64_t i = 0; i < n; i++)
		if (g[i] != want[i]) {
			fprintf(stderr, "  element %lld: got %lld, expected %lld\n", (long long)i,
				(long long)g[i], (long long)want[i]);
			return 0;
		}
	return 1;
}

static int same_i32(const void *got, const int32_t *want, int64_t n)
{
	const int32_t *g = got;
	for (int64_t i = 0; i < n; i++)
		if (g[i] != want[i]) {
			fprintf(stderr, "  element %lld: got %d, expected %d\n", (long long)i, g[i],
				want[i]);
			return 0;
		}
	return 1;
}

/* x[i] = ((7 i) mod 23 - 11) / 4, as NumPy's ((np.arange(n) * 7) % 23 - 11) / 4. */
static float *pattern(int64_t n)
{
	float *x = malloc((size_t)n * sizeof *x);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)((i * 7) % 23 - 11) / 4.0f;
	return x;
}

#define RTOL 1e-5

/* ---- ReduceSum: opsets and axes forms ----------------------------------- */

static void test_sum_opset11_attr(void)
{
	float *x = pattern(60);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 3, D(3, 4, 5), x);
	gc_tensor *in[] = {&t};
	gc_attr at[] = {a_ints("axes", D(1), 1)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 11, 1, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(3, 1, 5)));
	CHECK(out_near(&h.out[0], exp_sum_ax1_keep, 15, RTOL));
	harness_free(&h);
	/* no axes: everything, keepdims default 1 */
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 11, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(1, 1, 1)));
	CHECK(out_near(&h.out[0], exp_sum_all, 1, RTOL));
	harness_free(&h);
	/* axes (0, 2), keepdims 0: reduced - kept - reduced */
	gc_attr at2[] = {a_ints("axes", D(0, -1), 2), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 11, 1, in, 1, 2, at2), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 1, D(4)));
	CHECK(out_near(&h.out[0], exp_sum_ax02, 4, RTOL));
	harness_free(&h);
	free(x);
}

static void test_sum_opset13_input(void)
{
	float *x = pattern(60);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 3, D(3, 4, 5), x);
	int64_t ax = -1;
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(1), &ax);
	gc_tensor *in[] = {&t, &ta};
	gc_attr kd[] = {a_i("keepdims", 0)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, in, 1, 1, kd), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 4)));
	CHECK(out_near(&h.out[0], exp_sum_axm1, 12, RTOL));
	harness_free(&h);
	/* empty axes input: reduce all, or nothing with noop_with_empty_axes */
	gc_tensor te = tens(GC_DTYPE_INT64, 1, D(0), &ax);
	gc_tensor *in2[] = {&t, &te};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(1, 1, 1)));
	harness_free(&h);
	gc_attr noop[] = {a_i("noop_with_empty_axes", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, in2, 1, 1, noop), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(3, 4, 5)));
	CHECK(!memcmp(h.out[0].data, x, 60 * sizeof(float)));
	harness_free(&h);
	/* the opset-11 attribute form is refused at 13 */
	gc_attr old[] = {a_ints("axes", D(1), 1)};
	gc_tensor *in3[] = {&t};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 1, in3, 1, 1, old),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "attribute 'axes' is not allowed at opset 13");
	harness_free(&h);
	/* axes computed at run time */
	gc_tensor dyn = tens(GC_DTYPE_INT64, 1, D(1), NULL);
	gc_tensor *in4[] = {&t, &dyn};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, in4, 1, 0, NULL),
		  GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "input 'axes' must be known when the model is compiled");
	harness_free(&h);
	free(x);
}

/* From opset 18 every reduction takes axes as input 1. */
static void test_opset18_axes_input(void)
{
	float *x = pattern(24);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 3, D(2, 3, 4), x);
	int64_t ax = 1;
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(1), &ax);
	gc_tensor *in[] = {&t, &ta};
	gc_attr kd0[] = {a_i("keepdims", 0)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 18, 2, in, 1, 1, kd0), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 4)));
	CHECK(out_near(&h.out[0], exp_max_ax1, 8, 0));
	harness_free(&h);
	gc_tensor *in1[] = {&t};
	gc_attr noop[] = {a_i("noop_with_empty_axes", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceL1, "ReduceL1", 18, 1, in1, 1, 1, noop), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(2, 3, 4)));
	/* reducing nothing still takes |x| (ONNX's reference, ONNX Runtime) */
	float absx[24];
	for (int i = 0; i < 24; i++)
		absx[i] = fabsf(x[i]);
	CHECK(out_near(&h.out[0], absx, 24, 0));
	harness_free(&h);
	free(x);
}

static void test_reduce_errors(void)
{
	float x[6] = {0};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(2, 3), x);
	gc_tensor *in[] = {&t};
	harness_run h;
	gc_attr dup[] = {a_ints("axes", D(1, -1), 2)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in, 1, 1, dup),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "more than once");
	harness_free(&h);
	gc_attr far[] = {a_ints("axes", D(2), 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, in, 1, 1, far),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "axis 2 is out of range for rank 2");
	harness_free(&h);
	uint8_t b[2] = {1, 0};
	gc_tensor tb = tens(GC_DTYPE_BOOL, 1, D(2), b);
	gc_tensor *inb[] = {&tb};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 11, 1, inb, 1, 0, NULL),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "type bool, which ReduceSum does not support");
	harness_free(&h);
	int64_t ax = 0;
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(1), &ax);
	gc_tensor *in2[] = {&t, &ta};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 2, in2, 1, 0, NULL),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "input 'axes' is not allowed at opset 13");
	harness_free(&h);
}

/* ---- Mean: the fast paths ----------------------------------------------- */

static void test_mean_paths(void)
{
	harness_run h;
	/* last axis, 37 long: 8-lane body plus a tail */
	float *x = pattern(3 * 37);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 37), x);
	gc_tensor *in[] = {&t};
	gc_attr last[] = {a_ints("axes", D(-1), 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in, 1, 1, last), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 1)));
	CHECK(out_near(&h.out[0], exp_mean_last, 3, RTOL));
	harness_free(&h);
	free(x);
	/* spatial mean of NCHW */
	x = pattern(120);
	gc_tensor t2 = tens(GC_DTYPE_FLOAT, 4, D(2, 3, 4, 5), x);
	gc_tensor *in2[] = {&t2};
	gc_attr hw[] = {a_ints("axes", D(2, 3), 2)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in2, 1, 1, hw), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 4, D(2, 3, 1, 1)));
	CHECK(out_near(&h.out[0], exp_mean_hw, 6, RTOL));
	harness_free(&h);
	free(x);
	/* a middle axis: rows fold element-wise */
	x = pattern(42);
	gc_tensor t3 = tens(GC_DTYPE_FLOAT, 3, D(2, 3, 7), x);
	gc_tensor *in3[] = {&t3};
	gc_attr mid[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in3, 1, 2, mid), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 7)));
	CHECK(out_near(&h.out[0], exp_mean_ax1, 14, RTOL));
	harness_free(&h);
	/* float64 */
	double xd[42];
	for (int i = 0; i < 42; i++)
		xd[i] = x[i];
	gc_tensor t4 = tens(GC_DTYPE_DOUBLE, 3, D(2, 3, 7), xd);
	gc_tensor *in4[] = {&t4};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in4, 1, 2, mid), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_DOUBLE, 2, D(2, 7)));
	CHECK(out_near(&h.out[0], exp_mean_ax1, 14, 1e-7));
	harness_free(&h);
	free(x);
}

/* A long float32 row: the mean of 0..n-1 shifted, against the closed form. */
static void test_mean_long_row(void)
{
	int64_t n = 1 << 20;
	float *x = malloc((size_t)n * sizeof *x);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(i % 1000) * 0.001f + 1.0f;
	double want = 0;
	for (int64_t i = 0; i < n; i++)
		want += x[i];
	want /= (double)n;
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(1, n), x);
	gc_tensor *in[] = {&t};
	gc_attr last[] = {a_ints("axes", D(1), 1)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in, 1, 1, last), 0);
	CHECK_NEAR(((float *)h.out[0].data)[0], want, 1e-5 * want);
	harness_free(&h);
	free(x);
}

/* ---- a reduction to one value, in chunks over the threads --------------- */

typedef int (*prep_fn)(gc_kctx *, gc_node *, gc_tensor *const *, gc_tensor *const *);

/* One value of op over x (all axes), at one and two threads: within rtol of
 * want, and the same bytes at both (reduce.c's chunks do not depend on the
 * thread count). */
static void one_value(prep_fn prep, const char *op, gc_dtype dt, const void *x, int64_t n,
		      double want, double rtol)
{
	gc_tensor t = tens(dt, 1, D(n), x);
	gc_tensor *in[] = {&t};
	gc_attr none[] = {a_i("keepdims", 0)};
	unsigned char got[2][8];
	for (int threads = 1; threads <= 2; threads++) {
		harness_threads = threads;
		harness_run h;
		CHECK_INT(harness_op(&h, prep, op, 13, 1, in, 1, 1, none), 0);
		double v = gc_kv_load(&h.out[0], 0);
		if (!(isnan(want) ? isnan(v) : fabs(v - want) <= rtol * fabs(want) + 1e-30))
			fprintf(stderr, "%s of %s: got %.9g, want %.9g\n", op, gc_dtype_name(dt), v,
				want);
		CHECK(isnan(want) ? isnan(v) : fabs(v - want) <= rtol * fabs(want) + 1e-30);
		memcpy(got[threads - 1], h.out[0].data, gc_dtype_size(dt));
		harness_free(&h);
	}
	harness_threads = 1;
	CHECK(!memcmp(got[0], got[1], gc_dtype_size(dt)));
}

static void test_one_value_chunks(void)
{
	enum { N = 300001 }; /* 4 chunks and a part */
	float *x = malloc(N * sizeof *x);
	double *xd = malloc(N * sizeof *xd);
	int32_t *xi = malloc(N * sizeof *xi);
	double sum = 0, sq = 0, l1 = 0, mx = -INFINITY, mn = INFINITY, lse = 0, prod = 1;
	for (int64_t i = 0; i < N; i++) {
		x[i] = (float)((i * 7919 % 2001) - 1000) / 250.0f;
		xd[i] = x[i];
		xi[i] = (int32_t)(i * 7919 % 200001) - 100000;
		sum += x[i];
		sq += (double)x[i] * x[i];
		l1 += fabs(x[i]);
		mx = fmax(mx, x[i]);
		mn = fmin(mn, x[i]);
	}
	for (int64_t i = 0; i < N; i++)
		lse += exp(x[i] - mx);
	lse = log(lse) + mx;
	one_value(gc_prepare_ReduceSum, "ReduceSum", GC_DTYPE_FLOAT, x, N, sum, 1e-4);
	one_value(gc_prepare_ReduceMean, "ReduceMean", GC_DTYPE_FLOAT, x, N, sum / N, 1e-4);
	one_value(gc_prepare_ReduceMax, "ReduceMax", GC_DTYPE_FLOAT, x, N, mx, 0);
	one_value(gc_prepare_ReduceMin, "ReduceMin", GC_DTYPE_FLOAT, x, N, mn, 0);
	one_value(gc_prepare_ReduceL1, "ReduceL1", GC_DTYPE_FLOAT, x, N, l1, 1e-5);
	one_value(gc_prepare_ReduceL2, "ReduceL2", GC_DTYPE_FLOAT, x, N, sqrt(sq), 1e-5);
	one_value(gc_prepare_ReduceSumSquare, "ReduceSumSquare", GC_DTYPE_FLOAT, x, N, sq, 1e-5);
	one_value(gc_prepare_ReduceLogSumExp, "ReduceLogSumExp", GC_DTYPE_FLOAT, x, N, lse, 1e-5);
	one_value(gc_prepare_ReduceSum, "ReduceSum", GC_DTYPE_DOUBLE, xd, N, sum, 1e-12);
	/* a product of powers of two (exact in float): 1s, a 2 every 1000, a
	 * 0.5 every 1500 */
	for (int64_t i = 0; i < N; i++) {
		x[i] = i % 1000 == 7 ? 2.0f : i % 1500 == 11 ? 0.5f : 1.0f;
		prod *= x[i];
	}
	one_value(gc_prepare_ReduceProd, "ReduceProd", GC_DTYPE_FLOAT, x, N, prod, 0);
	/* NaN in the last chunk's part, and int32 (exact) */
	x[N - 1] = NAN;
	one_value(gc_prepare_ReduceMax, "ReduceMax", GC_DTYPE_FLOAT, x, N, NAN, 0);
	int64_t isum = 0, imax = INT64_MIN;
	for (int64_t i = 0; i < N; i++) {
		isum += xi[i];
		imax = xi[i] > imax ? xi[i] : imax;
	}
	one_value(gc_prepare_ReduceSum, "ReduceSum", GC_DTYPE_INT32, xi, N, (double)(int32_t)isum,
		  0);
	one_value(gc_prepare_ReduceMax, "ReduceMax", GC_DTYPE_INT32, xi, N, (double)imax, 0);
	free(x);
	free(xd);
	free(xi);
}

/* ---- the other reductions ----------------------------------------------- */

static void test_max_min_prod(void)
{
	float *x = pattern(24);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 3, D(2, 3, 4), x);
	gc_tensor *in[] = {&t};
	harness_run h;
	gc_attr a1[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, in, 1, 2, a1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 4)));
	CHECK(out_near(&h.out[0], exp_max_ax1, 8, 0));
	harness_free(&h);
	gc_attr a02[] = {a_ints("axes", D(0, 2), 2)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMin, "ReduceMin", 13, 1, in, 1, 1, a02), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(1, 3, 1)));
	CHECK(out_near(&h.out[0], exp_min_ax02, 3, 0));
	harness_free(&h);
	gc_attr a2[] = {a_ints("axes", D(2), 1), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceProd, "ReduceProd", 13, 1, in, 1, 2, a2), 0);
	CHECK(out_near(&h.out[0], exp_prod_ax2, 6, RTOL));
	harness_free(&h);
	free(x);
}

static void test_max_min_nan(void)
{
	float x[8] = {1, NAN, 3, NAN, 2, 1, 0, -1};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(2, 4), x);
	gc_tensor *in[] = {&t};
	gc_attr at[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, in, 1, 2, at), 0);
	CHECK(out_near(&h.out[0], exp_max_nan, 2, 0));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMin, "ReduceMin", 13, 1, in, 1, 2, at), 0);
	CHECK(out_near(&h.out[0], exp_min_nan, 2, 0));
	harness_free(&h);
	/* NaN in the accumulated (vector) direction too */
	gc_attr a0[] = {a_ints("axes", D(0), 1), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, in, 1, 2, a0), 0);
	CHECK(out_near(&h.out[0], (const float[]){2, NAN, 3, NAN}, 4, 0));
	harness_free(&h);
}

/* NaN wherever it falls in long rows and columns: the folds run 8 lanes
 * at a time, in the vector clones of the machine (GC_NN_SIMD), and a NaN in
 * any lane, or in the tail after the last whole 8, must come out. */
static void test_max_min_nan_long(void)
{
	enum { R = 6, N = 203 };
	const int at[R] = {-1, 0, 7, 100, 200, 202}; /* row r's NaN (-1: none) */
	float *x = malloc(sizeof(float) * R * N);
	for (int r = 0; r < R; r++)
		for (int i = 0; i < N; i++)
			x[r * N + i] = i == at[r] ? NAN : (float)((i * 37 + r * 11) % 101) - 50.0f;
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(R, N), x);
	gc_tensor *in[] = {&t};
	for (int is_max = 0; is_max < 2; is_max++) {
		harness_run h;
		gc_attr a1[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
		CHECK_INT(harness_op(&h, is_max ? gc_prepare_ReduceMax : gc_prepare_ReduceMin,
				     is_max ? "ReduceMax" : "ReduceMin", 13, 1, in, 1, 2, a1), 0);
		for (int r = 0; r < R; r++) {
			float want = is_max ? -INFINITY : INFINITY;
			for (int i = 0; i < N && at[r] < 0; i++)
				want = is_max ? fmaxf(want, x[r * N + i]) : fminf(want, x[r * N + i]);
			float got = ((float *)h.out[0].data)[r];
			CHECK(at[r] < 0 ? got == want : isnan(got));
		}
		harness_free(&h);
		/* down the columns: NaN in column at[r] for r >= 1 */
		gc_attr a0[] = {a_ints("axes", D(0), 1), a_i("keepdims", 0)};
		CHECK_INT(harness_op(&h, is_max ? gc_prepare_ReduceMax : gc_prepare_ReduceMin,
				     is_max ? "ReduceMax" : "ReduceMin", 13, 1, in, 1, 2, a0), 0);
		int ok = 1;
		for (int i = 0; i < N; i++) {
			int has_nan = 0;
			for (int r = 0; r < R; r++)
				has_nan |= at[r] == i;
			ok &= !has_nan == !isnan(((float *)h.out[0].data)[i]);
		}
		CHECK(ok);
		harness_free(&h);
	}
	free(x);
}

static void test_norms_and_logs(void)
{
	float *x = pattern(24);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 3, D(2, 3, 4), x);
	gc_tensor *in[] = {&t};
	harness_run h;
	gc_attr a1[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
	gc_attr a2[] = {a_ints("axes", D(2), 1), a_i("keepdims", 0)};
	gc_attr a0[] = {a_ints("axes", D(0), 1), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceL1, "ReduceL1", 13, 1, in, 1, 2, a1), 0);
	CHECK(out_near(&h.out[0], exp_l1_ax1, 8, RTOL));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ReduceL2, "ReduceL2", 13, 1, in, 1, 2, a2), 0);
	CHECK(out_near(&h.out[0], exp_l2_ax2, 6, RTOL));
	harness_free(&h);
	CHECK_INT(
	    harness_op(&h, gc_prepare_ReduceSumSquare, "ReduceSumSquare", 13, 1, in, 1, 2, a0), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 4)));
	CHECK(out_near(&h.out[0], exp_sumsq_ax0, 12, RTOL));
	harness_free(&h);
	CHECK_INT(
	    harness_op(&h, gc_prepare_ReduceLogSumExp, "ReduceLogSumExp", 13, 1, in, 1, 2, a1), 0);
	CHECK(out_near(&h.out[0], exp_lse_small, 8, RTOL));
	harness_free(&h);
	/* log-sum-exp of values near 1000: exp alone would overflow */
	for (int i = 0; i < 24; i++)
		x[i] += 1000.0f;
	gc_attr am1[] = {a_ints("axes", D(-1), 1)};
	CHECK_INT(
	    harness_op(&h, gc_prepare_ReduceLogSumExp, "ReduceLogSumExp", 13, 1, in, 1, 1, am1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(2, 3, 1)));
	CHECK(out_near(&h.out[0], exp_lse_big, 6, RTOL));
	harness_free(&h);
	/* log-sum of |pattern| over everything, keepdims 0: a scalar */
	for (int i = 0; i < 24; i++)
		x[i] = fabsf(x[i] - 1000.0f);
	gc_attr kd0[] = {a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceLogSum, "ReduceLogSum", 13, 1, in, 1, 1, kd0), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 0, NULL));
	CHECK(out_near(&h.out[0], exp_logsum_all, 1, RTOL));
	harness_free(&h);
	free(x);
}

/* ---- integer and half types --------------------------------------------- */

static void test_int_types(void)
{
	int32_t xi[6] = {-7, 2, 0, 4, -4, 9};
	gc_tensor t = tens(GC_DTYPE_INT32, 2, D(2, 3), xi);
	gc_tensor *in[] = {&t};
	harness_run h;
	gc_attr a1[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
	gc_attr a0[] = {a_ints("axes", D(0), 1), a_i("keepdims", 0)};
	/* mean truncates toward zero, like NumPy's float mean cast to int32 */
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1, in, 1, 2, a1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT32, 1, D(2)));
	CHECK(same_i32(h.out[0].data, exp_mean_i32, 2));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ReduceL2, "ReduceL2", 13, 1, in, 1, 2, a0), 0);
	CHECK(same_i32(h.out[0].data, exp_l2_i32, 3));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, in, 1, 2, a0), 0);
	CHECK(same_i32(h.out[0].data, exp_max_i32, 3));
	harness_free(&h);

	int64_t xl[4] = {4000000000, 5000000000, -3, 7};
	gc_tensor tl = tens(GC_DTYPE_INT64, 2, D(2, 2), xl);
	gc_tensor *inl[] = {&tl};
	int64_t ax0 = 0;
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(1), &ax0);
	gc_tensor *inl2[] = {&tl, &ta};
	gc_attr kd0[] = {a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, inl2, 1, 1, kd0), 0);
	CHECK(same_i64(h.out[0].data, exp_sum_i64, 2));
	harness_free(&h);
	/* product wraps like NumPy's int64 */
	CHECK_INT(harness_op(&h, gc_prepare_ReduceProd, "ReduceProd", 13, 1, inl, 1, 2, a1), 0);
	CHECK(same_i64(h.out[0].data, exp_prod_i64, 2));
	harness_free(&h);

	uint8_t xu[6] = {3, 250, 7, 255, 0, 9};
	gc_tensor tu = tens(GC_DTYPE_UINT8, 2, D(2, 3), xu);
	gc_tensor *inu[] = {&tu};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, inu, 1, 2, a1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_UINT8, 1, D(2)));
	CHECK_INT(((uint8_t *)h.out[0].data)[0], exp_max_u8[0]);
	CHECK_INT(((uint8_t *)h.out[0].data)[1], exp_max_u8[1]);
	harness_free(&h);
}

static void test_half_types(void)
{
	float *x = pattern(30);
	uint16_t xh[30], xb[30];
	for (int i = 0; i < 30; i++) {
		xh[i] = gc_f32_to_f16(x[i]);
		xb[i] = gc_f32_to_bf16(x[i]);
	}
	gc_tensor th = tens(GC_DTYPE_FLOAT16, 2, D(5, 6), xh);
	gc_tensor tb = tens(GC_DTYPE_BFLOAT16, 2, D(5, 6), xb);
	int64_t ax0 = 0;
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(1), &ax0);
	gc_attr kd0[] = {a_i("keepdims", 0)};
	harness_run h;
	gc_tensor *in1[] = {&th, &ta};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, in1, 1, 1, kd0), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT16, 1, D(6)));
	CHECK(out_near(&h.out[0], exp_sum_f16, 6, 1e-3));
	harness_free(&h);
	gc_tensor *in2[] = {&tb, &ta};
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 13, 2, in2, 1, 1, kd0), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_BFLOAT16, 1, D(6)));
	CHECK(out_near(&h.out[0], exp_sum_f16, 6, 1e-2));
	harness_free(&h);
	free(x);
}

static void test_empty_reduction(void)
{
	float x[1] = {0};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(2, 0), x);
	gc_tensor *in[] = {&t};
	gc_attr a1[] = {a_ints("axes", D(1), 1), a_i("keepdims", 0)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 11, 1, in, 1, 2, a1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 1, D(2)));
	CHECK(out_near(&h.out[0], (const float[]){0, 0}, 2, 0));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ReduceMax, "ReduceMax", 13, 1, in, 1, 2, a1), 0);
	CHECK(out_near(&h.out[0], (const float[]){-INFINITY, -INFINITY}, 2, 0));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ReduceProd, "ReduceProd", 13, 1, in, 1, 2, a1), 0);
	CHECK(out_near(&h.out[0], (const float[]){1, 1}, 2, 0));
	harness_free(&h);
	CHECK_INT(
	    harness_op(&h, gc_prepare_ReduceLogSumExp, "ReduceLogSumExp", 13, 1, in, 1, 2, a1), 0);
	CHECK(out_near(&h.out[0], (const float[]){-INFINITY, -INFINITY}, 2, 0));
	harness_free(&h);
	/* a scalar input reduces to itself */
	float s = 2.5f;
	gc_tensor ts = tens(GC_DTYPE_FLOAT, 0, NULL, &s);
	gc_tensor *ins[] = {&ts};
	CHECK_INT(
	    harness_op(&h, gc_prepare_ReduceSumSquare, "ReduceSumSquare", 13, 1, ins, 1, 0, NULL),
	    0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 0, NULL));
	CHECK(out_near(&h.out[0], (const float[]){6.25f}, 1, 0));
	harness_free(&h);
}

/* ---- ArgMax, ArgMin ----------------------------------------------------- */

static void test_argmax_argmin(void)
{
	float xa[12] = {1, 5, 5, 2, 7, 7, 0, 7, -1, -2, -3, -1};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 4), xa);
	gc_tensor *in[] = {&t};
	harness_run h;
	gc_attr a1[] = {a_i("axis", -1), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ArgMax, "ArgMax", 13, 1, in, 1, 2, a1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 1, D(3)));
	CHECK(same_i64(h.out[0].data, exp_argmax_1, 3));
	harness_free(&h);
	gc_attr a1l[] = {a_i("axis", 1), a_i("keepdims", 0), a_i("select_last_index", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ArgMax, "ArgMax", 13, 1, in, 1, 3, a1l), 0);
	CHECK(same_i64(h.out[0].data, exp_argmax_1_last, 3));
	harness_free(&h);
	/* select_last_index does not exist before opset 12 */
	CHECK_INT(harness_op(&h, gc_prepare_ArgMax, "ArgMax", 11, 1, in, 1, 3, a1l), 0);
	CHECK(same_i64(h.out[0].data, exp_argmax_1, 3));
	harness_free(&h);
	/* axis 0 (strided: 4 columns scanned together), keepdims default */
	CHECK_INT(harness_op(&h, gc_prepare_ArgMin, "ArgMin", 13, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(1, 4)));
	CHECK(same_i64(h.out[0].data, exp_argmin_0, 4));
	harness_free(&h);
	gc_attr a0l[] = {a_i("select_last_index", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ArgMin, "ArgMin", 13, 1, in, 1, 1, a0l), 0);
	CHECK(same_i64(h.out[0].data, exp_argmin_0_last, 4));
	harness_free(&h);
	gc_attr bad[] = {a_i("axis", 2)};
	CHECK_INT(harness_op(&h, gc_prepare_ArgMin, "ArgMin", 13, 1, in, 1, 1, bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "axis 2 is out of range for rank 2");
	harness_free(&h);
}

static void test_argmax_nan_f16_int(void)
{
	float xn[8] = {1, NAN, 3, NAN, 2, 1, 0, -1};
	uint16_t xh[8];
	for (int i = 0; i < 8; i++)
		xh[i] = gc_f32_to_f16(xn[i]);
	gc_tensor t = tens(GC_DTYPE_FLOAT16, 2, D(2, 4), xh);
	gc_tensor *in[] = {&t};
	gc_attr a1[] = {a_i("axis", 1), a_i("keepdims", 0)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ArgMax, "ArgMax", 13, 1, in, 1, 2, a1), 0);
	CHECK(same_i64(h.out[0].data, exp_argmax_nan, 2));
	harness_free(&h);
	int64_t xl[6] = {5, -9, 5, 2, 8, 8};
	gc_tensor tl = tens(GC_DTYPE_INT64, 2, D(2, 3), xl);
	gc_tensor *inl[] = {&tl};
	/* NumPy: np.argmax(x, axis=0) = [0, 1, 1]; with ties going last: [0, 1, 1] */
	gc_attr a0[] = {a_i("axis", 0), a_i("keepdims", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_ArgMax, "ArgMax", 13, 1, inl, 1, 2, a0), 0);
	CHECK(same_i64(h.out[0].data, D(0, 1, 1), 3));
	harness_free(&h);
	/* np.argmin(x, axis=1) = [1, 0]; last ties: [1, 0] */
	CHECK_INT(harness_op(&h, gc_prepare_ArgMin, "ArgMin", 13, 1, inl, 1, 2, a1), 0);
	CHECK(same_i64(h.out[0].data, D(1, 0), 2));
	harness_free(&h);
	int64_t xt[3] = {8, 3, 8};
	gc_tensor tt = tens(GC_DTYPE_INT64, 1, D(3), xt);
	gc_tensor *int_[] = {&tt};
	gc_attr last[] = {a_i("select_last_index", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_ArgMax, "ArgMax", 13, 1, int_, 1, 1, last), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 1, D(1)));
	CHECK_INT(((int64_t *)h.out[0].data)[0], 2);
	harness_free(&h);
}

TEST_MAIN(TEST(test_sum_opset11_attr), TEST(test_sum_opset13_input), TEST(test_opset18_axes_input),
	  TEST(test_reduce_errors), TEST(test_mean_paths), TEST(test_mean_long_row),
	  TEST(test_max_min_prod), TEST(test_max_min_nan), TEST(test_max_min_nan_long),
	  TEST(test_one_value_chunks), TEST(test_norms_and_logs),
	  TEST(test_int_types), TEST(test_half_types), TEST(test_empty_reduction),
	  TEST(test_argmax_argmin), TEST(test_argmax_nan_f16_int))
