/* The graph builder: the one way graphs are made, by hand or by the ONNX
 * importer. */
#include "graph-impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"

#define GROW(g, arr, n, cap)                                                   \
	((n) < (cap) ? 0 : grow_array((void **)&(arr), &(cap), sizeof *(arr)))

static int grow_array(void **arr, int32_t *cap, size_t elem)
{
	int32_t ncap = *cap ? *cap * 2 : 16;
	void *p = gc_realloc(*arr, (size_t)ncap * elem);
	if (!p)
		return GC_ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

static int nomem(gc_error *err)
{
	return gc_error_set(err, GC_ENOMEM, "out of memory building the graph");
}

gc_graph *gc_graph_new(const char *origin)
{
	gc_graph *g = gc_calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->pool = gc_pool_new();
	if (!g->pool) {
		gc_free(g);
		return NULL;
	}
	g->origin = gc_pool_strdup(g->pool, origin ? origin : "<graph>");
	if (!g->origin) {
		gc_graph_free(g);
		return NULL;
	}
	return g;
}

gc_graph *gc_graph_new_child(gc_graph *g, const char *origin)
{
	if (GROW(g, g->children, g->n_children, g->cap_children))
		return NULL;
	gc_graph *c = gc_graph_new(origin);
	if (!c)
		return NULL;
	c->parent = g;
	g->children[g->n_children++] = c;
	return c;
}

gc_graph *gc_graph_add_subgraph(gc_graph *g, const char *origin)
{
	if (!g)
		return NULL;
	gc_graph *c = gc_graph_new_child(g, origin);
	if (!c)
		return NULL;
	for (int i = 0; i < g->n_opsets; i++) {
		gc_error err = { 0 };
		if (gc_graph_set_opset(c, g->opsets[i].domain, g->opsets[i].version, &err))
			return NULL; /* freed with g */
	}
	return c;
}

void gc_graph_free(gc_graph *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->n_children; i++)
		gc_graph_free(g->children[i]);
	gc_free(g->children);
	gc_free(g->values);
	gc_free(g->nodes);
	gc_free(g->inputs);
	gc_free(g->outputs);
	gc_free(g->opsets);
	gc_strmap_clear(&g->names);
	gc_pool_free(g->pool);
	gc_free(g);
}

int32_t gc_graph_find(const gc_graph *g, const char *name)
{
	return gc_strmap_get(&g->names, name);
}

/* The value of that name, created (unproduced, unknown) when new. */
static int32_t value_get(gc_graph *g, const char *name, gc_error *err)
{
	int32_t id = gc_strmap_get(&g->names, name);
	if (id >= 0)
		return id;
	if (GROW(g, g->values, g->n_values, g->cap_values)) {
		nomem(err);
		return -1;
	}
	gc_value *v = &g->values[g->n_values];
	memset(v, 0, sizeof *v);
	v->name = gc_pool_strdup(g->pool, name);
	v->rank = -1;
	v->producer = -1;
	v->first_user = -1;
	if (!v->name || gc_strmap_put(&g->names, v->name, g->n_values)) {
		nomem(err);
		return -1;
	}
	return g->n_values++;
}

int gc_graph_set_opset(gc_graph *g, const char *domain, int64_t version, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	if (!domain)
		domain = "";
	if (!strcmp(domain, "ai.onnx"))
		domain = "";
	int64_t lo, hi;
	if (!gc_opset_supported(domain, version, &lo, &hi))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "opset %" PRId64 " of domain '%s' is outside what graphcc "
				    "implements: %s%s%s opsets %" PRId64 " to %" PRId64,
				    version, domain[0] ? domain : "ai.onnx",
				    domain[0] ? "domain '" : "ONNX's default domain",
				    domain[0] ? domain : "", domain[0] ? "' (op packages) takes" : " has",
				    lo, hi);
	for (int i = 0; i < g->n_opsets; i++) {
		if (!strcmp(g->opsets[i].domain, domain)) {
			g->opsets[i].version = version;
			return 0;
		}
	}
	if (GROW(g, g->opsets, g->n_opsets, g->cap_opsets))
		return nomem(err);
	g->opsets[g->n_opsets].domain = gc_pool_strdup(g->pool, domain);
	g->opsets[g->n_opsets].version = version;
	if (!g->opsets[g->n_opsets].domain)
		return nomem(err);
	g->n_opsets++;
	return 0;
}

