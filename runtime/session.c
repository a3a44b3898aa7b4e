/* Sessions: one arena, allocated and touched once, and the executor. */
#include <graphcc/runtime.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/random.h>
#include <unistd.h>

#include "alloc.h"
#include "api-check.h"
#include "backend.h"
#include "kernels/nn-par.h"
#include "fileio.h"
#include "crash.h"
#include "ops.h"
#include "options.h"
#include "program-impl.h"
#include "run-hooks.h"
#include "session-impl.h"
#include "strpool.h"

/* Subprograms nest as deep as their models do; past this, refuse. */
#define MAX_DEPTH 64

static int session_new(const gc_program *p, int threads, bool no_arena, gc_session *parent,
		       gc_session **out, gc_error *err);

/* splitmix64's finaliser: a subprogram session's salt from its parent's
 * and where it sits (node i, subgraph j); never 0. */
static uint64_t sub_salt(uint64_t parent, int32_t i, int32_t j)
{
	uint64_t z = parent + 0x9e3779b97f4a7c15u * (((uint64_t)(uint32_t)i << 8) + (uint64_t)j + 1);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	z ^= z >> 31;
	return z ? z : 1;
}

/* The dynamic part of a session: storage of DYNAMIC tensors, copies of the
 * nodes prepared at run time, the subprograms' sessions. */
static int dynamic_new(gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	s->dyn = gc_calloc((size_t)p->n_tensors + 1, sizeof *s->dyn);
	s->prep = gc_calloc((size_t)p->n_nodes + 1, sizeof *s->prep);
	s->sub_start = gc_calloc((size_t)p->n_nodes + 1, sizeof *s->sub_start);
	if (!s->dyn || !s->prep || !s->sub_start)
		return gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
	for (int32_t t = 0; t < p->n_tensors; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		if (pt->storage != GC_STORAGE_DYNAMIC)
			continue;
		if (gc_dtype_is_value(pt->t.dtype)) {
			s->dyn[t].container = gc_value_container_new(pt->t.dtype);
			if (!s->dyn[t].container)
				return gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
			s->tensors[t].data = s->dyn[t].container;
		}
	}
	/* A program's session plans its dynamic tensors per input shape
	 * (dyn-plan.h); inputs that are sequences or optionals have no shape
	 * to key a plan by; without the arena (no_arena, for sanitizers and
	 * valgrind) each keeps a block of its own. */
	bool plan = s->depth == 0 && !s->own;
	for (int32_t i = 0; i < p->n_inputs; i++)
		plan &= !gc_dtype_is_value(p->tensors[p->inputs[i]].t.dtype);
	if (plan && !(s->plans = gc_dyn_plans_new(s, err)))
		return err->code;
	int32_t n_subs = 0;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		s->sub_start[i] = n_subs;
		n_subs += n->n_sub;
		if (n->reprepare) {
			bool ok = !n->n_sub;
			for (int j = 0; j < n->n_in; j++)
				ok &= n->in[j] < 0 || !gc_dtype_is_value(p->tensors[n->in[j]].t.dtype);
			s->prep[i].cacheable = ok;
		}
	}
	if (!n_subs)
		return 0;
	if (s->depth >= MAX_DEPTH)
		return gc_error_set(err, GC_ELIMIT, "control flow nests deeper than %d levels",
				    MAX_DEPTH);
	s->subs = gc_calloc((size_t)n_subs, sizeof *s->subs);
	if (!s->subs)
		return gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		for (int32_t j = 0; j < n->n_sub; j++)
			if (session_new(n->sub[j], s->threads, s->own != NULL, s,
					&s->subs[s->sub_start[i] + j],
					err))
				return gc_error_prefix(err, "node '%s' (%s), subgraph %d", n->name,
						       n->op_type, (int)j);
			else
				s->subs[s->sub_start[i] + j]->salt = sub_salt(s->salt, i, j);
	}
	return 0;
}

/* no_arena: an exact-size block per arena tensor (zeroed, as the arena is)
 * and per node's scratch (left uninitialised, so that valgrind reports a
 * kernel that uses scratch bytes it never wrote). */
static int own_blocks(gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	s->own = gc_calloc((size_t)p->n_tensors + 1, sizeof *s->own);
	s->own_scratch = gc_calloc((size_t)p->n_nodes + 1, sizeof *s->own_scratch);
	if (!s->own || !s->own_scratch)
		return gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (p->tensors[t].storage == GC_STORAGE_ARENA &&
		    !(s->own[t] = gc_exact_alloc((size_t)p->tensors[t].nbytes, 1)))
			return gc_error_set(err, GC_ENOMEM,
					    "out of memory creating a session (no arena: tensor '%s', "
					    "%" PRIu64 " bytes)",
					    p->tensors[t].name, p->tensors[t].nbytes);
	for (int32_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i].scratch_bytes &&
		    !(s->own_scratch[i] = gc_exact_alloc((size_t)p->nodes[i].scratch_bytes, 0)))
			return gc_error_set(err, GC_ENOMEM,
					    "out of memory creating a session (no arena: scratch of "
					    "node '%s', %" PRIu64 " bytes)",
					    p->nodes[i].name, (uint64_t)p->nodes[i].scratch_bytes);
	return 0;
}

static void own_blocks_free(gc_session *s)
{
	for (int32_t t = 0; s->own && t < s->p->n_tensors; t++)
		gc_free(s->own[t]);
	for (int32_t i = 0; s->own_scratch && i < s->p->n_nodes; i++)
		gc_free(s->own_scratch[i]);
	gc_free(s->own);
	gc_free(s->own_scratch);
}

