/*
 * What the generated kernel unit tests share (tests/conformance/
 * gen-unit-tests.py writes test-<family>.c files that include this): shape
 * literals, a checker of an output's type, shape and values, and the runner
 * of a table of op cases.
 */
#ifndef GC_TEST_EXPECT_H
#define GC_TEST_EXPECT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "kernels/value-impl.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* Checks t's type and shape, then every value against want. */
static inline int expect_out(const gc_tensor *t, gc_dtype dt, int32_t rank, const int64_t *dims,
			     const double *want, int64_t n, double tol)
{
	char a[128], b[128];
	int ok = t->dtype == dt && t->rank == rank;
	for (int i = 0; ok && i < rank; i++)
		ok = t->dims[i] == dims[i];
	if (!ok) {
		fprintf(stderr, "  got %s %s, expected %s %s\n", gc_dtype_name(t->dtype),
			gc_shape_str(t->dims, t->rank, a, sizeof a), gc_dtype_name(dt),
			gc_shape_str(dims, rank, b, sizeof b));
		return 0;
	}
	for (int64_t i = 0; i < n; i++) {
		double g = gc_kv_load(t, i), w = want[i];
		double lim = tol * (fabs(w) > 1 ? fabs(w) : 1);
		if (isnan(w) ? !isnan(g) : !(fabs(g - w) <= lim)) {
			fprintf(stderr, "  element %lld: got %.9g, expected %.9g (tol %g)\n",
				(long long)i, g, w, lim);
			return 0;
		}
	}
	return 1;
}

/* One input of a case; data NULL: the input is absent. */
typedef struct {
	gc_dtype dtype;
	int32_t rank;
	const int64_t *dims;
	const void *data;
} op_input;

/* One expected output: type, shape, values and the relative tolerance (0 for
 * integers and bools); want NULL: that output is not compared. */
typedef struct {
	gc_dtype dtype;
	int32_t rank;
	const int64_t *dims;
	const double *want;
	int64_t n;
	double tol;
} op_output;

/* One kernel case: run op (through its prepare) at opset on the inputs with
 * the attributes; then either the n_want outputs must match, or (error != 0)
 * the op must fail with that code and a message containing error_msg. file
 * and line say where the case is written. */
typedef struct {
	const char *name, *file;
	int line;
	gc_prepare_fn prepare;
	const char *op;
	int opset, n_in, n_out, n_attr, n_want;
	const op_input *in;
	gc_attr *attrs;
	const op_output *want;
	int error;
	const char *error_msg;
} op_case;

static inline void op_case_run(const op_case *c)
{
	gc_tensor t[16], *in[16];
	if (c->n_in > 16 || c->n_out > 8 || c->n_want > c->n_out) {
		fprintf(stderr, "%s:%d: %s: %d inputs, %d outputs, %d compared: too many\n",
			c->file, c->line, c->name, c->n_in, c->n_out, c->n_want);
		check_failed_ = 1;
		return;
	}
	for (int i = 0; i < c->n_in; i++) {
		const op_input *a = &c->in[i];
		t[i] = harness_tensor(a->dtype, a->rank, a->dims, a->data);
		in[i] = a->data ? &t[i] : NULL;
	}
	harness_run h;
	int rc =
	    harness_op(&h, c->prepare, c->op, c->opset, c->n_in, in, c->n_out, c->n_attr, c->attrs);
	int ok = rc == c->error && (!c->error || strstr(h.err.msg, c->error_msg));
	if (!ok)
		fprintf(stderr, "%s:%d: %s: %s returned %d (%s), expected %d (%s)\n", c->file,
			c->line, c->name, c->op, rc, rc ? h.err.msg : "ok", c->error,
			c->error ? c->error_msg : "ok");
	for (int j = 0; ok && !c->error && j < c->n_want; j++) {
		const op_output *w = &c->want[j];
		if (w->want &&
		    !expect_out(&h.out[j], w->dtype, w->rank, w->dims, w->want, w->n, w->tol)) {
			fprintf(stderr, "%s:%d: %s: output %d differs (above)\n", c->file, c->line,
				c->name, j);
			ok = 0;
		}
	}
	harness_free(&h);
	if (!ok)
		check_failed_ = 1;
}

/* main() over a table of op cases: each row is one test, named by its name. */
#define OP_CASES_MAIN(table)                                                                       \
	static const char *op_case_name_(size_t i)                                                 \
	{                                                                                          \
		return table[i].name;                                                              \
	}                                                                                          \
	static void op_case_run_(size_t i)                                                         \
	{                                                                                          \
		op_case_run(&table[i]);                                                            \
	}                                                                                          \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		return check_run_all_(argc, argv, sizeof table / sizeof table[0], op_case_name_,   \
				      op_case_run_);                                               \
	}

#endif
