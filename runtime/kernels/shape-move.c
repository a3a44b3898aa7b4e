/*
 * Shape kernels, part 2: ops that move data into a new layout. Transpose,
 * Slice, Expand, Tile, DepthToSpace and SpaceToDepth become one strided view
 * of their input (gc_view); Concat and Split copy contiguous chunks; Pad and
 * Trilu have their own loops.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../ops.h"
#include "kutil.h"
#include "nn-par.h"
#include "shape-impl.h"

/* ---- Transpose ---------------------------------------------------------- */

int gc_transpose_perm(const gc_attr *a, int32_t rank, int64_t *perm, char *why, size_t len)
{
	bool seen[GC_MAX_RANK] = {false};
	if (!a) {
		for (int i = 0; i < rank; i++)
			perm[i] = rank - 1 - i;
		return 0;
	}
	if (a->type != GC_ATTR_INTS) {
		snprintf(why, len, "attribute 'perm' is %s, expected %s",
			 gc_attr_type_name(a->type), gc_attr_type_name(GC_ATTR_INTS));
		return GC_EINVAL;
	}
	if (a->n != rank) {
		snprintf(why, len, "attribute 'perm' has %" PRId64 " entries for input of rank %d",
			 a->n, rank);
		return GC_EINVAL;
	}
	for (int i = 0; i < rank; i++) {
		int64_t p = a->v.ints[i];
		if (p < 0 || p >= rank || seen[p]) {
			snprintf(
			    why, len,
			    "attribute 'perm' is not a permutation of 0..%d (entry %d is %" PRId64
			    ")",
			    rank - 1, i, p);
			return GC_EINVAL;
		}
		seen[p] = true;
		perm[i] = p;
	}
	return 0;
}

int gc_prepare_Transpose(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'data'");
	if (!es)
		return gc_kok(k);
	int64_t perm[GC_MAX_RANK];
	char why[200];
	if (gc_transpose_perm(gc_attr_find(n, "perm"), x->rank, perm, why, sizeof why))
		return gc_kerr(k, GC_EINVAL, "%s", why);
	int64_t st[GC_MAX_RANK], dims[GC_MAX_RANK];
	gc_strides(x->dims, x->rank, st);
	gc_view *v = gc_view_new(k, n, es);
	if (!v)
		return gc_kok(k);
	v->rank = x->rank;
	for (int i = 0; i < x->rank; i++) {
		dims[i] = v->dims[i] = x->dims[perm[i]];
		v->strides[i] = st[perm[i]];
	}
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	return 0;
}

/* ---- Slice -------------------------------------------------------------- */

/* Reads one of Slice's index lists: an attribute before opset 10, else an input. */
static int slice_list(gc_kctx *k, gc_node *n, gc_tensor *const *in, int idx, const char *name,
		      int64_t *v, int64_t *count, bool *given)
{
	*given = false;
	*count = 0;
	if (n->opset < 10) {
		const int64_t *a;
		*count = gc_attr_ints(k, name, &a);
		if (gc_kok(k))
			return gc_kok(k);
		if (*count > GC_MAX_RANK)
			return gc_kerr(k, GC_EINVAL, "attribute '%s' has %" PRId64 " entries", name,
				       *count);
		*given = gc_attr_find(n, name) != NULL;
		if (*count > 0)
			memcpy(v, a, (size_t)*count * sizeof *v);
		return 0;
	}
	if (idx >= n->n_in || !in[idx])
		return 0;
	*given = true;
	return gc_const_ints(k, in[idx], name, v, GC_MAX_RANK, count);
}

