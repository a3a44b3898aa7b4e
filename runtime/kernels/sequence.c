/*
 * Sequence and optional values (ops listed in control.h): SequenceEmpty,
 * SequenceConstruct, SequenceInsert, SequenceAt, SequenceErase,
 * SequenceLength, SplitToSequence, ConcatFromSequence, Optional,
 * OptionalHasElement, OptionalGetElement, and Identity of such values.
 *
 * Their types are known when compiling (a sequence's element type); what
 * they hold only at run time. Sequence and optional outputs are containers
 * the session owns (runtime/value.h), whose memory grows as needed and is
 * kept between runs; a tensor taken out of one (SequenceAt,
 * ConcatFromSequence, OptionalGetElement) has a shape only known at run
 * time, set by the kernel. Positions are checked at run time, every error
 * naming the node.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../alloc.h"
#include "../value.h"
#include "control.h"

static const gc_sequence *seq_in(gc_tensor *const *in, int i)
{
	return in[i]->data;
}

static gc_seqbuf *seq_out(gc_tensor *const *out)
{
	return out[0]->data;
}

static int need_sequence(gc_kctx *k, const gc_tensor *t, const char *what)
{
	if (!t || !gc_dtype_is_sequence(t->dtype))
		return gc_kerr(k, GC_EINVAL, "input '%s' must be a sequence, it is %s", what,
			       t ? gc_dtype_name(t->dtype) : "empty");
	return 0;
}

static int need_tensor(gc_kctx *k, const gc_tensor *t, const char *what)
{
	if (!t || gc_dtype_is_value(t->dtype) || !gc_dtype_size(t->dtype) ||
	    t->dtype == GC_DTYPE_STRING)
		return gc_kerr(k, GC_EINVAL, "input '%s' must be a numeric tensor, it is %s", what,
			       t ? gc_dtype_name(t->dtype) : "empty");
	return 0;
}

/* A sequence's element type at compile time (UNDEFINED: not known yet). */
static gc_dtype elem_of(const gc_tensor *seq)
{
	return gc_dtype_inner(seq->dtype);
}

/* A position input (int32/int64 scalar) at run time, in [-n, n + extra). */
static int position(gc_kctx *k, const gc_tensor *t, int32_t n, int32_t extra, int32_t *pos)
{
	if (gc_tensor_numel(t) != 1 || (t->dtype != GC_DTYPE_INT64 && t->dtype != GC_DTYPE_INT32))
		return gc_kerr(k, GC_EINVAL, "input 'position' must be one int32 or int64, it is %s "
					     "of %" PRId64 " values",
			       gc_dtype_name(t->dtype), gc_tensor_numel(t));
	int64_t p = t->dtype == GC_DTYPE_INT64 ? *(const int64_t *)t->data
					       : *(const int32_t *)t->data;
	if (p < -(int64_t)n || p >= (int64_t)n + extra)
		return gc_kerr(k, GC_EINVAL,
			       "position %" PRId64 " is out of range for a sequence of %d tensors "
			       "(it must be %d to %d)",
			       p, (int)n, -(int)n, (int)(n + extra - 1));
	*pos = (int32_t)(p < 0 ? p + n : p);
	return 0;
}

static int check_position_type(gc_kctx *k, const gc_tensor *t)
{
	if (t && !gc_dtype_is_value(t->dtype) && t->dtype != GC_DTYPE_INT64 &&
	    t->dtype != GC_DTYPE_INT32)
		return gc_kerr(k, GC_EINVAL, "input 'position' must be int32 or int64, not %s",
			       gc_dtype_name(t->dtype));
	if (t && gc_dtype_is_value(t->dtype))
		return gc_kerr(k, GC_EINVAL, "input 'position' must be a tensor, not a %s",
			       gc_dtype_name(t->dtype));
	return 0;
}

static int seq_err(gc_kctx *k)
{
	return gc_error_prefix(k->err, "node '%s' (%s)", k->node->name, k->node->op_type);
}

