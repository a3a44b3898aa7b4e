/* Reading whole files with size limits, and writing files atomically. */
#ifndef GC_FILEIO_H
#define GC_FILEIO_H

#include <graphcc/runtime.h>

#include <stddef.h>
#include <stdint.h>

/* The largest file or tensor graphcc reads (GRAPHCC_MAX_BYTES, default 16 GiB). */
uint64_t gc_limit_bytes(void);
/* gc_init_options.reference_kernels: the packed AVX-512 kernels are off. */
int gc_reference_kernels(void);

/* Reads a whole file into a malloc'd buffer (NUL-terminated past len).
 * Messages name the path. */
int gc_read_file(const char *path, void **buf, size_t *len, gc_error *err);

/* Writes len bytes to path through a temporary file renamed into place, so
 * a failed write never leaves a half-written file. */
int gc_write_file_atomic(const char *path, const void *head, size_t head_len, const void *body,
			 size_t body_len, gc_error *err);

#endif
