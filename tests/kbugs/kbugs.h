/* Shared by the test.kbugs libraries: the flavours, in the manifest's order. */
#ifndef KBUGS_H
#define KBUGS_H

#include <graphcc/customop.h>
#include <string.h>

static const char *const kbugs_flavours[] = {
    "accumZeroed", "accumNoZero",   "clampInPlace", "seedClampInPlace",
    "copyExact",   "overrunOne",    "seedOverrunOne",
};
#define KBUGS_N_FLAVOURS ((int)(sizeof kbugs_flavours / sizeof kbugs_flavours[0]))

/* The param called name, or NULL. */
static inline const CustomOpParam *kbugs_param(const CustomOpParam *params, int32_t n,
					       const char *name)
{
	int32_t i;

	for (i = 0; params != NULL && i < n; i++)
		if (params[i].name != NULL && strcmp(params[i].name, name) == 0 &&
		    params[i].data != NULL)
			return &params[i];
	return NULL;
}

#endif
