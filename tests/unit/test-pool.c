/*
 * The row path of MaxPool and AveragePool (pool.c: float32 and, through it,
 * float16, over one or two spatial dims, without Indices; 2x2 stride 2's
 * own loop among them) against the window loops that serve
 * every other pool.
 *
 * A pool over [N, C, H, W] (or [N, C, W]) takes the row path; the same data
 * seen as [N, C, 1, H, W] (or [N, C, 1, 1, W]) with a kernel of 1, stride 1,
 * no padding on the added axes is a 3-D pool, computed by the window loops,
 * and must give the same numbers: MaxPool exactly (NaN skipped, LOWEST for
 * a window wholly in the padding), AveragePool within 1e-5 relative (the
 * paths add in different orders). The window loops themselves are checked
 * against NumPy in test-nn.c and by ONNX's node tests (make conformance).
 *
 * The shapes and attributes come from a seeded generator: odd sizes, every
 * stride, kernel and dilation up to a few, asymmetric pads (also wider than
 * the kernel), ceil_mode, auto_pad, count_include_pad, NaN and -inf inputs.
 */
#include <graphcc/runtime.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "kernels/kutil.h"

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(rng_state >> 33) % n;
}

typedef struct {
	const char *name; /* of a named case */
	int is_max, nsp, f16, nan_inf;
	int64_t n, c, in[2], k[2], s[2], d[2], pl[2], ph[2];
	int ceil_mode, count_include_pad;
	const char *auto_pad; /* NULL: explicit pads */
} pool_case;

static void describe(const pool_case *pc, char *buf, size_t len)
{
	int o = 2 - pc->nsp;
	snprintf(buf, len,
		 "%s %s in %" PRId64 "x%" PRId64 "x%" PRId64 "x%" PRId64 " k %" PRId64 "x%" PRId64
		 " s %" PRId64 "x%" PRId64 " d %" PRId64 "x%" PRId64 " pads %" PRId64 ",%" PRId64
		 ",%" PRId64 ",%" PRId64 " ceil %d cip %d auto_pad %s%s",
		 pc->is_max ? "MaxPool" : "AveragePool", pc->f16 ? "float16" : "float32", pc->n,
		 pc->c, o ? 1 : pc->in[0], pc->in[1], pc->k[0], pc->k[1], pc->s[0], pc->s[1],
		 pc->d[0], pc->d[1], pc->pl[0], pc->pl[1], pc->ph[0], pc->ph[1], pc->ceil_mode,
		 pc->count_include_pad, pc->auto_pad ? pc->auto_pad : "-",
		 pc->nan_inf ? " with NaN/-inf" : "");
}

/* Runs the pool on x seen with `extra` leading spatial axes of size 1 (0:
 * the row path; 3 - nsp: a 3-D pool, the window loops). */
static int run_pool(const pool_case *pc, int extra, gc_tensor *x, harness_run *h)
{
	int nsp = pc->nsp + extra, o = 2 - pc->nsp;
	int64_t dims[5] = {pc->n, pc->c}, ks[3], ss[3], ds[3], ps[6];
	for (int i = 0; i < nsp; i++) {
		int src = i - extra + o; /* index into the case's 2-D arrays */
		int real = i >= extra;
		dims[2 + i] = real ? pc->in[src] : 1;
		ks[i] = real ? pc->k[src] : 1;
		ss[i] = real ? pc->s[src] : 1;
		ds[i] = real ? pc->d[src] : 1;
		ps[i] = real ? pc->pl[src] : 0;
		ps[nsp + i] = real ? pc->ph[src] : 0;
	}
	x->rank = 2 + nsp;
	memcpy(x->dims, dims, sizeof dims);
	gc_attr a[6];
	int na = 0;
	a[na++] = (gc_attr){.name = "kernel_shape", .type = GC_ATTR_INTS, .n = nsp, .v.ints = ks};
	a[na++] = (gc_attr){.name = "strides", .type = GC_ATTR_INTS, .n = nsp, .v.ints = ss};
	a[na++] = (gc_attr){.name = "dilations", .type = GC_ATTR_INTS, .n = nsp, .v.ints = ds};
	if (pc->auto_pad)
		a[na++] = (gc_attr){.name = "auto_pad",
				    .type = GC_ATTR_STRING,
				    .n = (int64_t)strlen(pc->auto_pad),
				    .v.s = pc->auto_pad};
	else
		a[na++] =
		    (gc_attr){.name = "pads", .type = GC_ATTR_INTS, .n = 2 * nsp, .v.ints = ps};
	a[na++] = (gc_attr){.name = "ceil_mode", .type = GC_ATTR_INT, .v.i = pc->ceil_mode};
	if (!pc->is_max)
		a[na++] = (gc_attr){
		    .name = "count_include_pad", .type = GC_ATTR_INT, .v.i = pc->count_include_pad};
	gc_tensor *in[] = {x};
	return pc->is_max
		   ? harness_op(h, gc_prepare_MaxPool, "MaxPool", 12, 1, in, 1, na, a)
		   : harness_op(h, gc_prepare_AveragePool, "AveragePool", 19, 1, in, 1, na, a);
}

