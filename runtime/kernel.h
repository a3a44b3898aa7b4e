/*
 * What a built-in kernel family sees: the node it serves, its tensors, and
 * the helpers to read attributes and report errors.
 *
 * Every built-in op has one prepare function, run once when a program is
 * built (at compile time, and again when a .gcb is loaded). Prepare checks
 * the node's attributes and input types/shapes, sets each output's dtype,
 * rank and dims, may allocate per-node state, and picks the typed run
 * function (node->run). Running never re-checks and never allocates.
 */
#ifndef GC_KERNEL_H
#define GC_KERNEL_H

#include <graphcc/runtime.h>

#include <stdbool.h>
#include <stdint.h>

typedef struct gc_node gc_node;
typedef struct gc_strpool gc_strpool;

typedef struct gc_kctx {
	gc_error *err;
	gc_node *node;
	void *scratch;	/* node->scratch_bytes of memory, at run time */
	int threads;
	gc_strpool *strings; /* where a kernel's new strings go (strpool.h) */
} gc_kctx;

/*
 * in[i] is NULL for an absent optional input. At prepare time, in[i]->data is
 * non-NULL only when the value is known (a constant); out[i] arrive with
 * dtype UNDEFINED and data NULL.
 */
typedef int (*gc_prepare_fn)(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out);
typedef int (*gc_run_fn)(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			 gc_tensor *const *out);

struct gc_node {
	const char *name; /* never NULL (may be "") */
	const char *domain;
	const char *op_type;
	int32_t op; /* gc_op */
	int32_t opset;
	int32_t n_in, n_out;
	int32_t *in, *out; /* tensor indices into the program; -1: absent */
	int32_t n_attr;
	gc_attr *attrs;

	gc_run_fn run;
	void *state; /* set by prepare; released with state_free (default: free) */
	void (*state_free)(void *state);
	uint64_t scratch_bytes; /* set by prepare: run-time scratch memory */
	bool inplace_ok;	/* set by prepare: out[0] may share in[0]'s memory */
	void *custom;		/* the binding of a custom node */
};

/*
 * Reports an error for the node being prepared or run. The message is
 * prefixed with the node's name and op type. Returns code.
 */
int gc_kerr(gc_kctx *k, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Attribute lookup: NULL when the node has none of that name. */
const gc_attr *gc_attr_find(const gc_node *n, const char *name);
/*
 * Typed getters: the default when absent; when present with another type,
 * they record an INVAL error on k (returned by gc_kok) and return the
 * default.
 */
int64_t gc_attr_i(gc_kctx *k, const char *name, int64_t def);
float gc_attr_f(gc_kctx *k, const char *name, float def);
const char *gc_attr_s(gc_kctx *k, const char *name, const char *def);
/* List getters: the count (0 when absent), *v set to the list (or NULL). */
int64_t gc_attr_ints(gc_kctx *k, const char *name, const int64_t **v);
int64_t gc_attr_floats(gc_kctx *k, const char *name, const float **v);
const gc_tensor *gc_attr_t(gc_kctx *k, const char *name);
/* The error recorded on k so far, or 0. */
static inline int gc_kok(gc_kctx *k)
{
	return k->err->code;
}

/*
 * String outputs: a kernel writes a `char *` into every element of a string
 * output, never leaving one unset. It may point at a string of its inputs,
 * its attributes or its state (nothing is owned through a string tensor),
 * or at a new string from gc_kstr: len bytes plus the NUL, which live until
 * the session's next run. NULL (with the error recorded on k) when out of
 * memory; the kernel then returns gc_kok(k).
 */
char *gc_kstr(gc_kctx *k, size_t len);
/* Element i of a string tensor ("" for a slot no kernel wrote). */
static inline const char *gc_str_at(const gc_tensor *t, int64_t i)
{
	const char *s = ((char *const *)t->data)[i];
	return s ? s : "";
}

/* Sets out's dtype, rank and dims. */
void gc_set_shape(gc_tensor *out, gc_dtype dtype, int32_t rank, const int64_t *dims);

/*
 * Reads a constant integer tensor (int32/int64) that prepare needs, such as
 * Reshape's shape: fails with a message naming the input when it is not
 * known at build time. *v points into a buffer of max entries.
 */
int gc_const_ints(gc_kctx *k, const gc_tensor *t, const char *what, int64_t *v, int64_t max,
		  int64_t *count);

/* Normalises an axis in [-rank, rank) to [0, rank); error on out of range. */
int gc_axis(gc_kctx *k, int64_t axis, int32_t rank, int32_t *out);

#endif
