/*
 * Storage that lives in a session rather than in the arena: the bytes of a
 * tensor whose shape is only known at run time, and the containers behind
 * sequence and optional values. All of it is grown as needed and kept
 * between runs, so a program whose shapes do not change allocates nothing
 * after its first run; every growth is capped by GRAPHCC_MAX_BYTES.
 */
#ifndef GC_VALUE_H
#define GC_VALUE_H

#include <graphcc/runtime.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gc_dynbuf {
	void *data;
	size_t cap;
} gc_dynbuf;

/* Grows b to at least `bytes` (never shrinks). keep: the bytes it holds
 * survive (a reallocation); otherwise they may not. `what` names the
 * tensor in the error. */
int gc_dynbuf_reserve(gc_dynbuf *b, uint64_t bytes, bool keep, const char *what, gc_error *err);
void gc_dynbuf_free(gc_dynbuf *b);

/* A sequence a session owns: items live in bufs, which only grow. */
typedef struct gc_seqbuf {
	gc_sequence s; /* first: a tensor's data points at the whole */
	int32_t cap;
	gc_dynbuf *bufs;
} gc_seqbuf;

/* An optional a session owns. */
typedef struct gc_optbuf {
	gc_optional o; /* first */
	gc_dynbuf buf; /* a tensor value's bytes */
	gc_seqbuf seq; /* a sequence value */
} gc_optbuf;

/* A session's container for values of type dtype (a sequence or optional
 * type), empty; NULL when out of memory. */
void *gc_value_container_new(gc_dtype dtype);
void gc_value_container_free(gc_dtype dtype, void *c);

/* Sequences a session owns. Item i's bytes are the sequence's own. */
int gc_seq_resize(gc_seqbuf *b, int32_t n, gc_error *err);
/* Item i (< n) becomes a copy of t. */
int gc_seq_set(gc_seqbuf *b, int32_t i, const gc_tensor *t, gc_error *err);
/* b becomes a copy of src (src may be any sequence, not b itself). */
int gc_seq_assign(gc_seqbuf *b, const gc_sequence *src, gc_error *err);

/* The optional b holds a copy of v (a tensor or a sequence), or nothing
 * when v is NULL. */
int gc_opt_set(gc_optbuf *b, const gc_tensor *v, gc_error *err);

/*
 * dst (a tensor whose data is a session's sequence or optional container)
 * becomes a copy of src, a value of the same kind. Element types are the
 * caller's to check (gc_value_type_fits), with the error it words.
 */
int gc_value_assign(gc_tensor *dst, const gc_tensor *src, gc_error *err);

/* Whether a value of type `have` may go where `want` is expected: equal,
 * or want leaves an element type UNDEFINED that have fills, or want is an
 * optional of have's type (the optional then holds it). */
bool gc_value_type_fits(gc_dtype want, gc_dtype have);

#endif
