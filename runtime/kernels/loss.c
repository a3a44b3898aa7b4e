/*
 * NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13), as
 * ONNX's reference defines them: input (N, C, d1..dk), target (N, d1..dk)
 * of class indices, optional per-class weight (C). A target equal to
 * ignore_index contributes nothing (weight 0); reduction "mean" divides by
 * the sum of the weights taken (the element count when there are no weights
 * and no ignore_index), "sum" adds up, "none" keeps (N, d1..dk).
 * float16, bfloat16, float and double; sums in double.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../alloc.h"
#include "loss.h"
#include "shape-impl.h"
#include "value-impl.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_plan {
	int reduction;
	bool has_ignore;
	int64_t ignore;
	int64_t n, c, d; /* input viewed as (n, c, d) */
	bool softmax;	 /* SoftmaxCrossEntropyLoss */
	bool log_prob;	 /* its second output is wanted */
} loss_plan;

static int has_out(const gc_node *n, gc_tensor *const *out, int i)
{
	return i < n->n_out && out[i] && (!n->out || n->out[i] >= 0);
}

/*
 * The log-probabilities the loss reads: for SoftmaxCrossEntropyLoss,
 * log_softmax of the scores along axis 1 into scratch (doubles); for
 * NegativeLogLikelihoodLoss, the input itself (lp NULL).
 */
static void log_softmax(const loss_plan *p, const gc_tensor *x, double *lp)
{
	for (int64_t i = 0; i < p->n; i++)
		for (int64_t j = 0; j < p->d; j++) {
			int64_t base = i * p->c * p->d + j;
			double mx = -INFINITY, s = 0;
			for (int64_t c = 0; c < p->c; c++) {
				double v = gc_kv_load(x, base + c * p->d);
				mx = v > mx ? v : mx;
			}
			for (int64_t c = 0; c < p->c; c++)
				s += exp(gc_kv_load(x, base + c * p->d) - mx);
			double ls = log(s);
			for (int64_t c = 0; c < p->c; c++)
				lp[base + c * p->d] = gc_kv_load(x, base + c * p->d) - mx - ls;
		}
}

static int run_loss(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const loss_plan *p = n->state;
	const gc_tensor *x = in[0], *t = in[1];
	const gc_tensor *w = n->n_in > 2 ? in[2] : NULL;
	double *lp = NULL;
	if (p->softmax) {
		lp = k->scratch;
		log_softmax(p, x, lp);
		if (p->log_prob)
			for (int64_t i = 0; i < p->n * p->c * p->d; i++)
				gc_kv_store(out[1], i, lp[i]);
	}
	double sum = 0, wsum = 0;
	for (int64_t i = 0; i < p->n; i++)
		for (int64_t j = 0; j < p->d; j++) {
			int64_t ti = i * p->d + j, cls = gc_index_at(t, ti);
			double l = 0, wt = 0;
			if (!(p->has_ignore && cls == p->ignore)) {
				if (cls < 0 || cls >= p->c)
					return gc_kerr(k, GC_EINVAL,
						       "target %" PRId64 " at flat index %" PRId64
						       " is outside [0, %" PRId64 ")",
						       cls, ti, p->c);
				int64_t xi = (i * p->c + cls) * p->d + j;
				wt = w ? gc_kv_load(w, cls) : 1.0;
				l = -(lp ? lp[xi] : gc_kv_load(x, xi)) * wt;
			}
			if (p->reduction == RED_NONE)
				gc_kv_store(out[0], ti, l);
			sum += l;
			wsum += wt;
		}
	if (p->reduction == RED_SUM)
		gc_kv_store(out[0], 0, sum);
	else if (p->reduction == RED_MEAN)
		gc_kv_store(out[0], 0,
			    w || p->has_ignore ? sum / wsum : sum / (double)(p->n * p->d));
	return 0;
}

static int prepare_loss(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			bool softmax)
{
	const gc_tensor *x = in[0], *t = in[1];
	const gc_tensor *w = n->n_in > 2 ? in[2] : NULL;
	const char *xname = softmax ? "scores" : "input", *tname = softmax ? "labels" : "target";
	const char *red = gc_attr_s(k, "reduction", "mean");
	const gc_attr *ig = gc_attr_find(n, "ignore_index");
	int64_t ignore = gc_attr_i(k, "ignore_index", 0);
	if (gc_kok(k))
		return gc_kok(k);
	int reduction;
	if (!strcmp(red, "none"))
		reduction = RED_NONE;
	else if (!strcmp(red, "sum"))
		reduction = RED_SUM;
	else if (!strcmp(red, "mean"))
		reduction = RED_MEAN;
	else
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'reduction' is '%s'; expected 'none', 'sum' or 'mean'",
			       red);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EINVAL, "input '%s' must be a floating-point tensor, not %s",
			       xname, gc_dtype_name(x->dtype));
	if (x->rank < 2)
		return gc_kerr(k, GC_EINVAL, "input '%s' must have rank >= 2 (N, C, ...), not %d",
			       xname, x->rank);
	if (gc_check_index_type(k, t, tname))
		return gc_kok(k);
	char s1[128], s2[128];
	bool ok = t->rank == x->rank - 1 && t->dims[0] == x->dims[0];
	for (int i = 1; ok && i < t->rank; i++)
		ok = t->dims[i] == x->dims[i + 1];
	if (!ok)
		return gc_kerr(
		    k, GC_EINVAL,
		    "input '%s' has shape %s; for '%s' of shape %s it must be (N, d1, ..., dk)",
		    tname, gc_shape_str(t->dims, t->rank, s1, sizeof s1), xname,
		    gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	if (w) {
		if (w->dtype != x->dtype)
			return gc_kerr(k, GC_EINVAL, "input 'weights' is %s, but '%s' is %s",
				       gc_dtype_name(w->dtype), xname, gc_dtype_name(x->dtype));
		if (w->rank != 1 || w->dims[0] != x->dims[1])
			return gc_kerr(k, GC_EINVAL,
				       "input 'weights' has shape %s; expected (%" PRId64 ")",
				       gc_shape_str(w->dims, w->rank, s1, sizeof s1), x->dims[1]);
	}
	loss_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->reduction = reduction;
	p->has_ignore = ig != NULL;
	p->ignore = ignore;
	p->n = x->dims[0];
	p->c = x->dims[1];
	p->d = 1;
	for (int i = 2; i < x->rank; i++)
		p->d *= x->dims[i];
	p->softmax = softmax;
	p->log_prob = softmax && has_out(n, out, 1);
	if (reduction == RED_NONE)
		gc_set_shape(out[0], x->dtype, t->rank, t->dims);
	else
		gc_set_shape(out[0], x->dtype, 0, NULL);
	if (p->log_prob)
		gc_set_shape(out[1], x->dtype, x->rank, x->dims);
	if (softmax)
		n->scratch_bytes = (uint64_t)(p->n * p->c * p->d) * sizeof(double);
	n->run = run_loss;
	return 0;
}

int gc_prepare_NegativeLogLikelihoodLoss(gc_kctx *k, gc_node *n, gc_tensor *const *in,
					 gc_tensor *const *out)
{
	return prepare_loss(k, n, in, out, false);
}

int gc_prepare_SoftmaxCrossEntropyLoss(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				       gc_tensor *const *out)
{
	return prepare_loss(k, n, in, out, true);
}
