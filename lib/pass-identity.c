/*
 * identity-elimination: Identity, Dropout as inference runs it (no mask
 * read, training_mode absent or a constant false) and a Pad of constant zero
 * pads pass their input through;
 * their readers read the input instead. A graph output keeps its declared
 * name: the input's producer is made to write it, or, when the input is
 * itself a graph input, output, initializer or a name a subgraph reads, the
 * node stays.
 */
#include <string.h>

#include "graph-edit.h"

/* Whether a Dropout node is an identity at inference. Anything prepare
 * would refuse (training mode, a bad ratio, a mask somebody reads) keeps the
 * node, so that the refusal still happens. */
static bool dropout_is_identity(gc_edit *e, int32_t i)
{
	const gc_irnode *n = &e->g->nodes[i];
	if (n->n_in < 1 || n->n_in > 3 || n->n_out < 1 || n->n_out > 2)
		return false;
	if (n->n_out == 2 && n->out[1] >= 0 &&
	    (gc_edit_uses(e, n->out[1]) || gc_edit_is_pinned(e, n->out[1])))
		return false;
	int64_t opset = gc_graph_opset(e->g, "");
	if (opset >= 12) {
		if (n->n_in > 2 && n->in[2] >= 0) {
			const gc_tensor *t = gc_edit_const(e, n->in[2]);
			if (!t || t->dtype != GC_DTYPE_BOOL || gc_tensor_numel(t) != 1 ||
			    *(const uint8_t *)t->data)
				return false;
		}
		if (n->n_in > 1 && n->in[1] >= 0) {
			const gc_tensor *t = gc_edit_const(e, n->in[1]);
			if (t) {
				if (gc_tensor_numel(t) != 1)
					return false;
				double r = gc_kv_load(t, 0);
				if (t->dtype != GC_DTYPE_FLOAT && t->dtype != GC_DTYPE_DOUBLE &&
				    t->dtype != GC_DTYPE_FLOAT16 && t->dtype != GC_DTYPE_BFLOAT16)
					return false;
				if (!(r >= 0 && r < 1))
					return false;
			}
		}
		return true;
	}
	if (n->n_in != 1)
		return false;
	const gc_attr *ratio = gc_edit_attr(e, i, "ratio");
	if (ratio && (ratio->type != GC_ATTR_FLOAT || !(ratio->v.f >= 0 && ratio->v.f < 1)))
		return false;
	return true;
}

/* Whether a Pad node pads nothing: every pad a constant 0 (densenet's
 * exports put one before each transition's AveragePool). A mode prepare
 * would refuse keeps the node. */
static bool pad_is_identity(gc_edit *e, int32_t i)
{
	const gc_irnode *n = &e->g->nodes[i];
	if (n->n_in < 1 || n->n_out != 1)
		return false;
	const gc_attr *mode = gc_edit_attr(e, i, "mode");
	if (mode) {
		static const char *const modes[] = {"constant", "reflect", "edge", "wrap"};
		bool known = false;
		for (int m = 0; m < 4 && mode->type == GC_ATTR_STRING; m++)
			known |= mode->n == (int64_t)strlen(modes[m]) &&
				 !memcmp(mode->v.s, modes[m], (size_t)mode->n);
		if (!known)
			return false;
	}
	if (gc_graph_opset(e->g, "") < 11) {
		const gc_attr *pads = gc_edit_attr(e, i, "pads");
		if (n->n_in != 1 || !pads || pads->type != GC_ATTR_INTS)
			return false;
		for (int64_t j = 0; j < pads->n; j++)
			if (pads->v.ints[j])
				return false;
		return true;
	}
	const gc_tensor *t = n->n_in > 1 && n->in[1] >= 0 ? gc_edit_const(e, n->in[1]) : NULL;
	if (!t || t->dtype != GC_DTYPE_INT64 || t->rank != 1)
		return false;
	for (int64_t j = 0; j < gc_tensor_numel(t); j++)
		if (((const int64_t *)t->data)[j])
			return false;
	return true;
}

/* Removes pass-through node i (input x, output y). Returns whether it did. */
static bool bypass(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *n = &g->nodes[i];
	int32_t x = n->in[0], y = n->out[0];
	if (x < 0 || y < 0)
		return false;
	const gc_value *xv = &g->values[x];
	if (!gc_edit_is_pinned(e, y)) {
		gc_edit_remove_node(e, i);
		gc_edit_replace_uses(e, y, x);
		return true;
	}
	/* y is a graph output (or read by a subgraph): its name must survive,
	 * so x's producer writes y instead of x. */
	int32_t p = xv->producer;
	if (p < 0 || xv->is_input || xv->constant || gc_edit_is_pinned(e, x))
		return false;
	const gc_irnode *pn = &g->nodes[p];
	int32_t slot = -1;
	for (int j = 0; j < pn->n_out; j++)
		if (pn->out[j] == x)
			slot = j;
	if (slot < 0)
		return false;
	gc_edit_remove_node(e, i);
	gc_edit_replace_uses(e, x, y);
	gc_edit_set_output(e, p, slot, y);
	return true;
}

/* 1 when Identity, Dropout or Pad node i went. */
static int eliminate_one(gc_edit *e, int32_t i)
{
	const gc_irnode *n = &e->g->nodes[i];
	bool through = gc_edit_is_op(e, i, "Identity") ? n->n_in == 1 && n->n_out == 1
		       : gc_edit_is_op(e, i, "Pad")    ? pad_is_identity(e, i)
						       : dropout_is_identity(e, i);
	return through && bypass(e, i);
}

int gc_pass_identity_elimination(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Identity", "Dropout", "Pad", NULL};
	return gc_edit_each(ctx, ops, eliminate_one);
}
