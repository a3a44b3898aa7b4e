#include "log.h"

#include <stdarg.h>
#include <stdio.h>

void gc_log(const gc_log_sink *sink, gc_log_level level, const char *fmt, ...)
{
	if (!sink || (!sink->log && !(sink->warn && level <= GC_LOG_WARNING)))
		return;
	char msg[GC_ERROR_MSG_MAX * 2];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (sink->log)
		sink->log(sink->user, level, msg);
	else
		sink->warn(sink->warn_user, msg);
}

void gc_log_text(const gc_log_sink *sink, gc_log_level level, const char *text)
{
	if (!sink || !text || (!sink->log && !(sink->warn && level <= GC_LOG_WARNING)))
		return;
	if (sink->log)
		sink->log(sink->user, level, text);
	else
		sink->warn(sink->warn_user, text);
}
