/*
 * Inputs read in place (gc_session_use_input, what the Python binding
 * uses): the kernels read the caller's memory, nothing writes into it, and
 * a later gc_session_set_input copies into the session's own memory again
 * instead of into the caller's old buffer. Also the in-process libraries
 * (gc_inprocess_library_add) a binding registers its kernels as.
 */
#include <graphcc/customop.h>
#include <graphcc/graphcc.h>

#include "check.h"

/* x -> Relu -> a -> Neg -> y: Relu may work in place, but never on x. */
static gc_program *relu_neg(void)
{
	gc_error err = { 0 };
	gc_graph *g = gc_graph_new("use-input");
	int64_t d[1] = { 4 };
	const char *x[] = { "x" }, *a[] = { "a" }, *y[] = { "y" };
	gc_graph_set_opset(g, "", 17, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	gc_graph_add_node(g, "relu", "", "Relu", 1, x, 1, a, 0, NULL, &err);
	gc_graph_add_node(g, "neg", "", "Neg", 1, a, 1, y, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_program *p = NULL;
	gc_compile_options co = { 0 };
	if (gc_compile(g, &co, &p, &err))
		fprintf(stderr, "compile: %s\n", err.msg);
	gc_graph_free(g);
	return p;
}

static void test_use_input_reads_in_place(void)
{
	gc_program *p = relu_neg();
	CHECK(p);
	gc_session *s = NULL;
	gc_error err = { 0 };
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	float mine[4] = { -1, 2, -3, 4 };
	gc_tensor t = { .data = mine, .dims = { 4 }, .rank = 1, .dtype = GC_DTYPE_FLOAT };
	CHECK_INT(gc_session_use_input(s, 0, &t, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	const float *y = gc_session_output(s, 0)->data;
	CHECK(y[0] == 0 && y[1] == -2 && y[3] == -4);
	CHECK(mine[0] == -1 && mine[1] == 2); /* untouched */
	mine[1] = 5; /* read in place: the next run sees the change */
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(((const float *)gc_session_output(s, 0)->data)[1] == -5);
	/* set_input copies into the session again, not into `mine`. */
	float other[4] = { 1, 1, 1, 1 };
	t.data = other;
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	CHECK(mine[0] == -1 && mine[1] == 5 && mine[2] == -3 && mine[3] == 4);
	other[0] = 7; /* copied: later changes do not matter */
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(((const float *)gc_session_output(s, 0)->data)[0] == -1);
	/* Wrong shapes are refused as by set_input. */
	t.dims[0] = 3;
	CHECK(gc_session_use_input(s, 0, &t, &err) == GC_EINVAL);
	CHECK_CONTAINS(err.msg, "'x'");
	CHECK(gc_session_use_input(s, 1, &t, &err) == GC_EINVAL);
	gc_session_free(s);
	gc_program_free(p);
}

static GcStatus twice(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
		      CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *params,
		      int32_t n_params)
{
	(void)ctx, (void)n_in, (void)n_out, (void)params, (void)n_params;
	for (int64_t i = 0; i < in[0].numel; i++)
		((float *)out[0].data)[i] = 2 * ((const float *)in[0].data)[i];
	return GC_STATUS_OK;
}

static void test_inprocess_library(void)
{
	gcOpKernel_t k = twice;
	void (*fn)(void);
	memcpy(&fn, &k, sizeof fn);
	const char *names[] = { "twice" };
	gc_error err = { 0 };
	CHECK_INT(gc_inprocess_library_add("unit-test", 1, names, &fn, &err), 0);
	CHECK(gc_inprocess_library_add("unit-test", 1, names, &fn, &err) == GC_EINVAL);
	CHECK_CONTAINS(err.msg, "registered already");
}

TEST_MAIN(TEST(test_use_input_reads_in_place), TEST(test_inprocess_library))
