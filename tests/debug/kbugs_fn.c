/* Functions library of test.kbugs, graphcc interface (kbugs.h). */
#include "kbugs.h"
#include "kbugs_ops.h"

GC_CUSTOMOP_EXPORT_ABI();

GC_CUSTOMOP_API GcStatus kb_verify_fn(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, const CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	const char *why = kb_verify(inputs, numInputs, numOutputs);

	(void)outputs;
	(void)params;
	(void)numParams;
	if (why != NULL) {
		ctx->set_error(ctx, why);
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

#define KB_FUNCTIONS(Type, prefix)                                                                 \
	GC_CUSTOMOP_API GcStatus prefix##_infer(                                                   \
	    GcOpContext *ctx, CustomOpIOTensor *outputs, int32_t numOutputs,                       \
	    const CustomOpIOTensor *inputs, int32_t numInputs, const CustomOpParam *params,        \
	    int32_t numParams)                                                                     \
	{                                                                                          \
		(void)numOutputs;                                                                  \
		(void)numInputs;                                                                   \
		(void)params;                                                                      \
		(void)numParams;                                                                   \
		if (kb_infer(#Type, outputs, inputs))                                              \
			return GC_STATUS_OK;                                                       \
		ctx->set_error(ctx, "rank above maxDims");                                         \
		return GC_STATUS_FAIL;                                                             \
	}                                                                                          \
	GC_CUSTOMOP_API GcStatus prefix##_select(                                                  \
	    GcOpContext *ctx, const CustomOpIOTensor *inputs, int32_t numInputs,                   \
	    const CustomOpIOTensor *outputs, int32_t numOutputs, const CustomOpParam *params,      \
	    int32_t numParams, const char **flavour)                                               \
	{                                                                                          \
		(void)ctx;                                                                         \
		(void)numInputs;                                                                   \
		(void)outputs;                                                                     \
		(void)numOutputs;                                                                  \
		(void)params;                                                                      \
		(void)numParams;                                                                   \
		*flavour = kb_select(#Type, inputs);                                               \
		return *flavour != NULL ? GC_STATUS_OK : GC_STATUS_FAIL;                           \
	}

KB_OPS(KB_FUNCTIONS)
