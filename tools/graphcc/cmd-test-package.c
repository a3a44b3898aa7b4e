/*
 * graphcc test-package PKG.yaml [--op NAME] [--seed N] [--model M.onnx]: the manifest's
 * self-tests, twice. First, in a fresh process, in an order the seed fixes
 * (printed; default 1); then here, in the manifest's order. A case that
 * passes in one order and fails in the other depends on which cases ran
 * before it -- state a kernel keeps between calls (a static table built
 * from the first caller's param), or scratch read before written -- and is
 * reported as a failure, with what the shuffled run said about it.
 * With --model, the cases are the model's custom nodes instead (their
 * shapes, dtypes and params; gc_selftest_options.model), once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define DEFAULT_SEED 1

/* The outcome of each case of one pass, by label. */
typedef struct outcomes {
	char **label;
	int *passed;
	int n, cap;
} outcomes;

static void record(void *user, const char *label, int passed)
{
	outcomes *o = user;
	if (o->n == o->cap) {
		int cap = o->cap ? 2 * o->cap : 32;
		char **l = realloc(o->label, (size_t)cap * sizeof *l);
		int *p = l ? realloc(o->passed, (size_t)cap * sizeof *p) : NULL;
		if (l)
			o->label = l;
		if (!p)
			return;
		o->passed = p;
		o->cap = cap;
	}
	if ((o->label[o->n] = strdup(label)))
		o->passed[o->n++] = passed;
}

static void outcomes_free(outcomes *o)
{
	for (int i = 0; i < o->n; i++)
		free(o->label[i]);
	free(o->label);
	free(o->passed);
}

/* The shuffled pass in a child process: its report into out, its outcomes
 * into res ("P label" / "F label" lines). */
static int shuffled_pass(const char *manifest, const char *op, unsigned long long seed, FILE *out,
			 FILE *res)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		outcomes o = { 0 };
		gc_selftest_options so = { .only_op = op, .shuffle_seed = seed, .on_case = record,
					   .user = &o };
		gc_selftest_counts c;
		gc_error err = { 0 };
		if (gc_selftest_run(manifest, &so, out, &c, &err))
			fprintf(out, "%s\n", err.msg);
		for (int i = 0; i < o.n; i++)
			fprintf(res, "%c %s\n", o.passed[i] ? 'P' : 'F', o.label[i]);
		fflush(out);
		fflush(res);
		_exit(0);
	}
	return cli_wait(pid);
}

/* What the shuffled pass printed about one case (its FAIL lines). */
static void shuffled_lines(FILE *out, const char *label)
{
	char line[4096];
	rewind(out);
	while (fgets(line, sizeof line, out))
		if (!strncmp(line, "FAIL  ", 6) && strstr(line, label))
			printf("      shuffled: %s", line);
}

/* Cases whose outcome differs between the passes; returns how many. */
static int compare_orders(const outcomes *here, FILE *res, FILE *out, unsigned long long seed,
			  int status)
{
	if (status != 0) {
		printf("FAIL  order: the shuffled pass (seed %llu) did not finish (exit %d): a "
		       "case crashed or ended the process there but not in the manifest's order\n",
		       seed, status);
		return 1;
	}
	char line[4096];
	int differ = 0, n = 0;
	rewind(res);
	while (fgets(line, sizeof line, res)) {
		line[strcspn(line, "\n")] = 0;
		if (strlen(line) < 3)
			continue;
		n++;
		const char *label = line + 2;
		for (int i = 0; i < here->n; i++) {
			if (strcmp(here->label[i], label) || !here->passed[i] == (line[0] == 'F'))
				continue;
			printf("FAIL  order: %s %s in the manifest's order but %s in a shuffled one "
			       "(seed %llu): its result depends on which cases ran before it (state "
			       "kept between calls, such as a static table built from the first "
			       "caller's param, or scratch read before written)\n",
			       label, here->passed[i] ? "passes" : "fails",
			       here->passed[i] ? "fails" : "passes", seed);
			shuffled_lines(out, label);
			differ++;
		}
	}
	if (!differ)
		printf("PASS  order: the %d cases give the same results in a fresh process in a "
		       "shuffled order (seed %llu; --seed N for another)\n",
		       n, seed);
	return differ;
}

/* --model: one case per custom node of the model the package serves. */
static int model_cases(const char *manifest, const char *op, const char *model,
		       unsigned long long seed)
{
	gc_selftest_options so = { .only_op = op, .model = model, .shuffle_seed = seed };
	gc_error err = { 0 };
	gc_selftest_counts c;
	if (gc_selftest_run(manifest, &so, stdout, &c, &err)) {
		cli_error("%s", err.msg);
		printf("%d passed, %d failed\n", c.passed, c.failed + 1);
		return EXIT_FAIL;
	}
	printf("%d passed, %d failed\n", c.passed, c.failed);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}

int cmd_test_package(int argc, char **argv)
{
	const char *manifest = NULL, *op = NULL, *model = NULL;
	unsigned long long seed = DEFAULT_SEED;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--op")) {
			if (i + 1 >= argc)
				return cli_usage("test-package: --op needs an operation name");
			op = argv[++i];
		} else if (!strcmp(argv[i], "--model")) {
			if (i + 1 >= argc)
				return cli_usage("test-package: --model needs an ONNX model");
			model = argv[++i];
		} else if (!strcmp(argv[i], "--seed")) {
			char *end = NULL;
			if (i + 1 >= argc || !(seed = strtoull(argv[i + 1], &end, 10)) || *end)
				return cli_usage("test-package: --seed needs a positive integer");
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage("test-package: unknown option '%s'", argv[i]);
		} else if (manifest) {
			return cli_usage("test-package: one manifest at a time ('%s' and '%s')",
					 manifest, argv[i]);
		} else {
			manifest = argv[i];
		}
	}
	if (!manifest)
		return cli_usage("test-package: give the package's manifest (PKG.yaml)");
	if (model)
		return model_cases(manifest, op, model, seed);
	FILE *sout = tmpfile(), *sres = tmpfile();
	int status = sout && sres ? shuffled_pass(manifest, op, seed, sout, sres) : -1;
	outcomes here = { 0 };
	gc_selftest_options so = { .only_op = op, .on_case = record, .user = &here };
	gc_error err = { 0 };
	gc_selftest_counts c;
	int rc = gc_selftest_run(manifest, &so, stdout, &c, &err);
	if (rc) {
		cli_error("%s", err.msg);
		printf("%d passed, %d failed\n", c.passed, c.failed + 1);
		rc = EXIT_FAIL;
	} else {
		int differ = compare_orders(&here, sres, sout, seed, status);
		c.failed += differ;
		c.passed += !differ;
		printf("%d passed, %d failed\n", c.passed, c.failed);
		rc = c.failed ? EXIT_FAIL : EXIT_OK;
	}
	outcomes_free(&here);
	if (sout)
		fclose(sout);
	if (sres)
		fclose(sres);
	return rc;
}
