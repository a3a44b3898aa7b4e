/*
 * Weights that are graph inputs: a program compiled with their values
 * (gc_compile_options.input_values, as `graphcc run` does) must not keep
 * those values -- packed into the fast kernels' state, say -- when the
 * next run brings other weights. Checked against naive loops (exact
 * integers in float: tolerance 0).
 */
#include <graphcc/graphcc.h>

#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"

enum { M = 4, K = 16, N = 64 }; /* MatMul: M >= 2 and N >= 32 take the packed path */

static void fill(float *v, int n, int seed)
{
	for (int i = 0; i < n; i++)
		v[i] = (float)((i * 7 + seed * 13) % 11 - 5);
}

static void test_matmul_weights_input(void)
{
	gc_error err = { 0 };
	gc_graph *g = gc_graph_new("mm");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t da[2] = { M, K }, db[2] = { K, N };
	gc_graph_add_input(g, "a", GC_DTYPE_FLOAT, 2, da, NULL, &err);
	gc_graph_add_input(g, "b", GC_DTYPE_FLOAT, 2, db, NULL, &err);
	const char *in[2] = { "a", "b" }, *out[1] = { "y" };
	gc_graph_add_node(g, "mm", "", "MatMul", 2, in, 1, out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_INT(err.code, 0);
	static float a[M * K], b1[K * N], b2[K * N], want[M * N];
	fill(a, M * K, 1);
	fill(b1, K * N, 2);
	fill(b2, K * N, 3);
	gc_tensor ta = { .data = a, .dims = { M, K }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	gc_tensor tb = { .data = b1, .dims = { K, N }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	gc_input_value iv[2] = { { "a", &ta }, { "b", &tb } };
	gc_compile_options opt = { .input_values = iv, .n_input_values = 2 };
	gc_program *p = NULL;
	CHECK_INT(gc_compile(g, &opt, &p, &err), 0);
	gc_graph_free(g);
	if (!p)
		return;
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	for (int r = 0; r < 2; r++) {
		const float *b = r ? b2 : b1;
		tb.data = (void *)b;
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				float acc = 0;
				for (int q = 0; q < K; q++)
					acc += a[i * K + q] * b[q * N + j];
				want[i * N + j] = acc;
			}
		CHECK_INT(gc_session_set_input(s, 0, &ta, &err), 0);
		CHECK_INT(gc_session_set_input(s, 1, &tb, &err), 0);
		CHECK_INT(gc_session_run(s, &err), 0);
		const float *y = gc_session_output(s, 0)->data;
		int bad = 0;
		for (int i = 0; i < M * N; i++)
			bad += y[i] != want[i];
		CHECK_INT(bad, 0);
	}
	gc_session_free(s);
	gc_program_free(p);
}

/* Conv 8 -> 8 channels, 3x3 on 6x6, weights an input. */
static void test_conv_weights_input(void)
{
	enum { C = 8, H = 6 };
	gc_error err = { 0 };
	gc_graph *g = gc_graph_new("conv");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t dx[4] = { 1, C, H, H }, dw[4] = { C, C, 3, 3 };
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, dx, NULL, &err);
	gc_graph_add_input(g, "w", GC_DTYPE_FLOAT, 4, dw, NULL, &err);
	int64_t pads[4] = { 1, 1, 1, 1 };
	gc_attr pa = { .name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = pads };
	const char *in[2] = { "x", "w" }, *out[1] = { "y" };
	gc_graph_add_node(g, "conv", "", "Conv", 2, in, 1, out, 1, &pa, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_INT(err.code, 0);
	static float x[C * H * H], w1[C * C * 9], w2[C * C * 9], want[C * H * H];
	fill(x, C * H * H, 4);
	fill(w1, C * C * 9, 5);
	fill(w2, C * C * 9, 6);
	gc_tensor tx = { .data = x, .dims = { 1, C, H, H }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	gc_tensor tw = { .data = w1, .dims = { C, C, 3, 3 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	gc_input_value iv[2] = { { "x", &tx }, { "w", &tw } };
	gc_compile_options opt = { .input_values = iv, .n_input_values = 2 };
	gc_program *p = NULL;
	CHECK_INT(gc_compile(g, &opt, &p, &err), 0);
	gc_graph_free(g);
	if (!p)
		return;
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	for (int r = 0; r < 2; r++) {
		const float *w = r ? w2 : w1;
		tw.data = (void *)w;
		for (int o = 0; o < C; o++)
			for (int i = 0; i < H; i++)
				for (int j = 0; j < H; j++) {
					float acc = 0;
					for (int c = 0; c < C; c++)
						for (int u = 0; u < 3; u++)
							for (int v = 0; v < 3; v++) {
								int yi = i + u - 1, xj = j + v - 1;
								if (yi < 0 || yi >= H || xj < 0 || xj >= H)
									continue;
								acc += x[(c * H + yi) * H + xj] *
								       w[((o * C + c) * 3 + u) * 3 + v];
							}
					want[(o * H + i) * H + j] = acc;
				}
		CHECK_INT(gc_session_set_input(s, 0, &tx, &err), 0);
		CHECK_INT(gc_session_set_input(s, 1, &tw, &err), 0);
		CHECK_INT(gc_session_run(s, &err), 0);
		const float *y = gc_session_output(s, 0)->data;
		int bad = 0;
		for (int i = 0; i < C * H * H; i++)
			bad += y[i] != want[i];
		CHECK_INT(bad, 0);
	}
	gc_session_free(s);
	gc_program_free(p);
}

TEST_MAIN(TEST(test_matmul_weights_input), TEST(test_conv_weights_input))
