/* Memory plans of a session's dynamic tensors, per input shape
 * (dyn-plan.h). */
#include "dyn-plan.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "liveness.h"
#include "session-impl.h"

#define ALIGN 64

gc_dyn_plans *gc_dyn_plans_new(const gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	size_t nt = (size_t)p->n_tensors + 1;
	gc_dyn_plans *d = gc_calloc(1, sizeof *d);
	bool *is_input = gc_calloc(nt, sizeof *is_input); /* gc_lifetimes' only */
	if (d) {
		d->placed = gc_calloc(nt, sizeof *d->placed);
		d->first = gc_calloc(nt, sizeof *d->first);
		d->last = gc_calloc(nt, sizeof *d->last);
	}
	if (!d || !d->placed || !d->first || !d->last || !is_input) {
		gc_free(is_input);
		gc_dyn_plans_free(d);
		gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
		return NULL;
	}
	gc_lifetimes(p, d->first, d->last, is_input);
	gc_free(is_input);
	return d;
}

static void plan_clear(gc_dyn_plan *e)
{
	gc_free(e->off);
	gc_free(e->bytes);
	gc_dynbuf_free(&e->key);
	memset(e, 0, sizeof *e);
}

void gc_dyn_plans_free(gc_dyn_plans *d)
{
	if (!d)
		return;
	for (int w = 0; w < GC_PREP_WAYS; w++)
		plan_clear(&d->e[w]);
	gc_dynbuf_free(&d->region);
	gc_dynbuf_free(&d->key);
	gc_free(d->placed);
	gc_free(d->first);
	gc_free(d->last);
	gc_free(d);
}

/* The inputs' types and shapes now into d->key. */
static int input_key(gc_dyn_plans *d, const gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	size_t len = 0;
	for (int32_t i = 0; i < p->n_inputs; i++) {
		const gc_tensor *t = &s->tensors[p->inputs[i]];
		int32_t rank = t->rank < 0 ? 0 : t->rank > GC_MAX_RANK ? GC_MAX_RANK : t->rank;
		size_t n = 2 * sizeof(int32_t) + (size_t)rank * sizeof(int64_t);
		if (gc_dynbuf_reserve(&d->key, len + n, true, "a plan key", err))
			return err->code;
		unsigned char *k = (unsigned char *)d->key.data + len;
		int32_t head[2] = {(int32_t)t->dtype, t->rank};
		memcpy(k, head, sizeof head);
		memcpy(k + sizeof head, t->dims, (size_t)rank * sizeof(int64_t));
		len += n;
	}
	d->key_len = len;
	return 0;
}

int gc_dyn_plan_begin(gc_dyn_plans *d, gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	d->cur = NULL;
	d->grew = false;
	memset(d->placed, 0, (size_t)p->n_tensors * sizeof *d->placed);
	if (input_key(d, s, err))
		return err->code;
	for (int w = 0; w < GC_PREP_WAYS; w++) {
		gc_dyn_plan *e = &d->e[w];
		if (!e->used || e->key_len != d->key_len ||
		    (d->key_len && memcmp(e->key.data, d->key.data, d->key_len)))
			continue;
		e->stamp = ++d->clock;
		if (gc_dynbuf_reserve(&d->region, e->total, false, "dynamic tensors", err))
			return err->code;
		d->cur = e;
		d->runs_planned++;
		/* the previous run's outputs are dead now: buffers the plan
		 * replaces go back */
		for (int32_t t = 0; t < p->n_tensors; t++)
			if (e->off[t] != GC_DYN_PLAN_NONE)
				gc_dynbuf_free(&s->dyn[t].buf);
		return 0;
	}
	return 0;
}

void *gc_dyn_plan_place(gc_dyn_plans *d, int32_t t, uint64_t bytes)
{
	d->placed[t] = bytes ? bytes : 1;
	const gc_dyn_plan *e = d->cur;
	if (!e || e->off[t] == GC_DYN_PLAN_NONE || bytes > e->bytes[t]) {
		d->grew |= e != NULL;
		return NULL;
	}
	return (unsigned char *)d->region.data + e->off[t];
}

