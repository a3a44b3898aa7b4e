/*
 * Integer GEMM for the quantized ops (quant.c, qconv.c): C (int32, m x n) =
 * sum over t of (A[i][t] - za_i) * (B[t][j] - zb_j), A and B uint8 or int8,
 * exact (int32 accumulation, as ONNX's MatMulInteger defines it).
 *
 * One u8 x s8 core: A's rows are read as unsigned bytes (int8 rows +128,
 * copied so), B is packed as signed bytes (uint8 B - 128) into panels of 16
 * columns by 4 rows of k, the panel count rounded up to chunks of
 * GC_QG_NC; the shifts go into the zero points, and the zero points into
 * the epilogue through row and column sums:
 *   C = acc + rowc_i - rowz_i * colv_j - rowy_i * colz_j
 * (acc = sum of A' B', rowz = za', colv = colsum(B') - k zb', and either
 * rowc = -zb' rowsum(A') for one zb, or rowy = rowsum(A'), colz = zb').
 * vpdpbusd accumulates in int32 without saturating, so every sum is exact.
 * Tiles of up to GC_QG_MR rows by one chunk (48 columns): AVX-512 VNNI
 * when the CPU has it, AVX-VNNI (256-bit) else, plain C otherwise (chosen
 * once, at prepare). A packed B is chunk-major: a chunk's quads one after
 * another, each its 3 panels' 16 columns x 4 bytes. The epilogue writes int32, or requantizes to 8 bits
 * (y = saturate(rint((float)C * scale_i) + zy), the scale per row or one).
 */
#ifndef GC_K_QGEMM_H
#define GC_K_QGEMM_H

#include <stdbool.h>
#include <stdint.h>

#define GC_QG_NR 16 /* columns per panel */
#define GC_QG_NC 3  /* panels per chunk (a tile's columns) */
#define GC_QG_MR 8  /* rows per tile */

typedef enum gc_qgemm_isa {
	GC_QGEMM_C,
	GC_QGEMM_AVXVNNI,
	GC_QGEMM_AVX512VNNI,
	/* gc_qgemm only (not gc_qgemm_tile, nor the epilogue): Intel AMX
	 * tiles (TDPBUSD, 16 rows by 16 columns by 64 bytes of k) for its
	 * blocks of 16 rows and 16 quads of k, AVX-512 VNNI for the rest */
	GC_QGEMM_AMX,
	GC_QGEMM_ISA_COUNT
} gc_qgemm_isa;

/* The best core this CPU runs (GC_QGEMM_C under GRAPHCC_REFERENCE_KERNELS),
 * for gc_qgemm_tile: at most GC_QGEMM_AVX512VNNI. */
gc_qgemm_isa gc_qgemm_isa_best(void);
/* The best for gc_qgemm: GC_QGEMM_AMX when the CPU has AMX-INT8 and Linux
 * lets this process use its tiles (the process asked: gc_qgemm_amx_request,
 * or another library), else gc_qgemm_isa_best(). */
gc_qgemm_isa gc_qgemm_isa_gemm(void);
/* Asks Linux for the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM) when
 * the CPU has AMX-INT8: a process-wide change, made only when the host asks
 * (gc_init_options.amx). Whether the process may use the tiles now. */
bool gc_qgemm_amx_request(void);
const char *gc_qgemm_isa_name(gc_qgemm_isa isa);

static inline int64_t gc_qg_k4(int64_t k)
{
	return (k + 3) / 4 * 4;
}

/* Chunks of GC_QG_NC panels covering n columns. */
static inline int64_t gc_qg_chunks(int64_t n)
{
	return (n + GC_QG_NR * GC_QG_NC - 1) / (GC_QG_NR * GC_QG_NC);
}

/* Bytes of a packed B of k x n (whole chunks). */
int64_t gc_qgemm_b_bytes(int64_t k, int64_t n);

/* A packed B: data (gc_qgemm_b_bytes), colsum (n int32, of B as stored). */
typedef struct gc_qgemm_b {
	int64_t k, n;
	const int8_t *data;
	const int32_t *colsum;
	int32_t shift; /* 128 for a uint8 B (stored as B - 128), else 0 */
} gc_qgemm_b;

/* Packs b (row-major k x n, row stride ldb) into data and colsum. */
void gc_qgemm_pack_b(const void *b, bool b_unsigned, int64_t k, int64_t n, int64_t ldb,
		     int8_t *data, int32_t *colsum);

/* b back (k x n, nbytes) from a packing kept under key "q8b1 K N U" (U:
 * uint8 b): data then colsum, src_bytes in all; 0, or GC_EINVAL when the
 * key is not one or does not fit the sizes (gc_packed_unpack). */
int gc_qgemm_unpack_b(const char *key, const void *src, uint64_t src_bytes, void *dst,
		      uint64_t nbytes);

/* Rows of A as the core reads them: m rows of k4 = gc_qg_k4(k) unsigned
 * bytes (int8 + 128, zero past k), and their sums (rowsum, NULL: not). */
void gc_qgemm_pack_a(const void *a, bool a_unsigned, int64_t m, int64_t k, int64_t lda,
		     uint8_t *data, int32_t *rowsum);

/* The epilogue of a tile (see above): rowc, rowz, rowy per row, colv, colz,
 * colc per column (NULL: 0). Out: int32 c32 (row stride ldc), or when y8 is
 * set, 8-bit y8 (uint8 when y_unsigned) with the scale scale[i * scale_step]
 * and zero point zy, clamped to [lo, hi] (a fused Relu raises lo; all three
 * integers). */
