/*
 * The operator versions of ONNX's default domain after opset 17 (ONNX's
 * docs/Changelog.md, "Version N of the default ONNX operator set"), for
 * the ops graphcc has: X(Op, version, kind, reason). kind is NEW for an op
 * ONNX introduced in that version, CHANGED for a new version of an older
 * op (new types count: a kernel refuses by name the types it lacks).
 * reason is NULL when
 * graphcc's kernel follows that version (it checks n->opset where the
 * meaning changed, and refuses by name the types and attribute values it
 * does not support), else the words of the compile-time refusal of a node
 * of that op in a model whose opset reaches the version.
 *
 * An op that is new in one of these versions (BitwiseAnd-18, Gelu-20, ...)
 * does not exist in a model of an older opset: a node of it there is
 * refused, naming both versions (gc_op_version_check). Ops graphcc lacks
 * need no row: they are refused as ops graphcc has no kernel for.
 *
 * A version row belongs to the family that changed: add rows in version
 * order within the op. Raising GC_ONNX_OPSET_MAX (ops.h) means adding the
 * rows of the new opsets first.
 */
#ifndef GC_OP_VERSIONS_H
#define GC_OP_VERSIONS_H

#define GC_OP_VERSIONS(X)                                                                          \
	/* opset 18 */                                                                             \
	X(BitwiseAnd, 18, NEW, NULL)                                                               \
	X(BitwiseNot, 18, NEW, NULL)                                                               \
	X(BitwiseOr, 18, NEW, NULL)                                                                \
	X(BitwiseXor, 18, NEW, NULL)                                                               \
	X(GroupNormalization, 18, NEW, NULL)                                                       \
	X(Mish, 18, CHANGED, NULL)                                                                 \
	X(OptionalGetElement, 18, CHANGED, NULL)                                                   \
	X(OptionalHasElement, 18, CHANGED, NULL)                                                   \
	X(Pad, 18, CHANGED, NULL)                                                                  \
	X(ReduceL1, 18, CHANGED, NULL)                                                             \
	X(ReduceL2, 18, CHANGED, NULL)                                                             \
	X(ReduceLogSum, 18, CHANGED, NULL)                                                         \
	X(ReduceLogSumExp, 18, CHANGED, NULL)                                                      \
	X(ReduceMax, 18, CHANGED, NULL)                                                            \
	X(ReduceMean, 18, CHANGED, NULL)                                                           \
	X(ReduceMin, 18, CHANGED, NULL)                                                            \
	X(ReduceProd, 18, CHANGED, NULL)                                                           \
	X(ReduceSumSquare, 18, CHANGED, NULL)                                                      \
	X(Resize, 18, CHANGED, NULL)                                                               \
	X(ScatterElements, 18, CHANGED, NULL)                                                      \
	X(ScatterND, 18, CHANGED, NULL)                                                            \
	X(Split, 18, CHANGED, NULL)                                                                \
	/* opset 19 */                                                                             \
	X(AveragePool, 19, CHANGED, NULL)                                                          \
	X(Cast, 19, CHANGED, NULL)                                                                 \
	X(CastLike, 19, CHANGED, NULL)                                                             \
	X(Constant, 19, CHANGED, NULL)                                                             \
	X(DequantizeLinear, 19, CHANGED, NULL)                                                     \
	X(Equal, 19, CHANGED, NULL)                                                                \
	X(Identity, 19, CHANGED, NULL)                                                             \
	X(If, 19, CHANGED, NULL)                                                                   \
	X(Loop, 19, CHANGED, NULL)                                                                 \
	X(Pad, 19, CHANGED, NULL)                                                                  \
	X(QuantizeLinear, 19, CHANGED, NULL)                                                       \
	X(Reshape, 19, CHANGED, NULL)                                                              \
	X(Resize, 19, CHANGED, NULL)                                                               \
	X(Scan, 19, CHANGED, NULL)                                                                 \
	X(Shape, 19, CHANGED, NULL)                                                                \
	X(Size, 19, CHANGED, NULL)                                                                 \
	/* opset 20 */                                                                             \
	X(ConstantOfShape, 20, CHANGED, NULL)                                                      \
	X(Gelu, 20, NEW, NULL)                                                                     \
	X(ImageDecoder, 20, NEW, NULL)                                                             \
	X(RegexFullMatch, 20, NEW, NULL)                                                           \
	X(StringConcat, 20, NEW, NULL)                                                             \
	X(StringSplit, 20, NEW, NULL)                                                              \
	X(DFT, 20, CHANGED, NULL)                     \
	X(GridSample, 20, CHANGED,                                                                 \
	  "graphcc declines it: its GridSample follows opset 16 (4-D, modes bilinear, nearest, bicubic), not -20's mode names linear and cubic or its N-d grids")  \
	X(IsInf, 20, CHANGED, NULL)                                                                \
	X(IsNaN, 20, CHANGED, NULL)                                                                \
	X(ReduceMax, 20, CHANGED, NULL)                                                            \
	X(ReduceMin, 20, CHANGED, NULL)                                                            \
	/* opset 21 */                                                                            \
	X(Cast, 21, CHANGED, NULL)                                                                 \
	X(CastLike, 21, CHANGED, NULL)                                                             \
	X(Constant, 21, CHANGED, NULL)                                                             \
	X(ConstantOfShape, 21, CHANGED, NULL)                                                      \
	X(DequantizeLinear, 21, CHANGED, NULL)                                                     \
	X(Flatten, 21, CHANGED, NULL)                                                              \
	X(GroupNormalization, 21, CHANGED, NULL)                                                   \
	X(Identity, 21, CHANGED, NULL)                                                             \
	X(If, 21, CHANGED, NULL)                                                                   \
	X(Loop, 21, CHANGED, NULL)                                                                 \
	X(Pad, 21, CHANGED, NULL)                                                                  \
	X(QLinearMatMul, 21, CHANGED, NULL)                                                        \
	X(QuantizeLinear, 21, CHANGED, NULL)                                                       \
	X(Reshape, 21, CHANGED, NULL)                                                              \
	X(Scan, 21, CHANGED, NULL)                                                                 \
	X(Shape, 21, CHANGED, NULL)                                                                \
	X(Size, 21, CHANGED, NULL)                                                                 \
	X(Squeeze, 21, CHANGED, NULL)                                                              \
	X(Transpose, 21, CHANGED, NULL)                                                            \
	X(Unsqueeze, 21, CHANGED, NULL)                                                            \
	/* opset 22 */                                                                            \
	X(Acos, 22, CHANGED, NULL)                                                                 \
	X(Acosh, 22, CHANGED, NULL)                                                                \
	X(Asin, 22, CHANGED, NULL)                                                                 \
	X(Asinh, 22, CHANGED, NULL)                                                                \
	X(Atan, 22, CHANGED, NULL)                                                                 \
	X(Atanh, 22, CHANGED, NULL)                                                                \
	X(AveragePool, 22, CHANGED, NULL)                                                          \
	X(Bernoulli, 22, CHANGED, NULL)                                                            \
	X(Conv, 22, CHANGED, NULL)                                                                 \
	X(ConvTranspose, 22, CHANGED, NULL)                                                        \
	X(Cos, 22, CHANGED, NULL)                                                                  \
	X(Cosh, 22, CHANGED, NULL)                                                                 \
	X(Det, 22, CHANGED, NULL)                                                                  \
	X(Dropout, 22, CHANGED, NULL)                                                              \
	X(Elu, 22, CHANGED, NULL)                                                                  \
	X(EyeLike, 22, CHANGED, NULL)                                                              \
	X(GRU, 22, CHANGED, NULL)                                                                  \
	X(GlobalAveragePool, 22, CHANGED, NULL)                                                    \
	X(GlobalLpPool, 22, CHANGED, NULL)                                                         \
	X(GlobalMaxPool, 22, CHANGED, NULL)                                                        \
	X(GridSample, 22, CHANGED, "graphcc declines it: -22 keeps -20's mode names linear and cubic and N-d grids; graphcc's GridSample follows opset 16") \
	X(HardSigmoid, 22, CHANGED, NULL)                                                          \
	X(HardSwish, 22, CHANGED, NULL)                                                            \
	X(InstanceNormalization, 22, CHANGED, NULL)                                                \
	X(LSTM, 22, CHANGED, NULL)                                                                 \
	X(LpNormalization, 22, CHANGED, NULL)                                                      \
	X(MaxPool, 22, CHANGED, NULL)                                                              \
	X(MaxRoiPool, 22, CHANGED, NULL)                                                           \
	X(MaxUnpool, 22, CHANGED, NULL)                                                            \
	X(Mish, 22, CHANGED, NULL)                                                                 \
	X(Multinomial, 22, CHANGED, NULL)                                                          \
	X(NegativeLogLikelihoodLoss, 22, CHANGED, NULL)                                            \
	X(RNN, 22, CHANGED, NULL)                                                                  \
	X(RandomNormal, 22, CHANGED, NULL)                                                         \
	X(RandomNormalLike, 22, CHANGED, NULL)                                                     \
	X(RandomUniform, 22, CHANGED, NULL)                                                        \
	X(RandomUniformLike, 22, CHANGED, NULL)                                                    \
	X(RoiAlign, 22, CHANGED, NULL)                                                             \
	X(Round, 22, CHANGED, NULL)                                                                \
	X(Selu, 22, CHANGED, NULL)                                                                 \
	X(Sin, 22, CHANGED, NULL)                                                                  \
	X(Sinh, 22, CHANGED, NULL)                                                                 \
	X(Softplus, 22, CHANGED, NULL)                                                             \
	X(Softsign, 22, CHANGED, NULL)                                                             \
	X(Tan, 22, CHANGED, NULL)                                                                  \
	X(ThresholdedRelu, 22, CHANGED, NULL)                                                      \
	/* opset 23 */                                                                            \
	X(Attention, 23, NEW, NULL)                                                                \
	X(Cast, 23, CHANGED, NULL)                                                                 \
	X(CastLike, 23, CHANGED, NULL)                                                             \
	X(Constant, 23, CHANGED, NULL)                                                             \
	X(ConstantOfShape, 23, CHANGED, NULL)                                                      \
	X(DequantizeLinear, 23, CHANGED, NULL)                                                     \
	X(Flatten, 23, CHANGED, NULL)                                                              \
	X(Identity, 23, CHANGED, NULL)                                                             \
	X(If, 23, CHANGED, NULL)                                                                   \
	X(Loop, 23, CHANGED, NULL)                                                                 \
	X(Pad, 23, CHANGED, NULL)                                                                  \
	X(QuantizeLinear, 23, CHANGED, NULL)                                                       \
	X(RMSNormalization, 23, NEW, NULL)                                                         \
	X(Reshape, 23, CHANGED, NULL)                                                              \
	X(RotaryEmbedding, 23, NEW, NULL)                                                          \
	X(Scan, 23, CHANGED, NULL)                                                                 \
	X(Shape, 23, CHANGED, NULL)                                                                \
	X(Size, 23, CHANGED, NULL)                                                                 \
	X(Squeeze, 23, CHANGED, NULL)                                                              \
	X(Transpose, 23, CHANGED, NULL)                                                            \
	X(Unsqueeze, 23, CHANGED, NULL)

#endif
