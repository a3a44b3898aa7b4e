#include "alloc.h"
#include "fileio.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * Out-of-memory injection for tests: the N-th call (counting from 1) to
 * gc_malloc, gc_calloc, gc_realloc, gc_strdup or gc_aligned_alloc fails (only that one).
 * Set by gc_alloc_set_fail_after() only (tests; the graphcc command maps
 * GRAPHCC_FAIL_ALLOC=N to it): the library reads no environment, so a
 * server's allocations never fail on purpose. 0 (the default) never fails.
 */
static atomic_llong fail_at; /* 0: never */
static atomic_llong alloc_calls;
static atomic_int trace_failures;

void gc_alloc_set_trace(int on)
{
	atomic_store(&trace_failures, on != 0);
}

void gc_alloc_set_fail_after(long long n)
{
	atomic_store(&alloc_calls, 0);
	atomic_store(&fail_at, n > 0 ? n : 0);
}

long long gc_alloc_count(void)
{
	return atomic_load(&alloc_calls);
}

/* With GRAPHCC_FAIL_ALLOC_TRACE set, the failed call says where it came
 * from (object file and offset, for addr2line), so a test can count the
 * distinct allocation sites it failed. */
static void trace_failure(long long n, void *caller)
{
	if (!atomic_load(&trace_failures))
		return;
	Dl_info info;
	if (caller && dladdr(caller, &info) && info.dli_fname)
		fprintf(stderr, "gc_alloc: injected failure of allocation %lld at %s+0x%zx\n", n,
			info.dli_fname, (size_t)((char *)caller - (char *)info.dli_fbase));
	else
		fprintf(stderr, "gc_alloc: injected failure of allocation %lld at %p\n", n, caller);
}

static int fail_now(void *caller)
{
	long long at = atomic_load(&fail_at);
	long long n = atomic_fetch_add(&alloc_calls, 1) + 1;
	if (at > 0 && n == at) {
		trace_failure(n, caller);
		return 1;
	}
	return 0;
}

/* No one allocation may exceed GRAPHCC_MAX_BYTES (plus a little for the
 * bookkeeping around a buffer of exactly that size): sizes come from data,
 * and the callers that can name what was too large check first. */
static int over_limit(size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		return 1;
	return total > (1u << 20) && total > gc_limit_bytes() + (1u << 20);
}

static void *alloc_from(size_t size, void *caller)
{
	if (fail_now(caller) || over_limit(1, size))
		return NULL;
	return malloc(size ? size : 1);
}

void *gc_malloc(size_t size)
{
	return alloc_from(size, __builtin_return_address(0));
}

