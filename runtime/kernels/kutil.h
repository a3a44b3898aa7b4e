/* Small helpers the kernel families share: half floats, strides and
 * broadcasting. */
#ifndef GC_KUTIL_H
#define GC_KUTIL_H

#include <graphcc/runtime.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../kernel.h"

static inline float gc_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	uint32_t bits;
	if (exp == 0) {
		if (man == 0) {
			bits = sign;
		} else { /* subnormal */
			exp = 127 - 15 + 1;
			while (!(man & 0x400)) {
				man <<= 1;
				exp--;
			}
			man &= 0x3ff;
			bits = sign | (exp << 23) | (man << 13);
		}
	} else if (exp == 0x1f) {
		bits = sign | 0x7f800000u | (man << 13);
	} else {
		bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
	}
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static inline uint16_t gc_f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t absx = x & 0x7fffffffu;
	if (absx >= 0x7f800000u) /* inf or nan */
		return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
	if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
		return (uint16_t)(sign | 0x7c00);
	if (absx < 0x38800000u) { /* subnormal or zero in half */
		if (absx < 0x33000000u)
			return (uint16_t)sign;
		uint32_t e = absx >> 23, m = (absx & 0x7fffff) | 0x800000;
		uint32_t shift = 126 - e; /* value = m * 2^(e-150) = r * 2^-24 */
		uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
		if (rem > halfway || (rem == halfway && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	uint32_t r = absx - 0x38000000u; /* rebias exponent 127 -> 15 */
	uint32_t rounded = (r + 0xfff + ((r >> 13) & 1)) >> 13;
	return (uint16_t)(sign | rounded);
}

static inline float gc_bf16_to_f32(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static inline uint16_t gc_f32_to_bf16(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

/* Row-major strides, in elements. */
static inline void gc_strides(const int64_t *dims, int32_t rank, int64_t *strides)
{
	int64_t s = 1;
	for (int i = rank - 1; i >= 0; i--) {
		strides[i] = s;
		s *= dims[i];
	}
}

/* Allocates a zeroed state of `size` bytes as n->state (released with the
 * node); NULL, with the error set, when out of memory. */
void *gc_kstate(gc_kctx *k, gc_node *n, size_t size);
/* Refuses (naming output j) a shape whose bytes overflow or pass
 * GRAPHCC_MAX_BYTES: for kernels that would size their state or tables
 * from the output before it is set. */
int gc_kout_fits(gc_kctx *k, int j, gc_dtype dt, int32_t rank, const int64_t *dims);

/*
 * ONNX (NumPy) multidirectional broadcasting of n shapes. Fails with a
 * message naming the two dims that do not agree.
 */
int gc_broadcast_shapes(gc_kctx *k, int n, const gc_tensor *const *ts, int32_t *rank,
			int64_t *dims);

/*
 * For a tensor of shape (rank r, dims d) broadcast to (orank, odims): per
 * output axis, the stride into the input (0 where it is broadcast).
 */
void gc_broadcast_strides(const gc_tensor *t, int32_t orank, const int64_t *odims,
			  int64_t *bstrides);

/*
 * Transpose's perm for an input of `rank` from attribute a (NULL: absent,
 * the reversed axes), into perm: what the kernel and the Gradient pass's
 * rule both take. 0, or GC_EINVAL with the reason in why ("attribute
 * 'perm' is not a permutation of 0..2 (entry 1 is 0)").
 */
int gc_transpose_perm(const gc_attr *a, int32_t rank, int64_t *perm, char *why, size_t len);

#endif
