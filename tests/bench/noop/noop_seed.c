/* A seed-interface kernel that does nothing (no GC_CUSTOMOP_EXPORT_ABI). */
#include <graphcc/customop.h>

GC_CUSTOMOP_API void noop_seed(CustomOpIOTensor *in, int32_t nIn, CustomOpIOTensor *out,
			       int32_t nOut, CustomOpParam *p, int32_t nP)
{
	(void)in, (void)nIn, (void)out, (void)nOut, (void)p, (void)nP;
}
