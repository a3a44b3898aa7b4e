/*
 * Splitting a kernel's work over threads: a small process-wide pool of
 * worker threads, started on first use with as many workers as a call
 * needs (at most GC_NN_PAR_MAX - 1), kept for the life of the process and
 * stopped at exit. Used by the packed kernels (sgemm-pack.h); the reference
 * path leaves threads to OpenBLAS.
 */
#ifndef GC_K_NN_PAR_H
#define GC_K_NN_PAR_H

#include <stdint.h>

#define GC_NN_PAR_MAX 64

/* Part `part` of `parts` of some work. */
typedef void (*gc_nn_part_fn)(void *arg, int part, int parts);

/*
 * Runs fn(arg, p, parts) for every p in [0, parts), parts = min(threads,
 * GC_NN_PAR_MAX), part 0 on the calling thread, and returns when all are
 * done. threads <= 1 runs fn(arg, 0, 1) here, with no other thread. When
 * another thread is using the pool (another session), or a worker cannot
 * be started, the caller runs the parts itself, one after another: the
 * result is the same.
 */
void gc_nn_parallel(int threads, gc_nn_part_fn fn, void *arg);

/* Threads worth using for about `cycles` of work (at least 1). */
int gc_nn_par_threads(int threads, double cycles);

/* [*lo, *hi): part p of parts of n items, in contiguous nearly equal runs. */
static inline void gc_nn_part_range(int64_t n, int part, int parts, int64_t *lo, int64_t *hi)
{
	*lo = n * part / parts;
	*hi = n * (part + 1) / parts;
}

#endif
