/*
 * CumSum (exclusive and reverse variants; integer types summed exactly in
 * 64 bits, floating types in double) and EyeLike. Einsum is in einsum.c.
 */
#include <inttypes.h>
#include <string.h>

#include "../alloc.h"
#include "algebra.h"
#include "nn-par.h"
#include "shape-impl.h"
#include "value-impl.h"

/* ---- CumSum ------------------------------------------------------------- */

typedef struct cumsum_plan {
	int64_t outer, len, inner;
	bool exclusive, reverse;
} cumsum_plan;

/*
 * Units of work: a row block's columns, GC_NN_CHUNK at a time (nn-par.h),
 * their running sums on the stack, advancing together along the axis
 * (contiguous loads, a vector across columns), split over the threads; each
 * column sums in order, so the result does not depend on the split. Before,
 * each column was walked alone (a stride of the row block's width a step)
 * on one thread: [8, 64, 128, 64] on axis 2, 9.7 ms at one thread.
 */
#define GC_CUMSUM_(NAME, T, ACC)                                                                   \
	static void NAME(const cumsum_plan *p, const T *x, T *y, int64_t u0, int64_t u1)           \
	{                                                                                          \
		ACC s[GC_NN_CHUNK];                                                                \
		for (int64_t u = u0; u < u1; u++) {                                                \
			int64_t j0, w, o = gc_nn_chunk_at(u, p->inner, &j0, &w);                   \
			for (int64_t j = 0; j < w; j++)                                            \
				s[j] = 0;                                                          \
			for (int64_t t = 0; t < p->len; t++) {                                     \
				int64_t i = p->reverse ? p->len - 1 - t : t;                       \
				int64_t at = (o * p->len + i) * p->inner + j0;                     \
				const T *xr = x + at;                                              \
				T *yr = y + at;                                                    \
				if (p->exclusive)                                                  \
					for (int64_t j = 0; j < w; j++) {                          \
						ACC v = (ACC)xr[j];                                \
						yr[j] = (T)s[j];                                   \
						s[j] += v;                                         \
					}                                                          \
				else                                                               \
					for (int64_t j = 0; j < w; j++) {                          \
						s[j] += (ACC)xr[j];                                \
						yr[j] = (T)s[j];                                   \
					}                                                          \
			}                                                                          \
		}                                                                                  \
	}
GC_CUMSUM_(cumsum_f32, float, double)
GC_CUMSUM_(cumsum_f64, double, double)
GC_CUMSUM_(cumsum_i32, int32_t, int64_t)
GC_CUMSUM_(cumsum_i64, int64_t, uint64_t) /* wraps like the int64 sum it is */
GC_CUMSUM_(cumsum_u32, uint32_t, uint64_t)
GC_CUMSUM_(cumsum_u64, uint64_t, uint64_t)
#undef GC_CUMSUM_

static void cumsum_half(const cumsum_plan *p, const gc_tensor *x, gc_tensor *y, int64_t u0,
			int64_t u1)
{
	for (int64_t u = u0; u < u1; u++) { /* a unit a column here */
		int64_t o = u / p->inner, j = u % p->inner;
		double s = 0;
		for (int64_t t = 0; t < p->len; t++) {
			int64_t i = p->reverse ? p->len - 1 - t : t;
			int64_t at = (o * p->len + i) * p->inner + j;
			double v = gc_kv_load(x, at);
			if (p->exclusive) {
				gc_kv_store(y, at, s);
				s += v;
			} else {
				s += v;
				gc_kv_store(y, at, s);
			}
		}
	}
}

typedef struct cumsum_job {
	const cumsum_plan *p;
	const gc_tensor *x;
	gc_tensor *y;
} cumsum_job;

static int64_t cumsum_units(const cumsum_plan *p, gc_dtype dt)
{
	bool half = dt == GC_DTYPE_FLOAT16 || dt == GC_DTYPE_BFLOAT16;
	return half ? p->outer * p->inner : gc_nn_chunk_units(p->outer, p->inner);
}

