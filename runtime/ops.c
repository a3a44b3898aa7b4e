#include "ops.h"

#include "op-versions.h"

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
	GC_OPS_QUANT_GRAPHCC(GC_X_)
	GC_OPS_GRAD(GC_X_)
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

enum { GC_OPV_NEW, GC_OPV_CHANGED };

static const struct {
	gc_op op;
	int32_t version, kind;
	const char *reason;
} gc_op_versions[] = {
#define GC_X_(name, version, kind, reason) { GC_OP_##name, version, GC_OPV_##kind, reason },
	GC_OP_VERSIONS(GC_X_)
#undef GC_X_
};

int gc_op_version_row(int i, gc_op *op, int32_t *version, bool *is_new, const char **reason)
{
	if (i < 0 || (size_t)i >= sizeof gc_op_versions / sizeof gc_op_versions[0])
		return -1;
	*op = gc_op_versions[i].op;
	*version = gc_op_versions[i].version;
	*is_new = gc_op_versions[i].kind == GC_OPV_NEW;
	*reason = gc_op_versions[i].reason;
	return 0;
}

int gc_op_version_check(gc_kctx *k, const gc_node *n)
{
	if (!gc_domain_is_default(n->domain))
		return 0;
	int32_t since = 0, follows = 0;
	const char *reason = NULL;
	for (size_t i = 0; i < sizeof gc_op_versions / sizeof gc_op_versions[0]; i++) {
		if (gc_op_versions[i].op != (gc_op)n->op)
			continue;
		if (gc_op_versions[i].kind == GC_OPV_NEW)
			since = gc_op_versions[i].version;
		if (gc_op_versions[i].version <= n->opset && gc_op_versions[i].version > follows) {
			follows = gc_op_versions[i].version;
			reason = gc_op_versions[i].reason;
		}
	}
	if (since > n->opset)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "%s is an ONNX operator since opset %d; the model imports opset %d",
			       n->op_type, since, n->opset);
	if (reason)
		return gc_kerr(k, GC_EUNSUPPORTED, "%s-%d (the model imports opset %d): %s",
			       n->op_type, follows, n->opset, reason);
	return 0;
}

bool gc_domain_is_default(const char *domain)
{
	return !domain || !domain[0] || !strcmp(domain, "ai.onnx");
}

static const bool gc_op_also_onnx[GC_OP_COUNT] = {
#define GC_X_(name) [GC_OP_##name] = true,
	GC_OPS_FUSED_IN_ONNX(GC_X_)
#undef GC_X_
};

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
		    (home ? (!dflt && !strcmp(home, domain)) || (dflt && gc_op_also_onnx[i])
			  : dflt))
			return (gc_op)i;
	}
	return GC_OP_NONE;
}
