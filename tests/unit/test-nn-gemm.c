/*
 * Gemm and MatMul on the packed AVX-512 kernels (runtime/kernels/sgemm-pack.h
 * and gemm.c: by constant weights, a few rows, one row) and the row GEMM
 * itself, against plain double-precision loops and the reference path,
 * with each fused activation; split over threads giving one thread's
 * bytes. Inputs and tolerance as in test-nn-fast.c (test-nn-fast.h).
 */
#include <graphcc/runtime.h>

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fused-act.h"
#include "harness.h"
#include "kernels/nn-act.h"
#include "kernels/nn-par.h"
#include "kernels/nn.h"
#include "kernels/sgemm-pack.h"
#include "test-nn-fast.h"

/* ---- Gemm and MatMul ---- */

typedef struct gemm_case {
	int64_t m, n, k;
	int ta, tb;
	float alpha, beta;
	int c_kind; /* 0 none, 1 [N], 2 [M, 1], 3 [M, N], 4 [1] */
	int fast;
} gemm_case;

static int gemm_check(const gemm_case *gc, const act_case *a)
{
	int64_t m = gc->m, n = gc->n, k = gc->k;
	float *A = rnd_buf(m * k), *B = rnd_buf(k * n), *C = rnd_buf(m * n);
	double *want = malloc((size_t)(m * n) * sizeof(double));
	double *mag = malloc((size_t)(m * n) * sizeof(double));
	int64_t cm = gc->c_kind == 2 || gc->c_kind == 3 ? m : 1;
	int64_t cn = gc->c_kind == 1 || gc->c_kind == 3 ? n : 1;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double acc = 0, am = 0;
			for (int64_t p = 0; p < k; p++) {
				double av = gc->ta ? A[p * m + i] : A[i * k + p];
				double bv = gc->tb ? B[j * k + p] : B[p * n + j];
				acc += av * bv;
				am += fabs(av * bv);
			}
			acc *= gc->alpha;
			am *= fabs(gc->alpha);
			if (gc->c_kind) {
				double cv = C[(cm > 1 ? i : 0) * cn + (cn > 1 ? j : 0)];
				acc += gc->beta * cv;
				am += fabs(gc->beta * cv);
			}
			want[i * n + j] = act_apply(a, acc);
			mag[i * n + j] = am;
		}
	int64_t ad[2] = {gc->ta ? k : m, gc->ta ? m : k}, bd[2] = {gc->tb ? n : k, gc->tb ? k : n};
	int64_t cd[2] = {cm, cn};
	gc_tensor tA = harness_tensor(GC_DTYPE_FLOAT, 2, ad, A);
	gc_tensor tB = harness_tensor(GC_DTYPE_FLOAT, 2, bd, B);
	gc_tensor tC = harness_tensor(GC_DTYPE_FLOAT, gc->c_kind == 1 || gc->c_kind == 4 ? 1 : 2,
				      gc->c_kind == 1 ? cd + 1 : cd, C);
	gc_tensor *ins[] = {&tA, &tB, &tC};
	gc_attr attrs[8] = {
	    {.name = "transA", .type = GC_ATTR_INT, .v.i = gc->ta},
	    {.name = "transB", .type = GC_ATTR_INT, .v.i = gc->tb},
	    {.name = "alpha", .type = GC_ATTR_FLOAT, .v.f = gc->alpha},
	    {.name = "beta", .type = GC_ATTR_FLOAT, .v.f = gc->beta},
	};
	int nattr = act_attrs(a, attrs, 4);
	harness_run fast, ref;
	int ok = run_both(gc_prepare_Gemm, "Gemm", gc->c_kind ? 3 : 2, ins, nattr, attrs, &fast,
			  &ref) == 0;
	ok = ok && close_to("fast", fast.out[0].data, want, mag, m * n);
	ok = ok && close_to("reference", ref.out[0].data, want, mag, m * n);
	if (ok && gc->fast && gc_pk_usable() && fast.node.run == ref.node.run) {
		fprintf(stderr, "  the packed kernels did not take this case\n");
		ok = 0;
	}
	if (!ok)
		fprintf(stderr,
			"  gemm case: m %lld n %lld k %lld transA %d transB %d alpha %g beta %g C "
			"%d act %s\n",
			(long long)m, (long long)n, (long long)k, gc->ta, gc->tb, gc->alpha,
			gc->beta, gc->c_kind, a->name ? a->name : "none");
	harness_free(&fast);
	harness_free(&ref);
	free(A);
	free(B);
	free(C);
	free(want);
	free(mag);
	return ok;
}

