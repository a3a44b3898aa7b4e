/*
 * Binary and variadic elementwise ops with ONNX broadcasting: arithmetic,
 * Pow, Mod, BitShift, comparisons, logic, PRelu, Sum/Max/Min/Mean.
 */
#include "elementwise-impl.h"

#include <inttypes.h>
#include <tgmath.h>

#include "../ops.h"

/* clang-format off */
/* ---- kernels ------------------------------------------------------------- */

#define OP_ADD_I(x, y, T, W) (T)((W)(x) + (W)(y))
#define OP_SUB_I(x, y, T, W) (T)((W)(x) - (W)(y))
#define OP_MUL_I(x, y, T, W) (T)((W)(x) * (W)(y))
#define OP_ADD_F(x, y, T, W) ((x) + (y))
#define OP_SUB_F(x, y, T, W) ((x) - (y))
#define OP_MUL_F(x, y, T, W) ((x) * (y))
#define OP_DIV_F(x, y, T, W) ((x) / (y))
/* Integer division truncates like C (the ONNX reference divides, then casts
 * back); x/0 gives 0 and MIN/-1 wraps instead of trapping. */
#define OP_DIV_S(x, y, T, W)                                                   \
	((y) == 0 ? (T)0 : (y) == -1 ? (T)((W)0 - (W)(x)) : (T)((x) / (y)))
#define OP_DIV_U(x, y, T, W) ((y) == 0 ? (T)0 : (T)((x) / (y)))

GC_EW_T_SINT(GC_EW_GEN_BIN, add, OP_ADD_I)
GC_EW_T_UINT(GC_EW_GEN_BIN, add, OP_ADD_I)
GC_EW_T_FLT(GC_EW_GEN_BIN, add, OP_ADD_F)
GC_EW_T_SINT(GC_EW_GEN_BIN, sub, OP_SUB_I)
GC_EW_T_UINT(GC_EW_GEN_BIN, sub, OP_SUB_I)
GC_EW_T_FLT(GC_EW_GEN_BIN, sub, OP_SUB_F)
GC_EW_T_SINT(GC_EW_GEN_BIN, mul, OP_MUL_I)
GC_EW_T_UINT(GC_EW_GEN_BIN, mul, OP_MUL_I)
GC_EW_T_FLT(GC_EW_GEN_BIN, mul, OP_MUL_F)
GC_EW_T_SINT(GC_EW_GEN_BIN, div, OP_DIV_S)
GC_EW_T_UINT(GC_EW_GEN_BIN, div, OP_DIV_U)
GC_EW_T_FLT(GC_EW_GEN_BIN, div, OP_DIV_F)

/* Max/Min propagate NaN like numpy.maximum/minimum. */
#define OP_MAX_I(x, y, T, W) ((x) >= (y) ? (x) : (y))
#define OP_MIN_I(x, y, T, W) ((x) <= (y) ? (x) : (y))
#define OP_MAX_F(x, y, T, W) (((x) >= (y) || (x) != (x)) ? (x) : (y))
#define OP_MIN_F(x, y, T, W) (((x) <= (y) || (x) != (x)) ? (x) : (y))
GC_EW_T_SINT(GC_EW_GEN_BIN, max, OP_MAX_I)
GC_EW_T_UINT(GC_EW_GEN_BIN, max, OP_MAX_I)
GC_EW_T_FLT(GC_EW_GEN_BIN, max, OP_MAX_F)
GC_EW_T_SINT(GC_EW_GEN_BIN, min, OP_MIN_I)
GC_EW_T_UINT(GC_EW_GEN_BIN, min, OP_MIN_I)
GC_EW_T_FLT(GC_EW_GEN_BIN, min, OP_MIN_F)

/* Mod: fmod=1 is C's remainder (sign of the dividend), fmod=0 Python's (sign
 * of the divisor). x mod 0 gives 0. */
