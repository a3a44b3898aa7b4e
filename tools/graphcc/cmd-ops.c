/* graphcc ops: the built-in op table and what graphcc declines, as
 * tab-separated lines for scripts (tools/opsets/gen-operators.py writes
 * docs/operators.md from it). */
#include <stdio.h>

#include "cli.h"
#include "../../runtime/ops.h"

static const char ops_usage[] =
	"usage: graphcc ops\n"
	"  prints the built-in operations, one per line:\n"
	"    op<TAB>NAME<TAB>DOMAIN<TAB>MIN_IN<TAB>MAX_IN<TAB>MIN_OUT<TAB>MAX_OUT\n"
	"  (DOMAIN '-' for ONNX's default domain), what graphcc declines:\n"
	"    decline<TAB>OP<TAB>SINCE_VERSION<TAB>WHAT ('-': the op version)<TAB>REASON\n"
	"  each op version of ONNX's default domain after opset 17 (runtime/op-versions.h):\n"
	"    version<TAB>OP<TAB>VERSION<TAB>new|changed<TAB>REASON ('-': followed)\n"
	"  the opsets of the default domain it reads and the element types it has:\n"
	"    opsets<TAB>LOW<TAB>HIGH\n"
	"    dtypes<TAB>NAME,NAME,...\n";

int cmd_ops(int argc, char **argv)
{
	(void)argv;
	if (argc > 0)
		return cli_usage("ops takes no arguments\n%s", ops_usage);
	for (int i = GC_OP_NONE + 1; i < GC_OP_CUSTOM; i++) {
		const gc_op_info *o = &gc_op_table[i];
		const char *dom = gc_op_domain((gc_op)i);
		printf("op\t%s\t%s\t%d\t%d\t%d\t%d\n", o->name, dom[0] ? dom : "-", o->min_in,
		       o->max_in, o->min_out, o->max_out);
		if (dom[0] && gc_op_lookup("", o->name) == (gc_op)i) /* also ONNX's (Gelu) */
			printf("op\t%s\t-\t%d\t%d\t%d\t%d\n", o->name, o->min_in, o->max_in,
			       o->min_out, o->max_out);
	}
	for (int i = 0; i < gc_op_n_declines; i++) {
		const gc_op_decline *d = &gc_op_declines[i];
		printf("decline\t%s\t%d\t%s\t%s\n", d->op, d->since, d->what ? d->what : "-",
		       d->reason);
	}
	gc_op op;
	int32_t v;
	bool is_new;
	const char *why;
	for (int i = 0; !gc_op_version_row(i, &op, &v, &is_new, &why); i++)
		printf("version\t%s\t%d\t%s\t%s\n", gc_op_table[op].name, v,
		       is_new ? "new" : "changed", why ? why : "-");
	int64_t lo, hi;
	gc_opset_supported("", 1, &lo, &hi);
	printf("opsets\t%lld\t%lld\ndtypes", (long long)lo, (long long)hi);
	for (int t = GC_DTYPE_UNDEFINED + 1, first = 1; t < GC_DTYPE_COUNT; t++)
		if (gc_dtype_size((gc_dtype)t)) {
			printf("%s%s", first ? "\t" : ",", gc_dtype_name((gc_dtype)t));
			first = 0;
		}
	printf("\n");
	return ferror(stdout) ? EXIT_FAIL : EXIT_OK;
}