void *gc_calloc(size_t n, size_t size)
{
	if (fail_now(__builtin_return_address(0)) || over_limit(n, size))
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *gc_realloc(void *p, size_t size)
{
	if (fail_now(__builtin_return_address(0)) || over_limit(1, size))
		return NULL;
	return realloc(p, size ? size : 1);
}
void *gc_exact_alloc(size_t size, int zero)
{
	void *p = NULL;
	if (fail_now(__builtin_return_address(0)) || over_limit(1, size) ||
	    posix_memalign(&p, 64, size ? size : 1))
		return NULL;
	if (zero)
		memset(p, 0, size ? size : 1);
	return p;
}

void gc_free(void *p)
{
	free(p);
}

void *gc_aligned_alloc(size_t align, size_t size, int zero)
{
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	if (size > SIZE_MAX - align)
		return NULL;
	size = (size + align - 1) & ~(align - 1);
	void *p = aligned_alloc(align, size ? size : align);
	if (p && zero)
		memset(p, 0, size ? size : align);
	return p;
}

/*
 * Blocks of 2 MiB and more that a run streams whole (packed weights: an
 * LLM's vocabulary head of 16 MiB for 32 tokens; the activation arena,
 * whose convolutions read 32-64 planes at once and write as many) go on
 * huge pages: 1 page table entry per 2 MiB instead of 512, and the arena's
 * lines in L2 sets by their place in 2 MiB, not by where 4 KiB pages
 * happened to land. The arena on huge pages, builds in turns, 4 fresh
 * process pairs each (a process's placement alone moved inception_v3 by up
 * to 6 % in an A/A test): at one and two threads inception_v3 1.4-1.6 %
 * faster, resnet50 3 %, mobilenet_v2 4-7 %, vgg11 1-2 %, squeezenet the
 * same.
 */
/* fit: the last partial 2 MiB on huge pages only where rounding up adds an
 * eighth of size at most (gc_huge_alloc_fit) */
static void *huge_alloc(size_t size, bool fit)
{
	if (size < GC_HUGE_BYTES)
		return gc_aligned_alloc(64, size, 0);
	void *p = gc_aligned_alloc(GC_HUGE_BYTES, size, 0);
	size_t whole = size & ~(GC_HUGE_BYTES - 1);
	if (size - whole && (!fit || GC_HUGE_BYTES - (size - whole) <= size / 8))
		whole += GC_HUGE_BYTES;
#ifdef MADV_HUGEPAGE
	if (p)
		(void)madvise(p, whole, MADV_HUGEPAGE);
#endif
	return p;
}

void *gc_huge_alloc(size_t size)
{
	return huge_alloc(size, false);
}

void *gc_huge_alloc_fit(size_t size)
{
	return huge_alloc(size, true);
}

/*
 * Packed weights under GC_HUGE_BYTES (most of a CNN's: 86 of inception_v3's
 * 94 convolutions) one after another in slabs of SLAB_BYTES on huge pages,
 * rather than each on 4 KiB pages of its own: a run reads them all, and in
 * a virtual machine a TLB miss walks the guest's and the host's page tables
 * (the likely cause; this VM has no counters to show it). Builds in turns,
 * 6 fresh process pairs (a process's placement alone had moved inception_v3
 * by up to 6 % in an A/A test): inception_v3 3.5-4 % faster at one and two
 * threads, every pair faster. A slab's blocks are never reused: it is
 * returned when its last block is freed, so a program's weights cost at most
 * its last slab's unused tail (whose untouched huge pages are never faulted
 * in). Under AddressSanitizer each block is its own allocation, for the
 * bounds checks.
 */
#define SLAB_BYTES ((size_t)32 << 20)

typedef struct slab {
	char *base;
	size_t used;
	long live; /* blocks not freed */
} slab;

static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static slab *slabs;
static int n_slabs, cap_slabs, slab_cur = -1; /* slab_cur: the one being filled */

static int slab_new(void)
{
	if (n_slabs == cap_slabs) {
		int cap = cap_slabs ? 2 * cap_slabs : 8;
		slab *s = realloc(slabs, (size_t)cap * sizeof *s);
		if (!s)
			return -1;
		slabs = s;
		cap_slabs = cap;
	}
	char *base = gc_huge_alloc(SLAB_BYTES);
	if (!base)
		return -1;
	slabs[n_slabs] = (slab){.base = base};
	return n_slabs++;
}

void *gc_packed_alloc(size_t size)
{
	if (size > SIZE_MAX - GC_HUGE_BYTES)
		return NULL;
	size = size ? (size + 63) & ~(size_t)63 : 64;
	if (GC_UNDER_ASAN || size >= GC_HUGE_BYTES)
		return gc_huge_alloc(size);
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	void *p = NULL;
	pthread_mutex_lock(&slab_lock);
	if (slab_cur < 0 || slabs[slab_cur].used + size > SLAB_BYTES)
		slab_cur = slab_new();
	if (slab_cur >= 0) {
		slab *s = &slabs[slab_cur];
		p = s->base + s->used;
		s->used += size;
		s->live++;
	}
	pthread_mutex_unlock(&slab_lock);
	return p;
}

void gc_packed_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&slab_lock);
	int i = 0;
	while (i < n_slabs && !((char *)p >= slabs[i].base && (char *)p < slabs[i].base + SLAB_BYTES))
		i++;
	if (i == n_slabs) { /* a block of its own */
		pthread_mutex_unlock(&slab_lock);
		gc_free(p);
		return;
	}
	if (--slabs[i].live == 0) {
		gc_free(slabs[i].base);
		slabs[i] = slabs[--n_slabs];
		slab_cur = slab_cur == i ? -1 : slab_cur == n_slabs ? i : slab_cur;
	}
	pthread_mutex_unlock(&slab_lock);
}

char *gc_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = alloc_from(n, __builtin_return_address(0));
	if (d)
		memcpy(d, s, n);
	return d;
}

int gc_error_set(gc_error *err, int code, const char *fmt, ...)
{
	if (!err || err->code)
		return err && err->code ? err->code : code;
	err->code = code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return code;
}

int gc_error_prefix(gc_error *err, const char *fmt, ...)
{
	if (!err)
		return GC_EINVAL;
	char head[GC_ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(head, sizeof head - 2, fmt, ap);
	va_end(ap);
	strcat(head, ": ");
	size_t hl = strlen(head), ml = strlen(err->msg);
	if (hl + ml >= sizeof err->msg)
		ml = sizeof err->msg - 1 - hl;
	memmove(err->msg + hl, err->msg, ml);
	memcpy(err->msg, head, hl);
	err->msg[hl + ml] = 0;
	return err->code;
}
