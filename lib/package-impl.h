/* Op packages: what a manifest declares (parsed by manifest.c), and the
 * loaded libraries and the registry that finds an operation for a custom
 * node (both registry.c). */
#ifndef GC_PACKAGE_IMPL_H
#define GC_PACKAGE_IMPL_H

#include <graphcc/customop.h>
#include <graphcc/graphcc.h>

#include <stdbool.h>

#include "../runtime/build.h"

typedef enum gc_param_kind {
	GC_PARAM_BOOL,
	GC_PARAM_INT,
	GC_PARAM_FLOAT,
	GC_PARAM_STRING,
	GC_PARAM_KIND_COUNT
} gc_param_kind;

typedef struct gc_io_spec {
	const char *name;
	int32_t max_dims;
	bool constant, optional, variadic;
	uint32_t dtypes; /* bit (1 << gc_dtype) per allowed type; 0: any */
	/* bit (1 << CustomOpDataType) per quantized type (DTQInt8 ...
	 * DTQInt32) the edge may be bound as through QDQ (lib/pass-qdq.c);
	 * 0: none */
	uint32_t qtypes;
	int line, col;
} gc_io_spec;

/* gc_io_spec.dtypes of a list that names only quantized types: no plain
 * type (bit 0 is GC_DTYPE_UNDEFINED, which no tensor has). */
#define GC_IO_NO_PLAIN_DTYPES 1u

typedef struct gc_param_spec {
	const char *name, *attribute;
	gc_param_kind kind;
	bool scalar;
	int32_t size; /* vectors: required length, or -1 */
	bool has_default;
	int32_t default_count; /* vectors: entries in the default */
	/* The default as it is handed to functions: one value for a scalar
	 * (int64_t, float, uint8_t, or the text), an array for a vector. */
	void *default_data;
	int line, col;
} gc_param_spec;

/* What an implementation accepts (`accepts:` in the manifest): a rule on
 * one input. A flavour that a rule rejects is never bound to the node and
 * neither --compare-flavours nor test-package runs it there. */
typedef struct gc_accept_rule {
	int32_t input;	     /* index of the declared input */
	uint32_t dtypes;     /* bit (1 << gc_dtype) per allowed type; 0: any */
	uint32_t ranks;	     /* bit (1 << rank) per allowed rank; 0: any */
	int64_t last_dim_multiple; /* 0: any */
	int line;
} gc_accept_rule;

typedef struct gc_impl_spec {
	const char *backend, *type, *impl, *symbol, *config;
	const char *init, *destroy, *scratch; /* graphcc interface symbols, or NULL */
	uint64_t scratch_bytes;
	bool has_scratch_bytes, inplace;
	bool skipped; /* backend this build lacks */
	int line, col;
	gc_accept_rule *accepts;
	int32_t n_accepts;
	/* Resolved when the package loads (not for skipped ones). */
	gc_dynlib *lib;
	bool graphcc_iface;
} gc_impl_spec;

/* The manifest's `gradient:` of an operation: the backward operation and
 * how its inputs, outputs and params come from the forward node. */
typedef enum gc_grad_from {
	GC_GRAD_FROM_INPUT,  /* a forward input */
	GC_GRAD_FROM_OUTPUT, /* a forward output */
	GC_GRAD_FROM_GRAD,   /* the gradient flowing into a forward output */
} gc_grad_from;

typedef struct gc_grad_arg {
	gc_grad_from from;
	int32_t index; /* of the forward input or output */
} gc_grad_arg;

typedef struct gc_grad_spec {
	const char *op, *domain; /* the backward operation; op NULL: none differentiable */
	int line, col;		 /* of the gradient: key */
	gc_grad_arg *inputs;	 /* the backward op's inputs, in order */
	int32_t n_inputs;
	int32_t *outputs; /* per backward output: the forward input it is the gradient of */
	int32_t n_outputs;
	const char **param_to, **param_from; /* backward param <- forward param */
	int32_t n_params;
	bool *not_diff; /* per forward input */
} gc_grad_spec;

