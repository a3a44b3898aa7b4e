/* Neural-network ops: convolution, GEMM-shaped work (through OpenBLAS),
 * pooling, normalisation, softmax. X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_NN_H
#define GC_K_NN_H

#include "../kernel.h"

#include <stdbool.h>
#include <stdint.h>

/* BatchNormalization lists up to 5 outputs because opset 7-13 models may name
 * the training outputs; prepare refuses them with a message saying why. */
#define GC_OPS_NN(X)                                                                               \
	X(Conv, 2, 6, 1, 1)                                                                        \
	X(ConvTranspose, 2, 3, 1, 1)                                                               \
	X(Col2Im, 3, 3, 1, 1)                                                                      \
	X(DeformConv, 3, 5, 1, 1)                                                                  \
	X(Gemm, 2, 3, 1, 1)                                                                        \
	X(MatMul, 2, 2, 1, 1)                                                                      \
	X(BatchNormalization, 5, 5, 1, 5)                                                          \
	X(InstanceNormalization, 3, 3, 1, 1)                                                       \
	X(GroupNormalization, 3, 3, 1, 1)                                                          \
	X(LpNormalization, 1, 1, 1, 1)                                                             \
	X(LRN, 1, 1, 1, 1)                                                                         \
	X(MaxPool, 1, 1, 1, 2)                                                                     \
	X(AveragePool, 1, 1, 1, 1)                                                                 \
	X(GlobalAveragePool, 1, 1, 1, 1)                                                           \
	X(GlobalMaxPool, 1, 1, 1, 1)                                                               \
	X(GlobalLpPool, 1, 1, 1, 1)                                                                \
	X(LpPool, 1, 1, 1, 1)                                                                      \
	X(LayerNormalization, 2, 3, 1, 3)                                                          \
	X(RMSNormalization, 2, 2, 1, 1)                                                            \
	X(Softmax, 1, 1, 1, 1)                                                                     \
	X(LogSoftmax, 1, 1, 1, 1)                                                                  \
	X(Attention, 3, 6, 1, 4)                                                                   \
	X(RotaryEmbedding, 3, 4, 1, 1)

/*
 * Shared by the nn kernel files (conv.c, gemm.c, pool.c, norm.c); not for
 * other families.
 */

#define GC_NN_MAX_SPATIAL 3

/* A sliding window over the spatial dims (Conv, ConvTranspose, pooling),
 * always held as 3-D: a 1-D or 2-D op has leading dims of 1. */
typedef struct gc_nn_window {
	int32_t nsp; /* the op's own spatial rank, 1..3 */
	int64_t in[3], k[3], stride[3], dil[3], pad_lo[3], pad_hi[3], out[3];
} gc_nn_window;

/*
 * Reads kernel_shape (checked against `kernel` when given, e.g. Conv's W
 * dims; required when NULL), strides, dilations, pads and auto_pad, and
 * computes the output spatial dims (`ceil_mode` as pooling's). Errors name
 * the attribute and value.
 */
int gc_nn_window_init(gc_kctx *k, int32_t nsp, const int64_t *in_sp, const int64_t *kernel,
		      int ceil_mode, gc_nn_window *w);
/* v's n values as "[a, b, ...]" in buf, for messages (conv.c). */
const char *gc_nn_ints_str(const int64_t *v, int64_t n, char *buf, size_t len);

/* The outputs o in [*lo, *hi) for which o*s + off lands in [0, n). */
static inline void gc_nn_valid_range(int64_t off, int64_t s, int64_t n, int64_t nout, int64_t *lo,
				     int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
	int64_t h = n - 1 - off < 0 ? 0 : (n - 1 - off) / s + 1;
	if (h > nout)
		h = nout;
	if (l > h)
		l = h;
	*lo = l;
	*hi = h;
}


/* 0 when X is float16/32/64 and W and B (if any) of its type, else an
 * error on k naming them and op (Conv, ConvTranspose; conv.c). */
