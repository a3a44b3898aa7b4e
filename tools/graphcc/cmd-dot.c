/*
 * graphcc dot: the graph in Graphviz's language, for `dot -Tsvg`.
 *
 * A compiled program (.gcb) is drawn as it was compiled. When a model
 * (.onnx) compiles, the program is drawn: the nodes left after
 * folding, every tensor's inferred type and shape on its edge, each custom
 * node with its bound flavour, library and symbol. When it does not (an
 * operation nobody provides, a shape that does not fit, ...), the graph is
 * drawn as imported, with the nodes graphcc cannot run in red and the
 * compiler's message as the graph's title; the command still exits 0 (the
 * picture is what was asked for) and says so on stderr.
 *
 * How it looks: built-in nodes are rounded pale boxes "name\nOpType";
 * custom nodes are orange boxes with a double border, "name\ndomain::type\n
 * flavour F\nlibrary:symbol"; graph inputs are green "invhouse" shapes and
 * outputs blue "house" shapes; constants (weights, folded values) are not
 * drawn as nodes but listed small in the label of the node that reads
 * them. Edges carry the tensor's type and shape (its name as tooltip).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"


/* ---------------------------------------------------------------- output */

/* Writes s as the inside of a DOT double-quoted string: quotes and
 * backslashes escaped (a backslash would otherwise start an escape such as
 * \n or \N in labels), line breaks as \n, other control bytes as spaces. */
static void esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 32 || c == 127)
			fputc(' ', f);
		else
			fputc(c, f);
	}
}

/* "float32 1x3x224x224"; "?" for unknown dims and types. */
static void type_str(const gc_tensor *t, char *buf, size_t len)
{
	size_t at = 0;
	if (!t || t->rank < 0) {
		if (t && t->dtype)
			snprintf(buf, len, "%s ?", gc_dtype_name(t->dtype));
		else
			snprintf(buf, len, "?");
		return;
	}
	at += (size_t)snprintf(buf, len, "%s ", t->dtype ? gc_dtype_name(t->dtype) : "?");
	if (t->rank == 0 && at < len)
		snprintf(buf + at, len - at, "scalar");
	for (int i = 0; i < t->rank && at < len; i++) {
		if (t->dims[i] < 0)
			at += (size_t)snprintf(buf + at, len - at, "%s?", i ? "x" : "");
		else
			at += (size_t)snprintf(buf + at, len - at, "%s%lld", i ? "x" : "",
					       (long long)t->dims[i]);
	}
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* ---------------------------------------------------------------- tensor names */

/* name -> DOT id of what makes the tensor ("n3", "i0"), open addressing. */
typedef struct producers {
	const char **names;
	char (*ids)[24];
	size_t cap;
} producers;

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

static int producers_init(producers *m, size_t n)
{
	m->cap = 16;
	while (m->cap < 2 * n + 16)
		m->cap *= 2;
	m->names = calloc(m->cap, sizeof *m->names);
	m->ids = calloc(m->cap, sizeof *m->ids);
	return m->names && m->ids ? 0 : -1;
}

static void producers_free(producers *m)
{
	free(m->names);
	free(m->ids);
}

static void producers_put(producers *m, const char *name, const char *id)
{
	if (!name || !*name)
		return;
	size_t i = hash(name) & (m->cap - 1);
	while (m->names[i] && strcmp(m->names[i], name))
		i = (i + 1) & (m->cap - 1);
	if (m->names[i])
		return; /* the first producer wins (a duplicate is the importer's error) */
	m->names[i] = name;
	snprintf(m->ids[i], sizeof m->ids[i], "%s", id);
}

static const char *producers_get(const producers *m, const char *name)
{
	size_t i = hash(name) & (m->cap - 1);
	while (m->names[i]) {
		if (!strcmp(m->names[i], name))
			return m->ids[i];
		i = (i + 1) & (m->cap - 1);
	}
	return NULL;
}

/* ---------------------------------------------------------------- common pieces */

static void header(FILE *f, const char *model, const char *note)
{
	fputs("digraph \"", f);
	esc(f, base_name(model));
	fputs("\" {\n", f);
	fputs("  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=12, labelloc=t, "
	      "label=\"",
	      f);
	esc(f, base_name(model));
	if (note) {
		fputs("\\n", f);
		esc(f, note);
	}
	fprintf(f, "\"%s];\n", note ? ", fontcolor=\"#b00000\"" : "");
	fputs("  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=\"rounded,filled\", "
	      "fillcolor=\"#eef2f8\", color=\"#5a6b85\"];\n",
	      f);
	fputs("  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n", f);
}

static void io_node(FILE *f, const char *id, bool input, const char *name, const gc_tensor *t)
{
	char ty[200];
	type_str(t, ty, sizeof ty);
	fprintf(f, "  %s [shape=%s, style=filled, fillcolor=\"%s\", color=\"%s\", label=\"%s ", id,
		input ? "invhouse" : "house", input ? "#c9f0c9" : "#c9dcf7",
		input ? "#2e7d32" : "#1f4e9a", input ? "input" : "output");
	esc(f, name);
	fputs("\\n", f);
	esc(f, ty);
	fputs("\"];\n", f);
}

static void edge(FILE *f, const char *from, const char *to, const char *tensor,
		 const gc_tensor *t)
{
	char ty[200];
	type_str(t, ty, sizeof ty);
	fprintf(f, "  %s -> %s [label=\"", from, to);
	esc(f, ty);
	fputs("\", tooltip=\"", f);
	esc(f, tensor);
	fputs("\"];\n", f);
}

static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '&')
			fputs("&amp;", f);
		else if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\n')
			fputs("<br/>", f);
		else if (c < 32 || c == 127)
			fputc(' ', f);
		else
			fputc(c, f);
	}
}

