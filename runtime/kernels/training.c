/*
 * The optimizers of ai.onnx.preview.training (opset 1), as ONNX's reference
 * (onnx/backend/test/case/node/{adagrad,adam,momentum}.py) defines them.
 * Each updates n tensors at once. Inputs: R (learning rate, float or double
 * scalar), T (update count, int64 scalar), then n tensors per group: the
 * X_i, their gradients G_i, and their state (Adagrad: H_i; Adam: V_i then
 * H_i; Momentum: V_i). Outputs: the n X_new, then the new state, group by
 * group; trailing outputs may be left out. Every G, V, H has its X's shape
 * and all of them one type, float or double.
 *
 *   Adagrad:  r = R / (1 + T * decay_factor); g = norm_coefficient * X + G
 *             H' = H + g * g;  X' = X - r * g / (sqrt(H') + epsilon)
 *   Adam:     g = norm_coefficient * X + G
 *             V' = alpha * V + (1 - alpha) * g
 *             H' = beta * H + (1 - beta) * g * g
 *             r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
 *             X' = (1 - norm_coefficient_post) * (X - r * V' / (sqrt(H') + epsilon))
 *   Momentum: g = norm_coefficient * X + G;  b = T > 0 ? beta : 1
 *             V' = alpha * V + b * g
 *             X' = X - R * V'                  (mode "standard")
 *             X' = X - R * (g + alpha * V')    (mode "nesterov")
 *
 * The scalar factors are worked out in double, the element loops run in the
 * tensors' own type.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "../alloc.h"
#include "training.h"
#include "value-impl.h"

typedef enum opt_kind { OPT_ADAGRAD, OPT_ADAM, OPT_MOMENTUM } opt_kind;

typedef struct opt_plan {
	opt_kind kind;
	int32_t n;	/* tensors optimized */
	int32_t nstate; /* state tensors per X: 1 (H or V) or 2 (V, H) */
	double norm, norm_post, alpha, beta, eps, decay;
	bool nesterov;
} opt_plan;

/* The scalar factors of one run, from R, T and the attributes. */
typedef struct opt_coef {
	double r;     /* the learning rate as applied */
	double alpha; /* Adam: alpha; Momentum: alpha */
	double beta;  /* Adam: beta; Momentum: beta as adjusted for T */
} opt_coef;

/* Input index of tensor i of group g (0: X, 1: G, 2..: state). */
static int64_t in_at(int32_t group, int32_t n, int32_t i)
{
	return 2 + (int64_t)group * n + i;
}

/* Output slot of group g (0: X_new, 1..: state) for tensor i, or NULL when
 * the node does not compute it. */
static gc_tensor *out_at(const gc_node *n, gc_tensor *const *out, int32_t count, int32_t group,
			 int32_t i)
{
	int64_t j = (int64_t)group * count + i;
	if (j >= n->n_out || !out[j] || (n->out && n->out[j] < 0))
		return NULL;
	return out[j];
}

