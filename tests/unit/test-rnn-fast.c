/*
 * The float32 fast path of RNN, GRU and LSTM (runtime/kernels/rnn.c:
 * GEMM input projection, packed R^T, vectorised gates, directions on two
 * threads) against the reference path (gc_init_options.reference_kernels, computed in
 * double, which the ONNX conformance tests and test-rnn.c check against
 * PyTorch) on every attribute the op has: directions, layouts, bias,
 * sequence_lens, initial states, peepholes, input_forget,
 * linear_before_reset, clip, activations with alpha/beta, hidden sizes that
 * are and are not multiples of 16, R known at prepare or only at run time,
 * one and two threads. Tolerance: 2e-5 x max(1, |reference|) (float32 gate
 * math over up to 7 steps).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "expect.h"
#include "harness.h"

enum { RNN, GRU, LSTM };

typedef struct rcase {
	int kind;
	const char *dir;
	int layout, seq, batch, in, hid;
	int bias, seqlens, h0, c0, peep, input_forget, lbr;
	float clip;
	const char *acts[6]; /* NULL-terminated, or none */
	float alpha[6], beta[6];
	int n_alpha, n_beta;
	int r_unknown, threads;
} rcase;

static uint32_t rng_state = 12345;
static float frand(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((rng_state >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

static float *rand_buf(int64_t n, float scale)
{
	float *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
	for (int64_t i = 0; i < n; i++)
		b[i] = frand() * scale;
	return b;
}

/* R hidden from prepare (as for weights a node computes). */
static int prepare_hidden_r(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			    gc_prepare_fn real)
{
	void *r = in[2]->data;
	in[2]->data = NULL;
	int rc = real(k, n, in, out);
	in[2]->data = r;
	return rc;
}
static int prep_rnn_h(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_hidden_r(k, n, in, out, gc_prepare_RNN);
}
static int prep_gru_h(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_hidden_r(k, n, in, out, gc_prepare_GRU);
}
static int prep_lstm_h(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_hidden_r(k, n, in, out, gc_prepare_LSTM);
}

static int close_outputs(const char *what, const gc_tensor *got, const gc_tensor *want)
{
	int64_t n = gc_tensor_numel(want);
	if (gc_tensor_numel(got) != n || got->dtype != GC_DTYPE_FLOAT) {
		fprintf(stderr, "  %s: shapes or types differ\n", what);
		return 0;
	}
	const float *g = got->data, *w = want->data;
	for (int64_t i = 0; i < n; i++) {
		double tol = 2e-5 * fmax(1.0, fabs((double)w[i]));
		if (!(fabs((double)g[i] - (double)w[i]) <= tol)) {
			fprintf(stderr, "  %s: element %lld: fast %.9g, reference %.9g (tol %.2g)\n",
				what, (long long)i, (double)g[i], (double)w[i], tol);
			return 0;
		}
	}
	return 1;
}

static int run_case(const rcase *c, const char *label)
{
	static const int gates[] = {1, 3, 4};
	static const char *const ops[] = {"RNN", "GRU", "LSTM"};
	gc_prepare_fn prep[] = {gc_prepare_RNN, gc_prepare_GRU, gc_prepare_LSTM};
	gc_prepare_fn hidden[] = {prep_rnn_h, prep_gru_h, prep_lstm_h};
	int dirs = !strcmp(c->dir, "bidirectional") ? 2 : 1, G = gates[c->kind];
	int64_t H = c->hid, S = c->seq, NB = c->batch, I = c->in;
	float *x = rand_buf(S * NB * I, 1.5f), *w = rand_buf(dirs * G * H * I, 0.5f);
	float *r = rand_buf(dirs * G * H * H, 0.5f), *b = rand_buf(dirs * 2 * G * H, 0.5f);
	float *h0 = rand_buf(dirs * NB * H, 1.0f), *c0 = rand_buf(dirs * NB * H, 1.0f);
	float *pp = rand_buf(dirs * 3 * H, 0.5f);
	int32_t *lens = malloc((size_t)NB * sizeof *lens);
	for (int64_t i = 0; i < NB; i++) { /* some shorter, maybe 0 */
		int64_t len = (S * (i + 1)) / NB - (i % 2);
		lens[i] = (int32_t)(len > 0 ? len : 0);
	}
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 3,
				      c->layout ? D(NB, S, I) : D(S, NB, I), x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 3, D(dirs, G * H, I), w);
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 3, D(dirs, G * H, H), r);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 2, D(dirs, 2 * G * H), b);
	gc_tensor tl = harness_tensor(GC_DTYPE_INT32, 1, D(NB), lens);
	gc_tensor th = harness_tensor(GC_DTYPE_FLOAT, 3,
				      c->layout ? D(NB, dirs, H) : D(dirs, NB, H), h0);
	gc_tensor tc = harness_tensor(GC_DTYPE_FLOAT, 3,
				      c->layout ? D(NB, dirs, H) : D(dirs, NB, H), c0);
	gc_tensor tp = harness_tensor(GC_DTYPE_FLOAT, 2, D(dirs, 3 * H), pp);
	gc_tensor *in[8] = {&tx,
			    &tw,
			    &tr,
			    c->bias ? &tb : NULL,
			    c->seqlens ? &tl : NULL,
			    c->h0 ? &th : NULL,
			    c->c0 ? &tc : NULL,
			    c->peep ? &tp : NULL};
	gc_attr at[12];
	int na = 0;
	at[na++] = (gc_attr){.name = "hidden_size", .type = GC_ATTR_INT, .v.i = H};
	at[na++] = (gc_attr){.name = "direction", .type = GC_ATTR_STRING,
			     .n = (int64_t)strlen(c->dir), .v.s = c->dir};
	at[na++] = (gc_attr){.name = "layout", .type = GC_ATTR_INT, .v.i = c->layout};
	if (c->clip > 0)
		at[na++] = (gc_attr){.name = "clip", .type = GC_ATTR_FLOAT, .v.f = c->clip};
	if (c->input_forget)
		at[na++] = (gc_attr){.name = "input_forget", .type = GC_ATTR_INT, .v.i = 1};
	if (c->lbr)
		at[na++] = (gc_attr){.name = "linear_before_reset", .type = GC_ATTR_INT, .v.i = 1};
	int n_acts = 0;
	while (n_acts < 6 && c->acts[n_acts])
		n_acts++;
	if (n_acts)
		at[na++] = (gc_attr){.name = "activations", .type = GC_ATTR_STRINGS, .n = n_acts,
				     .v.strings = c->acts};
	if (c->n_alpha)
		at[na++] = (gc_attr){.name = "activation_alpha", .type = GC_ATTR_FLOATS,
				     .n = c->n_alpha, .v.floats = (float *)c->alpha};
	if (c->n_beta)
		at[na++] = (gc_attr){.name = "activation_beta", .type = GC_ATTR_FLOATS,
				     .n = c->n_beta, .v.floats = (float *)c->beta};
	int n_in = c->kind == LSTM ? 8 : 6, n_out = c->kind == LSTM ? 3 : 2;
	gc_prepare_fn pf = c->r_unknown ? hidden[c->kind] : prep[c->kind];
	harness_run fast, ref;
	harness_threads = c->threads;
	gc_runtime_init(NULL, NULL);
	int rc = harness_op(&fast, pf, ops[c->kind], 14, n_in, in, n_out, na, at);
	gc_runtime_init(&(gc_init_options){ .reference_kernels = 1 }, NULL);
	int rc2 = harness_op(&ref, pf, ops[c->kind], 14, n_in, in, n_out, na, at);
	gc_runtime_init(NULL, NULL);
	harness_threads = 1;
	int ok = rc == 0 && rc2 == 0;
	if (!ok)
		fprintf(stderr, "  %s: fast rc %d (%s), reference rc %d (%s)\n", label, rc,
			fast.err.msg, rc2, ref.err.msg);
	if (ok && fast.node.run == ref.node.run) {
		fprintf(stderr, "  %s: the fast path was not taken\n", label);
		ok = 0;
	}
	static const char *const names[] = {"Y", "Y_h", "Y_c"};
	for (int i = 0; ok && i < n_out; i++) {
		char what[160];
		snprintf(what, sizeof what, "%s: %s", label, names[i]);
		ok = close_outputs(what, &fast.out[i], &ref.out[i]);
	}
	harness_free(&fast);
	harness_free(&ref);
	free(x), free(w), free(r), free(b), free(h0), free(c0), free(pp), free(lens);
	return ok;
}

