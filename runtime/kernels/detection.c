/*
 * NonMaxSuppression (opsets 10, 11): per batch and class, boxes whose score
 * is above score_threshold are taken by descending score (ties: lower box
 * index first) and kept unless their IoU with a kept box exceeds
 * iou_threshold, up to max_output_boxes_per_class (0: none). The number of
 * boxes kept is the output's first dimension, so every input must be known
 * when the program is built; the selection is made then.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc.h"
#include "detection.h"
#include "value-impl.h"

typedef struct nms_plan {
	int64_t count;
	int64_t sel[]; /* count x 3 */
} nms_plan;

typedef struct nms_cand {
	double score;
	int64_t box;
} nms_cand;

static int cand_cmp(const void *a, const void *b)
{
	const nms_cand *x = a, *y = b;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	return x->box < y->box ? -1 : x->box > y->box;
}

/* Box i of batch b as (y1, x1, y2, x2) with y1 <= y2, x1 <= x2. */
static void box_at(const gc_tensor *t, int64_t b, int64_t i, int64_t nb, bool center, double *r)
{
	double v[4];
	for (int j = 0; j < 4; j++)
		v[j] = gc_kv_load(t, (b * nb + i) * 4 + j);
	if (center) { /* x_center, y_center, width, height */
		r[0] = v[1] - v[3] / 2;
		r[1] = v[0] - v[2] / 2;
		r[2] = v[1] + v[3] / 2;
		r[3] = v[0] + v[2] / 2;
	} else {
		r[0] = fmin(v[0], v[2]);
		r[1] = fmin(v[1], v[3]);
		r[2] = fmax(v[0], v[2]);
		r[3] = fmax(v[1], v[3]);
	}
}

static double iou(const double *a, const double *b)
{
	double ih = fmin(a[2], b[2]) - fmax(a[0], b[0]), iw = fmin(a[3], b[3]) - fmax(a[1], b[1]);
	if (ih <= 0 || iw <= 0)
		return 0;
	double inter = ih * iw;
	double uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
	return uni > 0 ? inter / uni : 0;
}

static int run_nms(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)in;
	const nms_plan *p = n->state;
	memcpy(out[0]->data, p->sel, (size_t)p->count * 3 * sizeof(int64_t));
	return 0;
}

static int const_scalar(gc_kctx *k, const gc_tensor *t, const char *what, double *v)
{
	if (!t || gc_tensor_numel(t) == 0)
		return 0;
	if (!t->data)
		return gc_kneed_value(k,
			       "input '%s' must be known when the program is built (the output's "
			       "shape depends on it)",
			       what);
	if (gc_tensor_numel(t) != 1 || !gc_kv_numeric(t->dtype))
		return gc_kerr(k, GC_EINVAL, "input '%s' must be a scalar", what);
	*v = gc_kv_load(t, 0);
	return 0;
}

int gc_prepare_NonMaxSuppression(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				 gc_tensor *const *out)
{
	const gc_tensor *bx = in[0], *sc = in[1];
	int64_t center = gc_attr_i(k, "center_point_box", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(bx->dtype) || !gc_kv_float(sc->dtype))
		return gc_kerr(k, GC_EINVAL, "inputs 'boxes' and 'scores' must be floating-point");
	if (bx->rank != 3 || bx->dims[2] != 4 || sc->rank != 3 || sc->dims[0] != bx->dims[0] ||
	    sc->dims[2] != bx->dims[1])
		return gc_kerr(k, GC_EINVAL,
			       "needs boxes (batch, boxes, 4) and scores (batch, classes, boxes)");
	if (!bx->data || !sc->data)
		return gc_kneed_value(
		    k,
		    "inputs 'boxes' and 'scores' must be known when the program is built "
		    "(the output's shape depends on them)");
	double maxo = 0, iou_t = 0, score_t = -INFINITY;
	bool has_score_t = n->n_in > 4 && in[4] && gc_tensor_numel(in[4]) > 0;
	if (const_scalar(k, n->n_in > 2 ? in[2] : NULL, "max_output_boxes_per_class", &maxo) ||
	    const_scalar(k, n->n_in > 3 ? in[3] : NULL, "iou_threshold", &iou_t) ||
	    const_scalar(k, n->n_in > 4 ? in[4] : NULL, "score_threshold", &score_t))
		return gc_kok(k);
	int64_t B = bx->dims[0], N = bx->dims[1], C = sc->dims[1];
	/* (NaN and huge counts: the conversion would be undefined) */
	int64_t per = !(maxo > 0) ? 0 : maxo >= (double)N ? N : (int64_t)maxo;
	nms_plan *p = gc_malloc(sizeof *p + (size_t)(B * C * per * 3 + 1) * sizeof(int64_t));
	nms_cand *cand = gc_malloc((size_t)(N + 1) * sizeof *cand);
	int64_t *kept = gc_malloc((size_t)(N + 1) * sizeof *kept);
	if (!p || !cand || !kept) {
		gc_free(p);
		gc_free(cand);
		gc_free(kept);
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	}
	p->count = 0;
	n->state = p;
	for (int64_t b = 0; b < B; b++)
		for (int64_t c = 0; c < C && per > 0; c++) {
			int64_t nc = 0, nk = 0;
			for (int64_t i = 0; i < N; i++) {
				double s = gc_kv_load(sc, (b * C + c) * N + i);
				if (!has_score_t || s > score_t) {
					cand[nc].score = s;
					cand[nc++].box = i;
				}
			}
			qsort(cand, (size_t)nc, sizeof *cand, cand_cmp);
			for (int64_t i = 0; i < nc && nk < per; i++) {
				double a[4], o[4];
				box_at(bx, b, cand[i].box, N, center != 0, a);
				bool keep = true;
				for (int64_t j = 0; j < nk && keep; j++) {
					box_at(bx, b, kept[j], N, center != 0, o);
					keep = !(iou(a, o) > iou_t);
				}
				if (!keep)
					continue;
				kept[nk++] = cand[i].box;
				p->sel[p->count * 3] = b;
				p->sel[p->count * 3 + 1] = c;
				p->sel[p->count * 3 + 2] = cand[i].box;
				p->count++;
			}
		}
	gc_free(cand);
	gc_free(kept);
	int64_t dims[2] = {p->count, 3};
	gc_set_shape(out[0], GC_DTYPE_INT64, 2, dims);
	n->run = run_nms;
	return 0;
}

