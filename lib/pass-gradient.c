/*
 * gradient: lowers each Gradient node (ai.onnx.preview.training) into the
 * reverse-mode backward graph of the forward graph it names, made of
 * ordinary built-in nodes, before anything is bound. graphcc has no autodiff
 * at run time; this pass is it.
 *
 *  - The forward graph: the nodes y depends on, not looking past the tensors
 *    xs and zs name. The Gradient's inputs are the values at which the
 *    gradient is taken; when one is not the tensor its name says, the part
 *    of the forward graph that reads that tensor is copied to read the input
 *    instead.
 *  - Shapes: broadcasting and MatMul need every forward tensor's shape, so
 *    a copy of the graph without the Gradient nodes (and what reads them) is
 *    compiled first, with the caller's options; its shapes fix the backward
 *    nodes' shapes. What cannot be compiled is refused with its message.
 *  - Backward: dy = ones like y. Going back through the nodes that depend on
 *    an x, each adds its inputs' gradients: a broadcast input gets the
 *    gradient summed over the broadcast axes (ReduceSum, keepdims) and
 *    reshaped to its own shape. zs, initializers and every other leaf are
 *    constants; so is a z inside the forward graph (nothing flows through
 *    it). An x that y does not depend on gets zeros.
 *
 * Rules: Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid, Tanh, Exp, Log,
 * Sqrt, MatMul (1-D operands and batch broadcasting included), Sum,
 * Reshape, Transpose, ReduceSum, ReduceMean. A node on the path without a
 * rule is refused, naming it and its op. The backward graph needs opset 9
 * or later of the default domain.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "graph-edit.h"
#include "pass-gradient-impl.h"

static bool is_gradient(const gc_irnode *n)
{
	return !strcmp(n->domain, GC_DOMAIN_TRAINING) && !strcmp(n->op_type, "Gradient");
}

int gc_grad_nomem(grad *c)
{
	return gc_error_set(c->err, GC_ENOMEM, "out of memory lowering %s", c->who);
}

/* ---- walking the graph ---- */

/*
 * The nodes `roots` depend on, not looking past values marked in stop, in
 * topological order (each node after its producers); seen (per node, zeroed
 * by the caller) marks them. Returns the count, or -1 on no memory.
 */
static int32_t ancestors(const gc_graph *g, const int32_t *roots, int32_t nroots, const bool *stop,
			 uint8_t *seen, int32_t *order)
{
	typedef struct frame {
		int32_t node, next;
	} frame;
	frame *st = gc_malloc(((size_t)g->n_nodes + 1) * sizeof *st);
	if (!st)
		return -1;
	int32_t n_order = 0;
	for (int32_t r = 0; r < nroots; r++) {
		int32_t v = roots[r];
		if (v < 0 || (stop && stop[v]) || g->values[v].producer < 0 ||
		    seen[g->values[v].producer])
			continue;
		int32_t top = 0;
		st[top++] = (frame){g->values[v].producer, 0};
		seen[st[0].node] = 1; /* 1: on the stack, 2: done */
		while (top) {
			frame *f = &st[top - 1];
			const gc_irnode *n = &g->nodes[f->node];
			if (f->next < n->n_in) {
				int32_t in = n->in[f->next++];
				if (in < 0 || (stop && stop[in]))
					continue;
				int32_t p = g->values[in].producer;
				if (p < 0 || seen[p])
					continue; /* graph inputs, constants; a cycle was refused
						     before */
				seen[p] = 1;
				st[top++] = (frame){p, 0};
				continue;
			}
			seen[f->node] = 2;
			order[n_order++] = f->node;
			top--;
		}
	}
	gc_free(st);
	return n_order;
}

/* ---- building the backward graph ---- */

int gc_grad_track(grad *c, int32_t v, const vshape *s)
{
	if (v >= c->cap) {
		int32_t cap = c->g->n_values + 64;
		vshape *ns = gc_realloc(c->shape, (size_t)cap * sizeof *ns);
		if (!ns)
			return gc_grad_nomem(c);
		memset(ns + c->cap, 0, (size_t)(cap - c->cap) * sizeof *ns);
		c->shape = ns;
		c->cap = cap;
	}
	if (s)
		c->shape[v] = *s;
	return 0;
}

/* "<prefix>/<what>.<n>", unused by any tensor; the caller frees it. */
char *gc_grad_fresh_name(grad *c, const char *what)
{
	size_t len = strlen(c->prefix) + strlen(what) + 32;
	char *name = gc_malloc(len);
	if (!name)
		return NULL;
	do
		snprintf(name, len, "%s/%s.%d", c->prefix, what, c->seq++);
	while (gc_graph_find(c->g, name) >= 0);
	return name;
}

/* A node of (domain, op) reading ins (-1: absent) and writing n_out new
 * tensors of shapes s (outs gets them); 0, or the error. */
int gc_grad_add_multi(grad *c, const char *domain, const char *op, int32_t n_in,
		      const int32_t *ins, int32_t n_attr, const gc_attr *attrs, int32_t n_out,
		      const vshape *s, int32_t *outs)
{
	const char *names[GC_GRAD_MAX_IO];
	char *fresh[GC_GRAD_MAX_IO] = {0};
	int rc = 0;
	if (n_in > GC_GRAD_MAX_IO || n_out > GC_GRAD_MAX_IO)
		return gc_error_set(c->err, GC_ELIMIT, "%s: a backward node of %s with %d inputs",
				    c->who, op, n_in);
	for (int32_t i = 0; i < n_in; i++)
		names[i] = ins[i] >= 0 ? c->g->values[ins[i]].name : "";
	for (int32_t j = 0; j < n_out && !rc; j++)
		if (!(fresh[j] = gc_grad_fresh_name(c, op)))
			rc = gc_grad_nomem(c);
	if (!rc)
		rc = gc_graph_add_node(c->g, fresh[0], domain, op, n_in, names, n_out,
				       (const char *const *)fresh, n_attr, attrs, c->err);
	for (int32_t j = 0; j < n_out && !rc; j++) {
		outs[j] = gc_graph_find(c->g, fresh[j]);
		rc = gc_grad_track(c, outs[j], &s[j]);
	}
	for (int32_t j = 0; j < n_out; j++)
		gc_free(fresh[j]);
	return rc;
}