static inline int64_t pymod(int64_t x, int64_t y)
{
	if (y == 0 || y == -1)
		return 0;
	int64_t r = x % y;
	if (r != 0 && ((r < 0) != (y < 0)))
		r += y;
	return r;
}
#define OP_FMOD_S(x, y, T, W) ((y) == 0 || (y) == -1 ? (T)0 : (T)((x) % (y)))
#define OP_MOD_U(x, y, T, W) ((y) == 0 ? (T)0 : (T)((x) % (y)))
#define OP_PYMOD_S(x, y, T, W) (T)pymod((int64_t)(x), (int64_t)(y))
#define OP_FMOD_F(x, y, T, W) fmod((x), (y))
GC_EW_T_SINT(GC_EW_GEN_BIN, fmod, OP_FMOD_S)
GC_EW_T_UINT(GC_EW_GEN_BIN, fmod, OP_MOD_U)
GC_EW_T_FLT(GC_EW_GEN_BIN, fmod, OP_FMOD_F)
GC_EW_T_SINT(GC_EW_GEN_BIN, pymod, OP_PYMOD_S)
GC_EW_T_UINT(GC_EW_GEN_BIN, pymod, OP_MOD_U)

/* Shifting by the width or more gives 0 (C leaves it undefined). */
#define OP_SHL(x, y, T, W) ((uint64_t)(y) >= 8 * sizeof(T) ? (T)0 : (T)((W)(x) << (y)))
#define OP_SHR(x, y, T, W) ((uint64_t)(y) >= 8 * sizeof(T) ? (T)0 : (T)((x) >> (y)))
GC_EW_T_UINT(GC_EW_GEN_BIN, shl, OP_SHL)
GC_EW_T_UINT(GC_EW_GEN_BIN, shr, OP_SHR)

#define OP_EQ(x, y, T, W) ((x) == (y))
#define OP_LT(x, y, T, W) ((x) < (y))
#define OP_GT(x, y, T, W) ((x) > (y))
#define OP_LE(x, y, T, W) ((x) <= (y))
#define OP_GE(x, y, T, W) ((x) >= (y))
#define GC_EW_GEN_CMP_ALL(N, OP)                                               \
	GC_EW_T_SINT(GC_EW_GEN_CMP, N, OP)                                     \
	GC_EW_T_UINT(GC_EW_GEN_CMP, N, OP)                                     \
	GC_EW_T_FLT(GC_EW_GEN_CMP, N, OP)
GC_EW_GEN_CMP_ALL(eq, OP_EQ)
GC_EW_GEN_CMP_ALL(lt, OP_LT)
GC_EW_GEN_CMP_ALL(gt, OP_GT)
GC_EW_GEN_CMP_ALL(le, OP_LE)
GC_EW_GEN_CMP_ALL(ge, OP_GE)

/* bool tensors hold one byte each; any non-zero byte is true. */
#define OP_EQ_B(x, y, T, W) (((x) != 0) == ((y) != 0))
#define OP_AND(x, y, T, W) (((x) != 0) & ((y) != 0))
#define OP_OR(x, y, T, W) (((x) != 0) | ((y) != 0))
#define OP_XOR(x, y, T, W) (((x) != 0) ^ ((y) != 0))
GC_EW_BIN(eq_b, uint8_t, uint8_t, uint8_t, uint32_t, OP_EQ_B)
GC_EW_BIN(and_b, uint8_t, uint8_t, uint8_t, uint32_t, OP_AND)
GC_EW_BIN(or_b, uint8_t, uint8_t, uint8_t, uint32_t, OP_OR)
GC_EW_BIN(xor_b, uint8_t, uint8_t, uint8_t, uint32_t, OP_XOR)

/* Bitwise*-18 on the integer types. */
#define OP_BAND(x, y, T, W) (T)((x) & (y))
#define OP_BOR(x, y, T, W) (T)((x) | (y))
#define OP_BXOR(x, y, T, W) (T)((x) ^ (y))
GC_EW_T_SINT(GC_EW_GEN_BIN, band, OP_BAND)
GC_EW_T_UINT(GC_EW_GEN_BIN, band, OP_BAND)
GC_EW_T_SINT(GC_EW_GEN_BIN, bor, OP_BOR)
GC_EW_T_UINT(GC_EW_GEN_BIN, bor, OP_BOR)
GC_EW_T_SINT(GC_EW_GEN_BIN, bxor, OP_BXOR)
GC_EW_T_UINT(GC_EW_GEN_BIN, bxor, OP_BXOR)

/* Equal-19 on strings: equal bytes (a slot no kernel wrote reads as ""). */
#define STR_(s) ((s) ? (s) : "")
#define OP_EQ_STR(x, y, T, W) (strcmp(STR_(x), STR_(y)) == 0)
typedef const char *cstr_;
GC_EW_BIN(eq_str, cstr_, cstr_, uint8_t, uint32_t, OP_EQ_STR)

