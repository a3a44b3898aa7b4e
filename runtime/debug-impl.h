/*
 * The debugging instruments' parts (gc_session_run_debug in debug.c drives
 * them): value statistics and the trace line (debug-report.c), tensor dumps
 * (debug-dump.c), guard zones around custom kernels (debug-guard.c) and the
 * profile (debug-profile.c).
 */
#ifndef GC_DEBUG_IMPL_H
#define GC_DEBUG_IMPL_H

#include <graphcc/debug.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "session-impl.h"

/* ------------------------------------------------------------ values */

/* Statistics of a tensor's values. NaN and Inf are counted, not folded
 * into min, max and mean (which cover the finite values). */
typedef struct gc_dstats {
	bool numeric;  /* false for strings and unknown types: nothing computed */
	bool is_float; /* float16/32/64, bfloat16 */
	int64_t count; /* elements */
	int64_t nan, inf;
	int64_t finite;
	double min, max, mean;
	int64_t first_bad; /* flat index of the first NaN/Inf; -1: none */
	double first_bad_value;
} gc_dstats;

void gc_debug_stats(const gc_tensor *t, gc_dstats *st);
/* The flat index of t's first NaN or Inf (and its value), -1 if none or if
 * t is not of a floating-point type. */
int64_t gc_debug_first_nonfinite(const gc_tensor *t, double *value);

/* "node 'n' (dom::Type), operation 'Op', flavour 'f', library L, symbol S"
 * for a custom node, "node 'n' (Conv)" for a built-in one. Returns buf. */
const char *gc_debug_node_str(const gc_node *n, char *buf, size_t len);
/* "dom::Type", or "Type" for the default domain. Returns buf. */
const char *gc_debug_op_str(const gc_node *n, char *buf, size_t len);
/* "name float32 1x3x8x8" of tensor index idx with the session's view. */
const char *gc_debug_tensor_str(const gc_session *s, int32_t idx, char *buf, size_t len);
/* "[0, 2, 5]": the multi-index of flat index i in t. Returns buf. */
const char *gc_debug_index_str(const gc_tensor *t, int64_t i, char *buf, size_t len);

/* One trace line for node i, its kernel having taken us microseconds. */
void gc_debug_trace_line(FILE *f, const gc_session *s, int32_t i, double us);

/* ------------------------------------------------------------ dumps */

typedef struct gc_dumper gc_dumper;
/* Creates dir (and its parents) and DIR/tensors.tsv. */
int gc_dumper_open(const char *dir, const gc_program *p, gc_dumper **out, gc_error *err);
/* Writes tensor idx (the session's view) as DIR/<file-safe name>.npy and
 * its line in the map; producer names the node (NULL: a graph input). */
int gc_dumper_write(gc_dumper *d, const gc_session *s, int32_t idx, const char *producer,
		    gc_error *err);
/* Returns how many tensors were written; frees d. */
int32_t gc_dumper_close(gc_dumper *d);

/* Writes tensor idx as node `consumer` sees it now, which differs from
 * what was dumped when it was produced: DIR/<name>.seen-by-<consumer>.npy,
 * its map line and a note on stderr. */
int gc_dumper_write_seen(gc_dumper *d, const gc_session *s, int32_t idx, const char *producer,
			 const char *consumer, gc_error *err);

/* ------------------------------------------------------------ checked tensors */

typedef struct gc_tcheck gc_tcheck;
int gc_tcheck_new(const gc_session *s, gc_tcheck **out, gc_error *err);
void gc_tcheck_free(gc_tcheck *c);
/* Tensor idx was just produced by node `producer` (-1: a graph input). */
void gc_tcheck_produced(gc_tcheck *c, const gc_session *s, int32_t idx, int32_t producer);
/* Whether tensor idx's bytes differ from when it was produced. */
bool gc_tcheck_changed(const gc_tcheck *c, const gc_session *s, int32_t idx);
/* Its producer: node index, -1 graph input, -2 none recorded. */
int32_t gc_tcheck_producer(const gc_tcheck *c, int32_t idx);
/* After node i: every tensor still to be read that i does not produce must
 * be unchanged (GC_ECRASH naming i otherwise); then i's outputs are
 * recorded as produced. */
int gc_tcheck_after(gc_tcheck *c, const gc_session *s, int32_t i, gc_error *err);

/* ------------------------------------------------------------ guards */

typedef struct gc_guard gc_guard;
/* Sizes the shadow buffers for every custom node of s's program, once. */
int gc_guard_new(const gc_session *s, gc_guard **out, gc_error *err);
void gc_guard_free(gc_guard *g);
/*
 * Before custom node i's kernel: copies its inputs aside, builds shadow
 * outputs (the current output bytes between two canary zones) and returns
 * the output pointers to hand the kernel instead of the real ones.
 */
gc_tensor *const *gc_guard_begin(gc_guard *g, const gc_session *s, int32_t i);
/*
 * After it: checks the canaries and the inputs; GC_ECRASH with a message
 * naming node, flavour, library, tensor and byte offset on a violation;
 * otherwise copies the shadows into the real outputs and returns 0.
 */
int gc_guard_end(gc_guard *g, const gc_session *s, int32_t i, gc_error *err);
/* Whether node i's kernel may be called again on its inputs as they are
 * and its outputs compared bytewise (no output shares an input's memory;
 * no string or container output). */
bool gc_guard_may_rerun(const gc_session *s, int32_t i);
/*
 * After a second call of custom node i on shadows from a second
 * gc_guard_begin, its scratch poisoned with poison_b (the first call had
 * poison_a): checks the canaries, then compares the shadows with the real
 * outputs (the first call's); GC_ECRASH saying the kernel reads scratch it
 * did not write when they differ.
 */
int gc_guard_again(gc_guard *g, const gc_session *s, int32_t i, int poison_a, int poison_b,
		   gc_error *err);

/* ------------------------------------------------------------ profile */

/* Writes the Chrome trace-event JSON of the first n_done nodes (start and
 * duration of each in microseconds since the run began; with pool, what
 * each node's jobs on the worker pool cost: kernels/nn-par.h). */
struct gc_nn_par_stats;
int gc_profile_write(const char *path, const gc_session *s, const double *start_us,
		     const double *dur_us, const struct gc_nn_par_stats *pool, int32_t n_done,
		     gc_error *err);
/* The per-op-type table (count, total ms, share), sorted by total. */
void gc_profile_summary(FILE *f, const gc_program *p, const double *dur_us, int32_t n_done);

#endif
