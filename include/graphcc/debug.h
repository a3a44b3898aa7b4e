/*
 * graphcc debugging instruments for the Interpreter: per-node trace, tensor
 * dumps, NaN origin, guard zones around custom kernels, profiles, a
 * breakpoint before a node, and a per-node time limit. Part of the runtime:
 * they work on programs compiled in memory and loaded from .gcb alike.
 *
 * Crash capture is separate and always on in the graphcc command:
 * gc_crash_capture_install() makes a custom kernel (or any kernel) that
 * raises SIGSEGV, SIGBUS, SIGFPE, SIGILL or calls abort() end the process
 * with a report naming the node, operation, flavour, library and symbol and
 * the input shapes, and exit status 3 -- before any output file is written.
 */
#ifndef GRAPHCC_DEBUG_H
#define GRAPHCC_DEBUG_H

#include <graphcc/runtime.h>

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_debug_options {
	FILE *trace;		  /* non-NULL: one line per executed node */
	const char *dump_dir;	  /* non-NULL: every tensor as DIR/<name>.npy + a map file */
	int check_nan;		  /* stop at the first node that makes a NaN/Inf from none */
	int guard;		  /* guard zones and input checksums around custom kernels */
	const char *profile_path; /* non-NULL: Chrome trace-event JSON; summary on stderr */
	const char *break_before; /* node name: SIGTRAP (or a message) before its kernel */
	double timeout_seconds;	  /* > 0: a node running longer is reported (exit 3) */
} gc_debug_options;

/*
 * Runs s once with the instruments of opt. Returns 0, a negative GC_E code
 * with err set (GC_ECRASH for a misbehaving kernel: NaN origin, guard
 * violation), as gc_session_run does.
 */
int gc_session_run_debug(gc_session *s, const gc_debug_options *opt, gc_error *err);

/* Installs the crash handlers (sigaltstack + SIGSEGV/SIGBUS/SIGFPE/SIGILL/
 * SIGABRT) for the whole process. Idempotent. */
void gc_crash_capture_install(void);

#ifdef __cplusplus
}
#endif
#endif
