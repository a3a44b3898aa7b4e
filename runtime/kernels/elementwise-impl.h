/*
 * Shared machinery of the elementwise kernel files: the broadcast plan that
 * turns an N-ary elementwise op into contiguous runs, the run kernels'
 * signature, the float16/bfloat16 adapter, dtype masks and the per-node
 * state. Private to runtime/kernels/elementwise*.c.
 */
#ifndef GC_K_ELEMENTWISE_IMPL_H
#define GC_K_ELEMENTWISE_IMPL_H

/*
 * At -O2, GCC 12 vectorises only loops that need neither an epilogue nor an
 * aliasing check ("very-cheap" cost model), which excludes every kernel loop
 * here; and since FP operations "may trap", it will not turn `x < 0 ? a*x : x`
 * into a select. ONNX has no FP-exception semantics, so ask for both. This
 * header comes first in each elementwise*.c so that every function of the
 * file (the inline helpers included) has the same options and inlines.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif

#include <stdbool.h>
#include <stdint.h>

#include "kutil.h"

/* Inputs of the widest op (Where). */
#define GC_EW_MAX_IN 3

/*
 * A run kernel computes n output elements from contiguous runs of its
 * inputs: inc[i] is 1 when input i advances with the output and 0 when one
 * element of it serves the whole run (broadcast). Outputs are contiguous.
 */
typedef void (*gc_ew_fn)(int64_t n, const void *const *in, const int64_t *inc, void *out,
			 const void *arg);

/*
 * An elementwise op over broadcast inputs, with the dimensions collapsed so
 * that the innermost one is as long as possible. Built at prepare time.
 */
typedef struct gc_ew_plan {
	int32_t rank; /* >= 1 */
	int32_t n_in;
	int64_t numel;
	int64_t dims[GC_MAX_RANK];
	int64_t bstride[GC_EW_MAX_IN][GC_MAX_RANK]; /* bytes */
	int64_t inc[GC_EW_MAX_IN];		    /* innermost stride: 0 or 1 element */
	size_t osize;				    /* output element bytes */
} gc_ew_plan;

/* Plans out[odims] = f(in[0], ..., in[n_in-1]); the inputs' shapes must
 * broadcast to odims (checked by the caller). */
void gc_ew_plan_init(gc_ew_plan *p, int n_in, const gc_tensor *const *in, int32_t orank,
		     const int64_t *odims, gc_dtype odtype);
void gc_ew_plan_run(const gc_ew_plan *p, gc_ew_fn fn, const void *arg, const void *const *in,
		    void *out);
/* The same split over up to `threads` threads of the nn-par pool when the
 * op is large enough (each element computed as gc_ew_plan_run would). */
void gc_ew_plan_run_par(int threads, const gc_ew_plan *p, gc_ew_fn fn, const void *arg,
			const void *const *in, void *out);

/*
 * float16 and bfloat16 operands go through the float32 kernel: the adapter
 * converts chunks of them to float, calls fn, and converts its output back.
 * kind[i] is GC_DTYPE_FLOAT16, GC_DTYPE_BFLOAT16 or 0 (passed as is);
 * kind[n_in] and size[n_in] describe the output.
 */
typedef struct gc_ew_half {
	gc_ew_fn fn;
	const void *arg;
	int32_t n_in;
	uint8_t kind[GC_EW_MAX_IN + 1];
	uint8_t size[GC_EW_MAX_IN + 1];
	bool bf16_trunc; /* bfloat16 output by truncation (Cast), else rounding */
} gc_ew_half;
void gc_ew_half_run(int64_t n, const void *const *in, const int64_t *inc, void *out,
		    const void *arg);

/* Attribute values a kernel reads through its arg. */
typedef struct gc_ew_params {
	float alpha, beta, gamma;
	double divisor; /* Mean */
	int64_t i0, i1; /* IsInf: detect_negative, detect_positive */
} gc_ew_params;

