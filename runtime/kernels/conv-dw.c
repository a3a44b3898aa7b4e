/*
 * The depthwise direct convolutions of sgemm-pack.h: 16 channels at a time
 * from a transposed copy of their input, or vectors along the output row
 * from a zero-padded copy of one channel (conv-direct.c has the
 * channel-vector kernel).
 */
#include "sgemm-pack.h"

#include <stdint.h>
#include <string.h>

#include "../alloc.h"
#include "nn-par.h"
#include "nn-split.h"
#include "lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define PK_X86 1
#include "sgemm-pack-impl.h"
#endif

/* ---- depthwise: plan ---- */

/* Most taps the depthwise kernel takes. */
#define DW_MAX_TAPS 64
/* Most vectors of 16 outputs a plane of the flat kernel has. */
#define DW_FLAT_MAX_V 64
/* Most pixels of a padded plane (or band) the depthwise kernel plans for:
 * far above the scratch conv.c allows, far below overflowing its size. */
#define PK_DW_MAX_PLANE (INT64_C(1) << 40)

/* The flat kernel's plan (gc_pk_dw.flat): its taps' offsets and vectors of
 * 16 outputs (its masks come with gc_pk_dw_pack). */
static void dwf_plan(gc_pk_dw *p)
{
	p->flat = 1;
	p->fv = (p->oh * p->ow + 15) / 16;
	for (int64_t i = 0; i < 3; i++)
		for (int64_t j = 0; j < 3; j++)
			p->foff[i * 3 + j] = (i * p->dh - p->pt) * p->w + j * p->dw - p->pl;
}

int gc_pk_dw_plan(gc_pk_dw *p, int64_t n, int64_t c, int64_t mg, const int64_t in[3],
		  const int64_t k[3], const int64_t stride[3], const int64_t dil[3],
		  const int64_t pad_lo[3], const int64_t out[3], const gc_nn_act *act)
{
	memset(p, 0, sizeof *p);
	if (in[0] != 1 || k[0] != 1 || out[0] != 1 || stride[2] > 2 || k[1] * k[2] > DW_MAX_TAPS)
		return 1;
	p->n = n;
	p->c = c;
	p->mg = mg;
	p->h = in[1];
	p->w = in[2];
	p->oh = out[1];
	p->ow = out[2];
	p->kh = k[1];
	p->kw = k[2];
	p->sh = stride[1];
	p->sw = stride[2];
	p->dh = dil[1];
	p->dw = dil[2];
	p->pt = pad_lo[1];
	p->pl = pad_lo[2];
	int64_t rows = (p->oh - 1) * p->sh + (p->kh - 1) * p->dh + 1;
	int64_t cols = (p->ow - 1) * p->sw + (p->kw - 1) * p->dw + 1;
	p->ph = rows > p->pt + p->h ? rows : p->pt + p->h;
	cols = cols > p->pl + p->w ? cols : p->pl + p->w;
	/* the 3x3 kernel reads stride-2 inputs whole and splits them itself */
	/* square 3x3, 5x5, 7x7, dilation 1, equal strides: the row kernel,
	 * which reads the input plane as it is */
	p->rowk = p->kh == p->kw && (p->kh == 3 || p->kh == 5 || p->kh == 7) && p->dh == 1 &&
			  p->dw == 1 && p->sh == p->sw
		      ? (int)p->kh
		      : 0;
	p->phases = (int)p->sw;
	p->pw = (cols + p->sw - 1) / p->sw;
	/* a 16-wide load (two at stride 2) at the last pixel of the last row
	 * stays inside */
	/* pads and dilations from a file may make the padded plane, and the
	 * scratch sized from it, overflow: such a plane does not suit */
	int64_t plane;
	if (__builtin_mul_overflow(p->ph, p->pw, &plane) || plane > PK_DW_MAX_PLANE)
		return 1;
	p->plane = (plane + 64 + 15) / 16 * 16;
	gc_pk_epi_init(&p->epi, act);
	/* vectors along the row suit rows of more than 16 outputs, 8 for 3x3
	 * at stride 2 (no transposes, and the row kernel no copy: measured on
	 * mobilenet_v2's, efficientnet_b0's and b1's, 3x3 and 5x5, strides 1
	 * and 2); shorter rows go 16 channels at a time, and so do the
	 * padded-plane kernel's stride 2 and rows of up to 32 */
	int blk = p->rowk ? p->ow <= (p->rowk == 3 && p->sw == 2 ? 8 : 16)
			  : p->sw == 2 || p->ow <= 32;
	/* 3x3 at stride 1 on planes of 64 to 1024 outputs whose rows are as
	 * wide as the input's: the flat kernel (no copy, no transposes, no
	 * scratch). One thread, kernel-time dw (on-CPU, fastest of 300-500
	 * runs) against the blocked kernel: 576, 480, 384 and 232 channels at
	 * 14x14 0.94-1.0x, 256 at 12x12 0.76x, 240 at 10x10 0.77x; against the
	 * row kernel: 192, 144, 116 and 58 at 28x28 0.88-0.94x, 128 at 16x16
	 * 1.0x, 96 at 56x56 1.02x (left to it); 7x7 (4 vectors, one of them a
	 * lane) 1.15x slower (left to the blocked kernel). Whole models moved
	 * within their noise (mobilenet_v2 0.97-0.99x, shufflenet_v2,
	 * mnasnet1_0 and efficientnet_b0 0.97-1.01x, 4 fresh pairs each). */
	int64_t sp = p->oh * p->ow;
	if (mg == 1 && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->ow == p->w &&
	    sp >= 64 && sp <= 16 * DW_FLAT_MAX_V) {
		dwf_plan(p);
		return 0;
	}
	if (mg == 1 && blk) {
		p->blocked = 1;
		p->row_px = cols;
		/* bands of rows whose transposed input stays within ~96 KB */
		int64_t fit = (96 << 10) / (p->row_px * 64), span = (p->kh - 1) * p->dh + 1;
		p->band = fit > span ? (fit - span) / p->sh + 1 : 1;
		p->band = p->band < p->oh ? p->band : p->oh;
		p->band_in = (p->band - 1) * p->sh + span;
		if (__builtin_mul_overflow(p->band_in, p->row_px, &plane) ||
		    plane > PK_DW_MAX_PLANE)
			return 1;
	}
	return 0;
}

