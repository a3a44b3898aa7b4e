/*
 * A backend is a value: the name that manifests, selection, .gcb bindings
 * and the CLI (--backend) spell it by, the op table it serves, how it
 * prepares a node (which picks the node's runner), and its memory and
 * threading. This build has one, the Interpreter (backend.c); a second
 * backend is a second descriptor in gc_backends, not a hunt for the string.
 */
#ifndef GC_BACKEND_H
#define GC_BACKEND_H

#include <graphcc/runtime.h>

#include <stddef.h>
#include <stdint.h>

#include "kernel.h"
#include "ops.h"

typedef struct gc_backend {
	const char *name;
	/* The built-in ops it serves, indexed by gc_op (GC_OP_COUNT entries). */
	const gc_op_info *ops;
	/* Prepares node n (built-in or custom): checks it, sets its outputs'
	 * types and shapes, its state and scratch, and its runner n->run. */
	int (*prepare)(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out);
	/* Memory: the alignment of every block of the arena a program runs in. */
	uint32_t arena_align;
	/* Threading: kernels get the session's thread count (gc_kctx.threads,
	 * GcOpContext.num_threads) and may use up to that many at once. */
	int kernels_threaded;
} gc_backend;

/* The backends this build has, the default first. */
extern const gc_backend *const gc_backends[];
extern const size_t gc_n_backends;

/* The backend named `name` (NULL: the default one), or NULL when this
 * build does not have it. */
const gc_backend *gc_backend_find(const char *name);
/* "Interpreter" (the names, comma-separated), for messages. */
const char *gc_backend_names(char *buf, size_t len);

#endif
