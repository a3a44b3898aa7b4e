/* Gemm and MatMul through OpenBLAS (float32/float64), a plain loop for the
 * integer types; float32 products of two or more rows by a constant B on the
 * packed row GEMM of sgemm-pack.h (B packed at prepare) on AVX-512 CPUs, and
 * of one row by B [n][k] streamed in place (gemv_run); also the helpers the
 * nn kernel files share. */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../blas.h"
#include "kutil.h"
#include "lanes.h"
#include "nn-act.h"
#include "nn-par.h"
#include "nn.h"
#include "sgemm-pack.h"
#include "vmath.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define GEMV_X86 1 /* the one-row and few-row kernels (gemv_run, few_rows) */
#define GEMV_TARGET __attribute__((target("avx512f,fma")))
#include <immintrin.h>

#include "lanes.h"
#endif

GC_NN_O3

/* ---- shared by the nn kernel files ---- */

#define NN_MAX_IO 8

static int half_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_nn_base *b = n->state;
	char *s = k->scratch;
	gc_tensor tin[NN_MAX_IO], tout[NN_MAX_IO];
	gc_tensor *pin[NN_MAX_IO], *pout[NN_MAX_IO];
	for (int i = 0; i < n->n_in; i++) {
		pin[i] = in[i];
		if (!in[i] || !(b->in_mask >> i & 1))
			continue;
		int64_t cnt = gc_tensor_numel(in[i]);
		const uint16_t *src = in[i]->data;
		float *dst = (float *)s;
		if (in[i]->dtype == GC_DTYPE_FLOAT16)
			for (int64_t j = 0; j < cnt; j++)
				dst[j] = gc_f16_to_f32(src[j]);
		else
			for (int64_t j = 0; j < cnt; j++)
				dst[j] = gc_bf16_to_f32(src[j]);
		tin[i] = *in[i];
		tin[i].dtype = GC_DTYPE_FLOAT;
		tin[i].data = dst;
		pin[i] = &tin[i];
		s += gc_nn_align((uint64_t)cnt * 4);
	}
	for (int i = 0; i < n->n_out; i++) {
		pout[i] = out[i];
		if (!out[i] || !(b->out_mask >> i & 1))
			continue;
		tout[i] = *out[i];
		tout[i].dtype = GC_DTYPE_FLOAT;
		tout[i].data = s;
		pout[i] = &tout[i];
		s += gc_nn_align((uint64_t)gc_tensor_numel(out[i]) * 4);
	}
	gc_kctx k2 = *k;
	k2.scratch = s;
	int rc = b->f32_run(&k2, n, pin, pout);
	if (rc)
		return rc;
	for (int i = 0; i < n->n_out; i++) {
		if (pout[i] == out[i])
			continue;
		int64_t cnt = gc_tensor_numel(out[i]);
		const float *src = tout[i].data;
		uint16_t *dst = out[i]->data;
		if (out[i]->dtype == GC_DTYPE_FLOAT16)
			for (int64_t j = 0; j < cnt; j++)
				dst[j] = gc_f32_to_f16(src[j]);
		else
			for (int64_t j = 0; j < cnt; j++)
				dst[j] = gc_f32_to_bf16(src[j]);
	}
	return 0;
}

int gc_nn_half_setup(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		     gc_run_fn f32_run, uint64_t f32_scratch)
{
	gc_nn_base *b = n->state;
	if (!b || n->n_in > NN_MAX_IO || n->n_out > NN_MAX_IO)
		return gc_kerr(k, GC_EINVAL, "internal: half-float setup without state");
	uint64_t bytes = 0;
	b->in_mask = b->out_mask = 0;
	for (int i = 0; i < n->n_in; i++)
		if (in[i] && gc_nn_is_half(in[i]->dtype)) {
			b->in_mask |= 1u << i;
			bytes += gc_nn_align((uint64_t)gc_tensor_numel(in[i]) * 4);
		}
	for (int i = 0; i < n->n_out; i++)
		if (gc_nn_has_out(n, out, i) && gc_nn_is_half(out[i]->dtype)) {
			b->out_mask |= 1u << i;
			bytes += gc_nn_align((uint64_t)gc_tensor_numel(out[i]) * 4);
		}
	b->f32_run = f32_run;
	b->f32_scratch = f32_scratch;
	n->scratch_bytes = bytes + f32_scratch;
	n->run = half_run;
	return 0;
}

int gc_nn_act_init(gc_kctx *k, gc_dtype dtype, gc_nn_act *a)
{
	memset(a, 0, sizeof *a);
	const char *kind = gc_attr_s(k, "_gc_activation", NULL);
	if (gc_kok(k) || !kind)
		return gc_kok(k);
	double lowest, highest;
	switch (dtype) {
	case GC_DTYPE_FLOAT:
		lowest = -FLT_MAX;
		highest = FLT_MAX;
		break;
	case GC_DTYPE_DOUBLE:
		lowest = -DBL_MAX;
		highest = DBL_MAX;
		break;
	case GC_DTYPE_FLOAT16:
		lowest = -65504.0;
		highest = 65504.0;
		break;
	case GC_DTYPE_BFLOAT16:
		lowest = -3.38953139e38;
		highest = 3.38953139e38;
		break;
	default:
		if (strcmp(kind, "Relu"))
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "fused activation '%s' (attribute _gc_activation) on a %s "
				       "output: integer outputs take Relu only",
				       kind, gc_dtype_name(dtype));
		lowest = highest = 0;
		break;
	}
	if (!strcmp(kind, "Relu")) {
		a->kind = GC_NN_ACT_CLAMP;
		a->lo = 0;
		a->hi = INFINITY;
	} else if (!strcmp(kind, "Clip")) {
		a->kind = GC_NN_ACT_CLAMP;
		a->lo = gc_attr_find(k->node, "_gc_min") ? gc_attr_f(k, "_gc_min", 0) : lowest;
		a->hi = gc_attr_find(k->node, "_gc_max") ? gc_attr_f(k, "_gc_max", 0) : highest;
	} else if (!strcmp(kind, "LeakyRelu")) {
		a->kind = GC_NN_ACT_LEAKY;
		a->alpha = gc_attr_f(k, "_gc_alpha", 0.01f);
	} else if (!strcmp(kind, "Swish")) {
		a->kind = GC_NN_ACT_SWISH;
	} else if (!strcmp(kind, "HardSwish")) {
		a->kind = GC_NN_ACT_HSWISH;
		a->alpha = gc_attr_f(k, "_gc_alpha", (float)(1.0 / 6));
		a->beta = gc_attr_f(k, "_gc_beta", 0.5f);
	} else {
		return gc_kerr(k, GC_EINVAL,
			       "attribute _gc_activation is \"%s\"; graphcc fuses Relu, Clip, "
			       "LeakyRelu, Swish and HardSwish",
			       kind);
	}
	return gc_kok(k);
}

int gc_nn_blas_ready(gc_kctx *k)
{
	gc_error e = {0};
	if (gc_blas_init(&e))
		return gc_kerr(k, e.code, "%s", e.msg);
	return 0;
}

static int gemm_dtype_ok(gc_dtype t)
{
	switch (t) {
	case GC_DTYPE_FLOAT:
	case GC_DTYPE_DOUBLE:
	case GC_DTYPE_FLOAT16:
	case GC_DTYPE_BFLOAT16:
	case GC_DTYPE_INT32:
	case GC_DTYPE_INT64:
	case GC_DTYPE_UINT32:
	case GC_DTYPE_UINT64:
		return 1;
	default:
		return 0;
	}
}

static int fits_int(gc_kctx *k, const char *what, int64_t v)
{
	if (v > INT_MAX)
		return gc_kerr(k, GC_ELIMIT, "%s = %" PRId64 " exceeds the BLAS limit %d", what, v,
			       INT_MAX);
	return 0;
}

