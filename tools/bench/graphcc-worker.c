/*
 * The graphcc side of `make bench` (driven by tools/bench/bench.py, whose
 * Node twin is ort-worker.js): one long-lived process per (model, threads)
 * that links graphcc in-process, prepares the model once and then runs it on
 * request, timing each request inside the process.
 *
 *   graphcc-worker [--threads N] [--ops PKG.yaml]... MODEL.onnx|MODEL.gcb NAME=FILE.npy...
 *       Compiles the .onnx (or loads the .gcb), makes one session, sets the
 *       inputs, prints "ready <prepare ms> <OpenBLAS core or ->" and serves
 *       one request per line of stdin:
 *         run K     runs K times; replies "ok <ms per run>", measured with
 *                   CLOCK_MONOTONIC around the K runs
 *         dump DIR  writes output i of the last run as DIR/<i>.npy; "ok"
 *         profile F one run with gc_session_run_debug's profile: the Chrome
 *                   trace-event JSON (one event per node, its op type in
 *                   "cat") to F; "ok". The summary goes to stderr.
 *         quit      exits 0
 *       A failure prints "error <message>" and exits 1.
 *   graphcc-worker --load-time N MODEL.gcb
 *       N times: gc_program_load and the first gc_session_new, then frees
 *       both; prints "load <median ms> <min ms> <mapped> <page-in ms>", where
 *       <mapped> is 1 when the file was in /proc/self/maps while the program
 *       lived (its weights are used from the mapping, not copied), and
 *       <page-in ms> is the median time to map the file afresh and read every
 *       byte of it once, measured between the loads (the floor any load that
 *       reads its weights has: the rest of the load time is graphcc's).
 */
#include <graphcc/debug.h>
#include <graphcc/graphcc.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_INPUTS 16
#define MAX_OPS 8

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int fail(const gc_error *err)
{
	printf("error %s\n", err->msg);
	fflush(stdout);
	return 1;
}

/* The core OpenBLAS picked, once graphcc has loaded it (a model without
 * GEMM-shaped work never does). */
static const char *blas_core(void)
{
	void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		return "-";
	void *p = dlsym(h, "openblas_get_corename");
	char *(*corename)(void);
	memcpy(&corename, &p, sizeof p);
	const char *name = p ? corename() : "-";
	dlclose(h);
	return name && *name ? name : "-";
}

/* Whether a file is mapped into this process. */
static int is_mapped(const char *path)
{
	char real[4096], line[8192];
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f || !realpath(path, real)) {
		if (f)
			fclose(f);
		return 0;
	}
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		size_t n = strlen(line), m = strlen(real);
		found = n >= m && !strcmp(line + n - m, real);
	}
	fclose(f);
	return found;
}

static volatile uint64_t page_sink; /* keeps the reads */

