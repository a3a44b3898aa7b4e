/*
 * Self-tests of an op package (gc_selftest_package in graphcc.h). Each test case becomes a
 * one-node graph compiled with the package (so verify, shape inference and
 * selection run exactly as for a model); then every implementation of the
 * operation for this build's backends runs on the case directly, its
 * outputs between guard zones, twice (with different fill bytes, so a byte
 * the kernel does not write shows), and from two threads at once.
 */
#include <graphcc/graphcc.h>

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <graphcc/debug.h>

#include "../runtime/build.h"
#include "manifest-tests.h"
#include "package-impl.h"

#define GUARD 64
#define MAX_IO 64


typedef struct st {
	FILE *out;
	gc_selftest_counts *c;
	char where[400]; /* "Op / test" */
} st;

static void check(st *s, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void check(st *s, bool ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(s->out, "%s  %s: ", ok ? "PASS" : "FAIL", s->where);
	vfprintf(s->out, fmt, ap);
	fputc('\n', s->out);
	va_end(ap);
	/* Out before the next kernel runs: a crash ends the process. */
	fflush(s->out);
	if (ok)
		s->c->passed++;
	else
		s->c->failed++;
}

/* Element i of a tensor of type dt, as a double; a bool byte as written
 * (a kernel writing 2 for true differs from one writing 1). */
static double element(const void *data, gc_dtype dt, int64_t i)
{
	if (dt == GC_DTYPE_BOOL)
		return ((const uint8_t *)data)[i];
	return gc_kv_load(&(gc_tensor){.dtype = dt, .data = (void *)data}, i);
}

/* Whether got is within tol of want everywhere; the worst element in *at,
 * its values in *g, *w. */
static bool close_enough(const void *got, const void *want, gc_dtype dt, int64_t n, double tol,
			 double *max_abs, int64_t *at, double *g, double *w)
{
	bool ok = true;
	*max_abs = 0;
	*at = -1;
	for (int64_t i = 0; i < n; i++) {
		double a = element(got, dt, i), b = element(want, dt, i);
		if (isnan(a) && isnan(b))
			continue;
		double d = fabs(a - b);
		if (isnan(d))
			d = INFINITY;
		if (a == b)
			d = 0;
		bool bad = d > tol * fmax(1.0, fabs(b));
		if (d > *max_abs || (bad && ok)) {
			*max_abs = d;
			*at = i;
			*g = a;
			*w = b;
		}
		if (bad)
			ok = false;
	}
	return ok;
}

/* ------------------------------------------------------- one flavour */

typedef struct frun {
	const gc_custom *c;
	const gc_impl_spec *im;
	const gc_tensor *in; /* n_in, data set (absent: dtype UNDEFINED) */
	int32_t n_in, n_out;
	const gc_tensor *outs; /* inferred */
	gc_fnptr kernel;
	uint64_t scratch_bytes;
	void *state;
	bool initialised;
	gc_fnptr destroy;
	const char *selftest; /* gc_crash_selftest of the threads it runs on */
	char where[1200];     /* the crash context of its calls */
} frun;

/* Names the package function about to run for crash capture. */
static void frun_context(frun *f, const char *what, const char *symbol)
{
	snprintf(f->where, sizeof f->where, "%s %s:%s of flavour '%s'", what, f->im->impl, symbol,
		 f->im->type);
	gc_crash_context = f->where;
}

static void views(const frun *f, CustomOpIOTensor *v, int64_t *dims, void *const *outs,
		  bool init_only)
{
	for (int32_t i = 0; i < f->n_in + f->n_out; i++) {
		bool is_in = i < f->n_in;
		const gc_tensor *t = is_in ? &f->in[i] : &f->outs[i - f->n_in];
		bool absent = t->dtype == GC_DTYPE_UNDEFINED;
		gc_custom_view(&v[i], dims + (size_t)i * GC_MAX_RANK, absent ? NULL : t,
			       is_in ? f->c->in_max_dims[i] : f->c->out_max_dims[i - f->n_in]);
		if (!absent)
			v[i].data = is_in ? t->data : init_only ? NULL : outs[i - f->n_in];
	}
}

static void ctx_for(const frun *f, GcOpContext *ctx, gc_custom_host *host)
{
	gc_custom_ctx_init(ctx, host, f->c->op_name, f->c->domain, f->c->op_type, "selftest",
			   f->im->backend, f->im->type, f->im->config);
	ctx->num_threads = 1;
}

static gc_custom_args frun_args(const frun *f, CustomOpIOTensor *v)
{
	return (gc_custom_args){ .in = v, .n_in = f->n_in, .out = v + f->n_in, .n_out = f->n_out,
				 .params = f->c->params, .n_params = f->c->n_params };
}

/* 0 ready; 1 declined (why in msg); -1 failed (msg). */
static int frun_setup(frun *f, char *msg, size_t len)
{
	gc_error e = { 0 };
	const gc_impl_spec *im = f->im;
	if (!(f->kernel = gc_dynlib_fn(im->lib, im->symbol, &e)))
		return snprintf(msg, len, "%.500s", e.msg), -1;
	if (gc_custom_check_iface(im->impl, im->graphcc_iface,
				  im->init || im->destroy || im->scratch || im->scratch_bytes, &e))
		return snprintf(msg, len, "%.500s", e.msg), -1;
	CustomOpIOTensor v[MAX_IO];
	int64_t dims[MAX_IO * GC_MAX_RANK];
	gc_custom_args a = frun_args(f, v);
	GcOpContext ctx;
	gc_custom_host host;
	f->scratch_bytes = im->has_scratch_bytes ? im->scratch_bytes : 0;
	if (im->scratch) {
		gc_fnptr fn = gc_dynlib_fn(im->lib, im->scratch, &e);
		if (!fn)
			return snprintf(msg, len, "%.500s", e.msg), -1;
		views(f, v, dims, NULL, true);
		ctx_for(f, &ctx, &host);
		uint64_t b = 0;
		frun_context(f, "scratch function", im->scratch);
		GcStatus sst = gc_custom_call_scratch(fn, &ctx, &a, &b);
		gc_crash_context = NULL;
		if (sst != GC_STATUS_OK)
			return snprintf(msg, len, "scratch function: %s", host.msg), 1;
		if (b > (uint64_t)1 << 34)
			return snprintf(msg, len, "scratch function asks for %" PRIu64 " bytes", b), -1;
		f->scratch_bytes = b;
	}
	if (im->destroy && !(f->destroy = gc_dynlib_fn(im->lib, im->destroy, &e)))
		return snprintf(msg, len, "%.500s", e.msg), -1;
	if (im->init) {
		gc_fnptr init = gc_dynlib_fn(im->lib, im->init, &e);
		if (!init)
			return snprintf(msg, len, "%.500s", e.msg), -1;
		views(f, v, dims, NULL, true);
		ctx_for(f, &ctx, &host);
		frun_context(f, "init", im->init);
		GcStatus stt = gc_custom_call_init(init, &ctx, &a);
		gc_crash_context = NULL;
		f->state = ctx.state;
		if (stt != GC_STATUS_OK)
			return snprintf(msg, len, "init: %s", host.msg), 1;
		f->initialised = true;
	}
	return 0;
}

static void frun_teardown(frun *f)
{
	if (f->initialised && f->destroy) {
		GcOpContext ctx;
		gc_custom_host host;
		ctx_for(f, &ctx, &host);
		ctx.state = f->state;
		frun_context(f, "destroy", f->im->destroy);
		gc_custom_call_destroy(f->destroy, &ctx);
		gc_crash_context = NULL;
	}
	f->initialised = false;
}

/* One kernel call into outs. 0 ok, 1 declined, -1 failed (msg). */
static int frun_call(const frun *f, void *const *outs, char *msg, size_t len)
{
	CustomOpIOTensor v[MAX_IO];
	int64_t dims[MAX_IO * GC_MAX_RANK];
	views(f, v, dims, outs, false);
	void *scratch = NULL;
	if (f->scratch_bytes) {
		if (!(scratch = gc_aligned_alloc(64, (size_t)f->scratch_bytes, 1)))
			return snprintf(msg, len, "out of memory for scratch"), -1;
	}
	int rc = 0;
	GcOpContext ctx;
	gc_custom_host host;
	ctx_for(f, &ctx, &host);
	ctx.state = f->state;
	ctx.scratch = scratch;
	ctx.scratch_bytes = scratch ? f->scratch_bytes : 0;
	gc_custom_args a = frun_args(f, v);
	/* f->where is set by run_flavour; threads share it read-only. */
	gc_custom_ctx_services(&ctx);
	gc_crash_context = f->where;
	GcStatus st = gc_custom_call_kernel(f->kernel, f->im->graphcc_iface, &ctx, &a);
	gc_crash_context = NULL;
	gc_custom_host_release(&host);
	if (st != GC_STATUS_OK) {
		snprintf(msg, len, "%s", host.msg[0] ? host.msg : "(no reason given)");
		rc = 1;
	}
	gc_free(scratch);
	return rc;
}

/* Output buffers with guard zones before and after. */
typedef struct gbufs {
	unsigned char *base[MAX_IO];
	void *data[MAX_IO];
	size_t bytes[MAX_IO];
	int n;
} gbufs;

static int gbufs_alloc(gbufs *g, const frun *f, unsigned char fill)
{
	memset(g, 0, sizeof *g);
	g->n = f->n_out;
	for (int i = 0; i < f->n_out; i++) {
		g->bytes[i] = (size_t)gc_tensor_nbytes(&f->outs[i]);
		g->base[i] = gc_malloc(g->bytes[i] + 2 * GUARD);
		if (!g->base[i])
			return -1;
		memset(g->base[i], fill, g->bytes[i] + 2 * GUARD);
		g->data[i] = g->base[i] + GUARD;
	}
	return 0;
}

static void gbufs_free(gbufs *g)
{
	for (int i = 0; i < g->n; i++)
		gc_free(g->base[i]);
	g->n = 0;
}

/* The first guard byte changed: offset from the output's start (negative:
 * before it), or 0 with *ok when none. */
static bool guards_intact(const gbufs *g, int i, unsigned char fill, long *off)
{
	for (int k = 0; k < GUARD; k++)
		if (g->base[i][k] != fill)
			return *off = (long)k - GUARD, false;
	for (int k = 0; k < GUARD; k++)
		if (g->base[i][GUARD + g->bytes[i] + (size_t)k] != fill)
			return *off = (long)(g->bytes[i] + (size_t)k), false;
	return true;
}

typedef struct thread_arg {
	const frun *f;
	gbufs g;
	int rc;
	char msg[256];
} thread_arg;

static void *thread_main(void *p)
{
	thread_arg *a = p;
	gc_crash_selftest = a->f->selftest;
	a->rc = frun_call(a->f, a->g.data, a->msg, sizeof a->msg);
	return NULL;
}

/* ------------------------------------------------------- one test case */

typedef struct flav_result {
	const gc_impl_spec *im;
	bool ran;
	gbufs g; /* first run's outputs */
} flav_result;

static bool wants(const gc_op_test *t, const char *flavour)
{
	if (!t->flavours)
		return true;
	for (int32_t i = 0; i < t->n_flavours; i++)
		if (!strcmp(t->flavours[i], flavour))
			return true;
	return false;
}

/* Whether flavour im is valid for the case (its accepts: rules); when
 * not, says so (it is not run). */
static bool valid_for(st *s, const char *where, const gc_op_spec *op, const gc_impl_spec *im,
		      gc_tensor *in, int32_t n_in)
{
	gc_tensor *inp[MAX_IO];
	char why[400];
	for (int32_t i = 0; i < n_in && i < MAX_IO; i++)
		inp[i] = in[i].dtype == GC_DTYPE_UNDEFINED ? NULL : &in[i];
	if (gc_impl_accepts(op, im, inp, n_in, why, sizeof why))
		return true;
	fprintf(s->out, "SKIP  %s / %s: not valid for the case: %s\n", where, im->type, why);
	fflush(s->out);
	return false;
}

static const char *shape_of(const gc_tensor *t, char *buf, size_t len)
{
	char sb[128];
	snprintf(buf, len, "%s %s", gc_dtype_name(t->dtype), gc_shape_str(t->dims, t->rank, sb, sizeof sb));
	return buf;
}

/* One test case of one operation on one backend, as it goes through the
 * steps of run_case. */
typedef struct case_run {
	st *s;
	const gc_registry *reg;
	const gc_op_spec *op;
	const gc_op_test *t;
	const char *backend;
	char base_where[400];
	gc_tensor in[MAX_IO], want[MAX_IO];
	bool in_owned[MAX_IO], want_owned[MAX_IO];
	int32_t n_in, n_out;
	gc_graph *g;
	gc_program *p;
	const gc_custom *c; /* the binding compile chose */
	flav_result fr[MAX_IO];
	int32_t n_fr;
	/* the graph's inputs (not constants) and their values */
	char names[2 * MAX_IO][64];
	gc_input_value values[MAX_IO];
	int32_t n_values;
} case_run;

/* The case's inputs and expected outputs (inline or from .npy files). */
static bool load_tensors(case_run *cr)
{
	gc_error e = { 0 };
	const gc_op_test *t = cr->t;
	for (int32_t i = 0; i < cr->n_in; i++) {
		const gc_test_tensor *tt = &t->inputs[i];
		if (!tt->npy) {
			cr->in[i] = tt->t;
		} else if (gc_npy_read(tt->npy, &cr->in[i], &e)) {
			check(cr->s, false, "input %d (line %d): %s", i, tt->line, e.msg);
			return false;
		} else {
			cr->in_owned[i] = true;
		}
	}
	for (int32_t i = 0; t->outputs && i < cr->n_out; i++) {
		const gc_test_tensor *tt = &t->outputs[i];
		if (!tt->npy) {
			cr->want[i] = tt->t;
		} else if (gc_npy_read(tt->npy, &cr->want[i], &e)) {
			check(cr->s, false, "expected output %d (line %d): %s", i, tt->line, e.msg);
			return false;
		} else {
			cr->want_owned[i] = true;
		}
	}
	return true;
}

/* The case as a one-node graph, compiled with the package: verify, shape
 * inference and selection run as for a model. */
static bool compile_case(case_run *cr)
{
	const gc_op_spec *op = cr->op;
	const gc_op_test *t = cr->t;
	gc_error e = { 0 };
	gc_graph *g = cr->g = gc_graph_new(op->file);
	const char *in_names[MAX_IO], *out_names[MAX_IO];
	gc_attr attrs[MAX_IO];
	int32_t n_attr = 0;
	bool built = g && !gc_graph_set_opset(g, "", 17, &e) &&
		     !gc_graph_set_opset(g, op->domain, op->version >= 0 ? op->version : 1, &e);
	for (int32_t i = 0; built && i < cr->n_in; i++) {
		const gc_io_spec *io = &op->inputs[i < op->n_inputs ? i : op->n_inputs - 1];
		snprintf(cr->names[i], sizeof cr->names[i], "%s", io->name);
		for (int32_t j = 0; j < i; j++)
			if (!strcmp(cr->names[j], cr->names[i]))
				snprintf(cr->names[i], sizeof cr->names[i], "%s_%d", io->name, i);
		in_names[i] = cr->names[i];
		if (io->constant) {
			built = !gc_graph_add_constant(g, cr->names[i], &cr->in[i], &e);
		} else {
			built = !gc_graph_add_input(g, cr->names[i], cr->in[i].dtype, cr->in[i].rank,
						    cr->in[i].dims, NULL, &e);
			cr->values[cr->n_values].name = cr->names[i];
			cr->values[cr->n_values++].value = &cr->in[i];
		}
	}
	for (int32_t i = 0; i < cr->n_out; i++) {
		snprintf(cr->names[MAX_IO + i], sizeof cr->names[0], "%s_out", op->outputs[i].name);
		out_names[i] = cr->names[MAX_IO + i];
	}
	for (int32_t i = 0; i < t->n_params && i < MAX_IO; i++)
		attrs[n_attr++] = t->params[i].attr;
	built = built && !gc_graph_add_node(g, "selftest", op->domain, op->type, cr->n_in,
					    in_names, cr->n_out, out_names, n_attr, attrs, &e);
	for (int32_t i = 0; built && i < cr->n_out; i++)
		built = !gc_graph_add_output(g, out_names[i], &e);
	if (!built) {
		check(cr->s, false, "building the test graph: %s", e.msg[0] ? e.msg : "out of memory");
		return false;
	}
	/* No input values: a pure operation would be run at compile time, on
	 * the very buffers the checks below compare with. */
	gc_compile_options co = { .registry = cr->reg, .backend = cr->backend, .no_fold = 1,
				  .no_optimize = 1 };
	if (gc_compile(g, &co, &cr->p, &e)) {
		check(cr->s, false, "verify, shape inference and selection accept the case: %s",
		      e.msg);
		return false;
	}
	for (int32_t k = 0; k < cr->p->n_nodes; k++)
		if (cr->p->nodes[k].custom)
			cr->c = cr->p->nodes[k].custom;
	if (!cr->c) {
		check(cr->s, false, "graphcc bug: the test graph has no custom node");
		return false;
	}
	if (cr->c->n_in + cr->c->n_out > MAX_IO) {
		check(cr->s, false, "more than %d inputs and outputs", MAX_IO);
		return false;
	}
	check(cr->s, true, "verify, shape inference and selection accept the case (selected '%s')",
	      cr->c->flavour);
	/* Inferred outputs against the expected ones. */
	for (int32_t i = 0; t->outputs && i < cr->n_out; i++) {
		char a[160], b[160];
		const gc_tensor *w = &cr->want[i], *o = &cr->c->outs[i];
		bool same = w->dtype == o->dtype && w->rank == o->rank;
		for (int k = 0; same && k < w->rank; k++)
			same = w->dims[k] == o->dims[k];
		check(cr->s, same, "inferred output %d ('%s') is %s; expected %s", i,
		      op->outputs[i].name, shape_of(o, a, sizeof a), shape_of(w, b, sizeof b));
		if (!same)
			return false;
	}
	return true;
}

/* The kernel's first run into r->g (0xA5 guards): it leaves its inputs
 * alone and writes only inside its outputs. */
static bool first_run(case_run *cr, frun *f, flav_result *r, bool selected)
{
	const gc_op_spec *op = cr->op;
	char msg[600] = "";
	void *copies[MAX_IO] = { 0 };
	bool ok = false;
	for (int32_t i = 0; i < cr->n_in; i++)
		if (cr->in[i].data &&
		    (copies[i] = gc_malloc((size_t)gc_tensor_nbytes(&cr->in[i]) + 1)))
			memcpy(copies[i], cr->in[i].data, (size_t)gc_tensor_nbytes(&cr->in[i]));
	int rc = frun_call(f, r->g.data, msg, sizeof msg);
	if (rc) {
		check(cr->s, rc > 0 && !selected, "kernel %s: %s", rc > 0 ? "declined" : "failed",
		      msg);
		goto out;
	}
	bool in_ok = true;
	for (int32_t i = 0; i < cr->n_in; i++) {
		size_t nb = (size_t)gc_tensor_nbytes(&cr->in[i]);
		if (!copies[i] || !memcmp(copies[i], cr->in[i].data, nb))
			continue;
		check(cr->s, false, "kernel '%s' wrote into its input %d ('%s')", r->im->symbol, i,
		      op->inputs[i < op->n_inputs ? i : op->n_inputs - 1].name);
		memcpy(cr->in[i].data, copies[i], nb);
		in_ok = false;
	}
	if (in_ok)
		check(cr->s, true, "kernel '%s' runs and leaves its inputs alone", r->im->symbol);
	bool guard_ok = true;
	for (int32_t i = 0; i < cr->n_out; i++) {
		long off;
		if (!guards_intact(&r->g, i, 0xA5, &off)) {
			check(cr->s, false,
			      "wrote outside output %d ('%s', %zu bytes as inferred): byte offset %ld",
			      i, op->outputs[i].name, r->g.bytes[i], off);
			guard_ok = false;
		}
	}
	if (guard_ok)
		check(cr->s, true, "writes only inside its outputs (guard zones intact)");
	ok = true;
out:
	for (int32_t i = 0; i < cr->n_in; i++)
		gc_free(copies[i]);
	return ok;
}

/* Second run, other fill: identical bytes = deterministic, and every byte
 * of the inferred outputs is written. */
static void second_run(case_run *cr, const frun *f, const flav_result *r)
{
	const gc_op_spec *op = cr->op;
	char msg[600] = "";
	gbufs g2;
	if (gbufs_alloc(&g2, f, 0x5A)) {
		check(cr->s, false, "out of memory for the outputs");
		gbufs_free(&g2);
		return;
	}
	bool same = frun_call(f, g2.data, msg, sizeof msg) == 0;
	for (int32_t i = 0; same && i < cr->n_out; i++) {
		if (!memcmp(r->g.data[i], g2.data[i], r->g.bytes[i]))
			continue;
		size_t at = 0;
		const unsigned char *a = r->g.data[i], *b = g2.data[i];
		while (a[at] == b[at])
			at++;
		same = false;
		if (a[at] == 0xA5 && b[at] == 0x5A)
			check(cr->s, false,
			      "does not write byte %zu of output %d ('%s'): the inferred shape is "
			      "larger than what the kernel fills",
			      at, i, op->outputs[i].name);
		else
			check(cr->s, false, "two runs differ at byte %zu of output %d ('%s')", at, i,
			      op->outputs[i].name);
	}
	if (same)
		check(cr->s, true, "fills every byte of its outputs; two runs give identical bytes");
	gbufs_free(&g2);
}

/* Two threads at once (per-node state shared, as two sessions of one
 * program share it) give the first run's bytes. */
static void threaded_run(case_run *cr, const frun *f, const flav_result *r)
{
	thread_arg ta[2];
	pthread_t th[2];
	bool ok = true;
	int started = 0;
	memset(ta, 0, sizeof ta);
	for (int k = 0; k < 2; k++) {
		ta[k].f = f;
		ta[k].rc = -1;
		if (gbufs_alloc(&ta[k].g, f, 0xA5)) {
			ok = false;
			break;
		}
	}
	for (int k = 0; ok && k < 2; k++)
		if (!pthread_create(&th[k], NULL, thread_main, &ta[k]))
			started++;
	for (int k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	ok = ok && started == 2;
	for (int k = 0; ok && k < 2; k++) {
		ok = ta[k].rc == 0;
		for (int32_t i = 0; ok && i < cr->n_out; i++)
			ok = !memcmp(ta[k].g.data[i], r->g.data[i], r->g.bytes[i]);
	}
	check(cr->s, ok, "two threads calling it at once give the same bytes as one");
	gbufs_free(&ta[0].g);
	gbufs_free(&ta[1].g);
}

/* The first run's outputs against the expected ones. */
static void against_expected(case_run *cr, const flav_result *r)
{
	const gc_op_test *t = cr->t;
	for (int32_t i = 0; t->outputs && i < cr->n_out; i++) {
		double m, gv = 0, wv = 0;
		int64_t at;
		const char *name = cr->op->outputs[i].name;
		if (close_enough(r->g.data[i], cr->want[i].data, cr->want[i].dtype,
				 gc_tensor_numel(&cr->want[i]), t->tolerance, &m, &at, &gv, &wv))
			check(cr->s, true, "output %d ('%s') matches the expected values (max abs "
					   "error %.3g, tolerance %g)",
			      i, name, m, t->tolerance);
		else
			check(cr->s, false, "output %d ('%s') element %" PRId64 " is %.9g, expected "
					    "%.9g (abs error %.3g > tolerance %g x max(1, |expected|))",
			      i, name, at, gv, wv, m, t->tolerance);
	}
}

/* Implementation im run directly on the case: set up, runs, teardown. */
static void run_flavour(case_run *cr, const gc_impl_spec *im)
{
	snprintf(cr->s->where, sizeof cr->s->where, "%.300s / %.90s", cr->base_where, im->type);
	flav_result *r = &cr->fr[cr->n_fr++];
	memset(r, 0, sizeof *r);
	r->im = im;
	/* Views of every declared input (in[] past the case's: absent). */
	frun f = { .c = cr->c, .im = im, .in = cr->in, .n_in = cr->c->n_in,
		   .n_out = cr->c->n_out, .outs = cr->c->outs, .selftest = gc_crash_selftest };
	char msg[600] = "";
	int rc = frun_setup(&f, msg, sizeof msg);
	snprintf(f.where, sizeof f.where, "kernel %s:%s of flavour '%s'", im->impl, im->symbol,
		 im->type);
	bool selected = !strcmp(im->type, cr->c->flavour);
	if (rc) {
		check(cr->s, rc > 0 && !selected, "%s %s", rc > 0 ? "declined the case:" : "failed:",
		      msg);
	} else if (gbufs_alloc(&r->g, &f, 0xA5)) {
		check(cr->s, false, "out of memory for the outputs");
	} else if (first_run(cr, &f, r, selected)) {
		r->ran = true;
		second_run(cr, &f, r);
		threaded_run(cr, &f, r);
		against_expected(cr, r);
	}
	frun_teardown(&f);
}

/* sameAs, and every pair of flavours that ran. */
static void compare_flavours(case_run *cr)
{
	const gc_op_test *t = cr->t;
	const flav_result *fr = cr->fr, *ref = NULL;
	for (int32_t k = 0; t->same_as && k < cr->n_fr; k++)
		if (!strcmp(fr[k].im->type, t->same_as) && fr[k].ran)
			ref = &fr[k];
	if (t->same_as && !ref)
		check(cr->s, false, "sameAs: flavour '%s' did not run on the case", t->same_as);
	for (int32_t a = 0; a < cr->n_fr; a++)
		for (int32_t b = a + 1; b < cr->n_fr; b++) {
			if (!fr[a].ran || !fr[b].ran)
				continue;
			bool is_ref = ref && (ref == &fr[a] || ref == &fr[b]);
			const flav_result *x = ref == &fr[a] ? &fr[b] : &fr[a];
			const flav_result *y = ref == &fr[a] ? &fr[a] : &fr[b];
			for (int32_t i = 0; i < cr->n_out; i++) {
				double m, gv = 0, wv = 0;
				int64_t at;
				bool ok = close_enough(x->g.data[i], y->g.data[i], cr->c->outs[i].dtype,
						       gc_tensor_numel(&cr->c->outs[i]), t->tolerance, &m,
						       &at, &gv, &wv);
				check(cr->s, ok,
				      "%sflavours '%s' and '%s' agree on output %d ('%s'): max abs "
				      "difference %.3g (tolerance %g)%s",
				      is_ref ? "sameAs: " : "", x->im->type, y->im->type, i,
				      cr->op->outputs[i].name, m, t->tolerance, ok ? "" : " -- they differ");
			}
		}
	if (!t->outputs && !t->same_as && cr->n_fr < 2)
		check(cr->s, false, "the case gives neither outputs: nor sameAs: (nothing to compare "
				    "the kernel with)");
}

/* The whole runtime path, as `graphcc run --guard` takes it: the same
 * bytes as the direct call of the selected flavour. */
static void through_runtime(case_run *cr)
{
	gc_error e = { 0 };
	const gc_program *p = cr->p;
	gc_session *ss = NULL;
	bool ok = !gc_session_new(p, NULL, &ss, &e);
	for (int32_t i = 0; ok && i < gc_program_num_inputs(p); i++) {
		const char *nm;
		gc_program_input(p, i, &nm);
		int32_t k = 0;
		while (k < cr->n_values && strcmp(cr->values[k].name, nm))
			k++;
		ok = k < cr->n_values && !gc_session_set_input(ss, i, cr->values[k].value, &e);
	}
	gc_debug_options dbg = { .guard = 1 };
	ok = ok && !gc_session_run_debug(ss, &dbg, &e);
	const flav_result *sel = NULL;
	for (int32_t j = 0; j < cr->n_fr; j++)
		if (!strcmp(cr->fr[j].im->type, cr->c->flavour) && cr->fr[j].ran)
			sel = &cr->fr[j];
	for (int32_t i = 0; ok && i < cr->n_out && i < gc_program_num_outputs(p); i++) {
		const gc_tensor *o = gc_session_output(ss, i);
		ok = (sel && !memcmp(o->data, sel->g.data[i], sel->g.bytes[i])) ||
		     (!sel && cr->t->outputs);
	}
	check(cr->s, ok, "through the runtime with --guard (flavour '%s'): %s", cr->c->flavour,
	      ok ? "same bytes as the direct call" : e.msg[0] ? e.msg : "outputs differ");
	gc_session_free(ss);
}

static void run_case(st *s, const gc_registry *reg, const gc_op_spec *op, const gc_op_test *t,
		     const char *backend)
{
	case_run *cr = gc_calloc(1, sizeof *cr);
	if (!cr) {
		check(s, false, "out of memory");
		return;
	}
	*cr = (case_run){ .s = s, .reg = reg, .op = op, .t = t, .backend = backend,
			  .n_in = t->n_inputs, .n_out = op->n_outputs };
	snprintf(cr->base_where, sizeof cr->base_where, "%s", s->where);
	if (cr->n_in > MAX_IO || cr->n_out > MAX_IO || op->n_impls > MAX_IO) {
		check(s, false, "more than %d inputs, outputs or implementations", MAX_IO);
		gc_free(cr);
		return;
	}
	if (load_tensors(cr) && compile_case(cr)) {
		/* Every implementation of this backend. */
		for (int32_t j = 0; j < op->n_impls; j++) {
			const gc_impl_spec *im = &op->impls[j];
			if (!im->skipped && !strcmp(im->backend, backend) && wants(t, im->type) &&
			    valid_for(s, cr->base_where, op, im, cr->in, cr->n_in))
				run_flavour(cr, im);
		}
		snprintf(s->where, sizeof s->where, "%s", cr->base_where);
		compare_flavours(cr);
		through_runtime(cr);
	}
	snprintf(s->where, sizeof s->where, "%s", cr->base_where);
	for (int32_t k = 0; k < cr->n_fr; k++)
		gbufs_free(&cr->fr[k].g);
	gc_program_free(cr->p);
	gc_graph_free(cr->g);
	for (int32_t i = 0; i < MAX_IO; i++) {
		if (cr->in_owned[i])
			gc_tensor_release(&cr->in[i]);
		if (cr->want_owned[i])
			gc_tensor_release(&cr->want[i]);
	}
	gc_free(cr);
}

static void note(void *user, const char *msg)
{
	fprintf((FILE *)user, "note: %s\n", msg);
}

int gc_selftest_package(const char *manifest, const char *only_op, FILE *out,
			gc_selftest_counts *counts, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, manifest);
	GC_ARG_NONNULL(err, out);
	GC_ARG_NONNULL(err, counts);
	gc_package *pkg = NULL;
	gc_registry *reg = NULL;
	gc_pool *pool = NULL;
	int rc = 0;
	memset(counts, 0, sizeof *counts);
	if ((rc = gc_manifest_parse(manifest, &pkg, note, out, err)) ||
	    (rc = gc_package_load_libraries(pkg, err)))
		goto done;
	reg = gc_registry_new();
	pool = gc_pool_new();
	if (!reg || !pool) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = gc_registry_load(reg, manifest, err)))
		goto done;
	int matched = 0;
	for (int32_t i = 0; i < pkg->n_ops; i++) {
		const gc_op_spec *op = &pkg->ops[i];
		if (only_op && strcmp(only_op, op->name) && strcmp(only_op, op->type))
			continue;
		matched++;
		st s = { .out = out, .c = counts };
		snprintf(s.where, sizeof s.where, "%s", op->name);
		gc_op_test *tests;
		int32_t n;
		if (gc_manifest_tests_load(manifest, i, op, pool, &tests, &n, err)) {
			check(&s, false, "%s", err->msg);
			continue;
		}
		if (n == 0) {
			check(&s, false, "has no tests: in %s:%d (add self-tests to the manifest)",
			      manifest, op->line);
			continue;
		}
		for (int32_t k = 0; k < n; k++)
			for (size_t b = 0; b < gc_n_backends; b++) {
				snprintf(s.where, sizeof s.where, "%.150s / %.150s (line %d)", op->name,
					 tests[k].name, tests[k].line);
				char crash[1200];
				snprintf(crash, sizeof crash, "'%.200s' (%.600s:%d) of operation '%.150s'",
					 tests[k].name, manifest, tests[k].line, op->name);
				gc_crash_selftest = crash;
				run_case(&s, reg, op, &tests[k], gc_backends[b]->name);
				gc_crash_selftest = NULL;
			}
	}
	if (only_op && !matched)
		rc = gc_error_set(err, GC_EINVAL, "%s: no operation named '%s'", manifest, only_op);
done:
	gc_pool_free(pool);
	gc_registry_free(reg);
	gc_package_free(pkg);
	return rc;
}

int gc_selftest_check(const char *manifest, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, manifest);
	gc_package *pkg = NULL;
	int rc = gc_manifest_parse(manifest, &pkg, NULL, NULL, err);
	gc_package_free(pkg);
	return rc;
}
