/*
 * Shape kernels, part 1: the shared byte-moving helpers, and the ops that
 * make values or only change the shape: Constant, ConstantOfShape, Identity,
 * Dropout (inference), Shape, Size, Reshape, Flatten, Squeeze, Unsqueeze,
 * Range. Data-moving ops are in shape-move.c, indexing ops in shape-index.c.
 */
#include "../ops.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "../alloc.h"
#include "kutil.h"
#include "control.h"
#include "nn-par.h"
#include "shape-impl.h"

/* ---- helpers ------------------------------------------------------------ */

size_t gc_shape_esize(gc_kctx *k, const gc_tensor *t, const char *what)
{
	/* A string element is a `char *` that owns nothing (strpool.h): these
	 * ops move and copy elements as bytes, strings included; a slot they
	 * zero reads as "". */
	size_t s = gc_dtype_size(t->dtype);
	if (!s)
		gc_kerr(k, GC_EINVAL, "%s has invalid element type %d", what, (int)t->dtype);
	return s;
}

int gc_check_index_type(gc_kctx *k, const gc_tensor *t, const char *what)
{
	if (t->dtype != GC_DTYPE_INT64 && t->dtype != GC_DTYPE_INT32)
		return gc_kerr(k, GC_EINVAL, "input '%s' must be int32 or int64, not %s", what,
			       gc_dtype_name(t->dtype));
	return 0;
}

typedef struct copy_job {
	char *dst;
	const char *src;
	int64_t n;
} copy_job;

static void copy_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const copy_job *j = arg;
	int64_t lo, hi;
	gc_line_range(j->n, part, parts, &lo, &hi);
	if (hi > lo)
		memcpy(j->dst + lo, j->src + lo, (size_t)(hi - lo));
}

void gc_copy_bytes(int threads, void *dst, const void *src, size_t nbytes)
{
	if (dst == src || !nbytes)
		return;
	/* ~4 bytes a cycle (Concat's count) */
	int t = gc_nn_par_threads(threads, (double)nbytes / 4);
	if (t <= 1 || nbytes < 2 * 4096) {
		memcpy(dst, src, nbytes);
		return;
	}
	copy_job j = {dst, src, (int64_t)nbytes};
	gc_nn_parallel(t, gc_nn_par_parts(t, (int64_t)nbytes / 4096), copy_part, &j);
}

void gc_fill(void *dst, const void *value, size_t esize, int64_t count)
{
#define GC_FILL_(T)                                                                                \
	do {                                                                                       \
		T v_;                                                                              \
		memcpy(&v_, value, sizeof v_);                                                     \
		T *d_ = dst;                                                                       \
		for (int64_t i = 0; i < count; i++)                                                \
			d_[i] = v_;                                                                \
	} while (0)
	switch (esize) {
	case 1:
		memset(dst, *(const unsigned char *)value, (size_t)count);
		break;
	case 2:
		GC_FILL_(uint16_t);
		break;
	case 4:
		GC_FILL_(uint32_t);
		break;
	case 8:
		GC_FILL_(uint64_t);
		break;
	default:
		for (int64_t i = 0; i < count; i++)
			memcpy((char *)dst + i * (int64_t)esize, value, esize);
	}
#undef GC_FILL_
}

/* dst[i] = src[i * stride] for i < n; stride in elements. */
static void strided_row(char *dst, const char *src, size_t esize, int64_t n, int64_t stride)
{
#define GC_ROW_(T)                                                                                 \
	do {                                                                                       \
		T *d_ = (T *)dst;                                                                  \
		const T *s_ = (const T *)src;                                                      \
		for (int64_t i = 0; i < n; i++)                                                    \
			d_[i] = s_[i * stride];                                                    \
	} while (0)
	switch (esize) {
	case 1:
		GC_ROW_(uint8_t);
		break;
	case 2:
		GC_ROW_(uint16_t);
		break;
	case 4:
		GC_ROW_(uint32_t);
		break;
	case 8:
		GC_ROW_(uint64_t);
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			memcpy(dst + i * (int64_t)esize, src + i * stride * (int64_t)esize, esize);
	}
#undef GC_ROW_
}

#define GC_TILE 32

/*
 * The 4-byte tile (float32, int32: the common case) moves 4x4 blocks
 * through registers; with SSE2 (every x86-64) that is 4 loads, a shuffle and
 * 4 stores, about twice as fast as element by element.
 */
