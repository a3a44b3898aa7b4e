/*
 * Shape kernels, part 3: ops driven by index tensors. Gather, GatherElements,
 * GatherND, ScatterElements, ScatterND and OneHot. Index values may only be
 * known at run time, so the run functions check every index and report the
 * first bad one instead of reading out of bounds.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "../ops.h"
#include "kutil.h"
#include "nn-par.h"
#include "shape-impl.h"

static void copy_elem(char *dst, const char *src, size_t es)
{
	switch (es) {
	case 1:
		*dst = *src;
		break;
	case 2:
		memcpy(dst, src, 2);
		break;
	case 4:
		memcpy(dst, src, 4);
		break;
	case 8:
		memcpy(dst, src, 8);
		break;
	default:
		memcpy(dst, src, es);
	}
}

/* Checks index v against an axis of size dim; returns it in [0, dim). */
static int check_index(gc_kctx *k, const char *what, int64_t at, int64_t v, int axis, int64_t dim,
		       int64_t *out)
{
	*out = 0;
	if (v < -dim || v >= dim)
		return gc_kerr(k, GC_EINVAL,
			       "%s element %" PRId64 " is %" PRId64 ", out of range [-%" PRId64
			       ", %" PRId64 "] for axis %d of size %" PRId64,
			       what, at, v, dim, dim - 1, axis, dim);
	*out = v < 0 ? v + dim : v;
	return 0;
}

static int64_t prod(const int64_t *d, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++)
		p *= d[i];
	return p;
}

/* ---- Gather ------------------------------------------------------------- */

typedef struct gather_plan {
	int32_t axis;
	int64_t outer, dim, inner_bytes;
} gather_plan;

typedef struct gather_job {
	const gather_plan *p;
	const gc_tensor *ind;
	const char *src;
	char *dst;
	int64_t nidx;
} gather_job;

/* Rows [lo, hi) of the output (outer x indices rows of inner_bytes). */
static void gather_rows(const gather_job *j, int64_t lo, int64_t hi)
{
	const gather_plan *p = j->p;
	int64_t ib = p->inner_bytes;
	char *dst = j->dst + lo * ib;
	for (int64_t r = lo; r < hi; r++, dst += ib) {
		int64_t o = r / j->nidx, v = gc_index_at(j->ind, r % j->nidx);
		const char *row = j->src + (o * p->dim + (v < 0 ? v + p->dim : v)) * ib;
		if (ib == 4)
			memcpy(dst, row, 4);
		else if (ib == 8)
			memcpy(dst, row, 8);
		else
			memcpy(dst, row, (size_t)ib);
	}
}

static void gather_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const gather_job *j = arg;
	int64_t lo, hi;
	gc_nn_part_range(j->p->outer * j->nidx, part, parts, &lo, &hi);
	gather_rows(j, lo, hi);
}

static int run_gather(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gather_plan *p = n->state;
	const gc_tensor *ind = in[1];
	int64_t nidx = gc_tensor_numel(ind), v;
	for (int64_t i = 0; i < nidx; i++)
		if (check_index(k, "indices", i, gc_index_at(ind, i), p->axis, p->dim, &v))
			return gc_kok(k);
	gather_job j = {p, ind, in[0]->data, out[0]->data, nidx};
	int64_t rows = p->outer * nidx;
	/* a copy, ~4 bytes a cycle, and a few cycles a row (runtime/kernels/
	 * shape-move.c's Concat): rows split over the threads */
	int t = gc_nn_par_threads(k->threads, (double)rows * (double)(p->inner_bytes / 4 + 8));
	gc_nn_run_parts(t, rows, gather_part, &j);
	return 0;
}

