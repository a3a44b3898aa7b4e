/*
 * Custom nodes: the binding recorded at compile time (which package
 * operation, flavour, library and kernel symbol, with the params as the
 * kernel receives them) and the call path into the kernel.
 */
#ifndef GC_CUSTOM_H
#define GC_CUSTOM_H

#include <graphcc/customop.h>
#include <graphcc/runtime.h>

#include <stdbool.h>

#include "dynlib.h"
#include "kernel.h"

/* An edge of a custom node bound quantized through QDQ (lib/pass-qdq.c):
 * the kernel's view of it is `dtype` (DTQInt8 ... DTQInt32) with scale and
 * offset (real = scale * (q - offset)); the tensor itself is the integer
 * type (gc_custom_dtype_back). dtype DTCustomOpDataTypeCount: a plain
 * edge (scale 1, offset 0). */
typedef struct gc_custom_quant {
	int32_t dtype; /* CustomOpDataType */
	float scale;
	int32_t offset;
} gc_custom_quant;

/* Whether q (may be NULL) is a quantized edge. */
static inline bool gc_custom_quant_on(const gc_custom_quant *q)
{
	return q && q->dtype >= DTQInt8 && q->dtype <= DTQInt32;
}

/* Whether (dtype, scale, offset) is a quantized edge a program may hold:
 * a quantized type, a finite positive scale and an offset in the type's
 * range (qint32: 0, as ONNX requires). On failure *why says what is wrong. */
bool gc_custom_quant_valid(const gc_custom_quant *q, const char **why);

/* One implementation a binding made per input shape may choose (the
 * package's implementations for the program's backend, pinned with it). */
typedef struct gc_custom_accept {
	int32_t input;		   /* a declared input */
	uint32_t dtypes, ranks;	   /* bit masks; 0: any */
	int64_t last_dim_multiple; /* 0: any */
} gc_custom_accept;

typedef struct gc_custom_impl {
	const char *flavour, *library, *symbol, *config;
	const char *init_sym, *destroy_sym, *scratch_sym; /* NULL when none */
	uint64_t scratch_bytes; /* without a scratch function */
	bool inplace;
	int32_t n_accepts; /* the manifest's accepts: rules */
	gc_custom_accept *accepts;
} gc_custom_impl;

/* A binding made per input shape at run time (a dynamic dimension reaches
 * the node: gc_compile_options.dynamic_dims): the package functions the
 * compiler would call, whose library the program pins like the kernel
 * libraries, and what the manifest declares. custom-dyn.c calls them when
 * a session prepares the node for a new input shape (prep-cache.h). */
typedef struct gc_custom_dyn {
	const char *fn_library, *verify, *infer, *select;
	uint32_t *in_dtypes, *out_dtypes; /* gc_dtype bit masks per input/output; 0: any */
	int32_t n_impls;
	gc_custom_impl *impls;
} gc_custom_dyn;

typedef struct gc_custom {
	/* What the binding is: fixed at compile time, saved with programs. */
	const char *manifest, *op_name, *domain, *op_type;
	const char *flavour, *backend, *config;
	const char *library, *symbol;
	const char *init_sym, *destroy_sym; /* NULL when none */
	uint64_t kernel_scratch;	    /* bytes of ctx->scratch for the kernel */
	bool inplace, pure;
	int32_t n_params;
	CustomOpParam *params;
	/* Every declared input and output (variadic: the node's count); the
	 * node itself may leave trailing optional ones out. */
	int32_t n_in, n_out;
	int32_t *in_max_dims, *out_max_dims;
	gc_tensor *outs; /* output types and shapes inferred at compile time */
	/* "library:symbol" of the shape inference that gave outs, for messages
	 * of the compiler only (not saved: NULL in a loaded program). */
	const char *infer_where;
	/* The edges bound quantized: n_in + n_out entries (inputs, then
	 * outputs), or NULL when none is. */
	gc_custom_quant *quant;
	/* Non-NULL: bound per input shape (the fields above from flavour to
	 * destroy_sym, kernel_scratch, inplace and outs are those of the first
	 * implementation and hold nothing until then). */
	const gc_custom_dyn *dyn;

	/* Resolved when the program is prepared. */
	gc_dynlib *lib;
	bool graphcc_iface;
	gc_fnptr kernel, init, destroy; /* called through gc_custom_call_* */
	bool initialised;
	void *state; /* set by init */
} gc_custom;

