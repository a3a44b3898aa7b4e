/* MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool. Windows come from
 * gc_nn_window_init (conv.c); every op runs on a 3-D view with leading 1s.
 * Float32 pools over one or two spatial dims (without Indices) take the row
 * path below; the window loops handle everything else. */
#include <float.h>
#include <inttypes.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "../fileio.h" /* gc_reference_kernels */
#include "kutil.h"
#include "lanes.h"
#include "nn-par.h"
#include "nn.h"
#include "pool-impl.h"
#include "qpool.h"
#include "sgemm-pack.h" /* gc_pk_usable */

GC_NN_O3

typedef struct pool_state {
	gc_nn_base base;
	gc_nn_window w;
	int64_t channels; /* N * C */
	int64_t in_sp, out_sp;
	int count_include_pad, storage_order, has_indices;
	double lp_p; /* GlobalLpPool's p */
	/* The row path (float32, 1 or 2 spatial dims): the padded row buffer's
	 * length, and for AveragePool each output column's divisor. */
	int64_t row_len;
	void (*row_2x2)(const float *, const float *, float *, int64_t); /* pool_2x2_range's */
	bool prefetch; /* prefetch the input: pool_2x2_range (POOL_PREFETCH_BYTES),
			* rows512 (POOL_ROW_PREFETCH_BYTES) */
	bool v512;     /* gc_maxpool8_rows's */
	int64_t plane_chunks; /* the plane path's (plane_tables) */
	float col_count[];
} pool_state;

/*
 * Every pool runs over the channels [c0, c1) of N * C; `buf` is the calling
 * thread's row buffer (row path) or NULL. pool_par splits the channels over
 * the nn-par pool when the work is large enough: each output is computed
 * as one thread would, so the result does not depend on the thread count.
 */
typedef void (*pool_range_fn)(const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			      int64_t c0, int64_t c1, float *buf);

/* Row buffers in scratch: at most this many threads take the row path. */
#define POOL_SLOTS 8

typedef struct pool_job {
	pool_range_fn fn;
	const gc_node *n;
	gc_tensor *const *in, *const *out;
	char *scratch;
	uint64_t slot_bytes;
	int64_t channels;
} pool_job;

static void pool_part(void *arg, int part, int parts, int slot)
{
	const pool_job *j = arg;
	int64_t c0, c1;
	gc_nn_part_range(j->channels, part, parts, &c0, &c1);
	j->fn(j->n, j->in, j->out, c0, c1,
	      j->scratch ? (float *)(j->scratch + (uint64_t)slot * j->slot_bytes) : NULL);
}

/* cycles: an estimate of the whole op's; slot_bytes: scratch per thread */
static int pool_par(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		    pool_range_fn fn, int64_t channels, double cycles, uint64_t slot_bytes)
{
	int threads = slot_bytes && k->threads > POOL_SLOTS ? POOL_SLOTS : k->threads;
	int t = gc_nn_par_threads(threads, cycles);
	pool_job j = {fn, n, in, out, slot_bytes ? k->scratch : NULL, slot_bytes, channels};
	if (t <= 1 || channels < 2)
		fn(n, in, out, 0, channels, (float *)j.scratch);
	else
		gc_nn_parallel(t, gc_nn_par_parts(t, channels), pool_part, &j);
	return 0;
}

#define POOL_LOOP_BEGIN(T, st)                                                                     \
	GC_POOL_WINDOWS_BEGIN(&(st)->w, (st)->in_sp, (st)->out_sp, c0, c1)                         \
	const T *xc = x + xo;

#define POOL_LOOP_END GC_POOL_WINDOWS_END

/* Cycles of a window loop: a few for each output and tap. */
static double pool_window_cycles(const pool_state *st)
{
	const gc_nn_window *w = &st->w;
	return 2.0 * (double)st->channels * (double)st->out_sp * (double)(w->k[0] * w->k[1] * w->k[2]);
}

#define POOL_RUN(name)                                                                             \
	static int name##_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                  \
			      gc_tensor *const *out)                                               \
	{                                                                                          \
		const pool_state *st = n->state;                                                   \
		return pool_par(k, n, in, out, name##_range, st->channels,                         \
				pool_window_cycles(st), 0);                                        \
	}

