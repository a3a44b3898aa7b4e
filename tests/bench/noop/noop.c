/* An operation that does nothing, to measure graphcc's cost around a custom
 * kernel. Functions and kernel in one library, graphcc interface. */
#include <graphcc/customop.h>

GC_CUSTOMOP_EXPORT_ABI();

GC_CUSTOMOP_API GcStatus noop_verify(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t nIn,
				     const CustomOpIOTensor *out, int32_t nOut,
				     const CustomOpParam *p, int32_t nP)
{
	(void)ctx, (void)in, (void)nIn, (void)out, (void)nOut, (void)p, (void)nP;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus noop_infer(GcOpContext *ctx, CustomOpIOTensor *out, int32_t nOut,
				    const CustomOpIOTensor *in, int32_t nIn,
				    const CustomOpParam *p, int32_t nP)
{
	(void)ctx, (void)nOut, (void)nIn, (void)p, (void)nP;
	out[0].rank = in[0].rank;
	for (int32_t i = 0; i < in[0].rank; i++)
		out[0].dims[i] = in[0].dims[i];
	out[0].dtype = in[0].dtype;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus noop_select(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t nIn,
				     const CustomOpIOTensor *out, int32_t nOut,
				     const CustomOpParam *p, int32_t nP, const char **flavour)
{
	(void)ctx, (void)in, (void)nIn, (void)out, (void)nOut, (void)p, (void)nP;
	*flavour = "noop";
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus noop(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t nIn,
			      CustomOpIOTensor *out, int32_t nOut, const CustomOpParam *p,
			      int32_t nP)
{
	(void)ctx, (void)in, (void)nIn, (void)out, (void)nOut, (void)p, (void)nP;
	return GC_STATUS_OK;
}

