/*
 * --check-tensors (and --guard, and --dump-dir): every tensor is
 * checksummed when it is produced (graph inputs when the run starts, a
 * node's outputs after it ran), and after each node every tensor that is
 * still to be read -- produced earlier, with a consumer yet to run or a
 * graph output -- is checked against its sum. A tensor that changed names
 * the node that just ran: it wrote where it must not (an overrun out of its
 * own output, a write into an input or a stale pointer), whatever tensor
 * it landed in. Memory that the node's own outputs occupy is skipped (an
 * in-place output takes its input's bytes by design).
 *
 * The dumper asks before each node whether its inputs are still what was
 * dumped (gc_tcheck_changed), to save them as that node saw them.
 */
#include <inttypes.h>
#include <string.h>

#include "alloc.h"
#include "debug-impl.h"

struct gc_tcheck {
	uint64_t *sum;	   /* per tensor, when produced */
	int32_t *producer; /* node index; -1 graph input; -2 not produced (yet) */
	int32_t *last;	   /* last node reading it; n_nodes for a graph output */
};

static bool tracked(const gc_tensor *t)
{
	return t->data && t->dtype != GC_DTYPE_STRING && !gc_dtype_is_value(t->dtype) &&
	       gc_dtype_size(t->dtype) > 0 && t->rank >= 0 &&
	       gc_tensor_nbytes(t) > 0;
}

/* FNV-1a over 64-bit words, then the tail bytes. */
static uint64_t checksum(const gc_tensor *t)
{
	size_t n = (size_t)gc_tensor_nbytes(t), k = 0;
	const unsigned char *b = t->data;
	uint64_t h = 0xcbf29ce484222325u;
	for (; k + 8 <= n; k += 8) {
		uint64_t w;
		memcpy(&w, b + k, 8);
		h = (h ^ w) * 0x100000001b3u;
	}
	for (; k < n; k++)
		h = (h ^ b[k]) * 0x100000001b3u;
	return h ^ n;
}

int gc_tcheck_new(const gc_session *s, gc_tcheck **out, gc_error *err)
{
	const gc_program *p = s->p;
	*out = NULL;
	gc_tcheck *c = gc_calloc(1, sizeof *c);
	if (!c)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	size_t nt = (size_t)p->n_tensors + 1;
	c->sum = gc_calloc(nt, sizeof *c->sum);
	c->producer = gc_malloc(nt * sizeof *c->producer);
	c->last = gc_malloc(nt * sizeof *c->last);
	if (!c->sum || !c->producer || !c->last) {
		gc_tcheck_free(c);
		return gc_error_set(err, GC_ENOMEM, "--check-tensors: out of memory");
	}
	for (int32_t t = 0; t < p->n_tensors; t++) {
		c->producer[t] = -2;
		c->last[t] = -1;
	}
	for (int32_t i = 0; i < p->n_nodes; i++)
		for (int j = 0; j < p->nodes[i].n_in; j++)
			if (p->nodes[i].in[j] >= 0)
				c->last[p->nodes[i].in[j]] = i;
	for (int32_t j = 0; j < p->n_outputs; j++)
		c->last[p->outputs[j]] = p->n_nodes;
	*out = c;
	return 0;
}

void gc_tcheck_free(gc_tcheck *c)
{
	if (!c)
		return;
	gc_free(c->sum);
	gc_free(c->producer);
	gc_free(c->last);
	gc_free(c);
}

void gc_tcheck_produced(gc_tcheck *c, const gc_session *s, int32_t idx, int32_t producer)
{
	const gc_tensor *t = &s->tensors[idx];
	if (!tracked(t)) {
		c->producer[idx] = -2;
		return;
	}
	c->producer[idx] = producer;
	c->sum[idx] = checksum(t);
}

bool gc_tcheck_changed(const gc_tcheck *c, const gc_session *s, int32_t idx)
{
	const gc_tensor *t = &s->tensors[idx];
	return c->producer[idx] != -2 && tracked(t) && checksum(t) != c->sum[idx];
}

