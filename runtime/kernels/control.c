/*
 * Control flow: If, Loop, Scan and SequenceMap run their subgraphs, which
 * the compiler made into subprograms (node->sub) with sessions of their own
 * at run time (k->sub). A subprogram's inputs are bound to the node's
 * tensors without copying; its outputs are copied into the node's.
 *
 * Outputs keep a static shape (a place in the arena) when it is the same
 * for every run: an If whose branches agree, a value a loop carries whose
 * shape the body keeps, a Scan's outputs, a Loop's scan outputs when the
 * trip count is a constant and nothing can stop the loop early. Otherwise
 * the shape is only known at run time (GC_RANK_DYNAMIC) and the kernel
 * sets it (gc_kout_shape).
 */
#include "control.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../alloc.h"
#include "../fileio.h"
#include "../ops.h"
#include "../program-impl.h"
#include "../session-impl.h"
#include "../value.h"

bool gc_op_is_control(int op)
{
	switch (op) {
#define GC_X_(name, ...)                                                       \
	case GC_OP_##name:                                                     \
		return true;
		GC_OPS_CONTROL(GC_X_)
#undef GC_X_
	default:
		return false;
	}
}

bool gc_op_takes_dynamic(int op)
{
	switch (op) {
#define GC_X_(name, ...)                                                       \
	case GC_OP_##name:                                                     \
		return true;
		GC_OPS_SEQUENCE(GC_X_)
#undef GC_X_
	default:
		return gc_op_is_control(op);
	}
}

bool gc_op_takes_values(int op)
{
	return op == GC_OP_Identity || gc_op_takes_dynamic(op);
}

int32_t gc_control_sub_names(const gc_node *n, const char *const **names)
{
	static const char *const branches[] = { "then_branch", "else_branch" };
	static const char *const body[] = { "body" };
	*names = n->op == GC_OP_If ? branches : body;
	return n->op == GC_OP_If ? 2 : 1;
}

/* ---- shared helpers ---------------------------------------------------- */

static const gc_ptensor *sub_out(const gc_program *p, int32_t j)
{
	return &p->tensors[p->outputs[j]];
}

static bool is_dyn(const gc_ptensor *t)
{
	return t->storage == GC_STORAGE_DYNAMIC;
}

/* A compile-time type for an output: static as t, or dynamic. */
static void set_out(gc_tensor *o, const gc_tensor *t, bool dynamic)
{
	if (gc_dtype_is_value(t->dtype)) {
		gc_set_shape(o, t->dtype, 0, NULL);
		return;
	}
	if (dynamic)
		gc_set_shape(o, t->dtype, GC_RANK_DYNAMIC, NULL);
	else
		gc_set_shape(o, t->dtype, t->rank, t->dims);
}

static int check_scalar(gc_kctx *k, const gc_tensor *t, gc_dtype dt, const char *what)
{
	if (!t)
		return 0;
	if (t->dtype != dt)
		return gc_kerr(k, GC_EINVAL, "input '%s' must be %s, not %s", what, gc_dtype_name(dt),
			       gc_dtype_name(t->dtype));
	if (t->rank >= 0 && gc_tensor_numel(t) != 1)
		return gc_kerr(k, GC_EINVAL, "input '%s' must hold one value, it has %" PRId64, what,
			       gc_tensor_numel(t));
	return 0;
}

int gc_kout_copy(gc_kctx *k, int j, gc_tensor *out, const gc_tensor *src, const char *what)
{
	const gc_node *n = k->node;
	if (!out)
		return 0;
	if (gc_dtype_is_optional(src->dtype) && !gc_dtype_is_optional(out->dtype) && src->data) {
		/* an optional where its value is expected: the value, if it has one */
		const gc_optional *o = src->data;
		if (!o->has_value)
			return gc_kerr(k, GC_EINVAL, "%s is an empty optional; output %d needs a %s",
				       what, j, gc_dtype_name(out->dtype));
		return gc_kout_copy(k, j, out, &o->value, what);
	}
	if (gc_dtype_is_value(out->dtype) || gc_dtype_is_value(src->dtype)) {
		if (!gc_value_type_fits(out->dtype, src->dtype) || !src->data)
			return gc_kerr(k, GC_EINVAL, "%s is %s, but output %d is %s", what,
				       gc_dtype_name(src->dtype), j, gc_dtype_name(out->dtype));
		if (gc_value_assign(out, src, k->err))
			return gc_error_prefix(k->err, "node '%s' (%s), output %d", n->name, n->op_type,
					       j);
		return 0;
	}
	int64_t nb = gc_tensor_nbytes(src);
	if (gc_kout_dynamic(k, j)) {
		if (out->data == src->data && gc_same_shape(out, src) && out->dtype == src->dtype)
			return 0;
		if (gc_kout_shape(k, j, src->dtype, src->rank, src->dims))
			return k->err->code;
	} else if (src->dtype != out->dtype || !gc_same_shape(src, out)) {
		char a[160], b[160];
		return gc_kerr(k, GC_EINVAL, "%s is %s of shape %s, but output %d is %s of shape %s",
			       what, gc_dtype_name(src->dtype),
			       gc_shape_str(src->dims, src->rank, a, sizeof a), j,
			       gc_dtype_name(out->dtype), gc_shape_str(out->dims, out->rank, b, sizeof b));
	}
	if (nb > 0 && out->data != src->data)
		memmove(out->data, src->data, (size_t)nb);
	return 0;
}

/* Binds the enclosing tensors subprogram s reads (its inputs after
 * n_formal) to the node's inputs. */
static int bind_outer(gc_kctx *k, const gc_node *n, int32_t s, gc_tensor *const *in)
{
	const gc_program *sp = n->sub[s];
	gc_session *ss = k->sub[s];
	for (int32_t j = 0; j + sp->n_formal < sp->n_inputs; j++) {
		int32_t slot = sp->outer_slot[j];
		if (gc_session_bind_input(ss, sp->n_formal + j, in[slot], "enclosing tensor", k->err))
			return gc_error_prefix(k->err, "node '%s' (%s)", n->name, n->op_type);
	}
	return 0;
}

static int bind(gc_kctx *k, int32_t s, int32_t i, const gc_tensor *t, const char *what)
{
	if (gc_session_bind_input(k->sub[s], i, t, what, k->err))
		return gc_error_prefix(k->err, "node '%s' (%s)", k->node->name, k->node->op_type);
	return 0;
}

/*
 * The carried values: out[out0 + j] becomes a copy of body output
 * `first + j` (the compiler names every output of a control-flow node, so
 * there is always one). A body that hands one carried input on as another
 * output (a swap) would have the second copy read what the first wrote:
 * such an output goes through a copy of its own first.
 */
