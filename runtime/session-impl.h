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
};

/* The in/out tensor pointers of node i: inputs first, then outputs. */
static inline gc_tensor **gc_session_node_io(const gc_session *s, int32_t i)
{
	return s->ptrs + s->ptr_start[i];
}

#endif
