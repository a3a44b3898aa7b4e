/*
 * Seed-interface kernels of the test.kbugs package (no
 * GC_CUSTOMOP_EXPORT_ABI()): the input write and the overrun of
 * kbugs_impl.c once more, through the seed call path.
 */
#include <graphcc/customop.h>

#define SEED(name)                                                                                 \
	GC_CUSTOMOP_API void name(CustomOpIOTensor *inputs, int32_t numInputs,                     \
				  CustomOpIOTensor *outputs, int32_t numOutputs,                   \
				  CustomOpParam *params, int32_t numParams)

SEED(seed_clamp_in_place)
{
	float *x = (float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t i;

	(void)numInputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	for (i = 0; i < inputs[0].numel; i++) {
		if (x[i] < 0.0f)
			x[i] = 0.0f;
		y[i] = x[i];
	}
}

SEED(seed_overrun_one)
{
	const float *x = (const float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t i;

	(void)numInputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	for (i = 0; i <= outputs[0].numel; i++) /* <=: one too many */
		y[i] = x[i < outputs[0].numel ? i : 0] + 1000.0f;
	for (i = 0; i < outputs[0].numel; i++)
		y[i] -= 1000.0f;
}
