/*
 * Einsum. Two float32 or float64 operands whose labels each fall in one
 * class -- batch (in both inputs and the output), contracted (both inputs,
 * not the output), left or right (one input and the output) or summed in
 * one input only -- run as a batched GEMM through gc_nn_sgemm/gc_nn_dgemm,
 * as MatMul does; one such operand (a transpose, a reduction) as one
 * strided gather; the rest (diagonals, three or more operands, other
 * types) on the general loop.
 */
#include <inttypes.h>
#include <limits.h>
#include <string.h>

#include "../alloc.h"
#include "../blas.h"
#include "algebra.h"
#include "nn-par.h"
#include "nn.h"
#include "shape-impl.h"
#include "value-impl.h"

/* ---- The general loop ----------------------------------------------------- */

/*
 * Labels are 'a'-'z', 'A'-'Z' and the ellipsis' axes (one label each,
 * aligned to the right across operands, broadcast where an operand has
 * size 1). The kernel walks every combination of label values: the output
 * labels, then the summed ones; each operand is addressed through the sum
 * of its strides per label (a label repeated in one operand is a diagonal).
 */
#define EIN_MAX_LABELS (52 + GC_MAX_RANK)
#define EIN_MAX_OPS 8

/*
 * dst (row-major over nd axes) = src read through per-axis strides, summed
 * over ns more axes: an operand packed into [batch, rows, cols] with the
 * labels only it has reduced, or the product unpacked into the output.
 */
typedef struct ein_gather {
	int32_t nd, ns;
	int64_t size[GC_MAX_RANK], stride[GC_MAX_RANK]; /* the nd axes, then the ns */
} ein_gather;

/* An operand or the output as the GEMM sees it: batch of matrices. */
typedef struct ein_mat {
	bool pack;  /* through scratch: gathered from the operand, unpacked to the output */
	bool trans; /* stored column by column (BLAS's op() transposes) */
	int ld;
	int64_t off;		      /* its place in scratch (elements) when packed */
	int64_t bstride[GC_MAX_RANK]; /* per batch label; 0 where broadcast */
	ein_gather g;
} ein_mat;

typedef struct ein_gemm {
	int32_t ia; /* the operand that is the GEMM's A; the other is B */
	int32_t nb; /* batch labels */
	int64_t bsize[GC_MAX_RANK];
	int64_t batch, m, n, k, scratch; /* scratch in elements */
	ein_mat a, b, c;
} ein_gemm;

typedef struct einsum_plan {
	int32_t n_ops, n_labels, n_out; /* labels 0..n_out-1 are the output's */
	int64_t size[EIN_MAX_LABELS];
	int64_t stride[EIN_MAX_OPS][EIN_MAX_LABELS]; /* per operand, per label */
	ein_gemm gemm;				     /* two operands */
	ein_gather single;			     /* one operand */
	gc_view view;				     /* one operand, nothing summed */
} einsum_plan;

/* One loop per output element, an inner odometer over the summed labels. */
static int run_einsum(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const einsum_plan *p = n->state;
	int64_t total = gc_tensor_numel(out[0]);
	int64_t sum_count = 1;
	for (int l = p->n_out; l < p->n_labels; l++)
		sum_count *= p->size[l];
	int64_t oidx[EIN_MAX_LABELS] = {0};
	for (int64_t e = 0; e < total; e++) {
		/* output labels from e (row-major over the output's labels) */
		int64_t r = e, base[EIN_MAX_OPS] = {0};
		for (int l = p->n_out - 1; l >= 0; l--) {
			oidx[l] = r % p->size[l];
			r /= p->size[l];
		}
		for (int o = 0; o < p->n_ops; o++)
			for (int l = 0; l < p->n_out; l++)
				base[o] += oidx[l] * p->stride[o][l];
		double acc = 0;
		for (int64_t s = 0; s < sum_count; s++) {
			int64_t rr = s, off[EIN_MAX_OPS];
			memcpy(off, base, sizeof off);
			for (int l = p->n_labels - 1; l >= p->n_out; l--) {
				int64_t v = rr % p->size[l];
				rr /= p->size[l];
				for (int o = 0; o < p->n_ops; o++)
					off[o] += v * p->stride[o][l];
			}
			double prod = 1;
			for (int o = 0; o < p->n_ops; o++)
				prod *= gc_kv_load(in[o], off[o]);
			acc += prod;
		}
		gc_kv_store(out[0], e, acc);
	}
	return 0;
}