/* The element type an output sequence gets: the compile-time one, else
 * what the tensors put in it are. */
static int elem_check(gc_kctx *k, gc_seqbuf *o, const gc_tensor *t, const char *what)
{
	if (o->s.elem_dtype == GC_DTYPE_UNDEFINED)
		o->s.elem_dtype = t->dtype;
	if (t->dtype != o->s.elem_dtype)
		return gc_kerr(k, GC_EINVAL, "%s is %s, but the sequence holds %s", what,
			       gc_dtype_name(t->dtype), gc_dtype_name(o->s.elem_dtype));
	return 0;
}

/* ---- SequenceEmpty, SequenceConstruct --------------------------------- */

static int run_empty(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)n;
	(void)in;
	gc_seqbuf *o = seq_out(out);
	o->s.n = 0;
	o->s.elem_dtype = gc_dtype_inner(out[0]->dtype);
	return 0;
}

int gc_prepare_SequenceEmpty(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)in;
	int64_t dt = gc_attr_i(k, "dtype", GC_DTYPE_FLOAT);
	if (gc_kok(k))
		return gc_kok(k);
	if (dt <= 0 || dt >= GC_DTYPE_COUNT || !gc_dtype_size((gc_dtype)dt) ||
	    dt == GC_DTYPE_STRING)
		return gc_kerr(k, GC_EUNSUPPORTED, "attribute 'dtype' (%" PRId64 ") is not a numeric "
						   "element type graphcc has",
			       dt);
	gc_set_shape(out[0], (gc_dtype)(GC_DTYPE_SEQUENCE | dt), 0, NULL);
	n->run = run_empty;
	return 0;
}

static int run_construct(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			 gc_tensor *const *out)
{
	gc_seqbuf *o = seq_out(out);
	o->s.n = 0;
	o->s.elem_dtype = gc_dtype_inner(out[0]->dtype);
	if (gc_seq_resize(o, n->n_in, k->err))
		return seq_err(k);
	for (int i = 0; i < n->n_in; i++)
		if (elem_check(k, o, in[i], "an input") || gc_seq_set(o, i, in[i], k->err))
			return k->err->code ? seq_err(k) : GC_EINVAL;
	return 0;
}

int gc_prepare_SequenceConstruct(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				 gc_tensor *const *out)
{
	gc_dtype dt = GC_DTYPE_UNDEFINED;
	for (int i = 0; i < n->n_in; i++) {
		char what[32];
		snprintf(what, sizeof what, "inputs[%d]", i);
		/* (an element type only known at run time is checked then) */
		if (!in[i] || in[i]->dtype != GC_DTYPE_UNDEFINED)
			if (need_tensor(k, in[i], what))
				return gc_kok(k);
		if (dt == GC_DTYPE_UNDEFINED)
			dt = in[i]->dtype;
		else if (in[i]->dtype != GC_DTYPE_UNDEFINED && in[i]->dtype != dt)
			return gc_kerr(k, GC_EINVAL, "inputs are %s and %s: a sequence holds one "
						     "element type",
				       gc_dtype_name(dt), gc_dtype_name(in[i]->dtype));
	}
	gc_set_shape(out[0], (gc_dtype)(GC_DTYPE_SEQUENCE | dt), 0, NULL);
	n->run = run_construct;
	return 0;
}

/* ---- SequenceInsert, SequenceErase, SequenceAt, SequenceLength -------- */

static int run_insert(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_sequence *s = seq_in(in, 0);
	gc_seqbuf *o = seq_out(out);
	int32_t pos = s->n;
	if (n->n_in > 2 && in[2] && position(k, in[2], s->n, 1, &pos))
		return gc_kok(k);
	if (s->n == INT32_MAX)
		return gc_kerr(k, GC_ELIMIT, "the sequence is full");
	o->s.n = 0;
	o->s.elem_dtype = s->elem_dtype ? s->elem_dtype : gc_dtype_inner(out[0]->dtype);
	if (elem_check(k, o, in[1], "input 'tensor'"))
		return gc_kok(k);
	if (gc_seq_resize(o, s->n + 1, k->err))
		return seq_err(k);
	for (int32_t i = 0; i <= s->n; i++) {
		const gc_tensor *t = i < pos ? &s->items[i] : i == pos ? in[1] : &s->items[i - 1];
		if (gc_seq_set(o, i, t, k->err))
			return seq_err(k);
	}
	return 0;
}