/* A seed from the OS for a session whose options give none. */
static uint64_t os_seed(void)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v)
		v = (uint64_t)gc_now_ns() ^ ((uint64_t)getpid() << 32);
	return v;
}

static int session_new(const gc_program *p, int threads, bool no_arena, gc_session *parent,
		       gc_session **out, gc_error *err)
{
	*out = NULL;
	gc_session *s = gc_calloc(1, sizeof *s);
	if (!s)
		return gc_error_set(err, GC_ENOMEM, "out of memory creating a session");
	s->p = p;
	s->threads = threads;
	s->depth = parent ? parent->depth + 1 : 0;
	s->root = parent ? parent->root : s;
	/* A subprogram's strings go to the program's session's pool, emptied
	 * only when a run of the whole program starts: what a body makes
	 * outlives the iteration that made it. */
	s->strings = parent ? parent->strings : gc_strpool_new();
	s->input_strings = gc_calloc((size_t)p->n_inputs + 1, sizeof *s->input_strings);
	s->input_set = gc_calloc((size_t)p->n_inputs + 1, sizeof *s->input_set);
	size_t n_ptrs = 0;
	for (int32_t i = 0; i < p->n_nodes; i++)
		n_ptrs += (size_t)p->nodes[i].n_in + (size_t)p->nodes[i].n_out;
	s->tensors = gc_calloc((size_t)p->n_tensors + 1, sizeof *s->tensors);
	s->ptrs = gc_calloc(n_ptrs + 1, sizeof *s->ptrs);
	s->ptr_start = gc_calloc((size_t)p->n_nodes + 1, sizeof *s->ptr_start);
	if (p->arena_bytes > SIZE_MAX - 64 || p->arena_bytes > gc_limit_bytes()) {
		gc_session_free(s);
		return gc_error_set(err, GC_ELIMIT,
				    "the program needs an activation arena of %" PRIu64
				    " bytes, over the limit of %" PRIu64 " (" GC_LIMIT_SETTING ")",
				    p->arena_bytes, gc_limit_bytes());
	}
	size_t arena = no_arena ? 0 : (size_t)((p->arena_bytes + 63) & ~(uint64_t)63);
	s->arena = arena ? gc_huge_alloc(arena) : NULL;
	if (!s->tensors || !s->ptrs || !s->ptr_start || !s->strings || !s->input_strings ||
	    !s->input_set || (arena && !s->arena)) {
		gc_session_free(s);
		return gc_error_set(err, GC_ENOMEM,
				    "out of memory creating a session (arena of %" PRIu64 " bytes)",
				    p->arena_bytes);
	}
	/* Touch every page now, not during the first run. */
	if (arena)
		memset(s->arena, 0, arena);
	if (no_arena && own_blocks(s, err)) {
		gc_session_free(s);
		return err->code;
	}
	for (int32_t t = 0; t < p->n_tensors; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		s->tensors[t] = pt->t;
		if (pt->storage == GC_STORAGE_ARENA)
			s->tensors[t].data = gc_session_home(s, t);
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
	if (p->dynamic && dynamic_new(s, err)) {
		gc_session_free(s);
		return err->code;
	}
	*out = s;
	return 0;
}

/* Gives s and its subprogram sessions the seed. */
static void session_set_seed(gc_session *s, uint64_t seed)
{
	s->seed = seed;
	int32_t n_subs = 0;
	for (int32_t i = 0; s->subs && i < s->p->n_nodes; i++)
		n_subs += s->p->nodes[i].n_sub;
	for (int32_t j = 0; j < n_subs; j++)
		session_set_seed(s->subs[j], seed);
}

static int set_input(gc_session *s, int i, const gc_tensor *t, gc_error *err);

int gc_session_new(const gc_program *p, const gc_session_options *opt, gc_session **out,
		   gc_error *err)
{
	gc_session_options o;
	GC_ARG_NONNULL(err, out);
	*out = NULL;
	GC_ARG_NONNULL(err, p);
	if (p->inspect_only)
		return gc_error_set(err, GC_EINVAL,
				    "the program was loaded for inspection only (its libraries were "
				    "not loaded): it cannot run");
	if (gc_options_copy(&o, sizeof o, opt, "gc_session_options", err))
		return err->code;
	if (o.threads < 0)
		return gc_error_set(err, GC_EINVAL,
				    "gc_session_options.threads is %d (0: one per core, or a count)",
				    o.threads);
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = o.threads > 0 ? o.threads : cores > 0 ? (int)cores : 1;
	if (session_new(p, threads, o.no_arena != 0, NULL, out, err))
		return err->code;
	gc_nn_par_acquire();
	for (int32_t k = 0; k < p->n_states; k++) {
		const gc_pstate *st = &p->states[k];
		if (set_input(*out, st->input, &p->tensors[st->init].t, err)) {
			gc_session_free(*out);
			*out = NULL;
			return err->code;
		}
		(*out)->input_set[st->input] = true;
	}
	(*out)->log = o.log ? (gc_log_sink){ .log = o.log, .user = o.log_user } : p->log;
	session_set_seed(*out, o.use_seed ? o.seed : os_seed());
	if (o.name)
		snprintf((*out)->name, sizeof (*out)->name, "%s", o.name);
	else
		snprintf((*out)->name, sizeof (*out)->name, "%p", (void *)*out);
	return 0;
}

int gc_session_claim(gc_session *s, const char *fn, gc_error *err)
{
	int idle = 0;
	if (atomic_compare_exchange_strong(&s->busy, &idle, 1))
		return 0;
	gc_log(&s->log, GC_LOG_WARNING, "%s: session '%s' is in use by another call: refused",
	       fn, s->name);
	return gc_error_set(err, GC_EBUSY,
			    "%s: session '%s' is in use by another call (a session serves one "
			    "thread at a time; give each thread its own)",
			    fn, s->name);
}

void gc_session_unclaim(gc_session *s)
{
	atomic_store(&s->busy, 0);
}

void gc_session_free(gc_session *s)
{
	if (!s)
		return;
	const gc_program *p = s->p;
	if (s->dyn) {
		for (int32_t t = 0; t < p->n_tensors; t++) {
			gc_dynbuf_free(&s->dyn[t].buf);
			gc_value_container_free(p->tensors[t].t.dtype, s->dyn[t].container);
		}
	}
	if (s->prep)
		for (int32_t i = 0; i < p->n_nodes; i++)
			gc_prep_cache_free(&s->prep[i]);
	gc_dynbuf_free(&s->prep_key);
	gc_dyn_plans_free(s->plans);
	if (s->subs && s->sub_start) {
		int32_t n_subs = 0;
		for (int32_t i = 0; i < p->n_nodes; i++)
			n_subs += p->nodes[i].n_sub;
		for (int32_t j = 0; j < n_subs; j++)
			gc_session_free(s->subs[j]);
	}
	gc_free(s->subs);
	gc_free(s->sub_start);
	gc_free(s->prep);
	gc_free(s->dyn);
	gc_dynbuf_free(&s->scratch);
	gc_free(s->arena);
	own_blocks_free(s);
	for (int32_t i = 0; s->input_strings && i < s->p->n_inputs; i++)
		gc_dynbuf_free(&s->input_strings[i]);
	gc_free(s->input_strings);
	gc_free(s->input_set);
	if (!s->depth)
		gc_strpool_free(s->strings);
	gc_free(s->tensors);
	gc_free(s->ptrs);
	gc_free(s->ptr_start);
	bool user = !s->depth && s->name[0]; /* made by gc_session_new */
	gc_free(s);
	if (user)
		gc_nn_par_release();
}

/* Whether t fits input pt: its type, and its shape unless that is dynamic. */
static int check_input(const gc_ptensor *pt, const gc_tensor *t, const char *what, gc_error *err)
{
	if (gc_tensor_check_shape(t, what, err))
		return gc_error_prefix(err, "'%s'", pt->name);
	bool dyn = pt->storage == GC_STORAGE_DYNAMIC;
	bool same = dyn ? gc_value_type_fits(pt->t.dtype, t->dtype)
			: t->dtype == pt->t.dtype && t->rank == pt->t.rank;
	if (dyn && pt->t.rank >= 0 && !gc_dtype_is_value(pt->t.dtype)) {
		/* a dynamic input's dims of known size (-1: any) */
		same &= t->rank == pt->t.rank;
		for (int d = 0; same && d < t->rank; d++)
			same = pt->t.dims[d] < 0 || t->dims[d] == pt->t.dims[d];
	}
	for (int d = 0; same && !dyn && d < t->rank; d++)
		same = t->dims[d] == pt->t.dims[d];
	if (same && !gc_dtype_is_value(t->dtype) && gc_tensor_nbytes(t) < 0)
		return gc_error_set(err, GC_EINVAL, "%s '%s' has an invalid shape", what, pt->name);
	if (same)
		return 0;
	char a[160], b[160];
	return gc_error_set(err, GC_EINVAL,
			    "%s '%s' is %s of shape %s, but the model expects %s of shape %s", what,
			    pt->name, gc_dtype_name(t->dtype), gc_shape_str(t->dims, t->rank, a, sizeof a),
			    gc_dtype_name(pt->t.dtype),
			    gc_shape_str(pt->t.dims, pt->t.rank, b, sizeof b));
}

/* The session keeps its own copy of a string input's strings, in one
 * block, until the input is set again or the session is freed; the arena
 * slot points into it. The block is reused, unless t's strings lie in it
 * (an output handed back that passed the input's strings through). */
static int set_string_input(gc_session *s, int i, const gc_tensor *t, gc_error *err)
{
	const gc_program *p = s->p;
	const gc_ptensor *pt = &p->tensors[p->inputs[i]];
	gc_dynbuf *held = &s->input_strings[i];
	uintptr_t lo = (uintptr_t)held->data, hi = lo + held->cap;
	bool aliased = false;
	int64_t n = gc_tensor_numel(t);
	uint64_t total = 0;
	for (int64_t j = 0; j < n; j++) {
		const char *str = gc_str_at(t, j);
		aliased |= (uintptr_t)str >= lo && (uintptr_t)str < hi;
		total += strlen(str) + 1;
		if (total > gc_limit_bytes())
			return gc_error_set(err, GC_ELIMIT,
					    "input '%s': its strings hold more than %" PRIu64
					    " bytes (" GC_LIMIT_SETTING ")",
					    pt->name, gc_limit_bytes());
	}
	gc_dynbuf fresh = { 0 }, *block = aliased ? &fresh : held;
	if (gc_dynbuf_reserve(block, total, false, "its strings", err))
		return gc_error_prefix(err, "input '%s'", pt->name);
	char **slot = s->tensors[p->inputs[i]].data;
	char *at = block->data;
	for (int64_t j = 0; j < n; j++) {
		const char *str = gc_str_at(t, j);
		size_t len = strlen(str) + 1;
		memcpy(at, str, len);
		slot[j] = at;
		at += len;
	}
	if (aliased) {
		gc_dynbuf_free(held);
		*held = fresh;
	}
	return 0;
}


int gc_session_set_input(gc_session *s, int i, const gc_tensor *t, gc_error *err)
{
	GC_ARG_NONNULL(err, s);
	GC_ARG_NONNULL(err, t);
	if (gc_session_claim(s, __func__, err))
		return err->code;
	int rc = set_input(s, i, t, err);
	if (!rc)
		s->input_set[i] = true;
	gc_session_unclaim(s);
	return rc;
}

static int set_input(gc_session *s, int i, const gc_tensor *t, gc_error *err)
{
	const gc_program *p = s->p;
	if (i < 0 || i >= p->n_inputs)
		return gc_error_set(err, GC_EINVAL, "input index %d out of range (the program has %d)",
				    i, p->n_inputs);
	int32_t idx = p->inputs[i];
	const gc_ptensor *pt = &p->tensors[idx];
	if (check_input(pt, t, "input", err))
		return err->code;
	if (!t->data && !gc_dtype_is_value(t->dtype) && gc_tensor_nbytes(t) > 0)
		return gc_error_set(err, GC_EINVAL, "input '%s': a %s tensor without its data",
				    pt->name, gc_dtype_name(t->dtype));
	if (t->dtype == GC_DTYPE_STRING && pt->storage == GC_STORAGE_DYNAMIC)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "input '%s': string inputs of a shape only known at run time are "
				    "not supported",
				    pt->name);
	if (t->dtype == GC_DTYPE_STRING)
		return set_string_input(s, i, t, err);
	gc_tensor *v = &s->tensors[idx];
	if (pt->storage == GC_STORAGE_DYNAMIC) {
		if (gc_dtype_is_value(pt->t.dtype)) {
			v->data = s->dyn[idx].container; /* unbind a borrowed value */
			if (!t->data)
				return gc_error_set(err, GC_EINVAL, "input '%s': a %s without its value",
						    pt->name, gc_dtype_name(t->dtype));
			if (gc_value_assign(v, t, err))
				return gc_error_prefix(err, "input '%s'", pt->name);
			return 0;
		}
		int64_t nb = gc_tensor_nbytes(t);
		if (gc_dynbuf_reserve(&s->dyn[idx].buf, (uint64_t)nb, false, pt->name, err))
			return err->code;
		*v = *t;
		v->data = s->dyn[idx].buf.data;
		if (nb)
			memcpy(v->data, t->data, (size_t)nb);
		return 0;
	}
	if (pt->storage == GC_STORAGE_ARENA)
		v->data = gc_session_home(s, idx); /* gc_session_use_input may have pointed it away */
	if (pt->nbytes)
		memcpy(v->data, t->data, (size_t)pt->nbytes);
	return 0;
}

