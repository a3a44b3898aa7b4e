/* What a registry's operations declare, for tools and bindings
 * (gc_registry_op_io, gc_registry_op_param in graphcc.h). */
#include <string.h>

#include "package-impl.h"

static const gc_op_spec *op_at(const gc_registry *r, int op)
{
	gc_op_desc d;
	gc_registry_op(r, op, &d);
	return d.domain ? gc_registry_find(r, d.domain, d.type, d.version) : NULL;
}

void gc_registry_op_io(const gc_registry *r, int op, int is_output, int k, gc_io_desc *d)
{
	const gc_op_spec *o = op_at(r, op);
	if (!d)
		return;
	memset(d, 0, sizeof *d);
	int32_t n = !o ? 0 : is_output ? o->n_outputs : o->n_inputs;
	if (k < 0 || k >= n)
		return;
	const gc_io_spec *io = is_output ? &o->outputs[k] : &o->inputs[k];
	*d = (gc_io_desc){ io->name,	 io->max_dims, io->constant,
			   io->optional, io->variadic, io->dtypes };
}

void gc_registry_op_param(const gc_registry *r, int op, int k, gc_param_desc *d)
{
	const gc_op_spec *o = op_at(r, op);
	if (!d)
		return;
	memset(d, 0, sizeof *d);
	if (!o || k < 0 || k >= o->n_params)
		return;
	const gc_param_spec *p = &o->params[k];
	*d = (gc_param_desc){ p->name,	      p->attribute,	 gc_param_kind_name(p->kind),
			      p->scalar,      p->size,		 p->has_default,
			      p->default_count, p->default_data };
}

void gc_registry_op_functions(const gc_registry *r, int op, gc_op_functions *f)
{
	const gc_op_spec *o = op_at(r, op);
	if (!f)
		return;
	memset(f, 0, sizeof *f);
	if (o)
		*f = (gc_op_functions){ o->verify, o->infer_shape, o->select_impl };
}

void gc_registry_impl_functions(const gc_registry *r, int op, int j, gc_impl_functions *f)
{
	const gc_op_spec *o = op_at(r, op);
	if (!f)
		return;
	memset(f, 0, sizeof *f);
	if (!o || j < 0 || j >= o->n_impls)
		return;
	const gc_impl_spec *im = &o->impls[j];
	*f = (gc_impl_functions){ im->init,	      im->destroy,  im->scratch,
				  im->scratch_bytes, im->has_scratch_bytes, im->inplace };
}
