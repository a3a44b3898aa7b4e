#include "dynlib.h"

#include <graphcc/customop.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "crash.h"

/* An in-process library (gc_inprocess_library_add): named functions of
 * the host process, never unloaded. */
typedef struct inproc {
	struct inproc *next;
	char *name;
	int32_t n;
	char **syms;
	gc_fnptr *fns;
} inproc;

struct gc_dynlib {
	gc_dynlib *next;
	char *path; /* as first opened */
	char *real; /* resolved, the cache key */
	void *handle;
	const inproc *ip; /* an in-process library (handle NULL) */
	int refs;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gc_dynlib *libs;
static inproc *inprocs;

#define INPROCESS_PREFIX "inprocess:"

int gc_inprocess_library_add(const char *name, int32_t n, const char *const *symbols,
			     void (*const *functions)(void), gc_error *err)
{
	inproc *ip = gc_calloc(1, sizeof *ip);
	if (ip) {
		ip->name = gc_strdup(name);
		ip->syms = gc_calloc((size_t)n + 1, sizeof *ip->syms);
		ip->fns = gc_calloc((size_t)n + 1, sizeof *ip->fns);
	}
	bool ok = ip && ip->name && ip->syms && ip->fns;
	for (int32_t i = 0; ok && i < n; i++) {
		ok = (ip->syms[i] = gc_strdup(symbols[i])) != NULL;
		ip->fns[i] = functions[i];
		ip->n = i + 1;
	}
	if (!ok) {
		for (int32_t i = 0; ip && ip->syms && i < ip->n; i++)
			gc_free(ip->syms[i]);
		if (ip) {
			gc_free(ip->syms);
			gc_free(ip->fns);
			gc_free(ip->name);
		}
		gc_free(ip);
		return gc_error_set(err, GC_ENOMEM, "in-process library %s: out of memory", name);
	}
	pthread_mutex_lock(&lock);
	for (inproc *o = inprocs; o; o = o->next)
		if (!strcmp(o->name, name)) {
			pthread_mutex_unlock(&lock);
			for (int32_t i = 0; i < ip->n; i++)
				gc_free(ip->syms[i]);
			gc_free(ip->syms);
			gc_free(ip->fns);
			gc_free(ip->name);
			gc_free(ip);
			return gc_error_set(err, GC_EINVAL, "in-process library %s is registered already",
					    name);
		}
	ip->next = inprocs;
	inprocs = ip;
	pthread_mutex_unlock(&lock);
	return 0;
}

/* A new entry of the list with one reference (lock held); NULL when out of
 * memory. */
static gc_dynlib *add_entry(const char *path, const char *real, void *handle, const inproc *ip)
{
	gc_dynlib *l = gc_calloc(1, sizeof *l);
	if (l) {
		l->path = gc_strdup(path);
		l->real = gc_strdup(real);
	}
	if (!l || !l->path || !l->real) {
		if (l) {
			gc_free(l->path);
			gc_free(l->real);
			gc_free(l);
		}
		return NULL;
	}
	l->handle = handle;
	l->ip = ip;
	l->refs = 1;
	l->next = libs;
	libs = l;
	return l;
}

/* Opens "inprocess:NAME" (lock held). */
static int open_inprocess(const char *path, gc_dynlib **out, gc_error *err)
{
	const inproc *ip = NULL;
	for (const inproc *o = inprocs; o; o = o->next)
		if (!strcmp(o->name, path + strlen(INPROCESS_PREFIX)))
			ip = o;
	if (!ip)
		return gc_error_set(err, GC_EINVAL,
				    "library %s: no in-process library of that name is registered "
				    "(its functions live in the process that defined them)",
				    path);
	if (!(*out = add_entry(path, path, NULL, ip)))
		return gc_error_set(err, GC_ENOMEM, "library %s: out of memory", path);
	return 0;
}

int gc_dynlib_is_inprocess(const char *path)
{
	return !strncmp(path, INPROCESS_PREFIX, strlen(INPROCESS_PREFIX));
}

int gc_dynlib_open(const char *path, gc_dynlib **out, gc_error *err)
{
	*out = NULL;
	if (gc_dynlib_is_inprocess(path)) {
		pthread_mutex_lock(&lock);
		for (gc_dynlib *l = libs; l; l = l->next)
			if (!strcmp(l->real, path)) {
				l->refs++;
				pthread_mutex_unlock(&lock);
				*out = l;
				return 0;
			}
		int rc = open_inprocess(path, out, err);
		pthread_mutex_unlock(&lock);
		return rc;
	}
	char real[PATH_MAX];
	struct stat st;
	if (stat(path, &st))
		return gc_error_set(err, GC_EIO, "library %s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return gc_error_set(err, GC_EINVAL, "library %s: not a regular file", path);
	if (!realpath(path, real))
		return gc_error_set(err, GC_EIO, "library %s: %s", path, strerror(errno));
	pthread_mutex_lock(&lock);
	for (gc_dynlib *l = libs; l; l = l->next) {
		if (!strcmp(l->real, real)) {
			l->refs++;
			pthread_mutex_unlock(&lock);
			*out = l;
			return 0;
		}
	}
	if (gc_dynlib_check_sanitizer(real, err)) {
		pthread_mutex_unlock(&lock);
		return err->code;
	}
	/* dlopen runs the library's constructors: a crash or an exit() in
	 * them is reported naming the library (crash.c). */
	char what[PATH_MAX + 64];
	snprintf(what, sizeof what, "library %s (its constructors, run when it is loaded)", real);
	const char *outer = gc_crash_context;
	gc_crash_context = what;
	dlerror();
	void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
	gc_crash_context = outer;
	if (!h) {
		const char *why = dlerror();
		pthread_mutex_unlock(&lock);
		return gc_error_set(err, GC_EINVAL, "library %s cannot be loaded: %s", path,
				    why ? why : "unknown dlopen error");
	}
	gc_dynlib *l = add_entry(path, real, h, NULL);
	if (!l) {
		dlclose(h);
		pthread_mutex_unlock(&lock);
		return gc_error_set(err, GC_ENOMEM, "library %s: out of memory", path);
	}
	pthread_mutex_unlock(&lock);
	*out = l;
	return 0;
}

int gc_dynlib_check_dirs(const char *path, const char *const *dirs, int32_t n_dirs,
			 gc_error *err)
{
	if (n_dirs <= 0)
		return 0;
	char real[PATH_MAX], dir[PATH_MAX];
	if (!realpath(path, real))
		return gc_error_set(err, GC_EIO, "library %s: %s", path, strerror(errno));
	char list[1024] = "";
	size_t at = 0;
	for (int32_t i = 0; i < n_dirs; i++) {
		if (at < sizeof list)
			at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "",
					       dirs[i]);
		if (!realpath(dirs[i], dir))
			continue; /* a folder that does not exist holds nothing */
		size_t n = strlen(dir);
		while (n > 1 && dir[n - 1] == '/')
			n--;
		if (!strncmp(real, dir, n) && (real[n] == '/' || (n == 1 && dir[0] == '/')))
			return 0;
	}
	return gc_error_set(err, GC_EINVAL,
			    "library %s (%s) lies outside the folders libraries may be loaded "
			    "from (%s: gc_load_options.library_dirs; graphcc: --allow-libraries, "
			    "GRAPHCC_LIBRARY_PATH): not loaded",
			    path, real, list);
}

gc_dynlib *gc_dynlib_ref(gc_dynlib *l)
{
	pthread_mutex_lock(&lock);
	l->refs++;
	pthread_mutex_unlock(&lock);
	return l;
}

void gc_dynlib_release(gc_dynlib *l)
{
	if (!l)
		return;
	pthread_mutex_lock(&lock);
	if (--l->refs > 0) {
		pthread_mutex_unlock(&lock);
		return;
	}
	for (gc_dynlib **p = &libs; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	/* With sanitizers, keep libraries mapped so leak reports can name
	 * their frames; otherwise close for real. */
#if !GC_UNDER_ASAN
	if (l->handle)
		dlclose(l->handle);
#endif
	gc_free(l->path);
	gc_free(l->real);
	gc_free(l);
}

const char *gc_dynlib_path(const gc_dynlib *l)
{
	return l->path;
}

void *gc_dynlib_sym_opt(gc_dynlib *l, const char *sym)
{
	if (l->ip)
		return NULL; /* in-process libraries have functions only */
	dlerror();
	return dlsym(l->handle, sym);
}

void *gc_dynlib_sym(gc_dynlib *l, const char *sym, gc_error *err)
{
	if (l->ip) {
		gc_error_set(err, GC_EINVAL, "library %s has no data symbol '%s'", l->path, sym);
		return NULL;
	}
	dlerror();
	void *p = dlsym(l->handle, sym);
	if (!p) {
		const char *why = dlerror();
		gc_error_set(err, GC_EINVAL, "library %s has no symbol '%s': %s", l->path, sym,
			     why ? why : "it resolves to NULL");
	}
	return p;
}

int gc_dynlib_abi(gc_dynlib *l, bool *graphcc, gc_error *err)
{
	if (l->ip) {
		*graphcc = true; /* in-process functions follow the graphcc interface */
		return 0;
	}
	const uint32_t *v = gc_dynlib_sym_opt(l, "graphcc_customop_abi");
	*graphcc = v != NULL;
	if (!v)
		return 0;
	uint32_t major = *v >> 16, minor = *v & 0xffff;
	if (major != GC_CUSTOMOP_ABI_MAJOR)
		return gc_error_set(err, GC_EINVAL,
				    "library %s is built for graphcc op ABI %u.%u; this graphcc "
				    "speaks ABI %d.%d (major versions must match: rebuild the "
				    "package against this graphcc's customop.h)",
				    l->path, major, minor, GC_CUSTOMOP_ABI_MAJOR,
				    GC_CUSTOMOP_ABI_MINOR);
	return 0;
}

gc_fnptr gc_dynlib_fn(gc_dynlib *l, const char *sym, gc_error *err)
{
	if (l->ip) {
		for (int32_t i = 0; i < l->ip->n; i++)
			if (!strcmp(l->ip->syms[i], sym))
				return l->ip->fns[i];
		gc_error_set(err, GC_EINVAL, "library %s has no function '%s'", l->path, sym);
		return NULL;
	}
	void *p = gc_dynlib_sym(l, sym, err);
	gc_fnptr f = NULL;
	if (p)
		memcpy(&f, &p, sizeof f);
	return f;
}