/* The host side of a GcOpContext: where set_error writes. */
#define GC_CUSTOM_MAX_TEMPS 16

typedef struct gc_custom_host {
	char msg[512];
	/* temp_alloc's blocks, freed by gc_custom_host_release */
	void *temps[GC_CUSTOM_MAX_TEMPS];
	int n_temps;
	const struct gc_session *session; /* a kernel's run (should_stop) */
} gc_custom_host;

/* Gives a kernel's context the host services of ABI 1.1 (parallel_for on
 * graphcc's worker pool, sgemm, temp_alloc); after the call,
 * gc_custom_host_release frees the temporary memory it asked for. */
void gc_custom_ctx_services(GcOpContext *ctx);
void gc_custom_host_release(gc_custom_host *host);

/* Fills a context for calls into package code. */
void gc_custom_ctx_init(GcOpContext *ctx, gc_custom_host *host, const char *op_name,
			const char *domain, const char *op_type, const char *node_name,
			const char *backend, const char *flavour, const char *config);

/* What the dims of an absent input's or output's view hold: a kernel that
 * reads them instead of checking gcInputPresent gets a size no tensor has. */
#define GC_CUSTOM_ABSENT_DIM INT64_C(-0x2152411021524111) /* 0xdeadbeefdeadbeef */

/* Fills a package's view of tensor t (NULL: absent, an optional input or
 * output the node leaves out: data NULL, rank 0, numel 0, dtype
 * DTCustomOpDataTypeCount, dims poisoned), copying its dims into `dims`
 * (GC_MAX_RANK entries) so package code never writes graphcc's own. */
void gc_custom_view(CustomOpIOTensor *v, int64_t *dims, const gc_tensor *t, int32_t max_dims);
/* A present view of an edge bound quantized (q on) becomes q's type, scale
 * and offset; nothing else changes. */
void gc_custom_view_quant(CustomOpIOTensor *v, const gc_custom_quant *q);
/* "qint8 (scale 0.0125, offset -3)" for messages and listings. */
const char *gc_custom_quant_str(const gc_custom_quant *q, char *buf, size_t len);
/* The views of every declared input and output of binding c (io:
 * c->n_in + c->n_out entries, dims: GC_MAX_RANK per view): in[i] for
 * i < n_in and out[i] for i < n_out (NULL: absent), the rest absent. */
void gc_custom_views(CustomOpIOTensor *io, int64_t *dims, const gc_custom *c,
		     gc_tensor *const *in, int32_t n_in, gc_tensor *const *out, int32_t n_out);

/*
 * What a package's inferShape may leave in an output view, checked in one
 * place for the compiler (lib/bind-custom.c) and for bindings made per
 * input shape at run time (custom-dyn.c). custom-infer.c.
 *
 * Before the call each output view gets a dims buffer of
 * GC_CUSTOM_DIMS_SLOTS entries: max_dims zeros, then GC_CUSTOM_CANARY in
 * the rest (a write past maxDims shows there), rank max_dims and dtype
 * DTFloat32 (gc_custom_infer_view).
 */
#define GC_CUSTOM_DIMS_SLOTS (GC_MAX_RANK + 8)
#define GC_CUSTOM_CANARY INT64_C(0x6763636361727921) /* "gccanary!" */

void gc_custom_infer_view(CustomOpIOTensor *o, int64_t *dims, int32_t max_dims);

/* What output `index` of the operation declares, and whose inference it is
 * (for messages: "shape inference library:function ... output index
 * ('name')"). */
typedef struct gc_custom_out_decl {
	const char *library, *function, *op_name;
	int32_t index;
	const char *name; /* the output's name; NULL: not known */
	int32_t max_dims;
	uint32_t dtypes;	 /* gc_dtype bit mask; 0: any */
	const char *dtypes_file; /* where dtypes is written; NULL: not known */
	int32_t dtypes_line;
	const gc_custom_quant *quant; /* bound quantized to this; NULL: not */
	uint64_t limit_bytes;	      /* the largest tensor taken; 0: any that fits */
} gc_custom_out_decl;