/* The flat kernel's masks (gc_pk_dw.fm). */
static int dwf_masks(gc_pk_dw *p)
{
	int64_t taps = 9, sp = p->oh * p->ow;
	p->fm = gc_malloc((size_t)(p->fv * taps) * sizeof *p->fm);
	if (!p->fm)
		return -1;
	for (int64_t v = 0; v < p->fv; v++)
		for (int64_t t = 0; t < taps; t++) {
			int64_t i = t / 3, j = t % 3;
			uint16_t m = 0;
			for (int64_t l = 0; l < 16 && 16 * v + l < sp; l++) {
				int64_t o = 16 * v + l, ih = o / p->ow + i * p->dh - p->pt,
					iw = o % p->ow + j * p->dw - p->pl;
				if (ih >= 0 && ih < p->h && iw >= 0 && iw < p->w)
					m |= (uint16_t)(1u << l);
			}
			p->fm[v * taps + t] = m;
		}
	return 0;
}

int gc_pk_dw_pack(gc_pk_dw *p, const float *wt)
{
	if (p->flat)
		return dwf_masks(p);
	if (!p->blocked || !wt)
		return 0;
	int64_t taps = p->kh * p->kw, blocks = (p->c + 15) / 16;
	p->wb = gc_malloc((size_t)(blocks * taps * 16) * sizeof(float));
	if (!p->wb)
		return -1;
	for (int64_t b = 0; b < blocks; b++)
		for (int64_t t = 0; t < taps; t++)
			for (int64_t l = 0; l < 16; l++) {
				int64_t ch = 16 * b + l;
				p->wb[(b * taps + t) * 16 + l] = ch < p->c ? wt[ch * taps + t] : 0;
			}
	return 0;
}

void gc_pk_dw_free(gc_pk_dw *p)
{
	if (p) {
		gc_free(p->wb);
		gc_free(p->fm);
		p->wb = NULL;
		p->fm = NULL;
	}
}

int64_t gc_pk_dw_scratch(const gc_pk_dw *p)
{
	/* blocked: + the 16 pixels a tile at a row's end reads past it */
	if (p->flat)
		return 0;
	int64_t one = p->blocked ? (p->band_in * p->row_px + 16 * p->sw + 1) * 16
		      : p->rowk	 ? p->w /* a row of zeros */
				 : p->phases * p->plane;
	return GC_PK_DW_SLOTS * ((one + 15) / 16 * 16);
}

#ifdef PK_X86

#define AI GC_PK_INLINE

/* ---- depthwise: run ---- */

/* dst[t] = src[2 t] for t < cnt, reading no further than src[2 cnt - 2]. */
AI void copy_even(float *dst, const float *src, int64_t cnt)
{
	const __m512i even =
	    _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	for (int64_t t = 0; t < cnt; t += 16) {
		int64_t rd = 2 * (cnt - t) - 1; /* elements left to read */
		__m512 lo = _mm512_maskz_loadu_ps(gc_lanes16(rd), src + 2 * t);
		__m512 hi = _mm512_maskz_loadu_ps(gc_lanes16(rd - 16), src + 2 * t + 16);
		_mm512_mask_storeu_ps(dst + t, gc_lanes16(cnt - t),
				      _mm512_permutex2var_ps(lo, even, hi));
	}
}

/* The zero-padded plane of one channel, split by column phase when the
 * stride along w is 2 (padded column j is phase j % 2, index j / 2), so that
 * every tap reads 16 outputs' inputs with one load. Every element is written
 * once. */