/* ---- Float operands: one gather, or two as a batched GEMM ------------------ */

/* The offset of item i of a row-major index space of n axes (sizes) through
 * strides. */
static int64_t ein_offset(const int64_t *size, const int64_t *stride, int n, int64_t i)
{
	int64_t off = 0;
	for (int d = n - 1; d >= 0; d--) {
		off += i % size[d] * stride[d];
		i /= size[d];
	}
	return off;
}

/* The rows of a gather's destination: its axes but the last. */
static int64_t ein_rows(const ein_gather *g)
{
	int64_t rows = 1;
	for (int d = 0; d + 1 < g->nd; d++)
		rows *= g->size[d];
	return rows;
}

#define EIN_GEMM_RUN(T, sfx, GEMM)                                                                 \
	/* rows [r0, r1) of dst (rows: its axes but the last); each row sums in the                \
	 * same order whatever the rows around it */                                               \
	static void ein_gather_rows_##sfx(const ein_gather *g, const T *src, T *dst, int64_t r0,   \
					  int64_t r1)                                              \
	{                                                                                          \
		int nd = g->nd, outer = nd > 0 ? nd - 1 : 0;                                       \
		int64_t inner = nd > 0 ? g->size[nd - 1] : 1, is = nd > 0 ? g->stride[nd - 1] : 0; \
		int64_t sums = 1;                                                                  \
		for (int d = nd; d < nd + g->ns; d++)                                              \
			sums *= g->size[d];                                                        \
		if (sums == 0 && (r1 - r0) * inner > 0)                                            \
			memset(dst + r0 * inner, 0, (size_t)((r1 - r0) * inner) * sizeof(T));      \
		for (int64_t s = 0; s < sums; s++) {                                               \
			const T *xs = src + ein_offset(g->size + nd, g->stride + nd, g->ns, s);    \
			for (int64_t r = r0; r < r1; r++) {                                        \
				const T *x = xs + ein_offset(g->size, g->stride, outer, r);        \
				T *y = dst + r * inner;                                            \
				if (s == 0)                                                        \
					for (int64_t i = 0; i < inner; i++)                        \
						y[i] = x[i * is];                                  \
				else                                                               \
					for (int64_t i = 0; i < inner; i++)                        \
						y[i] += x[i * is];                                 \
			}                                                                          \
		}                                                                                  \
	}                                                                                          \
                                                                                                   \
	static void ein_gather_##sfx(const ein_gather *g, const T *src, T *dst)                    \
	{                                                                                          \
		ein_gather_rows_##sfx(g, src, dst, 0, ein_rows(g));                                \
	}                                                                                          \
                                                                                                   \
	typedef struct ein_gjob_##sfx {                                                            \
		const ein_gather *g;                                                               \
		const T *src;                                                                      \
		T *dst;                                                                            \
	} ein_gjob_##sfx;                                                                          \
                                                                                                   \
	static void ein_gpart_##sfx(void *arg, int part, int parts, int slot)                      \
	{                                                                                          \
		(void)slot;                                                                        \
		const ein_gjob_##sfx *j = arg;                                                     \
		int64_t r0, r1;                                                                    \
		gc_nn_part_range(ein_rows(j->g), part, parts, &r0, &r1);                           \
		ein_gather_rows_##sfx(j->g, j->src, j->dst, r0, r1);                               \
	}                                                                                          \
                                                                                                   \
	/* one operand: a transpose, a reduction or both; rows split over the                      \
	 * threads */                                                                              \
	static int run_einsum1_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,           \
				     gc_tensor *const *out)                                        \
	{                                                                                          \
		if (gc_tensor_numel(out[0]) == 0)                                                  \
			return 0;                                                                  \
		const ein_gather *g = &((const einsum_plan *)n->state)->single;                    \
		ein_gjob_##sfx j = {g, in[0]->data, out[0]->data};                                 \
		/* an element a cycle, and a few a row */                                          \
		double cycles = (double)gc_tensor_numel(in[0]) + 8.0 * (double)ein_rows(g);        \
		gc_nn_run_parts(gc_nn_par_threads(k->threads, cycles), ein_rows(g), ein_gpart_##sfx, &j); \
		return 0;                                                                          \
	}                                                                                          \
                                                                                                   \
	/* the products of batch items [i0, i1) */                                                 \
	static void ein_items_##sfx(const ein_gemm *g, const T *a, const T *b, T *c, int threads,  \
				    int64_t i0, int64_t i1)                                        \
	{                                                                                          \
		for (int64_t i = i0; i < i1; i++)                                                  \
			GEMM(threads, g->a.trans, g->b.trans, (int)g->m, (int)g->n, (int)g->k, 1,  \
			     a + ein_offset(g->bsize, g->a.bstride, g->nb, i), g->a.ld,            \
			     b + ein_offset(g->bsize, g->b.bstride, g->nb, i), g->b.ld, 0,         \
			     c + ein_offset(g->bsize, g->c.bstride, g->nb, i), g->c.ld);           \
	}                                                                                          \
                                                                                                   \
	typedef struct ein_job_##sfx {                                                             \
		const ein_gemm *g;                                                                 \
		const T *a, *b;                                                                    \
		T *c;                                                                              \
	} ein_job_##sfx;                                                                           \
                                                                                                   \
	static void ein_part_##sfx(void *arg, int part, int parts, int slot)                       \
	{                                                                                          \
		(void)slot;                                                                        \
		const ein_job_##sfx *j = arg;                                                      \
		int64_t i0, i1;                                                                    \
		gc_nn_part_range(j->g->batch, part, parts, &i0, &i1);                              \
		ein_items_##sfx(j->g, j->a, j->b, j->c, 1, i0, i1);                                \
	}                                                                                          \
                                                                                                   \
	static int run_einsum_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in,            \
				    gc_tensor *const *out)                                         \
	{                                                                                          \
		const ein_gemm *g = &((const einsum_plan *)n->state)->gemm;                        \
		T *y = out[0]->data, *scratch = k->scratch;                                        \
		if (gc_tensor_numel(out[0]) == 0)                                                  \
			return 0;                                                                  \
		if (g->k == 0) { /* an empty sum */                                                \
			memset(y, 0, (size_t)gc_tensor_nbytes(out[0]));                            \
			return 0;                                                                  \
		}                                                                                  \
		const T *a = in[g->ia]->data, *b = in[1 - g->ia]->data;                            \
		if (g->a.pack) {                                                                   \
			ein_gather_##sfx(&g->a.g, a, scratch + g->a.off);                          \
			a = scratch + g->a.off;                                                    \
		}                                                                                  \
		if (g->b.pack) {                                                                   \
			ein_gather_##sfx(&g->b.g, b, scratch + g->b.off);                          \
			b = scratch + g->b.off;                                                    \
		}                                                                                  \
		T *c = g->c.pack ? scratch + g->c.off : y;                                         \
		/* many products (attention's heads): whole ones to each thread;                   \
		 * a few: each split over the threads in turn (as MatMul) */                       \
		int t = gc_nn_par_threads(k->threads, (double)g->batch * g->m * g->n * g->k / 16); \
		if (t > 1 && g->batch >= 2 * t) {                                                  \
			ein_job_##sfx j = {g, a, b, c};                                            \
			gc_nn_parallel(t, gc_nn_par_parts(t, g->batch), ein_part_##sfx, &j);       \
		} else {                                                                           \
			ein_items_##sfx(g, a, b, c, k->threads, 0, g->batch);                      \
		}                                                                                  \
		if (g->c.pack)                                                                     \
			ein_gather_##sfx(&g->c.g, c, y);                                           \
		return 0;                                                                          \
	}

EIN_GEMM_RUN(float, f32, gc_nn_sgemm)
EIN_GEMM_RUN(double, f64, gc_nn_dgemm)
#undef EIN_GEMM_RUN

/* Whether labels ls[0..n) (sizes size) step through one evenly spaced run
 * of elements with strides st: the spacing in *s. */
static bool ein_run(const int *ls, int n, const int64_t *size, const int64_t *st, int64_t *s)
{
	int64_t want = -1;
	*s = 1;
	for (int i = n - 1; i >= 0; i--) {
		int l = ls[i];
		if (size[l] == 1)
			continue;
		if (want < 0)
			*s = st[l];
		else if (st[l] != want)
			return false;
		want = st[l] * size[l];
	}
	return true;
}

/* How BLAS reads an r x c matrix whose rows and columns are rs and cs
 * apart (a step along an axis of size <= 1 is free to choose): false when
 * it cannot; the product's C cannot be transposed. */
static bool ein_blas_view(int64_t r, int64_t c, int64_t rs, int64_t cs, bool is_c, ein_mat *mt)
{
	int64_t c1 = c > 1 ? c : 1, r1 = r > 1 ? r : 1, ld;
	if (c <= 1)
		cs = 1;
	if (r <= 1)
		rs = cs == 1 ? c1 : 1;
	if (cs == 1 && rs >= c1)
		mt->trans = false, ld = rs;
	else if (!is_c && rs == 1 && cs >= r1)
		mt->trans = true, ld = cs;
	else
		return false;
	if (ld > INT_MAX)
		return false;
	mt->ld = (int)ld;
	return true;
}

static int64_t ein_numel(const int *ls, int n, const int64_t *size)
{
	int64_t e = 1;
	for (int i = 0; i < n; i++)
		e *= size[ls[i]];
	return e;
}

/* Row-major strides (into st, per label) of labels ls[0..n) of sizes size. */
static void ein_dense_strides(const int *ls, int n, const int64_t *size, int64_t *st)
{
	int64_t s = 1;
	for (int i = n - 1; i >= 0; i--) {
		st[ls[i]] = s;
		s *= size[ls[i]];
	}
}

/* The labels of one side: batch, rows, columns, then (of an operand) the
 * ones it sums alone. */
typedef struct ein_side {
	int ls[EIN_MAX_LABELS];
	int nb, nr, nc, ns;
} ein_side;

/*
 * Operand or output mt as [batch][rows][cols]: read (written) in place when
 * its strides st allow, else packed into scratch at *used: an operand is
 * gathered there (its own labels summed), the output unpacked from there.
 * size holds the side's sizes (an operand's own: 1 on a broadcast label).
 */
static void ein_side_plan(const ein_side *sd, const int64_t *size, const int64_t *st, bool is_c,
			  ein_mat *mt, int64_t *used)
{
	const int *rl = sd->ls + sd->nb, *cl = rl + sd->nr;
	int64_t rs, cs, pst[EIN_MAX_LABELS];
	if (!sd->ns && ein_run(rl, sd->nr, size, st, &rs) && ein_run(cl, sd->nc, size, st, &cs) &&
	    ein_blas_view(ein_numel(rl, sd->nr, size), ein_numel(cl, sd->nc, size), rs, cs, is_c,
			  mt)) {
		for (int i = 0; i < sd->nb; i++)
			mt->bstride[i] = st[sd->ls[i]];
		return;
	}
	int nd = sd->nb + sd->nr + sd->nc;
	int64_t c = ein_numel(cl, sd->nc, size);
	mt->pack = true;
	mt->trans = false;
	mt->ld = (int)(c > 1 ? c : 1);
	mt->off = *used;
	*used += ein_numel(sd->ls, nd, size);
	ein_dense_strides(sd->ls, nd, size, pst);
	for (int i = 0; i < sd->nb; i++)
		mt->bstride[i] = size[sd->ls[i]] == 1 ? 0 : pst[sd->ls[i]];
	ein_gather *g = &mt->g;
	if (is_c) { /* from [batch][rows][cols] to the output's order */
		g->nd = nd;
		for (int l = 0; l < nd; l++) {
			g->size[l] = size[l];
			g->stride[l] = pst[l];
		}
		return;
	}
	g->nd = nd;
	g->ns = sd->ns;
	for (int i = 0; i < nd + sd->ns; i++) {
		g->size[i] = size[sd->ls[i]];
		g->stride[i] = st[sd->ls[i]];
	}
}

/*
 * The batched GEMM for two operands, ia the GEMM's A, the contracted labels
 * in operand kby's memory order. dim[o][l]: operand o's size of label l,
 * -1 when it has none. The elements it packs, or -1 when the labels do not
 * fit a GEMM.
 */
static int64_t ein_gemm_plan(const einsum_plan *p, int64_t (*dim)[EIN_MAX_LABELS], int ia, int kby,
			     ein_gemm *g)
{
	int ib = 1 - ia;
	ein_side sa = {0}, sb = {0}, sc = {0};
	int bl[EIN_MAX_LABELS], ml[EIN_MAX_LABELS], nl[EIN_MAX_LABELS], kl[EIN_MAX_LABELS];
	int al[EIN_MAX_LABELS], zl[EIN_MAX_LABELS], nb = 0, nm = 0, nn = 0, nk = 0, na = 0, nz = 0;
	for (int l = 0; l < p->n_labels; l++) {
		bool in_a = dim[ia][l] >= 0, in_b = dim[ib][l] >= 0, out = l < p->n_out;
		if (in_a && in_b && !out && dim[ia][l] != dim[ib][l]) {
			/* broadcast along a contraction: the other side sums it alone */
			in_a = dim[ia][l] != 1;
			in_b = dim[ib][l] != 1;
		}
		if (in_a && in_b && out)
			bl[nb++] = l;
		else if (in_a && in_b) {
			int i = nk++; /* by kby's strides, the outermost first */
			for (; i > 0 && p->stride[kby][kl[i - 1]] < p->stride[kby][l]; i--)
				kl[i] = kl[i - 1];
			kl[i] = l;
		} else if (in_a)
			*(out ? &ml[nm++] : &al[na++]) = l;
		else
			*(out ? &nl[nn++] : &zl[nz++]) = l;
	}
	memset(g, 0, sizeof *g);
	g->ia = ia;
	g->nb = nb;
	for (int i = 0; i < nb; i++)
		g->bsize[i] = p->size[bl[i]];
	g->batch = ein_numel(bl, nb, p->size);
	g->m = ein_numel(ml, nm, p->size);
	g->n = ein_numel(nl, nn, p->size);
	g->k = ein_numel(kl, nk, p->size);
	if (g->m > INT_MAX || g->n > INT_MAX || g->k > INT_MAX)
		return -1;
#define EIN_SIDE(S, B, NB, R, NR, C, NC, Z, NZ)                                                    \
	do {                                                                                       \
		memcpy(S.ls, B, (size_t)(NB) * sizeof(int));                                       \
		memcpy(S.ls + (NB), R, (size_t)(NR) * sizeof(int));                                \
		memcpy(S.ls + (NB) + (NR), C, (size_t)(NC) * sizeof(int));                         \
		memcpy(S.ls + (NB) + (NR) + (NC), Z, (size_t)(NZ) * sizeof(int));                  \
		S.nb = NB, S.nr = NR, S.nc = NC, S.ns = NZ;                                        \
	} while (0)
	EIN_SIDE(sa, bl, nb, ml, nm, kl, nk, al, na);
	EIN_SIDE(sb, bl, nb, kl, nk, nl, nn, zl, nz);
	EIN_SIDE(sc, bl, nb, ml, nm, nl, nn, zl, 0);
#undef EIN_SIDE
	int64_t used = 0, ost[EIN_MAX_LABELS], asize[EIN_MAX_LABELS], bsize[EIN_MAX_LABELS];
	for (int l = 0; l < p->n_labels; l++) {
		asize[l] = dim[ia][l] >= 0 ? dim[ia][l] : 1;
		bsize[l] = dim[ib][l] >= 0 ? dim[ib][l] : 1;
		ost[l] = 0;
	}
	ein_side_plan(&sa, asize, p->stride[ia], false, &g->a, &used);
	ein_side_plan(&sb, bsize, p->stride[ib], false, &g->b, &used);
	int all[EIN_MAX_LABELS];
	for (int l = 0; l < p->n_out; l++)
		all[l] = l;
	ein_dense_strides(all, p->n_out, p->size, ost);
	ein_side_plan(&sc, p->size, ost, true, &g->c, &used);
	g->scratch = used;
	return used;
}

/* Picks the cheapest of the GEMM plans (fewest elements packed) for two
 * float operands: false when none fits. */
static bool ein_gemm_prepare(const einsum_plan *p, int64_t (*dim)[EIN_MAX_LABELS], ein_gemm *best)
{
	ein_gemm g;
	int64_t least = -1;
	for (int ia = 0; ia < 2; ia++)
		for (int kby = 0; kby < 2; kby++) {
			int64_t used = ein_gemm_plan(p, dim, ia, kby, &g);
			if (used >= 0 && (least < 0 || used < least)) {
				least = used;
				*best = g;
			}
		}
	return least >= 0;
}

static int label_id(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

/* Parses one term into label ids; rank is the operand's, or -1 for the
 * output. An operand's ellipsis axes are stored as -ell..-1 (made 52 + n_ell
 * - ell + e once every operand's ellipsis width is known); the output's as
 * 52 + e. */
static int parse_term(gc_kctx *k, const char *s, size_t len, int rank, int *n_ell, int *labels,
		      int *count)
{
	int letters = 0, dots = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || dots)
				return gc_kerr(k, GC_EINVAL, "malformed ellipsis in equation");
			dots = 1;
			i += 2;
		} else if (label_id(s[i]) >= 0) {
			letters++;
		} else if (s[i] != ' ') {
			return gc_kerr(k, GC_EINVAL, "equation has an invalid character '%c'",
				       s[i]);
		}
	}
	int ell = 0;
	if (rank >= 0) {
		ell = rank - letters;
		if (ell < 0 || (!dots && ell != 0))
			return gc_kerr(k, GC_EINVAL,
				       "equation term '%.*s' does not fit an operand of rank %d",
				       (int)len, s, rank);
		if (ell > *n_ell)
			*n_ell = ell;
	} else {
		ell = dots ? *n_ell : 0;
	}
	int c = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			for (int e = 0; e < ell; e++)
				labels[c++] = rank >= 0 ? e - ell : 52 + e;
			i += 2;
		} else if (label_id(s[i]) >= 0) {
			labels[c++] = label_id(s[i]);
		}
	}
	*count = c;
	return 0;
}

