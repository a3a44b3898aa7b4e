/*
 * AffineGrid (opset 20) and GridSample (opsets 16, 20, 22).
 *
 * GridSample as PyTorch's grid_sample, which ONNX's tests and ONNX Runtime
 * follow: grid holds normalised coordinates in [-1, 1], component i for
 * spatial axis r-1-i (x for the last); unnormalised with align_corners;
 * padding "zeros" reads 0 outside, "border" clamps, "reflection" reflects.
 * Nearest and linear pad the coordinate, then round or take the 2 taps per
 * axis; cubic (A = -0.75) pads each of its 4 taps per axis. Opset 16 takes
 * 4-D X with modes bilinear, nearest, bicubic; from 20 the modes are
 * linear, nearest, cubic and X is (N, C, D1..Dr) with r >= 1 (cubic: r <=
 * 3). Every output point's taps (flat offset, weight) are computed once
 * and applied to all channels; points split over the nn-par pool.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kutil.h"
#include "nn-par.h"
#include "resample.h"
#include "value-impl.h"

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GP_ZEROS, GP_BORDER, GP_REFLECTION };

#define GS_MAX_R (GC_MAX_RANK - 2)
#define GS_MAX_TAPS 64

typedef struct gs_state {
	int mode, pad, r;
	bool align;
	int64_t N, C, in_sp, out_sp;
	int64_t in[GS_MAX_R], istride[GS_MAX_R];
} gs_state;

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

/* Coordinate c on an axis of `size` after border or reflection padding. */
static double gs_pad(const gs_state *st, double c, int64_t size)
{
	if (st->pad == GP_BORDER) {
		c = c < 0 ? 0 : c > (double)(size - 1) ? (double)(size - 1) : c;
	} else if (st->pad == GP_REFLECTION) {
		c = st->align ? gs_reflect(c, 0, 2.0 * (double)(size - 1))
			      : gs_reflect(c, -1, 2.0 * (double)size - 1);
		c = c < 0 ? 0 : c > (double)(size - 1) ? (double)(size - 1) : c;
	}
	return c;
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

/* One axis' taps for coordinate c: indices (-1: outside, reads 0) and
 * weights; returns their count. */
static int gs_axis_taps(const gs_state *st, double c, int64_t size, int64_t *idx, double *w)
{
	if (st->mode == GS_CUBIC) {
		double x0 = floor(c);
		gs_cubic(c - x0, w);
		for (int j = 0; j < 4; j++) {
			double t = gs_pad(st, x0 - 1 + j, size);
			idx[j] = t >= 0 && t < (double)size ? (int64_t)t : -1;
		}
		return 4;
	}
	c = gs_pad(st, c, size);
	if (st->mode == GS_NEAREST) {
		double t = nearbyint(c);
		idx[0] = t >= 0 && t < (double)size ? (int64_t)t : -1;
		w[0] = 1;
		return 1;
	}
	double x0 = floor(c);
	w[0] = 1 - (c - x0);
	w[1] = c - x0;
	idx[0] = x0 >= 0 && x0 < (double)size ? (int64_t)x0 : -1;
	idx[1] = x0 + 1 >= 0 && x0 + 1 < (double)size ? (int64_t)x0 + 1 : -1;
	return 2;
}

/* The taps of grid point g (r components): flat offsets into a channel
 * and weights, those outside dropped; returns the count. */
static int gs_point_taps(const gs_state *st, const gc_tensor *grid, int64_t g, int64_t *off,
			 double *wt)
{
	int64_t idx[GS_MAX_R][4];
	double w[GS_MAX_R][4];
	int cnt[GS_MAX_R];
	for (int a = 0; a < st->r; a++) {
		double c = gc_kv_load(grid, g * st->r + (st->r - 1 - a));
		cnt[a] = gs_axis_taps(st, gs_unnorm(c, st->in[a], st->align), st->in[a], idx[a],
				      w[a]);
	}
	int n = 0, t[GS_MAX_R] = {0};
	for (;;) {
		int64_t o = 0;
		double ww = 1;
		bool in = true;
		for (int a = 0; a < st->r && in; a++) {
			in = idx[a][t[a]] >= 0;
			o += idx[a][t[a]] * st->istride[a];
			ww *= w[a][t[a]];
		}
		if (in) {
			off[n] = o;
			wt[n++] = ww;
		}
		int a = st->r - 1;
		for (; a >= 0; a--) {
			if (++t[a] < cnt[a])
				break;
			t[a] = 0;
		}
		if (a < 0)
			return n;
	}
}

typedef struct gs_job {
	const gs_state *st;
	const gc_tensor *x, *grid;
	gc_tensor *y;
} gs_job;

static void gs_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const gs_job *j = arg;
	const gs_state *st = j->st;
	int64_t p0, p1, off[GS_MAX_TAPS];
	double wt[GS_MAX_TAPS];
	gc_nn_part_range(st->N * st->out_sp, part, parts, &p0, &p1);
	gc_dtype dt = j->x->dtype;
	for (int64_t g = p0; g < p1; g++) {
		int64_t b = g / st->out_sp, p = g % st->out_sp;
		int n = gs_point_taps(st, j->grid, g, off, wt);
		for (int64_t c = 0; c < st->C; c++) {
			int64_t xb = (b * st->C + c) * st->in_sp, yi = (b * st->C + c) * st->out_sp + p;
			double v = 0;
			if (dt == GC_DTYPE_FLOAT) {
				const float *x = (const float *)j->x->data + xb;
				for (int i = 0; i < n; i++)
					v += wt[i] * x[off[i]];
				((float *)j->y->data)[yi] = (float)v;
			} else if (dt == GC_DTYPE_DOUBLE) {
				const double *x = (const double *)j->x->data + xb;
				for (int i = 0; i < n; i++)
					v += wt[i] * x[off[i]];
				((double *)j->y->data)[yi] = v;
			} else {
				for (int i = 0; i < n; i++)
					v += wt[i] * gc_kv_load(j->x, xb + off[i]);
				gc_kv_store(j->y, yi, v);
			}
		}
	}
}

