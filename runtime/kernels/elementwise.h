/* Elementwise ops: unary math, activations, binary arithmetic and logic with
 * ONNX broadcasting, Cast, Where. X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_ELEMENTWISE_H
#define GC_K_ELEMENTWISE_H

#define GC_OPS_ELEMENTWISE(X)                                                                      \
	X(Add, 2, 2, 1, 1)                                                                         \
	X(Sub, 2, 2, 1, 1)                                                                         \
	X(Mul, 2, 2, 1, 1)                                                                         \
	X(Div, 2, 2, 1, 1)                                                                         \
	X(Pow, 2, 2, 1, 1)                                                                         \
	X(Equal, 2, 2, 1, 1)                                                                       \
	X(Where, 3, 3, 1, 1)                                                                       \
	X(Sum, 1, GC_ARITY_MAX, 1, 1)                                                              \
	X(Max, 1, GC_ARITY_MAX, 1, 1)                                                              \
	X(Min, 1, GC_ARITY_MAX, 1, 1)                                                              \
	X(Sqrt, 1, 1, 1, 1)                                                                        \
	X(Erf, 1, 1, 1, 1)                                                                         \
	X(Relu, 1, 1, 1, 1)                                                                        \
	X(Sigmoid, 1, 1, 1, 1)                                                                     \
	X(Tanh, 1, 1, 1, 1)                                                                        \
	X(Exp, 1, 1, 1, 1)                                                                         \
	X(Log, 1, 1, 1, 1)                                                                         \
	X(Neg, 1, 1, 1, 1)                                                                         \
	X(Abs, 1, 1, 1, 1)                                                                         \
	X(LeakyRelu, 1, 1, 1, 1)                                                                   \
	X(HardSigmoid, 1, 1, 1, 1)                                                                 \
	X(HardSwish, 1, 1, 1, 1)                                                                   \
	X(Clip, 1, 3, 1, 1)                                                                        \
	X(Cast, 1, 1, 1, 1)                                                                        \
	X(CastLike, 2, 2, 1, 1)                                                                    \
	X(Less, 2, 2, 1, 1)                                                                        \
	X(Greater, 2, 2, 1, 1)                                                                     \
	X(LessOrEqual, 2, 2, 1, 1)                                                                 \
	X(GreaterOrEqual, 2, 2, 1, 1)                                                              \
	X(And, 2, 2, 1, 1)                                                                         \
	X(Or, 2, 2, 1, 1)                                                                          \
	X(Xor, 2, 2, 1, 1)                                                                         \
	X(Not, 1, 1, 1, 1)                                                                         \
	X(Mod, 2, 2, 1, 1)                                                                         \
	X(BitShift, 2, 2, 1, 1)                                                                    \
	X(BitwiseAnd, 2, 2, 1, 1)                                                                  \
	X(BitwiseOr, 2, 2, 1, 1)                                                                   \
	X(BitwiseXor, 2, 2, 1, 1)                                                                  \
	X(BitwiseNot, 1, 1, 1, 1)                                                                  \
	X(Mean, 1, GC_ARITY_MAX, 1, 1)                                                             \
	X(PRelu, 2, 2, 1, 1)                                                                       \
	X(Reciprocal, 1, 1, 1, 1)                                                                  \
	X(Floor, 1, 1, 1, 1)                                                                       \
	X(Ceil, 1, 1, 1, 1)                                                                        \
	X(Round, 1, 1, 1, 1)                                                                       \
	X(Sign, 1, 1, 1, 1)                                                                        \
	X(IsNaN, 1, 1, 1, 1)                                                                       \
	X(IsInf, 1, 1, 1, 1)                                                                       \
	X(Elu, 1, 1, 1, 1)                                                                         \
	X(Selu, 1, 1, 1, 1)                                                                        \
	X(Celu, 1, 1, 1, 1)                                                                        \
	X(ThresholdedRelu, 1, 1, 1, 1)                                                             \
	X(Shrink, 1, 1, 1, 1)                                                                      \
	X(Softplus, 1, 1, 1, 1)                                                                    \
	X(Softsign, 1, 1, 1, 1)                                                                    \
	X(Mish, 1, 1, 1, 1)                                                                        \
	X(Sin, 1, 1, 1, 1)                                                                         \
	X(Cos, 1, 1, 1, 1)                                                                         \
	X(Tan, 1, 1, 1, 1)                                                                         \
	X(Asin, 1, 1, 1, 1)                                                                        \
	X(Acos, 1, 1, 1, 1)                                                                        \
	X(Atan, 1, 1, 1, 1)                                                                        \
	X(Sinh, 1, 1, 1, 1)                                                                        \
	X(Cosh, 1, 1, 1, 1)                                                                        \
	X(Asinh, 1, 1, 1, 1)                                                                       \
	X(Acosh, 1, 1, 1, 1)                                                                       \
	X(Atanh, 1, 1, 1, 1)

#endif
