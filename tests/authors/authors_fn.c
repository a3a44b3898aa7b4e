/*
 * Functions library of the test.authors package (graphcc interface), the
 * ops a new author writes first (issue 16): RMSNorm with an optional
 * `weight`, TopKMask with two outputs of different types (the second
 * optional), and Crashy (a kernel that segfaults, for test-package).
 */
#include <graphcc/customop.h>

#include <string.h>

GC_CUSTOMOP_EXPORT_ABI();

/* ---- RMSNorm and Crashy: y has x's shape */

GC_CUSTOMOP_API GcStatus rms_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				    int32_t numInputs, const CustomOpIOTensor *outputs,
				    int32_t numOutputs, const CustomOpParam *params,
				    int32_t numParams)
{
	(void)outputs;
	(void)params;
	(void)numParams;
	if (numInputs != 2 || numOutputs != 1) {
		ctx->set_error(ctx, "expects the declared 2 inputs and 1 output, got %d and %d",
			       (int)numInputs, (int)numOutputs);
		return GC_STATUS_FAIL;
	}
	if (inputs[0].rank < 1) {
		ctx->set_error(ctx, "x needs at least one dimension");
		return GC_STATUS_FAIL;
	}
	if (gcInputPresent(&inputs[1]) &&
	    (inputs[1].rank != 1 || inputs[1].dims[0] != inputs[0].dims[inputs[0].rank - 1])) {
		ctx->set_error(ctx, "weight must be 1-D, as long as x's last dimension");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus same_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
				    int32_t numOutputs, const CustomOpIOTensor *inputs,
				    int32_t numInputs, const CustomOpParam *params,
				    int32_t numParams)
{
	int32_t d;
	(void)ctx;
	(void)numOutputs;
	(void)numInputs;
	(void)params;
	(void)numParams;
	outputs[0].rank = inputs[0].rank;
	for (d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = DTFloat32;
	return GC_STATUS_OK;
}

/* The 8-wide flavour for rows that are a multiple of 8 long. */
GC_CUSTOMOP_API GcStatus rms_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				    int32_t numInputs, const CustomOpIOTensor *outputs,
				    int32_t numOutputs, const CustomOpParam *params,
				    int32_t numParams, const char **flavour)
{
	(void)ctx;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	*flavour = inputs[0].dims[inputs[0].rank - 1] % 8 == 0 ? "rmsNormBy8" : "rmsNormF32";
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus crashy_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
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
	*flavour = "crashF32";
	return GC_STATUS_OK;
}

/* ---- TopKMask: values [.., k] float32 and indices [.., k] int64 */

static int64_t param_k(const CustomOpParam *params, int32_t numParams)
{
	int32_t i;
	for (i = 0; i < numParams; i++)
		if (!strcmp(params[i].name, "k"))
			return *(const int64_t *)params[i].data;
	return -1;
}

GC_CUSTOMOP_API GcStatus topk_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				     int32_t numInputs, const CustomOpIOTensor *outputs,
				     int32_t numOutputs, const CustomOpParam *params,
				     int32_t numParams)
{
	int64_t k = param_k(params, numParams);
	(void)outputs;
	if (numInputs != 1 || numOutputs != 2) {
		ctx->set_error(ctx, "expects the declared 1 input and 2 outputs, got %d and %d",
			       (int)numInputs, (int)numOutputs);
		return GC_STATUS_FAIL;
	}
	if (inputs[0].rank < 1 || k < 1 || k > inputs[0].dims[inputs[0].rank - 1]) {
		ctx->set_error(ctx, "k must be between 1 and x's last dimension");
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus topk_infer(GcOpContext *ctx, CustomOpIOTensor *outputs,
				    int32_t numOutputs, const CustomOpIOTensor *inputs,
				    int32_t numInputs, const CustomOpParam *params,
				    int32_t numParams)
{
	int32_t o, d;
	(void)ctx;
	(void)numInputs;
	for (o = 0; o < numOutputs; o++) {
		outputs[o].rank = inputs[0].rank;
		for (d = 0; d < inputs[0].rank; d++)
			outputs[o].dims[d] = inputs[0].dims[d];
		outputs[o].dims[inputs[0].rank - 1] = param_k(params, numParams);
	}
	outputs[0].dtype = DTFloat32;
	outputs[1].dtype = DTIInt64;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus topk_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
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
	*flavour = "topKMaskF32";
	return GC_STATUS_OK;
}
