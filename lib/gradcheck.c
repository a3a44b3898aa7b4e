/*
 * gradcheck (gc_gradcheck_package in graphcc.h): for each operation of a
 * package whose manifest declares a backward (`gradient:`), on each of its
 * self-test cases, the gradient of L = sum_j sum(y_j * R_j) (R_j fixed
 * random weights, so that every output element counts differently) with
 * respect to each differentiable input, two ways:
 *
 *  - analytic: a graph of the operation, L and a Gradient node, compiled
 *    with the package, so the declared backward operation runs exactly as
 *    in a model (bound, selected, its own kernel);
 *  - numeric: central finite differences of L, element by element (a
 *    sample of at most MAX_PROBES elements per input), from the forward
 *    graph alone.
 *
 * In float64 when every float input of the operation accepts it (the test's
 * float32 values are widened), else in float32 with a larger step. The error
 * of an element is |analytic - numeric| / max(1, |numeric|); each input's
 * worst is reported with its position, and is a failure above tolerance.
 */
#include <graphcc/graphcc.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/build.h"
#include "manifest-tests.h"
#include "package-impl.h"

#define MAX_PROBES 2048
#define MAX_IO 32

typedef struct gcheck {
	const gc_registry *reg;
	const gc_op_spec *op;
	const gc_op_test *test;
	gc_dtype dt;		/* float inputs run as this */
	gc_tensor in[MAX_IO];	/* the case's inputs, widened */
	bool diff[MAX_IO];	/* input i is differentiated */
	gc_tensor r[MAX_IO];	/* R_j */
	int32_t n_out;
	gc_error *err;
} gcheck;

static bool float_dt(gc_dtype t)
{
	return t == GC_DTYPE_FLOAT || t == GC_DTYPE_DOUBLE;
}

static double at(const gc_tensor *t, int64_t i)
{
	return t->dtype == GC_DTYPE_DOUBLE ? ((const double *)t->data)[i]
					   : ((const float *)t->data)[i];
}

static void put(gc_tensor *t, int64_t i, double v)
{
	if (t->dtype == GC_DTYPE_DOUBLE)
		((double *)t->data)[i] = v;
	else
		((float *)t->data)[i] = (float)v;
}

/* A tensor of dtype dt shaped like `like` (data zeroed). */
static int alloc_like(gc_tensor *t, const gc_tensor *like, gc_dtype dt, gc_error *err)
{
	*t = (gc_tensor){ .dtype = dt, .rank = like->rank };
	memcpy(t->dims, like->dims, sizeof t->dims);
	t->data = gc_calloc((size_t)gc_tensor_nbytes(t) + 8, 1);
	return t->data ? 0 : gc_error_set(err, GC_ENOMEM, "out of memory");
}

/* The graph: inputs "in<i>" (differentiated ones as graph inputs, the
 * others as constants), the node, L = Sum_j ReduceSum(y_j * R_j); with
 * `with_grad`, a Gradient node too, outputs "grad<i>". */
