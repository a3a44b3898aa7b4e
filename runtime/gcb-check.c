/* Meaning checks of a loaded program (see gcb-check.h). */
#include "gcb-check.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "custom.h"
#include "fileio.h"
#include "liveness.h"

enum { WRITER_NONE = -1, WRITER_INPUT = -2, WRITER_CONST = -3 };

/* One arena block to check: a tensor (tensor >= 0) or node's scratch. */
typedef struct block {
	int32_t first, last; /* lifetime in steps, as the planner counts them */
	uint64_t off, size;
	int32_t tensor, node; /* node: its writer, or the scratch's node (-1: input) */
} block;

typedef struct checker {
	const gc_program *p;
	const char *path;
	gc_error *err;
	int32_t *writer; /* per tensor: the node writing it, or a WRITER_ value */
} checker;

static const char *node_name(const gc_program *p, int32_t i)
{
	return p->nodes[i].name;
}

static int refuse(checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(checker *c, const char *fmt, ...)
{
	char what[GC_ERROR_MSG_MAX / 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return gc_error_set(c->err, GC_EINVAL, "%s: corrupted program: %s", c->path, what);
}

static const char *writer_str(checker *c, int32_t t, char *buf, size_t len)
{
	int32_t w = c->writer[t];
	if (w == WRITER_INPUT)
		return "a program input";
	if (w == WRITER_CONST)
		return "a constant";
	snprintf(buf, len, "written by node '%s'", node_name(c->p, w));
	return buf;
}

/* Who writes what, in order: every read finds its tensor there. */
static int check_dataflow(checker *c)
{
	const gc_program *p = c->p;
	char buf[GC_ERROR_MSG_MAX / 4];
	for (int32_t t = 0; t < p->n_tensors; t++)
		c->writer[t] = p->tensors[t].storage == GC_STORAGE_CONST ? WRITER_CONST : WRITER_NONE;
	for (int32_t i = 0; i < p->n_inputs; i++) {
		int32_t t = p->inputs[i];
		if (c->writer[t] != WRITER_NONE)
			return refuse(c, "input '%s' is listed twice", p->tensors[t].name);
		c->writer[t] = WRITER_INPUT;
	}
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		for (int32_t j = 0; j < n->n_in; j++) {
			int32_t t = n->in[j];
			if (t < 0) {
				/* absent optional inputs are the node's own; what its
				 * subgraphs read by name is always there */
				if (j >= n->n_explicit_in)
					return refuse(c, "node '%s' passes nothing to its subgraphs "
							 "for a tensor they read",
						      n->name);
				continue;
			}
			if (c->writer[t] == WRITER_NONE)
				return refuse(c, "node '%s' reads '%s' before any node writes it",
					      n->name, p->tensors[t].name);
		}
		/* what a subgraph reads by name has the type its input says */
		for (int32_t s = 0; s < n->n_sub; s++) {
			const gc_program *sp = n->sub[s];
			for (int32_t j = 0; j + sp->n_formal < sp->n_inputs; j++) {
				const gc_ptensor *o = &p->tensors[n->in[sp->outer_slot[j]]];
				const gc_ptensor *b = &sp->tensors[sp->inputs[sp->n_formal + j]];
				if (o->storage != GC_STORAGE_DYNAMIC &&
				    b->storage != GC_STORAGE_DYNAMIC &&
				    (o->t.dtype != b->t.dtype || !gc_same_shape(&o->t, &b->t)))
					return refuse(c, "node '%s' passes '%s' to its subgraph %d as "
							 "'%s', of another type or shape",
						      n->name, o->name, s, b->name);
			}
		}
		for (int32_t j = 0; j < n->n_out; j++) {
			int32_t t = n->out[j];
			if (t < 0)
				continue;
			if (c->writer[t] != WRITER_NONE) {
				bool self = c->writer[t] == i;
				return refuse(c, "node '%s' writes '%s', which is %s", n->name,
					      p->tensors[t].name,
					      self ? "another of its own outputs"
						   : writer_str(c, t, buf, sizeof buf));
			}
			c->writer[t] = i;
			for (int32_t k = 0; k < n->n_in; k++)
				if (n->in[k] == t)
					return refuse(c, "node '%s' reads and writes '%s'", n->name,
						      p->tensors[t].name);
		}
	}
	for (int32_t i = 0; i < p->n_outputs; i++) {
		int32_t t = p->outputs[i];
		if (c->writer[t] == WRITER_NONE)
			return refuse(c, "output '%s' is never written", p->tensors[t].name);
	}
	return 0;
}

#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The planner's block alignment (program.c) */
static uint64_t align_up(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

static int by_first(const void *a, const void *b)
{
	const block *x = a, *y = b;
	return x->first != y->first ? (x->first < y->first ? -1 : 1)
				    : (x->off < y->off ? -1 : x->off > y->off);
}

/* Block indices into the block array, by one key (offset, or end of
 * life), ties by index so that the order is total. */
typedef struct block_order {
	const block *bl;
	bool by_end;
} block_order;

static int block_cmp(const void *a, const void *b, void *ctx)
{
	const block_order *o = ctx;
	int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	uint64_t ki = o->by_end ? (uint64_t)o->bl[i].last : o->bl[i].off;
	uint64_t kj = o->by_end ? (uint64_t)o->bl[j].last : o->bl[j].off;
	if (ki != kj)
		return ki < kj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* A set of ranks 0..m-1 (a segment tree of counts): the live blocks,
 * ranked by offset, for the neighbour queries of the sweep. */
typedef struct rankset {
	int32_t *cnt;
	int64_t m; /* a power of two */
} rankset;

static void rs_add(rankset *s, int64_t r, int32_t d)
{
	for (int64_t i = r + s->m; i >= 1; i /= 2)
		s->cnt[i] += d;
}

/* The largest rank <= q in the set, or -1. */
static int64_t rs_last(const rankset *s, int64_t node, int64_t lo, int64_t hi, int64_t q)
{
	if (lo > q || !s->cnt[node])
		return -1;
	if (hi - lo == 1)
		return lo;
	int64_t mid = lo + (hi - lo) / 2;
	int64_t r = rs_last(s, 2 * node + 1, mid, hi, q);
	return r >= 0 ? r : rs_last(s, 2 * node, lo, mid, q);
}

/* The smallest rank >= q in the set, or -1. */
static int64_t rs_first(const rankset *s, int64_t node, int64_t lo, int64_t hi, int64_t q)
{
	if (hi <= q || !s->cnt[node])
		return -1;
	if (hi - lo == 1)
		return lo;
	int64_t mid = lo + (hi - lo) / 2;
	int64_t r = rs_first(s, 2 * node, lo, mid, q);
	return r >= 0 ? r : rs_first(s, 2 * node + 1, mid, hi, q);
}

static int overlap_error(checker *c, const block *a, const block *b)
{
	char wa[GC_ERROR_MSG_MAX / 4], wb[GC_ERROR_MSG_MAX / 4];
	const block *bl[2] = { a, b };
	char *w[2] = { wa, wb };
	for (int k = 0; k < 2; k++) {
		const block *x = bl[k];
		if (x->tensor < 0)
			snprintf(w[k], sizeof wa, "the scratch of node '%s'",
				 node_name(c->p, x->node));
		else if (x->node < 0)
			snprintf(w[k], sizeof wa, "input '%s'", c->p->tensors[x->tensor].name);
		else
			snprintf(w[k], sizeof wa, "'%s' (written by node '%s')",
				 c->p->tensors[x->tensor].name, node_name(c->p, x->node));
	}
	return refuse(c, "%s shares arena bytes with %s while both are in use", wa, wb);
}

/* The memory plan: blocks whose lifetimes overlap do not share bytes. */
static int check_plan(checker *c)
{
	const gc_program *p = c->p;
	int32_t nt = p->n_tensors, nn = p->n_nodes;
	if (p->arena_bytes > gc_limit_bytes())
		return gc_error_set(c->err, GC_ELIMIT,
				    "%s: the program needs an activation arena of %" PRIu64
				    " bytes, over the limit of %" PRIu64
				    " (raise " GC_LIMIT_SETTING " to allow more)",
				    c->path, p->arena_bytes, gc_limit_bytes());
	int32_t *first = gc_malloc(((size_t)nt + 1) * sizeof *first);
	int32_t *last = gc_malloc(((size_t)nt + 1) * sizeof *last);
	gc_sharing sh = { 0 };
	bool *is_input = gc_malloc(((size_t)nt + 1) * sizeof *is_input);
	block *bl = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *bl);
	int32_t *by_last = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *by_last);
	int64_t *rank = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *rank);
	int32_t *at_rank = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *at_rank);
	rankset rs = { 0 };
	int rc = 0;
	if (!first || !last || !is_input || !bl || !by_last || !rank || !at_rank ||
	    gc_sharing_alloc(&sh, nt)) {
		rc = gc_error_set(c->err, GC_ENOMEM, "%s: out of memory", c->path);
		goto out;
	}
	/* Lifetimes, in-place chains and Concat slices exactly as the planner
	 * counts them (shared only where the file put them at one place). */
	gc_lifetimes(p, first, last, is_input);
	if (gc_share_memory(p, first, last, is_input, &sh, 64, true)) {
		rc = gc_error_set(c->err, GC_ENOMEM, "%s: out of memory", c->path);
		goto out;
	}
	/* The arena is what its blocks need (the reader checked each lies
	 * inside it), not more: a patched size would only make sessions
	 * reserve and touch memory for nothing. */
	uint64_t need = 0;
	for (int32_t t = 0; t < nt; t++)
		if (p->tensors[t].storage == GC_STORAGE_ARENA && p->tensors[t].nbytes)
			need = MAX(need, align_up(p->tensors[t].offset + p->tensors[t].nbytes));
	for (int32_t i = 0; i < nn; i++)
		if (p->nodes[i].scratch_bytes)
			need = MAX(need, align_up(p->scratch_offset[i] + p->nodes[i].scratch_bytes));
	int32_t nb = 0;
	for (int32_t t = 0; t < nt; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		if (pt->storage != GC_STORAGE_ARENA || sh.alias[t] >= 0 || sh.parent[t] >= 0 ||
		    !pt->nbytes)
			continue;
		bl[nb++] = (block){ first[t], last[t], pt->offset, pt->nbytes, t,
				    c->writer[t] >= 0 ? c->writer[t] : -1 };
	}
	for (int32_t i = 0; i < nn; i++)
		if (p->nodes[i].scratch_bytes)
			bl[nb++] = (block){ i + 1, i + 1, p->scratch_offset[i],
					    p->nodes[i].scratch_bytes, -1, i };
	/* Sweep in time; the live blocks, ranked by offset, are disjoint, so a
	 * new block overlaps one of them only if it overlaps its neighbours. */
	qsort(bl, (size_t)nb, sizeof *bl, by_first);
	/* at_rank: block indices by offset (rank[b] the inverse); by_last:
	 * block indices by end of life */
	for (int32_t b = 0; b < nb; b++)
		at_rank[b] = by_last[b] = b;
	block_order by_offset = { bl, false }, by_end = { bl, true };
	qsort_r(at_rank, (size_t)nb, sizeof *at_rank, block_cmp, &by_offset);
	qsort_r(by_last, (size_t)nb, sizeof *by_last, block_cmp, &by_end);
	for (int32_t r = 0; r < nb; r++)
		rank[at_rank[r]] = r;
	rs.m = 1;
	while (rs.m < nb)
		rs.m *= 2;
	rs.cnt = gc_calloc((size_t)rs.m * 2, sizeof *rs.cnt);
	if (!rs.cnt) {
		rc = gc_error_set(c->err, GC_ENOMEM, "%s: out of memory", c->path);
		goto out;
	}
	int32_t gone = 0;
	for (int32_t b = 0; b < nb && !rc; b++) {
		while (gone < nb && bl[by_last[gone]].last < bl[b].first) {
			if (by_last[gone] < b) /* inserted already */
				rs_add(&rs, rank[by_last[gone]], -1);
			gone++;
		}
		int64_t r = rank[b];
		int64_t lo = rs_last(&rs, 1, 0, rs.m, r - 1), hi = rs_first(&rs, 1, 0, rs.m, r + 1);
		if (lo >= 0) {
			const block *x = &bl[at_rank[lo]];
			if (x->off + x->size > bl[b].off)
				rc = overlap_error(c, &bl[b], x);
		}
		if (!rc && hi >= 0) {
			const block *x = &bl[at_rank[hi]];
			if (bl[b].off + bl[b].size > x->off)
				rc = overlap_error(c, &bl[b], x);
		}
		rs_add(&rs, r, 1);
	}
	if (!rc && p->arena_bytes > need)
		rc = gc_error_set(c->err, GC_EINVAL,
				  "%s: corrupted program: its arena is %" PRIu64
				  " bytes, but its tensors and scratch use %" PRIu64,
				  c->path, p->arena_bytes, need);
