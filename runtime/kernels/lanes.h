/* Masks of the first n vector lanes, for the AVX-512 loops' masked loads
 * and stores at a row's end (n may be out of range: <= 0 gives none, past
 * the width all). Plain integers: callable from any target's code. */
#ifndef GC_K_LANES_H
#define GC_K_LANES_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The first n of 16 lanes (floats or int32). */
static inline __mmask16 gc_lanes16(int64_t n)
{
	return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* Lanes [lo, hi) of 16 (either bound may be out of range): a row's part
 * inside [0, w) as seen from a load at column c is [-c, w - c). */
static inline __mmask16 gc_lanes16_between(int64_t lo, int64_t hi)
{
	return (__mmask16)(gc_lanes16(hi) & ~gc_lanes16(lo));
}

/* The first n of 64 lanes (bytes). */
static inline __mmask64 gc_lanes64(int64_t n)
{
	return n >= 64 ? ~(__mmask64)0 : n <= 0 ? (__mmask64)0 : ((__mmask64)1 << n) - 1;
}
#endif

#endif
