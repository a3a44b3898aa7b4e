/* The integer convolution on the integer GEMM (qconv.h). */
#include "qconv.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "nn-par.h"
#include "nn.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define QC_SSE2 1
#define T512BW __attribute__((target("avx2,avx512f,avx512bw")))
#endif

GC_NN_O3

#define CW (GC_QG_NR * GC_QG_NC) /* a chunk's pixels */
#define SLOTS 4			 /* threads with their own block buffers */

static int64_t kdim_of(const gc_qconv *q)
{
	return q->c / q->group * q->k[0] * q->k[1] * q->k[2];
}

static int64_t osz_of(const gc_qconv *q)
{
	return q->out[0] * q->out[1] * q->out[2];
}

static int64_t taps_of(const gc_qconv *q)
{
	return q->k[0] * q->k[1] * q->k[2];
}

/*
 * The quad path's view of the convolution as one of stride 1: along an axis
 * of stride s > 1 (dilation 1), the padded image splits into min(s, k)
 * phases (pixels s v + ph), each a channel of its own, and the kernel into
 * ceil(k / s) taps (real tap s t + ph; past k: weight 0). Not with pixels
 * as the tiles' rows (prows): a row's pixel is read wherever it is, so
 * the planes are the padded image itself, output pixel o at s o (ostep).
 */
static int64_t pstride(const gc_qconv *q, int i)
{
	return q->prows ? 1 : q->stride[i];
}

static int64_t ostep(const gc_qconv *q, int i)
{
	return q->prows ? q->stride[i] : 1;
}

static int64_t phases(const gc_qconv *q, int i)
{
	int64_t s = pstride(q, i);
	return s == 1 ? 1 : q->k[i] < s ? q->k[i] : s;
}

static int64_t vtaps(const gc_qconv *q, int i)
{
	int64_t s = pstride(q, i);
	return s == 1 ? q->k[i] : (q->k[i] + s - 1) / s;
}

/* The distance (in pixels along the axis) between two virtual taps. */
static int64_t vdil(const gc_qconv *q, int i)
{
	return pstride(q, i) == 1 ? q->dil[i] : 1;
}

static int64_t vtaps_of(const gc_qconv *q)
{
	return vtaps(q, 0) * vtaps(q, 1) * vtaps(q, 2);
}

static int64_t nph_of(const gc_qconv *q)
{
	return phases(q, 0) * phases(q, 1) * phases(q, 2);
}

/* The real tap of virtual tap t and phase ph along axis i, or -1. */
static int64_t real_tap(const gc_qconv *q, int i, int64_t t, int64_t ph)
{
	int64_t k = t * pstride(q, i) + ph;
	return k < q->k[i] ? k : -1;
}

/* Whether virtual tap t (linear) and phase ph (linear) meet a real tap;
 * *kt: its linear index in the kernel. */
static bool real_pair(const gc_qconv *q, int64_t t, int64_t ph, int64_t *kt)
{
	int64_t t2 = t % vtaps(q, 2), t1 = t / vtaps(q, 2) % vtaps(q, 1), t0 = t / vtaps(q, 2) / vtaps(q, 1);
	int64_t h2 = ph % phases(q, 2), h1 = ph / phases(q, 2) % phases(q, 1);
	int64_t h0 = ph / phases(q, 2) / phases(q, 1);
	int64_t r0 = real_tap(q, 0, t0, h0), r1 = real_tap(q, 1, t1, h1), r2 = real_tap(q, 2, t2, h2);
	*kt = (r0 * q->k[1] + r1) * q->k[2] + r2;
	return r0 >= 0 && r1 >= 0 && r2 >= 0;
}

/* The group's channels rounded up to quads. */
static int64_t cgp_of(const gc_qconv *q)
{
	return (q->c / q->group + 3) / 4 * 4;
}

/* Pairs (virtual tap, phase) that meet a real tap. */
static int64_t npairs_of(const gc_qconv *q)
{
	int64_t n = 0, kt;
	for (int64_t t = 0; t < vtaps_of(q); t++)
		for (int64_t ph = 0; ph < nph_of(q); ph++)
			n += real_pair(q, t, ph, &kt);
	return n;
}

/*
 * Two layouts of the virtual channels. Channel-major (vc = c nph + ph): a
 * quad holds a channel's phases, and every virtual tap reads all of them
 * (the pairs without a real tap weigh 0: 16 terms of 9 for a 3x3 kernel
 * of stride 2). Phase-major (vc = ph cgp + c, each phase's channels rounded
 * up to quads): a k-loop tap is a pair (virtual tap, phase) with a real
 * tap, the others skipped. Phase-major where it has fewer terms (many
 * channels), channel-major else (the 3 channels of a first layer).
 */
static bool pmajor(const gc_qconv *q)
{
	int64_t cm = vtaps_of(q) * ((q->c / q->group * nph_of(q) + 3) / 4 * 4);
	return nph_of(q) > 1 && npairs_of(q) * cgp_of(q) < cm;
}

/* Virtual channels of a group (channel x phase), rounded up to quads. */
static int64_t cg4_of(const gc_qconv *q)
{
	return q->pmajor ? nph_of(q) * cgp_of(q) : (q->c / q->group * nph_of(q) + 3) / 4 * 4;
}

/* The k loop's taps and quads per tap. */
static int64_t ktaps_of(const gc_qconv *q)
{
	return q->pmajor ? q->npairs : vtaps_of(q);
}

static int64_t kqt_of(const gc_qconv *q)
{
	return (q->pmajor ? cgp_of(q) : cg4_of(q)) / 4;
}

/* The virtual image's extent along axis i: all a tap reads. */
static int64_t pdim(const gc_qconv *q, int i)
{
	return (q->out[i] - 1) * ostep(q, i) + 1 + (vtaps(q, i) - 1) * vdil(q, i);
}

/* Its linear output pixels: to the last valid one (along padded rows). */
static int64_t lin_of(const gc_qconv *q)
{
	return (((q->out[0] - 1) * ostep(q, 0) * pdim(q, 1) + (q->out[1] - 1) * ostep(q, 1)) *
		pdim(q, 2)) +
	       (q->out[2] - 1) * ostep(q, 2) + 1;
}

/* Bytes of a channel quad's plane: the padded pixels and the 48 a last
 * chunk reads past them. */
static uint64_t plane_bytes(const gc_qconv *q)
{
	return gc_nn_align((uint64_t)(pdim(q, 0) * pdim(q, 1) * pdim(q, 2) + CW) * 4);
}

/* Columns a tile row computes for n columns: whole chunks, the last one's
 * panels. */
static int64_t tile_cols(int64_t n)
{
	return n / CW * CW + (n % CW + GC_QG_NR - 1) / GC_QG_NR * GC_QG_NR;
}

/*
 * Pixels as the tiles' rows (prows): a tile reads any 8 output pixels'
 * quads in place, so none of the padding columns' pixels is computed (the
 * other way, 16 neighbours along the padded rows a panel, a 7x7 output
 * computes 64 pixels for 49), and a stride needs no phases (the planes are
 * the padded image), at the price of a transposed epilogue (about 5% of a
 * tile of 48 channels' 576 terms). Where it computes enough fewer terms,
 * phase-major planes counted 10% dearer (their packing: 11% of a 3x3/2 of
 * 128 channels, the padded image's 2%); one group only (a chunk of 48
 * channels within it). The phases of the 3 channels of a first layer stay
 * (their 16 x 12 terms a pixel against 49 x 4 taps of stride-1 planes).
 */