static void test_fast_gemm(void)
{
	rng_state = 5;
	static const gemm_case cases[] = {
	    {64, 1024, 784, 0, 1, 1, 1, 1, 1},	/* a Linear layer, tail 16 of 48 */
	    {2, 32, 3, 0, 0, 1, 1, 1, 1},	/* smallest taken */
	    {13, 100, 70, 0, 1, 1, 1, 3, 1},	/* every tail */
	    {9, 48, 33, 1, 0, 0.5f, 2, 2, 1},	/* transA, alpha, beta, C [M, 1] */
	    {17, 81, 40, 1, 1, 1, 0.25f, 4, 1}, /* C scalar */
	    {8, 64, 16, 0, 0, -1, 0, 3, 1},	/* beta 0: C unread */
	    {30, 95, 5, 0, 0, 1, 1, 0, 1},	/* no C */
	    /* one row by B [n][k] streamed in place (gemv_run): a last group
	     * of 1 column and a k tail of 5, one column, k without a tail;
	     * by B [k][n]: OpenBLAS */
	    {1, 64, 32, 0, 1, 1, 1, 1, 1},
	    {1, 1001, 37, 0, 1, 0.5f, 2, 1, 1},
	    {1, 1, 50, 1, 1, 1, 1, 3, 1},
	    {1, 33, 16, 1, 1, -1, 0, 2, 1},
	    {1, 67, 331, 1, 0, 1, 1, 4, 0},
	    {40, 10, 64, 0, 1, 1, 1, 1, 0},	/* narrow: OpenBLAS */
	    /* panels of 64 KiB and more: the next one prefetched, over the
	     * first 8 row tiles (here 10, the last of 3 rows) */
	    {75, 110, 401, 0, 1, 1, 1, 1, 1},
	    /* 2-8 rows, B read in place: an odd column last, a k tail */
	    {5, 77, 45, 0, 1, 1, 1, 1, 0},
	    {3, 1001, 37, 0, 0, 0.5f, 1, 3, 0},
	    /* B [n][k] four columns at a time (2-4 rows) and two (5-8): the
	     * last group of 3, 1 and 1 columns, k tails; B [k][n] in vectors of
	     * 64 (2-6 rows) and 48 columns (7, 8): the last vector partial, a
	     * second block of FEW_NB, k longer than the rows prefetched ahead */
	    {2, 67, 21, 0, 1, 1, 1, 1, 0},
	    {4, 1001, 64, 0, 1, 1, 0.5f, 3, 0},
	    {8, 35, 37, 0, 1, 1, 1, 1, 0},
	    {7, 3, 16, 0, 1, 1, 1, 0, 0},
	    {8, 100, 40, 0, 0, 1, 1, 1, 0},
	    {6, 300, 17, 0, 0, 1, 1, 3, 0},
	    {2, 16, 2000, 0, 0, 1, 1, 1, 0},
	};
	for (int i = 0; i < LEN(cases); i++)
		for (int j = 0; j < LEN(ACTS); j++)
			if (!gemm_check(&cases[i], &ACTS[j])) {
				CHECK(0);
			}
}

