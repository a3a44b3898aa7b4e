/*
 * RNN, GRU and LSTM (opsets 7-14) as ONNX defines them: forward, reverse or
 * bidirectional; layout 0 (X is seq x batch x input) or 1 (batch first);
 * optional bias, sequence_lens (steps past a sequence's length give zeros
 * in Y and leave the state alone), initial states, LSTM peepholes and
 * input_forget, GRU linear_before_reset, clip, and every activation ONNX
 * lists with its alpha/beta. Gate order: GRU z, r, h; LSTM i, o, f, c
 * (peepholes i, o, f). Computed in double; float16, float and double.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "../alloc.h"
#include "rnn.h"
#include "value-impl.h"

enum { K_RNN, K_GRU, K_LSTM };
enum {
	A_RELU,
	A_TANH,
	A_SIGMOID,
	A_AFFINE,
	A_LEAKYRELU,
	A_THRESHOLDEDRELU,
	A_SCALEDTANH,
	A_HARDSIGMOID,
	A_ELU,
	A_SOFTSIGN,
	A_SOFTPLUS,
	A_COUNT
};
static const char *const act_names[A_COUNT] = {
    "Relu",	  "Tanh",	 "Sigmoid", "Affine",	"LeakyRelu", "ThresholdedRelu",
    "ScaledTanh", "HardSigmoid", "Elu",	    "Softsign", "Softplus"};

typedef struct act {
	int kind;
	double alpha, beta;
} act;

typedef struct rnn_plan {
	int kind, gates, n_act;
	int64_t seq, batch, in, hid, dirs;
	bool layout1, reverse_only, lbr, input_forget;
	double clip; /* 0: none */
	act acts[6]; /* n_act per direction */
	bool has_y, has_yh, has_yc;
} rnn_plan;

static double apply(const act *a, double x)
{
	switch (a->kind) {
	case A_RELU:
		return x > 0 ? x : 0;
	case A_TANH:
		return tanh(x);
	case A_SIGMOID:
		return 1 / (1 + exp(-x));
	case A_AFFINE:
		return a->alpha * x + a->beta;
	case A_LEAKYRELU:
		return x >= 0 ? x : a->alpha * x;
	case A_THRESHOLDEDRELU:
		return x > a->alpha ? x : 0;
	case A_SCALEDTANH:
		return a->alpha * tanh(a->beta * x);
	case A_HARDSIGMOID: {
		double v = a->alpha * x + a->beta;
		return v < 0 ? 0 : v > 1 ? 1 : v;
	}
	case A_ELU:
		return x >= 0 ? x : a->alpha * (exp(x) - 1);
	case A_SOFTSIGN:
		return x / (1 + fabs(x));
	default:
		return log1p(exp(x));
	}
}

static bool present(const gc_node *n, gc_tensor *const *t, int i, int count)
{
	return i < count && t[i] && (!n->in || n->in[i] >= 0);
}

static bool out_present(const gc_node *n, gc_tensor *const *t, int i)
{
	return i < n->n_out && t[i] && (!n->out || n->out[i] >= 0);
}

/* X[t][b][i] under either layout */
static int64_t x_at(const rnn_plan *p, int64_t t, int64_t b, int64_t i)
{
	return p->layout1 ? (b * p->seq + t) * p->in + i : (t * p->batch + b) * p->in + i;
}

/* state tensors: [dir][b][h] (layout 0) or [b][dir][h] (layout 1) */
static int64_t s_at(const rnn_plan *p, int64_t d, int64_t b, int64_t h)
{
	return p->layout1 ? (b * p->dirs + d) * p->hid + h : (d * p->batch + b) * p->hid + h;
}

static int64_t y_at(const rnn_plan *p, int64_t t, int64_t d, int64_t b, int64_t h)
{
	return p->layout1 ? ((b * p->seq + t) * p->dirs + d) * p->hid + h
			  : ((t * p->dirs + d) * p->batch + b) * p->hid + h;
}

