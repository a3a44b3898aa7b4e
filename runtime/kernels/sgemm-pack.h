/*
 * Packed single-precision kernels for AVX-512 CPUs, used by conv.c and
 * gemm.c in place of OpenBLAS where they are faster: the constant operand
 * (a Conv's or Gemm's weights) is packed once at prepare time into the node's
 * state, the other one is read as it is. All take the fused bias and
 * activation (nn-act.h) in the same pass, and split their work over threads
 * with nn-par.h (one thread: no other thread is involved).
 *
 * Two register tilings, because a Conv's output may be long or short along
 * its spatial axis, and a depthwise kernel:
 *
 *  - "row" GEMM (sgemm-pack.c): C[m][n] = S[m][k] V[k][n] with 8 rows of S
 *    broadcast against 48 columns of V held in 3 vectors; the vectors run
 *    along C's rows. S is packed in panels of 8 rows ([k][8]); V is either
 *    plain rows (a Conv 1x1's input) or packed in panels of 48 columns (a
 *    Gemm's weights). Best when n is long (large images, Gemm). Plain V's
 *    product is blocked for the caches: S in blocks of rows of 512 KiB,
 *    V's panels in blocks of 128 rows of k, the next tile's output rows and
 *    the next panel's rows prefetched (sgemm-pack.c).
 *  - "channel" direct convolution (conv-direct.c): the vectors run along
 *    output channels (32 or 16 at a time, weights packed [k][32]) and up to
 *    14 output pixels of one output row are broadcast from the input, found
 *    through a table of offsets (one per channel and tap), so that no im2col
 *    buffer is built; the 32 x 14 result is transposed into the NCHW output.
 *    Best for small images and any kernel size.
 *  - depthwise convolution (conv-dw.c): 16 channels at a time (their
 *    input transposed into [pixel][16]) for short rows and stride 2,
 *    vectors along the output row for long ones.
 *
 * Everything here needs AVX-512F/BW/DQ/VL and FMA: gc_pk_usable() says
 * whether this CPU has them (compiled with target attributes, so the build
 * runs on any x86-64). GRAPHCC_NN_REFERENCE=1 in the environment turns these
 * kernels off at prepare time (the OpenBLAS and plain-loop reference path
 * runs instead), for comparing results; the unit tests run both.
 */
#ifndef GC_K_SGEMM_PACK_H
#define GC_K_SGEMM_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "nn-act.h"

/* 1 when the kernels here can run on this CPU and GRAPHCC_NN_REFERENCE is
 * not set; read at prepare time. */
int gc_pk_usable(void);

/* What is done with each result v = sum S V before it is stored:
 * act(alpha * v + beta * c[m * c_sm + n * c_sn] + r[m * r_sm + n]) (no c
 * term when c is NULL, no r term when r is NULL; a stride of 0 broadcasts).
 * (m, n) count from the origin of the whole product, as given to the
 * kernels. r is a fused residual (a Conv's _gc_residual input); the row
 * GEMM reads it, the channel convolution takes its own (gc_pk_conv_run). */
typedef struct gc_pk_epi {
	const float *c;
	int64_t c_sm, c_sn;
	const float *r;
	int64_t r_sm;
	float alpha, beta;
	int act; /* GC_NN_ACT_* */
	float lo, hi, slope;
	float offset; /* HSWISH: clamp(slope v + offset, 0, 1) v */
} gc_pk_epi;

/* An epilogue from a fused activation, with alpha = 1 and no c. */
void gc_pk_epi_init(gc_pk_epi *e, const gc_nn_act *act);

/* ---- row GEMM ---- */

#define GC_PK_MR 8
#define GC_PK_NR 48

