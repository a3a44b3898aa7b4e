/*
 * Private helpers of the kernel families that work on any real element
 * type through double (loss.c, select.c, quant.c, ...): one element loaded
 * or stored by index. Exact for every integer up to 2^53 and for all
 * floating types; int64/uint64 beyond that lose low bits, so byte-moving
 * ops never go through these.
 */
#ifndef GC_K_VALUE_IMPL_H
#define GC_K_VALUE_IMPL_H

#include <graphcc/runtime.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "kutil.h"

/* Real number types (no string, no complex). */
static inline bool gc_kv_numeric(gc_dtype t)
{
	switch (t) {
	case GC_DTYPE_FLOAT:
	case GC_DTYPE_DOUBLE:
	case GC_DTYPE_FLOAT16:
	case GC_DTYPE_BFLOAT16:
	case GC_DTYPE_INT8:
	case GC_DTYPE_INT16:
	case GC_DTYPE_INT32:
	case GC_DTYPE_INT64:
	case GC_DTYPE_UINT8:
	case GC_DTYPE_UINT16:
	case GC_DTYPE_UINT32:
	case GC_DTYPE_UINT64:
	case GC_DTYPE_BOOL:
		return true;
	default:
		return false;
	}
}

static inline bool gc_kv_float(gc_dtype t)
{
	return t == GC_DTYPE_FLOAT || t == GC_DTYPE_DOUBLE || t == GC_DTYPE_FLOAT16 ||
	       t == GC_DTYPE_BFLOAT16;
}

static inline double gc_kv_load(const gc_tensor *t, int64_t i)
{
	const void *d = t->data;
	switch (t->dtype) {
	case GC_DTYPE_FLOAT:
		return ((const float *)d)[i];
	case GC_DTYPE_DOUBLE:
		return ((const double *)d)[i];
	case GC_DTYPE_FLOAT16:
		return gc_f16_to_f32(((const uint16_t *)d)[i]);
	case GC_DTYPE_BFLOAT16:
		return gc_bf16_to_f32(((const uint16_t *)d)[i]);
	case GC_DTYPE_INT8:
		return ((const int8_t *)d)[i];
	case GC_DTYPE_INT16:
		return ((const int16_t *)d)[i];
	case GC_DTYPE_INT32:
		return ((const int32_t *)d)[i];
	case GC_DTYPE_INT64:
		return (double)((const int64_t *)d)[i];
	case GC_DTYPE_UINT8:
		return ((const uint8_t *)d)[i];
	case GC_DTYPE_UINT16:
		return ((const uint16_t *)d)[i];
	case GC_DTYPE_UINT32:
		return ((const uint32_t *)d)[i];
	case GC_DTYPE_UINT64:
		return (double)((const uint64_t *)d)[i];
	case GC_DTYPE_BOOL:
		return ((const uint8_t *)d)[i] != 0;
	default:
		return 0;
	}
}

/* Stores v (already rounded as the op wants for integer types; this
 * truncates toward zero and saturates). */
static inline void gc_kv_store(gc_tensor *t, int64_t i, double v)
{
	void *d = t->data;
#define GC_KV_SAT_(T, lo, hi)                                                                      \
	((T)(isnan(v) ? 0 : v <= (double)(lo) ? (lo) : v >= (double)(hi) ? (hi) : v))
	switch (t->dtype) {
	case GC_DTYPE_FLOAT:
		((float *)d)[i] = (float)v;
		break;
	case GC_DTYPE_DOUBLE:
		((double *)d)[i] = v;
		break;
	case GC_DTYPE_FLOAT16:
		((uint16_t *)d)[i] = gc_f32_to_f16((float)v);
		break;
	case GC_DTYPE_BFLOAT16:
		((uint16_t *)d)[i] = gc_f32_to_bf16((float)v);
		break;
	case GC_DTYPE_INT8:
		((int8_t *)d)[i] = GC_KV_SAT_(int8_t, INT8_MIN, INT8_MAX);
		break;
	case GC_DTYPE_INT16:
		((int16_t *)d)[i] = GC_KV_SAT_(int16_t, INT16_MIN, INT16_MAX);
		break;
	case GC_DTYPE_INT32:
		((int32_t *)d)[i] = GC_KV_SAT_(int32_t, INT32_MIN, INT32_MAX);
		break;
	case GC_DTYPE_INT64:
		((int64_t *)d)[i] = GC_KV_SAT_(int64_t, INT64_MIN, INT64_MAX);
		break;
	case GC_DTYPE_UINT8:
		((uint8_t *)d)[i] = GC_KV_SAT_(uint8_t, 0, UINT8_MAX);
		break;
	case GC_DTYPE_UINT16:
		((uint16_t *)d)[i] = GC_KV_SAT_(uint16_t, 0, UINT16_MAX);
		break;
	case GC_DTYPE_UINT32:
		((uint32_t *)d)[i] = GC_KV_SAT_(uint32_t, 0, UINT32_MAX);
		break;
	case GC_DTYPE_UINT64:
		((uint64_t *)d)[i] = GC_KV_SAT_(uint64_t, 0, UINT64_MAX);
		break;
	case GC_DTYPE_BOOL:
		((uint8_t *)d)[i] = v != 0;
		break;
	default:
		break;
	}
#undef GC_KV_SAT_
}

#endif