int gc_prepare_Gather(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *ind = in[1];
	size_t es = gc_shape_esize(k, x, "input 'data'");
	if (!es || gc_check_index_type(k, ind, "indices"))
		return gc_kok(k);
	int64_t axis = gc_attr_i(k, "axis", 0);
	if (gc_kok(k))
		return gc_kok(k);
	int32_t a;
	if (x->rank == 0)
		return gc_kerr(k, GC_EINVAL, "input 'data' must have rank >= 1");
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	int32_t orank = x->rank - 1 + ind->rank;
	if (orank > GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED, "output rank %d is above %d", orank,
			       GC_MAX_RANK);
	int64_t dims[GC_MAX_RANK], v;
	int r = 0;
	for (int i = 0; i < a; i++)
		dims[r++] = x->dims[i];
	for (int i = 0; i < ind->rank; i++)
		dims[r++] = ind->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		dims[r++] = x->dims[i];
	if (ind->data) /* known indices: report a bad one now rather than at run time */
		for (int64_t i = 0; i < gc_tensor_numel(ind); i++)
			if (check_index(k, "indices", i, gc_index_at(ind, i), a, x->dims[a], &v))
				return gc_kok(k);
	gather_plan *p = gc_malloc(sizeof *p);
	if (!p)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	p->axis = a;
	p->outer = prod(x->dims, 0, a);
	p->dim = x->dims[a];
	p->inner_bytes = prod(x->dims, a + 1, x->rank) * (int64_t)es;
	n->state = p;
	gc_set_shape(out[0], x->dtype, orank, dims);
	n->run = run_gather;
	return 0;
}

/* ---- element-wise reductions for the scatters --------------------------- */

typedef void (*combine_fn)(void *dst, const void *src);

/* U: an unsigned type wide enough that wrapping add/mul is defined. */
#define GC_COMB_INT_(sfx, T, U)                                                                    \
	static void add_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		T a, b;                                                                            \
		memcpy(&a, d, sizeof a);                                                           \
		memcpy(&b, s, sizeof b);                                                           \
		a = (T)((U)a + (U)b);                                                              \
		memcpy(d, &a, sizeof a);                                                           \
	}                                                                                          \
	static void mul_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		T a, b;                                                                            \
		memcpy(&a, d, sizeof a);                                                           \
		memcpy(&b, s, sizeof b);                                                           \
		a = (T)((U)a * (U)b);                                                              \
		memcpy(d, &a, sizeof a);                                                           \
	}                                                                                          \
	static void max_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		T a, b;                                                                            \
		memcpy(&a, d, sizeof a);                                                           \
		memcpy(&b, s, sizeof b);                                                           \
		if (b > a)                                                                         \
			memcpy(d, &b, sizeof b);                                                   \
	}                                                                                          \
	static void min_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		T a, b;                                                                            \
		memcpy(&a, d, sizeof a);                                                           \
		memcpy(&b, s, sizeof b);                                                           \
		if (b < a)                                                                         \
			memcpy(d, &b, sizeof b);                                                   \
	}

GC_COMB_INT_(i8, int8_t, unsigned)
GC_COMB_INT_(u8, uint8_t, unsigned)
GC_COMB_INT_(i16, int16_t, unsigned)
GC_COMB_INT_(u16, uint16_t, unsigned)
GC_COMB_INT_(i32, int32_t, uint32_t)
GC_COMB_INT_(u32, uint32_t, uint32_t)
GC_COMB_INT_(i64, int64_t, uint64_t)
GC_COMB_INT_(u64, uint64_t, uint64_t)
GC_COMB_INT_(f32, float, float)
GC_COMB_INT_(f64, double, double)

