/*
 * The worker pool of nn-par.h: one job at a time. A job is published in one
 * atomic word (whether it is ordered, its number, the parts handed out so
 * far, how many parts),
 * and its threads' home ranges of parts in one word each (the job number,
 * the range's next part from the front, its end), so the caller and the
 * workers claim parts without a lock: from the front of their own range,
 * then from the back of the others' (an ordered job: from the job word's
 * count, in increasing order). The caller takes parts too and waits only
 * for parts a worker has already begun.
 *
 * Waking a sleeping worker costs tens of microseconds (a futex call, then
 * the scheduler; ~80-100 us measured on this 2-vCPU VM under load), as much
 * as a small kernel, so workers spin (with pause) between jobs for about as
 * long as a wake costs -- the competitive bound: never more than twice the
 * best choice -- and then sleep on their own condition variable:
 *   - while a session's run is under way (gc_nn_par_run_begin/_end), up to
 *     PAR_SPIN_RUN_NS after the last job, and after the worker's own last
 *     part (a job may last longer than the span: a worker that finished
 *     before the caller would otherwise sleep at once): the serial nodes
 *     between two parallel ones (a Concat, a small kernel) mostly take less;
 *   - after the last run ended, PAR_SPIN_IDLE_NS: a caller running the
 *     session in a loop comes back sooner; an idle session then burns no CPU;
 *   - while the cores are contended (a caller found the pool busy: two
 *     sessions at once; a worker lost its core: below),
 *     PAR_SPIN_CONTENDED_NS, so spinning workers do not take cores from
 *     the threads that have work;
 *   - a worker that the last job did not use (a slot past its threads)
 *     sleeps at once.
 * Longer spins were measured worse on a loaded machine: with 2 ms between
 * jobs squeezenet at 2 threads took 54-86 ms a run (median) against 14-35
 * ms before, 16-29 ms with 0.1 ms (a spinner uses up its share of the CPU
 * and is then off it when the job comes, holding a part).
 * The caller wakes only the sleeping workers its job uses, and for a small
 * job none (PAR_WAKE_WORK).
 *
 * A worker that loses its core in a part holds the job until it is back
 * -- a time slice, milliseconds -- while the caller waits: with a busy loop
 * of equal priority on the other core, mobilenet_v2 at 2 threads took
 * 10.4-12.6 ms a run (median) against 7.4 at one unloaded (9.4 under the
 * same load; ORT under it: 8.35 at 2 threads, 7.65 at 1). So a worker
 * reads after a job, off the job's path and at most once a
 * PAR_PREEMPTED_NS, how long it has waited on a run queue since its last
 * look (the kernel's count, /proc/thread-self/schedstat): when it lost its
 * core for PAR_PREEMPTED_NS, within its parts (they took at least that
 * long since the last look: a part is much shorter than a time slice),
 * the callers run their jobs alone for a window (go_solo), which doubles
 * while the contention lasts (the first job after a window is the probe)
 * from PAR_SOLO_NS up to PAR_SOLO_MAX_NS. Lost between jobs (or a spinner
 * that saw its clock jump, where the file is missing), the workers spin
 * shorter for PAR_CONTENDED_NS (contended), and a second such loss in that
 * time opens a window too (gc_nn_par_lost_core). So mobilenet_v2 took
 * 7.35 ms under that load (`make bench`'s busy rows: 1 thread 7.49,
 * ORT 8.56 / 7.71); under a nice 10 busy loop 4.3-6.1; unloaded 4.2-4.5,
 * as before (0-4 losses of 1 ms in 300 runs there).
 */
#include "nn-par.h"

#include "../crash.h" /* GC_TLS_INITIAL_EXEC */

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define PAR_RELAX() _mm_pause()
#else
#define PAR_RELAX() ((void)0)
#endif

