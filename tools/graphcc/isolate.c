/*
 * graphcc run's debugging run (cli_debug_session): the instruments of
 * cli_debug_options, --repeat N times with run-to-run differences per node,
 * then --repro NODE DIR and --isolate.
 *
 * One observer (gc_debug_options.observe) keeps a copy of what each node
 * read, just before its kernel, and of what it wrote, just after, in the
 * first run. In later runs (--repeat) a node whose inputs equal the first
 * run's but whose outputs do not is reported: it keeps state from run to
 * run, or reads scratch before writing it. Nodes fed by a difference are
 * not blamed.
 *
 * --repro NODE DIR writes, before the node's kernel runs (so that a crash
 * still leaves it), DIR/model.onnx (the node alone: gc_graph_node_alone),
 * one .npy per input as the node saw it, and after the kernel the outputs
 * it produced under DIR/as-run/. --isolate does that for every custom node
 * in a temporary folder, runs each reproducer in a fresh graphcc process
 * and compares its outputs with the run's: a node that gives other values
 * alone shares hidden state with other nodes, or reads scratch before
 * writing it. Its folder is kept and named; the others go.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <graphcc/debug.h>

#include "cli.h"

#define DEFAULT_TOLERANCE 1e-5

/* Copies of one node's tensors (in the first run). */
typedef struct node_copy {
	int32_t n_in, n_out;
	gc_tensor *in, *out; /* data NULL: absent, or a type not kept */
	bool seen, blamed;
} node_copy;

typedef struct session_copy {
	const cli_opts *o;
	const gc_graph *g;
	const gc_program *p;
	node_copy *nodes;
	int run;	   /* 0: the first */
	bool inputs_same;  /* of the node running now, against the first run */
	int32_t repro;	   /* --repro's node, -1: none */
	int32_t n_blamed;  /* nodes that differ from run to run */
	double tolerance;
	gc_error *err;
} session_copy;

static void copy_release(gc_tensor *t)
{
	free(t->data);
	t->data = NULL;
}

/* A copy of t (numeric types only), or data NULL. */
static gc_tensor copy_of(const gc_tensor *t)
{
	gc_tensor c = { 0 };
	if (!t || !t->data || t->dtype == GC_DTYPE_STRING || gc_dtype_size(t->dtype) == 0)
		return c;
	int64_t nb = gc_tensor_nbytes(t);
	if (nb < 0)
		return c;
	c = *t;
	c.data = malloc((size_t)nb + 1);
	if (c.data)
		memcpy(c.data, t->data, (size_t)nb);
	return c;
}

/* Copies of n tensors (calloc'd array), or NULL when out of memory. */
static gc_tensor *copies(gc_tensor *const *t, int32_t n)
{
	gc_tensor *c = calloc((size_t)n + 1, sizeof *c);
	for (int32_t j = 0; c && j < n; j++)
		c[j] = copy_of(t[j]);
	return c;
}

static double value_at(const gc_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case GC_DTYPE_FLOAT: return ((const float *)t->data)[i];
	case GC_DTYPE_DOUBLE: return ((const double *)t->data)[i];
	case GC_DTYPE_INT32: return ((const int32_t *)t->data)[i];
	case GC_DTYPE_INT64: return (double)((const int64_t *)t->data)[i];
	default: return 0;
	}
}

/* Where a and b differ beyond tol x max(1, |a|, |b|) (other types:
 * bytewise): the largest difference (NaN against a number: infinite) and
 * its flat index; -1 when they agree, -2 when the shapes differ. */
static int64_t differ(const gc_tensor *a, const gc_tensor *b, double tol, double *worst)
{
	*worst = 0;
	if (a->dtype != b->dtype || a->rank != b->rank ||
	    memcmp(a->dims, b->dims, sizeof a->dims[0] * (size_t)a->rank))
		return -2;
	int64_t n = gc_tensor_numel(a), size = gc_dtype_size(a->dtype), at = -1;
	if (!memcmp(a->data, b->data, (size_t)(n * size)))
		return -1;
	bool numeric = a->dtype == GC_DTYPE_FLOAT || a->dtype == GC_DTYPE_DOUBLE ||
		       a->dtype == GC_DTYPE_INT32 || a->dtype == GC_DTYPE_INT64;
	for (int64_t i = 0; i < n; i++) {
		if (!numeric) {
			if (memcmp((const char *)a->data + i * size, (const char *)b->data + i * size,
				   (size_t)size))
				return *worst = 1, i;
			continue;
		}
		double x = value_at(a, i), y = value_at(b, i);
		if (isnan(x) && isnan(y))
			continue;
		double d = isnan(x) || isnan(y) ? INFINITY : fabs(x - y);
		double scale = fmax(1.0, fmax(fabs(x), fabs(y)));
		if (d > tol * scale && d > *worst) {
			*worst = d;
			at = i;
		}
	}
	return at;
}

