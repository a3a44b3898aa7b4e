/* Shared by the test.debug libraries: the bugs, in the manifest's order. */
#ifndef BUGGY_H
#define BUGGY_H

#include <graphcc/customop.h>
#include <string.h>

static const char *const buggy_flavours[] = {
    "nullWrite", "writePastEnd", "writeBeforeStart", "writeIntoInput", "nanAt",
    "callAbort", "spinForever",	 "overflowStack",    "divideByZero",   "seedNullWrite",
};
#define BUGGY_N_FLAVOURS ((int)(sizeof buggy_flavours / sizeof buggy_flavours[0]))

/* The param called name, or NULL. */
static inline const CustomOpParam *buggy_param(const CustomOpParam *params, int32_t n,
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
