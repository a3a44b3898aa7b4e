/* Where the library's messages go (gc_log_fn, runtime.h): never stdio. */
#ifndef GC_LOG_H
#define GC_LOG_H

#include <graphcc/runtime.h>

typedef struct gc_log_sink {
	gc_log_fn log;
	void *user;
	/* gc_load_options.warn, for warnings when log is NULL */
	void (*warn)(void *user, const char *msg);
	void *warn_user;
} gc_log_sink;

/* Formats and hands the message to sink (NULL or empty: dropped). */
void gc_log(const gc_log_sink *sink, gc_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;

/* The same for a ready text of any length (a table). */
void gc_log_text(const gc_log_sink *sink, gc_log_level level, const char *text);

#endif
