/*
 * Conv: on AVX-512 CPUs, float32 convolutions run on the packed kernels of
 * sgemm-pack.h (weights packed at prepare: a direct channel-vector kernel,
 * the row GEMM for 1x1, a depthwise kernel), chosen by their cost. The
 * reference path, for everything else and with GRAPHCC_NN_REFERENCE=1:
 * im2col + GEMM per group in general, the input itself as the GEMM operand
 * for 1x1 stride-1 unpadded convolutions, and a direct kernel for depthwise
 * convolutions (one input channel per group), where GEMM gains nothing.
 * (The sliding-window arithmetic it shares with pooling and ConvTranspose
 * is window.c's.)
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../blas.h"
#include "conv-live.h"
#include "kutil.h"
#include "nn-act.h"
#include "nn-par.h"
#include "nn-split.h"
#include "nn.h"
#include "sgemm-pack.h"
#include "value-impl.h"

GC_NN_O3

/* ---- Conv ---- */

enum { CONV_IM2COL, CONV_POINTWISE, CONV_DEPTHWISE };

/* The packed AVX-512 kernels of sgemm-pack.h (float32), when prepare picks
 * one; CONV_* above is then the reference path it replaces. */
enum { FAST_NONE, FAST_ROW, FAST_CHAN, FAST_DW, FAST_LIVE };

typedef struct conv_state {
	gc_nn_base base;
	gc_nn_window w;
	int kind, has_bias;
	int64_t n, c, m, g, cg, mg; /* batch, channels in/out, groups, per group */
	int64_t in_sp, out_sp, kk;  /* spatial sizes, kernel taps */
	int64_t kdim;		    /* GEMM K: cg * kk */
	int64_t tile_rows;	    /* output rows (od, oh) per im2col tile */
	/* depthwise with equal strides: a zero-padded copy of the input plane,
	 * rows of wp, and a "wide" output plane with rows of wp too, so that
	 * output p = oh * wp + o reads input stride * p + tap offset */
	int wide;
	int64_t wp, pad_elems, wide_elems;
	gc_nn_act act; /* a fused activation, applied with the bias */
	/* a fused residual (input 3, _gc_residual): y = act(conv + bias + r).
	 * The packed row GEMM and channel kernels add it in their epilogue;
	 * the other paths (post_res) run with act NONE and then add it and
	 * apply res_act in a pass over the output. */
	int has_res, post_res;
	gc_nn_act res_act;
	/* a BatchNormalization [and Relu] before it, which lib/pass-batchnorm.c
	 * moved in (inputs 4 and 5, _gc_input_affine 1 or 2): the input is
	 * taken as x a[c] + b[c] [then max(0, .)]. The row GEMM applies it as
	 * it copies V's panels (pre_packed); the other paths run pre_inner on
	 * a transformed copy of x at scratch offset pre_off. */
	int pre, pre_packed;
	/* A 1x1's input whose channel rows crowd the caches' sets
	 * (gc_pk_channels_crowd): the row GEMM copies each column panel of it
	 * into a buffer of its thread's (gc_pk_gemm.v_buf) before its tiles
	 * read it. Read in place, a panel's rows (192 bytes each, 4 KiB apart
	 * at 32x32) fell in 32 of L2's 2048 sets, did not stay there between
	 * the panel's row tiles and came from L3 for each: at one thread a
	 * 1024 -> 256 1x1 at 32x32 took 6.8 ms against 3.3 at 32x33, 64x64
	 * 31 ms (OpenBLAS 14.5), 48x32 8.7 (5.4). Copied: 3.3, 12.4, 4.4,
	 * 16x16 0.86 -> 0.76. torchvision's fcn_resnet50 at 256x256 (its
	 * 1x1s at 32x32, 2.2x ONNX Runtime's time) went from 1.60x ONNX
	 * Runtime's time to 1.13x at one thread, 1.47x to 1.09x at two. Where
	 * rows do not crowd the copy gained 0-7 % (32x33, 28x28, 14x14), and
	 * resnet50 and inception_v3 ran the same within 2 %: not copied. */
	int v_copy;
	gc_run_fn pre_inner;
	/* the output in place of the residual (conv_res_wrap): the run that
	 * conv_res_run calls with a copy of it at res_off where they are one */
	gc_run_fn res_inner;
	uint64_t res_off;
	uint64_t pre_off;
	/* a residual of another shape, broadcast as Add does (the pass could
	 * not see the shapes): the reference path, then y = res_act(conv + z)
	 * over y's shape (rank brank), conv and z read at strides ba and bz
	 * (0 along broadcast dims); the conv goes to scratch at buf_off when y
	 * is larger than it */
	int bcast, own_buf;
	int32_t brank;
	int64_t bdims[GC_MAX_RANK], ba[GC_MAX_RANK], bz[GC_MAX_RANK];
	uint64_t buf_off;
	int fast;
	/* FAST_ROW: split over the threads by output channels (gc_pk_gemm.
	 * split_m), as lib/pass-split.c marks (_gc_split_channels) a 1x1 Conv
	 * that a depthwise one alone reads (and FAST_DW by rows where a 1x1
	 * alone reads it: _gc_split_rows, gc_pk_dw.by_rows) */
	int split_m;
	const float *row_w; /* FAST_ROW: each group's weights packed as S (node->packed) */
	/* FAST_ROW or FAST_CHAN of a strided 1x1: the pixels it reads are
	 * first copied together into scratch (take), the kernel's input as
	 * a stride-1 one's */
	int take;
	uint64_t take_off;
	/* FAST_ROW of a 1-D or 2-D convolution (tap_rows set): V's rows are
	 * the (channel, tap) rows of its im2col, each output row's read from
	 * a zero-padded copy of the input (scratch) split by stride phase
	 * along w, so that each is contiguous: padded element (R, s i + r) of
	 * channel c is at ((c s + r) tap_h + R) tap_len + i (gc_pk_gemm.v_rows,
	 * v_ow; V's panels in v_buf after the copy, at tap_buf). */
	int32_t *tap_rows;
	int64_t tap_len, tap_h;
	uint64_t tap_buf;
	bool tap_direct; /* the tiles read the taps in place, not a panel copy */
	bool tap_wrap;	 /* ... in panels across the rows (gc_pk_gemm.v_wrap) */
	bool tap_input;	 /* the taps are the input's own rows: no padded copy */
	gc_pk_conv pk; /* FAST_CHAN */
	gc_pk_dw dw;   /* FAST_DW */
	/* the weights of the live taps when w is the live window
	 * (gc_nn_window_live): the packed kernels' input for W */
	float *live_w;
	gc_live_conv live; /* FAST_LIVE */
} conv_state;

static void conv_state_free(void *p)
{
	conv_state *st = p;
	if (!st)
		return;
	gc_pk_conv_free(&st->pk);
	gc_pk_dw_free(&st->dw);
	gc_free(st->tap_rows);
	gc_free(st->live_w);
	gc_live_conv_free(&st->live);
	gc_free(st);
}

/* Widest kernel the depthwise path takes (wider ones use im2col). */
#define DW_MAX_KW 32
/* Most taps the wide depthwise path takes. */
#define DW_MAX_TAPS 64

/* Most scratch the wide depthwise path takes (larger: the plain kernel). */
#define DW_WIDE_MAX_BYTES ((uint64_t)256 << 20)

/*
 * Plans the wide depthwise path (see conv_state): returns 1 with st->wp,
 * pad_elems, wide_elems and *scratch set, or 0 when its padded plane would
 * be larger than DW_WIDE_MAX_BYTES, and the plain depthwise kernel, which
 * needs no scratch, runs instead. Strides, dilations and pads from a file
 * may make these sizes overflow: every step is checked.
 */
static int dw_wide_plan(conv_state *st, size_t es, uint64_t *scratch)
{
	const gc_nn_window *w = &st->w;
	int64_t s = w->stride[2], max_elems = (int64_t)(DW_WIDE_MAX_BYTES / es);
	/* gc_nn_window_init keeps sizes below 2^40, kernel, stride, dilation
	 * and pads below 2^31: these four cannot overflow */
	int64_t wp = (w->pad_lo[2] + w->in[2] + w->pad_hi[2] + s - 1) / s * s;
	int64_t hp = w->pad_lo[1] + w->in[1] + w->pad_hi[1];
	int64_t reach_h = (w->k[1] - 1) * w->dil[1], reach_w = (w->k[2] - 1) * w->dil[2];
	int64_t max_off, wide, pad, plane;
	if (__builtin_mul_overflow(reach_h, wp, &max_off) ||
	    __builtin_add_overflow(max_off, reach_w, &max_off) ||
	    __builtin_mul_overflow(w->out[1], wp, &wide) ||
	    __builtin_mul_overflow(s, wide - 1, &pad) || __builtin_add_overflow(pad, max_off, &pad) ||
	    __builtin_mul_overflow(hp, wp, &plane) || wide > max_elems || pad >= max_elems ||
	    plane > max_elems)
		return 0;
	pad = pad + 1 < plane ? plane : pad + 1;
	/* a whole number of stride phases */
	pad = (pad + s - 1) / s * s;
	st->wp = wp;
	st->wide_elems = wide;
	st->pad_elems = pad;
	*scratch = gc_nn_align((uint64_t)pad * es) + gc_nn_align((uint64_t)wide * es);
	return 1;
}