/* Whether data is aligned for elements of dtype (C requires it). */
static bool elem_aligned(const void *data, gc_dtype dtype)
{
	size_t a = gc_dtype_size(dtype);
	a = a > 16 ? 16 : a ? a : 1;
	return (uintptr_t)data % a == 0;
}

int gc_session_use_input(gc_session *s, int i, const gc_tensor *t, gc_error *err)
{
	GC_ARG_NONNULL(err, s);
	GC_ARG_NONNULL(err, t);
	const gc_program *p = s->p;
	if (i < 0 || i >= p->n_inputs)
		return gc_error_set(err, GC_EINVAL, "input index %d out of range (the program has %d)",
				    i, p->n_inputs);
	const gc_ptensor *pt = &p->tensors[p->inputs[i]];
	if (pt->storage != GC_STORAGE_ARENA || t->dtype == GC_DTYPE_STRING)
		return gc_session_set_input(s, i, t, err);
	if (!t->data && gc_tensor_nbytes(t) > 0)
		return gc_error_set(err, GC_EINVAL, "input '%s': a %s tensor without its data",
				    pt->name, gc_dtype_name(t->dtype));
	if (!elem_aligned(t->data, t->dtype))
		return gc_error_set(err, GC_EINVAL,
				    "gc_session_use_input: input '%s': data %p is not aligned for %s "
				    "elements",
				    pt->name, t->data, gc_dtype_name(t->dtype));
	if (gc_session_claim(s, __func__, err))
		return err->code;
	int rc = gc_session_bind_input(s, i, t, "input", err);
	if (!rc)
		s->input_set[i] = true;
	gc_session_unclaim(s);
	return rc;
}

