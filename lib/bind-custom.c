#include "bind-custom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"

typedef struct binder {
	const gc_graph *g;
	const gc_irnode *n;
	gc_tensor *const *in; /* the node's inputs (NULL: absent) */
	const gc_op_spec *op;
	char label[400]; /* "model.onnx: node 'n' (dom::Type)" */
	gc_pool *pool;
	gc_error *err;
	const char *flavour; /* gc_compile_options.flavour: bind this one after selection */
	const gc_custom_quant *quant; /* the node's edges bound quantized (pass-qdq.c), or NULL */
	bool per_shape; /* bound at run time: inputs of shapes only known then */
} binder;

/* The quantization of input i / output i of the node (NULL: a plain edge). */
static const gc_custom_quant *in_quant(const binder *b, int32_t i)
{
	return b->quant && i < b->n->n_in && gc_custom_quant_on(&b->quant[i]) ? &b->quant[i]
										 : NULL;
}

static const gc_custom_quant *out_quant(const binder *b, int32_t i)
{
	const gc_custom_quant *q = b->quant ? &b->quant[b->n->n_in + i] : NULL;
	return q && i < b->n->n_out && gc_custom_quant_on(q) ? q : NULL;
}

/* "qint8, quint8" of a qtypes mask. */
static const char *qtypes_str(uint32_t mask, char *buf, size_t len)
{
	static const char *const names[] = { "qint8", "quint8", "qint16", "qint32" };
	size_t at = 0;
	buf[0] = 0;
	for (int k = DTQInt8; k <= DTQInt32 && at < len; k++)
		if (mask >> k & 1)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
					       names[k - DTQInt8]);
	return buf;
}

