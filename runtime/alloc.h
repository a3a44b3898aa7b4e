/*
 * The allocator every graphcc allocation goes through, so that tests can
 * fail the N-th allocation.
 */
#ifndef GC_ALLOC_H
#define GC_ALLOC_H

#include <graphcc/runtime.h>

#include <stddef.h>

void *gc_malloc(size_t size);
void *gc_calloc(size_t n, size_t size);
void *gc_realloc(void *p, size_t size);
void gc_free(void *p);
char *gc_strdup(const char *s);

#endif
