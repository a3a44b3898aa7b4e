/*
 * Compiling a graph into a program: every node is bound to its built-in
 * op (prepare checks it and infers its outputs), nodes whose inputs are all
 * known are run now (constant folding), nodes nothing needs are dropped, and
 * the activations get an arena plan.
 */
#include <graphcc/graphcc.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "plan-memory.h"
#include "bind-custom.h"
#include "graph-edit.h"
#include "graph-impl.h"
#include "passes.h"

/* What the compiler knows of one tensor. */
typedef struct vstate {
	gc_tensor t;	    /* dtype/rank/dims; data = the value when known */
	bool shaped;	    /* t's dtype and shape are known */
	bool live;	    /* a kept node or a graph output needs it */
	bool borrowed;	    /* t.data belongs to the graph, not the program */
	bool is_const;	    /* a constant (initializer or folded): t.data is its value;
			       otherwise t.data, when set, is a value known at compile
			       time that a node still computes at run time */
	bool dynamic;	    /* session storage: a shape only known at run time (t.rank
			       GC_RANK_DYNAMIC, t.dtype maybe UNDEFINED), or a sequence
			       or optional value */
	bool outer;	    /* a subgraph's read of an enclosing graph's tensor */
	int32_t ptensor;    /* index in the program, or -1 */
	const char *name;
} vstate;

typedef struct compiler compiler;
struct compiler {
	const gc_graph *g;
	const gc_compile_options *opt;
	const gc_backend *backend; /* opt->backend's */
	gc_program *p;
	gc_strpool *strings; /* strings made by kernels run now */
	gc_error *err;
	vstate *vs;	   /* the graph's values, then names read from enclosing
			      graphs and unnamed outputs of control-flow nodes */
	int32_t n_vs, cap_vs;
	int32_t *kept; /* graph node index of each program node */
	/* A subgraph: the compiler of the graph that holds it, and the values it
	 * reads from there (its inputs after its own, in this order). */
	compiler *parent;
	int32_t *outer;
	int32_t n_outer, cap_outer;
	int depth;
};

static int compile_graph(compiler *c, const gc_graph *g, const gc_tensor *formal,
			 int32_t n_formal);

/* A tensor that only a plain tensor's shape makes dynamic (not a value). */
static bool dyn_tensor(const vstate *s)
{
	return s->dynamic && !gc_dtype_is_value(s->t.dtype);
}

/* Frees what a program node holds (prepare's state, subprograms). */
static void drop_node(gc_node *n)
{
	gc_node_release_state(n);
	for (int32_t j = 0; j < n->n_sub; j++)
		gc_program_free(n->sub[j]);
	n->n_sub = 0;
}

/* A new entry in c->vs (not a value of the graph); -1 when out of memory. */
static int32_t add_vstate(compiler *c, const char *name)
{
	if (c->n_vs == c->cap_vs) {
		int32_t cap = c->cap_vs * 2 + 16;
		vstate *vs = gc_realloc(c->vs, (size_t)cap * sizeof *vs);
		if (!vs)
			return -1;
		c->vs = vs;
		c->cap_vs = cap;
	}
	vstate *s = &c->vs[c->n_vs];
	memset(s, 0, sizeof *s);
	s->ptensor = -1;
	s->name = name;
	return c->n_vs++;
}

/* Whether value v is defined in c's own graph (or already resolved). */
static bool defined_here(const compiler *c, int32_t v)
{
	if (v >= c->g->n_values || c->vs[v].outer)
		return true;
	const gc_value *gv = &c->g->values[v];
	return gv->producer >= 0 || gv->is_input || gv->constant;
}

/*
 * The tensor `name` as compiler c sees it: its own, or one of an enclosing
 * graph (a constant there is a constant here; anything else becomes an
 * input of this subgraph, read from the enclosing node). -1 when no graph
 * defines it; -2 when out of memory.
 */
static int32_t resolve(compiler *c, const char *name)
{
	int32_t v = gc_graph_find(c->g, name);
	if (v >= 0 && defined_here(c, v))
		return v;
	for (int32_t i = c->g->n_values; i < c->n_vs; i++)
		if (c->vs[i].outer && !strcmp(c->vs[i].name, name))
			return i;
	if (!c->parent)
		return -1;
	int32_t pv = resolve(c->parent, name);
	if (pv < 0)
		return pv;
	const vstate *src = &c->parent->vs[pv];
	if (!src->shaped)
		return -1; /* not bound yet: the enclosing graph's order is wrong */
	if (v < 0 && (v = add_vstate(c, src->name)) < 0)
		return -2;
	vstate *d = &c->vs[v];
	d->name = src->name; /* the enclosing graph's, which outlives this one */
	d->t = src->t;
	d->shaped = true;
	d->dynamic = src->dynamic;
	d->outer = true;
	if (src->is_const) {
		d->is_const = true;
		d->borrowed = true; /* copied into this program if a node keeps it */
		return v;
	}
	d->t.data = NULL; /* values only known at compile time stay the enclosing graph's */
	if (c->n_outer == c->cap_outer) {
		int32_t cap = c->cap_outer * 2 + 8;
		int32_t *o = gc_realloc(c->outer, (size_t)cap * sizeof *o);
		if (!o)
			return -2;
		c->outer = o;
		c->cap_outer = cap;
	}
	c->outer[c->n_outer++] = v;
	return v;
}

