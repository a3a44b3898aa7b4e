/* The graph IR behind the builder API: values (tensors) and nodes, all
 * living in the graph's pool. */
#ifndef GC_GRAPH_IMPL_H
#define GC_GRAPH_IMPL_H

#include <graphcc/graphcc.h>

#include <stdbool.h>

#include "../runtime/build.h"
#include "strmap.h"

typedef struct gc_value {
	const char *name;
	gc_dtype dtype;	 /* UNDEFINED until known */
	int32_t rank;	 /* -1 until known */
	int64_t dims[GC_MAX_RANK];
	const char *dim_names[GC_MAX_RANK];
	int32_t producer;	     /* node index, or -1 */
	int32_t first_user;	     /* a node that reads it (for messages), or -1 */
	const gc_tensor *constant; /* an initializer's value */
	bool is_input, is_output, has_info;
} gc_value;

typedef struct gc_irnode {
	const char *name, *domain, *op_type;
	int32_t n_in, n_out;
	int32_t *in, *out; /* value indices; -1 for an absent optional input */
	int32_t n_attr;
	gc_attr *attrs;
	/* A custom node's edges bound quantized by the bind-qdq pass: n_in +
	 * n_out entries (the node's inputs, then outputs), or NULL. */
	struct gc_custom_quant *quant;
} gc_irnode;

typedef struct gc_opset {
	const char *domain;
	int64_t version;
} gc_opset;

struct gc_graph {
	gc_pool *pool;
	const char *origin;
	gc_value *values;
	int32_t n_values, cap_values;
	gc_irnode *nodes;
	int32_t n_nodes, cap_nodes;
	int32_t *inputs, *outputs;
	int32_t n_inputs, cap_inputs, n_outputs, cap_outputs;
	gc_opset *opsets;
	int32_t n_opsets, cap_opsets;
	gc_strmap names;
	/* Subgraphs (If/Loop/Scan bodies) are owned by the graph whose node
	 * holds them; their unresolved names refer to the enclosing graphs. */
	gc_graph *parent;
	gc_graph **children;
	int32_t n_children, cap_children;
};

/* A subgraph owned by g (freed with it). */
gc_graph *gc_graph_new_child(gc_graph *g, const char *origin);
/*
 * Checks that every tensor a node reads is produced, an input or an
 * initializer (or, in a subgraph, visible from an enclosing graph), that the
 * graph outputs exist, and that the nodes have no cycle. Fills order (n_nodes
 * entries) with a topological order. Messages name the node.
 */
int gc_graph_check(const gc_graph *g, int32_t *order, gc_error *err);

/* The value named `name`, or -1. */
int32_t gc_graph_find(const gc_graph *g, const char *name);
/* The opset version the graph imports for the node's domain; -1 if none. */
int64_t gc_graph_opset(const gc_graph *g, const char *domain);
/* Deep-copies attributes into pool. */
int gc_attrs_copy(gc_pool *pool, int32_t n, const gc_attr *src, gc_attr **dst);
/* Deep-copies a tensor (data included) into pool. */
gc_tensor *gc_tensor_copy_to_pool(gc_pool *pool, const gc_tensor *t);
/* "node 'name' (Op)" or "node #i (Op)" for messages. */
const char *gc_node_label(const gc_graph *g, int32_t i, char *buf, size_t len);

/* api-args.c: the compiler API's argument checks (GC_EINVAL naming fn and
 * the argument). A tensor handed in: a tensor type, rank 0..GC_MAX_RANK, no
 * negative dim, data for its bytes (no NULL string). */
int gc_api_check_tensor(const gc_tensor *t, const char *fn, const char *what, gc_error *err);
/* n attributes: names, types, counts and the lists behind them. */
int gc_api_check_attrs(int32_t n, const gc_attr *attrs, const char *fn, gc_error *err);
/* n names in a list that may hold NULL (absent) entries. */
int gc_api_check_names(int32_t n, const char *const *names, const char *fn, const char *what,
		       gc_error *err);

#endif