/* Per-node state of the plan-driven ops. */
typedef struct gc_ew_state {
	gc_ew_fn fn;
	const void *arg; /* &half, &prm or NULL */
	gc_ew_half half;
	gc_ew_params prm;
	gc_ew_fn post; /* Mean: divides the sum in place */
	const void *post_arg;
	gc_ew_half post_half;
	int32_t n_plans;
	gc_ew_plan plans[];
} gc_ew_state;

/* Allocates the state with room for n_plans plans and hangs it on the node. */
gc_ew_state *gc_ew_state_new(gc_kctx *k, gc_node *n, int n_plans);
/*
 * Sets s->fn/s->arg to fn (the kernel for the operand types, float32 in place
 * of float16/bfloat16) and puts the half adapter in front when any operand
 * (dts[0..n_in-1], output dts[n_in]) is float16 or bfloat16.
 */
void gc_ew_set_fn(gc_ew_fn *fn_out, const void **arg_out, gc_ew_half *h, gc_ew_fn fn,
		  const void *arg, int n_in, const gc_dtype *dts);
/* Runs plans[0] over in[0..n_in-1] into out[0]. */
int gc_ew_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out);

/* dtype masks */
#define GC_EW_BIT(dt) (1u << GC_DTYPE_##dt)
#define GC_EW_SINT (GC_EW_BIT(INT8) | GC_EW_BIT(INT16) | GC_EW_BIT(INT32) | GC_EW_BIT(INT64))
#define GC_EW_UINT (GC_EW_BIT(UINT8) | GC_EW_BIT(UINT16) | GC_EW_BIT(UINT32) | GC_EW_BIT(UINT64))
#define GC_EW_INT (GC_EW_SINT | GC_EW_UINT)
#define GC_EW_HALF (GC_EW_BIT(FLOAT16) | GC_EW_BIT(BFLOAT16))
#define GC_EW_FLT (GC_EW_BIT(FLOAT) | GC_EW_BIT(DOUBLE) | GC_EW_HALF)
#define GC_EW_NUM (GC_EW_INT | GC_EW_FLT)

static inline bool gc_ew_is_half(gc_dtype dt)
{
	return dt == GC_DTYPE_FLOAT16 || dt == GC_DTYPE_BFLOAT16;
}

/* The dtype whose kernel serves dt: float32 for the half types. */
static inline gc_dtype gc_ew_compute_type(gc_dtype dt)
{
	return gc_ew_is_half(dt) ? GC_DTYPE_FLOAT : dt;
}

/* Fails unless input idx is present and its dtype is in mask. */
int gc_ew_check_input(gc_kctx *k, gc_tensor *const *in, int idx, uint32_t mask);
/* Fails unless in[idx] has the dtype of in[0]. */
int gc_ew_check_same_type(gc_kctx *k, gc_tensor *const *in, int idx);

/* clang-format off */
/*
 * Type lists for generating kernels: X(N, OP, suffix, DTYPE, C type, W) where
 * W is the type integer arithmetic wraps in (C's unsigned arithmetic; no
 * signed overflow) and the float type itself for floats.
 */
#define GC_EW_T_SINT(X, N, OP)                                                 \
	X(N, OP, i8, INT8, int8_t, uint32_t)                                   \
	X(N, OP, i16, INT16, int16_t, uint32_t)                                \
	X(N, OP, i32, INT32, int32_t, uint32_t)                                \
	X(N, OP, i64, INT64, int64_t, uint64_t)
#define GC_EW_T_UINT(X, N, OP)                                                 \
	X(N, OP, u8, UINT8, uint8_t, uint32_t)                                 \
	X(N, OP, u16, UINT16, uint16_t, uint32_t)                              \
	X(N, OP, u32, UINT32, uint32_t, uint32_t)                              \
	X(N, OP, u64, UINT64, uint64_t, uint64_t)
