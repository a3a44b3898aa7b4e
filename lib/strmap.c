#include "strmap.h"

#include <graphcc/runtime.h>
#include <string.h>

#include "../runtime/build.h"

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int32_t gc_strmap_get(const gc_strmap *m, const char *key)
{
	if (!m->cap)
		return -1;
	for (uint32_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (!m->keys[i])
			return -1;
		if (!strcmp(m->keys[i], key))
			return m->vals[i];
	}
}

static int grow(gc_strmap *m)
{
	uint32_t cap = m->cap ? m->cap * 2 : 64;
	const char **keys = gc_calloc(cap, sizeof *keys);
	int32_t *vals = gc_calloc(cap, sizeof *vals);
	if (!keys || !vals) {
		gc_free(keys);
		gc_free(vals);
		return GC_ENOMEM;
	}
	for (uint32_t j = 0; j < m->cap; j++) {
		if (!m->keys[j])
			continue;
		uint32_t i = hash(m->keys[j]) & (cap - 1);
		while (keys[i])
			i = (i + 1) & (cap - 1);
		keys[i] = m->keys[j];
		vals[i] = m->vals[j];
	}
	gc_free(m->keys);
	gc_free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int gc_strmap_put(gc_strmap *m, const char *key, int32_t val)
{
	if ((m->n + 1) * 2 > m->cap && grow(m))
		return GC_ENOMEM;
	uint32_t i = hash(key) & (m->cap - 1);
	for (; m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		if (!strcmp(m->keys[i], key)) {
			m->vals[i] = val;
			return 0;
		}
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void gc_strmap_clear(gc_strmap *m)
{
	gc_free(m->keys);
	gc_free(m->vals);
	memset(m, 0, sizeof *m);
}