/* Largest im2col buffer before the output is tiled by rows. */
#define CONV_COL_MAX_BYTES ((uint64_t)8 << 20)

#define CONV_DEFINE(T, sfx, gemm)                                                                  \
	/* col[row (c, kd, kh, kw)][r - r0][ow], r = od * OH + oh in [r0, r1) */                   \
	static void im2col_##sfx(const conv_state *st, const T *x, T *col, int64_t r0, int64_t r1) \
	{                                                                                          \
		const gc_nn_window *w = &st->w;                                                    \
		int64_t D = w->in[0], H = w->in[1], W = w->in[2];                                  \
		int64_t OH = w->out[1], OW = w->out[2];                                            \
		int64_t cols = (r1 - r0) * OW;                                                     \
		T *dst = col;                                                                      \
		for (int64_t c = 0; c < st->cg; c++)                                               \
			for (int64_t a = 0; a < w->k[0]; a++)                                      \
				for (int64_t i = 0; i < w->k[1]; i++)                              \
					for (int64_t j = 0; j < w->k[2]; j++, dst += cols) {       \
						int64_t offw = j * w->dil[2] - w->pad_lo[2];       \
						int64_t lo, hi;                                    \
						gc_nn_valid_range(offw, w->stride[2], W, OW, &lo,  \
								  &hi);                            \
						for (int64_t r = r0; r < r1; r++) {                \
							int64_t od = r / OH, oh = r % OH;          \
							int64_t id = od * w->stride[0] -           \
								     w->pad_lo[0] + a * w->dil[0]; \
							int64_t ih = oh * w->stride[1] -           \
								     w->pad_lo[1] + i * w->dil[1]; \
							T *d = dst + (r - r0) * OW;                \
							if (id < 0 || id >= D || ih < 0 ||         \
							    ih >= H) {                             \
								memset(d, 0,                       \
								       (size_t)OW * sizeof(T));    \
								continue;                          \
							}                                          \
							const T *src =                             \
							    x + ((c * D + id) * H + ih) * W;       \
							for (int64_t o = 0; o < lo; o++)           \
								d[o] = 0;                          \
							if (w->stride[2] == 1 && hi > lo)          \
								memcpy(d + lo, src + lo + offw,    \
								       (size_t)(hi - lo) *         \
									   sizeof(T));             \
							else                                       \
								for (int64_t o = lo; o < hi; o++)  \
									d[o] =                     \
									    src[o * w->stride[2] + \
										offw];             \
							for (int64_t o = hi; o < OW; o++)          \
								d[o] = 0;                          \
						}                                                  \
					}                                                          \
	}                                                                                          \
                                                                                                   \
	/* yr[o] += wv * xr[o * sw + off] for o in [lo, hi) */                                     \
	static inline void dw_tap_##sfx(T *restrict yr, const T *restrict xr, T wv, int64_t off,   \
					int64_t sw, int64_t lo, int64_t hi)                        \
	{                                                                                          \
		if (sw == 1)                                                                       \
			for (int64_t o = lo; o < hi; o++)                                          \
				yr[o] += wv * xr[o + off];                                         \
		else                                                                               \
			for (int64_t o = lo; o < hi; o++)                                          \
				yr[o] += wv * xr[o * sw + off];                                    \
	}                                                                                          \
                                                                                                   \
	/* One input row of a 3-wide kernel: the three taps in one pass where all                  \
	 * are inside the row ([a, z)), tap by tap at the borders. */                              \
	static inline void dw_row3_##sfx(T *restrict yr, const T *restrict xr, const T *wr,        \
					 const gc_nn_window *w, const int64_t *lo,                 \
					 const int64_t *hi, int64_t a, int64_t z)                  \
	{                                                                                          \
		int64_t sw = w->stride[2];                                                         \
		int64_t off[3];                                                                    \
		for (int j = 0; j < 3; j++) {                                                      \
			off[j] = j * w->dil[2] - w->pad_lo[2];                                     \
			dw_tap_##sfx(yr, xr, wr[j], off[j], sw, lo[j], hi[j] < a ? hi[j] : a);     \
			dw_tap_##sfx(yr, xr, wr[j], off[j], sw, lo[j] > z ? lo[j] : z, hi[j]);     \
		}                                                                                  \
		T w0 = wr[0], w1 = wr[1], w2 = wr[2];                                              \
		const T *restrict x0 = xr + off[0], *restrict x1 = xr + off[1];                    \
		const T *restrict x2 = xr + off[2];                                                \
		if (sw == 1)                                                                       \
			for (int64_t o = a; o < z; o++)                                            \
				yr[o] += w0 * x0[o] + w1 * x1[o] + w2 * x2[o];                     \
		else                                                                               \
			for (int64_t o = a; o < z; o++)                                            \
				yr[o] += w0 * x0[o * sw] + w1 * x1[o * sw] + w2 * x2[o * sw];      \
	}                                                                                          \
                                                                                                   \
	/* xp: the zero-padded input plane (stride 1); for stride s > 1, xq holds                  \
	 * that plane split in s phases (xq[r * plane + i] = padded[s * i + r]) so                 \
	 * that every tap reads contiguously: padded s * p + off is phase off % s,                 \
	 * index p + off / s. yw: the wide output plane. */                                        \
	GC_NN_SIMD static void depthwise_wide_##sfx(const conv_state *st, const T *x, const T *wt, \
						    const T *bias, T *y, T *xp, T *xq, T *yw)      \
	{                                                                                          \
		const gc_nn_window *w = &st->w;                                                    \
		int64_t H = w->in[1], W = w->in[2], OH = w->out[1], OW = w->out[2];                \
		int64_t KH = w->k[1], KW = w->k[2], s = w->stride[2], wp = st->wp;                 \
		int64_t pt = w->pad_lo[1], pl = w->pad_lo[2], np = OH * wp;                        \
		int64_t taps = KH * KW, plane = st->pad_elems / s;                                 \
		const T *base[DW_MAX_TAPS];                                                        \
		for (int64_t i = 0; i < KH; i++)                                                   \
			for (int64_t j = 0; j < KW; j++) {                                         \
				int64_t off = i * w->dil[1] * wp + j * w->dil[2];                  \
				base[i * KW + j] =                                                 \
				    s == 1 ? xp + off : xq + (off % s) * plane + off / s;          \
			}                                                                          \
		for (int64_t b = 0; b < st->n; b++)                                                \
			for (int64_t c = 0; c < st->c; c++) {                                      \
				const T *xc = x + (b * st->c + c) * H * W;                         \
				if (s == 1) {                                                      \
					memset(xp, 0, (size_t)st->pad_elems * sizeof(T));          \
					for (int64_t r = 0; r < H; r++)                            \
						memcpy(xp + (pt + r) * wp + pl, xc + r * W,        \
						       (size_t)W * sizeof(T));                     \
				} else {                                                           \
					/* wp is a multiple of s: padded column col of row         \
					 * R is phase col % s, index R * wp / s + col / s */       \
					memset(xq, 0, (size_t)st->pad_elems * sizeof(T));          \
					for (int64_t r = 0; r < H; r++)                            \
						for (int64_t ph = 0; ph < s; ph++) {               \
							int64_t c0 = ((ph - pl) % s + s) % s;      \
							T *restrict d = xq + ph * plane +          \
									(pt + r) * (wp / s) +      \
									(pl + c0) / s;             \
							const T *restrict src = xc + r * W + c0;   \
							int64_t cnt =                              \
							    c0 < W ? (W - c0 + s - 1) / s : 0;     \
							if (s == 2)                                \
								for (int64_t i = 0; i < cnt; i++)  \
									d[i] = src[2 * i];         \
							else                                       \
								for (int64_t i = 0; i < cnt; i++)  \
									d[i] = src[s * i];         \
						}                                                  \
				}                                                                  \
				for (int64_t m = c * st->mg; m < (c + 1) * st->mg; m++) {          \
					const T *wm = wt + m * taps;                               \
					T *restrict acc = yw;                                      \
					if (taps == 9) {                                           \
						const T *restrict q0 = base[0], *restrict q1 =     \
										    base[1];       \
						const T *restrict q2 = base[2], *restrict q3 =     \
										    base[3];       \
						const T *restrict q4 = base[4], *restrict q5 =     \
										    base[5];       \
						const T *restrict q6 = base[6], *restrict q7 =     \
										    base[7];       \
						const T *restrict q8 = base[8];                    \
						T w0 = wm[0], w1 = wm[1], w2 = wm[2], w3 = wm[3],  \
						  w4 = wm[4], w5 = wm[5], w6 = wm[6], w7 = wm[7],  \
						  w8 = wm[8];                                      \
						for (int64_t p = 0; p < np; p++)                   \
							acc[p] =                                   \
							    w0 * q0[p] + w1 * q1[p] + w2 * q2[p] + \
							    w3 * q3[p] + w4 * q4[p] + w5 * q5[p] + \
							    w6 * q6[p] + w7 * q7[p] + w8 * q8[p];  \
					} else {                                                   \
						for (int64_t p = 0; p < np; p++)                   \
							acc[p] = 0;                                \
						for (int64_t t = 0; t < taps; t++) {               \
							const T *restrict q = base[t];             \
							T wv = wm[t];                              \
							for (int64_t p = 0; p < np; p++)           \
								acc[p] += wv * q[p];               \
						}                                                  \
					}                                                          \
					T bv = bias ? bias[m] : 0;                                 \
					T *ym = y + (b * st->m + m) * OH * OW;                     \
					for (int64_t oh = 0; oh < OH; oh++)                        \
						GC_NN_ACT_ROW(T, &st->act, ym + oh * OW,           \
							      acc + oh * wp, OW, bv);              \
				}                                                                  \
			}                                                                          \
	}                                                                                          \
                                                                                                   \
	GC_NN_SIMD static void depthwise_##sfx(const conv_state *st, const T *x, const T *wt,      \
					       const T *bias, T *y)                                \
	{                                                                                          \
		const gc_nn_window *w = &st->w;                                                    \
		int64_t H = w->in[1], W = w->in[2], OH = w->out[1], OW = w->out[2];                \
		int64_t KH = w->k[1], KW = w->k[2], sh = w->stride[1], sw = w->stride[2];          \
		/* the valid output columns of each kernel column: the same for every              \
		 * row, and the divisions would cost more than the row's work */                   \
		int64_t lo_[DW_MAX_KW], hi_[DW_MAX_KW];                                            \
		for (int64_t j = 0; j < KW; j++)                                                   \
			gc_nn_valid_range(j * w->dil[2] - w->pad_lo[2], sw, W, OW, &lo_[j],        \
					  &hi_[j]);                                                \
		/* where every tap of a 3-wide kernel is inside the row */                         \
		int64_t a3 = 0, z3 = OW;                                                           \
		for (int64_t j = 0; j < KW && KW == 3; j++) {                                      \
			a3 = lo_[j] > a3 ? lo_[j] : a3;                                            \
			z3 = hi_[j] < z3 ? hi_[j] : z3;                                            \
		}                                                                                  \
		if (z3 < a3)                                                                       \
			z3 = a3;                                                                   \
		for (int64_t b = 0; b < st->n; b++)                                                \
			for (int64_t m = 0; m < st->m; m++) {                                      \
				const T *xc = x + (b * st->c + m / st->mg) * H * W;                \
				const T *wm = wt + m * KH * KW;                                    \
				T *yc = y + (b * st->m + m) * OH * OW;                             \
				T bv = bias ? bias[m] : 0;                                         \
				for (int64_t oh = 0; oh < OH; oh++) {                              \
					T *restrict yr = yc + oh * OW;                             \
					for (int64_t o = 0; o < OW; o++)                           \
						yr[o] = bv;                                        \
					for (int64_t i = 0; i < KH; i++) {                         \
						int64_t ih =                                       \
						    oh * sh - w->pad_lo[1] + i * w->dil[1];        \
						if (ih < 0 || ih >= H)                             \
							continue;                                  \
						const T *restrict xr = xc + ih * W;                \
						const T *wr = wm + i * KW;                         \
						if (KW == 3) {                                     \
							dw_row3_##sfx(yr, xr, wr, w, lo_, hi_, a3, \
								      z3);                         \
							continue;                                  \
						}                                                  \
						for (int64_t j = 0; j < KW; j++)                   \
							dw_tap_##sfx(yr, xr, wr[j],                \
								     j * w->dil[2] - w->pad_lo[2], \
								     sw, lo_[j], hi_[j]);          \
					}                                                          \
					if (st->act.kind != GC_NN_ACT_NONE)                        \
						GC_NN_ACT_ROW(T, &st->act, yr, yr, OW, (T)0);      \
				}                                                                  \
			}                                                                          \
	}                                                                                          \
                                                                                                   \
	/* y = act(y + r) over the whole output (a residual the path did not fuse) */              \
	GC_NN_SIMD static void residual_##sfx(const conv_state *st, const T *r, T *y)              \
	{                                                                                          \
		int64_t total = st->n * st->m * st->out_sp;                                        \
		for (int64_t i0 = 0; i0 < total; i0 += 4096) {                                     \
			int64_t cnt = total - i0 < 4096 ? total - i0 : 4096;                       \
			T *restrict d = y + i0;                                                    \
			const T *restrict s = r + i0;                                              \
			for (int64_t i = 0; i < cnt; i++)                                          \
				d[i] += s[i];                                                      \
			GC_NN_ACT_ROW(T, &st->res_act, d, d, cnt, (T)0);                           \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	/* y = act(a + z) over y's shape, a and z broadcast (conv_state.bcast) */                  \
	GC_NN_SIMD static void bcast_##sfx(const conv_state *st, const T *a, const T *z, T *y)     \
	{                                                                                          \
		int32_t R = st->brank;                                                             \
		int64_t idx[GC_MAX_RANK] = {0}, inner = st->bdims[R - 1], total = 1;               \
		int64_t sa = st->ba[R - 1], sz = st->bz[R - 1];                                    \
		for (int32_t d = 0; d < R; d++)                                                    \
			total *= st->bdims[d];                                                     \
		for (int64_t o = 0; o < total; o += inner) {                                       \
			int64_t oa = 0, oz = 0;                                                    \
			for (int32_t d = 0; d < R - 1; d++) {                                      \
				oa += idx[d] * st->ba[d];                                          \
				oz += idx[d] * st->bz[d];                                          \
			}                                                                          \
			for (int64_t j = 0; j < inner; j++)                                        \
				y[o + j] = a[oa + j * sa] + z[oz + j * sz];                        \
			GC_NN_ACT_ROW(T, &st->res_act, y + o, y + o, inner, (T)0);                 \
			for (int32_t d = R - 2; d >= 0 && ++idx[d] == st->bdims[d]; d--)           \
				idx[d] = 0;                                                        \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	/* bias and fused activation over the output channels [m0, m1) of yg */                   \
	GC_NN_SIMD static void epilogue_##sfx(const conv_state *st, const T *bias, T *yg,          \
					      int64_t m0, int64_t m1)                              \
	{                                                                                          \
		for (int64_t m = m0; m < m1; m++) {                                                \
			T *yc = yg + (m - m0) * st->out_sp;                                        \
			GC_NN_ACT_ROW(T, &st->act, yc, yc, st->out_sp, bias ? bias[m] : (T)0);     \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	static void conv_gemm_##sfx(gc_kctx *k, const conv_state *st, const T *x, const T *wt,     \
				    const T *bias, T *y)                                           \
	{                                                                                          \
		int64_t rows = st->w.out[0] * st->w.out[1], OW = st->w.out[2];                     \
		int epi = bias || st->act.kind != GC_NN_ACT_NONE;                                  \
		for (int64_t b = 0; b < st->n; b++)                                                \
			for (int64_t g = 0; g < st->g; g++) {                                      \
				const T *xg = x + (b * st->c + g * st->cg) * st->in_sp;            \
				const T *wg = wt + g * st->mg * st->kdim;                          \
				T *yg = y + (b * st->m + g * st->mg) * st->out_sp;                 \
				if (st->kind == CONV_POINTWISE) {                                  \
					gemm(k->threads, 0, 0, (int)st->mg, (int)st->out_sp,       \
					     (int)st->kdim, 1, wg, (int)st->kdim, xg,              \
					     (int)st->in_sp, 0, yg, (int)st->out_sp);              \
					if (epi)                                                   \
						epilogue_##sfx(st, bias, yg, g * st->mg,           \
							       (g + 1) * st->mg);                  \
					continue;                                                  \
				}                                                                  \
				for (int64_t r0 = 0; r0 < rows; r0 += st->tile_rows) {             \
					int64_t r1 =                                               \
					    r0 + st->tile_rows < rows ? r0 + st->tile_rows : rows; \
					T *col = k->scratch;                                       \
					im2col_##sfx(st, xg, col, r0, r1);                         \
					int cols = (int)((r1 - r0) * OW);                          \
					gemm(k->threads, 0, 0, (int)st->mg, cols, (int)st->kdim,   \
					     1, wg, (int)st->kdim, col, cols, 0, yg + r0 * OW,     \
					     (int)st->out_sp);                                     \
				}                                                                  \
				if (epi) /* the group's output, just written */            \
					epilogue_##sfx(st, bias, yg, g * st->mg, (g + 1) * st->mg); \
			}                                                                          \
	}                                                                                          \
                                                                                                   \
	static int conv_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,              \
				  gc_tensor *const *out)                                           \
	{                                                                                          \
		const conv_state *st = n->state;                                                   \
		const T *x = in[0]->data, *wt = in[1]->data;                                       \
		const T *bias = st->has_bias ? (const T *)in[2]->data : NULL;                      \
		T *y = st->own_buf ? (T *)(void *)((char *)k->scratch + st->buf_off)               \
				   : (T *)out[0]->data;                                            \
		if (st->kind == CONV_DEPTHWISE && st->wide) {                                      \
			T *xp = k->scratch; /* also xq: one is used, by stride */                  \
			T *yw = xp + gc_nn_align((uint64_t)st->pad_elems * sizeof(T)) / sizeof(T); \
			depthwise_wide_##sfx(st, x, wt, bias, y, xp, xp, yw);                      \
		} else if (st->kind == CONV_DEPTHWISE) {                                           \
			depthwise_##sfx(st, x, wt, bias, y);                                       \
		} else {                                                                           \
			conv_gemm_##sfx(k, st, x, wt, bias, y);                                    \
		}                                                                                  \
		if (st->bcast)                                                                     \
			bcast_##sfx(st, y, in[3]->data, out[0]->data);                             \
		else if (st->post_res)                                                             \
			residual_##sfx(st, in[3]->data, y);                                        \
		return 0;                                                                          \
	}

/* OpenBLAS runs single-threaded (blas.h): the products split over the pool */
CONV_DEFINE(float, f32, gc_nn_sgemm)
CONV_DEFINE(double, f64, gc_nn_dgemm)

/* ---- Conv on the packed kernels ---- */

/* The floats of a 1-D or 2-D convolution's phase-split padded input (see
 * conv_state.tap_rows), setting st->tap_len and tap_h; 0 when the input is
 * 3-D or its offsets would not fit int32. */
static int64_t conv_tap_floats(conv_state *st)
{
	const gc_nn_window *w = &st->w;
	if (w->in[0] * w->k[0] * w->out[0] != 1)
		return 0;
	/* gc_nn_window_init keeps sizes below 2^40, kernel, stride and
	 * dilation below 2^31: the reaches cannot overflow */
	int64_t s = w->stride[2], reach = (w->out[2] - 1) * s + (w->k[2] - 1) * w->dil[2] + 1;
	st->tap_len = (reach + s - 1) / s;
	st->tap_h = (w->out[1] - 1) * w->stride[1] + (w->k[1] - 1) * w->dil[1] + 1;
	if (st->c * s > INT32_MAX / st->tap_len / st->tap_h)
		return 0;
	return st->c * st->tap_h * s * st->tap_len;
}

/* The rows of V of output row 0 (conv_state.tap_rows), after
 * conv_tap_floats; NULL out of memory. */
static int32_t *conv_taps(const conv_state *st)
{
	const gc_nn_window *w = &st->w;
	int64_t s = w->stride[2];
	int32_t *rows = gc_malloc((size_t)st->kdim * sizeof *rows), *d = rows;
	for (int64_t ci = 0; rows && ci < st->cg; ci++)
		for (int64_t i = 0; i < w->k[1]; i++)
			for (int64_t t = 0; t < w->k[2]; t++) {
				int64_t q = t * w->dil[2];
				*d++ = (int32_t)(((ci * s + q % s) * st->tap_h + i * w->dil[1]) *
						     st->tap_len +
						 q / s);
			}
	return rows;
}

/* Whether the row GEMM reads the taps where they are (gc_pk_gemm.v_rows
 * without v_buf: panels cut at each output row's end, the last one of a
 * row part empty) rather than copying them panel by panel: when that
 * costs less than the copy, ~1/4 cycle a float (resnet18's 7x7 s2 stem:
 * 0.23 cycle, 4.8 % of its time at one thread). Measured at one thread
 * (single-node models, on-CPU time): 0.94x the copy's time at 112 wide
 * (resnet's stem: no part-empty panel), 0.98x at 109 (squeezenet's);
 * inception's 147 wide 3x3s 0.98x with 32 channels out, 1.06x with 64
 * (which the estimate leaves to the copy). */
static bool conv_tap_direct(const conv_state *st)
{
	const gc_nn_window *w = &st->w;
	double direct = (double)w->out[1] * gc_pk_gemm_cost(st->mg, w->out[2], st->kdim);
	double copied = gc_pk_gemm_cost(st->mg, st->out_sp, st->kdim) +
			(double)st->kdim * (double)st->out_sp / 4;
	return direct < copied;
}

/* The columns of V the row GEMM computes with its panels run on across
 * the output rows (gc_pk_gemm.v_wrap: every output row one padded input
 * row long), or 0 where it cannot (stride above 1 along w, rows under a
 * vector) or would compute half again as many as it stores. */
static int64_t conv_wrap_cols(const conv_state *st)
{
	const gc_nn_window *w = &st->w;
	int64_t ld = w->stride[1] * st->tap_len;
	if (w->stride[2] != 1 || w->out[2] < 16 || ld < 16 || 2 * (ld - w->out[2]) > w->out[2])
		return 0;
	return (w->out[1] - 1) * ld + w->out[2];
}

/* How much less the estimate of the row GEMM with its panels across the
 * rows must be than another kernel's for it to be chosen (see
 * conv_fast_prepare). */
#define WRAP_MARGIN 1.01

/* Whether the taps' padded copy would be the input itself: a stride-1
 * convolution reading no pads, whose windows reach every input row and
 * column. */
static bool conv_tap_input(const conv_state *st)
{
	const gc_nn_window *w = &st->w;
	return w->stride[2] == 1 && w->pad_lo[1] == 0 && w->pad_lo[2] == 0 &&
	       st->tap_h == w->in[1] && st->tap_len == w->in[2];
}

/* The floats the tap path's padded copy of a batch item's input writes
 * (none where it reads the input in place), what the estimates count it
 * at: ~1 cycle a float. After conv_tap_floats. */
static int64_t conv_tap_copy(const conv_state *st)
{
	return conv_tap_input(st) ? 0 : st->c * st->w.stride[2] * st->tap_h * st->tap_len;
}

/* Padded rows [r0, r1) of every channel of one batch item's input x as
 * conv_taps reads it, into xq: at strides above 1 split by gc_pk_split_pad
 * from the input row itself. */
static void tap_pad_rows(const conv_state *st, const float *x, float *xq, int64_t r0, int64_t r1)
{
	const gc_nn_window *w = &st->w;
	int64_t s = w->stride[2], len = st->tap_len, W = w->in[2], pl = w->pad_lo[2];
	int64_t plane = st->tap_h * len;
	/* padded [a, b) holds the row's elements 0, ... (stride 1) */
	int64_t a = pl < len ? pl : len, b = pl + W < len ? pl + W : len;
	for (int64_t ci = 0; ci < st->c; ci++)
		for (int64_t R = r0; R < r1; R++) {
			int64_t h = R - w->pad_lo[1];
			float *d = xq + ci * s * plane + R * len;
			if (h < 0 || h >= w->in[1]) {
				for (int64_t r = 0; r < s; r++)
					memset(d + r * plane, 0, (size_t)len * sizeof *d);
				continue;
			}
			const float *src = x + (ci * w->in[1] + h) * W;
			if (s > 1) {
				gc_pk_split_pad(src, pl, W, s, len, (int)s, d, plane);
			} else {
				memset(d, 0, (size_t)a * sizeof *d);
				memcpy(d + a, src, (size_t)(b - a) * sizeof *d);
				memset(d + b, 0, (size_t)(len - b) * sizeof *d);
			}
		}
}

/* Most blocks of padded rows a tap job cuts the copy into. */
#define TAP_BLOCKS 64

/*
 * The tap path's copy and products of one batch item together, by bands
 * of output rows: a part takes column panels (of every group), copies the
 * blocks of padded rows they read that no thread has begun (every channel
 * and phase), waits for those another thread is copying, then computes the
 * panels. A thread so reads mostly rows it copied, from its own cache. With
 * the copy split by rows over the threads first and the panels after
 * (gc_pk_gemm_par), half of what a core read the other had written, and
 * the copy's writes met lines the other core held from the last run: at
 * two threads it took 3x its on-CPU time at one (a 3 -> 32 3x3 s2 stem at
 * 224x224: 129 us against 43).
 */
typedef struct tap_job {
	const conv_state *st;
	const float *x;
	float *xq;
	const gc_pk_gemm *g; /* group 0's product (the others: group_gemm) */
	int64_t panels, rows_per_block;
	int64_t chunk; /* column panels made ready at a time (TAP_CHUNK_BYTES) */
	int threads;
	atomic_uchar state[TAP_BLOCKS]; /* 0 free, 1 being copied, 2 done */
} tap_job;

/* Group gi's product of g (group 0's of a batch item): its weights, its
 * channels of V (the tap path's padded copy, or the input) and its output
 * channels. */
static gc_pk_gemm group_gemm(const conv_state *st, const gc_pk_gemm *g, int64_t gi)
{
	int64_t v_group = st->tap_rows ? st->w.stride[2] * st->tap_h * st->tap_len : g->ldv;
	gc_pk_gemm r = *g;
	r.s = st->row_w + gi * gc_pk_s_floats(st->mg, st->kdim);
	r.v = g->v + gi * st->cg * v_group;
	r.c = g->c + gi * st->mg * st->out_sp;
	r.m0 = gi * st->mg;
	return r;
}

/* Makes the padded rows panels [p0, p1) read ready: copies those of their
 * blocks that no thread has begun, then waits for the others. */
static void tap_ready(tap_job *j, int64_t p0, int64_t p1)
{
	const conv_state *st = j->st;
	const gc_nn_window *w = &st->w;
	int64_t oh0, oh1, per = j->rows_per_block;
	if (st->tap_input) /* V is the input */
		return;
	gc_pk_gemm_panel_rows(j->g, p0, p1, &oh0, &oh1);
	/* the padded rows output rows [oh0, oh1] read; panels across the rows
	 * read the columns after a row's end (not stored) from the start of
	 * the next padded row: it is made ready too, or another thread could
	 * be writing it (a data race, though no sum takes those columns) */
	int64_t r0 = oh0 * w->stride[1], r1 = oh1 * w->stride[1] + (w->k[1] - 1) * w->dil[1] + 1;
	if (st->tap_wrap && r1 < st->tap_h)
		r1++;
	int b0 = (int)(r0 / per), b1 = (int)((r1 - 1) / per) + 1;
	for (int b = b0; b < b1; b++) {
		unsigned char free_ = 0;
		if (atomic_load_explicit(&j->state[b], memory_order_relaxed) != 0 ||
		    !atomic_compare_exchange_strong(&j->state[b], &free_, 1))
			continue;
		int64_t e = (b + 1) * per < st->tap_h ? (b + 1) * per : st->tap_h;
		tap_pad_rows(st, j->x, j->xq, b * per, e);
		atomic_store_explicit(&j->state[b], 2, memory_order_release);
	}
	for (int b = b0; b < b1; b++)
		gc_nn_par_wait_byte(&j->state[b], 2);
}

/* Bytes of padded rows a part makes ready before it computes the column
 * panels that read them (tap_job.chunk): they are then still in L2 when
 * the tiles read them (inception_v3's 32 -> 64 3x3 at 147x147 at one
 * thread: the copy of all of them first, 2.8 MB, took 7 % of its time;
 * by 8 panels its 3 -> 32 3x3 s2 took 4 % longer, by the calls). */
#define TAP_CHUNK_BYTES (256 << 10)

static void tap_part(void *arg, int part, int parts, int slot)
{
	tap_job *j = arg;
	const conv_state *st = j->st;
	int64_t p0, p1;
	gc_nn_guided_range(j->panels, j->threads, 1, part, parts, &p0, &p1);
	for (int64_t q0 = p0; q0 < p1; q0 += j->chunk) {
		int64_t q1 = p1 - q0 < j->chunk ? p1 : q0 + j->chunk;
		tap_ready(j, q0, q1);
		for (int64_t gi = 0; gi < st->g; gi++) {
			gc_pk_gemm g = group_gemm(st, j->g, gi);
			gc_pk_gemm_run_slot(&g, q0, q1, slot);
		}
	}
}

/* One batch item x by the tap path: g is group 0's product (V at xq). */
static void tap_run(const conv_state *st, const float *x, float *xq, const gc_pk_gemm *g,
		    int threads)
{
	tap_job j = {.st = st, .x = x, .xq = xq, .g = g, .panels = gc_pk_gemm_panels(g)};
	double cost = (double)st->g * gc_pk_gemm_cost(st->mg, st->out_sp, st->kdim) +
		      (double)conv_tap_copy(st);
	int t = gc_nn_par_threads(threads, cost);
	j.threads = t < GC_PK_GEMM_SLOTS ? t : GC_PK_GEMM_SLOTS;
	int64_t blocks = st->tap_h < TAP_BLOCKS ? st->tap_h : TAP_BLOCKS;
	j.rows_per_block = (st->tap_h + blocks - 1) / blocks;
	/* the padded rows' bytes an output row reads anew */
	int64_t row_bytes = st->c * st->w.stride[2] * st->tap_len * st->w.stride[1] * 4;
	int64_t rows = TAP_CHUNK_BYTES / row_bytes > 1 ? TAP_CHUNK_BYTES / row_bytes : 1;
	j.chunk = st->tap_input ? j.panels : (rows * j.panels + st->w.out[1] - 1) / st->w.out[1];
	for (int b = 0; b < TAP_BLOCKS; b++)
		atomic_init(&j.state[b], 0);
	gc_nn_parallel(j.threads, gc_nn_guided_parts(j.panels, j.threads, 1), tap_part, &j);
}

/* The pixels a strided 1x1 convolution reads of its input x, into xq as a
 * stride-1 one's input (n c x out_sp), by (channel, output row) split over
 * the threads. Gathering the row GEMM's V panels from x instead streamed
 * all of S once a panel (blocks of S kept in L2 need plain V:
 * s_block_rows), and the channel kernel's tiles read input rows a stride
 * apart: 1.1-1.5x the time of this copy and the stride-1 kernel
 * (resnet50's 1x1 s2 to 28x28 and 14x14, regnet's to 56x56). */
typedef struct copy_job {
	const conv_state *st;
	const float *x;
	float *xq;
} copy_job;

static void take_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const copy_job *j = arg;
	const conv_state *st = j->st;
	const gc_nn_window *w = &st->w;
	int64_t rows = w->out[0] * w->out[1], lo, hi;
	gc_nn_part_range(st->n * st->c * rows, part, parts, &lo, &hi);
	for (int64_t q = lo; q < hi; q++) {
		int64_t ci = q / rows, od = q % rows / w->out[1], oh = q % w->out[1];
		const float *src =
		    j->x +
		    ((ci * w->in[0] + od * w->stride[0]) * w->in[1] + oh * w->stride[1]) * w->in[2];
		gc_pk_split(src, w->stride[2], w->out[2], 1, j->xq + q * w->out[2], 0);
	}
}

static void take(const conv_state *st, const float *x, float *xq, int threads)
{
	copy_job j = {st, x, xq};
	int t = gc_nn_par_threads(threads, (double)(st->n * st->c * st->out_sp));
	gc_nn_run_parts(t, st->n * st->c * st->w.out[0] * st->w.out[1], take_part, &j);
}

static int conv_fast_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const conv_state *st = n->state;
	const float *x = in[0]->data;
	const float *bias = st->has_bias ? (const float *)in[2]->data : NULL;
	const float *res = st->has_res ? (const float *)in[3]->data : NULL;
	float *y = out[0]->data;
	if (st->take) {
		float *xq = (float *)(void *)((char *)k->scratch + st->take_off);
		take(st, x, xq, k->threads);
		x = xq;
	}
	if (st->fast == FAST_DW) {
		gc_pk_dw_run(&st->dw, x, st->live_w ? st->live_w : in[1]->data, bias, y,
			     k->scratch, k->threads);
		if (st->post_res)
			residual_f32(st, res, y);
	} else if (st->fast == FAST_LIVE) {
		gc_live_conv_run(&st->live, x, bias, y, k->scratch, k->threads);
	} else if (st->fast == FAST_CHAN) {
		gc_pk_conv_run(&st->pk, x, bias, res, y, k->scratch, k->threads);
	} else {
		gc_pk_gemm g = {.m = st->mg,
				.n = st->out_sp,
				.k = st->kdim,
				.ldv = st->take ? st->out_sp : st->in_sp,
				.ldc = st->out_sp,
				.v_buf = st->pre_packed || st->v_copy ? (float *)k->scratch : NULL,
				.v_rows = st->tap_rows,
				.v_ow = st->tap_rows ? st->w.out[2] : 0,
				.v_oh_ld = st->w.stride[1] * st->tap_len,
				.v_wrap = st->tap_wrap,
				.split_m = st->split_m};
		float *xq = k->scratch;
		if (st->tap_rows && !st->tap_direct)
			g.v_buf = (float *)(void *)((char *)k->scratch + st->tap_buf);
		if (st->pre_packed) {
			g.v_a = in[4]->data;
			g.v_b = in[5]->data;
			g.v_relu = st->pre == 2;
		}
		gc_pk_epi_init(&g.epi, &st->act);
		g.epi.c = bias;
		g.epi.c_sm = 1;
		g.epi.r_sm = st->out_sp;
		for (int64_t b = 0; b < st->n; b++) {
			g.epi.r = res ? res + b * st->m * st->out_sp : NULL;
			g.s = st->row_w;
			g.v = !st->tap_rows   ? x + b * st->c * g.ldv
			      : st->tap_input ? x + b * st->c * st->in_sp
					      : xq;
			g.c = y + b * st->m * st->out_sp;
			g.m0 = 0;
			if (st->tap_rows) {
				tap_run(st, x + b * st->c * st->in_sp, xq, &g, k->threads);
				continue;
			}
			for (int64_t gi = 0; gi < st->g; gi++) {
				gc_pk_gemm gg = group_gemm(st, &g, gi);
				gc_pk_gemm_par(&gg, k->threads);
			}
		}
	}
	return 0;
}

