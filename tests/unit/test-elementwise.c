/*
 * Unit tests for the elementwise kernels (runtime/kernels/elementwise*.c).
 *
 * Expected values come from two independent sources:
 *  - NumPy (1.24, /usr/bin/python3) with the formulas of the ONNX reference
 *    implementations (onnx/backend/test/case/node/), computed in float32
 *    and pasted as 9-digit literals (the unary table and the literals marked
 *    "numpy");
 *  - naive loops in this file that index every element through its full
 *    broadcast coordinates (the broadcast sweeps), which share no code with
 *    the kernels' collapsed-run engine.
 * Tolerances: float32 1e-5 relative + 1e-6 absolute (libm vs NumPy's own
 * math), float64 compared with the float32 reference at 1e-6 relative,
 * float16 1e-2 and bfloat16 2e-2 relative (the input itself is rounded).
 * Integer, bool and bit-pattern results must match exactly.
 */

#include "test-elementwise-impl.h"

static void test_add_broadcast_basic(void)
{
	float a[24], b[3] = {1, -2, 0.25f};
	for (int i = 0; i < 24; i++)
		a[i] = i * 0.5f - 3;
	gc_tensor ta = tensor(GC_DTYPE_FLOAT, 3, DIMS(2, 3, 4), a);
	gc_tensor tb = tensor(GC_DTYPE_FLOAT, 2, DIMS(3, 1), b);
	gc_tensor *in[2] = {&ta, &tb};
	harness_run h;
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 17, 2, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 3, 2, 3, 4);
	CHECK_EXACT(&h.out[0], -2, -1.5, -1, -0.5, -3, -2.5, -2, -1.5, 1.25, 1.75, 2.25, 2.75, 4,
		    4.5, 5, 5.5, 3, 3.5, 4, 4.5, 7.25, 7.75, 8.25, 8.75);
	harness_free(&h);
	/* and the other way round: B + A */
	gc_tensor *rev[2] = {&tb, &ta};
	CHECK_INT(run(&h, gc_prepare_Sub, "Sub", 17, 2, rev, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 3, 2, 3, 4);
	CHECK_EXACT(&h.out[0], 4, 3.5, 3, 2.5, -1, -1.5, -2, -2.5, -0.75, -1.25, -1.75, -2.25, -2,
		    -2.5, -3, -3.5, -7, -7.5, -8, -8.5, -6.75, -7.25, -7.75, -8.25);
	harness_free(&h);
}