static int carry(gc_kctx *k, gc_session *body, int32_t first, int32_t n_carry,
		 gc_tensor *const *out, int32_t out0)
{
	for (int32_t j = 0; j < n_carry; j++) {
		const gc_tensor *src = gc_session_output(body, first + j);
		gc_tensor *dst = out[out0 + j];
		bool clash = false;
		for (int32_t i = j + 1; i < n_carry && !clash; i++)
			clash = out[out0 + i] && src->data == out[out0 + i]->data &&
				!gc_dtype_is_value(src->dtype);
		if (!clash) {
			if (gc_kout_copy(k, out0 + j, dst, src, "the body's output"))
				return k->err->code;
			continue;
		}
		int64_t nb = gc_tensor_nbytes(src);
		gc_tensor tmp = *src;
		tmp.data = gc_malloc(nb > 0 ? (size_t)nb : 1);
		if (!tmp.data)
			return gc_kerr(k, GC_ENOMEM, "out of memory");
		memcpy(tmp.data, src->data, (size_t)nb);
		/* later outputs read their source before this one is written */
		int rc = 0;
		for (int32_t i = j + 1; i < n_carry && !rc; i++)
			rc = gc_kout_copy(k, out0 + i, out[out0 + i],
					  gc_session_output(body, first + i), "the body's output");
		if (!rc)
			rc = gc_kout_copy(k, out0 + j, dst, &tmp, "the body's output");
		gc_free(tmp.data);
		return rc ? k->err->code : 0;
	}
	return 0;
}

/* ---- If ---------------------------------------------------------------- */

static int run_if(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (gc_tensor_numel(in[0]) != 1)
		return gc_kerr(k, GC_EINVAL, "input 'cond' holds %" PRId64 " values; it must hold one",
			       gc_tensor_numel(in[0]));
	bool cond = *(const uint8_t *)in[0]->data != 0;
	int32_t s = cond ? 0 : 1;
	const char *branch = cond ? "then_branch" : "else_branch";
	gc_session *ss = k->sub[s];
	if (bind_outer(k, n, s, in))
		return k->err->code;
	if (gc_session_run(ss, k->err))
		return gc_error_prefix(k->err, "node '%s' (If), %s", n->name, branch);
	for (int j = 0; j < n->n_out; j++)
		if (gc_kout_copy(k, j, out[j], gc_session_output(ss, j), branch))
			return k->err->code;
	return 0;
}

int gc_prepare_If(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (n->n_sub != 2)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: the branches were not compiled");
	if (check_scalar(k, in[0], GC_DTYPE_BOOL, "cond"))
		return gc_kok(k);
	const gc_program *t = n->sub[0], *e = n->sub[1];
	if (t->n_formal || e->n_formal)
		return gc_kerr(k, GC_EINVAL, "the branches take %d and %d inputs; they take none",
			       t->n_formal, e->n_formal);
	if (t->n_outputs != n->n_out || e->n_outputs != n->n_out)
		return gc_kerr(k, GC_EINVAL,
			       "then_branch has %d outputs and else_branch %d; the node has %d",
			       t->n_outputs, e->n_outputs, n->n_out);
	for (int j = 0; j < n->n_out; j++) {
		const gc_ptensor *a = sub_out(t, j), *b = sub_out(e, j);
		gc_dtype da = a->t.dtype, db = b->t.dtype;
		if (!gc_value_type_fits(da, db) ||
		    gc_dtype_is_value(da) != gc_dtype_is_value(db))
			return gc_kerr(k, GC_EINVAL,
				       "output %d is %s in then_branch ('%s') but %s in else_branch "
				       "('%s'): both branches must give the same types",
				       j, gc_dtype_name(da), a->name, gc_dtype_name(db), b->name);
		bool dynamic = is_dyn(a) || is_dyn(b) || !gc_same_shape(&a->t, &b->t);
		gc_tensor ty = a->t;
		if (ty.dtype == GC_DTYPE_UNDEFINED ||
		    (gc_dtype_is_value(ty.dtype) && !(ty.dtype & GC_DTYPE_ELEM_MASK)))
			ty.dtype = db;
		if (out[j])
			set_out(out[j], &ty, dynamic);
	}
	n->run = run_if;
	return 0;
}

/* ---- Loop -------------------------------------------------------------- */

typedef struct loop_state {
	int32_t n_carry, n_scan;
	bool static_scan; /* scan outputs have their final shape at compile time */
} loop_state;

static int32_t loop_carried(const gc_node *n)
{
	return n->n_explicit_in > 2 ? n->n_explicit_in - 2 : 0;
}

/* Whether the body's condition output can only be true: a constant true,
 * or the condition input handed on (directly or through Identity). */
static bool body_keeps_going(const gc_program *b)
{
	int32_t co = b->outputs[0], ci = b->n_inputs > 1 ? b->inputs[1] : -1;
	const gc_ptensor *t = &b->tensors[co];
	if (t->storage == GC_STORAGE_CONST)
		return t->t.dtype == GC_DTYPE_BOOL && gc_tensor_numel(&t->t) == 1 &&
		       *(const uint8_t *)t->t.data;
	for (int hops = 0; hops < 8; hops++) {
		if (co == ci)
			return true;
		int32_t from = -1;
		for (int32_t i = 0; i < b->n_nodes; i++) {
			const gc_node *m = &b->nodes[i];
			if (m->op == GC_OP_Identity && m->n_out == 1 && m->out[0] == co)
				from = m->in[0];
		}
		if (from < 0)
			return false;
		co = from;
	}
	return false;
}

