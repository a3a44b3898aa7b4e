/* Thread safety: one compiled program run at once from several threads,
 * each with its own session, must give each thread exactly the outputs a
 * lone run gives (the program is shared read-only; a session is the
 * execution state and belongs to one thread at a time). */
#include <graphcc/graphcc.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum { N_THREADS = 4, N_RUNS = 40, C = 3, H = 8, W = 8, M = 4, K = 5 };

/* x[1,C,H,W] -> Conv(w,b, pad 1) -> Relu -> Flatten -> Gemm(g,gb) -> y[1,K] */
static gc_program *build(gc_error *err)
{
	static float w[M * C * 9], b[M], g[K * M * H * W], gb[K];
	for (int i = 0; i < M * C * 9; i++)
		w[i] = (float)((i * 7919) % 23 - 11) / 17.0f;
	for (int i = 0; i < M; i++)
		b[i] = 0.1f * (float)i;
	for (int i = 0; i < K * M * H * W; i++)
		g[i] = (float)((i * 104729) % 31 - 15) / 200.0f;
	for (int i = 0; i < K; i++)
		gb[i] = -0.2f * (float)i;
	gc_graph *gr = gc_graph_new("threads");
	int64_t xd[4] = {1, C, H, W};
	gc_graph_set_opset(gr, "", 13, err);
	gc_graph_add_input(gr, "x", GC_DTYPE_FLOAT, 4, xd, NULL, err);
	gc_tensor tw = {.data = w, .dims = {M, C, 3, 3}, .rank = 4, .dtype = GC_DTYPE_FLOAT};
	gc_tensor tb = {.data = b, .dims = {M}, .rank = 1, .dtype = GC_DTYPE_FLOAT};
	gc_tensor tg = {.data = g, .dims = {K, M * H * W}, .rank = 2, .dtype = GC_DTYPE_FLOAT};
	gc_tensor tgb = {.data = gb, .dims = {K}, .rank = 1, .dtype = GC_DTYPE_FLOAT};
	gc_graph_add_constant(gr, "w", &tw, err);
	gc_graph_add_constant(gr, "b", &tb, err);
	gc_graph_add_constant(gr, "g", &tg, err);
	gc_graph_add_constant(gr, "gb", &tgb, err);
	int64_t pads[4] = {1, 1, 1, 1};
	gc_attr conv_attrs[1] = {{.name = "pads", .type = GC_ATTR_INTS, .n = 4}};
	conv_attrs[0].v.ints = pads;
	const char *c_in[] = {"x", "w", "b"}, *c_out[] = {"c"};
	gc_graph_add_node(gr, "conv", "", "Conv", 3, c_in, 1, c_out, 1, conv_attrs, err);
	const char *r_in[] = {"c"}, *r_out[] = {"r"};
	gc_graph_add_node(gr, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, err);
	const char *f_in[] = {"r"}, *f_out[] = {"f"};
	gc_graph_add_node(gr, "flat", "", "Flatten", 1, f_in, 1, f_out, 0, NULL, err);
	gc_attr gemm_attrs[1] = {{.name = "transB", .type = GC_ATTR_INT, .n = 1}};
	gemm_attrs[0].v.i = 1;
	const char *g_in[] = {"f", "g", "gb"}, *g_out[] = {"y"};
	gc_graph_add_node(gr, "gemm", "", "Gemm", 3, g_in, 1, g_out, 1, gemm_attrs, err);
	gc_graph_add_output(gr, "y", err);
	gc_program *p = NULL;
	if (!err->code)
		gc_compile(gr, NULL, &p, err);
	gc_graph_free(gr);
	return p;
}

static void input_for(int seed, float *x)
{
	for (int i = 0; i < C * H * W; i++)
		x[i] = (float)(((i + 1) * (seed + 3) * 2654435761u) % 1000) / 500.0f - 1.0f;
}

/* One run on its own session; -> 0 and y[K] filled, or the error. */
static int run_once(const gc_program *p, int seed, float *y, gc_error *err)
{
	gc_session *s;
	gc_session_options o = {.threads = 1};
	if (gc_session_new(p, &o, &s, err))
		return err->code;
	float x[C * H * W];
	input_for(seed, x);
	gc_tensor in = {.data = x, .dims = {1, C, H, W}, .rank = 4, .dtype = GC_DTYPE_FLOAT};
	int rc = gc_session_set_input(s, 0, &in, err);
	if (!rc)
		rc = gc_session_run(s, err);
	if (!rc)
		memcpy(y, gc_session_output(s, 0)->data, K * sizeof *y);
	gc_session_free(s);
	return rc;
}

typedef struct {
	const gc_program *p;
	int id;
	float want[N_THREADS][K]; /* shared, read-only while threads run */
	int mismatches, errors;
	gc_error err;
} worker;