/* Most scratch the packed kernels take (a padded or gathered input). */
#define CONV_FAST_SCRATCH_MAX ((uint64_t)256 << 20)

/*
 * Picks a packed kernel for a float32 Conv when this CPU has them: returns 1
 * with n->run and n->scratch_bytes set, 0 to leave the node to the
 * reference path, or an error.
 */
/* one: a 1x1 convolution without pads (the row GEMM may take it). */
static int conv_fast_prepare(gc_kctx *k, gc_node *n, conv_state *st, gc_tensor *const *in,
			     int one)
{
	const gc_nn_window *w = &st->w;
	const float *wt = st->live_w ? st->live_w : gc_kfixed(k, in, 1);
	/* the live taps' packed weights do not give W back */
	bool replaces = !st->live_w;
	if (in[0]->dtype != GC_DTYPE_FLOAT || !gc_pk_usable())
		return 0;
	/* depthwise: the weights are read as they are; a residual is added
	 * after it (residual_f32), then the activation */
	gc_nn_act none = {.kind = GC_NN_ACT_NONE};
	if (st->cg == 1 &&
	    (gc_pk_dw_plan(&st->dw, st->n, st->c, st->mg, w->in, w->k, w->stride, w->dil,
			   w->pad_lo, w->out, st->has_res ? &none : &st->act) ||
	     (uint64_t)gc_pk_dw_scratch(&st->dw) * 4 > CONV_FAST_SCRATCH_MAX)) {
		/* one input channel in all (a 1-D convolution of audio with a
		 * long kernel) is an ordinary convolution: the kernels below */
		if (st->g > 1)
			return 0;
	} else if (st->cg == 1) {
		st->fast = FAST_DW;
		st->post_res = st->has_res;
		st->dw.by_rows = gc_attr_i(k, "_gc_split_rows", 0) != 0;
		if (gc_kok(k))
			return gc_kok(k);
		if (gc_pk_dw_pack(&st->dw, wt))
			return gc_kerr(k, GC_ENOMEM, "out of memory packing the weights");
		n->scratch_bytes = gc_nn_align((uint64_t)gc_pk_dw_scratch(&st->dw) * 4);
		n->run = conv_fast_run;
		n->state_free = conv_state_free;
		return 1;
	}
	/* weights not known before running, nor packed in the program file:
	 * nothing to pack */
	if (!wt && !k->n_stored)
		return 0;
	/* 1x1 unpadded: the row GEMM reads the input as V; at larger strides
	 * both kernels read a copy of just the pixels it takes (take), as a
	 * stride-1 one's input (unless that copy is too large) */
	int strided = w->stride[0] * w->stride[1] * w->stride[2] > 1;
	/* (sizes from a file may overflow the product: no take then) */
	int64_t take_elems;
	bool take_fits = !__builtin_mul_overflow(st->n, st->c, &take_elems) &&
			 !__builtin_mul_overflow(take_elems, st->out_sp, &take_elems) &&
			 (uint64_t)take_elems <= CONV_FAST_SCRATCH_MAX / 4;
	uint64_t take_bytes = take_fits ? gc_nn_align((uint64_t)take_elems * 4) : 0;
	int flat = one && (!strided || take_fits);
	int64_t rows, width;
	gc_pk_conv_rows(w->k, w->stride, w->out, flat, &rows, &width);
	int64_t taps = w->k[1] * w->k[2]; /* a plane's, as the channel kernel counts them */
	double chan = (double)st->g * gc_pk_conv_cost(st->mg, st->kdim, taps, rows, width);
	double row = (double)st->g * gc_pk_gemm_cost(st->mg, st->out_sp, st->kdim);
	/* a 1-D or 2-D convolution: the row GEMM over its im2col, whose
	 * panels are copied from a padded copy of the input (conv_tap_copy;
	 * none without pads at stride 1); estimated (and the estimate's
	 * margin below measured)
	 * as when it went output row by output row, each row's last panel
	 * part empty */
	int64_t tap_floats = one ? 0 : conv_tap_floats(st);
	int64_t tap_copy = tap_floats ? conv_tap_copy(st) : 0;
	double tap_row =
	    gc_pk_gemm_cost(st->mg, w->out[2], st->kdim) +
	    (double)(st->kdim * ((w->out[2] + GC_PK_NR - 1) / GC_PK_NR) * GC_PK_NR / 16);
	double tap = (double)st->g * (double)w->out[1] * tap_row + (double)tap_copy;
	char key[96];
	void *fill;
	/* the row GEMM's V panel buffers (gc_pk_gemm.v_buf): the tap path's
	 * and a fused input affine's */
	uint64_t vbuf =
	    (uint64_t)GC_PK_GEMM_SLOTS * (uint64_t)gc_pk_v_floats(st->kdim, GC_PK_NR) * 4;
	/* a fused input affine goes with the row GEMM's copy of V's panels;
	 * the channel kernel takes a copy of the input transformed first
	 * (conv_pre_wrap). (Weighing that pass against the row GEMM's estimate
	 * took the row GEMM at 14x14, 1.1x slower than both passes there.) */
	int pre = st->pre && !strided && st->g == 1 && vbuf <= CONV_FAST_SCRATCH_MAX;
	/* Measured against the channel kernel at one thread (single-node
	 * models, graphcc run), the row GEMM by output row took 0.75-0.81x
	 * its time at stride 1 where its estimate was 0.57-0.71x the channel
	 * kernel's (vgg11's and unet's first layers: K = 27, the channel
	 * kernel's transposes cost as much as its FMAs; regnet's 8-channel
	 * groups at 28x28), 1.0-1.04x at 0.79x and above (resnet's 7x7 s2
	 * stem, 1-D 3-tap ones): it goes by estimates 1.3x its own. Not at
	 * stride 2 (1.3x slower at 0.55-0.7x: the phase copy, element by
	 * element, since split by lane permutes at strides 2 and 4) nor on
	 * rows of one vector (14 wide: 1.2x slower). A 1-D one at strides
	 * above 2, which the channel kernel does not take, always: 0.77x
	 * im2col + OpenBLAS (audio1d's first layer). A 2-D first layer (1-3
	 * input channels, rows above one vector) at strides 2-4 too: in the
	 * whole model at one thread inception_v3's 3x3 s2 took 0.71x the
	 * channel kernel's time, regnet's 0.9x, alexnet's 11x11 s4 0.71x,
	 * resnet50's 7x7 s2 0.98x (single-node models' on-CPU time: 0.56x,
	 * 0.81x, 0.68x, 0.92x; inception's and regnet's 0.7x at two threads,
	 * where the channel kernel gained nothing from the second); with 16
	 * channels a group (regnet's 3x3 s2 g2) 1.3x. */
	uint64_t tap_bytes = gc_nn_align((uint64_t)tap_floats * 4);
	int first = st->cg <= 3 && st->g == 1 && w->stride[2] > 1 && w->stride[2] <= 4 &&
		    w->out[1] > 1;
	/* The row GEMM with its panels run on across the rows (conv_wrap_cols),
	 * reading the input in place when that is the padded copy. Measured
	 * against the channel kernel at one thread (single-node models,
	 * medians of graphcc run), it took 0.82x its time for inception_v3's
	 * 32 -> 32 3x3 at 149x149 (no pads: no copy, and the channel
	 * kernel's transposes ~6 % of its time), 0.98x for its 32 -> 64
	 * with pads, 0.84x for 8 -> 16 at 96x96: estimates 0.96x, 0.99x and
	 * 0.81x. Where k is deeper it is slower than its estimate, its tiles
	 * reading the taps from L2 (0.99-1.04x at k 576-720 estimated at
	 * 1.0-1.04x, 1.07-1.2x at k 864-1440 estimated at 1.06-1.15x), and in
	 * groups of 16 channels (1.0-1.08x at 0.96-1.0x): it goes by its
	 * estimate WRAP_MARGIN x, without groups. */
	int64_t wrap_cols = tap_floats ? conv_wrap_cols(st) : 0;
	bool tap_input = tap_floats && conv_tap_input(st);
	double wrap = (double)st->g * gc_pk_gemm_cost(st->mg, wrap_cols, st->kdim) + (double)tap_copy;
	int wrap_wins = wrap_cols && st->g == 1 && wrap * WRAP_MARGIN < chan;
	int tap_wins = w->out[2] > 16 &&
		       ((w->stride[2] == 1 && tap * 1.3 < chan) || first || wrap_wins);
	int by_taps = tap_floats > 0 && (tap_wins || (w->stride[2] > 2 && w->out[1] == 1)) &&
		      tap_bytes + gc_nn_align(vbuf) <= CONV_FAST_SCRATCH_MAX;
	if (by_taps || (flat && row < chan && (!pre || vbuf <= CONV_FAST_SCRATCH_MAX))) {
		int64_t per = gc_pk_s_floats(st->mg, st->kdim);
		snprintf(key, sizeof key, "pk-s1 %" PRId64 " %" PRId64 " %" PRId64, st->g, st->mg,
			 st->kdim);
		st->row_w = gc_kpacked(k, n, in, 1, key, (uint64_t)(per * st->g) * sizeof(float),
				       replaces, &fill);
		if (!st->row_w)
			return gc_kok(k);
		for (int64_t gi = 0; fill && gi < st->g; gi++)
			gc_pk_pack_s(wt + gi * st->mg * st->kdim, st->kdim, 1, st->mg, st->kdim,
				     (float *)fill + gi * per);
		st->fast = FAST_ROW;
		n->state_free = conv_state_free;
		n->run = conv_fast_run;
		if (by_taps) {
			if (!(st->tap_rows = conv_taps(st)))
				return gc_kerr(k, GC_ENOMEM, "out of memory planning the convolution");
			st->tap_input = tap_input;
			st->tap_buf = tap_input ? 0 : tap_bytes;
			/* (where the rows won: across them by WRAP_MARGIN
			 * too, as vgg11's 3 -> 64 at 224x224 was 1.1x slower
			 * at 0.995x, k 27: its stores, row-aligned by rows) */
			st->tap_wrap = wrap_wins || (wrap_cols && wrap * WRAP_MARGIN < tap);
			st->tap_direct = st->tap_wrap || conv_tap_direct(st);
			n->scratch_bytes = st->tap_buf + (st->tap_direct ? 0 : gc_nn_align(vbuf));
			return 1;
		}
		st->take = strided;
		st->pre_packed = pre;
		st->v_copy = !strided && gc_pk_channels_crowd(st->in_sp, st->kdim);
		n->scratch_bytes =
		    strided ? take_bytes : pre || st->v_copy ? gc_nn_align(vbuf) : 0;
		return 1;
	}
	static const int64_t unit[3] = {1, 1, 1};
	st->take = flat && strided;
	int rc = gc_pk_conv_plan(&st->pk, st->n, st->c, st->m, st->g, st->take ? w->out : w->in,
				 w->k, st->take ? unit : w->stride, w->dil, w->pad_lo, w->out,
				 &st->act, (int64_t)(CONV_FAST_SCRATCH_MAX / 4));
	if (rc < 0)
		return gc_kerr(k, GC_ENOMEM, "out of memory planning the convolution");
	if (rc) /* (a padded copy too large among others: im2col tiles instead) */
		return 0;
	snprintf(key, sizeof key, "pk-cv2 %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64,
		 st->g, st->mg, st->kdim, st->pk.kr, st->pk.kc);
	st->pk.w = gc_kpacked(k, n, in, 1, key,
			      (uint64_t)(st->pk.group_floats * st->g) * sizeof(float), replaces,
			      &fill);
	if (!st->pk.w) {
		gc_pk_conv_free(&st->pk);
		return gc_kok(k);
	}
	if (fill)
		gc_pk_conv_pack(wt, st->g, st->mg, st->kdim, st->pk.kr, st->pk.kc, fill);
	st->fast = FAST_CHAN;
	n->scratch_bytes = gc_nn_align((uint64_t)gc_pk_conv_scratch(&st->pk) * 4);
	st->take_off = n->scratch_bytes;
	n->scratch_bytes += st->take ? take_bytes : 0;
	n->run = conv_fast_run;
	n->state_free = conv_state_free;
	return 1;
}

