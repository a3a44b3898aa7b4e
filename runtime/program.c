/* Programs: lifetime, description and the memory plan. */
#include "program-impl.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "custom.h"
#include "fileio.h"

#define ARENA_ALIGN 64

gc_program *gc_program_alloc(void)
{
	gc_program *p = gc_calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->pool = gc_pool_new();
	if (!p->pool) {
		gc_free(p);
		return NULL;
	}
	return p;
}

void gc_node_release_state(gc_node *n)
{
	if (n->state) {
		if (n->state_free)
			n->state_free(n->state);
		else
			gc_free(n->state);
	}
	n->state = NULL;
}

void gc_program_free(gc_program *p)
{
	if (!p)
		return;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		gc_node_release_state(&p->nodes[i]);
		for (int32_t j = 0; j < p->nodes[i].n_sub; j++)
			gc_program_free(p->nodes[i].sub[j]);
	}
	if (p->map)
		munmap(p->map, p->map_len);
	gc_pool_free(p->pool);
	gc_free(p);
}

int gc_program_num_inputs(const gc_program *p)
{
	return p->n_inputs;
}

int gc_program_num_outputs(const gc_program *p)
{
	return p->n_outputs;
}

const gc_tensor *gc_program_input(const gc_program *p, int i, const char **name)
{
	if (i < 0 || i >= p->n_inputs)
		return NULL;
	const gc_ptensor *t = &p->tensors[p->inputs[i]];
	if (name)
		*name = t->name;
	return &t->t;
}

const gc_tensor *gc_program_output(const gc_program *p, int i, const char **name)
{
	if (i < 0 || i >= p->n_outputs)
		return NULL;
	const gc_ptensor *t = &p->tensors[p->outputs[i]];
	if (name)
		*name = t->name;
	return &t->t;
}

int gc_program_find_input(const gc_program *p, const char *name)
{
	for (int i = 0; i < p->n_inputs; i++)
		if (!strcmp(p->tensors[p->inputs[i]].name, name))
			return i;
	return -1;
}

int gc_program_num_nodes(const gc_program *p)
{
	return p->n_nodes;
}

void gc_program_node(const gc_program *p, int i, gc_node_desc *d)
{
	memset(d, 0, sizeof *d);
	if (i < 0 || i >= p->n_nodes)
		return;
	const gc_node *n = &p->nodes[i];
	d->name = n->name;
	d->domain = n->domain;
	d->op_type = n->op_type;
	d->n_inputs = n->n_in;
	d->n_outputs = n->n_out;
	const gc_custom *c = n->custom;
	if (c) {
		d->op_name = c->op_name;
		d->flavour = c->flavour;
		d->library = c->library;
		d->symbol = c->symbol;
		d->manifest = c->manifest;
	}
}

const gc_tensor *gc_program_node_tensor(const gc_program *p, int i, int is_output, int t,
					const char **name)
{
	if (i < 0 || i >= p->n_nodes)
		return NULL;
	const gc_node *n = &p->nodes[i];
	int count = is_output ? n->n_out : n->n_in;
	if (t < 0 || t >= count)
		return NULL;
	int32_t idx = is_output ? n->out[t] : n->in[t];
	if (idx < 0)
		return NULL;
	if (name)
		*name = p->tensors[idx].name;
	return &p->tensors[idx].t;
}

/* One block to place: [first, last] node steps, size. */
typedef struct interval {
	int32_t first, last;
	uint64_t size;
	uint64_t *offset;
} interval;

static int by_size_desc(const void *a, const void *b)
{
	const interval *x = a, *y = b;
	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->first - y->first;
}

static uint64_t align_up(uint64_t v)
{
	return (v + ARENA_ALIGN - 1) & ~(uint64_t)(ARENA_ALIGN - 1);
}