static int apply_shapes(compiler *c)
{
	const gc_graph *g = c->g;
	const gc_compile_options *opt = c->opt;
	for (int32_t i = 0; opt && i < opt->n_shapes; i++) {
		const gc_shape_override *o = &opt->shapes[i];
		bool used = false;
		for (int32_t k = 0; k < g->n_inputs; k++) {
			const gc_value *v = &g->values[g->inputs[k]];
			vstate *s = &c->vs[g->inputs[k]];
			if (!strcmp(v->name, o->name)) {
				if (o->rank != v->rank) {
					char a[160];
					return gc_error_set(c->err, GC_EINVAL,
							    "input '%s' has rank %d, but the shape "
							    "given for it (%s) has rank %d",
							    v->name, v->rank,
							    gc_shape_str(o->dims, o->rank, a, sizeof a),
							    o->rank);
				}
				for (int d = 0; d < v->rank; d++) {
					if (v->dims[d] >= 0 && v->dims[d] != o->dims[d]) {
						char a[160], b[160];
						return gc_error_set(
							c->err, GC_EINVAL,
							"input '%s' has fixed shape %s; %s does not fit",
							v->name,
							gc_shape_str(v->dims, v->rank, a, sizeof a),
							gc_shape_str(o->dims, o->rank, b, sizeof b));
					}
					s->t.dims[d] = o->dims[d];
				}
				used = true;
			}
			for (int d = 0; d < v->rank && o->rank == 1; d++)
				if (v->dim_names[d] && !strcmp(v->dim_names[d], o->name)) {
					s->t.dims[d] = o->dims[0];
					used = true;
				}
		}
		if (!used)
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: gc_compile_options.shapes (graphcc: --shape) names "
					    "'%s', which is neither a graph input nor a symbolic "
					    "dimension of one",
					    g->origin, o->name);
	}
	for (int32_t k = 0; k < g->n_inputs; k++) {
		const gc_value *v = &g->values[g->inputs[k]];
		vstate *s = &c->vs[g->inputs[k]];
		bool dynamic = false;
		for (int d = 0; d < v->rank && opt && opt->dynamic_dims; d++)
			dynamic |= s->t.dims[d] < 0 && !gc_dtype_is_value(s->t.dtype);
		if (dynamic) {
			/* Its size comes with each run: the nodes it feeds are
			 * prepared then, once per new shape (the session caches
			 * what it planned). */
			s->dynamic = true;
			continue;
		}
		for (int d = 0; d < v->rank; d++)
			if (s->t.dims[d] < 0) {
				char a[160];
				return gc_error_set(
					c->err, GC_EINVAL,
					"%s: input '%s' has dynamic dimension %d%s%s%s (shape %s): "
					"give its size in gc_compile_options.shapes (graphcc: an "
					"input file or --shape %s=...), or keep it dynamic with "
					"gc_compile_options.dynamic_dims (graphcc: --dynamic)",
					g->origin, v->name, d, v->dim_names[d] ? " ('" : "",
					v->dim_names[d] ? v->dim_names[d] : "",
					v->dim_names[d] ? "')" : "",
					gc_shape_str(v->dims, v->rank, a, sizeof a),
					v->dim_names[d] ? v->dim_names[d] : v->name);
			}
		if (gc_tensor_nbytes(&s->t) < 0 ||
		    (uint64_t)gc_tensor_nbytes(&s->t) > gc_limit_bytes())
			return gc_error_set(c->err, GC_ELIMIT, "%s: input '%s' is too large",
					    g->origin, v->name);
	}
	return 0;
}

/* A copy of a graph node for the program, named for messages. */
static int make_node(compiler *c, int32_t gi, gc_op op, gc_node *pn)
{
	const gc_irnode *n = &c->g->nodes[gi];
	gc_pool *pool = c->p->pool;
	memset(pn, 0, sizeof *pn);
	char anon[32];
	snprintf(anon, sizeof anon, "#%d", gi);
	pn->name = gc_pool_strdup(pool, n->name[0] ? n->name : anon);
	pn->domain = gc_pool_strdup(pool, n->domain);
	pn->op_type = gc_pool_strdup(pool, n->op_type);
	pn->op = op;
	int64_t opset = gc_graph_opset(c->g, n->domain);
	pn->opset = opset < 0 ? 1 : (int32_t)(opset > INT32_MAX ? INT32_MAX : opset);
	pn->n_in = n->n_in;
	pn->n_out = n->n_out;
	pn->in = gc_pool_memdup(pool, n->in, (size_t)(n->n_in + 1) * sizeof(int32_t));
	pn->out = gc_pool_memdup(pool, n->out, (size_t)(n->n_out + 1) * sizeof(int32_t));
	if (!pn->name || !pn->domain || !pn->op_type || !pn->in || !pn->out ||
	    gc_attrs_copy(pool, n->n_attr, n->attrs, &pn->attrs))
		return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
	pn->n_attr = n->n_attr;
	return 0;
}

static int unsupported(compiler *c, int32_t gi)
{
	char lb[300];
	const gc_irnode *n = &c->g->nodes[gi];
	gc_node_label(c->g, gi, lb, sizeof lb);
	int64_t opset = gc_graph_opset(c->g, "");
	const gc_op_decline *d =
		gc_domain_is_default(n->domain) ? gc_op_declined(n->op_type, opset) : NULL;
	if (d)
		return gc_error_set(c->err, GC_EUNSUPPORTED,
				    "%s: %s: %s-%d (opset %" PRId64 ") is not supported: %s",
				    c->g->origin, lb, n->op_type, d->since, opset, d->reason);
	if (gc_domain_is_default(n->domain))
		return gc_error_set(c->err, GC_EUNSUPPORTED,
				    "%s: %s: graphcc has no built-in op '%s' (opset %" PRId64 ")",
				    c->g->origin, lb, n->op_type, opset);
	return gc_error_set(c->err, GC_EUNSUPPORTED,
			    "%s: %s: no op package provides '%s' in domain '%s' (load one into "
			    "gc_compile_options.registry, gc_registry_load; graphcc: --ops "
			    "PKG.yaml)",
			    c->g->origin, lb, n->op_type, n->domain);
}

/* Frees a subgraph compiler's working memory (not its program). */
static void sub_free(compiler *sc)
{
	gc_free(sc->vs);
	gc_free(sc->kept);
	gc_free(sc->outer);
}

/*
 * Makes the subprogram's reads of c's tensors inputs of pn (after its own,
 * shared between its subprograms) and tells the subprogram where they are.
 */
static int link_outer(compiler *c, gc_node *pn, compiler *sc)
{
	gc_program *sp = sc->p;
	sp->outer_slot = gc_pool_alloc(sp->pool, ((size_t)sc->n_outer + 1) * sizeof(int32_t));
	int32_t *in = gc_pool_alloc(c->p->pool, ((size_t)pn->n_in + sc->n_outer + 1) * sizeof *in);
	if (!sp->outer_slot || !in)
		return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
	memcpy(in, pn->in, (size_t)pn->n_in * sizeof *in);
	int32_t n_in = pn->n_in;
	for (int32_t j = 0; j < sc->n_outer; j++) {
		const char *name = sc->vs[sc->outer[j]].name;
		int32_t v = resolve(c, name);
		if (v == -2)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		if (v < 0)
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: node '%s' (%s): its subgraph reads '%s', which is not "
					    "defined before it",
					    c->g->origin, pn->name, pn->op_type, name);
		int32_t slot = -1;
		for (int32_t i = pn->n_explicit_in; i < n_in; i++)
			if (in[i] == v)
				slot = i;
		if (slot < 0) {
			slot = n_in;
			in[n_in++] = v;
		}
		sp->outer_slot[j] = slot;
	}
	pn->in = in;
	pn->n_in = n_in;
	return 0;
}

/*
 * Compiles the subgraphs of control-flow node pn: each into a subprogram
 * whose inputs are the subgraph's own (typed from the node's inputs by
 * gc_control_formal) then the enclosing tensors it reads by name. A value
 * a loop carries whose shape the body changes becomes dynamic and the body
 * is compiled again (gc_control_refine), at most once per input.
 */
