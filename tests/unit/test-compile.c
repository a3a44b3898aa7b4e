/* Compiling built graphs: inference, folding, dead nodes, the arena plan,
 * and running the result. */
#include <graphcc/graphcc.h>

#include "check.h"

static void test_run_small_graph(void)
{
	gc_graph *g = gc_graph_new("small");
	gc_error err = { 0 };
	int64_t d[2] = { 2, 3 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "r" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	const char *a_in[] = { "r", "x" }, *a_out[] = { "y" };
	gc_graph_add_node(g, "add", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_INT(err.code, 0);
	gc_program *p;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	gc_graph_free(g); /* the program stands alone */
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	float x[6] = { -1, 2, -3, 4, -5, 6 };
	gc_tensor in = { .data = x, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	const gc_tensor *y = gc_session_output(s, 0);
	CHECK_INT(y->rank, 2);
	float want[6] = { -1, 4, -3, 8, -5, 12 }; /* relu(x) + x */
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(((float *)y->data)[i], want[i], 0);
	/* wrong shape is refused, naming both */
	in.dims[0] = 3;
	CHECK(gc_session_set_input(s, 0, &in, &err) != 0);
	CHECK_CONTAINS(err.msg, "3x3");
	CHECK_CONTAINS(err.msg, "2x3");
	gc_session_free(s);
	gc_program_free(p);
}

static void test_fold_and_dead_nodes(void)
{
	gc_graph *g = gc_graph_new("fold");
	gc_error err = { 0 };
	int64_t d[1] = { 4 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	float c[4] = { 1, 2, 3, 4 };
	gc_tensor ct = { .data = c, .dims = { 4 }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	gc_graph_add_constant(g, "c", &ct, &err);
	const char *n_in[] = { "c" }, *n_out[] = { "nc" };
	gc_graph_add_node(g, "neg", "", "Neg", 1, n_in, 1, n_out, 0, NULL, &err); /* folds */
	const char *a_in[] = { "x", "nc" }, *a_out[] = { "y" };
	gc_graph_add_node(g, "add", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	const char *u_in[] = { "x" }, *u_out[] = { "unused" };
	gc_graph_add_node(g, "dead", "", "Exp", 1, u_in, 1, u_out, 0, NULL, &err); /* dropped */
	gc_graph_add_output(g, "y", &err);
	CHECK_INT(err.code, 0);
	gc_program *p;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	gc_program_stats st;
	gc_program_get_stats(p, &st);
	CHECK_INT(st.n_nodes, 1);
	gc_program_free(p);
	gc_compile_options no = { .no_fold = 1 };
	CHECK_INT(gc_compile(g, &no, &p, &err), 0);
	gc_program_get_stats(p, &st);
	CHECK_INT(st.n_nodes, 2);
	gc_program_free(p);
	gc_graph_free(g);
}

static void test_arena_reuse(void)
{
	/* A chain of 6 Relus over 1 MiB tensors needs 2 buffers, not 7. */
	gc_graph *g = gc_graph_new("chain");
	gc_error err = { 0 };
	int64_t d[1] = { 262144 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "t0", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	char names[7][8];
	for (int i = 0; i < 7; i++)
		snprintf(names[i], sizeof names[i], "t%d", i);
	for (int i = 0; i < 6; i++) {
		const char *in[] = { names[i] }, *out[] = { names[i + 1] };
		gc_graph_add_node(g, names[i + 1], "", "Relu", 1, in, 1, out, 0, NULL, &err);
	}
	gc_graph_add_output(g, "t6", &err);
	gc_program *p;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	gc_program_stats st;
	gc_program_get_stats(p, &st);
	CHECK_INT(st.tensor_bytes, 7 * 1048576);
	/* the input stays live (runs repeat on it); Relu runs in place, so
	 * t1..t6 share one block */
	CHECK_INT(st.arena_bytes, 2 * 1048576);
	/* running twice on one input gives the same output */
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	float *x = malloc(262144 * sizeof *x);
	for (int i = 0; i < 262144; i++)
		x[i] = (float)(i % 7) - 3;
	gc_tensor in = { .data = x, .dims = { 262144 }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	for (int run = 0; run < 2; run++) {
		CHECK_INT(gc_session_run(s, &err), 0);
		const float *y = gc_session_output(s, 0)->data;
		for (int i = 0; i < 262144; i++)
			CHECK_NEAR(y[i], x[i] > 0 ? x[i] : 0, 0);
	}
	free(x);
	gc_session_free(s);
	gc_program_free(p);
	gc_graph_free(g);
}

static void test_errors_name_node(void)
{
	gc_graph *g = gc_graph_new("bad.onnx");
	gc_error err = { 0 };
	int64_t d2[2] = { 2, 3 }, d3[2] = { 4, 5 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "a", GC_DTYPE_FLOAT, 2, d2, NULL, &err);
	gc_graph_add_input(g, "b", GC_DTYPE_FLOAT, 2, d3, NULL, &err);
	const char *in[] = { "a", "b" }, *out[] = { "y" };
	gc_graph_add_node(g, "mismatch", "", "Add", 2, in, 1, out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_program *p;
	CHECK(gc_compile(g, NULL, &p, &err) != 0);
	CHECK_CONTAINS(err.msg, "node 'mismatch'");
	gc_graph_free(g);

	g = gc_graph_new("custom.onnx");
	memset(&err, 0, sizeof err);
	gc_graph_add_input(g, "a", GC_DTYPE_FLOAT, 2, d2, NULL, &err);
	const char *cin[] = { "a" }, *cout[] = { "y" };
	gc_graph_add_node(g, "mine", "com.example", "Relu", 1, cin, 1, cout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK(gc_compile(g, NULL, &p, &err) != 0);
	CHECK_CONTAINS(err.msg, "node 'mine'");
	CHECK_CONTAINS(err.msg, "com.example");
	gc_graph_free(g);

	g = gc_graph_new("dyn.onnx");
	memset(&err, 0, sizeof err);
	int64_t dd[2] = { -1, 3 };
	const char *dn[2] = { "batch", NULL };
	gc_graph_add_input(g, "a", GC_DTYPE_FLOAT, 2, dd, dn, &err);
	gc_graph_add_node(g, "r", "", "Relu", 1, cin, 1, cout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK(gc_compile(g, NULL, &p, &err) != 0);
	CHECK_CONTAINS(err.msg, "'batch'");
	gc_shape_override so = { .name = "batch", .rank = 1, .dims = { 5 } };
	gc_compile_options opt = { .shapes = &so, .n_shapes = 1 };
	memset(&err, 0, sizeof err);
	CHECK_INT(gc_compile(g, &opt, &p, &err), 0);
	CHECK_INT(gc_program_output(p, 0, NULL)->dims[0], 5);
	gc_program_free(p);
	gc_graph_free(g);
}

TEST_MAIN(TEST(test_run_small_graph), TEST(test_fold_and_dead_nodes), TEST(test_arena_reuse),
	  TEST(test_errors_name_node))
