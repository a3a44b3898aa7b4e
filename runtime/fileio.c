#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"

/* What a path that is not a regular file is, for messages. */
static const char *file_kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISDIR(m))
		return "a folder";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int gc_open_regular(const char *path, int *fd_out, uint64_t *size, gc_error *err)
{
	*fd_out = -1;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return gc_error_set(err, GC_EIO, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return gc_error_set(err, GC_EIO, "%s: cannot stat: %s", path, strerror(e));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return gc_error_set(err, GC_EIO, "%s: not a regular file (%s): graphcc reads only "
					"regular files",
				    path, file_kind(st.st_mode));
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	*fd_out = fd;
	*size = (uint64_t)st.st_size;
	return 0;
}

int gc_read_fd_at(int fd, void *dst, size_t n, uint64_t offset, const char *path, gc_error *err)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)dst + got, n - got, (off_t)(offset + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return gc_error_set(err, GC_EIO, "%s: read failed: %s", path,
					    r < 0 ? strerror(errno) : "file shrank while reading");
		got += (size_t)r;
	}
	return 0;
}

int gc_read_file(const char *path, void **buf, size_t *len, gc_error *err)
{
	*buf = NULL;
	*len = 0;
	int fd;
	uint64_t size;
	if (gc_open_regular(path, &fd, &size, err))
		return err->code;
	if (size > gc_limit_bytes() || size > SIZE_MAX - 1) {
		close(fd);
		return gc_error_set(err, GC_ELIMIT,
				    "%s: file is %" PRIu64 " bytes, over the limit of %" PRIu64
				    " (" GC_LIMIT_SETTING ")",
				    path, size, gc_limit_bytes());
	}
	size_t n = (size_t)size;
	char *p = gc_malloc(n + 1);
	if (!p) {
		close(fd);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory reading %zu bytes", path, n);
	}
	int rc = gc_read_fd_at(fd, p, n, 0, path, err);
	close(fd);
	if (rc) {
		gc_free(p);
		return rc;
	}
	p[n] = 0;
	*buf = p;
	*len = n;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

int gc_outfile_open(gc_outfile *f, const char *path, gc_error *err)
{
	f->fd = -1;
	f->path = path;
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dl;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return gc_error_set(err, GC_EINVAL, "%s: not a file name", path);
	size_t len = strlen(path) + 32;
	f->tmp = gc_malloc(len);
	if (!f->tmp)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	for (int attempt = 0; attempt < 32; attempt++) {
		uint64_t rnd;
		if (getrandom(&rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			rnd = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u ^ (uint64_t)getpid() << 32 ^
			      (uint64_t)attempt;
		}
		snprintf(f->tmp, len, "%.*s.%s.%016" PRIx64 ".tmp", (int)dl, path, base, rnd);
		f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	int e = errno;
	gc_free(f->tmp);
	f->tmp = NULL;
	return gc_error_set(err, GC_EIO, "%s: cannot create: %s", path, strerror(e));
}

void gc_outfile_abort(gc_outfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp)
		unlink(f->tmp);
	gc_free(f->tmp);
	f->tmp = NULL;
}

/* Renames the temporary over the final name (not over a folder). */
static int publish(gc_outfile *f, int rc, gc_error *err)
{
	struct stat st;
	if (!rc && !lstat(f->path, &st) && S_ISDIR(st.st_mode))
		rc = gc_error_set(err, GC_EIO,
				  "%s: a folder is in the way; graphcc does not replace it", f->path);
	if (!rc && rename(f->tmp, f->path))
		rc = gc_error_set(err, GC_EIO, "%s: cannot rename into place: %s", f->path,
				  strerror(errno));
	if (rc)
		unlink(f->tmp);
	gc_free(f->tmp);
	f->tmp = NULL;
	return rc;
}

int gc_outfile_commit(gc_outfile *f, gc_error *err)
{
	int rc = 0;
	if (close(f->fd))
		rc = gc_error_set(err, GC_EIO, "%s: write failed: %s", f->path, strerror(errno));
	f->fd = -1;
	return publish(f, rc, err);
}

int gc_outfile_publish(gc_outfile *f, gc_error *err)
{
	if (publish(f, 0, err)) {
		close(f->fd);
		f->fd = -1;
		return err->code;
	}
	return 0;
}

int gc_write_file_atomic(const char *path, const void *head, size_t head_len, const void *body,
			 size_t body_len, gc_error *err)
{
	gc_outfile f;
	if (gc_outfile_open(&f, path, err))
		return err->code;
	if (write_all(f.fd, head, head_len) || write_all(f.fd, body, body_len)) {
		int e = errno;
		gc_outfile_abort(&f);
		return gc_error_set(err, GC_EIO, "%s: write failed: %s", path, strerror(e));
	}
	return gc_outfile_commit(&f, err);
}
