/*
 * Unit tests for the shape kernels (shape.c, shape-move.c, shape-index.c).
 * Expected values were computed offline with NumPy 1.24 (np.transpose,
 * np.pad, np.tile, np.take, np.triu, ... on the same inputs) and pasted as
 * literals; data-movement results are exact, so they compare exactly.
 * Large transposes are checked element by element against the index formula.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/kutil.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* ---- NumPy-computed expectations ---------------------------------------- */
/* tr3: shape [4, 2, 3] */
static const int64_t exp_tr3[24] = {0, 4, 8,  12, 16, 20, 1, 5, 9,  13, 17, 21,
				    2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23};
/* sl_a: shape [2, 3] */
static const float exp_sl_a[6] = {2.25f, -1.75f, 0.0f, 2.0f, -2.0f, -0.25f};
/* sl_b: shape [3, 2] */
static const float exp_sl_b[6] = {0.25f, 2.0f, -2.5f, -0.75f, 0.5f, 2.25f};
/* sl_c: shape [4, 3] */
static const float exp_sl_c[12] = {2.5f,  0.75f, -1.0f,	 -0.25f, -2.0f,	 2.0f,
				   2.75f, 1.0f,	 -0.75f, 0.0f,	 -1.75f, 2.25f};
/* pad_reflect: shape [6, 9] */
static const float exp_pad_reflect[54] = {
    7.0f,  6.0f, 5.0f,	6.0f,  7.0f,  8.0f,  7.0f,  6.0f, 5.0f, 3.0f, 2.0f, 1.0f, 2.0f, 3.0f,
    4.0f,  3.0f, 2.0f,	1.0f,  7.0f,  6.0f,  5.0f,  6.0f, 7.0f, 8.0f, 7.0f, 6.0f, 5.0f, 11.0f,
    10.0f, 9.0f, 10.0f, 11.0f, 12.0f, 11.0f, 10.0f, 9.0f, 7.0f, 6.0f, 5.0f, 6.0f, 7.0f, 8.0f,
    7.0f,  6.0f, 5.0f,	3.0f,  2.0f,  1.0f,  2.0f,  3.0f, 4.0f, 3.0f, 2.0f, 1.0f};
/* pad_edge: shape [6, 9] */
static const float exp_pad_edge[54] = {1.0f, 1.0f, 1.0f, 2.0f,	3.0f,  4.0f,  4.0f,  4.0f,  4.0f,
				       1.0f, 1.0f, 1.0f, 2.0f,	3.0f,  4.0f,  4.0f,  4.0f,  4.0f,
				       5.0f, 5.0f, 5.0f, 6.0f,	7.0f,  8.0f,  8.0f,  8.0f,  8.0f,
				       9.0f, 9.0f, 9.0f, 10.0f, 11.0f, 12.0f, 12.0f, 12.0f, 12.0f,
				       9.0f, 9.0f, 9.0f, 10.0f, 11.0f, 12.0f, 12.0f, 12.0f, 12.0f,
				       9.0f, 9.0f, 9.0f, 10.0f, 11.0f, 12.0f, 12.0f, 12.0f, 12.0f};
/* pad_wrap: shape [6, 9] */
static const float exp_pad_wrap[54] = {
    11.0f, 12.0f, 9.0f,	 10.0f, 11.0f, 12.0f, 9.0f,  10.0f, 11.0f, 3.0f, 4.0f, 1.0f, 2.0f, 3.0f,
    4.0f,  1.0f,  2.0f,	 3.0f,	7.0f,  8.0f,  5.0f,  6.0f,  7.0f,  8.0f, 5.0f, 6.0f, 7.0f, 11.0f,
    12.0f, 9.0f,  10.0f, 11.0f, 12.0f, 9.0f,  10.0f, 11.0f, 3.0f,  4.0f, 1.0f, 2.0f, 3.0f, 4.0f,
    1.0f,  2.0f,  3.0f,	 7.0f,	8.0f,  5.0f,  6.0f,  7.0f,  8.0f,  5.0f, 6.0f, 7.0f};
/* pad_const: shape [6, 9] */
static const float exp_pad_const[54] = {
    -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f,
    1.0f,  2.0f,  3.0f,	 4.0f,	-1.5f, -1.5f, -1.5f, -1.5f, -1.5f, 5.0f,  6.0f,
    7.0f,  8.0f,  -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, 9.0f,  10.0f, 11.0f, 12.0f,
    -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f,
    -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f, -1.5f};
/* pad_reflect_big: shape [3, 15] */
static const float exp_pad_reflect_big[45] = {
    1.0f, 2.0f,	 3.0f,	4.0f,  3.0f,  2.0f,  1.0f, 2.0f,  3.0f,	 4.0f,	3.0f,  2.0f,
    1.0f, 2.0f,	 3.0f,	5.0f,  6.0f,  7.0f,  8.0f, 7.0f,  6.0f,	 5.0f,	6.0f,  7.0f,
    8.0f, 7.0f,	 6.0f,	5.0f,  6.0f,  7.0f,  9.0f, 10.0f, 11.0f, 12.0f, 11.0f, 10.0f,
    9.0f, 10.0f, 11.0f, 12.0f, 11.0f, 10.0f, 9.0f, 10.0f, 11.0f};
/* pad_neg: shape [2, 3] */
static const float exp_pad_neg[6] = {0.0f, 5.0f, 6.0f, 0.0f, 9.0f, 10.0f};
/* tile: shape [4, 9] */
static const int32_t exp_tile[36] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5,
				     0, 1, 2, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 3, 4, 5};
/* expand: shape [2, 3, 6] */
static const float exp_expand[36] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 2.0f,
				     2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f,
				     1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 2.0f,
				     2.0f, 2.0f, 2.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f, 3.0f};
/* gather1: shape [3, 2, 2] */
static const float exp_gather1[12] = {0.0f, 3.0f, 2.0f, 1.0f,  4.0f,  7.0f,
				      6.0f, 5.0f, 8.0f, 11.0f, 10.0f, 9.0f};
/* gel: shape [3, 2] */
static const float exp_gel[6] = {0.0f, 3.0f, 5.0f, 7.0f, 10.0f, 8.0f};
/* gnd: shape [2, 1] */
static const int64_t exp_gnd[2] = {1, 23};
/* sel: shape [3, 3] */
static const float exp_sel[9] = {1.0f, 4.5f, 1.0f, 4.0f, 1.0f, 5.0f, 7.0f, 1.0f, 6.0f};
/* snd: shape [2, 2, 2] */
static const float exp_snd[8] = {1.0f, 2.0f, 6.0f, 12.0f, 20.0f, 30.0f, 7.0f, 8.0f};
/* d2s_dcr: shape [2, 2, 4, 6] */
static const float exp_d2s_dcr[96] = {
    0.0f,  12.0f, 1.0f,	 13.0f, 2.0f,  14.0f, 24.0f, 36.0f, 25.0f, 37.0f, 26.0f, 38.0f,
    3.0f,  15.0f, 4.0f,	 16.0f, 5.0f,  17.0f, 27.0f, 39.0f, 28.0f, 40.0f, 29.0f, 41.0f,
    6.0f,  18.0f, 7.0f,	 19.0f, 8.0f,  20.0f, 30.0f, 42.0f, 31.0f, 43.0f, 32.0f, 44.0f,
    9.0f,  21.0f, 10.0f, 22.0f, 11.0f, 23.0f, 33.0f, 45.0f, 34.0f, 46.0f, 35.0f, 47.0f,
    48.0f, 60.0f, 49.0f, 61.0f, 50.0f, 62.0f, 72.0f, 84.0f, 73.0f, 85.0f, 74.0f, 86.0f,
    51.0f, 63.0f, 52.0f, 64.0f, 53.0f, 65.0f, 75.0f, 87.0f, 76.0f, 88.0f, 77.0f, 89.0f,
    54.0f, 66.0f, 55.0f, 67.0f, 56.0f, 68.0f, 78.0f, 90.0f, 79.0f, 91.0f, 80.0f, 92.0f,
    57.0f, 69.0f, 58.0f, 70.0f, 59.0f, 71.0f, 81.0f, 93.0f, 82.0f, 94.0f, 83.0f, 95.0f};
/* d2s_crd: shape [2, 2, 4, 6] */
static const float exp_d2s_crd[96] = {
    0.0f,  6.0f,  1.0f,	 7.0f,	2.0f,  8.0f,  12.0f, 18.0f, 13.0f, 19.0f, 14.0f, 20.0f,
    3.0f,  9.0f,  4.0f,	 10.0f, 5.0f,  11.0f, 15.0f, 21.0f, 16.0f, 22.0f, 17.0f, 23.0f,
    24.0f, 30.0f, 25.0f, 31.0f, 26.0f, 32.0f, 36.0f, 42.0f, 37.0f, 43.0f, 38.0f, 44.0f,
    27.0f, 33.0f, 28.0f, 34.0f, 29.0f, 35.0f, 39.0f, 45.0f, 40.0f, 46.0f, 41.0f, 47.0f,
    48.0f, 54.0f, 49.0f, 55.0f, 50.0f, 56.0f, 60.0f, 66.0f, 61.0f, 67.0f, 62.0f, 68.0f,
    51.0f, 57.0f, 52.0f, 58.0f, 53.0f, 59.0f, 63.0f, 69.0f, 64.0f, 70.0f, 65.0f, 71.0f,
    72.0f, 78.0f, 73.0f, 79.0f, 74.0f, 80.0f, 84.0f, 90.0f, 85.0f, 91.0f, 86.0f, 92.0f,
    75.0f, 81.0f, 76.0f, 82.0f, 77.0f, 83.0f, 87.0f, 93.0f, 88.0f, 94.0f, 89.0f, 95.0f};