/* One operand, permuted: the strided copy of Transpose (shape.c's
 * gc_view_run, in cache-sized tiles over the threads): abcd->abdc of
 * [8, 64, 128, 64] took 2.5 ms through the gather at one thread. */
static int run_einsum_view(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			   gc_tensor *const *out)
{
	const einsum_plan *p = n->state;
	gc_view_run(k->threads, &p->view, in[0]->data, out[0]->data, gc_tensor_numel(out[0]));
	return 0;
}

/* One float operand without diagonals (a label twice in it) runs as one
 * gather, or as a permuted copy when nothing is summed; two as a batched
 * GEMM when OpenBLAS loads; else the loop stays. */
static void ein_fast_choose(gc_node *n, einsum_plan *p, gc_tensor *const *in,
			    int (*labels)[GC_MAX_RANK + 1], const int *cnt, const int *map)
{
	int64_t dim[2][EIN_MAX_LABELS];
	for (int o = 0; o < n->n_in; o++) {
		for (int l = 0; l < p->n_labels; l++)
			dim[o][l] = -1;
		for (int i = 0; i < cnt[o]; i++) {
			int l = map[labels[o][i]];
			if (dim[o][l] >= 0)
				return;
			dim[o][l] = in[o]->dims[i];
		}
	}
	bool f32 = in[0]->dtype == GC_DTYPE_FLOAT;
	if (n->n_in == 1) { /* output labels, then the summed ones */
		ein_gather *g = &p->single;
		g->nd = p->n_out;
		g->ns = p->n_labels - p->n_out;
		for (int l = 0; l < p->n_labels; l++) {
			g->size[l] = p->size[l];
			g->stride[l] = p->stride[0][l];
		}
		n->run = f32 ? run_einsum1_f32 : run_einsum1_f64;
		if (g->ns == 0 && g->nd <= GC_VIEW_MAX) { /* a transpose: Transpose's copy */
			p->view = (gc_view){ .esize = f32 ? 4 : 8, .rank = g->nd };
			memcpy(p->view.dims, g->size, (size_t)g->nd * sizeof g->size[0]);
			memcpy(p->view.strides, g->stride, (size_t)g->nd * sizeof g->stride[0]);
			n->run = run_einsum_view;
		}
		return;
	}
	gc_error e = {0};
	if (gc_blas_init(&e) || !ein_gemm_prepare(p, dim, &p->gemm))
		return;
	n->scratch_bytes = (uint64_t)p->gemm.scratch * (f32 ? sizeof(float) : sizeof(double));
	n->run = f32 ? run_einsum_f32 : run_einsum_f64;
}

