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
#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/elementwise-impl.h"

/* ---- helpers -------------------------------------------------------------- */

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})

static gc_tensor tensor(gc_dtype dt, int rank, const int64_t *dims, const void *data)
{
	return harness_tensor(dt, rank, dims, data);
}

static gc_tensor vec(gc_dtype dt, int64_t n, const void *data)
{
	return harness_tensor(dt, 1, &n, data);
}

static gc_tensor scalar(gc_dtype dt, const void *data)
{
	return harness_tensor(dt, 0, NULL, data);
}

static gc_attr attr_f(const char *name, float v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOAT, .n = 1};
	a.v.f = v;
	return a;
}

static gc_attr attr_i(const char *name, int64_t v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INT, .n = 1};
	a.v.i = v;
	return a;
}

static gc_attr attr_s(const char *name, const char *v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_STRING, .n = (int64_t)strlen(v)};
	a.v.s = v;
	return a;
}

/* One-output op. */
static int run(harness_run *h, gc_prepare_fn fn, const char *op, int opset, int n_in,
	       gc_tensor **in, int n_attr, gc_attr *attrs)
{
	return harness_op(h, fn, op, opset, n_in, in, 1, n_attr, attrs);
}

static double at(const gc_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case GC_DTYPE_FLOAT:
		return ((const float *)t->data)[i];
	case GC_DTYPE_DOUBLE:
		return ((const double *)t->data)[i];
	case GC_DTYPE_FLOAT16:
		return gc_f16_to_f32(((const uint16_t *)t->data)[i]);
	case GC_DTYPE_BFLOAT16:
		return gc_bf16_to_f32(((const uint16_t *)t->data)[i]);
	case GC_DTYPE_INT64:
		return (double)((const int64_t *)t->data)[i];
	case GC_DTYPE_UINT64:
		return (double)((const uint64_t *)t->data)[i];
	case GC_DTYPE_INT32:
		return ((const int32_t *)t->data)[i];
	case GC_DTYPE_UINT32:
		return ((const uint32_t *)t->data)[i];
	case GC_DTYPE_INT16:
		return ((const int16_t *)t->data)[i];
	case GC_DTYPE_UINT16:
		return ((const uint16_t *)t->data)[i];
	case GC_DTYPE_INT8:
		return ((const int8_t *)t->data)[i];
	case GC_DTYPE_UINT8:
	case GC_DTYPE_BOOL:
		return ((const uint8_t *)t->data)[i];
	default:
		return NAN;
	}
}

/* Compares t's elements with want; prints the first mismatch. NaN matches
 * NaN. */
static int near(const gc_tensor *t, const double *want, int64_t n, double atol, double rtol)
{
	if (gc_tensor_numel(t) != n) {
		fprintf(stderr, "  %" PRId64 " elements, want %" PRId64 "\n", gc_tensor_numel(t),
			n);
		return 0;
	}
	for (int64_t i = 0; i < n; i++) {
		double g = at(t, i), w = want[i];
		int ok = isnan(w) ? isnan(g) : (g == w || fabs(g - w) <= atol + rtol * fabs(w));
		if (!ok) {
			fprintf(stderr, "  element %" PRId64 ": got %.9g, want %.9g\n", i, g, w);
			return 0;
		}
	}
	return 1;
}

#define CHECK_VALUES(t, tol, ...)                                                                  \
	do {                                                                                       \
		static const double want_[] = {__VA_ARGS__};                                       \
		CHECK(near(t, want_, (int64_t)(sizeof want_ / sizeof want_[0]), tol, tol));        \
	} while (0)
#define CHECK_EXACT(t, ...) CHECK_VALUES(t, 0, __VA_ARGS__)

static int same_dims(const gc_tensor *t, int rank, const int64_t *dims)
{
	if (t->rank != rank)
		return 0;
	for (int i = 0; i < rank; i++)
		if (t->dims[i] != dims[i])
			return 0;
	return 1;
}

#define CHECK_SHAPE(t, dt, rank, ...)                                                              \
	do {                                                                                       \
		CHECK_INT((t)->dtype, dt);                                                         \
		CHECK(same_dims(t, rank, DIMS(__VA_ARGS__)));                                      \
	} while (0)

/* The elementwise prepare functions by name, from the family's own list. */
static gc_prepare_fn prep(const char *name)
{
	static const struct {
		const char *name;
		gc_prepare_fn fn;
	} ops[] = {
#define X_(name, ...) {#name, gc_prepare_##name},
	    GC_OPS_ELEMENTWISE(X_)
#undef X_
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(ops[i].name, name))
			return ops[i].fn;
	return NULL;
}

/* ---- broadcasting ---------------------------------------------------------- */

/* numpy: a = arange(24).reshape(2,3,4) * 0.5 - 3, b = [[1], [-2], [0.25]]; a + b, b - a */
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

/* ---- unary ----------------------------------------------------------------- */

typedef struct {
	const char *op, *attrs;
	float x[10], y[10];
} unary_case;