/* A constant input of a node, as a small line of its (HTML-like) label. */
static void const_line(FILE *f, const char *name, const gc_tensor *t)
{
	char ty[200];
	type_str(t, ty, sizeof ty);
	fputs("<br/><font point-size=\"8\" color=\"#666666\">", f);
	html_text(f, name);
	fputs(": ", f);
	html_text(f, ty);
	fputs("</font>", f);
}

/* Label lines of a node: each line (plain text) in order, the first bold. */
static void node_open(FILE *f, const char *id, const char *attrs, const char *const *lines,
		      int n_lines)
{
	fprintf(f, "  %s [%s, label=<", id, attrs);
	for (int i = 0; i < n_lines; i++) {
		if (!lines[i])
			continue;
		if (i)
			fputs("<br/>", f);
		if (i == 0)
			fputs("<b>", f);
		html_text(f, lines[i][0] ? lines[i] : "(unnamed)");
		if (i == 0)
			fputs("</b>", f);
	}
}

static void node_close(FILE *f)
{
	fputs(">];\n", f);
}

#define ATTR_BUILTIN "shape=box, style=\"rounded,filled\", fillcolor=\"#eef2f8\""
#define ATTR_CUSTOM                                                                      \
	"shape=box, style=\"filled,bold\", peripheries=2, fillcolor=\"#ffd699\", "         \
	"color=\"#b35900\""
#define ATTR_UNSUPPORTED                                                                 \
	"shape=box, style=\"filled,bold\", fillcolor=\"#ffb3b3\", color=\"#d00000\", "     \
	"fontcolor=\"#900000\", penwidth=2"

/* ---------------------------------------------------------------- a compiled program */