static bool prows(const gc_qconv *q)
{
	int64_t mg = q->m / q->group;
	double pix_cols = (double)((mg + GC_QG_MR - 1) / GC_QG_MR * GC_QG_MR) *
			  (double)tile_cols(lin_of(q)) * (q->pmajor ? 1.1 : 1.0);
	double pix_rows = (double)osz_of(q) * (double)tile_cols(mg);
	return q->group == 1 && pix_rows * 1.06 < pix_cols;
}

/* The quad path's phases, once q->quads and q->prows are set. */
static void plan_phases(gc_qconv *q)
{
	q->pmajor = q->quads && pmajor(q);
	q->npairs = q->quads ? npairs_of(q) : 0;
}

void gc_qconv_plan(gc_qconv *q)
{
	q->quads = true;
	for (int i = 0; i < 3; i++)
		q->quads &= q->stride[i] == 1 || q->dil[i] == 1;
	q->prows = false;
	plan_phases(q);
	q->prows = q->quads && prows(q);
	plan_phases(q);
}

/* Panels of a chunk at column c0 of n columns. */
static int chunk_np(int64_t c0, int64_t n)
{
	int64_t w = n - c0 < CW ? n - c0 : CW;
	return (int)((w + GC_QG_NR - 1) / GC_QG_NR);
}

/* Row length of the packed weights. */
static int64_t wrow_of(const gc_qconv *q)
{
	return q->quads ? ktaps_of(q) * kqt_of(q) * 4 : gc_qg_k4(kdim_of(q));
}

/* Chunks a block of pixels holds: two, or one for the widest kernels. */
static int64_t block_chunks(const gc_qconv *q)
{
	return kdim_of(q) > 2304 ? 1 : 2;
}

/* The packed weights' rows: m of wrow bytes, or (prows) the panels of
 * the wrow x m matrix of their columns, chunk-major as a packed B (qgemm.h)
 * but the last chunk only its panels (a quad np * 64 bytes: no chunk of
 * 48 for 16 channels). */
static uint64_t wdata_bytes(const gc_qconv *q)
{
	int64_t rows = q->prows ? (q->m + GC_QG_NR - 1) / GC_QG_NR * GC_QG_NR : q->m;
	return gc_nn_align((uint64_t)(rows * wrow_of(q)));
}

/* Where term `at` of weight row i is kept in those bytes. */
static int64_t wpos(const gc_qconv *q, int64_t i, int64_t at)
{
	if (!q->prows)
		return i * wrow_of(q) + at;
	int64_t c0 = i / CW * CW, p = (i - c0) / GC_QG_NR;
	return c0 * wrow_of(q) + at / 4 * chunk_np(c0, q->m) * 64 + p * 64 + i % GC_QG_NR * 4 +
	       at % 4;
}

/* The packed weights: m rows, their sums, and (quad path) the row of 1s
 * and 0s marking the real terms, to sum each pixel's terms with. */
uint64_t gc_qconv_w_bytes(const gc_qconv *q)
{
	return wdata_bytes(q) + gc_nn_align((uint64_t)q->m * 4) + (uint64_t)wrow_of(q);
}

/* The channel-quad path's weight rows term by term: fn(u, at, src) for
 * each real term, at its place in a row, src = c taps + kt its index in a
 * weight's [cg][k...]. */
static void each_term(const gc_qconv *q, void (*fn)(void *u, int64_t at, int64_t src), void *u)
{
	int64_t cg = q->c / q->group, pr = 0, kt, cgp = cgp_of(q), cg4 = cg4_of(q), nph = nph_of(q);
	for (int64_t t = 0; t < vtaps_of(q); t++)
		for (int64_t ph = 0; ph < nph; ph++) {
			if (!real_pair(q, t, ph, &kt))
				continue;
			for (int64_t c = 0; c < cg; c++)
				fn(u, q->pmajor ? pr * cgp + c : t * cg4 + c * nph + ph, c * taps_of(q) + kt);
			pr++;
		}
}

typedef struct wterms {
	const gc_qconv *q;
	uint8_t *rows, *mask; /* mask: the packing's row of real terms */
	const uint8_t *w;     /* weights, or (unpack) written */
	int64_t kdim;
	uint8_t flip;
} wterms;

static void pack_term(void *u, int64_t at, int64_t src)
{
	const wterms *t = u;
	t->mask[at] = 1;
	for (int64_t i = 0; i < t->q->m; i++)
		t->rows[wpos(t->q, i, at)] = t->w[i * t->kdim + src] ^ t->flip;
}

static void unpack_term(void *u, int64_t at, int64_t src)
{
	const wterms *t = u;
	for (int64_t i = 0; i < t->q->m; i++)
		((uint8_t *)t->w)[i * t->kdim + src] = t->rows[wpos(t->q, i, at)] ^ t->flip;
}

void gc_qconv_pack_w(const gc_qconv *q, const void *w, void *dst)
{
	int64_t kdim = kdim_of(q), row = wrow_of(q);
	uint8_t *rows = dst;
	int32_t *sums = (int32_t *)(rows + wdata_bytes(q));
	uint8_t *mask = (uint8_t *)sums + gc_nn_align((uint64_t)q->m * 4);
	if (!q->quads) {
		gc_qgemm_pack_a(w, q->w_unsigned, q->m, kdim, kdim, rows, sums);
		memset(mask, 1, (size_t)row);
		return;
	}
	/* row i: virtual tap by virtual tap, the group's channels x phases
	 * (rounded up to quads: 0), as signed bytes (uint8 w - 128) */
	memset(rows, 0, (size_t)wdata_bytes(q));
	memset(mask, 0, (size_t)row);
	wterms tc = { .q = q, .rows = rows, .mask = mask, .w = w, .kdim = kdim,
		      .flip = q->w_unsigned ? 0x80 : 0 };
	each_term(q, pack_term, &tc);
	for (int64_t i = 0; i < q->m; i++) {
		int32_t sum = 0;
		for (int64_t a = 0; a < row; a++)
			sum += (int8_t)rows[wpos(q, i, a)];
		sums[i] = sum;
	}
}

void gc_qconv_key(const gc_qconv *q, char *key, size_t size)
{
	snprintf(key, size,
		 "q8w%c %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64
		 " %" PRId64 " %" PRId64 " %d %d",
		 q->prows ? 'p' : '4', q->m, q->c / q->group, q->k[0], q->k[1], q->k[2],
		 q->stride[0], q->stride[1], q->stride[2], (int)q->quads, (int)q->w_unsigned);
}

/* gc_qconv_pack_w backwards: w[i][c][kt] from the rows. */
static void unpack_w(const gc_qconv *q, const uint8_t *rows, uint8_t *w)
{
	int64_t kdim = kdim_of(q), row = wrow_of(q);
	if (!q->quads) { /* gc_qgemm_pack_a's rows: int8 + 128 */
		for (int64_t i = 0; i < q->m; i++)
			for (int64_t t = 0; t < kdim; t++)
				w[i * kdim + t] = rows[i * row + t] ^ (q->w_unsigned ? 0 : 0x80);
		return;
	}
	wterms tc = { .q = q, .rows = (uint8_t *)rows, .w = w, .kdim = kdim,
		      .flip = q->w_unsigned ? 0x80 : 0 };
	each_term(q, unpack_term, &tc);
}

