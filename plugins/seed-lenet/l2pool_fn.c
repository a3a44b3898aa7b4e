/*
 * L2Pool functions library (seed interface): 2-D L2 pooling over an NCHW
 * tensor, y[n,c,i,j] = sqrt(sum over the kernel window at (i*sh, j*sw) of
 * x^2), no padding, windows that do not fit are dropped (floor).
 *
 * Exports the default symbol names; the host finds this library's
 * customOpVerify apart from ScaledTanh's because each operation has its own
 * functions library.
 */
#include "lenet-params.h"

/* Reads and checks kernel_size and stride; false if the node cannot be
 * served. */
static bool window(const CustomOpParam *params, int32_t numParams, int64_t kernel[2],
		   int64_t stride[2])
{
	if (!lenet_int_pair(params, numParams, "kernel_size", kernel) ||
	    !lenet_int_pair(params, numParams, "stride", stride))
		return false;
	return kernel[0] > 0 && kernel[1] > 0 && stride[0] > 0 && stride[1] > 0;
}

GC_CUSTOMOP_API bool customOpVerify(CustomOpIOTensor *inputs, int32_t numInputs,
				    CustomOpIOTensor *outputs, int32_t numOutputs,
				    CustomOpParam *params, int32_t numParams)
{
	int64_t kernel[2], stride[2];
	int d;

	(void)outputs; /* their shapes are inferred after verify */
	if (numInputs != 1 || numOutputs != 1 || inputs == NULL)
		return false;
	if (inputs[0].dtype != DTFloat32 || inputs[0].rank != 4 || inputs[0].dims == NULL)
		return false;
	if (!window(params, numParams, kernel, stride))
		return false;
	/* A known spatial size must hold at least one window. */
	for (d = 0; d < 2; d++) {
		int64_t size = inputs[0].dims[2 + d];
		if (size >= 0 && kernel[d] > size)
			return false;
	}
	return true;
}

GC_CUSTOMOP_API bool customOpInferShape(CustomOpIOTensor *outputs, const int32_t numOutputs,
					const CustomOpIOTensor *inputs, const int32_t numInputs,
					const CustomOpParam *params, const int32_t numParams)
{
	int64_t kernel[2], stride[2];
	int d;

	if (numInputs != 1 || numOutputs != 1 || inputs[0].rank != 4 || outputs[0].dims == NULL ||
	    outputs[0].maxDims < 4)
		return false;
	if (!window(params, numParams, kernel, stride))
		return false;
	outputs[0].rank = 4;
	outputs[0].dims[0] = inputs[0].dims[0];
	outputs[0].dims[1] = inputs[0].dims[1];
	for (d = 0; d < 2; d++) {
		int64_t size = inputs[0].dims[2 + d];
		if (size < kernel[d])
			return false;
		outputs[0].dims[2 + d] = (size - kernel[d]) / stride[d] + 1;
	}
	outputs[0].dtype = DTFloat32;
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
	if (backend == NULL || strcmp(backend, "Interpreter") != 0)
		return NULL;
	if (numInputs != 1 || inputs[0].dtype != DTFloat32)
		return NULL;
	return "l2PoolF32";
}
