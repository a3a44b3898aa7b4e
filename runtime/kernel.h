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

/*
 * A constant input of a node in the form its kernel computes from it once
 * (packed weights), kept with the node. A .gcb stores it, so that loading
 * the program does not compute it again (gc_kpacked); when every reader of
 * the constant keeps such a form that replaces it, the file stores only
 * those forms, and a loader whose kernels want the plain value rebuilds it
 * (gc_packed_unpack).
 */
typedef struct gc_packed {
	const char *key; /* layout and shape, "<layout> <numbers>..." (gc_packed_unpack) */
	const void *data;
	uint64_t nbytes;
	int32_t input;	/* the node's input it was computed from */
	bool replaces;	/* the kernel never reads that input's value when it has this */
	bool owned;	/* data (and key) allocated for the node, freed with its state */
} gc_packed;

typedef struct gc_kctx {
	gc_error *err;
	gc_node *node;
	void *scratch;	/* node->scratch_bytes of memory, at run time */
	int threads;
	/* Set when prepare failed only because it needs the value of an input
	 * that is computed at run time (gc_kneed_value): the compiler then
	 * prepares the node again at run time instead. */
	bool need_value;
	/* At run time, in programs with dynamic tensors or control flow: the
	 * session running the node (for gc_kout_*) and the sessions of the
	 * node's subprograms (node->sub). NULL otherwise. */
	struct gc_session *session;
	struct gc_session **sub;
	gc_strpool *strings; /* where a kernel's new strings go (strpool.h) */
	/* At compile time: bit j set when in[j]'s value is known now (an
	 * input value the caller gave, gc_compile_options.input_values) but
	 * is not a constant, so the next run may differ. Prepare may read such
	 * a value (shapes), but must not keep it: see gc_kfixed. */
	uint64_t varying;
	/* 0, or 0x100 | a byte: a custom kernel's scratch is filled with that
	 * byte before the call (--guard: scratch is not zeroed, and a kernel
	 * that reads what it did not write must show it). */
	int scratch_poison;
	/* At load: the packed forms the program file holds for the node. */
	const gc_packed *stored;
	int32_t n_stored;
	/* Random ops (kernels/random.c): the session's seed, its salt (0 for
	 * a program's session; a subprogram's from where it sits) and the
	 * index of this run of the session (0 first). Zero at compile time,
	 * where random ops never run. */
	uint64_t rng_seed, rng_salt;
	uint32_t rng_run;
} gc_kctx;

/* in[j]'s value when it is the same on every run (a constant, or a value
 * prepared again with each run), to keep in node state (packed weights);
 * NULL when unknown or when it may change by the next run. */
static inline const void *gc_kfixed(const gc_kctx *k, gc_tensor *const *in, int j)
{
	if (!in[j] || (j < 64 && (k->varying >> j & 1)) || (j >= 64 && k->varying))
		return NULL;
	return in[j]->data;
}

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
	bool inplace_ok;	/* set by prepare: out[0] may share in[inplace_in]'s memory */
	int8_t inplace_in;	/* (0 unless prepare sets it: a fused residual's 3) */
	bool impure;		/* set by prepare: draws random numbers, so never
				   folded or evaluated at compile time */
	void *custom;		/* the binding of a custom node */

	/* Prepared again before every run, on the shapes and values its inputs
	 * have then (set by the compiler: an input's shape is only known at
	 * run time, or prepare needs an input's value; see gc_kneed_value). */
	bool reprepare;
	/* Control flow (If, Loop, Scan, SequenceMap): the compiled subgraphs,
	 * owned by the program. The node's own inputs are the first
	 * n_explicit_in; the others are the enclosing graph's tensors the
	 * subgraphs read by name (each subprogram says which: outer_slot). */
	int32_t n_sub;
	struct gc_program **sub;
	int32_t n_explicit_in;
	/* Set by prepare through gc_kpacked; released with the state. */
	int32_t n_packed;
	gc_packed *packed;
};