int gc_prepare_Slice(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'data'");
	if (!es)
		return gc_kok(k);
	int64_t starts[GC_MAX_RANK], ends[GC_MAX_RANK], axes[GC_MAX_RANK], steps[GC_MAX_RANK];
	int64_t ns, ne, na, nst;
	bool gs, ge, ga, gst;
	if (slice_list(k, n, in, 1, "starts", starts, &ns, &gs) ||
	    slice_list(k, n, in, 2, "ends", ends, &ne, &ge) ||
	    slice_list(k, n, in, 3, "axes", axes, &na, &ga))
		return gc_kok(k);
	if (n->opset >= 10) {
		if (slice_list(k, n, in, 4, "steps", steps, &nst, &gst))
			return gc_kok(k);
	} else {
		gst = false;
		nst = 0;
	}
	if (!gs || !ge)
		return gc_kerr(k, GC_EINVAL, "'starts' and 'ends' are required");
	if (ns != ne)
		return gc_kerr(k, GC_EINVAL,
			       "'starts' has %" PRId64 " entries but 'ends' has %" PRId64, ns, ne);
	if (ga && na != ns)
		return gc_kerr(k, GC_EINVAL,
			       "'axes' has %" PRId64 " entries but 'starts' has %" PRId64, na, ns);
	if (gst && nst != ns)
		return gc_kerr(k, GC_EINVAL,
			       "'steps' has %" PRId64 " entries but 'starts' has %" PRId64, nst,
			       ns);
	if (ns > x->rank)
		return gc_kerr(k, GC_EINVAL,
			       "'starts' has %" PRId64 " entries for input of rank %d", ns,
			       x->rank);
	int64_t st[GC_MAX_RANK], dims[GC_MAX_RANK], step[GC_MAX_RANK], first[GC_MAX_RANK];
	bool seen[GC_MAX_RANK] = {false};
	gc_strides(x->dims, x->rank, st);
	for (int i = 0; i < x->rank; i++) {
		dims[i] = x->dims[i];
		step[i] = 1;
		first[i] = 0;
	}
	for (int i = 0; i < ns; i++) {
		int32_t a;
		if (gc_axis(k, ga ? axes[i] : i, x->rank, &a))
			return gc_kok(k);
		if (seen[a])
			return gc_kerr(k, GC_EINVAL, "'axes' names axis %d more than once", a);
		seen[a] = true;
		int64_t d = x->dims[a], s = starts[i], e = ends[i], t = gst ? steps[i] : 1;
		if (t == 0)
			return gc_kerr(k, GC_EINVAL, "'steps' is 0 for axis %d", a);
		if (s < 0)
			s += d;
		if (e < 0)
			e += d;
		int64_t len;
		if (t > 0) {
			s = s < 0 ? 0 : s > d ? d : s;
			e = e < 0 ? 0 : e > d ? d : e;
			len = e > s ? (e - s - 1) / t + 1 : 0;
		} else {
			s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
			e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
			int64_t nt = t == INT64_MIN ? INT64_MAX : -t;
			len = s > e ? (s - e - 1) / nt + 1 : 0;
		}
		dims[a] = len;
		first[a] = len ? s : 0;
		step[a] = len > 1 ? t : 1;
	}
	gc_view *v = gc_view_new(k, n, es);
	if (!v)
		return gc_kok(k);
	v->rank = x->rank;
	for (int i = 0; i < x->rank; i++) {
		v->dims[i] = dims[i];
		v->strides[i] = step[i] * st[i];
		v->offset += first[i] * st[i];
	}
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	return 0;
}

/* ---- Expand, Tile ------------------------------------------------------- */

int gc_prepare_Expand(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	if (!es)
		return gc_kok(k);
	int64_t shape[GC_MAX_RANK], count;
	if (gc_const_ints(k, in[1], "shape", shape, GC_MAX_RANK, &count))
		return gc_kok(k);
	int32_t r = x->rank > count ? x->rank : (int32_t)count;
	int64_t dims[GC_MAX_RANK];
	for (int i = 0; i < r; i++) {
		int xi = i - (r - x->rank), si = i - (r - (int32_t)count);
		int64_t a = xi >= 0 ? x->dims[xi] : 1, b = si >= 0 ? shape[si] : 1;
		if (a != b && a != 1 && b != 1) {
			char s1[128], s2[128];
			gc_tensor sh = {.rank = (int32_t)count};
			memcpy(sh.dims, shape, (size_t)count * sizeof *shape);
			return gc_kerr(
			    k, GC_EINVAL,
			    "input of shape %s cannot be expanded to shape %s (dim %" PRId64
			    " vs %" PRId64 ")",
			    gc_shape_str(x->dims, x->rank, s1, sizeof s1),
			    gc_shape_str(sh.dims, sh.rank, s2, sizeof s2), a, b);
		}
		if (b < 0)
			return gc_kerr(k, GC_EINVAL, "input 'shape' has negative dim %" PRId64, b);
		dims[i] = a == 1 ? b : a;
	}
	gc_view *v = gc_view_new(k, n, es);
	if (!v)
		return gc_kok(k);
	v->rank = r;
	memcpy(v->dims, dims, (size_t)r * sizeof *dims);
	gc_broadcast_strides(x, r, dims, v->strides);
	gc_set_shape(out[0], x->dtype, r, dims);
	return 0;
}

int gc_prepare_Tile(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	if (!es)
		return gc_kok(k);
	int64_t rep[GC_MAX_RANK], count;
	if (gc_const_ints(k, in[1], "repeats", rep, GC_MAX_RANK, &count))
		return gc_kok(k);
	if (count != x->rank)
		return gc_kerr(k, GC_EINVAL,
			       "input 'repeats' has %" PRId64 " entries for input of rank %d",
			       count, x->rank);
	int64_t st[GC_MAX_RANK], dims[GC_MAX_RANK];
	gc_strides(x->dims, x->rank, st);
	gc_view *v = gc_view_new(k, n, es);
	if (!v)
		return gc_kok(k);
	/* out[.., r*d + i, ..] = x[.., i, ..]: axis pairs (repeat, dim). */
	v->rank = 2 * x->rank;
	for (int i = 0; i < x->rank; i++) {
		if (rep[i] < 0)
			return gc_kerr(k, GC_EINVAL,
				       "input 'repeats' has negative value %" PRId64 " for axis %d",
				       rep[i], i);
		v->dims[2 * i] = rep[i];
		v->strides[2 * i] = 0;
		v->dims[2 * i + 1] = x->dims[i];
		v->strides[2 * i + 1] = st[i];
		if (!gc_mul_i64(rep[i], x->dims[i], &dims[i]))
			return gc_kerr(k, GC_ELIMIT,
				       "repeats %" PRId64 " of axis %d of size %" PRId64
				       " make it too large to hold",
				       rep[i], i, x->dims[i]);
	}
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	return 0;
}