int gc_session_use_output(gc_session *s, int i, void *data, size_t bytes, gc_error *err)
{
	GC_ARG_NONNULL(err, s);
	const gc_program *p = s->p;
	if (i < 0 || i >= p->n_outputs)
		return gc_error_set(err, GC_EINVAL,
				    "output index %d out of range (the program has %d)", i,
				    p->n_outputs);
	int32_t idx = p->outputs[i];
	const gc_ptensor *pt = &p->tensors[idx];
	if (pt->storage != GC_STORAGE_ARENA || pt->t.dtype == GC_DTYPE_STRING)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "gc_session_use_output: output '%s' is %s: only outputs of a "
				    "shape known when compiling live in the arena and can be "
				    "written to the caller's memory",
				    pt->name,
				    pt->t.dtype == GC_DTYPE_STRING ? "a string tensor"
				    : pt->storage == GC_STORAGE_CONST ? "a constant"
								      : "in session storage");
	for (int32_t j = 0; j < p->n_inputs; j++)
		if (p->inputs[j] == idx)
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "gc_session_use_output: output '%s' is also input %d",
					    pt->name, (int)j);
	for (int32_t j = 0; j < p->n_outputs; j++)
		if (j != i && p->outputs[j] == idx)
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "gc_session_use_output: output '%s' is also output %d",
					    pt->name, (int)j);
	if (data && bytes < pt->nbytes)
		return gc_error_set(err, GC_EINVAL,
				    "gc_session_use_output: output '%s' needs %" PRIu64
				    " bytes, the buffer has %zu",
				    pt->name, pt->nbytes, bytes);
	if (data && !elem_aligned(data, pt->t.dtype))
		return gc_error_set(err, GC_EINVAL,
				    "gc_session_use_output: output '%s': buffer %p is not aligned for "
				    "%s elements",
				    pt->name, data, gc_dtype_name(pt->t.dtype));
	if (gc_session_claim(s, __func__, err))
		return err->code;
	s->tensors[idx].data = data ? data : gc_session_home(s, idx);
	gc_session_unclaim(s);
	return 0;
}

