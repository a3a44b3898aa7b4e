/* Tensor lifetimes and in-place chains of a program, as the memory plan
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

/*
 * In place: output 0 takes input 0's bytes when the kernel allows it
 * (inplace_ok), both are arena tensors of the same size, and the input
 * dies at this node (it is not a program input, which must survive the
 * run). Chains share one block: alias[t] is the tensor whose bytes t takes
 * (-1: its own) and last[] of a chain's root grows to the chain's end.
 * same_offset: only where the tensors already have one offset (a plan
 * read from a file, which must not gain sharing it did not plan).
 */
void gc_share_in_place(const gc_program *p, int32_t *last, const bool *is_input, int32_t *alias,
		       bool same_offset);

#endif
