/*
 * bind-qdq: custom nodes take quantized tensors through QDQ. An input of a
 * custom node read from a DequantizeLinear whose scale and zero point are
 * constant and per tensor, where the operation's manifest lists the
 * matching quantized type (qint8 for an int8 tensor, quint8 for uint8,
 * qint16, qint32) in that input's dtypes, reads the DequantizeLinear's
 * integer input instead; an output read only by QuantizeLinear nodes with
 * one constant per-tensor scale and zero point, where the manifest lists
 * the quantized type for it, writes the QuantizeLinear's output itself (the
 * QuantizeLinear nodes go). The node records each such edge (gc_irnode
 * .quant); binding hands the kernel DTQInt8 ... views with scale and offset
 * (bind-custom.c), and the program keeps them (runtime/custom.h). A
 * DequantizeLinear nothing else reads is left to dead-node removal.
 *
 * Per-axis (per-channel) parameters are not bound: the edge stays float
 * (the DequantizeLinear or QuantizeLinear runs), unless the manifest lists
 * only quantized types for it, which is refused here, naming the node, the
 * edge and the QDQ node. Blocked quantization (block_size) likewise.
 */
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "graph-edit.h"
#include "package-impl.h"

typedef struct qparams {
	int32_t dtype; /* CustomOpDataType */
	float scale;
	int32_t offset;
	int64_t n_scales; /* > 1: per axis */
	bool blocked;
} qparams;

static int32_t qtype_of(gc_dtype dt)
{
	switch (dt) {
	case GC_DTYPE_INT8:
		return DTQInt8;
	case GC_DTYPE_UINT8:
		return DTQUInt8;
	case GC_DTYPE_INT16:
		return DTQInt16;
	case GC_DTYPE_INT32:
		return DTQInt32;
	default:
		return DTCustomOpDataTypeCount;
	}
}

/* The element type of v when known before binding: a constant's, a
 * declared one, or what the QuantizeLinear producing it makes. */
static gc_dtype known_dtype(gc_edit *e, int32_t v)
{
	gc_dtype t = gc_edit_known_dtype(e, v);
	if (t != GC_DTYPE_UNDEFINED || v < 0)
		return t;
	int32_t p = e->g->values[v].producer;
	if (p < 0 || gc_edit_is_removed(e, p) || !gc_edit_is_op(e, p, "QuantizeLinear") ||
	    gc_edit_attr(e, p, "output_dtype"))
		return GC_DTYPE_UNDEFINED;
	const gc_irnode *q = &e->g->nodes[p];
	if (q->n_in > 2 && q->in[2] >= 0)
		return known_dtype(e, q->in[2]);
	return GC_DTYPE_UINT8;
}

/* The parameters of QDQ node i (scale input 1, zero point input 2) on an
 * integer tensor of type `data` (UNDEFINED: unknown): false when they are
 * not constant or not a type an edge can be bound as. */
static bool read_qparams(gc_edit *e, int32_t i, gc_dtype data, qparams *q)
{
	const gc_irnode *n = &e->g->nodes[i];
	memset(q, 0, sizeof *q);
	if (n->n_in < 2 || n->in[1] < 0)
		return false;
	const gc_attr *bs = gc_edit_attr(e, i, "block_size");
	q->blocked = bs && bs->type == GC_ATTR_INT && bs->v.i != 0;
	const gc_tensor *s = gc_edit_const(e, n->in[1]);
	const gc_tensor *z = n->n_in > 2 && n->in[2] >= 0 ? gc_edit_const(e, n->in[2]) : NULL;
	if (!s || s->dtype != GC_DTYPE_FLOAT || (n->n_in > 2 && n->in[2] >= 0 && !z))
		return false;
	q->n_scales = gc_tensor_numel(s);
	gc_dtype dt = z ? z->dtype : data;
	q->dtype = qtype_of(dt);
	if (q->dtype == DTCustomOpDataTypeCount || (z && data && z->dtype != data))
		return false;
	if (q->n_scales != 1 || q->blocked || (z && gc_tensor_numel(z) != 1))
		return true; /* per axis: the caller decides */
	q->scale = ((const float *)s->data)[0];
	q->offset = z ? (int32_t)gc_kv_load(z, 0) : 0; /* exact: a 32-bit integer */
	gc_custom_quant cq = { q->dtype, q->scale, q->offset };
	const char *why;
	return gc_custom_quant_valid(&cq, &why);
}

