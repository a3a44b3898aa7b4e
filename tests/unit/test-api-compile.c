/* The compiler API (graphcc.h) as a host calls it (issue 18 item 2): every
 * function refuses NULL, out-of-range counts and indices, bad ranks and
 * dims with GC_EINVAL and a message naming the function or field -- never
 * a crash -- and a NULL gc_error is allowed everywhere. The runtime half
 * is test-api.c. */
#include <graphcc/graphcc.h>

#include "check.h"

static float data6[6] = { 1, 2, 3, 4, 5, 6 };

/* Building a graph: gc_graph_* with NULL, bad counts, ranks, dims and
 * attributes. */
static void test_graph_building(void)
{
	gc_graph *g = gc_graph_new(NULL); /* origin NULL: a default name */
	CHECK(g);
	int64_t d2[2] = { 2, 3 }, bad_dims[2] = { 2, -5 };
	EXPECT_EINVAL(gc_graph_set_opset(NULL, "", 13, err), "'g' is NULL");
	CHECK_INT(gc_graph_set_opset(g, NULL, 13, NULL), 0); /* NULL domain: the default one */
	CHECK_INT(gc_graph_opset_version(NULL, ""), -1);
	CHECK_INT(gc_graph_opset_version(g, NULL), 13);
	EXPECT_EINVAL(gc_graph_add_input(NULL, "x", GC_DTYPE_FLOAT, 2, d2, NULL, err),
		      "'g' is NULL");
	EXPECT_EINVAL(gc_graph_add_input(g, NULL, GC_DTYPE_FLOAT, 2, d2, NULL, err),
		      "empty name");
	EXPECT_EINVAL(gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, NULL, NULL, err),
		      "'dims' is NULL for rank 2");
	EXPECT_EINVAL(gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 100, d2, NULL, err),
		      "rank 100; graphcc supports ranks 0 to 8");
	EXPECT_EINVAL(gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, -3, d2, NULL, err), "rank -3");
	EXPECT_EINVAL(gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, bad_dims, NULL, err),
		      "dim 1 is -5");
	EXPECT_EINVAL(gc_graph_add_input(g, "x", (gc_dtype)77, 2, d2, NULL, err),
		      "invalid element type 77");
	CHECK_INT(gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d2, NULL, NULL), 0);

	gc_tensor c = { .data = data6, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	EXPECT_EINVAL(gc_graph_add_constant(NULL, "c", &c, err), "'g' is NULL");
	EXPECT_EINVAL(gc_graph_add_constant(g, "c", NULL, err), "argument 'value' is NULL");
	c.data = NULL;
	EXPECT_EINVAL(gc_graph_add_constant(g, "c", &c, err), "data is NULL for 24 bytes");
	c.data = data6;
	c.rank = 100;
	EXPECT_EINVAL(gc_graph_add_constant(g, "c", &c, err), "rank 100 is out of range");
	c.rank = 2;
	c.dims[0] = -2;
	EXPECT_EINVAL(gc_graph_add_constant(g, "c", &c, err), "dim 0 is -2");
	c.dims[0] = 2;
	c.dtype = (gc_dtype)(GC_DTYPE_SEQUENCE | GC_DTYPE_FLOAT);
	EXPECT_EINVAL(gc_graph_add_constant(g, "c", &c, err), "not a tensor type");
	c.dtype = GC_DTYPE_FLOAT;
	CHECK_INT(gc_graph_add_constant(g, "c", &c, NULL), 0);

	const char *in[] = { "x", "c" }, *out[] = { "y" };
	EXPECT_EINVAL(gc_graph_add_node(NULL, "n", "", "Add", 2, in, 1, out, 0, NULL, err),
		      "'g' is NULL");
	EXPECT_EINVAL(gc_graph_add_node(g, "n", "", "Add", 2, NULL, 1, out, 0, NULL, err),
		      "2 inputs and the list is NULL");
	EXPECT_EINVAL(gc_graph_add_node(g, "n", "", "Add", 2, in, 1, NULL, 0, NULL, err),
		      "1 outputs and the list is NULL");
	EXPECT_EINVAL(gc_graph_add_node(g, "n", "", "Add", -1, in, 1, out, 0, NULL, err),
		      "the count of inputs is -1");
	EXPECT_EINVAL(gc_graph_add_node(g, "n", "", "Add", 2, in, 1, out, 1, NULL, err),
		      "1 attributes and 'attrs' is NULL");
	EXPECT_EINVAL(gc_graph_add_node(g, "n", "", NULL, 2, in, 1, out, 0, NULL, err),
		      "has no op type");
	gc_attr bad[] = {
		{ .name = NULL, .type = GC_ATTR_INT },
		{ .name = "a", .type = (gc_attr_type)42 },
		{ .name = "a", .type = GC_ATTR_INTS, .n = 3, .v.ints = NULL },
		{ .name = "a", .type = GC_ATTR_FLOATS, .n = -1 },
		{ .name = "a", .type = GC_ATTR_TENSOR, .v.t = NULL },
		{ .name = "a", .type = GC_ATTR_TENSOR, .v.t = &c },
		{ .name = "a", .type = GC_ATTR_STRINGS, .n = 1, .v.strings = (const char *[]){ NULL } },
		{ .name = "a", .type = GC_ATTR_GRAPH, .v.g = NULL },
	};
	const char *why[] = { "attribute 0 has a NULL name", "invalid type 42",
			      "3 values and a NULL list", "has count -1",
			      "attribute 0 ('a') is NULL", "rank 9 is out of range",
			      "value 0 is NULL", "the graph is NULL" };
	for (int i = 0; i < (int)(sizeof bad / sizeof *bad); i++) {
		c.rank = i == 5 ? 9 : 2;
		EXPECT_EINVAL(gc_graph_add_node(g, "n", "", "Add", 2, in, 1, out, 1, &bad[i], err),
			      why[i]);
	}
	c.rank = 2;
	CHECK_INT(gc_graph_add_node(g, "n", "", "Add", 2, in, 1, out, 0, NULL, NULL), 0);
	CHECK(gc_graph_add_subgraph(NULL, "b") == NULL);
	EXPECT_EINVAL(gc_graph_add_output(NULL, "y", err), "'g' is NULL");
	EXPECT_EINVAL(gc_graph_add_output(g, NULL, err), "empty name");
	CHECK_INT(gc_graph_add_output(g, "y", NULL), 0);
	EXPECT_EINVAL(gc_graph_set_value_info(NULL, "y", GC_DTYPE_FLOAT, 2, d2, err), "'g' is NULL");
	EXPECT_EINVAL(gc_graph_set_value_info(g, NULL, GC_DTYPE_FLOAT, 2, d2, err), "empty name");
	EXPECT_EINVAL(gc_graph_set_value_info(g, "y", GC_DTYPE_FLOAT, 2, NULL, err),
		      "'dims' is NULL for rank 2");
	EXPECT_EINVAL(gc_graph_drop_default(NULL, "x", err), "'g' is NULL");
	EXPECT_EINVAL(gc_graph_drop_default(g, NULL, err), "'name' is NULL");

	/* reading a graph */
	CHECK_INT(gc_graph_num_inputs(NULL), GC_EINVAL);
	CHECK_INT(gc_graph_num_outputs(NULL), GC_EINVAL);
	CHECK_INT(gc_graph_num_nodes(NULL), GC_EINVAL);
	CHECK(gc_graph_input_name(NULL, 0) == NULL);
	CHECK(gc_graph_input_name(g, 5) == NULL);
	CHECK(gc_graph_output_name(NULL, 0) == NULL);
	CHECK(gc_graph_output_name(g, -1) == NULL);
	CHECK_INT(gc_graph_input_has_default(NULL, 0), 0);
	gc_tensor info;
	CHECK_INT(gc_graph_tensor_info(NULL, "x", &info), GC_EINVAL);
	CHECK_INT(gc_graph_tensor_info(g, NULL, &info), GC_EINVAL);
	CHECK_INT(gc_graph_tensor_info(g, "x", NULL), GC_EINVAL);
	CHECK_INT(gc_graph_tensor_info(g, "x", &info), 0);
	CHECK(gc_graph_dim_name(NULL, "x", 0) == NULL);
	CHECK(gc_graph_dim_name(g, NULL, 0) == NULL);
	CHECK(gc_graph_dim_name(g, "x", 7) == NULL);
	const char *name = "?", *dom = "?", *op = "?";
	gc_graph_node(NULL, 0, &name, &dom, &op);
	CHECK(name == NULL && dom == NULL && op == NULL);
	gc_graph_node(g, 3, &name, &dom, &op);
	CHECK(name == NULL);
	gc_graph_node(g, 0, &name, NULL, NULL);
	CHECK_STR(name, "n");
	CHECK(gc_graph_node_io(NULL, 0, 0, 0, NULL) == NULL);
	CHECK(gc_graph_node_io(g, 0, 0, 9, NULL) == NULL);
	CHECK_INT(gc_op_is_builtin(NULL, NULL), 0);
	CHECK_INT(gc_op_is_builtin(NULL, "Add"), 1);

	/* compiling and saving */
	gc_program *p = (gc_program *)1;
	EXPECT_EINVAL(gc_compile(NULL, NULL, &p, err), "'g' is NULL");
	CHECK(p == NULL);
	EXPECT_EINVAL(gc_compile(g, NULL, NULL, err), "'out' is NULL");
	gc_compile_options co = { .n_shapes = 1 };
	EXPECT_EINVAL(gc_compile(g, &co, &p, err), "gc_compile_options.n_shapes is 1 with shapes NULL");
	gc_shape_override so = { .name = NULL, .rank = 1, .dims = { 4 } };
	co = (gc_compile_options){ .shapes = &so, .n_shapes = 1 };
	EXPECT_EINVAL(gc_compile(g, &co, &p, err), "gc_compile_options.shapes[0].name is NULL");
	so = (gc_shape_override){ .name = "x", .rank = 12 };
	EXPECT_EINVAL(gc_compile(g, &co, &p, err), "shapes[0] ('x'): rank 12 is out of range");
	so = (gc_shape_override){ .name = "x", .rank = 2, .dims = { 2, -3 } };
	EXPECT_EINVAL(gc_compile(g, &co, &p, err), "shapes[0] ('x'): dim 1 is -3");
	gc_input_value iv = { .name = "x", .value = NULL };
	co = (gc_compile_options){ .input_values = &iv, .n_input_values = 1 };
	EXPECT_EINVAL(gc_compile(g, &co, &p, err), "input_values[0] ('x') is NULL");
	co = (gc_compile_options){ .n_input_values = -4 };
	EXPECT_EINVAL(gc_compile(g, &co, &p, err), "gc_compile_options.n_input_values is -4");
	CHECK_INT(gc_compile(g, NULL, &p, NULL), 0);
	EXPECT_EINVAL(gc_program_save(NULL, "/tmp/x.gcb", err), "'p' is NULL");
	EXPECT_EINVAL(gc_program_save(p, NULL, err), "'path' is NULL");
	gc_program_stats st = { .n_nodes = 99 };
	gc_program_get_stats(NULL, &st);
	CHECK_INT(st.n_nodes, 0);
	gc_program_get_stats(p, NULL);
	EXPECT_EINVAL(gc_flavours_compare(NULL, NULL, NULL, 0, NULL, err), "'s' is NULL");
	EXPECT_EINVAL(gc_onnx_save(NULL, "/tmp/x.onnx", err), "'g' is NULL");
	EXPECT_EINVAL(gc_onnx_save(g, NULL, err), "'path' is NULL");
	gc_program_free(p);
	gc_graph_free(g);
	gc_graph_free(NULL);
}

