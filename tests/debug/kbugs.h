/*
 * test.kbugs: one operation per classic kernel bug, for the tutorial's
 * "finding a kernel bug" and tests/e2e/cases_kbugs.py. Each bug lives in
 * a plain function here; kbugs_fn.c / kbugs_impl.c wrap them for the
 * graphcc interface, kbugs_seed_fn.c / kbugs_seed_impl.c for the seed
 * interface, so both call paths carry the same bugs.
 *
 *   Scale       y = factor * x                              (correct)
 *   AccumSum    y = x, through a scratch accumulator it never zeroes
 *   ChannelBias y = x + bias[c], c along axis 1; the nchw flavour, picked
 *               for rank >= 3, indexes as if the tensor were NCHW
 *   PrefixSum   y[i] = x[0] + ... + x[i], and one float past the end
 *   Clip6       y = min(max(x, 0), 6), clamping its input in place first
 *   SafeLog     y = log(x + 1e-6): NaN for x < -1e-6
 *   Gamma       y = x^gamma through a 256-entry table kept in a static
 *               buffer, built from the first caller's gamma
 *   PadEnd      y = x with 1 appended along the last axis; its shape
 *               inference forgets the +1
 *   ArgMaxLast  y = argmax along the last axis (int64); its shape
 *               inference says float32
 *   SlowCopy    y = x, in O(n^2)
 */
#ifndef KBUGS_H
#define KBUGS_H

#include <graphcc/customop.h>
#include <math.h>
#include <string.h>

#include "buggy.h"

typedef struct kb_call {
	const CustomOpIOTensor *in;
	int32_t n_in;
	CustomOpIOTensor *out;
	int32_t n_out;
	const CustomOpParam *params;
	int32_t n_params;
	void *scratch; /* NULL in the seed interface */
} kb_call;

/* The param called name, or NULL (buggy.h's). */
#define kb_param buggy_param

static inline float kb_float(const kb_call *c, const char *name, float def)
{
	const CustomOpParam *p = kb_param(c->params, c->n_params, name);
	return p != NULL ? *(const float *)p->data : def;
}

/* ------------------------------------------------------------ functions */

/* verify: one float32 input, one output. NULL or why not. */
static inline const char *kb_verify(const CustomOpIOTensor *in, int32_t n_in, int32_t n_out)
{
	if (n_in != 1 || n_out != 1)
		return "expects one input and one output";
	if (in[0].dtype != DTFloat32)
		return "x must be float32";
	if (in[0].rank < 1)
		return "x must have rank 1 or more";
	return NULL;
}

/* Shape inference of operation `type`: x's shape and float32, except
 * ArgMaxLast (drops the last axis) and PadEnd. Both carry a bug. */
static inline int kb_infer(const char *type, CustomOpIOTensor *out, const CustomOpIOTensor *in)
{
	int32_t d, rank = in[0].rank;

	if (rank > out[0].maxDims)
		return 0;
	if (strcmp(type, "ArgMaxLast") == 0)
		rank--;
	out[0].rank = rank;
	for (d = 0; d < rank; d++)
		out[0].dims[d] = in[0].dims[d];
	/* PadEnd: BUG, the last axis should be in[0].dims[rank - 1] + 1. */
	/* ArgMaxLast: BUG, the kernel writes int64 (DTIInt64). */
	out[0].dtype = DTFloat32;
	return 1;
}

/* The flavour selection picks for operation `type`. */
static inline const char *kb_select(const char *type, const CustomOpIOTensor *in)
{
	static const char *const ops[] = {"Scale",   "AccumSum", "PrefixSum", "Clip6",
					  "SafeLog", "Gamma",	 "PadEnd",    "ArgMaxLast",
					  "SlowCopy"};
	static const char *const flavours[] = {"scaleF32", "accumSumF32", "prefixSumF32",
					       "clip6F32", "safeLogF32",  "gammaLutF32",
					       "padEndF32", "argMaxLastF32", "slowCopyF32"};
	size_t i;

	if (strcmp(type, "ChannelBias") == 0)
		/* BUG: the NCHW kernel only fits rank 4. */
		return in[0].rank >= 3 ? "channelBiasNchw" : "channelBiasGeneric";
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (strcmp(type, ops[i]) == 0)
			return flavours[i];
	return NULL;
}

/* ------------------------------------------------------------ kernels */

