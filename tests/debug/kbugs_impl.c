/* Kernels of test.kbugs, graphcc interface (the bugs: kbugs.h). */
#include "kbugs.h"
#include "kbugs_ops.h"

GC_CUSTOMOP_EXPORT_ABI();

#define KB_KERNEL(symbol, body)                                                                    \
	GC_CUSTOMOP_API GcStatus symbol(GcOpContext *ctx, const CustomOpIOTensor *inputs,          \
					int32_t numInputs, CustomOpIOTensor *outputs,              \
					int32_t numOutputs, const CustomOpParam *params,           \
					int32_t numParams)                                         \
	{                                                                                          \
		kb_call c = {inputs,	 numInputs, outputs,	  numOutputs,                      \
			     params,	 numParams, ctx->scratch};                                 \
		body(&c);                                                                          \
		return GC_STATUS_OK;                                                               \
	}

KB_KERNELS(KB_KERNEL)