static int compile_control(compiler *c, int32_t gi, gc_node *pn, gc_tensor *const *inp)
{
	const gc_graph *g = c->g;
	char lb[300];
	gc_kctx k = { .err = c->err, .node = pn, .threads = 1 };
	const char *const *names;
	int32_t n_sub = gc_control_sub_names(pn, &names);
	pn->n_explicit_in = pn->n_in;
	pn->sub = gc_pool_alloc(c->p->pool, ((size_t)n_sub + 1) * sizeof *pn->sub);
	if (!pn->sub)
		return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
	memset(pn->sub, 0, ((size_t)n_sub + 1) * sizeof *pn->sub);
	if (c->depth >= 64)
		return gc_error_set(c->err, GC_ELIMIT, "%s: %s: subgraphs nest more than 64 deep",
				    g->origin, gc_node_label(g, gi, lb, sizeof lb));
	for (int32_t s = 0; s < n_sub; s++) {
		const gc_attr *a = gc_attr_find(pn, names[s]);
		if (!a || a->type != GC_ATTR_GRAPH || !a->v.g)
			return gc_kerr(&k, GC_EINVAL, "attribute '%s' (a graph) is missing", names[s]);
		const gc_graph *sg = a->v.g;
		int32_t nf = sg->n_inputs;
		gc_tensor *formal = gc_calloc((size_t)nf + 1, sizeof *formal);
		if (!formal)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		int rc = gc_control_formal(&k, pn, inp, s, nf, formal);
		for (int tries = 0; !rc; tries++) {
			compiler sc = { .opt = c->opt, .backend = c->backend, .err = c->err, .parent = c,
					.depth = c->depth + 1 };
			if ((rc = compile_graph(&sc, sg, formal, nf))) {
				sub_free(&sc);
				break;
			}
			bool again = false;
			rc = gc_control_refine(&k, pn, s, sc.p, formal, &again);
			if (!rc && again && tries <= nf) {
				gc_program_free(sc.p);
				sub_free(&sc);
				continue;
			}
			if (!rc)
				rc = link_outer(c, pn, &sc);
			if (rc)
				gc_program_free(sc.p);
			else
				pn->sub[pn->n_sub++] = sc.p;
			sub_free(&sc);
			break;
		}
		gc_free(formal);
		if (rc)
			return c->err->code ? c->err->code : rc;
	}
	return 0;
}

/* The program's own tensor for an unnamed output j of a control-flow node
 * (its value is still needed: it is where a loop keeps what it carries). */
static int32_t unnamed_output(compiler *c, const gc_node *pn, int j)
{
	char name[300];
	snprintf(name, sizeof name, "%s:output%d", pn->name, j);
	const char *nm = gc_pool_strdup(c->p->pool, name);
	return nm ? add_vstate(c, nm) : -1;
}

/* Prepares one node; folds it when its value is known now. */
/* The op of graph node gi and its table entry; GC_OP_CUSTOM for a node a
 * package serves. Refuses an op this build lacks and a built-in op's
 * wrong input or output count. */
static int check_arity(compiler *c, int32_t gi, gc_op *opp, const gc_op_info **info)
{
	const gc_graph *g = c->g;
	const gc_irnode *n = &g->nodes[gi];
	gc_op op = gc_op_lookup(n->domain, n->op_type);
	if (op != GC_OP_NONE && gc_domain_is_default(n->domain) &&
	    gc_op_declined(n->op_type, gc_graph_opset(g, "")))
		return unsupported(c, gi);
	if (op == GC_OP_NONE) {
		if (gc_domain_is_default(n->domain) || !c->opt || !c->opt->registry)
			return unsupported(c, gi);
		op = GC_OP_CUSTOM;
	}
	const gc_op_info *in = &c->backend->ops[op];
	char lb[300];
	if (op != GC_OP_CUSTOM && (n->n_in < in->min_in || n->n_in > in->max_in ||
				   n->n_out < in->min_out || n->n_out > in->max_out))
		return gc_error_set(c->err, GC_EINVAL,
				    "%s: %s has %d inputs and %d outputs; %s takes %d to %d inputs "
				    "and %d to %d outputs",
				    g->origin, gc_node_label(g, gi, lb, sizeof lb), n->n_in, n->n_out,
				    in->name, in->min_in, in->max_in, in->min_out, in->max_out);
	*opp = op;
	*info = in;
	return 0;
}

/* The node's inputs and outputs as prepare and the kernels see them: ins
 * and outs (pointers inp and outp, NULL for an absent one), and for a
 * custom node cins/cinp, the inputs with only constants' values. */
typedef struct node_io {
	gc_tensor *ins, *outs, *cins;
	gc_tensor **inp, **outp, **cinp;
	/* Of the inputs, before prepare: every value known now, all constants,
	 * any a sequence, an optional or of a shape known at run time. */
	bool all_known, all_const, any_value;
} node_io;

static void node_io_free(node_io *io)
{
	gc_free(io->ins);
	gc_free(io->inp);
	memset(io, 0, sizeof *io);
}

/* Outputs trimmed and named as the op needs, required inputs present,
 * sequences and optionals only where the op takes them. *any_dyn: an input
 * whose shape is only known at run time. */
static int check_io(compiler *c, int32_t gi, gc_node *pn, const gc_op_info *info,
		    bool *any_dyn)
{
	const gc_graph *g = c->g;
	gc_op op = pn->op;
	bool custom = op == GC_OP_CUSTOM, control = gc_op_is_control(op);
	char lb[300];
	/* Trailing unnamed outputs are not computed at all; the required ones
	 * must be named; other unnamed optional outputs reach prepare as NULL.
	 * Control flow computes every output (a loop keeps what it carries in
	 * them): unnamed ones get a tensor of their own. */
	while (!control && pn->n_out > 0 && pn->out[pn->n_out - 1] < 0 && pn->n_out > info->min_out)
		pn->n_out--;
	for (int j = 0; j < pn->n_out; j++) {
		if (pn->out[j] < 0 && control && (pn->out[j] = unnamed_output(c, pn, j)) < 0)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		if (pn->out[j] < 0 && j < info->min_out)
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: %s leaves its required output %d unnamed", g->origin,
					    gc_node_label(g, gi, lb, sizeof lb), j);
	}
	/* Only optional inputs may be left empty (""): kernels take the
	 * required ones as given. */
	for (int j = 0; !custom && j < pn->n_in && j < info->min_in; j++)
		if (pn->in[j] < 0)
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: %s leaves its required input %d empty", g->origin,
					    gc_node_label(g, gi, lb, sizeof lb), j);
	/* Sequences and optionals go only to the ops made for them. */
	*any_dyn = false;
	for (int j = 0; j < pn->n_in; j++) {
		if (pn->in[j] < 0)
			continue;
		const vstate *vs = &c->vs[pn->in[j]];
		*any_dyn |= dyn_tensor(vs);
		if (gc_dtype_is_value(vs->t.dtype) && !gc_op_takes_values(op))
			return gc_error_set(c->err, GC_EUNSUPPORTED,
					    "%s: %s: input %d ('%s') is a %s; %s", g->origin,
					    gc_node_label(g, gi, lb, sizeof lb), j, vs->name,
					    gc_dtype_name(vs->t.dtype),
					    custom ? "op packages take tensors" : "this op takes tensors");
	}
	return 0;
}

