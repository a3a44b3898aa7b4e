/*
 * The channel-vector direct convolution of sgemm-pack.h: vectors along 32
 * or 16 output channels, up to 14 pixels of an output row broadcast from
 * the input through a table of offsets. The depthwise kernels are
 * conv-dw.c's.
 */
#include "sgemm-pack.h"

#include <limits.h>
#include <stdatomic.h>
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

/* ---- channel-vector kernel: plan ---- */

/*
 * Steps of a K block. A panel whose k is deeper is read a block at a time:
 * CHAN_GROUP tiles take the block's steps one after another, their sums
 * kept (in chan_group's buffer) for the next block, so that the block's
 * weights (32 channels: 128 KiB) and the input rows of its channels stay in
 * L2 while the group's tiles read them. Without blocks every tile read the
 * whole panel from L3: 2.4 MB for fcn_resnet50's head (2048 -> 512 3x3,
 * k = 18432), and from memory where other cores share L3. The blocks depend
 * on k alone (k cut in equal blocks) and a tile's sums are carried from
 * block to block in their order: the sums are those of one pass over k, at
 * any split of the rows over threads.
 */
#define CHAN_KB 1024
#define CHAN_GROUP 16
/*
 * A 1x1's K block: its block's weights (16 KiB) stay in L1 while the
 * group's tiles read them, and each step reads one line from L2, its
 * channel's input (a window's steps read their lines again, tap after tap:
 * a 1x1's weights were the other line a step). Unblocked, a tile read its
 * panel's weights from L2 (k 256: 32 KiB, with the input's lines more than
 * L1): at one thread, in turns, inception_v3's 768 -> 192 at 17x17 took
 * 6 % less, resnet50's 256 -> 1024 at 14x14 6 %, inception_v3's 288 -> 64
 * at 35x35 11 %; 2048 -> 512 at 7x7 (already in blocks of 1024) within
 * 1.3 %. Blocks of 64, 96, 192 and 256 were 1-7 % slower than 128.
 */
#define CHAN_KB_1X1 128
/*
 * A window's K block where its k is at most CHAN_KB (16 channels of a 3x3):
 * the block's weights (18 KiB) stay in L1 as for a 1x1. At one thread
 * (kernel-time, builds in turns) inception_v3's 80 -> 192 3x3 at 71x71
 * took 6.4 % less, 32 -> 64 at 147x147 5.1 %, 64 -> 96 and 96 -> 96 at
 * 35x35 3.5 %, resnet's 64 -> 64 at 56x56 3 %; deeper windows, already in
 * blocks of CHAN_KB, did not gain (128 -> 128 at 28x28 1.2 % slower in
 * blocks of 144, resnet18 1-1.5 % slower). In the models: inception_v3
 * 1.2-2 % faster at one and two threads, resnet50 1.2 %, resnet18 0.75-1.2 %.
 * Blocks of 96 were slower, of 192 and 288 within 2.5 %.
 */
#define CHAN_KB_WINDOW 144
/*
 * Deeper than CHAN_DEEP_K, groups of CHAN_DEEP_GROUP tiles, their sums in
 * the run's scratch (CHAN_DEEP_FLOATS a thread: chan_deep_acc) rather than on
 * the stack (115 KB): a panel of k steps is then read from L3 once for 64
 * tiles, not 4 times (fcn_resnet50's head, 2048 -> 512 3x3 at 28x28,
 * k = 18432: 108 -> 98 ms at one thread; 2048 -> 256: 53 -> 50; 1024 ->
 * 512 at 28x28, k = 9216, 2 % less). Not below: 64 tiles' sums leave L1
 * (512 -> 512 at 28x28, k = 4608: within 2 % either way).
 */
#define CHAN_DEEP_K 8192
#define CHAN_DEEP_GROUP 64
#define CHAN_DEEP_FLOATS ((int64_t)CHAN_DEEP_GROUP * GC_PK_CV_NR * 32)
/*
 * Bytes of output above which a tile prefetches its output's lines into L2
 * in its last K block, a channel's (its first and last pixel's) every
 * other step (chan_ahead.out): its 16 or 32 rows of 14 pixels, each a part
 * of a line or two, had been written into lines in memory at chan_store,
 * each write waiting on its line. At one thread (kernel-time, in turns):
 * 3x3s 32 -> 64 at 147x147 9 % less, 64 -> 128 at 112x112 5 %, 64 -> 64
 * at 224x224 3.6 %, 3 -> 64 at 224x224 4.5 %; vgg11 1-3 % faster, the
 * other models within the noise. Below (64 -> 64 at 56x56, its 800 KB of
 * output in L2 already) it was 2 % slower.
 */
#define CHAN_OUT_FAR_BYTES (2 << 20)
/* Steps ahead at which a tile of K blocks, or of a window wider than one
 * tap, prefetches its own input rows into L1 (chan_ahead.near). */
#define CHAN_NEAR 64
_Static_assert(CHAN_NEAR <= CHAN_KB, "koff's block of zeros covers the steps ahead");

/* Whether p's window is one tap a plane (a 1x1): each step then reads a
 * new line, a channel's (or a depth tap's). */
static bool chan_one(const gc_pk_conv *p)
{
	return p->kr * p->kc == 1;
}

/* Whether p's output is more than CHAN_OUT_FAR_BYTES, or one of a batch's:
 * a tile then prefetches its output's lines (chan_ahead.out) and its
 * residual's. The items of a batch go one after another, each through
 * every layer's node before the next node, so an item's output and
 * residual were last touched a whole batch ago: resnet18 at batch 8, one
 * thread, took 15.0-15.4 ms in each 64 -> 64 3x3 at 56x56 with a residual,
 * 12.5-12.8 in those without; 12.8-12.9 prefetched (ONNX Runtime 11.0-11.2),
 * the others the same. */
static bool chan_out_far(const gc_pk_conv *p)
{
	return p->n > 1 || (double)p->m * (double)p->out_sp * sizeof(float) > CHAN_OUT_FAR_BYTES;
}

/* The steps of p's K blocks. */
static int64_t chan_kb(const gc_pk_conv *p)
{
	return chan_one(p) ? CHAN_KB_1X1 : p->k <= CHAN_KB ? CHAN_KB_WINDOW : CHAN_KB;
}

/* Panels of one group: 32 channels each, the last 16 wide when 16 or fewer
 * channels are left. */
static int64_t panel_width(int64_t mg, int64_t p)
{
	int64_t left = mg - 32 * p;
	return left <= 16 ? 16 : 32;
}

/*
 * Whether the convolution reads its input in place, the edge columns from
 * a copy of their windows (gc_pk_conv.edge): a 2-D one whose output rows
 * are rows of tiles (not pairs of short rows, nor a plane as one row),
 * with a tile's width of columns whose windows are inside the input along
 * w (tile_steps skips the window rows of pads along h), and the copy of the
 * edge columns' windows a quarter of the padded plane at most. A 3x3 at
 * stride 2 so copies one column of windows (9 input columns), not the input
 * (regnet_x_800mf's g4 64 -> 64 at 112x112: 9 % faster, its g2 32 -> 32
 * 10 %; unet's 3x3s at 128x128 within the noise). At stride 1 and a copy
 * a quarter of the padded plane or more (3x3s at 56x56, 35x35, 28x28) it
 * was 1-2 % slower: there the padded copy is a small part, and the edge
 * windows are 9 copies of each edge pixel.
 */
static int edge_suits(gc_pk_conv *p, const int64_t k[3], const int64_t stride[3],
		      const int64_t dil[3], const int64_t out[3])
{
	if (p->in[0] != 1 || k[0] != 1 || out[0] != 1 || 2 * out[2] <= GC_PK_CV_NR ||
	    (k[2] == 1 && stride[1] == 1 && stride[2] == 1) || out[2] > INT32_MAX / 32)
		return 0;
	int64_t sw = stride[2], lo = p->lo[2];
	/* columns o whose window starts at o sw - lo >= 0 and ends inside */
	int64_t ol = (lo + sw - 1) / sw, last = p->in[2] - 1 + lo - (k[2] - 1) * dil[2];
	int64_t orr = last < 0 ? 0 : last / sw + 1;
	orr = orr < out[2] ? orr : out[2];
	int64_t ecols = ol + out[2] - orr;
	double copy = (double)k[1] * (double)k[2] * (double)out[1] * (double)ecols,
	       plane = (double)p->pin[0] * (double)p->pin[1] * (double)p->pin[2];
	/* (offsets in int32; sizes from a file may be absurd) */
	if (orr - ol < GC_PK_CV_NR || 4 * copy > plane ||
	    (double)p->k * (double)out[1] >= INT32_MAX / 2 || (double)p->c * copy >= 0x1p50)
		return 0;
	p->ol = ol;
	p->orr = orr;
	p->ecols = ecols;
	return 1;
}

/* Scratch floats of the input's copy: the padded input of one batch item
 * or its edge columns' windows. */
static int64_t conv_copy_floats(const gc_pk_conv *p)
{
	if (p->edge) /* the edge columns' windows */
		return p->g * p->ecols * p->k * p->oh;
	/* + a vector of slack: tiles near the end broadcast from inside it */
	return p->pad ? p->c * p->pin_sp + 16 : 0;
}

/* conv_copy_floats rounded up to whole lines: a thread's copy in the
 * scratch (gc_pk_conv.copies of them). */
static int64_t copy_stride(const gc_pk_conv *p)
{
	return (conv_copy_floats(p) + 15) & ~(int64_t)15;
}

