/*
 * Integer GEMM for the quantized ops (quant.c): C (int32, m x n) = sum over t
 * of (A[i][t] - za_i) * (B[t][j] - zb_j), A and B uint8 or int8, exact (int32
 * accumulation, as ONNX's MatMulInteger defines it).
 *
 * B is packed once (gc_qgemm_pack_b: at prepare for a constant B) into
 * panels of 16 columns by 4 rows of k, as signed bytes (uint8 B shifted by
 * -128), with its column sums; A is read as unsigned bytes (int8 A shifted
 * by +128 on the fly); the shifts go into the zero points, so every type
 * pair runs the one u8 x s8 core: AVX-512 VNNI (vpdpbusd) when the CPU has
 * it, AVX-VNNI (256-bit) else, plain C otherwise (chosen once, at prepare).
 * Rows are split over the nn-par pool.
 */
#ifndef GC_K_QGEMM_H
#define GC_K_QGEMM_H

#include <stdbool.h>
#include <stdint.h>

#define GC_QG_NR 16 /* columns per panel */

typedef enum gc_qgemm_isa {
	GC_QGEMM_C,
	GC_QGEMM_AVXVNNI,
	GC_QGEMM_AVX512VNNI,
	GC_QGEMM_ISA_COUNT
} gc_qgemm_isa;

/* The best core this CPU runs (GC_QGEMM_C under GRAPHCC_REFERENCE_KERNELS). */
gc_qgemm_isa gc_qgemm_isa_best(void);
const char *gc_qgemm_isa_name(gc_qgemm_isa isa);

/* Bytes of a packed B of k x n. */
int64_t gc_qgemm_b_bytes(int64_t k, int64_t n);

/* A packed B: data (gc_qgemm_b_bytes), colsum (n int32), as shifted. */
typedef struct gc_qgemm_b {
	int64_t k, n;
	const int8_t *data;
	const int32_t *colsum;
	int32_t shift; /* 128 for a uint8 B (stored as B - 128), else 0 */
} gc_qgemm_b;

/* Packs b (row-major k x n, row stride ldb) into data and colsum. */
void gc_qgemm_pack_b(const void *b, bool b_unsigned, int64_t k, int64_t n, int64_t ldb,
		     int8_t *data, int32_t *colsum);

/* The zero points: za per row of A (za_rows) or one, zb per column of B
 * (zb_cols) or one; NULL: 0. Their type is A's and B's. */
typedef struct gc_qgemm_zp {
	const void *za, *zb;
	bool za_rows, zb_cols;
} gc_qgemm_zp;

/* C = (A - za)(B - zb) for m rows of A (uint8 or int8, row stride lda),
 * int32 C with row stride ldc, on up to `threads` threads. rowsum: m
 * int32 of work memory (the caller's scratch). */
void gc_qgemm(gc_qgemm_isa isa, int threads, const void *a, bool a_unsigned, int64_t lda,
	      int64_t m, const gc_qgemm_b *b, const gc_qgemm_zp *zp, int32_t *c, int64_t ldc,
	      int32_t *rowsum);

/* DynamicQuantizeLinear (quant.c): *lo, *hi = min(0, x), max(0, x); y =
 * saturate(rint(x / scale) + zp) to uint8 (scale != 0; NaN: 0), vectorised
 * where the CPU allows (rint rounds half to even either way). */
void gc_qdyn_range(const float *x, int64_t total, float *lo, float *hi);
void gc_qdyn_store(const float *x, int64_t total, float scale, float zp, uint8_t *y);

/* y = saturate(rint((c + bias) * mult) + zero) (relu: not below zero), to
 * uint8 or int8: QLinearConv's requantization. */
void gc_qrequant(const int32_t *c, int64_t n, int32_t bias, double mult, float zero,
		 bool relu, bool to_unsigned, void *y);
/* QuantizeLinear of float32 x per tensor (NaN: 0), and DequantizeLinear of
 * uint8/int8 x to float32: y = (x - zero) * scale, as the plain loops. */
void gc_qquantize_f32(const float *x, int64_t n, float scale, float zero, bool to_unsigned,
		      void *y);
void gc_qdequantize_8(const void *x, bool from_unsigned, int64_t n, float zero, float scale,
		      float *y);

#endif