static GC_PK_TARGET void dw_pad(const gc_pk_dw *p, const float *x, float *xq)
{
	for (int64_t ph = 0; ph < p->phases; ph++) {
		float *q = xq + ph * p->plane;
		/* phase indices [a, b) hold input columns i0, i0 + sw, ... */
		int64_t a = (p->pl - ph + p->phases - 1) / p->phases;
		int64_t b = (p->pl + p->w - ph + p->phases - 1) / p->phases;
		a = a < 0 ? 0 : a;
		b = b > p->pw ? p->pw : b;
		int64_t i0 = a * p->phases + ph - p->pl;
		for (int64_t r = 0; r < p->ph; r++) {
			float *d = q + r * p->pw;
			int64_t in_row = r - p->pt;
			if (in_row < 0 || in_row >= p->h || b <= a) {
				memset(d, 0, (size_t)p->pw * sizeof(float));
				continue;
			}
			const float *src = x + in_row * p->w + i0;
			memset(d, 0, (size_t)a * sizeof(float));
			if (p->phases == 1)
				memcpy(d + a, src, (size_t)(b - a) * sizeof(float));
			else
				copy_even(d + a, src, b - a);
			memset(d + b, 0, (size_t)(p->pw - b) * sizeof(float));
		}
		memset(q + p->ph * p->pw, 0, (size_t)(p->plane - p->ph * p->pw) * sizeof(float));
	}
}

/* Output rows r0 and r0 + 1 (when two) of one channel: toff[t] is tap t's
 * offset in the padded planes. Two rows at once, for two chains of FMAs. */
AI void dw_rows(const gc_pk_dw *p, const float *xq, const int64_t *toff, const float *wm, __m512 bv,
		float *ym, int64_t r0, const int two, const int nine)
{
	int64_t taps = nine ? 9 : p->kh * p->kw;
	__m512 wv[9];
	if (nine) {
#pragma GCC unroll 9
		for (int t = 0; t < 9; t++)
			wv[t] = _mm512_set1_ps(wm[t]);
	}
	const float *x0 = xq + r0 * p->sh * p->pw, *x1 = x0 + p->sh * p->pw;
	float *y0 = ym + r0 * p->ow, *y1 = y0 + p->ow;
	for (int64_t o = 0; o < p->ow; o += 16) {
		__m512 a0 = bv, a1 = bv;
		if (nine) {
			/* three partial sums a row: shorter chains of FMAs */
			__m512 p0[3], p1[3];
#pragma GCC unroll 3
			for (int i = 0; i < 3; i++) {
				p0[i] = i ? _mm512_setzero_ps() : bv;
				p1[i] = p0[i];
			}
#pragma GCC unroll 9
			for (int t = 0; t < 9; t++) {
				p0[t / 3] = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + toff[t] + o),
							    wv[t], p0[t / 3]);
				if (two)
					p1[t / 3] = _mm512_fmadd_ps(
					    _mm512_loadu_ps(x1 + toff[t] + o), wv[t], p1[t / 3]);
			}
			a0 = _mm512_add_ps(_mm512_add_ps(p0[0], p0[1]), p0[2]);
			a1 = _mm512_add_ps(_mm512_add_ps(p1[0], p1[1]), p1[2]);
		} else {
			for (int64_t t = 0; t < taps; t++) {
				__m512 w = _mm512_set1_ps(wm[t]);
				a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x0 + toff[t] + o), w, a0);
				if (two)
					a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x1 + toff[t] + o), w,
							     a1);
			}
		}
		__mmask16 km = gc_lanes16(p->ow - o);
		_mm512_mask_storeu_ps(y0 + o, km, gc_pk_act(a0, &p->epi));
		if (two)
			_mm512_mask_storeu_ps(y1 + o, km, gc_pk_act(a1, &p->epi));
	}
}

AI void dw_plane(const gc_pk_dw *p, const float *xq, const int64_t *toff, const float *wm,
		 float bias, float *ym, const int nine)
{
	__m512 bv = _mm512_set1_ps(bias);
	int64_t r = 0;
	for (; r + 2 <= p->oh; r += 2)
		dw_rows(p, xq, toff, wm, bv, ym, r, 1, nine);
	if (r < p->oh)
		dw_rows(p, xq, toff, wm, bv, ym, r, 0, nine);
}

/* The row kernel (p->rowk = K: K x K taps, dilation 1, stride s along both
 * axes): output rows r .. r + R - 1 of one channel straight from its
 * unpadded input plane, no copy. rows[t] is input row r s - pt + t, or a
 * row of zeros where that is outside the plane; the columns outside a row
 * are masked off the loads (masked lanes are never read). At stride 2 a
 * tap's 16 inputs are split out of 32 loaded ones; the R rows share the
 * input rows they overlap on. */
