/*
 * gcx-ops Interpreter implementations (graphcc interface): kernels, the
 * per-node state of PackedLinear (init/destroy) and the scratch size of
 * RowSoftmax. Kernels may run concurrently for one node: they only read
 * ctx->state and write their outputs and ctx->scratch.
 */
#include <math.h>
#include <stdlib.h>

#include "gcx-common.h"

GC_CUSTOMOP_EXPORT_ABI();

/* ------------------------------------------------------------ PackedLinear */

/* W [M, K] transposed once into Wt [K, M], so the kernel's inner loop runs
 * over contiguous memory of both Wt and y. */
typedef struct PackedLinear {
	int64_t k, m;
	float wt[];
} PackedLinear;

GC_CUSTOMOP_API GcStatus packed_linear_init(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					    int32_t numInputs, const CustomOpIOTensor *outputs,
					    int32_t numOutputs, const CustomOpParam *params,
					    int32_t numParams)
{
	const CustomOpIOTensor *w = &inputs[1];
	const float *src;
	PackedLinear *pl;
	int64_t m, k, i, j;

	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (numInputs < 2 || w->rank != 2 || w->dtype != DTFloat32)
		return GCX_FAIL(ctx, "init expects W as a float32 [M, K] input");
	if (w->data == NULL)
		return GCX_FAIL(ctx, "init needs the value of W, which must be a constant");
	m = w->dims[0];
	k = w->dims[1];
	if (m < 0 || k < 0 ||
	    (k > 0 && (uint64_t)m > (SIZE_MAX - sizeof *pl) / sizeof(float) / (uint64_t)k))
		return GCX_FAIL(ctx, "W is too large to pack");
	pl = malloc(sizeof *pl + (size_t)(m * k) * sizeof(float));
	if (pl == NULL)
		return GCX_FAIL(ctx, "out of memory packing W (%lld x %lld floats)", (long long)m,
				(long long)k);
	pl->k = k;
	pl->m = m;
	src = (const float *)w->data;
	for (i = 0; i < m; i++)
		for (j = 0; j < k; j++)
			pl->wt[j * m + i] = src[i * k + j];
	ctx->state = pl;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API void packed_linear_destroy(GcOpContext *ctx)
{
	free(ctx->state);
	ctx->state = NULL;
}

GC_CUSTOMOP_API GcStatus packed_linear_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					   int32_t numInputs, CustomOpIOTensor *outputs,
					   int32_t numOutputs, const CustomOpParam *params,
					   int32_t numParams)
{
	const PackedLinear *pl = ctx->state;
	const float *x, *bias = NULL;
	float *y;
	int64_t rows, r, i, j;

	(void)params;
	(void)numParams;
	if (pl == NULL)
		return GCX_FAIL(ctx, "W was not packed: init did not run for this node");
	if (numInputs < 2 || numOutputs != 1 || pl->k == 0 || inputs[0].numel % pl->k != 0 ||
	    outputs[0].numel != inputs[0].numel / pl->k * pl->m)
		return GCX_FAIL(ctx, "tensors do not match the packed W [%lld, %lld]",
				(long long)pl->m, (long long)pl->k);
	if (gcx_present(inputs, numInputs, 2))
		bias = (const float *)inputs[2].data;
	x = (const float *)inputs[0].data;
	y = (float *)outputs[0].data;
	rows = inputs[0].numel / pl->k;
	for (r = 0; r < rows; r++) {
		const float *xr = x + r * pl->k;
		float *yr = y + r * pl->m;
		for (j = 0; j < pl->m; j++)
			yr[j] = bias != NULL ? bias[j] : 0.0f;
		for (i = 0; i < pl->k; i++) {
			const float xv = xr[i];
			const float *wr = pl->wt + i * pl->m;
			for (j = 0; j < pl->m; j++)
				yr[j] += xv * wr[j];
		}
	}
	return GC_STATUS_OK;
}

/* ------------------------------------------------------------ RowSoftmax */

/* One row of exponentials, in double: the kernel reads a whole input row
 * into scratch before writing the output row, which also makes it safe in
 * place (the manifest says `inplace: true`). */
