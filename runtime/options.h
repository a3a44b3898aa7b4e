/*
 * The public options structs (gc_compile_options, gc_session_options,
 * gc_load_options) start with `size`: sizeof the struct as the caller's
 * header had it, 0 for this version's. They grow only by appending fields,
 * so a caller built against an older header keeps working: the library
 * reads the bytes the caller has and takes the defaults (zero) for the rest.
 */
#ifndef GC_OPTIONS_H
#define GC_OPTIONS_H

#include <graphcc/runtime.h>

#include <stddef.h>
#include <string.h>

/* *dst (ours, dst_size bytes) from the caller's *src (NULL: defaults):
 * min(src's size, ours) bytes, the rest zero; dst's size set to ours. A
 * size too small to hold itself is refused, naming `what`. */
static inline int gc_options_copy(void *dst, size_t dst_size, const void *src, const char *what,
				  gc_error *err)
{
	memset(dst, 0, dst_size);
	if (src) {
		size_t size;
		memcpy(&size, src, sizeof size);
		if (size && size < sizeof size)
			return gc_error_set(err, GC_EINVAL,
					    "%s: size %zu is too small (sizeof is %zu; 0 means it)",
					    what, size, dst_size);
		memcpy(dst, src, size && size < dst_size ? size : dst_size);
	}
	memcpy(dst, &dst_size, sizeof dst_size);
	return 0;
}

#endif
