/* Option parsing and tensor files for the subcommands. */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../runtime/fileio.h"
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

/* What a file's first bytes say it is (NULL: nothing graphcc recognises
 * by content). */
static const char *content_kind(const char *path)
{
	unsigned char b[8] = { 0 };
	int fd;
	uint64_t size;
	gc_error e = { 0 };
	/* never blocks on a FIFO; what is not a regular file is left for the
	 * reader to refuse with its message */
	if (gc_open_regular(path, &fd, &size, &e))
		return NULL;
	size_t n = size < sizeof b ? (size_t)size : sizeof b;
	if (gc_read_fd_at(fd, b, n, 0, path, &e))
		n = 0;
	close(fd);
	if (n == 8 && !memcmp(b, "GCBPROG\0", 8))
		return "a graphcc compiled program (.gcb)";
	if (n >= 6 && !memcmp(b, "\x93NUMPY", 6))
		return "a NumPy array (.npy)";
	if (n >= 4 && !memcmp(b, "\x7f" "ELF", 4))
		return "an ELF binary or shared library";
	if (n >= 2 && b[0] == 0x08 && b[1] < 0x80) /* field 1, ir_version */
		return "what looks like an ONNX model (a protobuf starting with ir_version)";
	return NULL;
}

/* A model whose content disagrees with its extension is refused, naming
 * both: a file is never run as something its name does not say. */
static int check_model_kind(const char *path)
{
	const char *kind = content_kind(path);
	bool gcb_name = ends_with(path, ".gcb"), onnx_name = ends_with(path, ".onnx");
	bool gcb_content = kind && kind[2] == 'g';
	bool onnx_content = kind && strstr(kind, "ONNX");
	if ((onnx_name && kind && !onnx_content) ||
	    (gcb_name && !gcb_content && (kind || access(path, R_OK) == 0))) {
		cli_error("%s: the name says %s, but the file holds %s: refused (rename it to "
			  "what it is)",
			  path, onnx_name ? "an ONNX model (.onnx)" : "a graphcc compiled program (.gcb)",
			  kind ? kind : "something else (not a .gcb: no GCBPROG magic)");
		return EXIT_FAIL;
	}
	return 0;
}

int cli_read_tensor(const char *path, gc_tensor *t, gc_error *err)
{
	if (ends_with(path, ".pb"))
		return gc_pb_read(path, t, NULL, err);
	return gc_npy_read(path, t, err);
}

/* ------------------------------------------------------------ the option table */

typedef struct cli_option cli_option;
/* Applies option a (its value val; NULL for a flag). 0 or EXIT_USAGE. */
typedef int (*cli_apply)(const cli_option *opt, const char *a, const char *val, cli_opts *o);

struct cli_option {
	const char *name, *alias; /* "--input", "-i" */
	unsigned group;		  /* the OPT_* bit a command allows it by */
	bool takes_value;
	cli_apply apply;
	size_t field; /* offsetof the cli_opts field set_flag / set_string set */
};

static int set_flag(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)a;
	(void)val;
	*(bool *)((char *)o + opt->field) = true;
	return 0;
}

static int set_string(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)a;
	*(const char **)((char *)o + opt->field) = val;
	return 0;
}

static int set_count(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	char *end;
	long v = strtol(val, &end, 10);
	if (*end || v < 1 || v > 1000000)
		return cli_usage("%s needs a positive number, not '%s'", a, val);
	*(int *)((char *)o + opt->field) = (int)v;
	return 0;
}

/* --seed N: an unsigned 64-bit number. */
static int set_seed(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)opt;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(val, &end, 0);
	if (!*val || *end || errno || val[0] == '-')
		return cli_usage("%s needs a number from 0 to 2^64-1, not '%s'", a, val);
	o->has_seed = true;
	o->seed = (uint64_t)v;
	return 0;
}

/* A positive number (--timeout seconds, --tolerance) into a double field. */
static int set_positive(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	char *end;
	double v = strtod(val, &end);
	if (*end || !(v > 0) || v > 1e6)
		return cli_usage("%s needs a positive number, not '%s'", a, val);
	*(double *)((char *)o + opt->field) = v;
	return 0;
}

static int add_input(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)opt;
	(void)a;
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
	return 0;
}

