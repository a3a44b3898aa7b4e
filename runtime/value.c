/* Session-owned storage: dynamic tensors' bytes, sequences and optionals. */
#include "value.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fileio.h"

int gc_dynbuf_reserve(gc_dynbuf *b, uint64_t bytes, bool keep, const char *what, gc_error *err)
{
	if (bytes <= b->cap && b->data)
		return 0;
	if (bytes > gc_limit_bytes() || bytes > SIZE_MAX / 2)
		return gc_error_set(err, GC_ELIMIT,
				    "%s needs %" PRIu64 " bytes, over the limit of %" PRIu64
				    " (raise " GC_LIMIT_SETTING " to allow more)",
				    what, bytes, gc_limit_bytes());
	/* Grow by half again at least, so that a tensor that grows a little
	 * every time (a Loop's scan output row by row, a value a loop carries
	 * that gets longer each iteration) is reallocated a logarithmic number
	 * of times. Near the limit, half the way to it: still a logarithmic
	 * number, never past the limit, less spare than half again (capped at
	 * `bytes`, a tensor growing toward the limit was reallocated and copied
	 * on each of its last steps: 35 s under ASan for a 20 MB scan output). */
	size_t cap = (size_t)bytes;
	if (b->cap && cap < b->cap + b->cap / 2)
		cap = b->cap + b->cap / 2;
	if ((uint64_t)cap > gc_limit_bytes())
		cap = (size_t)(bytes + (gc_limit_bytes() - bytes) / 2);
	if (cap < 64)
		cap = 64;
	void *p;
	if (keep) {
		p = gc_realloc(b->data, cap);
	} else {
		p = gc_malloc(cap);
		if (p)
			gc_free(b->data);
	}
	if (!p)
		return gc_error_set(err, GC_ENOMEM, "out of memory: %s needs %" PRIu64 " bytes", what,
				    bytes);
	b->data = p;
	b->cap = cap;
	return 0;
}

void gc_dynbuf_free(gc_dynbuf *b)
{
	gc_free(b->data);
	b->data = NULL;
	b->cap = 0;
}

static void seqbuf_clear(gc_seqbuf *b)
{
	for (int32_t i = 0; i < b->cap; i++)
		gc_dynbuf_free(&b->bufs[i]);
	gc_free(b->bufs);
	gc_free(b->s.items);
	memset(b, 0, sizeof *b);
}

void *gc_value_container_new(gc_dtype dtype)
{
	if (gc_dtype_is_optional(dtype)) {
		gc_optbuf *o = gc_calloc(1, sizeof *o);
		if (o) {
			o->o.value.dtype = gc_dtype_inner(dtype);
			o->seq.s.elem_dtype = gc_dtype_inner(gc_dtype_inner(dtype));
		}
		return o;
	}
	gc_seqbuf *s = gc_calloc(1, sizeof *s);
	if (s)
		s->s.elem_dtype = gc_dtype_inner(dtype);
	return s;
}

void gc_value_container_free(gc_dtype dtype, void *c)
{
	if (!c)
		return;
	if (gc_dtype_is_optional(dtype)) {
		gc_optbuf *o = c;
		gc_dynbuf_free(&o->buf);
		seqbuf_clear(&o->seq);
	} else {
		seqbuf_clear(c);
	}
	gc_free(c);
}

int gc_seq_resize(gc_seqbuf *b, int32_t n, gc_error *err)
{
	if (n < 0)
		return gc_error_set(err, GC_EINVAL, "a sequence cannot have %d items", n);
	if (n > b->cap) {
		int32_t cap = b->cap ? b->cap : 4;
		while (cap < n)
			cap = cap > INT32_MAX / 2 ? n : cap * 2;
		if ((uint64_t)cap * (sizeof(gc_tensor) + sizeof(gc_dynbuf)) > gc_limit_bytes())
			return gc_error_set(err, GC_ELIMIT,
					    "a sequence of %d items is over the size limit of %" PRIu64
					    " bytes (" GC_LIMIT_SETTING ")",
					    n, gc_limit_bytes());
		gc_tensor *items = gc_realloc(b->s.items, (size_t)cap * sizeof *items);
		if (!items)
			return gc_error_set(err, GC_ENOMEM, "out of memory growing a sequence");
		b->s.items = items;
		gc_dynbuf *bufs = gc_realloc(b->bufs, (size_t)cap * sizeof *bufs);
		if (!bufs)
			return gc_error_set(err, GC_ENOMEM, "out of memory growing a sequence");
		memset(bufs + b->cap, 0, (size_t)(cap - b->cap) * sizeof *bufs);
		b->bufs = bufs;
		b->cap = cap;
	}
	for (int32_t i = b->s.n; i < n; i++) {
		memset(&b->s.items[i], 0, sizeof b->s.items[i]);
		b->s.items[i].dtype = b->s.elem_dtype;
		b->s.items[i].data = b->bufs[i].data;
	}
	b->s.n = n;
	return 0;
}

