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
} frun;

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
		if (gc_custom_call_scratch(fn, &ctx, &a, &b) != GC_STATUS_OK)
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
		GcStatus stt = gc_custom_call_init(init, &ctx, &a);
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
		gc_custom_call_destroy(f->destroy, &ctx);
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
	if (gc_custom_call_kernel(f->kernel, f->im->graphcc_iface, &ctx, &a) != GC_STATUS_OK) {
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

static const char *shape_of(const gc_tensor *t, char *buf, size_t len)
{
	char sb[128];
	snprintf(buf, len, "%s %s", gc_dtype_name(t->dtype), gc_shape_str(t->dims, t->rank, sb, sizeof sb));
	return buf;
}

static void run_case(st *s, const gc_registry *reg, const gc_op_spec *op, const gc_op_test *t,
		     const char *backend)
{
	char base_where[400];
	snprintf(base_where, sizeof base_where, "%s", s->where);
	gc_tensor in[MAX_IO], want[MAX_IO];
	bool in_owned[MAX_IO] = { 0 }, want_owned[MAX_IO] = { 0 };
	int32_t n_in = t->n_inputs, n_out = op->n_outputs;
	gc_graph *g = NULL;
	gc_program *p = NULL;
	flav_result fr[MAX_IO];
	int32_t n_fr = 0;
	gc_error e = { 0 };
	memset(in, 0, sizeof in);
	memset(want, 0, sizeof want);
	if (n_in > MAX_IO || n_out > MAX_IO || op->n_impls > MAX_IO) {
		check(s, false, "more than %d inputs, outputs or implementations", MAX_IO);
		return;
	}
	for (int32_t i = 0; i < n_in; i++) {
		const gc_test_tensor *tt = &t->inputs[i];
		if (tt->npy) {
			if (gc_npy_read(tt->npy, &in[i], &e)) {
				check(s, false, "input %d (line %d): %s", i, tt->line, e.msg);
				goto out;
			}
			in_owned[i] = true;
		} else {
			in[i] = tt->t;
		}
	}
	for (int32_t i = 0; t->outputs && i < n_out; i++) {
		const gc_test_tensor *tt = &t->outputs[i];
		if (tt->npy) {
			if (gc_npy_read(tt->npy, &want[i], &e)) {
				check(s, false, "expected output %d (line %d): %s", i, tt->line, e.msg);
				goto out;
			}
			want_owned[i] = true;
		} else {
			want[i] = tt->t;
		}
	}
	/* The case as a one-node graph, compiled with the package. */
	g = gc_graph_new(op->file);
	const char *in_names[MAX_IO], *out_names[MAX_IO];
	char names[2 * MAX_IO][64];
	gc_attr attrs[MAX_IO];
	int32_t n_attr = 0;
	gc_input_value values[MAX_IO];
	int32_t n_values = 0;
	bool built = g && !gc_graph_set_opset(g, "", 17, &e) &&
		     !gc_graph_set_opset(g, op->domain, op->version >= 0 ? op->version : 1, &e);
	for (int32_t i = 0; built && i < n_in; i++) {
		const gc_io_spec *io = &op->inputs[i < op->n_inputs ? i : op->n_inputs - 1];
		snprintf(names[i], sizeof names[i], "%s", io->name);
		for (int32_t j = 0; j < i; j++)
			if (!strcmp(names[j], names[i]))
				snprintf(names[i], sizeof names[i], "%s_%d", io->name, i);
		in_names[i] = names[i];
		if (io->constant) {
			built = !gc_graph_add_constant(g, names[i], &in[i], &e);
		} else {
			built = !gc_graph_add_input(g, names[i], in[i].dtype, in[i].rank, in[i].dims,
						    NULL, &e);
			values[n_values].name = names[i];
			values[n_values++].value = &in[i];
		}
	}
	for (int32_t i = 0; i < n_out; i++) {
		snprintf(names[MAX_IO + i], sizeof names[0], "%s_out", op->outputs[i].name);
		out_names[i] = names[MAX_IO + i];
	}
	for (int32_t i = 0; i < t->n_params && i < MAX_IO; i++)
		attrs[n_attr++] = t->params[i].attr;
	built = built &&
		!gc_graph_add_node(g, "selftest", op->domain, op->type, n_in, in_names, n_out,
				   out_names, n_attr, attrs, &e);
	for (int32_t i = 0; built && i < n_out; i++)
		built = !gc_graph_add_output(g, out_names[i], &e);
	if (!built) {
		check(s, false, "building the test graph: %s", e.msg[0] ? e.msg : "out of memory");
		goto out;
	}
	/* No input values: a pure operation would be run at compile time, on
	 * the very buffers the checks below compare with. */
	gc_compile_options co = { .registry = reg, .backend = backend, .no_fold = 1,
				  .no_optimize = 1 };
	if (gc_compile(g, &co, &p, &e)) {
		check(s, false, "verify, shape inference and selection accept the case: %s", e.msg);
		goto out;
	}
	const gc_custom *c = NULL;
	for (int32_t k = 0; k < p->n_nodes; k++)
		if (p->nodes[k].custom)
			c = p->nodes[k].custom;
	if (!c) {
		check(s, false, "graphcc bug: the test graph has no custom node");
		goto out;
	}
	check(s, true, "verify, shape inference and selection accept the case (selected '%s')",
	      c->flavour);
	/* Inferred outputs against the expected ones. */
	for (int32_t i = 0; t->outputs && i < n_out; i++) {
		char a[160], b[160];
		bool same = want[i].dtype == c->outs[i].dtype && want[i].rank == c->outs[i].rank;
		for (int k = 0; same && k < want[i].rank; k++)
			same = want[i].dims[k] == c->outs[i].dims[k];
		check(s, same, "inferred output %d ('%s') is %s; expected %s", i, op->outputs[i].name,
		      shape_of(&c->outs[i], a, sizeof a), shape_of(&want[i], b, sizeof b));
		if (!same)
			goto out;
	}
	/* Every implementation of this backend. */
	for (int32_t j = 0; j < op->n_impls; j++) {
		const gc_impl_spec *im = &op->impls[j];
		if (im->skipped || strcmp(im->backend, backend) || !wants(t, im->type))
			continue;
		snprintf(s->where, sizeof s->where, "%.300s / %.90s", base_where, im->type);
		flav_result *r = &fr[n_fr++];
		memset(r, 0, sizeof *r);
		r->im = im;
		frun f = { .c = c, .im = im, .in = in, .n_in = n_in, .n_out = n_out, .outs = c->outs };
		char msg[600] = "";
		int rc = frun_setup(&f, msg, sizeof msg);
		bool selected = !strcmp(im->type, c->flavour);
		if (rc) {
			check(s, rc > 0 && !selected, "%s %s", rc > 0 ? "declined the case:" : "failed:",
			      msg);
			frun_teardown(&f);
			continue;
		}
		/* Inputs must stay as they are. */
		void *copies[MAX_IO] = { 0 };
		for (int32_t i = 0; i < n_in; i++)
			if (in[i].data && (copies[i] = gc_malloc((size_t)gc_tensor_nbytes(&in[i]) + 1)))
				memcpy(copies[i], in[i].data, (size_t)gc_tensor_nbytes(&in[i]));
		gbufs g2;
		bool alloc_ok = !gbufs_alloc(&r->g, &f, 0xA5) && !gbufs_alloc(&g2, &f, 0x5A);
		if (!alloc_ok) {
			check(s, false, "out of memory for the outputs");
			gbufs_free(&g2);
			goto next;
		}
		rc = frun_call(&f, r->g.data, msg, sizeof msg);
		if (rc) {
			check(s, rc > 0 && !selected, "kernel %s: %s", rc > 0 ? "declined" : "failed",
			      msg);
			gbufs_free(&g2);
			goto next;
		}
		bool in_ok = true;
		for (int32_t i = 0; i < n_in; i++)
			if (copies[i] && memcmp(copies[i], in[i].data, (size_t)gc_tensor_nbytes(&in[i]))) {
				check(s, false, "kernel '%s' wrote into its input %d ('%s')", im->symbol,
				      i, op->inputs[i < op->n_inputs ? i : op->n_inputs - 1].name);
				memcpy(in[i].data, copies[i], (size_t)gc_tensor_nbytes(&in[i]));
				in_ok = false;
			}
		if (in_ok)
			check(s, true, "kernel '%s' runs and leaves its inputs alone", im->symbol);
		bool guard_ok = true;
		for (int32_t i = 0; i < n_out; i++) {
			long off;
			if (!guards_intact(&r->g, i, 0xA5, &off)) {
				check(s, false,
				      "wrote outside output %d ('%s', %zu bytes as inferred): byte "
				      "offset %ld",
				      i, op->outputs[i].name, r->g.bytes[i], off);
				guard_ok = false;
			}
		}
		if (guard_ok)
			check(s, true, "writes only inside its outputs (guard zones intact)");
		r->ran = true;
		/* Second run, other fill: identical bytes = deterministic, and
		 * every byte of the inferred outputs is written. */
		rc = frun_call(&f, g2.data, msg, sizeof msg);
		bool same = rc == 0;
		for (int32_t i = 0; same && i < n_out; i++) {
			if (!memcmp(r->g.data[i], g2.data[i], r->g.bytes[i]))
				continue;
			size_t at = 0;
			const unsigned char *a = r->g.data[i], *b = g2.data[i];
			while (a[at] == b[at])
				at++;
			same = false;
			if (a[at] == 0xA5 && b[at] == 0x5A)
				check(s, false,
				      "does not write byte %zu of output %d ('%s'): the inferred shape "
				      "is larger than what the kernel fills",
				      at, i, op->outputs[i].name);
			else
				check(s, false, "two runs differ at byte %zu of output %d ('%s')", at,
				      i, op->outputs[i].name);
		}
		if (same)
			check(s, true, "fills every byte of its outputs; two runs give identical bytes");
		gbufs_free(&g2);
		/* Two threads at once (per-node state shared, as two sessions of
		 * one program share it). */
		thread_arg ta[2];
		pthread_t th[2];
		bool thr_ok = true;
		int started = 0;
		for (int k = 0; k < 2; k++) {
			ta[k].f = &f;
			ta[k].rc = -1;
			ta[k].msg[0] = 0;
			if (gbufs_alloc(&ta[k].g, &f, 0xA5)) {
				thr_ok = false;
				break;
			}
		}
		for (int k = 0; thr_ok && k < 2; k++)
			if (!pthread_create(&th[k], NULL, thread_main, &ta[k]))
				started++;
		for (int k = 0; k < started; k++)
			pthread_join(th[k], NULL);
		thr_ok = thr_ok && started == 2;
		for (int k = 0; thr_ok && k < 2; k++) {
			thr_ok = ta[k].rc == 0;
			for (int32_t i = 0; thr_ok && i < n_out; i++)
				thr_ok = !memcmp(ta[k].g.data[i], r->g.data[i], r->g.bytes[i]);
		}
		check(s, thr_ok, "two threads calling it at once give the same bytes as one");
		gbufs_free(&ta[0].g);
		gbufs_free(&ta[1].g);
		/* Against the expected outputs. */
		for (int32_t i = 0; t->outputs && i < n_out; i++) {
			double m, gv = 0, wv = 0;
			int64_t at;
			bool ok = close_enough(r->g.data[i], want[i].data, want[i].dtype,
					       gc_tensor_numel(&want[i]), t->tolerance, &m, &at, &gv,
					       &wv);
			if (ok)
				check(s, true, "output %d ('%s') matches the expected values (max abs "
					       "error %.3g, tolerance %g)",
				      i, op->outputs[i].name, m, t->tolerance);
			else
				check(s, false, "output %d ('%s') element %" PRId64 " is %.9g, expected "
					       "%.9g (abs error %.3g > tolerance %g x max(1, |expected|))",
				      i, op->outputs[i].name, at, gv, wv, m, t->tolerance);
		}
	next:
		for (int32_t i = 0; i < n_in; i++)
			gc_free(copies[i]);
		frun_teardown(&f);
	}
	snprintf(s->where, sizeof s->where, "%s", base_where);
	/* sameAs, and every pair of flavours. */
	const flav_result *ref = NULL;
	for (int32_t k = 0; t->same_as && k < n_fr; k++)
		if (!strcmp(fr[k].im->type, t->same_as) && fr[k].ran)
			ref = &fr[k];
	if (t->same_as && !ref)
		check(s, false, "sameAs: flavour '%s' did not run on the case", t->same_as);
	for (int32_t a = 0; a < n_fr; a++)
		for (int32_t b = a + 1; b < n_fr; b++) {
			if (!fr[a].ran || !fr[b].ran)
				continue;
			bool is_ref = ref && (ref == &fr[a] || ref == &fr[b]);
			for (int32_t i = 0; i < n_out; i++) {
				double m, gv = 0, wv = 0;
				int64_t at;
				const flav_result *x = ref == &fr[a] ? &fr[b] : &fr[a];
				const flav_result *y = ref == &fr[a] ? &fr[a] : &fr[b];
				bool ok = close_enough(x->g.data[i], y->g.data[i], c->outs[i].dtype,
						       gc_tensor_numel(&c->outs[i]), t->tolerance, &m,
						       &at, &gv, &wv);
				check(s, ok,
				      "%sflavours '%s' and '%s' agree on output %d ('%s'): max abs "
				      "difference %.3g (tolerance %g)%s",
				      is_ref ? "sameAs: " : "", x->im->type, y->im->type, i,
				      op->outputs[i].name, m, t->tolerance, ok ? "" : " -- they differ");
			}
		}
	if (!t->outputs && !t->same_as && n_fr < 2)
		check(s, false, "the case gives neither outputs: nor sameAs: (nothing to compare "
				"the kernel with)");
	/* The whole runtime path, as `graphcc run --guard` takes it. */
	{
		gc_session *ss = NULL;
		int k = 0;
		bool ok = !gc_session_new(p, NULL, &ss, &e);
		for (int32_t i = 0; ok && i < gc_program_num_inputs(p); i++) {
			const char *nm;
			gc_program_input(p, i, &nm);
			for (k = 0; k < n_values; k++)
				if (!strcmp(values[k].name, nm))
					break;
			ok = k < n_values && !gc_session_set_input(ss, i, values[k].value, &e);
		}
		gc_debug_options dbg = { .guard = 1 };
		ok = ok && !gc_session_run_debug(ss, &dbg, &e);
		const flav_result *sel = NULL;
		for (int32_t j = 0; j < n_fr; j++)
			if (!strcmp(fr[j].im->type, c->flavour) && fr[j].ran)
				sel = &fr[j];
		for (int32_t i = 0; ok && i < n_out && i < gc_program_num_outputs(p); i++) {
			const gc_tensor *o = gc_session_output(ss, i);
			ok = (sel && !memcmp(o->data, sel->g.data[i], sel->g.bytes[i])) ||
			     (!sel && t->outputs);
		}
		check(s, ok, "through the runtime with --guard (flavour '%s'): %s", c->flavour,
		      ok ? "same bytes as the direct call" : e.msg[0] ? e.msg : "outputs differ");
		gc_session_free(ss);
	}
out:
	snprintf(s->where, sizeof s->where, "%s", base_where);
	for (int32_t k = 0; k < n_fr; k++)
		gbufs_free(&fr[k].g);
	gc_program_free(p);
	gc_graph_free(g);
	for (int32_t i = 0; i < MAX_IO; i++) {
		if (in_owned[i])
			gc_tensor_release(&in[i]);
		if (want_owned[i])
			gc_tensor_release(&want[i]);
	}
}

static void note(void *user, const char *msg)
{
	fprintf((FILE *)user, "note: %s\n", msg);
}

int gc_selftest_package(const char *manifest, const char *only_op, FILE *out,
			gc_selftest_counts *counts, gc_error *err)
{
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
				run_case(&s, reg, op, &tests[k], gc_backends[b]->name);
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
