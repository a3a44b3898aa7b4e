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

/*
 * What each instrument does (all off when zero/NULL):
 *
 *  trace     One line per executed node, flushed as written: index, node
 *            name, op ("Conv", or "domain::Type" for custom ops), flavour
 *            and library of custom nodes, the kernel's time in
 *            microseconds, inputs and outputs as "name dtype shape", and
 *            for each output min, max and mean of its finite values plus
 *            the NaN and Inf counts (integers: min, max, mean). The graphcc
 *            command sends it to stderr.
 *  dump_dir  The folder (created with its parents) receives every graph
 *            input and every node output as <file-safe name>.npy (the
 *            name's bytes outside [A-Za-z0-9._-] become '_', a leading '/'
 *            is dropped, clashes get _2, _3, ...) and tensors.tsv: tensor,
 *            file, dtype, shape, producing node, one line per tensor as it
 *            is written. Constants are not dumped; a type .npy lacks
 *            (bfloat16, string) is listed with file '-' and a note.
 *  check_nan The first node whose output holds a NaN or Inf while none of
 *            its inputs (graph inputs, constants, earlier outputs) holds
 *            one stops the run with GC_ECRASH naming the node, operation,
 *            flavour, library, symbol, the output, and the first bad flat
 *            index (and multi-index) and value. The node's outputs are
 *            dumped and traced first. A graph input holding NaN is noted on
 *            stderr and blamed on nobody.
 *  guard     Custom nodes only: the kernel writes into shadow outputs
 *            between 4 KiB canary zones, its inputs are copied before and
 *            compared after; a write past an output's end, before its
 *            start or into an input stops the run with GC_ECRASH naming the
 *            node, operation, flavour, library, symbol, tensor and byte
 *            offsets. The shadows are copied to the real outputs only after
 *            a clean check. Writes farther than the zones are not seen.
 *  profile_path  A Chrome trace-event JSON file (Perfetto, chrome://tracing):
 *            one "X" event per node that ran (name, cat = op, ts/dur in
 *            microseconds since the run began, args with inputs, outputs
 *            and, for custom nodes, operation, flavour, library, symbol),
 *            written also when the run fails; the per-op-type table (count,
 *            total ms, share, by total) goes to stderr.
 *  break_before  Before that node's kernel: if a debugger is attached
 *            (TracerPid in /proc/self/status), a message naming the kernel
 *            and raise(SIGTRAP), from gc_debug_break_before(n, in, out);
 *            otherwise the message "no debugger attached; run under gdb:
 *            gdb --args <this command>" and the run goes on. A name no node
 *            of the program has is GC_EINVAL (nodes removed by folding do
 *            not run).
 *  timeout_seconds  A watchdog thread: a node that runs longer is
 *            reported (node, operation, flavour, library, symbol, elapsed
 *            time) to on_timeout, from the watchdog's thread, or without
 *            one to the session's log (GC_LOG_ERROR), and the run is
 *            canceled: a kernel polling GcOpContext.should_stop (and the
 *            bodies of Loop, Scan, If) stops, no further node starts, and
 *            the run returns GC_ECANCELED naming the node and its time. The
 *            library never ends the process: a running kernel cannot be
 *            stopped safely, so one that never returns keeps the calling
 *            thread; a host that cannot wait ends the process in on_timeout
 *            (the graphcc command writes the report and exits 3). Off while
 *            a debugger is attached.
 *
 * The instruments run between kernels and allocate once per run; the plain
 * gc_session_run is untouched by them.
 */
typedef struct gc_debug_options {
	FILE *trace;		  /* non-NULL: one line per executed node */
	const char *dump_dir;	  /* non-NULL: every tensor as DIR/<name>.npy + a map file */
	int check_nan;		  /* stop at the first node that makes a NaN/Inf from none */
	int guard;		  /* guard zones and input checksums around custom kernels */
	const char *profile_path; /* non-NULL: Chrome trace-event JSON; summary on stderr */
	const char *break_before; /* node name: SIGTRAP (or a message) before its kernel */
	double timeout_seconds;	  /* > 0: a node running longer is reported, the run canceled */
	/* Appended fields (zero: as before). */
	/* The watchdog's report, from its thread; NULL: the session's log. */
	void (*on_timeout)(void *user, const char *report);
	void *timeout_user;
} gc_debug_options;

/*
 * Runs s once with the instruments of opt (NULL: none). Returns 0, or a
 * negative GC_E code with err set (GC_ECRASH for a misbehaving kernel: NaN
 * origin, guard violation), as gc_session_run does. One session, one
 * thread, as for gc_session_run.
 */
int gc_session_run_debug(gc_session *s, const gc_debug_options *opt, gc_error *err);

/*
 * Installs the crash handlers (an alternate signal stack for the calling
 * thread, and SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT handlers for the
 * process). Idempotent. A crash in a kernel run by gc_session_run or
 * gc_session_run_debug is reported on stderr (signal and address, node,
 * operation, flavour, library, symbol, input and output shapes, a gdb
 * command line) and the process ends with _exit(3): no output has been
 * written by then, and the process state is not trusted. A crash outside
 * any kernel is reported plainly and re-raised with the action that was
 * installed before (the default one, or an embedding host's handler such as
 * Python's faulthandler).
 * Only a host that calls it gets the handlers (the graphcc command does,
 * unless GRAPHCC_CRASH_CAPTURE=0 is in its environment).
 */
void gc_crash_capture_install(void);

#ifdef __cplusplus
}
#endif
#endif
