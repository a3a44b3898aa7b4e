/* A string -> int32 hash map with keys borrowed from the caller (a pool). */
#ifndef GC_STRMAP_H
#define GC_STRMAP_H

#include <stdint.h>

typedef struct gc_strmap {
	const char **keys;
	int32_t *vals;
	uint32_t cap, n;
} gc_strmap;

/* -1 when absent. */
int32_t gc_strmap_get(const gc_strmap *m, const char *key);
/* 0, or GC_ENOMEM. Replaces an existing value. */
int gc_strmap_put(gc_strmap *m, const char *key, int32_t val);
void gc_strmap_clear(gc_strmap *m);

#endif
