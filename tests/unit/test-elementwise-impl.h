/* Helpers shared by the elementwise kernel tests (test-elementwise.c,
 * test-unary.c). */
#ifndef GC_TEST_ELEMENTWISE_IMPL_H
#define GC_TEST_ELEMENTWISE_IMPL_H

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

static inline gc_tensor tensor(gc_dtype dt, int rank, const int64_t *dims, const void *data)
{
	return harness_tensor(dt, rank, dims, data);
}

static inline gc_tensor vec(gc_dtype dt, int64_t n, const void *data)
{
	return harness_tensor(dt, 1, &n, data);
}

static inline gc_tensor scalar(gc_dtype dt, const void *data)
{
	return harness_tensor(dt, 0, NULL, data);
}

static inline gc_attr attr_f(const char *name, float v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOAT, .n = 1};
	a.v.f = v;
	return a;
}

static inline gc_attr attr_i(const char *name, int64_t v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INT, .n = 1};
	a.v.i = v;
	return a;
}

static inline gc_attr attr_s(const char *name, const char *v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_STRING, .n = (int64_t)strlen(v)};
	a.v.s = v;
	return a;
}

/* One-output op. */
static inline int run(harness_run *h, gc_prepare_fn fn, const char *op, int opset, int n_in,
		      gc_tensor **in, int n_attr, gc_attr *attrs)
{
	return harness_op(h, fn, op, opset, n_in, in, 1, n_attr, attrs);
}

/* Compares t's elements with want; prints the first mismatch. NaN matches
 * NaN. */
static inline int near(const gc_tensor *t, const double *want, int64_t n, double atol, double rtol)
{
	if (gc_tensor_numel(t) != n) {
		fprintf(stderr, "  %" PRId64 " elements, want %" PRId64 "\n", gc_tensor_numel(t),
			n);
		return 0;
	}
	for (int64_t i = 0; i < n; i++) {
		double g = harness_at(t, i), w = want[i];
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

static inline int same_dims(const gc_tensor *t, int rank, const int64_t *dims)
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
static inline gc_prepare_fn prep(const char *name)
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
#endif
