/*
 * The graph passes (lib/passes.c): each rewrite on small built graphs, the
 * node counts and attributes it leaves, and the numbers the rewritten graph
 * gives against the same graph run unrewritten. The unrewritten reference
 * is the same graph with the fused intermediate declared a graph output,
 * which no pass may fuse away, so the comparison holds whether or not
 * gc_compile itself runs the passes.
 */
#include <graphcc/graphcc.h>

#include "check.h"
#include "graph-edit.h"
#include "passes.h"

/* ---- building ---- */

static uint32_t rng_state = 12345;

static double rnd(void) /* in [-1, 1) */
{
	rng_state = rng_state * 1664525u + 1013904223u;
	return (double)(rng_state >> 8) / (double)(1u << 23) - 1.0;
}

static gc_attr attr_i(const char *name, int64_t v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INT, .n = 1};
	a.v.i = v;
	return a;
}

static gc_attr attr_f(const char *name, float v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_FLOAT, .n = 1};
	a.v.f = v;
	return a;
}

static gc_attr attr_s(const char *name, const char *v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_STRING, .n = (int64_t)strlen(v)};
	a.v.s = v;
	return a;
}

static gc_attr attr_ints(const char *name, int64_t n, const int64_t *v)
{
	gc_attr a = {.name = name, .type = GC_ATTR_INTS, .n = n};
	a.v.ints = v;
	return a;
}

static int64_t numel(int32_t rank, const int64_t *dims)
{
	int64_t n = 1;
	for (int i = 0; i < rank; i++)
		n *= dims[i];
	return n;
}

/* A constant of random values (positive ones when `positive`). */
static void add_random(gc_graph *g, const char *name, gc_dtype dt, int32_t rank,
		       const int64_t *dims, int positive, gc_error *err)
{
	int64_t n = numel(rank, dims);
	gc_tensor t = {.dtype = dt, .rank = rank};
	memcpy(t.dims, dims, (size_t)rank * sizeof *dims);
	t.data = malloc((size_t)(n ? n : 1) * 8);
	for (int64_t i = 0; i < n; i++) {
		double v = positive ? 0.5 + fabs(rnd()) : rnd();
		if (dt == GC_DTYPE_DOUBLE)
			((double *)t.data)[i] = v;
		else
			((float *)t.data)[i] = (float)v;
	}
	gc_graph_add_constant(g, name, &t, err);
	free(t.data);
}

static void add_scalar(gc_graph *g, const char *name, gc_dtype dt, double v, gc_error *err)
{
	double d = v;
	float f = (float)v;
	gc_tensor t = {.dtype = dt, .rank = 0, .data = dt == GC_DTYPE_DOUBLE ? (void *)&d : &f};
	gc_graph_add_constant(g, name, &t, err);
}

/* A Constant node writing a scalar (as PyTorch exports Clip's bounds). */
static void add_constant_node(gc_graph *g, const char *out, float v, gc_error *err)
{
	gc_tensor t = {.dtype = GC_DTYPE_FLOAT, .rank = 0, .data = &v};
	gc_attr a = {.name = "value", .type = GC_ATTR_TENSOR, .n = 1};
	a.v.t = &t;
	const char *o[] = {out};
	gc_graph_add_node(g, out, "", "Constant", 0, NULL, 1, o, 1, &a, err);
}

/* ---- running ---- */

typedef struct result {
	double *v;
	int64_t n;
	gc_tensor shape;
} result;

/* Compiles g, runs it on inputs filled from the seed, keeps output `out`. */
static int run_graph(const gc_graph *g, uint32_t seed, int out, result *r, gc_error *err)
{
	gc_program *p = NULL;
	gc_session *s = NULL;
	memset(r, 0, sizeof *r);
	int rc = gc_compile(g, NULL, &p, err);
	if (!rc)
		rc = gc_session_new(p, NULL, &s, err);
	rng_state = seed;
	for (int i = 0; !rc && i < gc_program_num_inputs(p); i++) {
		gc_tensor t = *gc_program_input(p, i, NULL);
		int64_t n = gc_tensor_numel(&t);
		t.data = malloc((size_t)(n ? n : 1) * 8);
		for (int64_t k = 0; k < n; k++) {
			double v = rnd() * 3;
			if (t.dtype == GC_DTYPE_DOUBLE)
				((double *)t.data)[k] = v;
			else
				((float *)t.data)[k] = (float)v;
		}
		rc = gc_session_set_input(s, i, &t, err);
		free(t.data);
	}
	if (!rc)
		rc = gc_session_run(s, err);
	if (!rc) {
		const gc_tensor *y = gc_session_output(s, out);
		r->shape = *y;
		r->shape.data = NULL;
		r->n = gc_tensor_numel(y);
		r->v = malloc((size_t)(r->n ? r->n : 1) * sizeof *r->v);
		for (int64_t k = 0; k < r->n; k++)
			r->v[k] = y->dtype == GC_DTYPE_DOUBLE ? ((const double *)y->data)[k]
							      : ((const float *)y->data)[k];
	}
	gc_session_free(s);
	gc_program_free(p);
	return rc;
}

/* max |a - b| / max |b| (0 when b is all zeros and a equals it). */
static double rel_diff(const result *a, const result *b)
{
	double m = 0, d = 0;
	for (int64_t i = 0; i < b->n; i++) {
		m = fmax(m, fabs(b->v[i]));
		d = fmax(d, fabs(a->v[i] - b->v[i]));
	}
	return m > 0 ? d / m : d;
}

typedef struct counts {
	int32_t by_pass[32];
	const char *names[32];
	int n;
} counts;

static void count_report(void *user, const char *pass, int32_t changed)
{
	counts *c = user;
	if (c->n < 32) {
		c->names[c->n] = pass;
		c->by_pass[c->n++] = changed;
	}
}

/* What the pass of that name changed; -1 when it did not report. */
static int32_t changes(const counts *c, const char *pass)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], pass))
			return c->by_pass[i];
	return -1;
}

/* A rewritten copy of g; NULL on error. */
static gc_graph *optimized(const gc_graph *g, counts *c, gc_error *err)
{
	gc_graph *o = gc_graph_clone(g, err);
	if (o && gc_run_ir_passes(o, NULL, c ? count_report : NULL, c, err)) {
		gc_graph_free(o);
		return NULL;
	}
	return o;
}

static int count_op(const gc_graph *g, const char *op)
{
	int n = 0;
	for (int i = 0; i < gc_graph_num_nodes(g); i++) {
		const char *t;
		gc_graph_node(g, i, NULL, NULL, &t);
		n += !strcmp(t, op);
	}
	return n;
}

/* The attribute of the first node of that op type, or NULL. */
static const gc_attr *node_attr(const gc_graph *g, const char *op, const char *name)
{
	for (int i = 0; i < g->n_nodes; i++) {
		if (strcmp(g->nodes[i].op_type, op))
			continue;
		for (int a = 0; a < g->nodes[i].n_attr; a++)
			if (!strcmp(g->nodes[i].attrs[a].name, name))
				return &g->nodes[i].attrs[a];
		return NULL;
	}
	return NULL;
}

/* ---- Conv (+ BatchNormalization) (+ activation) ---- */

typedef struct conv_case {
	const char *name;
	int nsp; /* spatial rank, 1 or 2 */
	int64_t n, c, h, w, m, kh, kw, group, sh, sw, pad;
	int bias, bn;
	gc_dtype dt;
	/* Relu, Clip, Clip6 (bounds from Constant nodes), LeakyRelu, Swish
	 * (Mul(c, Sigmoid(c))), HardSwish, HSigMul (Mul(c, HardSigmoid(c)),
	 * alpha 1/6), NULL */
	const char *act;
} conv_case;

/* Whether the activation is one of the smooth ones (no exact zeros to see
 * it by; its graph has two nodes after the Conv). */
static int smooth_act(const char *act)
{
	return act && (!strcmp(act, "Swish") || !strcmp(act, "HSigMul") || !strcmp(act, "HardSwish"));
}