/* clang-format off */
/* numpy, float32, following the ONNX reference formulas */
static const unary_case unary_cases[] = {
	{ "Sqrt", "", { 0, 0.00999999978, 0.25, 0.5, 1, 2, 3, 10, 100, 0.00100000005 }, { 0, 0.100000001, 0.5, 0.707106769, 1, 1.41421354, 1.73205078, 3.1622777, 10, 0.0316227786 } },
	{ "Exp", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.0820850059, 0.367879421, 0.606530666, 1, 1.34985876, 1.64872122, 2.71828198, 4.48168898, 12.1824932, 54.5981483 } },
	{ "Log", "", { 0.00999999978, 0.25, 0.5, 1, 2, 3, 10, 100, 0.00100000005, 7 }, { -4.60517025, -1.38629436, -0.693147182, 0, 0.693147182, 1.09861231, 2.30258512, 4.60517025, -6.90775537, 1.94591022 } },
	{ "Tanh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.986614287, -0.761594176, -0.462117195, 0, 0.291312635, 0.462117195, 0.761594176, 0.905148208, 0.986614287, 0.999329329 } },
	{ "Sigmoid", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.0758581832, 0.268941402, 0.377540678, 0.5, 0.574442506, 0.622459352, 0.731058598, 0.817574501, 0.924141824, 0.982013762 } },
	{ "Erf", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.999593019, -0.842700779, -0.520499885, 0, 0.328626782, 0.520499885, 0.842700779, 0.966105163, 0.999593019, 1 } },
	{ "Floor", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -3, -1, -1, 0, 0, 0, 1, 1, 2, 4 } },
	{ "Ceil", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -2, -1, -0, 0, 1, 1, 1, 2, 3, 4 } },
	{ "Round", "", { -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49000001, 0.50999999, -0.50999999, 3.70000005 }, { -2, -2, -0, 0, 2, 2, 0, 1, -1, 4 } },
	{ "Sign", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1, -1, -1, 0, 1, 1, 1, 1, 1, 1 } },
	{ "Abs", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 2.5, 1, 0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Neg", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 2.5, 1, 0.5, -0, -0.300000012, -0.5, -1, -1.5, -2.5, -4 } },
	{ "Reciprocal", "", { 1, 1.00999999, 1.5, 2, 3, 5, 10, 20, 100, 1.25 }, { 1, 0.990099013, 0.666666687, 0.5, 0.333333343, 0.200000003, 0.100000001, 0.0500000007, 0.00999999978, 0.800000012 } },
	{ "Sin", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.598472178, -0.841471016, -0.47942555, 0, 0.295520216, 0.47942555, 0.841471016, 0.997494996, 0.598472178, -0.756802499 } },
	{ "Cos", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.801143587, 0.540302277, 0.87758255, 1, 0.955336511, 0.87758255, 0.540302277, 0.070737198, -0.801143587, -0.653643608 } },
	{ "Tan", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.747022271, -1.55740774, -0.546302497, 0, 0.309336275, 0.546302497, 1.55740774, 14.1014204, -0.747022271, 1.15782118 } },
	{ "Asin", "", { -0.99000001, -0.75, -0.5, -0.100000001, 0, 0.100000001, 0.300000012, 0.5, 0.75, 0.99000001 }, { -1.42925692, -0.848062158, -0.52359879, -0.100167423, 0, 0.100167423, 0.304692656, 0.52359879, 0.848062158, 1.42925692 } },
	{ "Acos", "", { -0.99000001, -0.75, -0.5, -0.100000001, 0, 0.100000001, 0.300000012, 0.5, 0.75, 0.99000001 }, { 3.00005341, 2.41885853, 2.09439516, 1.67096376, 1.57079637, 1.47062898, 1.26610374, 1.04719758, 0.722734213, 0.14153941 } },
	{ "Atan", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.19028997, -0.785398185, -0.463647604, 0, 0.291456819, 0.463647604, 0.785398185, 0.982793748, 1.19028997, 1.3258177 } },
	{ "Sinh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -6.05020428, -1.17520118, -0.521095276, 0, 0.304520309, 0.521095276, 1.17520118, 2.12927938, 6.05020428, 27.289917 } },
	{ "Cosh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 6.13228989, 1.54308069, 1.12762606, 1, 1.04533839, 1.12762606, 1.54308069, 2.3524096, 6.13228989, 27.3082352 } },
	{ "Asinh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.6472311, -0.881373584, -0.481211811, 0, 0.295673072, 0.481211811, 0.881373584, 1.19476318, 1.6472311, 2.0947125 } },
	{ "Acosh", "", { 1, 1.00999999, 1.5, 2, 3, 5, 10, 20, 100, 1.25 }, { 0, 0.141303703, 0.962423623, 1.31695795, 1.76274717, 2.29243159, 2.99322295, 3.68825388, 5.29829216, 0.693147182 } },
	{ "Atanh", "", { -0.99000001, -0.75, -0.5, -0.100000001, 0, 0.100000001, 0.300000012, 0.5, 0.75, 0.99000001 }, { -2.64665294, -0.972955048, -0.549306154, -0.100335352, 0, 0.100335352, 0.309519619, 0.549306154, 0.972955048, 2.64665294 } },
	{ "Relu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0, 0, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "LeakyRelu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.0249999985, -0.00999999978, -0.00499999989, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "LeakyRelu", "alpha=0.2", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.5, -0.200000003, -0.100000001, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "HardSigmoid", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0.300000012, 0.400000006, 0.5, 0.560000002, 0.600000024, 0.699999988, 0.800000012, 1, 1 } },
	{ "HardSigmoid", "alpha=0.5 beta=0.6", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0.100000024, 0.350000024, 0.600000024, 0.75, 0.850000024, 1, 1, 1, 1 } },
	{ "HardSwish", "", { -4, -3, -2.5, -1, 0, 0.300000012, 1, 2.9000001, 3, 4 }, { -0, -0, -0.208333284, -0.333333313, 0, 0.165000007, 0.666666687, 2.85166669, 3, 4 } },
	{ "Elu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.917914987, -0.632120609, -0.393469334, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Elu", "alpha=2", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.83582997, -1.26424122, -0.786938667, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Selu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.61378574, -1.11133075, -0.691758215, 0, 0.315210313, 0.525350511, 1.05070102, 1.57605147, 2.62675261, 4.20280409 } },
	{ "Selu", "alpha=2 gamma=3", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -5.50749016, -3.79272366, -2.360816, 0, 0.900000036, 1.5, 3, 4.5, 7.5, 12 } },
	{ "Celu", "alpha=2", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.42699051, -0.786938667, -0.442398548, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Softplus", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.0788897499, 0.313261658, 0.474076986, 0.693147182, 0.854355216, 0.974076986, 1.31326175, 1.70141327, 2.57888961, 4.01814985 } },
	{ "Softsign", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.714285731, -0.5, -0.333333343, 0, 0.230769247, 0.333333343, 0.5, 0.600000024, 0.714285731, 0.800000012 } },
	{ "ThresholdedRelu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0, 0, 0, 0, 0, 0, 1.5, 2.5, 4 } },
	{ "ThresholdedRelu", "alpha=0.4", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0, 0, 0, 0, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Shrink", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -2.5, -1, 0, 0, 0, 0, 1, 1.5, 2.5, 4 } },
	{ "Shrink", "lambd=1.5 bias=0.5", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -2, 0, 0, 0, 0, 0, 0, 0, 2, 3.5 } },
	{ "Mish", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.196816206, -0.30340147, -0.220743775, 0, 0.208001375, 0.375245214, 0.865098417, 1.40337825, 2.47139239, 3.99741292 } },
};
/* clang-format on */

