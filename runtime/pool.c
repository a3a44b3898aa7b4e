#include "pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define POOL_ALIGN 64
#define POOL_BLOCK (64 * 1024)

typedef struct block {
	struct block *next;
	size_t used, size;
	_Alignas(POOL_ALIGN) unsigned char data[];
} block;

struct gc_pool {
	block *head;
	size_t total;
};

gc_pool *gc_pool_new(void)
{
	return gc_calloc(1, sizeof(gc_pool));
}

void gc_pool_free(gc_pool *pool)
{
	if (!pool)
		return;
	for (block *b = pool->head; b;) {
		block *next = b->next;
		gc_free(b);
		b = next;
	}
	gc_free(pool);
}

void *gc_pool_alloc(gc_pool *pool, size_t size)
{
	if (size > SIZE_MAX - 2 * POOL_ALIGN - sizeof(block))
		return NULL;
	size_t need = (size + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
	if (need == 0)
		need = POOL_ALIGN;
	block *b = pool->head;
	if (!b || b->size - b->used < need) {
		size_t cap = need > POOL_BLOCK ? need : POOL_BLOCK;
		block *nb = gc_aligned_alloc(POOL_ALIGN, sizeof(block) + cap, 0);
		if (!nb)
			return NULL;
		nb->used = 0;
		nb->size = cap;
		if (b && need > POOL_BLOCK) {
			/* Keep the partly used block in front for small requests. */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			pool->head = nb;
		}
		b = nb;
	}
	void *p = b->data + b->used;
	b->used += need;
	pool->total += need;
	memset(p, 0, need);
	return p;
}

char *gc_pool_strndup(gc_pool *pool, const char *s, size_t n)
{
	char *d = gc_pool_alloc(pool, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

char *gc_pool_strdup(gc_pool *pool, const char *s)
{
	return s ? gc_pool_strndup(pool, s, strlen(s)) : NULL;
}

void *gc_pool_memdup(gc_pool *pool, const void *p, size_t size)
{
	void *d = gc_pool_alloc(pool, size);
	if (d && size)
		memcpy(d, p, size);
	return d;
}

size_t gc_pool_used(const gc_pool *pool)
{
	return pool->total;
}
