/*
 * ImageDecoder (opset 20): the bytes of an encoded image (a 1-D uint8
 * tensor) to its pixels, uint8 (H, W, C): pixel_format RGB or BGR (C = 3)
 * or Grayscale (C = 1). As ONNX's reference (Pillow) decodes them:
 *
 *   - JPEG with libjpeg (Debian's libjpeg62-turbo, the library Pillow
 *     uses, with its defaults: islow DCT, fancy upsampling), PNG with
 *     libpng 1.6 (palette expanded, alpha and tRNS dropped, 16-bit
 *     samples cut to their high byte, low-depth grey widened); both
 *     opened with dlopen on first use (../extlib.h): the runtime links
 *     neither;
 *   - a grey image asked for as RGB / BGR repeats its grey; a colour one
 *     asked for as Grayscale takes Pillow's (ITU-R 601-2) luma,
 *     (19595 R + 38470 G + 7471 B + 32768) >> 16;
 *   - other formats (BMP, GIF, TIFF, WebP, JPEG 2000, PNM) and CMYK JPEGs
 *     are refused by name; bytes that are not a complete image of the
 *     format they start as give an error naming the node (libjpeg's or
 *     libpng's message), never a crash: both libraries report errors
 *     through a longjmp back here.
 *
 * Images of more than 178956970 pixels are refused before anything is
 * allocated, as Pillow refuses them (a decompression bomb: a header can
 * claim 65500 x 65500 pixels in a few bytes).
 *
 * The output's shape depends on the bytes, so the node is prepared when
 * they are known (a constant, or at run time); prepare reads the header,
 * run decodes into the output.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>
/* after jpeglib.h, which it needs */
#include <jerror.h>
#include <png.h>

#include "../extlib.h"
#include "../ops.h"
#include "kutil.h"

enum { FMT_JPEG, FMT_PNG };
enum { PF_RGB, PF_BGR, PF_GRAY };

/* ---- the libraries, opened on first use ---------------------------------- */

enum { J_STD_ERROR, J_CREATE, J_MEM_SRC, J_READ_HEADER, J_START, J_SCANLINES, J_FINISH, J_DESTROY };
static const char *const jpeg_symbols[] = {
    "jpeg_std_error",	      "jpeg_CreateDecompress",	 "jpeg_mem_src",
    "jpeg_read_header",	      "jpeg_start_decompress",	 "jpeg_read_scanlines",
    "jpeg_finish_decompress", "jpeg_destroy_decompress", NULL};
static gc_extlib jpeg_lib = GC_EXTLIB_INIT("libjpeg.so.62", "libjpeg62-turbo", jpeg_symbols);

enum {
	P_CREATE,
	P_INFO,
	P_DESTROY,
	P_SET_READ_FN,
	P_IO_PTR,
	P_ERROR_PTR,
	P_READ_INFO,
	P_IHDR,
	P_PALETTE_TO_RGB,
	P_GRAY_EXPAND,
	P_STRIP_16,
	P_STRIP_ALPHA,
	P_INTERLACE,
	P_UPDATE_INFO,
	P_CHANNELS,
	P_READ_IMAGE,
	P_READ_END,
	P_ERROR
};
static const char *const png_symbols[] = {"png_create_read_struct",
					  "png_create_info_struct",
					  "png_destroy_read_struct",
					  "png_set_read_fn",
					  "png_get_io_ptr",
					  "png_get_error_ptr",
					  "png_read_info",
					  "png_get_IHDR",
					  "png_set_palette_to_rgb",
					  "png_set_expand_gray_1_2_4_to_8",
					  "png_set_strip_16",
					  "png_set_strip_alpha",
					  "png_set_interlace_handling",
					  "png_read_update_info",
					  "png_get_channels",
					  "png_read_image",
					  "png_read_end",
					  "png_error",
					  NULL};
static gc_extlib png_lib = GC_EXTLIB_INIT("libpng16.so.16", "libpng16-16", png_symbols);

#define JF(type, i) ((type)gc_extlib_fn(&jpeg_lib, i))
#define PF(type, i) ((type)gc_extlib_fn(&png_lib, i))

/* ---- one decode: the header only (px NULL), or into px ------------------- */

typedef struct decode {
	const uint8_t *src;
	size_t len, at;		/* PNG: read position */
	int pf;			/* pixel_format */
	int64_t h, w;		/* from the header */
	int64_t want_h, want_w; /* with px: the dims px holds */
	uint8_t *px;		/* the output, h x w x (pf == PF_GRAY ? 1 : 3) */
	uint8_t *scratch;	/* with px: scratch_bytes() (the node's scratch) */
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX + 64];
	bool truncated;
} decode;