static void tile_transpose4(uint32_t *restrict d, const uint32_t *restrict s, int64_t na,
			    int64_t nl, int64_t ds, int64_t ss)
{
	for (int64_t a0 = 0; a0 < na; a0 += GC_TILE) {
		int64_t a1 = a0 + GC_TILE < na ? a0 + GC_TILE : na;
		for (int64_t l0 = 0; l0 < nl; l0 += GC_TILE) {
			int64_t l1 = l0 + GC_TILE < nl ? l0 + GC_TILE : nl;
			int64_t a = a0;
			for (; a + 4 <= a1; a += 4) {
				int64_t l = l0;
				for (; l + 4 <= l1; l += 4) {
#if defined(__SSE2__)
					__m128 r0 =
					    _mm_loadu_ps((const float *)(s + a + (l + 0) * ss));
					__m128 r1 =
					    _mm_loadu_ps((const float *)(s + a + (l + 1) * ss));
					__m128 r2 =
					    _mm_loadu_ps((const float *)(s + a + (l + 2) * ss));
					__m128 r3 =
					    _mm_loadu_ps((const float *)(s + a + (l + 3) * ss));
					_MM_TRANSPOSE4_PS(r0, r1, r2, r3);
					_mm_storeu_ps((float *)(d + (a + 0) * ds + l), r0);
					_mm_storeu_ps((float *)(d + (a + 1) * ds + l), r1);
					_mm_storeu_ps((float *)(d + (a + 2) * ds + l), r2);
					_mm_storeu_ps((float *)(d + (a + 3) * ds + l), r3);
#else
					for (int j = 0; j < 4; j++)
						for (int i = 0; i < 4; i++)
							d[(a + j) * ds + l + i] =
							    s[a + j + (l + i) * ss];
#endif
				}
				for (; l < l1; l++)
					for (int j = 0; j < 4; j++)
						d[(a + j) * ds + l] = s[a + j + l * ss];
			}
			for (; a < a1; a++)
				for (int64_t l = l0; l < l1; l++)
					d[a * ds + l] = s[a + l * ss];
		}
	}
}

/*
 * One 2-D transpose: dst[a * dstride + l] = src[a + l * sstride] for a < na,
 * l < nl, in GC_TILE x GC_TILE blocks so both sides stay in cache.
 */
static void tile_transpose(char *dst, const char *src, size_t esize, int64_t na, int64_t nl,
			   int64_t dstride, int64_t sstride)
{
#define GC_TT_(T)                                                                                  \
	do {                                                                                       \
		T *d_ = (T *)dst;                                                                  \
		const T *s_ = (const T *)src;                                                      \
		for (int64_t a0 = 0; a0 < na; a0 += GC_TILE) {                                     \
			int64_t a1 = a0 + GC_TILE < na ? a0 + GC_TILE : na;                        \
			for (int64_t l0 = 0; l0 < nl; l0 += GC_TILE) {                             \
				int64_t l1 = l0 + GC_TILE < nl ? l0 + GC_TILE : nl;                \
				for (int64_t a = a0; a < a1; a++)                                  \
					for (int64_t l = l0; l < l1; l++)                          \
						d_[a * dstride + l] = s_[a + l * sstride];         \
			}                                                                          \
		}                                                                                  \
	} while (0)
	switch (esize) {
	case 1:
		GC_TT_(uint8_t);
		break;
	case 2:
		GC_TT_(uint16_t);
		break;
	case 4:
		tile_transpose4((uint32_t *)dst, (const uint32_t *)src, na, nl, dstride, sstride);
		break;
	case 8:
		GC_TT_(uint64_t);
		break;
	default:
		for (int64_t a = 0; a < na; a++)
			for (int64_t l = 0; l < nl; l++)
				memcpy(dst + (a * dstride + l) * (int64_t)esize,
				       src + (a + l * sstride) * (int64_t)esize, esize);
	}
#undef GC_TT_
}