int64_t gc_graph_opset(const gc_graph *g, const char *domain)
{
	if (!domain || !strcmp(domain, "ai.onnx"))
		domain = "";
	for (int i = 0; i < g->n_opsets; i++)
		if (!strcmp(g->opsets[i].domain, domain))
			return g->opsets[i].version;
	return -1;
}

static int check_name(gc_graph *g, const char *name, const char *what, gc_error *err)
{
	if (!name || !name[0])
		return gc_error_set(err, GC_EINVAL, "%s: %s has an empty name", g->origin, what);
	return 0;
}

static int check_shape(gc_graph *g, const char *name, gc_dtype dtype, int32_t rank,
		       gc_error *err)
{
	/* A subgraph's input may leave its type to the node that runs it. */
	if (g->parent && dtype == GC_DTYPE_UNDEFINED && rank <= 0)
		return 0;
	if (g->parent && rank == -1 && !gc_dtype_is_value(dtype))
		rank = 0;
	if (rank < 0 || rank > GC_MAX_RANK)
		return gc_error_set(err, GC_EINVAL,
				    "%s: tensor '%s' has rank %d; graphcc supports ranks 0 to %d",
				    g->origin, name, rank, GC_MAX_RANK);
	if (gc_dtype_is_value(dtype)) {
		gc_dtype inner = gc_dtype_inner(gc_dtype_inner(dtype));
		if (rank != 0 || (dtype & ~(GC_DTYPE_SEQUENCE | GC_DTYPE_OPTIONAL | GC_DTYPE_ELEM_MASK)) ||
		    inner >= GC_DTYPE_COUNT)
			return gc_error_set(err, GC_EINVAL, "%s: '%s' has invalid type %d", g->origin,
					    name, (int)dtype);
		return 0;
	}
	if (gc_dtype_size(dtype) == 0)
		return gc_error_set(err, GC_EINVAL, "%s: tensor '%s' has invalid element type %d",
				    g->origin, name, (int)dtype);
	return 0;
}

int gc_graph_add_input(gc_graph *g, const char *name, gc_dtype dtype, int32_t rank,
		       const int64_t *dims, const char *const *dim_names, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	if (check_name(g, name, "a graph input", err) || check_shape(g, name, dtype, rank, err))
		return err->code;
	if (rank > 0 && !dims)
		return gc_error_set(err, GC_EINVAL, "%s: argument 'dims' is NULL for rank %d",
				    __func__, (int)rank);
	for (int i = 0; i < rank; i++)
		if (dims[i] < -1)
			return gc_error_set(err, GC_EINVAL,
					    "%s: input '%s': dim %d is %" PRId64
					    " (a size, or -1: not known)",
					    __func__, name, i, dims[i]);
	int32_t id = value_get(g, name, err);
	if (id < 0)
		return err->code;
	gc_value *v = &g->values[id];
	if (v->is_input)
		return gc_error_set(err, GC_EINVAL, "%s: graph input '%s' is declared twice",
				    g->origin, name);
	if (v->producer >= 0) {
		char lb[256];
		return gc_error_set(err, GC_EINVAL,
				    "%s: graph input '%s' is also produced by %s", g->origin, name,
				    gc_node_label(g, v->producer, lb, sizeof lb));
	}
	v->is_input = true;
	v->has_info = dtype != GC_DTYPE_UNDEFINED;
	v->dtype = dtype;
	v->rank = rank;
	for (int i = 0; i < rank; i++) {
		v->dims[i] = dims[i];
		v->dim_names[i] = dim_names && dim_names[i] ? gc_pool_strdup(g->pool, dim_names[i])
							    : NULL;
	}
	if (GROW(g, g->inputs, g->n_inputs, g->cap_inputs))
		return nomem(err);
	g->inputs[g->n_inputs++] = id;
	return 0;
}

