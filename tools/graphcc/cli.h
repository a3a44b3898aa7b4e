/* Shared pieces of the graphcc command's subcommands. */
#ifndef GC_CLI_H
#define GC_CLI_H

#include <graphcc/graphcc.h>

#include <stdbool.h>

/* Exit statuses (DESIGN.md, "The command line"). */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_CRASH = 3 };

#define MAX_ARGS 256

typedef struct cli_input {
	const char *name; /* NULL: bind by position */
	const char *path;
	char name_buf[256];
} cli_input;

typedef struct cli_opts {
	const char *model;
	cli_input inputs[MAX_ARGS];
	int n_inputs;
	gc_shape_override shapes[MAX_ARGS];
	int n_shapes;
	const char *output_dir;
	int threads;
	int repeat;
	bool no_fold;
	bool quiet;
} cli_opts;

/* Prints "graphcc: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Usage error: prints the message and a hint; returns EXIT_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Maps an error code to an exit status. */
int cli_exit_for(int code);

/* Parses "NAME=1x3x224x224". */
int cli_parse_shape(const char *arg, gc_shape_override *o);
/* Reads a .npy or .pb tensor file. */
int cli_read_tensor(const char *path, gc_tensor *t, gc_error *err);

int cmd_run(int argc, char **argv);
int cmd_info(int argc, char **argv);

#endif
