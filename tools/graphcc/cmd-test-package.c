/* graphcc test-package PKG.yaml [--op NAME]: the manifest's self-tests. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_test_package(int argc, char **argv)
{
	const char *manifest = NULL, *op = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--op")) {
			if (i + 1 >= argc)
				return cli_usage("test-package: --op needs an operation name");
			op = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage("test-package: unknown option '%s'", argv[i]);
		} else if (manifest) {
			return cli_usage("test-package: one manifest at a time ('%s' and '%s')",
					 manifest, argv[i]);
		} else {
			manifest = argv[i];
		}
	}
	if (!manifest)
		return cli_usage("test-package: give the package's manifest (PKG.yaml)");
	gc_error err = { 0 };
	gc_selftest_counts c;
	int rc = gc_selftest_package(manifest, op, stdout, &c, &err);
	if (rc) {
		cli_error("%s", err.msg);
		printf("%d passed, %d failed\n", c.passed, c.failed + 1);
		return EXIT_FAIL;
	}
	printf("%d passed, %d failed\n", c.passed, c.failed);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}