gc_tensor *gc_tensor_copy_to_pool(gc_pool *pool, const gc_tensor *t)
{
	gc_tensor *c = gc_pool_alloc(pool, sizeof *c);
	if (!c)
		return NULL;
	*c = *t;
	int64_t nb = gc_tensor_nbytes(t);
	if (nb < 0)
		return NULL;
	if (t->dtype == GC_DTYPE_STRING) {
		int64_t n = gc_tensor_numel(t);
		char **dst = gc_pool_alloc(pool, (size_t)nb);
		if (!dst)
			return NULL;
		for (int64_t i = 0; i < n; i++) {
			const char *s = ((char *const *)t->data)[i];
			dst[i] = gc_pool_strdup(pool, s ? s : "");
			if (!dst[i])
				return NULL;
		}
		c->data = dst;
		return c;
	}
	c->data = gc_pool_memdup(pool, t->data, (size_t)nb);
	return c->data ? c : NULL;
}

int gc_graph_add_constant(gc_graph *g, const char *name, const gc_tensor *value, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	if (check_name(g, name, "an initializer", err) ||
	    gc_api_check_tensor(value, __func__, "argument 'value'", err))
		return err->code;
	if (check_name(g, name, "an initializer", err) ||
	    check_shape(g, name, value->dtype, value->rank, err))
		return err->code;
	if (gc_tensor_numel(value) < 0)
		return gc_error_set(err, GC_EINVAL, "%s: initializer '%s' has an invalid shape",
				    g->origin, name);
	int32_t id = value_get(g, name, err);
	if (id < 0)
		return err->code;
	gc_value *v = &g->values[id];
	if (v->constant)
		return gc_error_set(err, GC_EINVAL, "%s: initializer '%s' is declared twice",
				    g->origin, name);
	if (v->producer >= 0) {
		char lb[256];
		return gc_error_set(err, GC_EINVAL,
				    "%s: initializer '%s' is also produced by %s", g->origin, name,
				    gc_node_label(g, v->producer, lb, sizeof lb));
	}
	v->constant = gc_tensor_copy_to_pool(g->pool, value);
	if (!v->constant)
		return nomem(err);
	if (!v->is_input) {
		v->dtype = value->dtype;
		v->rank = value->rank;
		memcpy(v->dims, value->dims, sizeof v->dims);
	}
	v->has_info = true;
	return 0;
}

int gc_attrs_copy(gc_pool *pool, int32_t n, const gc_attr *src, gc_attr **dst)
{
	gc_attr *a = n ? gc_pool_alloc(pool, (size_t)n * sizeof *a) : NULL;
	if (n && !a)
		return GC_ENOMEM;
	for (int i = 0; i < n; i++) {
		const gc_attr *s = &src[i];
		a[i] = *s;
		a[i].name = gc_pool_strdup(pool, s->name ? s->name : "");
		if (!a[i].name)
			return GC_ENOMEM;
		switch (s->type) {
		case GC_ATTR_STRING:
			a[i].v.s = gc_pool_strndup(pool, s->v.s ? s->v.s : "", (size_t)s->n);
			if (!a[i].v.s)
				return GC_ENOMEM;
			break;
		case GC_ATTR_INTS:
			a[i].v.ints = gc_pool_memdup(pool, s->v.ints, (size_t)s->n * sizeof(int64_t));
			if (s->n && !a[i].v.ints)
				return GC_ENOMEM;
			break;
		case GC_ATTR_FLOATS:
			a[i].v.floats = gc_pool_memdup(pool, s->v.floats, (size_t)s->n * sizeof(float));
			if (s->n && !a[i].v.floats)
				return GC_ENOMEM;
			break;
		case GC_ATTR_STRINGS: {
			char **ss = gc_pool_alloc(pool, (size_t)(s->n ? s->n : 1) * sizeof(char *));
			if (!ss)
				return GC_ENOMEM;
			for (int64_t j = 0; j < s->n; j++)
				if (!(ss[j] = gc_pool_strdup(pool, s->v.strings[j])))
					return GC_ENOMEM;
			a[i].v.strings = (const char *const *)ss;
			break;
		}
		case GC_ATTR_TENSOR:
			a[i].v.t = gc_tensor_copy_to_pool(pool, s->v.t);
			if (!a[i].v.t)
				return GC_ENOMEM;
			break;
		case GC_ATTR_TENSORS: {
			gc_tensor *ts = gc_pool_alloc(pool, (size_t)(s->n ? s->n : 1) * sizeof *ts);
			if (!ts)
				return GC_ENOMEM;
			for (int64_t j = 0; j < s->n; j++) {
				gc_tensor *c = gc_tensor_copy_to_pool(pool, &s->v.tensors[j]);
				if (!c)
					return GC_ENOMEM;
				ts[j] = *c;
			}
			a[i].v.tensors = ts;
			break;
		}
		default:
			/* FLOAT, INT: by value. GRAPH(S): borrowed from the builder's
			 * owner (subgraphs are owned by their parent graph). */
			break;
		}
	}
	*dst = a;
	return 0;
}

