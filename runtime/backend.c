/* The backends of this build: the Interpreter, graphcc's reference. */
#include "backend.h"

#include <stdio.h>
#include <string.h>

#include "custom.h"

/* The Interpreter runs a node by its op table's prepare (built-in) or the
 * custom-call layer's (package kernels). */
static int interpreter_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			       gc_tensor *const *out)
{
	if (n->op == GC_OP_CUSTOM)
		return gc_custom_prepare(k, n, in, out);
	if ((unsigned)n->op >= GC_OP_COUNT || !gc_op_table[n->op].prepare)
		return gc_kerr(k, GC_EINVAL, "graphcc bug: op %d has no prepare", (int)n->op);
	if (gc_op_version_check(k, n))
		return gc_kok(k);
	return gc_op_table[n->op].prepare(k, n, in, out);
}

static const gc_backend interpreter = {
	.name = "Interpreter",
	.ops = gc_op_table,
	.prepare = interpreter_prepare,
	.arena_align = 64,
	.kernels_threaded = 1,
};

const gc_backend *const gc_backends[] = { &interpreter };
const size_t gc_n_backends = sizeof gc_backends / sizeof gc_backends[0];

const gc_backend *gc_backend_find(const char *name)
{
	if (!name)
		return gc_backends[0];
	for (size_t i = 0; i < gc_n_backends; i++)
		if (!strcmp(gc_backends[i]->name, name))
			return gc_backends[i];
	return NULL;
}

const char *gc_backend_names(char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < gc_n_backends && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
				       gc_backends[i]->name);
	return buf;
}
