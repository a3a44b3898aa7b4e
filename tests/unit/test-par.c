/*
 * Every kernel that splits its work over the nn-par pool gives, at 2, 3
 * and 4 threads, the bytes it gives at 1 thread, and does split (the pool's
 * job counter moves): MatMul of every shape (4-D attention products with
 * many and with few heads, a folded batch, 2-D by a constant B on the
 * packed kernel and on OpenBLAS), Gemm (matrix-vector, packed), ConvTranspose
 * (its product on OpenBLAS), Conv on the channel kernel (one job with its
 * padded copy, guided parts: nn-split.h), element-wise
 * and broadcast binary ops, DynamicQuantizeLinear, reductions, pooling (row
 * path, window loops,
 * global), Instance- and GroupNormalization, Resize, Transpose, Slice and
 * Concat. Each split computes every
 * output element as one thread does (whole rows or columns of a GEMM, of a
 * reduction's kept axis, of a copy), so the results are bit-identical --
 * except where a block of a product goes to OpenBLAS: OpenBLAS picks its
 * kernel (and so its order of additions) by the size of each call, so a
 * 300-row product cut into blocks of 16 rows can round differently from the
 * whole (it does, at 3 threads, on this machine's SkylakeX kernels). Those
 * cases are checked against the float64 reference at every thread count
 * with the tolerance below instead of bit for bit.
 *
 * The 1-thread results are also checked against plain loops written here
 * (double precision for sums: |error| <= 1e-5 of the sum of the absolute
 * values of the terms, plus 1e-6; exact for copies, maxima, Add).
 */
#include <graphcc/runtime.h>

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/nn-par.h"
#include "kernels/nn-split.h"
#include "kernels/sgemm-pack.h"

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static uint32_t rng_state = 1;

static float *rnd_buf(int64_t n)
{
	float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
	for (int64_t i = 0; i < n; i++) {
		rng_state = rng_state * 1664525u + 1013904223u;
		p[i] = (float)((double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0);
	}
	return p;
}

/*
 * Runs the prepared node of h again with 2, 3 and 4 threads into fresh
 * outputs and checks each output's bytes against the 1-thread run's, and
 * that the node handed work to the pool. `what` names the case.
 */
static int near_all(const float *got, const double *want, const double *scale, int64_t n,
		    const char *what);

/* want/scale non-NULL: each thread count's output 0 is checked against
 * them (near_all) instead of against the 1-thread bytes. */
static void check_threads_ref(harness_run *h, gc_tensor **in, const char *what,
			      const double *want, const double *scale)
{
	for (int t = 2; t <= 4; t++) {
		gc_tensor outs[8], *outp[8];
		int n_out = h->node.n_out;
		for (int i = 0; i < n_out; i++) {
			outs[i] = h->out[i];
			outs[i].data = calloc(1, (size_t)gc_tensor_nbytes(&h->out[i]) + 1);
			outp[i] = &outs[i];
		}
		gc_kctx k = {.err = &h->err, .node = &h->node, .threads = t, .strings = h->strings};
		k.scratch = h->node.scratch_bytes ? calloc(1, h->node.scratch_bytes) : NULL;
		uint64_t jobs = gc_nn_par_jobs();
		int rc = h->node.run(&k, &h->node, in, outp);
		int split = gc_nn_par_jobs() > jobs;
		int same = rc == 0;
		if (same && want)
			same = near_all(outs[0].data, want, scale, gc_tensor_numel(&h->out[0]),
					what);
		for (int i = 0; same && !want && i < n_out; i++)
			same = !memcmp(outs[i].data, h->out[i].data,
				       (size_t)gc_tensor_nbytes(&h->out[i]));
		if (!same || !split)
			fprintf(stderr, "  %s, %d threads: %s\n", what, t,
				rc	? h->err.msg
				: !same ? (want ? "out of tolerance" : "differs from 1 thread")
					: "did not split");
		CHECK(same);
		CHECK(split);
		free(k.scratch);
		for (int i = 0; i < n_out; i++)
			free(outs[i].data);
	}
}

static void check_threads(harness_run *h, gc_tensor **in, const char *what)
{
	check_threads_ref(h, in, what, NULL, NULL);
}

/* |got - want| <= 1e-5 * scale + 1e-6 for every element. */
static int near_all(const float *got, const double *want, const double *scale, int64_t n,
		    const char *what)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabs(got[i] - want[i]) <= 1e-5 * scale[i] + 1e-6)) {
			fprintf(stderr, "  %s: element %lld is %.9g, want %.9g\n", what,
				(long long)i, got[i], want[i]);
			return 0;
		}
	return 1;
}

/* ---- MatMul, Gemm ---- */

/* want[b][i][j] = sum_p A[b % ba][i][p] B[b % bb][p][j] for batch b. */
static void matmul_ref(const float *a, const float *b, int64_t batch, int64_t ba, int64_t bb,
		       int64_t m, int64_t n, int64_t k, double *want, double *scale)
{
	for (int64_t q = 0; q < batch; q++)
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				double s = 0, sa = 0;
				for (int64_t p = 0; p < k; p++) {
					double v = (double)a[(q % ba * m + i) * k + p] *
						   b[(q % bb * k + p) * n + j];
					s += v;
					sa += fabs(v);
				}
				want[(q * m + i) * n + j] = s;
				scale[(q * m + i) * n + j] = sa;
			}
}

typedef struct mm_case {
	const char *what;
	int32_t ra, rb;
	int64_t da[4], db[4];
	int reference; /* GRAPHCC_NN_REFERENCE=1: OpenBLAS instead of the packed kernel */
	int blas_split; /* blocks of one product on OpenBLAS: checked with the tolerance */
} mm_case;

