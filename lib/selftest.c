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
#include "graph-impl.h"
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

/* Scratch is handed out uninitialised (customop.h); here it starts as
 * poison bytes: POISON_NAN (every float32/float64 a NaN, every integer -1)
 * for the checks, POISON_OTHER once more to see whether the outputs depend
 * on it. */
#define POISON_NAN 0xFF
#define POISON_OTHER 0x5A

/* One kernel call into outs, its scratch filled with poison bytes. 0 ok,
 * 1 declined, -1 failed (msg). */
static int frun_call(const frun *f, void *const *outs, unsigned char poison, char *msg,
		     size_t len)
{
	CustomOpIOTensor v[MAX_IO];
	int64_t dims[MAX_IO * GC_MAX_RANK];
	views(f, v, dims, outs, false);
	void *scratch = NULL;
	if (f->scratch_bytes) {
		if (!(scratch = gc_aligned_alloc(64, (size_t)f->scratch_bytes, 0)))
			return snprintf(msg, len, "out of memory for scratch"), -1;
		memset(scratch, poison, (size_t)f->scratch_bytes);
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
	a->rc = frun_call(a->f, a->g.data, POISON_NAN, a->msg, sizeof a->msg);
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
	/* The inputs' bytes as loaded: every kernel call starts from them (a
	 * kernel that writes into its input must not change what later checks,
	 * flavours and cases see). */
	void *orig[MAX_IO];
} case_run;

/* Puts the inputs back as loaded; false (and a FAIL naming the kernel) when
 * a call changed one. */
static bool restore_inputs(case_run *cr, const char *symbol, const char *after)
{
	bool same = true;
	for (int32_t i = 0; i < cr->n_in; i++) {
		size_t nb = (size_t)gc_tensor_nbytes(&cr->in[i]);
		if (!cr->orig[i] || !memcmp(cr->orig[i], cr->in[i].data, nb))
			continue;
		memcpy(cr->in[i].data, cr->orig[i], nb);
		if (after)
			check(cr->s, false, "kernel '%s' wrote into its input %d ('%s')%s", symbol, i,
			      cr->op->inputs[i < cr->op->n_inputs ? i : cr->op->n_inputs - 1].name,
			      after);
		same = false;
	}
	return same;
}

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
		size_t nb = (size_t)gc_tensor_nbytes(&cr->in[i]);
		if (cr->in[i].data && !(cr->orig[i] = gc_malloc(nb + 1))) {
			check(cr->s, false, "out of memory for input %d", i);
			return false;
		}
		if (cr->orig[i])
			memcpy(cr->orig[i], cr->in[i].data, nb);
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
	int rc = frun_call(f, r->g.data, POISON_NAN, msg, sizeof msg);
	bool in_ok = restore_inputs(cr, r->im->symbol, "");
	if (rc) {
		check(cr->s, rc > 0 && !selected, "kernel %s: %s", rc > 0 ? "declined" : "failed",
		      msg);
		return false;
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
	return true;
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
	bool same = frun_call(f, g2.data, POISON_NAN, msg, sizeof msg) == 0;
	restore_inputs(cr, NULL, NULL);
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

/* Once more with the same output fill but other scratch poison: outputs
 * that change read scratch the kernel did not write first. */
static void scratch_run(case_run *cr, const frun *f, const flav_result *r)
{
	char msg[600] = "";
	gbufs g2;
	if (!f->scratch_bytes)
		return;
	if (gbufs_alloc(&g2, f, 0xA5)) {
		check(cr->s, false, "out of memory for the outputs");
		gbufs_free(&g2);
		return;
	}
	bool ran = frun_call(f, g2.data, POISON_OTHER, msg, sizeof msg) == 0;
	restore_inputs(cr, NULL, NULL);
	bool same = ran;
	for (int32_t i = 0; ran && same && i < cr->n_out; i++) {
		const unsigned char *a = r->g.data[i], *b = g2.data[i];
		size_t at = 0, es = gc_dtype_size(f->outs[i].dtype);
		while (at < r->g.bytes[i] && a[at] == b[at])
			at++;
		if (at == r->g.bytes[i])
			continue;
		same = false;
		check(cr->s, false,
		      "kernel '%s' reads scratch it did not write: output %d ('%s') element %zu "
		      "differs when its %" PRIu64 " bytes of scratch start as 0x%02X bytes (NaN) or "
		      "as 0x%02X bytes (%.9g vs %.9g); scratch starts uninitialised, so write it "
		      "before reading it",
		      r->im->symbol, i, cr->op->outputs[i].name, es ? at / es : at,
		      f->scratch_bytes, POISON_NAN, POISON_OTHER,
		      element(a, f->outs[i].dtype, (int64_t)(es ? at / es : at)),
		      element(b, f->outs[i].dtype, (int64_t)(es ? at / es : at)));
	}
	if (same)
		check(cr->s, true, "its outputs do not depend on what its scratch held before the "
				   "call (%" PRIu64 " bytes, poisoned)",
		      f->scratch_bytes);
	else if (!ran)
		check(cr->s, false, "kernel failed on other scratch bytes: %s", msg);
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
	restore_inputs(cr, NULL, NULL);
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
		scratch_run(cr, &f, r);
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
	if (!t->outputs && !t->same_as && cr->n_fr < 2 && !t->from_model)
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
		gc_free(cr->orig[i]);
	}
	gc_free(cr);
}

static void note(void *user, const char *msg)
{
	fprintf((FILE *)user, "note: %s\n", msg);
}

/* One case of the package: operation, test, backend. */
typedef struct case_ref {
	int32_t op, test;
	size_t backend;
} case_ref;

/* xorshift64*: a seed names an order. */
static uint64_t next_random(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ull;
}

/* Sattolo's shuffle of n items of `size` bytes: every item moves (two swap). */
static void sattolo(void *items, int32_t n, size_t size, uint64_t *x)
{
	unsigned char *b = items, tmp[sizeof(case_ref) > 16 ? sizeof(case_ref) : 16];
	for (int32_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(next_random(x) % (uint64_t)i);
		memcpy(tmp, b + (size_t)i * size, size);
		memcpy(b + (size_t)i * size, b + j * size, size);
		memcpy(b + j * size, tmp, size);
	}
}

/*
 * The cases (grouped by operation, as listed) in an order the seed fixes:
 * the operations in another order, and within each operation its cases in
 * another order, so that no operation's first case stays first -- where a
 * kernel keeps state from its first call, the outcome then changes.
 */
static void shuffle(case_ref *c, int32_t n, uint64_t seed)
{
	uint64_t x = seed ? seed : 1;
	int32_t *start = gc_calloc((size_t)n + 2, sizeof *start);
	case_ref *tmp = gc_calloc((size_t)n + 1, sizeof *tmp);
	int32_t ng = 0;
	for (int32_t i = 0; start && tmp && i < n; i++)
		if (i == 0 || c[i].op != c[i - 1].op)
			start[ng++] = i;
	if (!start || !tmp || !ng) {
		gc_free(start);
		gc_free(tmp);
		return;
	}
	start[ng] = n;
	int32_t *order = gc_calloc((size_t)ng + 1, sizeof *order);
	if (order) {
		for (int32_t g = 0; g < ng; g++)
			order[g] = g;
		sattolo(order, ng, sizeof *order, &x);
		int32_t at = 0;
		for (int32_t g = 0; g < ng; g++) {
			int32_t from = start[order[g]], len = start[order[g] + 1] - from;
			memcpy(tmp + at, c + from, (size_t)len * sizeof *c);
			sattolo(tmp + at, len, sizeof *c, &x);
			at += len;
		}
		memcpy(c, tmp, (size_t)n * sizeof *c);
	}
	gc_free(order);
	gc_free(start);
	gc_free(tmp);
}

/* Every case of the package (of only_op), in manifest order. */
static int list_cases(const char *manifest, const gc_package *pkg, const char *only_op, st *s,
		      gc_pool *pool, gc_op_test **tests, case_ref **out, int32_t *n, gc_error *err)
{
	int matched = 0;
	*n = 0;
	*out = gc_calloc(1, sizeof **out);
	for (int32_t i = 0; *out && i < pkg->n_ops; i++) {
		const gc_op_spec *op = &pkg->ops[i];
		if (only_op && strcmp(only_op, op->name) && strcmp(only_op, op->type))
			continue;
		matched++;
		snprintf(s->where, sizeof s->where, "%s", op->name);
		int32_t nt = 0;
		if (gc_manifest_tests_load(manifest, i, op, pool, &tests[i], &nt, err)) {
			check(s, false, "%s", err->msg);
			continue;
		}
		if (nt == 0) {
			check(s, false, "has no tests: in %s:%d (add self-tests to the manifest)",
			      manifest, op->line);
			continue;
		}
		case_ref *grown = gc_realloc(*out, ((size_t)*n + (size_t)nt * gc_n_backends + 1) *
							sizeof **out);
		if (!grown)
			break;
		*out = grown;
		for (int32_t k = 0; k < nt; k++)
			for (size_t b = 0; b < gc_n_backends; b++)
				(*out)[(*n)++] = (case_ref){ i, k, b };
	}
	if (!*out)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	if (only_op && !matched)
		return gc_error_set(err, GC_EINVAL, "%s: no operation named '%s'", manifest, only_op);
	return 0;
}

static int model_cases(const char *manifest, const gc_package *pkg, const gc_registry *reg,
		       const char *model, const gc_selftest_options *opt, FILE *out, st *s,
		       gc_pool *pool, gc_error *err);

int gc_selftest_run(const char *manifest, const gc_selftest_options *opt, FILE *out,
		    gc_selftest_counts *counts, gc_error *err)
{
	static const gc_selftest_options none;
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, manifest);
	GC_ARG_NONNULL(err, out);
	GC_ARG_NONNULL(err, counts);
	gc_package *pkg = NULL;
	gc_registry *reg = NULL;
	gc_pool *pool = NULL;
	gc_op_test **tests = NULL;
	case_ref *cases = NULL;
	int32_t n = 0;
	int rc = 0;
	if (!opt)
		opt = &none;
	memset(counts, 0, sizeof *counts);
	if ((rc = gc_manifest_parse(manifest, &pkg, note, out, err)) ||
	    (rc = gc_package_load_libraries(pkg, err)))
		goto done;
	reg = gc_registry_new();
	pool = gc_pool_new();
	tests = gc_calloc((size_t)pkg->n_ops + 1, sizeof *tests);
	if (!reg || !pool || !tests) {
		rc = gc_error_set(err, GC_ENOMEM, "out of memory");
		goto done;
	}
	st s = { .out = out, .c = counts };
	if ((rc = gc_registry_load(reg, manifest, err)))
		goto done;
	if (opt->model) {
		rc = model_cases(manifest, pkg, reg, opt->model, opt, out, &s, pool, err);
		goto done;
	}
	if ((rc = list_cases(manifest, pkg, opt->only_op, &s, pool, tests, &cases, &n, err)))
		goto done;
	if (opt->shuffle_seed)
		shuffle(cases, n, opt->shuffle_seed);
	for (int32_t c = 0; c < n; c++) {
		const gc_op_spec *op = &pkg->ops[cases[c].op];
		const gc_op_test *t = &tests[cases[c].op][cases[c].test];
		snprintf(s.where, sizeof s.where, "%.150s / %.150s (line %d)", op->name, t->name,
			 t->line);
		char crash[1200];
		snprintf(crash, sizeof crash, "'%.200s' (%.600s:%d) of operation '%.150s'", t->name,
			 manifest, t->line, op->name);
		int failed = counts->failed;
		gc_crash_selftest = crash;
		run_case(&s, reg, op, t, gc_backends[cases[c].backend]->name);
		gc_crash_selftest = NULL;
		if (opt->on_case) {
			snprintf(s.where, sizeof s.where, "%.150s / %.150s (line %d)", op->name,
				 t->name, t->line);
			opt->on_case(opt->user, s.where, counts->failed == failed);
		}
	}
	if (!opt->shuffle_seed) { /* every declared gradient against finite differences,
				    once: in the manifest-order pass */
		gc_selftest_counts g;
		rc = gc_gradcheck_package(manifest, opt->only_op, 0, out, &g, err);
		counts->passed += g.passed;
		counts->failed += g.failed;
	}
done:
	gc_free(cases);
	gc_free(tests);
	gc_pool_free(pool);
	gc_registry_free(reg);
	gc_package_free(pkg);
	return rc;
}

