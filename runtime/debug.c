/*
 * gc_session_run_debug: the debugging instruments of <graphcc/debug.h> as
 * hooks around each kernel of the executor's loop (run-hooks.h). The parts live beside it
 * (debug-report.c, debug-dump.c, debug-guard.c, debug-profile.c); this file
 * drives them and holds the breakpoint and the per-node time limit.
 *
 * Order around node i: inputs changed since dumped saved as seen ->
 * break-before (SIGTRAP) -> watchdog armed -> kernel (on guarded shadows
 * for a custom node under --guard) -> guard check (and the second call of
 * a kernel with scratch) -> checked tensors -> dump -> trace line -> NaN
 * check. A node's outputs are thus dumped and
 * traced before --check-nan stops at it, so the bad tensor is on disk.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "api-check.h"
#include "options.h"
#include "crash.h"
#include "custom.h"
#include "debug-impl.h"
#include "kernels/nn-par.h"
#include "run-hooks.h"
#include "session-impl.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ------------------------------------------------------------ --break-before */

/* A debugger (not a tracer such as strace, which would pass SIGTRAP on and
 * let it kill the process) is attached. */
static bool debugger_attached(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return false;
	char line[256];
	long pid = 0;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "TracerPid:", 10)) {
			pid = strtol(line + 10, NULL, 10);
			break;
		}
	fclose(f);
	if (pid <= 0)
		return false;
	char path[64], comm[64] = "";
	snprintf(path, sizeof path, "/proc/%ld/comm", pid);
	if ((f = fopen(path, "r"))) {
		if (!fgets(comm, sizeof comm, f))
			comm[0] = 0;
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = 0;
	return strcmp(comm, "strace") && strcmp(comm, "ltrace");
}

/*
 * The debugger stops in here (in raise), a few 'finish'es from the loop
 * that calls the kernel next (gc_session_run_hooked); 'up' shows this frame: n is the node, in/out its
 * tensors. Not inlined, so that the frame exists.
 */
__attribute__((noinline)) static void gc_debug_break_before(const gc_node *n, gc_tensor *const *in,
							    gc_tensor *const *out)
{
	raise(SIGTRAP);
	/* Keeps n, in and out alive across raise, so gdb can print them. */
	__asm__ volatile("" : : "r"(n), "r"(in), "r"(out) : "memory");
}

static void break_before(const gc_session *s, const gc_node *n, gc_tensor *const *in,
			 gc_tensor *const *out)
{
	char node[1400], kernel[1200];
	gc_debug_node_str(n, node, sizeof node);
	const gc_custom *c = n->custom;
	if (c)
		snprintf(kernel, sizeof kernel,
			 "its kernel %s in %s; in gdb: 'break %s' (or 'break *%p'), then "
			 "'continue' to enter it",
			 c->symbol, c->library, c->symbol, (void *)(uintptr_t)c->kernel);
	else
		snprintf(kernel, sizeof kernel,
			 "graphcc's built-in kernel for %s at %p; in gdb: 'break *%p', then "
			 "'continue' to enter it",
			 n->op_type, (void *)(uintptr_t)n->run, (void *)(uintptr_t)n->run);
	if (!debugger_attached()) {
		char cmd[3000];
		gc_crash_cmdline(cmd, sizeof cmd);
		gc_log(&s->log, GC_LOG_WARNING,
		       "gc_debug_options.break_before (--break-before): no debugger attached; run "
		       "under gdb: gdb --args %s (not stopping before %s)",
		       cmd[0] ? cmd : "graphcc run ...", node);
		return;
	}
	gc_log(&s->log, GC_LOG_INFO,
	       "gc_debug_options.break_before (--break-before): stopping before %s: SIGTRAP; "
	       "next comes %s (in 'bt', frame gc_debug_break_before holds the node n and its "
	       "tensors in[], out[])",
	       node, kernel);
	gc_debug_break_before(n, in, out);
}