int gc_session_bind_input(gc_session *s, int i, const gc_tensor *t, const char *what,
			  gc_error *err)
{
	const gc_program *p = s->p;
	int32_t idx = p->inputs[i];
	const gc_ptensor *pt = &p->tensors[idx];
	if (check_input(pt, t, what, err))
		return err->code;
	if (gc_dtype_is_optional(pt->t.dtype) && !gc_dtype_is_optional(t->dtype)) {
		/* An optional input given a value: it holds that value. */
		gc_optbuf *o = s->dyn[idx].container;
		o->o.has_value = 1;
		o->o.value = *t;
		s->tensors[idx] = (gc_tensor){ .dtype = pt->t.dtype, .data = o };
		return 0;
	}
	s->tensors[idx] = *t;
	return 0;
}

static int dynamic_output(gc_kctx *k, int j, gc_tensor **v, gc_dynslot **slot,
			  const gc_ptensor **pt)
{
	gc_session *s = k->session;
	const gc_node *n = k->node;
	int32_t idx = j >= 0 && j < n->n_out ? n->out[j] : -1;
	if (!s || !s->dyn || idx < 0 || s->p->tensors[idx].storage != GC_STORAGE_DYNAMIC)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: output %d has no dynamic storage", j);
	*v = &s->tensors[idx];
	*slot = &s->dyn[idx];
	*pt = &s->p->tensors[idx];
	return 0;
}

int gc_kout_shape(gc_kctx *k, int j, gc_dtype dtype, int32_t rank, const int64_t *dims)
{
	gc_tensor *v;
	gc_dynslot *slot;
	const gc_ptensor *pt;
	if (dynamic_output(k, j, &v, &slot, &pt))
		return k->err->code;
	if (!gc_value_type_fits(pt->t.dtype, dtype) || gc_dtype_is_value(dtype) ||
	    (pt->t.rank >= 0 && pt->t.rank != rank))
		return gc_kerr(k, GC_EINVAL,
			       "output '%s' comes out as %s of rank %d, but the model has it %s%s",
			       pt->name, gc_dtype_name(dtype), rank, gc_dtype_name(pt->t.dtype),
			       pt->t.rank >= 0 ? " of another rank" : "");
	gc_tensor t = { .dtype = dtype, .rank = rank };
	if (rank < 0 || rank > GC_MAX_RANK)
		return gc_kerr(k, GC_EINVAL, "output '%s' would have rank %d", pt->name, rank);
	for (int d = 0; d < rank; d++)
		t.dims[d] = dims[d];
	int64_t nb = gc_tensor_nbytes(&t);
	if (nb < 0) {
		char a[160];
		return gc_kerr(k, GC_ELIMIT, "output '%s' of shape %s has a size that overflows",
			       pt->name, gc_shape_str(t.dims, rank, a, sizeof a));
	}
	if (gc_dynbuf_reserve(&slot->buf, (uint64_t)nb, false, pt->name, k->err))
		return gc_error_prefix(k->err, "node '%s' (%s)", k->node->name, k->node->op_type);
	t.data = slot->buf.data;
	*v = t;
	return 0;
}

bool gc_kout_dynamic(const gc_kctx *k, int j)
{
	const gc_session *s = k->session;
	int32_t idx = j >= 0 && j < k->node->n_out ? k->node->out[j] : -1;
	return s && idx >= 0 && s->p->tensors[idx].storage == GC_STORAGE_DYNAMIC;
}

int gc_kout_reserve(gc_kctx *k, int j, uint64_t bytes)
{
	gc_tensor *v;
	gc_dynslot *slot;
	const gc_ptensor *pt;
	if (dynamic_output(k, j, &v, &slot, &pt))
		return k->err->code;
	if (gc_dynbuf_reserve(&slot->buf, bytes, true, pt->name, k->err))
		return gc_error_prefix(k->err, "node '%s' (%s)", k->node->name, k->node->op_type);
	v->data = slot->buf.data;
	return 0;
}

/* Node i prepared on what its inputs hold now into *np; its outputs get
 * storage. */
