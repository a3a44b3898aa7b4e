/* BatchNormalization (inference and training mode), LayerNormalization, RMSNormalization,
 * Softmax, LogSoftmax, InstanceNormalization, GroupNormalization, LpNormalization, LRN. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "kutil.h"
#include "nn-act.h"
#include "nn-par.h"
#include "nn.h"
#include "value-impl.h"
#include "vmath.h"

GC_NN_O3

/* ---- BatchNormalization ---- */

typedef struct bn_state {
	gc_nn_base base;
	int64_t outer, nparam, inner; /* x viewed as [outer, nparam, inner] */
	double eps;
	double momentum; /* training mode: running = input * momentum + batch * (1 - momentum) */
	gc_nn_act act;	 /* what fuse-activation moved into the node (nn-act.h) */
} bn_state;

/* y = x a + b, then the fused activation, over rows [lo, hi) of x viewed
 * as [outer * nparam, inner]. */
typedef struct bn_job {
	const bn_state *st;
	const void *x, *a, *b;
	void *y;
} bn_job;

#define BN_DEFINE(T, sfx)                                                                          \
	GC_NN_SIMD static void bn_rows_##sfx(const bn_state *st, const T *x, const T *a,           \
					     const T *b, T *y, int64_t lo, int64_t hi)             \
	{                                                                                          \
		const gc_nn_act *act = &st->act;                                                   \
		for (int64_t r = lo; r < hi; r++) {                                                \
			int64_t c = r % st->nparam;                                                \
			const T *xs = x + r * st->inner;                                           \
			T *ys = y + r * st->inner;                                                 \
			T av = a[c], bv = b[c];                                                    \
			if (act->kind == GC_NN_ACT_CLAMP) {                                        \
				T lo_ = (T)act->lo, hi_ = (T)act->hi;                              \
				for (int64_t i = 0; i < st->inner; i++) {                          \
					T v = xs[i] * av + bv;                                     \
					v = v < lo_ ? lo_ : v;                                     \
					ys[i] = v > hi_ ? hi_ : v;                                 \
				}                                                                  \
				continue;                                                          \
			}                                                                          \
			for (int64_t i = 0; i < st->inner; i++)                                    \
				ys[i] = xs[i] * av + bv;                                           \
			if (act->kind != GC_NN_ACT_NONE)                                           \
				GC_NN_ACT_ROW(T, act, ys, ys, st->inner, (T)0);                    \
		}                                                                                  \
	}                                                                                          \
	static void bn_part_##sfx(void *arg, int part, int parts, int slot)                        \
	{                                                                                          \
		const bn_job *j = arg;                                                             \
		int64_t lo, hi;                                                                    \
		(void)slot;                                                                        \
		gc_nn_part_range(j->st->outer * j->st->nparam, part, parts, &lo, &hi);             \
		bn_rows_##sfx(j->st, j->x, j->a, j->b, j->y, lo, hi);                              \
	}                                                                                          \
	/* Split over the pool from ~1 cycle an element (it streams x and y). */                   \
	static void bn_apply_##sfx(gc_kctx *k, const bn_state *st, const T *x, const T *a,         \
				   const T *b, T *y)                                               \
	{                                                                                          \
		bn_job j = {st, x, a, b, y};                                                       \
		int64_t rows = st->outer * st->nparam;                                             \
		gc_nn_run_parts(gc_nn_par_threads(k->threads, (double)(rows * st->inner)), rows,   \
				bn_part_##sfx, &j);                                                \
	}                                                                                          \
	static int bn_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                \
				gc_tensor *const *out)                                             \
	{                                                                                          \
		const bn_state *st = n->state;                                                     \
		T *a = k->scratch, *b = a + st->nparam;                                            \
		for (int64_t c = 0; c < st->nparam; c++) {                                         \
			double s = gc_kv_load(in[1], c) / sqrt(gc_kv_load(in[4], c) + st->eps);    \
			a[c] = (T)s;                                                               \
			b[c] = (T)(gc_kv_load(in[2], c) - gc_kv_load(in[3], c) * s);               \
		}                                                                                  \
		bn_apply_##sfx(k, st, in[0]->data, a, b, out[0]->data);                            \
		return 0;                                                                          \
	}                                                                                          \
	/* Training mode: normalises with the batch's own mean and (population)                    \
	 * variance per channel, summed in double; outputs 1 and 2, when wanted,                   \
	 * get the running mean and variance. */                                                   \
	static int bn_train_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,              \
				  gc_tensor *const *out)                                           \
	{                                                                                          \
		const bn_state *st = n->state;                                                     \
		const T *x = in[0]->data;                                                          \
		T *a = k->scratch, *b = a + st->nparam;                                            \
		double cnt = (double)(st->outer * st->inner);                                      \
		for (int64_t c = 0; c < st->nparam; c++) {                                         \
			double sum = 0, sq = 0;                                                    \
			for (int64_t o = 0; o < st->outer; o++) {                                  \
				const T *xs = x + (o * st->nparam + c) * st->inner;                \
				for (int64_t i = 0; i < st->inner; i++)                            \
					sum += xs[i];                                              \
			}                                                                          \
			double mean = cnt > 0 ? sum / cnt : 0;                                     \
			for (int64_t o = 0; o < st->outer; o++) {                                  \
				const T *xs = x + (o * st->nparam + c) * st->inner;                \
				for (int64_t i = 0; i < st->inner; i++) {                          \
					double d = xs[i] - mean;                                   \
					sq += d * d;                                               \
				}                                                                  \
			}                                                                          \
			double var = cnt > 0 ? sq / cnt : 0;                                       \
			double s = gc_kv_load(in[1], c) / sqrt(var + st->eps);                     \
			a[c] = (T)s;                                                               \
			b[c] = (T)(gc_kv_load(in[2], c) - mean * s);                               \
			if (gc_nn_has_out(n, out, 1))                                              \
				gc_kv_store(out[1], c,                                             \
					    gc_kv_load(in[3], c) * st->momentum +                  \
					        mean * (1 - st->momentum));                        \
			if (gc_nn_has_out(n, out, 2))                                              \
				gc_kv_store(out[2], c,                                             \
					    gc_kv_load(in[4], c) * st->momentum +                  \
					        var * (1 - st->momentum));                         \
		}                                                                                  \
		bn_apply_##sfx(k, st, x, a, b, out[0]->data);                                      \
		return 0;                                                                          \
	}

