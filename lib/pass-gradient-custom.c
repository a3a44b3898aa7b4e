/*
 * The Gradient pass's rule for op-package operations: the backward
 * operation their manifest's `gradient:` names becomes one more custom node
 * (bound, selected, debugged and saved like any other), reading the forward
 * node's inputs, outputs and incoming gradients as the manifest says, with
 * the forward node's params passed through (or mapped); its outputs are the
 * gradients of the forward inputs they name. Inputs listed as not
 * differentiable get none (the pass treats them as constants).
 */
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "package-impl.h"
#include "pass-gradient-impl.h"

static const gc_op_spec *op_of(grad *c, const gc_irnode *n)
{
	const gc_registry *r = c->opt ? c->opt->registry : NULL;
	if (!r || !n->domain[0] || !strcmp(n->domain, "ai.onnx"))
		return NULL;
	return gc_registry_find(r, n->domain, n->op_type, gc_graph_opset(c->g, n->domain));
}

bool gc_grad_has_rule_custom(grad *c, const gc_irnode *n)
{
	const gc_op_spec *op = op_of(c, n);
	return op && op->grad;
}

/* The forward param fp's value on node nd, as an attribute named `as`:
 * the node's own attribute, else fp's default; false when it has neither. */
static bool param_value(const gc_irnode *nd, const gc_param_spec *fp, const char *as, gc_attr *out)
{
	for (int i = 0; i < nd->n_attr; i++)
		if (!strcmp(nd->attrs[i].name, fp->attribute ? fp->attribute : fp->name)) {
			*out = nd->attrs[i];
			out->name = as;
			return true;
		}
	if (!fp->has_default)
		return false;
	memset(out, 0, sizeof *out);
	out->name = as;
	out->n = fp->scalar ? 1 : fp->default_count;
	switch (fp->kind) {
	case GC_PARAM_BOOL:
		if (!fp->scalar)
			return false;
		out->type = GC_ATTR_INT;
		out->v.i = *(const uint8_t *)fp->default_data;
		return true;
	case GC_PARAM_INT:
		out->type = fp->scalar ? GC_ATTR_INT : GC_ATTR_INTS;
		if (fp->scalar)
			out->v.i = *(const int64_t *)fp->default_data;
		else
			out->v.ints = fp->default_data;
		return true;
	case GC_PARAM_FLOAT:
		out->type = fp->scalar ? GC_ATTR_FLOAT : GC_ATTR_FLOATS;
		if (fp->scalar)
			out->v.f = *(const float *)fp->default_data;
		else
			out->v.floats = fp->default_data;
		return true;
	case GC_PARAM_STRING:
		if (!fp->scalar)
			return false;
		out->type = GC_ATTR_STRING;
		out->v.s = fp->default_data;
		out->n = (int64_t)strlen(out->v.s);
		return true;
	default:
		return false;
	}
}

int gc_grad_rule_custom(grad *c, int32_t node, const int32_t *dzs, const bool *reached,
			int32_t *gv, bool *handled)
{
	const gc_irnode nd = c->g->nodes[node]; /* a copy: adding nodes moves the array */
	const gc_op_spec *op = op_of(c, &nd);
	*handled = op && op->grad;
	if (!*handled)
		return 0;
	const gc_grad_spec *gs = op->grad;
	bool want = false;
	for (int32_t k = 0; k < gs->n_outputs; k++) {
		int32_t x = gs->outputs[k] < nd.n_in ? nd.in[gs->outputs[k]] : -1;
		want |= x >= 0 && reached[x];
	}
	if (!gs->op || !want)
		return 0;
	const gc_op_spec *bop = gc_registry_find(c->opt->registry, gs->domain, gs->op, -1);
	if (!bop || gs->n_inputs > GC_GRAD_MAX_IO || gs->n_outputs > GC_GRAD_MAX_IO)
		return gc_grad_refuse(c, node, ": its backward operation is not loaded");
	int32_t ins[GC_GRAD_MAX_IO], outs[GC_GRAD_MAX_IO];
	vshape shapes[GC_GRAD_MAX_IO];
	for (int32_t k = 0; k < gs->n_inputs; k++) {
		int32_t i = gs->inputs[k].index;
		switch (gs->inputs[k].from) {
		case GC_GRAD_FROM_INPUT:
			ins[k] = i < nd.n_in ? nd.in[i] : -1;
			break;
		case GC_GRAD_FROM_OUTPUT:
			ins[k] = i < nd.n_out ? nd.out[i] : -1;
			break;
		default: {
			int32_t o = i < nd.n_out ? nd.out[i] : -1;
			ins[k] = o < 0 ? -1 : dzs[i];
			if (o >= 0 && ins[k] < 0) { /* no gradient reaches it: zeros */
				vshape os = c->shape[o];
				if ((ins[k] = gc_grad_const_fill(c, os.dtype, os.rank, os.dims, 0)) < 0)
					return c->err->code;
			}
		}
		}
	}
	gc_attr attrs[64];
	int32_t na = 0;
	for (int32_t i = 0; i < bop->n_params && na < 64; i++) {
		const gc_param_spec *bp = &bop->params[i];
		const char *from = bp->name;
		for (int32_t k = 0; k < gs->n_params; k++)
			if (!strcmp(gs->param_to[k], bp->name))
				from = gs->param_from[k];
		const gc_param_spec *fp = gc_op_param(op, from);
		if (fp && param_value(&nd, fp, bp->attribute ? bp->attribute : bp->name, &attrs[na]))
			na++;
	}
	for (int32_t k = 0; k < gs->n_outputs; k++) {
		int32_t x = gs->outputs[k] < nd.n_in ? nd.in[gs->outputs[k]] : -1;
		if (x < 0)
			return gc_grad_refuse(c, node, ": an input its backward differentiates is absent");
		shapes[k] = c->shape[x];
	}
	if (gc_graph_opset(c->g, gs->domain) < 0 &&
	    gc_graph_set_opset(c->g, gs->domain, bop->version < 0 ? 1 : bop->version, c->err))
		return c->err->code;
	int rc = gc_grad_add_multi(c, gs->domain, gs->op, gs->n_inputs, ins, na, attrs,
				   gs->n_outputs, shapes, outs);
	for (int32_t k = 0; k < gs->n_outputs && !rc; k++) {
		int32_t x = nd.in[gs->outputs[k]];
		if (reached[x])
			rc = gc_grad_accumulate(c, gv, x, outs[k]);
	}
	return rc;
}
