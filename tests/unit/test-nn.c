/*
 * Unit tests for the nn kernels (conv.c, gemm.c, pool.c, norm.c) and the
 * OpenBLAS loader.
 *
 * Inputs come from fill() below: ((i * 7 + seed * 13) % 23 - 11) / 8, exact in
 * float16/32/64. The expected values were computed independently with NumPy
 * in float64 (direct loop convolutions and pools, numpy matmul, softmax, layer
 * and batch norm formulas; pools follow ONNX Runtime's ceil_mode and
 * count_include_pad rules) and pasted here. Tolerance for float32: 1e-5
 * relative (plus 1e-6 absolute); float64: 1e-8 (the literals have 9
 * digits); float16: 2e-3. Larger cases (im2col tiling,
 * long softmax rows: test-softmax.c) are compared with plain loops.
 */
#include "blas.h"
#include "test-nn.h"

#include "test-nn-data.h"

static void test_conv_basic(void)
{
	float x[50], w[54], b[3];
	gc_tensor tx = tf32(x, 4, DIMS(1, 2, 5, 5), 1), tw = tf32(w, 4, DIMS(3, 2, 3, 3), 2),
		  tb = tf32(b, 1, DIMS(3), 3);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS(A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", 2, 2),
				A_INTS("kernel_shape", 3, 3));
	harness_run h;
	RUN(h, Conv, 11, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_basic_dims, conv_basic, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_conv_groups_dilations(void)
{
	float x[144], w[32];
	gc_tensor tx = tf32(x, 4, DIMS(1, 4, 6, 6), 4), tw = tf32(w, 4, DIMS(4, 2, 2, 2), 5);
	gc_tensor *in[] = {&tx, &tw};
	gc_attr attrs[] = ATTRS(A_INTS("pads", 0, 1, 1, 0), A_INTS("strides", 1, 2),
				A_INTS("dilations", 2, 2), A_INT("group", 2));
	harness_run h;
	RUN(h, Conv, 11, 2, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_groups_dims, conv_groups, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_conv_depthwise(void)
{
	float x[150], w[27], b[3], w2[54];
	gc_tensor tx = tf32(x, 4, DIMS(2, 3, 5, 5), 6), tw = tf32(w, 4, DIMS(3, 1, 3, 3), 7),
		  tb = tf32(b, 1, DIMS(3), 8);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS(A_INTS("pads", 1, 1, 1, 1), A_INT("group", 3));
	harness_run h;
	RUN(h, Conv, 11, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_dw_dims, conv_dw, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	/* channel multiplier 2, stride 2, dilation 2, uneven pads */
	gc_tensor tw2 = tf32(w2, 4, DIMS(6, 1, 3, 3), 9);
	gc_tensor *in2[] = {&tx, &tw2};
	gc_attr attrs2[] = ATTRS(A_INTS("pads", 2, 1, 0, 2), A_INTS("strides", 2, 2),
				 A_INTS("dilations", 2, 2), A_INT("group", 3));
	RUN(h, Conv, 11, 2, in2, 1, attrs2);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_dw2_dims, conv_dw2, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_conv_pointwise(void)
{
	float x[72], w[20], b[5];
	gc_tensor tx = tf32(x, 4, DIMS(2, 4, 3, 3), 10), tw = tf32(w, 4, DIMS(5, 4, 1, 1), 11),
		  tb = tf32(b, 1, DIMS(5), 12);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS();
	harness_run h;
	RUN(h, Conv, 1, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_1x1_dims, conv_1x1, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_conv_auto_pad(void)
{
	float x[25], w[9], x2[16], w2[4];
	gc_tensor tx = tf32(x, 4, DIMS(1, 1, 5, 5), 13), tw = tf32(w, 4, DIMS(1, 1, 3, 3), 14);
	gc_tensor *in[] = {&tx, &tw};
	gc_attr attrs[] = ATTRS(A_STR("auto_pad", "SAME_UPPER"), A_INTS("strides", 2, 2));
	harness_run h;
	RUN(h, Conv, 11, 2, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_same_upper_dims, conv_same_upper, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	gc_tensor tx2 = tf32(x2, 4, DIMS(1, 1, 4, 4), 15), tw2 = tf32(w2, 4, DIMS(1, 1, 2, 2), 16);
	gc_tensor *in2[] = {&tx2, &tw2};
	gc_attr attrs2[] = ATTRS(A_STR("auto_pad", "SAME_LOWER"));
	RUN(h, Conv, 11, 2, in2, 1, attrs2);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, conv_same_lower_dims, conv_same_lower, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	/* VALID ignores pads: 4x4 with a 2x2 kernel gives 3x3 */
	gc_attr attrs3[] = ATTRS(A_STR("auto_pad", "VALID"));
	RUN(h, Conv, 11, 2, in2, 1, attrs3);
	CHECK_INT(h.out[0].dims[2], 3);
	CHECK_INT(h.out[0].dims[3], 3);
	harness_free(&h);
}

static void test_conv_1d_3d(void)
{
	float x[14], w[12], b[2], x3[48], w3[36];
	gc_tensor tx = tf32(x, 3, DIMS(1, 2, 7), 17), tw = tf32(w, 3, DIMS(2, 2, 3), 18),
		  tb = tf32(b, 1, DIMS(2), 19);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS(A_INTS("pads", 1, 1), A_INTS("strides", 2));
	harness_run h;
	RUN(h, Conv, 11, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, conv_1d_dims, conv_1d, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	gc_tensor tx3 = tf32(x3, 5, DIMS(1, 1, 3, 4, 4), 20),
		  tw3 = tf32(w3, 5, DIMS(2, 1, 2, 3, 3), 21);
	gc_tensor *in3[] = {&tx3, &tw3};
	gc_attr attrs3[] = ATTRS(A_INTS("pads", 1, 1, 1, 1, 1, 1));
	RUN(h, Conv, 11, 2, in3, 1, attrs3);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 5, conv_3d_dims, conv_3d, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_conv_f64_f16(void)
{
	double x[50], w[54], b[3];
	gc_tensor tx = tf64(x, 4, DIMS(1, 2, 5, 5), 1), tw = tf64(w, 4, DIMS(3, 2, 3, 3), 2),
		  tb = tf64(b, 1, DIMS(3), 3);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS(A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", 2, 2));
	harness_run h;
	RUN(h, Conv, 11, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_DOUBLE, 4, conv_basic_dims, conv_basic, F64_TOL);
	harness_free(&h);
	CHECK(ok);

	uint16_t hx[50], hw[54], hb[3];
	gc_tensor ux = tf16(hx, 4, DIMS(1, 2, 5, 5), 1), uw = tf16(hw, 4, DIMS(3, 2, 3, 3), 2),
		  ub = tf16(hb, 1, DIMS(3), 3);
	gc_tensor *in16[] = {&ux, &uw, &ub};
	RUN(h, Conv, 11, 3, in16, 1, attrs);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 4, conv_basic_dims, conv_basic, F16_TOL);
	harness_free(&h);
	CHECK(ok);

	/* depthwise in float16 goes through the same conversion */
	uint16_t dx[150], dw[27];
	gc_tensor vx = tf16(dx, 4, DIMS(2, 3, 5, 5), 6), vw = tf16(dw, 4, DIMS(3, 1, 3, 3), 7);
	uint16_t db[3];
	gc_tensor vb = tf16(db, 1, DIMS(3), 8);
	gc_tensor *in16b[] = {&vx, &vw, &vb};
	gc_attr attrs2[] = ATTRS(A_INTS("pads", 1, 1, 1, 1), A_INT("group", 3));
	RUN(h, Conv, 11, 3, in16b, 1, attrs2);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 4, conv_dw_dims, conv_dw, F16_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* Plain-loop 2-D convolution, for cases too big to paste. */
static void naive_conv2d(const float *x, const float *w, const float *b, float *y, int64_t n,
			 int64_t c, int64_t h, int64_t wd, int64_t m, int64_t kh, int64_t kw,
			 int64_t group, int64_t s, int64_t p, int64_t oh, int64_t ow)
{
	int64_t cg = c / group, mg = m / group;
	for (int64_t bi = 0; bi < n; bi++)
		for (int64_t mi = 0; mi < m; mi++)
			for (int64_t yi = 0; yi < oh; yi++)
				for (int64_t xi = 0; xi < ow; xi++) {
					double acc = b ? b[mi] : 0;
					int64_t g = mi / mg;
					for (int64_t ci = 0; ci < cg; ci++)
						for (int64_t i = 0; i < kh; i++)
							for (int64_t j = 0; j < kw; j++) {
								int64_t iy = yi * s - p + i,
									ix = xi * s - p + j;
								if (iy < 0 || iy >= h || ix < 0 ||
								    ix >= wd)
									continue;
								acc +=
								    (double)
									x[((bi * c + g * cg + ci) *
									       h +
									   iy) *
									      wd +
									  ix] *
								    w[((mi * cg + ci) * kh + i) *
									  kw +
								      j];
							}
					y[((bi * m + mi) * oh + yi) * ow + xi] = (float)acc;
				}
}

static int close_arrays(const float *got, const float *want, int64_t n, double rtol, double atol)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabs((double)got[i] - want[i]) <= rtol * fabs((double)want[i]) + atol)) {
			fprintf(stderr, "  element %lld: got %.9g, expected %.9g\n", (long long)i,
				got[i], want[i]);
			return 0;
		}
	return 1;
}

/* im2col buffer above 8 MB: the output is computed in row tiles. */
static void test_conv_tiled(void)
{
	int64_t n = 1, c = 128, h = 48, wd = 48, m = 8;
	float *x = malloc(sizeof(float) * (size_t)(n * c * h * wd));
	float *w = malloc(sizeof(float) * (size_t)(m * c * 9));
	float *b = malloc(sizeof(float) * (size_t)m);
	float *want = malloc(sizeof(float) * (size_t)(n * m * h * wd));
	fill_f32(x, n * c * h * wd, 40);
	fill_f32(w, m * c * 9, 41);
	fill_f32(b, m, 42);
	naive_conv2d(x, w, b, want, n, c, h, wd, m, 3, 3, 1, 1, 1, h, wd);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 128, 48, 48), x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(8, 128, 3, 3), w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, DIMS(8), b);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS(A_INTS("pads", 1, 1, 1, 1));
	harness_run h1;
	int rc = harness_op(&h1, gc_prepare_Conv, "Conv", 11, 3, in, 1, LEN(attrs) - 1, attrs + 1);
	int ok = rc == 0 && close_arrays(h1.out[0].data, want, n * m * h * wd, 1e-4, 1e-4);
	/* the scratch is a tile, smaller than the full 128*9 x 48*48 im2col matrix */
	int tiled = h1.node.scratch_bytes < (uint64_t)128 * 9 * 48 * 48 * 4;
	harness_free(&h1);
	free(x);
	free(w);
	free(b);
	free(want);
	CHECK_INT(rc, 0);
	CHECK(ok);
	CHECK(tiled);
}

/* Depthwise and grouped convolutions on odd sizes against plain loops. */
static void test_conv_odd_sizes(void)
{
	static float x[2 * 8 * 17 * 19], w[16 * 4 * 9], b[16], y[2 * 16 * 17 * 19];
	fill_f32(x, LEN(x), 50);
	fill_f32(w, LEN(w), 51);
	fill_f32(b, LEN(b), 52);
	struct {
		int64_t m, group, s;
	} cases[] = {{8, 8, 2}, {8, 8, 1}, {16, 8, 1}, {16, 2, 2}};
	for (int ci = 0; ci < LEN(cases); ci++) {
		int64_t m = cases[ci].m, g = cases[ci].group, s = cases[ci].s;
		int64_t oh = (17 + 2 - 3) / s + 1, ow = (19 + 2 - 3) / s + 1;
		naive_conv2d(x, w, b, y, 2, 8, 17, 19, m, 3, 3, g, s, 1, oh, ow);
		gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(2, 8, 17, 19), x);
		gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(m, 8 / g, 3, 3), w);
		gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, DIMS(m), b);
		gc_tensor *in[] = {&tx, &tw, &tb};
		gc_attr attrs[] =
		    ATTRS(A_INTS("pads", 1, 1, 1, 1), A_INTS("strides", s, s), A_INT("group", g));
		harness_run h;
		RUN(h, Conv, 11, 3, in, 1, attrs);
		int ok = close_arrays(h.out[0].data, y, 2 * m * oh * ow, 1e-5, 1e-5);
		harness_free(&h);
		if (!ok)
			fprintf(stderr, "  case m=%lld group=%lld stride=%lld\n", (long long)m,
				(long long)g, (long long)s);
		CHECK(ok);
	}
}

static void test_conv_errors(void)
{
	float x[75], w[54];
	gc_tensor tx = tf32(x, 4, DIMS(1, 3, 5, 5), 1), tw = tf32(w, 4, DIMS(2, 2, 3, 3), 2);
	gc_tensor *in[] = {&tx, &tw};
	gc_attr none[] = ATTRS();
	RUN_FAILS(Conv, 11, 2, in, 1, none, "X 1x3x5x5 has 3 channels but W 2x2x3x3 expects 2");

	gc_tensor tw1 = tf32(w, 4, DIMS(2, 3, 3, 3), 2);
	gc_tensor *in1[] = {&tx, &tw1};
	gc_attr bad_pad[] = ATTRS(A_STR("auto_pad", "SAME"));
	RUN_FAILS(Conv, 11, 2, in1, 1, bad_pad, "auto_pad");
	gc_attr bad_ks[] = ATTRS(A_INTS("kernel_shape", 2, 2));
	RUN_FAILS(Conv, 11, 2, in1, 1, bad_ks, "kernel_shape");
	gc_attr bad_group[] = ATTRS(A_INT("group", 2));
	RUN_FAILS(Conv, 11, 2, in1, 1, bad_group, "group");
	gc_attr bad_strides[] = ATTRS(A_INTS("strides", 0, 1));
	RUN_FAILS(Conv, 11, 2, in1, 1, bad_strides, "strides");
	gc_attr bad_pads[] = ATTRS(A_INTS("pads", 1, 1));
	RUN_FAILS(Conv, 11, 2, in1, 1, bad_pads, "'pads' [1, 1] needs 4 values");
	gc_attr big_dil[] = ATTRS(A_INTS("dilations", 3, 3));
	RUN_FAILS(Conv, 11, 2, in1, 1, big_dil, "does not fit");
	gc_attr wrong_type[] = ATTRS(A_FLOAT("group", 1.0f));
	RUN_FAILS(Conv, 11, 2, in1, 1, wrong_type, "group");

	float b[3];
	gc_tensor tb = tf32(b, 1, DIMS(3), 3);
	gc_tensor *inb[] = {&tx, &tw1, &tb};
	RUN_FAILS(Conv, 11, 3, inb, 1, none, "input B has shape 3");

	int32_t xi[75] = {0};
	gc_tensor ti = harness_tensor(GC_DTYPE_INT32, 4, DIMS(1, 3, 5, 5), xi);
	gc_tensor *ini[] = {&ti, &tw1};
	RUN_FAILS(Conv, 11, 2, ini, 1, none, "int32");
}

/* ---- Gemm ---- */

#define GEMM_CHECK(opset, nin, ins, attrs, want)                                                   \
	do {                                                                                       \
		harness_run h_;                                                                    \
		RUN(h_, Gemm, opset, nin, ins, 1, attrs);                                          \
		int ok_ = same(&h_.out[0], GC_DTYPE_FLOAT, 2, want##_dims, want, F32_TOL);         \
		harness_free(&h_);                                                                 \
		CHECK(ok_);                                                                        \
	} while (0)

static void test_gemm(void)
{
	float a[12], b[20], c[5];
	gc_tensor ta = tf32(a, 2, DIMS(4, 3), 30), tb = tf32(b, 2, DIMS(5, 4), 31),
		  tc = tf32(c, 1, DIMS(5), 32);
	gc_tensor *in[] = {&ta, &tb, &tc};
	gc_attr attrs[] = ATTRS(A_INT("transA", 1), A_INT("transB", 1), A_FLOAT("alpha", 0.5f),
				A_FLOAT("beta", 2.0f));
	GEMM_CHECK(13, 3, in, attrs, gemm_t);

	float a2[6], b2[12], c2[2];
	gc_tensor ta2 = tf32(a2, 2, DIMS(2, 3), 33), tb2 = tf32(b2, 2, DIMS(3, 4), 34),
		  tc2 = tf32(c2, 2, DIMS(2, 1), 35);
	gc_tensor *in2[] = {&ta2, &tb2, &tc2};
	gc_attr none[] = ATTRS();
	GEMM_CHECK(9, 3, in2, none, gemm_cm1);
	gc_attr alpha[] = ATTRS(A_FLOAT("alpha", 1.5f));
	GEMM_CHECK(13, 2, in2, alpha, gemm_noc);
	/* beta = 0 ignores C, even when it holds NaN */
	float cn[2] = {NAN, NAN};
	gc_tensor tcn = harness_tensor(GC_DTYPE_FLOAT, 2, DIMS(2, 1), cn);
	gc_tensor *in2n[] = {&ta2, &tb2, &tcn};
	gc_attr beta0[] = ATTRS(A_FLOAT("alpha", 1.5f), A_FLOAT("beta", 0.0f));
	GEMM_CHECK(13, 3, in2n, beta0, gemm_noc);
}

static void test_gemm_vector(void)
{
	float a[5], b[35], c[1];
	gc_tensor ta = tf32(a, 2, DIMS(1, 5), 36), tb = tf32(b, 2, DIMS(7, 5), 37),
		  tc = tf32(c, 1, DIMS(1), 38);
	gc_tensor *in[] = {&ta, &tb, &tc};
	gc_attr attrs[] = ATTRS(A_INT("transB", 1), A_FLOAT("beta", 0.5f));
	GEMM_CHECK(13, 3, in, attrs, gemm_m1);

	float a2[5], b2[35];
	gc_tensor ta2 = tf32(a2, 2, DIMS(5, 1), 39), tb2 = tf32(b2, 2, DIMS(5, 7), 40);
	gc_tensor *in2[] = {&ta2, &tb2};
	gc_attr attrs2[] = ATTRS(A_INT("transA", 1), A_FLOAT("alpha", 2.0f));
	GEMM_CHECK(13, 2, in2, attrs2, gemm_m1t);

	float a3[12], b3[3];
	gc_tensor ta3 = tf32(a3, 2, DIMS(4, 3), 41), tb3 = tf32(b3, 2, DIMS(1, 3), 42);
	gc_tensor *in3[] = {&ta3, &tb3};
	gc_attr attrs3[] = ATTRS(A_INT("transB", 1));
	GEMM_CHECK(13, 2, in3, attrs3, gemm_n1);

	float a4[12], b4[3], c4[4];
	gc_tensor ta4 = tf32(a4, 2, DIMS(3, 4), 43), tb4 = tf32(b4, 2, DIMS(3, 1), 44),
		  tc4 = tf32(c4, 2, DIMS(4, 1), 45);
	gc_tensor *in4[] = {&ta4, &tb4, &tc4};
	gc_attr attrs4[] = ATTRS(A_INT("transA", 1), A_FLOAT("beta", 3.0f));
	GEMM_CHECK(13, 3, in4, attrs4, gemm_n1t);
}

static void test_gemm_types(void)
{
	double a[12], b[20], c[5];
	gc_tensor ta = tf64(a, 2, DIMS(4, 3), 30), tb = tf64(b, 2, DIMS(5, 4), 31),
		  tc = tf64(c, 1, DIMS(5), 32);
	gc_tensor *in[] = {&ta, &tb, &tc};
	gc_attr attrs[] = ATTRS(A_INT("transA", 1), A_INT("transB", 1), A_FLOAT("alpha", 0.5f),
				A_FLOAT("beta", 2.0f));
	harness_run h;
	RUN(h, Gemm, 13, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_DOUBLE, 2, gemm_t_dims, gemm_t, F64_TOL);
	harness_free(&h);
	CHECK(ok);

	uint16_t ha[12], hb[20], hc[5];
	gc_tensor ua = tf16(ha, 2, DIMS(4, 3), 30), ub = tf16(hb, 2, DIMS(5, 4), 31),
		  uc = tf16(hc, 1, DIMS(5), 32);
	gc_tensor *in16[] = {&ua, &ub, &uc};
	RUN(h, Gemm, 13, 3, in16, 1, attrs);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 2, gemm_t_dims, gemm_t, F16_TOL);
	harness_free(&h);
	CHECK(ok);

	/* int32: [[1,2],[3,4]] x [[5,6],[7,8]] + [10, 20] */
	int32_t ia[] = {1, 2, 3, 4}, ib[] = {5, 6, 7, 8}, ic[] = {10, 20};
	gc_tensor xa = harness_tensor(GC_DTYPE_INT32, 2, DIMS(2, 2), ia);
	gc_tensor xb = harness_tensor(GC_DTYPE_INT32, 2, DIMS(2, 2), ib);
	gc_tensor xc = harness_tensor(GC_DTYPE_INT32, 1, DIMS(2), ic);
	gc_tensor *ini[] = {&xa, &xb, &xc};
	gc_attr none[] = ATTRS();
	RUN(h, Gemm, 13, 3, ini, 1, none);
	static const double want_i[] = {29, 42, 53, 70};
	ok = same(&h.out[0], GC_DTYPE_INT32, 2, DIMS(2, 2), want_i, 0, 0);
	harness_free(&h);
	CHECK(ok);
	/* transB with alpha 2: [[1,2],[3,4]] x [[5,7],[6,8]] * 2 */
	gc_attr tb2[] = ATTRS(A_INT("transB", 1), A_FLOAT("alpha", 2.0f));
	RUN(h, Gemm, 13, 2, ini, 1, tb2);
	static const double want_t[] = {34, 46, 78, 106};
	ok = same(&h.out[0], GC_DTYPE_INT32, 2, DIMS(2, 2), want_t, 0, 0);
	harness_free(&h);
	CHECK(ok);
}

/* A bigger product against plain loops (the sgemm path proper). */
static void test_gemm_large(void)
{
	enum { M = 37, N = 70, K = 53 };
	static float a[K * M], b[K * N], c[N], want[M * N];
	fill_f32(a, K * M, 60);
	fill_f32(b, K * N, 61);
	fill_f32(c, N, 62);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double acc = 0;
			for (int p = 0; p < K; p++)
				acc += (double)a[p * M + i] * b[p * N + j];
			want[i * N + j] = (float)(0.25 * acc + c[j]);
		}
	gc_tensor ta = harness_tensor(GC_DTYPE_FLOAT, 2, DIMS(K, M), a);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 2, DIMS(K, N), b);
	gc_tensor tc = harness_tensor(GC_DTYPE_FLOAT, 2, DIMS(1, N), c);
	gc_tensor *in[] = {&ta, &tb, &tc};
	gc_attr attrs[] = ATTRS(A_INT("transA", 1), A_FLOAT("alpha", 0.25f));
	harness_run h;
	RUN(h, Gemm, 13, 3, in, 1, attrs);
	int ok = close_arrays(h.out[0].data, want, M * N, 1e-5, 1e-5);
	harness_free(&h);
	CHECK(ok);
}

static void test_gemm_errors(void)
{
	float a[12], b[20];
	gc_tensor ta = tf32(a, 2, DIMS(4, 3), 1), tb = tf32(b, 2, DIMS(5, 4), 2);
	gc_tensor *in[] = {&ta, &tb};
	gc_attr none[] = ATTRS();
	RUN_FAILS(Gemm, 13, 2, in, 1, none, "inner dimensions differ: A 4x3 (transA=0) has K=3");
	gc_attr ta1[] = ATTRS(A_INT("transA", 1), A_INT("transB", 1));
	RUN_FAILS(Gemm, 9, 2, in, 1, ta1, "input C is required before opset 11");
	float c[6];
	gc_tensor tc = tf32(c, 2, DIMS(2, 3), 3);
	gc_tensor *inc[] = {&ta, &tb, &tc};
	RUN_FAILS(Gemm, 13, 3, inc, 1, ta1, "input C of shape 2x3 does not broadcast");
	gc_tensor t3 = tf32(b, 3, DIMS(1, 5, 4), 2);
	gc_tensor *in3[] = {&ta, &t3};
	RUN_FAILS(Gemm, 13, 2, in3, 1, none, "must both be 2-D");
}

/* ---- MatMul ---- */

#define MM_CASE(ad, aseed, bd, bseed, want, rank)                                                  \
	do {                                                                                       \
		static float a_[256], b_[256];                                                     \
		gc_tensor ta_ = tf32(a_, NDIMS ad, DIMS ad, aseed);                                \
		gc_tensor tb_ = tf32(b_, NDIMS bd, DIMS bd, bseed);                                \
		gc_tensor *in_[] = {&ta_, &tb_};                                                   \
		gc_attr none_[] = ATTRS();                                                         \
		harness_run h_;                                                                    \
		RUN(h_, MatMul, 13, 2, in_, 1, none_);                                             \
		int ok_ = same(&h_.out[0], GC_DTYPE_FLOAT, rank, want##_dims, want, F32_TOL);      \
		harness_free(&h_);                                                                 \
		CHECK(ok_);                                                                        \
	} while (0)

static void test_matmul(void)
{
	MM_CASE((3), 50, (3, 4), 51, mm_1d2d, 1);
	MM_CASE((4, 3), 52, (3), 53, mm_2d1d, 1);
	MM_CASE((4), 54, (4), 55, mm_1d1d, 0);
	MM_CASE((2, 1, 3, 4), 56, (5, 4, 2), 57, mm_bcast, 4);
	MM_CASE((2, 3, 4), 58, (4, 5), 59, mm_fold, 3);
	MM_CASE((2, 4), 60, (3, 4, 2), 61, mm_bcast_a, 3);
}

static void test_matmul_types(void)
{
	double a[24], b[40];
	gc_tensor ta = tf64(a, 4, DIMS(2, 1, 3, 4), 56), tb = tf64(b, 3, DIMS(5, 4, 2), 57);
	gc_tensor *in[] = {&ta, &tb};
	gc_attr none[] = ATTRS();
	harness_run h;
	RUN(h, MatMul, 13, 2, in, 1, none);
	int ok = same(&h.out[0], GC_DTYPE_DOUBLE, 4, mm_bcast_dims, mm_bcast, F64_TOL);
	harness_free(&h);
	CHECK(ok);

	uint16_t ha[24], hb[20];
	gc_tensor ua = tf16(ha, 3, DIMS(2, 3, 4), 58), ub = tf16(hb, 2, DIMS(4, 5), 59);
	gc_tensor *in16[] = {&ua, &ub};
	RUN(h, MatMul, 13, 2, in16, 1, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 3, mm_fold_dims, mm_fold, F16_TOL);
	harness_free(&h);
	CHECK(ok);

	/* int64 batched: [2,1,2] x [2,1]: batch 0 [1,2].[3,4]^T... */
	int64_t ia[] = {1, 2, 3, 4}, ib[] = {5, -6};
	gc_tensor xa = harness_tensor(GC_DTYPE_INT64, 3, DIMS(2, 1, 2), ia);
	gc_tensor xb = harness_tensor(GC_DTYPE_INT64, 2, DIMS(2, 1), ib);
	gc_tensor *ini[] = {&xa, &xb};
	RUN(h, MatMul, 13, 2, ini, 1, none);
	static const double want[] = {-7, -9};
	ok = same(&h.out[0], GC_DTYPE_INT64, 3, DIMS(2, 1, 1), want, 0, 0);
	harness_free(&h);
	CHECK(ok);
}

static void test_matmul_errors(void)
{
	float a[24], b[40];
	gc_tensor ta = tf32(a, 3, DIMS(2, 3, 4), 1), tb = tf32(b, 3, DIMS(5, 4, 2), 2);
	gc_tensor *in[] = {&ta, &tb};
	gc_attr none[] = ATTRS();
	RUN_FAILS(MatMul, 13, 2, in, 1, none,
		  "batch dimensions of A 2x3x4 and B 5x4x2 do not broadcast (2 vs 5)");
	gc_tensor tb2 = tf32(b, 2, DIMS(3, 2), 2);
	gc_tensor *in2[] = {&ta, &tb2};
	RUN_FAILS(MatMul, 13, 2, in2, 1, none,
		  "inner dimensions differ: A 2x3x4 has K=4, B 3x2 has K=3");
	int32_t bi[8] = {0};
	gc_tensor tbi = harness_tensor(GC_DTYPE_INT32, 2, DIMS(4, 2), bi);
	gc_tensor *in3[] = {&ta, &tbi};
	RUN_FAILS(MatMul, 13, 2, in3, 1, none, "inputs differ in type");
}

/* ---- pooling ---- */

static void pool_input(float *x, int64_t n, int s1, int s2)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(fillv(i, s1) + fillv(i, s2) / 64);
}

static void test_maxpool(void)
{
	float x[50];
	pool_input(x, 50, 70, 71);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 2, 5, 5), x);
	gc_tensor *in[] = {&tx};
	gc_attr attrs[] = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
				A_INTS("pads", 1, 1, 1, 1), A_INT("ceil_mode", 1));
	harness_run h;
	RUN(h, MaxPool, 12, 1, in, 2, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, maxpool_ceil_dims, maxpool_ceil, F32_TOL);
	double ind[LEN(maxpool_ceil_ind)];
	for (int i = 0; i < LEN(ind); i++)
		ind[i] = (double)maxpool_ceil_ind[i];
	ok = ok && same(&h.out[1], GC_DTYPE_INT64, 4, maxpool_ceil_dims, ind, 0, 0);
	harness_free(&h);
	CHECK(ok);

	float x2[24];
	pool_input(x2, 24, 72, 73);
	gc_tensor tx2 = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 4, 6), x2);
	gc_tensor *in2[] = {&tx2};
	gc_attr so[] =
	    ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2), A_INT("storage_order", 1));
	RUN(h, MaxPool, 12, 1, in2, 2, so);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, maxpool_so_dims, maxpool_so, F32_TOL);
	double ind2[LEN(maxpool_so_ind)];
	for (int i = 0; i < LEN(ind2); i++)
		ind2[i] = (double)maxpool_so_ind[i];
	ok = ok && same(&h.out[1], GC_DTYPE_INT64, 4, maxpool_so_dims, ind2, 0, 0);
	harness_free(&h);
	CHECK(ok);

	gc_attr dil[] = ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("dilations", 2, 2));
	RUN(h, MaxPool, 12, 1, in2, 1, dil);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, maxpool_dil_dims, maxpool_dil, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	float x3[25];
	fill_f32(x3, 25, 74);
	gc_tensor tx3 = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 5, 5), x3);
	gc_tensor *in3[] = {&tx3};
	gc_attr same_up[] = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
				  A_STR("auto_pad", "SAME_UPPER"));
	RUN(h, MaxPool, 12, 1, in3, 1, same_up);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, maxpool_same_dims, maxpool_same, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* ONNX's test_maxpool_2d_uint8 / precomputed_pads: 1..25, 5x5 kernel, pads 2. */
