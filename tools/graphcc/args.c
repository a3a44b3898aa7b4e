/* Option parsing and tensor files for the subcommands. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_shape(const char *arg, gc_shape_override *o, char *name, size_t len)
{
	const char *eq = strrchr(arg, '=');
	if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= len)
		return -1;
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = 0;
	o->name = name;
	o->rank = 0;
	const char *p = eq + 1;
	if (!strcmp(p, "scalar"))
		return 0;
	for (;;) {
		if (*p < '0' || *p > '9' || o->rank == GC_MAX_RANK)
			return -1;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno || v > (unsigned long long)INT64_MAX)
			return -1;
		o->dims[o->rank++] = (int64_t)v;
		if (!*end)
			return 0;
		if (*end != 'x' && *end != 'X' && *end != ',')
			return -1;
		p = end + 1;
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

int cli_read_tensor(const char *path, gc_tensor *t, gc_error *err)
{
	if (ends_with(path, ".pb"))
		return gc_pb_read(path, t, NULL, err);
	return gc_npy_read(path, t, err);
}

int cli_parse(const char *cmd, int argc, char **argv, unsigned allowed, cli_opts *o)
{
	memset(o, 0, sizeof *o);
	o->repeat = 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		unsigned which = !strcmp(a, "--input") || !strcmp(a, "-i")	     ? OPT_INPUT
				 : !strcmp(a, "--output-dir")			     ? OPT_OUTPUT_DIR
				 : !strcmp(a, "--threads")			     ? OPT_THREADS
				 : !strcmp(a, "--repeat")			     ? OPT_REPEAT
				 : !strcmp(a, "--ops")				     ? OPT_OPS
				 : !strcmp(a, "--shape")			     ? OPT_SHAPE
				 : !strcmp(a, "--no-fold") || !strcmp(a, "--no-optimize") ? OPT_NO_FOLD
				 : !strcmp(a, "-o") || !strcmp(a, "--output")	     ? OPT_OUT
				 : !strcmp(a, "--allow-changed-kernels")	     ? OPT_ALLOW_CHANGED
				 : !strcmp(a, "--trace") || !strcmp(a, "--dump-dir") ||
						 !strcmp(a, "--check-nan") || !strcmp(a, "--guard") ||
						 !strcmp(a, "--profile") ||
						 !strcmp(a, "--break-before") ||
						 !strcmp(a, "--timeout") ||
						 !strcmp(a, "--compare-flavours")
					 ? OPT_DEBUG
					 : 0;
		if (!which) {
			if (a[0] == '-' && a[1])
				return cli_usage("%s: unknown option '%s'", cmd, a);
			if (o->model)
				return cli_usage("%s: unexpected argument '%s' (one file at a time)", cmd, a);
			o->model = a;
			continue;
		}
		if (!(allowed & which))
			return cli_usage("%s: option '%s' does not apply to this command", cmd, a);
		if (which == OPT_NO_FOLD || which == OPT_ALLOW_CHANGED) {
			*(which == OPT_ALLOW_CHANGED	   ? &o->allow_changed
			  : !strcmp(a, "--no-optimize") ? &o->no_optimize
							 : &o->no_fold) = true;
			continue;
		}
		if (which == OPT_DEBUG && (!strcmp(a, "--trace") || !strcmp(a, "--check-nan") ||
					   !strcmp(a, "--guard") || !strcmp(a, "--compare-flavours"))) {
			bool *flag = !strcmp(a, "--trace")	   ? &o->trace
				     : !strcmp(a, "--check-nan") ? &o->check_nan
				     : !strcmp(a, "--guard")	   ? &o->guard
								   : &o->compare_flavours;
			*flag = true;
			continue;
		}
		if (!val)
			return cli_usage("%s: option '%s' needs a value", cmd, a);
		i++;
		switch (which) {
		case OPT_INPUT: {
			if (o->n_inputs == MAX_ARGS)
				return cli_usage("too many --input options");
			cli_input *in = &o->inputs[o->n_inputs++];
			const char *eq = strchr(val, '=');
			if (eq) {
				if (eq == val || !eq[1] || (size_t)(eq - val) >= sizeof in->name_buf)
					return cli_usage("--input %s: expected NAME=FILE", val);
				memcpy(in->name_buf, val, (size_t)(eq - val));
				in->name_buf[eq - val] = 0;
				in->name = in->name_buf;
				in->path = eq + 1;
			} else {
				in->path = val;
			}
			break;
		}
		case OPT_OUTPUT_DIR:
			o->output_dir = val;
			break;
		case OPT_THREADS:
		case OPT_REPEAT: {
			char *end;
			long v = strtol(val, &end, 10);
			if (*end || v < 1 || v > 1000000)
				return cli_usage("%s needs a positive number, not '%s'", a, val);
			if (which == OPT_THREADS)
				o->threads = (int)v;
			else
				o->repeat = (int)v;
			break;
		}
		case OPT_OUT:
			o->out = val;
			break;
		case OPT_DEBUG:
			if (!strcmp(a, "--dump-dir")) {
				o->dump_dir = val;
			} else if (!strcmp(a, "--profile")) {
				o->profile = val;
			} else if (!strcmp(a, "--break-before")) {
				o->break_before = val;
			} else { /* --timeout */
				char *end;
				double v = strtod(val, &end);
				if (*end || !(v > 0) || v > 1e6)
					return cli_usage("--timeout needs a positive number of seconds, "
							 "not '%s'",
							 val);
				o->timeout = v;
			}
			break;
		case OPT_OPS:
			if (o->n_ops == MAX_ARGS)
				return cli_usage("too many --ops options");
			o->ops[o->n_ops++] = val;
			break;
		case OPT_SHAPE:
			if (o->n_shapes == MAX_ARGS ||
			    cli_parse_shape(val, &o->shapes[o->n_shapes], o->shape_names[o->n_shapes],
					    sizeof o->shape_names[0]))
				return cli_usage("--shape %s: expected NAME=DIMS, e.g. x=1x3x224x224",
						 val);
			o->n_shapes++;
			break;
		}
	}
	if (!o->model)
		return cli_usage("%s: no %s given", cmd,
				 !strcmp(cmd, "check") ? "manifest" : "model");
	return 0;
}