#define OPT_DEFINE(T, sfx, SQRT)                                                                   \
	static void adagrad_##sfx(const opt_plan *p, const opt_coef *c, int64_t len, const T *x,   \
				  const T *g, const T *h, T *xo, T *ho)                            \
	{                                                                                          \
		const T norm = (T)p->norm, r = (T)c->r, eps = (T)p->eps;                           \
		for (int64_t j = 0; j < len; j++) {                                                \
			T gr = norm * x[j] + g[j];                                                 \
			T hn = h[j] + gr * gr;                                                     \
			T xn = x[j] - r * gr / (SQRT(hn) + eps);                                   \
			if (ho)                                                                    \
				ho[j] = hn;                                                        \
			if (xo)                                                                    \
				xo[j] = xn;                                                        \
		}                                                                                  \
	}                                                                                          \
	static void adam_##sfx(const opt_plan *p, const opt_coef *c, int64_t len, const T *x,      \
			       const T *g, const T *v, const T *h, T *xo, T *vo, T *ho)            \
	{                                                                                          \
		const T norm = (T)p->norm, r = (T)c->r, eps = (T)p->eps, a = (T)c->alpha,          \
			b = (T)c->beta, post = (T)(1 - p->norm_post);                              \
		const T a1 = (T)(1 - c->alpha), b1 = (T)(1 - c->beta);                             \
		for (int64_t j = 0; j < len; j++) {                                                \
			T gr = norm * x[j] + g[j];                                                 \
			T vn = a * v[j] + a1 * gr;                                                 \
			T hn = b * h[j] + b1 * (gr * gr);                                          \
			T xn = post * (x[j] - r * (vn / (SQRT(hn) + eps)));                        \
			if (vo)                                                                    \
				vo[j] = vn;                                                        \
			if (ho)                                                                    \
				ho[j] = hn;                                                        \
			if (xo)                                                                    \
				xo[j] = xn;                                                        \
		}                                                                                  \
	}                                                                                          \
	static void momentum_##sfx(const opt_plan *p, const opt_coef *c, int64_t len, const T *x,  \
				   const T *g, const T *v, T *xo, T *vo)                           \
	{                                                                                          \
		const T norm = (T)p->norm, r = (T)c->r, a = (T)c->alpha, b = (T)c->beta;           \
		for (int64_t j = 0; j < len; j++) {                                                \
			T gr = norm * x[j] + g[j];                                                 \
			T vn = a * v[j] + b * gr;                                                  \
			T xn = p->nesterov ? x[j] - r * (gr + a * vn) : x[j] - r * vn;             \
			if (vo)                                                                    \
				vo[j] = vn;                                                        \
			if (xo)                                                                    \
				xo[j] = xn;                                                        \
		}                                                                                  \
	}                                                                                          \
	static void opt_apply_##sfx(const gc_node *n, const opt_plan *p, const opt_coef *c,        \
				    gc_tensor *const *in, gc_tensor *const *out)                   \
	{                                                                                          \
		int32_t cnt = p->n;                                                                \
		for (int32_t i = 0; i < cnt; i++) {                                                \
			const gc_tensor *xt = in[in_at(0, cnt, i)];                                \
			int64_t len = gc_tensor_numel(xt);                                         \
			const T *x = xt->data, *g = in[in_at(1, cnt, i)]->data,                    \
				*s1 = in[in_at(2, cnt, i)]->data;                                  \
			gc_tensor *o0 = out_at(n, out, cnt, 0, i),                                 \
				  *o1 = out_at(n, out, cnt, 1, i);                                 \
			T *xo = o0 ? o0->data : NULL, *so1 = o1 ? o1->data : NULL;                 \
			if (p->kind == OPT_ADAGRAD) {                                              \
				adagrad_##sfx(p, c, len, x, g, s1, xo, so1);                       \
			} else if (p->kind == OPT_MOMENTUM) {                                      \
				momentum_##sfx(p, c, len, x, g, s1, xo, so1);                      \
			} else {                                                                   \
				const T *s2 = in[in_at(3, cnt, i)]->data;                          \
				gc_tensor *o2 = out_at(n, out, cnt, 2, i);                         \
				adam_##sfx(p, c, len, x, g, s1, s2, xo, so1,                       \
					   o2 ? o2->data : NULL);                                  \
			}                                                                          \
		}                                                                                  \
	}

OPT_DEFINE(float, f32, sqrtf)
OPT_DEFINE(double, f64, sqrt)

static opt_coef opt_coefs(const opt_plan *p, double r, int64_t t)
{
	opt_coef c = {.r = r, .alpha = p->alpha, .beta = p->beta};
	switch (p->kind) {
	case OPT_ADAGRAD:
		c.r = r / (1 + (double)t * p->decay);
		break;
	case OPT_ADAM:
		if (t > 0)
			c.r =
			    r * sqrt(1 - pow(p->beta, (double)t)) / (1 - pow(p->alpha, (double)t));
		break;
	case OPT_MOMENTUM:
		c.beta = t > 0 ? p->beta : 1;
		break;
	}
	return c;
}

static int opt_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const opt_plan *p = n->state;
	int64_t t = ((const int64_t *)in[1]->data)[0];
	opt_coef c = opt_coefs(p, gc_kv_load(in[0], 0), t);
	if (in[2]->dtype == GC_DTYPE_DOUBLE)
		opt_apply_f64(n, p, &c, in, out);
	else
		opt_apply_f32(n, p, &c, in, out);
	return 0;
}

/* The name of input j, for messages: "X_2", "G_1", "H_3". */
static const char *group_name(const opt_plan *p, int32_t group)
{
	static const char *const adam[] = {"X", "G", "V", "H"};
	if (group < 2 || p->kind == OPT_ADAM)
		return adam[group];
	return p->kind == OPT_ADAGRAD ? "H" : "V";
}