/* ---- OpenBLAS products split over the pool ---- */

/* C's rows or columns go to the threads in blocks of this many. */
#define PAR_GEMM_GRAIN 16

#define PAR_GEMM_DEFINE(T, name, gemm)                                                             \
	typedef struct par_##name {                                                                \
		bool ta, tb, rows;                                                                 \
		int m, n, k, lda, ldb, ldc, units;                                                 \
		T alpha, beta;                                                                     \
		const T *a, *b;                                                                    \
		T *c;                                                                              \
	} par_##name;                                                                              \
                                                                                                   \
	static void par_##name##_part(void *arg, int part, int parts, int slot)                    \
	{                                                                                          \
		(void)slot;                                                                        \
		const par_##name *g = arg;                                                         \
		int64_t u0, u1;                                                                    \
		gc_nn_part_range(g->units, part, parts, &u0, &u1);                                 \
		int len = g->rows ? g->m : g->n;                                                   \
		int i0 = (int)(u0 * PAR_GEMM_GRAIN);                                               \
		int i1 = u1 * PAR_GEMM_GRAIN < len ? (int)(u1 * PAR_GEMM_GRAIN) : len;             \
		if (i0 >= i1)                                                                      \
			return;                                                                    \
		if (g->rows)                                                                       \
			gemm(g->ta, g->tb, i1 - i0, g->n, g->k, g->alpha,                          \
			     g->a + (g->ta ? (size_t)i0 : (size_t)i0 * g->lda), g->lda, g->b,      \
			     g->ldb, g->beta, g->c + (size_t)i0 * g->ldc, g->ldc);                 \
		else                                                                               \
			gemm(g->ta, g->tb, g->m, i1 - i0, g->k, g->alpha, g->a, g->lda,            \
			     g->b + (g->tb ? (size_t)i0 * g->ldb : (size_t)i0), g->ldb, g->beta,   \
			     g->c + i0, g->ldc);                                                   \
	}                                                                                          \
                                                                                                   \
	void name(int threads, bool trans_a, bool trans_b, int m, int n, int k, T alpha,           \
		  const T *a, int lda, const T *b, int ldb, T beta, T *c, int ldc)                 \
	{                                                                                          \
		/* cycles: the multiply-adds at ~16 a cycle, or reading the                        \
		 * operands when they dominate (matrix-vector products) */                         \
		double mnk = (double)m * n * k;                                                    \
		double io = ((double)m * k + (double)k * n + (double)m * n) / 4;                   \
		int t = gc_nn_par_threads(threads, (mnk / 16 > io ? mnk / 16 : io) *               \
						       (sizeof(T) / sizeof(float)));               \
		par_##name g = {.ta = trans_a, .tb = trans_b, .m = m, .n = n, .k = k,              \
				.lda = lda, .ldb = ldb, .ldc = ldc, .alpha = alpha,                \
				.beta = beta, .a = a, .b = b, .c = c};                             \
		/* rows unless there are too few blocks of them to share */                        \
		g.rows = m >= n || m >= 4 * PAR_GEMM_GRAIN * t;                                    \
		g.units = ((g.rows ? m : n) + PAR_GEMM_GRAIN - 1) / PAR_GEMM_GRAIN;                \
		if (t <= 1 || g.units < 2 || k <= 0) {                                             \
			gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);      \
			return;                                                                    \
		}                                                                                  \
		gc_nn_parallel(t, gc_nn_par_parts(t, g.units), par_##name##_part, &g);             \
	}

PAR_GEMM_DEFINE(float, gc_nn_sgemm, gc_sgemm)
PAR_GEMM_DEFINE(double, gc_nn_dgemm, gc_dgemm)

/* ---- float32: a few rows by B read where it is ---- */

/*
 * 2 to FEW_ROWS rows of A (a decoder's tokens, a small batch) by B, read in
 * place: a product this thin is bound by reading B, which packing would only
 * copy -- and a packed copy of constant weights doubles the memory they take
 * (issue 19 item 7). Columns are split over the pool in blocks of FEW_NB;
 * each result sums its K products in an order that does not depend on the
 * split. AVX-512 only, one of graphcc's own GEMM kernels: elsewhere, and
 * with GRAPHCC_NN_REFERENCE=1 (gc_pk_usable), OpenBLAS runs instead.
 *
 * B [n][k] (Gemm's transB, a Linear layer) is read two or four rows
 * (columns of the product) at a time against every row of A, 16 partial
 * sums for each result; B [k][n] (MatMul) three or four vectors of columns
 * at a time, a row of B after another (prefetched FEW_AHEAD rows ahead: no
 * hardware prefetcher follows rows a page apart), each sum in the order of
 * K. Measured at one thread against ONNX Runtime 1.30: 8 rows by a Linear
 * layer of 1000 x 512 97 us (100), 2 rows 51 (71); 8 rows by a 512 x 1000
 * MatMul 83 us (104), 2 rows 45 (73), by 1024 x 4096 0.87 ms (0.93).
 */
#define FEW_ROWS 8
#define FEW_NB 256 /* columns a block */

typedef struct few_job {
	const float *a, *b;
	float *y;
	float alpha;
	int64_t m, n, k, blocks;
	int tb; /* B is [n][k] (Gemm's transB) */
} few_job;

#ifdef GEMV_X86
/* y[i][c] = alpha sum_p a[i][p] b[c][p] for columns [c0, c1), m rows (a
 * constant in each caller), cols columns at a time: 16 partial sums for
 * each of their m x cols results in registers. Written in plain C the
 * compiler had built its vectors from single floats (an insert each) and
 * kept the sums in memory: 8 rows by a 1000 x 512 Linear layer (resnet18
 * at batch 8) took 222 us, ONNX Runtime's 100. */
static inline __attribute__((always_inline)) GEMV_TARGET void
few_tb_x86(const few_job *j, int64_t c0, int64_t c1, const int m, const int cols)
{
	const int64_t n = j->n, k = j->k;
	const __mmask16 tail = gc_lanes16(k % 16);
	for (int64_t c = c0; c < c1; c += cols) {
		const float *br[4];
		__m512 acc[FEW_ROWS][4];
		for (int q = 0; q < cols; q++)
			br[q] = j->b + (c + q < c1 ? c + q : c) * k;
		for (int i = 0; i < m; i++)
			for (int q = 0; q < cols; q++)
				acc[i][q] = _mm512_setzero_ps();
		for (int64_t p = 0; p < k; p += 16) {
			__mmask16 lanes = p + 16 <= k ? (__mmask16)0xffff : tail;
			__m512 bv[4];
			for (int q = 0; q < cols; q++)
				bv[q] = _mm512_maskz_loadu_ps(lanes, br[q] + p);
			for (int i = 0; i < m; i++) {
				__m512 xv = _mm512_maskz_loadu_ps(lanes, j->a + i * k + p);
				for (int q = 0; q < cols; q++)
					acc[i][q] = _mm512_fmadd_ps(xv, bv[q], acc[i][q]);
			}
		}
		for (int i = 0; i < m; i++)
			for (int q = 0; q < cols && c + q < c1; q++)
				j->y[i * n + c + q] = j->alpha * _mm512_reduce_add_ps(acc[i][q]);
	}
}

#define FEW_AHEAD 8 /* rows of B [k][n] prefetched ahead (few_nn_x86) */
/* y[i][c] = alpha sum_p a[i][p] b[p][c] for columns [c0, c1) (B [k][n]),
 * m rows, nv vectors of columns at a time: their m x nv sums in registers,
 * each summed in the order of p. Its sums had been kept in memory (a load
 * and a store a multiply-add): 8 rows by a 512 x 1000 MatMul took 177 us
 * (ONNX Runtime's 104), by a 1024 x 4096 one 1.6 ms (0.93). */
