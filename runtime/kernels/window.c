/*
 * The sliding-window arithmetic that Conv (conv.c), ConvTranspose
 * (conv-transpose.c) and pooling share (nn.h): a window's output sizes and
 * pads from its attributes, checked.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kutil.h"
#include "nn.h"

GC_NN_O3

const char *gc_nn_ints_str(const int64_t *v, int64_t n, char *buf, size_t len)
{
	size_t at = 0;
	at += (size_t)snprintf(buf + at, len - at, "[");
	for (int64_t i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64, i ? ", " : "", v[i]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
	return buf;
}

int gc_nn_window_init(gc_kctx *k, int32_t nsp, const int64_t *in_sp, const int64_t *kernel,
		      int ceil_mode, gc_nn_window *w)
{
	char b1[160], b2[160];
	const int64_t *ks, *ss, *ds, *ps;
	int64_t nk = gc_attr_ints(k, "kernel_shape", &ks);
	int64_t ns = gc_attr_ints(k, "strides", &ss);
	int64_t nd = gc_attr_ints(k, "dilations", &ds);
	int64_t np = gc_attr_ints(k, "pads", &ps);
	const char *ap = gc_attr_s(k, "auto_pad", "NOTSET");
	if (gc_kok(k))
		return gc_kok(k);
	if (nsp < 1 || nsp > GC_NN_MAX_SPATIAL)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "%d spatial dimensions; graphcc supports 1 to %d", nsp,
			       GC_NN_MAX_SPATIAL);
	if (!kernel && !ks)
		return gc_kerr(k, GC_EINVAL, "attribute 'kernel_shape' is required");
	if (ks && nk != nsp)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'kernel_shape' %s has %" PRId64 " values, the input "
			       "has %d spatial dimensions",
			       gc_nn_ints_str(ks, nk, b1, sizeof b1), nk, nsp);
	if (ks && kernel && memcmp(ks, kernel, (size_t)nsp * sizeof *ks))
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'kernel_shape' %s differs from the weights' spatial "
			       "shape %s",
			       gc_nn_ints_str(ks, nk, b1, sizeof b1),
			       gc_nn_ints_str(kernel, nsp, b2, sizeof b2));
	if (ss && ns != nsp)
		return gc_kerr(k, GC_EINVAL, "attribute 'strides' %s needs %d values",
			       gc_nn_ints_str(ss, ns, b1, sizeof b1), nsp);
	if (ds && nd != nsp)
		return gc_kerr(k, GC_EINVAL, "attribute 'dilations' %s needs %d values",
			       gc_nn_ints_str(ds, nd, b1, sizeof b1), nsp);
	if (ps && np != 2 * nsp)
		return gc_kerr(k, GC_EINVAL, "attribute 'pads' %s needs %d values",
			       gc_nn_ints_str(ps, np, b1, sizeof b1), 2 * nsp);
	enum { NOTSET, SAME_UPPER, SAME_LOWER, VALID } mode;
	if (!strcmp(ap, "NOTSET") || !ap[0])
		mode = NOTSET;
	else if (!strcmp(ap, "SAME_UPPER"))
		mode = SAME_UPPER;
	else if (!strcmp(ap, "SAME_LOWER"))
		mode = SAME_LOWER;
	else if (!strcmp(ap, "VALID"))
		mode = VALID;
	else
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'auto_pad' is \"%s\"; expected NOTSET, SAME_UPPER, "
			       "SAME_LOWER or VALID",
			       ap);
	memset(w, 0, sizeof *w);
	w->nsp = nsp;
	int off = GC_NN_MAX_SPATIAL - nsp;
	for (int d = 0; d < GC_NN_MAX_SPATIAL; d++) {
		w->in[d] = w->k[d] = w->stride[d] = w->dil[d] = w->out[d] = 1;
	}
	for (int i = 0; i < nsp; i++) {
		int d = off + i;
		int64_t in = in_sp[i], kk = ks ? ks[i] : kernel[i];
		int64_t s = ss ? ss[i] : 1, dl = ds ? ds[i] : 1;
		int64_t pl = ps ? ps[i] : 0, ph = ps ? ps[nsp + i] : 0;
		if (kk < 1)
			return gc_kerr(k, GC_EINVAL,
				       "kernel size %" PRId64 " on spatial axis %d must be >= 1",
				       kk, i);
		if (s < 1)
			return gc_kerr(k, GC_EINVAL, "attribute 'strides' %s must be >= 1",
				       gc_nn_ints_str(ss, ns, b1, sizeof b1));
		if (dl < 1)
			return gc_kerr(k, GC_EINVAL, "attribute 'dilations' %s must be >= 1",
				       gc_nn_ints_str(ds, nd, b1, sizeof b1));
		if (pl < 0 || ph < 0)
			return gc_kerr(k, GC_EINVAL, "attribute 'pads' %s must be >= 0",
				       gc_nn_ints_str(ps, np, b1, sizeof b1));
		/* Sizes read from a file: keep every product below 2^63. */
		const int64_t big = INT64_C(1) << 31;
		if (kk > big || s > big || dl > big || pl > big || ph > big || in > (INT64_C(1) << 40))
			return gc_kerr(k, GC_ELIMIT,
				       "spatial axis %d: size %" PRId64 ", kernel %" PRId64
				       ", stride %" PRId64 ", dilation %" PRId64 " or pads %" PRId64
				       "+%" PRId64 " is too large",
				       i, in, kk, s, dl, pl, ph);
		int64_t eff = (kk - 1) * dl + 1, out;
		if (mode == SAME_UPPER || mode == SAME_LOWER) {
			out = (in + s - 1) / s;
			int64_t total = (out - 1) * s + eff - in;
			if (total < 0)
				total = 0;
			pl = mode == SAME_UPPER ? total / 2 : total - total / 2;
			ph = total - pl;
		} else {
			if (mode == VALID)
				pl = ph = 0;
			int64_t span = in + pl + ph - eff;
			if (span < 0)
				return gc_kerr(k, GC_EINVAL,
					       "the kernel (%" PRId64 " wide with dilation %" PRId64
					       ") does not fit spatial axis %d of size %" PRId64
					       " plus pads %" PRId64 "+%" PRId64,
					       kk, dl, i, in, pl, ph);
			if (ceil_mode && mode == NOTSET) {
				out = (span + s - 1) / s + 1;
				/* the last window must start inside the input or the
				 * leading pad, as ONNX Runtime and PyTorch have it */
				if ((out - 1) * s >= in + pl)
					out--;
			} else {
				out = span / s + 1;
			}
		}
		w->in[d] = in;
		w->k[d] = kk;
		w->stride[d] = s;
		w->dil[d] = dl;
		w->pad_lo[d] = pl;
		w->pad_hi[d] = ph;
		w->out[d] = out;
	}
	int64_t pin, pout, pk;
	if (__builtin_mul_overflow(w->in[0] * w->in[1], w->in[2], &pin) ||
	    __builtin_mul_overflow(w->out[0] * w->out[1], w->out[2], &pout) ||
	    __builtin_mul_overflow(w->k[0] * w->k[1], w->k[2], &pk) || pin > (INT64_C(1) << 40) ||
	    pout > (INT64_C(1) << 40) || pk > (INT64_C(1) << 40))
		return gc_kerr(k, GC_ELIMIT, "the spatial sizes are too large");
	return 0;
}
