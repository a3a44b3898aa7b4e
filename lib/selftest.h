/* `graphcc test-package`: runs the self-tests of a package's manifest. */
#ifndef GC_SELFTEST_H
#define GC_SELFTEST_H

#include <graphcc/graphcc.h>

#include <stdio.h>

typedef struct gc_selftest_counts {
	int passed, failed;
} gc_selftest_counts;

/*
 * Runs the `tests:` of every operation of the manifest (only the one named
 * `only_op`, by name or type, when non-NULL) for every implementation of
 * every backend this build has, plus the checks nobody has to ask for
 * (verify accepts the case, inferred outputs match what the kernel fills,
 * guard zones, determinism, flavours agree, two threads). One line per check
 * on out. Returns 0 when the package loaded (look at counts), else the
 * error (err says why).
 */
int gc_selftest_package(const char *manifest, const char *only_op, FILE *out,
			gc_selftest_counts *counts, gc_error *err);

#endif
