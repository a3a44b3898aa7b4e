/* Helpers shared by the built-in kernel families. */
#include "kernel.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "strpool.h"

int gc_kerr(gc_kctx *k, int code, const char *fmt, ...)
{
	if (k->err->code)
		return k->err->code;
	char msg[GC_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const gc_node *n = k->node;
	if (n)
		return gc_error_set(k->err, code, "node '%s' (%s%s%s): %s", n->name,
				    n->domain && n->domain[0] ? n->domain : "",
				    n->domain && n->domain[0] ? "::" : "", n->op_type, msg);
	return gc_error_set(k->err, code, "%s", msg);
}

int gc_kneed_value(gc_kctx *k, const char *fmt, ...)
{
	char msg[GC_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	k->need_value = true;
	return gc_kerr(k, GC_EUNSUPPORTED, "%s", msg);
}

char *gc_kstr(gc_kctx *k, size_t len)
{
	char *s = k->strings && len < SIZE_MAX ? gc_strpool_alloc(k->strings, len + 1) : NULL;
	if (!s) {
		if (!k->strings)
			gc_kerr(k, GC_EINVAL, "graphcc bug: no string pool for this kernel");
		else
			gc_kerr(k, GC_ENOMEM, "out of memory for a %zu-byte string", len);
		return NULL;
	}
	s[len] = 0;
	return s;
}

const gc_attr *gc_attr_find(const gc_node *n, const char *name)
{
	for (int i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

static const gc_attr *typed(gc_kctx *k, const char *name, gc_attr_type want)
{
	const gc_attr *a = gc_attr_find(k->node, name);
	if (a && a->type != want) {
		gc_kerr(k, GC_EINVAL, "attribute '%s' is %s, expected %s", name,
			gc_attr_type_name(a->type), gc_attr_type_name(want));
		return NULL;
	}
	return a;
}

int64_t gc_attr_i(gc_kctx *k, const char *name, int64_t def)
{
	const gc_attr *a = typed(k, name, GC_ATTR_INT);
	return a ? a->v.i : def;
}

float gc_attr_f(gc_kctx *k, const char *name, float def)
{
	const gc_attr *a = typed(k, name, GC_ATTR_FLOAT);
	return a ? a->v.f : def;
}

const char *gc_attr_s(gc_kctx *k, const char *name, const char *def)
{
	const gc_attr *a = typed(k, name, GC_ATTR_STRING);
	return a ? a->v.s : def;
}

int gc_attr_pick(gc_kctx *k, const char *name, const char *def, const char *const *names, int n)
{
	const char *v = gc_attr_s(k, name, def);
	if (gc_kok(k))
		return -1;
	char list[256] = "";
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		if (!strcmp(v, names[i]))
			return i;
		const char *sep = i == 0 ? "" : i + 1 < n ? ", " : " or ";
		if (at < sizeof list)
			at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", sep, names[i]);
	}
	gc_kerr(k, GC_EINVAL, "attribute '%s' is \"%s\"; expected %s", name, v, list);
	return -1;
}

int64_t gc_attr_ints(gc_kctx *k, const char *name, const int64_t **v)
{
	const gc_attr *a = typed(k, name, GC_ATTR_INTS);
	*v = a ? a->v.ints : NULL;
	return a ? a->n : 0;
}

int64_t gc_attr_floats(gc_kctx *k, const char *name, const float **v)
{
	const gc_attr *a = typed(k, name, GC_ATTR_FLOATS);
	*v = a ? a->v.floats : NULL;
	return a ? a->n : 0;
}

const gc_tensor *gc_attr_t(gc_kctx *k, const char *name)
{
	const gc_attr *a = typed(k, name, GC_ATTR_TENSOR);
	return a ? a->v.t : NULL;
}

void gc_set_shape(gc_tensor *out, gc_dtype dtype, int32_t rank, const int64_t *dims)
{
	out->dtype = dtype;
	out->rank = rank;
	for (int i = 0; i < rank; i++)
		out->dims[i] = dims[i];
}

int gc_const_ints(gc_kctx *k, const gc_tensor *t, const char *what, int64_t *v, int64_t max,
		  int64_t *count)
{
	if (!t)
		return gc_kerr(k, GC_EINVAL, "input '%s' is missing", what);
	if (!t->data)
		return gc_kneed_value(k,
				      "input '%s' must be known when the model is compiled "
				      "(it is computed at run time, which graphcc does not support "
				      "here)",
				      what);
	if (t->dtype != GC_DTYPE_INT64 && t->dtype != GC_DTYPE_INT32)
		return gc_kerr(k, GC_EINVAL, "input '%s' must be int32 or int64, not %s", what,
			       gc_dtype_name(t->dtype));
	int64_t n = gc_tensor_numel(t);
	if (n < 0 || n > max)
		return gc_kerr(k, GC_EINVAL, "input '%s' has %" PRId64 " values, at most %" PRId64
					     " allowed",
			       what, n, max);
	for (int64_t i = 0; i < n; i++)
		v[i] = t->dtype == GC_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
						  : ((const int32_t *)t->data)[i];
	*count = n;
	return 0;
}

int gc_axis(gc_kctx *k, int64_t axis, int32_t rank, int32_t *out)
{
	if (axis < -(int64_t)rank || axis >= rank)
		return gc_kerr(k, GC_EINVAL, "axis %" PRId64 " is out of range for rank %d", axis,
			       rank);
	*out = (int32_t)(axis < 0 ? axis + rank : axis);
	return 0;
}

const void *gc_kpacked(gc_kctx *k, gc_node *n, gc_tensor *const *in, int j, const char *key,
		       uint64_t nbytes, bool replaces, void **fill)
{
	*fill = NULL;
	const void *data = NULL;
	for (int32_t i = 0; i < k->n_stored && !data; i++)
		if (k->stored[i].input == j && k->stored[i].nbytes == nbytes &&
		    !strcmp(k->stored[i].key, key))
			data = k->stored[i].data;
	if (!data && !gc_kfixed(k, in, j))
		return NULL;
	gc_packed *list = gc_realloc(n->packed, ((size_t)n->n_packed + 1) * sizeof *list);
	if (!list) {
		gc_kerr(k, GC_ENOMEM, "out of memory packing input %d", j);
		return NULL;
	}
	n->packed = list;
	gc_packed *e = &list[n->n_packed];
	*e = (gc_packed){ .data = data, .nbytes = nbytes, .input = j, .replaces = replaces };
	e->key = gc_strdup(key);
	if (!e->key) {
		gc_kerr(k, GC_ENOMEM, "out of memory packing input %d", j);
		return NULL;
	}
	if (!data) {
		e->owned = true;
		*fill = gc_packed_alloc((size_t)nbytes);
		if (!*fill) {
			gc_free((char *)e->key);
			gc_kerr(k, GC_ENOMEM, "out of memory packing input %d (%" PRIu64 " bytes)", j,
				nbytes);
			return NULL;
		}
		e->data = *fill;
	}
	n->n_packed++;
	return e->data;
}

void gc_packed_release(gc_node *n)
{
	for (int32_t i = 0; i < n->n_packed; i++) {
		gc_free((char *)n->packed[i].key);
		if (n->packed[i].owned)
			gc_packed_free((void *)n->packed[i].data);
	}
	gc_free(n->packed);
	n->packed = NULL;
	n->n_packed = 0;
}
