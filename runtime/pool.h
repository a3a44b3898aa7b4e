/* A bump allocator: many small allocations that die together. */
#ifndef GC_POOL_H
#define GC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * Big constants read from files (ONNX external data) are mapped, not
 * copied: nbytes at offset of fd, private (copy-on-write) and read-write,
 * kept by the pool and unmapped when the last pool keeping it is freed.
 * The data, or NULL (errno set, or out of memory). offset % 64 == 0 keeps
 * graphcc's 64-byte alignment.
 */
void *gc_pool_map(gc_pool *pool, int fd, uint64_t offset, size_t nbytes);
/*
 * Big constants read into memory (ONNX initializers held in the model file
 * itself) go in a block of their own that pools share as they share a
 * mapping, so that a graph, the graphs copied from it and the programs
 * compiled from it hold one copy: nbytes, 64-byte aligned, not zeroed, its
 * whole 2 MiB pages on huge pages (gc_huge_alloc_fit; under 2 MiB in the
 * packed weights' slabs, gc_packed_alloc), kept by the pool
 * and freed when the last pool keeping it is freed. NULL when out of memory
 * (or nbytes is 0).
 */
void *gc_pool_big(gc_pool *pool, size_t nbytes);
/* When [p, p + n) lies in a mapping (or gc_pool_big block) pool `from` keeps, `to` keeps that
 * mapping too (so p outlives `from`): true; false otherwise, or when out of
 * memory. */
bool gc_pool_share_mapping(const gc_pool *from, gc_pool *to, const void *p, size_t n);

#endif
