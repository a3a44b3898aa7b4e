#include "strpool.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "fileio.h"

#define CHUNK_MIN 4096

typedef struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
} chunk;

struct gc_strpool {
	chunk *head, *cur; /* cur: the chunk allocations come from */
	size_t used, cap;
};

gc_strpool *gc_strpool_new(void)
{
	return gc_calloc(1, sizeof(gc_strpool));
}

static void free_chunks(chunk *c)
{
	while (c) {
		chunk *next = c->next;
		gc_free(c);
		c = next;
	}
}

void gc_strpool_free(gc_strpool *sp)
{
	if (!sp)
		return;
	free_chunks(sp->head);
	gc_free(sp);
}

static chunk *chunk_new(size_t cap)
{
	if (cap > SIZE_MAX - sizeof(chunk))
		return NULL;
	chunk *c = gc_malloc(sizeof(chunk) + cap);
	if (!c)
		return NULL;
	c->next = NULL;
	c->used = 0;
	c->cap = cap;
	return c;
}

char *gc_strpool_alloc(gc_strpool *sp, size_t n)
{
	if (n > gc_limit_bytes() || sp->used > gc_limit_bytes() - n)
		return NULL;
	/* Chunks after cur are empty (reset, or skipped by a larger string). */
	while (sp->cur && sp->cur->cap - sp->cur->used < n && sp->cur->next)
		sp->cur = sp->cur->next;
	chunk *c = sp->cur;
	if (!c || c->cap - c->used < n) {
		size_t cap = sp->cap > CHUNK_MIN ? sp->cap : CHUNK_MIN; /* doubles the pool */
		if (cap < n)
			cap = n;
		chunk *nc = chunk_new(cap);
		if (!nc)
			return NULL;
		if (c)
			c->next = nc;
		else
			sp->head = nc;
		sp->cur = c = nc;
		sp->cap += cap;
	}
	char *s = c->data + c->used;
	c->used += n;
	sp->used += n;
	return s;
}

void gc_strpool_reset(gc_strpool *sp)
{
	if (!sp)
		return;
	if (sp->head && sp->head->next) {
		/* Several chunks: one of their total size serves the next run. */
		chunk *one = chunk_new(sp->cap);
		if (one) {
			free_chunks(sp->head);
			sp->head = one;
		}
	}
	for (chunk *c = sp->head; c; c = c->next)
		c->used = 0;
	sp->cur = sp->head;
	sp->used = 0;
}

size_t gc_strpool_used(const gc_strpool *sp)
{
	return sp ? sp->used : 0;
}

size_t gc_strpool_capacity(const gc_strpool *sp)
{
	return sp ? sp->cap : 0;
}