/* MatMul [b, m, k] x [k, n] with a fused bias and activation. */
static void test_fast_matmul(void)
{
	rng_state = 6;
	static const struct {
		int64_t b, m, n, k;
		int bias;
	} cases[] = {{1, 128, 256, 64, 1}, {3, 5, 70, 9, 1}, {2, 4, 33, 50, 0}, {1, 2, 40, 1, 1},
		     /* large panels (next one prefetched): few row tiles, an LLM's */
		     {2, 9, 100, 517, 1},
		     /* 3 rows, B read in place: 12 blocks, the last partial */
		     {1, 3, 3000, 19, 1}};
	for (int ci = 0; ci < LEN(cases); ci++)
		for (int ai = 0; ai < LEN(ACTS); ai++) {
			int64_t rows = cases[ci].b * cases[ci].m, n = cases[ci].n, k = cases[ci].k;
			float *A = rnd_buf(rows * k), *B = rnd_buf(k * n), *bias = rnd_buf(n);
			double *want = malloc((size_t)(rows * n) * sizeof(double));
			double *mag = malloc((size_t)(rows * n) * sizeof(double));
			for (int64_t i = 0; i < rows; i++)
				for (int64_t j = 0; j < n; j++) {
					double acc = cases[ci].bias ? bias[j] : 0;
					double am = fabs(acc);
					for (int64_t p = 0; p < k; p++) {
						acc += (double)A[i * k + p] * B[p * n + j];
						am += fabs((double)A[i * k + p] * B[p * n + j]);
					}
					want[i * n + j] = act_apply(&ACTS[ai], acc);
					mag[i * n + j] = am;
				}
			gc_tensor tA = harness_tensor(GC_DTYPE_FLOAT, 3,
						      (int64_t[]){cases[ci].b, cases[ci].m, k}, A);
			gc_tensor tB = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){k, n}, B);
			gc_tensor tbias = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){n}, bias);
			gc_tensor *ins[] = {&tA, &tB};
			gc_attr attrs[8] = {
			    {.name = "_gc_bias", .type = GC_ATTR_TENSOR, .v.t = &tbias}};
			int nattr = act_attrs(&ACTS[ai], attrs, cases[ci].bias ? 1 : 0);
			harness_run fast, ref;
			int ok = run_both(gc_prepare_MatMul, "MatMul", 2, ins, nattr,
					  nattr ? attrs : NULL, &fast, &ref) == 0;
			ok = ok && close_to("fast", fast.out[0].data, want, mag, rows * n);
			ok = ok && close_to("reference", ref.out[0].data, want, mag, rows * n);
			if (ok && gc_pk_usable() && fast.node.run == ref.node.run) {
				fprintf(stderr, "  the packed kernels did not take this case\n");
				ok = 0;
			}
			if (!ok)
				fprintf(stderr, "  matmul case %d, act %s\n", ci,
					ACTS[ai].name ? ACTS[ai].name : "none");
			harness_free(&fast);
			harness_free(&ref);
			free(A);
			free(B);
			free(bias);
			free(want);
			free(mag);
			CHECK(ok);
		}
}

/* MatMul [b, m, k] x [k, n] with a fused bias and GELU (_gc_activation
 * "Gelu" or "GeluTanh", lib/pass-matmul-gelu.c) on each kernel path: the
 * packed one split by columns and by rows, a few rows, OpenBLAS (the
 * reference); against libm's erf and tanh in double, and split over 2 and
 * 3 threads giving the one-thread bytes. */
