/*
 * Building a graph in C with graphcc's builder API: a built-in Conv, a
 * custom node from an op package (org.glow.lenet::ScaledTanh, with params),
 * and a Relu. The program compiles it with the package, runs it, saves it
 * as a .gcb, loads that back with the runtime alone and checks both runs
 * give the same bytes, and the result against a direct computation.
 *
 *   example-custom-graph SEED_LENET_MANIFEST OUT.gcb
 */
#include <graphcc/graphcc.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                            \
	do {                                                                   \
		if ((call) != 0) {                                             \
			fprintf(stderr, "example: %s\n", err.msg);             \
			return 1;                                              \
		}                                                              \
	} while (0)

static int run_once(const gc_program *p, const gc_tensor *x, float *out, size_t n)
{
	gc_error err = { 0 };
	gc_session *s;
	CHECK(gc_session_new(p, NULL, &s, &err));
	CHECK(gc_session_set_input(s, 0, x, &err));
	CHECK(gc_session_run(s, &err));
	memcpy(out, gc_session_output(s, 0)->data, n * sizeof *out);
	gc_session_free(s);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s SEED_LENET_MANIFEST OUT.gcb\n", argv[0]);
		return 2;
	}
	gc_error err = { 0 };
	gc_registry *reg = gc_registry_new();
	CHECK(gc_registry_load(reg, argv[1], &err));

	gc_graph *g = gc_graph_new("example");
	CHECK(gc_graph_set_opset(g, "", 13, &err));
	CHECK(gc_graph_set_opset(g, "org.glow.lenet", 1, &err));
	int64_t xd[4] = { 1, 1, 6, 6 };
	CHECK(gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, xd, NULL, &err));
	float w[2 * 1 * 3 * 3];
	for (int i = 0; i < 18; i++)
		w[i] = (float)((i % 5) - 2) * 0.25f;
	gc_tensor wt = { .data = w, .dims = { 2, 1, 3, 3 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	CHECK(gc_graph_add_constant(g, "w", &wt, &err));

	int64_t pads[4] = { 1, 1, 1, 1 };
	gc_attr conv_attrs[] = { { .name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = pads } };
	const char *conv_in[] = { "x", "w" }, *conv_out[] = { "c" };
	CHECK(gc_graph_add_node(g, "conv", "", "Conv", 2, conv_in, 1, conv_out, 1, conv_attrs,
				&err));
	/* The custom node: by domain and type, its params as attributes. */
	gc_attr tanh_attrs[] = { { .name = "alpha", .type = GC_ATTR_FLOAT, .v.f = 2.0f },
				 { .name = "beta", .type = GC_ATTR_FLOAT, .v.f = 0.5f } };
	const char *t_in[] = { "c" }, *t_out[] = { "t" };
	CHECK(gc_graph_add_node(g, "scaled_tanh", "org.glow.lenet", "ScaledTanh", 1, t_in, 1,
				t_out, 2, tanh_attrs, &err));
	const char *r_in[] = { "t" }, *r_out[] = { "y" };
	CHECK(gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err));
	CHECK(gc_graph_add_output(g, "y", &err));

	gc_compile_options opt = { .registry = reg };
	gc_program *p;
	CHECK(gc_compile(g, &opt, &p, &err));
	gc_graph_free(g);

	float x[36], y1[72], y2[72];
	for (int i = 0; i < 36; i++)
		x[i] = sinf((float)i);
	gc_tensor xt = { .data = x, .dims = { 1, 1, 6, 6 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	if (run_once(p, &xt, y1, 72))
		return 1;
	CHECK(gc_program_save(p, argv[2], &err));
	gc_program_free(p);
	gc_registry_free(reg); /* the saved program needs no registry */

	gc_program *loaded;
	CHECK(gc_program_load(argv[2], NULL, &loaded, &err));
	if (run_once(loaded, &xt, y2, 72))
		return 1;
	gc_program_free(loaded);

	/* Independent check: relu(2 * tanh(0.5 * conv(x, w))), every element. */
	double worst = 0;
	int positive = 0;
	for (int oc = 0; oc < 2; oc++)
		for (int oy = 0; oy < 6; oy++)
			for (int ox = 0; ox < 6; ox++) {
				double c = 0;
				for (int ky = 0; ky < 3; ky++)
					for (int kx = 0; kx < 3; kx++) {
						int iy = oy + ky - 1, ix = ox + kx - 1;
						if (iy >= 0 && iy < 6 && ix >= 0 && ix < 6)
							c += (double)x[iy * 6 + ix] *
							     w[oc * 9 + ky * 3 + kx];
					}
				double want = fmax(0.0, 2.0 * tanh(0.5 * c));
				positive += want > 0;
				worst = fmax(worst, fabs(y1[oc * 36 + oy * 6 + ox] - want));
			}
	printf("max |graphcc - reference| = %.2g over 72 outputs (%d positive); saved and loaded "
	       "runs %s\n",
	       worst, positive, memcmp(y1, y2, sizeof y1) ? "DIFFER" : "are identical");
	return worst < 1e-5 && positive > 0 && !memcmp(y1, y2, sizeof y1) ? 0 : 1;
}
