/*
 * gcx-ops functions library (graphcc interface): verify, shape inference and
 * implementation selection for all three operations of the package. The
 * manifest names each operation's symbols (verify / inferShape /
 * selectImpl), so one library serves them all.
 *
 *   PackedLinear  y = x @ W^T (+ b)      W a constant [M, K], b optional [M]
 *   RowSoftmax    softmax(x / temperature) over the last axis
 *   ClampedAdd    y = min(max(a + b, low), high), float32 or int32
 */
#include <math.h>

#include "gcx-common.h"

GC_CUSTOMOP_EXPORT_ABI();

static GcStatus want_interpreter(GcOpContext *ctx)
{
	if (ctx->backend == NULL || strcmp(ctx->backend, "Interpreter") != 0)
		return GCX_FAIL(ctx, "no implementation for backend %s",
				ctx->backend ? ctx->backend : "(none)");
	return GC_STATUS_OK;
}

/* One output with the shape and type of the first of nIn inputs. */
static GcStatus same_as_first(GcOpContext *ctx, CustomOpIOTensor *outputs, int32_t numOutputs,
			      const CustomOpIOTensor *inputs, int32_t numInputs, int32_t nIn)
{
	int32_t d;

	if (numOutputs != 1 || numInputs != nIn || inputs[0].rank > outputs[0].maxDims)
		return GCX_FAIL(ctx, "cannot infer the output shape");
	outputs[0].rank = inputs[0].rank;
	for (d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = inputs[0].dtype;
	return GC_STATUS_OK;
}

/* ------------------------------------------------------------ PackedLinear */

GC_CUSTOMOP_API GcStatus packed_linear_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					      int32_t numInputs, const CustomOpIOTensor *outputs,
					      int32_t numOutputs, const CustomOpParam *params,
					      int32_t numParams)
{
	const CustomOpIOTensor *x = &inputs[0], *w = &inputs[1];
	char s1[64], s2[64];

	(void)outputs;
	(void)params;
	(void)numParams;
	if (numInputs < 2 || numInputs > 3 || numOutputs != 1)
		return GCX_FAIL(ctx, "expects inputs x, W[, b] and one output, got %d and %d",
				(int)numInputs, (int)numOutputs);
	if (x->dtype != DTFloat32 || w->dtype != DTFloat32)
		return GCX_FAIL(ctx, "x and W must be float32");
	if (x->rank < 1)
		return GCX_FAIL(ctx, "x must have at least one dimension");
	if (w->rank != 2)
		return GCX_FAIL(ctx, "W must be 2-D [M, K], got %s", gcx_shape(w, s1, sizeof s1));
	if (w->data == NULL)
		return GCX_FAIL(ctx, "W must be a constant (an initializer): init packs it");
	if (x->dims[x->rank - 1] != w->dims[1])
		return GCX_FAIL(ctx,
				"x is %s but W is %s: the last dimension of x must be K = %lld",
				gcx_shape(x, s1, sizeof s1), gcx_shape(w, s2, sizeof s2),
				(long long)w->dims[1]);
	if (gcx_present(inputs, numInputs, 2)) {
		const CustomOpIOTensor *b = &inputs[2];
		if (b->dtype != DTFloat32 || b->rank != 1 || b->dims[0] != w->dims[0])
			return GCX_FAIL(ctx, "b must be float32 [%lld] (M of W), got %s",
					(long long)w->dims[0], gcx_shape(b, s1, sizeof s1));
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus packed_linear_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
						   int32_t numOutputs,
						   const CustomOpIOTensor *inputs,
						   int32_t numInputs, const CustomOpParam *params,
						   int32_t numParams)
{
	const CustomOpIOTensor *x = &inputs[0];
	int32_t d;

	(void)params;
	(void)numParams;
	if (numOutputs != 1 || numInputs < 2 || x->rank > outputs[0].maxDims)
		return GCX_FAIL(ctx, "cannot infer the output shape");
	outputs[0].rank = x->rank;
	for (d = 0; d < x->rank - 1; d++)
		outputs[0].dims[d] = x->dims[d];
	outputs[0].dims[x->rank - 1] = inputs[1].dims[0];
	outputs[0].dtype = DTFloat32;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus packed_linear_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					      int32_t numInputs, const CustomOpIOTensor *outputs,
					      int32_t numOutputs, const CustomOpParam *params,
					      int32_t numParams, const char **flavour)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (want_interpreter(ctx) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	*flavour = "packedLinearF32";
	return GC_STATUS_OK;
}

/* LinearGelu: PackedLinear's verify and shape inference, its own flavour. */
GC_CUSTOMOP_API GcStatus linear_gelu_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					    int32_t numInputs, const CustomOpIOTensor *outputs,
					    int32_t numOutputs, const CustomOpParam *params,
					    int32_t numParams, const char **flavour)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (want_interpreter(ctx) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	*flavour = "linearGeluF32";
	return GC_STATUS_OK;
}