/* Most bytes of the padded copies of a batch whose items go to the
 * threads whole (batch_part): with more, its items are split over the
 * threads one after another. */
#define CHAN_BATCH_COPY_BYTES ((int64_t)32 << 20)

static int64_t batch_copies(const gc_pk_conv *p)
{
	int64_t most = p->n < GC_PK_GEMM_SLOTS ? p->n : GC_PK_GEMM_SLOTS, c = copy_stride(p);
	if (most < 2 || !c)
		return most < 1 ? 1 : most;
	int64_t fit = CHAN_BATCH_COPY_BYTES / (int64_t)sizeof(float) / c;
	return fit < 2 ? 1 : fit < most ? fit : most;
}

/* The padded plane's masks (gc_pk_conv.pmask): bit l of chunk q is set
 * when element 16 q + l is the input's, not a pad. By the input's rows,
 * a chunk at a time: the plan's time goes with the input, not the pads. */
static int pad_masks(gc_pk_conv *p)
{
	p->pmask = gc_calloc((size_t)((p->pin_sp + 15) / 16), sizeof *p->pmask);
	if (!p->pmask)
		return -1;
	for (int64_t z = p->lo[0]; z < p->lo[0] + p->in[0]; z++)
		for (int64_t h = p->lo[1]; h < p->lo[1] + p->in[1]; h++) {
			int64_t e = (z * p->pin[1] + h) * p->pin[2] + p->lo[2], end = e + p->in[2];
			for (int64_t q = e / 16; e < end; q++, e = 16 * q) {
				/* lanes [e - 16 q, to) (plain integers: any target plans) */
				int64_t to = end - 16 * q < 16 ? end - 16 * q : 16;
				p->pmask[q] |= (uint16_t)(((1u << to) - 1) & ~((1u << (e - 16 * q)) - 1));
			}
		}
	return 0;
}

/*
 * Whether channels `floats` apart crowd an L1's sets: a tile's steps read
 * the same pixels of each channel in turn, `lines` lines at a pixel (a
 * window's rows of each channel of a group). With a channel stride of a
 * multiple of 8 cache lines they fall in 64 / gcd(stride in lines, 64) of
 * the 64 sets -- one for a 64x64, 96x96 or 128x128 plane, four for
 * 112x112 (784 lines), at most 8 -- and when that is more than 8 lines a
 * set (the ways of a 32 KB L1; 12 in Intel's 48 KB), they evict each
 * other, and alike in L2: they come from L3. So a stride-1 convolution
 * reads such an input from the padded copy, not in place (the edge
 * columns' path), and a padded plane that would crowd gets a line of
 * slack a channel (its zeros). Measured with kernel-time on an Intel Xeon
 * (both builds on one CPU in turns, best of 20): 3x3s 64 -> 64 at 128x128
 * 9.7-9.8 -> 8.3-8.4 ms, U-Net's 32 -> 32 and 96 -> 32 at 128x128 2.55 ->
 * 2.3 and 7.2-7.4 -> 6.5-6.8, 128 -> 128 at 128x128 37.1-37.4 ->
 * 33.6-36.2, 32 -> 32 at 256x256 11.1 -> 10.1-10.2, 64 -> 128 at 112x112
 * 12.4-12.7 -> 12.0-12.3; padded, 64x64 of a 62x62 input 2.2 -> 2.0, 32x32
 * of 30x30 (128 channels) 1.83-1.85 -> 1.73-1.75, 16x16 of 14x14 (256)
 * 1.32 -> 1.30.
 * At stride 2 the copy is four times the output (32 -> 32 3x3 s2 at
 * 112x112 0.41 ms in place, 0.50 copied): read in place as before.
 */
int gc_pk_channels_crowd(int64_t floats, int64_t lines)
{
	if (floats % 16) /* not a whole number of lines */
		return 0;
	int64_t l = floats / 16, b = l % 64 ? l & -l : 64; /* gcd(l, 64) */
	return b >= 8 && lines > 8 * (64 / b);
}

int gc_pk_conv_plan(gc_pk_conv *p, int64_t n, int64_t c, int64_t m, int64_t g, const int64_t in[3],
		    const int64_t k[3], const int64_t stride[3], const int64_t dil[3],
		    const int64_t pad_lo[3], const int64_t out[3], const gc_nn_act *act,
		    int64_t max_scratch)
{
	memset(p, 0, sizeof *p);
	if (stride[2] > 2)
		return 1;
	p->n = n;
	p->c = c;
	p->m = m;
	p->g = g;
	p->cg = c / g;
	p->mg = m / g;
	int64_t taps = k[0] * k[1] * k[2];
	p->k = p->cg * taps;
	p->sw = (int)stride[2];
	int pad = 0, unit = 1;
	for (int d = 0; d < 3; d++) {
		p->in[d] = in[d];
		p->out[d] = out[d];
		p->lo[d] = pad_lo[d];
		/* the padded input covers every window, pads beyond it are
		 * never read */
		int64_t need = (out[d] - 1) * stride[d] + (k[d] - 1) * dil[d] + 1;
		p->pin[d] = need > pad_lo[d] + in[d] ? need : pad_lo[d] + in[d];
		pad |= pad_lo[d] != 0 || p->pin[d] != in[d];
		unit &= k[d] == 1 && stride[d] == 1;
	}
	p->pad = pad;
	p->in_sp = in[0] * in[1] * in[2];
	int64_t lines = p->cg * k[0] * k[1]; /* (gc_pk_channels_crowd) */
	int crowd = stride[1] == 1 && stride[2] == 1 && gc_pk_channels_crowd(p->in_sp, lines);
	p->edge = pad && !crowd && edge_suits(p, k, stride, dil, out);
	if (!pad || p->edge) /* the input read in place */
		for (int d = 0; d < 3; d++)
			p->pin[d] = in[d];
	p->out_sp = out[0] * out[1] * out[2];
	/* offsets must fit int32 (and the whole input, for the tile bases);
	 * pads and dilations from a file may make the padded size overflow */
	if (__builtin_mul_overflow(p->pin[0] * p->pin[1], p->pin[2], &p->pin_sp))
		return 1;
	if (pad && !p->edge && gc_pk_channels_crowd(p->pin_sp, lines))
		p->pin_sp += 16; /* an odd number of lines: in every set */
	if (p->pin_sp > INT32_MAX / (p->cg + 1))
		return 1;
	p->row_step[0] = stride[0] * p->pin[1] * p->pin[2];
	p->row_step[1] = stride[1] * p->pin[2];
	p->kr = k[1];
	p->kc = k[2];
	p->row_taps = p->k / k[1];
	p->vs = stride[1];
	p->vdil = dil[1];
	p->wdil = dil[2];
	p->oh = out[1];
	p->ow = out[2];
	p->copies = batch_copies(p);
	/* (before anything is allocated for a plan that will not be used) */
	if (gc_pk_conv_scratch(p) > max_scratch)
		return 1;
	if (pad && !p->edge && pad_masks(p))
		return -1;
	int64_t width;
	gc_pk_conv_rows(k, stride, out, unit && !pad, &p->rows, &width);
	if (width != out[2]) { /* rows of planes, or the output, as one */
		p->out[0] = p->rows;
		p->out[1] = 1;
		p->out[2] = width;
	}
	p->panels = (p->mg + 31) / 32;
	p->group_floats = gc_pk_conv_floats(p->mg, p->k);
	/* + a block of zeros: chan_group's prefetch of the next block reads
	 * as many offsets as the block before it has steps, and a tile's
	 * prefetch of its own rows CHAN_NEAR past its last */
	p->koff = gc_calloc((size_t)(p->k + CHAN_KB), sizeof(int32_t));
	p->ekoff = p->edge ? gc_calloc((size_t)(p->k + CHAN_KB), sizeof(int32_t)) : NULL;
	if (!p->koff || (p->edge && !p->ekoff)) {
		gc_pk_conv_free(p);
		return -1;
	}
	for (int64_t e = 0; p->edge && e < p->k; e++)
		p->ekoff[e] = (int32_t)(e * out[1]);
	/* steps by window row b, then channel, then taps along d and w */
	int64_t i = 0;
	for (int64_t b = 0; b < k[1]; b++)
		for (int64_t ci = 0; ci < p->cg; ci++)
			for (int64_t a = 0; a < k[0]; a++)
				for (int64_t j = 0; j < k[2]; j++)
					p->koff[i++] =
					    (int32_t)(ci * p->pin_sp +
						      (a * dil[0] * p->pin[1] + b * dil[1]) *
							  p->pin[2] +
						      j * dil[2]);
	gc_pk_epi_init(&p->epi, act);
	return 0;
}

int64_t gc_pk_conv_floats(int64_t mg, int64_t k)
{
	int64_t f = 0;
	for (int64_t q = 0; q < (mg + 31) / 32; q++)
		f += panel_width(mg, q) * k;
	return f;
}

/* A row of W (ONNX's order along k: channel, taps along d, h, w) into a
 * panel's column (to_panel: steps `width` floats apart, in the plan's
 * order: window row, then channel and taps along d, then along w), or such
 * a column back into a row; kr window rows of kc taps. */
static void step_copy(const float *from, float *to, int64_t width, int64_t k, int64_t kr,
		      int64_t kc, int to_panel)
{
	int64_t u_all = k / (kr * kc), i = 0;
	for (int64_t r = 0; r < kr; r++)
		for (int64_t u = 0; u < u_all; u++)
			for (int64_t j = 0; j < kc; j++, i++) {
				int64_t at_w = (u * kr + r) * kc + j, at_col = i * width;
				if (to_panel)
					to[at_col] = from[at_w];
				else
					to[at_w] = from[at_col];
			}
}

