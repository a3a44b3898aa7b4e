/*
 * A seed-interface kernel library of the test.debug package (it does not
 * say GC_CUSTOMOP_EXPORT_ABI()): the NULL store once more, so that crash
 * reports are checked on the seed call path too.
 */
#include <graphcc/customop.h>

static float *volatile nowhere = 0;

GC_CUSTOMOP_API void seed_null_write(CustomOpIOTensor *inputs, int32_t numInputs,
				     CustomOpIOTensor *outputs, int32_t numOutputs,
				     CustomOpParam *params, int32_t numParams)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	nowhere[0] = 1.0f;
}
