/*
 * Where packed weights live (runtime/alloc.c gc_packed_alloc): a MatMul's
 * packed weights of 2 MiB and more start on a 2 MiB boundary, smaller ones
 * share slabs, and both are advised onto transparent huge pages; blocks of
 * the slabs do not overlap, from any number of threads. And what the row
 * GEMM reads of plain V: nothing past its columns. And a program's big
 * constants (gc_pool_big): on huge pages, shared between pools.
 */
#include <graphcc/runtime.h>

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "check.h"
#include "pool.h"
#include "harness.h"
#include "kernels/nn.h"
#include "kernels/sgemm-pack.h"

/* Whether the mapping holding p was advised MADV_HUGEPAGE ("hg" in its
 * VmFlags); -1 when /proc/self/smaps cannot say. */
static int advised_huge(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f)
		return -1;
	char line[512];
	int in = 0, found = -1;
	uintptr_t a = (uintptr_t)p;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = a >= lo && a < hi;
		else if (in && !strncmp(line, "VmFlags:", 8)) {
			found = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return found;
}

/* whether small blocks share slabs (under ASan each is its own allocation,
 * for the bounds checks) */
#define SLABS (!GC_UNDER_ASAN)

/* A MatMul's packed weights of 2 MiB and more (an LLM's vocabulary head)
 * start on a 2 MiB boundary and are advised onto huge pages where the
 * kernel has them; smaller ones too, in a slab. */
static void test_fast_packed_huge(void)
{
	if (!gc_pk_usable())
		return;
	for (int big = 0; big < 2; big++) {
		int64_t m = 16, k = big ? 1024 : 64, n = 600;
		float *A = calloc((size_t)(m * k), sizeof(float)), *B = calloc((size_t)(k * n), sizeof(float));
		gc_tensor tA = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){m, k}, A);
		gc_tensor tB = harness_tensor(GC_DTYPE_FLOAT, 2, (int64_t[]){k, n}, B);
		gc_tensor *ins[] = {&tA, &tB};
		harness_run h;
		gc_runtime_init(NULL, NULL);
		CHECK_INT(harness_op(&h, gc_prepare_MatMul, "MatMul", 13, 2, ins, 1, 0, NULL), 0);
		CHECK_INT(h.node.n_packed, 1);
		const void *pk = h.node.packed[0].data;
		FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
		if (big) {
			CHECK(h.node.packed[0].nbytes >= (2u << 20));
			CHECK((uintptr_t)pk % (2u << 20) == 0);
			if (thp)
				CHECK_INT(advised_huge(pk), 1);
		} else {
			CHECK(h.node.packed[0].nbytes < (2u << 20));
			CHECK((uintptr_t)pk % 64 == 0);
			if (thp)
				CHECK_INT(advised_huge(pk), SLABS);
		}
		if (thp)
			fclose(thp);
		harness_free(&h);
		free(A);
		free(B);
	}
}

/* Blocks of sizes 1 byte to 3 MiB from gc_packed_alloc, each filled with
 * its own byte then checked: none overlaps another (the slabs' bump
 * pointer, their tails), each is 64-byte aligned; freed in another order
 * than allocated (a slab is returned with its last block), then again.
 * ROUNDS of it on two threads at once (the slabs' lock; under
 * ThreadSanitizer in CI). */
#define BLOCKS 600
#define ROUNDS 3

static void *slab_worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	int ok = 1;
	for (int r = 0; r < ROUNDS; r++) {
		static __thread unsigned char *b[BLOCKS];
		static __thread size_t n[BLOCKS];
		for (int i = 0; i < BLOCKS; i++) {
			seed = seed * 1103515245u + 12345u;
			n[i] = i % 97 == 0 ? (size_t)(3u << 20) - i : 1 + (seed >> 8) % (96u << 10);
			b[i] = gc_packed_alloc(n[i]);
			if (!b[i])
				return NULL;
			ok &= (uintptr_t)b[i] % 64 == 0;
			memset(b[i], (i * 7 + r) & 0xff, n[i]);
		}
		for (int i = 0; i < BLOCKS; i++)
			for (size_t j = 0; j < n[i]; j += 61)
				ok &= b[i][j] == ((i * 7 + r) & 0xff) && b[i][n[i] - 1] == b[i][0];
		for (int i = 0; i < BLOCKS; i++) /* odd ones first, then even */
			if (i % 2)
				gc_packed_free(b[i]);
		for (int i = 0; i < BLOCKS; i += 2)
			gc_packed_free(b[i]);
	}
	return ok ? arg : NULL;
}

static void test_packed_slabs(void)
{
	gc_packed_free(NULL);
	CHECK(gc_packed_alloc(SIZE_MAX - 8) == NULL); /* not a small block by wrapping */
	CHECK(slab_worker((void *)(uintptr_t)1) == (void *)(uintptr_t)1);
	pthread_t t[2];
	for (uintptr_t i = 0; i < 2; i++)
		CHECK_INT(pthread_create(&t[i], NULL, slab_worker, (void *)(i + 2)), 0);
	for (uintptr_t i = 0; i < 2; i++) {
		void *r;
		CHECK_INT(pthread_join(t[i], &r), 0);
		CHECK(r == (void *)(i + 2));
	}
}

