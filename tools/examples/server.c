/*
 * An inference server's core, as a host embeds graphcc: one program shared
 * by every thread, one session per thread, zero-copy inputs and outputs, a
 * deadline on every request, the library's messages through a logging
 * callback. It needs only the runtime (<graphcc/runtime.h>,
 * `pkg-config --cflags --libs graphcc-runtime`).
 *
 *   server MODEL.gcb [THREADS [REQUESTS [copy]]]
 *
 * Every request's input is one of 16 variants (deterministic values made
 * from the program's input descriptions); the outputs of every request are
 * compared bit for bit with a single-threaded run of the same variant.
 * Prints the per-request latency (median and 99th percentile, in
 * microseconds, of the API's part: set or bind the inputs, run with a
 * deadline, get the outputs; filling and checking are outside it) and exits 0 when
 * every output was equal. `copy` serves through gc_session_set_input and
 * the session's own outputs instead (what the API offered before).
 */
#include <graphcc/runtime.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { VARIANTS = 16, MAX_IO = 16 };

static const gc_program *prog;
static int n_in, n_out, copy_mode;
static gc_tensor in_desc[MAX_IO], out_desc[MAX_IO];
static void *ref_out[VARIANTS][MAX_IO]; /* the single-threaded outputs */
static atomic_int n_logged;

/* The library writes nothing itself: its messages come here. */
static void log_cb(void *user, gc_log_level level, const char *msg)
{
	(void)user;
	atomic_fetch_add(&n_logged, 1);
	if (level <= GC_LOG_WARNING)
		fprintf(stderr, "server: graphcc %s: %s\n", level == GC_LOG_ERROR ? "error" : "warning",
			msg);
}

/* Input j of variant v, written into buf (deterministic, per element). */
static void fill_input(void *buf, int j, int v)
{
	const gc_tensor *d = &in_desc[j];
	int64_t n = gc_tensor_numel(d);
	for (int64_t e = 0; e < n; e++) {
		uint32_t h = (uint32_t)(e * 2654435761u) ^ (uint32_t)(v * 40503 + j * 977);
		double x = (double)(h % 2001) / 1000.0 - 1.0;
		switch (d->dtype) {
		case GC_DTYPE_FLOAT: ((float *)buf)[e] = (float)x; break;
		case GC_DTYPE_DOUBLE: ((double *)buf)[e] = x; break;
		case GC_DTYPE_INT64: ((int64_t *)buf)[e] = (int64_t)(h % 7); break;
		case GC_DTYPE_INT32: ((int32_t *)buf)[e] = (int32_t)(h % 7); break;
		default: memset((char *)buf + e * gc_dtype_size(d->dtype), (int)(h & 1),
				gc_dtype_size(d->dtype));
		}
	}
}

static void *alloc64(int64_t bytes)
{
	return aligned_alloc(64, (size_t)((bytes + 64) & ~(int64_t)63));
}

typedef struct worker {
	int id, requests;
	double *lat_us; /* per request */
	int mismatches, failures;
	gc_error err;
} worker;

static double now_us(void)
{
	return (double)gc_now_ns() / 1e3;
}

static void *serve(void *arg)
{
	worker *w = arg;
	char name[32];
	snprintf(name, sizeof name, "worker-%d", w->id);
	gc_session_options so = { .threads = 1, .name = name, .log = log_cb };
	gc_session *s = NULL;
	void *in[MAX_IO] = { 0 }, *out[MAX_IO] = { 0 };
	if (gc_session_new(prog, &so, &s, &w->err)) {
		w->failures++;
		return NULL;
	}
	for (int j = 0; j < n_in; j++) {
		in[j] = alloc64(gc_tensor_nbytes(&in_desc[j]));
		gc_tensor t = in_desc[j];
		t.data = in[j];
		/* zero-copy: the session reads in[j] in place on every run */
		if (!copy_mode && gc_session_use_input(s, j, &t, &w->err))
			goto fail;
	}
	for (int j = 0; j < n_out && !copy_mode; j++) {
		int64_t nb = gc_tensor_nbytes(&out_desc[j]);
		out[j] = alloc64(nb);
		gc_error e = { 0 };
		/* an output that is also an input (an Identity program) stays the
		 * session's: GC_EUNSUPPORTED, and nothing changes */
		(void)gc_session_use_output(s, j, out[j], (size_t)nb, &e);
	}
	for (int r = 0; r < w->requests; r++) {
		int v = (r * 7 + w->id) % VARIANTS;
		for (int j = 0; j < n_in; j++)
			fill_input(in[j], j, v);
		double t0 = now_us(); /* the API's part of a request */
		for (int j = 0; j < n_in; j++) {
			gc_tensor t = in_desc[j];
			t.data = in[j];
			if (copy_mode && gc_session_set_input(s, j, &t, &w->err))
				goto fail;
		}
		gc_run_options ro = { .deadline_ns = gc_now_ns() + (int64_t)10 * 1000000000 };
		if (gc_session_run_with(s, &ro, &w->err))
			goto fail;
		const gc_tensor *o[MAX_IO];
		for (int j = 0; j < n_out; j++)
			o[j] = gc_session_output(s, j);
		w->lat_us[r] = now_us() - t0;
		for (int j = 0; j < n_out; j++)
			if (memcmp(o[j]->data, ref_out[v][j], (size_t)gc_tensor_nbytes(o[j])))
				w->mismatches++;
	}
	goto out;
fail:
	w->failures++;
out:
	gc_session_free(s);
	for (int j = 0; j < MAX_IO; j++) {
		free(in[j]);
		free(out[j]);
	}
	return NULL;
}

