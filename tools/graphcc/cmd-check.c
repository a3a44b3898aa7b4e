/* graphcc check: validate an op package on its own and say what it holds. */
#include <graphcc/customop.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *iface(int graphcc)
{
	static char buf[64];
	if (!graphcc)
		return "seed interface";
	snprintf(buf, sizeof buf, "graphcc interface, ABI %d.%d", GC_CUSTOMOP_ABI_MAJOR,
		 GC_CUSTOMOP_ABI_MINOR);
	return buf;
}

int cmd_check(int argc, char **argv)
{
	cli_opts o;
	int rc = cli_parse("check", argc, argv, OPT_LIBS | OPT_DRY_RUN, &o);
	if (rc)
		return rc;
	gc_error err = { 0 };
	gc_registry *reg = gc_registry_new();
	if (!reg) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	/* Not cli_registry: check looks at this one file, not GRAPHCC_OPS_PATH.
	 * --dry-run (or --no-libraries) reads the libraries as files: nothing
	 * of the package runs. */
	gc_registry_set_note_handler(reg, cli_note, NULL);
	bool dry = o.dry_run || o.no_libraries;
	gc_registry_options ro = { .library_dirs = o.lib_dirs, .n_library_dirs = o.n_lib_dirs,
				   .dry_run = dry };
	if (gc_registry_set_options(reg, &ro)) {
		cli_error("out of memory");
		gc_registry_free(reg);
		return EXIT_FAIL;
	}
	if (gc_registry_load(reg, o.model, &err)) {
		cli_error("%s", err.msg);
		gc_registry_free(reg);
		return cli_exit_for(err.code);
	}
	int n = gc_registry_num_ops(reg);
	printf("%s: %d operation%s, all libraries and symbols found%s\n", o.model, n,
	       n == 1 ? "" : "s",
	       dry ? " (dry run: libraries read as files, none loaded, no package code run)" : "");
	for (int i = 0; i < n; i++) {
		gc_op_desc d;
		gc_registry_op(reg, i, &d);
		printf("  %s::%s", d.domain, d.type);
		if (d.version >= 0)
			printf(" (version %" PRId64 ")", d.version);
		if (strcmp(d.name, d.type))
			printf(" named '%s'", d.name);
		printf(": %d input%s, %d output%s, %d param%s%s\n", d.n_inputs,
		       d.n_inputs == 1 ? "" : "s", d.n_outputs, d.n_outputs == 1 ? "" : "s",
		       d.n_params, d.n_params == 1 ? "" : "s", d.pure ? ", pure" : "");
		printf("    functions: %s (%s)\n", d.functions_library, iface(d.graphcc_interface));
		for (int j = 0; j < d.n_impls; j++) {
			gc_impl_desc im;
			gc_registry_impl(reg, i, j, &im);
			if (im.skipped) {
				printf("    %s '%s': skipped (this build has no %s backend)\n",
				       im.backend, im.type, im.backend);
				continue;
			}
			printf("    %s '%s': %s symbol %s (%s)%s%s%s%s\n", im.backend, im.type,
			       im.library, im.symbol, iface(im.graphcc_interface),
			       im.config[0] ? ", config \"" : "", im.config,
			       im.config[0] ? "\"" : "",
			       im.has_init ? ", with init" : "");
		}
	}
	gc_registry_free(reg);
	return EXIT_OK;
}
