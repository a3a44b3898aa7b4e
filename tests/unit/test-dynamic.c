/* Dynamic dimensions in compiled programs (issue 18 item 10): a program
 * compiled with gc_compile_options.dynamic_dims runs any batch N, saved to
 * a .gcb and loaded again too; a session prepares its nodes once per new
 * input shape and keeps the preparations (prep-cache.h): a second run of a
 * shape it saw prepares nothing. Outputs are compared with a direct
 * computation in double precision. Prints what a new shape and a kept one
 * cost (not asserted: the machine is shared). */
#include <graphcc/graphcc.h>

#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "session-impl.h"

#define K 64
#define M 32
static float w[K * M], bias[M];

/* y = Reshape(Relu(x W + b), Shape(x W)): x [N, K] with N symbolic; the
 * Reshape's shape is a value computed at run time from N. */
static gc_graph *mlp(void)
{
	gc_graph *g = gc_graph_new("dyn.onnx");
	gc_error err = { 0 };
	int64_t dx[2] = { -1, K };
	const char *names[2] = { "N", NULL };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, dx, names, &err);
	gc_tensor wt = { .data = w, .dims = { K, M }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	gc_tensor bt = { .data = bias, .dims = { M }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	gc_graph_add_constant(g, "w", &wt, &err);
	gc_graph_add_constant(g, "b", &bt, &err);
	const char *mm_in[] = { "x", "w" }, *mm_out[] = { "xw" };
	gc_graph_add_node(g, "mm", "", "MatMul", 2, mm_in, 1, mm_out, 0, NULL, &err);
	const char *add_in[] = { "xw", "b" }, *add_out[] = { "z" };
	gc_graph_add_node(g, "add", "", "Add", 2, add_in, 1, add_out, 0, NULL, &err);
	const char *relu_in[] = { "z" }, *relu_out[] = { "r" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, relu_in, 1, relu_out, 0, NULL, &err);
	const char *sh_in[] = { "xw" }, *sh_out[] = { "s" };
	gc_graph_add_node(g, "shape", "", "Shape", 1, sh_in, 1, sh_out, 0, NULL, &err);
	const char *rs_in[] = { "r", "s" }, *rs_out[] = { "y" };
	gc_graph_add_node(g, "reshape", "", "Reshape", 2, rs_in, 1, rs_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	if (err.code)
		fprintf(stderr, "mlp: %s\n", err.msg);
	return g;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs s on N rows; 0 when its output matches relu(x W + b). */
static int run_rows(gc_session *s, int n, gc_error *err)
{
	static float x[64 * K];
	for (int i = 0; i < n * K; i++)
		x[i] = (float)((i * 7919 + n * 104729) % 2001) / 1000.0f - 1.0f;
	gc_tensor t = { .data = x, .dims = { n, K }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	if (gc_session_set_input(s, 0, &t, err) || gc_session_run(s, err))
		return err->code;
	const gc_tensor *y = gc_session_output(s, 0);
	if (y->rank != 2 || y->dims[0] != n || y->dims[1] != M)
		return gc_error_set(err, GC_EINVAL, "output shape %lldx%lld for N=%d",
				    (long long)y->dims[0], (long long)y->dims[1], n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < M; j++) {
			double acc = bias[j];
			for (int k = 0; k < K; k++)
				acc += (double)x[i * K + k] * w[k * M + j];
			acc = acc > 0 ? acc : 0;
			double got = ((const float *)y->data)[i * M + j];
			if (got - acc > 1e-4 || acc - got > 1e-4)
				return gc_error_set(err, GC_EINVAL, "y[%d][%d] = %g, want %g", i, j,
						    got, acc);
		}
	return 0;
}

static void check_program(gc_program *p)
{
	const gc_tensor *d = gc_program_input(p, 0, NULL);
	CHECK(d);
	CHECK_INT(d->rank, 2);
	CHECK_INT(d->dims[0], -1); /* any N */
	CHECK_INT(d->dims[1], K);
	gc_session *s = NULL;
	gc_error err = { 0 };
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	const gc_prep_stats *st = &s->prep_stats;
	CHECK_INT(run_rows(s, 2, &err), 0);
	uint64_t first = st->prepared;
	CHECK(first > 0);
	CHECK_INT(run_rows(s, 2, &err), 0); /* same shape: nothing prepared */
	CHECK_INT(st->prepared, first);
	CHECK(st->reused >= first);
	CHECK_INT(run_rows(s, 5, &err), 0); /* a new shape: prepared once */
	uint64_t second = st->prepared;
	CHECK(second > first);
	CHECK_INT(run_rows(s, 2, &err), 0); /* both kept */
	CHECK_INT(run_rows(s, 5, &err), 0);
	CHECK_INT(st->prepared, second);
	for (int n = 1; n <= 6; n++) /* more shapes than ways: still right */
		CHECK_INT(run_rows(s, n, &err), 0);
	/* a dim of fixed size must fit */
	float x[3 * 7] = { 0 };
	gc_tensor bad = { .data = x, .dims = { 3, 7 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_set_input(s, 0, &bad, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "expects float32 of shape -1x64");
	gc_session_free(s);
}

static void test_dynamic_batch(void)
{
	for (int i = 0; i < K * M; i++)
		w[i] = (float)((i * 31) % 17) / 17.0f - 0.5f;
	for (int j = 0; j < M; j++)
		bias[j] = (float)j / M - 0.25f;
	gc_graph *g = mlp();
	gc_program *p = NULL;
	gc_error err = { 0 };
	CHECK(gc_compile(g, NULL, &p, &err) != 0); /* refused without dynamic_dims */
	CHECK_CONTAINS(err.msg, "dynamic dimension 0 ('N')");
	CHECK_CONTAINS(err.msg, "gc_compile_options.dynamic_dims");
	gc_compile_options co = { .dynamic_dims = 1 };
	err = (gc_error){ 0 };
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	gc_graph_free(g);
	check_program(p);
	char path[] = "/tmp/gc-dyn-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(gc_program_save(p, path, &err), 0);
	gc_program_free(p);
	CHECK_INT(gc_program_load(path, NULL, &p, &err), 0);
	unlink(path);
	check_program(p);

	/* what a new shape costs, and a kept one (informative): the same run
	 * timed on its first and its second sight of each shape */
	gc_session *s = NULL;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	static float x[64 * K];
	double t_new = 0, t_kept = 0;
	long long a_new = 0, a_kept = 0;
	for (int n = 33; n <= 64; n++) {
		gc_tensor t = { .data = x, .dims = { n, K }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
		for (int pass = 0; pass < 2; pass++) {
			long long a0 = gc_alloc_count();
			double t0 = now_s();
			CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
			CHECK_INT(gc_session_run(s, &err), 0);
			*(pass ? &t_kept : &t_new) += now_s() - t0;
			*(pass ? &a_kept : &a_new) += gc_alloc_count() - a0;
		}
	}
	CHECK_INT(a_kept, 0);
	printf("dynamic: N = 33..64, mean run on a new shape %.1f us (prepares %d nodes, %.1f "
	       "allocations), on a kept shape %.1f us (%.1f allocations); prepared %llu, reused "
	       "%llu\n",
	       t_new / 32 * 1e6, (int)(s->prep_stats.prepared / 32), (double)a_new / 32,
	       t_kept / 32 * 1e6, (double)a_kept / 32, (unsigned long long)s->prep_stats.prepared,
	       (unsigned long long)s->prep_stats.reused);
	gc_session_free(s);
	gc_program_free(p);
}

/* A node whose output shape depends on its input's values (NonZero on
 * 100 floats per row): two runs of the same shape with other values must
 * not share a preparation (the key holds that input's values). */
static void test_value_dependent_shape(void)
{
	gc_graph *g = gc_graph_new("nonzero.onnx");
	gc_error err = { 0 };
	int64_t dx[2] = { -1, 100 };
	const char *names[2] = { "N", NULL };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, dx, names, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "r" }, *nz_out[] = { "idx" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	gc_graph_add_node(g, "nz", "", "NonZero", 1, r_out, 1, nz_out, 0, NULL, &err);
	gc_graph_add_output(g, "idx", &err);
	gc_compile_options co = { .dynamic_dims = 1 };
	gc_program *p = NULL;
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	gc_graph_free(g);
	gc_session *s = NULL;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	static float x[2 * 100];
	for (int round = 0; round < 3; round++) {
		int want = 0;
		for (int i = 0; i < 200; i++) {
			x[i] = (i * 37 + round * 11) % 5 < 2 + round ? 1.0f : -1.0f;
			want += x[i] > 0;
		}
		gc_tensor t = { .data = x, .dims = { 2, 100 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
		CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
		CHECK_INT(gc_session_run(s, &err), 0);
		const gc_tensor *y = gc_session_output(s, 0);
		CHECK_INT(y->rank, 2);
		CHECK_INT(y->dims[0], 2);
		CHECK_INT(y->dims[1], want);
		const int64_t *ix = y->data;
		for (int64_t c = 0; c < want; c++)
			CHECK(x[ix[c] * 100 + ix[want + c]] > 0);
	}
	gc_session_free(s);
	gc_program_free(p);
}

/* Memory planned per input shape (dyn-plan.h): the first run of a shape
 * plans its dynamic tensors into one region with reuse (the plan is
 * smaller than their sum); a later run of a kept shape places every
 * tensor by the plan and allocates nothing; more shapes than the cache
 * keeps still run right. */
static void test_plan_per_shape(void)
{
	gc_graph *g = mlp();
	gc_compile_options co = { .dynamic_dims = 1 };
	gc_program *p = NULL;
	gc_error err = { 0 };
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	gc_graph_free(g);
	gc_session *s = NULL;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	const gc_dyn_plans *d = s->plans;
	CHECK(d != NULL);
	CHECK_INT(run_rows(s, 5, &err), 0); /* new: its own buffers, then a plan */
	CHECK_INT(d->plans_made, 1);
	CHECK_INT(d->runs_planned, 0);
	const gc_dyn_plan *e = &d->e[0];
	CHECK(e->used);
	uint64_t sum = 0;
	int planned = 0;
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (e->off[t] != GC_DYN_PLAN_NONE) {
			sum += e->bytes[t];
			planned++;
			CHECK_INT(e->off[t] % 64, 0);
		}
	CHECK(planned >= 4);
	CHECK(e->total < sum); /* tensors of disjoint lifetimes share bytes */
	printf("plan: N = 5, %d dynamic tensors of %llu bytes in a region of %llu bytes\n",
	       planned, (unsigned long long)sum, (unsigned long long)e->total);
	long long before = gc_alloc_count();
	CHECK_INT(run_rows(s, 5, &err), 0); /* kept */
	CHECK_INT(gc_alloc_count() - before, 0);
	CHECK_INT(d->runs_planned, 1);
	/* every dynamic tensor of the run lies in the region */
	const unsigned char *r = d->region.data;
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (e->off[t] != GC_DYN_PLAN_NONE)
			CHECK((const unsigned char *)s->tensors[t].data == r + e->off[t]);
	CHECK_INT(run_rows(s, 9, &err), 0); /* new */
	CHECK_INT(d->plans_made, 2);
	before = gc_alloc_count();
	CHECK_INT(run_rows(s, 5, &err), 0);
	CHECK_INT(run_rows(s, 9, &err), 0);
	CHECK_INT(run_rows(s, 5, &err), 0);
	CHECK_INT(gc_alloc_count() - before, 0);
	CHECK_INT(d->runs_planned, 4);
	for (int n = 1; n <= 12; n++) /* more shapes than kept plans */
		CHECK_INT(run_rows(s, n, &err), 0);
	for (int n = 12; n >= 1; n--)
		CHECK_INT(run_rows(s, n, &err), 0);
	gc_session_free(s);
	gc_program_free(p);
}

TEST_MAIN(TEST(test_dynamic_batch), TEST(test_value_dependent_shape), TEST(test_plan_per_shape))
