/*
 * The worker pool of nn-par.h: one job at a time. A job is published by
 * bumping `gen`; workers and the caller spin a little (tens of
 * microseconds) before sleeping on a condition variable, because the next
 * kernel usually comes that soon and waking a sleeping thread costs about
 * as much as a small kernel.
 */
#include "nn-par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PAR_RELAX() _mm_pause()
#else
#define PAR_RELAX() ((void)0)
#endif

/* Pauses before sleeping: ~30 us. */
#define PAR_SPINS 4000

static struct {
	pthread_once_t once;
	pthread_mutex_t lock; /* guards busy, workers, start, and the sleeping */
	pthread_cond_t wake;  /* workers: a new job, or stop */
	pthread_cond_t done;  /* the caller: the last part finished */
	pthread_t th[GC_NN_PAR_MAX];
	uint64_t start[GC_NN_PAR_MAX]; /* gen when each worker was started */
	int workers;			/* started */
	int busy;			/* a caller owns the pool */
	atomic_int stop;
	atomic_uint_least64_t gen; /* counts jobs; bumped after the job's fields are set */
	gc_nn_part_fn fn;
	void *arg;
	int parts;
	atomic_int pending; /* parts 1.. not finished */
} pool = {.once = PTHREAD_ONCE_INIT,
	  .lock = PTHREAD_MUTEX_INITIALIZER,
	  .wake = PTHREAD_COND_INITIALIZER,
	  .done = PTHREAD_COND_INITIALIZER};

/* Waits until gen differs from seen (or stop); returns gen. */
static uint64_t wait_job(uint64_t seen)
{
	for (int i = 0; i < PAR_SPINS; i++) {
		uint64_t g = atomic_load_explicit(&pool.gen, memory_order_acquire);
		if (g != seen || atomic_load_explicit(&pool.stop, memory_order_relaxed))
			return g;
		PAR_RELAX();
	}
	pthread_mutex_lock(&pool.lock);
	while (atomic_load(&pool.gen) == seen && !atomic_load(&pool.stop))
		pthread_cond_wait(&pool.wake, &pool.lock);
	pthread_mutex_unlock(&pool.lock);
	return atomic_load(&pool.gen);
}

/* Worker w runs part w + 1 of each job that has one. */
static void *worker(void *p)
{
	int w = (int)(intptr_t)p;
	pthread_mutex_lock(&pool.lock);
	uint64_t seen = pool.start[w]; /* the job it was started for is after this */
	pthread_mutex_unlock(&pool.lock);
	for (;;) {
		seen = wait_job(seen);
		if (atomic_load(&pool.stop))
			break;
		if (w + 1 >= pool.parts)
			continue;
		pool.fn(pool.arg, w + 1, pool.parts);
		if (atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_acq_rel) == 1) {
			pthread_mutex_lock(&pool.lock);
			pthread_cond_signal(&pool.done);
			pthread_mutex_unlock(&pool.lock);
		}
	}
	return NULL;
}

static void pool_stop(void)
{
	pthread_mutex_lock(&pool.lock);
	atomic_store(&pool.stop, 1);
	pthread_cond_broadcast(&pool.wake);
	int n = pool.workers;
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < n; i++)
		pthread_join(pool.th[i], NULL);
}

/* A child of fork has none of the workers: it starts its own. */
static void pool_forked(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.wake, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.workers = 0;
	pool.busy = 0;
}

static void pool_init(void)
{
	atexit(pool_stop);
	pthread_atfork(NULL, NULL, pool_forked);
}

void gc_nn_parallel(int threads, gc_nn_part_fn fn, void *arg)
{
	int parts = threads < GC_NN_PAR_MAX ? threads : GC_NN_PAR_MAX;
	if (parts <= 1) {
		fn(arg, 0, 1);
		return;
	}
	pthread_once(&pool.once, pool_init);
	pthread_mutex_lock(&pool.lock);
	int own = pool.busy || atomic_load(&pool.stop);
	while (!own && pool.workers < parts - 1) {
		pool.start[pool.workers] = atomic_load(&pool.gen);
		if (pthread_create(&pool.th[pool.workers], NULL, worker,
				   (void *)(intptr_t)pool.workers)) {
			own = pool.workers == 0;
			parts = pool.workers + 1;
			break;
		}
		pool.workers++;
	}
	if (own) {
		pthread_mutex_unlock(&pool.lock);
		for (int p = 0; p < parts; p++)
			fn(arg, p, parts);
		return;
	}
	pool.busy = 1;
	pool.fn = fn;
	pool.arg = arg;
	pool.parts = parts;
	atomic_store_explicit(&pool.pending, parts - 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&pool.gen, 1, memory_order_release);
	pthread_cond_broadcast(&pool.wake);
	pthread_mutex_unlock(&pool.lock);
	fn(arg, 0, parts);
	for (int i = 0; i < PAR_SPINS; i++) {
		if (atomic_load_explicit(&pool.pending, memory_order_acquire) == 0)
			break;
		PAR_RELAX();
	}
	pthread_mutex_lock(&pool.lock);
	while (atomic_load(&pool.pending) > 0)
		pthread_cond_wait(&pool.done, &pool.lock);
	pool.busy = 0;
	pthread_mutex_unlock(&pool.lock);
}

int gc_nn_par_threads(int threads, double cycles)
{
	/* ~20 us of work a thread: less costs more in handing it out than it
	 * saves */
	const double per = 60e3;
	if (threads <= 1 || cycles < 2 * per)
		return 1;
	double n = cycles / per;
	return n < threads ? (int)n : threads;
}
