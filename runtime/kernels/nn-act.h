/*
 * Fused epilogues: an activation that a graph pass (lib/pass-activation.c)
 * moved into the Conv, Gemm or MatMul before it, applied while the kernel
 * adds its bias, in the same pass over the output. The pass says so with
 * graphcc-internal attributes (names starting with "_gc_", which no ONNX op
 * has):
 *
 *   _gc_activation   "Relu", "Clip", "LeakyRelu", "Swish" (x sigmoid(x), SiLU)
 *                    or "HardSwish" (x clamp(alpha x + beta, 0, 1)) (string)
 *   _gc_min, _gc_max Clip's bounds (float; absent: the type's whole range)
 *   _gc_alpha        LeakyRelu's slope (float, default 0.01); HardSwish's
 *                    alpha (default 1/6)
 *   _gc_beta         HardSwish's beta (float, default 0.5)
 *   _gc_bias         MatMul only: a bias added along the last axis (tensor
 *                    [N] of the output's type), from a MatMul + Add pair
 *   _gc_residual     Conv only (int 1): input 3 is a residual z added
 *                    before the activation, y = act(conv + bias + z), from
 *                    a Conv + Add pair (lib/pass-residual.c)
 *
 * Shared by conv.c, norm.c (InstanceNormalization, GroupNormalization) and
 * gemm.c (which defines gc_nn_act_init). A float32
 * MatMul also takes _gc_activation "Gelu" or "GeluTanh" (lib/pass-matmul-
 * gelu.c), which gemm.c reads itself: gc_nn_act_init refuses them.
 */
#ifndef GC_K_NN_ACT_H
#define GC_K_NN_ACT_H

#include <math.h>

#include "../kernel.h"
#include "vmath.h"

enum { GC_NN_ACT_NONE, GC_NN_ACT_CLAMP, GC_NN_ACT_LEAKY, GC_NN_ACT_SWISH, GC_NN_ACT_HSWISH };

typedef struct gc_nn_act {
	int kind;
	double lo, hi;	     /* CLAMP: Relu is [0, inf] */
	double alpha, beta; /* LEAKY: alpha; HSWISH: both */
} gc_nn_act;

/* x sigmoid(x) as the Swish kernel computes it (float: vmath.h) */
static inline float gc_nn_swishf(float v)
{
	return v / (1.0f + gc_vm_expf(-v));
}

static inline double gc_nn_swishd(double v)
{
	return v / (1.0 + exp(-v));
}

#define GC_NN_SWISH_(v) _Generic((v), float: gc_nn_swishf, default: gc_nn_swishd)(v)

/* One value's activation, for SWISH and HSWISH (the others are inline in
 * the loops below). */
#define gc_nn_clamp01_(h) ((h) < 0 ? 0 : (h) > 1 ? 1 : (h))
#define GC_NN_ACT_SMOOTH_(T, a, v)                                                                 \
	((a)->kind == GC_NN_ACT_SWISH                                                              \
	     ? (T)GC_NN_SWISH_(v)                                                                  \
	     : (v) * gc_nn_clamp01_((T)(a)->alpha * (v) + (T)(a)->beta))

/*
 * Reads the node's _gc_ activation attributes into a; kind NONE without
 * them. `dtype` is the output's element type: Clip's absent bounds are its
 * lowest and highest values, as the Clip kernel has them. Integer types take
 * Relu only. Errors name the attribute.
 */
int gc_nn_act_init(gc_kctx *k, gc_dtype dtype, gc_nn_act *a);

/* d[i] = act(s[i] + b) for i < cnt; d may be s. Inside GC_NN_SIMD functions
 * these loops vectorise. */
