/*
 * Training: the optimizers of ai.onnx.preview.training (runtime/kernels/
 * training.c), BatchNormalization in training mode (norm.c), and the
 * Gradient lowering (lib/pass-gradient.c) through gc_compile.
 *
 * Kernel expectations come from tests/unit/test-training-data.h, written by
 * gen-training-data.py with ONNX's own reference functions in float64:
 * float32 results within 1e-5 and float64 results within 1e-12, relative to
 * max(1, |expected|). Gradient graphs are checked against derivatives worked
 * out by hand in the comments, within 1e-5 (float32).
 */
#include <graphcc/graphcc.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "expect.h"
#include "graph-edit.h"
#include "harness.h"
#include "test-training-data.h"

#define F32_TOL 1e-5
#define F64_TOL 1e-12

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

static gc_attr attr_strs(const char *name, int64_t n, const char *const *v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_STRINGS, .n = n};
	a.v.strings = v;
	return a;
}

/* ---- optimizers ---- */

static void test_adagrad_two_tensors(void)
{
	float r = 0.1f;
	int64_t t = 2;
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 0, NULL, &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  x1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), adagrad2_x1),
		  x2 = harness_tensor(GC_DTYPE_FLOAT, 2, D(2, 2), adagrad2_x2),
		  g1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), adagrad2_g1),
		  g2 = harness_tensor(GC_DTYPE_FLOAT, 2, D(2, 2), adagrad2_g2),
		  h1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), adagrad2_h1),
		  h2 = harness_tensor(GC_DTYPE_FLOAT, 2, D(2, 2), adagrad2_h2);
	gc_tensor *in[] = {&tr, &tt, &x1, &x2, &g1, &g2, &h1, &h2};
	gc_attr at[] = {attr_f("norm_coefficient", 0.01f), attr_f("epsilon", 1e-5f),
			attr_f("decay_factor", 0.1f)};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Adagrad, "Adagrad", 1, 8, in, 4, 3, at);
	if (rc)
		fprintf(stderr, "  %s\n", h.err.msg);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_FLOAT, 1, D(3), adagrad2_want0_1, 3, F32_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_FLOAT, 2, D(2, 2), adagrad2_want0_2, 4, F32_TOL) &&
		 expect_out(&h.out[2], GC_DTYPE_FLOAT, 1, D(3), adagrad2_want1_1, 3, F32_TOL) &&
		 expect_out(&h.out[3], GC_DTYPE_FLOAT, 2, D(2, 2), adagrad2_want1_2, 4, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* float64, T = 3: the bias correction and the post-update regularization */
static void test_adam_two_tensors_f64(void)
{
	double r = 0.05;
	int64_t t = 3;
	gc_tensor tr = harness_tensor(GC_DTYPE_DOUBLE, 0, NULL, &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  x1 = harness_tensor(GC_DTYPE_DOUBLE, 1, D(4), adam2_x1),
		  x2 = harness_tensor(GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_x2),
		  g1 = harness_tensor(GC_DTYPE_DOUBLE, 1, D(4), adam2_g1),
		  g2 = harness_tensor(GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_g2),
		  v1 = harness_tensor(GC_DTYPE_DOUBLE, 1, D(4), adam2_v1),
		  v2 = harness_tensor(GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_v2),
		  h1 = harness_tensor(GC_DTYPE_DOUBLE, 1, D(4), adam2_h1),
		  h2 = harness_tensor(GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_h2);
	gc_tensor *in[] = {&tr, &tt, &x1, &x2, &g1, &g2, &v1, &v2, &h1, &h2};
	gc_attr at[] = {attr_f("norm_coefficient", 0.01f), attr_f("norm_coefficient_post", 0.02f),
			attr_f("alpha", 0.9f), attr_f("beta", 0.99f), attr_f("epsilon", 1e-6f)};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Adam, "Adam", 1, 10, in, 6, 5, at);
	if (rc)
		fprintf(stderr, "  %s\n", h.err.msg);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_DOUBLE, 1, D(4), adam2_want0_1, 4, F64_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_want0_2, 6, F64_TOL) &&
		 expect_out(&h.out[2], GC_DTYPE_DOUBLE, 1, D(4), adam2_want1_1, 4, F64_TOL) &&
		 expect_out(&h.out[3], GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_want1_2, 6, F64_TOL) &&
		 expect_out(&h.out[4], GC_DTYPE_DOUBLE, 1, D(4), adam2_want2_1, 4, F64_TOL) &&
		 expect_out(&h.out[5], GC_DTYPE_DOUBLE, 2, D(2, 3), adam2_want2_2, 6, F64_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* T = 0 (no bias correction), the default attributes except epsilon */
static void test_adam_defaults(void)
{
	float r = 0.1f;
	int64_t t = 0;
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 1, D(1), &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  x = harness_tensor(GC_DTYPE_FLOAT, 1, D(5), adam1_x1),
		  g = harness_tensor(GC_DTYPE_FLOAT, 1, D(5), adam1_g1),
		  v = harness_tensor(GC_DTYPE_FLOAT, 1, D(5), adam1_v1),
		  hh = harness_tensor(GC_DTYPE_FLOAT, 1, D(5), adam1_h1);
	gc_tensor *in[] = {&tr, &tt, &x, &g, &v, &hh};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Adam, "Adam", 1, 6, in, 3, 0, NULL);
	if (rc)
		fprintf(stderr, "  %s\n", h.err.msg);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_FLOAT, 1, D(5), adam1_want0_1, 5, F32_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_FLOAT, 1, D(5), adam1_want1_1, 5, F32_TOL) &&
		 expect_out(&h.out[2], GC_DTYPE_FLOAT, 1, D(5), adam1_want2_1, 5, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* ONNX 1.12's test_adam_multiple data with the epsilon its expected outputs
 * use (its model lacks the attribute): the values ONNX stored. */
static void test_adam_onnx_multiple_with_epsilon(void)
{
	float r = 0.1f;
	int64_t t = 0;
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 0, NULL, &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  x1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(1), adamonnx_x1),
		  x2 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), adamonnx_x2),
		  g1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(1), adamonnx_g1),
		  g2 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), adamonnx_g2),
		  v1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(1), adamonnx_v1),
		  v2 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), adamonnx_v2),
		  h1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(1), adamonnx_h1),
		  h2 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), adamonnx_h2);
	gc_tensor *in[] = {&tr, &tt, &x1, &x2, &g1, &g2, &v1, &v2, &h1, &h2};
	gc_attr at[] = {attr_f("norm_coefficient", 0.001f), attr_f("alpha", 0.95f),
			attr_f("beta", 0.85f), attr_f("epsilon", 1e-2f)};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Adam, "Adam", 1, 10, in, 6, 4, at);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_FLOAT, 1, D(1), adamonnx_want0_1, 1, F32_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_FLOAT, 1, D(2), adamonnx_want0_2, 2, F32_TOL) &&
		 expect_out(&h.out[4], GC_DTYPE_FLOAT, 1, D(1), adamonnx_want2_1, 1, F32_TOL) &&
		 expect_out(&h.out[5], GC_DTYPE_FLOAT, 1, D(2), adamonnx_want2_2, 2, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* T = 5: beta scales the gradient (at T = 0 it would be 1) */
static void test_momentum_standard(void)
{
	float r = 0.1f;
	int64_t t = 5;
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 0, NULL, &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  x1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), mom2_x1),
		  x2 = harness_tensor(GC_DTYPE_FLOAT, 2, D(3, 1), mom2_x2),
		  g1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), mom2_g1),
		  g2 = harness_tensor(GC_DTYPE_FLOAT, 2, D(3, 1), mom2_g2),
		  v1 = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), mom2_v1),
		  v2 = harness_tensor(GC_DTYPE_FLOAT, 2, D(3, 1), mom2_v2);
	gc_tensor *in[] = {&tr, &tt, &x1, &x2, &g1, &g2, &v1, &v2};
	gc_attr at[] = {attr_f("norm_coefficient", 0.001f), attr_f("alpha", 0.95f),
			attr_f("beta", 0.85f), attr_s("mode", "standard")};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Momentum, "Momentum", 1, 8, in, 4, 4, at);
	if (rc)
		fprintf(stderr, "  %s\n", h.err.msg);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_FLOAT, 1, D(2), mom2_want0_1, 2, F32_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_FLOAT, 2, D(3, 1), mom2_want0_2, 3, F32_TOL) &&
		 expect_out(&h.out[2], GC_DTYPE_FLOAT, 1, D(2), mom2_want1_1, 2, F32_TOL) &&
		 expect_out(&h.out[3], GC_DTYPE_FLOAT, 2, D(3, 1), mom2_want1_2, 3, F32_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* Nesterov, float64; only X_new asked for (V_new left out) */
static void test_momentum_nesterov_f64(void)
{
	double r = 0.2;
	int64_t t = 0;
	gc_tensor tr = harness_tensor(GC_DTYPE_DOUBLE, 0, NULL, &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  x = harness_tensor(GC_DTYPE_DOUBLE, 1, D(6), nest1_x1),
		  g = harness_tensor(GC_DTYPE_DOUBLE, 1, D(6), nest1_g1),
		  v = harness_tensor(GC_DTYPE_DOUBLE, 1, D(6), nest1_v1);
	gc_tensor *in[] = {&tr, &tt, &x, &g, &v};
	gc_attr at[] = {attr_f("norm_coefficient", 0.01f), attr_f("alpha", 0.9f),
			attr_f("beta", 0.5f), attr_s("mode", "nesterov")};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Momentum, "Momentum", 1, 5, in, 2, 4, at);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_DOUBLE, 1, D(6), nest1_want0_1, 6, F64_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_DOUBLE, 1, D(6), nest1_want1_1, 6, F64_TOL);
	harness_free(&h);
	CHECK(ok);
	rc = harness_op(&h, gc_prepare_Momentum, "Momentum", 1, 5, in, 1, 4, at);
	ok = rc == 0 && expect_out(&h.out[0], GC_DTYPE_DOUBLE, 1, D(6), nest1_want0_1, 6, F64_TOL);
	harness_free(&h);
	CHECK(ok);
}

