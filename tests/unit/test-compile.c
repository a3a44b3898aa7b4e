/* Compiling built graphs: inference, folding, dead nodes, the arena plan,
 * and running the result. */
#include <graphcc/graphcc.h>

#include <string.h>

#include "check.h"
#include "program-impl.h" /* the arena plan's offsets */

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

/* y = Relu(Conv3x3(u) + a), a = Relu(x), u = Conv1x1(a) (self: u = a, the
 * residual also the convolution's input), 4 channels of 6x6, the Add and
 * Relu fused into the 3x3 (lib/pass-residual.c). On the packed kernels y
 * takes the residual's bytes, which die there (liveness.h): the arena
 * holds x, a and u at the 3x3, not y besides; never when a is also its
 * input, which it reads all along (that would overwrite a). The values
 * against loops in double. */
#define RC 4
#define RS 6
static void residual_case(int self)
{
	gc_graph *g = gc_graph_new("residual");
	gc_error err = { 0 };
	int64_t d[4] = { 1, RC, RS, RS };
	float w1[RC * RC], w3[RC * RC * 9], b3[RC], x[RC * RS * RS];
	for (int i = 0; i < RC * RC; i++)
		w1[i] = (float)((i * 7) % 5 - 2) / 4;
	for (int i = 0; i < RC * RC * 9; i++)
		w3[i] = (float)((i * 11) % 9 - 4) / 8;
	for (int i = 0; i < RC; i++)
		b3[i] = (float)i / 4 - 0.5f;
	for (int i = 0; i < RC * RS * RS; i++)
		x[i] = (float)((i * 13) % 17 - 8) / 4;
	gc_tensor tw1 = { .data = w1, .dims = { RC, RC, 1, 1 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	gc_tensor tw3 = { .data = w3, .dims = { RC, RC, 3, 3 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	gc_tensor tb3 = { .data = b3, .dims = { RC }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, d, NULL, &err);
	gc_graph_add_constant(g, "w1", &tw1, &err);
	gc_graph_add_constant(g, "w3", &tw3, &err);
	gc_graph_add_constant(g, "b3", &tb3, &err);
	int64_t pads[4] = { 1, 1, 1, 1 };
	gc_attr pa = { .name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = pads };
	const char *r_in[] = { "x" }, *r_out[] = { "a" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	const char *c1_in[] = { "a", "w1" }, *c1_out[] = { "u" };
	if (!self)
		gc_graph_add_node(g, "conv1", "", "Conv", 2, c1_in, 1, c1_out, 0, NULL, &err);
	const char *c3_in[] = { self ? "a" : "u", "w3", "b3" }, *c3_out[] = { "c" };
	gc_graph_add_node(g, "conv3", "", "Conv", 3, c3_in, 1, c3_out, 1, &pa, &err);
	const char *s_in[] = { "c", "a" }, *s_out[] = { "s" };
	gc_graph_add_node(g, "add", "", "Add", 2, s_in, 1, s_out, 0, NULL, &err);
	const char *y_in[] = { "s" }, *y_out[] = { "y" };
	gc_graph_add_node(g, "relu2", "", "Relu", 1, y_in, 1, y_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_INT(err.code, 0);
	gc_program *p;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	gc_graph_free(g);
	gc_program_stats st;
	gc_program_get_stats(p, &st);
	CHECK_INT(st.n_nodes, self ? 2 : 3);
	const gc_ptensor *ta = NULL, *ty = NULL;
	for (int32_t i = 0; i < p->n_tensors; i++) {
		ta = strcmp(p->tensors[i].name, "a") ? ta : &p->tensors[i];
		ty = strcmp(p->tensors[i].name, "y") ? ty : &p->tensors[i];
	}
	CHECK(ta && ty && ta->storage == GC_STORAGE_ARENA && ty->storage == GC_STORAGE_ARENA);
	CHECK_INT(ta->offset == ty->offset, !self);
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	gc_tensor in = { .data = x, .dims = { 1, RC, RS, RS }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	double a[RC * RS * RS], u[RC * RS * RS];
	for (int i = 0; i < RC * RS * RS; i++)
		a[i] = x[i] > 0 ? x[i] : 0;
	for (int m = 0; m < RC; m++)
		for (int q = 0; q < RS * RS; q++) {
			double v = 0;
			for (int c = 0; c < RC; c++)
				v += (double)w1[m * RC + c] * a[c * RS * RS + q];
			u[m * RS * RS + q] = self ? a[m * RS * RS + q] : v;
		}
	for (int run = 0; run < 2; run++) {
		CHECK_INT(gc_session_run(s, &err), 0);
		const float *y = gc_session_output(s, 0)->data;
		int bad = 0;
		for (int m = 0; m < RC && !bad; m++)
			for (int h = 0; h < RS; h++)
				for (int w = 0; w < RS; w++) {
					double v = b3[m] + a[(m * RS + h) * RS + w];
					for (int c = 0; c < RC; c++)
						for (int i = 0; i < 3; i++)
							for (int j = 0; j < 3; j++) {
								int hh = h + i - 1, ww = w + j - 1;
								if (hh >= 0 && hh < RS && ww >= 0 && ww < RS)
									v += (double)w3[((m * RC + c) * 3 + i) * 3 + j] *
									     u[(c * RS + hh) * RS + ww];
							}
					v = v > 0 ? v : 0;
					if (y[(m * RS + h) * RS + w] - v > 1e-5 || v - y[(m * RS + h) * RS + w] > 1e-5)
						bad = 1;
				}
		CHECK(!bad);
	}
	gc_session_free(s);
	gc_program_free(p);
}

static void test_residual_in_place(void)
{
	/* the packed kernels, then the reference ones: the same plan, the
	 * residual copied first (conv.c's conv_res_run) */
	for (int ref = 0; ref < 2; ref++) {
		gc_runtime_init(&(gc_init_options){ .reference_kernels = ref }, NULL);
		residual_case(0);
		residual_case(1);
	}
	gc_runtime_init(NULL, NULL);
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
	  TEST(test_residual_in_place), TEST(test_errors_name_node))
