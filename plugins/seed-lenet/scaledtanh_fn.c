/*
 * ScaledTanh functions library (seed interface): y = alpha * tanh(beta * x),
 * LeCun's squashing function (alpha 1.7159, beta 2/3 by default).
 *
 * Exports the default symbol names customOpVerify, customOpInferShape and
 * customOpSelectImpl, so the manifest does not name them.
 */
#include <math.h>

#include "lenet-params.h"

static bool served_dtype(CustomOpDataType t)
{
	return t == DTFloat32 || t == DTFloat16;
}

GC_CUSTOMOP_API bool customOpVerify(CustomOpIOTensor *inputs, int32_t numInputs,
				    CustomOpIOTensor *outputs, int32_t numOutputs,
				    CustomOpParam *params, int32_t numParams)
{
	(void)outputs; /* their shapes are inferred after verify */
	if (numInputs != 1 || numOutputs != 1 || inputs == NULL)
		return false;
	if (!served_dtype(inputs[0].dtype) || inputs[0].rank < 0 || inputs[0].rank > 4)
		return false;
	/* Both params must be there (the manifest gives defaults) and finite. */
	if (lenet_param(params, numParams, "alpha", DTFloat32) == NULL ||
	    lenet_param(params, numParams, "beta", DTFloat32) == NULL)
		return false;
	return isfinite(lenet_float(params, numParams, "alpha", NAN)) &&
	       isfinite(lenet_float(params, numParams, "beta", NAN));
}

GC_CUSTOMOP_API bool customOpInferShape(CustomOpIOTensor *outputs, const int32_t numOutputs,
					const CustomOpIOTensor *inputs, const int32_t numInputs,
					const CustomOpParam *params, const int32_t numParams)
{
	int32_t d;

	(void)params;
	(void)numParams;
	if (numInputs != 1 || numOutputs != 1 || outputs[0].dims == NULL)
		return false;
	if (inputs[0].rank > outputs[0].maxDims && outputs[0].maxDims > 0)
		return false;
	outputs[0].rank = inputs[0].rank;
	for (d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = inputs[0].dtype;
	return true;
}

GC_CUSTOMOP_API const char *customOpSelectImpl(CustomOpIOTensor *inputs, int32_t numInputs,
					       CustomOpIOTensor *outputs, int32_t numOutputs,
					       CustomOpParam *params, int32_t numParams,
					       const char *backend)
{
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (backend == NULL || strcmp(backend, "Interpreter") != 0 || numInputs != 1)
		return NULL;
	switch (inputs[0].dtype) {
	case DTFloat32:
		return "scaledTanhF32";
	case DTFloat16:
		return "scaledTanhF16";
	default:
		return NULL;
	}
}
