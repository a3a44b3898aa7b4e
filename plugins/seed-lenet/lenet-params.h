/*
 * Helpers shared by the seed-lenet libraries (each library compiles its own
 * copy: they are static inline, nothing is exported).
 *
 * Written against the seed interface only: the host passes params in
 * manifest order, but looking them up by name keeps each function honest
 * about what it reads and fails cleanly if the manifest and the code ever
 * disagree.
 */
#ifndef SEED_LENET_PARAMS_H
#define SEED_LENET_PARAMS_H

#include <graphcc/customop.h>
#include <string.h>

/* The param called `name` with element type `dtype`, or NULL. */
static inline const CustomOpParam *lenet_param(const CustomOpParam *params, int32_t numParams,
					       const char *name, CustomOpDataType dtype)
{
	int32_t i;

	if (params == NULL)
		return NULL;
	for (i = 0; i < numParams; i++) {
		if (params[i].name != NULL && strcmp(params[i].name, name) == 0)
			return params[i].dtype == dtype && params[i].data != NULL ? &params[i]
										  : NULL;
	}
	return NULL;
}

/* A scalar float param, or `fallback` when it is missing. */
static inline float lenet_float(const CustomOpParam *params, int32_t numParams, const char *name,
				float fallback)
{
	const CustomOpParam *p = lenet_param(params, numParams, name, DTFloat32);

	return p != NULL && p->size == 0 ? *(const float *)p->data : fallback;
}

/* A 2-element int vector param into out[2]; false when missing or not of
 * size 2. */
static inline bool lenet_int_pair(const CustomOpParam *params, int32_t numParams, const char *name,
				  int64_t out[2])
{
	const CustomOpParam *p = lenet_param(params, numParams, name, DTIInt64);

	if (p == NULL || p->size != 2)
		return false;
	out[0] = ((const int64_t *)p->data)[0];
	out[1] = ((const int64_t *)p->data)[1];
	return true;
}

#endif