/* A default-domain node reading ins and writing one new tensor of shape s
 * (or into `into` when >= 0); returns the tensor, or -1 with the error set. */
int32_t gc_grad_add_node_into(grad *c, const char *op, int32_t n_in, const int32_t *ins,
			     int32_t n_attr, const gc_attr *attrs, const vshape *s, int32_t into)
{
	if (into < 0) {
		int32_t v;
		return gc_grad_add_multi(c, "", op, n_in, ins, n_attr, attrs, 1, s, &v) ? -1 : v;
	}
	const char *names[GC_GRAD_MAX_IO];
	for (int32_t i = 0; i < n_in; i++)
		names[i] = c->g->values[ins[i]].name;
	const char *out = c->g->values[into].name;
	int rc = gc_graph_add_node(c->g, out, "", op, n_in, names, 1, &out, n_attr, attrs, c->err);
	int32_t v = rc ? -1 : gc_graph_find(c->g, out);
	if (v < 0 || gc_grad_track(c, v, s))
		return -1;
	return v;
}

int32_t gc_grad_add_node(grad *c, const char *op, int32_t n_in, const int32_t *ins, int32_t n_attr,
			const gc_attr *attrs, const vshape *s)
{
	return gc_grad_add_node_into(c, op, n_in, ins, n_attr, attrs, s, -1);
}

int32_t gc_grad_add_constant(grad *c, const char *what, const gc_tensor *t)
{
	char *name = gc_grad_fresh_name(c, what);
	if (!name) {
		gc_grad_nomem(c);
		return -1;
	}
	int rc = gc_graph_add_constant(c->g, name, t, c->err);
	int32_t v = rc ? -1 : gc_graph_find(c->g, name);
	gc_free(name);
	vshape s = {.dtype = t->dtype, .rank = t->rank};
	memcpy(s.dims, t->dims, sizeof s.dims);
	if (v < 0 || gc_grad_track(c, v, &s))
		return -1;
	return v;
}

/* A float or double constant of that shape, every element v. */
int32_t gc_grad_const_fill(grad *c, gc_dtype dt, int32_t rank, const int64_t *dims, double v)
{
	gc_tensor t = {.dtype = dt, .rank = rank};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	int64_t n = gc_tensor_numel(&t);
	t.data = gc_malloc((size_t)gc_tensor_nbytes(&t) + 8);
	if (!t.data) {
		gc_grad_nomem(c);
		return -1;
	}
	for (int64_t i = 0; i < n; i++)
		if (dt == GC_DTYPE_DOUBLE)
			((double *)t.data)[i] = v;
		else
			((float *)t.data)[i] = (float)v;
	int32_t r = gc_grad_add_constant(c, v == 0 ? "zeros" : v == 1 ? "ones" : "const", &t);
	gc_free(t.data);
	return r;
}

int32_t gc_grad_const_scalar(grad *c, gc_dtype dt, double v)
{
	return gc_grad_const_fill(c, dt, 0, NULL, v);
}

/* A 1-D int64 constant (shapes, axes). */
int32_t gc_grad_const_ints(grad *c, const char *what, int32_t n, const int64_t *v)
{
	int64_t none = 0;
	gc_tensor t = {
	    .dtype = GC_DTYPE_INT64, .rank = 1, .dims = {n}, .data = n ? (void *)v : &none};
	return gc_grad_add_constant(c, what, &t);
}

bool gc_grad_same_shape(const vshape *a, const vshape *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
}

/* NumPy broadcasting of two shapes (which the compile of the forward graph
 * has checked). */
void gc_grad_broadcast(const vshape *a, const vshape *b, vshape *o)
{
	o->dtype = a->dtype;
	o->rank = a->rank > b->rank ? a->rank : b->rank;
	for (int i = 0; i < o->rank; i++) {
		int ia = i - (o->rank - a->rank), ib = i - (o->rank - b->rank);
		int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
		o->dims[i] = da == 1 ? db : da;
	}
}

int32_t gc_grad_unary(grad *c, const char *op, int32_t a)
{
	vshape s = c->shape[a];
	return gc_grad_add_node(c, op, 1, &a, 0, NULL, &s);
}

int32_t gc_grad_binary(grad *c, const char *op, int32_t a, int32_t b)
{
	vshape s;
	gc_grad_broadcast(&c->shape[a], &c->shape[b], &s);
	int32_t ins[2] = {a, b};
	return gc_grad_add_node(c, op, 2, ins, 0, NULL, &s);
}

/*
 * (Helpers that take a vshape pointer copy it first: adding a node may move
 * c->shape, where the pointer often points.)
 */
int32_t gc_grad_reshape(grad *c, int32_t v, const vshape *shape)
{
	vshape s = *shape;
	if (gc_grad_same_shape(&c->shape[v], &s))
		return v;
	int32_t shp = gc_grad_const_ints(c, "shape", s.rank, s.dims);
	if (shp < 0)
		return -1;
	s.dtype = c->shape[v].dtype;
	int32_t ins[2] = {v, shp};
	return gc_grad_add_node(c, "Reshape", 2, ins, 0, NULL, &s);
}

/* ReduceSum with keepdims over `axes` (at least one). */
int32_t gc_grad_reduce_sum(grad *c, int32_t v, int32_t n_axes, const int64_t *axes)
{
	vshape s = c->shape[v];
	for (int32_t i = 0; i < n_axes; i++)
		s.dims[axes[i]] = 1;
	gc_attr at[2] = {{.name = "keepdims", .type = GC_ATTR_INT, .n = 1, .v.i = 1},
			 {.name = "axes", .type = GC_ATTR_INTS, .n = n_axes, .v.ints = axes}};
	if (c->opset >= 13) { /* axes became an input */
		int32_t ax = gc_grad_const_ints(c, "axes", n_axes, axes);
		if (ax < 0)
			return -1;
		int32_t ins[2] = {v, ax};
		return gc_grad_add_node(c, "ReduceSum", 2, ins, 1, at, &s);
	}
	return gc_grad_add_node(c, "ReduceSum", 1, &v, 2, at, &s);
}

/* The gradient g of a broadcast result, brought back to shape `to`: summed
 * over the axes broadcasting added or stretched, then reshaped. */