int gc_qconv_unpack(const char *key, const void *src, uint64_t src_bytes, void *dst,
		    uint64_t nbytes)
{
	int64_t v[10];
	char layout, tail;
	if (sscanf(key,
		   "q8w%c %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64
		   " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %c",
		   &layout, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
		   &tail) != 11 ||
	    (layout != '4' && layout != 'p'))
		return GC_EINVAL;
	/* every number bounded, the plain size the key's (which the file's
	 * packed size bounds), before any size is computed from them */
	double plain = 1;
	for (int i = 0; i < 8; i++) {
		if (v[i] < 1 || v[i] > ((int64_t)1 << 30))
			return GC_EINVAL;
		plain *= i < 5 ? (double)v[i] : 1;
	}
	if (v[8] < 0 || v[8] > 1 || v[9] < 0 || v[9] > 1 || plain != (double)nbytes ||
	    nbytes > src_bytes || (layout == 'p' && !v[8]))
		return GC_EINVAL;
	gc_qconv q = { .n = 1, .c = v[1], .m = v[0], .group = 1, .w_unsigned = v[9] != 0,
		       .isa = GC_QGEMM_C };
	for (int i = 0; i < 3; i++) {
		q.k[i] = v[2 + i];
		q.stride[i] = v[5 + i];
		q.dil[i] = 1;
	}
	q.quads = v[8] != 0;
	q.prows = layout == 'p';
	plan_phases(&q);
	/* the phases and taps stay within the kernel's: sizes below the plain's
	 * times the stride volume (bounded above) */
	if ((double)gc_qconv_w_bytes(&q) != (double)src_bytes)
		return GC_EINVAL;
	unpack_w(&q, src, dst);
	return 0;
}

/* One slot's buffers: the block's columns (im2col), the packed block, its
 * column sums. */
static uint64_t slot_bytes(const gc_qconv *q)
{
	int64_t bw = block_chunks(q) * CW, kdim = kdim_of(q);
	return gc_nn_align((uint64_t)(kdim * bw)) + gc_nn_align((uint64_t)(gc_qg_k4(kdim) * bw)) +
	       gc_nn_align((uint64_t)bw * 4);
}

/* Per-channel terms of the epilogue: rowc, rowz (int32) and scale (float). */
static uint64_t rows_bytes(const gc_qconv *q)
{
	return 3 * gc_nn_align((uint64_t)q->m * 4);
}

/* The quad path's run memory: the planes, the tap offsets, the column sums. */
static uint64_t quads_bytes(const gc_qconv *q)
{
	int64_t chunks = (lin_of(q) + CW - 1) / CW;
	return (uint64_t)(cg4_of(q) / 4) * plane_bytes(q) + gc_nn_align((uint64_t)ktaps_of(q) * 8) +
	       gc_nn_align((uint64_t)(chunks * CW) * 4);
}

uint64_t gc_qconv_scratch(const gc_qconv *q)
{
	return (q->quads ? quads_bytes(q) : SLOTS * slot_bytes(q)) + rows_bytes(q) +
	       (q->wpack ? 0 : gc_nn_align(gc_qconv_w_bytes(q)));
}

/* [*lo, *hi): the outputs along the last axis whose tap k2 is inside the
 * input (the others read padding). */
static void span(const gc_qconv *q, int64_t k2, int64_t *lo, int64_t *hi)
{
	int64_t off = k2 * q->dil[2] - q->pad[2], s = q->stride[2], n = q->out[2];
	int64_t a = off >= 0 ? 0 : (-off + s - 1) / s;
	int64_t b = q->in[2] - 1 - off < 0 ? 0 : (q->in[2] - 1 - off) / s + 1;
	*lo = a < n ? a : n;
	*hi = b < n ? b : n;
	if (*hi < *lo)
		*hi = *lo;
}

/* Columns [kdim][bw] of pixels [j0, j0 + nj) of one image and group (xg:
 * its first channel), taps in the padding and pixels past nj holding zx. */
static void im2col_block(const gc_qconv *q, const uint8_t *xg, uint8_t zx, int64_t j0, int64_t nj,
			 uint8_t *col, int64_t bw)
{
	int64_t cg = q->c / q->group, isz = q->in[0] * q->in[1] * q->in[2], n2 = q->out[2];
	for (int64_t ci = 0; ci < cg; ci++)
		for (int64_t k0 = 0; k0 < q->k[0]; k0++)
			for (int64_t k1 = 0; k1 < q->k[1]; k1++)
				for (int64_t k2 = 0; k2 < q->k[2]; k2++, col += bw) {
					int64_t lo, hi;
					span(q, k2, &lo, &hi);
					const uint8_t *xc = xg + ci * isz;
					for (int64_t j = j0; j < j0 + nj;) {
						int64_t o01 = j / n2, o2 = j % n2;
						int64_t e = o2 + (j0 + nj - j) < n2 ? o2 + (j0 + nj - j) : n2;
						int64_t o0 = o01 / q->out[1], o1 = o01 % q->out[1];
						int64_t i0 = o0 * q->stride[0] - q->pad[0] + k0 * q->dil[0];
						int64_t i1 = o1 * q->stride[1] - q->pad[1] + k1 * q->dil[1];
						uint8_t *o = col + (j - j0) - o2;
						int64_t a = lo > o2 ? lo : o2, b = hi < e ? hi : e;
						if (i0 < 0 || i0 >= q->in[0] || i1 < 0 || i1 >= q->in[1] || a >= b) {
							memset(o + o2, zx, (size_t)(e - o2));
						} else {
							const uint8_t *xr = xc + (i0 * q->in[1] + i1) * q->in[2] -
									    q->pad[2] + k2 * q->dil[2];
							memset(o + o2, zx, (size_t)(a - o2));
							if (q->stride[2] == 1)
								memcpy(o + a, xr + a, (size_t)(b - a));
							else
								for (int64_t t = a; t < b; t++)
									o[t] = xr[t * q->stride[2]];
							memset(o + b, zx, (size_t)(e - b));
						}
						j += e - o2;
					}
					memset(col + nj, zx, (size_t)(bw - nj));
				}
}

/* 16 pixels of four rows r[t] + x as 16 quads (row t's byte at quad byte
 * t), the top bit flipped for uint8 (uint8 - 128); a NULL row gives 0. */
static inline void interleave16(const uint8_t *const r[4], int64_t x, bool flip, int8_t *d)
{
#ifdef QC_SSE2
	__m128i fx = _mm_set1_epi8(flip ? (char)0x80 : 0), v[4];
	for (int t = 0; t < 4; t++)
		v[t] = r[t] ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(r[t] + x)), fx)
			    : _mm_setzero_si128();
	__m128i a = _mm_unpacklo_epi8(v[0], v[1]), b = _mm_unpackhi_epi8(v[0], v[1]);
	__m128i c = _mm_unpacklo_epi8(v[2], v[3]), e = _mm_unpackhi_epi8(v[2], v[3]);
	_mm_storeu_si128((__m128i *)d, _mm_unpacklo_epi16(a, c));
	_mm_storeu_si128((__m128i *)(d + 16), _mm_unpackhi_epi16(a, c));
	_mm_storeu_si128((__m128i *)(d + 32), _mm_unpacklo_epi16(b, e));
	_mm_storeu_si128((__m128i *)(d + 48), _mm_unpackhi_epi16(b, e));
#else
	for (int t = 0; t < 4; t++)
		for (int j = 0; j < 16; j++)
			d[j * 4 + t] = (int8_t)(r[t] ? r[t][x + j] ^ (flip ? 0x80 : 0) : 0);
