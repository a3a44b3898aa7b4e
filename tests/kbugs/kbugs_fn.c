/*
 * Functions library of the test.kbugs package (graphcc interface): verify,
 * shape inference (y has x's shape, float32) and selection by the string
 * param `flavour`, for every op. Nothing here misbehaves.
 */
#include "kbugs.h"

GC_CUSTOMOP_EXPORT_ABI();

static const char *flavour_of(const CustomOpParam *params, int32_t numParams)
{
	const CustomOpParam *p = kbugs_param(params, numParams, "flavour");
	int i;

	if (p == NULL || p->dtype != DTString || p->size != 0)
		return NULL;
	for (i = 0; i < KBUGS_N_FLAVOURS; i++)
		if (strcmp((const char *)p->data, kbugs_flavours[i]) == 0)
			return kbugs_flavours[i];
	return NULL;
}

GC_CUSTOMOP_API GcStatus kbugs_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	(void)outputs;
	if (numInputs != 1 || numOutputs != 1 || inputs[0].dtype != DTFloat32) {
		ctx->set_error(ctx, "expects one float32 input and one output");
		return GC_STATUS_FAIL;
	}
	if (flavour_of(params, numParams) == NULL) {
		ctx->set_error(ctx, "param flavour must name a flavour of the package");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus kbugs_infer(GcOpContext *ctx, CustomOpIOTensor *outputs,
				     int32_t numOutputs, const CustomOpIOTensor *inputs,
				     int32_t numInputs, const CustomOpParam *params,
				     int32_t numParams)
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

GC_CUSTOMOP_API GcStatus kbugs_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams, const char **flavour)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	*flavour = flavour_of(params, numParams);
	if (*flavour == NULL) {
		ctx->set_error(ctx, "param flavour names no flavour");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}
