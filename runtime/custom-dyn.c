/* Custom nodes bound per input shape at run time (custom.h,
 * gc_custom_bind_shape): what lib/bind-custom.c does at compile time, on
 * the shapes a session sees, with the package functions the program pins.
 * Package code is called only through custom.c's gc_custom_call_*. */
#include "custom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "crash.h"
#include "fileio.h"

typedef struct dyn_call {
	const gc_node *n;
	const gc_custom *t; /* the node's binding (t->dyn) */
	gc_kctx *k;
	gc_custom_args a;
	int64_t *dims;
	GcOpContext ctx;
	gc_custom_host host;
	char where[1024];
} dyn_call;

static int dfail(dyn_call *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int dfail(dyn_call *d, int code, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gc_kerr(d->k, code, "operation '%s', bound for this input shape: %s", d->t->op_name,
		       msg);
}

static int64_t *dims_of(const dyn_call *d, int32_t view)
{
	return d->dims + (size_t)view * GC_CUSTOM_DIMS_SLOTS;
}

static const char *reason(const dyn_call *d)
{
	return d->host.msg[0] ? d->host.msg : "it gave no reason";
}

static void context(dyn_call *d, const char *fn)
{
	snprintf(d->where, sizeof d->where,
		 "%s:%s of operation '%s', node '%s' (bound at run time)", d->t->dyn->fn_library,
		 fn, d->t->op_name, d->n->name);
	gc_crash_context = d->where;
	d->host.msg[0] = 0;
}

/* Inputs as the compiler shows them: types and shapes, values of constants
 * only; each against maxDims and the declared types. */
static int input_views(dyn_call *d, gc_tensor *const *in)
{
	const gc_custom *t = d->t;
	for (int32_t i = 0; i < t->n_in; i++) {
		const gc_tensor *x = i < d->n->n_in ? in[i] : NULL;
		CustomOpIOTensor *v = &d->a.in[i];
		gc_custom_view(v, dims_of(d, i), x, t->in_max_dims[i]);
		if (!x)
			continue;
		if (i >= 64 ? d->k->varying != 0 : (d->k->varying >> i & 1))
			v->data = NULL;
		uint32_t m = t->dyn->in_dtypes[i];
		if (m && !(x->dtype < 32 && (m >> x->dtype & 1)))
			return dfail(d, GC_EINVAL,
				     "input %d is %s, which the operation does not take", i,
				     gc_dtype_name(x->dtype));
		if (x->rank > t->in_max_dims[i]) {
			char s[160];
			return dfail(d, GC_EINVAL,
				     "input %d has rank %d (shape %s), above its maxDims %d", i,
				     x->rank, gc_shape_str(x->dims, x->rank, s, sizeof s),
				     t->in_max_dims[i]);
		}
	}
	return 0;
}

static int verify(dyn_call *d, gc_fnptr fn, bool graphcc)
{
	const gc_custom *t = d->t;
	for (int32_t i = 0; i < t->n_out; i++) {
		CustomOpIOTensor *o = &d->a.out[i];
		gc_custom_view(o, dims_of(d, t->n_in + i), NULL, t->out_max_dims[i]);
		if (i < d->n->n_out && d->n->out[i] >= 0)
			o->dtype = DTFloat32;
	}
	context(d, t->dyn->verify);
	GcStatus st = gc_custom_call_verify(fn, graphcc, &d->ctx, &d->a);
	gc_crash_context = NULL;
	if (st == GC_STATUS_OK)
		return 0;
	return dfail(d, GC_EINVAL, "rejected by %s:%s: %s", t->dyn->fn_library, t->dyn->verify,
		     reason(d));
}

/* Output i as inference left it, checked (gc_custom_inferred), into *o. */
static int inferred(dyn_call *d, int32_t i, gc_tensor *o)
{
	const gc_custom *t = d->t;
	const gc_custom_out_decl decl = {
	    .library = t->dyn->fn_library,
	    .function = t->dyn->infer,
	    .op_name = t->op_name,
	    .index = i,
	    .max_dims = t->out_max_dims[i],
	    .dtypes = t->dyn->out_dtypes[i],
	    .limit_bytes = gc_limit_bytes(),
	};
	char msg[800];
	int rc =
	    gc_custom_inferred(&d->a.out[i], dims_of(d, t->n_in + i), &decl, o, msg, sizeof msg);
	return rc ? dfail(d, rc, "%s", msg) : 0;
}

static int infer(dyn_call *d, gc_fnptr fn, bool graphcc, gc_tensor *outs)
{
	const gc_custom *t = d->t;
	for (int32_t i = 0; i < t->n_out; i++) {
		gc_custom_infer_view(&d->a.out[i], dims_of(d, t->n_in + i), t->out_max_dims[i]);
	}
	context(d, t->dyn->infer);
	GcStatus st = gc_custom_call_infer(fn, graphcc, &d->ctx, &d->a);
	gc_crash_context = NULL;
	if (st != GC_STATUS_OK)
		return dfail(d, GC_EINVAL, "shape inference %s:%s failed: %s", t->dyn->fn_library,
			     t->dyn->infer, reason(d));
	for (int32_t i = 0; i < t->n_out; i++) {
		if (inferred(d, i, &outs[i]))
			return d->k->err->code;
		d->a.out[i].numel = gc_tensor_numel(&outs[i]);
	}
	for (int32_t i = 0; i < t->n_out; i++) /* outputs the node leaves out */
		if (i >= d->n->n_out || d->n->out[i] < 0)
			gc_custom_view(&d->a.out[i], dims_of(d, t->n_in + i), NULL,
				       t->out_max_dims[i]);
	return 0;
}

static int choose(dyn_call *d, gc_fnptr fn, bool graphcc, const gc_custom_impl **im)
{
	const gc_custom_dyn *y = d->t->dyn;
	const char *flavour = NULL;
	context(d, y->select);
	GcStatus st = gc_custom_call_select(fn, graphcc, &d->ctx, &d->a, &flavour);
	gc_crash_context = NULL;
	if (st != GC_STATUS_OK)
		return dfail(d, GC_EINVAL, "selection %s:%s chose no implementation: %s",
			     y->fn_library, y->select, reason(d));
	char have[400] = "";
	size_t at = 0;
	for (int32_t j = 0; j < y->n_impls; j++) {
		if (!strcmp(y->impls[j].flavour, flavour)) {
			*im = &y->impls[j];
			return 0;
		}
		if (at < sizeof have)
			at += (size_t)snprintf(have + at, sizeof have - at, "%s'%s'", j ? ", " : "",
					       y->impls[j].flavour);
	}
	return dfail(d, GC_EINVAL,
		     "selection %s:%s returned flavour '%.100s', which the program "
		     "does not pin (it has: %s)",
		     y->fn_library, y->select, flavour, have);
}

/* The implementation's accepts: rules against the inputs. */
static int accepts(dyn_call *d, const gc_custom_impl *im, gc_tensor *const *in)
{
	for (int32_t r = 0; r < im->n_accepts; r++) {
		const gc_custom_accept *a = &im->accepts[r];
		const gc_tensor *t = a->input < d->n->n_in ? in[a->input] : NULL;
		char s[160];
		if (!t)
			continue;
		if ((a->dtypes && !(t->dtype < 32 && (a->dtypes >> t->dtype & 1))) ||
		    (a->ranks && !(t->rank >= 0 && t->rank < 32 && (a->ranks >> t->rank & 1))) ||
		    (a->last_dim_multiple &&
		     (t->rank < 1 || t->dims[t->rank - 1] % a->last_dim_multiple)))
			return dfail(d, GC_EINVAL,
				     "selection %s:%s chose flavour '%s', whose accepts: "
				     "rules do not take input %d (%s %s)",
				     d->t->dyn->fn_library, d->t->dyn->select, im->flavour,
				     (int)a->input, gc_dtype_name(t->dtype),
				     gc_shape_str(t->dims, t->rank, s, sizeof s));
	}
	return 0;
}

/* The chosen implementation's scratch bytes, from its scratch function
 * when it has one. */
static int scratch(dyn_call *d, const gc_custom_impl *im, gc_custom *c)
{
	c->kernel_scratch = im->scratch_bytes;
	if (!im->scratch_sym)
		return 0;
	gc_dynlib *lib = NULL;
	gc_fnptr fn = NULL;
	if (gc_dynlib_open(im->library, &lib, d->k->err) ||
	    !(fn = gc_dynlib_fn(lib, im->scratch_sym, d->k->err))) {
		gc_dynlib_release(lib);
		return d->k->err->code;
	}
	uint64_t bytes = 0;
	gc_custom_ctx_init(&d->ctx, &d->host, c->op_name, c->domain, c->op_type, d->n->name,
			   c->backend, c->flavour, c->config);
	snprintf(d->where, sizeof d->where, "%s:%s of operation '%s', node '%s'", im->library,
		 im->scratch_sym, c->op_name, d->n->name);
	gc_crash_context = d->where;
	GcStatus st = gc_custom_call_scratch(fn, &d->ctx, &d->a, &bytes);
	gc_crash_context = NULL;
	gc_dynlib_release(lib);
	if (st != GC_STATUS_OK)
		return dfail(d, GC_EINVAL, "scratch function %s:%s failed: %s", im->library,
			     im->scratch_sym, reason(d));
	if (bytes > (uint64_t)1 << 40)
		return dfail(d, GC_ELIMIT, "scratch function %s:%s asks for %" PRIu64 " bytes",
			     im->library, im->scratch_sym, bytes);
	c->kernel_scratch = bytes;
	return 0;
}

/* verify, inferShape, selectImpl of the pinned functions library. */
static int call_functions(dyn_call *d, gc_tensor *const *in, gc_tensor *outs,
			  const gc_custom_impl **im)
{
	const gc_custom_dyn *y = d->t->dyn;
	gc_dynlib *lib = NULL;
	bool graphcc = false;
	gc_fnptr fv = NULL, fi = NULL, fs = NULL;
	int rc = 0;
	if (gc_dynlib_open(y->fn_library, &lib, d->k->err) ||
	    gc_dynlib_abi(lib, &graphcc, d->k->err) ||
	    !(fv = gc_dynlib_fn(lib, y->verify, d->k->err)) ||
	    !(fi = gc_dynlib_fn(lib, y->infer, d->k->err)) ||
	    !(fs = gc_dynlib_fn(lib, y->select, d->k->err)))
		rc = d->k->err->code;
	if (!rc)
		rc = input_views(d, in);
	if (!rc)
		rc = verify(d, fv, graphcc);
	if (!rc)
		rc = infer(d, fi, graphcc, outs);
	if (!rc)
		rc = choose(d, fs, graphcc, im);
	if (!rc)
		rc = accepts(d, *im, in);
	gc_dynlib_release(lib);
	return rc;
}

void gc_custom_bound_free(gc_custom *c)
{
	gc_free(c);
}

int gc_custom_bind_shape(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_custom **bound)
{
	const gc_custom *t = n->custom;
	*bound = NULL;
	int32_t nv = t->n_in + t->n_out;
	/* one block: the binding, its outputs, the views and their dims */
	size_t sz = sizeof(gc_custom) + ((size_t)t->n_out + 1) * sizeof(gc_tensor) +
		    ((size_t)nv + 1) * sizeof(CustomOpIOTensor);
	char *blk = gc_calloc(1, sz + ((size_t)nv + 1) * GC_CUSTOM_DIMS_SLOTS * sizeof(int64_t));
	if (!blk)
		return gc_kerr(k, GC_ENOMEM, "out of memory binding node '%s'", n->name);
	gc_custom *c = (gc_custom *)blk;
	gc_tensor *outs = (gc_tensor *)(c + 1);
	dyn_call d = {.n = n, .t = t, .k = k};
	d.a = gc_custom_args_of(t, (CustomOpIOTensor *)(outs + t->n_out + 1));
	d.dims = (int64_t *)(blk + sz);
	gc_custom_ctx_init(&d.ctx, &d.host, t->op_name, t->domain, t->op_type, n->name, t->backend,
			   NULL, "");
	const gc_custom_impl *im = NULL;
	int rc = call_functions(&d, in, outs, &im);
	if (rc) {
		gc_free(blk);
		return rc;
	}
	*c = *t;
	c->dyn = NULL;
	c->outs = outs;
	c->flavour = im->flavour;
	c->library = im->library;
	c->symbol = im->symbol;
	c->config = im->config;
	c->init_sym = im->init_sym;
	c->destroy_sym = im->destroy_sym;
	c->inplace = im->inplace;
	c->lib = NULL;
	c->kernel = c->init = c->destroy = NULL;
	c->initialised = false;
	c->state = NULL;
	if ((rc = scratch(&d, im, c))) {
		gc_free(blk);
		return rc;
	}
	*bound = c;
	return 0;
}
