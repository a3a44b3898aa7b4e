/*
 * Helpers shared by the trainable libraries (static inline: each library
 * has its own copy, nothing is exported).
 */
#ifndef TRAINABLE_COMMON_H
#define TRAINABLE_COMMON_H

#include <graphcc/customop.h>
#include <stdio.h>
#include <string.h>

/* Reports why through ctx->set_error and evaluates to GC_STATUS_FAIL. */
#define TR_FAIL(ctx, ...)                                                                          \
	((ctx) != NULL && (ctx)->set_error != NULL ? (ctx)->set_error((ctx), __VA_ARGS__)          \
						   : (void)0,                                      \
	 GC_STATUS_FAIL)

/* The scalar float param `name` into *out; false when it is missing. */
static inline bool tr_float(const CustomOpParam *params, int32_t numParams, const char *name,
			    float *out)
{
	int32_t i;

	for (i = 0; params != NULL && i < numParams; i++)
		if (params[i].name != NULL && strcmp(params[i].name, name) == 0 &&
		    params[i].dtype == DTFloat32 && params[i].size == 0 && params[i].data != NULL) {
			*out = *(const float *)params[i].data;
			return true;
		}
	return false;
}

static inline bool tr_same_shape(const CustomOpIOTensor *a, const CustomOpIOTensor *b)
{
	int32_t d;

	if (a->rank != b->rank)
		return false;
	for (d = 0; d < a->rank; d++)
		if (a->dims[d] != b->dims[d])
			return false;
	return true;
}

/* Elements of dims [from, rank) of t. */
static inline int64_t tr_inner(const CustomOpIOTensor *t, int32_t from)
{
	int64_t n = 1;
	int32_t d;

	for (d = from; d < t->rank; d++)
		n *= t->dims[d];
	return n;
}

#endif