static int run_loop(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const loop_state *st = n->state;
	gc_session *body = k->sub[0];
	const gc_program *bp = n->sub[0];
	int64_t max = INT64_MAX;
	for (int i = 0; i < 2 && i < n->n_explicit_in; i++)
		if (in[i] && gc_tensor_numel(in[i]) != 1)
			return gc_kerr(k, GC_EINVAL, "input '%s' holds %" PRId64 " values; it must hold one",
				       i ? "cond" : "M", gc_tensor_numel(in[i]));
	if (in[0]) {
		max = *(const int64_t *)in[0]->data;
		if (max < 0)
			return gc_kerr(k, GC_EINVAL, "the trip count M is %" PRId64 ", negative", max);
	}
	for (int32_t s = 0; st->static_scan && s < st->n_scan; s++)
		if (out[st->n_carry + s] && out[st->n_carry + s]->dims[0] != max)
			return gc_kerr(k, GC_EINVAL, "graphcc bug: the trip count %" PRId64
						     " is not the one compiled (%" PRId64 ")",
				       max, out[st->n_carry + s]->dims[0]);
	uint8_t cond = n->n_explicit_in > 1 && in[1] ? *(const uint8_t *)in[1]->data != 0 : 1;
	if (bind_outer(k, n, 0, in))
		return k->err->code;
	/* Scan outputs: rows of the body's output, one per iteration. */
	gc_tensor row_shape[GC_MAX_RANK * 4];
	int32_t n_scan = st->n_scan;
	int64_t it = 0;
	int64_t iter_v = 0;
	uint8_t cond_v = 0;
	gc_tensor iter_t = { .data = &iter_v, .dtype = GC_DTYPE_INT64 };
	gc_tensor cond_t = { .data = &cond_v, .dtype = GC_DTYPE_BOOL };
	iter_t.rank = bp->tensors[bp->inputs[0]].t.rank > 0 ? 1 : 0;
	iter_t.dims[0] = 1;
	cond_t.rank = bp->tensors[bp->inputs[1]].t.rank > 0 ? 1 : 0;
	cond_t.dims[0] = 1;
	for (; it < max && cond; it++) {
		iter_v = it;
		cond_v = cond;
		if (bind(k, 0, 0, &iter_t, "the iteration number") ||
		    bind(k, 0, 1, &cond_t, "the condition"))
			return k->err->code;
		/* The first iteration reads the initial values where they are. */
		for (int32_t j = 0; j < st->n_carry; j++)
			if (bind(k, 0, 2 + j, it ? out[j] : in[2 + j], "a loop-carried value"))
				return k->err->code;
		if (gc_session_run(body, k->err))
			return gc_error_prefix(k->err, "node '%s' (Loop), iteration %" PRId64, n->name,
					       it);
		const gc_tensor *co = gc_session_output(body, 0);
		if (co->dtype != GC_DTYPE_BOOL || gc_tensor_numel(co) != 1)
			return gc_kerr(k, GC_EINVAL,
				       "the body's condition output is %s of %" PRId64
				       " values; it must be one bool",
				       gc_dtype_name(co->dtype), gc_tensor_numel(co));
		uint8_t next = *(const uint8_t *)co->data != 0;
		if (carry(k, body, 1, st->n_carry, out, 0))
			return gc_error_prefix(k->err, "iteration %" PRId64, it);
		for (int32_t s = 0; s < n_scan; s++) {
			int32_t oj = st->n_carry + s;
			const gc_tensor *r = gc_session_output(body, 1 + st->n_carry + s);
			if (gc_dtype_is_value(r->dtype))
				return gc_kerr(k, GC_EINVAL, "scan output %d is a %s; scan outputs are "
							     "tensors",
					       s, gc_dtype_name(r->dtype));
			int64_t nb = gc_tensor_nbytes(r);
			if (it == 0) {
				row_shape[s] = *r;
			} else if (r->dtype != row_shape[s].dtype || !gc_same_shape(r, &row_shape[s])) {
				char a[160], b[160];
				return gc_kerr(k, GC_EINVAL,
					       "scan output %d is %s %s in iteration %" PRId64
					       " but was %s %s before: every iteration must give the "
					       "same shape",
					       s, gc_dtype_name(r->dtype),
					       gc_shape_str(r->dims, r->rank, a, sizeof a), it,
					       gc_dtype_name(row_shape[s].dtype),
					       gc_shape_str(row_shape[s].dims, row_shape[s].rank, b,
							    sizeof b));
			}
			if (!out[oj])
				continue;
			if (!st->static_scan) {
				if ((uint64_t)(it + 1) > gc_limit_bytes() / (uint64_t)(nb ? nb : 1))
					return gc_kerr(k, GC_ELIMIT,
						       "scan output %d grows past the size limit of "
						       "%" PRIu64 " bytes (" GC_LIMIT_SETTING ") after %" PRId64
						       " iterations",
						       s, gc_limit_bytes(), it + 1);
				if (gc_kout_reserve(k, oj, (uint64_t)(it + 1) * (uint64_t)nb))
					return k->err->code;
			}
			if (nb)
				memcpy((char *)out[oj]->data + it * nb, r->data, (size_t)nb);
		}
		cond = next;
	}
	if (it == 0) /* no iteration: the initial values are the results */
		for (int32_t j = 0; j < st->n_carry; j++)
			if (gc_kout_copy(k, j, out[j], in[2 + j], "the initial value"))
				return k->err->code;
	if (!st->static_scan)
		for (int32_t s = 0; s < n_scan; s++) {
			int32_t oj = st->n_carry + s;
			if (!out[oj])
				continue;
			int64_t dims[GC_MAX_RANK] = { it };
			gc_tensor rs = row_shape[s];
			if (it == 0) { /* no row: what the body says of it */
				rs = bp->tensors[bp->outputs[1 + st->n_carry + s]].t;
				if (rs.rank < 0 || is_dyn(&bp->tensors[bp->outputs[1 + st->n_carry + s]]))
					rs.rank = 0;
			}
			if (rs.rank + 1 > GC_MAX_RANK)
				return gc_kerr(k, GC_EUNSUPPORTED, "scan output %d would have rank %d",
					       s, rs.rank + 1);
			for (int d = 0; d < rs.rank; d++)
				dims[d + 1] = rs.dims[d];
			if (gc_kout_shape(k, oj, rs.dtype, rs.rank + 1, dims))
				return k->err->code;
		}
	return 0;
}