static double value_at(const gc_tensor *t, int64_t i)
{
	return t->dtype == GC_DTYPE_FLOAT16 ? gc_f16_to_f32(((const uint16_t *)t->data)[i])
					    : ((const float *)t->data)[i];
}

/* One case: 1 when compared, 0 when both paths refused the attributes (the
 * same way), -1 on a failed check (printed). */
static int one_case(const pool_case *pc)
{
	char what[400];
	describe(pc, what, sizeof what);
	int64_t numel = pc->n * pc->c * pc->in[0] * pc->in[1];
	size_t es = pc->f16 ? 2 : 4;
	void *data = malloc((size_t)numel * es);
	for (int64_t i = 0; i < numel; i++) {
		float v = (float)((int)rnd(8001) - 4000) / 1000.0f;
		if (pc->nan_inf && rnd(9) == 0)
			v = rnd(2) ? NAN : -INFINITY;
		if (pc->f16)
			((uint16_t *)data)[i] = gc_f32_to_f16(v);
		else
			((float *)data)[i] = v;
	}
	gc_tensor x = harness_tensor(pc->f16 ? GC_DTYPE_FLOAT16 : GC_DTYPE_FLOAT, 0, NULL, data);
	harness_run fast, ref;
	int rf = run_pool(pc, 0, &x, &fast);
	int rr = run_pool(pc, 3 - pc->nsp, &x, &ref);
	int result = 1;
	if (rf || rr) {
		if (!rf || !rr) {
			fprintf(stderr, "%s: row path %s, window loops %s\n", what,
				rf ? fast.err.msg : "ran", rr ? ref.err.msg : "ran");
			result = -1;
		} else {
			result = 0;
		}
		goto out;
	}
	/* That the two really are different paths: only the row path has a row
	 * buffer in scratch (float16 has conversion scratch on both), except
	 * 2x2 stride 2's own loop, which has none but another run function. */
	if (!pc->f16 && (fast.node.run == ref.node.run || ref.node.scratch_bytes != 0)) {
		fprintf(stderr,
			"%s: expected the row path on rank %d and not on rank 5 (scratch %" PRIu64
			" and %" PRIu64 " bytes)\n",
			what, 2 + pc->nsp, fast.node.scratch_bytes, ref.node.scratch_bytes);
		result = -1;
		goto out;
	}
	int64_t on = gc_tensor_numel(&fast.out[0]);
	if (on != gc_tensor_numel(&ref.out[0]) ||
	    fast.out[0].dims[2 + pc->nsp - 1] != ref.out[0].dims[4]) {
		fprintf(stderr, "%s: output shapes differ\n", what);
		result = -1;
		goto out;
	}
	for (int64_t i = 0; i < on; i++) {
		double a = value_at(&fast.out[0], i), b = value_at(&ref.out[0], i);
		double tol = pc->is_max ? 0 : (pc->f16 ? 2e-3 : 1e-5) * (1 + fabs(b));
		int ok = (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= tol;
		if (!ok) {
			fprintf(stderr,
				"%s: output %" PRId64 ": row path %.9g, window loops %.9g\n", what,
				i, a, b);
			result = -1;
			goto out;
		}
	}
	/* The row path must not depend on what its scratch held before: run it
	 * again over scratch full of NaN bytes; same bits. */
	if (!pc->f16) {
		size_t ob = (size_t)on * es;
		void *first = malloc(ob), *scratch = malloc(fast.node.scratch_bytes);
		memcpy(first, fast.out[0].data, ob);
		memset(scratch, 0xff, fast.node.scratch_bytes);
		gc_tensor *in[] = {&x}, *outp[] = {&fast.out[0]};
		gc_kctx k = {
		    .err = &fast.err, .node = &fast.node, .threads = 1, .scratch = scratch};
		x.rank = 2 + pc->nsp;
		memcpy(x.dims + 2, pc->in + (2 - pc->nsp), sizeof(int64_t) * (size_t)pc->nsp);
		int rc = fast.node.run(&k, &fast.node, in, outp);
		if (rc || memcmp(first, fast.out[0].data, ob)) {
			fprintf(stderr, "%s: a second run over dirty scratch differs\n", what);
			result = -1;
		}
		free(first);
		free(scratch);
	}
out:
	harness_free(&fast);
	harness_free(&ref);
	free(data);
	return result;
}

static pool_case random_case(void)
{
	pool_case pc = {0};
	pc.is_max = (int)rnd(2);
	pc.nsp = 1 + (int)rnd(2);
	pc.f16 = rnd(8) == 0;
	pc.nan_inf = pc.is_max && rnd(4) == 0;
	pc.n = 1 + rnd(2);
	pc.c = 1 + rnd(3);
	for (int i = 0; i < 2; i++) {
		int real = i >= 2 - pc.nsp;
		pc.in[i] = real ? 1 + rnd(i ? 41 : 19) : 1;
		pc.k[i] = real ? 1 + rnd(5) : 1;
		pc.s[i] = real ? 1 + rnd(4) : 1;
		pc.d[i] = real && rnd(3) == 0 ? 2 + rnd(2) : 1;
		pc.pl[i] = real ? rnd((uint32_t)pc.k[i] + 2) : 0;
		pc.ph[i] = real ? rnd((uint32_t)pc.k[i] + 2) : 0;
	}
	pc.ceil_mode = (int)rnd(2);
	pc.count_include_pad = (int)rnd(2);
	static const char *const modes[] = {"SAME_UPPER", "SAME_LOWER", "VALID"};
	if (rnd(5) == 0)
		pc.auto_pad = modes[rnd(3)];
	return pc;
}

static void test_row_path_random(void)
{
	rng_state = 12345;
	int compared = 0, refused = 0, failed = 0;
	for (int i = 0; i < 1500; i++) {
		pool_case pc = random_case();
		int r = one_case(&pc);
		compared += r == 1;
		refused += r == 0;
		failed += r < 0;
		if (failed > 10)
			break;
	}
	printf("  row path vs window loops: %d cases compared, %d refused by both, %d failed\n",
	       compared, refused, failed);
	CHECK_INT(failed, 0);
	CHECK(compared >= 1000);
}

/*
 * Against a float64 reference written from ONNX's definition: every window
 * of kernel 1..5, stride 1..3, pads 0..2 at either end, ceil_mode and
 * count_include_pad, on odd sizes, through whichever path pool.c picks (the
 * AVX-512 plane and row kernels where the CPU has them). The average
 * divides by the taps inside the input, or with count_include_pad by those
 * inside the input and its end pads (ONNX Runtime's rule: ceil_mode's
 * overhang past the pads is not counted); a max window wholly in the
 * padding gives -FLT_MAX. Tolerance: max exact, average 1e-6 relative to
 * the window's absolute sum (float additions in any order).
 */
static int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t pl, int64_t ph, int ceil_mode)
{
	int64_t span = in + pl + ph - k;
	int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
	/* ceil_mode: the last window starts inside the input or its left pad */
	if (ceil_mode && (o - 1) * s >= in + pl)
		o--;
	return o;
}

