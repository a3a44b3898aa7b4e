/*
 * Training programs from inference graphs (graphcc.h, "training"): a
 * Gradient node from the loss to the params, then ONNX's Momentum or Adam
 * (ai.onnx.preview.training, runtime/kernels/training.c) updating them, the
 * params and the optimizer's buffers kept in the session as state.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "graph-impl.h"

int gc_graph_gradient(gc_graph *g, const char *y, int32_t n_xs, const char *const *xs,
		      const char *const *outputs, gc_error *err)
{
	if (!g || !y || n_xs < 1 || !xs || !outputs)
		return gc_error_set(err, GC_EINVAL, "gc_graph_gradient: a NULL or empty argument");
	if (gc_graph_opset(g, GC_DOMAIN_TRAINING) < 0 &&
	    gc_graph_set_opset(g, GC_DOMAIN_TRAINING, 1, err))
		return err->code;
	gc_attr at[2] = {
		{ .name = "xs", .type = GC_ATTR_STRINGS, .n = n_xs, .v.strings = xs },
		{ .name = "y", .type = GC_ATTR_STRING, .n = (int64_t)strlen(y), .v.s = y },
	};
	char name[300];
	snprintf(name, sizeof name, "gradient_of_%s", y);
	return gc_graph_add_node(g, name, GC_DOMAIN_TRAINING, "Gradient", n_xs, xs, n_xs, outputs,
				 2, at, err);
}

/* "<a><b>" in g's pool. */
static const char *join(gc_graph *g, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = gc_pool_alloc(g->pool, la + lb + 1);
	if (s) {
		memcpy(s, a, la);
		memcpy(s + la, b, lb + 1);
	}
	return s;
}

/* A state input `name` like t (zeros, or init when non-NULL) updated from
 * output `next`; the output is marked too. */
static int add_state(gc_graph *g, const char *name, const char *next, const gc_tensor *like,
		     const gc_tensor *init, gc_error *err)
{
	gc_tensor zeros = *like;
	if (!init) {
		zeros.data = gc_calloc((size_t)gc_tensor_nbytes(like) + 8, 1);
		if (!zeros.data)
			return gc_error_set(err, GC_ENOMEM, "out of memory");
		init = &zeros;
	}
	int rc = 0;
	if (gc_graph_find(g, name) < 0 || !g->values[gc_graph_find(g, name)].is_input)
		rc = gc_graph_add_input(g, name, like->dtype, like->rank, like->dims, NULL, err);
	if (!rc)
		rc = gc_graph_add_output(g, next, err);
	if (!rc)
		rc = gc_graph_add_state(g, name, next, init, err);
	if (init == &zeros)
		gc_free(zeros.data);
	return rc;
}

static int check(gc_graph *g, const gc_train_options *o, gc_error *err)
{
	if (!o->loss || gc_graph_find(g, o->loss) < 0)
		return gc_error_set(err, GC_EINVAL, "%s: the loss '%s' is no tensor of the graph",
				    g->origin, o->loss ? o->loss : "(none)");
	if (o->n_params < 1 || !o->params)
		return gc_error_set(err, GC_EINVAL, "%s: no params to train", g->origin);
	if (!(o->learning_rate > 0) || o->momentum < 0 || o->weight_decay < 0 ||
	    (unsigned)o->optimizer >= GC_OPTIMIZER_COUNT)
		return gc_error_set(err, GC_EINVAL,
				    "%s: the optimizer's settings are out of range (learning rate "
				    "%g, momentum %g, weight decay %g)",
				    g->origin, o->learning_rate, o->momentum, o->weight_decay);
	for (int32_t i = 0; i < o->n_params; i++) {
		int32_t v = gc_graph_find(g, o->params[i]);
		const gc_tensor *t = v >= 0 ? g->values[v].constant : NULL;
		if (!t)
			return gc_error_set(err, GC_EINVAL, "%s: param '%s' is no initializer of the "
					    "graph", g->origin, o->params[i]);
		if (t->dtype != GC_DTYPE_FLOAT && t->dtype != GC_DTYPE_DOUBLE)
			return gc_error_set(err, GC_EINVAL, "%s: param '%s' is %s; only float and "
					    "double tensors train", g->origin, o->params[i],
					    gc_dtype_name(t->dtype));
		for (int32_t j = 0; j < i; j++)
			if (!strcmp(o->params[i], o->params[j]))
				return gc_error_set(err, GC_EINVAL, "%s: param '%s' is named twice",
						    g->origin, o->params[i]);
	}
	return 0;
}

