/* Manifests (lib/manifest.c): parsed into a package without opening any
 * library; every error names file:line:column and the key. Table-driven:
 * one manifest text per case, with what the parse must give. */
#include <graphcc/graphcc.h>

#include <unistd.h>

#include "check.h"
#include "package-impl.h"

#define GOOD_HEAD                                                              \
	"name: AddOne\n"                                                       \
	"type: AddOne\n"                                                       \
	"package: test.fixtures\n"                                             \
	"version: 2\n"                                                         \
	"inputs:\n"                                                            \
	"  - name: x\n"                                                        \
	"    maxDims: 4\n"                                                     \
	"outputs:\n"                                                           \
	"  - name: y\n"                                                        \
	"    maxDims: 4\n"
#define GOOD_PARAMS                                                            \
	"params:\n"                                                            \
	"  - name: delta\n"                                                    \
	"    datatype: float\n"                                                \
	"    default: 1.0\n"
#define GOOD_IMPLS                                                             \
	"functionsLibrary: lib/libaddone_fn.so\n"                              \
	"implementations:\n"                                                   \
	"  - backend: Interpreter\n"                                           \
	"    type: addOneFloat\n"                                              \
	"    impl: lib/libaddone_impl.so\n"

/* GOOD_HEAD with dtypes on x. */
#define QHEAD(list)                                                            \
	"name: AddOne\n"                                                       \
	"type: AddOne\n"                                                       \
	"package: test.fixtures\n"                                             \
	"version: 2\n"                                                         \
	"inputs:\n"                                                            \
	"  - name: x\n"                                                        \
	"    dtypes: " list "\n"                                               \
	"    maxDims: 4\n"                                                     \
	"outputs:\n"                                                           \
	"  - name: y\n"                                                        \
	"    maxDims: 4\n"

static const struct manifest_case {
	const char *name;
	const char *text;
	int code;		 /* 0: parses */
	const char *must[3];	 /* in the error (NULL: unused) */
} cases[] = {
	{ "good", GOOD_HEAD GOOD_PARAMS GOOD_IMPLS, 0, { NULL } },
	{ "glow aliases", GOOD_HEAD "parameters:\n  - name: delta\n    dataType: float\n"
			  "    default: 1.0\n" GOOD_IMPLS, 0, { NULL } },
	{ "unknown key", GOOD_HEAD GOOD_PARAMS GOOD_IMPLS "colour: red\n", GC_EINVAL,
	  { "m.yaml:20:1", "key 'colour'", "unknown key" } },
	{ "near miss", GOOD_HEAD GOOD_PARAMS GOOD_IMPLS "selectImp: sel\n", GC_EINVAL,
	  { "selectImp", "did you mean", "selectImpl" } },
	{ "bad datatype", GOOD_HEAD "params:\n  - name: delta\n    datatype: complex\n" GOOD_IMPLS,
	  GC_EINVAL, { "m.yaml:13", "datatype", "complex" } },
	{ "default of the wrong type", GOOD_HEAD "params:\n  - name: delta\n    datatype: int\n"
					 "    default: abc\n" GOOD_IMPLS, GC_EINVAL,
	  { "m.yaml:14", "default" } },
	{ "maxDims 99", "name: A\ntype: A\npackage: p\ninputs:\n  - name: x\n    maxDims: 99\n"
			  "outputs:\n  - name: y\n    maxDims: 4\n" GOOD_IMPLS, GC_EINVAL,
	  { "m.yaml:6", "maxDims" } },
	{ "missing type", "name: A\npackage: p\ninputs:\n  - name: x\n    maxDims: 4\n"
			  "outputs:\n  - name: y\n    maxDims: 4\n" GOOD_IMPLS, GC_EINVAL,
	  { "m.yaml", "type" } },
	{ "no implementations", GOOD_HEAD GOOD_PARAMS "functionsLibrary: lib/f.so\n", GC_EINVAL,
	  { "m.yaml", "implementations" } },
	{ "YAML syntax", "name: [unclosed\n", GC_EINVAL, { "m.yaml", "YAML" } },
	{ "quantized types", QHEAD("[float32, qint8, quint8]") GOOD_PARAMS GOOD_IMPLS, 0,
	  { NULL } },
	{ "quantized types only", QHEAD("[qint8, qint16, qint32]") GOOD_PARAMS GOOD_IMPLS, 0,
	  { NULL } },
	{ "quantized type misspelt", QHEAD("[float32, qint4]") GOOD_PARAMS GOOD_IMPLS, GC_EINVAL,
	  { "m.yaml:7", "'qint4' is not an element type", "quantized: qint8" } },
	{ "quantized type in accepts", GOOD_HEAD GOOD_PARAMS GOOD_IMPLS
	  "    accepts:\n      - {input: x, dtypes: [qint8]}\n", GC_EINVAL,
	  { "m.yaml:21", "'qint8' is a quantized type", "int8 for qint8" } },
};