BN_DEFINE(float, f32)
BN_DEFINE(double, f64)

/* BatchNormalization's pass for a Conv that took it in (conv.c, on the
 * paths that cannot apply it as they read the input): y = x a + b per
 * channel of x [outer, c, inner], then max(0, y) when relu. */
void gc_nn_channel_affine(gc_kctx *k, gc_dtype dt, int64_t outer, int64_t c, int64_t inner,
			  const void *x, const void *a, const void *b, int relu, void *y)
{
	bn_state st = {.outer = outer, .nparam = c, .inner = inner};
	if (relu)
		st.act = (gc_nn_act){.kind = GC_NN_ACT_CLAMP, .lo = 0, .hi = INFINITY};
	if (dt == GC_DTYPE_DOUBLE)
		bn_apply_f64(k, &st, x, a, b, y);
	else
		bn_apply_f32(k, &st, x, a, b, y);
}

int gc_prepare_BatchNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				  gc_tensor *const *out)
{
	static const char *const names[] = {"X", "scale", "B", "input_mean", "input_var"};
	const gc_tensor *x = in[0];
	char s1[128], s2[128];
	int64_t training = n->opset >= 14 ? gc_attr_i(k, "training_mode", 0) : 0;
	int64_t spatial = n->opset < 9 ? gc_attr_i(k, "spatial", 1) : 1;
	float eps = gc_attr_f(k, "epsilon", 1e-5f);
	float momentum = gc_attr_f(k, "momentum", 0.9f);
	if (gc_kok(k))
		return gc_kok(k);
	if (training != 0 && training != 1)
		return gc_kerr(k, GC_EINVAL, "attribute 'training_mode' is %" PRId64 "; expected 0 or 1",
			       training);
	/* Opset 14 on: training_mode=1 computes Y from the batch's statistics
	 * and outputs 1 and 2 are the running mean and variance. Before 14 the
	 * outputs past Y (saved statistics included) are refused. */
	if (training && n->n_out > 3)
		return gc_kerr(k, GC_EINVAL,
			       "has %d outputs; from opset 14 on BatchNormalization has at most 3 "
			       "(Y, running_mean, running_var)",
			       n->n_out);
	for (int i = 1; i < n->n_out; i++)
		if (gc_nn_has_out(n, out, i) && !training)
			return gc_kerr(
			    k, GC_EUNSUPPORTED,
			    "output %d (running or saved mean/variance) exists only in "
			    "training; graphcc computes it with training_mode=1 (opset 14 on), and "
			    "this node runs inference, where Y is the only output",
			    i);
	for (int i = 0; i < 5; i++) {
		if (!in[i])
			return gc_kerr(k, GC_EINVAL, "input '%s' is missing", names[i]);
		if (!gc_kv_float(in[i]->dtype))
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "input '%s' has type %s; expected a "
				       "float type",
				       names[i], gc_dtype_name(in[i]->dtype));
	}
	if (x->rank < 2)
		return gc_kerr(k, GC_EINVAL, "input X has shape %s; expected N x C x ...",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	bn_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->outer = x->dims[0];
	st->inner = 1;
	for (int i = 2; i < x->rank; i++)
		st->inner *= x->dims[i];
	st->nparam = x->dims[1];
	if (!spatial) { /* parameters per channel and position: [C, D1, ...] */
		st->nparam *= st->inner;
		st->inner = 1;
	}
	for (int i = 1; i < 5; i++) {
		const gc_tensor *p = in[i];
		int ok = gc_tensor_numel(p) == st->nparam;
		if (spatial)
			ok = ok && p->rank == 1;
		else
			ok = ok &&
			     (p->rank == x->rank - 1 || (p->rank == x->rank && p->dims[0] == 1));
		if (!ok)
			return gc_kerr(k, GC_EINVAL,
				       "input '%s' has shape %s; X %s needs %" PRId64
				       " values (%s)",
				       names[i], gc_shape_str(p->dims, p->rank, s1, sizeof s1),
				       gc_shape_str(x->dims, x->rank, s2, sizeof s2), st->nparam,
				       spatial ? "one per channel"
					       : "spatial=0: one per element of C x D1 x ...");
	}
	st->eps = eps;
	st->momentum = momentum;
	/* half types run in float32 (gc_nn_half_setup) */
	if (gc_nn_act_init(k, gc_nn_is_half(x->dtype) ? GC_DTYPE_FLOAT : x->dtype, &st->act))
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	for (int i = 1; i <= 2; i++)
		if (gc_nn_has_out(n, out, i)) /* the running statistics: input_mean's type */
			gc_set_shape(out[i], in[3]->dtype, 1, &st->nparam);
	uint64_t scratch =
	    gc_nn_align((uint64_t)st->nparam * 2 * (x->dtype == GC_DTYPE_DOUBLE ? 8 : 4));
	/* In training mode too: Y is written only after the statistics are read. */
	n->inplace_ok = true;
	gc_run_fn f32 = training ? bn_train_f32 : bn_run_f32;
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, f32, scratch);
	n->scratch_bytes = scratch;
	n->run = x->dtype == GC_DTYPE_DOUBLE ? (training ? bn_train_f64 : bn_run_f64) : f32;
	return 0;
}

/* ---- LayerNormalization ---- */