static void test_broadcast_mismatch(void)
{
	float a[6] = {0}, b[4] = {0};
	gc_tensor ta = tensor(GC_DTYPE_FLOAT, 2, DIMS(2, 3), a);
	gc_tensor tb = vec(GC_DTYPE_FLOAT, 4, b);
	gc_tensor *in[2] = {&ta, &tb};
	harness_run h;
	CHECK_INT(run(&h, gc_prepare_Mul, "Mul", 17, 2, in, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "2x3");
	CHECK_CONTAINS(h.err.msg, "shape 4 ");
	CHECK_CONTAINS(h.err.msg, "Mul");
	harness_free(&h);
	/* Where with three operands */
	uint8_t c[5] = {0};
	gc_tensor tc = vec(GC_DTYPE_BOOL, 5, c);
	gc_tensor *w[3] = {&tc, &ta, &ta};
	CHECK_INT(run(&h, gc_prepare_Where, "Where", 16, 3, w, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "does not broadcast");
	harness_free(&h);
}

/* The plan collapses per-channel and row-vector broadcasts into long runs. */
static void test_plan_collapse(void)
{
	gc_tensor x = tensor(GC_DTYPE_FLOAT, 4, DIMS(2, 3, 4, 5), NULL);
	gc_tensor c = tensor(GC_DTYPE_FLOAT, 3, DIMS(3, 1, 1), NULL);
	const gc_tensor *ops[2] = {&x, &c};
	gc_ew_plan p;
	gc_ew_plan_init(&p, 2, ops, 4, x.dims, GC_DTYPE_FLOAT);
	CHECK_INT(p.rank, 3);
	CHECK_INT(p.dims[0], 2);
	CHECK_INT(p.dims[1], 3);
	CHECK_INT(p.dims[2], 20);
	CHECK_INT(p.inc[0], 1);
	CHECK_INT(p.inc[1], 0);

	gc_tensor s = tensor(GC_DTYPE_FLOAT, 3, DIMS(7, 2, 16), NULL);
	gc_tensor d = vec(GC_DTYPE_FLOAT, 16, NULL);
	const gc_tensor *ops2[2] = {&s, &d};
	gc_ew_plan_init(&p, 2, ops2, 3, s.dims, GC_DTYPE_FLOAT);
	CHECK_INT(p.rank, 2);
	CHECK_INT(p.dims[0], 14);
	CHECK_INT(p.dims[1], 16);
	CHECK_INT(p.inc[0], 1);
	CHECK_INT(p.inc[1], 1);

	/* same shape: one run; scalar operand: one run with inc 0 */
	const gc_tensor *ops3[2] = {&x, &x};
	gc_ew_plan_init(&p, 2, ops3, 4, x.dims, GC_DTYPE_FLOAT);
	CHECK_INT(p.rank, 1);
	CHECK_INT(p.dims[0], 120);
	gc_tensor sc = scalar(GC_DTYPE_FLOAT, NULL);
	const gc_tensor *ops4[2] = {&sc, &x};
	gc_ew_plan_init(&p, 2, ops4, 4, x.dims, GC_DTYPE_FLOAT);
	CHECK_INT(p.rank, 1);
	CHECK_INT(p.inc[0], 0);
	CHECK_INT(p.inc[1], 1);
}

/* Random shape pairs against a naive per-element broadcast: Add (float32,
 * float16 across the adapter's chunks), Mul (int64), Where (three operands). */
static uint32_t rng_state = 12345;
static uint32_t rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 8;
}

/* Offset in t of the output element with coordinates idx (output rank r). */
static int64_t bcast_offset(const gc_tensor *t, int r, const int64_t *idx)
{
	int64_t off = 0;
	for (int d = 0; d < t->rank; d++) {
		int od = r - t->rank + d;
		off = off * t->dims[d] + (t->dims[d] == 1 ? 0 : idx[od]);
	}
	return off;
}

static void random_shape(int r, const int64_t *full, int64_t *dims, int *rank)
{
	*rank = r - (int)(rnd() % (unsigned)(r + 1));
	for (int d = 0; d < *rank; d++) {
		int od = r - *rank + d;
		dims[d] = (rnd() % 3 == 0) ? 1 : full[od];
	}
}

static void test_broadcast_sweep(void)
{
	for (int iter = 0; iter < 300; iter++) {
		int r = 1 + (int)(rnd() % 5);
		int64_t full[GC_MAX_RANK];
		for (int d = 0; d < r; d++)
			full[d] = 1 + rnd() % (iter % 10 == 0 ? 40 : 5);
		int64_t da[GC_MAX_RANK], db[GC_MAX_RANK], dc[GC_MAX_RANK];
		int ra, rb, rc;
		random_shape(r, full, da, &ra);
		random_shape(r, full, db, &rb);
		random_shape(r, full, dc, &rc);
		gc_tensor ta = tensor(GC_DTYPE_FLOAT, ra, da, NULL);
		gc_tensor tb = tensor(GC_DTYPE_FLOAT, rb, db, NULL);
		gc_tensor tc = tensor(GC_DTYPE_BOOL, rc, dc, NULL);
		int64_t na = gc_tensor_numel(&ta), nb = gc_tensor_numel(&tb),
			nc = gc_tensor_numel(&tc);
		float *a = malloc(sizeof(float) * (size_t)na),
		      *b = malloc(sizeof(float) * (size_t)nb);
		int64_t *ia = malloc(8 * (size_t)na), *ib = malloc(8 * (size_t)nb);
		uint16_t *ha = malloc(2 * (size_t)na), *hb = malloc(2 * (size_t)nb);
		uint8_t *c = malloc((size_t)nc);
		for (int64_t i = 0; i < na; i++) {
			a[i] = (float)(rnd() % 200) / 8 - 12;
			ia[i] = (int64_t)(rnd() % 2000) - 1000;
			ha[i] = gc_f32_to_f16(a[i]);
		}
		for (int64_t i = 0; i < nb; i++) {
			b[i] = (float)(rnd() % 200) / 8 - 12;
			ib[i] = (int64_t)(rnd() % 2000) - 1000;
			hb[i] = gc_f32_to_f16(b[i]);
		}
		for (int64_t i = 0; i < nc; i++)
			c[i] = (uint8_t)(rnd() % 2);

		harness_run h1, h2, h3, h4;
		ta.data = a;
		tb.data = b;
		tc.data = c;
		gc_tensor *in[2] = {&ta, &tb};
		CHECK_INT(run(&h1, gc_prepare_Add, "Add", 17, 2, in, 0, NULL), 0);
		gc_tensor *w[3] = {&tc, &ta, &tb};
		CHECK_INT(run(&h3, gc_prepare_Where, "Where", 16, 3, w, 0, NULL), 0);
		gc_tensor xa = ta, xb = tb;
		xa.dtype = xb.dtype = GC_DTYPE_INT64;
		xa.data = ia;
		xb.data = ib;
		gc_tensor *ini[2] = {&xa, &xb};
		CHECK_INT(run(&h2, gc_prepare_Mul, "Mul", 17, 2, ini, 0, NULL), 0);
		gc_tensor ya = ta, yb = tb;
		ya.dtype = yb.dtype = GC_DTYPE_FLOAT16;
		ya.data = ha;
		yb.data = hb;
		gc_tensor *inh[2] = {&ya, &yb};
		CHECK_INT(run(&h4, gc_prepare_Add, "Add", 17, 2, inh, 0, NULL), 0);

		/* output shape: full with the axes no input covers dropped */
		int orank = ra > rb ? ra : rb;
		CHECK_INT(h1.out[0].rank, orank);
		int64_t n = gc_tensor_numel(&h1.out[0]);
		int64_t idx[GC_MAX_RANK] = {0};
		for (int64_t i = 0; i < n; i++) {
			int64_t oa = bcast_offset(&ta, orank, idx),
				ob = bcast_offset(&tb, orank, idx);
			float want = a[oa] + b[ob];
			if (((float *)h1.out[0].data)[i] != want)
				fprintf(stderr, "  iter %d element %" PRId64 "\n", iter, i);
			CHECK(((float *)h1.out[0].data)[i] == want);
			CHECK(((int64_t *)h2.out[0].data)[i] == ia[oa] * ib[ob]);
			uint16_t hw = gc_f32_to_f16(gc_f16_to_f32(ha[oa]) + gc_f16_to_f32(hb[ob]));
			CHECK_INT(((uint16_t *)h4.out[0].data)[i], hw);
			/* advance idx over the output dims */
			for (int d = orank - 1; d >= 0; d--) {
				if (++idx[d] < h1.out[0].dims[d])
					break;
				idx[d] = 0;
			}
		}
		/* Where: output may be wider (cond's rank) */
		int wr = h3.out[0].rank;
		int64_t wn = gc_tensor_numel(&h3.out[0]);
		memset(idx, 0, sizeof idx);
		for (int64_t i = 0; i < wn; i++) {
			float want = c[bcast_offset(&tc, wr, idx)] ? a[bcast_offset(&ta, wr, idx)]
								   : b[bcast_offset(&tb, wr, idx)];
			CHECK(((float *)h3.out[0].data)[i] == want);
			for (int d = wr - 1; d >= 0; d--) {
				if (++idx[d] < h3.out[0].dims[d])
					break;
				idx[d] = 0;
			}
		}
		harness_free(&h1);
		harness_free(&h2);
		harness_free(&h3);
		harness_free(&h4);
		free(a);
		free(b);
		free(ia);
		free(ib);
		free(ha);
		free(hb);
		free(c);
	}
}

/* Broadcasting against rank-0 and zero-size tensors. */
static void test_scalar_and_empty(void)
{
	float s = 2, v[3] = {1, 2, 3};
	gc_tensor ts = scalar(GC_DTYPE_FLOAT, &s);
	gc_tensor tv = vec(GC_DTYPE_FLOAT, 3, v);
	gc_tensor *in[2] = {&ts, &tv};
	harness_run h;
	CHECK_INT(run(&h, gc_prepare_Div, "Div", 17, 2, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 1, 3);
	CHECK_VALUES(&h.out[0], 1e-7, 2, 1, 0.666666687);
	harness_free(&h);
	gc_tensor *ss[2] = {&ts, &ts};
	CHECK_INT(run(&h, gc_prepare_Mul, "Mul", 17, 2, ss, 0, NULL), 0);
	CHECK_INT(h.out[0].rank, 0);
	CHECK_EXACT(&h.out[0], 4);
	harness_free(&h);
	gc_tensor te = tensor(GC_DTYPE_FLOAT, 2, DIMS(0, 3), v);
	gc_tensor *ev[2] = {&te, &tv};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 17, 2, ev, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 2, 0, 3);
	harness_free(&h);
}

/* Opset < 7: B broadcasts only with broadcast=1, aligned at axis. */
static void test_legacy_broadcast(void)
{
	float a[24], b[3] = {10, 20, 30}, c[4] = {1, 2, 3, 4};
	for (int i = 0; i < 24; i++)
		a[i] = (float)i;
	gc_tensor ta = tensor(GC_DTYPE_FLOAT, 3, DIMS(2, 3, 4), a);
	gc_tensor tb = vec(GC_DTYPE_FLOAT, 3, b);
	gc_tensor tc = vec(GC_DTYPE_FLOAT, 4, c);
	gc_attr at2[2] = {attr_i("broadcast", 1), attr_i("axis", 1)};
	gc_tensor *in[2] = {&ta, &tb};
	harness_run h;
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 6, 2, in, 2, at2), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 3, 2, 3, 4);
	CHECK_EXACT(&h.out[0], 10, 11, 12, 13, 24, 25, 26, 27, 38, 39, 40, 41, 22, 23, 24, 25, 36,
		    37, 38, 39, 50, 51, 52, 53);
	harness_free(&h);
	/* suffix matching by default */
	gc_tensor *in2[2] = {&ta, &tc};
	CHECK_INT(run(&h, gc_prepare_Sub, "Sub", 6, 2, in2, 1, at2), 0);
	CHECK_VALUES(&h.out[0], 0, -1, -1, -1, -1, 3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15,
		     15, 15, 19, 19, 19, 19);
	harness_free(&h);
	/* without broadcast=1 the shapes must match */
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 6, 2, in2, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "broadcast");
	CHECK_CONTAINS(h.err.msg, "2x3x4");
	harness_free(&h);
	/* axis 1 with B of shape [4] does not fit [2,3,4] */
	gc_tensor *in3[2] = {&ta, &tc};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 6, 2, in3, 2, at2), GC_EINVAL);
	harness_free(&h);
}