static void test_fast_matmul_gelu(void)
{
	rng_state = 13;
	static const struct {
		int64_t b, m, n, k;
	} cases[] = {{1, 128, 256, 64}, {1, 40, 600, 70}, {3, 5, 70, 9}, {1, 4, 33, 50}};
	for (int ci = 0; ci < LEN(cases); ci++)
		for (int tanh_form = 0; tanh_form < 2; tanh_form++) {
			int64_t rows = cases[ci].b * cases[ci].m, n = cases[ci].n, k = cases[ci].k;
			float *A = rnd_buf(rows * k), *B = rnd_buf(k * n), *bias = rnd_buf(n);
			double *want = malloc((size_t)(rows * n) * sizeof(double));
			double *mag = malloc((size_t)(rows * n) * sizeof(double));
			for (int64_t i = 0; i < rows; i++)
				for (int64_t j = 0; j < n; j++) {
					double x = bias[j], am = fabs(x);
					for (int64_t p = 0; p < k; p++) {
						x += (double)A[i * k + p] * B[p * n + j];
						am += fabs((double)A[i * k + p] * B[p * n + j]);
					}
					want[i * n + j] =
					    tanh_form ? 0.5 * x *
							    (1 + tanh(sqrt(2 / M_PI) *
								      (x + 0.044715 * x * x * x)))
						      : 0.5 * x * (1 + erf(x / sqrt(2)));
					mag[i * n + j] = 1.2 * am;
				}
			gc_tensor tA = harness_tensor(GC_DTYPE_FLOAT, 3,
						      (int64_t[]){cases[ci].b, cases[ci].m, k}, A);
			gc_tensor tB = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){k, n}, B);
			gc_tensor tbias = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){n}, bias);
			gc_tensor *ins[] = {&tA, &tB};
			const char *kind = tanh_form ? "GeluTanh" : "Gelu";
			gc_attr attrs[] = {
			    {.name = "_gc_bias", .type = GC_ATTR_TENSOR, .v.t = &tbias},
			    {.name = "_gc_activation",
			     .type = GC_ATTR_STRING,
			     .n = (int64_t)strlen(kind),
			     .v.s = kind}};
			harness_run fast, ref;
			int ok = run_both(gc_prepare_MatMul, "MatMul", 2, ins, 2, attrs, &fast,
					  &ref) == 0;
			ok = ok && close_to("fast", fast.out[0].data, want, mag, rows * n);
			ok = ok && close_to("reference", ref.out[0].data, want, mag, rows * n);
			float *y2 = malloc((size_t)(rows * n) * sizeof(float)),
			      *y3 = malloc((size_t)(rows * n) * sizeof(float));
			ok = ok && rerun(&fast, ins, 2, y2) == 0 && rerun(&fast, ins, 3, y3) == 0 &&
			     !memcmp(fast.out[0].data, y2, (size_t)(rows * n) * sizeof(float)) &&
			     !memcmp(fast.out[0].data, y3, (size_t)(rows * n) * sizeof(float));
			if (!ok)
				fprintf(stderr, "  matmul case %d, %s\n", ci, kind);
			harness_free(&fast);
			harness_free(&ref);
			free(A);
			free(B);
			free(bias);
			free(want);
			free(mag);
			free(y2);
			free(y3);
			CHECK(ok);
		}
	/* other types and the other kernels refuse it */
	double one = 1;
	gc_tensor dA = harness_tensor(GC_DTYPE_DOUBLE, 2, (int64_t[]){1, 1}, &one);
	gc_tensor *dins[] = {&dA, &dA};
	gc_attr gelu = {.name = "_gc_activation", .type = GC_ATTR_STRING, .n = 4, .v.s = "Gelu"};
	harness_run h;
	CHECK(harness_op(&h, gc_prepare_MatMul, "MatMul", 13, 2, dins, 1, 1, &gelu) != 0);
	CHECK(strstr(h.err.msg, "only float32") != NULL);
	harness_free(&h);
	float f = 1;
	gc_tensor fA = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){1, 1}, &f);
	gc_tensor *fins[] = {&fA, &fA, &fA};
	CHECK(harness_op(&h, gc_prepare_Gemm, "Gemm", 13, 3, fins, 1, 1, &gelu) != 0);
	harness_free(&h);
}

/* Softmax of masked scores (swin_t adds -100 to masked ones): what falls
 * below FLT_MIN is 0, never a denormal (a MatMul by denormal attention
 * weights took 3x the whole model's time), and the rest is e^x / sum. */
static void test_softmax_no_denormals(void)
{
	int64_t rows = 3, len = 70;
	float *x = malloc((size_t)(rows * len) * sizeof(float));
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < len; j++)
			x[r * len + j] = j < 3 ? (float)(j + r) : -(80.0f + (float)(j % 30)) + (float)r;
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){rows, len}, x);
	gc_tensor *ins[] = {&tx};
	harness_run h;
	int ok = harness_op(&h, gc_prepare_Softmax, "Softmax", 13, 1, ins, 1, 0, NULL) == 0;
	const float *y = ok ? h.out[0].data : NULL;
	for (int64_t r = 0; ok && r < rows; r++) {
		double mx = -INFINITY, sum = 0;
		for (int64_t j = 0; j < len; j++)
			mx = fmax(mx, x[r * len + j]);
		for (int64_t j = 0; j < len; j++)
			sum += exp((double)x[r * len + j] - mx);
		for (int64_t j = 0; j < len && ok; j++) {
			double want = exp((double)x[r * len + j] - mx) / sum;
			float got = y[r * len + j];
			if (fpclassify(got) == FP_SUBNORMAL ||
			    !(fabs(got - want) <= 1e-6 * want + (want < FLT_MIN ? FLT_MIN : 0))) {
				fprintf(stderr, "  softmax row %" PRId64 " [%" PRId64 "]: %g, want %g\n",
					r, j, (double)got, want);
				ok = 0;
			}
		}
	}
	harness_free(&h);
	free(x);
	CHECK(ok);
}

/* ---- the kernels themselves ---- */