static inline __attribute__((always_inline)) GEMV_TARGET void
few_nn_x86(const few_job *j, int64_t c0, int64_t c1, const int m, const int nv)
{
	const int64_t n = j->n, k = j->k;
	for (int64_t c = c0; c < c1; c += 16 * nv) {
		__mmask16 lanes[4];
		__m512 acc[FEW_ROWS][4];
		for (int v = 0; v < nv; v++)
			lanes[v] = gc_lanes16(c1 - c - 16 * v);
		for (int i = 0; i < m; i++)
			for (int v = 0; v < nv; v++)
				acc[i][v] = _mm512_setzero_ps();
		const float *bp = j->b + c;
		for (int64_t p = 0; p < k; p++, bp += n) {
			__m512 bv[4];
			for (int v = 0; v < nv; v++) {
				if (p + FEW_AHEAD < k)
					_mm_prefetch((const char *)(bp + FEW_AHEAD * n + 16 * v),
						     _MM_HINT_T0);
				bv[v] = _mm512_maskz_loadu_ps(lanes[v], bp + 16 * v);
			}
			for (int i = 0; i < m; i++) {
				__m512 av = _mm512_set1_ps(j->a[i * k + p]);
				for (int v = 0; v < nv; v++)
					acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
			}
		}
		for (int i = 0; i < m; i++)
			for (int v = 0; v < nv; v++)
				_mm512_mask_storeu_ps(j->y + i * n + c + 16 * v, lanes[v],
						      _mm512_mul_ps(_mm512_set1_ps(j->alpha), acc[i][v]));
	}
}

/* Each row count's kernels: B [n][k] four columns a pass up to four rows
 * (16 sums), two beyond; B [k][n] four vectors of columns up to six rows
 * (24 sums), three beyond. */
#define FEW_M(M)                                                                                   \
	GEMV_TARGET static void few_tb_##M(const few_job *j, int64_t c0, int64_t c1)              \
	{                                                                                          \
		few_tb_x86(j, c0, c1, M, M <= 4 ? 4 : 2);                                          \
	}                                                                                          \
	GEMV_TARGET static void few_nn_##M(const few_job *j, int64_t c0, int64_t c1)              \
	{                                                                                          \
		few_nn_x86(j, c0, c1, M, M <= 6 ? 4 : 3);                                          \
	}
FEW_M(2)
FEW_M(3)
FEW_M(4)
FEW_M(5)
FEW_M(6)
FEW_M(7)
FEW_M(8)
_Static_assert(FEW_ROWS == 8, "kernels for each row count");

/* [tb][m - 2] */
static void (*const few_fns[2][FEW_ROWS - 1])(const few_job *, int64_t, int64_t) = {
    {few_nn_2, few_nn_3, few_nn_4, few_nn_5, few_nn_6, few_nn_7, few_nn_8},
    {few_tb_2, few_tb_3, few_tb_4, few_tb_5, few_tb_6, few_tb_7, few_tb_8}};

static void few_cols(const few_job *j, int64_t c0, int64_t c1)
{
	few_fns[j->tb][j->m - 2](j, c0, c1);
}
#else
/* few_rows runs only where gc_pk_usable (AVX-512), never without GEMV_X86:
 * as gc_pk_conv_run, nothing to compile here */
static void few_cols(const few_job *j, int64_t c0, int64_t c1)
{
	(void)j;
	(void)c0;
	(void)c1;
}
#endif

static void few_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const few_job *j = arg;
	const int64_t n = j->n;
	int64_t b0, b1;
	gc_nn_part_range(j->blocks, part, parts, &b0, &b1);
	for (int64_t blk = b0; blk < b1; blk++) {
		int64_t j0 = blk * FEW_NB, w = n - j0 < FEW_NB ? n - j0 : FEW_NB;
		few_cols(j, j0, j0 + w);
	}
}

/* y[m][n] = alpha A[m][k] op(B), m <= FEW_ROWS. */
static void few_rows(int threads, const float *a, const float *b, float *y, float alpha, int64_t m,
		     int64_t n, int64_t k, int tb)
{
	few_job j = {a, b, y, alpha, m, n, k, (n + FEW_NB - 1) / FEW_NB, tb};
	double fma = (double)m * n * k / 16, bytes = (double)n * k;
	int t = gc_nn_par_threads(threads, fma > bytes ? fma : bytes);
	gc_nn_parallel(t, gc_nn_par_parts(t, j.blocks), few_part, &j);
}

/* ---- a fused GELU (lib/pass-matmul-gelu.c) ---- */

enum { MM_GELU_NONE, MM_GELU_ERF, MM_GELU_TANH };

/* y[i * ld + j] = gelu(y[i * ld + j]) for i < rows, j < cols: the formulas
 * and vector functions of the Gelu kernel (elementwise-unary.c), so a fused
 * GELU gives the bytes the separate node gives. */
GC_NN_SIMD static void gelu_block(float *y, int64_t rows, int64_t cols, int64_t ld, int kind)
{
	for (int64_t i = 0; i < rows; i++) {
		float *r = y + i * ld;
		if (kind == MM_GELU_TANH)
			for (int64_t j = 0; j < cols; j++) {
				float x = r[j];
				r[j] = 0.5f * x *
				       (1.0f + gc_vm_tanhf(0.79788456080286535588f *
							   (x + 0.044715f * x * x * x)));
			}
		else
			for (int64_t j = 0; j < cols; j++) {
				float x = r[j];
				r[j] = 0.5f * x * (1.0f + gc_vm_erff(x * 0.70710678118654752440f));
			}
	}
}

/* ---- float32: one row by B read where it is (matrix-vector products) ---- */

/*
 * y[n] = act(alpha x[k] B^T + beta C), B [n][k] (Gemm's transB: a Linear
 * layer at batch 1): one multiply-add per float of B, read once, so the
 * product runs at the speed B streams from memory, and B is most of a
 * model's bytes (vgg11's 25088 -> 4096, 411 MB). OpenBLAS's sgemv read it
 * at ~17 GB/s on EPYC (24 ms; ONNX Runtime's 17.5); GEMV_ROWS rows read
 * side by side keep that many streams in flight: ~24-26 GB/s (16 rows
 * spill and ran slower, 4 rows ~22 GB/s; software prefetch a few KB ahead
 * was slower at every distance tried; issue 19). B [k][n] stays with
 * OpenBLAS, whose sgemv already reads it from start to end (a 4-row kernel
 * of the same kind was no faster). The columns are split over the pool in
 * contiguous runs, each result summed in an order that does not depend on
 * the split: the same bytes at any thread count; the bias and activation
 * run on each part's columns as they are done. AVX-512 only (gc_pk_usable,
 * as the packed kernels): elsewhere OpenBLAS.
 */
#define GEMV_ROWS 8 /* rows of B read side by side */

typedef struct gemv_job {
	const float *x, *b;
	float *y;
	float alpha;
	int64_t n, k, units; /* units: runs of GEMV_ROWS columns */
	/* y = act(y + beta c[j * c_sn]) (c may be NULL) */
	const gc_nn_act *act;
	const float *c;
	int64_t c_sn;
	float beta;
} gemv_job;

#ifdef GEMV_X86

/* y[c] = alpha sum_p x[p] b[c][p], c in [c0, c1): 16 partial sums a
 * column, GEMV_ROWS columns at a time (a last short group reads its first
 * row again for the missing ones, and stores only its own). */