#define PAR_SPIN_RUN_NS 200000	  /* 0.2 ms between the jobs of a run */
#define PAR_SPIN_IDLE_NS 50000	  /* 50 us after the last run, and the caller's */
#define PAR_SPIN_CONTENDED_NS 30000 /* 30 us while the cores are contended */
#define PAR_CONTENDED_NS 20000000   /* contention seen: 20 ms of short spins */
#define PAR_SOLO_NS 20000000	  /* a part held up: 20 ms of solo jobs, */
#define PAR_SOLO_MAX_NS 320000000 /* doubling up to 0.32 s while it lasts */
#define PAR_PREEMPTED_NS 1000000  /* a thread that lost its core this long */
#define PAR_CHECK 32		  /* pauses between looks at the clock */
/* A job estimated below this (cycles, ~100 us at ~0.25 ns a cycle,
 * nn-par.h) wakes no sleeping worker: the wake takes about as long (~80-100
 * us), so the caller has done most of the parts when it comes, and a woken
 * worker that loses its core in its part holds the job up -- in
 * efficientnet_b0 at 2 threads under load, SqueezeExcite's jobs (~25 us)
 * took ~480 us whenever they woke the worker (it began 20-25 us late). A
 * spinning worker still takes part in it, and a sleeping one is woken to
 * spin for the run's next job (nudge), so that a run of small jobs after
 * an idle pause is not left to the caller. */
#define PAR_WAKE_WORK 400e3

/* The job word: ordered (1 bit) | job number (31) | next part (16) | parts
 * (16). Whether a job is ordered travels in its word, not beside it: a
 * worker that has run the last part of a job looks for another with the
 * word it read before, while the caller may already be setting up the
 * next job; that job's kind, read from beside the word, had sent it to
 * claim from a plain job's word (never used for claims, so still showing
 * part 0 free): that part ran twice, and the job's caller returned while
 * the second run went on (regnet_y_400mf at two threads, squeeze-excite's
 * ordered job after a Conv). */
#define PAR_MAX_PARTS 0xffff
#define W_ORDERED (UINT64_C(1) << 63)
#define W_JOB_MASK 0x7fffffffu
#define W_JOB(w) ((uint32_t)((w) >> 32) & W_JOB_MASK)
#define W_IS_ORDERED(w) (((w) & W_ORDERED) != 0)
#define W_NEXT(w) ((int)(((w) >> 16) & 0xffff))
#define W_PARTS(w) ((int)((w) & 0xffff))

typedef struct par_worker {
	pthread_t th;
	pthread_cond_t wake;
	int sleeping; /* under pool.lock */
	int nudged;   /* under pool.lock: woken with no job, to spin for the next */
	_Alignas(64) char pad;
} par_worker;

static struct {
	pthread_once_t once;
	pthread_mutex_t lock; /* workers, sleeping flags, users; the waits */
	pthread_cond_t done;  /* the caller: the last part finished */
	par_worker w[GC_NN_PAR_MAX];
	int workers; /* started */
	int users;   /* sessions (gc_nn_par_acquire) */
	atomic_int stop;
	atomic_int busy; /* a caller owns the pool */
	_Alignas(64) atomic_uint_least64_t word;
	/* the job's function, written before the word is published */
	gc_nn_part_fn fn;
	void *arg;
	int real_parts; /* > PAR_MAX_PARTS: each claimed part runs a range */
	atomic_int threads;
	/* each thread's home range of the job's parts (not ordered): job
	 * number (31 bits, as in the word) | next from the front (16) | end (16) */
	struct {
		_Alignas(64) atomic_uint_least64_t w;
	} home[GC_NN_PAR_MAX];
	_Alignas(64) atomic_int finished;
	atomic_int caller_waits;
	_Alignas(64) atomic_int_least64_t hot_until; /* workers spin until then (ns) */
	atomic_int_least64_t contended_until; /* workers spin briefly until then */
	atomic_int_least64_t solo_until;      /* callers run jobs alone until then */
	atomic_int_least64_t solo_window;     /* the last solo window's length */
	atomic_int runs; /* runs under way */
	int waker_cpu;	 /* under lock: the CPU of the last wake_worker (-1: none yet) */
	/* the job counts in the stats (gc_nn_par_stats_on): when it was
	 * published (ns); written before the word is published */
	int stats;
	int64_t published;
} pool = {.once = PTHREAD_ONCE_INIT,
	  .lock = PTHREAD_MUTEX_INITIALIZER,
	  .done = PTHREAD_COND_INITIALIZER,
	  .waker_cpu = -1};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Keeps the workers spinning until `span` ns from now (never shortens). */