int gc_prepare_Einsum(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const char *eq = gc_attr_s(k, "equation", NULL);
	if (gc_kok(k))
		return gc_kok(k);
	if (!eq)
		return gc_kerr(k, GC_EINVAL, "attribute 'equation' is missing");
	if (n->n_in > EIN_MAX_OPS)
		return gc_kerr(k, GC_EUNSUPPORTED, "more than %d operands", EIN_MAX_OPS);
	gc_dtype dt = in[0]->dtype;
	for (int o = 0; o < n->n_in; o++) {
		if (!in[o] || in[o]->dtype != dt || !gc_kv_numeric(dt) || dt == GC_DTYPE_BOOL)
			return gc_kerr(k, GC_EINVAL,
				       "operand %d: all operands must be of one numeric type", o);
	}
	const char *arrow = strstr(eq, "->");
	size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
	int labels[EIN_MAX_OPS][GC_MAX_RANK + 1], cnt[EIN_MAX_OPS], n_ell = 0;
	const char *t = eq;
	for (int o = 0; o < n->n_in; o++) {
		const char *end = memchr(t, ',', lhs_len - (size_t)(t - eq));
		size_t len = end ? (size_t)(end - t) : lhs_len - (size_t)(t - eq);
		if (!end && o + 1 < n->n_in)
			return gc_kerr(k, GC_EINVAL,
				       "equation '%s' has fewer terms than the %d inputs", eq,
				       n->n_in);
		if (end && o + 1 == n->n_in)
			return gc_kerr(k, GC_EINVAL,
				       "equation '%s' has more terms than the %d inputs", eq,
				       n->n_in);
		if (parse_term(k, t, len, in[o]->rank, &n_ell, labels[o], &cnt[o]))
			return gc_kok(k);
		t = end ? end + 1 : t + len;
	}
	/* ellipsis axes align to the right across operands */
	for (int o = 0; o < n->n_in; o++)
		for (int i = 0; i < cnt[o]; i++)
			if (labels[o][i] < 0)
				labels[o][i] += 52 + n_ell;
	int olabels[GC_MAX_RANK + 1], ocnt = 0;
	int seen[EIN_MAX_LABELS] = {0};
	for (int o = 0; o < n->n_in; o++)
		for (int i = 0; i < cnt[o]; i++)
			seen[labels[o][i]]++;
	if (arrow) {
		const char *r = arrow + 2;
		if (parse_term(k, r, strlen(r), -1, &n_ell, olabels, &ocnt))
			return gc_kok(k);
		for (int i = 0; i < ocnt; i++) {
			if (!seen[olabels[i]])
				return gc_kerr(k, GC_EINVAL,
					       "output label %d of '%s' is in no input", i, eq);
			for (int j = 0; j < i; j++)
				if (olabels[j] == olabels[i])
					return gc_kerr(k, GC_EINVAL,
						       "output of '%s' repeats a label", eq);
		}
	} else {
		for (int e = 0; e < n_ell; e++)
			olabels[ocnt++] = 52 + e;
		for (int l = 0; l < 52; l++)
			if (seen[l] == 1)
				olabels[ocnt++] = l;
	}
	if (ocnt > GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED, "output rank %d is above %d", ocnt, GC_MAX_RANK);
	einsum_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->n_ops = n->n_in;
	/* order: output labels, then the summed ones */
	int map[EIN_MAX_LABELS], nl = 0;
	for (int l = 0; l < EIN_MAX_LABELS; l++)
		map[l] = -1;
	for (int i = 0; i < ocnt; i++) {
		map[olabels[i]] = nl++;
	}
	for (int l = 0; l < EIN_MAX_LABELS; l++)
		if (seen[l] && map[l] < 0)
			map[l] = nl++;
	p->n_labels = nl;
	p->n_out = ocnt;
	for (int l = 0; l < nl; l++)
		p->size[l] = -1;
	for (int o = 0; o < n->n_in; o++) {
		for (int i = 0; i < cnt[o]; i++) {
			int l = map[labels[o][i]];
			int64_t d = in[o]->dims[i];
			if (p->size[l] < 0 || p->size[l] == 1)
				p->size[l] = d;
			else if (d != 1 && d != p->size[l])
				return gc_kerr(k, GC_EINVAL,
					       "operand %d axis %d has size %" PRId64
					       " where the label has size %" PRId64,
					       o, i, d, p->size[l]);
		}
	}
	for (int o = 0; o < n->n_in; o++) {
		int64_t st[GC_MAX_RANK];
		gc_strides(in[o]->dims, in[o]->rank, st);
		for (int i = 0; i < cnt[o]; i++) {
			int l = map[labels[o][i]];
			if (in[o]->dims[i] == p->size[l]) /* else size 1, broadcast */
				p->stride[o][l] += st[i];
		}
	}
	int64_t odims[GC_MAX_RANK];
	for (int i = 0; i < ocnt; i++)
		odims[i] = p->size[i];
	gc_set_shape(out[0], dt, ocnt, odims);
	n->run = run_einsum;
	if (n->n_in <= 2 && (dt == GC_DTYPE_FLOAT || dt == GC_DTYPE_DOUBLE))
		ein_fast_choose(n, p, in, labels, cnt, map);
	return 0;
}