/* "node 'n' (dom::Type), flavour 'f', library L, symbol S". */
static const char *node_str(const gc_program *p, int32_t i, char *buf, size_t len)
{
	gc_node_desc d;
	gc_program_node(p, i, &d);
	if (d.flavour)
		snprintf(buf, len, "node '%s' (%s::%s), operation '%s', flavour '%s', library %s, "
			 "symbol %s", d.name, d.domain, d.op_type, d.op_name, d.flavour, d.library,
			 d.symbol);
	else
		snprintf(buf, len, "node '%s' (%s)", d.name, d.op_type);
	return buf;
}

/* "output 'u'[2]: 0.25 (run 1) vs 0.5 (run 2)" for the worst element. */
static void worst_str(const gc_tensor *a, const gc_tensor *b, int64_t at, const char *name,
		      const char *la, const char *lb, char *buf, size_t len)
{
	if (at == -2) {
		char sa[160], sb[160];
		snprintf(buf, len, "output '%s' is %s %s (%s) vs %s %s (%s)", name,
			 gc_dtype_name(a->dtype), gc_shape_str(a->dims, a->rank, sa, sizeof sa), la,
			 gc_dtype_name(b->dtype), gc_shape_str(b->dims, b->rank, sb, sizeof sb), lb);
		return;
	}
	snprintf(buf, len, "output '%s' at flat index %lld: %.9g (%s) vs %.9g (%s)", name,
		 (long long)at, value_at(a, at), la, value_at(b, at), lb);
}

/* ------------------------------------------------------------ --repro */

static const char *tensor_name(const gc_program *p, int32_t i, int is_out, int j)
{
	const char *name = NULL;
	gc_program_node_tensor(p, i, is_out, j, &name);
	return name ? name : "";
}

/* Input or output j of program node i as the ONNX graph names it (what the
 * one-node model and its files use: passes may have renamed the program's
 * tensors); *is_const when the model gives it as an initializer. */
static const char *model_name(const session_copy *c, int32_t i, int is_out, int j, int *is_const)
{
	gc_node_desc d;
	gc_program_node(c->p, i, &d);
	*is_const = 0;
	for (int k = 0; c->g && k < gc_graph_num_nodes(c->g); k++) {
		const char *name, *dom, *type;
		gc_graph_node(c->g, k, &name, &dom, &type);
		if (!strcmp(name, d.name)) {
			const char *t = gc_graph_node_io(c->g, k, is_out, j, is_const);
			return t ? t : "";
		}
	}
	return tensor_name(c->p, i, is_out, j);
}

static const char *tensor_node_name(const gc_program *p, int32_t i)
{
	gc_node_desc d;
	gc_program_node(p, i, &d);
	return d.name;
}

/* DIR/model.onnx and the inputs as node i sees them now. */
static int repro_write_inputs(session_copy *c, int32_t i, const char *dir,
			      gc_tensor *const *in, int32_t n_in, gc_error *err)
{
	gc_node_desc d;
	gc_program_node(c->p, i, &d);
	gc_graph *one = NULL;
	char path[4200];
	if (cli_mkdir_p(dir, err) ||
	    gc_graph_node_alone(c->g, d.name, (const gc_tensor *const *)in, &one, err))
		return err->code;
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	int rc = gc_onnx_save(one, path, err);
	for (int32_t k = 0; !rc && k < n_in; k++) {
		int is_const;
		const char *name = model_name(c, i, 0, k, &is_const);
		if (!in[k] || is_const || !name[0])
			continue;
		char fname[256];
		cli_safe_name(name, fname, sizeof fname);
		snprintf(path, sizeof path, "%s/%s.npy", dir, fname);
		rc = gc_npy_write(path, in[k], err);
	}
	gc_graph_free(one);
	return rc;
}

