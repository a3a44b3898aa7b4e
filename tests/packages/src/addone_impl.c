/*
 * Implementation library of the AddOne fixture package (the seed
 * interface): the Interpreter kernel `addOneFloat`,
 *     y[i] = x[i] + delta (+ bias[i], or + bias[0] when bias has one value).
 * Built with -DADDONE_KERNEL_EXIT, the kernel calls exit(0) instead (the
 * kernel-exit fixture: a run that did not finish must not exit 0).
 */
#include <graphcc/customop.h>
#include <stdlib.h>
#include <string.h>

static int64_t count(const CustomOpIOTensor *t)
{
	int64_t n = 1;
	for (int32_t d = 0; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

GC_CUSTOMOP_API void addOneFloat(CustomOpIOTensor *inputs, int32_t numInputs,
				 CustomOpIOTensor *outputs, int32_t numOutputs,
				 CustomOpParam *params, int32_t numParams)
{
#ifdef ADDONE_KERNEL_EXIT
	exit(0);
#endif
	if (numInputs < 1 || numOutputs < 1)
		return;
	float delta = 0.0f;
	for (int32_t p = 0; p < numParams; p++)
		if (params[p].name && !strcmp(params[p].name, "delta") &&
		    params[p].dtype == DTFloat32 && params[p].data)
			delta = *(const float *)params[p].data;
	const float *x = (const float *)inputs[0].data;
	float *y = (float *)outputs[0].data;
	int64_t n = count(&outputs[0]);
	const float *bias = numInputs > 1 ? (const float *)inputs[1].data : NULL;
	int64_t nb = bias ? count(&inputs[1]) : 0;
	for (int64_t i = 0; i < n; i++) {
		float v = x[i] + delta;
		if (bias)
			v += nb == n ? bias[i] : bias[0];
		y[i] = v;
	}
}
