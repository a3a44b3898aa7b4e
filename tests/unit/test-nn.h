/*
 * What the nn kernel tests share (test-nn.c, test-softmax.c): inputs from
 * fill() (exact in float16/32/64), comparison against float64 references
 * with a tolerance, running one node (RUN, RUN_FAILS) and its attributes.
 */
#ifndef GC_TEST_NN_H
#define GC_TEST_NN_H

#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/kutil.h"

static inline double fillv(int64_t i, int seed)
{
	return (double)(((i * 7 + (int64_t)seed * 13) % 23) - 11) / 8.0;
}

static inline void fill_f32(float *x, int64_t n, int seed)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)fillv(i, seed);
}

static inline void fill_f64(double *x, int64_t n, int seed)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = fillv(i, seed);
}

static inline void fill_f16(uint16_t *x, int64_t n, int seed)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = gc_f32_to_f16((float)fillv(i, seed));
}

static inline int64_t numel_of(int rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	return n;
}

/* Checks dtype, shape and values of t; prints the first difference. */
static inline int same(const gc_tensor *t, gc_dtype dt, int rank, const int64_t *dims,
		       const double *want, double rtol, double atol)
{
	char s1[128], s2[128];
	if (t->dtype != dt) {
		fprintf(stderr, "  dtype %s, expected %s\n", gc_dtype_name(t->dtype),
			gc_dtype_name(dt));
		return 0;
	}
	if (t->rank != rank || memcmp(t->dims, dims, sizeof *dims * (size_t)rank)) {
		fprintf(stderr, "  shape %s, expected %s\n",
			gc_shape_str(t->dims, t->rank, s1, sizeof s1),
			gc_shape_str(dims, rank, s2, sizeof s2));
		return 0;
	}
	int64_t n = numel_of(rank, dims);
	for (int64_t i = 0; i < n; i++) {
		double g = harness_at(t, i), w = want[i];
		if (!(fabs(g - w) <= rtol * fabs(w) + atol)) {
			fprintf(stderr, "  element %lld: got %.9g, expected %.9g\n", (long long)i,
				g, w);
			return 0;
		}
	}
	return 1;
}

#define F32_TOL 1e-5, 1e-6
#define F16_TOL 2e-3, 2e-3
/* the pasted references carry 9 significant digits */
#define F64_TOL 1e-8, 1e-9

/* Runs op; on failure prints the kernel's message. */
#define RUN(h, op, opset, nin, ins, nout, attrs)                                                   \
	do {                                                                                       \
		int rc_ = harness_op(&(h), gc_prepare_##op, #op, (opset), (nin), (ins), (nout),    \
				     (int)(sizeof(attrs) / sizeof(gc_attr)) - 1, (attrs) + 1);     \
		if (rc_) {                                                                         \
			fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #op,         \
				(h).err.msg);                                                      \
			harness_free(&(h));                                                        \
			check_failed_ = 1;                                                         \
			return;                                                                    \
		}                                                                                  \
	} while (0)

/* Runs op expecting failure whose message contains `needle`. */
#define RUN_FAILS(op, opset, nin, ins, nout, attrs, needle)                                        \
	do {                                                                                       \
		harness_run hr_;                                                                   \
		int rc_ = harness_op(&hr_, gc_prepare_##op, #op, (opset), (nin), (ins), (nout),    \
				     (int)(sizeof(attrs) / sizeof(gc_attr)) - 1, (attrs) + 1);     \
		harness_free(&hr_);                                                                \
		CHECK(rc_ != 0);                                                                   \
		CHECK_CONTAINS(hr_.err.msg, needle);                                               \
	} while (0)

/* Attribute lists start with a dummy entry so that an empty list is valid C. */
#define ATTRS(...)                                                                                 \
	{                                                                                          \
		{.name = ""}, __VA_ARGS__                                                          \
	}
#define A_INT(nm, val)                                                                             \
	{                                                                                          \
		.name = (nm), .type = GC_ATTR_INT, .v.i = (val)                                    \
	}
#define A_FLOAT(nm, val)                                                                           \
	{                                                                                          \
		.name = (nm), .type = GC_ATTR_FLOAT, .v.f = (val)                                  \
	}
#define A_STR(nm, str)                                                                             \
	{                                                                                          \
		.name = (nm), .type = GC_ATTR_STRING, .n = sizeof(str) - 1, .v.s = (str)           \
	}
#define A_INTS(nm, ...)                                                                            \
	{                                                                                          \
		.name = (nm), .type = GC_ATTR_INTS,                                                \
		.n = sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t),                           \
		.v.ints = (const int64_t[])                                                        \
		{                                                                                  \
			__VA_ARGS__                                                                \
		}                                                                                  \
	}

#define DIMS(...)                                                                                  \
	(const int64_t[])                                                                          \
	{                                                                                          \
		__VA_ARGS__                                                                        \
	}
#define NDIMS(...) ((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A float32 tensor over buf, filled from seed. */
static inline gc_tensor tf32(float *buf, int rank, const int64_t *dims, int seed)
{
	fill_f32(buf, numel_of(rank, dims), seed);
	return harness_tensor(GC_DTYPE_FLOAT, rank, dims, buf);
}

static inline gc_tensor tf64(double *buf, int rank, const int64_t *dims, int seed)
{
	fill_f64(buf, numel_of(rank, dims), seed);
	return harness_tensor(GC_DTYPE_DOUBLE, rank, dims, buf);
}

static inline gc_tensor tf16(uint16_t *buf, int rank, const int64_t *dims, int seed)
{
	fill_f16(buf, numel_of(rank, dims), seed);
	return harness_tensor(GC_DTYPE_FLOAT16, rank, dims, buf);
}

/* ---- reference values (NumPy) ---- */

#endif