/* The node's inputs as the compiler knows them now (k->varying: those
 * whose value is known now but may change by the next run). Control flow
 * first compiles its subgraphs: the tensors they read by name join the
 * node's inputs. */
static int gather_io(compiler *c, int32_t gi, gc_node *pn, gc_kctx *k, node_io *io)
{
	bool control = gc_op_is_control(pn->op);
	for (int pass = 0; pass < 2; pass++) {
		size_t nio = 2 * (size_t)pn->n_in + (size_t)pn->n_out + 3;
		node_io_free(io);
		io->ins = gc_calloc(nio, sizeof *io->ins);
		io->inp = gc_calloc(nio, sizeof *io->inp);
		if (!io->ins || !io->inp)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		io->outs = io->ins + pn->n_in + 1;
		io->cins = io->outs + pn->n_out + 1;
		io->outp = io->inp + pn->n_in + 1;
		io->cinp = io->outp + pn->n_out + 1;
		for (int j = 0; j < pn->n_in; j++) {
			io->inp[j] = NULL;
			if (pn->in[j] < 0)
				continue;
			io->ins[j] = c->vs[pn->in[j]].t;
			io->inp[j] = &io->ins[j];
			/* Control flow decides on constants only: a trip count or a
			 * condition known now (an input's value) may change by the
			 * next run. */
			if (control && !c->vs[pn->in[j]].is_const)
				io->ins[j].data = NULL;
			if (io->ins[j].data && !c->vs[pn->in[j]].is_const)
				k->varying |= j < 64 ? (uint64_t)1 << j : ~(uint64_t)0;
		}
		if (pass || !control)
			break;
		int rc = compile_control(c, gi, pn, io->inp);
		if (rc)
			return rc;
	}
	io->all_known = io->all_const = true;
	io->any_value = false;
	for (int j = 0; j < pn->n_in; j++) {
		if (pn->in[j] < 0)
			continue;
		const vstate *vs = &c->vs[pn->in[j]];
		io->all_known &= io->ins[j].data != NULL;
		io->all_const &= vs->is_const;
		io->any_value |= vs->dynamic;
	}
	for (int j = 0; j < pn->n_out; j++) {
		memset(&io->outs[j], 0, sizeof io->outs[j]);
		io->outp[j] = pn->out[j] >= 0 ? &io->outs[j] : NULL;
	}
	return 0;
}

/* Binds a custom node and prepares any node on what is known now; a node
 * whose shapes are only known at run time is left to be prepared then
 * (*reprepare). */
static int prepare_node(compiler *c, int32_t gi, gc_node *pn, node_io *io, gc_kctx *k,
			bool any_dyn, bool *reprepare)
{
	int rc;
	*reprepare = false;
	if (pn->op == GC_OP_CUSTOM) {
		/* Package functions see the values of constants (initializers)
		 * only: `constant: true` means an initializer, and init may keep
		 * what it reads. */
		for (int j = 0; j < pn->n_in; j++)
			if (io->inp[j] && !c->vs[pn->in[j]].is_const) {
				io->cins[j] = io->ins[j];
				io->cins[j].data = NULL;
				io->cinp[j] = &io->cins[j];
			} else {
				io->cinp[j] = io->inp[j];
			}
		/* A shape only known at run time: bound then, per input shape
		 * (runtime/custom-dyn.c), with the package functions pinned. */
		*reprepare = any_dyn;
		rc = gc_bind_custom(c->g, gi, c->opt->registry, c->backend->name, c->opt->flavour,
				    any_dyn, c->p->pool, pn, io->cinp, c->err);
		if (rc || any_dyn)
			return rc;
		rc = c->backend->prepare(k, pn, io->cinp, io->outp);
	} else if (any_dyn && !gc_op_takes_dynamic(pn->op)) {
		/* An input's shape is only known at run time: so is this node's. */
		*reprepare = true;
		rc = 0;
	} else {
		rc = c->backend->prepare(k, pn, io->inp, io->outp);
		if (rc && k->need_value) {
			/* It needs a value computed at run time: prepare it then. */
			gc_node_release_state(pn);
			pn->run = NULL;
			pn->scratch_bytes = 0;
			pn->inplace_ok = false;
			pn->inplace_in = 0;
			c->err->code = 0;
			c->err->msg[0] = 0;
			*reprepare = true;
			rc = 0;
		}
	}
	if (!rc && !*reprepare && !pn->run)
		rc = gc_kerr(k, GC_EINVAL, "graphcc bug: prepare chose no kernel");
	return rc;
}

/* Output j as prepare left it, against the limits and what the model
 * declares. *known: its value is known now; *dynamic: a sequence, an
 * optional or a shape only known at run time. */
static int check_output(compiler *c, gc_node *pn, node_io *io, gc_kctx *k, int j,
			bool reprepare, bool *known, bool *dynamic)
{
	const gc_graph *g = c->g;
	gc_tensor *o = &io->outs[j];
	const gc_value *gv = pn->out[j] < g->n_values ? &g->values[pn->out[j]] : NULL;
	gc_dtype declared = gv && gv->has_info ? gv->dtype : GC_DTYPE_UNDEFINED;
	if (reprepare) {
		*o = (gc_tensor){ .dtype = declared, .rank = GC_RANK_DYNAMIC };
		return 0;
	}
	if (gc_dtype_is_value(o->dtype) || o->rank == GC_RANK_DYNAMIC) {
		/* A sequence or optional, or a shape the kernel finds out. */
		if (declared != GC_DTYPE_UNDEFINED && !gc_value_type_fits(o->dtype, declared))
			return gc_kerr(k, GC_EINVAL, "output '%s' is %s, but the model declares it %s",
				       gv->name, gc_dtype_name(o->dtype), gc_dtype_name(declared));
		if (o->dtype == GC_DTYPE_UNDEFINED ||
		    (gc_dtype_is_value(o->dtype) && !(o->dtype & GC_DTYPE_ELEM_MASK)))
			o->dtype = declared ? declared : o->dtype;
		if (gc_dtype_is_value(o->dtype))
			o->rank = 0;
		o->data = NULL;
		*known = false;
		*dynamic = true;
		return 0;
	}
	int64_t nb = gc_tensor_nbytes(o);
	char a[160];
	if (nb < 0 && gc_dtype_size(o->dtype) && o->rank >= 0 && o->rank <= GC_MAX_RANK)
		return gc_kerr(k, GC_ELIMIT,
			       "output %d of shape %s (%s) has a size that overflows 64 bits", j,
			       gc_shape_str(o->dims, o->rank, a, sizeof a), gc_dtype_name(o->dtype));
	if (gc_dtype_size(o->dtype) == 0 || o->rank < 0 || o->rank > GC_MAX_RANK || nb < 0)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: output %d was not inferred", j);
	if ((uint64_t)nb > gc_limit_bytes())
		return gc_kerr(k, GC_ELIMIT,
			       "output %d of shape %s (%s) is over the size limit of %" PRIu64
			       " bytes (" GC_LIMIT_SETTING ")",
			       j, gc_shape_str(o->dims, o->rank, a, sizeof a), gc_dtype_name(o->dtype),
			       gc_limit_bytes());
	if (gv && gv->has_info && gv->dtype != GC_DTYPE_UNDEFINED && gv->dtype != o->dtype)
		return gc_kerr(k, GC_EINVAL, "output '%s' is %s, but the model declares it %s",
			       gv->name, gc_dtype_name(o->dtype), gc_dtype_name(gv->dtype));
	*known &= o->data != NULL;
	return 0;
}

