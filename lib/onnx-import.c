/* ONNX model import: protobuf-c over ONNX's own onnx.proto, feeding the
 * graph builder. */
#include <graphcc/graphcc.h>

#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "graph-impl.h"
#include "onnx-tensor.h"
#include "onnx-data.pb-c.h"
#include "onnx.pb-c.h"

typedef struct importer {
	const char *path;
	char dir[PATH_MAX];
	gc_error *err;
} importer;

static int import_graph(importer *im, const Onnx__GraphProto *gp, gc_graph *g);
static void pb_free(void *data, void *p);

/*
 * The type of a sequence or optional (TypeProto), as a gc_dtype code:
 * sequence(tensor(E)) is GC_DTYPE_SEQUENCE | E, optional(T) is
 * GC_DTYPE_OPTIONAL | T. depth guards against nesting.
 */
static int value_kind(importer *im, gc_graph *g, const char *name, const Onnx__TypeProto *tp,
		      int depth, gc_dtype *dt)
{
	*dt = GC_DTYPE_UNDEFINED;
	if (!tp)
		return 0;
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
		if (tp->tensor_type && tp->tensor_type->has_elem_type) {
			int32_t e = tp->tensor_type->elem_type;
			char tb[96];
			if (e < 0 || e >= GC_DTYPE_COUNT)
				return gc_error_set(im->err, GC_EUNSUPPORTED, "%s: tensor '%s' has %s",
						    g->origin, name,
						    gc_onnx_type_text(e, tb, sizeof tb));
			*dt = (gc_dtype)e;
		}
		return 0;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
		gc_dtype e = GC_DTYPE_UNDEFINED;
		const Onnx__TypeProto *et = tp->sequence_type ? tp->sequence_type->elem_type : NULL;
		if (et && et->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
			return gc_error_set(im->err, GC_EUNSUPPORTED,
					    "%s: '%s' is a sequence of non-tensors; graphcc's "
					    "sequences hold tensors",
					    g->origin, name);
		if (value_kind(im, g, name, et, depth + 1, &e))
			return im->err->code;
		*dt = (gc_dtype)(GC_DTYPE_SEQUENCE | e);
		return 0;
	}
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
		gc_dtype e = GC_DTYPE_UNDEFINED;
		const Onnx__TypeProto *et = tp->optional_type ? tp->optional_type->elem_type : NULL;
		if (depth > 0 || (et && et->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE))
			return gc_error_set(im->err, GC_EUNSUPPORTED,
					    "%s: '%s' nests an optional inside another type",
					    g->origin, name);
		if (value_kind(im, g, name, et, depth + 1, &e))
			return im->err->code;
		*dt = (gc_dtype)(GC_DTYPE_OPTIONAL | e);
		return 0;
	}
	default:
		return gc_error_set(im->err, GC_EUNSUPPORTED,
				    "%s: '%s' is a map or sparse value; graphcc supports tensors, "
				    "sequences of tensors and optionals",
				    g->origin, name);
	}
}

/* The dtype and shape of a ValueInfoProto; rank -1 when it has no shape.
 * A sequence or optional has rank 0 and its whole type in the dtype. */
