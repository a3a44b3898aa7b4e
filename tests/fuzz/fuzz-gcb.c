/* libFuzzer target: the .gcb loader (gc_program_load). Both sections carry
 * XXH3 checksums, which would stop almost every mutation at the door; with
 * a valid header the target recomputes them first, so that the fuzzer
 * reaches the record parsers (a checksum mismatch is tested by the
 * hostile corpus instead). */
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
	char path[64];
	int fd = fuzz_memfile(copy, size, path, sizeof path);
	free(copy);
	gc_program *p = NULL;
	gc_error err = {0};
	gc_load_options opt = {0};
	if (gc_program_load(path, &opt, &p, &err) == 0)
		gc_program_free(p);
	else if (!err.msg[0])
		abort();
	close(fd);
	return 0;
}