/* s2d: shape [1, 8, 2, 3] */
static const float exp_s2d[48] = {
    0.0f, 2.0f, 4.0f,  12.0f, 14.0f, 16.0f, 24.0f, 26.0f, 28.0f, 36.0f, 38.0f, 40.0f,
    1.0f, 3.0f, 5.0f,  13.0f, 15.0f, 17.0f, 25.0f, 27.0f, 29.0f, 37.0f, 39.0f, 41.0f,
    6.0f, 8.0f, 10.0f, 18.0f, 20.0f, 22.0f, 30.0f, 32.0f, 34.0f, 42.0f, 44.0f, 46.0f,
    7.0f, 9.0f, 11.0f, 19.0f, 21.0f, 23.0f, 31.0f, 33.0f, 35.0f, 43.0f, 45.0f, 47.0f};
static const int64_t exp_triu_k1[20] = {0, 2, 3, 4,  5,	 0, 0, 8, 9, 10,
					0, 0, 0, 14, 15, 0, 0, 0, 0, 20};
static const int64_t exp_tril_km1[20] = {0,  0,	 0, 0, 0, 6,  0,  0,  0, 0,
					 11, 12, 0, 0, 0, 16, 17, 18, 0, 0};
static const int64_t exp_triu[20] = {1, 2, 3,  4,  5,  0, 7, 8, 9,  10,
				     0, 0, 13, 14, 15, 0, 0, 0, 19, 20};
/* onehot: shape [4, 2, 3] */
static const float exp_onehot[24] = {0.5f, 0.5f, 0.5f, 3.0f, 0.5f, 3.0f, 3.0f, 0.5f,
				     0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f,
				     0.5f, 0.5f, 0.5f, 3.0f, 0.5f, 0.5f, 3.0f, 0.5f};
static const float exp_range_f[5] = {1.0f, 1.25f, 1.5f, 1.75f, 2.0f};
static const int64_t exp_range_i[3] = {10, 7, 4};

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

static gc_attr a_f(const char *name, float v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOAT};
	a.v.f = v;
	return a;
}

static gc_attr a_s(const char *name, const char *s)
{
	gc_attr a = {.name = name, .type = GC_ATTR_STRING, .n = (int64_t)strlen(s)};
	a.v.s = s;
	return a;
}

static gc_attr a_ints(const char *name, const int64_t *v, int64_t n)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INTS, .n = n};
	a.v.ints = v;
	return a;
}

static gc_attr a_floats(const char *name, const float *v, int64_t n)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOATS, .n = n};
	a.v.floats = v;
	return a;
}

static gc_attr a_t(const char *name, const gc_tensor *t)
{
	gc_attr a = {.name = name, .type = GC_ATTR_TENSOR};
	a.v.t = t;
	return a;
}

/* 1 when t has dtype dt and the given dims; prints the difference otherwise. */
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

#define SAME_ARRAY_(fname, T, FMT, CAST)                                                           \
	static int fname(const void *got, const T *want, int64_t n)                                \
	{                                                                                          \
		const T *g = got;                                                                  \
		for (int64_t i = 0; i < n; i++)                                                    \
			if (g[i] != want[i]) {                                                     \
				fprintf(stderr, "  element %lld: got " FMT ", expected " FMT "\n", \
					(long long)i, (CAST)g[i], (CAST)want[i]);                  \
				return 0;                                                          \
			}                                                                          \
		return 1;                                                                          \
	}
SAME_ARRAY_(same_f32, float, "%.9g", double)
SAME_ARRAY_(same_i64, int64_t, "%lld", long long)
SAME_ARRAY_(same_i32, int32_t, "%lld", long long)
SAME_ARRAY_(same_u8, uint8_t, "%lld", long long)
SAME_ARRAY_(same_u16, uint16_t, "%lld", long long)

/* Like harness_op, but the caller runs separately: lets a test prepare with
 * an input unknown at build time (data NULL) and give it data at run time. */
typedef struct {
	gc_node node;
	gc_tensor out[4];
	gc_error err;
	gc_kctx k;
} split_run;

static int sr_prepare(split_run *s, gc_prepare_fn f, const char *op, int opset, int n_in,
		      gc_tensor **in, int n_out, int n_attr, gc_attr *attrs)
{
	memset(s, 0, sizeof *s);
	s->node.name = "test";
	s->node.domain = "";
	s->node.op_type = op;
	s->node.opset = opset;
	s->node.n_in = n_in;
	s->node.n_out = n_out;
	s->node.n_attr = n_attr;
	s->node.attrs = attrs;
	s->k.err = &s->err;
	s->k.node = &s->node;
	s->k.threads = 1;
	gc_tensor *outp[4] = {&s->out[0], &s->out[1], &s->out[2], &s->out[3]};
	return f(&s->k, &s->node, in, outp);
}

static int sr_run(split_run *s, gc_tensor **in)
{
	gc_tensor *outp[4] = {&s->out[0], &s->out[1], &s->out[2], &s->out[3]};
	for (int i = 0; i < s->node.n_out; i++) {
		s->out[i].data = NULL;
		if (gc_tensor_alloc(&s->out[i], &s->err))
			return s->err.code;
	}
	void *scratch = s->node.scratch_bytes ? calloc(1, s->node.scratch_bytes) : NULL;
	s->k.scratch = scratch;
	int rc = s->node.run(&s->k, &s->node, in, outp);
	free(scratch);
	return rc;
}

static void sr_free(split_run *s)
{
	for (int i = 0; i < s->node.n_out; i++)
		if (s->out[i].data != s->node.state)
			gc_tensor_release(&s->out[i]);
	if (s->node.state) {
		if (s->node.state_free)
			s->node.state_free(s->node.state);
		else
			free(s->node.state);
	}
}

/* x[i] = ((7 i) mod 23 - 11) / 4: exact in every float type; NumPy makes the
 * same values with ((np.arange(n) * 7) % 23 - 11) / 4. */
static void pattern(float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)((i * 7) % 23 - 11) / 4.0f;
}

/* ---- Constant, ConstantOfShape ----------------------------------------- */

static void test_constant_value_tensor(void)
{
	float v[4] = {1.5f, -2, 3, 4.25f};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(2, 2), v);
	gc_attr at[] = {a_t("value", &t)};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 1, at), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_FLOAT, 2, D(2, 2)));
	/* the value is known at build time: published through out->data */
	CHECK(s.out[0].data != NULL);
	CHECK(same_f32(s.out[0].data, v, 4));
	CHECK_INT(sr_run(&s, NULL), 0);
	CHECK(same_f32(s.out[0].data, v, 4));
	sr_free(&s);
}

static void test_constant_value_lists(void)
{
	harness_run h;
	float fl[3] = {0.5f, 1, -7};
	gc_attr at1[] = {a_floats("value_floats", fl, 3)};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 1, at1), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 1, D(3)));
	CHECK(same_f32(h.out[0].data, fl, 3));
	harness_free(&h);

	gc_attr at2[] = {a_i("value_int", -42)};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 12, 0, NULL, 1, 1, at2), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 0, NULL));
	CHECK_INT(((int64_t *)h.out[0].data)[0], -42);
	harness_free(&h);

	int64_t iv[2] = {3, INT64_MIN};
	gc_attr at3[] = {a_ints("value_ints", iv, 2)};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 1, at3), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 1, D(2)));
	CHECK(same_i64(h.out[0].data, iv, 2));
	harness_free(&h);

	gc_attr at4[] = {a_f("value_float", 2.5f)};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 1, at4), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 0, NULL));
	CHECK_NEAR(((float *)h.out[0].data)[0], 2.5, 0);
	harness_free(&h);
}

static void test_constant_errors(void)
{
	harness_run h;
	gc_attr two[] = {a_i("value_int", 1), a_f("value_float", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 2, two),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "exactly one");
	harness_free(&h);
	gc_attr str[] = {a_s("value_string", "hello")};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 1, str),
		  GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "value_string");
	harness_free(&h);
	gc_attr wrong[] = {a_f("value_int", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_Constant, "Constant", 13, 0, NULL, 1, 1, wrong),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'value_int' is float, expected int");
	harness_free(&h);
}

