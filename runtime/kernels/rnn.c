/*
 * RNN, GRU and LSTM (opsets 7-14) as ONNX defines them: forward, reverse or
 * bidirectional; layout 0 (X is seq x batch x input) or 1 (batch first);
 * optional bias, sequence_lens (steps past a sequence's length give zeros
 * in Y and leave the state alone), initial states, LSTM peepholes and
 * input_forget, GRU linear_before_reset, clip, and every activation ONNX
 * lists with its alpha/beta. Gate order: GRU z, r, h; LSTM i, o, f, c
 * (peepholes i, o, f). float32 takes the fast path below (GEMM input
 * projection, packed recurrent weights, vectorised gates; computed in
 * float); float16 and double, and everything with gc_init_options.reference_kernels,
 * the reference path (computed in double), which tests/unit/test-rnn-fast.c
 * compares the fast one with.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../alloc.h"
#include "../blas.h"
#include "../fileio.h"
#include "nn-par.h"
#include "nn.h"
#include "rnn.h"
#include "sgemm-pack.h"
#include "value-impl.h"
#include "vmath.h"

GC_NN_O3

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
	bool wide; /* rec_range takes 128 columns at a time (AVX-512) */
	double clip; /* 0: none */
	act acts[6]; /* n_act per direction */
	bool has_y, has_yh, has_yc;
	/* float32 fast path (see run_fast); the reference path otherwise */
	bool fast;
	int64_t hp;		/* hid rounded up to 16: every gate's row in buffers */
	uint64_t rt_floats;	/* packed R^T per direction: hid x gates * hp */
	const float *rt;	/* packed at prepare (R constant), else NULL */
	/* W constant on an AVX-512 CPU: the projection on the packed kernels
	 * (sgemm-pack.h), inside each direction's thread; else OpenBLAS */
	const float *wv;	 /* packed W^T: per direction, wv_blocks blocks */
	int64_t wv_blocks;	 /* 1 (every gate) when hid == hp, else one per gate */
	uint64_t wv_floats;	 /* per block */
	/* batch > 2, R constant, AVX-512: each step's H R^T for all rows in one
	 * packed GEMM (rec_gemm) rather than rows two at a time, each pair
	 * reading all of R^T again (an LSTM of hidden 512, batch 16 read its
	 * 4 MiB eight times a step: 2.4x ORT's time); per direction, R^T's main
	 * columns (rv, see fast_dir) and GRU's h gate without
	 * linear_before_reset (rvh) */
	const float *rv, *rvh;
	uint64_t rv_floats, rvh_floats;
	uint64_t o_proj, o_h, o_c, o_g, o_tmp, o_bias, o_rbh, o_s, o_hs, o_rt; /* scratch, floats */
	float rt_data[];	/* the packed R^T (R constant), then W^T (wv), rv, rvh */
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

/* ---- float32 fast path ----
 *
 * The input projection of every time step is one GEMM per gate and direction
 * (X [steps * batch, in] times W's rows, through OpenBLAS) before the
 * recurrence starts; each step then adds H R^T from R^T packed [hid][gate
 * * hp] (at prepare when R is constant, else into scratch at the start of
 * the run), 128 (AVX-512), 64 or 16 columns at a time in registers, and the gates'
 * element-wise math runs in vectorised passes (vmath.h). Every buffer is in
 * the node's scratch: nothing is allocated while running. With two or more
 * threads the directions of a bidirectional node run on two threads. */

/* out[q] = base[q] + sum_k h[k] rt[k * ld + q] for q < w (a constant after
 * inlining: the w accumulators stay in registers). */
static inline __attribute__((always_inline)) void rec_block(const float *h, int64_t K,
							    const float *rt, int64_t ld,
							    const float *base, float *out, const int w)
{
	float acc[128];
	for (int q = 0; q < w; q++)
		acc[q] = base ? base[q] : 0.0f;
	for (int64_t k = 0; k < K; k++) {
		float hk = h[k];
		const float *r = rt + k * ld;
		for (int q = 0; q < w; q++)
			acc[q] += hk * r[q];
	}
	for (int q = 0; q < w; q++)
		out[q] = acc[q];
}

/*
 * R^T is packed in column panels, each K rows of its width contiguous (the
 * panel at column j starts at j * K), as wide as the blocks rec_range
 * takes them in: 128 columns (wide) while 128 remain, then 64,
 * then 16. Each block then streams one contiguous run; row-major R^T had
 * it read 512 bytes of each of K rows 4-8 KiB apart, a page each (an LSTM
 * of hidden 256, batch 1, took 1.24x ORT's time).
 */
static int64_t rec_width(int64_t j, int64_t n, bool wide)
{
	int64_t n128 = wide ? n / 128 * 128 : 0, n64 = n128 + (n - n128) / 64 * 64;
	return j < n128 ? 128 : j < n64 ? 64 : 16;
}