out:
	gc_free(rs.cnt);
	gc_free(first);
	gc_free(last);
	gc_sharing_free(&sh);
	gc_free(is_input);
	gc_free(bl);
	gc_free(by_last);
	gc_free(rank);
	gc_free(at_rank);
	return rc;
}

/* A custom node's quantized edges (format 3) fit its tensors: each bound
 * edge's tensor is the integer type of its quantized type, present, and a
 * quantized output is what the binding inferred. The reader checked the
 * types, scales and offsets themselves. */
static int check_quant(checker *c)
{
	const gc_program *p = c->p;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		const gc_custom *cu = n->custom;
		if (!cu || !cu->quant)
			continue;
		for (int32_t j = 0; j < cu->n_in + cu->n_out; j++) {
			const gc_custom_quant *q = &cu->quant[j];
			if (!gc_custom_quant_on(q))
				continue;
			bool is_in = j < cu->n_in;
			int32_t k = is_in ? j : j - cu->n_in;
			int32_t t = is_in ? (k < n->n_in ? n->in[k] : -1)
					  : (k < n->n_out ? n->out[k] : -1);
			gc_dtype want = gc_custom_dtype_back((CustomOpDataType)q->dtype);
			char qs[96];
			gc_custom_quant_str(q, qs, sizeof qs);
			if (t < 0 || t >= p->n_tensors)
				return refuse(c, "node '%s' has its %s %d bound %s, but the node has "
						 "no such %s",
					      n->name, is_in ? "input" : "output", k, qs,
					      is_in ? "input" : "output");
			gc_dtype have = p->tensors[t].t.dtype;
			if (have != want || (!is_in && cu->outs[k].dtype != want))
				return refuse(c, "node '%s' has its %s %d ('%s') bound %s, but that "
						 "tensor is %s",
					      n->name, is_in ? "input" : "output", k,
					      p->tensors[t].name, qs, gc_dtype_name(have));
		}
	}
	return 0;
}

int gc_gcb_check_program(const gc_program *p, const char *path, gc_error *err)
{
	checker c = { .p = p, .path = path, .err = err };
	c.writer = gc_malloc(((size_t)p->n_tensors + 1) * sizeof *c.writer);
	if (!c.writer)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	int rc = check_dataflow(&c);
	if (!rc)
		rc = check_quant(&c);
	if (!rc)
		rc = check_plan(&c);
	gc_free(c.writer);
	return rc;
}