/* Every epilogue term of the row GEMM's tests: c (n columns) as a bias
 * matrix, r as a residual, alpha 0.75, beta -1.5, LeakyRelu 0.2. */
static void epi_terms(gc_pk_gemm *g, const float *c, const float *r, int64_t n)
{
	gc_nn_act act = {.kind = GC_NN_ACT_LEAKY, .alpha = 0.2};
	gc_pk_epi_init(&g->epi, &act);
	g->epi.c = c;
	g->epi.c_sm = n;
	g->epi.c_sn = 1;
	g->epi.r = r;
	g->epi.r_sm = n;
	g->epi.alpha = 0.75f;
	g->epi.beta = -1.5f;
}

/* What epi_terms make of a product acc (am: the sum of its terms'
 * magnitudes) with bias c and residual r: *want, and *mag for close_to. */
static void epi_want(double acc, double am, float c, float r, double *want, double *mag)
{
	acc = 0.75 * acc - 1.5 * c + r;
	*want = acc < 0 ? acc * (double)0.2f : acc;
	*mag = am + 1.5 * fabs(c) + fabs(r);
}

/* The row GEMM with V read as plain rows (a Conv 1x1's input) and packed,
 * with every epilogue term (bias matrix, fused residual, activation), over
 * a split of its column panels; per shape { m, n, k, ldv }: tails of the
 * 8-row tiles and 48-column panels, and a k long enough that plain V's
 * product takes k in blocks (sgemm-pack.c PK_KC) and S in blocks of rows
 * per K block (PK_S_BLOCK_BYTES, 512 KiB: at k 2100 three K blocks of 700
 * and S in blocks of 184 rows and 116; at k 1800 two of 900, S whole),
 * the sums carried through c from block to block, with the next tile's
 * rows prefetched across blocks and panels. */
static int row_gemm_case(int64_t m, int64_t n, int64_t k, int64_t ldv)
{
	float *s = rnd_buf(m * k), *v = rnd_buf(k * ldv), *c = rnd_buf(m * n), *r = rnd_buf(m * n);
	float *sp = malloc((size_t)gc_pk_s_floats(m, k) * sizeof(float));
	float *vp = malloc((size_t)gc_pk_v_floats(k, n) * sizeof(float));
	float *y1 = malloc((size_t)(m * n) * sizeof(float)),
	      *y2 = malloc((size_t)(m * n) * sizeof(float));
	double *want = malloc((size_t)(m * n) * sizeof(double)),
	       *mag = malloc((size_t)(m * n) * sizeof(double));
	gc_pk_pack_s(s, k, 1, m, k, sp);
	gc_pk_pack_v(v, ldv, 1, k, n, vp);
	gc_pk_gemm g = {.m = m, .n = n, .k = k, .s = sp, .v = v, .ldv = ldv, .c = y1, .ldc = n};
	epi_terms(&g, c, r, n);
	int64_t panels = (n + GC_PK_NR - 1) / GC_PK_NR;
	gc_pk_gemm_run(&g, 0, 1);
	gc_pk_gemm_run(&g, 1, panels);
	g.v = vp;
	g.v_packed = 1;
	g.c = y2;
	gc_pk_gemm_run(&g, 0, panels);
	/* V's columns gathered (a strided 1x1): column j of V is column
	 * ldv - 1 - j of the rows, into a panel buffer of slot 1 */
	int32_t *cols = malloc((size_t)n * sizeof(int32_t));
	float *vbuf = malloc((size_t)(2 * gc_pk_v_floats(k, GC_PK_NR)) * sizeof(float));
	float *y3 = malloc((size_t)(m * n) * sizeof(float));
	for (int64_t j = 0; j < n; j++)
		cols[j] = (int32_t)(ldv - 1 - j);
	g.v = v;
	g.v_packed = 0;
	g.v_cols = cols;
	g.v_buf = vbuf;
	g.c = y3;
	gc_pk_gemm_run_slot(&g, 0, panels, 1);
	int ok = 1;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double acc = 0, am = 0, acc3 = 0, am3 = 0;
			for (int64_t p = 0; p < k; p++) {
				acc += (double)s[i * k + p] * v[p * ldv + j];
				am += fabs((double)s[i * k + p] * v[p * ldv + j]);
				acc3 += (double)s[i * k + p] * v[p * ldv + ldv - 1 - j];
				am3 += fabs((double)s[i * k + p] * v[p * ldv + ldv - 1 - j]);
			}
			epi_want(acc3, am3, c[i * n + j], r[i * n + j], &acc3, &am3);
			/* close_to's bound */
			if (ok && !(fabs(y3[i * n + j] - acc3) <= 1e-5 * am3 + 1e-6)) {
				fprintf(stderr, "  gathered V [%lld][%lld]: %g, want %g\n",
					(long long)i, (long long)j, y3[i * n + j], acc3);
				ok = 0;
			}
			epi_want(acc, am, c[i * n + j], r[i * n + j], &want[i * n + j],
				 &mag[i * n + j]);
		}
	ok = ok && close_to("plain V", y1, want, mag, m * n) &&
	     close_to("packed V", y2, want, mag, m * n);
	if (!ok)
		fprintf(stderr, "  row GEMM m %lld n %lld k %lld ldv %lld\n", (long long)m,
			(long long)n, (long long)k, (long long)ldv);
	free(s);
	free(v);
	free(c);
	free(r);
	free(sp);
	free(vp);
	free(y1);
	free(y2);
	free(y3);
	free(cols);
	free(vbuf);
	free(want);
	free(mag);
	return ok;
}