static void test_maxpool_ints(void)
{
	uint8_t xu[25];
	int8_t xi[25];
	for (int i = 0; i < 25; i++) {
		xu[i] = (uint8_t)(i + 1);
		xi[i] = (int8_t)(i + 1 - 30);
	}
	static const double want[] = {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
				      25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25};
	gc_attr attrs[] = ATTRS(A_INTS("kernel_shape", 5, 5), A_INTS("pads", 2, 2, 2, 2));
	gc_tensor tu = harness_tensor(GC_DTYPE_UINT8, 4, DIMS(1, 1, 5, 5), xu);
	gc_tensor *in[] = {&tu};
	harness_run h;
	RUN(h, MaxPool, 12, 1, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_UINT8, 4, DIMS(1, 1, 5, 5), want, 0, 0);
	harness_free(&h);
	CHECK(ok);
	double want_i[25];
	for (int i = 0; i < 25; i++)
		want_i[i] = want[i] - 30;
	gc_tensor ti = harness_tensor(GC_DTYPE_INT8, 4, DIMS(1, 1, 5, 5), xi);
	gc_tensor *ini[] = {&ti};
	RUN(h, MaxPool, 12, 1, ini, 1, attrs);
	ok = same(&h.out[0], GC_DTYPE_INT8, 4, DIMS(1, 1, 5, 5), want_i, 0, 0);
	harness_free(&h);
	CHECK(ok);
}