int gc_nn_conv_types(gc_kctx *k, const char *op, const gc_tensor *x, const gc_tensor *wt,
		     const gc_tensor *b);
/* 0 when BLAS is loaded (loads it), else an error on k naming why (gemm.c). */
int gc_nn_blas_ready(gc_kctx *k);

/*
 * The window of w's live taps (those that read the input at some output;
 * conv-live.c) in *live, the first live tap of each dim in first: 1 when
 * that drops taps, 0 when every tap is live or the cut does not suit (live
 * is then w). Same outputs; pads shrink to what the live taps reach.
 */
int gc_nn_window_live(const gc_nn_window *w, gc_nn_window *live, int64_t first[3]);
/* Copies the live taps' weights of `rows` kernels (w's taps each) to dst. */
void gc_nn_window_live_weights(const gc_nn_window *w, const gc_nn_window *live,
			       const int64_t first[3], int64_t rows, const float *wt, float *dst);

/*
 * Every nn op state starts with this, so that float16/bfloat16 run through
 * the float32 kernel: gc_nn_half_run converts the inputs and outputs marked
 * in the masks through scratch memory and calls f32_run.
 */
typedef struct gc_nn_base {
	gc_run_fn f32_run;
	uint64_t f32_scratch;
	uint32_t in_mask, out_mask;
} gc_nn_base;

/*
 * Makes n run through f32_run for a float16/bfloat16 node: inputs and outputs
 * of dtype float16/bfloat16 are converted. n->state must start with a
 * gc_nn_base; f32_scratch is the scratch the float kernel needs. Sets n->run
 * and n->scratch_bytes.
 */
int gc_nn_half_setup(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		     gc_run_fn f32_run, uint64_t f32_scratch);

/* Whether output i of n is wanted (present and named). */
static inline int gc_nn_has_out(const gc_node *n, gc_tensor *const *out, int i)
{
	return i < n->n_out && out[i] && (!n->out || n->out[i] >= 0);
}

/* float16 and bfloat16. */
static inline int gc_nn_is_half(gc_dtype t)
{
	return t == GC_DTYPE_FLOAT16 || t == GC_DTYPE_BFLOAT16;
}

/*
 * C = alpha op(A) op(B) + beta C (gc_sgemm's arguments) with the product
 * split over up to `threads` threads of the nn-par pool: blocks of C's rows
 * (or of its columns when it has few rows), each an OpenBLAS call on one
 * thread (OpenBLAS itself never runs threads: see blas.c). Small products,
 * and threads <= 1, are one call on this thread.
 */