static int bfail(binder *b, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int bfail(binder *b, int code, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gc_error_set(b->err, code, "%s: %s", b->label, msg);
}

static const char *attr_kind(gc_param_kind k, bool scalar)
{
	static const char *const s[] = { "int", "int", "float", "string" };
	static const char *const v[] = { "ints", "ints", "floats", "strings" };
	return scalar ? s[k] : v[k];
}

/* The param from the node's attribute (or the default). */
static int make_param(binder *b, const gc_param_spec *ps, const gc_attr *a, CustomOpParam *cp)
{
	static const CustomOpDataType dts[] = { DTBool, DTIInt64, DTFloat32, DTString };
	/* Everything is copied into the program's pool: a program outlives
	 * the registry that bound it. */
	cp->name = gc_pool_strdup(b->pool, ps->name);
	cp->dtype = dts[ps->kind];
	cp->size = 0;
	if (!cp->name)
		return bfail(b, GC_ENOMEM, "out of memory");
	if (!a) {
		if (!ps->has_default)
			return bfail(b, GC_EINVAL,
				     "the node has no attribute '%s' for param '%s' of operation "
				     "'%s' (%s:%d), and the param has no default",
				     ps->attribute, ps->name, b->op->name, b->op->file, ps->line);
		cp->size = ps->scalar ? 0 : ps->default_count;
		if (ps->kind == GC_PARAM_STRING && ps->scalar) {
			cp->data = gc_pool_strdup(b->pool, ps->default_data);
		} else if (ps->kind == GC_PARAM_STRING) {
			char **ss = gc_pool_alloc(b->pool, ((size_t)cp->size + 1) * sizeof *ss);
			for (int32_t i = 0; ss && i < cp->size; i++)
				if (!(ss[i] = gc_pool_strdup(b->pool, ((char **)ps->default_data)[i])))
					ss = NULL;
			cp->data = ss;
		} else {
			size_t es = ps->kind == GC_PARAM_BOOL ? 1 : ps->kind == GC_PARAM_INT ? 8 : 4;
			cp->data = gc_pool_memdup(b->pool, ps->default_data,
						  es * (size_t)(ps->scalar ? 1 : cp->size + 1));
		}
		return cp->data ? 0 : bfail(b, GC_ENOMEM, "out of memory");
	}
	static const gc_attr_type want_scalar[] = { GC_ATTR_INT, GC_ATTR_INT, GC_ATTR_FLOAT,
						    GC_ATTR_STRING };
	static const gc_attr_type want_vector[] = { GC_ATTR_INTS, GC_ATTR_INTS, GC_ATTR_FLOATS,
						    GC_ATTR_STRINGS };
	gc_attr_type want = ps->scalar ? want_scalar[ps->kind] : want_vector[ps->kind];
	if (a->type != want)
		return bfail(b, GC_EINVAL,
			     "attribute '%s' is of type %s, but param '%s' of operation '%s' is "
			     "%s %s (ONNX attribute type %s)",
			     a->name, gc_attr_type_name(a->type), ps->name, b->op->name,
			     ps->kind == GC_PARAM_INT ? "an int" : ps->kind == GC_PARAM_BOOL ? "a bool"
				 : ps->kind == GC_PARAM_FLOAT				   ? "a float"
											   : "a string",
			     ps->scalar ? "scalar" : "vector",
			     attr_kind(ps->kind, ps->scalar));
	if (!ps->scalar && ps->size >= 0 && a->n != ps->size)
		return bfail(b, GC_EINVAL,
			     "attribute '%s' has %" PRId64 " values; param '%s' of operation '%s' "
			     "needs exactly %d",
			     a->name, a->n, ps->name, b->op->name, ps->size);
	if (!ps->scalar && a->n > (1 << 24))
		return bfail(b, GC_ELIMIT, "attribute '%s' has too many values", a->name);
	switch (ps->kind) {
	case GC_PARAM_BOOL:
		if (ps->scalar) {
			if (a->v.i != 0 && a->v.i != 1)
				return bfail(b, GC_EINVAL,
					     "attribute '%s' is %" PRId64 "; bool param '%s' takes 0 or 1",
					     a->name, a->v.i, ps->name);
			uint8_t *d = gc_pool_alloc(b->pool, 1);
			if (!d)
				return bfail(b, GC_ENOMEM, "out of memory");
			*d = (uint8_t)a->v.i;
			cp->data = d;
		} else {
			uint8_t *d = gc_pool_alloc(b->pool, (size_t)a->n + 1);
			if (!d)
				return bfail(b, GC_ENOMEM, "out of memory");
			for (int64_t i = 0; i < a->n; i++) {
				if (a->v.ints[i] != 0 && a->v.ints[i] != 1)
					return bfail(b, GC_EINVAL,
						     "attribute '%s'[%" PRId64 "] is %" PRId64
						     "; bool param '%s' takes 0 or 1",
						     a->name, i, a->v.ints[i], ps->name);
				d[i] = (uint8_t)a->v.ints[i];
			}
			cp->data = d;
			cp->size = (int32_t)a->n;
		}
		return 0;
	case GC_PARAM_INT:
		cp->data = gc_pool_memdup(b->pool, ps->scalar ? &a->v.i : a->v.ints,
					  ps->scalar ? 8 : (size_t)a->n * 8 + 8);
		cp->size = ps->scalar ? 0 : (int32_t)a->n;
		break;
	case GC_PARAM_FLOAT:
		cp->data = gc_pool_memdup(b->pool, ps->scalar ? &a->v.f : a->v.floats,
					  ps->scalar ? 4 : (size_t)a->n * 4 + 4);
		cp->size = ps->scalar ? 0 : (int32_t)a->n;
		break;
	case GC_PARAM_STRING:
		if (ps->scalar) {
			cp->data = gc_pool_strdup(b->pool, a->v.s);
		} else {
			char **ss = gc_pool_alloc(b->pool, ((size_t)a->n + 1) * sizeof *ss);
			if (ss)
				for (int64_t i = 0; i < a->n; i++)
					if (!(ss[i] = gc_pool_strdup(b->pool, a->v.strings[i])))
						ss = NULL;
			cp->data = ss;
			cp->size = (int32_t)a->n;
		}
		break;
	default:
		break;
	}
	return cp->data ? 0 : bfail(b, GC_ENOMEM, "out of memory");
}

static int make_params(binder *b, const gc_irnode *n, CustomOpParam *params)
{
	const gc_op_spec *op = b->op;
	for (int32_t i = 0; i < n->n_attr; i++) {
		const gc_attr *a = &n->attrs[i];
		bool declared = false;
		for (int32_t j = 0; j < op->n_params; j++)
			declared |= !strcmp(op->params[j].attribute, a->name);
		if (!declared) {
			char list[512] = "";
			size_t at = 0;
			for (int32_t j = 0; j < op->n_params && at < sizeof list; j++)
				at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
						       j ? ", " : "", op->params[j].attribute);
			return bfail(b, GC_EINVAL,
				     "attribute '%s' is not declared by operation '%s' (%s:%d); its "
				     "params read the attributes: %s",
				     a->name, op->name, op->file, op->line, at ? list : "(none)");
		}
	}
	for (int32_t j = 0; j < op->n_params; j++) {
		const gc_param_spec *ps = &op->params[j];
		const gc_attr *a = NULL;
		for (int32_t i = 0; i < n->n_attr; i++)
			if (!strcmp(n->attrs[i].name, ps->attribute))
				a = &n->attrs[i];
		if (make_param(b, ps, a, &params[j]))
			return b->err->code;
	}
	return 0;
}

static const gc_io_spec *input_spec(const gc_op_spec *op, int32_t i)
{
	if (i < op->n_inputs)
		return &op->inputs[i];
	if (op->n_inputs && op->inputs[op->n_inputs - 1].variadic)
		return &op->inputs[op->n_inputs - 1];
	return NULL;
}