/*
 * A 2-D convolution whose taps read padding at many outputs by regions of
 * its output (conv-live.h): 1 with n->run set, 0 when that does not suit,
 * or an error.
 */
static int conv_fast_regions(gc_kctx *k, gc_node *n, conv_state *st, gc_tensor *const *in,
			     const float *wt)
{
	if (st->g != 1 || st->has_res || st->pre)
		return 0;
	int rc = gc_live_conv_plan(&st->live, &st->w, st->n, st->c, st->m, &st->act);
	if (rc)
		return rc < 0 ? gc_kerr(k, GC_ENOMEM, "out of memory planning the convolution") : 0;
	if ((uint64_t)gc_live_conv_scratch(&st->live) * 4 > CONV_FAST_SCRATCH_MAX) {
		gc_live_conv_free(&st->live);
		return 0;
	}
	char key[96];
	void *fill;
	snprintf(key, sizeof key, "pk-live1 %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, st->m,
		 st->c, st->w.k[1], st->w.k[2]);
	/* not replacing W: the regions' weights do not give it back */
	st->live.w = gc_kpacked(k, n, in, 1, key, (uint64_t)st->live.w_floats * sizeof(float),
				false, &fill);
	if (!st->live.w || (fill && gc_live_conv_pack(&st->live, &st->w, wt, fill))) {
		gc_live_conv_free(&st->live);
		return st->live.w ? gc_kerr(k, GC_ENOMEM, "out of memory packing the weights")
				  : gc_kok(k);
	}
	st->fast = FAST_LIVE;
	n->scratch_bytes = gc_nn_align((uint64_t)gc_live_conv_scratch(&st->live) * 4);
	n->run = conv_fast_run;
	n->state_free = conv_state_free;
	return 1;
}