int32_t gc_grad_sum_to(grad *c, int32_t g, const vshape *shape)
{
	const vshape gs = c->shape[g], to = *shape;
	if (gc_grad_same_shape(&gs, &to))
		return g;
	int32_t lead = gs.rank - to.rank;
	if (lead < 0) {
		gc_error_set(c->err, GC_EINVAL,
			     "graphcc bug: %s: a gradient of rank %d for a tensor of rank %d",
			     c->who, gs.rank, to.rank);
		return -1;
	}
	int64_t axes[GC_MAX_RANK];
	int32_t n = 0;
	for (int32_t i = 0; i < gs.rank; i++)
		if (i < lead || (to.dims[i - lead] == 1 && gs.dims[i] != 1))
			axes[n++] = i;
	int32_t r = n ? gc_grad_reduce_sum(c, g, n, axes) : g;
	return r < 0 ? r : gc_grad_reshape(c, r, &to);
}

/* Swaps the last two axes (rank >= 2). */
int32_t gc_grad_transpose_last(grad *c, int32_t v)
{
	vshape s = c->shape[v];
	int64_t perm[GC_MAX_RANK];
	for (int32_t i = 0; i < s.rank; i++)
		perm[i] = i;
	perm[s.rank - 2] = s.rank - 1;
	perm[s.rank - 1] = s.rank - 2;
	int64_t t = s.dims[s.rank - 2];
	s.dims[s.rank - 2] = s.dims[s.rank - 1];
	s.dims[s.rank - 1] = t;
	gc_attr at = {.name = "perm", .type = GC_ATTR_INTS, .n = s.rank, .v.ints = perm};
	return gc_grad_add_node(c, "Transpose", 1, &v, 1, &at, &s);
}

/* MatMul of two operands of rank >= 2, with its NumPy output shape. */
int32_t gc_grad_matmul(grad *c, int32_t a, int32_t b)
{
	const vshape sa = c->shape[a], sb = c->shape[b];
	vshape ba = sa, bb = sb, s;
	ba.rank -= 2;
	bb.rank -= 2;
	gc_grad_broadcast(&ba, &bb, &s);
	s.dims[s.rank++] = sa.dims[sa.rank - 2];
	s.dims[s.rank++] = sb.dims[sb.rank - 1];
	int32_t ins[2] = {a, b};
	return gc_grad_add_node(c, "MatMul", 2, ins, 0, NULL, &s);
}

/* ---- the rules ---- */

/* Adds contribution d to the gradient of forward value v. */
int gc_grad_accumulate(grad *c, int32_t *gv, int32_t v, int32_t d)
{
	if (d < 0)
		return c->err->code ? c->err->code : gc_grad_nomem(c);
	if (gv[v] < 0) {
		gv[v] = d;
		return 0;
	}
	int32_t s = gc_grad_binary(c, "Add", gv[v], d);
	if (s < 0)
		return c->err->code;
	gv[v] = s;
	return 0;
}

/* The axes of a ReduceSum/ReduceMean node (attribute or constant input),
 * normalised and sorted into mask; false when they are not known. */
static bool reduce_axes(grad *c, int32_t node, const vshape *x, bool *mask)
{
	const gc_irnode *n = &c->g->nodes[node];
	const int64_t *ax = NULL;
	int64_t n_ax = 0;
	int64_t noop = 0;
	for (int i = 0; i < n->n_attr; i++) {
		if (!strcmp(n->attrs[i].name, "axes") && n->attrs[i].type == GC_ATTR_INTS) {
			ax = n->attrs[i].v.ints;
			n_ax = n->attrs[i].n;
		} else if (!strcmp(n->attrs[i].name, "noop_with_empty_axes") &&
			   n->attrs[i].type == GC_ATTR_INT) {
			noop = n->attrs[i].v.i;
		}
	}
	const gc_tensor *t = n->n_in > 1 && n->in[1] >= 0 ? c->g->values[n->in[1]].constant : NULL;
	if (n->n_in > 1 && n->in[1] >= 0) {
		if (!t || t->dtype != GC_DTYPE_INT64 || t->rank != 1)
			return false;
		ax = t->data;
		n_ax = t->dims[0];
	}
	for (int i = 0; i < x->rank; i++)
		mask[i] = n_ax == 0 && !noop;
	for (int64_t i = 0; i < n_ax; i++) {
		int64_t a = ax[i] < 0 ? ax[i] + x->rank : ax[i];
		if (a < 0 || a >= x->rank)
			return false;
		mask[a] = true;
	}
	return true;
}

int gc_grad_refuse(grad *c, int32_t node, const char *why)
{
	char lb[300];
	return gc_error_set(c->err, GC_EUNSUPPORTED, "%s: cannot differentiate %s%s", c->who,
			    gc_node_label(c->g, node, lb, sizeof lb), why);
}

/* Reshape's, ReduceSum's and ReduceMean's gradient: dz back to x's shape. */
static int32_t reduce_back(grad *c, int32_t node, int32_t dz, int32_t x, bool mean)
{
	const vshape xs = c->shape[x];
	bool mask[GC_MAX_RANK];
	if (!reduce_axes(c, node, &xs, mask)) {
		gc_grad_refuse(c, node, ": its axes are not a constant");
		return -1;
	}
	/* dz with the reduced axes kept as 1, then repeated along them */
	vshape kept = xs;
	int64_t count = 1;
	for (int i = 0; i < xs.rank; i++)
		if (mask[i]) {
			count *= xs.dims[i];
			kept.dims[i] = 1;
		}
	int32_t r = gc_grad_reshape(c, dz, &kept);
	int32_t shp = r < 0 ? -1 : gc_grad_const_ints(c, "shape", xs.rank, xs.dims);
	if (shp < 0)
		return -1;
	int32_t ins[2] = {r, shp};
	r = gc_grad_add_node(c, "Expand", 2, ins, 0, NULL, &xs);
	if (r >= 0 && mean && count != 1) {
		int32_t k = gc_grad_const_scalar(c, xs.dtype, count ? 1.0 / (double)count : 0.0);
		r = k < 0 ? -1 : gc_grad_binary(c, "Mul", r, k);
	}
	return r;
}

