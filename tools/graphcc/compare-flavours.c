/*
 * graphcc run --compare-flavours: after a normal run, runs the model once
 * more and, before each custom node, every implementation of its operation
 * for the backend on the node's actual inputs (gc_flavours_compare in
 * lib/flavours.c). The report goes to stderr: per custom node the flavours,
 * each pair's largest absolute and relative difference and the worst pair,
 * then one summary line. Only flavours valid for a node run there (the
 * manifest's accepts:), each between guard zones. Exit status 3 when
 * flavours disagree beyond --tolerance (default 1e-4, relative to
 * max(1, |value|); a NaN against a number always disagrees) or one wrote
 * outside its outputs; 1 when one failed otherwise; else 0.
 */
#include <stdio.h>

#include "cli.h"


int cli_compare_flavours(const cli_opts *o, const gc_graph *g, const gc_registry *reg,
			 const gc_program *p, gc_session *s, gc_error *err)
{
	(void)g;
	(void)p;
	gc_flavours_summary sum;
	int rc = gc_flavours_compare(reg, s, stderr, o->tolerance, &sum, err);
	if (rc && !sum.n_custom)
		return rc; /* the run failed before any custom node */
	if (!sum.n_custom)
		fprintf(stderr, "compare-flavours: %s has no custom node: nothing to compare\n",
			o->model);
	else if (!sum.n_compared)
		fprintf(stderr, "compare-flavours: %d custom node%s, none with two flavours that ran",
			sum.n_custom, sum.n_custom == 1 ? "" : "s");
	else
		fprintf(stderr,
			"compare-flavours: %d custom node%s, %d compared; largest difference: node "
			"'%s', %s vs %s: max abs %.3g, max rel %.3g",
			sum.n_custom, sum.n_custom == 1 ? "" : "s", sum.n_compared, sum.node,
			sum.flavour_a, sum.flavour_b, sum.max_abs, sum.max_rel);
	if (sum.n_custom) {
		if (sum.n_declined)
			fprintf(stderr, "; %d flavour%s declined a node", sum.n_declined,
				sum.n_declined == 1 ? "" : "s");
		if (sum.n_invalid)
			fprintf(stderr, "; %d flavour%s not valid for a node (not run there)",
				sum.n_invalid, sum.n_invalid == 1 ? "" : "s");
		if (sum.n_failed)
			fprintf(stderr, "; %d flavour%s FAILED", sum.n_failed,
				sum.n_failed == 1 ? "" : "s");
		if (sum.n_disagree)
			fprintf(stderr, "; %d pair%s DISAGREE beyond tolerance %g", sum.n_disagree,
				sum.n_disagree == 1 ? "" : "s", sum.tolerance);
		fputc('\n', stderr);
	}
	return rc;
}