void gc_view_copy(void *dst, const void *src, size_t esize, int32_t rank, const int64_t *dims,
		  const int64_t *sstrides)
{
	int64_t d[GC_VIEW_MAX], s[GC_VIEW_MAX];
	int r = 0;
	/* Drop unit axes and merge axes that are contiguous in src too. */
	for (int i = 0; i < rank; i++) {
		if (dims[i] == 0)
			return;
		if (dims[i] == 1)
			continue;
		if (r > 0 && s[r - 1] == sstrides[i] * dims[i]) {
			d[r - 1] *= dims[i];
			s[r - 1] = sstrides[i];
			continue;
		}
		d[r] = dims[i];
		s[r] = sstrides[i];
		r++;
	}
	char *out = dst;
	const char *in = src;
	int64_t es = (int64_t)esize;
	if (r == 0) {
		memcpy(out, in, esize);
		return;
	}
	int64_t dstr[GC_VIEW_MAX];
	gc_strides(d, r, dstr);
	int last = r - 1;
	int tile_axis = -1; /* an outer axis that is contiguous in src */
	if (s[last] != 1)
		for (int i = last - 1; i >= 0 && tile_axis < 0; i--)
			if (s[i] == 1 && d[i] >= 4 && d[last] >= 4)
				tile_axis = i;
	/* Odometer over the axes that are not handled by the inner kernel. */
	int64_t idx[GC_VIEW_MAX] = {0};
	int64_t soff = 0, doff = 0;
	for (;;) {
		if (tile_axis >= 0)
			tile_transpose(out + doff * es, in + soff * es, esize, d[tile_axis],
				       d[last], dstr[tile_axis], s[last]);
		else if (s[last] == 1)
			memcpy(out + doff * es, in + soff * es, (size_t)(d[last] * es));
		else
			strided_row(out + doff * es, in + soff * es, esize, d[last], s[last]);
		int i = last - 1;
		for (; i >= 0; i--) {
			if (i == tile_axis)
				continue;
			if (++idx[i] < d[i]) {
				soff += s[i];
				doff += dstr[i];
				break;
			}
			soff -= s[i] * (d[i] - 1);
			doff -= dstr[i] * (d[i] - 1);
			idx[i] = 0;
		}
		if (i < 0)
			return;
	}
}

int gc_run_copy(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)n;
	gc_copy_bytes(k->threads, out[0]->data, in[0]->data, (size_t)gc_tensor_nbytes(out[0]));
	return 0;
}

gc_view *gc_view_new(gc_kctx *k, gc_node *n, size_t esize)
{
	gc_view *v = gc_calloc(1, sizeof *v);
	if (!v) {
		gc_kerr(k, GC_ENOMEM, "out of memory");
		return NULL;
	}
	v->esize = esize;
	n->state = v;
	n->run = gc_run_view;
	return v;
}

/* A view copy split along the view's outermost axis that is not 1. */
typedef struct view_job {
	const gc_view *v;
	char *dst;
	const char *src;
	int axis;
	int64_t dst_step; /* output bytes per step along axis */
} view_job;

static void view_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const view_job *j = arg;
	const gc_view *v = j->v;
	int64_t lo, hi, dims[GC_VIEW_MAX];
	gc_nn_part_range(v->dims[j->axis], part, parts, &lo, &hi);
	if (lo >= hi)
		return;
	memcpy(dims, v->dims, sizeof dims);
	dims[j->axis] = hi - lo;
	gc_view_copy(j->dst + lo * j->dst_step,
		     j->src + lo * v->strides[j->axis] * (int64_t)v->esize, v->esize, v->rank,
		     dims, v->strides);
}

int gc_run_view(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	gc_view_run(k->threads, n->state, in[0]->data, out[0]->data, gc_tensor_numel(out[0]));
	return 0;
}

void gc_view_run(int threads, const gc_view *v, const void *src, void *dst, int64_t numel)
{
	if (numel == 0)
		return;
	view_job j = {v, dst, (const char *)src + v->offset * (int64_t)v->esize, 0, 0};
	while (j.axis < v->rank - 1 && v->dims[j.axis] == 1)
		j.axis++;
	/* ~a cycle an element of up to 8 bytes: a strided gather or a copy */
	int t = gc_nn_par_threads(threads, (double)numel * (double)(1 + v->esize / 8));
	if (t <= 1 || v->rank == 0 || v->dims[j.axis] < 2) {
		gc_view_copy(j.dst, j.src, v->esize, v->rank, v->dims, v->strides);
		return;
	}
	j.dst_step = (int64_t)v->esize;
	for (int i = j.axis + 1; i < v->rank; i++)
		j.dst_step *= v->dims[i];
	gc_nn_parallel(t, gc_nn_par_parts(t, v->dims[j.axis]), view_part, &j);
}

/* Output 0 holds bytes prepare already computed into n->state. */
static int run_known(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)in;
	gc_copy_bytes(k->threads, out[0]->data, n->state, (size_t)gc_tensor_nbytes(out[0]));
	return 0;
}

/* Sets out's shape, copies `bytes` into fresh node state and publishes it as
 * out's known value. */
