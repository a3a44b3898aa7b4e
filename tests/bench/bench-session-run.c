/*
 * The per-call cost of a run through the C API, to set against Session.run
 * from Python (tests/bench/bench-python-run.py, `make bench-python`): a
 * model with one input and one output (the bench's Identity 1x1000), each
 * call sets the input from the caller's memory, runs, and copies the output
 * out (as Session.run does, into memory the caller owns). Prints the median
 * of REPEAT batches of N calls, in microseconds per call.
 *
 *   bench-session-run MODEL.onnx [N] [REPEAT]
 */
#include <graphcc/graphcc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODEL.onnx [N] [REPEAT]\n", argv[0]);
		return 2;
	}
	int n = argc > 2 ? atoi(argv[2]) : 20000, repeat = argc > 3 ? atoi(argv[3]) : 7;
	gc_error err = { 0 };
	gc_graph *g = NULL;
	gc_program *p = NULL;
	gc_session *s = NULL;
	gc_compile_options co = { 0 };
	gc_session_options so = { .threads = 1 };
	if (gc_onnx_load(argv[1], &g, &err) || gc_compile(g, &co, &p, &err) ||
	    gc_session_new(p, &so, &s, &err)) {
		fprintf(stderr, "bench-session-run: %s\n", err.msg);
		return 1;
	}
	gc_tensor in = *gc_program_input(p, 0, NULL);
	size_t bytes = (size_t)gc_tensor_nbytes(&in);
	in.data = calloc(1, bytes);
	void *out = malloc(bytes);
	double *t = calloc((size_t)repeat, sizeof *t);
	for (int r = 0; r < repeat; r++) {
		double t0 = now_us();
		for (int i = 0; i < n; i++) {
			if (gc_session_use_input(s, 0, &in, &err) || gc_session_run(s, &err)) {
				fprintf(stderr, "bench-session-run: %s\n", err.msg);
				return 1;
			}
			const gc_tensor *o = gc_session_output(s, 0);
			memcpy(out, o->data, (size_t)gc_tensor_nbytes(o));
		}
		t[r] = (now_us() - t0) / n;
	}
	qsort(t, (size_t)repeat, sizeof *t, cmp);
	printf("C API: %.3f us per call (median of %d x %d calls; min %.3f, max %.3f)\n",
	       t[repeat / 2], repeat, n, t[0], t[repeat - 1]);
	free(t);
	free(out);
	free(in.data);
	gc_session_free(s);
	gc_program_free(p);
	gc_graph_free(g);
	return 0;
}