static inline double sum_f64(const double *x, int64_t n)
{
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

static inline double sumsq_f64(const double *x, double c, int64_t n)
{
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += (x[i] - c) * (x[i] - c);
	return s;
}

typedef struct ln_state {
	gc_nn_base base;
	int64_t outer, inner;
	float eps;
	int has_b, expand_scale, expand_b; /* expand: Scale/B broadcast to inner */
	int32_t nrank;			   /* rank of the normalised shape */
	int64_t ndims[GC_MAX_RANK];	   /* normalised shape */
	int64_t s_strides[GC_MAX_RANK], b_strides[GC_MAX_RANK];
	int mean_out, inv_out;
} ln_state;

/* Writes the broadcast of src (strides over the normalised shape) into dst. */
#define LN_EXPAND(T, st, strides, src, dst)                                                        \
	do {                                                                                       \
		int64_t idx_[GC_MAX_RANK] = {0};                                                   \
		for (int64_t i_ = 0; i_ < (st)->inner; i_++) {                                     \
			int64_t off_ = 0;                                                          \
			for (int d_ = 0; d_ < (st)->nrank; d_++)                                   \
				off_ += idx_[d_] * (strides)[d_];                                  \
			(dst)[i_] = (src)[off_];                                                   \
			for (int d_ = (st)->nrank - 1; d_ >= 0; d_--) {                            \
				if (++idx_[d_] < (st)->ndims[d_])                                  \
					break;                                                     \
				idx_[d_] = 0;                                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

typedef struct ln_job {
	const ln_state *st;
	const void *x, *sc, *bi;
	void *y;
	float *mean_out, *inv_out;
} ln_job;

/* Rows split over the nn-par pool, as RMSNormalization's below. */
#define LN_DEFINE(T, sfx, SUM, SUMSQ)                                                              \
	GC_NN_SIMD static void ln_part_##sfx(void *arg, int part, int parts, int slot)             \
	{                                                                                          \
		(void)slot;                                                                        \
		const ln_job *j = arg;                                                             \
		const ln_state *st = j->st;                                                        \
		const T *sc = j->sc, *bi = j->bi;                                                  \
		int64_t nn = st->inner, lo, hi;                                                    \
		gc_nn_part_range(st->outer, part, parts, &lo, &hi);                                \
		for (int64_t r = lo; r < hi; r++) {                                                \
			const T *restrict xr = (const T *)j->x + r * nn;                           \
			T *restrict yr = (T *)j->y + r * nn;                                       \
			T mean = SUM(xr, nn) / (T)nn;                                              \
			T var = SUMSQ(xr, mean, nn) / (T)nn;                                       \
			T inv = (T)1 / (T)sqrt((double)(var + (T)st->eps));                        \
			if (bi)                                                                    \
				for (int64_t i = 0; i < nn; i++)                                   \
					yr[i] = (xr[i] - mean) * inv * sc[i] + bi[i];              \
			else                                                                       \
				for (int64_t i = 0; i < nn; i++)                                   \
					yr[i] = (xr[i] - mean) * inv * sc[i];                      \
			if (j->mean_out)                                                           \
				j->mean_out[r] = (float)mean;                                      \
			if (j->inv_out)                                                            \
				j->inv_out[r] = (float)inv;                                        \
		}                                                                                  \
	}                                                                                          \
	static int ln_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                \
				gc_tensor *const *out)                                             \
	{                                                                                          \
		const ln_state *st = n->state;                                                     \
		const T *sc = in[1]->data, *bi = st->has_b ? (const T *)in[2]->data : NULL;        \
		T *buf = k->scratch;                                                               \
		if (st->expand_scale) {                                                            \
			LN_EXPAND(T, st, st->s_strides, sc, buf);                                  \
			sc = buf;                                                                  \
			buf += st->inner;                                                          \
		}                                                                                  \
		if (bi && st->expand_b) {                                                          \
			LN_EXPAND(T, st, st->b_strides, bi, buf);                                  \
			bi = buf;                                                                  \
		}                                                                                  \
		ln_job j = {st, in[0]->data, sc, bi, out[0]->data,                                 \
			    st->mean_out ? (float *)out[1]->data : NULL,                           \
			    st->inv_out ? (float *)out[2]->data : NULL};                           \
		/* ~4 cycles an element: sum, squares, scale */                                    \
		gc_nn_run_parts(gc_nn_par_threads(k->threads, 4.0 * (double)(st->outer * st->inner)), \
				st->outer, ln_part_##sfx, &j);                                     \
		return 0;                                                                          \
	}

LN_DEFINE(float, f32, gc_nn_sum_f32, gc_nn_sumsq_f32)
LN_DEFINE(double, f64, sum_f64, sumsq_f64)

/* Checks that p (Scale or B) broadcasts to x's dims from `axis` on, and
 * gives its strides over the normalised shape; *full when it needs no
 * broadcast. */
static int ln_param(gc_kctx *k, const char *name, const gc_tensor *p, const gc_tensor *x,
		    int32_t axis, int64_t *strides, int *full)
{
	char s1[128], s2[128];
	int32_t nr = x->rank - axis;
	int ok = p->dtype == x->dtype && p->rank <= x->rank;
	for (int d = 0; ok && d < p->rank; d++) {
		int xd = x->rank - p->rank + d;
		int64_t pd = p->dims[d];
		if (xd < axis)
			ok = pd == 1;
		else
			ok = pd == 1 || pd == x->dims[xd];
	}
	if (!ok)
		return gc_kerr(k, GC_EINVAL,
			       "input '%s' (%s %s) must have X's type and broadcast to X's dims "
			       "from axis %d of X %s",
			       name, gc_dtype_name(p->dtype),
			       gc_shape_str(p->dims, p->rank, s1, sizeof s1), axis,
			       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	*full = 1;
	int64_t s = 1;
	for (int d = nr - 1; d >= 0; d--) {
		int pd = d - (nr - p->rank);
		int64_t dim = pd >= 0 ? p->dims[pd] : 1;
		strides[d] = dim == 1 ? 0 : s;
		if (dim != x->dims[axis + d])
			*full = 0;
		s *= dim;
	}
	return 0;
}

/* What LayerNormalization and RMSNormalization share: the attributes, X,
 * the scale (named scale_name) and the [outer, inner] view from *axis on.
 * NULL, with the error on k, when they do not fit. */
static ln_state *ln_begin(gc_kctx *k, gc_node *n, const gc_tensor *x, const gc_tensor *scale,
			  const char *scale_name, int32_t *axis)
{
	int64_t ax = gc_attr_i(k, "axis", -1), stash = gc_attr_i(k, "stash_type", 1);
	float eps = gc_attr_f(k, "epsilon", 1e-5f);
	if (gc_kok(k))
		return NULL;
	if (!gc_kv_float(x->dtype)) {
		gc_kerr(k, GC_EUNSUPPORTED, "input X has type %s; expected a float type",
			gc_dtype_name(x->dtype));
		return NULL;
	}
	if (stash != GC_DTYPE_FLOAT) {
		gc_kerr(k, GC_EUNSUPPORTED,
			"attribute 'stash_type' = %" PRId64 "; graphcc supports 1 (float32)", stash);
		return NULL;
	}
	if (x->rank < 1) {
		gc_kerr(k, GC_EINVAL, "input X must have rank >= 1");
		return NULL;
	}
	ln_state *st = NULL;
	int full = 1;
	if (gc_axis(k, ax, x->rank, axis) || !(st = gc_kstate(k, n, sizeof *st)) ||
	    ln_param(k, scale_name, scale, x, *axis, st->s_strides, &full))
		return NULL;
	st->outer = st->inner = 1;
	for (int d = 0; d < x->rank; d++) {
		if (d < *axis) {
			st->outer *= x->dims[d];
		} else {
			st->inner *= x->dims[d];
			st->ndims[d - *axis] = x->dims[d];
		}
	}
	st->nrank = x->rank - *axis;
	st->eps = eps;
	st->expand_scale = !full;
	return st;
}

int gc_prepare_LayerNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				  gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *scale = in[1], *b = n->n_in > 2 ? in[2] : NULL;
	int32_t a;
	ln_state *st = ln_begin(k, n, x, scale, "Scale", &a);
	int full_b = 1;
	if (!st || (b && ln_param(k, "B", b, x, a, st->b_strides, &full_b)))
		return gc_kok(k);
	int64_t rdims[GC_MAX_RANK];
	for (int d = 0; d < x->rank; d++)
		rdims[d] = d < a ? x->dims[d] : 1;
	st->has_b = b != NULL;
	st->expand_b = b && !full_b;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	if (gc_nn_has_out(n, out, 1)) {
		st->mean_out = 1;
		gc_set_shape(out[1], GC_DTYPE_FLOAT, x->rank, rdims);
	}
	if (gc_nn_has_out(n, out, 2)) {
		st->inv_out = 1;
		gc_set_shape(out[2], GC_DTYPE_FLOAT, x->rank, rdims);
	}
	size_t es = x->dtype == GC_DTYPE_DOUBLE ? 8 : 4;
	uint64_t scratch = gc_nn_align((uint64_t)st->inner * es * 2);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, ln_run_f32, scratch);
	n->scratch_bytes = scratch;
	n->run = x->dtype == GC_DTYPE_DOUBLE ? ln_run_f64 : ln_run_f32;
	return 0;
}

/* ---- RMSNormalization (opset 23) ---- */

/* LayerNormalization's shape handling (ln_state, ln_param, LN_EXPAND)
 * without the mean and B; rows split over the nn-par pool. */
typedef struct rms_job {
	const ln_state *st;
	const void *x, *sc;
	void *y;
} rms_job;

#define RMS_DEFINE(T, sfx, SUMSQ)                                                                  \
	GC_NN_SIMD static void rms_part_##sfx(void *arg, int part, int parts, int slot)            \
	{                                                                                          \
		(void)slot;                                                                        \
		const rms_job *j = arg;                                                            \
		int64_t nn = j->st->inner, lo, hi;                                                 \
		const T *sc = j->sc;                                                               \
		gc_nn_part_range(j->st->outer, part, parts, &lo, &hi);                             \
		for (int64_t r = lo; r < hi; r++) {                                                \
			const T *restrict xr = (const T *)j->x + r * nn;                           \
			T *restrict yr = (T *)j->y + r * nn;                                       \
			T inv = (T)(1 / sqrt((double)(SUMSQ(xr, (T)0, nn) / (T)nn) +               \
					     (double)j->st->eps));                                 \
			for (int64_t i = 0; i < nn; i++)                                           \
				yr[i] = xr[i] * inv * sc[i];                                       \
		}                                                                                  \
	}                                                                                          \
	static int rms_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,               \
				 gc_tensor *const *out)                                            \
	{                                                                                          \
		const ln_state *st = n->state;                                                     \
		const T *sc = in[1]->data;                                                         \
		if (st->expand_scale) {                                                            \
			LN_EXPAND(T, st, st->s_strides, sc, (T *)k->scratch);                      \
			sc = k->scratch;                                                           \
		}                                                                                  \
		rms_job j = {st, in[0]->data, sc, out[0]->data};                                   \
		gc_nn_run_parts(gc_nn_par_threads(k->threads, 3.0 * (double)(st->outer * st->inner)), \
				st->outer, rms_part_##sfx, &j);                                    \
		return 0;                                                                          \
	}

RMS_DEFINE(float, f32, gc_nn_sumsq_f32)
RMS_DEFINE(double, f64, sumsq_f64)

int gc_prepare_RMSNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int32_t a;
	ln_state *st = ln_begin(k, n, x, in[1], "scale", &a);
	if (!st)
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	size_t es = x->dtype == GC_DTYPE_DOUBLE ? 8 : 4;
	uint64_t scratch = st->expand_scale ? gc_nn_align((uint64_t)st->inner * es) : 0;
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, rms_run_f32, scratch);
	n->scratch_bytes = scratch;
	n->run = x->dtype == GC_DTYPE_DOUBLE ? rms_run_f64 : rms_run_f32;
	return 0;
}

/* ---- Softmax, LogSoftmax ---- */

typedef struct softmax_state {
	gc_nn_base base;
	int64_t outer, len, inner; /* x viewed as [outer, len, inner], normalised over len */
} softmax_state;

/* Contiguous rows (inner == 1), float32. No restrict: y may be x. */
GC_NN_SIMD static void softmax_rows_f32(const softmax_state *st, const float *x, float *y,
					int is_log, int64_t r0, int64_t r1)
{
	int64_t len = st->len;
	for (int64_t r = r0; r < r1; r++) {
		const float *xr = x + r * len;
		float *yr = y + r * len;
		float mx = gc_vm_max_f32(xr, len);
		if (mx == -INFINITY) /* all -inf: shift by 0 rather than make NaN */
			mx = 0;
		float acc[GC_NN_LANES] = {0}, sum = 0;
		int64_t i = 0;
		if (is_log) {
			for (; i + GC_NN_LANES <= len; i += GC_NN_LANES)
				for (int j = 0; j < GC_NN_LANES; j++)
					acc[j] += gc_vm_expf_neg(xr[i + j] - mx);
			for (; i < len; i++)
				sum += gc_vm_expf_neg(xr[i] - mx);
			for (int j = 0; j < GC_NN_LANES; j++)
				sum += acc[j];
			float shift = mx + logf(sum);
			for (i = 0; i < len; i++)
				yr[i] = xr[i] - shift;
		} else {
			/* exp, then its sum: a sum in the same loop kept its
			 * accumulators in memory (the row in L1 either way) */
			for (i = 0; i < len; i++)
				yr[i] = gc_vm_expf_neg(xr[i] - mx);
			sum = gc_nn_sum_f32(yr, len);
			/* probabilities below FLT_MIN (a masked score, e^-100) are 0,
			 * not denormals: a MatMul by attention weights with
			 * denormals in them runs at a fraction of its speed (a
			 * microcode assist per product; swin_t's shifted windows).
			 * The change is below 1.2e-38 absolute. */
			float inv = 1.0f / sum;
			for (i = 0; i < len; i++) {
				float v = yr[i] * inv;
				yr[i] = v < FLT_MIN ? 0.0f : v;
			}
		}
	}
}

/* Rows split over the pool (attention's scores: heads x queries rows). */
typedef struct softmax_job {
	const softmax_state *st;
	const float *x;
	float *y;
	int is_log;
} softmax_job;

static void softmax_rows_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const softmax_job *j = arg;
	int64_t r0, r1;
	gc_nn_part_range(j->st->outer, part, parts, &r0, &r1);
	softmax_rows_f32(j->st, j->x, j->y, j->is_log, r0, r1);
}

