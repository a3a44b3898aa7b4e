/* Sessions: one arena, allocated and touched once, and the executor. */
#include <graphcc/runtime.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "alloc.h"
#include "blas.h"
#include "fileio.h"
#include "crash.h"
#include "program-impl.h"
#include "session-impl.h"
#include "strpool.h"


int gc_session_new(const gc_program *p, const gc_session_options *opt, gc_session **out,
		   gc_error *err)
{
	*out = NULL;
	gc_session *s = gc_calloc(1, sizeof *s);
	if (!s)
		return gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
	s->p = p;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	s->threads = opt && opt->threads > 0 ? opt->threads : cores > 0 ? (int)cores : 1;
	/* OpenBLAS keeps one process-wide setting; the last session made wins. */
	gc_blas_set_threads(s->threads);
	size_t n_ptrs = 0;
	for (int32_t i = 0; i < p->n_nodes; i++)
		n_ptrs += (size_t)p->nodes[i].n_in + (size_t)p->nodes[i].n_out;
	s->tensors = gc_calloc((size_t)p->n_tensors + 1, sizeof *s->tensors);
	s->ptrs = gc_calloc(n_ptrs + 1, sizeof *s->ptrs);
	s->ptr_start = gc_calloc((size_t)p->n_nodes + 1, sizeof *s->ptr_start);
	s->strings = gc_strpool_new();
	s->input_strings = gc_calloc((size_t)p->n_inputs + 1, sizeof *s->input_strings);
	if (p->arena_bytes > SIZE_MAX - 64 || p->arena_bytes > gc_limit_bytes()) {
		gc_session_free(s);
		return gc_error_set(err, GC_ELIMIT,
				    "the program needs an activation arena of %" PRIu64
				    " bytes, over the limit of %" PRIu64 " (GRAPHCC_MAX_BYTES)",
				    p->arena_bytes, gc_limit_bytes());
	}
	size_t arena = (size_t)((p->arena_bytes + 63) & ~(uint64_t)63);
	s->arena = arena ? aligned_alloc(64, arena) : NULL;
	if (!s->tensors || !s->ptrs || !s->ptr_start || !s->strings || !s->input_strings ||
	    (arena && !s->arena)) {
		gc_session_free(s);
		return gc_error_set(err, GC_ENOMEM,
				    "out of memory creating a session (arena of %" PRIu64 " bytes)",
				    p->arena_bytes);
	}
	/* Touch every page now, not during the first run. */
	if (arena)
		memset(s->arena, 0, arena);
	for (int32_t t = 0; t < p->n_tensors; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		s->tensors[t] = pt->t;
		if (pt->storage == GC_STORAGE_ARENA)
			s->tensors[t].data = s->arena + pt->offset;
	}
	size_t at = 0;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		s->ptr_start[i] = (int32_t)at;
		for (int j = 0; j < n->n_in; j++)
			s->ptrs[at++] = n->in[j] >= 0 ? &s->tensors[n->in[j]] : NULL;
		for (int j = 0; j < n->n_out; j++)
			s->ptrs[at++] = n->out[j] >= 0 ? &s->tensors[n->out[j]] : NULL;
	}
	*out = s;
	return 0;
}

void gc_session_free(gc_session *s)
{
	if (!s)
		return;
	free(s->arena);
	for (int32_t i = 0; s->input_strings && i < s->p->n_inputs; i++)
		gc_free(s->input_strings[i]);
	gc_free(s->input_strings);
	gc_strpool_free(s->strings);
	gc_free(s->tensors);
	gc_free(s->ptrs);
	gc_free(s->ptr_start);
	gc_free(s);
}

/* The session keeps its own copy of a string input's strings, in one
 * block, until the input is set again or the session is freed; the arena
 * slot points into it. */
static int set_string_input(gc_session *s, int i, const gc_tensor *t, gc_error *err)
{
	const gc_program *p = s->p;
	const gc_ptensor *pt = &p->tensors[p->inputs[i]];
	int64_t n = gc_tensor_numel(t);
	uint64_t total = 0;
	for (int64_t j = 0; j < n; j++) {
		total += strlen(gc_str_at(t, j)) + 1;
		if (total > gc_limit_bytes())
			return gc_error_set(err, GC_ELIMIT,
					    "input '%s': its strings hold more than %" PRIu64
					    " bytes (GRAPHCC_MAX_BYTES)",
					    pt->name, gc_limit_bytes());
	}
	char *block = gc_malloc(total ? (size_t)total : 1);
	if (!block)
		return gc_error_set(err, GC_ENOMEM, "input '%s': out of memory for %" PRIu64
						    " bytes of strings",
				    pt->name, total);
	char **slot = s->tensors[p->inputs[i]].data;
	char *at = block;
	for (int64_t j = 0; j < n; j++) {
		const char *str = gc_str_at(t, j);
		size_t len = strlen(str) + 1;
		memcpy(at, str, len);
		slot[j] = at;
		at += len;
	}
	gc_free(s->input_strings[i]);
	s->input_strings[i] = block;
	return 0;
}

int gc_session_set_input(gc_session *s, int i, const gc_tensor *t, gc_error *err)
{
	const gc_program *p = s->p;
	if (i < 0 || i >= p->n_inputs)
		return gc_error_set(err, GC_EINVAL, "input index %d out of range (the program has %d)",
				    i, p->n_inputs);
	const gc_ptensor *pt = &p->tensors[p->inputs[i]];
	bool same = t->dtype == pt->t.dtype && t->rank == pt->t.rank;
	for (int d = 0; same && d < t->rank; d++)
		same = t->dims[d] == pt->t.dims[d];
	if (!same) {
		char a[160], b[160];
		return gc_error_set(err, GC_EINVAL,
				    "input '%s' is %s of shape %s, but the model expects %s of "
				    "shape %s",
				    pt->name, gc_dtype_name(t->dtype),
				    gc_shape_str(t->dims, t->rank, a, sizeof a),
				    gc_dtype_name(pt->t.dtype),
				    gc_shape_str(pt->t.dims, pt->t.rank, b, sizeof b));
	}
	if (t->dtype == GC_DTYPE_STRING)
		return set_string_input(s, i, t, err);
	if (pt->nbytes)
		memcpy(s->tensors[p->inputs[i]].data, t->data, (size_t)pt->nbytes);
	return 0;
}

gc_kctx gc_session_begin_run(gc_session *s, gc_error *err)
{
	gc_strpool_reset(s->strings);
	return (gc_kctx){ .err = err, .threads = s->threads, .strings = s->strings };
}

int gc_session_run(gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	gc_error local = { 0 };
	gc_kctx k = gc_session_begin_run(s, err ? err : &local);
	gc_crash_session = s; /* for the crash report: which node crashed */
	for (int32_t i = 0; i < p->n_nodes; i++) {
		gc_node *n = &p->nodes[i];
		gc_tensor **io = s->ptrs + s->ptr_start[i];
		k.node = n;
		k.scratch = n->scratch_bytes ? s->arena + p->scratch_offset[i] : NULL;
		gc_crash_current = n;
		int rc = n->run(&k, n, io, io + n->n_in);
		if (rc) {
			gc_crash_current = NULL;
			if (!k.err->code)
				gc_kerr(&k, rc, "kernel failed (%s)", gc_strerror(rc));
			return k.err->code;
		}
	}
	gc_crash_current = NULL;
	return 0;
}

const gc_tensor *gc_session_output(const gc_session *s, int i)
{
	if (i < 0 || i >= s->p->n_outputs)
		return NULL;
	return &s->tensors[s->p->outputs[i]];
}
