/*
 * Softmax and LogSoftmax beyond test-nn.c's small NumPy cases: long rows
 * and strided layouts, masked attention rows, and bad input, against libm's
 * exp in double (tolerances at each case).
 */
#include "test-nn.h"

/* Softmax and LogSoftmax of x [outer, len, inner] over len, in double. */
static void softmax_ref(const float *x, int outer, int len, int inner, double *want,
			double *wantlog)
{
	for (int o = 0; o < outer; o++)
		for (int in = 0; in < inner; in++) {
			double mx = -INFINITY, sum = 0;
			for (int j = 0; j < len; j++)
				mx = fmax(mx, x[(o * len + j) * inner + in]);
			for (int j = 0; j < len; j++)
				sum += exp(x[(o * len + j) * inner + in] - mx);
			for (int j = 0; j < len; j++) {
				int idx = (o * len + j) * inner + in;
				want[idx] = exp(x[idx] - mx) / sum;
				wantlog[idx] = x[idx] - mx - log(sum);
			}
		}
}

/* Long rows and strided layouts against libm's exp in double. */
static void test_softmax_long(void)
{
	enum { OUTER = 3, LEN_ = 1000, INNER = 5 };
	static float x[OUTER * LEN_ * INNER];
	static double want[OUTER * LEN_ * INNER], wantlog[OUTER * LEN_ * INNER];
	for (int i = 0; i < LEN(x); i++)
		x[i] = (float)(fillv(i, 81) * 9.0 + fillv(i, 82) / 3.0); /* about [-13, 13] */
	softmax_ref(x, OUTER, LEN_, INNER, want, wantlog);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 3, DIMS(OUTER, LEN_, INNER), x);
	gc_tensor *in[] = {&tx};
	gc_attr ax1[] = ATTRS(A_INT("axis", 1));
	harness_run h;
	RUN(h, Softmax, 13, 1, in, 1, ax1);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, DIMS(OUTER, LEN_, INNER), want, 1e-5, 1e-9);
	harness_free(&h);
	CHECK(ok);
	RUN(h, LogSoftmax, 13, 1, in, 1, ax1);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, DIMS(OUTER, LEN_, INNER), wantlog, 1e-5, 1e-5);
	harness_free(&h);
	CHECK(ok);

	/* the same data as contiguous rows of 5000 (opset 11 coerces at axis 1) */
	static double want2[OUTER * LEN_ * INNER];
	for (int o = 0; o < OUTER; o++) {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < LEN_ * INNER; j++)
			mx = fmax(mx, x[o * LEN_ * INNER + j]);
		for (int j = 0; j < LEN_ * INNER; j++)
			sum += exp(x[o * LEN_ * INNER + j] - mx);
		for (int j = 0; j < LEN_ * INNER; j++)
			want2[o * LEN_ * INNER + j] = exp(x[o * LEN_ * INNER + j] - mx) / sum;
	}
	RUN(h, Softmax, 11, 1, in, 1, ax1);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, DIMS(OUTER, LEN_, INNER), want2, 1e-5, 1e-9);
	harness_free(&h);
	CHECK(ok);
}

/* A softmax over a middle axis whose inner positions span several of the
 * kernel's chunks (norm.c's SOFTMAX_IC, 256) and a partial one, at one and
 * two threads: each against libm in double, and the two the same bytes
 * (every position's result whatever the split). */
