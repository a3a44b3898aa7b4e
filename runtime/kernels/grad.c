/*
 * The backward kernels of grad.h, float32 and float64. Convolution goes
 * through im2col / col2im and GEMMs split over the nn-par pool, each
 * thread with its own columns in scratch: the weight gradient by its
 * columns (every sum in sample order, whatever thread ran which part), the
 * input gradient by sample and group. With one thread, or one sample and
 * group for the input gradient, the GEMMs themselves split (gc_nn_sgemm). Pooling walks each window as
 * the forward kernels do (pool.c), so that the windows agree to the tap,
 * channels split over the pool.
 */
#include <float.h>
#include <inttypes.h>
#include <string.h>

#include "../blas.h"
#include "grad.h"
#include "kutil.h"
#include "nn.h"
#include "nn-par.h"
#include "pool-impl.h"
#include "shape-impl.h"
#include "value-impl.h"

GC_NN_O3

typedef struct grad_state {
	gc_nn_window w;
	int64_t n, c, m, group; /* conv: samples, input channels, output channels */
	int64_t cg, mg, ck, l;	/* per group: channels in and out, rows (cg * taps), columns */
	int64_t in_sp, out_sp;
	int64_t col;  /* conv: elements of one thread's columns */
	int slots;    /* conv: threads with their own scratch (1: the GEMMs split) */
	int count_include_pad;
	bool inside; /* pooling: every window inside X, no dilation */
} grad_state;

/* Conv: threads with their own columns. */
#define GRAD_SLOTS 4

/* Work over `units` split over the pool: fn(job, u0, u1, part, slot). */
typedef struct grad_job grad_job;
struct grad_job {
	const grad_state *st;
	gc_tensor *const *in, *const *out;
	char *scratch;
	int64_t units;
	void (*fn)(const grad_job *j, int64_t u0, int64_t u1, int part, int slot);
};

static void grad_part(void *arg, int part, int parts, int slot)
{
	const grad_job *j = arg;
	int64_t u0, u1;
	gc_nn_part_range(j->units, part, parts, &u0, &u1);
	if (u0 < u1)
		j->fn(j, u0, u1, part, slot);
}

/* Runs j over t threads in `parts` parts (0: a few a thread). */
static void grad_par(grad_job *j, int t, int parts)
{
	if (t <= 1 || j->units < 2)
		j->fn(j, 0, j->units, 0, 0);
	else
		gc_nn_parallel(t, parts ? parts : gc_nn_par_parts(t, j->units), grad_part, j);
}

static bool float_type(gc_dtype t)
{
	return t == GC_DTYPE_FLOAT || t == GC_DTYPE_DOUBLE;
}

/* Taps inside the input plus its end pads (count_include_pad's divisor). */
static int64_t taps_with_pad(int64_t start, int64_t k, int64_t dl, int64_t n, int64_t pad_hi)
{
	int64_t hi = n + pad_hi;
	if (start >= hi)
		return 0;
	int64_t t = (hi - 1 - start) / dl + 1;
	return t < k ? t : k;
}

/* The forward op's window over X (kernel: the weights' spatial dims, or
 * NULL for pooling's kernel_shape), checked against dY: N, `channels`, and
 * the window's output dims. */