/* ---- arithmetic ------------------------------------------------------------ */

static void test_arith_int(void)
{
	harness_run h;
	/* Div truncates toward zero; x/0 -> 0; MIN/-1 wraps */
	int64_t a[6] = {7, -7, 7, -7, 5, INT64_MIN}, b[6] = {2, 2, -2, -2, 0, -1};
	gc_tensor ta = vec(GC_DTYPE_INT64, 6, a), tb = vec(GC_DTYPE_INT64, 6, b);
	gc_tensor *in[2] = {&ta, &tb};
	CHECK_INT(run(&h, gc_prepare_Div, "Div", 14, 2, in, 0, NULL), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_INT64);
	const int64_t *o = h.out[0].data;
	CHECK_INT(o[0], 3);
	CHECK_INT(o[1], -3);
	CHECK_INT(o[2], -3);
	CHECK_INT(o[3], 3);
	CHECK_INT(o[4], 0);
	CHECK(o[5] == INT64_MIN);
	harness_free(&h);
	/* uint8 division (ONNX test_div_uint8 is x // y) */
	uint8_t u[3] = {200, 9, 255}, v[3] = {3, 0, 255};
	gc_tensor tu = vec(GC_DTYPE_UINT8, 3, u), tv = vec(GC_DTYPE_UINT8, 3, v);
	gc_tensor *inu[2] = {&tu, &tv};
	CHECK_INT(run(&h, gc_prepare_Div, "Div", 14, 2, inu, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 66, 0, 1);
	harness_free(&h);
	/* int32 wraps instead of overflowing; uint16 multiply past int */
	int32_t p[2] = {INT32_MAX, INT32_MIN}, q[2] = {1, -1};
	gc_tensor tp = vec(GC_DTYPE_INT32, 2, p), tq = vec(GC_DTYPE_INT32, 2, q);
	gc_tensor *inp[2] = {&tp, &tq};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 14, 2, inp, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], (double)INT32_MIN, (double)INT32_MAX);
	harness_free(&h);
	uint16_t m[2] = {65535, 300};
	gc_tensor tm = vec(GC_DTYPE_UINT16, 2, m);
	gc_tensor *inm[2] = {&tm, &tm};
	CHECK_INT(run(&h, gc_prepare_Mul, "Mul", 14, 2, inm, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 24464); /* 65535^2 mod 2^16, 90000 mod 2^16 */
	harness_free(&h);
	/* int8 Sub with a broadcast scalar */
	int8_t s8[4] = {-128, 0, 100, 127}, one = 1;
	gc_tensor t8 = vec(GC_DTYPE_INT8, 4, s8), t1 = scalar(GC_DTYPE_INT8, &one);
	gc_tensor *in8[2] = {&t8, &t1};
	CHECK_INT(run(&h, gc_prepare_Sub, "Sub", 14, 2, in8, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 127, -1, 99, 126);
	harness_free(&h);
}

static void test_arith_types(void)
{
	harness_run h;
	/* float64 */
	double a[3] = {0.1, 1e300, -3}, b[3] = {0.2, 10, 0.5};
	gc_tensor ta = vec(GC_DTYPE_DOUBLE, 3, a), tb = vec(GC_DTYPE_DOUBLE, 3, b);
	gc_tensor *in[2] = {&ta, &tb};
	CHECK_INT(run(&h, gc_prepare_Mul, "Mul", 14, 2, in, 0, NULL), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_DOUBLE);
	CHECK(((double *)h.out[0].data)[0] == 0.1 * 0.2);
	CHECK(((double *)h.out[0].data)[1] == a[1] * b[1]);
	CHECK(((double *)h.out[0].data)[2] == -1.5);
	harness_free(&h);
	/* float16 (numpy: a + b in float16, bit patterns) */
	uint16_t ha[4] = {0x3e00, 0xc000, 0x4200, 0x3400}, hb[4] = {0x2e66, 0x4066, 0xc29a, 0x63d0};
	gc_tensor tha = vec(GC_DTYPE_FLOAT16, 4, ha), thb = vec(GC_DTYPE_FLOAT16, 4, hb);
	gc_tensor *inh[2] = {&tha, &thb};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 14, 2, inh, 0, NULL), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_FLOAT16);
	const uint16_t *ho = h.out[0].data;
	CHECK_INT(ho[0], 0x3e66);
	CHECK_INT(ho[1], 0x3260);
	CHECK_INT(ho[2], 0xb4d0);
	CHECK_INT(ho[3], 0x63d0);
	harness_free(&h);
	/* bfloat16: 1.5 * 3 = 4.5, 0.5 / 4 */
	uint16_t ba[2] = {0x3fc0, 0x3f00}, bb[2] = {0x4040, 0x4080};
	gc_tensor tba = vec(GC_DTYPE_BFLOAT16, 2, ba), tbb = vec(GC_DTYPE_BFLOAT16, 2, bb);
	gc_tensor *inb[2] = {&tba, &tbb};
	CHECK_INT(run(&h, gc_prepare_Div, "Div", 14, 2, inb, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0.5, 0.125);
	harness_free(&h);
	/* mixed types are refused, naming both */
	int64_t i64[3] = {1, 2, 3};
	gc_tensor ti = vec(GC_DTYPE_INT64, 3, i64);
	float f[3] = {1, 2, 3};
	gc_tensor tf = vec(GC_DTYPE_FLOAT, 3, f);
	gc_tensor *mix[2] = {&tf, &ti};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 14, 2, mix, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "int64");
	CHECK_CONTAINS(h.err.msg, "float32");
	harness_free(&h);
	/* bool is not numeric */
	uint8_t bo[3] = {1, 0, 1};
	gc_tensor tbo = vec(GC_DTYPE_BOOL, 3, bo);
	gc_tensor *bb2[2] = {&tbo, &tbo};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 14, 2, bb2, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "bool");
	harness_free(&h);
	/* an absent required input */
	gc_tensor *absent[2] = {&tf, NULL};
	CHECK_INT(run(&h, gc_prepare_Add, "Add", 14, 2, absent, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "input 1 is missing");
	harness_free(&h);
}

