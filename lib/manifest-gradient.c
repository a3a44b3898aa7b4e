/*
 * The manifest's `gradient:` checked against the backward operation it
 * names (config/manifest-reference.yaml documents the keys): run when a
 * manifest is parsed (backward operations of the same domain) and when a
 * package joins a registry (every domain, the packages loaded so far).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "package-impl.h"

static const gc_op_spec *find_in(const gc_package *pkg, const char *domain, const char *type)
{
	const gc_op_spec *best = NULL;
	for (int32_t j = 0; pkg && j < pkg->n_ops; j++) {
		const gc_op_spec *o = &pkg->ops[j];
		if (!strcmp(o->domain, domain) && !strcmp(o->type, type) &&
		    (!best || o->version > best->version))
			best = o;
	}
	return best;
}

/* op's param named `name`, or NULL (also when op is NULL). */
const gc_param_spec *gc_op_param(const gc_op_spec *op, const char *name)
{
	for (int32_t i = 0; op && i < op->n_params; i++)
		if (!strcmp(op->params[i].name, name))
			return &op->params[i];
	return NULL;
}

static int check_one(const gc_op_spec *op, const gc_op_spec *b, gc_error *err)
{
	const gc_grad_spec *g = op->grad;
	int32_t need = 0;
	for (int32_t i = 0; i < b->n_inputs; i++)
		need += !b->inputs[i].optional && !b->inputs[i].variadic;
	bool variadic = b->n_inputs && b->inputs[b->n_inputs - 1].variadic;
	if (g->n_inputs < need || (!variadic && g->n_inputs > b->n_inputs))
		return gc_error_set(err, GC_EINVAL,
				    "%s:%d:%d: key 'gradient.inputs': %s gives %s::%s %d inputs; it "
				    "declares %d (%d required)",
				    op->file, g->line, g->col, op->name, b->domain, b->type,
				    g->n_inputs, b->n_inputs, need);
	if (g->n_outputs != b->n_outputs)
		return gc_error_set(err, GC_EINVAL,
				    "%s:%d:%d: key 'gradient.outputs': %s names %d input gradients; "
				    "%s::%s has %d outputs",
				    op->file, g->line, g->col, op->name, g->n_outputs, b->domain,
				    b->type, b->n_outputs);
	for (int32_t i = 0; i < g->n_params; i++)
		if (!gc_op_param(b, g->param_to[i]))
			return gc_error_set(err, GC_EINVAL,
					    "%s:%d:%d: key 'gradient.params': '%s' is no param of "
					    "%s::%s",
					    op->file, g->line, g->col, g->param_to[i], b->domain,
					    b->type);
	for (int32_t i = 0; i < b->n_params; i++) {
		const gc_param_spec *bp = &b->params[i];
		bool mapped = false;
		for (int32_t k = 0; k < g->n_params; k++)
			mapped |= !strcmp(g->param_to[k], bp->name);
		const gc_param_spec *fp = mapped ? NULL : gc_op_param(op, bp->name);
		if (!mapped && fp && (fp->kind != bp->kind || fp->scalar != bp->scalar))
			return gc_error_set(err, GC_EINVAL,
					    "%s:%d:%d: key 'gradient.params': param '%s' is a %s%s "
					    "in %s but a %s%s in %s::%s",
					    op->file, g->line, g->col, bp->name,
					    gc_param_kind_name(fp->kind), fp->scalar ? "" : " vector",
					    op->name, gc_param_kind_name(bp->kind),
					    bp->scalar ? "" : " vector", b->domain, b->type);
		if (!mapped && !fp && !bp->has_default)
			return gc_error_set(err, GC_EINVAL,
					    "%s:%d:%d: key 'gradient.params': %s::%s needs param '%s', "
					    "which %s does not have and nothing maps to it",
					    op->file, g->line, g->col, b->domain, b->type, bp->name,
					    op->name);
	}
	return 0;
}

int gc_package_check_gradients(const gc_package *pkg, const gc_registry *r, gc_error *err)
{
	for (int32_t j = 0; j < pkg->n_ops; j++) {
		const gc_op_spec *op = &pkg->ops[j];
		const gc_grad_spec *g = op->grad;
		if (!g || !g->op)
			continue;
		bool own = !strcmp(g->domain, op->domain);
		const gc_op_spec *b = find_in(pkg, g->domain, g->op);
		if (!b && r)
			b = gc_registry_find(r, g->domain, g->op, -1);
		if (!b && (own || r))
			return gc_error_set(err, GC_EINVAL,
					    "%s:%d:%d: key 'gradient.operation': the backward operation "
					    "%s::%s of %s is declared neither in this manifest nor in a "
					    "package loaded before it",
					    op->file, g->line, g->col, g->domain, g->op, op->name);
		if (b && check_one(op, b, err))
			return err->code;
	}
	return 0;
}
