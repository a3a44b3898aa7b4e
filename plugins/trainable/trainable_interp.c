/*
 * trainable kernels (graphcc interface), float32 and float64: the forward
 * operations and their backward operations (trainable_fn.c lists them).
 * Built with -DTRAINABLE_WRONG_BACKWARD (tests/packages/wrong-grad), the
 * ParamSwishGrad kernels drop the beta x s (1 - s) term: a backward that
 * `graphcc gradcheck` must catch.
 */
#include <math.h>

#include "trainable-common.h"

GC_CUSTOMOP_EXPORT_ABI();

#ifdef TRAINABLE_WRONG_BACKWARD
#define SWISH_SLOPE(x, s, beta) (s)
#else
#define SWISH_SLOPE(x, s, beta) ((s) + (beta) * (x) * (s) * (1 - (s)))
#endif

#define KERNELS(T, SFX)                                                                            \
	GC_CUSTOMOP_API GcStatus param_swish_##SFX(GcOpContext *ctx,                               \
						   const CustomOpIOTensor *inputs,                 \
						   int32_t numInputs, CustomOpIOTensor *outputs,   \
						   int32_t numOutputs,                             \
						   const CustomOpParam *params, int32_t numParams) \
	{                                                                                          \
		const T *x = (const T *)inputs[0].data;                                            \
		T *y = (T *)outputs[0].data;                                                       \
		float beta;                                                                        \
		int64_t i;                                                                         \
		(void)numInputs;                                                                   \
		(void)numOutputs;                                                                  \
		if (!tr_float(params, numParams, "beta", &beta))                                   \
			return TR_FAIL(ctx, "param beta is missing");                              \
		for (i = 0; i < inputs[0].numel; i++)                                              \
			y[i] = x[i] / (1 + exp(-(T)beta * x[i]));                                  \
		return GC_STATUS_OK;                                                               \
	}                                                                                          \
	GC_CUSTOMOP_API GcStatus param_swish_grad_##SFX(                                           \
	    GcOpContext *ctx, const CustomOpIOTensor *inputs, int32_t numInputs,                   \
	    CustomOpIOTensor *outputs, int32_t numOutputs, const CustomOpParam *params,            \
	    int32_t numParams)                                                                     \
	{                                                                                          \
		const T *x = (const T *)inputs[0].data, *dy = (const T *)inputs[1].data;           \
		T *dx = (T *)outputs[0].data;                                                      \
		float beta;                                                                        \
		int64_t i;                                                                         \
		(void)numInputs;                                                                   \
		(void)numOutputs;                                                                  \
		if (!tr_float(params, numParams, "beta", &beta))                                   \
			return TR_FAIL(ctx, "param beta is missing");                              \
		for (i = 0; i < inputs[0].numel; i++) {                                            \
			T s = 1 / (1 + exp(-(T)beta * x[i]));                                      \
			dx[i] = dy[i] * SWISH_SLOPE(x[i], s, (T)beta);                             \
		}                                                                                  \
		return GC_STATUS_OK;                                                               \
	}                                                                                          \
	GC_CUSTOMOP_API GcStatus channel_scale_##SFX(GcOpContext *ctx,                             \
						     const CustomOpIOTensor *inputs,               \
						     int32_t numInputs, CustomOpIOTensor *outputs, \
						     int32_t numOutputs,                           \
						     const CustomOpParam *params,                  \
						     int32_t numParams)                            \
	{                                                                                          \
		const T *x = (const T *)inputs[0].data, *g = (const T *)inputs[1].data;            \
		T *y = (T *)outputs[0].data;                                                       \
		int64_t c = inputs[0].dims[1], in = tr_inner(&inputs[0], 2), i;                   \
		(void)ctx;                                                                         \
		(void)numInputs;                                                                   \
		(void)numOutputs;                                                                  \
		(void)params;                                                                      \
		(void)numParams;                                                                   \
		for (i = 0; i < inputs[0].numel; i++)                                              \
			y[i] = x[i] * g[(i / in) % c];                                             \
		return GC_STATUS_OK;                                                               \
	}                                                                                          \
	GC_CUSTOMOP_API GcStatus channel_scale_grad_##SFX(                                         \
	    GcOpContext *ctx, const CustomOpIOTensor *inputs, int32_t numInputs,                   \
	    CustomOpIOTensor *outputs, int32_t numOutputs, const CustomOpParam *params,            \
	    int32_t numParams)                                                                     \
	{                                                                                          \
		const T *x = (const T *)inputs[0].data, *g = (const T *)inputs[1].data;            \
		const T *dy = (const T *)inputs[2].data;                                           \
		T *dx = (T *)outputs[0].data, *dg = (T *)outputs[1].data;                          \
		int64_t c = inputs[0].dims[1], in = tr_inner(&inputs[0], 2), i;                   \
		(void)ctx;                                                                         \
		(void)numInputs;                                                                   \
		(void)numOutputs;                                                                  \
		(void)params;                                                                      \
		(void)numParams;                                                                   \
		for (i = 0; i < c; i++)                                                            \
			dg[i] = 0;                                                                 \
		for (i = 0; i < inputs[0].numel; i++) {                                            \
			dx[i] = dy[i] * g[(i / in) % c];                                           \
			dg[(i / in) % c] += dy[i] * x[i];                                          \
		}                                                                                  \
		return GC_STATUS_OK;                                                               \
	}

KERNELS(float, f32)
KERNELS(double, f64)
