#include "ops.h"

#include <stdint.h>
#include <string.h>

const gc_op_info gc_op_table[GC_OP_COUNT] = {
	[GC_OP_NONE] = { "<none>", 0, 0, 0, 0, NULL },
#define GC_X_(name, mi, ma, mo, mx) [GC_OP_##name] = { #name, mi, ma, mo, mx, gc_prepare_##name },
	GC_OP_LIST(GC_X_)
#undef GC_X_
	[GC_OP_CUSTOM] = { "<custom>", 0, GC_ARITY_MAX, 0, GC_ARITY_MAX, NULL },
};

/* Ops outside the default domain, by family: one line per such family. */
static const char *const gc_op_domains[GC_OP_COUNT] = {
#define GC_X_(name, ...) [GC_OP_##name] = GC_DOMAIN_TRAINING,
	GC_OPS_TRAINING(GC_X_)
#undef GC_X_
#define GC_X_(name, ...) [GC_OP_##name] = GC_DOMAIN_GRAPHCC,
	GC_OPS_FUSED(GC_X_)
#undef GC_X_
};

/* The opset versions graphcc implements: ONNX's default domain up to the
 * last opset whose changes its kernels follow, the training domain's one
 * opset; any other domain is an op package's, whose versions are 32-bit. */
static const struct {
	const char *domain;
	int64_t lo, hi;
} gc_opsets[] = {
	{ "", 1, GC_ONNX_OPSET_MAX },
	{ GC_DOMAIN_TRAINING, 1, 1 },
};

bool gc_opset_supported(const char *domain, int64_t version, int64_t *lo, int64_t *hi)
{
	*lo = 1;
	*hi = INT32_MAX;
	for (size_t i = 0; i < sizeof gc_opsets / sizeof gc_opsets[0]; i++)
		if (gc_domain_is_default(domain) ? !gc_opsets[i].domain[0]
						 : !strcmp(domain, gc_opsets[i].domain)) {
			*lo = gc_opsets[i].lo;
			*hi = gc_opsets[i].hi;
		}
	return version >= *lo && version <= *hi;
}

const char *gc_op_domain(gc_op op)
{
	return op > GC_OP_NONE && op < GC_OP_COUNT && gc_op_domains[op] ? gc_op_domains[op] : "";
}

bool gc_domain_is_default(const char *domain)
{
	return !domain || !domain[0] || !strcmp(domain, "ai.onnx");
}

gc_op gc_op_lookup(const char *domain, const char *op_type)
{
	if (!op_type)
		return GC_OP_NONE;
	bool dflt = gc_domain_is_default(domain);
	/* Binary search would need a sorted list; the table is small and this
	 * runs once per node at build time. */
	for (int i = GC_OP_NONE + 1; i < GC_OP_CUSTOM; i++) {
		const char *home = gc_op_domains[i];
		if (!strcmp(gc_op_table[i].name, op_type) &&
		    (home ? !dflt && !strcmp(home, domain) : dflt))
			return (gc_op)i;
	}
	return GC_OP_NONE;
}