GC_CUSTOMOP_API GcStatus row_softmax_scratch(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					     int32_t numInputs, const CustomOpIOTensor *outputs,
					     int32_t numOutputs, const CustomOpParam *params,
					     int32_t numParams, uint64_t *bytes)
{
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (numInputs != 1 || inputs[0].rank < 1)
		return GCX_FAIL(ctx, "expects one input of rank >= 1");
	*bytes = (uint64_t)inputs[0].dims[inputs[0].rank - 1] * sizeof(double);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus row_softmax_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					 int32_t numInputs, CustomOpIOTensor *outputs,
					 int32_t numOutputs, const CustomOpParam *params,
					 int32_t numParams)
{
	float temperature;
	double *e = ctx->scratch;
	const float *x;
	float *y;
	int64_t k, rows, r, i;

	if (numInputs != 1 || numOutputs != 1 || inputs[0].rank < 1)
		return GCX_FAIL(ctx, "expects one input of rank >= 1 and one output");
	if (!gcx_float(params, numParams, "temperature", &temperature))
		return GCX_FAIL(ctx, "param temperature is missing");
	k = inputs[0].dims[inputs[0].rank - 1];
	if (k < 1)
		return GC_STATUS_OK;
	if (e == NULL || ctx->scratch_bytes < (uint64_t)k * sizeof(double))
		return GCX_FAIL(ctx, "scratch holds %llu bytes, the kernel needs %llu",
				(unsigned long long)ctx->scratch_bytes,
				(unsigned long long)((uint64_t)k * sizeof(double)));
	x = (const float *)inputs[0].data;
	y = (float *)outputs[0].data;
	rows = inputs[0].numel / k;
	for (r = 0; r < rows; r++) {
		const float *xr = x + r * k;
		float *yr = y + r * k;
		double top = -INFINITY, sum = 0.0;
		for (i = 0; i < k; i++) {
			e[i] = (double)xr[i] / temperature;
			if (e[i] > top)
				top = e[i];
		}
		for (i = 0; i < k; i++) {
			e[i] = exp(e[i] - top);
			sum += e[i];
		}
		for (i = 0; i < k; i++)
			yr[i] = (float)(e[i] / sum);
	}
	return GC_STATUS_OK;
}

/* ------------------------------------------------------------ ClampedAdd */

/* config of the float32 flavour: "nan=error" (the manifest's choice: a NaN
 * sum fails the kernel, naming where) or "nan=propagate" (NaN goes through,
 * as ONNX Clip would do). */
GC_CUSTOMOP_API GcStatus clamped_add_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					 int32_t numInputs, CustomOpIOTensor *outputs,
					 int32_t numOutputs, const CustomOpParam *params,
					 int32_t numParams)
{
	const float *a, *b;
	float *y, low, high;
	bool nan_fails;
	int64_t i, n;

	if (numInputs != 2 || numOutputs != 1)
		return GCX_FAIL(ctx, "expects inputs a, b and one output");
	if (!gcx_float(params, numParams, "low", &low) ||
	    !gcx_float(params, numParams, "high", &high))
		return GCX_FAIL(ctx, "params low and high are missing");
	nan_fails = gcx_config_is(ctx->config, "nan", "error");
	if (!nan_fails && gcx_config_has(ctx->config, "nan") &&
	    !gcx_config_is(ctx->config, "nan", "propagate"))
		return GCX_FAIL(ctx, "config \"%s\": nan must be error or propagate", ctx->config);
	a = (const float *)inputs[0].data;
	b = (const float *)inputs[1].data;
	y = (float *)outputs[0].data;
	n = outputs[0].numel;
	for (i = 0; i < n; i++) {
		float s = a[i] + b[i];
		if (isnan(s)) {
			if (nan_fails)
				return GCX_FAIL(ctx,
						"a + b is NaN at flat index %lld (a=%g, b=%g); "
						"flavour %s is configured with nan=error",
						(long long)i, (double)a[i], (double)b[i],
						ctx->flavour ? ctx->flavour : "clampedAddF32");
			y[i] = s;
			continue;
		}
		y[i] = s < low ? low : s > high ? high : s;
	}
	return GC_STATUS_OK;
}