GEMV_TARGET static void gemv_rows_x86(const float *b, int64_t k, const float *x, float alpha,
				      float *y, int64_t c0, int64_t c1)
{
	const __mmask16 tail = gc_lanes16(k % 16);
	for (int64_t c = c0; c < c1; c += GEMV_ROWS) {
		const float *br[GEMV_ROWS];
		__m512 acc[GEMV_ROWS];
		for (int r = 0; r < GEMV_ROWS; r++) {
			br[r] = b + (c + r < c1 ? c + r : c) * k;
			acc[r] = _mm512_setzero_ps();
		}
		int64_t p = 0;
		for (; p + 16 <= k; p += 16) {
			__m512 xv = _mm512_loadu_ps(x + p);
			for (int r = 0; r < GEMV_ROWS; r++)
				acc[r] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(br[r] + p), acc[r]);
		}
		if (tail) {
			__m512 xv = _mm512_maskz_loadu_ps(tail, x + p);
			for (int r = 0; r < GEMV_ROWS; r++)
				acc[r] = _mm512_fmadd_ps(xv, _mm512_maskz_loadu_ps(tail, br[r] + p),
							 acc[r]);
		}
		for (int r = 0; r < GEMV_ROWS && c + r < c1; r++)
			y[c + r] = alpha * _mm512_reduce_add_ps(acc[r]);
	}
}
#endif

GC_NN_SIMD void gc_nn_gemv_rows(const float *b, int64_t k, const float *x, float alpha, float *y,
				int64_t c0, int64_t c1)
{
#ifdef GEMV_X86
	if (gc_pk_usable()) {
		gemv_rows_x86(b, k, x, alpha, y, c0, c1);
		return;
	}
#endif
	for (int64_t c = c0; c < c1; c++)
		y[c] = alpha * gc_nn_dot_f32(b + c * k, x, k);
}

GC_NN_SIMD static void gemv_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const gemv_job *j = arg;
	int64_t u0, u1;
	gc_nn_part_range(j->units, part, parts, &u0, &u1);
	int64_t c0 = u0 * GEMV_ROWS, c1 = u1 * GEMV_ROWS < j->n ? u1 * GEMV_ROWS : j->n;
	if (c0 >= c1)
		return;
	gc_nn_gemv_rows(j->b, j->k, j->x, j->alpha, j->y, c0, c1);
	if (j->c || j->act->kind != GC_NN_ACT_NONE)
		GC_NN_ACT_ROW_BIAS(float, j->act, j->y + c0, c1 - c0,
				   j->c ? j->c + c0 * j->c_sn : NULL, j->c_sn, j->beta);
}

/* Runs j (units set here) over up to `threads` threads. */
static void gemv_run(int threads, gemv_job *j)
{
	j->units = (j->n + GEMV_ROWS - 1) / GEMV_ROWS;
	int t = gc_nn_par_threads(threads, (double)j->n * j->k);
	gc_nn_parallel(t, gc_nn_par_parts(t, j->units), gemv_part, j);
}

/* ---- float32 products by a constant B on the packed kernels ---- */

/* Rows of A packed at a time: at most this many bytes of scratch. */
#define PK_A_BYTES ((int64_t)4 << 20)

typedef struct pk_gemm {
	const float *v; /* B packed as V panels (node->packed); NULL: not used */
	int64_t m, n, k, lda, mc;
	int ta;
	int gelu;      /* MM_GELU_*: after the epilogue, on each part as it is done */
	gc_pk_epi epi; /* c is set per run */
} pk_gemm;

/*
 * Packs op(B) (in[1]'s b[p * rs + j * cs], k x n) when the packed kernels
 * suit the product and this CPU: 1 when they do (p filled, n->scratch_bytes
 * set), 0 when not (B not known before running), or an error.
 */
static int pk_gemm_init(gc_kctx *k, gc_node *n, pk_gemm *p, int64_t m, int64_t nn, int64_t kk,
			int ta, int64_t lda, gc_tensor *const *in, int64_t rs, int64_t cs,
			const gc_nn_act *act)
{
	/* a single row is a matrix-vector product, which OpenBLAS does well;
	 * narrow ones waste the 48-wide tiles */
	if (m < 2 || nn < 32 || kk < 1 || !gc_pk_usable())
		return 0;
	char key[96];
	void *fill;
	snprintf(key, sizeof key, "pk-v1 %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64, kk, nn,
		 rs, cs);
	p->v = gc_kpacked(k, n, in, 1, key, (uint64_t)gc_pk_v_floats(kk, nn) * sizeof(float),
			  true, &fill);
	if (!p->v)
		return gc_kok(k);
	if (fill)
		gc_pk_pack_v(gc_kfixed(k, in, 1), rs, cs, kk, nn, fill);
	p->m = m;
	p->n = nn;
	p->k = kk;
	p->ta = ta;
	p->lda = lda;
	int64_t mc = PK_A_BYTES / 4 / kk / GC_PK_MR * GC_PK_MR;
	p->mc = mc < GC_PK_MR ? GC_PK_MR : mc > m ? m : mc;
	gc_pk_epi_init(&p->epi, act);
	n->scratch_bytes = gc_nn_align((uint64_t)gc_pk_s_floats(p->mc, kk) * 4);
	return 1;
}

/* One block of rows of a packed product split by rows: each part packs its
 * own tiles of A into the block's S and multiplies them by all of B. */
typedef struct pk_rows_job {
	const gc_pk_gemm *g; /* the block: S is filled by the parts */
	const float *a;	     /* the block's first row of A */
	int64_t rs, cs, tiles;
	int gelu;
} pk_rows_job;

static void pk_rows_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const pk_rows_job *j = arg;
	const gc_pk_gemm *g = j->g;
	int64_t t0, t1;
	gc_nn_part_range(j->tiles, part, parts, &t0, &t1);
	int64_t i0 = t0 * GC_PK_MR, i1 = t1 * GC_PK_MR < g->m ? t1 * GC_PK_MR : g->m;
	if (i0 >= i1)
		return;
	gc_pk_gemm sub = *g;
	sub.m = i1 - i0;
	sub.s = g->s + i0 * g->k;
	sub.c = g->c + i0 * g->ldc;
	sub.m0 = g->m0 + i0;
	gc_pk_pack_s(j->a + i0 * j->rs, j->rs, j->cs, sub.m, g->k, (float *)sub.s);
	gc_pk_gemm_run(&sub, 0, (g->n + GC_PK_NR - 1) / GC_PK_NR);
	if (j->gelu)
		gelu_block(sub.c, sub.m, g->n, g->ldc, j->gelu);
}

/* Column panels split over the pool, each part's columns through the GELU
 * as soon as they are done (gc_pk_gemm_par's split, with the GELU). */
typedef struct pk_cols_job {
	const gc_pk_gemm *g;
	int64_t panels;
	int gelu;
} pk_cols_job;

static void pk_cols_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const pk_cols_job *j = arg;
	int64_t p0 = gc_nn_pk_cols_start(j->g->n, part, parts),
		p1 = gc_nn_pk_cols_start(j->g->n, part + 1, parts);
	if (p0 >= p1)
		return;
	gc_pk_gemm_run(j->g, p0, p1);
	int64_t c0 = p0 * GC_PK_NR, c1 = p1 * GC_PK_NR < j->g->n ? p1 * GC_PK_NR : j->g->n;
	if (j->gelu)
		gelu_block(j->g->c + c0, j->g->m, c1 - c0, j->g->ldc, j->gelu);
}

/* The cost of column panels [0, p) of an n-column product in the row
 * tiles' 16-column vectors: 3 a full panel, the last one its tail's. */
static int64_t pk_cols_cost(int64_t n, int64_t p)
{
	int64_t full = n / GC_PK_NR;
	return p <= full ? 3 * p : 3 * full + (n % GC_PK_NR + 15) / 16;
}

int64_t gc_nn_pk_cols_start(int64_t n, int part, int parts)
{
	int64_t panels = (n + GC_PK_NR - 1) / GC_PK_NR;
	if (part <= 0)
		return 0;
	if (part >= parts)
		return panels;
	/* the panel boundary nearest to the part's share of the cost */
	int64_t want = pk_cols_cost(n, panels) * part / parts, p = want / 3;
	if (p >= panels)
		return panels;
	if (pk_cols_cost(n, p + 1) - want < want - pk_cols_cost(n, p))
		p++;
	return p;
}

