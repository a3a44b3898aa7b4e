/*
 * Functions library of the test.debug package (graphcc interface): verify,
 * shape inference (y has x's shape) and selection for Scale and Buggy.
 * Nothing here misbehaves: the bugs are all in the kernels.
 */
#include "buggy.h"

GC_CUSTOMOP_EXPORT_ABI();

static GcStatus one_float_input(GcOpContext *ctx, const CustomOpIOTensor *inputs, int32_t numInputs,
				int32_t numOutputs)
{
	if (numInputs != 1 || numOutputs != 1) {
		ctx->set_error(ctx, "expects one input and one output");
		return GC_STATUS_FAIL;
	}
	if (inputs[0].dtype != DTFloat32) {
		ctx->set_error(ctx, "x must be float32");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus scale_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	(void)outputs;
	(void)params;
	(void)numParams;
	return one_float_input(ctx, inputs, numInputs, numOutputs);
}

GC_CUSTOMOP_API GcStatus same_shape(GcOpContext *ctx, CustomOpIOTensor *outputs, int32_t numOutputs,
				    const CustomOpIOTensor *inputs, int32_t numInputs,
				    const CustomOpParam *params, int32_t numParams)
{
	int32_t d;

	(void)params;
	(void)numParams;
	if (numOutputs != 1 || numInputs != 1 || inputs[0].rank > outputs[0].maxDims) {
		ctx->set_error(ctx, "cannot infer the output shape");
		return GC_STATUS_FAIL;
	}
	outputs[0].rank = inputs[0].rank;
	for (d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = DTFloat32;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus scale_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams, const char **flavour)
{
	(void)ctx;
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	*flavour = "scaleF32";
	return GC_STATUS_OK;
}

/* The flavour that param `bug` names, or NULL. */
static const char *bug_of(const CustomOpParam *params, int32_t numParams)
{
	const CustomOpParam *p = buggy_param(params, numParams, "bug");
	int i;

	if (p == NULL || p->dtype != DTString || p->size != 0)
		return NULL;
	for (i = 0; i < BUGGY_N_FLAVOURS; i++)
		if (strcmp((const char *)p->data, buggy_flavours[i]) == 0)
			return buggy_flavours[i];
	return NULL;
}

GC_CUSTOMOP_API GcStatus buggy_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	(void)outputs;
	if (one_float_input(ctx, inputs, numInputs, numOutputs) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	if (bug_of(params, numParams) == NULL) {
		ctx->set_error(ctx, "param bug must name a flavour (nullWrite, writePastEnd, "
				    "writeBeforeStart, writeIntoInput, nanAt, callAbort, "
				    "spinForever, overflowStack, divideByZero, seedNullWrite)");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus buggy_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams, const char **flavour)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	*flavour = bug_of(params, numParams);
	if (*flavour == NULL) {
		ctx->set_error(ctx, "param bug names no flavour");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}