int gc_prepare_SequenceInsert(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (need_sequence(k, in[0], "input_sequence") ||
	    (in[1]->dtype != GC_DTYPE_UNDEFINED && need_tensor(k, in[1], "tensor")) ||
	    check_position_type(k, n->n_in > 2 ? in[2] : NULL))
		return gc_kok(k);
	gc_dtype e = elem_of(in[0]), t = in[1]->dtype;
	if (e != GC_DTYPE_UNDEFINED && t != GC_DTYPE_UNDEFINED && e != t)
		return gc_kerr(k, GC_EINVAL, "input 'tensor' is %s, but the sequence holds %s",
			       gc_dtype_name(t), gc_dtype_name(e));
	gc_set_shape(out[0], (gc_dtype)(GC_DTYPE_SEQUENCE | (e ? e : t)), 0, NULL);
	n->run = run_insert;
	return 0;
}

static int run_erase(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_sequence *s = seq_in(in, 0);
	gc_seqbuf *o = seq_out(out);
	if (s->n == 0)
		return gc_kerr(k, GC_EINVAL, "cannot erase from an empty sequence");
	int32_t pos = s->n - 1;
	if (n->n_in > 1 && in[1] && position(k, in[1], s->n, 0, &pos))
		return gc_kok(k);
	o->s.n = 0;
	o->s.elem_dtype = s->elem_dtype;
	if (gc_seq_resize(o, s->n - 1, k->err))
		return seq_err(k);
	for (int32_t i = 0; i + 1 < s->n; i++)
		if (gc_seq_set(o, i, &s->items[i < pos ? i : i + 1], k->err))
			return seq_err(k);
	return 0;
}

int gc_prepare_SequenceErase(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (need_sequence(k, in[0], "input_sequence") ||
	    check_position_type(k, n->n_in > 1 ? in[1] : NULL))
		return gc_kok(k);
	gc_set_shape(out[0], in[0]->dtype, 0, NULL);
	n->run = run_erase;
	return 0;
}

static int run_at(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)n;
	const gc_sequence *s = seq_in(in, 0);
	int32_t pos;
	if (position(k, in[1], s->n, 0, &pos))
		return gc_kok(k);
	return gc_kout_copy(k, 0, out[0], &s->items[pos], "the sequence's tensor");
}

int gc_prepare_SequenceAt(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (need_sequence(k, in[0], "input_sequence") || check_position_type(k, in[1]))
		return gc_kok(k);
	gc_set_shape(out[0], elem_of(in[0]), GC_RANK_DYNAMIC, NULL);
	n->run = run_at;
	return 0;
}

static int run_length(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)n;
	*(int64_t *)out[0]->data = seq_in(in, 0)->n;
	return 0;
}

int gc_prepare_SequenceLength(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			      gc_tensor *const *out)
{
	if (need_sequence(k, in[0], "input_sequence"))
		return gc_kok(k);
	gc_set_shape(out[0], GC_DTYPE_INT64, 0, NULL);
	n->run = run_length;
	return 0;
}

/* ---- SplitToSequence, ConcatFromSequence ------------------------------ */

typedef struct split_attrs {
	int64_t axis;
	bool keepdims;
} split_attrs;

