/* Copying and editing the graph IR for the passes. */
#include "graph-edit.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"

static int nomem(gc_error *err)
{
	return gc_error_set(err, GC_ENOMEM, "out of memory rewriting the graph");
}

/* ---- the clone ---- */

static const char *pool_str(gc_pool *pool, const char *s, bool *ok)
{
	if (!s)
		return NULL;
	char *c = gc_pool_strdup(pool, s);
	if (!c)
		*ok = false;
	return c;
}

static gc_graph *clone(const gc_graph *g, bool share_constants, gc_error *err)
{
	gc_graph *c = gc_graph_new(g->origin);
	if (!c) {
		nomem(err);
		return NULL;
	}
	bool ok = true;
	c->parent = g->parent;
	c->values = gc_calloc((size_t)g->n_values + 1, sizeof *c->values);
	c->nodes = gc_calloc((size_t)g->n_nodes + 1, sizeof *c->nodes);
	c->inputs = gc_calloc((size_t)g->n_inputs + 1, sizeof *c->inputs);
	c->outputs = gc_calloc((size_t)g->n_outputs + 1, sizeof *c->outputs);
	c->opsets = gc_calloc((size_t)g->n_opsets + 1, sizeof *c->opsets);
	if (!c->values || !c->nodes || !c->inputs || !c->outputs || !c->opsets)
		goto fail;
	c->cap_values = g->n_values + 1;
	c->cap_nodes = g->n_nodes + 1;
	c->cap_inputs = g->n_inputs + 1;
	c->cap_outputs = g->n_outputs + 1;
	c->cap_opsets = g->n_opsets + 1;
	for (int32_t i = 0; i < g->n_values; i++) {
		const gc_value *s = &g->values[i];
		gc_value *d = &c->values[i];
		*d = *s;
		d->name = pool_str(c->pool, s->name, &ok);
		for (int r = 0; r < GC_MAX_RANK; r++)
			d->dim_names[r] = pool_str(c->pool, s->dim_names[r], &ok);
		if (s->constant && !share_constants &&
		    !(d->constant = gc_tensor_copy_to_pool(c->pool, s->constant)))
			ok = false;
		/* a shared constant in a file mapping: the copy keeps the mapping
		 * too, so that what is compiled from it can share it */
		if (s->constant && share_constants && s->constant->data &&
		    gc_tensor_nbytes(s->constant) > 0)
			gc_pool_share_mapping(g->pool, c->pool, s->constant->data,
					      (size_t)gc_tensor_nbytes(s->constant));
		if (!ok || gc_strmap_put(&c->names, d->name, i))
			goto fail;
		c->n_values++;
	}
	for (int32_t i = 0; i < g->n_nodes; i++) {
		const gc_irnode *s = &g->nodes[i];
		gc_irnode *d = &c->nodes[i];
		*d = *s;
		d->name = pool_str(c->pool, s->name, &ok);
		d->domain = pool_str(c->pool, s->domain, &ok);
		d->op_type = pool_str(c->pool, s->op_type, &ok);
		d->in = gc_pool_memdup(c->pool, s->in, (size_t)(s->n_in + 1) * sizeof(int32_t));
		d->out = gc_pool_memdup(c->pool, s->out, (size_t)(s->n_out + 1) * sizeof(int32_t));
		/* graph attributes stay borrowed: subgraphs are shared */
		if (!ok || !d->in || !d->out ||
		    gc_attrs_copy(c->pool, s->n_attr, s->attrs, &d->attrs))
			goto fail;
		c->n_nodes++;
	}
	if (g->n_inputs)
		memcpy(c->inputs, g->inputs, (size_t)g->n_inputs * sizeof *c->inputs);
	if (g->n_outputs)
		memcpy(c->outputs, g->outputs, (size_t)g->n_outputs * sizeof *c->outputs);
	c->n_inputs = g->n_inputs;
	c->n_outputs = g->n_outputs;
	if (g->n_states && !(c->states = gc_calloc((size_t)g->n_states, sizeof *c->states)))
		goto fail;
	for (int32_t i = 0; i < g->n_states; i++) {
		gc_gstate *d = &c->states[i];
		d->input = pool_str(c->pool, g->states[i].input, &ok);
		d->output = pool_str(c->pool, g->states[i].output, &ok);
		d->init = share_constants ? g->states[i].init
					  : gc_tensor_copy_to_pool(c->pool, g->states[i].init);
		if (!ok || !d->init)
			goto fail;
		c->n_states = c->cap_states = i + 1;
	}
	for (int32_t i = 0; i < g->n_opsets; i++) {
		c->opsets[i].version = g->opsets[i].version;
		c->opsets[i].domain = pool_str(c->pool, g->opsets[i].domain, &ok);
		if (!ok)
			goto fail;
		c->n_opsets++;
	}
	return c;
fail:
	nomem(err);
	gc_graph_free(c);
	return NULL;
}

