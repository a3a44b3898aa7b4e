/*
 * The demo package's functions library: verify, shape inference and
 * implementation selection for ChannelShuffle and ScaledSwish. graphcc calls
 * them once per node at compile time; the manifest names the symbols, so
 * one library serves both operations.
 */
#include "demo-common.h"

#include <string.h>

GC_CUSTOMOP_EXPORT_ABI();

/* Both operations take one tensor [N, C, ...] and return one of the same
 * shape and type. */
static GcStatus check_nchw(GcOpContext *ctx, const CustomOpIOTensor *inputs, int32_t numInputs,
			   int32_t numOutputs)
{
	if (numInputs != 1 || numOutputs != 1)
		return demo_fail(ctx, "expected 1 input and 1 output, got %d and %d",
				 (int)numInputs, (int)numOutputs);
	if (inputs[0].rank < 2 || inputs[0].rank > 4)
		return demo_fail(ctx, "input x must have rank 2 to 4 ([N, C, ...]), got rank %d",
				 (int)inputs[0].rank);
	return GC_STATUS_OK;
}

static GcStatus same_as_input(GcOpContext *ctx, CustomOpIOTensor *outputs, int32_t numOutputs,
			      const CustomOpIOTensor *inputs, int32_t numInputs)
{
	if (numInputs != 1 || numOutputs != 1)
		return demo_fail(ctx, "expected 1 input and 1 output");
	if (inputs[0].rank > outputs[0].maxDims)
		return demo_fail(ctx, "output rank %d exceeds maxDims %d", (int)inputs[0].rank,
				 (int)outputs[0].maxDims);
	outputs[0].rank = inputs[0].rank;
	for (int32_t d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = inputs[0].dtype;
	return GC_STATUS_OK;
}

/* ---------------------------------------------------------------- ChannelShuffle */

GC_CUSTOMOP_API GcStatus channel_shuffle_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
						int32_t numInputs, const CustomOpIOTensor *outputs,
						int32_t numOutputs, const CustomOpParam *params,
						int32_t numParams)
{
	(void)outputs;
	if (check_nchw(ctx, inputs, numInputs, numOutputs))
		return GC_STATUS_FAIL;
	if (gcDataTypeSize(inputs[0].dtype) == 0)
		return demo_fail(ctx, "input x has an element type without a fixed size");
	(void)numParams;
	int64_t groups = gcParamInt(params, CHANNEL_SHUFFLE_GROUPS);
	int64_t channels = inputs[0].dims[1];
	if (groups < 1)
		return demo_fail(ctx, "groups (attribute group) must be >= 1, got %lld",
				 (long long)groups);
	if (channels % groups != 0)
		return demo_fail(ctx, "%lld channels do not split into groups=%lld",
				 (long long)channels, (long long)groups);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus channel_shuffle_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
						     int32_t numOutputs,
						     const CustomOpIOTensor *inputs,
						     int32_t numInputs, const CustomOpParam *params,
						     int32_t numParams)
{
	(void)params;
	(void)numParams;
	return same_as_input(ctx, outputs, numOutputs, inputs, numInputs);
}

GC_CUSTOMOP_API GcStatus channel_shuffle_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
						int32_t numInputs, const CustomOpIOTensor *outputs,
						int32_t numOutputs, const CustomOpParam *params,
						int32_t numParams, const char **flavour)
{
	(void)inputs, (void)numInputs, (void)outputs, (void)numOutputs;
	(void)params, (void)numParams;
	if (!ctx->backend || strcmp(ctx->backend, "Interpreter"))
		return demo_fail(ctx, "no implementation for backend %s",
				 ctx->backend ? ctx->backend : "(none)");
	*flavour = "channelShuffleCopy";
	return GC_STATUS_OK;
}

/* ---------------------------------------------------------------- ScaledSwish */

GC_CUSTOMOP_API GcStatus scaled_swish_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					     int32_t numInputs, const CustomOpIOTensor *outputs,
					     int32_t numOutputs, const CustomOpParam *params,
					     int32_t numParams)
{
	(void)outputs;
	if (check_nchw(ctx, inputs, numInputs, numOutputs))
		return GC_STATUS_FAIL;
	if (inputs[0].dtype != DTFloat32 && inputs[0].dtype != DTFloat64)
		return demo_fail(ctx, "input x must be float32 or float64");
	(void)numParams;
	int32_t n_beta;
	gcParamFloats(params, SCALED_SWISH_BETA, &n_beta);
	int64_t channels = inputs[0].dims[1];
	if (n_beta != 1 && n_beta != channels)
		return demo_fail(ctx, "beta has %d values; expected 1 or one per channel (%lld)",
				 (int)n_beta, (long long)channels);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus scaled_swish_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
						  int32_t numOutputs,
						  const CustomOpIOTensor *inputs, int32_t numInputs,
						  const CustomOpParam *params, int32_t numParams)
{
	(void)params;
	(void)numParams;
	return same_as_input(ctx, outputs, numOutputs, inputs, numInputs);
}

/* float32 NCHW gets the plane-wise kernel (beta hoisted, single precision);
 * anything else the generic one. */
GC_CUSTOMOP_API GcStatus scaled_swish_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					     int32_t numInputs, const CustomOpIOTensor *outputs,
					     int32_t numOutputs, const CustomOpParam *params,
					     int32_t numParams, const char **flavour)
{
	(void)numInputs, (void)outputs, (void)numOutputs, (void)params, (void)numParams;
	if (!ctx->backend || strcmp(ctx->backend, "Interpreter"))
		return demo_fail(ctx, "no implementation for backend %s",
				 ctx->backend ? ctx->backend : "(none)");
	if (inputs[0].dtype == DTFloat32 && inputs[0].rank == 4)
		*flavour = "scaledSwishPlanesF32";
	else
		*flavour = "scaledSwishGeneric";
	return GC_STATUS_OK;
}
