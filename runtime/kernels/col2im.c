/*
 * Col2Im (opset 18): the inverse of im2col. Input (N, C * prod(block_shape),
 * L) holds, for every block position of a sliding window over an image of
 * image_shape (with pads, strides, dilations), that block's values; each is
 * added into the output image (N, C, image_shape...). Any number of spatial
 * dimensions; image_shape and block_shape must be known when the program
 * is built (or the node is prepared at run time). Channels split over the
 * nn-par pool: each owns its output plane.
 */
#include <inttypes.h>
#include <string.h>

#include "kutil.h"
#include "nn-par.h"
#include "nn.h"

#define C2I_MAX (GC_MAX_RANK - 2)

typedef struct c2i_state {
	gc_nn_base base;
	int32_t r;
	int64_t channels; /* N * C */
	int64_t img[C2I_MAX], blk[C2I_MAX], out[C2I_MAX];
	int64_t stride[C2I_MAX], dil[C2I_MAX], pad[C2I_MAX];
	int64_t img_sp, K, L;
} c2i_state;

typedef struct c2i_job {
	const c2i_state *st;
	const void *x;
	void *y;
	bool dbl;
} c2i_job;

#define C2I_RANGE(T, sfx)                                                                          \
	static void c2i_range_##sfx(const c2i_state *st, const T *x, T *y, int64_t c0, int64_t c1) \
	{                                                                                          \
		const int r = st->r;                                                               \
		const int64_t OW = st->out[r - 1], W = st->img[r - 1];                             \
		const int64_t rows = st->L / (OW ? OW : 1);                                        \
		int64_t istr[C2I_MAX];                                                             \
		gc_strides(st->img, r, istr);                                                      \
		for (int64_t ch = c0; ch < c1; ch++) {                                             \
			T *yc = y + ch * st->img_sp;                                               \
			memset(yc, 0, (size_t)st->img_sp * sizeof(T));                             \
			for (int64_t kk = 0; kk < st->K; kk++) {                                   \
				int64_t kd[C2I_MAX], rem = kk;                                     \
				for (int i = r - 1; i >= 0; i--) {                                 \
					kd[i] = rem % st->blk[i];                                  \
					rem /= st->blk[i];                                         \
				}                                                                  \
				const T *xr = x + (ch * st->K + kk) * st->L;                       \
				int64_t ld[C2I_MAX] = {0};                                         \
				int64_t kw = kd[r - 1] * st->dil[r - 1] - st->pad[r - 1];          \
				for (int64_t row = 0; row < rows; row++, xr += OW) {               \
					int64_t off = 0;                                           \
					bool in = true;                                            \
					for (int i = 0; i < r - 1; i++) {                          \
						int64_t p = ld[i] * st->stride[i] - st->pad[i] +   \
							    kd[i] * st->dil[i];                    \
						in = in && p >= 0 && p < st->img[i];               \
						off += p * istr[i];                                \
					}                                                          \
					for (int i = r - 2; i >= 0; i--) {                         \
						if (++ld[i] < st->out[i])                          \
							break;                                     \
						ld[i] = 0;                                         \
					}                                                          \
					if (!in)                                                   \
						continue;                                          \
					T *yr = yc + off;                                          \
					const int64_t s = st->stride[r - 1];                       \
					for (int64_t j = 0; j < OW; j++) {                         \
						int64_t p = j * s + kw;                            \
						if (p >= 0 && p < W)                               \
							yr[p] += xr[j];                            \
					}                                                          \
				}                                                                  \
			}                                                                          \
		}                                                                                  \
	}

C2I_RANGE(float, f32)
C2I_RANGE(double, f64)

static void c2i_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const c2i_job *j = arg;
	int64_t c0, c1;
	gc_nn_part_range(j->st->channels, part, parts, &c0, &c1);
	if (j->dbl)
		c2i_range_f64(j->st, j->x, j->y, c0, c1);
	else
		c2i_range_f32(j->st, j->x, j->y, c0, c1);
}

static int c2i_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const c2i_state *st = n->state;
	c2i_job j = {st, in[0]->data, out[0]->data, in[0]->dtype == GC_DTYPE_DOUBLE};
	double cycles = 2.0 * (double)st->channels * (double)(st->K * st->L + st->img_sp);
	gc_nn_run_parts(gc_nn_par_threads(k->threads, cycles), st->channels, c2i_part, &j);
	return 0;
}