/* x -> Conv -> "c" [-> BatchNormalization -> "b"] [-> act] -> "y". With
 * `pin`, the Conv's output is also a graph output: nothing fuses. */
static gc_graph *build_conv(const conv_case *cc, int pin, gc_error *err)
{
	gc_graph *g = gc_graph_new(cc->name);
	rng_state = 99; /* the same weights for both variants */
	gc_graph_set_opset(g, "", cc->act && !strcmp(cc->act, "HardSwish") ? 14 : 13, err);
	int64_t xd[4] = {cc->n, cc->c, cc->h, cc->w};
	int64_t wd[4] = {cc->m, cc->c / cc->group, cc->kh, cc->kw};
	if (cc->nsp == 1) {
		xd[2] = cc->w;
		wd[2] = cc->kw;
	}
	int32_t rank = 2 + cc->nsp;
	gc_graph_add_input(g, "x", cc->dt, rank, xd, NULL, err);
	add_random(g, "W", cc->dt, rank, wd, 0, err);
	int64_t md[1] = {cc->m};
	if (cc->bias)
		add_random(g, "B", cc->dt, 1, md, 0, err);
	int64_t ks[2] = {cc->kh, cc->kw}, st[2] = {cc->sh, cc->sw};
	int64_t pads[4] = {cc->pad, cc->pad, cc->pad, cc->pad};
	gc_attr ca[4] = {attr_i("group", cc->group),
			 attr_ints("kernel_shape", cc->nsp, cc->nsp == 1 ? ks + 1 : ks),
			 attr_ints("strides", cc->nsp, cc->nsp == 1 ? st + 1 : st),
			 attr_ints("pads", 2 * cc->nsp, pads)};
	const char *cin[] = {"x", "W", "B"}, *cout[] = {cc->bn || cc->act ? "c" : "y"};
	gc_graph_add_node(g, "conv", "", "Conv", cc->bias ? 3 : 2, cin, 1, cout, 4, ca, err);
	const char *last = "c";
	if (cc->bn) {
		add_random(g, "bn_scale", cc->dt, 1, md, 0, err);
		add_random(g, "bn_B", cc->dt, 1, md, 0, err);
		add_random(g, "bn_mean", cc->dt, 1, md, 0, err);
		add_random(g, "bn_var", cc->dt, 1, md, 1, err);
		const char *bin[] = {"c", "bn_scale", "bn_B", "bn_mean", "bn_var"};
		const char *bout[] = {cc->act ? "b" : "y"};
		gc_attr eps = attr_f("epsilon", 1e-3f);
		gc_graph_add_node(g, "bn", "", "BatchNormalization", 5, bin, 1, bout, 1, &eps, err);
		last = bout[0];
	}
	if (cc->act) {
		const char *ain[] = {last, "lo", "hi"}, *aout[] = {"y"};
		if (!strcmp(cc->act, "LeakyRelu")) {
			gc_attr al = attr_f("alpha", 0.2f);
			gc_graph_add_node(g, "act", "", "LeakyRelu", 1, ain, 1, aout, 1, &al, err);
		} else if (!strcmp(cc->act, "Clip6")) {
			add_constant_node(g, "lo", 0.0f, err);
			add_constant_node(g, "hi", 6.0f, err);
			gc_graph_add_node(g, "act", "", "Clip", 3, ain, 1, aout, 0, NULL, err);
		} else if (!strcmp(cc->act, "Clip")) {
			add_scalar(g, "lo", cc->dt, -0.25, err);
			add_scalar(g, "hi", cc->dt, 0.5, err);
			gc_graph_add_node(g, "act", "", "Clip", 3, ain, 1, aout, 0, NULL, err);
		} else if (!strcmp(cc->act, "Swish") || !strcmp(cc->act, "HSigMul")) {
			int hard = !strcmp(cc->act, "HSigMul");
			gc_attr hs[2] = {attr_f("alpha", (float)(1.0 / 6)), attr_f("beta", 0.5f)};
			const char *sout[] = {"s"}, *min[] = {last, "s"};
			gc_graph_add_node(g, "gate", "", hard ? "HardSigmoid" : "Sigmoid", 1, ain, 1,
					  sout, hard ? 2 : 0, hs, err);
			gc_graph_add_node(g, "act", "", "Mul", 2, min, 1, aout, 0, NULL, err);
		} else {
			gc_graph_add_node(g, "act", "", cc->act, 1, ain, 1, aout, 0, NULL, err);
		}
	}
	gc_graph_add_output(g, "y", err);
	if (pin)
		gc_graph_add_output(g, "c", err);
	return g;
}