static int set_known(gc_kctx *k, gc_node *n, gc_tensor *out, gc_dtype dt, int32_t rank,
		     const int64_t *dims, const void *bytes)
{
	gc_set_shape(out, dt, rank, dims);
	int64_t nb = gc_tensor_nbytes(out);
	if (nb < 0 || (uint64_t)nb > SIZE_MAX)
		return gc_kerr(k, GC_ELIMIT, "constant output is too large");
	n->state = gc_malloc((size_t)nb);
	if (!n->state)
		return gc_kerr(k, GC_ENOMEM, "out of memory for a %" PRId64 "-byte constant", nb);
	if (nb)
		memcpy(n->state, bytes, (size_t)nb);
	out->data = n->state;
	n->run = run_known;
	return 0;
}

/* ---- Constant, ConstantOfShape ----------------------------------------- */

int gc_prepare_Constant(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)in;
	static const char *const names[] = {"value",	    "sparse_value", "value_float",
					    "value_floats", "value_int",    "value_ints",
					    "value_string", "value_strings"};
	const char *which = NULL;
	int count = 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (gc_attr_find(n, names[i])) {
			which = names[i];
			count++;
		}
	if (count != 1)
		return gc_kerr(k, GC_EINVAL,
			       "needs exactly one of the attributes value, sparse_value, "
			       "value_float(s), value_int(s), value_string(s); it has %d",
			       count);
	if (!strcmp(which, "sparse_value"))
		return gc_kerr(k, GC_EUNSUPPORTED, "attribute 'sparse_value' is not supported");
	if (!strcmp(which, "value_string") || !strcmp(which, "value_strings"))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attribute '%s': string constants are not supported yet", which);
	if (!strcmp(which, "value")) {
		const gc_tensor *t = gc_attr_t(k, "value");
		if (!t)
			return gc_kok(k);
		if (!gc_shape_esize(k, t, "attribute 'value'"))
			return gc_kok(k);
		if (!t->data && gc_tensor_numel(t) != 0)
			return gc_kerr(k, GC_EINVAL, "attribute 'value' has no data");
		return set_known(k, n, out[0], t->dtype, t->rank, t->dims, t->data);
	}
	if (!strcmp(which, "value_float")) {
		float f = gc_attr_f(k, which, 0);
		return gc_kok(k) ? gc_kok(k) : set_known(k, n, out[0], GC_DTYPE_FLOAT, 0, NULL, &f);
	}
	if (!strcmp(which, "value_int")) {
		int64_t v = gc_attr_i(k, which, 0);
		return gc_kok(k) ? gc_kok(k) : set_known(k, n, out[0], GC_DTYPE_INT64, 0, NULL, &v);
	}
	if (!strcmp(which, "value_floats")) {
		const float *v;
		int64_t c = gc_attr_floats(k, which, &v);
		return gc_kok(k) ? gc_kok(k) : set_known(k, n, out[0], GC_DTYPE_FLOAT, 1, &c, v);
	}
	const int64_t *v;
	int64_t c = gc_attr_ints(k, "value_ints", &v);
	return gc_kok(k) ? gc_kok(k) : set_known(k, n, out[0], GC_DTYPE_INT64, 1, &c, v);
}

static int run_fill(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	(void)in;
	gc_fill(out[0]->data, n->state, gc_dtype_size(out[0]->dtype), gc_tensor_numel(out[0]));
	return 0;
}

int gc_prepare_ConstantOfShape(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	int64_t dims[GC_MAX_RANK], rank;
	if (gc_const_ints(k, in[0], "input", dims, GC_MAX_RANK, &rank))
		return gc_kok(k);
	for (int i = 0; i < rank; i++)
		if (dims[i] < 0)
			return gc_kerr(k, GC_EINVAL,
				       "input 'input' has negative dim %" PRId64 " at index %d",
				       dims[i], i);
	const gc_tensor *v = gc_attr_t(k, "value");
	if (gc_kok(k))
		return gc_kok(k);
	gc_dtype dt = GC_DTYPE_FLOAT;
	unsigned char value[16] = {0};
	if (v) {
		size_t es = gc_shape_esize(k, v, "attribute 'value'");
		if (!es)
			return gc_kok(k);
		if (gc_tensor_numel(v) != 1 || !v->data)
			return gc_kerr(k, GC_EINVAL,
				       "attribute 'value' must hold exactly one element, it has "
				       "%" PRId64,
				       gc_tensor_numel(v));
		dt = v->dtype;
		memcpy(value, v->data, es);
	}
	n->state = gc_malloc(sizeof value);
	if (!n->state)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	memcpy(n->state, value, sizeof value);
	gc_set_shape(out[0], dt, (int32_t)rank, dims);
	n->run = run_fill;
	return 0;
}