#define OPT_FAILS(op, nin, ins, nout, nattr, attrs, needle)                                        \
	do {                                                                                       \
		harness_run hr_;                                                                   \
		int rc_ = harness_op(&hr_, gc_prepare_##op, #op, 1, (nin), (ins), (nout), (nattr), \
				     (attrs));                                                     \
		harness_free(&hr_);                                                                \
		CHECK(rc_ != 0);                                                                   \
		CHECK_CONTAINS(hr_.err.msg, needle);                                               \
	} while (0)

static void test_optimizer_errors(void)
{
	float r = 0.1f, x[3] = {0}, x2[2] = {0};
	double xd[3] = {0};
	int64_t t = 0, ti = 1;
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 0, NULL, &r),
		  tt = harness_tensor(GC_DTYPE_INT64, 0, NULL, &t),
		  tx = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), x),
		  ts = harness_tensor(GC_DTYPE_FLOAT, 1, D(2), x2),
		  td = harness_tensor(GC_DTYPE_DOUBLE, 1, D(3), xd),
		  ri = harness_tensor(GC_DTYPE_INT64, 0, NULL, &ti),
		  tf = harness_tensor(GC_DTYPE_FLOAT, 0, NULL, &r),
		  rv = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), x);
	gc_attr mom[] = {attr_f("norm_coefficient", 0), attr_f("alpha", 0.9f), attr_f("beta", 1),
			 attr_s("mode", "standard")};
	gc_tensor *six[] = {&tr, &tt, &tx, &tx, &tx, &tx};
	OPT_FAILS(Adagrad, 6, six, 2, 0, NULL, "2 + 3*n");
	OPT_FAILS(Adam, 5 + 0, six, 2, 0, NULL, "2 + 4*n");
	gc_tensor *five[] = {&tr, &tt, &tx, &tx, &tx};
	OPT_FAILS(Adagrad, 5, five, 3, 0, NULL, "at most 2");
	gc_tensor *g_shape[] = {&tr, &tt, &tx, &ts, &tx};
	OPT_FAILS(Adagrad, 5, g_shape, 2, 0, NULL, "input G_1 is float32 2");
	gc_tensor *mixed[] = {&tr, &tt, &tx, &tx, &td};
	OPT_FAILS(Momentum, 5, mixed, 2, 4, mom, "input V_1 is float64");
	gc_tensor *r_int[] = {&ri, &tt, &tx, &tx, &tx};
	OPT_FAILS(Adagrad, 5, r_int, 2, 0, NULL, "input R (learning rate)");
	gc_tensor *r_vec[] = {&rv, &tt, &tx, &tx, &tx};
	OPT_FAILS(Adagrad, 5, r_vec, 2, 0, NULL, "of 3 elements");
	gc_tensor *t_float[] = {&tr, &tf, &tx, &tx, &tx};
	OPT_FAILS(Adagrad, 5, t_float, 2, 0, NULL, "input T (update count)");
	OPT_FAILS(Momentum, 5, five, 2, 3, mom, "required attribute 'mode'");
	gc_attr nest[] = {attr_f("norm_coefficient", 0), attr_f("alpha", 0.9f), attr_f("beta", 1),
			  attr_s("mode", "heavy-ball")};
	OPT_FAILS(Momentum, 5, five, 2, 4, nest, "'heavy-ball'");
	gc_attr wrong_type[] = {attr_i("epsilon", 1)};
	OPT_FAILS(Adagrad, 5, five, 2, 1, wrong_type, "epsilon");
	int64_t xi[3] = {0};
	gc_tensor txi = harness_tensor(GC_DTYPE_INT64, 1, D(3), xi);
	gc_tensor *ints[] = {&tr, &tt, &txi, &txi, &txi};
	OPT_FAILS(Adagrad, 5, ints, 2, 0, NULL, "input X_1 is int64");
}