static int add_ops(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)opt;
	(void)a;
	if (o->n_ops == MAX_ARGS)
		return cli_usage("too many --ops options");
	o->ops[o->n_ops++] = val;
	return 0;
}

static int add_shape(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)opt;
	(void)a;
	if (o->n_shapes == MAX_ARGS ||
	    cli_parse_shape(val, &o->shapes[o->n_shapes], o->shape_names[o->n_shapes],
			    sizeof o->shape_names[0]))
		return cli_usage("--shape %s: expected NAME=DIMS, e.g. x=1x3x224x224", val);
	o->n_shapes++;
	return 0;
}

static int add_lib_dir(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)opt;
	(void)a;
	if (o->n_lib_dirs == MAX_ARGS)
		return cli_usage("too many --allow-libraries options");
	o->lib_dirs[o->n_lib_dirs++] = val;
	return 0;
}

static int add_lib_map(const cli_option *opt, const char *a, const char *val, cli_opts *o)
{
	(void)opt;
	(void)a;
	const char *eq = strchr(val, '=');
	size_t len = strlen(val);
	if (!eq || eq == val || !eq[1])
		return cli_usage("--map-library %s: expected FROM=TO (a library path or folder "
				 "as the program records it, and where it is now)", val);
	if (o->n_lib_map == MAX_ARGS || len + 2 > sizeof o->lib_map_text - o->lib_map_used)
		return cli_usage("too many --map-library options");
	char *t = o->lib_map_text + o->lib_map_used;
	memcpy(t, val, len + 1);
	t[eq - val] = 0;
	o->lib_map[o->n_lib_map++] = (gc_path_map){ .from = t, .to = t + (eq - val) + 1 };
	o->lib_map_used += len + 1;
	return 0;
}

#define FIELD(f) offsetof(cli_opts, f)

/* Every option of every command; a command allows the groups it names. */
static const cli_option options[] = {
	{ "--input", "-i", OPT_INPUT, true, add_input, 0 },
	{ "--output-dir", NULL, OPT_OUTPUT_DIR, true, set_string, FIELD(output_dir) },
	{ "--threads", NULL, OPT_THREADS, true, set_count, FIELD(threads) },
	{ "--repeat", NULL, OPT_REPEAT, true, set_count, FIELD(repeat) },
	{ "--seed", NULL, OPT_THREADS, true, set_seed, 0 },
	{ "--ops", NULL, OPT_OPS, true, add_ops, 0 },
	{ "--backend", NULL, OPT_OPS, true, set_string, FIELD(backend) },
	{ "--shape", NULL, OPT_SHAPE, true, add_shape, 0 },
	{ "--dynamic", NULL, OPT_SHAPE, false, set_flag, FIELD(dynamic) },
	{ "--no-fold", NULL, OPT_NO_FOLD, false, set_flag, FIELD(no_fold) },
	{ "--no-optimize", NULL, OPT_NO_FOLD, false, set_flag, FIELD(no_optimize) },
	{ "--output", "-o", OPT_OUT, true, set_string, FIELD(out) },
	{ "--allow-changed-kernels", NULL, OPT_ALLOW_CHANGED, false, set_flag,
	  FIELD(allow_changed) },
	{ "--trace", NULL, OPT_DEBUG, false, set_flag, FIELD(trace) },
	{ "--check-nan", NULL, OPT_DEBUG, false, set_flag, FIELD(check_nan) },
	{ "--guard", NULL, OPT_DEBUG, false, set_flag, FIELD(guard) },
	{ "--compare-flavours", NULL, OPT_DEBUG, false, set_flag, FIELD(compare_flavours) },
	{ "--dump-dir", NULL, OPT_DEBUG, true, set_string, FIELD(dump_dir) },
	{ "--profile", NULL, OPT_DEBUG, true, set_string, FIELD(profile) },
	{ "--break-before", NULL, OPT_DEBUG, true, set_string, FIELD(break_before) },
	{ "--timeout", NULL, OPT_DEBUG, true, set_positive, FIELD(timeout) },
	{ "--tolerance", NULL, OPT_DEBUG, true, set_positive, FIELD(tolerance) },
	{ "--allow-libraries", NULL, OPT_LIBS, true, add_lib_dir, 0 },
	{ "--no-libraries", NULL, OPT_LIBS, false, set_flag, FIELD(no_libraries) },
	{ "--map-library", NULL, OPT_LIBS, true, add_lib_map, 0 },
	{ "--dry-run", NULL, OPT_DRY_RUN, false, set_flag, FIELD(dry_run) },
};