/* attrs: "name=value ..." (floats) */
static int parse_attrs(const char *s, gc_attr *attrs, char names[][16])
{
	int n = 0;
	while (*s) {
		float v;
		int used = 0;
		if (sscanf(s, " %15[a-z]=%f%n", names[n], &v, &used) != 2)
			break;
		attrs[n] = attr_f(names[n], v);
		n++;
		s += used;
	}
	return n;
}

/* Which unary ops ONNX restricts: no bfloat16 / only float32. */
static int takes_bf16(const char *op)
{
	static const char *const ops[] = {"Sqrt", "Exp",	"Log",	"Tanh",	     "Sigmoid",
					  "Erf",  "Floor",	"Ceil", "Sign",	     "Abs",
					  "Neg",  "Reciprocal", "Relu", "LeakyRelu", "Mish"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

static void test_unary_table(void)
{
	static const gc_dtype types[4] = {GC_DTYPE_FLOAT, GC_DTYPE_DOUBLE, GC_DTYPE_FLOAT16,
					  GC_DTYPE_BFLOAT16};
	static const double tol[4] = {1e-5, 1e-6, 1e-2, 2e-2};
	for (size_t c = 0; c < sizeof unary_cases / sizeof unary_cases[0]; c++) {
		const unary_case *uc = &unary_cases[c];
		gc_prepare_fn fn = prep(uc->op);
		CHECK(fn != NULL);
		gc_attr attrs[4];
		char names[4][16];
		int na = parse_attrs(uc->attrs, attrs, names);
		for (int t = 0; t < 4; t++) {
			gc_dtype dt = types[t];
			union {
				float f[10];
				double d[10];
				uint16_t h[10];
			} x;
			for (int i = 0; i < 10; i++) {
				if (dt == GC_DTYPE_FLOAT)
					x.f[i] = uc->x[i];
				else if (dt == GC_DTYPE_DOUBLE)
					x.d[i] = uc->x[i];
				else if (dt == GC_DTYPE_FLOAT16)
					x.h[i] = gc_f32_to_f16(uc->x[i]);
				else
					x.h[i] = gc_f32_to_bf16(uc->x[i]);
			}
			gc_tensor tx = tensor(dt, 2, DIMS(2, 5), &x);
			gc_tensor *in[1] = {&tx};
			harness_run h;
			int rc = run(&h, fn, uc->op, 17, 1, in, na, attrs);
			int allowed = !strcmp(uc->op, "Celu")	? dt == GC_DTYPE_FLOAT
				      : dt == GC_DTYPE_BFLOAT16 ? takes_bf16(uc->op)
								: 1;
			if (!allowed) {
				if (rc != GC_EINVAL)
					fprintf(stderr, "  %s on %s: rc %d\n", uc->op,
						gc_dtype_name(dt), rc);
				CHECK_INT(rc, GC_EINVAL);
				CHECK_CONTAINS(h.err.msg, gc_dtype_name(dt));
				harness_free(&h);
				continue;
			}
			if (rc)
				fprintf(stderr, "  %s on %s: %s\n", uc->op, gc_dtype_name(dt),
					h.err.msg);
			CHECK_INT(rc, 0);
			CHECK_SHAPE(&h.out[0], dt, 2, 2, 5);
			double want[10];
			for (int i = 0; i < 10; i++)
				want[i] = uc->y[i];
			int ok = near(&h.out[0], want, 10, t < 2 ? 1e-6 : tol[t], tol[t]);
			if (!ok)
				fprintf(stderr, "  %s %s on %s\n", uc->op, uc->attrs,
					gc_dtype_name(dt));
			harness_free(&h);
			CHECK(ok);
		}
	}
}

static void test_unary_int(void)
{
	harness_run h;
	int64_t a[4] = {INT64_MIN + 1, -5, 0, 7};
	gc_tensor ta = vec(GC_DTYPE_INT64, 4, a);
	gc_tensor *in[1] = {&ta};
	CHECK_INT(run(&h, gc_prepare_Abs, "Abs", 13, 1, in, 0, NULL), 0);
	CHECK(((int64_t *)h.out[0].data)[0] == INT64_MAX);
	CHECK_INT(((int64_t *)h.out[0].data)[1], 5);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Sign, "Sign", 13, 1, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, -1, 0, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Neg, "Neg", 13, 1, in, 0, NULL), 0);
	CHECK(((int64_t *)h.out[0].data)[0] == INT64_MAX);
	CHECK_INT(((int64_t *)h.out[0].data)[3], -7);
	harness_free(&h);
	int8_t r[4] = {-128, -1, 0, 100};
	gc_tensor tr = vec(GC_DTYPE_INT8, 4, r);
	gc_tensor *inr[1] = {&tr};
	CHECK_INT(run(&h, gc_prepare_Relu, "Relu", 14, 1, inr, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 100);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Neg, "Neg", 13, 1, inr, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -128, 1, 0, -100);
	harness_free(&h);
	uint8_t u[3] = {0, 3, 255};
	gc_tensor tu = vec(GC_DTYPE_UINT8, 3, u);
	gc_tensor *inu[1] = {&tu};
	CHECK_INT(run(&h, gc_prepare_Sign, "Sign", 13, 1, inu, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Abs, "Abs", 13, 1, inu, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 3, 255);
	harness_free(&h);
	/* Neg and Relu take no unsigned types */
	CHECK_INT(run(&h, gc_prepare_Neg, "Neg", 13, 1, inu, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "uint8");
	harness_free(&h);
	/* integer Shrink computes in floating point, then truncates */
	int32_t s[5] = {-3, -1, 0, 1, 3};
	gc_tensor ts = vec(GC_DTYPE_INT32, 5, s);
	gc_tensor *ins[1] = {&ts};
	gc_attr sa[2] = {attr_f("lambd", 1.5f), attr_f("bias", 1)};
	CHECK_INT(run(&h, gc_prepare_Shrink, "Shrink", 9, 1, ins, 2, sa), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 0, 0, 2);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Erf, "Erf", 13, 1, ins, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 0, 0);
	harness_free(&h);
}

static void test_isnan_isinf(void)
{
	harness_run h;
	/* ONNX isinf example: [-1.2, nan, inf, 2.8, -inf, inf] */
	float x[6] = {-1.2f, NAN, INFINITY, 2.8f, -INFINITY, INFINITY};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 6, x);
	gc_tensor *in[1] = {&tx};
	CHECK_INT(run(&h, gc_prepare_IsNaN, "IsNaN", 13, 1, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 6);
	CHECK_EXACT(&h.out[0], 0, 1, 0, 0, 0, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_IsInf, "IsInf", 10, 1, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 1, 0, 1, 1);
	harness_free(&h);
	gc_attr neg = attr_i("detect_positive", 0);
	CHECK_INT(run(&h, gc_prepare_IsInf, "IsInf", 10, 1, in, 1, &neg), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 0, 1, 0);
	harness_free(&h);
	gc_attr pos = attr_i("detect_negative", 0);
	CHECK_INT(run(&h, gc_prepare_IsInf, "IsInf", 10, 1, in, 1, &pos), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 1, 0, 0, 1);
	harness_free(&h);
	/* float16 IsNaN through the adapter: bool output */
	uint16_t hx[3] = {0x7e00, 0x7c00, 0x3c00};
	gc_tensor thx = vec(GC_DTYPE_FLOAT16, 3, hx);
	gc_tensor *inh[1] = {&thx};
	CHECK_INT(run(&h, gc_prepare_IsNaN, "IsNaN", 13, 1, inh, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 3);
	CHECK_EXACT(&h.out[0], 1, 0, 0);
	harness_free(&h);
}

static void test_attr_errors(void)
{
	harness_run h;
	float x[2] = {1, 2};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 2, x);
	gc_tensor *in[1] = {&tx};
	gc_attr bad = attr_i("alpha", 2);
	CHECK_INT(run(&h, gc_prepare_LeakyRelu, "LeakyRelu", 16, 1, in, 1, &bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'alpha'");
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Elu, "Elu", 6, 1, in, 1, &bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'alpha'");
	harness_free(&h);
	/* string input is unsupported rather than invalid */
	const char *strs[2] = {"a", "b"};
	gc_tensor ts = vec(GC_DTYPE_STRING, 2, strs);
	gc_tensor *ins[1] = {&ts};
	CHECK_INT(run(&h, gc_prepare_Exp, "Exp", 13, 1, ins, 0, NULL), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "string");
	harness_free(&h);
}

/*
 * The float32 kernels of Exp, Sigmoid, Tanh and Erf use their own
 * vectorisable approximations: sweep them against double-precision libm
 * (the reference here), special values included. Bounds: exp and sigmoid
 * 2.5e-7 relative (2 ulp), tanh 2.5e-7 relative, erf 5e-7 absolute;
 * results below the normal float range may flush to 0 (as float32 sigmoid
 * does in NumPy, where exp(-x) overflows first).
 */
static void test_transcendental_sweep(void)
{
	enum { N = 4000 };
	static float x[N + 8];
	for (int i = 0; i < N; i++)
		x[i] = -110.0f + 220.0f * (float)i / N + (float)(i % 7) * 1e-3f;
	const float special[8] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -88.5f, 88.7f};
	memcpy(x + N, special, sizeof special);
	gc_tensor tx = tensor(GC_DTYPE_FLOAT, 1, DIMS(N + 8), x);
	gc_tensor *in[1] = {&tx};
	static const char *const ops[4] = {"Exp", "Sigmoid", "Tanh", "Erf"};
	for (int o = 0; o < 4; o++) {
		harness_run h;
		CHECK_INT(run(&h, prep(ops[o]), ops[o], 13, 1, in, 0, NULL), 0);
		const float *y = h.out[0].data;
		for (int i = 0; i < N + 8; i++) {
			double v = x[i], want;
			switch (o) {
			case 0:
				want = exp(v);
				break;
			case 1:
				want = 1 / (1 + exp(-v));
				break;
			case 2:
				want = tanh(v);
				break;
			default:
				want = erf(v);
				break;
			}
			double err = fabs(y[i] - want);
			double bound = o == 3 ? 5e-7 : 2.5e-7 * fabs(want) + 1e-45;
			int ok = isnan(want) ? isnan(y[i])
				 : isinf((float)want)
				     ? y[i] == (float)want
				     : err <= bound || (fabs(want) < 1.2e-38 && err < 1.2e-38);
			if (!ok)
				fprintf(stderr, "  %s(%.9g) = %.9g, want %.9g\n", ops[o], v, y[i],
					want);
			CHECK(ok);
		}
		harness_free(&h);
	}
}

/* Long float16/bfloat16 runs cross the adapter's 256-element chunks. */
static void test_half_long(void)
{
	enum { N = 1000 };
	static uint16_t a[N], b16[N];
	for (int i = 0; i < N; i++) {
		a[i] = gc_f32_to_f16((float)(i % 97) * 0.25f - 12);
		b16[i] = gc_f32_to_bf16((float)(i % 89) * 0.5f - 20);
	}
	gc_tensor ta = tensor(GC_DTYPE_FLOAT16, 2, DIMS(2, N / 2), a);
	gc_tensor *in[1] = {&ta};
	harness_run h;
	CHECK_INT(run(&h, gc_prepare_Relu, "Relu", 14, 1, in, 0, NULL), 0);
	for (int i = 0; i < N; i++) {
		float v = gc_f16_to_f32(a[i]);
		CHECK_INT(((uint16_t *)h.out[0].data)[i], gc_f32_to_f16(v < 0 ? 0 : v));
	}
	harness_free(&h);
	uint16_t three = gc_f32_to_bf16(3);
	gc_tensor tb = vec(GC_DTYPE_BFLOAT16, N, b16), t3 = scalar(GC_DTYPE_BFLOAT16, &three);
	gc_tensor *in2[2] = {&t3, &tb};
	CHECK_INT(run(&h, gc_prepare_Mul, "Mul", 14, 2, in2, 0, NULL), 0);
	for (int i = 0; i < N; i++)
		CHECK_INT(((uint16_t *)h.out[0].data)[i],
			  gc_f32_to_bf16(3 * gc_bf16_to_f32(b16[i])));
	harness_free(&h);
}

/* ---- Clip ----------------------------------------------------------------- */

static void test_clip(void)
{
	harness_run h;
	float x[4] = {-2, 0, 2, 5};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 4, x);
	gc_tensor *in1[1] = {&tx};
	/* opset 6: attributes */
	gc_attr mm[2] = {attr_f("min", -1), attr_f("max", 1)};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 1, in1, 2, mm), 0);
	CHECK_EXACT(&h.out[0], -1, 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 1, in1, 1, &mm[1]), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 1, 1);
	harness_free(&h);
	/* opset 6 with a min input is refused */
	float lo = -1, hi = 1;
	gc_tensor tlo = scalar(GC_DTYPE_FLOAT, &lo), thi = scalar(GC_DTYPE_FLOAT, &hi);
	gc_tensor *in3[3] = {&tx, &tlo, &thi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 3, in3, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "opset 11");
	harness_free(&h);
	/* opset 13: inputs; the attributes are ignored */
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, in3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, 0, 1, 1);
	harness_free(&h);
	gc_tensor *in_min[2] = {&tx, &tlo};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, in_min, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, 0, 2, 5);
	harness_free(&h);
	gc_tensor *in_max[3] = {&tx, NULL, &thi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, in_max, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 1, in1, 2, mm), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 2, 5);
	harness_free(&h);
	/* min > max: everything becomes max */
	gc_tensor *swapped[3] = {&tx, &thi, &tlo};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, swapped, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, -1, -1, -1);
	harness_free(&h);
	/* the bounds are read when the node runs, not when it is prepared */
	float lo2 = 1;
	tlo.data = &lo2;
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, in_min, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 1, 2, 5);
	harness_free(&h);
	/* integer Clip (int64, int8 with one bound) */
	int64_t xi[4] = {-200, 0, 50, INT64_MAX}, li = -100, hi64 = 100;
	gc_tensor txi = vec(GC_DTYPE_INT64, 4, xi), tli = scalar(GC_DTYPE_INT64, &li),
		  thi64 = scalar(GC_DTYPE_INT64, &hi64);
	gc_tensor *ini[3] = {&txi, &tli, &thi64};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, ini, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -100, 0, 50, 100);
	harness_free(&h);
	int8_t x8[3] = {-128, 5, 127}, zero8 = 0;
	gc_tensor tx8 = vec(GC_DTYPE_INT8, 3, x8), tz8 = scalar(GC_DTYPE_INT8, &zero8);
	gc_tensor *in8[2] = {&tx8, &tz8};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, in8, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 5, 127);
	harness_free(&h);
	/* float16 */
	uint16_t hx[3] = {0xc000, 0x3800, 0x4400}, hlo = 0x0000, hhi = 0x3c00; /* -2 0.5 4; 0 1 */
	gc_tensor thx = vec(GC_DTYPE_FLOAT16, 3, hx), thlo = scalar(GC_DTYPE_FLOAT16, &hlo),
		  thhi = scalar(GC_DTYPE_FLOAT16, &hhi);
	gc_tensor *inh[3] = {&thx, &thlo, &thhi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, inh, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0.5, 1);
	harness_free(&h);
	/* errors: bound of another type, bound not a scalar */
	gc_tensor *mixed[2] = {&tx, &tli};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, mixed, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "min");
	harness_free(&h);
	gc_tensor t2 = vec(GC_DTYPE_FLOAT, 2, x);
	gc_tensor *vec[2] = {&tx, &t2};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, vec, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "scalar");
	harness_free(&h);
	/* integer Clip did not exist before opset 12's types: opset 6 refuses it */
	gc_tensor *in6[1] = {&txi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 1, in6, 0, NULL), GC_EINVAL);
	harness_free(&h);
}