static void test_avgpool(void)
{
	float x[32];
	fill_f32(x, 32, 75);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 2, 4, 4), x);
	gc_tensor *in[] = {&tx};
	gc_attr excl[] = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
			       A_INTS("pads", 1, 1, 1, 1));
	harness_run h;
	RUN(h, AveragePool, 11, 1, in, 1, excl);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, avgpool_excl_dims, avgpool_excl, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_attr incl[] = ATTRS(A_INTS("kernel_shape", 3, 3), A_INTS("strides", 2, 2),
			       A_INTS("pads", 1, 1, 1, 1), A_INT("count_include_pad", 1));
	RUN(h, AveragePool, 11, 1, in, 1, incl);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, avgpool_incl_dims, avgpool_incl, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	float xb[25];
	fill_f32(xb, 25, 76);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 5, 5), xb);
	gc_tensor *inb[] = {&tb};
	gc_attr ceil[] =
	    ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2), A_INT("ceil_mode", 1));
	RUN(h, AveragePool, 11, 1, inb, 1, ceil);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, avgpool_ceil_dims, avgpool_ceil, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_attr ceil_incl[] =
	    ATTRS(A_INTS("kernel_shape", 2, 2), A_INTS("strides", 2, 2), A_INTS("pads", 0, 0, 1, 1),
		  A_INT("ceil_mode", 1), A_INT("count_include_pad", 1));
	RUN(h, AveragePool, 11, 1, inb, 1, ceil_incl);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, avgpool_ceil_incl_dims, avgpool_ceil_incl, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	double x1[14];
	gc_tensor t1 = tf64(x1, 3, DIMS(1, 2, 7), 77);
	gc_tensor *in1[] = {&t1};
	gc_attr one_d[] = ATTRS(A_INTS("kernel_shape", 3), A_INTS("strides", 2),
				A_INTS("pads", 1, 1), A_INT("count_include_pad", 1));
	RUN(h, AveragePool, 11, 1, in1, 1, one_d);
	ok = same(&h.out[0], GC_DTYPE_DOUBLE, 3, avgpool_1d_dims, avgpool_1d, F64_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_global_pool(void)
{
	float x[24];
	gc_tensor tx = tf32(x, 4, DIMS(2, 3, 2, 2), 78);
	gc_tensor *in[] = {&tx};
	gc_attr none[] = ATTRS();
	harness_run h;
	RUN(h, GlobalAveragePool, 1, 1, in, 1, none);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, gavg_dims, gavg, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	RUN(h, GlobalMaxPool, 1, 1, in, 1, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, gmax_dims, gmax, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	uint16_t hx[24];
	gc_tensor ux = tf16(hx, 4, DIMS(2, 3, 2, 2), 78);
	gc_tensor *in16[] = {&ux};
	RUN(h, GlobalAveragePool, 1, 1, in16, 1, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 4, gavg_dims, gavg, F16_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_pool_errors(void)
{
	float x[25];
	gc_tensor tx = tf32(x, 4, DIMS(1, 1, 5, 5), 1);
	gc_tensor *in[] = {&tx};
	gc_attr none[] = ATTRS();
	RUN_FAILS(MaxPool, 12, 1, in, 1, none, "attribute 'kernel_shape' is required");
	gc_attr big[] = ATTRS(A_INTS("kernel_shape", 6, 6));
	RUN_FAILS(AveragePool, 11, 1, in, 1, big, "does not fit spatial axis 0 of size 5");
	gc_attr rank[] = ATTRS(A_INTS("kernel_shape", 3));
	RUN_FAILS(MaxPool, 12, 1, in, 1, rank, "has 1 values, the input has 2 spatial dimensions");
	gc_attr so[] = ATTRS(A_INTS("kernel_shape", 3, 3), A_INT("storage_order", 2));
	RUN_FAILS(MaxPool, 12, 1, in, 1, so, "storage_order");
	int8_t xi[25] = {0};
	gc_tensor ti = harness_tensor(GC_DTYPE_INT8, 4, DIMS(1, 1, 5, 5), xi);
	gc_tensor *ini[] = {&ti};
	gc_attr k3[] = ATTRS(A_INTS("kernel_shape", 3, 3));
	RUN_FAILS(AveragePool, 11, 1, ini, 1, k3, "int8");
}

/* ---- Softmax, LogSoftmax ---- */

#define SM_CASE(op, opset, attrs, want)                                                            \
	do {                                                                                       \
		float x_[24];                                                                      \
		gc_tensor tx_ = tf32(x_, 3, DIMS(2, 3, 4), 80);                                    \
		gc_tensor *in_[] = {&tx_};                                                         \
		harness_run h_;                                                                    \
		RUN(h_, op, opset, 1, in_, 1, attrs);                                              \
		int ok_ = same(&h_.out[0], GC_DTYPE_FLOAT, 3, want##_dims, want, F32_TOL);         \
		harness_free(&h_);                                                                 \
		CHECK(ok_);                                                                        \
	} while (0)

static void test_softmax(void)
{
	gc_attr none[] = ATTRS();
	gc_attr ax1[] = ATTRS(A_INT("axis", 1));
	gc_attr axm1[] = ATTRS(A_INT("axis", -1));
	SM_CASE(Softmax, 13, ax1, softmax_13_ax1);
	SM_CASE(Softmax, 13, none, softmax_13_def);
	SM_CASE(Softmax, 11, ax1, softmax_11_ax1); /* same axis, coerced to 2-D */
	SM_CASE(Softmax, 11, none, softmax_11_ax1);
	SM_CASE(Softmax, 11, axm1, softmax_13_def);
	SM_CASE(LogSoftmax, 11, none, logsoftmax_11_def);
	SM_CASE(LogSoftmax, 13, ax1, logsoftmax_13_ax1);

	float big[] = {1000, 1001, 1002, -1000};
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, DIMS(4), big);
	gc_tensor *in[] = {&tb};
	harness_run h;
	RUN(h, Softmax, 13, 1, in, 1, none);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 1, softmax_big_dims, softmax_big, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	double xd[24];
	gc_tensor td = tf64(xd, 3, DIMS(2, 3, 4), 80);
	gc_tensor *ind[] = {&td};
	RUN(h, LogSoftmax, 13, 1, ind, 1, ax1);
	ok =
	    same(&h.out[0], GC_DTYPE_DOUBLE, 3, logsoftmax_13_ax1_dims, logsoftmax_13_ax1, F64_TOL);
	harness_free(&h);
	CHECK(ok);

	uint16_t hx[24];
	gc_tensor th = tf16(hx, 3, DIMS(2, 3, 4), 80);
	gc_tensor *inh[] = {&th};
	RUN(h, Softmax, 13, 1, inh, 1, ax1);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 3, softmax_13_ax1_dims, softmax_13_ax1, F16_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* ---- LayerNormalization ---- */

static void test_layernorm(void)
{
	float x[24], s[4], b[4];
	gc_tensor tx = tf32(x, 3, DIMS(2, 3, 4), 90), ts = tf32(s, 1, DIMS(4), 91),
		  tb = tf32(b, 1, DIMS(4), 92);
	gc_tensor *in[] = {&tx, &ts, &tb};
	gc_attr none[] = ATTRS();
	harness_run h;
	RUN(h, LayerNormalization, 17, 3, in, 3, none);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, ln_last_dims, ln_last, F32_TOL) &&
		 same(&h.out[1], GC_DTYPE_FLOAT, 3, ln_last_mean_dims, ln_last_mean, F32_TOL) &&
		 same(&h.out[2], GC_DTYPE_FLOAT, 3, ln_last_inv_dims, ln_last_inv, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	float s2[12];
	gc_tensor ts2 = tf32(s2, 2, DIMS(3, 4), 93);
	gc_tensor *in2[] = {&tx, &ts2};
	gc_attr ax1[] = ATTRS(A_INT("axis", 1), A_FLOAT("epsilon", 1e-3f));
	RUN(h, LayerNormalization, 17, 2, in2, 3, ax1);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, ln_ax1_dims, ln_ax1, F32_TOL) &&
	     same(&h.out[2], GC_DTYPE_FLOAT, 3, ln_ax1_inv_dims, ln_ax1_inv, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	/* Scale [1, 4] broadcast over the normalised [3, 4] */
	float s3[4];
	gc_tensor ts3 = tf32(s3, 2, DIMS(1, 4), 94);
	gc_tensor *in3[] = {&tx, &ts3};
	gc_attr ax1b[] = ATTRS(A_INT("axis", -2));
	RUN(h, LayerNormalization, 17, 2, in3, 1, ax1b);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, ln_bcast_dims, ln_bcast, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	double xd[24], sd[4], bd[4];
	gc_tensor dx = tf64(xd, 3, DIMS(2, 3, 4), 90), dsc = tf64(sd, 1, DIMS(4), 91),
		  db = tf64(bd, 1, DIMS(4), 92);
	gc_tensor *ind[] = {&dx, &dsc, &db};
	RUN(h, LayerNormalization, 17, 3, ind, 2, none);
	ok = same(&h.out[0], GC_DTYPE_DOUBLE, 3, ln_last_dims, ln_last, F64_TOL) &&
	     same(&h.out[1], GC_DTYPE_FLOAT, 3, ln_last_mean_dims, ln_last_mean, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	uint16_t hx[24], hs[4], hb[4];
	gc_tensor ux = tf16(hx, 3, DIMS(2, 3, 4), 90), us = tf16(hs, 1, DIMS(4), 91),
		  ub = tf16(hb, 1, DIMS(4), 92);
	gc_tensor *inh[] = {&ux, &us, &ub};
	RUN(h, LayerNormalization, 17, 3, inh, 3, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 3, ln_last_dims, ln_last, 4e-3, 4e-3) &&
	     same(&h.out[2], GC_DTYPE_FLOAT, 3, ln_last_inv_dims, ln_last_inv, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* Rows enough to split over two threads: against double, with Mean and
 * InvStdDev, and the same bytes at one and two threads. */
static void test_layernorm_rows_threads(void)
{
	enum { R = 300, C = 200 };
	static float x[R * C], s[C], b[C], got[2][3][R * C];
	static double want[R * C], wmean[R], winv[R];
	gc_tensor tx = tf32(x, 2, DIMS(R, C), 95), ts = tf32(s, 1, DIMS(C), 96),
		  tb = tf32(b, 1, DIMS(C), 97);
	for (int r = 0; r < R; r++) {
		double m = 0, v = 0;
		for (int c = 0; c < C; c++)
			m += x[r * C + c];
		m /= C;
		for (int c = 0; c < C; c++)
			v += (x[r * C + c] - m) * (x[r * C + c] - m);
		winv[r] = 1 / sqrt(v / C + 1e-5);
		wmean[r] = m;
		for (int c = 0; c < C; c++)
			want[r * C + c] = (x[r * C + c] - m) * winv[r] * s[c] + b[c];
	}
	gc_tensor *in[] = {&tx, &ts, &tb};
	gc_attr none[] = ATTRS();
	for (int t = 1; t <= 2; t++) {
		harness_threads = t;
		harness_run h;
		RUN(h, LayerNormalization, 17, 3, in, 3, none);
		CHECK(same(&h.out[0], GC_DTYPE_FLOAT, 2, DIMS(R, C), want, F32_TOL) &&
		      same(&h.out[1], GC_DTYPE_FLOAT, 2, DIMS(R, 1), wmean, F32_TOL) &&
		      same(&h.out[2], GC_DTYPE_FLOAT, 2, DIMS(R, 1), winv, F32_TOL));
		for (int o = 0; o < 3; o++)
			memcpy(got[t - 1][o], h.out[o].data, (size_t)gc_tensor_nbytes(&h.out[o]));
		harness_free(&h);
	}
	harness_threads = 1;
	CHECK(!memcmp(got[0], got[1], sizeof got[0]));
}

static void test_layernorm_errors(void)
{
	float x[24], s[3];
	gc_tensor tx = tf32(x, 3, DIMS(2, 3, 4), 1), ts = tf32(s, 1, DIMS(3), 2);
	gc_tensor *in[] = {&tx, &ts};
	gc_attr none[] = ATTRS();
	RUN_FAILS(LayerNormalization, 17, 2, in, 1, none, "input 'Scale' (float32 3)");
	gc_attr stash[] = ATTRS(A_INT("stash_type", 11));
	RUN_FAILS(LayerNormalization, 17, 2, in, 1, stash, "stash_type");
	gc_attr ax[] = ATTRS(A_INT("axis", -4));
	RUN_FAILS(LayerNormalization, 17, 2, in, 1, ax, "axis -4 is out of range");
}

/* ---- BatchNormalization ---- */

static void test_batchnorm(void)
{
	float x[24], sc[3], b[3], mean[3], var[3];
	gc_tensor tx = tf32(x, 4, DIMS(2, 3, 2, 2), 100), ts = tf32(sc, 1, DIMS(3), 101),
		  tb = tf32(b, 1, DIMS(3), 102), tm = tf32(mean, 1, DIMS(3), 103),
		  tv = tf32(var, 1, DIMS(3), 104);
	for (int i = 0; i < 3; i++)
		var[i] = fabsf(var[i]) + 0.5f;
	gc_tensor *in[] = {&tx, &ts, &tb, &tm, &tv};
	gc_attr none[] = ATTRS();
	harness_run h;
	RUN(h, BatchNormalization, 15, 5, in, 1, none);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, bn_dims, bn, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	RUN(h, BatchNormalization, 9, 5, in, 1, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, bn_dims, bn, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	/* opset 15 lets the statistics differ in type from X */
	double dm[3], dv[3];
	for (int i = 0; i < 3; i++) {
		dm[i] = mean[i];
		dv[i] = var[i];
	}
	gc_tensor tdm = harness_tensor(GC_DTYPE_DOUBLE, 1, DIMS(3), dm);
	gc_tensor tdv = harness_tensor(GC_DTYPE_DOUBLE, 1, DIMS(3), dv);
	gc_tensor *inm[] = {&tx, &ts, &tb, &tdm, &tdv};
	RUN(h, BatchNormalization, 15, 5, inm, 1, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, bn_dims, bn, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	uint16_t hx[24], hs[3], hb[3], hm[3], hv[3];
	gc_tensor ux = tf16(hx, 4, DIMS(2, 3, 2, 2), 100), us = tf16(hs, 1, DIMS(3), 101),
		  ub = tf16(hb, 1, DIMS(3), 102), um = tf16(hm, 1, DIMS(3), 103);
	for (int i = 0; i < 3; i++)
		hv[i] = gc_f32_to_f16(var[i]);
	gc_tensor uv = harness_tensor(GC_DTYPE_FLOAT16, 1, DIMS(3), hv);
	gc_tensor *inh[] = {&ux, &us, &ub, &um, &uv};
	RUN(h, BatchNormalization, 15, 5, inh, 1, none);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 4, bn_dims, bn, F16_TOL);
	harness_free(&h);
	CHECK(ok);

	double xd[24], sd[3], bd[3];
	gc_tensor dx = tf64(xd, 4, DIMS(2, 3, 2, 2), 100), dsc = tf64(sd, 1, DIMS(3), 101),
		  db = tf64(bd, 1, DIMS(3), 102);
	gc_tensor *ind[] = {&dx, &dsc, &db, &tdm, &tdv};
	RUN(h, BatchNormalization, 15, 5, ind, 1, none);
	ok = same(&h.out[0], GC_DTYPE_DOUBLE, 4, bn_dims, bn, F64_TOL);
	harness_free(&h);
	CHECK(ok);
}

static void test_batchnorm_errors(void)
{
	float x[24], p[3], p4[4];
	gc_tensor tx = tf32(x, 4, DIMS(2, 3, 2, 2), 1), tp = tf32(p, 1, DIMS(3), 2),
		  tp4 = tf32(p4, 1, DIMS(4), 3);
	gc_tensor *in[] = {&tx, &tp, &tp, &tp, &tp};
	gc_attr train2[] = ATTRS(A_INT("training_mode", 2));
	RUN_FAILS(BatchNormalization, 15, 5, in, 1, train2, "expected 0 or 1");
	gc_attr train[] = ATTRS(A_INT("training_mode", 1));
	RUN_FAILS(BatchNormalization, 15, 5, in, 4, train, "at most 3");
	gc_attr none[] = ATTRS();
	RUN_FAILS(BatchNormalization, 9, 5, in, 3, none, "exists only in training");
	gc_tensor *bad[] = {&tx, &tp, &tp, &tp4, &tp};
	RUN_FAILS(BatchNormalization, 15, 5, bad, 1, none, "input 'input_mean' has shape 4");
}

/* ---- ConvTranspose ---- */

static void test_convtranspose(void)
{
	float x[48], w[72], b[6];
	gc_tensor tx = tf32(x, 4, DIMS(1, 4, 3, 4), 120), tw = tf32(w, 4, DIMS(4, 3, 2, 3), 121),
		  tb = tf32(b, 1, DIMS(6), 122);
	gc_tensor *in[] = {&tx, &tw, &tb};
	gc_attr attrs[] = ATTRS(A_INTS("strides", 2, 1), A_INTS("pads", 1, 0, 0, 1),
				A_INTS("dilations", 1, 2), A_INT("group", 2));
	harness_run h;
	RUN(h, ConvTranspose, 11, 3, in, 1, attrs);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, convt_grp_dims, convt_grp, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	float x1[8], w1[6];
	gc_tensor t1 = tf32(x1, 3, DIMS(1, 2, 4), 123), tw1 = tf32(w1, 3, DIMS(2, 1, 3), 124);
	gc_tensor *in1[] = {&t1, &tw1};
	gc_attr a1[] = ATTRS(A_INTS("strides", 2), A_INTS("output_padding", 1));
	RUN(h, ConvTranspose, 11, 2, in1, 1, a1);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, convt_1d_dims, convt_1d, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	double xd[48], wd[72], bd[6];
	gc_tensor dx = tf64(xd, 4, DIMS(1, 4, 3, 4), 120), dw = tf64(wd, 4, DIMS(4, 3, 2, 3), 121),
		  db = tf64(bd, 1, DIMS(6), 122);
	gc_tensor *ind[] = {&dx, &dw, &db};
	RUN(h, ConvTranspose, 11, 3, ind, 1, attrs);
	ok = same(&h.out[0], GC_DTYPE_DOUBLE, 4, convt_grp_dims, convt_grp, F64_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* The expected values of ONNX's own convtranspose tests (attributes, pads,
 * autopad_same, dilations). */
static void test_convtranspose_onnx(void)
{
	float x[9], w[18];
	for (int i = 0; i < 9; i++)
		x[i] = (float)i;
	for (int i = 0; i < 18; i++)
		w[i] = 1;
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 3, 3), x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 2, 3, 3), w);
	gc_tensor *in[] = {&tx, &tw};
	static const double row_attr[10][8] = {
	    {0, 0, 1, 1, 3, 2, 2, 0},	{0, 0, 1, 1, 3, 2, 2, 0},   {0, 0, 1, 1, 3, 2, 2, 0},
	    {3, 3, 7, 4, 9, 5, 5, 0},	{3, 3, 7, 4, 9, 5, 5, 0},   {3, 3, 7, 4, 9, 5, 5, 0},
	    {6, 6, 13, 7, 15, 8, 8, 0}, {6, 6, 13, 7, 15, 8, 8, 0}, {6, 6, 13, 7, 15, 8, 8, 0},
	    {0, 0, 0, 0, 0, 0, 0, 0}};
	double want[160];
	for (int c = 0; c < 2; c++)
		memcpy(want + c * 80, row_attr, sizeof row_attr);
	gc_attr shape[] = ATTRS(A_INTS("strides", 3, 2), A_INTS("output_shape", 10, 8));
	gc_attr opad[] = ATTRS(A_INTS("strides", 3, 2), A_INTS("output_padding", 1, 1));
	gc_attr both[] = ATTRS(A_INTS("strides", 3, 2), A_INTS("output_shape", 10, 8),
			       A_INTS("kernel_shape", 3, 3), A_INTS("output_padding", 1, 1));
	harness_run h;
	RUN(h, ConvTranspose, 11, 2, in, 1, shape);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 2, 10, 8), want, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	RUN(h, ConvTranspose, 11, 2, in, 1, opad);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 2, 10, 8), want, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	RUN(h, ConvTranspose, 11, 2, in, 1, both);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 2, 10, 8), want, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	static const double row_pads[7][3] = {{1, 1, 3}, {1, 1, 3},   {7, 4, 9},  {7, 4, 9},
					      {7, 4, 9}, {13, 7, 15}, {13, 7, 15}};
	for (int c = 0; c < 2; c++)
		memcpy(want + c * 21, row_pads, sizeof row_pads);
	gc_attr pads[] = ATTRS(A_INTS("strides", 3, 2), A_INTS("pads", 1, 2, 1, 2));
	RUN(h, ConvTranspose, 11, 2, in, 1, pads);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 2, 7, 3), want, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	static const double row_same[6][6] = {{0, 0, 1, 1, 3, 2},     {0, 0, 1, 1, 3, 2},
					      {3, 3, 8, 5, 12, 7},    {3, 3, 7, 4, 9, 5},
					      {9, 9, 20, 11, 24, 13}, {6, 6, 13, 7, 15, 8}};
	for (int c = 0; c < 2; c++)
		memcpy(want + c * 36, row_same, sizeof row_same);
	gc_attr same_up[] = ATTRS(A_STR("auto_pad", "SAME_UPPER"), A_INTS("strides", 2, 2));
	RUN(h, ConvTranspose, 11, 2, in, 1, same_up);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 2, 6, 6), want, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	float xd[] = {3, 8, 1, 9, 5, 7, 3, 2, 6}, wd[] = {7, 2, 1, 9};
	gc_tensor txd = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 3, 3), xd);
	gc_tensor twd = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 2, 2), wd);
	gc_tensor *ind[] = {&txd, &twd};
	static const double want_dil[] = {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
					  76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54};
	gc_attr dil[] = ATTRS(A_INTS("dilations", 2, 2));
	RUN(h, ConvTranspose, 11, 2, ind, 1, dil);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 1, 5, 5), want_dil, F32_TOL);
	harness_free(&h);
	CHECK(ok);

	gc_tensor *bad[] = {&tw, &tx};
	gc_attr none[] = ATTRS();
	RUN_FAILS(ConvTranspose, 11, 2, bad, 1, none, "channels; W 1x1x3x3 must have as many");
}

