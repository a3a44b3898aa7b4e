/*
 * graphcc run with debugging options: --trace, --dump-dir DIR, --check-nan,
 * --guard, --profile OUT.json, --break-before NODE, --timeout SECONDS.
 *
 * The model runs once (--repeat does not apply), through
 * gc_session_run_debug. --trace lines go to stderr, like every other
 * diagnostic, so stdout stays for what a command is asked to print and the
 * outputs (written by cmd-run.c only after a successful run) are never
 * mixed with them: `graphcc run ... --trace 2> trace.txt`.
 */
#include <graphcc/debug.h>

#include "cli.h"


int cli_run_debug(const cli_opts *o, gc_session *s, gc_error *err)
{
	if (o->repeat > 1)
		fprintf(stderr,
			"graphcc: debugging options run the model once; --repeat %d "
			"ignored\n",
			o->repeat);
	gc_debug_options d = {
	    .trace = o->trace ? stderr : NULL,
	    .dump_dir = o->dump_dir,
	    .check_nan = o->check_nan,
	    .guard = o->guard,
	    .check_tensors = o->check_tensors,
	    .dump_weights = o->dump_weights,
	    .profile_path = o->profile,
	    .break_before = o->break_before,
	    .timeout_seconds = o->timeout,
	};
	return gc_session_run_debug(s, &d, err);
}
