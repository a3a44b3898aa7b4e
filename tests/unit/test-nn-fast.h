/*
 * What the packed-kernel tests share (test-nn-fast.c: convolutions and the
 * threads; test-nn-gemm.c: Gemm, MatMul and the row GEMM itself): inputs,
 * the fused activations, the tolerance (test-nn-fast.c's top), running a
 * node on the packed and the reference kernels, and again on N threads.
 */
#ifndef GC_TEST_NN_FAST_H
#define GC_TEST_NN_FAST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fused-act.h"
#include "harness.h"
#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static uint32_t rng_state;

static inline float rnd(void)
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (float)((double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0);
}

static inline float *rnd_buf(int64_t n)
{
	float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
	for (int64_t i = 0; i < n; i++)
		p[i] = rnd();
	return p;
}

static const act_case ACTS[] = {
    {NULL, 0, 0, 0, 0, 0, 0},
    {"Relu", 0, 0, 0, 0, 0, 0},
    {"Clip", 1, 1, 0.0f, 6.0f / 8, 0, 0},
    {"Clip", 1, 0, -0.25f, 0, 0, 0},
    {"LeakyRelu", 0, 0, 0, 0, 0.1f, 0},
    {"Swish", 0, 0, 0, 0, 0, 0},
    {"HardSwish", 0, 0, 0, 0, 0.4f, 0.45f},
};

/* Compares got with want (tolerance from mag, see the top); prints the
 * first difference. */
static inline int close_to(const char *what, const float *got, const double *want, const double *mag,
		    int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		double tol = 1e-5 * mag[i] + 1e-6;
		if (!(fabs((double)got[i] - want[i]) <= tol)) {
			fprintf(stderr, "  %s: element %lld: got %.9g, expected %.9g (tol %.3g)\n",
				what, (long long)i, (double)got[i], want[i], tol);
			return 0;
		}
	}
	return 1;
}

/* When set, Conv's prepare does not see the weights' values (as for weights
 * a node computes): the kernels that pack them at prepare cannot run. */
static int weights_unknown;

static inline int prepare_conv(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	void *w = in[1]->data;
	if (weights_unknown)
		in[1]->data = NULL;
	int rc = gc_prepare_Conv(k, n, in, out);
	in[1]->data = w;
	return rc;
}

/* Runs op once with the packed kernels allowed and once on the reference
 * path; *fast_run / *ref_run get the run functions prepare chose. */
static inline int run_both(gc_prepare_fn prepare, const char *op, int nin, gc_tensor **in, int nattr,
		    gc_attr *attrs, harness_run *fast, harness_run *ref)
{
	if (prepare == gc_prepare_Conv)
		prepare = prepare_conv;
	gc_runtime_init(NULL, NULL);
	int rc = harness_op(fast, prepare, op, 13, nin, in, 1, nattr, attrs);
	if (rc) {
		fprintf(stderr, "  %s (fast) failed: %s\n", op, fast->err.msg);
		return rc;
	}
	gc_runtime_init(&(gc_init_options){ .reference_kernels = 1 }, NULL);
	rc = harness_op(ref, prepare, op, 13, nin, in, 1, nattr, attrs);
	gc_runtime_init(NULL, NULL);
	if (rc)
		fprintf(stderr, "  %s (reference) failed: %s\n", op, ref->err.msg);
	return rc;
}

/* Runs h's node again with `threads` threads into a fresh output. */
static inline int rerun(harness_run *h, gc_tensor **in, int threads, float *y)
{
	gc_tensor out = h->out[0];
	out.data = y;
	gc_tensor *outp[] = {&out};
	gc_kctx k = {.err = &h->err, .node = &h->node, .threads = threads};
	k.scratch = h->node.scratch_bytes ? calloc(1, h->node.scratch_bytes) : NULL;
	int rc = h->node.run(&k, &h->node, in, outp);
	free(k.scratch);
	return rc;
}

#endif
