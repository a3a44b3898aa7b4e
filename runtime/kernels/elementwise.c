/*
 * The elementwise engine: broadcast plans, the float16/bfloat16 adapter, the
 * shared prepare helpers, and Where. The ops live in elementwise-binary.c,
 * elementwise-unary.c and elementwise-cast.c.
 */
#include "elementwise-impl.h"

#include <inttypes.h>
#include <stdio.h>

#include "../alloc.h"
#include "../ops.h"
#include "nn-par.h"

void gc_ew_plan_init(gc_ew_plan *p, int n_in, const gc_tensor *const *in, int32_t orank,
		     const int64_t *odims, gc_dtype odtype)
{
	int64_t bs[GC_EW_MAX_IN][GC_MAX_RANK];
	memset(p, 0, sizeof *p);
	p->n_in = n_in;
	p->osize = gc_dtype_size(odtype);
	p->numel = 1;
	for (int d = 0; d < orank; d++)
		p->numel *= odims[d];
	for (int i = 0; i < n_in; i++)
		gc_broadcast_strides(in[i], orank, odims, bs[i]);

	/* Collapse from the innermost axis out: size-1 axes vanish, and an axis
	 * joins the group inside it when every input steps over that whole
	 * group (contiguous, or broadcast in both). */
	int64_t cd[GC_MAX_RANK], cs[GC_EW_MAX_IN][GC_MAX_RANK];
	int r = 0;
	for (int d = orank - 1; d >= 0; d--) {
		if (odims[d] == 1)
			continue;
		bool merge = r > 0;
		for (int i = 0; merge && i < n_in; i++)
			merge = bs[i][d] == cs[i][r - 1] * cd[r - 1];
		if (merge) {
			cd[r - 1] *= odims[d];
			continue;
		}
		cd[r] = odims[d];
		for (int i = 0; i < n_in; i++)
			cs[i][r] = bs[i][d];
		r++;
	}
	if (r == 0) { /* a single element */
		cd[0] = 1;
		for (int i = 0; i < n_in; i++)
			cs[i][0] = 0;
		r = 1;
	}
	p->rank = r;
	for (int d = 0; d < r; d++) {
		p->dims[d] = cd[r - 1 - d];
		for (int i = 0; i < n_in; i++)
			p->bstride[i][d] = cs[i][r - 1 - d] * (int64_t)gc_dtype_size(in[i]->dtype);
	}
	for (int i = 0; i < n_in; i++)
		p->inc[i] = cs[i][0] ? 1 : 0;
}

/* The output elements [e0, e1) of the plan (e counts in the output's
 * order), as runs along the innermost axis. */
static void plan_run_range(const gc_ew_plan *p, gc_ew_fn fn, const void *arg,
			   const void *const *in, void *out, int64_t e0, int64_t e1)
{
	if (e1 <= e0)
		return;
	const int r = p->rank, n_in = p->n_in;
	const int64_t inner = p->dims[r - 1];
	int64_t row = e0 / inner, j = e0 % inner;
	int64_t idx[GC_MAX_RANK] = {0};
	const char *ptr[GC_EW_MAX_IN];
	for (int i = 0; i < n_in; i++)
		ptr[i] = in[i];
	for (int d = r - 2; d >= 0 && row; d--) {
		idx[d] = row % p->dims[d];
		row /= p->dims[d];
		for (int i = 0; i < n_in; i++)
			ptr[i] += idx[d] * p->bstride[i][d];
	}
	char *o = (char *)out + e0 * (int64_t)p->osize;
	for (int64_t left = e1 - e0; left > 0;) {
		int64_t len = inner - j < left ? inner - j : left;
		const char *q[GC_EW_MAX_IN];
		/* the innermost byte stride: the element size, or 0 (broadcast) */
		for (int i = 0; i < n_in; i++)
			q[i] = ptr[i] + j * p->bstride[i][r - 1];
		fn(len, (const void *const *)q, p->inc, o, arg);
		o += len * (int64_t)p->osize;
		left -= len;
		j = 0;
		for (int d = r - 2; d >= 0; d--) {
			if (++idx[d] < p->dims[d]) {
				for (int i = 0; i < n_in; i++)
					ptr[i] += p->bstride[i][d];
				break;
			}
			idx[d] = 0;
			for (int i = 0; i < n_in; i++)
				ptr[i] -= p->bstride[i][d] * (p->dims[d] - 1);
		}
	}
}

void gc_ew_plan_run(const gc_ew_plan *p, gc_ew_fn fn, const void *arg, const void *const *in,
		    void *out)
{
	plan_run_range(p, fn, arg, in, out, 0, p->numel);
}

/* Elements per block handed to a thread: whole cache lines of output. */
#define EW_GRAIN 512

typedef struct ew_job {
	const gc_ew_plan *p;
	gc_ew_fn fn;
	const void *arg;
	const void *const *in;
	void *out;
	int64_t blocks;
} ew_job;