/* ---- DepthToSpace, SpaceToDepth ---------------------------------------- */

static int blocksize(gc_kctx *k, const gc_tensor *x, int64_t *bs)
{
	if (!gc_attr_find(k->node, "blocksize"))
		return gc_kerr(k, GC_EINVAL, "attribute 'blocksize' is required");
	*bs = gc_attr_i(k, "blocksize", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (*bs < 1)
		return gc_kerr(k, GC_EINVAL, "attribute 'blocksize' is %" PRId64 ", must be >= 1",
			       *bs);
	if (x->rank != 4)
		return gc_kerr(k, GC_EINVAL, "input must have rank 4 (N, C, H, W), not %d",
			       x->rank);
	return 0;
}

static void set6(gc_view *v, const int64_t *dims, const int64_t *strides)
{
	v->rank = 6;
	memcpy(v->dims, dims, 6 * sizeof *dims);
	memcpy(v->strides, strides, 6 * sizeof *strides);
}

int gc_prepare_DepthToSpace(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	int64_t bs;
	if (!es || blocksize(k, x, &bs))
		return gc_kok(k);
	const char *mode = gc_attr_s(k, "mode", "DCR");
	if (gc_kok(k))
		return gc_kok(k);
	bool crd = !strcmp(mode, "CRD");
	if (!crd && strcmp(mode, "DCR"))
		return gc_kerr(k, GC_EINVAL, "attribute 'mode' is '%s', expected DCR or CRD", mode);
	int64_t b = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3], bs2, hb, wb;
	if (!gc_mul_i64(bs, bs, &bs2) || !gc_mul_i64(h, bs, &hb) || !gc_mul_i64(w, bs, &wb))
		return gc_kerr(k, GC_ELIMIT,
			       "blocksize %" PRId64 " makes the output too large to hold", bs);
	if (c % bs2)
		return gc_kerr(k, GC_EINVAL,
			       "channels %" PRId64 " are not divisible by blocksize^2 = %" PRId64,
			       c, bs2);
	int64_t c2 = c / bs2, hw = h * w;
	gc_view *v = gc_view_new(k, n, es);
	if (!v)
		return gc_kok(k);
	/* View [b, c2, h, bs1, w, bs2] of the input. */
	int64_t vd[6] = {b, c2, h, bs, w, bs};
	int64_t dcr[6] = {c * hw, hw, w, bs * c2 * hw, 1, c2 * hw};
	int64_t crdv[6] = {c * hw, bs * bs * hw, w, bs * hw, 1, hw};
	set6(v, vd, crd ? crdv : dcr);
	int64_t dims[4] = {b, c2, hb, wb};
	gc_set_shape(out[0], x->dtype, 4, dims);
	return 0;
}

int gc_prepare_SpaceToDepth(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	int64_t bs;
	if (!es || blocksize(k, x, &bs))
		return gc_kok(k);
	int64_t b = x->dims[0], c = x->dims[1], h = x->dims[2], w = x->dims[3], cbb;
	if (!gc_mul_i64(c, bs, &cbb) || !gc_mul_i64(cbb, bs, &cbb))
		return gc_kerr(k, GC_ELIMIT,
			       "blocksize %" PRId64 " makes the output too large to hold", bs);
	if (h % bs || w % bs)
		return gc_kerr(k, GC_EINVAL,
			       "height %" PRId64 " and width %" PRId64
			       " must be divisible by blocksize %" PRId64,
			       h, w, bs);
	gc_view *v = gc_view_new(k, n, es);
	if (!v)
		return gc_kok(k);
	/* View [b, bs1, bs2, c, h/bs, w/bs] of the input. */
	int64_t vd[6] = {b, bs, bs, c, h / bs, w / bs};
	int64_t vs[6] = {c * h * w, w, 1, h * w, bs * w, bs};
	set6(v, vd, vs);
	int64_t dims[4] = {b, cbb, h / bs, w / bs};
	gc_set_shape(out[0], x->dtype, 4, dims);
	return 0;
}

/* ---- Concat, Split ------------------------------------------------------ */

/* outer rounds of one contiguous chunk per input (Concat) or output (Split). */
typedef struct chunks {
	int64_t outer;
	int32_t n;
	int64_t bytes[]; /* per tensor */
} chunks;

static chunks *chunks_new(gc_kctx *k, gc_node *n, int32_t count)
{
	chunks *c = gc_calloc(1, sizeof *c + (size_t)count * sizeof c->bytes[0]);
	if (!c) {
		gc_kerr(k, GC_ENOMEM, "out of memory");
		return NULL;
	}
	c->n = count;
	n->state = c;
	return c;
}

/* Bytes [lo, hi) of the output, outer rows of `row` bytes: each row is
 * every input's chunk in turn (a part may begin or end inside a chunk). */
