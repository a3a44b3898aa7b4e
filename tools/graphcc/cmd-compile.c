/* graphcc compile: check, infer and bind a model; show what each custom node
 * is bound to. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void pass_report(void *user, const char *pass, int32_t changed)
{
	(void)user;
	printf("  pass %-24s %d change%s\n", pass, changed, changed == 1 ? "" : "s");
}

int cmd_compile(int argc, char **argv)
{
	cli_opts o;
	int rc = cli_parse("compile", argc, argv, OPT_OPS | OPT_SHAPE | OPT_NO_FOLD | OPT_OUT | OPT_LIBS,
			   &o);
	if (rc)
		return rc;
	gc_error err = { 0 };
	gc_registry *reg = NULL;
	gc_graph *g = NULL;
	gc_program *p = NULL;
	if (cli_registry(&o, &reg, &err) || gc_onnx_load(o.model, &g, &err))
		goto fail;
	gc_compile_options copt = cli_compile_options(&o, reg);
	copt.pass_report = pass_report;
	printf("passes:\n");
	if (o.no_optimize)
		printf("  (optimizations off: --no-optimize; lowerings such as Gradient still run)\n");
	if (gc_compile(g, &copt, &p, &err))
		goto fail;
	gc_program_stats st;
	gc_program_get_stats(p, &st);
	printf("compiled %s: %d nodes (%d in the model), arena %.3f MiB (all activations %.3f "
	       "MiB), constants %.3f MiB\n",
	       o.model, st.n_nodes, gc_graph_num_nodes(g), st.arena_bytes / 1048576.0,
	       st.tensor_bytes / 1048576.0, st.constant_bytes / 1048576.0);
	printf("custom nodes:\n");
	if (!cli_print_bindings(p, stdout))
		printf("  (none)\n");
	if (o.out) {
		if (gc_program_save(p, o.out, &err))
			goto fail;
		printf("wrote %s\n", o.out);
	}
	rc = EXIT_OK;
	goto out;
fail:
	cli_error("%s", err.msg);
	rc = cli_exit_for(err.code);
out:
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(reg);
	return rc;
}