/* w[group][panel][step][lane] = W[group * mg + 32 * panel + lane][k of the
 * step]: the weights read a row of W at a time, written panel-wide apart. */
void gc_pk_conv_pack(const float *wt, int64_t g, int64_t mg, int64_t k, int64_t kr, int64_t kc,
		     float *dst)
{
	for (int64_t gi = 0; gi < g; gi++)
		for (int64_t q = 0, base = 0; q < (mg + 31) / 32; q++) {
			int64_t width = panel_width(mg, q);
			float *panel = dst + base;
			for (int64_t l = 0; l < width; l++) {
				int64_t mo = 32 * q + l;
				if (mo < mg)
					step_copy(wt + (gi * mg + mo) * k, panel + l, width, k, kr,
						  kc, 1);
				else
					for (int64_t i = 0; i < k; i++)
						panel[i * width + l] = 0;
			}
			base += width * k;
			if (q + 1 == (mg + 31) / 32)
				dst += base;
		}
}

void gc_pk_conv_unpack(const float *src, int64_t g, int64_t mg, int64_t k, int64_t kr, int64_t kc,
		       float *wt)
{
	for (int64_t gi = 0; gi < g; gi++)
		for (int64_t q = 0, base = 0; q < (mg + 31) / 32; q++) {
			int64_t width = panel_width(mg, q);
			for (int64_t l = 0; l < width && 32 * q + l < mg; l++)
				step_copy(src + base + l, wt + (gi * mg + 32 * q + l) * k, width,
					  k, kr, kc, 0);
			base += width * k;
			if (q + 1 == (mg + 31) / 32)
				src += base;
		}
}

void gc_pk_conv_free(gc_pk_conv *p)
{
	if (p) {
		gc_free(p->koff);
		gc_free(p->pmask);
		gc_free(p->ekoff);
		p->koff = NULL;
		p->pmask = NULL;
		p->ekoff = NULL;
	}
}

/* Whether the tiles go in groups of CHAN_DEEP_GROUP, their sums in the
 * scratch (and the run's threads are at most GC_PK_GEMM_SLOTS). */
static int chan_deep(const gc_pk_conv *p)
{
	return p->k > CHAN_DEEP_K;
}

/* The threads' sums after the copy in scratch, on a 64-byte boundary (the
 * tiles load and store them aligned), or NULL when not chan_deep. */
static float *chan_deep_acc(const gc_pk_conv *p, float *scratch)
{
	if (!chan_deep(p))
		return NULL;
	uintptr_t a = (uintptr_t)(scratch + p->copies * copy_stride(p));
	return (float *)((a + 63) & ~(uintptr_t)63);
}

int64_t gc_pk_conv_scratch(const gc_pk_conv *p)
{
	/* (+ 15 floats: the sums' boundary) */
	return p->copies * copy_stride(p) +
	       (chan_deep(p) ? GC_PK_GEMM_SLOTS * CHAN_DEEP_FLOATS + 15 : 0);
}

void gc_pk_conv_rows(const int64_t k[3], const int64_t stride[3], const int64_t out[3], int flat,
		     int64_t *rows, int64_t *width)
{
	*rows = out[0] * out[1];
	*width = out[2];
	if (flat) {
		*rows = 1;
		*width = out[0] * out[1] * out[2];
	} else if (k[2] == 1 && stride[1] == 1 && stride[2] == 1) {
		/* the rows of the (padded) input are as long as the output's:
		 * pixel o of a plane reads o + koff[i] as in one long row, in
		 * tiles of 14 along it, not of 9 and 8 for each row of 17
		 * (inception_v3's 7x1) */
		*rows = out[0];
		*width = out[1] * out[2];
	}
}

/* Cycles a tile of 32 channels takes to transpose and store (chan_store),
 * in gc_pk_conv_cost's estimate; half-width tiles (16 channels) 500. */
#define CHAN_STORE_CYCLES 800

/* A 1x1's input that stays in L2 (gc_pk_conv_cost): its K blocks then read
 * one line a step from L2, the block's weights from L1. */
#define CHAN_1X1_L2_BYTES (512 << 10)

double gc_pk_conv_cost(int64_t m, int64_t k, int64_t taps, int64_t rows, int64_t ow)
{
	/* per tile of px pixels and k steps: 2 px vector FMAs a step for 32
	 * channels, px for 16; CHAN_STORE_CYCLES to transpose and store (600 had
	 * taken the channel kernel for a 256 -> 1024 1x1 at 14x14, 448 tiles
	 * of k 256, at 0.72 ms where the row GEMM, estimated the same, took
	 * 0.66; with 800 the row GEMM takes resnet50's, densenet121's and
	 * regnet's 1x1s of k 256-352 at 14x14 (2-9 % faster each), and the
	 * row GEMM across the rows 3x3s of few channels: squeezenet's
	 * 32 -> 128 at 54x54 1.67 -> 1.44 ms, U-Net's 32 -> 64 at 64x64 1.20
	 * -> 1.07, audio1d's 64 -> 64 0.30 -> 0.26. 1000 went too far:
	 * mobilenet_v2's 384 -> 64 at 14x14, 7 % faster on this kernel.) */
	int64_t tiles = (ow + GC_PK_CV_NR - 1) / GC_PK_CV_NR;
	double px = (double)ow / (double)tiles;
	double full = (double)(m / 32), left = (double)(m % 32);
	double cost = full * ((double)k * 2 * px + CHAN_STORE_CYCLES);
	if (left > 16)
		cost += (double)k * 2 * px + CHAN_STORE_CYCLES;
	else if (left > 0)
		cost += (double)k * px + 500;
	/* a 1x1 of 2-4 K blocks (CHAN_KB_1X1) over an input in L2 took
	 * 0.88-0.92x its estimate against the row GEMM's (k 208-384 at 14x14:
	 * resnet50's 256 -> 1024 0.94x the row GEMM's time, densenet121's
	 * 288 -> 128 0.90x, regnet's 208 -> 208 0.95x); deeper, or over a
	 * larger input (28x28: 256 -> 128 1.13x, 512 -> 256 1.20x; 8x8 of k
	 * 1280-2048 1.02-1.05x), it did not (kernel-time, one thread). In
	 * the models, builds in turns: resnet50's six 256 -> 1024 3-12 % less,
	 * regnet's eleven 208 -> 208 5-8 %; densenet121's four 256-352 ->
	 * 128 (their input a concatenation) 2-7 % more, 15-25 us in all;
	 * resnet50 1.5-2.3 % and regnet 3.7 % faster at two threads */
	if (taps == 1 && k > CHAN_KB_1X1 && k <= 4 * CHAN_KB_1X1 &&
	    (double)k * (double)rows * (double)ow * 4 <= CHAN_1X1_L2_BYTES)
		cost *= 0.9;
	return (double)rows * (double)tiles * cost;
}

#ifdef PK_X86

#define AI GC_PK_INLINE

/* What a tile's steps prefetch for later, at its even steps i only: the
 * byte pf + i * pfs into L2 (the weights a later tile reads: chan_rows;
 * the odd step's too where it is in the next line), and, unless px is
 * NULL, the input px + pkoff[i] (what chan_group's next tile reads); unless
 * near is NULL, into L1 the first and last pixel of the tile's own input at
 * step i + CHAN_NEAR (near is the tile's xb). Four prefetches every step
 * held the steps back: at every other step a 3x3 of 80 -> 192 at 71x71
 * took 1.5 % less, 256 -> 256 at 14x14 3 %, 512 -> 512 at 7x7 with its
 * weights in memory 6 %; resnet18 and resnet50 1.3 %, inception_v3 0.8 %
 * (a 768 -> 192 1x1 at 17x17 from memory, whose next tile reads a new line
 * every step, the same). A tile of a deep panel reads
 * each step's row of pixels from L2 (its block's weights, 128 KiB, pass
 * through L1 between two reads of a row): fcn_resnet50's 2048 -> 512 3x3
 * at 32x32 (k = 18432) took 181 ms without, 171 with (ORT 170). For tiles
 * of one block it measured no gain nor loss on an AMD Zen 4 (64 -> 64 3x3 at
 * 56x56); on an Intel Xeon (2 MB L2, 48 KB L1), where a 3x3's step reads a
 * new input line from L2 more often than the next tile's prefetch keeps,
 * inception_v3's node sums were 2 % lower (81.5-81.8 ms against 83.1-83.9,
 * both builds on one CPU in turns), its 3x3s at 35x35 and larger 5-20 %
 * when the core was slowed by a neighbour, resnet50 and vgg11 0.3-0.5 %;
 * for 1x1s (a step's line is the next tile's) 4 % slower. So set for tiles
 * of more than one block (chan_group) and for windows of more than one
 * tap, and for a 1x1's first tile of a chan_rows call (no tile before it
 * prefetched its input).
 *
 * A 1x1's steps (`lines`) read a new line each (a channel's): its even
 * steps prefetch the odd step's input lines too, px's and near's. At one
 * thread, its lines in L2, the hardware prefetchers had fetched the odd
 * ones as well; at two, where a 1x1 reads the output of a depthwise
 * convolution the other core wrote half of (by channels), they had come
 * from that core on demand: mobilenet_v2's 576 -> 96 1x1 at 14x14 after its
 * depthwise took 110 us at two threads (74 alone), 80 with them, 77 with
 * the first tile's too (ONNX Runtime 60); mobilenet_v2, efficientnet_b0
 * and resnet50 4-5 % faster at two threads, the same at one.
 *
 * The output's lines: a large convolution's output is in no cache, and
 * its tile's 16 or 32 partly written lines had cost 10 % of a 32 -> 64 3x3
 * at 147x147. They had been prefetched for writing, one each run of k /
 * lines steps, but the step loop cut in runs cost more (without them
 * resnet18, resnet50, densenet121, squeezenet and inception_v3 took 2-3.5 %
 * less at one thread, 3-5 % at two, vgg11 1.5 %; a 64 -> 64 3x3 at 56x56
 * 8 % less alone). Now, unless out is NULL (an output of more than
 * CHAN_OUT_FAR_BYTES or of a batch: chan_out_far; the tile's last K
 * block), the even steps i prefetch the lines of channel i / 2's pixels
 * into L2, with the others: no loop is cut; and the next och even steps
 * those of the residual res (NULL: none), which chan_store reads. */
