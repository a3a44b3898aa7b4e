/*
 * OpenBLAS, loaded at run time with dlopen rather than linked.
 *
 * Why dlopen: OpenBLAS 0.3.21 takes AMD Zen 5 for Haswell and runs at half
 * speed unless OPENBLAS_CORETYPE is in the environment before the library
 * loads. The library does not touch the environment itself: gc_runtime_init with
 * blas_coretype (the graphcc command does) sets it to SkylakeX on CPUs with
 * AVX-512F/DQ/BW/VL, unless the user already chose one, before OpenBLAS
 * loads.
 *
 * OpenBLAS runs single-threaded: gc_blas_init sets its thread count to 1,
 * once, when it loads the library (the one place graphcc calls
 * openblas_set_num_threads; OpenBLAS 0.3.21 has no per-call or per-thread
 * setting). graphcc's kernels split GEMMs over their own worker pool
 * (kernels/nn-par.h) instead, so OpenBLAS's threads never compete with the
 * pool's (no oversubscription) and sessions never race on the setting.
 *
 * Matrices are row-major; trans_a/trans_b say whether op(A) = A^T.
 */
#ifndef GC_BLAS_H
#define GC_BLAS_H

#include <graphcc/runtime.h>

#include <stdbool.h>

#define GC_BLAS_LIBRARY "libopenblas.so.0"

/*
 * Loads OpenBLAS once per process (thread-safe, idempotent). On failure
 * every call returns the same error, naming the library or the missing
 * symbol with dlerror's text.
 */
int gc_blas_init(gc_error *err);

/* Sets OPENBLAS_CORETYPE=SkylakeX in the process environment on CPUs with
 * AVX-512F/DQ/BW/VL, and OPENBLAS_NUM_THREADS=1, each unless set: only when
 * the host asks (gc_runtime_init), and only useful before OpenBLAS loads. */
void gc_blas_choose_coretype(void);

/*
 * C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C. When M or N is 1 this
 * runs as a matrix-vector product, which OpenBLAS does much faster than a
 * degenerate GEMM. beta == 0 never reads C (NaN in C is not propagated).
 * K == 0 gives beta * C. Requires a successful gc_blas_init.
 */
void gc_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float *a, int lda,
	      const float *b, int ldb, float beta, float *c, int ldc);
void gc_dgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha, const double *a,
	      int lda, const double *b, int ldb, double beta, double *c, int ldc);

/* y = alpha * op(A) x + beta * y, A row-major [rows, cols]; beta == 0 never
 * reads y. */
void gc_sgemv(bool trans, int rows, int cols, float alpha, const float *a, int lda, const float *x,
	      int incx, float beta, float *y, int incy);
void gc_dgemv(bool trans, int rows, int cols, double alpha, const double *a, int lda,
	      const double *x, int incx, double beta, double *y, int incy);

#endif