static void test_fast_row_gemm(void)
{
	if (!gc_pk_usable())
		return;
	rng_state = 7;
	static const int64_t shapes[][4] = {
	    {21, 150, 37, 160}, /* tails of tiles and panels */
	    {75, 100, 1800, 103}, /* k in 2 blocks */
	    {300, 100, 2100, 103}, /* k in 3 blocks, S in blocks of 184 rows and 116 */
	    {8, 49, 1100, 49},	  /* one tile, a panel and one column */
	    /* whole panels (plain loads along V's rows) ending at V's last
	     * float, and a last panel of 2 whole vectors: a tile reading past
	     * the columns it has is out of the buffer (ASan, valgrind) */
	    {9, 96, 300, 96},
	    {17, 80, 70, 80},
	};
	for (size_t i = 0; i < LEN(shapes); i++)
		CHECK(row_gemm_case(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3]));
}

/* The row GEMM reading V's rows in place at v_rows as a convolution's
 * taps do (gc_pk_gemm.v_ow), its panels cut at each output row's end and
 * run on across the rows (v_wrap): row p of V is an image of oh rows of ld
 * floats, of which the output takes the first ow of each. Every epilogue
 * term (a bias matrix and a residual read through the wrapped columns, the
 * activation), panels split over two calls, k in blocks with the sums
 * through c (k above 1024), no gap (ld = ow), one row; nothing written past
 * the output (a canary after it). Against double-precision loops, and
 * both modes the same. */
static int wrap_gemm_case(int64_t m, int64_t oh, int64_t ow, int64_t ld, int64_t k)
{
	int64_t n = oh * ow, plane = oh * ld + 40; /* each row of V, and a gap */
	float *s = rnd_buf(m * k), *v = rnd_buf(k * plane), *c = rnd_buf(m * n),
	      *r = rnd_buf(m * n);
	float *sp = malloc((size_t)gc_pk_s_floats(m, k) * sizeof(float));
	int32_t *rows = malloc((size_t)k * sizeof(int32_t));
	float *y[2];
	double *want = malloc((size_t)(m * n) * sizeof(double)),
	       *mag = malloc((size_t)(m * n) * sizeof(double));
	gc_pk_pack_s(s, k, 1, m, k, sp);
	for (int64_t p = 0; p < k; p++)
		rows[p] = (int32_t)((k - 1 - p) * plane); /* rows in reverse */
	int ok = 1;
	for (int wrap = 0; wrap < 2; wrap++) {
		y[wrap] = malloc((size_t)(m * n + 16) * sizeof(float));
		for (int j = 0; j < 16; j++)
			y[wrap][m * n + j] = 1234.5f;
		gc_pk_gemm g = {.m = m, .n = n, .k = k, .s = sp, .v = v, .v_rows = rows,
				.v_ow = ow, .v_oh_ld = ld, .v_wrap = wrap, .c = y[wrap], .ldc = n};
		epi_terms(&g, c, r, n);
		int64_t panels = gc_pk_gemm_panels(&g);
		gc_pk_gemm_run(&g, 0, 1);
		gc_pk_gemm_run(&g, 1, panels);
		for (int j = 0; j < 16; j++)
			ok = ok && y[wrap][m * n + j] == 1234.5f;
	}
	if (!ok)
		fprintf(stderr, "  written past the output\n");
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double acc = 0, am = 0;
			for (int64_t p = 0; p < k; p++) {
				double t = (double)s[i * k + p] *
					   v[rows[p] + j / ow * ld + j % ow];
				acc += t;
				am += fabs(t);
			}
			epi_want(acc, am, c[i * n + j], r[i * n + j], &want[i * n + j],
				 &mag[i * n + j]);
		}
	ok = ok && close_to("cut at rows", y[0], want, mag, m * n) &&
	     close_to("wrapped", y[1], want, mag, m * n);
	if (!ok)
		fprintf(stderr, "  taps GEMM m %lld oh %lld ow %lld ld %lld k %lld\n", (long long)m,
			(long long)oh, (long long)ow, (long long)ld, (long long)k);
	free(s);
	free(v);
	free(c);
	free(r);
	free(sp);
	free(rows);
	free(y[0]);
	free(y[1]);
	free(want);
	free(mag);
	return ok;
}

