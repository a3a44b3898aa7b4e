/* Element types, error codes and tensor helpers. */
#include <graphcc/runtime.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "api-check.h"

const char *gc_strerror(int code)
{
	switch (code) {
#define GC_X_(name, value, text)                                               \
	case value:                                                            \
		return text;
		GC_ERRNO_LIST(GC_X_)
#undef GC_X_
	}
	return "unknown error";
}

static const struct {
	const char *name;
	size_t size;
} dtypes[GC_DTYPE_COUNT] = {
#define GC_X_(name, value, size, text) [value] = { text, size },
	GC_DTYPE_LIST(GC_X_)
#undef GC_X_
};

/* "sequence(float32)", "optional(sequence(int64))", ... */
static const char *value_type_name(gc_dtype dtype)
{
	switch ((int)dtype) {
#define GC_X_(name, value, size, text)                                         \
	case GC_DTYPE_SEQUENCE | value:                                        \
		return "sequence(" text ")";                                   \
	case GC_DTYPE_OPTIONAL | value:                                        \
		return "optional(" text ")";                                   \
	case GC_DTYPE_OPTIONAL | GC_DTYPE_SEQUENCE | value:                    \
		return "optional(sequence(" text "))";
		GC_DTYPE_LIST(GC_X_)
#undef GC_X_
	}
	return "invalid";
}

size_t gc_dtype_size(gc_dtype dtype)
{
	if ((unsigned)dtype >= GC_DTYPE_COUNT)
		return 0;
	return dtypes[dtype].size;
}

const char *gc_dtype_name(gc_dtype dtype)
{
	if (gc_dtype_is_value(dtype))
		return value_type_name(dtype);
	if ((unsigned)dtype >= GC_DTYPE_COUNT || !dtypes[dtype].name)
		return "invalid";
	return dtypes[dtype].name;
}

gc_dtype gc_dtype_from_name(const char *name)
{
	if (!name)
		return GC_DTYPE_UNDEFINED;
	for (int i = 1; i < GC_DTYPE_COUNT; i++)
		if (dtypes[i].name && !strcmp(dtypes[i].name, name))
			return (gc_dtype)i;
	return GC_DTYPE_UNDEFINED;
}

const char *gc_attr_type_name(gc_attr_type type)
{
	static const char *const names[GC_ATTR_TYPE_COUNT] = {
		"undefined", "float", "int", "string", "tensor", "graph",
		"floats", "ints", "strings", "tensors", "graphs",
	};
	if ((unsigned)type >= GC_ATTR_TYPE_COUNT)
		return "unknown";
	return names[type];
}

int64_t gc_tensor_numel(const gc_tensor *t)
{
	/* The product of the non-zero dims must fit too: kernels multiply
	 * partial products of the dims (a [0, 2^62, 2^62] tensor is refused). */
	int64_t n = 1, nz = 1;
	if (!t || t->rank < 0 || t->rank > GC_MAX_RANK)
		return -1;
	for (int i = 0; i < t->rank; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (t->dims[i] && nz > INT64_MAX / t->dims[i])
			return -1;
		if (t->dims[i])
			nz *= t->dims[i];
		n *= t->dims[i];
	}
	return n;
}

int64_t gc_tensor_nbytes(const gc_tensor *t)
{
	int64_t n = gc_tensor_numel(t);
	if (n < 0)
		return -1;
	int64_t sz = (int64_t)gc_dtype_size(t->dtype);
	if ( (sz && n > INT64_MAX / sz))
		return -1;
	return n * sz;
}

char *gc_shape_str(const int64_t *dims, int32_t rank, char *buf, size_t len)
{
	size_t at = 0;
	if (!buf || len == 0)
		return buf;
	buf[0] = 0;
	if (rank > GC_MAX_RANK || (rank > 0 && !dims)) {
		snprintf(buf, len, "invalid (rank %d)", (int)rank);
		return buf;
	}
	if (rank == 0) {
		snprintf(buf, len, "scalar");
		return buf;
	}
	if (rank < 0) {
		snprintf(buf, len, "dynamic");
		return buf;
	}
	for (int i = 0; i < rank && at < len; i++) {
		int w = snprintf(buf + at, len - at, i ? "x%" PRId64 : "%" PRId64, dims[i]);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	return buf;
}

int gc_tensor_check_shape(const gc_tensor *t, const char *what, gc_error *err)
{
	if (t->rank < 0 || t->rank > GC_MAX_RANK)
		return gc_error_set(err, GC_EINVAL, "%s: rank %d is out of range (0 to %d)", what,
				    (int)t->rank, GC_MAX_RANK);
	for (int d = 0; d < t->rank; d++)
		if (t->dims[d] < 0)
			return gc_error_set(err, GC_EINVAL,
					    "%s: dim %d is %" PRId64 " (dims must not be negative)",
					    what, d, t->dims[d]);
	return 0;
}

int gc_tensor_alloc(gc_tensor *t, gc_error *err)
{
	GC_ARG_NONNULL(err, t);
	if (gc_tensor_check_shape(t, "gc_tensor_alloc: t", err))
		return err->code;
	int64_t nb = gc_tensor_nbytes(t);
	if (nb < 0 || (uint64_t)nb > SIZE_MAX) {
		char s[128];
		return gc_error_set(err, GC_ELIMIT, "tensor of shape %s and type %s is too large",
				    gc_shape_str(t->dims, t->rank, s, sizeof s),
				    gc_dtype_name(t->dtype));
	}
	t->data = gc_calloc(1, nb ? (size_t)nb : 1);
	if (!t->data)
		return gc_error_set(err, GC_ENOMEM, "out of memory allocating %" PRId64 " bytes",
				    nb);
	return 0;
}