/* Two rows' blocks of w columns (a constant after inlining): o0 = b0 + h0
 * rt, o1 = b1 + h1 rt, sharing the loads of rt. */
static inline __attribute__((always_inline)) void rec_block2(const float *h0, const float *h1,
							     int64_t K, const float *rt,
							     int64_t ld, const float *b0,
							     const float *b1, float *o0,
							     float *o1, const int w)
{
	float a0[128], a1[128];
	for (int q = 0; q < w; q++) {
		a0[q] = b0[q];
		a1[q] = b1[q];
	}
	for (int64_t k = 0; k < K; k++) {
		float x0 = h0[k], x1 = h1[k];
		const float *r = rt + k * ld;
		for (int q = 0; q < w; q++) {
			a0[q] += x0 * r[q];
			a1[q] += x1 * r[q];
		}
	}
	for (int q = 0; q < w; q++) {
		o0[q] = a0[q];
		o1[q] = a1[q];
	}
}

/*
 * One step's H R^T (fast_dir): out[j] = base[j] + sum_k h[k] R^T[k][j] for
 * j < n (a multiple of 16), R^T in panels (rec_width) from rt, for one row
 * or two (h1 set; bases then not NULL). Two rows share the loads of R^T:
 * 128 columns of each in registers where AVX-512 has the 16 accumulators
 * (a bidirectional LSTM of hidden 64 spent half its time here with 64,
 * bound by reading R^T 256 bytes at a time from L2; issue 19), else 64
 * (eight accumulators: enough independent FMAs to hide their latency).
 * One row: 128 columns, eight accumulators rather than four (a single
 * row's chain of dependent FMAs bound it).
 */
typedef struct rec_job {
	const float *h0, *h1, *rt, *b0, *b1;
	float *o0, *o1;
	int64_t K, n;
	bool wide;
} rec_job;

/* The panels whose columns start in [c0, c1). */
GC_NN_SIMD static void rec_range(const rec_job *r, int64_t c0, int64_t c1)
{
	int64_t K = r->K;
	for (int64_t j = c0, w; j < c1; j += w) {
		w = rec_width(j, r->n, r->wide);
		const float *rt = r->rt + j * K, *b0 = r->b0 ? r->b0 + j : NULL;
		if (r->h1 && w == 128)
			rec_block2(r->h0, r->h1, K, rt, 128, b0, r->b1 + j, r->o0 + j, r->o1 + j, 128);
		else if (r->h1 && w == 64)
			rec_block2(r->h0, r->h1, K, rt, 64, b0, r->b1 + j, r->o0 + j, r->o1 + j, 64);
		else if (r->h1)
			rec_block2(r->h0, r->h1, K, rt, 16, b0, r->b1 + j, r->o0 + j, r->o1 + j, 16);
		else if (w == 128)
			rec_block(r->h0, K, rt, 128, b0, r->o0 + j, 128);
		else if (w == 64)
			rec_block(r->h0, K, rt, 64, b0, r->o0 + j, 64);
		else
			rec_block(r->h0, K, rt, 16, b0, r->o0 + j, 16);
	}
}

static int64_t rec_panels(const rec_job *r)
{
	int64_t np = 0;
	for (int64_t j = 0; j < r->n; j += rec_width(j, r->n, r->wide))
		np++;
	return np;
}

/* Part `part` of `parts`: as many panels each (they differ by at most 4x
 * in width only in the last few). */
static void rec_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const rec_job *r = arg;
	int64_t np = rec_panels(r), i0 = part * np / parts, i1 = (part + 1) * np / parts;
	int64_t c0 = r->n, c1 = r->n, i = 0;
	for (int64_t j = 0; j < r->n; j += rec_width(j, r->n, r->wide), i++) {
		if (i == i0)
			c0 = j;
		if (i == i1) {
			c1 = j;
			break;
		}
	}
	rec_range(r, c0, c1);
}

/* The step's product on up to `threads` threads: R^T read from L2 or
 * memory, ~4 floats a cycle (an LSTM of hidden 256, 1 MiB of R^T, took
 * ~15 us a step at one thread); a direction's steps are otherwise serial,
 * so a second thread is the only one a unidirectional node can use. */
static void rec_run(const rec_job *r, int threads)
{
	int t = threads > 1 ? gc_nn_par_threads(threads, (double)(r->K * r->n) / 2) : 1;
	int64_t np = rec_panels(r);
	t = t < np ? t : (int)np;
	if (t > 1)
		gc_nn_parallel(t, t, rec_part, (void *)r);
	else
		rec_range(r, 0, r->n);
}