typedef struct chan_ahead {
	uintptr_t pf;
	int64_t pfs;
	const float *px;
	const int32_t *pkoff;
	const float *near;
	int lines; /* each step reads a new line (a 1x1's steps are channels) */
	const float *out; /* the tile's output row, or NULL */
	const float *res; /* its residual's, or NULL */
	int64_t ldo;	  /* its channels' distance */
	int olast, och;	  /* its last pixel, its channels */
} chan_ahead;

/* One step of chan_tile: the pixels at xt times the weights at w. */
AI void chan_step(const float *xt, int64_t delta, const float *w, __m512 *a0, __m512 *a1,
		  const int mv, const int nr, const int split, const int s)
{
	__m512 w0 = _mm512_load_ps(w), w1 = _mm512_setzero_ps();
	if (mv == 2)
		w1 = _mm512_load_ps(w + 16);
#pragma GCC unroll 16
	for (int j = 0; j < nr; j++) {
		__m512 b = _mm512_set1_ps(j < split ? xt[j * s] : xt[delta + (j - split) * s]);
		a0[j] = _mm512_fmadd_ps(w0, b, a0[j]);
		if (mv == 2)
			a1[j] = _mm512_fmadd_ps(w1, b, a1[j]);
	}
}

/* Accumulates a (16 mv) x nr tile over k steps: w advances 16 mv floats a
 * step, pixel j of step i is xb[koff[i] + j * s] for j < split and
 * xb[koff[i] + delta + (j - split) * s] after (two output rows in one tile,
 * for short rows). Stores it as tile[j][32], onto the sums there when
 * `carry` (the steps before: chan_group's K blocks), else from zero, and
 * prefetches what `ah` says.
 *
 * The steps go in pairs, the prefetches once a pair: a step's 28 FMAs and
 * 16 loads leave little room for other instructions, and a loop of single
 * steps ran the prefetches' tests and address sums every step (for
 * prefetches at every other one). In pairs, at one thread
 * (kernel-time, builds in turns): 288 -> 64 1x1 at 35x35 11 % less, 768 ->
 * 192 at 17x17 7 %, 3x3s 80 -> 192 at 71x71 7 %, 64 -> 64 at 56x56 9 %;
 * in the models inception_v3 2.6 % faster at one thread and 4.2 % at two,
 * resnet18 2.5 and 1.3 %, resnet50 2.5 % at one, vgg11 1.8 and 3 %. */
AI void chan_tile(const float *xb, int64_t delta, const float *w, const int32_t *koff, int64_t k,
		  float *tile, int carry, const chan_ahead *ah, const int mv, const int nr,
		  const int split, const int s)
{
	uintptr_t pf = ah->pf;
	int64_t pfs = ah->pfs;
	const float *px = ah->px;
	const int32_t *pkoff = ah->pkoff;
	const float *near = ah->near;
	int64_t pf2 = pfs > 32 ? pfs : 0; /* the odd step's line, from the even step */
	const int lines = ah->lines, olast = ah->olast, och = ah->och;
	const float *out = ah->out, *res = ah->res;
	const int64_t ldo = ah->ldo;
	__m512 a0[GC_PK_CV_NR], a1[GC_PK_CV_NR];
#pragma GCC unroll 16
	for (int j = 0; j < nr; j++) {
		a0[j] = carry ? _mm512_load_ps(tile + j * 32) : _mm512_setzero_ps();
		a1[j] = carry && mv == 2 ? _mm512_load_ps(tile + j * 32 + 16) : _mm512_setzero_ps();
	}
	for (int64_t i = 0; i < k; i += 2) {
		const char *at = (const char *)(pf + (uintptr_t)(i * pfs));
		_mm_prefetch(at, _MM_HINT_T1);
		if (pf2)
			_mm_prefetch(at + pf2, _MM_HINT_T1);
		if (px)
			_mm_prefetch((const char *)(px + pkoff[i]), _MM_HINT_T1);
		if (px && lines)
			_mm_prefetch((const char *)(px + pkoff[i + 1]), _MM_HINT_T1);
		if (out && i < 2 * och) { /* channel i / 2's line(s) */
			const float *o = out + (i >> 1) * ldo;
			_mm_prefetch((const char *)o, _MM_HINT_T1);
			_mm_prefetch((const char *)(o + olast), _MM_HINT_T1);
		}
		if (res && i >= 2 * och && i < 4 * och) {
			const float *o = res + ((i >> 1) - och) * ldo;
			_mm_prefetch((const char *)o, _MM_HINT_T1);
			_mm_prefetch((const char *)(o + olast), _MM_HINT_T1);
		}
		if (near) {
			const float *xa = near + koff[i + CHAN_NEAR];
			const float *xz = split < nr ? xa + delta + (nr - split - 1) * s
						     : xa + (nr - 1) * s;
			_mm_prefetch((const char *)xa, _MM_HINT_T0);
			_mm_prefetch((const char *)xz, _MM_HINT_T0);
			if (lines) {
				const float *xo = near + koff[i + 1 + CHAN_NEAR];
				_mm_prefetch((const char *)xo, _MM_HINT_T0);
				_mm_prefetch((const char *)(xo + (xz - xa)), _MM_HINT_T0);
			}
		}
		chan_step(xb + koff[i], delta, w, a0, a1, mv, nr, split, s);
		if (i + 1 < k)
			chan_step(xb + koff[i + 1], delta, w + 16 * mv, a0, a1, mv, nr, split, s);
		w += 32 * mv;
	}
#pragma GCC unroll 16
	for (int j = 0; j < nr; j++) {
		_mm512_store_ps(tile + j * 32, a0[j]);
		if (mv == 2)
			_mm512_store_ps(tile + j * 32 + 16, a1[j]);
	}
}

typedef void (*chan_tile_fn)(const float *xb, int64_t delta, const float *w, const int32_t *koff,
			     int64_t k, float *tile, int carry, const chan_ahead *ah);

#define CHAN_TILE(mv, nr, split, s, name)                                                          \
	static GC_PK_TARGET void name(const float *xb, int64_t delta, const float *w,              \
				      const int32_t *koff, int64_t k, float *tile, int carry,      \
				      const chan_ahead *ah)                                        \
	{                                                                                          \
		chan_tile(xb, delta, w, koff, k, tile, carry, ah, mv, nr, split, s);               \
	}
#define CHAN_TILE1(mv, nr, s) CHAN_TILE(mv, nr, nr, s, chan_tile_##mv##_##nr##_##s)
/* two rows of q pixels */
#define CHAN_TILE2(mv, q, s) CHAN_TILE(mv, 2 * q, q, s, chan_tile2_##mv##_##q##_##s)
#define CHAN_TILES(mv, s)                                                                          \
	CHAN_TILE1(mv, 1, s)                                                                       \
	CHAN_TILE1(mv, 2, s)                                                                       \
	CHAN_TILE1(mv, 3, s)                                                                       \
	CHAN_TILE1(mv, 4, s)                                                                       \
	CHAN_TILE1(mv, 5, s)                                                                       \
	CHAN_TILE1(mv, 6, s)                                                                       \
	CHAN_TILE1(mv, 7, s)                                                                       \
	CHAN_TILE1(mv, 8, s)                                                                       \
	CHAN_TILE1(mv, 9, s)                                                                       \
	CHAN_TILE1(mv, 10, s)                                                                      \
	CHAN_TILE1(mv, 11, s)                                                                      \
	CHAN_TILE1(mv, 12, s)                                                                      \
	CHAN_TILE1(mv, 13, s)                                                                      \
	CHAN_TILE1(mv, 14, s)                                                                      \
	CHAN_TILE2(mv, 1, s)                                                                       \
	CHAN_TILE2(mv, 2, s)                                                                       \
	CHAN_TILE2(mv, 3, s)                                                                       \
	CHAN_TILE2(mv, 4, s)                                                                       \
	CHAN_TILE2(mv, 5, s)                                                                       \
	CHAN_TILE2(mv, 6, s)                                                                       \
	CHAN_TILE2(mv, 7, s)
CHAN_TILES(1, 1)
CHAN_TILES(1, 2)
CHAN_TILES(2, 1)
CHAN_TILES(2, 2)

#define CHAN_TABLE(mv, s)                                                                          \
	{                                                                                          \
		chan_tile_##mv##_1_##s, chan_tile_##mv##_2_##s, chan_tile_##mv##_3_##s,            \
		    chan_tile_##mv##_4_##s, chan_tile_##mv##_5_##s, chan_tile_##mv##_6_##s,        \
		    chan_tile_##mv##_7_##s, chan_tile_##mv##_8_##s, chan_tile_##mv##_9_##s,        \
		    chan_tile_##mv##_10_##s, chan_tile_##mv##_11_##s, chan_tile_##mv##_12_##s,     \
		    chan_tile_##mv##_13_##s, chan_tile_##mv##_14_##s                               \
	}