static int value_type(importer *im, gc_graph *g, const Onnx__ValueInfoProto *vi, gc_dtype *dt,
		      int32_t *rank, int64_t *dims, const char **dim_names)
{
	const char *name = vi->name ? vi->name : "";
	const Onnx__TypeProto *tp = vi->type;
	*rank = -1;
	*dt = GC_DTYPE_UNDEFINED;
	if (!tp)
		return 0;
	if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
		if (value_kind(im, g, name, tp, 0, dt))
			return im->err->code;
		*rank = 0;
		return 0;
	}
	const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
	if (!tt)
		return 0;
	if (tt->has_elem_type) {
		char tb[96];
		if (tt->elem_type <= 0 || tt->elem_type >= GC_DTYPE_COUNT)
			return gc_error_set(im->err, GC_EUNSUPPORTED, "%s: tensor '%s' has %s",
					    g->origin, name,
					    gc_onnx_type_text(tt->elem_type, tb, sizeof tb));
		*dt = (gc_dtype)tt->elem_type;
	}
	if (!tt->shape)
		return 0;
	if (tt->shape->n_dim > GC_MAX_RANK)
		return gc_error_set(im->err, GC_EUNSUPPORTED,
				    "%s: tensor '%s' has rank %zu; graphcc supports ranks 0 to %d",
				    g->origin, name, tt->shape->n_dim, GC_MAX_RANK);
	*rank = (int32_t)tt->shape->n_dim;
	for (size_t i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
		dims[i] = -1;
		if (dim_names)
			dim_names[i] = NULL;
		if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
			if (d->dim_value < 0)
				return gc_error_set(im->err, GC_EINVAL,
						    "%s: tensor '%s' has negative dimension %" PRId64,
						    g->origin, name, d->dim_value);
			dims[i] = d->dim_value;
		} else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			   dim_names) {
			dim_names[i] = d->dim_param;
		}
	}
	return 0;
}

/* Converts one attribute; subgraphs become child graphs of g. */
static int import_attr(importer *im, gc_graph *g, const char *node_label,
		       const Onnx__AttributeProto *ap, gc_attr *a, gc_tensor *scratch,
		       int *n_scratch)
{
	a->name = ap->name ? ap->name : "";
	char where[512];
	snprintf(where, sizeof where, "%s: %s, attribute '%s'", g->origin, node_label, a->name);
	gc_attr_type t = ap->has_type ? (gc_attr_type)ap->type : GC_ATTR_UNDEFINED;
	a->type = t;
	switch ((int)t) {
	case GC_ATTR_FLOAT:
		a->v.f = ap->f;
		return 0;
	case GC_ATTR_INT:
		a->v.i = ap->i;
		return 0;
	case GC_ATTR_STRING:
		a->v.s = (const char *)ap->s.data;
		a->n = (int64_t)ap->s.len;
		if (!a->v.s)
			a->v.s = "";
		return 0;
	case GC_ATTR_FLOATS:
		a->v.floats = ap->floats;
		a->n = (int64_t)ap->n_floats;
		return 0;
	case GC_ATTR_INTS:
		a->v.ints = ap->ints;
		a->n = (int64_t)ap->n_ints;
		return 0;
	case GC_ATTR_STRINGS: {
		/* ONNX strings are byte arrays; graphcc passes them NUL-terminated. */
		char **ss = gc_pool_alloc(g->pool, (ap->n_strings + 1) * sizeof(char *));
		if (!ss)
			return gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", where);
		for (size_t i = 0; i < ap->n_strings; i++) {
			ss[i] = gc_pool_strndup(g->pool, (const char *)ap->strings[i].data,
						ap->strings[i].len);
			if (!ss[i])
				return gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", where);
		}
		a->v.strings = (const char *const *)ss;
		a->n = (int64_t)ap->n_strings;
		return 0;
	}
	case GC_ATTR_TENSOR:
		if (!ap->t)
			return gc_error_set(im->err, GC_EINVAL, "%s: tensor attribute without a tensor",
					    where);
		if (gc_onnx_tensor(ap->t, im->dir[0] ? im->dir : NULL, where, &scratch[(*n_scratch)++], im->err))
			return im->err->code;
		a->v.t = &scratch[*n_scratch - 1];
		return 0;
	case GC_ATTR_TENSORS: {
		gc_tensor *ts = gc_pool_alloc(g->pool, (ap->n_tensors + 1) * sizeof *ts);
		if (!ts)
			return gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", where);
		for (size_t i = 0; i < ap->n_tensors; i++) {
			gc_tensor tmp;
			if (gc_onnx_tensor(ap->tensors[i], im->dir[0] ? im->dir : NULL, where, &tmp, im->err))
				return im->err->code;
			gc_tensor *c = gc_tensor_copy_to_pool(g->pool, &tmp);
			gc_tensor_release(&tmp);
			if (!c)
				return gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", where);
			ts[i] = *c;
		}
		a->v.tensors = ts;
		a->n = (int64_t)ap->n_tensors;
		return 0;
	}
	case GC_ATTR_GRAPH:
	case GC_ATTR_GRAPHS: {
		size_t n = t == GC_ATTR_GRAPH ? 1 : ap->n_graphs;
		const void **gs = gc_pool_alloc(g->pool, (n + 1) * sizeof(void *));
		if (!gs)
			return gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", where);
		for (size_t i = 0; i < n; i++) {
			const Onnx__GraphProto *sub = t == GC_ATTR_GRAPH ? ap->g : ap->graphs[i];
			if (!sub)
				return gc_error_set(im->err, GC_EINVAL,
						    "%s: graph attribute without a graph", where);
			gc_graph *child = gc_graph_new_child(g, where);
			if (!child)
				return gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", where);
			for (int k = 0; k < g->n_opsets; k++)
				if (gc_graph_set_opset(child, g->opsets[k].domain,
						       g->opsets[k].version, im->err))
					return im->err->code;
			if (import_graph(im, sub, child))
				return im->err->code;
			gs[i] = child;
		}
		if (t == GC_ATTR_GRAPH) {
			a->v.g = gs[0];
		} else {
			a->v.graphs = (const void *const *)gs;
			a->n = (int64_t)n;
		}
		return 0;
	}
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: {
		/* A value type (Optional's `type`): its gc_dtype code, as an int. */
		gc_dtype dt;
		if (!ap->tp)
			return gc_error_set(im->err, GC_EINVAL, "%s: type attribute without a type",
					    where);
		if (value_kind(im, g, a->name, ap->tp, 0, &dt))
			return im->err->code;
		a->type = GC_ATTR_INT;
		a->v.i = dt;
		return 0;
	}
	case GC_ATTR_UNDEFINED:
		return gc_error_set(im->err, GC_EINVAL, "%s: attribute has no type", where);
	default:
		return gc_error_set(im->err, GC_EUNSUPPORTED,
				    "%s: attributes of type %d (sparse tensors, type protos) are "
				    "not supported",
				    where, (int)t);
	}
}

