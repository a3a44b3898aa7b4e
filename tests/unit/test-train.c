/*
 * Training programs (lib/train.c) and session state (gc_graph_add_state:
 * graph.c, compile.c, gcb-write.c / gcb-read.c, session.c) through the
 * public API: a state input starts at its initial value in every session,
 * takes its output's value after each run, survives a .gcb round trip, and
 * gc_graph_make_training builds an SGD step whose update is the one worked
 * out by hand below.
 */
#include <graphcc/graphcc.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* Runs s and gives output i (zeros when the run fails, which it reports). */
static const float *run_out(gc_session *s, int i)
{
	static const float none[4];
	gc_error err = {0};
	if (gc_session_run(s, &err)) {
		fprintf(stderr, "%s:%d: run failed: %s\n", __FILE__, __LINE__, err.msg);
		check_failed_ = 1;
		return none;
	}
	return gc_session_output(s, i)->data;
}

/* acc (state, starts [1, 2]) <- acc + x after each run */
static gc_graph *accumulator(gc_error *err)
{
	gc_graph *g = gc_graph_new("acc");
	const char *in[2] = {"acc", "x"}, *out = "next";
	float init[2] = {1, 2};
	gc_tensor t = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = init};
	gc_graph_set_opset(g, "", 13, err);
	gc_graph_add_input(g, "acc", GC_DTYPE_FLOAT, 1, D(2), NULL, err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, D(2), NULL, err);
	gc_graph_add_node(g, "add", "", "Add", 2, in, 1, &out, 0, NULL, err);
	gc_graph_add_output(g, "next", err);
	gc_graph_add_state(g, "acc", "next", &t, err);
	return g;
}

static void test_state_runs_and_gcb(void)
{
	gc_error err = {0};
	gc_graph *g = accumulator(&err);
	CHECK_STR(err.msg, "");
	gc_program *p = NULL, *q = NULL;
	gc_session *s = NULL, *s2 = NULL;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	CHECK_STR(err.msg, "");
	int iacc = gc_program_find_input(p, "acc"), ix = gc_program_find_input(p, "x");
	CHECK_INT(gc_program_input_state(p, iacc), 0);
	CHECK_INT(gc_program_input_state(p, ix), -1);
	float one[2] = {1, 1};
	gc_tensor x = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = one};
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	CHECK_INT(gc_session_set_input(s, ix, &x, &err), 0); /* acc is never set */
	const float *y = run_out(s, 0);
	CHECK(y[0] == 2 && y[1] == 3);
	y = run_out(s, 0);
	CHECK(y[0] == 3 && y[1] == 4); /* the session kept the update */
	char path[] = "/tmp/gc-test-train-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(gc_program_save(p, path, &err), 0);
	CHECK_INT(gc_program_load(path, NULL, &q, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(gc_program_input_state(q, gc_program_find_input(q, "acc")), 0);
	CHECK_INT(gc_session_new(q, NULL, &s2, &err), 0); /* a new session starts over */
	CHECK_INT(gc_session_set_input(s2, gc_program_find_input(q, "x"), &x, &err), 0);
	y = run_out(s2, 0);
	CHECK(y[0] == 2 && y[1] == 3);
	/* setting the state input by hand resets it */
	float zero[2] = {0, 0};
	gc_tensor z = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = zero};
	CHECK_INT(gc_session_set_input(s2, gc_program_find_input(q, "acc"), &z, &err), 0);
	y = run_out(s2, 0);
	CHECK(y[0] == 1 && y[1] == 1);
	unlink(path);
	gc_session_free(s);
	gc_session_free(s2);
	gc_program_free(p);
	gc_program_free(q);
	gc_graph_free(g);
}

static void test_state_refusals(void)
{
	gc_error err = {0};
	gc_graph *g = accumulator(&err);
	float v[3] = {0};
	gc_tensor bad = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {3}, .data = v};
	gc_tensor ok = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = v};
	struct {
		const char *in, *out;
		const gc_tensor *init;
		const char *needle;
	} cases[] = {
	    {"nothing", "next", &ok, "state 'nothing' is no graph input"},
	    {"x", "nowhere", &ok, "'nowhere' is no graph output"},
	    {"x", "next", &bad, "type or shape is not the input's"},
	    {"acc", "next", &ok, "state 'acc' is declared twice"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_error e = {0};
		CHECK(gc_graph_add_state(g, cases[i].in, cases[i].out, cases[i].init, &e) != 0);
		CHECK_CONTAINS(e.msg, cases[i].needle);
	}
	gc_graph_free(g);
}

