/* A bump allocator: many small allocations that die together. */
#ifndef GC_POOL_H
#define GC_POOL_H

#include <stddef.h>

typedef struct gc_pool gc_pool;

gc_pool *gc_pool_new(void);
void gc_pool_free(gc_pool *pool);
/* 64-byte aligned, zeroed; NULL when out of memory. */
void *gc_pool_alloc(gc_pool *pool, size_t size);
char *gc_pool_strdup(gc_pool *pool, const char *s);
char *gc_pool_strndup(gc_pool *pool, const char *s, size_t n);
void *gc_pool_memdup(gc_pool *pool, const void *p, size_t size);
/* Bytes handed out so far (for reports). */
size_t gc_pool_used(const gc_pool *pool);

#endif