/* Floats of S packed: ceil(m / 8) panels of k x 8. */
int64_t gc_pk_s_floats(int64_t m, int64_t k);
/* Packs S[i][p] = a[i * rs + p * cs] for i < m, p < k (rows past m are 0). */
void gc_pk_pack_s(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *dst);
/* Floats of V packed: ceil(n / 48) panels of k x 48. */
int64_t gc_pk_v_floats(int64_t k, int64_t n);
/* Packs V[p][j] = b[p * rs + j * cs] for p < k, j < n (columns past n are 0). */
void gc_pk_pack_v(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, float *dst);
/* The first `phases` (1..s) phases of a row a stride s apart:
 * dst[r * ld + i] = src[s * i + r] for r < phases, i < n (n >= 1; reads
 * src[0, s (n - 1) + phases)); only where gc_pk_usable. */
void gc_pk_split(const float *src, int64_t s, int64_t n, int phases, float *dst, int64_t ld);
/* The same of the row of lo zeros, src[0, w) and zeros after:
 * dst[r * ld + i] = src[s * i + r - lo] where that is in [0, w), else 0
 * (reads only src[0, w)). */
void gc_pk_split_pad(const float *src, int64_t lo, int64_t w, int64_t s, int64_t n, int phases,
		     float *dst, int64_t ld);
/* v[i] = sigmoid(v[i]), tanh(v[i]) for i < n, 16 at a time without a
 * division: within 3 ulp of the value in double (test-vmath.c), NaN kept;
 * where gc_pk_usable (elsewhere vmath.h's scalar functions). */
void gc_pk_sigmoid(float *v, int64_t n);
void gc_pk_tanh(float *v, int64_t n);
/* The inverses (a program file may hold only the packed form): a as
 * m x k rows; b[p * rs + j * cs]. */
void gc_pk_unpack_s(const float *src, int64_t m, int64_t k, float *a);
void gc_pk_unpack_v(const float *src, int64_t rs, int64_t cs, int64_t k, int64_t n, float *b);

/* Per-thread buffers gc_pk_gemm.v_buf holds: threads past them are not
 * used when it is set. */
#define GC_PK_GEMM_SLOTS 8

typedef struct gc_pk_gemm {
	int64_t m, n, k;
	const float *s; /* packed */
	const float *v; /* packed panels (v_packed) or rows of ldv floats */
	int64_t ldv;
	int v_packed;
	/* Plain V only: when v_buf is set, each column panel is first copied
	 * into a contiguous k x 48 buffer of its thread's (GC_PK_GEMM_SLOTS
	 * of gc_pk_v_floats(k, GC_PK_NR) floats) and the tiles read it there.
	 * v_cols: column j of V is v[p * ldv + v_cols[j]] (a strided 1x1
	 * convolution's pixels, gathered into the buffer panel by panel, on
	 * the threads that use them; needs v_buf), NULL for v[p * ldv + j].
	 * (Copying a stride-1 V this way gained 0-7 %, and much where its
	 * rows crowd the caches' sets: conv.c's v_copy.)
	 * v_rows: row p of V starts at v + v_rows[p] rather than v + p * ldv
	 * (the (channel, tap) rows of a 1-D convolution over its padded
	 * input: an im2col never built; needs v_buf or v_ow), NULL: p * ldv. */
	float *v_buf;
	const int32_t *v_cols, *v_rows;
	/* With v_rows, v_ow > 0: V's columns are a 2-D convolution's output
	 * pixels, rows of v_ow, each row v_oh_ld floats after the last in
	 * every row of V (column j at v_rows[p] + j / v_ow * v_oh_ld +
	 * j % v_ow); 0: contiguous. Without v_buf the tiles read V there,
	 * each output row cut into its own column panels (the last one of a
	 * row part empty): gc_pk_gemm_run's p0, p1 count those panels. */
	int64_t v_ow, v_oh_ld;
	/* With v_ow and without v_buf, v_wrap: the panels run on across the
	 * rows instead, over every row of V as one row of v_oh_ld floats an
	 * output row: the v_oh_ld - v_ow columns after each output row's end
	 * are computed and not stored (needs v_ow >= 16 and v_oh_ld >= 16;
	 * the tiles then lose no part-empty panel at each row's end, and a
	 * stride-1 convolution without pads reads its input as V itself). */
	int v_wrap;
	/* Plain V with v_buf: row p of V is taken as v * v_a[p] + v_b[p], then
	 * clamped below at 0 when v_relu, as it is copied (a BatchNormalization
	 * and Relu before a 1x1 convolution, which lib/pass-batchnorm.c moved
	 * into it); v_a NULL: as it is. */
	const float *v_a, *v_b;
	int v_relu;
	/* gc_pk_gemm_par's split: by blocks of rows (output channels) first,
	 * a block a thread, where c is small enough to stay in the caches of
	 * the cores that wrote it (GC_PK_SPLIT_M_BYTES); 0: by column panels
	 * (pixels). A hint for a reader that splits c by rows the same way
	 * (a depthwise convolution's channels): the results are the same. */
	int split_m;
	float *c;
	int64_t ldc;
	int64_t m0; /* row of the epilogue's c that row 0 of this product is */
	gc_pk_epi epi;
} gc_pk_gemm;

