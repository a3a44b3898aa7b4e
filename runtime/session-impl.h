/* A session's insides, for the executor and the debugging instruments. */
#ifndef GC_SESSION_IMPL_H
#define GC_SESSION_IMPL_H

#include <graphcc/runtime.h>

#include "program-impl.h"
#include "value.h"

/* Session-owned storage of one DYNAMIC tensor. */
typedef struct gc_dynslot {
	gc_dynbuf buf;	 /* a tensor's bytes */
	void *container; /* a sequence or optional value (gc_seqbuf, gc_optbuf) */
} gc_dynslot;

struct gc_session {
	const gc_program *p;
	unsigned char *arena;
	gc_tensor *tensors;  /* views: one per program tensor */
	gc_tensor **ptrs;    /* per node: inputs then outputs */
	int32_t *ptr_start;  /* per node: where its pointers start */
	int threads;
	/* Strings (see strpool.h): the ones kernels make, emptied when a run
	 * starts, and per program input the session's copy of the strings
	 * last set (one block each, reused by the next set; empty for other
	 * inputs). */
	gc_strpool *strings;
	gc_dynbuf *input_strings;

	/* Programs with dynamic tensors or control flow (p->dynamic) only: */
	gc_dynslot *dyn;      /* per tensor; used by DYNAMIC ones */
	gc_node *nodes;	      /* per node: the session's own copy of a node
				 prepared at run time (reprepare), with its state */
	gc_session **subs;    /* the subprograms' sessions, node i's from sub_start[i] */
	int32_t *sub_start;
	gc_dynbuf scratch;    /* scratch of the nodes prepared at run time */
	int depth;	      /* 0 for a program's session, +1 per enclosing node */
};

/* The in/out tensor pointers of node i: inputs first, then outputs. */
static inline gc_tensor **gc_session_node_io(const gc_session *s, int32_t i)
{
	return s->ptrs + s->ptr_start[i];
}

/*
 * Subprogram sessions (control flow): input i reads t's memory, no copy
 * (t must stay as it is until the run ends). Checks t against the input:
 * its type, and its shape unless the input's shape is dynamic. `what` names
 * the value in an error.
 */
int gc_session_bind_input(gc_session *s, int i, const gc_tensor *t, const char *what,
			  gc_error *err);

#endif