static int run_rnn(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const rnn_plan *p = n->state;
	const gc_tensor *X = in[0], *W = in[1], *R = in[2];
	const gc_tensor *B = present(n, in, 3, n->n_in) ? in[3] : NULL;
	const gc_tensor *L = present(n, in, 4, n->n_in) ? in[4] : NULL;
	const gc_tensor *H0 = present(n, in, 5, n->n_in) ? in[5] : NULL;
	const gc_tensor *C0 = p->kind == K_LSTM && present(n, in, 6, n->n_in) ? in[6] : NULL;
	const gc_tensor *P = p->kind == K_LSTM && present(n, in, 7, n->n_in) ? in[7] : NULL;
	int64_t H = p->hid, G = p->gates, NB = p->batch;
	double *h = k->scratch, *c = h + NB * H, *g = c + NB * H, *hn = g + G * H;
	if (p->has_y)
		memset(out[0]->data, 0, (size_t)gc_tensor_nbytes(out[0]));
	for (int64_t d = 0; d < p->dirs; d++) {
		bool rev = p->reverse_only || d == 1;
		const act *fa = &p->acts[d * p->n_act];
		int64_t wo = d * G * H * p->in, ro = d * G * H * H, bo = d * 2 * G * H,
			po = d * 3 * H;
		for (int64_t b = 0; b < NB; b++)
			for (int64_t j = 0; j < H; j++) {
				h[b * H + j] = H0 ? gc_kv_load(H0, s_at(p, d, b, j)) : 0;
				c[b * H + j] = C0 ? gc_kv_load(C0, s_at(p, d, b, j)) : 0;
			}
		for (int64_t b = 0; b < NB; b++) {
			int64_t len = L ? gc_kv_load(L, b) : p->seq;
			if (len < 0 || len > p->seq)
				return gc_kerr(k, GC_EINVAL,
					       "sequence_lens[%" PRId64 "] = %" PRId64
					       " is outside [0, %" PRId64 "]",
					       b, len, p->seq);
			double *hb = h + b * H, *cb = c + b * H;
			for (int64_t s = 0; s < len; s++) {
				int64_t t = rev ? len - 1 - s : s;
				/* g = X W^T + Wb (+ H R^T + Rb, except GRU's h gate) */
				for (int64_t q = 0; q < G * H; q++) {
					double v = B ? gc_kv_load(B, bo + q) : 0;
					for (int64_t i = 0; i < p->in; i++)
						v += gc_kv_load(X, x_at(p, t, b, i)) *
						     gc_kv_load(W, wo + q * p->in + i);
					bool gru_h = p->kind == K_GRU && q >= 2 * H;
					if (!gru_h) {
						v += B ? gc_kv_load(B, bo + G * H + q) : 0;
						for (int64_t i = 0; i < H; i++)
							v += hb[i] * gc_kv_load(R, ro + q * H + i);
					}
					g[q] = v;
				}
				if (p->kind == K_RNN) {
					for (int64_t j = 0; j < H; j++) {
						double v = g[j];
						if (p->clip > 0)
							v = fmax(-p->clip, fmin(p->clip, v));
						hn[j] = apply(&fa[0], v);
					}
				} else if (p->kind == K_GRU) {
					double *z = g, *r = g + H, *hh = g + 2 * H;
					for (int64_t j = 0; j < 2 * H; j++) {
						double v = g[j];
						if (p->clip > 0)
							v = fmax(-p->clip, fmin(p->clip, v));
						g[j] = apply(&fa[0], v);
					}
					for (int64_t j = 0; j < H; j++) {
						double rb =
						    B ? gc_kv_load(B, bo + G * H + 2 * H + j) : 0;
						double acc = 0;
						for (int64_t i = 0; i < H; i++) {
							double rr =
							    gc_kv_load(R, ro + (2 * H + j) * H + i);
							acc += (p->lbr ? hb[i] : r[i] * hb[i]) * rr;
						}
						double v =
						    hh[j] + (p->lbr ? r[j] * (acc + rb) : acc + rb);
						if (p->clip > 0)
							v = fmax(-p->clip, fmin(p->clip, v));
						double ht = apply(&fa[1], v);
						hn[j] = (1 - z[j]) * ht + z[j] * hb[j];
					}
				} else {
					double *gi = g, *go = g + H, *gf = g + 2 * H,
					       *gc = g + 3 * H;
					for (int64_t j = 0; j < H; j++) {
						double vi = gi[j], vf = gf[j], vc = gc[j];
						if (P) {
							vi += gc_kv_load(P, po + j) * cb[j];
							vf += gc_kv_load(P, po + 2 * H + j) * cb[j];
						}
						if (p->clip > 0) {
							vi = fmax(-p->clip, fmin(p->clip, vi));
							vf = fmax(-p->clip, fmin(p->clip, vf));
							vc = fmax(-p->clip, fmin(p->clip, vc));
						}
						double it = apply(&fa[0], vi);
						double ft =
						    p->input_forget ? 1 - it : apply(&fa[0], vf);
						double ct = apply(&fa[1], vc);
						double cn = ft * cb[j] + it * ct;
						double vo =
						    go[j] +
						    (P ? gc_kv_load(P, po + H + j) * cn : 0);
						if (p->clip > 0)
							vo = fmax(-p->clip, fmin(p->clip, vo));
						hn[j] = apply(&fa[0], vo) * apply(&fa[2], cn);
						cb[j] = cn;
					}
				}
				memcpy(hb, hn, (size_t)H * sizeof(double));
				if (p->has_y)
					for (int64_t j = 0; j < H; j++)
						gc_kv_store(out[0], y_at(p, t, d, b, j), hb[j]);
			}
		}
		for (int64_t b = 0; b < NB; b++)
			for (int64_t j = 0; j < H; j++) {
				if (p->has_yh)
					gc_kv_store(out[1], s_at(p, d, b, j), h[b * H + j]);
				if (p->has_yc)
					gc_kv_store(out[2], s_at(p, d, b, j), c[b * H + j]);
			}
	}
	return 0;
}

