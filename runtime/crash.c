/*
 * Crash capture (see crash.h for what it guarantees). Everything the signal
 * handler calls is async-signal-safe: write(2), open/read/close, _exit,
 * sigaction, sigprocmask, raise; strings and numbers are copied and
 * formatted by hand into a static buffer.
 */
#include "crash.h"

#include <graphcc/debug.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "custom.h"
#include "session-impl.h"

_Thread_local const gc_session *gc_crash_session GC_TLS_INITIAL_EXEC;
_Thread_local const gc_node *gc_crash_current GC_TLS_INITIAL_EXEC;
_Thread_local const char *gc_crash_context GC_TLS_INITIAL_EXEC;

/* The handler runs here; a kernel's stack overflow leaves no room on the
 * thread's own stack. */
static _Alignas(64) unsigned char alt_stack[128 * 1024];

/* The installing thread's stack, to recognise an overflow of it. */
static uintptr_t stack_lo, stack_hi;
static _Thread_local bool installer_thread GC_TLS_INITIAL_EXEC;

static const int caught[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
/* What was installed before (an embedding host's handler, such as
 * Python's faulthandler): a crash outside any kernel goes on to it. */
static struct sigaction previous[sizeof caught / sizeof caught[0]];

/* ------------------------------------------------------------ the report */

static struct {
	char buf[8192];
	size_t len;
} rep;

static void flush(void)
{
	size_t at = 0;
	while (at < rep.len) {
		ssize_t w = write(STDERR_FILENO, rep.buf + at, rep.len - at);
		if (w <= 0)
			break; /* EINTR cannot happen: every signal is blocked */
		at += (size_t)w;
	}
	rep.len = 0;
}

/* Appends at most max bytes of s (a string from the program, which a
 * crashing kernel may have damaged: bounded, control bytes shown as '?'). */
static void put_n(const char *s, size_t max)
{
	if (!s) {
		s = "(null)";
		max = 6;
	}
	for (size_t i = 0; i < max && s[i]; i++) {
		if (rep.len + 1 >= sizeof rep.buf)
			flush();
		unsigned char c = (unsigned char)s[i];
		rep.buf[rep.len++] = (c < 32 || c == 127) ? '?' : (char)c;
	}
}

/* Appends a literal of graphcc's own, as it is. */
static void put(const char *s)
{
	for (; *s; s++) {
		if (rep.len + 1 >= sizeof rep.buf)
			flush();
		rep.buf[rep.len++] = *s;
	}
}

static void put_u64(uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	char out[24];
	for (int i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = 0;
	put(out);
}

static void put_i64(int64_t v)
{
	if (v < 0) {
		put("-");
		put_u64((uint64_t)0 - (uint64_t)v);
	} else {
		put_u64((uint64_t)v);
	}
}

static void put_hex(uintptr_t v)
{
	char out[2 + 2 * sizeof v + 1];
	int n = 0;
	out[n++] = '0';
	out[n++] = 'x';
	bool started = false;
	for (int sh = (int)(8 * sizeof v) - 4; sh >= 0; sh -= 4) {
		unsigned d = (unsigned)(v >> sh) & 15;
		if (d || started || sh == 0) {
			out[n++] = "0123456789abcdef"[d];
			started = true;
		}
	}
	out[n] = 0;
	put(out);
}

/* One tensor of the program: "name float32 1x3x8x8". */
static void put_tensor(const gc_program *p, int32_t idx)
{
	if (idx < 0 || idx >= p->n_tensors) {
		put("(absent)");
		return;
	}
	const gc_ptensor *pt = &p->tensors[idx];
	put_n(pt->name, 200);
	put(" ");
	put(gc_dtype_name(pt->t.dtype));
	put(" ");
	if (pt->t.rank <= 0 || pt->t.rank > GC_MAX_RANK) {
		put("scalar");
		return;
	}
	for (int d = 0; d < pt->t.rank; d++) {
		if (d)
			put("x");
		put_i64(pt->t.dims[d]);
	}
}

static void put_tensors(const gc_program *p, const int32_t *list, int32_t n)
{
	int32_t shown = n < 16 ? n : 16;
	for (int32_t j = 0; j < shown; j++) {
		if (j)
			put(", ");
		put_tensor(p, list[j]);
	}
	if (shown < n) {
		put(", ... (");
		put_i64(n);
		put(" in all)");
	}
}

/* The command line, each argument shell-quoted when it needs it. */
size_t gc_crash_cmdline(char *buf, size_t len)
{
	if (!len)
		return 0;
	buf[0] = 0;
	char raw[4096];
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t have = 0;
	for (;;) {
		ssize_t r = read(fd, raw + have, sizeof raw - 1 - have);
		if (r <= 0)
			break;
		have += (size_t)r;
		if (have == sizeof raw - 1)
			break;
	}
	close(fd);
	size_t at = 0;
	for (size_t i = 0; i < have && at + 8 < len;) {
		const char *arg = raw + i;
		size_t n = 0;
		while (i + n < have && arg[n])
			n++;
		bool plain = n > 0;
		for (size_t k = 0; k < n && plain; k++) {
			char c = arg[k];
			plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				(c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
				c == '/' || c == '=' || c == ':' || c == ',' || c == '+' ||
				c == '@';
		}
		if (at)
			buf[at++] = ' ';
		if (!plain && at + 1 < len)
			buf[at++] = '\'';
		for (size_t k = 0; k < n && at + 6 < len; k++) {
			if (!plain && arg[k] == '\'') {
				memcpy(buf + at, "'\\''", 4);
				at += 4;
			} else {
				buf[at++] = arg[k];
			}
		}
		if (!plain && at + 1 < len)
			buf[at++] = '\'';
		i += n + 1;
	}
	buf[at] = 0;
	return at;
}

static void put_signal(int sig, const siginfo_t *si, bool overflow)
{
	const char *name = sig == SIGSEGV   ? "SIGSEGV"
			   : sig == SIGBUS  ? "SIGBUS"
			   : sig == SIGFPE  ? "SIGFPE"
			   : sig == SIGILL  ? "SIGILL"
			   : sig == SIGABRT ? "SIGABRT"
					    : "signal";
	put(name);
	put(" (");
	if (sig == SIGABRT) {
		put("abort() was called, or an assert failed");
	} else if (si && si->si_code <= 0) {
		put("sent by kill or raise from pid ");
		put_i64(si->si_pid);
	} else if (overflow) {
		put("stack overflow: the stack ran out at address ");
		put_hex((uintptr_t)si->si_addr);
	} else if (sig == SIGSEGV || sig == SIGBUS) {
		put("invalid memory access at address ");
		put_hex((uintptr_t)si->si_addr);
		if ((uintptr_t)si->si_addr < 4096)
			put(", a NULL pointer");
		const char *why = NULL;
		if (sig == SIGSEGV)
			why = si->si_code == SEGV_MAPERR   ? "address not mapped"
			      : si->si_code == SEGV_ACCERR ? "no permission for that access"
							   : NULL;
		else
			why = si->si_code == BUS_ADRALN	  ? "misaligned address"
			      : si->si_code == BUS_ADRERR ? "no such physical address (a mapped "
							    "file shorter than the mapping?)"
			      : si->si_code == BUS_OBJERR ? "hardware error"
							  : NULL;
		if (why) {
			put(": ");
			put(why);
		}
	} else if (sig == SIGFPE) {
		put(si->si_code == FPE_INTDIV	? "integer division by zero"
		    : si->si_code == FPE_INTOVF ? "integer overflow"
		    : si->si_code == FPE_FLTDIV ? "floating-point division by zero (trapping)"
		    : si->si_code == FPE_FLTINV ? "invalid floating-point operation (trapping)"
						: "arithmetic exception");
		put(" at instruction ");
		put_hex((uintptr_t)si->si_addr);
	} else if (sig == SIGILL) {
		put(si->si_code == ILL_ILLOPC	? "illegal opcode"
		    : si->si_code == ILL_PRVOPC ? "privileged opcode"
						: "illegal instruction");
		put(" (a CPU feature this machine lacks?) at ");
		put_hex((uintptr_t)si->si_addr);
	}
	put(")");
}

static bool is_stack_overflow(int sig, const siginfo_t *si)
{
	if (sig != SIGSEGV || !installer_thread || !stack_hi || si->si_code <= 0)
		return false;
	uintptr_t a = (uintptr_t)si->si_addr;
	/* The guard below the stack, or the last page of it. */
	return a + (1u << 20) >= stack_lo && a < stack_lo + 65536;
}

static void die_default(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
		if (caught[i] == sig && previous[i].sa_handler != SIG_IGN)
			sa = previous[i];
	sigaction(sig, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* "node 'n' (dom::Op), operation 'o', flavour 'f', library L, symbol S;
 * inputs: ...; outputs: ..." (shapes only when n is one of p's nodes). */
static void put_node(const gc_node *n, const gc_program *p)
{
	put("node '");
	put_n(n->name, 256);
	put("' (");
	const gc_custom *c = n->custom;
	if (n->domain && n->domain[0]) {
		put_n(n->domain, 128);
		put("::");
	}
	put_n(n->op_type, 128);
	put(")");
	flush(); /* what is known for sure goes out first */
	if (c) {
		put(", operation '");
		put_n(c->op_name, 128);
		put("', flavour '");
		put_n(c->flavour, 128);
		put("', library ");
		put_n(c->library, 1024);
		put(", symbol ");
		put_n(c->symbol, 256);
	} else {
		put(", graphcc's built-in kernel");
	}
	if (!p || n < p->nodes || n >= p->nodes + p->n_nodes)
		return;
	put("; inputs: ");
	put_tensors(p, n->in, n->n_in);
	put("; outputs: ");
	put_tensors(p, n->out, n->n_out);
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	static atomic_flag busy = ATOMIC_FLAG_INIT;
	if (atomic_flag_test_and_set(&busy)) {
		for (;;) /* another thread is reporting; it ends the process */
			pause();
	}
	const gc_node *n = gc_crash_current;
	const gc_session *s = gc_crash_session;
	bool overflow = is_stack_overflow(sig, si);
	const gc_program *p = n && s ? s->p : NULL;
	if (gc_crash_context && (!n || !p)) {
		put("graphcc: package code crashed: ");
		put_signal(sig, si, overflow);
		put(" in ");
		put_n(gc_crash_context, 2048);
		put("\ngraphcc: nothing was written\n");
		flush();
		_exit(3);
	}
	if (!n || !p || n < p->nodes || n >= p->nodes + p->n_nodes) {
		put("graphcc: crashed outside any kernel: ");
		put_signal(sig, si, overflow);
		put("\n");
		if (s)
			put("graphcc: kernels ran before this: one may have damaged memory that "
			    "graphcc uses (rerun with --guard to check custom kernels' writes)\n");
		flush();
		die_default(sig);
	}
	put("graphcc: kernel crashed: ");
	put_signal(sig, si, overflow);
	put(" in ");
	put_node(n, p);
	put("\n");
	flush();
	put("graphcc: no output was written; the process state after a crash is not trusted, "
	    "so graphcc stops here (exit 3).\n");
	static char cmd[3000];
	if (gc_crash_cmdline(cmd, sizeof cmd)) {
		put("graphcc: to stop just before this kernel in gdb: gdb --args ");
		put_n(cmd, sizeof cmd);
		put(" --break-before '");
		put_n(n->name, 256);
		put("'\n");
	}
	flush();
	_exit(3);
}

/*
 * exit() called while package code runs (a library's constructor during
 * dlopen, verify/infer/select/init, a kernel): the run did not finish, so
 * the process must not end with the status the package chose. Runs as the
 * last atexit handler (registered first); names what was running.
 */
static void exit_guard(void)
{
	const gc_node *n = gc_crash_current;
	const char *what = gc_crash_context;
	if (!n && !what)
		return;
	if (n) {
		const gc_session *s = gc_crash_session;
		put("graphcc: kernel called exit() in ");
		put_node(n, s ? s->p : NULL);
		put("\n");
	} else {
		put("graphcc: package code called exit() in ");
		put_n(what, 2048);
		put("\n");
	}
	put("graphcc: the run did not finish; nothing more is written (exit 3)\n");
	flush();
	_exit(3);
}

void gc_crash_capture_install(void)
{
	static atomic_int installed;
	if (atomic_exchange(&installed, 1))
		return;
	atexit(exit_guard);
	const char *env = getenv("GRAPHCC_CRASH_CAPTURE");
	if (env && !strcmp(env, "0"))
		return;
	/* Keep an alternate stack someone else (a sanitizer) already set. */
	stack_t old;
	if (sigaltstack(NULL, &old) || (old.ss_flags & SS_DISABLE)) {
		stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0};
		sigaltstack(&ss, NULL);
	}
	pthread_attr_t attr;
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		void *addr;
		size_t size;
		if (!pthread_attr_getstack(&attr, &addr, &size)) {
			stack_lo = (uintptr_t)addr;
			stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	installer_thread = true;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_ONSTACK | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
		sigaddset(&sa.sa_mask, caught[i]);
	for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
		sigaction(caught[i], &sa, &previous[i]);
}
