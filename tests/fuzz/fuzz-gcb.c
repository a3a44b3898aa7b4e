/* libFuzzer target: the .gcb loader (gc_program_load, and
 * gc_program_load_mem for inputs of odd length) and then a session
 * on what loads: every input of a static type set to zeros (empty strings),
 * one run. Whatever the loader accepts, the executor and the kernels must
 * survive: a refusal comes with a message, never a crash.
 *
 * Both sections carry XXH3 checksums, which would stop almost every
 * mutation at the door; with a valid header the target recomputes them
 * first, so that the fuzzer reaches the record parsers and the meaning
 * checks (a checksum mismatch is tested by the hostile corpus instead). */
#include <graphcc/runtime.h>

#include <xxhash.h>

#include "../../runtime/gcb.h"
#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_limits();
	return 0;
}

/* Input i as zeros; false to leave it unset (a sequence, a run-time shape,
 * or more than the target wants to touch). */
static bool zero_input(const gc_tensor *want, gc_tensor *t, void **buf)
{
	*buf = NULL;
	if (want->rank < 0 || gc_dtype_is_value(want->dtype) || want->dtype == GC_DTYPE_UNDEFINED)
		return false;
	int64_t nb = gc_tensor_nbytes(want), n = gc_tensor_numel(want);
	if (nb < 0 || nb > (1 << 20))
		return false;
	*t = *want;
	if (want->dtype == GC_DTYPE_STRING) {
		const char **s = calloc((size_t)n + 1, sizeof *s);
		if (!s)
			return false;
		for (int64_t i = 0; i < n; i++)
			s[i] = "";
		*buf = s;
	} else {
		*buf = calloc(1, (size_t)nb + 1);
		if (!*buf)
			return false;
	}
	t->data = *buf;
	return true;
}

static void run_session(const gc_program *p)
{
	gc_session *s = NULL;
	gc_error err = { 0 };
	if (gc_session_new(p, NULL, &s, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	for (int i = 0; i < gc_program_num_inputs(p); i++) {
		gc_tensor t;
		void *buf;
		gc_error ierr = { 0 };
		if (zero_input(gc_program_input(p, i, NULL), &t, &buf) &&
		    gc_session_set_input(s, i, &t, &ierr) && !ierr.msg[0])
			abort();
		free(buf);
	}
	gc_error rerr = { 0 };
	if (gc_session_run(s, &rerr) == 0) {
		for (int i = 0; i < gc_program_num_outputs(p); i++)
			(void)gc_session_output(s, i);
	} else if (!rerr.msg[0]) {
		abort();
	}
	gc_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	if (size >= sizeof(gcb_header)) {
		gcb_header h;
		memcpy(&h, copy, sizeof h);
		if (h.meta_offset <= size && h.meta_size <= size - h.meta_offset)
			h.meta_xxh3 = XXH3_64bits(copy + h.meta_offset, h.meta_size);
		if (h.weights_offset <= size && h.weights_size <= size - h.weights_offset)
			h.weights_xxh3 = XXH3_64bits(copy + h.weights_offset, h.weights_size);
		memcpy(copy, &h, sizeof h);
	}
	gc_program *p = NULL;
	gc_error err = { 0 };
	int fd = -1, rc;
	if (size & 1) {
		rc = gc_program_load_mem(copy, size, "fuzz", NULL, &p, &err);
	} else {
		char path[64];
		fd = fuzz_memfile(copy, size, path, sizeof path);
		rc = gc_program_load(path, NULL, &p, &err);
	}
	free(copy);
	if (rc == 0) {
		run_session(p);
		gc_program_free(p);
	} else {
		fuzz_refused(&err);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