static void keep_hot(int64_t span)
{
	int64_t until = now_ns() + span;
	int64_t cur = atomic_load_explicit(&pool.hot_until, memory_order_relaxed);
	while (cur < until && !atomic_compare_exchange_weak_explicit(&pool.hot_until, &cur, until,
								     memory_order_relaxed,
								     memory_order_relaxed))
		;
}

/* Other threads want the cores (another session's, another process's)
 * from `now` on: spinning would take a core from them, and a spinner the
 * scheduler preempts is late for the next job. */
static void contended(int64_t now)
{
	atomic_store_explicit(&pool.contended_until, now + PAR_CONTENDED_NS, memory_order_relaxed);
}

static int contended_at(int64_t now)
{
	return atomic_load_explicit(&pool.contended_until, memory_order_relaxed) > now;
}

/* A worker lost its core in a part, or twice in a short time: the callers
 * run jobs alone for a window, twice the last one when this comes within a
 * window's length of its end (the contention lasts). */
static void go_solo(int64_t now)
{
	int64_t until = atomic_load_explicit(&pool.solo_until, memory_order_relaxed);
	int64_t win = atomic_load_explicit(&pool.solo_window, memory_order_relaxed);
	if (until > now)
		return;
	win = win && now - until < win ? win * 2 : PAR_SOLO_NS;
	win = win < PAR_SOLO_MAX_NS ? win : PAR_SOLO_MAX_NS;
	atomic_store_explicit(&pool.solo_window, win, memory_order_relaxed);
	atomic_store_explicit(&pool.solo_until, now + win, memory_order_relaxed);
	contended(now);
}

/* Between two looks at the clock `last` and `now` (a few microseconds of
 * pauses apart), the thread lost its core for long: notes contention. */
static void check_preempted(int64_t last, int64_t now)
{
	if (now - last > PAR_PREEMPTED_NS)
		contended(now);
}

static int64_t spin_span(void)
{
	if (contended_at(now_ns()))
		return PAR_SPIN_CONTENDED_NS;
	return atomic_load_explicit(&pool.runs, memory_order_relaxed) > 0 ? PAR_SPIN_RUN_NS
									 : PAR_SPIN_IDLE_NS;
}

static atomic_int stats_on;
static atomic_uint_least64_t st_jobs, st_wall, st_busy, st_cap, st_tail, st_late, st_single;

/* A part of job `job` for slot `slot`, -1 when none is left: the next
 * in increasing order (ordered jobs: the job word's count), or the front
 * of the slot's home range, else the back of another thread's. w: the job
 * word as read last (its kind is the job's, or a later job's whose number
 * then differs). */
static int claim_part(uint32_t job, int slot, uint64_t w)
{
	if (W_IS_ORDERED(w)) {
		for (;;) {
			if (W_JOB(w) != job || W_NEXT(w) >= W_PARTS(w))
				return -1;
			if (atomic_compare_exchange_weak_explicit(&pool.word, &w, w + (1u << 16),
								  memory_order_acq_rel,
								  memory_order_acquire))
				return W_NEXT(w);
		}
	}
	int threads = atomic_load_explicit(&pool.threads, memory_order_relaxed);
	for (int i = 0; i < threads; i++) {
		atomic_uint_least64_t *r = &pool.home[(slot + i) % threads].w;
		uint64_t v = atomic_load_explicit(r, memory_order_acquire);
		while (W_JOB(v) == job && W_NEXT(v) < W_PARTS(v))
			if (atomic_compare_exchange_weak_explicit(r, &v, i ? v - 1 : v + (1u << 16),
								  memory_order_acq_rel,
								  memory_order_acquire))
				return i ? W_PARTS(v) - 1 : W_NEXT(v);
	}
	return -1;
}

