/*
 * Cast and CastLike between every numeric type, bool, float16 and bfloat16:
 * one generated kernel per (from, to) pair.
 */
#include "elementwise-impl.h"

#include <inttypes.h>

#include "../ops.h"

/* clang-format off */
/*
 * Each element goes through its canonical class, K: S (signed integer), U
 * (unsigned integer) or F (floating), and is stored into the target's class,
 * C: B (bool), S, U, F, H (float16) or Z (bfloat16).
 */
#define LD_ID(x) (x)
#define LD_BOOL(x) ((int64_t)((x) != 0))
#define LD_F16(x) gc_f16_to_f32(x)
#define LD_BF16(x) gc_bf16_to_f32(x)

/*
 * float -> bfloat16 keeps the high half of the float (NaN stays NaN), as the
 * reference test data of the ONNX version we test against (1.12) expects;
 * arithmetic on bfloat16 elsewhere rounds to nearest even.
 */
static inline uint16_t bf16_trunc(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)(x >> 16);
}

#define ST_B(v, TT) (uint8_t)((v) != 0)
#define ST_SB ST_B
#define ST_UB ST_B
#define ST_FB ST_B
#define ST_C(v, TT) (TT)(v)
#define ST_SS ST_C
#define ST_SU ST_C
#define ST_SF ST_C
#define ST_US ST_C
#define ST_UU ST_C
#define ST_UF ST_C
#define ST_FF ST_C
#define ST_FS(v, TT) (TT)gc_ew_f2i64(v)
#define ST_FU(v, TT) (TT)gc_ew_f2u64(v)
#define ST_H(v, TT) gc_f32_to_f16((float)(v))
#define ST_SH ST_H
#define ST_UH ST_H
#define ST_FH ST_H
#define ST_Z(v, TT) bf16_trunc((float)(v))
#define ST_SZ ST_Z
#define ST_UZ ST_Z
#define ST_FZ ST_Z

/* X(suffix, DTYPE, C type, load, K, C), listed twice so that the lists can
 * nest. */
#define CAST_TYPES_A(X)                                                        \
	X(b, BOOL, uint8_t, LD_BOOL, S, B)                                     \
	X(i8, INT8, int8_t, LD_ID, S, S)                                       \
	X(i16, INT16, int16_t, LD_ID, S, S)                                    \
	X(i32, INT32, int32_t, LD_ID, S, S)                                    \
	X(i64, INT64, int64_t, LD_ID, S, S)                                    \
	X(u8, UINT8, uint8_t, LD_ID, U, U)                                     \
	X(u16, UINT16, uint16_t, LD_ID, U, U)                                  \
	X(u32, UINT32, uint32_t, LD_ID, U, U)                                  \
	X(u64, UINT64, uint64_t, LD_ID, U, U)                                  \
	X(f32, FLOAT, float, LD_ID, F, F)                                      \
	X(f64, DOUBLE, double, LD_ID, F, F)                                    \
	X(f16, FLOAT16, uint16_t, LD_F16, F, H)                                \
	X(bf16, BFLOAT16, uint16_t, LD_BF16, F, Z)
#define CAST_TYPES_B(X, a, b, c, d, e, f)                                      \
	X(a, b, c, d, e, f, b, BOOL, uint8_t, LD_BOOL, S, B)                   \
	X(a, b, c, d, e, f, i8, INT8, int8_t, LD_ID, S, S)                     \
	X(a, b, c, d, e, f, i16, INT16, int16_t, LD_ID, S, S)                  \
	X(a, b, c, d, e, f, i32, INT32, int32_t, LD_ID, S, S)                  \
	X(a, b, c, d, e, f, i64, INT64, int64_t, LD_ID, S, S)                  \
	X(a, b, c, d, e, f, u8, UINT8, uint8_t, LD_ID, U, U)                   \
	X(a, b, c, d, e, f, u16, UINT16, uint16_t, LD_ID, U, U)                \
	X(a, b, c, d, e, f, u32, UINT32, uint32_t, LD_ID, U, U)                \
	X(a, b, c, d, e, f, u64, UINT64, uint64_t, LD_ID, U, U)                \
	X(a, b, c, d, e, f, f32, FLOAT, float, LD_ID, F, F)                    \
	X(a, b, c, d, e, f, f64, DOUBLE, double, LD_ID, F, F)                  \
	X(a, b, c, d, e, f, f16, FLOAT16, uint16_t, LD_F16, F, H)              \
	X(a, b, c, d, e, f, bf16, BFLOAT16, uint16_t, LD_BF16, F, Z)