/* Whether t's bytes overlap an output of node n. */
static bool in_outputs(const gc_session *s, const gc_node *n, const gc_tensor *t)
{
	uintptr_t lo = (uintptr_t)t->data, hi = lo + (size_t)gc_tensor_nbytes(t);
	for (int j = 0; j < n->n_out; j++) {
		if (n->out[j] < 0)
			continue;
		const gc_tensor *o = &s->tensors[n->out[j]];
		uintptr_t olo = (uintptr_t)o->data, ohi = olo + (size_t)gc_tensor_nbytes(o);
		if (o->data && lo < ohi && olo < hi)
			return true;
	}
	return false;
}

/* "node 'a' (Relu)", or "the graph input". */
static const char *producer_str(const gc_session *s, int32_t producer, char *buf, size_t len)
{
	if (producer < 0)
		snprintf(buf, len, "the caller (a graph input)");
	else
		gc_debug_node_str(&s->p->nodes[producer], buf, len);
	return buf;
}

/* The nodes after i that read tensor idx, "'a', 'b'" (at most a few). */
static const char *readers(const gc_session *s, int32_t idx, int32_t i, char *buf, size_t len)
{
	const gc_program *p = s->p;
	size_t at = 0;
	int shown = 0;
	buf[0] = 0;
	for (int32_t k = i + 1; k < p->n_nodes && shown < 4 && at + 1 < len; k++)
		for (int j = 0; j < p->nodes[k].n_in; j++)
			if (p->nodes[k].in[j] == idx) {
				int w = snprintf(buf + at, len - at, "%s'%s' (%s)", shown ? ", " : "",
						 p->nodes[k].name, p->nodes[k].op_type);
				at = w > 0 && (size_t)w < len - at ? at + (size_t)w : len - 1;
				shown++;
				break;
			}
	if (!shown)
		snprintf(buf, len, "the caller (a graph output)");
	return buf;
}

int gc_tcheck_after(gc_tcheck *c, const gc_session *s, int32_t i, gc_error *err)
{
	const gc_program *p = s->p;
	const gc_node *n = &p->nodes[i];
	for (int32_t t = 0; t < p->n_tensors; t++) {
		if (c->producer[t] == -2 || c->last[t] < i || !tracked(&s->tensors[t]))
			continue;
		bool own = false;
		for (int j = 0; j < n->n_out; j++)
			own |= n->out[j] == t;
		if (own || in_outputs(s, n, &s->tensors[t]) || checksum(&s->tensors[t]) == c->sum[t])
			continue;
		char node[1400], prod[1400], rd[600], shape[160];
		const gc_tensor *tt = &s->tensors[t];
		bool is_input = false;
		for (int j = 0; j < n->n_in; j++)
			is_input |= n->in[j] == t;
		return gc_error_set(
		    err, GC_ECRASH,
		    "--check-tensors: %s: it changed tensor '%s' (%s %s), which it does not "
		    "produce%s: "
		    "its bytes differ from when %s produced it; it is read next by %s. Suspect an "
		    "overrun out of one of this node's outputs, or a write through a stale pointer",
		    gc_debug_node_str(n, node, sizeof node), p->tensors[t].name,
		    gc_dtype_name(tt->dtype), gc_shape_str(tt->dims, tt->rank, shape, sizeof shape),
		    is_input ? " (it is one of its inputs: it wrote into its input)" : "",
		    producer_str(s, c->producer[t], prod, sizeof prod),
		    c->last[t] == i && is_input ? "this node only"
						: readers(s, t, i, rd, sizeof rd));
	}
	for (int j = 0; j < n->n_out; j++)
		if (n->out[j] >= 0)
			gc_tcheck_produced(c, s, n->out[j], i);
	return 0;
}

int32_t gc_tcheck_producer(const gc_tcheck *c, int32_t idx)
{
	return c->producer[idx];
}
