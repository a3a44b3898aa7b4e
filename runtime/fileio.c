#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

int gc_read_file(const char *path, void **buf, size_t *len, gc_error *err)
{
	*buf = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gc_error_set(err, GC_EIO, "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return gc_error_set(err, GC_EIO, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > gc_limit_bytes()) {
		close(fd);
		return gc_error_set(err, GC_ELIMIT,
				    "%s: file is %" PRIu64 " bytes, over the limit of %" PRIu64
				    " (GRAPHCC_MAX_BYTES)",
				    path, (uint64_t)st.st_size, gc_limit_bytes());
	}
	size_t n = (size_t)st.st_size;
	char *p = gc_malloc(n + 1);
	if (!p) {
		close(fd);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory reading %zu bytes", path, n);
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;
			close(fd);
			gc_free(p);
			return gc_error_set(err, GC_EIO, "%s: read failed: %s", path,
					    r < 0 ? strerror(e) : "file shrank while reading");
		}
		got += (size_t)r;
	}
	close(fd);
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

int gc_write_file_atomic(const char *path, const void *head, size_t head_len, const void *body,
			 size_t body_len, gc_error *err)
{
	size_t pl = strlen(path);
	char *tmp = gc_malloc(pl + 32);
	if (!tmp)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;
		gc_free(tmp);
		return gc_error_set(err, GC_EIO, "%s: cannot create: %s", path, strerror(e));
	}
	int bad = write_all(fd, head, head_len) || write_all(fd, body, body_len);
	int e = errno;
	if (close(fd) && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		unlink(tmp);
		gc_free(tmp);
		return gc_error_set(err, GC_EIO, "%s: write failed: %s", path, strerror(e));
	}
	if (rename(tmp, path)) {
		int e = errno;
		unlink(tmp);
		gc_free(tmp);
		return gc_error_set(err, GC_EIO, "%s: cannot rename into place: %s", path,
				    strerror(e));
	}
	gc_free(tmp);
	return 0;
}