static void cumsum_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const cumsum_job *j = arg;
	const cumsum_plan *p = j->p;
	const void *x = j->x->data;
	void *y = j->y->data;
	int64_t u0, u1;
	gc_nn_part_range(cumsum_units(p, j->x->dtype), part, parts, &u0, &u1);
	switch (j->x->dtype) {
	case GC_DTYPE_FLOAT:
		cumsum_f32(p, x, y, u0, u1);
		break;
	case GC_DTYPE_DOUBLE:
		cumsum_f64(p, x, y, u0, u1);
		break;
	case GC_DTYPE_INT32:
		cumsum_i32(p, x, y, u0, u1);
		break;
	case GC_DTYPE_INT64:
		cumsum_i64(p, x, y, u0, u1);
		break;
	case GC_DTYPE_UINT32:
		cumsum_u32(p, x, y, u0, u1);
		break;
	case GC_DTYPE_UINT64:
		cumsum_u64(p, x, y, u0, u1);
		break;
	default:
		cumsum_half(p, j->x, j->y, u0, u1);
		break;
	}
}

static int run_cumsum(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const cumsum_plan *p = n->state;
	cumsum_job j = {p, in[0], out[0]};
	/* ~2 cycles an element: a load, an add, a store */
	int t = gc_nn_par_threads(k->threads, 2.0 * (double)(p->outer * p->len * p->inner));
	gc_nn_run_parts(t, cumsum_units(p, in[0]->dtype), cumsum_part, &j);
	return 0;
}

int gc_prepare_CumSum(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t exclusive = gc_attr_i(k, "exclusive", 0), reverse = gc_attr_i(k, "reverse", 0);
	if (gc_kok(k))
		return gc_kok(k);
	switch (x->dtype) {
	case GC_DTYPE_FLOAT:
	case GC_DTYPE_DOUBLE:
	case GC_DTYPE_INT32:
	case GC_DTYPE_INT64:
	case GC_DTYPE_UINT32:
	case GC_DTYPE_UINT64:
	case GC_DTYPE_FLOAT16:
	case GC_DTYPE_BFLOAT16:
		break;
	default:
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'x' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	}
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input 'x' must have rank >= 1");
	int64_t axis, cnt;
	if (gc_const_ints(k, in[1], "axis", &axis, 1, &cnt))
		return gc_kok(k);
	if (cnt != 1)
		return gc_kerr(k, GC_EINVAL, "input 'axis' must hold one value, not %" PRId64, cnt);
	int32_t a;
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	cumsum_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->outer = 1;
	p->inner = 1;
	p->len = x->dims[a];
	for (int i = 0; i < a; i++)
		p->outer *= x->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		p->inner *= x->dims[i];
	p->exclusive = exclusive != 0;
	p->reverse = reverse != 0;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->run = run_cumsum;
	return 0;
}

/* ---- EyeLike ------------------------------------------------------------ */

static int run_eyelike(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)in;
	int64_t kk = *(const int64_t *)n->state;
	gc_tensor *y = out[0];
	if (gc_tensor_nbytes(y) > 0)
		memset(y->data, 0, (size_t)gc_tensor_nbytes(y));
	int64_t rows = y->dims[0], cols = y->dims[1];
	if (kk >= cols || kk <= -rows) /* no diagonal inside (and i + kk stays in int64) */
		return 0;
	for (int64_t i = 0; i < rows; i++) {
		int64_t j = i + kk;
		if (j >= 0 && j < cols)
			gc_kv_store(y, i * cols + j, 1.0);
	}
	return 0;
}

int gc_prepare_EyeLike(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t kk = gc_attr_i(k, "k", 0);
	int64_t dt = gc_attr_i(k, "dtype", (int64_t)x->dtype);
	if (gc_kok(k))
		return gc_kok(k);
	if (x->rank != 2)
		return gc_kerr(k, GC_EINVAL, "input must be 2-D, not rank %d", x->rank);
	if (dt <= 0 || dt >= GC_DTYPE_COUNT || !gc_kv_numeric((gc_dtype)dt))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attribute 'dtype' = %" PRId64 " is not supported", dt);
	int64_t *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	*st = kk;
	gc_set_shape(out[0], (gc_dtype)dt, 2, x->dims);
	n->run = run_eyelike;
	return 0;
}

/* ---- Det ---------------------------------------------------------------- */