/* ---- Identity, Dropout -------------------------------------------------- */

int gc_prepare_Identity(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (gc_dtype_is_value(in[0]->dtype))
		return gc_prepare_value_identity(k, n, in, out);
	if (!gc_shape_esize(k, in[0], "input 'input'"))
		return gc_kok(k);
	gc_set_shape(out[0], in[0]->dtype, in[0]->rank, in[0]->dims);
	n->inplace_ok = true;
	n->run = gc_run_copy;
	return 0;
}

static int run_dropout(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	gc_run_copy(k, n, in, out);
	if (n->n_out > 1 && out[1] && out[1]->data)
		gc_fill(out[1]->data, n->state, gc_dtype_size(out[1]->dtype),
			gc_tensor_numel(out[1]));
	return 0;
}

/* Reads a constant scalar of a float type or bool as double. */
static int const_scalar(gc_kctx *k, const gc_tensor *t, const char *what, double *v)
{
	if (!t->data)
		return gc_kneed_value(k, "input '%s' must be known when the model is compiled", what);
	if (gc_tensor_numel(t) != 1)
		return gc_kerr(k, GC_EINVAL,
			       "input '%s' must be a scalar, it has %" PRId64 " elements", what,
			       gc_tensor_numel(t));
	switch (t->dtype) {
	case GC_DTYPE_FLOAT:
		*v = *(const float *)t->data;
		return 0;
	case GC_DTYPE_DOUBLE:
		*v = *(const double *)t->data;
		return 0;
	case GC_DTYPE_FLOAT16:
		*v = gc_f16_to_f32(*(const uint16_t *)t->data);
		return 0;
	case GC_DTYPE_BFLOAT16:
		*v = gc_bf16_to_f32(*(const uint16_t *)t->data);
		return 0;
	case GC_DTYPE_BOOL:
		*v = *(const uint8_t *)t->data != 0;
		return 0;
	default:
		return gc_kerr(k, GC_EINVAL, "input '%s' has unexpected type %s", what,
			       gc_dtype_name(t->dtype));
	}
}

int gc_prepare_Dropout(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (!gc_shape_esize(k, x, "input 'data'"))
		return gc_kok(k);
	double ratio = 0.5;
	bool training = false, ratio_known = true;
	if (n->opset >= 12) {
		if (n->n_in > 2 && in[2]) {
			double t;
			if (in[2]->dtype != GC_DTYPE_BOOL)
				return gc_kerr(k, GC_EINVAL,
					       "input 'training_mode' must be bool, not %s",
					       gc_dtype_name(in[2]->dtype));
			if (const_scalar(k, in[2], "training_mode", &t))
				return gc_kok(k);
			training = t != 0;
		}
		/* the ratio only matters in training mode */
		if (n->n_in > 1 && in[1]) {
			if (in[1]->data) {
				if (const_scalar(k, in[1], "ratio", &ratio))
					return gc_kok(k);
			} else {
				ratio_known = false;
			}
		}
	} else {
		/* before opset 7, is_test=0 asked for training; like other inference
		 * engines, graphcc reads every Dropout as inference */
		ratio = gc_attr_f(k, "ratio", 0.5f);
	}
	if (gc_kok(k))
		return gc_kok(k);
	if (ratio_known && (ratio < 0 || ratio >= 1))
		return gc_kerr(k, GC_EINVAL, "ratio %g is outside [0, 1)", ratio);
	if (training && !ratio_known)
		return gc_kneed_value(k, "input 'ratio' must be known in training mode");
	if (training && ratio != 0)
		return gc_random_dropout_setup(k, n, in, out, ratio);
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	unsigned char one[16] = {1};
	if (n->n_out > 1 && out[1]) {
		gc_dtype mdt = GC_DTYPE_BOOL;
		if (n->opset < 10) { /* the mask had the data's type before opset 10 */
			mdt = x->dtype;
			float f1 = 1.0f;
			double d1 = 1.0;
			uint16_t h = x->dtype == GC_DTYPE_FLOAT16 ? gc_f32_to_f16(1.0f)
								  : gc_f32_to_bf16(1.0f);
			if (mdt == GC_DTYPE_FLOAT)
				memcpy(one, &f1, 4);
			else if (mdt == GC_DTYPE_DOUBLE)
				memcpy(one, &d1, 8);
			else if (mdt == GC_DTYPE_FLOAT16 || mdt == GC_DTYPE_BFLOAT16)
				memcpy(one, &h, 2);
			else
				return gc_kerr(k, GC_EINVAL,
					       "input 'data' must be a float type, not %s",
					       gc_dtype_name(x->dtype));
		}
		gc_set_shape(out[1], mdt, x->rank, x->dims);
	}
	n->state = gc_malloc(sizeof one);
	if (!n->state)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	memcpy(n->state, one, sizeof one);
	n->inplace_ok = true;
	n->run = run_dropout;
	return 0;
}

