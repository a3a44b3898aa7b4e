/*
 * CenterCropPad (opset 18): each axis of `axes` (all by default) is cut or
 * zero-padded to the size `shape` gives, centred: a cut of d elements drops
 * floor(d / 2) in front, a pad of d adds floor(d / 2) in front (ONNX's
 * reference). Any element type: rows of the last axis move as bytes; the
 * padding is zeros ("" for strings).
 */
#include <inttypes.h>
#include <string.h>

#include "kutil.h"
#include "shape.h"

typedef struct crop_state {
	int32_t rank;
	/* input index = output index - shift, kept when 0 <= it < in dims */
	int64_t shift[GC_MAX_RANK];
} crop_state;

static const char crop_empty[] = "";

static void crop_fill(void *dst, int64_t count, gc_dtype dt, size_t es)
{
	if (dt == GC_DTYPE_STRING)
		for (int64_t i = 0; i < count; i++)
			((const char **)dst)[i] = crop_empty;
	else
		memset(dst, 0, (size_t)count * es);
}

static int crop_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const crop_state *st = n->state;
	const gc_tensor *x = in[0];
	gc_tensor *y = out[0];
	int32_t r = st->rank;
	size_t es = gc_dtype_size(x->dtype);
	int64_t rows = 1, yw = y->dims[r - 1], xw = x->dims[r - 1];
	for (int i = 0; i < r - 1; i++)
		rows *= y->dims[i];
	if (rows == 0 || yw == 0)
		return 0;
	int64_t xs[GC_MAX_RANK], idx[GC_MAX_RANK] = {0};
	gc_strides(x->dims, r, xs);
	/* the last axis: output columns [c0, c1) read input columns from c0 - shift */
	int64_t sh = st->shift[r - 1];
	int64_t c0 = sh > 0 ? sh : 0, c1 = xw + sh < yw ? xw + sh : yw;
	if (c1 < c0)
		c1 = c0;
	const char *xd = x->data;
	char *yd = y->data;
	for (int64_t row = 0; row < rows; row++) {
		char *yr = yd + (size_t)(row * yw) * es;
		int64_t off = 0;
		bool inside = true;
		for (int i = 0; i < r - 1 && inside; i++) {
			int64_t j = idx[i] - st->shift[i];
			inside = j >= 0 && j < x->dims[i];
			off += j * xs[i];
		}
		if (!inside || c1 == c0) {
			crop_fill(yr, yw, x->dtype, es);
		} else {
			crop_fill(yr, c0, x->dtype, es);
			memcpy(yr + (size_t)c0 * es, xd + (size_t)(off + c0 - sh) * es,
			       (size_t)(c1 - c0) * es);
			crop_fill(yr + (size_t)c1 * es, yw - c1, x->dtype, es);
		}
		for (int i = r - 2; i >= 0; i--) {
			if (++idx[i] < y->dims[i])
				break;
			idx[i] = 0;
		}
	}
	return 0;
}

int gc_prepare_CenterCropPad(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			     gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	char b1[128];
	int64_t shape[GC_MAX_RANK], ns;
	if (x->rank < 1)
		return gc_kerr(k, GC_EINVAL, "input 'input_data' is a scalar; it needs an axis");
	if (in[1] && in[1]->rank != 1)
		return gc_kerr(k, GC_EINVAL, "input 'shape' must be 1-D, not of rank %d",
			       in[1]->rank);
	if (gc_const_ints(k, in[1], "shape", shape, GC_MAX_RANK, &ns))
		return gc_kok(k);
	const int64_t *av;
	int64_t na = gc_attr_ints(k, "axes", &av);
	if (gc_kok(k))
		return gc_kok(k);
	int32_t axes[GC_MAX_RANK];
	bool seen[GC_MAX_RANK] = {false};
	if (!av)
		na = x->rank;
	if (na > x->rank)
		return gc_kerr(k, GC_EINVAL, "attribute 'axes' has %" PRId64 " values for rank %d",
			       na, x->rank);
	for (int64_t i = 0; i < na; i++) {
		if (!av)
			axes[i] = (int32_t)i;
		else if (gc_axis(k, av[i], x->rank, &axes[i]))
			return gc_kok(k);
		if (seen[axes[i]])
			return gc_kerr(k, GC_EINVAL, "attribute 'axes' names axis %d twice", axes[i]);
		seen[axes[i]] = true;
	}
	if (ns != na)
		return gc_kerr(k, GC_EINVAL,
			       "input 'shape' has %" PRId64 " values for %" PRId64
			       " axes (input 'input_data' has shape %s)",
			       ns, na, gc_shape_str(x->dims, x->rank, b1, sizeof b1));
	crop_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	st->rank = x->rank;
	int64_t dims[GC_MAX_RANK];
	memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
	for (int64_t i = 0; i < na; i++) {
		int a = axes[i];
		if (shape[i] < 0 || shape[i] > (INT64_C(1) << 48))
			return gc_kerr(k, GC_EINVAL,
				       "input 'shape' asks for size %" PRId64 " on axis %d", shape[i],
				       a);
		int64_t d = shape[i] - x->dims[a];
		/* a pad of d: d/2 in front; a cut of -d: (-d)/2 dropped in front */
		st->shift[a] = d >= 0 ? d / 2 : -((-d) / 2);
		dims[a] = shape[i];
	}
	gc_set_shape(out[0], x->dtype, x->rank, dims);
	n->run = crop_run;
	return 0;
}