int gc_selftest_package(const char *manifest, const char *only_op, FILE *out,
			gc_selftest_counts *counts, gc_error *err)
{
	gc_selftest_options o = { .only_op = only_op };
	return gc_selftest_run(manifest, &o, out, counts, err);
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

/* ------------------------------------------------------------ cases from a model */

/* Values for a tensor the model computes: uniform in [-1, 1] (integers: 0
 * to 3; bool: 0 or 1), from the seed. false for types without such values. */
static bool random_values(gc_pool *pool, const gc_tensor *desc, uint64_t *x, gc_tensor *out)
{
	*out = *desc;
	int64_t n = gc_tensor_numel(desc), nb = gc_tensor_nbytes(desc);
	if (n < 0 || nb < 0 || !(out->data = gc_pool_alloc(pool, (size_t)nb + 1)))
		return false;
	for (int64_t i = 0; i < n; i++) {
		uint64_t r = next_random(x) >> 11;
		double u = (double)r / (double)(1ull << 53) * 2 - 1;
		switch (desc->dtype) {
		case GC_DTYPE_FLOAT: ((float *)out->data)[i] = (float)u; break;
		case GC_DTYPE_DOUBLE: ((double *)out->data)[i] = u; break;
		case GC_DTYPE_INT64: ((int64_t *)out->data)[i] = (int64_t)(r % 4); break;
		case GC_DTYPE_INT32: ((int32_t *)out->data)[i] = (int32_t)(r % 4); break;
		case GC_DTYPE_INT8: ((int8_t *)out->data)[i] = (int8_t)(r % 4); break;
		case GC_DTYPE_UINT8:
		case GC_DTYPE_BOOL: ((uint8_t *)out->data)[i] = (uint8_t)(r % (desc->dtype == GC_DTYPE_BOOL ? 2 : 4)); break;
		default: return false;
		}
	}
	return true;
}

/* Program node i (custom, of operation op) as a self-test case: its input
 * shapes and dtypes, random values (its constants' own values), its
 * params. NULL and why when it cannot be one. */
static gc_op_test *node_case(const gc_graph *g, const gc_program *p, int32_t i,
			     const gc_op_spec *op, gc_pool *pool, uint64_t *x, char *why, size_t len)
{
	const gc_node *n = &p->nodes[i];
	gc_op_test *t = gc_pool_alloc(pool, sizeof *t);
	char name[300];
	snprintf(name, sizeof name, "node '%.250s'", n->name);
	if (!t || !(t->name = gc_pool_strdup(pool, name)) ||
	    !(t->inputs = gc_pool_alloc(pool, ((size_t)n->n_in + 1) * sizeof *t->inputs)) ||
	    !(t->params = gc_pool_alloc(pool, ((size_t)op->n_params + 1) * sizeof *t->params)))
		return snprintf(why, len, "out of memory"), NULL;
	t->tolerance = 1e-4;
	t->from_model = true;
	t->n_inputs = n->n_in;
	for (int32_t j = 0; j < n->n_in; j++) {
		const gc_ptensor *pt = n->in[j] >= 0 ? &p->tensors[n->in[j]] : NULL;
		if (!pt)
			return snprintf(why, len, "input %d is absent (a case needs every input)",
					(int)j), NULL;
		if (pt->storage == GC_STORAGE_CONST)
			t->inputs[j].t = pt->t;
		else if (!random_values(pool, &pt->t, x, &t->inputs[j].t))
			return snprintf(why, len, "input %d ('%s') is %s, which gets no test values",
					(int)j, pt->name, gc_dtype_name(pt->t.dtype)), NULL;
	}
	const gc_irnode *gn = NULL;
	for (int32_t k = 0; k < g->n_nodes && !gn; k++)
		if (!strcmp(g->nodes[k].name, n->name))
			gn = &g->nodes[k];
	for (int32_t k = 0; gn && k < op->n_params; k++)
		for (int32_t a = 0; a < gn->n_attr; a++)
			if (!strcmp(gn->attrs[a].name, op->params[k].attribute))
				t->params[t->n_params++] =
				    (gc_test_param){ .spec = &op->params[k], .attr = gn->attrs[a] };
	return t;
}

/* Whether two attributes hold the same value (vectors: the same length). */
static bool same_param(const gc_attr *a, const gc_attr *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case GC_ATTR_FLOAT: return a->v.f == b->v.f;
	case GC_ATTR_INT: return a->v.i == b->v.i;
	case GC_ATTR_STRING: return a->v.s && b->v.s && !strcmp(a->v.s, b->v.s);
	default: return a->n == b->n;
	}
}

