/*
 * Cross-checking the flavours of custom operations (graphcc run
 * --compare-flavours), and reading a node's tensors from the graph IR (for
 * graphcc dot when a model does not compile).
 *
 * gc_flavours_compare runs the session once more, through the executor's
 * loop with a hook before each node (run-hooks.h). Just before each custom node it takes the node's
 * inputs as they are at that point of the run, copies them, and calls every
 * implementation of the node's operation for the node's backend on the
 * copies: its own kernel, scratch (from the implementation's scratch
 * function or scratchBytes) and per-node state (init/destroy), each into
 * outputs of its own. Then it compares every pair of flavours element by
 * element and runs the node itself, so the session ends as a plain run
 * would leave it.
 *
 * The implementations come from the registry that bound the program (the
 * operation found by (domain, type, opset)); without one, or when the
 * registry's operation comes from another manifest, from the manifest the
 * binding records, loaded again.
 *
 * Verify is per operation, not per implementation, in a manifest: it
 * accepted the node when the program was bound, so every implementation of
 * the operation for the backend is tried. One that cannot serve the node
 * says so through its status (graphcc interface: kernel, init or scratch
 * function): it has declined the node, which is reported with its reason
 * and is not an error (the demo's scaledSwishPlanesF32 declines 2-D
 * inputs). A flavour fails -- an error -- when its library or symbols do
 * not resolve, or when its kernel writes into its inputs (each flavour gets
 * copies, checked after the call).
 */
#include <graphcc/customop.h>
#include <graphcc/graphcc.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/build.h"
#include "graph-impl.h"
#include "package-impl.h"

/* ------------------------------------------------------------ the graph IR */

const char *gc_graph_node_io(const gc_graph *g, int i, int is_output, int t, int *is_constant)
{
	if (is_constant)
		*is_constant = 0;
	if (!g || i < 0 || i >= g->n_nodes)
		return NULL;
	const gc_irnode *n = &g->nodes[i];
	int count = is_output ? n->n_out : n->n_in;
	if (t < 0 || t >= count)
		return NULL;
	int32_t v = is_output ? n->out[t] : n->in[t];
	if (v < 0 || v >= g->n_values)
		return "";
	if (is_constant)
		*is_constant = g->values[v].constant != NULL;
	return g->values[v].name;
}

/* ------------------------------------------------------------ numbers */

/* Element i of a tensor of type dt, as a double; a bool byte as written
 * (a kernel writing 2 for true differs from one writing 1). */
static double element(const void *data, gc_dtype dt, int64_t i)
{
	if (dt == GC_DTYPE_BOOL)
		return ((const uint8_t *)data)[i];
	return gc_kv_load(&(gc_tensor){.dtype = dt, .data = (void *)data}, i);
}

/* |a - b| and |a - b| / max(|a|, |b|): 0 when both are equal (NaN and NaN,
 * the same infinity), infinite when only one is NaN or they are different
 * infinities. */
static void difference(double a, double b, double *abs_diff, double *rel_diff)
{
	if (a == b || (isnan(a) && isnan(b))) {
		*abs_diff = *rel_diff = 0;
		return;
	}
	if (isnan(a) || isnan(b)) { /* a NaN against a number: NaN, the worst */
		*abs_diff = *rel_diff = NAN;
		return;
	}
	double d = fabs(a - b);
	if (isnan(d) || isinf(d)) {
		*abs_diff = *rel_diff = INFINITY;
		return;
	}
	double m = fmax(fabs(a), fabs(b));
	*abs_diff = d;
	*rel_diff = d / m; /* m > 0: a != b */
}

/* Whether difference a is worse than b: larger, NaN worst of all. */
static bool worse(double a, double b)
{
	return isnan(a) ? !isnan(b) : a > b;
}

