/*
 * Argument checks at the public API's door: a NULL or out-of-range argument
 * is GC_EINVAL with a message naming the function and the argument, never a
 * crash in the host.
 */
#ifndef GC_API_CHECK_H
#define GC_API_CHECK_H

#include <graphcc/runtime.h>

/* In a function returning int with a gc_error *err: refuse a NULL `arg`. */
#define GC_ARG_NONNULL(err, arg)                                                                   \
	do {                                                                                       \
		if (!(arg))                                                                        \
			return gc_error_set(err, GC_EINVAL, "%s: argument '%s' is NULL", __func__, \
					    #arg);                                                 \
	} while (0)

/* err may be NULL in every API call: then a local one takes the message
 * (the code is still returned). Put first in the function. */
#define GC_ERR_OR_LOCAL(err)                                                                       \
	gc_error err##_local_ = { 0 };                                                             \
	if (!(err))                                                                                \
	(err) = &err##_local_

/* A tensor's rank and dims as the API accepts them: rank 0..GC_MAX_RANK
 * and no negative dim (values, whose rank is 0, included). `what` names
 * the tensor in the message. */
int gc_tensor_check_shape(const gc_tensor *t, const char *what, gc_error *err);

#endif
