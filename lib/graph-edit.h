/*
 * Editing the graph IR, for the passes (lib/pass-*.c): an editor that knows
 * how often each value is read, replaces uses, removes nodes, adds
 * constants and attributes, and at the end compacts the nodes array so the
 * graph is again what the builder makes (no holes, producers and first users
 * right). Removed nodes stay in place until gc_edit_finish, so node indices
 * are stable while a pass walks the graph.
 */
#ifndef GC_GRAPH_EDIT_H
#define GC_GRAPH_EDIT_H

#include <graphcc/graphcc.h>

#include <stdbool.h>

#include "../runtime/build.h"
#include "graph-impl.h"
#include "passes.h"

typedef struct gc_edit {
	gc_graph *g;
	gc_error *err;
	int32_t *n_uses; /* per value: node inputs that read it */
	bool *pinned;	 /* per value: a graph output, or read by name from a subgraph */
	bool *removed;	 /* per node */
	int32_t cap_values, cap_nodes;
	int32_t n_removed;
} gc_edit;

/* A deep copy of g (values, nodes, attributes, constants, opsets, inputs,
 * outputs; subgraphs are shared, not copied) for passes to rewrite. */
gc_graph *gc_graph_clone(const gc_graph *g, gc_error *err);

/*
 * A copy of g for the passes that shares g's initializer data instead of
 * copying it (for resnet18, 45 MB and about 45 ms of first-touched pages):
 * the passes never write into a constant (a fold makes new ones), and they
 * run inside gc_compile, while g lives. g must outlive the copy. Otherwise as
 * gc_graph_clone.
 */
gc_graph *gc_graph_clone_for_passes(const gc_graph *g, gc_error *err);

/* Starts editing g: counts every value's uses. */
int gc_edit_begin(gc_edit *e, gc_graph *g, gc_error *err);
/* Drops the removed nodes (compacting the nodes array), fixes producers and
 * first users, and frees the editor. Also on failure paths: the graph stays
 * consistent after any successful edit. */
void gc_edit_finish(gc_edit *e);

/* Whether a value may be renamed away or lose its producer: false for graph
 * outputs and values a subgraph reads by name. */
static inline bool gc_edit_is_pinned(const gc_edit *e, int32_t v)
{
	return e->pinned[v];
}
static inline int32_t gc_edit_uses(const gc_edit *e, int32_t v)
{
	return e->n_uses[v];
}
static inline bool gc_edit_is_removed(const gc_edit *e, int32_t node)
{
	return e->removed[node];
}

/* Every node input reading `from` reads `to` instead. */
void gc_edit_replace_uses(gc_edit *e, int32_t from, int32_t to);
/* Removes a node: its inputs lose a use, its outputs their producer. */
void gc_edit_remove_node(gc_edit *e, int32_t node);
/* Input j of node reads v (-1: absent); the input list grows (absent
 * inputs in between) when j is past its end. */
int gc_edit_set_input(gc_edit *e, int32_t node, int32_t j, int32_t v);
/* Output j of node becomes v, which must have no producer (the old output
 * loses its producer). */
void gc_edit_set_output(gc_edit *e, int32_t node, int32_t j, int32_t v);
/* Fusion: node p takes node i's place (p absorbed what i computed): i goes,
 * and p's output 0 becomes i's output 0. */
void gc_edit_absorb(gc_edit *e, int32_t p, int32_t i);
/* Adds or replaces an attribute of node (deep-copied into the graph). */
int gc_edit_set_attr(gc_edit *e, int32_t node, const gc_attr *a);
/* The attribute of that name, or NULL. */
const gc_attr *gc_edit_attr(const gc_edit *e, int32_t node, const char *name);

/* A new constant named after `hint` (made unique), holding a zeroed tensor of
 * that type and shape; *data points at its bytes for the caller to fill.
 * Returns the value's index, or -1 (error on e->err). */
int32_t gc_edit_add_constant(gc_edit *e, const char *hint, gc_dtype dtype, int32_t rank,
			     const int64_t *dims, void **data);

/* The value of v when known before binding: an initializer (an input with a
 * default included), or the output of a Constant node (attribute value,
 * value_float, value_int, value_floats or value_ints). NULL otherwise. */
const gc_tensor *gc_edit_const(gc_edit *e, int32_t v);

/* The element type of value v known before binding: a constant's or a
 * declared one; GC_DTYPE_UNDEFINED when neither (or v < 0, an absent input). */
gc_dtype gc_edit_known_dtype(gc_edit *e, int32_t v);

/* Node becomes a node of (domain, op_type) without attributes, keeping its
 * first n_in inputs (the others lose a use) and its outputs. */
int gc_edit_set_op(gc_edit *e, int32_t node, const char *domain, const char *op_type,
		   int32_t n_in);
/* Whether v is a constant float scalar (any rank, one element); its value
 * and (dtype may be NULL) type. */
bool gc_edit_const_scalar(gc_edit *e, int32_t v, gc_dtype *dtype, double *val);
/* The one node that reads v when v has exactly one use and is not pinned,
 * else -1 (a scan over the nodes). */
int32_t gc_edit_only_reader(const gc_edit *e, int32_t v);

/* Whether node is a built-in (default domain) node of that op type. */
bool gc_edit_is_op(const gc_edit *e, int32_t node, const char *op_type);

/* A pass's walk: edits ctx->g, calling one() on every node of one of the
 * ops (a NULL-terminated list: "Name" a built-in op, "domain::Name" one of
 * that domain; NULL: every node, whatever its domain) in order; one() returns 1 when it
 * rewrote the node, 0 when not, negative on error (which ends the walk).
 * The rewrites add to ctx->changed. */
int gc_edit_each(gc_pass_ctx *ctx, const char *const *ops, int (*one)(gc_edit *e, int32_t node));

#endif