gc_graph *gc_graph_clone(const gc_graph *g, gc_error *err)
{
	return clone(g, false, err);
}

gc_graph *gc_graph_clone_for_passes(const gc_graph *g, gc_error *err)
{
	return clone(g, true, err);
}

/* ---- uses ---- */

/* Pins the values of g that subgraph s (or one nested in it) reads by name. */
static void pin_free_names(gc_edit *e, const gc_graph *s, int depth)
{
	if (!s || depth > 64)
		return;
	for (int32_t i = 0; i < s->n_nodes; i++) {
		const gc_irnode *n = &s->nodes[i];
		for (int j = 0; j < n->n_in; j++) {
			if (n->in[j] < 0)
				continue;
			const gc_value *v = &s->values[n->in[j]];
			if (v->producer >= 0 || v->is_input || v->constant)
				continue;
			int32_t outer = gc_graph_find(e->g, v->name);
			if (outer >= 0)
				e->pinned[outer] = true;
		}
		for (int a = 0; a < n->n_attr; a++) {
			const gc_attr *at = &n->attrs[a];
			if (at->type == GC_ATTR_GRAPH)
				pin_free_names(e, at->v.g, depth + 1);
			else if (at->type == GC_ATTR_GRAPHS)
				for (int64_t k = 0; k < at->n; k++)
					pin_free_names(e, at->v.graphs[k], depth + 1);
		}
	}
	for (int32_t i = 0; i < s->n_outputs; i++) {
		const gc_value *v = &s->values[s->outputs[i]];
		if (v->producer >= 0 || v->is_input || v->constant)
			continue;
		int32_t outer = gc_graph_find(e->g, v->name);
		if (outer >= 0)
			e->pinned[outer] = true;
	}
}

int gc_edit_begin(gc_edit *e, gc_graph *g, gc_error *err)
{
	memset(e, 0, sizeof *e);
	e->g = g;
	e->err = err;
	e->cap_values = g->n_values + 16;
	e->cap_nodes = g->n_nodes + 1;
	e->n_uses = gc_calloc((size_t)e->cap_values, sizeof *e->n_uses);
	e->pinned = gc_calloc((size_t)e->cap_values, sizeof *e->pinned);
	e->removed = gc_calloc((size_t)e->cap_nodes, sizeof *e->removed);
	if (!e->n_uses || !e->pinned || !e->removed) {
		gc_free(e->n_uses);
		gc_free(e->pinned);
		gc_free(e->removed);
		memset(e, 0, sizeof *e);
		return nomem(err);
	}
	for (int32_t i = 0; i < g->n_nodes; i++) {
		const gc_irnode *n = &g->nodes[i];
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0)
				e->n_uses[n->in[j]]++;
		for (int a = 0; a < n->n_attr; a++) {
			const gc_attr *at = &n->attrs[a];
			if (at->type == GC_ATTR_GRAPH)
				pin_free_names(e, at->v.g, 0);
			else if (at->type == GC_ATTR_GRAPHS)
				for (int64_t k = 0; k < at->n; k++)
					pin_free_names(e, at->v.graphs[k], 0);
		}
	}
	for (int32_t i = 0; i < g->n_outputs; i++)
		e->pinned[g->outputs[i]] = true;
	return 0;
}