/* ---- Shape, Size -------------------------------------------------------- */

int gc_prepare_Shape(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	int64_t r = in[0]->rank, start = 0, end = r;
	if (n->opset >= 15) {
		start = gc_attr_i(k, "start", 0);
		end = gc_attr_i(k, "end", r);
		if (gc_kok(k))
			return gc_kok(k);
	}
	if (start < 0)
		start += r;
	if (end < 0)
		end += r;
	start = start < 0 ? 0 : start > r ? r : start;
	end = end < 0 ? 0 : end > r ? r : end;
	int64_t count = end > start ? end - start : 0;
	return set_known(k, n, out[0], GC_DTYPE_INT64, 1, &count, in[0]->dims + start);
}

int gc_prepare_Size(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	int64_t numel = gc_tensor_numel(in[0]);
	if (numel < 0)
		return gc_kerr(k, GC_EINVAL, "input 'data' has an invalid shape");
	return set_known(k, n, out[0], GC_DTYPE_INT64, 0, NULL, &numel);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze ------------------------------- */

/* Publishes out as a view of in's bytes with a new shape. */
static int reshaped(gc_kctx *k, gc_node *n, const gc_tensor *x, gc_tensor *out, int32_t rank,
		    const int64_t *dims)
{
	if (!gc_shape_esize(k, x, "input 'data'"))
		return gc_kok(k);
	gc_set_shape(out, x->dtype, rank, dims);
	n->inplace_ok = true;
	n->run = gc_run_copy;
	return 0;
}

static void list_str(const int64_t *v, int64_t count, char *buf, size_t len)
{
	size_t at = 0;
	at += (size_t)snprintf(buf, len, "[");
	for (int64_t i = 0; i < count && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, i ? ", %" PRId64 : "%" PRId64, v[i]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
}

int gc_prepare_Reshape(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t shape[GC_MAX_RANK], count;
	if (n->opset < 5) {
		const int64_t *v;
		count = gc_attr_ints(k, "shape", &v);
		if (gc_kok(k))
			return gc_kok(k);
		if (count > GC_MAX_RANK)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "attribute 'shape' has rank %" PRId64 ", more than %d",
				       count, GC_MAX_RANK);
		for (int64_t i = 0; i < count; i++)
			shape[i] = v[i];
	} else if (gc_const_ints(k, in[1], "shape", shape, GC_MAX_RANK, &count)) {
		return gc_kok(k);
	}
	bool allowzero = n->opset >= 14 && gc_attr_i(k, "allowzero", 0) != 0;
	if (gc_kok(k))
		return gc_kok(k);
	int64_t numel = gc_tensor_numel(x), dims[GC_MAX_RANK], known = 1;
	int infer = -1;
	bool has_zero = false;
	char xs[128], ss[160];
	gc_shape_str(x->dims, x->rank, xs, sizeof xs);
	list_str(shape, count, ss, sizeof ss);
	for (int i = 0; i < count; i++) {
		int64_t v = shape[i];
		if (v == -1) {
			if (infer >= 0)
				return gc_kerr(k, GC_EINVAL, "shape %s has more than one -1", ss);
			infer = i;
			dims[i] = 1;
			continue;
		}
		if (v < -1)
			return gc_kerr(k, GC_EINVAL, "shape %s has invalid dim %" PRId64, ss, v);
		if (v == 0 && !allowzero) {
			if (i >= x->rank)
				return gc_kerr(k, GC_EINVAL,
					       "shape %s: 0 at index %d copies a dim the input of "
					       "shape %s does not have",
					       ss, i, xs);
			v = x->dims[i];
		}
		if (v == 0)
			has_zero = true;
		dims[i] = v;
		if (__builtin_mul_overflow(known, v, &known))
			return gc_kerr(k, GC_EINVAL, "shape %s has more elements than fit in 64 bits",
				       ss);
	}
	if (infer >= 0) {
		if (has_zero && allowzero)
			return gc_kerr(k, GC_EINVAL, "shape %s has both -1 and 0 with allowzero=1",
				       ss);
		if (known == 0 || numel % known)
			return gc_kerr(k, GC_EINVAL,
				       "cannot reshape input of shape %s (%" PRId64
				       " elements) to shape %s: the -1 dim cannot be inferred",
				       xs, numel, ss);
		dims[infer] = numel / known;
		known = numel;
	}
	if (known != numel) {
		char os[128];
		return gc_kerr(k, GC_EINVAL,
			       "cannot reshape input of shape %s (%" PRId64
			       " elements) to shape %s (%" PRId64 " elements; from shape input %s)",
			       xs, numel, gc_shape_str(dims, (int32_t)count, os, sizeof os), known,
			       ss);
	}
	return reshaped(k, n, x, out[0], (int32_t)count, dims);
}

int gc_prepare_Flatten(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t axis = gc_attr_i(k, "axis", 1);
	if (gc_kok(k))
		return gc_kok(k);
	if (axis < -(int64_t)x->rank || axis > x->rank)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'axis' %" PRId64 " is out of range [-%d, %d] for rank %d",
			       axis, x->rank, x->rank, x->rank);
	if (axis < 0)
		axis += x->rank;
	int64_t dims[2] = {1, 1};
	for (int i = 0; i < x->rank; i++)
		dims[i >= axis] *= x->dims[i];
	return reshaped(k, n, x, out[0], 2, dims);
}