const char *gc_node_label(const gc_graph *g, int32_t i, char *buf, size_t len)
{
	const gc_irnode *n = &g->nodes[i];
	const char *dom = n->domain && n->domain[0] ? n->domain : "";
	if (n->name && n->name[0])
		snprintf(buf, len, "node '%s' (%s%s%s)", n->name, dom, dom[0] ? "::" : "",
			 n->op_type);
	else
		snprintf(buf, len, "node #%d (%s%s%s)", i, dom, dom[0] ? "::" : "", n->op_type);
	return buf;
}

int gc_graph_add_node(gc_graph *g, const char *name, const char *domain, const char *op_type,
		      int32_t n_in, const char *const *inputs, int32_t n_out,
		      const char *const *outputs, int32_t n_attr, const gc_attr *attrs,
		      gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	if (gc_api_check_names(n_in, inputs, __func__, "inputs", err) ||
	    gc_api_check_names(n_out, outputs, __func__, "outputs", err) ||
	    gc_api_check_attrs(n_attr, attrs, __func__, err))
		return err->code;
	if (!op_type || !op_type[0])
		return gc_error_set(err, GC_EINVAL, "%s: node '%s' has no op type", g->origin,
				    name ? name : "");
	if (n_in < 0 || n_out < 0 || n_attr < 0)
		return gc_error_set(err, GC_EINVAL, "%s: node '%s' has negative counts", g->origin,
				    name ? name : "");
	/* No operator has more than a few dozen attributes; thousands are an
	 * attack on the duplicate check below (quadratic). */
	if (n_attr > 1024)
		return gc_error_set(err, GC_EINVAL,
				    "%s: node '%s' (%s) has %d attributes; more than 1024 are refused",
				    g->origin, name ? name : "", op_type, (int)n_attr);
	if (GROW(g, g->nodes, g->n_nodes, g->cap_nodes))
		return nomem(err);
	int32_t idx = g->n_nodes;
	gc_irnode *n = &g->nodes[idx];
	memset(n, 0, sizeof *n);
	n->name = gc_pool_strdup(g->pool, name ? name : "");
	n->domain = gc_pool_strdup(g->pool, domain && strcmp(domain, "ai.onnx") ? domain : "");
	n->op_type = gc_pool_strdup(g->pool, op_type);
	n->in = gc_pool_alloc(g->pool, (size_t)(n_in + 1) * sizeof(int32_t));
	n->out = gc_pool_alloc(g->pool, (size_t)(n_out + 1) * sizeof(int32_t));
	if (!n->name || !n->domain || !n->op_type || !n->in || !n->out)
		return nomem(err);
	g->n_nodes++; /* from here on, the node exists for labels */
	char lb[256];
	for (int i = 0; i < n_in; i++) {
		if (!inputs[i] || !inputs[i][0]) {
			n->in[n->n_in++] = -1;
			continue;
		}
		int32_t v = value_get(g, inputs[i], err);
		if (v < 0)
			return err->code;
		if (g->values[v].first_user < 0)
			g->values[v].first_user = idx;
		n->in[n->n_in++] = v;
	}
	for (int i = 0; i < n_out; i++) {
		if (!outputs[i] || !outputs[i][0]) {
			n->out[n->n_out++] = -1; /* an unused optional output */
			continue;
		}
		int32_t v = value_get(g, outputs[i], err);
		if (v < 0)
			return err->code;
		gc_value *val = &g->values[v];
		if (val->producer >= 0) {
			char lb2[256];
			return gc_error_set(err, GC_EINVAL,
					    "%s: tensor '%s' is produced twice: by %s and by %s",
					    g->origin, val->name,
					    gc_node_label(g, val->producer, lb2, sizeof lb2),
					    gc_node_label(g, idx, lb, sizeof lb));
		}
		if (val->is_input || val->constant)
			return gc_error_set(err, GC_EINVAL,
					    "%s: %s writes tensor '%s', which is a graph %s",
					    g->origin, gc_node_label(g, idx, lb, sizeof lb), val->name,
					    val->is_input ? "input" : "initializer");
		val->producer = idx;
		n->out[n->n_out++] = v;
	}
	if (gc_attrs_copy(g->pool, n_attr, attrs, &n->attrs))
		return nomem(err);
	n->n_attr = n_attr;
	for (int i = 0; i < n_attr; i++)
		for (int j = 0; j < i; j++)
			if (!strcmp(n->attrs[i].name, n->attrs[j].name))
				return gc_error_set(err, GC_EINVAL,
						    "%s: %s has attribute '%s' twice", g->origin,
						    gc_node_label(g, idx, lb, sizeof lb),
						    n->attrs[i].name);
	return 0;
}