static int window_of(gc_kctx *k, const gc_tensor *dy, const gc_tensor *x, const int64_t *kernel,
		     int64_t channels, int ceil_mode, gc_nn_window *w)
{
	char s1[128], s2[128];
	int32_t nsp = x->rank - 2;
	if (gc_nn_window_init(k, nsp, x->dims + 2, kernel, ceil_mode, w))
		return gc_kok(k);
	int off = GC_NN_MAX_SPATIAL - nsp;
	bool fits = dy->dims[0] == x->dims[0] && dy->dims[1] == channels;
	for (int i = 0; i < nsp; i++)
		fits &= dy->dims[2 + i] == w->out[off + i];
	if (!fits)
		return gc_kerr(k, GC_EINVAL, "dY has shape %s; the forward op on X %s gives another",
			       gc_shape_str(dy->dims, dy->rank, s1, sizeof s1),
			       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	return 0;
}

/* ---- convolution ---- */

/* ceil(a / b) for b > 0 and any a. */
static inline int64_t ceil_div(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/*
 * im2col (to_col) or col2im adding into x (!to_col): col[(c, a, b, e)][l],
 * rows [r0, r1) of it (col holds those rows).
 * Per row of output positions, the columns whose tap lands inside the input
 * are one strided range [lo, hi): no test per element.
 */
#define COL_DEFINE(T, sfx)                                                                         \
	GC_NN_SIMD static void col_##sfx(const grad_state *st, T *x, T *col, bool to_col,          \
					 int64_t r0, int64_t r1)                                   \
	{                                                                                          \
		const gc_nn_window *w = &st->w;                                                    \
		int64_t D = w->in[0], H = w->in[1], W = w->in[2], OW = w->out[2];                  \
		int64_t s2 = w->stride[2];                                                         \
		T *row = col;                                                                      \
		for (int64_t r = r0; r < r1; r++, row += st->l) {                                  \
			int64_t e = r % w->k[2], b = r / w->k[2] % w->k[1];                        \
			int64_t a = r / (w->k[2] * w->k[1]) % w->k[0];                             \
			int64_t c = r / (w->k[2] * w->k[1] * w->k[0]);                             \
			int64_t off = e * w->dil[2] - w->pad_lo[2];                                \
			int64_t lo = ceil_div(-off, s2), hi = ceil_div(W - off, s2);               \
			lo = lo < 0 ? 0 : lo > OW ? OW : lo;                                       \
			hi = hi > OW ? OW : hi < lo ? lo : hi;                                     \
			T *dst = row;                                                              \
			for (int64_t od = 0; od < w->out[0]; od++) {                               \
				int64_t i0 = od * w->stride[0] -                                   \
					     w->pad_lo[0] + a * w->dil[0];                         \
				for (int64_t oh = 0; oh < w->out[1];                               \
				     oh++, dst += OW) {                                            \
					int64_t i1 = oh * w->stride[1] -                           \
						     w->pad_lo[1] +                                \
						     b * w->dil[1];                                \
					bool in = i0 >= 0 && i0 < D &&                             \
						  i1 >= 0 && i1 < H;                               \
					T *xr = x + ((c * D + i0) * H + i1) * W + off;             \
					int64_t l0 = in ? lo : OW, l1 = in ? hi : OW;              \
					if (to_col) {                                              \
						for (int64_t o = 0; o < l0; o++)                   \
							dst[o] = 0;                                \
						if (s2 == 1 && l1 > l0)                            \
							memcpy(dst + l0, xr + l0,                  \
							       (size_t)(l1 - l0) * sizeof(T));     \
						else                                               \
							for (int64_t o = l0; o < l1; o++)          \
								dst[o] = xr[o * s2];               \
						for (int64_t o = l1; o < OW; o++)                  \
							dst[o] = 0;                                \
					} else {                                                   \
						if (s2 == 1)                                       \
							for (int64_t o = l0; o < l1; o++)          \
								xr[o] += dst[o];                   \
						else                                               \
							for (int64_t o = l0; o < l1; o++)          \
								xr[o * s2] += dst[o];              \
					}                                                          \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
	}

COL_DEFINE(float, f32)
COL_DEFINE(double, f64)

/*
 * dW[g] = sum over samples of dY[n, g] (mg x l) @ col(X[n, g])^T (l x ck);
 * dX[n, g] = col2im(W[g]^T (ck x mg) @ dY[n, g] (mg x l)). Split over the
 * pool: dW by its columns (rows of col: each part makes only its rows and
 * sums its samples in order), dX by (sample, group); each thread has its
 * own columns. Many small parts: a thread the system does not schedule
 * holds up little.
 */
#define CONV_GRAD_DEFINE(T, sfx, gemm)                                                             \
	static void conv_gw_part_##sfx(const grad_job *j, int64_t r0, int64_t r1, int part,        \
				       int slot)                                                   \
	{                                                                                          \
		(void)part;                                                                        \
		const grad_state *st = j->st;                                                      \
		const T *dy = j->in[0]->data;                                                      \
		T *x = j->in[1]->data, *dw = j->out[0]->data;                                      \
		T *col = (T *)j->scratch + (size_t)slot * st->col;                                 \
		for (int64_t s = 0; s < st->n; s++)                                                \
			for (int64_t g = 0; g < st->group; g++) {                                  \
				col_##sfx(st, x + (s * st->c + g * st->cg) * st->in_sp, col, true, \
					  r0, r1);                                                 \
				gemm(j->units > 1 ? 1 : st->slots, false, true, (int)st->mg,       \
				     (int)(r1 - r0), (int)st->l, 1,                                \
				     dy + (s * st->m + g * st->mg) * st->l, (int)st->l, col,       \
				     (int)st->l, s ? 1 : 0, dw + g * st->mg * st->ck + r0,         \
				     (int)st->ck);                                                 \
			}                                                                          \
	}                                                                                          \
	static void conv_gx_part_##sfx(const grad_job *j, int64_t u0, int64_t u1, int part,        \
				       int slot)                                                   \
	{                                                                                          \
		(void)part;                                                                        \
		const grad_state *st = j->st;                                                      \
		const T *dy = j->in[0]->data, *wt = j->in[1]->data;                                \
		T *dx = j->out[0]->data, *col = (T *)j->scratch + (size_t)slot * st->col;          \
		for (int64_t u = u0; u < u1; u++) {                                                \
			int64_t s = u / st->group, g = u % st->group;                              \
			T *dxg = dx + (s * st->c + g * st->cg) * st->in_sp;                        \
			gemm(j->units > 1 ? 1 : st->slots, true, false, (int)st->ck, (int)st->l,   \
			     (int)st->mg, 1, wt + g * st->mg * st->ck, (int)st->ck,                \
			     dy + (s * st->m + g * st->mg) * st->l, (int)st->l, 0, col,            \
			     (int)st->l);                                                          \
			memset(dxg, 0, (size_t)(st->cg * st->in_sp) * sizeof(T));                 \
			col_##sfx(st, dxg, col, false, 0, st->ck);                                 \
		}                                                                                  \
	}                                                                                          \
	/* units: of the split; one (or one thread): the GEMMs split instead */                    \
	static void conv_grad_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,        \
					gc_tensor *const *out, int64_t units,                      \
					void (*fn)(const grad_job *, int64_t, int64_t, int, int))  \
	{                                                                                          \
		const grad_state *st = n->state;                                                   \
		grad_job j = {st, in, out, k->scratch, units, fn};                                 \
		int t = conv_threads(k, st);                                                       \
		if (t <= 1 || units < 2) {                                                         \
			grad_state one = *st;                                                      \
			one.slots = k->threads;                                                    \
			j.st = &one;                                                               \
			j.units = 1;                                                               \
			fn(&j, 0, units, 0, 0);                                                    \
			return;                                                                    \
		}                                                                                  \
		grad_par(&j, t, 0);                                                                \
	}                                                                                          \
	static int conv_gw_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,               \
				 gc_tensor *const *out)                                            \
	{                                                                                          \
		const grad_state *st = n->state;                                                   \
		conv_grad_run_##sfx(k, n, in, out, st->ck, conv_gw_part_##sfx);                    \
		return 0;                                                                          \
	}                                                                                          \
	static int conv_gx_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,               \
				 gc_tensor *const *out)                                            \
	{                                                                                          \
		const grad_state *st = n->state;                                                   \
		conv_grad_run_##sfx(k, n, in, out, st->n * st->group, conv_gx_part_##sfx);         \
		return 0;                                                                          \
	}