/* ---- BatchNormalization, training mode ---- */

static void test_batchnorm_training_f32(void)
{
	gc_tensor x = harness_tensor(GC_DTYPE_FLOAT, 4, D(2, 3, 2, 2), bn32_x),
		  s = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), bn32_s),
		  b = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), bn32_b),
		  m = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), bn32_m),
		  v = harness_tensor(GC_DTYPE_FLOAT, 1, D(3), bn32_v);
	gc_tensor *in[] = {&x, &s, &b, &m, &v};
	gc_attr at[] = {attr_i("training_mode", 1), attr_f("epsilon", 1e-3f),
			attr_f("momentum", 0.8f)};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_BatchNormalization, "BatchNormalization", 15, 5, in, 3,
			    3, at);
	if (rc)
		fprintf(stderr, "  %s\n", h.err.msg);
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_FLOAT, 4, D(2, 3, 2, 2), bn32_y, 24, F32_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_FLOAT, 1, D(3), bn32_rm, 3, F32_TOL) &&
		 expect_out(&h.out[2], GC_DTYPE_FLOAT, 1, D(3), bn32_rv, 3, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	/* Y alone (opset 14), with the batch's statistics all the same */
	rc = harness_op(&h, gc_prepare_BatchNormalization, "BatchNormalization", 14, 5, in, 1, 3,
			at);
	ok =
	    rc == 0 && expect_out(&h.out[0], GC_DTYPE_FLOAT, 4, D(2, 3, 2, 2), bn32_y, 24, F32_TOL);
	harness_free(&h);
	CHECK(ok);
	/* before opset 14 the attribute does not exist: inference, with the
	 * given mean and variance */
	rc =
	    harness_op(&h, gc_prepare_BatchNormalization, "BatchNormalization", 9, 5, in, 1, 3, at);
	double inference =
	    bn32_s[0] * (bn32_x[0] - bn32_m[0]) / sqrt(bn32_v[0] + 1e-3f) + bn32_b[0];
	ok = rc == 0 && fabs(((const float *)h.out[0].data)[0] - inference) < 1e-5 &&
	     fabs(inference - bn32_y[0]) > 0.1;
	harness_free(&h);
	CHECK(ok);
}