/* One decoded row of `ch` channels (1 grey, 3 RGB) into output row y. */
static void put_row(decode *d, int64_t y, const uint8_t *row, int ch)
{
	uint8_t *o = d->px + (size_t)(y * d->w) * (d->pf == PF_GRAY ? 1 : 3);
	for (int64_t x = 0; x < d->w; x++, row += ch) {
		if (d->pf == PF_GRAY) {
			o[x] = ch == 1 ? row[0]
				       : (uint8_t)((row[0] * 19595u + row[1] * 38470u +
						    row[2] * 7471u + 0x8000u) >>
						   16);
			continue;
		}
		uint8_t r = row[0], g = ch == 1 ? row[0] : row[1], b = ch == 1 ? row[0] : row[2];
		o[3 * x] = d->pf == PF_BGR ? b : r;
		o[3 * x + 1] = g;
		o[3 * x + 2] = d->pf == PF_BGR ? r : b;
	}
}

typedef struct jpeg_err {
	struct jpeg_error_mgr pub;
	decode *d;
} jpeg_err;

static void jpeg_fail(j_common_ptr c)
{
	jpeg_err *e = (jpeg_err *)c->err;
	char m[JMSG_LENGTH_MAX];
	c->err->format_message(c, m);
	snprintf(e->d->msg, sizeof e->d->msg, "not a valid JPEG: %s", m);
	longjmp(e->d->jb, 1);
}

static void jpeg_note(j_common_ptr c, int level)
{
	jpeg_err *e = (jpeg_err *)c->err;
	if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF)
		e->d->truncated = true;
}

static void jpeg_quiet(j_common_ptr c)
{
	(void)c;
}

/* The pixels (or the header) of a JPEG; 0 or -1 with d->msg. */
static int decode_jpeg(decode *d)
{
	struct jpeg_decompress_struct ci;
	jpeg_err je;
	uint8_t *row = d->scratch;
	memset(&ci, 0, sizeof ci);
	ci.err = JF(struct jpeg_error_mgr * (*)(struct jpeg_error_mgr *), J_STD_ERROR)(&je.pub);
	je.pub.error_exit = jpeg_fail;
	je.pub.emit_message = jpeg_note;
	je.pub.output_message = jpeg_quiet;
	je.d = d;
	void (*destroy)(j_decompress_ptr) = JF(void (*)(j_decompress_ptr), J_DESTROY);
	if (setjmp(d->jb)) {
		destroy(&ci);
		return -1;
	}
	JF(void (*)(j_decompress_ptr, int, size_t), J_CREATE)(&ci, JPEG_LIB_VERSION, sizeof ci);
	JF(void (*)(j_decompress_ptr, const unsigned char *, unsigned long), J_MEM_SRC)
	(&ci, d->src, (unsigned long)d->len);
	JF(int (*)(j_decompress_ptr, boolean), J_READ_HEADER)(&ci, TRUE);
	int ch = 3;
	if (ci.jpeg_color_space == JCS_GRAYSCALE) {
		ci.out_color_space = JCS_GRAYSCALE;
		ch = 1;
	} else if (ci.jpeg_color_space == JCS_YCbCr || ci.jpeg_color_space == JCS_RGB) {
		ci.out_color_space = JCS_RGB;
	} else {
		snprintf(d->msg, sizeof d->msg,
			 "JPEG in colour space %d (CMYK or YCCK) is not "
			 "supported: graphcc decodes grey, YCbCr and RGB JPEGs",
			 (int)ci.jpeg_color_space);
		destroy(&ci);
		return -1;
	}
	d->h = ci.image_height;
	d->w = ci.image_width;
	if (!d->px || d->h != d->want_h || d->w != d->want_w) {
		if (d->px)
			snprintf(d->msg, sizeof d->msg, "the image changed since prepare");
		destroy(&ci);
		return d->px ? -1 : 0;
	}
	JF(boolean(*)(j_decompress_ptr), J_START)(&ci);
	JDIMENSION(*scan)
	(j_decompress_ptr, JSAMPARRAY, JDIMENSION) =
	    JF(JDIMENSION(*)(j_decompress_ptr, JSAMPARRAY, JDIMENSION), J_SCANLINES);
	while (ci.output_scanline < ci.output_height && !d->truncated) {
		JSAMPROW rows[1] = {row};
		JDIMENSION y = ci.output_scanline;
		if (scan(&ci, rows, 1) != 1)
			break;
		put_row(d, (int64_t)y, row, ch);
	}
	if (!d->truncated)
		JF(boolean(*)(j_decompress_ptr), J_FINISH)(&ci);
	destroy(&ci);
	if (d->truncated) {
		snprintf(d->msg, sizeof d->msg, "not a valid JPEG: the data ends before the image");
		return -1;
	}
	return 0;
}