/* Threads for a conv backward: those with scratch, as many as the GEMMs'
 * work is worth. */
static int conv_threads(gc_kctx *k, const grad_state *st)
{
	int t = k->threads < st->slots ? k->threads : st->slots;
	return gc_nn_par_threads(t, (double)st->n * st->m * st->ck * st->l / 16);
}

CONV_GRAD_DEFINE(float, f32, gc_nn_sgemm)
CONV_GRAD_DEFINE(double, f64, gc_nn_dgemm)

/* dy, x and w: the tensors whose shapes fix the convolution. */
static int conv_grad_prepare(gc_kctx *k, gc_node *n, const gc_tensor *dy, const gc_tensor *x,
			     const gc_tensor *wt, gc_tensor *out, const gc_tensor *like)
{
	char s1[128], s2[128], s3[128];
	if (!float_type(x->dtype) || dy->dtype != x->dtype || wt->dtype != x->dtype)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "dY, X and W must all be float or all double (got %s, %s, %s)",
			       gc_dtype_name(dy->dtype), gc_dtype_name(x->dtype),
			       gc_dtype_name(wt->dtype));
	if (x->rank < 3 || x->rank > 2 + GC_NN_MAX_SPATIAL || wt->rank != x->rank ||
	    dy->rank != x->rank)
		return gc_kerr(k, GC_EINVAL, "X %s, W %s and dY %s: ranks must agree, 3 to 5",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1),
			       gc_shape_str(wt->dims, wt->rank, s2, sizeof s2),
			       gc_shape_str(dy->dims, dy->rank, s3, sizeof s3));
	int64_t group = gc_attr_i(k, "group", 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (group < 1 || x->dims[1] % group || wt->dims[0] % group ||
	    wt->dims[1] * group != x->dims[1])
		return gc_kerr(k, GC_EINVAL, "attribute 'group' %" PRId64 " does not fit X %s, W %s",
			       group, gc_shape_str(x->dims, x->rank, s1, sizeof s1),
			       gc_shape_str(wt->dims, wt->rank, s2, sizeof s2));
	gc_nn_window w;
	if (window_of(k, dy, x, wt->dims + 2, wt->dims[0], 0, &w))
		return gc_kok(k);
	grad_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->w = w;
	st->n = x->dims[0];
	st->c = x->dims[1];
	st->m = wt->dims[0];
	st->group = group;
	st->cg = st->c / group;
	st->mg = st->m / group;
	st->in_sp = w.in[0] * w.in[1] * w.in[2];
	st->l = w.out[0] * w.out[1] * w.out[2];
	st->ck = st->cg * w.k[0] * w.k[1] * w.k[2];
	int64_t col;
	if (!gc_mul_i64(st->ck, st->l, &col) || col > ((int64_t)1 << 31) ||
	    st->l > INT32_MAX || st->ck > INT32_MAX)
		return gc_kerr(k, GC_ELIMIT, "the im2col buffer (%" PRId64 " x %" PRId64
			       ") is too large", st->ck, st->l);
	/* each thread's columns; fewer threads, down to 1 (the GEMMs split),
	 * past 64 MiB */
	uint64_t es = x->dtype == GC_DTYPE_FLOAT ? 4 : 8;
	st->col = col;
	st->slots = GRAD_SLOTS;
	while (st->slots > 1 && (uint64_t)col * (uint64_t)st->slots * es > ((uint64_t)1 << 26))
		st->slots /= 2;
	n->scratch_bytes = (uint64_t)col * (uint64_t)st->slots * es;
	gc_set_shape(out, x->dtype, like->rank, like->dims);
	/* small GEMMs go to BLAS, which no other node may have loaded */
	return gc_nn_blas_ready(k);
}