/* Maps path afresh and reads every byte once: ms. */
static double page_in_ms(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size_t n = (size_t)st.st_size / 8 * 8;
	double t0 = now_ms();
	const uint64_t *m = mmap(NULL, n ? n : 8, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	uint64_t sum = 0;
	for (size_t i = 0; i < n / 8; i++)
		sum += m[i];
	double ms = now_ms() - t0;
	munmap((void *)m, n ? n : 8);
	page_sink += sum;
	return ms;
}

static int load_time(int n, const char *path)
{
	double *ms = calloc((size_t)n * 2, sizeof *ms), *pg = ms + n;
	int mapped = 0;
	if (!ms)
		return 1;
	for (int i = 0; i < n; i++) {
		pg[i] = page_in_ms(path);
		gc_error err = {0};
		gc_program *p = NULL;
		gc_session *s = NULL;
		gc_session_options so = {.threads = 1};
		double t0 = now_ms();
		if (gc_program_load(path, NULL, &p, &err) || gc_session_new(p, &so, &s, &err)) {
			gc_program_free(p);
			free(ms);
			return fail(&err);
		}
		ms[i] = now_ms() - t0;
		mapped = is_mapped(path);
		gc_session_free(s);
		gc_program_free(p);
	}
	qsort(ms, (size_t)n, sizeof *ms, cmp_double);
	qsort(pg, (size_t)n, sizeof *pg, cmp_double);
	printf("load %.3f %.3f %d %.3f\n", ms[n / 2], ms[0], mapped, pg[n / 2]);
	free(ms);
	return 0;
}

static int compile_onnx(const char *path, const char *const *ops, int n_ops, int n_in,
			char *const *names, const gc_tensor *vals, gc_registry **reg,
			gc_program **p, gc_error *err)
{
	gc_graph *g = NULL;
	*reg = gc_registry_new();
	if (!*reg)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	for (int i = 0; i < n_ops; i++)
		if (gc_registry_load(*reg, ops[i], err))
			return err->code;
	if (gc_onnx_load(path, &g, err))
		return err->code;
	gc_input_value iv[MAX_INPUTS];
	for (int i = 0; i < n_in; i++) {
		iv[i] = (gc_input_value){names[i], &vals[i]};
		for (int k = 0; k < gc_graph_num_inputs(g); k++)
			if (!strcmp(gc_graph_input_name(g, k), names[i]) &&
			    gc_graph_input_has_default(g, k) &&
			    gc_graph_drop_default(g, names[i], err)) {
				gc_graph_free(g);
				return err->code;
			}
	}
	gc_compile_options opt = {.registry = *reg, .input_values = iv, .n_input_values = n_in};
	int rc = gc_compile(g, &opt, p, err);
	gc_graph_free(g);
	return rc;
}

static int serve(gc_session *s, const gc_program *p, gc_error *err)
{
	char line[4096];
	while (fgets(line, sizeof line, stdin)) {
		line[strcspn(line, "\r\n")] = 0;
		if (!strncmp(line, "run ", 4)) {
			long k = strtol(line + 4, NULL, 10);
			if (k < 1)
				return gc_error_set(err, GC_EINVAL, "bad request '%s'", line);
			double t0 = now_ms();
			for (long i = 0; i < k; i++)
				if (gc_session_run(s, err))
					return err->code;
			printf("ok %.6f\n", (now_ms() - t0) / (double)k);
		} else if (!strncmp(line, "dump ", 5)) {
			for (int i = 0; i < gc_program_num_outputs(p); i++) {
				char path[4200];
				snprintf(path, sizeof path, "%s/%d.npy", line + 5, i);
				if (gc_npy_write(path, gc_session_output(s, i), err))
					return err->code;
			}
			printf("ok\n");
		} else if (!strncmp(line, "profile ", 8)) {
			gc_debug_options dopt = {.profile_path = line + 8};
			if (gc_session_run_debug(s, &dopt, err))
				return err->code;
			printf("ok\n");
		} else if (!strcmp(line, "quit")) {
			return 0;
		} else {
			return gc_error_set(err, GC_EINVAL, "bad request '%s'", line);
		}
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	gc_error err = {0};
	int threads = 1, n_ops = 0, n_in = 0, rc = 1;
	const char *ops[MAX_OPS], *model = NULL;
	char *names[MAX_INPUTS];
	gc_tensor vals[MAX_INPUTS];
	gc_registry *reg = NULL;
	gc_program *p = NULL;
	gc_session *s = NULL;

	/* As the command does: GRAPHCC_* from the environment, and OpenBLAS's
	 * core type on AVX-512 machines (the library itself touches neither). */
	if (gc_runtime_init(&(gc_init_options){ .blas_coretype = 1, .from_environment = 1, .amx = 1 }, &err)) {
		fprintf(stderr, "graphcc-worker: %s\n", err.msg);
		return 1;
	}
	if (argc == 4 && !strcmp(argv[1], "--load-time"))
		return load_time(atoi(argv[2]) > 0 ? atoi(argv[2]) : 1, argv[3]);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			threads = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc && n_ops < MAX_OPS) {
			ops[n_ops++] = argv[++i];
		} else if (!model) {
			model = argv[i];
		} else if (strchr(argv[i], '=') && n_in < MAX_INPUTS) {
			names[n_in] = argv[i];
			char *file = strchr(argv[i], '=');
			*file++ = 0;
			if (gc_npy_read(file, &vals[n_in], &err))
				goto out;
			n_in++;
		} else {
			fprintf(
			    stderr,
			    "usage: see the comment at the top of tools/bench/graphcc-worker.c\n");
			return 2;
		}
	}
	if (!model) {
		fprintf(stderr,
			"usage: graphcc-worker [--threads N] [--ops PKG]... MODEL NAME=FILE...\n");
		return 2;
	}

	double t0 = now_ms();
	if (gc_is_program_file(model)) {
		if (gc_program_load(model, NULL, &p, &err))
			goto out;
	} else if (compile_onnx(model, ops, n_ops, n_in, names, vals, &reg, &p, &err)) {
		goto out;
	}
	gc_session_options so = {.threads = threads};
	if (gc_session_new(p, &so, &s, &err))
		goto out;
	for (int i = 0; i < n_in; i++) {
		int k = gc_program_find_input(p, names[i]);
		if (k < 0) {
			gc_error_set(&err, GC_EINVAL, "%s has no input '%s'", model, names[i]);
			goto out;
		}
		if (gc_session_set_input(s, k, &vals[i], &err))
			goto out;
	}
	double prepare_ms = now_ms() - t0;
	/* One run before "ready", so that lazily loaded libraries (OpenBLAS)
	 * are in and their core can be reported. */
	if (gc_session_run(s, &err))
		goto out;
	printf("ready %.3f %s\n", prepare_ms, blas_core());
	fflush(stdout);
	if (serve(s, p, &err))
		goto out;
	rc = 0;
out:
	if (rc)
		fail(&err);
	for (int i = 0; i < n_in; i++)
		gc_tensor_release(&vals[i]);
	gc_session_free(s);
	gc_program_free(p);
	gc_registry_free(reg);
	return rc;
}
