/* Binding a custom node to an op package's operation at compile time. */
#ifndef GC_BIND_CUSTOM_H
#define GC_BIND_CUSTOM_H

#include "../runtime/build.h"
#include "graph-impl.h"
#include "package-impl.h"

/*
 * Matches node gi of g to an operation of reg, turns its attributes into
 * params, runs verify, shape inference and selection, and records the
 * chosen implementation in a gc_custom in pool (set as pn->custom). `in` are
 * the node's inputs as the compiler knows them (data set when constant).
 * `flavour` (may be NULL) replaces selection's choice, once selection has
 * run and chosen. Errors name the model, the node and what is at fault.
 * per_shape: a dynamic dimension reaches the node; no package function
 * runs now: the binding records what to call when a session sees a new
 * input shape (gc_custom.dyn, runtime/custom-dyn.c).
 */
int gc_bind_custom(const gc_graph *g, int32_t gi, const gc_registry *reg, const char *backend,
		   const char *flavour, bool per_shape, gc_pool *pool, gc_node *pn,
		   gc_tensor *const *in, gc_error *err);

#endif