typedef struct item {
	int32_t t;
	uint64_t bytes;
} item;

static int by_size(const void *a, const void *b)
{
	const item *x = a, *y = b;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->t - y->t;
}

typedef struct span {
	uint64_t lo, hi;
} span;

static int by_lo(const void *a, const void *b)
{
	uint64_t x = ((const span *)a)->lo, y = ((const span *)b)->lo;
	return x < y ? -1 : x > y;
}

/* First fit, largest first: each tensor at the lowest offset where it
 * meets no tensor placed before it whose lifetime meets its own. */
static uint64_t place_all(const gc_dyn_plans *d, item *it, int32_t n, span *clash, uint64_t *off)
{
	uint64_t total = 0;
	qsort(it, (size_t)n, sizeof *it, by_size);
	for (int32_t a = 0; a < n; a++) {
		int32_t t = it[a].t, nc = 0;
		for (int32_t b = 0; b < a; b++) {
			int32_t u = it[b].t;
			if (d->first[u] <= d->last[t] && d->first[t] <= d->last[u])
				clash[nc++] = (span){off[u], off[u] + it[b].bytes};
		}
		qsort(clash, (size_t)nc, sizeof *clash, by_lo);
		uint64_t at = 0;
		for (int32_t c = 0; c < nc; c++) {
			if (at + it[a].bytes <= clash[c].lo)
				break;
			if (clash[c].hi > at)
				at = (clash[c].hi + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
		}
		off[t] = at;
		if (at + it[a].bytes > total)
			total = at + it[a].bytes;
	}
	return total;
}

int gc_dyn_plan_end(gc_dyn_plans *d, gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	if (d->cur && !d->grew)
		return 0;
	gc_dyn_plan *e = d->cur;
	if (!e) { /* a new input shape: the least recently used way */
		e = &d->e[0];
		for (int w = 0; w < GC_PREP_WAYS; w++) {
			if (!d->e[w].used) {
				e = &d->e[w];
				break;
			}
			if (d->e[w].stamp < e->stamp)
				e = &d->e[w];
		}
		plan_clear(e);
	}
	size_t nt = (size_t)p->n_tensors + 1;
	if (!e->off)
		e->off = gc_malloc(nt * sizeof *e->off);
	if (!e->bytes)
		e->bytes = gc_calloc(nt, sizeof *e->bytes);
	item *it = gc_malloc(nt * sizeof *it);
	span *clash = gc_malloc(nt * sizeof *clash);
	if (!e->off || !e->bytes || !it || !clash) {
		gc_free(it);
		gc_free(clash);
		plan_clear(e);
		return gc_error_set(err, GC_ENOMEM, "out of memory planning dynamic tensors");
	}
	int32_t n = 0;
	for (int32_t t = 0; t < p->n_tensors; t++) {
		uint64_t b = d->placed[t] > e->bytes[t] ? d->placed[t] : e->bytes[t];
		e->off[t] = GC_DYN_PLAN_NONE;
		e->bytes[t] = b;
		if (b)
			it[n++] = (item){t, b};
	}
	e->total = place_all(d, it, n, clash, e->off);
	gc_free(it);
	gc_free(clash);
	if (d->key_len && (!e->key.data || e->key.cap < d->key_len)) {
		if (gc_dynbuf_reserve(&e->key, d->key_len, false, "a plan key", err)) {
			plan_clear(e);
			return err->code;
		}
	}
	if (d->key_len) /* (a program without inputs: an empty key) */
		memcpy(e->key.data, d->key.data, d->key_len);
	e->key_len = d->key_len;
	e->used = true;
	e->stamp = ++d->clock;
	d->plans_made++;
	/* The region grows now, so that the next run of these shapes
	 * allocates nothing -- unless this run's tensors are in it (its
	 * outputs are read until the next run): then when that one starts. */
	if (!d->cur && gc_dynbuf_reserve(&d->region, e->total, false, "dynamic tensors", err))
		return err->code;
	return 0;
}