AI void dwr_rows(const gc_pk_dw *p, const float *const *rows, const float *wm, __m512 bv,
		 float *ym, const int R, const int s, const int K)
{
	const __m512i even =
	    _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i odd =
	    _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
	/* 3x3: the weights stay in registers; larger: broadcast from memory */
	__m512 w9[9];
#pragma GCC unroll 9
	for (int t = 0; t < 9; t++)
		w9[t] = K == 3 ? _mm512_set1_ps(wm[t]) : _mm512_setzero_ps();
	for (int64_t o = 0; o < p->ow; o += 16) {
		/* input column of lane 0 of tap column 0; the masks of each load
		 * (the same on every row) */
		int64_t c0 = o * s - p->pl;
		__mmask16 m0[7], m1[4];
		const int nm = s == 1 ? K : (K + 1) / 2;
#pragma GCC unroll 7
		for (int j = 0; j < nm; j++) {
			int64_t b0 = c0 + (s == 1 ? j : 2 * j);
			m0[j] = gc_lanes16_between(-b0, p->w - b0);
			if (s == 2)
				m1[j] = gc_lanes16_between(-b0 - 16, p->w - b0 - 16);
		}
		/* P partial sums a row (over kernel rows i % P): chains of FMAs
		 * short enough for a single 16-column block (rows of 16 or
		 * less) not to wait on their latency */
		const int P = K == 3 ? 3 : 2;
		__m512 acc[4][3];
#pragma GCC unroll 4
		for (int q = 0; q < R; q++)
#pragma GCC unroll 3
			for (int i = 0; i < P; i++)
				acc[q][i] = i ? _mm512_setzero_ps() : bv;
#pragma GCC unroll 13
		for (int t = 0; t < (R - 1) * s + K; t++) {
			const float *xr = rows[t] + c0;
			__m512 v[7];
			if (s == 1) {
#pragma GCC unroll 7
				for (int j = 0; j < K; j++)
					v[j] = _mm512_maskz_loadu_ps(m0[j], xr + j);
			} else {
#pragma GCC unroll 4
				for (int j = 0; 2 * j < K; j++) {
					__m512 lo = _mm512_maskz_loadu_ps(m0[j], xr + 2 * j);
					__m512 hi = _mm512_maskz_loadu_ps(m1[j], xr + 2 * j + 16);
					v[2 * j] = _mm512_permutex2var_ps(lo, even, hi);
					if (2 * j + 1 < K)
						v[2 * j + 1] = _mm512_permutex2var_ps(lo, odd, hi);
				}
			}
#pragma GCC unroll 4
			for (int q = 0; q < R; q++) {
				int i = t - q * s;
				if (i < 0 || i >= K)
					continue;
#pragma GCC unroll 7
				for (int j = 0; j < K; j++)
					acc[q][i % P] = _mm512_fmadd_ps(
					    v[j], K == 3 ? w9[i * 3 + j] : _mm512_set1_ps(wm[i * K + j]),
					    acc[q][i % P]);
			}
		}
		__mmask16 km = gc_lanes16(p->ow - o);
#pragma GCC unroll 4
		for (int q = 0; q < R; q++) {
			__m512 a = _mm512_add_ps(acc[q][0], acc[q][1]);
			if (P == 3)
				a = _mm512_add_ps(a, acc[q][2]);
			_mm512_mask_storeu_ps(ym + q * p->ow + o, km, gc_pk_act(a, &p->epi));
		}
	}
}

/* Input rows r s - pt .. + n - 1 of plane x into rows[], zero where
 * outside. */
AI void dwr_row_ptrs(const gc_pk_dw *p, const float *x, const float *zero, int64_t r, int n,
		     const float **rows)
{
	for (int t = 0; t < n; t++) {
		int64_t ih = r * p->sh - p->pt + t;
		rows[t] = ih >= 0 && ih < p->h ? x + ih * p->w : zero;
	}
}

/* Output rows [r, r1) of one channel of the row kernel, 4 at a time; zero
 * is a row of p->w zeros. (At stride 2, 4 rows took 0.85-0.93x the time of
 * 2 where the rows are 28 and 56 wide, 3x3, 5x5 and 7x7, 0.92-1.0x at
 * 112: kernel-time dw, one thread.) */
AI void dwr_plane(const gc_pk_dw *p, const float *x, const float *zero, const float *wm,
		  float bias, float *ym, int64_t r, int64_t r1, const int s, const int K)
{
	const int R = 4;
	const float *rows[(4 - 1) * 2 + 7];
	__m512 bv = _mm512_set1_ps(bias);
	for (; r + R <= r1; r += R) {
		dwr_row_ptrs(p, x, zero, r, (R - 1) * s + K, rows);
		dwr_rows(p, rows, wm, bv, ym + r * p->ow, R, s, K);
	}
	for (; r < r1; r++) {
		dwr_row_ptrs(p, x, zero, r, K, rows);
		dwr_rows(p, rows, wm, bv, ym + r * p->ow, 1, s, K);
	}
}

typedef void (*dwr_plane_fn)(const gc_pk_dw *p, const float *x, const float *zero,
			     const float *wm, float bias, float *ym, int64_t r0, int64_t r1);