static bool per_tensor(const qparams *q)
{
	return q->n_scales == 1 && !q->blocked;
}

static const gc_io_spec *input_spec(const gc_op_spec *op, int32_t j)
{
	if (j < op->n_inputs)
		return &op->inputs[j];
	if (op->n_inputs && op->inputs[op->n_inputs - 1].variadic)
		return &op->inputs[op->n_inputs - 1];
	return NULL;
}

/* Refuses an edge that takes only quantized types but whose QDQ node has
 * per-axis or blocked parameters. */
static int refuse_per_axis(gc_pass_ctx *ctx, gc_edit *e, int32_t node, const char *kind,
			   const char *edge, int32_t qnode, const qparams *q)
{
	char lb[300], lq[300];
	gc_node_label(e->g, node, lb, sizeof lb);
	gc_node_label(e->g, qnode, lq, sizeof lq);
	return gc_error_set(ctx->err, GC_EUNSUPPORTED,
			    "%s: %s '%s' takes only quantized types, but %s has %s "
			    "parameters (%lld scales); graphcc binds per-tensor quantization only "
			    "(list a float type beside the quantized one to keep the float path)",
			    lb, kind, edge, lq, q->blocked ? "blocked" : "per-axis",
			    (long long)q->n_scales);
}

static gc_custom_quant *node_quant(gc_edit *e, int32_t node)
{
	gc_irnode *n = &e->g->nodes[node];
	if (n->quant)
		return n->quant;
	size_t k = (size_t)(n->n_in + n->n_out);
	n->quant = gc_pool_alloc(e->g->pool, (k + 1) * sizeof *n->quant);
	for (size_t i = 0; n->quant && i < k; i++)
		n->quant[i] = (gc_custom_quant){ DTCustomOpDataTypeCount, 1.0f, 0 };
	return n->quant;
}

/* Input j of custom node `node` (operation op): bound when it is read from
 * a DequantizeLinear with per-tensor parameters of a type the manifest
 * lists. 1 bound, 0 not, negative on error. */
static int bind_input(gc_pass_ctx *ctx, gc_edit *e, int32_t node, const gc_op_spec *op,
		      int32_t j)
{
	const gc_irnode *n = &e->g->nodes[node];
	const gc_io_spec *spec = input_spec(op, j);
	int32_t v = n->in[j];
	if (!spec || !spec->qtypes || v < 0)
		return 0;
	int32_t dq = e->g->values[v].producer;
	if (dq < 0 || gc_edit_is_removed(e, dq) || !gc_edit_is_op(e, dq, "DequantizeLinear"))
		return 0;
	int32_t x = e->g->nodes[dq].in[0];
	qparams q;
	if (x < 0 || !read_qparams(e, dq, known_dtype(e, x), &q) || !(spec->qtypes >> q.dtype & 1))
		return 0;
	if (!per_tensor(&q))
		return spec->dtypes == GC_IO_NO_PLAIN_DTYPES
			       ? refuse_per_axis(ctx, e, node, "input", spec->name, dq, &q)
			       : 0;
	gc_custom_quant *cq = node_quant(e, node);
	if (!cq || gc_edit_set_input(e, node, j, x))
		return gc_error_set(ctx->err, GC_ENOMEM, "out of memory in pass bind-qdq");
	cq[j] = (gc_custom_quant){ q.dtype, q.scale, q.offset };
	return 1;
}

/* The QuantizeLinear nodes reading v, when every reader of v is one that
 * reads it as its input 0 only; their count, or -1. */
static int32_t quantize_readers(gc_edit *e, int32_t v, int32_t *qs, int32_t max)
{
	int32_t k = 0;
	for (int32_t i = 0; i < e->g->n_nodes; i++) {
		if (gc_edit_is_removed(e, i))
			continue;
		const gc_irnode *n = &e->g->nodes[i];
		bool reads = false;
		for (int32_t j = 0; j < n->n_in; j++)
			if (n->in[j] == v) {
				if (j != 0 || !gc_edit_is_op(e, i, "QuantizeLinear") ||
				    gc_edit_attr(e, i, "output_dtype") || k == max)
					return -1;
				reads = true;
			}
		if (reads)
			qs[k++] = i;
	}
	return k == gc_edit_uses(e, v) ? k : -1;
}

