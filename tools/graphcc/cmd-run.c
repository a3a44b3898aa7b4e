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

int cmd_run(int argc, char **argv)
{
	cli_opts o;
	int rc = cli_parse("run", argc, argv,
			   OPT_INPUT | OPT_OUTPUT_DIR | OPT_THREADS | OPT_REPEAT | OPT_OPS | OPT_SHAPE |
				   OPT_NO_FOLD,
			   &o);
	if (rc)
		return rc;
	gc_error err = { 0 };
	gc_registry *reg = NULL;
	gc_graph *g = NULL;
	gc_program *p = NULL;
	gc_session *s = NULL;
	gc_tensor files[MAX_ARGS];
	int bound[MAX_ARGS]; /* graph input index of each --input */
	memset(files, 0, sizeof files);
	int n_files = 0;

	if (cli_registry(&o, &reg, &err) || gc_onnx_load(o.model, &g, &err))
		goto fail;
	int n_in = gc_graph_num_inputs(g);
	if (o.n_inputs > n_in) {
		err.code = GC_EINVAL;
		snprintf(err.msg, sizeof err.msg, "%s: %d inputs given, but the model has %d",
			 o.model, o.n_inputs, n_in);
		goto fail;
	}
	for (int i = 0; i < o.n_inputs; i++) {
		const cli_input *ci = &o.inputs[i];
		int idx = i;
		if (ci->name) {
			idx = -1;
			for (int k = 0; k < n_in; k++)
				if (!strcmp(gc_graph_input_name(g, k), ci->name))
					idx = k;
			if (idx < 0) {
				char names[512] = "";
				size_t at = 0;
				for (int k = 0; k < n_in && at < sizeof names; k++)
					at += (size_t)snprintf(names + at, sizeof names - at, "%s'%s'",
							       k ? ", " : "", gc_graph_input_name(g, k));
				err.code = GC_EINVAL;
				snprintf(err.msg, sizeof err.msg,
					 "--input %s=%s: the model %s has no input named '%s' (its "
					 "inputs: %s)",
					 ci->name, ci->path, o.model, ci->name, names);
				goto fail;
			}
		}
		for (int j = 0; j < i; j++)
			if (bound[j] == idx) {
				err.code = GC_EINVAL;
				snprintf(err.msg, sizeof err.msg, "input '%s' is given twice (%s and %s)",
					 gc_graph_input_name(g, idx), o.inputs[j].path, ci->path);
				goto fail;
			}
		bound[i] = idx;
		if (gc_graph_input_has_default(g, idx) &&
		    gc_graph_drop_default(g, gc_graph_input_name(g, idx), &err))
			goto fail;
		if (cli_read_tensor(ci->path, &files[i], &err))
			goto fail;
		n_files = i + 1;
		/* A dynamic dim takes its size from the file. */
		gc_tensor info;
		const char *iname = gc_graph_input_name(g, idx);
		gc_graph_tensor_info(g, iname, &info);
		bool dynamic = false, explicit = false;
		for (int d = 0; d < info.rank; d++)
			dynamic |= info.dims[d] < 0;
		for (int k = 0; k < o.n_shapes; k++)
			explicit |= !strcmp(o.shapes[k].name, iname);
		if (dynamic && !explicit && info.rank == files[i].rank && o.n_shapes < MAX_ARGS) {
			gc_shape_override *so = &o.shapes[o.n_shapes++];
			so->name = iname;
			so->rank = files[i].rank;
			memcpy(so->dims, files[i].dims, sizeof so->dims);
		}
	}
	for (int k = 0; k < n_in; k++) {
		bool given = gc_graph_input_has_default(g, k);
		for (int i = 0; i < o.n_inputs; i++)
			given |= bound[i] == k;
		if (!given) {
			gc_tensor info;
			char shp[160];
			gc_graph_tensor_info(g, gc_graph_input_name(g, k), &info);
			err.code = GC_EINVAL;
			snprintf(err.msg, sizeof err.msg,
				 "%s: no file given for input '%s' (%s, shape %s): add --input %s=FILE",
				 o.model, gc_graph_input_name(g, k), gc_dtype_name(info.dtype),
				 gc_shape_str(info.dims, info.rank, shp, sizeof shp),
				 gc_graph_input_name(g, k));
			goto fail;
		}
	}
	gc_compile_options copt = { .shapes = o.shapes, .n_shapes = o.n_shapes,
				    .no_fold = o.no_fold, .registry = reg };
	if (gc_compile(g, &copt, &p, &err))
		goto fail;
	gc_session_options sopt = { .threads = o.threads };
	if (gc_session_new(p, &sopt, &s, &err))
		goto fail;
	for (int i = 0; i < o.n_inputs; i++) {
		int pi = gc_program_find_input(p, gc_graph_input_name(g, bound[i]));
		if (pi < 0)
			continue;
		if (gc_session_set_input(s, pi, &files[i], &err)) {
			gc_error_prefix(&err, "%s", o.inputs[i].path);
			goto fail;
		}
	}
	double *times = calloc((size_t)o.repeat, sizeof *times);
	if (!times) {
		err.code = GC_ENOMEM;
		snprintf(err.msg, sizeof err.msg, "out of memory");
		goto fail;
	}
	for (int r = 0; r < o.repeat; r++) {
		double t0 = now_ms();
		if (gc_session_run(s, &err)) {
			free(times);
			goto fail;
		}
		times[r] = now_ms() - t0;
	}
	if (o.repeat > 1) {
		qsort(times, (size_t)o.repeat, sizeof *times, cmp_double);
		fprintf(stderr, "graphcc: %d runs: median %.3f ms, min %.3f ms, max %.3f ms\n",
			o.repeat, times[o.repeat / 2], times[0], times[o.repeat - 1]);
	}
	free(times);
	if (o.output_dir) {
		if (mkdir_p(o.output_dir, &err))
			goto fail;
		for (int i = 0; i < gc_program_num_outputs(p); i++) {
			const char *name;
			gc_program_output(p, i, &name);
			char fname[256], path[4096];
			safe_name(name, fname, sizeof fname);
			snprintf(path, sizeof path, "%s/%s.npy", o.output_dir, fname);
			if (gc_npy_write(path, gc_session_output(s, i), &err))
				goto fail;
		}
	}
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