static int gs_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gs_state *st = n->state;
	gs_job j = {st, in[0], in[1], out[0]};
	int taps = st->mode == GS_NEAREST ? 1 : st->mode == GS_LINEAR ? 1 << st->r : 1 << 2 * st->r;
	double points = (double)st->N * (double)st->out_sp;
	double cycles = points * (20.0 * st->r + (double)st->C * taps * 2);
	int64_t items = st->N * st->out_sp;
	gc_nn_run_parts(gc_nn_par_threads(k->threads, cycles), items, gs_part, &j);
	return 0;
}

int gc_prepare_GridSample(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const char *const modes16[] = {"bilinear", "nearest", "bicubic"};
	static const char *const modes20[] = {"linear", "nearest", "cubic"};
	static const char *const pads[] = {"zeros", "border", "reflection"};
	const gc_tensor *x = in[0], *g = in[1];
	char b1[128], b2[128];
	bool v20 = n->opset >= 20;
	const char *const *modes = v20 ? modes20 : modes16;
	int mode = gc_attr_pick(k, "mode", modes[0], modes, 3);
	if (mode < 0)
		return gc_kok(k);
	int pad = gc_attr_pick(k, "padding_mode", pads[0], pads, 3);
	if (pad < 0)
		return gc_kok(k);
	int64_t align = gc_attr_i(k, "align_corners", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype) || !gc_kv_float(g->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "inputs 'X' (%s) and 'grid' (%s) must be float16, bfloat16, float32 "
			       "or float64",
			       gc_dtype_name(x->dtype), gc_dtype_name(g->dtype));
	int r = x->rank - 2;
	if (x->rank < 3 || g->rank != x->rank || g->dims[0] != x->dims[0] ||
	    g->dims[g->rank - 1] != r)
		return gc_kerr(k, GC_EINVAL,
			       "X has shape %s and grid %s; expected X (N, C, D1, ..., Dr) and grid "
			       "(N, D1_out, ..., Dr_out, r)",
			       gc_shape_str(x->dims, x->rank, b1, sizeof b1),
			       gc_shape_str(g->dims, g->rank, b2, sizeof b2));
	if (!v20 && r != 2)
		return gc_kerr(k, GC_EINVAL,
			       "X has shape %s; GridSample-%d samples 4-D X (N-d grids come with "
			       "GridSample-20)",
			       gc_shape_str(x->dims, x->rank, b1, sizeof b1), n->opset);
	if (mode == GS_CUBIC && r > 3)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "mode '%s' over %d spatial dimensions: graphcc's cubic sampling "
			       "takes 1 to 3",
			       modes[GS_CUBIC], r);
	gs_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->mode = mode;
	st->pad = pad;
	st->align = align != 0;
	st->r = r;
	st->N = x->dims[0];
	st->C = x->dims[1];
	st->in_sp = st->out_sp = 1;
	int64_t dims[GC_MAX_RANK] = {x->dims[0], x->dims[1]};
	for (int a = 0; a < r; a++) {
		st->in[a] = x->dims[2 + a];
		st->in_sp *= x->dims[2 + a];
		st->out_sp *= g->dims[1 + a];
		dims[2 + a] = g->dims[1 + a];
	}
	gc_strides(st->in, r, st->istride);
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	n->run = gs_run;
	return 0;
}