/* Strided (inner > 1), float32: the inner positions [i0, i1) of row block
 * o (at most GC_NN_CHUNK of them, nn-par.h) advance together, which keeps
 * the loops contiguous; the blocks and chunks are split over the threads
 * (each position's result is the same at any split). */
GC_NN_SIMD static void softmax_strided_f32(const softmax_state *st, const float *x, float *y,
					   int is_log, int64_t o, int64_t i0, int64_t i1)
{
	float mx[GC_NN_CHUNK], sum[GC_NN_CHUNK];
	int64_t len = st->len, inner = st->inner, w = i1 - i0;
	const float *xo = x + o * len * inner + i0;
	float *yo = y + o * len * inner + i0;
	for (int64_t i = 0; i < w; i++) {
		mx[i] = -INFINITY;
		sum[i] = 0;
	}
	for (int64_t j = 0; j < len; j++) {
		const float *xr = xo + j * inner;
		for (int64_t i = 0; i < w; i++)
			mx[i] = xr[i] > mx[i] ? xr[i] : mx[i];
	}
	for (int64_t i = 0; i < w; i++)
		mx[i] = mx[i] == -INFINITY ? 0 : mx[i];
	for (int64_t j = 0; j < len; j++) {
		const float *xr = xo + j * inner;
		float *yr = yo + j * inner;
		for (int64_t i = 0; i < w; i++) {
			float e = gc_vm_expf_neg(xr[i] - mx[i]);
			if (!is_log)
				yr[i] = e;
			sum[i] += e;
		}
	}
	if (is_log) {
		for (int64_t i = 0; i < w; i++)
			sum[i] = mx[i] + logf(sum[i]);
		for (int64_t j = 0; j < len; j++) {
			const float *xr = xo + j * inner;
			float *yr = yo + j * inner;
			for (int64_t i = 0; i < w; i++)
				yr[i] = xr[i] - sum[i];
		}
	} else {
		for (int64_t i = 0; i < w; i++)
			sum[i] = 1.0f / sum[i];
		for (int64_t j = 0; j < len; j++) {
			float *yr = yo + j * inner;
			for (int64_t i = 0; i < w; i++)
				yr[i] *= sum[i];
		}
	}
}