#define CAST_PAIR(fs, FD, FT, FLD, FK, FC, ts, TD, TT, TLD, TK, TC)            \
	static void cast_##fs##_##ts(int64_t n, const void *const *in, const int64_t *inc, \
				     void *out, const void *arg)                \
	{                                                                      \
		const FT *a = in[0];                                           \
		TT *o = out;                                                   \
		(void)inc;                                                     \
		(void)arg;                                                     \
		for (int64_t i = 0; i < n; i++)                                \
			o[i] = ST_##FK##TC(FLD(a[i]), TT);                     \
	}
#define CAST_FROM(fs, FD, FT, FLD, FK, FC) CAST_TYPES_B(CAST_PAIR, fs, FD, FT, FLD, FK, FC)
CAST_TYPES_A(CAST_FROM)

#define CAST_TBL_PAIR(fs, FD, FT, FLD, FK, FC, ts, TD, TT, TLD, TK, TC)        \
	[GC_DTYPE_##FD][GC_DTYPE_##TD] = cast_##fs##_##ts,
#define CAST_TBL_FROM(fs, FD, FT, FLD, FK, FC)                                 \
	CAST_TYPES_B(CAST_TBL_PAIR, fs, FD, FT, FLD, FK, FC)
static const gc_ew_fn cast_fns[GC_DTYPE_COUNT][GC_DTYPE_COUNT] = { CAST_TYPES_A(
	CAST_TBL_FROM) };
/* clang-format on */

static void copy_run(int64_t n, const void *const *in, const int64_t *inc, void *out,
		     const void *arg)
{
	(void)inc;
	const size_t *size = arg;
	if (out != in[0])
		memcpy(out, in[0], (size_t)n * *size);
}

static const size_t elem_size[GC_DTYPE_COUNT] = {
#define GC_X_(name, value, size, text) [value] = size,
    GC_DTYPE_LIST(GC_X_)
#undef GC_X_
};

static int prepare_cast(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			gc_dtype to)
{
	if (gc_ew_check_input(k, in, 0, GC_EW_NUM | GC_EW_BIT(BOOL) | GC_EW_BIT(STRING)))
		return k->err->code;
	const gc_tensor *x = in[0];
	gc_dtype from = x->dtype;
	if (from == GC_DTYPE_STRING || to == GC_DTYPE_STRING)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "casting from %s to %s is not supported (no string conversions)",
			       gc_dtype_name(from), gc_dtype_name(to));
	gc_ew_fn fn = cast_fns[from][to];
	if (!fn)
		return gc_kerr(k, GC_EINVAL, "cannot cast from %s to %s", gc_dtype_name(from),
			       gc_dtype_name(to));
	gc_ew_state *s = gc_ew_state_new(k, n, 1);
	if (!s)
		return k->err->code;
	gc_set_shape(out[0], to, x->rank, x->dims);
	gc_ew_plan_init(&s->plans[0], 1, &x, x->rank, x->dims, to);
	s->fn = fn;
	if (from == to) {
		s->fn = copy_run;
		s->arg = &elem_size[from];
	}
	n->inplace_ok = gc_dtype_size(from) == gc_dtype_size(to);
	n->run = gc_ew_run;
	return gc_kok(k);
}

int gc_prepare_Cast(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const struct {
		const char *name;
		gc_dtype dtype;
	} names[] = {
#define GC_X_(name, value, size, text) {#name, GC_DTYPE_##name},
	    GC_DTYPE_LIST(GC_X_)
#undef GC_X_
	};
	const gc_attr *a = gc_attr_find(n, "to");
	if (!a)
		return gc_kerr(k, GC_EINVAL, "attribute 'to' is required");
	int64_t to = -1;
	if (a->type == GC_ATTR_INT) {
		to = a->v.i;
	} else if (a->type == GC_ATTR_STRING) { /* opset 1 names the type */
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (!strcmp(a->v.s, names[i].name))
				to = names[i].dtype;
		if (to < 0)
			return gc_kerr(k, GC_EINVAL, "attribute 'to' is \"%s\", not a type name",
				       a->v.s);
	} else {
		return gc_kerr(k, GC_EINVAL, "attribute 'to' is %s, expected int",
			       gc_attr_type_name(a->type));
	}
	if (to <= GC_DTYPE_UNDEFINED || to >= GC_DTYPE_COUNT)
		return gc_kerr(k, to >= GC_DTYPE_COUNT ? GC_EUNSUPPORTED : GC_EINVAL,
			       "attribute 'to' is %" PRId64 ", not a supported data type", to);
	return prepare_cast(k, n, in, out, (gc_dtype)to);
}

int gc_prepare_CastLike(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (n->n_in < 2 || !in[1])
		return gc_kerr(k, GC_EINVAL, "input 1 (target_type) is missing");
	return prepare_cast(k, n, in, out, in[1]->dtype);
}