static inline void kb_scale(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	float f = kb_float(c, "factor", 2.0f);
	int64_t i;

	for (i = 0; i < c->out[0].numel; i++)
		y[i] = f * x[i];
}

/* BUG: acc is scratch, and scratch starts with whatever was there. */
static inline void kb_accum_sum(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data, *acc = (float *)c->scratch;
	int64_t i;

	for (i = 0; i < c->out[0].numel; i++) {
		acc[i] += x[i];
		y[i] = acc[i];
	}
}

static inline void kb_channel_bias_generic(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	const CustomOpParam *b = kb_param(c->params, c->n_params, "bias");
	const float *bias = (const float *)b->data;
	int64_t inner = 1, C = c->in[0].rank > 1 ? c->in[0].dims[1] : 1, i;
	int32_t d;

	for (d = 2; d < c->in[0].rank; d++)
		inner *= c->in[0].dims[d];
	for (i = 0; i < c->out[0].numel; i++)
		y[i] = x[i] + bias[b->size == 1 ? 0 : (i / inner) % C];
}

/* BUG: C, H, W are taken as the last three axes, right for NCHW only. */
static inline void kb_channel_bias_nchw(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	const CustomOpParam *b = kb_param(c->params, c->n_params, "bias");
	const float *bias = (const float *)b->data;
	int32_t r = c->in[0].rank;
	int64_t C = c->in[0].dims[r - 3], H = c->in[0].dims[r - 2], W = c->in[0].dims[r - 1], i;

	for (i = 0; i < c->out[0].numel; i++) {
		int64_t ch = (i / (H * W)) % C;
		y[i] = x[i] + bias[b->size == 1 ? 0 : ch % b->size];
	}
}

/* BUG: the total goes to y[numel], one past the end. */
static inline void kb_prefix_sum(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	float s = 0;
	int64_t i;

	for (i = 0; i < c->out[0].numel; i++) {
		s += x[i];
		y[i] = s;
	}
	y[c->out[0].numel] = s;
}

/* BUG: clamps x itself (its input), then copies. */
static inline void kb_clip6(const kb_call *c)
{
	float *x = (float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	int64_t i;

	for (i = 0; i < c->out[0].numel; i++) {
		x[i] = x[i] < 0 ? 0 : x[i] > 6 ? 6 : x[i];
		y[i] = x[i];
	}
}

/* BUG: log of a negative number is NaN. */
static inline void kb_safe_log(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	int64_t i;

	for (i = 0; i < c->out[0].numel; i++)
		y[i] = logf(x[i] + 1e-6f);
}

/* BUG: one table for the whole process, built for the first gamma seen. */
static inline void kb_gamma(const kb_call *c)
{
	static float lut[256];
	static int built;
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	int64_t i;

	if (!built) {
		float g = kb_float(c, "gamma", 1.0f);
		for (i = 0; i < 256; i++)
			lut[i] = powf((float)i / 255.0f, g);
		built = 1;
	}
	for (i = 0; i < c->out[0].numel; i++) {
		float v = x[i] < 0 ? 0 : x[i] > 1 ? 1 : x[i];
		y[i] = lut[(int)(v * 255.0f + 0.5f)];
	}
}

/* Rows of L + 1: x's row, then 1. Right, but its shape inference is not. */
static inline void kb_pad_end(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	int64_t L = c->in[0].dims[c->in[0].rank - 1], rows = c->in[0].numel / L, r, k;

	for (r = 0; r < rows; r++) {
		for (k = 0; k < L; k++)
			y[r * (L + 1) + k] = x[r * L + k];
		y[r * (L + 1) + L] = 1.0f;
	}
}

/* int64 indices. Right, but its shape inference says float32. */
static inline void kb_argmax_last(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	int64_t *y = (int64_t *)c->out[0].data;
	int64_t L = c->in[0].dims[c->in[0].rank - 1], rows = c->in[0].numel / L, r, k;

	for (r = 0; r < rows; r++) {
		int64_t best = 0;
		for (k = 1; k < L; k++)
			if (x[r * L + k] > x[r * L + best])
				best = k;
		y[r] = best;
	}
}

/* BUG (performance): a copy that looks for each index among all. */
static inline void kb_slow_copy(const kb_call *c)
{
	const float *x = (const float *)c->in[0].data;
	float *y = (float *)c->out[0].data;
	int64_t n = c->out[0].numel, i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (j == i)
				y[i] = x[j];
}

#endif