/* ---- Cast ----------------------------------------------------------------- */

static void test_cast(void)
{
	harness_run h;
	/* float -> int64 truncates toward zero; out of range saturates, NaN -> 0 */
	float x[7] = {1.9f, -1.9f, 0.5f, -0.5f, 1e10f, 1e20f, NAN};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 7, x);
	gc_tensor *in[1] = {&tx};
	gc_attr to64 = attr_i("to", GC_DTYPE_INT64);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &to64), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_INT64, 1, 7);
	const int64_t *o = h.out[0].data;
	CHECK_INT(o[0], 1);
	CHECK_INT(o[1], -1);
	CHECK_INT(o[2], 0);
	CHECK_INT(o[3], 0);
	CHECK_INT(o[4], 10000000000LL);
	CHECK(o[5] == INT64_MAX);
	CHECK_INT(o[6], 0);
	harness_free(&h);
	/* float -> float16 -> float (numpy bit patterns and values) */
	float f[8] = {0.1f, 1.0f / 3, 65504, 70000, 1e-8f, 6e-8f, -2.5f, 0.000123f};
	gc_tensor tf = vec(GC_DTYPE_FLOAT, 8, f);
	gc_tensor *inf[1] = {&tf};
	gc_attr to16 = attr_i("to", GC_DTYPE_FLOAT16);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inf, 1, &to16), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_FLOAT16);
	static const uint16_t want16[8] = {0x2e66, 0x3555, 0x7bff, 0x7c00,
					   0x0000, 0x0001, 0xc100, 0x0808};
	for (int i = 0; i < 8; i++)
		CHECK_INT(((uint16_t *)h.out[0].data)[i], want16[i]);
	gc_tensor half = h.out[0];
	gc_tensor *inh[1] = {&half};
	gc_attr tof = attr_i("to", GC_DTYPE_FLOAT);
	harness_run h2;
	CHECK_INT(run(&h2, gc_prepare_Cast, "Cast", 13, 1, inh, 1, &tof), 0);
	CHECK_EXACT(&h2.out[0], 0.0999755859375, 0.333251953125, 65504.0, INFINITY, 0.0,
		    5.960464477539063e-08, -2.5, 0.00012302398681640625);
	harness_free(&h2);
	harness_free(&h);
	/* float -> bfloat16 truncates (ONNX 1.12 test_cast_FLOAT_to_BFLOAT16) */
	float bf[4] = {0.47892547f, 0.48033667f, NAN, -INFINITY};
	gc_tensor tbf = vec(GC_DTYPE_FLOAT, 4, bf);
	gc_tensor *inbf[1] = {&tbf};
	gc_attr tob = attr_i("to", GC_DTYPE_BFLOAT16);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inbf, 1, &tob), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[0], 16117);
	CHECK_INT(((uint16_t *)h.out[0].data)[1], 16117);
	CHECK(isnan(gc_bf16_to_f32(((uint16_t *)h.out[0].data)[2])));
	CHECK_INT(((uint16_t *)h.out[0].data)[3], 0xff80);
	harness_free(&h);
	/* to and from bool */
	float fb[4] = {0, -0.0f, 2, NAN};
	gc_tensor tfb = vec(GC_DTYPE_FLOAT, 4, fb);
	gc_tensor *infb[1] = {&tfb};
	gc_attr tobool = attr_i("to", GC_DTYPE_BOOL);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, infb, 1, &tobool), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 4);
	CHECK_EXACT(&h.out[0], 0, 0, 1, 1);
	harness_free(&h);
	uint8_t bools[3] = {0, 1, 7};
	gc_tensor tbools = vec(GC_DTYPE_BOOL, 3, bools);
	gc_tensor *inb[1] = {&tbools};
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inb, 1, &tof), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inb, 1, &to16), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[2], 0x3c00);
	harness_free(&h);
	/* integer narrowing wraps like numpy astype; float -> uint8 via int64 */
	int64_t wide[4] = {300, -129, 127, -128};
	gc_tensor twide = vec(GC_DTYPE_INT64, 4, wide);
	gc_tensor *inw[1] = {&twide};
	gc_attr to8 = attr_i("to", GC_DTYPE_INT8);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inw, 1, &to8), 0);
	CHECK_EXACT(&h.out[0], 44, 127, 127, -128);
	harness_free(&h);
	float fu[4] = {-1, 255.9f, 256, 3.7f};
	gc_tensor tfu = vec(GC_DTYPE_FLOAT, 4, fu);
	gc_tensor *infu[1] = {&tfu};
	gc_attr tou8 = attr_i("to", GC_DTYPE_UINT8);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, infu, 1, &tou8), 0);
	CHECK_EXACT(&h.out[0], 255, 255, 0, 3);
	harness_free(&h);
	/* uint8 -> float16, double -> float */
	uint8_t u8[3] = {0, 255, 3};
	gc_tensor tu8 = vec(GC_DTYPE_UINT8, 3, u8);
	gc_tensor *inu8[1] = {&tu8};
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inu8, 1, &to16), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[1], 0x5bf8);
	CHECK_INT(((uint16_t *)h.out[0].data)[2], 0x4200);
	harness_free(&h);
	double d[3] = {0.1, 1e40, 1.0 / 3};
	gc_tensor td = vec(GC_DTYPE_DOUBLE, 3, d);
	gc_tensor *ind[1] = {&td};
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, ind, 1, &tof), 0);
	CHECK(((float *)h.out[0].data)[0] == 0.1f);
	CHECK(isinf(((float *)h.out[0].data)[1]));
	CHECK(((float *)h.out[0].data)[2] == 1.0f / 3);
	harness_free(&h);
	/* same type: a copy */
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, ind, 1,
		      &(gc_attr){.name = "to", .type = GC_ATTR_INT, .v.i = GC_DTYPE_DOUBLE}),
		  0);
	CHECK(((double *)h.out[0].data)[0] == 0.1);
	harness_free(&h);
	/* opset 1 names the type */
	gc_attr tos = attr_s("to", "INT32");
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 1, 1, in, 1, &tos), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_INT32);
	CHECK_INT(((int32_t *)h.out[0].data)[1], -1);
	harness_free(&h);
	/* CastLike takes the type of its second input */
	gc_tensor *like[2] = {&tf, &tu8};
	CHECK_INT(run(&h, gc_prepare_CastLike, "CastLike", 15, 2, like, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_UINT8, 1, 8);
	CHECK_INT(((uint8_t *)h.out[0].data)[2], 224); /* 65504 mod 256 */
	harness_free(&h);
	/* errors */
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'to'");
	harness_free(&h);
	gc_attr tostr = attr_i("to", GC_DTYPE_STRING);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &tostr), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "string");
	harness_free(&h);
	gc_attr tobad = attr_i("to", 99);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &tobad), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "99");
	harness_free(&h);
	gc_attr tobadname = attr_s("to", "FLOAT7");
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 1, 1, in, 1, &tobadname), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "FLOAT7");
	harness_free(&h);
}