static int prepare_rnn(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		       int kind)
{
	static const int gates[] = {1, 3, 4}, n_acts[] = {1, 2, 3};
	static const int defaults[3][3] = {
	    {A_TANH}, {A_SIGMOID, A_TANH}, {A_SIGMOID, A_TANH, A_TANH}};
	const gc_tensor *X = in[0], *W = in[1], *R = in[2];
	char s1[128];
	int64_t hid = gc_attr_i(k, "hidden_size", -1);
	int64_t layout = n->opset >= 14 ? gc_attr_i(k, "layout", 0) : 0;
	const char *dir = gc_attr_s(k, "direction", "forward");
	float clip = gc_attr_f(k, "clip", 0);
	int64_t lbr = kind == K_GRU ? gc_attr_i(k, "linear_before_reset", 0) : 0;
	int64_t ifg = kind == K_LSTM ? gc_attr_i(k, "input_forget", 0) : 0;
	const float *alpha = NULL, *beta = NULL;
	int64_t na = gc_attr_floats(k, "activation_alpha", &alpha);
	int64_t nbeta = gc_attr_floats(k, "activation_beta", &beta);
	const gc_attr *acts = gc_attr_find(n, "activations");
	if (gc_kok(k))
		return gc_kok(k);
	rnn_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->kind = kind;
	p->gates = gates[kind];
	p->n_act = n_acts[kind];
	if (!strcmp(dir, "forward") || !strcmp(dir, "reverse")) {
		p->dirs = 1;
		p->reverse_only = dir[0] == 'r';
	} else if (!strcmp(dir, "bidirectional")) {
		p->dirs = 2;
	} else {
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'direction' = '%s' is not forward, reverse or "
			       "bidirectional",
			       dir);
	}
	if (!gc_kv_float(X->dtype) || W->dtype != X->dtype || R->dtype != X->dtype)
		return gc_kerr(k, GC_EINVAL,
			       "inputs 'X', 'W' and 'R' must share one floating type");
	if (X->rank != 3)
		return gc_kerr(k, GC_EINVAL, "input 'X' must have rank 3, not %d", X->rank);
	p->layout1 = layout != 0;
	p->seq = X->dims[layout ? 1 : 0];
	p->batch = X->dims[layout ? 0 : 1];
	p->in = X->dims[2];
	if (hid <= 0)
		hid = W->rank == 3 ? W->dims[1] / p->gates : 0;
	p->hid = hid;
	int64_t GH = p->gates * hid;
	if (W->rank != 3 || W->dims[0] != p->dirs || W->dims[1] != GH || W->dims[2] != p->in)
		return gc_kerr(k, GC_EINVAL,
			       "input 'W' has shape %s; expected %" PRId64 "x%" PRId64 "x%" PRId64,
			       gc_shape_str(W->dims, W->rank, s1, sizeof s1), p->dirs, GH, p->in);
	if (R->rank != 3 || R->dims[0] != p->dirs || R->dims[1] != GH || R->dims[2] != hid)
		return gc_kerr(k, GC_EINVAL,
			       "input 'R' has shape %s; expected %" PRId64 "x%" PRId64 "x%" PRId64,
			       gc_shape_str(R->dims, R->rank, s1, sizeof s1), p->dirs, GH, hid);
	static const char *const names[] = {"X",	 "W",	      "R", "B", "sequence_lens",
					    "initial_h", "initial_c", "P"};
	int64_t want[8][3] = {{0},
			      {0},
			      {0},
			      {p->dirs, 2 * GH},
			      {p->batch},
			      {p->dirs, p->batch, hid},
			      {p->dirs, p->batch, hid},
			      {p->dirs, 3 * hid}};
	int wrank[8] = {0, 0, 0, 2, 1, 3, 3, 2};
	if (layout) {
		want[5][0] = want[6][0] = p->batch;
		want[5][1] = want[6][1] = p->dirs;
	}
	for (int i = 3; i < n->n_in; i++) {
		if (!present(n, in, i, n->n_in))
			continue;
		const gc_tensor *t = in[i];
		bool ok = t->rank == wrank[i];
		for (int j = 0; ok && j < wrank[i]; j++)
			ok = t->dims[j] == want[i][j];
		if (i == 4 ? !(t->dtype == GC_DTYPE_INT32 || t->dtype == GC_DTYPE_INT64)
			   : t->dtype != X->dtype)
			ok = false;
		if (!ok)
			return gc_kerr(k, GC_EINVAL, "input '%s' (%s %s) does not fit", names[i],
				       gc_dtype_name(t->dtype),
				       gc_shape_str(t->dims, t->rank, s1, sizeof s1));
	}
	p->clip = clip > 0 ? clip : 0;
	p->lbr = lbr != 0;
	p->input_forget = ifg != 0;
	int64_t used_a = 0, used_b = 0;
	for (int d = 0; d < p->dirs; d++)
		for (int j = 0; j < p->n_act; j++) {
			act *a = &p->acts[d * p->n_act + j];
			a->kind = defaults[kind][j];
			if (acts) {
				if (acts->type != GC_ATTR_STRINGS || acts->n != p->dirs * p->n_act)
					return gc_kerr(k, GC_EINVAL,
						       "attribute 'activations' must list %" PRId64
						       " names",
						       p->dirs * p->n_act);
				const char *nm = acts->v.strings[d * p->n_act + j];
				a->kind = -1;
				for (int q = 0; q < A_COUNT; q++)
					if (!strcasecmp(nm, act_names[q]))
						a->kind = q;
				if (a->kind < 0)
					return gc_kerr(k, GC_EUNSUPPORTED,
						       "activation '%s' is not supported", nm);
			}
			/* alpha/beta are consumed in order by the activations that take them */
			bool ta = a->kind == A_AFFINE || a->kind == A_LEAKYRELU ||
				  a->kind == A_THRESHOLDEDRELU || a->kind == A_SCALEDTANH ||
				  a->kind == A_HARDSIGMOID || a->kind == A_ELU;
			bool tb = a->kind == A_AFFINE || a->kind == A_SCALEDTANH ||
				  a->kind == A_HARDSIGMOID;
			a->alpha = a->kind == A_LEAKYRELU     ? 0.01
				   : a->kind == A_HARDSIGMOID ? 0.2
							      : 1.0;
			a->beta = a->kind == A_HARDSIGMOID ? 0.5 : a->kind == A_AFFINE ? 0 : 1.0;
			if (ta && used_a < na)
				a->alpha = alpha[used_a++];
			if (tb && used_b < nbeta)
				a->beta = beta[used_b++];
		}
	p->has_y = out_present(n, out, 0);
	p->has_yh = out_present(n, out, 1);
	p->has_yc = kind == K_LSTM && out_present(n, out, 2);
	int64_t yd[4] = {p->seq, p->dirs, p->batch, hid};
	if (layout) {
		yd[0] = p->batch;
		yd[1] = p->seq;
		yd[2] = p->dirs;
	}
	int64_t sd[3] = {p->dirs, p->batch, hid};
	if (layout) {
		sd[0] = p->batch;
		sd[1] = p->dirs;
	}
	if (p->has_y)
		gc_set_shape(out[0], X->dtype, 4, yd);
	if (p->has_yh)
		gc_set_shape(out[1], X->dtype, 3, sd);
	if (p->has_yc)
		gc_set_shape(out[2], X->dtype, 3, sd);
	n->scratch_bytes = (uint64_t)(2 * p->batch * hid + GH + hid + 1) * sizeof(double);
	n->run = run_rnn;
	return 0;
}

int gc_prepare_RNN(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_rnn(k, n, in, out, K_RNN);
}

int gc_prepare_GRU(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_rnn(k, n, in, out, K_GRU);
}

int gc_prepare_LSTM(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_rnn(k, n, in, out, K_LSTM);
}