#endif
}

/* Packs columns rows [kdim] (row t at col + t * ld, pixels [0, np * 16))
 * into np panels of kq quads (signed: uint8 - 128), chunk-major (qgemm.h). */
static void pack_cols(const uint8_t *col, int64_t ld, int64_t kdim, int64_t np, bool flip,
		      int8_t *dst)
{
	int64_t kq = gc_qg_k4(kdim) / 4;
	for (int64_t p = 0; p < np; p++) {
		int8_t *d = dst + p / GC_QG_NC * kq * GC_QG_QSTRIDE + p % GC_QG_NC * 64;
		for (int64_t qq = 0; qq < kq; qq++, d += GC_QG_QSTRIDE) {
			const uint8_t *r[4];
			for (int t = 0; t < 4; t++)
				r[t] = qq * 4 + t < kdim ? col + (qq * 4 + t) * ld : NULL;
			interleave16(r, p * GC_QG_NR, flip, d);
		}
	}
}

typedef struct cjob {
	const gc_qconv *q;
	const uint8_t *xg; /* the image's group's first channel */
	const uint8_t *wrows;
	int64_t kdim, osz, mg, m0, nblocks, rsplit, row_tiles;
	uint8_t zx;
	char *slots;
	gc_qgemm_out out; /* rows of this group */
} cjob;

static void conv_part(void *arg, int part, int parts, int slot)
{
	const cjob *j = arg;
	const gc_qconv *q = j->q;
	int64_t lo, hi, bc = block_chunks(q), bw = bc * CW, k4 = gc_qg_k4(j->kdim), kq = k4 / 4;
	char *sl = j->slots + (uint64_t)slot * slot_bytes(q);
	uint8_t *col = (uint8_t *)sl;
	int8_t *pk = (int8_t *)(sl + gc_nn_align((uint64_t)(j->kdim * bw)));
	int32_t *colv = (int32_t *)((char *)pk + gc_nn_align((uint64_t)(k4 * bw)));
	static const uint8_t ones[4] = { 1, 1, 1, 1 };
	const uint8_t *one = ones;
	int64_t packed = -1;
	gc_qgemm_kloop kl = { .a_ks = 4, .ntaps = 1, .kqt = kq, .cs = GC_QG_QSTRIDE };
	gc_qgemm_kloop k1 = kl; /* the columns' sums: a row of ones */
	k1.a_ks = 0;
	int32_t acc[GC_QG_MR * CW];
	gc_nn_part_range(j->nblocks * j->rsplit, part, parts, &lo, &hi);
	for (int64_t it = lo; it < hi; it++) {
		int64_t blk = it / j->rsplit, rs = it % j->rsplit, j0 = blk * bw;
		int64_t nj = j->osz - j0 < bw ? j->osz - j0 : bw, nch = (nj + CW - 1) / CW;
		if (blk != packed) {
			im2col_block(q, j->xg, j->zx, j0, nj, col, bw);
			pack_cols(col, bw, j->kdim, nch * GC_QG_NC, q->x_unsigned, pk);
			for (int64_t ch = 0; ch < nch; ch++)
				gc_qgemm_tile(q->isa, &one, 1, chunk_np(ch * CW, nj), &k1,
					      pk + ch * kq * GC_QG_QSTRIDE,
					      colv + ch * CW);
			packed = blk;
		}
		gc_qgemm_out o = j->out;
		o.colv = colv;
		o.col0 = j0;
		int64_t t0, t1;
		gc_nn_part_range(j->row_tiles, (int)rs, (int)j->rsplit, &t0, &t1);
		for (int64_t t = t0; t < t1; t++) {
			int64_t i0 = t * GC_QG_MR;
			int mr = j->mg - i0 < GC_QG_MR ? (int)(j->mg - i0) : GC_QG_MR;
			const uint8_t *rows[GC_QG_MR];
			for (int r = 0; r < mr; r++)
				rows[r] = j->wrows + (j->m0 + i0 + r) * k4;
			for (int64_t ch = 0; ch < nch; ch++) {
				int64_t c0 = j0 + ch * CW;
				gc_qgemm_tile(q->isa, rows, mr, chunk_np(ch * CW, nj), &kl,
					      pk + ch * kq * GC_QG_QSTRIDE, acc);
				gc_qgemm_epilogue(&o, i0, mr, c0,
						  (int)(j->osz - c0 < CW ? j->osz - c0 : CW), acc);
			}
		}
	}
}

/* ---- stride 1: channel quads read in place ---- */

typedef struct qjob {
	const gc_qconv *q;
	const uint8_t *xg; /* the image's group's first channel */
	uint8_t zx;
	int8_t *planes;
	const int64_t *tapoff; /* bytes, from a chunk's first pixel */
	int32_t *colv;	       /* per linear pixel */
	const uint8_t *wrows, *mask;
	int64_t m0, mg, chunks, groups, rsplit, row_tiles;
	int64_t ptiles; /* prows: tiles of output pixels */
	gc_qgemm_out out;
} qjob;

#define GROUP_CHUNKS 8 /* chunks of a work item */

/* dst[x] = src[(w0 + x) s + off] for x in [a, b), each index inside the
 * row [0, n): stride 2 sixteen at a time (the even bytes of 32). */
static void gather(uint8_t *dst, const uint8_t *src, int64_t w0, int64_t off, int64_t s, int64_t a,
		   int64_t b, int64_t n)
{
	int64_t x = a;
#ifdef QC_SSE2
	const __m128i even = _mm_set1_epi16(0xff);
	for (; s == 2 && x + 16 <= b && (w0 + x + 16) * 2 + off <= n; x += 16) {
		const uint8_t *p = src + (w0 + x) * 2 + off;
		__m128i v0 = _mm_loadu_si128((const __m128i *)p);
		__m128i v1 = _mm_loadu_si128((const __m128i *)(p + 16));
		_mm_storeu_si128((__m128i *)(dst + x),
				 _mm_packus_epi16(_mm_and_si128(v0, even), _mm_and_si128(v1, even)));
	}
	/* the tail: the last 16 again (overlapping), as the odd bytes of the
	 * 32 from one byte before, which end at the last byte read */
	if (s == 2 && x < b && b - a >= 16 && (w0 + b - 16) * 2 + off >= 1) {
		const uint8_t *p = src + (w0 + b - 16) * 2 + off - 1;
		__m128i v0 = _mm_loadu_si128((const __m128i *)p);
		__m128i v1 = _mm_loadu_si128((const __m128i *)(p + 16));
		_mm_storeu_si128((__m128i *)(dst + b - 16),
				 _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8)));
		x = b;
	}
#else
	(void)n;
#endif
	for (; x < b; x++)
		dst[x] = src[(w0 + x) * s + off];
}

/* Plane cq: channels 4 cq .. 4 cq + 3 of the group interleaved, padded
 * with zx (channels past the group's: 0 as stored), unsigned (int8 + 128). */
/* pack_part's planes when all strides are 1 (one phase) and a padded row
 * fits the buffer: each row's input read in place, 16 pixels at a time (the
 * last 16 overlapping), the padding columns written as their quads. */