/* Loading models, tensors and packages; the registry's getters. */
static void test_loading(void)
{
	gc_graph *g = (gc_graph *)1;
	EXPECT_EINVAL(gc_onnx_load(NULL, &g, err), "'path' is NULL");
	CHECK(g == NULL);
	EXPECT_EINVAL(gc_onnx_load("m.onnx", NULL, err), "'out' is NULL");
	EXPECT_EINVAL(gc_onnx_load_mem(NULL, 10, "m", &g, err), "'buf' is NULL");
	EXPECT_EINVAL(gc_onnx_load_mem("x", 1, "m", NULL, err), "'out' is NULL");
	CHECK(gc_onnx_load_mem("garbage", 7, NULL, &g, NULL) != 0); /* err NULL */
	gc_tensor t;
	char *name;
	EXPECT_EINVAL(gc_pb_read(NULL, &t, &name, err), "'path' is NULL");
	EXPECT_EINVAL(gc_pb_read("t.pb", NULL, &name, err), "'out' is NULL");
	EXPECT_EINVAL(gc_pb_read_value(NULL, GC_DTYPE_FLOAT, &t, err), "'path' is NULL");
	EXPECT_EINVAL(gc_pb_read_value("t.pb", GC_DTYPE_FLOAT, NULL, err), "'out' is NULL");

	gc_registry *r = gc_registry_new();
	CHECK(r);
	gc_registry_free(NULL);
	gc_registry_set_note_handler(NULL, NULL, NULL);
	CHECK_INT(gc_registry_set_options(NULL, NULL), GC_EINVAL);
	gc_registry_options ro = { .n_library_dirs = 2 };
	CHECK_INT(gc_registry_set_options(r, &ro), GC_EINVAL);
	ro = (gc_registry_options){ .n_library_dirs = -1 };
	CHECK_INT(gc_registry_set_options(r, &ro), GC_EINVAL);
	const char *dirs[] = { NULL };
	ro = (gc_registry_options){ .library_dirs = dirs, .n_library_dirs = 1 };
	CHECK_INT(gc_registry_set_options(r, &ro), GC_EINVAL);
	EXPECT_EINVAL(gc_registry_load(NULL, "p.yaml", err), "'r' is NULL");
	EXPECT_EINVAL(gc_registry_load(r, NULL, err), "'manifest' is NULL");
	EXPECT_EINVAL(gc_registry_load_path(NULL, "a:b", err), "'r' is NULL");
	EXPECT_EINVAL(gc_registry_load_path(r, NULL, err), "'list' is NULL");
	CHECK(gc_registry_load(r, "/nonexistent/p.yaml", NULL) != 0); /* err NULL */
	CHECK_INT(gc_registry_num_ops(NULL), GC_EINVAL);
	CHECK_INT(gc_registry_num_ops(r), 0);
	CHECK_INT(gc_registry_provides(NULL, "d", "T", 1), 0);
	CHECK_INT(gc_registry_provides(r, NULL, NULL, 1), 0);
	gc_op_desc od = { .name = "?" };
	gc_registry_op(NULL, 0, &od);
	CHECK(od.name == NULL);
	gc_registry_op(r, -1, &od);
	gc_registry_op(r, 0, NULL);
	gc_impl_desc id;
	gc_registry_impl(NULL, 0, 0, &id);
	gc_registry_impl(r, 0, 0, NULL);
	gc_io_desc io;
	gc_registry_op_io(NULL, 0, 0, 0, &io);
	gc_registry_op_io(r, 0, 0, 0, NULL);
	gc_param_desc pd;
	gc_registry_op_param(NULL, 0, 0, &pd);
	gc_registry_op_param(r, 0, 0, NULL);
	gc_op_functions of;
	gc_registry_op_functions(NULL, 0, &of);
	gc_registry_op_functions(r, 0, NULL);
	gc_impl_functions ifn;
	gc_registry_impl_functions(NULL, 0, 0, &ifn);
	gc_registry_impl_functions(r, 0, 0, NULL);
	gc_registry_free(r);

	gc_selftest_counts counts;
	EXPECT_EINVAL(gc_selftest_package(NULL, NULL, stderr, &counts, err), "'manifest' is NULL");
	EXPECT_EINVAL(gc_selftest_package("p.yaml", NULL, NULL, &counts, err), "'out' is NULL");
	EXPECT_EINVAL(gc_selftest_package("p.yaml", NULL, stderr, NULL, err), "'counts' is NULL");
	EXPECT_EINVAL(gc_selftest_check(NULL, err), "'manifest' is NULL");
}

TEST_MAIN(TEST(test_graph_building), TEST(test_loading))
