/* libFuzzer target: ONNX import through to a compiled program (gc_onnx_load
 * then gc_compile, which checks, infers shapes, folds constants and plans
 * memory). */
#include <graphcc/graphcc.h>

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_limits();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfile(data, size, path, sizeof path);
	gc_graph *g = NULL;
	gc_error err = {0};
	if (gc_onnx_load(path, &g, &err) == 0) {
		gc_compile_options opt = {0};
		gc_program *p = NULL;
		gc_error cerr = {0};
		if (gc_compile(g, &opt, &p, &cerr) == 0)
			gc_program_free(p);
		else
			fuzz_refused(&cerr);
		gc_graph_free(g);
	} else {
		fuzz_refused(&err);
	}
	close(fd);
	return 0;
}
