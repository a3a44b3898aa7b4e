/*
 * com.graphcc::SqueezeExcite (fused.h): the squeeze-and-excitation block
 * of MobileNetV3 and EfficientNet as lib/pass-fuse-se.c finds it,
 *
 *   s = mean of x over its spatial axes            (GlobalAveragePool)
 *   h = act(W1 s + b1)                            (1x1 Conv, Relu/Swish/none)
 *   g = gate(W2 h + b2)                           (1x1 Conv, Sigmoid/HardSigmoid)
 *   y = x * g, broadcast over the spatial axes     (Mul)
 *
 * in two passes over x (the mean, the scaling) and one job instead of five
 * nodes, their four small intermediate tensors and a thread hand-off each.
 * Inputs: x float32 [N, C, spatial...], W1 [Cm, C, 1...], b1 [Cm], W2 [C,
 * Cm, 1...], b2 [C]. Attributes: act ("relu", "swish" or "none"), gate ("sigmoid" or
 * "hardsigmoid" with alpha, beta).
 */
#include <inttypes.h>
#include <math.h>

#include "../ops.h"
#include "kutil.h"
#include "nn-par.h"
#include "nn.h"
#include "vmath.h"

GC_NN_O3

enum { SE_ACT_NONE, SE_ACT_RELU, SE_ACT_SWISH };

typedef struct se_state {
	int64_t n, c, cm, sp;
	int act, hard;
	float alpha, beta;
} se_state;

/* The job's three phases, each split over the channels (the hidden units
 * for SE_HIDDEN) into `per` parts, in one job: a phase's parts wait for
 * the previous phase's (gc_nn_par_wait), so its threads go from one to the
 * next without a hand-off, and the first 1x1 conv is split too. */
enum { SE_MEANS, SE_HIDDEN, SE_SCALE, SE_PHASES };

typedef struct se_job {
	const se_state *st;
	const float *x, *w1, *b1, *w2, *b2;
	float *y, *s, *h, *g;
	int per;
	atomic_int done[SE_SCALE]; /* parts finished of the means and of h */
} se_job;

/* y = x * g, in place or not (restrict lets either loop vectorise). */
static inline void scale_row(float *restrict y, const float *restrict x, float g, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * g;
}

static inline void scale_in_place(float *y, float g, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] *= g;
}

/* out[o] = w[o] . v + b[o] for o in [lo, hi): rows of a 1x1 conv on a
 * vector (w [rows][n]), on the matrix-vector kernel of gemm.c (8 rows of
 * weights streamed side by side: ~1 MB each in mobilenet_v3's last blocks,
 * from L3). */
static void se_matvec(const float *w, int64_t n, const float *v, const float *b, float *out,
		      int64_t lo, int64_t hi)
{
	gc_nn_gemv_rows(w, n, v, 1.0f, out, lo, hi);
	for (int64_t o = lo; o < hi; o++)
		out[o] += b[o];
}

/* h[lo, hi) = act(W1 s + b1): rows of the first 1x1 conv. */
GC_NN_SIMD static void se_hidden(const se_job *j, int64_t lo, int64_t hi)
{
	const se_state *st = j->st;
	float *h = j->h;
	se_matvec(j->w1, st->c, j->s, j->b1, h, lo, hi);
	if (st->act == SE_ACT_RELU)
		for (int64_t o = lo; o < hi; o++)
			h[o] = h[o] > 0 ? h[o] : 0;
	else if (st->act == SE_ACT_SWISH)
		for (int64_t o = lo; o < hi; o++)
			h[o] = h[o] * gc_vm_sigmoidf(h[o]);
}

/* Channels [lo, hi): their gates (row c of W2 times h, b2, the gate), then
 * the scaling. Each channel's gate is computed where it is used: the
 * second 1x1 conv is split over the threads with the scaling. */
GC_NN_SIMD static void se_scale(const se_job *j, int64_t lo, int64_t hi)
{
	const se_state *st = j->st;
	float *g = j->g;
	se_matvec(j->w2, st->cm, j->h, j->b2, g, lo, hi);
	if (st->hard)
		for (int64_t c = lo; c < hi; c++) {
			float v = st->alpha * g[c] + st->beta;
			g[c] = v < 0 ? 0 : v > 1 ? 1 : v;
		}
	else
		for (int64_t c = lo; c < hi; c++)
			g[c] = gc_vm_sigmoidf(g[c]);
	for (int64_t c = lo; c < hi; c++) {
		const float *xc = j->x + c * st->sp;
		float *yc = j->y + c * st->sp;
		if (yc == xc)
			scale_in_place(yc, g[c], st->sp);
		else
			scale_row(yc, xc, g[c], st->sp);
	}
}