static void concat_bytes(const chunks *c, gc_tensor *const *in, char *out, int64_t row,
			 int64_t lo, int64_t hi)
{
	for (int64_t o = lo / row; o * row < hi; o++) {
		int64_t at = o * row;
		for (int32_t i = 0; i < c->n && at < hi; i++) {
			int64_t b = c->bytes[i], s = at > lo ? at : lo, e = at + b < hi ? at + b : hi;
			const char *src = (const char *)in[i]->data + o * b + (s - at);
			if (s < e && src != out + s) /* not written in place (liveness.h) */
				memcpy(out + s, src, (size_t)(e - s));
			at += b;
		}
	}
}

typedef struct concat_job {
	const chunks *c;
	gc_tensor *const *in;
	char *out;
	int64_t row, total;
} concat_job;

static void concat_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const concat_job *j = arg;
	int64_t lo, hi;
	gc_line_range(j->total, part, parts, &lo, &hi);
	concat_bytes(j->c, j->in, j->out, j->row, lo, hi);
}

static int run_concat(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const chunks *c = n->state;
	concat_job j = {c, in, out[0]->data, 0, gc_tensor_nbytes(out[0])};
	for (int32_t i = 0; i < c->n; i++)
		j.row += c->bytes[i];
	if (!j.total || !j.row)
		return 0;
	/* the bytes to copy: the memory plan may have had inputs written at
	 * their slices already (gc_share_memory) */
	int64_t copy = j.total;
	if (c->outer == 1) {
		copy = 0;
		int64_t at = 0;
		for (int32_t i = 0; i < c->n; at += c->bytes[i++])
			if ((const char *)in[i]->data != j.out + at)
				copy += c->bytes[i];
		if (!copy)
			return 0;
	}
	/* a copy: ~4 bytes a cycle; split by bytes, not by input (densenet's
	 * first Concat has 2 inputs of 64 and 32 channels) */
	int t = gc_nn_par_threads(k->threads, (double)copy / 4);
	if (t <= 1 || copy < 2 * 4096)
		concat_bytes(c, in, j.out, j.row, 0, j.total);
	else
		gc_nn_parallel(t, gc_nn_par_parts(t, j.total / 4096), concat_part, &j);
	return 0;
}

int gc_prepare_Concat(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (!gc_attr_find(n, "axis") && n->opset >= 4)
		return gc_kerr(k, GC_EINVAL, "attribute 'axis' is required");
	int64_t axis = gc_attr_i(k, "axis", 1);
	if (gc_kok(k))
		return gc_kok(k);
	const gc_tensor *x0 = in[0];
	for (int i = 0; i < n->n_in; i++)
		if (!in[i])
			return gc_kerr(k, GC_EINVAL, "input %d is missing", i);
	size_t es = gc_shape_esize(k, x0, "input 0");
	if (!es)
		return gc_kok(k);
	int32_t a;
	if (x0->rank == 0)
		return gc_kerr(k, GC_EINVAL, "cannot concatenate scalars");
	if (gc_axis(k, axis, x0->rank, &a))
		return gc_kok(k);
	int64_t dims[GC_MAX_RANK];
	memcpy(dims, x0->dims, sizeof dims);
	dims[a] = 0;
	chunks *c = chunks_new(k, n, n->n_in);
	if (!c)
		return gc_kok(k);
	int64_t inner = (int64_t)es;
	for (int d = a + 1; d < x0->rank; d++)
		inner *= x0->dims[d];
	c->outer = 1;
	for (int d = 0; d < a; d++)
		c->outer *= x0->dims[d];
	for (int i = 0; i < n->n_in; i++) {
		const gc_tensor *t = in[i];
		bool ok = t->dtype == x0->dtype && t->rank == x0->rank;
		for (int d = 0; ok && d < t->rank; d++)
			ok = d == a || t->dims[d] == x0->dims[d];
		if (!ok) {
			char s1[128], s2[128];
			return gc_kerr(
			    k, GC_EINVAL,
			    "input %d (%s, shape %s) does not match input 0 (%s, shape %s) "
			    "outside axis %d",
			    i, gc_dtype_name(t->dtype),
			    gc_shape_str(t->dims, t->rank, s1, sizeof s1), gc_dtype_name(x0->dtype),
			    gc_shape_str(x0->dims, x0->rank, s2, sizeof s2), a);
		}
		dims[a] += t->dims[a];
		c->bytes[i] = t->dims[a] * inner;
	}
	gc_set_shape(out[0], x0->dtype, x0->rank, dims);
	n->run = run_concat;
	return 0;
}

/* Bytes [lo, hi) of the input, outer rows of `row` bytes: each row is
 * every output's chunk in turn (Concat's concat_bytes turned around). */
