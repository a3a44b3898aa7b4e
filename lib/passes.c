/*
 * The ordered list of graph passes and its driver. Each pass rewrites the
 * compiler's private copy of the graph and says how many nodes it removed or
 * fused; the order matters: Identity nodes go first so that the patterns
 * after them see producer and consumer side by side, dead nodes last so that
 * what the fusions left unused (a Clip's Constant bounds, a folded
 * BatchNormalization's parameters) is gone before binding.
 */
#include "passes.h"

#include <string.h>

#include "../runtime/build.h"
#include "graph-edit.h"

/* First, so that the optimisations see the graph that runs. */
static const gc_lowering gc_ir_lowerings[] = {
    {"gradient", gc_pass_gradient, GC_DOMAIN_TRAINING, "Gradient"},
};

static const gc_pass gc_ir_passes[] = {
    {"identity-elimination", gc_pass_identity_elimination},
    {"fold-pad", gc_pass_fold_pad}, /* after identity-elimination (Pads of nothing) */
    {"bind-qdq", gc_pass_bind_qdq}, /* custom nodes' QDQ edges, before fusions move them */
    {"fuse-qdq-conv", gc_pass_fuse_qdq_conv}, /* before fuse-activation takes its Relu */
    {"fuse-qdq-matmul", gc_pass_fuse_qdq_matmul}, /* before fuse-matmul-bias takes its Add */
    {"fuse-qdq-maxpool", gc_pass_fuse_qdq_maxpool},
    {"fuse-qdq-add", gc_pass_fuse_qdq_add}, /* after fuse-qdq-matmul (its bias Add) */
    {"fuse-dynq-matmul", gc_pass_fuse_dynq_matmul}, /* before fuse-activation takes its Relu */
    {"fold-batchnorm", gc_pass_fold_batchnorm},
    {"fuse-residual", gc_pass_fuse_residual}, /* after fold-batchnorm, before fuse-activation */
    {"fuse-layernorm", gc_pass_fuse_layernorm}, /* before pow-to-mul: its chain has a Pow */
    {"pow-to-mul", gc_pass_pow_to_mul},
    {"fuse-gelu", gc_pass_fuse_gelu},
    {"fuse-swish", gc_pass_fuse_swish},
    {"fuse-squeeze-excite", gc_pass_fuse_squeeze_excite}, /* after fuse-swish, before fuse-activation */
    {"fuse-matmul-bias", gc_pass_fuse_matmul_bias},
    {"fuse-matmul-gelu", gc_pass_fuse_matmul_gelu}, /* after fuse-gelu and fuse-matmul-bias */
    {"fuse-activation", gc_pass_fuse_activation},
    {"fuse-batchnorm-input", gc_pass_fuse_batchnorm_input}, /* after fuse-activation: its Relu */
    {"mark-channel-split", gc_pass_mark_channel_split}, /* after fuse-activation: its Clip */
    {"dead-node-removal", gc_pass_dead_nodes},
};

int gc_run_ir_passes(gc_graph *g, const gc_compile_options *opt,
		     void (*report)(void *user, const char *pass, int32_t changed), void *user,
		     gc_error *err)
{
	/* The passes trust the graph: a cycle or an undefined read is reported
	 * as the builder's check words it, before anything moves. */
	int32_t *order = gc_calloc((size_t)g->n_nodes + 1, sizeof *order);
	if (!order)
		return gc_error_set(err, GC_ENOMEM, "out of memory optimizing %s", g->origin);
	int rc = gc_graph_check(g, order, err);
	gc_free(order);
	if (rc)
		return rc;
	for (size_t i = 0; i < sizeof gc_ir_lowerings / sizeof gc_ir_lowerings[0]; i++) {
		const gc_lowering *l = &gc_ir_lowerings[i];
		bool found = false;
		for (int32_t k = 0; k < g->n_nodes && !found; k++)
			found = !strcmp(g->nodes[k].domain, l->domain) &&
				!strcmp(g->nodes[k].op_type, l->op_type);
		if (!found) /* nothing to lower */
			continue;
		gc_pass_ctx ctx = {.g = g, .opt = opt, .err = err};
		rc = l->run(&ctx);
		if (rc)
			return gc_error_prefix(err, "%s: pass %s", g->origin, l->name);
		if (report)
			report(user, l->name, ctx.changed);
	}
	for (size_t i = 0; i < sizeof gc_ir_passes / sizeof gc_ir_passes[0]; i++) {
		const gc_pass *p = &gc_ir_passes[i];
		if (opt && opt->no_optimize)
			break;
		gc_pass_ctx ctx = {.g = g, .opt = opt, .err = err};
		rc = p->run(&ctx);
		if (rc)
			return gc_error_prefix(err, "%s: pass %s", g->origin, p->name);
		if (report)
			report(user, p->name, ctx.changed);
	}
	return 0;
}

bool gc_ir_is_lowered(const char *domain, const char *op_type)
{
	for (size_t i = 0; i < sizeof gc_ir_lowerings / sizeof gc_ir_lowerings[0]; i++)
		if (domain && op_type && !strcmp(gc_ir_lowerings[i].domain, domain) &&
		    !strcmp(gc_ir_lowerings[i].op_type, op_type))
			return true;
	return false;
}

bool gc_ir_lowering_needed(const gc_graph *g)
{
	for (int32_t k = 0; k < g->n_nodes; k++)
		if (gc_ir_is_lowered(g->nodes[k].domain, g->nodes[k].op_type))
			return true;
	return false;
}
