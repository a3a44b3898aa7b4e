/*
 * The demo package's Interpreter kernels. graphcc has run verify, shape
 * inference and selection at compile time, so shapes, types and params are
 * the ones checked there; each kernel still refuses a tensor that does not
 * match its own output, rather than write out of bounds.
 *
 * Kernels keep no state and allocate nothing, so several threads may run
 * them at once. The ScaledSwish kernels read x[i] before writing y[i], so
 * they work in place (manifest: inplace).
 */
#include <math.h>

#include "demo-common.h"

#include <string.h>

GC_CUSTOMOP_EXPORT_ABI();

static GcStatus check_same(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t numInputs,
			   const CustomOpIOTensor *out, int32_t numOutputs)
{
	if (numInputs != 1 || numOutputs != 1)
		return demo_fail(ctx, "expected 1 input and 1 output, got %d and %d",
				 (int)numInputs, (int)numOutputs);
	if (in->rank < 2 || in->rank != out->rank || in->dtype != out->dtype ||
	    in->numel != out->numel)
		return demo_fail(ctx,
				 "output y does not match input x (rank %d/%d, %lld/%lld "
				 "elements)",
				 (int)out->rank, (int)in->rank, (long long)out->numel,
				 (long long)in->numel);
	for (int32_t d = 0; d < in->rank; d++)
		if (in->dims[d] != out->dims[d])
			return demo_fail(ctx, "output y dim %d is %lld, input x's is %lld", (int)d,
					 (long long)out->dims[d], (long long)in->dims[d]);
	return GC_STATUS_OK;
}

/* ---------------------------------------------------------------- ChannelShuffle */

/* out[n, j*g + i] = in[n, i*(C/g) + j] for i < g, j < C/g: one memcpy per
 * channel plane, whatever the element type. */
GC_CUSTOMOP_API GcStatus channel_shuffle_copy(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					      int32_t numInputs, CustomOpIOTensor *outputs,
					      int32_t numOutputs, const CustomOpParam *params,
					      int32_t numParams)
{
	if (check_same(ctx, inputs, numInputs, outputs, numOutputs))
		return GC_STATUS_FAIL;
	(void)numParams;
	const CustomOpIOTensor *x = &inputs[0];
	int64_t n = x->dims[0], c = x->dims[1];
	int64_t groups = gcParamInt(params, CHANNEL_SHUFFLE_GROUPS);
	if (groups < 1 || c % groups)
		return demo_fail(ctx, "groups=%lld does not split %lld channels", (long long)groups,
				 (long long)c);
	if (x->numel == 0)
		return GC_STATUS_OK;
	size_t plane = (size_t)demo_plane(x) * gcDataTypeSize(x->dtype);
	int64_t per_group = c / groups;
	const char *src = x->data;
	char *dst = outputs[0].data;
	for (int64_t b = 0; b < n; b++) {
		const char *s = src + (size_t)(b * c) * plane;
		char *o = dst + (size_t)(b * c) * plane;
		for (int64_t i = 0; i < groups; i++)
			for (int64_t j = 0; j < per_group; j++)
				memcpy(o + (size_t)(j * groups + i) * plane,
				       s + (size_t)(i * per_group + j) * plane, plane);
	}
	return GC_STATUS_OK;
}

/* ---------------------------------------------------------------- ScaledSwish */

typedef struct swish_params {
	const float *beta;
	int64_t n_beta; /* 1, or one per channel */
	float scale;
} swish_params;

static GcStatus get_swish(GcOpContext *ctx, const CustomOpIOTensor *x, const CustomOpParam *params,
			  int32_t numParams, swish_params *sp)
{
	(void)numParams;
	int32_t n_beta;
	sp->beta = gcParamFloats(params, SCALED_SWISH_BETA, &n_beta);
	sp->n_beta = n_beta > 0 ? n_beta : 1;
	sp->scale = gcParamFloat(params, SCALED_SWISH_SCALE);
	if (sp->n_beta != 1 && sp->n_beta != x->dims[1])
		return demo_fail(ctx, "beta has %lld values for %lld channels",
				 (long long)sp->n_beta, (long long)x->dims[1]);
	return GC_STATUS_OK;
}

/* Any rank >= 2, float32 or float64, computed in double. */
GC_CUSTOMOP_API GcStatus scaled_swish_generic(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					      int32_t numInputs, CustomOpIOTensor *outputs,
					      int32_t numOutputs, const CustomOpParam *params,
					      int32_t numParams)
{
	swish_params sp;
	if (check_same(ctx, inputs, numInputs, outputs, numOutputs) ||
	    get_swish(ctx, &inputs[0], params, numParams, &sp))
		return GC_STATUS_FAIL;
	const CustomOpIOTensor *x = &inputs[0];
	int64_t c = x->dims[1], plane = demo_plane(x);
	for (int64_t i = 0; i < x->numel; i++) {
		int64_t ch = (i / plane) % c;
		double b = sp.beta[sp.n_beta == 1 ? 0 : ch];
		double v = x->dtype == DTFloat32 ? ((const float *)x->data)[i]
						 : ((const double *)x->data)[i];
		double y = sp.scale * v / (1.0 + exp(-b * v));
		if (x->dtype == DTFloat32)
			((float *)outputs[0].data)[i] = (float)y;
		else
			((double *)outputs[0].data)[i] = y;
	}
	return GC_STATUS_OK;
}

/* float32 NCHW: one (n, c) plane at a time with its beta hoisted, in single
 * precision. */
GC_CUSTOMOP_API GcStatus scaled_swish_planes_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
						 int32_t numInputs, CustomOpIOTensor *outputs,
						 int32_t numOutputs, const CustomOpParam *params,
						 int32_t numParams)
{
	swish_params sp;
	if (check_same(ctx, inputs, numInputs, outputs, numOutputs) ||
	    get_swish(ctx, &inputs[0], params, numParams, &sp))
		return GC_STATUS_FAIL;
	const CustomOpIOTensor *x = &inputs[0];
	if (x->dtype != DTFloat32 || x->rank != 4)
		return demo_fail(ctx, "scaledSwishPlanesF32 needs float32 NCHW input");
	int64_t n = x->dims[0], c = x->dims[1], plane = demo_plane(x);
	const float *src = x->data;
	float *dst = outputs[0].data;
	const float scale = sp.scale;
	for (int64_t b = 0; b < n; b++)
		for (int64_t ch = 0; ch < c; ch++) {
			const float nb = -sp.beta[sp.n_beta == 1 ? 0 : ch];
			const float *s = src + (b * c + ch) * plane;
			float *o = dst + (b * c + ch) * plane;
			for (int64_t k = 0; k < plane; k++) {
				float v = s[k];
				o[k] = scale * v / (1.0f + expf(nb * v));
			}
		}
	return GC_STATUS_OK;
}