/*
 * conv_fast_prepare (or by regions, conv_fast_regions) on the live taps of
 * a kernel that has taps reading only padding (conv-live.c), with a copy
 * of their weights; on the whole kernel otherwise, and for the reference
 * path when no packed kernel takes it.
 */
static int conv_fast_live(gc_kctx *k, gc_node *n, conv_state *st, gc_tensor *const *in, int one)
{
	gc_nn_window whole = st->w, live;
	int64_t first[3], kk = st->kk, rows = st->m * st->cg;
	const float *wt = gc_kfixed(k, in, 1);
	if (!wt || in[0]->dtype != GC_DTYPE_FLOAT || !gc_pk_usable())
		return conv_fast_prepare(k, n, st, in, one);
	if (gc_nn_window_live(&whole, &live, first)) {
		st->kk = live.k[0] * live.k[1] * live.k[2];
		if (!(st->live_w = gc_malloc((size_t)(rows * st->kk) * sizeof(float))))
			return gc_kerr(k, GC_ENOMEM, "out of memory copying the weights");
		gc_nn_window_live_weights(&whole, &live, first, rows, wt, st->live_w);
		wt = st->live_w;
		st->w = live;
		st->kdim = st->cg * st->kk;
		one = st->kk == 1;
		for (int d = 0; d < GC_NN_MAX_SPATIAL; d++)
			one &= !live.pad_lo[d] && !live.pad_hi[d];
	}
	int fast = conv_fast_regions(k, n, st, in, wt);
	if (!fast)
		fast = conv_fast_prepare(k, n, st, in, one);
	if (fast <= 0 && st->live_w) {
		st->w = whole;
		st->kk = kk;
		st->kdim = st->cg * kk;
		gc_free(st->live_w);
		st->live_w = NULL;
	}
	return fast;
}