static void png_fail(png_structp p, png_const_charp m)
{
	decode *d = PF(png_voidp(*)(png_const_structrp), P_ERROR_PTR)(p);
	snprintf(d->msg, sizeof d->msg, "not a valid PNG: %s", m);
	longjmp(d->jb, 1);
}

static void png_warn(png_structp p, png_const_charp m)
{
	(void)p;
	(void)m;
}

static void png_source(png_structp p, png_bytep out, size_t n)
{
	decode *d = PF(png_voidp(*)(png_const_structrp), P_IO_PTR)(p);
	if (n > d->len - d->at)
		PF(void (*)(png_const_structrp, png_const_charp), P_ERROR)
	(p, "the data ends before the image");
	memcpy(out, d->src + d->at, n);
	d->at += n;
}

/* The pixels (or the header) of a PNG; 0 or -1 with d->msg. */
static int decode_png(decode *d)
{
	png_structp p = PF(png_structp(*)(png_const_charp, png_voidp, png_error_ptr, png_error_ptr),
			   P_CREATE)(PNG_LIBPNG_VER_STRING, d, png_fail, png_warn);
	if (!p) {
		snprintf(d->msg, sizeof d->msg, "libpng cannot start (version mismatch?)");
		return -1;
	}
	png_infop volatile info = NULL;
	void (*destroy)(png_structpp, png_infopp, png_infopp) =
	    PF(void (*)(png_structpp, png_infopp, png_infopp), P_DESTROY);
	if (setjmp(d->jb)) {
		png_infop i = info;
		destroy(&p, i ? &i : NULL, NULL);
		return -1;
	}
	info = PF(png_infop(*)(png_const_structrp), P_INFO)(p);
	if (!info)
		PF(void (*)(png_const_structrp, png_const_charp), P_ERROR)(p, "out of memory");
	PF(void (*)(png_structrp, png_voidp, png_rw_ptr), P_SET_READ_FN)(p, d, png_source);
	PF(void (*)(png_structrp, png_inforp), P_READ_INFO)(p, info);
	png_uint_32 w, h;
	int depth, color, interlace;
	PF(png_uint_32(*)(png_const_structrp, png_const_inforp, png_uint_32 *, png_uint_32 *, int *,
			  int *, int *, int *, int *),
	   P_IHDR)
	(p, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
	d->h = h;
	d->w = w;
	png_infop i = info;
	if (!d->px || d->h != d->want_h || d->w != d->want_w) {
		if (d->px)
			snprintf(d->msg, sizeof d->msg, "the image changed since prepare");
		destroy(&p, &i, NULL);
		return d->px ? -1 : 0;
	}
	if (color == PNG_COLOR_TYPE_PALETTE)
		PF(void (*)(png_structrp), P_PALETTE_TO_RGB)(p);
	if ((color & PNG_COLOR_MASK_COLOR) == 0 && depth < 8)
		PF(void (*)(png_structrp), P_GRAY_EXPAND)(p);
	if (depth == 16)
		PF(void (*)(png_structrp), P_STRIP_16)(p);
	if (color & PNG_COLOR_MASK_ALPHA)
		PF(void (*)(png_structrp), P_STRIP_ALPHA)(p);
	PF(int (*)(png_structrp), P_INTERLACE)(p);
	PF(void (*)(png_structrp, png_inforp), P_UPDATE_INFO)(p, info);
	int ch = PF(png_byte(*)(png_const_structrp, png_const_inforp), P_CHANNELS)(p, info);
	if (ch != 1 && ch != 3)
		PF(void (*)(png_const_structrp, png_const_charp), P_ERROR)
	(p, "unexpected channel count after conversion");
	png_bytep *rows = (png_bytep *)(void *)d->scratch, buf = d->scratch + sizeof *rows * h;
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = buf + (size_t)y * w * (size_t)ch;
	PF(void (*)(png_structrp, png_bytepp), P_READ_IMAGE)(p, rows);
	PF(void (*)(png_structrp, png_inforp), P_READ_END)(p, NULL);
	for (png_uint_32 y = 0; y < h; y++)
		put_row(d, (int64_t)y, rows[y], ch);
	destroy(&p, &i, NULL);
	return 0;
}

/* ---- the node ------------------------------------------------------------ */

/* What a decode needs besides the output (the node's scratch, so that run
 * allocates nothing of its own; libjpeg and libpng keep their own state):
 * a row for JPEG, the whole image (at most 3 channels) and its row
 * pointers for PNG, which libpng fills at once (interlacing). */
static uint64_t scratch_bytes(int format, int64_t h, int64_t w)
{
	if (format == FMT_JPEG)
		return (uint64_t)w * 3;
	return (uint64_t)h * (sizeof(png_bytep) + (uint64_t)w * 3);
}

typedef struct image_plan {
	int format, pf;
} image_plan;

/* The format the bytes start as: 0 JPEG, 1 PNG, -1 with *name set for a
 * format graphcc knows but does not decode, -2 for none it knows. */
static int sniff(const uint8_t *b, size_t n, const char **name)
{
	static const struct {
		const char *magic;
		size_t len, at;
		const char *name;
	} other[] = {{"BM", 2, 0, "BMP"},
		     {"GIF8", 4, 0, "GIF"},
		     {"II*\0", 4, 0, "TIFF"},
		     {"MM\0*", 4, 0, "TIFF"},
		     {"WEBP", 4, 8, "WebP"},
		     {"\0\0\0\x0cjP  ", 8, 0, "JPEG 2000"},
		     {"\xff\x4f\xff\x51", 4, 0, "JPEG 2000"}};
	if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return FMT_JPEG;
	if (n >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8))
		return FMT_PNG;
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
		if (n >= other[i].at + other[i].len &&
		    !memcmp(b + other[i].at, other[i].magic, other[i].len)) {
			*name = other[i].name;
			return -1;
		}
	if (n >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7') {
		*name = "PNM";
		return -1;
	}
	return -2;
}