static void ew_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const ew_job *j = arg;
	int64_t b0, b1;
	gc_nn_part_range(j->blocks, part, parts, &b0, &b1);
	int64_t e1 = b1 * EW_GRAIN < j->p->numel ? b1 * EW_GRAIN : j->p->numel;
	plan_run_range(j->p, j->fn, j->arg, j->in, j->out, b0 * EW_GRAIN, e1);
}

void gc_ew_plan_run_par(int threads, const gc_ew_plan *p, gc_ew_fn fn, const void *arg,
			const void *const *in, void *out)
{
	/* about a cycle an element (memory traffic, or the math of the cheaper
	 * functions): below ~60000 elements one thread is faster */
	int t = gc_nn_par_threads(threads, (double)p->numel);
	ew_job j = {p, fn, arg, in, out, (p->numel + EW_GRAIN - 1) / EW_GRAIN};
	if (t <= 1 || j.blocks < 2) {
		plan_run_range(p, fn, arg, in, out, 0, p->numel);
		return;
	}
	gc_nn_parallel(t, gc_nn_par_parts(t, j.blocks), ew_part, &j);
}

#define GC_EW_CHUNK 256

static void half_to_float(uint8_t kind, const uint16_t *src, float *dst, int64_t n)
{
	if (kind == GC_DTYPE_FLOAT16)
		for (int64_t i = 0; i < n; i++)
			dst[i] = gc_f16_to_f32(src[i]);
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = gc_bf16_to_f32(src[i]);
}

static void float_to_half(uint8_t kind, bool trunc, const float *src, uint16_t *dst, int64_t n)
{
	if (kind == GC_DTYPE_FLOAT16) {
		for (int64_t i = 0; i < n; i++)
			dst[i] = gc_f32_to_f16(src[i]);
	} else if (trunc) {
		for (int64_t i = 0; i < n; i++) {
			uint32_t x;
			memcpy(&x, &src[i], 4);
			dst[i] = (x & 0x7fffffffu) > 0x7f800000u ? (uint16_t)((x >> 16) | 0x40)
								 : (uint16_t)(x >> 16);
		}
	} else {
		for (int64_t i = 0; i < n; i++)
			dst[i] = gc_f32_to_bf16(src[i]);
	}
}

void gc_ew_half_run(int64_t n, const void *const *in, const int64_t *inc, void *out,
		    const void *arg)
{
	const gc_ew_half *h = arg;
	float buf[GC_EW_MAX_IN + 1][GC_EW_CHUNK];
	const void *ptr[GC_EW_MAX_IN];
	const int ni = h->n_in;
	for (int64_t s = 0; s < n; s += GC_EW_CHUNK) {
		int64_t m = n - s < GC_EW_CHUNK ? n - s : GC_EW_CHUNK;
		for (int i = 0; i < ni; i++) {
			const char *src = (const char *)in[i] + (inc[i] ? s * h->size[i] : 0);
			if (h->kind[i]) {
				half_to_float(h->kind[i], (const uint16_t *)src, buf[i],
					      inc[i] ? m : 1);
				ptr[i] = buf[i];
			} else {
				ptr[i] = src;
			}
		}
		char *dst = (char *)out + s * h->size[ni];
		h->fn(m, ptr, inc, h->kind[ni] ? (void *)buf[ni] : (void *)dst, h->arg);
		if (h->kind[ni])
			float_to_half(h->kind[ni], h->bf16_trunc, buf[ni], (uint16_t *)dst, m);
	}
}

gc_ew_state *gc_ew_state_new(gc_kctx *k, gc_node *n, int n_plans)
{
	gc_ew_state *s = gc_calloc(1, sizeof(gc_ew_state) + (size_t)n_plans * sizeof(gc_ew_plan));
	if (!s) {
		gc_kerr(k, GC_ENOMEM, "out of memory for the node's state");
		return NULL;
	}
	s->n_plans = n_plans;
	n->state = s;
	n->state_free = gc_free;
	return s;
}

void gc_ew_set_fn(gc_ew_fn *fn_out, const void **arg_out, gc_ew_half *h, gc_ew_fn fn,
		  const void *arg, int n_in, const gc_dtype *dts)
{
	bool any = false;
	for (int i = 0; i <= n_in; i++)
		any |= gc_ew_is_half(dts[i]);
	if (!any) {
		*fn_out = fn;
		*arg_out = arg;
		return;
	}
	memset(h, 0, sizeof *h);
	h->fn = fn;
	h->arg = arg;
	h->n_in = n_in;
	for (int i = 0; i <= n_in; i++) {
		h->kind[i] = gc_ew_is_half(dts[i]) ? (uint8_t)dts[i] : 0;
		h->size[i] = (uint8_t)gc_dtype_size(dts[i]);
	}
	*fn_out = gc_ew_half_run;
	*arg_out = h;
}

int gc_ew_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_ew_state *s = n->state;
	const gc_ew_plan *p = &s->plans[0];
	const void *src[GC_EW_MAX_IN];
	for (int i = 0; i < p->n_in; i++)
		src[i] = in[i]->data;
	gc_ew_plan_run_par(k->threads, p, s->fn, s->arg, src, out[0]->data);
	return 0;
}

