/*
 * Kernels of the test.debug package (graphcc interface). scale_f32 is
 * correct; every buggy_* kernel first copies x into y (so that a run that
 * survives its bug has sensible values) and then misbehaves as its name
 * says. The bugs are deliberate: this library is built without sanitizers,
 * so that graphcc, not a sanitizer, is what catches them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "buggy.h"

GC_CUSTOMOP_EXPORT_ABI();

#define KERNEL(name)                                                                               \
	GC_CUSTOMOP_API GcStatus name(GcOpContext *ctx, const CustomOpIOTensor *inputs,            \
				      int32_t numInputs, CustomOpIOTensor *outputs,                \
				      int32_t numOutputs, const CustomOpParam *params,             \
				      int32_t numParams)

#define UNUSED_ARGS                                                                                \
	(void)ctx;                                                                                 \
	(void)numInputs;                                                                           \
	(void)numOutputs;                                                                          \
	(void)params;                                                                              \
	(void)numParams

static void copy(const CustomOpIOTensor *x, CustomOpIOTensor *y)
{
	const float *src = (const float *)x->data;
	float *dst = (float *)y->data;
	int64_t i;

	for (i = 0; i < y->numel; i++)
		dst[i] = src[i];
}

KERNEL(scale_f32)
{
	const CustomOpParam *f = buggy_param(params, numParams, "factor");
	float factor = f != NULL ? *(const float *)f->data : 2.0f;
	const float *x = (const float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t i;

	UNUSED_ARGS;
	for (i = 0; i < outputs[0].numel; i++)
		y[i] = factor * x[i];
	return GC_STATUS_OK;
}

/* A NULL the compiler cannot see through (a store to a known NULL is
 * undefined, and may be compiled into a trap instead of a store). */
static float *volatile nowhere = NULL;

KERNEL(buggy_null_write)
{
	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	nowhere[0] = 1.0f;
	return GC_STATUS_OK;
}

KERNEL(buggy_write_past_end)
{
	float *y = (float *)outputs[0].data;
	int64_t n = outputs[0].numel;

	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	y[n] = 1.0f; /* the classic off-by-three */
	y[n + 1] = 2.0f;
	y[n + 2] = 3.0f;
	return GC_STATUS_OK;
}

KERNEL(buggy_write_before_start)
{
	float *y = (float *)outputs[0].data;

	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	y[-2] = 7.0f;
	y[-1] = 8.0f;
	return GC_STATUS_OK;
}

KERNEL(buggy_write_into_input)
{
	float *x = (float *)inputs[0].data; /* inputs MUST NOT be written */

	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	if (inputs[0].numel > 1)
		x[1] = x[1] * 2.0f + 1000.0f;
	return GC_STATUS_OK;
}

KERNEL(buggy_nan_at)
{
	const CustomOpParam *p = buggy_param(params, numParams, "index");
	int64_t at = p != NULL ? *(const int64_t *)p->data : 5;
	float *y = (float *)outputs[0].data;

	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	if (at >= 0 && at < outputs[0].numel) /* only for shapes that reach it */
		y[at] = NAN;
	return GC_STATUS_OK;
}

KERNEL(buggy_abort)
{
	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	fprintf(stderr, "buggy_abort: giving up\n");
	abort();
}

static volatile unsigned long spins;

KERNEL(buggy_spin)
{
	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	for (;;)
		spins++;
}

/* Recursion whose depth the compiler cannot bound or turn into a loop. */
static volatile char sink;

static int64_t descend(int64_t depth)
{
	volatile char frame[512];

	frame[0] = (char)depth;
	frame[511] = sink;
	if (depth <= 0)
		return frame[0];
	return descend(depth - 1) + frame[511] + frame[0];
}

KERNEL(buggy_overflow_stack)
{
	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	sink = (char)descend(inputs[0].numel * 1000000000LL);
	return GC_STATUS_OK;
}

static volatile int32_t zero = 0;

KERNEL(buggy_divide_by_zero)
{
	UNUSED_ARGS;
	copy(&inputs[0], &outputs[0]);
	sink = (char)((int32_t)inputs[0].numel / zero);
	return GC_STATUS_OK;
}