int gc_program_plan_memory(gc_program *p, gc_error *err)
{
	int32_t nt = p->n_tensors, nn = p->n_nodes;
	int32_t *first = gc_malloc(((size_t)nt + 1) * sizeof *first);
	int32_t *last = gc_malloc(((size_t)nt + 1) * sizeof *last);
	interval *iv = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *iv);
	int32_t *alias = gc_malloc(((size_t)nt + 1) * sizeof *alias);
	bool *is_input = gc_calloc((size_t)nt + 1, sizeof *is_input);
	int32_t *placed = gc_malloc(((size_t)nt + (size_t)nn + 1) * sizeof *placed);
	if (!p->scratch_offset && nn)
		p->scratch_offset = gc_pool_alloc(p->pool, (size_t)nn * sizeof(uint64_t));
	int rc = 0;
	if (!first || !last || !iv || !placed || !alias || !is_input ||
	    (nn && !p->scratch_offset)) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory planning memory");
		goto out;
	}
	/* Steps: inputs live from step 0, node i runs at step i + 1, outputs
	 * live to step nn + 1. */
	for (int32_t t = 0; t < nt; t++) {
		first[t] = INT32_MAX;
		last[t] = -1;
	}
	for (int32_t i = 0; i < p->n_inputs; i++) {
		first[p->inputs[i]] = 0;
		is_input[p->inputs[i]] = true;
	}
	for (int32_t i = 0; i < nn; i++) {
		const gc_node *n = &p->nodes[i];
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0 && first[n->out[j]] > i + 1)
				first[n->out[j]] = i + 1;
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0 && last[n->in[j]] < i + 1)
				last[n->in[j]] = i + 1;
	}
	/* Inputs are set once and may be run on many times: they live
	 * throughout, like the outputs. */
	for (int32_t i = 0; i < p->n_inputs; i++)
		last[p->inputs[i]] = nn + 1;
	for (int32_t i = 0; i < p->n_outputs; i++)
		last[p->outputs[i]] = nn + 1;
	for (int32_t t = 0; t < nt; t++) {
		if (first[t] == INT32_MAX)
			first[t] = 0;
		if (last[t] < first[t])
			last[t] = first[t]; /* written, never read: still needs room */
	}
	/* In place: output 0 takes input 0's bytes when the kernel allows it,
	 * they are the same size, and the input dies at this node (it is not
	 * a graph input, which must survive the run). Chains share one block. */
	for (int32_t t = 0; t < nt; t++)
		alias[t] = -1;
	for (int32_t i = 0; i < nn; i++) {
		const gc_node *n = &p->nodes[i];
		if (!n->inplace_ok || n->n_in < 1 || n->n_out < 1 || n->in[0] < 0 || n->out[0] < 0)
			continue;
		int32_t a = n->in[0], o = n->out[0], root = a;
		while (alias[root] >= 0)
			root = alias[root];
		const gc_ptensor *pa = &p->tensors[a], *po = &p->tensors[o];
		if (pa->storage != GC_STORAGE_ARENA || po->storage != GC_STORAGE_ARENA ||
		    pa->nbytes != po->nbytes || last[root] != i + 1 || is_input[root] || a == o)
			continue;
		alias[o] = root;
		if (last[o] > last[root])
			last[root] = last[o];
	}
	int32_t n_iv = 0;
	p->tensor_bytes = 0;
	for (int32_t t = 0; t < nt; t++) {
		gc_ptensor *pt = &p->tensors[t];
		if (pt->storage != GC_STORAGE_ARENA)
			continue;
		p->tensor_bytes += pt->nbytes;
		if (alias[t] >= 0)
			continue;
		iv[n_iv++] = (interval){ first[t], last[t], align_up(pt->nbytes), &pt->offset };
	}
	for (int32_t i = 0; i < nn; i++) {
		p->scratch_offset[i] = 0;
		if (p->nodes[i].scratch_bytes) {
			iv[n_iv++] = (interval){ i + 1, i + 1, align_up(p->nodes[i].scratch_bytes),
						 &p->scratch_offset[i] };
			p->tensor_bytes += p->nodes[i].scratch_bytes;
		}
	}
	/* Greedy by size: each block goes at the lowest offset where it does
	 * not overlap a placed block whose lifetime overlaps its own. */
	qsort(iv, (size_t)n_iv, sizeof *iv, by_size_desc);
	uint64_t peak = 0;
	int32_t n_placed = 0;
	for (int32_t i = 0; i < n_iv; i++) {
		uint64_t off = 0;
		bool moved = true;
		while (moved) {
			moved = false;
			for (int32_t j = 0; j < n_placed; j++) {
				const interval *o = &iv[placed[j]];
				if (o->last < iv[i].first || o->first > iv[i].last)
					continue;
				if (off < *o->offset + o->size && *o->offset < off + iv[i].size) {
					off = align_up(*o->offset + o->size);
					moved = true;
				}
			}
		}
		*iv[i].offset = off;
		placed[n_placed++] = i;
		if (off + iv[i].size > peak)
			peak = off + iv[i].size;
	}
	p->arena_bytes = peak;
	if (peak > gc_limit_bytes()) {
		rc = gc_error_set(err, GC_ELIMIT,
				  "the program needs an activation arena of %" PRIu64
				  " bytes, over the limit of %" PRIu64 " (set GRAPHCC_MAX_BYTES to "
				  "allow more)",
				  peak, gc_limit_bytes());
		goto out;
	}
	for (int32_t t = 0; t < nt; t++) {
		int32_t root = t;
		while (alias[root] >= 0)
			root = alias[root];
		if (root != t)
			p->tensors[t].offset = p->tensors[root].offset;
	}
out:
	gc_free(alias);
	gc_free(is_input);
	gc_free(first);
	gc_free(last);
	gc_free(iv);
	gc_free(placed);
	return rc;
}

void gc_program_get_origin(const gc_program *p, gc_program_origin *o)
{
	memset(o, 0, sizeof *o);
	o->format_version = p->format_version;
	o->graphcc_version = p->graphcc_version;
	o->n_libraries = p->n_libs;
	o->library_paths = p->lib_paths;
	o->library_sha256 = p->lib_sha;
	o->file_bytes = p->map_len;
	o->weights_bytes = p->const_bytes;
}
