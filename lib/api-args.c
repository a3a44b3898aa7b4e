/* Argument checks of the compiler API (graphcc.h): what a caller hands in
 * -- tensors, attribute lists -- is checked before anything reads it, so a
 * NULL or out-of-range argument is GC_EINVAL naming the function and the
 * argument, never a crash in the host (issue 18). */
#include <inttypes.h>

#include "graph-impl.h"

int gc_api_check_tensor(const gc_tensor *t, const char *fn, const char *what, gc_error *err)
{
	char w[300];
	if (!t)
		return gc_error_set(err, GC_EINVAL, "%s: %s is NULL", fn, what);
	snprintf(w, sizeof w, "%s: %s", fn, what);
	if (gc_dtype_is_value(t->dtype) || !gc_dtype_size(t->dtype))
		return gc_error_set(err, GC_EINVAL, "%s: element type %d is not a tensor type", w,
				    (int)t->dtype);
	if (gc_tensor_check_shape(t, w, err))
		return err->code;
	int64_t nb = gc_tensor_nbytes(t);
	if (nb < 0)
		return gc_error_set(err, GC_EINVAL, "%s: its size overflows 64 bits", w);
	if (nb && !t->data)
		return gc_error_set(err, GC_EINVAL, "%s: data is NULL for %" PRId64 " bytes", w, nb);
	if (t->dtype == GC_DTYPE_STRING)
		for (int64_t i = 0; i < nb / (int64_t)sizeof(char *); i++)
			if (!((char *const *)t->data)[i])
				return gc_error_set(err, GC_EINVAL,
						    "%s: string %" PRId64 " is NULL", w, i);
	return 0;
}

/* One attribute's value, by its type. */
static int check_attr(const gc_attr *a, const char *fn, int i, gc_error *err)
{
	char w[300];
	snprintf(w, sizeof w, "attribute %d ('%s')", i, a->name);
	if (a->type <= GC_ATTR_UNDEFINED || a->type >= GC_ATTR_TYPE_COUNT)
		return gc_error_set(err, GC_EINVAL, "%s: %s has invalid type %d", fn, w,
				    (int)a->type);
	if (a->n < 0)
		return gc_error_set(err, GC_EINVAL, "%s: %s has count %" PRId64, fn, w, a->n);
	const void *list = NULL;
	switch (a->type) {
	case GC_ATTR_TENSOR:
		return gc_api_check_tensor(a->v.t, fn, w, err);
	case GC_ATTR_GRAPH:
		if (!a->v.g)
			return gc_error_set(err, GC_EINVAL, "%s: %s: the graph is NULL", fn, w);
		return 0;
	case GC_ATTR_FLOATS:
		list = a->v.floats;
		break;
	case GC_ATTR_INTS:
		list = a->v.ints;
		break;
	case GC_ATTR_STRINGS:
		list = a->v.strings;
		break;
	case GC_ATTR_TENSORS:
		list = a->v.tensors;
		break;
	case GC_ATTR_GRAPHS:
		list = a->v.graphs;
		break;
	default:
		return 0;
	}
	if (a->n && !list)
		return gc_error_set(err, GC_EINVAL, "%s: %s: %" PRId64 " values and a NULL list",
				    fn, w, a->n);
	for (int64_t j = 0; j < a->n; j++) {
		char wj[340];
		snprintf(wj, sizeof wj, "%s, value %" PRId64, w, j);
		if (a->type == GC_ATTR_TENSORS && gc_api_check_tensor(&a->v.tensors[j], fn, wj, err))
			return err->code;
		if ((a->type == GC_ATTR_STRINGS && !a->v.strings[j]) ||
		    (a->type == GC_ATTR_GRAPHS && !a->v.graphs[j]))
			return gc_error_set(err, GC_EINVAL, "%s: %s is NULL", fn, wj);
	}
	return 0;
}

int gc_api_check_attrs(int32_t n, const gc_attr *attrs, const char *fn, gc_error *err)
{
	if (n > 0 && !attrs)
		return gc_error_set(err, GC_EINVAL, "%s: %d attributes and 'attrs' is NULL", fn,
				    (int)n);
	for (int32_t i = 0; i < n; i++) {
		if (!attrs[i].name || !attrs[i].name[0])
			return gc_error_set(err, GC_EINVAL, "%s: attribute %d has %s name", fn, (int)i,
					    attrs[i].name ? "an empty" : "a NULL");
		if (check_attr(&attrs[i], fn, (int)i, err))
			return err->code;
	}
	return 0;
}

int gc_api_check_names(int32_t n, const char *const *names, const char *fn, const char *what,
		       gc_error *err)
{
	if (n < 0)
		return gc_error_set(err, GC_EINVAL, "%s: the count of %s is %d", fn, what, (int)n);
	if (n && !names)
		return gc_error_set(err, GC_EINVAL, "%s: %d %s and the list is NULL", fn, (int)n,
				    what);
	return 0;
}
