/*
 * The window walk pooling kernels share (pool.c's forward pools, grad.c's
 * pooling gradients): which taps of a window land inside the input, and a
 * loop over every output position of channels [c0, c1).
 */
#ifndef GC_POOL_IMPL_H
#define GC_POOL_IMPL_H

#include <stdint.h>

#include "nn.h"

/* Taps t in [*lo, *hi) of a k-tap window starting at `start` (dilation dl)
 * that land inside [0, n). */
static inline void gc_pool_taps(int64_t start, int64_t k, int64_t dl, int64_t n, int64_t *lo,
				int64_t *hi)
{
	int64_t l, h;
	if (dl == 1) { /* no divisions in the common case */
		l = start >= 0 ? 0 : -start;
		h = n - start;
	} else {
		l = start >= 0 ? 0 : (-start + dl - 1) / dl;
		h = n - 1 - start < 0 ? 0 : (n - 1 - start) / dl + 1;
	}
	if (h > k)
		h = k;
	if (l > h)
		l = h;
	*lo = l;
	*hi = h;
}

/* Every output position of channels [c0, c1) of window win (3 spatial
 * dims, D x H x W): in the body, ch, xo (the channel's first input
 * element), yo (the output element), s0..s2 (the window's start per dim)
 * and the taps [l0, h0), [l1, h1), [l2, h2) that land inside. */
#define GC_POOL_WINDOWS_BEGIN(win, in_sp, out_sp, c0, c1)                                          \
	const gc_nn_window *w = (win);                                                             \
	int64_t D = w->in[0], H = w->in[1], W = w->in[2];                                          \
	for (int64_t ch = (c0); ch < (c1); ch++) {                                                 \
		int64_t xo = ch * (in_sp), yo = ch * (out_sp);                                     \
		(void)xo;                                                                          \
		for (int64_t od = 0; od < w->out[0]; od++) {                                       \
			int64_t s0 = od * w->stride[0] - w->pad_lo[0], l0, h0;                     \
			gc_pool_taps(s0, w->k[0], w->dil[0], D, &l0, &h0);                         \
			for (int64_t oh = 0; oh < w->out[1]; oh++) {                               \
				int64_t s1 = oh * w->stride[1] - w->pad_lo[1], l1, h1;             \
				gc_pool_taps(s1, w->k[1], w->dil[1], H, &l1, &h1);                 \
				for (int64_t ow = 0; ow < w->out[2]; ow++, yo++) {                 \
					int64_t s2 = ow * w->stride[2] - w->pad_lo[2], l2, h2;     \
					gc_pool_taps(s2, w->k[2], w->dil[2], W, &l2, &h2);

/* Inside GC_POOL_WINDOWS_BEGIN/END: every tap of the window that lands
 * inside the input, as `v` (of type T) read from channel start xc. */
#define GC_POOL_TAPS_BEGIN(T, xc, v)                                                               \
	for (int64_t ta_ = l0; ta_ < h0; ta_++) {                                                  \
		int64_t ti0_ = s0 + ta_ * w->dil[0];                                               \
		for (int64_t tb_ = l1; tb_ < h1; tb_++) {                                          \
			const T *trow_ = (xc) + (ti0_ * H + s1 + tb_ * w->dil[1]) * W + s2;        \
			for (int64_t tc_ = l2; tc_ < h2; tc_++) {                                  \
				T v = trow_[tc_ * w->dil[2]];

#define GC_POOL_TAPS_END                                                                           \
	}                                                                                          \
	}                                                                                          \
	}

#define GC_POOL_WINDOWS_END                                                                        \
	}                                                                                          \
	}                                                                                          \
	}                                                                                          \
	}

#endif
