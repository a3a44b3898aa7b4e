/* Tensor lifetimes and shared bytes of a program, as the memory plan
 * counts them: one definition for the planner (lib/plan-memory.c), which
 * places the blocks, and the loader's meaning check (gcb-check.c), which
 * verifies a plan read from a file against them. */
#ifndef GC_LIVENESS_H
#define GC_LIVENESS_H

#include <stdbool.h>
#include <stdint.h>

#include "program-impl.h"

/*
 * Steps: inputs live from step 0, node i runs at step i + 1, outputs (and
 * inputs, which may be run on many times) live to step n_nodes + 1. Fills
 * first[t] (its first write; 0 for inputs and tensors never written) and
 * last[t] (its last read, never before first) and is_input[t], for every
 * tensor t.
 */
void gc_lifetimes(const gc_program *p, int32_t *first, int32_t *last, bool *is_input);

/* Concat nests at most this deep (a member of a member of ...). */
#define GC_SHARE_DEPTH 32

/*
 * Which tensors take bytes of another, per tensor:
 * - in place (alias): output 0 of a node takes input inplace_in's bytes
 *   (input 0's, or a fused residual's) when the kernel allows it
 *   (inplace_ok), both are arena tensors of the same size, and the input
 *   dies at this node (it is not a program input, which must survive the
 *   run); an input after the first only when no other input of the node is
 *   in its block. Chains share one block: alias[t] is the chain's root.
 * - Concat in place (parent, delta): a Concat whose output c is laid out
 *   so that each input is one contiguous slice of it (every dim before the
 *   axis is 1) gets an input t placed at its slice (parent[t] = c, delta[t]
 *   its byte offset in c): t's writer writes there and Concat copies
 *   nothing (its kernel skips an input whose data already is its slice).
 *   A member is an arena tensor with bytes, not a program input, at a
 *   slice aligned to `align`, in at most one Concat (nodes are taken last
 *   first: the one read last, when a tensor is concatenated twice); the
 *   others (constants, inputs, the second copy of one tensor) are copied
 *   as before. A Concat whose inputs all already sit, in order, in one
 *   block is itself placed there (densenet's concats of a growing list).
 *   A member is never the input of an in-place node (it would overwrite
 *   bytes others still read), a Concat output with members only where all
 *   of them die; an in-place chain ending in a member puts its root at the
 *   slice.
 * After the call, the owner of a block (alias and parent both -1) has
 * first/last spanning every tensor placed in it.
 * same_offset: only where the tensors already have those offsets (a plan
 * read from a file, which must not gain sharing it did not plan).
 */
typedef struct gc_sharing {
	int32_t *alias;
	int32_t *parent;
	uint64_t *delta;
	bool *has_members;
} gc_sharing;

/* Arrays for n tensors; 0 or GC_ENOMEM. */
int gc_sharing_alloc(gc_sharing *sh, int32_t n);
void gc_sharing_free(gc_sharing *sh);
/* 0, or GC_ENOMEM */
int gc_share_memory(const gc_program *p, int32_t *first, int32_t *last, const bool *is_input,
		    gc_sharing *sh, uint64_t align, bool same_offset);
/* The tensor whose block holds t, and t's byte offset in it (*delta). */
int32_t gc_share_owner(const gc_sharing *sh, int32_t t, uint64_t *delta);
/* Whether Concat node n's output is its inputs' slices in a row (every dim
 * before the axis is 1); then delta[j] is input j's byte offset in it. */
bool gc_concat_slices(const gc_program *p, const gc_node *n, uint64_t *delta);

#endif