/* ------------------------------------------------------------ --timeout */

typedef struct watchdog {
	const gc_session *s;
	const gc_debug_options *opt;
	double limit_us;
	pthread_t thread;
	bool started;
	atomic_bool stop;
	atomic_int node;      /* running node, -1 between nodes */
	_Atomic double since; /* when it started (now_us) */
	/* Set once the limit was passed: the run's cancel flag (so the next
	 * node does not start, and a kernel polling should_stop stops), and
	 * what passed it. */
	int fired;
	int32_t fired_node;
	double fired_us;
} watchdog;

/* The library never ends its host: past the limit, the watchdog reports
 * (to opt->on_timeout, else the session's log) and cancels the run; a
 * host that cannot wait for the kernel ends the process in on_timeout
 * (the graphcc command does, exit 3). */
static void timeout_fire(watchdog *w, int32_t i, double elapsed_us)
{
	char node[1400], msg[2048];
	gc_debug_node_str(&w->s->p->nodes[i], node, sizeof node);
	snprintf(msg, sizeof msg,
		 "gc_debug_options.timeout_seconds (graphcc: --timeout): %s has run for %.1f s, "
		 "over the limit of %g s",
		 node, elapsed_us / 1e6, w->limit_us / 1e6);
	w->fired_node = i;
	w->fired_us = elapsed_us;
	__atomic_store_n(&w->fired, 1, __ATOMIC_RELEASE);
	if (w->opt->on_timeout)
		w->opt->on_timeout(w->opt->timeout_user, msg);
	else
		gc_log(&w->s->log, GC_LOG_ERROR, "%s; the run is canceled when the kernel returns",
		       msg);
}

static void *watch(void *arg)
{
	watchdog *w = arg;
	double tick = w->limit_us / 20;
	tick = tick < 1000 ? 1000 : tick > 20000 ? 20000 : tick;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(tick * 1e3)};
	while (!atomic_load(&w->stop)) {
		nanosleep(&ts, NULL);
		int i = atomic_load(&w->node);
		double since = atomic_load(&w->since);
		if (i < 0 || i != atomic_load(&w->node))
			continue;
		double elapsed = now_us() - since;
		if (elapsed > w->limit_us) {
			timeout_fire(w, i, elapsed);
			break;
		}
	}
	return NULL;
}

static int watchdog_start(watchdog *w, const gc_session *s, const gc_debug_options *opt,
			  gc_error *err)
{
	double seconds = opt->timeout_seconds;
	memset(w, 0, sizeof *w);
	w->s = s;
	w->opt = opt;
	w->limit_us = seconds * 1e6;
	atomic_init(&w->stop, false);
	atomic_init(&w->node, -1);
	atomic_init(&w->since, 0.0);
	int rc = pthread_create(&w->thread, NULL, watch, w);
	if (rc)
		return gc_error_set(err, GC_ENOMEM,
				    "gc_debug_options.timeout_seconds (--timeout): cannot start "
				    "the watchdog thread: %s",
				    strerror(rc));
	w->started = true;
	return 0;
}

static void watchdog_stop(watchdog *w)
{
	if (!w->started)
		return;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	w->started = false;
}

/* ------------------------------------------------------------ the loop */

static int find_node(const gc_program *p, const char *name, gc_error *err)
{
	for (int32_t i = 0; i < p->n_nodes; i++)
		if (!strcmp(p->nodes[i].name, name))
			return i;
	char some[600];
	size_t at = 0;
	some[0] = 0;
	for (int32_t i = 0; i < p->n_nodes && i < 8 && at + 1 < sizeof some; i++) {
		int n = snprintf(some + at, sizeof some - at, "%s'%s'", i ? ", " : "",
				 p->nodes[i].name);
		at += n > 0 ? (size_t)n : 0;
	}
	gc_error_set(err, GC_EINVAL,
		     "--break-before: node '%s' does not exist in the program (its %d nodes: "
		     "%s%s; nodes removed by constant folding do not run)",
		     name, (int)p->n_nodes, some, p->n_nodes > 8 ? ", ..." : "");
	return -1;
}

