/* Shared pieces of the graphcc command's subcommands. */
#ifndef GC_CLI_H
#define GC_CLI_H

#include <graphcc/graphcc.h>

#include <stdbool.h>
#include <stdio.h>

/* Exit statuses (DESIGN.md, "The command line"). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_CRASH = 3 };

#define MAX_ARGS 256

typedef struct cli_input {
	const char *name; /* NULL: bind by position */
	const char *path;
	char name_buf[256];
} cli_input;

/* Options a command accepts (cli_parse's `allowed`). */
enum {
	OPT_INPUT = 1 << 0,
	OPT_OUTPUT_DIR = 1 << 1,
	OPT_THREADS = 1 << 2,
	OPT_REPEAT = 1 << 3,
	OPT_OPS = 1 << 4,
	OPT_SHAPE = 1 << 5,
	OPT_NO_FOLD = 1 << 6,
	OPT_OUT = 1 << 7,	    /* -o FILE */
	OPT_ALLOW_CHANGED = 1 << 8, /* --allow-changed-kernels */
	OPT_DEBUG = 1 << 9,	    /* --trace --dump-dir --check-nan --guard --profile
				       --break-before --timeout --compare-flavours */
	OPT_LIBS = 1 << 10,	    /* --allow-libraries DIR, --no-libraries */
	OPT_DRY_RUN = 1 << 11,	    /* --dry-run */
};

typedef struct cli_opts {
	const char *model;
	const char *ops[MAX_ARGS];
	int n_ops;
	cli_input inputs[MAX_ARGS];
	int n_inputs;
	gc_shape_override shapes[MAX_ARGS];
	char shape_names[MAX_ARGS][256]; /* shapes[i].name points here */
	int n_shapes;
	const char *output_dir;
	int threads;
	int repeat;
	bool has_seed;	/* --seed N: random ops without a seed attribute */
	uint64_t seed;
	bool no_fold, no_optimize;
	bool dynamic; /* --dynamic: symbolic input dims stay dynamic */
	bool quiet;
	const char *out;	   /* -o */
	const char *backend;	   /* --backend (NULL: the default) */
	bool allow_changed;	   /* --allow-changed-kernels */
	bool trace, check_nan, guard, compare_flavours;
	const char *dump_dir, *profile, *break_before;
	double timeout;
	double tolerance; /* --tolerance (with --compare-flavours); 0: the default */
	/* --allow-libraries DIR... and GRAPHCC_LIBRARY_PATH's folders: when
	 * any, no library outside them is loaded. */
	const char *lib_dirs[MAX_ARGS];
	int n_lib_dirs;
	char lib_path_env[4096]; /* a copy of GRAPHCC_LIBRARY_PATH, split */
	/* --map-library FROM=TO (a .gcb's pinned libraries elsewhere):
	 * lib_map[i] points into lib_map_text */
	gc_path_map lib_map[MAX_ARGS];
	int n_lib_map;
	char lib_map_text[8192];
	size_t lib_map_used;
	bool no_libraries;	 /* --no-libraries */
	bool dry_run;		 /* check --dry-run */
} cli_opts;

/* Prints "graphcc: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error: prints the message and a hint; returns EXIT_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Maps an error code to an exit status. */
int cli_exit_for(int code);

/* Parses a command's arguments: one positional (the model or manifest) and
 * the options in `allowed`. Returns 0 or an exit status (usage error). */
int cli_parse(const char *cmd, int argc, char **argv, unsigned allowed, cli_opts *o);
/* A registry with every --ops manifest and GRAPHCC_OPS_PATH entry loaded
 * (NULL *out when there are none). */
int cli_registry(const cli_opts *o, gc_registry **out, gc_error *err);
/* The .gcb load options the command line gives (--allow-changed-kernels,
 * --allow-libraries, GRAPHCC_LIBRARY_PATH, --no-libraries). */
gc_load_options cli_load_options(const cli_opts *o);
/* The compile options the command line gives: --shape, --no-fold,
 * --no-optimize and the registry. */
gc_compile_options cli_compile_options(const cli_opts *o, const gc_registry *reg);
/* Prints a registry note on stderr. */
void cli_note(void *user, const char *msg);
/* The library's log (gc_load_options.log): errors, warnings and notes on
 * stderr as "graphcc: <level>: <msg>". */
void cli_log(void *user, gc_log_level level, const char *msg);
/* One line per custom node of p (its binding); returns how many. */
int cli_print_bindings(const gc_program *p, FILE *out);
/* Sequence and optional values as files (value-io.c): an input of such a
 * type from a SequenceProto/OptionalProto .pb; an output as NAME/ (a
 * sequence: 0.npy, 1.npy, ...), NAME.npy or NAME.none (an empty optional). */
int cli_read_value(const char *path, gc_dtype dtype, gc_tensor *t, gc_error *err);
int cli_write_value(const char *dir, const char *fname, const gc_tensor *t, gc_error *err);
/* Whether cli_write_value can write t (gc_npy_check of every tensor in it). */
int cli_check_value(const gc_tensor *t, const char *what, gc_error *err);
/*
 * The output folder's ledger, DIR/.graphcc-outputs: one line per file or
 * folder graphcc wrote there (NAME.npy, NAME.none, NAME/). graphcc creates,
 * replaces or removes a path in DIR only when it is new or listed there; an
 * output whose paths would touch anything else (a user's DIR/notes beside an
 * output 'notes') is refused naming it, before anything is written.
 */
typedef struct cli_ledger {
	char *dir;
	char **names;
	int n, cap;
} cli_ledger;
#define CLI_LEDGER_NAME ".graphcc-outputs"
int cli_ledger_load(cli_ledger *l, const char *dir, gc_error *err);
/* Refuses an output (file-safe name fname) whose paths hold something
 * graphcc did not write. */
int cli_ledger_check(const cli_ledger *l, const char *fname, gc_error *err);
/* Records what cli_write_value wrote for fname (its other forms go). */
int cli_ledger_note(cli_ledger *l, const char *fname, const gc_tensor *t, gc_error *err);
int cli_ledger_save(cli_ledger *l, gc_error *err);
void cli_ledger_free(cli_ledger *l);
/* Removes what cli_write_value wrote for fname (when a later output fails). */
void cli_remove_output(const char *dir, const char *fname);
/* Parses "NAME=1x3x224x224"; the name is copied into name (len bytes). */
int cli_parse_shape(const char *arg, gc_shape_override *o, char *name, size_t len);
/* Whether path is a compiled program (.gcb: by its magic, or by its name
 * when it is not readable as one, so the loader says what is wrong). */
bool cli_is_program(const char *path);
/* For a compiled program: refuses the options that only mean something
 * when compiling (--ops, --shape, --no-fold, --no-optimize), naming them.
 * Returns 0 or a usage exit status. */
int cli_program_options(const char *cmd, const cli_opts *o);
/* Reads a .npy or .pb tensor file. */
int cli_read_tensor(const char *path, gc_tensor *t, gc_error *err);

int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_dot(int argc, char **argv);
int cmd_test_package(int argc, char **argv);
int cmd_new_package(int argc, char **argv);
/* One run of s with the debugging instruments the options ask for
 * (tools/graphcc/debug-run.c). */
int cli_run_debug(const cli_opts *o, gc_session *s, gc_error *err);
/* --compare-flavours: every flavour of each custom node on the node's
 * inputs from a run of s (tools/graphcc/compare-flavours.c). */
int cli_compare_flavours(const cli_opts *o, const gc_graph *g, const gc_registry *reg,
			 const gc_program *p, gc_session *s, gc_error *err);

#endif
