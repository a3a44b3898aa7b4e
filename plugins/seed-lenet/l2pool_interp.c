/*
 * L2Pool Interpreter kernel (seed interface): NCHW float32, no padding.
 * Verify and shape inference guarantee rank 4, positive kernel and stride,
 * and an output of ((H - kh) / sh + 1) x ((W - kw) / sw + 1).
 */
#include <math.h>

#include "lenet-params.h"

GC_CUSTOMOP_API void l2PoolF32(CustomOpIOTensor *inputs, int32_t numInputs,
			       CustomOpIOTensor *outputs, int32_t numOutputs, CustomOpParam *params,
			       int32_t numParams)
{
	int64_t kernel[2], stride[2];
	int64_t planes, h, w, oh, ow, p, i, j, a, b;
	const float *x;
	float *y;

	if (numInputs != 1 || numOutputs != 1 || inputs[0].rank != 4 || outputs[0].rank != 4)
		return;
	if (!lenet_int_pair(params, numParams, "kernel_size", kernel) ||
	    !lenet_int_pair(params, numParams, "stride", stride))
		return;
	planes = inputs[0].dims[0] * inputs[0].dims[1];
	h = inputs[0].dims[2];
	w = inputs[0].dims[3];
	oh = outputs[0].dims[2];
	ow = outputs[0].dims[3];
	x = (const float *)inputs[0].data;
	y = (float *)outputs[0].data;
	for (p = 0; p < planes; p++) {
		const float *xp = x + p * h * w;
		float *yp = y + p * oh * ow;
		for (i = 0; i < oh; i++) {
			for (j = 0; j < ow; j++) {
				const float *win = xp + i * stride[0] * w + j * stride[1];
				double sum = 0.0;
				for (a = 0; a < kernel[0]; a++)
					for (b = 0; b < kernel[1]; b++) {
						double v = win[a * w + b];
						sum += v * v;
					}
				yp[i * ow + j] = (float)sqrt(sum);
			}
		}
	}
}
