/*
 * Unary elementwise ops: math functions, activations, Not, IsNaN/IsInf, and
 * Clip. float16/bfloat16 compute in float through the half adapter.
 */
#include "elementwise-impl.h"

#include <float.h>
#include <inttypes.h>
#include <tgmath.h>

#include "../alloc.h"
#include "../ops.h"
#include "nn-par.h"
#include "nn.h" /* GC_NN_SIMD */
#include "vmath.h"

/* clang-format off */
/* float32 through vmath.h (vectorised), double through libm */
#define EXP_(x) _Generic((x), float: gc_vm_expf, default: exp)(x)
#define LOG_(x) _Generic((x), float: gc_vm_logf, default: log)(x)
#define TANH_(x) _Generic((x), float: gc_vm_tanhf, default: tanh)(x)
#define ERF_(x) _Generic((x), float: gc_vm_erff, default: erf)(x)
#define SOFTPLUS_(x) _Generic((x), float: gc_vm_softplusf, default: softplus_d)(x)

/* log(1 + e^x) without overflowing for large x */
static inline double softplus_d(double x)
{
	return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* ---- kernels: o = OP(x, p, T, W), p the node's gc_ew_params ------------- */

#define OP_SQRT(x, p, T, W) sqrt(x)
#define OP_EXP(x, p, T, W) EXP_(x)
#define OP_LOG(x, p, T, W) LOG_(x)
#define OP_TANH(x, p, T, W) TANH_(x)
#define OP_ERF(x, p, T, W) ERF_(x)
#define OP_SIN(x, p, T, W) sin(x)
#define OP_COS(x, p, T, W) cos(x)
#define OP_TAN(x, p, T, W) tan(x)
#define OP_ASIN(x, p, T, W) asin(x)
#define OP_ACOS(x, p, T, W) acos(x)
#define OP_ATAN(x, p, T, W) atan(x)
#define OP_SINH(x, p, T, W) sinh(x)
#define OP_COSH(x, p, T, W) cosh(x)
#define OP_ASINH(x, p, T, W) asinh(x)
#define OP_ACOSH(x, p, T, W) acosh(x)
#define OP_ATANH(x, p, T, W) atanh(x)
#define OP_FLOOR(x, p, T, W) floor(x)
#define OP_CEIL(x, p, T, W) ceil(x)
#define OP_ROUND(x, p, T, W) nearbyint(x) /* halves to even */
#define OP_RECIP(x, p, T, W) ((T)1 / (x))
#define OP_SIGMOID(x, p, T, W) ((T)1 / ((T)1 + EXP_(-(x))))
#define OP_SWISH(x, p, T, W) ((x) / ((T)1 + EXP_(-(x))))
#define OP_GELU(x, p, T, W) ((T)0.5 * (x) * ((T)1 + ERF_((x) * (T)0.70710678118654752440)))
/* Gelu-20 approximate="tanh": sqrt(2/pi) (x + 0.044715 x^3) */
#define OP_GELU_TANH(x, p, T, W)                                               \
	((T)0.5 * (x) *                                                        \
	 ((T)1 + TANH_((T)0.79788456080286535588 * ((x) + (T)0.044715 * (x) * (x) * (x)))))
#define OP_NEG_F(x, p, T, W) (-(x))
#define OP_ABS_F(x, p, T, W) fabs(x)
#define OP_RELU_F(x, p, T, W) ((x) < 0 ? (T)0 : (x))
#define OP_SIGN_F(x, p, T, W) ((x) > 0 ? (T)1 : (x) < 0 ? (T)-1 : (x))
#define OP_LEAKY(x, p, T, W) ((x) * ((x) < 0 ? (T)(p)->alpha : (T)1))
#define CLAMP01(v, T) ((v) < 0 ? (T)0 : (v) > 1 ? (T)1 : (v))
#define OP_HSIG(x, p, T, W) CLAMP01((T)(p)->alpha * (x) + (T)(p)->beta, T)
#define OP_HSWISH(x, p, T, W) ((x) * CLAMP01((T)(1.0 / 6) * (x) + (T)0.5, T))
#define OP_ELU(x, p, T, W) ((x) > 0 ? (x) : (EXP_(x) - (T)1) * (T)(p)->alpha)
#define OP_SELU(x, p, T, W)                                                    \
	((x) > 0 ? (x) * (T)(p)->gamma : (EXP_(x) - (T)1) * (T)(p)->alpha * (T)(p)->gamma)
#define OP_CELU(x, p, T, W)                                                    \
	((x) > 0 ? (x) : (T)(p)->alpha * (EXP_((x) / (T)(p)->alpha) - (T)1))
#define OP_THRELU(x, p, T, W) ((x) > (T)(p)->alpha ? (x) : (T)0)
#define OP_SOFTPLUS(x, p, T, W) SOFTPLUS_(x)
#define OP_SOFTSIGN(x, p, T, W) ((x) / ((T)1 + fabs(x)))
#define OP_MISH(x, p, T, W) ((x) * TANH_(SOFTPLUS_(x)))
/* Shrink: alpha holds lambd, beta holds bias. */
#define OP_SHRINK_F(x, p, T, W)                                                \
	((x) < -(T)(p)->alpha  ? (x) + (T)(p)->beta                            \
	 : (x) > (T)(p)->alpha ? (x) - (T)(p)->beta                            \
			       : (T)0)
#define OP_ISNAN(x, p, T, W) ((x) != (x))
#define OP_ISINF(x, p, T, W)                                                   \
	(((p)->i1 && (x) == (T)INFINITY) || ((p)->i0 && (x) == -(T)INFINITY))

#define OP_NEG_S(x, p, T, W) (T)((W)0 - (W)(x))
#define OP_ABS_S(x, p, T, W) ((x) < 0 ? (T)((W)0 - (W)(x)) : (x))
#define OP_ABS_U(x, p, T, W) (x)
#define OP_RELU_S(x, p, T, W) ((x) < 0 ? (T)0 : (x))
#define OP_SIGN_S(x, p, T, W) (T)(((x) > 0) - ((x) < 0))
#define OP_SIGN_U(x, p, T, W) (T)((x) > 0)
#define OP_ERF_I(x, p, T, W) (T)gc_ew_f2i64(erf((double)(x)))
#define OP_SHRINK_I(x, p, T, W) (T)gc_ew_f2i64(OP_SHRINK_F((double)(x), p, double, W))
#define OP_NOT(x, p, T, W) ((x) == 0)
#define OP_BNOT(x, p, T, W) (T)(~(x))

/* float32 and float64 (float16/bfloat16 use the float32 kernel) */
#define GEN_F(N, OP) GC_EW_T_FLT(GC_EW_GEN_UN, N, OP)
/* the same, the float32 kernel compiled for AVX-512 and AVX2+FMA too (picked
 * once, when the library loads): for what vectorises (no libm call) */
#define GEN_FV(N, OP)                                                          \
	GC_NN_SIMD GC_EW_UN(N##_f32, float, float, float, OP)                  \
	GC_EW_UN(N##_f64, double, double, double, OP)
#define TBL_F(N) { GC_EW_T_FLT(GC_EW_TBL, N, _) }
/* vectorised at O3, the file being built without errno (Makefile) */
#pragma GCC push_options
#pragma GCC optimize("O3")
GEN_FV(sqrt, OP_SQRT)
#pragma GCC pop_options
GEN_FV(exp, OP_EXP)
GEN_FV(log, OP_LOG)
GEN_FV(tanh, OP_TANH)
GEN_F(sin, OP_SIN)
GEN_F(cos, OP_COS)
GEN_F(tan, OP_TAN)
GEN_F(asin, OP_ASIN)
GEN_F(acos, OP_ACOS)
GEN_F(atan, OP_ATAN)
GEN_F(sinh, OP_SINH)
GEN_F(cosh, OP_COSH)
GEN_F(asinh, OP_ASINH)
GEN_F(acosh, OP_ACOSH)
GEN_F(atanh, OP_ATANH)
GEN_F(floor, OP_FLOOR)
GEN_F(ceil, OP_CEIL)
GEN_F(round, OP_ROUND)
GEN_FV(recip, OP_RECIP)
GEN_FV(sigmoid, OP_SIGMOID)
GEN_FV(swish, OP_SWISH)
GEN_FV(gelu, OP_GELU)
GEN_FV(gelu_tanh, OP_GELU_TANH)
GEN_FV(leaky, OP_LEAKY)
GEN_FV(hsig, OP_HSIG)
GEN_FV(hswish, OP_HSWISH)
GEN_FV(elu, OP_ELU)
GEN_FV(selu, OP_SELU)
GEN_FV(celu, OP_CELU)
GEN_F(threlu, OP_THRELU)
GEN_FV(softplus, OP_SOFTPLUS)
GEN_FV(softsign, OP_SOFTSIGN)
GEN_FV(mish, OP_MISH)
GC_EW_T_FLT(GC_EW_GEN_UNB, isnan, OP_ISNAN)
GC_EW_T_FLT(GC_EW_GEN_UNB, isinf, OP_ISINF)

/* ops that also take integers */
GC_EW_T_FLT(GC_EW_GEN_UN, neg, OP_NEG_F)
GC_EW_T_SINT(GC_EW_GEN_UN, neg, OP_NEG_S)
GC_EW_T_FLT(GC_EW_GEN_UN, abs, OP_ABS_F)
GC_EW_T_SINT(GC_EW_GEN_UN, abs, OP_ABS_S)
GC_EW_T_UINT(GC_EW_GEN_UN, abs, OP_ABS_U)
GEN_FV(relu, OP_RELU_F)
GC_EW_T_SINT(GC_EW_GEN_UN, relu, OP_RELU_S)
GC_EW_T_FLT(GC_EW_GEN_UN, sign, OP_SIGN_F)
GC_EW_T_SINT(GC_EW_GEN_UN, sign, OP_SIGN_S)
GC_EW_T_UINT(GC_EW_GEN_UN, sign, OP_SIGN_U)
GEN_FV(erf, OP_ERF)
GC_EW_T_SINT(GC_EW_GEN_UN, erf, OP_ERF_I)
GC_EW_T_UINT(GC_EW_GEN_UN, erf, OP_ERF_I)
GC_EW_T_FLT(GC_EW_GEN_UN, shrink, OP_SHRINK_F)
GC_EW_T_SINT(GC_EW_GEN_UN, shrink, OP_SHRINK_I)
GC_EW_T_UINT(GC_EW_GEN_UN, shrink, OP_SHRINK_I)
GC_EW_UN(not_b, uint8_t, uint8_t, uint32_t, OP_NOT)
GC_EW_T_SINT(GC_EW_GEN_UN, bnot, OP_BNOT)
GC_EW_T_UINT(GC_EW_GEN_UN, bnot, OP_BNOT)

#define TBL_INT(N) { GC_EW_T_SINT(GC_EW_TBL, N, _) GC_EW_T_UINT(GC_EW_TBL, N, _) }
#define TBL_FS(N) { GC_EW_T_FLT(GC_EW_TBL, N, _) GC_EW_T_SINT(GC_EW_TBL, N, _) }
#define TBL_NUM(N)                                                             \
	{                                                                      \
		GC_EW_T_FLT(GC_EW_TBL, N, _)                                   \
		GC_EW_T_SINT(GC_EW_TBL, N, _)                                  \
		GC_EW_T_UINT(GC_EW_TBL, N, _)                                  \
	}

/* clang-format on */
/* ---- prepare ------------------------------------------------------------- */

#define F4 GC_EW_FLT
#define F3 (GC_EW_BIT(FLOAT) | GC_EW_BIT(DOUBLE) | GC_EW_BIT(FLOAT16))
#define SF4 (GC_EW_FLT | GC_EW_SINT)

static int prepare_unary(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			 uint32_t types, const gc_ew_fn *fns, gc_dtype out_dt,
			 const gc_ew_params *prm)
{
	/* Opset 22 gave bfloat16 to the float ops that lacked it (F3). */
	if (types == F3 && n->opset >= 22)
		types = F4;
	if (gc_kok(k) || gc_ew_check_input(k, in, 0, types))
		return k->err->code;
	const gc_tensor *x = in[0];
	gc_dtype dt = x->dtype, odt = out_dt == GC_DTYPE_UNDEFINED ? dt : out_dt;
	gc_ew_fn fn = fns[gc_ew_compute_type(dt)];
	if (!fn)
		return gc_kerr(k, GC_EUNSUPPORTED, "input type %s is not supported",
			       gc_dtype_name(dt));
	gc_ew_state *s = gc_ew_state_new(k, n, 1);
	if (!s)
		return k->err->code;
	if (prm)
		s->prm = *prm;
	gc_set_shape(out[0], odt, x->rank, x->dims);
	gc_ew_plan_init(&s->plans[0], 1, &x, x->rank, x->dims, odt);
	const gc_dtype dts[2] = {dt, odt};
	gc_ew_set_fn(&s->fn, &s->arg, &s->half, fn, &s->prm, 1, dts);
	n->inplace_ok = gc_dtype_size(dt) == gc_dtype_size(odt);
	n->run = gc_ew_run;
	return gc_kok(k);
}

/* clang-format off */
#define UNARY_OP(Name, types, tbl, out_dt)                                     \
	int gc_prepare_##Name(gc_kctx *k, gc_node *n, gc_tensor *const *in,     \
			      gc_tensor *const *out)                            \
	{                                                                      \
		static const gc_ew_fn fns[GC_DTYPE_COUNT] = tbl;               \
		return prepare_unary(k, n, in, out, types, fns, out_dt, NULL); \
	}

UNARY_OP(Sqrt, F4, TBL_F(sqrt), GC_DTYPE_UNDEFINED)
UNARY_OP(Exp, F4, TBL_F(exp), GC_DTYPE_UNDEFINED)
UNARY_OP(Log, F4, TBL_F(log), GC_DTYPE_UNDEFINED)
UNARY_OP(Tanh, F4, TBL_F(tanh), GC_DTYPE_UNDEFINED)
UNARY_OP(Sigmoid, F4, TBL_F(sigmoid), GC_DTYPE_UNDEFINED)
UNARY_OP(Swish, F4, TBL_F(swish), GC_DTYPE_UNDEFINED)
UNARY_OP(Reciprocal, F4, TBL_F(recip), GC_DTYPE_UNDEFINED)
UNARY_OP(Floor, F4, TBL_F(floor), GC_DTYPE_UNDEFINED)
UNARY_OP(Ceil, F4, TBL_F(ceil), GC_DTYPE_UNDEFINED)
UNARY_OP(Round, F3, TBL_F(round), GC_DTYPE_UNDEFINED)
UNARY_OP(Sin, F3, TBL_F(sin), GC_DTYPE_UNDEFINED)
UNARY_OP(Cos, F3, TBL_F(cos), GC_DTYPE_UNDEFINED)
UNARY_OP(Tan, F3, TBL_F(tan), GC_DTYPE_UNDEFINED)
UNARY_OP(Asin, F3, TBL_F(asin), GC_DTYPE_UNDEFINED)
UNARY_OP(Acos, F3, TBL_F(acos), GC_DTYPE_UNDEFINED)
UNARY_OP(Atan, F3, TBL_F(atan), GC_DTYPE_UNDEFINED)
UNARY_OP(Sinh, F3, TBL_F(sinh), GC_DTYPE_UNDEFINED)
UNARY_OP(Cosh, F3, TBL_F(cosh), GC_DTYPE_UNDEFINED)
UNARY_OP(Asinh, F3, TBL_F(asinh), GC_DTYPE_UNDEFINED)
UNARY_OP(Acosh, F3, TBL_F(acosh), GC_DTYPE_UNDEFINED)
UNARY_OP(Atanh, F3, TBL_F(atanh), GC_DTYPE_UNDEFINED)
UNARY_OP(HardSwish, F3, TBL_F(hswish), GC_DTYPE_UNDEFINED)
UNARY_OP(Softplus, F3, TBL_F(softplus), GC_DTYPE_UNDEFINED)
UNARY_OP(Softsign, F3, TBL_F(softsign), GC_DTYPE_UNDEFINED)
UNARY_OP(Mish, F4, TBL_F(mish), GC_DTYPE_UNDEFINED)
UNARY_OP(IsNaN, F4, TBL_F(isnan), GC_DTYPE_BOOL)
UNARY_OP(Neg, SF4, TBL_FS(neg), GC_DTYPE_UNDEFINED)
UNARY_OP(Relu, SF4, TBL_FS(relu), GC_DTYPE_UNDEFINED)
UNARY_OP(Abs, GC_EW_NUM, TBL_NUM(abs), GC_DTYPE_UNDEFINED)
UNARY_OP(Sign, GC_EW_NUM, TBL_NUM(sign), GC_DTYPE_UNDEFINED)
UNARY_OP(Erf, GC_EW_NUM, TBL_NUM(erf), GC_DTYPE_UNDEFINED)
UNARY_OP(Not, GC_EW_BIT(BOOL), { [GC_DTYPE_BOOL] = not_b }, GC_DTYPE_UNDEFINED)
UNARY_OP(BitwiseNot, GC_EW_INT, TBL_INT(bnot), GC_DTYPE_UNDEFINED)
/* clang-format on */

/* com.graphcc::Gelu (exact) and ONNX's Gelu-20 (approximate "none" or
 * "tanh"). */
int gc_prepare_Gelu(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const gc_ew_fn exact[GC_DTYPE_COUNT] = TBL_F(gelu);
	static const gc_ew_fn tanh_form[GC_DTYPE_COUNT] = TBL_F(gelu_tanh);
	(void)n;
	const char *a = gc_attr_s(k, "approximate", "none");
	if (!gc_kok(k) && strcmp(a, "none") && strcmp(a, "tanh"))
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'approximate' is \"%s\", expected \"none\" or \"tanh\"", a);
	return prepare_unary(k, n, in, out, F4, strcmp(a, "tanh") ? exact : tanh_form,
			     GC_DTYPE_UNDEFINED, NULL);
}

/* Ops with float attributes: ATTR_OP(Name, types, table, then a name and a
 * default for each of alpha, beta, gamma; a NULL name where the op has no
 * such attribute). Shrink keeps lambd in alpha and bias in beta. */
static int prepare_attr(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			uint32_t types, const gc_ew_fn *fns, const char *const *names,
			const float *defs)
{
	gc_ew_params prm = {0};
	float *slot[3] = {&prm.alpha, &prm.beta, &prm.gamma};
	for (int i = 0; i < 3; i++)
		if (names[i])
			*slot[i] = gc_attr_f(k, names[i], defs[i]);
	return prepare_unary(k, n, in, out, types, fns, GC_DTYPE_UNDEFINED, &prm);
}

/* clang-format off */
#define ATTR_OP(Name, types, tbl, a, da, b, db, c, dc)                         \
	int gc_prepare_##Name(gc_kctx *k, gc_node *n, gc_tensor *const *in,     \
			      gc_tensor *const *out)                            \
	{                                                                      \
		static const gc_ew_fn fns[GC_DTYPE_COUNT] = tbl;               \
		static const char *const names[3] = { a, b, c };               \
		static const float defs[3] = { da, db, dc };                   \
		return prepare_attr(k, n, in, out, types, fns, names, defs);   \
	}

