/*
 * graphcc new-package DIR --op NAME [--domain D] [--interface seed|graphcc]
 *
 * Writes a complete op package to start from: a manifest with self-tests,
 * the functions library (verify, shape inference, selection), one kernel,
 * a Makefile (pkg-config when graphcc is installed, else the source tree
 * this graphcc was built from), a one-node ONNX model using the operation
 * (written through the builder API and gc_onnx_save) and an input for it.
 * It builds and passes `graphcc test-package` as written. The operation it
 * starts with is elementwise: y = alpha * x (float32, any rank up to 4).
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

/* Writes text to DIR/name with every @KEY@ replaced. */
static int write_file(const char *dir, const char *name, const char *text, const subst *s,
		      int n)
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
	if (fclose(f)) {
		cli_error("%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static const char manifest_text[] =
	"# Op package @PKG@, made by `graphcc new-package`.\n"
	"#   make                        builds lib/*.so next to this file\n"
	"#   graphcc check @PKG@.yaml\n"
	"#   graphcc test-package @PKG@.yaml\n"
	"#   graphcc run model.onnx --ops @PKG@.yaml --input x=x.npy --output-dir out\n"
	"# Every key is documented in graphcc's config/manifest-reference.yaml.\n"
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
	"params:\n"
	"  - name: alpha\n"
	"    datatype: float\n"
	"    default: 1.0\n"
	"functionsLibrary: lib/lib@PKG@_functions.so\n"
	"@FNSYMS@"
	"implementations:\n"
	"  - backend: Interpreter\n"
	"    type: @FLAV@\n"
	"    impl: lib/lib@PKG@_kernels.so\n"
	"    symbol: @SNAKE@_f32\n"
	"tests:\n"
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

static const char fnsyms_graphcc[] = "verify: @SNAKE@_verify\n"
				     "inferShape: @SNAKE@_infer_shape\n"
				     "selectImpl: @SNAKE@_select\n";

static const char functions_graphcc[] =
	"/*\n"
	" * @OP@: verify, shape inference and implementation selection (the\n"
	" * functions library). graphcc calls them once per node, at compile time.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
	"GC_CUSTOMOP_EXPORT_ABI();\n"
	"\n"
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
	"\tfor (int32_t i = 0; i < numParams; i++)\n"
	"\t\tif (!strcmp(params[i].name, \"alpha\") && params[i].size != 0) {\n"
	"\t\t\tctx->set_error(ctx, \"param alpha must be one float\");\n"
	"\t\t\treturn GC_STATUS_FAIL;\n"
	"\t\t}\n"
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
	" * @OP@ kernels (the implementation library). A kernel runs once per\n"
	" * execution of the node; it must not allocate, keep pointers, or write\n"
	" * anywhere but its outputs, and may be called from several threads at once.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
	"GC_CUSTOMOP_EXPORT_ABI();\n"
	"\n"
	"/* y = alpha * x, float32, any shape (verify checked the types). */\n"
	"GC_CUSTOMOP_API GcStatus @SNAKE@_f32(GcOpContext *ctx, const CustomOpIOTensor *inputs,\n"
	"\t\t\t       int32_t numInputs, CustomOpIOTensor *outputs, int32_t numOutputs,\n"
	"\t\t\t       const CustomOpParam *params, int32_t numParams)\n"
	"{\n"
	"\tfloat alpha = 1.0f;\n"
	"\tfor (int32_t i = 0; i < numParams; i++)\n"
	"\t\tif (!strcmp(params[i].name, \"alpha\"))\n"
	"\t\t\talpha = *(const float *)params[i].data;\n"
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
	" * @OP@: verify, shape inference and implementation selection (the\n"
	" * functions library), written to the seed interface (Glow's external\n"
	" * custom operations): default symbol names, bool results.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
	"GC_CUSTOMOP_API bool customOpVerify(CustomOpIOTensor *inputs, int32_t numInputs,\n"
	"\t\t\t\t    CustomOpIOTensor *outputs, int32_t numOutputs,\n"
	"\t\t\t\t    CustomOpParam *params, int32_t numParams)\n"
	"{\n"
	"\t(void)outputs;\n"
	"\tif (numInputs != 1 || numOutputs != 1 || inputs[0].dtype != DTFloat32)\n"
	"\t\treturn false;\n"
	"\tfor (int32_t i = 0; i < numParams; i++)\n"
	"\t\tif (!strcmp(params[i].name, \"alpha\") && params[i].size != 0)\n"
	"\t\t\treturn false;\n"
	"\treturn true;\n"
	"}\n"
	"\n"
	"GC_CUSTOMOP_API bool customOpInferShape(CustomOpIOTensor *outputs, const int32_t numOutputs,\n"
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
	"GC_CUSTOMOP_API const char *customOpSelectImpl(CustomOpIOTensor *inputs, int32_t numInputs,\n"
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
	" * @OP@ kernels, seed interface: void, no context. A kernel must not\n"
	" * allocate, keep pointers, or write anywhere but its outputs, and may be\n"
	" * called from several threads at once.\n"
	" */\n"
	"#include <graphcc/customop.h>\n"
	"\n"
	"#include <string.h>\n"
	"\n"
	"/* y = alpha * x, float32, any shape (verify checked the types). */\n"
	"GC_CUSTOMOP_API void @SNAKE@_f32(CustomOpIOTensor *inputs, int32_t numInputs,\n"
	"\t\t\t   CustomOpIOTensor *outputs, int32_t numOutputs, CustomOpParam *params,\n"
	"\t\t\t   int32_t numParams)\n"
	"{\n"
	"\tfloat alpha = 1.0f;\n"
	"\t(void)numInputs;\n"
	"\t(void)numOutputs;\n"
	"\tfor (int32_t i = 0; i < numParams; i++)\n"
	"\t\tif (!strcmp(params[i].name, \"alpha\"))\n"
	"\t\t\talpha = *(const float *)params[i].data;\n"
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
	".PHONY: all clean\n"
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
	"clean:\n"
	"\trm -rf $(OUT)/lib\n";

static const char readme_text[] =
	"# @PKG@: an op package for graphcc\n"
	"\n"
	"Operation `@DOMAIN@::@OP@` (@IFACE@ interface), as `graphcc new-package` wrote it:\n"
	"`y = alpha * x` on float32 tensors of rank up to 4. Change `kernels.c` (and the\n"
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
	"| `kernels.c` | the kernel (run time) |\n"
	"| `model.onnx`, `x.npy` | a one-node model using the operation, and an input |\n";

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

static int write_model(const char *dir, const char *op, const char *domain)
{
	gc_error err = { 0 };
	gc_graph *g = gc_graph_new("model.onnx");
	const int64_t dims[4] = { 1, 2, 2, 3 };
	const char *dn[4] = { "N", NULL, NULL, NULL };
	const char *in[1] = { "x" }, *out[1] = { "y" };
	gc_attr alpha = { .name = "alpha", .type = GC_ATTR_FLOAT, .v.f = 2.0f };
	char path[PATH_MAX];
	int rc = !g || gc_graph_set_opset(g, "", 17, &err) || gc_graph_set_opset(g, domain, 1, &err) ||
		 gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, dims, dn, &err) ||
		 gc_graph_add_node(g, op, domain, op, 1, in, 1, out, 1, &alpha, &err) ||
		 gc_graph_add_output(g, "y", &err) ||
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
	const char *dir = NULL, *op = NULL, *domain = NULL, *iface = "graphcc";
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--op") || !strcmp(a, "--domain") || !strcmp(a, "--interface")) {
			if (i + 1 >= argc)
				return cli_usage("new-package: %s needs a value", a);
			const char *v = argv[++i];
			if (a[2] == 'o')
				op = v;
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
	if (!dir || !op)
		return cli_usage("new-package: usage: graphcc new-package DIR --op NAME [--domain D] "
				 "[--interface seed|graphcc]");
	if (!valid_ident(op))
		return cli_usage("new-package: --op '%s': an operation name is letters, digits and _ "
				 "(a C identifier, as ONNX op types are)",
				 op);
	if (strcmp(iface, "graphcc") && strcmp(iface, "seed"))
		return cli_usage("new-package: --interface '%s': give seed or graphcc", iface);
	/* The package's name: the folder's last component, as an identifier. */
	char pkg[128], snake[256], flav[160], dom[256], inc[PATH_MAX];
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
	k = 0;
	for (const char *p = op; *p && k + 2 < sizeof snake; p++) {
		if (isupper((unsigned char)*p) && p != op && !isupper((unsigned char)p[-1]))
			snake[k++] = '_';
		snake[k++] = (char)tolower((unsigned char)*p);
	}
	snake[k] = 0;
	snprintf(flav, sizeof flav, "%c%sF32", tolower((unsigned char)op[0]), op + 1);
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
	const subst s[] = {
		{ "OP", op },	  { "PKG", pkg },     { "DOMAIN", domain }, { "SNAKE", snake },
		{ "FLAV", flav }, { "SRCINC", inc }, { "IFACE", iface },
		{ "FNSYMS", seed ? "" : fnsyms_graphcc },
	};
	/* FNSYMS itself holds @SNAKE@: expand it first. */
	char fnsyms[512] = "";
	if (!seed) {
		char tmp[PATH_MAX];
		snprintf(tmp, sizeof tmp, "%s/.fnsyms", dir);
		if (write_file(dir, ".fnsyms", fnsyms_graphcc, s, 7))
			return EXIT_FAIL;
		FILE *f = fopen(tmp, "r");
		size_t n = f ? fread(fnsyms, 1, sizeof fnsyms - 1, f) : 0;
		fnsyms[n] = 0;
		if (f)
			fclose(f);
		remove(tmp);
	}
	subst s2[8];
	memcpy(s2, s, sizeof s2);
	s2[7].value = fnsyms;
	char yaml[160];
	snprintf(yaml, sizeof yaml, "%s.yaml", pkg);
	if (write_file(dir, yaml, manifest_text, s2, 8) ||
	    write_file(dir, "functions.c", seed ? functions_seed : functions_graphcc, s2, 8) ||
	    write_file(dir, "kernels.c", seed ? kernels_seed : kernels_graphcc, s2, 8) ||
	    write_file(dir, "Makefile", makefile_text, s2, 8) ||
	    write_file(dir, "README.md", readme_text, s2, 8) || write_model(dir, op, domain))
		return EXIT_FAIL;
	printf("wrote %s/: %s (operation %s::%s, %s interface), functions.c, kernels.c, Makefile, "
	       "README.md, model.onnx, x.npy\n",
	       dir, yaml, domain, op, iface);
	printf("next:\n  make -C %s\n  graphcc test-package %s/%s\n"
	       "  graphcc run %s/model.onnx --ops %s/%s --input x=%s/x.npy --output-dir out\n",
	       dir, dir, yaml, dir, dir, yaml, dir);
	return EXIT_OK;
}
