/*
 * Splitting a kernel's work over threads: a small process-wide pool of
 * worker threads, started on first use with as many workers as a call
 * needs (at most GC_NN_PAR_MAX - 1) and stopped with the last session
 * (gc_nn_par_release). Between jobs the workers spin for a bounded time,
 * then sleep (nn-par.c).
 */
#ifndef GC_K_NN_PAR_H
#define GC_K_NN_PAR_H

#include <stdatomic.h>
#include <stdint.h>

#define GC_NN_PAR_MAX 64

/* Part `part` of `parts` of some work, run by thread `slot` (0 .. threads
 * - 1, for per-thread scratch). */
typedef void (*gc_nn_part_fn)(void *arg, int part, int parts, int slot);

/*
 * Runs fn(arg, p, parts, slot) once for every p in [0, parts), handing the
 * parts out one at a time to the calling thread (slot 0) and up to
 * min(threads, GC_NN_PAR_MAX) - 1 workers, and returns when all are done.
 * Each thread has a home range of the parts, the slot-th of `threads`
 * contiguous runs of about equal count, and takes them from its front in
 * increasing order; a thread whose range is done takes parts from the back
 * of another's. So a thread mostly runs the same parts every time -- and,
 * where a kernel numbers its parts by place in the output (nn-split.h), the
 * same places from one node to the next, which its core's cache holds:
 * data another core wrote comes ~5x slower (measured on this 2-vCPU VM).
 * A few parts a thread even out uneven parts and a thread the system did
 * not schedule at once (the others take its parts). A part may wait only
 * for work that another thread has begun (gc_nn_par_wait_byte's blocks),
 * unless the job is ordered (gc_nn_parallel_ordered). A job whose estimate
 * (the gc_nn_par_threads call just before it) is small takes only the
 * workers awake and wakes the sleeping ones for the next job (nn-par.c's
 * PAR_WAKE_WORK). threads <= 1 or parts <= 1 runs them here, with no other
 * thread. When another thread is using the pool (another session), when a
 * worker lately lost its core in a part (another process wants the cores:
 * nn-par.c's solo windows), or when no worker can be started, the caller
 * runs them all itself: the result is the same.
 */
void gc_nn_parallel(int threads, int parts, gc_nn_part_fn fn, void *arg);
/* The same with the parts handed out in increasing order to whichever
 * thread asks first (no home ranges): for a job whose parts wait for parts
 * with lower numbers (gc_nn_par_wait). */
void gc_nn_parallel_ordered(int threads, int parts, gc_nn_part_fn fn, void *arg);

/*
 * For a part that needs parts of its job with lower numbers finished first
 * (one phase of a job after another): waits until *done, which those parts
 * count up (with release order), reaches n. gc_nn_parallel_ordered hands the parts
 * out in increasing order and each thread runs its parts in that order, so
 * the parts waited for are done or under way on other threads and the wait
 * ends. It yields the core now and then to a thread that lost its.
 */
void gc_nn_par_wait(atomic_int *done, int n);
/* The same for a block's state byte, until it is v (a block of a copy that
 * another part of the job makes: conv-direct.c, conv.c's tap path). */
void gc_nn_par_wait_byte(atomic_uchar *state, unsigned char v);

/* The pool's users (sessions): the workers end when the last one goes. */
void gc_nn_par_acquire(void);
void gc_nn_par_release(void);

/* A run of a session with more than one thread begins / ends (on the
 * calling thread): from its first job handed to the workers to its end
 * they spin longer between jobs (nn-par.c says how long). A run that hands
 * the pool no job touches none of its shared state. */
void gc_nn_par_run_begin(void);
void gc_nn_par_run_end(void);

/*
 * The estimated work (cycles, as given to gc_nn_par_threads) of the jobs
 * of more than one thread in this thread's run under way (or the last
 * one): each job is taken to be the work of the gc_nn_par_threads call
 * just before it; HUGE_VAL once a job had none (a package's parallel_for,
 * a split by a fixed count). The session reads it after its first run.
 */
double gc_nn_par_run_work(void);

/* Below this much split work (~50 us) a run does not pay for a second
 * thread: it would gain at most half of it, and the worker spins through
 * the rest of the run (and 50 us after it) to be ready for the next job --
 * the demo (113k cycles split, one Conv) took 0.089 ms a run at 2 threads
 * against 0.058 ms at 1. The MLP of batch 1 (464k cycles, memory-bound
 * matrix-vector products) gains 2.2x from its second thread: this stays
 * well under it. A static program's session whose first run's split work
 * is below it runs on one thread from then on. */
#define GC_NN_PAR_SMALL_RUN 200e3

/* How many runs so far handed the pool a job (and so told it of the run):
 * lets the tests see that a serial run leaves the pool alone. */
uint64_t gc_nn_par_runs_told(void);

/* Workers not asleep (spinning or working): lets the tests see that an
 * idle pool sleeps. */
int gc_nn_par_awake(void);

/* How many times a small job woke a sleeping worker to spin for the next
 * one (nn-par.c's nudge): lets the tests see it. */
uint64_t gc_nn_par_nudges(void);

/* Whether jobs run on their caller alone now (a solo window: nn-par.c):
 * lets the tests see it, and wait for its end. */