/* float64, rank 3, the default momentum (0.9) and epsilon */
static void test_batchnorm_training_f64(void)
{
	gc_tensor x = harness_tensor(GC_DTYPE_DOUBLE, 3, D(3, 2, 3), bn64_x),
		  s = harness_tensor(GC_DTYPE_DOUBLE, 1, D(2), bn64_s),
		  b = harness_tensor(GC_DTYPE_DOUBLE, 1, D(2), bn64_b),
		  m = harness_tensor(GC_DTYPE_DOUBLE, 1, D(2), bn64_m),
		  v = harness_tensor(GC_DTYPE_DOUBLE, 1, D(2), bn64_v);
	gc_tensor *in[] = {&x, &s, &b, &m, &v};
	gc_attr at[] = {attr_i("training_mode", 1)};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_BatchNormalization, "BatchNormalization", 15, 5, in, 3,
			    1, at);
	if (rc)
		fprintf(stderr, "  %s\n", h.err.msg);
	/* the default epsilon is the float 1e-5, which the reference used too */
	int ok = rc == 0 &&
		 expect_out(&h.out[0], GC_DTYPE_DOUBLE, 3, D(3, 2, 3), bn64_y, 18, F64_TOL) &&
		 expect_out(&h.out[1], GC_DTYPE_DOUBLE, 1, D(2), bn64_rm, 2, F64_TOL) &&
		 expect_out(&h.out[2], GC_DTYPE_DOUBLE, 1, D(2), bn64_rv, 2, F64_TOL);
	harness_free(&h);
	CHECK(ok);
}