static void pack_part_s1(const qjob *j, int64_t lo, int64_t hi, uint8_t *zrow)
{
	const gc_qconv *q = j->q;
	int64_t cg = q->c / q->group, isz = q->in[0] * q->in[1] * q->in[2];
	int64_t p0 = pdim(q, 0), p1 = pdim(q, 1), p2 = pdim(q, 2), vol = p0 * p1 * p2;
	uint64_t pbytes = plane_bytes(q);
	bool flip = !q->x_unsigned;
	/* pixel w of a row reads input column w - pad: [a, b) inside */
	int64_t a = q->pad[2] < p2 ? q->pad[2] : p2, b = q->pad[2] + q->in[2];
	b = b < p2 ? b : p2;
	memset(zrow, j->zx, (size_t)p2);
	for (int64_t cq = lo; cq < hi; cq++) {
		int8_t *pl = j->planes + cq * pbytes;
		uint8_t edge[4];
		for (int t = 0; t < 4; t++)
			edge[t] = cq * 4 + t < cg ? (uint8_t)(j->zx ^ (flip ? 0x80 : 0)) : 0;
		for (int64_t d = 0; d < p0; d++)
			for (int64_t h = 0; h < p1; h++) {
				int64_t id = d - q->pad[0], ih = h - q->pad[1];
				bool in_img = id >= 0 && id < q->in[0] && ih >= 0 && ih < q->in[1];
				const uint8_t *r[4];
				for (int t = 0; t < 4; t++) {
					int64_t c = cq * 4 + t;
					r[t] = c >= cg ? NULL
					       : in_img ? j->xg + c * isz + (id * q->in[1] + ih) * q->in[2] + a - q->pad[2]
							: zrow;
				}
				int8_t *dst = pl + (d * p1 + h) * p2 * 4;
				for (int64_t w = 0; w < a; w++)
					memcpy(dst + w * 4, edge, 4);
				for (int64_t w = b; w < p2; w++)
					memcpy(dst + w * 4, edge, 4);
				for (int64_t x = 0; x < b - a; x += 16) /* the last 16 overlap */
					interleave16(r, x + 16 <= b - a ? x : b - a - 16, flip,
						     dst + (a + (x + 16 <= b - a ? x : b - a - 16)) * 4);
			}
		memset(pl + vol * 4, 0, (size_t)(pbytes - (uint64_t)(vol * 4)));
	}
}

/* Plane cq's four virtual channels t: the channel (-1: past the group's:
 * stored 0), the input offsets of the phase, and along the last axis the
 * virtual pixels [va, vb) inside the input (pixel w reads s2 w + off). */
typedef struct vrow {
	int64_t ch[4], o0[4], o1[4], off[4], va[4], vb[4];
} vrow;

static void vrows_of(const gc_qconv *q, int64_t cq, vrow *v)
{
	int64_t cg = q->c / q->group, cgp = cgp_of(q), nph = nph_of(q), ph1 = phases(q, 1);
	int64_t ph2 = phases(q, 2), s2 = pstride(q, 2), vc = cq * 4, c, ph, last = -1;
	int64_t o0 = 0, o1 = 0, off = 0, va = 0, vb = 0;
	/* the first lane's channel and phase, the others stepped from it (a
	 * phase-major quad stays in one phase: cgp is a multiple of 4), each
	 * phase's offsets computed once: no divisions per lane */
	if (q->pmajor) {
		ph = vc / cgp;
		c = vc - ph * cgp;
	} else {
		c = vc / nph;
		ph = vc - c * nph;
	}
	for (int t = 0; t < 4; t++) {
		if (ph != last) {
			off = ph % ph2 - q->pad[2];
			o0 = ph / (ph1 * ph2) - q->pad[0];
			o1 = ph / ph2 % ph1 - q->pad[1];
			va = off >= 0 ? 0 : (-off + s2 - 1) / s2;
			vb = q->in[2] - 1 - off < 0 ? 0 : (q->in[2] - 1 - off) / s2 + 1;
			last = ph;
		}
		v->ch[t] = c < cg ? c : -1;
		v->o0[t] = o0;
		v->o1[t] = o1;
		v->off[t] = off;
		v->va[t] = va;
		v->vb[t] = vb;
		if (q->pmajor)
			c++;
		else if (++ph == nph) {
			ph = 0;
			c++;
		}
	}
}

#ifdef QC_SSE2
/* Bits [lo, hi) of 64 (0 <= lo <= hi <= 64). */
static inline uint64_t bit_range(int64_t lo, int64_t hi)
{
	uint64_t h = hi >= 64 ? ~0ull : (1ull << hi) - 1;
	return lo >= hi ? 0 : h & ~((1ull << lo) - 1);
}

/* Pixels [w0, w0 + 32) of a virtual row: pixel x reads src[s x + off]
 * (s 1 or 2) for x in [va, vb), else the zero point zv; the top bit
 * flipped by fx. Masked loads: no byte outside the row is read. */
T512BW static inline __m256i row32(const uint8_t *src, int64_t s, int64_t off, int64_t w0,
				   int64_t va, int64_t vb, __m512i zv, __m256i fx)
{
	int64_t a = (va > w0 ? va : w0) - w0, b = (vb < w0 + 32 ? vb : w0 + 32) - w0;
	if (!src || a >= b)
		return src ? _mm256_xor_si256(_mm512_castsi512_si256(zv), fx) : _mm256_setzero_si256();
	const uint8_t *p = src + s * w0 + off; /* pixel w0's byte (maybe before src: masked) */
	if (s == 1) {
		__mmask64 m = bit_range(a, b);
		__m512i v = _mm512_mask_loadu_epi8(zv, m, p);
		return _mm256_xor_si256(_mm512_castsi512_si256(v), fx);
	}
	/* stride 2: the even bytes (each 16-bit word's low byte) of 64 */
	__mmask64 m = bit_range(2 * a, 2 * b) & 0x5555555555555555ull;
	__m512i v = _mm512_mask_loadu_epi8(zv, m, p);
	return _mm256_xor_si256(_mm512_cvtepi16_epi8(v), fx);
}

/* 32 quads from four rows of 32 pixels: 128 bytes at d. */
T512BW static inline void store_quads32(const __m256i v[4], int8_t *d)
{
	__m256i a = _mm256_unpacklo_epi8(v[0], v[1]), b = _mm256_unpackhi_epi8(v[0], v[1]);
	__m256i c = _mm256_unpacklo_epi8(v[2], v[3]), e = _mm256_unpackhi_epi8(v[2], v[3]);
	/* per 128-bit lane l: q0 pixels 16l + 0..3, q1 4..7, q2 8..11, q3 12..15 */
	__m256i q0 = _mm256_unpacklo_epi16(a, c), q1 = _mm256_unpackhi_epi16(a, c);
	__m256i q2 = _mm256_unpacklo_epi16(b, e), q3 = _mm256_unpackhi_epi16(b, e);
	_mm256_storeu_si256((__m256i *)d, _mm256_permute2x128_si256(q0, q1, 0x20));
	_mm256_storeu_si256((__m256i *)(d + 32), _mm256_permute2x128_si256(q2, q3, 0x20));
	_mm256_storeu_si256((__m256i *)(d + 64), _mm256_permute2x128_si256(q0, q1, 0x31));
	_mm256_storeu_si256((__m256i *)(d + 96), _mm256_permute2x128_si256(q2, q3, 0x31));
}

/* pack_part's planes with AVX-512 (strides 1 or 2 along the last axis):
 * each virtual row 32 pixels at a time straight from x, the padding
 * blended in, no row buffer. A row's last 32 spill into the next row
 * (written after it) or the plane's tail (CW quads, zeroed last). */