typedef struct gc_qgemm_out {
	const int32_t *rowc, *rowz, *rowy, *colv, *colz;
	const int32_t *colc; /* + colc_j (a bias per column; NULL: none) */
	int64_t col0;	     /* colv, colz and colc hold columns from col0 on */
	int32_t *c32;
	void *y8;
	/* or float f32 = (float)C * scale (one) [+ colf_j] [max 0 when frelu],
	 * a multiply then an add, as the separate float ops round */
	float *f32;
	const float *colf;
	bool frelu;
	int64_t ldc;
	bool y_unsigned;
	const float *scale;
	int64_t scale_step;
	float zy, lo, hi;
	gc_qgemm_isa isa; /* AVX-512: the vector epilogue (the same values) */
} gc_qgemm_out;

/* Bytes of a quad of a packed chunk: its GC_QG_NC panels side by side. */
#define GC_QG_QSTRIDE (GC_QG_NC * GC_QG_NR * 4)

/* The k loop of a tile: ntaps taps of kqt quads each; quad (tap, q) of B's
 * chunk at bp + tapoff[tap] + q * cs, its panels at +0, +64, +128; of row
 * r at a[r] + a_tapoff[tap] + q * a_ks (either NULL: the taps one after
 * another, tap * kqt * cs and tap * kqt * a_ks). A packed B is one tap of
 * kq quads, cs GC_QG_QSTRIDE; the convolution (qconv.c) reads an image's
 * channel quads in place, a tap each, as B (weights as rows) or as A
 * (pixels as rows). */
typedef struct gc_qgemm_kloop {
	int64_t a_ks, ntaps, kqt, cs;
	const int64_t *tapoff, *a_tapoff;
	/* the operands' signs swapped: A's bytes signed (s8), B's unsigned (u8),
	 * acc = sum of A B (the convolution's weights as they are against u8
	 * pixels: no pixel sums needed when the weights' zero point is 0) */
	bool a_signed;
} gc_qgemm_kloop;

/* acc for rows a[0..mr) and the first np (1 to GC_QG_NC) panels of the
 * chunk at bp, into acc[r * GC_QG_NR * GC_QG_NC + j] (u8 A x s8 B, or s8 A
 * x u8 B when kl->a_signed). */
void gc_qgemm_tile(gc_qgemm_isa isa, const uint8_t *const *a, int mr, int np,
		   const gc_qgemm_kloop *kl, const int8_t *bp, int32_t *acc);
/* The epilogue for rows [i0, i0 + mr) and columns [j0, j0 + nc) of acc
 * (row stride GC_QG_NR * GC_QG_NC). */
void gc_qgemm_epilogue(const gc_qgemm_out *o, int64_t i0, int mr, int64_t j0, int nc,
		       const int32_t *acc);

/* The same for a tile computed transposed: acc[r * GC_QG_NR * GC_QG_NC + c]
 * is C's element (i0 + c, j0 + r), for C's rows [i0, i0 + nc) and columns
 * [j0, j0 + mr) (mr up to GC_QG_MR, nc up to a chunk's). */
void gc_qgemm_epilogue_t(const gc_qgemm_out *o, int64_t i0, int nc, int64_t j0, int mr,
			 const int32_t *acc);

/* The zero points: za per row of A (za_rows) or one, zb per column of B
 * (zb_cols) or one; NULL: 0. Their type is A's and B's. */
typedef struct gc_qgemm_zp {
	const void *za, *zb;
	bool za_rows, zb_cols;
} gc_qgemm_zp;

/* Work memory of gc_qgemm for m x k times k x n (bytes, 64-aligned). */
uint64_t gc_qgemm_work_bytes(int64_t m, int64_t k, int64_t n, bool a_unsigned);

/* C = (A - za)(B - zb) for m rows of A (uint8 or int8, row stride lda) on up
 * to `threads` threads: int32 C (row stride ldc), or, when req is set, C
 * requantized into req->y8 (req's scale, zy, lo, hi, y_unsigned, ldc and
 * colc; its sums are set here). work: gc_qgemm_work_bytes, 64-aligned. */
void gc_qgemm(gc_qgemm_isa isa, int threads, const void *a, bool a_unsigned, int64_t lda,
	      int64_t m, const gc_qgemm_b *b, const gc_qgemm_zp *zp, int32_t *c, int64_t ldc,
	      const gc_qgemm_out *req, void *work);

/* DynamicQuantizeLinear's range (quant.c): *lo, *hi = min(0, x), max(0,
 * x), vectorised where the CPU allows (its store is gc_qquantize_f32's to
 * uint8). */
void gc_qdyn_range(const float *x, int64_t total, float *lo, float *hi);

/* The requantization scale of the integer ops: x_scale * w_scale / y_scale
 * (the product in float32, the quotient in double, then float32). */
float gc_qscale(float xs, float ws, double ys);
/* One requantized value: saturate(rint((float)c * scale) + zero) to [lo,
 * hi] (NaN: lo), as gc_qgemm_epilogue computes it. */
int32_t gc_qrequant1(int64_t c, float scale, float zero, float lo, float hi);
/* QuantizeLinear of float32 x per tensor (NaN: 0), and DequantizeLinear of
 * uint8/int8 x to float32: y = (x - zero) * scale, as the plain loops. */
void gc_qquantize_f32(const float *x, int64_t n, float scale, float zero, bool to_unsigned,
		      void *y);
void gc_qdequantize_8(const void *x, bool from_unsigned, int64_t n, float zero, float scale,
		      float *y);

#endif
