/* RowSum's rowSumSkewed flavour, written to the seed interface: the sum in
 * double, rounded, and then deliberately 1e-3 too large on element 0 (the
 * flavour --compare-flavours must name as the worst). See flavours.yaml. */
#include <graphcc/customop.h>

GC_CUSTOMOP_API void rowSumSkewed(CustomOpIOTensor *inputs, int32_t numInputs,
				  CustomOpIOTensor *outputs, int32_t numOutputs,
				  CustomOpParam *params, int32_t numParams)
{
	(void)numInputs, (void)numOutputs;
	const float *x = inputs[0].data;
	float *y = outputs[0].data;
	int64_t rows = inputs[0].dims[0], cols = inputs[0].dims[1];
	double scale = 1.0;
	for (int32_t i = 0; i < numParams; i++)
		if (params[i].dtype == DTFloat32 && params[i].data && params[i].size == 0)
			scale = *(const float *)params[i].data;
	for (int64_t r = 0; r < rows; r++) {
		double s = 0.0;
		for (int64_t c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = (float)(scale * s + (r == 0 ? 1e-3 : 0.0));
	}
}
