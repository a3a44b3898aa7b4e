/*
 * qsilu kernels (Interpreter).
 *
 * siluTable: x is qint8 or quint8, so it has 256 possible values: init
 * works out y for each of them once (dequantize with x's scale and offset,
 * SiLU in double, then quantize with y's scale and offset when y is
 * quantized, or keep the float) and the kernel is one table look-up per
 * element, on graphcc's worker pool.
 *
 * siluFloat: x is float32; y = x * sigmoid(x) in float32, or quantized
 * with y's scale and offset when graphcc bound y quantized.
 */
#include <stdlib.h>
#include <string.h>

#include "qsilu-common.h"

GC_CUSTOMOP_EXPORT_ABI();

typedef struct table {
	CustomOpDataType in, out;
	float f[256];	  /* y as float (out DTFloat32) */
	int32_t q[256];	  /* y quantized (out DTQInt8 / DTQUInt8) */
} table;

/* Table index of element i of x. */
static inline int index_of(const CustomOpIOTensor *x, int64_t i)
{
	return x->dtype == DTQUInt8 ? ((const uint8_t *)x->data)[i]
				    : ((const int8_t *)x->data)[i] + 128;
}

GC_CUSTOMOP_API GcStatus qsilu_table_init(GcOpContext *ctx, const CustomOpIOTensor *in,
					  int32_t n_in, const CustomOpIOTensor *out, int32_t n_out,
					  const CustomOpParam *params, int32_t n_params)
{
	(void)n_in;
	(void)n_out;
	(void)params;
	(void)n_params;
	if (!qsilu_quantized(in[0].dtype)) {
		ctx->set_error(ctx, "siluTable needs a quantized x");
		return GC_STATUS_FAIL;
	}
	table *t = calloc(1, sizeof *t);
	if (!t) {
		ctx->set_error(ctx, "out of memory");
		return GC_STATUS_FAIL;
	}
	t->in = in[0].dtype;
	t->out = out[0].dtype;
	for (int k = 0; k < 256; k++) {
		int32_t q = in[0].dtype == DTQUInt8 ? k : k - 128;
		double y = qsilu_ref((double)in[0].scale * (double)(q - in[0].offset));
		t->f[k] = (float)y;
		if (qsilu_quantized(out[0].dtype))
			t->q[k] = qsilu_quantize(y, &out[0]);
	}
	ctx->state = t;
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API void qsilu_table_destroy(GcOpContext *ctx)
{
	free(ctx->state);
}

typedef struct job {
	const table *t;
	const CustomOpIOTensor *x;
	CustomOpIOTensor *y;
} job;

static void table_part(void *arg, int64_t lo, int64_t hi)
{
	const job *j = arg;
	const table *t = j->t;
	if (t->out == DTQUInt8) {
		uint8_t *y = j->y->data;
		for (int64_t i = lo; i < hi; i++)
			y[i] = (uint8_t)t->q[index_of(j->x, i)];
	} else if (t->out == DTQInt8) {
		int8_t *y = j->y->data;
		for (int64_t i = lo; i < hi; i++)
			y[i] = (int8_t)t->q[index_of(j->x, i)];
	} else {
		float *y = j->y->data;
		for (int64_t i = lo; i < hi; i++)
			y[i] = t->f[index_of(j->x, i)];
	}
}

static GcStatus run_parts(GcOpContext *ctx, int64_t n, void (*fn)(void *, int64_t, int64_t),
			  void *arg)
{
	if (gcHostServices(ctx) && n >= 65536)
		return ctx->parallel_for(ctx, n, fn, arg);
	fn(arg, 0, n);
	return GC_STATUS_OK;
}

GC_CUSTOMOP_API GcStatus qsilu_table(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
				     CustomOpIOTensor *out, int32_t n_out,
				     const CustomOpParam *params, int32_t n_params)
{
	(void)n_in;
	(void)n_out;
	(void)params;
	(void)n_params;
	const table *t = ctx->state;
	if (!t || t->in != in[0].dtype || t->out != out[0].dtype) {
		ctx->set_error(ctx, "the table was made for other types");
		return GC_STATUS_FAIL;
	}
	job j = { t, &in[0], &out[0] };
	return run_parts(ctx, in[0].numel, table_part, &j);
}

static void float_part(void *arg, int64_t lo, int64_t hi)
{
	const job *j = arg;
	const float *x = j->x->data;
	CustomOpIOTensor *yt = j->y;
	for (int64_t i = lo; i < hi; i++) {
		if (yt->dtype == DTFloat32) {
			((float *)yt->data)[i] = x[i] / (1.0f + expf(-x[i]));
			continue;
		}
		int32_t q = qsilu_quantize(qsilu_ref((double)x[i]), yt);
		if (yt->dtype == DTQUInt8)
			((uint8_t *)yt->data)[i] = (uint8_t)q;
		else
			((int8_t *)yt->data)[i] = (int8_t)q;
	}
}

GC_CUSTOMOP_API GcStatus qsilu_float(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
				     CustomOpIOTensor *out, int32_t n_out,
				     const CustomOpParam *params, int32_t n_params)
{
	(void)n_in;
	(void)n_out;
	(void)params;
	(void)n_params;
	job j = { NULL, &in[0], &out[0] };
	return run_parts(ctx, in[0].numel, float_part, &j);
}
