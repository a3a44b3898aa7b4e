/*
 * LpPool (opsets 1, 2, 11, 18, 22): y = (sum |x|^p)^(1/p) over each window's
 * taps inside the input -- the padding is zeros, which add nothing -- as
 * ONNX Runtime computes it. p is a float attribute at opset 1 and an int
 * from 2; ceil_mode and dilations come with opset 18. Windows come from
 * gc_nn_window_init (conv.c) and are walked as pool.c walks them
 * (pool-impl.h); sums are in double; channels split over the nn-par pool.
 */
#include <inttypes.h>
#include <math.h>

#include "kutil.h"
#include "nn-par.h"
#include "nn.h"
#include "pool-impl.h"

typedef struct lp_state {
	gc_nn_base base;
	gc_nn_window w;
	int64_t channels, in_sp, out_sp;
	double p;
} lp_state;

typedef struct lp_job {
	const lp_state *st;
	const void *x;
	void *y;
	bool dbl;
} lp_job;

static inline double lp_pow(double v, double p)
{
	return p == 2 ? v * v : p == 1 ? fabs(v) : pow(fabs(v), p);
}

static inline double lp_root(double s, double p)
{
	return p == 2 ? sqrt(s) : p == 1 ? s : pow(s, 1 / p);
}

#define LP_RANGE(T, sfx)                                                                           \
	static void lp_range_##sfx(const lp_state *st, const T *x, T *y, int64_t c0, int64_t c1)   \
	{                                                                                          \
		const double p = st->p;                                                            \
		GC_POOL_WINDOWS_BEGIN(&st->w, st->in_sp, st->out_sp, c0, c1)                       \
		const T *xc = x + xo;                                                              \
		double s = 0;                                                                      \
		GC_POOL_TAPS_BEGIN(T, xc, v)                                                       \
		s += lp_pow((double)v, p);                                                         \
		GC_POOL_TAPS_END                                                                   \
		y[yo] = (T)lp_root(s, p);                                                          \
		GC_POOL_WINDOWS_END                                                                \
	}

LP_RANGE(float, f32)
LP_RANGE(double, f64)

static void lp_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const lp_job *j = arg;
	int64_t c0, c1;
	gc_nn_part_range(j->st->channels, part, parts, &c0, &c1);
	if (j->dbl)
		lp_range_f64(j->st, j->x, j->y, c0, c1);
	else
		lp_range_f32(j->st, j->x, j->y, c0, c1);
}

static int lp_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const lp_state *st = n->state;
	const gc_nn_window *w = &st->w;
	lp_job j = {st, in[0]->data, out[0]->data, in[0]->dtype == GC_DTYPE_DOUBLE};
	/* a pow per tap unless p is 1 or 2 */
	double per_tap = st->p == 1 || st->p == 2 ? 2 : 20;
	double cycles = per_tap * (double)st->channels * (double)st->out_sp *
			(double)(w->k[0] * w->k[1] * w->k[2]);
	gc_nn_run_parts(gc_nn_par_threads(k->threads, cycles), st->channels, lp_part, &j);
	return 0;
}

int gc_prepare_LpPool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	char s1[128];
	if (!(x->dtype == GC_DTYPE_FLOAT || x->dtype == GC_DTYPE_DOUBLE || gc_nn_is_half(x->dtype)))
		return gc_kerr(k, GC_EINVAL,
			       "input X has type %s; LpPool takes float16, bfloat16, float32 or "
			       "float64",
			       gc_dtype_name(x->dtype));
	if (x->rank < 3 || x->rank > 2 + GC_NN_MAX_SPATIAL)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input X has shape %s; graphcc pools 1 to 3 spatial dimensions "
			       "(rank 3 to 5)",
			       gc_shape_str(x->dims, x->rank, s1, sizeof s1));
	if (n->opset < 18)
		for (int i = 0; i < 2; i++) {
			const char *a = i ? "dilations" : "ceil_mode";
			if (gc_attr_find(n, a))
				return gc_kerr(k, GC_EINVAL,
					       "attribute '%s' is LpPool-18's; the model imports "
					       "opset %d",
					       a, n->opset);
		}
	double p = n->opset < 2 ? gc_attr_f(k, "p", 2.0f) : (double)gc_attr_i(k, "p", 2);
	int64_t ceil_mode = gc_attr_i(k, "ceil_mode", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!(p > 0 && p <= 1e6))
		return gc_kerr(k, GC_EINVAL, "attribute 'p' is %g; it must be in (0, 1e6]", p);
	if (ceil_mode != 0 && ceil_mode != 1)
		return gc_kerr(k, GC_EINVAL, "attribute 'ceil_mode' must be 0 or 1, got %" PRId64,
			       ceil_mode);
	gc_nn_window w;
	int32_t nsp = x->rank - 2;
	if (gc_nn_window_init(k, nsp, x->dims + 2, NULL, (int)ceil_mode, &w))
		return gc_kok(k);
	lp_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->w = w;
	st->p = p;
	st->channels = x->dims[0] * x->dims[1];
	st->in_sp = w.in[0] * w.in[1] * w.in[2];
	st->out_sp = w.out[0] * w.out[1] * w.out[2];
	int64_t dims[GC_MAX_RANK] = {x->dims[0], x->dims[1]};
	for (int i = 0; i < nsp; i++)
		dims[2 + i] = w.out[GC_NN_MAX_SPATIAL - nsp + i];
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, lp_run, 0);
	n->run = lp_run;
	return 0;
}
