/*
 * --guard: custom kernels write into shadow outputs that sit between two
 * canary zones of GUARD_BYTES each (the padding up to the next 64 bytes
 * counts as canary too, so one byte too many is seen), and every input is
 * copied aside before the call and compared after it. A kernel that wrote
 * past an output's end, before its start, or into an input is reported with
 * the node, operation, flavour, library, symbol, tensor and byte offsets.
 * Copies (not checksums) give the exact offsets; the shadows and copies are
 * allocated once per run, sized for the largest custom node. Only after a
 * clean check are the shadows copied into the real outputs.
 *
 * A kernel with scratch gets it filled with 0xFF bytes (NaN as float32 and
 * float64), and is then called a second time on other poison bytes: outputs
 * that differ mean it read scratch it had not written (gc_guard_again).
 *
 * Not caught: a write beyond the zones (more than GUARD_BYTES away) that
 * lands in other memory, and reads out of bounds.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "custom.h"
#include "debug-impl.h"
#include "kernels/value-impl.h"

#define GUARD_BYTES 4096

struct gc_guard {
	unsigned char *shadow, *snap;
	gc_tensor *views;
	gc_tensor **ptrs;
	unsigned char pattern[GUARD_BYTES + 64];
};

static size_t round64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

static size_t nbytes(const gc_tensor *t)
{
	int64_t nb = gc_tensor_nbytes(t);
	return nb > 0 ? (size_t)nb : 0;
}

int gc_guard_new(const gc_session *s, gc_guard **out, gc_error *err)
{
	*out = NULL;
	const gc_program *p = s->p;
	size_t shadow = 64, snap = 64;
	int32_t max_out = 1;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		if (!n->custom)
			continue;
		gc_tensor **io = gc_session_node_io(s, i);
		size_t o = 0, in = 0;
		for (int j = 0; j < n->n_out; j++)
			if (io[n->n_in + j])
				o += 2 * (size_t)GUARD_BYTES + round64(nbytes(io[n->n_in + j]));
		for (int j = 0; j < n->n_in; j++)
			if (io[j])
				in += round64(nbytes(io[j]));
		shadow = o > shadow ? o : shadow;
		snap = in > snap ? in : snap;
		max_out = n->n_out > max_out ? n->n_out : max_out;
	}
	gc_guard *g = gc_calloc(1, sizeof *g);
	if (!g)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	g->shadow = gc_aligned_alloc(64, shadow, 0);
	g->snap = gc_aligned_alloc(64, snap, 0);
	g->views = gc_calloc((size_t)max_out, sizeof *g->views);
	g->ptrs = gc_calloc((size_t)max_out, sizeof *g->ptrs);
	if (!g->shadow || !g->snap || !g->views || !g->ptrs) {
		gc_guard_free(g);
		return gc_error_set(
		    err, GC_ENOMEM,
		    "--guard: out of memory for shadow outputs (%zu bytes) and input "
		    "copies (%zu bytes)",
		    shadow, snap);
	}
	/* Canary bytes: not a value a kernel is likely to write (not 0, not a
	 * small float), different at each offset. */
	uint32_t x = 0x9e3779b9u;
	for (size_t k = 0; k < sizeof g->pattern; k++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		g->pattern[k] = (unsigned char)(x >> 24) | 0x81;
	}
	*out = g;
	return 0;
}

void gc_guard_free(gc_guard *g)
{
	if (!g)
		return;
	gc_free(g->shadow);
	gc_free(g->snap);
	gc_free(g->views);
	gc_free(g->ptrs);
	gc_free(g);
}