int gc_prepare_Loop(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (n->n_sub != 1)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: the body was not compiled");
	const gc_program *b = n->sub[0];
	int32_t nc = loop_carried(n);
	if (n->n_explicit_in < 2)
		return gc_kerr(k, GC_EINVAL, "Loop takes the inputs M and cond (each may be \"\")");
	if (check_scalar(k, in[0], GC_DTYPE_INT64, "M") || check_scalar(k, in[1], GC_DTYPE_BOOL, "cond"))
		return gc_kok(k);
	if (b->n_formal != 2 + nc)
		return gc_kerr(k, GC_EINVAL, "the body takes %d inputs; it must take %d", b->n_formal,
			       2 + nc);
	if (b->n_outputs < 1 + nc || n->n_out != b->n_outputs - 1)
		return gc_kerr(k, GC_EINVAL,
			       "the body has %d outputs and the node %d: the body gives the "
			       "condition, the %d values the loop carries, then its scan outputs, "
			       "and the node has one output for each but the condition",
			       b->n_outputs, n->n_out, nc);
	const gc_ptensor *co = sub_out(b, 0);
	if (!gc_value_type_fits(GC_DTYPE_BOOL, co->t.dtype) || gc_dtype_is_value(co->t.dtype))
		return gc_kerr(k, GC_EINVAL, "the body's first output ('%s') is %s; it must be the "
					     "bool condition",
			       co->name, gc_dtype_name(co->t.dtype));
	loop_state *st = gc_calloc(1, sizeof *st);
	if (!st)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = st;
	st->n_carry = nc;
	st->n_scan = n->n_out - nc;
	if (st->n_scan > GC_MAX_RANK * 4)
		return gc_kerr(k, GC_EUNSUPPORTED, "%d scan outputs; graphcc takes at most %d",
			       st->n_scan, GC_MAX_RANK * 4);
	for (int32_t j = 0; j < nc; j++) {
		const gc_ptensor *bi = &b->tensors[b->inputs[2 + j]], *bo = sub_out(b, 1 + j);
		if (!gc_value_type_fits(bi->t.dtype, bo->t.dtype))
			return gc_kerr(k, GC_EINVAL,
				       "body output %d ('%s') is %s, but the value it carries "
				       "(input %d, '%s') is %s",
				       1 + j, bo->name, gc_dtype_name(bo->t.dtype), 2 + j, bi->name,
				       gc_dtype_name(bi->t.dtype));
		bool dynamic = is_dyn(bi) || is_dyn(bo) || !gc_same_shape(&bi->t, &bo->t);
		gc_tensor ty = in[2 + j] ? *in[2 + j] : bi->t;
		if (ty.dtype == GC_DTYPE_UNDEFINED)
			ty.dtype = bo->t.dtype;
		/* An optional the body hands on as a plain value: after the first
		 * iteration, the loop carries the value. */
		if (gc_dtype_is_optional(ty.dtype) && !gc_dtype_is_optional(bo->t.dtype) &&
		    bo->t.dtype != GC_DTYPE_UNDEFINED)
			ty.dtype = bo->t.dtype;
		if (out[j])
			set_out(out[j], &ty, dynamic);
	}
	/* Scan outputs keep a static shape when the loop runs exactly M times. */
	bool fixed = in[0] && in[0]->data && (!in[1] || (in[1]->data && *(const uint8_t *)in[1]->data)) &&
		     body_keeps_going(b);
	int64_t m = fixed ? *(const int64_t *)in[0]->data : 0;
	if (fixed && m < 0)
		return gc_kerr(k, GC_EINVAL, "the trip count M is %" PRId64 ", negative", m);
	st->static_scan = fixed;
	for (int32_t s = 0; s < st->n_scan; s++) {
		const gc_ptensor *bo = sub_out(b, 1 + nc + s);
		st->static_scan &= !is_dyn(bo);
		if (gc_dtype_is_value(bo->t.dtype))
			return gc_kerr(k, GC_EINVAL, "scan output %d ('%s') is a %s; scan outputs are "
						     "tensors",
				       s, bo->name, gc_dtype_name(bo->t.dtype));
		if (!is_dyn(bo) && bo->t.rank + 1 > GC_MAX_RANK)
			return gc_kerr(k, GC_EUNSUPPORTED, "scan output %d would have rank %d", s,
				       bo->t.rank + 1);
	}
	for (int32_t s = 0; s < st->n_scan; s++) {
		const gc_ptensor *bo = sub_out(b, 1 + nc + s);
		gc_tensor *o = out[nc + s];
		if (!o)
			continue;
		if (!st->static_scan) {
			gc_set_shape(o, bo->t.dtype, GC_RANK_DYNAMIC, NULL);
			continue;
		}
		int64_t dims[GC_MAX_RANK] = { m };
		for (int d = 0; d < bo->t.rank; d++)
			dims[d + 1] = bo->t.dims[d];
		gc_set_shape(o, bo->t.dtype, bo->t.rank + 1, dims);
	}
	n->run = run_loop;
	return 0;
}

/* ---- Scan -------------------------------------------------------------- */

typedef struct scan_state {
	int32_t n_state, n_in, n_out; /* N, M, K */
	bool batched;		      /* opset 8: a batch axis 0 everywhere, sequence_lens */
	int32_t first;		      /* the first state input (1 with sequence_lens) */
	int64_t in_axis[GC_MAX_RANK * 4], out_axis[GC_MAX_RANK * 4];
	bool in_rev[GC_MAX_RANK * 4], out_rev[GC_MAX_RANK * 4];
} scan_state;

/* Reads Scan's attributes into st (n->n_explicit_in inputs). */
static int scan_attrs(gc_kctx *k, const gc_node *n, scan_state *st)
{
	memset(st, 0, sizeof *st);
	st->batched = n->opset < 9;
	st->first = st->batched ? 1 : 0;
	int64_t m = gc_attr_i(k, "num_scan_inputs", -1);
	if (gc_kok(k))
		return gc_kok(k);
	int32_t total = n->n_explicit_in - st->first;
	if (m < 1 || m > total)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'num_scan_inputs' is %" PRId64 "; it must be 1 to %d (the "
			       "inputs after the states)",
			       m, total);
	if (m > GC_MAX_RANK * 4)
		return gc_kerr(k, GC_EUNSUPPORTED, "%" PRId64 " scan inputs; at most %d", m,
			       GC_MAX_RANK * 4);
	st->n_in = (int32_t)m;
	st->n_state = total - st->n_in;
	const int64_t *v;
	int64_t c;
	if (st->batched) {
		c = gc_attr_ints(k, "directions", &v);
		if (c && c != m)
			return gc_kerr(k, GC_EINVAL, "attribute 'directions' has %" PRId64
						     " values for %" PRId64 " scan inputs",
				       c, m);
		for (int64_t i = 0; i < c; i++)
			st->in_rev[i] = v[i] != 0;
		return gc_kok(k);
	}
	c = gc_attr_ints(k, "scan_input_directions", &v);
	if (c && c != m)
		return gc_kerr(k, GC_EINVAL, "attribute 'scan_input_directions' has %" PRId64
					     " values for %" PRId64 " scan inputs",
			       c, m);
	for (int64_t i = 0; i < c; i++)
		st->in_rev[i] = v[i] != 0;
	c = gc_attr_ints(k, "scan_input_axes", &v);
	if (c && c != m)
		return gc_kerr(k, GC_EINVAL, "attribute 'scan_input_axes' has %" PRId64
					     " values for %" PRId64 " scan inputs",
			       c, m);
	for (int64_t i = 0; i < c; i++)
		st->in_axis[i] = v[i];
	return gc_kok(k);
}

/* The output attributes, once K is known. */
static int scan_out_attrs(gc_kctx *k, scan_state *st)
{
	const int64_t *v;
	int64_t c;
	if (st->n_out > GC_MAX_RANK * 4)
		return gc_kerr(k, GC_EUNSUPPORTED, "%d scan outputs; at most %d", st->n_out,
			       GC_MAX_RANK * 4);
	if (st->batched)
		return 0;
	c = gc_attr_ints(k, "scan_output_directions", &v);
	if (c && c != st->n_out)
		return gc_kerr(k, GC_EINVAL, "attribute 'scan_output_directions' has %" PRId64
					     " values for %d scan outputs",
			       c, st->n_out);
	for (int64_t i = 0; i < c; i++)
		st->out_rev[i] = v[i] != 0;
	c = gc_attr_ints(k, "scan_output_axes", &v);
	if (c && c != st->n_out)
		return gc_kerr(k, GC_EINVAL, "attribute 'scan_output_axes' has %" PRId64
					     " values for %d scan outputs",
			       c, st->n_out);
	for (int64_t i = 0; i < c; i++)
		st->out_axis[i] = v[i];
	return gc_kok(k);
}

