/*
 * Kernels of the test.kbugs package (graphcc interface), each with one
 * classic bug planted on purpose (and one correct twin where a comparison
 * needs it). Built without sanitizers unless the Makefile is told SAN=asan:
 * graphcc's instruments are what must catch these.
 *
 *   accumZeroed   y = x through a scratch accumulator it zeroes first
 *   accumNoZero   the same, but it never zeroes the accumulator: it reads
 *                 scratch it did not write (right only on zeroed scratch)
 *   clampInPlace  y = max(x, 0), computed by clamping x in place first: it
 *                 writes into its input
 *   copyExact     y = x
 *   overrunOne    y = x, and one float more past the end of y
 */
#include "kbugs.h"

GC_CUSTOMOP_EXPORT_ABI();

#define KERNEL(name)                                                                               \
	GC_CUSTOMOP_API GcStatus name(GcOpContext *ctx, const CustomOpIOTensor *inputs,            \
				      int32_t numInputs, CustomOpIOTensor *outputs,                \
				      int32_t numOutputs, const CustomOpParam *params,             \
				      int32_t numParams)

#define UNUSED_ARGS                                                                                \
	(void)numInputs;                                                                           \
	(void)numOutputs;                                                                          \
	(void)params;                                                                              \
	(void)numParams

static GcStatus accum(GcOpContext *ctx, const CustomOpIOTensor *x, CustomOpIOTensor *y, int zero)
{
	float *acc = (float *)ctx->scratch;
	const float *src = (const float *)x->data;
	float *dst = (float *)y->data;
	int64_t i;

	if (acc == NULL || ctx->scratch_bytes < (uint64_t)x->numel * sizeof(float)) {
		ctx->set_error(ctx, "no scratch");
		return GC_STATUS_FAIL;
	}
	for (i = 0; zero && i < x->numel; i++)
		acc[i] = 0.0f;
	for (i = 0; i < x->numel; i++) {
		acc[i] += src[i];
		dst[i] = acc[i];
	}
	return GC_STATUS_OK;
}

/* Accum's scratch: one float per element of x. */
GC_CUSTOMOP_API GcStatus accum_scratch(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				       int32_t numInputs, const CustomOpIOTensor *outputs,
				       int32_t numOutputs, const CustomOpParam *params,
				       int32_t numParams, uint64_t *bytes)
{
	(void)ctx;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	*bytes = (uint64_t)inputs[0].numel * sizeof(float);
	return GC_STATUS_OK;
}

KERNEL(accum_zeroed)
{
	UNUSED_ARGS;
	return accum(ctx, &inputs[0], &outputs[0], 1);
}

KERNEL(accum_no_zero)
{
	UNUSED_ARGS;
	return accum(ctx, &inputs[0], &outputs[0], 0);
}

KERNEL(clamp_in_place)
{
	float *x = (float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t i;

	UNUSED_ARGS;
	(void)ctx;
	for (i = 0; i < inputs[0].numel; i++) {
		if (x[i] < 0.0f)
			x[i] = 0.0f;
		y[i] = x[i];
	}
	return GC_STATUS_OK;
}

KERNEL(copy_exact)
{
	const float *x = (const float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t i;

	UNUSED_ARGS;
	(void)ctx;
	for (i = 0; i < outputs[0].numel; i++)
		y[i] = x[i];
	return GC_STATUS_OK;
}

KERNEL(overrun_one)
{
	const float *x = (const float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t i;

	UNUSED_ARGS;
	(void)ctx;
	for (i = 0; i <= outputs[0].numel; i++) /* <=: one too many */
		y[i] = x[i < outputs[0].numel ? i : 0] + 1000.0f;
	for (i = 0; i < outputs[0].numel; i++)
		y[i] -= 1000.0f;
	return GC_STATUS_OK;
}