/* ---- AffineGrid (opset 20) ---------------------------------------------- */

typedef struct ag_state {
	int r; /* 2 or 3 */
	bool align;
	int64_t N, sp[3]; /* (H, W) or (D, H, W) */
} ag_state;

/* Normalised coordinate of pixel i of n (ONNX's reference: -1 for n = 1
 * with align_corners). */
static double ag_coord(int64_t i, int64_t n, bool align)
{
	if (align)
		return n > 1 ? -1 + 2.0 * (double)i / (double)(n - 1) : -1;
	return (2.0 * (double)i + 1) / (double)n - 1;
}

static int ag_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const ag_state *st = n->state;
	const gc_tensor *theta = in[0];
	gc_tensor *y = out[0];
	int r = st->r;
	int64_t D = r == 3 ? st->sp[0] : 1, H = st->sp[r - 2], W = st->sp[r - 1], o = 0;
	for (int64_t b = 0; b < st->N; b++) {
		double t[12];
		for (int i = 0; i < r * (r + 1); i++)
			t[i] = gc_kv_load(theta, b * r * (r + 1) + i);
		for (int64_t d = 0; d < D; d++)
			for (int64_t h = 0; h < H; h++)
				for (int64_t w = 0; w < W; w++) {
					/* base point (x, y[, z], 1) */
					double p[4] = {ag_coord(w, W, st->align),
						       ag_coord(h, H, st->align), 0, 0};
					p[2] = r == 3 ? ag_coord(d, D, st->align) : 1;
					p[3] = 1;
					for (int i = 0; i < r; i++) {
						double v = 0;
						for (int j = 0; j <= r; j++)
							v += t[i * (r + 1) + j] * p[j];
						gc_kv_store(y, o++, v);
					}
				}
	}
	return 0;
}

int gc_prepare_AffineGrid(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *theta = in[0];
	char b1[128];
	int64_t align = gc_attr_i(k, "align_corners", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(theta->dtype))
		return gc_kerr(k, GC_EINVAL,
			       "input 'theta' has type %s; it must be float16, bfloat16, float32 or "
			       "float64",
			       gc_dtype_name(theta->dtype));
	if (in[1] && in[1]->rank != 1)
		return gc_kerr(k, GC_EINVAL, "input 'size' must be 1-D, not of rank %d",
			       in[1]->rank);
	int64_t size[5], ns;
	if (gc_const_ints(k, in[1], "size", size, 5, &ns))
		return gc_kok(k);
	if (ns != 4 && ns != 5)
		return gc_kerr(k, GC_EINVAL,
			       "input 'size' has %" PRId64 " values; expected 4 (N, C, H, W) or 5 "
			       "(N, C, D, H, W)",
			       ns);
	int r = (int)ns - 2;
	if (theta->rank != 3 || theta->dims[0] != size[0] || theta->dims[1] != r ||
	    theta->dims[2] != r + 1)
		return gc_kerr(k, GC_EINVAL,
			       "input 'theta' has shape %s; for size of N = %" PRId64
			       " and %d spatial dimensions it must be (%" PRId64 ", %d, %d)",
			       gc_shape_str(theta->dims, theta->rank, b1, sizeof b1), size[0], r,
			       size[0], r, r + 1);
	int64_t dims[5] = {size[0]}, total = size[0] * r;
	for (int i = 0; i < r; i++) {
		if (size[2 + i] < 0 || !gc_mul_i64(total, size[2 + i], &total))
			return gc_kerr(k, GC_EINVAL, "input 'size' asks for spatial size %" PRId64,
				       size[2 + i]);
		dims[1 + i] = size[2 + i];
	}
	dims[1 + r] = r;
	ag_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->r = r;
	st->align = align != 0;
	st->N = size[0];
	for (int i = 0; i < r; i++)
		st->sp[i] = size[2 + i];
	gc_set_shape(out[0], theta->dtype, r + 2, dims);
	n->run = ag_run;
	return 0;
}