static int build(gcheck *c, bool with_loss, bool with_grad, gc_graph **out)
{
	const gc_op_spec *op = c->op;
	gc_error *err = c->err;
	gc_graph *g = gc_graph_new("gradcheck");
	char names[MAX_IO][32], onames[MAX_IO][32];
	const char *ins[MAX_IO], *outs[MAX_IO], *xs[MAX_IO], *gs[MAX_IO], *sums[MAX_IO];
	int32_t nx = 0;
	int rc = !g ? gc_error_set(err, GC_ENOMEM, "out of memory") : 0;
	if (!rc)
		rc = gc_graph_set_opset(g, "", 13, err);
	if (!rc)
		rc = gc_graph_set_opset(g, op->domain, op->version < 0 ? 1 : op->version, err);
	for (int32_t i = 0; i < c->test->n_inputs && !rc; i++) {
		snprintf(names[i], sizeof names[i], "in%d", (int)i);
		ins[i] = names[i];
		const gc_tensor *t = &c->in[i];
		rc = c->diff[i] ? gc_graph_add_input(g, names[i], t->dtype, t->rank, t->dims, NULL, err)
				: gc_graph_add_constant(g, names[i], t, err);
		if (c->diff[i]) {
			xs[nx] = names[i];
			snprintf(onames[nx], sizeof onames[nx], "grad%d", (int)i);
			gs[nx] = onames[nx];
			nx++;
		}
	}
	char ynames[MAX_IO][32], snames[MAX_IO][32];
	gc_attr attrs[MAX_IO];
	int32_t na = 0;
	for (int32_t k = 0; k < c->test->n_params && na < MAX_IO; k++) /* params: attributes */
		attrs[na++] = c->test->params[k].attr;
	for (int32_t j = 0; j < c->n_out; j++) {
		snprintf(ynames[j], sizeof ynames[j], "y%d", (int)j);
		outs[j] = ynames[j];
	}
	if (!rc)
		rc = gc_graph_add_node(g, "op", op->domain, op->type, c->test->n_inputs, ins, c->n_out,
				       outs, na, attrs, err);
	for (int32_t j = 0; j < c->n_out && !rc && with_loss; j++) {
		char rn[32], pn[32];
		snprintf(rn, sizeof rn, "R%d", (int)j);
		snprintf(pn, sizeof pn, "p%d", (int)j);
		snprintf(snames[j], sizeof snames[j], "s%d", (int)j);
		const char *mi[2] = { ynames[j], rn }, *pr = pn;
		sums[j] = snames[j];
		rc = gc_graph_add_constant(g, rn, &c->r[j], err);
		if (!rc)
			rc = gc_graph_add_node(g, pn, "", "Mul", 2, mi, 1, &pr, 0, NULL, err);
		gc_attr kd = { .name = "keepdims", .type = GC_ATTR_INT, .n = 1, .v.i = 0 };
		if (!rc)
			rc = gc_graph_add_node(g, snames[j], "", "ReduceSum", 1, &pr, 1, &sums[j], 1, &kd,
					       err);
	}
	const char *loss = "L";
	if (!rc && with_loss)
		rc = gc_graph_add_node(g, "L", "", "Sum", c->n_out, sums, 1, &loss, 0, NULL, err);
	if (!rc && with_loss)
		rc = gc_graph_add_output(g, "L", err);
	for (int32_t j = 0; j < c->n_out && !rc && !with_loss; j++)
		rc = gc_graph_add_output(g, ynames[j], err);
	if (!rc && with_grad)
		rc = gc_graph_gradient(g, "L", nx, xs, gs, err);
	for (int32_t k = 0; k < nx && !rc && with_grad; k++)
		rc = gc_graph_add_output(g, gs[k], err);
	if (rc) {
		gc_graph_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

static int compile_and_session(gcheck *c, bool with_loss, bool with_grad, gc_program **p,
			       gc_session **s)
{
	gc_graph *g = NULL;
	gc_compile_options co = { .size = sizeof co, .registry = c->reg };
	int rc = build(c, with_loss, with_grad, &g);
	if (!rc)
		rc = gc_compile(g, &co, p, c->err);
	gc_graph_free(g);
	if (!rc)
		rc = gc_session_new(*p, &(gc_session_options){ .size = sizeof(gc_session_options),
							       .threads = 1 },
				    s, c->err);
	for (int32_t i = 0, k = 0; !rc && i < c->test->n_inputs; i++)
		if (c->diff[i])
			rc = gc_session_set_input(*s, k++, &c->in[i], c->err);
	return rc;
}

static int loss_at(gcheck *c, gc_session *s, int32_t k, const gc_tensor *x, double *l)
{
	int rc = gc_session_set_input(s, k, x, c->err);
	if (!rc)
		rc = gc_session_run(s, c->err);
	if (!rc)
		*l = at(gc_session_output(s, 0), 0);
	return rc;
}

/* "[i, j, k]" of flat index e in shape t. */
static void position(const gc_tensor *t, int64_t e, char *buf, size_t len)
{
	int64_t idx[GC_MAX_RANK];
	for (int d = t->rank - 1; d >= 0; d--) {
		idx[d] = t->dims[d] ? e % t->dims[d] : 0;
		e = t->dims[d] ? e / t->dims[d] : 0;
	}
	size_t w = (size_t)snprintf(buf, len, "[");
	for (int d = 0; d < t->rank && w < len; d++)
		w += (size_t)snprintf(buf + w, len - w, "%s%" PRId64, d ? ", " : "", idx[d]);
	if (w < len)
		snprintf(buf + w, len - w, "]");
}

/* Compares the two gradients of every differentiated input; one line each. */
static int compare(gcheck *c, FILE *out, double tol, gc_selftest_counts *counts)
{
	gc_program *pg = NULL, *pf = NULL;
	gc_session *sg = NULL, *sf = NULL;
	int rc = compile_and_session(c, true, true, &pg, &sg);
	if (!rc)
		rc = gc_session_run(sg, c->err);
	if (!rc)
		rc = compile_and_session(c, true, false, &pf, &sf);
	double h = c->dt == GC_DTYPE_DOUBLE ? 1e-6 : 1e-2;
	for (int32_t i = 0, k = 0; !rc && i < c->test->n_inputs; i++) {
		if (!c->diff[i])
			continue;
		const gc_tensor *ga = gc_session_output(sg, 1 + k);
		gc_tensor x;
		if ((rc = alloc_like(&x, &c->in[i], c->dt, c->err)))
			break;
		memcpy(x.data, c->in[i].data, (size_t)gc_tensor_nbytes(&x));
		int64_t n = gc_tensor_numel(&x), stride = n > MAX_PROBES ? n / MAX_PROBES + 1 : 1;
		double worst = -1, wa = 0, wn = 0;
		int64_t we = 0;
		for (int64_t e = 0; e < n && !rc; e += stride) {
			double x0 = at(&x, e), step = h * (fabs(x0) > 1 ? fabs(x0) : 1), lp = 0, lm = 0;
			put(&x, e, x0 + step);
			rc = loss_at(c, sf, k, &x, &lp);
			put(&x, e, x0 - step);
			if (!rc)
				rc = loss_at(c, sf, k, &x, &lm);
			put(&x, e, x0);
			double num = (lp - lm) / (2 * step), an = at(ga, e);
			double d = fabs(an - num) / (fabs(num) > 1 ? fabs(num) : 1);
			if (!(d <= worst)) { /* NaN counts as the worst */
				worst = d;
				we = e;
				wa = an;
				wn = num;
			}
		}
		if (!rc) /* the input as it was, for the next input's probes */
			rc = gc_session_set_input(sf, k, &c->in[i], c->err);
		gc_free(x.data);
		if (rc)
			break;
		char pos[160];
		position(&c->in[i], we, pos, sizeof pos);
		bool ok = worst <= tol;
		fprintf(out,
			"%s  %s / %s (line %d) / input '%s': worst relative error %.2e at %s "
			"(analytic %.9g, numeric %.9g; %s, %" PRId64 " of %" PRId64
			" elements probed; tolerance %.1e)\n",
			ok ? "PASS" : "FAIL", c->op->name, c->test->name, c->test->line,
			c->op->inputs[i].name, worst, pos, wa, wn,
			c->dt == GC_DTYPE_DOUBLE ? "float64" : "float32", (n + stride - 1) / stride, n,
			tol);
		if (ok)
			counts->passed++;
		else
			counts->failed++;
		k++;
	}
	gc_session_free(sg);
	gc_session_free(sf);
	gc_program_free(pg);
	gc_program_free(pf);
	return rc;
}

/* Sets up c for one test case: widened inputs, the differentiated ones,
 * R_j (shaped by a forward compile). */
static int prepare(gcheck *c)
{
	const gc_op_spec *op = c->op;
	const gc_op_test *t = c->test;
	bool wide = true;
	for (int32_t i = 0; i < op->n_inputs; i++) {
		uint32_t m = op->inputs[i].dtypes;
		if (i < t->n_inputs && float_dt(t->inputs[i].t.dtype) && m &&
		    !(m & (1u << GC_DTYPE_DOUBLE)))
			wide = false;
	}
	c->dt = wide ? GC_DTYPE_DOUBLE : GC_DTYPE_FLOAT;
	if (t->n_inputs > MAX_IO || op->n_outputs > MAX_IO)
		return gc_error_set(c->err, GC_ELIMIT, "%s: too many inputs or outputs", op->name);
	for (int32_t i = 0; i < t->n_inputs; i++) {
		const gc_tensor *src = &t->inputs[i].t;
		gc_tensor loaded = { 0 };
		if (t->inputs[i].npy && gc_npy_read(t->inputs[i].npy, &loaded, c->err))
			return c->err->code;
		if (t->inputs[i].npy)
			src = &loaded;
		bool f = float_dt(src->dtype);
		int rc = alloc_like(&c->in[i], src, f ? c->dt : src->dtype, c->err);
		int64_t n = gc_tensor_numel(src);
		for (int64_t e = 0; !rc && f && e < n; e++)
			put(&c->in[i], e, at(src, e));
		if (!rc && !f)
			memcpy(c->in[i].data, src->data, (size_t)gc_tensor_nbytes(src));
		gc_tensor_release(&loaded);
		if (rc)
			return rc;
		bool nd = op->grad->not_diff[i];
		for (int32_t k = 0; k < op->grad->n_outputs; k++)
			c->diff[i] |= op->grad->outputs[k] == i && !nd && f;
	}
	c->n_out = op->n_outputs;
	/* the outputs' shapes: compile the forward node alone */
	gc_graph *g = NULL;
	gc_program *p = NULL;
	gc_compile_options co = { .size = sizeof co, .registry = c->reg };
	int rc = build(c, false, false, &g);
	if (!rc)
		rc = gc_compile(g, &co, &p, c->err);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int32_t j = 0; !rc && j < c->n_out; j++) {
		const gc_tensor *y = gc_program_output(p, j, NULL);
		if ((rc = alloc_like(&c->r[j], y, y->dtype, c->err)))
			break;
		for (int64_t e = 0; e < gc_tensor_numel(y); e++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			put(&c->r[j], e, 0.5 + (double)(seed >> 11) / 9007199254740992.0);
		}
	}
	gc_program_free(p);
	gc_graph_free(g);
	return rc;
}

static void release(gcheck *c)
{
	for (int32_t i = 0; i < MAX_IO; i++) {
		gc_free(c->in[i].data);
		gc_free(c->r[i].data);
	}
}

int gc_gradcheck_package(const char *manifest, const char *only_op, double tolerance, FILE *out,
			 gc_selftest_counts *counts, gc_error *err)
{
	gc_package *pkg = NULL;
	gc_registry *reg = NULL;
	gc_pool *pool = NULL;
	memset(counts, 0, sizeof *counts);
	int rc = gc_manifest_parse(manifest, &pkg, NULL, NULL, err);
	if (!rc && !(reg = gc_registry_new()))
		rc = gc_error_set(err, GC_ENOMEM, "out of memory");
	if (!rc && !(pool = gc_pool_new()))
		rc = gc_error_set(err, GC_ENOMEM, "out of memory");
	if (!rc)
		rc = gc_registry_load(reg, manifest, err);
	int matched = 0;
	for (int32_t i = 0; !rc && i < pkg->n_ops; i++) {
		const gc_op_spec *op = &pkg->ops[i];
		if (only_op && strcmp(only_op, op->name) && strcmp(only_op, op->type))
			continue;
		matched++;
		if (!op->grad || !op->grad->op)
			continue;
		gc_op_test *tests;
		int32_t n;
		if ((rc = gc_manifest_tests_load(manifest, i, op, pool, &tests, &n, err)))
			break;
		if (n == 0) {
			fprintf(out, "FAIL  %s: declares a gradient but has no tests to take inputs "
				     "from (in %s:%d)\n", op->name, manifest, op->line);
			counts->failed++;
		}
		for (int32_t k = 0; k < n; k++) {
			gcheck c = { .reg = reg, .op = op, .test = &tests[k], .err = err };
			gc_error local = { 0 };
			c.err = &local;
			int crc = prepare(&c);
			if (!crc)
				crc = compare(&c, out, tolerance > 0 ? tolerance
								     : c.dt == GC_DTYPE_DOUBLE ? 1e-6 : 1e-2,
					      counts);
			if (crc) {
				fprintf(out, "FAIL  %s / %s (line %d): %s\n", op->name, tests[k].name,
					tests[k].line, local.msg);
				counts->failed++;
			}
			release(&c);
		}
	}
	if (!rc && only_op && !matched)
		rc = gc_error_set(err, GC_EINVAL, "%s: no operation named '%s'", manifest, only_op);
	gc_pool_free(pool);
	gc_registry_free(reg);
	gc_package_free(pkg);
	return rc;
}