void gc_nn_sgemm(int threads, bool trans_a, bool trans_b, int m, int n, int k, float alpha,
		 const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
void gc_nn_dgemm(int threads, bool trans_a, bool trans_b, int m, int n, int k, double alpha,
		 const double *a, int lda, const double *b, int ldb, double beta, double *c,
		 int ldc);
/* y[c] = alpha b[c] . x for c in [c0, c1), b [rows][k]: a matrix-vector
 * product over a range of rows on the calling thread (gemm.c: GEMV_ROWS
 * rows read side by side on AVX-512, so that many streams of b are in
 * flight; elsewhere one dot product a row). The same bytes for a row
 * whatever range it falls in. */
void gc_nn_gemv_rows(const float *b, int64_t k, const float *x, float alpha, float *y, int64_t c0,
		     int64_t c1);
/* y = x a[ch] + b[ch] over x [outer, c, inner] (float32 or float64), then
 * max(0, y) when relu, on the pool: a BatchNormalization (and Relu) that a
 * Conv took in (norm.c). y may be x. */
void gc_nn_channel_affine(gc_kctx *k, gc_dtype dt, int64_t outer, int64_t c, int64_t inner,
			  const void *x, const void *a, const void *b, int relu, void *y);
/* The first column panel (of GC_PK_NR columns) of part `part` of `parts` of
 * a packed product of n columns split by columns (gemm.c): contiguous runs
 * as even in cost as whole panels allow (a partial last panel costs its
 * 16-column vectors); part >= parts gives the panel count. */
int64_t gc_nn_pk_cols_start(int64_t n, int part, int parts);

/*
 * The hot loops are compiled for AVX-512 and AVX2+FMA as well as the baseline
 * (picked once at load time through an ifunc), and at -O3 so that GCC
 * vectorises them: the build's -O2 leaves loops of unknown length scalar.
 */
/* (Not under ThreadSanitizer: ifunc resolvers run before its runtime starts.) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
	!defined(__SANITIZE_THREAD__)
#define GC_NN_SIMD __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define GC_NN_O3 _Pragma("GCC optimize(\"O3\", \"fp-contract=fast\")")
#else
#define GC_NN_SIMD
#define GC_NN_O3
#endif

/*
 * Float reductions with 16 partial results, which GCC vectorises (a plain
 * `s += x[i]` loop stays scalar without -ffast-math). Inlined into the
 * GC_NN_SIMD callers, so they get each clone's instruction set.
 */
#define GC_NN_LANES 16

static inline float gc_nn_sum_f32(const float *x, int64_t n)
{
	float acc[GC_NN_LANES] = {0}, s = 0;
	int64_t i = 0;
	for (; i + GC_NN_LANES <= n; i += GC_NN_LANES)
		for (int j = 0; j < GC_NN_LANES; j++)
			acc[j] += x[i + j];
	for (; i < n; i++)
		s += x[i];
	for (int j = 0; j < GC_NN_LANES; j++)
		s += acc[j];
	return s;
}

/* sum_i a[i] b[i], as gc_nn_sum_f32 (vectorised in GC_NN_SIMD callers). */
static inline float gc_nn_dot_f32(const float *a, const float *b, int64_t n)
{
	float acc[GC_NN_LANES] = {0}, s = 0;
	int64_t i = 0;
	for (; i + GC_NN_LANES <= n; i += GC_NN_LANES)
		for (int j = 0; j < GC_NN_LANES; j++)
			acc[j] += a[i + j] * b[i + j];
	for (; i < n; i++)
		s += a[i] * b[i];
	for (int j = 0; j < GC_NN_LANES; j++)
		s += acc[j];
	return s;
}

/* Sum of (x - c)^2. */
static inline float gc_nn_sumsq_f32(const float *x, float c, int64_t n)
{
	float acc[GC_NN_LANES] = {0}, s = 0;
	int64_t i = 0;
	for (; i + GC_NN_LANES <= n; i += GC_NN_LANES)
		for (int j = 0; j < GC_NN_LANES; j++) {
			float d = x[i + j] - c;
			acc[j] += d * d;
		}
	for (; i < n; i++) {
		float d = x[i] - c;
		s += d * d;
	}
	for (int j = 0; j < GC_NN_LANES; j++)
		s += acc[j];
	return s;
}

/* Largest element (n >= 1); NaN elements are skipped. */
static inline float gc_nn_max_f32(const float *x, int64_t n)
{
	float acc[GC_NN_LANES], m = x[0];
	for (int j = 0; j < GC_NN_LANES; j++)
		acc[j] = x[0];
	int64_t i = 0;
	for (; i + GC_NN_LANES <= n; i += GC_NN_LANES)
		for (int j = 0; j < GC_NN_LANES; j++)
			acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
	for (; i < n; i++)
		m = x[i] > m ? x[i] : m;
	for (int j = 0; j < GC_NN_LANES; j++)
		m = acc[j] > m ? acc[j] : m;
	return m;
}

/* Rounds scratch offsets up so that every buffer is 64-byte aligned. */
static inline uint64_t gc_nn_align(uint64_t bytes)
{
	return (bytes + 63) & ~(uint64_t)63;
}

#endif