#define CHAN_TABLE2(mv, s)                                                                         \
	{                                                                                          \
		chan_tile2_##mv##_1_##s, chan_tile2_##mv##_2_##s, chan_tile2_##mv##_3_##s,         \
		    chan_tile2_##mv##_4_##s, chan_tile2_##mv##_5_##s, chan_tile2_##mv##_6_##s,     \
		    chan_tile2_##mv##_7_##s                                                        \
	}
/* [mv - 1][s - 1][nr - 1] */
static const chan_tile_fn chan_tiles[2][2][GC_PK_CV_NR] = {
    {CHAN_TABLE(1, 1), CHAN_TABLE(1, 2)},
    {CHAN_TABLE(2, 1), CHAN_TABLE(2, 2)},
};
/* [mv - 1][s - 1][q - 1]: two rows of q */
static const chan_tile_fn chan_tiles2[2][2][GC_PK_CV_NR / 2] = {
    {CHAN_TABLE2(1, 1), CHAN_TABLE2(1, 2)},
    {CHAN_TABLE2(2, 1), CHAN_TABLE2(2, 2)},
};


/* j * ps for lane j */
AI __m512i px_index(int64_t ps)
{
	return _mm512_mullo_epi32(
	    _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
	    _mm512_set1_epi32((int)ps));
}

/* The pixels `cols` of v to y[j * ps] (ps 1: y's row; else a column of an
 * edge, edge_build), and back. */
AI void px_store(float *y, int64_t ps, __mmask16 cols, __m512 v)
{
	if (ps == 1)
		_mm512_mask_storeu_ps(y, cols, v);
	else
		_mm512_mask_i32scatter_ps(y, cols, px_index(ps), v, 4);
}

AI __m512 px_load(const float *y, int64_t ps, __mmask16 cols)
{
	if (ps == 1)
		return _mm512_maskz_loadu_ps(cols, y);
	return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), cols, px_index(ps), y, 4);
}

/* tile[j][32] (pixel j, channel lane) -> y[ch * ldy + j * ps] for the
 * channels ch < valid of the 16 mv the tile holds, with bias (per channel),
 * the residual res (laid out as y; NULL: none) and the activation. With a
 * residual the activation follows the transposition, so that the residual
 * is read along y's rows. */
static GC_PK_TARGET void chan_store(const float *tile, int nr, int mv, int64_t valid,
				    const float *bias, const gc_pk_epi *e, const float *res,
				    float *y, int64_t ldy, int64_t ps)
{
	__mmask16 cols = (__mmask16)((1u << nr) - 1);
	for (int h = 0; h < mv; h++) {
		int64_t lim = valid - 16 * h < 16 ? valid - 16 * h : 16;
		if (lim <= 0)
			break;
		__m512 bv = bias
				? _mm512_maskz_loadu_ps((__mmask16)((1u << lim) - 1), bias + 16 * h)
				: _mm512_setzero_ps();
		__m512 r[16];
		if (res) {
#pragma GCC unroll 16
			for (int j = 0; j < 16; j++)
				r[j] = j < nr ? _mm512_add_ps(_mm512_load_ps(tile + j * 32 + 16 * h), bv)
					      : _mm512_setzero_ps();
			gc_pk_transpose16(r);
			for (int64_t l = 0; l < lim; l++) {
				int64_t at = (16 * h + l) * ldy;
				__m512 v = _mm512_add_ps(r[l], px_load(res + at, ps, cols));
				px_store(y + at, ps, cols, gc_pk_act(v, e));
			}
			continue;
		}
#pragma GCC unroll 16
		for (int j = 0; j < 16; j++)
			r[j] =
			    j < nr
				? gc_pk_act(
				      _mm512_add_ps(_mm512_load_ps(tile + j * 32 + 16 * h), bv), e)
				: _mm512_setzero_ps();
		gc_pk_transpose16(r);
		for (int64_t l = 0; l < lim; l++)
			px_store(y + (16 * h + l) * ldy, ps, cols, r[l]);
	}
}

/* Most bytes of the next panel's weights chan_rows prefetches: its first
 * CHAN_PF_MAX bytes where it is larger. A panel of more than L2 (2 MiB
 * here) still gains: the lines prefetched first leave L2 for L3 (a victim
 * cache on these cores), not for memory. Panels over 1 MiB had been left
 * to the hardware prefetchers: a 1024 -> 1024 3x3 at 7x7 (wide_resnet50_2,
 * 1.2 MB a panel) took 9.9-12.8 ms at one thread with its weights in
 * memory, 7.4-8.4 prefetched; a 2048 -> 2048 one 43 ms, 36 (issue 19). */
#define CHAN_PF_MAX (INT64_C(4) << 20)

/* Where the tiles of one chan_rows call prefetch the weights of the panel
 * after theirs (the next group's first after a group's last): tile t of
 * `tiles` prefetches its share, from pf + t * chunk, pfs bytes a step. The
 * weights of a deep layer (512 x 512 x 3 x 3: 9 MiB) are not in any cache
 * when the node starts, and a panel of them serves only a few tiles of a
 * small output: without this, the first tile of each panel waits on memory. */
typedef struct chan_pf {
	uintptr_t pf;
	int64_t chunk, pfs;
} chan_pf;

static chan_pf chan_prefetch(const gc_pk_conv *p, int64_t gi, int64_t q, const float *wq,
			     int64_t tiles)
{
	chan_pf f = {(uintptr_t)wq, 0, 0}; /* 0: the current panel's first line, again */
	int64_t width = panel_width(p->mg, q), next;
	if (q + 1 < p->panels)
		next = panel_width(p->mg, q + 1);
	else if (gi + 1 < p->g)
		next = panel_width(p->mg, 0);
	else
		return f;
	int64_t bytes = next * p->k * (int64_t)sizeof(float);
	bytes = bytes < CHAN_PF_MAX ? bytes : CHAN_PF_MAX;
	if (tiles <= 0)
		return f;
	int64_t chunk = (bytes + tiles - 1) / tiles;
	if (chunk < 256) /* many tiles share the panel: the prefetchers keep up */
		return f;
	f.pf = (uintptr_t)(wq + width * p->k);
	f.chunk = chunk;
	f.pfs = (chunk + p->k - 1) / p->k;
	return f;
}

/* One tile of chan_group: its input, a pair's second row (chan_tile's
 * delta), kernel, pixels, and output and residual (NULL: none). */
typedef struct chan_at {
	const float *x;
	int64_t delta;
	chan_tile_fn fn;
	int nr;
	float *y;
	const float *res;
	int64_t s0, s1;	     /* its steps (tile_steps) */
	const int32_t *koff; /* their offsets: the plan's koff, or ekoff */
	int s;		     /* its pixels' stride in x */
	int64_t ps;	     /* and in y: 1, or an edge column's ow */
} chan_at;

/* The input a tile prefetches for the tile after it, a line each step: of
 * tile a (or, `after`, of the pixels after a's, where the next tile of its
 * row is, or the next row's first), the line of its last pixel: its first
 * is mostly in the line this tile's last pixel is in, read already (as the
 * tiles prefetched before; a pair of rows still does, and none after it).
 * Without the line after a tile (k up to a K block: a tile alone) a 1x1's
 * tiles read their input, a line of each of k channel rows a tile, as the
 * hardware prefetchers found it: 768 -> 192 at 17x17 after a 48 MB stream
 * (the input in memory) took 0.98 ms, 0.85 with it (ONNX Runtime 0.82;
 * warm 0.84 and 0.82); in inception_v3 at one thread its 1x1s at 17x17
 * took 8-17 % less, resnet50's and densenet121's convolutions 1 % less.
 * (For a wider window, whose padded copy was just made, it is within the
 * noise: resnet50's 3x3s -0.6 %.) */
static const float *tile_new_line(const chan_at *a, int after)
{
	if (a->delta)
		return after ? NULL : a->x;
	return a->x + ((after + 1) * (int64_t)a->nr - 1) * a->s;
}

/*
 * One convolution (of one batch item) is one job on the pool: its parts are
 * the convolution's items (group, panel, unit) in that order, in guided runs
 * (nn-split.h: they shrink toward the end, so that the threads end
 * together). A unit is an output row, or the two rows chan_rows puts in one
 * tile (a part boundary between them would halve that tile), or where the
 * rows are too few for the threads (a 1-D convolution's one row: its 64
 * channels were 2 items, and one late thread left both to the other) a run
 * of a row's tiles: the row's tiles cut in `chunks`.
 *
 * The zero-padded copy of the input (or, read in place, the copy of its
 * edge columns' windows: edge_build) is cut in blocks of whole groups (of
 * channels, with fewer groups: conv_pad_split), and a part makes the
 * blocks a group reads right before it convolves the group (pad_groups):
 * it copies those no thread has begun, then waits for those another thread
 * is copying. So the copy is split over the threads that came, costs no
 * hand-over of its own, and is split even where it is too small to be
 * worth one (14x14 and 7x7 inputs: 35-50 us a node on the caller alone). A
 * grouped convolution's part waits only for the groups it shares with a
 * part under way (not for the whole copy, as when the copy's parts came
 * first), and reads the groups it copied from its own cache: at one thread
 * too (regnet_x_400mf's 3x3 g2 at 112x112, two groups of 830 KB, 10 %
 * faster than with the whole copy first, its first group read back from
 * L3).
 *
 * Split over threads, an ungrouped convolution of small weights numbers its
 * items by unit first (rows_first): a thread then takes its rows of every
 * panel, the rows the layers before and after it took (a thread's rows of
 * a 3x3 read the rows its last layer wrote, not the half of the channels
 * the other core wrote), and reads all the weights, which fit in L2. At
 * two threads, builds in turns: resnet50 1.8 % faster, resnet18 2.3 %,
 * mobilenet_v2 1.6 %, vgg11 1.2 %, inception_v3 0.6 %, squeezenet,
 * densenet121, U-Net and efficientnet_b0 within 0.6 %; with weights of up
 * to 400 KB resnet18 1.7 %.
 */
