/* Calling custom kernels: CustomOpIOTensor views built in the node's
 * scratch memory, no allocation per call. */
#include "custom.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "blas.h"
#include "crash.h"
#include "fileio.h"
#include "kernels/nn-par.h"
#include "session-impl.h"

static const struct {
	gc_dtype gc;
	CustomOpDataType co;
	const char *name;
} dtmap[] = {
	{ GC_DTYPE_FLOAT, DTFloat32, "DTFloat32" },   { GC_DTYPE_FLOAT16, DTFloat16, "DTFloat16" },
	{ GC_DTYPE_BFLOAT16, DTBFloat16, "DTBFloat16" }, { GC_DTYPE_INT32, DTIInt32, "DTIInt32" },
	{ GC_DTYPE_INT64, DTIInt64, "DTIInt64" },     { GC_DTYPE_BOOL, DTBool, "DTBool" },
	{ GC_DTYPE_STRING, DTString, "DTString" },    { GC_DTYPE_DOUBLE, DTFloat64, "DTFloat64" },
	{ GC_DTYPE_INT8, DTIInt8, "DTIInt8" },	       { GC_DTYPE_INT16, DTIInt16, "DTIInt16" },
	{ GC_DTYPE_UINT8, DTUInt8, "DTUInt8" },       { GC_DTYPE_UINT16, DTUInt16, "DTUInt16" },
	{ GC_DTYPE_UINT32, DTUInt32, "DTUInt32" },    { GC_DTYPE_UINT64, DTUInt64, "DTUInt64" },
};

CustomOpDataType gc_custom_dtype(gc_dtype dt)
{
	for (size_t i = 0; i < sizeof dtmap / sizeof dtmap[0]; i++)
		if (dtmap[i].gc == dt)
			return dtmap[i].co;
	return DTCustomOpDataTypeCount;
}

gc_dtype gc_custom_dtype_back(CustomOpDataType dt)
{
	for (size_t i = 0; i < sizeof dtmap / sizeof dtmap[0]; i++)
		if (dtmap[i].co == dt)
			return dtmap[i].gc;
	/* The seed's quantized types carry plain integers here. */
	switch (dt) {
	case DTQInt8:
		return GC_DTYPE_INT8;
	case DTQUInt8:
		return GC_DTYPE_UINT8;
	case DTQInt16:
		return GC_DTYPE_INT16;
	case DTQInt32:
		return GC_DTYPE_INT32;
	default:
		return GC_DTYPE_UNDEFINED;
	}
}

const char *gc_custom_dtype_name(CustomOpDataType dt)
{
	for (size_t i = 0; i < sizeof dtmap / sizeof dtmap[0]; i++)
		if (dtmap[i].co == dt)
			return dtmap[i].name;
	switch (dt) {
	case DTQInt8:
		return "DTQInt8";
	case DTQUInt8:
		return "DTQUInt8";
	case DTQInt16:
		return "DTQInt16";
	case DTQInt32:
		return "DTQInt32";
	default:
		return "an unknown CustomOpDataType";
	}
}