/*
 * Input 3, a residual that lib/pass-residual.c fused (marked by the
 * graphcc-internal attribute _gc_residual = 1; ONNX's Conv has three
 * inputs): y = act(conv + bias + z), z of the output's type. z of the
 * convolution's shape is added in the kernels' epilogue; another shape is
 * broadcast as Add does (y takes the broadcast shape) on the reference
 * path. 0, or an error on k.
 */
static int conv_residual(gc_kctx *k, conv_state *st, const gc_tensor *z, gc_tensor *y)
{
	int64_t mark = gc_attr_i(k, "_gc_residual", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (mark != 1)
		return gc_kerr(k, GC_EINVAL, "Conv takes 2 or 3 inputs (X, W, B), not 4");
	if (!z)
		return gc_kerr(k, GC_EINVAL, "the fused residual (input 3) is absent");
	if (z->dtype != y->dtype)
		return gc_kerr(k, GC_EINVAL, "the fused residual (input 3) is %s but the output %s",
			       gc_dtype_name(z->dtype), gc_dtype_name(y->dtype));
	st->has_res = 1;
	st->res_act = st->act;
	if (z->rank == y->rank &&
	    !memcmp(z->dims, y->dims, (size_t)y->rank * sizeof y->dims[0]))
		return 0;
	/* (the output first: input 3 is the one a message names) */
	const gc_tensor *ts[4] = {y, NULL, NULL, z};
	int32_t R;
	int rc = gc_broadcast_shapes(k, 4, ts, &R, st->bdims);
	if (rc)
		return rc;
	gc_broadcast_strides(y, R, st->bdims, st->ba);
	gc_broadcast_strides(z, R, st->bdims, st->bz);
	st->bcast = 1;
	st->brank = R;
	st->own_buf = R != y->rank ||
		      memcmp(st->bdims, y->dims, (size_t)R * sizeof y->dims[0]) != 0;
	gc_set_shape(y, y->dtype, R, st->bdims);
	return 0;
}

/*
 * Inputs 4 and 5, a[c] and b[c] of a BatchNormalization [and Relu] that
 * lib/pass-batchnorm.c moved in before the convolution (marked by the
 * graphcc-internal attribute _gc_input_affine: 1 the affine, 2 then Relu).
 * 0, or an error on k.
 */
static int conv_input_affine(gc_kctx *k, conv_state *st, gc_tensor *const *in)
{
	int64_t mark = gc_attr_i(k, "_gc_input_affine", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (mark != 1 && mark != 2)
		return gc_kerr(k, GC_EINVAL, "Conv takes 2 or 3 inputs (X, W, B), not %d",
			       k->node->n_in);
	if (k->node->n_in != 6)
		return gc_kerr(k, GC_EINVAL,
			       "the fused input affine is inputs 4 and 5, but Conv has %d inputs",
			       k->node->n_in);
	for (int i = 4; i < 6; i++) {
		const gc_tensor *t = in[i];
		if (!t || t->dtype != in[0]->dtype || t->rank != 1 || t->dims[0] != st->c ||
		    (t->dtype != GC_DTYPE_FLOAT && t->dtype != GC_DTYPE_DOUBLE))
			return gc_kerr(k, GC_EINVAL,
				       "the fused input affine (inputs 4 and 5) needs two [%" PRId64
				       "] tensors of X's type, float32 or float64",
				       st->c);
	}
	st->pre = (int)mark;
	return 0;
}

static int conv_pre_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const conv_state *st = n->state;
	gc_tensor xt = *in[0];
	xt.data = (char *)k->scratch + st->pre_off;
	gc_nn_channel_affine(k, xt.dtype, st->n, st->c, st->in_sp, in[0]->data, in[4]->data,
			     in[5]->data, st->pre == 2, xt.data);
	gc_tensor *ins[6] = {&xt, in[1], in[2], in[3], in[4], in[5]};
	return st->pre_inner(k, n, ins, out);
}

/* A kernel that does not apply the input affine itself runs on a copy of
 * the input that conv_pre_run transforms first. */
static int conv_pre_wrap(gc_kctx *k, gc_node *n, conv_state *st, const gc_tensor *x)
{
	if (!st->pre || st->pre_packed || gc_kok(k))
		return gc_kok(k);
	size_t es = x->dtype == GC_DTYPE_DOUBLE ? 8 : 4;
	st->pre_inner = n->run;
	st->pre_off = gc_nn_align(n->scratch_bytes);
	n->scratch_bytes = st->pre_off + gc_nn_align((uint64_t)gc_tensor_numel(x) * es);
	n->run = conv_pre_run;
	return 0;
}

static int conv_res_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const conv_state *st = n->state;
	if (in[3]->data != out[0]->data)
		return st->res_inner(k, n, in, out);
	gc_tensor r = *in[3];
	r.data = (char *)k->scratch + st->res_off;
	memcpy(r.data, in[3]->data, (size_t)gc_tensor_nbytes(in[3]));
	gc_tensor *ins[6] = {in[0], in[1], in[2], &r, n->n_in > 4 ? in[4] : NULL,
			     n->n_in > 5 ? in[5] : NULL};
	return st->res_inner(k, n, ins, out);
}