static int run_image(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const image_plan *p = n->state;
	decode d = {.src = in[0]->data, .len = (size_t)gc_tensor_numel(in[0]), .pf = p->pf};
	d.px = out[0]->data;
	d.want_h = out[0]->dims[0];
	d.want_w = out[0]->dims[1];
	d.scratch = k->scratch;
	int rc = p->format == FMT_JPEG ? decode_jpeg(&d) : decode_png(&d);
	if (rc)
		return gc_kerr(k, GC_EINVAL, "encoded_stream: %s", d.msg);
	return 0;
}

int gc_prepare_ImageDecoder(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const char *const formats[] = {"RGB", "BGR", "Grayscale"};
	int pf = gc_attr_pick(k, "pixel_format", formats[0], formats, 3);
	if (pf < 0)
		return gc_kok(k);
	const gc_tensor *x = in[0];
	if (x->dtype != GC_DTYPE_UINT8 || x->rank != 1)
		return gc_kerr(k, GC_EINVAL,
			       "input 'encoded_stream' must be a 1-D uint8 tensor (the bytes of "
			       "an image)");
	if (!x->data)
		return gc_kneed_value(k, "the output's shape depends on the image bytes of input "
					 "'encoded_stream', which are not known when the program "
					 "is built (give them as a constant or an input value)");
	const char *name = NULL;
	int format = sniff(x->data, (size_t)x->dims[0], &name);
	if (format == -1)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "encoded_stream is a %s image: graphcc decodes JPEG and PNG only",
			       name);
	if (format < 0)
		return gc_kerr(k, GC_EINVAL,
			       "encoded_stream is not an image: its bytes start "
			       "neither as a JPEG nor as a PNG");
	gc_extlib *lib = format == FMT_JPEG ? &jpeg_lib : &png_lib;
	gc_error e = {0};
	if (gc_extlib_open(lib, &e))
		return gc_kerr(k, e.code, "ImageDecoder needs %s: %s",
			       format == FMT_JPEG ? "libjpeg" : "libpng", e.msg);
	decode d = {.src = x->data, .len = (size_t)x->dims[0], .pf = pf};
	if ((format == FMT_JPEG ? decode_jpeg(&d) : decode_png(&d)) != 0)
		return gc_kerr(k, GC_EINVAL, "encoded_stream: %s", d.msg);
	/* a header may claim any size for a few bytes: Pillow (ONNX's
	 * reference) refuses more than 2 * 89478485 pixels as a decompression
	 * bomb, and so does graphcc, before allocating anything */
	if (d.h * d.w > 2 * INT64_C(89478485))
		return gc_kerr(k, GC_ELIMIT,
			       "encoded_stream says the image is %" PRId64 " x %" PRId64
			       " pixels, over Pillow's decompression-bomb bound of %" PRId64
			       " pixels (ONNX's reference refuses it too)",
			       d.h, d.w, 2 * INT64_C(89478485));
	int64_t dims[3] = {d.h, d.w, pf == PF_GRAY ? 1 : 3};
	if (gc_kout_fits(k, 0, GC_DTYPE_UINT8, 3, dims))
		return gc_kok(k);
	image_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->format = format;
	p->pf = pf;
	n->scratch_bytes = scratch_bytes(format, d.h, d.w);
	gc_set_shape(out[0], GC_DTYPE_UINT8, 3, dims);
	n->run = run_image;
	return 0;
}