#define CONV_PAD_BLOCKS 64
/* Most bytes of weights of a convolution that splits by rows first. */
#define CHAN_ROWS_FIRST_BYTES (160 << 10)

typedef struct conv_job {
	const gc_pk_conv *p;
	const float *x, *bias, *res;
	float *y, *xp;
	const float *xc; /* what the convolution reads: x or the padded copy xp
			  * (pin_sp elements a channel either way) */
	int threads;	 /* the guided split's */
	int64_t rpu;	 /* output rows a unit */
	int64_t chunks;	 /* units a row (rpu 1), or 1 */
	int64_t units;	 /* units a panel: rows, or chunks, then the edge tiles */
	int64_t runs;	 /* the copy's runs of channels: groups, or channels */
	int blocks;	 /* blocks of the copy (0: no copy), of runs */
	float *acc;	 /* CHAN_DEEP_GROUP tiles' sums, CHAN_DEEP_FLOATS a thread,
			  * or NULL: a group's sums on the stack */
	/* per block: 0 not begun, 1 being copied, 2 done */
	atomic_uchar pad_state[CONV_PAD_BLOCKS];
	bool rows_first; /* items (unit, panel), not (panel, unit): g 1 */
} conv_job;

/* What the tiles of one chan_rows call share. */
typedef struct chan_panel {
	const float *w;	   /* the panel's weights */
	int64_t width;	   /* its channels: 32 or 16 */
	int64_t valid;	   /* of them, real */
	const float *bias; /* bias of its first channel, or NULL */
	chan_pf f;	   /* the prefetch of the next panel */
	float *acc;	   /* the group's sums (conv_job.acc), or NULL */
	uintptr_t pf;	   /* where the next tile prefetches */
	int first;	   /* no tile ran yet: none prefetched the first's input */
} chan_panel;

/* Tiles at[0, n) of panel c, all with the steps [s0, s1): each K block
 * over all of them, then their outputs (prefetched in each tile's last
 * block). The blocks depend on the steps alone: s1 - s0 cut in equal blocks
 * (none: one block of no steps, the sums zero). A tile prefetches the input
 * of the next in the block, the last that of the first in the next block
 * (the first tile of a block would find the rows of the block's channels
 * out of cache). */
static GC_PK_TARGET void chan_group(const gc_pk_conv *p, chan_panel *c, const chan_at *at, int n)
{
	float own[CHAN_GROUP][GC_PK_CV_NR * 32] __attribute__((aligned(64)));
	float(*acc)[GC_PK_CV_NR * 32] = c->acc ? (float(*)[GC_PK_CV_NR * 32])c->acc : own;
	int64_t s0 = at[0].s0, s1 = at[0].s1, len = s1 - s0;
	int64_t kb_most = chan_kb(p);
	int64_t blocks = len > kb_most ? (len + kb_most - 1) / kb_most : 1,
		kb = (len + blocks - 1) / blocks;
	int lines = chan_one(p), far = chan_out_far(p);
	for (int64_t k0 = s0, first = 1; first || k0 < s1; k0 += kb, first = 0) {
		int64_t kn = kb < s1 - k0 ? kb : s1 - k0;
		for (int t = 0; t < n; t++) {
			chan_ahead ah = {.pf = c->pf,
					 .pfs = c->f.pfs,
					 .pkoff = at[t].koff + k0,
					 .lines = lines,
					 .near = blocks > 1 || !lines || (c->first && t == 0)
						     ? at[t].x
						     : NULL};
			if (far && k0 + kb >= s1 && at[t].ps == 1) {
				ah.out = at[t].y;
				ah.res = at[t].res;
				ah.ldo = p->out_sp;
				ah.olast = at[t].nr - 1;
				ah.och = (int)c->valid;
			}
			if (t + 1 < n)
				ah.px = tile_new_line(&at[t + 1], 0);
			else if (k0 + kb < s1)
				ah.px = at[0].x, ah.pkoff += kb;
			else
				ah.px = tile_new_line(&at[t], 1);
			at[t].fn(at[t].x, at[t].delta, c->w + k0 * c->width, at[t].koff + k0, kn,
				 acc[t], !first, &ah);
			c->pf += (uintptr_t)(c->f.chunk * kn / p->k);
		}
	}
	c->first = 0;
	for (int t = 0; t < n; t++)
		chan_store(acc[t], at[t].nr, (int)(c->width / 16), c->valid, c->bias, &p->epi,
			   at[t].res, at[t].y, p->out_sp, at[t].ps);
}

/* The steps [*s0, *s1) of a tile of plan row r, pixels [o, o + nr) (rows
 * r and r + 1 when nr is more than the row): those of the window rows at
 * which some of its output rows read the input, not only pads. The steps
 * skipped would add exact zeros (0 * w, w finite) to every sum from zero:
 * the sums are the same. A plan row is an output row, or the rows of a
 * plane as one (column windows: gc_pk_conv_rows). Inception_v3's 7x1 at
 * 17x17 (pads 3) skip 10 % of their steps, fcn_resnet50's 3x3 at
 * dilation 4 on 32x32 8 %, a 3x3 at 14x14 5 %. */
static void tile_steps(const gc_pk_conv *p, int64_t r, int64_t o, int64_t nr, int64_t *s0,
		       int64_t *s1)
{
	int64_t h0, h1; /* the first and last output row (within a plane) */
	if (p->out[2] == p->ow) {
		h0 = r % p->oh;
		h1 = nr > p->ow ? (r + 1) % p->oh : h0;
		if (h1 < h0) /* a pair across planes: the next plane's row 0 */
			h0 = 0, h1 = p->oh - 1;
	} else {
		h0 = o / p->ow;
		h1 = (o + nr - 1) / p->ow;
	}
	/* window row b reads input row h * vs - lo[1] + b * vdil */
	int64_t lo = p->lo[1] - h1 * p->vs, hi = p->in[1] + p->lo[1] - h0 * p->vs;
	int64_t b0 = lo <= 0 ? 0 : (lo + p->vdil - 1) / p->vdil;
	int64_t b1 = hi <= 0 ? 0 : (hi + p->vdil - 1) / p->vdil;
	b1 = b1 < p->kr ? b1 : p->kr;
	if (!p->pad) { /* no pads: every step reads the input */
		b0 = 0;
		b1 = p->kr;
	} else if (b0 >= b1) { /* only pads: no steps */
		b0 = b1 = 0;
	}
	*s0 = b0 * p->row_taps;
	*s1 = b1 * p->row_taps;
}

/* Adds tile at[*n], which the caller wrote there, to the group at[0, *n),
 * running the group first when its steps differ from the group's tiles'
 * (and moving it to at[0]), then when it is full. Written in place, not
 * copied from the caller's: the copy's 64-byte load of the tile's fields,
 * just stored one by one, waited for every store before it to leave the
 * store buffer, the last tile's outputs too (each a line from L2 or
 * beyond): 28 % of a 3 -> 32 3x3 s2 at 224x224 (k 27), on that load. */
static GC_PK_TARGET void chan_add(const gc_pk_conv *p, chan_panel *c, chan_at *at, int *n,
				  int group)
{
	const chan_at *a = &at[*n];
	if (*n && (at[0].s0 != a->s0 || at[0].s1 != a->s1 || at[0].koff != a->koff)) {
		chan_group(p, c, at, *n);
		at[0] = *a;
		*n = 0;
	}
	if (++*n == group)
		chan_group(p, c, at, *n), *n = 0;
}

/* The first pixel of a row its tiles take, how many, and their tiles: the
 * whole row, or its columns inside the input (gc_pk_conv.edge); and the
 * edge columns' tiles of a panel (an edge column's rows cut in tiles). */
static int64_t row_px0(const gc_pk_conv *p)
{
	return p->edge ? p->ol : 0;
}

static int64_t row_pxn(const gc_pk_conv *p)
{
	return p->edge ? p->orr - p->ol : p->out[2];
}

static int64_t row_tiles(const gc_pk_conv *p)
{
	return (row_pxn(p) + GC_PK_CV_NR - 1) / GC_PK_CV_NR;
}

static int64_t edge_tiles(const gc_pk_conv *p)
{
	return p->edge ? p->ecols * ((p->oh + GC_PK_CV_NR - 1) / GC_PK_CV_NR) : 0;
}

/* Edge tiles [e0, e1) of panel c (channels from m0) into the group at: an
 * edge column's rows, from the copy of its windows eg (edge_build), the
 * outputs a column of y (ow apart). */