static void test_constant_of_shape(void)
{
	harness_run h;
	int64_t shp[2] = {2, 3}, seven = 7;
	gc_tensor s = tens(GC_DTYPE_INT64, 1, D(2), shp);
	gc_tensor val = tens(GC_DTYPE_INT64, 1, D(1), &seven);
	gc_tensor *in[] = {&s};
	gc_attr at[] = {a_t("value", &val)};
	CHECK_INT(harness_op(&h, gc_prepare_ConstantOfShape, "ConstantOfShape", 9, 1, in, 1, 1, at),
		  0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(2, 3)));
	int64_t want[6] = {7, 7, 7, 7, 7, 7};
	CHECK(same_i64(h.out[0].data, want, 6));
	harness_free(&h);

	/* default: float32 zeros; empty shape gives a scalar */
	gc_tensor e = tens(GC_DTYPE_INT64, 1, D(0), shp);
	gc_tensor *in2[] = {&e};
	CHECK_INT(
	    harness_op(&h, gc_prepare_ConstantOfShape, "ConstantOfShape", 9, 1, in2, 1, 0, NULL),
	    0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 0, NULL));
	CHECK_NEAR(((float *)h.out[0].data)[0], 0, 0);
	harness_free(&h);

	/* a shape computed at run time is refused clearly */
	gc_tensor dyn = tens(GC_DTYPE_INT64, 1, D(2), NULL);
	gc_tensor *in3[] = {&dyn};
	split_run sr;
	CHECK_INT(
	    sr_prepare(&sr, gc_prepare_ConstantOfShape, "ConstantOfShape", 9, 1, in3, 1, 0, NULL),
	    GC_EUNSUPPORTED);
	CHECK_CONTAINS(sr.err.msg, "input 'input' must be known when the model is compiled");
	CHECK_CONTAINS(sr.err.msg, "node 'test' (ConstantOfShape)");
	sr_free(&sr);
}

/* ---- Identity, Dropout -------------------------------------------------- */

static void test_identity_f16(void)
{
	uint16_t x[3] = {0x3c00, 0xc000, 0x7bff};
	gc_tensor t = tens(GC_DTYPE_FLOAT16, 1, D(3), x);
	gc_tensor *in[] = {&t};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Identity, "Identity", 16, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT16, 1, D(3)));
	CHECK(same_u16(h.out[0].data, x, 3));
	CHECK(h.node.inplace_ok);
	harness_free(&h);

	const char *strs[1] = {"a"};
	gc_tensor st = tens(GC_DTYPE_STRING, 1, D(1), strs);
	gc_tensor *in2[] = {&st};
	/* strings: their pointers are copied, the strings stay the input's */
	CHECK_INT(harness_op(&h, gc_prepare_Identity, "Identity", 16, 1, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_STRING, 1, D(1)));
	CHECK(((char **)h.out[0].data)[0] == strs[0]);
	harness_free(&h);
}

static void test_dropout(void)
{
	float x[4] = {1, -2, 3, 4}, ratio = 0.3f;
	uint8_t f = 0, t = 1;
	gc_tensor tx = tens(GC_DTYPE_FLOAT, 2, D(2, 2), x);
	gc_tensor tr = tens(GC_DTYPE_FLOAT, 0, NULL, &ratio);
	gc_tensor tf = tens(GC_DTYPE_BOOL, 0, NULL, &f);
	gc_tensor *in[] = {&tx, &tr, &tf};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Dropout, "Dropout", 13, 3, in, 2, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 2)));
	CHECK(shape_is(&h.out[1], GC_DTYPE_BOOL, 2, D(2, 2)));
	CHECK(same_f32(h.out[0].data, x, 4));
	uint8_t ones[4] = {1, 1, 1, 1};
	CHECK(same_u8(h.out[1].data, ones, 4));
	harness_free(&h);

	/* opset 7: ratio attribute, mask of the data's type */
	gc_attr at[] = {a_f("ratio", 0.2f)};
	CHECK_INT(harness_op(&h, gc_prepare_Dropout, "Dropout", 7, 1, in, 2, 1, at), 0);
	CHECK(shape_is(&h.out[1], GC_DTYPE_FLOAT, 2, D(2, 2)));
	float fones[4] = {1, 1, 1, 1};
	CHECK(same_f32(h.out[1].data, fones, 4));
	harness_free(&h);

	/* a ratio computed at run time does not matter in inference mode */
	gc_tensor rdyn = tens(GC_DTYPE_FLOAT, 0, NULL, NULL);
	gc_tensor *ind[] = {&tx, &rdyn};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Dropout, "Dropout", 13, 2, ind, 1, 0, NULL), 0);
	sr_free(&s);

	gc_tensor tt = tens(GC_DTYPE_BOOL, 0, NULL, &t);
	gc_tensor *in2[] = {&tx, &tr, &tt};
	/* training mode: each element dropped (0) or scaled by 1 / (1 - ratio);
	 * the draws themselves are checked against NumPy in tests/random */
	CHECK_INT(harness_op(&h, gc_prepare_Dropout, "Dropout", 13, 3, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 2)));
	for (int i = 0; i < 4; i++) {
		float y = ((const float *)h.out[0].data)[i];
		CHECK(y == 0 || fabsf(y - x[i] * (1 / 0.7f)) < 1e-6f);
	}
	harness_free(&h);
}

/* ---- Shape, Size -------------------------------------------------------- */

static void test_shape_size(void)
{
	gc_tensor x = tens(GC_DTYPE_BOOL, 3, D(2, 3, 4), NULL);
	gc_tensor *in[] = {&x};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 13, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_INT64, 1, D(3)));
	CHECK(same_i64(s.out[0].data, D(2, 3, 4), 3));
	sr_free(&s);

	gc_attr st[] = {a_i("start", -1)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 15, 1, in, 1, 1, st), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_INT64, 1, D(1)));
	CHECK(same_i64(s.out[0].data, D(4), 1));
	sr_free(&s);

	gc_attr en[] = {a_i("end", -1)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 15, 1, in, 1, 1, en), 0);
	CHECK(same_i64(s.out[0].data, D(2, 3), 2));
	sr_free(&s);

	/* clamped: start -10 is 0, end 10 is 3; opset 13 ignores them */
	gc_attr cl[] = {a_i("start", 1), a_i("end", 10)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 15, 1, in, 1, 2, cl), 0);
	CHECK(same_i64(s.out[0].data, D(3, 4), 2));
	sr_free(&s);
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 13, 1, in, 1, 2, cl), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_INT64, 1, D(3)));
	sr_free(&s);
	gc_attr empty[] = {a_i("start", 2), a_i("end", 1)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 15, 1, in, 1, 2, empty), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_INT64, 1, D(0)));
	sr_free(&s);

	CHECK_INT(sr_prepare(&s, gc_prepare_Size, "Size", 13, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_INT64, 0, NULL));
	CHECK_INT(((int64_t *)s.out[0].data)[0], 24);
	gc_tensor xd = tens(GC_DTYPE_BOOL, 3, D(2, 3, 4), calloc(24, 1));
	gc_tensor *ind[] = {&xd};
	CHECK_INT(sr_run(&s, ind), 0);
	free(xd.data);
	CHECK_INT(((int64_t *)s.out[0].data)[0], 24);
	sr_free(&s);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ------------------------------- */

static void test_reshape(void)
{
	int64_t x[24];
	for (int i = 0; i < 24; i++)
		x[i] = i;
	gc_tensor tx = tens(GC_DTYPE_INT64, 3, D(2, 3, 4), x);
	int64_t shp[3] = {0, -1, 2};
	gc_tensor ts = tens(GC_DTYPE_INT64, 1, D(3), shp);
	gc_tensor *in[] = {&tx, &ts};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Reshape, "Reshape", 13, 2, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 3, D(2, 6, 2)));
	CHECK(same_i64(h.out[0].data, x, 24));
	CHECK(h.node.inplace_ok);
	harness_free(&h);

	/* opset 1..4: shape attribute */
	gc_attr at[] = {a_ints("shape", D(4, -1), 2)};
	CHECK_INT(harness_op(&h, gc_prepare_Reshape, "Reshape", 1, 1, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(4, 6)));
	harness_free(&h);

	/* allowzero (opset 14): 0 is a real zero */
	gc_tensor tz = tens(GC_DTYPE_INT64, 2, D(0, 3), x);
	int64_t zs[2] = {3, 0};
	gc_tensor tzs = tens(GC_DTYPE_INT64, 1, D(2), zs);
	gc_tensor *inz[] = {&tz, &tzs};
	gc_attr az[] = {a_i("allowzero", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_Reshape, "Reshape", 14, 2, inz, 1, 1, az), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(3, 0)));
	harness_free(&h);
	/* ... while without it the 0 copies dim 1 (3): 9 != 0 elements */
	CHECK_INT(harness_op(&h, gc_prepare_Reshape, "Reshape", 14, 2, inz, 1, 0, NULL), GC_EINVAL);
	harness_free(&h);

	/* scalar target */
	gc_tensor one = tens(GC_DTYPE_INT64, 3, D(1, 1, 1), x);
	gc_tensor es = tens(GC_DTYPE_INT64, 1, D(0), shp);
	gc_tensor *ins[] = {&one, &es};
	CHECK_INT(harness_op(&h, gc_prepare_Reshape, "Reshape", 13, 2, ins, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 0, NULL));
	harness_free(&h);
}

