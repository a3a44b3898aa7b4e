/*
 * The live part of a convolution's kernel: the taps that read the input
 * for at least one output. A dilated convolution on a map smaller than its
 * dilation (DeepLab's ASPP: 3x3 at dilation 12-36 on 16x16) has taps that
 * read only padding at every output; dropped, the convolution is a smaller
 * one (a 1x1 of the centre weights at dilation >= 16 there), exact but for
 * a NaN or Inf weight on a dropped tap (0 x Inf), as ONNX Runtime has it.
 */
#include "nn.h"

#include <string.h>

/* Whether tap a (offset off = a dil - pad_lo) reads the input [0, in) at
 * some output o in [0, out), o s + off: the first o at or past 0 decides. */
static int tap_live(int64_t off, int64_t s, int64_t in, int64_t out)
{
	int64_t o = off >= 0 ? 0 : (-off + s - 1) / s;
	return o < out && o * s + off < in;
}

int gc_nn_window_live(const gc_nn_window *w, gc_nn_window *live, int64_t first[3])
{
	int cut = 0;
	*live = *w;
	for (int d = 0; d < GC_NN_MAX_SPATIAL; d++) {
		int64_t lo = 0, hi = w->k[d];
		while (lo < hi && !tap_live(lo * w->dil[d] - w->pad_lo[d], w->stride[d], w->in[d],
					    w->out[d]))
			lo++;
		while (hi > lo && !tap_live((hi - 1) * w->dil[d] - w->pad_lo[d], w->stride[d],
					    w->in[d], w->out[d]))
			hi--;
		/* every tap dead (pads wider than the map) or a cut that would
		 * start the windows inside the input (strides stepping over
		 * it): left as it is */
		if (lo == hi || lo * w->dil[d] > w->pad_lo[d])
			return 0;
		first[d] = lo;
		live->k[d] = hi - lo;
		live->pad_lo[d] = w->pad_lo[d] - lo * w->dil[d];
		if (live->k[d] == 1)
			live->dil[d] = 1;
		/* the pad the outputs still reach */
		int64_t reach = (w->out[d] - 1) * w->stride[d] + (live->k[d] - 1) * live->dil[d] +
				1 - w->in[d] - live->pad_lo[d];
		live->pad_hi[d] = reach > 0 ? reach : 0;
		cut |= live->k[d] != w->k[d];
	}
	return cut;
}

void gc_nn_window_live_weights(const gc_nn_window *w, const gc_nn_window *live,
			       const int64_t first[3], int64_t rows, const float *wt, float *dst)
{
	int64_t taps = w->k[0] * w->k[1] * w->k[2];
	for (int64_t r = 0; r < rows; r++)
		for (int64_t a = 0; a < live->k[0]; a++)
			for (int64_t b = 0; b < live->k[1]; b++) {
				const float *src = wt + r * taps +
						   ((first[0] + a) * w->k[1] + first[1] + b) * w->k[2] +
						   first[2];
				memcpy(dst, src, (size_t)live->k[2] * sizeof *dst);
				dst += live->k[2];
			}
}