static int prepare_opt(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		       opt_kind kind)
{
	opt_plan pl = {.kind = kind, .nstate = kind == OPT_ADAM ? 2 : 1};
	const int32_t groups = 2 + pl.nstate;
	switch (kind) {
	case OPT_ADAGRAD:
		pl.norm = gc_attr_f(k, "norm_coefficient", 0.0f);
		pl.eps = gc_attr_f(k, "epsilon", 1e-6f);
		pl.decay = gc_attr_f(k, "decay_factor", 0.0f);
		break;
	case OPT_ADAM:
		pl.norm = gc_attr_f(k, "norm_coefficient", 0.0f);
		pl.norm_post = gc_attr_f(k, "norm_coefficient_post", 0.0f);
		pl.alpha = gc_attr_f(k, "alpha", 0.9f);
		pl.beta = gc_attr_f(k, "beta", 0.999f);
		pl.eps = gc_attr_f(k, "epsilon", 1e-6f);
		break;
	case OPT_MOMENTUM: {
		static const char *const required[] = {"alpha", "beta", "mode", "norm_coefficient"};
		for (int i = 0; i < 4; i++)
			if (!gc_attr_find(n, required[i]))
				return gc_kerr(k, GC_EINVAL, "required attribute '%s' is missing",
					       required[i]);
		pl.norm = gc_attr_f(k, "norm_coefficient", 0.0f);
		pl.alpha = gc_attr_f(k, "alpha", 0.0f);
		pl.beta = gc_attr_f(k, "beta", 0.0f);
		const char *mode = gc_attr_s(k, "mode", "standard");
		if (gc_kok(k))
			return gc_kok(k);
		if (!strcmp(mode, "nesterov"))
			pl.nesterov = true;
		else if (strcmp(mode, "standard"))
			return gc_kerr(
			    k, GC_EINVAL,
			    "attribute 'mode' is '%s'; expected 'standard' or 'nesterov'", mode);
		break;
	}
	}
	if (gc_kok(k))
		return gc_kok(k);
	if ((n->n_in - 2) % groups != 0)
		return gc_kerr(k, GC_EINVAL,
			       "has %d inputs; expected R, T and then %d tensors per optimized "
			       "tensor (%s), so 2 + %d*n",
			       n->n_in, groups,
			       kind == OPT_ADAM	     ? "X, G, V, H"
			       : kind == OPT_ADAGRAD ? "X, G, H"
						     : "X, G, V",
			       groups);
	pl.n = (n->n_in - 2) / groups;
	if (n->n_out > pl.n * (1 + pl.nstate))
		return gc_kerr(
		    k, GC_EINVAL,
		    "has %d outputs; for %d optimized tensors it has at most %d (the new "
		    "X, then the new state)",
		    n->n_out, pl.n, pl.n * (1 + pl.nstate));
	for (int j = 0; j < n->n_in; j++)
		if (!in[j])
			return gc_kerr(k, GC_EINVAL, "input %d is empty; every input is required",
				       j);
	const gc_tensor *r = in[0], *t = in[1];
	if ((r->dtype != GC_DTYPE_FLOAT && r->dtype != GC_DTYPE_DOUBLE) || gc_tensor_numel(r) != 1)
		return gc_kerr(k, GC_EINVAL,
			       "input R (learning rate) is %s of %" PRId64
			       " elements; expected a float or double scalar",
			       gc_dtype_name(r->dtype), gc_tensor_numel(r));
	if (t->dtype != GC_DTYPE_INT64 || gc_tensor_numel(t) != 1)
		return gc_kerr(k, GC_EINVAL,
			       "input T (update count) is %s of %" PRId64
			       " elements; expected an int64 scalar",
			       gc_dtype_name(t->dtype), gc_tensor_numel(t));
	gc_dtype dt = in[2]->dtype;
	if (dt != GC_DTYPE_FLOAT && dt != GC_DTYPE_DOUBLE)
		return gc_kerr(k, GC_EINVAL, "input X_1 is %s; expected float or double",
			       gc_dtype_name(dt));
	char s1[128], s2[128];
	for (int32_t i = 0; i < pl.n; i++) {
		const gc_tensor *x = in[in_at(0, pl.n, i)];
		for (int32_t g = 0; g < groups; g++) {
			const gc_tensor *e = in[in_at(g, pl.n, i)];
			bool same = e->rank == x->rank && e->dtype == dt;
			for (int d = 0; same && d < e->rank; d++)
				same = e->dims[d] == x->dims[d];
			if (!same)
				return gc_kerr(k, GC_EINVAL,
					       "input %s_%d is %s %s; it must be %s like X_1 and "
					       "of X_%d's shape %s",
					       group_name(&pl, g), i + 1, gc_dtype_name(e->dtype),
					       gc_shape_str(e->dims, e->rank, s1, sizeof s1),
					       gc_dtype_name(dt), i + 1,
					       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
		}
		for (int32_t g = 0; g <= pl.nstate; g++) {
			/* output group 0 is X_new, 1.. the state in input order */
			int64_t j = (int64_t)g * pl.n + i;
			if (j < n->n_out && out[j])
				gc_set_shape(out[j], dt, x->rank, x->dims);
		}
	}
	opt_plan *st = gc_calloc(1, sizeof *st);
	if (!st)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	*st = pl;
	n->state = st;
	n->state_free = gc_free;
	n->run = opt_run;
	return 0;
}

int gc_prepare_Adagrad(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_opt(k, n, in, out, OPT_ADAGRAD);
}

int gc_prepare_Adam(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_opt(k, n, in, out, OPT_ADAM);
}

int gc_prepare_Momentum(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_opt(k, n, in, out, OPT_MOMENTUM);
}