static void test_reshape_errors(void)
{
	gc_tensor tx = tens(GC_DTYPE_FLOAT, 3, D(2, 3, 4), NULL);
	int64_t bad[2] = {5, 5};
	gc_tensor ts = tens(GC_DTYPE_INT64, 1, D(2), bad);
	gc_tensor *in[] = {&tx, &ts};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Reshape, "Reshape", 13, 2, in, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(s.err.msg, "2x3x4");
	CHECK_CONTAINS(s.err.msg, "5x5");
	CHECK_CONTAINS(s.err.msg, "24 elements");
	sr_free(&s);

	int64_t two[3] = {-1, -1, 2};
	gc_tensor t2 = tens(GC_DTYPE_INT64, 1, D(3), two);
	gc_tensor *in2[] = {&tx, &t2};
	CHECK_INT(sr_prepare(&s, gc_prepare_Reshape, "Reshape", 13, 2, in2, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(s.err.msg, "more than one -1");
	sr_free(&s);

	int64_t inf[2] = {5, -1};
	gc_tensor t3 = tens(GC_DTYPE_INT64, 1, D(2), inf);
	gc_tensor *in3[] = {&tx, &t3};
	CHECK_INT(sr_prepare(&s, gc_prepare_Reshape, "Reshape", 13, 2, in3, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(s.err.msg, "2x3x4");
	CHECK_CONTAINS(s.err.msg, "[5, -1]");
	sr_free(&s);

	gc_tensor dyn = tens(GC_DTYPE_INT64, 1, D(2), NULL);
	gc_tensor *in4[] = {&tx, &dyn};
	CHECK_INT(sr_prepare(&s, gc_prepare_Reshape, "Reshape", 13, 2, in4, 1, 0, NULL),
		  GC_EUNSUPPORTED);
	CHECK_CONTAINS(s.err.msg, "input 'shape' must be known when the model is compiled");
	sr_free(&s);
}

static void test_flatten(void)
{
	gc_tensor x = tens(GC_DTYPE_FLOAT, 4, D(2, 3, 4, 5), NULL);
	gc_tensor *in[] = {&x};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Flatten, "Flatten", 13, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_FLOAT, 2, D(2, 60)));
	sr_free(&s);
	gc_attr neg[] = {a_i("axis", -1)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Flatten, "Flatten", 13, 1, in, 1, 1, neg), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_FLOAT, 2, D(24, 5)));
	sr_free(&s);
	gc_attr zero[] = {a_i("axis", 0)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Flatten, "Flatten", 13, 1, in, 1, 1, zero), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_FLOAT, 2, D(1, 120)));
	sr_free(&s);
	gc_attr four[] = {a_i("axis", 4)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Flatten, "Flatten", 13, 1, in, 1, 1, four), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_FLOAT, 2, D(120, 1)));
	sr_free(&s);
	gc_attr bad[] = {a_i("axis", 5)};
	CHECK_INT(sr_prepare(&s, gc_prepare_Flatten, "Flatten", 13, 1, in, 1, 1, bad), GC_EINVAL);
	CHECK_CONTAINS(s.err.msg, "'axis' 5 is out of range");
	sr_free(&s);
}

static void test_squeeze_opsets(void)
{
	float x[6] = {1, 2, 3, 4, 5, 6};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 4, D(1, 3, 1, 2), x);
	harness_run h;
	/* opset 11: axes attribute */
	gc_attr at[] = {a_ints("axes", D(-2), 1)};
	gc_tensor *in1[] = {&t};
	CHECK_INT(harness_op(&h, gc_prepare_Squeeze, "Squeeze", 11, 1, in1, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(1, 3, 2)));
	CHECK(same_f32(h.out[0].data, x, 6));
	harness_free(&h);
	/* opset 13: axes input */
	int64_t ax[1] = {0};
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(1), ax);
	gc_tensor *in2[] = {&t, &ta};
	CHECK_INT(harness_op(&h, gc_prepare_Squeeze, "Squeeze", 13, 2, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(3, 1, 2)));
	harness_free(&h);
	/* no axes: every unit dim */
	CHECK_INT(harness_op(&h, gc_prepare_Squeeze, "Squeeze", 13, 1, in1, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 2)));
	harness_free(&h);
	/* the opset-11 attribute is ignored at 13 (not an input) */
	CHECK_INT(harness_op(&h, gc_prepare_Squeeze, "Squeeze", 13, 1, in1, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 2)));
	harness_free(&h);
	/* squeezing a dim that is not 1 */
	gc_attr bad[] = {a_ints("axes", D(1), 1)};
	CHECK_INT(harness_op(&h, gc_prepare_Squeeze, "Squeeze", 11, 1, in1, 1, 1, bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "cannot squeeze axis 1: dim is 3");
	harness_free(&h);
}

static void test_unsqueeze_opsets(void)
{
	float x[6] = {1, 2, 3, 4, 5, 6};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 2), x);
	harness_run h;
	gc_attr at[] = {a_ints("axes", D(0, -1), 2)};
	gc_tensor *in1[] = {&t};
	CHECK_INT(harness_op(&h, gc_prepare_Unsqueeze, "Unsqueeze", 11, 1, in1, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 4, D(1, 3, 2, 1)));
	CHECK(same_f32(h.out[0].data, x, 6));
	harness_free(&h);
	int64_t ax[2] = {3, 1};
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(2), ax);
	gc_tensor *in2[] = {&t, &ta};
	CHECK_INT(harness_op(&h, gc_prepare_Unsqueeze, "Unsqueeze", 13, 2, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 4, D(3, 1, 2, 1)));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_Unsqueeze, "Unsqueeze", 13, 1, in1, 1, 0, NULL),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "input 'axes' is required");
	harness_free(&h);
	int64_t dup[2] = {1, -3};
	gc_tensor td = tens(GC_DTYPE_INT64, 1, D(2), dup);
	gc_tensor *in3[] = {&t, &td};
	CHECK_INT(harness_op(&h, gc_prepare_Unsqueeze, "Unsqueeze", 13, 2, in3, 1, 0, NULL),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "more than once");
	harness_free(&h);
}

/* ---- Transpose ---------------------------------------------------------- */

static void test_transpose_small(void)
{
	int64_t x[24];
	for (int i = 0; i < 24; i++)
		x[i] = i;
	gc_tensor t = tens(GC_DTYPE_INT64, 3, D(2, 3, 4), x);
	gc_tensor *in[] = {&t};
	gc_attr at[] = {a_ints("perm", D(2, 0, 1), 3)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Transpose, "Transpose", 13, 1, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 3, D(4, 2, 3)));
	CHECK(same_i64(h.out[0].data, exp_tr3, 24));
	harness_free(&h);
	/* default perm reverses the axes */
	CHECK_INT(harness_op(&h, gc_prepare_Transpose, "Transpose", 13, 1, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 3, D(4, 3, 2)));
	CHECK_INT(((int64_t *)h.out[0].data)[1], 12);
	CHECK_INT(((int64_t *)h.out[0].data)[2], 4);
	harness_free(&h);
	gc_attr bad[] = {a_ints("perm", D(0, 0, 1), 3)};
	CHECK_INT(harness_op(&h, gc_prepare_Transpose, "Transpose", 13, 1, in, 1, 1, bad),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "not a permutation");
	harness_free(&h);
}

/* The perm reader the kernel and the Gradient pass's rule share. */
static void test_transpose_perm(void)
{
	int64_t perm[GC_MAX_RANK];
	char why[200];
	CHECK_INT(gc_transpose_perm(NULL, 3, perm, why, sizeof why), 0);
	CHECK(perm[0] == 2 && perm[1] == 1 && perm[2] == 0);
	gc_attr ok = a_ints("perm", D(1, 2, 0), 3);
	CHECK_INT(gc_transpose_perm(&ok, 3, perm, why, sizeof why), 0);
	CHECK(perm[0] == 1 && perm[1] == 2 && perm[2] == 0);
	struct {
		gc_attr a;
		const char *why;
	} bad[] = {
	    {a_ints("perm", D(0, 0, 2), 3),
	     "attribute 'perm' is not a permutation of 0..2 (entry 1 is 0)"},
	    {a_ints("perm", D(0, 1, 3), 3),
	     "attribute 'perm' is not a permutation of 0..2 (entry 2 is 3)"},
	    {a_ints("perm", D(0, -1, 1), 3),
	     "attribute 'perm' is not a permutation of 0..2 (entry 1 is -1)"},
	    {a_ints("perm", D(1, 0), 2), "attribute 'perm' has 2 entries for input of rank 3"},
	    {a_ints("perm", D(3, 2, 1, 0), 4),
	     "attribute 'perm' has 4 entries for input of rank 3"},
	    {{.name = "perm", .type = GC_ATTR_INT, .v.i = 1},
	     "attribute 'perm' is int, expected ints"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		why[0] = 0;
		CHECK_INT(gc_transpose_perm(&bad[i].a, 3, perm, why, sizeof why), GC_EINVAL);
		CHECK_STR(why, bad[i].why);
	}
}

/* Checks a transpose of an arbitrary tensor against the definition. */
static int transpose_ok(gc_dtype dt, int32_t rank, const int64_t *dims, const int64_t *perm)
{
	size_t es = gc_dtype_size(dt);
	gc_tensor t = tens(dt, rank, dims, NULL);
	int64_t n = gc_tensor_numel(&t);
	unsigned char *x = malloc((size_t)n * es);
	for (int64_t i = 0; i < n * (int64_t)es; i++)
		x[i] = (unsigned char)(i * 31 + i / 7);
	t.data = x;
	gc_tensor *in[] = {&t};
	gc_attr at[] = {a_ints("perm", perm, rank)};
	harness_run h;
	int ok = harness_op(&h, gc_prepare_Transpose, "Transpose", 13, 1, in, 1, 1, at) == 0;
	int64_t ist[GC_MAX_RANK], idx[GC_MAX_RANK] = {0};
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		ist[i] = s;
		s *= dims[i];
	}
	const unsigned char *y = h.out[0].data;
	for (int64_t o = 0; ok && o < n; o++) {
		int64_t off = 0;
		for (int i = 0; i < rank; i++)
			off += idx[i] * ist[perm[i]];
		if (memcmp(y + o * (int64_t)es, x + off * (int64_t)es, es)) {
			fprintf(stderr, "  transpose mismatch at output element %lld\n",
				(long long)o);
			ok = 0;
		}
		for (int i = rank - 1; i >= 0; i--) {
			if (++idx[i] < dims[perm[i]])
				break;
			idx[i] = 0;
		}
	}
	harness_free(&h);
	free(x);
	return ok;
}

