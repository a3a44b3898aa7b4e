/*
 * Private helpers shared by the shape kernel files (shape.c, shape-move.c,
 * shape-index.c): element sizes, a strided copy engine and small fills.
 * These ops only move bytes, so they work by element size, not by type.
 */
#ifndef GC_K_SHAPE_IMPL_H
#define GC_K_SHAPE_IMPL_H

#include <graphcc/runtime.h>

#include <stddef.h>
#include <stdint.h>

#include "../kernel.h"

/* Up to two view axes per tensor axis (Tile, DepthToSpace need more than rank). */
#define GC_VIEW_MAX (2 * GC_MAX_RANK)

/*
 * The element size of input/output `what`, or 0 after reporting an error.
 * String elements are `char *` that own nothing (runtime/strpool.h), so the
 * ops that only move elements copy them as bytes like any other type.
 */
size_t gc_shape_esize(gc_kctx *k, const gc_tensor *t, const char *what);

/*
 * Copies a strided view of src into dense dst. The view has `rank` axes of
 * `dims`; sstrides[i] is the step in src, in elements (may be 0 or negative),
 * along view axis i. src points at the view's first element. rank may be up
 * to GC_VIEW_MAX. Transposed views are copied in cache-sized tiles.
 */
void gc_view_copy(void *dst, const void *src, size_t esize, int32_t rank, const int64_t *dims,
		  const int64_t *sstrides);

/* Writes `count` copies of the esize-byte value at `value` into dst. */
void gc_fill(void *dst, const void *value, size_t esize, int64_t count);

/* memcpy unless dst == src (in-place views: Identity, Reshape, ...), over
 * up to `threads` threads when it is big (a Reshape the memory plan could
 * not alias, ScatterND's KV cache). */
void gc_copy_bytes(int threads, void *dst, const void *src, size_t nbytes);

/* Part `part` of `parts` of total bytes in cache-line multiples, so that no
 * two threads write one line (the last part takes the rest). */
static inline void gc_line_range(int64_t total, int part, int parts, int64_t *lo, int64_t *hi)
{
	*lo = total / 64 * part / parts * 64;
	*hi = part == parts - 1 ? total : total / 64 * (part + 1) / parts * 64;
}

/* The run function of every op whose output is its input's bytes. */
int gc_run_copy(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out);

/*
 * A prepared strided view of input 0: the whole plan of Transpose, Slice,
 * Expand, Tile, DepthToSpace and SpaceToDepth. Run with gc_run_view.
 */
typedef struct gc_view {
	size_t esize;
	int64_t offset; /* elements from in[0]'s start to the view's first */
	int32_t rank;
	int64_t dims[GC_VIEW_MAX];
	int64_t strides[GC_VIEW_MAX];
} gc_view;

/* dst (numel elements) = the view v of src, over up to `threads` threads
 * (gc_run_view's body, for a kernel that keeps its view elsewhere). */
void gc_view_run(int threads, const gc_view *v, const void *src, void *dst, int64_t numel);

/* Allocates a zeroed gc_view as n->state and selects gc_run_view; NULL
 * after reporting out of memory. */
gc_view *gc_view_new(gc_kctx *k, gc_node *n, size_t esize);
int gc_run_view(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out);

/* Reads index i of an int32/int64 tensor's data. */
static inline int64_t gc_index_at(const gc_tensor *t, int64_t i)
{
	return t->dtype == GC_DTYPE_INT64 ? ((const int64_t *)t->data)[i]
					  : ((const int32_t *)t->data)[i];
}

/* Reports an error unless t is int32 or int64. */
int gc_check_index_type(gc_kctx *k, const gc_tensor *t, const char *what);

#endif
