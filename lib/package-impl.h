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
	int line, col;
} gc_io_spec;

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

typedef struct gc_impl_spec {
	const char *backend, *type, *impl, *symbol, *config;
	const char *init, *destroy, *scratch; /* graphcc interface symbols, or NULL */
	uint64_t scratch_bytes;
	bool has_scratch_bytes, inplace;
	bool skipped; /* backend this build lacks */
	int line, col;
	/* Resolved when the package loads (not for skipped ones). */
	gc_dynlib *lib;
	bool graphcc_iface;
} gc_impl_spec;

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
/* Opens the package's functions libraries, checks ABI versions and finds
 * the symbols; checks each implementation library and kernel symbol too. */
int gc_package_load_libraries(gc_package *pkg, gc_error *err);
void gc_package_free(gc_package *pkg);

static inline const char *gc_param_kind_name(gc_param_kind k)
{
	static const char *const names[GC_PARAM_KIND_COUNT] = { "bool", "int", "float", "string" };
	return (unsigned)k < GC_PARAM_KIND_COUNT ? names[k] : "?";
}

/* Everything a node bound to a package operation needs at compile time. */
const gc_op_spec *gc_registry_find(const gc_registry *r, const char *domain, const char *type,
				   int64_t version);
/* "a, b, c" list of what the registry serves for a domain (for messages). */
void gc_registry_list_domain(const gc_registry *r, const char *domain, char *buf, size_t len);

#endif