/* Claims and runs parts of job `job` (slot `slot`) until none is left. */
static void run_parts(uint32_t job, int slot)
{
	uint64_t w = atomic_load_explicit(&pool.word, memory_order_acquire);
	if (W_JOB(w) != job)
		return;
	int first = 1, parts = W_PARTS(w), part;
	while ((part = claim_part(job, slot, w)) >= 0) {
		/* the job cannot end before this part does: its fields hold */
		int real = pool.real_parts, on = pool.stats;
		int64_t t0 = on ? now_ns() : 0;
		if (on && first && slot > 0)
			atomic_fetch_add(&st_late, (uint64_t)(t0 - pool.published));
		first = 0;
		if (real == parts) {
			pool.fn(pool.arg, part, parts, slot);
		} else {
			int64_t lo, hi;
			gc_nn_part_range(real, part, parts, &lo, &hi);
			for (int64_t p = lo; p < hi; p++)
				pool.fn(pool.arg, (int)p, real, slot);
		}
		if (on)
			atomic_fetch_add(&st_busy, (uint64_t)(now_ns() - t0));
		w = atomic_load_explicit(&pool.word, memory_order_acquire);
		/* seq_cst, as the caller's store of caller_waits and load of
		 * finished: one of the two sees the other */
		if (atomic_fetch_add(&pool.finished, 1) + 1 == parts &&
		    atomic_load(&pool.caller_waits)) {
			pthread_mutex_lock(&pool.lock);
			pthread_cond_signal(&pool.done);
			pthread_mutex_unlock(&pool.lock);
		}
	}
}

/* wait_job's spin: the job word when it changed or the pool stops, or the
 * old one when the worker should sleep. */
static uint64_t spin_job(int w, uint32_t seen)
{
	int slot = w + 1;
	int64_t last = now_ns(), mine = last + spin_span();
	for (int i = 1;; i++) {
		uint64_t word = atomic_load_explicit(&pool.word, memory_order_acquire);
		if (W_JOB(word) != seen || atomic_load_explicit(&pool.stop, memory_order_relaxed))
			return word;
		if (i % PAR_CHECK == 0) {
			int64_t now = now_ns();
			check_preempted(last, now);
			last = now;
			if (slot >= atomic_load_explicit(&pool.threads, memory_order_relaxed) ||
			    (now > mine &&
			     now > atomic_load_explicit(&pool.hot_until, memory_order_relaxed)))
				return word;
		}
		PAR_RELAX();
	}
}

/*
 * A worker woken onto the CPU of the thread that woke it moves off it. The
 * scheduler places a wakee beside its waker when no other CPU looks idle,
 * and in a VM an idle vCPU that the host has descheduled looks busy
 * (preempted): on a 2-vCPU Intel VM, after 30 ms without a request, the
 * woken worker shared the caller's CPU for ~7 ms of a 10 ms mobilenet_v2
 * run while the other vCPU idled (perf sched), so the caller ran most
 * jobs alone and the run took longer than at one thread. Taking the CPU
 * out of the thread's affinity for a moment migrates it at once; the
 * thread's own set (the user's taskset or cpuset) is put back unchanged.
 * Two system calls, only when stacked.
 */
void gc_nn_par_unstack(int waker)
{
	if (waker < 0 || sched_getcpu() != waker)
		return;
	cpu_set_t own, other;
	if (sched_getaffinity(0, sizeof own, &own))
		return;
	other = own;
	CPU_CLR(waker, &other);
	if (CPU_COUNT(&other) > 0 && !sched_setaffinity(0, sizeof other, &other))
		sched_setaffinity(0, sizeof own, &own);
}

/* Wakes sleeping worker i for work (lock held), noting the waker's CPU
 * for gc_nn_par_unstack. */
static void wake_worker(int i)
{
	pool.waker_cpu = sched_getcpu();
	pthread_cond_signal(&pool.w[i].wake);
}

