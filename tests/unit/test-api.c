/* The public runtime API as a host calls it (issue 18): every function
 * refuses NULL and out-of-range arguments with GC_EINVAL and a message
 * naming the argument (never a crash), inputs never set are named, and a
 * session used from two threads at once answers GC_EBUSY. */
#include <graphcc/debug.h>
#include <graphcc/graphcc.h>

#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "blas.h"
#include "check.h"
#include "nn-par.h"
#include "session-impl.h"

/* y = relu(x) + x2, x and x2 float 2x3. */
static gc_program *two_input_program(void)
{
	gc_graph *g = gc_graph_new("api");
	gc_error err = { 0 };
	int64_t d[2] = { 2, 3 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	gc_graph_add_input(g, "x2", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "r" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	const char *a_in[] = { "r", "x2" }, *a_out[] = { "y" };
	gc_graph_add_node(g, "add", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_program *p = NULL;
	if (err.code || gc_compile(g, NULL, &p, &err))
		fprintf(stderr, "two_input_program: %s\n", err.msg);
	gc_graph_free(g);
	return p;
}

static float x_data[6] = { -1, 2, -3, 4, -5, 6 };

/* Every function of runtime.h and debug.h with NULL where it takes a
 * pointer (the list is runtime/libgraphcc-runtime.map). */
static void test_null_arguments(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_session *s = NULL;
	gc_tensor t = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	char buf[64];

	CHECK(gc_strerror(GC_EBUSY) != NULL);
	CHECK_INT(gc_error_set(NULL, GC_EINVAL, "x"), GC_EINVAL);
	CHECK_INT(gc_error_prefix(NULL, "x"), GC_EINVAL);
	CHECK_INT(gc_dtype_size(GC_DTYPE_FLOAT), 4);
	CHECK_STR(gc_dtype_name((gc_dtype)77), "invalid");
	CHECK_INT(gc_dtype_from_name(NULL), GC_DTYPE_UNDEFINED);
	CHECK_STR(gc_attr_type_name((gc_attr_type)99), "unknown");
	gc_value_release(NULL);
	gc_tensor_release(NULL);
	CHECK_INT(gc_tensor_numel(NULL), -1);
	CHECK_INT(gc_tensor_nbytes(NULL), -1);
	CHECK(gc_shape_str(t.dims, 2, NULL, 0) == NULL);
	CHECK_STR(gc_shape_str(NULL, 3, buf, sizeof buf), "invalid (rank 3)");
	EXPECT_EINVAL(gc_tensor_alloc(NULL, err), "'t' is NULL");
	EXPECT_EINVAL(gc_npy_read(NULL, &t, err), "'path' is NULL");
	EXPECT_EINVAL(gc_npy_read("x.npy", NULL, err), "'out' is NULL");
	EXPECT_EINVAL(gc_npy_read_mem(NULL, 10, "m", &t, err), "'buf' is NULL");
	EXPECT_EINVAL(gc_npy_read_mem("x", 1, "m", NULL, err), "'out' is NULL");
	t = (gc_tensor){ .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	EXPECT_EINVAL(gc_npy_write(NULL, &t, err), "'path' is NULL");
	EXPECT_EINVAL(gc_npy_write("/nonexistent/x.npy", NULL, err), "'t' is NULL");
	EXPECT_EINVAL(gc_npy_check(NULL, "t", err), "'t' is NULL");
	gc_program_free(NULL);
	gc_program *lp = (gc_program *)1;
	EXPECT_EINVAL(gc_program_load(NULL, NULL, &lp, err), "'path' is NULL");
	CHECK(lp == NULL);
	EXPECT_EINVAL(gc_program_load("m.gcb", NULL, NULL, err), "'out' is NULL");
	CHECK_INT(gc_is_program_file(NULL), 0);
	gc_program_origin o;
	gc_program_get_origin(NULL, &o);
	CHECK_INT(o.n_libraries, 0);
	gc_program_get_origin(p, NULL);
	CHECK_INT(gc_program_num_inputs(NULL), GC_EINVAL);
	CHECK_INT(gc_program_num_outputs(NULL), GC_EINVAL);
	CHECK_INT(gc_program_num_nodes(NULL), GC_EINVAL);
	CHECK(gc_program_input(NULL, 0, NULL) == NULL);
	CHECK(gc_program_output(NULL, 0, NULL) == NULL);
	CHECK_INT(gc_program_find_input(NULL, "x"), -1);
	CHECK_INT(gc_program_find_input(p, NULL), -1);
	gc_node_desc nd;
	gc_program_node(NULL, 0, &nd);
	CHECK(nd.name == NULL);
	gc_program_node(p, 0, NULL);
	CHECK(gc_program_node_tensor(NULL, 0, 0, 0, NULL) == NULL);
	CHECK_INT(gc_program_node_per_shape(NULL, 0, NULL, NULL), 0);
	CHECK_INT(gc_program_node_per_shape(p, -1, NULL, NULL), 0);
	CHECK_INT(gc_program_node_per_shape(p, 0, NULL, NULL), 0);

	gc_session *ls = (gc_session *)1;
	EXPECT_EINVAL(gc_session_new(NULL, NULL, &ls, err), "'p' is NULL");
	CHECK(ls == NULL);
	EXPECT_EINVAL(gc_session_new(p, NULL, NULL, err), "'out' is NULL");
	gc_session_options bad = { .threads = -2 };
	EXPECT_EINVAL(gc_session_new(p, &bad, &ls, err), "gc_session_options.threads");
	gc_session_free(NULL);
	gc_error e = { 0 };
	CHECK_INT(gc_session_new(p, NULL, &s, &e), 0);
	EXPECT_EINVAL(gc_session_set_input(NULL, 0, &t, err), "'s' is NULL");
	EXPECT_EINVAL(gc_session_set_input(s, 0, NULL, err), "'t' is NULL");
	EXPECT_EINVAL(gc_session_set_input(s, 7, &t, err), "out of range");
	EXPECT_EINVAL(gc_session_run(NULL, err), "'s' is NULL");
	EXPECT_EINVAL(gc_session_run_with(NULL, NULL, err), "'s' is NULL");
	EXPECT_EINVAL(gc_session_use_input(NULL, 0, &t, err), "'s' is NULL");
	EXPECT_EINVAL(gc_session_use_input(s, 0, NULL, err), "'t' is NULL");
	EXPECT_EINVAL(gc_session_use_output(NULL, 0, x_data, 24, err), "'s' is NULL");
	gc_run_options past = { .deadline_ns = -1 };
	EXPECT_EINVAL(gc_session_run_with(s, &past, err), "gc_run_options.deadline_ns");
	CHECK(gc_now_ns() > 0);
	EXPECT_EINVAL(gc_session_run_debug(NULL, NULL, err), "'s' is NULL");
	CHECK(gc_session_output(NULL, 0) == NULL);
	CHECK(gc_session_output(s, -1) == NULL);

	/* A rank past GC_MAX_RANK is not read past dims; negative dims refused. */
	gc_tensor big = t;
	big.rank = 100;
	CHECK_INT(gc_tensor_numel(&big), -1);
	CHECK_STR(gc_shape_str(big.dims, big.rank, buf, sizeof buf), "invalid (rank 100)");
	EXPECT_EINVAL(gc_session_set_input(s, 0, &big, err), "rank 100 is out of range");
	EXPECT_EINVAL(gc_tensor_alloc(&big, err), "rank 100");
	EXPECT_EINVAL(gc_npy_check(&big, "t", err), "rank 100");
	gc_tensor neg = t;
	neg.dims[1] = -3;
	EXPECT_EINVAL(gc_session_set_input(s, 0, &neg, err), "dim 1 is -3");
	EXPECT_EINVAL(gc_tensor_alloc(&neg, err), "dim 1 is -3");
	gc_session_free(s);
	gc_program_free(p);
}

/* A run before every input was set names the missing ones; once set, an
 * input keeps its value for the next runs. */
static void test_inputs_never_set(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_session *s = NULL;
	gc_error err = { 0 };
	gc_session_options so = { .threads = 1, .name = "req-7" };
	CHECK_INT(gc_session_new(p, &so, &s, &err), 0);
	CHECK_INT(gc_session_run(s, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "'x', 'x2'");
	CHECK_CONTAINS(err.msg, "session 'req-7'");
	gc_tensor t = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	CHECK_INT(gc_session_run(s, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "1 input was never set");
	CHECK_CONTAINS(err.msg, "'x2'");
	CHECK(!strstr(err.msg, "'x',"));
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_set_input(s, 1, &t, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	/* persistence: the next run reuses both inputs */
	CHECK_INT(gc_session_run(s, &err), 0);
	const float *y = gc_session_output(s, 0)->data;
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(y[i], (x_data[i] > 0 ? x_data[i] : 0) + x_data[i], 0);
	gc_session_free(s);
	gc_program_free(p);
}

typedef struct {
	gc_session *s;
	atomic_int *go;
	int ok, busy, other;
} hammer_arg;

static void *hammer(void *arg)
{
	hammer_arg *a = arg;
	while (!atomic_load(a->go))
		;
	for (int i = 0; i < 2000; i++) {
		gc_error err = { 0 };
		int rc = gc_session_run(a->s, &err);
		if (!rc)
			a->ok++;
		else if (rc == GC_EBUSY && strstr(err.msg, "session 'shared'"))
			a->busy++;
		else
			a->other++;
	}
	return NULL;
}

static atomic_int n_logged;
static void count_log(void *user, gc_log_level level, const char *msg)
{
	if (level == GC_LOG_WARNING && strstr(msg, "session 'shared' is in use") && user == &n_logged)
		atomic_fetch_add(&n_logged, 1);
}

/* Two threads on one session: a call while another runs is GC_EBUSY naming
 * the session, never a concurrent run (TSan/ASan builds check that nothing
 * else is touched). */
static void test_busy_session(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_session *s = NULL;
	gc_error err = { 0 };
	gc_session_options so = { .threads = 1, .name = "shared", .log = count_log,
				  .log_user = &n_logged };
	CHECK_INT(gc_session_new(p, &so, &s, &err), 0);
	gc_tensor t = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	CHECK_INT(gc_session_set_input(s, 1, &t, &err), 0);

	/* Deterministic: a call under way (claimed as every entry point does). */
	CHECK_INT(gc_session_claim(s, "test", &err), 0);
	atomic_int go = 1;
	hammer_arg one = { .s = s, .go = &go };
	pthread_t th;
	CHECK_INT(pthread_create(&th, NULL, hammer, &one), 0);
	pthread_join(th, NULL);
	CHECK_INT(one.busy, 2000);
	CHECK_INT(one.ok, 0);
	CHECK_INT(atomic_load(&n_logged), 2000); /* each refusal logged at the session's log */
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), GC_EBUSY);
	CHECK_CONTAINS(err.msg, "gc_session_set_input: session 'shared' is in use");
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_run_debug(s, NULL, &err), GC_EBUSY);
	gc_session_unclaim(s);

	/* Racing: every call either runs alone or is refused. */
	atomic_store(&go, 0);
	hammer_arg a = { .s = s, .go = &go }, b = { .s = s, .go = &go };
	pthread_t ta, tb;
	CHECK_INT(pthread_create(&ta, NULL, hammer, &a), 0);
	CHECK_INT(pthread_create(&tb, NULL, hammer, &b), 0);
	atomic_store(&go, 1);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_INT(a.other + b.other, 0);
	CHECK_INT(a.ok + a.busy + b.ok + b.busy, 4000);
	CHECK(a.ok + b.ok > 0);
	const float *y = gc_session_output(s, 0)->data;
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(y[i], (x_data[i] > 0 ? x_data[i] : 0) + x_data[i], 0);
	gc_session_free(s);
	gc_program_free(p);
}

/* gc_session_use_input reads the caller's buffer in place, run after run;
 * gc_session_use_output makes the run write into the caller's buffer. */
static void test_zero_copy_io(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_session *s = NULL;
	gc_error err = { 0 };
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	float in0[6], in1[6] = { 1, 1, 1, 1, 1, 1 }, out[6 + 1];
	memcpy(in0, x_data, sizeof in0);
	gc_tensor t0 = { .data = in0, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	gc_tensor t1 = t0;
	t1.data = in1;
	CHECK_INT(gc_session_use_input(s, 0, &t0, &err), 0);
	CHECK_INT(gc_session_use_input(s, 1, &t1, &err), 0);
	CHECK_INT(gc_session_use_output(s, 0, out, sizeof(float) * 6, &err), 0);
	for (int r = 0; r < 3; r++) {
		for (int i = 0; i < 6; i++)
			in0[i] = x_data[i] * (float)(r + 1); /* changed in place, not set again */
		CHECK_INT(gc_session_run(s, &err), 0);
		CHECK(gc_session_output(s, 0)->data == out);
		for (int i = 0; i < 6; i++)
			CHECK_NEAR(out[i], (in0[i] > 0 ? in0[i] : 0) + 1, 0);
	}
	/* set_input copies again: later changes to the buffer are not seen */
	CHECK_INT(gc_session_set_input(s, 0, &t0, &err), 0);
	in0[1] = 100;
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK_NEAR(out[1], x_data[1] * 3 + 1, 0);
	/* back to the session's memory */
	CHECK_INT(gc_session_use_output(s, 0, NULL, 0, &err), 0);
	out[0] = -42;
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(gc_session_output(s, 0)->data != out);
	CHECK_NEAR(out[0], -42, 0);
	/* refusals name the output / input */
	CHECK_INT(gc_session_use_output(s, 0, out, 8, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "output 'y' needs 24 bytes, the buffer has 8");
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_use_output(s, 0, (char *)out + 1, 24, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "not aligned for float32");
	err = (gc_error){ 0 };
	t0.data = (char *)in0 + 2;
	CHECK_INT(gc_session_use_input(s, 0, &t0, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "input 'x'");
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_use_output(s, 3, out, 24, &err), GC_EINVAL);
	gc_session_free(s);
	gc_program_free(p);
}

/* The process's live threads: entries of /proc/self/task without
 * PF_EXITING. pthread_join returns when the kernel clears the thread's tid,
 * a moment before it removes the thread's entry; a joined thread is
 * already PF_EXITING then, so counting it is a race this does not have
 * (under load a joined pool worker was once counted). */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], stat[1024];
		snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* gone since readdir */
		size_t len = fread(stat, 1, sizeof stat - 1, f);
		fclose(f);
		stat[len] = 0;
		/* "tid (comm) state ppid pgrp session tty_nr tpgid flags ..." */
		const char *q = strrchr(stat, ')');
		unsigned long flags = 0;
		char state = 0;
		if (!q || sscanf(q + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
			continue;
		n += !(flags & 0x4) && state != 'Z' && state != 'X'; /* PF_EXITING */
	}
	closedir(d);
	return n;
}

/* Waits (up to 2 s) for a solo window (nn-par.c) to end: a worker lost its
 * core in a part of an earlier test's job, on a loaded machine. Only a job
 * opens one, so none opens while a test that needs the workers begins. */
static void until_not_solo(void)
{
	for (int i = 0; i < 2000 && gc_nn_par_solo(); i++)
		usleep(1000);
	CHECK(!gc_nn_par_solo());
}

static void split_part(void *arg, int part, int parts, int slot)
{
	(void)parts;
	(void)slot;
	((int *)arg)[part] = part + 1;
}

/* Nothing of the host's process changes behind its back: no environment
 * variable set or read (OPENBLAS_CORETYPE, GRAPHCC_*), OpenBLAS's thread
 * count not set per session, and no graphcc thread outlives the last
 * session. */
static void test_no_process_global_effects(void)
{
	until_not_solo();
	unsetenv("OPENBLAS_CORETYPE");
	setenv("GRAPHCC_FAIL_ALLOC", "3", 1);  /* a server's environment ... */
	setenv("GRAPHCC_MAX_BYTES", "1000", 1); /* ... must not change its library */
	gc_program *p = two_input_program();
	CHECK(p);
	gc_error err = { 0 };
	CHECK_INT(gc_blas_init(&err), 0);
	/* (OpenBLAS's own threads, started when it loads, are counted here) */
	int base = count_threads();
	CHECK(getenv("OPENBLAS_CORETYPE") == NULL);
	int (*get_threads)(void) = NULL;
	void *ob = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
	void *sym = ob ? dlsym(ob, "openblas_get_num_threads") : NULL;
	memcpy(&get_threads, &sym, sizeof sym);
	CHECK(get_threads);
	int blas_threads = get_threads();
	gc_session *s1 = NULL, *s2 = NULL;
	gc_session_options one = { .threads = 1 }, four = { .threads = 4 };
	CHECK_INT(gc_session_new(p, &four, &s1, &err), 0);
	CHECK_INT(gc_session_new(p, &one, &s2, &err), 0);
	CHECK_INT(get_threads(), blas_threads);
	gc_tensor t = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s1, 0, &t, &err), 0);
	CHECK_INT(gc_session_set_input(s1, 1, &t, &err), 0);
	CHECK_INT(gc_session_run(s1, &err), 0);
	/* the pool's workers start for a session's split work ... */
	int parts[8] = { 0 };
	gc_nn_parallel(4, 8, split_part, parts);
	for (int i = 0; i < 8; i++)
		CHECK_INT(parts[i], i + 1);
	CHECK(count_threads() > base);
	gc_session_free(s1);
	CHECK(count_threads() > base); /* s2 still uses the pool */
	gc_session_free(s2);
	/* ... and end with the last session */
	CHECK_INT(count_threads(), base);
	gc_program_free(p);
	unsetenv("GRAPHCC_FAIL_ALLOC");
	unsetenv("GRAPHCC_MAX_BYTES");
	CHECK(getenv("OPENBLAS_CORETYPE") == NULL);
	CHECK_STR(gc_version(), GC_VERSION_STRING);
	CHECK_INT(gc_abi_version(), GC_ABI_VERSION);
}

/* The threads of the process (up to `max` ids); their count. */
static int list_tids(long *tids, int max)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) && n < max)
		if (e->d_name[0] != '.')
			tids[n++] = atol(e->d_name);
	if (d)
		closedir(d);
	return n;
}