static void set_error(GcOpContext *ctx, const char *fmt, ...)
{
	if (!ctx || !ctx->host || !fmt)
		return;
	gc_custom_host *h = ctx->host;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(h->msg, sizeof h->msg, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------- host services (1.1) */

typedef struct par_for {
	int64_t n;
	void (*fn)(void *arg, int64_t begin, int64_t end);
	void *arg;
} par_for;

static void par_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const par_for *pf = arg;
	int64_t lo, hi;
	gc_nn_part_range(pf->n, part, parts, &lo, &hi);
	if (lo < hi)
		pf->fn(pf->arg, lo, hi);
}

/* On graphcc's worker pool (nn-par.h), as the built-in kernels use it. */
static GcStatus host_parallel_for(GcOpContext *ctx, int64_t n,
				  void (*fn)(void *arg, int64_t begin, int64_t end), void *arg)
{
	if (!fn || n <= 0)
		return GC_STATUS_OK;
	int threads = ctx && ctx->num_threads > 1 ? ctx->num_threads : 1;
	par_for pf = { .n = n, .fn = fn, .arg = arg };
	gc_nn_parallel(threads, gc_nn_par_parts(threads, n), par_part, &pf);
	return GC_STATUS_OK;
}

static GcStatus host_sgemm(GcOpContext *ctx, bool trans_a, bool trans_b, int64_t m, int64_t n,
			   int64_t k, float alpha, const float *a, int64_t lda, const float *b,
			   int64_t ldb, float beta, float *c, int64_t ldc)
{
	gc_error e = { 0 };
	if (m < 0 || n < 0 || k < 0 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX ||
	    lda > INT32_MAX || ldb > INT32_MAX || ldc > INT32_MAX) {
		set_error(ctx, "sgemm: dims %" PRId64 "x%" PRId64 "x%" PRId64
			       " are negative or too large for the BLAS",
			  m, n, k);
		return GC_STATUS_FAIL;
	}
	if (gc_blas_init(&e)) {
		set_error(ctx, "sgemm: %s", e.msg);
		return GC_STATUS_FAIL;
	}
	gc_sgemm(trans_a, trans_b, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c,
		 (int)ldc);
	return GC_STATUS_OK;
}

static void *host_temp_alloc(GcOpContext *ctx, uint64_t bytes)
{
	gc_custom_host *h = ctx ? ctx->host : NULL;
	if (!h || h->n_temps == GC_CUSTOM_MAX_TEMPS || bytes > gc_limit_bytes())
		return NULL;
	void *p = gc_aligned_alloc(64, (size_t)bytes, 0);
	if (p)
		h->temps[h->n_temps++] = p;
	return p;
}

void gc_custom_ctx_services(GcOpContext *ctx)
{
	ctx->parallel_for = host_parallel_for;
	ctx->sgemm = host_sgemm;
	ctx->temp_alloc = host_temp_alloc;
}

void gc_custom_host_release(gc_custom_host *host)
{
	for (int i = 0; i < host->n_temps; i++)
		gc_free(host->temps[i]);
	host->n_temps = 0;
}

static int32_t should_stop(GcOpContext *ctx)
{
	const gc_custom_host *h = ctx ? ctx->host : NULL;
	return h && h->session && gc_session_check_stop(h->session, "", NULL) ? 1 : 0;
}

void gc_custom_ctx_init(GcOpContext *ctx, gc_custom_host *host, const char *op_name,
			const char *domain, const char *op_type, const char *node_name,
			const char *backend, const char *flavour, const char *config)
{
	memset(ctx, 0, sizeof *ctx);
	host->msg[0] = 0;
	host->n_temps = 0;
	ctx->struct_size = sizeof *ctx;
	ctx->abi_version = GC_CUSTOMOP_ABI_VERSION;
	ctx->op_name = op_name;
	ctx->op_domain = domain;
	ctx->op_type = op_type;
	ctx->node_name = node_name;
	ctx->backend = backend;
	ctx->flavour = flavour;
	ctx->config = config ? config : "";
	ctx->num_threads = 1;
	ctx->set_error = set_error;
	ctx->host = host;
}

/* ------------------------------------------------------------ package calls */

GcStatus gc_custom_call_verify(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			       const gc_custom_args *a)
{
	if (graphcc)
		return ((gcOpVerify_t)fn)(ctx, a->in, a->n_in, a->out, a->n_out, a->params,
					  a->n_params);
	return ((customOpVerify_t)fn)(a->in, a->n_in, a->out, a->n_out, a->params, a->n_params)
		       ? GC_STATUS_OK
		       : GC_STATUS_FAIL;
}

GcStatus gc_custom_call_infer(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			      const gc_custom_args *a)
{
	if (graphcc)
		return ((gcOpInferShape_t)fn)(ctx, a->out, a->n_out, a->in, a->n_in, a->params,
					      a->n_params);
	return ((customOpInferShape_t)fn)(a->out, a->n_out, a->in, a->n_in, a->params,
					  a->n_params)
		       ? GC_STATUS_OK
		       : GC_STATUS_FAIL;
}

GcStatus gc_custom_call_select(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			       const gc_custom_args *a, const char **flavour)
{
	*flavour = NULL;
	if (graphcc) {
		GcStatus st = ((gcOpSelectImpl_t)fn)(ctx, a->in, a->n_in, a->out, a->n_out,
						     a->params, a->n_params, flavour);
		if (st != GC_STATUS_OK)
			*flavour = NULL;
		return *flavour ? st : GC_STATUS_FAIL;
	}
	*flavour = ((customOpSelectImpl_t)fn)(a->in, a->n_in, a->out, a->n_out, a->params,
					      a->n_params, ctx->backend);
	return *flavour ? GC_STATUS_OK : GC_STATUS_FAIL;
}

GcStatus gc_custom_call_scratch(gc_fnptr fn, GcOpContext *ctx, const gc_custom_args *a,
				uint64_t *bytes)
{
	*bytes = 0;
	return ((gcOpScratch_t)fn)(ctx, a->in, a->n_in, a->out, a->n_out, a->params, a->n_params,
				   bytes);
}

GcStatus gc_custom_call_init(gc_fnptr fn, GcOpContext *ctx, const gc_custom_args *a)
{
	return ((gcOpInit_t)fn)(ctx, a->in, a->n_in, a->out, a->n_out, a->params, a->n_params);
}

void gc_custom_call_destroy(gc_fnptr fn, GcOpContext *ctx)
{
	((gcOpDestroy_t)fn)(ctx);
}

GcStatus gc_custom_call_kernel(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			       const gc_custom_args *a)
{
	if (graphcc)
		return ((gcOpKernel_t)fn)(ctx, a->in, a->n_in, a->out, a->n_out, a->params,
					  a->n_params);
	((customOpInterpreterKernel_t)fn)(a->in, a->n_in, a->out, a->n_out, a->params,
					  a->n_params);
	return GC_STATUS_OK;
}

int gc_custom_check_iface(const char *library, bool graphcc, bool needs_graphcc,
			  gc_error *err)
{
	if (graphcc || !needs_graphcc)
		return 0;
	return gc_error_set(err, GC_EINVAL,
			    "library %s is written to the seed interface, but the implementation "
			    "needs init/destroy/scratch (graphcc interface)",
			    library);
}

/* Scratch layout per node: context, host, I/O views, dims, then the
 * kernel's own scratch at a 64-byte boundary. */
typedef struct call_frame {
	GcOpContext ctx;
	gc_custom_host host;
} call_frame;

static size_t align64(size_t v)
{
	return (v + 63) & ~(size_t)63;
}

/* Every declared input and output has a view (c->n_in, c->n_out: the
 * node may have fewer). */
static size_t frame_bytes(const gc_node *n)
{
	const gc_custom *c = n->custom;
	size_t io = (size_t)(c->n_in + c->n_out) * sizeof(CustomOpIOTensor);
	size_t dims = (size_t)(c->n_in + c->n_out) * GC_MAX_RANK * sizeof(int64_t);
	return align64(sizeof(call_frame) + io + dims);
}

void gc_custom_view(CustomOpIOTensor *v, int64_t *dims, const gc_tensor *t, int32_t max_dims)
{
	memset(v, 0, sizeof *v);
	v->scale = 1.0f;
	v->maxDims = max_dims;
	v->dims = dims;
	if (!t) { /* absent: data NULL, rank 0, and dims a kernel must not trust */
		v->dtype = DTCustomOpDataTypeCount;
		for (int i = 0; i < GC_MAX_RANK; i++)
			dims[i] = GC_CUSTOM_ABSENT_DIM;
		return;
	}
	v->data = t->data;
	v->rank = t->rank;
	v->dtype = gc_custom_dtype(t->dtype);
	int64_t numel = 1;
	for (int i = 0; i < t->rank; i++) {
		dims[i] = t->dims[i];
		numel *= t->dims[i];
	}
	v->numel = numel;
}

void gc_custom_view_quant(CustomOpIOTensor *v, const gc_custom_quant *q)
{
	if (!gc_custom_quant_on(q) || !gcInputPresent(v))
		return;
	v->dtype = (CustomOpDataType)q->dtype;
	v->scale = q->scale;
	v->offset = q->offset;
}

bool gc_custom_quant_valid(const gc_custom_quant *q, const char **why)
{
	static const int32_t lo[] = { -128, 0, -32768, 0 }, hi[] = { 127, 255, 32767, 0 };
	*why = NULL;
	if (q->dtype == DTCustomOpDataTypeCount) {
		if (q->scale != 1.0f || q->offset != 0)
			*why = "a plain edge has a scale or offset";
	} else if (!gc_custom_quant_on(q)) {
		*why = "the type is not a quantized one (DTQInt8 ... DTQInt32)";
	} else if (!(q->scale > 0.0f && q->scale <= 3.4e38f)) {
		*why = "the scale is not a finite positive number";
	} else if (q->offset < lo[q->dtype - DTQInt8] || q->offset > hi[q->dtype - DTQInt8]) {
		*why = "the offset is outside the type's range";
	}
	return *why == NULL;
}

const char *gc_custom_quant_str(const gc_custom_quant *q, char *buf, size_t len)
{
	static const char *const names[] = { "qint8", "quint8", "qint16", "qint32" };
	if (!gc_custom_quant_on(q))
		snprintf(buf, len, "not quantized");
	else
		snprintf(buf, len, "%s (scale %.9g, offset %d)", names[q->dtype - DTQInt8],
			 (double)q->scale, (int)q->offset);
	return buf;
}

void gc_custom_views(CustomOpIOTensor *io, int64_t *dims, const gc_custom *c,
		     gc_tensor *const *in, int32_t n_in, gc_tensor *const *out, int32_t n_out)
{
	for (int32_t i = 0; i < c->n_in; i++) {
		gc_custom_view(&io[i], dims + (size_t)i * GC_MAX_RANK, i < n_in ? in[i] : NULL,
			       c->in_max_dims[i]);
		if (c->quant)
			gc_custom_view_quant(&io[i], &c->quant[i]);
	}
	for (int32_t i = 0; i < c->n_out; i++) {
		gc_custom_view(&io[c->n_in + i], dims + (size_t)(c->n_in + i) * GC_MAX_RANK,
			       i < n_out ? out[i] : NULL, c->out_max_dims[i]);
		if (c->quant)
			gc_custom_view_quant(&io[c->n_in + i], &c->quant[c->n_in + i]);
	}
}

gc_custom_args gc_custom_args_of(const gc_custom *c, CustomOpIOTensor *io)
{
	return (gc_custom_args){ .in = io, .n_in = c->n_in, .out = io + c->n_in,
				 .n_out = c->n_out, .params = c->params, .n_params = c->n_params };
}

/* Builds the frame in k->scratch; returns the I/O views. */
static CustomOpIOTensor *frame(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			       gc_tensor *const *out, call_frame **fp)
{
	const gc_custom *c = n->custom;
	call_frame *f = k->scratch;
	CustomOpIOTensor *io = (CustomOpIOTensor *)(f + 1);
	int64_t *dims = (int64_t *)(io + c->n_in + c->n_out);
	gc_custom_views(io, dims, c, in, n->n_in, out, n->n_out);
	*fp = f;
	return io;
}

/* The runner of every custom node: views in scratch, one call. */
static int run_custom(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
		      gc_tensor *const *out)
{
	const gc_custom *c = n->custom;
	call_frame *f;
	CustomOpIOTensor *io = frame(k, n, in, out, &f);
	gc_custom_args a = gc_custom_args_of(c, io);
	if (!c->graphcc_iface)
		return (int)gc_custom_call_kernel(c->kernel, false, NULL, &a);
	gc_custom_ctx_init(&f->ctx, &f->host, c->op_name, c->domain, c->op_type, n->name,
			   c->backend, c->flavour, c->config);
	f->ctx.state = c->state;
	f->ctx.num_threads = k->threads;
	gc_custom_ctx_services(&f->ctx);
	if (c->kernel_scratch) {
		f->ctx.scratch = (char *)k->scratch + frame_bytes(n);
		f->ctx.scratch_bytes = c->kernel_scratch;
		if (k->scratch_poison)
			memset(f->ctx.scratch, k->scratch_poison & 0xFF, c->kernel_scratch);
	}
	f->host.session = k->session;
	f->ctx.should_stop = should_stop;
	GcStatus st = gc_custom_call_kernel(c->kernel, true, &f->ctx, &a);
	gc_custom_host_release(&f->host);
	if (st != GC_STATUS_OK) {
		char where[700];
		snprintf(where, sizeof where, "node '%s' (%s), in kernel '%s'", n->name,
			 n->op_type, c->symbol);
		if (k->session && gc_session_check_stop(k->session, where, k->err))
			return k->err->code;
		return gc_kerr(k, GC_EKERNEL, "kernel '%s' (flavour '%s', library %s) failed: %s",
			       c->symbol, c->flavour, c->library,
			       f->host.msg[0] ? f->host.msg : "it gave no reason (ctx->set_error)");
	}
	return 0;
}

static void custom_release(void *state)
{
	gc_custom *c = state;
	if (c->initialised && c->destroy) {
		GcOpContext ctx;
		gc_custom_host host;
		gc_custom_ctx_init(&ctx, &host, c->op_name, c->domain, c->op_type, "", c->backend,
				   c->flavour, c->config);
		ctx.state = c->state;
		gc_custom_call_destroy(c->destroy, &ctx);
	}
	c->initialised = false;
	c->state = NULL;
	gc_dynlib_release(c->lib);
	c->lib = NULL;
}

int gc_custom_describe(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	gc_custom *c = n->custom;
	if (!c || c->dyn)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: custom node without a binding%s",
			       c ? " for its input shape" : "");
	/* The binding has every declared input and output; the node may
	 * leave trailing optional ones out. (Programs saved before the views
	 * were per declaration have the node's counts.) */
	if (c->n_in < n->n_in || c->n_out < n->n_out)
		return gc_kerr(k, GC_EINVAL, "binding has %d inputs and %d outputs, node %d and %d",
			       c->n_in, c->n_out, n->n_in, n->n_out);
	for (int i = 0; i < n->n_out; i++)
		if (out[i])
			gc_set_shape(out[i], c->outs[i].dtype, c->outs[i].rank, c->outs[i].dims);
	n->scratch_bytes = frame_bytes(n) + c->kernel_scratch;
	/* The package says output 0 may share input 0's memory. Decided here,
	 * from the binding alone, so a .gcb's memory plan is checked at load
	 * with the same in-place chains as it was planned, before any library
	 * is opened. */
	n->inplace_ok = c->inplace && n->n_in > 0 && n->n_out > 0 && in[0] && out[0] &&
			gc_tensor_nbytes(in[0]) == gc_tensor_nbytes(out[0]);
	return 0;
}