static int import_node(importer *im, gc_graph *g, const Onnx__NodeProto *np, size_t index)
{
	char label[300];
	const char *op = np->op_type ? np->op_type : "";
	if (np->name && np->name[0])
		snprintf(label, sizeof label, "node '%s' (%s)", np->name, op);
	else
		snprintf(label, sizeof label, "node #%zu (%s)", index, op);
	if (np->n_input > INT32_MAX / 2 || np->n_output > INT32_MAX / 2 ||
	    np->n_attribute > INT32_MAX / 2)
		return gc_error_set(im->err, GC_ELIMIT, "%s: %s has too many inputs/outputs",
				    g->origin, label);
	size_t na = np->n_attribute;
	gc_attr *attrs = gc_calloc(na + 1, sizeof *attrs);
	gc_tensor *scratch = gc_calloc(na + 1, sizeof *scratch);
	int n_scratch = 0, rc = 0;
	if (!attrs || !scratch) {
		rc = gc_error_set(im->err, GC_ENOMEM, "%s: out of memory", g->origin);
		goto out;
	}
	for (size_t i = 0; i < na && !rc; i++)
		rc = import_attr(im, g, label, np->attribute[i], &attrs[i], scratch, &n_scratch);
	if (!rc) {
		rc = gc_graph_add_node(g, np->name && np->name[0] ? np->name : "", np->domain, op,
				       (int32_t)np->n_input, (const char *const *)np->input,
				       (int32_t)np->n_output, (const char *const *)np->output,
				       (int32_t)na, attrs, im->err);
	}
out:
	for (int i = 0; i < n_scratch; i++)
		gc_tensor_release(&scratch[i]);
	gc_free(scratch);
	gc_free(attrs);
	return rc;
}

