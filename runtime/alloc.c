#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *gc_malloc(size_t size)
{
	return malloc(size ? size : 1);
}

void *gc_calloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size ? size : 1);
}

void *gc_realloc(void *p, size_t size)
{
	return realloc(p, size ? size : 1);
}

void gc_free(void *p)
{
	free(p);
}

char *gc_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = gc_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

int gc_error_set(gc_error *err, int code, const char *fmt, ...)
{
	if (!err || err->code)
		return err && err->code ? err->code : code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

int gc_error_prefix(gc_error *err, const char *fmt, ...)
{
	if (!err)
		return GC_EINVAL;
	char head[GC_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof head - 2, fmt, ap);
	va_end(ap);
	strcat(head, ": ");
	size_t hl = strlen(head), ml = strlen(err->msg);
	if (hl + ml >= sizeof err->msg)
		ml = sizeof err->msg - 1 - hl;
	memmove(err->msg + hl, err->msg, ml);
	memcpy(err->msg, head, hl);
	err->msg[hl + ml] = 0;
	return err->code;
}