int gc_prepare_ConvGradWeight(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	int rc = conv_grad_prepare(k, n, in[0], in[1], in[2], out[0], in[2]);
	if (!rc)
		n->run = in[1]->dtype == GC_DTYPE_FLOAT ? conv_gw_f32 : conv_gw_f64;
	return rc;
}

int gc_prepare_ConvGradInput(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	int rc = conv_grad_prepare(k, n, in[0], in[2], in[1], out[0], in[2]);
	if (!rc)
		n->run = in[2]->dtype == GC_DTYPE_FLOAT ? conv_gx_f32 : conv_gx_f64;
	return rc;
}

/* ---- pooling ---- */


/* Channels [c0, c1) of dX, zeroed then each window's dY added (max: to
 * the window's first largest tap, as pool.c picks it; average: to every
 * tap, divided by the window's count). */
#define POOL_GRAD_DEFINE(T, sfx)                                                                   \
	/* every window inside X, no dilation: no taps to clip */                                  \
	static void maxpool_grad_inside_##sfx(const grad_state *st, const T *dy, const T *x, T *dx, \
					      int64_t c0, int64_t c1)                              \
	{                                                                                          \
		const gc_nn_window *w = &st->w;                                                    \
		int64_t H = w->in[1], W = w->in[2], k0 = w->k[0], k1 = w->k[1], k2 = w->k[2];      \
		for (int64_t ch = c0; ch < c1; ch++) {                                             \
			const T *xc = x + ch * st->in_sp, *dyc = dy + ch * st->out_sp;             \
			T *dxc = dx + ch * st->in_sp;                                              \
			for (int64_t od = 0; od < w->out[0]; od++)                                 \
				for (int64_t oh = 0; oh < w->out[1]; oh++, dyc += w->out[2]) {     \
					int64_t row = (od * w->stride[0] * H + oh * w->stride[1]) * W; \
					for (int64_t ow = 0; ow < w->out[2]; ow++) {               \
						int64_t at = row + ow * w->stride[2], best = at;   \
						T mx = xc[at];                                     \
						for (int64_t a = 0; a < k0; a++)                   \
							for (int64_t b = 0; b < k1; b++)           \
								for (int64_t e = 0; e < k2; e++) { \
									int64_t i = at + (a * H + b) * W + e; \
									if (xc[i] > mx) {  \
										best = i;  \
										mx = xc[i]; \
									}                  \
								}                          \
						dxc[best] += dyc[ow];                              \
					}                                                          \
				}                                                                  \
		}                                                                                  \
	}                                                                                          \
	static void maxpool_grad_part_##sfx(const grad_job *j, int64_t c0, int64_t c1, int part,   \
					    int slot)                                              \
	{                                                                                          \
		(void)part;                                                                        \
		(void)slot;                                                                        \
		const grad_state *st = j->st;                                                      \
		const T *dy = j->in[0]->data, *x = j->in[1]->data;                                 \
		T *dx = j->out[0]->data;                                                           \
		memset(dx + c0 * st->in_sp, 0, (size_t)((c1 - c0) * st->in_sp) * sizeof(T));      \
		if (st->inside) {                                                                  \
			maxpool_grad_inside_##sfx(st, dy, x, dx, c0, c1);                          \
			return;                                                                    \
		}                                                                                  \
		GC_POOL_WINDOWS_BEGIN(&st->w, st->in_sp, st->out_sp, c0, c1)                       \
		int64_t best = -1, d1 = w->dil[1] * W, d2 = w->dil[2];                             \
		T mx = 0;                                                                          \
		for (int64_t a = l0; a < h0; a++) {                                                \
			int64_t row = xo + ((s0 + a * w->dil[0]) * H + s1) * W + s2;               \
			for (int64_t b = l1; b < h1; b++)                                          \
				for (int64_t e = l2; e < h2; e++) {                                \
					int64_t i = row + b * d1 + e * d2;                         \
					if (best < 0 || x[i] > mx) {                               \
						best = i;                                          \
						mx = x[i];                                         \
					}                                                          \
				}                                                                  \
		}                                                                                  \
		if (best >= 0)                                                                     \
			dx[best] += dy[yo];                                                        \
		GC_POOL_WINDOWS_END                                                                \
	}                                                                                          \
	static void avgpool_grad_part_##sfx(const grad_job *j, int64_t c0, int64_t c1, int part,   \
					    int slot)                                              \
	{                                                                                          \
		(void)part;                                                                        \
		(void)slot;                                                                        \
		const grad_state *st = j->st;                                                      \
		const T *dy = j->in[0]->data;                                                      \
		T *dx = j->out[0]->data;                                                           \
		memset(dx + c0 * st->in_sp, 0, (size_t)((c1 - c0) * st->in_sp) * sizeof(T));      \
		GC_POOL_WINDOWS_BEGIN(&st->w, st->in_sp, st->out_sp, c0, c1)                       \
		int64_t cnt = st->count_include_pad                                                \
				  ? taps_with_pad(s0, w->k[0], w->dil[0], D, w->pad_hi[0]) *       \
					taps_with_pad(s1, w->k[1], w->dil[1], H, w->pad_hi[1]) *   \
					taps_with_pad(s2, w->k[2], w->dil[2], W, w->pad_hi[2])     \
				  : (h0 - l0) * (h1 - l1) * (h2 - l2);                             \
		T g = cnt ? dy[yo] / (T)cnt : 0;                                                   \
		int64_t d1 = w->dil[1] * W, d2 = w->dil[2];                                        \
		for (int64_t a = l0; a < h0; a++) {                                                \
			T *row = dx + xo + ((s0 + a * w->dil[0]) * H + s1) * W + s2;               \
			for (int64_t b = l1; b < h1; b++)                                          \
				for (int64_t e = l2; e < h2; e++)                                  \
					row[b * d1 + e * d2] += g;                                 \
		}                                                                                  \
		GC_POOL_WINDOWS_END                                                                \
	}                                                                                          \
	static int maxpool_grad_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,          \
				      gc_tensor *const *out)                                       \
	{                                                                                          \
		const grad_state *st = n->state;                                                   \
		grad_job j = {st, in, out, NULL, st->c, maxpool_grad_part_##sfx};                  \
		grad_par(&j, pool_threads(k, st), 0);                                              \
		return 0;                                                                          \
	}                                                                                          \
	static int avgpool_grad_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,          \
				      gc_tensor *const *out)                                       \
	{                                                                                          \
		const grad_state *st = n->state;                                                   \
		grad_job j = {st, in, out, NULL, st->c, avgpool_grad_part_##sfx};                  \
		grad_par(&j, pool_threads(k, st), 0);                                              \
		return 0;                                                                          \
	}

/* Threads for a pooling backward: a few cycles a tap, split by channel. */
static int pool_threads(gc_kctx *k, const grad_state *st)
{
	const gc_nn_window *w = &st->w;
	double taps = (double)w->k[0] * w->k[1] * w->k[2];
	return gc_nn_par_threads(k->threads, (double)st->c * (st->out_sp * (taps * 2 + 4) + st->in_sp));
}

POOL_GRAD_DEFINE(float, f32)
POOL_GRAD_DEFINE(double, f64)

static int pool_grad_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			     bool is_max)
{
	const gc_tensor *dy = in[0], *x = in[1];
	char s1[128], s2[128];
	if (!float_type(x->dtype) || dy->dtype != x->dtype)
		return gc_kerr(k, GC_EUNSUPPORTED, "dY and X must both be float or double (got %s, %s)",
			       gc_dtype_name(dy->dtype), gc_dtype_name(x->dtype));
	if (x->rank < 3 || x->rank > 2 + GC_NN_MAX_SPATIAL || dy->rank != x->rank)
		return gc_kerr(k, GC_EINVAL, "X %s and dY %s: ranks must agree, 3 to 5",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1),
			       gc_shape_str(dy->dims, dy->rank, s2, sizeof s2));
	int64_t ceil_mode = gc_attr_i(k, "ceil_mode", 0);
	int64_t cip = is_max ? 0 : gc_attr_i(k, "count_include_pad", 0);
	if (gc_kok(k))
		return gc_kok(k);
	gc_nn_window w;
	if (window_of(k, dy, x, NULL, x->dims[1], ceil_mode != 0, &w))
		return gc_kok(k);
	grad_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->w = w;
	st->c = x->dims[0] * x->dims[1];
	st->in_sp = w.in[0] * w.in[1] * w.in[2];
	st->out_sp = w.out[0] * w.out[1] * w.out[2];
	st->count_include_pad = cip != 0;
	st->inside = true;
	for (int d = 0; d < GC_NN_MAX_SPATIAL; d++)
		st->inside &= w.dil[d] == 1 && w.pad_lo[d] == 0 &&
			      (w.out[d] - 1) * w.stride[d] + w.k[d] <= w.in[d];
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	bool f = x->dtype == GC_DTYPE_FLOAT;
	n->run = is_max ? (f ? maxpool_grad_f32 : maxpool_grad_f64)
			: (f ? avgpool_grad_f32 : avgpool_grad_f64);
	return 0;
}