static const cli_option *find_option(const char *a)
{
	for (size_t i = 0; i < sizeof options / sizeof options[0]; i++)
		if (!strcmp(a, options[i].name) || (options[i].alias && !strcmp(a, options[i].alias)))
			return &options[i];
	return NULL;
}

int cli_parse(const char *cmd, int argc, char **argv, unsigned allowed, cli_opts *o)
{
	memset(o, 0, sizeof *o);
	o->repeat = 1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const cli_option *opt = find_option(a);
		if (!opt) {
			if (a[0] == '-' && a[1])
				return cli_usage("%s: unknown option '%s'", cmd, a);
			if (o->model)
				return cli_usage("%s: unexpected argument '%s' (one file at a time)", cmd, a);
			o->model = a;
			continue;
		}
		if (!(allowed & opt->group))
			return cli_usage("%s: option '%s' does not apply to this command", cmd, a);
		const char *val = NULL;
		if (opt->takes_value) {
			if (i + 1 >= argc)
				return cli_usage("%s: option '%s' needs a value", cmd, a);
			val = argv[++i];
		}
		int rc = opt->apply(opt, a, val, o);
		if (rc)
			return rc;
	}
	if (!o->model)
		return cli_usage("%s: no %s given", cmd,
				 !strcmp(cmd, "check") ? "manifest" : "model");
	/* GRAPHCC_LIBRARY_PATH adds its folders to --allow-libraries' */
	const char *env = getenv("GRAPHCC_LIBRARY_PATH");
	if ((allowed & OPT_LIBS) && env && *env) {
		if (strlen(env) >= sizeof o->lib_path_env)
			return cli_usage("GRAPHCC_LIBRARY_PATH is too long");
		strcpy(o->lib_path_env, env);
		for (char *save = NULL, *t = strtok_r(o->lib_path_env, ":", &save); t;
		     t = strtok_r(NULL, ":", &save)) {
			if (o->n_lib_dirs == MAX_ARGS)
				return cli_usage("GRAPHCC_LIBRARY_PATH: too many folders");
			o->lib_dirs[o->n_lib_dirs++] = t;
		}
	}
	if (!strcmp(cmd, "run") || !strcmp(cmd, "info") || !strcmp(cmd, "dot") ||
	    !strcmp(cmd, "compile"))
		return check_model_kind(o->model);
	return 0;
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
	if (o->no_libraries) {
		gc_registry_free(r);
		return gc_error_set(err, GC_EINVAL,
				    "%s: --no-libraries refuses every library, so no op package can "
				    "load",
				    o->n_ops ? o->ops[0] : "GRAPHCC_OPS_PATH");
	}
	gc_registry_options ro = { .library_dirs = o->lib_dirs, .n_library_dirs = o->n_lib_dirs };
	if (gc_registry_set_options(r, &ro)) {
		gc_registry_free(r);
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	}
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

gc_load_options cli_load_options(const cli_opts *o)
{
	return (gc_load_options){ .allow_changed_kernels = o->allow_changed,
				  .library_dirs = o->lib_dirs,
				  .n_library_dirs = o->n_lib_dirs,
				  .no_libraries = o->no_libraries,
				  .library_map = o->lib_map,
				  .n_library_map = o->n_lib_map };
}

gc_compile_options cli_compile_options(const cli_opts *o, const gc_registry *reg)
{
	return (gc_compile_options){ .shapes = o->shapes, .n_shapes = o->n_shapes,
				     .no_fold = o->no_fold, .no_optimize = o->no_optimize,
				     .registry = reg, .backend = o->backend,
				     .dynamic_dims = o->dynamic };
}

bool cli_is_program(const char *path)
{
	return gc_is_program_file(path) || ends_with(path, ".gcb");
}

int cli_program_options(const char *cmd, const cli_opts *o)
{
	const char *opt = o->n_ops	     ? "--ops"
			  : o->backend	     ? "--backend"
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