static void test_matmul_threads(void)
{
	static const mm_case cases[] = {
	    {"attention, 8 heads", 4, 4, {2, 4, 128, 64}, {2, 4, 64, 128}, 0, 0},
	    {"attention, 2 heads", 4, 4, {1, 2, 256, 64}, {1, 2, 64, 256}, 0, 1},
	    {"heads by one B", 4, 2, {1, 2, 200, 64}, {64, 96}, 1, 1},
	    {"folded batch, 3-D B", 3, 3, {4, 128, 96}, {1, 96, 80}, 0, 1},
	    {"2-D, constant B (packed)", 2, 2, {300, 256}, {256, 200}, 0, 0},
	    {"2-D on OpenBLAS", 2, 2, {300, 256}, {256, 200}, 1, 1},
	    {"one row", 2, 2, {1, 2048}, {2048, 512}, 1, 1},
	    {"four rows, B read in place", 2, 2, {4, 2048}, {2048, 600}, 0, 0},
	    {"two heads of three rows by one B", 3, 2, {2, 3, 1024}, {1024, 1000}, 0, 0},
	};
	for (int ci = 0; ci < LEN(cases); ci++) {
		const mm_case *c = &cases[ci];
		int64_t na = 1, nb = 1;
		for (int i = 0; i < c->ra; i++)
			na *= c->da[i];
		for (int i = 0; i < c->rb; i++)
			nb *= c->db[i];
		int64_t m = c->da[c->ra - 2], k = c->da[c->ra - 1], n = c->db[c->rb - 1];
		int64_t ba = na / (m * k), bb = nb / (k * n), batch = ba > bb ? ba : bb;
		float *a = rnd_buf(na), *b = rnd_buf(nb);
		gc_tensor ta = harness_tensor(GC_DTYPE_FLOAT, c->ra, c->da, a);
		gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, c->rb, c->db, b);
		gc_tensor *ins[] = {&ta, &tb};
		if (c->reference)
			setenv("GRAPHCC_NN_REFERENCE", "1", 1);
		harness_run h;
		int rc = harness_op(&h, gc_prepare_MatMul, "MatMul", 13, 2, ins, 1, 0, NULL);
		unsetenv("GRAPHCC_NN_REFERENCE");
		if (rc)
			fprintf(stderr, "  %s: %s\n", c->what, h.err.msg);
		CHECK_INT(rc, 0);
		if (!rc) {
			double *want = malloc((size_t)(batch * m * n) * sizeof(double));
			double *scale = malloc((size_t)(batch * m * n) * sizeof(double));
			matmul_ref(a, b, batch, ba, bb, m, n, k, want, scale);
			CHECK(near_all(h.out[0].data, want, scale, batch * m * n, c->what));
			/* without graphcc's own kernels (no AVX-512), OpenBLAS takes all */
			int blas = c->blas_split || !gc_pk_usable();
			check_threads_ref(&h, ins, c->what, blas ? want : NULL, scale);
			free(want);
			free(scale);
		}
		harness_free(&h);
		free(a);
		free(b);
	}
}

static void test_gemm_threads(void)
{
	/* y = A B^T + C: a matrix-vector product (one row, OpenBLAS's gemv
	 * split by columns: checked with the tolerance) and a packed product
	 * by constant weights (bit for bit) */
	static const struct {
		const char *what;
		int64_t m, n, k;
	} cases[] = {{"Gemm, one row", 1, 1024, 2048},
		     {"Gemm, packed", 256, 384, 512},
		     {"Gemm, five rows, B read in place", 5, 700, 1500}};
	for (int ci = 0; ci < LEN(cases); ci++) {
		int64_t m = cases[ci].m, n = cases[ci].n, k = cases[ci].k;
		float *a = rnd_buf(m * k), *bt = rnd_buf(n * k), *cv = rnd_buf(n);
		gc_tensor ta = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){m, k}, a);
		gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){n, k}, bt);
		gc_tensor tc = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){n}, cv);
		gc_tensor *ins[] = {&ta, &tb, &tc};
		gc_attr attrs[] = {{.name = "transB", .type = GC_ATTR_INT, .v.i = 1}};
		harness_run h;
		int rc = harness_op(&h, gc_prepare_Gemm, "Gemm", 13, 3, ins, 1, 1, attrs);
		CHECK_INT(rc, 0);
		if (!rc) {
			double *want = malloc((size_t)(m * n) * sizeof(double));
			double *scale = malloc((size_t)(m * n) * sizeof(double));
			for (int64_t i = 0; i < m; i++)
				for (int64_t j = 0; j < n; j++) {
					double s = cv[j], sa = fabs(cv[j]);
					for (int64_t p = 0; p < k; p++) {
						double v = (double)a[i * k + p] * bt[j * k + p];
						s += v;
						sa += fabs(v);
					}
					want[i * n + j] = s;
					scale[i * n + j] = sa;
				}
			CHECK(near_all(h.out[0].data, want, scale, m * n, cases[ci].what));
			int blas = m == 1 || !gc_pk_usable();
			check_threads_ref(&h, ins, cases[ci].what, blas ? want : NULL, scale);
			free(want);
			free(scale);
		}
		harness_free(&h);
		free(a);
		free(bt);
		free(cv);
	}
}

/* ConvTranspose (U-Net's up-sampling): its product on OpenBLAS, split */
static void test_convtranspose_threads(void)
{
	const int64_t C = 128, M = 64, H = 32, W = 32, OH = 64, OW = 64;
	float *x = rnd_buf(C * H * W), *w = rnd_buf(C * M * 4), *bias = rnd_buf(M);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, C, H, W}, x);
	gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){C, M, 2, 2}, w);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){M}, bias);
	gc_tensor *ins[] = {&tx, &tw, &tb};
	gc_attr attrs[] = {
	    {.name = "strides", .type = GC_ATTR_INTS, .n = 2, .v.ints = (int64_t[]){2, 2}}};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_ConvTranspose, "ConvTranspose", 11, 3, ins, 1, 1, attrs);
	CHECK_INT(rc, 0);
	if (!rc) {
		/* stride 2, kernel 2: output (oh, ow) has one tap per channel */
		int64_t ny = M * OH * OW;
		double *want = malloc((size_t)ny * sizeof(double));
		double *scale = malloc((size_t)ny * sizeof(double));
		for (int64_t m = 0; m < M; m++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					double s = bias[m], sa = fabs(bias[m]);
					for (int64_t c = 0; c < C; c++) {
						double v = (double)x[(c * H + oh / 2) * W + ow / 2] *
							   w[((c * M + m) * 2 + oh % 2) * 2 + ow % 2];
						s += v;
						sa += fabs(v);
					}
					want[(m * OH + oh) * OW + ow] = s;
					scale[(m * OH + oh) * OW + ow] = sa;
				}
		CHECK(near_all(h.out[0].data, want, scale, ny, "ConvTranspose"));
		check_threads_ref(&h, ins, "ConvTranspose", want, scale);
		free(want);
		free(scale);
	}
	harness_free(&h);
	free(x);
	free(w);
	free(bias);
}

/* ---- Conv (the channel kernel) ---- */

/* One run of h's node at `threads` threads into a fresh output: the pool
 * jobs it made, or -1 when it failed. */
static int run_jobs(harness_run *h, gc_tensor **in, int threads)
{
	gc_tensor out = h->out[0], *outp[1] = {&out};
	out.data = calloc(1, (size_t)gc_tensor_nbytes(&h->out[0]) + 1);
	gc_kctx k = {.err = &h->err, .node = &h->node, .threads = threads, .strings = h->strings};
	k.scratch = h->node.scratch_bytes ? calloc(1, h->node.scratch_bytes) : NULL;
	uint64_t jobs = gc_nn_par_jobs();
	int rc = h->node.run(&k, &h->node, in, outp);
	jobs = gc_nn_par_jobs() - jobs;
	free(k.scratch);
	free(out.data);
	return rc ? -1 : (int)jobs;
}