/* The slice type of a tensor without axis a (and without the batch axis). */
static int drop_axis(gc_kctx *k, const gc_tensor *t, int64_t axis, bool batched, gc_tensor *o,
		     const char *what)
{
	*o = (gc_tensor){ .dtype = t->dtype };
	if (gc_dtype_is_value(t->dtype))
		return gc_kerr(k, GC_EINVAL, "%s is a %s; Scan takes tensors", what,
			       gc_dtype_name(t->dtype));
	if (t->rank == GC_RANK_DYNAMIC) {
		o->rank = GC_RANK_DYNAMIC;
		return 0;
	}
	int32_t lead = batched ? 1 : 0, a;
	if (t->rank < lead + 1)
		return gc_kerr(k, GC_EINVAL, "%s has rank %d; it needs a%s scan axis", what, t->rank,
			       batched ? " batch axis and a" : "");
	if (batched)
		a = 1;
	else if (gc_axis(k, axis, t->rank, &a))
		return gc_kok(k);
	for (int i = lead; i < t->rank; i++)
		if (i != a)
			o->dims[o->rank++] = t->dims[i];
	return 0;
}

int gc_control_formal(gc_kctx *k, const gc_node *n, gc_tensor *const *in, int32_t s,
		      int32_t n_formal, gc_tensor *formal)
{
	(void)s;
	switch (n->op) {
	case GC_OP_If:
		if (n_formal)
			return gc_kerr(k, GC_EINVAL, "%s takes no inputs, it has %d",
				       s ? "else_branch" : "then_branch", n_formal);
		return 0;
	case GC_OP_Loop: {
		int32_t nc = loop_carried(n);
		if (n_formal != 2 + nc)
			return gc_kerr(k, GC_EINVAL,
				       "the body has %d inputs; it must take the iteration number, "
				       "the condition and the %d values the loop carries",
				       n_formal, nc);
		formal[0] = (gc_tensor){ .dtype = GC_DTYPE_INT64 };
		formal[1] = (gc_tensor){ .dtype = GC_DTYPE_BOOL };
		for (int32_t j = 0; j < nc; j++) {
			if (!in[2 + j])
				return gc_kerr(k, GC_EINVAL, "input %d (a value the loop carries) is "
							     "empty",
					       2 + j);
			formal[2 + j] = *in[2 + j];
			formal[2 + j].data = NULL;
		}
		return 0;
	}
	case GC_OP_Scan: {
		scan_state st;
		if (scan_attrs(k, n, &st))
			return gc_kok(k);
		if (n_formal != st.n_state + st.n_in)
			return gc_kerr(k, GC_EINVAL,
				       "the body has %d inputs; it must take the %d states and the %d "
				       "scan slices",
				       n_formal, st.n_state, st.n_in);
		for (int32_t j = 0; j < st.n_state + st.n_in; j++) {
			const gc_tensor *t = in[st.first + j];
			char what[64];
			snprintf(what, sizeof what, "input %d", st.first + j);
			if (!t)
				return gc_kerr(k, GC_EINVAL, "%s is empty", what);
			if (j < st.n_state && !st.batched) {
				formal[j] = *t;
				formal[j].data = NULL;
				if (gc_dtype_is_value(t->dtype))
					return gc_kerr(k, GC_EINVAL, "%s is a %s; Scan takes tensors",
						       what, gc_dtype_name(t->dtype));
			} else if (j < st.n_state) { /* batched state: without axis 0 */
				if (t->rank == GC_RANK_DYNAMIC)
					return gc_kerr(k, GC_EUNSUPPORTED,
						       "%s has a shape only known at run time; Scan-8 "
						       "needs it when compiling",
						       what);
				if (t->rank < 1)
					return gc_kerr(k, GC_EINVAL, "%s has no batch axis", what);
				formal[j] = (gc_tensor){ .dtype = t->dtype, .rank = t->rank - 1 };
				for (int d = 1; d < t->rank; d++)
					formal[j].dims[d - 1] = t->dims[d];
			} else if (drop_axis(k, t, st.in_axis[j - st.n_state], st.batched, &formal[j],
					     what)) {
				return gc_kok(k);
			}
		}
		return 0;
	}
	case GC_OP_SequenceMap:
		if (n_formal != n->n_explicit_in)
			return gc_kerr(k, GC_EINVAL, "the body has %d inputs; the node gives it %d",
				       n_formal, n->n_explicit_in);
		if (!in[0] || !gc_dtype_is_sequence(in[0]->dtype))
			return gc_kerr(k, GC_EINVAL, "input 0 must be a sequence, it is %s",
				       in[0] ? gc_dtype_name(in[0]->dtype) : "empty");
		for (int32_t j = 0; j < n_formal; j++) {
			if (!in[j])
				return gc_kerr(k, GC_EINVAL, "input %d is empty", j);
			if (gc_dtype_is_optional(in[j]->dtype))
				return gc_kerr(k, GC_EINVAL, "input %d is a %s; SequenceMap takes "
							     "sequences and tensors",
					       j, gc_dtype_name(in[j]->dtype));
			if (gc_dtype_is_sequence(in[j]->dtype)) {
				formal[j] = (gc_tensor){ .dtype = gc_dtype_inner(in[j]->dtype),
							 .rank = GC_RANK_DYNAMIC };
			} else {
				formal[j] = *in[j];
				formal[j].data = NULL;
			}
		}
		return 0;
	default:
		return gc_kerr(k, GC_EINVAL, "graphcc bug: %s has no subgraphs", n->op_type);
	}
}

int gc_control_refine(gc_kctx *k, const gc_node *n, int32_t s, const gc_program *sub,
		      gc_tensor *formal, bool *again)
{
	(void)s;
	*again = false;
	int32_t first_in, first_out, count;
	if (n->op == GC_OP_Loop) {
		first_in = 2;
		first_out = 1;
		count = loop_carried(n);
	} else if (n->op == GC_OP_Scan) {
		scan_state st;
		if (scan_attrs(k, n, &st))
			return gc_kok(k);
		if (st.batched)
			return 0; /* Scan-8's states keep their shape (checked by prepare) */
		first_in = 0;
		first_out = 0;
		count = st.n_state;
	} else {
		return 0;
	}
	if (sub->n_outputs < first_out + count)
		return gc_kerr(k, GC_EINVAL, "the body has %d outputs; it must give at least %d",
			       sub->n_outputs, first_out + count);
	for (int32_t j = 0; j < count; j++) {
		gc_tensor *f = &formal[first_in + j];
		const gc_ptensor *o = sub_out(sub, first_out + j);
		if (!gc_value_type_fits(f->dtype, o->t.dtype))
			return gc_kerr(k, GC_EINVAL,
				       "body output %d ('%s') is %s, but the value it carries (body "
				       "input %d) is %s",
				       first_out + j, o->name, gc_dtype_name(o->t.dtype), first_in + j,
				       gc_dtype_name(f->dtype));
		if (gc_dtype_is_value(f->dtype) || f->rank == GC_RANK_DYNAMIC)
			continue;
		if (is_dyn(o) || !gc_same_shape(f, &o->t)) {
			f->rank = GC_RANK_DYNAMIC;
			*again = true;
		}
	}
	return 0;
}