static int ref_case(const pool_case *pc, const float *x)
{
	char what[400];
	describe(pc, what, sizeof what);
	gc_tensor tx = harness_tensor(GC_DTYPE_FLOAT, 0, NULL, (void *)x);
	harness_run h;
	if (run_pool(pc, 0, &tx, &h)) {
		fprintf(stderr, "%s: %s\n", what, h.err.msg);
		harness_free(&h);
		return -1;
	}
	const int64_t H = pc->in[0], W = pc->in[1];
	const int64_t OH = out_len(H, pc->k[0], pc->s[0], pc->pl[0], pc->ph[0], pc->ceil_mode);
	const int64_t OW = out_len(W, pc->k[1], pc->s[1], pc->pl[1], pc->ph[1], pc->ceil_mode);
	const float *y = h.out[0].data;
	int ok = h.out[0].dims[2] == OH && h.out[0].dims[3] == OW;
	if (!ok)
		fprintf(stderr, "%s: output %" PRId64 "x%" PRId64 ", want %" PRId64 "x%" PRId64 "\n",
			what, h.out[0].dims[2], h.out[0].dims[3], OH, OW);
	for (int64_t c = 0; ok && c < pc->n * pc->c; c++)
		for (int64_t i = 0; ok && i < OH * OW; i++) {
			int64_t oh = i / OW, ow = i % OW, in_pad = 0, taps = 0;
			double best = -FLT_MAX, sum = 0, abs = 0;
			for (int64_t a = 0; a < pc->k[0]; a++)
				for (int64_t b = 0; b < pc->k[1]; b++) {
					int64_t r = oh * pc->s[0] - pc->pl[0] + a;
					int64_t q = ow * pc->s[1] - pc->pl[1] + b;
					in_pad += r < H + pc->ph[0] && q < W + pc->ph[1];
					if (r < 0 || r >= H || q < 0 || q >= W)
						continue;
					double v = x[(c * H + r) * W + q];
					best = v > best ? v : best;
					sum += v;
					abs += fabs(v);
					taps++;
				}
			double want = pc->is_max ? best : sum / (double)(pc->count_include_pad ? in_pad : taps);
			double got = y[c * OH * OW + i];
			double tol = pc->is_max ? 0 : 1e-6 * abs + 1e-30;
			ok = fabs(got - want) <= tol;
			if (!ok)
				fprintf(stderr, "%s: channel %" PRId64 " output (%" PRId64 ", %" PRId64
					"): %.9g, float64 reference %.9g\n",
					what, c, oh, ow, got, want);
		}
	harness_free(&h);
	return ok ? 1 : -1;
}

