/* Reading whole files with size limits, and writing files atomically. */
#ifndef GC_FILEIO_H
#define GC_FILEIO_H

#include <graphcc/runtime.h>

#include <stddef.h>
#include <stdint.h>

/* The largest file or tensor graphcc reads (GRAPHCC_MAX_BYTES, default 16 GiB). */
uint64_t gc_limit_bytes(void);

/* Opens path for reading: anything but a regular file (a FIFO, a device
 * such as /dev/zero, a folder, a socket) is refused after open and before
 * any read, and opening never waits (a FIFO without a writer). -> the fd
 * (close it) and the size fstat reported, which bounds every read after. */
int gc_open_regular(const char *path, int *fd, uint64_t *size, gc_error *err);

/* Reads exactly n bytes at offset of fd (a file opened by gc_open_regular;
 * path for messages): a file that ends early is an error. */
int gc_read_fd_at(int fd, void *dst, size_t n, uint64_t offset, const char *path, gc_error *err);

/* Reads a whole file into a malloc'd buffer (NUL-terminated past len).
 * Messages name the path. */
int gc_read_file(const char *path, void **buf, size_t *len, gc_error *err);

/* Writes len bytes to path through a temporary file renamed into place, so
 * a failed write never leaves a half-written file. */
int gc_write_file_atomic(const char *path, const void *head, size_t head_len, const void *body,
			 size_t body_len, gc_error *err);

#endif