/* The row GEMM on plain V (a 1x1 convolution's input) that ends right
 * before a page the process may not read: whole panels read V's rows with
 * plain loads (sgemm-pack.c row_load), the last panel's tile masks its
 * loads to the columns it has; one that read past them would fault here.
 * Per shape {m, n, k}: a last panel of 1 column, of 2 whole vectors, whole
 * panels only, one part-vector. Against a float64 product. */
static void test_fast_row_gemm_edge(void)
{
	if (!gc_pk_usable())
		return;
	static const int64_t shapes[][3] = {{9, 49, 3}, {17, 80, 5}, {8, 96, 7}, {3, 20, 2}};
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
		int64_t m = shapes[t][0], n = shapes[t][1], k = shapes[t][2];
		size_t bytes = (size_t)(k * n) * sizeof(float), span = (bytes + pg - 1) / pg * pg;
		char *base = mmap(NULL, span + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				  -1, 0);
		CHECK(base != MAP_FAILED);
		if (base == MAP_FAILED)
			return;
		CHECK_INT(mprotect(base + span, pg, PROT_NONE), 0);
		float *v = (float *)(base + span - bytes);
		float *s = malloc((size_t)(m * k) * sizeof(float));
		float *sp = malloc((size_t)gc_pk_s_floats(m, k) * sizeof(float));
		float *y = malloc((size_t)(m * n) * sizeof(float));
		for (int64_t i = 0; i < k * n; i++)
			v[i] = (float)((i * 37) % 23 - 11) / 8.0f;
		for (int64_t i = 0; i < m * k; i++)
			s[i] = (float)((i * 13) % 17 - 8) / 4.0f;
		gc_pk_pack_s(s, k, 1, m, k, sp);
		gc_nn_act none = {.kind = GC_NN_ACT_NONE};
		gc_pk_gemm g = {.m = m, .n = n, .k = k, .s = sp, .v = v, .ldv = n, .c = y, .ldc = n};
		gc_pk_epi_init(&g.epi, &none);
		gc_pk_gemm_run(&g, 0, (n + GC_PK_NR - 1) / GC_PK_NR);
		int ok = 1;
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++) {
				double want = 0, mag = 0;
				for (int64_t p = 0; p < k; p++) {
					want += (double)s[i * k + p] * v[p * n + j];
					mag += fabs((double)s[i * k + p] * v[p * n + j]);
				}
				ok &= fabs(y[i * n + j] - want) <= 1e-6 * mag + 1e-30;
			}
		CHECK(ok);
		munmap(base, span + pg);
		free(s);
		free(sp);
		free(y);
	}
}

/* A program's big constants (gc_pool_big, runtime/pool.c): on a 2 MiB
 * boundary, their whole 2 MiB pages advised onto huge pages, the last
 * partial one only where rounding up adds an eighth at most (gc_huge_alloc_
 * fit), or under 2 MiB in a packed weights' slab (huge pages too); shared by a second pool, they outlive the first (a use after free
 * here is AddressSanitizer's to see in the SAN build). */
static void test_pool_big_blocks(void)
{
	FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	const size_t mib = (size_t)1 << 20;
	/* size, whether its last partial 2 MiB is advised too */
	const struct { size_t size; int tail; } cases[] = {
		{2 * mib + mib / 10, 0}, /* rounding up would add 90 % */
		{8192000, 1},		 /* vgg11's and inception's classifiers: 2.4 % */
		{5 * mib, 0},		 /* 1 MiB more of 5: no */
		{9 * mib, 1},		 /* 1 MiB more of 9: 11 %, yes */
		{17 * mib, 1},		 /* 1 MiB of 17: under an eighth */
		{2048000, 1},		 /* resnet18's classifier: in a slab */
		{mib + 64, 1},		 /* in a slab */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		size_t n = cases[c].size;
		gc_pool *a = gc_pool_new(), *b = gc_pool_new();
		unsigned char *p = gc_pool_big(a, n);
		CHECK(p != NULL);
		CHECK((uintptr_t)p % (n < 2 * mib ? 64 : 2 * mib) == 0);
		for (size_t i = 0; i < n; i++)
			p[i] = (unsigned char)(i * 7);
		if (thp && n < 2 * mib) { /* a slab's: every byte on huge pages */
			CHECK_INT(advised_huge(p), SLABS);
			CHECK_INT(advised_huge(p + n - 1), SLABS);
		} else if (thp) {
			CHECK_INT(advised_huge(p), 1);
			if (advised_huge(p + (n & ~(2 * mib - 1))) != cases[c].tail)
				fprintf(stderr, "size %zu: ", n);
			CHECK_INT(advised_huge(p + (n & ~(2 * mib - 1))), cases[c].tail);
		}
		CHECK(gc_pool_share_mapping(a, b, p + 64, n - 64));
		CHECK(!gc_pool_share_mapping(a, b, p + 64, n)); /* not wholly inside */
		gc_pool_free(a);
		int ok = 1;
		for (size_t i = 0; i < n; i++)
			ok &= p[i] == (unsigned char)(i * 7);
		CHECK(ok);
		gc_pool_free(b);
	}
	CHECK(gc_pool_big(NULL, 0) == NULL);
	if (thp)
		fclose(thp);
}

TEST_MAIN(TEST(test_fast_packed_huge), TEST(test_packed_slabs), TEST(test_fast_row_gemm_edge),
	  TEST(test_pool_big_blocks))
