/* graphcc: the command line. */
#include <graphcc/debug.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../../runtime/alloc.h" /* fault injection: not in the public API */

static const char usage_text[] =
	"usage: graphcc COMMAND [ARGS]\n"
	"\n"
	"commands:\n"
	"  compile MODEL.onnx [--ops PKG.yaml]... [--shape NAME=DxD]... [--dynamic] [-o OUT.gcb]\n"
	"      check and bind every node; show each custom node's kernel; save\n"
	"  run MODEL.onnx [--ops PKG.yaml]... [--input NAME=FILE]... [--output-dir DIR]\n"
	"                 [--shape NAME=DxD]... [--threads N] [--repeat N] [--seed N]\n"
	"                 [--trace] [--dump-dir DIR] [--check-nan] [--guard] [--check-tensors]\n"
	"                 [--no-arena] [--dump-weights] [--profile F.json]\n"
	"                 [--break-before NODE] [--timeout SECONDS] [--compare-flavours [--tolerance T]]\n"
	"                 [--allow-changed-kernels] [--allow-libraries DIR]... [--no-libraries]\n"
	"                 [--map-library FROM=TO]...\n"
	"      run a model (.onnx, or a compiled .gcb) on .npy or .pb inputs;\n"
	"      writes DIR/<output>.npy\n"
	"  info MODEL.onnx [--ops PKG.yaml]... [--shape NAME=DxD]...\n"
	"      inputs, outputs, op histogram, unsupported nodes, bindings, memory plan\n"
	"  dot MODEL.onnx|MODEL.gcb [--ops PKG.yaml]... [--shape NAME=DxD]...\n"
	"      the graph in Graphviz (dot -Tsvg); custom nodes with their flavour\n"
	"  check PKG.yaml [--dry-run] [--allow-libraries DIR]...\n"
	"      validate an op package: manifest, libraries, symbols, ABI version\n"
	"      (--dry-run: read the libraries as files, load none, run no package code)\n"
	"  test-package PKG.yaml [--op NAME]\n"
	"      run the manifest's self-tests on every implementation\n"
	"  gradcheck PKG.yaml [--op NAME] [--tolerance T]\n"
	"      each declared gradient: analytic (the backward operation) against central\n"
	"      finite differences, worst relative error per input; exit 1 above T\n"
	"  train-program MODEL.onnx [--ops PKG.yaml]... --loss NAME --params A,B,...\n"
	"                [--optimizer sgd|adam] [--lr R] [--momentum M] [--nesterov]\n"
	"                [--beta1 B] [--beta2 B] [--eps E] [--weight-decay W] -o OUT.onnx|.gcb\n"
	"      one training step (forward, backward, update) taking a batch and\n"
	"      returning the loss; the session keeps the params from run to run\n"
	"  new-package DIR --op NAME [--domain D] [--interface seed|graphcc]\n"
	"      write a complete op package to start from\n"
	"  ops            the built-in operations and what graphcc declines (TSV)\n"
	"  help           this text\n"
	"  version        the graphcc version\n"
	"\n"
	"GRAPHCC_OPS_PATH: colon-separated manifests or folders of manifests, loaded\n"
	"  like --ops by compile, run and info.\n"
	"--allow-libraries DIR (compile, run, info, dot, check; repeatable) and\n"
	"  GRAPHCC_LIBRARY_PATH (colon-separated folders): no library outside these\n"
	"  folders is loaded. --no-libraries: load no library at all.\n"
	"--map-library FROM=TO (run, info, dot on a .gcb; repeatable): a pinned library\n"
	"  recorded as FROM or under the folder FROM is looked for under TO (a package\n"
	"  installed elsewhere); its SHA-256 must still match.\n"
	"info and dot on a .gcb never load its libraries. docs/security.md: what\n"
	"  graphcc trusts and what it guarantees.\n"
	"--backend NAME (compile, run, info, dot): the backend custom nodes are bound\n"
	"  for and the program runs on (default and only one in this build: Interpreter).\n"
	"\n"
	"exit status: 0 ok, 1 bad model/input or failed kernel, 2 usage error,\n"
	"             3 a kernel crashed or misbehaved\n";

static int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fputs(usage_text, stdout);
	return EXIT_OK;
}

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("graphcc %s\n", GC_VERSION_STRING);
	return EXIT_OK;
}

/* The commands, each with the name(s) it answers to. */
static const struct {
	const char *name, *alias, *alias2;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "run", NULL, NULL, cmd_run },
	{ "info", NULL, NULL, cmd_info },
	{ "compile", NULL, NULL, cmd_compile },
	{ "dot", NULL, NULL, cmd_dot },
	{ "check", NULL, NULL, cmd_check },
	{ "test-package", NULL, NULL, cmd_test_package },
	{ "gradcheck", NULL, NULL, cmd_gradcheck },
	{ "train-program", NULL, NULL, cmd_train_program },
	{ "new-package", NULL, NULL, cmd_new_package },
	{ "ops", NULL, NULL, cmd_ops },
	{ "help", "--help", "-h", cmd_help },
	{ "version", "--version", NULL, cmd_version },
};

/* The library reads no environment and changes nothing of the process by
 * itself: the command does both for it, here. */
static int init_from_environment(void)
{
	gc_error err = { 0 };
	gc_init_options io = { .blas_coretype = 1, .from_environment = 1, .amx = 1 };
	if (gc_runtime_init(&io, &err)) {
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
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(cmd, commands[i].name) ||
		    (commands[i].alias && !strcmp(cmd, commands[i].alias)) ||
		    (commands[i].alias2 && !strcmp(cmd, commands[i].alias2)))
			return commands[i].run(argc - 2, argv + 2);
	return cli_usage("unknown command '%s'", cmd);
}
