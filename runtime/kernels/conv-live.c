/*
 * The live part of a convolution's kernel: the taps that read the input
 * for at least one output. A dilated convolution on a map smaller than its
 * dilation (DeepLab's ASPP: 3x3 at dilation 12-36 on 16x16) has taps that
 * read only padding at every output; dropped, the convolution is a smaller
 * one (a 1x1 of the centre weights at dilation >= 16 there), exact but for
 * a NaN or Inf weight on a dropped tap (0 x Inf), as ONNX Runtime has it.
 */
#include "conv-live.h"

#include <string.h>

#include "../alloc.h"
#include "nn-par.h"

/* Whether tap a (offset off = a dil - pad_lo) reads the input [0, in) at
 * some output o in [0, out), o s + off: the first o at or past 0 decides. */
static int tap_live(int64_t off, int64_t s, int64_t in, int64_t out)
{
	int64_t o = off >= 0 ? 0 : (-off + s - 1) / s;
	return o < out && o * s + off < in;
}

int gc_nn_window_live(const gc_nn_window *w, gc_nn_window *live, int64_t first[3])
{
	int cut = 0;
	*live = *w;
	for (int d = 0; d < GC_NN_MAX_SPATIAL; d++) {
		int64_t lo = 0, hi = w->k[d];
		while (lo < hi && !tap_live(lo * w->dil[d] - w->pad_lo[d], w->stride[d], w->in[d],
					    w->out[d]))
			lo++;
		while (hi > lo && !tap_live((hi - 1) * w->dil[d] - w->pad_lo[d], w->stride[d],
					    w->in[d], w->out[d]))
			hi--;
		/* every tap dead (pads wider than the map) or a cut that would
		 * start the windows inside the input (strides stepping over
		 * it): left as it is */
		if (lo == hi || lo * w->dil[d] > w->pad_lo[d])
			return 0;
		first[d] = lo;
		live->k[d] = hi - lo;
		live->pad_lo[d] = w->pad_lo[d] - lo * w->dil[d];
		if (live->k[d] == 1)
			live->dil[d] = 1;
		/* the pad the outputs still reach */
		int64_t reach = (w->out[d] - 1) * w->stride[d] + (live->k[d] - 1) * live->dil[d] +
				1 - w->in[d] - live->pad_lo[d];
		live->pad_hi[d] = reach > 0 ? reach : 0;
		cut |= live->k[d] != w->k[d];
	}
	return cut;
}

void gc_nn_window_live_weights(const gc_nn_window *w, const gc_nn_window *live,
			       const int64_t first[3], int64_t rows, const float *wt, float *dst)
{
	int64_t taps = w->k[0] * w->k[1] * w->k[2];
	for (int64_t r = 0; r < rows; r++)
		for (int64_t a = 0; a < live->k[0]; a++)
			for (int64_t b = 0; b < live->k[1]; b++) {
				const float *src = wt + r * taps +
						   ((first[0] + a) * w->k[1] + first[1] + b) * w->k[2] +
						   first[2];
				memcpy(dst, src, (size_t)live->k[2] * sizeof *dst);
				dst += live->k[2];
			}
}

/* ---- regions of the output with one set of live taps each ---- */

/* Along one axis (n inputs, `out` outputs): the outputs [lo, hi) where tap
 * offset off reads the input, o s + off in [0, n). */
static void tap_outputs(int64_t off, int64_t s, int64_t n, int64_t out, int64_t *lo, int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + s - 1) / s, h = n > off ? (n - off + s - 1) / s : 0;
	*lo = l < out ? l : out;
	*hi = h < out ? h : out;
}

/* The segments of outputs of axis d with one set of live taps each: cut[i]
 * to cut[i + 1] (at most 2 k + 1 of them) reads taps [t0[i], t1[i]).
 * Returns the count. */
static int axis_segments(const gc_nn_window *w, int d, int64_t *cut, int64_t *t0, int64_t *t1)
{
	int nc = 0;
	cut[nc++] = 0;
	cut[nc++] = w->out[d];
	for (int64_t a = 0; a < w->k[d]; a++) {
		int64_t lo, hi;
		tap_outputs(a * w->dil[d] - w->pad_lo[d], w->stride[d], w->in[d], w->out[d], &lo,
			    &hi);
		cut[nc++] = lo;
		cut[nc++] = hi;
	}
	/* sorted, without repeats */
	for (int i = 1; i < nc; i++)
		for (int j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
			int64_t t = cut[j];
			cut[j] = cut[j - 1];
			cut[j - 1] = t;
		}
	int u = 0;
	for (int i = 0; i < nc; i++)
		if (!u || cut[i] != cut[u - 1])
			cut[u++] = cut[i];
	/* a tap's outputs move down as the tap moves up: the taps live over
	 * a segment are a run */
	for (int i = 0; i + 1 < u; i++) {
		t0[i] = w->k[d];
		t1[i] = 0;
		for (int64_t a = 0; a < w->k[d]; a++) {
			int64_t lo, hi;
			tap_outputs(a * w->dil[d] - w->pad_lo[d], w->stride[d], w->in[d],
				    w->out[d], &lo, &hi);
			if (lo <= cut[i] && cut[i + 1] <= hi) {
				t0[i] = a < t0[i] ? a : t0[i];
				t1[i] = a + 1;
			}
		}
	}
	return u - 1;
}