/*
 * Convolutions on the packed kernels. On the channel kernel (conv-direct.c):
 * padded ones over a large image (the padded copy used to be a pool job of
 * its own, then the convolution another), over 14x14 and 7x7 (the copy was
 * too small to split and ran on the caller alone), rows paired in one tile
 * (7x7, 5x5: no part boundary between them), a strided one, the 7x7 stem of
 * 3 channels (fewer channels to copy than parts), a fused residual. And 1x1s
 * on the row GEMM or the channel kernel (7x7 outputs: a column panel of 48
 * pixels and one of 1, so the output channels are cut into blocks too,
 * strided ones gathered, with a residual). K deeper than the channel
 * kernel's K block, with a residual. The row GEMM over taps, its panels
 * across the rows. Each is checked against
 * double-precision loops (|error| <= 1e-5 of the sum of |terms|, plus
 * 1e-6), gives the 1-thread bytes at 2, 3 and 4 threads, and is exactly one
 * pool job at 2 threads.
 */
static void test_conv_jobs(void)
{
	static const struct {
		int64_t c, m, hw, k, s;
		int res; /* a fused residual (input 3) */
		int64_t g; /* groups */
	} cases[] = {{32, 64, 56, 3, 1, 0, 1},     {256, 64, 14, 3, 1, 1, 1},
		     {128, 96, 7, 3, 1, 0, 1},     {512, 96, 5, 3, 1, 1, 1},
		     {64, 128, 28, 3, 2, 0, 1},    {3, 64, 64, 7, 2, 0, 1},
		     {256, 80, 14, 1, 1, 1, 1},    {256, 512, 14, 1, 2, 1, 1},
		     {128, 512, 7, 1, 1, 0, 1},    {64, 256, 28, 1, 1, 0, 1},
		     /* grouped, the padded copy made by the parts in blocks of
		      * groups: regnet's g25 and g10; 80 (more groups than
		      * blocks: blocks of 1 or 2 groups); 3 (blocks of channels,
		      * groups fewer than 2 a thread); 5 (groups at 2 threads,
		      * channels at 3 and 4) */
		     {400, 400, 7, 3, 1, 0, 25},   {160, 160, 14, 3, 1, 1, 10},
		     {1280, 1280, 5, 3, 1, 0, 80}, {96, 96, 29, 3, 2, 0, 3},
		     {80, 80, 20, 3, 1, 0, 5},
		     /* k deeper than the channel kernel's K block (1024 steps),
		      * with a residual: 10 blocks of 990, groups (3 blocks of
		      * 900 each), 48 tiles (3 groups of tiles, the sums of each
		      * carried from block to block) */
		     {1100, 40, 6, 3, 1, 1, 1},
		     {600, 64, 10, 3, 1, 1, 2},
		     {150, 48, 24, 3, 1, 1, 1},
		     /* the row GEMM's panels across the rows (conv.c's
		      * tap_wrap), the padded rows copied by the parts as they
		      * go, with a residual */
		     {8, 16, 40, 3, 1, 1, 1},
		     {8, 24, 33, 5, 1, 1, 1},
		     /* read in place, the edge columns' windows copied by the
		      * parts as they go (by groups), with a residual */
		     {32, 48, 64, 3, 2, 1, 2},
		     {16, 40, 100, 3, 1, 1, 1},
		     /* depthwise (marked _gc_split_rows, as lib/pass-split.c
		      * marks one that a 1x1 alone reads), 1.2 MB and more of
		      * input: the row kernel's planes in bands of rows, a band
		      * a thread (conv-dw.c's dw_row_bands); 3x3 at stride 1 and
		      * 2, 5x5 */
		     {24, 24, 112, 3, 1, 0, 24},
		     {32, 32, 112, 3, 2, 0, 32},
		     {40, 40, 90, 5, 2, 0, 40}};
	if (!gc_pk_usable())
		return; /* the channel kernel needs AVX-512 */
	for (int i = 0; i < LEN(cases); i++) {
		int64_t C = cases[i].c, M = cases[i].m, S = cases[i].hw, K = cases[i].k;
		int64_t st = cases[i].s, P = K / 2, O = (S + 2 * P - K) / st + 1;
		int64_t G = cases[i].g, CG = C / G;
		float *x = rnd_buf(C * S * S), *w = rnd_buf(M * CG * K * K), *bias = rnd_buf(M);
		float *z = rnd_buf(M * O * O);
		gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, C, S, S}, x);
		gc_tensor tw = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){M, CG, K, K}, w);
		gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){M}, bias);
		gc_tensor tz = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, M, O, O}, z);
		gc_tensor *ins[] = {&tx, &tw, &tb, &tz};
		int64_t pads[4] = {P, P, P, P}, strides[2] = {st, st};
		gc_attr attrs[5] = {{.name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = pads},
				    {.name = "strides", .type = GC_ATTR_INTS, .n = 2, .v.ints = strides},
				    {.name = "group", .type = GC_ATTR_INT, .v.i = G}};
		int res = cases[i].res, na = 3;
		if (res)
			attrs[na++] = (gc_attr){.name = "_gc_residual", .type = GC_ATTR_INT, .v.i = 1};
		if (G == C && G == M)
			attrs[na++] = (gc_attr){.name = "_gc_split_rows", .type = GC_ATTR_INT, .v.i = 1};
		harness_run h;
		int rc = harness_op(&h, gc_prepare_Conv, "Conv", 11, 3 + res, ins, 1, na, attrs);
		CHECK_INT(rc, 0);
		int64_t ny = M * O * O;
		double *want = malloc((size_t)ny * sizeof(double));
		double *scale = malloc((size_t)ny * sizeof(double));
		for (int64_t m = 0; m < M; m++)
			for (int64_t oh = 0; oh < O; oh++)
				for (int64_t ow = 0; ow < O; ow++) {
					int64_t o = (m * O + oh) * O + ow;
					double sum = bias[m] + (res ? z[o] : 0);
					double sa = fabs(bias[m]) + (res ? fabs(z[o]) : 0);
					for (int64_t c = m / (M / G) * CG; c < (m / (M / G) + 1) * CG; c++)
						for (int64_t a = 0; a < K; a++)
							for (int64_t b = 0; b < K; b++) {
								int64_t ih = oh * st + a - P;
								int64_t iw = ow * st + b - P;
								if (ih < 0 || ih >= S || iw < 0 || iw >= S)
									continue;
								double v = (double)x[(c * S + ih) * S + iw] *
									   w[((m * CG + c % CG) * K + a) * K + b];
								sum += v;
								sa += fabs(v);
							}
					want[o] = sum;
					scale[o] = sa;
				}
		if (!rc) {
			char what[80];
			snprintf(what, sizeof what, "Conv %lldx%lld s%lld c%lld -> %lld g%lld at %lldx%lld",
				 (long long)K, (long long)K, (long long)st, (long long)C,
				 (long long)M, (long long)G, (long long)S, (long long)S);
			CHECK(near_all(h.out[0].data, want, scale, ny, what));
			check_threads(&h, ins, what);
			int jobs = run_jobs(&h, ins, 2);
			if (jobs != 1)
				fprintf(stderr, "  %s: %d pool jobs at 2 threads, want 1\n", what, jobs);
			CHECK_INT(jobs, 1);
		}
		harness_free(&h);
		free(want);
		free(scale);
		free(x);
		free(w);
		free(bias);
		free(z);
	}
}

