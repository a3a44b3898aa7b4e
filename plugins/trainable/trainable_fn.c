/*
 * trainable functions library (graphcc interface): verify, shape inference
 * and selection for the four operations of the package, two forward ones
 * and their backward operations (trainable.yaml's gradient: keys pair them).
 *
 *   ParamSwish(x) -> y             y = x sigmoid(beta x)
 *   ParamSwishGrad(x, dy) -> dx    dx = dy (s + beta x s (1 - s)), s = sigmoid(beta x)
 *   ChannelScale(x, gamma) -> y    y[n, c, ...] = x[n, c, ...] gamma[c]
 *   ChannelScaleGrad(x, gamma, dy) -> dx, dgamma
 *
 * All take float32 or float64 (every tensor of a node the same); the
 * selection picks the flavour by element type.
 */
#include "trainable-common.h"

GC_CUSTOMOP_EXPORT_ABI();

static GcStatus float_types(GcOpContext *ctx, const CustomOpIOTensor *inputs, int32_t numInputs)
{
	int32_t i;

	if (inputs[0].dtype != DTFloat32 && inputs[0].dtype != DTFloat64)
		return TR_FAIL(ctx, "inputs must be float32 or float64");
	for (i = 1; i < numInputs; i++)
		if (inputs[i].dtype != inputs[0].dtype)
			return TR_FAIL(ctx, "input %d has another element type than input 0",
				       (int)i);
	return GC_STATUS_OK;
}

/* output k gets the shape and type of input `from` */
static GcStatus like(GcOpContext *ctx, CustomOpIOTensor *out, const CustomOpIOTensor *from)
{
	int32_t d;

	if (from->rank > out->maxDims)
		return TR_FAIL(ctx, "rank %d is above the output's maxDims %d", (int)from->rank,
			       (int)out->maxDims);
	out->rank = from->rank;
	for (d = 0; d < from->rank; d++)
		out->dims[d] = from->dims[d];
	out->dtype = from->dtype;
	return GC_STATUS_OK;
}

/* x (N, C, ...) and gamma (C) */
static GcStatus channel_shapes(GcOpContext *ctx, const CustomOpIOTensor *x,
			       const CustomOpIOTensor *gamma)
{
	if (x->rank < 2 || gamma->rank != 1 || gamma->dims[0] != x->dims[1])
		return TR_FAIL(ctx, "x must be (N, C, ...) and gamma (C)");
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus trainable_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					  int32_t numInputs, const CustomOpIOTensor *outputs,
					  int32_t numOutputs, const CustomOpParam *params,
					  int32_t numParams)
{
	const char *op = ctx->op_name;
	float beta;

	(void)outputs;
	(void)numOutputs;
	if (float_types(ctx, inputs, numInputs) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	if (strncmp(op, "ParamSwish", 10) == 0) {
		if (!tr_float(params, numParams, "beta", &beta))
			return TR_FAIL(ctx, "param beta is missing");
		if (numInputs == 2 && !tr_same_shape(&inputs[0], &inputs[1]))
			return TR_FAIL(ctx, "x and dy differ in shape");
		return GC_STATUS_OK;
	}
	if (channel_shapes(ctx, &inputs[0], &inputs[1]) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	if (numInputs == 3 && !tr_same_shape(&inputs[0], &inputs[2]))
		return TR_FAIL(ctx, "x and dy differ in shape");
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus trainable_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
					       int32_t numOutputs, const CustomOpIOTensor *inputs,
					       int32_t numInputs, const CustomOpParam *params,
					       int32_t numParams)
{
	int32_t k;

	(void)numInputs;
	(void)params;
	(void)numParams;
	/* every op: output k is shaped like input k (y like x; dx like x,
	 * dgamma like gamma) */
	for (k = 0; k < numOutputs; k++)
		if (like(ctx, &outputs[k], &inputs[k]) != GC_STATUS_OK)
			return GC_STATUS_FAIL;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus trainable_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					  int32_t numInputs, const CustomOpIOTensor *outputs,
					  int32_t numOutputs, const CustomOpParam *params,
					  int32_t numParams, const char **flavour)
{
	static const char *const flavours[][3] = {
		{ "ParamSwish", "paramSwishF32", "paramSwishF64" },
		{ "ParamSwishGrad", "paramSwishGradF32", "paramSwishGradF64" },
		{ "ChannelScale", "channelScaleF32", "channelScaleF64" },
		{ "ChannelScaleGrad", "channelScaleGradF32", "channelScaleGradF64" },
	};
	size_t i;

	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (ctx->backend == NULL || strcmp(ctx->backend, "Interpreter") != 0)
		return TR_FAIL(ctx, "no implementation for backend %s",
			       ctx->backend ? ctx->backend : "(none)");
	for (i = 0; i < sizeof flavours / sizeof flavours[0]; i++)
		if (strcmp(ctx->op_name, flavours[i][0]) == 0) {
			*flavour = flavours[i][inputs[0].dtype == DTFloat32 ? 1 : 2];
			return GC_STATUS_OK;
		}
	return TR_FAIL(ctx, "unknown operation %s", ctx->op_name);
	return GC_STATUS_OK;
}