T512BW static void pack_part_v(const qjob *j, int64_t lo, int64_t hi)
{
	const gc_qconv *q = j->q;
	int64_t isz = q->in[0] * q->in[1] * q->in[2], s2 = pstride(q, 2);
	int64_t p0 = pdim(q, 0), p1 = pdim(q, 1), p2 = pdim(q, 2), vol = p0 * p1 * p2;
	uint64_t pbytes = plane_bytes(q);
	__m512i zv = _mm512_set1_epi8((char)j->zx);
	__m256i fx = _mm256_set1_epi8(q->x_unsigned ? 0 : (char)0x80);
	for (int64_t cq = lo; cq < hi; cq++) {
		int8_t *pl = j->planes + cq * pbytes;
		vrow v;
		vrows_of(q, cq, &v);
		int64_t *ch = v.ch, *o0 = v.o0, *o1 = v.o1, *off = v.off, *va = v.va, *vb = v.vb;
		for (int64_t d = 0; d < p0; d++)
			for (int64_t h = 0; h < p1; h++) {
				const uint8_t *r[4];
				int64_t a[4], b[4];
				for (int t = 0; t < 4; t++) {
					int64_t id = d * pstride(q, 0) + o0[t];
					int64_t ih = h * pstride(q, 1) + o1[t];
					bool in = id >= 0 && id < q->in[0] && ih >= 0 && ih < q->in[1];
					r[t] = ch[t] < 0 ? NULL
					       : j->xg + ch[t] * isz + (in ? (id * q->in[1] + ih) * q->in[2] : 0);
					a[t] = va[t];
					b[t] = in ? vb[t] : va[t]; /* a padding row: all zx */
				}
				int8_t *dst = pl + (d * p1 + h) * p2 * 4;
				for (int64_t w0 = 0; w0 < p2; w0 += 32) {
					__m256i v[4];
					for (int t = 0; t < 4; t++)
						v[t] = row32(r[t], s2, off[t], w0, a[t], b[t], zv, fx);
					store_quads32(v, dst + w0 * 4);
				}
			}
		memset(pl + vol * 4, 0, (size_t)(pbytes - (uint64_t)(vol * 4)));
	}
}
#endif

static void pack_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	const gc_qconv *q = j->q;
	int64_t lo, hi, isz = q->in[0] * q->in[1] * q->in[2];
	int64_t p0 = pdim(q, 0), p1 = pdim(q, 1), p2 = pdim(q, 2), vol = p0 * p1 * p2;
	uint64_t pbytes = plane_bytes(q);
	bool flip = !q->x_unsigned;
	enum { SEG = 1024 };
	uint8_t rowbuf[4][SEG + 16];
	int64_t nph = nph_of(q), s2 = pstride(q, 2);
	gc_nn_part_range(cg4_of(q) / 4, part, parts, &lo, &hi);
	if (nph == 1 && pstride(q, 0) == 1 && pstride(q, 1) == 1 && s2 == 1 && p2 <= SEG &&
	    q->in[2] >= 16) {
		pack_part_s1(j, lo, hi, rowbuf[0]);
		return;
	}
#ifdef QC_SSE2
	if (q->isa == GC_QGEMM_AVX512VNNI && (s2 == 1 || s2 == 2)) { /* strided, short rows */
		pack_part_v(j, lo, hi);
		return;
	}
#endif
	for (int64_t cq = lo; cq < hi; cq++) {
		int8_t *pl = j->planes + cq * pbytes;
		vrow v; /* no divisions in the row loops */
		vrows_of(q, cq, &v);
		int64_t *ch = v.ch, *o0 = v.o0, *o1 = v.o1, *off = v.off, *va = v.va, *vb = v.vb;
		/* one segment a row: the bytes outside [a, b) hold zx from here on
		 * (a row is only ever gathered into [a, b)) */
		bool once = p2 <= SEG;
		for (int t = 0; once && t < 4; t++)
			memset(rowbuf[t], j->zx, (size_t)p2 + 16);
		for (int64_t d = 0; d < p0; d++)
			for (int64_t h = 0; h < p1; h++)
				for (int64_t w0 = 0; w0 < p2; w0 += SEG) {
					int64_t n = p2 - w0 < SEG ? p2 - w0 : SEG;
					const uint8_t *r[4];
					for (int t = 0; t < 4; t++) {
						r[t] = ch[t] >= 0 ? rowbuf[t] : NULL;
						if (ch[t] < 0)
							continue;
						int64_t id = d * pstride(q, 0) + o0[t];
						int64_t ih = h * pstride(q, 1) + o1[t];
						int64_t a = (va[t] > w0 ? va[t] : w0) - w0;
						int64_t b = (vb[t] < w0 + n ? vb[t] : w0 + n) - w0;
						if (id < 0 || id >= q->in[0] || ih < 0 || ih >= q->in[1] || a >= b) {
							if (once && a < b)
								memset(rowbuf[t] + a, j->zx, (size_t)(b - a));
							else if (!once)
								memset(rowbuf[t], j->zx, (size_t)n + 16);
							continue;
						}
						if (!once) {
							memset(rowbuf[t], j->zx, (size_t)a);
							memset(rowbuf[t] + b, j->zx, (size_t)(n + 16 - b));
						}
						const uint8_t *xr =
						    j->xg + ch[t] * isz + (id * q->in[1] + ih) * q->in[2];
						if (s2 == 1)
							memcpy(rowbuf[t] + a, xr + w0 + a + off[t], (size_t)(b - a));
						else
							gather(rowbuf[t], xr, w0, off[t], s2, a, b, q->in[2]);
					}
					/* 16 pixels at a time: a row's last ones spill into the
					 * next row (written after it) or the plane's tail */
					int8_t *dst = pl + ((d * p1 + h) * p2 + w0) * 4;
					for (int64_t x = 0; x < n; x += 16)
						interleave16(r, x, flip, dst + x * 4);
				}
		memset(pl + vol * 4, 0, (size_t)(pbytes - (uint64_t)(vol * 4)));
	}
}

/* The column sums of chunks (each pixel's sum of x' over its real terms:
 * the mask row of the packed weights). */
static void colv_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	const uint8_t *one = j->mask;
	gc_qgemm_kloop kl = { .a_ks = 4, .ntaps = ktaps_of(j->q), .kqt = kqt_of(j->q),
			      .cs = (int64_t)plane_bytes(j->q), .tapoff = j->tapoff, .a_signed = true };
	int64_t lo, hi;
	gc_nn_part_range(j->chunks, part, parts, &lo, &hi);
	for (int64_t ch = lo; ch < hi; ch++)
		gc_qgemm_tile(j->q->isa, &one, 1, chunk_np(ch * CW, lin_of(j->q)), &kl,
			      j->planes + ch * CW * 4, j->colv + ch * CW);
}

/* The epilogue of a tile of linear pixels [p0, p0 + CW): the runs of valid
 * pixels (not in the padding columns), each to its place in y. */