/* Runs the node now on its known inputs, its outputs in the program's
 * pool. */
static int run_now(compiler *c, gc_node *pn, node_io *io, gc_kctx *k)
{
	for (int j = 0; j < pn->n_out; j++) {
		if (!io->outp[j])
			continue;
		int64_t nb = gc_tensor_nbytes(&io->outs[j]);
		io->outs[j].data = gc_pool_alloc(c->p->pool, (size_t)nb);
		if (!io->outs[j].data)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory folding constants");
	}
	void *scratch = pn->scratch_bytes ? gc_calloc(1, (size_t)pn->scratch_bytes) : NULL;
	if (pn->scratch_bytes && !scratch)
		return gc_error_set(c->err, GC_ENOMEM, "out of memory folding constants");
	k->scratch = scratch;
	char where[1024] = "";
	if (pn->op == GC_OP_CUSTOM) {
		const gc_custom *cu = pn->custom;
		snprintf(where, sizeof where,
			 "kernel %s:%s (flavour '%s') of node '%s', folded at compile time "
			 "(the package declares it pure)",
			 cu->library, cu->symbol, cu->flavour, pn->name);
		gc_crash_context = where;
	}
	int rc = pn->run(k, pn, io->inp, io->outp);
	gc_crash_context = NULL;
	gc_free(scratch);
	return rc;
}

/* The node's output values when they can be known now: folded into
 * constants (*fold: the node goes), or evaluated for the data-dependent
 * shapes downstream (*evaluate: it still runs at run time). */
static int fold_node(compiler *c, gc_node *pn, node_io *io, gc_kctx *k, bool reprepare,
		     bool outs_known, bool outs_dynamic, bool *fold, bool *evaluate)
{
	bool custom = pn->op == GC_OP_CUSTOM, control = gc_op_is_control(pn->op);
	bool all_known = io->all_known, all_const = io->all_const, any_value = io->any_value;
	/* A custom node folds only when its package says it is pure. Nothing
	 * with a subgraph, a sequence or a run-time shape folds. */
	bool foldable = (!custom || ((gc_custom *)pn->custom)->pure) && !control &&
			!reprepare && !outs_dynamic && !any_value && !pn->impure;
	*fold = !(c->opt && c->opt->no_fold) && foldable && (all_const || outs_known);
	/* Not folded, but its inputs' values are known: work its value out
	 * too (small tensors only: shape arithmetic), for the data-dependent
	 * shapes downstream. The node still runs at run time. */
	*evaluate = foldable && (*fold || outs_known);
	/* (Not custom kernels: they would run on the caller's own input
	 * buffers, outside --guard.) */
	if (!*evaluate && foldable && all_known && !custom) {
		int64_t total = 0;
		for (int j = 0; j < pn->n_out; j++)
			if (io->outp[j])
				total += gc_tensor_nbytes(&io->outs[j]);
		*evaluate = total <= (1 << 20);
	}
	int rc;
	if (*evaluate && !outs_known && (rc = run_now(c, pn, io, k)))
		return rc;
	for (int j = 0; *evaluate && outs_known && j < pn->n_out; j++) {
		if (!io->outp[j])
			continue;
		/* prepare's value lives in its state: copy it out. */
		io->outs[j].data = gc_pool_memdup(c->p->pool, io->outs[j].data,
						  (size_t)gc_tensor_nbytes(&io->outs[j]));
		if (!io->outs[j].data)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory folding constants");
	}
	/* A string value points at strings of its inputs (the graph's
	 * constants, the caller's input values) or of c->strings, which all die
	 * before the program: a folded one, a constant now, is copied into it. */
	for (int j = 0; *fold && j < pn->n_out; j++) {
		if (!io->outp[j] || io->outs[j].dtype != GC_DTYPE_STRING)
			continue;
		gc_tensor *copy = gc_tensor_copy_to_pool(c->p->pool, &io->outs[j]);
		if (!copy)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory folding constants");
		io->outs[j].data = copy->data;
	}
	return 0;
}

/*
 * A built-in node failed on its inputs: when one of them comes from a custom
 * node, say which, with the shape its package's inference gave it (the usual
 * culprit when a kernel's shape and its inference disagree).
 */
static void note_custom_producers(compiler *c, int32_t gi)
{
	const gc_graph *g = c->g;
	const gc_irnode *n = &g->nodes[gi];
	gc_error *err = c->err;
	for (int j = 0; j < n->n_in; j++) {
		if (n->in[j] < 0 || g->values[n->in[j]].producer < 0)
			continue;
		const gc_value *v = &g->values[n->in[j]];
		const gc_node *pn = NULL;
		for (int32_t k = 0; k < c->p->n_nodes && !pn; k++)
			if (c->kept[k] == v->producer && c->p->nodes[k].custom)
				pn = &c->p->nodes[k];
		if (!pn)
			continue;
		const gc_custom *cu = pn->custom;
		const gc_tensor *t = &c->vs[n->in[j]].t;
		char shp[160];
		size_t at = strlen(err->msg);
		snprintf(err->msg + at, sizeof err->msg - at,
			 "; its input %d ('%s', %s %s) comes from custom node '%s' (%s::%s, "
			 "flavour '%s'), whose shape inference %s gave it that shape",
			 j, v->name, gc_dtype_name(t->dtype),
			 gc_shape_str(t->dims, t->rank, shp, sizeof shp), pn->name, cu->domain,
			 cu->op_type, cu->flavour, cu->infer_where ? cu->infer_where : "?");
	}
}

/*
 * Graph node gi becomes the next program node: arity, inputs and outputs
 * checked; bound (custom) and prepared; its outputs checked; folded into
 * constants when its inputs are (then it is dropped), otherwise kept.
 */