int gc_seq_set(gc_seqbuf *b, int32_t i, const gc_tensor *t, gc_error *err)
{
	if (t->dtype == GC_DTYPE_STRING || gc_dtype_is_value(t->dtype) || !gc_dtype_size(t->dtype))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "a sequence cannot hold a %s tensor (sequences of numeric "
				    "tensors only)",
				    gc_dtype_name(t->dtype));
	int64_t nb = gc_tensor_nbytes(t);
	if (nb < 0)
		return gc_error_set(err, GC_ELIMIT, "a sequence item's size overflows");
	if (gc_dynbuf_reserve(&b->bufs[i], (uint64_t)nb, false, "a sequence item", err))
		return gc_error_prefix(err, "sequence item %d", (int)i);
	gc_tensor *it = &b->s.items[i];
	*it = *t;
	it->data = b->bufs[i].data;
	if (nb && it->data != t->data)
		memmove(it->data, t->data, (size_t)nb);
	return 0;
}

int gc_seq_assign(gc_seqbuf *b, const gc_sequence *src, gc_error *err)
{
	if (&b->s == src)
		return 0;
	b->s.n = 0;
	b->s.elem_dtype = src->elem_dtype;
	if (gc_seq_resize(b, src->n, err))
		return err->code;
	for (int32_t i = 0; i < src->n; i++)
		if (gc_seq_set(b, i, &src->items[i], err))
			return err->code;
	return 0;
}

int gc_opt_set(gc_optbuf *b, const gc_tensor *v, gc_error *err)
{
	if (!v) {
		b->o.has_value = 0;
		return 0;
	}
	gc_tensor *dst = &b->o.value;
	if (gc_dtype_is_sequence(v->dtype)) {
		const gc_sequence *src = v->data;
		if (gc_seq_assign(&b->seq, src, err))
			return err->code;
		dst->dtype = v->dtype;
		dst->rank = 0;
		dst->data = &b->seq.s;
	} else {
		int64_t nb = gc_tensor_nbytes(v);
		if (nb < 0 || gc_dtype_is_value(v->dtype) || v->dtype == GC_DTYPE_STRING)
			return gc_error_set(err, GC_EUNSUPPORTED, "an optional cannot hold a %s",
					    gc_dtype_name(v->dtype));
		if (gc_dynbuf_reserve(&b->buf, (uint64_t)nb, false, "an optional's tensor", err))
			return err->code;
		*dst = *v;
		dst->data = b->buf.data;
		if (nb && dst->data != v->data)
			memmove(dst->data, v->data, (size_t)nb);
	}
	b->o.has_value = 1;
	return 0;
}

int gc_value_assign(gc_tensor *dst, const gc_tensor *src, gc_error *err)
{
	if (dst->data == src->data)
		return 0;
	if (gc_dtype_is_optional(dst->dtype)) {
		gc_optbuf *b = dst->data;
		if (gc_dtype_is_optional(src->dtype)) {
			const gc_optional *o = src->data;
			return gc_opt_set(b, o->has_value ? &o->value : NULL, err);
		}
		return gc_opt_set(b, src, err);
	}
	if (!gc_dtype_is_sequence(src->dtype))
		return gc_error_set(err, GC_EINVAL, "a %s where a sequence is expected",
				    gc_dtype_name(src->dtype));
	return gc_seq_assign(dst->data, src->data, err);
}

bool gc_value_type_fits(gc_dtype want, gc_dtype have)
{
	if (want == have)
		return true;
	/* a value goes where an optional of its type is expected (it is there) */
	if (gc_dtype_is_optional(want) && !gc_dtype_is_optional(have))
		return gc_value_type_fits(gc_dtype_inner(want), have);
	if ((want & ~GC_DTYPE_ELEM_MASK) != (have & ~GC_DTYPE_ELEM_MASK))
		return false;
	return (want & GC_DTYPE_ELEM_MASK) == GC_DTYPE_UNDEFINED ||
	       (have & GC_DTYPE_ELEM_MASK) == GC_DTYPE_UNDEFINED;
}

/* Values the library allocated (gc_pb_read_value): plain heap structures. */
void gc_value_release(gc_tensor *t)
{
	if (!t || !t->data)
		return;
	if (gc_dtype_is_optional(t->dtype)) {
		gc_optional *o = t->data;
		if (o->has_value) {
			if (gc_dtype_is_value(o->value.dtype))
				gc_value_release(&o->value);
			else
				gc_tensor_release(&o->value);
		}
	} else if (gc_dtype_is_sequence(t->dtype)) {
		gc_sequence *s = t->data;
		for (int32_t i = 0; i < s->n; i++)
			gc_tensor_release(&s->items[i]);
		gc_free(s->items);
	}
	gc_free(t->data);
	t->data = NULL;
}

/* Any tensor's release: a sequence or optional value releases the tensors
 * it holds (values own tensors, so this lives with them). */
void gc_tensor_release(gc_tensor *t)
{
	if (!t || !t->data)
		return;
	if (gc_dtype_is_value(t->dtype)) {
		gc_value_release(t);
		return;
	}
	if (t->dtype == GC_DTYPE_STRING) {
		int64_t n = gc_tensor_numel(t);
		char **s = t->data;
		for (int64_t i = 0; i < n; i++)
			gc_free(s[i]);
	}
	gc_free(t->data);
	t->data = NULL;
}