static int draw_program(FILE *f, const char *model, const gc_program *p)
{
	producers m;
	int nn = gc_program_num_nodes(p), ni = gc_program_num_inputs(p),
	    no = gc_program_num_outputs(p);
	if (producers_init(&m, (size_t)nn * 4 + (size_t)ni))
		return -1;
	header(f, model, NULL);
	char id[24];
	for (int i = 0; i < ni; i++) {
		const char *name;
		const gc_tensor *t = gc_program_input(p, i, &name);
		snprintf(id, sizeof id, "i%d", i);
		io_node(f, id, true, name, t);
		producers_put(&m, name, id);
	}
	for (int i = 0; i < nn; i++) {
		snprintf(id, sizeof id, "n%d", i);
		gc_node_desc d;
		gc_program_node(p, i, &d);
		for (int k = 0; k < d.n_outputs; k++) {
			const char *name;
			if (gc_program_node_tensor(p, i, 1, k, &name))
				producers_put(&m, name, id);
		}
	}
	for (int i = 0; i < nn; i++) {
		gc_node_desc d;
		gc_program_node(p, i, &d);
		snprintf(id, sizeof id, "n%d", i);
		char optype[300], flav[300], lib[600];
		snprintf(optype, sizeof optype, "%s%s%s", d.domain, d.domain[0] ? "::" : "",
			 d.op_type);
		if (d.flavour) {
			snprintf(flav, sizeof flav, "flavour %s", d.flavour);
			snprintf(lib, sizeof lib, "%s : %s", base_name(d.library), d.symbol);
			const char *lines[] = { d.name, optype, flav, lib };
			node_open(f, id, ATTR_CUSTOM ", tooltip=\"custom node\"", lines, 4);
		} else {
			const char *lines[] = { d.name, optype };
			node_open(f, id, ATTR_BUILTIN, lines, 2);
		}
		for (int k = 0; k < d.n_inputs; k++) {
			const char *tn;
			const gc_tensor *t = gc_program_node_tensor(p, i, 0, k, &tn);
			if (t && t->data && !producers_get(&m, tn))
				const_line(f, tn, t);
		}
		node_close(f);
	}
	for (int i = 0; i < nn; i++) {
		gc_node_desc d;
		gc_program_node(p, i, &d);
		snprintf(id, sizeof id, "n%d", i);
		for (int k = 0; k < d.n_inputs; k++) {
			const char *tn;
			const gc_tensor *t = gc_program_node_tensor(p, i, 0, k, &tn);
			const char *from = t ? producers_get(&m, tn) : NULL;
			if (from)
				edge(f, from, id, tn, t);
		}
	}
	for (int i = 0; i < no; i++) {
		const char *name;
		const gc_tensor *t = gc_program_output(p, i, &name);
		snprintf(id, sizeof id, "o%d", i);
		io_node(f, id, false, name, t);
		const char *from = producers_get(&m, name);
		if (from)
			edge(f, from, id, name, t);
	}
	fputs("}\n", f);
	producers_free(&m);
	return 0;
}

/* ---------------------------------------------------------------- the graph as imported */

static int draw_graph(FILE *f, const char *model, const gc_graph *g, const gc_registry *reg,
		      const char *why, int *n_unsupported)
{
	producers m;
	int nn = gc_graph_num_nodes(g), ni = gc_graph_num_inputs(g), no = gc_graph_num_outputs(g);
	*n_unsupported = 0;
	if (producers_init(&m, (size_t)nn * 4 + (size_t)ni))
		return -1;
	char note[700];
	snprintf(note, sizeof note, "does not compile: %.600s", why);
	header(f, model, note);
	char id[24];
	for (int i = 0; i < ni; i++) {
		const char *name = gc_graph_input_name(g, i);
		if (gc_graph_input_has_default(g, i))
			continue; /* an initializer: drawn as a constant */
		gc_tensor t;
		gc_graph_tensor_info(g, name, &t);
		snprintf(id, sizeof id, "i%d", i);
		io_node(f, id, true, name, &t);
		producers_put(&m, name, id);
	}
	for (int i = 0; i < nn; i++) {
		snprintf(id, sizeof id, "n%d", i);
		const char *name;
		for (int k = 0; (name = gc_graph_node_io(g, i, 1, k, NULL)); k++)
			producers_put(&m, name, id);
	}
	int n_missing = 0;
	for (int i = 0; i < nn; i++) {
		const char *name, *domain, *op;
		gc_graph_node(g, i, &name, &domain, &op);
		snprintf(id, sizeof id, "n%d", i);
		char optype[300];
		snprintf(optype, sizeof optype, "%s%s%s", domain, domain[0] ? "::" : "", op);
		bool builtin = gc_op_is_builtin(domain, op);
		bool package = !builtin && domain[0] && reg &&
			       gc_registry_provides(reg, domain, op, gc_graph_opset_version(g, domain));
		if (builtin) {
			const char *lines[] = { name, optype };
			node_open(f, id, ATTR_BUILTIN, lines, 2);
		} else if (package) {
			const char *lines[] = { name, optype, "op package (not bound: see title)" };
			node_open(f, id, ATTR_CUSTOM, lines, 3);
		} else {
			(*n_unsupported)++;
			const char *lines[] = { name, optype,
						domain[0] ? "UNSUPPORTED: no op package provides it"
							  : "UNSUPPORTED: no built-in op" };
			node_open(f, id, ATTR_UNSUPPORTED ", tooltip=\"unsupported\"", lines, 3);
		}
		const char *tn;
		int is_const;
		for (int k = 0; (tn = gc_graph_node_io(g, i, 0, k, &is_const)); k++) {
			if (!is_const || !*tn)
				continue;
			gc_tensor t;
			gc_graph_tensor_info(g, tn, &t);
			const_line(f, tn, &t);
		}
		node_close(f);
	}
	for (int i = 0; i < nn; i++) {
		snprintf(id, sizeof id, "n%d", i);
		const char *tn;
		int is_const;
		for (int k = 0; (tn = gc_graph_node_io(g, i, 0, k, &is_const)); k++) {
			if (is_const || !*tn)
				continue;
			gc_tensor t;
			gc_graph_tensor_info(g, tn, &t);
			const char *from = producers_get(&m, tn);
			char mid[24];
			if (!from) { /* a tensor nothing makes: show it */
				snprintf(mid, sizeof mid, "m%d", n_missing++);
				fprintf(f, "  %s [shape=plaintext, style=\"\", fontcolor=\"#d00000\", "
					   "label=\"missing: ",
					mid);
				esc(f, tn);
				fputs("\"];\n", f);
				from = mid;
			}
			edge(f, from, id, tn, &t);
		}
	}
	for (int i = 0; i < no; i++) {
		const char *name = gc_graph_output_name(g, i);
		gc_tensor t;
		gc_graph_tensor_info(g, name, &t);
		snprintf(id, sizeof id, "o%d", i);
		io_node(f, id, false, name, &t);
		const char *from = producers_get(&m, name);
		if (from)
			edge(f, from, id, name, &t);
	}
	fputs("}\n", f);
	producers_free(&m);
	return 0;
}

