/* Quantization: X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_QUANT_H
#define GC_K_QUANT_H

#define GC_OPS_QUANT(X)                                                                            \
	X(QuantizeLinear, 2, 3, 1, 1)                                                              \
	X(DequantizeLinear, 2, 3, 1, 1)                                                            \
	X(DynamicQuantizeLinear, 1, 1, 3, 3)                                                       \
	X(MatMulInteger, 2, 7, 1, 1)                                                               \
	X(QLinearMatMul, 8, 9, 1, 1)                                                               \
	X(ConvInteger, 2, 4, 1, 1)                                                                 \
	X(QLinearConv, 8, 9, 1, 1)

/* In graphcc's domain (com.graphcc), made by lib/pass-qdq-elem.c:
 * QLinearAdd (elementwise-qlinear.c), ONNX Runtime's com.microsoft one's
 * inputs, and with _gc_activation "Relu" a requantizing Relu (inputs 8, 9). */
#define GC_OPS_QUANT_GRAPHCC(X) X(QLinearAdd, 8, 10, 1, 1)

#endif
