#include "pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"

#define POOL_ALIGN 64
#define POOL_BLOCK (64 * 1024)

typedef struct block {
	struct block *next;
	size_t used, size;
	_Alignas(POOL_ALIGN) unsigned char data[];
} block;

/* A mapped file region, or a block of memory of its own (gc_pool_big),
 * shared by the pools that keep it. */
typedef struct mapping {
	void *base;
	size_t len; /* 0: base is memory, freed with gc_packed_free */
	const unsigned char *data;
	size_t nbytes;
	int refs; /* atomic */
} mapping;

typedef struct mref {
	struct mref *next;
	mapping *m;
} mref;

struct gc_pool {
	block *head;
	size_t total;
	mref *maps;
};

gc_pool *gc_pool_new(void)
{
	return gc_calloc(1, sizeof(gc_pool));
}

void gc_pool_free(gc_pool *pool)
{
	if (!pool)
		return;
	for (mref *r = pool->maps; r;) {
		mref *next = r->next;
		if (__atomic_sub_fetch(&r->m->refs, 1, __ATOMIC_ACQ_REL) == 0) {
			if (r->m->len)
				munmap(r->m->base, r->m->len);
			else
				gc_packed_free(r->m->base);
			gc_free(r->m);
		}
		gc_free(r);
		r = next;
	}
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
		/* A block of 2 MiB and more holds one big constant, which
		 * kernels may read in place on every run (a Linear layer's
		 * weight at batch 1: gemm.c's gemv_run; an embedding table):
		 * on huge pages, as packed weights are (alloc.c). Read once a
		 * run after the rest of the network has evicted it,
		 * inception_v3's classifier (1000 x 2048, 8 MB) took 0.9-1.2
		 * ms from small pages, 0.54 from huge ones (ONNX Runtime
		 * 0.62); vgg11 ran 11 % faster at one thread (issue 19). */
		block *nb = cap >= GC_HUGE_BYTES ? gc_huge_alloc_fit(sizeof(block) + cap)
						 : gc_aligned_alloc(POOL_ALIGN, sizeof(block) + cap, 0);
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

static bool keep(gc_pool *pool, mapping *m)
{
	mref *r = gc_malloc(sizeof *r);
	if (!r)
		return false;
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_ACQ_REL);
	r->m = m;
	r->next = pool->maps;
	pool->maps = r;
	return true;
}

void *gc_pool_map(gc_pool *pool, int fd, uint64_t offset, size_t nbytes)
{
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0 || !nbytes)
		return NULL;
	uint64_t lead = offset % (uint64_t)page;
	if (nbytes > SIZE_MAX - lead || offset - lead > (uint64_t)INT64_MAX)
		return NULL;
	mapping *m = gc_calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->len = (size_t)lead + nbytes;
	m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd,
		       (off_t)(offset - lead));
	if (m->base == MAP_FAILED) {
		gc_free(m);
		return NULL;
	}
	m->data = (const unsigned char *)m->base + lead;
	m->nbytes = nbytes;
	if (!keep(pool, m)) {
		munmap(m->base, m->len);
		gc_free(m);
		return NULL;
	}
	return (void *)m->data;
}

void *gc_pool_big(gc_pool *pool, size_t nbytes)
{
	if (!nbytes)
		return NULL;
	mapping *m = gc_calloc(1, sizeof *m);
	if (!m)
		return NULL;
	/* under 2 MiB: in the packed weights' shared slabs, also on huge
	 * pages (resnet18's classifier, 1000 x 512, read in place by gemv_run
	 * after the network has evicted it: 0.70 ms from 4 KiB pages, 0.15
	 * from a huge one) */
	m->base = nbytes < GC_HUGE_BYTES ? gc_packed_alloc(nbytes) : gc_huge_alloc_fit(nbytes);
	if (!m->base) {
		gc_free(m);
		return NULL;
	}
	m->data = m->base;
	m->nbytes = nbytes;
	if (!keep(pool, m)) {
		gc_packed_free(m->base);
		gc_free(m);
		return NULL;
	}
	return m->base;
}

bool gc_pool_share_mapping(const gc_pool *from, gc_pool *to, const void *p, size_t n)
{
	const unsigned char *c = p;
	for (const mref *r = from ? from->maps : NULL; r; r = r->next)
		if (c >= r->m->data && n <= r->m->nbytes && (size_t)(c - r->m->data) <= r->m->nbytes - n)
			return keep(to, r->m);
	return false;
}