static int prepare_now(gc_session *s, int32_t i, gc_kctx *k, gc_tensor *const *in,
		       gc_tensor *const *out, gc_node *n)
{
	const gc_program *p = s->p;
	*n = p->nodes[i];
	n->state = NULL;
	n->state_free = NULL;
	n->run = NULL;
	n->scratch_bytes = 0;
	n->inplace_ok = false;
	n->inplace_in = 0;
	k->node = n;
	for (int j = 0; j < n->n_in; j++)
		if (in[j] && (in[j]->rank < 0 || (!in[j]->data && gc_tensor_nbytes(in[j]))))
			return gc_kerr(k, GC_EINVAL, "graphcc bug: input %d has no value yet", j);
	for (int j = 0; j < n->n_out; j++)
		if (out[j])
			*out[j] = (gc_tensor){ .dtype = GC_DTYPE_UNDEFINED };
	k->need_value = false;
	/* A kept preparation must hold for the next values of the same key:
	 * non-constant inputs are varying (gc_kfixed keeps none of them). */
	uint64_t varying = 0;
	for (int j = 0; j < n->n_in; j++)
		if (n->in[j] >= 0 && p->tensors[n->in[j]].storage != GC_STORAGE_CONST)
			varying |= j < 64 ? (uint64_t)1 << j : ~(uint64_t)0;
	k->varying = varying;
	int rc = p->backend->prepare(k, n, in, out);
	k->varying = 0;
	if (!rc && !n->run)
		rc = gc_kerr(k, GC_EINVAL, "graphcc bug: prepare chose no kernel");
	if (rc)
		return k->err->code ? k->err->code : rc;
	s->prep_stats.prepared++;
	for (int j = 0; j < n->n_out; j++) {
		if (!out[j])
			continue;
		const gc_ptensor *pt = &p->tensors[n->out[j]];
		gc_tensor *o = out[j];
		if (o->rank == GC_RANK_DYNAMIC) /* the kernel sets it */
			continue;
		int64_t nb = gc_tensor_nbytes(o);
		if (!gc_dtype_size(o->dtype))
			return gc_kerr(k, GC_EINVAL, "graphcc bug: output %d was not inferred", j);
		if (nb < 0) {
			char sh[160];
			return gc_kerr(k, GC_ELIMIT, "output '%s' of shape %s is too large to hold",
				       pt->name, gc_shape_str(o->dims, o->rank, sh, sizeof sh));
		}
		if (!gc_value_type_fits(pt->t.dtype, o->dtype))
			return gc_kerr(k, GC_EINVAL, "output '%s' is %s, but the model declares it %s",
				       pt->name, gc_dtype_name(o->dtype), gc_dtype_name(pt->t.dtype));
	}
	return 0;
}

/* Which non-constant inputs' values node i's prepare reads: prepared once
 * with each one's value withheld (as when compiling), it asks for the
 * value (gc_kneed_value) or fails. Run once per node and session, before
 * its first preparation is kept. A string input read that way makes the
 * node's preparations not kept (its key would hold pointers). */
static int probe_values(gc_session *s, int32_t i, gc_kctx *k, gc_tensor *const *in)
{
	const gc_program *p = s->p;
	const gc_node *pn = &p->nodes[i];
	gc_prep_cache *c = &s->prep[i];
	size_t nio = (size_t)pn->n_in + (size_t)pn->n_out + 2;
	gc_tensor *ts = gc_calloc(nio, sizeof *ts), **tp = gc_calloc(nio, sizeof *tp);
	if (!ts || !tp) {
		gc_free(ts);
		gc_free(tp);
		return gc_kerr(k, GC_ENOMEM, "out of memory preparing the node");
	}
	gc_tensor **outp = tp + pn->n_in + 1, *outs = ts + pn->n_in + 1;
	for (int j = 0; j < pn->n_in && c->cacheable; j++) {
		if (!in[j] || !in[j]->data || p->tensors[pn->in[j]].storage == GC_STORAGE_CONST)
			continue;
		for (int m = 0; m < pn->n_in; m++) {
			tp[m] = in[m] ? &ts[m] : NULL;
			if (in[m])
				ts[m] = *in[m];
		}
		ts[j].data = NULL;
		for (int m = 0; m < pn->n_out; m++) {
			outs[m] = (gc_tensor){ .dtype = GC_DTYPE_UNDEFINED };
			outp[m] = pn->out[m] >= 0 ? &outs[m] : NULL;
		}
		gc_node n = *pn;
		n.state = NULL;
		n.state_free = NULL;
		n.run = NULL;
		gc_error perr = { 0 };
		gc_kctx pk = *k;
		pk.err = &perr;
		pk.node = &n;
		pk.need_value = false;
		pk.varying = ~(uint64_t)0;
		int rc = p->backend->prepare(&pk, &n, tp, outp);
		gc_node_release_state(&n);
		if (rc || pk.need_value || perr.code) {
			c->value_in |= (uint64_t)1 << (j < 63 ? j : 63);
			if (in[j]->dtype == GC_DTYPE_STRING)
				c->cacheable = false;
		}
	}
	gc_free(ts);
	gc_free(tp);
	c->probed = true;
	return 0;
}

/* Node i ready to run on what its inputs hold now: a kept preparation of
 * the same key, or a new one (prep-cache.h). Outputs get their shapes and
 * storage; *np is the node to run. */