static int import_graph(importer *im, const Onnx__GraphProto *gp, gc_graph *g)
{
	gc_error *err = im->err;
	char where[512];
	for (size_t i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		const char *name = tp->name ? tp->name : "";
		snprintf(where, sizeof where, "%s: initializer '%s'", g->origin, name);
		gc_tensor t;
		bool mapped;
		if (gc_onnx_tensor_mapped(tp, im->dir[0] ? im->dir : NULL, where, g->pool, &t,
					  &mapped, err))
			return err->code;
		/* the bytes are in t now: the parsed copy goes before the next
		 * initializer is read, so that a large model is held about
		 * twice at most while it is read, not three or four times
		 * (nothing reads the initializers' protos after this); a big
		 * one is in the graph's pool already (mapped), and the graph
		 * keeps it without a copy of its own */
		Onnx__TensorProto *owned = (Onnx__TensorProto *)tp;
		if (owned->has_raw_data && owned->raw_data.data) {
			pb_free(NULL, owned->raw_data.data);
			owned->raw_data.data = NULL;
			owned->raw_data.len = 0;
		}
		int rc;
		if (mapped)
			rc = gc_graph_add_mapped_constant(g, name, &t, err);
		else
			rc = gc_graph_add_constant(g, name, &t, err);
		if (!mapped)
			gc_tensor_release(&t);
		if (rc)
			return rc;
	}
	if (gp->n_sparse_initializer)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: sparse initializers are not supported", g->origin);
	for (size_t i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		const char *name = vi->name ? vi->name : "";
		/* An input that is also an initializer keeps the initializer as
		 * its default value (ONNX IR >= 4; below that, every initializer
		 * is listed as an input). */
		gc_dtype dt;
		int32_t rank;
		int64_t dims[GC_MAX_RANK];
		const char *dn[GC_MAX_RANK];
		if (value_type(im, g, vi, &dt, &rank, dims, dn))
			return err->code;
		/* A subgraph's inputs take their types from the node that runs
		 * it: what they declare is only checked. */
		if (dt == GC_DTYPE_UNDEFINED && !g->parent)
			return gc_error_set(err, GC_EINVAL, "%s: graph input '%s' has no element type",
					    g->origin, name);
		if (rank < 0 && !g->parent)
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: graph input '%s' has no shape (not even a rank)",
					    g->origin, name);
		if (gc_graph_add_input(g, name, dt, rank, dims, dn, err))
			return err->code;
	}
	for (size_t i = 0; i < gp->n_node; i++)
		if (import_node(im, g, gp->node[i], i))
			return err->code;
	for (size_t i = 0; i < gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi = gp->output[i];
		if (gc_graph_add_output(g, vi->name ? vi->name : "", err))
			return err->code;
	}
	for (size_t i = 0; i < gp->n_value_info + gp->n_output; i++) {
		const Onnx__ValueInfoProto *vi =
			i < gp->n_value_info ? gp->value_info[i] : gp->output[i - gp->n_value_info];
		gc_dtype dt;
		int32_t rank;
		int64_t dims[GC_MAX_RANK];
		if (!vi->name || !vi->name[0] || gc_graph_find(g, vi->name) < 0)
			continue; /* information about nothing this graph uses */
		if (value_type(im, g, vi, &dt, &rank, dims, NULL))
			return err->code;
		if (dt != GC_DTYPE_UNDEFINED &&
		    gc_graph_set_value_info(g, vi->name, dt, rank, dims, err))
			return err->code;
	}
	int32_t *order = gc_calloc((size_t)g->n_nodes + 1, sizeof *order);
	if (!order)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", g->origin);
	int rc = gc_graph_check(g, order, err);
	gc_free(order);
	return rc;
}

/* protobuf-c allocates through graphcc's allocator (so that out-of-memory
 * injection reaches the parser too). */
static void *pb_alloc(void *data, size_t size)
{
	void *p = gc_malloc(size);
	if (!p && data)
		*(int *)data = 1; /* the parse failed for want of memory */
	return p;
}

static void pb_free(void *data, void *p)
{
	(void)data;
	gc_free(p);
}

