/* graphcc run: compile in memory and run on tensor files. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int mkdir_p(const char *dir, gc_error *err)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
		return gc_error_set(err, GC_EINVAL, "%s: path too long", dir);
	for (char *p = buf + 1;; p++) {
		if (*p == '/' || !*p) {
			char c = *p;
			*p = 0;
			if (mkdir(buf, 0755) && errno != EEXIST) {
				return gc_error_set(err, GC_EIO, "%.2000s: cannot create folder: %s", buf,
						    strerror(errno));
			}
			*p = c;
			if (!c)
				break;
		}
	}
	return 0;
}

/* A file name for a tensor name: path separators and odd bytes become '_'. */
static void safe_name(const char *name, char *out, size_t len)
{
	size_t j = 0;
	for (size_t i = 0; name[i] && j + 1 < len; i++) {
		unsigned char ch = (unsigned char)name[i];
		out[j++] = (ch == '/' || ch == '\\' || ch < 32 || ch == 127) ? '_' : (char)ch;
	}
	out[j] = 0;
	if (!strcmp(out, ".") || !strcmp(out, "..") || !out[0])
		snprintf(out, len, "output_%s", name[0] ? "dot" : "unnamed");
}

/* The inputs of a model: names and declared shapes, from the graph (ONNX)
 * or the program (.gcb). */
typedef struct model_inputs {
	const gc_graph *g;
	const gc_program *p;
} model_inputs;

static int num_inputs(const model_inputs *m)
{
	return m->g ? gc_graph_num_inputs(m->g) : gc_program_num_inputs(m->p);
}

static const char *input_name(const model_inputs *m, int k)
{
	const char *name = NULL;
	if (m->g)
		return gc_graph_input_name(m->g, k);
	gc_program_input(m->p, k, &name);
	return name;
}

static void input_info(const model_inputs *m, int k, gc_tensor *info)
{
	if (m->g)
		gc_graph_tensor_info(m->g, input_name(m, k), info);
	else
		*info = *gc_program_input(m->p, k, NULL);
}

static bool has_default(const model_inputs *m, int k)
{
	return m->g && gc_graph_input_has_default(m->g, k);
}

/*
 * Reads every --input file and says which model input it is (bound[i]);
 * checks names, duplicates and that every input without a default is given.
 */
static int read_inputs(const cli_opts *o, const model_inputs *m, gc_tensor *files, int *bound,
		       int *n_files, gc_error *err)
{
	int n_in = num_inputs(m);
	if (o->n_inputs > n_in)
		return gc_error_set(err, GC_EINVAL, "%s: %d inputs given, but the model has %d",
				    o->model, o->n_inputs, n_in);
	for (int i = 0; i < o->n_inputs; i++) {
		const cli_input *ci = &o->inputs[i];
		int idx = i;
		if (ci->name) {
			idx = -1;
			for (int k = 0; k < n_in; k++)
				if (!strcmp(input_name(m, k), ci->name))
					idx = k;
			if (idx < 0) {
				char names[512] = "";
				size_t at = 0;
				for (int k = 0; k < n_in && at < sizeof names; k++)
					at += (size_t)snprintf(names + at, sizeof names - at, "%s'%s'",
							       k ? ", " : "", input_name(m, k));
				return gc_error_set(err, GC_EINVAL,
						    "--input %s=%s: the model %s has no input named "
						    "'%s' (its inputs: %s)",
						    ci->name, ci->path, o->model, ci->name, names);
			}
		}
		for (int j = 0; j < i; j++)
			if (bound[j] == idx)
				return gc_error_set(err, GC_EINVAL,
						    "input '%s' is given twice (%s and %s)",
						    input_name(m, idx), o->inputs[j].path, ci->path);
		bound[i] = idx;
		gc_tensor info;
		input_info(m, idx, &info);
		if (cli_read_value(ci->path, info.dtype, &files[i], err))
			return err->code;
		*n_files = i + 1;
	}
	for (int k = 0; k < n_in; k++) {
		bool given = has_default(m, k);
		for (int i = 0; i < o->n_inputs; i++)
			given |= bound[i] == k;
		if (!given) {
			gc_tensor info;
			char shp[160];
			input_info(m, k, &info);
			return gc_error_set(err, GC_EINVAL,
					    "%s: no file given for input '%s' (%s, shape %s): add "
					    "--input %s=FILE",
					    o->model, input_name(m, k), gc_dtype_name(info.dtype),
					    gc_shape_str(info.dims, info.rank, shp, sizeof shp),
					    input_name(m, k));
		}
	}
	return 0;
}

