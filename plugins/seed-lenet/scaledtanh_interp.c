/*
 * ScaledTanh Interpreter kernels (seed interface: void kernels, found by
 * their flavour name). y = alpha * tanh(beta * x), elementwise, any rank.
 */
#include <math.h>

#include "lenet-params.h"

/* IEEE binary16 <-> binary32, round to nearest even (no F16C needed). */
static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t mant = h & 0x3ffu;
	uint32_t bits;
	float f;

	if (exp == 0) {
		f = ldexpf((float)mant, -24); /* zero or subnormal */
		return sign ? -f : f;
	}
	if (exp == 31)
		bits = sign | 0x7f800000u | (mant << 13); /* inf or NaN */
	else
		bits = sign | ((exp + 112u) << 23) | (mant << 13);
	memcpy(&f, &bits, sizeof f);
	return f;
}

static uint16_t float_to_half(float value)
{
	const uint32_t f32_inf = 255u << 23;
	const uint32_t f16_overflow = (127u + 16u) << 23; /* 65536.0f */
	const uint32_t half_magic = 126u << 23;		  /* 0.5f: its ulp is 2^-24 */
	uint32_t f, sign;
	uint16_t out;

	memcpy(&f, &value, sizeof f);
	sign = f & 0x80000000u;
	f ^= sign;
	if (f >= f16_overflow) {
		out = f > f32_inf ? 0x7e00u : 0x7c00u;
	} else if (f < (113u << 23)) {
		/* Below 2^-14: adding 0.5f rounds to a multiple of 2^-24, the
		 * half subnormal step, and leaves the count in the low bits. */
		float a, magic;
		memcpy(&a, &f, sizeof a);
		memcpy(&magic, &half_magic, sizeof magic);
		a += magic;
		memcpy(&f, &a, sizeof f);
		out = (uint16_t)(f - half_magic);
	} else {
		uint32_t odd = (f >> 13) & 1u;
		f -= 112u << 23; /* rebias 127 -> 15 */
		f += 0xfffu + odd;
		out = (uint16_t)(f >> 13);
	}
	return (uint16_t)(out | (sign >> 16));
}

GC_CUSTOMOP_API void scaledTanhF32(CustomOpIOTensor *inputs, int32_t numInputs,
				   CustomOpIOTensor *outputs, int32_t numOutputs,
				   CustomOpParam *params, int32_t numParams)
{
	float alpha = lenet_float(params, numParams, "alpha", 1.7159f);
	float beta = lenet_float(params, numParams, "beta", 0.6667f);
	const float *x;
	float *y;
	int64_t i, n;

	if (numInputs < 1 || numOutputs < 1)
		return;
	x = (const float *)inputs[0].data;
	y = (float *)outputs[0].data;
	n = outputs[0].numel;
	for (i = 0; i < n; i++)
		y[i] = alpha * tanhf(beta * x[i]);
}

GC_CUSTOMOP_API void scaledTanhF16(CustomOpIOTensor *inputs, int32_t numInputs,
				   CustomOpIOTensor *outputs, int32_t numOutputs,
				   CustomOpParam *params, int32_t numParams)
{
	float alpha = lenet_float(params, numParams, "alpha", 1.7159f);
	float beta = lenet_float(params, numParams, "beta", 0.6667f);
	const uint16_t *x;
	uint16_t *y;
	int64_t i, n;

	if (numInputs < 1 || numOutputs < 1)
		return;
	x = (const uint16_t *)inputs[0].data;
	y = (uint16_t *)outputs[0].data;
	n = outputs[0].numel;
	for (i = 0; i < n; i++)
		y[i] = float_to_half(alpha * tanhf(beta * half_to_float(x[i])));
}
