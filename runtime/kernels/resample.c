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
 *
 * Resize-18: antialias widens the linear / cubic kernel by 1 / scale when
 * an axis shrinks (weights normalised, as ONNX's reference: the taps stay
 * edge-clamped); axes names the axes scales / sizes / roi give;
 * keep_aspect_ratio_policy not_larger / not_smaller resizes those axes by
 * one scale (min / max of sizes / input), the sizes rounded half up.
 * Resize-19: half_pixel_symmetric centres the half_pixel mapping.
 *
 * Integer outputs are truncated toward zero and saturated, as ONNX's
 * reference (astype) and ONNX Runtime's linear and cubic kernels do.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
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
	CT_TF_HALF_PIXEL_NN,
	CT_HALF_PIXEL_SYMMETRIC
};
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL };

/* One output position along one axis: taps into the input axis (n of
 * them: 2, 4, or more with antialias; idx and w point into the plan). */
typedef struct tap {
	int32_t n; /* 0: write extrapolation_value */
	int64_t *idx;
	double *w;
} tap;

/* One output position of the float fast path: the taps of nonzero weight
 * (w1 == 0: one tap, i1 == i0). */
typedef struct ftap {
	int64_t i0, i1;
	float w0, w1;
} ftap;

/* How a row of the fast path is made from an input row. */
enum { FX_COPY, FX_REPEAT, FX_GATHER, FX_BLEND2, FX_BLEND };

typedef struct resize_plan {
	int32_t rank;
	int64_t idims[GC_MAX_RANK], odims[GC_MAX_RANK];
	bool active[GC_MAX_RANK]; /* axis changes something */
	tap *taps[GC_MAX_RANK];
	double extrapolation;
	int64_t buf_elems; /* per scratch buffer */
	/* float32, nearest or linear, only the last two axes resized: */
	bool fast;
	int fx_kind;	    /* FX_*, along the last axis */
	int64_t fx_rep;	    /* FX_REPEAT: each input repeated fx_rep times */
	ftap *fy, *fx;	    /* taps of the last two axes */
	int64_t fh, fw, fo; /* input rows, input columns, planes */
	tap storage[]; /* the taps, their indices, their weights, the fast path's ftaps */
} resize_plan;

static const char *const mode_names[] = {"nearest", "linear", "cubic"};
static const char *const ct_names[] = {"half_pixel",	      "pytorch_half_pixel",
				       "align_corners",	      "asymmetric",
				       "tf_crop_and_resize",   "tf_half_pixel_for_nn",
				       "half_pixel_symmetric"};
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
	bool exclude_outside, antialias;
} axis_cfg;

/* The antialias filter's scale on an axis of scale s: 1 when it grows. */
static double aa_scale(const axis_cfg *c, double s)
{
	return c->antialias && c->mode != M_NEAREST && s < 1 ? s : 1;
}

/* The taps per output position of an axis of scale s (at most max). */
static int64_t axis_taps(const axis_cfg *c, double s)
{
	double as = aa_scale(c, s);
	if (as == 1)
		return c->mode == M_CUBIC ? 4 : 2;
	double first = floor((c->mode == M_CUBIC ? -2 : -1) / as) + 1;
	return first < -0x1p40 ? INT64_MAX : 2 - 2 * (int64_t)first;
}

/* The antialias weights of the n taps from base + first at ratio r. */
static void aa_weights(const axis_cfg *c, double as, double r, int n, int64_t first, double *w)
{
	double sum = 0, A = c->a;
	for (int i = 0; i < n; i++) {
		double d = fabs(as * ((double)(first + i) - r));
		if (c->mode == M_LINEAR)
			w[i] = d < 1 ? 1 - d : 0;
		else
			w[i] = d <= 1 ? ((A + 2) * d - (A + 3)) * d * d + 1
			       : d < 2 ? (((d - 5) * d + 8) * d - 4) * A
				       : 0;
		sum += w[i];
	}
	for (int i = 0; sum != 0 && i < n; i++)
		w[i] /= sum;
}

/* The taps of output position x of an axis of input length len, scale s,
 * olen output positions, roi [r0, r1] (tf_crop_and_resize only); t->idx
 * and t->w hold axis_taps() entries. */