/* Strides, dilations, pads and output shapes that a file may hold, large
 * enough that the sizes derived from them overflowed: the depthwise path
 * sized its padded plane from an overflowed product (a crash); ConvTranspose
 * computed its output size with signed overflow. */
static void test_conv_huge_attrs(void)
{
	const int64_t b31 = INT64_C(1) << 31;
	/* y[oh][ow] reads x at ((oh + i - 1) * 2^31, (ow + j - 1) * 2^31): only
	 * the tap i = 1 - oh, j = 1 - ow meets the one input pixel */
	float x[1] = {5}, w[4] = {1, 2, 3, 4};
	const double want[4] = {20, 15, 10, 5};
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 1, 1), x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 2, 2), w);
	gc_tensor *in[] = {&tx, &tw};
	gc_attr far[] = ATTRS(A_INTS("strides", b31, b31), A_INTS("dilations", b31, b31),
			      A_INTS("pads", b31, b31, b31, b31));
	for (int ref = 0; ref < 2; ref++) {
		if (ref)
			gc_runtime_init(&(gc_init_options){.reference_kernels = 1}, NULL);
		harness_run h;
		RUN(h, Conv, 11, 2, in, 1, far);
		int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 1, 2, 2), want, F32_TOL);
		harness_free(&h);
		gc_runtime_init(NULL, NULL);
		CHECK(ok);
	}

	/* the packed depthwise kernel's band of 2^28 rows of 2^28 pixels: the
	 * scratch sized from it overflowed to a few KB (a crash); the one tap
	 * (1, 1) reads the input pixel */
	const int64_t d28 = (INT64_C(1) << 28) - 1;
	gc_attr band[] = ATTRS(A_INTS("dilations", d28, d28), A_INTS("pads", d28, d28, 0, 0));
	const double want_band[1] = {20};
	for (int ref = 0; ref < 2; ref++) {
		if (ref)
			gc_runtime_init(&(gc_init_options){.reference_kernels = 1}, NULL);
		harness_run h;
		RUN(h, Conv, 11, 2, in, 1, band);
		int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, DIMS(1, 1, 1, 1), want_band, F32_TOL);
		harness_free(&h);
		gc_runtime_init(NULL, NULL);
		CHECK(ok);
	}

	float x2[4], w2[1] = {1};
	gc_tensor tx2 = tf32(x2, 4, DIMS(1, 1, 2, 2), 130);
	gc_tensor tw2 = harness_tensor(GC_DTYPE_FLOAT, 4, DIMS(1, 1, 1, 1), w2);
	gc_tensor *in2[] = {&tx2, &tw2};
	gc_attr stride[] = ATTRS(A_INTS("strides", INT64_C(1) << 62, 1));
	RUN_FAILS(ConvTranspose, 11, 2, in2, 1, stride, "stride 4611686018427387904");
	gc_attr same_up[] = ATTRS(A_STR("auto_pad", "SAME_UPPER"), A_INTS("strides", b31, b31));
	RUN_FAILS(ConvTranspose, 11, 2, in2, 1, same_up, "too large");
	gc_attr shape[] = ATTRS(A_INTS("output_shape", INT64_C(1) << 40, INT64_C(1) << 40));
	RUN_FAILS(ConvTranspose, 11, 2, in2, 1, shape, "the spatial sizes are too large");
	gc_attr pads[] = ATTRS(A_INTS("pads", INT64_MAX, INT64_MAX, 0, 0));
	RUN_FAILS(ConvTranspose, 11, 2, in2, 1, pads, "attribute 'pads'");
}