static void split_bytes(const chunks *c, const char *src, gc_tensor *const *out, int64_t row,
			int64_t lo, int64_t hi)
{
	for (int64_t o = lo / row; o * row < hi; o++) {
		int64_t at = o * row;
		for (int32_t i = 0; i < c->n && at < hi; i++) {
			int64_t b = c->bytes[i], s = at > lo ? at : lo, e = at + b < hi ? at + b : hi;
			if (s < e && out[i] && out[i]->data)
				memcpy((char *)out[i]->data + o * b + (s - at), src + s,
				       (size_t)(e - s));
			at += b;
		}
	}
}

typedef struct split_job {
	const chunks *c;
	const char *src;
	gc_tensor *const *out;
	int64_t row, total;
} split_job;

static void split_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const split_job *j = arg;
	int64_t lo, hi;
	gc_line_range(j->total, part, parts, &lo, &hi);
	split_bytes(j->c, j->src, j->out, j->row, lo, hi);
}

/* Split over the threads by bytes, as Concat. */
static int run_split(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const chunks *c = n->state;
	split_job j = {c, in[0]->data, out, 0, gc_tensor_nbytes(in[0])};
	for (int32_t i = 0; i < c->n; i++)
		j.row += c->bytes[i];
	if (!j.total || !j.row)
		return 0;
	int t = gc_nn_par_threads(k->threads, (double)j.total / 4);
	if (t <= 1 || j.total < 2 * 4096)
		split_bytes(c, j.src, out, j.row, 0, j.total);
	else
		gc_nn_parallel(t, gc_nn_par_parts(t, j.total / 4096), split_part, &j);
	return 0;
}

int gc_prepare_Split(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'input'");
	if (!es)
		return gc_kok(k);
	int64_t axis = gc_attr_i(k, "axis", 0);
	if (gc_kok(k))
		return gc_kok(k);
	int32_t a;
	if (x->rank == 0)
		return gc_kerr(k, GC_EINVAL, "cannot split a scalar");
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	int32_t nout = n->n_out;
	chunks *c = chunks_new(k, n, nout);
	if (!c)
		return gc_kok(k);
	int64_t *split = gc_malloc((size_t)nout * sizeof *split), count = 0;
	if (!split)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	bool given = false;
	if (n->opset < 13) {
		const int64_t *v;
		count = gc_attr_ints(k, "split", &v);
		given = gc_attr_find(n, "split") != NULL;
		if (gc_kok(k))
			given = false;
		else if (given && count != nout)
			gc_kerr(k, GC_EINVAL,
				"attribute 'split' has %" PRId64 " entries for %d outputs", count,
				nout);
		else if (given && count > 0)
			memcpy(split, v, (size_t)count * sizeof *split);
	} else if (n->n_in > 1 && in[1]) {
		given = true;
		if (!gc_const_ints(k, in[1], "split", split, nout, &count) && count != nout)
			gc_kerr(k, GC_EINVAL,
				"input 'split' has %" PRId64 " entries for %d outputs", count,
				nout);
	}
	int64_t total = x->dims[a], sum = 0;
	if (!gc_kok(k) && !given && n->opset >= 18) {
		/* Split-18: num_outputs parts of ceil(size / num_outputs), the
		 * last one smaller */
		int64_t want = gc_attr_i(k, "num_outputs", nout);
		int64_t part = (total + nout - 1) / nout;
		if (!gc_kok(k) && want != nout)
			gc_kerr(k, GC_EINVAL, "attribute 'num_outputs' is %" PRId64
				", but the node has %d outputs", want, nout);
		else if (!gc_kok(k) && gc_attr_find(n, "num_outputs") == NULL)
			gc_kerr(k, GC_EINVAL, "Split-%d needs input 'split' or attribute "
				"'num_outputs'", n->opset);
		else if (!gc_kok(k) && part * (nout - 1) >= total && nout > 1 && total > 0)
			gc_kerr(k, GC_EINVAL,
				"axis %d of size %" PRId64 " does not split into %d parts of %" PRId64
				" (the last would be empty or negative)", a, total, nout, part);
		for (int i = 0; !gc_kok(k) && i < nout; i++)
			split[i] = i < nout - 1 ? part : total - part * (nout - 1);
	} else if (!gc_kok(k) && !given) {
		if (total % nout)
			gc_kerr(k, GC_EINVAL,
				"axis %d of size %" PRId64 " does not split into %d equal parts", a,
				total, nout);
		for (int i = 0; i < nout; i++)
			split[i] = total / nout;
	}
	for (int i = 0; !gc_kok(k) && i < nout; i++) {
		if (split[i] < 0)
			gc_kerr(k, GC_EINVAL, "split size %d is negative (%" PRId64 ")", i,
				split[i]);
		/* (sizes that wrapped around to the axis split past its end) */
		else if (!gc_add_i64(sum, split[i], &sum))
			gc_kerr(k, GC_EINVAL,
				"split sizes add up to more than the %" PRId64 " of axis %d", total,
				a);
	}
	if (!gc_kok(k) && sum != total)
		gc_kerr(k, GC_EINVAL,
			"split sizes add up to %" PRId64 ", but axis %d has size %" PRId64, sum, a,
			total);
	if (gc_kok(k)) {
		gc_free(split);
		return gc_kok(k);
	}
	int64_t inner = (int64_t)es;
	for (int d = a + 1; d < x->rank; d++)
		inner *= x->dims[d];
	c->outer = 1;
	for (int d = 0; d < a; d++)
		c->outer *= x->dims[d];
	for (int i = 0; i < nout; i++) {
		int64_t dims[GC_MAX_RANK];
		memcpy(dims, x->dims, sizeof dims);
		dims[a] = split[i];
		c->bytes[i] = split[i] * inner;
		if (out[i])
			gc_set_shape(out[i], x->dtype, x->rank, dims);
	}
	gc_free(split);
	n->run = run_split;
	return 0;
}