/* The reference: every variant run once, by one session on this thread. */
static int reference(gc_error *err)
{
	gc_session *s = NULL;
	gc_session_options so = { .threads = 1, .name = "reference", .log = log_cb };
	if (gc_session_new(prog, &so, &s, err))
		return err->code;
	int rc = 0;
	for (int v = 0; v < VARIANTS && !rc; v++) {
		for (int j = 0; j < n_in && !rc; j++) {
			gc_tensor t = in_desc[j];
			t.data = alloc64(gc_tensor_nbytes(&t));
			fill_input(t.data, j, v);
			rc = gc_session_set_input(s, j, &t, err);
			free(t.data);
		}
		if (rc || (rc = gc_session_run(s, err)))
			break;
		for (int j = 0; j < n_out; j++) {
			const gc_tensor *o = gc_session_output(s, j);
			ref_out[v][j] = malloc((size_t)gc_tensor_nbytes(o) + 1);
			memcpy(ref_out[v][j], o->data, (size_t)gc_tensor_nbytes(o));
		}
	}
	gc_session_free(s);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: server MODEL.gcb [THREADS [REQUESTS [copy]]]\n");
		return 2;
	}
	int threads = argc > 2 ? atoi(argv[2]) : 4, requests = argc > 3 ? atoi(argv[3]) : 1000;
	copy_mode = argc > 4 && !strcmp(argv[4], "copy");
	if (threads < 1 || threads > 64 || requests < 1) {
		fprintf(stderr, "server: THREADS 1..64, REQUESTS >= 1\n");
		return 2;
	}
	gc_error err = { 0 };
	gc_load_options lo = { .log = log_cb };
	gc_program *p = NULL;
	if (gc_program_load(argv[1], &lo, &p, &err)) {
		fprintf(stderr, "server: %s\n", err.msg);
		return 1;
	}
	prog = p;
	n_in = gc_program_num_inputs(p);
	n_out = gc_program_num_outputs(p);
	if (n_in > MAX_IO || n_out > MAX_IO) {
		fprintf(stderr, "server: at most %d inputs and outputs\n", MAX_IO);
		return 1;
	}
	for (int j = 0; j < n_in; j++)
		in_desc[j] = *gc_program_input(p, j, NULL);
	for (int j = 0; j < n_out; j++)
		out_desc[j] = *gc_program_output(p, j, NULL);
	if (reference(&err)) {
		fprintf(stderr, "server: reference run: %s\n", err.msg);
		return 1;
	}
	worker w[64];
	pthread_t th[64];
	int per = requests / threads > 0 ? requests / threads : 1;
	for (int i = 0; i < threads; i++) {
		w[i] = (worker){ .id = i, .requests = per, .lat_us = calloc((size_t)per, sizeof(double)) };
		pthread_create(&th[i], NULL, serve, &w[i]);
	}
	int bad = 0, failed = 0, total = per * threads;
	double *all = calloc((size_t)total, sizeof(double));
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		bad += w[i].mismatches;
		failed += w[i].failures;
		if (w[i].failures)
			fprintf(stderr, "server: worker %d: %s\n", i, w[i].err.msg);
		memcpy(all + (size_t)i * per, w[i].lat_us, (size_t)per * sizeof(double));
		free(w[i].lat_us);
	}
	qsort(all, (size_t)total, sizeof(double), cmp_double);
	printf("graphcc %s (ABI %d): %d threads x %d requests (%s): latency median %.2f us, "
	       "p99 %.2f us; %d outputs differ from the single-threaded run; %d failed\n",
	       gc_version(), gc_abi_version(), threads, per,
	       copy_mode ? "set_input copy" : "zero-copy in/out", all[total / 2],
	       all[(size_t)(total * 0.99)], bad, failed);
	free(all);
	for (int v = 0; v < VARIANTS; v++)
		for (int j = 0; j < n_out; j++)
			free(ref_out[v][j]);
	gc_program_free(p);
	return bad || failed ? 1 : 0;
}