static int run_det(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)n;
	const gc_tensor *x = in[0];
	int64_t m = x->dims[x->rank - 1], mats = gc_tensor_numel(out[0]);
	double *a = k->scratch;
	for (int64_t b = 0; b < mats; b++) {
		for (int64_t i = 0; i < m * m; i++)
			a[i] = gc_kv_load(x, b * m * m + i);
		double det = 1;
		for (int64_t c = 0; c < m; c++) {
			int64_t piv = c;
			for (int64_t r = c + 1; r < m; r++)
				if (fabs(a[r * m + c]) > fabs(a[piv * m + c]))
					piv = r;
			if (a[piv * m + c] == 0) {
				det = 0;
				break;
			}
			if (piv != c) {
				for (int64_t j = 0; j < m; j++) {
					double t = a[c * m + j];
					a[c * m + j] = a[piv * m + j];
					a[piv * m + j] = t;
				}
				det = -det;
			}
			det *= a[c * m + c];
			for (int64_t r = c + 1; r < m; r++) {
				double f = a[r * m + c] / a[c * m + c];
				for (int64_t j = c; j < m; j++)
					a[r * m + j] -= f * a[c * m + j];
			}
		}
		gc_kv_store(out[0], b, det);
	}
	return 0;
}

int gc_prepare_Det(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EINVAL, "input must be a floating-point tensor, not %s",
			       gc_dtype_name(x->dtype));
	if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return gc_kerr(k, GC_EINVAL, "input must be (..., M, M)");
	int64_t m = x->dims[x->rank - 1];
	gc_set_shape(out[0], x->dtype, x->rank - 2, x->dims);
	n->scratch_bytes = (uint64_t)(m * m > 0 ? m * m : 1) * sizeof(double);
	n->run = run_det;
	return 0;
}

/* ---- MeanVarianceNormalization -------------------------------------------- */

/* ONNX's function: (X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9) over axes. */
typedef struct mvn_plan {
	int64_t gstride[GC_MAX_RANK]; /* stride into the group array; 0 on reduced axes */
	int64_t groups, per_group;
} mvn_plan;

static int64_t mvn_group(const mvn_plan *p, const gc_tensor *x, int64_t i)
{
	int64_t g = 0;
	for (int d = x->rank - 1; d >= 0; d--) {
		g += (i % x->dims[d]) * p->gstride[d];
		i /= x->dims[d];
	}
	return g;
}

static int run_mvn(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const mvn_plan *p = n->state;
	const gc_tensor *x = in[0];
	double *s = k->scratch, *s2 = s + p->groups;
	memset(s, 0, (size_t)(2 * p->groups) * sizeof(double));
	int64_t total = gc_tensor_numel(x);
	for (int64_t i = 0; i < total; i++) {
		double v = gc_kv_load(x, i);
		int64_t g = mvn_group(p, x, i);
		s[g] += v;
		s2[g] += v * v;
	}
	for (int64_t g = 0; g < p->groups; g++) {
		s[g] /= (double)p->per_group;
		s2[g] = sqrt(s2[g] / (double)p->per_group - s[g] * s[g]) + 1e-9;
	}
	for (int64_t i = 0; i < total; i++) {
		int64_t g = mvn_group(p, x, i);
		gc_kv_store(out[0], i, (gc_kv_load(x, i) - s[g]) / s2[g]);
	}
	return 0;
}

int gc_prepare_MeanVarianceNormalization(gc_kctx *k, gc_node *n, gc_tensor *const *in,
					 gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	const int64_t *axes;
	static const int64_t def_axes[] = {0, 2, 3};
	int64_t na = gc_attr_ints(k, "axes", &axes);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_attr_find(n, "axes")) {
		axes = def_axes;
		na = 3;
	}
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EINVAL, "input must be a floating-point tensor, not %s",
			       gc_dtype_name(x->dtype));
	bool red[GC_MAX_RANK] = {false};
	for (int64_t i = 0; i < na; i++) {
		int32_t a;
		if (gc_axis(k, axes[i], x->rank, &a))
			return gc_kok(k);
		red[a] = true;
	}
	mvn_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->groups = 1;
	p->per_group = 1;
	for (int d = x->rank - 1; d >= 0; d--) {
		p->gstride[d] = red[d] ? 0 : p->groups;
		if (red[d])
			p->per_group *= x->dims[d];
		else
			p->groups *= x->dims[d];
	}
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->scratch_bytes = 2 * (uint64_t)(p->groups > 0 ? p->groups : 1) * sizeof(double);
	n->run = run_mvn;
	return 0;
}
