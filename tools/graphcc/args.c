/* Option parsing and tensor files for the subcommands. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_parse_shape(const char *arg, gc_shape_override *o)
{
	const char *eq = strrchr(arg, '=');
	if (!eq || eq == arg || !eq[1])
		return -1;
	static char names[MAX_ARGS][256];
	static int used;
	if (used >= MAX_ARGS || (size_t)(eq - arg) >= sizeof names[0])
		return -1;
	char *name = names[used++];
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = 0;
	o->name = name;
	o->rank = 0;
	const char *p = eq + 1;
	if (!strcmp(p, "scalar"))
		return 0;
	for (;;) {
		if (*p < '0' || *p > '9' || o->rank == GC_MAX_RANK)
			return -1;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno || v > (unsigned long long)INT64_MAX)
			return -1;
		o->dims[o->rank++] = (int64_t)v;
		if (!*end)
			return 0;
		if (*end != 'x' && *end != 'X' && *end != ',')
			return -1;
		p = end + 1;
	}
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

int cli_read_tensor(const char *path, gc_tensor *t, gc_error *err)
{
	if (ends_with(path, ".pb"))
		return gc_pb_read(path, t, NULL, err);
	return gc_npy_read(path, t, err);
}