static int run_split(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const split_attrs *a = n->state;
	const gc_tensor *x = in[0];
	const gc_tensor *sp = n->n_in > 1 ? in[1] : NULL;
	int32_t ax;
	if (gc_axis(k, a->axis, x->rank, &ax))
		return gc_kok(k);
	int64_t dim = x->dims[ax];
	int64_t nsp = sp ? gc_tensor_numel(sp) : 0;
	int64_t count, chunk = 1;
	bool squeeze = false;
	if (!sp) {
		count = dim;
		squeeze = !a->keepdims;
	} else if (sp->rank == 0) {
		chunk = sp->dtype == GC_DTYPE_INT64 ? *(const int64_t *)sp->data
						    : *(const int32_t *)sp->data;
		if (chunk <= 0)
			return gc_kerr(k, GC_EINVAL, "input 'split' is %" PRId64 "; it must be positive",
				       chunk);
		count = dim / chunk + (dim % chunk != 0);
	} else {
		count = nsp;
		int64_t sum = 0;
		for (int64_t i = 0; i < nsp; i++) {
			int64_t v = sp->dtype == GC_DTYPE_INT64 ? ((const int64_t *)sp->data)[i]
								: ((const int32_t *)sp->data)[i];
			if (v < 0)
				return gc_kerr(k, GC_EINVAL, "input 'split' has a negative size %" PRId64,
					       v);
			/* (a sum that wrapped around to dim split past the end) */
			if (!gc_add_i64(sum, v, &sum))
				return gc_kerr(k, GC_EINVAL,
					       "the sizes in input 'split' add up to more than the "
					       "%" PRId64 " of axis %d",
					       dim, ax);
		}
		if (sum != dim)
			return gc_kerr(k, GC_EINVAL,
				       "the sizes in input 'split' add up to %" PRId64
				       ", but axis %d has %" PRId64,
				       sum, ax, dim);
	}
	if (count > INT32_MAX)
		return gc_kerr(k, GC_ELIMIT, "%" PRId64 " tensors in one sequence", count);
	gc_seqbuf *o = seq_out(out);
	o->s.n = 0;
	o->s.elem_dtype = x->dtype;
	if (gc_seq_resize(o, (int32_t)count, k->err))
		return seq_err(k);
	size_t es = gc_dtype_size(x->dtype);
	int64_t outer = 1, inner = (int64_t)es;
	for (int i = 0; i < ax; i++)
		outer *= x->dims[i];
	for (int i = ax + 1; i < x->rank; i++)
		inner *= x->dims[i];
	int64_t at = 0;
	for (int64_t c = 0; c < count; c++) {
		int64_t len = !sp ? 1
			      : sp->rank == 0 ? (at + chunk <= dim ? chunk : dim - at)
			      : sp->dtype == GC_DTYPE_INT64 ? ((const int64_t *)sp->data)[c]
							      : ((const int32_t *)sp->data)[c];
		gc_tensor t = { .dtype = x->dtype, .rank = x->rank };
		memcpy(t.dims, x->dims, sizeof t.dims);
		t.dims[ax] = len;
		if (squeeze) {
			for (int i = ax; i + 1 < x->rank; i++)
				t.dims[i] = x->dims[i + 1];
			t.rank--;
		}
		/* Item c gathers its rows of x. */
		if (gc_dynbuf_reserve(&o->bufs[c], (uint64_t)gc_tensor_nbytes(&t), false,
				      "a sequence item", k->err))
			return seq_err(k);
		t.data = o->bufs[c].data;
		o->s.items[c] = t;
		for (int64_t r = 0; r < outer && len * inner != 0; r++)
			memcpy((char *)t.data + r * len * inner,
			       (const char *)x->data + (r * dim + at) * inner, (size_t)(len * inner));
		at += len;
	}
	return 0;
}