int gc_graph_add_output(gc_graph *g, const char *name, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	if (check_name(g, name, "a graph output", err))
		return err->code;
	int32_t id = value_get(g, name, err);
	if (id < 0)
		return err->code;
	if (g->values[id].is_output)
		return gc_error_set(err, GC_EINVAL, "%s: graph output '%s' is declared twice",
				    g->origin, name);
	g->values[id].is_output = true;
	if (GROW(g, g->outputs, g->n_outputs, g->cap_outputs))
		return nomem(err);
	g->outputs[g->n_outputs++] = id;
	return 0;
}

int gc_graph_set_value_info(gc_graph *g, const char *name, gc_dtype dtype, int32_t rank,
			    const int64_t *dims, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	if (check_name(g, name, "a value_info entry", err))
		return err->code;
	if (rank > 0 && !dims)
		return gc_error_set(err, GC_EINVAL, "%s: argument 'dims' is NULL for rank %d",
				    __func__, (int)rank);
	int32_t id = value_get(g, name, err);
	if (id < 0)
		return err->code;
	gc_value *v = &g->values[id];
	if (v->is_input || v->constant)
		return 0; /* the input's own declaration or the value itself wins */
	if (rank > GC_MAX_RANK)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: tensor '%s' has rank %d; graphcc supports ranks 0 to %d",
				    g->origin, name, rank, GC_MAX_RANK);
	v->dtype = dtype;
	v->rank = rank;
	for (int i = 0; i < rank && i < GC_MAX_RANK; i++)
		v->dims[i] = dims[i];
	v->has_info = true;
	return 0;
}

int gc_graph_input_has_default(const gc_graph *g, int i)
{
	return g && i >= 0 && i < g->n_inputs && g->values[g->inputs[i]].constant != NULL;
}

int gc_graph_drop_default(gc_graph *g, const char *name, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	GC_ARG_NONNULL(err, name);
	int32_t id = gc_graph_find(g, name);
	if (id < 0 || !g->values[id].is_input)
		return gc_error_set(err, GC_EINVAL, "%s: no graph input named '%s'", g->origin,
				    name);
	g->values[id].constant = NULL; /* its bytes stay in the pool until the graph dies */
	return 0;
}

int gc_graph_num_inputs(const gc_graph *g)
{
	return g ? g->n_inputs : GC_EINVAL;
}

int gc_graph_num_outputs(const gc_graph *g)
{
	return g ? g->n_outputs : GC_EINVAL;
}

int gc_graph_num_nodes(const gc_graph *g)
{
	return g ? g->n_nodes : GC_EINVAL;
}

const char *gc_graph_input_name(const gc_graph *g, int i)
{
	return g && i >= 0 && i < g->n_inputs ? g->values[g->inputs[i]].name : NULL;
}

const char *gc_graph_output_name(const gc_graph *g, int i)
{
	return g && i >= 0 && i < g->n_outputs ? g->values[g->outputs[i]].name : NULL;
}

int gc_graph_tensor_info(const gc_graph *g, const char *name, gc_tensor *info)
{
	if (!g || !name || !info)
		return GC_EINVAL;
	int32_t id = gc_graph_find(g, name);
	memset(info, 0, sizeof *info);
	if (id < 0)
		return GC_EINVAL;
	const gc_value *v = &g->values[id];
	info->dtype = v->dtype;
	info->rank = v->rank;
	for (int i = 0; i < v->rank; i++)
		info->dims[i] = v->dims[i];
	return 0;
}

