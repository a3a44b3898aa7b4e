/*
 * qsilu functions library: verify, shape inference and selection of Silu
 * (y = x * sigmoid(x)). x is float32, or qint8/quint8 when graphcc binds it
 * through a DequantizeLinear; y is float32, or qint8/quint8 when graphcc
 * binds it through QuantizeLinear (it then arrives at inferShape with that
 * dtype, its scale and offset set, and keeps them). Selection picks by the
 * input's type: the table kernel for a quantized x, the float one otherwise.
 */
#include <stdio.h>

#include "qsilu-common.h"

GC_CUSTOMOP_EXPORT_ABI();

GC_CUSTOMOP_API GcStatus qsilu_verify(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
				      const CustomOpIOTensor *out, int32_t n_out,
				      const CustomOpParam *params, int32_t n_params)
{
	(void)out;
	(void)params;
	(void)n_params;
	if (n_in != 1 || n_out != 1) {
		ctx->set_error(ctx, "Silu takes one input and one output");
		return GC_STATUS_FAIL;
	}
	if (in[0].dtype != DTFloat32 && !qsilu_quantized(in[0].dtype)) {
		ctx->set_error(ctx, "x must be float32, qint8 or quint8 (dtype %d)", (int)in[0].dtype);
		return GC_STATUS_FAIL;
	}
	if (qsilu_quantized(in[0].dtype) && !(in[0].scale > 0)) {
		ctx->set_error(ctx, "x is quantized with scale %g", (double)in[0].scale);
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus qsilu_infer(GcOpContext *ctx, CustomOpIOTensor *out, int32_t n_out,
				     const CustomOpIOTensor *in, int32_t n_in,
				     const CustomOpParam *params, int32_t n_params)
{
	(void)ctx;
	(void)n_out;
	(void)n_in;
	(void)params;
	(void)n_params;
	out[0].rank = in[0].rank;
	for (int32_t k = 0; k < in[0].rank; k++)
		out[0].dims[k] = in[0].dims[k];
	/* A quantized output keeps the type graphcc bound it as. */
	if (!qsilu_quantized(out[0].dtype))
		out[0].dtype = DTFloat32;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus qsilu_select(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
				      const CustomOpIOTensor *out, int32_t n_out,
				      const CustomOpParam *params, int32_t n_params,
				      const char **flavour)
{
	(void)ctx;
	(void)n_in;
	(void)out;
	(void)n_out;
	(void)params;
	(void)n_params;
	*flavour = qsilu_quantized(in[0].dtype) ? "siluTable" : "siluFloat";
	return GC_STATUS_OK;
}