int gc_prepare_SplitToSequence(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			       gc_tensor *const *out)
{
	if (need_tensor(k, in[0], "input"))
		return gc_kok(k);
	const gc_tensor *sp = n->n_in > 1 ? in[1] : NULL;
	if (sp && (gc_dtype_is_value(sp->dtype) ||
		   (sp->dtype != GC_DTYPE_INT64 && sp->dtype != GC_DTYPE_INT32) ||
		   (sp->rank != GC_RANK_DYNAMIC && sp->rank > 1)))
		return gc_kerr(k, GC_EINVAL, "input 'split' must be an int32 or int64 scalar or "
					     "1-D tensor, it is %s of rank %d",
			       gc_dtype_name(sp->dtype), sp->rank);
	split_attrs *a = gc_calloc(1, sizeof *a);
	if (!a)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = a;
	a->axis = gc_attr_i(k, "axis", 0);
	a->keepdims = gc_attr_i(k, "keepdims", 1) != 0;
	if (gc_kok(k))
		return gc_kok(k);
	int32_t ax;
	if (in[0]->rank != GC_RANK_DYNAMIC && gc_axis(k, a->axis, in[0]->rank, &ax))
		return gc_kok(k);
	gc_set_shape(out[0], (gc_dtype)(GC_DTYPE_SEQUENCE | in[0]->dtype), 0, NULL);
	n->run = run_split;
	return 0;
}

typedef struct concat_attrs {
	int64_t axis;
	bool new_axis;
} concat_attrs;

static int run_concat(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const concat_attrs *a = n->state;
	const gc_sequence *s = seq_in(in, 0);
	if (s->n == 0)
		return gc_kerr(k, GC_EINVAL, "the sequence is empty: there is nothing to concatenate");
	const gc_tensor *t0 = &s->items[0];
	int32_t r = t0->rank, ax;
	if (gc_axis(k, a->axis, a->new_axis ? r + 1 : r, &ax))
		return gc_kok(k);
	if (a->new_axis && r + 1 > GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED, "the result would have rank %d", r + 1);
	int64_t dims[GC_MAX_RANK];
	int32_t orank = a->new_axis ? r + 1 : r;
	for (int i = 0, j = 0; i < orank; i++)
		dims[i] = a->new_axis && i == ax ? 1 : t0->dims[j++];
	int64_t total = 0;
	for (int32_t i = 0; i < s->n; i++) {
		const gc_tensor *t = &s->items[i];
		bool ok = t->dtype == t0->dtype && t->rank == r;
		for (int d = 0; ok && d < r; d++)
			ok = t->dims[d] == t0->dims[d] || (!a->new_axis && d == ax);
		if (!ok) {
			char x[160], y[160];
			return gc_kerr(k, GC_EINVAL,
				       "tensor %d of the sequence is %s %s, tensor 0 %s %s: they must "
				       "agree except along axis %d",
				       (int)i, gc_dtype_name(t->dtype),
				       gc_shape_str(t->dims, t->rank, x, sizeof x),
				       gc_dtype_name(t0->dtype), gc_shape_str(t0->dims, r, y, sizeof y),
				       ax);
		}
		if (!gc_add_i64(total, a->new_axis ? 1 : t->dims[ax], &total))
			return gc_kerr(k, GC_ELIMIT, "the sequence's tensors are too long to concatenate "
						     "along axis %d",
				       ax);
	}
	dims[ax] = total;
	if (gc_kout_shape(k, 0, t0->dtype, orank, dims))
		return gc_kok(k);
	size_t es = gc_dtype_size(t0->dtype);
	int64_t outer = 1, inner = (int64_t)es;
	for (int i = 0; i < ax; i++)
		outer *= dims[i];
	for (int i = ax + 1; i < orank; i++)
		inner *= dims[i];
	int64_t at = 0;
	for (int32_t i = 0; i < s->n; i++) {
		const gc_tensor *t = &s->items[i];
		int64_t len = a->new_axis ? 1 : t->dims[ax];
		for (int64_t o = 0; o < outer && len * inner != 0; o++)
			memcpy((char *)out[0]->data + (o * total + at) * inner,
			       (const char *)t->data + o * len * inner, (size_t)(len * inner));
		at += len;
	}
	return 0;
}

int gc_prepare_ConcatFromSequence(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				  gc_tensor *const *out)
{
	if (need_sequence(k, in[0], "input_sequence"))
		return gc_kok(k);
	if (!gc_attr_find(n, "axis"))
		return gc_kerr(k, GC_EINVAL, "attribute 'axis' is required");
	concat_attrs *a = gc_calloc(1, sizeof *a);
	if (!a)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = a;
	a->axis = gc_attr_i(k, "axis", 0);
	a->new_axis = gc_attr_i(k, "new_axis", 0) != 0;
	if (gc_kok(k))
		return gc_kok(k);
	gc_set_shape(out[0], elem_of(in[0]), GC_RANK_DYNAMIC, NULL);
	n->run = run_concat;
	return 0;
}

