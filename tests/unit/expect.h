/*
 * What the generated kernel unit tests share (tests/conformance/
 * gen-unit-tests.py writes test-<family>.c files that include this): shape
 * literals and a checker of an output's type, shape and values.
 */
#ifndef GC_TEST_EXPECT_H
#define GC_TEST_EXPECT_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

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

#endif