/* Worker w's wait for a job after `seen`: spins while the pool is hot and
 * the last job used it, then sleeps; nudged awake, spins again. Returns the
 * job word. */
static uint64_t wait_job(int w, uint32_t seen)
{
	for (;;) {
		uint64_t word = spin_job(w, seen);
		if (W_JOB(word) != seen || atomic_load(&pool.stop))
			return word;
		pthread_mutex_lock(&pool.lock);
		pool.w[w].sleeping = 1;
		while (W_JOB(word = atomic_load(&pool.word)) == seen && !atomic_load(&pool.stop) &&
		       !pool.w[w].nudged)
			pthread_cond_wait(&pool.w[w].wake, &pool.lock);
		pool.w[w].sleeping = 0;
		pool.w[w].nudged = 0;
		int waker = atomic_load(&pool.stop) ? -1 : pool.waker_cpu; /* (ending: stays) */
		pthread_mutex_unlock(&pool.lock);
		gc_nn_par_unstack(waker);
		if (W_JOB(word) != seen || atomic_load(&pool.stop))
			return word;
	}
}

void gc_nn_par_lost_core(int64_t now, int64_t lost, int64_t parts)
{
	if (lost <= PAR_PREEMPTED_NS)
		return;
	/* in its parts if they took longer than that (a time slice is much
	 * longer than a part), or again soon after the last time */
	if (parts >= lost || contended_at(now))
		go_solo(now);
	else
		contended(now);
}

/* The time (ns) the calling thread has waited on a run queue, from the
 * kernel's scheduler statistics (fd: its /proc/thread-self/schedstat: ns
 * on the CPU, ns waiting to be, time slices); -1 when unknown. */
static int64_t run_delay(int fd)
{
	char b[96];
	ssize_t n = fd >= 0 ? pread(fd, b, sizeof b - 1, 0) : -1;
	if (n <= 0)
		return -1;
	b[n] = 0;
	char *e, *f;
	strtoll(b, &e, 10);
	long long d = strtoll(e, &f, 10);
	return e > b && f > e && d >= 0 ? (int64_t)d : -1;
}

static void *worker(void *p)
{
	int w = (int)(intptr_t)p;
	/* the job it was started for is the one after this */
	uint32_t seen = (W_JOB(atomic_load(&pool.word)) - 1) & W_JOB_MASK;
	int sched = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	/* the run delay at the last look, when that was, and the time in
	 * parts since */
	int64_t waited = run_delay(sched), looked = now_ns(), parts = 0;
	for (;;) {
		seen = W_JOB(wait_job(w, seen));
		if (atomic_load(&pool.stop))
			break;
		if (w + 1 < atomic_load_explicit(&pool.threads, memory_order_relaxed)) {
			int64_t t0 = now_ns();
			run_parts(seen, w + 1);
			int64_t t1 = now_ns();
			parts += t1 - t0;
			/* no more can be lost than has passed: a look (a
			 * system call, ~1-3 us) at most once a
			 * PAR_PREEMPTED_NS, not after every job */
			if (t1 - looked <= PAR_PREEMPTED_NS)
				continue;
			int64_t d = run_delay(sched);
			if (waited >= 0 && d >= 0)
				gc_nn_par_lost_core(t1, d - waited, parts);
			waited = d;
			looked = t1;
			parts = 0;
		}
	}
	if (sched >= 0)
		close(sched);
	return NULL;
}

static void pool_stop(void)
{
	pthread_mutex_lock(&pool.lock);
	atomic_store(&pool.stop, 1);
	int n = pool.workers;
	for (int i = 0; i < n; i++)
		pthread_cond_signal(&pool.w[i].wake);
	pthread_mutex_unlock(&pool.lock);
	for (int i = 0; i < n; i++) {
		pthread_join(pool.w[i].th, NULL);
		pthread_cond_destroy(&pool.w[i].wake);
	}
}

/* A child of fork has none of the workers: it starts its own. */
static void pool_forked(void)
{
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.workers = 0;
	atomic_store(&pool.busy, 0);
}

