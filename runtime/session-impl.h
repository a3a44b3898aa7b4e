/* A session's insides, for the executor and the debugging instruments. */
#ifndef GC_SESSION_IMPL_H
#define GC_SESSION_IMPL_H

#include <graphcc/runtime.h>

#include "program-impl.h"

struct gc_session {
	const gc_program *p;
	unsigned char *arena;
	gc_tensor *tensors;  /* views: one per program tensor */
	gc_tensor **ptrs;    /* per node: inputs then outputs */
	int32_t *ptr_start;  /* per node: where its pointers start */
	int threads;
	/* Strings (see strpool.h): the ones kernels make, emptied when a run
	 * starts, and per program input the session's copy of the strings
	 * last set (one block each, NULL for other inputs). */
	gc_strpool *strings;
	char **input_strings;
};

/* Starts a run of s: the strings of the previous run are given back (its
 * string outputs die here). Returns the kernels' context. */
gc_kctx gc_session_begin_run(gc_session *s, gc_error *err);

/* The in/out tensor pointers of node i: inputs first, then outputs. */
static inline gc_tensor **gc_session_node_io(const gc_session *s, int32_t i)
{
	return s->ptrs + s->ptr_start[i];
}

#endif