static int repro_write_outputs(const session_copy *c, int32_t i, const char *dir,
			       gc_tensor *const *out, int32_t n_out, gc_error *err)
{
	int is_const;
	char path[4200], fname[256];
	snprintf(path, sizeof path, "%s/as-run", dir);
	if (cli_mkdir_p(path, err))
		return err->code;
	for (int32_t j = 0; j < n_out; j++) {
		if (!out[j] || !out[j]->data)
			continue;
		cli_safe_name(model_name(c, i, 1, j, &is_const), fname, sizeof fname);
		snprintf(path, sizeof path, "%s/as-run/%s.npy", dir, fname);
		if (gc_npy_write(path, out[j], err))
			return err->code;
	}
	return 0;
}

/* Node i alone, typed by the first run's copies of its inputs. */
static int alone(const session_copy *c, int32_t i, gc_graph **one, gc_error *err)
{
	const node_copy *nc = &c->nodes[i];
	const gc_tensor **in = calloc((size_t)nc->n_in + 1, sizeof *in);
	if (!in)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	for (int32_t j = 0; j < nc->n_in; j++)
		in[j] = nc->in[j].data ? &nc->in[j] : NULL;
	gc_node_desc d;
	gc_program_node(c->p, i, &d);
	int rc = gc_graph_node_alone(c->g, d.name, in, one, err);
	free(in);
	return rc;
}

/* The command that runs the reproducer in dir (argv, NULL-ended; strings
 * in buf). */
static int repro_argv(const cli_opts *o, const gc_graph *one, const char *dir, const char *outdir,
		      char **argv, int max, char *buf, size_t len)
{
	int n = 0;
	size_t at = 0;
#define ARG(...)                                                                                   \
	do {                                                                                       \
		if (n + 1 >= max || at >= len)                                                     \
			return -1;                                                                 \
		argv[n++] = buf + at;                                                              \
		at += (size_t)snprintf(buf + at, len - at, __VA_ARGS__) + 1;                       \
	} while (0)
	ARG("run");
	ARG("%s/model.onnx", dir);
	for (int k = 0; k < o->n_ops; k++) {
		ARG("--ops");
		ARG("%s", o->ops[k]);
	}
	for (int k = 0; k < o->n_lib_dirs; k++) {
		ARG("--allow-libraries");
		ARG("%s", o->lib_dirs[k]);
	}
	for (int j = 0; j < gc_graph_num_inputs(one); j++) {
		char fname[256];
		cli_safe_name(gc_graph_input_name(one, j), fname, sizeof fname);
		ARG("--input");
		ARG("%s=%s/%s.npy", gc_graph_input_name(one, j), dir, fname);
	}
	ARG("--output-dir");
	ARG("%s", outdir);
#undef ARG
	argv[n] = NULL;
	return at <= len ? n : -1;
}

static void print_repro(const session_copy *c, int32_t i, const char *dir)
{
	gc_node_desc d;
	gc_program_node(c->p, i, &d);
	gc_graph *one = NULL;
	gc_error e = { 0 };
	char *argv[MAX_ARGS], buf[16384], node[1400];
	if (alone(c, i, &one, &e))
		return;
	char out[4200];
	snprintf(out, sizeof out, "%s/alone", dir);
	int n = repro_argv(c->o, one, dir, out, argv, MAX_ARGS, buf, sizeof buf);
	fprintf(stderr,
		"graphcc: --repro: %s written to %s: model.onnx (the node alone, with the weights "
		"it reads), its inputs as the node saw them (.npy) and, in as-run/, the outputs it "
		"produced in this run. Reproduce it without the model with\n  graphcc",
		node_str(c->p, i, node, sizeof node), dir);
	for (int k = 0; k < n; k++)
		fprintf(stderr, " %s", argv[k]);
	fprintf(stderr,
		"\nand compare %s/ with %s/as-run/: values that differ when the node runs alone "
		"are themselves a clue (state shared between nodes, or scratch read before "
		"written)\n",
		out, dir);
	gc_graph_free(one);
}