/* NaN/Inf in a graph input or constant: note it once; nodes fed by it are
 * not blamed. */
static void mark_nonfinite(const gc_session *s, int32_t idx, unsigned char *bad, bool note)
{
	double v;
	int64_t at = gc_debug_first_nonfinite(&s->tensors[idx], &v);
	if (at < 0)
		return;
	bad[idx] = 1;
	if (note)
		gc_log(&s->log, GC_LOG_WARNING,
		       "gc_debug_options.check_nan (--check-nan): graph input '%s' already holds "
		       "%s (flat index %" PRId64 "); nodes fed by it are not blamed",
		       s->p->tensors[idx].name, v != v ? "NaN" : "Inf", at);
}

static int nan_origin(const gc_session *s, int32_t i, unsigned char *bad, gc_error *err)
{
	const gc_node *n = &s->p->nodes[i];
	int first = -1;
	int64_t at = -1;
	double v = 0;
	for (int j = 0; j < n->n_out; j++) {
		double vj;
		int64_t aj;
		if (n->out[j] < 0 ||
		    (aj = gc_debug_first_nonfinite(&s->tensors[n->out[j]], &vj)) < 0)
			continue;
		bad[n->out[j]] = 1;
		if (first < 0) {
			first = j;
			at = aj;
			v = vj;
		}
	}
	if (first < 0)
		return 0;
	/* Constants are looked at only now, when it matters. */
	for (int j = 0; j < n->n_in; j++) {
		int32_t idx = n->in[j];
		if (idx < 0)
			continue;
		if (s->p->tensors[idx].storage == GC_STORAGE_CONST)
			mark_nonfinite(s, idx, bad, false);
		if (bad[idx])
			return 0;
	}
	int32_t idx = n->out[first];
	const gc_tensor *t = &s->tensors[idx];
	gc_dstats st;
	gc_debug_stats(t, &st);
	char node[1400], shape[160], el[200];
	return gc_error_set(
	    err, GC_ECRASH,
	    "--check-nan: the first NaN/Inf comes from %s: its output '%s' (output %d, %s %s) "
	    "holds %s at flat index %" PRId64 " %s (%" PRId64 " NaN and %" PRId64
	    " Inf among %" PRId64 " values), and none of its inputs holds NaN or Inf",
	    gc_debug_node_str(n, node, sizeof node), s->p->tensors[idx].name, first,
	    gc_dtype_name(t->dtype), gc_shape_str(t->dims, t->rank, shape, sizeof shape),
	    v != v  ? "NaN"
	    : v > 0 ? "+Inf"
		    : "-Inf",
	    at, gc_debug_index_str(t, at, el, sizeof el), st.nan, st.inf, st.count);
}

/* Scratch poison under --guard (gc_kctx.scratch_poison): 0xFF bytes are a
 * NaN as float32 and float64; the second call's bytes differ. */
#define POISON_NAN (0x100 | 0xFF)
#define POISON_OTHER (0x100 | 0x5A)

/* The instruments of one debug run, as hooks of the executor's loop. */
typedef struct debug_run {
	const gc_debug_options *opt;
	int32_t brk;
	double *start, *dur; /* per node, microseconds from the run's start */
	gc_nn_par_stats *pool, pool0; /* --profile: per node, the pool's jobs */
	double t_run, t0;
	unsigned char *bad; /* per tensor: holds NaN/Inf */
	gc_dumper *dump;
	gc_guard *guard;
	gc_tcheck *tc;	/* checksums: --check-tensors, --guard, --dump-dir */
	bool verify;	/* check every live tensor after each node */
	watchdog wd;
	int32_t done; /* nodes that ran */
} debug_run;