/* ---- InstanceNormalization, LpNormalization, LRN ---- */

static void test_instnorm(void)
{
	float x[36], s[3], b[3];
	gc_tensor tx = tf32(x, 4, DIMS(2, 3, 2, 3), 110), ts = tf32(s, 1, DIMS(3), 111),
		  tb = tf32(b, 1, DIMS(3), 112);
	gc_tensor *in[] = {&tx, &ts, &tb};
	gc_attr none[] = ATTRS();
	harness_run h;
	RUN(h, InstanceNormalization, 6, 3, in, 1, none);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, instnorm_dims, instnorm, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	double xd[36], sd[3], bd[3];
	gc_tensor dx = tf64(xd, 4, DIMS(2, 3, 2, 3), 110), dsc = tf64(sd, 1, DIMS(3), 111),
		  db = tf64(bd, 1, DIMS(3), 112);
	gc_tensor *ind[] = {&dx, &dsc, &db};
	RUN(h, InstanceNormalization, 6, 3, ind, 1, none);
	ok = same(&h.out[0], GC_DTYPE_DOUBLE, 4, instnorm_dims, instnorm, F64_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_tensor *bad[] = {&tx, &tb, &dx};
	RUN_FAILS(InstanceNormalization, 6, 3, bad, 1, none, "input 'B' (float64 2x3x2x3)");
}

static void test_lpnorm(void)
{
	float x[24];
	fill_f32(x, 24, 113);
	for (int i = 0; i < 24; i++)
		x[i] += 0.0625f;
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 3, DIMS(2, 3, 4), x);
	gc_tensor *in[] = {&tx};
	gc_attr p2[] = ATTRS(A_INT("axis", 1));
	harness_run h;
	RUN(h, LpNormalization, 1, 1, in, 1, p2);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, lp2_ax1_dims, lp2_ax1, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_attr p1[] = ATTRS(A_INT("p", 1));
	RUN(h, LpNormalization, 1, 1, in, 1, p1);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 3, lp1_last_dims, lp1_last, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_attr p3[] = ATTRS(A_INT("p", 3));
	RUN_FAILS(LpNormalization, 1, 1, in, 1, p3, "attribute 'p' = 3 must be 1 or 2");
}

