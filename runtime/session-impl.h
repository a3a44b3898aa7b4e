/* A session's insides, for the executor and the debugging instruments. */
#ifndef GC_SESSION_IMPL_H
#define GC_SESSION_IMPL_H

#include <graphcc/runtime.h>

#include <stdatomic.h>

#include "dyn-plan.h"
#include "prep-cache.h"
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
	/* gc_session_options.no_arena: per tensor and per node, their own
	 * exact-size blocks instead (NULL otherwise). */
	unsigned char **own;
	unsigned char **own_scratch;
	gc_tensor *tensors;  /* views: one per program tensor */
	gc_tensor **ptrs;    /* per node: inputs then outputs */
	int32_t *ptr_start;  /* per node: where its pointers start */
	int threads;
	/* A static program's session with threads > 1 whose first run split
	 * less than GC_NN_PAR_SMALL_RUN of work (nn-par.h): its runs use one
	 * thread, and leave the pool alone. */
	bool serial;
	/* Strings (see strpool.h): the ones kernels make, emptied when a run
	 * starts, and per program input the session's copy of the strings
	 * last set (one block each, reused by the next set; empty for other
	 * inputs). */
	gc_strpool *strings;
	gc_dynbuf *input_strings;

	/* Programs with dynamic tensors or control flow (p->dynamic) only: */
	gc_dynslot *dyn;      /* per tensor; used by DYNAMIC ones */
	gc_prep_cache *prep;  /* per node: the kept preparations of a node
				 prepared at run time (reprepare; prep-cache.h) */
	gc_dynbuf prep_key;   /* the key being looked up */
	uint64_t prep_clock;
	gc_prep_stats prep_stats;
	gc_session **subs;    /* the subprograms' sessions, node i's from sub_start[i] */
	int32_t *sub_start;
	gc_dynbuf scratch;    /* scratch of the nodes prepared at run time */
	gc_dyn_plans *plans;  /* a program's session: memory plans per input shape */
	int depth;	      /* 0 for a program's session, +1 per enclosing node */
	/* Random ops (kernels/random.c): the seed (the program's session's,
	 * shared by its subprograms), the salt that tells subprogram sessions
	 * apart (0 for the program's), and the runs started so far. */
	uint64_t seed, salt, runs;

	gc_session *root;     /* the program's session (itself at depth 0) */
	/* A program's session (depth 0) only: */
	int64_t deadline_ns;  /* of the run under way (gc_session_run_with) */
	const int *cancel;
	atomic_int busy;      /* a public call is under way (gc_session_claim) */
	bool *input_set;      /* per input: set since the session was made */
	char name[64];	      /* gc_session_options.name, for messages */
	gc_log_sink log;      /* gc_session_options.log, or the program's */
};

/*
 * A session serves one call at a time: the public entry points that use it
 * (run, run_debug, set_input, use_input) claim it first; a second thread's
 * call meanwhile is refused with GC_EBUSY naming the session and `fn`,
 * never run on shared memory. 0 when claimed.
 */
int gc_session_claim(gc_session *s, const char *fn, gc_error *err);
void gc_session_unclaim(gc_session *s);

/* Whether the run of s's program session should stop now (cancel flag set,
 * deadline passed): GC_ECANCELED with err naming `where`, else 0. */
int gc_session_check_stop(const gc_session *s, const char *where, gc_error *err);

/* Where arena tensor t lives: the arena at its offset, or its own block. */
static inline unsigned char *gc_session_home(const gc_session *s, int32_t t)
{
	return s->own ? s->own[t] : s->arena + s->p->tensors[t].offset;
}

/* Node i's scratch memory (NULL when it has none). */
static inline void *gc_session_scratch(const gc_session *s, int32_t i)
{
	if (!s->p->nodes[i].scratch_bytes)
		return NULL;
	return s->own_scratch ? s->own_scratch[i] : s->arena + s->p->scratch_offset[i];
}

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
