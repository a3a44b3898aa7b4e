/*
 * pow-to-mul: Pow by a constant scalar exponent that a cheaper op computes,
 * on float bases: x^2 -> Mul(x, x), x^0.5 -> Sqrt(x), x^-1 -> Reciprocal(x),
 * x^1 -> Identity(x) (what LayerNormalization's and RMSNorm's exports are
 * made of; the Pow kernel calls pow() per element). Other exponents stay
 * Pow. x^2 is x * x whatever x's type; for the others (which take float
 * only) the base must be known to be float (a constant or a value with type
 * information): Pow allows an integer base with a float exponent.
 */
#include "graph-edit.h"

static bool float_value(gc_edit *e, int32_t v)
{
	const gc_tensor *t = gc_edit_const(e, v);
	if (t)
		return gc_kv_float(t->dtype);
	const gc_value *val = &e->g->values[v];
	return val->has_info && gc_kv_float(val->dtype);
}

static int rewrite(gc_edit *e, int32_t i)
{
	gc_graph *g = e->g;
	const gc_irnode *n = &g->nodes[i];
	if (n->n_in != 2 || n->n_out != 1 || n->n_attr || n->in[0] < 0 || n->in[1] < 0)
		return 0;
	int32_t x = n->in[0];
	double p;
	if (!gc_edit_const_scalar(e, n->in[1], NULL, &p) || (p != 2 && !float_value(e, x)))
		return 0;
	/* the exponent's shape may broadcast the result to more dims */
	const gc_tensor *pt = gc_edit_const(e, n->in[1]);
	if (pt->rank > 0)
		return 0;
	const char *op = p == 2 ? "Mul" : p == 0.5 ? "Sqrt" : p == -1 ? "Reciprocal"
				    : p == 1	      ? "Identity"
						      : NULL;
	if (!op)
		return 0;
	int rc = gc_edit_set_op(e, i, "", op, p == 2 ? 2 : 1);
	if (!rc && p == 2)
		rc = gc_edit_set_input(e, i, 1, x);
	return rc ? rc : 1;
}

int gc_pass_pow_to_mul(gc_pass_ctx *ctx)
{
	static const char *const ops[] = {"Pow", NULL};
	return gc_edit_each(ctx, ops, rewrite);
}