/* ONNX: inputs given by file replace initializer defaults, and dynamic dims
 * take their sizes from the files; then compile. */
static int compile_onnx(cli_opts *o, gc_graph *g, const gc_registry *reg, const gc_tensor *files,
			const int *bound, gc_program **p, gc_error *err)
{
	for (int i = 0; i < o->n_inputs; i++) {
		const char *iname = gc_graph_input_name(g, bound[i]);
		if (gc_graph_input_has_default(g, bound[i]) && gc_graph_drop_default(g, iname, err))
			return err->code;
		gc_tensor info;
		gc_graph_tensor_info(g, iname, &info);
		bool dynamic = false, explicit = false;
		for (int d = 0; d < info.rank; d++)
			dynamic |= info.dims[d] < 0;
		for (int k = 0; k < o->n_shapes; k++)
			explicit |= !strcmp(o->shapes[k].name, iname);
		if (dynamic && !explicit && info.rank == files[i].rank && o->n_shapes < MAX_ARGS) {
			gc_shape_override *so = &o->shapes[o->n_shapes++];
			so->name = iname;
			so->rank = files[i].rank;
			memcpy(so->dims, files[i].dims, sizeof so->dims);
		}
	}
	/* The program runs once on these files: shapes that depend on input
	 * values are computed from them. */
	gc_input_value vals[MAX_ARGS];
	for (int i = 0; i < o->n_inputs; i++)
		vals[i] = (gc_input_value){ gc_graph_input_name(g, bound[i]), &files[i] };
	gc_compile_options copt = cli_compile_options(o, reg);
	copt.input_values = vals;
	copt.n_input_values = o->n_inputs;
	return gc_compile(g, &copt, p, err);
}

/* Whether an output written as file name a would touch one of b's paths
 * (b, b.npy, b.none: cli_write_value writes one and removes the others). */
static bool same_paths(const char *a, const char *b)
{
	size_t n = strlen(b);
	return !strncmp(a, b, n) && (!a[n] || !strcmp(a + n, ".npy") || !strcmp(a + n, ".none"));
}

/* Two outputs whose file names would clash ('a/b' and 'a_b' are both
 * written as a_b.npy) are refused, naming both. */
static int check_file_names(const cli_opts *o, const gc_program *p, gc_error *err)
{
	int n = gc_program_num_outputs(p);
	for (int i = 0; i < n; i++) {
		const char *a, *b;
		char fa[256], fb[256];
		gc_program_output(p, i, &a);
		safe_name(a, fa, sizeof fa);
		for (int j = 0; j < i; j++) {
			gc_program_output(p, j, &b);
			safe_name(b, fb, sizeof fb);
			if (same_paths(fa, fb) || same_paths(fb, fa))
				return gc_error_set(err, GC_EINVAL,
						    "outputs '%.200s' and '%.200s' would both be "
						    "written as '%.255s' in %.2000s (names made "
						    "file-safe): rename one of them",
						    b, a, strlen(fa) < strlen(fb) ? fa : fb, o->output_dir);
		}
	}
	return 0;
}

/* Output i's file name (made file-safe) in buf; returns buf. */
static const char *output_file_name(const gc_program *p, int i, char buf[256])
{
	const char *name;
	gc_program_output(p, i, &name);
	safe_name(name, buf, 256);
	return buf;
}

static int write_outputs(const cli_opts *o, const gc_program *p, const gc_session *s,
			 gc_error *err)
{
	if (!o->output_dir)
		return 0;
	/* Every output must be writable (a string output must be UTF-8) before
	 * anything is written: a refused run leaves no files. */
	for (int i = 0; i < gc_program_num_outputs(p); i++) {
		const char *name;
		gc_program_output(p, i, &name);
		char what[300];
		snprintf(what, sizeof what, "output '%.200s'", name);
		if (cli_check_value(gc_session_output(s, i), what, err))
			return err->code;
	}
	if (check_file_names(o, p, err))
		return err->code;
	if (mkdir_p(o->output_dir, err))
		return err->code;
	/* The folder is the user's: graphcc replaces only what it wrote there
	 * (listed in its ledger), checked for every output before any is written;
	 * the ledger as it will be is made before writing too, saved after. */
	int n_out = gc_program_num_outputs(p);
	cli_ledger led;
	if (cli_ledger_load(&led, o->output_dir, err))
		return err->code;
	int rc = 0;
	char fname[256];
	for (int i = 0; i < n_out && !rc; i++)
		rc = cli_ledger_check(&led, output_file_name(p, i, fname), err);
	for (int i = 0; i < n_out && !rc; i++)
		rc = cli_ledger_note(&led, output_file_name(p, i, fname), gc_session_output(s, i),
				     err);
	int written = 0;
	while (!rc && written < n_out) {
		rc = cli_write_value(o->output_dir, output_file_name(p, written, fname),
				     gc_session_output(s, written), err);
		written++;
	}
	if (!rc)
		rc = cli_ledger_save(&led, err);
	/* all outputs or none: take back the ones written */
	for (int j = 0; rc && j < written; j++)
		cli_remove_output(o->output_dir, output_file_name(p, j, fname));
	cli_ledger_free(&led);
	return rc;
}