/*
 * Packed form `key` (nbytes, 64-byte aligned) of the node's input j, kept
 * with the node (replaces: the kernel then never reads in[j]'s value). The
 * program file's copy when it holds one under that key and size (*fill set
 * to NULL); otherwise new memory that the kernel fills from in[j]'s value
 * (*fill points at it), only when that value is fixed (gc_kfixed). NULL
 * when neither, and on out of memory (with the error recorded on k).
 */
const void *gc_kpacked(gc_kctx *k, gc_node *n, gc_tensor *const *in, int j, const char *key,
		       uint64_t nbytes, bool replaces, void **fill);
/* Releases what gc_kpacked kept with the node. */
void gc_packed_release(gc_node *n);
/*
 * The plain value (dst, nbytes) of a constant that a program file holds only
 * in packed form: 0, or GC_EINVAL when the key is not one this build knows
 * or does not match the sizes.
 */
int gc_packed_unpack(const char *key, const void *src, uint64_t src_bytes, void *dst,
		     uint64_t nbytes);

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
/* A string attribute that names one of n choices (def when absent): the
 * index of its value in names, or -1 with the error recorded on k (a wrong
 * type, or 'attribute 'mode' is "x"; expected a, b or c'). */
int gc_attr_pick(gc_kctx *k, const char *name, const char *def, const char *const *names, int n);
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

/* Whether a and b have the same rank and dims (dtypes not compared). */
/*
 * Sizes, counts and indices from tensors are only known at run time: every
 * product or sum of them goes through these (false when the result does not
 * fit int64, which C leaves undefined), and every float that becomes an
 * index or a size is range-checked first (a NaN or a huge scale converted to
 * int64_t is undefined too).
 */
static inline bool gc_mul_i64(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

static inline bool gc_add_i64(int64_t a, int64_t b, int64_t *r)
{
	return !__builtin_add_overflow(a, b, r);
}

/* Is v a number (not NaN) in [lo, hi], so that (int64_t)v is defined when
 * the bounds are within int64? */
static inline bool gc_float_in(double v, double lo, double hi)
{
	return v >= lo && v <= hi;
}

static inline bool gc_same_shape(const gc_tensor *a, const gc_tensor *b)
{
	if (a->rank != b->rank)
		return false;
	for (int i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	return true;
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

/*
 * What prepare says when it needs the value of an input that is computed at
 * run time (a Reshape's shape, a Slice's starts): an error (GC_EUNSUPPORTED,
 * the message as for gc_kerr) that also sets k->need_value, so that the
 * compiler prepares the node at run time instead, when the value is known.
 */
int gc_kneed_value(gc_kctx *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Rank of a tensor whose shape is only known at run time (in the program's
 * description, and as prepare's output: the kernel sets it, gc_kout_shape). */
#define GC_RANK_DYNAMIC (-1)

/*
 * Run time, for outputs whose shape only the kernel knows (prepare gave
 * them rank GC_RANK_DYNAMIC): sets out[j]'s dtype and shape and gives it
 * memory for them (session-owned, grown as needed, kept between runs;
 * capped by GRAPHCC_MAX_BYTES). gc_kout_reserve grows the memory to at
 * least `bytes` keeping what it holds (a Loop's scan outputs, row by row)
 * and leaves the shape alone.
 */
int gc_kout_shape(gc_kctx *k, int j, gc_dtype dtype, int32_t rank, const int64_t *dims);
int gc_kout_reserve(gc_kctx *k, int j, uint64_t bytes);
/* Whether output j of the node k runs has session storage (a dynamic
 * shape, or a sequence or optional) rather than a place in the arena. */
bool gc_kout_dynamic(const gc_kctx *k, int j);

/* Normalises an axis in [-rank, rank) to [0, rank); error on out of range. */
int gc_axis(gc_kctx *k, int64_t axis, int32_t rank, int32_t *out);

#endif
