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

/* A list in an options struct: `n` entries at `list`. A negative count, or
 * entries and no list, is GC_EINVAL: "<opts>.n_<field> is N with <field>
 * NULL". */
static inline int gc_arg_list(int32_t n, const void *list, const char *opts, const char *field,
			      gc_error *err)
{
	if (n < 0 || (n && !list))
		return gc_error_set(err, GC_EINVAL, "%s.n_%s is %d with %s %s", opts, field, (int)n,
				    field, list ? "set" : "NULL");
	return 0;
}

/* A tensor's rank and dims as the API accepts them: rank 0..GC_MAX_RANK
 * and no negative dim (values, whose rank is 0, included). `what` names
 * the tensor in the message. */
int gc_tensor_check_shape(const gc_tensor *t, const char *what, gc_error *err);

#endif