/* ------------------------------------------------------------ RowSoftmax */

GC_CUSTOMOP_API GcStatus row_softmax_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					    int32_t numInputs, const CustomOpIOTensor *outputs,
					    int32_t numOutputs, const CustomOpParam *params,
					    int32_t numParams)
{
	float t;

	(void)outputs;
	if (numInputs != 1 || numOutputs != 1)
		return GCX_FAIL(ctx, "expects one input and one output");
	if (inputs[0].dtype != DTFloat32)
		return GCX_FAIL(ctx, "x must be float32");
	if (inputs[0].rank < 1 || inputs[0].dims[inputs[0].rank - 1] < 1)
		return GCX_FAIL(ctx, "x must have a non-empty last axis");
	if (!gcx_float(params, numParams, "temperature", &t))
		return GCX_FAIL(ctx, "param temperature is missing");
	if (!(t > 0.0f) || !isfinite(t))
		return GCX_FAIL(ctx, "temperature must be positive and finite, got %g", (double)t);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus row_softmax_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
						 int32_t numOutputs, const CustomOpIOTensor *inputs,
						 int32_t numInputs, const CustomOpParam *params,
						 int32_t numParams)
{
	(void)params;
	(void)numParams;
	return same_as_first(ctx, outputs, numOutputs, inputs, numInputs, 1);
}

GC_CUSTOMOP_API GcStatus row_softmax_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					    int32_t numInputs, const CustomOpIOTensor *outputs,
					    int32_t numOutputs, const CustomOpParam *params,
					    int32_t numParams, const char **flavour)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (want_interpreter(ctx) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	*flavour = "rowSoftmaxF32";
	return GC_STATUS_OK;
}

/* ------------------------------------------------------------ ClampedAdd */

GC_CUSTOMOP_API GcStatus clamped_add_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					    int32_t numInputs, const CustomOpIOTensor *outputs,
					    int32_t numOutputs, const CustomOpParam *params,
					    int32_t numParams)
{
	float low, high;
	char s1[64], s2[64];

	(void)outputs;
	if (numInputs != 2 || numOutputs != 1)
		return GCX_FAIL(ctx, "expects inputs a, b and one output");
	if (inputs[0].dtype != inputs[1].dtype)
		return GCX_FAIL(ctx, "a and b must have the same element type");
	if (inputs[0].dtype != DTFloat32 && inputs[0].dtype != DTIInt32)
		return GCX_FAIL(ctx, "a and b must be float32 or int32");
	if (!gcx_same_shape(&inputs[0], &inputs[1]))
		return GCX_FAIL(ctx, "a is %s but b is %s: they must have the same shape",
				gcx_shape(&inputs[0], s1, sizeof s1),
				gcx_shape(&inputs[1], s2, sizeof s2));
	if (!gcx_float(params, numParams, "low", &low) ||
	    !gcx_float(params, numParams, "high", &high))
		return GCX_FAIL(ctx, "params low and high are missing");
	if (isnan(low) || isnan(high) || low > high)
		return GCX_FAIL(ctx, "low (%g) must not exceed high (%g)", (double)low,
				(double)high);
	if (inputs[0].dtype == DTIInt32 && ceil(low) > floor(high))
		return GCX_FAIL(ctx, "no int32 value lies in [low, high] = [%g, %g]", (double)low,
				(double)high);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus clamped_add_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,
						 int32_t numOutputs, const CustomOpIOTensor *inputs,
						 int32_t numInputs, const CustomOpParam *params,
						 int32_t numParams)
{
	(void)params;
	(void)numParams;
	return same_as_first(ctx, outputs, numOutputs, inputs, numInputs, 2);
}

/* Two flavours: one kernel per element type. */
GC_CUSTOMOP_API GcStatus clamped_add_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					    int32_t numInputs, const CustomOpIOTensor *outputs,
					    int32_t numOutputs, const CustomOpParam *params,
					    int32_t numParams, const char **flavour)
{
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (want_interpreter(ctx) != GC_STATUS_OK)
		return GC_STATUS_FAIL;
	if (numInputs < 1)
		return GCX_FAIL(ctx, "expects inputs a, b");
	switch (inputs[0].dtype) {
	case DTFloat32:
		*flavour = "clampedAddF32";
		return GC_STATUS_OK;
	case DTIInt32:
		*flavour = "clampedAddI32";
		return GC_STATUS_OK;
	default:
		return GCX_FAIL(ctx, "no flavour for this element type");
	}
}