/* ---- Pad ---------------------------------------------------------------- */

enum pad_mode { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_plan {
	enum pad_mode mode;
	int32_t rank;
	size_t esize;
	bool value_input; /* constant_value comes from input 2 at run time */
	unsigned char value[16];
	int64_t begin[GC_MAX_RANK];
	int64_t idims[GC_MAX_RANK], odims[GC_MAX_RANK], istr[GC_MAX_RANK];
} pad_plan;

/* The input index that output index o of an axis reads, or -1 for the
 * constant. */
static int64_t pad_src(const pad_plan *p, int axis, int64_t o)
{
	int64_t i = o - p->begin[axis], d = p->idims[axis];
	if (i >= 0 && i < d)
		return i;
	switch (p->mode) {
	case PAD_CONSTANT:
		return -1;
	case PAD_EDGE:
		return i < 0 ? 0 : d - 1;
	case PAD_WRAP:
		i %= d;
		return i < 0 ? i + d : i;
	case PAD_REFLECT:
		if (d == 1)
			return 0;
		i %= 2 * (d - 1);
		if (i < 0)
			i += 2 * (d - 1);
		return i < d ? i : 2 * (d - 1) - i;
	}
	return -1;
}

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

typedef struct pad_job {
	const pad_plan *p;
	const unsigned char *value;
	const char *src;
	char *dst;
	int64_t m0, m1; /* the middle of each row: input elements [m0 - b, m1 - b) */
} pad_job;

/* Output rows [r0, r1) (rows along the last axis). */
static void pad_rows(const pad_job *j, int64_t r0, int64_t r1)
{
	const pad_plan *p = j->p;
	int last = p->rank - 1;
	int64_t es = (int64_t)p->esize, olast = p->odims[last], b = p->begin[last];
	int64_t m0 = j->m0, m1 = j->m1, idx[GC_MAX_RANK] = {0};
	for (int64_t q = r0, i = last - 1; i >= 0; i--) { /* row r0's index */
		idx[i] = q % p->odims[i];
		q /= p->odims[i];
	}
	for (int64_t row = r0; row < r1; row++) {
		char *d = j->dst + row * olast * es;
		int64_t soff = 0;
		bool outside = false;
		for (int i = 0; i < last; i++) {
			int64_t s = pad_src(p, i, idx[i]);
			if (s < 0)
				outside = true;
			soff += s * p->istr[i];
		}
		if (outside || (p->mode == PAD_CONSTANT && m1 == m0)) {
			gc_fill(d, j->value, p->esize, olast);
		} else {
			const char *s = j->src + soff * es;
			if (p->mode == PAD_CONSTANT) {
				gc_fill(d, j->value, p->esize, m0);
				gc_fill(d + m1 * es, j->value, p->esize, olast - m1);
			} else {
				for (int64_t c = 0; c < m0; c++)
					copy_elem(d + c * es, s + pad_src(p, last, c) * es, p->esize);
				for (int64_t c = m1; c < olast; c++)
					copy_elem(d + c * es, s + pad_src(p, last, c) * es, p->esize);
			}
			if (m1 > m0)
				memcpy(d + m0 * es, s + (m0 - b) * es, (size_t)((m1 - m0) * es));
		}
		for (int i = last - 1; i >= 0; i--) {
			if (++idx[i] < p->odims[i])
				break;
			idx[i] = 0;
		}
	}
}

static void pad_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const pad_job *j = arg;
	const pad_plan *p = j->p;
	int64_t rows = 1, r0, r1;
	for (int i = 0; i < p->rank - 1; i++)
		rows *= p->odims[i];
	gc_nn_part_range(rows, part, parts, &r0, &r1);
	pad_rows(j, r0, r1);
}

static int run_pad(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const pad_plan *p = n->state;
	unsigned char value[16];
	memcpy(value, p->value, sizeof value);
	if (p->value_input && n->n_in > 2 && in[2] && gc_tensor_numel(in[2]) > 0)
		memcpy(value, in[2]->data, p->esize);
	int64_t numel = gc_tensor_numel(out[0]);
	if (numel == 0)
		return 0;
	if (p->rank == 0) {
		memcpy(out[0]->data, in[0]->data, p->esize);
		return 0;
	}
	int last = p->rank - 1;
	int64_t olast = p->odims[last], ilast = p->idims[last], b = p->begin[last];
	pad_job j = {p, value, in[0]->data, out[0]->data, b > 0 ? b : 0,
		     b + ilast < olast ? b + ilast : olast};
	if (j.m1 < j.m0)
		j.m1 = j.m0;
	/* a copy, ~4 bytes a cycle, and a few cycles a row (Concat's count) */
	int64_t rows = numel / olast;
	double cycles = (double)numel * (double)p->esize / 4 + (double)rows * 8;
	gc_nn_run_parts(gc_nn_par_threads(k->threads, cycles), rows, pad_part, &j);
	return 0;
}