/* Tiles of A packed into S, split over the pool (every column part then
 * reads all of S). */
typedef struct pk_pack_job {
	float *s;
	const float *a;
	int64_t rs, cs, m, k, tiles;
} pk_pack_job;

static void pk_pack_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const pk_pack_job *j = arg;
	int64_t t0, t1;
	gc_nn_part_range(j->tiles, part, parts, &t0, &t1);
	int64_t i0 = t0 * GC_PK_MR, i1 = t1 * GC_PK_MR < j->m ? t1 * GC_PK_MR : j->m;
	if (i0 < i1)
		gc_pk_pack_s(j->a + i0 * j->rs, j->rs, j->cs, i1 - i0, j->k, j->s + i0 * j->k);
}

/*
 * Whether t threads share a block of m rows by rows rather than by B's
 * column panels: rows when there are panels too few to share evenly (a
 * Linear to a narrow output: 256 columns are 6 panels, 5 and a third) and
 * tiles of rows enough. Each thread then reads all of B, so not when B is
 * much larger than A (an LLM's vocabulary head at a few tokens); but it
 * packs its own rows, so packing A is split too.
 */
static int pk_split_rows(int64_t m, int64_t n, int t)
{
	int64_t tiles = (m + GC_PK_MR - 1) / GC_PK_MR, panels = (n + GC_PK_NR - 1) / GC_PK_NR;
	if (t <= 1 || tiles < 2 * (int64_t)t)
		return 0;
	return panels < 4 * (int64_t)t || m >= n;
}

/* y = epi(op(A) B), A's rows packed a block at a time into scratch. */
static void pk_gemm_run(const pk_gemm *p, const float *a, const float *c, float *y,
			float *scratch, int threads)
{
	gc_pk_gemm g = {.n = p->n, .k = p->k, .s = scratch, .v = p->v, .v_packed = 1, .ldc = p->n,
			.epi = p->epi};
	g.epi.c = c;
	int64_t rs = p->ta ? 1 : p->lda, cs = p->ta ? p->lda : 1;
	for (int64_t i0 = 0; i0 < p->m; i0 += p->mc) {
		g.m = p->m - i0 < p->mc ? p->m - i0 : p->mc;
		g.c = y + i0 * p->n;
		g.m0 = i0;
		int t = gc_nn_par_threads(threads, gc_pk_gemm_cost(g.m, p->n, p->k));
		if (pk_split_rows(g.m, p->n, t)) {
			pk_rows_job j = {&g, a + i0 * rs, rs, cs, (g.m + GC_PK_MR - 1) / GC_PK_MR,
					 p->gelu};
			/* parts of 8 tiles (64 rows) at least: each part reads all of B,
			 * which wants its rows many */
			int64_t per = j.tiles / (8 * (int64_t)t);
			int parts = t * (int)(per < 1 ? 1 : per > 4 ? 4 : per);
			gc_nn_parallel(t, parts, pk_rows_part, &j);
			continue;
		}
		/* A's block packed by the threads (a copy of m x k floats, read
		 * strided when transposed: ~1 cycle a float), then B's panels
		 * in one contiguous run a thread, as even in cost as whole
		 * panels allow, each panel's successor prefetched while it is
		 * computed (which stops at a part's end): parts of 4t (the
		 * pool's default) left one thread up to a part behind (MLP
		 * 64x784 by 784x1024: 22 panels, the last a third, in 8
		 * parts of 2-3; issue 19) */
		pk_pack_job pj = {scratch, a + i0 * rs, rs, cs, g.m, p->k,
				  (g.m + GC_PK_MR - 1) / GC_PK_MR};
		int tp = gc_nn_par_threads(threads, (double)g.m * p->k);
		gc_nn_run_parts(tp < pj.tiles ? tp : (int)pj.tiles, pj.tiles, pk_pack_part, &pj);
		pk_cols_job j = {&g, (p->n + GC_PK_NR - 1) / GC_PK_NR, p->gelu};
		int parts = t < j.panels ? t : (int)j.panels;
		if (parts <= 1)
			pk_cols_part(&j, 0, 1, 0);
		else
			gc_nn_parallel(parts, parts, pk_cols_part, &j);
	}
}

/* ---- Gemm ---- */

typedef struct gemm_state {
	gc_nn_base base;
	int64_t m, n, k, lda, ldb;
	int ta, tb, has_c;
	float alpha, beta;
	int64_t c_sm, c_sn; /* C's strides over (m, n); 0 where broadcast */
	gc_nn_act act;	    /* fused activation: C is added after the product, with it */
	pk_gemm pk;
} gemm_state;

GC_NN_SIMD static void gemm_epilogue_f32(const gemm_state *st, const float *c, float *y);


static int gemm_pk_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gemm_state *st = n->state;
	int use_c = st->has_c && st->beta != 0;
	pk_gemm_run(&st->pk, in[0]->data, use_c ? (const float *)in[2]->data : NULL,
		    out[0]->data, k->scratch, k->threads);
	return 0;
}

static int gemm_few_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			gc_tensor *const *out)
{
	const gemm_state *st = n->state;
	few_rows(k->threads, in[0]->data, in[1]->data, out[0]->data, st->alpha, st->m, st->n,
		 st->k, st->tb);
	int use_c = st->has_c && st->beta != 0;
	gemm_epilogue_f32(st, use_c ? (const float *)in[2]->data : NULL, out[0]->data);
	return 0;
}

static int gemm_gemv_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			 gc_tensor *const *out)
{
	const gemm_state *st = n->state;
	int use_c = st->has_c && st->beta != 0;
	gemv_job j = {.x = in[0]->data, .b = in[1]->data, .y = out[0]->data, .alpha = st->alpha,
		      .n = st->n, .k = st->k, .act = &st->act,
		      .c = use_c ? (const float *)in[2]->data : NULL, .c_sn = st->c_sn,
		      .beta = st->beta};
	gemv_run(k->threads, &j);
	return 0;
}

#define GEMM_FILL_C(T, st, c, y)                                                                   \
	do {                                                                                       \
		for (int64_t i_ = 0; i_ < (st)->m; i_++)                                           \
			for (int64_t j_ = 0; j_ < (st)->n; j_++)                                   \
				(y)[i_ * (st)->n + j_] = (c)[i_ * (st)->c_sm + j_ * (st)->c_sn];   \
	} while (0)

