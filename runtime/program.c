/* Programs: lifetime and description (the memory plan is the compiler's
 * last step: lib/plan-memory.c). */
#include "program-impl.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "alloc.h"
#include "backend.h"
#include "custom.h"
#include "fileio.h"

gc_program *gc_program_alloc(void)
{
	gc_program *p = gc_calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->backend = gc_backend_find(NULL);
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
	gc_packed_release(n);
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
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (p->tensors[t].packed)
			gc_free(p->tensors[t].t.data); /* unpacked at load */
	if (p->map)
		munmap(p->map, p->map_len);
	gc_pool_free(p->pool);
	gc_free(p);
}

int gc_program_num_inputs(const gc_program *p)
{
	if (!p)
		return GC_EINVAL;
	return p->n_inputs;
}

int gc_program_num_outputs(const gc_program *p)
{
	if (!p)
		return GC_EINVAL;
	return p->n_outputs;
}

const gc_tensor *gc_program_input(const gc_program *p, int i, const char **name)
{
	if (!p || i < 0 || i >= p->n_inputs)
		return NULL;
	const gc_ptensor *t = &p->tensors[p->inputs[i]];
	if (name)
		*name = t->name;
	return &t->t;
}

const gc_tensor *gc_program_output(const gc_program *p, int i, const char **name)
{
	if (!p || i < 0 || i >= p->n_outputs)
		return NULL;
	const gc_ptensor *t = &p->tensors[p->outputs[i]];
	if (name)
		*name = t->name;
	return &t->t;
}

int gc_program_input_state(const gc_program *p, int i)
{
	for (int32_t k = 0; p && k < p->n_states; k++)
		if (p->states[k].input == i)
			return p->states[k].output;
	return -1;
}

int gc_program_find_input(const gc_program *p, const char *name)
{
	if (!p || !name)
		return -1;
	for (int i = 0; i < p->n_inputs; i++)
		if (!strcmp(p->tensors[p->inputs[i]].name, name))
			return i;
	return -1;
}

int gc_program_num_nodes(const gc_program *p)
{
	if (!p)
		return GC_EINVAL;
	return p->n_nodes;
}

void gc_program_node(const gc_program *p, int i, gc_node_desc *d)
{
	if (!d)
		return;
	memset(d, 0, sizeof *d);
	if (!p || i < 0 || i >= p->n_nodes)
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

int gc_program_node_per_shape(const gc_program *p, int i, const char **functions_library,
			      int *n_flavours)
{
	const gc_custom *c = p && i >= 0 && i < p->n_nodes ? p->nodes[i].custom : NULL;
	if (!c || !c->dyn)
		return 0;
	if (functions_library)
		*functions_library = c->dyn->fn_library;
	if (n_flavours)
		*n_flavours = c->dyn->n_impls;
	return 1;
}

int gc_program_node_quant(const gc_program *p, int i, int is_output, int t, const char **qtype,
			  float *scale, int32_t *zero_point)
{
	static const char *const names[] = { "qint8", "quint8", "qint16", "qint32" };
	if (!p || i < 0 || i >= p->n_nodes || !p->nodes[i].custom)
		return 0;
	const gc_custom *c = p->nodes[i].custom;
	if (!c->quant)
		return 0;
	int count = is_output ? c->n_out : c->n_in;
	if (t < 0 || t >= count || t >= (is_output ? p->nodes[i].n_out : p->nodes[i].n_in))
		return 0;
	const gc_custom_quant *q = &c->quant[is_output ? c->n_in + t : t];
	if (!gc_custom_quant_on(q))
		return 0;
	if (qtype)
		*qtype = names[q->dtype - DTQInt8];
	if (scale)
		*scale = q->scale;
	if (zero_point)
		*zero_point = q->offset;
	return 1;
}

const gc_tensor *gc_program_node_tensor(const gc_program *p, int i, int is_output, int t,
					const char **name)
{
	if (!p || i < 0 || i >= p->n_nodes)
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

void gc_program_get_origin(const gc_program *p, gc_program_origin *o)
{
	if (!o)
		return;
	memset(o, 0, sizeof *o);
	if (!p)
		return;
	o->format_version = p->format_version;
	o->graphcc_version = p->graphcc_version;
	o->n_libraries = p->n_libs;
	o->library_paths = p->lib_paths;
	o->library_sha256 = p->lib_sha;
	o->file_bytes = p->map_len;
	o->weights_bytes = p->const_bytes;
}
