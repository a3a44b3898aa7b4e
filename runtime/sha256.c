#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

int gc_sha256_file(const char *path, uint8_t out[32], gc_error *err)
{
	/* A regular file only, and only the bytes fstat counted: /dev/zero or a
	 * FIFO would be hashed forever. */
	int fd;
	uint64_t size;
	if (gc_open_regular(path, &fd, &size, err))
		return err->code;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		close(fd);
		return gc_error_set(err, GC_ENOMEM, "library %s: cannot start SHA-256", path);
	}
	unsigned char buf[1 << 16];
	int rc = 0;
	for (uint64_t at = 0; at < size && !rc;) {
		size_t n = size - at < sizeof buf ? (size_t)(size - at) : sizeof buf;
		if (!(rc = gc_read_fd_at(fd, buf, n, at, path, err))) {
			EVP_DigestUpdate(ctx, buf, n);
			at += n;
		}
	}
	unsigned int len = 0;
	if (!rc && (!EVP_DigestFinal_ex(ctx, out, &len) || len != 32))
		rc = gc_error_set(err, GC_EIO, "library %s: SHA-256 failed", path);
	EVP_MD_CTX_free(ctx);
	close(fd);
	return rc;
}

void gc_sha256_hex(const uint8_t sha[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[sha[i] >> 4];
		hex[2 * i + 1] = digits[sha[i] & 15];
	}
	hex[64] = 0;
}
