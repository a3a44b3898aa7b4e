/*
 * Where packed weights live (runtime/kernel.c packed_alloc): a MatMul's
 * packed weights of 2 MiB and more start on a 2 MiB boundary and are
 * advised onto transparent huge pages; smaller ones are not.
 */
#include <graphcc/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

/* A MatMul's packed weights of 2 MiB and more (an LLM's vocabulary head)
 * start on a 2 MiB boundary and are advised onto huge pages where the
 * kernel has them; smaller ones are not. */
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
			if (thp)
				CHECK_INT(advised_huge(pk), 0);
		}
		if (thp)
			fclose(thp);
		harness_free(&h);
		free(A);
		free(B);
	}
}

TEST_MAIN(TEST(test_fast_packed_huge))