/* One slice of a scan input or output: where t's index idx along axis a
 * lies, as `outer` blocks of `inner` bytes, `stride` bytes apart. */
typedef struct slicer {
	int64_t outer, inner, stride;
} slicer;

static slicer slicer_of(const gc_tensor *t, int32_t a)
{
	slicer s = { 1, (int64_t)gc_dtype_size(t->dtype), 0 };
	for (int i = 0; i < a; i++)
		s.outer *= t->dims[i];
	for (int i = a + 1; i < t->rank; i++)
		s.inner *= t->dims[i];
	s.stride = s.inner * t->dims[a];
	return s;
}

static void slice_get(const slicer *s, const char *src, int64_t idx, char *dst)
{
	for (int64_t o = 0; o < s->outer; o++)
		memcpy(dst + o * s->inner, src + o * s->stride + idx * s->inner, (size_t)s->inner);
}

static void slice_put(const slicer *s, char *dst, int64_t idx, const char *src)
{
	for (int64_t o = 0; o < s->outer; o++)
		memcpy(dst + o * s->stride + idx * s->inner, src + o * s->inner, (size_t)s->inner);
}

/* Scan-9 and later (no batch axis): T iterations over the scan axis. */
static int run_scan9(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const scan_state *st = n->state;
	gc_session *body = k->sub[0];
	int32_t N = st->n_state, M = st->n_in, K = st->n_out;
	int64_t T = -1;
	int32_t ax[GC_MAX_RANK * 4];
	for (int32_t i = 0; i < M; i++) {
		const gc_tensor *x = in[N + i];
		if (gc_axis(k, st->in_axis[i], x->rank, &ax[i]))
			return gc_kok(k);
		if (T >= 0 && x->dims[ax[i]] != T)
			return gc_kerr(k, GC_EINVAL,
				       "scan input %d has %" PRId64 " steps along its axis, the first "
				       "one %" PRId64 ": they must agree",
				       i, x->dims[ax[i]], T);
		T = x->dims[ax[i]];
	}
	if (T == 0)
		for (int32_t j = 0; j < N; j++)
			if (gc_kout_copy(k, j, out[j], in[j], "the initial state"))
				return k->err->code;
	if (bind_outer(k, n, 0, in))
		return k->err->code;
	/* Slices along an axis other than 0 are gathered into scratch (or,
	 * for a shape only known now, into memory of this run). */
	char *gather = NULL;
	uint64_t need = 0;
	for (int32_t i = 0; i < M; i++)
		if (ax[i] > 0 && T > 0)
			need += (uint64_t)gc_tensor_nbytes(in[N + i]) / (uint64_t)T + 64;
	bool own = need > n->scratch_bytes;
	gather = own ? gc_malloc((size_t)need) : k->scratch;
	if (need && !gather)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	int rc = 0;
	gc_tensor row_shape[GC_MAX_RANK * 4];
	for (int64_t t = 0; t < T && !rc; t++) {
		for (int32_t j = 0; j < N && !rc; j++) /* the first reads the initial states */
			rc = bind(k, 0, j, t ? out[j] : in[j], "a state");
		char *g = gather;
		for (int32_t i = 0; i < M && !rc; i++) {
			const gc_tensor *x = in[N + i];
			int64_t idx = st->in_rev[i] ? T - 1 - t : t;
			slicer sl = slicer_of(x, ax[i]);
			gc_tensor v = { .dtype = x->dtype };
			for (int d = 0; d < x->rank; d++)
				if (d != ax[i])
					v.dims[v.rank++] = x->dims[d];
			if (sl.outer == 1) {
				v.data = (char *)x->data + idx * sl.inner;
			} else {
				slice_get(&sl, x->data, idx, g);
				v.data = g;
				g += (sl.outer * sl.inner + 63) & ~(int64_t)63;
			}
			rc = bind(k, 0, N + i, &v, "a scan slice");
		}
		if (rc)
			break;
		if (gc_session_run(body, k->err)) {
			rc = gc_error_prefix(k->err, "node '%s' (Scan), iteration %" PRId64, n->name, t);
			break;
		}
		if ((rc = carry(k, body, 0, N, out, 0)))
			break;
		for (int32_t s = 0; s < K && !rc; s++) {
			const gc_tensor *r = gc_session_output(body, N + s);
			gc_tensor *o = out[N + s];
			if (gc_dtype_is_value(r->dtype)) {
				rc = gc_kerr(k, GC_EINVAL, "scan output %d is a %s", s,
					     gc_dtype_name(r->dtype));
				break;
			}
			int32_t a;
			if (gc_axis(k, st->out_axis[s], r->rank + 1, &a)) {
				rc = gc_kok(k);
				break;
			}
			if (t == 0) {
				row_shape[s] = *r;
				if (o && gc_kout_dynamic(k, N + s)) {
					int64_t dims[GC_MAX_RANK];
					if (r->rank + 1 > GC_MAX_RANK) {
						rc = gc_kerr(k, GC_EUNSUPPORTED, "scan output %d would "
										 "have rank %d",
							     s, r->rank + 1);
						break;
					}
					for (int d = 0, e = 0; d <= r->rank; d++)
						dims[d] = d == a ? T : r->dims[e++];
					if ((rc = gc_kout_shape(k, N + s, r->dtype, r->rank + 1, dims)))
						break;
				}
			} else if (r->dtype != row_shape[s].dtype || !gc_same_shape(r, &row_shape[s])) {
				rc = gc_kerr(k, GC_EINVAL,
					     "scan output %d changes shape in iteration %" PRId64
					     ": every iteration must give the same",
					     s, t);
				break;
			}
			if (!o)
				continue;
			if (o->dtype != r->dtype || o->rank != r->rank + 1) {
				rc = gc_kerr(k, GC_EINVAL, "scan output %d is %s of rank %d, the node's "
							   "output %s of rank %d",
					     s, gc_dtype_name(r->dtype), r->rank,
					     gc_dtype_name(o->dtype), o->rank);
				break;
			}
			int64_t idx = st->out_rev[s] ? T - 1 - t : t;
			slicer sl = slicer_of(o, a);
			if (sl.outer * sl.inner != gc_tensor_nbytes(r)) {
				rc = gc_kerr(k, GC_EINVAL, "scan output %d does not fit the node's "
							   "output",
					     s);
				break;
			}
			slice_put(&sl, o->data, idx, r->data);
		}
	}
	if (own)
		gc_free(gather);
	if (rc)
		return k->err->code ? k->err->code : rc;
	if (T == 0) /* no iteration: empty scan outputs, as the body shapes them */
		for (int32_t s = 0; s < K; s++) {
			if (!out[N + s] || !gc_kout_dynamic(k, N + s))
				continue;
			const gc_program *bp = n->sub[0];
			gc_tensor rs = bp->tensors[bp->outputs[N + s]].t;
			if (rs.rank < 0)
				rs.rank = 0;
			int64_t dims[GC_MAX_RANK] = { 0 };
			for (int d = 0; d < rs.rank && d + 1 < GC_MAX_RANK; d++)
				dims[d + 1] = rs.dims[d] < 0 ? 0 : rs.dims[d];
			if (gc_kout_shape(k, N + s, rs.dtype, rs.rank + 1, dims))
				return k->err->code;
		}
	return 0;
}