/* gc_debug_options.observe for node i (the session's own tensors). */
static int observe(debug_run *d, const gc_session *s, int32_t i, int after, gc_error *err)
{
	const gc_node *n = &s->p->nodes[i];
	gc_tensor *const *io = gc_session_io(s, i);
	int rc = d->opt->observe(d->opt->observe_user, i, after, io, n->n_in, io + n->n_in,
				 n->n_out);
	if (rc)
		return gc_error_set(err, rc, "node '%s': stopped by the observer", n->name);
	return 0;
}

/* --dump-dir: node rn's inputs that changed since they were dumped, saved
 * as it sees them. */
static int dump_seen(debug_run *d, const gc_run_node *rn, gc_error *err)
{
	const gc_session *s = rn->session;
	const gc_node *n = rn->node;
	for (int j = 0; j < n->n_in; j++) {
		int32_t idx = n->in[j], k = -1;
		bool again = false;
		for (int jj = 0; jj < j; jj++)
			again |= n->in[jj] == idx;
		if (idx < 0 || again || !gc_tcheck_changed(d->tc, s, idx))
			continue;
		k = gc_tcheck_producer(d->tc, idx);
		int rc = gc_dumper_write_seen(d->dump, s, idx, k >= 0 ? s->p->nodes[k].name : NULL,
					      n->name, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int debug_before(void *user, gc_run_node *rn, gc_error *err)
{
	debug_run *d = user;
	const gc_node *n = rn->node;
	if (rn->index == d->brk)
		break_before(rn->session, n, rn->in, rn->out);
	int rc;
	if (d->opt->observe && (rc = observe(d, rn->session, rn->index, 0, err)))
		return rc;
	if (d->dump && d->tc && (rc = dump_seen(d, rn, err)))
		return rc;
	if (d->guard && n->custom) {
		rn->out = gc_guard_begin(d->guard, rn->session, rn->index);
		rn->scratch_poison = POISON_NAN;
	}
	if (d->pool)
		gc_nn_par_stats_read(&d->pool0);
	d->t0 = now_us();
	if (d->wd.started) {
		atomic_store(&d->wd.since, d->t0);
		atomic_store(&d->wd.node, (int)rn->index);
	}
	return 0;
}

/* The node's time, whether it succeeded or not. */
static void debug_timed(debug_run *d, int32_t i)
{
	double t1 = now_us();
	if (d->wd.started)
		atomic_store(&d->wd.node, -1);
	d->start[i] = d->t0 - d->t_run;
	d->dur[i] = t1 - d->t0;
	d->done = i + 1;
	if (d->pool) {
		gc_nn_par_stats a = d->pool0, b;
		gc_nn_par_stats_read(&b);
		d->pool[i] = (gc_nn_par_stats){b.jobs - a.jobs,	    b.wall_ns - a.wall_ns,
					       b.busy_ns - a.busy_ns, b.cap_ns - a.cap_ns,
					       b.tail_ns - a.tail_ns, b.late_ns - a.late_ns,
					       b.single - a.single};
	}
}

static void debug_failed(void *user, const gc_run_node *rn, int rc, gc_error *err)
{
	(void)rc;
	(void)err;
	debug_timed(user, rn->index);
}

/* A custom kernel with scratch, called again on scratch poisoned otherwise
 * (shadow outputs again): its outputs must not change. */
static int scratch_again(debug_run *d, const gc_run_node *rn, gc_error *err)
{
	gc_session *s = rn->session;
	const gc_custom *c = rn->node->custom;
	if (!c->kernel_scratch || !gc_guard_may_rerun(s, rn->index))
		return 0;
	gc_run_node again = *rn;
	again.out = gc_guard_begin(d->guard, s, rn->index);
	again.scratch_poison = POISON_OTHER;
	int rc = gc_session_run_node_again(s, &again, err);
	if (rc)
		return rc > 0 ? 0 : rc;
	return gc_guard_again(d->guard, s, rn->index, POISON_NAN, POISON_OTHER, err);
}

/* Order after a node: guard check -> dump -> trace line -> NaN check. */
static int debug_after(void *user, const gc_run_node *rn, gc_error *err)
{
	debug_run *d = user;
	const gc_session *s = rn->session;
	const gc_node *n = rn->node;
	int32_t i = rn->index;
	int rc;
	debug_timed(d, i);
	if (d->guard && n->custom &&
	    ((rc = gc_guard_end(d->guard, s, i, err)) || (rc = scratch_again(d, rn, err))))
		return rc;
	if (d->verify && (rc = gc_tcheck_after(d->tc, s, i, err)))
		return rc;
	for (int j = 0; !d->verify && d->tc && j < n->n_out; j++)
		if (n->out[j] >= 0)
			gc_tcheck_produced(d->tc, s, n->out[j], i);
	if (d->opt->observe && (rc = observe(d, s, i, 1, err)))
		return rc;
	for (int j = 0; d->dump && j < n->n_out; j++)
		if (n->out[j] >= 0 && (rc = gc_dumper_write(d->dump, s, n->out[j], n->name, err)))
			return rc;
	if (d->opt->trace)
		gc_debug_trace_line(d->opt->trace, s, i, d->dur[i]);
	if (d->opt->check_nan && (rc = nan_origin(s, i, d->bad, err)))
		return rc;
	return 0;
}

/* Everything before the first node: dumps and NaN marks of the inputs, the
 * trace's header, the watchdog. */
static int debug_start(debug_run *d, gc_session *s, gc_error *err)
{
	const gc_debug_options *opt = d->opt;
	const gc_program *p = s->p;
	int rc;
	d->start = gc_calloc((size_t)p->n_nodes + 1, sizeof *d->start);
	d->dur = gc_calloc((size_t)p->n_nodes + 1, sizeof *d->dur);
	d->bad = gc_calloc((size_t)p->n_tensors + 1, 1);
	if (!d->start || !d->dur || !d->bad)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	if (opt->profile_path) {
		if (!(d->pool = gc_calloc((size_t)p->n_nodes + 1, sizeof *d->pool)))
			return gc_error_set(err, GC_ENOMEM, "out of memory");
		gc_nn_par_stats_on(1);
	}
	if (opt->dump_dir && (rc = gc_dumper_open(opt->dump_dir, p, &d->dump, err)))
		return rc;
	if (opt->guard && (rc = gc_guard_new(s, &d->guard, err)))
		return rc;
	d->verify = opt->check_tensors || opt->guard;
	if ((d->verify || opt->dump_dir) && (rc = gc_tcheck_new(s, &d->tc, err)))
		return rc;
	for (int32_t t = 0; d->dump && opt->dump_weights && t < p->n_tensors; t++)
		if (p->tensors[t].storage == GC_STORAGE_CONST &&
		    (rc = gc_dumper_write(d->dump, s, t, "(constant)", err)))
			return rc;
	for (int32_t j = 0; j < p->n_inputs; j++) {
		if (d->tc)
			gc_tcheck_produced(d->tc, s, p->inputs[j], -1);
		if (d->dump && (rc = gc_dumper_write(d->dump, s, p->inputs[j], NULL, err)))
			return rc;
		if (opt->check_nan)
			mark_nonfinite(s, p->inputs[j], d->bad, true);
	}
	if (opt->trace) {
		fprintf(opt->trace,
			"trace: %d nodes; per node: index, name, op (flavour and library of "
			"custom nodes), kernel time, inputs, outputs with min/max/mean (finite "
			"values) and NaN/Inf counts\n",
			(int)p->n_nodes);
		fflush(opt->trace);
	}
	if (opt->timeout_seconds > 0) {
		if (debugger_attached())
			gc_log(&s->log, GC_LOG_WARNING,
			       "gc_debug_options.timeout_seconds (--timeout) is off under a debugger");
		else if ((rc = watchdog_start(&d->wd, s, opt, err)))
			return rc;
	}
	return 0;
}

/* The per-op-type table, as one message to the session's log. */
static void profile_summary(const gc_session *s, const debug_run *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	gc_profile_summary(f, s->p, d->dur, d->done);
	if (!fclose(f) && len && text[len - 1] == '\n')
		text[len - 1] = 0;
	gc_log_text(&s->log, GC_LOG_INFO, text);
	free(text);
}

/* Everything after the run: the profile, the dump's count. */
static int debug_finish(debug_run *d, const gc_session *s, int rc, gc_error *err)
{
	const gc_debug_options *opt = d->opt;
	const gc_program *p = s->p;
	watchdog_stop(&d->wd);
	if (opt->profile_path && d->done) {
		gc_error perr = {0};
		if (gc_profile_write(opt->profile_path, s, d->start, d->dur, d->pool, d->done,
				     &perr)) {
			if (!rc)
				rc = gc_error_set(err, perr.code, "%s", perr.msg);
		} else {
			profile_summary(s, d);
			gc_log(&s->log, GC_LOG_INFO, "profile written to %s%s", opt->profile_path,
			       d->done < p->n_nodes ? " (up to the node that failed)" : "");
		}
	}
	int32_t dumped = gc_dumper_close(d->dump);
	if (opt->dump_dir && d->dump)
		gc_log(&s->log, GC_LOG_INFO,
		       "gc_debug_options.dump_dir (--dump-dir): %d tensors written to %s (map: "
		       "tensors.tsv)",
		       (int)dumped, opt->dump_dir);
	gc_guard_free(d->guard);
	gc_tcheck_free(d->tc);
	if (d->pool)
		gc_nn_par_stats_on(0);
	gc_free(d->pool);
	gc_free(d->start);
	gc_free(d->dur);
	gc_free(d->bad);
	return rc;
}

int gc_session_run_debug(gc_session *s, const gc_debug_options *opt, gc_error *err)
{
	gc_debug_options o;
	gc_error local = {0};
	if (!err)
		err = &local;
	GC_ARG_NONNULL(err, s);
	/* An older caller's struct ends sooner: the fields it lacks are 0. */
	if (gc_options_copy(&o, sizeof o, opt, "gc_debug_options", err))
		return err->code;
	opt = &o;
	debug_run d = {.opt = opt, .brk = -1};
	if (opt->break_before && (d.brk = find_node(s->p, opt->break_before, err)) < 0)
		return err->code;
	if (gc_session_claim(s, __func__, err))
		return err->code;
	int rc = debug_start(&d, s, err);
	if (!rc) {
		gc_run_hooks h = {.user = &d,
				  .before = debug_before,
				  .after = debug_after,
				  .on_failure = debug_failed};
		d.t_run = now_us();
		if (d.wd.started && !s->cancel)
			s->cancel = &d.wd.fired;
		rc = gc_session_run_hooked(s, &h, err);
		if (s->cancel == &d.wd.fired)
			s->cancel = NULL;
	}
	watchdog_stop(&d.wd);
	if (d.wd.fired) {
		/* whatever the kernel or the stop check said, this is why */
		char node[1400];
		gc_debug_node_str(&s->p->nodes[d.wd.fired_node], node, sizeof node);
		*err = (gc_error){ 0 };
		rc = gc_error_set(err, GC_ECANCELED,
				  "session '%s': %s ran for %.1f s, over the limit of "
				  "gc_debug_options.timeout_seconds (--timeout), %g s: the run was "
				  "canceled when it returned",
				  s->name, node, d.wd.fired_us / 1e6, d.wd.limit_us / 1e6);
	}
	rc = debug_finish(&d, s, rc, err);
	gc_session_unclaim(s);
	return rc;
}