void gc_edit_finish(gc_edit *e)
{
	gc_graph *g = e->g;
	if (!g)
		return;
	if (e->n_removed) {
		int32_t w = 0;
		for (int32_t i = 0; i < g->n_nodes; i++)
			if (!e->removed[i])
				g->nodes[w++] = g->nodes[i];
		g->n_nodes = w;
		for (int32_t v = 0; v < g->n_values; v++)
			g->values[v].producer = -1;
		for (int32_t i = 0; i < g->n_nodes; i++) {
			const gc_irnode *n = &g->nodes[i];
			for (int j = 0; j < n->n_out; j++)
				if (n->out[j] >= 0)
					g->values[n->out[j]].producer = i;
		}
	}
	for (int32_t v = 0; v < g->n_values; v++)
		g->values[v].first_user = -1;
	for (int32_t i = 0; i < g->n_nodes; i++) {
		const gc_irnode *n = &g->nodes[i];
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0 && g->values[n->in[j]].first_user < 0)
				g->values[n->in[j]].first_user = i;
	}
	gc_free(e->n_uses);
	gc_free(e->pinned);
	gc_free(e->removed);
	memset(e, 0, sizeof *e);
}

/* ---- edits ---- */

void gc_edit_replace_uses(gc_edit *e, int32_t from, int32_t to)
{
	gc_graph *g = e->g;
	if (from == to)
		return;
	for (int32_t i = 0; i < g->n_nodes; i++) {
		if (e->removed[i])
			continue;
		gc_irnode *n = &g->nodes[i];
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] == from) {
				n->in[j] = to;
				e->n_uses[from]--;
				e->n_uses[to]++;
			}
	}
}

void gc_edit_remove_node(gc_edit *e, int32_t node)
{
	gc_graph *g = e->g;
	if (e->removed[node])
		return;
	gc_irnode *n = &g->nodes[node];
	for (int j = 0; j < n->n_in; j++)
		if (n->in[j] >= 0)
			e->n_uses[n->in[j]]--;
	for (int j = 0; j < n->n_out; j++)
		if (n->out[j] >= 0 && g->values[n->out[j]].producer == node)
			g->values[n->out[j]].producer = -1;
	e->removed[node] = true;
	e->n_removed++;
}

int gc_edit_set_input(gc_edit *e, int32_t node, int32_t j, int32_t v)
{
	gc_graph *g = e->g;
	gc_irnode *n = &g->nodes[node];
	if (j >= n->n_in) {
		int32_t *in = gc_pool_alloc(g->pool, (size_t)(j + 2) * sizeof *in);
		if (!in)
			return nomem(e->err);
		memcpy(in, n->in, (size_t)n->n_in * sizeof *in);
		for (int k = n->n_in; k <= j; k++)
			in[k] = -1;
		n->in = in;
		n->n_in = j + 1;
	}
	if (n->in[j] >= 0)
		e->n_uses[n->in[j]]--;
	n->in[j] = v;
	if (v >= 0)
		e->n_uses[v]++;
	return 0;
}

void gc_edit_set_output(gc_edit *e, int32_t node, int32_t j, int32_t v)
{
	gc_graph *g = e->g;
	gc_irnode *n = &g->nodes[node];
	if (n->out[j] >= 0 && g->values[n->out[j]].producer == node)
		g->values[n->out[j]].producer = -1;
	n->out[j] = v;
	if (v >= 0)
		g->values[v].producer = node;
}

void gc_edit_absorb(gc_edit *e, int32_t p, int32_t i)
{
	int32_t y = e->g->nodes[i].out[0];
	gc_edit_remove_node(e, i);
	gc_edit_set_output(e, p, 0, y);
}

const gc_attr *gc_edit_attr(const gc_edit *e, int32_t node, const char *name)
{
	const gc_irnode *n = &e->g->nodes[node];
	for (int i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i];
	return NULL;
}

