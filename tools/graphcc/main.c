/* graphcc: the command line. */
#include <graphcc/debug.h>

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../../runtime/alloc.h" /* fault injection: not in the public API */

static const char usage_text[] =
	"usage: graphcc COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  compile MODEL.onnx [--ops PKG.yaml]... [--shape NAME=DxD]... [-o OUT.gcb]\n"
	"      check and bind every node; show each custom node's kernel; save\n"
	"  run MODEL.onnx [--ops PKG.yaml]... [--input NAME=FILE]... [--output-dir DIR]\n"
	"                 [--shape NAME=DxD]... [--threads N] [--repeat N]\n"
	"                 [--trace] [--dump-dir DIR] [--check-nan] [--guard] [--profile F.json]\n"
	"                 [--break-before NODE] [--timeout SECONDS] [--compare-flavours]\n"
	"                 [--allow-changed-kernels]\n"
	"      run a model (.onnx, or a compiled .gcb) on .npy or .pb inputs;\n"
	"      writes DIR/<output>.npy\n"
	"  info MODEL.onnx [--ops PKG.yaml]... [--shape NAME=DxD]...\n"
	"      inputs, outputs, op histogram, unsupported nodes, bindings, memory plan\n"
	"  dot MODEL.onnx|MODEL.gcb [--ops PKG.yaml]... [--shape NAME=DxD]...\n"
	"      the graph in Graphviz (dot -Tsvg); custom nodes with their flavour\n"
	"  check PKG.yaml\n"
	"      validate an op package: manifest, libraries, symbols, ABI version\n"
	"  test-package PKG.yaml [--op NAME]\n"
	"      run the manifest's self-tests on every implementation\n"
	"  new-package DIR --op NAME [--domain D] [--interface seed|graphcc]\n"
	"      write a complete op package to start from\n"
	"  help           this text\n"
	"  version        the graphcc version\n"
	"\n"
	"GRAPHCC_OPS_PATH: colon-separated manifests or folders of manifests, loaded\n"
	"  like --ops by compile, run and info.\n"
	"\n"
	"exit status: 0 ok, 1 bad model/input or failed kernel, 2 usage error,\n"
	"             3 a kernel crashed or misbehaved\n";

void cli_error(const char *fmt, ...)
{
	va_list ap;
	fputs("graphcc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("graphcc: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(run 'graphcc help' for usage)\n", stderr);
	return EXIT_USAGE;
}

int cli_exit_for(int code)
{
	return code == GC_ECRASH ? EXIT_CRASH : code ? EXIT_FAIL : EXIT_OK;
}

/* The library reads no environment and changes nothing of the process by
 * itself: the command does both for it, here. */
static int init_from_environment(void)
{
	gc_error err = { 0 };
	gc_init_options io = { .blas_coretype = 1, .from_environment = 1 };
	if (gc_init(&io, &err)) {
		cli_error("%s", err.msg);
		return EXIT_USAGE;
	}
	/* fault injection, for tests/oom (counts from the first allocation) */
	const char *fail = getenv("GRAPHCC_FAIL_ALLOC");
	if (fail && atoll(fail) > 0)
		gc_alloc_set_fail_after(atoll(fail));
	gc_alloc_set_trace(getenv("GRAPHCC_FAIL_ALLOC_TRACE") != NULL);
	/* A crashing kernel is named (node, operation, flavour, library,
	 * symbol, input shapes), exit status 3, nothing written. */
	const char *capture = getenv("GRAPHCC_CRASH_CAPTURE");
	if (!capture || strcmp(capture, "0"))
		gc_crash_capture_install();
	return 0;
}

int main(int argc, char **argv)
{
	int rc = init_from_environment();
	if (rc)
		return rc;
	if (argc < 2)
		return cli_usage("no command given");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(cmd, "info"))
		return cmd_info(argc - 2, argv + 2);
	if (!strcmp(cmd, "compile"))
		return cmd_compile(argc - 2, argv + 2);
	if (!strcmp(cmd, "dot"))
		return cmd_dot(argc - 2, argv + 2);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 2, argv + 2);
	if (!strcmp(cmd, "test-package"))
		return cmd_test_package(argc - 2, argv + 2);
	if (!strcmp(cmd, "new-package"))
		return cmd_new_package(argc - 2, argv + 2);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("graphcc %s\n", GC_VERSION_STRING);
		return EXIT_OK;
	}
	return cli_usage("unknown command '%s'", cmd);
}