static int run_timed(const cli_opts *o, gc_session *s, gc_error *err)
{
	double *times = calloc((size_t)o->repeat, sizeof *times);
	if (!times)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	for (int r = 0; r < o->repeat; r++) {
		double t0 = now_ms();
		if (gc_session_run(s, err)) {
			free(times);
			return err->code;
		}
		times[r] = now_ms() - t0;
	}
	if (o->repeat > 1) {
		qsort(times, (size_t)o->repeat, sizeof *times, cmp_double);
		fprintf(stderr, "graphcc: %d runs: median %.3f ms, min %.3f ms, max %.3f ms\n",
			o->repeat, times[o->repeat / 2], times[0], times[o->repeat - 1]);
	}
	free(times);
	return 0;
}

int cmd_run(int argc, char **argv)
{
	cli_opts o;
	int rc = cli_parse("run", argc, argv,
			   OPT_INPUT | OPT_OUTPUT_DIR | OPT_THREADS | OPT_REPEAT | OPT_OPS | OPT_SHAPE |
				   OPT_NO_FOLD | OPT_ALLOW_CHANGED | OPT_DEBUG | OPT_LIBS,
			   &o);
	if (rc)
		return rc;
	gc_error err = { 0 };
	gc_registry *reg = NULL;
	gc_graph *g = NULL;
	gc_program *p = NULL;
	gc_session *s = NULL;
	gc_tensor files[MAX_ARGS];
	int bound[MAX_ARGS]; /* model input index of each --input */
	memset(files, 0, sizeof files);
	int n_files = 0;
	bool gcb = cli_is_program(o.model);

	if (gcb) {
		/* A compiled program runs through the runtime alone. */
		if ((rc = cli_program_options("run", &o)))
			return rc;
		gc_load_options lo = cli_load_options(&o);
		lo.log = cli_log;
		model_inputs m = { 0 };
		if (gc_program_load(o.model, &lo, &p, &err))
			goto fail;
		m.p = p;
		if (read_inputs(&o, &m, files, bound, &n_files, &err))
			goto fail;
	} else {
		model_inputs m = { 0 };
		if (cli_registry(&o, &reg, &err) || gc_onnx_load(o.model, &g, &err))
			goto fail;
		m.g = g;
		if (read_inputs(&o, &m, files, bound, &n_files, &err) ||
		    compile_onnx(&o, g, reg, files, bound, &p, &err))
			goto fail;
	}
	gc_session_options sopt = { .threads = o.threads, .log = cli_log, .use_seed = o.has_seed,
				     .seed = o.seed };
	if (gc_session_new(p, &sopt, &s, &err))
		goto fail;
	for (int i = 0; i < o.n_inputs; i++) {
		int pi = gcb ? bound[i] : gc_program_find_input(p, gc_graph_input_name(g, bound[i]));
		if (pi < 0)
			continue; /* an input nothing reads */
		if (gc_session_set_input(s, pi, &files[i], &err)) {
			gc_error_prefix(&err, "%s", o.inputs[i].path);
			goto fail;
		}
	}
	bool debug = o.trace || o.dump_dir || o.check_nan || o.guard || o.profile ||
		     o.break_before || o.timeout > 0;
	if ((debug ? cli_run_debug(&o, s, &err) : run_timed(&o, s, &err)) ||
	    (o.compare_flavours && cli_compare_flavours(&o, g, reg, p, s, &err)) ||
	    write_outputs(&o, p, s, &err))
		goto fail;
	rc = EXIT_OK;
	goto out;
fail:
	cli_error("%s", err.msg);
	rc = cli_exit_for(err.code);
out:
	for (int i = 0; i < n_files; i++)
		gc_tensor_release(&files[i]);
	gc_session_free(s);
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(reg);
	return rc;
}