/* v[i] = act(clip(v[i])) for i < n (clip 0: none). */
GC_NN_SIMD static void act_vec(const rnn_plan *p, const act *a, float clip, float *v, int64_t n)
{
	if (clip > 0)
		for (int64_t i = 0; i < n; i++) {
			float x = v[i] < -clip ? -clip : v[i];
			v[i] = x > clip ? clip : x;
		}
	/* AVX-512 (wide): sgemm-pack.h's, without vmath.h's division (its
	 * vdivps held ~20 % of this function's samples): 64 floats in 32 ns
	 * against 35 (sigmoid), 36 against 52 (tanh); the LSTMs of make bench
	 * took 5-8 % less at one thread, the bidirectional GRU 4 %, the GRU
	 * within 2 % (builds in turns) */
	if (p->wide && a->kind == A_SIGMOID) {
		gc_pk_sigmoid(v, n);
		return;
	}
	if (p->wide && a->kind == A_TANH) {
		gc_pk_tanh(v, n);
		return;
	}
	float al = (float)a->alpha, be = (float)a->beta;
	switch (a->kind) {
	case A_SIGMOID:
		for (int64_t i = 0; i < n; i++)
			v[i] = gc_vm_sigmoidf(v[i]);
		break;
	case A_TANH:
		for (int64_t i = 0; i < n; i++)
			v[i] = gc_vm_tanhf(v[i]);
		break;
	case A_RELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] > 0 ? v[i] : 0.0f;
		break;
	case A_AFFINE:
		for (int64_t i = 0; i < n; i++)
			v[i] = al * v[i] + be;
		break;
	case A_LEAKYRELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] >= 0 ? v[i] : al * v[i];
		break;
	case A_THRESHOLDEDRELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] > al ? v[i] : 0.0f;
		break;
	case A_SCALEDTANH:
		for (int64_t i = 0; i < n; i++)
			v[i] = al * gc_vm_tanhf(be * v[i]);
		break;
	case A_HARDSIGMOID:
		for (int64_t i = 0; i < n; i++) {
			float x = al * v[i] + be;
			x = x < 0 ? 0.0f : x;
			v[i] = x > 1 ? 1.0f : x;
		}
		break;
	case A_ELU:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] >= 0 ? v[i] : al * (gc_vm_expf(v[i]) - 1.0f);
		break;
	case A_SOFTSIGN:
		for (int64_t i = 0; i < n; i++)
			v[i] = v[i] / (1.0f + (v[i] < 0 ? -v[i] : v[i]));
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			v[i] = gc_vm_softplusf(v[i]);
		break;
	}
}

/* The gate math of one step of one batch row: g holds the gates' pre-
 * activations (X W^T + biases + H R^T, GRU's h gate without its R term),
 * h and c the state, updated in place. */
GC_NN_SIMD static void lstm_cell(const rnn_plan *p, const act *fa, const float *pp, float *g,
				 float *h, float *c, float *tmp)
{
	int64_t H = p->hid, hp = p->hp;
	float clip = (float)p->clip;
	float *gi = g, *go = g + hp, *gf = g + 2 * hp, *gc = g + 3 * hp;
	if (pp)
		for (int64_t j = 0; j < H; j++) {
			gi[j] += pp[j] * c[j];
			gf[j] += pp[2 * H + j] * c[j];
		}
	/* without peepholes nor a coupled forget gate, i, o and f (one
	 * activation, side by side) in one run */
	bool one = !pp && !p->input_forget;
	act_vec(p, &fa[0], clip, gi, one ? 3 * hp : H);
	if (p->input_forget)
		for (int64_t j = 0; j < H; j++)
			gf[j] = 1.0f - gi[j];
	else if (!one)
		act_vec(p, &fa[0], clip, gf, H);
	act_vec(p, &fa[1], clip, gc, H);
	for (int64_t j = 0; j < H; j++)
		c[j] = gf[j] * c[j] + gi[j] * gc[j];
	if (pp)
		for (int64_t j = 0; j < H; j++)
			go[j] += pp[H + j] * c[j];
	if (!one)
		act_vec(p, &fa[0], clip, go, H);
	memcpy(tmp, c, (size_t)H * sizeof *tmp);
	act_vec(p, &fa[2], 0, tmp, H);
	for (int64_t j = 0; j < H; j++)
		h[j] = go[j] * tmp[j];
}

/* After z and r: GRU's h gate (its R term `rec`, for linear_before_reset)
 * and the new state. */
GC_NN_SIMD static void gru_finish(const rnn_plan *p, const act *fa, float *g, const float *rec,
				  const float *rbh, float *h)
{
	int64_t H = p->hid, hp = p->hp;
	float *z = g, *r = g + hp, *hh = g + 2 * hp;
	if (p->lbr)
		for (int64_t j = 0; j < H; j++)
			hh[j] += r[j] * (rec[j] + rbh[j]);
	else
		for (int64_t j = 0; j < H; j++)
			hh[j] += rbh[j];
	act_vec(p, &fa[1], (float)p->clip, hh, H);
	for (int64_t j = 0; j < H; j++)
		h[j] = (1.0f - z[j]) * hh[j] + z[j] * h[j];
}

