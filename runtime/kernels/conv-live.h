/*
 * A 2-D float32 convolution whose taps read padding at many outputs (a
 * dilation near the map's size: DeepLab's ASPP, 3x3 at dilation 12 on
 * 16x16), split into regions of the output with one set of live taps each:
 * every region is a product of the row GEMM (sgemm-pack.h) over the taps
 * it reads, its V gathered from the input as it goes, so that no product
 * with padding is computed and no padded copy made (conv-live.c).
 */
#ifndef GC_CONV_LIVE_H
#define GC_CONV_LIVE_H

#include "nn.h"
#include "sgemm-pack.h"

typedef struct gc_live_region {
	int64_t oh0, ow0, oh, ow; /* its output rectangle */
	int64_t a0, a1, b0, b1;	  /* its taps: rows [a0, a1), columns [b0, b1) */
	int64_t k, n;		  /* GEMM K (channel, tap rows) and N (oh ow pixels) */
	int64_t s_off, c_off;	  /* its packed weights, its product in scratch (floats) */
	int64_t panel0;		  /* its first column panel of 48 pixels, in all regions' */
	int32_t *rows, *cols;	  /* V's row and column offsets into an input item */
} gc_live_region;

typedef struct gc_live_conv {
	int64_t n, c, m, in_sp, out_sp, out_w;
	int nreg;
	int64_t panels; /* column panels of all regions' products */
	gc_live_region *reg;
	int32_t *offs;	   /* every region's rows and cols (owned) */
	int64_t w_floats;  /* packed weights, all regions */
	int64_t v_floats;  /* one V panel buffer */
	const float *w;	   /* packed weights (not owned) */
	double cost;	   /* estimated cycles of one item */
	gc_pk_epi epi;
} gc_live_conv;

/*
 * Plans w (2-D, n items of c channels to m, one group) by regions: 0, 1
 * when it does not suit (its live products are not well below the whole
 * convolution's, offsets too large, an output that reads no input), -1
 * out of memory.
 */
int gc_live_conv_plan(gc_live_conv *p, const gc_nn_window *w, int64_t n, int64_t c, int64_t m,
		      const gc_nn_act *act);
/* Packs weights wt ([m][c][kh][kw]) into dst (p->w_floats): 0, or -1 out
 * of memory. */
int gc_live_conv_pack(const gc_live_conv *p, const gc_nn_window *w, const float *wt, float *dst);
/* Scratch floats of a run on up to `threads` threads. */
int64_t gc_live_conv_scratch(const gc_live_conv *p);
/* y = act(conv(x, w) + bias), bias may be NULL. */
void gc_live_conv_run(const gc_live_conv *p, const float *x, const float *bias, float *y,
		      float *scratch, int threads);
void gc_live_conv_free(gc_live_conv *p);

#endif