/* ------------------------------------------------------------ the observer */

static int observe_before(session_copy *c, int32_t i, gc_tensor *const *in, int32_t n_in)
{
	node_copy *nc = &c->nodes[i];
	if (c->run == 0) {
		nc->n_in = n_in;
		if (!(nc->in = copies(in, n_in)))
			return GC_ENOMEM;
		if (i == c->repro) {
			if (repro_write_inputs(c, i, c->o->repro_dir, in, n_in, c->err))
				return c->err->code;
			fprintf(stderr,
				"graphcc: --repro: node '%s' alone (model.onnx) and its inputs written "
				"to %s before its kernel runs\n",
				tensor_node_name(c->p, i), c->o->repro_dir);
		}
		return 0;
	}
	/* A later run: are the inputs the first run's? */
	c->inputs_same = true;
	for (int32_t j = 0; j < n_in && j < nc->n_in && c->inputs_same; j++) {
		double w;
		if (in[j] && nc->in[j].data)
			c->inputs_same = differ(&nc->in[j], in[j], c->tolerance, &w) == -1;
	}
	return 0;
}

static int observe_after(session_copy *c, int32_t i, gc_tensor *const *out, int32_t n_out)
{
	node_copy *nc = &c->nodes[i];
	if (c->run == 0) {
		nc->n_out = n_out;
		if (!(nc->out = copies(out, n_out)))
			return GC_ENOMEM;
		nc->seen = true;
		if (i == c->repro) {
			if (repro_write_outputs(c, i, c->o->repro_dir, out, n_out, c->err))
				return c->err->code;
			print_repro(c, i, c->o->repro_dir);
		}
		return 0;
	}
	for (int32_t j = 0; c->inputs_same && !nc->blamed && j < n_out && j < nc->n_out; j++) {
		double w;
		int64_t at;
		if (!out[j] || !nc->out[j].data ||
		    (at = differ(&nc->out[j], out[j], c->tolerance, &w)) == -1)
			continue;
		char node[1400], what[600], l1[32], l2[32];
		snprintf(l1, sizeof l1, "run 1");
		snprintf(l2, sizeof l2, "run %d", c->run + 1);
		worst_str(&nc->out[j], out[j], at, tensor_name(c->p, i, 1, j), l1, l2, what,
			  sizeof what);
		fprintf(stderr,
			"graphcc: --repeat: %s gives other values in run %d than in run 1 on the "
			"same inputs: %s; it keeps state from run to run, or reads scratch before "
			"writing it\n",
			node_str(c->p, i, node, sizeof node), c->run + 1, what);
		nc->blamed = true;
		c->n_blamed++;
	}
	return 0;
}

static int observe(void *user, int32_t node, int after, gc_tensor *const *in, int32_t n_in,
		   gc_tensor *const *out, int32_t n_out)
{
	session_copy *c = user;
	return after ? observe_after(c, node, out, n_out) : observe_before(c, node, in, n_in);
}

/* ------------------------------------------------------------ --isolate */

/* Runs argv (graphcc's own binary) with stderr into errpath; its exit
 * status, or -1. */
static int spawn(char **argv, const char *errpath)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = 0;
	char *full[MAX_ARGS + 2];
	full[0] = self;
	int k = 0;
	for (; argv[k] && k < MAX_ARGS; k++)
		full[k + 1] = argv[k];
	full[k + 1] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd >= 0)
			dup2(fd, 2);
		if (nul >= 0)
			dup2(nul, 1);
		execv(self, full);
		_exit(127);
	}
	return cli_wait(pid);
}