static void softmax_strided_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const softmax_job *j = arg;
	const softmax_state *st = j->st;
	int64_t u0, u1;
	gc_nn_part_range(gc_nn_chunk_units(st->outer, st->inner), part, parts, &u0, &u1);
	for (int64_t u = u0; u < u1; u++) {
		int64_t i0, w, o = gc_nn_chunk_at(u, st->inner, &i0, &w);
		softmax_strided_f32(st, j->x, j->y, j->is_log, o, i0, i0 + w);
	}
}

static void softmax_f64(const softmax_state *st, const double *x, double *y, int is_log)
{
	int64_t len = st->len, inner = st->inner;
	for (int64_t o = 0; o < st->outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			const double *xr = x + o * len * inner + i;
			double *yr = y + o * len * inner + i;
			double mx = -INFINITY, sum = 0;
			for (int64_t j = 0; j < len; j++)
				mx = xr[j * inner] > mx ? xr[j * inner] : mx;
			if (mx == -INFINITY)
				mx = 0;
			for (int64_t j = 0; j < len; j++)
				sum += exp(xr[j * inner] - mx);
			if (is_log) {
				double shift = mx + log(sum);
				for (int64_t j = 0; j < len; j++)
					yr[j * inner] = xr[j * inner] - shift;
			} else {
				for (int64_t j = 0; j < len; j++)
					yr[j * inner] = exp(xr[j * inner] - mx) / sum;
			}
		}
}

#define SOFTMAX_RUNS(name, is_log)                                                                 \
	static int name##_run_f32(gc_kctx *k, const gc_node *n, gc_tensor *const *in,              \
				  gc_tensor *const *out)                                           \
	{                                                                                          \
		const softmax_state *st = n->state;                                                \
		/* ~6 cycles an element: max, exp, scale */                                        \
		softmax_job j = {st, in[0]->data, out[0]->data, is_log};                           \
		int t = gc_nn_par_threads(k->threads,                                              \
					  6.0 * (double)(st->outer * st->len * st->inner));        \
		if (st->inner == 1)                                                                \
			gc_nn_run_parts(t, st->outer, softmax_rows_part, &j);                      \
		else                                                                               \
			gc_nn_run_parts(t, gc_nn_chunk_units(st->outer, st->inner),                \
					softmax_strided_part, &j);                                 \
		return 0;                                                                          \
	}                                                                                          \
	static int name##_run_f64(gc_kctx *k, const gc_node *n, gc_tensor *const *in,              \
				  gc_tensor *const *out)                                           \
	{                                                                                          \
		(void)k;                                                                           \
		softmax_f64(n->state, in[0]->data, out[0]->data, is_log);                          \
		return 0;                                                                          \
	}

SOFTMAX_RUNS(softmax, 0)
SOFTMAX_RUNS(logsoftmax, 1)