/* The columns [48 * p0, 48 * p1) of the product (p1 <= ceil(n / 48);
 * read in place at v_rows: v_ow's panels), with v_buf's buffer `slot` when
 * v_buf is set. */
void gc_pk_gemm_run(const gc_pk_gemm *g, int64_t p0, int64_t p1);
void gc_pk_gemm_run_slot(const gc_pk_gemm *g, int64_t p0, int64_t p1, int slot);
/* The largest product split_m splits by rows (gc_pk_gemm_par): a reader
 * of a larger one takes it as written by pixels (conv-dw.c). */
#define GC_PK_SPLIT_M_BYTES (1 << 20)
/* The whole product, its column panels split over up to `threads` threads. */
void gc_pk_gemm_par(const gc_pk_gemm *g, int threads);
/* The product's column panels (what gc_pk_gemm_run's p0, p1 count), and,
 * with v_ow, the output rows [*oh0, *oh1] panels [p0, p1) write. */
int64_t gc_pk_gemm_panels(const gc_pk_gemm *g);
void gc_pk_gemm_panel_rows(const gc_pk_gemm *g, int64_t p0, int64_t p1, int64_t *oh0,
			   int64_t *oh1);

/* Whether a product of k steps writes each element of c once, after it
 * read the element's residual (epi.r), so that c may be the residual
 * itself: no K blocks with their sums in c between them (k up to 1024). */
int gc_pk_gemm_c_once(int64_t k);

/* An estimate of the cycles gc_pk_gemm_run takes, to choose a kernel. */
double gc_pk_gemm_cost(int64_t m, int64_t n, int64_t k);

/* ---- channel-vector direct convolution ---- */

#define GC_PK_CV_NR 14 /* output pixels per tile */

/*
 * One convolution of float32 NCHW tensors (1 to 3 spatial axes held as 3,
 * as gc_nn_window) with groups. The input is read from a zero-padded copy
 * (made by gc_pk_conv_run in its scratch) unless the convolution has no pads.
 * A k above 1024 is read in K blocks by groups of tiles (conv-direct.c), the
 * sums in the order of one pass over k.
 */