/* The guided split of nn-split.h: its parts cover the items in order;
 * one part at one thread; else a part an item (too few items), or
 * `threads` home ranges of equal part counts (the pool's ranges) each
 * covering its 1/threads of the items, whose parts shrink (never grow),
 * the first half of the range (rounded up), none under `least` items. */
static void test_guided_split(void)
{
	CHECK_INT(gc_nn_guided_parts(100, 1, 1), 1);
	for (int t = 2; t <= 4; t++)
		for (int64_t n = 1; n <= 300; n += n < 20 ? 1 : 37)
			for (int64_t least = 1; least <= 3; least++) {
				int parts = gc_nn_guided_parts(n, t, least);
				int items = n / t < 2 * least; /* a part an item */
				int per = items ? 1 : parts / t;
				int64_t at = 0, prev = n + 1, lo, hi;
				int ok = parts >= 1 && (items ? parts == n : parts == per * t);
				for (int p = 0; p < parts && ok; p++) {
					gc_nn_guided_range(n, t, least, p, parts, &lo, &hi);
					ok = lo == at && hi > lo;
					if (items) {
						ok = ok && hi == lo + 1;
					} else {
						int s = p / per;
						int64_t r0 = n * s / t, r1 = n * (s + 1) / t;
						if (p % per == 0)
							ok = ok && lo == r0 && hi - lo == (r1 - r0 + 1) / 2;
						else
							ok = ok && hi - lo <= prev;
						if (p % per == per - 1)
							ok = ok && hi == r1;
						ok = ok && hi - lo >= least;
					}
					prev = hi - lo;
					at = hi;
				}
				if (!ok || at != n)
					fprintf(stderr, "  guided %lld items, %d threads, least %lld\n",
						(long long)n, t, (long long)least);
				CHECK(ok && at == n);
			}
}

/* The pool's claims (nn-par.h): every part runs once; a thread runs the
 * parts of its home range it takes in increasing order, before any of
 * another's, and those from the back (decreasing); an ordered job's parts
 * go out in increasing order (or the caller ran the job alone, in order).
 * Parts of uneven length, so that the threads take from each other. */
enum { HOME_PARTS = 24, HOME_SLOTS = 4 };
typedef struct home_log {
	atomic_int runs[HOME_PARTS];
	int seq[HOME_SLOTS][HOME_PARTS];
	int n[HOME_SLOTS];
} home_log;

static void home_part(void *arg, int part, int parts, int slot)
{
	home_log *l = arg;
	(void)parts;
	atomic_fetch_add(&l->runs[part], 1);
	l->seq[slot][l->n[slot]++] = part;
	volatile double x = 0;
	for (int i = 0; i < (part % 5 == 0 ? 200000 : 2000); i++)
		x += i;
}

static void test_home_ranges(void)
{
	gc_nn_par_acquire();
	int bad = 0;
	for (int round = 0; round < 40; round++) {
		int threads = 2 + round % 3, ordered = round % 4 == 3;
		home_log *l = calloc(1, sizeof *l);
		(ordered ? gc_nn_parallel_ordered : gc_nn_parallel)(threads, HOME_PARTS, home_part, l);
		for (int p = 0; p < HOME_PARTS; p++)
			bad += atomic_load(&l->runs[p]) != 1;
		/* a job the pool ran on its caller alone (another process took
		 * the cores: a solo window), in order, is one too */
		int alone = l->n[0] == HOME_PARTS;
		for (int j = 1; alone && j < HOME_PARTS; j++)
			alone = l->seq[0][j] == j;
		for (int s = 0; s < threads && !ordered && !alone; s++) {
			int own0 = s * HOME_PARTS / threads, own1 = (s + 1) * HOME_PARTS / threads;
			int i = 0, last = -1;
			for (; i < l->n[s] && l->seq[s][i] >= own0 && l->seq[s][i] < own1; i++) {
				bad += l->seq[s][i] <= last;
				last = l->seq[s][i];
			}
			for (int j = i + 1; j < l->n[s]; j++) { /* stolen: from the backs */
				int a = l->seq[s][j - 1], b = l->seq[s][j];
				bad += (a < own0 || a >= own1) && a * threads / HOME_PARTS ==
				       b * threads / HOME_PARTS && b >= a;
				bad += b >= own0 && b < own1;
			}
		}
		for (int s = 0; s < threads && ordered; s++)
			for (int j = 1; j < l->n[s]; j++)
				bad += l->seq[s][j] <= l->seq[s][j - 1];
		free(l);
	}
	gc_nn_par_release();
	CHECK_INT(bad, 0);
}

/* Plain and ordered jobs one after another (squeeze-excite's ordered job
 * follows the Conv before it): every part of every job runs once. A worker
 * that had run the last part of a plain job went on to look for another
 * while its caller was already setting up the next, ordered, job: it read
 * that job's kind from beside the job word and claimed part 0 again from
 * the plain job's word (regnet_y_400mf at two threads crashed in 1 of 15
 * processes of 100 runs each; this test failed 5 times in 6). Each job's
 * counts stay until the end, so that a part run late counts too. */
enum { LINGER_JOBS = 40000, LINGER_PARTS = 4 };
static void linger_part(void *arg, int part, int parts, int slot)
{
	atomic_int *runs = arg;
	(void)parts;
	(void)slot;
	atomic_fetch_add(&runs[part], 1);
	volatile int x = 0;
	for (int i = 0; i < (part == LINGER_PARTS - 1 ? 300 : 30); i++)
		x += i;
}

static void test_ordered_after_plain(void)
{
	gc_nn_par_acquire();
	atomic_int *runs = calloc((size_t)LINGER_JOBS * LINGER_PARTS, sizeof *runs);
	for (int j = 0; j < LINGER_JOBS; j++)
		(j % 2 ? gc_nn_parallel_ordered : gc_nn_parallel)(2, LINGER_PARTS, linger_part,
								   runs + j * LINGER_PARTS);
	gc_nn_par_release();
	int bad = 0;
	for (int i = 0; i < LINGER_JOBS * LINGER_PARTS; i++)
		bad += atomic_load(&runs[i]) != 1;
	free(runs);
	CHECK_INT(bad, 0);
}