static void test_transpose_large(void)
{
	CHECK(transpose_ok(GC_DTYPE_FLOAT, 2, D(67, 45), D(1, 0)));
	CHECK(transpose_ok(GC_DTYPE_FLOAT, 4, D(2, 33, 17, 40), D(0, 2, 3, 1))); /* NCHW->NHWC */
	CHECK(transpose_ok(GC_DTYPE_FLOAT, 4, D(2, 17, 40, 33), D(0, 3, 1, 2))); /* NHWC->NCHW */
	CHECK(transpose_ok(GC_DTYPE_FLOAT, 4, D(2, 12, 35, 64), D(0, 2, 1, 3))); /* attention */
	CHECK(transpose_ok(GC_DTYPE_FLOAT, 3, D(5, 40, 36), D(2, 1, 0)));
	CHECK(transpose_ok(GC_DTYPE_FLOAT16, 3, D(3, 50, 70), D(0, 2, 1)));
	CHECK(transpose_ok(GC_DTYPE_BOOL, 3, D(9, 10, 11), D(1, 2, 0)));
	CHECK(transpose_ok(GC_DTYPE_DOUBLE, 5, D(2, 3, 4, 5, 6), D(4, 2, 0, 3, 1)));
	CHECK(transpose_ok(GC_DTYPE_COMPLEX128, 2, D(9, 7), D(1, 0)));
	CHECK(transpose_ok(GC_DTYPE_INT32, 4, D(1, 8, 1, 5), D(3, 2, 1, 0)));
}

/* ---- Concat, Split ------------------------------------------------------ */

static void test_concat(void)
{
	int64_t a[4] = {1, 2, 3, 4}, b[6] = {5, 6, 7, 8, 9, 10};
	gc_tensor ta = tens(GC_DTYPE_INT64, 2, D(2, 2), a);
	gc_tensor tb = tens(GC_DTYPE_INT64, 2, D(2, 3), b);
	gc_tensor te = tens(GC_DTYPE_INT64, 2, D(2, 0), a);
	gc_tensor *in[] = {&ta, &te, &tb};
	gc_attr at[] = {a_i("axis", -1)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Concat, "Concat", 13, 3, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(2, 5)));
	CHECK(same_i64(h.out[0].data, D(1, 2, 5, 6, 7, 3, 4, 8, 9, 10), 10));
	harness_free(&h);

	gc_tensor tc = tens(GC_DTYPE_INT64, 2, D(1, 2), b);
	gc_tensor *in2[] = {&ta, &tc};
	gc_attr a0[] = {a_i("axis", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_Concat, "Concat", 13, 2, in2, 1, 1, a0), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(3, 2)));
	CHECK(same_i64(h.out[0].data, D(1, 2, 3, 4, 5, 6), 6));
	harness_free(&h);

	gc_tensor *in3[] = {&ta, &tb};
	CHECK_INT(harness_op(&h, gc_prepare_Concat, "Concat", 13, 2, in3, 1, 1, a0), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "input 1 (int64, shape 2x3) does not match input 0");
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_Concat, "Concat", 13, 2, in3, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'axis' is required");
	harness_free(&h);
}

static void test_split_opsets(void)
{
	float x[12];
	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(2, 6), x);
	harness_run h;
	/* opset 11: split attribute */
	gc_attr at[] = {a_i("axis", -1), a_ints("split", D(1, 2, 3), 3)};
	gc_tensor *in1[] = {&t};
	CHECK_INT(harness_op(&h, gc_prepare_Split, "Split", 11, 1, in1, 3, 2, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 1)));
	CHECK(shape_is(&h.out[2], GC_DTYPE_FLOAT, 2, D(2, 3)));
	CHECK(same_f32(h.out[0].data, (const float[]){0, 6}, 2));
	CHECK(same_f32(h.out[1].data, (const float[]){1, 2, 7, 8}, 4));
	CHECK(same_f32(h.out[2].data, (const float[]){3, 4, 5, 9, 10, 11}, 6));
	harness_free(&h);
	/* opset 13: split input */
	int64_t sp[2] = {4, 2};
	gc_tensor ts = tens(GC_DTYPE_INT64, 1, D(2), sp);
	gc_tensor *in2[] = {&t, &ts};
	gc_attr ax[] = {a_i("axis", 1)};
	CHECK_INT(harness_op(&h, gc_prepare_Split, "Split", 13, 2, in2, 2, 1, ax), 0);
	CHECK(same_f32(h.out[0].data, (const float[]){0, 1, 2, 3, 6, 7, 8, 9}, 8));
	CHECK(same_f32(h.out[1].data, (const float[]){4, 5, 10, 11}, 4));
	harness_free(&h);
	/* equal parts when absent; axis 0 */
	CHECK_INT(harness_op(&h, gc_prepare_Split, "Split", 13, 1, in1, 2, 0, NULL), 0);
	CHECK(shape_is(&h.out[1], GC_DTYPE_FLOAT, 2, D(1, 6)));
	CHECK(same_f32(h.out[1].data, x + 6, 6));
	harness_free(&h);
	/* errors */
	CHECK_INT(harness_op(&h, gc_prepare_Split, "Split", 13, 1, in1, 4, 1, ax), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "axis 1 of size 6 does not split into 4 equal parts");
	harness_free(&h);
	int64_t bad[2] = {4, 3};
	gc_tensor tb = tens(GC_DTYPE_INT64, 1, D(2), bad);
	gc_tensor *in3[] = {&t, &tb};
	CHECK_INT(harness_op(&h, gc_prepare_Split, "Split", 13, 2, in3, 2, 1, ax), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "add up to 7");
	harness_free(&h);
}

/* ---- Slice -------------------------------------------------------------- */

static void test_slice_opset13(void)
{
	float x[20];
	pattern(x, 20);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(4, 5), x);
	harness_run h;
	/* x[-1::-2, 1:4] with axes [0, -1], steps [-2, 1], end INT64_MIN */
	int64_t st[2] = {-1, 1}, en[2] = {INT64_MIN, 4}, ax[2] = {0, -1}, sp[2] = {-2, 1};
	gc_tensor ts = tens(GC_DTYPE_INT64, 1, D(2), st), te = tens(GC_DTYPE_INT64, 1, D(2), en);
	gc_tensor ta = tens(GC_DTYPE_INT64, 1, D(2), ax), tp = tens(GC_DTYPE_INT64, 1, D(2), sp);
	gc_tensor *in[] = {&t, &ts, &te, &ta, &tp};
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 13, 5, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 3)));
	CHECK(same_f32(h.out[0].data, exp_sl_a, 6));
	harness_free(&h);
	/* x[1:1000, -100:2]: clamping, INT64_MAX-like ends, int32 indices */
	int32_t st2[2] = {1, -100}, en2[2] = {1000, 2};
	gc_tensor ts2 = tens(GC_DTYPE_INT32, 1, D(2), st2),
		  te2 = tens(GC_DTYPE_INT32, 1, D(2), en2);
	gc_tensor *in2[] = {&t, &ts2, &te2};
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 13, 3, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 2)));
	CHECK(same_f32(h.out[0].data, exp_sl_b, 6));
	harness_free(&h);
	/* x[:, 3:0:-1] with steps, axis 1 only, optional axes absent (NULL) */
	int64_t st3[1] = {3}, en3[1] = {0}, ax3[1] = {1}, sp3[1] = {-1};
	gc_tensor ts3 = tens(GC_DTYPE_INT64, 1, D(1), st3),
		  te3 = tens(GC_DTYPE_INT64, 1, D(1), en3);
	gc_tensor ta3 = tens(GC_DTYPE_INT64, 1, D(1), ax3),
		  tp3 = tens(GC_DTYPE_INT64, 1, D(1), sp3);
	gc_tensor *in3[] = {&t, &ts3, &te3, &ta3, &tp3};
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 13, 5, in3, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(4, 3)));
	CHECK(same_f32(h.out[0].data, exp_sl_c, 12));
	harness_free(&h);
	/* INT64_MAX end and an empty result (start past end) */
	int64_t st4[1] = {2}, en4[1] = {INT64_MAX};
	gc_tensor ts4 = tens(GC_DTYPE_INT64, 1, D(1), st4),
		  te4 = tens(GC_DTYPE_INT64, 1, D(1), en4);
	gc_tensor *in4[] = {&t, &ts4, &te4};
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 13, 3, in4, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 5)));
	CHECK(same_f32(h.out[0].data, x + 10, 10));
	harness_free(&h);
	gc_tensor *in5[] = {&t, &te4, &ts4};
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 13, 3, in5, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(0, 5)));
	harness_free(&h);
	/* step 0 is an error */
	int64_t zero[1] = {0};
	gc_tensor tz = tens(GC_DTYPE_INT64, 1, D(1), zero);
	gc_tensor *in6[] = {&t, &ts3, &te3, &ta3, &tz};
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 13, 5, in6, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'steps' is 0");
	harness_free(&h);
}