int gc_prepare_MaxPoolGrad(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return pool_grad_prepare(k, n, in, out, true);
}

int gc_prepare_AveragePoolGrad(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			       gc_tensor *const *out)
{
	return pool_grad_prepare(k, n, in, out, false);
}

/* ---- Relu ---- */

#define RELU_GRAD_DEFINE(T, sfx)                                                                   \
	GC_NN_SIMD static int relu_grad_##sfx(gc_kctx *k, const gc_node *n,                        \
					      gc_tensor *const *in, gc_tensor *const *out)         \
	{                                                                                          \
		(void)k;                                                                           \
		(void)n;                                                                           \
		const T *dy = in[0]->data, *x = in[1]->data;                                       \
		T *dx = out[0]->data;                                                              \
		int64_t cnt = gc_tensor_numel(out[0]);                                             \
		for (int64_t i = 0; i < cnt; i++)                                                  \
			dx[i] = x[i] > 0 ? dy[i] : 0;                                              \
		return 0;                                                                          \
	}

RELU_GRAD_DEFINE(float, f32)
RELU_GRAD_DEFINE(double, f64)

int gc_prepare_ReluGrad(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *dy = in[0], *x = in[1];
	char s1[128], s2[128];
	if (!float_type(x->dtype) || dy->dtype != x->dtype || !gc_same_shape(dy, x))
		return gc_kerr(k, GC_EINVAL, "dY (%s %s) and X (%s %s) must be float or double of one "
			       "shape", gc_dtype_name(dy->dtype),
			       gc_shape_str(dy->dims, dy->rank, s1, sizeof s1),
			       gc_dtype_name(x->dtype), gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->run = x->dtype == GC_DTYPE_FLOAT ? relu_grad_f32 : relu_grad_f64;
	return 0;
}

/* ---- NegativeLogLikelihoodLoss ---- */

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct nll_state {
	int reduction;
	bool has_ignore;
	int64_t ignore, n, c, d;
} nll_state;

/* dInput[i, t, j] = -weight[t] dL (/ the mean's divisor); 0 elsewhere. */
static int nll_grad_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const nll_state *p = n->state;
	const gc_tensor *dl = in[0], *t = in[2], *w = n->n_in > 3 ? in[3] : NULL;
	gc_tensor *dx = out[0];
	memset(dx->data, 0, (size_t)gc_tensor_nbytes(dx));
	double wsum = 0;
	for (int64_t i = 0; i < p->n * p->d; i++) {
		int64_t cls = gc_index_at(t, i);
		if (p->has_ignore && cls == p->ignore)
			continue;
		if (cls < 0 || cls >= p->c)
			return gc_kerr(k, GC_EINVAL,
				       "target %" PRId64 " at flat index %" PRId64
				       " is outside [0, %" PRId64 ")",
				       cls, i, p->c);
		wsum += w ? gc_kv_load(w, cls) : 1.0;
	}
	double scale = p->reduction == RED_MEAN ? (wsum != 0 ? 1.0 / wsum : 0.0) : 1.0;
	for (int64_t i = 0; i < p->n; i++)
		for (int64_t j = 0; j < p->d; j++) {
			int64_t ti = i * p->d + j, cls = gc_index_at(t, ti);
			if (p->has_ignore && cls == p->ignore)
				continue;
			double g = gc_kv_load(dl, p->reduction == RED_NONE ? ti : 0);
			double wt = w ? gc_kv_load(w, cls) : 1.0;
			gc_kv_store(dx, (i * p->c + cls) * p->d + j, -wt * g * scale);
		}
	return 0;
}

