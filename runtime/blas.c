#include "blas.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* CBLAS enum values (cblas.h), passed as int: the ABI of an enum. */
enum { CBLAS_ROW_MAJOR = 101, CBLAS_NO_TRANS = 111, CBLAS_TRANS = 112 };

typedef void (*sgemm_fn)(int order, int ta, int tb, int m, int n, int k, float alpha,
			 const float *a, int lda, const float *b, int ldb, float beta, float *c,
			 int ldc);
typedef void (*dgemm_fn)(int order, int ta, int tb, int m, int n, int k, double alpha,
			 const double *a, int lda, const double *b, int ldb, double beta, double *c,
			 int ldc);
typedef void (*sgemv_fn)(int order, int trans, int m, int n, float alpha, const float *a, int lda,
			 const float *x, int incx, float beta, float *y, int incy);
typedef void (*dgemv_fn)(int order, int trans, int m, int n, double alpha, const double *a, int lda,
			 const double *x, int incx, double beta, double *y, int incy);
typedef void (*set_threads_fn)(int n);

static struct {
	pthread_once_t once;
	gc_error err; /* the outcome of the one load, copied to every caller */
	void *lib;
	sgemm_fn sgemm;
	dgemm_fn dgemm;
	sgemv_fn sgemv;
	dgemv_fn dgemv;
	set_threads_fn set_threads;
} blas = {.once = PTHREAD_ONCE_INIT};

static void *sym(const char *name)
{
	if (blas.err.code)
		return NULL;
	dlerror();
	void *p = dlsym(blas.lib, name);
	if (!p) {
		const char *why = dlerror();
		gc_error_set(&blas.err, GC_EUNSUPPORTED, "%s has no symbol '%s': %s",
			     GC_BLAS_LIBRARY, name, why ? why : "not found");
	}
	return p;
}

/* OpenBLAS 0.3.21 does not know AMD Zen 4/5 and falls back to its Haswell
 * (AVX2) kernels; its SkylakeX kernels need exactly these AVX-512 subsets. */
static int has_avx512(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
	return 0;
#endif
}

/* The library never changes the process environment by itself: a host (the
 * graphcc command) asks for it with gc_init_options.blas_coretype. One
 * thread: OpenBLAS 0.3.21 otherwise starts a thread a core when it loads,
 * which spins (sched_yield) for ~0.1 s before it sleeps, and graphcc runs it
 * single-threaded anyway; a 2-thread run in that time took 2x as long (a
 * grouped 3x3 at 14x14: 0.20 ms a run, not 0.058, the pool's worker sharing
 * its core with the spinning thread). */
void gc_blas_choose_coretype(void)
{
	if (!getenv("OPENBLAS_CORETYPE") && has_avx512())
		setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
	setenv("OPENBLAS_NUM_THREADS", "1", 0);
}