static void test_slice_opset9_bool(void)
{
	uint8_t x[12] = {1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0};
	gc_tensor t = tens(GC_DTYPE_BOOL, 3, D(2, 3, 2), x);
	gc_attr at[] = {a_ints("starts", D(1, -1), 2), a_ints("ends", D(3, 1000), 2),
			a_ints("axes", D(1, 2), 2)};
	gc_tensor *in[] = {&t};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 9, 1, in, 1, 3, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_BOOL, 3, D(2, 2, 1)));
	/* NumPy: x[:, 1:3, -1:] */
	CHECK(same_u8(h.out[0].data, (const uint8_t[]){1, 1, 0, 0}, 4));
	harness_free(&h);
	/* inputs are not read at opset 9; attributes are required */
	CHECK_INT(harness_op(&h, gc_prepare_Slice, "Slice", 9, 1, in, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'starts' and 'ends' are required");
	harness_free(&h);
	/* non-constant starts at opset 13 */
	gc_tensor dyn = tens(GC_DTYPE_INT64, 1, D(1), NULL);
	int64_t e[1] = {1};
	gc_tensor te = tens(GC_DTYPE_INT64, 1, D(1), e);
	gc_tensor *in2[] = {&t, &dyn, &te};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Slice, "Slice", 13, 3, in2, 1, 0, NULL),
		  GC_EUNSUPPORTED);
	CHECK_CONTAINS(s.err.msg, "input 'starts' must be known");
	sr_free(&s);
}

/* ---- Gather ------------------------------------------------------------- */

static void test_gather(void)
{
	float x[12];
	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 4), x);
	int32_t idx[4] = {0, -1, 2, 1};
	gc_tensor ti = tens(GC_DTYPE_INT32, 2, D(2, 2), idx);
	gc_tensor *in[] = {&t, &ti};
	gc_attr at[] = {a_i("axis", -1)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Gather, "Gather", 13, 2, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(3, 2, 2)));
	CHECK(same_f32(h.out[0].data, exp_gather1, 12));
	harness_free(&h);
	/* axis 0, int64 scalar index: a row */
	int64_t one = -2;
	gc_tensor t1 = tens(GC_DTYPE_INT64, 0, NULL, &one);
	gc_tensor *in2[] = {&t, &t1};
	CHECK_INT(harness_op(&h, gc_prepare_Gather, "Gather", 13, 2, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 1, D(4)));
	CHECK(same_f32(h.out[0].data, x + 4, 4));
	harness_free(&h);
	/* constant bad index: caught at build time */
	int64_t bad = 3;
	gc_tensor tb = tens(GC_DTYPE_INT64, 0, NULL, &bad);
	gc_tensor *in3[] = {&t, &tb};
	CHECK_INT(harness_op(&h, gc_prepare_Gather, "Gather", 13, 2, in3, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "is 3, out of range [-3, 2] for axis 0 of size 3");
	harness_free(&h);
	float fi = 1;
	gc_tensor tf = tens(GC_DTYPE_FLOAT, 0, NULL, &fi);
	gc_tensor *in4[] = {&t, &tf};
	CHECK_INT(harness_op(&h, gc_prepare_Gather, "Gather", 13, 2, in4, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "must be int32 or int64");
	harness_free(&h);
}

static void test_gather_runtime_index_error(void)
{
	float x[12] = {0};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 4), x);
	gc_tensor ti = tens(GC_DTYPE_INT64, 1, D(3), NULL); /* computed at run time */
	gc_tensor *in[] = {&t, &ti};
	gc_attr at[] = {a_i("axis", 1)};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Gather, "Gather", 13, 2, in, 1, 1, at), 0);
	CHECK(shape_is(&s.out[0], GC_DTYPE_FLOAT, 2, D(3, 3)));
	int64_t good[3] = {3, -4, 0};
	ti.data = good;
	CHECK_INT(sr_run(&s, in), 0);
	int64_t bad[3] = {1, 2, -5};
	ti.data = bad;
	gc_tensor_release(&s.out[0]);
	CHECK_INT(sr_run(&s, in), GC_EINVAL);
	CHECK_CONTAINS(s.err.msg, "node 'test' (Gather)");
	CHECK_CONTAINS(s.err.msg, "indices element 2 is -5, out of range [-4, 3] for axis 1");
	sr_free(&s);
}

/* ---- Expand, Tile, Pad -------------------------------------------------- */

static void test_expand(void)
{
	float x[3] = {1, 2, 3};
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 1), x);
	int64_t shp[3] = {2, 1, 6};
	gc_tensor ts = tens(GC_DTYPE_INT64, 1, D(3), shp);
	gc_tensor *in[] = {&t, &ts};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Expand, "Expand", 13, 2, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(2, 3, 6)));
	CHECK(same_f32(h.out[0].data, exp_expand, 36));
	harness_free(&h);
	/* shape smaller than the input keeps the input's dims */
	int64_t s1[1] = {1};
	gc_tensor t1 = tens(GC_DTYPE_INT64, 1, D(1), s1);
	gc_tensor *in2[] = {&t, &t1};
	CHECK_INT(harness_op(&h, gc_prepare_Expand, "Expand", 13, 2, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 1)));
	harness_free(&h);
	int64_t s2[2] = {4, 5};
	gc_tensor t2 = tens(GC_DTYPE_INT64, 1, D(2), s2);
	gc_tensor *in3[] = {&t, &t2};
	CHECK_INT(harness_op(&h, gc_prepare_Expand, "Expand", 13, 2, in3, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "input of shape 3x1 cannot be expanded to shape 4x5");
	harness_free(&h);
}

static void test_tile(void)
{
	int32_t x[6] = {0, 1, 2, 3, 4, 5};
	gc_tensor t = tens(GC_DTYPE_INT32, 2, D(2, 3), x);
	int64_t rep[2] = {2, 3};
	gc_tensor tr = tens(GC_DTYPE_INT64, 1, D(2), rep);
	gc_tensor *in[] = {&t, &tr};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Tile, "Tile", 13, 2, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT32, 2, D(4, 9)));
	CHECK(same_i32(h.out[0].data, exp_tile, 36));
	harness_free(&h);
	int64_t bad[1] = {2};
	gc_tensor tb = tens(GC_DTYPE_INT64, 1, D(1), bad);
	gc_tensor *in2[] = {&t, &tb};
	CHECK_INT(harness_op(&h, gc_prepare_Tile, "Tile", 13, 2, in2, 1, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'repeats' has 1 entries for input of rank 2");
	harness_free(&h);
}

static void test_pad_modes(void)
{
	float x[12];
	for (int i = 0; i < 12; i++)
		x[i] = (float)(i + 1);
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 4), x);
	int64_t pads[4] = {1, 2, 2, 3};
	gc_tensor tp = tens(GC_DTYPE_INT64, 1, D(4), pads);
	float cv = -1.5f;
	gc_tensor tc = tens(GC_DTYPE_FLOAT, 0, NULL, &cv);
	harness_run h;
	gc_tensor *in[] = {&t, &tp, &tc};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 13, 3, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(6, 9)));
	CHECK(same_f32(h.out[0].data, exp_pad_const, 54));
	harness_free(&h);
	static const char *const modes[3] = {"reflect", "edge", "wrap"};
	const float *want[3] = {exp_pad_reflect, exp_pad_edge, exp_pad_wrap};
	for (int m = 0; m < 3; m++) {
		gc_attr at[] = {a_s("mode", modes[m])};
		CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 13, 2, in, 1, 1, at), 0);
		CHECK(same_f32(h.out[0].data, want[m], 54));
		harness_free(&h);
	}
	/* reflect further than the axis is long: NumPy reflects repeatedly */
	int64_t big[4] = {0, 6, 0, 5};
	gc_tensor tbig = tens(GC_DTYPE_INT64, 1, D(4), big);
	gc_tensor *in2[] = {&t, &tbig};
	gc_attr refl[] = {a_s("mode", "reflect")};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 13, 2, in2, 1, 1, refl), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 15)));
	CHECK(same_f32(h.out[0].data, exp_pad_reflect_big, 45));
	harness_free(&h);
	/* negative pads crop */
	int64_t neg[4] = {-1, 1, 0, -2};
	gc_tensor tneg = tens(GC_DTYPE_INT64, 1, D(4), neg);
	gc_tensor *in3[] = {&t, &tneg};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 13, 2, in3, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(2, 3)));
	CHECK(same_f32(h.out[0].data, exp_pad_neg, 6));
	harness_free(&h);
	/* opset 18's axes input: pad only the last axis */
	int64_t pads1[2] = {1, 2}, axm1 = -1;
	gc_tensor tp1 = tens(GC_DTYPE_INT64, 1, D(2), pads1),
		  tax = tens(GC_DTYPE_INT64, 1, D(1), &axm1);
	gc_tensor *in5[] = {&t, &tp1, NULL, &tax};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 18, 4, in5, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 7)));
	CHECK(same_f32(
	    h.out[0].data,
	    (const float[]){0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 8, 0, 0, 0, 9, 10, 11, 12, 0, 0}, 21));
	harness_free(&h);
	gc_attr badm[] = {a_s("mode", "mirror")};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 13, 2, in, 1, 1, badm), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'mirror'");
	harness_free(&h);
}

