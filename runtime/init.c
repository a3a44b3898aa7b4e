/* Library-wide settings (gc_runtime_init): the only place the runtime reads the
 * environment, and only when the host asks. */
#include <graphcc/runtime.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "fileio.h"
#include "kernels/qgemm.h"
#include "options.h"

#define DEFAULT_MAX_BYTES ((uint64_t)16 << 30)

static atomic_uint_least64_t max_bytes = DEFAULT_MAX_BYTES;
static atomic_int reference_kernels;

const char *gc_version(void)
{
	return GC_VERSION_STRING;
}

int gc_abi_version(void)
{
	return GC_ABI_VERSION;
}

uint64_t gc_limit_bytes(void)
{
	return atomic_load_explicit(&max_bytes, memory_order_relaxed);
}

int gc_reference_kernels(void)
{
	return atomic_load_explicit(&reference_kernels, memory_order_relaxed);
}

int gc_runtime_init(const gc_init_options *opt, gc_error *err)
{
	gc_init_options o;
	if (gc_options_copy(&o, sizeof o, opt, "gc_init_options", err))
		return err->code;
	uint64_t limit = o.max_bytes ? o.max_bytes : DEFAULT_MAX_BYTES;
	int ref = o.reference_kernels != 0, amx = o.amx != 0;
	if (o.from_environment) {
		const char *s = getenv("GRAPHCC_MAX_BYTES");
		if (s && *s) {
			char *end;
			unsigned long long v = strtoull(s, &end, 10);
			if (*end || !v)
				return gc_error_set(err, GC_EINVAL,
						    "GRAPHCC_MAX_BYTES='%s' is not a positive byte count",
						    s);
			limit = v;
		}
		const char *r = getenv("GRAPHCC_NN_REFERENCE");
		if (r && r[0])
			ref = strcmp(r, "0") != 0;
		const char *a = getenv("GRAPHCC_AMX");
		if (a && a[0])
			amx = amx && strcmp(a, "0") != 0;
	}
	if (o.blas_coretype)
		gc_blas_choose_coretype();
	if (amx)
		gc_qgemm_amx_request();
	atomic_store(&max_bytes, limit);
	atomic_store(&reference_kernels, ref);
	return 0;
}
