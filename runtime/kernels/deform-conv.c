/*
 * DeformConv (opsets 19, 22), 2-D: a convolution whose every tap reads X at
 * its regular position plus a learned (dh, dw) offset, bilinearly
 * interpolated (taps outside X read 0), times an optional mask, as ONNX's
 * reference and torchvision's deform_conv2d compute it. Offsets and masks
 * come per offset group of input channels. Per batch item and group, a
 * column matrix [C/group * kH * kW][positions] of sampled values is built
 * (rows split over the nn-par pool; positions tiled so that it stays under
 * DC_COL_BYTES) and multiplied by the group's weights (gc_nn_sgemm).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../blas.h"
#include "kutil.h"
#include "nn-par.h"
#include "nn.h"

#define DC_COL_BYTES ((uint64_t)8 << 20)

typedef struct dc_state {
	gc_nn_base base;
	gc_nn_window w; /* 2-D: axes 1 and 2 */
	int64_t N, C, OC, group, og, K, OHW, tile;
	bool has_bias, has_mask;
} dc_state;

typedef struct dc_job {
	const dc_state *st;
	gc_tensor *const *in;
	void *col;
	int64_t b, g, p0, p1;
} dc_job;

#define DC_DEFINE(T, sfx, gemm)                                                                    \
	static inline T dc_sample_##sfx(const T *x, int64_t H, int64_t W, double h, double w)      \
	{                                                                                          \
		if (!(h > -1 && h < (double)H && w > -1 && w < (double)W))                         \
			return 0;                                                                  \
		double h0 = floor(h), w0 = floor(w), lh = h - h0, lw = w - w0;                     \
		int64_t y0 = (int64_t)h0, x0 = (int64_t)w0;                                        \
		double v = 0;                                                                      \
		if (y0 >= 0 && x0 >= 0)                                                            \
			v += (1 - lh) * (1 - lw) * x[y0 * W + x0];                                 \
		if (y0 >= 0 && x0 + 1 < W)                                                         \
			v += (1 - lh) * lw * x[y0 * W + x0 + 1];                                   \
		if (y0 + 1 < H && x0 >= 0)                                                         \
			v += lh * (1 - lw) * x[(y0 + 1) * W + x0];                                 \
		if (y0 + 1 < H && x0 + 1 < W)                                                      \
			v += lh * lw * x[(y0 + 1) * W + x0 + 1];                                   \
		return (T)v;                                                                       \
	}                                                                                          \
                                                                                                   \
	/* rows [r0, r1) of the column matrix: row (c, kh, kw) of the group */                     \
	static void dc_col_##sfx(const dc_job *j, int64_t r0, int64_t r1)                          \
	{                                                                                          \
		const dc_state *st = j->st;                                                        \
		const gc_nn_window *w = &st->w;                                                    \
		const int64_t H = w->in[1], W = w->in[2], OW = w->out[2], kw = w->k[2];            \
		const int64_t cg = st->C / st->group, P = j->p1 - j->p0;                           \
		const T *x = j->in[0]->data;                                               \
		const T *off = j->in[2]->data;                                                     \
		const T *mask = st->has_mask ? (const T *)j->in[4]->data : NULL;                   \
		T *col = j->col;                                                                   \
		for (int64_t row = r0; row < r1; row++) {                                          \
			int64_t ci = j->g * cg + row / st->K, kk = row % st->K;                    \
			int64_t kh = kk / kw, kx = kk % kw, ogi = ci / (st->C / st->og);           \
			const T *xc = x + (j->b * st->C + ci) * H * W;                             \
			const T *oh_ = off + ((j->b * st->og + ogi) * st->K + kk) * 2 * st->OHW;   \
			const T *ow_ = oh_ + st->OHW;                                              \
			const T *mk =                                                              \
			    mask ? mask + ((j->b * st->og + ogi) * st->K + kk) * st->OHW : NULL;   \
			T *cr = col + row * P;                                                     \
			for (int64_t q = 0; q < P; q++) {                                          \
				int64_t p = j->p0 + q, oy = p / OW, ox = p % OW;                   \
				double h = (double)(oy * w->stride[1] - w->pad_lo[1] +             \
						    kh * w->dil[1]) +                              \
					   (double)oh_[p];                                         \
				double ww = (double)(ox * w->stride[2] - w->pad_lo[2] +            \
						     kx * w->dil[2]) +                             \
					    (double)ow_[p];                                        \
				T v = dc_sample_##sfx(xc, H, W, h, ww);                            \
				cr[q] = mk ? v * mk[p] : v;                                        \
			}                                                                          \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	static void dc_part_##sfx(void *arg, int part, int parts, int slot)                        \
	{                                                                                          \
		(void)slot;                                                                        \
		const dc_job *j = arg;                                                             \
		int64_t r0, r1;                                                                    \
		gc_nn_part_range(j->st->C / j->st->group * j->st->K, part, parts, &r0, &r1);       \
		dc_col_##sfx(j, r0, r1);                                                           \
	}                                                                                          \
                                                                                                   \
	static int dc_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                \
				gc_tensor *const *out)                                             \
	{                                                                                          \
		const dc_state *st = n->state;                                                     \
		const int64_t cg = st->C / st->group, ocg = st->OC / st->group;                    \
		const int64_t rows = cg * st->K;                                                   \
		const T *wt = in[1]->data, *bias = st->has_bias ? (const T *)in[3]->data : NULL;   \
		T *y = out[0]->data;                                                               \
		for (int64_t b = 0; b < st->N; b++) {                                              \
			T *yb = y + b * st->OC * st->OHW;                                          \
			for (int64_t o = 0; o < st->OC; o++)                                       \
				for (int64_t p = 0; p < st->OHW; p++)                              \
					yb[o * st->OHW + p] = bias ? bias[o] : 0;                  \
			for (int64_t g = 0; g < st->group; g++)                                    \
				for (int64_t p0 = 0; p0 < st->OHW; p0 += st->tile) {               \
					int64_t p1 = p0 + st->tile < st->OHW ? p0 + st->tile       \
									     : st->OHW;    \
					dc_job j = {st, in, k->scratch, b, g, p0, p1};             \
					double cyc = 30.0 * (double)rows * (double)(p1 - p0);      \
					gc_nn_run_parts(gc_nn_par_threads(k->threads, cyc), rows,  \
							dc_part_##sfx, &j);                        \
					gemm(k->threads, false, false, (int)ocg, (int)(p1 - p0),   \
					     (int)rows, 1, wt + g * ocg * rows, (int)rows,         \
					     k->scratch, (int)(p1 - p0), 1,                        \
					     yb + g * ocg * st->OHW + p0, (int)st->OHW);           \
				}                                                                  \
		}                                                                                  \
		return 0;                                                                          \
	}

DC_DEFINE(float, f32, gc_nn_sgemm)
DC_DEFINE(double, f64, gc_nn_dgemm)

/* Input j, when present, must have rank 4 and these dims. */
static int dc_check(gc_kctx *k, const gc_tensor *t, const char *name, const int64_t *want,
		    int rank)
{
	char b1[128], b2[128];
	bool ok = t->rank == rank;
	for (int i = 0; ok && i < rank; i++)
		ok = t->dims[i] == want[i];
	if (!ok)
		return gc_kerr(k, GC_EINVAL, "input '%s' has shape %s; expected %s", name,
			       gc_shape_str(t->dims, t->rank, b1, sizeof b1),
			       gc_shape_str(want, rank, b2, sizeof b2));
	return 0;
}

int gc_prepare_DeformConv(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *wt = in[1], *off = in[2];
	const gc_tensor *bias = n->n_in > 3 ? in[3] : NULL, *mask = n->n_in > 4 ? in[4] : NULL;
	char b1[128], b2[128];
	gc_dtype dt = x->dtype;
	if (!(dt == GC_DTYPE_FLOAT || dt == GC_DTYPE_DOUBLE || gc_nn_is_half(dt)))
		return gc_kerr(k, GC_EINVAL,
			       "input 'X' has type %s; DeformConv takes float16, bfloat16, float32 "
			       "or float64",
			       gc_dtype_name(dt));
	for (int i = 1; i < n->n_in; i++)
		if (in[i] && in[i]->dtype != dt)
			return gc_kerr(k, GC_EINVAL, "input %d has type %s, X has %s", i,
				       gc_dtype_name(in[i]->dtype), gc_dtype_name(dt));
	if (x->rank != 4 || wt->rank != 4)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "X has shape %s and W %s; graphcc's DeformConv is 2-D: X (N, C, H, "
			       "W) and W (oC, C/group, kH, kW)",
			       gc_shape_str(x->dims, x->rank, b1, sizeof b1),
			       gc_shape_str(wt->dims, wt->rank, b2, sizeof b2));
	int64_t group = gc_attr_i(k, "group", 1), og = gc_attr_i(k, "offset_group", 1);
	if (gc_kok(k))
		return gc_kok(k);
	int64_t C = x->dims[1], OC = wt->dims[0];
	if (group < 1 || og < 1 || C % group || OC % group || wt->dims[1] * group != C ||
	    C % og)
		return gc_kerr(k, GC_EINVAL,
			       "X has %" PRId64 " channels, W shape %s, group %" PRId64
			       ", offset_group %" PRId64
			       ": C and oC must divide by group, W's second dim be C/group and C "
			       "divide by offset_group",
			       C, gc_shape_str(wt->dims, wt->rank, b1, sizeof b1), group, og);
	gc_nn_window w;
	if (gc_nn_window_init(k, 2, x->dims + 2, wt->dims + 2, 0, &w))
		return gc_kok(k);
	int64_t K = w.k[1] * w.k[2], OH = w.out[1], OW = w.out[2];
	int64_t want_off[4] = {x->dims[0], og * K * 2, OH, OW};
	if (dc_check(k, off, "offset", want_off, 4))
		return gc_kok(k);
	int64_t want_b[1] = {OC}, want_m[4] = {x->dims[0], og * K, OH, OW};
	if ((bias && dc_check(k, bias, "B", want_b, 1)) ||
	    (mask && dc_check(k, mask, "mask", want_m, 4)))
		return gc_kok(k);
	gc_error be = {0};
	if (gc_blas_init(&be))
		return gc_kerr(k, be.code, "%s", be.msg);
	dc_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->w = w;
	st->N = x->dims[0];
	st->C = C;
	st->OC = OC;
	st->group = group;
	st->og = og;
	st->K = K;
	st->OHW = OH * OW;
	st->has_bias = bias != NULL;
	st->has_mask = mask != NULL;
	int64_t rows = C / group * K;
	uint64_t es = dt == GC_DTYPE_DOUBLE ? 8 : 4;
	int64_t tile = (int64_t)(DC_COL_BYTES / es) / (rows ? rows : 1);
	st->tile = tile < 1 ? 1 : tile > st->OHW ? (st->OHW ? st->OHW : 1) : tile;
	if (rows > INT32_MAX || st->OHW > INT32_MAX || OC > INT32_MAX)
		return gc_kerr(k, GC_ELIMIT, "the convolution is too large");
	uint64_t scratch = gc_nn_align((uint64_t)rows * (uint64_t)st->tile * es);
	int64_t dims[4] = {x->dims[0], OC, OH, OW};
	gc_set_shape(out[0], dt, 4, dims);
	if (gc_nn_is_half(dt))
		return gc_nn_half_setup(k, n, in, out, dc_run_f32, scratch);
	n->scratch_bytes = scratch;
	n->run = dt == GC_DTYPE_DOUBLE ? dc_run_f64 : dc_run_f32;
	return 0;
}