static bool pb_varint(const uint8_t *p, size_t n, size_t *at, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (*at >= n)
			return false;
		uint8_t b = p[(*at)++];
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * protobuf-c unpacks nested messages recursively, on the stack, as deep as
 * a file nests them: a model with If nested 10,000 deep overflowed it. This
 * walks the wire format first, following the message fields the
 * descriptor declares, and bounds the nesting: messages inside messages
 * (types, attributes, sequences inside each other) and graphs inside
 * graphs (If, Loop, Scan bodies).
 */
#define PB_MAX_MESSAGE_DEPTH 256
#define PB_MAX_GRAPH_DEPTH 64

typedef enum pb_nest { PB_OK, PB_MALFORMED, PB_TOO_DEEP, PB_GRAPHS_TOO_DEEP } pb_nest;

static pb_nest pb_nesting(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n,
			  int depth, int graphs, int max_depth)
{
	if (depth > max_depth)
		return PB_TOO_DEEP;
	if (d == &onnx__graph_proto__descriptor && ++graphs > PB_MAX_GRAPH_DEPTH)
		return PB_GRAPHS_TOO_DEEP;
	size_t at = 0;
	while (at < n) {
		uint64_t key, v;
		if (!pb_varint(p, n, &at, &key))
			return PB_MALFORMED;
		switch (key & 7) {
		case 0:
			if (!pb_varint(p, n, &at, &v))
				return PB_MALFORMED;
			break;
		case 1:
		case 5: {
			size_t w = (key & 7) == 1 ? 8 : 4;
			if (n - at < w)
				return PB_MALFORMED;
			at += w;
			break;
		}
		case 2: {
			if (!pb_varint(p, n, &at, &v) || v > n - at)
				return PB_MALFORMED;
			const ProtobufCFieldDescriptor *f =
				key >> 3 <= UINT32_MAX
					? protobuf_c_message_descriptor_get_field(d, (unsigned)(key >> 3))
					: NULL;
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				pb_nest r = pb_nesting(f->descriptor, p + at, (size_t)v, depth + 1,
						       graphs, max_depth);
				if (r != PB_OK)
					return r;
			}
			at += (size_t)v;
			break;
		}
		default:
			return PB_MALFORMED; /* groups: protobuf-c refuses them too */
		}
	}
	return PB_OK;
}

/* Checks buf (a message of type d, from path) with pb_nesting; what is the
 * message's name for people. */
static int pb_check_nesting(const ProtobufCMessageDescriptor *d, const void *buf, size_t len,
			    int max_depth, const char *path, const char *what, gc_error *err)
{
	switch (pb_nesting(d, buf, len, 0, 0, max_depth)) {
	case PB_OK:
		return 0;
	case PB_MALFORMED:
		return gc_error_set(err, GC_EINVAL,
				    "%s: not a valid ONNX %s (protobuf parse failed: the file is "
				    "truncated, corrupted, or not ONNX)",
				    path, what);
	case PB_TOO_DEEP:
		return gc_error_set(err, GC_ELIMIT,
				    "%s: the %s nests deeper than graphcc reads (more than %d "
				    "messages inside each other: types, attributes or values)",
				    path, what, max_depth);
	case PB_GRAPHS_TOO_DEEP:
		return gc_error_set(err, GC_ELIMIT,
				    "%s: the %s nests subgraphs (If, Loop, Scan bodies) more than "
				    "%d deep",
				    path, what, PB_MAX_GRAPH_DEPTH);
	}
	return 0;
}

/* im.dir empty: external data is refused. owned: when not NULL, the file's
 * bytes (buf), which this frees (and sets NULL) as soon as they are parsed,
 * before the graph is built from them. */
