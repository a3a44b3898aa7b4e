/*
 * Resize (opsets 10, 11, 13) and Upsample (7, 9), as ONNX's reference
 * computes them: every output coordinate is mapped to an input coordinate
 * (coordinate_transformation_mode), whose 2 (nearest, linear) or 4 (cubic)
 * nearest input positions, clamped to the edge, are weighted. The reference
 * interpolates axis by axis (the last axis first); since each axis' weights
 * depend only on that axis, the kernel does the same as one 1-D pass per
 * axis that changes, in double. tf_crop_and_resize writes
 * extrapolation_value where the mapped coordinate leaves the input.
 *
 * Opset 10 Resize and Upsample: asymmetric coordinates, nearest rounds
 * down. Scales and sizes must be known when the program is built.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "../fileio.h"
#include "kutil.h"
#include "nn-par.h"
#include "resample.h"
#include "value-impl.h"

enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum {
	CT_HALF_PIXEL,
	CT_PYTORCH_HALF_PIXEL,
	CT_ALIGN_CORNERS,
	CT_ASYMMETRIC,
	CT_TF_CROP,
	CT_TF_HALF_PIXEL_NN
};
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };

/* One output position along one axis: taps into the input axis. */
typedef struct tap {
	int32_t n; /* 0: write extrapolation_value */
	int64_t idx[4];
	double w[4];
} tap;

typedef struct resize_plan {
	int32_t rank;
	int64_t idims[GC_MAX_RANK], odims[GC_MAX_RANK];
	bool active[GC_MAX_RANK]; /* axis changes something */
	tap *taps[GC_MAX_RANK];
	double extrapolation;
	int64_t buf_elems; /* per scratch buffer */
	tap storage[];
} resize_plan;

static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const ct_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners",
				       "asymmetric", "tf_crop_and_resize", "tf_half_pixel_for_nn"};
static const char *const nm_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

static int pick(gc_kctx *k, const char *attr, const char *v, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v, names[i]))
			return i;
	gc_kerr(k, GC_EUNSUPPORTED, "attribute '%s' = '%s' is not supported", attr, v);
	return -1;
}

typedef struct axis_cfg {
	int mode, ct, nm;
	double a; /* cubic_coeff_a */
	bool exclude_outside;
} axis_cfg;

/* The taps of output position x of an axis of input length len, scale s,
 * roi [r0, r1] (tf_crop_and_resize only). */