/* float32 ^ a small integer scalar (multiplies, not powf): within 1 ulp of
 * pow() in double, rounded, over 20001 bases spanning 1e-13..1e13 of both
 * signs, and IEEE's special values as pow() gives them. */
static void test_pow_small_int(void)
{
	enum { N = 20001 };
	static float x[N];
	for (int i = 0; i < N; i++) {
		double t = (i - N / 2) / (double)(N / 2); /* -1..1 */
		x[i] = (float)((t < 0 ? -1 : 1) * pow(10.0, 13 * fabs(t)) * (1 + 0.37 * t * t));
	}
	x[0] = 0.0f;
	x[1] = -0.0f;
	x[2] = INFINITY;
	x[3] = -INFINITY;
	x[4] = NAN;
	x[5] = 3e-13f; /* x^-3 past float's normal range on the way */
	const float ks[] = {2, 3, 4, -2, -3, -4};
	for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++) {
		harness_run h;
		gc_tensor tx = vec(GC_DTYPE_FLOAT, N, x), tk = scalar(GC_DTYPE_FLOAT, &ks[j]);
		gc_tensor *in[2] = {&tx, &tk};
		CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in, 0, NULL), 0);
		const float *y = h.out[0].data;
		double worst = 0;
		for (int i = 0; i < N; i++) {
			float want = (float)pow((double)x[i], (double)ks[j]);
			if (isnan(want) || isinf(want) || want == 0) {
				CHECK(isnan(want) ? isnan(y[i]) : !memcmp(&want, &y[i], 4));
				continue;
			}
			double ulp = nextafterf(fabsf(want), INFINITY) - fabsf(want);
			double e = fabs((double)y[i] - (double)want) / ulp;
			worst = e > worst ? e : worst;
		}
		if (worst > 1)
			fprintf(stderr, "  x^%g: %.2f ulp\n", ks[j], worst);
		CHECK(worst <= 1);
		harness_free(&h);
	}
}