/*
 * loss = ReduceSum(w * x) with w an initializer [1, 2], x = [3, 4]: dloss/dw
 * = x. SGD, lr 0.5, momentum 0.9: v1 = x, w1 = w - 0.5 x = [-0.5, 0];
 * v2 = 0.9 x + x, w2 = w1 - 0.5 * 1.9 x = [-3.35, -3.8]. The loss of run k
 * is computed from w before its update: 11, then -1.5 (w1 . x).
 */
static void test_make_training_sgd(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("sgd");
	float w0[2] = {1, 2}, xv[2] = {3, 4};
	gc_tensor w = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = w0};
	const char *mi[2] = {"w", "x"}, *mo = "wx", *lo = "loss";
	gc_attr kd = {.name = "keepdims", .type = GC_ATTR_INT, .n = 1, .v.i = 0};
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, D(2), NULL, &err);
	gc_graph_add_constant(g, "w", &w, &err);
	gc_graph_add_node(g, "mul", "", "Mul", 2, mi, 1, &mo, 0, NULL, &err);
	gc_graph_add_node(g, "sum", "", "ReduceSum", 1, &mo, 1, &lo, 1, &kd, &err);
	gc_graph_add_output(g, "loss", &err);
	const char *params[] = {"w"};
	gc_train_options o = {.size = sizeof o, .loss = "loss", .params = params, .n_params = 1,
			      .optimizer = GC_OPTIMIZER_SGD, .learning_rate = 0.5f, .momentum = 0.9f};
	CHECK_INT(gc_graph_make_training(g, &o, &err), 0);
	CHECK_STR(err.msg, "");
	gc_program *p = NULL;
	gc_session *s = NULL;
	CHECK_INT(gc_compile(g, NULL, &p, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	gc_tensor x = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = xv};
	CHECK_INT(gc_session_set_input(s, gc_program_find_input(p, "x"), &x, &err), 0);
	int il = -1, iw = -1;
	for (int i = 0; i < gc_program_num_outputs(p); i++) {
		const char *name;
		gc_program_output(p, i, &name);
		il = strcmp(name, "loss") ? il : i;
		iw = strcmp(name, "w.new") ? iw : i;
	}
	CHECK(il >= 0 && iw >= 0);
	CHECK_NEAR(run_out(s, il)[0], 11, 1e-5);
	const float *nw = gc_session_output(s, iw)->data;
	CHECK_NEAR(nw[0], -0.5, 1e-6);
	CHECK_NEAR(nw[1], 0, 1e-6);
	CHECK_NEAR(run_out(s, il)[0], -1.5, 1e-5);
	nw = gc_session_output(s, iw)->data;
	CHECK_NEAR(nw[0], -3.35, 1e-5);
	CHECK_NEAR(nw[1], -3.8, 1e-5);
	gc_session_free(s);
	gc_program_free(p);
	gc_graph_free(g);
}

static void test_make_training_refusals(void)
{
	struct {
		const char *loss, *param;
		float lr;
		const char *needle;
	} cases[] = {
	    {"nope", "w", 0.1f, "the loss 'nope' is no tensor"},
	    {"loss", "x", 0.1f, "param 'x' is no initializer"},
	    {"loss", "w", 0.0f, "out of range"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_error err = {0};
		gc_graph *g = gc_graph_new("bad");
		float w0[2] = {1, 2};
		gc_tensor w = {.dtype = GC_DTYPE_FLOAT, .rank = 1, .dims = {2}, .data = w0};
		const char *mi[2] = {"w", "x"}, *mo = "loss";
		gc_graph_set_opset(g, "", 13, &err);
		gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, D(2), NULL, &err);
		gc_graph_add_constant(g, "w", &w, &err);
		gc_graph_add_node(g, "mul", "", "Mul", 2, mi, 1, &mo, 0, NULL, &err);
		gc_graph_add_output(g, "loss", &err);
		const char *params[] = {cases[i].param};
		gc_train_options o = {.size = sizeof o, .loss = cases[i].loss, .params = params,
				      .n_params = 1, .learning_rate = cases[i].lr};
		CHECK(gc_graph_make_training(g, &o, &err) != 0);
		CHECK_CONTAINS(err.msg, cases[i].needle);
		gc_graph_free(g);
	}
}

TEST_MAIN({"state_runs_and_gcb", test_state_runs_and_gcb},
	  {"state_refusals", test_state_refusals},
	  {"make_training_sgd", test_make_training_sgd},
	  {"make_training_refusals", test_make_training_refusals})