/* The first line of a file, for a failed reproducer's message. */
static void first_line(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* Custom node i again, alone, in a fresh process; 1 when it differs
 * (reported), 0 when it agrees, 2 when it cannot run alone (said why), or
 * an error. */
static int isolate_node(session_copy *c, int32_t i, const char *top, gc_error *err)
{
	const node_copy *nc = &c->nodes[i];
	gc_node_desc d;
	gc_program_node(c->p, i, &d);
	for (int32_t j = 0; j < nc->n_in; j++)
		if (!nc->in[j].data && gc_program_node_tensor(c->p, i, 0, j, NULL)) {
			fprintf(stderr,
				"graphcc: --isolate: node '%s' not run alone: its input %d ('%s') is "
				"not a numeric tensor, which a reproducer cannot hold\n",
				d.name, (int)j, tensor_name(c->p, i, 0, j));
			return 2;
		}
	char dir[4800], outdir[4900], errpath[4900], fname[256];
	cli_safe_name(d.name, fname, sizeof fname);
	snprintf(dir, sizeof dir, "%s/%d_%s", top, (int)i, fname);
	gc_tensor **in = calloc((size_t)nc->n_in + 1, sizeof *in), **out;
	if (!in)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	for (int32_t j = 0; j < nc->n_in; j++)
		in[j] = nc->in[j].data ? (gc_tensor *)&nc->in[j] : NULL;
	out = calloc((size_t)nc->n_out + 1, sizeof *out);
	for (int32_t j = 0; out && j < nc->n_out; j++)
		out[j] = nc->out[j].data ? (gc_tensor *)&nc->out[j] : NULL;
	int rc = !out ? gc_error_set(err, GC_ENOMEM, "out of memory")
		      : repro_write_inputs(c, i, dir, in, nc->n_in, err);
	if (!rc)
		rc = repro_write_outputs(c, i, dir, out, nc->n_out, err);
	free(in);
	free(out);
	if (rc)
		return rc;
	gc_graph *one = NULL;
	char *argv[MAX_ARGS], buf[16384], node[1400];
	snprintf(outdir, sizeof outdir, "%s/alone", dir);
	snprintf(errpath, sizeof errpath, "%s/alone.stderr", dir);
	if (alone(c, i, &one, err))
		return err->code;
	int n = repro_argv(c->o, one, dir, outdir, argv, MAX_ARGS, buf, sizeof buf);
	gc_graph_free(one);
	if (n < 0)
		return gc_error_set(err, GC_ELIMIT, "--isolate: command line too long");
	int st = spawn(argv, errpath);
	node_str(c->p, i, node, sizeof node);
	if (st != 0) {
		char line[1024];
		first_line(errpath, line, sizeof line);
		fprintf(stderr,
			"graphcc: --isolate: %s ran in the model, but alone, in a fresh process, on "
			"the inputs it saw, it failed (exit %d): %s; reproducer kept in %s\n",
			node, st, line[0] ? line : "(no message)", dir);
		return 1;
	}
	int differs = 0;
	for (int32_t j = 0; j < nc->n_out && !differs; j++) {
		if (!nc->out[j].data)
			continue;
		char path[5300];
		int is_const;
		cli_safe_name(model_name(c, i, 1, j, &is_const), fname, sizeof fname);
		snprintf(path, sizeof path, "%s/%s.npy", outdir, fname);
		gc_tensor t = { 0 };
		gc_error e = { 0 };
		if (gc_npy_read(path, &t, &e))
			return gc_error_set(err, e.code, "--isolate: %s", e.msg);
		double w;
		int64_t at = differ(&nc->out[j], &t, c->tolerance, &w);
		if (at != -1) {
			char what[600];
			worst_str(&nc->out[j], &t, at, tensor_name(c->p, i, 1, j), "in the run",
				  "alone", what, sizeof what);
			fprintf(stderr,
				"graphcc: --isolate: %s gives other values alone, in a fresh process, "
				"on the inputs it saw in the run: %s (max abs diff %.3g); hidden state "
				"shared between nodes (a static or global buffer) or scratch read "
				"before written; reproducer kept in %s\n",
				node, what, w, dir);
			differs = 1;
		}
		gc_tensor_release(&t);
	}
	return differs;
}

static void remove_tree(const char *dir)
{
	char *argv[] = { "rm", "-rf", "--", (char *)dir, NULL };
	pid_t pid = fork();
	if (pid == 0) {
		execvp("rm", argv);
		_exit(127);
	}
	if (pid > 0)
		cli_wait(pid);
}

static int isolate_all(session_copy *c, gc_error *err)
{
	const char *tmp = getenv("TMPDIR");
	char top[4096];
	snprintf(top, sizeof top, "%s/graphcc-isolate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(top))
		return gc_error_set(err, GC_EIO, "--isolate: cannot create a folder in %s: %s",
				    tmp && *tmp ? tmp : "/tmp", strerror(errno));
	int n_custom = 0, n_differ = 0, n_skipped = 0, rc = 0;
	for (int32_t i = 0; i < gc_program_num_nodes(c->p) && !rc; i++) {
		gc_node_desc d;
		gc_program_node(c->p, i, &d);
		if (!d.flavour || !c->nodes[i].seen)
			continue;
		n_custom++;
		int r = isolate_node(c, i, top, err);
		if (r < 0)
			rc = r;
		else if (r == 1)
			n_differ++;
		else if (r == 2)
			n_skipped++;
		else {
			char dir[4800], fname[256];
			cli_safe_name(d.name, fname, sizeof fname);
			snprintf(dir, sizeof dir, "%s/%d_%s", top, (int)i, fname);
			remove_tree(dir);
		}
	}
	if (!n_differ)
		rmdir(top);
	if (rc)
		return rc;
	fprintf(stderr, "graphcc: --isolate: %d custom node%s run again alone, each in a fresh "
		"process: %d gave the values of the run%s\n", n_custom - n_skipped,
		n_custom - n_skipped == 1 ? "" : "s", n_custom - n_differ - n_skipped,
		n_skipped ? " (the others could not run alone: said above)" : "");
	if (n_differ)
		return gc_error_set(err, GC_ECRASH,
				    "--isolate: %d custom node%s gave other values alone than in the "
				    "run (reported above)",
				    n_differ, n_differ == 1 ? "" : "s");
	return 0;
}

/* ------------------------------------------------------------ the session */

static int32_t find_node(const gc_program *p, const char *name)
{
	for (int32_t i = 0; i < gc_program_num_nodes(p); i++) {
		gc_node_desc d;
		gc_program_node(p, i, &d);
		if (!strcmp(d.name, name))
			return i;
	}
	return -1;
}

int cli_debug_session(const cli_opts *o, const gc_graph *g, const gc_program *p, gc_session *s,
		      gc_error *err)
{
	if ((o->isolate || o->repro_node) && !g)
		return gc_error_set(err, GC_EINVAL,
				    "--isolate and --repro write one-node ONNX models: run the ONNX "
				    "model (%s is a compiled program)",
				    o->model);
	session_copy c = { .o = o, .g = g, .p = p, .repro = -1, .err = err,
			   .tolerance = o->tolerance > 0 ? o->tolerance : DEFAULT_TOLERANCE };
	if (o->repro_node && (c.repro = find_node(p, o->repro_node)) < 0)
		return gc_error_set(err, GC_EINVAL,
				    "--repro: the program has no node '%s' (nodes removed by "
				    "constant folding do not run)",
				    o->repro_node);
	int32_t n = gc_program_num_nodes(p);
	c.nodes = calloc((size_t)n + 1, sizeof *c.nodes);
	if (!c.nodes)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	gc_debug_options d = cli_debug_options(o);
	if (o->repeat > 1 || o->isolate || o->repro_node) { /* copies only when they serve */
		d.observe = observe;
		d.observe_user = &c;
	}
	int rc = 0;
	for (c.run = 0; c.run < o->repeat && !rc; c.run++)
		rc = gc_session_run_debug(s, &d, err);
	if (!rc && c.n_blamed)
		rc = gc_error_set(err, GC_ECRASH,
				  "--repeat: %d node%s gave other values from run to run on the "
				  "same inputs (reported above)",
				  (int)c.n_blamed, c.n_blamed == 1 ? "" : "s");
	else if (!rc && o->repeat > 1)
		fprintf(stderr, "graphcc: --repeat: %d runs with debugging options; every node "
			"gave the same values each run\n", o->repeat);
	if (!rc && o->isolate)
		rc = isolate_all(&c, err);
	for (int32_t i = 0; i < n; i++) {
		for (int32_t j = 0; j < c.nodes[i].n_in; j++)
			copy_release(&c.nodes[i].in[j]);
		for (int32_t j = 0; j < c.nodes[i].n_out; j++)
			copy_release(&c.nodes[i].out[j]);
		free(c.nodes[i].in);
		free(c.nodes[i].out);
	}
	free(c.nodes);
	return rc;
}

int cli_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
