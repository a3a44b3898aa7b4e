/*
 * float32 transcendental functions written so that loops calling them
 * vectorise (glibc's expf, tanhf, erff, logf are calls, one element at a
 * time): branch-free range reduction and polynomials (Cephes' and Eigen's
 * coefficients), NaN, infinities and underflow handled with selects. Inlined
 * into GC_NN_SIMD (target_clones) loops they become AVX-512 or AVX2+FMA code,
 * chosen once when the library loads; elsewhere they are plain C.
 *
 * Accuracy: tests/unit/test-vmath.c measures the largest error of each, in
 * float32 ulps against libm in double (the correctly rounded value), over a
 * strided sweep of every float32 of the range that matters and states it as a
 * bound; README.md ("How it works") has the table.
 *
 * Needs -fno-trapping-math (or the GCC pragma the kernel files set) for the
 * selects to vectorise; results do not depend on it.
 */
#ifndef GC_K_VMATH_H
#define GC_K_VMATH_H

#include <stdint.h>
#include <string.h>

static inline float gc_vm_bits_f(uint32_t b)
{
	float f;
	memcpy(&f, &b, 4);
	return f;
}

static inline uint32_t gc_vm_f_bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return b;
}

/* The largest of x[0, n) (n >= 1) through integers that order as the floats do (-0 below
 * +0, NaN above +inf with its sign bit clear, below -inf with it set):
 * GCC vectorises an integer max, not gc_nn_max_f32's float select (a
 * scalar loop, a sixth of a Softmax's time). A row holding a NaN comes out
 * NaN from Softmax either way (its exp joins the sum). */
static inline float gc_vm_max_f32(const float *x, int64_t n)
{
	int32_t m = INT32_MIN;
	for (int64_t i = 0; i < n; i++) {
		int32_t b = (int32_t)gc_vm_f_bits(x[i]);
		b ^= (b >> 31) & 0x7fffffff;
		m = b > m ? b : m;
	}
	m ^= (m >> 31) & 0x7fffffff;
	return gc_vm_bits_f((uint32_t)m);
}

/* ln 2 in two parts, and the polynomial of e^r - 1 - r over r^2, highest
 * power first: the exps here and sgemm-pack-impl.h's vector ones share
 * them */
#define GC_VM_LN2_HI 0.693359375f
#define GC_VM_LN2_LO -2.12194440e-4f
#define GC_VM_EXP_P0 1.9875691500e-4f
#define GC_VM_EXP_P1 1.3981999507e-3f
#define GC_VM_EXP_P2 8.3334519073e-3f
#define GC_VM_EXP_P3 4.1665795894e-2f
#define GC_VM_EXP_P4 1.6666665459e-1f
#define GC_VM_EXP_P5 5.0000001201e-1f

/* e^(xc - n ln 2) for n = round(xc / ln 2): the reduction (ln 2 in two
 * parts) and polynomial both exps below share */
static inline float gc_vm_exp_reduced(float xc, float n)
{
	float r = xc - n * GC_VM_LN2_HI;
	r = r - n * GC_VM_LN2_LO;
	float q = GC_VM_EXP_P0;
	q = q * r + GC_VM_EXP_P1;
	q = q * r + GC_VM_EXP_P2;
	q = q * r + GC_VM_EXP_P3;
	q = q * r + GC_VM_EXP_P4;
	q = q * r + GC_VM_EXP_P5;
	q = q * r * r + r + 1.0f;
	return q;
}

/* e^x: Cody-Waite reduction by ln 2 and Cephes' degree-6 polynomial; 2^n as
 * two factors, so that n in [-150, 129] needs no denormal or infinite scale
 * of its own (results down to the denormals, then 0; inf above 88.72). */
static inline float gc_vm_expf(float x)
{
	float xc = x < -104.0f ? -104.0f : x; /* exp(-104) rounds to 0 */
	xc = xc > 89.0f ? 89.0f : xc;	      /* exp(89) overflows */
	xc = x != x ? 0.0f : xc;
	const float round_magic = 12582912.0f; /* 1.5 * 2^23 */
	float n = (xc * 1.44269504088896341f + round_magic) - round_magic;
	float q = gc_vm_exp_reduced(xc, n);
	int32_t ni = (int32_t)n, n1 = ni >> 1, n2 = ni - n1;
	float s1 = gc_vm_bits_f((uint32_t)(n1 + 127) << 23);
	float s2 = gc_vm_bits_f((uint32_t)(n2 + 127) << 23);
	float y = q * s1 * s2;
	return x != x ? x : y;
}

/*
 * e^x for x <= 0 (Softmax's x - max): gc_vm_expf's reduction and
 * polynomial with one normal scale 2^n, n in [-126, 0], read from the
 * rounding sum's bits; 0 below -87 (where e^x < 1.7e-38), NaN for NaN.
 * Fewer steps than gc_vm_expf (Softmax is bound by them: a row of 500
 * ran at ~2x ORT's time), and none makes a denormal (a multiply with a
 * denormal result takes a microcode assist of ~100 cycles on many x86
 * CPUs; every masked score's x - max is in gc_vm_expf's denormal range).
 */