gc_tensor *const *gc_guard_begin(gc_guard *g, const gc_session *s, int32_t i)
{
	const gc_node *n = &s->p->nodes[i];
	gc_tensor **io = gc_session_node_io(s, i);
	gc_tensor *const *in = io, *const *out = io + n->n_in;
	size_t at = 0;
	for (int j = 0; j < n->n_out; j++) {
		g->ptrs[j] = NULL;
		if (!out[j])
			continue;
		size_t nb = nbytes(out[j]), body = round64(nb);
		unsigned char *r = g->shadow + at;
		memcpy(r, g->pattern, GUARD_BYTES);
		if (nb) /* the kernel sees what it would have seen */
			memcpy(r + GUARD_BYTES, out[j]->data, nb);
		memcpy(r + GUARD_BYTES + nb, g->pattern, body - nb + GUARD_BYTES);
		g->views[j] = *out[j];
		g->views[j].data = r + GUARD_BYTES;
		g->ptrs[j] = &g->views[j];
		at += 2 * (size_t)GUARD_BYTES + body;
	}
	at = 0;
	for (int j = 0; j < n->n_in; j++) {
		if (!in[j] || !in[j]->data)
			continue;
		size_t nb = nbytes(in[j]);
		memcpy(g->snap + at, in[j]->data, nb);
		at += round64(nb);
	}
	return g->ptrs;
}

/* The first and last differing byte of a and b; false when equal. */
static bool diff(const unsigned char *a, const unsigned char *b, size_t len, size_t *first,
		 size_t *last, size_t *count)
{
	if (!len || !memcmp(a, b, len))
		return false;
	size_t f = 0, l = 0, c = 0;
	bool any = false;
	for (size_t k = 0; k < len; k++) {
		if (a[k] == b[k])
			continue;
		if (!any)
			f = k;
		any = true;
		l = k;
		c++;
	}
	*first = f;
	*last = l;
	*count = c;
	return true;
}

static int report(const gc_session *s, int32_t i, gc_error *err, const char *what, bool is_input,
		  int j, int64_t first, int64_t last, size_t count, const char *extra)
{
	const gc_node *n = &s->p->nodes[i];
	int32_t idx = is_input ? n->in[j] : n->out[j];
	const gc_tensor *t = &s->tensors[idx];
	char node[1400], shape[160];
	return gc_error_set(err, GC_ECRASH,
			    "--guard: %s: the kernel wrote %s %s '%s' (%s %d, %s %s, %zu bytes): "
			    "%zu byte%s changed at byte offset%s %" PRId64 "..%" PRId64
			    " (counted from the %s's first byte)%s",
			    gc_debug_node_str(n, node, sizeof node), what,
			    is_input ? "its input" : "output", s->p->tensors[idx].name,
			    is_input ? "input" : "output", j, gc_dtype_name(t->dtype),
			    gc_shape_str(t->dims, t->rank, shape, sizeof shape), nbytes(t), count,
			    count == 1 ? "" : "s", first == last ? "" : "s", first, last,
			    is_input ? "input" : "output", extra);
}

/* The canary zones around every shadow output of node i. */
static int check_zones(gc_guard *g, const gc_session *s, int32_t i, gc_error *err)
{
	const gc_node *n = &s->p->nodes[i];
	gc_tensor *const *out = gc_session_node_io(s, i) + n->n_in;
	size_t first, last, count, at = 0;
	const char *edge = "; the zone ends there, so the write may reach further";
	for (int j = 0; j < n->n_out; j++) {
		if (!out[j])
			continue;
		size_t nb = nbytes(out[j]), body = round64(nb);
		unsigned char *r = g->shadow + at;
		if (diff(r, g->pattern, GUARD_BYTES, &first, &last, &count))
			return report(s, i, err, "before the start of", false, j,
				      (int64_t)first - GUARD_BYTES, (int64_t)last - GUARD_BYTES,
				      count, first == 0 ? edge : "");
		size_t tail = body - nb + GUARD_BYTES;
		if (diff(r + GUARD_BYTES + nb, g->pattern, tail, &first, &last, &count))
			return report(s, i, err, "past the end of", false, j, (int64_t)(nb + first),
				      (int64_t)(nb + last), count, last + 1 == tail ? edge : "");
		at += 2 * (size_t)GUARD_BYTES + body;
	}
	return 0;
}