/* Adds bias[j] to every row of P (rows x ld). */
GC_NN_SIMD static void add_rows(float *P, int64_t rows, int64_t ld, const float *bias)
{
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < ld; j++)
			P[r * ld + j] += bias[j];
}

/* Column c of R^T (R of one direction, [G * H][H]): row q * H + j of R for
 * c = q * hp + j, NULL for a padding column. */
static const float *rt_col(const rnn_plan *p, const float *R, int64_t c)
{
	int64_t q = c / p->hp, j = c % p->hp;
	return j < p->hid ? R + (q * p->hid + j) * p->hid : NULL;
}

/* R^T's columns [c0, c0 + n) in rec_range's panels at rt + c0 * H; padding
 * columns 0. */
static void pack_rt_cols(const rnn_plan *p, const float *R, int64_t c0, int64_t n, float *rt)
{
	int64_t H = p->hid;
	for (int64_t j = 0, w; j < n; j += w) {
		w = rec_width(j, n, p->wide);
		float *panel = rt + (c0 + j) * H;
		for (int64_t q = 0; q < w; q++) {
			const float *r = rt_col(p, R, c0 + j + q);
			for (int64_t k = 0; k < H; k++)
				panel[k * w + q] = r ? r[k] : 0.0f;
		}
	}
}

/* R^T's columns [c0, c0 + n) packed as rec_gemm's V (dst); false out of
 * memory. */
static bool pack_rv(const rnn_plan *p, const float *R, int64_t c0, int64_t n, float *dst)
{
	int64_t H = p->hid;
	float *t = gc_malloc((size_t)(H * n) * sizeof *t);
	if (!t)
		return false;
	for (int64_t c = 0; c < n; c++) {
		const float *r = rt_col(p, R, c0 + c);
		for (int64_t k = 0; k < H; k++)
			t[k * n + c] = r ? r[k] : 0.0f;
	}
	gc_pk_pack_v(t, n, 1, H, n, dst);
	gc_free(t);
	return true;
}

/* R^T packed for rec_range: fast_dir's main columns and, for GRU without
 * linear_before_reset, its h gate's on their own. */
static void pack_rt(const rnn_plan *p, const float *R, float *rt)
{
	int64_t hp = p->hp;
	if (p->kind == K_GRU && !p->lbr) {
		pack_rt_cols(p, R, 0, 2 * hp, rt);
		pack_rt_cols(p, R, 2 * hp, hp, rt);
	} else {
		pack_rt_cols(p, R, 0, p->gates * hp, rt);
	}
}

/* P (rows x G * hp) = X W^T + bias for direction d on the packed kernels,
 * X packed at S + o_s; on up to `threads` threads. */
static void project_pk(const rnn_plan *p, int64_t d, const float *S, float *P, int threads)
{
	int64_t H = p->hid, hp = p->hp, GHp = p->gates * hp, rows = p->seq * p->batch;
	int64_t per = p->gates / p->wv_blocks;
	if (hp != H)
		memset(P, 0, (size_t)(rows * GHp) * sizeof *P);
	for (int64_t q = 0; q < p->wv_blocks; q++) {
		gc_pk_gemm g = {.m = rows, .n = per * H, .k = p->in, .s = S + p->o_s,
				.v = p->wv + (uint64_t)(d * p->wv_blocks + q) * p->wv_floats,
				.v_packed = 1, .c = P + q * per * hp, .ldc = GHp};
		gc_nn_act none = {.kind = GC_NN_ACT_NONE};
		gc_pk_epi_init(&g.epi, &none);
		g.epi.c = S + p->o_bias + (uint64_t)(d * GHp + q * per * hp);
		g.epi.c_sn = 1;
		gc_pk_gemm_par(&g, threads);
	}
}

typedef struct fast_run {
	const rnn_plan *p;
	const gc_tensor *X, *W, *R, *B, *H0, *C0, *P;
	const int64_t *len;
	float *scratch, *Y, *Yh, *Yc;
	int threads; /* a direction's: 1 when the two of a bidirectional node run at once */
} fast_run;

/* Batch row b's projection row at step s of a direction (*t its time
 * index), or NULL when the row's sequence has ended. */
static const float *step_row(const fast_run *fr, const float *P, int64_t b, int64_t s, bool rev,
			     int64_t *t)
{
	const rnn_plan *p = fr->p;
	int64_t len = fr->len ? fr->len[b] : p->seq;
	if (s >= len)
		return NULL;
	*t = rev ? len - 1 - s : s;
	return P + (p->layout1 ? b * p->seq + *t : *t * p->batch + b) * p->gates * p->hp;
}

/* out (the batch's rows, G * hp apart; n columns) = h (rows ldh apart)
 * times v (packed columns of R^T), with h packed into hs. */
