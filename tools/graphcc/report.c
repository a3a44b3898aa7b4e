/* What every command prints the same way: errors, usage hints, registry
 * notes, the exit status of an error, a program's custom-node bindings. */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("graphcc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("graphcc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(run 'graphcc help' for usage)\n", stderr);
	return EXIT_USAGE;
}

int cli_exit_for(int code)
{
	return code == GC_ECRASH ? EXIT_CRASH : code ? EXIT_FAIL : EXIT_OK;
}

void cli_note(void *user, const char *msg)
{
	(void)user;
	fprintf(stderr, "graphcc: note: %s\n", msg);
}

void cli_log(void *user, gc_log_level level, const char *msg)
{
	static const char *const names[GC_LOG_LEVEL_COUNT] = { "error", "warning", "note",
							       "debug" };
	(void)user;
	if (level <= GC_LOG_INFO)
		fprintf(stderr, "graphcc: %s: %s\n",
			names[(unsigned)level < GC_LOG_LEVEL_COUNT ? level : GC_LOG_DEBUG], msg);
}

/* Prints one line per custom node of p. Returns how many. */
int cli_print_bindings(const gc_program *p, FILE *out)
{
	int n_custom = 0;
	for (int i = 0; i < gc_program_num_nodes(p); i++) {
		gc_node_desc d;
		gc_program_node(p, i, &d);
		if (!d.flavour)
			continue;
		n_custom++;
		const char *fnlib;
		int n_fl;
		if (gc_program_node_per_shape(p, i, &fnlib, &n_fl)) {
			fprintf(out,
				"  node '%s' %s::%s -> operation '%s' (%s), bound per input shape "
				"when a session first sees it: functions library %s, %d "
				"implementation%s pinned (first: flavour '%s', library %s)\n",
				d.name, d.domain, d.op_type, d.op_name, d.manifest, fnlib, n_fl,
				n_fl == 1 ? "" : "s", d.flavour, d.library);
			continue;
		}
		fprintf(out,
			"  node '%s' %s::%s -> operation '%s' (%s), flavour '%s', library %s, "
			"symbol %s\n",
			d.name, d.domain, d.op_type, d.op_name, d.manifest, d.flavour, d.library,
			d.symbol);
		for (int io = 0; io < 2; io++)
			for (int t = 0; t < (io ? d.n_outputs : d.n_inputs); t++) {
				const char *qtype, *name = "";
				float scale;
				int32_t zp;
				if (!gc_program_node_quant(p, i, io, t, &qtype, &scale, &zp))
					continue;
				gc_program_node_tensor(p, i, io, t, &name);
				fprintf(out,
					"    %s %d ('%s') bound quantized: %s, scale %.9g, zero "
					"point %d\n",
					io ? "output" : "input", t, name, qtype, (double)scale,
					(int)zp);
			}
	}
	return n_custom;
}