typedef struct gc_op_spec {
	const char *file; /* the manifest */
	int line, col;	  /* its document */
	const char *name, *type, *domain;
	int64_t version; /* -1: every version */
	bool pure;
	gc_io_spec *inputs, *outputs;
	int32_t n_inputs, n_outputs;
	gc_param_spec *params;
	int32_t n_params;
	const char *functions_library; /* resolved path */
	const char *verify, *infer_shape, *select_impl;
	gc_impl_spec *impls;
	int32_t n_impls;
	int fl_line, fl_col; /* where functionsLibrary is, for load errors */
	gc_grad_spec *grad;  /* `gradient:`, or NULL */

	/* Resolved when the package loads. */
	gc_dynlib *fnlib;
	bool graphcc_iface;
	gc_fnptr verify_fn, infer_fn, select_fn;
} gc_op_spec;

typedef struct gc_package {
	const char *path;
	gc_pool *pool;
	gc_op_spec *ops;
	int32_t n_ops;
} gc_package;

/* Parses a manifest into a package (no libraries opened). Notes (skipped
 * implementations) go to note(user, text) when note is non-NULL. */
int gc_manifest_parse(const char *path, gc_package **out, void (*note)(void *, const char *),
		      void *user, gc_error *err);
/* The same for running models (registries): the self-tests (`tests:`) are
 * not looked into, so a mistake there stops only test-package and check. */
int gc_manifest_parse_to_run(const char *path, gc_package **out,
			     void (*note)(void *, const char *), void *user, gc_error *err);
/* The key of `keys` (NULL-terminated) closest to a misspelt `key`, or NULL
 * when none is close (for "did you mean"). */
const char *gc_manifest_suggest(const char *key, const char *const *keys);
/* The keys the manifest parser knows, per kind of mapping ("operation",
 * "input", "output", "param", "implementation", "acceptsRule", "test",
 * "testTensor": the names of config/manifest.schema.json's $defs), ending
 * with { NULL, NULL }. */
typedef struct gc_manifest_section {
	const char *name;
	const char *const *keys; /* NULL-terminated */
} gc_manifest_section;
extern const gc_manifest_section gc_manifest_sections[];
extern const char *const gc_manifest_test_keys[], *const gc_manifest_tensor_keys[];

/* Opens the package's functions libraries, checks ABI versions and finds
 * the symbols; checks each implementation library and kernel symbol too. */
int gc_package_load_libraries(gc_package *pkg, gc_error *err);
/* op's param named `name`, or NULL (also when op is NULL). */
const gc_param_spec *gc_op_param(const gc_op_spec *op, const char *name);

/* Checks each `gradient:` of pkg against its backward operation, found in
 * pkg or (when r is non-NULL) in r: that it exists, its arity and params
 * fit. With r NULL, backward operations of other domains are not checked.
 * Errors name the manifest's file:line:column and key. */
int gc_package_check_gradients(const gc_package *pkg, const gc_registry *r, gc_error *err);
void gc_package_free(gc_package *pkg);

static inline const char *gc_param_kind_name(gc_param_kind k)
{
	static const char *const names[GC_PARAM_KIND_COUNT] = { "bool", "int", "float", "string" };
	return (unsigned)k < GC_PARAM_KIND_COUNT ? names[k] : "?";
}

/* Whether implementation im of op accepts a node whose inputs are in[0 ..
 * n_in) (NULL: absent); when not, why (naming the rule's manifest line). */
bool gc_impl_accepts(const gc_op_spec *op, const gc_impl_spec *im, gc_tensor *const *in,
		     int32_t n_in, char *why, size_t len);

/* Everything a node bound to a package operation needs at compile time. */
const gc_op_spec *gc_registry_find(const gc_registry *r, const char *domain, const char *type,
				   int64_t version);
/* "a, b, c" list of what the registry serves for a domain (for messages). */
void gc_registry_list_domain(const gc_registry *r, const char *domain, char *buf, size_t len);

#endif