#define GEMM_BLAS_RUN(T, sfx, gemm)                                                                \
	/* y = act(y + beta * C), row by row, after the product */                                \
	GC_NN_SIMD static void gemm_epilogue_##sfx(const gemm_state *st, const T *c, T *y)         \
	{                                                                                          \
		for (int64_t i = 0; i < st->m; i++) {                                              \
			const T *cr = c ? c + i * st->c_sm : NULL;                                 \
			GC_NN_ACT_ROW_BIAS(T, &st->act, y + i * st->n, st->n, cr, st->c_sn,        \
					   st->beta);                                              \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	static int gemm_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,              \
				  gc_tensor *const *out)                                           \
	{                                                                                          \
		const gemm_state *st = n->state;                                                   \
		T *y = out[0]->data;                                                               \
		T beta = 0;                                                                        \
		if (st->act.kind != GC_NN_ACT_NONE) {                                              \
			gemm(k->threads, st->ta, st->tb, (int)st->m, (int)st->n, (int)st->k,       \
			     st->alpha, in[0]->data, (int)st->lda, in[1]->data, (int)st->ldb, 0,   \
			     y, (int)st->n);                                                       \
			int use_c = st->has_c && st->beta != 0;                                    \
			gemm_epilogue_##sfx(st, use_c ? (const T *)in[2]->data : NULL, y);         \
			return 0;                                                                  \
		}                                                                                  \
		if (st->has_c && st->beta != 0) {                                                  \
			const T *c = in[2]->data;                                                  \
			GEMM_FILL_C(T, st, c, y);                                                  \
			beta = st->beta;                                                           \
		}                                                                                  \
		gemm(k->threads, st->ta, st->tb, (int)st->m, (int)st->n, (int)st->k, st->alpha,    \
		     in[0]->data, (int)st->lda, in[1]->data, (int)st->ldb, beta, y, (int)st->n);   \
		return 0;                                                                          \
	}

GEMM_BLAS_RUN(float, f32, gc_nn_sgemm)
GEMM_BLAS_RUN(double, f64, gc_nn_dgemm)

/* Integer products wrap (as ONNX Runtime's do): the arithmetic runs in the
 * unsigned type U of the same width. */
#define GEMM_INT_RUN(T, U, sfx)                                                                    \
	static int gemm_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,              \
				  gc_tensor *const *out)                                           \
	{                                                                                          \
		(void)k;                                                                           \
		const gemm_state *st = n->state;                                                   \
		const T *a = in[0]->data, *b = in[1]->data;                                        \
		const T *c = st->has_c ? (const T *)in[2]->data : NULL;                            \
		T *y = out[0]->data;                                                               \
		int64_t as_m = st->ta ? 1 : st->lda, as_k = st->ta ? st->lda : 1;                  \
		int64_t bs_k = st->tb ? 1 : st->ldb, bs_n = st->tb ? st->ldb : 1;                  \
		int plain = st->alpha == 1 && (!c || st->beta == 1 || st->beta == 0);              \
		for (int64_t i = 0; i < st->m; i++)                                                \
			for (int64_t j = 0; j < st->n; j++) {                                      \
				U acc = 0;                                                         \
				for (int64_t p = 0; p < st->k; p++)                                \
					acc +=                                                     \
					    (U)a[i * as_m + p * as_k] * (U)b[p * bs_k + j * bs_n]; \
				T cv = c ? c[i * st->c_sm + j * st->c_sn] : 0;                     \
				if (plain)                                                         \
					y[i * st->n + j] = (T)(acc + (st->beta != 0 ? (U)cv : 0)); \
				else                                                               \
					y[i * st->n + j] = (T)(st->alpha * (double)(T)acc +        \
							       st->beta * (double)cv);             \
				if (st->act.kind != GC_NN_ACT_NONE && !(y[i * st->n + j] > (T)0))  \
					y[i * st->n + j] = 0; /* Relu, the only one for ints */    \
			}                                                                          \
		return 0;                                                                          \
	}

GEMM_INT_RUN(int32_t, uint32_t, i32)
GEMM_INT_RUN(int64_t, uint64_t, i64)
GEMM_INT_RUN(uint32_t, uint32_t, u32)
GEMM_INT_RUN(uint64_t, uint64_t, u64)

static gc_run_fn gemm_pick(gc_dtype t)
{
	switch (t) {
	case GC_DTYPE_FLOAT:
		return gemm_run_f32;
	case GC_DTYPE_DOUBLE:
		return gemm_run_f64;
	case GC_DTYPE_INT32:
		return gemm_run_i32;
	case GC_DTYPE_INT64:
		return gemm_run_i64;
	case GC_DTYPE_UINT32:
		return gemm_run_u32;
	case GC_DTYPE_UINT64:
		return gemm_run_u64;
	default:
		return NULL;
	}
}

static int needs_blas(gc_dtype t)
{
	return t == GC_DTYPE_FLOAT || t == GC_DTYPE_DOUBLE || gc_nn_is_half(t);
}

int gc_prepare_Gemm(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *a = in[0], *b = in[1], *c = n->n_in > 2 ? in[2] : NULL;
	char s1[128], s2[128];
	if (!gemm_dtype_ok(a->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input A has type %s, which Gemm does not take",
			       gc_dtype_name(a->dtype));
	if (b->dtype != a->dtype || (c && c->dtype != a->dtype))
		return gc_kerr(k, GC_EINVAL, "inputs differ in type: A %s, B %s%s%s",
			       gc_dtype_name(a->dtype), gc_dtype_name(b->dtype), c ? ", C " : "",
			       c ? gc_dtype_name(c->dtype) : "");
	if (a->rank != 2 || b->rank != 2)
		return gc_kerr(k, GC_EINVAL, "A (%s) and B (%s) must both be 2-D",
			       gc_shape_str(a->dims, a->rank, s1, sizeof s1),
			       gc_shape_str(b->dims, b->rank, s2, sizeof s2));
	if (!c && n->opset < 11)
		return gc_kerr(k, GC_EINVAL,
			       "input C is required before opset 11 (this node is "
			       "opset %d)",
			       n->opset);
	int64_t ta = gc_attr_i(k, "transA", 0), tb = gc_attr_i(k, "transB", 0);
	float alpha = gc_attr_f(k, "alpha", 1.0f), beta = gc_attr_f(k, "beta", 1.0f);
	if (gc_kok(k))
		return gc_kok(k);
	if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
		return gc_kerr(k, GC_EINVAL,
			       "transA/transB must be 0 or 1, got %" PRId64 "/%" PRId64, ta, tb);
	int64_t m = ta ? a->dims[1] : a->dims[0], ka = ta ? a->dims[0] : a->dims[1];
	int64_t kb = tb ? b->dims[1] : b->dims[0], nn = tb ? b->dims[0] : b->dims[1];
	if (ka != kb)
		return gc_kerr(k, GC_EINVAL,
			       "inner dimensions differ: A %s (transA=%" PRId64 ") has K=%" PRId64
			       ", B %s (transB=%" PRId64 ") has K=%" PRId64,
			       gc_shape_str(a->dims, a->rank, s1, sizeof s1), ta, ka,
			       gc_shape_str(b->dims, b->rank, s2, sizeof s2), tb, kb);
	gemm_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->m = m;
	st->n = nn;
	st->k = ka;
	st->lda = a->dims[1];
	st->ldb = b->dims[1];
	st->ta = (int)ta;
	st->tb = (int)tb;
	st->alpha = alpha;
	st->beta = beta;
	if (gc_nn_act_init(k, a->dtype, &st->act))
		return gc_kok(k);
	if (c) {
		/* unidirectional broadcast of C to (M, N) */
		int64_t cm = c->rank == 2 ? c->dims[0] : 1;
		int64_t cn = c->rank >= 1 ? c->dims[c->rank - 1] : 1;
		if (c->rank > 2 || (cm != 1 && cm != m) || (cn != 1 && cn != nn))
			return gc_kerr(k, GC_EINVAL,
				       "input C of shape %s does not broadcast to the output "
				       "%" PRId64 "x%" PRId64,
				       gc_shape_str(c->dims, c->rank, s1, sizeof s1), m, nn);
		st->has_c = 1;
		st->c_sm = cm == 1 ? 0 : cn;
		st->c_sn = cn == 1 ? 0 : 1;
	}
	int64_t dims[2] = {m, nn};
	gc_set_shape(out[0], a->dtype, 2, dims);
	if (needs_blas(a->dtype)) {
		if (fits_int(k, "M", m) || fits_int(k, "N", nn) || fits_int(k, "K", ka) ||
		    fits_int(k, "lda", st->lda) || fits_int(k, "ldb", st->ldb) || gc_nn_blas_ready(k))
			return gc_kok(k);
	}
	if (a->dtype == GC_DTYPE_FLOAT && m == 1 && tb && gc_pk_usable()) {
		n->run = gemm_gemv_run;
		return gc_kok(k);
	}
	if (a->dtype == GC_DTYPE_FLOAT && !ta && m >= 2 && m <= FEW_ROWS && gc_pk_usable()) {
		n->run = gemm_few_run;
		return gc_kok(k);
	}
	if (a->dtype == GC_DTYPE_FLOAT) {
		int rc = pk_gemm_init(k, n, &st->pk, m, nn, ka, st->ta, st->lda, in,
				      tb ? 1 : st->ldb, tb ? st->ldb : 1, &st->act);
		if (rc < 0)
			return rc;
		if (rc) {
			st->pk.epi.alpha = alpha;
			st->pk.epi.beta = beta;
			st->pk.epi.c_sm = st->c_sm;
			st->pk.epi.c_sn = st->c_sn;
			n->run = gemm_pk_run;
			return gc_kok(k);
		}
	}
	if (gc_nn_is_half(a->dtype))
		return gc_nn_half_setup(k, n, in, out, gemm_run_f32, 0);
	n->run = gemm_pick(a->dtype);
	return gc_kok(k);
}

/* ---- MatMul ---- */

#define MM_MAX_BATCH (GC_MAX_RANK - 2)

typedef struct matmul_state {
	gc_nn_base base;
	int64_t m, n, k;
	int64_t batch;				    /* output matrices */
	int32_t nb;				    /* batch rank */
	int64_t bdims[MM_MAX_BATCH];		    /* output batch dims */
	int64_t sa[MM_MAX_BATCH], sb[MM_MAX_BATCH]; /* matrix-index strides; 0 broadcast */
	int fold; /* B is shared by every batch and A is dense: one GEMM of batch*M rows */
	const void *bias; /* _gc_bias: [N], added to every row with the activation */
	gc_nn_act act;
	int gelu; /* MM_GELU_*: _gc_activation "Gelu" or "GeluTanh", after the bias */
	pk_gemm pk;
} matmul_state;


static int matmul_pk_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			 gc_tensor *const *out)
{
	const matmul_state *st = n->state;
	pk_gemm_run(&st->pk, in[0]->data, st->bias, out[0]->data, k->scratch, k->threads);
	return 0;
}

