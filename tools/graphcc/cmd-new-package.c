/*
 * graphcc new-package DIR --op NAME [--op NAME]... [--domain D]
 *                         [--interface seed|graphcc]
 *
 * Writes a complete op package to start from, one operation per --op: a
 * manifest with self-tests, the functions library (verify, shape
 * inference, selection), one kernel per operation, a Makefile (pkg-config
 * when graphcc is installed, else the source tree this graphcc was built
 * from), an ONNX model chaining the operations (written through the
 * builder API and gc_onnx_save) and an input for it. It builds and passes
 * `graphcc test-package` as written. Each operation starts as elementwise:
 * y = alpha * x (float32, any rank up to 4).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

typedef struct subst {
	const char *key, *value;
} subst;

/* OP, PKG, DOMAIN, SNAKE, FLAV, SRCINC, IFACE, OPS, DOCS, TUTORIAL */
#define N_SUBST 10
#define MAX_OPS 16

/* Writes text to f with every @KEY@ replaced. */
static void expand(FILE *f, const char *text, const subst *s, int n)
{
	for (const char *p = text; *p;) {
		bool done = false;
		if (*p == '@')
			for (int i = 0; i < n; i++) {
				size_t kl = strlen(s[i].key);
				if (!strncmp(p + 1, s[i].key, kl) && p[1 + kl] == '@') {
					fputs(s[i].value, f);
					p += kl + 2;
					done = true;
					break;
				}
			}
		if (!done)
			fputc(*p++, f);
	}
}

/* Writes DIR/name: head, then per_op (may be NULL) once per operation,
 * each with its own substitutions s[i] (n each). */