/* CPU time (ms) of the threads in `now` that are not in `before`: the
 * pool's workers (not OpenBLAS's threads, which spin on their own after a
 * BLAS call). */
static double new_threads_cpu_ms(const long *before, int nb, const long *now, int nn)
{
	double ms = 0;
	for (int i = 0; i < nn; i++) {
		int old = 0;
		for (int j = 0; j < nb && !old; j++)
			old = now[i] == before[j];
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", now[i]);
		FILE *f = old ? NULL : fopen(path, "r");
		unsigned long long ns = 0;
		if (f && fscanf(f, "%llu", &ns) == 1)
			ms += (double)ns / 1e6;
		if (f)
			fclose(f);
	}
	return ms;
}

/* The pool's workers spin between the jobs of a run, but an idle session's
 * go to sleep soon after its last run and burn no CPU. */
static void test_idle_pool_sleeps(void)
{
	until_not_solo();
	long before[256], now[256];
	int nb = list_tids(before, 256);
	gc_nn_par_acquire();
	int parts[8] = { 0 };
	gc_nn_par_run_begin();
	gc_nn_parallel(3, 8, split_part, parts);
	gc_nn_par_run_end();
	for (int i = 0; i < 8; i++)
		CHECK_INT(parts[i], i + 1);
	int nn = list_tids(now, 256);
	CHECK_INT(nn, nb + 2); /* two workers */
	/* asleep within ms (up to 2 s for a loaded machine to run them) */
	for (int i = 0; i < 2000 && gc_nn_par_awake() > 0; i++)
		usleep(1000);
	CHECK_INT(gc_nn_par_awake(), 0);
	double cpu = new_threads_cpu_ms(before, nb, now, nn);
	usleep(50000);
	CHECK(new_threads_cpu_ms(before, nb, now, nn) - cpu < 1);
	gc_nn_par_release();
}