/* Attribute `name` (r values, each >= lo) into v, or def when absent. */
static int c2i_attr(gc_kctx *k, const char *name, int32_t r, int64_t n_want, int64_t lo,
		    int64_t def, int64_t *v)
{
	const int64_t *a;
	int64_t na = gc_attr_ints(k, name, &a);
	if (gc_kok(k))
		return gc_kok(k);
	if (a && na != n_want)
		return gc_kerr(k, GC_EINVAL, "attribute '%s' has %" PRId64 " values; expected %" PRId64
					     " for %d spatial dimensions",
			       name, na, n_want, r);
	for (int64_t i = 0; i < n_want; i++) {
		v[i] = a ? a[i] : def;
		if (v[i] < lo || v[i] > (INT64_C(1) << 31))
			return gc_kerr(k, GC_EINVAL, "attribute '%s' has value %" PRId64
						     "; it must be from %" PRId64 " to 2^31",
				       name, v[i], lo);
	}
	return 0;
}

int gc_prepare_Col2Im(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	char b1[128];
	if (!(x->dtype == GC_DTYPE_FLOAT || x->dtype == GC_DTYPE_DOUBLE || gc_nn_is_half(x->dtype)))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input 'input' has type %s; graphcc's Col2Im takes float16, "
			       "bfloat16, float32 or float64",
			       gc_dtype_name(x->dtype));
	if (x->rank != 3)
		return gc_kerr(k, GC_EINVAL,
			       "input 'input' has shape %s; expected (N, C * prod(block_shape), L)",
			       gc_shape_str(x->dims, x->rank, b1, sizeof b1));
	int64_t img[GC_MAX_RANK], blk[GC_MAX_RANK], ni, nb;
	if (gc_const_ints(k, in[1], "image_shape", img, C2I_MAX, &ni) ||
	    gc_const_ints(k, in[2], "block_shape", blk, C2I_MAX, &nb))
		return gc_kok(k);
	if (ni != nb || ni < 1 || in[1]->rank != 1 || in[2]->rank != 1)
		return gc_kerr(k, GC_EINVAL,
			       "inputs 'image_shape' (%" PRId64 " values) and 'block_shape' (%" PRId64
			       " values) must be 1-D and of one length >= 1",
			       ni, nb);
	int32_t r = (int32_t)ni;
	c2i_state *st = gc_kstate(k, n, sizeof *st);
	if (!st)
		return gc_kok(k);
	int64_t pads[2 * C2I_MAX];
	if (c2i_attr(k, "strides", r, r, 1, 1, st->stride) ||
	    c2i_attr(k, "dilations", r, r, 1, 1, st->dil) || c2i_attr(k, "pads", r, 2 * r, 0, 0, pads))
		return gc_kok(k);
	st->r = r;
	st->K = st->L = st->img_sp = 1;
	for (int i = 0; i < r; i++) {
		if (img[i] < 0 || img[i] > (INT64_C(1) << 40) || blk[i] < 1 ||
		    blk[i] > (INT64_C(1) << 31))
			return gc_kerr(k, GC_EINVAL,
				       "image_shape[%d] = %" PRId64 " and block_shape[%d] = %" PRId64
				       " must be >= 0 and >= 1",
				       i, img[i], i, blk[i]);
		int64_t eff = (blk[i] - 1) * st->dil[i] + 1;
		int64_t span = img[i] + pads[i] + pads[r + i] - eff;
		if (span < 0)
			return gc_kerr(k, GC_EINVAL,
				       "the block (%" PRId64 " with dilation %" PRId64
				       ") does not fit image dimension %d of size %" PRId64
				       " plus pads %" PRId64 "+%" PRId64,
				       blk[i], st->dil[i], i, img[i], pads[i], pads[r + i]);
		st->img[i] = img[i];
		st->blk[i] = blk[i];
		st->pad[i] = pads[i];
		st->out[i] = span / st->stride[i] + 1;
		if (!gc_mul_i64(st->K, blk[i], &st->K) || !gc_mul_i64(st->L, st->out[i], &st->L) ||
		    !gc_mul_i64(st->img_sp, img[i], &st->img_sp))
			return gc_kerr(k, GC_ELIMIT, "image_shape and block_shape are too large");
	}
	if (x->dims[1] % st->K || x->dims[2] != st->L)
		return gc_kerr(k, GC_EINVAL,
			       "input 'input' has shape %s; with block_shape of %" PRId64
			       " elements and %" PRId64
			       " block positions it must be (N, C * %" PRId64 ", %" PRId64 ")",
			       gc_shape_str(x->dims, x->rank, b1, sizeof b1), st->K, st->L, st->K,
			       st->L);
	int64_t C = x->dims[1] / st->K;
	st->channels = x->dims[0] * C;
	int64_t dims[GC_MAX_RANK] = {x->dims[0], C};
	memcpy(dims + 2, img, sizeof(int64_t) * (size_t)r);
	gc_set_shape(out[0], x->dtype, r + 2, dims);
	if (gc_nn_is_half(x->dtype))
		return gc_nn_half_setup(k, n, in, out, c2i_run, 0);
	n->run = c2i_run;
	return 0;
}