#define DWR_PLANE(K, s)                                                                            \
	static GC_PK_TARGET void dwr_plane_##K##_##s(const gc_pk_dw *p, const float *x,            \
						     const float *zero, const float *wm,           \
						     float bias, float *ym, int64_t r0, int64_t r1) \
	{                                                                                          \
		dwr_plane(p, x, zero, wm, bias, ym, r0, r1, s, K);                                 \
	}
DWR_PLANE(3, 1)
DWR_PLANE(3, 2)
DWR_PLANE(5, 1)
DWR_PLANE(5, 2)
DWR_PLANE(7, 1)
DWR_PLANE(7, 2)
/* [(K - 3) / 2][s - 1] */
static const dwr_plane_fn dwr_planes[3][2] = {{dwr_plane_3_1, dwr_plane_3_2},
					      {dwr_plane_5_1, dwr_plane_5_2},
					      {dwr_plane_7_1, dwr_plane_7_2}};

static GC_PK_TARGET void dw_plane9(const gc_pk_dw *p, const float *xq, const int64_t *toff,
				   const float *wm, float bias, float *ym)
{
	dw_plane(p, xq, toff, wm, bias, ym, 1);
}

static GC_PK_TARGET void dw_plane_any(const gc_pk_dw *p, const float *xq, const int64_t *toff,
				      const float *wm, float bias, float *ym)
{
	dw_plane(p, xq, toff, wm, bias, ym, 0);
}

/* ---- depthwise, a small plane as one run of outputs ---- */

/* Vectors v0 .. v0 + nv - 1 of 16 outputs of one channel of the flat
 * kernel (gc_pk_dw.flat): x its input plane, wm its 9 weights. A tap's
 * inputs of 16 consecutive outputs are 16 consecutive inputs at its offset
 * foff[t], the lanes whose input is outside the plane (padding) masked off
 * the load. nv chains of FMAs. */
AI void dwf_vectors(const gc_pk_dw *p, const float *x, const float *wm, __m512 bv, float *ym,
		    int64_t v0, const int nv)
{
	int64_t sp = p->oh * p->ow;
	const uint16_t *m = p->fm + v0 * 9;
	const float *xv = x + 16 * v0;
	__m512 acc[8];
#pragma GCC unroll 8
	for (int u = 0; u < nv; u++)
		acc[u] = bv;
#pragma GCC unroll 9
	for (int t = 0; t < 9; t++) {
		__m512 w = _mm512_set1_ps(wm[t]);
		const float *xt = xv + p->foff[t];
#pragma GCC unroll 8
		for (int u = 0; u < nv; u++)
			acc[u] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m[u * 9 + t], xt + 16 * u),
						 w, acc[u]);
	}
#pragma GCC unroll 8
	for (int u = 0; u < nv; u++)
		_mm512_mask_storeu_ps(ym + 16 * (v0 + u), gc_lanes16(sp - 16 * (v0 + u)),
				      gc_pk_act(acc[u], &p->epi));
}

/* One channel of the flat kernel, 8 vectors at a time. */
static GC_PK_TARGET void dwf_plane(const gc_pk_dw *p, const float *x, const float *wm, float bias,
				   float *ym)
{
	__m512 bv = _mm512_set1_ps(bias);
	int64_t v = 0;
	for (; v + 8 <= p->fv; v += 8)
		dwf_vectors(p, x, wm, bv, ym, v, 8);
	switch (p->fv - v) {
#define DWF_TAIL(k)                                                                                \
	case k:                                                                                    \
		dwf_vectors(p, x, wm, bv, ym, v, k);                                               \
		break;
		DWF_TAIL(1)
		DWF_TAIL(2)
		DWF_TAIL(3)
		DWF_TAIL(4)
		DWF_TAIL(5)
		DWF_TAIL(6)
		DWF_TAIL(7)
#undef DWF_TAIL
	}
}

/* ---- depthwise, 16 channels at a time ---- */

/* Input rows [r0, r0 + rows) of channels c0 .. c0 + nc of x (a batch item)
 * into buf[row][pixel][16], zero where padding. */
static GC_PK_TARGET void dwb_fill(const gc_pk_dw *p, const float *x, int64_t c0, int64_t nc,
				  int64_t r0, int64_t rows, float *buf)
{
	int64_t in_sp = p->h * p->w;
	__m512 z = _mm512_setzero_ps();
	for (int64_t br = 0; br < rows; br++) {
		float *d = buf + br * p->row_px * 16;
		int64_t ih = r0 + br - p->pt;
		if (ih < 0 || ih >= p->h) {
			for (int64_t px = 0; px < p->row_px; px++)
				_mm512_storeu_ps(d + px * 16, z);
			continue;
		}
		for (int64_t px = 0; px < p->pl; px++)
			_mm512_storeu_ps(d + px * 16, z);
		for (int64_t px = p->pl + p->w; px < p->row_px; px++)
			_mm512_storeu_ps(d + px * 16, z);
		const float *src = x + c0 * in_sp + ih * p->w;
		for (int64_t i0 = 0; i0 < p->w; i0 += 16) {
			__mmask16 km = gc_lanes16(p->w - i0);
			__m512 r[16];
#pragma GCC unroll 16
			for (int l = 0; l < 16; l++)
				r[l] = l < nc ? _mm512_maskz_loadu_ps(km, src + l * in_sp + i0) : z;
			gc_pk_transpose16(r);
			int64_t n = p->w - i0 < 16 ? p->w - i0 : 16;
			float *dp = d + (p->pl + i0) * 16;
#pragma GCC unroll 16
			for (int l = 0; l < 16; l++)
				if (l < n)
					_mm512_storeu_ps(dp + l * 16, r[l]);
		}
	}
}