/* Scan-8: a batch axis 0 on every input and output, scan axis 1, and an
 * optional sequence_lens per batch row (rows past it stay zero). */
static int run_scan8(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const scan_state *st = n->state;
	gc_session *body = k->sub[0];
	int32_t N = st->n_state, M = st->n_in, K = st->n_out, f = st->first;
	const gc_tensor *x0 = in[f + N];
	int64_t B = x0->dims[0], T = x0->dims[1];
	const gc_tensor *lens = in[0];
	for (int32_t j = 0; j < N; j++)
		if (gc_kout_copy(k, j, out[j], in[f + j], "the initial state"))
			return k->err->code;
	for (int32_t s = 0; s < K; s++)
		if (out[N + s])
			memset(out[N + s]->data, 0, (size_t)gc_tensor_nbytes(out[N + s]));
	if (bind_outer(k, n, 0, in))
		return k->err->code;
	for (int64_t b = 0; b < B; b++) {
		int64_t len = T;
		if (lens) {
			len = lens->dtype == GC_DTYPE_INT32 ? ((const int32_t *)lens->data)[b]
							    : ((const int64_t *)lens->data)[b];
			if (len < 0 || len > T)
				return gc_kerr(k, GC_EINVAL,
					       "sequence_lens[%" PRId64 "] is %" PRId64
					       "; it must be 0 to %" PRId64,
					       b, len, T);
		}
		for (int64_t t = 0; t < len; t++) {
			for (int32_t j = 0; j < N; j++) {
				gc_tensor v = *out[j];
				int64_t row = gc_tensor_nbytes(out[j]) / (B ? B : 1);
				v.rank--;
				memmove(v.dims, v.dims + 1, (size_t)v.rank * sizeof *v.dims);
				v.data = (char *)out[j]->data + b * row;
				if (bind(k, 0, j, &v, "a state"))
					return k->err->code;
			}
			for (int32_t i = 0; i < M; i++) {
				const gc_tensor *x = in[f + N + i];
				int64_t idx = st->in_rev[i] ? len - 1 - t : t;
				gc_tensor v = { .dtype = x->dtype, .rank = x->rank - 2 };
				for (int d = 2; d < x->rank; d++)
					v.dims[d - 2] = x->dims[d];
				int64_t slice = gc_tensor_nbytes(&v);
				v.data = (char *)x->data + (b * x->dims[1] + idx) * slice;
				if (bind(k, 0, N + i, &v, "a scan slice"))
					return k->err->code;
			}
			if (gc_session_run(body, k->err))
				return gc_error_prefix(k->err,
						       "node '%s' (Scan), batch %" PRId64
						       ", iteration %" PRId64,
						       n->name, b, t);
			for (int32_t j = 0; j < N; j++) {
				const gc_tensor *r = gc_session_output(body, j);
				int64_t row = gc_tensor_nbytes(out[j]) / (B ? B : 1);
				if (gc_tensor_nbytes(r) != row || r->dtype != out[j]->dtype)
					return gc_kerr(k, GC_EINVAL,
						       "the body's state output %d does not keep the "
						       "state's type and shape",
						       j);
				char *dst = (char *)out[j]->data + b * row;
				if (dst != r->data)
					memmove(dst, r->data, (size_t)row);
			}
			for (int32_t s = 0; s < K; s++) {
				const gc_tensor *r = gc_session_output(body, N + s);
				gc_tensor *o = out[N + s];
				if (!o)
					continue;
				int64_t slice = gc_tensor_nbytes(r);
				if (o->dims[1] != T || slice * B * T != gc_tensor_nbytes(o) ||
				    r->dtype != o->dtype)
					return gc_kerr(k, GC_EINVAL, "scan output %d does not fit the "
								     "node's output",
						       s);
				memcpy((char *)o->data + (b * T + t) * slice, r->data, (size_t)slice);
			}
		}
	}
	return 0;
}

int gc_prepare_Scan(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (n->n_sub != 1)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: the body was not compiled");
	const gc_program *b = n->sub[0];
	scan_state *st = gc_calloc(1, sizeof *st);
	if (!st)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = st;
	if (scan_attrs(k, n, st))
		return gc_kok(k);
	int32_t N = st->n_state, M = st->n_in, f = st->first;
	if (b->n_formal != N + M)
		return gc_kerr(k, GC_EINVAL, "the body takes %d inputs; it must take %d", b->n_formal,
			       N + M);
	if (b->n_outputs < N || n->n_out != b->n_outputs)
		return gc_kerr(k, GC_EINVAL,
			       "the body has %d outputs and the node %d: they must agree (the %d "
			       "states, then the scan outputs)",
			       b->n_outputs, n->n_out, N);
	st->n_out = n->n_out - N;
	if (scan_out_attrs(k, st))
		return gc_kok(k);
	if (st->batched && in[0] &&
	    (in[0]->dtype != GC_DTYPE_INT64 && in[0]->dtype != GC_DTYPE_INT32))
		return gc_kerr(k, GC_EINVAL, "input 'sequence_lens' must be int32 or int64, not %s",
			       gc_dtype_name(in[0]->dtype));
	/* The number of iterations, when the scan inputs' shapes are known. */
	int64_t T = -1, B = -1;
	bool known = true;
	for (int32_t i = 0; i < M; i++) {
		const gc_tensor *x = in[f + N + i];
		if (x->rank == GC_RANK_DYNAMIC) {
			known = false;
			continue;
		}
		int32_t a = 1;
		if (st->batched) {
			if (x->rank < 2)
				return gc_kerr(k, GC_EINVAL, "scan input %d has rank %d; Scan-8 needs a "
							     "batch and a scan axis",
					       i, x->rank);
			if (B >= 0 && x->dims[0] != B)
				return gc_kerr(k, GC_EINVAL, "the scan inputs' batch sizes differ");
			B = x->dims[0];
		} else if (gc_axis(k, st->in_axis[i], x->rank, &a)) {
			return gc_kok(k);
		}
		if (T >= 0 && x->dims[a] != T)
			return gc_kerr(k, GC_EINVAL,
				       "scan input %d has %" PRId64 " steps, another %" PRId64
				       ": they must agree",
				       i, x->dims[a], T);
		T = x->dims[a];
		if (!st->batched && a > 0 && T > 0)
			n->scratch_bytes += (uint64_t)gc_tensor_nbytes(x) / (uint64_t)T + 64;
	}
	if (st->batched && !known)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "a scan input's shape is only known at run time; Scan-8 needs it "
			       "when compiling");
	for (int32_t j = 0; j < N; j++) {
		const gc_ptensor *bi = &b->tensors[b->inputs[j]], *bo = sub_out(b, j);
		const gc_tensor *x = in[f + j];
		if (!gc_value_type_fits(bi->t.dtype, bo->t.dtype))
			return gc_kerr(k, GC_EINVAL,
				       "body output %d ('%s') is %s, but the state it replaces is %s",
				       j, bo->name, gc_dtype_name(bo->t.dtype),
				       gc_dtype_name(bi->t.dtype));
		bool dynamic = is_dyn(bi) || is_dyn(bo) || !gc_same_shape(&bi->t, &bo->t);
		if (st->batched && dynamic)
			return gc_kerr(k, GC_EINVAL,
				       "body output %d ('%s') does not keep the state's shape", j,
				       bo->name);
		if (out[j])
			set_out(out[j], x, dynamic);
	}
	for (int32_t s = 0; s < st->n_out; s++) {
		const gc_ptensor *bo = sub_out(b, N + s);
		gc_tensor *o = out[N + s];
		if (gc_dtype_is_value(bo->t.dtype))
			return gc_kerr(k, GC_EINVAL, "scan output %d ('%s') is a %s; scan outputs are "
						     "tensors",
				       s, bo->name, gc_dtype_name(bo->t.dtype));
		bool dynamic = !known || is_dyn(bo);
		if (st->batched && dynamic)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "scan output %d ('%s') has a shape only known at run time; "
				       "Scan-8 needs it when compiling",
				       s, bo->name);
		if (!dynamic && bo->t.rank + 1 > GC_MAX_RANK)
			return gc_kerr(k, GC_EUNSUPPORTED, "scan output %d would have rank %d", s,
				       bo->t.rank + 1);
		if (!o)
			continue;
		if (dynamic) {
			gc_set_shape(o, bo->t.dtype, GC_RANK_DYNAMIC, NULL);
			continue;
		}
		int64_t dims[GC_MAX_RANK];
		if (st->batched) {
			dims[0] = B;
			dims[1] = T;
			for (int d = 0; d < bo->t.rank && d + 2 < GC_MAX_RANK; d++)
				dims[d + 2] = bo->t.dims[d];
			if (bo->t.rank + 2 > GC_MAX_RANK)
				return gc_kerr(k, GC_EUNSUPPORTED, "scan output %d would have rank %d",
					       s, bo->t.rank + 2);
			gc_set_shape(o, bo->t.dtype, bo->t.rank + 2, dims);
			continue;
		}
		int32_t a;
		if (gc_axis(k, st->out_axis[s], bo->t.rank + 1, &a))
			return gc_kok(k);
		for (int d = 0, e = 0; d <= bo->t.rank; d++)
			dims[d] = d == a ? T : bo->t.dims[e++];
		gc_set_shape(o, bo->t.dtype, bo->t.rank + 1, dims);
	}
	n->run = st->batched ? run_scan8 : run_scan9;
	return 0;
}

