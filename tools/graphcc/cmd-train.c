/* graphcc train-program: an inference model becomes one training step
 * (forward, backward, optimizer update) whose params the session keeps
 * (gc_graph_make_training). Options of its own are taken out of argv
 * first; the rest are the common ones (--ops, -o, --allow-libraries). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Splits "a,b,c" in place into names (at most max). */
static int split_names(char *s, const char **names, int max)
{
	int n = 0;
	for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		if (*tok)
			names[n++] = tok;
	return n;
}

static int number(const char *opt, const char *v, float *out)
{
	char *end;
	double d = v ? strtod(v, &end) : 0;
	if (!v || !*v || *end)
		return cli_usage("train-program: %s takes a number", opt);
	*out = (float)d;
	return 0;
}

/* Takes the train-program options out of argv; the rest stay, in order. */
static int train_args(int *argc, char **argv, gc_train_options *t, char *params_buf, size_t len,
		      const char **params, int max)
{
	int w = 0;
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i], *v = i + 1 < *argc ? argv[i + 1] : NULL;
		int rc = 0;
		if (!strcmp(a, "--loss") && v) {
			t->loss = v;
		} else if (!strcmp(a, "--params") && v) {
			snprintf(params_buf, len, "%s", v);
			t->params = params;
			t->n_params = split_names(params_buf, params, max);
		} else if (!strcmp(a, "--optimizer") && v) {
			if (!strcmp(v, "sgd"))
				t->optimizer = GC_OPTIMIZER_SGD;
			else if (!strcmp(v, "adam"))
				t->optimizer = GC_OPTIMIZER_ADAM;
			else
				return cli_usage("train-program: --optimizer is sgd or adam, not '%s'", v);
		} else if (!strcmp(a, "--lr") && v) {
			rc = number(a, v, &t->learning_rate);
		} else if (!strcmp(a, "--momentum") && v) {
			rc = number(a, v, &t->momentum);
		} else if (!strcmp(a, "--beta1") && v) {
			rc = number(a, v, &t->beta1);
		} else if (!strcmp(a, "--beta2") && v) {
			rc = number(a, v, &t->beta2);
		} else if (!strcmp(a, "--eps") && v) {
			rc = number(a, v, &t->epsilon);
		} else if (!strcmp(a, "--weight-decay") && v) {
			rc = number(a, v, &t->weight_decay);
		} else if (!strcmp(a, "--nesterov")) {
			t->nesterov = 1;
			continue;
		} else {
			argv[w++] = argv[i];
			continue;
		}
		if (rc)
			return rc;
		i++; /* the option's value */
	}
	*argc = w;
	argv[w] = NULL;
	return 0;
}

int cmd_train_program(int argc, char **argv)
{
	gc_train_options t = { .size = sizeof t, .learning_rate = 0.01f };
	static char params_buf[8192];
	static const char *params[MAX_ARGS];
	int rc = train_args(&argc, argv, &t, params_buf, sizeof params_buf, params, MAX_ARGS);
	if (rc)
		return rc;
	cli_opts o;
	if ((rc = cli_parse("train-program", argc, argv, OPT_OPS | OPT_SHAPE | OPT_OUT | OPT_LIBS, &o)))
		return rc;
	if (!t.loss || !t.n_params || !o.out)
		return cli_usage("train-program needs --loss NAME, --params A,B,... and -o OUT.onnx|.gcb");
	gc_error err = { 0 };
	gc_registry *reg = NULL;
	gc_graph *g = NULL;
	gc_program *p = NULL;
	if (cli_registry(&o, &reg, &err) || gc_onnx_load(o.model, &g, &err) ||
	    gc_graph_make_training(g, &t, &err))
		goto fail;
	/* compiled either way: a training step that cannot be built is
	 * refused now, naming the node, not when it first runs */
	gc_compile_options copt = cli_compile_options(&o, reg);
	if (gc_compile(g, &copt, &p, &err))
		goto fail;
	size_t n = strlen(o.out);
	if (n > 4 && !strcmp(o.out + n - 4, ".gcb") ? gc_program_save(p, o.out, &err)
						     : gc_onnx_save(g, o.out, &err))
		goto fail;
	gc_program_stats st;
	gc_program_get_stats(p, &st);
	printf("wrote %s: one %s step over %d params of loss '%s' (%d nodes, arena %.3f MiB)\n",
	       o.out, t.optimizer == GC_OPTIMIZER_ADAM ? "Adam" : "SGD", t.n_params, t.loss,
	       st.n_nodes, st.arena_bytes / 1048576.0);
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