int gc_guard_end(gc_guard *g, const gc_session *s, int32_t i, gc_error *err)
{
	const gc_node *n = &s->p->nodes[i];
	gc_tensor **io = gc_session_node_io(s, i);
	gc_tensor *const *in = io, *const *out = io + n->n_in;
	size_t first, last, count, at = 0;
	int rc = check_zones(g, s, i, err);
	if (rc)
		return rc;
	for (int j = 0; j < n->n_in; j++) {
		if (!in[j] || !in[j]->data)
			continue;
		size_t nb = nbytes(in[j]);
		if (diff(g->snap + at, in[j]->data, nb, &first, &last, &count)) {
			char where[200], el[180];
			size_t es = gc_dtype_size(in[j]->dtype);
			snprintf(where, sizeof where, "; first changed element: flat index %zu %s",
				 es ? first / es : first,
				 gc_debug_index_str(in[j], es ? (int64_t)(first / es) : 0, el,
						    sizeof el));
			return report(s, i, err, "into", true, j, (int64_t)first, (int64_t)last,
				      count, where);
		}
		at += round64(nb);
	}
	at = 0;
	for (int j = 0; j < n->n_out; j++) {
		if (!out[j])
			continue;
		size_t nb = nbytes(out[j]);
		if (nb)
			memcpy(out[j]->data, g->shadow + at + GUARD_BYTES, nb);
		at += 2 * (size_t)GUARD_BYTES + round64(nb);
	}
	return 0;
}

bool gc_guard_may_rerun(const gc_session *s, int32_t i)
{
	const gc_node *n = &s->p->nodes[i];
	if (n->reprepare) /* its preparation lives in the session's cache */
		return false;
	gc_tensor **io = gc_session_node_io(s, i);
	for (int j = 0; j < n->n_out; j++) /* strings: pointers differ per call */
		if (io[n->n_in + j] && (io[n->n_in + j]->dtype == GC_DTYPE_STRING ||
					gc_dtype_is_value(io[n->n_in + j]->dtype)))
			return false;
	for (int j = 0; j < n->n_out; j++)
		for (int k = 0; io[n->n_in + j] && k < n->n_in; k++)
			if (io[k] && io[k]->data && io[k]->data == io[n->n_in + j]->data)
				return false;
	return true;
}

int gc_guard_again(gc_guard *g, const gc_session *s, int32_t i, int poison_a, int poison_b,
		   gc_error *err)
{
	const gc_node *n = &s->p->nodes[i];
	gc_tensor *const *out = gc_session_node_io(s, i) + n->n_in;
	int rc = check_zones(g, s, i, err);
	if (rc)
		return rc;
	size_t at = 0;
	for (int j = 0; j < n->n_out; j++) {
		if (!out[j])
			continue;
		size_t nb = nbytes(out[j]), es = gc_dtype_size(out[j]->dtype), k = 0;
		const unsigned char *a = out[j]->data, *b = g->shadow + at + GUARD_BYTES;
		at += 2 * (size_t)GUARD_BYTES + round64(nb);
		while (k < nb && a[k] == b[k])
			k++;
		if (k == nb)
			continue;
		int64_t el = (int64_t)(es ? k / es : k);
		const gc_custom *c = n->custom;
		char node[1400], idx[180];
		gc_tensor tb = *out[j];
		tb.data = (void *)b;
		return gc_error_set(
		    err, GC_ECRASH,
		    "--guard: %s: the kernel reads scratch it did not write: called twice on the "
		    "same inputs, its %" PRIu64 " bytes of scratch starting as 0x%02X bytes (NaN) "
		    "and then as 0x%02X bytes, it gave output '%s' (output %d) element %" PRId64
		    " %s = %.9g, then %.9g (scratch starts uninitialised: write it before reading "
		    "it; or the kernel keeps state from call to call)",
		    gc_debug_node_str(n, node, sizeof node), c->kernel_scratch,
		    poison_a & 0xFF, poison_b & 0xFF, s->p->tensors[n->out[j]].name, j, el,
		    gc_debug_index_str(out[j], el, idx, sizeof idx), gc_kv_load(out[j], el),
		    gc_kv_load(&tb, el));
	}
	return 0;
}