static void test_pow(void)
{
	harness_run h;
	/* numpy: arange(6).reshape(2,3) ** [0.5, 2, -1] */
	float x[6] = {0, 1, 2, 3, 4, 5}, y[3] = {0.5f, 2, -1};
	gc_tensor tx = tensor(GC_DTYPE_FLOAT, 2, DIMS(2, 3), x), ty = vec(GC_DTYPE_FLOAT, 3, y);
	gc_tensor *in[2] = {&tx, &ty};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in, 0, NULL), 0);
	CHECK_VALUES(&h.out[0], 1e-6, 0, 1, 0.5, 1.73205090, 16, 0.200000003);
	harness_free(&h);
	/* float32 ^ int64 (numpy: [5.0625, 0.5, 729]) */
	float xb[3] = {1.5f, 2, 3};
	int64_t e64[3] = {4, -1, 6};
	gc_tensor txb = vec(GC_DTYPE_FLOAT, 3, xb), te = vec(GC_DTYPE_INT64, 3, e64);
	gc_tensor *in2[2] = {&txb, &te};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in2, 0, NULL), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_FLOAT);
	CHECK_EXACT(&h.out[0], 5.0625, 0.5, 729);
	harness_free(&h);
	/* int64 ^ float32 (numpy: [1, 32, 729, -8, 3]) */
	int64_t bi[5] = {1, 2, 3, -2, 9};
	float ef[5] = {4, 5, 6, 3, 0.5f};
	gc_tensor tbi = vec(GC_DTYPE_INT64, 5, bi), tef = vec(GC_DTYPE_FLOAT, 5, ef);
	gc_tensor *in3[2] = {&tbi, &tef};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in3, 0, NULL), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_INT64);
	CHECK_EXACT(&h.out[0], 1, 32, 729, -8, 3);
	harness_free(&h);
	/* int32 ^ int32 exactly, negative exponents truncate */
	int32_t b32[5] = {2, 3, -2, 2, -1}, e32[5] = {10, 3, 3, -1, -3};
	gc_tensor tb32 = vec(GC_DTYPE_INT32, 5, b32), te32 = vec(GC_DTYPE_INT32, 5, e32);
	gc_tensor *in4[2] = {&tb32, &te32};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in4, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1024, 27, -8, 0, -1);
	harness_free(&h);
	/* int64 ^ uint8 beyond double precision: 3^39 */
	int64_t b3 = 3;
	uint8_t e39 = 39;
	gc_tensor tb3 = scalar(GC_DTYPE_INT64, &b3), te39 = scalar(GC_DTYPE_UINT8, &e39);
	gc_tensor *in5[2] = {&tb3, &te39};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in5, 0, NULL), 0);
	CHECK(((int64_t *)h.out[0].data)[0] == 4052555153018976267LL);
	harness_free(&h);
	/* float16 base, float32 scalar exponent */
	uint16_t hb[3] = {0x4000, 0x4200, 0x3800}; /* 2, 3, 0.5 */
	float two = 2;
	gc_tensor thb = vec(GC_DTYPE_FLOAT16, 3, hb), ttwo = scalar(GC_DTYPE_FLOAT, &two);
	gc_tensor *in6[2] = {&thb, &ttwo};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, in6, 0, NULL), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_FLOAT16);
	CHECK_EXACT(&h.out[0], 4, 9, 0.25);
	harness_free(&h);
	/* uint8 base is not allowed */
	gc_tensor *bad[2] = {&te39, &te39};
	CHECK_INT(run(&h, gc_prepare_Pow, "Pow", 15, 2, bad, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "uint8");
	harness_free(&h);
}

