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

#include <string.h>
#include <unistd.h>

#include "cli.h"

/* --timeout: the library reports and cancels; a kernel that spins never
 * returns, so the command ends here (only tools/ may end the process):
 * nothing after a runaway kernel is trusted, and no output is written. */
static void timeout_exit(void *user, const char *report)
{
	(void)user;
	static const char tail[] = "; a running kernel cannot be stopped safely, so graphcc "
				   "ends here (exit 3); no output was written\n";
	const char *parts[] = { "graphcc: ", report, tail };
	for (int i = 0; i < 3; i++)
		for (size_t at = 0, len = strlen(parts[i]); at < len;) {
			ssize_t n = write(STDERR_FILENO, parts[i] + at, len - at);
			if (n <= 0)
				break;
			at += (size_t)n;
		}
	_exit(3);
}

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
	    .on_timeout = timeout_exit,
	};
	return d;
}