/* gc_pk_gemm.split_m (a 1x1 Conv that a depthwise one reads: lib/pass-
 * split.c): the row GEMM split by blocks of output channels first gives
 * the bytes of one thread's product at 2 and 3 threads, at blocks of
 * whole tiles and a short last one, and where it does not apply (too few
 * tiles, k deeper than m / 2, a product over GC_PK_SPLIT_M_BYTES); and
 * the split by blocks without it, of few column panels and S of 512 KiB or
 * more (inception_v3's 1x1s at 8x8; a 7x7 output; a short last block). */
static void test_row_gemm_split_m(void)
{
	static const struct {
		int64_t m, n, k;
	} cases[] = {{192, 196, 64}, {200, 150, 96}, {100, 60, 40}, {40, 300, 16}, {256, 196, 160},
		     {128, 3136, 32},  {448, 64, 2048}, {320, 49, 512}, {200, 60, 700}};
	if (!gc_pk_usable())
		return;
	gc_nn_par_acquire();
	for (int ci = 0; ci < LEN(cases); ci++) {
		int64_t m = cases[ci].m, n = cases[ci].n, k = cases[ci].k;
		float *s = rnd_buf(m * k), *v = rnd_buf(k * n);
		float *sp = malloc((size_t)gc_pk_s_floats(m, k) * sizeof(float));
		float *y1 = malloc((size_t)(m * n) * sizeof(float)),
		      *y2 = malloc((size_t)(m * n) * sizeof(float));
		gc_pk_pack_s(s, k, 1, m, k, sp);
		gc_pk_gemm g = {.m = m, .n = n, .k = k, .s = sp, .v = v, .ldv = n, .ldc = n};
		gc_nn_act none = {0};
		gc_pk_epi_init(&g.epi, &none);
		g.c = y1;
		gc_pk_gemm_par(&g, 1);
		for (int threads = 2; threads <= 3; threads++)
			for (int split = 0; split < 2; split++) {
				memset(y2, 0xff, (size_t)(m * n) * sizeof(float));
				g.c = y2;
				g.split_m = split;
				gc_pk_gemm_par(&g, threads);
				if (memcmp(y1, y2, (size_t)(m * n) * sizeof(float))) {
					fprintf(stderr, "  m %lld n %lld k %lld, %d threads, split_m %d\n",
						(long long)m, (long long)n, (long long)k, threads, split);
					CHECK(0);
				}
			}
		free(s);
		free(v);
		free(sp);
		free(y1);
		free(y2);
	}
	gc_nn_par_release();
}

/* gc_nn_part_of (nn-par.h) finds the part of gc_nn_part_range that holds
 * each item, for every count of items and parts: the convolution's padded
 * copy finds with it the blocks that a part's groups read. */
static void test_part_of(void)
{
	int bad = 0;
	for (int64_t n = 1; n <= 200; n++)
		for (int parts = 1; parts <= n && parts <= 70; parts++)
			for (int p = 0; p < parts; p++) {
				int64_t lo, hi;
				gc_nn_part_range(n, p, parts, &lo, &hi);
				for (int64_t i = lo; i < hi; i++)
					if (gc_nn_part_of(n, parts, i) != p && bad++ < 5)
						fprintf(stderr, "  part_of(%lld, %d, %lld) = %d, want %d\n",
							(long long)n, parts, (long long)i,
							gc_nn_part_of(n, parts, i), p);
			}
	CHECK_INT(bad, 0);
}

/* ---- element-wise ---- */

static void test_elementwise_threads(void)
{
	/* x [1, 64, 56, 56] + bias [1, 64, 1, 1]: a broadcast in the middle */
	int64_t nx = 64 * 56 * 56;
	float *x = rnd_buf(256000), *bias = rnd_buf(64); /* also the Mul's [256, 1000] below */
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 64, 56, 56}, x);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 64, 1, 1}, bias);
	gc_tensor *ins[] = {&tx, &tb};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Add, "Add", 14, 2, ins, 1, 0, NULL);
	CHECK_INT(rc, 0);
	if (!rc) {
		const float *y = h.out[0].data;
		int ok = 1;
		for (int64_t i = 0; i < nx && ok; i++)
			ok = y[i] == x[i] + bias[i / (56 * 56)];
		CHECK(ok);
		check_threads(&h, ins, "Add, broadcast channel bias");
	}
	harness_free(&h);
	/* x [256, 1000] * row [1000]: the innermost axis broadcast, rows split
	 * mid-row (blocks of 512 elements) */
	float *row = rnd_buf(1000);
	gc_tensor tx2 = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){256, 1000}, x);
	gc_tensor tr = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){1000}, row);
	gc_tensor *ins2[] = {&tx2, &tr};
	rc = harness_op(&h, gc_prepare_Mul, "Mul", 14, 2, ins2, 1, 0, NULL);
	CHECK_INT(rc, 0);
	if (!rc) {
		const float *y = h.out[0].data;
		int ok = 1;
		for (int64_t i = 0; i < 256000 && ok; i++)
			ok = y[i] == x[i] * row[i % 1000];
		CHECK(ok);
		check_threads(&h, ins2, "Mul, broadcast row");
	}
	harness_free(&h);
	free(x);
	free(bias);
	free(row);
}

/* DynamicQuantizeLinear: its range and its store split (rows of 64
 * elements), the same bytes, scale and zero point at every thread count;
 * at 1 thread the ONNX formula written out here (the range taken with 0,
 * round half to even), exactly. */
static void test_dynq_threads(void)
{
	int64_t n = 3 * 100000 + 17; /* a line left over */
	float *x = rnd_buf(n);
	x[12345] = 3.5f; /* the largest, in the first part (rnd_buf: [-1, 1)) */
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){1, n}, x);
	gc_tensor *ins[] = {&tx};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_DynamicQuantizeLinear, "DynamicQuantizeLinear", 11, 1,
			    ins, 3, 0, NULL);
	CHECK_INT(rc, 0);
	if (!rc) {
		float lo = 0, hi = 0;
		for (int64_t i = 0; i < n; i++) {
			lo = x[i] < lo ? x[i] : lo;
			hi = x[i] > hi ? x[i] : hi;
		}
		float scale = (hi - lo) / 255.0f, zp = rintf(-lo / scale);
		zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
		CHECK(*(const float *)h.out[1].data == scale);
		CHECK_INT(*(const uint8_t *)h.out[2].data, (int)zp);
		const uint8_t *y = h.out[0].data;
		int ok = 1;
		for (int64_t i = 0; i < n && ok; i++) {
			float v = rintf(x[i] / scale) + zp;
			ok = y[i] == (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
		}
		CHECK(ok);
		check_threads(&h, ins, "DynamicQuantizeLinear");
	}
	harness_free(&h);
	free(x);
}

