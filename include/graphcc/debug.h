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
 *            Before each node, an input whose bytes changed since it was
 *            dumped (another node wrote into it) is dumped again as that
 *            node saw it: <name>.seen-by-<node>.npy, a tensors.tsv line
 *            saying so in its note column, and a note on stderr.
 *            File names are the ones --output-dir gives (gc_file_safe_name).
 *            With dump_weights, the program's constants (weights, after
 *            folding) are dumped first, produced by "(constant)".
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
 *            A kernel with scratch gets it filled with 0xFF bytes (NaN as
 *            float32/64) and is called a second time on 0x5A bytes: outputs
 *            that differ stop the run (GC_ECRASH) saying it reads scratch it
 *            did not write. --guard also turns on check_tensors.
 *  check_tensors  Every tensor is checksummed when produced (graph inputs
 *            when the run starts) and, after each node, every tensor still
 *            to be read is checked: one that changed stops the run with
 *            GC_ECRASH naming the node that just ran (operation, flavour,
 *            library, symbol), the tensor, its producer and its next
 *            readers -- an overrun into a neighbouring tensor is blamed on
 *            the node that wrote it, not on the next one to read it. The
 *            memory of the node's own outputs is not checked (in place).
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
	size_t size;		  /* sizeof(gc_debug_options), or 0 (see gc_load_options) */
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
	int check_tensors;	  /* a node that changes a tensor it does not produce */
	int dump_weights;	  /* with dump_dir: the constants (weights) too */
	/* Appended. Non-NULL: called just before (after == 0) and just after
	 * (after == 1, once the guard's checks passed) each node's kernel with
	 * the node's index in the program and its tensors (the session's; NULL
	 * for an absent one): what it read as it read it, what it wrote. For
	 * tools that keep them (graphcc run --repro, --isolate, --repeat with
	 * debugging options). Non-zero stops the run with that code. */
	int (*observe)(void *user, int32_t node, int after, gc_tensor *const *in, int32_t n_in,
		       gc_tensor *const *out, int32_t n_out);
	void *observe_user;
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
