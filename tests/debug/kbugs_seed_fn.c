/* Functions library of test.kbugs.seed: the same operations and bugs as
 * kbugs_fn.c, in the seed interface (no context, bool results). */
#include "kbugs.h"
#include "kbugs_ops.h"

GC_CUSTOMOP_API bool kb_verify_fn(CustomOpIOTensor *inputs, int32_t numInputs,
				  CustomOpIOTensor *outputs, int32_t numOutputs,
				  CustomOpParam *params, int32_t numParams)
{
	(void)outputs;
	(void)params;
	(void)numParams;
	return kb_verify(inputs, numInputs, numOutputs) == NULL;
}

#define KB_FUNCTIONS(Type, prefix)                                                                 \
	GC_CUSTOMOP_API bool prefix##_infer(CustomOpIOTensor *outputs, const int32_t numOutputs,  \
					    const CustomOpIOTensor *inputs,                        \
					    const int32_t numInputs, const CustomOpParam *params,  \
					    const int32_t numParams)                               \
	{                                                                                          \
		(void)numOutputs;                                                                  \
		(void)numInputs;                                                                   \
		(void)params;                                                                      \
		(void)numParams;                                                                   \
		return kb_infer(#Type, outputs, inputs) != 0;                                      \
	}                                                                                          \
	GC_CUSTOMOP_API const char *prefix##_select(                                               \
	    CustomOpIOTensor *inputs, int32_t numInputs, CustomOpIOTensor *outputs,                \
	    int32_t numOutputs, CustomOpParam *params, int32_t numParams, const char *backend)     \
	{                                                                                          \
		(void)numInputs;                                                                   \
		(void)outputs;                                                                     \
		(void)numOutputs;                                                                  \
		(void)params;                                                                      \
		(void)numParams;                                                                   \
		(void)backend;                                                                     \
		return kb_select(#Type, inputs);                                                   \
	}

KB_OPS(KB_FUNCTIONS)