/*
 * The output may take the fused residual's bytes (input 3, where it dies
 * here: liveness.h), decided on the shapes alone, so that a program file
 * planned with one kernel runs with any (the arena's layout is checked as
 * the file plans it). The channel kernel, the row GEMM without K blocks
 * (gc_pk_gemm_c_once) and the float16 path (which converts it first) read
 * each element of the residual before they write that element of the
 * output and write nothing there before; the others (the reference and
 * depthwise paths add it after the product, the row GEMM's K blocks keep
 * their sums in the output) run on a copy of it that conv_res_run makes in
 * scratch when the two are one. In place, the residual's lines are written
 * where they were just read, not into a second tensor's, which the stores
 * first had to fetch: resnet50 at batch 4, two threads, its 64 -> 256 1x1s
 * at 56x56 took 1450, 1350 and 1380 us, not 1890, 1580 and 1500 (ONNX
 * Runtime: 1390, 1280, 1270), its 1024-channel ones at 14x14 5-10 % less;
 * the model 0.7 and 2.3 % faster at two threads (two paired runs), the same
 * at one; resnet18 and resnet50 at batch 1 within 1 %.
 */
static int conv_res_wrap(gc_kctx *k, gc_node *n, conv_state *st, const gc_tensor *x,
			 const gc_tensor *y)
{
	if (!st->has_res || st->bcast || gc_kok(k))
		return gc_kok(k);
	n->inplace_ok = true;
	n->inplace_in = 3;
	if (st->fast == FAST_CHAN || (st->fast == FAST_ROW && gc_pk_gemm_c_once(st->kdim)) ||
	    gc_nn_is_half(x->dtype))
		return 0;
	st->res_inner = n->run;
	st->res_off = gc_nn_align(n->scratch_bytes);
	n->scratch_bytes = st->res_off + gc_nn_align(gc_tensor_nbytes(y));
	n->run = conv_res_run;
	return 0;
}

