/*
 * Helpers shared by the gcx-ops libraries (static inline: each library has
 * its own copy, nothing is exported).
 */
#ifndef GCX_COMMON_H
#define GCX_COMMON_H

#include <graphcc/customop.h>
#include <stdio.h>
#include <string.h>

/* Reports why through ctx->set_error and evaluates to GC_STATUS_FAIL. */
#define GCX_FAIL(ctx, ...)                                                                         \
	((ctx) != NULL && (ctx)->set_error != NULL ? (ctx)->set_error((ctx), __VA_ARGS__)          \
						   : (void)0,                                      \
	 GC_STATUS_FAIL)

/* The param called `name` with element type `dtype`, or NULL. */
static inline const CustomOpParam *gcx_param(const CustomOpParam *params, int32_t numParams,
					     const char *name, CustomOpDataType dtype)
{
	int32_t i;

	for (i = 0; params != NULL && i < numParams; i++) {
		if (params[i].name != NULL && strcmp(params[i].name, name) == 0)
			return params[i].dtype == dtype && params[i].size == 0 &&
				       params[i].data != NULL
				   ? &params[i]
				   : NULL;
	}
	return NULL;
}

/* A scalar float param into *out; false when it is missing. */
static inline bool gcx_float(const CustomOpParam *params, int32_t numParams, const char *name,
			     float *out)
{
	const CustomOpParam *p = gcx_param(params, numParams, name, DTFloat32);

	if (p == NULL)
		return false;
	*out = *(const float *)p->data;
	return true;
}

/* Is input `i` there? graphcc gives every declared input a view, an absent
 * optional one with dtype DTCustomOpDataTypeCount (customop.h, beside
 * CustomOpIOTensor): gcInputPresent says which. The bound check keeps a
 * caller's wrong index from reading past the views. */
static inline bool gcx_present(const CustomOpIOTensor *inputs, int32_t numInputs, int32_t i)
{
	return i < numInputs && gcInputPresent(&inputs[i]);
}

/* "2x3x4" (or "scalar") into buf, for messages. */
static inline const char *gcx_shape(const CustomOpIOTensor *t, char *buf, size_t size)
{
	size_t used = 0;
	int32_t d;

	if (t->rank == 0 || t->dims == NULL) {
		snprintf(buf, size, "scalar");
		return buf;
	}
	buf[0] = '\0';
	for (d = 0; d < t->rank && used < size; d++) {
		int n = snprintf(buf + used, size - used, "%s%lld", d ? "x" : "",
				 (long long)t->dims[d]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return buf;
}

static inline bool gcx_same_shape(const CustomOpIOTensor *a, const CustomOpIOTensor *b)
{
	int32_t d;

	if (a->rank != b->rank)
		return false;
	for (d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/* Is `key=value` one of the comma-, semicolon- or space-separated settings
 * of an implementation's config string? */
static inline bool gcx_config_is(const char *config, const char *key, const char *value)
{
	size_t klen = strlen(key), vlen = strlen(value);
	const char *p = config;

	while (p != NULL && *p != '\0') {
		size_t len = strcspn(p, ",; ");
		if (len == klen + 1 + vlen && strncmp(p, key, klen) == 0 && p[klen] == '=' &&
		    strncmp(p + klen + 1, value, vlen) == 0)
			return true;
		p += len;
		p += strspn(p, ",; ");
	}
	return false;
}

/* Does the config string set `key` at all? */
static inline bool gcx_config_has(const char *config, const char *key)
{
	size_t klen = strlen(key);
	const char *p = config;

	while (p != NULL && *p != '\0') {
		size_t len = strcspn(p, ",; ");
		if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=')
			return true;
		p += len;
		p += strspn(p, ",; ");
	}
	return false;
}

#endif
