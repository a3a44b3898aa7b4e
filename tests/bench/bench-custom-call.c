/*
 * The cost of a custom node beyond its kernel: a chain of N Noop nodes run
 * by a session, against calling the same kernel function directly N times
 * with prepared views. Prints ns per call for the graphcc and seed
 * interfaces.
 *
 *   bench-custom-call NOOP_MANIFEST LIBDIR [N] [REPEAT]
 */
#include <graphcc/customop.h>
#include <graphcc/graphcc.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double chain(const char *manifest, const char *op, int n, int repeat)
{
	gc_error err = { 0 };
	gc_registry *r = gc_registry_new();
	gc_graph *g = gc_graph_new("bench");
	if (gc_registry_load(r, manifest, &err))
		goto fail;
	int64_t d[1] = { 16 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_set_opset(g, "bench.graphcc", 1, &err);
	gc_graph_add_input(g, "t0", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	char a[32], b[32];
	for (int i = 0; i < n; i++) {
		snprintf(a, sizeof a, "t%d", i);
		snprintf(b, sizeof b, "t%d", i + 1);
		const char *in[] = { a }, *out[] = { b };
		if (gc_graph_add_node(g, b, "bench.graphcc", op, 1, in, 1, out, 0, NULL, &err))
			goto fail;
	}
	gc_graph_add_output(g, b, &err);
	gc_program *p;
	gc_compile_options opt = { .registry = r };
	if (gc_compile(g, &opt, &p, &err))
		goto fail;
	gc_session *s;
	gc_session_options so = { .threads = 1 };
	if (gc_session_new(p, &so, &s, &err))
		goto fail;
	float x[16] = { 0 };
	gc_tensor t = { .data = x, .dims = { 16 }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	gc_session_set_input(s, 0, &t, &err);
	double *ts = malloc(sizeof *ts * (size_t)repeat);
	for (int k = 0; k < repeat; k++) {
		double t0 = now_ns();
		gc_session_run(s, &err);
		ts[k] = (now_ns() - t0) / n;
	}
	qsort(ts, (size_t)repeat, sizeof *ts, cmp);
	double med = ts[repeat / 2];
	free(ts);
	gc_session_free(s);
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(r);
	return med;
fail:
	fprintf(stderr, "bench: %s\n", err.msg);
	exit(1);
}

static double direct(const char *lib, const char *sym, int graphcc, int n, int repeat)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	void *fp = h ? dlsym(h, sym) : NULL;
	if (!fp) {
		fprintf(stderr, "bench: %s: %s\n", lib, dlerror());
		exit(1);
	}
	float x[16] = { 0 }, y[16];
	int64_t dx[1] = { 16 }, dy[1] = { 16 };
	CustomOpIOTensor in = { .data = x, .dims = dx, .rank = 1, .dtype = DTFloat32 };
	CustomOpIOTensor out = { .data = y, .dims = dy, .rank = 1, .dtype = DTFloat32 };
	GcOpContext ctx = { .struct_size = sizeof ctx };
	double *ts = malloc(sizeof *ts * (size_t)repeat);
	gcOpKernel_t gk;
	customOpInterpreterKernel_t sk;
	memcpy(&gk, &fp, sizeof fp);
	memcpy(&sk, &fp, sizeof fp);
	for (int k = 0; k < repeat; k++) {
		double t0 = now_ns();
		for (int i = 0; i < n; i++) {
			if (graphcc)
				gk(&ctx, &in, 1, &out, 1, NULL, 0);
			else
				sk(&in, 1, &out, 1, NULL, 0);
			__asm__ volatile("" ::: "memory");
		}
		ts[k] = (now_ns() - t0) / n;
	}
	qsort(ts, (size_t)repeat, sizeof *ts, cmp);
	double med = ts[repeat / 2];
	free(ts);
	return med;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s NOOP_MANIFEST LIBDIR [N] [REPEAT]\n", argv[0]);
		return 2;
	}
	int n = argc > 3 ? atoi(argv[3]) : 1000, repeat = argc > 4 ? atoi(argv[4]) : 200;
	char lib[4096], seedlib[4096];
	snprintf(lib, sizeof lib, "%s/libnoop.so", argv[2]);
	snprintf(seedlib, sizeof seedlib, "%s/libnoop_seed.so", argv[2]);
	double gc = chain(argv[1], "Noop", n, repeat), dgc = direct(lib, "noop", 1, n, repeat);
	double sd = chain(argv[1], "NoopSeed", n, repeat),
	       dsd = direct(seedlib, "noop_seed", 0, n, repeat);
	printf("custom node, graphcc interface: %.1f ns per call in a session, %.1f ns called "
	       "directly: overhead %.1f ns\n",
	       gc, dgc, gc - dgc);
	printf("custom node, seed interface:    %.1f ns per call in a session, %.1f ns called "
	       "directly: overhead %.1f ns\n",
	       sd, dsd, sd - dsd);
	return 0;
}