static int bind_node(compiler *c, int32_t gi)
{
	gc_op op = GC_OP_NONE;
	const gc_op_info *info = NULL;
	if (check_arity(c, gi, &op, &info))
		return c->err->code;
	gc_node *pn = &c->p->nodes[c->p->n_nodes];
	if (make_node(c, gi, op, pn))
		return c->err->code;
	node_io io = { 0 };
	gc_kctx k = { .err = c->err, .node = pn, .threads = 1, .strings = c->strings };
	bool any_dyn = false, reprepare = false, outs_known, outs_dynamic, fold = false;
	bool evaluate = false;
	int rc;
	if ((rc = check_io(c, gi, pn, info, &any_dyn)) || (rc = gather_io(c, gi, pn, &k, &io)) ||
	    (rc = prepare_node(c, gi, pn, &io, &k, any_dyn, &reprepare)))
		goto fail;
	outs_known = !reprepare;
	outs_dynamic = reprepare;
	for (int j = 0; j < pn->n_out; j++)
		if (io.outp[j] &&
		    (rc = check_output(c, pn, &io, &k, j, reprepare, &outs_known, &outs_dynamic)))
			goto fail;
	if ((rc = fold_node(c, pn, &io, &k, reprepare, outs_known, outs_dynamic, &fold,
			    &evaluate)))
		goto fail;
	for (int j = 0; j < pn->n_out; j++) {
		if (pn->out[j] < 0)
			continue;
		vstate *s = &c->vs[pn->out[j]];
		s->t = io.outs[j];
		if (!evaluate)
			s->t.data = NULL;
		s->is_const = fold;
		s->shaped = true;
		s->dynamic = gc_dtype_is_value(s->t.dtype) || s->t.rank == GC_RANK_DYNAMIC;
	}
	pn->reprepare = reprepare;
	node_io_free(&io);
	if (fold) {
		drop_node(pn);
		return 0;
	}
	c->kept[c->p->n_nodes++] = gi;
	return 0;
fail:
	if (op != GC_OP_CUSTOM)
		note_custom_producers(c, gi);
	node_io_free(&io);
	drop_node(pn);
	return rc;
}

/* Marks what the outputs need and drops the nodes nothing needs (all stay
 * when out of memory). */
static void mark_live(compiler *c)
{
	const gc_graph *g = c->g;
	for (int32_t i = 0; i < g->n_outputs; i++)
		c->vs[g->outputs[i]].live = true;
	gc_program *p = c->p;
	bool *keep = gc_calloc((size_t)p->n_nodes + 1, sizeof *keep);
	for (int32_t i = p->n_nodes - 1; i >= 0; i--) {
		gc_node *n = &p->nodes[i];
		bool needed = false;
		for (int j = 0; j < n->n_out; j++)
			needed |= n->out[j] >= 0 && c->vs[n->out[j]].live;
		if (!needed)
			continue;
		if (keep)
			keep[i] = true;
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0)
				c->vs[n->in[j]].live = true;
	}
	/* Compact the kept nodes in order, releasing the dropped ones. */
	int32_t w = 0;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		if (keep && !keep[i]) {
			drop_node(&p->nodes[i]);
			continue;
		}
		p->nodes[w] = p->nodes[i];
		c->kept[w] = c->kept[i];
		w++;
	}
	p->n_nodes = w;
	gc_free(keep);
}

/* Whether t's data lies in a file mapping of the graph being compiled (or
 * of a graph enclosing it), which pool then keeps too. */
static bool shares_mapping(const compiler *c, const gc_tensor *t, gc_pool *pool)
{
	int64_t nb = gc_tensor_nbytes(t);
	if (!t->data || nb <= 0 || t->dtype == GC_DTYPE_STRING)
		return false;
	for (const compiler *k = c; k; k = k->parent)
		if (gc_pool_share_mapping(k->g->pool, pool, t->data, (size_t)nb))
			return true;
	return false;
}

static int32_t emit_tensor(compiler *c, int32_t v)
{
	vstate *s = &c->vs[v];
	if (s->ptensor >= 0)
		return s->ptensor;
	gc_program *p = c->p;
	gc_ptensor *pt = &p->tensors[p->n_tensors];
	pt->name = gc_pool_strdup(p->pool, s->name);
	if (!pt->name)
		return -1;
	pt->t = s->t;
	if (s->dynamic) {
		pt->storage = GC_STORAGE_DYNAMIC;
		pt->t.data = NULL;
		pt->nbytes = 0;
		p->dynamic = true;
	} else if (s->is_const) {
		pt->nbytes = (uint64_t)gc_tensor_nbytes(&s->t);
		pt->storage = GC_STORAGE_CONST;
		p->const_bytes += pt->nbytes;
		/* the program outlives the graph: it keeps the graph's mapping of
		 * the data (external data: the one form in memory), else a copy */
		if (s->borrowed && !shares_mapping(c, &s->t, p->pool)) {
			gc_tensor *copy = gc_tensor_copy_to_pool(p->pool, &s->t);
			if (!copy)
				return -1;
			pt->t.data = copy->data;
		}
	} else {
		pt->nbytes = (uint64_t)gc_tensor_nbytes(&s->t);
		pt->storage = GC_STORAGE_ARENA;
		pt->t.data = NULL;
	}
	s->ptensor = p->n_tensors++;
	return s->ptensor;
}

static int emit(compiler *c)
{
	const gc_graph *g = c->g;
	gc_program *p = c->p;
	p->tensors = gc_pool_alloc(p->pool, ((size_t)c->n_vs + 1) * sizeof *p->tensors);
	p->inputs = gc_pool_alloc(p->pool,
				  ((size_t)g->n_inputs + (size_t)c->n_outer + 1) * sizeof(int32_t));
	p->outputs = gc_pool_alloc(p->pool, ((size_t)g->n_outputs + 1) * sizeof(int32_t));
	if (!p->tensors || !p->inputs || !p->outputs)
		return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
	for (int32_t i = 0; i < g->n_inputs; i++) {
		if (c->vs[g->inputs[i]].is_const && !c->parent)
			continue; /* an input left at its default is a constant */
		int32_t t = emit_tensor(c, g->inputs[i]);
		if (t < 0)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		p->inputs[p->n_inputs++] = t;
	}
	/* A subgraph: its inputs, then what it reads of the enclosing graph. */
	p->n_formal = p->n_inputs;
	for (int32_t i = 0; i < c->n_outer; i++) {
		int32_t t = emit_tensor(c, c->outer[i]);
		if (t < 0)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		p->inputs[p->n_inputs++] = t;
	}
	for (int32_t i = 0; i < p->n_nodes; i++) {
		gc_node *n = &p->nodes[i];
		p->dynamic |= n->reprepare || n->n_sub > 0;
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0 && (n->in[j] = emit_tensor(c, n->in[j])) < 0)
				return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0 && (n->out[j] = emit_tensor(c, n->out[j])) < 0)
				return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
	}
	for (int32_t i = 0; i < g->n_outputs; i++) {
		int32_t t = emit_tensor(c, g->outputs[i]);
		if (t < 0)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		p->outputs[p->n_outputs++] = t;
	}
	return gc_program_plan_memory(p, c->backend->arena_align, c->err);
}