int gc_nn_par_solo(void);

/* What a worker does when, at `now` (CLOCK_MONOTONIC ns), it finds it
 * waited `lost` ns on a run queue since its last look, its parts since
 * then having taken `parts` ns: over 1 ms, it shortens the spins, or opens
 * a solo window when the loss was within the parts or is the second in
 * 20 ms (nn-par.c). The tests call it with made-up losses. */
void gc_nn_par_lost_core(int64_t now, int64_t lost, int64_t parts);

/* What a woken worker does (nn-par.c): on CPU `waker` (the CPU of the
 * thread that woke it), it moves to another CPU its affinity allows,
 * leaving the affinity as it was; elsewhere, or with no other CPU, nothing.
 * The tests call it on their own thread. */
void gc_nn_par_unstack(int waker);

/* How many gc_nn_parallel calls so far had more than one thread and more
 * than one part (whether or not another thread took a part): lets the
 * tests see that a kernel splits its work. */
uint64_t gc_nn_par_jobs(void);

/* Instrument (debugging): totals over the pool's jobs since the start,
 * counted while gc_nn_par_stats_on(1) calls outnumber gc_nn_par_stats_on(0)
 * ones (two profiled runs at once: the second's end does not stop the
 * first's counts; both see each other's jobs). */
typedef struct gc_nn_par_stats {
	uint64_t jobs;	  /* jobs run on more than one thread */
	uint64_t wall_ns; /* their time, publish to the last part's end */
	uint64_t busy_ns; /* time the threads spent in parts */
	uint64_t cap_ns;  /* wall x threads of each job */
	uint64_t tail_ns; /* the caller waiting for others after its last part */
	uint64_t late_ns; /* publish to a worker's first part */
	uint64_t single;  /* calls run on the caller alone */
} gc_nn_par_stats;
void gc_nn_par_stats_on(int on);
void gc_nn_par_stats_read(gc_nn_par_stats *s);

/*
 * The least work (estimated cycles) a thread's share must have: ~10 us.
 * Calibrated against the kernels' own estimates: timed per node at one
 * thread over seven models (conv, GEMM, pooling, copies, element-wise,
 * normalization), the median node took ~0.25 ns per estimated cycle. A
 * hand-over to a spinning worker costs ~1-2 us (the job word's and the
 * output's cache lines), so a share of ~10 us loses at most ~15 % to it;
 * a sleeping worker costs tens of microseconds more, which the spinning of
 * nn-par.c keeps off the jobs of a run.
 */
#define GC_NN_PAR_MIN_SHARE 40e3

/* Threads worth using for about `cycles` of work (at least 1, at most
 * GC_NN_PAR_MAX: a kernel may size per-part state by it): each at least
 * GC_NN_PAR_MIN_SHARE of it. */
int gc_nn_par_threads(int threads, double cycles);

/* Parts to cut `items` into for `threads` threads: a few each. */
static inline int gc_nn_par_parts(int threads, int64_t items)
{
	int64_t p = threads > 1 ? 4 * (int64_t)threads : 1;
	return (int)(p < items ? p : items > 0 ? items : 1);
}

/* Runs fn over `items` cut into parts on up to `threads` threads (from
 * gc_nn_par_threads), or in one call here when one thread or item will do. */
static inline void gc_nn_run_parts(int threads, int64_t items, gc_nn_part_fn fn, void *arg)
{
	if (threads <= 1 || items < 2)
		fn(arg, 0, 1, 0);
	else
		gc_nn_parallel(threads, gc_nn_par_parts(threads, items), fn, arg);
}

/*
 * A split of `rows` rows of n columns (a normalisation, a scan or a search
 * along an axis with n positions inside it: Softmax, ArgMax, LRN, CumSum)
 * into units of one row's chunk of up to GC_NN_CHUNK columns, which advance
 * together (contiguous loads) with their running state on the stack.
 */
#define GC_NN_CHUNK 256
static inline int64_t gc_nn_chunk_units(int64_t rows, int64_t n)
{
	return rows * ((n + GC_NN_CHUNK - 1) / GC_NN_CHUNK);
}
/* Unit u's row (returned), first column *j0 and width *w. */
static inline int64_t gc_nn_chunk_at(int64_t u, int64_t n, int64_t *j0, int64_t *w)
{
	int64_t chunks = (n + GC_NN_CHUNK - 1) / GC_NN_CHUNK;
	*j0 = u % chunks * GC_NN_CHUNK;
	*w = n - *j0 < GC_NN_CHUNK ? n - *j0 : GC_NN_CHUNK;
	return u / chunks;
}

/* [*lo, *hi): part p of parts of n items, in contiguous nearly equal runs. */
static inline void gc_nn_part_range(int64_t n, int part, int parts, int64_t *lo, int64_t *hi)
{
	*lo = n * part / parts;
	*hi = n * (part + 1) / parts;
}
/* The part (of gc_nn_part_range's `parts` of n items, parts <= n) that
 * holds item i: the last whose first item n * part / parts is <= i. */
static inline int gc_nn_part_of(int64_t n, int parts, int64_t i)
{
	return (int)(((i + 1) * parts - 1) / n);
}

#endif
