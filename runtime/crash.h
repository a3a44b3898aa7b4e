/*
 * Crash capture: what a kernel that crashes leaves behind is a report, not a
 * bare "Segmentation fault".
 *
 * gc_crash_capture_install() (declared in <graphcc/debug.h>; the graphcc
 * command calls it first thing in main) gives the process an alternate
 * signal stack and handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT
 * (abort(), a failed assert in a kernel). The executor publishes, per
 * thread, the session it runs and the node whose kernel it is calling; when
 * one of those signals arrives the handler
 *
 *  - writes one report on stderr with write(2) only (no stdio, no malloc:
 *    every number is formatted by hand into a static buffer, every string
 *    read from the program is bounded):
 *        graphcc: kernel crashed: SIGSEGV (invalid memory access at address
 *        0x0, address not mapped) in node 'n' (test.debug::Buggy),
 *        operation 'Buggy', flavour 'nullWrite', library /x/lib.so, symbol
 *        buggy_null_write; inputs: t float32 1x3x8x8; outputs: u float32 ...
 *    plus a line saying that no output was written and how to debug it;
 *  - ends the process with _exit(3) (DESIGN.md: exit status 3, a kernel
 *    crashed).
 *
 * What it guarantees:
 *  - No output file is written after a crash: `graphcc run` writes outputs
 *    only after a run succeeded, and the handler never returns into graphcc.
 *    The debugging instruments write between kernels, never during one:
 *    each --dump-dir .npy goes through a temporary file renamed into place
 *    (so every one there is whole), and --trace and the dump map are
 *    flushed per node, so they show everything up to the crashing node.
 *  - The process state after a crash is not trusted (the kernel may have
 *    scribbled anywhere): nothing is cleaned up, nothing runs atexit, the
 *    process ends.
 *  - A kernel's own stack overflow is reported too: the handler runs on the
 *    alternate stack of the thread that installed it (the main thread), and
 *    names it "stack overflow" when the faulting address lies just below
 *    that thread's stack.
 *  - abort() from a kernel is reported like a signal (SIGABRT).
 *  - A crash while no kernel runs (a graphcc bug) is reported plainly,
 *    naming the signal, and the signal is then raised again with its
 *    default action, so the exit status and a core dump show the real
 *    signal.
 *
 * Limits: a crash in a thread that a kernel started itself, or in an
 * OpenBLAS worker, is reported without the node (the node is known per
 * executor thread); such threads have no alternate stack, so their stack
 * overflow ends the process with a plain SIGSEGV. Under a debugger, the
 * debugger sees the signal first (gdb stops on SIGSEGV) and can inspect the
 * kernel. GRAPHCC_CRASH_CAPTURE=0 in the environment leaves the default
 * signal actions in place (for a core dump).
 */
#ifndef GC_CRASH_H
#define GC_CRASH_H

#include <graphcc/runtime.h>

#include "kernel.h"

#if defined(__GNUC__)
#define GC_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#else
#define GC_TLS_INITIAL_EXEC
#endif

/*
 * The process's command line (/proc/self/cmdline), arguments separated by
 * spaces and shell-quoted where needed, into buf; returns its length (0 when
 * unknown). Async-signal-safe.
 */
size_t gc_crash_cmdline(char *buf, size_t len);

/*
 * What this thread's executor is running: the session (set once per run)
 * and the node whose kernel is being called (set before each kernel, NULL
 * between runs). Thread-local, initial-exec, so that the signal handler
 * reads them without any lazy allocation. The plain executor stores the
 * node once per node and nothing else.
 */
extern _Thread_local const gc_session *gc_crash_session GC_TLS_INITIAL_EXEC;
extern _Thread_local const gc_node *gc_crash_current GC_TLS_INITIAL_EXEC;
/*
 * Package code running while a program is built (verify, inferShape,
 * selectImpl, scratch, init, a pure kernel folded at compile time): a
 * description of what runs ("verify lib.so:sym of operation X for node
 * 'n'"), set just before the call and cleared after. A crash then is
 * reported with it, exit status 3.
 */
extern _Thread_local const char *gc_crash_context GC_TLS_INITIAL_EXEC;

#endif
