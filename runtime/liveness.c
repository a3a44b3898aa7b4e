#include "liveness.h"

#include <string.h>

void gc_lifetimes(const gc_program *p, int32_t *first, int32_t *last, bool *is_input)
{
	int32_t nt = p->n_tensors, nn = p->n_nodes;
	memset(is_input, 0, (size_t)nt * sizeof *is_input);
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
}

void gc_share_in_place(const gc_program *p, int32_t *last, const bool *is_input, int32_t *alias,
		       bool same_offset)
{
	for (int32_t t = 0; t < p->n_tensors; t++)
		alias[t] = -1;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		if (!n->inplace_ok || n->n_in < 1 || n->n_out < 1 || n->in[0] < 0 || n->out[0] < 0)
			continue;
		int32_t a = n->in[0], o = n->out[0], root = a;
		while (alias[root] >= 0)
			root = alias[root];
		const gc_ptensor *pa = &p->tensors[a], *po = &p->tensors[o];
		if (pa->storage != GC_STORAGE_ARENA || po->storage != GC_STORAGE_ARENA ||
		    pa->nbytes != po->nbytes || last[root] != i + 1 || is_input[root] || a == o ||
		    (same_offset && po->offset != p->tensors[root].offset))
			continue;
		alias[o] = root;
		if (last[o] > last[root])
			last[root] = last[o];
	}
}
