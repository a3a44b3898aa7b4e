/* Reading whole files with size limits, and writing files atomically. */
#ifndef GC_FILEIO_H
#define GC_FILEIO_H

#include <graphcc/runtime.h>

#include <stddef.h>
#include <stdint.h>

/* The largest file or tensor graphcc reads (gc_init_options.max_bytes, default 16 GiB). */
uint64_t gc_limit_bytes(void);
/* How messages name that limit: a host sets it through the API, the graphcc
 * command's user through the environment (issue 18: messages name the API
 * field, not only the CLI's setting). */
#define GC_LIMIT_SETTING "gc_init_options.max_bytes; graphcc: GRAPHCC_MAX_BYTES"
/* gc_init_options.reference_kernels: the packed AVX-512 kernels are off. */
int gc_reference_kernels(void);

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

/*
 * Every file graphcc writes (outputs, dumps, profiles, .gcb programs) is
 * created through this: a new file under an unpredictable name in the
 * target's folder (".<name>.<random>.tmp", O_CREAT | O_EXCL | O_NOFOLLOW:
 * never an existing file, never through a symlink), renamed over the final
 * name when complete (rename replaces a symlink there, it does not follow
 * it). A folder at the final name is refused, never replaced.
 */
typedef struct gc_outfile {
	int fd;
	char *tmp;	  /* the temporary name (malloc'd) */
	const char *path; /* the final name (borrowed) */
} gc_outfile;

/* Creates the temporary file for path; f->fd is open for writing. */
int gc_outfile_open(gc_outfile *f, const char *path, gc_error *err);
/* Closes it and renames it over path; on failure the temporary is removed. */
int gc_outfile_commit(gc_outfile *f, gc_error *err);
/* Renames it over path now and leaves f->fd open (a log written as it goes,
 * flushed per line): the caller closes f->fd. */
int gc_outfile_publish(gc_outfile *f, gc_error *err);
/* Closes and removes the temporary (nothing at path changes). */
void gc_outfile_abort(gc_outfile *f);

/* Writes head and body to path through gc_outfile, so a failed write never
 * leaves a half-written file. */
int gc_write_file_atomic(const char *path, const void *head, size_t head_len, const void *body,
			 size_t body_len, gc_error *err);

#endif
