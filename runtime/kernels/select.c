/*
 * Ops that pick elements by their values: TopK (stable: among equal values
 * the lower index first, as ONNX's reference), Hardmax (the first maximum),
 * NonZero and Compress. NonZero's and Compress's output shapes depend on
 * input values, so those inputs must be known when the program is built
 * (constants, or values given to `graphcc run`).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc.h"
#include "../ops.h" /* gc_prepare_ScatterElements, for Scatter */
#include "nn-par.h"
#include "select.h"
#include "shape-impl.h"
#include "value-impl.h"

/* A tensor viewed as (outer, len, inner) around one axis. */
typedef struct axis_view {
	int64_t outer, len, inner;
} axis_view;

static axis_view view_at(const gc_tensor *x, int32_t axis)
{
	axis_view v = {1, x->dims[axis], 1};
	for (int i = 0; i < axis; i++)
		v.outer *= x->dims[i];
	for (int i = axis + 1; i < x->rank; i++)
		v.inner *= x->dims[i];
	return v;
}

/* ---- TopK --------------------------------------------------------------- */

/*
 * Each slice along the axis: with k under a quarter of its length, the k
 * best kept in a heap whose root is the worst of them, each element
 * compared with the root first (most are not better: one comparison each),
 * then the k sorted; otherwise the whole slice sorted. Slices are split over
 * the threads, each with its own buffer in scratch. A whole sort of 4M
 * floats for k = 100 had taken 1.0 s (issue 19).
 */
#define TOPK_SLOTS 8
#define TOPK_SCRATCH ((uint64_t)16 << 20)

typedef struct topk_plan {
	axis_view v;
	int64_t k;
	bool largest, heap;
	int slots;	     /* buffers in scratch */
	uint64_t slot_bytes; /* one's size */
} topk_plan;

typedef struct topk_item {
	double v;
	int64_t i;
} topk_item;

typedef int (*topk_cmp)(const void *, const void *);

