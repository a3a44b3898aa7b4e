/*
 * Shared libraries of op packages: opened once per path with
 * dlopen(RTLD_NOW | RTLD_LOCAL), reference counted, closed only when nothing
 * (no registry, no program) uses them any more. Thread-safe.
 */
#ifndef GC_DYNLIB_H
#define GC_DYNLIB_H

#include <graphcc/runtime.h>

#include <stdbool.h>

typedef struct gc_dynlib gc_dynlib;

/* Refuses (GC_EINVAL, saying what to do) a library built with a sanitizer
 * whose runtime this process lacks: loading it would end the process
 * (dynlib-san.c). 0 otherwise, also when path cannot be read as ELF. */
int gc_dynlib_check_sanitizer(const char *path, gc_error *err);

/* Opens (or shares) the library at path. Errors name the path and carry
 * dlerror's text. */
int gc_dynlib_open(const char *path, gc_dynlib **out, gc_error *err);
/*
 * Whether the library at path may be loaded under a restriction to folders
 * (n_dirs > 0; none: any): its real path (symlinks resolved) must lie under
 * the real path of one of dirs. Nothing is opened. The error names the
 * library, its real path and the folders.
 */
int gc_dynlib_check_dirs(const char *path, const char *const *dirs, int32_t n_dirs,
			 gc_error *err);
/* Takes one more reference. */
gc_dynlib *gc_dynlib_ref(gc_dynlib *l);
void gc_dynlib_release(gc_dynlib *l);
const char *gc_dynlib_path(const gc_dynlib *l);
/* The symbol, or NULL with an error naming library and symbol (dlerror). */
void *gc_dynlib_sym(gc_dynlib *l, const char *sym, gc_error *err);
/* A function symbol (ISO C cannot convert dlsym's void * to a function
 * pointer; this does it once, here). NULL with an error when missing. */
typedef void (*gc_fnptr)(void);
gc_fnptr gc_dynlib_fn(gc_dynlib *l, const char *sym, gc_error *err);

/* Whether path names an in-process library ("inprocess:NAME", see
 * gc_inprocess_library_add in runtime.h): no file, nothing to hash. */
int gc_dynlib_is_inprocess(const char *path);

/* The symbol or NULL, no error. */
void *gc_dynlib_sym_opt(gc_dynlib *l, const char *sym);
/*
 * Which interface the library is written to: *graphcc is true when it
 * exports graphcc_customop_abi. A different major ABI version is refused
 * with both versions in the message.
 */
int gc_dynlib_abi(gc_dynlib *l, bool *graphcc, gc_error *err);

#endif