static int32_t matmul_back(grad *c, int32_t dz, int32_t a, int32_t b, bool want_a, bool want_b,
			   int32_t *da, int32_t *db)
{
	vshape sa = c->shape[a], sb = c->shape[b];
	/* 1-D operands as NumPy promotes them: a (k) as (1, k), b (k) as (k, 1) */
	vshape a2 = sa, b2 = sb;
	if (sa.rank == 1) {
		a2.rank = 2;
		a2.dims[0] = 1;
		a2.dims[1] = sa.dims[0];
	}
	if (sb.rank == 1) {
		b2.rank = 2;
		b2.dims[0] = sb.dims[0];
		b2.dims[1] = 1;
	}
	vshape z2, ba = a2, bb = b2;
	ba.rank -= 2;
	bb.rank -= 2;
	gc_grad_broadcast(&ba, &bb, &z2);
	z2.dtype = c->shape[dz].dtype;
	z2.dims[z2.rank++] = a2.dims[a2.rank - 2];
	z2.dims[z2.rank++] = b2.dims[b2.rank - 1];
	int32_t g = gc_grad_reshape(c, dz, &z2);
	if (g < 0)
		return -1;
	*da = *db = -1;
	if (want_a) { /* da = dz @ b^T, summed to a's shape */
		int32_t bv = gc_grad_reshape(c, b, &b2), bt = bv < 0 ? -1 : gc_grad_transpose_last(c, bv);
		int32_t m = bt < 0 ? -1 : gc_grad_matmul(c, g, bt);
		int32_t s = m < 0 ? -1 : gc_grad_sum_to(c, m, &a2);
		if ((*da = s < 0 ? -1 : gc_grad_reshape(c, s, &sa)) < 0)
			return -1;
	}
	if (want_b) { /* db = a^T @ dz, summed to b's shape */
		int32_t av = gc_grad_reshape(c, a, &a2), at = av < 0 ? -1 : gc_grad_transpose_last(c, av);
		int32_t m = at < 0 ? -1 : gc_grad_matmul(c, at, g);
		int32_t s = m < 0 ? -1 : gc_grad_sum_to(c, m, &b2);
		if ((*db = s < 0 ? -1 : gc_grad_reshape(c, s, &sb)) < 0)
			return -1;
	}
	return 0;
}

/*
 * Adds to gv the gradients node's inputs get from dz, the gradient of its
 * output: only for the inputs marked in `reached` (those that depend on an
 * x), each brought to the input's own shape.
 */
static int backprop(grad *c, int32_t node, const int32_t *dzs, const bool *reached, int32_t *gv)
{
	bool handled = false;
	int rc = gc_grad_rule_custom(c, node, dzs, reached, gv, &handled);
	if (!rc && !handled)
		rc = gc_grad_rule_nn(c, node, dzs, reached, gv, &handled);
	if (rc || handled)
		return rc;
	/* a copy: adding nodes may move the nodes array */
	const gc_irnode nd = c->g->nodes[node];
	int32_t dz = dzs[0];
	if (dz < 0)
		return 0;
	const char *op = nd.op_type;
	int32_t z = nd.out[0], a = nd.n_in > 0 ? nd.in[0] : -1, b = nd.n_in > 1 ? nd.in[1] : -1;
	bool ra = a >= 0 && reached[a], rb = b >= 0 && reached[b];
	gc_dtype dt = c->shape[z].dtype;
#define ACC(v, expr)                                                                               \
	do {                                                                                       \
		if ((rc = gc_grad_accumulate(c, gv, (v), (expr))))                                         \
			return rc;                                                                 \
	} while (0)
	if (!strcmp(op, "Add") || !strcmp(op, "Sub")) {
		if (ra)
			ACC(a, gc_grad_sum_to(c, dz, &c->shape[a]));
		if (rb) {
			int32_t d = gc_grad_sum_to(c, dz, &c->shape[b]);
			ACC(b, d < 0 || op[0] == 'A' ? d : gc_grad_unary(c, "Neg", d));
		}
	} else if (!strcmp(op, "Mul")) {
		if (ra) {
			int32_t m = gc_grad_binary(c, "Mul", dz, b);
			ACC(a, m < 0 ? m : gc_grad_sum_to(c, m, &c->shape[a]));
		}
		if (rb) {
			int32_t m = gc_grad_binary(c, "Mul", dz, a);
			ACC(b, m < 0 ? m : gc_grad_sum_to(c, m, &c->shape[b]));
		}
	} else if (!strcmp(op, "Div")) {
		if (ra) {
			int32_t m = gc_grad_binary(c, "Div", dz, b);
			ACC(a, m < 0 ? m : gc_grad_sum_to(c, m, &c->shape[a]));
		}
		if (rb) { /* d(a/b)/db = -z / b */
			int32_t m = gc_grad_binary(c, "Mul", dz, z);
			m = m < 0 ? m : gc_grad_binary(c, "Div", m, b);
			m = m < 0 ? m : gc_grad_sum_to(c, m, &c->shape[b]);
			ACC(b, m < 0 ? m : gc_grad_unary(c, "Neg", m));
		}
	} else if (!strcmp(op, "Neg")) {
		ACC(a, gc_grad_unary(c, "Neg", dz));
	} else if (!strcmp(op, "Identity")) {
		ACC(a, dz);
	} else if (!strcmp(op, "Relu")) { /* 0 at x = 0, as PyTorch */
		int32_t ins[2] = {dz, a}, d;
		vshape s = c->shape[a];
		if (dt != GC_DTYPE_FLOAT && dt != GC_DTYPE_DOUBLE)
			return gc_grad_refuse(c, node, ": not a float or double tensor");
		ACC(a, gc_grad_add_multi(c, GC_DOMAIN_GRAPHCC, "ReluGrad", 2, ins, 0, NULL, 1, &s, &d)
			   ? -1
			   : d);
	} else if (!strcmp(op, "Sigmoid") || !strcmp(op, "Tanh")) {
		/* sigmoid: z (1 - z); tanh: 1 - z^2 */
		int32_t one = gc_grad_const_scalar(c, dt, 1);
		int32_t d = one < 0	   ? -1
			    : op[0] == 'S' ? gc_grad_binary(c, "Sub", one, z)
					   : gc_grad_binary(c, "Mul", z, z);
		if (d >= 0)
			d = op[0] == 'S' ? gc_grad_binary(c, "Mul", z, d) : gc_grad_binary(c, "Sub", one, d);
		ACC(a, d < 0 ? d : gc_grad_binary(c, "Mul", dz, d));
	} else if (!strcmp(op, "Exp")) {
		ACC(a, gc_grad_binary(c, "Mul", dz, z));
	} else if (!strcmp(op, "Log")) {
		ACC(a, gc_grad_binary(c, "Div", dz, a));
	} else if (!strcmp(op, "Sqrt")) { /* dz / (2 z) */
		int32_t two = gc_grad_const_scalar(c, dt, 2);
		int32_t d = two < 0 ? -1 : gc_grad_binary(c, "Mul", two, z);
		ACC(a, d < 0 ? d : gc_grad_binary(c, "Div", dz, d));
	} else if (!strcmp(op, "Sum")) {
		for (int32_t i = 0; i < nd.n_in; i++)
			if (nd.in[i] >= 0 && reached[nd.in[i]])
				ACC(nd.in[i], gc_grad_sum_to(c, dz, &c->shape[nd.in[i]]));
	} else if (!strcmp(op, "MatMul")) {
		int32_t da, db;
		if (matmul_back(c, dz, a, b, ra, rb, &da, &db))
			return c->err->code;
		if (ra)
			ACC(a, da);
		if (rb)
			ACC(b, db);
	} else if (!strcmp(op, "Reshape")) {
		if (ra)
			ACC(a, gc_grad_reshape(c, dz, &c->shape[a]));
	} else if (!strcmp(op, "Transpose")) {
		vshape xs = c->shape[a];
		int64_t perm[GC_MAX_RANK], inv[GC_MAX_RANK];
		const gc_attr *pa = NULL;
		for (int i = 0; i < nd.n_attr && !pa; i++)
			if (!strcmp(nd.attrs[i].name, "perm"))
				pa = &nd.attrs[i];
		char why[220] = ": ";
		if (gc_transpose_perm(pa, xs.rank, perm, why + 2, sizeof why - 2))
			return gc_grad_refuse(c, node, why);
		for (int i = 0; i < xs.rank; i++)
			inv[perm[i]] = i;
		gc_attr at = {.name = "perm", .type = GC_ATTR_INTS, .n = xs.rank, .v.ints = inv};
		ACC(a, gc_grad_add_node(c, "Transpose", 1, &dz, 1, &at, &xs));
	} else if (!strcmp(op, "ReduceSum") || !strcmp(op, "ReduceMean")) {
		ACC(a, reduce_back(c, node, dz, a, op[6] == 'M'));
	} else {
		return gc_grad_refuse(c, node, "");
	}
#undef ACC
	return 0;
}

