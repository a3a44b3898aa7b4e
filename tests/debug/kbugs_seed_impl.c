/* Kernels of test.kbugs.seed: kbugs_impl.c's bugs in the seed interface
 * (void kernels, no context and so no scratch: AccumSum is graphcc
 * interface only). */
#include "kbugs.h"
#include "kbugs_ops.h"

#define KB_KERNEL(symbol, body)                                                                    \
	GC_CUSTOMOP_API void symbol(CustomOpIOTensor *inputs, int32_t numInputs,                   \
				    CustomOpIOTensor *outputs, int32_t numOutputs,                 \
				    CustomOpParam *params, int32_t numParams)                      \
	{                                                                                          \
		kb_call c = {inputs, numInputs, outputs, numOutputs, params, numParams, NULL};     \
		body(&c);                                                                          \
	}

KB_KERNELS(KB_KERNEL)
