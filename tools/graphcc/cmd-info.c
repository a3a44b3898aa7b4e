/* graphcc info: what a model holds, what graphcc can run of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

typedef struct op_count {
	const char *domain, *op_type;
	int count;
} op_count;

static int by_count(const void *a, const void *b)
{
	const op_count *x = a, *y = b;
	if (x->count != y->count)
		return y->count - x->count;
	return strcmp(x->op_type, y->op_type);
}

static void print_tensor_line(const gc_graph *g, const char *name)
{
	gc_tensor t;
	char shp[160];
	gc_graph_tensor_info(g, name, &t);
	printf("  %-24s %-8s %s\n", name, gc_dtype_name(t.dtype),
	       t.rank < 0 ? "(unknown)" : gc_shape_str(t.dims, t.rank, shp, sizeof shp));
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void print_program_io(const gc_program *p)
{
	char shp[160];
	printf("inputs:\n");
	for (int i = 0; i < gc_program_num_inputs(p); i++) {
		const char *name;
		const gc_tensor *t = gc_program_input(p, i, &name);
		printf("  %-24s %-8s %s\n", name, gc_dtype_name(t->dtype),
		       gc_shape_str(t->dims, t->rank, shp, sizeof shp));
	}
	printf("outputs:\n");
	for (int i = 0; i < gc_program_num_outputs(p); i++) {
		const char *name;
		const gc_tensor *t = gc_program_output(p, i, &name);
		printf("  %-24s %-8s %s\n", name, gc_dtype_name(t->dtype),
		       gc_shape_str(t->dims, t->rank, shp, sizeof shp));
	}
}

static void print_memory(const gc_program *p)
{
	gc_program_stats st;
	gc_program_get_stats(p, &st);
	printf("memory: arena peak %.3f MiB, all activations %.3f MiB (%.0f%% reused), constants "
	       "%.3f MiB\n",
	       st.arena_bytes / 1048576.0, st.tensor_bytes / 1048576.0,
	       st.tensor_bytes ? 100.0 * (1.0 - (double)st.arena_bytes / (double)st.tensor_bytes)
			       : 0.0,
	       st.constant_bytes / 1048576.0);
}

/* graphcc info on a compiled program (runtime only). */
static int info_program(const cli_opts *o)
{
	gc_error err = { 0 };
	gc_program *p = NULL;
	/* inspecting runs no package code: no library is opened */
	gc_load_options lo = { .allow_changed_kernels = o->allow_changed, .inspect_only = 1,
				 .library_map = o->lib_map, .n_library_map = o->n_lib_map,
				 .log = cli_log };
	double t0 = now_ms();
	if (gc_program_load(o->model, &lo, &p, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_for(err.code);
	}
	double t1 = now_ms();
	gc_program_origin og;
	gc_program_get_origin(p, &og);
	printf("program: %s (.gcb format %u, written by graphcc %s), %.3f MiB, loaded in %.2f "
	       "ms with the weights mapped\n",
	       o->model, og.format_version, og.graphcc_version, og.file_bytes / 1048576.0,
	       t1 - t0);
	print_program_io(p);
	int nn = gc_program_num_nodes(p);
	printf("nodes: %d\n", nn);
	op_count *hist = calloc((size_t)nn + 1, sizeof *hist);
	int n_hist = 0;
	for (int i = 0; hist && i < nn; i++) {
		gc_node_desc d;
		gc_program_node(p, i, &d);
		int k = 0;
		while (k < n_hist && (strcmp(hist[k].op_type, d.op_type) ||
				      strcmp(hist[k].domain, d.domain)))
			k++;
		if (k == n_hist)
			hist[n_hist++] = (op_count){ d.domain, d.op_type, 0 };
		hist[k].count++;
	}
	if (hist)
		qsort(hist, (size_t)n_hist, sizeof *hist, by_count);
	for (int k = 0; k < n_hist; k++)
		printf("  %6d  %s%s%s\n", hist[k].count, hist[k].domain,
		       hist[k].domain[0] ? "::" : "", hist[k].op_type);
	free(hist);
	printf("custom nodes:\n");
	if (!cli_print_bindings(p, stdout))
		printf("  (none)\n");
	printf("kernel libraries (SHA-256 pinned; not loaded by info):\n");
	for (int i = 0; i < og.n_libraries; i++)
		printf("  %s  %s\n", og.library_sha256[i], og.library_paths[i]);
	if (!og.n_libraries)
		printf("  (none)\n");
	print_memory(p);
	gc_program_free(p);
	return EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
	cli_opts o;
	int rc = cli_parse("info", argc, argv, OPT_OPS | OPT_SHAPE | OPT_ALLOW_CHANGED | OPT_LIBS, &o);
	if (rc)
		return rc;
	if (cli_is_program(o.model))
		return (rc = cli_program_options("info", &o)) ? rc : info_program(&o);
	gc_error err = { 0 };
	gc_graph *g = NULL;
	gc_registry *reg = NULL;
	if (cli_registry(&o, &reg, &err) || gc_onnx_load(o.model, &g, &err)) {
		cli_error("%s", err.msg);
		gc_registry_free(reg);
		return cli_exit_for(err.code);
	}
	printf("model: %s\n", o.model);
	printf("inputs:\n");
	for (int i = 0; i < gc_graph_num_inputs(g); i++)
		print_tensor_line(g, gc_graph_input_name(g, i));
	printf("outputs:\n");
	for (int i = 0; i < gc_graph_num_outputs(g); i++)
		print_tensor_line(g, gc_graph_output_name(g, i));

	int nn = gc_graph_num_nodes(g);
	op_count *hist = calloc((size_t)nn + 1, sizeof *hist);
	int n_hist = 0, n_unsupported = 0;
	if (!hist) {
		gc_graph_free(g);
		gc_registry_free(reg);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	for (int i = 0; i < nn; i++) {
		const char *name, *domain, *op;
		gc_graph_node(g, i, &name, &domain, &op);
		int k = 0;
		while (k < n_hist && (strcmp(hist[k].op_type, op) || strcmp(hist[k].domain, domain)))
			k++;
		if (k == n_hist)
			hist[n_hist++] = (op_count){ domain, op, 0 };
		hist[k].count++;
	}
	qsort(hist, (size_t)n_hist, sizeof *hist, by_count);
	printf("nodes: %d\n", nn);
	for (int k = 0; k < n_hist; k++) {
		int64_t v = gc_graph_opset_version(g, hist[k].domain);
		const char *how = gc_op_is_builtin(hist[k].domain, hist[k].op_type) ? ""
				  : reg && gc_registry_provides(reg, hist[k].domain,
								hist[k].op_type, v)
					  ? "  (op package)"
					  : "  (unsupported)";
		printf("  %6d  %s%s%s%s\n", hist[k].count, hist[k].domain,
		       hist[k].domain[0] ? "::" : "", hist[k].op_type, how);
	}
	for (int i = 0; i < nn; i++) {
		const char *name, *domain, *op;
		gc_graph_node(g, i, &name, &domain, &op);
		int64_t v = gc_graph_opset_version(g, domain);
		if (gc_op_is_builtin(domain, op) ||
		    (domain[0] && reg && gc_registry_provides(reg, domain, op, v)))
			continue;
		if (!n_unsupported++)
			printf("unsupported nodes:\n");
		printf("  node '%s' (#%d): op '%s' in domain '%s'%s\n", name[0] ? name : "", i, op,
		       domain[0] ? domain : "ai.onnx",
		       domain[0] ? ": no op package provides it (--ops PKG.yaml)"
				 : ": no built-in op");
	}
	free(hist);
	rc = EXIT_OK;
	if (n_unsupported) {
		cli_error("%s: %d node%s cannot run (listed above)", o.model, n_unsupported,
			  n_unsupported == 1 ? "" : "s");
		rc = EXIT_FAIL;
	} else {
		gc_program *p = NULL;
		gc_compile_options copt = cli_compile_options(&o, reg);
		if (gc_compile(g, &copt, &p, &err)) {
			printf("compile: %s\n", err.msg);
			rc = cli_exit_for(err.code);
			if (strstr(err.msg, "dynamic dimension"))
				rc = EXIT_OK; /* not an error of the model: shapes come at run time */
		} else {
			gc_program_stats st;
			gc_program_get_stats(p, &st);
			printf("compiled: %d nodes after passes and folding, %d tensors\n",
			       st.n_nodes, st.n_tensors);
			print_memory(p);
			if (reg) {
				printf("custom nodes:\n");
				if (!cli_print_bindings(p, stdout))
					printf("  (none)\n");
			}
			printf("outputs after inference:\n");
			for (int i = 0; i < gc_program_num_outputs(p); i++) {
				const char *name;
				const gc_tensor *t = gc_program_output(p, i, &name);
				char shp[160];
				printf("  %-24s %-8s %s\n", name, gc_dtype_name(t->dtype),
				       gc_shape_str(t->dims, t->rank, shp, sizeof shp));
			}
			gc_program_free(p);
		}
	}
	gc_graph_free(g);
	gc_registry_free(reg);
	return rc;
}
