/*
 * The `tests:` list of an operation in a manifest: self-tests run by
 * `graphcc test-package` (lib/selftest.c). Parsed from the manifest's YAML
 * by manifest-tests.c; errors name file:line:column and the key.
 */
#ifndef GC_MANIFEST_TESTS_H
#define GC_MANIFEST_TESTS_H

#include <graphcc/graphcc.h>

#include <stdbool.h>
#include <yaml.h>

#include "../runtime/build.h"
#include "package-impl.h"

/* One tensor of a test: inline (t.data in the pool) or a .npy path. */
typedef struct gc_test_tensor {
	const char *npy; /* resolved against the manifest's folder; NULL: inline */
	gc_tensor t;	 /* inline values */
	int line, col;
} gc_test_tensor;

/* One param of a test, as the node attribute it becomes. */
typedef struct gc_test_param {
	const gc_param_spec *spec;
	gc_attr attr; /* name: the spec's attribute; values in the pool */
	int line, col;
} gc_test_param;

typedef struct gc_op_test {
	const char *name; /* "test N" when not given */
	int line, col;
	gc_test_tensor *inputs;
	int32_t n_inputs;
	gc_test_tensor *outputs; /* expected; NULL with same_as or none */
	int32_t n_outputs;
	const char *same_as; /* expected = that flavour's outputs */
	/* The flavours the case is for (a kernel for another element type
	 * cannot run it); NULL: every flavour of the backend. */
	const char **flavours;
	int32_t n_flavours;
	double tolerance;    /* |got - want| <= tolerance * max(1, |want|) */
	gc_test_param *params;
	int32_t n_params;
	/* A case made from a model's node (test-package --model): no expected
	 * values; the flavours and the checks compare among themselves. */
	bool from_model;
} gc_op_test;

/*
 * Parses `tests` (a node of doc, from the manifest at path; npy paths are
 * resolved against dir) for operation op. With out NULL it only checks
 * (what `graphcc check` and every load do); otherwise the tests live in
 * pool.
 */
int gc_manifest_tests_parse(const char *path, const char *dir, yaml_document_t *doc,
			    const yaml_node_t *tests, const gc_op_spec *op, gc_pool *pool,
			    gc_op_test **out, int32_t *n, gc_error *err);

/* Reads the manifest at path again and parses the tests of its operation
 * number op_index (its YAML document), op being that operation as
 * gc_manifest_parse gave it. */
int gc_manifest_tests_load(const char *path, int32_t op_index, const gc_op_spec *op,
			   gc_pool *pool, gc_op_test **out, int32_t *n, gc_error *err);

#endif