/* ONNX mod test data (numpy mod / fmod). */
static void test_mod(void)
{
	harness_run h;
	int64_t x[6] = {-4, 7, 5, 4, -7, 8}, y[6] = {2, -3, 8, -2, 3, 5};
	gc_tensor tx = vec(GC_DTYPE_INT64, 6, x), ty = vec(GC_DTYPE_INT64, 6, y);
	gc_tensor *in[2] = {&tx, &ty};
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, -2, 5, 0, 2, 3);
	harness_free(&h);
	gc_attr fm = attr_i("fmod", 1);
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, in, 1, &fm), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 5, 0, -1, 3);
	harness_free(&h);
	float fx[6] = {-4.3f, 7.2f, 5.0f, 4.3f, -7.2f, 8.0f},
	      fy[6] = {2.1f, -3.4f, 8.0f, -2.1f, 3.4f, 5.0f};
	gc_tensor tfx = vec(GC_DTYPE_FLOAT, 6, fx), tfy = vec(GC_DTYPE_FLOAT, 6, fy);
	gc_tensor *inf[2] = {&tfx, &tfy};
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, inf, 1, &fm), 0);
	CHECK_VALUES(&h.out[0], 1e-6, -0.100000381, 0.399999619, 5, 0.100000381, -0.399999619, 3);
	harness_free(&h);
	/* float16 fmod: bit patterns from numpy */
	uint16_t hx[6] = {0xc44d, 0x4733, 0x4500, 0x444d, 0xc733, 0x4800},
		 hy[6] = {0x4033, 0xc2cd, 0x4800, 0xc033, 0x42cd, 0x4500};
	gc_tensor thx = vec(GC_DTYPE_FLOAT16, 6, hx), thy = vec(GC_DTYPE_FLOAT16, 6, hy);
	gc_tensor *inh[2] = {&thx, &thy};
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, inh, 1, &fm), 0);
	const uint16_t *ho = h.out[0].data;
	CHECK_INT(ho[0], 0xae80);
	CHECK_INT(ho[1], 0x3660);
	CHECK_INT(ho[2], 0x4500);
	CHECK_INT(ho[5], 0x4200);
	harness_free(&h);
	/* float without fmod=1 is an error */
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, inf, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "fmod");
	harness_free(&h);
	/* broadcast int32 arange(30) mod 7 */
	int32_t a30[30], seven = 7;
	for (int i = 0; i < 30; i++)
		a30[i] = i;
	gc_tensor t30 = tensor(GC_DTYPE_INT32, 3, DIMS(3, 2, 5), a30),
		  t7 = vec(GC_DTYPE_INT32, 1, &seven);
	gc_tensor *in30[2] = {&t30, &t7};
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, in30, 0, NULL), 0);
	for (int i = 0; i < 30; i++)
		CHECK_INT(((int32_t *)h.out[0].data)[i], i % 7);
	harness_free(&h);
	/* x mod 0 gives 0 (no trap) */
	int64_t zero = 0;
	gc_tensor tz = scalar(GC_DTYPE_INT64, &zero);
	gc_tensor *inz[2] = {&tx, &tz};
	CHECK_INT(run(&h, gc_prepare_Mod, "Mod", 13, 2, inz, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 0, 0, 0);
	harness_free(&h);
}

static void test_bitshift(void)
{
	harness_run h;
	uint8_t x[4] = {16, 4, 1, 1}, y[4] = {1, 2, 3, 8};
	gc_tensor tx = vec(GC_DTYPE_UINT8, 4, x), ty = vec(GC_DTYPE_UINT8, 4, y);
	gc_tensor *in[2] = {&tx, &ty};
	gc_attr r = attr_s("direction", "RIGHT"), l = attr_s("direction", "LEFT");
	CHECK_INT(run(&h, gc_prepare_BitShift, "BitShift", 11, 2, in, 1, &r), 0);
	CHECK_EXACT(&h.out[0], 8, 1, 0, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_BitShift, "BitShift", 11, 2, in, 1, &l), 0);
	CHECK_EXACT(&h.out[0], 32, 16, 8, 0);
	harness_free(&h);
	uint64_t one = 1, s63 = 63;
	gc_tensor t1 = scalar(GC_DTYPE_UINT64, &one), t63 = scalar(GC_DTYPE_UINT64, &s63);
	gc_tensor *in64[2] = {&t1, &t63};
	CHECK_INT(run(&h, gc_prepare_BitShift, "BitShift", 11, 2, in64, 1, &l), 0);
	CHECK(((uint64_t *)h.out[0].data)[0] == (1ull << 63));
	harness_free(&h);
	gc_attr bad = attr_s("direction", "UP");
	CHECK_INT(run(&h, gc_prepare_BitShift, "BitShift", 11, 2, in, 1, &bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "UP");
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_BitShift, "BitShift", 11, 2, in, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "direction");
	harness_free(&h);
}

/* ---- comparison and logic -------------------------------------------------- */