static void test_pad_opset2_int64(void)
{
	int64_t x[3] = {7, 8, 9};
	gc_tensor t = tens(GC_DTYPE_INT64, 1, D(3), x);
	gc_tensor *in[] = {&t};
	gc_attr at[] = {a_ints("pads", D(2, 1), 2), a_f("value", 4.0f)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 2, 1, in, 1, 2, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 1, D(6)));
	CHECK(same_i64(h.out[0].data, D(4, 4, 7, 8, 9, 4), 6));
	harness_free(&h);
	gc_attr edge[] = {a_ints("pads", D(1, 2), 2), a_s("mode", "edge")};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 2, 1, in, 1, 2, edge), 0);
	CHECK(same_i64(h.out[0].data, D(7, 7, 8, 9, 9, 9), 6));
	harness_free(&h);
	gc_attr wrong[] = {a_ints("pads", D(1, 2, 3), 3)};
	CHECK_INT(harness_op(&h, gc_prepare_Pad, "Pad", 2, 1, in, 1, 1, wrong), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'pads' has 3 entries, expected 2");
	harness_free(&h);
}

/* ---- Range -------------------------------------------------------------- */

static void test_range(void)
{
	float s = 1, l = 2.05f, d = 0.25f;
	gc_tensor ts = tens(GC_DTYPE_FLOAT, 0, NULL, &s), tl = tens(GC_DTYPE_FLOAT, 0, NULL, &l),
		  td = tens(GC_DTYPE_FLOAT, 0, NULL, &d);
	gc_tensor *in[] = {&ts, &tl, &td};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Range, "Range", 11, 3, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 1, D(5)));
	CHECK(same_f32(h.out[0].data, exp_range_f, 5));
	harness_free(&h);
	int64_t is = 10, il = 3, id = -3;
	gc_tensor t1 = tens(GC_DTYPE_INT64, 0, NULL, &is), t2 = tens(GC_DTYPE_INT64, 0, NULL, &il),
		  t3 = tens(GC_DTYPE_INT64, 0, NULL, &id);
	gc_tensor *in2[] = {&t1, &t2, &t3};
	CHECK_INT(harness_op(&h, gc_prepare_Range, "Range", 11, 3, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 1, D(3)));
	CHECK(same_i64(h.out[0].data, exp_range_i, 3));
	harness_free(&h);
	/* empty: limit behind start */
	gc_tensor *in3[] = {&t2, &t1, &t3};
	CHECK_INT(harness_op(&h, gc_prepare_Range, "Range", 11, 3, in3, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 1, D(0)));
	harness_free(&h);
	/* int16: start + i * delta computed without int16 wrap-around */
	int16_t hs = -32768, hl = 32767, hd = 16384;
	gc_tensor h1 = tens(GC_DTYPE_INT16, 0, NULL, &hs), h2 = tens(GC_DTYPE_INT16, 0, NULL, &hl),
		  h3 = tens(GC_DTYPE_INT16, 0, NULL, &hd);
	gc_tensor *inh[] = {&h1, &h2, &h3};
	CHECK_INT(harness_op(&h, gc_prepare_Range, "Range", 11, 3, inh, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT16, 1, D(4)));
	CHECK_INT(((int16_t *)h.out[0].data)[2], 0);
	CHECK_INT(((int16_t *)h.out[0].data)[3], 16384);
	harness_free(&h);
	/* data-dependent size */
	gc_tensor dyn = tens(GC_DTYPE_INT64, 0, NULL, NULL);
	gc_tensor *in4[] = {&t1, &dyn, &t3};
	split_run sr;
	CHECK_INT(sr_prepare(&sr, gc_prepare_Range, "Range", 11, 3, in4, 1, 0, NULL),
		  GC_EUNSUPPORTED);
	CHECK_CONTAINS(sr.err.msg, "input 'limit' must be known when the model is compiled");
	sr_free(&sr);
}

/* ---- GatherElements, GatherND, ScatterElements, ScatterND --------------- */

static void test_gather_elements(void)
{
	float x[12];
	for (int i = 0; i < 12; i++)
		x[i] = (float)i;
	gc_tensor t = tens(GC_DTYPE_FLOAT, 2, D(3, 4), x);
	int64_t idx[6] = {0, 3, 1, -1, 2, 0};
	gc_tensor ti = tens(GC_DTYPE_INT64, 2, D(3, 2), idx);
	gc_tensor *in[] = {&t, &ti};
	gc_attr at[] = {a_i("axis", 1)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_GatherElements, "GatherElements", 13, 2, in, 1, 1, at),
		  0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 2, D(3, 2)));
	CHECK(same_f32(h.out[0].data, exp_gel, 6));
	harness_free(&h);
	int64_t bad[6] = {0, 3, 1, 4, 2, 0};
	gc_tensor tb = tens(GC_DTYPE_INT64, 2, D(3, 2), bad);
	gc_tensor *in2[] = {&t, &tb};
	CHECK_INT(harness_op(&h, gc_prepare_GatherElements, "GatherElements", 13, 2, in2, 1, 1, at),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "indices element 3 is 4, out of range [-4, 3]");
	harness_free(&h);
}

static void test_gather_nd(void)
{
	int64_t x[24];
	for (int i = 0; i < 24; i++)
		x[i] = i;
	gc_tensor t = tens(GC_DTYPE_INT64, 3, D(2, 3, 4), x);
	int64_t idx[4] = {0, 1, 2, 3};
	gc_tensor ti = tens(GC_DTYPE_INT64, 3, D(2, 1, 2), idx);
	gc_tensor *in[] = {&t, &ti};
	gc_attr at[] = {a_i("batch_dims", 1)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_GatherND, "GatherND", 13, 2, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 2, D(2, 1)));
	CHECK(same_i64(h.out[0].data, exp_gnd, 2));
	harness_free(&h);
	/* no batch dims, slices: indices [[1], [0]] pick x[1], x[0] */
	int64_t idx2[2] = {1, 0};
	gc_tensor ti2 = tens(GC_DTYPE_INT64, 2, D(2, 1), idx2);
	gc_tensor *in2[] = {&t, &ti2};
	CHECK_INT(harness_op(&h, gc_prepare_GatherND, "GatherND", 13, 2, in2, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_INT64, 3, D(2, 3, 4)));
	CHECK(same_i64(h.out[0].data, x + 12, 12));
	CHECK(same_i64((int64_t *)h.out[0].data + 12, x, 12));
	harness_free(&h);
}