/* Every cast pair against a double round trip, on values every type holds. */
static void test_cast_matrix(void)
{
	static const gc_dtype types[] = {
	    GC_DTYPE_BOOL,   GC_DTYPE_INT8,    GC_DTYPE_INT16,	  GC_DTYPE_INT32,  GC_DTYPE_INT64,
	    GC_DTYPE_UINT8,  GC_DTYPE_UINT16,  GC_DTYPE_UINT32,	  GC_DTYPE_UINT64, GC_DTYPE_FLOAT,
	    GC_DTYPE_DOUBLE, GC_DTYPE_FLOAT16, GC_DTYPE_BFLOAT16,
	};
	const int nt = (int)(sizeof types / sizeof types[0]);
	static const double vals[4] = {0, 1, 2, 100};
	for (int a = 0; a < nt; a++) {
		uint8_t buf[4 * 8];
		gc_dtype from = types[a];
		for (int i = 0; i < 4; i++) {
			double v = from == GC_DTYPE_BOOL ? (vals[i] != 0) : vals[i];
			void *p = buf + i * gc_dtype_size(from);
			/* clang-format off */
#define SET_(DT, T, e) case GC_DTYPE_##DT: *(T *)p = (e); break;
			switch (from) {
			SET_(BOOL, uint8_t, (uint8_t)v) SET_(INT8, int8_t, (int8_t)v)
			SET_(INT16, int16_t, (int16_t)v) SET_(INT32, int32_t, (int32_t)v)
			SET_(INT64, int64_t, (int64_t)v) SET_(UINT8, uint8_t, (uint8_t)v)
			SET_(UINT16, uint16_t, (uint16_t)v) SET_(UINT32, uint32_t, (uint32_t)v)
			SET_(UINT64, uint64_t, (uint64_t)v) SET_(FLOAT, float, (float)v)
			SET_(DOUBLE, double, v) SET_(FLOAT16, uint16_t, gc_f32_to_f16((float)v))
			default: *(uint16_t *)p = gc_f32_to_bf16((float)v); break;
#undef SET_
				/* clang-format on */
			}
		}
		gc_tensor tx = tensor(from, 1, DIMS(4), buf);
		gc_tensor *in[1] = {&tx};
		for (int b = 0; b < nt; b++) {
			gc_attr to = attr_i("to", types[b]);
			harness_run h;
			CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &to), 0);
			CHECK_INT(h.out[0].dtype, types[b]);
			for (int i = 0; i < 4; i++) {
				double src = at(&tx, i);
				double want = types[b] == GC_DTYPE_BOOL ? (src != 0) : src;
				double got = at(&h.out[0], i);
				if (got != want)
					fprintf(stderr, "  %s -> %s [%d]: %g, want %g\n",
						gc_dtype_name(from), gc_dtype_name(types[b]), i,
						got, want);
				CHECK(got == want);
			}
			harness_free(&h);
		}
	}
}

TEST_MAIN(TEST(test_add_broadcast_basic), TEST(test_broadcast_mismatch), TEST(test_plan_collapse),
	  TEST(test_broadcast_sweep), TEST(test_scalar_and_empty), TEST(test_legacy_broadcast),
	  TEST(test_arith_int), TEST(test_arith_types), TEST(test_pow), TEST(test_mod),
	  TEST(test_bitshift), TEST(test_compare), TEST(test_logic), TEST(test_where),
	  TEST(test_variadic), TEST(test_prelu), TEST(test_unary_table), TEST(test_unary_int),
	  TEST(test_isnan_isinf), TEST(test_attr_errors), TEST(test_transcendental_sweep),
	  TEST(test_half_long), TEST(test_clip), TEST(test_cast), TEST(test_cast_matrix))