/* Stores v as one element of dtype dt (Pad's float `value` attribute);
 * false when an integer type cannot hold it (NaN, or out of its range:
 * the conversion would be undefined). */
static bool store_as(gc_dtype dt, double v, void *dst)
{
#define GC_ST_(T)                                                                                  \
	do {                                                                                       \
		T t_ = (T)v;                                                                       \
		memcpy(dst, &t_, sizeof t_);                                                       \
	} while (0)
#define GC_STI_(T, LO, HI)                                                                         \
	do {                                                                                       \
		if (!gc_float_in(v, (double)(LO), (double)(HI)))                                    \
			return false;                                                              \
		GC_ST_(T);                                                                         \
	} while (0)
	switch (dt) {
	case GC_DTYPE_FLOAT:
		GC_ST_(float);
		break;
	case GC_DTYPE_DOUBLE:
		GC_ST_(double);
		break;
	case GC_DTYPE_FLOAT16: {
		uint16_t h = gc_f32_to_f16((float)v);
		memcpy(dst, &h, 2);
		break;
	}
	case GC_DTYPE_BFLOAT16: {
		uint16_t h = gc_f32_to_bf16((float)v);
		memcpy(dst, &h, 2);
		break;
	}
	case GC_DTYPE_INT8:
		GC_STI_(int8_t, INT8_MIN, INT8_MAX);
		break;
	case GC_DTYPE_UINT8:
		GC_STI_(uint8_t, 0, UINT8_MAX);
		break;
	case GC_DTYPE_INT16:
		GC_STI_(int16_t, INT16_MIN, INT16_MAX);
		break;
	case GC_DTYPE_UINT16:
		GC_STI_(uint16_t, 0, UINT16_MAX);
		break;
	case GC_DTYPE_INT32:
		GC_STI_(int32_t, INT32_MIN, INT32_MAX);
		break;
	case GC_DTYPE_UINT32:
		GC_STI_(uint32_t, 0, UINT32_MAX);
		break;
	case GC_DTYPE_INT64:
		GC_STI_(int64_t, -0x1p63, 0x1.fffffffffffffp62);
		break;
	case GC_DTYPE_UINT64:
		GC_STI_(uint64_t, 0, 0x1.fffffffffffffp63);
		break;
	case GC_DTYPE_BOOL: {
		uint8_t t = v != 0;
		memcpy(dst, &t, 1);
		break;
	}
	default:
		break;
	}
	return true;
#undef GC_ST_
#undef GC_STI_
}