/*
 * A subgraph's own inputs take the types the enclosing node gives them
 * (formal; GC_RANK_DYNAMIC: a shape only known at run time), checked
 * against what the subgraph declares; the names it reads from enclosing
 * graphs are found there.
 */
static int sub_inputs(compiler *c, const gc_tensor *formal, int32_t n_formal)
{
	const gc_graph *g = c->g;
	if (g->n_inputs != n_formal)
		return gc_error_set(c->err, GC_EINVAL, "%s: the subgraph has %d inputs; %d expected",
				    g->origin, g->n_inputs, n_formal);
	for (int32_t i = 0; i < n_formal; i++) {
		const gc_value *gv = &g->values[g->inputs[i]];
		vstate *s = &c->vs[g->inputs[i]];
		gc_tensor f = formal[i];
		bool dyn = f.rank == GC_RANK_DYNAMIC || gc_dtype_is_value(f.dtype);
		gc_dtype declared = gv->has_info ? gv->dtype : GC_DTYPE_UNDEFINED;
		if (declared != GC_DTYPE_UNDEFINED && f.dtype != GC_DTYPE_UNDEFINED &&
		    !gc_value_type_fits(declared, f.dtype))
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: input %d ('%s') is declared %s, but receives %s",
					    g->origin, i, gv->name, gc_dtype_name(declared),
					    gc_dtype_name(f.dtype));
		if (f.dtype == GC_DTYPE_UNDEFINED ||
		    (gc_dtype_is_value(f.dtype) && !(f.dtype & GC_DTYPE_ELEM_MASK) && declared))
			f.dtype = declared;
		if (gc_dtype_is_value(f.dtype))
			f.rank = 0;
		f.data = NULL;
		s->t = f;
		s->shaped = true;
		s->dynamic = dyn;
		s->is_const = false;
		s->borrowed = false;
	}
	for (int32_t v = 0; v < g->n_values; v++) {
		const gc_value *gv = &g->values[v];
		if (defined_here(c, v) || (gv->first_user < 0 && !gv->is_output))
			continue;
		int32_t r = resolve(c, gv->name);
		if (r == -2)
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		if (r < 0) {
			char lb[300];
			if (gv->first_user >= 0)
				gc_node_label(g, gv->first_user, lb, sizeof lb);
			else
				snprintf(lb, sizeof lb, "its output");
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: %s reads '%s', which neither the subgraph nor an "
					    "enclosing graph defines before it",
					    g->origin, lb, gv->name);
		}
	}
	return 0;
}

/* The graph's session state: each pair's input and output in the program,
 * and its initial value as one more constant tensor. */
static int emit_states(compiler *c)
{
	const gc_graph *g = c->g;
	gc_program *p = c->p;
	if (!g->n_states)
		return 0;
	gc_ptensor *ts = gc_pool_alloc(p->pool, ((size_t)p->n_tensors + (size_t)g->n_states) *
						    sizeof *ts);
	p->states = gc_pool_alloc(p->pool, (size_t)g->n_states * sizeof *p->states);
	if (!ts || !p->states)
		return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
	memcpy(ts, p->tensors, (size_t)p->n_tensors * sizeof *ts);
	p->tensors = ts;
	for (int32_t k = 0; k < g->n_states; k++) {
		const gc_gstate *st = &g->states[k];
		gc_pstate *ps = &p->states[k];
		ps->input = ps->output = -1;
		for (int32_t i = 0; i < p->n_inputs; i++)
			if (!strcmp(p->tensors[p->inputs[i]].name, st->input))
				ps->input = i;
		for (int32_t i = 0; i < p->n_outputs; i++)
			if (!strcmp(p->tensors[p->outputs[i]].name, st->output))
				ps->output = i;
		if (ps->input < 0 || ps->output < 0)
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: state '%s' -> '%s': the program lost that input or "
					    "output",
					    g->origin, st->input, st->output);
		const gc_ptensor *in = &p->tensors[p->inputs[ps->input]];
		const gc_ptensor *out = &p->tensors[p->outputs[ps->output]];
		if (in->storage == GC_STORAGE_DYNAMIC || !gc_same_shape(&in->t, &out->t) ||
		    in->t.dtype != out->t.dtype)
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: state '%s' -> '%s': the output's type or shape is "
					    "not the input's",
					    g->origin, st->input, st->output);
		gc_ptensor *pt = &p->tensors[p->n_tensors];
		gc_tensor *copy = gc_tensor_copy_to_pool(p->pool, st->init);
		char name[512];
		snprintf(name, sizeof name, "%s@init", st->input);
		if (!copy || !(pt->name = gc_pool_strdup(p->pool, name)))
			return gc_error_set(c->err, GC_ENOMEM, "out of memory compiling");
		pt->t = *copy;
		pt->storage = GC_STORAGE_CONST;
		pt->nbytes = (uint64_t)gc_tensor_nbytes(copy);
		p->const_bytes += pt->nbytes;
		ps->init = p->n_tensors++;
		p->n_states = k + 1;
	}
	return 0;
}

/* Compiles g into c->p; a subgraph when c->parent is set, with its inputs
 * typed by formal. */