/* ---- RoiAlign (opsets 10, 16) ----------------------------------------------- */

/*
 * As ONNX's reference (the Caffe2/ONNX Runtime algorithm): each output bin
 * averages (mode avg) sampling_ratio^2 bilinear samples (adaptive:
 * ceil(roi size / bins) per axis when sampling_ratio is 0); "max" keeps the
 * largest weighted corner value, as ONNX Runtime does. Opset 16's default
 * coordinate_transformation_mode half_pixel shifts by -0.5 and does not
 * force a minimum roi size of 1; output_half_pixel (opset 10's behaviour)
 * does.
 */
typedef struct roi_plan {
	int64_t ph, pw, sampling;
	double scale;
	bool half_pixel, max_mode;
} roi_plan;

static void roi_sample(const gc_tensor *x, int64_t base, int64_t H, int64_t W, double y, double xx,
		       double *w, double *v)
{
	for (int i = 0; i < 4; i++)
		w[i] = v[i] = 0;
	if (!gc_float_in(y, -1.0, (double)H) || !gc_float_in(xx, -1.0, (double)W))
		return; /* outside, or NaN */
	y = y <= 0 ? 0 : y;
	xx = xx <= 0 ? 0 : xx;
	int64_t yl = (int64_t)y, xl = (int64_t)xx, yh, xh;
	if (yl >= H - 1) {
		yh = yl = H - 1;
		y = (double)yl;
	} else {
		yh = yl + 1;
	}
	if (xl >= W - 1) {
		xh = xl = W - 1;
		xx = (double)xl;
	} else {
		xh = xl + 1;
	}
	double ly = y - (double)yl, lx = xx - (double)xl, hy = 1 - ly, hx = 1 - lx;
	w[0] = hy * hx;
	w[1] = hy * lx;
	w[2] = ly * hx;
	w[3] = ly * lx;
	v[0] = gc_kv_load(x, base + yl * W + xl);
	v[1] = gc_kv_load(x, base + yl * W + xh);
	v[2] = gc_kv_load(x, base + yh * W + xl);
	v[3] = gc_kv_load(x, base + yh * W + xh);
}