int gc_prepare_NegativeLogLikelihoodLossGrad(gc_kctx *k, gc_node *n, gc_tensor *const *in,
					     gc_tensor *const *out)
{
	const gc_tensor *dl = in[0], *x = in[1], *t = in[2], *w = n->n_in > 3 ? in[3] : NULL;
	const char *red = gc_attr_s(k, "reduction", "mean");
	const gc_attr *ig = gc_attr_find(n, "ignore_index");
	int64_t ignore = gc_attr_i(k, "ignore_index", 0);
	if (gc_kok(k))
		return gc_kok(k);
	int reduction = !strcmp(red, "none") ? RED_NONE
			: !strcmp(red, "sum") ? RED_SUM
			: !strcmp(red, "mean") ? RED_MEAN
					       : -1;
	if (reduction < 0)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'reduction' is '%s'; expected 'none', 'sum' or 'mean'", red);
	if (!float_type(x->dtype) || dl->dtype != x->dtype || (w && w->dtype != x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "dL, input and weight must be float or double");
	if (x->rank < 2 || t->rank != x->rank - 1)
		return gc_kerr(k, GC_EINVAL, "input must be (N, C, d...) and target (N, d...)");
	if (gc_check_index_type(k, t, "target"))
		return gc_kok(k);
	int64_t d = 1;
	for (int i = 2; i < x->rank; i++)
		d *= x->dims[i];
	int64_t want = reduction == RED_NONE ? x->dims[0] * d : 1;
	if (gc_tensor_numel(dl) != want || (w && (w->rank != 1 || w->dims[0] != x->dims[1])))
		return gc_kerr(k, GC_EINVAL, "dL or weight does not fit the loss's shapes");
	nll_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	*st = (nll_state){reduction, ig != NULL, ignore, x->dims[0], x->dims[1], d};
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->run = nll_grad_run;
	return 0;
}
