#include "extlib.h"

#include <dlfcn.h>

static void extlib_load(gc_extlib *l)
{
	l->handle = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!l->handle) {
		const char *why = dlerror();
		gc_error_set(&l->err, GC_EUNSUPPORTED, "cannot load %s (Debian package %s): %s",
			     l->soname, l->package, why ? why : "unknown reason");
		return;
	}
	for (int i = 0; l->symbols[i]; i++) {
		if (i >= GC_EXTLIB_MAX_SYMBOLS) {
			gc_error_set(&l->err, GC_EUNSUPPORTED, "%s: too many symbols", l->soname);
			return;
		}
		dlerror();
		l->fns[i] = dlsym(l->handle, l->symbols[i]);
		if (!l->fns[i]) {
			const char *why = dlerror();
			gc_error_set(&l->err, GC_EUNSUPPORTED, "%s has no symbol '%s': %s",
				     l->soname, l->symbols[i], why ? why : "not found");
			return;
		}
	}
	/* the library stays loaded for the life of the process: programs keep
	 * pointers into it (compiled patterns) */
}

int gc_extlib_open(gc_extlib *l, gc_error *err)
{
	pthread_mutex_lock(&l->lock);
	if (l->state == 0) {
		extlib_load(l);
		l->state = l->err.code ? -1 : 1;
	}
	pthread_mutex_unlock(&l->lock);
	if (l->state < 0)
		return gc_error_set(err, l->err.code, "%s", l->err.msg);
	return 0;
}