static int reprepare(gc_session *s, int32_t i, gc_kctx *k, gc_tensor *const *in,
		     gc_tensor *const *out, gc_node **np)
{
	const gc_program *p = s->p;
	gc_prep_cache *c = &s->prep[i];
	const gc_node *pn = &p->nodes[i];
	size_t len = 0;
	gc_prep_entry *e = NULL;
	if (c->cacheable && !c->probed && probe_values(s, i, k, in))
		return k->err->code;
	if (c->cacheable) {
		if (gc_prep_key(c, pn, in, &s->prep_key, &len, k->err))
			return k->err->code;
		e = gc_prep_find(c, s->prep_key.data, len, ++s->prep_clock);
	}
	if (e) {
		s->prep_stats.reused++;
		for (int j = 0; j < pn->n_out; j++)
			if (out[j])
				*out[j] = e->outs[j];
	} else {
		e = gc_prep_victim(c);
		if (!e->outs && !(e->outs = gc_calloc((size_t)pn->n_out + 1, sizeof *e->outs)))
			return gc_kerr(k, GC_ENOMEM, "out of memory preparing the node");
		int rc = prepare_now(s, i, k, in, out, &e->node);
		if (rc) {
			gc_node_release_state(&e->node);
			return rc;
		}
		e->used = true;
		e->stamp = ++s->prep_clock;
		for (int j = 0; j < pn->n_out; j++)
			e->outs[j] = out[j] ? *out[j] : (gc_tensor){ 0 };
		if (c->cacheable) {
			if (gc_dynbuf_reserve(&e->key, len, false, "a preparation key", k->err))
				return k->err->code;
			memcpy(e->key.data, s->prep_key.data, len);
			e->key_len = len;
		} else {
			e->key_len = (size_t)-1; /* matches nothing */
		}
	}
	gc_node *n = &e->node;
	k->node = n;
	for (int j = 0; j < n->n_out; j++) {
		gc_tensor *o = out[j];
		if (!o)
			continue;
		o->data = NULL;
		if (o->rank == GC_RANK_DYNAMIC) /* the kernel sets it */
			continue;
		const gc_ptensor *pt = &p->tensors[n->out[j]];
		gc_dynbuf *b = &s->dyn[n->out[j]].buf;
		uint64_t nb = (uint64_t)gc_tensor_nbytes(o);
		o->data = s->plans ? gc_dyn_plan_place(s->plans, n->out[j], nb) : NULL;
		if (o->data) /* its place in the plan of these input shapes */
			continue;
		if (gc_dynbuf_reserve(b, nb, false, pt->name, k->err))
			return gc_error_prefix(k->err, "node '%s' (%s)", n->name, n->op_type);
		o->data = b->data;
	}
	if (n->scratch_bytes &&
	    gc_dynbuf_reserve(&s->scratch, n->scratch_bytes, false, "scratch memory", k->err))
		return gc_error_prefix(k->err, "node '%s' (%s)", n->name, n->op_type);
	*np = n;
	return 0;
}

static int session_step(gc_session *s, int32_t i, gc_kctx *k, gc_tensor *const *in,
			gc_tensor *const *out)
{
	const gc_program *p = s->p;
	gc_node *n = &p->nodes[i];
	k->session = s;
	k->sub = s->subs ? s->subs + s->sub_start[i] : NULL;
	if (n->reprepare && s->prep) {
		int rc = reprepare(s, i, k, in, out, &n);
		if (rc)
			return rc;
		k->scratch = n->scratch_bytes ? s->scratch.data : NULL;
	} else {
		k->scratch = gc_session_scratch(s, i);
	}
	k->node = n;
	gc_crash_current = n;
	return n->run(k, n, in, out);
}

int gc_session_run_node_again(gc_session *s, const gc_run_node *rn, gc_error *err)
{
	const gc_program *p = s->p;
	int32_t i = rn->index;
	gc_kctx k = { .err = err, .threads = s->threads, .strings = s->strings, .session = s,
		      .scratch_poison = rn->scratch_poison };
	gc_node *n = &p->nodes[i];
	if (n->reprepare && s->prep)
		return 1; /* prepared at run time (prep-cache.h): not called again */
	if (p->dynamic)
		k.sub = s->subs ? s->subs + s->sub_start[i] : NULL;
	k.scratch = gc_session_scratch(s, i);
	k.node = n;
	const gc_node *outer = gc_crash_current;
	gc_crash_current = n;
	int rc = n->run(&k, n, rn->in, rn->out);
	gc_crash_current = outer;
	if (rc && !err->code)
		gc_kerr(&k, rc, "kernel failed (%s)", gc_strerror(rc));
	return rc ? err->code : 0;
}

gc_tensor **gc_session_io(const gc_session *s, int32_t i)
{
	return gc_session_node_io(s, i);
}

static int stop_before(const gc_session *s, int32_t i, gc_error *err);

/* A run needs every input set at least once since the session was made
 * (they keep their values from run to run): the ones that were not are
 * named, rather than run on zeros. */
static int inputs_unset(const gc_session *s, gc_error *err)
{
	const gc_program *p = s->p;
	char names[GC_ERROR_MSG_MAX / 2];
	size_t at = 0;
	int missing = 0;
	names[0] = 0;
	for (int32_t i = 0; i < p->n_inputs; i++) {
		if (s->input_set[i])
			continue;
		if (at < sizeof names - 1) {
			int w = snprintf(names + at, sizeof names - at, "%s'%s'", missing ? ", " : "",
					 p->tensors[p->inputs[i]].name);
			at = w < 0 ? sizeof names : at + (size_t)w;
		}
		missing++;
	}
	if (!missing)
		return 0;
	return gc_error_set(err, GC_EINVAL,
			    "session '%s': %d input%s never set (gc_session_set_input or "
			    "gc_session_use_input; an input keeps its value from run to run once "
			    "set): %s",
			    s->name, missing, missing == 1 ? " was" : "s were", names);
}