static void pool_init(void)
{
	pthread_atfork(NULL, NULL, pool_forked);
}

/* Sessions are the pool's users: it starts workers when a run needs them
 * and ends them with its last user, so no graphcc thread outlives every
 * session (nor needs an atexit handler). */
void gc_nn_par_acquire(void)
{
	pthread_mutex_lock(&pool.lock);
	pool.users++;
	pthread_mutex_unlock(&pool.lock);
}

void gc_nn_par_release(void)
{
	pthread_mutex_lock(&pool.lock);
	int last = --pool.users == 0 && pool.workers > 0;
	pthread_mutex_unlock(&pool.lock);
	if (!last)
		return;
	pool_stop();
	pthread_mutex_lock(&pool.lock);
	pool.workers = 0;
	atomic_store(&pool.stop, 0);
	pthread_mutex_unlock(&pool.lock);
}

/*
 * The runs under way on this thread (nested ones count once), and whether
 * the pool was told of them: only at their first job handed to the pool. A
 * run whose nodes all run serially (a small model, the Identity floor)
 * never touches the pool's shared lines -- no atomic, no clock read -- and
 * the workers' spin is unchanged, since it matters only after a job.
 */
static _Thread_local int run_depth GC_TLS_INITIAL_EXEC;
static _Thread_local int run_told GC_TLS_INITIAL_EXEC;
static atomic_uint_least64_t runs_told;
/* The run's split work (gc_nn_par_run_work), and the estimate of the
 * last gc_nn_par_threads call that chose threads (< 0: none since the last
 * job), which the next job is taken to be. */
static _Thread_local double run_work GC_TLS_INITIAL_EXEC;
static _Thread_local double last_est GC_TLS_INITIAL_EXEC;

void gc_nn_par_run_begin(void)
{
	if (run_depth++ == 0) {
		run_work = 0;
		last_est = -1;
	}
}

double gc_nn_par_run_work(void)
{
	return run_work;
}

/* A job of `threads` threads in this thread's run: its work is added to
 * the run's (its estimate, or "unknown"). */
static void run_job(int threads)
{
	if (threads > 1)
		run_work += last_est >= 0 ? last_est : HUGE_VAL;
	last_est = -1;
}

void gc_nn_par_run_end(void)
{
	if (--run_depth > 0 || !run_told)
		return;
	run_told = 0;
	atomic_fetch_sub_explicit(&pool.runs, 1, memory_order_relaxed);
	keep_hot(PAR_SPIN_IDLE_NS);
}

/* A job of this thread's run goes to the pool: the workers spin for the
 * rest of the run (spin_span). */
static void run_tell(void)
{
	if (run_depth > 0 && !run_told) {
		run_told = 1;
		atomic_fetch_add_explicit(&pool.runs, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&runs_told, 1, memory_order_relaxed);
	}
}

uint64_t gc_nn_par_runs_told(void)
{
	return atomic_load(&runs_told);
}