/* ---- reductions ---- */

static void test_reduce_threads(void)
{
	/* ReduceMean over the last axis (LayerNorm's), and ReduceSum over a
	 * middle axis (kept axes both outside and inside) */
	static const struct {
		const char *what;
		int64_t d[3];
		int64_t axis;
		int mean;
	} cases[] = {{"ReduceMean, last axis", {1, 3136, 96}, 2, 1},
		     {"ReduceSum, middle axis", {6, 64, 1000}, 1, 0}};
	for (int ci = 0; ci < LEN(cases); ci++) {
		const int64_t *d = cases[ci].d;
		int64_t nx = d[0] * d[1] * d[2], ax = cases[ci].axis;
		float *x = rnd_buf(nx);
		gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 3, d, x);
		gc_tensor *ins[] = {&tx};
		gc_attr attrs[] = {{.name = "axes", .type = GC_ATTR_INTS, .n = 1, .v.ints = &ax}};
		harness_run h;
		int rc = cases[ci].mean ? harness_op(&h, gc_prepare_ReduceMean, "ReduceMean", 13, 1,
						     ins, 1, 1, attrs)
					: harness_op(&h, gc_prepare_ReduceSum, "ReduceSum", 11, 1,
						     ins, 1, 1, attrs);
		CHECK_INT(rc, 0);
		if (!rc) {
			int64_t outer = 1, inner = 1;
			for (int i = 0; i < ax; i++)
				outer *= d[i];
			for (int i = (int)ax + 1; i < 3; i++)
				inner *= d[i];
			int64_t ny = outer * inner;
			double *want = malloc((size_t)ny * sizeof(double));
			double *scale = malloc((size_t)ny * sizeof(double));
			for (int64_t o = 0; o < outer; o++)
				for (int64_t j = 0; j < inner; j++) {
					double s = 0, sa = 0;
					for (int64_t r = 0; r < d[ax]; r++) {
						double v = x[(o * d[ax] + r) * inner + j];
						s += v;
						sa += fabs(v);
					}
					double div = cases[ci].mean ? (double)d[ax] : 1.0;
					want[o * inner + j] = s / div;
					scale[o * inner + j] = sa / div;
				}
			CHECK(near_all(h.out[0].data, want, scale, ny, cases[ci].what));
			check_threads(&h, ins, cases[ci].what);
			free(want);
			free(scale);
		}
		harness_free(&h);
		free(x);
	}
}

/* ---- pooling ---- */

/* Max of the 3x3 stride-2 pad-1 window at (oh, ow) of a 112x112 plane. */
static float max_window(const float *xc, int64_t oh, int64_t ow)
{
	float best = -INFINITY;
	for (int64_t a = 0; a < 3; a++)
		for (int64_t b = 0; b < 3; b++) {
			int64_t ih = oh * 2 - 1 + a, iw = ow * 2 - 1 + b;
			if (ih >= 0 && ih < 112 && iw >= 0 && iw < 112 && xc[ih * 112 + iw] > best)
				best = xc[ih * 112 + iw];
		}
	return best;
}

static void test_pool_threads(void)
{
	int64_t nx = 64 * 112 * 112;
	float *x = rnd_buf(nx);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 64, 112, 112}, x);
	gc_tensor *ins[] = {&tx};
	gc_attr attrs[] = {
	    {.name = "kernel_shape", .type = GC_ATTR_INTS, .n = 2, .v.ints = (int64_t[]){3, 3}},
	    {.name = "strides", .type = GC_ATTR_INTS, .n = 2, .v.ints = (int64_t[]){2, 2}},
	    {.name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = (int64_t[]){1, 1, 1, 1}}};
	/* MaxPool: the row path (one output), the window loops (with Indices) */
	for (int n_out = 1; n_out <= 2; n_out++) {
		harness_run h;
		int rc = harness_op(&h, gc_prepare_MaxPool, "MaxPool", 12, 1, ins, n_out,
				    LEN(attrs), attrs);
		CHECK_INT(rc, 0);
		if (!rc) {
			const float *y = h.out[0].data;
			int ok = 1;
			for (int64_t c = 0; c < 64 && ok; c++)
				for (int64_t i = 0; i < 56 * 56 && ok; i++)
					ok = y[c * 3136 + i] ==
					     max_window(x + c * 112 * 112, i / 56, i % 56);
			CHECK(ok);
			check_threads(&h, ins, n_out == 1 ? "MaxPool, row path"
							  : "MaxPool with Indices, window loops");
		}
		harness_free(&h);
	}
	harness_run h;
	int rc = harness_op(&h, gc_prepare_AveragePool, "AveragePool", 11, 1, ins, 1, LEN(attrs),
			    attrs);
	CHECK_INT(rc, 0);
	if (!rc)
		check_threads(&h, ins, "AveragePool, row path");
	harness_free(&h);
	/* stride 1 with pad 1 (inception_v3's AveragePools, googlenet's
	 * MaxPools): the AVX-512 plane path where the CPU has it */
	gc_tensor tp = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 256, 35, 35}, x);
	gc_tensor *pins[] = {&tp};
	gc_attr pattrs[] = {
	    {.name = "kernel_shape", .type = GC_ATTR_INTS, .n = 2, .v.ints = (int64_t[]){3, 3}},
	    {.name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = (int64_t[]){1, 1, 1, 1}},
	    {.name = "count_include_pad", .type = GC_ATTR_INT, .v.i = 1}};
	for (int is_max = 0; is_max < 2; is_max++) {
		rc = is_max ? harness_op(&h, gc_prepare_MaxPool, "MaxPool", 12, 1, pins, 1, 2, pattrs)
			    : harness_op(&h, gc_prepare_AveragePool, "AveragePool", 11, 1, pins, 1,
					 3, pattrs);
		CHECK_INT(rc, 0);
		if (!rc)
			check_threads(&h, pins, is_max ? "MaxPool 3x3/1" : "AveragePool 3x3/1");
		harness_free(&h);
	}
	rc = harness_op(&h, gc_prepare_GlobalAveragePool, "GlobalAveragePool", 1, 1, ins, 1, 0,
			NULL);
	CHECK_INT(rc, 0);
	if (!rc) {
		double want[64], scale[64];
		for (int64_t c = 0; c < 64; c++) {
			double s = 0, sa = 0;
			for (int64_t i = 0; i < 112 * 112; i++) {
				s += x[c * 112 * 112 + i];
				sa += fabs(x[c * 112 * 112 + i]);
			}
			want[c] = s / (112 * 112);
			scale[c] = sa / (112 * 112);
		}
		CHECK(near_all(h.out[0].data, want, scale, 64, "GlobalAveragePool"));
		check_threads(&h, ins, "GlobalAveragePool");
	}
	harness_free(&h);
	free(x);
}