static int load_model(importer *im, const void *buf, size_t len, void **owned, gc_graph **out,
		      gc_error *err)
{
	const char *path = im->path;
	if (len == 0)
		return gc_error_set(err, GC_EINVAL, "%s: empty file, not an ONNX model", path);
	if (pb_check_nesting(&onnx__model_proto__descriptor, buf, len, PB_MAX_MESSAGE_DEPTH, path,
			     "model", err))
		return err->code;
	int pb_nomem = 0;
	ProtobufCAllocator pb_allocator = { .alloc = pb_alloc, .free = pb_free,
					    .allocator_data = &pb_nomem };
	Onnx__ModelProto *m = onnx__model_proto__unpack(&pb_allocator, len, buf);
	if (owned) {
		gc_free(*owned);
		*owned = NULL;
	}
	if (!m && pb_nomem)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory parsing the model", path);
	if (!m)
		return gc_error_set(err, GC_EINVAL,
				    "%s: not a valid ONNX model (protobuf parse failed: the file is "
				    "truncated, corrupted, or not ONNX)",
				    path);
	int rc = 0;
	gc_graph *g = NULL;
	if (!m->graph) {
		rc = gc_error_set(err, GC_EINVAL, "%s: the model has no graph", path);
		goto out;
	}
	g = gc_graph_new(path);
	if (!g) {
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	for (size_t i = 0; i < m->n_opset_import && !rc; i++) {
		const Onnx__OperatorSetIdProto *os = m->opset_import[i];
		rc = gc_graph_set_opset(g, os->domain ? os->domain : "",
					os->has_version ? os->version : 1, err);
		if (rc)
			gc_error_prefix(err, "%s: opset_import", path);
	}
	if (!rc && gc_graph_opset(g, "") < 0 && m->n_opset_import == 0)
		rc = gc_error_set(err, GC_EINVAL, "%s: the model imports no opset (opset_import is empty)",
				  path);
	if (!rc)
		rc = import_graph(im, m->graph, g);
	for (size_t i = 0; i < m->n_metadata_props && !rc; i++) {
		const Onnx__StringStringEntryProto *e = m->metadata_props[i];
		size_t kl = strlen(GC_ONNX_STATE_KEY);
		if (!e->key || strncmp(e->key, GC_ONNX_STATE_KEY, kl) || !e->value)
			continue;
		/* session state that gc_onnx_save wrote: the input's default
		 * becomes its initial value, and the input stays an input */
		int32_t v = gc_graph_find(g, e->key + kl);
		const gc_tensor *init = v >= 0 && g->values[v].is_input ? g->values[v].constant : NULL;
		if (!init) {
			rc = gc_error_set(err, GC_EINVAL,
					  "%s: metadata '%s': '%s' is no graph input with an "
					  "initializer",
					  path, e->key, e->key + kl);
			break;
		}
		g->values[v].constant = NULL;
		rc = gc_graph_add_state(g, e->key + kl, e->value, init, err);
	}
out:
	onnx__model_proto__free_unpacked(m, &pb_allocator);
	if (rc) {
		gc_graph_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

int gc_onnx_load(const char *path, gc_graph **out, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, out);
	*out = NULL;
	GC_ARG_NONNULL(err, path);
	importer im = { .path = path, .err = err };
	snprintf(im.dir, sizeof im.dir, "%s", path);
	char *d = dirname(im.dir);
	memmove(im.dir, d, strlen(d) + 1);

	void *buf;
	size_t len;
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	int rc = load_model(&im, buf, len, &buf, out, err);
	gc_free(buf);
	return rc;
}

int gc_onnx_load_mem(const void *buf, size_t len, const char *origin, gc_graph **out,
		     gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, out);
	*out = NULL;
	GC_ARG_NONNULL(err, buf);
	importer im = { .path = origin ? origin : "(model in memory)", .err = err };
	return load_model(&im, buf, len, NULL, out, err);
}

int gc_pb_read(const char *path, gc_tensor *out, char **name, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, out);
	memset(out, 0, sizeof *out);
	GC_ARG_NONNULL(err, path);
	if (name)
		*name = NULL;
	void *buf;
	size_t len;
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	int pb_nomem = 0;
	ProtobufCAllocator pb_allocator = { .alloc = pb_alloc, .free = pb_free,
					    .allocator_data = &pb_nomem };
	Onnx__TensorProto *tp = onnx__tensor_proto__unpack(&pb_allocator, len, buf);
	gc_free(buf);
	if (!tp && pb_nomem)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory parsing the tensor", path);
	if (!tp)
		return gc_error_set(err, GC_EINVAL,
				    "%s: not a valid ONNX TensorProto (protobuf parse failed)", path);
	int rc = gc_onnx_tensor(tp, NULL, path, out, err);
	if (!rc && name && tp->name && tp->name[0]) {
		*name = gc_strdup(tp->name);
		if (!*name) {
			gc_tensor_release(out);
			rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
		}
	}
	onnx__tensor_proto__free_unpacked(tp, &pb_allocator);
	return rc;
}