static void make_tap(const axis_cfg *c, int64_t len, double s, double x, double r0, double r1,
		     tap *t)
{
	double ow = s * (double)len, xo;
	switch (c->ct) {
	case CT_ALIGN_CORNERS:
		xo = ow == 1 ? 0 : x * (double)(len - 1) / (ow - 1);
		break;
	case CT_ASYMMETRIC:
		xo = x / s;
		break;
	case CT_TF_CROP:
		xo = ow == 1 ? (r1 - r0) * (double)(len - 1) / 2
			     : x * (r1 - r0) * (double)(len - 1) / (ow - 1);
		xo += r0 * (double)(len - 1);
		if (xo < 0 || xo > (double)(len - 1)) {
			t->n = 0;
			return;
		}
		break;
	case CT_PYTORCH_HALF_PIXEL:
		xo = ow == 1 ? -0.5 : (x + 0.5) / s - 0.5;
		break;
	case CT_TF_HALF_PIXEL_NN:
		xo = (x + 0.5) / s;
		break;
	default:
		xo = (x + 0.5) / s - 0.5;
		break;
	}
	/* A roi of NaN or far outside maps nowhere (tf_crop_and_resize:
	 * extrapolate); the tap indices must stay inside int64. */
	if (!gc_float_in(xo, -0x1p40, 0x1p40)) {
		if (c->ct == CT_TF_CROP || xo != xo) {
			t->n = 0;
			return;
		}
		xo = xo > 0 ? 0x1p40 : -0x1p40;
	}
	/* the reference prefers the left pixel: ratio in (0, 1] */
	double fl = floor(xo);
	bool integer = xo == fl;
	double base = integer ? xo - 1 : fl, r = xo - base;
	double w[4];
	int n, first;
	if (c->mode == M_CUBIC) {
		double A = c->a, r1p = r + 1, q = 1 - r, q1 = q + 1;
		w[0] = ((A * r1p - 5 * A) * r1p + 8 * A) * r1p - 4 * A;
		w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
		w[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
		w[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
		n = 4;
		first = -1;
	} else if (c->mode == M_LINEAR) {
		w[0] = 1 - r;
		w[1] = r;
		n = 2;
		first = 0;
	} else {
		bool right;
		if (integer)
			right = true;
		else if (c->nm == NM_ROUND_PREFER_FLOOR)
			right = r > 0.5;
		else if (c->nm == NM_ROUND_PREFER_CEIL)
			right = r >= 0.5;
		else
			right = c->nm == NM_CEIL;
		w[0] = right ? 0 : 1;
		w[1] = right ? 1 : 0;
		n = 2;
		first = 0;
	}
	double sum = 0;
	for (int i = 0; i < n; i++) {
		int64_t ix = (int64_t)base + first + i;
		if (c->exclude_outside && (ix < 0 || ix >= len))
			w[i] = 0;
		sum += w[i];
		t->idx[i] = ix < 0 ? 0 : ix >= len ? len - 1 : ix;
	}
	for (int i = 0; i < n; i++)
		t->w[i] = c->exclude_outside && sum != 0 ? w[i] / sum : w[i];
	t->n = n;
}

/* One pass of a resize over items [i0, i1): loading the input into doubles,
 * one axis (items are the rows outer x output position), or storing. */
typedef struct resize_job {
	const resize_plan *p;
	const gc_tensor *x;
	gc_tensor *y;
	const double *a;
	double *b;
	int phase; /* -1 load, -2 store, else the axis */
	int64_t items, il, ol, inner;
} resize_job;

static void resize_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const resize_job *j = arg;
	const resize_plan *p = j->p;
	int64_t i0, i1;
	gc_nn_part_range(j->items, part, parts, &i0, &i1);
	if (j->phase == -1) {
		for (int64_t i = i0; i < i1; i++)
			j->b[i] = gc_kv_load(j->x, i);
		return;
	}
	if (j->phase == -2) {
		bool integer = !gc_kv_float(j->y->dtype);
		for (int64_t i = i0; i < i1; i++)
			gc_kv_store(j->y, i, integer ? rint(j->a[i]) : j->a[i]);
		return;
	}
	const tap *taps = p->taps[j->phase];
	const int64_t il = j->il, ol = j->ol, inner = j->inner;
	for (int64_t r = i0; r < i1; r++) {
		int64_t o = r / ol, xo = r % ol;
		const tap *t = &taps[xo];
		double *dst = j->b + r * inner;
		if (t->n == 0) {
			for (int64_t e = 0; e < inner; e++)
				dst[e] = p->extrapolation;
			continue;
		}
		for (int64_t e = 0; e < inner; e++) {
			double s = 0;
			for (int q = 0; q < t->n; q++)
				if (t->w[q] != 0)
					s += t->w[q] * j->a[(o * il + t->idx[q]) * inner + e];
			dst[e] = s;
		}
	}
}

/* Runs the pass over up to `threads` threads when it is large enough. */
static void resize_pass(int threads, resize_job *j, double cycles)
{
	int t = gc_nn_par_threads(threads, cycles);
	if (t <= 1 || j->items < 2)
		resize_part(j, 0, 1, 0);
	else
		gc_nn_parallel(t, gc_nn_par_parts(t, j->items), resize_part, j);
}

static int run_resize(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const resize_plan *p = n->state;
	double *a = k->scratch, *b = a + p->buf_elems;
	resize_job j = {.p = p, .x = in[0], .y = out[0], .b = a, .phase = -1};
	j.items = gc_tensor_numel(in[0]);
	resize_pass(k->threads, &j, 2.0 * (double)j.items);
	int64_t cur[GC_MAX_RANK];
	memcpy(cur, p->idims, sizeof cur);
	for (int d = p->rank - 1; d >= 0; d--) {
		if (!p->active[d])
			continue;
		int64_t outer = 1, inner = 1;
		for (int i = 0; i < d; i++)
			outer *= cur[i];
		for (int i = d + 1; i < p->rank; i++)
			inner *= cur[i];
		j.phase = d;
		j.a = a;
		j.b = b;
		j.il = cur[d];
		j.ol = p->odims[d];
		j.inner = inner;
		j.items = outer * j.ol;
		resize_pass(k->threads, &j, 8.0 * (double)j.items * (double)inner);
		cur[d] = j.ol;
		double *tmp = a;
		a = b;
		b = tmp;
	}
	j.phase = -2;
	j.a = a;
	j.items = gc_tensor_numel(out[0]);
	resize_pass(k->threads, &j, 2.0 * (double)j.items);
	return 0;
}

/* Reads a float tensor known at build time into v (max entries). */
static int const_floats(gc_kctx *k, const gc_tensor *t, const char *what, double *v, int64_t max,
			int64_t *count)
{
	if (!gc_kv_float(t->dtype))
		return gc_kerr(k, GC_EINVAL, "input '%s' must be a floating-point tensor, not %s",
			       what, gc_dtype_name(t->dtype));
	if (!t->data)
		return gc_kneed_value(k,
			       "input '%s' must be known when the program is built (a constant or "
			       "a given input value)",
			       what);
	int64_t c = gc_tensor_numel(t);
	if (c > max)
		return gc_kerr(k, GC_EINVAL, "input '%s' has %" PRId64 " values; at most %" PRId64,
			       what, c, max);
	for (int64_t i = 0; i < c; i++)
		v[i] = gc_kv_load(t, i);
	*count = c;
	return 0;
}

static int prepare_resample(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			    bool upsample)
{
	const gc_tensor *x = in[0];
	axis_cfg c = {M_NEAREST, CT_ASYMMETRIC, NM_FLOOR, -0.75, false};
	bool v11 = !upsample && n->opset >= 11;
	double extrapolation = 0;
	c.mode = pick(k, "mode", gc_attr_s(k, "mode", "nearest"), mode_names, 3);
	if (c.mode < 0)
		return gc_kok(k);
	if (c.mode == M_CUBIC && !v11)
		return gc_kerr(k, GC_EINVAL, "mode 'cubic' needs Resize from opset 11");
	if (v11) {
		c.ct = pick(k, "coordinate_transformation_mode",
			    gc_attr_s(k, "coordinate_transformation_mode", "half_pixel"), ct_names,
			    n->opset >= 13 ? 5 : 6);
		if (c.ct < 0)
			return gc_kok(k);
		c.nm = pick(k, "nearest_mode", gc_attr_s(k, "nearest_mode", "round_prefer_floor"),
			    nm_names, 4);
		if (c.nm < 0)
			return gc_kok(k);
		c.a = gc_attr_f(k, "cubic_coeff_a", -0.75f);
		c.exclude_outside = gc_attr_i(k, "exclude_outside", 0) != 0;
		extrapolation = gc_attr_f(k, "extrapolation_value", 0.0f);
	}
	if (!upsample && n->opset >= 18) {
		if (gc_attr_i(k, "antialias", 0) != 0)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "attribute 'antialias' (Resize-18) is not supported");
		if (strcmp(gc_attr_s(k, "keep_aspect_ratio_policy", "stretch"), "stretch"))
			return gc_kerr(k, GC_EUNSUPPORTED, "attribute 'keep_aspect_ratio_policy' "
				       "(Resize-18) other than 'stretch' is not supported");
		if (gc_attr_find(n, "axes"))
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "attribute 'axes' (Resize-18) is not supported");
	}
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_numeric(x->dtype) || x->dtype == GC_DTYPE_BOOL)
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'X' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	if (c.mode != M_NEAREST && !gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "mode '%s' on %s input is not supported",
			       mode_names[c.mode], gc_dtype_name(x->dtype));
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input 'X' must have rank >= 1");
	int r = x->rank;
	double scales[GC_MAX_RANK], roi[2 * GC_MAX_RANK];
	int64_t sizes[GC_MAX_RANK], cnt = 0;
	bool have_sizes = false, have_scales = false;
	for (int i = 0; i < r; i++) {
		roi[i] = 0;
		roi[r + i] = 1;
	}
	const gc_tensor *ts = NULL, *tz = NULL, *troi = NULL;
	if (upsample && n->opset < 9) {
		const float *f;
		int64_t m = gc_attr_floats(k, "scales", &f);
		if (gc_kok(k))
			return gc_kok(k);
		if (m != r)
			return gc_kerr(k, GC_EINVAL,
				       "attribute 'scales' has %" PRId64 " values for rank %d", m,
				       r);
		for (int i = 0; i < r; i++)
			scales[i] = f[i];
		have_scales = true;
	} else if (!v11) {
		if (n->n_in < 2 || !in[1])
			return gc_kerr(k, GC_EINVAL, "input 'scales' is missing");
		ts = in[1];
	} else {
		troi = n->n_in > 1 ? in[1] : NULL;
		ts = n->n_in > 2 ? in[2] : NULL;
		tz = n->n_in > 3 ? in[3] : NULL;
	}
	if (ts && gc_tensor_numel(ts) > 0) {
		if (const_floats(k, ts, "scales", scales, GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != r)
			return gc_kerr(k, GC_EINVAL,
				       "input 'scales' has %" PRId64 " values for rank %d", cnt, r);
		have_scales = true;
	}
	if (tz && gc_tensor_numel(tz) > 0) {
		if (have_scales)
			return gc_kerr(k, GC_EINVAL, "give 'scales' or 'sizes', not both");
		if (gc_const_ints(k, tz, "sizes", sizes, GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != r)
			return gc_kerr(k, GC_EINVAL,
				       "input 'sizes' has %" PRId64 " values for rank %d", cnt, r);
		have_sizes = true;
	}
	if (!have_scales && !have_sizes)
		return gc_kerr(k, GC_EINVAL, "one of 'scales' and 'sizes' must be given");
	if (c.ct == CT_TF_CROP) {
		if (!troi)
			return gc_kerr(k, GC_EINVAL, "tf_crop_and_resize needs input 'roi'");
		if (const_floats(k, troi, "roi", roi, 2 * GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != 2 * r)
			return gc_kerr(k, GC_EINVAL,
				       "input 'roi' has %" PRId64 " values; expected %d", cnt,
				       2 * r);
	}
	int64_t odims[GC_MAX_RANK], taps_total = 0;
	for (int i = 0; i < r; i++) {
		if (have_sizes) {
			odims[i] = sizes[i];
			scales[i] = x->dims[i] ? (double)sizes[i] / (double)x->dims[i] : 1;
		} else {
			if (!(scales[i] > 0))
				return gc_kerr(k, GC_EINVAL, "scale %g of axis %d is not positive",
					       scales[i], i);
			double od = scales[i] * (double)x->dims[i];
			if (!gc_float_in(od, 0, 0x1p62))
				return gc_kerr(k, GC_ELIMIT,
					       "scale %g makes axis %d of size %" PRId64
					       " %g long, too large to hold",
					       scales[i], i, x->dims[i], od);
			odims[i] = (int64_t)od;
		}
		if (odims[i] < 0)
			return gc_kerr(k, GC_EINVAL,
				       "output size %" PRId64 " of axis %d is negative", odims[i],
				       i);
		if (!gc_add_i64(taps_total, odims[i], &taps_total))
			return gc_kerr(k, GC_ELIMIT, "the output's axes are too long to hold");
	}
	/* the taps below and the scratch are sized by the output */
	if (gc_kout_fits(k, 0, x->dtype, r, odims))
		return gc_kok(k);
	if ((uint64_t)taps_total > gc_limit_bytes() / sizeof(tap))
		return gc_kerr(k, GC_ELIMIT,
			       "the output's axes need %" PRId64 " interpolation taps, over the "
			       "limit of %" PRIu64 " bytes (" GC_LIMIT_SETTING ")",
			       taps_total, gc_limit_bytes());
	resize_plan *p = gc_kstate(k, n, sizeof *p + (size_t)taps_total * sizeof(tap));
	if (!p)
		return gc_kok(k);
	p->rank = r;
	p->extrapolation = extrapolation;
	memcpy(p->idims, x->dims, sizeof p->idims);
	memcpy(p->odims, odims, sizeof p->odims);
	tap *t = p->storage;
	int64_t cur[GC_MAX_RANK], biggest = gc_tensor_numel(x);
	memcpy(cur, x->dims, sizeof cur);
	for (int d = r - 1; d >= 0; d--) {
		p->taps[d] = t;
		bool identity = odims[d] == x->dims[d];
		for (int64_t i = 0; i < odims[d]; i++, t++) {
			make_tap(&c, x->dims[d], scales[d], (double)i, roi[d], roi[r + d], t);
			bool same = t->n > 0;
			for (int q = 0; same && q < t->n; q++)
				same = t->w[q] == 0 || (t->w[q] == 1 && t->idx[q] == i);
			identity = identity && same;
		}
		p->active[d] = !identity;
		if (p->active[d]) {
			cur[d] = odims[d];
			int64_t e = 1;
			for (int i = 0; i < r; i++)
				if (!gc_mul_i64(e, cur[i], &e) ||
				    (uint64_t)e > gc_limit_bytes() / (2 * sizeof(double)))
					return gc_kerr(k, GC_ELIMIT,
						       "resizing axis by axis needs a buffer over the "
						       "limit of %" PRIu64 " bytes (" GC_LIMIT_SETTING ")",
						       gc_limit_bytes());
			biggest = e > biggest ? e : biggest;
		}
	}
	p->buf_elems = biggest > 0 ? biggest : 1;
	n->scratch_bytes = 2 * (uint64_t)p->buf_elems * sizeof(double);
	gc_set_shape(out[0], x->dtype, r, odims);
	n->run = run_resize;
	return 0;
}

int gc_prepare_Resize(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_resample(k, n, in, out, false);
}

int gc_prepare_Upsample(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_resample(k, n, in, out, true);
}