static void rec_gemm(const fast_run *fr, const float *h, int64_t ldh, const float *v, int64_t n,
		     float *hs, float *out)
{
	const rnn_plan *p = fr->p;
	gc_pk_pack_s(h, ldh, 1, p->batch, p->hid, hs);
	gc_pk_gemm g = {.m = p->batch, .n = n, .k = p->hid, .s = hs, .v = v, .v_packed = 1,
			.c = out, .ldc = p->gates * p->hp};
	gc_nn_act none = {.kind = GC_NN_ACT_NONE};
	gc_pk_epi_init(&g.epi, &none);
	gc_pk_gemm_par(&g, fr->threads);
}

/* A direction's state during its steps (fast_dir). */
typedef struct dir_ctx {
	const fast_run *fr;
	int64_t d, s; /* direction, step */
	bool rev, lbr;
	int inner; /* threads for the row's own products (GRU's h gate) */
	const float *P, *rt, *rbh, *pp;
	const act *fa;
	float *h, *c, *g, *tmp;
} dir_ctx;

/* The gates of step x->s for batch rows [b0, b1), and their outputs. */
static void step_gates(const dir_ctx *x, int64_t b0, int64_t b1)
{
	const fast_run *fr = x->fr;
	const rnn_plan *p = fr->p;
	int64_t H = p->hid, hp = p->hp, GHp = p->gates * hp, d = x->d, s = x->s;
	const float *P = x->P, *rt = x->rt, *rbh = x->rbh, *pp = x->pp;
	const act *fa = x->fa;
	float *h = x->h, *c = x->c, *g = x->g, *tmp = x->tmp;
	bool rev = x->rev, lbr = x->lbr;
	for (int64_t b = b0; b < b1; b++) {
		int64_t t;
		const float *pr = step_row(fr, P, b, s, rev, &t);
		if (!pr)
			continue;
		float *hb = h + b * hp, *gb = g + b * GHp, *tb = tmp + b * 2 * hp;
		if (p->kind == K_LSTM) {
			lstm_cell(p, fa, pp, gb, hb, c + b * hp, tb);
		} else if (p->kind == K_GRU) {
			if (!p->rvh)
				act_vec(p, &fa[0], (float)p->clip, gb, 2 * hp);
			if (lbr) {
				memcpy(tb, gb + 2 * hp, (size_t)hp * sizeof *gb);
				memcpy(gb + 2 * hp, pr + 2 * hp, (size_t)hp * sizeof *gb);
			} else if (p->rvh) {
				add_rows(gb + 2 * hp, 1, hp, pr + 2 * hp);
			} else {
				const float *r = gb + hp;
				for (int64_t j = 0; j < H; j++)
					tb[hp + j] = r[j] * hb[j];
				rec_job rj = {.h0 = tb + hp, .rt = rt + 2 * hp * H,
					      .b0 = pr + 2 * hp, .o0 = gb + 2 * hp, .K = H,
					      .n = hp, .wide = p->wide};
				rec_run(&rj, x->inner);
			}
			gru_finish(p, fa, gb, tb, rbh, hb);
		} else {
			act_vec(p, &fa[0], (float)p->clip, gb, H);
			memcpy(hb, gb, (size_t)H * sizeof *gb);
		}
		if (fr->Y)
			memcpy(fr->Y + y_at(p, t, d, b, 0), hb, (size_t)H * sizeof *hb);
	}
}

static void step_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const dir_ctx *x = arg;
	int64_t NB = x->fr->p->batch;
	step_gates(x, part * NB / parts, (part + 1) * NB / parts);
}