typedef struct gc_pk_conv {
	int64_t n, c, m, g, cg, mg;   /* batch, channels, groups, per group */
	int64_t k;		      /* cg * taps */
	/* The k steps go over the taps of one row of the window (along h) for
	 * all channels, then the next row's: a tile whose output rows read only
	 * zeros (pads) at some of the window's rows skips their steps
	 * (conv-direct.c's tile_steps). kr, kc: taps along h and w. */
	int64_t kr, kc, row_taps;     /* row_taps: steps of one window row */
	int64_t vs, vdil;	      /* stride and dilation along h */
	int64_t wdil;		      /* dilation along w */
	int64_t oh, ow;		      /* output rows and columns of a plane */
	int64_t panels;		      /* per group: 32 channels each, the last maybe 16 */
	int64_t group_floats;	      /* packed weights per group (gc_pk_conv_floats) */
	const float *w;		      /* packed weights (gc_pk_conv_pack; not owned) */
	int32_t *koff;		      /* [k]: input offset of each (channel, tap) (owned) */
	int pad;		      /* the window reads pads: from a padded copy,
				       * or from the input in place (edge) */
	uint16_t *pmask;	      /* [(pin_sp + 15) / 16]: the input's lanes of
				       * each 16 floats of a padded plane (owned;
				       * NULL: no padded copy) */
	/* Edge columns (no padded copy; conv-direct.c's edge_build): the
	 * input read in place but by the output columns [ol, orr) whose
	 * windows are inside it along w, the others (ecols of them) from a
	 * copy of their windows, edge[group][column][step][output row]. */
	int edge;
	int64_t ol, orr, ecols;
	int32_t *ekoff; /* [k + CHAN_KB]: step i at i * oh (owned) */
	int64_t in[3], lo[3], pin[3]; /* input dims, leading pads, padded dims */
	int64_t out[3];		      /* output dims; a flattened 1x1 is one row */
	int64_t row_step[2];	      /* input elements per output step along d, h */
	int sw;			      /* stride along w: 1 or 2 */
	int64_t rows;		      /* out[0] * out[1] */
	int64_t in_sp, pin_sp, out_sp;
	/* padded copies (or edge windows) the scratch holds: one a thread
	 * where the items of a batch go to the threads whole (conv-direct.c's
	 * batch_part), at most GC_PK_GEMM_SLOTS */
	int64_t copies;
	gc_pk_epi epi;
} gc_pk_conv;

/*
 * Plans a convolution: returns 0 and fills p (but for p->w, the weights
 * packed with gc_pk_conv_pack), 1 when the shape does not suit (stride
 * along w above 2, offsets too large, a scratch of more than max_scratch
 * floats: gc_pk_conv_scratch), or -1 out of memory. Window arrays are in
 * gc_nn_window's 3-D form.
 */
int gc_pk_conv_plan(gc_pk_conv *p, int64_t n, int64_t c, int64_t m, int64_t g, const int64_t in[3],
		    const int64_t k[3], const int64_t stride[3], const int64_t dil[3],
		    const int64_t pad_lo[3], const int64_t out[3], const gc_nn_act *act,
		    int64_t max_scratch);
/* Floats of one group's packed weights (mg channels, k = cg * taps). */
int64_t gc_pk_conv_floats(int64_t mg, int64_t k);
/* Packs weights wt ([g * mg][k], k in ONNX's order: channel, then taps
 * along d, h, w) into dst (g * gc_pk_conv_floats floats) in the plan's
 * step order (the window's kr rows of kc taps: gc_pk_conv.kr, kc), and
 * back. */
void gc_pk_conv_pack(const float *wt, int64_t g, int64_t mg, int64_t k, int64_t kr, int64_t kc,
		     float *dst);
void gc_pk_conv_unpack(const float *src, int64_t g, int64_t mg, int64_t k, int64_t kr, int64_t kc,
		       float *wt);
void gc_pk_conv_free(gc_pk_conv *p);
/* Scratch floats a run needs: the padded input of one batch item (or its
 * edge columns' windows) for each of gc_pk_conv.copies threads, and for a
 * k above 8192 the sums of a group of tiles for each of up to
 * GC_PK_GEMM_SLOTS threads. */
int64_t gc_pk_conv_scratch(const gc_pk_conv *p);
/* An estimate of the cycles, to choose between this and the row GEMM, of
 * k steps (the window's taps in a plane: 1 for a 1x1, whose steps each
 * read a new line). */
double gc_pk_conv_cost(int64_t m, int64_t k, int64_t taps, int64_t rows, int64_t ow);
/* The rows the kernel cuts the output `out` of window k at `stride` in,
 * and their width: a 1x1 stride-1 unpadded one's output (`flat`) is one
 * row, a column window's (7x1) at stride 1 a row a plane. */