static int softmax_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			   gc_run_fn f32, gc_run_fn f64)
{
	const gc_tensor *x = in[0];
	int legacy = n->opset < 13; /* coerced to 2-D at axis */
	int64_t axis = gc_attr_i(k, "axis", legacy ? 1 : -1);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input has type %s; expected a float type",
			       gc_dtype_name(x->dtype));
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input must have rank >= 1");
	int32_t a;
	/* before opset 13 axis may equal the rank (a [N, 1] coercion) */
	if (legacy && axis == x->rank)
		a = x->rank;
	else if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	softmax_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->outer = st->len = st->inner = 1;
	for (int d = 0; d < x->rank; d++) {
		if (d < a)
			st->outer *= x->dims[d];
		else if (d == a || legacy)
			st->len *= x->dims[d];
		else
			st->inner *= x->dims[d];
	}
	if (!st->len || !st->inner) /* empty: no rows (a row of none has no max) */
		st->outer = 0;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true; /* every pass reads x[i] before writing y[i] */
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, f32, 0);
	n->run = x->dtype == GC_DTYPE_DOUBLE ? f64 : f32;
	return 0;
}

int gc_prepare_Softmax(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return softmax_prepare(k, n, in, out, softmax_run_f32, softmax_run_f64);
}

int gc_prepare_LogSoftmax(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return softmax_prepare(k, n, in, out, logsoftmax_run_f32, logsoftmax_run_f64);
}

/* ---- InstanceNormalization ---- */

typedef struct in_state {
	gc_nn_base base;
	int64_t n, c, inner;
	double eps;
	gc_nn_act act; /* fused by lib/pass-activation.c (nn-act.h) */
} in_state;

typedef struct in_job {
	const in_state *st;
	const gc_tensor *scale, *bias;
	const void *x;
	void *y;
} in_job;

/* Planes (batch item, channel) [lo, hi) of a part. */
#define IN_DEFINE(T, sfx, SUM, SUMSQ)                                                              \
	GC_NN_SIMD static void in_part_##sfx(void *arg, int part, int parts, int slot)             \
	{                                                                                          \
		(void)slot;                                                                        \
		const in_job *j = arg;                                                             \
		const in_state *st = j->st;                                                        \
		int64_t lo, hi;                                                                    \
		gc_nn_part_range(st->n * st->c, part, parts, &lo, &hi);                            \
		for (int64_t bc = lo; bc < hi; bc++) {                                             \
			int64_t c = bc % st->c;                                                    \
			const T *xs = (const T *)j->x + bc * st->inner;                            \
			T *ys = (T *)j->y + bc * st->inner;                                        \
			T mean = SUM(xs, st->inner) / (T)st->inner;                                \
			T var = SUMSQ(xs, mean, st->inner) / (T)st->inner;                         \
			T a = (T)(gc_kv_load(j->scale, c) / sqrt((double)var + st->eps));          \
			T sh = (T)gc_kv_load(j->bias, c) - mean * a;                               \
			for (int64_t i = 0; i < st->inner; i++)                                    \
				ys[i] = xs[i] * a + sh;                                            \
			if (st->act.kind != GC_NN_ACT_NONE)                                        \
				GC_NN_ACT_ROW(T, &st->act, ys, ys, st->inner, (T)0);               \
		}                                                                                  \
	}                                                                                          \
	static int instnorm_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,          \
				      gc_tensor *const *out)                                       \
	{                                                                                          \
		const in_state *st = n->state;                                                     \
		in_job j = {st, in[1], in[2], in[0]->data, out[0]->data};                          \
		int64_t items = st->n * st->c;                                                     \
		int t = gc_nn_par_threads(k->threads, 4.0 * (double)(items * st->inner));          \
		gc_nn_run_parts(t, items, in_part_##sfx, &j);                                      \
		return 0;                                                                          \
	}

IN_DEFINE(float, f32, gc_nn_sum_f32, gc_nn_sumsq_f32)
IN_DEFINE(double, f64, sum_f64, sumsq_f64)

/* InstanceNormalization's and GroupNormalization's X: float, N x C x D1 x ... */
static int nc_input_check(gc_kctx *k, const gc_tensor *x)
{
	char s1[128];
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input has type %s; expected a float type",
			       gc_dtype_name(x->dtype));
	if (x->rank < 3)
		return gc_kerr(k, GC_EINVAL, "input has shape %s; expected N x C x D1 x ...",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	return 0;
}

int gc_prepare_InstanceNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				     gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	char s1[128], s2[128];
	float eps = gc_attr_f(k, "epsilon", 1e-5f);
	if (gc_kok(k) || nc_input_check(k, x))
		return gc_kok(k);
	static const char *const names[] = {"input", "scale", "B"};
	for (int i = 1; i < 3; i++)
		if (in[i]->dtype != x->dtype || in[i]->rank != 1 || in[i]->dims[0] != x->dims[1])
			return gc_kerr(k, GC_EINVAL,
				       "input '%s' (%s %s) must be %s [%" PRId64 "] for input %s",
				       names[i], gc_dtype_name(in[i]->dtype),
				       gc_shape_str(in[i]->dims, in[i]->rank, s1, sizeof s1),
				       gc_dtype_name(x->dtype), x->dims[1],
				       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	in_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->n = x->dims[0];
	st->c = x->dims[1];
	st->inner = 1;
	for (int i = 2; i < x->rank; i++)
		st->inner *= x->dims[i];
	st->eps = eps;
	if (gc_nn_act_init(k, x->dtype, &st->act))
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, instnorm_run_f32, 0);
	n->run = x->dtype == GC_DTYPE_DOUBLE ? instnorm_run_f64 : instnorm_run_f32;
	return 0;
}

/* ---- GroupNormalization (opsets 18 and 21) ---- */

/* x viewed as [n, groups, cpg, inner]; scale and bias per group (opset
 * 18) or per channel (opset 21 on). */
typedef struct gn_state {
	gc_nn_base base;
	int64_t n, groups, cpg, inner;
	int per_channel;
	float eps;
	gc_nn_act act; /* fused by lib/pass-activation.c (nn-act.h) */
} gn_state;

typedef struct gn_job {
	const gn_state *st;
	const void *x, *sc, *bi;
	void *y;
} gn_job;

