/* What the security items rest on: reading a library's symbols from its
 * file (lib/elf-check.c, hostile bytes included), writing files through
 * unpredictable temporary names (runtime/fileio.c), and the folder
 * restriction on libraries (runtime/dynlib.c). */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dynlib.h"
#include "elf-check.h"
#include "fileio.h"

static char tmpdir[] = "/tmp/gc-trust-XXXXXX";

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* A file name in this run's own temporary folder (made on first use). */
static const char *path_in(const char *name)
{
	static char buf[PATH_MAX];
	if (!strcmp(tmpdir + strlen(tmpdir) - 6, "XXXXXX")) {
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(1);
		}
		atexit(cleanup);
	}
	snprintf(buf, sizeof buf, "%s/%s", tmpdir, name);
	return buf;
}

/* A real shared library: the one cos() comes from. */
static const char *libm_path(void)
{
	Dl_info info;
	double (*f)(double) = cos;
	void *p;
	memcpy(&p, &f, sizeof p);
	return dladdr(p, &info) && info.dli_fname ? info.dli_fname : NULL;
}

static void test_elf_reads_symbols(void)
{
	const char *lib = libm_path();
	CHECK(lib != NULL);
	gc_elf *e;
	gc_error err = { 0 };
	CHECK_INT(gc_elf_open(lib, &e, &err), 0);
	CHECK(gc_elf_exports(e, "cos"));
	CHECK(gc_elf_exports(e, "sqrt"));
	CHECK(!gc_elf_exports(e, "graphcc_no_such_symbol"));
	uint32_t v;
	CHECK(!gc_elf_u32(e, "graphcc_customop_abi", &v));
	gc_elf_free(e);
}

static void test_elf_refusals(void)
{
	gc_error err = { 0 };
	gc_elf *e;
	const char *p = path_in("text.so");
	CHECK_INT(gc_write_file_atomic(p, "not a library\n", 14, NULL, 0, &err), 0);
	CHECK(gc_elf_open(p, &e, &err) != 0);
	CHECK_CONTAINS(err.msg, "not an ELF file");
	CHECK_CONTAINS(err.msg, "text.so");
	memset(&err, 0, sizeof err);
	CHECK(gc_elf_open("/proc/self/status", &e, &err) != 0); /* not a regular file */
}

/* Truncations and flipped bytes of a real library: refused or read, never
 * a read outside the file (ASan watches). */
static void test_elf_hostile_bytes(void)
{
	const char *lib = libm_path();
	CHECK(lib != NULL);
	void *buf;
	size_t len;
	gc_error err = { 0 };
	CHECK_INT(gc_read_file(lib, &buf, &len, &err), 0);
	unsigned char *orig = buf;
	const char *p = path_in("mutant.so");
	int refused = 0, read_ok = 0;
	for (size_t cut = 0; cut < len; cut += cut < 256 ? 1 : cut < 8192 ? 61 : 4093) {
		CHECK_INT(gc_write_file_atomic(p, orig, cut, NULL, 0, &err), 0);
		gc_elf *e = NULL;
		if (gc_elf_open(p, &e, &err))
			refused++;
		else {
			read_ok++;
			gc_elf_exports(e, "cos");
			gc_elf_free(e);
		}
	}
	CHECK(refused > 100);
	unsigned char *m = malloc(len);
	CHECK(m != NULL);
	uint64_t seed = 0x9e3779b97f4a7c15u;
	for (int round = 0; round < 400; round++) {
		memcpy(m, orig, len);
		for (int k = 0; k < 8; k++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			/* the header and section table, where the offsets are */
			size_t at = k < 4 ? seed % 64 : len - 1 - seed % (len < 4096 ? len : 4096);
			m[at] ^= (unsigned char)(seed >> 32 | 1);
		}
		CHECK_INT(gc_write_file_atomic(p, m, len, NULL, 0, &err), 0);
		gc_elf *e = NULL;
		if (!gc_elf_open(p, &e, &err)) {
			uint32_t v;
			gc_elf_exports(e, "cos");
			gc_elf_u32(e, "cos", &v);
			gc_elf_free(e);
		}
	}
	free(m);
	free(buf);
	printf("  elf: %d truncations refused, %d read\n", refused, read_ok);
}