/* The sum is taken in 64 bits, so it clamps instead of wrapping. */
GC_CUSTOMOP_API GcStatus clamped_add_i32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					 int32_t numInputs, CustomOpIOTensor *outputs,
					 int32_t numOutputs, const CustomOpParam *params,
					 int32_t numParams)
{
	const int32_t *a, *b;
	int32_t *y;
	float low, high;
	double lo_d, hi_d;
	int64_t lo, hi, i, n;

	if (numInputs != 2 || numOutputs != 1)
		return GCX_FAIL(ctx, "expects inputs a, b and one output");
	if (!gcx_float(params, numParams, "low", &low) ||
	    !gcx_float(params, numParams, "high", &high))
		return GCX_FAIL(ctx, "params low and high are missing");
	lo_d = ceil((double)low);
	hi_d = floor((double)high);
	lo = lo_d < INT32_MIN ? INT32_MIN : lo_d > INT32_MAX ? INT32_MAX : (int64_t)lo_d;
	hi = hi_d < INT32_MIN ? INT32_MIN : hi_d > INT32_MAX ? INT32_MAX : (int64_t)hi_d;
	a = (const int32_t *)inputs[0].data;
	b = (const int32_t *)inputs[1].data;
	y = (int32_t *)outputs[0].data;
	n = outputs[0].numel;
	for (i = 0; i < n; i++) {
		int64_t s = (int64_t)a[i] + b[i];
		y[i] = (int32_t)(s < lo ? lo : s > hi ? hi : s);
	}
	return GC_STATUS_OK;
}

/* ------------------------------------------------------------ LinearGelu */

/* y = gelu(x @ W^T + b) with graphcc's host services (ABI 1.1): the
 * product by graphcc's GEMM (ctx->sgemm) into temporary memory
 * (ctx->temp_alloc), then GELU, the costly part, over rows on graphcc's
 * worker pool (ctx->parallel_for): it scales with --threads, and the
 * package neither links a BLAS nor starts threads of its own. */
typedef struct gelu_rows_job {
	const float *t, *b;
	float *y;
	int64_t m;
} gelu_rows_job;

static void gelu_rows(void *arg, int64_t r0, int64_t r1)
{
	const gelu_rows_job *j = arg;
	for (int64_t r = r0; r < r1; r++)
		for (int64_t i = 0; i < j->m; i++) {
			float v = j->t[r * j->m + i] + (j->b ? j->b[i] : 0.0f);
			j->y[r * j->m + i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
		}
}

GC_CUSTOMOP_API GcStatus linear_gelu_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,
					 int32_t numInputs, CustomOpIOTensor *outputs,
					 int32_t numOutputs, const CustomOpParam *params,
					 int32_t numParams)
{
	(void)numInputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (!gcHostServices(ctx)) {
		ctx->set_error(ctx, "linearGeluF32 needs graphcc's host services (ABI 1.1 or later)");
		return GC_STATUS_FAIL;
	}
	const CustomOpIOTensor *x = &inputs[0], *w = &inputs[1];
	int64_t m = w->dims[0], k = w->dims[1], rows = k ? x->numel / k : 0;
	if (rows == 0 || m == 0)
		return GC_STATUS_OK;
	float *t = ctx->temp_alloc(ctx, (uint64_t)(rows * m) * sizeof(float));
	if (!t) {
		ctx->set_error(ctx, "no temporary memory for %lld x %lld floats", (long long)rows,
			       (long long)m);
		return GC_STATUS_FAIL;
	}
	if (ctx->sgemm(ctx, false, true, rows, m, k, 1.0f, x->data, k, w->data, k, 0.0f, t, m))
		return GC_STATUS_FAIL;
	gelu_rows_job j = { .t = t, .b = gcInputPresent(&inputs[2]) ? inputs[2].data : NULL,
			    .y = outputs[0].data, .m = m };
	return ctx->parallel_for(ctx, rows, gelu_rows, &j);
}