/* A 2-thread run whose nodes all run serially (the Identity floor, a small
 * model) leaves the pool's shared state alone: it is told of a run only at
 * the run's first job (once for nested runs), so the serial run costs what
 * it costs at 1 thread. */
static void test_serial_run_leaves_pool(void)
{
	until_not_solo();
	gc_program *p = two_input_program();
	CHECK(p);
	gc_error err = { 0 };
	gc_session *s = NULL;
	gc_session_options two = { .threads = 2 };
	CHECK_INT(gc_session_new(p, &two, &s, &err), 0);
	gc_tensor t = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	CHECK_INT(gc_session_set_input(s, 1, &t, &err), 0);
	uint64_t told = gc_nn_par_runs_told(), jobs = gc_nn_par_jobs();
	for (int i = 0; i < 3; i++)
		CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(gc_nn_par_jobs() == jobs); /* (6 elements: nothing to split) */
	CHECK(gc_nn_par_runs_told() == told);
	/* a run with a job tells the pool once, nested runs included */
	int parts[8] = { 0 };
	gc_nn_par_run_begin();
	gc_nn_par_run_begin();
	gc_nn_parallel(2, 8, split_part, parts);
	gc_nn_par_run_end();
	gc_nn_parallel(2, 8, split_part, parts);
	gc_nn_par_run_end();
	CHECK(gc_nn_par_runs_told() == told + 1);
	gc_nn_par_run_begin(); /* and a serial one after it does not */
	gc_nn_par_run_end();
	CHECK(gc_nn_par_runs_told() == told + 1);
	for (int i = 0; i < 8; i++)
		CHECK_INT(parts[i], i + 1);
	gc_session_free(s);
	gc_program_free(p);
}