int gc_nn_par_awake(void)
{
	pthread_mutex_lock(&pool.lock);
	int n = 0;
	for (int i = 0; i < pool.workers; i++)
		n += !pool.w[i].sleeping;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

int gc_nn_par_solo(void)
{
	return atomic_load_explicit(&pool.solo_until, memory_order_relaxed) > now_ns();
}

static atomic_uint_least64_t par_jobs;

uint64_t gc_nn_par_jobs(void)
{
	return atomic_load(&par_jobs);
}

/* The threads a job can use without waking a worker (lock held): the
 * caller and the workers up to the first asleep. */
static int awake_threads(int threads)
{
	int t = 1;
	while (t < threads && !pool.w[t - 1].sleeping)
		t++;
	return t;
}

static atomic_uint_least64_t nudges;

uint64_t gc_nn_par_nudges(void)
{
	return atomic_load(&nudges);
}

/* Wakes the sleeping workers among the first `threads` - 1 with no part of
 * a job (lock held): they spin for the run's next one. */
static void nudge(int threads)
{
	for (int i = 0; i < threads - 1; i++)
		if (pool.w[i].sleeping) {
			pool.w[i].nudged = 1;
			wake_worker(i);
			atomic_fetch_add_explicit(&nudges, 1, memory_order_relaxed);
		}
}

/* Starts workers up to `threads` - 1 (lock held); the threads it can use. */
static int start_workers(int threads)
{
	while (pool.workers < threads - 1) {
		par_worker *w = &pool.w[pool.workers];
		w->sleeping = 0;
		w->nudged = 0;
		if (pthread_cond_init(&w->wake, NULL))
			return pool.workers + 1;
		if (pthread_create(&w->th, NULL, worker, (void *)(intptr_t)pool.workers)) {
			pthread_cond_destroy(&w->wake);
			return pool.workers + 1;
		}
		pool.workers++;
	}
	return threads;
}

void gc_nn_par_stats_on(int on)
{
	atomic_fetch_add(&stats_on, on ? 1 : -1);
}

void gc_nn_par_stats_read(gc_nn_par_stats *s)
{
	s->jobs = atomic_load(&st_jobs);
	s->wall_ns = atomic_load(&st_wall);
	s->busy_ns = atomic_load(&st_busy);
	s->cap_ns = atomic_load(&st_cap);
	s->tail_ns = atomic_load(&st_tail);
	s->late_ns = atomic_load(&st_late);
	s->single = atomic_load(&st_single);
}

static void run_here(int parts, gc_nn_part_fn fn, void *arg)
{
	if (atomic_load_explicit(&stats_on, memory_order_relaxed))
		atomic_fetch_add(&st_single, 1);
	for (int p = 0; p < parts; p++)
		fn(arg, p, parts, 0);
}

static void par_run(int threads, int parts, gc_nn_part_fn fn, void *arg, int ordered)
{
	if (threads > GC_NN_PAR_MAX)
		threads = GC_NN_PAR_MAX;
	if (threads > parts)
		threads = parts;
	double est = last_est; /* (run_job forgets it) */
	run_job(threads);
	if (threads <= 1) {
		run_here(parts, fn, arg);
		return;
	}
	atomic_fetch_add_explicit(&par_jobs, 1, memory_order_relaxed);
	pthread_once(&pool.once, pool_init);
	if (gc_nn_par_solo()) { /* the cores are contended (go_solo) */
		run_here(parts, fn, arg);
		return;
	}
	int idle = 0;
	if (!atomic_compare_exchange_strong(&pool.busy, &idle, 1)) {
		/* another session's job: run this one alone, and spin less (a
		 * worker that then loses its core opens a solo window) */
		contended(now_ns());
		run_here(parts, fn, arg);
		return;
	}
	pthread_mutex_lock(&pool.lock);
	if (!atomic_load(&pool.stop))
		threads = start_workers(threads);
	else
		threads = 1;
	int nudged = 0;
	if (est > 0 && est < PAR_WAKE_WORK) {
		int t = awake_threads(threads);
		if (t < threads) {
			nudge(threads);
			nudged = 1;
		}
		threads = t;
	}
	pthread_mutex_unlock(&pool.lock);
	if (nudged) { /* they spin as for the run's jobs */
		run_tell();
		keep_hot(spin_span());
	}
	if (threads <= 1) {
		atomic_store(&pool.busy, 0);
		run_here(parts, fn, arg);
		return;
	}
	run_tell();
	int claim = parts > PAR_MAX_PARTS ? PAR_MAX_PARTS : parts;
	pool.fn = fn;
	pool.arg = arg;
	pool.real_parts = parts;
	atomic_store_explicit(&pool.threads, threads, memory_order_relaxed);
	atomic_store_explicit(&pool.finished, 0, memory_order_relaxed);
	int on = atomic_load_explicit(&stats_on, memory_order_relaxed);
	int64_t t_pub = on ? now_ns() : 0, t_mine = 0;
	pool.stats = on;
	pool.published = t_pub;
	keep_hot(spin_span());
	uint32_t job = (W_JOB(atomic_load_explicit(&pool.word, memory_order_relaxed)) + 1) & W_JOB_MASK;
	for (int i = 0; !ordered && i < threads; i++) /* published with the word below */
		atomic_store_explicit(&pool.home[i].w,
				      (uint64_t)job << 32 | (uint64_t)(i * claim / threads) << 16 |
					  (uint64_t)((i + 1) * claim / threads),
				      memory_order_relaxed);
	/* seq_cst: ordered before the reads of the sleeping flags below (a
	 * worker sets its flag, then reads the word, under the lock) */
	atomic_store(&pool.word, (ordered ? W_ORDERED : 0) | (uint64_t)job << 32 | (uint64_t)claim);
	pthread_mutex_lock(&pool.lock);
	for (int i = 0; i < threads - 1; i++)
		if (pool.w[i].sleeping)
			wake_worker(i);
	pthread_mutex_unlock(&pool.lock);
	run_parts(job, 0);
	if (on)
		t_mine = now_ns();
	/* the rest are parts that workers have begun: spin, then sleep */
	/* Briefly: spinning on a worker that lost its core would keep the core
	 * it needs (a long part is no sign of contention: only a lost core is) */
	while (atomic_load_explicit(&pool.finished, memory_order_acquire) < claim) {
		int64_t last = now_ns(), end = last + PAR_SPIN_IDLE_NS;
		for (int i = 1; atomic_load_explicit(&pool.finished, memory_order_acquire) < claim;
		     i++) {
			if (i % PAR_CHECK == 0) {
				int64_t now = now_ns();
				check_preempted(last, now);
				last = now;
				if (now > end)
					break;
			}
			PAR_RELAX();
		}
		atomic_store(&pool.caller_waits, 1);
		pthread_mutex_lock(&pool.lock);
		while (atomic_load(&pool.finished) < claim)
			pthread_cond_wait(&pool.done, &pool.lock);
		pthread_mutex_unlock(&pool.lock);
		atomic_store(&pool.caller_waits, 0);
	}
	if (on) {
		int64_t t_end = now_ns();
		atomic_fetch_add(&st_jobs, 1);
		atomic_fetch_add(&st_wall, (uint64_t)(t_end - t_pub));
		atomic_fetch_add(&st_cap, (uint64_t)(t_end - t_pub) * (uint64_t)threads);
		atomic_fetch_add(&st_tail, (uint64_t)(t_end - t_mine));
	}
	keep_hot(spin_span());
	atomic_store_explicit(&pool.busy, 0, memory_order_release);
}

void gc_nn_parallel(int threads, int parts, gc_nn_part_fn fn, void *arg)
{
	par_run(threads, parts, fn, arg, 0);
}

void gc_nn_parallel_ordered(int threads, int parts, gc_nn_part_fn fn, void *arg)
{
	par_run(threads, parts, fn, arg, 1);
}

/* One round of a wait for another thread: a pause, and every 4096 the
 * core yielded (the thread waited for may have lost its). */
static void wait_round(int i)
{
	if (i % 4096 == 0)
		sched_yield();
	else
		PAR_RELAX();
}

void gc_nn_par_wait(atomic_int *done, int n)
{
	for (int i = 1; atomic_load_explicit(done, memory_order_acquire) < n; i++)
		wait_round(i);
}

void gc_nn_par_wait_byte(atomic_uchar *state, unsigned char v)
{
	for (int i = 1; atomic_load_explicit(state, memory_order_acquire) != v; i++)
		wait_round(i);
}

int gc_nn_par_threads(int threads, double cycles)
{
	if (threads <= 1 || cycles < 2 * GC_NN_PAR_MIN_SHARE) {
		last_est = -1;
		return 1;
	}
	last_est = cycles;
	double n = cycles / GC_NN_PAR_MIN_SHARE;
	threads = threads < GC_NN_PAR_MAX ? threads : GC_NN_PAR_MAX; /* what the pool runs */
	return n < threads ? (int)n : threads;
}
