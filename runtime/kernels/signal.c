/*
 * Signal ops of opset 17: the Hann, Hamming and Blackman windows, DFT and
 * STFT (direct O(n^2) transforms in double; complex values as a last axis of
 * 2, real input as a last axis of 1) and MelWeightMatrix (ONNX's reference
 * construction, computed when the program is built). Sizes, lengths and
 * steps must be known when the program is built.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "../fileio.h"
#include "signal.h"
#include "value-impl.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static int const_int(gc_kctx *k, const gc_tensor *t, const char *what, int64_t *v)
{
	int64_t cnt;
	if (gc_const_ints(k, t, what, v, 1, &cnt))
		return gc_kok(k);
	if (cnt != 1)
		return gc_kerr(k, GC_EINVAL, "input '%s' must hold one value, not %" PRId64, what,
			       cnt);
	return 0;
}

static int out_dtype(gc_kctx *k, gc_dtype *dt)
{
	int64_t v = gc_attr_i(k, "output_datatype", GC_DTYPE_FLOAT);
	if (gc_kok(k))
		return gc_kok(k);
	if (v <= 0 || v >= GC_DTYPE_COUNT || !gc_kv_numeric((gc_dtype)v))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attribute 'output_datatype' = %" PRId64 " is not supported", v);
	*dt = (gc_dtype)v;
	return 0;
}

/* ---- windows ------------------------------------------------------------ */

typedef struct window_plan {
	double a[3]; /* w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) */
	double denom;
} window_plan;

static int run_window(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)in;
	const window_plan *p = n->state;
	int64_t len = out[0]->dims[0];
	for (int64_t i = 0; i < len; i++) {
		double x = 2 * M_PI * (double)i / p->denom;
		gc_kv_store(out[0], i, p->a[0] - p->a[1] * cos(x) + p->a[2] * cos(2 * x));
	}
	return 0;
}

static int prepare_window(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			  double a0, double a1, double a2)
{
	gc_dtype dt;
	int64_t periodic = gc_attr_i(k, "periodic", 1), size;
	if (gc_kok(k) || out_dtype(k, &dt) || const_int(k, in[0], "size", &size))
		return gc_kok(k);
	if (size < 0)
		return gc_kerr(k, GC_EINVAL, "size %" PRId64 " is negative", size);
	window_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->a[0] = a0;
	p->a[1] = a1;
	p->a[2] = a2;
	p->denom = periodic ? (double)size : (double)(size - 1);
	if (p->denom == 0)
		p->denom = 1;
	gc_set_shape(out[0], dt, 1, &size);
	n->run = run_window;
	return 0;
}

int gc_prepare_HannWindow(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_window(k, n, in, out, 0.5, 0.5, 0);
}

int gc_prepare_HammingWindow(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_window(k, n, in, out, 25.0 / 46.0, 21.0 / 46.0, 0);
}

int gc_prepare_BlackmanWindow(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_window(k, n, in, out, 0.42, 0.5, 0.08);
}

/* ---- DFT ---------------------------------------------------------------- */

typedef struct dft_plan {
	int64_t outer, n_in, inner, c_in; /* input (outer, n_in, inner, c_in) */
	int64_t len, bins;		  /* transform length, bins written */
	bool inverse;
} dft_plan;

/* One transform: src[t] (complex, strided) -> dst[f] for f < bins. */
static void dft1(const gc_tensor *x, int64_t base, int64_t step, int64_t avail, int64_t c_in,
		 int64_t len, int64_t bins, bool inverse, const double *win, gc_tensor *y,
		 int64_t obase, int64_t ostep)
{
	double sign = inverse ? 1 : -1;
	for (int64_t f = 0; f < bins; f++) {
		double re = 0, im = 0;
		for (int64_t t = 0; t < len && t < avail; t++) {
			double xr = gc_kv_load(x, base + t * step);
			double xi = c_in == 2 ? gc_kv_load(x, base + t * step + 1) : 0;
			if (win) {
				xr *= win[t];
				xi *= win[t];
			}
			double ang = sign * 2 * M_PI * (double)((f * t) % len) / (double)len;
			double c = cos(ang), s = sin(ang);
			re += xr * c - xi * s;
			im += xr * s + xi * c;
		}
		if (inverse) {
			re /= (double)len;
			im /= (double)len;
		}
		gc_kv_store(y, obase + f * ostep, re);
		gc_kv_store(y, obase + f * ostep + 1, im);
	}
}

static int run_dft(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const dft_plan *p = n->state;
	for (int64_t o = 0; o < p->outer; o++)
		for (int64_t j = 0; j < p->inner; j++)
			dft1(in[0], (o * p->n_in * p->inner + j) * p->c_in, p->inner * p->c_in,
			     p->n_in, p->c_in, p->len, p->bins, p->inverse, NULL, out[0],
			     (o * p->bins * p->inner + j) * 2, p->inner * 2);
	return 0;
}