/* Relu over n floats: one element-wise job of about n cycles' work. */
static gc_program *relu_program(int64_t n)
{
	gc_graph *g = gc_graph_new("relu");
	gc_error err = { 0 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, &n, NULL, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "y" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_program *p = NULL;
	if (err.code || gc_compile(g, NULL, &p, &err))
		fprintf(stderr, "relu_program: %s\n", err.msg);
	gc_graph_free(g);
	return p;
}

/* *split: how many of 3 runs after the first split work, at 2 threads
 * (checking every run's output against max(x, 0)). */
static void split_runs_after_first(int64_t n, int *split)
{
	gc_program *p = relu_program(n);
	CHECK(p);
	float *x = malloc((size_t)n * sizeof *x);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(i % 7) - 3.0f;
	gc_error err = { 0 };
	gc_session *s = NULL;
	gc_session_options two = { .threads = 2 };
	CHECK_INT(gc_session_new(p, &two, &s, &err), 0);
	gc_tensor t = { .data = x, .dims = { n }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	uint64_t jobs = gc_nn_par_jobs();
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(gc_nn_par_jobs() > jobs); /* the first run splits */
	*split = 0;
	for (int r = 0; r < 3; r++) {
		jobs = gc_nn_par_jobs();
		CHECK_INT(gc_session_run(s, &err), 0);
		*split += gc_nn_par_jobs() > jobs;
		const float *y = gc_session_output(s, 0)->data;
		int bad = 0;
		for (int64_t i = 0; i < n; i++)
			bad += y[i] != (x[i] > 0 ? x[i] : 0.0f);
		CHECK_INT(bad, 0);
	}
	gc_session_free(s);
	gc_program_free(p);
	free(x);
}

/* A static model whose first run splits less than GC_NN_PAR_SMALL_RUN of
 * work (a 100k-element Relu: ~100k cycles) runs on one thread from then on;
 * one with more (4M elements) keeps splitting every run. */
static void test_small_run_goes_serial(void)
{
	int split = -1;
	split_runs_after_first(100000, &split);
	CHECK_INT(split, 0);
	split_runs_after_first(4000000, &split);
	CHECK_INT(split, 3);
}

/* The output of 4 runs of p at `threads` on x into y (n floats), and
 * (jobs_after_first, unless NULL) how many pool jobs the runs after the
 * first handed out. */
static void demo_output(gc_program *p, int threads, const gc_tensor *x, float *y, int64_t n,
			int *jobs_after_first)
{
	gc_error err = { 0 };
	gc_session *s = NULL;
	gc_session_options so = { .threads = threads };
	CHECK_INT(gc_session_new(p, &so, &s, &err), 0);
	CHECK_INT(gc_session_set_input(s, 0, x, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	uint64_t jobs = gc_nn_par_jobs();
	for (int r = 0; r < 3; r++)
		CHECK_INT(gc_session_run(s, &err), 0);
	if (jobs_after_first)
		*jobs_after_first = (int)(gc_nn_par_jobs() - jobs);
	const gc_tensor *o = gc_session_output(s, 0);
	CHECK(o && o->dtype == GC_DTYPE_FLOAT);
	CHECK_INT(gc_tensor_numel(o), n);
	memcpy(y, o->data, (size_t)n * sizeof *y);
	gc_session_free(s);
}

/* The demo model (models/demo with its package, 0.06 ms a run) at 2
 * threads: from its second run on, no node hands the pool a job (issue
 * 19: such runs gain nothing from a second thread, and were measured
 * slower), and its output is the 1-thread session's, bit for bit. Each of
 * its nodes is now below a split (GC_NN_PAR_MIN_SHARE); the session's
 * GC_NN_PAR_SMALL_RUN holds it on one thread without that (checked: with
 * both off, 18 jobs in 3 runs). */
static void test_demo_model_runs_serial(void)
{
	char exe[4096], buf[4200];
	CHECK_INT(check_exe_dir(exe, sizeof exe), 0); /* <build>/tests */
	gc_error err = { 0 };
	gc_registry *reg = gc_registry_new();
	snprintf(buf, sizeof buf, "%s/../plugins/demo/demo.yaml", exe);
	CHECK_INT(gc_registry_load(reg, buf, &err), 0);
	gc_graph *g = NULL;
	snprintf(buf, sizeof buf, "%s/../../models/demo/model.onnx", exe);
	CHECK_INT(gc_onnx_load(buf, &g, &err), 0);
	gc_compile_options co = { .registry = reg };
	gc_program *p = NULL;
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	/* the input and output as the program declares them */
	gc_tensor x = *gc_program_input(p, 0, NULL);
	int64_t nx = gc_tensor_numel(&x), ny = gc_tensor_numel(gc_program_output(p, 0, NULL));
	CHECK(nx > 0 && x.dtype == GC_DTYPE_FLOAT);
	CHECK(ny > 0 && ny <= 64);
	float *xv = malloc((size_t)nx * sizeof *xv), y1[64], y2[64];
	CHECK(xv);
	srand(19);
	for (int64_t i = 0; i < nx; i++)
		xv[i] = (float)rand() / (float)RAND_MAX * 2 - 1;
	x.data = xv;
	int jobs = -1;
	demo_output(p, 1, &x, y1, ny, NULL);
	demo_output(p, 2, &x, y2, ny, &jobs);
	CHECK_INT(jobs, 0);
	CHECK(!memcmp(y1, y2, (size_t)ny * sizeof *y1));
	free(xv);
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(reg);
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void spin_until(int64_t t)
{
	while (mono_ns() < t)
		;
}

/* A 2 ms part on each thread; the caller's (slot 0) ends 5 us after the
 * worker's, whenever the worker started it (up to 50 ms). */
typedef struct long_job {
	atomic_int worker_done;
	atomic_llong done_ns; /* when the worker's part ended */
} long_job;

static void long_part(void *arg, int part, int parts, int slot)
{
	(void)part;
	(void)parts;
	long_job *j = arg;
	spin_until(mono_ns() + 2000000);
	if (slot) {
		atomic_store(&j->done_ns, mono_ns());
		atomic_store(&j->worker_done, 1);
		return;
	}
	for (int64_t end = mono_ns() + 50000000; !atomic_load(&j->worker_done) && mono_ns() < end;)
		;
	spin_until(mono_ns() + 5000);
}

/* A worker that ends its part of a job longer than the pool's spin span
 * (here 2 ms) spins for that span (at least 30 us: nn-par.c) after it, ready
 * for the run's next job, rather than sleeping at once because the job
 * began long ago (a wake then cost every next job of resnet50 at 2 threads
 * ~50 us of the worker's time and ~15 us of the caller's: issue 19). A try
 * tells only when the caller looked within 20 us of the worker's end (on a
 * loaded machine it may lose its core in between): then the worker must be
 * awake. */
static void test_worker_spins_after_long_job(void)
{
	until_not_solo();
	gc_nn_par_acquire();
	gc_nn_par_run_begin();
	int told = 0, awake = 0;
	for (int tries = 0; tries < 100 && told < 3; tries++) {
		int parts[2] = {0};
		gc_nn_parallel(2, 2, split_part, parts); /* the worker exists and spins */
		long_job j = {0};
		gc_nn_parallel(2, 2, long_part, &j);
		int a = gc_nn_par_awake();
		if (atomic_load(&j.worker_done) && mono_ns() - atomic_load(&j.done_ns) <= 20000) {
			told++;
			awake += a == 1;
		}
	}
	CHECK(told > 0);
	CHECK_INT(awake, told);
	gc_nn_par_run_end();
	gc_nn_par_release();
}

/* Parts of 3 ms that note the slot they ran on (1 + slot). */
static void slot_part(void *arg, int part, int parts, int slot)
{
	(void)parts;
	usleep(3000);
	atomic_store(&((atomic_int *)arg)[part], 1 + slot);
}

/* Waits (up to 2 s) for the pool's workers to sleep. */
static void until_asleep(void)
{
	for (int i = 0; i < 2000 && gc_nn_par_awake() > 0; i++)
		usleep(1000);
	CHECK_INT(gc_nn_par_awake(), 0);
}

/* A small job (its estimate below ~100 us) runs without a sleeping worker:
 * the caller would have done most of it when the worker came, and a woken
 * worker that loses its core in its part holds the job up (SqueezeExcite
 * in efficientnet_b0 at 2 threads: ~480 us for ~25 us). The worker is
 * nudged awake all the same, to spin for the run's next job. A large job still
 * hands it parts. Each part takes 3 ms, so a worker in the job takes some. */
static void test_small_job_wakes_no_worker(void)
{
	until_not_solo();
	gc_nn_par_acquire();
	gc_nn_par_run_begin();
	int parts[2] = {0};
	gc_nn_parallel(2, 2, split_part, parts); /* the worker exists */
	until_asleep();
	atomic_int slots[4] = {0};
	uint64_t nudges = gc_nn_par_nudges();
	CHECK_INT(gc_nn_par_threads(2, 100e3), 2);
	gc_nn_parallel(2, 4, slot_part, slots);
	for (int i = 0; i < 4; i++)
		CHECK_INT(atomic_load(&slots[i]), 1);
	CHECK(gc_nn_par_nudges() == nudges + 1);
	int woke = 0;
	for (int tries = 0; tries < 20 && !woke; tries++) {
		until_asleep();
		CHECK_INT(gc_nn_par_threads(2, 1e9), 2);
		gc_nn_parallel(2, 4, slot_part, slots);
		for (int i = 0; i < 4; i++)
			woke |= atomic_load(&slots[i]) == 2;
	}
	CHECK(woke);
	gc_nn_par_run_end();
	gc_nn_par_release();
}

/* A woken worker on the CPU of the thread that woke it moves off it (the
 * scheduler can leave it there for milliseconds while another CPU idles),
 * with its affinity unchanged; the test's thread stands in for the worker.
 * Elsewhere it stays. Needs two CPUs (CI's machines have them). */
static void test_woken_worker_leaves_waker_cpu(void)
{
	cpu_set_t own, after;
	CHECK(!sched_getaffinity(0, sizeof own, &own));
	if (CPU_COUNT(&own) < 2)
		return;
	for (int i = 0; i < 3; i++) {
		int here = sched_getcpu();
		gc_nn_par_unstack(here);
		CHECK(sched_getcpu() != here);
		CHECK(!sched_getaffinity(0, sizeof after, &after));
		CHECK(CPU_EQUAL(&own, &after));
	}
	/* one CPU allowed: nowhere to go, and the affinity stays that one */
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK(!sched_setaffinity(0, sizeof one, &one));
	gc_nn_par_unstack(sched_getcpu());
	CHECK(!sched_getaffinity(0, sizeof after, &after));
	CHECK(CPU_EQUAL(&one, &after));
	CHECK(!sched_setaffinity(0, sizeof own, &own));
}

/* Parts that each take 4 ms of their thread's CPU time, noting the slot
 * they ran on (1 + slot). */
static void cpu_part(void *arg, int part, int parts, int slot)
{
	(void)parts;
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	int64_t end = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec + 4000000, now;
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		now = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	} while (now < end);
	atomic_store(&((atomic_int *)arg)[part], 1 + slot);
}

/* Runs 4-part jobs of fn on 2 threads (the estimate large) until a solo window opens, up
 * to 20 of them: whether it did. */
static int solo_after_jobs(gc_nn_part_fn fn, void *arg)
{
	for (int tries = 0; tries < 20 && !gc_nn_par_solo(); tries++) {
		if (gc_nn_par_threads(2, 1e9) != 2)
			return 0;
		gc_nn_parallel(2, 4, fn, arg);
		for (int64_t end = mono_ns() + 100000000; !gc_nn_par_solo() && mono_ns() < end;)
			usleep(100); /* the worker looks after its parts */
	}
	return gc_nn_par_solo();
}

/* A worker that loses its core in a part (another thread wants it) holds
 * the job while the caller waits, so the callers then run their jobs alone
 * for a while (nn-par.c's solo windows): here the caller and its worker
 * share one CPU, so each takes the CPU from the other in their 4 ms parts.
 * Once it is seen, a job runs all its parts on the caller (slot 0); the
 * window ends within the longest (0.32 s). */
static void test_lost_core_goes_solo(void)
{
	if (access("/proc/thread-self/schedstat", R_OK) != 0) {
		printf("  (no /proc/thread-self/schedstat: not checked)\n");
		return;
	}
	until_not_solo();
	cpu_set_t was, one;
	CHECK_INT(sched_getaffinity(0, sizeof was, &was), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK_INT(sched_setaffinity(0, sizeof one, &one), 0); /* the worker inherits it */
	gc_nn_par_acquire();
	gc_nn_par_run_begin();
	atomic_int slots[4] = {0};
	CHECK(solo_after_jobs(cpu_part, slots));
	for (int i = 0; i < 4; i++)
		atomic_store(&slots[i], 0);
	CHECK_INT(gc_nn_par_threads(2, 1e9), 2);
	gc_nn_parallel(2, 4, cpu_part, slots);
	for (int i = 0; i < 4; i++)
		CHECK_INT(atomic_load(&slots[i]), 1);
	gc_nn_par_run_end();
	gc_nn_par_release();
	CHECK_INT(sched_setaffinity(0, sizeof was, &was), 0);
	for (int i = 0; i < 400 && gc_nn_par_solo(); i++)
		usleep(1000);
	CHECK(!gc_nn_par_solo());
}

/* Waits (up to 1 s) for a solo window and the contended spins to end. */
static void until_uncontended(void)
{
	until_not_solo();
	usleep(25000); /* the spins' 20 ms from the window's start */
}

/* The rule of a worker's loss of its core (gc_nn_par_lost_core), with
 * made-up losses: up to 1 ms nothing; a first loss between jobs (the parts
 * short) only shortens the spins; a second within 20 ms opens a solo
 * window; a loss within the parts opens one at once. */
static void test_lost_core_rule(void)
{
	until_uncontended();
	int64_t now = mono_ns();
	gc_nn_par_lost_core(now, 900000, 0);
	gc_nn_par_lost_core(now, 900000, 0);
	CHECK(!gc_nn_par_solo());
	gc_nn_par_lost_core(now, 2000000, 100000);
	CHECK(!gc_nn_par_solo());
	gc_nn_par_lost_core(now + 1000000, 2000000, 100000);
	CHECK(gc_nn_par_solo());
	until_uncontended();
	gc_nn_par_lost_core(mono_ns(), 2000000, 2100000);
	CHECK(gc_nn_par_solo());
	until_uncontended();
}

static int n_debug_msgs;
static char debug_msgs[4096];
static void debug_log(void *user, gc_log_level level, const char *msg)
{
	if (user != &n_debug_msgs)
		return;
	n_debug_msgs++;
	size_t at = strlen(debug_msgs);
	snprintf(debug_msgs + at, sizeof debug_msgs - at, "[%d] %s\n", (int)level, msg);
}

/* gc_session_run_debug with fd 2 captured: *written, the bytes it wrote
 * there (-1: unknown). */
static int run_debug_quiet(gc_session *s, const gc_debug_options *d, gc_error *err,
			   long *written)
{
	fflush(stderr);
	int saved = dup(2);
	FILE *cap = tmpfile();
	if (saved < 0 || !cap)
		return -1;
	dup2(fileno(cap), 2);
	int rc = gc_session_run_debug(s, d, err);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*written = ftell(cap) >= 0 ? (fseek(cap, 0, SEEK_END), ftell(cap)) : -1;
	fclose(cap);
	return rc;
}

/* The debug instruments' notes (an input holding NaN, the profile table,
 * the dump count, break-before without a debugger) go to the session's
 * log: nothing is written to stderr (they were, by fprintf). */
static void test_debug_messages_logged(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_session *s = NULL;
	gc_error err = { 0 };
	gc_session_options so = { .log = debug_log, .log_user = &n_debug_msgs };
	CHECK_INT(gc_session_new(p, &so, &s, &err), 0);
	float nan_x[6] = { NAN, 1, 2, 3, 4, 5 };
	gc_tensor t = { .data = nan_x, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	t.data = x_data;
	CHECK_INT(gc_session_set_input(s, 1, &t, &err), 0);
	char dir[] = "/tmp/gc-api-debug-XXXXXX", prof[64], dump[64], cmd[128];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(prof, sizeof prof, "%s/p.json", dir);
	snprintf(dump, sizeof dump, "%s/dump", dir);
	gc_debug_options d = { .check_nan = 1, .profile_path = prof, .dump_dir = dump,
			       .break_before = "add" };
	long written = 0;
	int rc = run_debug_quiet(s, &d, &err, &written);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	CHECK_INT(rc, 0);
	CHECK_INT(written, 0);
	CHECK_CONTAINS(debug_msgs, "graph input 'x' already holds NaN");
	CHECK_CONTAINS(debug_msgs, "op type");
	CHECK_CONTAINS(debug_msgs, "profile written to");
	CHECK_CONTAINS(debug_msgs, "tensors written to");
	CHECK_CONTAINS(debug_msgs, "gc_debug_options.break_before");
	gc_session_free(s);
	gc_program_free(p);
}

/* A session of p (two_input_program) with both inputs set to x_data;
 * NULL on failure. */
static gc_session *ready_session(const gc_program *p, const gc_session_options *so)
{
	gc_session *s = NULL;
	gc_error err = { 0 };
	gc_tensor t = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	if (gc_session_new(p, so, &s, &err) || gc_session_set_input(s, 0, &t, &err) ||
	    gc_session_set_input(s, 1, &t, &err)) {
		gc_session_free(s);
		return NULL;
	}
	return s;
}

static int observed;

static int observe_fail(void *user, int32_t node, int after, gc_tensor *const *in, int32_t n_in,
			gc_tensor *const *out, int32_t n_out)
{
	(void)user, (void)node, (void)after, (void)in, (void)n_in, (void)out, (void)n_out;
	observed++;
	return GC_EKERNEL;
}

/* gc_debug_options is size-versioned like the other options structs: a
 * struct from a caller whose header ended before the appended fields
 * (on_timeout ... observe) has them read as 0, whatever lies after it; the
 * current size and 0 read them all; a size too small to hold itself is
 * GC_EINVAL, naming the struct. */
static void test_debug_options_size(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_error err = { 0 };
	gc_session *s = ready_session(p, NULL);
	CHECK(s);
	gc_debug_options d = { .size = offsetof(gc_debug_options, on_timeout),
			       .observe = observe_fail, .check_tensors = 7 };
	observed = 0;
	CHECK_INT(gc_session_run_debug(s, &d, &err), 0);
	CHECK_INT(observed, 0);
	d.size = sizeof d;
	CHECK_INT(gc_session_run_debug(s, &d, &err), GC_EKERNEL);
	CHECK_INT(observed, 1);
	d.size = 0;
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_run_debug(s, &d, &err), GC_EKERNEL);
	CHECK_INT(observed, 2);
	d.size = 5;
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_run_debug(s, &d, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "gc_debug_options: size 5 is too small");
	CHECK_INT(observed, 2);
	CHECK_INT(gc_session_run_debug(s, NULL, &err), 0);
	gc_session_free(s);
	gc_program_free(p);
}

static int scribble(void *user, int32_t node, int after, gc_tensor *const *in, int32_t n_in,
		    gc_tensor *const *out, int32_t n_out)
{
	(void)user, (void)n_in, (void)out, (void)n_out;
	if (node == 1 && !after) /* 'add' is about to read relu's output */
		((float *)in[0]->data)[0] += 100.0f;
	return 0;
}

/* The dump's note that a tensor changed between its producer and a reader
 * goes to the session's log, not stderr (it was an fprintf). */
static void test_dump_seen_logged(void)
{
	gc_program *p = two_input_program();
	CHECK(p);
	gc_error err = { 0 };
	gc_session_options so = { .log = debug_log, .log_user = &n_debug_msgs };
	gc_session *s = ready_session(p, &so);
	CHECK(s);
	char dir[] = "/tmp/gc-api-seen-XXXXXX", dump[64], cmd[128];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(dump, sizeof dump, "%s/dump", dir);
	gc_debug_options d = { .size = sizeof d, .dump_dir = dump, .check_tensors = 1,
			       .observe = scribble };
	debug_msgs[0] = 0;
	long written = 0;
	int rc = run_debug_quiet(s, &d, &err, &written);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	CHECK_INT(system(cmd), 0);
	(void)rc; /* check_tensors may stop the run: the note is what is checked */
	CHECK_INT(written, 0);
	CHECK_CONTAINS(debug_msgs, "tensor 'r' changed after node 'relu' produced it");
	gc_session_free(s);
	gc_program_free(p);
}

TEST_MAIN(TEST(test_dump_seen_logged), TEST(test_debug_options_size), TEST(test_no_process_global_effects), TEST(test_idle_pool_sleeps), TEST(test_serial_run_leaves_pool), TEST(test_small_run_goes_serial), TEST(test_demo_model_runs_serial), TEST(test_worker_spins_after_long_job), TEST(test_small_job_wakes_no_worker), TEST(test_woken_worker_leaves_waker_cpu), TEST(test_lost_core_goes_solo), TEST(test_lost_core_rule), TEST(test_debug_messages_logged), TEST(test_zero_copy_io), TEST(test_null_arguments), TEST(test_inputs_never_set), TEST(test_busy_session))
