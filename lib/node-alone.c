/*
 * gc_graph_node_alone: one node of a graph as a graph of its own, for
 * one-node reproducers (graphcc run --repro, --isolate). Its inputs are
 * graph inputs typed and shaped as the node saw them in a run, except the
 * ones the model gives as initializers, which stay constants (the weights
 * travel with the node); its outputs keep the model's value_info.
 */
#include <string.h>

#include "graph-impl.h"

static int32_t find_node(const gc_graph *g, const char *name)
{
	for (int32_t i = 0; i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].name, name))
			return i;
	return -1;
}

static int add_io(gc_graph *a, const gc_graph *g, const gc_irnode *n, const gc_tensor *const *in,
		  gc_error *err)
{
	for (int32_t j = 0; j < n->n_in; j++) {
		if (n->in[j] < 0)
			continue;
		const gc_value *v = &g->values[n->in[j]];
		if (gc_graph_find(a, v->name) >= 0)
			continue; /* the same tensor read twice */
		if (v->constant ? gc_graph_add_constant(a, v->name, v->constant, err)
				: !in[j] ? gc_error_set(err, GC_EINVAL,
						       "input %d ('%s') of node '%s' has no value",
						       (int)j, v->name, n->name)
					 : gc_graph_add_input(a, v->name, in[j]->dtype, in[j]->rank,
							      in[j]->dims, NULL, err))
			return err->code;
	}
	for (int32_t j = 0; j < n->n_out; j++) {
		if (n->out[j] < 0)
			continue;
		const gc_value *v = &g->values[n->out[j]];
		if (gc_graph_add_output(a, v->name, err) ||
		    (v->has_info &&
		     gc_graph_set_value_info(a, v->name, v->dtype, v->rank, v->dims, err)))
			return err->code;
	}
	return 0;
}

int gc_graph_node_alone(const gc_graph *g, const char *node, const gc_tensor *const *in,
			gc_graph **out, gc_error *err)
{
	*out = NULL;
	int32_t i = find_node(g, node);
	if (i < 0)
		return gc_error_set(err, GC_EINVAL, "%s: no node named '%s'", g->origin, node);
	const gc_irnode *n = &g->nodes[i];
	char origin[600];
	snprintf(origin, sizeof origin, "node '%.200s' of %.300s", node, g->origin);
	gc_graph *a = gc_graph_new(origin);
	if (!a)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	const char **ins = gc_calloc((size_t)(n->n_in + n->n_out) + 1, sizeof *ins);
	const char **outs = ins ? ins + n->n_in : NULL;
	int rc = 0;
	if (!ins) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory");
		goto fail;
	}
	for (int32_t k = 0; k < g->n_opsets && !rc; k++)
		rc = gc_graph_set_opset(a, g->opsets[k].domain, g->opsets[k].version, err);
	if (rc || (rc = add_io(a, g, n, in, err)))
		goto fail;
	for (int32_t j = 0; j < n->n_in; j++)
		ins[j] = n->in[j] < 0 ? "" : g->values[n->in[j]].name;
	for (int32_t j = 0; j < n->n_out; j++)
		outs[j] = n->out[j] < 0 ? "" : g->values[n->out[j]].name;
	if ((rc = gc_graph_add_node(a, n->name, n->domain, n->op_type, n->n_in, ins, n->n_out, outs,
				    n->n_attr, n->attrs, err)))
		goto fail;
	gc_free(ins);
	*out = a;
	return 0;
fail:
	gc_free(ins);
	gc_graph_free(a);
	return rc;
}
