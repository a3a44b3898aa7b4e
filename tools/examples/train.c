/*
 * Training with a program from `graphcc train-program` (or
 * gc_graph_make_training): one session, one run per batch; the session keeps
 * the parameters and the optimizer's state from run to run, so the loop
 * only feeds batches and reads the loss.
 *
 *   example-train TRAIN.gcb DIR STEPS
 *
 * reads DIR/x_<i>.npy and DIR/labels_<i>.npy for i < STEPS (the program's
 * inputs "x" and "labels"), writes DIR/losses.npy (float64, one per step)
 * and every output of the last run as DIR/final/<name>.npy, and prints the
 * mean time of a step.
 */
#include <graphcc/graphcc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHECK(call)                                                                                \
	do {                                                                                       \
		if ((call) != 0) {                                                                 \
			fprintf(stderr, "example-train: %s\n", err.msg);                           \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

static int feed(gc_session *s, int input, const char *dir, const char *what, int step,
		gc_error *err)
{
	char path[4096];
	gc_tensor t = { 0 };
	snprintf(path, sizeof path, "%s/%s_%d.npy", dir, what, step);
	int rc = gc_npy_read(path, &t, err);
	if (!rc)
		rc = gc_session_set_input(s, input, &t, err);
	gc_tensor_release(&t);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s TRAIN.gcb DIR STEPS\n", argv[0]);
		return 2;
	}
	const char *dir = argv[2];
	int steps = atoi(argv[3]), status = 1;
	gc_error err = { 0 };
	gc_program *p = NULL;
	gc_session *s = NULL;
	double *losses = calloc((size_t)(steps > 0 ? steps : 1), sizeof *losses);
	char path[4096];
	CHECK(gc_program_load(argv[1], NULL, &p, &err));
	CHECK(gc_session_new(p, &(gc_session_options){ .size = sizeof(gc_session_options),
						      .threads = 1 },
			     &s, &err));
	int ix = gc_program_find_input(p, "x"), il = gc_program_find_input(p, "labels"), iloss = -1;
	for (int i = 0; i < gc_program_num_outputs(p); i++) {
		const char *name;
		gc_program_output(p, i, &name);
		if (!strcmp(name, "loss"))
			iloss = i;
	}
	if (ix < 0 || il < 0 || iloss < 0 || !losses) {
		fprintf(stderr, "example-train: the program needs inputs x, labels and output loss\n");
		goto out;
	}
	int64_t t0 = gc_now_ns();
	for (int k = 0; k < steps; k++) {
		CHECK(feed(s, ix, dir, "x", k, &err));
		CHECK(feed(s, il, dir, "labels", k, &err));
		CHECK(gc_session_run(s, &err));
		losses[k] = *(const float *)gc_session_output(s, iloss)->data;
	}
	int64_t t1 = gc_now_ns();
	gc_tensor lt = { .dtype = GC_DTYPE_DOUBLE, .rank = 1, .dims = { steps }, .data = losses };
	snprintf(path, sizeof path, "%s/losses.npy", dir);
	CHECK(gc_npy_write(path, &lt, &err));
	snprintf(path, sizeof path, "%s/final", dir);
	mkdir(path, 0777);
	for (int i = 0; i < gc_program_num_outputs(p); i++) {
		const char *name;
		gc_program_output(p, i, &name);
		snprintf(path, sizeof path, "%s/final/%s.npy", dir, name);
		CHECK(gc_npy_write(path, gc_session_output(s, i), &err));
	}
	printf("%d steps, %.3f ms per step (including reading the batch files)\n", steps,
	       steps ? (double)(t1 - t0) / 1e6 / steps : 0.0);
	status = 0;
out:
	gc_session_free(s);
	gc_program_free(p);
	free(losses);
	return status;
}
