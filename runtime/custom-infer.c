/* What a package's inferShape left in an output view, checked once for the
 * compiler (lib/bind-custom.c) and for bindings made per input shape at run
 * time (custom-dyn.c): custom.h, gc_custom_inferred. */
#include "custom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

void gc_custom_infer_view(CustomOpIOTensor *o, int64_t *dims, int32_t max_dims)
{
	for (int k = 0; k < GC_CUSTOM_DIMS_SLOTS; k++)
		dims[k] = k < max_dims ? 0 : GC_CUSTOM_CANARY;
	o->dims = dims;
	o->rank = max_dims;
	o->dtype = DTFloat32;
}

static int say(int code, char *msg, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int say(int code, char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return code;
}

/* The output's type: quantized as bound, else a plain declared one. */
static int inferred_type(const CustomOpIOTensor *o, const gc_custom_out_decl *c, const char *out,
			 char *msg, size_t len)
{
	const char *lib = c->library, *fn = c->function;
	gc_dtype dt = gc_custom_dtype_back(o->dtype);
	if (dt == GC_DTYPE_UNDEFINED || dt == GC_DTYPE_STRING)
		return say(GC_EINVAL, msg, len, "shape inference %s:%s gave %s an invalid type %d",
			   lib, fn, out, (int)o->dtype);
	const gc_custom_quant *q = gc_custom_quant_on(c->quant) ? c->quant : NULL;
	char qs[96];
	if (q && o->dtype != (CustomOpDataType)q->dtype)
		return say(GC_EINVAL, msg, len,
			   "shape inference %s:%s made %s %s, but it is bound %s (only "
			   "QuantizeLinear nodes read it, and the manifest lists that type); it "
			   "arrives as %s and must keep that dtype",
			   lib, fn, out, gc_custom_dtype_name(o->dtype),
			   gc_custom_quant_str(q, qs, sizeof qs),
			   gc_custom_dtype_name((CustomOpDataType)q->dtype));
	if (!q && o->dtype >= DTQInt8 && o->dtype <= DTQInt32)
		return say(GC_EINVAL, msg, len,
			   "shape inference %s:%s made %s %s, but that output is not bound "
			   "quantized (it has no scale: only an output read by QuantizeLinear "
			   "nodes, with the type in its dtypes, is)",
			   lib, fn, out, gc_custom_dtype_name(o->dtype));
	if (q || !c->dtypes || (dt < 32 && (c->dtypes >> dt & 1)))
		return 0;
	char list[256] = "", at_line[300] = "";
	size_t at = 0;
	for (int k = 1; k < 32 && at < sizeof list; k++)
		if (c->dtypes >> k & 1)
			at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "",
					       gc_dtype_name((gc_dtype)k));
	if (c->dtypes_file)
		snprintf(at_line, sizeof at_line, " (dtypes at %s:%d)", c->dtypes_file,
			 (int)c->dtypes_line);
	return say(GC_EINVAL, msg, len,
		   "shape inference %s:%s made %s %s, but operation '%s' declares it [%s]%s", lib,
		   fn, out, gc_dtype_name(dt), c->op_name, list, at_line);
}

int gc_custom_inferred(const CustomOpIOTensor *o, const int64_t *dims, const gc_custom_out_decl *c,
		       gc_tensor *t, char *msg, size_t len)
{
	const char *lib = c->library, *fn = c->function;
	int32_t md = c->max_dims;
	char out[160]; /* "output 1 ('argmax')" */
	if (c->name)
		snprintf(out, sizeof out, "output %d ('%.120s')", (int)c->index, c->name);
	else
		snprintf(out, sizeof out, "output %d", (int)c->index);
	if (o->rank < 0 || o->rank > md)
		return say(GC_EINVAL, msg, len,
			   "shape inference %s:%s set %s to rank %d, above its maxDims %d", lib, fn,
			   out, (int)o->rank, (int)md);
	for (int k = md; k < GC_CUSTOM_DIMS_SLOTS; k++)
		if (dims[k] != GC_CUSTOM_CANARY)
			return say(GC_ECRASH, msg, len,
				   "shape inference %s:%s wrote past the %d dims of %s", lib, fn,
				   (int)md, out);
	if (o->dims != dims)
		return say(GC_EINVAL, msg, len,
			   "shape inference %s:%s replaced the dims pointer of %s; it must fill "
			   "the buffer it is given",
			   lib, fn, out);
	int rc = inferred_type(o, c, out, msg, len);
	if (rc)
		return rc;
	*t = (gc_tensor){.dtype = gc_custom_dtype_back(o->dtype), .rank = o->rank};
	for (int k = 0; k < o->rank; k++) {
		if (dims[k] < 0)
			return say(GC_EINVAL, msg, len,
				   "shape inference %s:%s gave %s a negative dimension %" PRId64,
				   lib, fn, out, dims[k]);
		t->dims[k] = dims[k];
	}
	int64_t bytes = gc_tensor_nbytes(t);
	if (bytes < 0 || (c->limit_bytes && (uint64_t)bytes > c->limit_bytes))
		return say(GC_ELIMIT, msg, len, "%s is too large", out);
	return 0;
}
