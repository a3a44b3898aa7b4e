/*
 * Graph passes: each a standalone function over the graph IR, run from one
 * ordered list (gc_ir_passes in passes.c) on the compiler's private copy of
 * the graph, before nodes are bound. Binding then infers shapes and folds
 * constants; the program-level steps (dead-node removal, memory plan, the
 * every-node-bound check) follow in compile.c.
 */
#ifndef GC_PASSES_H
#define GC_PASSES_H

#include <graphcc/graphcc.h>

#include "graph-impl.h"

typedef struct gc_pass_ctx {
	gc_graph *g;
	const gc_compile_options *opt;
	gc_error *err;
	int32_t changed; /* what the pass did (nodes removed or fused), for reports */
} gc_pass_ctx;

typedef int (*gc_pass_fn)(gc_pass_ctx *ctx);

typedef struct gc_pass {
	const char *name;
	gc_pass_fn run;
} gc_pass;

/* The passes of passes.c's list, one per lib/pass-*.c file. */
int gc_pass_gradient(gc_pass_ctx *ctx);
int gc_pass_identity_elimination(gc_pass_ctx *ctx);
int gc_pass_fold_pad(gc_pass_ctx *ctx);
int gc_pass_bind_qdq(gc_pass_ctx *ctx);
int gc_pass_fuse_qdq_conv(gc_pass_ctx *ctx);
int gc_pass_fuse_qdq_matmul(gc_pass_ctx *ctx);
int gc_pass_fuse_qdq_maxpool(gc_pass_ctx *ctx);
int gc_pass_fuse_qdq_add(gc_pass_ctx *ctx);
int gc_pass_fuse_dynq_matmul(gc_pass_ctx *ctx);
int gc_pass_fold_batchnorm(gc_pass_ctx *ctx);
int gc_pass_fuse_batchnorm_input(gc_pass_ctx *ctx);
int gc_pass_fuse_residual(gc_pass_ctx *ctx);
int gc_pass_fuse_layernorm(gc_pass_ctx *ctx);
int gc_pass_pow_to_mul(gc_pass_ctx *ctx);
int gc_pass_fuse_gelu(gc_pass_ctx *ctx);
int gc_pass_fuse_swish(gc_pass_ctx *ctx);
int gc_pass_fuse_squeeze_excite(gc_pass_ctx *ctx);
int gc_pass_fuse_matmul_bias(gc_pass_ctx *ctx);
int gc_pass_fuse_matmul_gelu(gc_pass_ctx *ctx);
int gc_pass_fuse_activation(gc_pass_ctx *ctx);
int gc_pass_mark_channel_split(gc_pass_ctx *ctx);
int gc_pass_dead_nodes(gc_pass_ctx *ctx);

/* A lowering: a pass that replaces every node of one (domain, op type),
 * which no kernel runs (Gradient), so it runs even with no_optimize,
 * whenever the graph has such a node. */
typedef struct gc_lowering {
	const char *name;
	gc_pass_fn run;
	const char *domain, *op_type;
} gc_lowering;

/* Runs the lowerings that are needed, then (unless opt->no_optimize) every
 * IR pass in order; report (may be NULL) gets "name: changed" lines. */
int gc_run_ir_passes(gc_graph *g, const gc_compile_options *opt,
		     void (*report)(void *user, const char *pass, int32_t changed), void *user,
		     gc_error *err);
/* Whether g has a node a lowering must replace before binding. */
bool gc_ir_lowering_needed(const gc_graph *g);
/* Whether a lowering replaces the nodes of (domain, op_type). */
bool gc_ir_is_lowered(const char *domain, const char *op_type);

#endif