/* *o = v when v fits int32 (the gather's offsets; dilations and pads from
 * a file may be as large as 2^31, gc_nn_window_init keeps them below): 1,
 * else 0. */
static int put_offset(int32_t *o, int64_t v)
{
	*o = (int32_t)v;
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Live products worth it when at most this share of the channel kernel's,
 * which skips the window rows that read only pads (all of its columns' taps
 * over the rows it keeps: conv-direct.c's tile_steps). Measured at one
 * thread (single-node models, 3x3): 2048 -> 256 at dilation 12 on 28x28
 * (share 0.71) took 49.4 ms by regions, 48.4 on the channel kernel; 512 ->
 * 512 at dilation 4 on 32x32 (0.92) 40.7 against 38.8; at dilation 24
 * (0.43) the regions are the faster by far (the gathered V and narrow
 * products cost ~1.45x a product of the channel kernel). Before the
 * channel kernel skipped rows, this was 0.88 of its whole product. */
#define LIVE_SHARE_MAX 0.7

int gc_live_conv_plan(gc_live_conv *p, const gc_nn_window *w, int64_t n, int64_t c, int64_t m,
		      const gc_nn_act *act)
{
	memset(p, 0, sizeof *p);
	if (w->in[0] != 1 || w->k[0] != 1 || w->out[0] != 1)
		return 1;
	/* at most 2 k + 1 segments an axis, gc_nn_window_init keeps k below
	 * 2^31: large kernels are not what this is for */
	if (w->k[1] > 64 || w->k[2] > 64)
		return 1;
	int64_t cut[2][2 * 64 + 2], t0[2][2 * 64 + 1], t1[2][2 * 64 + 1];
	int ns[2] = {axis_segments(w, 1, cut[0], t0[0], t1[0]),
		     axis_segments(w, 2, cut[1], t0[1], t1[1])};
	int64_t in_sp = w->in[1] * w->in[2], live = 0, offs = 0;
	for (int i = 0; i < ns[0]; i++)
		for (int j = 0; j < ns[1]; j++) {
			int64_t taps = (t1[0][i] - t0[0][i]) * (t1[1][j] - t0[1][j]);
			int64_t px = (cut[0][i + 1] - cut[0][i]) * (cut[1][j + 1] - cut[1][j]);
			if (taps <= 0)
				return 1; /* outputs that read only padding */
			live += taps * px;
			offs += c * taps + px;
		}
	/* the channel kernel's products: the rows' live window rows, all
	 * their taps */
	int64_t chan = 0;
	for (int i = 0; i < ns[0]; i++)
		chan += (t1[0][i] - t0[0][i]) * (cut[0][i + 1] - cut[0][i]) * w->out[2] * w->k[2];
	/* dilated only: where that was measured (a 3x3 on a 7x7 map has a
	 * share of 0.82 in regions one pixel wide) */
	if ((double)live > LIVE_SHARE_MAX * (double)chan || c * in_sp > INT32_MAX ||
	    (w->dil[1] == 1 && w->dil[2] == 1))
		return 1;
	p->n = n;
	p->c = c;
	p->m = m;
	p->in_sp = in_sp;
	p->out_sp = w->out[1] * w->out[2];
	p->out_w = w->out[2];
	p->nreg = ns[0] * ns[1];
	p->reg = gc_calloc((size_t)p->nreg, sizeof *p->reg);
	p->offs = gc_malloc((size_t)offs * sizeof *p->offs);
	if (!p->reg || !p->offs) {
		gc_live_conv_free(p);
		return -1;
	}
	int32_t *o = p->offs;
	int64_t kmax = 0, px_done = 0;
	int fit = 1;
	for (int i = 0; i < ns[0]; i++)
		for (int j = 0; j < ns[1]; j++) {
			gc_live_region *r = &p->reg[i * ns[1] + j];
			r->oh0 = cut[0][i];
			r->ow0 = cut[1][j];
			r->oh = cut[0][i + 1] - r->oh0;
			r->ow = cut[1][j + 1] - r->ow0;
			r->n = r->oh * r->ow;
			r->a0 = t0[0][i];
			r->a1 = t1[0][i];
			r->b0 = t0[1][j];
			r->b1 = t1[1][j];
			r->k = c * (t1[0][i] - t0[0][i]) * (t1[1][j] - t0[1][j]);
			r->s_off = p->w_floats;
			r->c_off = m * px_done;
			r->panel0 = p->panels;
			p->panels += (r->n + GC_PK_NR - 1) / GC_PK_NR;
			p->w_floats += gc_pk_s_floats(m, r->k);
			px_done += r->n;
			kmax = r->k > kmax ? r->k : kmax;
			p->cost += gc_pk_gemm_cost(m, r->n, r->k) + (double)(r->k * r->n) / 8;
			r->rows = o;
			for (int64_t ci = 0; ci < c; ci++)
				for (int64_t a = r->a0; a < r->a1; a++)
					for (int64_t b = r->b0; b < r->b1; b++)
						fit &= put_offset(o++, ci * in_sp + a * w->dil[1] *
										w->in[2] +
									b * w->dil[2]);
			/* a pixel's offset with the tap's: inside the input */
			r->cols = o;
			for (int64_t y = r->oh0; y < r->oh0 + r->oh; y++)
				for (int64_t x = r->ow0; x < r->ow0 + r->ow; x++)
					fit &= put_offset(o++, (y * w->stride[1] - w->pad_lo[1]) *
								       w->in[2] +
								   x * w->stride[2] - w->pad_lo[2]);
		}
	if (!fit) {
		gc_live_conv_free(p);
		return 1;
	}
	p->v_floats = gc_pk_v_floats(kmax, GC_PK_NR);
	gc_pk_epi_init(&p->epi, act);
	return 0;
}

int gc_live_conv_pack(const gc_live_conv *p, const gc_nn_window *w, const float *wt, float *dst)
{
	int64_t taps = w->k[1] * w->k[2], kmax = 0;
	for (int r = 0; r < p->nreg; r++)
		kmax = p->reg[r].k > kmax ? p->reg[r].k : kmax;
	float *s = gc_malloc((size_t)(p->m * kmax) * sizeof *s);
	if (!s)
		return -1;
	for (int ri = 0; ri < p->nreg; ri++) {
		const gc_live_region *r = &p->reg[ri];
		for (int64_t i = 0; i < p->m; i++) {
			float *d = s + i * r->k;
			for (int64_t ci = 0; ci < p->c; ci++)
				for (int64_t a = r->a0; a < r->a1; a++)
					for (int64_t b = r->b0; b < r->b1; b++)
						*d++ = wt[(i * p->c + ci) * taps + a * w->k[2] + b];
		}
		gc_pk_pack_s(s, r->k, 1, p->m, r->k, dst + r->s_off);
	}
	gc_free(s);
	return 0;
}

int64_t gc_live_conv_scratch(const gc_live_conv *p)
{
	return p->m * p->out_sp + GC_PK_GEMM_SLOTS * p->v_floats;
}

typedef struct live_job {
	const gc_live_conv *p;
	const float *x, *bias;
	float *y, *prod, *vbuf;
} live_job;

/* Column panels [lo, hi) of the regions' products (numbered region after
 * region), each into y: every one gathers its V once and reads its
 * region's weights whole. */
static void live_part(void *arg, int part, int parts, int slot)
{
	const live_job *j = arg;
	const gc_live_conv *p = j->p;
	int64_t lo, hi;
	gc_nn_part_range(p->panels, part, parts, &lo, &hi);
	const gc_live_region *r = p->reg;
	for (int64_t q = lo; q < hi; q++) {
		while (q >= r->panel0 + (r->n + GC_PK_NR - 1) / GC_PK_NR)
			r++;
		float *prod = j->prod + r->c_off;
		gc_pk_gemm g = {.m = p->m,
				.n = r->n,
				.k = r->k,
				.s = p->w + r->s_off,
				.v = j->x,
				/* slot's own buffer: the row GEMM would place
				 * slots by each region's k */
				.v_buf = j->vbuf + slot * p->v_floats,
				.v_rows = r->rows,
				.v_cols = r->cols,
				.c = prod,
				.ldc = r->n,
				.epi = p->epi};
		g.epi.c = j->bias;
		g.epi.c_sm = 1;
		int64_t jp = q - r->panel0, n0 = jp * GC_PK_NR;
		int64_t n1 = n0 + GC_PK_NR < r->n ? n0 + GC_PK_NR : r->n;
		gc_pk_gemm_run(&g, jp, jp + 1);
		/* its pixels, a run of each output row at a time */
		for (int64_t a = n0, b; a < n1; a = b) {
			int64_t y = a / r->ow, x = a % r->ow;
			b = (y + 1) * r->ow < n1 ? (y + 1) * r->ow : n1;
			float *dst = j->y + (r->oh0 + y) * p->out_w + r->ow0 + x;
			for (int64_t i = 0; i < p->m; i++)
				memcpy(dst + i * p->out_sp, prod + i * r->n + a,
				       (size_t)(b - a) * sizeof(float));
		}
	}
}

void gc_live_conv_run(const gc_live_conv *p, const float *x, const float *bias, float *y,
		      float *scratch, int threads)
{
	int t = gc_nn_par_threads(threads, p->cost);
	live_job j = {p, NULL, bias, NULL, scratch, scratch + p->m * p->out_sp};
	for (int64_t b = 0; b < p->n; b++) {
		j.x = x + b * p->c * p->in_sp;
		j.y = y + b * p->m * p->out_sp;
		gc_nn_run_parts(t < GC_PK_GEMM_SLOTS ? t : GC_PK_GEMM_SLOTS, p->panels, live_part,
				&j);
	}
}

void gc_live_conv_free(gc_live_conv *p)
{
	if (p) {
		gc_free(p->reg);
		gc_free(p->offs);
		p->reg = NULL;
		p->offs = NULL;
	}
}