int gc_prepare_DFT(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t axis = gc_attr_i(k, "axis", 1), inverse = gc_attr_i(k, "inverse", 0);
	int64_t onesided = gc_attr_i(k, "onesided", 0);
	if (gc_kok(k))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EINVAL, "input must be a floating-point tensor, not %s",
			       gc_dtype_name(x->dtype));
	if (x->rank < 2 || (x->dims[x->rank - 1] != 1 && x->dims[x->rank - 1] != 2))
		return gc_kerr(k, GC_EINVAL, "input must be (..., 1) real or (..., 2) complex");
	int32_t a;
	if (n->opset >= 20) {
		/* DFT-20: the axis is input 2 (default -2), a negative one
		 * counting the complex dim too: [-r, -2] or [0, r - 2] */
		if (gc_attr_find(n, "axis"))
			return gc_kerr(k, GC_EINVAL,
				       "attribute 'axis' is not allowed at opset %d: axis is input 2",
				       n->opset);
		axis = -2;
		if (n->n_in > 2 && in[2] && const_int(k, in[2], "axis", &axis))
			return gc_kok(k);
		if (axis < -x->rank || axis == -1 || axis > x->rank - 2)
			return gc_kerr(k, GC_EINVAL,
				       "axis %" PRId64 " is outside [-%d, -2] and [0, %d] for input rank %d",
				       axis, x->rank, x->rank - 2, x->rank);
		a = (int32_t)(axis < 0 ? axis + x->rank : axis);
	} else if (gc_axis(k, axis, x->rank - 1, &a)) {
		return gc_kok(k);
	}
	dft_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->outer = 1;
	p->inner = 1;
	for (int i = 0; i < a; i++)
		p->outer *= x->dims[i];
	for (int i = a + 1; i < x->rank - 1; i++)
		p->inner *= x->dims[i];
	p->n_in = x->dims[a];
	p->c_in = x->dims[x->rank - 1];
	p->len = p->n_in;
	if (n->n_in > 1 && in[1] && const_int(k, in[1], "dft_length", &p->len))
		return gc_kok(k);
	if (p->len <= 0)
		return gc_kerr(k, GC_EINVAL, "dft_length %" PRId64 " is not positive", p->len);
	if (onesided && p->c_in == 2)
		return gc_kerr(k, GC_EINVAL, "onesided needs a real input");
	p->inverse = inverse != 0;
	p->bins = onesided ? p->len / 2 + 1 : p->len;
	int64_t dims[GC_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	dims[a] = p->bins;
	dims[x->rank - 1] = 2;
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	n->run = run_dft;
	return 0;
}

/* ---- STFT --------------------------------------------------------------- */

typedef struct stft_plan {
	int64_t batch, slen, c_in, step, len, frames, bins;
} stft_plan;

static int run_stft(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const stft_plan *p = n->state;
	double *win = NULL;
	if (n->n_in > 2 && in[2]) {
		win = k->scratch;
		for (int64_t t = 0; t < p->len; t++)
			win[t] = gc_kv_load(in[2], t);
	}
	for (int64_t b = 0; b < p->batch; b++)
		for (int64_t f = 0; f < p->frames; f++)
			dft1(in[0], (b * p->slen + f * p->step) * p->c_in, p->c_in, p->len, p->c_in,
			     p->len, p->bins, false, win, out[0],
			     ((b * p->frames + f) * p->bins) * 2, 2);
	return 0;
}

int gc_prepare_STFT(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0], *w = n->n_in > 2 ? in[2] : NULL;
	int64_t onesided = gc_attr_i(k, "onesided", 1), step, len = -1;
	if (gc_kok(k) || const_int(k, in[1], "frame_step", &step))
		return gc_kok(k);
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EINVAL, "input 'signal' must be floating-point, not %s",
			       gc_dtype_name(x->dtype));
	if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
		return gc_kerr(k, GC_EINVAL, "input 'signal' must be (batch, length, 1 or 2)");
	if (n->n_in > 3 && in[3] && const_int(k, in[3], "frame_length", &len))
		return gc_kok(k);
	if (w) {
		if (w->rank != 1 || !gc_kv_float(w->dtype))
			return gc_kerr(k, GC_EINVAL, "input 'window' must be a 1-D float tensor");
		if (len >= 0 && len != w->dims[0])
			return gc_kerr(k, GC_EINVAL,
				       "window length %" PRId64
				       " differs from frame_length %" PRId64,
				       w->dims[0], len);
		len = w->dims[0];
	}
	if (len <= 0 || len > x->dims[1] || step <= 0)
		return gc_kerr(k, GC_EINVAL,
			       "frame length %" PRId64 " / step %" PRId64
			       " do not fit a signal of %" PRId64,
			       len, step, x->dims[1]);
	stft_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->batch = x->dims[0];
	p->slen = x->dims[1];
	p->c_in = x->dims[2];
	p->step = step;
	p->len = len;
	p->frames = 1 + (p->slen - len) / step;
	p->bins = onesided && p->c_in == 1 ? len / 2 + 1 : len;
	int64_t dims[4] = {p->batch, p->frames, p->bins, 2};
	gc_set_shape(out[0], x->dtype, 4, dims);
	n->scratch_bytes = (uint64_t)len * sizeof(double);
	n->run = run_stft;
	return 0;
}