static void scatter(const qjob *j, int64_t i0, int mr, int64_t p0, const int32_t *acc)
{
	const gc_qconv *q = j->q;
	int64_t p1 = pdim(q, 1), p2 = pdim(q, 2), end = p0 + CW, lin = lin_of(q);
	end = end < lin ? end : lin;
	gc_qgemm_out o = j->out;
	o.colv = j->colv; /* NULL: not needed */
	for (int64_t p = p0; p < end;) {
		int64_t o2 = p % p2, r = p / p2, o1 = r % p1, o0 = r / p1;
		if (o2 >= q->out[2] || o1 >= q->out[1]) {
			p += p2 - o2;
			continue;
		}
		/* a run to the row's end; with no padding columns (one tap along
		 * the width: 1x1 kernels), to the last row of the plane */
		int64_t n = p2 == q->out[2] ? (q->out[1] - o1) * q->out[2] - o2 : q->out[2] - o2;
		n = n < end - p ? n : end - p;
		int64_t oi = (o0 * q->out[1] + o1) * q->out[2] + o2;
		o.col0 = oi - p; /* colv by linear pixel */
		gc_qgemm_epilogue(&o, i0, mr, oi, (int)n, acc + (p - p0));
		p += n;
	}
}

static void quads_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	const gc_qconv *q = j->q;
	int64_t wrow = wrow_of(q), lo, hi;
	gc_qgemm_kloop kl = { .a_ks = 4, .ntaps = ktaps_of(q), .kqt = kqt_of(q),
			      .cs = (int64_t)plane_bytes(q), .tapoff = j->tapoff, .a_signed = true };
	int32_t acc[GC_QG_MR * CW];
	gc_nn_part_range(j->groups * j->rsplit, part, parts, &lo, &hi);
	for (int64_t it = lo; it < hi; it++) {
		int64_t grp = it / j->rsplit, rs = it % j->rsplit, t0, t1;
		int64_t c0 = grp * GROUP_CHUNKS, c1 = c0 + GROUP_CHUNKS;
		c1 = c1 < j->chunks ? c1 : j->chunks;
		gc_nn_part_range(j->row_tiles, (int)rs, (int)j->rsplit, &t0, &t1);
		for (int64_t t = t0; t < t1; t++) { /* a tile's weights stay while chunks pass */
			int64_t i0 = t * GC_QG_MR;
			int mr = j->mg - i0 < GC_QG_MR ? (int)(j->mg - i0) : GC_QG_MR;
			const uint8_t *rows[GC_QG_MR];
			for (int r = 0; r < mr; r++)
				rows[r] = j->wrows + (j->m0 + i0 + r) * wrow;
			for (int64_t ch = c0; ch < c1; ch++) {
				gc_qgemm_tile(q->isa, rows, mr, chunk_np(ch * CW, lin_of(q)), &kl,
					      j->planes + ch * CW * 4, acc);
				scatter(j, i0, mr, ch * CW, acc);
			}
		}
	}
}

/* Output pixels p0.. (n of them) their places along the padded rows (their
 * quads in a plane, ostep apart): divisions for the first only. */
static void lin_pixels(const gc_qconv *q, int64_t p0, int n, int64_t *lin)
{
	int64_t o2 = p0 % q->out[2], o01 = p0 / q->out[2];
	int64_t o1 = o01 % q->out[1], o0 = o01 / q->out[1], p1 = pdim(q, 1), p2 = pdim(q, 2);
	int64_t s0 = ostep(q, 0), s1 = ostep(q, 1), s2 = ostep(q, 2);
	for (int r = 0; r < n; r++) {
		lin[r] = (o0 * s0 * p1 + o1 * s1) * p2 + o2 * s2;
		if (++o2 == q->out[2]) { /* the next output row; past a slab's, the next slab */
			o2 = 0;
			if (++o1 == q->out[1]) {
				o1 = 0;
				o0++;
			}
		}
	}
}

/* q->prows: a tile is output pixels [p0, p1) (at most 8, consecutive in
 * y) by a chunk of 48 output channels, the pixels' quads read in place
 * wherever the padding puts them, the weights a packed B; the epilogue's
 * transposed form writes it. Pixel tiles fastest: a chunk of weights
 * stays in cache while they pass. */
static void prows_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const qjob *j = arg;
	const gc_qconv *q = j->q;
	int64_t osz = osz_of(q), lo, hi;
	gc_qgemm_kloop kl = { .a_ks = (int64_t)plane_bytes(q), .ntaps = ktaps_of(q), .kqt = kqt_of(q),
			      .a_tapoff = j->tapoff };
	int32_t acc[GC_QG_MR * CW], pv[GC_QG_MR];
	gc_qgemm_out o = j->out;
	gc_nn_part_range(gc_qg_chunks(j->mg) * j->ptiles, part, parts, &lo, &hi);
	for (int64_t it = lo; it < hi; it++) {
		int64_t ch = it / j->ptiles, t = it % j->ptiles, c0 = ch * CW;
		int64_t p0 = t * osz / j->ptiles, p1 = (t + 1) * osz / j->ptiles;
		int mr = (int)(p1 - p0), nc = (int)(j->mg - c0 < CW ? j->mg - c0 : CW);
		int np = chunk_np(c0, j->mg);
		const uint8_t *rows[GC_QG_MR];
		int64_t lin[GC_QG_MR];
		lin_pixels(q, p0, mr, lin);
		for (int r = 0; r < mr; r++) {
			rows[r] = (const uint8_t *)j->planes + lin[r] * 4;
			if (j->colv)
				pv[r] = j->colv[lin[r]];
		}
		kl.cs = np * 64;
		gc_qgemm_tile(q->isa, rows, mr, np, &kl, (const int8_t *)j->wrows + c0 * wrow_of(q), acc);
		o.colv = j->colv ? pv : NULL;
		o.col0 = p0;
		gc_qgemm_epilogue_t(&o, c0, nc, p0, mr, acc);
	}
}

/* Row ranges per block of pixels for th threads: at least 4 items a
 * thread, their count a multiple of th where the row tiles allow (9 blocks
 * on 2 threads: 18 items, not 9, so that neither waits for a 5th). */
int64_t gc_qconv_split_rows(int th, int64_t blocks, int64_t row_tiles)
{
	if (th <= 1)
		return 1;
	int64_t r = (4 * th + blocks - 1) / blocks;
	for (int64_t c = r; c < r + th && c <= row_tiles; c++)
		if (blocks * c % th == 0)
			return c;
	return r < row_tiles ? r : row_tiles;
}