const char *gc_graph_dim_name(const gc_graph *g, const char *name, int d)
{
	if (!g || !name)
		return NULL;
	int32_t id = gc_graph_find(g, name);
	if (id < 0 || d < 0 || d >= g->values[id].rank)
		return NULL;
	return g->values[id].dim_names[d];
}

void gc_graph_node(const gc_graph *g, int i, const char **name, const char **domain,
		   const char **op_type)
{
	if (name)
		*name = NULL;
	if (domain)
		*domain = NULL;
	if (op_type)
		*op_type = NULL;
	if (!g || i < 0 || i >= g->n_nodes)
		return;
	const gc_irnode *n = &g->nodes[i];
	if (name)
		*name = n->name;
	if (domain)
		*domain = n->domain;
	if (op_type)
		*op_type = n->op_type;
}

static bool visible_outside(const gc_graph *g, const char *name)
{
	for (const gc_graph *p = g->parent; p; p = p->parent)
		if (gc_graph_find(p, name) >= 0)
			return true;
	return false;
}

/* The edges a node's subgraphs add: (value of g, node) for each tensor of
 * g they read by name. */
typedef struct edges {
	int32_t *v, *node;
	int32_t n, cap;
	bool oom;
} edges;

static void add_edge(edges *e, int32_t v, int32_t node)
{
	for (int32_t i = 0; i < e->n; i++)
		if (e->v[i] == v && e->node[i] == node)
			return;
	if (e->n == e->cap) {
		int32_t cap = e->cap * 2 + 16;
		int32_t *a = gc_realloc(e->v, (size_t)cap * sizeof *a);
		if (a)
			e->v = a;
		int32_t *b = a ? gc_realloc(e->node, (size_t)cap * sizeof *b) : NULL;
		if (!b) {
			e->oom = true;
			return;
		}
		e->node = b;
		e->cap = cap;
	}
	e->v[e->n] = v;
	e->node[e->n++] = node;
}

static void outer_reads(const gc_graph *g, const gc_graph *s, int32_t node, edges *e, int depth)
{
	if (!s || depth > 64)
		return;
	for (int32_t i = 0; i < s->n_values; i++) {
		const gc_value *v = &s->values[i];
		if (v->producer >= 0 || v->is_input || v->constant)
			continue;
		int32_t outer = gc_graph_find(g, v->name);
		if (outer >= 0 && g->values[outer].producer >= 0)
			add_edge(e, outer, node);
	}
	for (int32_t i = 0; i < s->n_nodes; i++) {
		const gc_irnode *n = &s->nodes[i];
		for (int a = 0; a < n->n_attr; a++) {
			const gc_attr *at = &n->attrs[a];
			if (at->type == GC_ATTR_GRAPH)
				outer_reads(g, at->v.g, node, e, depth + 1);
			else if (at->type == GC_ATTR_GRAPHS)
				for (int64_t k = 0; k < at->n; k++)
					outer_reads(g, at->v.graphs[k], node, e, depth + 1);
		}
	}
}

