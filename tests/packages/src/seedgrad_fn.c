/*
 * seed-grad's functions libraries, written to the seed interface only
 * (Glow's: the default symbol names customOpVerify / customOpInferShape /
 * customOpSelectImpl, no context, bool returns). One source, two libraries:
 * ScaledTanh's (one input x), and with -DSEEDGRAD_BACKWARD ScaledTanhGrad's
 * (inputs x and dy of the same shape). Both take float32 or float64 and
 * select the flavour of that type.
 */
#include <graphcc/customop.h>
#include <math.h>
#include <string.h>

#ifdef SEEDGRAD_BACKWARD
#define N_IN 2
#define FLAVOUR_F32 "scaledTanhGradF32"
#define FLAVOUR_F64 "scaledTanhGradF64"
#else
#define N_IN 1
#define FLAVOUR_F32 "scaledTanhF32"
#define FLAVOUR_F64 "scaledTanhF64"
#endif

static bool has_float(const CustomOpParam *params, int32_t n, const char *name)
{
	for (int32_t i = 0; i < n; i++)
		if (params[i].name && !strcmp(params[i].name, name))
			return params[i].dtype == DTFloat32 && params[i].size == 0 &&
			       params[i].data && isfinite(*(const float *)params[i].data);
	return false;
}

GC_CUSTOMOP_API bool customOpVerify(CustomOpIOTensor *inputs, int32_t numInputs,
				    CustomOpIOTensor *outputs, int32_t numOutputs,
				    CustomOpParam *params, int32_t numParams)
{
	(void)outputs;
	if (numInputs != N_IN || numOutputs != 1 || !inputs)
		return false;
	for (int32_t i = 0; i < numInputs; i++) {
		if (inputs[i].dtype != inputs[0].dtype || inputs[i].rank != inputs[0].rank)
			return false;
		for (int32_t d = 0; d < inputs[0].rank; d++)
			if (inputs[i].dims[d] != inputs[0].dims[d])
				return false;
	}
	if (inputs[0].dtype != DTFloat32 && inputs[0].dtype != DTFloat64)
		return false;
	return has_float(params, numParams, "alpha") && has_float(params, numParams, "beta");
}

GC_CUSTOMOP_API bool customOpInferShape(CustomOpIOTensor *outputs, const int32_t numOutputs,
					const CustomOpIOTensor *inputs, const int32_t numInputs,
					const CustomOpParam *params, const int32_t numParams)
{
	(void)params;
	(void)numParams;
	if (numInputs != N_IN || numOutputs != 1 || !outputs[0].dims ||
	    (outputs[0].maxDims > 0 && inputs[0].rank > outputs[0].maxDims))
		return false;
	outputs[0].rank = inputs[0].rank;
	for (int32_t d = 0; d < inputs[0].rank; d++)
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
	if (!backend || strcmp(backend, "Interpreter") || numInputs != N_IN)
		return NULL;
	return inputs[0].dtype == DTFloat32 ? FLAVOUR_F32
	       : inputs[0].dtype == DTFloat64 ? FLAVOUR_F64
					      : NULL;
}