static void param_str(const gc_attr *a, char *buf, size_t len)
{
	switch (a->type) {
	case GC_ATTR_FLOAT: snprintf(buf, len, "%g", a->v.f); break;
	case GC_ATTR_INT: snprintf(buf, len, "%" PRId64, a->v.i); break;
	case GC_ATTR_STRING: snprintf(buf, len, "'%.100s'", a->v.s ? a->v.s : ""); break;
	default: snprintf(buf, len, "%" PRId64 " values", a->n);
	}
}

/* Warnings for what node case mc uses that none of the op's tests covers:
 * an input's rank or dtype, a param's value (vectors: its length). */
static void coverage(FILE *out, const gc_op_spec *op, const gc_op_test *tests, int32_t nt,
		     const gc_op_test *mc)
{
	for (int32_t j = 0; j < mc->n_inputs; j++) {
		const gc_tensor *m = &mc->inputs[j].t;
		uint64_t rank_set = 0, dtype_set = 0; /* what the tests cover */
		for (int32_t k = 0; k < nt; k++) {
			if (j >= tests[k].n_inputs || tests[k].inputs[j].npy)
				continue; /* .npy inputs: not read here */
			const gc_tensor *c = &tests[k].inputs[j].t;
			rank_set |= 1ull << (c->rank & 63);
			dtype_set |= 1ull << (c->dtype & 63);
		}
		bool rank = rank_set >> (m->rank & 63) & 1, dtype = dtype_set >> (m->dtype & 63) & 1;
		char ranks[200] = "", dtypes[300] = "";
		size_t ra = 0, da = 0;
		for (int b = 0; b < 64; b++) {
			if ((rank_set >> b & 1) && ra < sizeof ranks)
				ra += (size_t)snprintf(ranks + ra, sizeof ranks - ra, "%s%d",
						       ra ? ", " : "", b);
			if ((dtype_set >> b & 1) && da < sizeof dtypes)
				da += (size_t)snprintf(dtypes + da, sizeof dtypes - da, "%s%s",
						       da ? ", " : "", gc_dtype_name((gc_dtype)b));
		}
		const char *in = op->inputs[j < op->n_inputs ? j : op->n_inputs - 1].name;
		if (!rank)
			fprintf(out, "warning: %s: %s input %d ('%s') has rank %d, which no self-test "
				"of %s covers (their ranks: %s)\n", op->name, mc->name, (int)j, in,
				(int)m->rank, op->name, ra ? ranks : "none");
		if (!dtype)
			fprintf(out, "warning: %s: %s input %d ('%s') is %s, which no self-test of %s "
				"covers (theirs: %s)\n", op->name, mc->name, (int)j, in,
				gc_dtype_name(m->dtype), op->name, da ? dtypes : "none");
	}
	for (int32_t q = 0; q < mc->n_params; q++) {
		const gc_test_param *mp = &mc->params[q];
		bool covered = false;
		for (int32_t k = 0; k < nt && !covered; k++)
			for (int32_t r = 0; r < tests[k].n_params && !covered; r++)
				covered = tests[k].params[r].spec == mp->spec &&
					  same_param(&tests[k].params[r].attr, &mp->attr);
		char v[160];
		param_str(&mp->attr, v, sizeof v);
		bool vector = mp->attr.type == GC_ATTR_FLOATS || mp->attr.type == GC_ATTR_INTS ||
			      mp->attr.type == GC_ATTR_STRINGS;
		if (!covered)
			fprintf(out, "warning: %s: %s has param '%s' %s %s, a %s no self-test of %s "
				"uses\n", op->name, mc->name, mp->spec->name, vector ? "with" : "=", v,
				vector ? "length" : "value", op->name);
	}
}