static void test_float64_reference(void)
{
	static const int64_t sizes[][2] = {{7, 9}, {17, 17}, {5, 37}};
	float x[2 * 3 * 17 * 37];
	rng_state = 4242;
	for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
		x[i] = (float)((int)rnd(8001) - 4000) / 1000.0f;
	int compared = 0, failed = 0;
	for (int is_max = 0; is_max < 2; is_max++)
		for (int64_t k = 1; k <= 5; k++)
			for (int64_t s = 1; s <= 3; s++)
				for (int64_t p = 0; p < 9; p++)
					for (int flags = 0; flags < 4; flags++) {
						pool_case pc = {.is_max = is_max, .nsp = 2, .n = 2, .c = 3};
						const int64_t *sz = sizes[(k + s + p) % 3];
						pc.in[0] = sz[0];
						pc.in[1] = sz[1];
						pc.k[0] = pc.k[1] = k;
						pc.s[0] = s;
						pc.s[1] = 1 + (s + p) % 3;
						pc.d[0] = pc.d[1] = 1;
						/* pads 0..2 either end, below the kernel */
						pc.pl[0] = pc.pl[1] = p / 3 < k ? p / 3 : k - 1;
						pc.ph[0] = pc.ph[1] = p % 3 < k ? p % 3 : k - 1;
						pc.ph[0] = pc.ph[0] > 0 && (p & 1) ? pc.ph[0] - 1 : pc.ph[0];
						pc.ceil_mode = flags & 1;
						pc.count_include_pad = (flags >> 1) & 1;
						if (is_max && pc.count_include_pad)
							continue;
						int r = ref_case(&pc, x);
						compared += r == 1;
						failed += r < 0;
						if (failed > 10)
							goto done;
					}
done:
	printf("  against float64: %d cases compared, %d failed\n", compared, failed);
	CHECK_INT(failed, 0);
	CHECK(compared > 500);
}