/* ---- MelWeightMatrix ---------------------------------------------------- */

typedef struct mel_plan {
	int64_t count;
	double w[];
} mel_plan;

static int run_mel(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)in;
	const mel_plan *p = n->state;
	for (int64_t i = 0; i < p->count; i++)
		gc_kv_store(out[0], i, p->w[i]);
	return 0;
}

int gc_prepare_MelWeightMatrix(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	gc_dtype dt;
	int64_t mels, dft_len, rate;
	if (out_dtype(k, &dt) || const_int(k, in[0], "num_mel_bins", &mels) ||
	    const_int(k, in[1], "dft_length", &dft_len) ||
	    const_int(k, in[2], "sample_rate", &rate))
		return gc_kok(k);
	for (int i = 3; i < 5; i++)
		if (!in[i]->data || !gc_kv_float(in[i]->dtype) || gc_tensor_numel(in[i]) != 1)
			return gc_kerr(
			    k, GC_EINVAL,
			    "input '%s' must be a floating-point scalar known when the program "
			    "is built",
			    i == 3 ? "lower_edge_hertz" : "upper_edge_hertz");
	if (mels <= 0 || dft_len <= 0 || rate <= 0)
		return gc_kerr(k, GC_EINVAL,
			       "num_mel_bins, dft_length and sample_rate must be positive");
	int64_t bins = dft_len / 2 + 1, cells;
	if (mels > INT64_MAX - 2 || !gc_mul_i64(bins, mels, &cells) ||
	    (uint64_t)cells > gc_limit_bytes() / sizeof(double))
		return gc_kerr(k, GC_ELIMIT,
			       "%" PRId64 " mel bins of %" PRId64 " spectrogram bins are over the "
			       "limit of %" PRIu64 " bytes (" GC_LIMIT_SETTING ")",
			       mels, bins, gc_limit_bytes());
	/* as the reference: the mel edges in float32, the rest in double */
	float lo = (float)gc_kv_load(in[3], 0), hi = (float)gc_kv_load(in[4], 0);
	float lmel = 2595.0f * log10f(1.0f + lo / 700.0f),
	      hmel = 2595.0f * log10f(1.0f + hi / 700.0f);
	float step = (hmel - lmel) / (float)(mels + 2);
	int64_t *fb = gc_malloc((size_t)(mels + 2) * sizeof(int64_t));
	mel_plan *p = gc_malloc(sizeof *p + (size_t)(bins * mels) * sizeof(double));
	if (!fb || !p) {
		gc_free(fb);
		gc_free(p);
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	}
	for (int64_t i = 0; i < mels + 2; i++) {
		double f = (double)i * (double)step + (double)lmel;
		f = 700 * (pow(10, f / 2595) - 1);
		double b = floor((double)(dft_len + 1) * f / (double)rate);
		/* (NaN or far outside: a band outside the bins, refused below) */
		fb[i] = gc_float_in(b, -1, (double)bins) ? (int64_t)b : -1;
	}
	p->count = bins * mels;
	memset(p->w, 0, (size_t)p->count * sizeof(double));
	n->state = p;
	for (int64_t i = 0; i < mels; i++) {
		int64_t l = fb[i], c = fb[i + 1], h = fb[i + 2];
		if (l < 0 || h < 0 || h >= bins || c < 0 || c >= bins) {
			gc_free(fb);
			return gc_kerr(k, GC_EINVAL,
				       "mel band %" PRId64 " falls outside the %" PRId64
				       " spectrogram bins",
				       i, bins);
		}
		if (c == l)
			p->w[c * mels + i] = 1;
		else
			for (int64_t j = l; j <= c; j++)
				p->w[j * mels + i] = (double)(j - l) / (double)(c - l);
		for (int64_t j = c; j < h; j++)
			p->w[j * mels + i] = (double)(h - j) / (double)(h - c);
	}
	gc_free(fb);
	int64_t dims[2] = {bins, mels};
	gc_set_shape(out[0], dt, 2, dims);
	n->run = run_mel;
	return 0;
}