ATTR_OP(LeakyRelu, F4, TBL_F(leaky), "alpha", 0.01f, NULL, 0, NULL, 0)
ATTR_OP(HardSigmoid, F3, TBL_F(hsig), "alpha", 0.2f, "beta", 0.5f, NULL, 0)
ATTR_OP(Elu, F3, TBL_F(elu), "alpha", 1.0f, NULL, 0, NULL, 0)
ATTR_OP(Selu, F3, TBL_F(selu), "alpha", 1.67326319217681884765625f, NULL, 0, "gamma",
	1.05070102214813232421875f)
ATTR_OP(Celu, GC_EW_BIT(FLOAT), TBL_F(celu), "alpha", 1.0f, NULL, 0, NULL, 0)
ATTR_OP(ThresholdedRelu, F3, TBL_F(threlu), "alpha", 1.0f, NULL, 0, NULL, 0)
ATTR_OP(Shrink, F3 | GC_EW_INT, TBL_NUM(shrink), "lambd", 0.5f, "bias", 0.0f, NULL, 0)
/* clang-format on */

int gc_prepare_IsInf(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const gc_ew_fn fns[GC_DTYPE_COUNT] = TBL_F(isinf);
	gc_ew_params prm = {0};
	prm.i0 = gc_attr_i(k, "detect_negative", 1);
	prm.i1 = gc_attr_i(k, "detect_positive", 1);
	return prepare_unary(k, n, in, out, F4, fns, GC_DTYPE_BOOL, &prm);
}

