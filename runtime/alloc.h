/*
 * The allocator every graphcc allocation goes through (the compiler's, the
 * runtime's pools, session arenas and debugging buffers alike), so that
 * tests can fail the N-th allocation.
 */
#ifndef GC_ALLOC_H
#define GC_ALLOC_H

#include <graphcc/runtime.h>

#include <stddef.h>

/* 1 in a build under AddressSanitizer (gcc's -fsanitize=address, or
 * clang's), else 0: what the runtime does differently there (each packed
 * block its own allocation, libraries kept mapped) is decided by this one
 * test. */
#if defined(__SANITIZE_ADDRESS__)
#define GC_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GC_UNDER_ASAN 1
#endif
#endif
#ifndef GC_UNDER_ASAN
#define GC_UNDER_ASAN 0
#endif

void *gc_malloc(size_t size);
void *gc_calloc(size_t n, size_t size);
void *gc_realloc(void *p, size_t size);
void gc_free(void *p);
char *gc_strdup(const char *s);
/* size bytes (rounded up to a multiple of align, a power of two) at an
 * align-byte boundary, zeroed when `zero`; freed with gc_free. */
void *gc_aligned_alloc(size_t align, size_t size, int zero);
/* size bytes, 64-byte aligned, freed with gc_free; from GC_HUGE_BYTES up on
 * a 2 MiB boundary, rounded up to whole 2 MiB, and on huge pages where the
 * system gives them on request (transparent huge pages in "madvise" mode):
 * for what is read whole on every run, packed weights and the session's
 * arena (see alloc.c). Not zeroed. */
#define GC_HUGE_BYTES ((size_t)2 << 20)
void *gc_huge_alloc(size_t size);
/* The same, rounding up only where that adds an eighth of the size at
 * most: otherwise the whole 2 MiB pages inside the block on huge pages and
 * its last part (under 2 MiB) on small ones. For blocks kept as long as a
 * program (its big constants, runtime/pool.c), whose last huge page would
 * otherwise cost up to 2 MiB each (a 2.1 MiB weight 4 MiB). */
void *gc_huge_alloc_fit(size_t size);
/* size bytes, 64-byte aligned, for a kernel's packed weights: blocks under
 * GC_HUGE_BYTES one after another in shared slabs on huge pages, larger
 * ones by gc_huge_alloc. Not zeroed. Thread-safe; freed only with
 * gc_packed_free (a slab is returned when its last block is). */
void *gc_packed_alloc(size_t size);
void gc_packed_free(void *p);
/* 64-byte aligned and exactly `size` bytes long (not rounded up), so that
 * a sanitizer or valgrind sees the first byte past the end
 * (gc_session_options.no_arena); zeroed if zero. Free with gc_free. */
void *gc_exact_alloc(size_t size, int zero);

/* Tests only: make the n-th allocation from now on fail (n counts calls to
 * gc_malloc/gc_calloc/gc_realloc/gc_strdup/gc_aligned_alloc from 1; 0 never
 * fails). Not exported by the shared library; the graphcc command sets it
 * from GRAPHCC_FAIL_ALLOC=N. */
void gc_alloc_set_fail_after(long long n);
/* Tests only: the failed allocation says where it came from on stderr
 * (GRAPHCC_FAIL_ALLOC_TRACE for the graphcc command). */
void gc_alloc_set_trace(int on);
/* Allocations counted since the last gc_alloc_set_fail_after (or start). */
long long gc_alloc_count(void);

#endif
