/*
 * dead-node-removal: nodes none of whose outputs reaches a graph output (or
 * a name a subgraph reads) go, so binding never sees them; so do the
 * initializers nothing reads any more (the weights a BatchNormalization fold
 * replaced, a fused Clip's bounds), which would otherwise be copied into the
 * program. Graph inputs keep their defaults: a caller may still feed them.
 */
#include "../runtime/build.h"
#include "graph-edit.h"

int gc_pass_dead_nodes(gc_pass_ctx *ctx)
{
	gc_graph *g = ctx->g;
	gc_edit e;
	int rc = gc_edit_begin(&e, g, ctx->err);
	if (rc)
		return rc;
	bool *live = gc_calloc((size_t)g->n_nodes + 1, sizeof *live);
	bool *seen = gc_calloc((size_t)g->n_values + 1, sizeof *seen);
	int32_t *stack = gc_calloc((size_t)g->n_values + 1, sizeof *stack);
	if (!live || !seen || !stack) {
		rc = gc_error_set(ctx->err, GC_ENOMEM, "out of memory removing dead nodes");
		goto out;
	}
	int32_t top = 0;
	for (int32_t v = 0; v < g->n_values; v++)
		if (gc_edit_is_pinned(&e, v)) {
			seen[v] = true;
			stack[top++] = v;
		}
	while (top > 0) {
		int32_t p = g->values[stack[--top]].producer;
		if (p < 0 || live[p])
			continue;
		live[p] = true;
		const gc_irnode *n = &g->nodes[p];
		for (int j = 0; j < n->n_in; j++) {
			int32_t v = n->in[j];
			if (v >= 0 && !seen[v]) {
				seen[v] = true;
				stack[top++] = v;
			}
		}
	}
	for (int32_t i = 0; i < g->n_nodes; i++)
		if (!live[i]) {
			gc_edit_remove_node(&e, i);
			ctx->changed++;
		}
	for (int32_t v = 0; v < g->n_values; v++) {
		gc_value *val = &g->values[v];
		if (val->constant && !val->is_input && !gc_edit_is_pinned(&e, v) &&
		    !gc_edit_uses(&e, v))
			val->constant = NULL; /* its bytes stay in the pool until the graph dies */
	}
out:
	gc_free(live);
	gc_free(seen);
	gc_free(stack);
	gc_edit_finish(&e);
	return rc;
}