static int cmp_largest(const void *a, const void *b)
{
	const topk_item *x = a, *y = b;
	/* NaN sorts as the largest, as NumPy's sort puts it last */
	bool xn = isnan(x->v), yn = isnan(y->v);
	if (xn != yn)
		return xn ? -1 : 1;
	if (x->v != y->v && !xn)
		return x->v > y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int cmp_smallest(const void *a, const void *b)
{
	const topk_item *x = a, *y = b;
	bool xn = isnan(x->v), yn = isnan(y->v);
	if (xn != yn)
		return xn ? 1 : -1;
	if (x->v != y->v && !xn)
		return x->v < y->v ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Restores the heap h[0, n) below i: every item sorts after its children. */
static void topk_down(topk_item *h, int64_t n, int64_t i, topk_cmp cmp)
{
	for (;;) {
		int64_t l = 2 * i + 1, w = i;
		if (l < n && cmp(&h[l], &h[w]) > 0)
			w = l;
		if (l + 1 < n && cmp(&h[l + 1], &h[w]) > 0)
			w = l + 1;
		if (w == i)
			return;
		topk_item t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

/* The slice at base into it[0, k), in order. */
static void topk_slice(const topk_plan *p, const gc_tensor *x, int64_t base, topk_item *it)
{
	topk_cmp cmp = p->largest ? cmp_largest : cmp_smallest;
	int64_t len = p->v.len, step = p->v.inner, k = p->k;
	int64_t first = p->heap ? k : len;
	for (int64_t i = 0; i < first; i++)
		it[i] = (topk_item){gc_kv_load(x, base + i * step), i};
	if (p->heap && k > 0) {
		for (int64_t i = k / 2; i-- > 0;)
			topk_down(it, k, i, cmp);
		double worst = it[0].v;
		for (int64_t i = k; i < len; i++) {
			double v = gc_kv_load(x, base + i * step);
			/* sorts before the worst kept (a later index loses a tie) */
			bool better = p->largest ? v > worst || (isnan(v) && !isnan(worst))
						 : v < worst || (isnan(worst) && !isnan(v));
			if (!better)
				continue;
			it[0] = (topk_item){v, i};
			topk_down(it, k, 0, cmp);
			worst = it[0].v;
		}
	}
	qsort(it, (size_t)first, sizeof *it, cmp);
}

typedef struct topk_job {
	const topk_plan *p;
	const gc_tensor *x;
	gc_tensor *const *out;
	char *scratch;
} topk_job;

static void topk_part(void *arg, int part, int parts, int slot)
{
	const topk_job *j = arg;
	const topk_plan *p = j->p;
	topk_item *it = (topk_item *)(j->scratch + (uint64_t)slot * p->slot_bytes);
	size_t es = gc_dtype_size(j->x->dtype);
	int64_t *ind = j->out[1]->data, s0, s1;
	gc_nn_part_range(p->v.outer * p->v.inner, part, parts, &s0, &s1);
	for (int64_t s = s0; s < s1; s++) {
		int64_t o = s / p->v.inner, jj = s % p->v.inner;
		int64_t base = o * p->v.len * p->v.inner + jj;
		topk_slice(p, j->x, base, it);
		int64_t obase = o * p->k * p->v.inner + jj;
		for (int64_t i = 0; i < p->k; i++) {
			int64_t oi = obase + i * p->v.inner;
			/* copy the element's bytes: exact for every type */
			memcpy((char *)j->out[0]->data + oi * (int64_t)es,
			       (const char *)j->x->data + (base + it[i].i * p->v.inner) * (int64_t)es,
			       es);
			ind[oi] = it[i].i;
		}
	}
}

static int run_topk(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const topk_plan *p = n->state;
	topk_job j = {p, in[0], out, k->scratch};
	int64_t slices = p->v.outer * p->v.inner;
	int t = gc_nn_par_threads(k->threads < p->slots ? k->threads : p->slots,
				  (double)slices * (double)p->v.len * 4);
	gc_nn_parallel(t, gc_nn_par_parts(t, slices), topk_part, &j);
	return 0;
}

int gc_prepare_TopK(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t axis = gc_attr_i(k, "axis", -1), largest = gc_attr_i(k, "largest", 1);
	(void)gc_attr_i(k, "sorted", 1); /* sorted output is one valid order for sorted=0 too */
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_numeric(x->dtype) || x->dtype == GC_DTYPE_BOOL)
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'X' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input 'X' must have rank >= 1");
	int32_t a;
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	int64_t kv, cnt;
	if (!in[1])
		return gc_kerr(k, GC_EINVAL, "input 'K' is missing");
	if (gc_const_ints(k, in[1], "K", &kv, 1, &cnt))
		return gc_kok(k);
	if (cnt != 1)
		return gc_kerr(k, GC_EINVAL, "input 'K' must hold one value, not %" PRId64, cnt);
	if (kv < 0 || kv > x->dims[a])
		return gc_kerr(k, GC_EINVAL,
			       "K = %" PRId64 " is outside [0, %" PRId64 "] (axis %d)", kv,
			       x->dims[a], a);
	topk_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->v = view_at(x, a);
	p->k = kv;
	p->largest = largest != 0;
	int64_t dims[GC_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	dims[a] = kv;
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	gc_set_shape(out[1], GC_DTYPE_INT64, x->rank, dims);
	p->heap = kv < p->v.len / 4;
	int64_t slices = p->v.outer * p->v.inner, items = p->heap ? kv : p->v.len;
	p->slot_bytes = ((uint64_t)(items > 0 ? items : 1) * sizeof(topk_item) + 63) & ~(uint64_t)63;
	/* a buffer a thread, but more than one only while they take under
	 * TOPK_SCRATCH together: long slices sorted whole keep to one thread
	 * rather than multiply the node's memory by eight */
	p->slots = slices < TOPK_SLOTS ? (int)(slices > 0 ? slices : 1) : TOPK_SLOTS;
	while (p->slots > 1 && (uint64_t)p->slots * p->slot_bytes > TOPK_SCRATCH)
		p->slots--;
	n->scratch_bytes = (uint64_t)p->slots * p->slot_bytes;
	n->run = run_topk;
	return 0;
}

/* ---- Hardmax ------------------------------------------------------------ */

static int run_hardmax(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const axis_view *v = n->state;
	const gc_tensor *x = in[0];
	size_t nb = (size_t)gc_tensor_nbytes(out[0]);
	if (nb) /* (an empty output may have no memory at all) */
		memset(out[0]->data, 0, nb);
	for (int64_t o = 0; o < v->outer; o++)
		for (int64_t j = 0; j < v->inner; j++) {
			int64_t base = o * v->len * v->inner + j, best = 0;
			double bv = -INFINITY;
			for (int64_t i = 0; i < v->len; i++) {
				double e = gc_kv_load(x, base + i * v->inner);
				if (e > bv || (i == 0)) {
					bv = e;
					best = i;
				}
			}
			if (v->len > 0)
				gc_kv_store(out[0], base + best * v->inner, 1.0);
		}
	return 0;
}

int gc_prepare_Hardmax(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	/* opset < 13: the input is coerced to 2-D at axis (default 1) */
	int64_t axis = gc_attr_i(k, "axis", n->opset >= 13 ? -1 : 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EINVAL, "input must be a floating-point tensor, not %s",
			       gc_dtype_name(x->dtype));
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input must have rank >= 1");
	axis_view *v = gc_kstate(k, n, sizeof *v);
	if (!v)
		return gc_kok(k);
	if (n->opset >= 13) {
		int32_t a;
		if (gc_axis(k, axis, x->rank, &a))
			return gc_kok(k);
		*v = view_at(x, a);
	} else {
		if (axis < 0)
			axis += x->rank;
		if (axis < 0 || axis > x->rank)
			return gc_kerr(k, GC_EINVAL, "axis %" PRId64 " is out of range for rank %d",
				       axis, x->rank);
		v->outer = 1;
		v->len = 1;
		v->inner = 1;
		for (int i = 0; i < axis; i++)
			v->outer *= x->dims[i];
		for (int i = (int)axis; i < x->rank; i++)
			v->len *= x->dims[i];
	}
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->run = run_hardmax;
	return 0;
}

/* ---- NonZero ------------------------------------------------------------ */

static int run_nonzero(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)n;
	const gc_tensor *x = in[0];
	int64_t total = gc_tensor_numel(x), nnz = out[0]->dims[1], at = 0;
	int64_t *y = out[0]->data;
	int64_t strides[GC_MAX_RANK];
	gc_strides(x->dims, x->rank, strides);
	for (int64_t i = 0; i < total && at < nnz; i++) {
		if (gc_kv_load(x, i) == 0)
			continue;
		int64_t r = i;
		for (int d = 0; d < x->rank; d++) {
			y[d * nnz + at] = r / strides[d];
			r %= strides[d];
		}
		at++;
	}
	return 0;
}

int gc_prepare_NonZero(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (!gc_kv_numeric(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'X' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	if (!x->data)
		return gc_kneed_value(
		    k,
		    "the output's shape depends on the values of input 'X', which are not "
		    "known when the program is built (give them as a constant or an input "
		    "value)");
	int64_t total = gc_tensor_numel(x), nnz = 0;
	for (int64_t i = 0; i < total; i++)
		nnz += gc_kv_load(x, i) != 0;
	int64_t dims[2] = {x->rank, nnz};
	gc_set_shape(out[0], GC_DTYPE_INT64, 2, dims);
	n->run = run_nonzero;
	return 0;
}

/* ---- Compress ----------------------------------------------------------- */

typedef struct compress_plan {
	axis_view v;  /* of the input (flattened when there is no axis) */
	int64_t kept; /* slices kept */
	size_t esize;
	int64_t sel[]; /* the kept indices along the axis */
} compress_plan;

static int run_compress(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const compress_plan *p = n->state;
	const char *x = in[0]->data;
	char *y = out[0]->data;
	size_t row = (size_t)p->v.inner * p->esize;
	for (int64_t o = 0; o < p->v.outer; o++)
		for (int64_t i = 0; i < p->kept; i++)
			memcpy(y + (size_t)(o * p->kept + i) * row,
			       x + (size_t)(o * p->v.len + p->sel[i]) * row, row);
	return 0;
}

int gc_prepare_Compress(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *c = in[1];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	if (!es)
		return gc_kok(k);
	const gc_attr *has_axis = gc_attr_find(n, "axis");
	int64_t axis = gc_attr_i(k, "axis", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (c->dtype != GC_DTYPE_BOOL || c->rank != 1)
		return gc_kerr(k, GC_EINVAL, "input 'condition' must be a 1-D bool tensor");
	if (!c->data)
		return gc_kneed_value(
		    k,
		    "the output's shape depends on the values of input 'condition', which "
		    "are not known when the program is built");
	axis_view v;
	int32_t a = 0;
	if (has_axis) {
		if (gc_axis(k, axis, x->rank, &a))
			return gc_kok(k);
		v = view_at(x, a);
	} else {
		v.outer = 1;
		v.inner = 1;
		v.len = gc_tensor_numel(x);
	}
	int64_t clen = c->dims[0] < v.len ? c->dims[0] : v.len, kept = 0;
	const uint8_t *cv = c->data;
	for (int64_t i = 0; i < clen; i++)
		kept += cv[i] != 0;
	compress_plan *p =
	    gc_kstate(k, n, sizeof *p + (size_t)(kept > 0 ? kept : 1) * sizeof(int64_t));
	if (!p)
		return gc_kok(k);
	p->v = v;
	p->kept = kept;
	p->esize = es;
	for (int64_t i = 0, j = 0; i < clen; i++)
		if (cv[i])
			p->sel[j++] = i;
	if (has_axis) {
		int64_t dims[GC_MAX_RANK];
		memcpy(dims, x->dims, sizeof dims);
		dims[a] = kept;
		gc_set_shape(out[0], x->dtype, x->rank, dims);
	} else {
		gc_set_shape(out[0], x->dtype, 1, &kept);
	}
	n->run = run_compress;
	return 0;
}

/* ---- Scatter (opsets 9-10: ScatterElements' former name) ------------------ */

int gc_prepare_Scatter(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return gc_prepare_ScatterElements(k, n, in, out);
}

/* ---- ReverseSequence ---------------------------------------------------- */

typedef struct revseq_plan {
	int32_t batch_axis, time_axis;
	size_t esize;
} revseq_plan;

static int run_revseq(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const revseq_plan *p = n->state;
	const gc_tensor *x = in[0];
	int64_t total = gc_tensor_numel(x), strides[GC_MAX_RANK];
	gc_strides(x->dims, x->rank, strides);
	int64_t tlen = x->dims[p->time_axis];
	for (int64_t i = 0; i < total; i++) {
		int64_t b = i / strides[p->batch_axis] % x->dims[p->batch_axis];
		int64_t t = i / strides[p->time_axis] % tlen;
		int64_t len = gc_index_at(in[1], b);
		if (len < 0 || len > tlen)
			return gc_kerr(k, GC_EINVAL,
				       "sequence_lens[%" PRId64 "] = %" PRId64
				       " is outside [0, %" PRId64 "]",
				       b, len, tlen);
		int64_t src = t < len ? i + (len - 1 - 2 * t) * strides[p->time_axis] : i;
		memcpy((char *)out[0]->data + i * (int64_t)p->esize,
		       (const char *)x->data + src * (int64_t)p->esize, p->esize);
	}
	return 0;
}

int gc_prepare_ReverseSequence(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *l = in[1];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	if (!es)
		return gc_kok(k);
	int64_t ba = gc_attr_i(k, "batch_axis", 1), ta = gc_attr_i(k, "time_axis", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (x->rank < 2)
		return gc_kerr(k, GC_EINVAL, "input 'input' must have rank >= 2");
	if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
		return gc_kerr(
		    k, GC_EINVAL,
		    "batch_axis (%" PRId64 ") and time_axis (%" PRId64 ") must be 0 and 1", ba, ta);
	if (gc_check_index_type(k, l, "sequence_lens"))
		return gc_kok(k);
	if (l->rank != 1 || l->dims[0] != x->dims[ba])
		return gc_kerr(k, GC_EINVAL,
			       "input 'sequence_lens' must be 1-D of the batch size %" PRId64,
			       x->dims[ba]);
	revseq_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->batch_axis = (int32_t)ba;
	p->time_axis = (int32_t)ta;
	p->esize = es;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->run = run_revseq;
	return 0;
}

/* ---- Unique ------------------------------------------------------------- */

/*
 * Everything is computed at build time (the output shapes depend on the
 * values): the plan holds the kept slices and the index outputs.
 */
typedef struct unique_plan {
	axis_view v;
	size_t esize;
	int64_t nu, len;
	int64_t *first, *inverse, *counts; /* nu, len, nu entries */
	int64_t data[];
} unique_plan;

typedef struct unique_cmp_ctx {
	const gc_tensor *x;
	axis_view v;
} unique_cmp_ctx;

/* Lexicographic comparison of slices a and b (NumPy's order for axis); NaN
 * equals NaN and sorts after every number, as NumPy's unique does. */
static int slice_cmp(const unique_cmp_ctx *c, int64_t a, int64_t b)
{
	for (int64_t o = 0; o < c->v.outer; o++)
		for (int64_t j = 0; j < c->v.inner; j++) {
			double x = gc_kv_load(c->x, (o * c->v.len + a) * c->v.inner + j);
			double y = gc_kv_load(c->x, (o * c->v.len + b) * c->v.inner + j);
			int xn = x != x, yn = y != y;
			if (xn || yn) {
				if (xn != yn)
					return xn ? 1 : -1;
				continue;
			}
			if (x != y)
				return x < y ? -1 : 1;
		}
	return 0;
}

/* Slice order, ties by position: a total order, so the sort is stable. */
static int slice_order(const void *pa, const void *pb, void *ctx)
{
	int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
	int r = slice_cmp(ctx, a, b);
	return r ? r : (a > b) - (a < b);
}

/* Unique ids by first occurrence (for sorted=0). */
static int first_order(const void *pa, const void *pb, void *ctx)
{
	const int64_t *first = ctx;
	int64_t a = first[*(const int64_t *)pa], b = first[*(const int64_t *)pb];
	return (a > b) - (a < b);
}

static int run_unique(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const unique_plan *p = n->state;
	const char *x = in[0]->data;
	size_t row = (size_t)p->v.inner * p->esize;
	for (int64_t o = 0; o < p->v.outer; o++)
		for (int64_t u = 0; u < p->nu; u++)
			memcpy((char *)out[0]->data + (size_t)(o * p->nu + u) * row,
			       x + (size_t)(o * p->len + p->first[u]) * row, row);
	const int64_t *src[3] = {p->first, p->inverse, p->counts};
	int64_t cnt[3] = {p->nu, p->len, p->nu};
	for (int i = 1; i < 4; i++)
		if (i < n->n_out && out[i] && (!n->out || n->out[i] >= 0))
			gc_copy_bytes(1, out[i]->data, src[i - 1], (size_t)cnt[i - 1] * sizeof(int64_t));
	return 0;
}

int gc_prepare_Unique(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'X'");
	if (!es)
		return gc_kok(k);
	const gc_attr *has_axis = gc_attr_find(n, "axis");
	int64_t axis = gc_attr_i(k, "axis", 0), sorted = gc_attr_i(k, "sorted", 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_numeric(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED, "input 'X' of type %s is not supported",
			       gc_dtype_name(x->dtype));
	if (!x->data)
		return gc_kneed_value(
		    k,
		    "the outputs' shapes depend on the values of input 'X', which are not "
		    "known when the program is built");
	unique_cmp_ctx c = {x, {1, gc_tensor_numel(x), 1}};
	int32_t a = 0;
	if (has_axis) {
		if (gc_axis(k, axis, x->rank, &a))
			return gc_kok(k);
		c.v = view_at(x, a);
	}
	int64_t len = c.v.len;
	unique_plan *p = gc_malloc(sizeof *p + (size_t)(3 * len + 1) * sizeof(int64_t));
	int64_t *tmp = gc_malloc((size_t)(4 * len + 1) * sizeof(int64_t));
	if (!p || !tmp) {
		gc_free(p);
		gc_free(tmp);
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	}
	p->v = c.v;
	p->esize = es;
	p->len = len;
	p->first = p->data;
	p->counts = p->data + len;
	p->inverse = p->data + 2 * len;
	n->state = p;
	/* Sort the positions by slice, then group equal neighbours: unique id
	 * u in sorted order, its first position the group's smallest. */
	int64_t *order = tmp, *rank = tmp + len, nu = 0;
	for (int64_t i = 0; i < len; i++)
		order[i] = i;
	qsort_r(order, (size_t)len, sizeof *order, slice_order, &c);
	for (int64_t r = 0; r < len; r++) {
		int64_t i = order[r];
		if (!r || slice_cmp(&c, order[r - 1], i)) {
			p->first[nu] = i;
			p->counts[nu++] = 0;
		}
		p->counts[nu - 1]++;
		p->inverse[i] = nu - 1;
	}
	p->nu = nu;
	if (!sorted) {
		/* number the unique slices by first occurrence instead */
		int64_t *nf = rank + len, *nc = nf + len;
		for (int64_t u = 0; u < nu; u++)
			order[u] = u;
		qsort_r(order, (size_t)nu, sizeof *order, first_order, p->first);
		for (int64_t r = 0; r < nu; r++) {
			rank[order[r]] = r;
			nf[r] = p->first[order[r]];
			nc[r] = p->counts[order[r]];
		}
		memcpy(p->first, nf, (size_t)nu * sizeof *nf);
		memcpy(p->counts, nc, (size_t)nu * sizeof *nc);
		for (int64_t i = 0; i < len; i++)
			p->inverse[i] = rank[p->inverse[i]];
	}
	gc_free(tmp);
	if (has_axis) {
		int64_t dims[GC_MAX_RANK];
		memcpy(dims, x->dims, sizeof dims);
		dims[a] = nu;
		gc_set_shape(out[0], x->dtype, x->rank, dims);
	} else {
		gc_set_shape(out[0], x->dtype, 1, &nu);
	}
	int64_t cnt[3] = {nu, len, nu};
	for (int i = 1; i < 4; i++)
		if (i < n->n_out && out[i])
			gc_set_shape(out[i], GC_DTYPE_INT64, 1, &cnt[i - 1]);
	n->run = run_unique;
	return 0;
}

/* ---- MaxUnpool ---------------------------------------------------------- */

/*
 * Zeros, then y[I[i]] = X[i]: I holds flat indices into the unpooled shape
 * that kernel_shape, strides and pads give (as MaxPool's Indices output),
 * even when output_shape asks for a bigger output; each index is then
 * placed at the same coordinates in the output, as ONNX's test expects.
 */
typedef struct unpool_plan {
	int32_t rank;
	int64_t idims[GC_MAX_RANK]; /* the inferred shape the indices refer to */
} unpool_plan;

static int run_maxunpool(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const unpool_plan *p = n->state;
	const gc_tensor *x = in[0], *ind = in[1];
	size_t es = gc_dtype_size(x->dtype);
	int64_t total = gc_tensor_numel(x), limit = 1;
	for (int d = 0; d < p->rank; d++)
		limit *= p->idims[d];
	memset(out[0]->data, 0, (size_t)gc_tensor_nbytes(out[0]));
	for (int64_t i = 0; i < total; i++) {
		int64_t j = gc_index_at(ind, i), r = j, o = 0, mul = 1;
		if (j < 0 || j >= limit)
			return gc_kerr(k, GC_EINVAL,
				       "index %" PRId64 " at flat position %" PRId64
				       " is outside the unpooled shape's %" PRId64 " elements",
				       j, i, limit);
		for (int d = p->rank - 1; d >= 0; d--) {
			int64_t c = r % p->idims[d];
			r /= p->idims[d];
			if (c >= out[0]->dims[d])
				return gc_kerr(k, GC_EINVAL,
					       "index %" PRId64 " falls outside output_shape", j);
			o += c * mul;
			mul *= out[0]->dims[d];
		}
		memcpy((char *)out[0]->data + o * (int64_t)es,
		       (const char *)x->data + i * (int64_t)es, es);
	}
	return 0;
}

int gc_prepare_MaxUnpool(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *ind = in[1];
	size_t es = gc_shape_esize(k, x, "input 'X'");
	if (!es || gc_check_index_type(k, ind, "I"))
		return gc_kok(k);
	const int64_t *ks, *pads, *strides;
	int64_t nk = gc_attr_ints(k, "kernel_shape", &ks);
	int64_t np_ = gc_attr_ints(k, "pads", &pads);
	int64_t ns = gc_attr_ints(k, "strides", &strides);
	if (gc_kok(k))
		return gc_kok(k);
	int sp = x->rank - 2;
	if (sp < 1 || nk != sp || (np_ && np_ != 2 * sp) || (ns && ns != sp))
		return gc_kerr(k, GC_EINVAL,
			       "kernel_shape (%" PRId64 "), pads (%" PRId64
			       ") and strides (%" PRId64 ") do not fit %d spatial axes",
			       nk, np_, ns, sp);
	if (gc_tensor_numel(ind) != gc_tensor_numel(x))
		return gc_kerr(k, GC_EINVAL, "input 'I' must have X's shape");
	int64_t dims[GC_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	for (int i = 0; i < sp; i++)
		dims[2 + i] = (x->dims[2 + i] - 1) * (ns ? strides[i] : 1) -
			      (np_ ? pads[i] + pads[sp + i] : 0) + ks[i];
	unpool_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->rank = x->rank;
	memcpy(p->idims, dims, sizeof p->idims);
	if (n->n_in > 2 && in[2]) {
		int64_t cnt, shp[GC_MAX_RANK];
		if (gc_const_ints(k, in[2], "output_shape", shp, GC_MAX_RANK, &cnt))
			return gc_kok(k);
		if (cnt != x->rank)
			return gc_kerr(k, GC_EINVAL,
				       "input 'output_shape' has %" PRId64 " values for rank %d",
				       cnt, x->rank);
		memcpy(dims, shp, sizeof(int64_t) * (size_t)cnt);
	}
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	n->run = run_maxunpool;
	return 0;
}