int gc_edit_set_attr(gc_edit *e, int32_t node, const gc_attr *a)
{
	gc_graph *g = e->g;
	gc_irnode *n = &g->nodes[node];
	gc_attr *copy;
	if (gc_attrs_copy(g->pool, 1, a, &copy))
		return nomem(e->err);
	for (int i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attrs[i].name, a->name)) {
			n->attrs[i] = *copy;
			return 0;
		}
	gc_attr *attrs = gc_pool_alloc(g->pool, (size_t)(n->n_attr + 1) * sizeof *attrs);
	if (!attrs)
		return nomem(e->err);
	if (n->n_attr)
		memcpy(attrs, n->attrs, (size_t)n->n_attr * sizeof *attrs);
	attrs[n->n_attr] = *copy;
	n->attrs = attrs;
	n->n_attr++;
	return 0;
}

/* Grows the per-value arrays to cover every value of the graph. */
static int cover_values(gc_edit *e)
{
	int32_t need = e->g->n_values;
	if (need <= e->cap_values)
		return 0;
	int32_t cap = need * 2;
	int32_t *uses = gc_realloc(e->n_uses, (size_t)cap * sizeof *uses);
	if (!uses)
		return nomem(e->err);
	e->n_uses = uses;
	bool *pinned = gc_realloc(e->pinned, (size_t)cap * sizeof *pinned);
	if (!pinned)
		return nomem(e->err);
	e->pinned = pinned;
	for (int32_t v = e->cap_values; v < cap; v++) {
		e->n_uses[v] = 0;
		e->pinned[v] = false;
	}
	e->cap_values = cap;
	return 0;
}

int32_t gc_edit_add_constant(gc_edit *e, const char *hint, gc_dtype dtype, int32_t rank,
			     const int64_t *dims, void **data)
{
	gc_graph *g = e->g;
	size_t len = strlen(hint) + 24;
	char *name = gc_malloc(len);
	if (!name) {
		nomem(e->err);
		return -1;
	}
	snprintf(name, len, "%s", hint);
	for (int i = 1; gc_graph_find(g, name) >= 0; i++)
		snprintf(name, len, "%s.%d", hint, i);
	gc_tensor t = {.dtype = dtype, .rank = rank};
	memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
	int64_t nb = gc_tensor_nbytes(&t);
	/* gc_graph_add_constant copies: hand it zeroes, then fill the copy. */
	void *zero = nb >= 0 ? gc_calloc(1, (size_t)nb + 1) : NULL;
	int32_t id = -1;
	if (!zero) {
		nomem(e->err);
		goto out;
	}
	t.data = zero;
	if (gc_graph_add_constant(g, name, &t, e->err))
		goto out;
	id = gc_graph_find(g, name);
	if (cover_values(e)) {
		id = -1;
		goto out;
	}
	*data = g->values[id].constant->data;
out:
	gc_free(zero);
	gc_free(name);
	return id;
}

/* ---- reading constants ---- */

const gc_tensor *gc_edit_const(gc_edit *e, int32_t v)
{
	gc_graph *g = e->g;
	if (v < 0)
		return NULL;
	const gc_value *val = &g->values[v];
	if (val->constant)
		return val->constant;
	int32_t p = val->producer;
	if (p < 0 || e->removed[p] || !gc_edit_is_op(e, p, "Constant"))
		return NULL;
	const gc_irnode *n = &g->nodes[p];
	if (n->n_attr != 1 || n->n_out != 1 || n->n_in != 0)
		return NULL;
	const gc_attr *a = &n->attrs[0];
	if (!strcmp(a->name, "value") && a->type == GC_ATTR_TENSOR)
		return a->v.t;
	gc_tensor t = {0};
	const void *src;
	if (!strcmp(a->name, "value_float") && a->type == GC_ATTR_FLOAT) {
		t.dtype = GC_DTYPE_FLOAT;
		src = &a->v.f;
	} else if (!strcmp(a->name, "value_int") && a->type == GC_ATTR_INT) {
		t.dtype = GC_DTYPE_INT64;
		src = &a->v.i;
	} else if (!strcmp(a->name, "value_floats") && a->type == GC_ATTR_FLOATS) {
		t.dtype = GC_DTYPE_FLOAT;
		t.rank = 1;
		t.dims[0] = a->n;
		src = a->v.floats;
	} else if (!strcmp(a->name, "value_ints") && a->type == GC_ATTR_INTS) {
		t.dtype = GC_DTYPE_INT64;
		t.rank = 1;
		t.dims[0] = a->n;
		src = a->v.ints;
	} else {
		return NULL;
	}
	t.data = (void *)src;
	return gc_tensor_copy_to_pool(g->pool, &t);
}

