/*
 * Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare
 * and ArgMax/ArgMin.
 *
 * Prepare collapses the input to alternating runs of kept and reduced axes
 * (dropping unit axes, merging neighbours), so every reduction becomes a walk
 * over contiguous input rows: a row on a reduced innermost axis folds into
 * one accumulator ("scalar" row kernel, 8 independent lanes), a row on a kept
 * innermost axis folds element-wise into a row of accumulators ("vector" row
 * kernel). Accumulators are float for float32/float16/bfloat16, double for
 * float64, and 64-bit integers for integer types (wrapping sums, as NumPy's
 * result cast back to the input type); a finishing pass applies the mean,
 * square root or logarithm and converts to the output type.
 */
#include "../ops.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../alloc.h"
#include "kutil.h"
#include "nn-par.h"

/* ---- row kernels -------------------------------------------------------- */

/* How one input element folds into an accumulator. */
enum kind {
	K_ADD,	/* a + x */
	K_ABS,	/* a + |x| */
	K_SQ,	/* a + x*x */
	K_MUL,	/* a * x */
	K_MAX,	/* max(a, x), NaN wins */
	K_MIN,	/* min(a, x), NaN wins */
	K_MAXD, /* max in the log-sum-exp accumulator (double for integers) */
	K_EXPD, /* a + exp(x - shift), same accumulator */
	K_COUNT
};

/* Folds n contiguous elements of x into acc (scalar: acc[0]; vector:
 * acc[0..n)); shift is the per-accumulator offset of K_EXPD. */
typedef void (*row_fn)(const void *x, int64_t n, void *acc, const void *shift);

typedef struct rowk {
	row_fn s, v;
	size_t asize;
	const void *init;
} rowk;

#define LD_F32(p, i) (((const float *)(p))[i])
#define LD_F64(p, i) (((const double *)(p))[i])
#define LD_F16(p, i) gc_f16_to_f32(((const uint16_t *)(p))[i])
#define LD_BF16(p, i) gc_bf16_to_f32(((const uint16_t *)(p))[i])
#define LD_I8(p, i) (((const int8_t *)(p))[i])
#define LD_I16(p, i) (((const int16_t *)(p))[i])
#define LD_I32(p, i) (((const int32_t *)(p))[i])
#define LD_I64(p, i) (((const int64_t *)(p))[i])
#define LD_U8(p, i) (((const uint8_t *)(p))[i])
#define LD_U16(p, i) (((const uint16_t *)(p))[i])
#define LD_U32(p, i) (((const uint32_t *)(p))[i])
#define LD_U64(p, i) (((const uint64_t *)(p))[i])

#define M_ID(A, v, s) ((A)(v))
#define M_ABS(A, v, s) ((v) < 0 ? (A)0 - (A)(v) : (A)(v))
#define M_SQ(A, v, s) ((A)(v) * (A)(v))
#define M_EXPF(A, v, s) expf((float)(v) - (s))
#define M_EXPD(A, v, s) exp((double)(v) - (s))
#define C_ADD(a, b) ((a) + (b))
#define C_MUL(a, b) ((a) * (b))
#define C_MAXF(a, b) (((b) > (a) || isnan(b)) ? (b) : (a))
#define C_MINF(a, b) (((b) < (a) || isnan(b)) ? (b) : (a))
#define C_MAXI(a, b) ((b) > (a) ? (b) : (a))
#define C_MINI(a, b) ((b) < (a) ? (b) : (a))

#define ROWK(name, A, LD, MAP, COMB, INIT)                                                         \
	static const A name##_init = INIT;                                                         \
	GC_NN_SIMD static void name##_s(const void *restrict x, int64_t n, void *restrict acc,     \
			     const void *restrict shift)                                           \
	{                                                                                          \
		A sh = shift ? *(const A *)shift : (A)0;                                           \
		(void)sh;                                                                          \
		A s[8];                                                                            \
		for (int j = 0; j < 8; j++)                                                        \
			s[j] = INIT;                                                               \
		int64_t i = 0;                                                                     \
		for (; i + 8 <= n; i += 8)                                                         \
			for (int j = 0; j < 8; j++)                                                \
				s[j] = COMB(s[j], MAP(A, LD(x, i + j), sh));                       \
		A r = *(A *)acc;                                                                   \
		for (int j = 0; j < 8; j++)                                                        \
			r = COMB(r, s[j]);                                                         \
		for (; i < n; i++)                                                                 \
			r = COMB(r, MAP(A, LD(x, i), sh));                                         \
		*(A *)acc = r;                                                                     \
	}                                                                                          \
	GC_NN_SIMD static void name##_v(const void *restrict x, int64_t n, void *restrict acc,     \
			     const void *restrict shift)                                           \
	{                                                                                          \
		A *restrict a = acc;                                                               \
		const A *restrict sh = shift;                                                      \
		(void)sh;                                                                          \
		int64_t i = 0;                                                                     \
		/* fixed-size blocks: vectorised even by -O2's cheap model */                      \
		for (; i + 8 <= n; i += 8)                                                         \
			for (int j = 0; j < 8; j++)                                                \
				a[i + j] =                                                         \
				    COMB(a[i + j], MAP(A, LD(x, i + j), (sh ? sh[i + j] : (A)0))); \
		for (; i < n; i++)                                                                 \
			a[i] = COMB(a[i], MAP(A, LD(x, i), (sh ? sh[i] : (A)0)));                  \
	}