static void test_fast_row_gemm_taps(void)
{
	if (!gc_pk_usable())
		return;
	rng_state = 11;
	static const int64_t shapes[][5] = {
	    /* m, oh, ow, ld, k */
	    {21, 5, 17, 19, 37},  /* tails of tiles, vectors across rows */
	    {8, 3, 147, 149, 60}, /* inception's rows */
	    {13, 4, 16, 31, 1100}, /* k in 2 blocks; gaps of 15 */
	    {9, 1, 50, 52, 20},	  /* one row */
	    {16, 7, 33, 33, 64},  /* no gap */
	};
	for (size_t i = 0; i < LEN(shapes); i++)
		CHECK(wrap_gemm_case(shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3],
				     shapes[i][4]));
}

/* S packing, rows of a (any row stride, the 8 x 8 register transposes and
 * their tails): S[i][p] at panel i / 8, offset p * 8 + i % 8, rows past m
 * zero. Runs wherever the CPU is (the packing has a plain path too). */
static void test_fast_pack_s(void)
{
	static const int64_t shapes[][3] = {/* m, k, rs */
					    {8, 8, 8},	  {16, 64, 70}, {21, 37, 37},
					    {9, 3, 5},	  {40, 17, 40}, {8, 2048, 2048}};
	rng_state = 12;
	for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
		int64_t m = shapes[c][0], k = shapes[c][1], rs = shapes[c][2];
		float *a = rnd_buf(m * rs);
		int64_t nf = gc_pk_s_floats(m, k);
		float *sp = malloc((size_t)nf * sizeof(float));
		for (int64_t i = 0; i < nf; i++)
			sp[i] = NAN;
		gc_pk_pack_s(a, rs, 1, m, k, sp);
		int ok = 1;
		for (int64_t i = 0; i < (m + 7) / 8 * 8 && ok; i++)
			for (int64_t p = 0; p < k && ok; p++) {
				float got = sp[i / 8 * 8 * k + p * 8 + i % 8];
				float want = i < m ? a[i * rs + p] : 0.0f;
				if (!(got == want)) {
					fprintf(stderr, "  pack_s m=%" PRId64 " k=%" PRId64
							" rs=%" PRId64 ": S[%" PRId64 "][%" PRId64
							"] = %g, want %g\n",
						m, k, rs, i, p, got, want);
					ok = 0;
				}
			}
		free(a);
		free(sp);
		CHECK(ok);
	}
}

/* A packed product split by B's column panels (a Linear layer of a batch:
 * m < n): one contiguous run of panels a thread, as even in cost as whole
 * panels allow (the last, partial panel costs its 16-column vectors), and
 * A packed by the threads when it is large; the bytes of one thread at 2
 * and 3, and sampled outputs within 1e-5 of a double-precision sum. */
static int64_t cols_cost(int64_t n, int64_t p0, int64_t p1)
{
	int64_t c = 0;
	for (int64_t p = p0; p < p1; p++)
		c += p * GC_PK_NR + GC_PK_NR <= n ? 3 : (n - p * GC_PK_NR + 15) / 16;
	return c;
}