/* PRelu: x * slope where x < 0. Written as one multiply by a selected factor
 * so the float loop vectorises. */
#define OP_PRELU_F(x, y, T, W) ((x) * ((x) < 0 ? (y) : (T)1))
#define OP_PRELU_S(x, y, T, W) ((x) < 0 ? (T)((W)(x) * (W)(y)) : (x))
#define OP_PRELU_U(x, y, T, W) ((void)(y), (x))
GC_EW_BIN(prelu_i32, int32_t, int32_t, int32_t, uint32_t, OP_PRELU_S)
GC_EW_BIN(prelu_i64, int64_t, int64_t, int64_t, uint64_t, OP_PRELU_S)
GC_EW_BIN(prelu_u32, uint32_t, uint32_t, uint32_t, uint32_t, OP_PRELU_U)
GC_EW_BIN(prelu_u64, uint64_t, uint64_t, uint64_t, uint64_t, OP_PRELU_U)
GC_EW_T_FLT(GC_EW_GEN_BIN, prelu, OP_PRELU_F)

/* ---- Pow: base T (int32, int64, floats), exponent of any numeric type ----- */

static inline int64_t ipow_u(int64_t x, uint64_t e)
{
	uint64_t r = 1, b = (uint64_t)x;
	while (e) {
		if (e & 1)
			r *= b;
		b *= b;
		e >>= 1;
	}
	return (int64_t)r;
}

/* A negative exponent truncates 1/x^-e toward zero. */
static inline int64_t ipow_s(int64_t x, int64_t e)
{
	if (e >= 0)
		return ipow_u(x, (uint64_t)e);
	if (x == 1)
		return 1;
	if (x == -1)
		return (e & 1) ? -1 : 1;
	return 0;
}

/* float ^ float stays in float (as numpy does); other mixes go through
 * double, then back to the base type. */
#define OP_POW_FF(x, y, T, W) pow((x), (y))
#define OP_POW_FD(x, y, T, W) (T)pow((double)(x), (double)(y))
#define OP_POW_IF(x, y, T, W) (T)gc_ew_f2i64(pow((double)(x), (double)(y)))
#define OP_POW_IS(x, y, T, W) (T)ipow_s((int64_t)(x), (int64_t)(y))
#define OP_POW_IU(x, y, T, W) (T)ipow_u((int64_t)(x), (uint64_t)(y))

#define POW_GEN(BN, BT, sfx, ET, OP) GC_EW_BIN(pow_##BN##_##sfx, BT, ET, BT, BT, OP)
#define POW_F32(N, OP, sfx, DT, T, W) POW_GEN(f32, float, sfx, T, OP)
#define POW_F64(N, OP, sfx, DT, T, W) POW_GEN(f64, double, sfx, T, OP)
#define POW_I32(N, OP, sfx, DT, T, W) POW_GEN(i32, int32_t, sfx, T, OP)
#define POW_I64(N, OP, sfx, DT, T, W) POW_GEN(i64, int64_t, sfx, T, OP)
POW_GEN(f32, float, f32_libm, float, OP_POW_FF)

/* x^k for a float base and one small integer exponent 1 < |k| <= 4 (x^3 of
 * the tanh form of GELU, x^-2): products in double, rounded to float once,
 * as pow() in double then rounded is (within a double rounding); one pass,
 * vectorised. */
GC_NN_SIMD static void pow_f32_small(int64_t n, const float *a, int k, float *o)
{
	int m = k < 0 ? -k : k;
	for (int64_t i = 0; i < n; i++) {
		double x = a[i], x2 = x * x;
		double r = m == 2 ? x2 : m == 3 ? x2 * x : x2 * x2;
		o[i] = (float)(k < 0 ? 1.0 / r : r);
	}
}