int gc_session_run_hooked(gc_session *s, const gc_run_hooks *h, gc_error *err)
{
	const gc_program *p = s->p;
	gc_error local = { 0 };
	if (!err)
		err = &local;
	if (!s->depth && inputs_unset(s, err))
		return err->code;
	/* The strings of the previous run are given back (its string outputs
	 * die here); a subprogram's live until the program's next run. */
	if (!s->depth)
		gc_strpool_reset(s->strings);
	const int threads = s->root->serial ? 1 : s->threads;
	gc_kctx k = { .err = err, .threads = threads, .strings = s->strings, .session = s,
		      .rng_seed = s->seed, .rng_salt = s->salt, .rng_run = (uint32_t)s->runs++ };
	const bool stops = s->root->cancel || s->root->deadline_ns;
	if (s->plans && gc_dyn_plan_begin(s->plans, s, err))
		return err->code;
	/* A subprogram's session runs inside a node of its parent's. */
	const gc_session *outer_session = gc_crash_session;
	const gc_node *outer_node = gc_crash_current;
	gc_crash_session = s; /* for the crash report: which node crashed */
	int rc = 0;
	/* the pool's workers stay awake between this run's jobs */
	const bool pooled = !s->depth && threads > 1;
	if (pooled)
		gc_nn_par_run_begin();
	for (int32_t i = 0; i < p->n_nodes; i++) {
		gc_node *n = &p->nodes[i];
		gc_tensor **io = s->ptrs + s->ptr_start[i];
		gc_run_node rn = { .session = s, .program = p, .index = i, .node = n, .in = io,
				   .out = io + n->n_in, .threads = threads };
		gc_crash_current = n; /* (a crash in a hook is reported in this node) */
		if (stops && (rc = stop_before(s, i, err)))
			break;
		if (h && h->before && (rc = h->before(h->user, &rn, err)))
			break;
		k.scratch_poison = rn.scratch_poison;
		if (p->dynamic) {
			rc = session_step(s, i, &k, rn.in, rn.out);
		} else {
			k.node = n;
			k.scratch = gc_session_scratch(s, i);
			rc = n->run(&k, n, rn.in, rn.out);
		}
		gc_crash_current = outer_node;
		if (rc) {
			if (!err->code)
				gc_kerr(&k, rc, "kernel failed (%s)", gc_strerror(rc));
			if (h && h->on_failure)
				h->on_failure(h->user, &rn, rc, err);
			break;
		}
		if (h && h->after && (rc = h->after(h->user, &rn, err)))
			break;
	}
	gc_crash_current = outer_node;
	if (pooled) {
		/* the first run of a static program tells what it splits */
		if (!rc && s->runs == 1 && !p->dynamic)
			s->serial = gc_nn_par_run_work() < GC_NN_PAR_SMALL_RUN;
		gc_nn_par_run_end();
	}
	if (s->depth)
		gc_crash_session = outer_session;
	/* session state: each updated value becomes its input's */
	for (int32_t k = 0; !rc && !s->depth && k < p->n_states; k++)
		rc = set_input(s, p->states[k].input, gc_session_output(s, p->states[k].output),
			       err);
	if (!rc && s->plans)
		rc = gc_dyn_plan_end(s->plans, s, err);
	if (rc && !err->code)
		gc_error_set(err, rc, "%s", gc_strerror(rc));
	return rc ? err->code : 0;
}

int gc_session_run(gc_session *s, gc_error *err)
{
	GC_ARG_NONNULL(err, s);
	if (gc_session_claim(s, __func__, err))
		return err->code;
	int rc = gc_session_run_hooked(s, NULL, err);
	gc_session_unclaim(s);
	return rc;
}

int64_t gc_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gc_session_run_with(gc_session *s, const gc_run_options *opt, gc_error *err)
{
	gc_run_options o;
	GC_ARG_NONNULL(err, s);
	if (gc_options_copy(&o, sizeof o, opt, "gc_run_options", err))
		return err->code;
	if (o.deadline_ns < 0)
		return gc_error_set(err, GC_EINVAL,
				    "gc_run_options.deadline_ns is negative (0: none; else a "
				    "gc_now_ns() time)");
	if (gc_session_claim(s, __func__, err))
		return err->code;
	s->deadline_ns = o.deadline_ns;
	s->cancel = o.cancel;
	int rc = gc_session_run_hooked(s, NULL, err);
	s->deadline_ns = 0;
	s->cancel = NULL;
	gc_session_unclaim(s);
	return rc;
}

int gc_session_check_stop(const gc_session *s, const char *where, gc_error *err)
{
	const gc_session *r = s->root;
	if (r->cancel && __atomic_load_n(r->cancel, __ATOMIC_ACQUIRE))
		return gc_error_set(err, GC_ECANCELED, "session '%s': canceled (the cancel flag "
				    "of gc_run_options was set) at %s", r->name, where);
	if (r->deadline_ns && gc_now_ns() >= r->deadline_ns)
		return gc_error_set(err, GC_ECANCELED,
				    "session '%s': past the deadline of gc_run_options (by %.3f ms) "
				    "at %s",
				    r->name, (double)(gc_now_ns() - r->deadline_ns) / 1e6, where);
	return 0;
}

/* Between nodes: the run stops before node i when asked to. */
static int stop_before(const gc_session *s, int32_t i, gc_error *err)
{
	const gc_node *n = &s->p->nodes[i];
	char where[400];
	snprintf(where, sizeof where, "node '%s' (%s), node %d of %d%s, before it ran", n->name,
		 n->op_type, (int)i + 1, (int)s->p->n_nodes, s->depth ? " of a subgraph" : "");
	return gc_session_check_stop(s, where, err);
}

const gc_tensor *gc_session_output(const gc_session *s, int i)
{
	if (!s || i < 0 || i >= s->p->n_outputs)
		return NULL;
	return &s->tensors[s->p->outputs[i]];
}