/* Whether backprop has a rule for node (default domain, one output). */
static bool has_rule(grad *c, const gc_irnode *n)
{
	if (!gc_domain_is_default(n->domain))
		return gc_grad_has_rule_custom(c, n);
	if (gc_grad_has_rule_nn(n))
		return true;
	static const char *const ops[] = {
	    "Add",  "Sub",     "Mul",	  "Div",       "Neg",	    "Identity",
	    "Relu", "Sigmoid", "Tanh",	  "Exp",       "Log",	    "Sqrt",
	    "Sum",  "MatMul",  "Reshape", "Transpose", "ReduceSum", "ReduceMean"};
	if (n->domain[0] || n->n_out != 1 || n->out[0] < 0)
		return false;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(n->op_type, ops[i]))
			return true;
	return false;
}

/* ---- one Gradient node ---- */

typedef struct gnode {
	int32_t node;
	int32_t nx, nz, n_out;
	int32_t *xs, *zs; /* the tensors the attributes name */
	int32_t y;
	int32_t *in, *out; /* the node's inputs and outputs (copies) */
} gnode;

static int read_names(grad *c, const gc_attr *a, const char *key, int32_t **ids, int32_t *n)
{
	*n = 0;
	*ids = NULL;
	if (!a)
		return 0;
	if (a->type != GC_ATTR_STRINGS)
		return gc_error_set(c->err, GC_EINVAL, "%s: attribute '%s' is %s; expected strings",
				    c->who, key, gc_attr_type_name(a->type));
	*ids = gc_malloc(((size_t)a->n + 1) * sizeof **ids);
	if (!*ids)
		return gc_grad_nomem(c);
	for (int64_t i = 0; i < a->n; i++) {
		int32_t v = gc_graph_find(c->g, a->v.strings[i]);
		if (v < 0)
			return gc_error_set(
			    c->err, GC_EINVAL,
			    "%s: attribute '%s' names '%s', which is no tensor of the "
			    "graph",
			    c->who, key, a->v.strings[i]);
		(*ids)[(*n)++] = v;
	}
	return 0;
}

static int read_gradient(grad *c, int32_t node, gnode *gn)
{
	const gc_irnode *n = &c->g->nodes[node];
	const gc_attr *axs = NULL, *ay = NULL, *azs = NULL;
	for (int i = 0; i < n->n_attr; i++) {
		const gc_attr *a = &n->attrs[i];
		if (!strcmp(a->name, "xs"))
			axs = a;
		else if (!strcmp(a->name, "y"))
			ay = a;
		else if (!strcmp(a->name, "zs"))
			azs = a;
		else
			return gc_error_set(c->err, GC_EINVAL,
					    "%s: unknown attribute '%s' (Gradient takes xs, y, zs)",
					    c->who, a->name);
	}
	if (!axs || !ay)
		return gc_error_set(c->err, GC_EINVAL, "%s: attribute '%s' is missing", c->who,
				    axs ? "y" : "xs");
	if (ay->type != GC_ATTR_STRING)
		return gc_error_set(c->err, GC_EINVAL, "%s: attribute 'y' is %s; expected a string",
				    c->who, gc_attr_type_name(ay->type));
	gn->node = node;
	int rc = read_names(c, axs, "xs", &gn->xs, &gn->nx);
	if (!rc)
		rc = read_names(c, azs, "zs", &gn->zs, &gn->nz);
	if (rc)
		return rc;
	if (!gn->nx)
		return gc_error_set(c->err, GC_EINVAL, "%s: attribute 'xs' names no tensor",
				    c->who);
	gn->y = gc_graph_find(c->g, ay->v.s);
	if (gn->y < 0)
		return gc_error_set(c->err, GC_EINVAL,
				    "%s: attribute 'y' names '%s', which is no tensor of the graph",
				    c->who, ay->v.s);
	if (n->n_in != gn->nx + gn->nz)
		return gc_error_set(
		    c->err, GC_EINVAL,
		    "%s has %d inputs; it needs one per name in xs and zs (%d + %d)", c->who,
		    n->n_in, gn->nx, gn->nz);
	if (n->n_out > gn->nx)
		return gc_error_set(c->err, GC_EINVAL,
				    "%s has %d outputs; it has one per name in xs (%d) at most",
				    c->who, n->n_out, gn->nx);
	for (int32_t i = 0; i < n->n_in; i++)
		if (n->in[i] < 0)
			return gc_error_set(c->err, GC_EINVAL, "%s leaves input %d empty", c->who,
					    i);
	for (int32_t i = 0; i < gn->nx; i++)
		for (int32_t j = 0; j < gn->nz; j++)
			if (gn->xs[i] == gn->zs[j])
				return gc_error_set(c->err, GC_EINVAL,
						    "%s: '%s' is in both xs and zs", c->who,
						    c->g->values[gn->xs[i]].name);
	gn->n_out = n->n_out;
	gn->in = gc_pool_memdup(c->g->pool, n->in, ((size_t)n->n_in + 1) * sizeof(int32_t));
	gn->out = gc_pool_memdup(c->g->pool, n->out, ((size_t)n->n_out + 1) * sizeof(int32_t));
	return gn->in && gn->out ? 0 : gc_grad_nomem(c);
}