/* npx output pixels (up to 16), 16 channels: pixel j reads the buffer at q
 * + j * sw * 16 (j < split) or q + delta + (j - split) * sw * 16 (two rows of
 * short ones in one tile); wv[t] holds the channels' weights of tap t. The
 * first nout results go to y[l * ldy + j] for the nc channels. */
AI void dwb_tile(const gc_pk_dw *p, const float *q, int64_t delta, const float *wv,
		 const int64_t *toff, int64_t taps, __m512 bv, float *y, int64_t ldy, int64_t nc,
		 int64_t nout, const int npx, const int split, const int sw)
{
	__m512 acc[16];
#pragma GCC unroll 16
	for (int px = 0; px < 16; px++)
		acc[px] = px < npx ? bv : _mm512_setzero_ps();
	for (int64_t t = 0; t < taps; t++) {
		__m512 w = _mm512_loadu_ps(wv + t * 16);
		const float *qt = q + toff[t];
#pragma GCC unroll 16
		for (int px = 0; px < npx; px++)
			acc[px] = _mm512_fmadd_ps(
			    w,
			    _mm512_loadu_ps(
				qt + (px < split ? px * sw * 16 : delta + (px - split) * sw * 16)),
			    acc[px]);
	}
#pragma GCC unroll 16
	for (int px = 0; px < npx; px++)
		acc[px] = gc_pk_act(acc[px], &p->epi);
	gc_pk_transpose16(acc);
	__mmask16 km = gc_lanes16(nout);
	for (int64_t l = 0; l < nc; l++)
		_mm512_mask_storeu_ps(y + l * ldy, km, acc[l]);
}

typedef void (*dwb_tile_fn)(const gc_pk_dw *p, const float *q, int64_t delta, const float *wv,
			    const int64_t *toff, int64_t taps, __m512 bv, float *y, int64_t ldy,
			    int64_t nc, int64_t nout);

#define DWB_TILE(npx, split, sw, name)                                                             \
	static GC_PK_TARGET void name(const gc_pk_dw *p, const float *q, int64_t delta,            \
				      const float *wv, const int64_t *toff, int64_t taps,          \
				      __m512 bv, float *y, int64_t ldy, int64_t nc, int64_t nout)  \
	{                                                                                          \
		dwb_tile(p, q, delta, wv, toff, taps, bv, y, ldy, nc, nout, npx, split, sw);       \
	}
