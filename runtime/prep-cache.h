/*
 * The preparations a session keeps of its nodes prepared at run time
 * (gc_node.reprepare: a shape only known at run time, such as a dynamic
 * batch, or a value prepare needs). Preparing a node again for every run
 * would redo its shape inference and its plans (packed weights, scratch
 * layouts) on every request; instead each node keeps its last
 * GC_PREP_WAYS preparations, keyed by what prepare depends on: every
 * input's type and shape, and the values of the non-constant inputs whose
 * values it reads (a Reshape's shape, a Slice's starts, NonZero's input:
 * found once per node by preparing it with that input's value withheld,
 * which such a prepare answers with gc_kneed_value, or fails).
 * A run whose inputs match a kept preparation uses it as it is: no
 * prepare, no allocation (the outputs' session storage only grows).
 *
 * Not kept (prepared on every run, as before): nodes with subgraphs and
 * nodes reading sequences or optionals, whose preparation depends on more
 * than shapes. A preparation never keeps a non-constant input's values
 * (gc_kfixed sees them as varying), so a kept one stays right for any
 * values of the same key.
 */
#ifndef GC_PREP_CACHE_H
#define GC_PREP_CACHE_H

#include <graphcc/runtime.h>

#include <stdbool.h>
#include <stdint.h>

#include "kernel.h"
#include "value.h"

#define GC_PREP_WAYS 4

typedef struct gc_prep_entry {
	bool used;
	uint64_t stamp; /* last use, for eviction */
	gc_node node;	/* the node as prepared, with its state */
	gc_tensor *outs; /* each output's type and shape as prepared */
	gc_dynbuf key;
	size_t key_len;
} gc_prep_entry;

typedef struct gc_prep_cache {
	gc_prep_entry e[GC_PREP_WAYS];
	bool cacheable; /* see above */
	bool probed;	/* value_in is known */
	uint64_t value_in; /* bit j: prepare reads input j's value (j >= 63: bit 63) */
} gc_prep_cache;

/* How often a session prepared nodes at run time, and reused a kept
 * preparation instead (for tests and measurements). */
typedef struct gc_prep_stats {
	uint64_t prepared, reused;
} gc_prep_stats;

/* Frees every kept preparation of c. */
void gc_prep_cache_free(gc_prep_cache *c);

/* The key of node n's inputs now into *key (its length into *len). */
int gc_prep_key(const gc_prep_cache *c, const gc_node *n, gc_tensor *const *in,
		gc_dynbuf *key, size_t *len, gc_error *err);

/* The kept preparation for key, or NULL. */
gc_prep_entry *gc_prep_find(gc_prep_cache *c, const void *key, size_t len, uint64_t now);

/* The entry to prepare into: an unused one, else the least recently used
 * one (its preparation released). */
gc_prep_entry *gc_prep_victim(gc_prep_cache *c);

#endif