static int write_file(const char *dir, const char *name, const char *head, const char *per_op,
		      subst (*s)[N_SUBST], int n_ops)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	/* a new file in the folder just made: never through a symlink */
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		cli_error("%s: cannot create: %s", path, strerror(errno));
		return -1;
	}
	expand(f, head, s[0], N_SUBST);
	for (int i = 0; per_op && i < n_ops; i++) {
		if (i)
			fputc('\n', f);
		expand(f, per_op, s[i], N_SUBST);
	}
	if (fclose(f)) {
		cli_error("%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static const char manifest_head[] =
	"# yaml-language-server: $schema=@DOCS@/manifest.schema.json\n"
	"# Op package @PKG@, made by `graphcc new-package`: @OPS@.\n"
	"#   make                        builds lib/*.so next to this file\n"
	"#   graphcc check @PKG@.yaml\n"
	"#   graphcc test-package @PKG@.yaml\n"
	"#   graphcc run model.onnx --ops @PKG@.yaml --input x=x.npy --output-dir out\n"
	"# One YAML document per operation. Every key is documented in\n"
	"# @DOCS@/manifest-reference.yaml; the tutorial is\n"
	"# @TUTORIAL@.\n";

static const char manifest_op[] =
	"---\n"
	"name: @OP@\n"
	"type: @OP@                       # the ONNX op_type\n"
	"package: @DOMAIN@                # the ONNX domain of the node\n"
	"version: 1\n"
	"pure: true                       # same inputs, same outputs: may be folded\n"
	"inputs:\n"
	"  - name: x\n"
	"    maxDims: 4\n"
	"    dtypes: [float32]\n"
	"outputs:\n"
	"  - name: y\n"
	"    maxDims: 4\n"
	"    dtypes: [float32]\n"
	"params:\n"
	"  - name: alpha\n"
	"    datatype: float\n"
	"    default: 1.0\n"
	"functionsLibrary: lib/lib@PKG@_functions.so\n"
	"verify: @SNAKE@_verify\n"
	"inferShape: @SNAKE@_infer_shape\n"
	"selectImpl: @SNAKE@_select\n"
	"implementations:\n"
	"  - backend: Interpreter\n"
	"    type: @FLAV@\n"
	"    impl: lib/lib@PKG@_kernels.so\n"
	"    symbol: @SNAKE@_f32\n"
	"tests:                           # run by graphcc test-package, ignored by run\n"
	"  - name: default alpha\n"
	"    inputs:\n"
	"      - {shape: [2, 3], dtype: float32, values: [-2, -1, 0, 0.5, 1, 3]}\n"
	"    outputs:\n"
	"      - {shape: [2, 3], dtype: float32, values: [-2, -1, 0, 0.5, 1, 3]}\n"
	"    tolerance: 1e-6\n"
	"  - name: alpha 2, rank 4\n"
	"    inputs:\n"
	"      - {shape: [1, 2, 1, 2], dtype: float32, values: [1, -1, 0.25, 4]}\n"
	"    params: {alpha: 2.0}\n"
	"    outputs:\n"
	"      - {shape: [1, 2, 1, 2], dtype: float32, values: [2, -2, 0.5, 8]}\n"
	"    tolerance: 1e-6\n";

static const char functions_graphcc[] =
	"/*\n"
	" * @OPS@: verify, shape inference and implementation selection (the\n"
	" * functions library). graphcc calls them once per node, at compile time.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
	"GC_CUSTOMOP_EXPORT_ABI();\n"
	"\n"
;

static const char functions_graphcc_op[] =
	"/* Rejects a node graphcc must not run, saying why. */\n"
	"GC_CUSTOMOP_API GcStatus @SNAKE@_verify(GcOpContext *ctx, const CustomOpIOTensor *inputs,\n"
	"\t\t\t\t  int32_t numInputs, const CustomOpIOTensor *outputs,\n"
	"\t\t\t\t  int32_t numOutputs, const CustomOpParam *params, int32_t numParams)\n"
	"{\n"
	"\t(void)outputs;\n"
	"\tif (numInputs != 1 || numOutputs != 1) {\n"
	"\t\tctx->set_error(ctx, \"expects 1 input and 1 output, got %d and %d\", (int)numInputs,\n"
	"\t\t\t       (int)numOutputs);\n"
	"\t\treturn GC_STATUS_FAIL;\n"
	"\t}\n"
	"\tif (inputs[0].dtype != DTFloat32) {\n"
	"\t\tctx->set_error(ctx, \"input x must be float32 (dtype %d given)\",\n"
	"\t\t\t       (int)inputs[0].dtype);\n"
	"\t\treturn GC_STATUS_FAIL;\n"
	"\t}\n"
	"\t/* alpha: graphcc checked its type against the manifest already. */\n"
	"\t(void)params;\n"
	"\t(void)numParams;\n"
	"\treturn GC_STATUS_OK;\n"
	"}\n"
	"\n"
	"/* y has x's shape and type. */\n"
	"GC_CUSTOMOP_API GcStatus @SNAKE@_infer_shape(GcOpContext *ctx, CustomOpIOTensor *outputs,\n"
	"\t\t\t\t       int32_t numOutputs, const CustomOpIOTensor *inputs,\n"
	"\t\t\t\t       int32_t numInputs, const CustomOpParam *params,\n"
	"\t\t\t\t       int32_t numParams)\n"
	"{\n"
	"\t(void)params;\n"
	"\t(void)numParams;\n"
	"\tif (numInputs != 1 || numOutputs != 1 || inputs[0].rank > outputs[0].maxDims) {\n"
	"\t\tctx->set_error(ctx, \"expects one input of rank <= %d\", (int)outputs[0].maxDims);\n"
	"\t\treturn GC_STATUS_FAIL;\n"
	"\t}\n"
	"\toutputs[0].rank = inputs[0].rank;\n"
	"\tfor (int32_t d = 0; d < inputs[0].rank; d++)\n"
	"\t\toutputs[0].dims[d] = inputs[0].dims[d];\n"
	"\toutputs[0].dtype = inputs[0].dtype;\n"
	"\treturn GC_STATUS_OK;\n"
	"}\n"
	"\n"
	"/* The flavour (implementation `type:` in the manifest) for this node. */\n"
	"GC_CUSTOMOP_API GcStatus @SNAKE@_select(GcOpContext *ctx, const CustomOpIOTensor *inputs,\n"
	"\t\t\t\t  int32_t numInputs, const CustomOpIOTensor *outputs,\n"
	"\t\t\t\t  int32_t numOutputs, const CustomOpParam *params, int32_t numParams,\n"
	"\t\t\t\t  const char **flavour)\n"
	"{\n"
	"\t(void)numInputs;\n"
	"\t(void)outputs;\n"
	"\t(void)numOutputs;\n"
	"\t(void)params;\n"
	"\t(void)numParams;\n"
	"\tif (strcmp(ctx->backend, \"Interpreter\") || inputs[0].dtype != DTFloat32)\n"
	"\t\treturn GC_STATUS_FAIL;\n"
	"\t*flavour = \"@FLAV@\";\n"
	"\treturn GC_STATUS_OK;\n"
	"}\n";

static const char kernels_graphcc[] =
	"/*\n"
	" * @OPS@ kernels (the implementation library). A kernel runs once per\n"
	" * execution of the node; it must not allocate, keep pointers, or write\n"
	" * anywhere but its outputs, and may be called from several threads at once.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
	"GC_CUSTOMOP_EXPORT_ABI();\n"
	"\n"
;

static const char kernels_graphcc_op[] =
	"/* y = alpha * x, float32, any shape (verify checked the types). */\n"
	"GC_CUSTOMOP_API GcStatus @SNAKE@_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,\n"
	"\t\t\t       int32_t numInputs, CustomOpIOTensor *outputs, int32_t numOutputs,\n"
	"\t\t\t       const CustomOpParam *params, int32_t numParams)\n"
	"{\n"
	"\t/* Params by position, in the manifest's order, types checked by graphcc\n"
	"\t * when the model was compiled: no lookup per call. */\n"
	"\tfloat alpha = gcParamFloat(params, 0);\n"
	"\t(void)numParams;\n"
	"\tif (numInputs != 1 || numOutputs != 1) {\n"
	"\t\tctx->set_error(ctx, \"expects 1 input and 1 output\");\n"
	"\t\treturn GC_STATUS_FAIL;\n"
	"\t}\n"
	"\tconst float *x = inputs[0].data;\n"
	"\tfloat *y = outputs[0].data;\n"
	"\tfor (int64_t i = 0; i < outputs[0].numel; i++)\n"
	"\t\ty[i] = alpha * x[i];\n"
	"\treturn GC_STATUS_OK;\n"
	"}\n";

static const char functions_seed[] =
	"/*\n"
	" * @OPS@: verify, shape inference and implementation selection (the\n"
	" * functions library), written to the seed interface (Glow's external\n"
	" * custom operations): bool results, symbol names the manifest gives.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
;

static const char functions_seed_op[] =
	"GC_CUSTOMOP_API bool @SNAKE@_verify(CustomOpIOTensor *inputs, int32_t numInputs,\n"
	"\t\t\t\t    CustomOpIOTensor *outputs, int32_t numOutputs,\n"
	"\t\t\t\t    CustomOpParam *params, int32_t numParams)\n"
	"{\n"
	"\t(void)outputs;\n"
	"\t(void)params;\n"
	"\t(void)numParams;\n"
	"\treturn numInputs == 1 && numOutputs == 1 && inputs[0].dtype == DTFloat32;\n"
	"}\n"
	"\n"
	"GC_CUSTOMOP_API bool @SNAKE@_infer_shape(CustomOpIOTensor *outputs, const int32_t numOutputs,\n"
	"\t\t\t\t\tconst CustomOpIOTensor *inputs, const int32_t numInputs,\n"
	"\t\t\t\t\tconst CustomOpParam *params, const int32_t numParams)\n"
	"{\n"
	"\t(void)params;\n"
	"\t(void)numParams;\n"
	"\tif (numInputs != 1 || numOutputs != 1 || inputs[0].rank > outputs[0].maxDims)\n"
	"\t\treturn false;\n"
	"\toutputs[0].rank = inputs[0].rank;\n"
	"\tfor (int32_t d = 0; d < inputs[0].rank; d++)\n"
	"\t\toutputs[0].dims[d] = inputs[0].dims[d];\n"
	"\toutputs[0].dtype = inputs[0].dtype;\n"
	"\treturn true;\n"
	"}\n"
	"\n"
	"GC_CUSTOMOP_API const char *@SNAKE@_select(CustomOpIOTensor *inputs, int32_t numInputs,\n"
	"\t\t\t\t\t       CustomOpIOTensor *outputs, int32_t numOutputs,\n"
	"\t\t\t\t\t       CustomOpParam *params, int32_t numParams,\n"
	"\t\t\t\t\t       const char *backend)\n"
	"{\n"
	"\t(void)numInputs;\n"
	"\t(void)outputs;\n"
	"\t(void)numOutputs;\n"
	"\t(void)params;\n"
	"\t(void)numParams;\n"
	"\tif (strcmp(backend, \"Interpreter\") || inputs[0].dtype != DTFloat32)\n"
	"\t\treturn NULL;\n"
	"\treturn \"@FLAV@\";\n"
	"}\n";

static const char kernels_seed[] =
	"/*\n"
	" * @OPS@ kernels, seed interface: void, no context. A kernel must not\n"
	" * allocate, keep pointers, or write anywhere but its outputs, and may be\n"
	" * called from several threads at once.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
;

static const char kernels_seed_op[] =
	"/* y = alpha * x, float32, any shape (verify checked the types). */\n"
	"GC_CUSTOMOP_API void @SNAKE@_f32(CustomOpIOTensor *inputs, int32_t numInputs,\n"
	"\t\t\t   CustomOpIOTensor *outputs, int32_t numOutputs, CustomOpParam *params,\n"
	"\t\t\t   int32_t numParams)\n"
	"{\n"
	"\t/* Params by position, in the manifest's order (graphcc checked types). */\n"
	"\tfloat alpha = gcParamFloat(params, 0);\n"
	"\t(void)numInputs;\n"
	"\t(void)numOutputs;\n"
	"\t(void)numParams;\n"
	"\tconst float *x = inputs[0].data;\n"
	"\tfloat *y = outputs[0].data;\n"
	"\tfor (int64_t i = 0; i < outputs[0].numel; i++)\n"
	"\t\ty[i] = alpha * x[i];\n"
	"}\n";

static const char makefile_text[] =
	"# Builds the @PKG@ op package: lib/*.so next to @PKG@.yaml.\n"
	"#   make                      against an installed graphcc (pkg-config graphcc),\n"
	"#                             else the graphcc source tree it was made from\n"
	"#   make GRAPHCC_INCLUDE=DIR  against DIR/graphcc/customop.h\n"
	"#   make OUT=DIR              also copies the manifest: DIR/@PKG@.yaml, DIR/lib/\n"
	"#   make compile_commands.json  for clangd / clang-tidy (clang -MJ, else bear)\n"
	"OUT ?= .\n"
	"SAN ?=\n"
	"ifdef GRAPHCC_INCLUDE\n"
	"GRAPHCC_CFLAGS := -I$(GRAPHCC_INCLUDE)\n"
	"else\n"
	"GRAPHCC_CFLAGS := $(shell pkg-config --cflags graphcc 2>/dev/null || echo "
	"-I@SRCINC@)\n"
	"endif\n"
	"CFLAGS := -std=c99 -Wall -Wextra -Wpedantic -Werror -O2 -g -fPIC -shared "
	"-fvisibility=hidden \\\n"
	"\t$(GRAPHCC_CFLAGS)\n"
	"ifeq ($(SAN),1)\n"
	"CFLAGS += -fsanitize=address,undefined\n"
	"endif\n"
	"\n"
	".PHONY: all clean compile_commands.json\n"
	"all: $(OUT)/lib/lib@PKG@_functions.so $(OUT)/lib/lib@PKG@_kernels.so\n"
	"ifneq ($(abspath $(OUT)),$(abspath .))\n"
	"all: $(OUT)/@PKG@.yaml\n"
	"$(OUT)/@PKG@.yaml: @PKG@.yaml\n"
	"\t@mkdir -p $(dir $@)\n"
	"\tcp $< $@\n"
	"endif\n"
	"\n"
	"$(OUT)/lib/lib@PKG@_functions.so: functions.c\n"
	"\t@mkdir -p $(dir $@)\n"
	"\t$(CC) $(CFLAGS) -o $@ functions.c\n"
	"\n"
	"$(OUT)/lib/lib@PKG@_kernels.so: kernels.c\n"
	"\t@mkdir -p $(dir $@)\n"
	"\t$(CC) $(CFLAGS) -o $@ kernels.c -lm\n"
	"\n"
	"# The compilation database for clangd, clang-tidy and editors: clang's\n"
	"# -MJ when clang is installed, else bear.\n"
	"compile_commands.json: functions.c kernels.c Makefile\n"
	"\t@if command -v clang >/dev/null 2>&1; then \\\n"
	"\t\trm -f .cdb-*.json; \\\n"
	"\t\tfor f in functions.c kernels.c; do \\\n"
	"\t\t\tclang $(CFLAGS) -Wno-unused-command-line-argument -c -o /dev/null \\\n"
	"\t\t\t\t-MJ .cdb-$$f.json $$f || exit 1; \\\n"
	"\t\tdone; \\\n"
	"\t\t(echo '['; cat .cdb-*.json | sed '$$ s/,$$//'; echo ']') > $@; rm -f .cdb-*.json; \\\n"
	"\telif command -v bear >/dev/null 2>&1; then \\\n"
	"\t\tbear --output $@ -- $(MAKE) -B all; \\\n"
	"\telse \\\n"
	"\t\techo 'compile_commands.json needs clang or bear' >&2; exit 1; \\\n"
	"\tfi\n"
	"\n"
	"clean:\n"
	"\trm -rf $(OUT)/lib compile_commands.json\n";

static const char readme_text[] =
	"# @PKG@: an op package for graphcc\n"
	"\n"
	"Operations @OPS@ in domain `@DOMAIN@` (@IFACE@ interface), as `graphcc new-package`\n"
	"wrote them: each `y = alpha * x` on float32 tensors of rank up to 4. Change `kernels.c` (and the\n"
	"expected values under `tests:` in `@PKG@.yaml`) to make it yours.\n"
	"\n"
	"    make                                   # lib/*.so\n"
	"    graphcc check @PKG@.yaml               # manifest, libraries, symbols\n"
	"    graphcc test-package @PKG@.yaml        # the self-tests, on every flavour\n"
	"    graphcc run model.onnx --ops @PKG@.yaml --input x=x.npy --output-dir out\n"
	"\n"
	"| file | what |\n"
	"|---|---|\n"
	"| `@PKG@.yaml` | the manifest: inputs, outputs, params, libraries, flavours, self-tests |\n"
	"| `functions.c` | verify, shape inference, selection (compile time) |\n"
	"| `kernels.c` | the kernels (run time) |\n"
	"| `model.onnx`, `x.npy` | a model using every operation (in a chain), and an input |\n";

static bool valid_ident(const char *s)
{
	if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return strlen(s) < 100;
}

static bool valid_domain(const char *s)
{
	if (!*s || strlen(s) > 200 || !strcmp(s, "ai.onnx"))
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			return false;
	return true;
}

/* Where the headers are when graphcc is not installed: next to the bin/
 * folder this graphcc runs from (build/bin -> the source tree's include/,
 * PREFIX/bin -> PREFIX/include). */
static bool source_include(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	snprintf(buf, len, "/usr/local/include");
	if (n <= 0)
		return false;
	exe[n] = 0;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = 0;
	}
	const char *cands[] = { "/../include", "/include" };
	for (int i = 0; i < 2; i++) {
		char p[PATH_MAX + 64], real[PATH_MAX];
		snprintf(p, sizeof p, "%s%s/graphcc/customop.h", exe, cands[i]);
		if (access(p, R_OK) == 0) {
			snprintf(p, sizeof p, "%s%s", exe, cands[i]);
			if (realpath(p, real))
				snprintf(buf, len, "%s", real);
			return true;
		}
	}
	return false;
}

/* "RMSNorm" -> "rms_norm", "TopKMask" -> "top_k_mask": a word starts at an
 * upper-case letter after a lower-case one or a digit, or at the last
 * upper-case letter of a run followed by a lower-case one. */
static void snake_case(const char *op, char *out, size_t len)
{
	size_t k = 0;
	for (const char *p = op; *p && k + 2 < len; p++) {
		bool up = isupper((unsigned char)*p);
		if (up && p != op &&
		    (!isupper((unsigned char)p[-1]) || islower((unsigned char)p[1])) && p[-1] != '_')
			out[k++] = '_';
		out[k++] = (char)tolower((unsigned char)*p);
	}
	out[k] = 0;
}

/* "RMSNorm" -> "rmsNormF32", "TopKMask" -> "topKMaskF32": the leading
 * capitals in lower case (but the last of a run that starts a word). */
static void flavour_name(const char *op, char *out, size_t len)
{
	size_t k = 0;
	const char *p = op;
	for (; *p && isupper((unsigned char)*p) && k + 1 < len; p++) {
		if (p != op && islower((unsigned char)p[1]))
			break;
		out[k++] = (char)tolower((unsigned char)*p);
	}
	for (; *p && k + 1 < len; p++)
		out[k++] = *p;
	out[k] = 0;
	snprintf(out + k, len - k, "F32");
}

/* A model chaining the operations: x -> ops[0] -> ... -> y, each with
 * alpha 2 (so y = 2^n x), and an input for it. */
/* Where the manifest reference and the tutorial are, from the headers'
 * folder: the source tree's config/ and docs/, else (installed) the
 * prefix's share/doc/graphcc/. */
static void doc_paths(const char *inc, char *docs, size_t dl, char *tut, size_t tl)
{
	char root[PATH_MAX - 64], p[PATH_MAX];
	snprintf(root, sizeof root, "%.*s", (int)sizeof root - 1, inc);
	char *slash = strrchr(root, '/');
	if (slash && !strcmp(slash, "/include"))
		*slash = 0;
	snprintf(p, sizeof p, "%s/config/manifest-reference.yaml", root);
	if (access(p, R_OK) == 0) {
		snprintf(docs, dl, "%s/config", root);
		snprintf(tut, tl, "%s/docs/writing-op-packages.md", root);
	} else {
		snprintf(docs, dl, "%s/share/doc/graphcc", root);
		snprintf(tut, tl, "%s/share/doc/graphcc/writing-op-packages.md", root);
	}
}

static int write_model(const char *dir, const char *const *ops, int n_ops, const char *domain)
{
	gc_error err = { 0 };
	gc_graph *g = gc_graph_new("model.onnx");
	const int64_t dims[4] = { 1, 2, 2, 3 };
	const char *dn[4] = { "N", NULL, NULL, NULL };
	gc_attr alpha = { .name = "alpha", .type = GC_ATTR_FLOAT, .v.f = 2.0f };
	char path[PATH_MAX], names[MAX_OPS + 1][16];
	int rc = !g || gc_graph_set_opset(g, "", 17, &err) || gc_graph_set_opset(g, domain, 1, &err) ||
		 gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, dims, dn, &err);
	snprintf(names[0], sizeof names[0], "x");
	for (int i = 0; !rc && i < n_ops; i++) {
		snprintf(names[i + 1], sizeof names[0], i + 1 == n_ops ? "y" : "t%d", i + 1);
		const char *in[1] = { names[i] }, *out[1] = { names[i + 1] };
		rc = gc_graph_add_node(g, ops[i], domain, ops[i], 1, in, 1, out, 1, &alpha, &err);
	}
	rc = rc || gc_graph_add_output(g, "y", &err) ||
	     gc_graph_set_value_info(g, "y", GC_DTYPE_FLOAT, 4, dims, &err);
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (!rc)
		rc = gc_onnx_save(g, path, &err);
	gc_graph_free(g);
	float xs[12];
	for (int i = 0; i < 12; i++)
		xs[i] = (float)(i - 6) / 4;
	gc_tensor x = { .data = xs, .dims = { 1, 2, 2, 3 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	snprintf(path, sizeof path, "%s/x.npy", dir);
	if (!rc)
		rc = gc_npy_write(path, &x, &err);
	if (rc)
		cli_error("%s", err.msg[0] ? err.msg : "out of memory");
	return rc ? -1 : 0;
}

int cmd_new_package(int argc, char **argv)
{
	const char *dir = NULL, *ops[MAX_OPS], *domain = NULL, *iface = "graphcc";
	int n_ops = 0;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--op") || !strcmp(a, "--domain") || !strcmp(a, "--interface")) {
			if (i + 1 >= argc)
				return cli_usage("new-package: %s needs a value", a);
			const char *v = argv[++i];
			if (a[2] == 'o' && n_ops == MAX_OPS)
				return cli_usage("new-package: at most %d --op", MAX_OPS);
			if (a[2] == 'o')
				ops[n_ops++] = v;
			else if (a[2] == 'd')
				domain = v;
			else
				iface = v;
		} else if (a[0] == '-' && a[1]) {
			return cli_usage("new-package: unknown option '%s'", a);
		} else if (dir) {
			return cli_usage("new-package: one folder at a time ('%s' and '%s')", dir, a);
		} else {
			dir = a;
		}
	}
	if (!dir || !n_ops)
		return cli_usage("new-package: usage: graphcc new-package DIR --op NAME [--op NAME]... "
				 "[--domain D] [--interface seed|graphcc]");
	for (int i = 0; i < n_ops; i++) {
		if (!valid_ident(ops[i]))
			return cli_usage("new-package: --op '%s': an operation name is letters, digits "
					 "and _ (a C identifier, as ONNX op types are)",
					 ops[i]);
		for (int j = 0; j < i; j++)
			if (!strcmp(ops[i], ops[j]))
				return cli_usage("new-package: --op '%s' is given twice", ops[i]);
	}
	if (strcmp(iface, "graphcc") && strcmp(iface, "seed"))
		return cli_usage("new-package: --interface '%s': give seed or graphcc", iface);
	/* The package's name: the folder's last component, as an identifier. */
	char pkg[128], dom[256], inc[PATH_MAX];
	const char *base = strrchr(dir, '/');
	base = base && base[1] ? base + 1 : dir;
	size_t k = 0;
	for (const char *p = base; *p && *p != '/' && k + 1 < sizeof pkg; p++)
		pkg[k++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
	pkg[k] = 0;
	if (!k || !isalpha((unsigned char)pkg[0]))
		return cli_usage("new-package: '%s': name the folder with a letter first (it names "
				 "the package and its libraries)",
				 dir);
	if (!domain) {
		snprintf(dom, sizeof dom, "com.example.%s", pkg);
		domain = dom;
	}
	if (!valid_domain(domain))
		return cli_usage("new-package: --domain '%s': a domain is letters, digits, '.', '_' "
				 "and '-', and not ONNX's own 'ai.onnx'",
				 domain);
	/* Two operations whose C names would collide (FooBar, Foo_bar). */
	char snake[MAX_OPS][256], flav[MAX_OPS][160], list[MAX_OPS * 110] = "";
	for (int i = 0; i < n_ops; i++) {
		snake_case(ops[i], snake[i], sizeof snake[i]);
		flavour_name(ops[i], flav[i], sizeof flav[i]);
		for (int j = 0; j < i; j++)
			if (!strcmp(snake[i], snake[j]))
				return cli_usage("new-package: --op '%s' and --op '%s' would both be "
						 "named %s in C",
						 ops[j], ops[i], snake[i]);
		size_t at = strlen(list);
		snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", ops[i]);
	}
	struct stat sb;
	if (stat(dir, &sb) == 0 || errno != ENOENT) {
		cli_error("new-package: %s already exists; not overwriting it (choose a new folder)",
			  dir);
		return EXIT_FAIL;
	}
	if (mkdir(dir, 0777)) {
		cli_error("new-package: cannot create %s: %s", dir, strerror(errno));
		return EXIT_FAIL;
	}
	if (!source_include(inc, sizeof inc))
		fprintf(stderr,
			"graphcc: note: no graphcc headers next to this graphcc command; the Makefile "
			"uses `pkg-config --cflags graphcc` (after make install), else give "
			"make GRAPHCC_INCLUDE=/path/to/graphcc/include\n");
	bool seed = !strcmp(iface, "seed");
	char docs[PATH_MAX], tut[PATH_MAX];
	doc_paths(inc, docs, sizeof docs, tut, sizeof tut);
	subst s[MAX_OPS][N_SUBST];
	for (int i = 0; i < n_ops; i++) {
		const subst si[N_SUBST] = {
			{ "OP", ops[i] },	{ "PKG", pkg },	   { "DOMAIN", domain },
			{ "SNAKE", snake[i] }, { "FLAV", flav[i] }, { "SRCINC", inc },
			{ "IFACE", iface },	{ "OPS", list },	   { "DOCS", docs },
			{ "TUTORIAL", tut },
		};
		memcpy(s[i], si, sizeof si);
	}
	char yaml[160];
	snprintf(yaml, sizeof yaml, "%s.yaml", pkg);
	if (write_file(dir, yaml, manifest_head, manifest_op, s, n_ops) ||
	    write_file(dir, "functions.c", seed ? functions_seed : functions_graphcc,
		       seed ? functions_seed_op : functions_graphcc_op, s, n_ops) ||
	    write_file(dir, "kernels.c", seed ? kernels_seed : kernels_graphcc,
		       seed ? kernels_seed_op : kernels_graphcc_op, s, n_ops) ||
	    write_file(dir, "Makefile", makefile_text, NULL, s, n_ops) ||
	    write_file(dir, "README.md", readme_text, NULL, s, n_ops) ||
	    write_model(dir, ops, n_ops, domain))
		return EXIT_FAIL;
	printf("wrote %s/: %s (operation%s %s in %s, %s interface), functions.c, kernels.c, "
	       "Makefile, README.md, model.onnx, x.npy\n",
	       dir, yaml, n_ops > 1 ? "s" : "", list, domain, iface);
	printf("next:\n  make -C %s\n  graphcc test-package %s/%s\n"
	       "  graphcc run %s/model.onnx --ops %s/%s --input x=%s/x.npy --output-dir out\n",
	       dir, dir, yaml, dir, dir, yaml, dir);
	return EXIT_OK;
}