static void test_lrn(void)
{
	float x[20];
	gc_tensor tx = tf32(x, 4, DIMS(1, 5, 2, 2), 114);
	gc_tensor *in[] = {&tx};
	gc_attr a3[] = ATTRS(A_INT("size", 3), A_FLOAT("alpha", 0.5f), A_FLOAT("beta", 0.75f),
			     A_FLOAT("bias", 2.0f));
	harness_run h;
	RUN(h, LRN, 13, 1, in, 1, a3);
	int ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, lrn_dims, lrn, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_attr a4[] = ATTRS(A_INT("size", 4), A_FLOAT("alpha", 0.5f), A_FLOAT("beta", 0.75f),
			     A_FLOAT("bias", 2.0f));
	RUN(h, LRN, 13, 1, in, 1, a4);
	ok = same(&h.out[0], GC_DTYPE_FLOAT, 4, lrn4_dims, lrn4, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	uint16_t hx[20];
	gc_tensor ux = tf16(hx, 4, DIMS(1, 5, 2, 2), 114);
	gc_tensor *inh[] = {&ux};
	RUN(h, LRN, 13, 1, inh, 1, a3);
	ok = same(&h.out[0], GC_DTYPE_FLOAT16, 4, lrn_dims, lrn, F16_TOL);
	harness_free(&h);
	CHECK(ok);
	gc_attr none[] = ATTRS();
	RUN_FAILS(LRN, 13, 1, in, 1, none, "attribute 'size' is required");
}

/* ---- the BLAS wrapper ---- */

/* The threads of this process (/proc/self/status), or -1. */
static int process_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static void test_blas(void)
{
	gc_error err = {0};
	/* The core type and thread count are the host's choice, made through
	 * gc_runtime_init before OpenBLAS loads (the graphcc command asks for
	 * them): one thread, so that OpenBLAS starts none of its own (they
	 * would spin on the pool's cores for ~0.1 s). */
	int had = getenv("OPENBLAS_NUM_THREADS") != NULL, before = process_threads();
	CHECK_INT(gc_runtime_init(&(gc_init_options){.blas_coretype = 1}, &err), 0);
	CHECK(getenv("OPENBLAS_NUM_THREADS") != NULL);
	CHECK_INT(gc_blas_init(&err), 0);
	CHECK_INT(gc_blas_init(&err), 0); /* idempotent */
	if (!had)
		CHECK_INT(process_threads(), before);
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
		CHECK(getenv("OPENBLAS_CORETYPE") != NULL);
#endif
	/* y = A^T x with beta = 0 over a y holding NaN */
	float a[6] = {1, 2, 3, 4, 5, 6}, x[2] = {1, -1}, y[3] = {NAN, NAN, NAN};
	gc_sgemv(true, 2, 3, 1.0f, a, 3, x, 1, 0.0f, y, 1);
	CHECK_NEAR(y[0], -3, 0);
	CHECK_NEAR(y[1], -3, 0);
	CHECK_NEAR(y[2], -3, 0);
	/* k == 0: C = beta * C */
	float c[4] = {1, 2, 3, 4};
	gc_sgemm(false, false, 2, 2, 0, 1.0f, a, 1, a, 2, 2.0f, c, 2);
	CHECK_NEAR(c[3], 8, 0);
}

TEST_MAIN(TEST(test_blas), TEST(test_conv_basic), TEST(test_conv_groups_dilations),
	  TEST(test_conv_depthwise), TEST(test_conv_pointwise), TEST(test_conv_auto_pad),
	  TEST(test_conv_1d_3d), TEST(test_conv_f64_f16), TEST(test_conv_tiled),
	  TEST(test_conv_odd_sizes), TEST(test_conv_errors), TEST(test_gemm),
	  TEST(test_gemm_vector), TEST(test_gemm_types), TEST(test_gemm_large),
	  TEST(test_gemm_errors), TEST(test_matmul), TEST(test_matmul_types),
	  TEST(test_matmul_errors), TEST(test_maxpool), TEST(test_maxpool_ints), TEST(test_avgpool),
	  TEST(test_global_pool), TEST(test_pool_errors), TEST(test_softmax), TEST(test_layernorm),
	  TEST(test_layernorm_rows_threads), TEST(test_layernorm_errors), TEST(test_batchnorm),
	  TEST(test_batchnorm_errors), TEST(test_instnorm), TEST(test_lpnorm), TEST(test_lrn), TEST(test_convtranspose),
	  TEST(test_convtranspose_onnx), TEST(test_conv_huge_attrs))