/* ---- Optional, OptionalHasElement, OptionalGetElement, Identity ------- */

static int run_optional(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			gc_tensor *const *out)
{
	gc_optbuf *o = out[0]->data;
	const gc_tensor *v = n->n_in > 0 ? in[0] : NULL;
	if (gc_opt_set(o, v, k->err))
		return seq_err(k);
	if (!v)
		o->o.value.dtype = gc_dtype_inner(out[0]->dtype);
	return 0;
}

int gc_prepare_Optional(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	gc_dtype inner;
	if (n->n_in > 0 && in[0]) {
		if (gc_dtype_is_optional(in[0]->dtype))
			return gc_kerr(k, GC_EINVAL, "input is already an optional (%s)",
				       gc_dtype_name(in[0]->dtype));
		inner = in[0]->dtype;
	} else {
		const gc_attr *a = gc_attr_find(n, "type");
		if (!a || a->type != GC_ATTR_INT)
			return gc_kerr(k, GC_EINVAL,
				       "an Optional without input needs the attribute 'type'");
		inner = (gc_dtype)a->v.i;
		if (gc_dtype_is_optional(inner) ||
		    (!gc_dtype_is_sequence(inner) && (!gc_dtype_size(inner) || inner >= GC_DTYPE_COUNT)))
			return gc_kerr(k, GC_EUNSUPPORTED, "attribute 'type' is not a type graphcc has "
							   "(%" PRId64 ")",
				       a->v.i);
	}
	gc_set_shape(out[0], (gc_dtype)(GC_DTYPE_OPTIONAL | inner), 0, NULL);
	n->run = run_optional;
	return 0;
}

static int run_has_element(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			   gc_tensor *const *out)
{
	(void)k;
	const gc_tensor *v = n->n_in > 0 ? in[0] : NULL;
	uint8_t has = 0;
	if (v)
		has = gc_dtype_is_optional(v->dtype) ? ((const gc_optional *)v->data)->has_value != 0
						     : 1;
	*(uint8_t *)out[0]->data = has;
	return 0;
}

int gc_prepare_OptionalHasElement(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				  gc_tensor *const *out)
{
	(void)in;
	(void)k;
	gc_set_shape(out[0], GC_DTYPE_BOOL, 0, NULL);
	n->run = run_has_element;
	return 0;
}

static int run_get_element(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			   gc_tensor *const *out)
{
	(void)n;
	const gc_tensor *v = in[0];
	if (gc_dtype_is_optional(v->dtype)) {
		const gc_optional *o = v->data;
		if (!o->has_value)
			return gc_kerr(k, GC_EINVAL, "the optional input is empty");
		v = &o->value;
	}
	return gc_kout_copy(k, 0, out[0], v, "the optional's value");
}

int gc_prepare_OptionalGetElement(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				  gc_tensor *const *out)
{
	(void)k;
	gc_dtype t = gc_dtype_is_optional(in[0]->dtype) ? gc_dtype_inner(in[0]->dtype) : in[0]->dtype;
	if (gc_dtype_is_value(t))
		gc_set_shape(out[0], t, 0, NULL);
	else
		gc_set_shape(out[0], t, GC_RANK_DYNAMIC, NULL);
	n->run = run_get_element;
	return 0;
}

static int run_value_identity(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			      gc_tensor *const *out)
{
	(void)n;
	if (gc_value_assign(out[0], in[0], k->err))
		return seq_err(k);
	return 0;
}

int gc_prepare_value_identity(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			      gc_tensor *const *out)
{
	(void)k;
	gc_set_shape(out[0], in[0]->dtype, 0, NULL);
	n->run = run_value_identity;
	return 0;
}