/* ---- graphs: building and running ---- */

static void add_tensor(gc_graph *g, const char *name, gc_dtype dt, int32_t rank,
		       const int64_t *dims, const void *data, gc_error *err)
{
	gc_tensor t = harness_tensor(dt, rank, dims, data);
	gc_graph_add_constant(g, name, &t, err);
}

static void add_node(gc_graph *g, const char *name, const char *domain, const char *op,
		     int32_t n_in, const char *const *in, int32_t n_out, const char *const *out,
		     int32_t n_attr, const gc_attr *attrs, gc_error *err)
{
	gc_graph_add_node(g, name, domain, op, n_in, in, n_out, out, n_attr, attrs, err);
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__})
#define TRAINING "ai.onnx.preview.training"

/* Compiles g (no_optimize as asked), runs it with no inputs, and checks
 * output `out` against want (float32). */
static int run_and_check(const gc_graph *g, int no_optimize, const char *out, const double *want,
			 int64_t n, gc_error *err)
{
	gc_compile_options opt = {.no_optimize = no_optimize};
	gc_program *p = NULL;
	gc_session *s = NULL;
	int ok = 0;
	if (gc_compile(g, &opt, &p, err) || gc_session_new(p, NULL, &s, err) ||
	    gc_session_run(s, err))
		goto out;
	for (int i = 0; i < gc_program_num_outputs(p); i++) {
		const char *name;
		gc_program_output(p, i, &name);
		if (strcmp(name, out))
			continue;
		const gc_tensor *t = gc_session_output(s, i);
		ok = gc_tensor_numel(t) == n;
		for (int64_t k = 0; ok && k < n; k++)
			if (!(fabs(((const float *)t->data)[k] - want[k]) <=
			      F32_TOL * fmax(1, fabs(want[k])))) {
				fprintf(stderr, "  %s[%lld]: got %.9g, expected %.9g\n", out,
					(long long)k, ((const float *)t->data)[k], want[k]);
				ok = 0;
			}
	}
out:
	if (err->code)
		fprintf(stderr, "  %s\n", err->msg);
	gc_session_free(s);
	gc_program_free(p);
	return ok;
}

/*
 * y = a * b + a, a (2, 3), b (3) broadcast: dy/da = b + 1 (per row),
 * dy/db = sum over rows of a.
 */
