/* Custom ops under dynamic dimensions (issue 18 item 10): the demo
 * package's ScaledSwish and ChannelShuffle behind a Relu on an input of
 * symbolic batch N, compiled once with gc_compile_options.dynamic_dims and
 * saved; the loaded program runs N = 1, 3, 8 (the package's inferShape,
 * verify and selectImpl run when a session first sees a shape, and a kept
 * shape calls none of them), several sessions on several threads at once;
 * the .gcb pins the functions library: a swapped one is refused with
 * GC_ECHANGED before any package code runs, a moved package loads through
 * gc_load_options.library_map. Outputs are compared with a direct
 * computation in double precision (1e-5). */
#include <graphcc/graphcc.h>

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "custom.h"
#include "session-impl.h"

#define C 6
#define HW 16
static const float beta[C] = {0.5f, 1.0f, 1.5f, 2.0f, 0.25f, 3.0f};
static char plugins[PATH_MAX + 16];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static char tmp[] = "/tmp/gc-dyncustom-XXXXXX";

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmp);
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, fmt, a, b);
	return system(cmd);
}

/* y = ChannelShuffle(ScaledSwish(Relu(x)), group 3) + x, x [N, 6, 4, 4]. */
static gc_graph *model(void)
{
	gc_graph *g = gc_graph_new("dyn-custom.onnx");
	gc_error err = {0};
	int64_t dx[4] = {-1, C, 4, 4};
	const char *names[4] = {"N", NULL, NULL, NULL};
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_set_opset(g, "com.graphcc.demo", 1, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, dx, names, &err);
	const char *r_in[] = {"x"}, *r_out[] = {"r"}, *s_out[] = {"s"}, *c_out[] = {"c"};
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	gc_attr sw[2] = {{.name = "beta", .type = GC_ATTR_FLOATS, .n = C, .v.floats = beta},
			 {.name = "scale", .type = GC_ATTR_FLOAT, .v.f = 1.5f}};
	gc_graph_add_node(g, "swish", "com.graphcc.demo", "ScaledSwish", 1, r_out, 1, s_out, 2, sw,
			  &err);
	gc_attr grp = {.name = "group", .type = GC_ATTR_INT, .v.i = 3};
	gc_graph_add_node(g, "shuffle", "com.graphcc.demo", "ChannelShuffle", 1, s_out, 1, c_out, 1,
			  &grp, &err);
	const char *a_in[] = {"c", "x"}, *a_out[] = {"y"};
	gc_graph_add_node(g, "add", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	if (err.code)
		fprintf(stderr, "model: %s\n", err.msg);
	return g;
}

/* Runs s on N images; 0 when y matches the model computed directly. */
static int run_n(gc_session *s, int n, int seed, gc_error *err)
{
	float x[8 * C * HW];
	for (int i = 0; i < n * C * HW; i++)
		x[i] = (float)((i * 7919 + seed * 104729 + n) % 2001) / 500.0f - 2.0f;
	gc_tensor t = {.data = x, .dims = {n, C, 4, 4}, .rank = 4, .dtype = GC_DTYPE_FLOAT};
	if (gc_session_set_input(s, 0, &t, err) || gc_session_run(s, err))
		return err->code;
	const gc_tensor *y = gc_session_output(s, 0);
	if (y->rank != 4 || y->dims[0] != n || y->dims[1] != C)
		return gc_error_set(err, GC_EINVAL, "output of rank %d, N %lld for N=%d", y->rank,
				    (long long)y->dims[0], n);
	for (int b = 0; b < n; b++)
		for (int oc = 0; oc < C; oc++) /* out channel j*3 + i = in channel i*2 + j */
			for (int k = 0; k < HW; k++) {
				int ic = (oc % 3) * 2 + oc / 3;
				double r = x[(b * C + ic) * HW + k];
				r = r > 0 ? r : 0;
				double want = 1.5 * r / (1 + exp(-(double)beta[ic] * r)) +
					      x[(b * C + oc) * HW + k];
				double got = ((const float *)y->data)[(b * C + oc) * HW + k];
				if (fabs(got - want) > 1e-5)
					return gc_error_set(err, GC_EINVAL,
							    "N=%d: y[%d][%d][%d] = %g, want %g", n,
							    b, oc, k, got, want);
			}
	return 0;
}

/* a/m.gcb, compiled with the package copied to a/pkg. */
static void test_compile_and_run(void)
{
	char exe[PATH_MAX], buf[PATH_MAX + 64];
	CHECK_INT(check_exe_dir(exe, sizeof exe), 0); /* <build>/tests */
	snprintf(plugins, sizeof plugins, "%.4000s/../plugins", exe);
	CHECK(mkdtemp(tmp) != NULL);
	atexit(cleanup);
	CHECK_INT(sh("mkdir -p '%s/a%s'", tmp, ""), 0);
	CHECK_INT(sh("cp -r '%s/demo' '%s/a/pkg'", plugins, tmp), 0);
	gc_error err = {0};
	gc_registry *reg = gc_registry_new();
	snprintf(buf, sizeof buf, "%s/a/pkg/demo.yaml", tmp);
	CHECK_INT(gc_registry_load(reg, buf, &err), 0);
	gc_graph *g = model();
	gc_compile_options co = {.registry = reg, .dynamic_dims = 1};
	gc_program *p = NULL;
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	gc_graph_free(g);
	gc_registry_free(reg);
	snprintf(buf, sizeof buf, "%s/a/m.gcb", tmp);
	CHECK_INT(gc_program_save(p, buf, &err), 0);
	gc_program_free(p);
	CHECK_INT(gc_program_load(buf, NULL, &p, &err), 0);
	const char *fnlib = NULL;
	int n_fl = 0, per_shape = 0;
	for (int i = 0; i < gc_program_num_nodes(p); i++)
		if (gc_program_node_per_shape(p, i, &fnlib, &n_fl)) {
			per_shape++;
			CHECK_CONTAINS(fnlib, "a/pkg/lib/libdemo_functions.so");
			CHECK(n_fl >= 1);
		}
	CHECK_INT(per_shape, 2);
	gc_session *s = NULL;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	const gc_prep_stats *st = &s->prep_stats;
	for (int n = 1; n <= 8; n += n == 1 ? 2 : 5) /* 1, 3, 8 */
		CHECK_INT(run_n(s, n, 1, &err), 0);
	uint64_t prepared = st->prepared;
	CHECK_INT(run_n(s, 3, 2, &err), 0); /* kept shapes: no package function runs */
	CHECK_INT(run_n(s, 1, 3, &err), 0);
	CHECK_INT(st->prepared, prepared);
	/* what a new shape and a kept one cost (informative; the machine is
	 * shared), and the allocations of each (a kept shape: none) */
	double t_new = 0, t_kept = 0;
	long long a_new = 0, a_kept = 0;
	gc_session *f = NULL; /* a fresh session: every shape is new to it */
	CHECK_INT(gc_session_new(p, NULL, &f, &err), 0);
	for (int n = 2; n <= 8; n++)
		for (int pass = 0; pass < 2; pass++) {
			long long a0 = gc_alloc_count();
			double t0 = now_s();
			CHECK_INT(run_n(f, n, pass, &err), 0);
			*(pass ? &t_kept : &t_new) += now_s() - t0;
			*(pass ? &a_kept : &a_new) += gc_alloc_count() - a0;
		}
	CHECK_INT(a_kept, 0);
	printf("dynamic custom: N = 2..8, mean run on a new shape %.1f us (%.1f allocations), on "
	       "a kept shape %.1f us (%.1f allocations)\n",
	       t_new / 7 * 1e6, (double)a_new / 7, t_kept / 7 * 1e6, (double)a_kept / 7);
	gc_session_free(f);
	/* a type the operation does not declare is refused at run time */
	int64_t xi[C * HW] = {0};
	gc_tensor bad = {.data = xi, .dims = {1, C, 4, 4}, .rank = 4, .dtype = GC_DTYPE_INT64};
	CHECK(gc_session_set_input(s, 0, &bad, &err) != 0);
	gc_session_free(s);
	gc_program_free(p);
}

typedef struct worker {
	const gc_program *p;
	int id, failures;
	gc_error err;
} worker;

static void *serve(void *arg)
{
	worker *w = arg;
	gc_session *s = NULL;
	if (gc_session_new(w->p, NULL, &s, &w->err)) {
		w->failures++;
		return NULL;
	}
	for (int r = 0; r < 12; r++)
		if (run_n(s, 1 + (r * 3 + w->id) % 8, r, &w->err))
			w->failures++;
	gc_session_free(s);
	return NULL;
}

/* One program, a session per thread, each binding the custom nodes for
 * the shapes it sees at the same time as the others. */
static void test_threads(void)
{
	char buf[PATH_MAX + 64];
	gc_program *p = NULL;
	gc_error err = {0};
	snprintf(buf, sizeof buf, "%s/a/m.gcb", tmp);
	CHECK_INT(gc_program_load(buf, NULL, &p, &err), 0);
	pthread_t th[3];
	worker w[3];
	for (int i = 0; i < 3; i++) {
		w[i] = (worker){.p = p, .id = i};
		CHECK_INT(pthread_create(&th[i], NULL, serve, &w[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		CHECK_INT(pthread_join(th[i], NULL), 0);
		if (w[i].failures)
			fprintf(stderr, "thread %d: %s\n", i, w[i].err.msg);
		CHECK_INT(w[i].failures, 0);
	}
	gc_program_free(p);
}

/* The package installed elsewhere: loads through the map; its functions
 * library swapped (the kernel library untouched): refused, GC_ECHANGED,
 * naming it, with or without the map; inspecting it still works. */
static void test_pinned_functions_library(void)
{
	char gcb[PATH_MAX + 64], map_from[PATH_MAX + 64], map_to[PATH_MAX + 64];
	snprintf(gcb, sizeof gcb, "%s/a/m.gcb", tmp);
	CHECK_INT(sh("mkdir -p '%s/opt%s'", tmp, ""), 0);
	CHECK_INT(sh("mv '%s/a/pkg' '%s/opt/demo'", tmp, tmp), 0);
	snprintf(map_from, sizeof map_from, "pkg");
	snprintf(map_to, sizeof map_to, "%s/opt/demo", tmp);
	gc_path_map map = {map_from, map_to};
	gc_load_options lo = {.size = sizeof lo, .library_map = &map, .n_library_map = 1};
	gc_program *p = NULL;
	gc_error err = {0};
	CHECK(gc_program_load(gcb, NULL, &p, &err) != 0); /* moved away */
	err = (gc_error){0};
	CHECK_INT(gc_program_load(gcb, &lo, &p, &err), 0);
	gc_session *s = NULL;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	if (run_n(s, 3, 4, &err))
		fprintf(stderr, "%s\n", err.msg);
	CHECK_INT(err.code, 0);
	gc_session_free(s);
	gc_program_free(p);
	/* another library in the functions library's place (a new file, as a
	 * package upgrade makes it: the one loaded above stays mapped, as
	 * sanitizer builds keep libraries loaded) */
	CHECK_INT(sh("cp '%s/opt/demo/lib/libdemo_kernels.so' '%s/opt/demo/lib/new.so'", tmp, tmp),
		  0);
	CHECK_INT(sh("mv '%s/opt/demo/lib/new.so' '%s/opt/demo/lib/libdemo_functions.so'", tmp,
		     tmp),
		  0);
	err = (gc_error){0};
	CHECK_INT(gc_program_load(gcb, &lo, &p, &err), GC_ECHANGED);
	CHECK(p == NULL);
	CHECK_CONTAINS(err.msg, "opt/demo/lib/libdemo_functions.so (recorded as "
				"pkg/lib/libdemo_functions.so");
	CHECK_CONTAINS(err.msg, "changed since the program was compiled");
	lo.inspect_only = 1;
	err = (gc_error){0};
	CHECK_INT(gc_program_load(gcb, &lo, &p, &err), 0);
	gc_program_free(p);
}

/* A binding made per shape as a hostile file could hold it, written by
 * editing a compiled program before saving: an output maxDims past
 * GC_MAX_RANK (inference would write past the dims buffers), a per-shape
 * binding on a node not prepared at run time, an implementation library
 * the program does not pin. Each is refused at load with a message. */
static void test_hostile_bindings(void)
{
	char pkg[PATH_MAX + 64], path[PATH_MAX + 64];
	gc_error err = {0};
	gc_registry *reg = gc_registry_new();
	snprintf(pkg, sizeof pkg, "%s/demo/demo.yaml", plugins);
	CHECK_INT(gc_registry_load(reg, pkg, &err), 0);
	snprintf(path, sizeof path, "%s/hostile.gcb", tmp);
	for (int edit = 0; edit < 3; edit++) {
		gc_graph *g = model();
		gc_compile_options co = {.registry = reg, .dynamic_dims = 1};
		gc_program *p = NULL;
		CHECK_INT(gc_compile(g, &co, &p, &err), 0);
		gc_graph_free(g);
		gc_node *n = NULL;
		for (int32_t i = 0; i < p->n_nodes && !n; i++)
			if (p->nodes[i].custom)
				n = &p->nodes[i];
		CHECK(n);
		gc_custom *c = n->custom;
		CHECK(c->dyn);
		const char *want = NULL;
		if (edit == 0) {
			c->out_max_dims[0] = 99;
			want = "output 0 has maxDims 99";
		} else if (edit == 1) {
			n->reprepare = false;
			want = "has flags 0";
		} else {
			((gc_custom_dyn *)c->dyn)->impls[0].library = "/usr/lib/not-pinned.so";
			want = "which the program does not pin";
		}
		err = (gc_error){0};
		int rc = gc_program_save(p, path, &err);
		gc_program_free(p);
		if (rc) { /* the writer may refuse it itself */
			CHECK(edit == 2);
			continue;
		}
		gc_program *q = NULL;
		CHECK_INT(gc_program_load(path, NULL, &q, &err), GC_EINVAL);
		CHECK(q == NULL);
		CHECK_CONTAINS(err.msg, want);
	}
	gc_registry_free(reg);
}

TEST_MAIN(TEST(test_compile_and_run), TEST(test_threads), TEST(test_pinned_functions_library),
	  TEST(test_hostile_bindings))