int gc_ew_check_input(gc_kctx *k, gc_tensor *const *in, int idx, uint32_t mask)
{
	if (idx >= k->node->n_in || !in[idx])
		return gc_kerr(k, GC_EINVAL, "input %d is missing", idx);
	gc_dtype dt = in[idx]->dtype;
	if ((unsigned)dt < 32 && (mask >> dt) & 1)
		return 0;
	char allowed[256] = "";
	size_t len = 0;
	for (int t = 0; t < GC_DTYPE_COUNT && len < sizeof allowed; t++)
		if ((mask >> t) & 1)
			len += (size_t)snprintf(allowed + len, sizeof allowed - len, "%s%s",
						len ? ", " : "", gc_dtype_name((gc_dtype)t));
	return gc_kerr(k, dt == GC_DTYPE_STRING ? GC_EUNSUPPORTED : GC_EINVAL,
		       "input %d has type %s, which %s does not take (it takes %s)", idx,
		       gc_dtype_name(dt), k->node->op_type, allowed);
}

int gc_ew_check_same_type(gc_kctx *k, gc_tensor *const *in, int idx)
{
	if (in[idx]->dtype != in[0]->dtype)
		return gc_kerr(k, GC_EINVAL,
			       "input %d has type %s but input 0 has type %s; "
			       "they must be the same",
			       idx, gc_dtype_name(in[idx]->dtype), gc_dtype_name(in[0]->dtype));
	return 0;
}


/* ---- Where ---------------------------------------------------------------- */

typedef struct {
	uint64_t lo, hi;
} gc_ew_16b;

/* Both values are loaded before the choice, so that it compiles to a
 * select rather than a branch: on a mask that changes at random (an
 * attention mask, x > 0) the branch went the wrong way half the time
 * (4M floats: 16.6 -> 1.8 ms; issue 19). */
/* clang-format off */
#define GC_EW_WHERE(fname, T)                                                  \
	static void fname(int64_t n, const void *const *in, const int64_t *inc, void *out, \
			  const void *arg)                                      \
	{                                                                      \
		const uint8_t *c = in[0];                                      \
		const T *x = in[1], *y = in[2];                                \
		T *o = out;                                                    \
		(void)arg;                                                     \
		if (inc[0] && inc[1] && inc[2]) {                              \
			for (int64_t i = 0; i < n; i++) {                      \
				const T a = x[i], b = y[i];                    \
				o[i] = c[i] ? a : b;                           \
			}                                                      \
		} else if (!inc[0]) {                                          \
			const T *src = c[0] ? x : y;                           \
			if (c[0] ? inc[1] : inc[2]) {                          \
				memcpy(o, src, (size_t)n * sizeof(T));         \
			} else {                                               \
				const T v = src[0];                            \
				for (int64_t i = 0; i < n; i++)                \
					o[i] = v;                              \
			}                                                      \
		} else {                                                       \
			const int64_t ix = inc[1], iy = inc[2];                \
			for (int64_t i = 0; i < n; i++) {                      \
				const T a = x[i * ix], b = y[i * iy];          \
				o[i] = c[i] ? a : b;                           \
			}                                                      \
		}                                                              \
	}

GC_EW_WHERE(where_1, uint8_t)
GC_EW_WHERE(where_2, uint16_t)
GC_EW_WHERE(where_4, uint32_t)
GC_EW_WHERE(where_8, uint64_t)
GC_EW_WHERE(where_16, gc_ew_16b)
/* clang-format on */

int gc_prepare_Where(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const uint32_t types = GC_EW_NUM | GC_EW_BIT(BOOL) | GC_EW_BIT(STRING) |
			       GC_EW_BIT(COMPLEX64) | GC_EW_BIT(COMPLEX128);
	if (gc_ew_check_input(k, in, 0, GC_EW_BIT(BOOL)) || gc_ew_check_input(k, in, 1, types) ||
	    gc_ew_check_input(k, in, 2, types))
		return k->err->code;
	if (in[2]->dtype != in[1]->dtype)
		return gc_kerr(k, GC_EINVAL, "input 2 (Y) has type %s but input 1 (X) has type %s",
			       gc_dtype_name(in[2]->dtype), gc_dtype_name(in[1]->dtype));
	gc_dtype dt = in[1]->dtype;
	if (dt == GC_DTYPE_STRING)
		return gc_kerr(k, GC_EUNSUPPORTED, "string tensors are not supported");
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
	if (gc_broadcast_shapes(k, 3, (const gc_tensor *const *)in, &rank, dims))
		return k->err->code;
	gc_ew_fn fn;
	switch (gc_dtype_size(dt)) {
	case 1:
		fn = where_1;
		break;
	case 2:
		fn = where_2;
		break;
	case 4:
		fn = where_4;
		break;
	case 8:
		fn = where_8;
		break;
	default:
		fn = where_16;
		break;
	}
	gc_ew_state *s = gc_ew_state_new(k, n, 1);
	if (!s)
		return k->err->code;
	gc_set_shape(out[0], dt, rank, dims);
	gc_ew_plan_init(&s->plans[0], 3, (const gc_tensor *const *)in, rank, dims, dt);
	s->fn = fn;
	n->run = gc_ew_run;
	return gc_kok(k);
}
