/*
 * graphcc run with debugging options: --trace, --dump-dir DIR, --check-nan,
 * --guard, --profile OUT.json, --break-before NODE, --timeout SECONDS.
 *
 * They run through gc_session_run_debug, --repeat times (isolate.c:
 * cli_debug_session). --trace lines go to stderr, like every other
 * diagnostic, so stdout stays for what a command is asked to print and the
 * outputs (written by cmd-run.c only after a successful run) are never
 * mixed with them: `graphcc run ... --trace 2> trace.txt`.
 */
#include <graphcc/debug.h>

#include "cli.h"

gc_debug_options cli_debug_options(const cli_opts *o)
{
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
	return d;
}