int gc_graph_make_training(gc_graph *g, const gc_train_options *opt, gc_error *err)
{
	gc_train_options o;
	if (!g || gc_options_copy(&o, sizeof o, opt, "gc_train_options", err))
		return g ? err->code : gc_error_set(err, GC_EINVAL, "gc_graph_make_training: g is NULL");
	if (check(g, &o, err))
		return err->code;
	int32_t n = o.n_params;
	bool adam = o.optimizer == GC_OPTIMIZER_ADAM;
	/* ins: R, T, X..., G..., V... (, H...); outs: X'..., V'... (, H'...) */
	int32_t n_in = 2 + n * (adam ? 4 : 3), n_out = n * (adam ? 3 : 2);
	const char **ins = gc_pool_alloc(g->pool, (size_t)n_in * sizeof *ins);
	const char **outs = gc_pool_alloc(g->pool, (size_t)n_out * sizeof *outs);
	const gc_tensor **init = gc_pool_alloc(g->pool, (size_t)n * sizeof *init);
	if (!ins || !outs || !init)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	int rc = 0;
	/* params: initializers -> inputs (their values: the states' start) */
	for (int32_t i = 0; i < n && !rc; i++) {
		int32_t v = gc_graph_find(g, o.params[i]);
		init[i] = g->values[v].constant;
		const gc_tensor *t = init[i];
		g->values[v].constant = NULL;
		rc = gc_graph_add_input(g, o.params[i], t->dtype, t->rank, t->dims, NULL, err);
		ins[2 + i] = g->values[v].name;
		ins[2 + n + i] = join(g, o.params[i], ".grad");
		ins[2 + 2 * n + i] = join(g, o.params[i], adam ? ".adam_v" : ".momentum");
		outs[i] = join(g, o.params[i], ".new");
		outs[n + i] = join(g, ins[2 + 2 * n + i], ".new");
		if (adam) {
			ins[2 + 3 * n + i] = join(g, o.params[i], ".adam_h");
			outs[2 * n + i] = join(g, ins[2 + 3 * n + i], ".new");
		}
	}
	if (!rc)
		rc = gc_graph_gradient(g, o.loss, n, ins + 2, ins + 2 + n, err);
	/* the learning rate, and the step count (from 1, as PyTorch's) */
	gc_tensor lr = { .dtype = GC_DTYPE_FLOAT, .rank = 0, .data = &o.learning_rate };
	int64_t one = 1;
	gc_tensor step1 = { .dtype = GC_DTYPE_INT64, .rank = 0, .data = &one };
	if (!rc)
		rc = gc_graph_add_constant(g, "train.learning_rate", &lr, err);
	if (!rc)
		rc = gc_graph_add_constant(g, "train.one", &step1, err);
	if (!rc)
		rc = gc_graph_add_input(g, "train.step", GC_DTYPE_INT64, 0, NULL, NULL, err);
	const char *add_in[2] = { "train.step", "train.one" }, *next = "train.step.new";
	if (!rc)
		rc = gc_graph_add_node(g, "train.count", "", "Add", 2, add_in, 1, &next, 0, NULL, err);
	if (!rc)
		rc = add_state(g, "train.step", next, &step1, &step1, err);
	ins[0] = "train.learning_rate";
	ins[1] = "train.step";
	float wd = o.weight_decay;
	gc_attr at[4];
	int32_t na = 0;
	if (adam) {
		at[na++] = (gc_attr){ .name = "alpha", .type = GC_ATTR_FLOAT, .n = 1,
				      .v.f = o.beta1 > 0 ? o.beta1 : 0.9f };
		at[na++] = (gc_attr){ .name = "beta", .type = GC_ATTR_FLOAT, .n = 1,
				      .v.f = o.beta2 > 0 ? o.beta2 : 0.999f };
		at[na++] = (gc_attr){ .name = "epsilon", .type = GC_ATTR_FLOAT, .n = 1,
				      .v.f = o.epsilon > 0 ? o.epsilon : 1e-8f };
		at[na++] = (gc_attr){ .name = "norm_coefficient", .type = GC_ATTR_FLOAT, .n = 1,
				      .v.f = wd };
	} else {
		at[na++] = (gc_attr){ .name = "alpha", .type = GC_ATTR_FLOAT, .n = 1,
				      .v.f = o.momentum };
		at[na++] = (gc_attr){ .name = "beta", .type = GC_ATTR_FLOAT, .n = 1, .v.f = 1.0f };
		const char *mode = o.nesterov ? "nesterov" : "standard";
		at[na++] = (gc_attr){ .name = "mode", .type = GC_ATTR_STRING,
				      .n = (int64_t)strlen(mode), .v.s = mode };
		at[na++] = (gc_attr){ .name = "norm_coefficient", .type = GC_ATTR_FLOAT, .n = 1,
				      .v.f = wd };
	}
	if (!rc)
		rc = gc_graph_add_node(g, "train.update", GC_DOMAIN_TRAINING, adam ? "Adam" : "Momentum",
				       n_in, ins, n_out, outs, na, at, err);
	for (int32_t i = 0; i < n && !rc; i++) {
		rc = add_state(g, ins[2 + i], outs[i], init[i], init[i], err);
		if (!rc)
			rc = add_state(g, ins[2 + 2 * n + i], outs[n + i], init[i], NULL, err);
		if (!rc && adam)
			rc = add_state(g, ins[2 + 3 * n + i], outs[2 * n + i], init[i], NULL, err);
	}
	if (!rc && !g->values[gc_graph_find(g, o.loss)].is_output)
		rc = gc_graph_add_output(g, o.loss, err);
	return rc;
}
