/*
 * A fused activation as lib/pass-activation.c writes it into a node (the
 * _gc_ attributes of runtime/kernels/nn-act.h), and its value in double:
 * the unit tests of the kernels that take one (test-nn-fast.c: Conv, Gemm,
 * MatMul; test-norm-act.c: InstanceNormalization, GroupNormalization).
 */
#ifndef GC_TEST_FUSED_ACT_H
#define GC_TEST_FUSED_ACT_H

#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

/* An activation: its kind (NULL: none) and parameters. */
typedef struct act_case {
	const char *name; /* NULL: none */
	int has_min, has_max;
	float min, max, alpha, beta; /* beta: HardSwish's */
} act_case;

static inline double act_apply(const act_case *a, double v)
{
	if (!a->name)
		return v;
	if (!strcmp(a->name, "Relu"))
		return v < 0 ? 0 : v;
	if (!strcmp(a->name, "Clip")) {
		if (a->has_min && v < a->min)
			v = a->min;
		if (a->has_max && v > a->max)
			v = a->max;
		return v;
	}
	if (!strcmp(a->name, "Swish"))
		return v / (1 + exp(-v));
	if (!strcmp(a->name, "HardSwish"))
		return v * fmin(1, fmax(0, a->alpha * v + a->beta));
	return v < 0 ? v * a->alpha : v;
}

/* Appends the _gc_ attributes of a to attrs; returns the new count. */
static inline int act_attrs(const act_case *a, gc_attr *attrs, int n)
{
	if (!a->name)
		return n;
	attrs[n++] = (gc_attr){.name = "_gc_activation",
			       .type = GC_ATTR_STRING,
			       .n = (int64_t)strlen(a->name),
			       .v.s = a->name};
	if (a->has_min)
		attrs[n++] = (gc_attr){.name = "_gc_min", .type = GC_ATTR_FLOAT, .v.f = a->min};
	if (a->has_max)
		attrs[n++] = (gc_attr){.name = "_gc_max", .type = GC_ATTR_FLOAT, .v.f = a->max};
	if (!strcmp(a->name, "LeakyRelu") || !strcmp(a->name, "HardSwish"))
		attrs[n++] = (gc_attr){.name = "_gc_alpha", .type = GC_ATTR_FLOAT, .v.f = a->alpha};
	if (!strcmp(a->name, "HardSwish"))
		attrs[n++] = (gc_attr){.name = "_gc_beta", .type = GC_ATTR_FLOAT, .v.f = a->beta};
	return n;
}

#endif