/* ---- Resize, Transpose, Slice, Concat ---- */

static void test_resize_threads(void)
{
	float *x = rnd_buf(16 * 64 * 64);
	float scales[] = {1, 1, 2, 2};
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 16, 64, 64}, x);
	gc_tensor ts = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){4}, scales);
	gc_tensor *ins[] = {&tx, NULL, &ts};
	gc_attr attrs[] = {{.name = "mode", .type = GC_ATTR_STRING, .n = 6, .v.s = "linear"}};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Resize, "Resize", 13, 3, ins, 1, 1, attrs);
	if (rc)
		fprintf(stderr, "  Resize: %s\n", h.err.msg);
	CHECK_INT(rc, 0);
	if (!rc)
		check_threads(&h, ins, "Resize, bilinear x2");
	harness_free(&h);
	free(x);
}

/* InstanceNormalization (planes) and GroupNormalization (groups of
 * channels, opset 21's per-channel scale), against plain double loops. */
static void test_norm_threads(void)
{
	const int64_t N = 2, C = 6, H = 40, W = 50, inner = H * W, G = 3;
	float *x = rnd_buf(N * C * inner), *sc = rnd_buf(C), *bi = rnd_buf(C);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){N, C, H, W}, x);
	gc_tensor ts = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){C}, sc);
	gc_tensor tb = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){C}, bi);
	gc_tensor *ins[] = {&tx, &ts, &tb};
	double *want = malloc((size_t)(N * C * inner) * sizeof *want);
	double *scale = malloc((size_t)(N * C * inner) * sizeof *scale);
	for (int op = 0; op < 2; op++) {
		int64_t per = op ? C / G : 1; /* channels a statistic spans */
		for (int64_t s0 = 0; s0 < N * C; s0 += per) {
			double m = 0, v = 0, len = (double)(per * inner);
			for (int64_t i = 0; i < per * inner; i++)
				m += x[s0 * inner + i];
			m /= len;
			for (int64_t i = 0; i < per * inner; i++)
				v += (x[s0 * inner + i] - m) * (x[s0 * inner + i] - m);
			v /= len;
			for (int64_t i = 0; i < per * inner; i++) {
				int64_t c = (s0 + i / inner) % C, e = s0 * inner + i;
				want[e] = (x[e] - m) / sqrt(v + 1e-5) * sc[c] + bi[c];
				scale[e] = fabs(want[e]) + 1;
			}
		}
		gc_attr attrs[] = {{.name = "num_groups", .type = GC_ATTR_INT, .v.i = G}};
		harness_run h;
		int rc = op ? harness_op(&h, gc_prepare_GroupNormalization, "GroupNormalization",
					 21, 3, ins, 1, 1, attrs)
			    : harness_op(&h, gc_prepare_InstanceNormalization,
					 "InstanceNormalization", 6, 3, ins, 1, 0, NULL);
		if (rc)
			fprintf(stderr, "  %s\n", h.err.msg);
		CHECK_INT(rc, 0);
		const char *what = op ? "GroupNormalization" : "InstanceNormalization";
		CHECK(near_all(h.out[0].data, want, scale, N * C * inner, what));
		check_threads(&h, ins, what);
		harness_free(&h);
	}
	free(want);
	free(scale);
	free(x);
	free(sc);
	free(bi);
}

/* BatchNormalization (what fold-batchnorm leaves, as in densenet's
 * pre-activation blocks) with and without the Relu that fuse-activation
 * moves into it: a large one splits, a small one does not (one share would
 * cost less than handing it to a worker). */
static void test_batchnorm_threads(void)
{
	const int64_t C = 64, inner = 56 * 56, n = C * inner;
	float *x = rnd_buf(n), *p[4];
	for (int i = 0; i < 4; i++)
		p[i] = rnd_buf(C);
	for (int64_t c = 0; c < C; c++)
		p[3][c] = fabsf(p[3][c]) + 0.1f; /* variance */
	double *want = malloc((size_t)n * sizeof *want), *scale = malloc((size_t)n * sizeof *scale);
	for (int relu = 0; relu < 2; relu++) {
		for (int64_t e = 0; e < n; e++) {
			int64_t c = e / inner;
			double v = (x[e] - (double)p[2][c]) / sqrt((double)p[3][c] + 1e-5) * p[0][c] +
				   p[1][c];
			want[e] = relu && v < 0 ? 0 : v;
			scale[e] = fabs(want[e]) + 1;
		}
		for (int small = 0; small < 2; small++) {
			int64_t dims[4] = {1, C, small ? 2 : 56, small ? 2 : 56};
			gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, dims, x);
			gc_tensor tp[4];
			gc_tensor *ins[5] = {&tx};
			for (int i = 0; i < 4; i++) {
				tp[i] = harness_tensor(GC_DTYPE_FLOAT, 1, (int64_t[]){C}, p[i]);
				ins[i + 1] = &tp[i];
			}
			gc_attr act = {.name = "_gc_activation", .type = GC_ATTR_STRING};
			act.v.s = "Relu";
			act.n = 4;
			harness_run h;
			int rc = harness_op(&h, gc_prepare_BatchNormalization, "BatchNormalization",
					    15, 5, ins, 1, relu, &act);
			CHECK_INT(rc, 0);
			const char *what = relu ? "BatchNormalization + Relu" : "BatchNormalization";
			if (!rc && !small) {
				CHECK(near_all(h.out[0].data, want, scale, n, what));
				check_threads(&h, ins, what);
			} else if (!rc) { /* 64 x 4 values: one thread */
				gc_kctx k = {.err = &h.err, .node = &h.node, .threads = 2};
				k.scratch = calloc(1, h.node.scratch_bytes + 1);
				uint64_t jobs = gc_nn_par_jobs();
				CHECK_INT(h.node.run(&k, &h.node, ins, (gc_tensor *[]){&h.out[0]}), 0);
				CHECK(gc_nn_par_jobs() == jobs);
				free(k.scratch);
			}
			harness_free(&h);
		}
	}
	free(want);
	free(scale);
	free(x);
	for (int i = 0; i < 4; i++)
		free(p[i]);
}

/* The split policy itself: a job runs on one thread until each of two
 * shares is worth a hand-over to a worker, then on as many threads as it
 * has such shares, at most the threads it was given. */
static void test_split_threshold(void)
{
	CHECK_INT(gc_nn_par_threads(2, 0), 1);
	CHECK_INT(gc_nn_par_threads(1, 1e9), 1);
	double share = GC_NN_PAR_MIN_SHARE;
	CHECK_INT(gc_nn_par_threads(2, 2 * share * 0.99), 1);
	CHECK_INT(gc_nn_par_threads(2, 2 * share), 2);
	CHECK_INT(gc_nn_par_threads(4, 3.5 * share), 3);
	CHECK_INT(gc_nn_par_threads(4, 1e9), 4);
	/* --threads 1000: no more than the pool runs (DynamicQuantizeLinear
	 * keeps a minimum and a maximum per part, 4 parts a thread) */
	CHECK_INT(gc_nn_par_threads(1000, 1e12), GC_NN_PAR_MAX);
}