static gc_graph *broadcast_graph(gc_error *err)
{
	static const float a[] = {1, 2, 3, 4, 5, 6}, b[] = {0.5f, -1, 2};
	gc_graph *g = gc_graph_new("broadcast");
	gc_graph_set_opset(g, "", 13, err);
	gc_graph_set_opset(g, TRAINING, 1, err);
	add_tensor(g, "a", GC_DTYPE_FLOAT, 2, D(2, 3), a, err);
	add_tensor(g, "b", GC_DTYPE_FLOAT, 1, D(3), b, err);
	add_node(g, "mul", "", "Mul", 2, NAMES("a", "b"), 1, NAMES("ab"), 0, NULL, err);
	add_node(g, "add", "", "Add", 2, NAMES("ab", "a"), 1, NAMES("y"), 0, NULL, err);
	gc_attr at[] = {attr_strs("xs", 2, NAMES("a", "b")), attr_s("y", "y")};
	add_node(g, "grad", TRAINING, "Gradient", 2, NAMES("a", "b"), 2, NAMES("da", "db"), 2, at,
		 err);
	gc_graph_add_output(g, "da", err);
	gc_graph_add_output(g, "db", err);
	return g;
}

static void test_gradient_broadcast(void)
{
	gc_error err = {0};
	gc_graph *g = broadcast_graph(&err);
	CHECK_STR(err.msg, "");
	static const double da[] = {1.5, 0, 3, 1.5, 0, 3}, db[] = {5, 7, 9};
	for (int no_opt = 0; no_opt <= 1; no_opt++) {
		CHECK(run_and_check(g, no_opt, "da", da, 6, &err));
		CHECK(run_and_check(g, no_opt, "db", db, 3, &err));
	}
	/* the pass itself: the Gradient node is gone, ReduceSum sums db */
	gc_graph *o = gc_graph_clone(g, &err);
	gc_pass_ctx ctx = {.g = o, .err = &err};
	CHECK_INT(gc_pass_gradient(&ctx), 0);
	CHECK_INT(ctx.changed, 1);
	int reduce = 0;
	for (int i = 0; i < gc_graph_num_nodes(o); i++) {
		const char *dom, *op;
		gc_graph_node(o, i, NULL, &dom, &op);
		CHECK(strcmp(op, "Gradient"));
		reduce += !strcmp(op, "ReduceSum");
	}
	CHECK_INT(reduce, 1);
	gc_graph_free(o);
	gc_graph_free(g);
}

/*
 * Second order, the Gradient nodes listed in the wrong order: y = a * a * a,
 * g1 = dy/da = 3 a^2, g2 = d(g1)/da = 6 a. The pass lowers g1 first (g2's
 * forward graph holds it), then differentiates g1's backward graph.
 */
static void test_gradient_second_order(void)
{
	gc_error err = {0};
	static const float a[] = {1, -2, 0.5f};
	gc_graph *g = gc_graph_new("second-order");
	gc_graph_set_opset(g, "", 17, &err);
	gc_graph_set_opset(g, TRAINING, 1, &err);
	add_tensor(g, "a", GC_DTYPE_FLOAT, 1, D(3), a, &err);
	gc_attr at2[] = {attr_strs("xs", 1, NAMES("a")), attr_s("y", "g1")};
	add_node(g, "second", TRAINING, "Gradient", 1, NAMES("a"), 1, NAMES("g2"), 2, at2, &err);
	add_node(g, "sq", "", "Mul", 2, NAMES("a", "a"), 1, NAMES("aa"), 0, NULL, &err);
	add_node(g, "cube", "", "Mul", 2, NAMES("aa", "a"), 1, NAMES("y"), 0, NULL, &err);
	gc_attr at1[] = {attr_strs("xs", 1, NAMES("a")), attr_s("y", "y")};
	add_node(g, "first", TRAINING, "Gradient", 1, NAMES("a"), 1, NAMES("g1"), 2, at1, &err);
	gc_graph_add_output(g, "g1", &err);
	gc_graph_add_output(g, "g2", &err);
	CHECK_STR(err.msg, "");
	static const double g1[] = {3, 12, 0.75}, g2[] = {6, -12, 3};
	CHECK(run_and_check(g, 0, "g1", g1, 3, &err));
	CHECK(run_and_check(g, 0, "g2", g2, 3, &err));
	gc_graph_free(g);
}

static int compile_fails(const gc_graph *g, gc_error *err)
{
	gc_program *p = NULL;
	int rc = gc_compile(g, NULL, &p, err);
	gc_program_free(p);
	return rc != 0;
}