/* ---- SequenceMap ------------------------------------------------------- */

static int run_sequence_map(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			    gc_tensor *const *out)
{
	gc_session *body = k->sub[0];
	int32_t n_in = n->n_explicit_in;
	const gc_sequence *s0 = in[0]->data;
	int32_t len = s0->n;
	for (int32_t j = 1; j < n_in; j++)
		if (gc_dtype_is_sequence(in[j]->dtype) && ((const gc_sequence *)in[j]->data)->n != len)
			return gc_kerr(k, GC_EINVAL,
				       "input %d holds %d tensors, input 0 holds %d: the sequences "
				       "must be as long",
				       j, ((const gc_sequence *)in[j]->data)->n, len);
	for (int j = 0; j < n->n_out; j++) {
		gc_seqbuf *o = out[j]->data;
		o->s.n = 0;
		o->s.elem_dtype = gc_dtype_inner(out[j]->dtype);
	}
	if (bind_outer(k, n, 0, in))
		return k->err->code;
	for (int32_t i = 0; i < len; i++) {
		for (int32_t j = 0; j < n_in; j++) {
			const gc_tensor *t = in[j];
			if (gc_dtype_is_sequence(t->dtype))
				t = &((const gc_sequence *)t->data)->items[i];
			if (bind(k, 0, j, t, gc_dtype_is_sequence(in[j]->dtype) ? "a sequence item"
										   : "an input"))
				return k->err->code;
		}
		if (gc_session_run(body, k->err))
			return gc_error_prefix(k->err, "node '%s' (SequenceMap), item %d", n->name,
					       (int)i);
		for (int j = 0; j < n->n_out; j++) {
			gc_seqbuf *o = out[j]->data;
			const gc_tensor *r = gc_session_output(body, j);
			if (gc_dtype_is_value(r->dtype))
				return gc_kerr(k, GC_EUNSUPPORTED, "body output %d is a %s; SequenceMap "
								   "makes sequences of tensors",
					       j, gc_dtype_name(r->dtype));
			if (o->s.elem_dtype == GC_DTYPE_UNDEFINED)
				o->s.elem_dtype = r->dtype;
			if (r->dtype != o->s.elem_dtype)
				return gc_kerr(k, GC_EINVAL, "body output %d is %s, the sequence holds %s",
					       j, gc_dtype_name(r->dtype), gc_dtype_name(o->s.elem_dtype));
			if (gc_seq_resize(o, i + 1, k->err) || gc_seq_set(o, i, r, k->err))
				return gc_error_prefix(k->err, "node '%s' (SequenceMap)", n->name);
		}
	}
	return 0;
}

int gc_prepare_SequenceMap(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)in;
	if (n->n_sub != 1)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: the body was not compiled");
	const gc_program *b = n->sub[0];
	if (b->n_formal != n->n_explicit_in)
		return gc_kerr(k, GC_EINVAL, "the body takes %d inputs; it must take %d", b->n_formal,
			       n->n_explicit_in);
	if (!in[0] || !gc_dtype_is_sequence(in[0]->dtype))
		return gc_kerr(k, GC_EINVAL, "input 0 must be a sequence");
	for (int32_t j = 0; j < n->n_explicit_in; j++)
		if (!in[j] || gc_dtype_is_optional(in[j]->dtype))
			return gc_kerr(k, GC_EINVAL, "input %d must be a sequence or a tensor", j);
	if (b->n_outputs != n->n_out)
		return gc_kerr(k, GC_EINVAL, "the body has %d outputs, the node %d: they must agree",
			       b->n_outputs, n->n_out);
	for (int j = 0; j < n->n_out; j++) {
		const gc_ptensor *bo = sub_out(b, j);
		if (gc_dtype_is_value(bo->t.dtype))
			return gc_kerr(k, GC_EUNSUPPORTED, "body output %d ('%s') is a %s; "
							   "SequenceMap makes sequences of tensors",
				       j, bo->name, gc_dtype_name(bo->t.dtype));
		if (out[j])
			gc_set_shape(out[j], (gc_dtype)(GC_DTYPE_SEQUENCE | bo->t.dtype), 0, NULL);
	}
	n->run = run_sequence_map;
	return 0;
}