gc_dtype gc_edit_known_dtype(gc_edit *e, int32_t v)
{
	if (v < 0)
		return GC_DTYPE_UNDEFINED;
	const gc_tensor *t = gc_edit_const(e, v);
	if (t)
		return t->dtype;
	const gc_value *val = &e->g->values[v];
	return val->has_info ? val->dtype : GC_DTYPE_UNDEFINED;
}

/* Whether node is op: "Name" (built-in) or "domain::Name". */
static bool each_match(const gc_edit *e, int32_t node, const char *op)
{
	const char *sep = strstr(op, "::");
	if (!sep)
		return gc_edit_is_op(e, node, op);
	const gc_irnode *n = &e->g->nodes[node];
	return !e->removed[node] && strlen(n->domain) == (size_t)(sep - op) &&
	       !strncmp(n->domain, op, (size_t)(sep - op)) && !strcmp(n->op_type, sep + 2);
}

int gc_edit_each(gc_pass_ctx *ctx, const char *const *ops, int (*one)(gc_edit *e, int32_t node))
{
	gc_edit e;
	int rc = gc_edit_begin(&e, ctx->g, ctx->err);
	for (int32_t i = 0; !rc && i < ctx->g->n_nodes; i++) {
		bool match = !ops;
		for (int k = 0; ops && ops[k] && !match; k++)
			match = each_match(&e, i, ops[k]);
		int r = match ? one(&e, i) : 0;
		if (r < 0)
			rc = r;
		else
			ctx->changed += r;
	}
	gc_edit_finish(&e);
	return rc;
}

bool gc_edit_is_op(const gc_edit *e, int32_t node, const char *op_type)
{
	const gc_irnode *n = &e->g->nodes[node];
	return (!n->domain[0] || !strcmp(n->domain, "ai.onnx")) && !strcmp(n->op_type, op_type);
}

int gc_edit_set_op(gc_edit *e, int32_t node, const char *domain, const char *op_type,
		   int32_t n_in)
{
	gc_graph *g = e->g;
	gc_irnode *n = &g->nodes[node];
	const char *d = gc_pool_strdup(g->pool, domain), *t = gc_pool_strdup(g->pool, op_type);
	if (!d || !t)
		return nomem(e->err);
	for (int32_t j = n_in; j < n->n_in; j++)
		if (n->in[j] >= 0)
			e->n_uses[n->in[j]]--;
	if (n_in < n->n_in)
		n->n_in = n_in;
	n->domain = d;
	n->op_type = t;
	n->n_attr = 0;
	n->attrs = NULL;
	return 0;
}

bool gc_edit_const_scalar(gc_edit *e, int32_t v, gc_dtype *dtype, double *val)
{
	const gc_tensor *t = gc_edit_const(e, v);
	if (!t || !gc_kv_float(t->dtype) || gc_tensor_numel(t) != 1)
		return false;
	*val = gc_kv_load(t, 0);
	if (dtype)
		*dtype = t->dtype;
	return true;
}

int32_t gc_edit_only_reader(const gc_edit *e, int32_t v)
{
	if (v < 0 || e->n_uses[v] != 1 || e->pinned[v])
		return -1;
	for (int32_t i = 0; i < e->g->n_nodes; i++) {
		if (e->removed[i])
			continue;
		const gc_irnode *n = &e->g->nodes[i];
		for (int32_t j = 0; j < n->n_in; j++)
			if (n->in[j] == v)
				return i;
	}
	return -1;
}