static int check_inputs(binder *b, const gc_irnode *n, gc_tensor *const *in)
{
	const gc_op_spec *op = b->op;
	int32_t min = 0, max = op->n_inputs;
	for (int32_t i = 0; i < op->n_inputs; i++)
		if (!op->inputs[i].optional)
			min = i + 1;
	bool variadic = op->n_inputs && op->inputs[op->n_inputs - 1].variadic;
	if (n->n_in < min || (!variadic && n->n_in > max)) {
		char takes[64];
		if (variadic)
			snprintf(takes, sizeof takes, "%d or more", min);
		else if (min == max)
			snprintf(takes, sizeof takes, "%d", min);
		else
			snprintf(takes, sizeof takes, "%d to %d", min, max);
		return bfail(b, GC_EINVAL, "has %d inputs; operation '%s' (%s:%d) takes %s", n->n_in,
			     op->name, op->file, op->line, takes);
	}
	for (int32_t i = 0; i < n->n_in; i++) {
		const gc_io_spec *s = input_spec(op, i);
		const gc_tensor *t = in[i];
		if (!t) {
			if (!s->optional)
				return bfail(b, GC_EINVAL, "input %d ('%s') is missing and not optional",
					     i, s->name);
			continue;
		}
		char shp[160];
		if (b->per_shape && (t->rank == GC_RANK_DYNAMIC || t->dtype == GC_DTYPE_UNDEFINED))
			continue; /* checked when bound (runtime/custom-dyn.c) */
		if (t->rank > s->max_dims)
			return bfail(b, GC_EINVAL,
				     "input %d ('%s') has rank %d (shape %s), above its maxDims %d in "
				     "%s:%d",
				     i, s->name, t->rank, gc_shape_str(t->dims, t->rank, shp, sizeof shp),
				     s->max_dims, op->file, s->line);
		const gc_custom_quant *q = in_quant(b, i);
		if (q && gc_custom_dtype_back((CustomOpDataType)q->dtype) != t->dtype)
			return bfail(b, GC_EINVAL, "graphcc bug: input %d ('%s') is bound %s but is %s",
				     i, s->name, gc_custom_dtype_name((CustomOpDataType)q->dtype),
				     gc_dtype_name(t->dtype));
		char qs[64];
		if (!q && s->dtypes == GC_IO_NO_PLAIN_DTYPES)
			return bfail(b, GC_EINVAL,
				     "input %d ('%s') is %s, but operation '%s' takes only the "
				     "quantized types [%s] there (dtypes at %s:%d): it must be read "
				     "from a DequantizeLinear with a constant per-tensor scale and "
				     "zero point of that type",
				     i, s->name, gc_dtype_name(t->dtype), op->name,
				     qtypes_str(s->qtypes, qs, sizeof qs), op->file, s->line);
		if (!q && s->dtypes && !(t->dtype < 32 && (s->dtypes >> t->dtype & 1)))
			return bfail(b, GC_EINVAL,
				     "input %d ('%s') is %s, which operation '%s' does not accept "
				     "(dtypes at %s:%d)",
				     i, s->name, gc_dtype_name(t->dtype), op->name, op->file, s->line);
		if (gc_custom_dtype(t->dtype) == DTCustomOpDataTypeCount)
			return bfail(b, GC_EUNSUPPORTED,
				     "input %d ('%s') is %s, which op packages cannot receive", i,
				     s->name, gc_dtype_name(t->dtype));
		if (s->constant && !t->data)
			return bfail(b, GC_EINVAL,
				     "input %d ('%s') must be a constant (an initializer), as "
				     "declared at %s:%d, but it is a graph input or computed by the graph",
				     i, s->name, op->file, s->line);
	}
	/* ONNX lets a node drop trailing outputs or leave one unnamed: only
	 * optional ones. */
	int32_t min_out = 0;
	for (int32_t i = 0; i < op->n_outputs; i++)
		if (!op->outputs[i].optional)
			min_out = i + 1;
	if (n->n_out < min_out || n->n_out > op->n_outputs) {
		char takes[64];
		if (min_out == op->n_outputs)
			snprintf(takes, sizeof takes, "%d", min_out);
		else
			snprintf(takes, sizeof takes, "%d to %d (the rest are optional)", min_out,
				 op->n_outputs);
		return bfail(b, GC_EINVAL, "has %d outputs; operation '%s' (%s:%d) has %s", n->n_out,
			     op->name, op->file, op->line, takes);
	}
	for (int32_t i = 0; i < n->n_out; i++)
		if (n->out[i] < 0 && !op->outputs[i].optional)
			return bfail(b, GC_EINVAL,
				     "leaves output %d ('%s') unnamed, but it is not optional (%s:%d)",
				     i, op->outputs[i].name, op->file, op->outputs[i].line);
	return 0;
}

/* Whether output i of node n is absent: dropped or unnamed (only optional
 * ones may be, check_inputs made sure). */
static bool output_absent(const gc_irnode *n, int32_t i)
{
	return i >= n->n_out || n->out[i] < 0;
}

/* Tells crash capture which package function is about to run. */
static void crash_context(char *buf, size_t len, const binder *b, const char *lib,
			  const char *fn)
{
	snprintf(buf, len, "%s:%s of operation '%s' (%s), binding %s", lib, fn, b->op->name,
		 b->op->file, b->label);
	gc_crash_context = buf;
}