static void pow_f32_f32(int64_t n, const void *const *in, const int64_t *inc, void *out,
			const void *arg)
{
	const float e = ((const float *)in[1])[0];
	if (inc[0] && !inc[1] && e == (float)(int)e && e != 0 && e >= -4 && e <= 4 && e != 1 &&
	    e != -1) {
		pow_f32_small(n, in[0], (int)e, out);
		return;
	}
	pow_f32_f32_libm(n, in, inc, out, arg);
}
POW_GEN(f32, float, f64, double, OP_POW_FD)
GC_EW_T_SINT(POW_F32, _, OP_POW_FD)
GC_EW_T_UINT(POW_F32, _, OP_POW_FD)
GC_EW_T_FLT(POW_F64, _, OP_POW_FD)
GC_EW_T_SINT(POW_F64, _, OP_POW_FD)
GC_EW_T_UINT(POW_F64, _, OP_POW_FD)
GC_EW_T_FLT(POW_I32, _, OP_POW_IF)
GC_EW_T_SINT(POW_I32, _, OP_POW_IS)
GC_EW_T_UINT(POW_I32, _, OP_POW_IU)
GC_EW_T_FLT(POW_I64, _, OP_POW_IF)
GC_EW_T_SINT(POW_I64, _, OP_POW_IS)
GC_EW_T_UINT(POW_I64, _, OP_POW_IU)

