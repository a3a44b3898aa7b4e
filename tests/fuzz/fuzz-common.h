/*
 * Shared by the libFuzzer targets: the readers take paths, so each input is
 * written to a file first (a memfd: no disk traffic, a regular file to the
 * reader, whose folder is /proc/self/fd).
 */
#ifndef GC_FUZZ_COMMON_H
#define GC_FUZZ_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <graphcc/runtime.h>

/* Writes data to a fresh file; -> its fd (close it after), path in buf. */
static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("graphcc-fuzz", 0);
	if (fd < 0) {
		perror("memfd_create");
		abort();
	}
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);
		if (w <= 0) {
			perror("write");
			abort();
		}
		off += (size_t)w;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* Counts the inputs a reader refused (each with a message, or the target
 * aborts): the seed replay (tests/fuzz/replay.c, tests/suites/fuzz-seeds)
 * fails a seed its reader refuses. */
int fuzz_refusals;

static inline void fuzz_refused(const gc_error *err)
{
	if (!err->msg[0])
		abort(); /* a refusal must come with a message */
	fuzz_refusals++;
	if (getenv("GRAPHCC_FUZZ_VERBOSE"))
		fprintf(stderr, "refused: %s\n", err->msg);
}

/* Inputs are small; keep what a reader may allocate small too, so that a
 * legitimate "too big" refusal is fast rather than an out-of-memory kill. */
static inline void fuzz_limits(void)
{
	gc_runtime_init(&(gc_init_options){ .max_bytes = 67108864, .from_environment = 1 }, NULL);
}

#endif
