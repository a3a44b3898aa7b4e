/* qsilu: what the functions and the kernels agree on. */
#ifndef QSILU_COMMON_H
#define QSILU_COMMON_H

#include <graphcc/customop.h>
#include <math.h>

static inline bool qsilu_quantized(CustomOpDataType t)
{
	return t == DTQInt8 || t == DTQUInt8;
}

/* SiLU in double, so that a NumPy float64 reference gives the same bits. */
static inline double qsilu_ref(double x)
{
	return x / (1.0 + exp(-x));
}

/* y quantized to a view's type, scale and offset: round half to even (the
 * default rounding mode), then saturate, as ONNX QuantizeLinear does. */
static inline int32_t qsilu_quantize(double y, const CustomOpIOTensor *t)
{
	double lo = t->dtype == DTQUInt8 ? 0 : -128, hi = t->dtype == DTQUInt8 ? 255 : 127;
	double q = nearbyint(y / (double)t->scale) + t->offset;
	return (int32_t)(q < lo ? lo : q > hi ? hi : q);
}

#endif
