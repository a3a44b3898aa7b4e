/*
 * The worker pool of nn-par.h: one job at a time, its parts handed out
 * under the mutex. A job is announced by bumping `gen`; workers and the
 * caller spin a little (tens of microseconds) before sleeping on a
 * condition variable, because the next kernel usually comes that soon and
 * waking a sleeping thread costs about as much as a small kernel.
 */
#include "nn-par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

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
	pthread_mutex_t lock; /* guards everything but the atomics */
	pthread_cond_t wake;  /* workers: a new job, or stop */
	pthread_cond_t done;  /* the caller: the last part finished */
	pthread_t th[GC_NN_PAR_MAX];
	uint64_t start[GC_NN_PAR_MAX]; /* gen when each worker was started */
	int workers;		       /* started */
	int busy;		       /* a caller owns the pool */
	atomic_int stop;
	atomic_uint_least64_t gen; /* counts jobs */
	/* the job: gen, function, parts handed out, threads that take part */
	uint64_t job;
	gc_nn_part_fn fn;
	void *arg;
	int parts, next, threads;
	atomic_int finished;
} pool = {.once = PTHREAD_ONCE_INIT,
	  .lock = PTHREAD_MUTEX_INITIALIZER,
	  .wake = PTHREAD_COND_INITIALIZER,
	  .done = PTHREAD_COND_INITIALIZER};

/* Takes and runs parts of job `job` until none is left. */
static void run_parts(uint64_t job, int slot)
{
	for (;;) {
		pthread_mutex_lock(&pool.lock);
		if (pool.job != job || pool.next >= pool.parts || slot >= pool.threads) {
			pthread_mutex_unlock(&pool.lock);
			return;
		}
		int part = pool.next++, parts = pool.parts;
		gc_nn_part_fn fn = pool.fn;
		void *arg = pool.arg;
		pthread_mutex_unlock(&pool.lock);
		fn(arg, part, parts, slot);
		pthread_mutex_lock(&pool.lock);
		if (atomic_fetch_add(&pool.finished, 1) + 1 == parts)
			pthread_cond_signal(&pool.done);
		pthread_mutex_unlock(&pool.lock);
	}
}

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
		run_parts(seen, w + 1);
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
	pthread_atfork(NULL, NULL, pool_forked);
}

/* Sessions are the pool's users: it starts workers when a run needs them
 * and ends them with its last user, so no graphcc thread outlives every
 * session (nor needs an atexit handler). */
static int pool_users;

void gc_nn_par_acquire(void)
{
	pthread_mutex_lock(&pool.lock);
	pool_users++;
	pthread_mutex_unlock(&pool.lock);
}

void gc_nn_par_release(void)
{
	pthread_mutex_lock(&pool.lock);
	int last = --pool_users == 0 && pool.workers > 0;
	pthread_mutex_unlock(&pool.lock);
	if (!last)
		return;
	pool_stop();
	pthread_mutex_lock(&pool.lock);
	pool.workers = 0;
	atomic_store(&pool.stop, 0);
	pthread_mutex_unlock(&pool.lock);
}

static atomic_uint_least64_t par_jobs;

uint64_t gc_nn_par_jobs(void)
{
	return atomic_load(&par_jobs);
}

void gc_nn_parallel(int threads, int parts, gc_nn_part_fn fn, void *arg)
{
	if (threads > GC_NN_PAR_MAX)
		threads = GC_NN_PAR_MAX;
	if (threads > parts)
		threads = parts;
	if (threads <= 1) {
		for (int p = 0; p < parts; p++)
			fn(arg, p, parts, 0);
		return;
	}
	atomic_fetch_add_explicit(&par_jobs, 1, memory_order_relaxed);
	pthread_once(&pool.once, pool_init);
	pthread_mutex_lock(&pool.lock);
	int own = pool.busy || atomic_load(&pool.stop);
	while (!own && pool.workers < threads - 1) {
		pool.start[pool.workers] = atomic_load(&pool.gen);
		if (pthread_create(&pool.th[pool.workers], NULL, worker,
				   (void *)(intptr_t)pool.workers)) {
			own = pool.workers == 0;
			threads = pool.workers + 1;
			break;
		}
		pool.workers++;
	}
	if (own) {
		pthread_mutex_unlock(&pool.lock);
		for (int p = 0; p < parts; p++)
			fn(arg, p, parts, 0);
		return;
	}
	pool.busy = 1;
	pool.fn = fn;
	pool.arg = arg;
	pool.parts = parts;
	pool.next = 0;
	pool.threads = threads;
	atomic_store(&pool.finished, 0);
	uint64_t job = atomic_load(&pool.gen) + 1;
	pool.job = job;
	atomic_store_explicit(&pool.gen, job, memory_order_release);
	pthread_cond_broadcast(&pool.wake);
	pthread_mutex_unlock(&pool.lock);
	run_parts(job, 0);
	for (int i = 0; i < PAR_SPINS; i++) {
		if (atomic_load_explicit(&pool.finished, memory_order_acquire) == parts)
			break;
		PAR_RELAX();
	}
	pthread_mutex_lock(&pool.lock);
	while (atomic_load(&pool.finished) < parts)
		pthread_cond_wait(&pool.done, &pool.lock);
	pool.busy = 0;
	pthread_mutex_unlock(&pool.lock);
}

int gc_nn_par_threads(int threads, double cycles)
{
	/* ~8 us of work a thread: less costs more in handing it out (~1 us
	 * with the workers spinning) and in cache traffic than it saves */
	const double per = 30e3;
	if (threads <= 1 || cycles < 2 * per)
		return 1;
	double n = cycles / per;
	return n < threads ? (int)n : threads;
}