/* The recurrence of direction d (its projections are done). */
static void fast_dir(const fast_run *fr, int64_t d)
{
	const rnn_plan *p = fr->p;
	int64_t H = p->hid, hp = p->hp, GHp = p->gates * hp, NB = p->batch;
	int64_t rows = p->seq * NB;
	float *S = fr->scratch;
	const float *P = S + p->o_proj + (uint64_t)(d * rows * GHp);
	float *h = S + p->o_h + (uint64_t)(d * NB * hp), *c = S + p->o_c + (uint64_t)(d * NB * hp);
	float *g = S + p->o_g + (uint64_t)(d * NB * GHp);
	float *tmp = S + p->o_tmp + (uint64_t)(d * NB * 2 * hp);
	const float *rbh = S + p->o_rbh + (uint64_t)(d * hp);
	float *hs = S + p->o_hs + (uint64_t)d * gc_pk_s_floats(NB, H);
	const float *rt = p->rt ? p->rt + d * p->rt_floats : S + p->o_rt + d * p->rt_floats;
	const float *pp = fr->P ? (const float *)fr->P->data + d * 3 * H : NULL;
	const act *fa = &p->acts[d * p->n_act];
	bool rev = p->reverse_only || d == 1;
	if (p->wv)
		project_pk(p, d, S, (float *)P, fr->threads);
	if (p->rvh) /* rec_gemm reads every row's r h, those ended too */
		memset(tmp, 0, (size_t)(NB * 2 * hp) * sizeof *tmp);
	for (int64_t b = 0; b < NB; b++)
		for (int64_t j = 0; j < H; j++) {
			h[b * hp + j] = fr->H0 ? ((const float *)fr->H0->data)[s_at(p, d, b, j)] : 0;
			c[b * hp + j] = fr->C0 ? ((const float *)fr->C0->data)[s_at(p, d, b, j)] : 0;
		}
	/* the main product's columns: every gate's, or GRU's z and r (with
	 * linear_before_reset, all three, the h gate's without the projection:
	 * its R term is needed on its own) */
	bool lbr = p->kind == K_GRU && p->lbr;
	int64_t main_cols = p->kind == K_GRU && !lbr ? 2 * hp : GHp;
	dir_ctx x = {.fr = fr, .d = d, .rev = rev, .lbr = lbr, .P = P, .rt = rt, .rbh = rbh,
		     .pp = pp, .fa = fa, .h = h, .c = c, .g = g, .tmp = tmp};
	for (int64_t s = 0; s < p->seq; s++) {
		/* H R^T for the rows still running, two at a time; base: the
		 * projection (with linear_before_reset: that of z and r, 0 for h) */
		int64_t pend = -1;
		const float *pbase = NULL;
		if (p->rv) {
			/* every row (those ended too: their results are not used),
			 * then the rows' bases */
			rec_gemm(fr, h, hp, p->rv + d * p->rv_floats, main_cols, hs, g);
			for (int64_t b = 0; b < NB; b++) {
				int64_t t;
				const float *pr = step_row(fr, P, b, s, rev, &t);
				if (pr)
					add_rows(g + b * GHp, 1, lbr ? 2 * hp : main_cols, pr);
			}
		}
		for (int64_t b = 0; b < NB && !p->rv; b++) {
			int64_t t;
			const float *pr = step_row(fr, P, b, s, rev, &t), *base = pr;
			if (!pr)
				continue;
			if (lbr) {
				memcpy(g + b * GHp, pr, (size_t)(2 * hp) * sizeof *g);
				memset(g + b * GHp + 2 * hp, 0, (size_t)hp * sizeof *g);
				base = g + b * GHp;
			}
			if (pend < 0) {
				pend = b;
				pbase = base;
				continue;
			}
			rec_job r = {.h0 = h + pend * hp, .h1 = h + b * hp, .rt = rt, .b0 = pbase,
				     .b1 = base, .o0 = g + pend * GHp, .o1 = g + b * GHp, .K = H,
				     .n = main_cols, .wide = p->wide};
			rec_run(&r, fr->threads);
			pend = -1;
		}
		if (pend >= 0) {
			rec_job r = {.h0 = h + pend * hp, .rt = rt, .b0 = pbase,
				     .o0 = g + pend * GHp, .K = H, .n = main_cols, .wide = p->wide};
			rec_run(&r, fr->threads);
		}
		if (p->rvh) {
			/* GRU's h gate: z and r, then (r h) R_h^T for the batch */
			for (int64_t b = 0; b < NB; b++) {
				int64_t t;
				if (!step_row(fr, P, b, s, rev, &t))
					continue;
				float *gb = g + b * GHp, *rh = tmp + b * 2 * hp + hp;
				act_vec(p, &fa[0], (float)p->clip, gb, 2 * hp);
				for (int64_t j = 0; j < H; j++)
					rh[j] = gb[hp + j] * h[b * hp + j];
			}
			rec_gemm(fr, tmp + hp, 2 * hp, p->rvh + d * p->rvh_floats, hp, hs, g + 2 * hp);
		}
		/* the gates, row by row; on the threads when there is enough
		 * (an LSTM of hidden 512, batch 16: 1/10 of a step at one
		 * thread, vectorised transcendentals ~8 cycles an element) */
		x.s = s;
		int t = fr->threads > 1 && NB > 1 ? gc_nn_par_threads(fr->threads, 8.0 * NB * GHp) : 1;
		x.inner = t > 1 ? 1 : fr->threads;
		if (t > 1)
			gc_nn_parallel(t, t, step_part, &x);
		else
			step_gates(&x, 0, NB);
	}
	for (int64_t b = 0; b < NB; b++) {
		if (fr->Yh)
			memcpy(fr->Yh + s_at(p, d, b, 0), h + b * hp, (size_t)H * sizeof(float));
		if (fr->Yc)
			memcpy(fr->Yc + s_at(p, d, b, 0), c + b * hp, (size_t)H * sizeof(float));
	}
}

static void fast_part(void *arg, int part, int parts, int slot)
{
	(void)parts;
	(void)slot;
	fast_dir(arg, part);
}

