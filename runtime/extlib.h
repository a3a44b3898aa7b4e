/*
 * Optional libraries that a few built-in ops need (PCRE2 for RegexFullMatch,
 * libjpeg and libpng for ImageDecoder), loaded with dlopen on first use
 * rather than linked: the runtime links none of them (DESIGN.md: the
 * runtime stays lean), a model without those ops never loads them, and a
 * machine without them runs everything else. The build needs their headers
 * only (for the types and constants; tools/install-deps.sh).
 *
 * A gc_extlib is a static description: the library's soname, the Debian
 * package that ships it (for the error message) and the symbols wanted.
 * gc_extlib_open loads it once per process (thread-safe); on failure every
 * call gives the same error, naming the library, the package and dlerror's
 * text.
 */
#ifndef GC_EXTLIB_H
#define GC_EXTLIB_H

#include <graphcc/runtime.h>

#include <pthread.h>
#include <string.h>

enum { GC_EXTLIB_MAX_SYMBOLS = 24 };

typedef struct gc_extlib {
	const char *soname, *package;
	const char *const *symbols; /* NULL-terminated */
	/* filled by gc_extlib_open */
	pthread_mutex_t lock;
	int state; /* 0 not tried, 1 loaded, -1 failed */
	gc_error err;
	void *handle;
	void *fns[GC_EXTLIB_MAX_SYMBOLS]; /* symbols[i]'s address */
} gc_extlib;

#define GC_EXTLIB_INIT(soname, package, symbols)                                                   \
	{                                                                                          \
		(soname), (package), (symbols), PTHREAD_MUTEX_INITIALIZER, 0, {0, {0}}, NULL,      \
		{                                                                                  \
			NULL                                                                       \
		}                                                                                  \
	}

/* Loads l (once) and returns 0, else its error in err. */
int gc_extlib_open(gc_extlib *l, gc_error *err);

typedef void (*gc_extlib_void_fn)(void);
/* symbols[i] of an opened l as a function pointer (dlsym's void * converted
 * through memcpy: C has no cast between object and function pointers). */
static inline gc_extlib_void_fn gc_extlib_fn(const gc_extlib *l, int i)
{
	gc_extlib_void_fn f;
	memcpy(&f, &l->fns[i], sizeof f);
	return f;
}

#endif
