#include "kutil.h"

#include <inttypes.h>

#include "../alloc.h"
#include "../fileio.h"

void *gc_kstate(gc_kctx *k, gc_node *n, size_t size)
{
	if (size > gc_limit_bytes()) {
		gc_kerr(k, GC_ELIMIT,
			"the node's state needs %zu bytes, over the limit of %" PRIu64
			" (raise " GC_LIMIT_SETTING " to allow more)",
			size, gc_limit_bytes());
		return NULL;
	}
	void *s = gc_calloc(1, size);
	if (!s) {
		gc_kerr(k, GC_ENOMEM, "out of memory for the node's state (%zu bytes)", size);
		return NULL;
	}
	n->state = s;
	n->state_free = gc_free;
	return s;
}

int gc_kout_fits(gc_kctx *k, int j, gc_dtype dt, int32_t rank, const int64_t *dims)
{
	gc_tensor t = { .dtype = dt, .rank = rank };
	memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
	int64_t nb = gc_tensor_nbytes(&t);
	if (nb >= 0 && (uint64_t)nb <= gc_limit_bytes())
		return 0;
	char buf[200];
	gc_shape_str(dims, rank, buf, sizeof buf);
	if (nb < 0)
		return gc_kerr(k, GC_ELIMIT, "output %d of shape %s (%s) has a size that overflows 64 "
					     "bits",
			       j, buf, gc_dtype_name(dt));
	return gc_kerr(k, GC_ELIMIT,
		       "output %d of shape %s (%s) is over the size limit of %" PRIu64
		       " bytes (" GC_LIMIT_SETTING ")",
		       j, buf, gc_dtype_name(dt), gc_limit_bytes());
}

int gc_broadcast_shapes(gc_kctx *k, int n, const gc_tensor *const *ts, int32_t *rank,
			int64_t *dims)
{
	int32_t r = 0;
	for (int i = 0; i < n; i++)
		if (ts[i] && ts[i]->rank > r)
			r = ts[i]->rank;
	for (int d = 0; d < r; d++)
		dims[d] = 1;
	for (int i = 0; i < n; i++) {
		const gc_tensor *t = ts[i];
		if (!t)
			continue;
		for (int d = 0; d < t->rank; d++) {
			int od = r - t->rank + d;
			int64_t a = dims[od], b = t->dims[d];
			if (a == b || b == 1)
				continue;
			if (a == 1) {
				dims[od] = b;
				continue;
			}
			char s1[128], s2[128];
			return gc_kerr(k, GC_EINVAL,
				       "input %d of shape %s does not broadcast with shape %s "
				       "(dim %" PRId64 " vs %" PRId64 ")",
				       i, gc_shape_str(t->dims, t->rank, s1, sizeof s1),
				       gc_shape_str(dims, r, s2, sizeof s2), b, a);
		}
	}
	*rank = r;
	return 0;
}

void gc_broadcast_strides(const gc_tensor *t, int32_t orank, const int64_t *odims,
			  int64_t *bstrides)
{
	int64_t s = 1;
	for (int d = orank - 1; d >= 0; d--) {
		int id = d - (orank - t->rank);
		if (id < 0) {
			bstrides[d] = 0;
			continue;
		}
		bstrides[d] = (t->dims[id] == 1 && odims[d] != 1) ? 0 : s;
		s *= t->dims[id];
	}
}
