/*
 * A package library built with a sanitizer (an author's `make SAN=1`),
 * loaded into a graphcc process that has no such runtime: gcc's ASan
 * runtime, pulled in as the library's dependency, ends the process from
 * inside dlopen ("ASan runtime does not come first in initial library
 * list", exit 1) before graphcc can say a word; clang's leaves undefined
 * __asan_* symbols that dlopen refuses. So before dlopen, the library's
 * dynamic string table is read as data (ELF section headers; nothing runs)
 * and, when it names a sanitizer runtime this process lacks, the load is
 * refused with what to do instead. A file graphcc cannot parse is left to
 * dlopen, which says what is wrong with it.
 */
#include <dlfcn.h>
#include <elf.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "dynlib.h"
#include "fileio.h"

static const struct {
	const char *init, *needed, *name, *lib, *clang_lib;
} sanitizers[] = {
	{ "__asan_init", "libasan.so", "AddressSanitizer", "libasan.so",
	  "libclang_rt.asan-x86_64.so" },
	{ "__tsan_init", "libtsan.so", "ThreadSanitizer", "libtsan.so",
	  "libclang_rt.tsan-x86_64.so" },
};

#define DYNSTR_MAX (64u << 20)

/* The library's .dynstr (the names it exports, imports and needs); NULL
 * when it cannot be read as a 64-bit ELF file. */
static char *read_dynstr(const char *path, size_t *len)
{
	int fd;
	uint64_t size;
	gc_error e = { 0 };
	char *out = NULL;
	if (gc_open_regular(path, &fd, &size, &e))
		return NULL;
	Elf64_Ehdr eh;
	if (size < sizeof eh || gc_read_fd_at(fd, &eh, sizeof eh, 0, path, &e) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shoff >= size ||
	    (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
		goto done;
	for (unsigned i = 0; i < eh.e_shnum && !out; i++) {
		Elf64_Shdr sh, str;
		if (gc_read_fd_at(fd, &sh, sizeof sh, eh.e_shoff + (uint64_t)i * sizeof sh, path,
				  &e))
			break;
		if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= eh.e_shnum ||
		    gc_read_fd_at(fd, &str, sizeof str,
				  eh.e_shoff + (uint64_t)sh.sh_link * sizeof str, path, &e))
			continue;
		if (str.sh_type != SHT_STRTAB || str.sh_offset >= size ||
		    str.sh_size > size - str.sh_offset || str.sh_size > DYNSTR_MAX)
			break;
		if (!(out = gc_malloc((size_t)str.sh_size + 1)))
			break;
		if (gc_read_fd_at(fd, out, (size_t)str.sh_size, str.sh_offset, path, &e)) {
			gc_free(out);
			out = NULL;
			break;
		}
		out[str.sh_size] = 0;
		*len = (size_t)str.sh_size;
	}
done:
	close(fd);
	return out;
}

static bool holds(const char *tab, size_t len, const char *s)
{
	size_t n = strlen(s);
	for (size_t at = 0; at + n <= len; at++)
		if (tab[at] == s[0] && !memcmp(tab + at, s, n))
			return true;
	return false;
}

int gc_dynlib_check_sanitizer(const char *path, gc_error *err)
{
	char *tab = NULL;
	size_t len = 0;
	bool read = false;
	int rc = 0;
	for (size_t k = 0; k < sizeof sanitizers / sizeof sanitizers[0] && !rc; k++) {
		if (dlsym(RTLD_DEFAULT, sanitizers[k].init))
			continue; /* this process has that runtime: the library can use it */
		if (!read) {
			tab = read_dynstr(path, &len);
			read = true;
		}
		if (!tab || !(holds(tab, len, sanitizers[k].init) ||
			      holds(tab, len, sanitizers[k].needed)))
			continue;
		rc = gc_error_set(
		    err, GC_EINVAL,
		    "library %s is built with %s (a package's SAN=1 build), but this graphcc "
		    "process has no %s runtime: loading it would end the process ('%s runtime "
		    "does not come first in initial library list'). Run graphcc with the runtime "
		    "preloaded: LD_PRELOAD=$(gcc -print-file-name=%s) graphcc ... (clang: "
		    "LD_PRELOAD=$(clang -print-file-name=%s)), best with --no-arena so that it "
		    "sees overruns; or use a graphcc built with `make SAN=1`; or build the "
		    "package without SAN=1",
		    path, sanitizers[k].name, sanitizers[k].name,
		    k == 0 ? "ASan" : "TSan", sanitizers[k].lib, sanitizers[k].clang_lib);
	}
	gc_free(tab);
	return rc;
}