/*
 * Where the Gradient's inputs are not the tensors xs and zs name, copies
 * the forward nodes that read those tensors (directly or not), reading the
 * inputs instead; *y becomes the copy's y.
 */
static int substitute(grad *c, const gnode *gn, int32_t *y)
{
	gc_graph *g = c->g;
	int32_t nv = g->n_values, nn = g->n_nodes;
	int32_t *map = gc_malloc(((size_t)nv + 1) * sizeof *map);
	bool *stop = gc_calloc((size_t)nv + 1, sizeof *stop);
	uint8_t *seen = gc_calloc((size_t)nn + 1, 1);
	int32_t *order = gc_malloc(((size_t)nn + 1) * sizeof *order);
	int rc = 0;
	if (!map || !stop || !seen || !order) {
		rc = gc_grad_nomem(c);
		goto out;
	}
	bool any = false;
	for (int32_t v = 0; v < nv; v++)
		map[v] = v;
	for (int32_t i = 0; i < gn->nx + gn->nz; i++) {
		int32_t named = i < gn->nx ? gn->xs[i] : gn->zs[i - gn->nx];
		stop[named] = true;
		if (gn->in[i] != named) {
			map[named] = gn->in[i];
			any = true;
		}
	}
	*y = map[gn->y];
	if (!any)
		goto out;
	int32_t n_order = ancestors(g, &gn->y, 1, stop, seen, order);
	if (n_order < 0) {
		rc = gc_grad_nomem(c);
		goto out;
	}
	for (int32_t k = 0; k < n_order && !rc; k++) {
		const gc_irnode nd = g->nodes[order[k]];
		bool dirty = false;
		for (int j = 0; j < nd.n_in; j++)
			dirty |= nd.in[j] >= 0 && map[nd.in[j]] != nd.in[j];
		if (!dirty)
			continue;
		const char **names = gc_calloc((size_t)(nd.n_in + nd.n_out) + 1, sizeof *names);
		char **fresh = gc_calloc((size_t)nd.n_out + 1, sizeof *fresh);
		if (!names || !fresh) {
			gc_free(names);
			gc_free(fresh);
			rc = gc_grad_nomem(c);
			break;
		}
		for (int j = 0; j < nd.n_in; j++)
			names[j] = nd.in[j] >= 0 ? g->values[map[nd.in[j]]].name : "";
		for (int j = 0; j < nd.n_out && !rc; j++) {
			names[nd.n_in + j] = "";
			if (nd.out[j] < 0)
				continue;
			if (!(fresh[j] = gc_grad_fresh_name(c, g->values[nd.out[j]].name)))
				rc = gc_grad_nomem(c);
			else
				names[nd.n_in + j] = fresh[j];
		}
		if (!rc)
			rc = gc_graph_add_node(g, fresh[0] ? fresh[0] : "", nd.domain, nd.op_type,
					       nd.n_in, names, nd.n_out, names + nd.n_in, nd.n_attr,
					       nd.attrs, c->err);
		for (int j = 0; j < nd.n_out && !rc; j++)
			if (nd.out[j] >= 0)
				map[nd.out[j]] = gc_graph_find(g, fresh[j]);
		for (int j = 0; j < nd.n_out; j++)
			gc_free(fresh[j]);
		gc_free(fresh);
		gc_free(names);
	}
	*y = map[gn->y];
out:
	gc_free(map);
	gc_free(stop);
	gc_free(seen);
	gc_free(order);
	return rc;
}

/*
 * The types and shapes of `want`: a copy of the graph without its Gradient
 * nodes (and whatever reads them), compiled with the caller's options.
 */
static int probe_shapes(grad *c, const int32_t *want, int32_t n_want)
{
	gc_graph *g = c->g;
	gc_graph *p = gc_graph_clone_for_passes(g, c->err);
	int32_t *order = gc_calloc((size_t)g->n_nodes + 1, sizeof *order);
	bool *tainted = gc_calloc((size_t)g->n_values + 1, sizeof *tainted);
	gc_program *prog = NULL;
	int rc = 0;
	if (!p || !order || !tainted) {
		rc = c->err->code ? c->err->code : gc_grad_nomem(c);
		goto out;
	}
	if ((rc = gc_graph_check(p, order, c->err)))
		goto out;
	gc_edit e;
	if ((rc = gc_edit_begin(&e, p, c->err)))
		goto out;
	for (int32_t k = 0; k < p->n_nodes; k++) {
		const gc_irnode *n = &p->nodes[order[k]];
		bool t = is_gradient(n);
		for (int j = 0; j < n->n_in && !t; j++)
			t = n->in[j] >= 0 && tainted[n->in[j]];
		if (!t)
			continue;
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0)
				tainted[n->out[j]] = true;
		gc_edit_remove_node(&e, order[k]);
	}
	gc_edit_finish(&e);
	for (int32_t i = 0; i < p->n_outputs; i++)
		p->values[p->outputs[i]].is_output = false;
	p->n_outputs = 0;
	p->n_states = 0; /* (its outputs are not this probe's) */
	for (int32_t i = 0; i < n_want && !rc; i++)
		if (!p->values[want[i]].is_output)
			rc = gc_graph_add_output(p, p->values[want[i]].name, c->err);
	if (rc)
		goto out;
	gc_compile_options po = {0};
	if (c->opt)
		po = *c->opt;
	po.no_optimize = 1;
	po.pass_report = NULL;
	po.pass_user = NULL;
	if ((rc = gc_compile(p, &po, &prog, c->err))) {
		gc_error_prefix(c->err, "%s: compiling its forward graph for the shapes", c->who);
		goto out;
	}
	for (int i = 0; i < gc_program_num_outputs(prog); i++) {
		const char *name;
		const gc_tensor *t = gc_program_output(prog, i, &name);
		int32_t v = gc_graph_find(g, name);
		vshape s = {.dtype = t->dtype, .rank = t->rank};
		memcpy(s.dims, t->dims, sizeof s.dims);
		if (v >= 0 && (rc = gc_grad_track(c, v, &s)))
			goto out;
	}