/* Output j of custom node `node`: bound when only QuantizeLinear nodes
 * with one set of per-tensor parameters of a listed type read it. */
static int bind_output(gc_pass_ctx *ctx, gc_edit *e, int32_t node, const gc_op_spec *op,
		       int32_t j)
{
	enum { MAX_Q = 16 };
	const gc_irnode *n = &e->g->nodes[node];
	if (j >= op->n_outputs || !op->outputs[j].qtypes || n->out[j] < 0)
		return 0;
	const gc_io_spec *spec = &op->outputs[j];
	int32_t v = n->out[j], qs[MAX_Q];
	if (gc_edit_is_pinned(e, v) || gc_edit_uses(e, v) == 0)
		return 0;
	int32_t nq = quantize_readers(e, v, qs, MAX_Q);
	if (nq <= 0)
		return 0;
	qparams q0 = { 0 };
	int32_t main = -1;
	for (int32_t k = 0; k < nq; k++) {
		qparams q;
		int32_t w = e->g->nodes[qs[k]].out[0];
		if (!read_qparams(e, qs[k], GC_DTYPE_UNDEFINED, &q) || e->g->nodes[qs[k]].n_out != 1)
			return 0;
		if (q.n_scales <= 0 || !(spec->qtypes >> q.dtype & 1))
			return 0;
		if (!per_tensor(&q))
			return spec->dtypes == GC_IO_NO_PLAIN_DTYPES
				       ? refuse_per_axis(ctx, e, node, "output", spec->name, qs[k],
							 &q)
				       : 0;
		if (k && (q.dtype != q0.dtype || q.scale != q0.scale || q.offset != q0.offset))
			return 0;
		q0 = q;
		if (w >= 0 && gc_edit_is_pinned(e, w)) {
			if (main >= 0)
				return 0; /* two graph outputs cannot become one */
			main = k;
		}
	}
	if (main < 0)
		main = 0;
	gc_custom_quant *cq = node_quant(e, node);
	if (!cq)
		return gc_error_set(ctx->err, GC_ENOMEM, "out of memory in pass bind-qdq");
	int32_t w0 = e->g->nodes[qs[main]].out[0];
	for (int32_t k = 0; k < nq; k++) {
		int32_t w = e->g->nodes[qs[k]].out[0];
		gc_edit_remove_node(e, qs[k]);
		if (k != main && w >= 0)
			gc_edit_replace_uses(e, w, w0);
	}
	gc_edit_set_output(e, node, j, w0);
	cq[e->g->nodes[node].n_in + j] = (gc_custom_quant){ q0.dtype, q0.scale, q0.offset };
	return 1;
}

int gc_pass_bind_qdq(gc_pass_ctx *ctx)
{
	const gc_registry *reg = ctx->opt ? ctx->opt->registry : NULL;
	if (!reg)
		return 0;
	gc_edit e;
	int rc = gc_edit_begin(&e, ctx->g, ctx->err);
	for (int32_t i = 0; !rc && i < ctx->g->n_nodes; i++) {
		const gc_irnode *n = &ctx->g->nodes[i];
		if (gc_edit_is_removed(&e, i) || !n->domain[0] || gc_op_is_builtin(n->domain, n->op_type))
			continue;
		const gc_op_spec *op = gc_registry_find(reg, n->domain, n->op_type,
							gc_graph_opset(ctx->g, n->domain));
		if (!op)
			continue;
		for (int32_t j = 0; !rc && j < n->n_in; j++) {
			int r = bind_input(ctx, &e, i, op, j);
			rc = r < 0 ? r : 0;
			ctx->changed += r > 0;
		}
		for (int32_t j = 0; !rc && j < n->n_out; j++) {
			int r = bind_output(ctx, &e, i, op, j);
			rc = r < 0 ? r : 0;
			ctx->changed += r > 0;
		}
	}
	gc_edit_finish(&e);
	return rc;
}