/* What the package functions of one binding see: the views (inputs, then
 * outputs, each with GC_CUSTOM_DIMS_SLOTS dims), the params and one context. */
typedef struct bind_call {
	gc_custom_args a;
	int64_t *dims;
	GcOpContext ctx;
	gc_custom_host host;
	char where[1024]; /* the crash context */
} bind_call;

static int64_t *out_dims(const bind_call *bc, int32_t i)
{
	return bc->dims + (size_t)(bc->a.n_in + i) * GC_CUSTOM_DIMS_SLOTS;
}

/* The views of outputs the node leaves out, for every call but shape
 * inference (which sets every declared output). */
static void absent_outputs(const binder *b, bind_call *bc)
{
	for (int32_t i = 0; i < bc->a.n_out; i++)
		if (output_absent(b->n, i))
			gc_custom_view(&bc->a.out[i], out_dims(bc, i), NULL,
				       b->op->outputs[i].max_dims);
}

/* "inputs x float32 2x3, w (absent); params alpha = 2": what package code
 * was given, for a failure it gave no reason for. */
static void describe_call(const binder *b, const bind_call *bc, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "inputs");
	for (int32_t i = 0; i < bc->a.n_in && at < len; i++) {
		const CustomOpIOTensor *v = &bc->a.in[i];
		char shp[160];
		const char *name = input_spec(b->op, i)->name;
		if (!gcInputPresent(v))
			at += (size_t)snprintf(buf + at, len - at, "%s %s (absent)", i ? "," : "",
					       name);
		else
			at += (size_t)snprintf(buf + at, len - at, "%s %s %s %s", i ? "," : "", name,
					       gc_dtype_name(gc_custom_dtype_back(v->dtype)),
					       gc_shape_str(v->dims, v->rank, shp, sizeof shp));
	}
	for (int32_t i = 0; i < bc->a.n_params && at < len; i++) {
		const CustomOpParam *cp = &bc->a.params[i];
		at += (size_t)snprintf(buf + at, len - at, "%s %s = ", i ? "," : "; params", cp->name);
		for (int32_t k = 0; k < (cp->size ? cp->size : 1) && k < 8 && at < len; k++) {
			const char *sep = k ? ", " : cp->size ? "[" : "";
			switch (cp->dtype) {
			case DTFloat32:
				at += (size_t)snprintf(buf + at, len - at, "%s%g", sep,
						       ((const float *)cp->data)[k]);
				break;
			case DTIInt64:
				at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64, sep,
						       ((const int64_t *)cp->data)[k]);
				break;
			case DTBool:
				at += (size_t)snprintf(buf + at, len - at, "%s%s", sep,
						       ((const uint8_t *)cp->data)[k] ? "true" : "false");
				break;
			default:
				at += (size_t)snprintf(buf + at, len - at, "%s'%.60s'", sep,
						       cp->size ? ((const char *const *)cp->data)[k]
								: (const char *)cp->data);
			}
		}
		if (cp->size && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s]", cp->size > 8 ? ", ..." : "");
	}
}

/* verify: outputs are not known yet (rank 0). */
static int bind_verify(binder *b, bind_call *bc)
{
	const gc_op_spec *op = b->op;
	for (int32_t i = 0; i < bc->a.n_out; i++) {
		gc_custom_view(&bc->a.out[i], out_dims(bc, i), NULL, op->outputs[i].max_dims);
		bc->a.out[i].dtype = DTFloat32;
		gc_custom_view_quant(&bc->a.out[i], out_quant(b, i));
	}
	absent_outputs(b, bc);
	bc->host.msg[0] = 0;
	crash_context(bc->where, sizeof bc->where, b, op->functions_library, op->verify);
	if (gc_custom_call_verify(op->verify_fn, op->graphcc_iface, &bc->ctx, &bc->a) ==
	    GC_STATUS_OK)
		return 0;
	if (bc->host.msg[0])
		return bfail(b, GC_EINVAL, "rejected by %s:%s of operation '%s': %s",
			     op->functions_library, op->verify, op->name, bc->host.msg);
	char given[512];
	describe_call(b, bc, given, sizeof given);
	return bfail(b, GC_EINVAL,
		     "rejected by %s:%s of operation '%s' (verify returned %s without a reason); it "
		     "was given %s",
		     op->functions_library, op->verify, op->name,
		     op->graphcc_iface ? "a failure" : "false", given);
}

/* What shape inference made of output i, against the model's value_info
 * for that tensor (when the model has one): type, rank and every dimension
 * the model fixes (a symbolic one, dim_param, fits any size). */