void cli_note(void *user, const char *msg)
{
	(void)user;
	fprintf(stderr, "graphcc: note: %s\n", msg);
}

void cli_log(void *user, gc_log_level level, const char *msg)
{
	static const char *const names[GC_LOG_LEVEL_COUNT] = { "error", "warning", "note",
							       "debug" };
	(void)user;
	if (level <= GC_LOG_INFO)
		fprintf(stderr, "graphcc: %s: %s\n",
			names[(unsigned)level < GC_LOG_LEVEL_COUNT ? level : GC_LOG_DEBUG], msg);
}

int cli_registry(const cli_opts *o, gc_registry **out, gc_error *err)
{
	*out = NULL;
	const char *env = getenv("GRAPHCC_OPS_PATH");
	if (!o->n_ops && !(env && *env))
		return 0;
	gc_registry *r = gc_registry_new();
	if (!r)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	gc_registry_set_note_handler(r, cli_note, NULL);
	for (int i = 0; i < o->n_ops; i++)
		if (gc_registry_load(r, o->ops[i], err)) {
			gc_registry_free(r);
			return err->code;
		}
	if (env && *env && gc_registry_load_path(r, env, err)) {
		gc_error_prefix(err, "GRAPHCC_OPS_PATH");
		gc_registry_free(r);
		return err->code;
	}
	*out = r;
	return 0;
}

gc_compile_options cli_compile_options(const cli_opts *o, const gc_registry *reg)
{
	return (gc_compile_options){ .shapes = o->shapes, .n_shapes = o->n_shapes,
				     .no_fold = o->no_fold, .no_optimize = o->no_optimize,
				     .registry = reg };
}

bool cli_is_program(const char *path)
{
	return gc_is_program_file(path) || ends_with(path, ".gcb");
}

int cli_program_options(const char *cmd, const cli_opts *o)
{
	const char *opt = o->n_ops	     ? "--ops"
			  : o->n_shapes	     ? "--shape"
			  : o->no_fold	     ? "--no-fold"
			  : o->no_optimize ? "--no-optimize"
					     : NULL;
	if (!opt)
		return 0;
	return cli_usage("%s: %s applies when compiling; %s is already compiled (its kernels "
			 "and shapes are recorded in it)",
			 cmd, opt, o->model);
}