static int run_fast(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const rnn_plan *p = n->state;
	float *S = (float *)(((uintptr_t)k->scratch + 63) & ~(uintptr_t)63);
	fast_run fr = {.p = p, .X = in[0], .W = in[1], .R = in[2], .scratch = S};
	fr.B = present(n, in, 3, n->n_in) ? in[3] : NULL;
	const gc_tensor *L = present(n, in, 4, n->n_in) ? in[4] : NULL;
	fr.H0 = present(n, in, 5, n->n_in) ? in[5] : NULL;
	fr.C0 = p->kind == K_LSTM && present(n, in, 6, n->n_in) ? in[6] : NULL;
	fr.P = p->kind == K_LSTM && present(n, in, 7, n->n_in) ? in[7] : NULL;
	int64_t H = p->hid, hp = p->hp, G = p->gates, GHp = G * hp, NB = p->batch;
	int64_t rows = p->seq * NB;
	/* sequence_lens, checked before anything is written; kept in the
	 * scratch after the floats */
	int64_t *len = NULL;
	if (L) {
		len = (int64_t *)(S + p->o_rt + (p->rt ? 0 : p->dirs * p->rt_floats));
		for (int64_t b = 0; b < NB; b++) {
			len[b] = (int64_t)gc_kv_load(L, b);
			if (len[b] < 0 || len[b] > p->seq)
				return gc_kerr(k, GC_EINVAL,
					       "sequence_lens[%" PRId64 "] = %" PRId64
					       " is outside [0, %" PRId64 "]",
					       b, len[b], p->seq);
		}
	}
	fr.len = len;
	fr.threads = p->dirs == 2 && k->threads >= 2 ? 1 : k->threads;
	fr.Y = p->has_y ? out[0]->data : NULL;
	fr.Yh = p->has_yh ? out[1]->data : NULL;
	fr.Yc = p->has_yc ? out[2]->data : NULL;
	if (fr.Y && L)
		memset(fr.Y, 0, (size_t)gc_tensor_nbytes(out[0]));
	const float *X = fr.X->data, *W = fr.W->data, *R = fr.R->data;
	const float *Bv = fr.B ? fr.B->data : NULL;
	for (int64_t d = 0; d < p->dirs; d++) {
		float *P = S + p->o_proj + (uint64_t)(d * rows * GHp);
		float *bias = S + p->o_bias + (uint64_t)(d * GHp);
		float *rbh = S + p->o_rbh + (uint64_t)(d * hp);
		memset(bias, 0, (size_t)GHp * sizeof *bias);
		memset(rbh, 0, (size_t)hp * sizeof *rbh);
		for (int64_t q = 0; q < G && Bv; q++)
			for (int64_t j = 0; j < H; j++) {
				const float *wb = Bv + d * 2 * G * H, *rb = wb + G * H;
				bool gru_h = p->kind == K_GRU && q == 2;
				bias[q * hp + j] = wb[q * H + j] + (gru_h ? 0 : rb[q * H + j]);
				if (gru_h)
					rbh[j] = rb[q * H + j];
			}
		if (hp != H)
			memset(P, 0, (size_t)(rows * GHp) * sizeof *P);
		if (!p->rt)
			pack_rt(p, R + d * G * H * H, S + p->o_rt + d * p->rt_floats);
		if (p->wv)
			continue; /* projected in fast_dir, on its thread */
		/* one product for all gates when their rows need no padding */
		int64_t per = hp == H ? G : 1;
		for (int64_t q = 0; q < G && rows; q += per)
			gc_nn_sgemm(k->threads, false, true, (int)rows, (int)(per * H), (int)p->in,
				    1.0f, X, (int)p->in, W + (d * G + q) * H * p->in, (int)p->in,
				    0.0f, P + q * hp, (int)GHp);
		add_rows(P, rows, GHp, bias);
	}
	if (p->wv && rows)
		gc_pk_pack_s(X, p->in, 1, rows, p->in, S + p->o_s);
	if (p->dirs == 2 && k->threads >= 2)
		gc_nn_parallel(2, 2, fast_part, &fr);
	else
		for (int64_t d = 0; d < p->dirs; d++)
			fast_dir(&fr, d);
	return 0;
}

/* Lays out the fast path's scratch (in floats, each buffer 64-byte aligned)
 * and packs R^T when it is constant; false when the node takes the
 * reference path. */
