/* libFuzzer target: the .npy reader (gc_npy_read_mem). */
#include <graphcc/runtime.h>

#include "fuzz-common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_limits();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	gc_tensor t;
	gc_error err = {0};
	memset(&t, 0, sizeof t);
	if (gc_npy_read_mem(data, size, "fuzz.npy", &t, &err) == 0) {
		/* touch every byte the reader says it holds */
		volatile unsigned char sum = 0;
		int64_t nb = gc_tensor_nbytes(&t);
		for (int64_t i = 0; i < nb; i++)
			sum ^= ((const unsigned char *)t.data)[i];
		/* and every string a string tensor points at */
		for (int64_t i = 0; t.dtype == GC_DTYPE_STRING && i < gc_tensor_numel(&t); i++)
			sum ^= (unsigned char)strlen(((char **)t.data)[i]);
		gc_error werr = {0};
		if (gc_npy_check(&t, "fuzz", &werr) && !werr.msg[0])
			abort(); /* a refusal must come with a message */
		gc_tensor_release(&t);
	} else {
		fuzz_refused(&err);
	}
	return 0;
}
