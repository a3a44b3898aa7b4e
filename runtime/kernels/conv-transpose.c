/* ConvTranspose: col = W_g^T x_g by GEMM per group, then scattered into the
 * output (col2im); the window arithmetic is conv.c's (nn.h). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../blas.h"
#include "kutil.h"
#include "nn-act.h"
#include "nn-par.h"
#include "nn.h"
#include "value-impl.h"

GC_NN_O3

/* ---- ConvTranspose: col = W_g^T x_g by GEMM, then scattered (col2im) ---- */

typedef struct convt_state {
	gc_nn_base base;
	gc_nn_window
	    w; /* in: X's spatial dims, out: Y's; pad_lo: Y's offset into the full result */
	int has_bias;
	int64_t n, c, m, g, cg, mg, in_sp, out_sp, kk;
} convt_state;

/* One group of one batch item: col (mg kk rows of in_sp) scattered into
 * y's mg planes, which start at the bias; split by output channel. */
typedef struct convt_job {
	const convt_state *st;
	const void *col, *bias;
	void *y;
} convt_job;

#define CONVT_DEFINE(T, sfx, gemm)                                                                 \
	static void col2im_##sfx(const convt_state *st, const T *col, T *y, int64_t m0,            \
				 int64_t m1)                                                       \
	{                                                                                          \
		const gc_nn_window *w = &st->w;                                                    \
		int64_t D = w->in[0], H = w->in[1], W = w->in[2];                                  \
		int64_t OD = w->out[0], OH = w->out[1], OW = w->out[2];                            \
		col += m0 * st->kk * st->in_sp;                                                    \
		for (int64_t m = m0; m < m1; m++)                                                  \
			for (int64_t a = 0; a < w->k[0]; a++)                                      \
				for (int64_t i = 0; i < w->k[1]; i++)                              \
					for (int64_t j = 0; j < w->k[2]; j++, col += st->in_sp) {  \
						int64_t offw = j * w->dil[2] - w->pad_lo[2], lo,   \
							hi;                                        \
						gc_nn_valid_range(offw, w->stride[2], OW, W, &lo,  \
								  &hi);                            \
						T *ym = y + m * st->out_sp;                        \
						for (int64_t id = 0; id < D; id++) {               \
							int64_t od = id * w->stride[0] -           \
								     w->pad_lo[0] + a * w->dil[0]; \
							if (od < 0 || od >= OD)                    \
								continue;                          \
							for (int64_t ih = 0; ih < H; ih++) {       \
								int64_t oh = ih * w->stride[1] -   \
									     w->pad_lo[1] +        \
									     i * w->dil[1];        \
								if (oh < 0 || oh >= OH)            \
									continue;                  \
								const T *src =                     \
								    col + (id * H + ih) * W;       \
								T *dst = ym + (od * OH + oh) * OW; \
								for (int64_t iw = lo; iw < hi;     \
								     iw++)                         \
									dst[iw * w->stride[2] +    \
									    offw] += src[iw];      \
							}                                          \
						}                                                  \
					}                                                          \
	}                                                                                          \
                                                                                                   \
	static void convt_part_##sfx(void *arg, int part, int parts, int slot)                     \
	{                                                                                          \
		(void)slot;                                                                        \
		const convt_job *j = arg;                                                          \
		const convt_state *st = j->st;                                                     \
		const T *bias = j->bias;                                                           \
		int64_t m0, m1;                                                                    \
		gc_nn_part_range(st->mg, part, parts, &m0, &m1);                                   \
		for (int64_t m = m0; m < m1; m++) {                                                \
			T *ym = (T *)j->y + m * st->out_sp, bv = bias ? bias[m] : 0;               \
			for (int64_t p = 0; p < st->out_sp; p++)                                   \
				ym[p] = bv;                                                        \
		}                                                                                  \
		col2im_##sfx(st, j->col, j->y, m0, m1);                                            \
	}                                                                                          \
                                                                                                   \
	static int convt_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,             \
				   gc_tensor *const *out)                                          \
	{                                                                                          \
		const convt_state *st = n->state;                                                  \
		const T *x = in[0]->data, *wt = in[1]->data;                                       \
		const T *bias = st->has_bias ? (const T *)in[2]->data : NULL;                      \
		T *y = out[0]->data, *col = k->scratch;                                            \
		int64_t rows = st->mg * st->kk;                                                    \
		/* ~2 cycles an output (its bias) and a col element (its add) */                   \
		int t = gc_nn_par_threads(                                                         \
		    k->threads, 2.0 * (double)st->mg * (double)(st->out_sp + st->kk * st->in_sp)); \
		for (int64_t b = 0; b < st->n; b++)                                                \
			for (int64_t g = 0; g < st->g; g++) {                                      \
				const T *xg = x + (b * st->c + g * st->cg) * st->in_sp;            \
				const T *wg = wt + g * st->cg * rows;                              \
				gemm(k->threads, 1, 0, (int)rows, (int)st->in_sp, (int)st->cg, 1,  \
				     wg, (int)rows, xg, (int)st->in_sp, 0, col, (int)st->in_sp);   \
				convt_job j = {st, col, bias ? bias + g * st->mg : NULL,           \
					       y + (b * st->m + g * st->mg) * st->out_sp};         \
				gc_nn_run_parts(t, st->mg, convt_part_##sfx, &j);                  \
			}                                                                          \
		return 0;                                                                          \
	}

CONVT_DEFINE(float, f32, gc_nn_sgemm)
CONVT_DEFINE(double, f64, gc_nn_dgemm)

int gc_prepare_ConvTranspose(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *wt = in[1], *b = n->n_in > 2 ? in[2] : NULL;
	char s1[128], s2[128];
	if (gc_nn_conv_types(k, "ConvTranspose", x, wt, b))
		return gc_kok(k);
	if (x->rank < 3 || x->rank > 2 + GC_NN_MAX_SPATIAL || wt->rank != x->rank)
		return gc_kerr(k, GC_EUNSUPPORTED, "X %s and W %s must have the same rank, 3 to 5",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1),
			       gc_shape_str(wt->dims, wt->rank, s2, sizeof s2));
	int32_t nsp = x->rank - 2;
	const int64_t *ks, *ss, *ds, *ps, *ops, *oss;
	int64_t nk = gc_attr_ints(k, "kernel_shape", &ks), ns = gc_attr_ints(k, "strides", &ss);
	int64_t nd = gc_attr_ints(k, "dilations", &ds), np = gc_attr_ints(k, "pads", &ps);
	int64_t nop = gc_attr_ints(k, "output_padding", &ops);
	int64_t nos = gc_attr_ints(k, "output_shape", &oss);
	const char *ap = gc_attr_s(k, "auto_pad", "NOTSET");
	int64_t group = gc_attr_i(k, "group", 1);
	if (gc_kok(k))
		return gc_kok(k);
	int same_upper = !strcmp(ap, "SAME_UPPER"), same_lower = !strcmp(ap, "SAME_LOWER");
	int valid = !strcmp(ap, "VALID");
	if (!same_upper && !same_lower && !valid && strcmp(ap, "NOTSET") && ap[0])
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'auto_pad' is \"%s\"; expected NOTSET, SAME_UPPER, "
			       "SAME_LOWER or VALID",
			       ap);
	if ((ks && nk != nsp) || (ss && ns != nsp) || (ds && nd != nsp) || (ps && np != 2 * nsp) ||
	    (ops && nop != nsp) || (oss && nos != nsp && nos != x->rank))
		return gc_kerr(k, GC_EINVAL,
			       "kernel_shape, strides, dilations, output_padding and output_shape "
			       "need %d values and pads %d, for X %s",
			       nsp, 2 * nsp, gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	int64_t c = x->dims[1];
	if (group < 1 || c % group || wt->dims[0] != c)
		return gc_kerr(k, GC_EINVAL,
			       "X %s has %" PRId64 " channels; W %s must have as many in dim 0, "
			       "divisible by group %" PRId64,
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1), c,
			       gc_shape_str(wt->dims, wt->rank, s2, sizeof s2), group);
	int64_t m = wt->dims[1] * group;
	if (b && (b->rank != 1 || b->dims[0] != m))
		return gc_kerr(k, GC_EINVAL, "input B has shape %s; expected [%" PRId64 "]",
			       gc_shape_str(b->dims, b->rank, s1, sizeof s1), m);
	convt_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	gc_nn_window *w = &st->w;
	for (int d = 0; d < GC_NN_MAX_SPATIAL; d++)
		w->in[d] = w->k[d] = w->stride[d] = w->dil[d] = w->out[d] = 1;
	w->nsp = nsp;
	int off = GC_NN_MAX_SPATIAL - nsp;
	for (int i = 0; i < nsp; i++) {
		int d = off + i;
		int64_t in_sz = x->dims[2 + i], kk = wt->dims[2 + i];
		if (ks && ks[i] != kk)
			return gc_kerr(k, GC_EINVAL,
				       "attribute 'kernel_shape' %s differs from W %s",
				       gc_nn_ints_str(ks, nk, s1, sizeof s1),
				       gc_shape_str(wt->dims, wt->rank, s2, sizeof s2));
		int64_t s = ss ? ss[i] : 1, dl = ds ? ds[i] : 1, op = ops ? ops[i] : 0;
		if (s < 1 || dl < 1 || op < 0)
			return gc_kerr(k, GC_EINVAL,
				       "strides and dilations must be >= 1 and output_padding >= 0 "
				       "(axis %d: %" PRId64 ", %" PRId64 ", %" PRId64 ")",
				       i, s, dl, op);
		/* Sizes read from a file: keep every product below 2^63. */
		const int64_t big = INT64_C(1) << 31;
		int64_t os = oss ? oss[nos - nsp + i] : 0, stretched;
		if (kk > big || s > big || dl > big || op > big ||
		    __builtin_mul_overflow(in_sz, s, &stretched) ||
		    stretched > (INT64_C(1) << 40) || os > (INT64_C(1) << 40))
			return gc_kerr(k, GC_ELIMIT,
				       "spatial axis %d: size %" PRId64 ", kernel %" PRId64
				       ", stride %" PRId64 ", dilation %" PRId64 ", output_padding %" PRId64
				       " or output_shape %" PRId64 " is too large",
				       i, in_sz, kk, s, dl, op, os);
		int64_t full = s * (in_sz - 1) + op + (kk - 1) * dl + 1, o, head;
		if (oss || same_upper || same_lower) {
			o = oss ? os : stretched;
			int64_t total = full - o;
			if (total < 0) /* a larger output: zeros at the end */
				total = 0;
			head = same_upper ? total / 2 : total - total / 2;
		} else {
			int64_t pl = ps && !valid ? ps[i] : 0, ph = ps && !valid ? ps[nsp + i] : 0;
			if (pl < 0 || ph < 0)
				return gc_kerr(k, GC_EINVAL, "attribute 'pads' %s must be >= 0",
					       gc_nn_ints_str(ps, np, s1, sizeof s1));
			if (pl > big || ph > big)
				return gc_kerr(k, GC_ELIMIT, "attribute 'pads' %s is too large",
					       gc_nn_ints_str(ps, np, s1, sizeof s1));
			o = full - pl - ph;
			head = pl;
		}
		if (o < 1)
			return gc_kerr(k, GC_EINVAL,
				       "output size %" PRId64 " on spatial axis %d is not positive",
				       o, i);
		w->in[d] = in_sz;
		w->k[d] = kk;
		w->stride[d] = s;
		w->dil[d] = dl;
		w->pad_lo[d] = head;
		w->out[d] = o;
	}
	st->n = x->dims[0];
	st->c = c;
	st->m = m;
	st->g = group;
	st->cg = c / group;
	st->mg = m / group;
	st->has_bias = b != NULL;
	if (__builtin_mul_overflow(w->in[0] * w->in[1], w->in[2], &st->in_sp) ||
	    __builtin_mul_overflow(w->out[0] * w->out[1], w->out[2], &st->out_sp) ||
	    __builtin_mul_overflow(w->k[0] * w->k[1], w->k[2], &st->kk) ||
	    st->in_sp > (INT64_C(1) << 40) || st->out_sp > (INT64_C(1) << 40) ||
	    st->kk > (INT64_C(1) << 40))
		return gc_kerr(k, GC_ELIMIT, "the spatial sizes are too large");
	int64_t dims[GC_MAX_RANK] = {st->n, m};
	for (int i = 0; i < nsp; i++)
		dims[2 + i] = w->out[off + i];
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	size_t es = x->dtype == GC_DTYPE_DOUBLE ? 8 : 4;
	int64_t col;
	if (st->mg * st->kk > INT_MAX || st->in_sp > INT_MAX || st->cg > INT_MAX ||
	    __builtin_mul_overflow(st->mg * st->kk, st->in_sp * (int64_t)es, &col))
		return gc_kerr(k, GC_ELIMIT, "transposed convolution too large for BLAS int sizes");
	if (gc_nn_blas_ready(k))
		return gc_kok(k);
	uint64_t scratch = gc_nn_align((uint64_t)col);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, convt_run_f32, scratch);
	n->scratch_bytes = scratch;
	n->run = x->dtype == GC_DTYPE_DOUBLE ? convt_run_f64 : convt_run_f32;
	return 0;
}