static void test_outfile_replaces_symlink_never_follows(void)
{
	gc_error err = { 0 };
	const char *victim = strdup(path_in("victim"));
	CHECK_INT(gc_write_file_atomic(victim, "mine", 4, NULL, 0, &err), 0);
	const char *out = strdup(path_in("out.npy"));
	CHECK_INT(symlink(victim, out), 0);
	CHECK_INT(gc_write_file_atomic(out, "new", 3, NULL, 0, &err), 0);
	struct stat st;
	CHECK_INT(lstat(out, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	void *b;
	size_t n;
	CHECK_INT(gc_read_file(victim, &b, &n, &err), 0);
	CHECK(n == 4 && !memcmp(b, "mine", 4));
	free(b);
	/* a folder at the final name is refused, and left as it was */
	const char *dir = strdup(path_in("folder"));
	CHECK_INT(mkdir(dir, 0755), 0);
	CHECK(gc_write_file_atomic(dir, "x", 1, NULL, 0, &err) != 0);
	CHECK_CONTAINS(err.msg, "folder");
	CHECK_INT(rmdir(dir), 0); /* still empty: no temporary left inside or beside */
	free((void *)victim);
	free((void *)out);
	free((void *)dir);
}

static void test_outfile_names_unpredictable(void)
{
	gc_error err = { 0 };
	gc_outfile a, b;
	const char *p = strdup(path_in("same.npy"));
	CHECK_INT(gc_outfile_open(&a, p, &err), 0);
	CHECK_INT(gc_outfile_open(&b, p, &err), 0);
	CHECK(strcmp(a.tmp, b.tmp) != 0);
	CHECK(strstr(a.tmp, tmpdir) == a.tmp); /* in the target's folder */
	gc_outfile_abort(&a);
	gc_outfile_abort(&b);
	CHECK(access(p, F_OK) != 0);
	free((void *)p);
}

static void test_library_dirs(void)
{
	gc_error err = { 0 };
	path_in("");
	char allowed[PATH_MAX], sibling[PATH_MAX];
	snprintf(allowed, sizeof allowed, "%s/a", tmpdir);
	snprintf(sibling, sizeof sibling, "%s/ab", tmpdir); /* shares a's prefix */
	CHECK_INT(mkdir(allowed, 0755), 0);
	CHECK_INT(mkdir(sibling, 0755), 0);
	char in[PATH_MAX + 16], out[PATH_MAX + 16], link[PATH_MAX + 16];
	snprintf(in, sizeof in, "%s/lib.so", allowed);
	snprintf(out, sizeof out, "%s/lib.so", sibling);
	snprintf(link, sizeof link, "%s/escape.so", allowed);
	CHECK_INT(gc_write_file_atomic(in, "x", 1, NULL, 0, &err), 0);
	CHECK_INT(gc_write_file_atomic(out, "x", 1, NULL, 0, &err), 0);
	CHECK_INT(symlink(out, link), 0);
	const char *dirs[] = { allowed };
	CHECK_INT(gc_dynlib_check_dirs(in, dirs, 1, &err), 0);
	CHECK_INT(gc_dynlib_check_dirs(out, dirs, 0, &err), 0); /* no restriction */
	CHECK(gc_dynlib_check_dirs(out, dirs, 1, &err) != 0);
	CHECK_CONTAINS(err.msg, "outside");
	memset(&err, 0, sizeof err);
	CHECK(gc_dynlib_check_dirs(link, dirs, 1, &err) != 0); /* judged by its real path */
	CHECK_CONTAINS(err.msg, out);
	const char *root[] = { "/" };
	CHECK_INT(gc_dynlib_check_dirs(out, root, 1, &err), 0);
}

TEST_MAIN(TEST(test_elf_reads_symbols), TEST(test_elf_refusals),
	  TEST(test_elf_hostile_bytes), TEST(test_outfile_replaces_symlink_never_follows),
	  TEST(test_outfile_names_unpredictable), TEST(test_library_dirs))