static int run_roialign(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const roi_plan *p = n->state;
	const gc_tensor *x = in[0], *rois = in[1], *bi = in[2];
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t R = rois->dims[0];
	double off = p->half_pixel ? 0.5 : 0;
	for (int64_t r = 0; r < R; r++) {
		double bd = gc_kv_load(bi, r);
		if (!gc_float_in(bd, 0, (double)(N - 1)))
			return gc_kerr(k, GC_EINVAL,
				       "batch_indices[%" PRId64 "] = %.0f is outside [0, %" PRId64 ")",
				       r, bd, N);
		int64_t b = (int64_t)bd;
		double x1 = gc_kv_load(rois, r * 4) * p->scale - off;
		double y1 = gc_kv_load(rois, r * 4 + 1) * p->scale - off;
		double x2 = gc_kv_load(rois, r * 4 + 2) * p->scale - off;
		double y2 = gc_kv_load(rois, r * 4 + 3) * p->scale - off;
		double rw = x2 - x1, rh = y2 - y1;
		if (!p->half_pixel) {
			rw = rw > 1 ? rw : 1;
			rh = rh > 1 ? rh : 1;
		}
		double bh = rh / (double)p->ph, bw = rw / (double)p->pw;
		double sh = ceil(rh / (double)p->ph), sw = ceil(rw / (double)p->pw);
		/* the sampling grid follows the roi's size: a roi of NaN or of
		 * 1e30 pixels has none worth taking */
		if (p->sampling <= 0 && (!gc_float_in(sh, -0x1p20, 0x1p20) ||
					 !gc_float_in(sw, -0x1p20, 0x1p20)))
			return gc_kerr(k, GC_EINVAL,
				       "roi %" PRId64 " (%g x %g pixels) is not a size a sampling grid "
				       "can follow (give sampling_ratio)",
				       r, rh, rw);
		int64_t gh = p->sampling > 0 ? p->sampling : (int64_t)sh;
		int64_t gw = p->sampling > 0 ? p->sampling : (int64_t)sw;
		double count = (double)(gh * gw > 1 ? gh * gw : 1);
		for (int64_t c = 0; c < C; c++) {
			int64_t base = (b * C + c) * H * W;
			for (int64_t i = 0; i < p->ph; i++)
				for (int64_t j = 0; j < p->pw; j++) {
					double acc = 0;
					bool first = true;
					for (int64_t iy = 0; iy < gh; iy++) {
						double yy = y1 + (double)i * bh +
							    ((double)iy + 0.5) * bh / (double)gh;
						for (int64_t ix = 0; ix < gw; ix++) {
							double xx =
							    x1 + (double)j * bw +
							    ((double)ix + 0.5) * bw / (double)gw;
							double w[4], v[4];
							roi_sample(x, base, H, W, yy, xx, w, v);
							if (p->max_mode) {
								for (int q = 0; q < 4; q++) {
									double t = w[q] * v[q];
									if (first || t > acc)
										acc = t;
									first = false;
								}
							} else {
								acc += w[0] * v[0] + w[1] * v[1] +
								       w[2] * v[2] + w[3] * v[3];
							}
						}
					}
					gc_kv_store(out[0], ((r * C + c) * p->ph + i) * p->pw + j,
						    p->max_mode ? acc : acc / count);
				}
		}
	}
	return 0;
}

int gc_prepare_RoiAlign(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *rois = in[1], *bi = in[2];
	const char *ct = n->opset >= 16
			     ? gc_attr_s(k, "coordinate_transformation_mode", "half_pixel")
			     : "output_half_pixel";
	const char *mode = gc_attr_s(k, "mode", "avg");
	int64_t ph = gc_attr_i(k, "output_height", 1), pw = gc_attr_i(k, "output_width", 1);
	int64_t sr = gc_attr_i(k, "sampling_ratio", 0);
	float scale = gc_attr_f(k, "spatial_scale", 1.0f);
	if (gc_kok(k))
		return gc_kok(k);
	if (strcmp(ct, "half_pixel") && strcmp(ct, "output_half_pixel"))
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'coordinate_transformation_mode' = '%s' is not "
			       "half_pixel or output_half_pixel",
			       ct);
	if (strcmp(mode, "avg") && strcmp(mode, "max"))
		return gc_kerr(k, GC_EINVAL, "attribute 'mode' = '%s' is not avg or max", mode);
	if (ph <= 0 || pw <= 0 || sr < 0)
		return gc_kerr(k, GC_EINVAL,
			       "output_height/output_width must be positive and "
			       "sampling_ratio not negative");
	if (!gc_kv_float(x->dtype) || x->rank != 4)
		return gc_kerr(k, GC_EINVAL, "input 'X' must be a 4-D floating-point tensor");
	if (rois->dtype != x->dtype || rois->rank != 2 || rois->dims[1] != 4)
		return gc_kerr(k, GC_EINVAL, "input 'rois' must be (num_rois, 4) of X's type");
	if ((bi->dtype != GC_DTYPE_INT64 && bi->dtype != GC_DTYPE_INT32) || bi->rank != 1 ||
	    bi->dims[0] != rois->dims[0])
		return gc_kerr(k, GC_EINVAL, "input 'batch_indices' must be (num_rois) of int64");
	roi_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->ph = ph;
	p->pw = pw;
	p->sampling = sr;
	p->scale = scale;
	p->half_pixel = !strcmp(ct, "half_pixel");
	p->max_mode = !strcmp(mode, "max");
	int64_t dims[4] = {rois->dims[0], x->dims[1], ph, pw};
	gc_set_shape(out[0], x->dtype, 4, dims);
	n->run = run_roialign;
	return 0;
}