static const conv_case conv_cases[] = {
    /* im2col, with and without bias */
    {"im2col-relu", 2, 2, 3, 9, 7, 5, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Relu"},
    {"im2col-nobias-leaky", 2, 1, 4, 8, 8, 6, 3, 3, 1, 2, 2, 1, 0, 0, GC_DTYPE_FLOAT, "LeakyRelu"},
    {"grouped-clip", 2, 1, 4, 6, 6, 8, 3, 3, 2, 1, 1, 0, 1, 0, GC_DTYPE_FLOAT, "Clip"},
    /* pointwise */
    {"pointwise-clip6", 2, 2, 8, 5, 5, 4, 1, 1, 1, 1, 1, 0, 1, 0, GC_DTYPE_FLOAT, "Clip6"},
    {"pointwise-nobias-relu", 2, 1, 8, 5, 5, 4, 1, 1, 1, 1, 1, 0, 0, 0, GC_DTYPE_FLOAT, "Relu"},
    /* depthwise: the wide path (equal strides) and the row path */
    {"depthwise-wide-clip6", 2, 1, 6, 9, 9, 6, 3, 3, 6, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Clip6"},
    {"depthwise-wide-s2-leaky", 2, 1, 6, 9, 9, 12, 3, 3, 6, 2, 2, 1, 1, 0, GC_DTYPE_FLOAT,
     "LeakyRelu"},
    {"depthwise-rows-relu", 2, 1, 5, 9, 9, 5, 3, 3, 5, 2, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Relu"},
    {"depthwise-rows-k5-clip", 2, 1, 3, 9, 9, 3, 5, 5, 3, 1, 2, 2, 0, 0, GC_DTYPE_FLOAT, "Clip"},
    /* other types and ranks */
    {"f64-relu", 2, 1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_DOUBLE, "Relu"},
    {"f64-clip", 2, 1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_DOUBLE, "Clip"},
    {"conv1d-leaky", 1, 2, 3, 1, 11, 4, 1, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "LeakyRelu"},
    /* SiLU and HardSwish, on each kernel: im2col, pointwise, depthwise
     * (wide, rows, 16 channels at a time), the channel-vector kernel, f64 */
    {"im2col-swish", 2, 2, 3, 9, 7, 5, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Swish"},
    {"pointwise-hswish", 2, 2, 8, 5, 5, 4, 1, 1, 1, 1, 1, 0, 1, 0, GC_DTYPE_FLOAT, "HardSwish"},
    {"pointwise40-swish", 2, 1, 40, 7, 7, 40, 1, 1, 1, 1, 1, 0, 1, 0, GC_DTYPE_FLOAT, "Swish"},
    {"pointwise40-hsigmul", 2, 1, 40, 7, 9, 24, 1, 1, 1, 1, 1, 0, 0, 0, GC_DTYPE_FLOAT,
     "HSigMul"},
    {"depthwise-wide-swish", 2, 1, 6, 9, 9, 6, 3, 3, 6, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Swish"},
    {"depthwise-wide-s2-hsigmul", 2, 1, 6, 9, 9, 12, 3, 3, 6, 2, 2, 1, 1, 0, GC_DTYPE_FLOAT,
     "HSigMul"},
    {"depthwise-rows-hswish", 2, 1, 5, 9, 9, 5, 3, 3, 5, 2, 1, 1, 1, 0, GC_DTYPE_FLOAT,
     "HardSwish"},
    {"depthwise40-swish", 2, 1, 40, 15, 13, 40, 3, 3, 40, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT,
     "Swish"},
    {"depthwise40-s2-k5-hsigmul", 2, 1, 40, 15, 13, 40, 5, 5, 40, 2, 2, 2, 1, 0, GC_DTYPE_FLOAT,
     "HSigMul"},
    {"direct32-swish", 2, 1, 32, 14, 14, 32, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Swish"},
    {"direct24-hsigmul", 2, 1, 24, 11, 11, 24, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT,
     "HSigMul"},
    {"f64-swish", 2, 1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_DOUBLE, "Swish"},
    {"f64-hsigmul", 2, 1, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_DOUBLE, "HSigMul"},
    {"conv1d-swish", 1, 2, 3, 1, 11, 4, 1, 3, 1, 1, 1, 1, 1, 0, GC_DTYPE_FLOAT, "Swish"},
};

static void test_conv_activation_fused(void)
{
	for (size_t i = 0; i < sizeof conv_cases / sizeof conv_cases[0]; i++) {
		const conv_case *cc = &conv_cases[i];
		gc_error err = {0};
		gc_graph *g = build_conv(cc, 0, &err), *ref = build_conv(cc, 1, &err);
		CHECK_STR(err.msg, "");
		counts c = {0};
		gc_graph *o = optimized(g, &c, &err);
		CHECK_STR(err.msg, "");
		CHECK(o != NULL);
		/* only the Conv is left (Clip's Constant bounds are dead) */
		if (gc_graph_num_nodes(o) != 1)
			fprintf(stderr, "case %s\n", cc->name);
		CHECK_INT(gc_graph_num_nodes(o), 1);
		CHECK_INT(gc_graph_num_nodes(g),
			  !strcmp(cc->act, "Clip6") ? 4 : smooth_act(cc->act) && strcmp(cc->act, "HardSwish") ? 3 : 2);
		const gc_attr *a = node_attr(o, "Conv", "_gc_activation");
		CHECK(a != NULL);
		CHECK_STR(a->v.s, !strcmp(cc->act, "Clip6")     ? "Clip"
				  : !strcmp(cc->act, "HSigMul") ? "HardSwish"
								: cc->act);
		CHECK_STR(gc_graph_output_name(o, 0), "y");
		/* the reference keeps the activation: its Conv output is needed
		 * (fuse-swish makes Sigmoid and Mul one Swish node) */
		gc_graph *ro = optimized(ref, NULL, &err);
		CHECK(ro != NULL);
		CHECK_INT(count_op(ro, "Conv"), 1);
		CHECK(node_attr(ro, "Conv", "_gc_activation") == NULL);
		CHECK_INT(gc_graph_num_nodes(ro),
			  gc_graph_num_nodes(ref) - !strcmp(cc->act, "Swish"));
		result want, got;
		CHECK_INT(run_graph(ref, 7 + (uint32_t)i, 0, &want, &err), 0);
		CHECK_INT(run_graph(o, 7 + (uint32_t)i, 0, &got, &err), 0);
		CHECK_INT(got.n, want.n);
		double d = rel_diff(&got, &want);
		/* the same arithmetic, in the same order; the smooth ones' a
		 * + b c may contract to an FMA in one of the kernels */
		double tol = smooth_act(cc->act) ? 1e-6 : 0;
		if (d > tol)
			fprintf(stderr, "case %s: relative difference %g\n", cc->name, d);
		CHECK_NEAR(d, 0, tol);
		int clipped = 0;
		for (int64_t k = 0; k < want.n; k++)
			clipped += want.v[k] == 0 || want.v[k] == 0.5 || want.v[k] == -0.25;
		/* the activation bit */
		CHECK(strcmp(cc->act, "LeakyRelu") && !smooth_act(cc->act) ? clipped > 0 : 1);
		free(want.v);
		free(got.v);
		gc_graph_free(ro);
		gc_graph_free(o);
		gc_graph_free(ref);
		gc_graph_free(g);
	}
}

static const conv_case bn_cases[] = {
    {"bn-im2col", 2, 2, 4, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, GC_DTYPE_FLOAT, NULL},
    {"bn-nobias-grouped", 2, 1, 4, 7, 7, 6, 3, 3, 2, 2, 2, 1, 0, 1, GC_DTYPE_FLOAT, NULL},
    {"bn-depthwise-relu", 2, 1, 6, 8, 8, 6, 3, 3, 6, 1, 1, 1, 1, 1, GC_DTYPE_FLOAT, "Relu"},
    {"bn-pointwise-clip6", 2, 1, 8, 5, 5, 16, 1, 1, 1, 1, 1, 0, 1, 1, GC_DTYPE_FLOAT, "Clip6"},
    {"bn-f64", 2, 1, 3, 6, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, GC_DTYPE_DOUBLE, NULL},
};

static void test_conv_batchnorm_folded(void)
{
	for (size_t i = 0; i < sizeof bn_cases / sizeof bn_cases[0]; i++) {
		const conv_case *cc = &bn_cases[i];
		gc_error err = {0};
		gc_graph *g = build_conv(cc, 0, &err), *ref = build_conv(cc, 1, &err);
		CHECK_STR(err.msg, "");
		counts c = {0};
		gc_graph *o = optimized(g, &c, &err);
		CHECK(o != NULL);
		CHECK_INT(c.n, 21); /* every pass of passes.c reported */
		CHECK_INT(changes(&c, "fold-batchnorm"), 1); /* fold-batchnorm */
		CHECK_INT(count_op(o, "BatchNormalization"), 0);
		CHECK_INT(count_op(o, "Conv"), 1);
		CHECK_INT(gc_graph_num_nodes(o), 1);
		/* the folded weights are new constants; the old ones are gone */
		CHECK(gc_graph_find(o, "W") < 0 || !o->values[gc_graph_find(o, "W")].constant);
		gc_graph *ro = optimized(ref, NULL, &err);
		CHECK_INT(count_op(ro, "BatchNormalization"), 1);
		result want, got;
		CHECK_INT(run_graph(ref, 3 + (uint32_t)i, 0, &want, &err), 0);
		CHECK_INT(run_graph(o, 3 + (uint32_t)i, 0, &got, &err), 0);
		CHECK_INT(got.n, want.n);
		double d = rel_diff(&got, &want);
		if (d > 1e-5)
			fprintf(stderr, "case %s\n", cc->name);
		CHECK_NEAR(d, 0, cc->dt == GC_DTYPE_DOUBLE ? 1e-12 : 1e-5);
		free(want.v);
		free(got.v);
		gc_graph_free(ro);
		gc_graph_free(o);
		gc_graph_free(ref);
		gc_graph_free(g);
	}
}

static void test_batchnorm_not_constant_kept(void)
{
	gc_error err = {0};
	conv_case cc = {"bn-input-scale", 2,   1, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1,
			GC_DTYPE_FLOAT,	  NULL};
	gc_graph *g = build_conv(&cc, 0, &err);
	/* the scale is a graph input: a caller feeds it */
	int64_t md[1] = {4};
	gc_graph_add_input(g, "s_in", GC_DTYPE_FLOAT, 1, md, NULL, &err);
	int32_t bn = -1;
	for (int i = 0; i < gc_graph_num_nodes(g); i++) {
		const char *t;
		gc_graph_node(g, i, NULL, NULL, &t);
		if (!strcmp(t, "BatchNormalization"))
			bn = i;
	}
	CHECK(bn >= 0);
	gc_edit e;
	CHECK_INT(gc_edit_begin(&e, g, &err), 0);
	CHECK_INT(gc_edit_set_input(&e, bn, 1, gc_graph_find(g, "s_in")), 0);
	gc_edit_finish(&e);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "fold-batchnorm"), 0);
	CHECK_INT(count_op(o, "BatchNormalization"), 1);
	CHECK_INT(gc_graph_num_nodes(o), 2);
	gc_graph_free(o);
	gc_graph_free(g);

	/* training_mode=1 stays: it normalises with the batch's statistics,
	 * which no folding into the Conv can know (from opset 14 on, where the
	 * attribute exists) */
	g = build_conv(&cc, 0, &err);
	gc_graph_set_opset(g, "", 15, &err);
	gc_attr tm = attr_i("training_mode", 1);
	CHECK_INT(gc_edit_begin(&e, g, &err), 0);
	CHECK_INT(gc_edit_set_attr(&e, bn, &tm), 0);
	gc_edit_finish(&e);
	o = optimized(g, NULL, &err);
	CHECK_INT(count_op(o, "BatchNormalization"), 1);
	gc_program *p;
	CHECK_INT(gc_compile(o, NULL, &p, &err), 0);
	CHECK_INT(gc_program_num_nodes(p), 2);
	gc_program_free(p);
	gc_graph_free(o);
	gc_graph_free(g);
}

static void test_activation_with_two_readers_kept(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("two-readers");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t xd[4] = {1, 2, 4, 4}, wd[4] = {3, 2, 1, 1};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, xd, NULL, &err);
	add_random(g, "W", GC_DTYPE_FLOAT, 4, wd, 0, &err);
	const char *cin[] = {"x", "W"}, *cout[] = {"c"};
	gc_graph_add_node(g, "conv", "", "Conv", 2, cin, 1, cout, 0, NULL, &err);
	const char *rin[] = {"c"}, *rout[] = {"r"};
	gc_graph_add_node(g, "relu", "", "Relu", 1, rin, 1, rout, 0, NULL, &err);
	const char *ain[] = {"c", "r"}, *aout[] = {"y"};
	gc_graph_add_node(g, "add", "", "Add", 2, ain, 1, aout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "fuse-activation"), 0); /* fuse-activation */
	CHECK_INT(gc_graph_num_nodes(o), 3);
	CHECK(node_attr(o, "Conv", "_gc_activation") == NULL);
	result want, got;
	CHECK_INT(run_graph(g, 1, 0, &want, &err), 0);
	CHECK_INT(run_graph(o, 1, 0, &got, &err), 0);
	CHECK_NEAR(rel_diff(&got, &want), 0, 0);
	free(want.v);
	free(got.v);
	gc_graph_free(o);
	gc_graph_free(g);
}

/* ---- mark-channel-split ---- */

/* x (cin channels) -> a Conv of k1 x k1 windows in g1 groups, 24 channels
 * out ("first") -> Relu -> a Conv of k2 x k2 windows in g2 groups, cout
 * channels out -> y (pads keep the sizes), and the Relu's output a graph
 * output too when `pinned`. */
static gc_graph *build_pair(int64_t cin, int64_t k1, int64_t g1, int64_t k2, int64_t g2,
			    int64_t cout, int pinned, gc_error *err)
{
	gc_graph *g = gc_graph_new("pair");
	gc_graph_set_opset(g, "", 13, err);
	int64_t xd[4] = {1, cin, 9, 9}, w1[4] = {24, cin / g1, k1, k1}, w2[4] = {cout, 24 / g2, k2, k2};
	int64_t p1[4] = {k1 / 2, k1 / 2, k1 / 2, k1 / 2}, p2[4] = {k2 / 2, k2 / 2, k2 / 2, k2 / 2};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, xd, NULL, err);
	add_random(g, "W1", GC_DTYPE_FLOAT, 4, w1, 0, err);
	add_random(g, "W2", GC_DTYPE_FLOAT, 4, w2, 0, err);
	gc_attr a1[2] = {attr_i("group", g1), attr_ints("pads", 4, p1)};
	const char *cin_[] = {"x", "W1"}, *cout_[] = {"c"};
	gc_graph_add_node(g, "first", "", "Conv", 2, cin_, 1, cout_, 2, a1, err);
	const char *rin[] = {"c"}, *rout[] = {"r"};
	gc_graph_add_node(g, "relu", "", "Relu", 1, rin, 1, rout, 0, NULL, err);
	gc_attr a2[2] = {attr_i("group", g2), attr_ints("pads", 4, p2)};
	const char *din[] = {"r", "W2"}, *dout[] = {"y"};
	gc_graph_add_node(g, "reader", "", "Conv", 2, din, 1, dout, 2, a2, err);
	gc_graph_add_output(g, "y", err);
	if (pinned)
		gc_graph_add_output(g, "r", err);
	return g;
}

/* mark-channel-split on g: the first Conv carries `name` (= 1) when
 * `marked`, no other node ever; the marked graph gives the same outputs,
 * bit for bit (a mark changes only how the threads split the work). */
static void check_split_mark(gc_graph *g, const char *name, int marked)
{
	gc_error err = {0};
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	if (!o)
		return;
	CHECK_INT(changes(&c, "mark-channel-split"), marked);
	CHECK_INT(count_op(o, "Conv"), 2);
	const gc_attr *a = node_attr(o, "Conv", name);
	CHECK(marked ? a && a->type == GC_ATTR_INT && a->v.i == 1 : a == NULL);
	for (int n = 0; n < o->n_nodes; n++)
		for (int k = 0; k < o->nodes[n].n_attr && strcmp(o->nodes[n].name, "first"); k++)
			CHECK(strcmp(o->nodes[n].attrs[k].name, name));
	result want, got;
	CHECK_INT(run_graph(g, 4, 0, &want, &err), 0);
	CHECK_INT(run_graph(o, 4, 0, &got, &err), 0);
	CHECK_INT(got.n, want.n);
	CHECK_NEAR(got.n == want.n ? rel_diff(&got, &want) : 1, 0, 0);
	free(want.v);
	free(got.v);
	gc_graph_free(o);
}

/* The depthwise Conv whose output (its Relu fused in) a 1x1 Conv without
 * groups alone reads is marked _gc_split_rows, and only it: not before a
 * grouped 1x1 or a 3x3, not when the output is also a graph output. */
static void test_rows_split_marked(void)
{
	static const struct {
		int64_t k2, g2;
		int pinned, marked;
	} cases[] = {{1, 1, 0, 1}, {1, 2, 0, 0}, {3, 1, 0, 0}, {1, 1, 1, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_error err = {0};
		gc_graph *g = build_pair(24, 3, 24, cases[i].k2, cases[i].g2, 8, cases[i].pinned, &err);
		CHECK_STR(err.msg, "");
		check_split_mark(g, "_gc_split_rows", cases[i].marked);
		gc_graph_free(g);
	}
}

/* The 1x1 Conv whose output (its Relu fused in) a depthwise Conv alone
 * reads is marked _gc_split_channels, and only it: not before a full or
 * grouped 3x3, not when the output is also a graph output, not a grouped
 * 1x1. */
static void test_channel_split_marked(void)
{
	static const struct {
		int64_t pw_group, groups;
		int pinned, marked;
	} cases[] = {{1, 24, 0, 1}, {1, 1, 0, 0}, {1, 6, 0, 0}, {1, 24, 1, 0}, {2, 24, 0, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_error err = {0};
		gc_graph *g = build_pair(8, 1, cases[i].pw_group, 3, cases[i].groups, 24,
					 cases[i].pinned, &err);
		CHECK_STR(err.msg, "");
		check_split_mark(g, "_gc_split_channels", cases[i].marked);
		gc_graph_free(g);
	}
}

/* ---- Identity and Dropout ---- */

static void test_identity_chain_removed(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("identities");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t d[2] = {3, 4};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	const char *names[] = {"x", "a", "b", "r", "y"};
	gc_graph_add_node(g, "id1", "", "Identity", 1, &names[0], 1, &names[1], 0, NULL, &err);
	gc_graph_add_node(g, "id2", "", "Identity", 1, &names[1], 1, &names[2], 0, NULL, &err);
	gc_graph_add_node(g, "relu", "", "Relu", 1, &names[2], 1, &names[3], 0, NULL, &err);
	gc_graph_add_node(g, "id3", "", "Identity", 1, &names[3], 1, &names[4], 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	/* an Identity from a graph input straight to an output must stay */
	const char *in2[] = {"x"}, *out2[] = {"x_copy"};
	gc_graph_add_node(g, "id4", "", "Identity", 1, in2, 1, out2, 0, NULL, &err);
	gc_graph_add_output(g, "x_copy", &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "identity-elimination"), 3);
	CHECK_INT(gc_graph_num_nodes(o), 2); /* Relu, and the input's Identity */
	CHECK_INT(count_op(o, "Relu"), 1);
	CHECK_INT(count_op(o, "Identity"), 1);
	CHECK_STR(gc_graph_output_name(o, 0), "y");
	CHECK_STR(gc_graph_output_name(o, 1), "x_copy");
	/* the Relu now writes "y" itself */
	int32_t y = gc_graph_find(o, "y");
	CHECK(y >= 0 && o->values[y].producer >= 0);
	CHECK_STR(o->nodes[o->values[y].producer].op_type, "Relu");
	result want, got;
	CHECK_INT(run_graph(g, 5, 0, &want, &err), 0);
	CHECK_INT(run_graph(o, 5, 0, &got, &err), 0);
	CHECK_NEAR(rel_diff(&got, &want), 0, 0);
	free(want.v);
	free(got.v);
	CHECK_INT(run_graph(o, 5, 1, &got, &err), 0);
	CHECK_INT(got.n, 12);
	free(got.v);
	gc_graph_free(o);
	gc_graph_free(g);
}

static void test_zero_pad_removed(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("pads");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t d[2] = {2, 5};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	static int64_t zeros[4] = {0, 0, 0, 0}, ones[4] = {0, 1, 0, 1};
	gc_tensor tz = {.dtype = GC_DTYPE_INT64, .rank = 1, .dims = {4}, .data = zeros};
	gc_tensor to = {.dtype = GC_DTYPE_INT64, .rank = 1, .dims = {4}, .data = ones};
	gc_graph_add_constant(g, "zeros", &tz, &err);
	gc_graph_add_constant(g, "ones", &to, &err);
	/* pads of zeros (densenet's transitions): gone; real pads stay */
	const char *pin[] = {"x", "zeros"}, *pout[] = {"p"};
	gc_graph_add_node(g, "pad0", "", "Pad", 2, pin, 1, pout, 0, NULL, &err);
	const char *nin[] = {"p"}, *nout[] = {"y"};
	gc_graph_add_node(g, "neg", "", "Neg", 1, nin, 1, nout, 0, NULL, &err);
	const char *qin[] = {"x", "ones"}, *qout[] = {"z"};
	gc_graph_add_node(g, "pad1", "", "Pad", 2, qin, 1, qout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_graph_add_output(g, "z", &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "identity-elimination"), 1);
	CHECK_INT(count_op(o, "Pad"), 1);
	CHECK_INT(gc_graph_num_nodes(o), 2);
	/* against x itself (run_graph's inputs): y = -x, z = x with a zero
	 * column either side */
	float x[10];
	rng_state = 9;
	for (int k = 0; k < 10; k++)
		x[k] = (float)(rnd() * 3);
	for (int out = 0; out < 2; out++) {
		result got;
		CHECK_INT(run_graph(o, 9, out, &got, &err), 0);
		CHECK_INT(got.n, out ? 14 : 10);
		int ok = got.n == (out ? 14 : 10);
		for (int64_t k = 0; ok && k < got.n; k++) {
			int64_t r = k / 7, q = k % 7;
			double want = !out ? -x[k] : q == 0 || q == 6 ? 0 : x[r * 5 + q - 1];
			ok = got.v[k] == want;
		}
		CHECK(ok);
		free(got.v);
	}
	gc_graph_free(o);
	gc_graph_free(g);
}

static void test_dropout_removed(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("dropout");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t d[2] = {2, 5};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	add_scalar(g, "ratio", GC_DTYPE_FLOAT, 0.3, &err);
	uint8_t f = 0;
	gc_tensor tm = {.dtype = GC_DTYPE_BOOL, .rank = 0, .data = &f};
	gc_graph_add_constant(g, "train", &tm, &err);
	const char *din[] = {"x", "ratio", "train"}, *dout[] = {"d", ""};
	gc_graph_add_node(g, "drop", "", "Dropout", 3, din, 2, dout, 0, NULL, &err);
	const char *rin[] = {"d"}, *rout[] = {"y"};
	gc_graph_add_node(g, "neg", "", "Neg", 1, rin, 1, rout, 0, NULL, &err);
	/* a Dropout whose mask is read stays */
	const char *kout[] = {"d2", "mask"};
	gc_graph_add_node(g, "drop_mask", "", "Dropout", 1, din, 2, kout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_graph_add_output(g, "mask", &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "identity-elimination"), 1);
	CHECK_INT(count_op(o, "Dropout"), 1);
	CHECK_INT(gc_graph_num_nodes(o), 2);
	result want, got;
	CHECK_INT(run_graph(g, 9, 0, &want, &err), 0);
	CHECK_INT(run_graph(o, 9, 0, &got, &err), 0);
	CHECK_NEAR(rel_diff(&got, &want), 0, 0);
	free(want.v);
	free(got.v);
	gc_graph_free(o);
	gc_graph_free(g);

	/* training_mode true: kept (it draws a mask), and compiled */
	g = gc_graph_new("dropout-training");
	memset(&err, 0, sizeof err);
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	add_scalar(g, "ratio", GC_DTYPE_FLOAT, 0.3, &err);
	f = 1;
	gc_graph_add_constant(g, "train", &tm, &err);
	const char *yout[] = {"y"};
	gc_graph_add_node(g, "drop", "", "Dropout", 3, din, 1, yout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	o = optimized(g, NULL, &err);
	CHECK(o != NULL);
	CHECK_INT(count_op(o, "Dropout"), 1);
	gc_program *p = NULL;
	CHECK_INT(gc_compile(o, NULL, &p, &err), 0);
	gc_program_free(p);
	gc_graph_free(o);
	gc_graph_free(g);
}

/* ---- Gemm and MatMul ---- */

typedef struct gemm_case {
	const char *name;
	int64_t m, n, k;
	int ta, tb;
	int crank; /* -1: no C; 0: scalar; 1: [N]; 2: [M, N]; 3: [M, 1] */
	float alpha, beta;
	const char *act;
} gemm_case;

static gc_graph *build_gemm(const gemm_case *gc, int pin, gc_error *err)
{
	gc_graph *g = gc_graph_new(gc->name);
	rng_state = 98;
	gc_graph_set_opset(g, "", 13, err);
	int64_t ad[2] = {gc->ta ? gc->k : gc->m, gc->ta ? gc->m : gc->k};
	int64_t bd[2] = {gc->tb ? gc->n : gc->k, gc->tb ? gc->k : gc->n};
	gc_graph_add_input(g, "a", GC_DTYPE_FLOAT, 2, ad, NULL, err);
	add_random(g, "b", GC_DTYPE_FLOAT, 2, bd, 0, err);
	int64_t cd[2] = {gc->m, gc->n};
	int32_t cr = 2;
	if (gc->crank == 0)
		cr = 0;
	else if (gc->crank == 1)
		cd[0] = gc->n, cr = 1;
	else if (gc->crank == 3)
		cd[1] = 1;
	if (gc->crank >= 0)
		add_random(g, "c", GC_DTYPE_FLOAT, cr, cd, 0, err);
	gc_attr at[4] = {attr_i("transA", gc->ta), attr_i("transB", gc->tb),
			 attr_f("alpha", gc->alpha), attr_f("beta", gc->beta)};
	const char *gin[] = {"a", "b", "c"}, *gout[] = {"g"};
	gc_graph_add_node(g, "gemm", "", "Gemm", gc->crank >= 0 ? 3 : 2, gin, 1, gout, 4, at, err);
	const char *ain[] = {"g", "s"}, *aout[] = {"y"}, *sout[] = {"s"};
	gc_attr al = attr_f("alpha", 0.1f);
	if (!strcmp(gc->act, "Swish")) { /* Mul(g, Sigmoid(g)) */
		gc_graph_add_node(g, "gate", "", "Sigmoid", 1, ain, 1, sout, 0, NULL, err);
		gc_graph_add_node(g, "act", "", "Mul", 2, ain, 1, aout, 0, NULL, err);
	} else {
		gc_graph_add_node(g, "act", "", gc->act, 1, ain, 1, aout,
				  !strcmp(gc->act, "LeakyRelu"), &al, err);
	}
	gc_graph_add_output(g, "y", err);
	if (pin)
		gc_graph_add_output(g, "g", err);
	return g;
}

static void test_gemm_activation_fused(void)
{
	static const gemm_case cases[] = {
	    {"linear", 4, 6, 5, 0, 1, 1, 1, 1, "Relu"},
	    {"full-c", 3, 7, 4, 0, 0, 2, 0.5f, 2, "LeakyRelu"},
	    {"scalar-c", 3, 5, 4, 1, 0, 0, 1, 1, "Relu"},
	    {"column-c", 5, 3, 4, 1, 1, 3, 1, 0.5f, "Relu"},
	    {"no-c", 2, 9, 3, 0, 0, -1, 1.5f, 1, "LeakyRelu"},
	    {"beta-zero", 2, 4, 3, 0, 0, 1, 1, 0, "Relu"},
	    {"swish", 3, 7, 4, 0, 1, 1, 1, 1, "Swish"},
	    {"swish-full-c", 3, 7, 4, 1, 0, 2, 0.5f, 2, "Swish"},
	    {"swish-big", 4, 40, 48, 0, 1, 1, 1, 1, "Swish"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_error err = {0};
		gc_graph *g = build_gemm(&cases[i], 0, &err), *ref = build_gemm(&cases[i], 1, &err);
		CHECK_STR(err.msg, "");
		gc_graph *o = optimized(g, NULL, &err);
		CHECK(o != NULL);
		CHECK_INT(gc_graph_num_nodes(o), 1);
		CHECK(node_attr(o, "Gemm", "_gc_activation") != NULL);
		result want, got;
		CHECK_INT(run_graph(ref, 11, 0, &want, &err), 0);
		CHECK_INT(run_graph(o, 11, 0, &got, &err), 0);
		CHECK_INT(got.n, want.n);
		double d = rel_diff(&got, &want);
		if (d > 1e-6)
			fprintf(stderr, "case %s: %g\n", cases[i].name, d);
		CHECK_NEAR(d, 0, 1e-6);
		free(want.v);
		free(got.v);
		gc_graph_free(o);
		gc_graph_free(ref);
		gc_graph_free(g);
	}
}

/* The outputs 0 of ref and o, run on the same inputs (seed), agree within
 * 1e-6 of the largest. */
static void check_same_outputs(const gc_graph *ref, const gc_graph *o, uint32_t seed)
{
	gc_error err = {0};
	result want, got;
	CHECK_INT(run_graph(ref, seed, 0, &want, &err), 0);
	CHECK_INT(run_graph(o, seed, 0, &got, &err), 0);
	CHECK_STR(err.msg, "");
	CHECK_INT(got.n, want.n);
	CHECK_NEAR(rel_diff(&got, &want), 0, 1e-6);
	free(want.v);
	free(got.v);
}

/* Adds input x (shape xd), constants W (w_rank dims wd) and bias [N], and
 * lin = Add(MatMul(x, W), bias), the bias first when bias_first (as torch
 * exports a Linear on a 3-D input). */
static void add_linear(gc_graph *g, gc_dtype t, const int64_t xd[3], int32_t w_rank,
		       const int64_t *wd, int bias_first, gc_error *err)
{
	gc_graph_add_input(g, "x", t, 3, xd, NULL, err);
	add_random(g, "W", t, w_rank, wd, 0, err);
	add_random(g, "bias", t, 1, wd + w_rank - 1, 0, err);
	const char *min[] = {"x", "W"}, *mout[] = {"mm"};
	gc_graph_add_node(g, "matmul", "", "MatMul", 2, min, 1, mout, 0, NULL, err);
	const char *ain[] = {bias_first ? "bias" : "mm", bias_first ? "mm" : "bias"};
	const char *aout[] = {"lin"};
	gc_graph_add_node(g, "add", "", "Add", 2, ain, 1, aout, 0, NULL, err);
}

/* x [2, 3, 5] -> MatMul by W -> Add b [4] (bias first, as torch exports) -> Relu */
static gc_graph *build_matmul(int batched_w, int pin, gc_error *err)
{
	gc_graph *g = gc_graph_new("matmul");
	rng_state = 97;
	gc_graph_set_opset(g, "", 13, err);
	int64_t xd[3] = {2, 3, 5}, wd[3] = {2, 5, 4};
	add_linear(g, GC_DTYPE_FLOAT, xd, batched_w ? 3 : 2, batched_w ? wd : wd + 1, 1, err);
	const char *rin[] = {"lin"}, *rout[] = {"y"};
	gc_graph_add_node(g, "relu", "", "Relu", 1, rin, 1, rout, 0, NULL, err);
	gc_graph_add_output(g, "y", err);
	if (pin)
		gc_graph_add_output(g, "mm", err);
	return g;
}

static void test_matmul_bias_activation_fused(void)
{
	for (int batched = 0; batched < 2; batched++) {
		gc_error err = {0};
		gc_graph *g = build_matmul(batched, 0, &err), *ref = build_matmul(batched, 1, &err);
		CHECK_STR(err.msg, "");
		counts c = {0};
		gc_graph *o = optimized(g, &c, &err);
		CHECK(o != NULL);
		/* with 2-D weights the bias and the Relu fuse; with batched
		 * weights the Add stays, and the Relu stays behind it */
		CHECK_INT(changes(&c, "fuse-matmul-bias"), batched ? 0 : 1);
		CHECK_INT(gc_graph_num_nodes(o), batched ? 3 : 1);
		if (!batched) {
			CHECK(node_attr(o, "MatMul", "_gc_bias") != NULL);
			CHECK(node_attr(o, "MatMul", "_gc_activation") != NULL);
		}
		check_same_outputs(ref, o, 13);
		gc_graph_free(o);
		gc_graph_free(ref);
		gc_graph_free(g);
	}

	/* MatMul by batched constant weights straight into a Relu: the
	 * per-matrix epilogue */
	gc_error err = {0};
	gc_graph *g = gc_graph_new("matmul-batched-relu");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t xd[3] = {2, 3, 5}, wd[3] = {2, 5, 4};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 3, xd, NULL, &err);
	add_random(g, "W", GC_DTYPE_FLOAT, 3, wd, 0, &err);
	const char *min[] = {"x", "W"}, *mout[] = {"mm"};
	gc_graph_add_node(g, "matmul", "", "MatMul", 2, min, 1, mout, 0, NULL, &err);
	const char *rin[] = {"mm"}, *rout[] = {"y"};
	gc_graph_add_node(g, "relu", "", "Relu", 1, rin, 1, rout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_graph *o = optimized(g, NULL, &err);
	CHECK(o != NULL);
	CHECK_INT(gc_graph_num_nodes(o), 1);
	result got;
	CHECK_INT(run_graph(o, 17, 0, &got, &err), 0);
	gc_graph_add_output(g, "mm", &err);
	result want;
	CHECK_INT(run_graph(g, 17, 0, &want, &err), 0);
	CHECK_NEAR(rel_diff(&got, &want), 0, 0);
	free(want.v);
	free(got.v);
	gc_graph_free(o);
	gc_graph_free(g);
}

/* x [2, 24, 16] -> MatMul W [16, 40] -> Add b [40] -> GELU: form 0 is
 * com.graphcc::Gelu (what fuse-gelu makes of torch's Erf chain), 1 ONNX's
 * Gelu-20 approximate="tanh", 2 Gelu-20 without attributes. pin: the
 * MatMul's output is a graph output too, so nothing fuses into it; dbl:
 * float64, which the fused GELU does not take. */
static gc_graph *build_matmul_gelu(int form, int pin, int dbl, gc_error *err)
{
	gc_graph *g = gc_graph_new("matmul-gelu");
	rng_state = 101;
	gc_dtype t = dbl ? GC_DTYPE_DOUBLE : GC_DTYPE_FLOAT;
	gc_graph_set_opset(g, "", form ? 20 : 13, err);
	if (!form)
		gc_graph_set_opset(g, "com.graphcc", 1, err);
	int64_t xd[3] = {2, 24, 16}, wd[2] = {16, 40};
	add_linear(g, t, xd, 2, wd, 0, err);
	const char *gin[] = {"lin"}, *gout[] = {"y"};
	gc_attr tanh_attr = attr_s("approximate", "tanh");
	gc_graph_add_node(g, "gelu", form ? "" : "com.graphcc", "Gelu", 1, gin, 1, gout,
			  form == 1, &tanh_attr, err);
	gc_graph_add_output(g, "y", err);
	if (pin)
		gc_graph_add_output(g, "lin", err);
	return g;
}

static void test_matmul_gelu_fused(void)
{
	static const char *const kinds[] = {"Gelu", "GeluTanh", "Gelu"};
	for (int form = 0; form < 3; form++) {
		gc_error err = {0};
		gc_graph *g = build_matmul_gelu(form, 0, 0, &err),
			 *ref = build_matmul_gelu(form, 1, 0, &err);
		CHECK_STR(err.msg, "");
		counts c = {0};
		gc_graph *o = optimized(g, &c, &err);
		CHECK(o != NULL);
		CHECK_INT(changes(&c, "fuse-matmul-bias"), 1);
		CHECK_INT(changes(&c, "fuse-matmul-gelu"), 1);
		CHECK_INT(gc_graph_num_nodes(o), 1);
		const gc_attr *a = node_attr(o, "MatMul", "_gc_activation");
		CHECK(a && a->type == GC_ATTR_STRING && (size_t)a->n == strlen(kinds[form]) &&
		      !strncmp(a->v.s, kinds[form], (size_t)a->n));
		/* the reference keeps the GELU node (its input is an output) */
		counts rc = {0};
		gc_graph *ro = optimized(ref, &rc, &err);
		CHECK(ro != NULL);
		CHECK_INT(changes(&rc, "fuse-matmul-gelu"), 0);
		CHECK_INT(gc_graph_num_nodes(ro), 2);
		check_same_outputs(ref, o, 13);
		gc_graph_free(ro);
		gc_graph_free(o);
		gc_graph_free(ref);
		gc_graph_free(g);
	}
	/* float64: the GELU stays a node of its own */
	gc_error err = {0};
	gc_graph *g = build_matmul_gelu(2, 0, 1, &err);
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "fuse-matmul-gelu"), 0);
	CHECK_INT(gc_graph_num_nodes(o), 2);
	result got;
	CHECK_INT(run_graph(o, 13, 0, &got, &err), 0);
	free(got.v);
	gc_graph_free(o);
	gc_graph_free(g);
}

/* ---- dead nodes, the internal attributes, the driver ---- */

static void test_dead_nodes_removed(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("dead");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t d[1] = {4};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	add_random(g, "unused_w", GC_DTYPE_FLOAT, 1, d, 0, &err);
	add_random(g, "k", GC_DTYPE_FLOAT, 1, d, 0, &err);
	const char *ain[] = {"x", "k"}, *aout[] = {"y"};
	gc_graph_add_node(g, "add", "", "Add", 2, ain, 1, aout, 0, NULL, &err);
	const char *ein[] = {"x"}, *eout[] = {"e"};
	gc_graph_add_node(g, "exp", "", "Exp", 1, ein, 1, eout, 0, NULL, &err);
	const char *nin[] = {"e"}, *nout[] = {"ne"};
	gc_graph_add_node(g, "neg", "", "Neg", 1, nin, 1, nout, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o != NULL);
	CHECK_INT(changes(&c, "dead-node-removal"), 2);
	CHECK_INT(gc_graph_num_nodes(o), 1);
	CHECK(o->values[gc_graph_find(o, "unused_w")].constant == NULL);
	CHECK(o->values[gc_graph_find(o, "k")].constant != NULL);
	/* the original is untouched */
	CHECK_INT(gc_graph_num_nodes(g), 3);
	CHECK(g->values[gc_graph_find(g, "unused_w")].constant != NULL);
	gc_graph_free(o);
	gc_graph_free(g);
}

static void test_clone(void)
{
	gc_error err = {0};
	conv_case cc = {"clone", 2, 1, 2, 4, 4, 2, 3, 3, 1, 1, 1, 1, 1, 1, GC_DTYPE_FLOAT, "Relu"};
	gc_graph *g = build_conv(&cc, 0, &err);
	CHECK_STR(err.msg, "");
	gc_graph *deep = gc_graph_clone(g, &err), *shared = gc_graph_clone_for_passes(g, &err);
	CHECK(deep && shared);
	CHECK_INT(gc_graph_num_nodes(deep), gc_graph_num_nodes(g));
	CHECK_INT(gc_graph_num_nodes(shared), gc_graph_num_nodes(g));
	int32_t w = gc_graph_find(g, "W");
	CHECK(w >= 0 && gc_graph_find(deep, "W") == w && gc_graph_find(shared, "W") == w);
	CHECK(deep->values[w].constant->data != g->values[w].constant->data);
	CHECK(shared->values[w].constant->data == g->values[w].constant->data);
	CHECK_INT(memcmp(deep->values[w].constant->data, g->values[w].constant->data, 18 * 4), 0);
	result want, got;
	CHECK_INT(run_graph(g, 21, 0, &want, &err), 0);
	/* rewriting the shared copy leaves the original as it was */
	CHECK_INT(gc_run_ir_passes(shared, NULL, NULL, NULL, &err), 0);
	CHECK_INT(gc_graph_num_nodes(shared), 1);
	CHECK_INT(gc_graph_num_nodes(g), 3);
	gc_graph_free(shared);
	/* the deep copy outlives the original */
	gc_graph_free(g);
	CHECK_INT(run_graph(deep, 21, 0, &got, &err), 0);
	CHECK_NEAR(rel_diff(&got, &want), 0, 0);
	free(want.v);
	free(got.v);
	gc_graph_free(deep);
}

static void test_internal_attributes_checked(void)
{
	gc_error err = {0};
	conv_case cc = {"bad-activation", 2,   1, 2, 4, 4, 2, 1, 1, 1, 1, 1, 0, 0, 0,
			GC_DTYPE_FLOAT,	  NULL};
	gc_graph *g = build_conv(&cc, 0, &err);
	gc_edit e;
	CHECK_INT(gc_edit_begin(&e, g, &err), 0);
	gc_attr a = attr_s("_gc_activation", "Mish");
	CHECK_INT(gc_edit_set_attr(&e, 0, &a), 0);
	gc_edit_finish(&e);
	gc_program *p;
	CHECK(gc_compile(g, NULL, &p, &err) != 0);
	CHECK_CONTAINS(err.msg, "_gc_activation");
	CHECK_CONTAINS(err.msg, "Mish");
	gc_graph_free(g);
}

static void test_passes_report_and_refuse_cycles(void)
{
	gc_error err = {0};
	gc_graph *g = gc_graph_new("cycle");
	gc_graph_set_opset(g, "", 13, &err);
	int64_t d[1] = {4};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	const char *ain[] = {"x", "b"}, *aout[] = {"a"};
	gc_graph_add_node(g, "cyc_a", "", "Add", 2, ain, 1, aout, 0, NULL, &err);
	const char *bin[] = {"a"}, *bout[] = {"b"};
	gc_graph_add_node(g, "cyc_b", "", "Identity", 1, bin, 1, bout, 0, NULL, &err);
	gc_graph_add_output(g, "a", &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK(o == NULL);
	CHECK_CONTAINS(err.msg, "cycle");
	CHECK_INT(c.n, 0);
	gc_graph_free(g);
}

/* ---- Pad folded into AveragePool and Conv ---- */

typedef struct pad_case {
	const char *name;
	const char *reader; /* AveragePool, Conv or MaxPool */
	int64_t pads[8];    /* the Pad's, on [N, C, H, W] */
	const char *mode;
	float value;
	int64_t stride, ceil, cip; /* the pool's (cip -1: no attribute) */
	int64_t own[4];		   /* the reader's pads */
	int twice;		   /* a Neg reads the Pad's output too */
	int fold;		   /* whether fold-pad takes it */
} pad_case;

/* x [2, 3, 7, 9] -> Pad -> "p" -> reader (3x3) -> "y" [, Neg(p) -> "z"];
 * with `pin`, "p" is a graph output too (nothing folds). */
static gc_graph *build_pad(const pad_case *pc, int pin, gc_error *err)
{
	gc_graph *g = gc_graph_new(pc->name);
	rng_state = 77;
	gc_graph_set_opset(g, "", 13, err);
	int64_t xd[4] = {2, 3, 7, 9}, wd[4] = {4, 3, 3, 3};
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, xd, NULL, err);
	gc_tensor pt = {.dtype = GC_DTYPE_INT64, .rank = 1, .dims = {8}, .data = (void *)pc->pads};
	gc_graph_add_constant(g, "pads", &pt, err);
	add_scalar(g, "value", GC_DTYPE_FLOAT, pc->value, err);
	gc_attr mode = attr_s("mode", pc->mode);
	const char *pin_[] = {"x", "pads", "value"}, *pout[] = {"p"};
	gc_graph_add_node(g, "pad", "", "Pad", 3, pin_, 1, pout, 1, &mode, err);
	int64_t ks[2] = {3, 3}, st[2] = {pc->stride, pc->stride};
	gc_attr ra[5] = {attr_ints("kernel_shape", 2, ks), attr_ints("strides", 2, st),
			 attr_ints("pads", 4, pc->own), attr_i("ceil_mode", pc->ceil),
			 attr_i("count_include_pad", pc->cip)};
	int conv = !strcmp(pc->reader, "Conv");
	int n_attr = conv ? 4 : !strcmp(pc->reader, "MaxPool") || pc->cip < 0 ? 4 : 5;
	if (conv) {
		add_random(g, "W", GC_DTYPE_FLOAT, 4, wd, 0, err);
		ra[3] = attr_i("group", 1);
	}
	const char *rin[] = {"p", "W"}, *rout[] = {"y"};
	gc_graph_add_node(g, "reader", "", pc->reader, conv ? 2 : 1, rin, 1, rout, n_attr, ra, err);
	gc_graph_add_output(g, "y", err);
	if (pc->twice) {
		const char *nin[] = {"p"}, *nout[] = {"z"};
		gc_graph_add_node(g, "neg", "", "Neg", 1, nin, 1, nout, 0, NULL, err);
		gc_graph_add_output(g, "z", err);
	}
	if (pin)
		gc_graph_add_output(g, "p", err);
	return g;
}

static const pad_case pad_cases[] = {
    /* inception_v3's avg_pool2d(x, 3, 1, 1), and uneven pads */
    {"avg-s1", "AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, "constant", 0, 1, 0, -1, {0}, 0, 1},
    {"avg-uneven", "AveragePool", {0, 0, 1, 2, 0, 0, 2, 0}, "constant", 0, 1, 0, 0, {0}, 0, 1},
    /* the pool's windows overhang the padded input's end */
    {"avg-s2-ceil", "AveragePool", {0, 0, 0, 1, 0, 0, 1, 0}, "constant", 0, 2, 1, 0, {0}, 0, 1},
    /* the pool counts its own pads: the sums add up */
    {"avg-own-cip", "AveragePool", {0, 0, 1, 0, 0, 0, 0, 2}, "constant", 0, 2, 0, 1,
     {1, 0, 0, 1}, 0, 1},
    {"conv", "Conv", {0, 0, 2, 1, 0, 0, 0, 3}, "constant", 0, 1, 0, 0, {1, 1, 1, 1}, 0, 1},
    /* kept: its own pads not counted, the padded zeros counted */
    {"avg-own-nocip", "AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, "constant", 0, 1, 0, 0,
     {1, 0, 1, 0}, 0, 0},
    {"reflect", "AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, "reflect", 0, 1, 0, 0, {0}, 0, 0},
    {"value", "Conv", {0, 0, 1, 1, 0, 0, 1, 1}, "constant", 0.5f, 1, 0, 0, {0}, 0, 0},
    {"channel-pad", "AveragePool", {0, 1, 1, 1, 0, 0, 1, 1}, "constant", 0, 1, 0, 0, {0}, 0, 0},
    {"negative", "AveragePool", {0, 0, 1, -1, 0, 0, 1, 1}, "constant", 0, 1, 0, 0, {0}, 0, 0},
    {"twice", "AveragePool", {0, 0, 1, 1, 0, 0, 1, 1}, "constant", 0, 1, 0, 0, {0}, 1, 0},
    {"maxpool", "MaxPool", {0, 0, 1, 1, 0, 0, 1, 1}, "constant", 0, 1, 0, 0, {0}, 0, 0},
};

/* pads from a file whose sum with the pool's own overflows int64: the Pad
 * stays (no signed overflow in the pass; what is left refuses the sizes) */
static void test_pad_overflow_kept(void)
{
	int64_t h = INT64_MAX / 2 + 1;
	pad_case pc = {"overflow", "AveragePool", {0, 0, h, h, 0, 0, h, h}, "constant", 0, 1, 0, 1,
		       {h, h, h, h}, 0, 0};
	gc_error err = {0};
	gc_graph *g = build_pad(&pc, 0, &err);
	CHECK_STR(err.msg, "");
	counts c = {0};
	gc_graph *o = optimized(g, &c, &err);
	CHECK_INT(changes(&c, "fold-pad"), 0);
	if (o)
		CHECK_INT(count_op(o, "Pad"), 1);
	gc_graph_free(o);
	gc_graph_free(g);
}

static void test_pad_folded(void)
{
	for (size_t i = 0; i < sizeof pad_cases / sizeof pad_cases[0]; i++) {
		pad_case pc = pad_cases[i];
		gc_error err = {0};
		gc_graph *g = build_pad(&pc, 0, &err), *ref = build_pad(&pc, 1, &err);
		CHECK_STR(err.msg, "");
		counts c = {0};
		gc_graph *o = optimized(g, &c, &err);
		CHECK(o != NULL);
		if (changes(&c, "fold-pad") != pc.fold)
			fprintf(stderr, "case %s\n", pc.name);
		CHECK_INT(changes(&c, "fold-pad"), pc.fold);
		CHECK_INT(count_op(o, "Pad"), !pc.fold);
		if (pc.fold && strcmp(pc.reader, "Conv")) {
			const gc_attr *cip = node_attr(o, pc.reader, "count_include_pad");
			CHECK(cip && cip->v.i == 1);
		}
		if (pc.fold) {
			const gc_attr *pads = node_attr(o, pc.reader, "pads");
			CHECK(pads && pads->n == 4);
			for (int d = 0; pads && d < 4; d++)
				CHECK_INT(pads->v.ints[d], pc.pads[2 + d % 2 + 4 * (d / 2)] + pc.own[d]);
		}
		result want, got;
		CHECK_INT(run_graph(ref, 5 + (uint32_t)i, 0, &want, &err), 0);
		CHECK_INT(run_graph(o, 5 + (uint32_t)i, 0, &got, &err), 0);
		CHECK_STR(err.msg, "");
		CHECK_INT(got.n, want.n);
		double d = got.n == want.n ? rel_diff(&got, &want) : 1;
		if (d > 1e-6)
			fprintf(stderr, "case %s\n", pc.name);
		CHECK_NEAR(d, 0, 1e-6);
		free(want.v);
		free(got.v);
		gc_graph_free(o);
		gc_graph_free(ref);
		gc_graph_free(g);
	}
}

TEST_MAIN(TEST(test_conv_activation_fused), TEST(test_conv_batchnorm_folded),
	  TEST(test_batchnorm_not_constant_kept), TEST(test_activation_with_two_readers_kept),
	  TEST(test_channel_split_marked), TEST(test_rows_split_marked),
	  TEST(test_identity_chain_removed), TEST(test_dropout_removed), TEST(test_zero_pad_removed),
	  TEST(test_pad_folded), TEST(test_pad_overflow_kept),
	  TEST(test_gemm_activation_fused), TEST(test_matmul_bias_activation_fused),
	  TEST(test_matmul_gelu_fused),
	  TEST(test_dead_nodes_removed), TEST(test_clone), TEST(test_internal_attributes_checked),
	  TEST(test_passes_report_and_refuse_cycles))
