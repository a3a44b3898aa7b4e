/* Kept preparations of nodes prepared at run time (prep-cache.h). */
#include "prep-cache.h"

#include <string.h>

#include "alloc.h"
#include "program-impl.h"

void gc_prep_cache_free(gc_prep_cache *c)
{
	for (int w = 0; c && w < GC_PREP_WAYS; w++) {
		gc_prep_entry *e = &c->e[w];
		if (e->used)
			gc_node_release_state(&e->node);
		gc_free(e->outs);
		gc_dynbuf_free(&e->key);
		memset(e, 0, sizeof *e);
	}
}

static int put(gc_dynbuf *key, size_t *len, const void *v, size_t n, gc_error *err)
{
	if (gc_dynbuf_reserve(key, *len + n, true, "a preparation key", err))
		return err->code;
	memcpy((unsigned char *)key->data + *len, v, n);
	*len += n;
	return 0;
}

int gc_prep_key(const gc_prep_cache *c, const gc_node *n, gc_tensor *const *in,
		gc_dynbuf *key, size_t *len, gc_error *err)
{
	*len = 0;
	for (int j = 0; j < n->n_in; j++) {
		const gc_tensor *t = in[j];
		int32_t head[2] = { t ? (int32_t)t->dtype : -1, t ? t->rank : -1 };
		if (put(key, len, head, sizeof head, err))
			return err->code;
		if (!t)
			continue;
		if (t->rank > 0 && put(key, len, t->dims, (size_t)t->rank * sizeof *t->dims, err))
			return err->code;
		if ((c->value_in >> (j < 63 ? j : 63) & 1) && t->data &&
		    put(key, len, t->data, (size_t)gc_tensor_nbytes(t), err))
			return err->code;
	}
	return 0;
}

gc_prep_entry *gc_prep_find(gc_prep_cache *c, const void *key, size_t len, uint64_t now)
{
	for (int w = 0; w < GC_PREP_WAYS; w++) {
		gc_prep_entry *e = &c->e[w];
		if (e->used && e->key_len == len && !memcmp(e->key.data, key, len)) {
			e->stamp = now;
			return e;
		}
	}
	return NULL;
}

gc_prep_entry *gc_prep_victim(gc_prep_cache *c)
{
	gc_prep_entry *v = &c->e[0];
	for (int w = 0; w < GC_PREP_WAYS; w++) {
		if (!c->e[w].used) {
			v = &c->e[w];
			break;
		}
		if (c->e[w].stamp < v->stamp)
			v = &c->e[w];
	}
	if (v->used)
		gc_node_release_state(&v->node);
	v->used = false;
	return v;
}