static void test_softmax_strided_chunks(void)
{
	enum { OUTER = 3, LEN_ = 40, INNER = 300, NX = OUTER * LEN_ * INNER };
	static float x[NX], got[2][2][NX];
	static double want[2][NX];
	for (int i = 0; i < NX; i++)
		x[i] = (float)(fillv(i, 83) * 9.0 + fillv(i, 84) / 3.0);
	softmax_ref(x, OUTER, LEN_, INNER, want[0], want[1]);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 3, DIMS(OUTER, LEN_, INNER), x);
	gc_tensor *in[] = {&tx};
	gc_attr ax1[] = ATTRS(A_INT("axis", 1));
	for (int threads = 1; threads <= 2; threads++) {
		harness_threads = threads;
		for (int is_log = 0; is_log < 2; is_log++) {
			harness_run h;
			if (is_log)
				RUN(h, LogSoftmax, 13, 1, in, 1, ax1);
			else
				RUN(h, Softmax, 13, 1, in, 1, ax1);
			CHECK(same(&h.out[0], GC_DTYPE_FLOAT, 3, DIMS(OUTER, LEN_, INNER),
				   want[is_log], 1e-5, is_log ? 1e-5 : 1e-9));
			memcpy(got[threads - 1][is_log], h.out[0].data, sizeof x);
			harness_free(&h);
		}
	}
	harness_threads = 1;
	CHECK(!memcmp(got[0], got[1], sizeof got[0]));
}

/* Rows of attention scores as a causal or padding mask leaves them (-inf)
 * and spread far apart (x - max down to -300: e^x from 1 to below the
 * denormals): masked and underflowing entries exactly 0, the rest within
 * 1e-5 relative of libm's exp in double (the exp Softmax uses makes no
 * denormal: vmath.h's gc_vm_expf_neg). */
static void test_softmax_masked(void)
{
	enum { ROWS = 4, LEN_ = 333 };
	static float x[ROWS * LEN_];
	static double want[ROWS * LEN_];
	for (int r = 0; r < ROWS; r++) {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < LEN_; j++) {
			float v =
			    (float)(fillv(r * LEN_ + j, 91) * 150.0 - 150.0); /* about [-300, 0] */
			if (r == 0) /* one score, the rest e^-90 of it and below: a sum of 1 */
				v = j ? -90.0f - (float)(j % 50) : 0.0f;
			x[r * LEN_ + j] = j > 100 + 60 * r ? -INFINITY : v;
			mx = fmax(mx, x[r * LEN_ + j]);
		}
		for (int j = 0; j < LEN_; j++)
			sum += exp(x[r * LEN_ + j] - mx);
		for (int j = 0; j < LEN_; j++) {
			double e = exp(x[r * LEN_ + j] - mx) / sum;
			want[r * LEN_ + j] = e < 2e-38 ? 0 : e; /* at most FLT_MIN apart */
		}
	}
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 2, DIMS(ROWS, LEN_), x);
	gc_tensor *in[] = {&tx};
	gc_attr ax1[] = ATTRS(A_INT("axis", 1));
	harness_run h;
	RUN(h, Softmax, 13, 1, in, 1, ax1);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 2, DIMS(ROWS, LEN_), want, 1e-5, 2e-38);
	for (int i = 0; i < ROWS * LEN_ && ok; i++) {
		float y = ((const float *)h.out[0].data)[i];
		ok = want[i] ? y > 0 : y == 0;
		if (!ok)
			fprintf(stderr, "  element %d: %g, want %g\n", i, (double)y, want[i]);
	}
	harness_free(&h);
	CHECK(ok);
}

static void test_softmax_errors(void)
{
	float x[24];
	gc_tensor tx = tf32(x, 3, DIMS(2, 3, 4), 1);
	gc_tensor *in[] = {&tx};
	gc_attr ax[] = ATTRS(A_INT("axis", 3));
	RUN_FAILS(Softmax, 13, 1, in, 1, ax, "axis 3 is out of range for rank 3");
	int32_t xi[4] = {0};
	gc_tensor ti = harness_tensor(GC_DTYPE_INT32, 1, DIMS(4), xi);
	gc_tensor *ini[] = {&ti};
	gc_attr none[] = ATTRS();
	RUN_FAILS(LogSoftmax, 13, 1, ini, 1, none, "int32");
}

TEST_MAIN(TEST(test_softmax_long), TEST(test_softmax_strided_chunks), TEST(test_softmax_masked), TEST(test_softmax_errors))