#define MAXPOOL_DEFINE(T, sfx, LOWEST)                                                             \
	/* Without Indices: branch-free maximum (random data mispredicts a branch).                \
	 * NaN is skipped, and a window wholly in the padding gives LOWEST, as in                  \
	 * ONNX Runtime. */                                                                        \
	GC_NN_SIMD static void maxpool_##sfx##_range(const gc_node *n, gc_tensor *const *in,       \
						     gc_tensor *const *out, int64_t c0,            \
						     int64_t c1, float *buf)                       \
	{                                                                                          \
		(void)buf;                                                                         \
		const pool_state *st = n->state;                                                   \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		POOL_LOOP_BEGIN(T, st)                                                             \
		T best = LOWEST;                                                                   \
		for (int64_t a = l0; a < h0; a++) {                                                \
			int64_t i0 = s0 + a * w->dil[0];                                           \
			for (int64_t b = l1; b < h1; b++) {                                        \
				int64_t i1 = s1 + b * w->dil[1];                                   \
				const T *row = xc + (i0 * H + i1) * W + s2;                        \
				for (int64_t c = l2; c < h2; c++) {                                \
					T v = row[c * w->dil[2]];                                  \
					best = v > best ? v : best;                                \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		y[yo] = best;                                                                      \
		POOL_LOOP_END                                                                      \
	}                                                                                          \
	POOL_RUN(maxpool_##sfx)                                                                    \
                                                                                                   \
	/* With Indices: the first maximum's flat index into X (with the batch and                 \
	 * channel offsets), row-major or, for storage_order 1, column-major. */                   \
	static void maxpool_ind_##sfx##_range(const gc_node *n, gc_tensor *const *in,              \
					      gc_tensor *const *out, int64_t c0, int64_t c1,       \
					      float *buf)                                          \
	{                                                                                          \
		(void)buf;                                                                         \
		const pool_state *st = n->state;                                                   \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		int64_t *ind = out[1]->data;                                                       \
		POOL_LOOP_BEGIN(T, st)                                                             \
		T best = LOWEST;                                                                   \
		int64_t b0 = -1, b1 = 0, b2 = 0;                                                   \
		for (int64_t a = l0; a < h0; a++) {                                                \
			int64_t i0 = s0 + a * w->dil[0];                                           \
			for (int64_t b = l1; b < h1; b++) {                                        \
				int64_t i1 = s1 + b * w->dil[1];                                   \
				const T *row = xc + (i0 * H + i1) * W;                             \
				for (int64_t c = l2; c < h2; c++) {                                \
					int64_t i2 = s2 + c * w->dil[2];                           \
					if (row[i2] > best || b0 < 0) {                            \
						best = row[i2];                                    \
						b0 = i0;                                           \
						b1 = i1;                                           \
						b2 = i2;                                           \
					}                                                          \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		y[yo] = best;                                                                      \
		ind[yo] = b0 < 0 ? -1                                                              \
				 : ch * st->in_sp + (st->storage_order ? b0 + b1 * D + b2 * D * H  \
								       : (b0 * H + b1) * W + b2);  \
		POOL_LOOP_END                                                                      \
	}                                                                                          \
	POOL_RUN(maxpool_ind_##sfx)

MAXPOOL_DEFINE(float, f32, -FLT_MAX)
MAXPOOL_DEFINE(double, f64, -DBL_MAX)
MAXPOOL_DEFINE(int8_t, i8, INT8_MIN)
MAXPOOL_DEFINE(uint8_t, u8, 0)

/* Taps of a window that lie inside the input plus its end pads: what
 * count_include_pad divides by (ONNX Runtime's rule). */
static inline int64_t taps_with_pad(int64_t start, int64_t k, int64_t dl, int64_t n, int64_t pad_hi)
{
	int64_t lo = start, hi = n + pad_hi; /* positions in [start, hi) count */
	if (lo >= hi)
		return 0;
	int64_t t = (hi - 1 - lo) / dl + 1;
	return t < k ? t : k;
}

#define AVGPOOL_DEFINE(T, sfx)                                                                     \
	static void avgpool_##sfx##_range(const gc_node *n, gc_tensor *const *in,                  \
					  gc_tensor *const *out, int64_t c0, int64_t c1,           \
					  float *buf)                                              \
	{                                                                                          \
		(void)buf;                                                                         \
		const pool_state *st = n->state;                                                   \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		POOL_LOOP_BEGIN(T, st)                                                             \
		T sum = 0;                                                                         \
		GC_POOL_TAPS_BEGIN(T, xc, v)                                                       \
		sum += v;                                                                          \
		GC_POOL_TAPS_END                                                                   \
		int64_t cnt;                                                                       \
		if (st->count_include_pad)                                                         \
			cnt = taps_with_pad(s0, w->k[0], w->dil[0], D, w->pad_hi[0]) *             \
			      taps_with_pad(s1, w->k[1], w->dil[1], H, w->pad_hi[1]) *             \
			      taps_with_pad(s2, w->k[2], w->dil[2], W, w->pad_hi[2]);              \
		else                                                                               \
			cnt = (h0 - l0) * (h1 - l1) * (h2 - l2);                                   \
		y[yo] = sum / (T)cnt;                                                              \
		POOL_LOOP_END                                                                      \
	}                                                                                          \
	POOL_RUN(avgpool_##sfx)

AVGPOOL_DEFINE(float, f32)
AVGPOOL_DEFINE(double, f64)

/*
 * The row path. For each output row, the window's input rows are first
 * reduced column by column into a row buffer that carries the left and right
 * padding (and ceil_mode's overhang) as the reduction's identity -- LOWEST
 * for max, 0 for sum -- so that every output column then reduces its k taps
 * of the buffer with no border cases: y[ow] = red(buf[ow * s + c * dil]).
 * Both loops are branch-free, contiguous or constant-stride, and vectorise.
 * The buffer lives in the node's scratch memory (row_len floats).
 * Results equal the window loops' (tests/unit/test-pool.c) up to the order
 * of float additions and the sign of a zero maximum: max skips NaN and gives
 * LOWEST for a window wholly in the padding; average divides by the same
 * count. resnet18's MaxPool (64x112x112, 3x3 stride 2 pad 1) takes 0.14 ms
 * here against 1.2 ms in the window loops.
 */
#define ROW_PATH_MAX_LEN (INT64_C(1) << 24) /* buffer floats; longer rows: window loops */

typedef enum { ROW_MAX, ROW_SUM } row_op;

#define ROW_INLINE static inline __attribute__((always_inline))

/* The cache lines of the n floats from p (none when n is 0): input rows a
 * later output row reads (pool_state.prefetch). Addresses past the input
 * are harmless: prefetches do not fault. */
ROW_INLINE void prefetch_floats(const float *p, int64_t n)
{
	for (int64_t j = 0; j < n; j += 16)
		__builtin_prefetch(p + j);
}

ROW_INLINE float row_red(row_op op, float acc, float v)
{
	return op == ROW_MAX ? (v > acc ? v : acc) : acc + v;
}

/* b[j] = red(acc, r0[j], r1[j], ...) over the first n (1..3) of r0..r2, acc
 * being b[j] itself, or init when `first`: up to three input rows per pass
 * over the buffer. */
ROW_INLINE void rows_into(row_op op, float *restrict b, const float *r0, const float *r1,
			  const float *r2, int n, int first, float init, int64_t cols)
{
	for (int64_t j = 0; j < cols; j++) {
		float acc = row_red(op, first ? init : b[j], r0[j]);
		if (n > 1)
			acc = row_red(op, acc, r1[j]);
		if (n > 2)
			acc = row_red(op, acc, r2[j]);
		b[j] = acc;
	}
}

/* The window's rows t in [lo, hi) (row t at xc + (s1 + t * dil) * W) into
 * the buffer; init when there are none. */
ROW_INLINE void rows_reduce(row_op op, float *restrict b, const float *xc, int64_t s1, int64_t dil,
			    int64_t lo, int64_t hi, int64_t W, float init, int64_t cols)
{
	if (lo == hi) {
		for (int64_t j = 0; j < cols; j++)
			b[j] = init;
		return;
	}
	for (int64_t t = lo, first = 1; t < hi; t += 3, first = 0) {
		const float *r0 = xc + (s1 + t * dil) * W;
		const float *r1 = r0 + dil * W, *r2 = r1 + dil * W;
		int64_t n = hi - t;
		if (n >= 3)
			rows_into(op, b, r0, r1, r2, 3, (int)first, init, cols);
		else if (n == 2)
			rows_into(op, b, r0, r1, r1, 2, (int)first, init, cols);
		else
			rows_into(op, b, r0, r0, r0, 1, (int)first, init, cols);
	}
}

/* y[o] = red over c < kw of b[o * stride + c * dil]. Inlined with constant
 * stride and kw (the common windows), the c loop unrolls and the o loop
 * vectorises with contiguous or fixed-shuffle loads. */
ROW_INLINE void row_taps_fixed(row_op op, float *restrict y, const float *restrict b, int64_t ow,
			       int64_t stride, int64_t kw, int64_t dil, float init)
{
	for (int64_t o = 0; o < ow; o++) {
		float acc = init;
		for (int64_t c = 0; c < kw; c++)
			acc = row_red(op, acc, b[o * stride + c * dil]);
		y[o] = acc;
	}
}

/* Any stride and kernel width: one pass over y per tap. */
ROW_INLINE void row_taps_any(row_op op, float *restrict y, const float *restrict b, int64_t ow,
			     int64_t stride, int64_t kw, int64_t dil, float init)
{
	for (int64_t o = 0; o < ow; o++)
		y[o] = row_red(op, init, b[o * stride]);
	for (int64_t c = 1; c < kw; c++) {
		const float *bc = b + c * dil;
		for (int64_t o = 0; o < ow; o++)
			y[o] = row_red(op, y[o], bc[o * stride]);
	}
}

ROW_INLINE void row_taps(row_op op, float *restrict y, const float *restrict b, int64_t ow,
			 int64_t stride, int64_t kw, int64_t dil, float init)
{
#define ROW_TAPS_CASE(S, K)                                                                        \
	if (stride == (S) && kw == (K)) {                                                          \
		row_taps_fixed(op, y, b, ow, S, K, dil, init);                                     \
		return;                                                                            \
	}
	ROW_TAPS_CASE(1, 2)
	ROW_TAPS_CASE(1, 3)
	ROW_TAPS_CASE(2, 2)
	ROW_TAPS_CASE(2, 3)
#undef ROW_TAPS_CASE
	row_taps_any(op, y, b, ow, stride, kw, dil, init);
}

static double row_cycles(const pool_state *st);

/* What the row path divides output row s1's sums by, before col_count:
 * the window's rows counted (its taps [l1, h1) inside the input, or with
 * count_include_pad those inside the padded input too). */
static inline float row_divisor(const pool_state *st, int64_t s1, int64_t l1, int64_t h1)
{
	const gc_nn_window *w = &st->w;
	return (float)(st->count_include_pad
			   ? taps_with_pad(s1, w->k[1], w->dil[1], w->in[1], w->pad_hi[1])
			   : h1 - l1);
}

#define PLANE_MAX_FLOATS (INT64_C(1) << 14) /* output plane; larger: rows */
#define PLANE_MAX_TAPS 64			 /* kernel height + width */

/* The plane's divisors (AveragePool) and masks, after col_count. */
static float *plane_div(const pool_state *st)
{
	return (float *)st->col_count + st->w.out[2];
}

static uint16_t *plane_masks(const pool_state *st)
{
	return (uint16_t *)(plane_div(st) + st->w.out[1] * st->w.out[2]);
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * One output row of the row path in AVX-512, picked at prepare for
 * horizontal strides 1 and 2 with taps spanning at most 16 * stride + 1
 * columns: the portable loops' operations in their order (the same bytes),
 * but with the column reductions kept in registers. Going through the row
 * buffer, every 16-float load of it straddles two earlier stores, which
 * the store buffer cannot forward: inception_v3's 3x3 AveragePools took
 * as long in AVX-512 as in the compiled loops.
 *
 * For 16 outputs from input column i0 = o * stride - pad_lo, stride 1 takes
 * the column reductions of [i0, i0 + 32) as two vectors; stride 2 takes
 * those of [i0, i0 + 64) as four and splits them into the even and the odd
 * columns (two vectors each). The tap at column offset off is then one
 * two-register permute: lanes off.. (stride 1), or lanes off / 2.. of the
 * even or odd vectors (stride 2). The second half carries over to the next
 * 16 outputs. Columns outside the input are the reduction's identity, as
 * in the buffer. _mm512_mask_max_ps(acc, m, v, acc) is row_red's
 * v > acc ? v : acc (NaN gives acc).
 */
#define ROW512 __attribute__((target("avx512f")))
#define ROW512_INLINE static inline __attribute__((always_inline)) ROW512

ROW512_INLINE __m512 red16(row_op op, __m512 acc, __mmask16 m, __m512 v)
{
	return op == ROW_MAX ? _mm512_mask_max_ps(acc, m, v, acc) : _mm512_mask_add_ps(acc, m, acc, v);
}

/* red16 on every lane */
ROW512_INLINE __m512 red16_all(row_op op, __m512 acc, __m512 v)
{
	return op == ROW_MAX ? _mm512_max_ps(v, acc) : _mm512_add_ps(acc, v);
}

/* The window's rows [l1, h1) reduced over input columns [i0, i0 + 16). */
ROW512_INLINE __m512 cols16(row_op op, const gc_nn_window *w, const float *xc, int64_t s1,
			    int64_t l1, int64_t h1, int64_t i0, __m512 init)
{
	const int64_t W = w->in[2];
	/* lanes inside the row; the others are never loaded (masked loads do
	 * not fault), so the address may lie before the row's start */
	__mmask16 m = (__mmask16)(gc_lanes16(W - i0) & ~gc_lanes16(-i0));
	if (m == 0) /* all past the row's ends: what the loads would reduce to */
		return init;
	__m512 acc = init;
	const float *r = xc + s1 * W + i0;
	const int64_t step = w->dil[1] * W;
	if (m == 0xffff && h1 - l1 == 3) { /* 3 rows inside, unrolled */
		r += l1 * step;
		acc = red16_all(op, acc, _mm512_loadu_ps(r));
		acc = red16_all(op, acc, _mm512_loadu_ps(r + step));
		return red16_all(op, acc, _mm512_loadu_ps(r + 2 * step));
	}
	if (m == 0xffff) /* the row's inside: plain loads, which AMD's prefetchers follow */
		for (int64_t t = l1; t < h1; t++)
			acc = red16_all(op, acc, _mm512_loadu_ps(r + t * step));
	else
		for (int64_t t = l1; t < h1; t++)
			acc = red16(op, acc, m, _mm512_maskz_loadu_ps(m, r + t * step));
	return acc;
}

/* s3: the window's width is 3 taps without dilation at stride s3 (1 or 2;
 * 0: any), so that the loops unroll. */
ROW512_INLINE void row512(row_op op, int s3, const pool_state *st, const float *xc, int64_t s1,
			  int64_t l1, int64_t h1, float rows, float *restrict y)
{
	const gc_nn_window *w = &st->w;
	const int64_t OW = w->out[2], s = s3 ? s3 : w->stride[2], dil = s3 ? 1 : w->dil[2];
	const int64_t kw = s3 ? 3 : w->k[2];
	const __m512 init = _mm512_set1_ps(op == ROW_MAX ? -FLT_MAX : 0.0f);
	const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	const __m512i even = _mm512_add_epi32(iota, iota);
	const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
	/* the even columns (all of them at stride 1) and the odd, current and
	 * next: named registers, not arrays (indexed ones live on the stack) */
	__m512 ce, co = init, ne, no = init;
	int64_t i0 = -w->pad_lo[2];
	if (s == 1) {
		ce = cols16(op, w, xc, s1, l1, h1, i0, init);
	} else {
		__m512 a = cols16(op, w, xc, s1, l1, h1, i0, init);
		__m512 b = cols16(op, w, xc, s1, l1, h1, i0 + 16, init);
		ce = _mm512_permutex2var_ps(a, even, b);
		co = _mm512_permutex2var_ps(a, odd, b);
	}
	for (int64_t o = 0; o < OW; o += 16, i0 += 16 * s) {
		if (s == 1) {
			ne = cols16(op, w, xc, s1, l1, h1, i0 + 16, init);
		} else {
			__m512 a = cols16(op, w, xc, s1, l1, h1, i0 + 32, init);
			__m512 b = cols16(op, w, xc, s1, l1, h1, i0 + 48, init);
			ne = _mm512_permutex2var_ps(a, even, b);
			no = _mm512_permutex2var_ps(a, odd, b);
		}
		__m512 acc = init;
		for (int64_t c = 0; c < kw; c++) {
			int64_t off = c * dil, q = s == 1 ? off : off >> 1;
			bool e = s == 2 && (off & 1);
			__m512 v = q ? _mm512_permutex2var_ps(
					   e ? co : ce, _mm512_add_epi32(iota, _mm512_set1_epi32((int)q)),
					   e ? no : ne)
				 : e ? co
				     : ce;
			acc = red16_all(op, acc, v);
		}
		__mmask16 m = gc_lanes16(OW - o);
		if (op == ROW_SUM)
			acc = _mm512_div_ps(acc, _mm512_mul_ps(_mm512_set1_ps(rows),
							       _mm512_maskz_loadu_ps(m, st->col_count + o)));
		_mm512_mask_storeu_ps(y + o, m, acc);
		ce = ne;
		co = no;
	}
}

/* Inputs larger than this (an L2 cache) come from L3 or memory, where the
 * hardware prefetchers do not keep up with the row path's three-row
 * windows: on an Intel Xeon (2 MB L2), inception_v3's first MaxPool (3x3
 * s2, 5.5 MB in) took 0.47-0.51 ms in the model with software prefetch
 * against 0.63-0.83 without, its second (3.9 MB) 0.41 against 0.43-0.53;
 * on its 1.4 and 0.9 MB ones the prefetches cost 12-20 %. rows512
 * prefetches the input rows that output row POOL_AHEAD rows on first
 * reads. */
#define POOL_ROW_PREFETCH_BYTES (INT64_C(2) << 20)
#define POOL_AHEAD 2

/* The row path's loop over channels and output rows, with row512. */
ROW512_INLINE void rows512(row_op op, int s3, const gc_node *n, gc_tensor *const *in,
			   gc_tensor *const *out, int64_t c0, int64_t c1)
{
	const pool_state *st = n->state;
	const gc_nn_window *w = &st->w;
	const float *x = in[0]->data;
	float *y = out[0]->data;
	const int64_t H = w->in[1], W = w->in[2], OH = w->out[1], OW = w->out[2];
	const int64_t sh = w->stride[1], reach = (w->k[1] - 1) * w->dil[1] + 1;
	const int64_t pfn = st->prefetch ? sh * W : 0; /* floats to prefetch an output row */
	for (int64_t ch = c0; ch < c1; ch++)
		for (int64_t oh = 0; oh < OH; oh++) {
			int64_t s1 = oh * sh - w->pad_lo[1], l1, h1;
			/* the rows output row oh + POOL_AHEAD reads first (past the
			 * plane's end the next channel's) */
			prefetch_floats(x + ch * st->in_sp + (s1 + POOL_AHEAD * sh + reach - sh) * W,
					pfn);
			gc_pool_taps(s1, w->k[1], w->dil[1], H, &l1, &h1);
			float rows = op == ROW_MAX ? 0 : row_divisor(st, s1, l1, h1);
			row512(op, s3, st, x + ch * st->in_sp, s1, l1, h1, rows,
			       y + (ch * OH + oh) * OW);
		}
}

/* name: fn(op, v, ...) over the channels [c0, c1), and name_run, which splits
 * the channels over the pool (plane512 below shares it) */
#define POOL512_RANGE(name, fn, op, v)                                                             \
	static ROW512 void name(const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,     \
				int64_t c0, int64_t c1, float *buf)                                \
	{                                                                                          \
		(void)buf;                                                                         \
		fn(op, v, n, in, out, c0, c1);                                                     \
	}                                                                                          \
	static int name##_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                  \
			      gc_tensor *const *out)                                               \
	{                                                                                          \
		const pool_state *st = n->state;                                                   \
		return pool_par(k, n, in, out, name, st->channels, row_cycles(st), 0);             \
	}

POOL512_RANGE(row512_max, rows512, ROW_MAX, 0)
POOL512_RANGE(row512_sum, rows512, ROW_SUM, 0)
POOL512_RANGE(row512_max_s1k3, rows512, ROW_MAX, 1)
POOL512_RANGE(row512_max_s2k3, rows512, ROW_MAX, 2)
POOL512_RANGE(row512_sum_s1k3, rows512, ROW_SUM, 1)
POOL512_RANGE(row512_sum_s2k3, rows512, ROW_SUM, 2)

/* The run function of row512 for the window (row512_fits). */
static gc_run_fn row512_pick(const gc_nn_window *w, bool is_max)
{
	int s3 = w->k[2] == 3 && w->dil[2] == 1 ? (int)w->stride[2] : 0;
	return s3 == 1	 ? (is_max ? row512_max_s1k3_run : row512_sum_s1k3_run)
	       : s3 == 2 ? (is_max ? row512_max_s2k3_run : row512_sum_s2k3_run)
			 : (is_max ? row512_max_run : row512_sum_run);
}

/* Whether row512 serves the window: stride 1 or 2, and every tap's lanes in
 * the current and next vectors. */
static bool row512_fits(const gc_nn_window *w)
{
	int64_t s = w->stride[2];
	return (s == 1 || s == 2) && (w->k[2] - 1) * w->dil[2] <= 16 * s;
}

/*
 * The plane path: windows of stride 1 whose output rows are as wide as the
 * input's (inception_v3's 3x3 AveragePools with pad 1, googlenet's MaxPools
 * 3x3/1 pad 1) on small planes, in AVX-512. There output position p (of the
 * plane seen flat) reads input p + (a * dil - pad_lo) * W + (b * dil -
 * pad_lo) at tap (a, b), so 16 outputs of any rows take each tap row as
 * one masked load (their sums then shifted for each tap column); the masks
 * (a tap's input row and column inside the input) come from prepare. Row
 * by row, 17 or 8 outputs paid a row's overhead each time (0.3 ms for
 * 768 x 17 x 17). The order of operations is the row
 * path's: each tap column b reduced over the rows a, padding columns the
 * identity, then the columns in order, and the same divisors: the same
 * bytes.
 */
/* Chunk j of a channel's column sums: lane i the reduction over the tap
 * rows a of input p + (a dh - ph) W, p = 16 j + i (rows outside the input
 * masked off). */
ROW512_INLINE __m512 plane_col(row_op op, const float *xc, const uint16_t *rmask, int64_t j,
			       int64_t nch, int64_t kh, int64_t dh, int64_t ph, int64_t W,
			       __m512 init)
{
	__m512 v = init;
	for (int64_t a = 0; a < kh; a++) {
		__mmask16 m = rmask[a * nch + j];
		v = red16(op, v, m, _mm512_maskz_loadu_ps(m, xc + 16 * j + (a * dh - ph) * W));
	}
	return v;
}

/* Lanes sh .. sh + 15 of the chunks prev, cur, next seen as one run of 48
 * (cur's lane 0 at 16), -16 <= sh <= 16. */
ROW512_INLINE __m512 plane_shift(__m512 prev, __m512 cur, __m512 next, int sh, __m512i iota)
{
	if (sh < 0)
		return _mm512_permutex2var_ps(prev, _mm512_add_epi32(iota, _mm512_set1_epi32(16 + sh)),
					      cur);
	if (sh > 0)
		return _mm512_permutex2var_ps(cur, _mm512_add_epi32(iota, _mm512_set1_epi32(sh)),
					      next);
	return cur;
}

/* kh3: the window is 3x3 without dilation (the loops unroll). Each chunk's
 * column sums are made once, for all the window's columns: tap column b
 * reads them shifted by b dw - pw lanes (at most 16: plane_chunks), from
 * the previous, this and the next chunk's by a permute (9 loads a chunk
 * were 3: 1.5-2x faster). */
ROW512_INLINE void plane512(row_op op, bool kh3, const gc_node *n, gc_tensor *const *in,
			    gc_tensor *const *out, int64_t c0, int64_t c1)
{
	const pool_state *st = n->state;
	const gc_nn_window *w = &st->w;
	const float *x = in[0]->data, *div = plane_div(st);
	float *y = out[0]->data;
	const int64_t W = w->in[2], np = st->out_sp, nch = st->plane_chunks;
	const int64_t kh = kh3 ? 3 : w->k[1], kw = kh3 ? 3 : w->k[2];
	const int64_t dh = kh3 ? 1 : w->dil[1], dw = kh3 ? 1 : w->dil[2];
	const int64_t ph = w->pad_lo[1], pw = w->pad_lo[2];
	const uint16_t *rmask = plane_masks(st), *cmask = rmask + kh * nch;
	const __m512 init = _mm512_set1_ps(op == ROW_MAX ? -FLT_MAX : 0.0f);
	const __m512i iota = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	for (int64_t ch = c0; ch < c1; ch++) {
		const float *xc = x + ch * st->in_sp;
		float *yc = y + ch * np;
		/* the previous chunk's sums (read only by lanes of padding
		 * columns: masked off), this chunk's and the next */
		__m512 vp = init, vc = plane_col(op, xc, rmask, 0, nch, kh, dh, ph, W, init), vn;
		for (int64_t j = 0, p = 0; j < nch; j++, p += 16) {
			vn = j + 1 < nch ? plane_col(op, xc, rmask, j + 1, nch, kh, dh, ph, W, init)
					 : init;
			__m512 acc = init;
			for (int64_t b = 0; b < kw; b++) {
				__m512 v = plane_shift(vp, vc, vn, (int)(b * dw - pw), iota);
				/* padding columns: the identity */
				acc = red16_all(op, acc, _mm512_mask_mov_ps(init, cmask[b * nch + j], v));
			}
			__mmask16 m = gc_lanes16(np - p);
			if (op == ROW_SUM)
				acc = _mm512_div_ps(acc, _mm512_maskz_loadu_ps(m, div + p));
			_mm512_mask_storeu_ps(yc + p, m, acc);
			vp = vc;
			vc = vn;
		}
	}
}

POOL512_RANGE(plane512_max, plane512, ROW_MAX, false)
POOL512_RANGE(plane512_sum, plane512, ROW_SUM, false)
POOL512_RANGE(plane512_max3, plane512, ROW_MAX, true)
POOL512_RANGE(plane512_sum3, plane512, ROW_SUM, true)

/* The plane path's run function for the window. */
static gc_run_fn plane512_pick(const gc_nn_window *w, bool is_max)
{
	bool k3 = w->k[1] == 3 && w->k[2] == 3 && w->dil[1] == 1 && w->dil[2] == 1;
	return is_max ? (k3 ? plane512_max3_run : plane512_max_run)
		      : (k3 ? plane512_sum3_run : plane512_sum_run);
}
#endif

/* The plane path's 16-output chunks when it serves the window, else 0. */
static int64_t plane_chunks(const gc_nn_window *w)
{
	int64_t np = w->out[1] * w->out[2];
	if (w->nsp > 2 || w->stride[1] != 1 || w->stride[2] != 1 || w->out[2] != w->in[2] ||
	    np < 1 || np > PLANE_MAX_FLOATS || w->k[1] + w->k[2] > PLANE_MAX_TAPS ||
	    w->pad_lo[2] > 16 || (w->k[2] - 1) * w->dil[2] - w->pad_lo[2] > 16)
		return 0;
	return (np + 15) / 16;
}

/* Bytes of the plane path's tables after col_count. */
static size_t plane_bytes(const gc_nn_window *w)
{
	int64_t nch = plane_chunks(w);
	return (size_t)(w->out[1] * w->out[2]) * sizeof(float) +
	       (size_t)((w->k[1] + w->k[2]) * nch) * sizeof(uint16_t);
}

/* The divisors (the row path's rows * col_count) and the taps' masks: lane
 * i of chunk j is output p = 16 j + i; tap row a's mask has the lanes whose
 * input row lies inside the input, tap column b's those whose column does. */
static void plane_tables(pool_state *st)
{
	const gc_nn_window *w = &st->w;
	const int64_t H = w->in[1], W = w->in[2], np = w->out[1] * W, nch = st->plane_chunks;
	float *div = plane_div(st);
	uint16_t *rmask = plane_masks(st), *cmask = rmask + w->k[1] * nch;
	memset(rmask, 0, (size_t)((w->k[1] + w->k[2]) * nch) * sizeof *rmask);
	for (int64_t p = 0; p < np; p++) {
		int64_t oh = p / W, ow = p % W, s1 = oh - w->pad_lo[1], l1, h1;
		gc_pool_taps(s1, w->k[1], w->dil[1], H, &l1, &h1);
		div[p] = row_divisor(st, s1, l1, h1) * st->col_count[ow];
		uint16_t bit = (uint16_t)(1u << (p % 16));
		for (int64_t a = 0; a < w->k[1]; a++) {
			int64_t r = s1 + a * w->dil[1];
			if (r >= 0 && r < H)
				rmask[a * nch + p / 16] |= bit;
		}
		for (int64_t b = 0; b < w->k[2]; b++) {
			int64_t c = ow - w->pad_lo[2] + b * w->dil[2];
			if (c >= 0 && c < W)
				cmask[b * nch + p / 16] |= bit;
		}
	}
}

ROW_INLINE void row_pool(const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			 int64_t c0, int64_t c1, float *buf, row_op op)
{
	const pool_state *st = n->state;
	const gc_nn_window *w = &st->w;
	const float *x = in[0]->data;
	float *y = out[0]->data;
	const float init = op == ROW_MAX ? -FLT_MAX : 0.0f;
	const int64_t H = w->in[1], W = w->in[2], OH = w->out[1], OW = w->out[2];
	const int64_t pl = w->pad_lo[2] < st->row_len ? w->pad_lo[2] : st->row_len;
	/* Input columns some window reads; the rest of the buffer is padding. */
	const int64_t cols = st->row_len - pl < W ? st->row_len - pl : W;
	for (int64_t i = 0; i < pl; i++)
		buf[i] = init;
	for (int64_t i = pl + cols; i < st->row_len; i++)
		buf[i] = init;
	for (int64_t ch = c0; ch < c1; ch++) {
		const float *xc = x + ch * st->in_sp;
		for (int64_t oh = 0; oh < OH; oh++) {
			int64_t s1 = oh * w->stride[1] - w->pad_lo[1], l1, h1;
			gc_pool_taps(s1, w->k[1], w->dil[1], H, &l1, &h1);
			float *yr = y + (ch * OH + oh) * OW;
			rows_reduce(op, buf + pl, xc, s1, w->dil[1], l1, h1, W, init, cols);
			row_taps(op, yr, buf, OW, w->stride[2], w->k[2], w->dil[2], init);
			for (int64_t o = 0; op == ROW_SUM && o < OW; o++)
				yr[o] = yr[o] / (row_divisor(st, s1, l1, h1) * st->col_count[o]);
		}
	}
}

GC_NN_SIMD static void maxpool_rows_range(const gc_node *n, gc_tensor *const *in,
					  gc_tensor *const *out, int64_t c0, int64_t c1,
					  float *buf)
{
	row_pool(n, in, out, c0, c1, buf, ROW_MAX);
}

GC_NN_SIMD static void avgpool_rows_range(const gc_node *n, gc_tensor *const *in,
					  gc_tensor *const *out, int64_t c0, int64_t c1,
					  float *buf)
{
	row_pool(n, in, out, c0, c1, buf, ROW_SUM);
}

/* Row buffer bytes of one thread. */
static uint64_t row_slot_bytes(const pool_state *st)
{
	return gc_nn_align((uint64_t)st->row_len * sizeof(float));
}

/* Cycles of the row path: about one per input element read and per output
 * tap. */
static double row_cycles(const pool_state *st)
{
	const gc_nn_window *w = &st->w;
	return (double)st->channels *
	       ((double)st->out_sp * (double)(w->k[1] + w->k[2]) + (double)st->in_sp);
}

static int maxpool_rows_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			    gc_tensor *const *out)
{
	const pool_state *st = n->state;
	return pool_par(k, n, in, out, maxpool_rows_range, st->channels, row_cycles(st),
			row_slot_bytes(st));
}

/*
 * MaxPool and AveragePool 2x2 stride 2 without padding (VGG's, DenseNet's
 * transitions): the row path's operations in its order, fused into one
 * pass over each pair of input rows with no row buffer: column reductions
 * b[j] = red(red(init, r0[j]), r1[j]), then y[o] = red(red(init, b[2o]),
 * b[2o + 1]), the average's divided by its rows * col_count = 4 (as a
 * product with 0.25, which is exact) -- so the same bytes. The generic row
 * leaves the deinterleaving to the compiler (4 permutes for 16 outputs);
 * the AVX-512 one, picked at prepare, takes the column reductions of 32
 * inputs first and deinterleaves those (2). DenseNet-169's AveragePools
 * (128x56x56 and smaller) took 0.23 ms a run on the row kernel against
 * 0.07 in ORT.
 */
typedef void (*pool_2x2_row_fn)(const float *r0, const float *r1, float *restrict y, int64_t ow);

ROW_INLINE void pool_2x2_row(row_op op, const float *r0, const float *r1, float *restrict y,
			     int64_t ow)
{
	const float init = op == ROW_MAX ? -FLT_MAX : 0.0f;
	for (int64_t o = 0; o < ow; o++) {
		float b0 = row_red(op, row_red(op, init, r0[2 * o]), r1[2 * o]);
		float b1 = row_red(op, row_red(op, init, r0[2 * o + 1]), r1[2 * o + 1]);
		float v = row_red(op, row_red(op, init, b0), b1);
		y[o] = op == ROW_SUM ? v * 0.25f : v;
	}
}

GC_NN_SIMD static void maxpool_2x2_row(const float *r0, const float *r1, float *restrict y,
				       int64_t ow)
{
	pool_2x2_row(ROW_MAX, r0, r1, y, ow);
}

GC_NN_SIMD static void avgpool_2x2_row(const float *r0, const float *r1, float *restrict y,
				       int64_t ow)
{
	pool_2x2_row(ROW_SUM, r0, r1, y, ow);
}

#if defined(__x86_64__) && defined(__GNUC__)
ROW512_INLINE void pool_2x2_row512(row_op op, const float *r0, const float *r1, float *restrict y,
				   int64_t ow)
{
	const __m512 init = _mm512_set1_ps(op == ROW_MAX ? -FLT_MAX : 0.0f);
	const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
	for (int64_t o = 0; o < ow; o += 16) {
		int64_t left = ow - o < 16 ? ow - o : 16;
		/* the 2 * left inputs, as two masks of 16 */
		uint32_t m = left == 16 ? 0xffffffffu : (1u << 2 * left) - 1;
		__mmask16 m0 = (__mmask16)m, m1 = (__mmask16)(m >> 16);
		const float *a = r0 + 2 * o, *b = r1 + 2 * o;
		__m512 lo = red16_all(op, red16_all(op, init, _mm512_maskz_loadu_ps(m0, a)),
				      _mm512_maskz_loadu_ps(m0, b));
		__m512 hi = red16_all(op, red16_all(op, init, _mm512_maskz_loadu_ps(m1, a + 16)),
				      _mm512_maskz_loadu_ps(m1, b + 16));
		__m512 e = red16_all(op, init, _mm512_permutex2var_ps(lo, even, hi));
		__m512 v = red16_all(op, e, _mm512_permutex2var_ps(lo, odd, hi));
		if (op == ROW_SUM)
			v = _mm512_mul_ps(v, _mm512_set1_ps(0.25f));
		_mm512_mask_storeu_ps(y + o, (__mmask16)((1u << left) - 1), v);
	}
}

static ROW512 void maxpool_2x2_row512(const float *r0, const float *r1, float *restrict y,
				      int64_t ow)
{
	pool_2x2_row512(ROW_MAX, r0, r1, y, ow);
}

static ROW512 void avgpool_2x2_row512(const float *r0, const float *r1, float *restrict y,
				      int64_t ow)
{
	pool_2x2_row512(ROW_SUM, r0, r1, y, ow);
}
#endif

static pool_2x2_row_fn pool_2x2_row_best(bool is_max)
{
#if defined(__x86_64__) && defined(__GNUC__)
	if (gc_pk_usable()) /* the packed kernels' AVX-512 check */
		return is_max ? maxpool_2x2_row512 : avgpool_2x2_row512;
#endif
	return is_max ? maxpool_2x2_row : avgpool_2x2_row;
}

/* Inputs larger than this that a Conv has just written are mostly past L2
 * when the pool reads them, and the hardware prefetchers do not keep up:
 * vgg11's first MaxPool (12.8 MB after its Conv) takes 0.50 ms with
 * software prefetch against 1.07 without. The bound was 8 MB, above which
 * an AMD Zen 4 gained and below which the prefetches cost instructions
 * (+5-15 % where the input was in L2 or L3); on an Intel Xeon (2 MB of L2
 * a core, a large L3 shared with other tenants) vgg11's MaxPools of 3.2,
 * 1.6 and 1.6 MB took 585, 315 and 175 us with them against 759, 416 and
 * 221 without (ONNX Runtime's 452-490, 270 and 189), unet's 2 MB one 75
 * against 86; those of 0.4 MB and less gain nothing either way. */
#define POOL_PREFETCH_BYTES (INT64_C(1) << 20)

static void pool_2x2_range(const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			      int64_t c0, int64_t c1, float *buf)
{
	(void)buf;
	const pool_state *st = n->state;
	const gc_nn_window *w = &st->w;
	const float *x = in[0]->data;
	float *y = out[0]->data;
	const int64_t W = w->in[2], OH = w->out[1], OW = w->out[2];
	const int64_t pf = st->prefetch ? 2 * W : 0; /* floats to prefetch a row pair */
	for (int64_t ch = c0; ch < c1; ch++)
		for (int64_t oh = 0; oh < OH; oh++) {
			const float *r0 = x + ch * st->in_sp + 2 * oh * W;
			prefetch_floats(r0 + 8 * W, pf); /* the row pair 4 ahead */
			st->row_2x2(r0, r0 + W, y + (ch * OH + oh) * OW, OW);
		}
}

static int pool_2x2_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			gc_tensor *const *out)
{
	const pool_state *st = n->state;
	return pool_par(k, n, in, out, pool_2x2_range, st->channels, row_cycles(st), 0);
}

/* Whether the window is pool_2x2_range's: 2x2, stride 2,
 * no dilation, padding or ceil_mode overhang. */
static bool is_2x2(const gc_nn_window *w)
{
	for (int d = 1; d < GC_NN_MAX_SPATIAL; d++)
		if (w->k[d] != 2 || w->stride[d] != 2 || w->dil[d] != 1 || w->pad_lo[d] ||
		    w->out[d] * 2 > w->in[d])
			return false;
	return w->k[0] == 1 && w->out[0] == w->in[0];
}

/* 8-bit MaxPool on the row path: qpool.c (its buffer the row's bytes). */
static void maxpool8_rows_range(const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
				int64_t c0, int64_t c1, float *buf)
{
	const pool_state *st = n->state;
	gc_maxpool8_rows(&st->w, in[0]->dtype == GC_DTYPE_INT8, st->v512, in[0]->data,
			 out[0]->data, st->in_sp, st->out_sp, c0, c1, (uint8_t *)buf, st->row_len);
}

static int maxpool8_rows_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			     gc_tensor *const *out)
{
	const pool_state *st = n->state;
	return pool_par(k, n, in, out, maxpool8_rows_range, st->channels, row_cycles(st) / 4,
			row_slot_bytes(st));
}

static int avgpool_rows_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			    gc_tensor *const *out)
{
	const pool_state *st = n->state;
	return pool_par(k, n, in, out, avgpool_rows_range, st->channels, row_cycles(st),
			row_slot_bytes(st));
}

/* Whether the row path serves this window (float32 without Indices is the
 * caller's check): one or two spatial dims and a buffer of sane length. */
static int64_t row_path_len(const gc_nn_window *w)
{
	if (w->nsp > 2 || w->out[1] < 1 || w->out[2] < 1)
		return 0;
	int64_t len = (w->out[2] - 1) * w->stride[2] + (w->k[2] - 1) * w->dil[2] + 1;
	return len > 0 && len <= ROW_PATH_MAX_LEN ? len : 0;
}

static int pool_dtype_ok(gc_dtype t, int ints)
{
	return t == GC_DTYPE_FLOAT || t == GC_DTYPE_DOUBLE || gc_nn_is_half(t) ||
	       (ints && (t == GC_DTYPE_INT8 || t == GC_DTYPE_UINT8));
}

static int pool_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			int is_max)
{
	const gc_tensor *x = in[0];
	char s1[128];
	if (!pool_dtype_ok(x->dtype, is_max))
		return gc_kerr(k, GC_EUNSUPPORTED, "input X has type %s, which %s does not take",
			       gc_dtype_name(x->dtype), n->op_type);
	if (x->rank < 3 || x->rank > 2 + GC_NN_MAX_SPATIAL)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input X has shape %s; graphcc pools 1 to 3 spatial dimensions "
			       "(rank 3 to 5)",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	int64_t ceil_mode = gc_attr_i(k, "ceil_mode", 0);
	int64_t cip = is_max ? 0 : gc_attr_i(k, "count_include_pad", 0);
	int64_t so = is_max ? gc_attr_i(k, "storage_order", 0) : 0;
	if (gc_kok(k))
		return gc_kok(k);
	if (ceil_mode != 0 && ceil_mode != 1)
		return gc_kerr(k, GC_EINVAL, "attribute 'ceil_mode' must be 0 or 1, got %" PRId64,
			       ceil_mode);
	if (so != 0 && so != 1)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'storage_order' must be 0 or 1, got %" PRId64, so);
	int32_t nsp = x->rank - 2;
	gc_nn_window w;
	if (gc_nn_window_init(k, nsp, x->dims + 2, NULL, (int)ceil_mode, &w))
		return gc_kok(k);
	int has_indices = is_max && gc_nn_has_out(n, out, 1);
	bool q8 = x->dtype == GC_DTYPE_INT8 || x->dtype == GC_DTYPE_UINT8; /* MaxPool's */
	int64_t row_len = has_indices || !(x->dtype == GC_DTYPE_FLOAT || gc_nn_is_half(x->dtype) || q8)
			      ? 0
			      : row_path_len(&w);
	/* The plane path (AVX-512) in place of the row path where it serves. */
	int64_t chunks = row_len && !q8 && gc_pk_usable() ? plane_chunks(&w) : 0;
	pool_state *st = gc_kstate(k, n,
				   sizeof *st + (row_len ? (size_t)w.out[2] * sizeof(float) : 0) +
				       (chunks ? plane_bytes(&w) : 0));
	if (!st)
		return gc_kok(k);
	st->w = w;
	st->row_len = row_len;
	st->plane_chunks = chunks;
	for (int64_t o = 0; row_len && o < w.out[2]; o++) {
		int64_t s2 = o * w.stride[2] - w.pad_lo[2], l2, h2;
		gc_pool_taps(s2, w.k[2], w.dil[2], w.in[2], &l2, &h2);
		st->col_count[o] =
		    (float)(cip ? taps_with_pad(s2, w.k[2], w.dil[2], w.in[2], w.pad_hi[2])
				: h2 - l2);
	}
	st->count_include_pad = cip != 0;
	if (chunks)
		plane_tables(st);
	st->channels = x->dims[0] * x->dims[1];
	st->in_sp = st->w.in[0] * st->w.in[1] * st->w.in[2];
	st->out_sp = st->w.out[0] * st->w.out[1] * st->w.out[2];
	st->count_include_pad = cip != 0;
	st->storage_order = (int)so;
	int64_t dims[GC_MAX_RANK] = {x->dims[0], x->dims[1]};
	for (int i = 0; i < nsp; i++)
		dims[2 + i] = st->w.out[GC_NN_MAX_SPATIAL - nsp + i];
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	if (has_indices) {
		st->has_indices = 1;
		gc_set_shape(out[1], GC_DTYPE_INT64, x->rank, dims);
	}
	gc_run_fn f32 = !is_max		  ? avgpool_f32_run
			: st->has_indices ? maxpool_ind_f32_run
					  : maxpool_f32_run;
	uint64_t scratch = 0;
	if (row_len && !q8) {
		f32 = is_max ? maxpool_rows_run : avgpool_rows_run;
		scratch = POOL_SLOTS * row_slot_bytes(st);
#if defined(__x86_64__) && defined(__GNUC__)
		/* the packed kernels' AVX-512 check */
		if (chunks || (row512_fits(&w) && gc_pk_usable())) {
			f32 = chunks ? plane512_pick(&w, is_max) : row512_pick(&w, is_max);
			scratch = 0;
			st->prefetch = !chunks && st->channels * st->in_sp * (int64_t)sizeof(float) >
						      POOL_ROW_PREFETCH_BYTES;
		}
#endif
	}
	if (row_len && is_2x2(&w) && !gc_reference_kernels()) {
		f32 = pool_2x2_run;
		st->row_2x2 = pool_2x2_row_best(is_max);
		st->prefetch = st->channels * st->in_sp * (int64_t)sizeof(float) > POOL_PREFETCH_BYTES;
		scratch = 0;
	}
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, f32, scratch);
	n->scratch_bytes = scratch;
	switch (x->dtype) {
	case GC_DTYPE_DOUBLE:
		n->run = !is_max	   ? avgpool_f64_run
			 : st->has_indices ? maxpool_ind_f64_run
					   : maxpool_f64_run;
		break;
	case GC_DTYPE_INT8:
		n->run = st->has_indices ? maxpool_ind_i8_run : maxpool_i8_run;
		break;
	case GC_DTYPE_UINT8:
		n->run = st->has_indices ? maxpool_ind_u8_run : maxpool_u8_run;
		break;
	default:
		n->run = f32;
	}
	if (q8 && row_len && !gc_reference_kernels()) {
		n->run = maxpool8_rows_run;
		st->v512 = gc_maxpool8_v512();
		n->scratch_bytes = POOL_SLOTS * row_slot_bytes(st);
	}
	return 0;
}

int gc_prepare_MaxPool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return pool_prepare(k, n, in, out, 1);
}