static void load(void)
{
	blas.lib = dlopen(GC_BLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (!blas.lib) {
		const char *why = dlerror();
		gc_error_set(&blas.err, GC_EUNSUPPORTED,
			     "cannot load %s (install OpenBLAS, Debian package libopenblas0): %s",
			     GC_BLAS_LIBRARY, why ? why : "unknown reason");
		return;
	}
	/* dlsym returns void *; converting through memcpy keeps -Wpedantic quiet
	 * about object-to-function pointer casts. */
	void *p;
	p = sym("cblas_sgemm");
	memcpy(&blas.sgemm, &p, sizeof p);
	p = sym("cblas_dgemm");
	memcpy(&blas.dgemm, &p, sizeof p);
	p = sym("cblas_sgemv");
	memcpy(&blas.sgemv, &p, sizeof p);
	p = sym("cblas_dgemv");
	memcpy(&blas.dgemv, &p, sizeof p);
	p = sym("openblas_set_num_threads");
	memcpy(&blas.set_threads, &p, sizeof p);
	/* Single-threaded, once (see blas.h): the pool splits the work. */
	if (!blas.err.code)
		blas.set_threads(1);
	/* The library stays loaded for the life of the process: programs built
	 * later may still call into it. */
}

int gc_blas_init(gc_error *err)
{
	pthread_once(&blas.once, load);
	if (blas.err.code)
		return gc_error_set(err, blas.err.code, "%s", blas.err.msg);
	return 0;
}

#define GC_BLAS_GEMM(T, name, gemm_ptr, gemv_ptr)                                                  \
	void name(bool trans_a, bool trans_b, int m, int n, int k, T alpha, const T *a, int lda,   \
		  const T *b, int ldb, T beta, T *c, int ldc)                                      \
	{                                                                                          \
		if (m <= 0 || n <= 0)                                                              \
			return;                                                                    \
		if (k <= 0 || alpha == 0) {                                                        \
			for (int i = 0; i < m; i++)                                                \
				for (int j = 0; j < n; j++)                                        \
					c[(size_t)i * ldc + j] =                                   \
					    beta == 0 ? 0 : beta * c[(size_t)i * ldc + j];         \
			return;                                                                    \
		}                                                                                  \
		if (m == 1 || n == 1) {                                                            \
			/* beta == 0 must not read C, whatever the BLAS does */                    \
			int incy = m == 1 ? 1 : ldc, len = m == 1 ? n : m;                         \
			if (beta == 0)                                                             \
				for (int i = 0; i < len; i++)                                      \
					c[(size_t)i * incy] = 0;                                   \
			if (m == 1) {                                                              \
				/* y = op(B)^T a, a = row 0 of op(A) */                            \
				int incx = trans_a ? lda : 1;                                      \
				if (trans_b)                                                       \
					gemv_ptr(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, n, k, alpha, b,  \
						 ldb, a, incx, beta, c, incy);                     \
				else                                                               \
					gemv_ptr(CBLAS_ROW_MAJOR, CBLAS_TRANS, k, n, alpha, b,     \
						 ldb, a, incx, beta, c, incy);                     \
			} else {                                                                   \
				/* y = op(A) b, b = column 0 of op(B) */                           \
				int incx = trans_b ? 1 : ldb;                                      \
				if (trans_a)                                                       \
					gemv_ptr(CBLAS_ROW_MAJOR, CBLAS_TRANS, k, m, alpha, a,     \
						 lda, b, incx, beta, c, incy);                     \
				else                                                               \
					gemv_ptr(CBLAS_ROW_MAJOR, CBLAS_NO_TRANS, m, k, alpha, a,  \
						 lda, b, incx, beta, c, incy);                     \
			}                                                                          \
			return;                                                                    \
		}                                                                                  \
		gemm_ptr(CBLAS_ROW_MAJOR, trans_a ? CBLAS_TRANS : CBLAS_NO_TRANS,                  \
			 trans_b ? CBLAS_TRANS : CBLAS_NO_TRANS, m, n, k, alpha, a, lda, b, ldb,   \
			 beta, c, ldc);                                                            \
	}

GC_BLAS_GEMM(float, gc_sgemm, blas.sgemm, blas.sgemv)
GC_BLAS_GEMM(double, gc_dgemm, blas.dgemm, blas.dgemv)

void gc_sgemv(bool trans, int rows, int cols, float alpha, const float *a, int lda, const float *x,
	      int incx, float beta, float *y, int incy)
{
	if (beta == 0)
		for (int i = 0, len = trans ? cols : rows; i < len; i++)
			y[(size_t)i * incy] = 0;
	blas.sgemv(CBLAS_ROW_MAJOR, trans ? CBLAS_TRANS : CBLAS_NO_TRANS, rows, cols, alpha, a, lda,
		   x, incx, beta, y, incy);
}

void gc_dgemv(bool trans, int rows, int cols, double alpha, const double *a, int lda,
	      const double *x, int incx, double beta, double *y, int incy)
{
	if (beta == 0)
		for (int i = 0, len = trans ? cols : rows; i < len; i++)
			y[(size_t)i * incy] = 0;
	blas.dgemv(CBLAS_ROW_MAJOR, trans ? CBLAS_TRANS : CBLAS_NO_TRANS, rows, cols, alpha, a, lda,
		   x, incx, beta, y, incy);
}
