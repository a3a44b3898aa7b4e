/*
 * kernel-time: the on-CPU time of one float convolution kernel, called
 * directly (no session, no pool: one thread), the fastest of several runs.
 *
 *   kernel-time conv C M HW K S [RUNS] [FLUSH_MB]   the channel-vector kernel
 *                                                   (gc_pk_conv_run): C -> M
 *                                                   channels, HW x HW input,
 *                                                   K x K window, stride S,
 *                                                   pads K / 2
 *   kernel-time row C M HW [RUNS] [FLUSH_MB]        the row GEMM of a 1x1
 *                                                   stride-1 convolution
 *                                                   (gc_pk_gemm_par)
 *   kernel-time dw C HW K S [RUNS] [FLUSH_MB]       the depthwise kernel
 *                                                   gc_pk_dw_run picks (C
 *                                                   channels, one thread)
 *
 * Prints ms and GFLOP/s of the fastest run, and the median run's ms. Time
 * is the thread's CPU clock, so another process taking the core does not
 * count (on this shared machine wall-time minima of a whole model moved by
 * 20-40 % between runs of the same build; these stay within 1-2 %, when the
 * machine's speed itself does not change: run old and new builds
 * alternately). FLUSH_MB: read that many MiB between runs,
 * so that weights, input and output start out of cache as in a large model.
 * Build: make (it is $(B)/bench/kernel-time); link it against another
 * build's libraries to compare kernels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../runtime/kernels/sgemm-pack.h"

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static float *floats(int64_t n)
{
	float *p = aligned_alloc(64, (size_t)((n * 4 + 63) / 64 * 64));
	if (!p) {
		fprintf(stderr, "kernel-time: out of memory\n");
		exit(1);
	}
	for (int64_t i = 0; i < n; i++)
		p[i] = (float)((i * 7919) % 13 - 6) / 13.0f;
	return p;
}

typedef struct job {
	int row, dw;
	gc_pk_dw d;
	float *w;
	gc_pk_conv cv;
	gc_pk_gemm g;
	float *x, *bias, *y, *scratch;
} job;

static void run(job *j)
{
	if (j->dw)
		gc_pk_dw_run(&j->d, j->x, j->w, j->bias, j->y, j->scratch, 1);
	else if (j->row)
		gc_pk_gemm_par(&j->g, 1);
	else
		gc_pk_conv_run(&j->cv, j->x, j->bias, NULL, j->y, j->scratch, 1);
}

int main(int argc, char **argv)
{
	int row = argc > 1 && !strcmp(argv[1], "row"), dw = argc > 1 && !strcmp(argv[1], "dw");
	int nargs = row ? 5 : dw ? 6 : 7;
	if (argc < nargs || (!row && !dw && strcmp(argv[1], "conv"))) {
		fprintf(stderr, "usage: kernel-time conv C M HW K S [RUNS] [FLUSH_MB]\n"
				"       kernel-time row C M HW [RUNS] [FLUSH_MB]\n"
				"       kernel-time dw C HW K S [RUNS] [FLUSH_MB]\n");
		return 2;
	}
	if (!gc_pk_usable()) {
		fprintf(stderr, "kernel-time: this CPU lacks the packed kernels (AVX-512)\n");
		return 2;
	}
	int a = dw ? 3 : 4; /* HW's argument */
	int64_t c = atoll(argv[2]), m = dw ? c : atoll(argv[3]), hw = atoll(argv[a]);
	int64_t k = row ? 1 : atoll(argv[a + 1]), s = row ? 1 : atoll(argv[a + 2]);
	int runs = argc > nargs ? atoi(argv[nargs]) : 20;
	size_t flush = argc > nargs + 1 ? (size_t)atoll(argv[nargs + 1]) << 20 : 0;
	/* kk: the weights of an output channel (a depthwise one: one tap each) */
	int64_t pad = k / 2, o = (hw + 2 * pad - k) / s + 1, kk = (dw ? 1 : c) * k * k;
	if (c <= 0 || m <= 0 || hw <= 0 || k <= 0 || s <= 0 || o <= 0 || runs <= 0) {
		fprintf(stderr, "kernel-time: bad shape\n");
		return 2;
	}
	job j = {.row = row, .dw = dw};
	float *w = floats(m * kk);
	j.x = floats(c * hw * hw);
	j.y = floats(m * o * o);
	j.bias = floats(m);
	gc_nn_act none = {.kind = GC_NN_ACT_NONE};
	/* the window of conv and dw */
	int64_t in[3] = {1, hw, hw}, win[3] = {1, k, k}, st[3] = {1, s, s};
	int64_t dil[3] = {1, 1, 1}, lo[3] = {0, pad, pad}, out[3] = {1, o, o};
	if (dw) {
		if (gc_pk_dw_plan(&j.d, 1, c, 1, in, win, st, dil, lo, out, &none)) {
			fprintf(stderr, "kernel-time: the depthwise kernels do not take this\n");
			return 2;
		}
		if (gc_pk_dw_pack(&j.d, w)) {
			fprintf(stderr, "kernel-time: out of memory\n");
			return 2;
		}
		j.w = w;
		j.scratch = floats(gc_pk_dw_scratch(&j.d) + 16);
	} else if (row) {
		float *sp = floats(gc_pk_s_floats(m, c));
		gc_pk_pack_s(w, c, 1, m, c, sp);
		j.g = (gc_pk_gemm){.m = m, .n = hw * hw, .k = c, .ldv = hw * hw, .ldc = hw * hw,
				   .s = sp, .v = j.x, .c = j.y};
		gc_pk_epi_init(&j.g.epi, &none);
		j.g.epi.c = j.bias;
		j.g.epi.c_sm = 1;
	} else {
		if (gc_pk_conv_plan(&j.cv, 1, c, m, 1, in, win, st, dil, lo, out, &none,
				    INT64_MAX)) {
			fprintf(stderr, "kernel-time: the channel-vector kernel does not take this\n");
			return 2;
		}
		float *pw = floats(gc_pk_conv_floats(m, kk));
		gc_pk_conv_pack(w, 1, m, kk, k, k, pw);
		j.cv.w = pw;
		j.scratch = floats(gc_pk_conv_scratch(&j.cv) + 16);
	}
	volatile float *junk = flush ? calloc(flush / 4, 4) : NULL;
	double best = 1e30, *times = calloc((size_t)runs, sizeof *times);
	if (!times) {
		fprintf(stderr, "kernel-time: out of memory\n");
		return 2;
	}
	run(&j); /* warm-up */
	for (int r = 0; r < runs; r++) {
		if (junk) {
			float acc = 0;
			for (size_t i = 0; i < flush / 4; i += 16)
				acc += junk[i];
			junk[0] = acc;
		}
		double t = cpu_ms();
		run(&j);
		t = cpu_ms() - t;
		best = t < best ? t : best;
		times[r] = t;
	}
	qsort(times, (size_t)runs, sizeof *times, by_value);
	printf("%s %lldx%lld s%lld %lld->%lld -> %lldx%lld: %.4f ms %.0f GFLOP/s (median %.4f)\n",
	       row ? "row" : dw ? "dw" : "conv", (long long)k, (long long)k, (long long)s, (long long)c,
	       (long long)m, (long long)o, (long long)o, best,
	       2.0 * (double)(m * o * o * kk) / best / 1e6, times[runs / 2]);
	free(times);
	return 0;
}