/* ---- Clip ----------------------------------------------------------------- */

/*
 * Before opset 11 the bounds are float attributes; since then they are the
 * optional scalar inputs 1 and 2, read at run time (they need not be
 * constants). An absent bound is the type's lowest/highest value; when
 * min > max every element becomes max.
 */
typedef struct clip_state {
	bool legacy, has_lo, has_hi;
	float lo, hi; /* legacy attribute values */
	uint8_t half; /* GC_DTYPE_FLOAT16/BFLOAT16 or 0 */
} clip_state;

/* The elements split over the threads, an element a cycle as the other
 * element-wise kernels count (elementwise.c). lo and hi point at T. */
typedef struct clip_job {
	const void *a, *lo, *hi;
	void *o;
	int64_t cnt;
} clip_job;

/* clang-format off */
#define CLIP_RUN(sfx, T, LOWEST, HIGHEST)                                      \
	static void clip_part_##sfx(void *arg, int part, int parts, int slot) \
	{                                                                      \
		(void)slot;                                                    \
		const clip_job *j = arg;                                       \
		const T lo = *(const T *)j->lo, hi = *(const T *)j->hi;        \
		const T *a = j->a;                                             \
		T *o = j->o;                                                   \
		int64_t i0, i1;                                                \
		gc_nn_part_range(j->cnt, part, parts, &i0, &i1);               \
		for (int64_t i = i0; i < i1; i++) {                            \
			T x = a[i] < lo ? lo : a[i];                           \
			o[i] = x > hi ? hi : x;                                \
		}                                                              \
	}                                                                      \
	static int clip_##sfx(gc_kctx *k, const gc_node *n, gc_tensor *const *in, \
			      gc_tensor *const *out)                            \
	{                                                                      \
		const clip_state *s = n->state;                                \
		T lo = LOWEST, hi = HIGHEST;                                   \
		if (s->legacy) {                                               \
			if (s->has_lo)                                         \
				lo = (T)s->lo;                                 \
			if (s->has_hi)                                         \
				hi = (T)s->hi;                                 \
		} else {                                                       \
			if (n->n_in > 1 && in[1])                              \
				lo = *(const T *)in[1]->data;                  \
			if (n->n_in > 2 && in[2])                              \
				hi = *(const T *)in[2]->data;                  \
		}                                                              \
		clip_job j = {in[0]->data, &lo, &hi, out[0]->data,             \
			      gc_tensor_numel(in[0])};                         \
		gc_nn_run_parts(gc_nn_par_threads(k->threads, (double)j.cnt), \
				j.cnt, clip_part_##sfx, &j);                   \
		return 0;                                                      \
	}

CLIP_RUN(f32, float, -FLT_MAX, FLT_MAX)
CLIP_RUN(f64, double, -DBL_MAX, DBL_MAX)
CLIP_RUN(i8, int8_t, INT8_MIN, INT8_MAX)
CLIP_RUN(i16, int16_t, INT16_MIN, INT16_MAX)
CLIP_RUN(i32, int32_t, INT32_MIN, INT32_MAX)
CLIP_RUN(i64, int64_t, INT64_MIN, INT64_MAX)
CLIP_RUN(u8, uint8_t, 0, UINT8_MAX)
CLIP_RUN(u16, uint16_t, 0, UINT16_MAX)
CLIP_RUN(u32, uint32_t, 0, UINT32_MAX)
CLIP_RUN(u64, uint64_t, 0, UINT64_MAX)
/* clang-format on */

static inline float half_load(uint8_t kind, uint16_t h)
{
	return kind == GC_DTYPE_FLOAT16 ? gc_f16_to_f32(h) : gc_bf16_to_f32(h);
}

static int clip_half(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const clip_state *s = n->state;
	float lo = s->half == GC_DTYPE_FLOAT16 ? -65504.0f : -3.38953139e38f;
	float hi = -lo;
	if (s->legacy) {
		if (s->has_lo)
			lo = s->lo;
		if (s->has_hi)
			hi = s->hi;
	} else {
		if (n->n_in > 1 && in[1])
			lo = half_load(s->half, *(const uint16_t *)in[1]->data);
		if (n->n_in > 2 && in[2])
			hi = half_load(s->half, *(const uint16_t *)in[2]->data);
	}
	const uint16_t *a = in[0]->data;
	uint16_t *o = out[0]->data;
	int64_t cnt = gc_tensor_numel(in[0]);
	for (int64_t i = 0; i < cnt; i++) {
		float x = half_load(s->half, a[i]);
		x = x < lo ? lo : x;
		x = x > hi ? hi : x;
		o[i] = s->half == GC_DTYPE_FLOAT16 ? gc_f32_to_f16(x) : gc_f32_to_bf16(x);
	}
	return 0;
}

int gc_prepare_Clip(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const gc_run_fn runs[GC_DTYPE_COUNT] = {
	    [GC_DTYPE_FLOAT] = clip_f32,    [GC_DTYPE_DOUBLE] = clip_f64,
	    [GC_DTYPE_INT8] = clip_i8,	    [GC_DTYPE_INT16] = clip_i16,
	    [GC_DTYPE_INT32] = clip_i32,    [GC_DTYPE_INT64] = clip_i64,
	    [GC_DTYPE_UINT8] = clip_u8,	    [GC_DTYPE_UINT16] = clip_u16,
	    [GC_DTYPE_UINT32] = clip_u32,   [GC_DTYPE_UINT64] = clip_u64,
	    [GC_DTYPE_FLOAT16] = clip_half, [GC_DTYPE_BFLOAT16] = clip_half,
	};
	clip_state cs = {0};
	cs.legacy = n->opset < 11;
	uint32_t types = cs.legacy ? F3 : GC_EW_NUM;
	if (gc_ew_check_input(k, in, 0, types))
		return k->err->code;
	const gc_tensor *x = in[0];
	if (cs.legacy) {
		if (n->n_in > 1)
			return gc_kerr(k, GC_EINVAL,
				       "before opset 11, Clip takes one input (min and max are "
				       "attributes), not %d",
				       n->n_in);
		cs.has_lo = gc_attr_find(n, "min") != NULL;
		cs.has_hi = gc_attr_find(n, "max") != NULL;
		cs.lo = gc_attr_f(k, "min", -FLT_MAX);
		cs.hi = gc_attr_f(k, "max", FLT_MAX);
		if (gc_kok(k))
			return k->err->code;
	} else {
		static const char *const what[3] = {"", "min", "max"};
		for (int i = 1; i < n->n_in && i < 3; i++) {
			const gc_tensor *b = in[i];
			if (!b)
				continue;
			if (b->dtype != x->dtype)
				return gc_kerr(k, GC_EINVAL,
					       "input %d (%s) has type %s but input 0 has type %s",
					       i, what[i], gc_dtype_name(b->dtype),
					       gc_dtype_name(x->dtype));
			if (gc_tensor_numel(b) != 1) {
				char s1[128];
				return gc_kerr(
				    k, GC_EINVAL, "input %d (%s) must be a scalar, not of shape %s",
				    i, what[i], gc_shape_str(b->dims, b->rank, s1, sizeof s1));
			}
		}
	}
	cs.half = gc_ew_is_half(x->dtype) ? (uint8_t)x->dtype : 0;
	clip_state *s = gc_malloc(sizeof *s);
	if (!s)
		return gc_kerr(k, GC_ENOMEM, "out of memory for the node's state");
	*s = cs;
	n->state = s;
	n->state_free = gc_free;
	gc_set_shape(out[0], x->dtype, x->rank, x->dims);
	n->inplace_ok = true;
	n->run = runs[x->dtype];
	return gc_kok(k);
}