/* clang-format off */
static const rcase cases[] = {
	/* kind dir layout seq batch in hid  bias lens h0 c0 peep if lbr clip */
	{LSTM, "forward", 0, 5, 2, 3, 16, 1, 0, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{LSTM, "forward", 0, 7, 3, 5, 70, 1, 1, 1, 1, 1, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{LSTM, "reverse", 1, 6, 2, 4, 9, 1, 1, 1, 1, 0, 1, 0, 0, {NULL}, {0}, {0}, 0, 0, 1, 1},
	{LSTM, "bidirectional", 0, 6, 3, 4, 20, 1, 1, 1, 1, 1, 0, 0, 0.8f, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{LSTM, "bidirectional", 1, 4, 2, 3, 64, 0, 0, 1, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 1, 2},
	{LSTM, "forward", 0, 4, 2, 3, 5, 1, 0, 0, 0, 0, 0, 0, 0,
	 {"HardSigmoid", "ScaledTanh", "Softsign"}, {0.3f, 0.9f}, {0.4f, 1.1f}, 2, 2, 0, 1},
	{LSTM, "bidirectional", 0, 3, 1, 2, 4, 1, 0, 0, 0, 0, 0, 0, 0,
	 {"Sigmoid", "Elu", "Softplus", "LeakyRelu", "Affine", "ThresholdedRelu"},
	 {1.2f, 0.1f, 0.7f, 0.2f}, {0.3f}, 4, 1, 0, 2},
	{GRU, "forward", 0, 5, 2, 3, 16, 1, 0, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{GRU, "forward", 0, 5, 2, 3, 16, 1, 0, 0, 0, 0, 0, 1, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{GRU, "reverse", 1, 7, 3, 5, 33, 1, 1, 1, 0, 0, 0, 0, 0.5f, {NULL}, {0}, {0}, 0, 0, 1, 1},
	{GRU, "bidirectional", 0, 6, 4, 4, 40, 1, 1, 1, 0, 0, 0, 1, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	/* z and r: 160 columns, a block of 128 (AVX-512) and two of 16 */
	{GRU, "bidirectional", 0, 3, 2, 3, 72, 1, 0, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{GRU, "bidirectional", 1, 6, 2, 4, 7, 0, 1, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 1, 2},
	{GRU, "forward", 0, 4, 2, 3, 6, 1, 0, 1, 0, 0, 0, 0, 0, {"Relu", "Tanh"}, {0}, {0}, 0, 0, 0, 1},
	{RNN, "forward", 0, 5, 2, 3, 16, 1, 0, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{RNN, "bidirectional", 1, 6, 3, 4, 19, 1, 1, 1, 0, 0, 0, 0, 0.9f, {NULL}, {0}, {0}, 0, 0, 1, 2},
	{RNN, "reverse", 0, 4, 2, 3, 8, 0, 1, 0, 0, 0, 0, 0, 0, {"Relu"}, {0}, {0}, 0, 0, 0, 1},
	/* batch > 2: each step's H R^T for the whole batch in one packed GEMM
	 * (11 rows: a tile of 8 and a tail of 3; some sequences ended early) */
	{LSTM, "forward", 1, 6, 11, 5, 40, 1, 1, 1, 1, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{LSTM, "forward", 0, 5, 11, 7, 64, 1, 0, 1, 1, 1, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{LSTM, "bidirectional", 0, 5, 9, 4, 24, 1, 1, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{GRU, "forward", 0, 6, 11, 5, 40, 1, 1, 1, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{GRU, "reverse", 1, 6, 5, 5, 48, 1, 1, 1, 0, 0, 0, 1, 0.7f, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{GRU, "bidirectional", 1, 4, 16, 3, 70, 1, 0, 1, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 1},
	{RNN, "forward", 0, 5, 3, 4, 100, 1, 1, 1, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	/* one direction, two threads, R^T of 320K+ floats: each step's product
	 * split over the threads by column panels (one row, two rows) */
	{LSTM, "forward", 0, 4, 1, 3, 300, 1, 0, 1, 1, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{GRU, "reverse", 0, 4, 2, 3, 520, 1, 1, 1, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{GRU, "forward", 1, 3, 1, 3, 600, 1, 0, 0, 0, 0, 0, 1, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	/* ... and the gates of a step's rows split over the threads */
	{LSTM, "forward", 1, 4, 16, 3, 160, 1, 1, 1, 1, 1, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
	{GRU, "reverse", 0, 3, 12, 3, 300, 1, 1, 0, 0, 0, 0, 0, 0, {NULL}, {0}, {0}, 0, 0, 0, 2},
};
/* clang-format on */

static void test_rnn_fast_matches_reference(void)
{
	static const char *const kinds[] = {"RNN", "GRU", "LSTM"};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char label[64];
		snprintf(label, sizeof label, "case %zu (%s %s)", i, kinds[cases[i].kind],
			 cases[i].dir);
		CHECK(run_case(&cases[i], label));
	}
}

TEST_MAIN(TEST(test_rnn_fast_matches_reference))