int gc_graph_check(const gc_graph *g, int32_t *order, gc_error *err)
{
	char lb[256];
	edges ext = { 0 }; /* what subgraphs read of g: their nodes run after its producer */
	for (int32_t i = 0; i < g->n_nodes; i++) {
		const gc_irnode *n = &g->nodes[i];
		for (int a = 0; a < n->n_attr; a++) {
			const gc_attr *at = &n->attrs[a];
			if (at->type == GC_ATTR_GRAPH)
				outer_reads(g, at->v.g, i, &ext, 0);
			else if (at->type == GC_ATTR_GRAPHS)
				for (int64_t k = 0; k < at->n; k++)
					outer_reads(g, at->v.graphs[k], i, &ext, 0);
		}
	}
	if (ext.oom) {
		gc_free(ext.v);
		gc_free(ext.node);
		return nomem(err);
	}
	int32_t *pending = gc_calloc((size_t)g->n_nodes + 1, sizeof *pending);
	int32_t *users = NULL; /* consumers of each value, grouped by value */
	int32_t *ustart = gc_calloc((size_t)g->n_values + 2, sizeof *ustart);
	if (!pending || !ustart) {
		gc_free(pending);
		gc_free(ustart);
		gc_free(ext.v);
		gc_free(ext.node);
		return nomem(err);
	}
	int rc = 0;
	/* Every read names something defined. */
	for (int32_t i = 0; i < g->n_nodes && !rc; i++) {
		const gc_irnode *n = &g->nodes[i];
		for (int j = 0; j < n->n_in; j++) {
			if (n->in[j] < 0)
				continue;
			const gc_value *v = &g->values[n->in[j]];
			if (v->producer < 0 && !v->is_input && !v->constant &&
			    !visible_outside(g, v->name)) {
				rc = gc_error_set(err, GC_EINVAL,
						  "%s: %s reads tensor '%s', which no node produces "
						  "and which is not a graph input or initializer",
						  g->origin, gc_node_label(g, i, lb, sizeof lb), v->name);
				break;
			}
		}
	}
	for (int32_t i = 0; i < g->n_outputs && !rc; i++) {
		const gc_value *v = &g->values[g->outputs[i]];
		if (v->producer < 0 && !v->is_input && !v->constant && !visible_outside(g, v->name))
			rc = gc_error_set(err, GC_EINVAL,
					  "%s: graph output '%s' is not produced by any node",
					  g->origin, v->name);
	}
	if (rc)
		goto out;
	/* Kahn's algorithm over producer -> consumer edges. */
	for (int32_t i = 0; i < g->n_nodes; i++) {
		const gc_irnode *n = &g->nodes[i];
		for (int j = 0; j < n->n_in; j++)
			if (n->in[j] >= 0 && g->values[n->in[j]].producer >= 0) {
				pending[i]++;
				ustart[n->in[j] + 1]++;
			}
	}
	for (int32_t i = 0; i < ext.n; i++) {
		pending[ext.node[i]]++;
		ustart[ext.v[i] + 1]++;
	}
	for (int32_t v = 0; v < g->n_values; v++)
		ustart[v + 1] += ustart[v];
	users = gc_calloc((size_t)ustart[g->n_values] + 1, sizeof *users);
	if (!users) {
		rc = nomem(err);
		goto out;
	}
	{
		int32_t *fill = gc_calloc((size_t)g->n_values + 1, sizeof *fill);
		if (!fill) {
			rc = nomem(err);
			goto out;
		}
		for (int32_t i = 0; i < g->n_nodes; i++) {
			const gc_irnode *n = &g->nodes[i];
			for (int j = 0; j < n->n_in; j++) {
				int32_t v = n->in[j];
				if (v >= 0 && g->values[v].producer >= 0)
					users[ustart[v] + fill[v]++] = i;
			}
		}
		for (int32_t i = 0; i < ext.n; i++)
			users[ustart[ext.v[i]] + fill[ext.v[i]]++] = ext.node[i];
		gc_free(fill);
	}
	int32_t head = 0, tail = 0;
	for (int32_t i = 0; i < g->n_nodes; i++)
		if (!pending[i])
			order[tail++] = i;
	while (head < tail) {
		const gc_irnode *n = &g->nodes[order[head++]];
		for (int j = 0; j < n->n_out; j++) {
			int32_t v = n->out[j];
			if (v < 0)
				continue;
			for (int32_t u = ustart[v]; u < ustart[v + 1]; u++)
				if (--pending[users[u]] == 0)
					order[tail++] = users[u];
		}
	}
	if (tail < g->n_nodes) {
		int32_t culprit = 0;
		for (int32_t i = 0; i < g->n_nodes; i++)
			if (pending[i]) {
				culprit = i;
				break;
			}
		rc = gc_error_set(err, GC_EINVAL,
				  "%s: the graph has a cycle through %s (%d nodes can never run)",
				  g->origin, gc_node_label(g, culprit, lb, sizeof lb),
				  g->n_nodes - tail);
	}
out:
	gc_free(pending);
	gc_free(users);
	gc_free(ustart);
	gc_free(ext.v);
	gc_free(ext.node);
	return rc;
}

int64_t gc_graph_opset_version(const gc_graph *g, const char *domain)
{
	return g ? gc_graph_opset(g, domain) : -1;
}
