/*
 * The executor's one loop, with hooks. gc_session_run is this loop with no
 * hooks; the debugging instruments (trace, dumps, NaN check, guard zones,
 * profile, breakpoint, time limit: debug.c) and the flavour comparison
 * (graphcc run --compare-flavours: lib/flavours.c) are hook sets of it. The
 * loop owns what every run needs: the string reset when a run starts, the
 * crash context (which session and node run now, saved and restored around
 * a subprogram's run), preparing nodes at run time and handing control
 * flow its subprograms (gc_session_step), and the error of a failing
 * kernel.
 */
#ifndef GC_RUN_HOOKS_H
#define GC_RUN_HOOKS_H

#include <graphcc/runtime.h>

#include <stdint.h>

#include "program-impl.h"

/* The node a hook is called for. */
typedef struct gc_run_node {
	gc_session *session;
	const gc_program *program;
	int32_t index;
	const gc_node *node; /* &program->nodes[index] */
	gc_tensor *const *in; /* the session's views of its inputs */
	/* Of its outputs; `before` may point the kernel at others (the guard's
	 * shadows). */
	gc_tensor *const *out;
	int threads; /* the session's */
	/* `before` may set it: the kernel's scratch poison (gc_kctx). */
	int scratch_poison;
} gc_run_node;

/* Any hook may be NULL. A hook that returns non-zero stops the run with
 * that result (it sets err). */
typedef struct gc_run_hooks {
	void *user;
	/* Before node rn->index runs. */
	int (*before)(void *user, gc_run_node *rn, gc_error *err);
	/* After it ran and succeeded. */
	int (*after)(void *user, const gc_run_node *rn, gc_error *err);
	/* After it ran and failed with rc (err holds why); the run stops. */
	void (*on_failure)(void *user, const gc_run_node *rn, int rc, gc_error *err);
} gc_run_hooks;

/* Runs every node of s in order with hooks h (NULL: none). 0 or the first
 * failure's code (err set). */
int gc_session_run_hooked(gc_session *s, const gc_run_hooks *h, gc_error *err);

/* Runs node rn->index of s once more, on rn->in and rn->out as they are
 * now, with rn->scratch_poison, outside the loop and without hooks (the
 * guard's second call of a kernel that has scratch). 0, its error, or 1
 * when the node is prepared at run time (dynamic shapes): not run again. */
int gc_session_run_node_again(gc_session *s, const gc_run_node *rn, gc_error *err);

/* The in/out tensor views of node i of s (inputs first, then outputs), for
 * code outside the executor that looks at a session's tensors. */
gc_tensor **gc_session_io(const gc_session *s, int32_t i);

#endif
