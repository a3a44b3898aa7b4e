/*
 * Writing a graph as an ONNX model (gc_onnx_save), with the protobuf-c code
 * generated from ONNX's own onnx.proto. What the importer reads, this
 * writes: opset imports, inputs with their types and (symbolic) shapes,
 * initializers as raw data, nodes in topological order with their
 * attributes, outputs (typed when known). Subgraph attributes are refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../runtime/build.h"
#include "graph-impl.h"
#include "onnx-tensor.h"
#include "onnx.pb-c.h"

typedef struct wr {
	gc_pool *pool;
	const gc_graph *g;
	gc_error *err;
} wr;

#define NEW(w, T) ((T *)gc_pool_alloc((w)->pool, sizeof(T)))
#define ARR(w, T, n) ((T *)gc_pool_alloc((w)->pool, ((size_t)(n) + 1) * sizeof(T)))

static char *str(wr *w, const char *s)
{
	return gc_pool_strdup(w->pool, s ? s : "");
}

static Onnx__TypeProto *tensor_type(wr *w, const gc_value *v)
{
	Onnx__TypeProto *tp = NEW(w, Onnx__TypeProto);
	Onnx__TypeProto__Tensor *tt = NEW(w, Onnx__TypeProto__Tensor);
	if (!tp || !tt)
		return NULL;
	onnx__type_proto__init(tp);
	onnx__type_proto__tensor__init(tt);
	tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	tp->tensor_type = tt;
	if (v->dtype != GC_DTYPE_UNDEFINED) {
		tt->has_elem_type = 1;
		tt->elem_type = (int32_t)v->dtype;
	}
	if (v->rank < 0)
		return tp;
	Onnx__TensorShapeProto *sp = NEW(w, Onnx__TensorShapeProto);
	Onnx__TensorShapeProto__Dimension **dims = ARR(w, Onnx__TensorShapeProto__Dimension *, v->rank);
	if (!sp || !dims)
		return NULL;
	onnx__tensor_shape_proto__init(sp);
	sp->n_dim = (size_t)v->rank;
	sp->dim = dims;
	for (int32_t i = 0; i < v->rank; i++) {
		Onnx__TensorShapeProto__Dimension *d = NEW(w, Onnx__TensorShapeProto__Dimension);
		if (!d)
			return NULL;
		onnx__tensor_shape_proto__dimension__init(d);
		if (v->dims[i] >= 0) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = v->dims[i];
		} else if (v->dim_names[i]) {
			d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = str(w, v->dim_names[i]);
		}
		dims[i] = d;
	}
	tt->shape = sp;
	return tp;
}

static Onnx__ValueInfoProto *value_info(wr *w, int32_t vi)
{
	const gc_value *v = &w->g->values[vi];
	Onnx__ValueInfoProto *p = NEW(w, Onnx__ValueInfoProto);
	if (!p)
		return NULL;
	onnx__value_info_proto__init(p);
	p->name = str(w, v->name);
	p->type = tensor_type(w, v);
	return p->name && p->type ? p : NULL;
}

static Onnx__TensorProto *tensor(wr *w, const char *name, const gc_tensor *t)
{
	if (t->dtype == GC_DTYPE_STRING) {
		gc_error_set(w->err, GC_EUNSUPPORTED, "%s: tensor '%s': string tensors cannot be saved",
			     w->g->origin ? w->g->origin : "graph", name ? name : "");
		return NULL;
	}
	Onnx__TensorProto *p = NEW(w, Onnx__TensorProto);
	int64_t *dims = ARR(w, int64_t, t->rank);
	if (!p || !dims)
		return NULL;
	onnx__tensor_proto__init(p);
	p->name = str(w, name);
	p->has_data_type = 1;
	p->data_type = (int32_t)t->dtype;
	p->n_dims = (size_t)t->rank;
	p->dims = dims;
	for (int32_t i = 0; i < t->rank; i++)
		dims[i] = t->dims[i];
	int64_t bytes = gc_tensor_nbytes(t);
	bool packed = t->dtype == GC_DTYPE_INT4 || t->dtype == GC_DTYPE_UINT4 ||
		      t->dtype == GC_DTYPE_FLOAT4E2M1;
	if (packed)
		bytes = (gc_tensor_numel(t) + 1) / 2;
	p->has_raw_data = 1;
	p->raw_data.len = (size_t)bytes;
	if (packed) {
		p->raw_data.data = bytes ? gc_pool_alloc(w->pool, (size_t)bytes) : NULL;
		if (bytes && p->raw_data.data)
			gc_onnx_pack4(t->data, gc_tensor_numel(t), p->raw_data.data);
	} else {
		p->raw_data.data = bytes ? gc_pool_memdup(w->pool, t->data, (size_t)bytes) : NULL;
	}
	if (bytes && !p->raw_data.data)
		return NULL;
	return p;
}

static Onnx__AttributeProto *attribute(wr *w, const gc_irnode *n, const gc_attr *a)
{
	Onnx__AttributeProto *p = NEW(w, Onnx__AttributeProto);
	if (!p)
		return NULL;
	onnx__attribute_proto__init(p);
	p->name = str(w, a->name);
	p->has_type = 1;
	p->type = (Onnx__AttributeProto__AttributeType)a->type;
	switch (a->type) {
	case GC_ATTR_FLOAT:
		p->has_f = 1;
		p->f = a->v.f;
		break;
	case GC_ATTR_INT:
		p->has_i = 1;
		p->i = a->v.i;
		break;
	case GC_ATTR_STRING:
		p->has_s = 1;
		p->s.data = (uint8_t *)str(w, a->v.s);
		p->s.len = strlen(a->v.s ? a->v.s : "");
		break;
	case GC_ATTR_FLOATS:
		p->n_floats = (size_t)a->n;
		p->floats = gc_pool_memdup(w->pool, a->v.floats, (size_t)a->n * sizeof(float) + 1);
		break;
	case GC_ATTR_INTS:
		p->n_ints = (size_t)a->n;
		p->ints = gc_pool_memdup(w->pool, a->v.ints, (size_t)a->n * sizeof(int64_t) + 1);
		break;
	case GC_ATTR_STRINGS:
		p->n_strings = (size_t)a->n;
		p->strings = ARR(w, ProtobufCBinaryData, a->n);
		for (int64_t i = 0; p->strings && i < a->n; i++) {
			p->strings[i].data = (uint8_t *)str(w, a->v.strings[i]);
			p->strings[i].len = strlen(a->v.strings[i] ? a->v.strings[i] : "");
		}
		break;
	case GC_ATTR_TENSOR:
		p->t = tensor(w, NULL, a->v.t);
		if (!p->t)
			return NULL;
		break;
	default:
		gc_error_set(w->err, GC_EUNSUPPORTED,
			     "%s: node '%s' (%s): attribute '%s' of type %s cannot be saved",
			     w->g->origin ? w->g->origin : "graph", n->name ? n->name : "",
			     n->op_type, a->name, gc_attr_type_name(a->type));
		return NULL;
	}
	return p;
}

int gc_onnx_save(const gc_graph *g, const char *path, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, g);
	GC_ARG_NONNULL(err, path);
	wr w = { .pool = gc_pool_new(), .g = g, .err = err };
	int32_t *order = gc_calloc((size_t)g->n_nodes + 1, sizeof *order);
	uint8_t *buf = NULL;
	int rc = 0;
	err->code = 0;
	if (!w.pool || !order) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory");
		goto out;
	}
	if ((rc = gc_graph_check(g, order, err)))
		goto out;
	Onnx__ModelProto model;
	Onnx__GraphProto graph;
	onnx__model_proto__init(&model);
	onnx__graph_proto__init(&graph);
	model.has_ir_version = 1;
	model.ir_version = 8;
	model.producer_name = "graphcc";
	model.producer_version = GC_VERSION_STRING;
	model.graph = &graph;
	graph.name = "graphcc";
	/* opsets: the graph's, plus ONNX's default one when missing */
	bool has_default = false;
	for (int32_t i = 0; i < g->n_opsets; i++)
		has_default |= !g->opsets[i].domain[0] || !strcmp(g->opsets[i].domain, "ai.onnx");
	model.opset_import = ARR(&w, Onnx__OperatorSetIdProto *, g->n_opsets + 1);
	if (!model.opset_import)
		goto nomem;
	for (int32_t i = 0; i <= g->n_opsets; i++) {
		if (i == g->n_opsets && has_default)
			break;
		Onnx__OperatorSetIdProto *o = NEW(&w, Onnx__OperatorSetIdProto);
		if (!o)
			goto nomem;
		onnx__operator_set_id_proto__init(o);
		o->domain = i < g->n_opsets ? str(&w, g->opsets[i].domain) : "";
		o->has_version = 1;
		o->version = i < g->n_opsets ? g->opsets[i].version : 17;
		model.opset_import[model.n_opset_import++] = o;
	}
	/* inputs, initializers */
	graph.input = ARR(&w, Onnx__ValueInfoProto *, g->n_inputs);
	graph.initializer = ARR(&w, Onnx__TensorProto *, g->n_values + g->n_states);
	graph.output = ARR(&w, Onnx__ValueInfoProto *, g->n_outputs);
	graph.node = ARR(&w, Onnx__NodeProto *, g->n_nodes);
	if (!graph.input || !graph.initializer || !graph.output || !graph.node)
		goto nomem;
	for (int32_t i = 0; i < g->n_inputs; i++)
		if (!(graph.input[graph.n_input++] = value_info(&w, g->inputs[i])))
			goto nomem;
	for (int32_t v = 0; v < g->n_values; v++) {
		if (!g->values[v].constant)
			continue;
		Onnx__TensorProto *t = tensor(&w, g->values[v].name, g->values[v].constant);
		if (!t)
			goto fail;
		graph.initializer[graph.n_initializer++] = t;
	}
	/* Session state (gc_graph_add_state): the initial value as the input's
	 * initializer (ONNX's input default), the pairing in metadata_props
	 * ("graphcc.state.<input>": "<output>"), which the importer reads back. */
	model.metadata_props = ARR(&w, Onnx__StringStringEntryProto *, g->n_states);
	if (g->n_states && !model.metadata_props)
		goto nomem;
	for (int32_t k = 0; k < g->n_states; k++) {
		const gc_gstate *st = &g->states[k];
		Onnx__TensorProto *t = tensor(&w, st->input, st->init);
		Onnx__StringStringEntryProto *e = NEW(&w, Onnx__StringStringEntryProto);
		char key[600];
		snprintf(key, sizeof key, "%s%s", GC_ONNX_STATE_KEY, st->input);
		if (!t || !e)
			goto fail;
		onnx__string_string_entry_proto__init(e);
		e->key = str(&w, key);
		e->value = str(&w, st->output);
		graph.initializer[graph.n_initializer++] = t;
		model.metadata_props[model.n_metadata_props++] = e;
	}
	for (int32_t k = 0; k < g->n_nodes; k++) {
		const gc_irnode *n = &g->nodes[order[k]];
		Onnx__NodeProto *np = NEW(&w, Onnx__NodeProto);
		if (!np)
			goto nomem;
		onnx__node_proto__init(np);
		np->name = str(&w, n->name);
		np->op_type = str(&w, n->op_type);
		np->domain = str(&w, n->domain);
		np->input = ARR(&w, char *, n->n_in);
		np->output = ARR(&w, char *, n->n_out);
		np->attribute = ARR(&w, Onnx__AttributeProto *, n->n_attr);
		if (!np->input || !np->output || !np->attribute)
			goto nomem;
		for (int32_t i = 0; i < n->n_in; i++)
			np->input[np->n_input++] = n->in[i] < 0 ? "" : str(&w, g->values[n->in[i]].name);
		for (int32_t i = 0; i < n->n_out; i++)
			np->output[np->n_output++] = str(&w, g->values[n->out[i]].name);
		for (int32_t i = 0; i < n->n_attr; i++)
			if (!(np->attribute[np->n_attribute++] = attribute(&w, n, &n->attrs[i])))
				goto fail;
		graph.node[graph.n_node++] = np;
	}
	for (int32_t i = 0; i < g->n_outputs; i++)
		if (!(graph.output[graph.n_output++] = value_info(&w, g->outputs[i])))
			goto nomem;
	size_t len = onnx__model_proto__get_packed_size(&model);
	if (!(buf = gc_malloc(len + 1)))
		goto nomem;
	onnx__model_proto__pack(&model, buf);
	rc = gc_write_file_atomic(path, buf, len, NULL, 0, err);
	goto out;
nomem:
	rc = gc_error_set(err, GC_ENOMEM, "out of memory");
	goto out;
fail:
	rc = err->code ? err->code : gc_error_set(err, GC_ENOMEM, "out of memory");
out:
	gc_free(buf);
	gc_free(order);
	gc_pool_free(w.pool);
	return rc;
}
