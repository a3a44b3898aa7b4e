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
	    .profile_path = o->profile,
	    .break_before = o->break_before,
	    .timeout_seconds = o->timeout,
	    .on_timeout = timeout_exit,
	};
	return gc_session_run_debug(s, &d, err);
}
