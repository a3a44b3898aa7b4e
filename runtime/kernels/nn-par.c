/* The worker pool of nn-par.h: one job at a time, handed out under a mutex. */
#include "nn-par.h"

#include <pthread.h>
#include <stdlib.h>

static struct {
	pthread_once_t once;
	pthread_mutex_t lock; /* guards everything below */
	pthread_cond_t wake;  /* workers: a new job, or stop */
	pthread_cond_t done;  /* the caller: the last part finished */
	pthread_t th[GC_NN_PAR_MAX];
	uint64_t start[GC_NN_PAR_MAX]; /* gen when each worker was started */
	int workers;			/* started */
	int busy;    /* a job is running */
	int stop;
	uint64_t gen; /* counts jobs, so that a worker takes each once */
	gc_nn_part_fn fn;
	void *arg;
	int parts;
	int pending; /* parts 1.. not finished */
} pool = {.once = PTHREAD_ONCE_INIT,
	  .lock = PTHREAD_MUTEX_INITIALIZER,
	  .wake = PTHREAD_COND_INITIALIZER,
	  .done = PTHREAD_COND_INITIALIZER};

/* Worker w runs part w + 1 of each job that has one. */
static void *worker(void *p)
{
	int w = (int)(intptr_t)p;
	pthread_mutex_lock(&pool.lock);
	uint64_t seen = pool.start[w]; /* the job it was started for is after this */
	for (;;) {
		while (!pool.stop && pool.gen == seen)
			pthread_cond_wait(&pool.wake, &pool.lock);
		if (pool.stop)
			break;
		seen = pool.gen;
		if (w + 1 >= pool.parts)
			continue;
		gc_nn_part_fn fn = pool.fn;
		void *arg = pool.arg;
		int parts = pool.parts;
		pthread_mutex_unlock(&pool.lock);
		fn(arg, w + 1, parts);
		pthread_mutex_lock(&pool.lock);
		if (--pool.pending == 0)
			pthread_cond_signal(&pool.done);
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

static void pool_stop(void)
{
	pthread_mutex_lock(&pool.lock);
	pool.stop = 1;
	pthread_cond_broadcast(&pool.wake);
	int n = pool.workers;
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < n; i++)
		pthread_join(pool.th[i], NULL);
}

static void pool_init(void)
{
	atexit(pool_stop);
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
	int own = pool.busy || pool.stop;
	while (!own && pool.workers < parts - 1) {
		pool.start[pool.workers] = pool.gen;
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
	pool.pending = parts - 1;
	pool.gen++;
	pthread_cond_broadcast(&pool.wake);
	pthread_mutex_unlock(&pool.lock);
	fn(arg, 0, parts);
	pthread_mutex_lock(&pool.lock);
	while (pool.pending > 0)
		pthread_cond_wait(&pool.done, &pool.lock);
	pool.busy = 0;
	pthread_mutex_unlock(&pool.lock);
}

int gc_nn_par_threads(int threads, double cycles)
{
	/* ~50 us of work a thread: less costs more in waking it than it saves */
	const double per = 150e3;
	if (threads <= 1 || cycles < 2 * per)
		return 1;
	double n = cycles / per;
	return n < threads ? (int)n : threads;
}