static int compile_graph(compiler *c, const gc_graph *g, const gc_tensor *formal,
			 int32_t n_formal)
{
	const gc_compile_options *opt = c->opt;
	gc_error *err = c->err;
	gc_graph *clone = NULL;
	int32_t *order = gc_calloc((size_t)g->n_nodes + 1, sizeof *order);
	int rc = 0;
	if (!order) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory compiling %s", g->origin);
		goto out;
	}
	if ((rc = gc_graph_check(g, order, err)))
		goto out;
	/* The passes rewrite a private copy (which shares the weights); with
	 * no_optimize, only the lowerings run, and only when needed. */
	if (!(opt && opt->no_optimize) || gc_ir_lowering_needed(g)) {
		clone = gc_graph_clone_for_passes(g, err);
		/* (what the passes did to subgraphs is not reported) */
		if (!clone || gc_run_ir_passes(clone, opt,
					       opt && !c->parent ? opt->pass_report : NULL,
					       opt ? opt->pass_user : NULL, err)) {
			rc = err->code ? err->code : GC_ENOMEM;
			goto out;
		}
		g = clone;
		gc_free(order);
		order = gc_calloc((size_t)g->n_nodes + 1, sizeof *order);
		if (!order) {
			rc = gc_error_set(err, GC_ENOMEM, "out of memory compiling %s", g->origin);
			goto out;
		}
		if ((rc = gc_graph_check(g, order, err)))
			goto out;
	}
	c->g = g;
	c->cap_vs = g->n_values + 16;
	c->vs = gc_calloc((size_t)c->cap_vs, sizeof *c->vs);
	c->kept = gc_calloc((size_t)g->n_nodes + 1, sizeof *c->kept);
	c->p = gc_program_alloc();
	c->strings = gc_strpool_new();
	if (!c->vs || !c->kept || !c->p || !c->strings ||
	    !(c->p->nodes = gc_pool_alloc(c->p->pool, ((size_t)g->n_nodes + 1) * sizeof(gc_node)))) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory compiling %s", g->origin);
		goto out;
	}
	c->n_vs = g->n_values;
	for (int32_t v = 0; v < g->n_values; v++) {
		const gc_value *gv = &g->values[v];
		vstate *s = &c->vs[v];
		s->ptensor = -1;
		s->name = gv->name;
		if (gv->is_input || gv->constant) {
			s->t.dtype = gv->dtype;
			s->t.rank = gv->rank;
			memcpy(s->t.dims, gv->dims, sizeof s->t.dims);
			s->shaped = true;
			s->dynamic = gc_dtype_is_value(gv->dtype);
		}
		if (gv->constant) {
			/* Borrowed from the graph while compiling; copied into
			 * the program only if a kept node reads it. */
			s->t = *gv->constant;
			s->borrowed = true;
			s->is_const = true;
			s->dynamic = false;
		}
	}
	if (c->parent) {
		if ((rc = sub_inputs(c, formal, n_formal)))
			goto out;
	} else {
		if ((rc = apply_shapes(c)))
			goto out;
		for (int32_t i = 0; opt && i < opt->n_input_values; i++) {
			int32_t v = gc_graph_find(g, opt->input_values[i].name);
			const gc_tensor *val = opt->input_values[i].value;
			if (v < 0 || !g->values[v].is_input || g->values[v].constant ||
			    gc_dtype_is_value(val->dtype))
				continue;
			/* Kernels run on the value now: one that is not what the
			 * input says stays unknown (setting the input later refuses
			 * it). */
			gc_tensor *t = &c->vs[v].t;
			if (val->dtype != t->dtype || val->rank != t->rank ||
			    memcmp(val->dims, t->dims, (size_t)t->rank * sizeof *t->dims))
				continue;
			t->data = val->data; /* known, not constant: it stays an input */
		}
	}
	for (int32_t i = 0; i < g->n_nodes && !rc; i++)
		rc = bind_node(c, order[i]);
	if (rc)
		goto out;
	mark_live(c);
	/* The last step of the pipeline: every node runs a kernel (or is
	 * prepared at run time). */
	for (int32_t i = 0; i < c->p->n_nodes && !rc; i++)
		if (!c->p->nodes[i].run && !c->p->nodes[i].reprepare)
			rc = gc_error_set(err, GC_EINVAL, "%s: node '%s' (%s) is bound to no kernel",
					  g->origin, c->p->nodes[i].name, c->p->nodes[i].op_type);
	if (!rc)
		rc = emit(c);
	if (!rc && !c->parent)
		rc = emit_states(c);
out:
	gc_free(order);
	if (rc) {
		gc_program_free(c->p);
		c->p = NULL;
	}
	/* The graph the program was bound from goes; names in c->vs point
	 * into it, which no one reads after this (the caller frees vs). So do
	 * the strings kernels made now (folded ones were copied). */
	gc_graph_free(clone);
	gc_strpool_free(c->strings);
	c->strings = NULL;
	return rc;
}

/* What gc_compile_options holds, before anything reads it. */
static int check_compile_options(const gc_compile_options *o, gc_error *err)
{
	if (gc_arg_list(o->n_shapes, o->shapes, "gc_compile_options", "shapes", err) ||
	    gc_arg_list(o->n_input_values, o->input_values, "gc_compile_options", "input_values",
			err))
		return err->code;
	for (int32_t i = 0; i < o->n_shapes; i++) {
		const gc_shape_override *s = &o->shapes[i];
		if (!s->name || !s->name[0])
			return gc_error_set(err, GC_EINVAL, "gc_compile_options.shapes[%d].name is %s",
					    (int)i, s->name ? "empty" : "NULL");
		gc_tensor t = { .rank = s->rank };
		memcpy(t.dims, s->dims, sizeof t.dims);
		char what[300];
		snprintf(what, sizeof what, "gc_compile_options.shapes[%d] ('%s')", (int)i, s->name);
		if (gc_tensor_check_shape(&t, what, err))
			return err->code;
	}
	for (int32_t i = 0; i < o->n_input_values; i++) {
		char what[300];
		const gc_input_value *v = &o->input_values[i];
		if (!v->name)
			return gc_error_set(err, GC_EINVAL,
					    "gc_compile_options.input_values[%d].name is NULL", (int)i);
		snprintf(what, sizeof what, "gc_compile_options.input_values[%d] ('%s')", (int)i,
			 v->name);
		if (v->value && gc_dtype_is_value(v->value->dtype) && v->value->data)
			continue; /* a sequence or optional (checked when it is read) */
		if (gc_api_check_tensor(v->value, "gc_compile", what, err))
			return err->code;
	}
	return 0;
}

int gc_compile(const gc_graph *g, const gc_compile_options *opt, gc_program **out,
	       gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, out);
	*out = NULL;
	GC_ARG_NONNULL(err, g);
	gc_compile_options o;
	if (gc_options_copy(&o, sizeof o, opt, "gc_compile_options", err) ||
	    check_compile_options(&o, err))
		return err->code;
	compiler c = { .opt = &o, .backend = gc_backend_find(o.backend), .err = err };
	if (!c.backend) {
		char names[128];
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "backend '%s': this build has no such backend (it has: %s)",
				    o.backend, gc_backend_names(names, sizeof names));
	}
	int rc = compile_graph(&c, g, NULL, 0);
	gc_free(c.vs);
	gc_free(c.kept);
	gc_free(c.outer);
	if (rc)
		return rc;
	*out = c.p;
	return 0;
}

void gc_program_get_stats(const gc_program *p, gc_program_stats *st)
{
	if (!st)
		return;
	memset(st, 0, sizeof *st);
	if (!p)
		return;
	st->n_nodes = p->n_nodes;
	st->n_tensors = p->n_tensors;
	st->arena_bytes = p->arena_bytes;
	st->tensor_bytes = p->tensor_bytes;
	st->constant_bytes = p->const_bytes;
}

int gc_op_is_builtin(const char *domain, const char *op_type)
{
	/* (or a lowering pass replaces its nodes by built-in ones) */
	if (!op_type)
		return 0;
	if (!domain)
		domain = "";
	return gc_op_lookup(domain, op_type) != GC_OP_NONE || gc_ir_is_lowered(domain, op_type);
}