/* A heap copy (gc_value_release frees it) of a SequenceProto holding
 * tensors of type elem (UNDEFINED: any one type). */
static int sequence_value(const Onnx__SequenceProto *sp, gc_dtype elem, const char *path,
			  gc_tensor *out, gc_error *err)
{
	if (sp->n_sparse_tensor_values || sp->n_sequence_values || sp->n_map_values ||
	    sp->n_optional_values || (sp->has_elem_type && sp->elem_type != 1 && sp->elem_type != 0))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: the sequence holds %s; graphcc's sequences hold dense "
				    "tensors",
				    path,
				    sp->n_sequence_values ? "sequences"
				    : sp->n_map_values	  ? "maps"
				    : sp->n_optional_values ? "optionals"
							    : "sparse tensors or another kind");
	if (sp->n_tensor_values > INT32_MAX / 2)
		return gc_error_set(err, GC_ELIMIT, "%s: too many tensors", path);
	gc_sequence *seq = gc_calloc(1, sizeof *seq);
	if (!seq)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	*out = (gc_tensor){ .dtype = (gc_dtype)(GC_DTYPE_SEQUENCE | elem), .data = seq };
	seq->elem_dtype = elem;
	seq->items = gc_calloc(sp->n_tensor_values + 1, sizeof *seq->items);
	if (!seq->items) {
		gc_value_release(out);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	}
	uint64_t total = 0;
	for (size_t i = 0; i < sp->n_tensor_values; i++) {
		char where[4200];
		snprintf(where, sizeof where, "%s: tensor %zu of the sequence", path, i);
		gc_tensor *t = &seq->items[seq->n];
		if (gc_onnx_tensor(sp->tensor_values[i], NULL, where, t, err)) {
			gc_value_release(out);
			return err->code;
		}
		seq->n++;
		if (t->dtype == GC_DTYPE_STRING) {
			gc_value_release(out);
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: string tensors in sequences are not supported", where);
		}
		if (seq->elem_dtype == GC_DTYPE_UNDEFINED)
			seq->elem_dtype = t->dtype;
		if (t->dtype != seq->elem_dtype) {
			int rc = gc_error_set(err, GC_EINVAL, "%s is %s, but the sequence holds %s",
					      where, gc_dtype_name(t->dtype),
					      gc_dtype_name(seq->elem_dtype));
			gc_value_release(out);
			return rc;
		}
		total += (uint64_t)gc_tensor_nbytes(t);
		if (total > gc_limit_bytes()) {
			gc_value_release(out);
			return gc_error_set(err, GC_ELIMIT,
					    "%s: the sequence is over the size limit of %" PRIu64
					    " bytes (" GC_LIMIT_SETTING ")",
					    path, gc_limit_bytes());
		}
	}
	out->dtype = (gc_dtype)(GC_DTYPE_SEQUENCE | seq->elem_dtype);
	return 0;
}