static void *work(void *arg)
{
	worker *w = arg;
	/* One session for the thread's whole life, inputs changing each run:
	 * the seeds of all threads, so runs of different threads overlap on
	 * the same values and on different ones. */
	gc_session *s;
	gc_session_options o = {.threads = 1};
	if (gc_session_new(w->p, &o, &s, &w->err)) {
		w->errors++;
		return NULL;
	}
	for (int r = 0; r < N_RUNS; r++) {
		int seed = (w->id + r) % N_THREADS;
		float x[C * H * W];
		input_for(seed, x);
		gc_tensor in = {
		    .data = x, .dims = {1, C, H, W}, .rank = 4, .dtype = GC_DTYPE_FLOAT};
		if (gc_session_set_input(s, 0, &in, &w->err) || gc_session_run(s, &w->err)) {
			w->errors++;
			break;
		}
		const float *y = gc_session_output(s, 0)->data;
		if (memcmp(y, w->want[seed], sizeof w->want[seed]))
			w->mismatches++;
	}
	gc_session_free(s);
	return NULL;
}

static void test_one_program_many_threads(void)
{
	gc_error err = {0};
	gc_program *p = build(&err);
	if (!p)
		fprintf(stderr, "build: %s\n", err.msg);
	CHECK(p != NULL);
	static worker ws[N_THREADS];
	float want[N_THREADS][K];
	for (int i = 0; i < N_THREADS; i++)
		CHECK_INT(run_once(p, i, want[i], &err), 0);
	/* outputs differ between seeds, so a mixed-up session would show */
	CHECK(memcmp(want[0], want[1], sizeof want[0]) != 0);
	pthread_t th[N_THREADS];
	for (int i = 0; i < N_THREADS; i++) {
		memset(&ws[i], 0, sizeof ws[i]);
		ws[i].p = p;
		ws[i].id = i;
		memcpy(ws[i].want, want, sizeof want);
		CHECK_INT(pthread_create(&th[i], NULL, work, &ws[i]), 0);
	}
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < N_THREADS; i++) {
		if (ws[i].errors)
			fprintf(stderr, "thread %d: %s\n", i, ws[i].err.msg);
		CHECK_INT(ws[i].errors, 0);
		/* bit-identical: the same kernels on the same values */
		CHECK_INT(ws[i].mismatches, 0);
	}
	gc_program_free(p);
}

/* Package loading from several threads at once: each thread loads the
 * same package into its own registry (sharing the libraries, which are
 * reference counted under a lock) and binds a custom node with it. */
typedef struct loader {
	const char *manifest;
	int rc;
	char msg[GC_ERROR_MSG_MAX];
	float y[4];
} loader;

static void *load_and_run(void *arg)
{
	loader *l = arg;
	gc_error err = { 0 };
	gc_registry *r = gc_registry_new();
	gc_graph *g = gc_graph_new("threads");
	gc_program *p = NULL;
	gc_session *s = NULL;
	int64_t d[1] = { 4 };
	gc_attr at[] = { { .name = "alpha", .type = GC_ATTR_FLOAT, .v.f = 2.0f } };
	const char *in[] = { "x" }, *out[] = { "y" };
	float x[4] = { -1, 0, 0.5f, 3 };
	gc_tensor xt = { .data = x, .dims = { 4 }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	gc_compile_options opt = { .registry = r };
	l->rc = gc_registry_load(r, l->manifest, &err) ||
		gc_graph_set_opset(g, "", 13, &err) ||
		gc_graph_set_opset(g, "org.glow.lenet", 1, &err) ||
		gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err) ||
		gc_graph_add_node(g, "st", "org.glow.lenet", "ScaledTanh", 1, in, 1, out, 1, at,
				  &err) ||
		gc_graph_add_output(g, "y", &err) || gc_compile(g, &opt, &p, &err) ||
		gc_session_new(p, NULL, &s, &err) || gc_session_set_input(s, 0, &xt, &err) ||
		gc_session_run(s, &err);
	if (!l->rc)
		memcpy(l->y, gc_session_output(s, 0)->data, sizeof l->y);
	memcpy(l->msg, err.msg, sizeof l->msg);
	gc_session_free(s);
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(r);
	return NULL;
}

static void test_package_loading_many_threads(void)
{
	/* build/tests/test-threads -> build/plugins/seed-lenet/seed-lenet.yaml */
	char exe[4096], manifest[4200];
	CHECK_INT(check_exe_dir(exe, sizeof exe), 0);
	snprintf(manifest, sizeof manifest, "%s/../plugins/seed-lenet/seed-lenet.yaml", exe);
	enum { N = 4 };
	pthread_t th[N];
	loader l[N];
	for (int i = 0; i < N; i++) {
		memset(&l[i], 0, sizeof l[i]);
		l[i].manifest = manifest;
		CHECK_INT(pthread_create(&th[i], NULL, load_and_run, &l[i]), 0);
	}
	for (int i = 0; i < N; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < N; i++) {
		if (l[i].rc)
			fprintf(stderr, "thread %d: %s\n", i, l[i].msg);
		CHECK_INT(l[i].rc, 0);
		/* seed-lenet's ScaledTanh: alpha * tanh(beta * x), beta default 0.6667 */
		for (int k = 0; k < 4; k++) {
			float xs[4] = { -1, 0, 0.5f, 3 };
			CHECK_NEAR(l[i].y[k], 2.0 * tanh(0.6667 * xs[k]), 1e-5);
		}
	}
}

TEST_MAIN(TEST(test_one_program_many_threads), TEST(test_package_loading_many_threads))
