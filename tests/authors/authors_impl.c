/*
 * Kernels of the test.authors package (graphcc interface). RMSNorm's
 * kernels read `weight` the way a new author does: through inputs[1].data,
 * trusting graphcc to make it NULL when the node has no weight (customop.h
 * promises a view for every declared input).
 *
 *   y = x / sqrt(mean(x^2 over the last dim) + epsilon) * weight
 */
#include <graphcc/customop.h>

#include <math.h>
#include <string.h>

GC_CUSTOMOP_EXPORT_ABI();

static float param_float(const CustomOpParam *params, int32_t numParams, const char *name)
{
	int32_t i;
	for (i = 0; i < numParams; i++)
		if (!strcmp(params[i].name, name))
			return *(const float *)params[i].data;
	return 0.0f;
}

static void rms_rows(const float *x, const float *w, float *y, int64_t rows, int64_t c,
		     float eps)
{
	int64_t r, j;
	for (r = 0; r < rows; r++) {
		double ss = 0;
		for (j = 0; j < c; j++)
			ss += (double)x[r * c + j] * x[r * c + j];
		float inv = 1.0f / sqrtf((float)(ss / (double)c) + eps);
		for (j = 0; j < c; j++)
			y[r * c + j] = x[r * c + j] * inv * (w ? w[j] : 1.0f);
	}
}

GC_CUSTOMOP_API GcStatus rms_norm_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	int64_t c = inputs[0].dims[inputs[0].rank - 1];
	(void)ctx;
	(void)numInputs;
	(void)numOutputs;
	rms_rows(inputs[0].data, inputs[1].data, outputs[0].data, inputs[0].numel / c, c,
		 param_float(params, numParams, "epsilon"));
	return GC_STATUS_OK;
}

/* The "AVX2" flavour: whole blocks of 8, so it is only right (and only
 * stays inside y) when the last dimension is a multiple of 8: on other
 * rows its sums take in the next row's values and its last block writes
 * past the end of y. */
GC_CUSTOMOP_API GcStatus rms_norm_by8(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	const float *x = inputs[0].data, *w = inputs[1].data;
	float *y = outputs[0].data;
	int64_t c = inputs[0].dims[inputs[0].rank - 1], rows = inputs[0].numel / c;
	int64_t padded = (c + 7) / 8 * 8, r, j;
	float eps = param_float(params, numParams, "epsilon");
	(void)ctx;
	(void)numInputs;
	(void)numOutputs;
	for (r = 0; r < rows; r++) {
		double ss = 0;
		for (j = 0; j < padded; j++) {
			int64_t at = r * c + j;
			float v = at < inputs[0].numel ? x[at] : 0.0f;
			ss += (double)v * v;
		}
		float inv = 1.0f / sqrtf((float)(ss / (double)c) + eps);
		for (j = 0; j < padded; j++) {
			int64_t at = r * c + j;
			float v = at < inputs[0].numel ? x[at] : 0.0f;
			y[at] = v * inv * (w && j < c ? w[j] : 1.0f);
		}
	}
	return GC_STATUS_OK;
}

/* A flavour with a bug that makes y[0] NaN. */
GC_CUSTOMOP_API GcStatus rms_norm_nan(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				      int32_t numInputs, CustomOpIOTensor *outputs,
				      int32_t numOutputs, const CustomOpParam *params,
				      int32_t numParams)
{
	rms_norm_f32(ctx, inputs, numInputs, outputs, numOutputs, params, numParams);
	((float *)outputs[0].data)[0] = -nanf("");
	return GC_STATUS_OK;
}

static float *volatile nowhere = 0;

GC_CUSTOMOP_API GcStatus crash_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				   int32_t numInputs, CustomOpIOTensor *outputs, int32_t numOutputs,
				   const CustomOpParam *params, int32_t numParams)
{
	(void)ctx;
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	nowhere[0] = 1.0f;
	return GC_STATUS_OK;
}

/* values: the k largest of each row (at most 64 long), largest first
 * (ties: lower index first); indices (int64, optional): where they were.
 * Writes indices only when the node has that output. */
GC_CUSTOMOP_API GcStatus topk_mask_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				       int32_t numInputs, CustomOpIOTensor *outputs,
				       int32_t numOutputs, const CustomOpParam *params,
				       int32_t numParams)
{
	const float *x = inputs[0].data;
	float *vals = outputs[0].data;
	int64_t *idx = gcOutputPresent(&outputs[1]) ? outputs[1].data : NULL;
	int64_t c = inputs[0].dims[inputs[0].rank - 1], rows = inputs[0].numel / c;
	int64_t k = outputs[0].dims[outputs[0].rank - 1], r, i, j;
	(void)numInputs;
	(void)params;
	(void)numParams;
	if (numOutputs != 2 || c > 64) {
		ctx->set_error(ctx, "expects the declared 2 outputs (got %d) and rows of at most 64",
			       (int)numOutputs);
		return GC_STATUS_FAIL;
	}
	for (r = 0; r < rows; r++) {
		const float *row = x + r * c;
		uint64_t taken = 0;
		for (i = 0; i < k; i++) {
			int64_t best = -1;
			for (j = 0; j < c; j++)
				if (!(taken >> j & 1) && (best < 0 || row[j] > row[best]))
					best = j;
			taken |= (uint64_t)1 << best;
			vals[r * k + i] = row[best];
			if (idx)
				idx[r * k + i] = best;
		}
	}
	return GC_STATUS_OK;
}