static int against_value_info(binder *b, int32_t i, const gc_tensor *t)
{
	const gc_op_spec *op = b->op;
	if (i >= b->n->n_out || b->n->out[i] < 0)
		return 0;
	const gc_value *v = &b->g->values[b->n->out[i]];
	if (!v->has_info)
		return 0;
	const char *lib = op->functions_library, *fn = op->infer_shape;
	if (v->dtype != GC_DTYPE_UNDEFINED && v->dtype != t->dtype)
		return bfail(b, GC_EINVAL,
			     "shape inference %s:%s made output %d ('%s', tensor '%s') %s, but the "
			     "model declares that tensor %s (value_info or graph output)",
			     lib, fn, i, op->outputs[i].name, v->name, gc_dtype_name(t->dtype),
			     gc_dtype_name(v->dtype));
	bool fits = v->rank < 0 || v->rank == t->rank;
	for (int k = 0; fits && v->rank > 0 && k < v->rank; k++)
		fits = v->dims[k] < 0 || v->dims[k] == t->dims[k];
	if (fits)
		return 0;
	char inf[160], decl[160];
	gc_shape_str(t->dims, t->rank, inf, sizeof inf);
	gc_shape_str(v->dims, v->rank, decl, sizeof decl);
	return bfail(b, GC_EINVAL,
		     "shape inference %s:%s inferred output %d ('%s', tensor '%s') as %s, but the "
		     "model's value_info says %s (graphcc sizes the tensor by the inference: a "
		     "kernel that writes the declared shape would overrun it)",
		     lib, fn, i, op->outputs[i].name, v->name, inf, decl);
}

/* Output i as shape inference left it, checked (custom.h,
 * gc_custom_inferred), into *t. */
static int inferred_output(binder *b, const bind_call *bc, int32_t i, gc_tensor *t)
{
	const gc_op_spec *op = b->op;
	const gc_custom_out_decl decl = {
	    .library = op->functions_library,
	    .function = op->infer_shape,
	    .op_name = op->name,
	    .index = i,
	    .name = op->outputs[i].name,
	    .max_dims = op->outputs[i].max_dims,
	    .dtypes = op->outputs[i].dtypes,
	    .dtypes_file = op->file,
	    .dtypes_line = op->outputs[i].line,
	    .quant = out_quant(b, i),
	};
	char msg[900];
	int rc = gc_custom_inferred(&bc->a.out[i], out_dims(bc, i), &decl, t, msg, sizeof msg);
	if (rc)
		return bfail(b, rc, "%s", msg);
	return against_value_info(b, i, t);
}

/* shape inference: outputs arrive with rank maxDims, a dims buffer of
 * maxDims entries (guarded past its end) and dtype DTFloat32. The inferred
 * outputs go to *outs (in the pool). */
static int bind_infer(binder *b, bind_call *bc, gc_tensor **outs)
{
	const gc_op_spec *op = b->op;
	int32_t n_out = bc->a.n_out;
	for (int32_t i = 0; i < n_out; i++) {
		gc_custom_infer_view(&bc->a.out[i], out_dims(bc, i), op->outputs[i].max_dims);
		gc_custom_view_quant(&bc->a.out[i], out_quant(b, i));
	}
	bc->host.msg[0] = 0;
	crash_context(bc->where, sizeof bc->where, b, op->functions_library, op->infer_shape);
	if (gc_custom_call_infer(op->infer_fn, op->graphcc_iface, &bc->ctx, &bc->a) !=
	    GC_STATUS_OK)
		return bfail(b, GC_EINVAL, "shape inference %s:%s of operation '%s' failed%s%s",
			     op->functions_library, op->infer_shape, op->name,
			     bc->host.msg[0] ? ": " : "", bc->host.msg);
	gc_tensor *t = gc_pool_alloc(b->pool, ((size_t)n_out + 1) * sizeof *t);
	if (!t)
		return bfail(b, GC_ENOMEM, "out of memory");
	for (int32_t i = 0; i < n_out; i++) {
		if (inferred_output(b, bc, i, &t[i]))
			return b->err->code;
		bc->a.out[i].numel = gc_tensor_numel(&t[i]);
		gc_custom_view_quant(&bc->a.out[i], out_quant(b, i));
	}
	absent_outputs(b, bc);
	*outs = t;
	return 0;
}

/* selection: the implementation of `backend` whose type the selection
 * function returns. */
