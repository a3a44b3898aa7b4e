/* libFuzzer target: manifest parsing through to a loaded package
 * (gc_registry_load: YAML, keys, libraries, symbols, ABI version). The
 * manifest is written into a private folder where lib/ is the fixture
 * package's library folder (GRAPHCC_FUZZ_LIBDIR, set by `make fuzz`), so
 * relative library paths in the seeds resolve. */
#include <graphcc/graphcc.h>

#include <fcntl.h>

#include "fuzz-common.h"

static char dir[256];

static void cleanup(void)
{
	char p[300];
	snprintf(p, sizeof p, "%s/pkg.yaml", dir);
	unlink(p);
	snprintf(p, sizeof p, "%s/lib", dir);
	unlink(p);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_limits();
	const char *libdir = getenv("GRAPHCC_FUZZ_LIBDIR");
	snprintf(dir, sizeof dir, "/tmp/graphcc-fuzz-manifest-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	atexit(cleanup);
	if (libdir) {
		char lnk[300];
		snprintf(lnk, sizeof lnk, "%s/lib", dir);
		if (symlink(libdir, lnk)) {
			perror("symlink");
			abort();
		}
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[300];
	snprintf(path, sizeof path, "%s/pkg.yaml", dir);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f)) {
		perror(path);
		abort();
	}
	gc_registry *r = gc_registry_new();
	if (!r)
		abort();
	gc_error err = {0};
	if (gc_registry_load(r, path, &err) != 0)
		fuzz_refused(&err);
	gc_registry_free(r);
	return 0;
}