void gc_pk_conv_rows(const int64_t k[3], const int64_t stride[3], const int64_t out[3], int flat,
		     int64_t *rows, int64_t *width);
/* Whether `lines` channel rows read at one pixel, `floats` apart, crowd a
 * few of the caches' sets (planes of 32x32, 64x64, 16x64 ...): read in
 * place they evict each other and come from L3, so the channel kernel
 * reads such an input from its padded copy (conv-direct.c) and the row
 * GEMM a 1x1's from a copy of each panel (conv.c's v_copy). */
int gc_pk_channels_crowd(int64_t floats, int64_t lines);

/* Runs the convolution: y = act(conv(x, w) + bias + res); bias and res
 * (a residual shaped as y) may be NULL. Up to `threads` threads share the
 * output rows. */
void gc_pk_conv_run(const gc_pk_conv *p, const float *x, const float *bias, const float *res,
		    float *y, float *scratch, int threads);

/* ---- depthwise: one input channel per group ---- */

typedef struct gc_pk_dw {
	int64_t n, c, mg;		/* batch, channels, outputs per channel */
	int64_t h, w, oh, ow;		/* 2-D (a 1-D one has h = oh = 1) */
	int64_t kh, kw, sh, sw, dh, dw; /* sw is 1 or 2 */
	int64_t pt, pl;			/* leading pads */
	int64_t ph, pw, plane;		/* padded rows, row length (per phase), phase size */
	int phases;			/* column phases of the padded plane: 1 or sw */
	int rowk; /* K of the row kernel (K x K, dilation 1, equal strides), else 0 */
	/* set by the caller: a 1x1 convolution alone reads the output, split
	 * by pixels (lib/pass-split.c's _gc_split_rows): the row kernel may
	 * split its planes by rows (conv-dw.c) */
	int by_rows;
	/* channel-blocked (one output per input channel): 16 channels at a
	 * time, their padded input transposed into [row][pixel][16] for a band
	 * of `band` output rows (band_in input rows of row_px pixels) */
	int blocked;
	int64_t band, band_in, row_px;
	float *wb; /* blocked: weights as [c / 16][taps][16] when known at prepare (owned) */
	/* flat (3x3, stride 1, rows as wide as the input's, a small plane):
	 * vectors of 16 outputs run across the rows of a channel's plane, tap
	 * t's inputs at offset foff[t], the lanes outside the plane masked off
	 * by fm[v * 9 + t] (owned) */
	int flat;
	int64_t fv; /* vectors of 16 outputs a plane */
	int64_t foff[9];
	uint16_t *fm;
	gc_pk_epi epi;
} gc_pk_dw;

/* 0 and p filled, or 1 when the shape does not suit. */
int gc_pk_dw_plan(gc_pk_dw *p, int64_t n, int64_t c, int64_t mg, const int64_t in[3],
		  const int64_t k[3], const int64_t stride[3], const int64_t dil[3],
		  const int64_t pad_lo[3], const int64_t out[3], const gc_nn_act *act);
/* Packs constant weights wt ([c][taps]; NULL when not known at prepare)
 * for the blocked kernel (which otherwise gathers them at run time), and
 * the flat kernel's masks: 0, or -1 out of memory. */
int gc_pk_dw_pack(gc_pk_dw *p, const float *wt);
void gc_pk_dw_free(gc_pk_dw *p);
/* Scratch floats: one buffer for each of up to GC_PK_DW_SLOTS threads. */
#define GC_PK_DW_SLOTS 4
int64_t gc_pk_dw_scratch(const gc_pk_dw *p);
/* wt: [c * mg][kh * kw] as ONNX has it. Up to `threads` threads (at most
 * GC_PK_DW_SLOTS) share the channels. */
void gc_pk_dw_run(const gc_pk_dw *p, const float *x, const float *wt, const float *bias, float *y,
		  float *scratch, int threads);

#endif
