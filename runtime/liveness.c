#include "liveness.h"

#include <string.h>

#include "alloc.h"
#include "ops.h"

void gc_lifetimes(const gc_program *p, int32_t *first, int32_t *last, bool *is_input)
{
	int32_t nt = p->n_tensors, nn = p->n_nodes;
	memset(is_input, 0, (size_t)nt * sizeof *is_input);
	for (int32_t t = 0; t < nt; t++) {
		first[t] = INT32_MAX;
		last[t] = -1;
	}
	for (int32_t i = 0; i < p->n_inputs; i++) {
		first[p->inputs[i]] = 0;
		is_input[p->inputs[i]] = true;
	}
	for (int32_t i = 0; i < nn; i++) {
		const gc_node *n = &p->nodes[i];
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0 && first[n->out[j]] > i + 1)
				first[n->out[j]] = i + 1;
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0 && last[n->in[j]] < i + 1)
				last[n->in[j]] = i + 1;
	}
	for (int32_t i = 0; i < p->n_inputs; i++)
		last[p->inputs[i]] = nn + 1;
	for (int32_t i = 0; i < p->n_outputs; i++)
		last[p->outputs[i]] = nn + 1;
	for (int32_t t = 0; t < nt; t++) {
		if (first[t] == INT32_MAX)
			first[t] = 0;
		if (last[t] < first[t])
			last[t] = first[t]; /* written, never read: still needs room */
	}
}

int gc_sharing_alloc(gc_sharing *sh, int32_t n)
{
	size_t m = (size_t)n + 1;
	*sh = (gc_sharing){ .alias = gc_malloc(m * sizeof *sh->alias),
			    .parent = gc_malloc(m * sizeof *sh->parent),
			    .delta = gc_calloc(m, sizeof *sh->delta),
			    .has_members = gc_calloc(m, sizeof *sh->has_members) };
	if (sh->alias && sh->parent && sh->delta && sh->has_members)
		return 0;
	gc_sharing_free(sh);
	return GC_ENOMEM;
}

void gc_sharing_free(gc_sharing *sh)
{
	gc_free(sh->alias);
	gc_free(sh->parent);
	gc_free(sh->delta);
	gc_free(sh->has_members);
	*sh = (gc_sharing){ 0 };
}

/* The owner of t's block, t's offset in it and how deep t sits. */
static int32_t owner_depth(const gc_sharing *sh, int32_t t, uint64_t *delta, int *depth)
{
	uint64_t d = 0;
	int k = 0;
	if (sh->alias[t] >= 0)
		t = sh->alias[t];
	while (sh->parent[t] >= 0 && k <= GC_SHARE_DEPTH) {
		d += sh->delta[t];
		t = sh->parent[t];
		k++;
	}
	*delta = d;
	*depth = k;
	return t;
}

int32_t gc_share_owner(const gc_sharing *sh, int32_t t, uint64_t *delta)
{
	int depth;
	return owner_depth(sh, t, delta, &depth);
}

bool gc_concat_slices(const gc_program *p, const gc_node *n, uint64_t *delta)
{
	if (n->op != GC_OP_Concat || n->reprepare || n->n_out < 1 || n->out[0] < 0 || n->n_in < 1)
		return false;
	const gc_ptensor *pc = &p->tensors[n->out[0]];
	int32_t rank = pc->t.rank;
	if (pc->storage != GC_STORAGE_ARENA || pc->t.dtype == GC_DTYPE_STRING || rank < 1 ||
	    rank > GC_MAX_RANK)
		return false;
	const gc_attr *at = gc_attr_find(n, "axis");
	int64_t a = at && at->type == GC_ATTR_INT ? at->v.i : 1;
	if (at && at->type != GC_ATTR_INT)
		return false;
	if (a < 0)
		a += rank;
	if (a < 0 || a >= rank)
		return false;
	for (int64_t d = 0; d < a; d++)
		if (pc->t.dims[d] != 1)
			return false;
	uint64_t sum = 0;
	for (int32_t j = 0; j < n->n_in; j++) {
		if (n->in[j] < 0)
			return false;
		const gc_ptensor *pt = &p->tensors[n->in[j]];
		if (pt->t.dtype != pc->t.dtype || pt->t.rank != rank || pt->nbytes > pc->nbytes - sum)
			return false;
		delta[j] = sum;
		sum += pt->nbytes;
	}
	return sum == pc->nbytes;
}

/* Concat c (node n, its inputs' slices at dl) placed where its inputs all
 * already are, in order, in one block. */
static bool concat_as_view(const gc_program *p, const gc_node *n, const uint64_t *dl,
			   gc_sharing *sh, bool same_offset)
{
	int32_t c = n->out[0], top = -1;
	uint64_t base = 0;
	for (int32_t j = 0; j < n->n_in; j++) {
		int32_t m = n->in[j];
		if (!p->tensors[m].nbytes)
			continue;
		if (sh->parent[m] < 0)
			return false;
		uint64_t md;
		int depth;
		int32_t o = owner_depth(sh, m, &md, &depth);
		if (md < dl[j] || depth > GC_SHARE_DEPTH || (top >= 0 && (o != top || md - dl[j] != base)))
			return false;
		top = o;
		base = md - dl[j];
	}
	if (top < 0 || top == c ||
	    (same_offset && p->tensors[c].offset != p->tensors[top].offset + base))
		return false;
	sh->parent[c] = top;
	sh->delta[c] = base;
	return true;
}