/* Reads axes from the attribute (before `input_since`) or from input 1. */
static int read_axes(gc_kctx *k, gc_node *n, gc_tensor *const *in, int input_since, int64_t *axes,
		     int64_t *count, bool *given)
{
	*count = 0;
	*given = false;
	if (n->opset < input_since) {
		const int64_t *v;
		*count = gc_attr_ints(k, "axes", &v);
		if (gc_kok(k))
			return gc_kok(k);
		if (*count > GC_MAX_RANK)
			return gc_kerr(k, GC_EINVAL, "attribute 'axes' has %" PRId64 " entries",
				       *count);
		*given = gc_attr_find(n, "axes") != NULL;
		for (int64_t i = 0; i < *count; i++)
			axes[i] = v[i];
		return 0;
	}
	if (n->n_in < 2 || !in[1])
		return 0;
	*given = true;
	return gc_const_ints(k, in[1], "axes", axes, GC_MAX_RANK, count);
}

int gc_prepare_Squeeze(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t axes[GC_MAX_RANK], count;
	bool given;
	if (read_axes(k, n, in, 13, axes, &count, &given))
		return gc_kok(k);
	bool drop[GC_MAX_RANK] = {false};
	for (int64_t i = 0; i < count; i++) {
		int32_t a;
		if (gc_axis(k, axes[i], x->rank, &a))
			return gc_kok(k);
		if (x->dims[a] != 1) {
			char s[128];
			return gc_kerr(k, GC_EINVAL,
				       "cannot squeeze axis %" PRId64 ": dim is %" PRId64
				       " in input of shape %s, not 1",
				       axes[i], x->dims[a],
				       gc_shape_str(x->dims, x->rank, s, sizeof s));
		}
		drop[a] = true;
	}
	if (count == 0)
		for (int i = 0; i < x->rank; i++)
			drop[i] = x->dims[i] == 1;
	int64_t dims[GC_MAX_RANK];
	int32_t r = 0;
	for (int i = 0; i < x->rank; i++)
		if (!drop[i])
			dims[r++] = x->dims[i];
	return reshaped(k, n, x, out[0], r, dims);
}

int gc_prepare_Unsqueeze(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	int64_t axes[GC_MAX_RANK], count;
	bool given;
	if (read_axes(k, n, in, 13, axes, &count, &given))
		return gc_kok(k);
	if (!given)
		return gc_kerr(k, GC_EINVAL, "%s 'axes' is required",
			       n->opset < 13 ? "attribute" : "input");
	int64_t orank = x->rank + count;
	if (orank > GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED, "output rank %" PRId64 " is above %d", orank,
			       GC_MAX_RANK);
	bool ins[GC_MAX_RANK] = {false};
	for (int64_t i = 0; i < count; i++) {
		int32_t a;
		if (gc_axis(k, axes[i], (int32_t)orank, &a))
			return gc_kok(k);
		if (ins[a])
			return gc_kerr(k, GC_EINVAL, "axes has axis %" PRId64 " more than once",
				       axes[i]);
		ins[a] = true;
	}
	int64_t dims[GC_MAX_RANK];
	for (int i = 0, j = 0; i < orank; i++)
		dims[i] = ins[i] ? 1 : x->dims[j++];
	return reshaped(k, n, x, out[0], (int32_t)orank, dims);
}

