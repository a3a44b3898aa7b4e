/*
 * The integer convolution of ConvInteger and QLinearConv (quant.c) on the
 * integer GEMM's tiles (qgemm.h): per image and group, C [mg][pixels] =
 * W [mg][kdim] x columns [kdim][pixels], the weights' rows read as unsigned
 * bytes (int8 + 128, packed once at prepare with their sums), the image as
 * signed bytes (uint8 - 128), and the output (int32, or requantized to 8
 * bits with its per-channel scale, bias and fused Relu) written by the
 * GEMM's epilogue in NCHW.
 *
 * Stride 1 (any kernel, padding, dilation): no im2col. The image is copied
 * once into channel quads ([c/4][padded pixels][4 channels], the padding
 * holding x's zero point), the signs swapped (kl.a_signed: the weights as
 * signed bytes, uint8 w - 128; the pixels unsigned, int8 x + 128), so that
 * for weights whose zero point is 0 (the symmetric int8 of QDQ models) no
 * per-pixel sums are needed; output pixels are numbered along the padded
 * rows, so 16 neighbours of a tap's quad are 64 contiguous bytes: the tile
 * reads them in place, one tap after another (the weights' rows ordered
 * tap by tap, 4 channels at a time). The pixels of the padding columns are
 * computed and dropped; where they are many (small images: 7x7 outputs
 * along rows of 9), the tiles are turned round (prows): up to 8 output
 * pixels as the rows, their quads read in place from the same planes,
 * against 48 output channels of weights packed as a GEMM's B, so that no
 * padding pixel is computed. Other strides: phases as extra channels
 * (qconv.c); with dilation too, a small im2col of a block of pixels,
 * packed into chunks, each thread its own blocks.
 */
#ifndef GC_K_QCONV_H
#define GC_K_QCONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qgemm.h"

typedef struct gc_qconv {
	int64_t n, c, m, group;
	int64_t in[3], k[3], out[3], stride[3], dil[3], pad[3];
	bool x_unsigned, w_unsigned;
	bool quads; /* stride 1: the in-place channel-quad path */
	bool pmajor;	/* quads: phase-major virtual channels (qconv.c) */
	bool prows;	/* quads: output pixels as the tiles' rows (qconv.c) */
	int64_t npairs; /* quads: (virtual tap, phase) pairs with a real tap */
	gc_qgemm_isa isa;
	/* m rows of gc_qg_k4(kdim) bytes (prows: as a packed B of those rows'
	 * columns, qgemm.h), then m int32 sums (gc_qconv_pack_w), or NULL:
	 * packed into scratch on each run */
	const void *wpack;
} gc_qconv;

/* The inputs of one run. */
typedef struct gc_qconv_args {
	const void *x, *w; /* w: read only without wpack */
	int32_t zx;	   /* x's zero point */
	const void *zw;	   /* w's zero point (w's type): per output channel or one; NULL: 0 */
	bool zw_rows;
	const int32_t *bias; /* or NULL */
	/* QLinearConv: the scales, y's zero point, type and a fused Relu */
	bool requant, relu, y_unsigned;
	float xs, zy;
	const float *ws;
	bool ws_rows;
	double ys;
	void *y;
} gc_qconv_args;

/* Sets q->quads (the other fields set), then: bytes of the packed weights,
 * and the packing of w (ONNX's [m][c/g][k...]). */
void gc_qconv_plan(gc_qconv *q);
uint64_t gc_qconv_w_bytes(const gc_qconv *q);
void gc_qconv_pack_w(const gc_qconv *q, const void *w, void *dst);
/* The packed weights' key (gc_kpacked): their layout and shape, "q8w4 M
 * CG K0 K1 K2 S0 S1 S2 QUADS W_UNSIGNED" ("q8wp ...": prows' panels); and
 * the weights ([m][cg][k...],
 * nbytes) back from such a packing: 0, or GC_EINVAL when the key is not one
 * or does not fit the sizes (gc_packed_unpack). */
void gc_qconv_key(const gc_qconv *q, char *key, size_t size);
int gc_qconv_unpack(const char *key, const void *src, uint64_t src_bytes, void *dst,
		    uint64_t nbytes);
/* Row ranges to cut each block of pixels into for th threads (at least 4
 * items a thread, their number a multiple of th where the row tiles allow). */
int64_t gc_qconv_split_rows(int th, int64_t blocks, int64_t row_tiles);
/* Scratch bytes of gc_qconv_run. */
uint64_t gc_qconv_scratch(const gc_qconv *q);
void gc_qconv_run(const gc_qconv *q, const gc_qconv_args *a, void *scratch, int threads);

#endif
