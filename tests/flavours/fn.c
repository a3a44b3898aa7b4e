/* RowSum's functions library (graphcc interface): verify, shape inference
 * and selection. See flavours.yaml. */
#include <graphcc/customop.h>

#include <string.h>

GC_CUSTOMOP_EXPORT_ABI();

GC_CUSTOMOP_API GcStatus row_sum_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					int32_t numInputs, const CustomOpIOTensor *outputs,
					int32_t numOutputs, const CustomOpParam *params,
					int32_t numParams)
{
	(void)outputs, (void)params, (void)numParams;
	if (numInputs != 1 || numOutputs != 1) {
		ctx->set_error(ctx, "expected 1 input and 1 output");
		return GC_STATUS_FAIL;
	}
	if (inputs[0].rank != 2 || inputs[0].dtype != DTFloat32) {
		ctx->set_error(ctx, "x must be a float32 matrix [R, C], got rank %d",
			       (int)inputs[0].rank);
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus row_sum_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
					     int32_t numOutputs, const CustomOpIOTensor *inputs,
					     int32_t numInputs, const CustomOpParam *params,
					     int32_t numParams)
{
	(void)ctx, (void)numOutputs, (void)numInputs, (void)params, (void)numParams;
	outputs[0].rank = 1;
	outputs[0].dims[0] = inputs[0].dims[0];
	outputs[0].dtype = DTFloat32;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus row_sum_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					int32_t numInputs, const CustomOpIOTensor *outputs,
					int32_t numOutputs, const CustomOpParam *params,
					int32_t numParams, const char **flavour)
{
	(void)inputs, (void)numInputs, (void)outputs, (void)numOutputs;
	(void)params, (void)numParams;
	if (!ctx->backend || strcmp(ctx->backend, "Interpreter")) {
		ctx->set_error(ctx, "no implementation for backend %s",
			       ctx->backend ? ctx->backend : "(none)");
		return GC_STATUS_FAIL;
	}
	*flavour = "rowSumForward";
	return GC_STATUS_OK;
}