static int bind_select(binder *b, bind_call *bc, const char *backend,
		       const gc_impl_spec **chosen)
{
	const gc_op_spec *op = b->op;
	const char *flavour = NULL;
	bc->host.msg[0] = 0;
	crash_context(bc->where, sizeof bc->where, b, op->functions_library, op->select_impl);
	if (gc_custom_call_select(op->select_fn, op->graphcc_iface, &bc->ctx, &bc->a,
				  &flavour) != GC_STATUS_OK)
		return bfail(b, GC_EINVAL,
			     "selection %s:%s of operation '%s' chose no implementation for "
			     "backend %s%s%s",
			     op->functions_library, op->select_impl, op->name, backend,
			     bc->host.msg[0] ? ": " : " (it returned NULL)", bc->host.msg);
	const gc_impl_spec *im = NULL;
	char have[512] = "";
	size_t at = 0;
	for (int32_t j = 0; j < op->n_impls; j++) {
		const gc_impl_spec *x = &op->impls[j];
		if (x->skipped || strcmp(x->backend, backend))
			continue;
		if (!strcmp(x->type, flavour))
			im = x;
		if (at < sizeof have)
			at += (size_t)snprintf(have + at, sizeof have - at, "%s'%s'", at ? ", " : "",
					       x->type);
	}
	if (!im)
		return bfail(b, GC_EINVAL,
			     "selection %s:%s returned flavour '%.100s', but operation '%s' (%s) "
			     "has no %s implementation of that type (it has: %s)",
			     op->functions_library, op->select_impl, flavour, op->name, op->file,
			     backend, at ? have : "none");
	if (b->flavour) {
		im = NULL;
		for (int32_t j = 0; j < op->n_impls; j++)
			if (!op->impls[j].skipped && !strcmp(op->impls[j].backend, backend) &&
			    !strcmp(op->impls[j].type, b->flavour))
				im = &op->impls[j];
		if (!im)
			return bfail(b, GC_EINVAL,
				     "flavour '%.100s' was asked for, but operation '%s' (%s) has no "
				     "%s implementation of that type (it has: %s)",
				     b->flavour, op->name, op->file, backend, at ? have : "none");
	}
	char why[400];
	if (!gc_impl_accepts(op, im, b->in, b->n->n_in, why, sizeof why))
		return bfail(b, GC_EINVAL,
			     "selection %s:%s chose flavour '%s', which does not accept the node: %s",
			     op->functions_library, op->select_impl, im->type, why);
	*chosen = im;
	return 0;
}

/* The chosen implementation's scratch bytes (its scratch function, after
 * selection, or its scratchBytes). */
static int bind_scratch(binder *b, bind_call *bc, gc_custom *c, const gc_impl_spec *im,
			const char *node_name)
{
	const gc_op_spec *op = b->op;
	if (!im->scratch) {
		c->kernel_scratch = im->has_scratch_bytes ? im->scratch_bytes : 0;
		return 0;
	}
	gc_fnptr fn = gc_dynlib_fn(im->lib, im->scratch, b->err);
	uint64_t bytes = 0;
	gc_custom_ctx_init(&bc->ctx, &bc->host, op->name, op->domain, op->type, node_name,
			   c->backend, c->flavour, c->config);
	crash_context(bc->where, sizeof bc->where, b, im->impl, im->scratch);
	if (!fn || gc_custom_call_scratch(fn, &bc->ctx, &bc->a, &bytes) != GC_STATUS_OK)
		return bfail(b, GC_EINVAL, "scratch function %s:%s failed%s%s", im->impl,
			     im->scratch, bc->host.msg[0] ? ": " : "", bc->host.msg);
	if (bytes > (uint64_t)1 << 40)
		return bfail(b, GC_ELIMIT, "scratch function %s:%s asks for %" PRIu64 " bytes",
			     im->impl, im->scratch, bytes);
	c->kernel_scratch = bytes;
	return 0;
}

/* The binding as the program keeps it: everything copied into the pool
 * (a program outlives the registry that bound it). */
static int bind_record(binder *b, const gc_impl_spec *im, const char *backend,
		       const bind_call *bc, gc_tensor *outs, gc_custom *c)
{
	const gc_op_spec *op = b->op;
	gc_pool *pool = b->pool;
	int32_t n_in = bc->a.n_in, n_out = bc->a.n_out;
	memset(c, 0, sizeof *c);
	c->manifest = gc_pool_strdup(pool, op->file);
	c->op_name = gc_pool_strdup(pool, op->name);
	c->domain = gc_pool_strdup(pool, op->domain);
	c->op_type = gc_pool_strdup(pool, op->type);
	c->flavour = gc_pool_strdup(pool, im->type);
	c->backend = gc_pool_strdup(pool, backend);
	c->config = gc_pool_strdup(pool, im->config);
	c->library = gc_pool_strdup(pool, im->impl);
	c->symbol = gc_pool_strdup(pool, im->symbol);
	char where[1200];
	snprintf(where, sizeof where, "%s:%s", op->functions_library, op->infer_shape);
	c->infer_where = gc_pool_strdup(pool, where);
	c->init_sym = im->init ? gc_pool_strdup(pool, im->init) : NULL;
	c->destroy_sym = im->destroy ? gc_pool_strdup(pool, im->destroy) : NULL;
	c->in_max_dims = gc_pool_alloc(pool, ((size_t)n_in + 1) * sizeof(int32_t));
	c->out_max_dims = gc_pool_alloc(pool, ((size_t)n_out + 1) * sizeof(int32_t));
	if (!c->manifest || !c->op_name || !c->domain || !c->op_type || !c->config ||
	    !c->library || !c->symbol || !c->infer_where || (im->init && !c->init_sym) ||
	    (im->destroy && !c->destroy_sym) || !c->flavour || !c->backend || !c->in_max_dims ||
	    !c->out_max_dims)
		return bfail(b, GC_ENOMEM, "out of memory");
	c->inplace = im->inplace;
	c->pure = op->pure;
	c->n_params = op->n_params;
	c->params = bc->a.params;
	c->n_in = n_in;
	c->n_out = n_out;
	c->outs = outs;
	for (int32_t i = 0; i < n_in; i++)
		c->in_max_dims[i] = input_spec(op, i)->max_dims;
	for (int32_t i = 0; i < n_out; i++)
		c->out_max_dims[i] = op->outputs[i].max_dims;
	if (!b->quant)
		return 0;
	c->quant = gc_pool_alloc(pool, ((size_t)n_in + (size_t)n_out + 1) * sizeof *c->quant);
	if (!c->quant)
		return bfail(b, GC_ENOMEM, "out of memory");
	for (int32_t i = 0; i < n_in + n_out; i++) {
		const gc_custom_quant *q = i < n_in ? in_quant(b, i) : out_quant(b, i - n_in);
		c->quant[i] = q ? *q : (gc_custom_quant){ DTCustomOpDataTypeCount, 1.0f, 0 };
	}
	return 0;
}