/* What case `name` must parse into (the quantized ones): x's plain and
 * quantized dtype masks. */
static const struct {
	const char *name;
	uint32_t dtypes, qtypes;
} qwant[] = {
	{ "good", 0, 0 },
	{ "quantized types", 1u << GC_DTYPE_FLOAT, 1u << DTQInt8 | 1u << DTQUInt8 },
	{ "quantized types only", GC_IO_NO_PLAIN_DTYPES,
	  1u << DTQInt8 | 1u << DTQInt16 | 1u << DTQInt32 },
};

static char dir[64];

static void cleanup(void)
{
	char p[128];
	snprintf(p, sizeof p, "%s/m.yaml", dir);
	unlink(p);
	rmdir(dir);
}

static void test_manifest_cases(void)
{
	snprintf(dir, sizeof dir, "/tmp/graphcc-test-manifest-XXXXXX");
	CHECK(mkdtemp(dir));
	atexit(cleanup);
	char path[128];
	snprintf(path, sizeof path, "%s/m.yaml", dir);
	int failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct manifest_case *mc = &cases[i];
		FILE *f = fopen(path, "w");
		CHECK(f);
		fputs(mc->text, f);
		fclose(f);
		gc_package *pkg = NULL;
		gc_error err = { 0 };
		int rc = gc_manifest_parse(path, &pkg, NULL, NULL, &err);
		bool ok = rc == mc->code && (rc != 0) == (pkg == NULL);
		for (int k = 0; ok && k < 3 && mc->must[k]; k++)
			ok = strstr(err.msg, mc->must[k]) != NULL;
		if (!ok) {
			fprintf(stderr, "case '%s': rc %d (want %d), message: %s\n", mc->name, rc,
				mc->code, err.msg);
			failed++;
		}
		if (!rc && pkg) {
			/* what the good ones hold */
			const gc_op_spec *op = &pkg->ops[0];
			if (pkg->n_ops != 1 || strcmp(op->type, "AddOne") ||
			    strcmp(op->domain, "test.fixtures") || op->version != 2 ||
			    op->n_params != 1 || op->n_impls != 1 ||
			    strcmp(op->impls[0].type, "addOneFloat") ||
			    op->impls[0].impl[0] != '/' || /* made absolute */
			    strcmp(op->verify, "customOpVerify")) {
				fprintf(stderr, "case '%s': parsed into something else\n", mc->name);
				failed++;
			}
			for (size_t q = 0; q < sizeof qwant / sizeof qwant[0]; q++)
				if (!strcmp(qwant[q].name, mc->name) &&
				    (op->inputs[0].dtypes != qwant[q].dtypes ||
				     op->inputs[0].qtypes != qwant[q].qtypes)) {
					fprintf(stderr, "case '%s': x's dtypes %#x / %#x, want %#x / %#x\n",
						mc->name, op->inputs[0].dtypes, op->inputs[0].qtypes,
						qwant[q].dtypes, qwant[q].qtypes);
					failed++;
				}
		}
		gc_package_free(pkg);
	}
	CHECK_INT(failed, 0);
}

TEST_MAIN(TEST(test_manifest_cases))
