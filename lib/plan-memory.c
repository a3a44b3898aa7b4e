/* The memory plan: one arena for every activation and scratch block,
 * reused by liveness, outputs in place of inputs where the kernel allows. */
#include "plan-memory.h"

#include <inttypes.h>
#include <stdlib.h>

#include "../runtime/build.h"

/* One block to place: [first, last] node steps, size. */
typedef struct interval {
	int32_t first, last;
	uint64_t size;
	uint64_t *offset;
} interval;

/* The plan's working arrays, per tensor unless said otherwise. */
typedef struct plan {
	gc_program *p;
	int32_t *first, *last; /* steps */
	gc_sharing sh;	       /* in place and Concat in place (liveness.h) */
	bool *is_input;
	interval *iv; /* per tensor and node */
	int32_t *placed;
	int32_t n_iv;
	uint64_t align; /* the backend's arena alignment (a power of two) */
} plan;

static int by_size_desc(const void *a, const void *b)
{
	const interval *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->first - y->first;
}

static uint64_t align_up(const plan *pl, uint64_t v)
{
	return (v + pl->align - 1) & ~(pl->align - 1);
}

/* The blocks to place: every ARENA tensor that has bytes of its own, and
 * every node's scratch. */
static void collect_blocks(plan *pl)
{
	gc_program *p = pl->p;
	pl->n_iv = 0;
	p->tensor_bytes = 0;
	for (int32_t t = 0; t < p->n_tensors; t++) {
		gc_ptensor *pt = &p->tensors[t];
		if (pt->storage != GC_STORAGE_ARENA)
			continue;
		p->tensor_bytes += pt->nbytes;
		if (pl->sh.alias[t] >= 0 || pl->sh.parent[t] >= 0)
			continue;
		pl->iv[pl->n_iv++] =
		    (interval){ pl->first[t], pl->last[t], align_up(pl, pt->nbytes), &pt->offset };
	}
	for (int32_t i = 0; i < p->n_nodes; i++) {
		p->scratch_offset[i] = 0;
		if (p->nodes[i].scratch_bytes) {
			pl->iv[pl->n_iv++] = (interval){ i + 1, i + 1,
							 align_up(pl, p->nodes[i].scratch_bytes),
							 &p->scratch_offset[i] };
			p->tensor_bytes += p->nodes[i].scratch_bytes;
		}
	}
}

/* Greedy by size: each block goes at the lowest offset where it does
 * not overlap a placed block whose lifetime overlaps its own. Returns the
 * arena's size. */
static uint64_t place_blocks(plan *pl)
{
	interval *iv = pl->iv;
	qsort(iv, (size_t)pl->n_iv, sizeof *iv, by_size_desc);
	uint64_t peak = 0;
	int32_t n_placed = 0;
	for (int32_t i = 0; i < pl->n_iv; i++) {
		uint64_t off = 0;
		bool moved = true;
		while (moved) {
			moved = false;
			for (int32_t j = 0; j < n_placed; j++) {
				const interval *o = &iv[pl->placed[j]];
				if (o->last < iv[i].first || o->first > iv[i].last)
					continue;
				if (off < *o->offset + o->size && *o->offset < off + iv[i].size) {
					off = align_up(pl, *o->offset + o->size);
					moved = true;
				}
			}
		}
		*iv[i].offset = off;
		pl->placed[n_placed++] = i;
		if (off + iv[i].size > peak)
			peak = off + iv[i].size;
	}
	return peak;
}

int gc_program_plan_memory(gc_program *p, uint32_t align, gc_error *err)
{
	int32_t nt = p->n_tensors, nn = p->n_nodes;
	plan pl = {
		.p = p,
		.align = align,
		.first = gc_malloc(((size_t)nt + 1) * sizeof *pl.first),
		.last = gc_malloc(((size_t)nt + 1) * sizeof *pl.last),
		.iv = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *pl.iv),
		.is_input = gc_calloc((size_t)nt + 1, sizeof *pl.is_input),
		.placed = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *pl.placed),
	};
	if (!p->scratch_offset && nn)
		p->scratch_offset = gc_pool_alloc(p->pool, (size_t)nn * sizeof(uint64_t));
	int rc = 0;
	if (!pl.first || !pl.last || !pl.iv || !pl.placed || !pl.is_input ||
	    (nn && !p->scratch_offset) || gc_sharing_alloc(&pl.sh, nt)) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory planning memory");
		goto out;
	}
	gc_lifetimes(p, pl.first, pl.last, pl.is_input);
	if (gc_share_memory(p, pl.first, pl.last, pl.is_input, &pl.sh, align, false)) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory planning memory");
		goto out;
	}
	collect_blocks(&pl);
	uint64_t peak = place_blocks(&pl);
	p->arena_bytes = peak;
	if (peak > gc_limit_bytes()) {
		rc = gc_error_set(err, GC_ELIMIT,
				  "the program needs an activation arena of %" PRIu64
				  " bytes, over the limit of %" PRIu64 " (raise " GC_LIMIT_SETTING
				  " to allow more)",
				  peak, gc_limit_bytes());
		goto out;
	}
	/* Concat members at their slices, then in-place chains on their root */
	for (int32_t t = 0; t < nt; t++) {
		uint64_t d;
		if (pl.sh.alias[t] < 0 && pl.sh.parent[t] >= 0)
			p->tensors[t].offset = p->tensors[gc_share_owner(&pl.sh, t, &d)].offset + d;
	}
	for (int32_t t = 0; t < nt; t++)
		if (pl.sh.alias[t] >= 0)
			p->tensors[t].offset = p->tensors[pl.sh.alias[t]].offset;
out:
	gc_sharing_free(&pl.sh);
	gc_free(pl.is_input);
	gc_free(pl.first);
	gc_free(pl.last);
	gc_free(pl.iv);
	gc_free(pl.placed);
	return rc;
}