#define POW_ROW(BN)                                                            \
	{                                                                      \
		GC_EW_T_SINT(GC_EW_TBL, pow_##BN, _)                           \
		GC_EW_T_UINT(GC_EW_TBL, pow_##BN, _)                           \
		GC_EW_T_FLT(GC_EW_TBL, pow_##BN, _)                            \
	}
static const gc_ew_fn pow_fns[GC_DTYPE_COUNT][GC_DTYPE_COUNT] = {
	[GC_DTYPE_FLOAT] = POW_ROW(f32),
	[GC_DTYPE_DOUBLE] = POW_ROW(f64),
	[GC_DTYPE_INT32] = POW_ROW(i32),
	[GC_DTYPE_INT64] = POW_ROW(i64),
};

/* ---- kernel tables ------------------------------------------------------- */

#define TBL_NUM(N)                                                             \
	{                                                                      \
		GC_EW_T_SINT(GC_EW_TBL, N, _)                                  \
		GC_EW_T_UINT(GC_EW_TBL, N, _)                                  \
		GC_EW_T_FLT(GC_EW_TBL, N, _)                                   \
	}
static const gc_ew_fn add_fns[GC_DTYPE_COUNT] = TBL_NUM(add);
static const gc_ew_fn sub_fns[GC_DTYPE_COUNT] = TBL_NUM(sub);
static const gc_ew_fn mul_fns[GC_DTYPE_COUNT] = TBL_NUM(mul);
static const gc_ew_fn div_fns[GC_DTYPE_COUNT] = TBL_NUM(div);
static const gc_ew_fn max_fns[GC_DTYPE_COUNT] = TBL_NUM(max);
static const gc_ew_fn min_fns[GC_DTYPE_COUNT] = TBL_NUM(min);
static const gc_ew_fn fmod_fns[GC_DTYPE_COUNT] = TBL_NUM(fmod);
static const gc_ew_fn pymod_fns[GC_DTYPE_COUNT] = {
	GC_EW_T_SINT(GC_EW_TBL, pymod, _) GC_EW_T_UINT(GC_EW_TBL, pymod, _)
};
static const gc_ew_fn shl_fns[GC_DTYPE_COUNT] = { GC_EW_T_UINT(GC_EW_TBL, shl, _) };
static const gc_ew_fn shr_fns[GC_DTYPE_COUNT] = { GC_EW_T_UINT(GC_EW_TBL, shr, _) };
static const gc_ew_fn eq_fns[GC_DTYPE_COUNT] = {
	GC_EW_T_SINT(GC_EW_TBL, eq, _)
	GC_EW_T_UINT(GC_EW_TBL, eq, _)
	GC_EW_T_FLT(GC_EW_TBL, eq, _)
	[GC_DTYPE_BOOL] = eq_b,
	[GC_DTYPE_STRING] = eq_str,
};
static const gc_ew_fn lt_fns[GC_DTYPE_COUNT] = TBL_NUM(lt);
static const gc_ew_fn gt_fns[GC_DTYPE_COUNT] = TBL_NUM(gt);
static const gc_ew_fn le_fns[GC_DTYPE_COUNT] = TBL_NUM(le);
static const gc_ew_fn ge_fns[GC_DTYPE_COUNT] = TBL_NUM(ge);
static const gc_ew_fn and_fns[GC_DTYPE_COUNT] = { [GC_DTYPE_BOOL] = and_b };
static const gc_ew_fn or_fns[GC_DTYPE_COUNT] = { [GC_DTYPE_BOOL] = or_b };
static const gc_ew_fn xor_fns[GC_DTYPE_COUNT] = { [GC_DTYPE_BOOL] = xor_b };
static const gc_ew_fn band_fns[GC_DTYPE_COUNT] = {
	GC_EW_T_SINT(GC_EW_TBL, band, _) GC_EW_T_UINT(GC_EW_TBL, band, _)
};
static const gc_ew_fn bor_fns[GC_DTYPE_COUNT] = {
	GC_EW_T_SINT(GC_EW_TBL, bor, _) GC_EW_T_UINT(GC_EW_TBL, bor, _)
};
static const gc_ew_fn bxor_fns[GC_DTYPE_COUNT] = {
	GC_EW_T_SINT(GC_EW_TBL, bxor, _) GC_EW_T_UINT(GC_EW_TBL, bxor, _)
};
static const gc_ew_fn prelu_fns[GC_DTYPE_COUNT] = {
	[GC_DTYPE_INT32] = prelu_i32, [GC_DTYPE_INT64] = prelu_i64,
	[GC_DTYPE_UINT32] = prelu_u32, [GC_DTYPE_UINT64] = prelu_u64,
	[GC_DTYPE_FLOAT] = prelu_f32, [GC_DTYPE_DOUBLE] = prelu_f64,
};

/* clang-format on */
/* ---- prepare ------------------------------------------------------------- */

/*
 * Before opset 7, binary ops broadcast only B, only with broadcast=1, and
 * align B's dims with A's starting at `axis` (default: suffix). Gives B a
 * view of A's rank that numpy-style broadcasting then treats the same way.
 */
static int legacy_view(gc_kctx *k, const gc_tensor *a, const gc_tensor *b, gc_tensor *view)
{
	char s1[128], s2[128];
	*view = *b;
	if (!gc_attr_i(k, "broadcast", 0)) {
		if (!gc_same_shape(a, b))
			return gc_kerr(k, GC_EINVAL,
				       "inputs have shapes %s and %s; before opset 7 they must be "
				       "equal unless attribute 'broadcast' is 1",
				       gc_shape_str(a->dims, a->rank, s1, sizeof s1),
				       gc_shape_str(b->dims, b->rank, s2, sizeof s2));
		return gc_kok(k);
	}
	if (gc_tensor_numel(b) == 1) {
		view->rank = 0;
		return gc_kok(k);
	}
	int64_t axis = gc_attr_i(k, "axis", a->rank - b->rank);
	if (axis < 0)
		axis += a->rank;
	if (b->rank > a->rank || axis < 0 || axis + b->rank > a->rank)
		return gc_kerr(
		    k, GC_EINVAL,
		    "input 1 of shape %s cannot be broadcast to shape %s at axis %" PRId64,
		    gc_shape_str(b->dims, b->rank, s1, sizeof s1),
		    gc_shape_str(a->dims, a->rank, s2, sizeof s2), axis);
	view->rank = a->rank;
	for (int d = 0; d < a->rank; d++)
		view->dims[d] = 1;
	for (int d = 0; d < b->rank; d++) {
		int64_t bd = b->dims[d], ad = a->dims[axis + d];
		if (bd != ad && bd != 1)
			return gc_kerr(
			    k, GC_EINVAL,
			    "input 1 of shape %s does not match shape %s at axis %" PRId64,
			    gc_shape_str(b->dims, b->rank, s1, sizeof s1),
			    gc_shape_str(a->dims, a->rank, s2, sizeof s2), axis);
		view->dims[axis + d] = bd;
	}
	return gc_kok(k);
}

/*
 * Prepares out = fn(A, B) with broadcasting; fn is the kernel for the
 * operands' compute types (float32 for float16/bfloat16). out_dt is
 * UNDEFINED for A's type. `legacy`: the op had the broadcast/axis attributes
 * before opset 7.
 */
static int prepare_binary(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			  uint32_t types_a, uint32_t types_b, gc_ew_fn fn, gc_dtype out_dt,
			  bool legacy)
{
	if (gc_ew_check_input(k, in, 0, types_a) || gc_ew_check_input(k, in, 1, types_b))
		return k->err->code;
	gc_tensor bview = *in[1];
	if (legacy && n->opset < 7 && legacy_view(k, in[0], in[1], &bview))
		return k->err->code;
	const gc_tensor *ops[2] = {in[0], &bview};
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
	if (gc_broadcast_shapes(k, 2, ops, &rank, dims))
		return k->err->code;
	gc_dtype dt = in[0]->dtype;
	gc_dtype odt = out_dt == GC_DTYPE_UNDEFINED ? dt : out_dt;
	if (!fn)
		return gc_kerr(k, GC_EUNSUPPORTED, "inputs of types %s and %s are not supported",
			       gc_dtype_name(dt), gc_dtype_name(in[1]->dtype));
	gc_ew_state *s = gc_ew_state_new(k, n, 1);
	if (!s)
		return k->err->code;
	gc_set_shape(out[0], odt, rank, dims);
	gc_ew_plan_init(&s->plans[0], 2, ops, rank, dims, odt);
	const gc_dtype dts[3] = {dt, in[1]->dtype, odt};
	gc_ew_set_fn(&s->fn, &s->arg, &s->half, fn, &s->prm, 2, dts);
	n->inplace_ok = gc_same_shape(in[0], out[0]) && gc_dtype_size(dt) == gc_dtype_size(odt);
	n->run = gc_ew_run;
	return gc_kok(k);
}

/* Same-type operands: checks B against A first for a clearer message. */
static int prepare_same(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			uint32_t types, const gc_ew_fn *fns, gc_dtype out_dt, bool legacy)
{
	if (gc_ew_check_input(k, in, 0, types) || gc_ew_check_input(k, in, 1, types) ||
	    gc_ew_check_same_type(k, in, 1))
		return k->err->code;
	return prepare_binary(k, n, in, out, types, types, fns[gc_ew_compute_type(in[0]->dtype)],
			      out_dt, legacy);
}

/* clang-format off */
#define BINARY_OP(Name, types, fns, out_dt, legacy)                            \
	int gc_prepare_##Name(gc_kctx *k, gc_node *n, gc_tensor *const *in,     \
			      gc_tensor *const *out)                            \
	{                                                                      \
		return prepare_same(k, n, in, out, types, fns, out_dt, legacy); \
	}

BINARY_OP(Add, GC_EW_NUM, add_fns, GC_DTYPE_UNDEFINED, true)
BINARY_OP(Sub, GC_EW_NUM, sub_fns, GC_DTYPE_UNDEFINED, true)
BINARY_OP(Mul, GC_EW_NUM, mul_fns, GC_DTYPE_UNDEFINED, true)
BINARY_OP(Div, GC_EW_NUM, div_fns, GC_DTYPE_UNDEFINED, true)
BINARY_OP(Less, GC_EW_NUM, lt_fns, GC_DTYPE_BOOL, true)
BINARY_OP(Greater, GC_EW_NUM, gt_fns, GC_DTYPE_BOOL, true)
BINARY_OP(LessOrEqual, GC_EW_NUM, le_fns, GC_DTYPE_BOOL, false)
BINARY_OP(GreaterOrEqual, GC_EW_NUM, ge_fns, GC_DTYPE_BOOL, false)
BINARY_OP(And, GC_EW_BIT(BOOL), and_fns, GC_DTYPE_BOOL, true)
BINARY_OP(Or, GC_EW_BIT(BOOL), or_fns, GC_DTYPE_BOOL, true)
BINARY_OP(Xor, GC_EW_BIT(BOOL), xor_fns, GC_DTYPE_BOOL, true)
BINARY_OP(BitwiseAnd, GC_EW_INT, band_fns, GC_DTYPE_UNDEFINED, false)
BINARY_OP(BitwiseOr, GC_EW_INT, bor_fns, GC_DTYPE_UNDEFINED, false)
BINARY_OP(BitwiseXor, GC_EW_INT, bxor_fns, GC_DTYPE_UNDEFINED, false)
/* clang-format on */

/* Equal: strings from opset 19. */
int gc_prepare_Equal(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	uint32_t types = GC_EW_NUM | GC_EW_BIT(BOOL);
	if (n->opset >= 19)
		types |= GC_EW_BIT(STRING);
	return prepare_same(k, n, in, out, types, eq_fns, GC_DTYPE_BOOL, true);
}

int gc_prepare_Pow(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const uint32_t base = GC_EW_BIT(INT32) | GC_EW_BIT(INT64) | GC_EW_FLT;
	if (gc_ew_check_input(k, in, 0, base) || gc_ew_check_input(k, in, 1, GC_EW_NUM))
		return k->err->code;
	gc_dtype bt = gc_ew_compute_type(in[0]->dtype), et = gc_ew_compute_type(in[1]->dtype);
	return prepare_binary(k, n, in, out, base, GC_EW_NUM, pow_fns[bt][et], GC_DTYPE_UNDEFINED,
			      true);
}

int gc_prepare_Mod(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	int64_t fmod_attr = gc_attr_i(k, "fmod", 0);
	if (gc_kok(k))
		return k->err->code;
	if (fmod_attr != 0 && fmod_attr != 1)
		return gc_kerr(k, GC_EINVAL, "attribute 'fmod' is %" PRId64 ", expected 0 or 1",
			       fmod_attr);
	if (gc_ew_check_input(k, in, 0, GC_EW_NUM))
		return k->err->code;
	if (!fmod_attr && ((GC_EW_FLT >> in[0]->dtype) & 1))
		return gc_kerr(k, GC_EINVAL,
			       "input type %s is floating point, which needs attribute fmod=1",
			       gc_dtype_name(in[0]->dtype));
	return prepare_same(k, n, in, out, GC_EW_NUM, fmod_attr ? fmod_fns : pymod_fns,
			    GC_DTYPE_UNDEFINED, false);
}

int gc_prepare_BitShift(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const char *dir = gc_attr_s(k, "direction", NULL);
	if (gc_kok(k))
		return k->err->code;
	if (!dir)
		return gc_kerr(k, GC_EINVAL, "attribute 'direction' is required (LEFT or RIGHT)");
	const gc_ew_fn *fns = !strcmp(dir, "LEFT")    ? shl_fns
			      : !strcmp(dir, "RIGHT") ? shr_fns
						      : NULL;
	if (!fns)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'direction' is \"%s\", expected LEFT or RIGHT", dir);
	return prepare_same(k, n, in, out, GC_EW_UINT, fns, GC_DTYPE_UNDEFINED, false);
}

/* PRelu: slope broadcasts to X (unidirectionally); the output has X's shape. */
int gc_prepare_PRelu(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const uint32_t types =
	    GC_EW_FLT | GC_EW_BIT(INT32) | GC_EW_BIT(INT64) | GC_EW_BIT(UINT32) | GC_EW_BIT(UINT64);
	if (gc_ew_check_input(k, in, 0, types) || gc_ew_check_input(k, in, 1, types) ||
	    gc_ew_check_same_type(k, in, 1))
		return k->err->code;
	const gc_tensor *x = in[0];
	gc_tensor slope = *in[1];
	/* Before opset 7 a 1-D slope runs along the channel axis (1). */
	if (n->opset < 7 && slope.rank == 1 && x->rank >= 2 && slope.dims[0] == x->dims[1] &&
	    slope.dims[0] != 1) {
		slope.rank = x->rank - 1;
		for (int d = 1; d < slope.rank; d++)
			slope.dims[d] = 1;
	}
	const gc_tensor *ops[2] = {x, &slope};
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
	char s1[128], s2[128];
	if (gc_broadcast_shapes(k, 2, ops, &rank, dims))
		return k->err->code;
	gc_tensor bt = *x;
	bt.rank = rank;
	memcpy(bt.dims, dims, sizeof dims);
	if (!gc_same_shape(&bt, x))
		return gc_kerr(k, GC_EINVAL, "slope of shape %s does not broadcast to X's shape %s",
			       gc_shape_str(in[1]->dims, in[1]->rank, s1, sizeof s1),
			       gc_shape_str(x->dims, x->rank, s2, sizeof s2));
	gc_ew_state *s = gc_ew_state_new(k, n, 1);
	if (!s)
		return k->err->code;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	gc_ew_plan_init(&s->plans[0], 2, ops, x->rank, x->dims, x->dtype);
	const gc_dtype dts[3] = {x->dtype, x->dtype, x->dtype};
	gc_ew_set_fn(&s->fn, &s->arg, &s->half, prelu_fns[gc_ew_compute_type(x->dtype)], NULL, 2,
		     dts);
	n->inplace_ok = true;
	n->run = gc_ew_run;
	return gc_kok(k);
}

/* ---- variadic: Sum, Max, Min, Mean --------------------------------------- */

/* clang-format off */
#define OP_DIVBY(x, p, T, W) ((x) / (T)(p)->divisor)
GC_EW_T_FLT(GC_EW_GEN_UN, divby, OP_DIVBY)
static const gc_ew_fn divby_fns[GC_DTYPE_COUNT] = { GC_EW_T_FLT(GC_EW_TBL, divby, _) };
/* clang-format on */

/* The inputs fold into the output: plan 0 is out = in0 (+) in1, plan j is
 * out = out (+) in[j+1]; Mean's last plan divides the sum in place. */
static int run_variadic(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_ew_state *s = n->state;
	if (n->n_in == 1) {
		if (out[0]->data != in[0]->data)
			memcpy(out[0]->data, in[0]->data, (size_t)gc_tensor_nbytes(out[0]));
		return 0;
	}
	int steps = n->n_in - 1;
	for (int j = 0; j < steps; j++) {
		const void *src[2] = {j ? out[0]->data : in[0]->data, in[j + 1]->data};
		gc_ew_plan_run_par(k->threads, &s->plans[j], s->fn, s->arg, src, out[0]->data);
	}
	if (s->post) {
		const void *src[1] = {out[0]->data};
		gc_ew_plan_run_par(k->threads, &s->plans[steps], s->post, s->post_arg, src,
				   out[0]->data);
	}
	return 0;
}

static int prepare_variadic(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			    uint32_t types, const gc_ew_fn *fns, bool mean)
{
	int ni = n->n_in;
	if (ni < 1)
		return gc_kerr(k, GC_EINVAL, "needs at least one input");
	if (ni > 1024)
		return gc_kerr(k, GC_ELIMIT, "%d inputs, at most 1024 supported", ni);
	for (int i = 0; i < ni; i++)
		if (gc_ew_check_input(k, in, i, types) || gc_ew_check_same_type(k, in, i))
			return k->err->code;
	char s1[128], s2[128];
	if (n->opset < 8)
		for (int i = 1; i < ni; i++)
			if (!gc_same_shape(in[i], in[0]))
				return gc_kerr(
				    k, GC_EINVAL,
				    "input %d has shape %s but input 0 has shape %s; before "
				    "opset 8 all inputs must have the same shape",
				    i, gc_shape_str(in[i]->dims, in[i]->rank, s1, sizeof s1),
				    gc_shape_str(in[0]->dims, in[0]->rank, s2, sizeof s2));
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
	if (gc_broadcast_shapes(k, ni, (const gc_tensor *const *)in, &rank, dims))
		return k->err->code;
	gc_dtype dt = in[0]->dtype, ct = gc_ew_compute_type(dt);
	int steps = ni - 1;
	bool post = mean && ni > 1;
	gc_ew_state *s = gc_ew_state_new(k, n, steps + (post ? 1 : 0));
	if (!s)
		return k->err->code;
	gc_set_shape(out[0], dt, rank, dims);
	for (int j = 0; j < steps; j++) {
		const gc_tensor *ops[2] = {j ? out[0] : in[0], in[j + 1]};
		gc_ew_plan_init(&s->plans[j], 2, ops, rank, dims, dt);
	}
	const gc_dtype dts[3] = {dt, dt, dt};
	gc_ew_set_fn(&s->fn, &s->arg, &s->half, fns[ct], NULL, 2, dts);
	if (post) {
		const gc_tensor *ops[1] = {out[0]};
		gc_ew_plan_init(&s->plans[steps], 1, ops, rank, dims, dt);
		s->prm.divisor = ni;
		gc_ew_set_fn(&s->post, &s->post_arg, &s->post_half, divby_fns[ct], &s->prm, 1, dts);
	}
	/* Later steps reread the output, so only in0 may share its memory. */
	n->inplace_ok = ni <= 2 && gc_same_shape(in[0], out[0]);
	n->run = run_variadic;
	return gc_kok(k);
}

int gc_prepare_Sum(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_variadic(k, n, in, out, GC_EW_FLT, add_fns, false);
}

int gc_prepare_Mean(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_variadic(k, n, in, out, GC_EW_FLT, add_fns, true);
}

int gc_prepare_Max(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_variadic(k, n, in, out, GC_EW_NUM, max_fns, false);
}

int gc_prepare_Min(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_variadic(k, n, in, out, GC_EW_NUM, min_fns, false);
}