#define GN_DEFINE(T, sfx, SUM, SUMSQ)                                                              \
	GC_NN_SIMD static void gn_part_##sfx(void *arg, int part, int parts, int slot)             \
	{                                                                                          \
		(void)slot;                                                                        \
		const gn_job *j = arg;                                                             \
		const gn_state *st = j->st;                                                        \
		const T *sc = j->sc, *bi = j->bi;                                                  \
		int64_t len = st->cpg * st->inner, lo, hi;                                         \
		gc_nn_part_range(st->n * st->groups, part, parts, &lo, &hi);                       \
		for (int64_t ng = lo; ng < hi; ng++) {                                             \
			const T *xs = (const T *)j->x + ng * len;                                  \
			T *ys = (T *)j->y + ng * len;                                              \
			int64_t g = ng % st->groups;                                               \
			T mean = len ? SUM(xs, len) / (T)len : 0;                                  \
			T var = len ? SUMSQ(xs, mean, len) / (T)len : 0;                           \
			T inv = (T)(1 / sqrt((double)var + (double)st->eps));                      \
			for (int64_t c = 0; c < st->cpg; c++) {                                    \
				int64_t p = st->per_channel ? g * st->cpg + c : g;                 \
				T a = sc[p] * inv, b = bi[p] - mean * a;                           \
				const T *restrict xc = xs + c * st->inner;                         \
				T *restrict yc = ys + c * st->inner;                               \
				for (int64_t i = 0; i < st->inner; i++)                            \
					yc[i] = xc[i] * a + b;                                     \
				if (st->act.kind != GC_NN_ACT_NONE)                                \
					GC_NN_ACT_ROW(T, &st->act, yc, yc, st->inner, (T)0);       \
			}                                                                          \
		}                                                                                  \
	}                                                                                          \
	static int gn_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,                \
				gc_tensor *const *out)                                             \
	{                                                                                          \
		const gn_state *st = n->state;                                                     \
		gn_job j = {st, in[0]->data, in[1]->data, in[2]->data, out[0]->data};              \
		int64_t items = st->n * st->groups;                                                \
		int t = gc_nn_par_threads(k->threads,                                              \
					  4.0 * (double)(items * st->cpg * st->inner));            \
		gc_nn_run_parts(t, items, gn_part_##sfx, &j);                                      \
		return 0;                                                                          \
	}

GN_DEFINE(float, f32, gc_nn_sum_f32, gc_nn_sumsq_f32)
GN_DEFINE(double, f64, sum_f64, sumsq_f64)

int gc_prepare_GroupNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				  gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	char s1[128], s2[128];
	float eps = gc_attr_f(k, "epsilon", 1e-5f);
	int64_t groups = gc_attr_i(k, "num_groups", 0), stash = gc_attr_i(k, "stash_type", 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_attr_find(n, "num_groups"))
		return gc_kerr(k, GC_EINVAL, "attribute 'num_groups' is required");
	if (nc_input_check(k, x))
		return gc_kok(k);
	if (stash != GC_DTYPE_FLOAT)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attribute 'stash_type' = %" PRId64 "; graphcc supports 1 (float32)",
			       stash);
	if (groups <= 0 || x->dims[1] % groups)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'num_groups' = %" PRId64
			       " must be positive and divide the %" PRId64 " channels",
			       groups, x->dims[1]);
	/* Opset 18 scaled each group; opset 21 changed scale and bias to one
	 * per channel. */
	int per_channel = n->opset >= 21;
	int64_t want = per_channel ? x->dims[1] : groups;
	static const char *const names[] = {"X", "scale", "bias"};
	for (int i = 1; i < 3; i++)
		if (in[i]->dtype != x->dtype || in[i]->rank != 1 || in[i]->dims[0] != want)
			return gc_kerr(k, GC_EINVAL,
				       "input '%s' (%s %s) must be %s [%" PRId64 "]: one per %s at "
				       "opset %d, for X %s",
				       names[i], gc_dtype_name(in[i]->dtype),
				       gc_shape_str(in[i]->dims, in[i]->rank, s1, sizeof s1),
				       gc_dtype_name(x->dtype), want,
				       per_channel ? "channel" : "group", n->opset,
				       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	gn_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->n = x->dims[0];
	st->groups = groups;
	st->cpg = x->dims[1] / groups;
	st->inner = 1;
	for (int i = 2; i < x->rank; i++)
		st->inner *= x->dims[i];
	st->per_channel = per_channel;
	st->eps = eps;
	if (gc_nn_act_init(k, x->dtype, &st->act))
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, gn_run_f32, 0);
	n->run = x->dtype == GC_DTYPE_DOUBLE ? gn_run_f64 : gn_run_f32;
	return 0;
}

/* ---- LpNormalization ---- */

typedef struct lp_state {
	gc_nn_base base;
	int64_t outer, len, inner;
	int p;
} lp_state;

#define LP_DEFINE(T, sfx)                                                                          \
	static int lpnorm_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,            \
				    gc_tensor *const *out)                                         \
	{                                                                                          \
		(void)k;                                                                           \
		const lp_state *st = n->state;                                                     \
		const T *x = in[0]->data;                                                          \
		T *y = out[0]->data;                                                               \
		for (int64_t o = 0; o < st->outer; o++)                                            \
			for (int64_t i = 0; i < st->inner; i++) {                                  \
				const T *xr = x + o * st->len * st->inner + i;                     \
				T *yr = y + o * st->len * st->inner + i;                           \
				double norm = 0;                                                   \
				for (int64_t j = 0; j < st->len; j++) {                            \
					double v = xr[j * st->inner];                              \
					norm += st->p == 1 ? fabs(v) : v * v;                      \
				}                                                                  \
				if (st->p == 2)                                                    \
					norm = sqrt(norm);                                         \
				for (int64_t j = 0; j < st->len; j++)                              \
					yr[j * st->inner] = (T)(xr[j * st->inner] / norm);         \
			}                                                                          \
		return 0;                                                                          \
	}

LP_DEFINE(float, f32)
LP_DEFINE(double, f64)

int gc_prepare_LpNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t axis = gc_attr_i(k, "axis", -1), p = gc_attr_i(k, "p", 2);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input has type %s; expected a float type",
			       gc_dtype_name(x->dtype));
	if (p != 1 && p != 2)
		return gc_kerr(k, GC_EINVAL, "attribute 'p' = %" PRId64 " must be 1 or 2", p);
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input must have rank >= 1");
	int32_t a;
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	lp_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->outer = st->inner = 1;
	st->len = x->dims[a];
	for (int d = 0; d < x->rank; d++) {
		if (d < a)
			st->outer *= x->dims[d];
		else if (d > a)
			st->inner *= x->dims[d];
	}
	st->p = (int)p;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, lpnorm_run_f32, 0);
	n->run = x->dtype == GC_DTYPE_DOUBLE ? lpnorm_run_f64 : lpnorm_run_f32;
	return 0;
}