static void mm_offsets(const matmul_state *st, int64_t bi, int64_t *oa, int64_t *ob)
{
	int64_t a = 0, b = 0;
	for (int d = st->nb - 1; d >= 0; d--) {
		int64_t i = bi % st->bdims[d];
		bi /= st->bdims[d];
		a += i * st->sa[d];
		b += i * st->sb[d];
	}
	*oa = a;
	*ob = b;
}

#define MATMUL_BLAS_RUN(T, sfx, gemm)                                                              \
	/* rows [r0, r1) of the output: y = act(y + bias) */                                       \
	GC_NN_SIMD static void matmul_epilogue_##sfx(const matmul_state *st, T *y, int64_t r0,     \
						     int64_t r1)                                   \
	{                                                                                          \
		for (int64_t r = r0; r < r1; r++) {                                                \
			GC_NN_ACT_ROW_BIAS(T, &st->act, y + r * st->n, st->n,                      \
					   (const T *)st->bias, 1, 1);                             \
			if (st->gelu) /* float32 only (matmul_epilogue_init) */                    \
				gelu_block((float *)(void *)(y + r * st->n), 1, st->n, st->n,      \
					   st->gelu);                                              \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	/* the products of batch items [b0, b1), each on this thread */                           \
	static void matmul_items_##sfx(const matmul_state *st, const T *a, const T *b, T *y,       \
				       int threads, int64_t b0, int64_t b1)                        \
	{                                                                                          \
		int epi = st->bias || st->act.kind != GC_NN_ACT_NONE || st->gelu;                  \
		for (int64_t bi = b0; bi < b1; bi++) {                                             \
			int64_t oa, ob;                                                            \
			mm_offsets(st, bi, &oa, &ob);                                              \
			gemm(threads, 0, 0, (int)st->m, (int)st->n, (int)st->k, 1,                 \
			     a + oa * st->m * st->k, (int)st->k, b + ob * st->k * st->n,           \
			     (int)st->n, 0, y + bi * st->m * st->n, (int)st->n);                   \
			if (epi)                                                                   \
				matmul_epilogue_##sfx(st, y, bi * st->m, (bi + 1) * st->m);        \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	typedef struct matmul_job_##sfx {                                                          \
		const matmul_state *st;                                                            \
		const T *a, *b;                                                                    \
		T *y;                                                                              \
	} matmul_job_##sfx;                                                                        \
                                                                                                   \
	static void matmul_part_##sfx(void *arg, int part, int parts, int slot)                    \
	{                                                                                          \
		(void)slot;                                                                        \
		const matmul_job_##sfx *j = arg;                                                   \
		int64_t b0, b1;                                                                    \
		gc_nn_part_range(j->st->batch, part, parts, &b0, &b1);                             \
		matmul_items_##sfx(j->st, j->a, j->b, j->y, 1, b0, b1);                            \
	}                                                                                          \
                                                                                                   \
	static int matmul_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,            \
				    gc_tensor *const *out)                                         \
	{                                                                                          \
		const matmul_state *st = n->state;                                                 \
		const T *a = in[0]->data, *b = in[1]->data;                                        \
		T *y = out[0]->data;                                                               \
		int epi = st->bias || st->act.kind != GC_NN_ACT_NONE || st->gelu;                  \
		if (st->fold) {                                                                    \
			gemm(k->threads, 0, 0, (int)(st->batch * st->m), (int)st->n, (int)st->k,   \
			     1, a, (int)st->k, b, (int)st->n, 0, y, (int)st->n);                   \
			if (epi)                                                                   \
				matmul_epilogue_##sfx(st, y, 0, st->batch * st->m);                \
			return 0;                                                                  \
		}                                                                                  \
		/* many products (attention's heads): whole ones to each thread;                   \
		 * a few: each split over the threads in turn */                                   \
		double cycles = (double)st->batch * st->m * st->n * st->k / 16;                    \
		int t = gc_nn_par_threads(k->threads, cycles);                                     \
		if (t > 1 && st->batch >= 2 * t) {                                                 \
			matmul_job_##sfx j = {st, a, b, y};                                        \
			gc_nn_parallel(t, gc_nn_par_parts(t, st->batch), matmul_part_##sfx, &j);   \
			return 0;                                                                  \
		}                                                                                  \
		matmul_items_##sfx(st, a, b, y, k->threads, 0, st->batch);                         \
		return 0;                                                                          \
	}

MATMUL_BLAS_RUN(float, f32, gc_nn_sgemm)
MATMUL_BLAS_RUN(double, f64, gc_nn_dgemm)

#define MATMUL_INT_RUN(T, U, sfx)                                                                  \
	static int matmul_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,            \
				    gc_tensor *const *out)                                         \
	{                                                                                          \
		(void)k;                                                                           \
		const matmul_state *st = n->state;                                                 \
		const T *a0 = in[0]->data, *b0 = in[1]->data;                                      \
		T *y = out[0]->data;                                                               \
		for (int64_t bi = 0; bi < st->batch; bi++) {                                       \
			int64_t oa, ob;                                                            \
			mm_offsets(st, bi, &oa, &ob);                                              \
			const T *a = a0 + oa * st->m * st->k, *b = b0 + ob * st->k * st->n;        \
			T *yb = y + bi * st->m * st->n;                                            \
			for (int64_t i = 0; i < st->m; i++) {                                      \
				U *row = (U *)(yb + i * st->n);                                    \
				for (int64_t j = 0; j < st->n; j++)                                \
					row[j] = 0;                                                \
				for (int64_t p = 0; p < st->k; p++) {                              \
					U av = (U)a[i * st->k + p];                                \
					const T *brow = b + p * st->n;                             \
					for (int64_t j = 0; j < st->n; j++)                        \
						row[j] += av * (U)brow[j];                         \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
		return 0;                                                                          \
	}

MATMUL_INT_RUN(int32_t, uint32_t, i32)
MATMUL_INT_RUN(int64_t, uint64_t, i64)
MATMUL_INT_RUN(uint32_t, uint32_t, u32)
MATMUL_INT_RUN(uint64_t, uint64_t, u64)

static gc_run_fn matmul_pick(gc_dtype t)
{
	switch (t) {
	case GC_DTYPE_FLOAT:
		return matmul_run_f32;
	case GC_DTYPE_DOUBLE:
		return matmul_run_f64;
	case GC_DTYPE_INT32:
		return matmul_run_i32;
	case GC_DTYPE_INT64:
		return matmul_run_i64;
	case GC_DTYPE_UINT32:
		return matmul_run_u32;
	case GC_DTYPE_UINT64:
		return matmul_run_u64;
	default:
		return NULL;
	}
}

GC_NN_SIMD static void matmul_epilogue_f32(const matmul_state *st, float *y, int64_t r0,
					   int64_t r1);

static int matmul_few_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			  gc_tensor *const *out)
{
	const matmul_state *st = n->state;
	int64_t rows = st->batch * st->m;
	few_rows(k->threads, in[0]->data, in[1]->data, out[0]->data, 1, rows, st->n, st->k, 0);
	if (st->bias || st->act.kind != GC_NN_ACT_NONE || st->gelu)
		matmul_epilogue_f32(st, out[0]->data, 0, rows);
	return 0;
}

/* The _gc_bias and _gc_activation a pass fused into the MatMul. */
static int matmul_epilogue_init(gc_kctx *k, const gc_node *n, gc_dtype dtype, int64_t nn,
				matmul_state *st)
{
	const gc_attr *bias = gc_attr_find(n, "_gc_bias");
	if (bias) {
		const gc_tensor *t = gc_attr_t(k, "_gc_bias");
		if (gc_kok(k))
			return gc_kok(k);
		char s1[128];
		if (dtype != GC_DTYPE_FLOAT && dtype != GC_DTYPE_DOUBLE)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "attribute _gc_bias (a fused bias) on a %s MatMul: only "
				       "float32 and float64 take one",
				       gc_dtype_name(dtype));
		if (!t || t->dtype != dtype || t->rank != 1 || t->dims[0] != nn || !t->data)
			return gc_kerr(k, GC_EINVAL,
				       "attribute _gc_bias (a fused bias) must be a %s tensor of "
				       "shape [%" PRId64 "], not %s %s",
				       gc_dtype_name(dtype), nn, t ? gc_dtype_name(t->dtype) : "absent",
				       t ? gc_shape_str(t->dims, t->rank, s1, sizeof s1) : "");
		st->bias = t->data;
	}
	const char *kind = gc_attr_s(k, "_gc_activation", NULL);
	if (gc_kok(k))
		return gc_kok(k);
	if (kind && (!strcmp(kind, "Gelu") || !strcmp(kind, "GeluTanh"))) {
		if (dtype != GC_DTYPE_FLOAT)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "a fused GELU (attribute _gc_activation \"%s\") on a %s "
				       "MatMul: only float32 takes one",
				       kind, gc_dtype_name(dtype));
		st->gelu = strcmp(kind, "Gelu") ? MM_GELU_TANH : MM_GELU_ERF;
		return 0;
	}
	if (gc_nn_act_init(k, dtype, &st->act))
		return gc_kok(k);
	if (st->act.kind != GC_NN_ACT_NONE && dtype != GC_DTYPE_FLOAT &&
	    dtype != GC_DTYPE_DOUBLE && !gc_nn_is_half(dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "a fused activation (attribute _gc_activation) on a %s MatMul: only "
			       "float types take one",
			       gc_dtype_name(dtype));
	return 0;
}

int gc_prepare_MatMul(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *a = in[0], *b = in[1];
	char s1[128], s2[128];
	if (!gemm_dtype_ok(a->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input A has type %s, which MatMul does not take",
			       gc_dtype_name(a->dtype));
	if (b->dtype != a->dtype)
		return gc_kerr(k, GC_EINVAL, "inputs differ in type: A %s, B %s",
			       gc_dtype_name(a->dtype), gc_dtype_name(b->dtype));
	if (a->rank < 1 || b->rank < 1)
		return gc_kerr(k, GC_EINVAL, "inputs must have rank >= 1: A %s, B %s",
			       gc_shape_str(a->dims, a->rank, s1, sizeof s1),
			       gc_shape_str(b->dims, b->rank, s2, sizeof s2));
	int64_t m = a->rank >= 2 ? a->dims[a->rank - 2] : 1, ka = a->dims[a->rank - 1];
	int64_t kb = b->rank >= 2 ? b->dims[b->rank - 2] : b->dims[0];
	int64_t nn = b->rank >= 2 ? b->dims[b->rank - 1] : 1;
	if (ka != kb)
		return gc_kerr(k, GC_EINVAL,
			       "inner dimensions differ: A %s has K=%" PRId64
			       ", B %s has K=%" PRId64,
			       gc_shape_str(a->dims, a->rank, s1, sizeof s1), ka,
			       gc_shape_str(b->dims, b->rank, s2, sizeof s2), kb);
	int32_t ra = a->rank > 2 ? a->rank - 2 : 0, rb = b->rank > 2 ? b->rank - 2 : 0;
	int32_t nb = ra > rb ? ra : rb;
	matmul_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->m = m;
	st->n = nn;
	st->k = ka;
	st->nb = nb;
	st->batch = 1;
	int64_t stride_a = 1, stride_b = 1, batch_a = 1, batch_b = 1;
	for (int d = nb - 1; d >= 0; d--) {
		int ia = d - (nb - ra), ib = d - (nb - rb);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		if (da != db && da != 1 && db != 1)
			return gc_kerr(k, GC_EINVAL,
				       "batch dimensions of A %s and B %s do not broadcast "
				       "(%" PRId64 " vs %" PRId64 ")",
				       gc_shape_str(a->dims, a->rank, s1, sizeof s1),
				       gc_shape_str(b->dims, b->rank, s2, sizeof s2), da, db);
		int64_t d_out = da == 1 ? db : da;
		st->bdims[d] = d_out;
		st->sa[d] = da == 1 ? 0 : stride_a;
		st->sb[d] = db == 1 ? 0 : stride_b;
		stride_a *= da;
		stride_b *= db;
		batch_a *= da;
		batch_b *= db;
		st->batch *= d_out;
	}
	st->fold = batch_b == 1 && batch_a == st->batch;
	int64_t dims[GC_MAX_RANK];
	int32_t rank = 0;
	for (int d = 0; d < nb; d++)
		dims[rank++] = st->bdims[d];
	if (a->rank >= 2)
		dims[rank++] = m;
	if (b->rank >= 2)
		dims[rank++] = nn;
	gc_set_shape(out[0], a->dtype, rank, dims);
	if (matmul_epilogue_init(k, n, a->dtype, nn, st))
		return gc_kok(k);
	if (needs_blas(a->dtype)) {
		if (fits_int(k, "M", st->fold ? st->batch * m : m) || fits_int(k, "N", nn) ||
		    fits_int(k, "K", ka) || gc_nn_blas_ready(k))
			return gc_kok(k);
	}
	/* a few rows: B read in place (few_rows) */
	if (a->dtype == GC_DTYPE_FLOAT && st->fold && st->batch * m >= 2 &&
	    st->batch * m <= FEW_ROWS && gc_pk_usable()) {
		n->run = matmul_few_run;
		return gc_kok(k);
	}
	/* B the same for every row of a dense A: one product of batch * M rows */
	if (a->dtype == GC_DTYPE_FLOAT && st->fold && b->rank == 2) {
		int rc = pk_gemm_init(k, n, &st->pk, st->batch * m, nn, ka, 0, ka, in, nn, 1,
				      &st->act);
		if (rc < 0)
			return rc;
		if (rc) {
			st->pk.epi.c_sn = 1;
			st->pk.gelu = st->gelu;
			n->run = matmul_pk_run;
			return gc_kok(k);
		}
	}
	if (gc_nn_is_half(a->dtype))
		return gc_nn_half_setup(k, n, in, out, matmul_run_f32, 0);
	n->run = matmul_pick(a->dtype);
	return gc_kok(k);
}
