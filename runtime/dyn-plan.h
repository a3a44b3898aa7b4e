/*
 * Memory plans of a session's dynamic tensors, one per input shape
 * (issue 18 item 10). Tensors whose shape is only known at run time (a
 * dynamic batch) are placed by the nodes prepared at run time
 * (prep-cache.h). A session's first run of a new set of input shapes puts
 * each in a buffer of its own; when that run ends, their sizes and
 * lifetimes (liveness.h, as the compiler plans the arena) give offsets in
 * one region the session keeps (first fit, largest first, 64-byte
 * aligned, two tensors share bytes only when their lifetimes do not meet),
 * cached per input shapes (GC_PREP_WAYS of them, least recently used
 * dropped). A later run with the same input shapes places each tensor at
 * its offset: no allocation, and memory reused as in the arena; the
 * per-tensor buffers are given back then. A tensor that comes out larger
 * than planned (its size depends on values, as NonZero's) takes its own
 * buffer for that run, and the plan grows to it when the run ends. Tensors
 * a kernel sizes itself (gc_kout_shape) and sequences keep their own
 * buffers. Only a program's session (not a subgraph's) plans, and not
 * without the arena (gc_session_options.no_arena).
 */
#ifndef GC_DYN_PLAN_H
#define GC_DYN_PLAN_H

#include <graphcc/runtime.h>

#include <stdbool.h>
#include <stdint.h>

#include "prep-cache.h"
#include "value.h"

#define GC_DYN_PLAN_NONE UINT64_MAX

typedef struct gc_dyn_plan {
	bool used;
	uint64_t stamp;
	gc_dynbuf key; /* the program inputs' types and shapes */
	size_t key_len;
	uint64_t *off;	 /* per tensor: offset in the region, or GC_DYN_PLAN_NONE */
	uint64_t *bytes; /* per tensor: the bytes planned */
	uint64_t total;
} gc_dyn_plan;

typedef struct gc_dyn_plans {
	gc_dyn_plan e[GC_PREP_WAYS];
	gc_dynbuf region; /* the largest plan's bytes */
	gc_dynbuf key;	  /* the key of the run under way */
	size_t key_len;
	gc_dyn_plan *cur; /* the plan of the run under way, or NULL */
	uint64_t clock;
	/* per tensor, for the run under way: the bytes a node prepared at run
	 * time gave it (0: none), and whether it had to leave the plan */
	uint64_t *placed;
	bool grew;
	int32_t *first, *last; /* lifetimes (liveness.h) */
	uint64_t plans_made, runs_planned; /* for tests and measurements */
} gc_dyn_plans;

struct gc_session;

/* The plans of session s (a program's session with dynamic tensors), or
 * NULL with err set. */
gc_dyn_plans *gc_dyn_plans_new(const struct gc_session *s, gc_error *err);
void gc_dyn_plans_free(gc_dyn_plans *d);

/* When a run starts: the plan for the inputs' shapes now, if one is kept
 * (the per-tensor buffers of the tensors it places are given back). */
int gc_dyn_plan_begin(gc_dyn_plans *d, struct gc_session *s, gc_error *err);

/* Where tensor t of `bytes` bytes goes in this run: its place in the plan
 * under way, or NULL (its own buffer). Records the size either way. */
void *gc_dyn_plan_place(gc_dyn_plans *d, int32_t t, uint64_t bytes);

/* When a run ends well: a plan for its input shapes made (or grown) from
 * the sizes placed, its region reserved. */
int gc_dyn_plan_end(gc_dyn_plans *d, struct gc_session *s, gc_error *err);

#endif