/* A binding made for one input shape goes with its preparation. */
static void bound_release(void *state)
{
	custom_release(state);
	gc_custom_bound_free(state);
}

int gc_custom_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	gc_custom *c = n->custom;
	if (c && c->dyn) { /* bound per input shape: this one's binding first */
		if (gc_custom_bind_shape(k, n, in, &c))
			return k->err->code;
		n->custom = c;
		n->state = c;
		n->state_free = bound_release;
	}
	if (gc_custom_describe(k, n, in, out))
		return k->err->code;
	if (gc_dynlib_open(c->library, &c->lib, k->err))
		return gc_kerr(k, k->err->code, "flavour '%s'", c->flavour);
	n->state = c;
	if (n->state_free != bound_release)
		n->state_free = custom_release;
	if (gc_dynlib_abi(c->lib, &c->graphcc_iface, k->err) ||
	    !(c->kernel = gc_dynlib_fn(c->lib, c->symbol, k->err)))
		return k->err->code;
	if (gc_custom_check_iface(c->library, c->graphcc_iface,
				  c->init_sym || c->destroy_sym || c->kernel_scratch, k->err))
		return k->err->code;
	if ((c->init_sym && !(c->init = gc_dynlib_fn(c->lib, c->init_sym, k->err))) ||
	    (c->destroy_sym && !(c->destroy = gc_dynlib_fn(c->lib, c->destroy_sym, k->err))))
		return k->err->code;
	n->run = run_custom;
	if (!c->init)
		return 0;
	/* init sees constant inputs' values (data NULL for the others). */
	size_t fb = frame_bytes(n);
	void *tmp = gc_calloc(1, fb);
	if (!tmp)
		return gc_kerr(k, GC_ENOMEM, "out of memory preparing init");
	void *saved = k->scratch;
	k->scratch = tmp;
	call_frame *f;
	CustomOpIOTensor *io = frame(k, n, in, out, &f);
	k->scratch = saved;
	for (int i = 0; i < c->n_out; i++)
		io[c->n_in + i].data = NULL;
	/* (at run time: a kept preparation serves any values of its inputs) */
	for (int i = 0; i < c->n_in && i < n->n_in; i++)
		if (i >= 64 ? k->varying != 0 : (k->varying >> i & 1))
			io[i].data = NULL;
	gc_custom_ctx_init(&f->ctx, &f->host, c->op_name, c->domain, c->op_type, n->name,
			   c->backend, c->flavour, c->config);
	f->ctx.num_threads = k->threads;
	char where[1024];
	snprintf(where, sizeof where, "init %s:%s of operation '%s', flavour '%s', node '%s'",
		 c->library, c->init_sym, c->op_name, c->flavour, n->name);
	gc_crash_context = where;
	gc_custom_args a = gc_custom_args_of(c, io);
	GcStatus st = gc_custom_call_init(c->init, &f->ctx, &a);
	gc_crash_context = NULL;
	c->state = f->ctx.state;
	int rc = 0;
	if (st != GC_STATUS_OK)
		rc = gc_kerr(k, GC_EKERNEL, "init '%s' (flavour '%s', library %s) failed: %s",
			     c->init_sym, c->flavour, c->library,
			     f->host.msg[0] ? f->host.msg : "it gave no reason (ctx->set_error)");
	else
		c->initialised = true;
	gc_free(tmp);
	return rc;
}
