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

struct gc_dynlib {
	gc_dynlib *next;
	char *path; /* as first opened */
	char *real; /* resolved, the cache key */
	void *handle;
	int refs;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gc_dynlib *libs;

int gc_dynlib_open(const char *path, gc_dynlib **out, gc_error *err)
{
	*out = NULL;
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
		dlclose(h);
		pthread_mutex_unlock(&lock);
		return gc_error_set(err, GC_ENOMEM, "library %s: out of memory", path);
	}
	l->handle = h;
	l->refs = 1;
	l->next = libs;
	libs = l;
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
			    "from (%s: --allow-libraries, GRAPHCC_LIBRARY_PATH): not loaded",
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
#if !defined(__SANITIZE_ADDRESS__)
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
	dlerror();
	return dlsym(l->handle, sym);
}

void *gc_dynlib_sym(gc_dynlib *l, const char *sym, gc_error *err)
{
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
	void *p = gc_dynlib_sym(l, sym, err);
	gc_fnptr f = NULL;
	if (p)
		memcpy(&f, &p, sizeof f);
	return f;
}
