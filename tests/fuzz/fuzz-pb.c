/* libFuzzer target: the ONNX TensorProto (.pb) reader (gc_pb_read). */
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
	gc_tensor t;
	char *name = NULL;
	gc_error err = {0};
	if (gc_pb_read(path, &t, &name, &err) == 0) {
		volatile unsigned char sum = 0;
		int64_t nb = gc_tensor_nbytes(&t);
		for (int64_t i = 0; i < nb; i++)
			sum ^= ((const unsigned char *)t.data)[i];
		/* and every string a string tensor points at */
		for (int64_t i = 0; t.dtype == GC_DTYPE_STRING && i < gc_tensor_numel(&t); i++)
			sum ^= (unsigned char)strlen(((char **)t.data)[i]);
		gc_tensor_release(&t);
		free(name);
	} else {
		fuzz_refused(&err);
	}
	close(fd);
	return 0;
}