out:
	gc_program_free(prog);
	gc_graph_free(p);
	gc_free(order);
	gc_free(tainted);
	return rc;
}

/* The backward nodes get fixed shapes: refuses tensor v (of forward node
 * `node`, or an x when node < 0) when its shape is only known at run time. */
static int static_shape(grad *c, int32_t node, int32_t v)
{
	if (v < 0 || c->shape[v].rank != GC_RANK_DYNAMIC)
		return 0;
	char lb[300];
	return gc_error_set(c->err, GC_EUNSUPPORTED,
			    "%s: cannot differentiate %s%s'%s': its shape is only known at run time "
			    "(the backward graph needs every shape when it is compiled)",
			    c->who, node >= 0 ? gc_node_label(c->g, node, lb, sizeof lb) : "",
			    node >= 0 ? ": tensor " : "x ", c->g->values[v].name);
}

/* Builds the backward graph for gn, whose forward graph ends in y, and
 * writes its outputs. The Gradient node is gone by now. */
static int differentiate(grad *c, const gnode *gn, int32_t y, const int32_t *fwd, int32_t n_fwd)
{
	gc_graph *g = c->g;
	int32_t nv = g->n_values;
	bool *reached = gc_calloc((size_t)nv + 1, sizeof *reached);
	int32_t *gv = gc_malloc(((size_t)nv + 1) * sizeof *gv);
	int rc = 0;
	if (!reached || !gv) {
		rc = gc_grad_nomem(c);
		goto out;
	}
	for (int32_t v = 0; v < nv; v++)
		gv[v] = -1;
	for (int32_t i = 0; i < gn->nx; i++)
		reached[gn->in[i]] = true;
	/* the nodes that depend on an x, checked for a rule */
	for (int32_t k = 0; k < n_fwd; k++) {
		const gc_irnode *n = &g->nodes[fwd[k]];
		bool r = false;
		for (int j = 0; j < n->n_in; j++)
			r |= n->in[j] >= 0 && reached[n->in[j]];
		if (!r)
			continue;
		if (!has_rule(c, n)) {
			rc = gc_grad_refuse(c, fwd[k],
					    gc_domain_is_default(n->domain)
						? ""
						: ": its operation declares no gradient: in its "
						  "manifest (or no loaded package serves it)");
			goto out;
		}
		for (int j = 0; j < n->n_in + n->n_out && !rc; j++)
			rc = static_shape(c, fwd[k], j < n->n_in ? n->in[j] : n->out[j - n->n_in]);
		if (rc)
			goto out;
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0)
				reached[n->out[j]] = true;
	}
	const vshape ys = c->shape[y];
	if (reached[y]) {
		if (ys.dtype != GC_DTYPE_FLOAT && ys.dtype != GC_DTYPE_DOUBLE) {
			rc = gc_error_set(c->err, GC_EUNSUPPORTED,
					  "%s: y '%s' is %s; only float and double tensors are "
					  "differentiated",
					  c->who, g->values[y].name, gc_dtype_name(ys.dtype));
			goto out;
		}
		if ((gv[y] = gc_grad_const_fill(c, ys.dtype, ys.rank, ys.dims, 1.0)) < 0) {
			rc = c->err->code;
			goto out;
		}
	}
	for (int32_t k = n_fwd - 1; k >= 0 && !rc; k--) {
		const gc_irnode *n = &g->nodes[fwd[k]];
		int32_t dzs[GC_GRAD_MAX_IO];
		bool any = false;
		if (n->n_out > GC_GRAD_MAX_IO) {
			rc = gc_grad_refuse(c, fwd[k], ": too many outputs");
			break;
		}
		for (int j = 0; j < n->n_out; j++) {
			int32_t o = n->out[j];
			dzs[j] = o >= 0 && reached[o] ? gv[o] : -1;
			any |= dzs[j] >= 0;
		}
		if (any)
			rc = backprop(c, fwd[k], dzs, reached, gv);
	}
	/* the outputs: each x's gradient, zeros when y does not depend on it */
	for (int32_t i = 0; i < gn->n_out && !rc; i++) {
		int32_t o = gn->out[i], x = gn->in[i];
		if (o < 0)
			continue;
		const vshape xs = c->shape[x];
		if (xs.dtype != GC_DTYPE_FLOAT && xs.dtype != GC_DTYPE_DOUBLE) {
			rc = gc_error_set(c->err, GC_EUNSUPPORTED,
					  "%s: x '%s' is %s; only float and double tensors are "
					  "differentiated",
					  c->who, g->values[x].name, gc_dtype_name(xs.dtype));
			break;
		}
		if ((rc = static_shape(c, -1, x)))
			break;
		int32_t src = gv[x] >= 0 ? gv[x] : gc_grad_const_fill(c, xs.dtype, xs.rank, xs.dims, 0);
		if (src < 0 || gc_grad_add_node_into(c, "Identity", 1, &src, 0, NULL, &xs, o) < 0)
			rc = c->err->code ? c->err->code : gc_grad_nomem(c);
	}
out:
	gc_free(reached);
	gc_free(gv);
	return rc;
}