static bool plan_fast(gc_kctx *k, gc_node *n, gc_tensor *const *in, rnn_plan **pp)
{
	rnn_plan *p = *pp;
	/* (the library reads no environment: gc_init_options.reference_kernels) */
	if (in[0]->dtype != GC_DTYPE_FLOAT || gc_reference_kernels())
		return false;
	int64_t hp = (p->hid + 15) / 16 * 16, GHp = p->gates * hp, rows = p->seq * p->batch;
	if (rows > INT32_MAX || GHp > INT32_MAX || p->in > INT32_MAX || p->hid > INT32_MAX / 4)
		return false;
	gc_error e = {0};
	if (gc_blas_init(&e))
		return false; /* the reference path needs no BLAS */
	p->hp = hp;
	p->rt_floats = (uint64_t)(p->hid * GHp + 15) / 16 * 16;
	uint64_t o = 0, dirs = (uint64_t)p->dirs;
#define RNN_BUF(f, cnt)                                                                            \
	do {                                                                                       \
		p->f = o;                                                                          \
		o += ((uint64_t)(cnt) + 15) / 16 * 16;                                             \
	} while (0)
	RNN_BUF(o_proj, dirs * rows * GHp);
	RNN_BUF(o_h, dirs * p->batch * hp);
	RNN_BUF(o_c, dirs * p->batch * hp);
	RNN_BUF(o_g, dirs * p->batch * GHp);
	RNN_BUF(o_tmp, dirs * p->batch * 2 * hp);
	RNN_BUF(o_bias, dirs * GHp);
	RNN_BUF(o_rbh, dirs * hp);
	const float *W = gc_kfixed(k, in, 1), *R = gc_kfixed(k, in, 2);
	bool pk = W && R && gc_pk_usable();
	p->wide = gc_pk_usable(); /* AVX-512: 32 vector registers */
	RNN_BUF(o_s, pk ? gc_pk_s_floats(rows, p->in) : 0);
	/* the GEMM's packed operands take padded copies of R^T and h: worth it
	 * from three rows (two share rec_range's reads) */
	bool rg = R && gc_pk_usable() && p->batch > 2;
	RNN_BUF(o_hs, rg ? dirs * gc_pk_s_floats(p->batch, p->hid) : 0);
	RNN_BUF(o_rt, 0);
#undef RNN_BUF
	if (pk) {
		p->wv_blocks = hp == p->hid ? 1 : p->gates;
		p->wv_floats = (uint64_t)gc_pk_v_floats(p->in, p->gates / p->wv_blocks * p->hid);
	}
	/* fast_dir's main columns; GRU's h gate after them unless
	 * linear_before_reset */
	bool gru_h = p->kind == K_GRU && !p->lbr;
	int64_t main_cols = gru_h ? 2 * hp : GHp;
	if (rg) {
		p->rv_floats = (uint64_t)gc_pk_v_floats(p->hid, main_cols);
		p->rvh_floats = gru_h ? (uint64_t)gc_pk_v_floats(p->hid, hp) : 0;
	}
	if (!R)
		o += dirs * p->rt_floats;
	o += (uint64_t)p->batch * 2; /* sequence_lens as int64 */
	n->scratch_bytes = o * sizeof(float) + 64;
	if (R) {
		uint64_t wv_all = dirs * (uint64_t)p->wv_blocks * p->wv_floats;
		uint64_t rv_all = dirs * (p->rv_floats + p->rvh_floats);
		size_t bytes = sizeof *p + (dirs * p->rt_floats + wv_all + rv_all) * sizeof(float);
		rnn_plan *q = gc_calloc(1, bytes);
		if (!q) {
			gc_kerr(k, GC_ENOMEM, "out of memory for the node's state (%zu bytes)", bytes);
			return false;
		}
		memcpy(q, p, sizeof *p);
		for (int64_t d = 0; d < p->dirs; d++)
			pack_rt(q, R + d * p->gates * p->hid * p->hid, q->rt_data + d * p->rt_floats);
		q->rt = q->rt_data;
		if (pk) {
			float *wv = q->rt_data + dirs * p->rt_floats;
			int64_t per = p->gates / p->wv_blocks;
			for (int64_t d = 0; d < p->dirs; d++)
				for (int64_t b = 0; b < p->wv_blocks; b++)
					gc_pk_pack_v(W + (d * p->gates + b * per) * p->hid * p->in, 1,
						     p->in, p->in, per * p->hid,
						     wv + (uint64_t)(d * p->wv_blocks + b) * p->wv_floats);
			q->wv = wv;
		}
		if (rg) {
			float *rv = q->rt_data + dirs * p->rt_floats + wv_all;
			float *rvh = rv + dirs * p->rv_floats;
			bool ok = true;
			for (int64_t d = 0; d < p->dirs; d++) {
				const float *Rd = R + d * p->gates * p->hid * p->hid;
				ok = ok && pack_rv(q, Rd, 0, main_cols, rv + d * p->rv_floats);
				if (gru_h)
					ok = ok && pack_rv(q, Rd, 2 * hp, hp,
							   rvh + d * p->rvh_floats);
			}
			q->rv = rv;
			q->rvh = gru_h ? rvh : NULL;
			if (!ok) {
				gc_free(q);
				gc_kerr(k, GC_ENOMEM, "out of memory packing input 'R'");
				return false;
			}
		}
		gc_free(p);
		n->state = q;
		*pp = q;
	}
	p = *pp;
	p->fast = true;
	n->run = run_fast;
	return true;
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
	if (plan_fast(k, n, in, &p))
		return gc_kok(k);
	if (gc_kok(k))
		return gc_kok(k);
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