#define GC_NN_ACT_ROW(T, act, dst, src, cnt, b)                                                    \
	do {                                                                                       \
		const gc_nn_act *a_ = (act);                                                       \
		T *d_ = (dst);                                                                     \
		const T *s_ = (src);                                                               \
		int64_t n_ = (cnt);                                                                \
		T b_ = (b);                                                                        \
		if (a_->kind == GC_NN_ACT_CLAMP) {                                                 \
			T lo_ = (T)a_->lo, hi_ = (T)a_->hi;                                        \
			for (int64_t i_ = 0; i_ < n_; i_++) {                                      \
				T v_ = s_[i_] + b_;                                                \
				v_ = v_ < lo_ ? lo_ : v_;                                          \
				d_[i_] = v_ > hi_ ? hi_ : v_;                                      \
			}                                                                          \
		} else if (a_->kind == GC_NN_ACT_LEAKY) {                                          \
			T al_ = (T)a_->alpha;                                                      \
			for (int64_t i_ = 0; i_ < n_; i_++) {                                      \
				T v_ = s_[i_] + b_;                                                \
				d_[i_] = v_ * (v_ < 0 ? al_ : (T)1);                               \
			}                                                                          \
		} else if (a_->kind == GC_NN_ACT_SWISH) {                                          \
			for (int64_t i_ = 0; i_ < n_; i_++) {                                      \
				T v_ = s_[i_] + b_;                                                \
				d_[i_] = (T)GC_NN_SWISH_(v_);                                      \
			}                                                                          \
		} else if (a_->kind == GC_NN_ACT_HSWISH) {                                         \
			T ha_ = (T)a_->alpha, hb_ = (T)a_->beta;                                   \
			for (int64_t i_ = 0; i_ < n_; i_++) {                                      \
				T v_ = s_[i_] + b_, h_ = ha_ * v_ + hb_;                           \
				d_[i_] = v_ * gc_nn_clamp01_(h_);                                  \
			}                                                                          \
		} else {                                                                           \
			for (int64_t i_ = 0; i_ < n_; i_++)                                        \
				d_[i_] = s_[i_] + b_;                                              \
		}                                                                                  \
	} while (0)

/* d[i] = act(d[i] + beta * bv[i * bs]) for i < cnt, bs 0 or 1 (bv NULL:
 * no bias). */
#define GC_NN_ACT_ROW_BIAS(T, act, dst, cnt, bv, bs, beta)                                         \
	do {                                                                                       \
		const T *bv_ = (bv);                                                               \
		T *dd_ = (dst);                                                                    \
		int64_t nn_ = (cnt);                                                               \
		T be_ = (T)(beta);                                                                 \
		if (!bv_) {                                                                        \
			GC_NN_ACT_ROW(T, act, dd_, dd_, nn_, (T)0);                                \
		} else if (!(bs)) {                                                                \
			GC_NN_ACT_ROW(T, act, dd_, dd_, nn_, be_ * bv_[0]);                        \
		} else if (be_ == (T)1) {                                                          \
			GC_NN_ACT_ROW_VEC_(T, act, dd_, nn_, bv_[j_]);                             \
		} else {                                                                           \
			GC_NN_ACT_ROW_VEC_(T, act, dd_, nn_, be_ * bv_[j_]);                       \
		}                                                                                  \
	} while (0)

#define GC_NN_ACT_ROW_VEC_(T, act, d, cnt, BIAS)                                                   \
	do {                                                                                       \
		const gc_nn_act *av_ = (act);                                                      \
		if (av_->kind == GC_NN_ACT_CLAMP) {                                                \
			T lo_ = (T)av_->lo, hi_ = (T)av_->hi;                                      \
			for (int64_t j_ = 0; j_ < (cnt); j_++) {                                   \
				T v_ = (d)[j_] + BIAS;                                             \
				v_ = v_ < lo_ ? lo_ : v_;                                          \
				(d)[j_] = v_ > hi_ ? hi_ : v_;                                     \
			}                                                                          \
		} else if (av_->kind == GC_NN_ACT_LEAKY) {                                         \
			T al_ = (T)av_->alpha;                                                     \
			for (int64_t j_ = 0; j_ < (cnt); j_++) {                                   \
				T v_ = (d)[j_] + BIAS;                                             \
				(d)[j_] = v_ * (v_ < 0 ? al_ : (T)1);                              \
			}                                                                          \
		} else if (av_->kind != GC_NN_ACT_NONE) {                                          \
			for (int64_t j_ = 0; j_ < (cnt); j_++) {                                   \
				T v_ = (d)[j_] + BIAS;                                             \
				(d)[j_] = GC_NN_ACT_SMOOTH_(T, av_, v_);                           \
			}                                                                          \
		} else {                                                                           \
			for (int64_t j_ = 0; j_ < (cnt); j_++)                                     \
				(d)[j_] += BIAS;                                                   \
		}                                                                                  \
	} while (0)

#endif
