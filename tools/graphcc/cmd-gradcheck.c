/* graphcc gradcheck PKG.yaml [--op NAME] [--tolerance T]: each declared
 * gradient against central finite differences (gc_gradcheck_package). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_gradcheck(int argc, char **argv)
{
	const char *manifest = NULL, *op = NULL;
	double tol = 0;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--op") || !strcmp(argv[i], "--tolerance")) {
			if (i + 1 >= argc)
				return cli_usage("gradcheck: %s needs a value", argv[i]);
			if (argv[i][2] == 'o') {
				op = argv[++i];
				continue;
			}
			char *end;
			tol = strtod(argv[++i], &end);
			if (*end || !(tol > 0))
				return cli_usage("gradcheck: --tolerance takes a positive number");
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage("gradcheck: unknown option '%s'", argv[i]);
		} else if (manifest) {
			return cli_usage("gradcheck: one manifest at a time ('%s' and '%s')", manifest,
					 argv[i]);
		} else {
			manifest = argv[i];
		}
	}
	if (!manifest)
		return cli_usage("gradcheck: give the package's manifest (PKG.yaml)");
	gc_error err = { 0 };
	gc_selftest_counts c;
	if (gc_gradcheck_package(manifest, op, tol, stdout, &c, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_for(err.code);
	}
	if (!c.passed && !c.failed)
		printf("no operation%s declares a gradient\n", op ? " of that name" : "");
	printf("%d passed, %d failed\n", c.passed, c.failed);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}
