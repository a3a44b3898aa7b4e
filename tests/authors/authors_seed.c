/*
 * RMSNormSeed: RMSNorm written to the seed interface (Glow's: no context,
 * bool results, void kernels), functions and kernel in one library. The
 * kernel reads the optional weight as inputs[1].data, NULL when absent.
 */
#include <graphcc/customop.h>

#include <math.h>
#include <string.h>

GC_CUSTOMOP_API bool rms_seed_verify(CustomOpIOTensor *inputs, int32_t numInputs,
				     CustomOpIOTensor *outputs, int32_t numOutputs,
				     CustomOpParam *params, int32_t numParams)
{
	(void)outputs;
	(void)params;
	(void)numParams;
	return numInputs == 2 && numOutputs == 1 && inputs[0].rank >= 1 &&
	       (!gcInputPresent(&inputs[1]) ||
		(inputs[1].rank == 1 && inputs[1].dims[0] == inputs[0].dims[inputs[0].rank - 1]));
}

GC_CUSTOMOP_API bool rms_seed_infer(CustomOpIOTensor *outputs, const int32_t numOutputs,
				    const CustomOpIOTensor *inputs, const int32_t numInputs,
				    const CustomOpParam *params, const int32_t numParams)
{
	int32_t d;
	(void)numOutputs;
	(void)numInputs;
	(void)params;
	(void)numParams;
	outputs[0].rank = inputs[0].rank;
	for (d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = DTFloat32;
	return true;
}

GC_CUSTOMOP_API const char *rms_seed_select(CustomOpIOTensor *inputs, int32_t numInputs,
					    CustomOpIOTensor *outputs, int32_t numOutputs,
					    CustomOpParam *params, int32_t numParams,
					    const char *backend)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	return strcmp(backend, "Interpreter") ? NULL : "rmsNormSeedF32";
}

GC_CUSTOMOP_API void rmsNormSeedF32(CustomOpIOTensor *inputs, int32_t numInputs,
				    CustomOpIOTensor *outputs, int32_t numOutputs,
				    CustomOpParam *params, int32_t numParams)
{
	const float *x = inputs[0].data, *w = inputs[1].data;
	float *y = outputs[0].data;
	float eps = 0.0f;
	int64_t c = inputs[0].dims[inputs[0].rank - 1], rows = inputs[0].numel / c, r, j;
	int32_t i;
	(void)numInputs;
	(void)numOutputs;
	for (i = 0; i < numParams; i++)
		if (!strcmp(params[i].name, "epsilon"))
			eps = *(const float *)params[i].data;
	for (r = 0; r < rows; r++) {
		double ss = 0;
		for (j = 0; j < c; j++)
			ss += (double)x[r * c + j] * x[r * c + j];
		float inv = 1.0f / sqrtf((float)(ss / (double)c) + eps);
		for (j = 0; j < c; j++)
			y[r * c + j] = x[r * c + j] * inv * (w ? w[j] : 1.0f);
	}
}