int gc_prepare_Pad(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_shape_esize(k, x, "input 'data'");
	if (!es)
		return gc_kok(k);
	const char *mode = gc_attr_s(k, "mode", "constant");
	if (gc_kok(k))
		return gc_kok(k);
	enum pad_mode m;
	if (!strcmp(mode, "constant"))
		m = PAD_CONSTANT;
	else if (!strcmp(mode, "reflect"))
		m = PAD_REFLECT;
	else if (!strcmp(mode, "edge"))
		m = PAD_EDGE;
	else if (!strcmp(mode, "wrap"))
		m = PAD_WRAP;
	else
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'mode' is '%s', expected constant, reflect, edge or wrap",
			       mode);
	int64_t pads[2 * GC_MAX_RANK], np, axes[GC_MAX_RANK], na = x->rank;
	for (int i = 0; i < x->rank; i++)
		axes[i] = i;
	pad_plan *p = gc_calloc(1, sizeof *p);
	if (!p)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = p;
	p->mode = m;
	p->esize = es;
	p->rank = x->rank;
	if (n->opset < 11) {
		const char *an = n->opset < 2 ? "paddings" : "pads";
		const int64_t *v;
		np = gc_attr_ints(k, an, &v);
		if (gc_kok(k))
			return gc_kok(k);
		if (!gc_attr_find(n, an))
			return gc_kerr(k, GC_EINVAL, "attribute '%s' is required", an);
		if (np > 2 * GC_MAX_RANK)
			return gc_kerr(k, GC_EINVAL, "attribute '%s' has %" PRId64 " entries", an,
				       np);
		if (np > 0)
			memcpy(pads, v, (size_t)np * sizeof *pads);
		float value = gc_attr_f(k, "value", 0.0f);
		if (gc_kok(k))
			return gc_kok(k);
		if (!store_as(x->dtype, value, p->value))
			return gc_kerr(k, GC_EINVAL, "attribute 'value' %g does not fit %s", value,
				       gc_dtype_name(x->dtype));
	} else {
		if (gc_const_ints(k, in[1], "pads", pads, 2 * GC_MAX_RANK, &np))
			return gc_kok(k);
		if (n->n_in > 2 && in[2]) {
			if (in[2]->dtype != x->dtype)
				return gc_kerr(
				    k, GC_EINVAL, "input 'constant_value' is %s but 'data' is %s",
				    gc_dtype_name(in[2]->dtype), gc_dtype_name(x->dtype));
			if (gc_tensor_numel(in[2]) > 1)
				return gc_kerr(k, GC_EINVAL,
					       "input 'constant_value' must be a scalar");
			p->value_input = true;
		}
		if (n->n_in > 3 && in[3]) {
			if (gc_const_ints(k, in[3], "axes", axes, GC_MAX_RANK, &na))
				return gc_kok(k);
		}
	}
	if (np != 2 * na)
		return gc_kerr(k, GC_EINVAL,
			       "'pads' has %" PRId64 " entries, expected %" PRId64
			       " (2 per padded axis)",
			       np, 2 * na);
	int64_t begin[GC_MAX_RANK] = {0}, end[GC_MAX_RANK] = {0};
	bool seen[GC_MAX_RANK] = {false};
	for (int i = 0; i < na; i++) {
		int32_t a;
		if (gc_axis(k, axes[i], x->rank, &a))
			return gc_kok(k);
		if (seen[a])
			return gc_kerr(k, GC_EINVAL, "'axes' names axis %d more than once", a);
		seen[a] = true;
		begin[a] = pads[i];
		end[a] = pads[i + na];
	}
	int64_t dims[GC_MAX_RANK];
	gc_strides(x->dims, x->rank, p->istr);
	for (int i = 0; i < x->rank; i++) {
		/* negative pads crop, but never more than the axis has */
		if (begin[i] < -x->dims[i] || end[i] < -x->dims[i] ||
		    !gc_add_i64(x->dims[i], begin[i], &dims[i]) ||
		    !gc_add_i64(dims[i], end[i], &dims[i]))
			return gc_kerr(k, GC_EINVAL,
				       "pads %" PRId64 ", %" PRId64 " of axis %d of size %" PRId64
				       " crop more than it has or make it too large to hold",
				       begin[i], end[i], i, x->dims[i]);
		if (dims[i] < 0)
			return gc_kerr(k, GC_EINVAL,
				       "pads %" PRId64 ", %" PRId64 " make axis %d of size %" PRId64
				       " negative",
				       begin[i], end[i], i, x->dims[i]);
		if (m != PAD_CONSTANT && x->dims[i] == 0 && dims[i] > 0)
			return gc_kerr(k, GC_EINVAL, "cannot %s-pad axis %d of size 0", mode, i);
		p->begin[i] = begin[i];
		p->idims[i] = x->dims[i];
		p->odims[i] = dims[i];
	}
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	n->run = run_pad;
	return 0;
}

/* ---- Trilu -------------------------------------------------------------- */

static int run_trilu(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	size_t es = gc_dtype_size(x->dtype);
	gc_copy_bytes(k->threads, out[0]->data, x->data, (size_t)gc_tensor_nbytes(out[0]));
	int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
	int64_t kk = 0, lim = rows + cols + 1;
	if (n->n_in > 1 && in[1] && gc_tensor_numel(in[1]) > 0)
		kk = gc_index_at(in[1], 0);
	kk = kk < -lim ? -lim : kk > lim ? lim : kk;
	bool upper = *(const bool *)n->state;
	int64_t mats = rows > 0 && cols > 0 ? gc_tensor_numel(x) / (rows * cols) : 0;
	char *y = out[0]->data;
	for (int64_t b = 0; b < mats; b++)
		for (int64_t i = 0; i < rows; i++) {
			char *row = y + (b * rows + i) * cols * (int64_t)es;
			/* upper keeps j - i >= k; lower keeps j - i <= k */
			int64_t z0 = upper ? 0 : i + kk + 1, z1 = upper ? i + kk : cols;
			z0 = z0 < 0 ? 0 : z0 > cols ? cols : z0;
			z1 = z1 < 0 ? 0 : z1 > cols ? cols : z1;
			if (z1 > z0)
				memset(row + z0 * (int64_t)es, 0,
				       (size_t)((z1 - z0) * (int64_t)es));
		}
	return 0;
}

int gc_prepare_Trilu(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (!gc_shape_esize(k, x, "input 'input'"))
		return gc_kok(k);
	if (x->rank < 2)
		return gc_kerr(k, GC_EINVAL, "input must have rank >= 2, not %d", x->rank);
	int64_t upper = gc_attr_i(k, "upper", 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (n->n_in > 1 && in[1]) {
		if (in[1]->dtype != GC_DTYPE_INT64)
			return gc_kerr(k, GC_EINVAL, "input 'k' must be int64, not %s",
				       gc_dtype_name(in[1]->dtype));
		if (gc_tensor_numel(in[1]) != 1)
			return gc_kerr(k, GC_EINVAL, "input 'k' must be a scalar");
	}
	bool *st = gc_malloc(sizeof *st);
	if (!st)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	*st = upper != 0;
	n->state = st;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	n->run = run_trilu;
	return 0;
}