static int lower(grad *c, int32_t node)
{
	gc_graph *g = c->g;
	gnode gn = {0};
	int32_t *fwd = NULL, *want = NULL;
	uint8_t *seen = NULL;
	bool *stop = NULL;
	int rc = read_gradient(c, node, &gn);
	int32_t y = -1;
	if (!rc)
		rc = substitute(c, &gn, &y);
	if (rc)
		goto out;
	/* The forward graph from the inputs to y (nodes were added, so the
	 * Gradient node keeps its index: new nodes go to the end). */
	int32_t nn = g->n_nodes, nv = g->n_values;
	if ((rc = gc_grad_track(c, nv, NULL))) /* c->shape covers every value */
		goto out;
	fwd = gc_malloc(((size_t)nn + 1) * sizeof *fwd);
	want = gc_malloc(((size_t)nv + 1) * sizeof *want);
	seen = gc_calloc((size_t)nn + 1, 1);
	stop = gc_calloc((size_t)nv + 1, sizeof *stop);
	if (!fwd || !want || !seen || !stop) {
		rc = gc_grad_nomem(c);
		goto out;
	}
	for (int32_t i = 0; i < gn.nx + gn.nz; i++)
		stop[gn.in[i]] = true;
	int32_t n_fwd = ancestors(g, &y, 1, stop, seen, fwd);
	if (n_fwd < 0) {
		rc = gc_grad_nomem(c);
		goto out;
	}
	/* every tensor the forward graph touches, and the inputs */
	int32_t n_want = 0;
	memset(stop, 0, (size_t)nv * sizeof *stop); /* now: already wanted */
#define WANT(v)                                                                                    \
	do {                                                                                       \
		if ((v) >= 0 && !stop[v]) {                                                        \
			stop[v] = true;                                                            \
			want[n_want++] = (v);                                                      \
		}                                                                                  \
	} while (0)
	WANT(y);
	for (int32_t i = 0; i < gn.nx + gn.nz; i++)
		WANT(gn.in[i]);
	for (int32_t k = 0; k < n_fwd; k++) {
		const gc_irnode *n = &g->nodes[fwd[k]];
		for (int j = 0; j < n->n_in; j++)
			WANT(n->in[j]);
		for (int j = 0; j < n->n_out; j++)
			WANT(n->out[j]);
	}
#undef WANT
	if ((rc = probe_shapes(c, want, n_want)))
		goto out;
	/* Out with the Gradient node; its outputs get new producers. */
	gc_edit e;
	if ((rc = gc_edit_begin(&e, g, c->err)))
		goto out;
	gc_edit_remove_node(&e, node);
	gc_edit_finish(&e);
	/* the node indices after it moved down by one */
	for (int32_t k = 0; k < n_fwd; k++)
		if (fwd[k] > node)
			fwd[k]--;
	rc = differentiate(c, &gn, y, fwd, n_fwd);
out:
	gc_free(gn.xs);
	gc_free(gn.zs);
	gc_free(fwd);
	gc_free(want);
	gc_free(seen);
	gc_free(stop);
	return rc;
}

/*
 * The Gradient node to lower next: one whose forward graph (what y and its
 * inputs depend on) holds no other Gradient node; -1 when none is left.
 */
static int next_gradient(grad *c, int32_t *out)
{
	gc_graph *g = c->g;
	*out = -1;
	int32_t cand = -1, n_grad = 0;
	for (int32_t i = 0; i < g->n_nodes; i++)
		if (is_gradient(&g->nodes[i])) {
			n_grad++;
			if (cand < 0)
				cand = i;
		}
	if (cand < 0)
		return 0;
	uint8_t *seen = gc_calloc((size_t)g->n_nodes + 1, 1);
	int32_t *order = gc_malloc(((size_t)g->n_nodes + 1) * sizeof *order);
	int32_t *roots = gc_malloc(((size_t)g->n_values + 1) * sizeof *roots);
	int rc = 0;
	if (!seen || !order || !roots) {
		rc = gc_grad_nomem(c);
		goto out;
	}
	for (int32_t step = 0;; step++) {
		const gc_irnode *n = &g->nodes[cand];
		int32_t nr = 0;
		for (int j = 0; j < n->n_in; j++)
			roots[nr++] = n->in[j];
		for (int a = 0; a < n->n_attr; a++)
			if (!strcmp(n->attrs[a].name, "y") && n->attrs[a].type == GC_ATTR_STRING)
				roots[nr++] = gc_graph_find(g, n->attrs[a].v.s);
		memset(seen, 0, (size_t)g->n_nodes);
		int32_t k = ancestors(g, roots, nr, NULL, seen, order);
		if (k < 0) {
			rc = gc_grad_nomem(c);
			goto out;
		}
		int32_t dep = -1;
		for (int32_t i = 0; i < k && dep < 0; i++)
			if (is_gradient(&g->nodes[order[i]]))
				dep = order[i];
		if (dep < 0)
			break;
		if (dep == cand || step > n_grad) {
			char lb[300];
			rc = gc_error_set(c->err, GC_EINVAL,
					  "%s: its y depends on its own output (through Gradient "
					  "nodes that depend on each other)",
					  gc_node_label(g, cand, lb, sizeof lb));
			goto out;
		}
		cand = dep;
	}
	*out = cand;
out:
	gc_free(seen);
	gc_free(order);
	gc_free(roots);
	return rc;
}

int gc_pass_gradient(gc_pass_ctx *ctx)
{
	grad c = {.g = ctx->g, .opt = ctx->opt, .err = ctx->err};
	c.opset = gc_graph_opset(ctx->g, "");
	int rc = 0;
	for (;;) {
		int32_t node;
		if ((rc = next_gradient(&c, &node)) || node < 0)
			break;
		const gc_irnode *n = &c.g->nodes[node];
		char anon[32];
		snprintf(anon, sizeof anon, "Gradient#%d", node);
		c.prefix = gc_pool_strdup(c.g->pool, n->name[0] ? n->name : anon);
		if (!c.prefix) {
			rc = gc_grad_nomem(&c);
			break;
		}
		if (n->name[0])
			snprintf(c.who, sizeof c.who, "Gradient '%s'", n->name);
		else
			snprintf(c.who, sizeof c.who, "Gradient node #%d", node);
		if (c.opset < 9) {
			rc = gc_error_set(c.err, GC_EUNSUPPORTED,
					  "%s: its backward graph needs opset 9 or later of the "
					  "default domain; the model imports %" PRId64 "%s",
					  c.who, c.opset < 0 ? 0 : c.opset,
					  c.opset < 0 ? " (none)" : "");
			break;
		}
		if ((rc = lower(&c, node)))
			break;
		ctx->changed++;
	}
	gc_free(c.shape);
	return rc;
}
