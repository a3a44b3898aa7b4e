/* The demo package's helpers, shared by its two libraries. */
#ifndef DEMO_COMMON_H
#define DEMO_COMMON_H

#include <stdarg.h>
#include <stdio.h>
#include <graphcc/customop.h>

/* Params by position (customop.h, gcParamFloat & co): graphcc gives them in
 * the manifest's order with their declared types, checked when a model is
 * compiled, so a kernel reads them without looking them up. */
enum { CHANNEL_SHUFFLE_GROUPS };
enum { SCALED_SWISH_BETA, SCALED_SWISH_SCALE };

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