static void test_fast_gemm_cols(void)
{
	/* the split: n = 1024 at 2 parts is 11 + 10 1/3 panels (33 + 31
	 * vectors), not 8 parts of 2-3 panels; every part within a panel of
	 * its share */
	CHECK(gc_nn_pk_cols_start(1024, 1, 2) == 11 && gc_nn_pk_cols_start(1024, 2, 2) == 22);
	static const int64_t ns[] = {1024, 976, 1000, 48, 64, 200, 4096, 3001};
	for (int ni = 0; ni < LEN(ns); ni++)
		for (int parts = 2; parts <= 5; parts++) {
			int64_t n = ns[ni], panels = (n + GC_PK_NR - 1) / GC_PK_NR;
			int64_t total = cols_cost(n, 0, panels), prev = 0, worst = 0;
			for (int q = 1; q <= parts; q++) {
				int64_t s = gc_nn_pk_cols_start(n, q, parts);
				int64_t c = cols_cost(n, prev, s);
				int64_t d = c * parts - total;
				worst = d < 0 ? (-d > worst ? -d : worst) : (d > worst ? d : worst);
				CHECK(s >= prev);
				prev = s;
			}
			CHECK(prev == panels && gc_nn_pk_cols_start(n, 0, parts) == 0);
			/* each part within a panel (3 vectors) of its share */
			if (worst > 3 * parts)
				fprintf(stderr, "  n %lld in %d parts: %lld vectors off\n",
					(long long)n, parts, (long long)(worst / parts));
			CHECK(worst <= 3 * parts);
		}
	rng_state = 19;
	int64_t m = 96, n = 976, kk = 840; /* 21 panels, the last 16 wide */
	float *A = rnd_buf(m * kk), *B = rnd_buf(n * kk), *C = rnd_buf(n);
	gc_tensor tA = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){m, kk}, A);
	gc_tensor tB = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){n, kk}, B);
	gc_tensor tC = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){n}, C);
	gc_tensor *ins[] = {&tA, &tB, &tC};
	gc_attr attrs[] = {{.name = "transB", .type = GC_ATTR_INT, .v.i = 1},
			   {.name = "_gc_activation", .type = GC_ATTR_STRING, .n = 4, .v.s = "Relu"}};
	harness_run h;
	gc_runtime_init(NULL, NULL);
	int rc = harness_op(&h, gc_prepare_Gemm, "Gemm", 13, 3, ins, 1, LEN(attrs), attrs);
	float *y2 = malloc((size_t)(m * n) * sizeof(float)),
	      *y3 = malloc((size_t)(m * n) * sizeof(float));
	uint64_t jobs = gc_nn_par_jobs();
	int ok = rc == 0 && rerun(&h, ins, 2, y2) == 0;
	/* 96 x 840 floats of A are worth packing on 2 threads: 2 jobs */
	uint64_t used = gc_nn_par_jobs() - jobs;
	ok = ok && rerun(&h, ins, 3, y3) == 0 &&
	     !memcmp(h.out[0].data, y2, (size_t)(m * n) * sizeof(float)) &&
	     !memcmp(h.out[0].data, y3, (size_t)(m * n) * sizeof(float));
	for (int64_t e = 0; ok && e < m * n; e += 13) {
		int64_t i = e / n, j = e % n;
		double acc = C[j], mag = fabs(C[j]);
		for (int64_t p = 0; p < kk; p++) {
			acc += (double)A[i * kk + p] * B[j * kk + p];
			mag += fabs((double)A[i * kk + p] * B[j * kk + p]);
		}
		acc = acc > 0 ? acc : 0;
		ok = close_to("3 threads", y3 + e, &acc, &mag, 1);
	}
	if (!ok || (gc_pk_usable() && used != 2))
		fprintf(stderr, "  gemm split by columns: %s (%llu jobs at 2 threads)\n",
			rc ? h.err.msg : ok ? "A not packed by the threads" : "differs",
			(unsigned long long)used);
	CHECK(ok && (!gc_pk_usable() || used == 2));
	harness_free(&h);
	free(A);
	free(B);
	free(C);
	free(y2);
	free(y3);
}

TEST_MAIN(TEST(test_fast_gemm), TEST(test_fast_matmul), TEST(test_fast_matmul_gelu),
	  TEST(test_softmax_no_denormals), TEST(test_fast_row_gemm), TEST(test_fast_row_gemm_taps), TEST(test_fast_pack_s),
	  TEST(test_fast_gemm_cols))
