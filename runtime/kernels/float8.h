/*
 * The four float8 types of ONNX (opset 19): values are their bit patterns.
 *   e4m3fn   bias 7, NaN 0x7f/0xff, no infinity, max 448
 *   e4m3fnuz bias 8, NaN 0x80 only, no infinity, no -0, max 240
 *   e5m2     bias 15, IEEE-like: infinity 0x7c, NaN 0x7d-0x7f, max 57344
 *   e5m2fnuz bias 16, NaN 0x80 only, no infinity, no -0, max 57344
 * From float: round to nearest even; what does not fit follows Cast-19's
 * tables (saturate: +-max, +-infinity too except in the fnuz types, where
 * it is NaN; not saturating: NaN, or +-infinity in e5m2).
 */
#ifndef GC_K_FLOAT8_H
#define GC_K_FLOAT8_H

#include <graphcc/runtime.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

static inline bool gc_f8_is(gc_dtype dt)
{
	return dt >= GC_DTYPE_FLOAT8E4M3FN && dt <= GC_DTYPE_FLOAT8E5M2FNUZ;
}

typedef struct gc_f8_fmt {
	int mbits, bias;
	bool fnuz, has_inf;
	uint8_t max_code; /* the largest finite positive code */
} gc_f8_fmt;

static inline gc_f8_fmt gc_f8_format(gc_dtype dt)
{
	switch (dt) {
	case GC_DTYPE_FLOAT8E4M3FN:
		return (gc_f8_fmt){3, 7, false, false, 0x7e};
	case GC_DTYPE_FLOAT8E4M3FNUZ:
		return (gc_f8_fmt){3, 8, true, false, 0x7f};
	case GC_DTYPE_FLOAT8E5M2:
		return (gc_f8_fmt){2, 15, false, true, 0x7b};
	default:
		return (gc_f8_fmt){2, 16, true, false, 0x7f};
	}
}

/* The value of a finite positive code (0..max_code), or the one step past
 * max_code that rounding compares against. */
static inline float gc_f8_mag(const gc_f8_fmt *f, int code)
{
	int e = code >> f->mbits, m = code & ((1 << f->mbits) - 1);
	if (e == 0)
		return ldexpf((float)m, 1 - f->bias - f->mbits);
	return ldexpf((float)((1 << f->mbits) + m), e - f->bias - f->mbits);
}

static inline float gc_f8_to_f32(uint8_t b, gc_dtype dt)
{
	gc_f8_fmt f = gc_f8_format(dt);
	int code = b & 0x7f;
	if (f.fnuz && b == 0x80)
		return NAN;
	if (!f.fnuz && f.has_inf && code >= 0x7c)
		return code == 0x7c ? (b & 0x80 ? -INFINITY : INFINITY) : NAN;
	if (!f.fnuz && !f.has_inf && code == 0x7f)
		return NAN;
	float v = gc_f8_mag(&f, code);
	return b & 0x80 ? -v : v;
}

static inline uint8_t gc_f32_to_f8(float x, gc_dtype dt, bool saturate)
{
	gc_f8_fmt f = gc_f8_format(dt);
	uint8_t nan = f.fnuz ? 0x80 : 0x7f, sign = signbit(x) ? 0x80 : 0;
	if (isnan(x))
		return nan;
	float a = fabsf(x);
	if (isinf(a)) {
		if (saturate && !f.fnuz)
			return (uint8_t)(f.max_code | sign);
		return !saturate && f.has_inf ? (uint8_t)(0x7c | sign) : nan;
	}
	/* the nearest code, ties to the even one; max_code + 1 means too large */
	int lo = 0, hi = f.max_code + 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (gc_f8_mag(&f, mid) <= a)
			lo = mid;
		else
			hi = mid;
	}
	int code = lo;
	if (lo < f.max_code + 1 && hi <= f.max_code + 1) {
		float dl = a - gc_f8_mag(&f, lo), dh = gc_f8_mag(&f, hi) - a;
		code = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
	}
	if (code > f.max_code) {
		if (saturate)
			return (uint8_t)(f.max_code | sign);
		return f.has_inf ? (uint8_t)(0x7c | sign) : nan;
	}
	if (f.fnuz && code == 0)
		return 0; /* no negative zero */
	return (uint8_t)(code | sign);
}

/*
 * float4e2m1 (opset 23): a code in the low nibble, sign bit 8, magnitudes
 * 0, 0.5, 1, 1.5, 2, 3, 4, 6; no infinity, no NaN. From float: round to
 * nearest even, beyond 6 (and infinity) +-6 always, NaN +6 (ONNX's
 * reference, Cast-23).
 */
static inline float gc_f4_to_f32(uint8_t b)
{
	static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
	return b & 8 ? -mag[b & 7] : mag[b & 7];
}

static inline uint8_t gc_f32_to_f4(float x)
{
	if (isnan(x))
		return 7;
	float a = fabsf(x);
	/* the midpoints, ties going to the even code (0, 1.0, 2.0, 4.0) */
	uint8_t code = a <= 0.25f  ? 0
		       : a < 0.75f ? 1
		       : a <= 1.25f ? 2
		       : a < 1.75f ? 3
		       : a <= 2.5f ? 4
		       : a < 3.5f  ? 5
		       : a <= 5.0f ? 6
				   : 7;
	return (uint8_t)(code | (signbit(x) ? 8 : 0));
}

/* float8 or float4 bits to float and back (saturate: float8 only). */
static inline bool gc_fsmall_is(gc_dtype dt)
{
	return gc_f8_is(dt) || dt == GC_DTYPE_FLOAT4E2M1;
}

static inline float gc_fsmall_to_f32(uint8_t b, gc_dtype dt)
{
	return dt == GC_DTYPE_FLOAT4E2M1 ? gc_f4_to_f32(b) : gc_f8_to_f32(b, dt);
}

static inline uint8_t gc_f32_to_fsmall(float x, gc_dtype dt, bool saturate)
{
	return dt == GC_DTYPE_FLOAT4E2M1 ? gc_f32_to_f4(x) : gc_f32_to_f8(x, dt, saturate);
}

#endif