static void test_scatter_elements(void)
{
	float data[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	int64_t idx[6] = {1, 1, 0, 2, 2, -3};
	float upd[6] = {1.5f, 2, 3, 4, 5, 6};
	gc_tensor td = tens(GC_DTYPE_FLOAT, 2, D(3, 3), data);
	gc_tensor ti = tens(GC_DTYPE_INT64, 2, D(3, 2), idx);
	gc_tensor tu = tens(GC_DTYPE_FLOAT, 2, D(3, 2), upd);
	gc_tensor *in[] = {&td, &ti, &tu};
	gc_attr at[] = {a_i("axis", 1), a_s("reduction", "add")};
	harness_run h;
	CHECK_INT(
	    harness_op(&h, gc_prepare_ScatterElements, "ScatterElements", 16, 3, in, 1, 2, at), 0);
	CHECK(same_f32(h.out[0].data, exp_sel, 9));
	harness_free(&h);
	/* none: plain assignment (row 0 column 1 gets the later update) */
	CHECK_INT(
	    harness_op(&h, gc_prepare_ScatterElements, "ScatterElements", 13, 3, in, 1, 1, at), 0);
	CHECK(same_f32(h.out[0].data, (const float[]){1, 2, 1, 3, 1, 4, 6, 1, 5}, 9));
	harness_free(&h);
}

static void test_scatter_nd(void)
{
	float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	int64_t idx[4] = {0, 1, 1, 0};
	float upd[4] = {2, 3, 4, 5};
	gc_tensor td = tens(GC_DTYPE_FLOAT, 3, D(2, 2, 2), data);
	gc_tensor ti = tens(GC_DTYPE_INT64, 2, D(2, 2), idx);
	gc_tensor tu = tens(GC_DTYPE_FLOAT, 2, D(2, 2), upd);
	gc_tensor *in[] = {&td, &ti, &tu};
	gc_attr at[] = {a_s("reduction", "mul")};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_ScatterND, "ScatterND", 16, 3, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(2, 2, 2)));
	CHECK(same_f32(h.out[0].data, exp_snd, 8));
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_ScatterND, "ScatterND", 13, 3, in, 1, 0, NULL), 0);
	CHECK(same_f32(h.out[0].data, (const float[]){1, 2, 2, 3, 4, 5, 7, 8}, 8));
	harness_free(&h);
	gc_tensor tbad = tens(GC_DTYPE_FLOAT, 2, D(2, 3), upd);
	gc_tensor *in2[] = {&td, &ti, &tbad};
	CHECK_INT(harness_op(&h, gc_prepare_ScatterND, "ScatterND", 13, 3, in2, 1, 0, NULL),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'updates' (float32, shape 2x3) does not fit");
	harness_free(&h);
}

/* ---- DepthToSpace, SpaceToDepth, Trilu, OneHot -------------------------- */

static void test_depth_space(void)
{
	float x[96];
	for (int i = 0; i < 96; i++)
		x[i] = (float)i;
	gc_tensor t = tens(GC_DTYPE_FLOAT, 4, D(2, 8, 2, 3), x);
	gc_tensor *in[] = {&t};
	gc_attr dcr[] = {a_i("blocksize", 2)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_DepthToSpace, "DepthToSpace", 13, 1, in, 1, 1, dcr), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 4, D(2, 2, 4, 6)));
	CHECK(same_f32(h.out[0].data, exp_d2s_dcr, 96));
	harness_free(&h);
	gc_attr crd[] = {a_i("blocksize", 2), a_s("mode", "CRD")};
	CHECK_INT(harness_op(&h, gc_prepare_DepthToSpace, "DepthToSpace", 13, 1, in, 1, 2, crd), 0);
	CHECK(same_f32(h.out[0].data, exp_d2s_crd, 96));
	harness_free(&h);
	gc_tensor t2 = tens(GC_DTYPE_FLOAT, 4, D(1, 2, 4, 6), x);
	gc_tensor *in2[] = {&t2};
	CHECK_INT(harness_op(&h, gc_prepare_SpaceToDepth, "SpaceToDepth", 13, 1, in2, 1, 1, dcr),
		  0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 4, D(1, 8, 2, 3)));
	CHECK(same_f32(h.out[0].data, exp_s2d, 48));
	harness_free(&h);
	gc_attr b3[] = {a_i("blocksize", 3)};
	CHECK_INT(harness_op(&h, gc_prepare_SpaceToDepth, "SpaceToDepth", 13, 1, in2, 1, 1, b3),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "divisible by blocksize 3");
	harness_free(&h);
	CHECK_INT(harness_op(&h, gc_prepare_DepthToSpace, "DepthToSpace", 13, 1, in, 1, 0, NULL),
		  GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'blocksize' is required");
	harness_free(&h);
}

static void test_trilu(void)
{
	int64_t x[20];
	for (int i = 0; i < 20; i++)
		x[i] = i + 1;
	gc_tensor t = tens(GC_DTYPE_INT64, 2, D(4, 5), x);
	int64_t k1 = 1, km1 = -1;
	gc_tensor tk1 = tens(GC_DTYPE_INT64, 0, NULL, &k1),
		  tkm1 = tens(GC_DTYPE_INT64, 0, NULL, &km1);
	harness_run h;
	gc_tensor *in0[] = {&t};
	CHECK_INT(harness_op(&h, gc_prepare_Trilu, "Trilu", 14, 1, in0, 1, 0, NULL), 0);
	CHECK(same_i64(h.out[0].data, exp_triu, 20));
	harness_free(&h);
	gc_tensor *in1[] = {&t, &tk1};
	CHECK_INT(harness_op(&h, gc_prepare_Trilu, "Trilu", 14, 2, in1, 1, 0, NULL), 0);
	CHECK(same_i64(h.out[0].data, exp_triu_k1, 20));
	harness_free(&h);
	gc_tensor *in2[] = {&t, &tkm1};
	gc_attr lower[] = {a_i("upper", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_Trilu, "Trilu", 14, 2, in2, 1, 1, lower), 0);
	CHECK(same_i64(h.out[0].data, exp_tril_km1, 20));
	harness_free(&h);
}

static void test_onehot(void)
{
	int64_t idx[6] = {1, -1, 5, 0, 3, -4};
	float depth = 4, vals[2] = {0.5f, 3};
	gc_tensor ti = tens(GC_DTYPE_INT64, 2, D(2, 3), idx);
	gc_tensor td = tens(GC_DTYPE_FLOAT, 0, NULL, &depth);
	gc_tensor tv = tens(GC_DTYPE_FLOAT, 1, D(2), vals);
	gc_tensor *in[] = {&ti, &td, &tv};
	gc_attr at[] = {a_i("axis", 0)};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_OneHot, "OneHot", 11, 3, in, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(4, 2, 3)));
	CHECK(same_f32(h.out[0].data, exp_onehot, 24));
	harness_free(&h);
	/* default axis -1: innermost */
	CHECK_INT(harness_op(&h, gc_prepare_OneHot, "OneHot", 11, 3, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_FLOAT, 3, D(2, 3, 4)));
	CHECK(same_f32(h.out[0].data, (const float[]){0.5f, 3, 0.5f, 0.5f}, 4));
	harness_free(&h);
	gc_tensor dyn = tens(GC_DTYPE_FLOAT, 0, NULL, NULL);
	gc_tensor *in2[] = {&ti, &dyn, &tv};
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_OneHot, "OneHot", 11, 3, in2, 1, 0, NULL),
		  GC_EUNSUPPORTED);
	CHECK_CONTAINS(s.err.msg, "'depth' must be known");
	sr_free(&s);
}

static void test_string_tensors_moved(void)
{
	/* string elements are pointers that own nothing: moved as bytes */
	const char *strs[2] = {"a", "b"};
	gc_tensor t = tens(GC_DTYPE_STRING, 1, D(2), strs);
	int64_t shp[2] = {2, 1};
	gc_tensor ts = tens(GC_DTYPE_INT64, 1, D(2), shp);
	gc_tensor *in[] = {&t, &ts};
	harness_run h;
	CHECK_INT(harness_op(&h, gc_prepare_Reshape, "Reshape", 13, 2, in, 1, 0, NULL), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_STRING, 2, D(2, 1)));
	CHECK(((char **)h.out[0].data)[1] == strs[1]);
	harness_free(&h);
	gc_tensor *two[] = {&t, &t};
	gc_attr at[] = {a_i("axis", 0)};
	CHECK_INT(harness_op(&h, gc_prepare_Concat, "Concat", 13, 2, two, 1, 1, at), 0);
	CHECK(shape_is(&h.out[0], GC_DTYPE_STRING, 1, D(4)));
	CHECK(((char **)h.out[0].data)[2] == strs[0]);
	CHECK(((char **)h.out[0].data)[3] == strs[1]);
	harness_free(&h);
	/* Shape only reads dims: fine for strings */
	split_run s;
	CHECK_INT(sr_prepare(&s, gc_prepare_Shape, "Shape", 15, 1, in, 1, 0, NULL), 0);
	CHECK(same_i64(s.out[0].data, D(2), 1));
	sr_free(&s);
}

TEST_MAIN(TEST(test_constant_value_tensor), TEST(test_constant_value_lists),
	  TEST(test_constant_errors), TEST(test_constant_of_shape), TEST(test_identity_f16),
	  TEST(test_dropout), TEST(test_shape_size), TEST(test_reshape), TEST(test_reshape_errors),
	  TEST(test_flatten), TEST(test_squeeze_opsets), TEST(test_unsqueeze_opsets),
	  TEST(test_transpose_small), TEST(test_transpose_perm),
	  TEST(test_transpose_large), TEST(test_concat),
	  TEST(test_split_opsets), TEST(test_slice_opset13), TEST(test_slice_opset9_bool),
	  TEST(test_gather), TEST(test_gather_runtime_index_error), TEST(test_expand),
	  TEST(test_tile), TEST(test_pad_modes), TEST(test_pad_opset2_int64), TEST(test_range),
	  TEST(test_gather_elements), TEST(test_gather_nd), TEST(test_scatter_elements),
	  TEST(test_scatter_nd), TEST(test_depth_space), TEST(test_trilu), TEST(test_onehot),
	  TEST(test_string_tensors_moved))
