/*
 * fuse-matmul-gelu: a GELU whose input is a float32 MatMul output that
 * nothing else reads moves into the MatMul, as _gc_activation "Gelu" (the
 * exact, erf form) or "GeluTanh" (Gelu-20's approximate="tanh"); the kernel
 * applies it with the fused bias (fuse-matmul-bias, before this pass) to
 * each part of the output right after computing it, while it is in cache,
 * instead of in a pass of its own over the whole tensor. The GELU is
 * com.graphcc::Gelu (what fuse-gelu makes of PyTorch's Erf chain) or ONNX's
 * Gelu-20. This is a Linear + GELU of a transformer's feed-forward block
 * (BERT, ViT, Swin, ConvNeXt).
 *
 * Only MatMul takes it (runtime/kernels/gemm.c): the other kernels that
 * read _gc_activation refuse "Gelu". A MatMul that already has an
 * activation, a MatMul of unknown or other type, a GELU with attributes
 * other than approximate, or an input read by another node too: no fusion.
 */
#include <string.h>

#include "../runtime/build.h" /* GC_DOMAIN_GRAPHCC */
#include "graph-edit.h"

/* The _gc_activation node i's GELU becomes, or NULL when i is none we fuse. */
static const char *gelu_kind(gc_edit *e, int32_t i)
{
	const gc_irnode *n = &e->g->nodes[i];
	if (strcmp(n->op_type, "Gelu") || n->n_in != 1 || n->n_out != 1 || n->in[0] < 0 ||
	    n->out[0] < 0)
		return NULL;
	if (!strcmp(n->domain, GC_DOMAIN_GRAPHCC))
		return n->n_attr ? NULL : "Gelu";
	if (!gc_edit_is_op(e, i, "Gelu") || gc_graph_opset(e->g, "") < 20 || n->n_attr > 1)
		return NULL;
	if (!n->n_attr)
		return "Gelu";
	const gc_attr *a = &n->attrs[0];
	if (strcmp(a->name, "approximate") || a->type != GC_ATTR_STRING || !a->v.s)
		return NULL;
	if ((size_t)a->n == 4 && !strncmp(a->v.s, "none", 4))
		return "Gelu";
	if ((size_t)a->n == 4 && !strncmp(a->v.s, "tanh", 4))
		return "GeluTanh";
	return NULL;
}

/* Fuses GELU node i into the MatMul before it when it can: 1 when fused. */
static int fuse_one(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const char *kind = gelu_kind(e, i);
	if (!kind)
		return 0;
	int32_t x = g->nodes[i].in[0];
	if (gc_edit_uses(e, x) != 1 || gc_edit_is_pinned(e, x))
		return 0;
	int32_t p = g->values[x].producer;
	if (p < 0 || !gc_edit_is_op(e, p, "MatMul") || gc_edit_attr(e, p, "_gc_activation"))
		return 0;
	const gc_irnode *mm = &g->nodes[p];
	if (mm->n_in != 2 || mm->n_out != 1 || mm->out[0] != x || mm->in[0] < 0 || mm->in[1] < 0)
		return 0;
	gc_dtype t = gc_edit_known_dtype(e, mm->in[1]);
	if (t == GC_DTYPE_UNDEFINED)
		t = gc_edit_known_dtype(e, mm->in[0]);
	if (t != GC_DTYPE_FLOAT)
		return 0;
	gc_attr a = {.name = "_gc_activation", .type = GC_ATTR_STRING};
	a.v.s = kind;
	a.n = (int64_t)strlen(kind);
	int rc = gc_edit_set_attr(e, p, &a);
	if (rc)
		return rc;
	gc_edit_absorb(e, p, i);
	return 1;
}

int gc_pass_fuse_matmul_gelu(gc_pass_ctx *ctx)
{
	/* com.graphcc::Gelu is not a built-in of the default domain: every
	 * node, gelu_kind() picks */
	return gc_edit_each(ctx, NULL, fuse_one);
}