static void test_gradient_refusals(void)
{
	static const float a[] = {1, 2, 3};
	const char *sm_out[] = {"s"};
	struct {
		const char *op, *domain, *needle;
	} cases[] = {
	    /* no rule for Sin: named with the node */
	    {"Sin", "", "Gradient 'grad': cannot differentiate node 'f' (Sin)"},
	    /* a custom op without its package: the forward graph does not compile */
	    {"Swish", "com.example", "no op package provides 'Swish' in domain 'com.example'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_error err = {0};
		gc_graph *g = gc_graph_new("refuse");
		gc_graph_set_opset(g, "", 13, &err);
		add_tensor(g, "a", GC_DTYPE_FLOAT, 1, D(3), a, &err);
		add_node(g, "f", cases[i].domain, cases[i].op, 1, NAMES("a"), 1, sm_out, 0, NULL,
			 &err);
		add_node(g, "neg", "", "Neg", 1, NAMES("s"), 1, NAMES("y"), 0, NULL, &err);
		gc_attr at[] = {attr_strs("xs", 1, NAMES("a")), attr_s("y", "y")};
		add_node(g, "grad", TRAINING, "Gradient", 1, NAMES("a"), 1, NAMES("da"), 2, at,
			 &err);
		gc_graph_add_output(g, "da", &err);
		CHECK_STR(err.msg, "");
		CHECK(compile_fails(g, &err));
		CHECK_CONTAINS(err.msg, "Gradient 'grad'");
		CHECK_CONTAINS(err.msg, cases[i].needle);
		gc_graph_free(g);
	}

	/* bad attributes and arity, each named */
	struct {
		int n_attr, n_in;
		const char *xs, *y, *needle;
	} bad[] = {
	    {1, 1, "a", NULL, "attribute 'y' is missing"},
	    {2, 1, "nothing", "y", "'xs' names 'nothing'"},
	    {2, 1, "a", "nowhere", "'y' names 'nowhere'"},
	    {2, 2, "a", "y", "has 2 inputs; it needs one per name in xs and zs (1 + 0)"},
	    {2, 1, "a", "da", "its y depends on its own output"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		gc_error err = {0};
		gc_graph *g = gc_graph_new("bad");
		gc_graph_set_opset(g, "", 13, &err);
		add_tensor(g, "a", GC_DTYPE_FLOAT, 1, D(3), a, &err);
		add_node(g, "neg", "", "Neg", 1, NAMES("a"), 1, NAMES("y"), 0, NULL, &err);
		const char *xs[] = {bad[i].xs};
		gc_attr at[] = {attr_strs("xs", 1, xs), attr_s("y", bad[i].y ? bad[i].y : "")};
		add_node(g, "grad", TRAINING, "Gradient", bad[i].n_in, NAMES("a", "a"), 1,
			 NAMES("da"), bad[i].n_attr, at, &err);
		gc_graph_add_output(g, "da", &err);
		CHECK_STR(err.msg, "");
		CHECK(compile_fails(g, &err));
		CHECK_CONTAINS(err.msg, bad[i].needle);
		gc_graph_free(g);
	}

	/* y depends on the Gradient's own output */
	gc_error err = {0};
	gc_graph *g = gc_graph_new("cycle");
	gc_graph_set_opset(g, "", 13, &err);
	add_tensor(g, "a", GC_DTYPE_FLOAT, 1, D(3), a, &err);
	gc_attr at[] = {attr_strs("xs", 1, NAMES("a")), attr_s("y", "y")};
	add_node(g, "grad", TRAINING, "Gradient", 1, NAMES("a"), 1, NAMES("da"), 2, at, &err);
	add_node(g, "mul", "", "Mul", 2, NAMES("a", "da"), 1, NAMES("y"), 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_STR(err.msg, "");
	CHECK(compile_fails(g, &err));
	CHECK_CONTAINS(err.msg, "node 'grad' (ai.onnx.preview.training::Gradient): its y depends "
				"on its own output");
	gc_graph_free(g);
}

/* A training-mode BatchNormalization after a Conv is not folded into it:
 * its output is normalised per channel over the batch, so each channel's
 * mean is B and its variance scale^2 * var / (var + epsilon). */
static void test_batchnorm_training_not_folded(void)
{
	gc_error err = {0};
	float x[2 * 2 * 4 * 4], w[3 * 2 * 3 * 3], s[3] = {1.5f, -0.5f, 2}, b[3] = {0.25f, -1, 3},
						  m[3] = {5, 5, 5}, v[3] = {9, 9, 9};
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
		x[i] = (float)sin(0.37 * (double)i) * 2;
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
		w[i] = (float)cos(0.91 * (double)i);
	gc_graph *g = gc_graph_new("bn-train");
	gc_graph_set_opset(g, "", 15, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, D(2, 2, 4, 4), NULL, &err);
	add_tensor(g, "w", GC_DTYPE_FLOAT, 4, D(3, 2, 3, 3), w, &err);
	const char *pn[] = {"s", "b", "m", "v"};
	const float *pv[] = {s, b, m, v};
	for (int i = 0; i < 4; i++)
		add_tensor(g, pn[i], GC_DTYPE_FLOAT, 1, D(3), pv[i], &err);
	gc_attr pads = {
	    .name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = (const int64_t[]){1, 1, 1, 1}};
	add_node(g, "conv", "", "Conv", 2, NAMES("x", "w"), 1, NAMES("c"), 1, &pads, &err);
	gc_attr tm[] = {attr_i("training_mode", 1), attr_f("epsilon", 1e-2f)};
	add_node(g, "bn", "", "BatchNormalization", 5, NAMES("c", "s", "b", "m", "v"), 1,
		 NAMES("y"), 2, tm, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_STR(err.msg, "");
	gc_program *p = NULL;
	gc_session *se = NULL;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	CHECK_INT(gc_program_num_nodes(p), 2);
	CHECK_INT(gc_session_new(p, NULL, &se, &err), 0);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, D(2, 2, 4, 4), x);
	CHECK_INT(gc_session_set_input(se, 0, &tx, &err), 0);
	CHECK_INT(gc_session_run(se, &err), 0);
	const gc_tensor *y = gc_session_output(se, 0);
	CHECK_INT(gc_tensor_numel(y), 2 * 3 * 4 * 4);
	const float *yd = y->data;
	int ok = 1;
	for (int c = 0; c < 3 && ok; c++) {
		double sum = 0, sq = 0;
		for (int n = 0; n < 2; n++)
			for (int k = 0; k < 16; k++)
				sum += yd[(n * 3 + c) * 16 + k];
		double mean = sum / 32;
		for (int n = 0; n < 2; n++)
			for (int k = 0; k < 16; k++) {
				double d = yd[(n * 3 + c) * 16 + k] - mean;
				sq += d * d;
			}
		double var = sq / 32;
		/* var(y) = s^2 var(c) / (var(c) + eps) <= s^2; equal within eps */
		ok = fabs(mean - b[c]) <= 1e-5 * fmax(1, fabs(b[c])) &&
		     var <= s[c] * s[c] * 1.00001 && var >= s[c] * s[c] * 0.99;
		if (!ok)
			fprintf(stderr, "  channel %d: mean %.9g (B %g), var %.9g (scale^2 %g)\n",
				c, mean, b[c], var, s[c] * s[c]);
	}
	gc_session_free(se);
	gc_program_free(p);
	gc_graph_free(g);
	CHECK(ok);
}

TEST_MAIN({"adagrad_two_tensors", test_adagrad_two_tensors},
	  {"adam_two_tensors_f64", test_adam_two_tensors_f64},
	  {"adam_defaults", test_adam_defaults},
	  {"adam_onnx_multiple_with_epsilon", test_adam_onnx_multiple_with_epsilon},
	  {"momentum_standard", test_momentum_standard},
	  {"momentum_nesterov_f64", test_momentum_nesterov_f64},
	  {"optimizer_errors", test_optimizer_errors},
	  {"batchnorm_training_f32", test_batchnorm_training_f32},
	  {"batchnorm_training_f64", test_batchnorm_training_f64},
	  {"batchnorm_training_not_folded", test_batchnorm_training_not_folded},
	  {"gradient_broadcast", test_gradient_broadcast},
	  {"gradient_second_order", test_gradient_second_order},
	  {"gradient_refusals", test_gradient_refusals})