/* ---- MaxRoiPool (opsets 1, 22) ---------------------------------------------- */

/*
 * As ONNX's reference and ONNX Runtime (Fast R-CNN's RoI pooling): each roi
 * (batch index, x1, y1, x2, y2), scaled by spatial_scale and rounded to
 * pixels, is cut into pooled_shape bins of floor/ceil edges; a bin keeps
 * its largest value, an empty one (outside X) is 0.
 */
typedef struct maxroi_plan {
	int64_t ph, pw;
	double scale;
} maxroi_plan;

static int64_t maxroi_clamp(int64_t v, int64_t hi)
{
	return v < 0 ? 0 : v > hi ? hi : v;
}

static int run_maxroipool(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			  gc_tensor *const *out)
{
	const maxroi_plan *p = n->state;
	const gc_tensor *x = in[0], *rois = in[1];
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	for (int64_t r = 0; r < rois->dims[0]; r++) {
		double v[5];
		for (int i = 0; i < 5; i++)
			v[i] = gc_kv_load(rois, r * 5 + i) * (i ? p->scale : 1.0);
		for (int i = 1; i < 5; i++)
			if (!gc_float_in(v[i], -0x1p40, 0x1p40))
				return gc_kerr(k, GC_EINVAL, "roi %" PRId64 " has coordinate %g", r,
					       v[i] / p->scale);
		if (!gc_float_in(trunc(v[0]), 0, (double)(N - 1)))
			return gc_kerr(k, GC_EINVAL,
				       "roi %" PRId64 " names batch %g; X has %" PRId64, r, v[0], N);
		int64_t b = (int64_t)v[0], x1 = (int64_t)round(v[1]), y1 = (int64_t)round(v[2]);
		int64_t x2 = (int64_t)round(v[3]), y2 = (int64_t)round(v[4]);
		double bh = (double)(y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1) / (double)p->ph;
		double bw = (double)(x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1) / (double)p->pw;
		for (int64_t c = 0; c < C; c++) {
			int64_t base = (b * C + c) * H * W;
			for (int64_t i = 0; i < p->ph; i++) {
				int64_t h0 = maxroi_clamp((int64_t)floor((double)i * bh) + y1, H);
				int64_t h1 = maxroi_clamp((int64_t)ceil((double)(i + 1) * bh) + y1, H);
				for (int64_t j = 0; j < p->pw; j++) {
					int64_t w0 = maxroi_clamp((int64_t)floor((double)j * bw) + x1, W);
					int64_t w1 =
						maxroi_clamp((int64_t)ceil((double)(j + 1) * bw) + x1, W);
					double m = 0;
					for (int64_t yy = h0; yy < h1; yy++)
						for (int64_t xx = w0; xx < w1; xx++) {
							double t = gc_kv_load(x, base + yy * W + xx);
							m = (yy == h0 && xx == w0) || t > m ? t : m;
						}
					gc_kv_store(out[0], ((r * C + c) * p->ph + i) * p->pw + j, m);
				}
			}
		}
	}
	return 0;
}

int gc_prepare_MaxRoiPool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *rois = in[1];
	const int64_t *shape;
	int64_t ns = gc_attr_ints(k, "pooled_shape", &shape);
	float scale = gc_attr_f(k, "spatial_scale", 1.0f);
	if (gc_kok(k))
		return gc_kok(k);
	if (ns != 2 || shape[0] <= 0 || shape[1] <= 0)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'pooled_shape' must be two positive sizes (height, width)");
	if (!gc_kv_float(x->dtype) || x->rank != 4)
		return gc_kerr(k, GC_EINVAL, "input 'X' must be a 4-D floating-point tensor");
	if (x->dtype == GC_DTYPE_BFLOAT16 && n->opset < 22)
		return gc_kerr(k, GC_EINVAL, "input 'X' of type bfloat16 needs opset 22");
	if (rois->dtype != x->dtype || rois->rank != 2 || rois->dims[1] != 5)
		return gc_kerr(k, GC_EINVAL,
			       "input 'rois' must be (num_rois, 5) of X's type: batch index, x1, "
			       "y1, x2, y2");
	if (!(scale > 0))
		return gc_kerr(k, GC_EINVAL, "attribute 'spatial_scale' must be positive");
	maxroi_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->ph = shape[0];
	p->pw = shape[1];
	p->scale = scale;
	int64_t dims[4] = {rois->dims[0], x->dims[1], p->ph, p->pw};
	gc_set_shape(out[0], x->dtype, 4, dims);
	n->run = run_maxroipool;
	return 0;
}
