/* RowSum's graphcc-interface flavours: rowSumForward, rowSumReverse (with
 * scratch and per-node state) and rowSumBroken (writes into its input). See
 * flavours.yaml. */
#include <graphcc/customop.h>

#include <stdlib.h>

GC_CUSTOMOP_EXPORT_ABI();

#define STATE_MAGIC 0x526f7753756dULL /* "RowSum" */

typedef struct reverse_state {
	unsigned long long magic;
	int64_t cols;
} reverse_state;

static float scale_of(const CustomOpParam *params, int32_t numParams)
{
	for (int32_t i = 0; i < numParams; i++)
		if (params[i].dtype == DTFloat32 && params[i].data && params[i].size == 0)
			return *(const float *)params[i].data;
	return 1.0f;
}

GC_CUSTOMOP_API GcStatus row_sum_forward(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					 int32_t numInputs, CustomOpIOTensor *outputs,
					 int32_t numOutputs, const CustomOpParam *params,
					 int32_t numParams)
{
	(void)ctx, (void)numInputs, (void)numOutputs;
	const float *x = inputs[0].data;
	float *y = outputs[0].data;
	int64_t rows = inputs[0].dims[0], cols = inputs[0].dims[1];
	float scale = scale_of(params, numParams);
	for (int64_t r = 0; r < rows; r++) {
		float s = 0.0f;
		for (int64_t c = 0; c < cols; c++)
			s += x[r * cols + c];
		y[r] = scale * s;
	}
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus row_sum_reverse_scratch(GcOpContext *ctx, const CustomOpIOTensor *inputs,
						 int32_t numInputs,
						 const CustomOpIOTensor *outputs,
						 int32_t numOutputs, const CustomOpParam *params,
						 int32_t numParams, uint64_t *bytes)
{
	(void)ctx, (void)numInputs, (void)outputs, (void)numOutputs, (void)params,
		(void)numParams;
	*bytes = (uint64_t)inputs[0].dims[1] * sizeof(float);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus row_sum_reverse_init(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					      int32_t numInputs, const CustomOpIOTensor *outputs,
					      int32_t numOutputs, const CustomOpParam *params,
					      int32_t numParams)
{
	(void)numInputs, (void)outputs, (void)numOutputs, (void)params, (void)numParams;
	reverse_state *st = malloc(sizeof *st);
	if (!st) {
		ctx->set_error(ctx, "out of memory");
		return GC_STATUS_FAIL;
	}
	st->magic = STATE_MAGIC;
	st->cols = inputs[0].dims[1];
	ctx->state = st;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API void row_sum_reverse_destroy(GcOpContext *ctx)
{
	reverse_state *st = ctx->state;
	if (st)
		st->magic = 0;
	free(st);
}

/* Copies each row reversed into scratch, then sums it front to back. */
GC_CUSTOMOP_API GcStatus row_sum_reverse(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					 int32_t numInputs, CustomOpIOTensor *outputs,
					 int32_t numOutputs, const CustomOpParam *params,
					 int32_t numParams)
{
	(void)numInputs, (void)numOutputs;
	const reverse_state *st = ctx->state;
	int64_t rows = inputs[0].dims[0], cols = inputs[0].dims[1];
	if (!st || st->magic != STATE_MAGIC || st->cols != cols) {
		ctx->set_error(ctx, "per-node state missing: init did not run for this node");
		return GC_STATUS_FAIL;
	}
	if (!ctx->scratch || ctx->scratch_bytes < (uint64_t)cols * sizeof(float)) {
		ctx->set_error(ctx, "scratch of %llu bytes, needs %llu",
			       (unsigned long long)ctx->scratch_bytes,
			       (unsigned long long)((uint64_t)cols * sizeof(float)));
		return GC_STATUS_FAIL;
	}
	const float *x = inputs[0].data;
	float *y = outputs[0].data, *tmp = ctx->scratch;
	float scale = scale_of(params, numParams);
	for (int64_t r = 0; r < rows; r++) {
		for (int64_t c = 0; c < cols; c++)
			tmp[c] = x[r * cols + cols - 1 - c];
		float s = 0.0f;
		for (int64_t c = 0; c < cols; c++)
			s += tmp[c];
		y[r] = scale * s;
	}
	return GC_STATUS_OK;
}

/* Misbehaves: scribbles on its input (which a kernel MUST NOT write), then
 * sums as rowSumForward does. */
GC_CUSTOMOP_API GcStatus row_sum_broken(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					int32_t numInputs, CustomOpIOTensor *outputs,
					int32_t numOutputs, const CustomOpParam *params,
					int32_t numParams)
{
	float *x = (float *)inputs[0].data;
	x[inputs[0].numel - 1] += 1.0f;
	return row_sum_forward(ctx, inputs, numInputs, outputs, numOutputs, params, numParams);
}