GC_NN_SIMD static void se_part(void *arg, int part, int parts, int slot)
{
	se_job *j = arg;
	const se_state *st = j->st;
	int phase = part / j->per;
	int64_t lo, hi;
	(void)parts;
	(void)slot;
	if (phase > SE_MEANS)
		gc_nn_par_wait(&j->done[phase - 1], j->per);
	gc_nn_part_range(phase == SE_HIDDEN ? st->cm : st->c, part % j->per, j->per, &lo, &hi);
	if (phase == SE_MEANS)
		for (int64_t c = lo; c < hi; c++)
			j->s[c] = gc_nn_sum_f32(j->x + c * st->sp, st->sp) / (float)st->sp;
	else if (phase == SE_HIDDEN)
		se_hidden(j, lo, hi);
	else
		se_scale(j, lo, hi);
	if (phase < SE_SCALE)
		atomic_fetch_add_explicit(&j->done[phase], 1, memory_order_release);
}

static int se_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const se_state *st = n->state;
	float *s = k->scratch, *h = s + st->c, *g = h + st->cm;
	/* two passes over x (~sp / 8 cycles a channel with its loads and
	 * stores) plus ~60 cycles a channel (its sum, dot product and gate)
	 * and the two 1x1 convs (cm / 8 each) */
	double cycles = (double)st->c * ((double)st->sp / 4 + 60 + (double)st->cm / 4);
	int threads = gc_nn_par_threads(k->threads, cycles);
	int per = threads > 1 ? gc_nn_par_parts(threads, st->c) : 1;
	for (int64_t b = 0; b < st->n; b++) {
		se_job j = {.st = st,
			    .x = (const float *)in[0]->data + b * st->c * st->sp,
			    .y = (float *)out[0]->data + b * st->c * st->sp,
			    .w1 = in[1]->data,
			    .b1 = in[2]->data,
			    .w2 = in[3]->data,
			    .b2 = in[4]->data,
			    .s = s,
			    .h = h,
			    .g = g,
			    .per = per};
		for (int i = 0; i < SE_SCALE; i++)
			atomic_init(&j.done[i], 0);
		if (threads > 1)
			gc_nn_parallel_ordered(threads, SE_PHASES * per, se_part, &j);
		else
			for (int p = 0; p < SE_PHASES; p++)
				se_part(&j, p, SE_PHASES, 0);
	}
	return 0;
}

/* W [rows, cols, 1...] or b [rows] (cols 0) of float32. */
static int se_check(gc_kctx *k, const gc_tensor *t, const char *what, int64_t rows, int64_t cols)
{
	bool ok = t->dtype == GC_DTYPE_FLOAT && t->rank >= (cols ? 2 : 1) && t->dims[0] == rows &&
		  (!cols ? t->rank == 1 : t->dims[1] == cols);
	for (int i = 2; ok && cols && i < t->rank; i++)
		ok = t->dims[i] == 1;
	if (!ok) {
		char sh[128];
		return gc_kerr(k, GC_EINVAL,
			       "input %s is %s %s; expected float32 [%" PRId64 "%s%" PRId64 "%s]",
			       what, gc_dtype_name(t->dtype), gc_shape_str(t->dims, t->rank, sh, sizeof sh),
			       rows, cols ? ", " : "", cols, cols ? ", 1..." : "");
	}
	return 0;
}

int gc_prepare_SqueezeExcite(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (x->dtype != GC_DTYPE_FLOAT || x->rank < 3)
		return gc_kerr(k, GC_EUNSUPPORTED, "input x is %s of rank %d; SqueezeExcite takes "
			       "float32 [N, C, spatial...]", gc_dtype_name(x->dtype), x->rank);
	const gc_tensor *w1 = in[1];
	int64_t c = x->dims[1], cm = w1->rank >= 1 ? w1->dims[0] : 0;
	if (se_check(k, w1, "W1", cm, c) || se_check(k, in[2], "B1", cm, 0) ||
	    se_check(k, in[3], "W2", c, cm) || se_check(k, in[4], "B2", c, 0))
		return gc_kok(k);
	static const char *const acts[] = {[SE_ACT_NONE] = "none", [SE_ACT_RELU] = "relu",
					   [SE_ACT_SWISH] = "swish"};
	static const char *const gates[] = {"sigmoid", "hardsigmoid"};
	int a = gc_attr_pick(k, "act", "none", acts, 3);
	int hard = gc_attr_pick(k, "gate", "sigmoid", gates, 2);
	float alpha = gc_attr_f(k, "alpha", 0.2f), beta = gc_attr_f(k, "beta", 0.5f);
	if (gc_kok(k))
		return gc_kok(k);
	se_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	int64_t sp = 1;
	for (int i = 2; i < x->rank; i++)
		if (!gc_mul_i64(sp, x->dims[i], &sp))
			return gc_kerr(k, GC_ELIMIT, "input x is too large");
	*st = (se_state){.n = x->dims[0], .c = c, .cm = cm, .sp = sp, .act = a,
			 .hard = hard, .alpha = alpha, .beta = beta};
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->scratch_bytes = gc_nn_align((uint64_t)(2 * c + cm) * sizeof(float));
	n->run = se_run;
	n->inplace_ok = true; /* each element of x is read before its y is written */
	return gc_kok(k);
}