static void make_tap(const axis_cfg *c, int64_t len, double s, int64_t olen, double x, double r0,
		     double r1, tap *t)
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
	case CT_HALF_PIXEL_SYMMETRIC:
		xo = (double)len / 2 * (1 - (double)olen / ow) + (x + 0.5) / s - 0.5;
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
	double *w = t->w, as = aa_scale(c, s);
	int n;
	int64_t first;
	if (as != 1) {
		n = (int)axis_taps(c, s);
		first = (int64_t)(1 - n / 2);
		aa_weights(c, as, r, n, first, w);
	} else if (c->mode == M_CUBIC) {
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
			gc_kv_store(j->y, i, integer ? trunc(j->a[i]) : j->a[i]);
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

/* ---- float32 fast path: nearest and linear over the last two axes ---- */

enum { RS_SLOTS = 8 }; /* threads (per-thread row buffers) */

/* Output row dst (p->odims[rank - 1] long) from input row s. */
static void fast_hrow(const resize_plan *p, const float *restrict s, float *restrict dst)
{
	const int64_t wo = p->odims[p->rank - 1];
	const ftap *restrict t = p->fx;
	switch (p->fx_kind) {
	case FX_COPY:
		memcpy(dst, s, (size_t)wo * sizeof *dst);
		break;
	case FX_REPEAT:
		if (p->fx_rep == 2) {
			for (int64_t i = 0; i < p->fw; i++)
				dst[2 * i] = dst[2 * i + 1] = s[i];
		} else {
			for (int64_t i = 0; i < p->fw; i++)
				for (int64_t q = 0; q < p->fx_rep; q++)
					dst[i * p->fx_rep + q] = s[i];
		}
		break;
	case FX_GATHER:
		for (int64_t i = 0; i < wo; i++)
			dst[i] = s[t[i].i0];
		break;
	case FX_BLEND2:
		for (int64_t i = 0; i < wo; i++)
			dst[i] = t[i].w0 * s[t[i].i0] + t[i].w1 * s[t[i].i1];
		break;
	default:
		for (int64_t i = 0; i < wo; i++) {
			float v = t[i].w0 * s[t[i].i0];
			if (t[i].w1 != 0)
				v += t[i].w1 * s[t[i].i1];
			dst[i] = v;
		}
	}
}

typedef struct fast_job {
	const resize_plan *p;
	const float *x;
	float *y, *scratch;
} fast_job;

/* Input row `row` (plane * fh + y) made into a row of the output's width:
 * one of the slot's two buffers, computed unless it holds it already, never
 * the one holding `keep`. */
static const float *fast_src(const fast_job *j, float *buf[2], int64_t tag[2], int64_t row,
			     int64_t keep)
{
	for (int b = 0; b < 2; b++)
		if (tag[b] == row)
			return buf[b];
	int b = tag[0] == keep ? 1 : 0;
	fast_hrow(j->p, j->x + row * j->p->fw, buf[b]);
	tag[b] = row;
	return buf[b];
}

/* Output rows [r0, r1) of all planes, rows of each plane in order. */
static void fast_part(void *arg, int part, int parts, int slot)
{
	const fast_job *j = arg;
	const resize_plan *p = j->p;
	const int64_t wo = p->odims[p->rank - 1], ho = p->odims[p->rank - 2];
	int64_t r0, r1;
	gc_nn_part_range(p->fo * ho, part, parts, &r0, &r1);
	float *buf[2] = {j->scratch + (int64_t)slot * 2 * wo, j->scratch + (int64_t)slot * 2 * wo + wo};
	int64_t tag[2] = {-1, -1}, last = -1;
	for (int64_t r = r0; r < r1; r++) {
		const ftap *t = &p->fy[r % ho];
		int64_t plane = r / ho * p->fh;
		float *restrict dst = j->y + r * wo;
		if (t->w1 == 0 && t->w0 == 1) {
			if (last == plane + t->i0)
				memcpy(dst, dst - wo, (size_t)wo * sizeof *dst);
			else
				fast_hrow(p, j->x + (plane + t->i0) * p->fw, dst);
			last = plane + t->i0;
			continue;
		}
		last = -1;
		const float *restrict a = fast_src(j, buf, tag, plane + t->i0, -1);
		const float w0 = t->w0, w1 = t->w1;
		if (w1 == 0) {
			for (int64_t i = 0; i < wo; i++)
				dst[i] = w0 * a[i];
			continue;
		}
		const float *restrict b = fast_src(j, buf, tag, plane + t->i1, plane + t->i0);
		for (int64_t i = 0; i < wo; i++)
			dst[i] = w0 * a[i] + w1 * b[i];
	}
}

static void run_fast(gc_kctx *k, const resize_plan *p, const float *x, float *y)
{
	const int64_t rows = p->fo * p->odims[p->rank - 2], wo = p->odims[p->rank - 1];
	fast_job j = {.p = p, .x = x, .y = y, .scratch = k->scratch};
	double per = p->fx_kind == FX_COPY || p->fx_kind == FX_REPEAT ? 0.5 : 3;
	int t = gc_nn_par_threads(k->threads < RS_SLOTS ? k->threads : RS_SLOTS,
				  per * (double)rows * (double)wo);
	gc_nn_run_parts(t, rows, fast_part, &j);
}

/* The fast path's taps of axis d from the plan's, or false when some
 * position has no tap of nonzero weight. */
static bool fast_taps(const resize_plan *p, int d, ftap *f)
{
	for (int64_t i = 0; i < p->odims[d]; i++) {
		const tap *t = &p->taps[d][i];
		int m = 0;
		int64_t idx[2] = {0, 0};
		float w[2] = {0, 0};
		for (int q = 0; q < t->n; q++)
			if (t->w[q] != 0) {
				if (m == 2)
					return false;
				idx[m] = t->idx[q];
				w[m++] = (float)t->w[q];
			}
		if (m == 0 || w[0] == 0 || (m == 2 && w[1] == 0))
			return false; /* no tap, or a weight too small for float */
		f[i] = (ftap){idx[0], m == 2 ? idx[1] : idx[0], w[0], m == 2 ? w[1] : 0};
	}
	return true;
}

/* Sets up the fast path when it applies (taps made; storage for
 * odims[rank - 2] + odims[rank - 1] ftaps after them at f). */
static void fast_plan(resize_plan *p, int mode, gc_dtype dt, ftap *f)
{
	int r = p->rank;
	p->fast = false;
	if (dt != GC_DTYPE_FLOAT || r < 2 || mode == M_CUBIC || p->idims[r - 2] < 1 ||
	    p->idims[r - 1] < 1)
		return;
	for (int d = 0; d < r - 2; d++)
		if (p->active[d])
			return;
	p->fy = f;
	p->fx = f + p->odims[r - 2];
	if (!fast_taps(p, r - 2, p->fy) || !fast_taps(p, r - 1, p->fx))
		return;
	p->fh = p->idims[r - 2];
	p->fw = p->idims[r - 1];
	p->fo = 1;
	for (int d = 0; d < r - 2; d++)
		p->fo *= p->idims[d];
	const int64_t wo = p->odims[r - 1];
	bool gather = true, both = true, copy = wo == p->fw, rep = wo % (p->fw ? p->fw : 1) == 0;
	int64_t k = p->fw ? wo / p->fw : 0;
	for (int64_t i = 0; i < wo; i++) {
		const ftap *t = &p->fx[i];
		gather = gather && t->w1 == 0 && t->w0 == 1;
		both = both && t->w1 != 0;
		copy = copy && t->i0 == i;
		rep = rep && t->i0 == i / k;
	}
	p->fx_kind = !gather ? (both ? FX_BLEND2 : FX_BLEND)
		     : copy  ? FX_COPY
		     : rep   ? FX_REPEAT
			     : FX_GATHER;
	p->fx_rep = k;
	p->fast = true;
}

static int run_resize(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const resize_plan *p = n->state;
	if (p->fast) {
		run_fast(k, p, in[0]->data, out[0]->data);
		return 0;
	}
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

/* The attributes of a Resize / Upsample node into c (and the policy). */
static int resample_attrs(gc_kctx *k, const gc_node *n, bool upsample, axis_cfg *c,
			  double *extrapolation, int *policy)
{
	static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
	bool v11 = !upsample && n->opset >= 11;
	c->mode = pick(k, "mode", gc_attr_s(k, "mode", "nearest"), mode_names, 3);
	if (c->mode < 0)
		return gc_kok(k);
	if (c->mode == M_CUBIC && !v11)
		return gc_kerr(k, GC_EINVAL, "mode 'cubic' needs Resize from opset 11");
	if (v11) {
		const char *ct = gc_attr_s(k, "coordinate_transformation_mode", "half_pixel");
		c->ct = pick(k, "coordinate_transformation_mode", ct, ct_names, 7);
		if (c->ct < 0)
			return gc_kok(k);
		if (c->ct == CT_TF_HALF_PIXEL_NN && n->opset >= 13)
			return gc_kerr(k, GC_EUNSUPPORTED, "attribute '%s' = '%s' is not supported",
				       "coordinate_transformation_mode", ct);
		if (c->ct == CT_HALF_PIXEL_SYMMETRIC && n->opset < 19)
			return gc_kerr(k, GC_EINVAL, "coordinate_transformation_mode "
				       "'half_pixel_symmetric' needs Resize from opset 19");
		c->nm = pick(k, "nearest_mode", gc_attr_s(k, "nearest_mode", "round_prefer_floor"),
			     nm_names, 4);
		if (c->nm < 0)
			return gc_kok(k);
		c->a = gc_attr_f(k, "cubic_coeff_a", -0.75f);
		c->exclude_outside = gc_attr_i(k, "exclude_outside", 0) != 0;
		*extrapolation = gc_attr_f(k, "extrapolation_value", 0.0f);
	}
	if (!upsample && n->opset >= 18) {
		c->antialias = gc_attr_i(k, "antialias", 0) != 0;
		*policy = pick(k, "keep_aspect_ratio_policy",
			       gc_attr_s(k, "keep_aspect_ratio_policy", "stretch"), policies, 3);
	}
	return gc_kok(k);
}

/* Resize-18's axes into ax (n of them; all axes without the attribute). */
static int resample_axes(gc_kctx *k, const gc_node *n, int r, int32_t *ax, int *count)
{
	*count = r;
	for (int i = 0; i < r; i++)
		ax[i] = i;
	if (n->opset < 18 || !gc_attr_find(n, "axes"))
		return 0;
	const int64_t *v;
	int64_t m = gc_attr_ints(k, "axes", &v);
	if (gc_kok(k))
		return gc_kok(k);
	if (m < 1 || m > r)
		return gc_kerr(k, GC_EINVAL, "attribute 'axes' has %" PRId64 " values for rank %d",
			       m, r);
	bool seen[GC_MAX_RANK] = {false};
	for (int i = 0; i < m; i++) {
		if (gc_axis(k, v[i], r, &ax[i]))
			return gc_kok(k);
		if (seen[ax[i]])
			return gc_kerr(k, GC_EINVAL, "attribute 'axes' repeats axis %d", ax[i]);
		seen[ax[i]] = true;
	}
	*count = (int)m;
	return 0;
}

/* What the node resizes to: output dims, each axis' scale and roi (rank
 * entries each, the roi as starts then ends). */
typedef struct resample_target {
	int64_t odims[GC_MAX_RANK];
	double scales[GC_MAX_RANK], roi[2 * GC_MAX_RANK];
} resample_target;

/* Reads scales / sizes / roi (of the nax axes ax) into tg. */
static int resample_target_of(gc_kctx *k, const gc_node *n, gc_tensor *const *in, bool upsample,
			      const axis_cfg *c, int policy, const int32_t *ax, int nax,
			      resample_target *tg)
{
	const gc_tensor *x = in[0];
	bool v11 = !upsample && n->opset >= 11;
	int r = x->rank;
	double sc[GC_MAX_RANK], roi[2 * GC_MAX_RANK];
	int64_t sizes[GC_MAX_RANK], cnt = 0;
	bool have_sizes = false, have_scales = false;
	for (int i = 0; i < r; i++) {
		tg->roi[i] = 0;
		tg->roi[r + i] = 1;
		tg->scales[i] = 1;
		tg->odims[i] = x->dims[i];
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
			sc[i] = f[i];
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
	char per[32]; /* what scales / sizes count for */
	snprintf(per, sizeof per, gc_attr_find(n, "axes") ? "for %d axes" : "for rank %d", nax);
	if (ts && gc_tensor_numel(ts) > 0) {
		if (const_floats(k, ts, "scales", sc, GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != nax)
			return gc_kerr(k, GC_EINVAL, "input 'scales' has %" PRId64 " values %s", cnt,
				       per);
		have_scales = true;
	}
	if (tz && gc_tensor_numel(tz) > 0) {
		if (have_scales)
			return gc_kerr(k, GC_EINVAL, "give 'scales' or 'sizes', not both");
		if (gc_const_ints(k, tz, "sizes", sizes, GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != nax)
			return gc_kerr(k, GC_EINVAL, "input 'sizes' has %" PRId64 " values %s", cnt,
				       per);
		have_sizes = true;
	}
	if (!have_scales && !have_sizes)
		return gc_kerr(k, GC_EINVAL, "one of 'scales' and 'sizes' must be given");
	if (c->ct == CT_TF_CROP) {
		if (!troi)
			return gc_kerr(k, GC_EINVAL, "tf_crop_and_resize needs input 'roi'");
		if (const_floats(k, troi, "roi", roi, 2 * GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != 2 * nax)
			return gc_kerr(k, GC_EINVAL,
				       "input 'roi' has %" PRId64 " values; expected %d", cnt,
				       2 * nax);
		for (int i = 0; i < nax; i++) {
			tg->roi[ax[i]] = roi[i];
			tg->roi[r + ax[i]] = roi[nax + i];
		}
	}
	double keep = 0; /* keep_aspect_ratio_policy's one scale */
	for (int i = 0; have_sizes && policy && i < nax; i++) {
		int64_t len = x->dims[ax[i]];
		if (sizes[i] < 0)
			return gc_kerr(k, GC_EINVAL, "output size %" PRId64 " of axis %d is negative",
				       sizes[i], ax[i]);
		double q = len ? (double)sizes[i] / (double)len : 1;
		keep = i == 0 ? q : policy == 1 ? fmin(keep, q) : fmax(keep, q);
	}
	for (int i = 0; i < nax; i++) {
		int d = ax[i];
		int64_t len = x->dims[d];
		if (have_sizes && policy) {
			tg->scales[d] = keep;
			tg->odims[d] = (int64_t)(keep * (double)len + 0.5);
		} else if (have_sizes) {
			tg->odims[d] = sizes[i];
			tg->scales[d] = len ? (double)sizes[i] / (double)len : 1;
		} else {
			if (!(sc[i] > 0))
				return gc_kerr(k, GC_EINVAL, "scale %g of axis %d is not positive",
					       sc[i], d);
			double od = sc[i] * (double)len;
			if (!gc_float_in(od, 0, 0x1p62))
				return gc_kerr(k, GC_ELIMIT,
					       "scale %g makes axis %d of size %" PRId64
					       " %g long, too large to hold",
					       sc[i], d, len, od);
			tg->scales[d] = sc[i];
			tg->odims[d] = (int64_t)od;
		}
		if (tg->odims[d] < 0)
			return gc_kerr(k, GC_EINVAL,
				       "output size %" PRId64 " of axis %d is negative", tg->odims[d],
				       d);
	}
	return 0;
}

static int prepare_resample(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			    bool upsample)
{
	const gc_tensor *x = in[0];
	axis_cfg c = {M_NEAREST, CT_ASYMMETRIC, NM_FLOOR, -0.75, false, false};
	double extrapolation = 0;
	int policy = 0;
	if (resample_attrs(k, n, upsample, &c, &extrapolation, &policy))
		return gc_kok(k);
	if (!gc_kv_numeric(x->dtype) || x->dtype == GC_DTYPE_BOOL)
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'X' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input 'X' must have rank >= 1");
	int r = x->rank, nax;
	int32_t ax[GC_MAX_RANK];
	resample_target tg;
	if (resample_axes(k, n, r, ax, &nax) ||
	    resample_target_of(k, n, in, upsample, &c, policy, ax, nax, &tg))
		return gc_kok(k);
	const int64_t *odims = tg.odims;
	const double *scales = tg.scales, *roi = tg.roi;
	/* the taps below and the scratch are sized by the output */
	if (gc_kout_fits(k, 0, x->dtype, r, odims))
		return gc_kok(k);
	uint64_t room =
	    gc_limit_bytes() / (sizeof(tap) + sizeof(ftap) + sizeof(int64_t) + sizeof(double));
	int64_t taps_total = 0, weights_total = 0;
	for (int i = 0; i < r; i++) {
		int64_t nt = axis_taps(&c, scales[i]), w;
		if (odims[i] == 0)
			continue;
		if (nt > INT32_MAX || (uint64_t)nt > room || !gc_mul_i64(nt, odims[i], &w) ||
		    !gc_add_i64(weights_total, w, &weights_total) ||
		    !gc_add_i64(taps_total, odims[i], &taps_total) ||
		    (uint64_t)weights_total > room)
			return gc_kerr(k, GC_ELIMIT,
				       "the output's axes need more interpolation taps than the "
				       "limit of %" PRIu64 " bytes allows (" GC_LIMIT_SETTING ")",
				       gc_limit_bytes());
	}
	/* taps_total taps and ftaps (the fast path's), weights_total indices and weights */
	resize_plan *p = gc_kstate(k, n, sizeof *p + (size_t)taps_total * (sizeof(tap) + sizeof(ftap)) +
						 (size_t)weights_total * (sizeof(int64_t) + sizeof(double)));
	if (!p)
		return gc_kok(k);
	p->rank = r;
	p->extrapolation = extrapolation;
	memcpy(p->idims, x->dims, sizeof p->idims);
	memcpy(p->odims, odims, sizeof p->odims);
	tap *t = p->storage;
	int64_t *idx = (int64_t *)(p->storage + taps_total);
	double *wts = (double *)(idx + weights_total);
	int64_t cur[GC_MAX_RANK], biggest = gc_tensor_numel(x);
	memcpy(cur, x->dims, sizeof cur);
	for (int d = r - 1; d >= 0; d--) {
		p->taps[d] = t;
		int64_t nt = axis_taps(&c, scales[d]);
		bool identity = odims[d] == x->dims[d];
		for (int64_t i = 0; i < odims[d]; i++, t++, idx += nt, wts += nt) {
			t->idx = idx;
			t->w = wts;
			make_tap(&c, x->dims[d], scales[d], odims[d], (double)i, roi[d], roi[r + d],
				 t);
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
	fast_plan(p, c.mode, x->dtype, (ftap *)(void *)wts);
	if (p->fast)
		n->scratch_bytes = RS_SLOTS * 2 * (uint64_t)(odims[r - 1] ? odims[r - 1] : 1) * sizeof(float);
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

/* ---- GridSample (opset 16) ------------------------------------------------ */

/*
 * As PyTorch's grid_sample, which ONNX's tests come from: grid holds (x, y)
 * in [-1, 1]; unnormalised with align_corners; padding "zeros" reads 0
 * outside, "border" clamps, "reflection" reflects the coordinate (for
 * bicubic: each tap's coordinate). Bicubic uses A = -0.75.
 */
enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GP_ZEROS, GP_BORDER, GP_REFLECTION };

typedef struct gs_plan {
	int mode, pad;
	bool align;
} gs_plan;

/* The pixel coordinate of grid value c. Far outside (and NaN: nowhere)
 * becomes +-2^40, where every padding mode gives what it gives far
 * outside, and the tap indices stay well inside int64. */
static double gs_unnorm(double c, int64_t size, bool align)
{
	c = align ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * (double)size - 1) / 2;
	return gc_float_in(c, -0x1p40, 0x1p40) ? c : c > 0 ? 0x1p40 : -0x1p40;
}

static double gs_reflect(double c, double twice_lo, double twice_hi)
{
	if (twice_lo == twice_hi)
		return 0;
	double mn = twice_lo / 2, span = (twice_hi - twice_lo) / 2;
	c = fabs(c - mn);
	double extra = fmod(c, span);
	int64_t flips = (int64_t)floor(c / span);
	return flips % 2 == 0 ? extra + mn : span - extra + mn;
}

static double gs_pad(const gs_plan *p, double c, int64_t size)
{
	if (p->pad == GP_BORDER) {
		c = c < 0 ? 0 : c > (double)(size - 1) ? (double)(size - 1) : c;
	} else if (p->pad == GP_REFLECTION) {
		c = p->align ? gs_reflect(c, 0, 2.0 * (double)(size - 1))
			     : gs_reflect(c, -1, 2.0 * (double)size - 1);
		c = c < 0 ? 0 : c > (double)(size - 1) ? (double)(size - 1) : c;
	}
	return c;
}

static double gs_at(const gc_tensor *x, int64_t base, int64_t h, int64_t w, int64_t iy, int64_t ix)
{
	if (iy < 0 || iy >= h || ix < 0 || ix >= w)
		return 0;
	return gc_kv_load(x, base + iy * w + ix);
}

static void gs_cubic(double t, double *c)
{
	const double A = -0.75;
	double x = t + 1;
	c[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
	x = 1 - t;
	c[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
	x = 2 - t;
	c[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

static int run_gridsample(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const gs_plan *p = n->state;
	const gc_tensor *x = in[0], *g = in[1];
	int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
	int64_t Ho = g->dims[1], Wo = g->dims[2];
	for (int64_t b = 0; b < N; b++)
		for (int64_t oy = 0; oy < Ho; oy++)
			for (int64_t ox = 0; ox < Wo; ox++) {
				int64_t gi = ((b * Ho + oy) * Wo + ox) * 2;
				double fx = gs_unnorm(gc_kv_load(g, gi), W, p->align);
				double fy = gs_unnorm(gc_kv_load(g, gi + 1), H, p->align);
				for (int64_t c = 0; c < C; c++) {
					int64_t base = (b * C + c) * H * W;
					double v;
					if (p->mode == GS_BICUBIC) {
						double x0 = floor(fx), y0 = floor(fy), cx[4], cy[4];
						gs_cubic(fx - x0, cx);
						gs_cubic(fy - y0, cy);
						v = 0;
						for (int i = 0; i < 4; i++)
							for (int j = 0; j < 4; j++) {
								double tx =
								    gs_pad(p, x0 - 1 + j, W);
								double ty =
								    gs_pad(p, y0 - 1 + i, H);
								v +=
								    cy[i] * cx[j] *
								    gs_at(x, base, H, W,
									  (int64_t)ty, (int64_t)tx);
							}
					} else {
						double px = gs_pad(p, fx, W), py = gs_pad(p, fy, H);
						if (p->mode == GS_NEAREST) {
							v = gs_at(x, base, H, W,
								  (int64_t)nearbyint(py),
								  (int64_t)nearbyint(px));
						} else {
							double x0 = floor(px), y0 = floor(py);
							double tx = px - x0, ty = py - y0;
							int64_t ix = (int64_t)x0, iy = (int64_t)y0;
							v = (1 - ty) *
								((1 - tx) *
								     gs_at(x, base, H, W, iy, ix) +
								 tx * gs_at(x, base, H, W, iy,
									    ix + 1)) +
							    ty * ((1 - tx) * gs_at(x, base, H, W,
										   iy + 1, ix) +
								  tx * gs_at(x, base, H, W, iy + 1,
									     ix + 1));
						}
					}
					gc_kv_store(out[0], ((b * C + c) * Ho + oy) * Wo + ox, v);
				}
			}
	return 0;
}

int gc_prepare_GridSample(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
	static const char *const pads[] = {"zeros", "border", "reflection"};
	const gc_tensor *x = in[0], *g = in[1];
	int mode = pick(k, "mode", gc_attr_s(k, "mode", "bilinear"), modes, 3);
	if (mode < 0)
		return gc_kok(k);
	int pad = pick(k, "padding_mode", gc_attr_s(k, "padding_mode", "zeros"), pads, 3);
	if (pad < 0)
		return gc_kok(k);
	int64_t align = gc_attr_i(k, "align_corners", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype) || !gc_kv_float(g->dtype))
		return gc_kerr(k, GC_EINVAL, "inputs 'X' and 'grid' must be floating-point");
	if (x->rank != 4 || g->rank != 4 || g->dims[0] != x->dims[0] || g->dims[3] != 2)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "needs X (N, C, H, W) and grid (N, H_out, W_out, 2) (2-D sampling)");
	gs_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->mode = mode;
	p->pad = pad;
	p->align = align != 0;
	int64_t dims[4] = {x->dims[0], x->dims[1], g->dims[1], g->dims[2]};
	gc_set_shape(out[0], x->dtype, 4, dims);
	n->run = run_gridsample;
	return 0;
}