/* The custom nodes of model m (compiled with reg) that pkg's operations
 * serve, each as a case. */
static int model_cases(const char *manifest, const gc_package *pkg, const gc_registry *reg,
		       const char *model, const gc_selftest_options *opt, FILE *out, st *s,
		       gc_pool *pool, gc_error *err)
{
	gc_graph *g = NULL;
	gc_program *p = NULL;
	gc_compile_options co = { .registry = reg, .no_fold = 1 };
	if (gc_onnx_load(model, &g, err) || gc_compile(g, &co, &p, err)) {
		gc_graph_free(g);
		return err->code;
	}
	uint64_t x = opt->shuffle_seed ? opt->shuffle_seed : 1;
	int32_t used = 0;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_custom *c = p->nodes[i].custom;
		int32_t oi = -1;
		for (int32_t k = 0; c && k < pkg->n_ops; k++)
			if (!strcmp(pkg->ops[k].domain, c->domain) && !strcmp(pkg->ops[k].type, c->op_type))
				oi = k;
		if (oi < 0 || (opt->only_op && strcmp(opt->only_op, pkg->ops[oi].name) &&
			       strcmp(opt->only_op, pkg->ops[oi].type)))
			continue;
		const gc_op_spec *op = &pkg->ops[oi];
		char why[300];
		snprintf(s->where, sizeof s->where, "%.150s / node '%.200s' of the model", op->name,
			 p->nodes[i].name);
		gc_op_test *t = node_case(g, p, i, op, pool, &x, why, sizeof why);
		if (!t) {
			check(s, false, "cannot become a case: %s", why);
			continue;
		}
		used++;
		gc_op_test *tests = NULL;
		int32_t nt = 0;
		if (!gc_manifest_tests_load(manifest, oi, op, pool, &tests, &nt, err))
			coverage(out, op, tests, nt, t);
		char crash[1200];
		snprintf(crash, sizeof crash, "node '%.200s' of %.600s (operation '%.150s')",
			 p->nodes[i].name, model, op->name);
		gc_crash_selftest = crash;
		for (size_t b = 0; b < gc_n_backends; b++)
			if (!strcmp(gc_backends[b]->name, c->backend))
				run_case(s, reg, op, t, c->backend);
		gc_crash_selftest = NULL;
		if (opt->on_case)
			opt->on_case(opt->user, s->where, 1);
	}
	if (!used)
		fprintf(out, "note: %s has no node that %s serves\n", model, manifest);
	gc_program_free(p);
	gc_graph_free(g);
	return 0;
}
