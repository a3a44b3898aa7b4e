/* The graph builder and its checks: every error names the node. */
#include <graphcc/graphcc.h>

#include "check.h"
#include "graph-impl.h"

static gc_graph *two_node_graph(void)
{
	gc_graph *g = gc_graph_new("t.onnx");
	gc_error err = { 0 };
	int64_t dims[2] = { 2, 3 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, dims, NULL, &err);
	const char *a_in[] = { "x" }, *a_out[] = { "a" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, a_in, 1, a_out, 0, NULL, &err);
	const char *b_in[] = { "a", "x" }, *b_out[] = { "y" };
	gc_graph_add_node(g, "add", "", "Add", 2, b_in, 1, b_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	return err.code ? NULL : g;
}

static void test_build_and_order(void)
{
	gc_graph *g = two_node_graph();
	CHECK(g);
	int32_t order[2];
	gc_error err = { 0 };
	CHECK_INT(gc_graph_check(g, order, &err), 0);
	CHECK_INT(order[0], 0);
	CHECK_INT(order[1], 1);
	CHECK_INT(gc_graph_num_nodes(g), 2);
	CHECK_STR(gc_graph_input_name(g, 0), "x");
	gc_graph_free(g);
}

static void test_duplicate_producer(void)
{
	gc_graph *g = two_node_graph();
	gc_error err = { 0 };
	const char *in[] = { "x" }, *out[] = { "a" };
	CHECK(gc_graph_add_node(g, "again", "", "Neg", 1, in, 1, out, 0, NULL, &err) != 0);
	CHECK_CONTAINS(err.msg, "'a' is produced twice");
	CHECK_CONTAINS(err.msg, "node 'relu'");
	CHECK_CONTAINS(err.msg, "node 'again'");
	gc_graph_free(g);
}

static void test_undefined_input(void)
{
	gc_graph *g = two_node_graph();
	gc_error err = { 0 };
	const char *in[] = { "nowhere" }, *out[] = { "z" };
	CHECK_INT(gc_graph_add_node(g, "lost", "", "Neg", 1, in, 1, out, 0, NULL, &err), 0);
	int32_t order[3];
	CHECK(gc_graph_check(g, order, &err) != 0);
	CHECK_CONTAINS(err.msg, "node 'lost'");
	CHECK_CONTAINS(err.msg, "'nowhere'");
	gc_graph_free(g);
}

static void test_cycle(void)
{
	gc_graph *g = gc_graph_new("cyc.onnx");
	gc_error err = { 0 };
	int64_t d[1] = { 4 };
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	const char *a_in[] = { "x", "b" }, *a_out[] = { "a" };
	const char *b_in[] = { "a" }, *b_out[] = { "b" };
	gc_graph_add_node(g, "n1", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	gc_graph_add_node(g, "n2", "", "Relu", 1, b_in, 1, b_out, 0, NULL, &err);
	gc_graph_add_output(g, "b", &err);
	CHECK_INT(err.code, 0);
	int32_t order[2];
	CHECK(gc_graph_check(g, order, &err) != 0);
	CHECK_CONTAINS(err.msg, "cycle");
	CHECK_CONTAINS(err.msg, "node 'n");
	gc_graph_free(g);
}

static void test_self_reference(void)
{
	gc_graph *g = gc_graph_new("self.onnx");
	gc_error err = { 0 };
	const char *io[] = { "s" };
	gc_graph_add_node(g, "me", "", "Relu", 1, io, 1, io, 0, NULL, &err);
	gc_graph_add_output(g, "s", &err);
	int32_t order[1];
	CHECK(gc_graph_check(g, order, &err) != 0);
	CHECK_CONTAINS(err.msg, "node 'me'");
	gc_graph_free(g);
}

static void test_attributes_copied(void)
{
	gc_graph *g = gc_graph_new(NULL);
	gc_error err = { 0 };
	int64_t ints[3] = { 1, 2, 3 };
	gc_attr a[2] = { { .name = "perm", .type = GC_ATTR_INTS, .n = 3, .v.ints = ints },
			 { .name = "mode", .type = GC_ATTR_STRING, .n = 4, .v.s = "edge" } };
	int64_t d[3] = { 1, 2, 3 };
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 3, d, NULL, &err);
	const char *in[] = { "x" }, *out[] = { "y" };
	CHECK_INT(gc_graph_add_node(g, "t", "", "Transpose", 1, in, 1, out, 2, a, &err), 0);
	ints[0] = 99; /* the graph holds its own copy */
	CHECK_INT(g->nodes[0].attrs[0].v.ints[0], 1);
	CHECK_STR(g->nodes[0].attrs[1].v.s, "edge");
	/* a duplicate attribute is refused */
	gc_attr dup[2] = { a[1], a[1] };
	const char *out2[] = { "z" };
	CHECK(gc_graph_add_node(g, "d", "", "Pad", 1, in, 1, out2, 2, dup, &err) != 0);
	CHECK_CONTAINS(err.msg, "attribute 'mode' twice");
	gc_graph_free(g);
}

/* gc_graph_node_alone: the node with its attributes; initializers stay
 * constants (the weights), other inputs become graph inputs typed as the
 * values the node saw; outputs keep their value_info; opsets are kept. */
static void test_node_alone(void)
{
	gc_graph *g = gc_graph_new("m.onnx");
	gc_error err = { 0 };
	int64_t dx[2] = { -1, 3 }, seen[2] = { 4, 3 };
	float w[3] = { 1, 2, 3 };
	gc_tensor wt = { .data = w, .dims = { 3 }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	gc_attr a = { .name = "alpha", .type = GC_ATTR_FLOAT, .n = 1, .v.f = 0.5f };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_set_opset(g, "my.dom", 2, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, dx, NULL, &err);
	gc_graph_add_constant(g, "w", &wt, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "r" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	const char *c_in[] = { "r", "w" }, *c_out[] = { "y" };
	gc_graph_add_node(g, "op", "my.dom", "Op", 2, c_in, 1, c_out, 1, &a, &err);
	gc_graph_add_output(g, "y", &err);
	gc_graph_set_value_info(g, "y", GC_DTYPE_FLOAT, 2, seen, &err);
	CHECK_INT(err.code, 0);
	gc_tensor r = { .dims = { 4, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	const gc_tensor *in[2] = { &r, NULL };
	gc_graph *one = NULL;
	CHECK_INT(gc_graph_node_alone(g, "op", in, &one, &err), 0);
	CHECK_INT(gc_graph_num_nodes(one), 1);
	CHECK_INT(gc_graph_num_inputs(one), 1);
	CHECK_STR(gc_graph_input_name(one, 0), "r");
	gc_tensor info;
	gc_graph_tensor_info(one, "r", &info);
	CHECK_INT(info.rank, 2);
	CHECK_INT(info.dims[0], 4); /* as the node saw it, not the model's -1 */
	int is_const = 0;
	CHECK_STR(gc_graph_node_io(one, 0, 0, 1, &is_const), "w");
	CHECK_INT(is_const, 1);
	CHECK_STR(gc_graph_output_name(one, 0), "y");
	CHECK_INT(one->values[gc_graph_find(one, "y")].has_info, 1);
	CHECK_INT(gc_graph_opset_version(one, "my.dom"), 2);
	CHECK(one->nodes[0].n_attr == 1 && one->nodes[0].attrs[0].v.f == 0.5f);
	gc_graph_free(one);
	CHECK(gc_graph_node_alone(g, "nope", in, &one, &err) != 0);
	CHECK_CONTAINS(err.msg, "no node named 'nope'");
	gc_graph_free(g);
}

TEST_MAIN(TEST(test_build_and_order), TEST(test_duplicate_producer), TEST(test_undefined_input),
	  TEST(test_cycle), TEST(test_self_reference), TEST(test_attributes_copied),
	  TEST(test_node_alone))