/* A binding made per input shape at run time (custom.h, gc_custom_dyn):
 * the functions library and symbols, what the manifest declares and every
 * implementation of the backend, each library to be pinned. */
static int bind_record_dyn(binder *b, const char *backend, const bind_call *bc, gc_custom *c)
{
	const gc_op_spec *op = b->op;
	gc_pool *pool = b->pool;
	const gc_impl_spec *first = NULL;
	int32_t n = 0;
	for (int32_t j = 0; j < op->n_impls; j++)
		if (!op->impls[j].skipped && !strcmp(op->impls[j].backend, backend) && !n++)
			first = &op->impls[j];
	if (!first)
		return bfail(b, GC_EINVAL, "operation '%s' (%s) has no %s implementation", op->name,
			     op->file, backend);
	if (b->quant || b->flavour)
		return bfail(b, GC_EUNSUPPORTED,
			     "a dynamic dimension reaches it, and it is %s: bound per input shape "
			     "at run time, it cannot be (fix the size with gc_compile_options.shapes, "
			     "graphcc --shape)",
			     b->quant ? "bound quantized" : "given a flavour (gc_compile_options.flavour)");
	int rc = bind_record(b, first, backend, bc, NULL, c);
	if (rc)
		return rc;
	gc_custom_dyn *y = gc_pool_alloc(pool, sizeof *y);
	gc_custom_impl *ims = gc_pool_alloc(pool, (size_t)n * sizeof *ims);
	uint32_t *masks = gc_pool_alloc(pool, ((size_t)c->n_in + (size_t)c->n_out + 1) * 4);
	if (!y || !ims || !masks)
		return bfail(b, GC_ENOMEM, "out of memory");
	*y = (gc_custom_dyn){ .fn_library = gc_pool_strdup(pool, op->functions_library),
			      .verify = gc_pool_strdup(pool, op->verify),
			      .infer = gc_pool_strdup(pool, op->infer_shape),
			      .select = gc_pool_strdup(pool, op->select_impl),
			      .in_dtypes = masks, .out_dtypes = masks + c->n_in,
			      .n_impls = n, .impls = ims };
	bool ok = y->fn_library && y->verify && y->infer && y->select;
	for (int32_t i = 0; i < c->n_in; i++)
		masks[i] = input_spec(op, i)->dtypes;
	for (int32_t i = 0; i < c->n_out; i++)
		masks[c->n_in + i] = op->outputs[i].dtypes;
	n = 0;
	for (int32_t j = 0; j < op->n_impls; j++) {
		const gc_impl_spec *x = &op->impls[j];
		if (x->skipped || strcmp(x->backend, backend))
			continue;
		gc_custom_impl *im = &ims[n++];
		*im = (gc_custom_impl){ .flavour = gc_pool_strdup(pool, x->type),
					.library = gc_pool_strdup(pool, x->impl),
					.symbol = gc_pool_strdup(pool, x->symbol),
					.config = gc_pool_strdup(pool, x->config),
					.init_sym = x->init ? gc_pool_strdup(pool, x->init) : NULL,
					.destroy_sym = x->destroy ? gc_pool_strdup(pool, x->destroy) : NULL,
					.scratch_sym = x->scratch ? gc_pool_strdup(pool, x->scratch) : NULL,
					.scratch_bytes = x->has_scratch_bytes ? x->scratch_bytes : 0,
					.inplace = x->inplace };
		im->n_accepts = x->n_accepts;
		im->accepts = gc_pool_alloc(pool, ((size_t)x->n_accepts + 1) * sizeof *im->accepts);
		for (int32_t r = 0; im->accepts && r < x->n_accepts; r++)
			im->accepts[r] = (gc_custom_accept){ x->accepts[r].input, x->accepts[r].dtypes,
							     x->accepts[r].ranks,
							     x->accepts[r].last_dim_multiple };
		ok &= im->flavour && im->library && im->symbol && im->config && im->accepts &&
		      (!x->init || im->init_sym) && (!x->destroy || im->destroy_sym) &&
		      (!x->scratch || im->scratch_sym);
		if (gc_custom_check_iface(x->impl, x->graphcc_iface,
					  x->init || x->destroy || x->scratch, b->err))
			return bfail(b, GC_EINVAL, "%s", b->err->msg);
	}
	if (!ok)
		return bfail(b, GC_ENOMEM, "out of memory");
	c->dyn = y;
	return 0;
}

