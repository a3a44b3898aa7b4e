/* SHA-256 of files (OpenSSL's libcrypto), to tie programs to the exact
 * kernel libraries they were compiled with. */
#ifndef GC_SHA256_H
#define GC_SHA256_H

#include <graphcc/runtime.h>

#include <stdint.h>

int gc_sha256_file(const char *path, uint8_t out[32], gc_error *err);
/* 64 hex digits and a NUL into hex. */
void gc_sha256_hex(const uint8_t sha[32], char hex[65]);

#endif