/* Concat inputs at their slices, the Concat read last first. */
static void share_concat(const gc_program *p, const bool *is_input, gc_sharing *sh,
			 uint64_t align, bool same_offset, uint64_t *dl)
{
	for (int32_t i = p->n_nodes - 1; i >= 0; i--) {
		const gc_node *n = &p->nodes[i];
		if (!gc_concat_slices(p, n, dl))
			continue;
		int32_t c = n->out[0];
		uint64_t cd;
		int depth;
		int32_t top = owner_depth(sh, c, &cd, &depth);
		if (!p->tensors[c].nbytes || is_input[c] || sh->has_members[c] ||
		    depth >= GC_SHARE_DEPTH)
			continue;
		if (sh->parent[c] < 0 && concat_as_view(p, n, dl, sh, same_offset))
			continue;
		for (int32_t j = 0; j < n->n_in; j++) {
			int32_t m = n->in[j];
			const gc_ptensor *pm = &p->tensors[m];
			if (pm->storage != GC_STORAGE_ARENA || !pm->nbytes || is_input[m] ||
			    sh->parent[m] >= 0 || sh->has_members[m] || m == top || m == c ||
			    (cd + dl[j]) % align ||
			    (same_offset && pm->offset != p->tensors[c].offset + dl[j]))
				continue;
			sh->parent[m] = c;
			sh->delta[m] = dl[j];
			sh->has_members[c] = true;
		}
	}
}

static int32_t alias_root(const int32_t *alias, int32_t t)
{
	while (alias[t] >= 0)
		t = alias[t];
	return t;
}

/* Whether an input of n other than in[k] is in the block of root, in
 * place or as a Concat's slice (the kernel reads it while it writes its
 * output there). */
static bool other_input_in(const gc_node *n, int k, const gc_sharing *sh, int32_t root)
{
	uint64_t d;
	for (int j = 0; j < n->n_in; j++)
		if (j != k && n->in[j] >= 0 && gc_share_owner(sh, n->in[j], &d) == root)
			return true;
	return false;
}

static void share_in_place(const gc_program *p, int32_t *last, const bool *is_input,
			   gc_sharing *sh, bool same_offset)
{
	int32_t *alias = sh->alias;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		int k = n->inplace_in;
		if (!n->inplace_ok || k < 0 || k >= n->n_in || n->n_out < 1 || n->in[k] < 0 ||
		    n->out[0] < 0)
			continue;
		int32_t a = n->in[k], o = n->out[0], root = alias_root(alias, a);
		/* (an input after the first, a fused residual, only alone in its
		 * block: a Conv reads its x all along; an element-wise kernel
		 * with in[0] may read it again as another operand) */
		if (k > 0 && other_input_in(n, k, sh, root))
			continue;
		const gc_ptensor *pa = &p->tensors[a], *po = &p->tensors[o];
		if (pa->storage != GC_STORAGE_ARENA || po->storage != GC_STORAGE_ARENA ||
		    pa->nbytes != po->nbytes || last[root] != i + 1 || is_input[root] || a == o ||
		    alias[o] >= 0 || sh->parent[root] >= 0 || sh->has_members[o] ||
		    (same_offset && po->offset != p->tensors[root].offset))
			continue;
		alias[o] = root;
		if (last[o] > last[root])
			last[root] = last[o];
		if (sh->parent[o] >= 0) { /* the chain's bytes are o's slice */
			sh->parent[root] = sh->parent[o];
			sh->delta[root] = sh->delta[o];
			sh->parent[o] = -1;
		}
	}
}

/* Each block's owner spans the lifetimes of what it holds. */
static void merge_lifetimes(const gc_program *p, int32_t *first, int32_t *last,
			    const gc_sharing *sh)
{
	for (int32_t t = 0; t < p->n_tensors; t++) {
		if (sh->alias[t] >= 0 || sh->parent[t] < 0)
			continue;
		uint64_t d;
		int32_t o = gc_share_owner(sh, t, &d);
		if (first[t] < first[o])
			first[o] = first[t];
		if (last[t] > last[o])
			last[o] = last[t];
	}
}

int gc_share_memory(const gc_program *p, int32_t *first, int32_t *last, const bool *is_input,
		    gc_sharing *sh, uint64_t align, bool same_offset)
{
	for (int32_t t = 0; t < p->n_tensors; t++) {
		sh->alias[t] = sh->parent[t] = -1;
		sh->delta[t] = 0;
		sh->has_members[t] = false;
	}
	int32_t max_in = 0;
	for (int32_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i].op == GC_OP_Concat && p->nodes[i].n_in > max_in)
			max_in = p->nodes[i].n_in;
	if (max_in) {
		uint64_t *dl = gc_malloc((size_t)max_in * sizeof *dl);
		if (!dl)
			return GC_ENOMEM;
		share_concat(p, is_input, sh, align ? align : 1, same_offset, dl);
		gc_free(dl);
	}
	/* a block's owner may be written over in place when all of it dies */
	merge_lifetimes(p, first, last, sh);
	share_in_place(p, last, is_input, sh, same_offset);
	merge_lifetimes(p, first, last, sh); /* chain roots moved to slices */
	return 0;
}
