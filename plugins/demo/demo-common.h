/* The demo package's helpers, shared by its two libraries. */
#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <graphcc/customop.h>

/* Params arrive in manifest order; looking them up by name (and type) keeps
 * each function correct if the manifest grows. NULL if absent. */
static inline const CustomOpParam *demo_param(const CustomOpParam *params, int32_t n,
					      const char *name, CustomOpDataType dtype)
{
	for (int32_t i = 0; i < n; i++)
		if (params[i].name && !strcmp(params[i].name, name) && params[i].dtype == dtype)
			return &params[i];
	return NULL;
}

/* Records why a function failed (graphcc prints it with the node's name) and
 * returns GC_STATUS_FAIL. */
static inline GcStatus demo_fail(GcOpContext *ctx, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (ctx && ctx->set_error)
		ctx->set_error(ctx, "%s", msg);
	return GC_STATUS_FAIL;
}

/* Elements in one channel plane: the product of dims[2..rank). */
static inline int64_t demo_plane(const CustomOpIOTensor *t)
{
	int64_t plane = 1;
	for (int32_t d = 2; d < t->rank; d++)
		plane *= t->dims[d];
	return plane;
}

#endif