/* ---- LRN ---- */

typedef struct lrn_state {
	gc_nn_base base;
	int64_t n, c, inner, before, after; /* channel window [c - before, c + after] */
	double alpha_over_size, beta, bias;
} lrn_state;

/*
 * (b, c) planes in chunks of GC_NN_CHUNK positions (nn-par.h), their sums
 * of squares on the stack, split over the threads. float32 takes
 * base^-beta without libm's pow (a scalar call in double, 13 ns an
 * element): for beta 0.75 (AlexNet's, GoogLeNet's) as
 * 1 / (sqrt(base) sqrt(sqrt(base))), 0.5 and 1 as
 * 1 / sqrt and a division, others as exp(-beta log(base)) (vmath.h); the
 * file is built without errno (Makefile), so that sqrtf vectorises.
 * [8, 64, 128, 64], size 5: 55 -> 3.2 ms at one thread, 1.6 at two.
 */
typedef struct lrn_job {
	const lrn_state *st;
	const void *x;
	void *y;
} lrn_job;

/* ys = xs (bias + aos sq)^-beta, the choice of formula outside the loops
 * so that each vectorises */
static inline void lrn_apply_f32(const float *xs, float *ys, const float *sq, int64_t w,
				 float aos, float bias, float beta)
{
	if (beta == 0.75f)
		for (int64_t i = 0; i < w; i++) {
			float r = sqrtf(bias + aos * sq[i]);
			ys[i] = xs[i] / (r * sqrtf(r));
		}
	else if (beta == 0.5f)
		for (int64_t i = 0; i < w; i++)
			ys[i] = xs[i] / sqrtf(bias + aos * sq[i]);
	else if (beta == 1.0f)
		for (int64_t i = 0; i < w; i++)
			ys[i] = xs[i] / (bias + aos * sq[i]);
	else
		for (int64_t i = 0; i < w; i++)
			ys[i] = xs[i] * gc_vm_expf(-beta * gc_vm_logf(bias + aos * sq[i]));
}

static inline void lrn_apply_f64(const double *xs, double *ys, const double *sq, int64_t w,
				 double aos, double bias, double beta)
{
	for (int64_t i = 0; i < w; i++)
		ys[i] = xs[i] * pow(bias + aos * sq[i], -beta);
}

#define LRN_DEFINE(T, sfx)                                                                         \
	GC_NN_SIMD static void lrn_part_##sfx(void *arg, int part, int parts, int slot)            \
	{                                                                                          \
		(void)slot;                                                                        \
		const lrn_job *j = arg;                                                            \
		const lrn_state *st = j->st;                                                       \
		const T *x = j->x;                                                                 \
		T *y = j->y;                                                                       \
		T aos = (T)st->alpha_over_size, bias = (T)st->bias, beta = (T)st->beta;            \
		int64_t u0, u1;                                                                    \
		gc_nn_part_range(gc_nn_chunk_units(st->n * st->c, st->inner), part, parts, &u0,    \
				 &u1);                                                             \
		T sq[GC_NN_CHUNK];                                                                 \
		for (int64_t u = u0; u < u1; u++) {                                                \
			int64_t i0, w, bc = gc_nn_chunk_at(u, st->inner, &i0, &w);                 \
			int64_t b = bc / st->c, c = bc % st->c;                                    \
			int64_t lo = c - st->before < 0 ? 0 : c - st->before;                      \
			int64_t hi = c + st->after >= st->c ? st->c - 1 : c + st->after;           \
			for (int64_t i = 0; i < w; i++)                                            \
				sq[i] = 0;                                                         \
			for (int64_t cc = lo; cc <= hi; cc++) {                                    \
				const T *restrict xs = x + (b * st->c + cc) * st->inner + i0;      \
				for (int64_t i = 0; i < w; i++)                                    \
					sq[i] += xs[i] * xs[i];                                    \
			}                                                                          \
			const T *xs = x + bc * st->inner + i0;                                     \
			T *ys = y + bc * st->inner + i0;                                           \
			lrn_apply_##sfx(xs, ys, sq, w, aos, bias, beta);                           \
		}                                                                                  \
	}                                                                                          \
	static int lrn_run_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,               \
				 gc_tensor *const *out)                                            \
	{                                                                                          \
		const lrn_state *st = n->state;                                                    \
		lrn_job j = {st, in[0]->data, out[0]->data};                                       \
		int64_t units = gc_nn_chunk_units(st->n * st->c, st->inner);                       \
		/* the window's squares, a root or two, a division an element */                 \
		double cycles = (double)(st->n * st->c * st->inner) * (double)(8 + st->before +    \
									      st->after);   \
		gc_nn_run_parts(gc_nn_par_threads(k->threads, cycles), units, lrn_part_##sfx, &j); \
		return 0;                                                                          \
	}

LRN_DEFINE(float, f32)
LRN_DEFINE(double, f64)

int gc_prepare_LRN(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	char s1[128];
	float alpha = gc_attr_f(k, "alpha", 1e-4f), beta = gc_attr_f(k, "beta", 0.75f);
	float bias = gc_attr_f(k, "bias", 1.0f);
	int64_t size = gc_attr_i(k, "size", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_attr_find(n, "size") || size < 1)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'size' is required and must be >= 1 (got %" PRId64 ")",
			       size);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input has type %s; expected a float type",
			       gc_dtype_name(x->dtype));
	if (x->rank < 2)
		return gc_kerr(k, GC_EINVAL, "input has shape %s; expected N x C x ...",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	lrn_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->n = x->dims[0];
	st->c = x->dims[1];
	st->inner = 1;
	for (int i = 2; i < x->rank; i++)
		st->inner *= x->dims[i];
	st->before = (size - 1) / 2;
	st->after = size - 1 - st->before; /* ceil((size - 1) / 2) */
	st->alpha_over_size = (double)alpha / (double)size;
	st->beta = beta;
	st->bias = bias;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, lrn_run_f32, 0);
	n->run = x->dtype == GC_DTYPE_DOUBLE ? lrn_run_f64 : lrn_run_f32;
	return 0;
}