static void test_copy_threads(void)
{
	/* Transpose [1, 256, 8, 64] -> [1, 8, 256, 64] (heads) and
	 * [1, 64, 56, 56] -> [1, 56, 56, 64] (channels last) */
	static const struct {
		int64_t d[4], perm[4];
	} tr[] = {{{1, 256, 8, 64}, {0, 2, 1, 3}}, {{1, 64, 56, 56}, {0, 2, 3, 1}}};
	for (int ci = 0; ci < LEN(tr); ci++) {
		const int64_t *d = tr[ci].d, *pm = tr[ci].perm;
		int64_t nx = d[0] * d[1] * d[2] * d[3];
		float *x = rnd_buf(nx);
		gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, d, x);
		gc_tensor *ins[] = {&tx};
		gc_attr attrs[] = {
		    {.name = "perm", .type = GC_ATTR_INTS, .n = 4, .v.ints = tr[ci].perm}};
		harness_run h;
		int rc = harness_op(&h, gc_prepare_Transpose, "Transpose", 13, 1, ins, 1, 1, attrs);
		CHECK_INT(rc, 0);
		if (!rc) {
			const float *y = h.out[0].data;
			int64_t od[4] = {d[pm[0]], d[pm[1]], d[pm[2]], d[pm[3]]}, xs[4];
			xs[3] = 1;
			for (int i = 2; i >= 0; i--)
				xs[i] = xs[i + 1] * d[i + 1];
			int ok = 1;
			for (int64_t i = 0; i < nx && ok; i++) {
				int64_t r = i, off = 0;
				for (int a = 3; a >= 0; a--) {
					off += (r % od[a]) * xs[pm[a]];
					r /= od[a];
				}
				ok = y[i] == x[off];
			}
			CHECK(ok);
			check_threads(&h, ins, ci ? "Transpose to channels last" : "Transpose heads");
		}
		harness_free(&h);
		free(x);
	}

	/* Slice [1, 64, 112, 112] -> [:, 8:40, 1:111, ::2] */
	float *x = rnd_buf(64 * 112 * 112);
	int64_t st[] = {8, 1, 0}, en[] = {40, 111, 112}, ax[] = {1, 2, 3}, sp[] = {1, 1, 2};
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 64, 112, 112}, x);
	gc_tensor tst = harness_tensor(GC_DTYPE_INT64, 1, (int64_t[]){3}, st);
	gc_tensor ten = harness_tensor(GC_DTYPE_INT64, 1, (int64_t[]){3}, en);
	gc_tensor tax = harness_tensor(GC_DTYPE_INT64, 1, (int64_t[]){3}, ax);
	gc_tensor tsp = harness_tensor(GC_DTYPE_INT64, 1, (int64_t[]){3}, sp);
	gc_tensor *sins[] = {&tx, &tst, &ten, &tax, &tsp};
	harness_run h;
	int rc = harness_op(&h, gc_prepare_Slice, "Slice", 13, 5, sins, 1, 0, NULL);
	CHECK_INT(rc, 0);
	if (!rc) {
		const float *y = h.out[0].data;
		int ok = 1;
		for (int64_t c = 0; c < 32 && ok; c++)
			for (int64_t r = 0; r < 110 && ok; r++)
				for (int64_t q = 0; q < 56 && ok; q++)
					ok = y[(c * 110 + r) * 56 + q] ==
					     x[((c + 8) * 112 + r + 1) * 112 + 2 * q];
		CHECK(ok);
		check_threads(&h, sins, "Slice");
	}
	harness_free(&h);

	/* Concat of three [1, C, 56, 56] along channels (one outer row: the
	 * inputs are the units) and of two [64, 3, 1000] along axis 1 */
	float *b = rnd_buf(32 * 56 * 56), *c = rnd_buf(16 * 56 * 56);
	gc_tensor t0 = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 64, 56, 56}, x);
	gc_tensor t1 = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 32, 56, 56}, b);
	gc_tensor t2 = harness_tensor(GC_DTYPE_FLOAT, 4, (int64_t[]){1, 16, 56, 56}, c);
	gc_tensor *cins[] = {&t0, &t1, &t2};
	gc_attr cat1[] = {{.name = "axis", .type = GC_ATTR_INT, .v.i = 1}};
	rc = harness_op(&h, gc_prepare_Concat, "Concat", 13, 3, cins, 1, 1, cat1);
	CHECK_INT(rc, 0);
	if (!rc) {
		const float *y = h.out[0].data;
		int64_t p = 56 * 56;
		CHECK(!memcmp(y, x, (size_t)(64 * p) * 4) && !memcmp(y + 64 * p, b, (size_t)(32 * p) * 4) &&
		      !memcmp(y + 96 * p, c, (size_t)(16 * p) * 4));
		check_threads(&h, cins, "Concat of three along channels");
	}
	harness_free(&h);
	gc_tensor u0 = harness_tensor(GC_DTYPE_FLOAT, 3, (int64_t[]){64, 3, 1000}, x);
	gc_tensor u1 = harness_tensor(GC_DTYPE_FLOAT, 3, (int64_t[]){64, 1, 1000}, b);
	gc_tensor *uins[] = {&u0, &u1};
	rc = harness_op(&h, gc_prepare_Concat, "Concat", 13, 2, uins, 1, 1, cat1);
	CHECK_INT(rc, 0);
	if (!rc) {
		const float *y = h.out[0].data;
		int ok = 1;
		for (int64_t o = 0; o < 64 && ok; o++)
			ok = !memcmp(y + o * 4000, x + o * 3000, 3000 * 4) &&
			     !memcmp(y + o * 4000 + 3000, b + o * 1000, 1000 * 4);
		CHECK(ok);
		check_threads(&h, uins, "Concat of rows");
	}
	harness_free(&h);
	free(x);
	free(b);
	free(c);
}

TEST_MAIN(TEST(test_matmul_threads), TEST(test_gemm_threads), TEST(test_convtranspose_threads),
	  TEST(test_conv_jobs), TEST(test_guided_split), TEST(test_home_ranges), TEST(test_part_of),
	  TEST(test_ordered_after_plain),
	  TEST(test_row_gemm_split_m),
	  TEST(test_elementwise_threads), TEST(test_dynq_threads),
	  TEST(test_reduce_threads), TEST(test_pool_threads), TEST(test_resize_threads),
	  TEST(test_norm_threads), TEST(test_batchnorm_threads), TEST(test_split_threshold),
	  TEST(test_copy_threads))