int gc_pb_read_value(const char *path, gc_dtype dtype, gc_tensor *out, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, out);
	memset(out, 0, sizeof *out);
	GC_ARG_NONNULL(err, path);
	if (!gc_dtype_is_value(dtype))
		return gc_pb_read(path, out, NULL, err);
	void *buf;
	size_t len;
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	bool opt = gc_dtype_is_optional(dtype);
	/* a sequence of sequences, an optional of a sequence: a few levels */
	if (pb_check_nesting(opt ? &onnx__optional_proto__descriptor
				 : &onnx__sequence_proto__descriptor,
			     buf, len, 6, path, opt ? "OptionalProto" : "SequenceProto", err)) {
		gc_free(buf);
		return err->code;
	}
	int pb_nomem = 0;
	ProtobufCAllocator pb_allocator = { .alloc = pb_alloc, .free = pb_free,
					    .allocator_data = &pb_nomem };
	int rc = 0;
	if (!opt) {
		Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(&pb_allocator, len, buf);
		gc_free(buf);
		if (!sp)
			return gc_error_set(err, pb_nomem ? GC_ENOMEM : GC_EINVAL,
					    "%s: not a valid ONNX SequenceProto (%s)", path,
					    pb_nomem ? "out of memory" : "protobuf parse failed");
		rc = sequence_value(sp, gc_dtype_inner(dtype), path, out, err);
		onnx__sequence_proto__free_unpacked(sp, &pb_allocator);
		return rc;
	}
	Onnx__OptionalProto *op = onnx__optional_proto__unpack(&pb_allocator, len, buf);
	gc_free(buf);
	if (!op)
		return gc_error_set(err, pb_nomem ? GC_ENOMEM : GC_EINVAL,
				    "%s: not a valid ONNX OptionalProto (%s)", path,
				    pb_nomem ? "out of memory" : "protobuf parse failed");
	gc_dtype inner = gc_dtype_inner(dtype);
	gc_optional *o = gc_calloc(1, sizeof *o);
	if (!o) {
		onnx__optional_proto__free_unpacked(op, &pb_allocator);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	}
	*out = (gc_tensor){ .dtype = dtype, .data = o };
	o->value.dtype = inner;
	int32_t kind = op->has_elem_type ? op->elem_type : 0;
	if (kind == 1 && op->tensor_value) { /* TENSOR */
		if (gc_dtype_is_sequence(inner)) {
			rc = gc_error_set(err, GC_EINVAL,
					  "%s: the optional holds a tensor, but the model expects a %s",
					  path, gc_dtype_name(inner));
		} else if (!(rc = gc_onnx_tensor(op->tensor_value, NULL, path, &o->value, err))) {
			o->has_value = 1;
			if (inner != GC_DTYPE_UNDEFINED && o->value.dtype != inner)
				rc = gc_error_set(err, GC_EINVAL,
						  "%s: the optional holds %s, but the model expects %s",
						  path, gc_dtype_name(o->value.dtype),
						  gc_dtype_name(inner));
		}
	} else if (kind == 3 && op->sequence_value) { /* SEQUENCE */
		if (!gc_dtype_is_sequence(inner) && inner != GC_DTYPE_UNDEFINED) {
			rc = gc_error_set(err, GC_EINVAL,
					  "%s: the optional holds a sequence, but the model expects %s",
					  path, gc_dtype_name(inner));
		} else if (!(rc = sequence_value(op->sequence_value, gc_dtype_inner(inner), path,
						 &o->value, err))) {
			o->has_value = 1;
		}
	} else if (kind != 0 || op->tensor_value || op->sequence_value || op->map_value ||
		   op->optional_value || op->sparse_tensor_value) {
		rc = gc_error_set(err, GC_EUNSUPPORTED,
				  "%s: the optional holds a kind of value graphcc does not have (type "
				  "%d)",
				  path, (int)kind);
	}
	onnx__optional_proto__free_unpacked(op, &pb_allocator);
	if (rc) {
		gc_value_release(out);
		return rc;
	}
	if (o->has_value && !gc_dtype_is_sequence(o->value.dtype))
		out->dtype = (gc_dtype)(GC_DTYPE_OPTIONAL | o->value.dtype);
	else if (o->has_value)
		out->dtype = (gc_dtype)(GC_DTYPE_OPTIONAL | o->value.dtype);
	return 0;
}