#define GC_COMB_HALF_(sfx, TO_F, FROM_F)                                                           \
	static float sfx##_ld(const void *p)                                                       \
	{                                                                                          \
		uint16_t h;                                                                        \
		memcpy(&h, p, 2);                                                                  \
		return TO_F(h);                                                                    \
	}                                                                                          \
	static void sfx##_st(void *p, float f)                                                     \
	{                                                                                          \
		uint16_t h = FROM_F(f);                                                            \
		memcpy(p, &h, 2);                                                                  \
	}                                                                                          \
	static void add_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		sfx##_st(d, sfx##_ld(d) + sfx##_ld(s));                                            \
	}                                                                                          \
	static void mul_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		sfx##_st(d, sfx##_ld(d) * sfx##_ld(s));                                            \
	}                                                                                          \
	static void max_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		if (sfx##_ld(s) > sfx##_ld(d))                                                     \
			memcpy(d, s, 2);                                                           \
	}                                                                                          \
	static void min_##sfx(void *d, const void *s)                                              \
	{                                                                                          \
		if (sfx##_ld(s) < sfx##_ld(d))                                                     \
			memcpy(d, s, 2);                                                           \
	}

GC_COMB_HALF_(f16, gc_f16_to_f32, gc_f32_to_f16)
GC_COMB_HALF_(bf16, gc_bf16_to_f32, gc_f32_to_bf16)

/* bool: add is or, mul is and (NumPy's semantics). */
static void add_b(void *d, const void *s)
{
	*(uint8_t *)d = *(uint8_t *)d || *(const uint8_t *)s;
}
static void mul_b(void *d, const void *s)
{
	*(uint8_t *)d = *(uint8_t *)d && *(const uint8_t *)s;
}

/* The combine for `reduction`; *fn NULL for "none". */
static int pick_combine(gc_kctx *k, gc_dtype dt, combine_fn *fn)
{
	*fn = NULL;
	const char *red = gc_attr_s(k, "reduction", "none");
	if (gc_kok(k))
		return gc_kok(k);
	int op;
	if (!strcmp(red, "none"))
		return 0;
	else if (!strcmp(red, "add"))
		op = 0;
	else if (!strcmp(red, "mul"))
		op = 1;
	else if (!strcmp(red, "max"))
		op = 2;
	else if (!strcmp(red, "min"))
		op = 3;
	else
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'reduction' is '%s', expected none, add, mul, max or min",
			       red);
#define GC_PICK_(sfx)                                                                              \
	{                                                                                          \
		combine_fn f_[4] = {add_##sfx, mul_##sfx, max_##sfx, min_##sfx};                   \
		*fn = f_[op];                                                                      \
	}                                                                                          \
	break;
	switch (dt) {
	case GC_DTYPE_INT8:
		GC_PICK_(i8)
	case GC_DTYPE_UINT8:
		GC_PICK_(u8)
	case GC_DTYPE_INT16:
		GC_PICK_(i16)
	case GC_DTYPE_UINT16:
		GC_PICK_(u16)
	case GC_DTYPE_INT32:
		GC_PICK_(i32)
	case GC_DTYPE_UINT32:
		GC_PICK_(u32)
	case GC_DTYPE_INT64:
		GC_PICK_(i64)
	case GC_DTYPE_UINT64:
		GC_PICK_(u64)
	case GC_DTYPE_FLOAT:
		GC_PICK_(f32)
	case GC_DTYPE_DOUBLE:
		GC_PICK_(f64)
	case GC_DTYPE_FLOAT16:
		GC_PICK_(f16)
	case GC_DTYPE_BFLOAT16:
		GC_PICK_(bf16)
	case GC_DTYPE_BOOL: {
		combine_fn f_[4] = {add_b, mul_b, add_b, mul_b};
		*fn = f_[op];
		break;
	}
	default:
		return gc_kerr(k, GC_EUNSUPPORTED, "reduction '%s' is not supported for %s", red,
			       gc_dtype_name(dt));
	}
#undef GC_PICK_
	return 0;
}

/* ---- GatherElements, ScatterElements ------------------------------------ */

typedef struct elems_plan {
	int32_t axis, rank;
	size_t esize;
	combine_fn combine;
	int64_t dstr[GC_MAX_RANK]; /* strides of data */
} elems_plan;

/*
 * Walks the indices tensor; for each element calls back with its flat
 * position and the data offset it addresses. Shared by GatherElements
 * (dst = out) and ScatterElements (dst = out, src = updates).
 */
static int elems_walk(gc_kctx *k, const elems_plan *p, const gc_tensor *ind, const int64_t *ddims,
		      char *out, const char *data, const char *upd)
{
	int64_t numel = gc_tensor_numel(ind), idx[GC_MAX_RANK] = {0}, base = 0;
	int64_t es = (int64_t)p->esize, dim = ddims[p->axis];
	for (int64_t e = 0; e < numel; e++) {
		int64_t v;
		if (check_index(k, "indices", e, gc_index_at(ind, e), p->axis, dim, &v))
			return gc_kok(k);
		int64_t off = base + v * p->dstr[p->axis];
		if (!upd)
			copy_elem(out + e * es, data + off * es, p->esize);
		else if (p->combine)
			p->combine(out + off * es, upd + e * es);
		else
			copy_elem(out + off * es, upd + e * es, p->esize);
		for (int i = p->rank - 1; i >= 0; i--) {
			int64_t s = i == p->axis ? 0 : p->dstr[i];
			if (++idx[i] < ind->dims[i]) {
				base += s;
				break;
			}
			base -= s * (ind->dims[i] - 1);
			idx[i] = 0;
		}
	}
	return 0;
}

static int run_gather_elements(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			       gc_tensor *const *out)
{
	return elems_walk(k, n->state, in[1], in[0]->dims, out[0]->data, in[0]->data, NULL);
}

static int run_scatter_elements(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
				gc_tensor *const *out)
{
	gc_copy_bytes(k->threads, out[0]->data, in[0]->data, (size_t)gc_tensor_nbytes(out[0]));
	return elems_walk(k, n->state, in[1], in[0]->dims, out[0]->data, NULL, in[2]->data);
}

static elems_plan *elems_prepare(gc_kctx *k, gc_node *n, const gc_tensor *x, const gc_tensor *ind)
{
	size_t es = gc_shape_esize(k, x, "input 'data'");
	if (!es || gc_check_index_type(k, ind, "indices"))
		return NULL;
	int64_t axis = gc_attr_i(k, "axis", 0);
	int32_t a;
	if (gc_kok(k) || gc_axis(k, axis, x->rank, &a))
		return NULL;
	if (ind->rank != x->rank) {
		gc_kerr(k, GC_EINVAL, "input 'indices' has rank %d but 'data' has rank %d",
			ind->rank, x->rank);
		return NULL;
	}
	for (int i = 0; i < x->rank; i++)
		if (i != a && ind->dims[i] > x->dims[i]) {
			char s1[128], s2[128];
			gc_kerr(k, GC_EINVAL,
				"input 'indices' of shape %s is larger than 'data' of shape %s on "
				"axis %d",
				gc_shape_str(ind->dims, ind->rank, s1, sizeof s1),
				gc_shape_str(x->dims, x->rank, s2, sizeof s2), i);
			return NULL;
		}
	elems_plan *p = gc_calloc(1, sizeof *p);
	if (!p) {
		gc_kerr(k, GC_ENOMEM, "out of memory");
		return NULL;
	}
	p->axis = a;
	p->rank = x->rank;
	p->esize = es;
	gc_strides(x->dims, x->rank, p->dstr);
	n->state = p;
	return p;
}

int gc_prepare_GatherElements(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (!elems_prepare(k, n, in[0], in[1]))
		return gc_kok(k);
	gc_set_shape(out[0], in[0]->dtype, in[1]->rank, in[1]->dims);
	n->run = run_gather_elements;
	return 0;
}

int gc_prepare_ScatterElements(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *ind = in[1], *upd = in[2];
	elems_plan *p = elems_prepare(k, n, x, ind);
	if (!p)
		return gc_kok(k);
	if (upd->dtype != x->dtype || !gc_same_shape(upd, ind)) {
		char s1[128], s2[128];
		return gc_kerr(
		    k, GC_EINVAL,
		    "input 'updates' (%s, shape %s) must have the type of 'data' (%s) "
		    "and the shape of 'indices' (%s)",
		    gc_dtype_name(upd->dtype), gc_shape_str(upd->dims, upd->rank, s1, sizeof s1),
		    gc_dtype_name(x->dtype), gc_shape_str(ind->dims, ind->rank, s2, sizeof s2));
	}
	if (n->opset >= 16 && pick_combine(k, x->dtype, &p->combine))
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	n->run = run_scatter_elements;
	return 0;
}

/* ---- GatherND, ScatterND ------------------------------------------------ */

typedef struct nd_plan {
	int32_t batch_dims, depth; /* b and k = indices.shape[-1] */
	size_t esize;
	combine_fn combine;
	int64_t batches, tuples, slice, slab;		 /* slab: elements per batch */
	int64_t dims[GC_MAX_RANK], strides[GC_MAX_RANK]; /* indexed axes */
} nd_plan;

/* The element offset (within one batch slab) of index tuple t. */
static int nd_offset(gc_kctx *k, const nd_plan *p, const gc_tensor *ind, int64_t t, int64_t *off)
{
	*off = 0;
	for (int j = 0; j < p->depth; j++) {
		int64_t v;
		if (check_index(k, "indices", t * p->depth + j, gc_index_at(ind, t * p->depth + j),
				p->batch_dims + j, p->dims[j], &v))
			return gc_kok(k);
		*off += v * p->strides[j];
	}
	return 0;
}

static int run_gather_nd(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const nd_plan *p = n->state;
	int64_t es = (int64_t)p->esize, off;
	const char *src = in[0]->data;
	char *dst = out[0]->data;
	for (int64_t b = 0; b < p->batches; b++)
		for (int64_t t = 0; t < p->tuples; t++) {
			if (nd_offset(k, p, in[1], b * p->tuples + t, &off))
				return gc_kok(k);
			memcpy(dst, src + (b * p->slab + off) * es, (size_t)(p->slice * es));
			dst += p->slice * es;
		}
	return 0;
}

static int run_scatter_nd(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const nd_plan *p = n->state;
	int64_t es = (int64_t)p->esize, off;
	char *dst = out[0]->data;
	const char *upd = in[2]->data;
	gc_copy_bytes(k->threads, dst, in[0]->data, (size_t)gc_tensor_nbytes(out[0]));
	for (int64_t t = 0; t < p->tuples; t++) {
		if (nd_offset(k, p, in[1], t, &off))
			return gc_kok(k);
		const char *u = upd + t * p->slice * es;
		if (!p->combine)
			memcpy(dst + off * es, u, (size_t)(p->slice * es));
		else
			for (int64_t e = 0; e < p->slice; e++)
				p->combine(dst + (off + e) * es, u + e * es);
	}
	return 0;
}

/* Common checks; fills p for data x and indices ind with b batch dims. */
static nd_plan *nd_prepare(gc_kctx *k, gc_node *n, const gc_tensor *x, const gc_tensor *ind,
			   int64_t b)
{
	size_t es = gc_shape_esize(k, x, "input 'data'");
	if (!es || gc_check_index_type(k, ind, "indices"))
		return NULL;
	int32_t r = x->rank, q = ind->rank;
	if (r < 1 || q < 1) {
		gc_kerr(k, GC_EINVAL, "'data' (rank %d) and 'indices' (rank %d) need rank >= 1", r,
			q);
		return NULL;
	}
	if (b < 0 || b >= (r < q ? r : q)) {
		gc_kerr(k, GC_EINVAL, "attribute 'batch_dims' %" PRId64 " must be in [0, %d)", b,
			r < q ? r : q);
		return NULL;
	}
	int64_t depth = ind->dims[q - 1];
	if (depth < 1 || depth > r - b) {
		gc_kerr(k, GC_EINVAL,
			"the last dim of 'indices' is %" PRId64 ", must be in [1, %d]", depth,
			(int)(r - b));
		return NULL;
	}
	for (int i = 0; i < b; i++)
		if (x->dims[i] != ind->dims[i]) {
			gc_kerr(k, GC_EINVAL,
				"batch dim %d differs: %" PRId64 " in 'data', %" PRId64
				" in 'indices'",
				i, x->dims[i], ind->dims[i]);
			return NULL;
		}
	nd_plan *p = gc_calloc(1, sizeof *p);
	if (!p) {
		gc_kerr(k, GC_ENOMEM, "out of memory");
		return NULL;
	}
	n->state = p;
	p->batch_dims = (int32_t)b;
	p->depth = (int32_t)depth;
	p->esize = es;
	p->batches = prod(x->dims, 0, (int)b);
	p->tuples = prod(ind->dims, (int)b, q - 1);
	p->slice = prod(x->dims, (int)(b + depth), r);
	p->slab = prod(x->dims, (int)b, r);
	for (int j = 0; j < depth; j++) {
		p->dims[j] = x->dims[b + j];
		p->strides[j] = prod(x->dims, (int)b + j + 1, r);
	}
	return p;
}

int gc_prepare_GatherND(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *ind = in[1];
	int64_t b = gc_attr_i(k, "batch_dims", 0);
	if (gc_kok(k))
		return gc_kok(k);
	nd_plan *p = nd_prepare(k, n, x, ind, b);
	if (!p)
		return gc_kok(k);
	int64_t dims[2 * GC_MAX_RANK];
	int r = 0;
	for (int i = 0; i < ind->rank - 1; i++)
		dims[r++] = ind->dims[i];
	for (int i = (int)b + p->depth; i < x->rank; i++)
		dims[r++] = x->dims[i];
	if (r > GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED, "output rank %d is above %d", r, GC_MAX_RANK);
	gc_set_shape(out[0], x->dtype, r, dims);
	n->run = run_gather_nd;
	return 0;
}

int gc_prepare_ScatterND(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *ind = in[1], *upd = in[2];
	nd_plan *p = nd_prepare(k, n, x, ind, 0);
	if (!p)
		return gc_kok(k);
	/* updates: indices.shape[:-1] ++ data.shape[k:] */
	bool ok = upd->dtype == x->dtype && upd->rank == ind->rank - 1 + x->rank - p->depth;
	for (int i = 0; ok && i < upd->rank; i++)
		ok = upd->dims[i] ==
		     (i < ind->rank - 1 ? ind->dims[i] : x->dims[i - (ind->rank - 1) + p->depth]);
	if (!ok) {
		char s1[128], s2[128], s3[128];
		return gc_kerr(
		    k, GC_EINVAL,
		    "input 'updates' (%s, shape %s) does not fit 'data' (%s, shape %s) "
		    "and 'indices' (shape %s)",
		    gc_dtype_name(upd->dtype), gc_shape_str(upd->dims, upd->rank, s1, sizeof s1),
		    gc_dtype_name(x->dtype), gc_shape_str(x->dims, x->rank, s2, sizeof s2),
		    gc_shape_str(ind->dims, ind->rank, s3, sizeof s3));
	}
	if (n->opset >= 16 && pick_combine(k, x->dtype, &p->combine))
		return gc_kok(k);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	n->run = run_scatter_nd;
	return 0;
}

/* ---- OneHot ------------------------------------------------------------- */

/* Element i of a numeric tensor as an integer; INT64_MIN when it is a float
 * that no integer represents. */
static int64_t int_at(const gc_tensor *t, int64_t i)
{
	double f;
	switch (t->dtype) {
	case GC_DTYPE_INT8:
		return ((const int8_t *)t->data)[i];
	case GC_DTYPE_UINT8:
		return ((const uint8_t *)t->data)[i];
	case GC_DTYPE_INT16:
		return ((const int16_t *)t->data)[i];
	case GC_DTYPE_UINT16:
		return ((const uint16_t *)t->data)[i];
	case GC_DTYPE_INT32:
		return ((const int32_t *)t->data)[i];
	case GC_DTYPE_UINT32:
		return ((const uint32_t *)t->data)[i];
	case GC_DTYPE_INT64:
		return ((const int64_t *)t->data)[i];
	case GC_DTYPE_UINT64: {
		uint64_t u = ((const uint64_t *)t->data)[i];
		return u > INT64_MAX ? INT64_MIN : (int64_t)u;
	}
	case GC_DTYPE_FLOAT:
		f = ((const float *)t->data)[i];
		break;
	case GC_DTYPE_DOUBLE:
		f = ((const double *)t->data)[i];
		break;
	case GC_DTYPE_FLOAT16:
		f = gc_f16_to_f32(((const uint16_t *)t->data)[i]);
		break;
	case GC_DTYPE_BFLOAT16:
		f = gc_bf16_to_f32(((const uint16_t *)t->data)[i]);
		break;
	default:
		return INT64_MIN;
	}
	return f > -9.2e18 && f < 9.2e18 ? (int64_t)f : INT64_MIN;
}

static bool is_numeric(gc_dtype dt)
{
	return dt != GC_DTYPE_STRING && dt != GC_DTYPE_BOOL && dt != GC_DTYPE_COMPLEX64 &&
	       dt != GC_DTYPE_COMPLEX128 && gc_dtype_size(dt) > 0;
}

typedef struct onehot_plan {
	int64_t outer, depth, inner;
	size_t esize;
} onehot_plan;

static int run_onehot(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const onehot_plan *p = n->state;
	const char *vals = in[2]->data;
	char *y = out[0]->data;
	int64_t es = (int64_t)p->esize;
	gc_fill(y, vals, p->esize, gc_tensor_numel(out[0]));
	for (int64_t o = 0; o < p->outer; o++)
		for (int64_t i = 0; i < p->inner; i++) {
			int64_t v = int_at(in[0], o * p->inner + i);
			if (v < 0 && v >= -p->depth)
				v += p->depth;
			if (v >= 0 && v < p->depth)
				copy_elem(y + ((o * p->depth + v) * p->inner + i) * es, vals + es,
					  p->esize);
		}
	return 0;
}

int gc_prepare_OneHot(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *ind = in[0], *dep = in[1], *vals = in[2];
	if (!is_numeric(ind->dtype))
		return gc_kerr(k, GC_EINVAL, "input 'indices' must be numeric, not %s",
			       gc_dtype_name(ind->dtype));
	if (!is_numeric(dep->dtype) || gc_tensor_numel(dep) != 1)
		return gc_kerr(k, GC_EINVAL, "input 'depth' must be a numeric scalar");
	if (!dep->data)
		return gc_kneed_value(k,
			       "input 'depth' must be known when the model is compiled: the output "
			       "size of OneHot depends on it");
	size_t es = gc_shape_esize(k, vals, "input 'values'");
	if (!es)
		return gc_kok(k);
	if (gc_tensor_numel(vals) != 2)
		return gc_kerr(k, GC_EINVAL,
			       "input 'values' must hold [off_value, on_value], it has %" PRId64
			       " elements",
			       gc_tensor_numel(vals));
	int64_t depth = int_at(dep, 0);
	if (depth < 0)
		return gc_kerr(k, GC_EINVAL, "input 'depth' is %" PRId64 ", must be >= 0", depth);
	int64_t axis = gc_attr_i(k, "axis", -1);
	if (gc_kok(k))
		return gc_kok(k);
	int32_t r = ind->rank, a;
	if (r + 1 > GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED, "output rank %d is above %d", r + 1,
			       GC_MAX_RANK);
	if (gc_axis(k, axis, r + 1, &a))
		return gc_kok(k);
	onehot_plan *p = gc_malloc(sizeof *p);
	if (!p)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = p;
	p->outer = prod(ind->dims, 0, a);
	p->inner = prod(ind->dims, a, r);
	p->depth = depth;
	p->esize = es;
	int64_t dims[GC_MAX_RANK];
	for (int i = 0, j = 0; i <= r; i++)
		dims[i] = i == a ? depth : ind->dims[j++];
	gc_set_shape(out[0], vals->dtype, r + 1, dims);
	n->run = run_onehot;
	return 0;
}