static void test_compare(void)
{
	harness_run h;
	float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {2, 2, 7};
	gc_tensor ta = tensor(GC_DTYPE_FLOAT, 2, DIMS(2, 3), a), tb = vec(GC_DTYPE_FLOAT, 3, b);
	gc_tensor *in[2] = {&ta, &tb};
	CHECK_INT(run(&h, gc_prepare_Less, "Less", 13, 2, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 2, 2, 3);
	CHECK_EXACT(&h.out[0], 1, 0, 1, 0, 0, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Greater, "Greater", 13, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 1, 1, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_LessOrEqual, "LessOrEqual", 16, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 1, 1, 0, 0, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_GreaterOrEqual, "GreaterOrEqual", 16, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 0, 1, 1, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Equal, "Equal", 13, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 0, 0, 0, 0);
	harness_free(&h);
	/* int64 and bool Equal, NaN never equal */
	int64_t i1[3] = {5, -1, 7}, i2[3] = {5, 1, 7};
	gc_tensor ti1 = vec(GC_DTYPE_INT64, 3, i1), ti2 = vec(GC_DTYPE_INT64, 3, i2);
	gc_tensor *ini[2] = {&ti1, &ti2};
	CHECK_INT(run(&h, gc_prepare_Equal, "Equal", 13, 2, ini, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 0, 1);
	harness_free(&h);
	uint8_t b1[4] = {0, 1, 0, 1}, b2[4] = {0, 0, 1, 2};
	gc_tensor tb1 = vec(GC_DTYPE_BOOL, 4, b1), tb2 = vec(GC_DTYPE_BOOL, 4, b2);
	gc_tensor *inb[2] = {&tb1, &tb2};
	CHECK_INT(run(&h, gc_prepare_Equal, "Equal", 13, 2, inb, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 0, 0, 1);
	harness_free(&h);
	/* float16 operands, bool output */
	uint16_t h1[3] = {0x3c00, 0x7e00, 0xc000},
		 h2[3] = {0x3c00, 0x7e00, 0x4000}; /* 1 NaN -2 ; 1 NaN 2 */
	gc_tensor th1 = vec(GC_DTYPE_FLOAT16, 3, h1), th2 = vec(GC_DTYPE_FLOAT16, 3, h2);
	gc_tensor *inh[2] = {&th1, &th2};
	CHECK_INT(run(&h, gc_prepare_Equal, "Equal", 13, 2, inh, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 3);
	CHECK_EXACT(&h.out[0], 1, 0, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Less, "Less", 13, 2, inh, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 1);
	harness_free(&h);
	/* Less takes no bool */
	CHECK_INT(run(&h, gc_prepare_Less, "Less", 13, 2, inb, 0, NULL), GC_EINVAL);
	harness_free(&h);
}

static void test_logic(void)
{
	harness_run h;
	uint8_t a[4] = {0, 0, 1, 1}, b[2] = {0, 1};
	gc_tensor ta = tensor(GC_DTYPE_BOOL, 2, DIMS(2, 2), a), tb = vec(GC_DTYPE_BOOL, 2, b);
	gc_tensor *in[2] = {&ta, &tb};
	CHECK_INT(run(&h, gc_prepare_And, "And", 7, 2, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 2, 2, 2);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Or, "Or", 7, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Xor, "Xor", 7, 2, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 1, 0);
	harness_free(&h);
	gc_tensor *n1[1] = {&ta};
	CHECK_INT(run(&h, gc_prepare_Not, "Not", 1, 1, n1, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 2, 2, 2);
	CHECK_EXACT(&h.out[0], 1, 1, 0, 0);
	harness_free(&h);
	float f[4] = {0};
	gc_tensor tf = vec(GC_DTYPE_FLOAT, 4, f);
	gc_tensor *bad[2] = {&tf, &tf};
	CHECK_INT(run(&h, gc_prepare_And, "And", 7, 2, bad, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "float32");
	harness_free(&h);
}

/* ---- Where and variadic ---------------------------------------------------- */

static void test_where(void)
{
	harness_run h;
	/* cond [2,1], x [1,3], y scalar */
	uint8_t c[2] = {1, 0};
	float x[3] = {1, 2, 3}, y = 9;
	gc_tensor tc = tensor(GC_DTYPE_BOOL, 2, DIMS(2, 1), c),
		  tx = tensor(GC_DTYPE_FLOAT, 2, DIMS(1, 3), x), ty = scalar(GC_DTYPE_FLOAT, &y);
	gc_tensor *in[3] = {&tc, &tx, &ty};
	CHECK_INT(run(&h, gc_prepare_Where, "Where", 16, 3, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 2, 2, 3);
	CHECK_EXACT(&h.out[0], 1, 2, 3, 9, 9, 9);
	harness_free(&h);
	/* ONNX example, int64: [[1, 8], [3, 4]] */
	uint8_t c2[4] = {1, 0, 1, 1};
	int64_t x2[4] = {1, 2, 3, 4}, y2[4] = {9, 8, 7, 6};
	gc_tensor tc2 = tensor(GC_DTYPE_BOOL, 2, DIMS(2, 2), c2),
		  tx2 = tensor(GC_DTYPE_INT64, 2, DIMS(2, 2), x2),
		  ty2 = tensor(GC_DTYPE_INT64, 2, DIMS(2, 2), y2);
	gc_tensor *in2[3] = {&tc2, &tx2, &ty2};
	CHECK_INT(run(&h, gc_prepare_Where, "Where", 16, 3, in2, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 8, 3, 4);
	harness_free(&h);
	/* scalar condition picks a whole operand; bool data */
	uint8_t zero = 0, bx[2] = {1, 1}, by[2] = {0, 1};
	gc_tensor tz = scalar(GC_DTYPE_BOOL, &zero), tbx = vec(GC_DTYPE_BOOL, 2, bx),
		  tby = vec(GC_DTYPE_BOOL, 2, by);
	gc_tensor *in3[3] = {&tz, &tbx, &tby};
	CHECK_INT(run(&h, gc_prepare_Where, "Where", 16, 3, in3, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 2);
	CHECK_EXACT(&h.out[0], 0, 1);
	harness_free(&h);
	/* condition must be bool; X and Y must agree */
	gc_tensor *bad[3] = {&tx, &tx, &ty};
	CHECK_INT(run(&h, gc_prepare_Where, "Where", 16, 3, bad, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "input 0");
	harness_free(&h);
	gc_tensor *bad2[3] = {&tc, &tx, &tx2};
	CHECK_INT(run(&h, gc_prepare_Where, "Where", 16, 3, bad2, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "int64");
	harness_free(&h);
}

static void test_variadic(void)
{
	harness_run h;
	/* Sum of [2,3] + [3] + [2,1] */
	float a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30}, c[2] = {100, 200};
	gc_tensor ta = tensor(GC_DTYPE_FLOAT, 2, DIMS(2, 3), a), tb = vec(GC_DTYPE_FLOAT, 3, b),
		  tc = tensor(GC_DTYPE_FLOAT, 2, DIMS(2, 1), c);
	gc_tensor *in[3] = {&tb, &tc, &ta}; /* no single input has the output shape */
	CHECK_INT(run(&h, gc_prepare_Sum, "Sum", 13, 3, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 2, 2, 3);
	CHECK_EXACT(&h.out[0], 111, 122, 133, 214, 225, 236);
	harness_free(&h);
	/* ONNX Mean example: [2, 3, 4] */
	float m1[3] = {3, 0, 2}, m2[3] = {1, 3, 4}, m3[3] = {2, 6, 6};
	gc_tensor t1 = vec(GC_DTYPE_FLOAT, 3, m1), t2 = vec(GC_DTYPE_FLOAT, 3, m2),
		  t3 = vec(GC_DTYPE_FLOAT, 3, m3);
	gc_tensor *min3[3] = {&t1, &t2, &t3};
	CHECK_INT(run(&h, gc_prepare_Mean, "Mean", 13, 3, min3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 2, 3, 4);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Max, "Max", 13, 3, min3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 3, 6, 6);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Min, "Min", 13, 3, min3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 0, 2);
	harness_free(&h);
	/* one input: a copy */
	CHECK_INT(run(&h, gc_prepare_Sum, "Sum", 13, 1, min3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 3, 0, 2);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Mean, "Mean", 13, 1, min3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 3, 0, 2);
	harness_free(&h);
	/* NaN propagates like numpy.maximum */
	float n1[2] = {NAN, 1}, n2[2] = {0, NAN};
	gc_tensor tn1 = vec(GC_DTYPE_FLOAT, 2, n1), tn2 = vec(GC_DTYPE_FLOAT, 2, n2);
	gc_tensor *inn[2] = {&tn1, &tn2};
	CHECK_INT(run(&h, gc_prepare_Max, "Max", 13, 2, inn, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], NAN, NAN);
	harness_free(&h);
	/* integer Max/Min with broadcasting; Sum refuses integers */
	int64_t i1[4] = {-5, 3, 8, 0}, i2[2] = {1, 2};
	gc_tensor ti1 = tensor(GC_DTYPE_INT64, 2, DIMS(2, 2), i1), ti2 = vec(GC_DTYPE_INT64, 2, i2);
	gc_tensor *ini[2] = {&ti1, &ti2};
	CHECK_INT(run(&h, gc_prepare_Min, "Min", 13, 2, ini, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -5, 2, 1, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Max, "Max", 13, 2, ini, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 3, 8, 2);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Sum, "Sum", 13, 2, ini, 0, NULL), GC_EINVAL);
	harness_free(&h);
	/* before opset 8 the shapes must be equal */
	gc_tensor *mixed[2] = {&ta, &tb};
	CHECK_INT(run(&h, gc_prepare_Sum, "Sum", 6, 2, mixed, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "opset 8");
	CHECK_CONTAINS(h.err.msg, "2x3");
	harness_free(&h);
	/* float16 Mean: (1 + 2 + 4) / 3 and double Sum */
	uint16_t hh[3] = {0x3c00, 0x4000, 0x4400};
	gc_tensor th[3] = {scalar(GC_DTYPE_FLOAT16, &hh[0]), scalar(GC_DTYPE_FLOAT16, &hh[1]),
			   scalar(GC_DTYPE_FLOAT16, &hh[2])};
	gc_tensor *inh[3] = {&th[0], &th[1], &th[2]};
	CHECK_INT(run(&h, gc_prepare_Mean, "Mean", 13, 3, inh, 0, NULL), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[0], gc_f32_to_f16(7.0f / 3));
	harness_free(&h);
}

static void test_prelu(void)
{
	harness_run h;
	/* x [2,3,2], slope [3,1] */
	float x[12] = {-1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6}, s[3] = {0.1f, 0.2f, 0.5f};
	gc_tensor tx = tensor(GC_DTYPE_FLOAT, 3, DIMS(2, 3, 2), x),
		  ts = tensor(GC_DTYPE_FLOAT, 2, DIMS(3, 1), s);
	gc_tensor *in[2] = {&tx, &ts};
	CHECK_INT(run(&h, gc_prepare_PRelu, "PRelu", 16, 2, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_FLOAT, 3, 2, 3, 2);
	CHECK_VALUES(&h.out[0], 1e-7, -0.1, 1, -0.4, 2, -1.5, 3, -0.4, 4, -1, 5, -3, 6);
	harness_free(&h);
	/* opset 6: a 1-D slope of C values is per channel (axis 1) */
	gc_tensor ts1 = vec(GC_DTYPE_FLOAT, 3, s);
	gc_tensor *in1[2] = {&tx, &ts1};
	CHECK_INT(run(&h, gc_prepare_PRelu, "PRelu", 6, 2, in1, 0, NULL), 0);
	CHECK_VALUES(&h.out[0], 1e-7, -0.1, 1, -0.4, 2, -1.5, 3, -0.4, 4, -1, 5, -3, 6);
	harness_free(&h);
	/* opset 16: the same slope broadcasts along the last axis, which is 2 */
	CHECK_INT(run(&h, gc_prepare_PRelu, "PRelu", 16, 2, in1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "2x3x2");
	harness_free(&h);
	/* slope must not widen X */
	float big[4] = {0};
	gc_tensor tbig = tensor(GC_DTYPE_FLOAT, 4, DIMS(2, 2, 3, 2), big);
	gc_tensor *in2[2] = {&tx, &tbig};
	CHECK_INT(run(&h, gc_prepare_PRelu, "PRelu", 16, 2, in2, 0, NULL), GC_EINVAL);
	harness_free(&h);
	int32_t xi[4] = {-3, 3, -10, 0}, si = 2;
	gc_tensor txi = vec(GC_DTYPE_INT32, 4, xi), tsi = vec(GC_DTYPE_INT32, 1, &si);
	gc_tensor *ini[2] = {&txi, &tsi};
	CHECK_INT(run(&h, gc_prepare_PRelu, "PRelu", 16, 2, ini, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -6, 3, -20, 0);
	harness_free(&h);
}

TEST_MAIN(TEST(test_add_broadcast_basic), TEST(test_broadcast_mismatch), TEST(test_plan_collapse),
	  TEST(test_broadcast_sweep), TEST(test_scalar_and_empty), TEST(test_legacy_broadcast),
	  TEST(test_arith_int), TEST(test_arith_types), TEST(test_pow), TEST(test_pow_small_int), TEST(test_mod),
	  TEST(test_bitshift), TEST(test_compare), TEST(test_logic), TEST(test_where),
	  TEST(test_variadic), TEST(test_prelu))