/* The pools of the reference models, and the edges named one by one: each
 * row is one test (its data drawn from a seed of its own). */
/* clang-format off */
static const pool_case named[] = {
	/* name                      max nsp f16 nan  n  c  in         k       s       d       pl      ph   ceil cip auto_pad */
	/* resnet18: 1x64x112x112, 3x3 stride 2 pad 1 */
	{"resnet18_maxpool",          1, 2,  0,  0,   1, 4, {112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0, 0, NULL},
	/* squeezenet1_0: 3x3 stride 2, ceil_mode, odd size */
	{"squeezenet_maxpool_ceil",   1, 2,  0,  0,   1, 3, {109, 109}, {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1, 0, NULL},
	/* the demo: 2x2 stride 2 */
	{"demo_maxpool_2x2",          1, 2,  0,  0,   1, 3, {32, 32},   {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	/* 2x2 stride 2 (pool.c's pool_2x2_range): odd sizes (a last row and
	 * column no window reads, 16 + 9 outputs a row), NaN and -inf, float16,
	 * an end pad no window reaches; ceil_mode's overhang takes the row path */
	{"maxpool_2x2_odd_nan",       1, 2,  0,  1,   2, 3, {13, 51},   {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	{"maxpool_2x2_float16",       1, 2,  1,  0,   1, 2, {9, 35},    {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	{"maxpool_2x2_unread_pad",    1, 2,  0,  0,   1, 2, {6, 34},    {2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 0, 0, NULL},
	{"maxpool_2x2_ceil",          1, 2,  0,  0,   1, 2, {7, 33},    {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1, 0, NULL},
	/* and the average's (densenet's transitions): the same edges, the pads
	 * counted or not */
	{"avgpool_2x2_odd",           0, 2,  0,  0,   2, 3, {13, 51},   {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	{"avgpool_2x2_densenet",      0, 2,  0,  0,   1, 2, {56, 56},   {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	{"avgpool_2x2_float16",       0, 2,  1,  0,   1, 2, {9, 35},    {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	{"avgpool_2x2_unread_pad",    0, 2,  0,  0,   1, 2, {6, 34},    {2, 2}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 0, 1, NULL},
	{"avgpool_2x2_ceil",          0, 2,  0,  0,   1, 2, {7, 33},    {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 1, 1, NULL},
	/* average, 3x3 stride 1 pad 1, with and without the pads counted */
	{"avgpool_pad1",              0, 2,  0,  0,   2, 3, {7, 9},     {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0, 0, NULL},
	{"avgpool_pad1_count_pad",    0, 2,  0,  0,   2, 3, {7, 9},     {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0, 1, NULL},
	/* windows wholly in the padding (pads wider than the kernel) */
	{"maxpool_all_pad_windows",   1, 2,  0,  0,   1, 2, {3, 4},     {2, 2}, {1, 3}, {1, 1}, {3, 3}, {2, 4}, 0, 0, NULL},
	{"avgpool_all_pad_windows",   0, 2,  0,  0,   1, 2, {3, 4},     {2, 2}, {1, 3}, {1, 1}, {3, 3}, {2, 4}, 0, 1, NULL},
	/* ceil_mode overhang past the end pad, dilated, stride 3 */
	{"avgpool_ceil_dilated",      0, 2,  0,  0,   1, 1, {10, 11},   {3, 2}, {3, 3}, {2, 3}, {0, 1}, {1, 0}, 1, 0, NULL},
	/* 1-D, width 1, kernel 1 */
	{"maxpool_1d_width1",         1, 1,  0,  0,   1, 2, {1, 1},     {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	/* a wide row: longer than any vector, odd */
	{"avgpool_1d_wide_row",       0, 1,  0,  0,   1, 1, {1, 1001},  {1, 5}, {1, 2}, {1, 1}, {0, 2}, {0, 2}, 0, 0, NULL},
	/* all NaN and -inf */
	{"maxpool_nan_inf",           1, 2,  0,  1,   1, 2, {13, 17},   {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0, 0, NULL},
	{"maxpool_float16",           1, 2,  1,  0,   1, 2, {13, 17},   {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0, 0, NULL},
	/* inception_v3's AveragePool 3x3/1 pad 1 with the padding counted (a
	 * folded Pad) and its MaxPools 3x3/2; googlenet's MaxPool 3x3/1 pad 1
	 * ceil_mode (the plane path); a 5x5 plane with uneven pads; 3x3/2
	 * average (the row kernel's even/odd columns) */
	{"inception_avgpool",         0, 2,  0,  0,   1, 5, {17, 17},   {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0, 1, NULL},
	{"inception_maxpool_s2",      1, 2,  0,  1,   1, 3, {71, 71},   {3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0, 0, NULL},
	{"googlenet_maxpool_s1",      1, 2,  0,  1,   1, 3, {14, 14},   {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, 0, NULL},
	{"avgpool_plane_5x5",         0, 2,  0,  0,   2, 2, {9, 21},    {5, 5}, {1, 1}, {1, 1}, {3, 2}, {1, 2}, 0, 0, NULL},
	{"avgpool_3x3_s2",            0, 2,  0,  0,   1, 3, {35, 35},   {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 1, 1, NULL},
	/* the plane path's column sums read shifted by -16..16 lanes: dilated,
	 * 7x7, shifts of 16 at both ends; 17 takes the row path */
	{"maxpool_plane_dil2",        1, 2,  0,  1,   1, 3, {15, 19},   {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, 0, 0, NULL},
	{"avgpool_plane_7x7",         0, 2,  0,  0,   1, 2, {11, 13},   {7, 7}, {1, 1}, {1, 1}, {3, 3}, {3, 3}, 0, 1, NULL},
	{"maxpool_plane_shift16",     1, 2,  0,  1,   1, 2, {5, 40},    {1, 33}, {1, 1}, {1, 1}, {0, 16}, {0, 16}, 0, 0, NULL},
	{"avgpool_row_shift17",       0, 2,  0,  0,   1, 2, {5, 40},    {1, 35}, {1, 1}, {1, 1}, {0, 17}, {0, 17}, 0, 0, NULL},
};
/* clang-format on */
#define N_NAMED (sizeof named / sizeof named[0])

/* Test i: a named case, or after them the random ones. */
static const char *test_name(size_t i)
{
	return i < N_NAMED ? named[i].name : i == N_NAMED ? "row_path_random" : "float64_reference";
}

static void run_test(size_t i)
{
	if (i == N_NAMED) {
		test_row_path_random();
		return;
	}
	if (i == N_NAMED + 1) {
		test_float64_reference();
		return;
	}
	rng_state = 99 + i;
	int r = one_case(&named[i]);
	if (r != 1) {
		fprintf(stderr, "%s:%d: %s: one_case gave %d, expected 1 (compared)\n", __FILE__,
			__LINE__, named[i].name, r);
		check_failed_ = 1;
	}
}

int main(int argc, char **argv)
{
	return check_run_all_(argc, argv, N_NAMED + 2, test_name, run_test);
}