/* ---- Range -------------------------------------------------------------- */

/* W: the type the value is computed in (no intermediate wrap-around). */
#define GC_RANGE_RUN_(name, T, W)                                                                  \
	static int name(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out) \
	{                                                                                          \
		(void)k;                                                                           \
		(void)n;                                                                           \
		W start = *(const T *)in[0]->data, delta = *(const T *)in[2]->data;                \
		T *y = out[0]->data;                                                               \
		int64_t count = out[0]->dims[0];                                                   \
		for (int64_t i = 0; i < count; i++)                                                \
			y[i] = (T)(start + (W)i * delta);                                          \
		return 0;                                                                          \
	}
GC_RANGE_RUN_(run_range_i16, int16_t, int64_t)
GC_RANGE_RUN_(run_range_i32, int32_t, int64_t)
GC_RANGE_RUN_(run_range_i64, int64_t, int64_t)
GC_RANGE_RUN_(run_range_f32, float, double)
GC_RANGE_RUN_(run_range_f64, double, double)

int gc_prepare_Range(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const char *const names[3] = {"start", "limit", "delta"};
	gc_dtype dt = in[0]->dtype;
	for (int i = 0; i < 3; i++) {
		if (in[i]->dtype != dt)
			return gc_kerr(k, GC_EINVAL, "input '%s' is %s but 'start' is %s", names[i],
				       gc_dtype_name(in[i]->dtype), gc_dtype_name(dt));
		if (gc_tensor_numel(in[i]) != 1)
			return gc_kerr(k, GC_EINVAL,
				       "input '%s' must be a scalar, it has %" PRId64 " elements",
				       names[i], gc_tensor_numel(in[i]));
	}
	for (int i = 0; i < 3; i++)
		if (!in[i]->data)
			return gc_kneed_value(k,
				       "input '%s' must be known when the model is compiled: the "
				       "output size of Range depends on it",
				       names[i]);
	int64_t count;
	if (dt == GC_DTYPE_FLOAT || dt == GC_DTYPE_DOUBLE) {
		double s, l, d;
		if (dt == GC_DTYPE_FLOAT) {
			s = *(const float *)in[0]->data;
			l = *(const float *)in[1]->data;
			d = *(const float *)in[2]->data;
		} else {
			s = *(const double *)in[0]->data;
			l = *(const double *)in[1]->data;
			d = *(const double *)in[2]->data;
		}
		double c = ceil((l - s) / d);
		if (d == 0 || !(c < 9.2e18))
			return gc_kerr(k, GC_EINVAL,
				       "start %g, limit %g, delta %g give no valid size", s, l, d);
		count = c > 0 ? (int64_t)c : 0;
		n->run = dt == GC_DTYPE_FLOAT ? run_range_f32 : run_range_f64;
	} else {
		int64_t v[3];
		for (int i = 0; i < 3; i++) {
			switch (dt) {
			case GC_DTYPE_INT16:
				v[i] = *(const int16_t *)in[i]->data;
				break;
			case GC_DTYPE_INT32:
				v[i] = *(const int32_t *)in[i]->data;
				break;
			case GC_DTYPE_INT64:
				v[i] = *(const int64_t *)in[i]->data;
				break;
			default:
				return gc_kerr(
				    k, GC_EINVAL,
				    "inputs must be float, double, int16, int32 or int64, "
				    "not %s",
				    gc_dtype_name(dt));
			}
		}
		if (v[2] == 0)
			return gc_kerr(k, GC_EINVAL, "input 'delta' is 0");
		if ((v[1] > 0 && v[0] < v[1] - INT64_MAX) || (v[1] < 0 && v[0] > v[1] + INT64_MAX))
			return gc_kerr(k, GC_EINVAL, "limit - start overflows");
		int64_t diff = v[1] - v[0], q = diff / v[2];
		if (diff % v[2] != 0 && ((diff < 0) == (v[2] < 0)))
			q++;
		count = q > 0 ? q : 0;
		n->run = dt == GC_DTYPE_INT16	? run_range_i16
			 : dt == GC_DTYPE_INT32 ? run_range_i32
						: run_range_i64;
	}
	gc_set_shape(out[0], dt, 1, &count);
	return 0;
}