/* The wrappers around the chosen kernel's run (input affine, residual in
 * place): 0, or the error on k. */
static int conv_wrap(gc_kctx *k, gc_node *n, conv_state *st, const gc_tensor *x,
		     const gc_tensor *y)
{
	int rc = conv_pre_wrap(k, n, st, x);
	return rc ? rc : conv_res_wrap(k, n, st, x, y);
}

int gc_nn_conv_types(gc_kctx *k, const char *op, const gc_tensor *x, const gc_tensor *wt,
		     const gc_tensor *b)
{
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input X has type %s; %s takes float16, float32 or float64",
			       gc_dtype_name(x->dtype), op);
	if (wt->dtype != x->dtype || (b && b->dtype != x->dtype))
		return gc_kerr(k, GC_EINVAL, "inputs differ in type: X %s, W %s%s%s",
			       gc_dtype_name(x->dtype), gc_dtype_name(wt->dtype), b ? ", B " : "",
			       b ? gc_dtype_name(b->dtype) : "");
	return 0;
}

int gc_prepare_Conv(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *wt = in[1], *b = n->n_in > 2 ? in[2] : NULL;
	char s1[128], s2[128];
	if (gc_nn_conv_types(k, "Conv", x, wt, b))
		return gc_kok(k);
	if (x->rank < 3 || x->rank > 2 + GC_NN_MAX_SPATIAL)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input X has shape %s; graphcc supports 1-D to 3-D convolution "
			       "(rank 3 to 5)",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	if (wt->rank != x->rank)
		return gc_kerr(k, GC_EINVAL,
			       "input W has shape %s but X has shape %s: ranks differ",
			       gc_shape_str(wt->dims, wt->rank, s1, sizeof s1),
			       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	int64_t group = gc_attr_i(k, "group", 1);
	if (gc_kok(k))
		return gc_kok(k);
	int64_t c = x->dims[1], m = wt->dims[0];
	if (group < 1 || c % group)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'group' = %" PRId64
			       " must be >= 1 and divide the %" PRId64 " input channels of X",
			       group, c);
	if (wt->dims[1] * group != c)
		return gc_kerr(k, GC_EINVAL,
			       "X %s has %" PRId64 " channels but W %s expects %" PRId64
			       " (W dim 1 = %" PRId64 " x group %" PRId64 ")",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1), c,
			       gc_shape_str(wt->dims, wt->rank, s2, sizeof s2), wt->dims[1] * group,
			       wt->dims[1], group);
	if (m % group)
		return gc_kerr(k, GC_EINVAL,
			       "W has %" PRId64
			       " output channels, not a multiple of group %" PRId64,
			       m, group);
	if (b && (b->rank != 1 || b->dims[0] != m))
		return gc_kerr(k, GC_EINVAL, "input B has shape %s; expected [%" PRId64 "]",
			       gc_shape_str(b->dims, b->rank, s1, sizeof s1), m);
	conv_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	int32_t nsp = x->rank - 2;
	if (gc_nn_window_init(k, nsp, x->dims + 2, wt->dims + 2, 0, &st->w))
		return gc_kok(k);
	const gc_nn_window *w = &st->w;
	st->n = x->dims[0];
	st->c = c;
	st->m = m;
	st->g = group;
	st->cg = c / group;
	st->mg = m / group;
	st->has_bias = b != NULL;
	st->in_sp = w->in[0] * w->in[1] * w->in[2];
	st->out_sp = w->out[0] * w->out[1] * w->out[2];
	st->kk = w->k[0] * w->k[1] * w->k[2];
	st->kdim = st->cg * st->kk;
	if (gc_nn_act_init(k, x->dtype, &st->act))
		return gc_kok(k);
	int64_t dims[GC_MAX_RANK] = {st->n, m};
	for (int i = 0; i < nsp; i++)
		dims[2 + i] = w->out[GC_NN_MAX_SPATIAL - nsp + i];
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	/* input 3 may be absent only before a fused input affine's 4 and 5 */
	if (n->n_in > 3 && (in[3] || n->n_in == 4 || gc_attr_find(k->node, "_gc_residual")) &&
	    conv_residual(k, st, in[3], out[0]))
		return gc_kok(k);
	if (n->n_in > 4 && conv_input_affine(k, st, in))
		return gc_kok(k);
	st->split_m = gc_attr_i(k, "_gc_split_channels", 0) != 0;
	if (gc_kok(k))
		return gc_kok(k);

	int unit = 1, padded = 0;
	for (int d = 0; d < GC_NN_MAX_SPATIAL; d++) {
		unit &= w->k[d] == 1 && w->stride[d] == 1;
		padded |= w->pad_lo[d] || w->pad_hi[d];
	}
	uint64_t scratch = 0;
	size_t es = x->dtype == GC_DTYPE_DOUBLE ? 8 : 4;
	if (st->cg == 1 && w->in[0] == 1 && w->k[0] == 1 && w->out[0] == 1 &&
	    w->k[2] <= DW_MAX_KW) {
		st->kind = CONV_DEPTHWISE;
		if (w->stride[1] == w->stride[2] && w->k[1] * w->k[2] <= DW_MAX_TAPS)
			st->wide = dw_wide_plan(st, es, &scratch);
	} else if (unit && !padded) {
		st->kind = CONV_POINTWISE;
	} else {
		st->kind = CONV_IM2COL;
		int64_t rows = w->out[0] * w->out[1];
		uint64_t row_bytes = (uint64_t)st->kdim * (uint64_t)w->out[2] * es;
		int64_t tile = row_bytes ? (int64_t)(CONV_COL_MAX_BYTES / row_bytes) : rows;
		if (tile < 1)
			tile = 1;
		if (tile > rows)
			tile = rows;
		st->tile_rows = tile;
		scratch = gc_nn_align((uint64_t)tile * row_bytes);
	}
	if (st->kind != CONV_DEPTHWISE) {
		int64_t cols = st->kind == CONV_POINTWISE ? st->out_sp : st->tile_rows * w->out[2];
		if (st->mg > INT_MAX || st->kdim > INT_MAX || cols > INT_MAX ||
		    st->out_sp > INT_MAX || st->in_sp > INT_MAX)
			return gc_kerr(k, GC_ELIMIT, "convolution too large for BLAS int sizes");
		if (gc_nn_blas_ready(k))
			return gc_kok(k);
	}
	int one = !padded && w->k[0] * w->k[1] * w->k[2] == 1;
	int fast = st->bcast ? 0 : conv_fast_live(k, n, st, in, one);
	if (fast)
		return fast < 0 ? fast : conv_wrap(k, n, st, x, out[0]);
	if (st->has_res) { /* the reference paths add it after the product */
		memset(&st->act, 0, sizeof st->act);
		st->post_res = 1;
	}
	if (st->own_buf) { /* the convolution's output, before the broadcast */
		st->buf_off = scratch;
		scratch += gc_nn_align((uint64_t)(st->n * st->m * st->out_sp) * es);
	}
	if (gc_nn_is_half(x->dtype)) {
		int rc = gc_nn_half_setup(k, n, in, out, conv_run_f32, scratch);
		return rc ? rc : conv_res_wrap(k, n, st, x, out[0]);
	}
	n->scratch_bytes = scratch;
	n->run = x->dtype == GC_DTYPE_DOUBLE ? conv_run_f64 : conv_run_f32;
	return conv_wrap(k, n, st, x, out[0]);
}