/* The operation of node n, or an error naming what the registry has. */
static const gc_op_spec *find_op(binder *b, const gc_irnode *n, const gc_registry *reg)
{
	int64_t version = gc_graph_opset(b->g, n->domain);
	const gc_op_spec *op = gc_registry_find(reg, n->domain, n->op_type, version);
	if (op)
		return op;
	char have[512];
	gc_registry_list_domain(reg, n->domain, have, sizeof have);
	char ver[64] = "";
	if (version >= 0)
		snprintf(ver, sizeof ver, " at version %" PRId64, version);
	if (have[0])
		bfail(b, GC_EUNSUPPORTED,
		      "no op package provides '%s' in domain '%s'%s; the loaded packages provide "
		      "for that domain: %s",
		      n->op_type, n->domain, ver, have);
	else
		bfail(b, GC_EUNSUPPORTED,
		      "no op package provides '%s' in domain '%s'%s (no package for that domain "
		      "is loaded: give one in gc_compile_options.registry; graphcc: --ops "
		      "PKG.yaml)",
		      n->op_type, n->domain, ver);
	return NULL;
}

int gc_bind_custom(const gc_graph *g, int32_t gi, const gc_registry *reg, const char *backend,
		   const char *flavour, bool per_shape, gc_pool *pool, gc_node *pn,
		   gc_tensor *const *in, gc_error *err)
{
	const gc_irnode *n = &g->nodes[gi];
	binder b = { .g = g, .n = n, .in = in, .pool = pool, .err = err, .flavour = flavour,
		     .quant = n->quant, .per_shape = per_shape };
	char lb[300];
	snprintf(b.label, sizeof b.label, "%s: %s", g->origin, gc_node_label(g, gi, lb, sizeof lb));
	if (!(b.op = find_op(&b, n, reg)) || check_inputs(&b, n, in))
		return err->code;
	const gc_op_spec *op = b.op;
	/* A view for every declared input and output (customop.h): an absent
	 * one is NULL here. Variadic: the node's count. */
	bool variadic = op->n_inputs && op->inputs[op->n_inputs - 1].variadic;
	int32_t n_in = variadic ? (n->n_in > op->n_inputs - 1 ? n->n_in : op->n_inputs - 1)
				: op->n_inputs;
	int32_t n_out = op->n_outputs;
	bind_call bc = { .a = { .n_in = n_in, .n_out = n_out, .n_params = op->n_params } };
	bc.a.params = gc_pool_alloc(pool, ((size_t)op->n_params + 1) * sizeof *bc.a.params);
	bc.a.in = gc_calloc((size_t)(n_in + n_out) + 1, sizeof *bc.a.in);
	bc.a.out = bc.a.in ? bc.a.in + n_in : NULL;
	bc.dims = gc_calloc((size_t)(n_in + n_out) * GC_CUSTOM_DIMS_SLOTS + 1, sizeof *bc.dims);
	gc_custom *c = gc_pool_alloc(pool, sizeof *c);
	gc_tensor *outs = NULL;
	const gc_impl_spec *im = NULL;
	int rc = 0;
	if (!bc.a.params || !bc.a.in || !bc.dims || !c) {
		rc = bfail(&b, GC_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = make_params(&b, n, bc.a.params)))
		goto out;
	for (int32_t i = 0; i < n_in; i++) {
		gc_custom_view(&bc.a.in[i], bc.dims + (size_t)i * GC_CUSTOM_DIMS_SLOTS,
			       i < n->n_in ? in[i] : NULL, input_spec(op, i)->max_dims);
		gc_custom_view_quant(&bc.a.in[i], in_quant(&b, i));
	}
	if (per_shape) {
		if (!(rc = bind_record_dyn(&b, backend, &bc, c)))
			pn->custom = c;
		goto out;
	}
	gc_custom_ctx_init(&bc.ctx, &bc.host, op->name, op->domain, op->type, pn->name, backend,
			   NULL, "");
	if ((rc = bind_verify(&b, &bc)) || (rc = bind_infer(&b, &bc, &outs)) ||
	    (rc = bind_select(&b, &bc, backend, &im)) ||
	    (rc = bind_record(&b, im, backend, &bc, outs, c)) ||
	    (rc = bind_scratch(&b, &bc, c, im, pn->name)))
		goto out;
	pn->custom = c;
out:
	gc_crash_context = NULL;
	gc_free(bc.a.in);
	gc_free(bc.dims);
	return rc;
}
