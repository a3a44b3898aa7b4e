/*
 * mark-channel-split: a 1x1 Conv whose output only a depthwise Conv reads
 * gets the graphcc-internal attribute _gc_split_channels = 1: its kernel
 * then splits its work over the threads by output channels, as the
 * depthwise one splits its own (runtime/kernels/sgemm-pack.c,
 * gc_pk_gemm_par), so that each core reads channels it wrote itself. (The
 * depthwise kernels of conv-dw.c take a channel an item, or 16 channels
 * and a band of rows, the band the whole plane for the planes of up to 16
 * or 32 columns that take that kernel, except the tallest.) A
 * core reading what the other wrote a moment ago waits on the other's
 * cache: mobilenet_v2's 96 -> 576 1x1 at 14x14 split by pixels (its row
 * GEMM's default) left its depthwise reader half its input in the other
 * core's cache. Only a hint: the products and their sums are the same at
 * any split. Runs after fuse-activation, which moved the Relu or Clip
 * between the two into the first.
 *
 * The other way round, a depthwise Conv whose output only a 1x1 Conv (no
 * groups) reads gets _gc_split_rows = 1: the 1x1 splits by pixels, and the
 * depthwise row kernel may then split its planes by rows too
 * (runtime/kernels/conv-dw.c, dw_row_bands). Not where something else
 * reads it, such as a squeeze-excite that takes whole channels.
 */
#include <string.h>

#include "graph-edit.h"

/* A constant weight of rank >= 3 whose window is all ones (1x1, 1x1x1). */
static const gc_tensor *unit_window(gc_edit *e, const gc_irnode *n)
{
	const gc_tensor *w = n->n_in >= 2 ? gc_edit_const(e, n->in[1]) : NULL;
	if (!w || w->rank < 3)
		return NULL;
	for (int32_t d = 2; d < w->rank; d++)
		if (w->dims[d] != 1)
			return NULL;
	return w;
}

static int64_t conv_group(const gc_edit *e, int32_t node)
{
	const gc_attr *a = gc_edit_attr(e, node, "group");
	return a && a->type == GC_ATTR_INT ? a->v.i : 1;
}

/* A depthwise Conv reading v as its input X: one input channel a group,
 * one output channel a group, more than one group. */
static bool depthwise_reader(gc_edit *e, int32_t node, int32_t v)
{
	const gc_irnode *n = &e->g->nodes[node];
	if (!gc_edit_is_op(e, node, "Conv") || n->n_in < 2 || n->in[0] != v)
		return false;
	const gc_tensor *w = gc_edit_const(e, n->in[1]);
	int64_t groups = conv_group(e, node);
	return w && w->rank >= 3 && groups > 1 && w->dims[1] == 1 && w->dims[0] == groups;
}

/* Sets the graphcc-internal mark `name` = 1 on node i: 1, or an error. */
static int set_mark(gc_edit *e, int32_t i, const char *name)
{
	gc_attr mark = {.name = name, .type = GC_ATTR_INT, .v.i = 1};
	int rc = gc_edit_set_attr(e, i, &mark);
	return rc ? rc : 1;
}

/* A 1x1 Conv without groups reading v as its input X. */
static bool pointwise_reader(gc_edit *e, int32_t node, int32_t v)
{
	const gc_irnode *n = &e->g->nodes[node];
	return gc_edit_is_op(e, node, "Conv") && n->n_in >= 2 && n->in[0] == v &&
	       conv_group(e, node) == 1 && unit_window(e, n);
}

/* Marks depthwise Conv i whose output a 1x1 alone reads: 1 marked, 0 not,
 * or an error. */
static int mark_rows(gc_edit *e, int32_t i)
{
	const gc_irnode *n = &e->g->nodes[i];
	if (n->n_in < 1 || n->in[0] < 0 || !depthwise_reader(e, i, n->in[0]) ||
	    gc_edit_attr(e, i, "_gc_split_rows"))
		return 0;
	int32_t reader = gc_edit_only_reader(e, n->out[0]);
	if (reader < 0 || !pointwise_reader(e, reader, n->out[0]))
		return 0;
	return set_mark(e, i, "_gc_split_rows");
}

static int mark_one(gc_edit *e, int32_t i)
{
	const gc_irnode *n = &e->g->nodes[i];
	if (n->n_out != 1 || n->out[0] < 0)
		return 0;
	if (conv_group(e, i) != 1)
		return mark_rows(e, i);
	if (!unit_window(e, n) || gc_edit_attr(e, i, "_gc_split_channels"))
		return 0;
	int32_t reader = gc_edit_only_reader(e, n->out[0]);
	if (reader < 0 || !depthwise_reader(e, reader, n->out[0]))
		return 0;
	return set_mark(e, i, "_gc_split_channels");
}

int gc_pass_mark_channel_split(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Conv", NULL};
	return gc_edit_each(ctx, ops, mark_one);
}