/* one row of n pixels, two rows of n */
#define DWB_SHORT(n, sw)                                                                           \
	DWB_TILE(n, n, sw, dwb_one_##n##_##sw)                                                     \
	DWB_TILE(2 * n, n, sw, dwb_two_##n##_##sw)
#define DWB_TILES(sw)                                                                              \
	DWB_TILE(16, 16, sw, dwb_16_##sw)                                                          \
	DWB_SHORT(1, sw)                                                                           \
	DWB_SHORT(2, sw)                                                                           \
	DWB_SHORT(3, sw)                                                                           \
	DWB_SHORT(4, sw)                                                                           \
	DWB_SHORT(5, sw)                                                                           \
	DWB_SHORT(6, sw)                                                                           \
	DWB_SHORT(7, sw)                                                                           \
	DWB_SHORT(8, sw)
DWB_TILES(1)
DWB_TILES(2)

#define DWB_TABLE(kind, sw)                                                                        \
	{                                                                                          \
		dwb_##kind##_1_##sw, dwb_##kind##_2_##sw, dwb_##kind##_3_##sw,                     \
		    dwb_##kind##_4_##sw, dwb_##kind##_5_##sw, dwb_##kind##_6_##sw,                 \
		    dwb_##kind##_7_##sw, dwb_##kind##_8_##sw                                       \
	}
/* [sw - 1][n - 1] */
static const dwb_tile_fn dwb_one[2][8] = {DWB_TABLE(one, 1), DWB_TABLE(one, 2)};
static const dwb_tile_fn dwb_two[2][8] = {DWB_TABLE(two, 1), DWB_TABLE(two, 2)};
static const dwb_tile_fn dwb_16[2] = {dwb_16_1, dwb_16_2};

/* Channels c0 .. c0 + nc of batch item x -> y, bands [b0, b1) of p->band
 * output rows. */
static GC_PK_TARGET void dwb_channels(const gc_pk_dw *p, const float *x, const float *wt,
				      const float *bias, float *y, int64_t c0, int64_t nc,
				      int64_t b0, int64_t b1, float *buf)
{
	int64_t taps = p->kh * p->kw, out_sp = p->oh * p->ow;
	float wbuf[DW_MAX_TAPS * 16] __attribute__((aligned(64)));
	int64_t toff[DW_MAX_TAPS];
	const float *wv = p->wb ? p->wb + c0 * taps : wbuf;
	for (int64_t t = 0; !p->wb && t < taps; t++)
		for (int64_t l = 0; l < 16; l++)
			wbuf[t * 16 + l] = l < nc ? wt[(c0 + l) * taps + t] : 0;
	for (int64_t i = 0; i < p->kh; i++)
		for (int64_t j = 0; j < p->kw; j++)
			toff[i * p->kw + j] = (i * p->dh * p->row_px + j * p->dw) * 16;
	__m512 bv = bias ? _mm512_maskz_loadu_ps(gc_lanes16(nc), bias + c0) : _mm512_setzero_ps();
	/* the pixels a tile reads past the last row: defined, never used */
	memset(buf + p->band_in * p->row_px * 16, 0, (size_t)(16 * p->sw + 1) * 16 * sizeof(float));
	float *yc = y + c0 * out_sp;
	for (int64_t rb = b0 * p->band; rb < p->oh && rb < b1 * p->band; rb += p->band) {
		int64_t re = rb + p->band < p->oh ? rb + p->band : p->oh;
		int64_t rows = (re - rb - 1) * p->sh + (p->kh - 1) * p->dh + 1;
		dwb_fill(p, x, c0, nc, rb * p->sh, rows, buf);
		int64_t row = p->sh * p->row_px * 16, s1 = p->sw - 1;
		for (int64_t r = rb; r < re; r++) {
			const float *q = buf + (r - rb) * row;
			float *yr = yc + r * p->ow;
			if (p->ow <= 8 && r + 1 < re) { /* rows r, r + 1: adjacent outputs */
				dwb_two[s1][p->ow - 1](p, q, row, wv, toff, taps, bv, yr, out_sp,
						       nc, 2 * p->ow);
				r++;
			} else if (p->ow <= 8) {
				dwb_one[s1][p->ow - 1](p, q, 0, wv, toff, taps, bv, yr, out_sp, nc,
						       p->ow);
			} else {
				for (int64_t o = 0; o < p->ow; o += 16)
					dwb_16[s1](p, q + o * p->sw * 16, 0, wv, toff, taps, bv,
						   yr + o, out_sp, nc, p->ow - o);
			}
		}
	}
}

/* Bands of output rows of the blocked kernel. */
static int64_t dw_bands(const gc_pk_dw *p)
{
	return p->band > 0 ? (p->oh + p->band - 1) / p->band : 1;
}

typedef struct dw_job {
	const gc_pk_dw *p;
	const float *x, *wt, *bias;
	float *y, *scratch;
	int threads;   /* the guided split's */
	int64_t bands; /* the row kernel's bands of output rows (dw_row_bands) */
} dw_job;

/* Batch items and channels (blocks of 16 when blocked), split in guided
 * runs (nn-split.h: equal parts, 4 a thread, left the threads up to half a
 * part, 1/16 of the work at 2 threads, apart at the end); a thread uses the
 * scratch buffer of its slot. */
static void dw_part(void *arg, int part, int parts, int slot)
{
	const dw_job *j = arg;
	const gc_pk_dw *p = j->p;
	int64_t in_sp = p->h * p->w, out_sp = p->oh * p->ow;
	int64_t per = p->blocked ? (p->c + 15) / 16 : p->c, lo, hi, taps = p->kh * p->kw;
	if (p->flat) {
		gc_nn_guided_range(p->n * p->c, j->threads, 1, part, parts, &lo, &hi);
		for (int64_t i = lo; i < hi; i++)
			dwf_plane(p, j->x + i * in_sp, j->wt + i % p->c * taps,
				  j->bias ? j->bias[i % p->c] : 0, j->y + i * out_sp);
		return;
	}
	float *buf = j->scratch + slot * (gc_pk_dw_scratch(p) / GC_PK_DW_SLOTS);
	if (p->blocked) {
		/* items: (batch item, band of rows, block of 16 channels), by
		 * place in the output: a thread's part of the rows of every
		 * channel, as the 1x1 convolutions around it split theirs
		 * (nn-split.h) */
		int64_t bands = dw_bands(p);
		gc_nn_guided_range(p->n * bands * per, j->threads, 1, part, parts, &lo, &hi);
		for (int64_t i = lo; i < hi; i++) {
			int64_t b = i / (bands * per), band = i / per % bands, c0 = i % per * 16;
			dwb_channels(p, j->x + b * p->c * in_sp, j->wt, j->bias,
				     j->y + b * p->c * out_sp, c0, p->c - c0 < 16 ? p->c - c0 : 16,
				     band, band + 1, buf);
		}
		return;
	}
	/* items: (batch item, band of rows, channel), by place in the output
	 * as the blocked kernel's (one band: a channel an item) */
	int64_t bands = j->bands;
	gc_nn_guided_range(p->n * bands * per, j->threads, 1, part, parts, &lo, &hi);
	int64_t toff[DW_MAX_TAPS];
	for (int64_t a = 0; a < p->kh; a++)
		for (int64_t b = 0; b < p->kw; b++) {
			int64_t cj = b * p->dw;
			toff[a * p->kw + b] =
			    (cj % p->phases) * p->plane + a * p->dh * p->pw + cj / p->phases;
		}
	if (p->rowk)
		memset(buf, 0, (size_t)p->w * sizeof(float));
	for (int64_t i = lo; i < hi; i++) {
		int64_t b = i / (bands * per), band = i / per % bands, ci = i % per;
		/* bands of whole 4-row blocks, the last to the end */
		int64_t r0 = p->oh * band / bands / 4 * 4,
			r1 = band + 1 < bands ? p->oh * (band + 1) / bands / 4 * 4 : p->oh;
		const float *xc = j->x + (b * p->c + ci) * in_sp;
		if (!p->rowk)
			dw_pad(p, xc, buf);
		for (int64_t mo = ci * p->mg; mo < (ci + 1) * p->mg; mo++) {
			float bv = j->bias ? j->bias[mo] : 0;
			float *ym = j->y + (b * p->c * p->mg + mo) * out_sp;
			if (p->rowk)
				dwr_planes[(p->rowk - 3) / 2][p->sw - 1](p, xc, buf, j->wt + mo * taps,
									 bv, ym, r0, r1);
			else
				(taps == 9 ? dw_plane9 : dw_plane_any)(p, buf, toff,
								       j->wt + mo * taps, bv, ym);
		}
	}
}

/*
 * The row kernel's bands of output rows at `threads` threads: a band a
 * thread, each thread's items the rows of every channel, where a 1x1
 * convolution that splits by pixels alone reads the output (p->by_rows)
 * and the input is larger than GC_PK_SPLIT_M_BYTES (below that a 1x1
 * before it, lib/pass-split.c, wrote it split by channels); else one (a
 * channel an item). Above it the input was written split by pixels (a
 * 1x1's row GEMM by column panels, a stem's tap path by panels of output
 * rows), and a core reading whole channels read half of each from the
 * other core's cache. At two threads (per node, builds in turns):
 * mnasnet1_0's 32-channel 3x3 at 112x112 took 77 us, not 89, its
 * 48-channel 3x3 s2 58, not 73; in paired runs mobilenet_v2 1-1.8 %
 * faster, mnasnet1_0 0.4-1 %, mobilenet_v3 0.7 %. Unmarked, where another
 * reader takes whole channels (efficientnet_b0's squeeze-excite), it had
 * lost more than it gained there: 1 % slower.
 */
static int64_t dw_row_bands(const gc_pk_dw *p, int threads)
{
	if (!p->by_rows || !p->rowk || p->blocked || p->flat || threads < 2 ||
	    p->oh < 8 * threads ||
	    (double)(p->c * p->h * p->w) * sizeof(float) <= GC_PK_SPLIT_M_BYTES)
		return 1;
	return threads;
}

void gc_pk_dw_run(const gc_pk_dw *p, const float *x, const float *wt, const float *bias, float *y,
		  float *scratch, int threads)
{
	dw_job j = {.p = p, .x = x, .wt = wt, .bias = bias, .y = y, .scratch = scratch};
	/* ~1.5 cycles a vector of 16 outputs and a tap, ~1 cycle an output for
	 * its epilogue and store, and for the copy of the input (transposed
	 * when blocked, a quarter of that padded): the last two terms are most
	 * of a small plane's time (measured: mobilenet_v2's 960x7x7 3x3 takes
	 * ~90k cycles, twice the taps' share), which then still goes to 2 */
	double outs = (double)(p->n * p->c * p->mg * p->oh * p->ow);
	double cycles = outs * (1.5 * (double)(p->kh * p->kw) / 16 + 1) +
			(double)(p->n * p->c * p->h * p->w) * (p->blocked ? 1 : p->flat ? 0 : 0.25);
	int t = gc_nn_par_threads(threads, cycles);
	t = t < GC_PK_DW_SLOTS ? t : GC_PK_DW_SLOTS; /* a scratch buffer each */
	j.threads = t;
	j.bands = dw_row_bands(p, t);
	int64_t items = p->n * (p->blocked ? (p->c + 15) / 16 * dw_bands(p) : j.bands * p->c);
	gc_nn_parallel(t, gc_nn_guided_parts(items, t, 1), dw_part, &j);
}

#else

void gc_pk_dw_run(const gc_pk_dw *p, const float *x, const float *wt, const float *bias, float *y,
		  float *scratch, int threads)
{
	(void)threads;
	(void)p;
	(void)x;
	(void)wt;
	(void)bias;
	(void)y;
	(void)scratch;
}

#endif