static GC_PK_TARGET void chan_edges(const gc_pk_conv *p, chan_panel *c, chan_at *at, int *n,
				    int group, const float *eg, const float *rb, float *yb,
				    int64_t m0, int64_t e0, int64_t e1)
{
	int mv = (int)(c->width / 16);
	int64_t oh = p->oh, ow = p->out[2], tpc = (oh + GC_PK_CV_NR - 1) / GC_PK_CV_NR;
	for (int64_t e = e0; e < e1; e++) {
		int64_t col = e / tpc, t = e % tpc;
		int64_t h0 = t * (oh / tpc) + (t < oh % tpc ? t : oh % tpc);
		int nr = (int)(oh / tpc + (t < oh % tpc));
		int64_t o = col < p->ol ? col : p->orr + col - p->ol;
		int64_t y0 = m0 * p->out_sp + h0 * ow + o;
		at[*n] = (chan_at){.x = eg + col * p->k * oh + h0,
				   .fn = chan_tiles[mv - 1][0][nr - 1],
				   .nr = nr,
				   .y = yb + y0,
				   .res = rb ? rb + y0 : NULL,
				   .s1 = p->k,
				   .koff = p->ekoff,
				   .s = 1,
				   .ps = ow};
		chan_add(p, c, at, n, group);
	}
}

/* Output rows [r0, r1) of panel q of group gi, of job j's batch item:
 * the tiles [t0, t1) of each (of rows of more than one tile), or all; in
 * groups of CHAN_GROUP tiles when k has more than one block (of
 * CHAN_DEEP_GROUP, their sums in acc, the thread's part of j->acc, deeper
 * than CHAN_DEEP_K), else one by one; then the edge tiles [e0, e1) (eg: the
 * group's copy of the edge windows). */
static GC_PK_TARGET void chan_rows(const conv_job *j, float *acc, const float *xg,
				   const float *eg, int64_t gi, int64_t q, int64_t r0, int64_t r1,
				   int64_t t0, int64_t t1, int64_t e0, int64_t e1)
{
	const gc_pk_conv *p = j->p;
	const float *bias = j->bias, *rb = j->res;
	float *yb = j->y;
	chan_panel c = {.w = p->w + gi * p->group_floats + 32 * q * p->k,
			.width = panel_width(p->mg, q),
			.acc = acc,
			.first = 1};
	int mv = (int)(c.width / 16);
	int64_t m0 = gi * p->mg + 32 * q;
	c.valid = p->mg - 32 * q < c.width ? p->mg - 32 * q : c.width;
	c.bias = bias ? bias + m0 : NULL;
	const chan_tile_fn *fns = chan_tiles[mv - 1][p->sw - 1];
	int64_t ow = p->out[2], oh = p->out[1];
	int64_t px0 = row_px0(p), pxn = row_pxn(p), tiles = row_tiles(p);
	int pairs = 2 * ow <= GC_PK_CV_NR;
	c.f = chan_prefetch(p, gi, q, c.w,
			    pairs ? (r1 - r0 + 1) / 2 : (r1 - r0) * (t1 - t0) + e1 - e0);
	c.pf = c.f.pf;
	int group = acc ? CHAN_DEEP_GROUP : p->k > chan_kb(p) ? CHAN_GROUP : 1, n = 0;
	chan_at at[CHAN_DEEP_GROUP];
	/* read in place, a row's windows start lo rows and columns before */
	int64_t base = p->edge ? -(p->lo[1] * p->in[2] + p->lo[2]) : 0;
	for (int64_t r = r0; r < r1; r++) {
		int64_t od = r / oh, ohh = r % oh;
		const float *xr = xg + base + od * p->row_step[0] + ohh * p->row_step[1];
		float *yr = yb + m0 * p->out_sp + r * ow;
		const float *rr = rb ? rb + m0 * p->out_sp + r * ow : NULL;
		if (pairs && r + 1 < r1) {
			/* rows r and r + 1 in one tile: their outputs are adjacent */
			int64_t od1 = (r + 1) / oh, oh1 = (r + 1) % oh;
			int64_t delta = (od1 - od) * p->row_step[0] + (oh1 - ohh) * p->row_step[1];
			chan_at *a = &at[n];
			*a = (chan_at){.x = xr,
				       .delta = delta,
				       .fn = chan_tiles2[mv - 1][p->sw - 1][ow - 1],
				       .nr = (int)(2 * ow),
				       .y = yr,
				       .res = rr,
				       .koff = p->koff,
				       .s = p->sw,
				       .ps = 1};
			tile_steps(p, r, 0, 2 * ow, &a->s0, &a->s1);
			chan_add(p, &c, at, &n, group);
			r++;
			continue;
		}
		int64_t o = px0 + t0 * (pxn / tiles) + (t0 < pxn % tiles ? t0 : pxn % tiles);
		for (int64_t t = t0; t < t1; t++) {
			int nr = (int)(pxn / tiles + (t < pxn % tiles));
			chan_at *a = &at[n];
			*a = (chan_at){.x = xr + o * p->sw,
				       .fn = fns[nr - 1],
				       .nr = nr,
				       .y = yr + o,
				       .res = rr ? rr + o : NULL,
				       .koff = p->koff,
				       .s = p->sw,
				       .ps = 1};
			tile_steps(p, r, o, nr, &a->s0, &a->s1);
			chan_add(p, &c, at, &n, group);
			o += nr;
		}
	}
	chan_edges(p, &c, at, &n, group, eg, rb, yb, m0, e0, e1);
	if (n)
		chan_group(p, &c, at, n);
}

/* The windows of the edge columns of groups [g0, g1) of one batch item's
 * input x, in the steps' order (gc_pk_conv.edge): e[group][column][step]
 * [output row], zeros where a window reads pads. By window row: the output
 * rows [h0, h1) whose window row b is inside the input read down the
 * column without a test (a test an element had made it 5 % of a 3x3 s2
 * g4 at 112x112). */
static void edge_build(const gc_pk_conv *p, const float *x, float *e, int64_t g0, int64_t g1)
{
	int64_t oh = p->oh, W = p->in[2], step = p->vs * W;
	for (int64_t gi = g0; gi < g1; gi++)
		for (int64_t col = 0; col < p->ecols; col++) {
			int64_t o = col < p->ol ? col : p->orr + col - p->ol;
			float *d = e + (gi * p->ecols + col) * p->k * oh;
			for (int64_t b = 0; b < p->kr; b++) {
				/* output row h reads input row h vs - lo + b vdil */
				int64_t r0 = b * p->vdil - p->lo[1];
				int64_t h0 = r0 >= 0 ? 0 : (-r0 + p->vs - 1) / p->vs;
				int64_t h1 = p->in[1] - r0 <= 0 ? 0 : (p->in[1] - r0 + p->vs - 1) / p->vs;
				h1 = h1 < oh ? h1 : oh;
				h0 = h0 < h1 ? h0 : h1;
				for (int64_t i = 0; i < p->row_taps; i++, d += oh) {
					int64_t ci = i / p->kc, w = o * p->sw - p->lo[2] + i % p->kc * p->wdil;
					if (w < 0 || w >= W) {
						memset(d, 0, (size_t)oh * sizeof *d);
						continue;
					}
					const float *src =
					    x + (gi * p->cg + ci) * p->in_sp + (h0 * p->vs + r0) * W + w;
					memset(d, 0, (size_t)h0 * sizeof *d);
					for (int64_t h = h0; h < h1; h++, src += step)
						d[h] = *src;
					memset(d + h1, 0, (size_t)(oh - h1) * sizeof *d);
				}
			}
		}
}

/* The zero-padded copy of channels [c0, c1) of one batch item's input, 16
 * floats at a time: the input's elements of each 16 are the next ones of
 * the input (its planes are the padded planes' interiors, in order), loaded
 * and spread to their lanes (vexpandps) by the chunk's mask. Row by row
 * (a masked load and store a row, and libc's copy for long ones) it had
 * taken 18 % of a grouped 3x3 at 7x7 (regnet_x's 400 channels in groups of
 * 16), 12 % at 14x14, 9 % at 28x28. */
static GC_PK_TARGET void conv_pad(const gc_pk_conv *p, const float *x, float *xp, int64_t c0,
				  int64_t c1)
{
	int64_t last = (p->pin_sp + 15) / 16 - 1;
	__mmask16 tail = gc_lanes16(p->pin_sp - 16 * last);
	for (int64_t ci = c0; ci < c1; ci++) {
		const float *src = x + ci * p->in_sp;
		float *d = xp + ci * p->pin_sp;
		for (int64_t q = 0; q <= last; q++) {
			__mmask16 m = p->pmask[q];
			int n = __builtin_popcount(m);
			__m512 v = _mm512_maskz_expand_ps(m, _mm512_maskz_loadu_ps(gc_lanes16(n), src));
			src += n;
			if (q < last)
				_mm512_storeu_ps(d + 16 * q, v);
			else
				_mm512_mask_storeu_ps(d + 16 * q, tail, v);
		}
	}
	if (c1 == p->c) /* the slack after the last channel */
		memset(xp + p->c * p->pin_sp, 0,
		       (size_t)(conv_copy_floats(p) - p->c * p->pin_sp) * sizeof(float));
}

/* The blocks of the padded copy at `threads` threads: of whole groups (as
 * many blocks as fit) where the groups are a few a thread, so that a part
 * copies the groups it reads; else of channels, 2 a thread (groups fewer
 * than the threads' first parts would leave a thread waiting for another's
 * copy of a whole group: 830 KB for regnet's 3x3 g2 32->32 at 112x112). */
static void conv_pad_split(conv_job *j, int threads)
{
	const gc_pk_conv *p = j->p;
	int groups = p->g >= 2 * (threads > 1 ? threads : 1) || p->edge;
	j->runs = groups ? p->g : p->c;
	int64_t b = groups ? CONV_PAD_BLOCKS : threads <= 1 ? 1 : 2 * threads;
	b = b < CONV_PAD_BLOCKS ? b : CONV_PAD_BLOCKS;
	j->blocks = (int)(b < j->runs ? b : j->runs);
}

