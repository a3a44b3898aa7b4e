/*
 * seed-grad's kernels, seed interface (void kernels found by their flavour
 * name): ScaledTanh y = alpha tanh(beta x) and its backward ScaledTanhGrad
 * dx = dy alpha beta (1 - tanh(beta x)^2). Built with -DSEEDGRAD_WRONG the
 * backward forgets the square (1 - tanh), the mistake `graphcc gradcheck`
 * must catch (tests/packages/seed-grad-wrong).
 */
#include <graphcc/customop.h>
#include <math.h>
#include <string.h>

static double param(const CustomOpParam *params, int32_t n, const char *name)
{
	for (int32_t i = 0; i < n; i++)
		if (params[i].name && !strcmp(params[i].name, name) && params[i].data)
			return *(const float *)params[i].data;
	return NAN;
}

#ifdef SEEDGRAD_WRONG
#define SLOPE(t) (1 - (t))
#else
#define SLOPE(t) (1 - (t) * (t))
#endif

#define KERNELS(T, sfx, TANH)                                                                     \
	GC_CUSTOMOP_API void scaledTanh##sfx(CustomOpIOTensor *inputs, int32_t numInputs,          \
					     CustomOpIOTensor *outputs, int32_t numOutputs,        \
					     CustomOpParam *params, int32_t numParams)             \
	{                                                                                          \
		if (numInputs < 1 || numOutputs < 1)                                               \
			return;                                                                    \
		T alpha = (T)param(params, numParams, "alpha");                                    \
		T beta = (T)param(params, numParams, "beta");                                      \
		const T *x = inputs[0].data;                                                       \
		T *y = outputs[0].data;                                                            \
		for (int64_t i = 0; i < outputs[0].numel; i++)                                     \
			y[i] = alpha * TANH(beta * x[i]);                                          \
	}                                                                                          \
	GC_CUSTOMOP_API void scaledTanhGrad##sfx(CustomOpIOTensor *inputs, int32_t numInputs,      \
						 CustomOpIOTensor *outputs, int32_t numOutputs,    \
						 CustomOpParam *params, int32_t numParams)         \
	{                                                                                          \
		if (numInputs < 2 || numOutputs < 1)                                               \
			return;                                                                    \
		T alpha = (T)param(params, numParams, "alpha");                                    \
		T beta = (T)param(params, numParams, "beta");                                      \
		const T *x = inputs[0].data, *dy = inputs[1].data;                                 \
		T *dx = outputs[0].data;                                                           \
		for (int64_t i = 0; i < outputs[0].numel; i++) {                                   \
			T t = TANH(beta * x[i]);                                                   \
			dx[i] = dy[i] * alpha * beta * SLOPE(t);                                   \
		}                                                                                  \
	}

KERNELS(float, F32, tanhf)
KERNELS(double, F64, tanh)