#define GC_EW_T_FLT(X, N, OP)                                                  \
	X(N, OP, f32, FLOAT, float, float)                                     \
	X(N, OP, f64, DOUBLE, double, double)

/* Table entry [GC_DTYPE_x] = N_suffix for a kernel table indexed by dtype. */
#define GC_EW_TBL(N, OP, sfx, DT, T, W) [GC_DTYPE_##DT] = N##_##sfx,

/*
 * A run kernel with two operands: o = OP(x, y, T, W), specialised for each
 * combination of advancing/broadcast operands so that each loop is simple
 * enough to vectorise.
 */
#define GC_EW_BIN(fname, TA, TB, TO, W, OP)                                    \
	static void fname(int64_t n, const void *const *in, const int64_t *inc, void *out, \
			  const void *arg)                                      \
	{                                                                      \
		const TA *a = in[0];                                           \
		const TB *b = in[1];                                           \
		TO *o = out;                                                   \
		(void)arg;                                                     \
		if (inc[0] && inc[1]) {                                        \
			for (int64_t i = 0; i < n; i++)                        \
				o[i] = (TO)(OP(a[i], b[i], TA, W));            \
		} else if (inc[0]) {                                           \
			const TB y = b[0];                                     \
			for (int64_t i = 0; i < n; i++)                        \
				o[i] = (TO)(OP(a[i], y, TA, W));               \
		} else if (inc[1]) {                                           \
			const TA x = a[0];                                     \
			for (int64_t i = 0; i < n; i++)                        \
				o[i] = (TO)(OP(x, b[i], TA, W));               \
		} else {                                                       \
			const TO v = (TO)(OP(a[0], b[0], TA, W));              \
			for (int64_t i = 0; i < n; i++)                        \
				o[i] = v;                                      \
		}                                                              \
	}

/* Same-type binary op; bool-output comparison. */
#define GC_EW_GEN_BIN(N, OP, sfx, DT, T, W) GC_EW_BIN(N##_##sfx, T, T, T, W, OP)
#define GC_EW_GEN_CMP(N, OP, sfx, DT, T, W) GC_EW_BIN(N##_##sfx, T, T, uint8_t, W, OP)

/*
 * A unary run kernel: o = OP(x, p, T, W) with p the gc_ew_params. A unary
 * plan is one contiguous run; its input is fixed (inc 0) only when the
 * tensor has a single element.
 */
#define GC_EW_UN(fname, TI, TO, W, OP)                                         \
	static void fname(int64_t n, const void *const *in, const int64_t *inc, void *out, \
			  const void *arg)                                      \
	{                                                                      \
		const TI *a = in[0];                                           \
		TO *o = out;                                                   \
		const gc_ew_params *p = arg;                                   \
		(void)p;                                                       \
		if (!inc[0]) {                                                 \
			const TO v = (TO)(OP(a[0], p, TI, W));                 \
			for (int64_t i = 0; i < n; i++)                        \
				o[i] = v;                                      \
			return;                                                \
		}                                                              \
		for (int64_t i = 0; i < n; i++)                                \
			o[i] = (TO)(OP(a[i], p, TI, W));                       \
	}
#define GC_EW_GEN_UN(N, OP, sfx, DT, T, W) GC_EW_UN(N##_##sfx, T, T, W, OP)
#define GC_EW_GEN_UNB(N, OP, sfx, DT, T, W) GC_EW_UN(N##_##sfx, T, uint8_t, W, OP)

/* clang-format on */
/* Saturating float -> integer conversions (C leaves out-of-range undefined):
 * NaN gives 0; narrower integers then wrap like NumPy's astype. */
static inline int64_t gc_ew_f2i64(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

static inline uint64_t gc_ew_f2u64(double v)
{
	if (v != v)
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	if (v >= 9223372036854775808.0)
		return (uint64_t)v;
	return (uint64_t)gc_ew_f2i64(v);
}

#endif