int cmd_dot(int argc, char **argv)
{
	cli_opts o;
	int rc = cli_parse("dot", argc, argv, OPT_OPS | OPT_SHAPE | OPT_ALLOW_CHANGED | OPT_LIBS, &o);
	if (rc)
		return rc;
	gc_error err = { 0 };
	gc_registry *reg = NULL;
	gc_graph *g = NULL;
	gc_program *p = NULL;
	if (cli_is_program(o.model)) {
		/* A compiled program: drawn as it was compiled. */
		if ((rc = cli_program_options("dot", &o)))
			return rc;
		/* drawing runs no package code: no library is opened */
		gc_load_options lo = { .allow_changed_kernels = o.allow_changed, .inspect_only = 1,
				 .library_map = o.lib_map, .n_library_map = o.n_lib_map,
				       .log = cli_log };
		if (gc_program_load(o.model, &lo, &p, &err)) {
			cli_error("%s", err.msg);
			return cli_exit_for(err.code);
		}
		rc = draw_program(stdout, o.model, p) ? EXIT_FAIL : EXIT_OK;
		if (rc)
			cli_error("out of memory");
		else if (fflush(stdout) || ferror(stdout)) {
			cli_error("writing the graph to standard output failed");
			rc = EXIT_FAIL;
		}
		gc_program_free(p);
		return rc;
	}
	if (cli_registry(&o, &reg, &err) || gc_onnx_load(o.model, &g, &err)) {
		cli_error("%s", err.msg);
		rc = cli_exit_for(err.code);
		goto out;
	}
	gc_compile_options copt = cli_compile_options(&o, reg);
	if (!gc_compile(g, &copt, &p, &err)) {
		if (draw_program(stdout, o.model, p))
			goto oom;
	} else {
		int n_unsupported = 0;
		if (draw_graph(stdout, o.model, g, reg, err.msg, &n_unsupported))
			goto oom;
		fprintf(stderr,
			"graphcc: note: %s does not compile (%s); drawn as imported%s\n", o.model,
			err.msg, n_unsupported ? ", the nodes graphcc cannot run in red" : "");
	}
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("writing the graph to standard output failed");
		rc = EXIT_FAIL;
		goto out;
	}
	rc = EXIT_OK;
	goto out;
oom:
	cli_error("out of memory");
	rc = EXIT_FAIL;
out:
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(reg);
	return rc;
}