/* Makes the padded copy of groups [g0, g1) ready: copies its blocks that no
 * thread has begun, then waits for the others. */
static void pad_groups(conv_job *j, int64_t g0, int64_t g1)
{
	const gc_pk_conv *p = j->p;
	int64_t per = p->c / j->runs; /* channels a run */
	int b0 = gc_nn_part_of(j->runs, j->blocks, g0 * p->cg / per);
	int b1 = gc_nn_part_of(j->runs, j->blocks, (g1 * p->cg - 1) / per) + 1;
	for (int b = b0; b < b1; b++) {
		unsigned char free_ = 0;
		if (atomic_load_explicit(&j->pad_state[b], memory_order_relaxed) != 0 ||
		    !atomic_compare_exchange_strong(&j->pad_state[b], &free_, 1))
			continue;
		int64_t lo, hi;
		gc_nn_part_range(j->runs, b, j->blocks, &lo, &hi);
		if (p->edge)
			edge_build(p, j->x, j->xp, lo, hi);
		else
			conv_pad(p, j->x, j->xp, lo * per, hi * per);
		atomic_store_explicit(&j->pad_state[b], 2, memory_order_release);
	}
	for (int b = b0; b < b1; b++)
		gc_nn_par_wait_byte(&j->pad_state[b], 2);
}

/* Items [lo, hi) of the convolution, by thread `slot`. */
static void conv_items(conv_job *j, int64_t lo, int64_t hi, int slot)
{
	const gc_pk_conv *p = j->p;
	float *acc = j->acc ? j->acc + slot * CHAN_DEEP_FLOATS : NULL;
	if (j->rows_first) { /* a row of whole tiles a unit, one group */
		if (j->blocks)
			pad_groups(j, 0, 1);
		for (; lo < hi; lo++) {
			int64_t u = lo / p->panels, r1 = (u + 1) * j->rpu;
			chan_rows(j, acc, j->xc, NULL, 0, lo % p->panels, u * j->rpu,
				  r1 < p->rows ? r1 : p->rows, 0, row_tiles(p), 0, 0);
		}
		return;
	}
	while (lo < hi) {
		int64_t gq = lo / j->units, u0 = lo % j->units;
		int64_t u1 = j->units < u0 + hi - lo ? j->units : u0 + hi - lo;
		int64_t gi = gq / p->panels, q = gq % p->panels;
		if (j->blocks)
			pad_groups(j, gi, gi + 1);
		const float *xg = j->xc + gi * p->cg * p->pin_sp;
		const float *eg = p->edge && p->ecols ? j->xp + gi * p->ecols * p->k * p->oh : NULL;
		int64_t tiles = row_tiles(p), nc = j->chunks, ru = j->units - edge_tiles(p);
		if (nc == 1) {
			int64_t a0 = u0 < ru ? u0 : ru, a1 = u1 < ru ? u1 : ru;
			int64_t r1 = a1 * j->rpu < p->rows ? a1 * j->rpu : p->rows;
			chan_rows(j, acc, xg, eg, gi, q, a0 * j->rpu, r1, 0, tiles, u0 - a0,
				  u1 - a1);
		}
		for (int64_t u = u0; nc > 1 && u < u1;) { /* a row at a time */
			int64_t r = u / nc, c0 = u % nc, c1 = nc < c0 + u1 - u ? nc : c0 + u1 - u;
			chan_rows(j, acc, xg, eg, gi, q, r, r + 1, c0 * tiles / nc,
				  c1 * tiles / nc, 0, 0);
			u += c1 - c0;
		}
		lo += u1 - u0;
	}
}

static void conv_part(void *arg, int part, int parts, int slot)
{
	conv_job *j = arg;
	const gc_pk_conv *p = j->p;
	int64_t lo, hi, per_group = p->panels * j->units;
	gc_nn_guided_range(p->g * per_group, j->threads, 1, part, parts, &lo, &hi);
	conv_items(j, lo, hi, slot);
}

/* The estimated work of one batch item (gc_pk_conv_cost). */
static double item_cost(const gc_pk_conv *p)
{
	return (double)p->g * gc_pk_conv_cost(p->mg, p->k, p->kr * p->kc, p->rows, p->out[2]);
}

/* Batch item b on t threads (gc_nn_par_threads' estimate, made right
 * before), its padded copy at xp; with slot >= 0 (t 1), here alone as
 * thread `slot` (a part of batch_part's job). */
static void conv_item(const gc_pk_conv *p, int64_t b, const float *x, const float *bias,
		      const float *res, float *y, float *xp, float *acc, int t, int slot)
{
	int64_t rpu = 2 * p->out[2] <= GC_PK_CV_NR ? 2 : 1, rows = (p->rows + rpu - 1) / rpu;
	int64_t tiles = row_tiles(p), eunits = edge_tiles(p);
	if (chan_deep(p) && t > GC_PK_GEMM_SLOTS)
		t = GC_PK_GEMM_SLOTS; /* a buffer of sums each */
	/* items for ~8 parts a thread (fewer cannot end together), each
	 * chunk of a row at least two tiles long. Chunks of four had
	 * left a 1x1 at 14x14 (one flat row of 14 tiles a panel: 9
	 * items in 6 parts) with one thread idle for a sixth of it:
	 * mobilenet_v2's 576 -> 96 took 74-76 us at two threads, 66.5-
	 * 67.5 in chunks of two; mobilenet_v2 1.6 %, efficientnet_b0
	 * 2 %, resnet50 1 % faster at two threads, inception_v3 the
	 * same (builds in turns). */
	int64_t items = p->g * p->panels * rows, chunks = 1;
	if (t > 1 && rpu == 1 && items < 8 * t && !p->edge) {
		chunks = (8 * t + items - 1) / items;
		chunks = chunks < tiles / 2 ? chunks : tiles / 2 > 1 ? tiles / 2 : 1;
	}
	int64_t units = rows * chunks + eunits;
	int parts = gc_nn_guided_parts(p->g * p->panels * units, t, 1);
	conv_job j = {.p = p,
		      .x = x + b * p->c * p->in_sp,
		      .bias = bias,
		      .res = res ? res + b * p->m * p->out_sp : NULL,
		      .y = y + b * p->m * p->out_sp,
		      .xc = x + b * p->c * p->in_sp,
		      .threads = t,
		      .rpu = rpu,
		      .chunks = chunks,
		      .units = units,
		      .acc = acc};
	if (p->pad) {
		conv_pad_split(&j, t);
		for (int i = 0; i < j.blocks; i++)
			atomic_init(&j.pad_state[i], 0);
		j.xp = xp;
		j.xc = p->edge ? j.xc : xp;
	}
	j.rows_first = t > 1 && p->g == 1 && !p->edge && chunks == 1 && eunits == 0 &&
		       p->panels > 1 && !chan_deep(p) &&
		       (double)p->m * (double)p->k * sizeof(float) <= CHAN_ROWS_FIRST_BYTES;
	if (slot < 0)
		gc_nn_parallel(t, parts, conv_part, &j);
	else
		conv_part(&j, 0, 1, slot);
}

/*
 * The items of a batch whole to the threads, one a part, each with its
 * padded copy in its thread's part of the scratch (gc_pk_conv.copies); a
 * thread takes the same items in every layer (nn-par.h's home ranges).
 * Split one after another, each item's padded copy and output went half to
 * each core, the next layer read half of them from the other core, and
 * the threads met at each item's end: at two threads resnet18 at batch 8
 * took 0.545x its one-thread time in its nodes' sums (ONNX Runtime 0.52x
 * in the whole run), its 3x3s 0.53-0.62x each; item by item 0.506x, the
 * 3x3s 0.50-0.52x, the model 5 % faster (old and new workers, ABBA).
 */
typedef struct batch_job {
	const gc_pk_conv *p;
	const float *x, *bias, *res;
	float *y, *scratch, *acc;
} batch_job;

static void batch_part(void *arg, int part, int parts, int slot)
{
	(void)parts;
	const batch_job *bj = arg;
	conv_item(bj->p, part, bj->x, bj->bias, bj->res, bj->y,
		  bj->scratch + slot * copy_stride(bj->p), bj->acc, 1, slot);
}

void gc_pk_conv_run(const gc_pk_conv *p, const float *x, const float *bias, const float *res,
		    float *y, float *scratch, int threads)
{
	double cost = item_cost(p);
	float *acc = chan_deep_acc(p, scratch);
	/* a whole number of items a thread that way, the rest one by one; not
	 * with fewer items than threads (or copies), which would leave some
	 * of them idle (and parts are an int) */
	int64_t whole = threads > 1 && threads <= p->copies ? p->n / threads * threads : 0;
	if (whole > INT_MAX)
		whole = INT_MAX / threads * threads;
	if (whole) {
		batch_job bj = {p, x, bias, res, y, scratch, acc};
		int tw = gc_nn_par_threads(threads, cost * (double)whole);
		gc_nn_parallel(tw, (int)whole, batch_part, &bj);
	}
	/* (each estimated right before its job: the run's work, nn-par.h) */
	for (int64_t b = whole; b < p->n; b++)
		conv_item(p, b, x, bias, res, y, scratch, acc, gc_nn_par_threads(threads, cost), -1);
}

#else

void gc_pk_conv_run(const gc_pk_conv *p, const float *x, const float *bias, const float *res,
		    float *y, float *scratch, int threads)
{
	(void)threads;
	(void)p;
	(void)x;
	(void)bias;
	(void)res;
	(void)y;
	(void)scratch;
}

#endif