/* Output view o as inferShape left it (dims: the buffer it was given),
 * against decl: rank within maxDims, nothing written past them, the dims
 * pointer kept, a valid type (the quantized one it is bound to, else a
 * plain one it declares), no negative dimension, a size that fits. 0 and
 * the tensor's type and shape in *t; else GC_EINVAL (GC_ECRASH for a write
 * past maxDims, GC_ELIMIT for a size) and the reason in msg. */
int gc_custom_inferred(const CustomOpIOTensor *o, const int64_t *dims,
		       const gc_custom_out_decl *decl, gc_tensor *t, char *msg, size_t len);

/*
 * The one place that calls into a package. Every call of a package
 * function (verify, inferShape, selectImpl from the functions library;
 * scratch, init, destroy and the kernel from an implementation library)
 * goes through these, so the function-pointer casts and the switch between
 * the seed interface (Glow's: bool / const char * / void results, no
 * context) and the graphcc interface (GcStatus results, a GcOpContext) are
 * written once. `graphcc` says which interface fn's library is written to.
 * Each returns GC_STATUS_OK or a failure; a seed function's false or NULL
 * counts as a failure, and a failing graphcc function's reason is in the
 * context's host (gc_custom_host.msg).
 */
typedef struct gc_custom_args {
	CustomOpIOTensor *in, *out;
	int32_t n_in, n_out;
	CustomOpParam *params;
	int32_t n_params;
} gc_custom_args;

/* The arguments of a call on binding c's views io (as gc_custom_views
 * fills them) and params. */
gc_custom_args gc_custom_args_of(const gc_custom *c, CustomOpIOTensor *io);

GcStatus gc_custom_call_verify(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			       const gc_custom_args *a);
GcStatus gc_custom_call_infer(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			      const gc_custom_args *a);
/* The seed interface's selectImpl gets ctx->backend. */
GcStatus gc_custom_call_select(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			       const gc_custom_args *a, const char **flavour);
/* scratch, init and destroy exist in the graphcc interface only. */
GcStatus gc_custom_call_scratch(gc_fnptr fn, GcOpContext *ctx, const gc_custom_args *a,
				uint64_t *bytes);
GcStatus gc_custom_call_init(gc_fnptr fn, GcOpContext *ctx, const gc_custom_args *a);
void gc_custom_call_destroy(gc_fnptr fn, GcOpContext *ctx);
/* A seed kernel cannot fail: GC_STATUS_OK. */
GcStatus gc_custom_call_kernel(gc_fnptr fn, bool graphcc, GcOpContext *ctx,
			       const gc_custom_args *a);
/* The error for an implementation whose library is written to the seed
 * interface but that asks for init, destroy or scratch (which only the
 * graphcc interface has): 0 when graphcc or nothing is asked for. */
int gc_custom_check_iface(const char *library, bool graphcc, bool needs_graphcc,
			  gc_error *err);

/* CustomOpDataType of a gc_dtype; DTCustomOpDataTypeCount when none. */
CustomOpDataType gc_custom_dtype(gc_dtype dt);
gc_dtype gc_custom_dtype_back(CustomOpDataType dt);
const char *gc_custom_dtype_name(CustomOpDataType dt);

/*
 * The binding of node n (n->custom->dyn) for its inputs now, as the
 * compiler makes it: verify, inferShape and selectImpl of the pinned
 * functions library on the inputs' types and shapes (the values of
 * constant inputs only), the outputs checked against maxDims and the
 * declared types, the chosen flavour among the pinned implementations, its
 * scratch function. Into *bound (gc_custom_bound_free frees it), for
 * gc_custom_prepare. custom-dyn.c.
 */
int gc_custom_bind_shape(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			 gc_custom **bound);
void gc_custom_bound_free(gc_custom *c);

/*
 * The prepare of GC_OP_CUSTOM nodes: sets the outputs from the binding
 * (n->custom), loads the implementation library (checking its ABI), finds
 * the kernel and init/destroy, sizes scratch, runs init, picks the runner.
 */
int gc_custom_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out);
/* The part of gc_custom_prepare that runs no package code: checks the
 * binding against the node, sets the outputs and sizes scratch. (A program
 * loaded for inspection stops here; gcb-read checks every binding before
 * gc_custom_prepare opens any library.) */
int gc_custom_describe(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out);

#endif