int gc_prepare_AveragePool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return pool_prepare(k, n, in, out, 0);
}

/* ---- global pooling ---- */

#define GLOBAL_RUN(name)                                                                           \
	static int name##_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                  \
			      gc_tensor *const *out)                                               \
	{                                                                                          \
		const pool_state *st = n->state;                                                   \
		return pool_par(k, n, in, out, name##_range, st->channels,                         \
				(double)st->channels * (double)st->in_sp, 0);                      \
	}

#define GLOBAL_DEFINE(T, sfx, SUM, MAX)                                                            \
	GC_NN_SIMD static void gavg_##sfx##_range(const gc_node *n, gc_tensor *const *in,          \
						  gc_tensor *const *out, int64_t c0, int64_t c1,   \
						  float *buf)                                      \
	{                                                                                          \
		(void)buf;                                                                         \
		const pool_state *st = n->state;                                                   \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		for (int64_t ch = c0; ch < c1; ch++) {                                             \
			const T *xc = x + ch * st->in_sp;                                          \
			y[ch] = SUM(xc, st->in_sp) / (T)st->in_sp;                                 \
		}                                                                                  \
	}                                                                                          \
	GLOBAL_RUN(gavg_##sfx)                                                                     \
	GC_NN_SIMD static void gmax_##sfx##_range(const gc_node *n, gc_tensor *const *in,          \
						  gc_tensor *const *out, int64_t c0, int64_t c1,   \
						  float *buf)                                      \
	{                                                                                          \
		(void)buf;                                                                         \
		const pool_state *st = n->state;                                                   \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		for (int64_t ch = c0; ch < c1; ch++) {                                             \
			const T *xc = x + ch * st->in_sp;                                          \
			y[ch] = MAX(xc, st->in_sp);                                                \
		}                                                                                  \
	}                                                                                          \
	GLOBAL_RUN(gmax_##sfx)                                                                     \
	static void glp_##sfx##_range(const gc_node *n, gc_tensor *const *in,                      \
				      gc_tensor *const *out, int64_t c0, int64_t c1, float *buf)   \
	{                                                                                          \
		(void)buf;                                                                         \
		const pool_state *st = n->state;                                                   \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		for (int64_t ch = c0; ch < c1; ch++) {                                             \
			const T *xc = x + ch * st->in_sp;                                          \
			double s = 0;                                                              \
			for (int64_t i = 0; i < st->in_sp; i++)                                    \
				s += st->lp_p == 2 ? (double)xc[i] * xc[i]                         \
						   : pow(fabs((double)xc[i]), st->lp_p);           \
			y[ch] = (T)(st->lp_p == 2 ? sqrt(s) : pow(s, 1 / st->lp_p));               \
		}                                                                                  \
	}                                                                                          \
	GLOBAL_RUN(glp_##sfx)

static inline double sum_f64(const double *x, int64_t n)
{
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

static inline double max_f64(const double *x, int64_t n)
{
	double m = x[0];
	for (int64_t i = 1; i < n; i++)
		m = x[i] > m ? x[i] : m;
	return m;
}

GLOBAL_DEFINE(float, f32, gc_nn_sum_f32, gc_nn_max_f32)
GLOBAL_DEFINE(double, f64, sum_f64, max_f64)

/* kind: 0 average, 1 max, 2 Lp (GlobalLpPool: (sum |x|^p)^(1/p), p a float
 * attribute at opset 1, an int from 2). */
static int global_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			  int kind)
{
	const gc_tensor *x = in[0];
	char s1[128];
	double p = kind != 2 ? 0 : n->opset < 2 ? gc_attr_f(k, "p", 2.0f) : (double)gc_attr_i(k, "p", 2);
	if (gc_kok(k))
		return gc_kok(k);
	if (kind == 2 && !(p > 0 && p <= 1e6))
		return gc_kerr(k, GC_EINVAL, "attribute 'p' = %g; must be positive", p);
	if (!pool_dtype_ok(x->dtype, 0))
		return gc_kerr(k, GC_EUNSUPPORTED, "input X has type %s, which %s does not take",
			       gc_dtype_name(x->dtype), n->op_type);
	if (x->rank < 2)
		return gc_kerr(k, GC_EINVAL, "input X has shape %s; expected N x C x ...",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	pool_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->lp_p = p;
	st->channels = x->dims[0] * x->dims[1];
	st->in_sp = 1;
	int64_t dims[GC_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		dims[i] = i < 2 ? x->dims[i] : 1;
		if (i >= 2)
			st->in_sp *= x->dims[i];
	}
	if (st->in_sp == 0)
		return gc_kerr(k, GC_EINVAL, "input X of shape %s has no spatial elements to pool",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	static const gc_run_fn f32s[3] = {gavg_f32_run, gmax_f32_run, glp_f32_run};
	static const gc_run_fn f64s[3] = {gavg_f64_run, gmax_f64_run, glp_f64_run};
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, f32s[kind], 0);
	n->run = x->dtype == GC_DTYPE_DOUBLE ? f64s[kind] : f32s[kind];
	return 0;
}

int gc_prepare_GlobalAveragePool(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				 gc_tensor *const *out)
{
	return global_prepare(k, n, in, out, 0);
}

int gc_prepare_GlobalMaxPool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return global_prepare(k, n, in, out, 1);
}

int gc_prepare_GlobalLpPool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return global_prepare(k, n, in, out, 2);
}