static void run_quads(const gc_qconv *q, const gc_qconv_args *a, const uint8_t *wrows,
		      const uint8_t *mask, const gc_qgemm_out *out0, char *mem, int threads)
{
	int64_t mg = q->m / q->group, cg = q->c / q->group, osz = osz_of(q);
	int64_t isz = q->in[0] * q->in[1] * q->in[2], taps = ktaps_of(q);
	int64_t chunks = (lin_of(q) + CW - 1) / CW, row_tiles = (mg + GC_QG_MR - 1) / GC_QG_MR;
	int64_t *tapoff = (int64_t *)(mem + (uint64_t)(cg4_of(q) / 4) * plane_bytes(q));
	int32_t *colv = (int32_t *)((char *)tapoff + gc_nn_align((uint64_t)taps * 8));
	int64_t p1 = pdim(q, 1), p2 = pdim(q, 2), t = 0, kt;
	/* a virtual tap's offset, and phase-major: the phase's planes */
	for (int64_t vt = 0; vt < vtaps_of(q); vt++) {
		int64_t k2 = vt % vtaps(q, 2), k1 = vt / vtaps(q, 2) % vtaps(q, 1);
		int64_t k0 = vt / vtaps(q, 2) / vtaps(q, 1);
		int64_t off = ((k0 * vdil(q, 0) * p1 + k1 * vdil(q, 1)) * p2 + k2 * vdil(q, 2)) * 4;
		if (!q->pmajor) {
			tapoff[t++] = off;
			continue;
		}
		for (int64_t ph = 0; ph < nph_of(q); ph++)
			if (real_pair(q, vt, ph, &kt))
				tapoff[t++] = off + ph * (cgp_of(q) / 4) * (int64_t)plane_bytes(q);
	}
	double cycles = (double)(row_tiles * GC_QG_MR) * (double)(chunks * CW) *
			(double)wrow_of(q) / (q->isa == GC_QGEMM_C ? 2 : 64);
	int th = gc_nn_par_threads(threads, cycles);
	int64_t groups = (chunks + GROUP_CHUNKS - 1) / GROUP_CHUNKS;
	int64_t rsplit = gc_qconv_split_rows(th, groups, row_tiles);
	for (int64_t b = 0; b < q->n; b++)
		for (int64_t g = 0; g < q->group; g++) {
			int64_t m0 = g * mg, yo = (b * q->m + m0) * osz;
			qjob j = { .q = q, .xg = (const uint8_t *)a->x + (b * q->c + g * cg) * isz,
				   .zx = (uint8_t)a->zx, .planes = (int8_t *)mem, .tapoff = tapoff,
				   .colv = colv, .wrows = wrows, .mask = mask, .m0 = m0, .mg = mg, .chunks = chunks,
				   .groups = groups, .rsplit = rsplit, .row_tiles = row_tiles,
				   .out = *out0 };
			j.out.rowc += m0;
			if (j.out.rowz)
				j.out.rowz += m0;
			j.out.scale += m0;
			if (a->requant)
				j.out.y8 = (uint8_t *)a->y + yo;
			else
				j.out.c32 = (int32_t *)a->y + yo;
			gc_nn_run_parts(th, cg4_of(q) / 4, pack_part, &j);
			if (out0->rowz) /* pixel sums: for weights with a zero point */
				gc_nn_run_parts(th, chunks, colv_part, &j);
			else
				j.colv = NULL;
			if (q->prows) {
				j.ptiles = (osz + GC_QG_MR - 1) / GC_QG_MR;
				gc_nn_run_parts(th, gc_qg_chunks(mg) * j.ptiles, prows_part, &j);
			} else if (th <= 1 || groups * rsplit < 2)
				quads_part(&j, 0, 1, 0);
			else
				gc_nn_parallel(th, gc_nn_par_parts(th, groups * rsplit), quads_part, &j);
		}
}

static int32_t zval(const void *z, bool u, int64_t i)
{
	return !z ? 0 : u ? ((const uint8_t *)z)[i] : ((const int8_t *)z)[i];
}

void gc_qconv_run(const gc_qconv *q, const gc_qconv_args *a, void *scratch, int threads)
{
	int64_t kdim = kdim_of(q), osz = osz_of(q), mg = q->m / q->group, cg = q->c / q->group;
	int64_t isz = q->in[0] * q->in[1] * q->in[2];
	char *s = scratch;
	char *slots = s;
	s += q->quads ? quads_bytes(q) : SLOTS * slot_bytes(q);
	int32_t *rowc = (int32_t *)s, *rowz = rowc + gc_nn_align((uint64_t)q->m * 4) / 4;
	float *scale = (float *)(rowz + gc_nn_align((uint64_t)q->m * 4) / 4);
	s += rows_bytes(q);
	const void *wp = q->wpack;
	if (!wp) {
		gc_qconv_pack_w(q, a->w, s);
		wp = s;
	}
	const uint8_t *wrows = wp;
	const int32_t *wsum = (const int32_t *)(wrows + wdata_bytes(q));
	/* im2col: x' = x - 128 (uint8 x), w' = w + 128 (int8 w); quads (the
	 * signs swapped): x' = x + 128 (int8 x), w' = w - 128 (uint8 w). C =
	 * acc - zx' sum w' - zw' sum x' + kdim zx' zw' (qgemm.h), + bias */
	int32_t xsh = q->quads ? (q->x_unsigned ? 0 : 128) : (q->x_unsigned ? -128 : 0);
	int32_t wsh = q->quads ? (q->w_unsigned ? -128 : 0) : (q->w_unsigned ? 0 : 128);
	uint32_t zx = (uint32_t)(a->zx + xsh);
	bool zw_any = false;
	for (int64_t i = 0; i < q->m; i++) {
		uint32_t zw = (uint32_t)(zval(a->zw, q->w_unsigned, a->zw_rows ? i : 0) + wsh);
		rowz[i] = (int32_t)zw;
		zw_any |= zw != 0;
		rowc[i] = (int32_t)((a->bias ? (uint32_t)a->bias[i] : 0) - zx * (uint32_t)wsum[i] +
				    (uint32_t)kdim * zx * zw);
		if (a->requant)
			scale[i] = gc_qscale(a->xs, a->ws[a->ws_rows ? i : 0], a->ys);
	}
	float lo = a->y_unsigned ? 0.0f : -128.0f, hi = a->y_unsigned ? 255.0f : 127.0f;
	if (a->relu && a->zy > lo)
		lo = a->zy;
	if (q->quads) {
		gc_qgemm_out o = { .rowc = rowc, .rowz = zw_any ? rowz : NULL, .ldc = osz,
				   .y_unsigned = a->y_unsigned,
				   .scale = scale, .scale_step = 1, .zy = a->zy, .lo = lo, .hi = hi,
				   .isa = q->isa };
		run_quads(q, a, wrows, (const uint8_t *)wsum + gc_nn_align((uint64_t)q->m * 4), &o, slots,
			  threads);
		return;
	}
	int64_t bw = block_chunks(q) * CW, nblocks = (osz + bw - 1) / bw;
	int64_t row_tiles = (mg + GC_QG_MR - 1) / GC_QG_MR;
	double cycles = (double)(row_tiles * GC_QG_MR) * (double)(nblocks * bw) *
			(double)gc_qg_k4(kdim) / (q->isa == GC_QGEMM_C ? 2 : 64);
	int t = gc_nn_par_threads(threads, cycles);
	t = t < SLOTS ? t : SLOTS;
	int64_t rsplit = gc_qconv_split_rows(t, nblocks, row_tiles);
	for (int64_t b = 0; b < q->n; b++)
		for (int64_t g = 0; g < q->group; g++) {
			int64_t m0 = g * mg, yo = (b * q->m + m0) * osz;
			cjob j = { .q = q, .xg = (const uint8_t *)a->x + (b * q->c + g * cg) * isz,
				   .wrows = wrows, .kdim = kdim, .osz = osz, .mg = mg, .m0 = m0,
				   .nblocks = nblocks, .rsplit = rsplit, .row_tiles = row_tiles,
				   .zx = (uint8_t)a->zx, .slots = slots };
			j.out = (gc_qgemm_out){ .rowc = rowc + m0, .rowz = rowz + m0, .ldc = osz,
						.y_unsigned = a->y_unsigned, .scale = scale + m0,
						.scale_step = 1, .zy = a->zy, .lo = lo, .hi = hi,
						.isa = q->isa };
			if (a->requant)
				j.out.y8 = (uint8_t *)a->y + yo;
			else
				j.out.c32 = (int32_t *)a->y + yo;
			int64_t items = nblocks * rsplit;
			if (t <= 1 || items < 2)
				conv_part(&j, 0, 1, 0);
			else
				gc_nn_parallel(t, gc_nn_par_parts(t, items), conv_part, &j);
		}
}