static inline float gc_vm_expf_neg(float x)
{
	float xc = x < -87.0f ? -87.0f : x;
	const float round_magic = 12582912.0f; /* 1.5 * 2^23: n in the low bits */
	float t = xc * 1.44269504088896341f + round_magic, n = t - round_magic;
	float q = gc_vm_exp_reduced(xc, n);
	/* t's bits are 0x4b400000 + n: 2^n is (n + 127) << 23 (NaN: any scale) */
	float y = q * gc_vm_bits_f((gc_vm_f_bits(t) - 0x4b400000u + 127u) << 23);
	return x < -87.0f ? 0.0f : y;
}

/* 1 / (1 + e^-x) */
static inline float gc_vm_sigmoidf(float x)
{
	return 1.0f / (1.0f + gc_vm_expf(-x));
}

/* tanh's odd polynomial (Cephes'), x + x z q(z) with z = x^2, below
 * GC_VM_TANH_SMALL; q's coefficients highest power first (shared with
 * sgemm-pack.c's vector tanh) */
#define GC_VM_TANH_SMALL 0.625f
#define GC_VM_TANH_P0 -5.70498872745e-3f
#define GC_VM_TANH_P1 2.06390887954e-2f
#define GC_VM_TANH_P2 -5.37397155531e-2f
#define GC_VM_TANH_P3 1.33314422036e-1f
#define GC_VM_TANH_P4 -3.33332819422e-1f

/* tanh: the odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) above. */
static inline float gc_vm_tanhf(float x)
{
	float ax = x < 0 ? -x : x, z = x * x;
	float q = GC_VM_TANH_P0;
	q = q * z + GC_VM_TANH_P1;
	q = q * z + GC_VM_TANH_P2;
	q = q * z + GC_VM_TANH_P3;
	q = q * z + GC_VM_TANH_P4;
	float small = x + x * z * q;
	float e = gc_vm_expf(2.0f * (ax > 9.0f ? 9.0f : ax));
	float big = 1.0f - 2.0f / (e + 1.0f);
	big = x < 0 ? -big : big;
	return ax < GC_VM_TANH_SMALL ? small : big;
}

/*
 * erf as a rational function of x (the odd/even polynomials of Eigen's fast
 * erf) on [-4, 4], where erf saturates at float precision. Within 4.5e-7 of
 * erf (a few ulp near +-1, see test-vmath.c).
 */
static inline float gc_vm_erff(float x)
{
	float xc = x < -4.0f ? -4.0f : x;
	xc = xc > 4.0f ? 4.0f : xc;
	float z = xc * xc;
	float p = -2.72614225801306e-10f;
	p = p * z + 2.77068142495902e-08f;
	p = p * z - 2.10102402082508e-06f;
	p = p * z - 5.69250639462346e-05f;
	p = p * z - 7.34990630326855e-04f;
	p = p * z - 2.95459980854025e-03f;
	p = p * z - 1.60960333262415e-02f;
	float q = -1.45660718464996e-05f;
	q = q * z - 2.13374055278905e-04f;
	q = q * z - 1.68282697438203e-03f;
	q = q * z - 7.37332916720468e-03f;
	q = q * z - 1.42647390514189e-02f;
	return xc * (p / q); /* not (xc * p) / q: that loses bits below 1e-30 */
}

/*
 * Natural log: x = m 2^e with m in [sqrt(1/2), sqrt(2)), Cephes' degree-9
 * polynomial in m - 1, e ln 2 added in two parts. Denormals are scaled up
 * first; log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays NaN.
 */
static inline float gc_vm_logf(float x)
{
	int sub = x < 1.17549435e-38f;
	float xs = sub ? x * 16777216.0f : x; /* 2^24 */
	uint32_t u = gc_vm_f_bits(xs);
	int32_t e = (int32_t)((u >> 23) & 0xff) - 126 - (sub ? 24 : 0);
	float m = gc_vm_bits_f((u & 0x007fffffu) | 0x3f000000u); /* [0.5, 1) */
	int lo = m < 0.707106781186547524f;
	e -= lo;
	float f = (lo ? m + m : m) - 1.0f;
	float z = f * f;
	float y = 7.0376836292e-2f;
	y = y * f - 1.1514610310e-1f;
	y = y * f + 1.1676998740e-1f;
	y = y * f - 1.2420140846e-1f;
	y = y * f + 1.4249322787e-1f;
	y = y * f - 1.6668057665e-1f;
	y = y * f + 2.0000714765e-1f;
	y = y * f - 2.4999993993e-1f;
	y = y * f + 3.3333331174e-1f;
	y = y * f * z;
	float fe = (float)e;
	y = y + fe * -2.12194440e-4f;
	y = y - 0.5f * z;
	float r = f + y + fe * 0.693359375f;
	r = x == 0.0f ? -__builtin_inff() : r;
	r = x < 0.0f ? __builtin_nanf("") : r;
	r = x == __builtin_inff() ? x : r;
	return x != x ? x : r;
}

/* log(1 + e^x) = max(x, 0) + log1p(e^-|x|), log1p(u) as log(1 + u) corrected
 * by u / ((1 + u) - 1) (Goldberg's trick; exact when 1 + u rounds to 1). */
static inline float gc_vm_softplusf(float x)
{
	float ax = x < 0 ? -x : x;
	float u = gc_vm_expf(-ax);
	float w = 1.0f + u;
	float d = w - 1.0f;
	float l = d == 0.0f ? u : gc_vm_logf(w) * (u / d);
	float r = (x > 0 ? x : 0.0f) + l;
	return x != x ? x : r;
}

#endif
