/* A compiled program and its execution state. The compiler (lib/) fills a
 * program; the runtime runs it. */
#ifndef GC_PROGRAM_IMPL_H
#define GC_PROGRAM_IMPL_H

#include <graphcc/runtime.h>

#include <stdbool.h>

#include "kernel.h"
#include "log.h"
#include "pool.h"

typedef enum gc_storage {
	GC_STORAGE_ARENA, /* activation: offset into the session's arena */
	GC_STORAGE_CONST, /* weights and folded values: t.data points at it */
	/* Shape only known at run time (t.rank may be GC_RANK_DYNAMIC, t.dtype
	 * UNDEFINED when not known before either), or a sequence or optional
	 * value: memory owned by the session, grown as needed. */
	GC_STORAGE_DYNAMIC,
} gc_storage;

typedef struct gc_ptensor {
	const char *name;
	gc_tensor t; /* dtype, rank, dims; data for CONST */
	gc_storage storage;
	uint64_t offset; /* ARENA: byte offset */
	uint64_t nbytes;
	/* A constant a .gcb holds only in packed form (its readers' kernels
	 * use that): t.data is NULL until a kernel wants the plain value, which
	 * the loader then rebuilds from this (gc_packed_unpack). */
	const char *packed_key;
	const void *packed;
	uint64_t packed_nbytes;
} gc_ptensor;

/* Session state (gc_graph_add_state): input `input` starts as constant
 * tensor `init` and takes output `output` after each successful run
 * (indices into the program's inputs, outputs and tensors). */
typedef struct gc_pstate {
	int32_t input, output, init;
} gc_pstate;

struct gc_program {
	gc_pool *pool; /* names, nodes, attributes, constants */
	const struct gc_backend *backend; /* what prepares and runs its nodes */
	int32_t n_tensors;
	gc_ptensor *tensors;
	int32_t n_nodes;
	gc_node *nodes;
	uint64_t *scratch_offset; /* per node: its scratch memory in the arena */
	int32_t n_inputs, n_outputs;
	int32_t *inputs, *outputs; /* tensor indices */
	uint64_t arena_bytes;
	uint64_t tensor_bytes; /* sum of activation sizes without reuse */
	uint64_t const_bytes;

	/* Anything beyond the flat loop: dynamic tensors, nodes prepared at run
	 * time, control flow. Sessions of other programs run the flat loop. */
	bool dynamic;
	/* A subprogram (the body of a control-flow node): its first n_formal
	 * inputs are the subgraph's own; input n_formal + j is the enclosing
	 * node's input outer_slot[j] (a tensor of the enclosing graph the
	 * subgraph reads by name). */
	int32_t n_formal;
	int32_t *outer_slot;
	int32_t n_states;
	gc_pstate *states;

	/* Loaded from a .gcb: the mapping the weights live in, and what the
	 * file records. */
	void *map;
	size_t map_len;
	uint32_t format_version;
	const char *graphcc_version;
	/* Loaded for inspection: no library was opened, it cannot run. */
	bool inspect_only;
	int32_t n_libs;
	const char **lib_paths, **lib_sha;
	gc_log_sink log; /* gc_load_options.log (warn) */
};

/* An empty program with its pool; NULL when out of memory. */
gc_program *gc_program_alloc(void);
/* Frees the per-node states a prepare made. */
void gc_node_release_state(gc_node *n);

#endif