/* Whether a and b disagree beyond tol x max(1, |a|, |b|). */
static bool disagree(double a, double b, double tol)
{
	double ad, rd;
	difference(a, b, &ad, &rd);
	return isnan(ad) || ad > tol * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* "[1,2,3]" of flat index i in dims. */
static void index_str(const gc_tensor *t, int64_t i, char *buf, size_t len)
{
	int64_t idx[GC_MAX_RANK];
	for (int d = t->rank - 1; d >= 0; d--) {
		int64_t n = t->dims[d] > 0 ? t->dims[d] : 1;
		idx[d] = i % n;
		i /= n;
	}
	size_t at = 0;
	at += (size_t)snprintf(buf + at, len - at, "[");
	for (int d = 0; d < t->rank && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64, d ? "," : "", idx[d]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
}

/* ------------------------------------------------------------ flavours */

/* One implementation run on one node. */
/* Bytes of guard zone before and after each flavour's outputs, and what
 * they hold. */
#define GUARD 64
#define GUARD_FILL 0xA5

typedef struct flavour {
	const gc_impl_spec *im;
	void **outs;	/* one buffer per output, GUARD bytes into its allocation */
	bool ran;	/* its outputs are valid */
	bool declined;	/* returned a failure status: not for this node */
} flavour;

/* Packages loaded from a binding's manifest (no registry, or the registry
 * does not hold that manifest's operation). */
typedef struct pkg_cache {
	gc_package **pkgs;
	int32_t n;
} pkg_cache;

static void cache_free(pkg_cache *pc)
{
	for (int32_t i = 0; i < pc->n; i++)
		gc_package_free(pc->pkgs[i]);
	gc_free(pc->pkgs);
	pc->pkgs = NULL;
	pc->n = 0;
}

static const gc_op_spec *find_in_package(const gc_package *pkg, const gc_custom *c,
					 int64_t opset)
{
	const gc_op_spec *best = NULL;
	for (int32_t j = 0; j < pkg->n_ops; j++) {
		const gc_op_spec *op = &pkg->ops[j];
		if (strcmp(op->domain, c->domain) || strcmp(op->type, c->op_type))
			continue;
		if (op->version >= 0 && op->version > opset)
			continue;
		if (!best || op->version > best->version)
			best = op;
	}
	return best;
}

/* The operation a custom node was bound to: from reg when it holds the
 * binding's manifest, else from that manifest loaded again. */
static const gc_op_spec *find_op(const gc_registry *reg, pkg_cache *pc, const gc_node *n,
				 gc_error *err)
{
	const gc_custom *c = n->custom;
	const int64_t versions[2] = { n->opset, -1 };
	for (int k = 0; reg && k < 2; k++) {
		const gc_op_spec *op = gc_registry_find(reg, c->domain, c->op_type, versions[k]);
		if (op && !strcmp(op->file, c->manifest))
			return op;
	}
	for (int32_t i = 0; i < pc->n; i++)
		if (!strcmp(pc->pkgs[i]->path, c->manifest))
			return find_in_package(pc->pkgs[i], c, n->opset);
	gc_package *pkg = NULL;
	gc_package **grown = gc_realloc(pc->pkgs, ((size_t)pc->n + 1) * sizeof *grown);
	if (!grown)
		return gc_error_set(err, GC_ENOMEM, "out of memory"), NULL;
	pc->pkgs = grown;
	if (gc_manifest_parse(c->manifest, &pkg, NULL, NULL, err) ||
	    gc_package_load_libraries(pkg, err)) {
		gc_package_free(pkg);
		gc_error_prefix(err, "loading the package of node '%s' again", n->name);
		return NULL;
	}
	pc->pkgs[pc->n++] = pkg;
	const gc_op_spec *op = find_in_package(pkg, c, n->opset);
	if (!op)
		gc_error_set(err, GC_EINVAL, "%s no longer provides %s::%s (node '%s')", c->manifest,
			     c->domain, c->op_type, n->name);
	return op;
}

typedef struct node_run {
	const gc_program *p;
	const gc_node *n;
	const gc_custom *c;
	gc_tensor **io;		/* the session's views: inputs then outputs */
	void **in_copy;		/* private copies of the inputs (NULL: absent) */
	size_t *in_bytes;
	CustomOpIOTensor *views; /* inputs then outputs */
	int64_t *dims;
	int threads;
	FILE *report;
	double tol;
	gc_error *err;
	int failed, declined, overrun, invalid;
} node_run;

static int flavour_fail(node_run *r, const flavour *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int flavour_fail(node_run *r, const flavour *f, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	r->failed++;
	if (r->report)
		fprintf(r->report, "    FAILED: %s\n", msg);
	gc_error_set(r->err, GC_EKERNEL,
		     "gc_flavours_compare (--compare-flavours): node '%s' (%s::%s): flavour "
		     "'%s' (library %s, symbol %s) failed: %s",
		     r->n->name, r->c->domain, r->c->op_type, f->im->type, f->im->impl,
		     f->im->symbol, msg);
	return -1;
}

static int flavour_decline(node_run *r, flavour *f, const char *what, const char *why)
{
	r->declined++;
	f->declined = true;
	if (r->report)
		fprintf(r->report, "    declined the node (%s returned a failure status): %s\n", what,
			why[0] ? why : "it gave no reason (ctx->set_error)");
	return 0;
}

/* Whether input i is a constant (an initializer or a folded value). */
static bool input_constant(const node_run *r, int i)
{
	int32_t t = r->n->in[i];
	return t >= 0 && r->p->tensors[t].storage == GC_STORAGE_CONST;
}

/* Fills the views of every declared input and output: inputs from the
 * private copies (data NULL for the non-constant ones when `init_only`),
 * outputs from f's buffers (NULL when init_only). */
static void fill_views(node_run *r, const flavour *f, bool init_only)
{
	const gc_node *n = r->n;
	const gc_custom *c = r->c;
	gc_custom_views(r->views, r->dims, c, r->io, n->n_in, r->io + n->n_in, n->n_out);
	for (int i = 0; i < n->n_in; i++)
		if (r->io[i])
			r->views[i].data = init_only && !input_constant(r, i) ? NULL : r->in_copy[i];
	for (int i = 0; i < n->n_out; i++)
		if (r->io[n->n_in + i])
			r->views[c->n_in + i].data = init_only ? NULL : f->outs[i];
}

static void *aligned_buf(size_t bytes)
{
	return gc_aligned_alloc(64, bytes, 1);
}

/* An output buffer of `bytes` between guard zones (free with
 * guarded_free). */
static void *guarded_buf(size_t bytes)
{
	unsigned char *p = aligned_buf(bytes + 2 * GUARD);
	if (!p)
		return NULL;
	memset(p, GUARD_FILL, GUARD);
	memset(p + GUARD + bytes, GUARD_FILL, GUARD);
	return p + GUARD;
}

static void guarded_free(void *p)
{
	if (p)
		gc_free((unsigned char *)p - GUARD);
}

/* Whether the guard zones around p (bytes long) are intact; else the
 * first changed byte's offset from p (negative: before it). */
static bool guard_intact(const void *p, size_t bytes, long *off)
{
	const unsigned char *b = p;
	for (long k = -GUARD; k < 0; k++)
		if (b[k] != GUARD_FILL)
			return *off = k, false;
	for (size_t k = 0; k < GUARD; k++)
		if (b[bytes + k] != GUARD_FILL)
			return *off = (long)(bytes + k), false;
	return true;
}

/* Runs flavour f on the node's private inputs. 0, or -1 (reported). */
static int run_flavour(node_run *r, flavour *f)
{
	const gc_node *n = r->n;
	const gc_custom *c = r->c;
	const gc_impl_spec *im = f->im;
	gc_error e = { 0 };
	gc_fnptr kernel = gc_dynlib_fn(im->lib, im->symbol, &e);
	if (!kernel)
		return flavour_fail(r, f, "%s", e.msg);
	bool graphcc = im->graphcc_iface;
	if (gc_custom_check_iface(im->impl, graphcc,
				  im->init || im->destroy || im->scratch || im->scratch_bytes, &e))
		return flavour_fail(r, f, "%s", e.msg);
	gc_custom_args a = gc_custom_args_of(c, r->views);
	GcOpContext ctx;
	gc_custom_host host;
	/* scratch */
	uint64_t scratch_bytes = im->has_scratch_bytes ? im->scratch_bytes : 0;
	if (im->scratch) {
		gc_fnptr fn = gc_dynlib_fn(im->lib, im->scratch, &e);
		if (!fn)
			return flavour_fail(r, f, "%s", e.msg);
		fill_views(r, f, false);
		gc_custom_ctx_init(&ctx, &host, c->op_name, c->domain, c->op_type, n->name,
				   c->backend, im->type, im->config);
		uint64_t bytes = 0;
		if (gc_custom_call_scratch(fn, &ctx, &a, &bytes) != GC_STATUS_OK)
			return flavour_decline(r, f, "its scratch function", host.msg);
		if (bytes > (uint64_t)1 << 40)
			return flavour_fail(r, f, "scratch function %s asks for %" PRIu64 " bytes",
					    im->scratch, bytes);
		scratch_bytes = bytes;
	}
	void *scratch = NULL;
	if (scratch_bytes && !(scratch = aligned_buf((size_t)scratch_bytes)))
		return flavour_fail(r, f, "out of memory for %" PRIu64 " bytes of scratch",
				    scratch_bytes);
	/* per-node state */
	void *state = NULL;
	bool initialised = false;
	gc_fnptr destroy = NULL;
	int rc = 0;
	if (im->destroy && !(destroy = gc_dynlib_fn(im->lib, im->destroy, &e))) {
		rc = flavour_fail(r, f, "%s", e.msg);
		goto out;
	}
	if (im->init) {
		gc_fnptr init = gc_dynlib_fn(im->lib, im->init, &e);
		if (!init) {
			rc = flavour_fail(r, f, "%s", e.msg);
			goto out;
		}
		fill_views(r, f, true);
		gc_custom_ctx_init(&ctx, &host, c->op_name, c->domain, c->op_type, n->name,
				   c->backend, im->type, im->config);
		ctx.num_threads = r->threads;
		GcStatus st = gc_custom_call_init(init, &ctx, &a);
		state = ctx.state;
		if (st != GC_STATUS_OK) {
			rc = flavour_decline(r, f, "its init", host.msg);
			goto out;
		}
		initialised = true;
	}
	/* the kernel */
	fill_views(r, f, false);
	gc_custom_ctx_init(&ctx, &host, c->op_name, c->domain, c->op_type, n->name, c->backend,
			   im->type, im->config);
	ctx.state = state;
	ctx.num_threads = r->threads;
	ctx.scratch = scratch;
	ctx.scratch_bytes = scratch ? scratch_bytes : 0;
	gc_custom_ctx_services(&ctx);
	GcStatus st = gc_custom_call_kernel(kernel, graphcc, &ctx, &a);
	gc_custom_host_release(&host);
	/* Inputs must not be written (even by a kernel that then gives up):
	 * the copies must still match the session's tensors. */
	for (int i = 0; i < n->n_in; i++) {
		if (!r->in_copy[i] || !memcmp(r->in_copy[i], r->io[i]->data, r->in_bytes[i]))
			continue;
		const unsigned char *a = r->in_copy[i], *b = r->io[i]->data;
		size_t at = 0;
		while (a[at] == b[at])
			at++;
		memcpy(r->in_copy[i], r->io[i]->data, r->in_bytes[i]);
		rc = flavour_fail(r, f,
				  "kernel '%s' wrote into its input %d ('%s'), first at byte %zu of %zu",
				  im->symbol, i, r->p->tensors[n->in[i]].name, at, r->in_bytes[i]);
		goto out;
	}
	for (int o = 0; o < n->n_out; o++) {
		const gc_tensor *t = r->io[n->n_in + o];
		long off;
		if (t && !guard_intact(f->outs[o], (size_t)gc_tensor_nbytes(t), &off)) {
			r->overrun++;
			rc = flavour_fail(r, f,
					  "kernel '%s' wrote outside output %d ('%s', %" PRId64
					  " bytes): byte offset %ld",
					  im->symbol, o, r->p->tensors[n->out[o]].name,
					  gc_tensor_nbytes(t), off);
			goto out;
		}
	}
	if (st != GC_STATUS_OK) {
		rc = flavour_decline(r, f, "its kernel", host.msg);
		goto out;
	}
	f->ran = true;
out:
	if (initialised && destroy) {
		gc_custom_ctx_init(&ctx, &host, c->op_name, c->domain, c->op_type, n->name,
				   c->backend, im->type, im->config);
		ctx.state = state;
		gc_custom_call_destroy(destroy, &ctx);
	}
	gc_free(scratch);
	return rc;
}

/* The difference between two flavours' outputs. */
typedef struct pair_diff {
	double max_abs, max_rel;
	int out_abs;	   /* output of the largest absolute difference */
	int64_t at_abs;	   /* its element */
	double a, b;	   /* the two values there */
	int64_t n_bad;	   /* elements beyond the tolerance */
} pair_diff;

static void compare_pair(const node_run *r, const flavour *fa, const flavour *fb, pair_diff *d)
{
	memset(d, 0, sizeof *d);
	d->at_abs = -1;
	for (int o = 0; o < r->n->n_out; o++) {
		const gc_tensor *t = r->io[r->n->n_in + o];
		if (!t)
			continue;
		int64_t numel = gc_tensor_numel(t);
		for (int64_t i = 0; i < numel; i++) {
			double a = element(fa->outs[o], t->dtype, i);
			double b = element(fb->outs[o], t->dtype, i);
			double ad, rd;
			difference(a, b, &ad, &rd);
			d->n_bad += disagree(a, b, r->tol);
			if (worse(ad, d->max_abs) || d->at_abs < 0) {
				d->max_abs = ad;
				d->out_abs = o;
				d->at_abs = i;
				d->a = a;
				d->b = b;
			}
			if (worse(rd, d->max_rel))
				d->max_rel = rd;
		}
	}
}

static const char *out_name(const node_run *r, int o)
{
	int32_t t = r->n->out[o];
	return t >= 0 ? r->p->tensors[t].name : "?";
}

/* "compare-flavours: node 'n' (dom::Type), bound to flavour 'f'; inputs ..." */
static void report_node(const node_run *r)
{
	const gc_node *n = r->n;
	fprintf(r->report, "compare-flavours: node '%s' (%s::%s), bound to flavour '%s'; inputs",
		n->name, r->c->domain, r->c->op_type, r->c->flavour);
	for (int k = 0; k < n->n_in; k++) {
		char shp[160];
		const gc_tensor *t = r->io[k];
		if (t)
			fprintf(r->report, "%s %s %s", k ? "," : "", gc_dtype_name(t->dtype),
				gc_shape_str(t->dims, t->rank, shp, sizeof shp));
		else
			fprintf(r->report, "%s (absent)", k ? "," : "");
	}
	fputc('\n', r->report);
}

/* The private copies of the inputs, the views, and per flavour of op for
 * the node's backend, its own outputs (*fl, *n_fl). */
static int node_run_alloc(node_run *r, const gc_op_spec *op, flavour **flp, int *n_fl)
{
	const gc_node *n = r->n;
	r->in_copy = gc_calloc((size_t)n->n_in + 1, sizeof *r->in_copy);
	r->in_bytes = gc_calloc((size_t)n->n_in + 1, sizeof *r->in_bytes);
	r->views = gc_calloc((size_t)(r->c->n_in + r->c->n_out) + 1, sizeof *r->views);
	r->dims = gc_calloc((size_t)(r->c->n_in + r->c->n_out) * GC_MAX_RANK + 1, sizeof *r->dims);
	flavour *fl = *flp = gc_calloc((size_t)op->n_impls + 1, sizeof *fl);
	if (!r->in_copy || !r->in_bytes || !r->views || !r->dims || !fl)
		return gc_error_set(r->err, GC_ENOMEM, "gc_flavours_compare (--compare-flavours): out of memory");
	for (int k = 0; k < n->n_in; k++) {
		const gc_tensor *t = r->io[k];
		if (!t)
			continue;
		int64_t nb = gc_tensor_nbytes(t);
		r->in_bytes[k] = nb > 0 ? (size_t)nb : 0;
		if (!(r->in_copy[k] = aligned_buf(r->in_bytes[k])))
			return gc_error_set(r->err, GC_ENOMEM,
					    "gc_flavours_compare (--compare-flavours): out of memory");
		if (r->in_bytes[k])
			memcpy(r->in_copy[k], t->data, r->in_bytes[k]);
	}
	for (int32_t j = 0; j < op->n_impls; j++) {
		const gc_impl_spec *im = &op->impls[j];
		char why[400];
		if (im->skipped || strcmp(im->backend, r->c->backend) || !im->lib)
			continue;
		/* Only flavours the node is valid for: selection would never
		 * pick the others, and what they compute here means nothing. */
		if (!gc_impl_accepts(op, im, r->io, n->n_in, why, sizeof why)) {
			if (r->report)
				fprintf(r->report, "  flavour '%s' is not valid for this node: %s\n",
					im->type, why);
			r->invalid++;
			continue;
		}
		flavour *f = &fl[(*n_fl)++];
		f->im = im;
		f->outs = gc_calloc((size_t)n->n_out + 1, sizeof *f->outs);
		if (!f->outs)
			return gc_error_set(r->err, GC_ENOMEM,
					    "gc_flavours_compare (--compare-flavours): out of memory");
		for (int o = 0; o < n->n_out; o++) {
			const gc_tensor *t = r->io[n->n_in + o];
			int64_t nb = t ? gc_tensor_nbytes(t) : 0;
			if (!(f->outs[o] = guarded_buf(nb > 0 ? (size_t)nb : 0)))
				return gc_error_set(r->err, GC_ENOMEM,
						    "gc_flavours_compare (--compare-flavours): out of memory");
		}
	}
	return 0;
}

static void node_run_free(node_run *r, flavour *fl, int n_fl)
{
	for (int a = 0; a < n_fl; a++) {
		for (int o = 0; fl[a].outs && o < r->n->n_out; o++)
			guarded_free(fl[a].outs[o]);
		gc_free(fl[a].outs);
	}
	gc_free(fl);
	for (int k = 0; r->in_copy && k < r->n->n_in; k++)
		gc_free(r->in_copy[k]);
	gc_free(r->in_copy);
	gc_free(r->in_bytes);
	gc_free(r->views);
	gc_free(r->dims);
}

/* The pair of flavours that ran whose outputs differ most (*wa < 0: no
 * pair ran). */
static void worst_pair(const node_run *r, const flavour *fl, int n_fl, pair_diff *worst, int *wa,
		       int *wb, gc_flavours_summary *sum)
{
	*worst = (pair_diff){ .at_abs = -1 };
	*wa = *wb = -1;
	for (int a = 0; a < n_fl; a++)
		for (int b = a + 1; b < n_fl; b++) {
			if (!fl[a].ran || !fl[b].ran)
				continue;
			pair_diff d;
			compare_pair(r, &fl[a], &fl[b], &d);
			if (r->report)
				fprintf(r->report, "  %s vs %s: max abs %.3g, max rel %.3g%s\n",
					fl[a].im->type, fl[b].im->type, d.max_abs, d.max_rel,
					d.n_bad ? " -- DISAGREE beyond the tolerance" : "");
			if (sum && d.n_bad)
				sum->n_disagree++;
			if (*wa < 0 || worse(d.max_abs, worst->max_abs) ||
			    (d.max_abs == worst->max_abs && worse(d.max_rel, worst->max_rel))) {
				*worst = d;
				*wa = a;
				*wb = b;
			}
		}
}

/* The worst pair into the report and the run's summary. */
static void report_worst(const node_run *r, const flavour *fl, int n_ran, const pair_diff *worst,
			 int wa, int wb, gc_flavours_summary *sum)
{
	const gc_node *n = r->n;
	if (wa < 0) {
		if (r->report)
			fprintf(r->report, "  nothing to compare: %s\n",
				n_ran ? "only one flavour ran on this node" : "no flavour ran");
		return;
	}
	const gc_tensor *t = r->io[n->n_in + worst->out_abs];
	char idx[160] = "";
	if (t && worst->at_abs >= 0)
		index_str(t, worst->at_abs, idx, sizeof idx);
	if (r->report)
		fprintf(r->report,
			"  worst pair: %s vs %s: max abs diff %.3g (output '%s'%s: %.9g vs "
			"%.9g), max rel diff %.3g\n",
			fl[wa].im->type, fl[wb].im->type, worst->max_abs, out_name(r, worst->out_abs),
			idx, worst->a, worst->b, worst->max_rel);
	if (!sum)
		return;
	sum->n_compared++;
	if (sum->n_compared == 1 || worse(worst->max_abs, sum->max_abs) ||
	    (worst->max_abs == sum->max_abs && worse(worst->max_rel, sum->max_rel))) {
		sum->max_abs = worst->max_abs;
		sum->max_rel = worst->max_rel;
		snprintf(sum->node, sizeof sum->node, "%s", n->name);
		snprintf(sum->flavour_a, sizeof sum->flavour_a, "%s", fl[wa].im->type);
		snprintf(sum->flavour_b, sizeof sum->flavour_b, "%s", fl[wb].im->type);
	}
}

/* Compares every flavour of custom node rn on its inputs as they are now. */
static int compare_node(const gc_registry *reg, pkg_cache *pc, const gc_run_node *rn,
			FILE *report, double tol, gc_flavours_summary *sum, gc_error *err)
{
	const gc_node *n = rn->node;
	gc_error local = { 0 };
	node_run r = { .p = rn->program, .n = n, .c = n->custom,
		       .io = gc_session_io(rn->session, rn->index), .threads = rn->threads,
		       .report = report, .tol = tol, .err = err };
	flavour *fl = NULL;
	int n_fl = 0, rc = 0;
	if (sum)
		sum->n_custom++;
	if (report)
		report_node(&r);
	const gc_op_spec *op = find_op(reg, pc, n, &local);
	if (!op) {
		if (report)
			fprintf(report, "  FAILED: %s\n", local.msg);
		if (sum)
			sum->n_failed++;
		return gc_error_set(err, local.code ? local.code : GC_EINVAL,
				    "gc_flavours_compare (--compare-flavours): %s", local.msg);
	}
	if ((rc = node_run_alloc(&r, op, &fl, &n_fl)))
		goto out;
	if (report)
		fprintf(report, "  %d %s flavour%s of operation '%s' (%s):\n", n_fl, r.c->backend,
			n_fl == 1 ? "" : "s", op->name, op->file);
	int n_ran = 0;
	for (int a = 0; a < n_fl; a++) {
		/* Written (and flushed) before the call: if the kernel crashes, the
		 * last line before the crash report names it. */
		if (report) {
			fprintf(report, "  flavour '%s': %s, symbol %s\n", fl[a].im->type,
				fl[a].im->impl, fl[a].im->symbol);
			fflush(report);
		}
		run_flavour(&r, &fl[a]);
		n_ran += fl[a].ran;
	}
	pair_diff worst;
	int wa, wb;
	worst_pair(&r, fl, n_fl, &worst, &wa, &wb, sum);
	report_worst(&r, fl, n_ran, &worst, wa, wb, sum);
	if (sum) {
		sum->n_failed += r.failed;
		sum->n_declined += r.declined;
		sum->n_invalid += r.invalid;
		sum->n_overrun += r.overrun;
	}
	if (r.failed)
		rc = err && err->code ? err->code : GC_EKERNEL;
out:
	node_run_free(&r, fl, n_fl);
	return rc;
}

/* The comparison as a hook set of the executor's loop: before each custom
 * node. */
typedef struct compare_run {
	const gc_registry *reg;
	pkg_cache pc;
	FILE *report;
	double tol;
	gc_flavours_summary *sum;
	gc_error cmp; /* the first flavour failure */
} compare_run;

/* A flavour's failure is reported after the run, which goes on; only
 * running out of memory stops it. A crash in any flavour is reported as
 * one in this node (crash.c names the node's bound flavour; with a report,
 * its last line before the crash names the flavour that was being
 * compared). */
static int compare_before(void *user, gc_run_node *rn, gc_error *err)
{
	compare_run *cr = user;
	if (!rn->node->custom)
		return 0;
	int crc = compare_node(cr->reg, &cr->pc, rn, cr->report, cr->tol, cr->sum, &cr->cmp);
	if (crc != GC_ENOMEM)
		return 0;
	*err = cr->cmp;
	return crc;
}

int gc_flavours_compare(const gc_registry *reg, gc_session *s, FILE *report, double tolerance,
			gc_flavours_summary *sum, gc_error *err)
{
	gc_error local = { 0 };
	gc_flavours_summary own;
	if (!err)
		err = &local;
	GC_ARG_NONNULL(err, s);
	if (!sum)
		sum = &own;
	memset(sum, 0, sizeof *sum);
	sum->tolerance = tolerance > 0 ? tolerance : 1e-4;
	compare_run cr = { .reg = reg, .report = report, .tol = sum->tolerance, .sum = sum };
	gc_run_hooks h = { .user = &cr, .before = compare_before };
	int rc = gc_session_run_hooked(s, &h, err);
	cache_free(&cr.pc);
	if (rc)
		return rc;
	if (sum->n_overrun || sum->n_disagree) {
		char first[GC_ERROR_MSG_MAX / 2] = "";
		if (cr.cmp.code)
			snprintf(first, sizeof first, "; %.500s", cr.cmp.msg);
		return gc_error_set(err, GC_ECRASH,
				    "gc_flavours_compare (--compare-flavours): %d pair%s of flavours "
				    "disagree beyond tolerance %g, %d flavour%s wrote outside %s "
				    "outputs%s",
				    sum->n_disagree, sum->n_disagree == 1 ? "" : "s", sum->tolerance,
				    sum->n_overrun, sum->n_overrun == 1 ? "" : "s",
				    sum->n_overrun == 1 ? "its" : "their", first);
	}
	if (cr.cmp.code) {
		*err = cr.cmp;
		rc = cr.cmp.code;
	}
	return rc;
}