#define ROWS_FLOAT(sfx, A, LD, EXPMAP)                                                             \
	ROWK(add_##sfx, A, LD, M_ID, C_ADD, (A)0)                                                  \
	ROWK(abs_##sfx, A, LD, M_ABS, C_ADD, (A)0)                                                 \
	ROWK(sq_##sfx, A, LD, M_SQ, C_ADD, (A)0)                                                   \
	ROWK(mul_##sfx, A, LD, M_ID, C_MUL, (A)1)                                                  \
	ROWK(max_##sfx, A, LD, M_ID, C_MAXF, (A)-INFINITY)                                         \
	ROWK(min_##sfx, A, LD, M_ID, C_MINF, (A)INFINITY)                                          \
	ROWK(exp_##sfx, A, LD, EXPMAP, C_ADD, (A)0)

/* Signed integers: wrapping sums in uint64, max/min in int64, log-sum-exp
 * in double. */
#define ROWS_SINT(sfx, LD)                                                                         \
	ROWK(add_##sfx, uint64_t, LD, M_ID, C_ADD, 0)                                              \
	ROWK(abs_##sfx, uint64_t, LD, M_ABS, C_ADD, 0)                                             \
	ROWK(sq_##sfx, uint64_t, LD, M_SQ, C_ADD, 0)                                               \
	ROWK(mul_##sfx, uint64_t, LD, M_ID, C_MUL, 1)                                              \
	ROWK(max_##sfx, int64_t, LD, M_ID, C_MAXI, INT64_MIN)                                      \
	ROWK(min_##sfx, int64_t, LD, M_ID, C_MINI, INT64_MAX)                                      \
	ROWK(maxd_##sfx, double, LD, M_ID, C_MAXF, -INFINITY)                                      \
	ROWK(exp_##sfx, double, LD, M_EXPD, C_ADD, 0.0)

#define ROWS_UINT(sfx, LD)                                                                         \
	ROWK(add_##sfx, uint64_t, LD, M_ID, C_ADD, 0)                                              \
	ROWK(sq_##sfx, uint64_t, LD, M_SQ, C_ADD, 0)                                               \
	ROWK(mul_##sfx, uint64_t, LD, M_ID, C_MUL, 1)                                              \
	ROWK(max_##sfx, uint64_t, LD, M_ID, C_MAXI, 0)                                             \
	ROWK(min_##sfx, uint64_t, LD, M_ID, C_MINI, UINT64_MAX)                                    \
	ROWK(maxd_##sfx, double, LD, M_ID, C_MAXF, -INFINITY)                                      \
	ROWK(exp_##sfx, double, LD, M_EXPD, C_ADD, 0.0)

ROWS_FLOAT(f32, float, LD_F32, M_EXPF)
ROWS_FLOAT(f16, float, LD_F16, M_EXPF)
ROWS_FLOAT(bf16, float, LD_BF16, M_EXPF)
ROWS_FLOAT(f64, double, LD_F64, M_EXPD)
ROWS_SINT(i8, LD_I8)
ROWS_SINT(i16, LD_I16)
ROWS_SINT(i32, LD_I32)
ROWS_SINT(i64, LD_I64)
ROWS_UINT(u8, LD_U8)
ROWS_UINT(u16, LD_U16)
ROWS_UINT(u32, LD_U32)
ROWS_UINT(u64, LD_U64)

#define RK(name)                                                                                   \
	{                                                                                          \
		name##_s, name##_v, sizeof name##_init, &name##_init                               \
	}
#define TABLE_FLOAT(sfx)                                                                           \
	{                                                                                          \
		[K_ADD] = RK(add_##sfx), [K_ABS] = RK(abs_##sfx), [K_SQ] = RK(sq_##sfx),           \
		[K_MUL] = RK(mul_##sfx), [K_MAX] = RK(max_##sfx), [K_MIN] = RK(min_##sfx),         \
		[K_MAXD] = RK(max_##sfx), [K_EXPD] = RK(exp_##sfx)                                 \
	}
#define TABLE_SINT(sfx)                                                                            \
	{                                                                                          \
		[K_ADD] = RK(add_##sfx), [K_ABS] = RK(abs_##sfx), [K_SQ] = RK(sq_##sfx),           \
		[K_MUL] = RK(mul_##sfx), [K_MAX] = RK(max_##sfx), [K_MIN] = RK(min_##sfx),         \
		[K_MAXD] = RK(maxd_##sfx), [K_EXPD] = RK(exp_##sfx)                                \
	}
/* |x| is x for unsigned types. */
#define TABLE_UINT(sfx)                                                                            \
	{                                                                                          \
		[K_ADD] = RK(add_##sfx), [K_ABS] = RK(add_##sfx), [K_SQ] = RK(sq_##sfx),           \
		[K_MUL] = RK(mul_##sfx), [K_MAX] = RK(max_##sfx), [K_MIN] = RK(min_##sfx),         \
		[K_MAXD] = RK(maxd_##sfx), [K_EXPD] = RK(exp_##sfx)                                \
	}

static const rowk kernels[GC_DTYPE_COUNT][K_COUNT] = {
    [GC_DTYPE_FLOAT] = TABLE_FLOAT(f32),     [GC_DTYPE_FLOAT16] = TABLE_FLOAT(f16),
    [GC_DTYPE_BFLOAT16] = TABLE_FLOAT(bf16), [GC_DTYPE_DOUBLE] = TABLE_FLOAT(f64),
    [GC_DTYPE_INT8] = TABLE_SINT(i8),	     [GC_DTYPE_INT16] = TABLE_SINT(i16),
    [GC_DTYPE_INT32] = TABLE_SINT(i32),	     [GC_DTYPE_INT64] = TABLE_SINT(i64),
    [GC_DTYPE_UINT8] = TABLE_UINT(u8),	     [GC_DTYPE_UINT16] = TABLE_UINT(u16),
    [GC_DTYPE_UINT32] = TABLE_UINT(u32),     [GC_DTYPE_UINT64] = TABLE_UINT(u64),
    [GC_DTYPE_BOOL] = TABLE_UINT(u8),
};

/* ---- finishing: accumulator -> output ----------------------------------- */

enum post { P_NONE, P_MEAN, P_SQRT, P_LOG, P_LSE };

typedef void (*fin_fn)(void *out, const void *acc, const void *shift, int64_t n, enum post post,
		       int64_t count);

#define ST_NAT(T, y, i, v) (((T *)(y))[i] = (T)(v))
#define ST_F16(T, y, i, v) (((uint16_t *)(y))[i] = gc_f32_to_f16(v))
#define ST_BF16(T, y, i, v) (((uint16_t *)(y))[i] = gc_f32_to_bf16(v))

#define FIN_FLOAT(sfx, T, A, ST, SQRT, LOG)                                                        \
	static void fin_##sfx(void *out, const void *acc, const void *shift, int64_t n,            \
			      enum post post, int64_t count)                                       \
	{                                                                                          \
		const A *a = acc, *sh = shift;                                                     \
		for (int64_t i = 0; i < n; i++) {                                                  \
			A v = a[i];                                                                \
			switch (post) {                                                            \
			case P_NONE:                                                               \
				break;                                                             \
			case P_MEAN:                                                               \
				v = v / (A)count;                                                  \
				break;                                                             \
			case P_SQRT:                                                               \
				v = SQRT(v);                                                       \
				break;                                                             \
			case P_LOG:                                                                \
				v = LOG(v);                                                        \
				break;                                                             \
			case P_LSE:                                                                \
				v = LOG(v) + sh[i];                                                \
				break;                                                             \
			}                                                                          \
			ST(T, out, i, v);                                                          \
		}                                                                                  \
	}
FIN_FLOAT(f32, float, float, ST_NAT, sqrtf, logf)
FIN_FLOAT(f16, uint16_t, float, ST_F16, sqrtf, logf)
FIN_FLOAT(bf16, uint16_t, float, ST_BF16, sqrtf, logf)
FIN_FLOAT(f64, double, double, ST_NAT, sqrt, log)

/* double -> integer without undefined behaviour: NaN gives 0, the rest
 * saturates to 64 bits before the (wrapping) narrowing. */
static int64_t sat_i64(double v)
{
	if (!(v == v))
		return 0;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	return (int64_t)v;
}

static uint64_t sat_u64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}

/* Integer accumulators are 64-bit (uint64 sums, int64/uint64 max/min) except
 * for log-sum-exp, which is double. */
#define FIN_INT(sfx, T, S, SAT)                                                                    \
	static void fin_##sfx(void *out, const void *acc, const void *shift, int64_t n,            \
			      enum post post, int64_t count)                                       \
	{                                                                                          \
		const uint64_t *a = acc;                                                           \
		const double *ad = acc, *sh = shift;                                               \
		T *y = out;                                                                        \
		for (int64_t i = 0; i < n; i++) {                                                  \
			S v = (S)a[i];                                                             \
			switch (post) {                                                            \
			case P_NONE:                                                               \
				y[i] = (T)v;                                                       \
				break;                                                             \
			case P_MEAN:                                                               \
				y[i] = (T)(count ? v / (S)count : 0);                              \
				break;                                                             \
			case P_SQRT:                                                               \
				y[i] = (T)SAT(sqrt((double)a[i]));                                 \
				break;                                                             \
			case P_LOG:                                                                \
				y[i] = (T)SAT(log((double)v));                                     \
				break;                                                             \
			case P_LSE:                                                                \
				y[i] = (T)SAT(log(ad[i]) + sh[i]);                                 \
				break;                                                             \
			}                                                                          \
		}                                                                                  \
	}
FIN_INT(i8, int8_t, int64_t, sat_i64)
FIN_INT(i16, int16_t, int64_t, sat_i64)
FIN_INT(i32, int32_t, int64_t, sat_i64)
FIN_INT(i64, int64_t, int64_t, sat_i64)
FIN_INT(u8, uint8_t, uint64_t, sat_u64)
FIN_INT(u16, uint16_t, uint64_t, sat_u64)
FIN_INT(u32, uint32_t, uint64_t, sat_u64)
FIN_INT(u64, uint64_t, uint64_t, sat_u64)

static const fin_fn finishers[GC_DTYPE_COUNT] = {
    [GC_DTYPE_FLOAT] = fin_f32,	 [GC_DTYPE_FLOAT16] = fin_f16, [GC_DTYPE_BFLOAT16] = fin_bf16,
    [GC_DTYPE_DOUBLE] = fin_f64, [GC_DTYPE_INT8] = fin_i8,     [GC_DTYPE_INT16] = fin_i16,
    [GC_DTYPE_INT32] = fin_i32,	 [GC_DTYPE_INT64] = fin_i64,   [GC_DTYPE_UINT8] = fin_u8,
    [GC_DTYPE_UINT16] = fin_u16, [GC_DTYPE_UINT32] = fin_u32,  [GC_DTYPE_UINT64] = fin_u64,
    [GC_DTYPE_BOOL] = fin_u8,
};

/* ---- the reduction plan ------------------------------------------------- */

enum red_op { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP, R_SUMSQUARE };

static const struct {
	enum kind kind;
	enum post post;
} op_info[] = {
    [R_SUM] = {K_ADD, P_NONE},	    [R_MEAN] = {K_ADD, P_MEAN},	 [R_MAX] = {K_MAX, P_NONE},
    [R_MIN] = {K_MIN, P_NONE},	    [R_PROD] = {K_MUL, P_NONE},	 [R_L1] = {K_ABS, P_NONE},
    [R_L2] = {K_SQ, P_SQRT},	    [R_LOGSUM] = {K_ADD, P_LOG}, [R_LOGSUMEXP] = {K_EXPD, P_LSE},
    [R_SUMSQUARE] = {K_SQ, P_NONE},
};

typedef struct red_plan {
	int32_t rank; /* collapsed */
	bool inner_reduced, empty, noop, acc_in_out, lse;
	int64_t dims[GC_MAX_RANK], ostr[GC_MAX_RANK];
	int64_t in_n, out_n, count;
	size_t esize;
	rowk main, max; /* max: the first pass of log-sum-exp */
	/* a reduction to one value over RED_CHUNK elements and more: chunks
	 * folded apart (each into its partial, in scratch at part_off), then
	 * the partials folded in order by comb_main / comb_max */
	int64_t chunks;
	uint64_t part_off;
	rowk comb_main, comb_max;
	enum post post;
	fin_fn fin;
} red_plan;

/*
 * A reduction to one value is cut into chunks of RED_CHUNK elements whatever
 * the thread count, so that its sum is the same at any count: each chunk
 * folded into a partial of its own, the chunks split over the threads, then
 * the partials folded in order (a whole walk had run on one thread: ReduceSum
 * of 4M floats 0.59 ms at one thread and at two).
 */
#define RED_CHUNK 65536

/* The kernel that folds the accumulators of kind `kind` of a `dt` reduction
 * (their partials): sums add, products multiply, extremes take theirs, in
 * the accumulators' own type. */
static rowk comb_kernel(gc_dtype dt, enum kind kind)
{
	bool fl = dt == GC_DTYPE_FLOAT || dt == GC_DTYPE_FLOAT16 || dt == GC_DTYPE_BFLOAT16;
	bool signed_int = dt == GC_DTYPE_INT8 || dt == GC_DTYPE_INT16 || dt == GC_DTYPE_INT32 ||
			  dt == GC_DTYPE_INT64;
	gc_dtype acc; /* the accumulators' type */
	if (fl)
		acc = GC_DTYPE_FLOAT;
	else if (dt == GC_DTYPE_DOUBLE || kind == K_MAXD || kind == K_EXPD)
		acc = GC_DTYPE_DOUBLE;
	else if (signed_int && (kind == K_MAX || kind == K_MIN))
		acc = GC_DTYPE_INT64;
	else
		acc = GC_DTYPE_UINT64;
	enum kind c = kind == K_MUL ? K_MUL : kind == K_MIN ? K_MIN
				  : kind == K_MAX || kind == K_MAXD ? K_MAX : K_ADD;
	return kernels[acc][c];
}

typedef struct chunk_job {
	const red_plan *p;
	const char *x;
	const rowk *rk;
	char *parts;
	const char *shift;
} chunk_job;

static void chunk_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const chunk_job *j = arg;
	const red_plan *p = j->p;
	int64_t c0, c1;
	gc_nn_part_range(p->chunks, part, parts, &c0, &c1);
	for (int64_t c = c0; c < c1; c++) {
		int64_t lo = c * RED_CHUNK, n = p->in_n - lo < RED_CHUNK ? p->in_n - lo : RED_CHUNK;
		char *acc = j->parts + c * (int64_t)j->rk->asize;
		memcpy(acc, j->rk->init, j->rk->asize);
		j->rk->s(j->x + lo * (int64_t)p->esize, n, acc, j->shift);
	}
}

/* Folds all of x (one reduced axis) into acc[0] (initialised) chunk by chunk. */
static void fold_chunks(int threads, const red_plan *p, const char *x, const rowk *rk,
			const rowk *comb, char *acc, const char *shift, char *scratch)
{
	chunk_job j = {p, x, rk, scratch + p->part_off, shift};
	int t = gc_nn_par_threads(threads, (double)p->in_n);
	gc_nn_run_parts(t, p->chunks, chunk_part, &j);
	comb->s(j.parts, p->chunks, acc, NULL);
}

static void fill_acc(void *acc, const void *init, size_t asize, int64_t n)
{
	if (asize == 4) {
		uint32_t v;
		memcpy(&v, init, 4);
		for (int64_t i = 0; i < n; i++)
			((uint32_t *)acc)[i] = v;
	} else {
		uint64_t v;
		memcpy(&v, init, 8);
		for (int64_t i = 0; i < n; i++)
			((uint64_t *)acc)[i] = v;
	}
}

/* Folds into acc (already initialised) with row kernel rk the part of x
 * whose index along collapsed axis d is in [lo, hi): with d a kept axis,
 * the accumulators it touches are its own, each folded in the order a
 * whole walk folds it. */
static void walk_part(const red_plan *p, const char *x, const rowk *rk, char *acc,
		      const char *shift, int d, int64_t lo, int64_t hi)
{
	int last = p->rank - 1;
	int64_t dims[GC_MAX_RANK], istr[GC_MAX_RANK], s = 1;
	for (int i = last; i >= 0; i--) {
		istr[i] = s;
		s *= p->dims[i];
		dims[i] = p->dims[i];
	}
	dims[d] = hi - lo;
	int64_t es = (int64_t)p->esize, as = (int64_t)rk->asize, o0 = lo * p->ostr[d] * as;
	x += lo * istr[d] * es;
	acc += o0;
	if (shift)
		shift += o0;
	int64_t len = dims[last], rows = 1, xoff = 0, ooff = 0;
	for (int i = 0; i < last; i++)
		rows *= dims[i];
	int64_t idx[GC_MAX_RANK] = {0};
	row_fn f = p->inner_reduced ? rk->s : rk->v;
	for (int64_t r = 0; r < rows; r++) {
		f(x + xoff * es, len, acc + ooff * as, shift ? shift + ooff * as : NULL);
		for (int i = last - 1; i >= 0; i--) {
			if (++idx[i] < dims[i]) {
				ooff += p->ostr[i];
				xoff += istr[i];
				break;
			}
			ooff -= p->ostr[i] * (dims[i] - 1);
			xoff -= istr[i] * (dims[i] - 1);
			idx[i] = 0;
		}
	}
}

typedef struct walk_job {
	const red_plan *p;
	const char *x;
	const rowk *rk;
	char *acc;
	const char *shift;
	int d;
} walk_job;

static void walk_job_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const walk_job *j = arg;
	int64_t lo, hi;
	gc_nn_part_range(j->p->dims[j->d], part, parts, &lo, &hi);
	if (lo < hi)
		walk_part(j->p, j->x, j->rk, j->acc, j->shift, j->d, lo, hi);
}

/* Folds all of x into acc, the outermost kept axis split over up to
 * `threads` threads when the work is large enough (results do not depend on
 * the split). A reduction to one value stays on one thread here (a long
 * one goes to fold_chunks instead). */
static void walk(int threads, const red_plan *p, const char *x, const rowk *rk, char *acc,
		 const char *shift)
{
	int d = 0;
	while (d < p->rank && p->ostr[d] == 0)
		d++;
	int t = d < p->rank ? gc_nn_par_threads(threads, (double)p->in_n) : 1;
	if (t <= 1 || p->dims[d] < 2) {
		walk_part(p, x, rk, acc, shift, 0, 0, p->dims[0]);
		return;
	}
	walk_job j = {p, x, rk, acc, shift, d};
	gc_nn_parallel(t, gc_nn_par_parts(t, p->dims[d]), walk_job_part, &j);
}

static int run_reduce(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const red_plan *p = n->state;
	char *y = out[0]->data;
	const char *x = in[0]->data;
	if (p->noop) {
		if (y != x)
			memcpy(y, x, (size_t)(p->in_n * (int64_t)p->esize));
		return 0;
	}
	if (p->out_n == 0)
		return 0;
	size_t as = p->main.asize;
	char *acc = p->acc_in_out ? y : k->scratch;
	const char *shift = NULL;
	if (p->lse) {
		/* pass 1: the maximum, so exp never overflows; a non-finite
		 * maximum (empty, all -inf, inf, NaN) shifts by 0 instead */
		char *mx = acc;
		acc += p->out_n * (int64_t)as;
		fill_acc(mx, p->max.init, as, p->out_n);
		if (p->chunks)
			fold_chunks(k->threads, p, x, &p->max, &p->comb_max, mx, NULL, k->scratch);
		else if (!p->empty)
			walk(k->threads, p, x, &p->max, mx, NULL);
		for (int64_t i = 0; i < p->out_n; i++) {
			if (as == 4 && !isfinite(((float *)mx)[i]))
				((float *)mx)[i] = 0;
			if (as == 8 && !isfinite(((double *)mx)[i]))
				((double *)mx)[i] = 0;
		}
		shift = mx;
	}
	fill_acc(acc, p->main.init, as, p->out_n);
	if (p->chunks)
		fold_chunks(k->threads, p, x, &p->main, &p->comb_main, acc, shift, k->scratch);
	else if (!p->empty)
		walk(k->threads, p, x, &p->main, acc, shift);
	if (!p->acc_in_out || p->post != P_NONE)
		p->fin(y, acc, shift, p->out_n, p->post, p->count);
	return 0;
}

static bool reduce_type_ok(gc_dtype dt, enum red_op op)
{
	if (dt == GC_DTYPE_BOOL)
		return op == R_MAX || op == R_MIN;
	return dt < GC_DTYPE_COUNT && finishers[dt] != NULL;
}

static int reduce_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			  enum red_op op)
{
	const gc_tensor *x = in[0];
	if (!reduce_type_ok(x->dtype, op))
		return gc_kerr(k, GC_EINVAL, "input 'data' has type %s, which %s does not support",
			       gc_dtype_name(x->dtype), n->op_type);
	bool axes_input = (op == R_SUM && n->opset >= 13) || n->opset >= 18;
	int64_t keepdims = gc_attr_i(k, "keepdims", 1), noop = 0;
	int64_t axes[GC_MAX_RANK], na = 0;
	if (axes_input) {
		noop = gc_attr_i(k, "noop_with_empty_axes", 0);
		if (gc_attr_find(n, "axes"))
			return gc_kerr(
			    k, GC_EINVAL,
			    "attribute 'axes' is not allowed at opset %d: axes is input 1",
			    n->opset);
		if (n->n_in > 1 && in[1] && gc_const_ints(k, in[1], "axes", axes, GC_MAX_RANK, &na))
			return gc_kok(k);
	} else {
		if (n->n_in > 1 && in[1])
			return gc_kerr(k, GC_EINVAL,
				       "input 'axes' is not allowed at opset %d: use the attribute",
				       n->opset);
		const int64_t *v;
		na = gc_attr_ints(k, "axes", &v);
		if (!gc_kok(k) && na > GC_MAX_RANK)
			return gc_kerr(k, GC_EINVAL, "attribute 'axes' has %" PRId64 " entries",
				       na);
		if (na > 0)
			memcpy(axes, v, (size_t)na * sizeof *axes);
	}
	if (gc_kok(k))
		return gc_kok(k);
	red_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->esize = gc_dtype_size(x->dtype);
	p->in_n = gc_tensor_numel(x);
	/* noop_with_empty_axes reduces nothing, yet L1, L2, SumSquare,
	 * LogSum and LogSumExp still apply their element function (|x|, x*x,
	 * log x, ...), as ONNX's reference and ONNX Runtime do. */
	bool plain = op == R_SUM || op == R_MEAN || op == R_MAX || op == R_MIN || op == R_PROD;
	if (na == 0 && noop && plain) {
		p->noop = true;
		gc_set_shape(out[0], x->dtype, x->rank, x->dims);
		n->inplace_ok = true;
		n->run = run_reduce;
		return 0;
	}
	bool red[GC_MAX_RANK] = {false};
	for (int i = 0; i < na; i++) {
		int32_t a;
		if (gc_axis(k, axes[i], x->rank, &a))
			return gc_kok(k);
		if (red[a])
			return gc_kerr(k, GC_EINVAL, "axes names axis %" PRId64 " more than once",
				       axes[i]);
		red[a] = true;
	}
	if (na == 0 && !noop)
		for (int i = 0; i < x->rank; i++)
			red[i] = true;
	int64_t dims[GC_MAX_RANK];
	int32_t orank = 0;
	p->count = 1;
	for (int i = 0; i < x->rank; i++) {
		if (red[i])
			p->count *= x->dims[i];
		if (!red[i] || keepdims)
			dims[orank++] = red[i] ? 1 : x->dims[i];
	}
	gc_set_shape(out[0], x->dtype, orank, dims);
	p->out_n = gc_tensor_numel(out[0]);
	p->empty = p->in_n == 0;
	/* Collapse: drop unit axes, merge neighbours of the same kind. */
	bool kind[GC_MAX_RANK];
	for (int i = 0; i < x->rank; i++) {
		if (x->dims[i] == 1)
			continue;
		if (p->rank > 0 && kind[p->rank - 1] == red[i]) {
			p->dims[p->rank - 1] *= x->dims[i];
			continue;
		}
		kind[p->rank] = red[i];
		p->dims[p->rank++] = x->dims[i];
	}
	if (p->rank == 0) {
		kind[0] = false;
		p->dims[0] = 1;
		p->rank = 1;
	}
	int64_t s = 1;
	for (int i = p->rank - 1; i >= 0; i--) {
		p->ostr[i] = kind[i] ? 0 : s;
		if (!kind[i])
			s *= p->dims[i];
	}
	p->inner_reduced = kind[p->rank - 1];
	p->main = kernels[x->dtype][op_info[op].kind];
	p->max = kernels[x->dtype][K_MAXD];
	p->post = op_info[op].post;
	p->fin = finishers[x->dtype];
	p->lse = op == R_LOGSUMEXP;
	p->acc_in_out = !p->lse && p->main.asize == p->esize &&
			(x->dtype == GC_DTYPE_FLOAT || x->dtype == GC_DTYPE_DOUBLE ||
			 x->dtype == GC_DTYPE_INT64 || x->dtype == GC_DTYPE_UINT64);
	if (!p->acc_in_out)
		n->scratch_bytes = (uint64_t)p->out_n * p->main.asize * (p->lse ? 2 : 1);
	if (p->rank == 1 && p->inner_reduced && p->in_n >= 2 * RED_CHUNK) {
		p->chunks = (p->in_n + RED_CHUNK - 1) / RED_CHUNK;
		p->part_off = (n->scratch_bytes + 63) & ~(uint64_t)63;
		n->scratch_bytes = p->part_off + (uint64_t)p->chunks * 8;
		p->comb_main = comb_kernel(x->dtype, op_info[op].kind);
		p->comb_max = comb_kernel(x->dtype, K_MAXD);
	}
	n->run = run_reduce;
	return 0;
}

#define GC_REDUCE_OP_(Name, op)                                                                    \
	int gc_prepare_##Name(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out) \
	{                                                                                          \
		return reduce_prepare(k, n, in, out, op);                                          \
	}
GC_REDUCE_OP_(ReduceSum, R_SUM)
GC_REDUCE_OP_(ReduceMean, R_MEAN)
GC_REDUCE_OP_(ReduceMax, R_MAX)
GC_REDUCE_OP_(ReduceMin, R_MIN)
GC_REDUCE_OP_(ReduceProd, R_PROD)
GC_REDUCE_OP_(ReduceL1, R_L1)
GC_REDUCE_OP_(ReduceL2, R_L2)
GC_REDUCE_OP_(ReduceLogSum, R_LOGSUM)
GC_REDUCE_OP_(ReduceLogSumExp, R_LOGSUMEXP)
GC_REDUCE_OP_(ReduceSumSquare, R_SUMSQUARE)

/* ---- ArgMax, ArgMin ----------------------------------------------------- */

typedef struct arg_plan {
	int64_t outer, n, inner;
	bool last;
	/* units [u0, u1): rows (inner == 1), or a row block's chunk of
	 * GC_NN_CHUNK columns (nn-par.h) */
	void (*fn)(const void *x, const struct arg_plan *p, int64_t *out, int64_t u0, int64_t u1);
} arg_plan;

#define ISNAN_F(v) isnan(v)
#define ISNAN_I(v) 0
#define GT(a, b) ((a) > (b))
#define LT(a, b) ((a) < (b))
#define GE(a, b) ((a) >= (b))
#define LE(a, b) ((a) <= (b))
/* NaN counts as the extreme (NumPy's argmax/argmin return the first NaN). */
#define TAKE(v, best, last, ISNAN, CMP, CMPE)                                                      \
	((last) ? (ISNAN(v) || (!ISNAN(best) && CMPE(v, best)))                                    \
		: (!ISNAN(best) && (CMP(v, best) || ISNAN(v))))

/*
 * A contiguous row is scanned twice: once for the extreme value (8
 * independent lanes, no branches) and whether a NaN occurs, then for the
 * first (or last) index holding it. Rows strided by `inner` keep a running
 * best per column, GC_NN_CHUNK columns at a time on the stack. Rows and chunks
 * are split over the threads.
 */
#define ARGK(name, V, LD, ISNAN, CMP, CMPE)                                                        \
	static int64_t name##_row(const void *x, int64_t base, int64_t n, bool last)               \
	{                                                                                          \
		V l[8];                                                                            \
		bool nan = false;                                                                  \
		for (int j = 0; j < 8; j++)                                                        \
			l[j] = LD(x, base);                                                        \
		int64_t i = 0;                                                                     \
		for (; i + 8 <= n; i += 8)                                                         \
			for (int j = 0; j < 8; j++) {                                              \
				V v = LD(x, base + i + j);                                         \
				nan |= ISNAN(v);                                                   \
				l[j] = CMP(v, l[j]) ? v : l[j];                                    \
			}                                                                          \
		for (; i < n; i++) {                                                               \
			V v = LD(x, base + i);                                                     \
			nan |= ISNAN(v);                                                           \
			l[0] = CMP(v, l[0]) ? v : l[0];                                            \
		}                                                                                  \
		V best = l[0];                                                                     \
		for (int j = 1; j < 8; j++)                                                        \
			best = CMP(l[j], best) ? l[j] : best;                                      \
		if (last) {                                                                        \
			for (i = n - 1; i > 0; i--) {                                              \
				V v = LD(x, base + i);                                             \
				if (nan ? ISNAN(v) : v == best)                                    \
					break;                                                     \
			}                                                                          \
			return i;                                                                  \
		}                                                                                  \
		for (i = 0; i < n - 1; i++) {                                                      \
			V v = LD(x, base + i);                                                     \
			if (nan ? ISNAN(v) : v == best)                                            \
				break;                                                             \
		}                                                                                  \
		return i;                                                                          \
	}                                                                                          \
	static void name(const void *x, const arg_plan *p, int64_t *out, int64_t u0, int64_t u1)   \
	{                                                                                          \
		int64_t n = p->n, inner = p->inner;                                                \
		if (inner == 1) {                                                                  \
			for (int64_t o = u0; o < u1; o++)                                          \
				out[o] = name##_row(x, o * n, n, p->last);                         \
			return;                                                                    \
		}                                                                                  \
		V best[GC_NN_CHUNK];                                                               \
		for (int64_t u = u0; u < u1; u++) {                                                \
			int64_t j0, w, o = gc_nn_chunk_at(u, inner, &j0, &w);                      \
			int64_t base = o * n * inner + j0, *oi = out + o * inner + j0;             \
			for (int64_t j = 0; j < w; j++) {                                          \
				best[j] = LD(x, base + j);                                         \
				oi[j] = 0;                                                         \
			}                                                                          \
			for (int64_t i = 1; i < n; i++)                                            \
				for (int64_t j = 0; j < w; j++) {                                  \
					V v = LD(x, base + i * inner + j);                         \
					if (TAKE(v, best[j], p->last, ISNAN, CMP, CMPE)) {         \
						best[j] = v;                                       \
						oi[j] = i;                                         \
					}                                                          \
				}                                                                  \
		}                                                                                  \
	}

#define ARGS(sfx, V, LD, ISNAN)                                                                    \
	ARGK(argmax_##sfx, V, LD, ISNAN, GT, GE)                                                   \
	ARGK(argmin_##sfx, V, LD, ISNAN, LT, LE)
ARGS(f32, float, LD_F32, ISNAN_F)
ARGS(f64, double, LD_F64, ISNAN_F)
ARGS(f16, float, LD_F16, ISNAN_F)
ARGS(bf16, float, LD_BF16, ISNAN_F)
ARGS(i8, int8_t, LD_I8, ISNAN_I)
ARGS(i16, int16_t, LD_I16, ISNAN_I)
ARGS(i32, int32_t, LD_I32, ISNAN_I)
ARGS(i64, int64_t, LD_I64, ISNAN_I)
ARGS(u8, uint8_t, LD_U8, ISNAN_I)
ARGS(u16, uint16_t, LD_U16, ISNAN_I)
ARGS(u32, uint32_t, LD_U32, ISNAN_I)
ARGS(u64, uint64_t, LD_U64, ISNAN_I)

typedef void (*arg_fn)(const void *x, const arg_plan *p, int64_t *out, int64_t u0, int64_t u1);
#define ARG_ROW(sfx)                                                                               \
	{                                                                                          \
		argmax_##sfx, argmin_##sfx                                                         \
	}
static const arg_fn arg_kernels[GC_DTYPE_COUNT][2] = {
    [GC_DTYPE_FLOAT] = ARG_ROW(f32),   [GC_DTYPE_DOUBLE] = ARG_ROW(f64),
    [GC_DTYPE_FLOAT16] = ARG_ROW(f16), [GC_DTYPE_BFLOAT16] = ARG_ROW(bf16),
    [GC_DTYPE_INT8] = ARG_ROW(i8),     [GC_DTYPE_INT16] = ARG_ROW(i16),
    [GC_DTYPE_INT32] = ARG_ROW(i32),   [GC_DTYPE_INT64] = ARG_ROW(i64),
    [GC_DTYPE_UINT8] = ARG_ROW(u8),    [GC_DTYPE_UINT16] = ARG_ROW(u16),
    [GC_DTYPE_UINT32] = ARG_ROW(u32),  [GC_DTYPE_UINT64] = ARG_ROW(u64),
};

typedef struct arg_job {
	const arg_plan *p;
	const void *x;
	int64_t *out;
} arg_job;

static int64_t arg_units(const arg_plan *p)
{
	return p->inner == 1 ? p->outer : gc_nn_chunk_units(p->outer, p->inner);
}

static void arg_part(void *arg, int part, int parts, int slot)
{
	(void)slot;
	const arg_job *j = arg;
	int64_t u0, u1;
	gc_nn_part_range(arg_units(j->p), part, parts, &u0, &u1);
	j->p->fn(j->x, j->p, j->out, u0, u1);
}

static int run_arg(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const arg_plan *p = n->state;
	arg_job j = {p, in[0]->data, out[0]->data};
	/* ~2 cycles an element: a compare and a select */
	int t = gc_nn_par_threads(k->threads, 2.0 * (double)(p->outer * p->n * p->inner));
	gc_nn_run_parts(t, arg_units(p), arg_part, &j);
	return 0;
}

static int arg_prepare(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		       int which)
{
	const gc_tensor *x = in[0];
	if (x->dtype >= GC_DTYPE_COUNT || !arg_kernels[x->dtype][which])
		return gc_kerr(k, GC_EINVAL, "input 'data' has type %s, which %s does not support",
			       gc_dtype_name(x->dtype), n->op_type);
	int64_t axis = gc_attr_i(k, "axis", 0), keepdims = gc_attr_i(k, "keepdims", 1);
	int64_t last = n->opset >= 12 ? gc_attr_i(k, "select_last_index", 0) : 0;
	if (gc_kok(k))
		return gc_kok(k);
	int32_t a;
	if (x->rank == 0)
		return gc_kerr(k, GC_EINVAL, "input 'data' must have rank >= 1");
	if (gc_axis(k, axis, x->rank, &a))
		return gc_kok(k);
	if (x->dims[a] == 0 && gc_tensor_numel(x) == 0) {
		int64_t rest = 1;
		for (int i = 0; i < x->rank; i++)
			if (i != a)
				rest *= x->dims[i];
		if (rest)
			return gc_kerr(k, GC_EINVAL, "cannot take %s over axis %d of size 0",
				       n->op_type, a);
	}
	arg_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	p->outer = 1;
	p->inner = 1;
	for (int i = 0; i < a; i++)
		p->outer *= x->dims[i];
	for (int i = a + 1; i < x->rank; i++)
		p->inner *= x->dims[i];
	p->n = x->dims[a];
	if (p->n == 0) /* nothing to scan: the output is empty too */
		p->outer = 0;
	p->last = last != 0;
	p->fn = arg_kernels[x->dtype][which];
	int64_t dims[GC_MAX_RANK];
	int32_t orank = 0;
	for (int i = 0; i < x->rank; i++)
		if (i != a || keepdims)
			dims[orank++] = i == a ? 1 : x->dims[i];
	gc_set_shape(out[0], GC_DTYPE_INT64, orank, dims);
	n->run = run_arg;
	return 0;
}

int gc_prepare_ArgMax(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return arg_prepare(k, n, in, out, 0);
}

int gc_prepare_ArgMin(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return arg_prepare(k, n, in, out, 1);
}
