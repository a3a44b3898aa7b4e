/*
 * Cast and CastLike between every numeric type, bool, float16 and bfloat16:
 * one generated kernel per (from, to) pair; and to and from strings, as
 * NumPy (ONNX's reference) converts them:
 *  - to string: integers in decimal, bool as "True"/"False", floating values
 *    as NumPy's str() of the scalar: the shortest digits that read back to
 *    the same value of that type, positional for 1e-4 <= |x| < 1e16 ("0.5",
 *    "100.0"), scientific otherwise ("1e-05", "1.5e+20"), "nan", "inf",
 *    "-inf";
 *  - from string: decimal numbers (optional sign, fraction, exponent, spaces
 *    around), "inf"/"infinity"/"nan" in any case with a sign ("+INF",
 *    "-INF", "NaN"); integer types take integers only (as NumPy does) and
 *    refuse values out of their range; bool takes "true"/"false" in any case
 *    or a number (non-zero is true). Anything else is refused naming the
 *    node, the element and the string. Numbers are read and written in the
 *    C locale, whatever the process's locale.
 */
#include "elementwise-impl.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

#include "../alloc.h"
#include "../ops.h"
#include "float8.h"

/* clang-format off */
/*
 * Each element goes through its canonical class, K: S (signed integer), U
 * (unsigned integer) or F (floating), and is stored into the target's class,
 * C: B (bool), S, U, F, H (float16) or Z (bfloat16).
 */
#define LD_ID(x) (x)
#define LD_BOOL(x) ((int64_t)((x) != 0))
#define LD_F16(x) gc_f16_to_f32(x)
#define LD_BF16(x) gc_bf16_to_f32(x)

/*
 * float -> bfloat16 keeps the high half of the float (NaN stays NaN), as the
 * reference test data of the ONNX version we test against (1.12) expects;
 * arithmetic on bfloat16 elsewhere rounds to nearest even.
 */
static inline uint16_t bf16_trunc(float f)
{
	uint32_t x;
	memcpy(&x, &f, 4);
	if ((x & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((x >> 16) | 0x40);
	return (uint16_t)(x >> 16);
}

#define ST_B(v, TT) (uint8_t)((v) != 0)
#define ST_SB ST_B
#define ST_UB ST_B
#define ST_FB ST_B
#define ST_C(v, TT) (TT)(v)
#define ST_SS ST_C
#define ST_SU ST_C
#define ST_SF ST_C
#define ST_US ST_C
#define ST_UU ST_C
#define ST_UF ST_C
#define ST_FF ST_C
#define ST_FS(v, TT) (TT)gc_ew_f2i64(v)
#define ST_FU(v, TT) (TT)gc_ew_f2u64(v)
#define ST_H(v, TT) gc_f32_to_f16((float)(v))
#define ST_SH ST_H
#define ST_UH ST_H
#define ST_FH ST_H
#define ST_Z(v, TT) bf16_trunc((float)(v))
#define ST_SZ ST_Z
#define ST_UZ ST_Z
#define ST_FZ ST_Z

/* X(suffix, DTYPE, C type, load, K, C), listed twice so that the lists can
 * nest. */
#define CAST_TYPES_A(X)                                                        \
	X(b, BOOL, uint8_t, LD_BOOL, S, B)                                     \
	X(i8, INT8, int8_t, LD_ID, S, S)                                       \
	X(i16, INT16, int16_t, LD_ID, S, S)                                    \
	X(i32, INT32, int32_t, LD_ID, S, S)                                    \
	X(i64, INT64, int64_t, LD_ID, S, S)                                    \
	X(u8, UINT8, uint8_t, LD_ID, U, U)                                     \
	X(u16, UINT16, uint16_t, LD_ID, U, U)                                  \
	X(u32, UINT32, uint32_t, LD_ID, U, U)                                  \
	X(u64, UINT64, uint64_t, LD_ID, U, U)                                  \
	X(f32, FLOAT, float, LD_ID, F, F)                                      \
	X(f64, DOUBLE, double, LD_ID, F, F)                                    \
	X(f16, FLOAT16, uint16_t, LD_F16, F, H)                                \
	X(bf16, BFLOAT16, uint16_t, LD_BF16, F, Z)
#define CAST_TYPES_B(X, a, b, c, d, e, f)                                      \
	X(a, b, c, d, e, f, b, BOOL, uint8_t, LD_BOOL, S, B)                   \
	X(a, b, c, d, e, f, i8, INT8, int8_t, LD_ID, S, S)                     \
	X(a, b, c, d, e, f, i16, INT16, int16_t, LD_ID, S, S)                  \
	X(a, b, c, d, e, f, i32, INT32, int32_t, LD_ID, S, S)                  \
	X(a, b, c, d, e, f, i64, INT64, int64_t, LD_ID, S, S)                  \
	X(a, b, c, d, e, f, u8, UINT8, uint8_t, LD_ID, U, U)                   \
	X(a, b, c, d, e, f, u16, UINT16, uint16_t, LD_ID, U, U)                \
	X(a, b, c, d, e, f, u32, UINT32, uint32_t, LD_ID, U, U)                \
	X(a, b, c, d, e, f, u64, UINT64, uint64_t, LD_ID, U, U)                \
	X(a, b, c, d, e, f, f32, FLOAT, float, LD_ID, F, F)                    \
	X(a, b, c, d, e, f, f64, DOUBLE, double, LD_ID, F, F)                  \
	X(a, b, c, d, e, f, f16, FLOAT16, uint16_t, LD_F16, F, H)              \
	X(a, b, c, d, e, f, bf16, BFLOAT16, uint16_t, LD_BF16, F, Z)

#define CAST_PAIR(fs, FD, FT, FLD, FK, FC, ts, TD, TT, TLD, TK, TC)            \
	static void cast_##fs##_##ts(int64_t n, const void *const *in, const int64_t *inc, \
				     void *out, const void *arg)                \
	{                                                                      \
		const FT *a = in[0];                                           \
		TT *o = out;                                                   \
		(void)inc;                                                     \
		(void)arg;                                                     \
		for (int64_t i = 0; i < n; i++)                                \
			o[i] = ST_##FK##TC(FLD(a[i]), TT);                     \
	}
#define CAST_FROM(fs, FD, FT, FLD, FK, FC) CAST_TYPES_B(CAST_PAIR, fs, FD, FT, FLD, FK, FC)
CAST_TYPES_A(CAST_FROM)

#define CAST_TBL_PAIR(fs, FD, FT, FLD, FK, FC, ts, TD, TT, TLD, TK, TC)        \
	[GC_DTYPE_##FD][GC_DTYPE_##TD] = cast_##fs##_##ts,
#define CAST_TBL_FROM(fs, FD, FT, FLD, FK, FC)                                 \
	CAST_TYPES_B(CAST_TBL_PAIR, fs, FD, FT, FLD, FK, FC)
static const gc_ew_fn cast_fns[GC_DTYPE_COUNT][GC_DTYPE_COUNT] = { CAST_TYPES_A(
	CAST_TBL_FROM) };
/* clang-format on */

static void copy_run(int64_t n, const void *const *in, const int64_t *inc, void *out,
		     const void *arg)
{
	(void)inc;
	const size_t *size = arg;
	if (out != in[0])
		memcpy(out, in[0], (size_t)n * *size);
}

static const size_t elem_size[GC_DTYPE_COUNT] = {
#define GC_X_(name, value, size, text) [value] = size,
    GC_DTYPE_LIST(GC_X_)
#undef GC_X_
};

/* ---- strings ------------------------------------------------------------ */

typedef enum { FP_F64, FP_F32, FP_F16, FP_BF16 } fp_kind;

/* double -> float16, rounding to nearest even (no double rounding through
 * float32). */
static uint16_t f64_to_f16(double d)
{
	uint16_t sign = signbit(d) ? 0x8000 : 0;
	if (isnan(d))
		return (uint16_t)(sign | 0x7e00);
	double a = fabs(d);
	if (a >= 65520.0) /* the midpoint above 65504 rounds to even: inf */
		return (uint16_t)(sign | 0x7c00);
	if (a < 0x1p-14) /* subnormal: units of 2^-24 (1024 becomes the smallest normal) */
		return (uint16_t)(sign | (uint16_t)nearbyint(a * 0x1p24));
	int e;
	frexp(a, &e);				/* a in [2^(e-1), 2^e) */
	double q = nearbyint(ldexp(a, 11 - e)); /* 1024 .. 2048 */
	int be = e - 1 + 15;
	if (q == 2048.0) {
		q = 1024.0;
		be++;
	}
	if (be >= 31)
		return (uint16_t)(sign | 0x7c00);
	return (uint16_t)(sign | (uint16_t)(be << 10) | (uint16_t)((int)q - 1024));
}

/* Text to bfloat16 rounds to nearest even (through float32), as IEEE
 * conversions do; only float -> bfloat16 keeps ONNX 1.12's truncation. */
static uint16_t f64_to_bf16(double d)
{
	return gc_f32_to_bf16((float)d);
}

/* Whether the decimal text s reads back, as a `kind` value, to v. */
static bool reads_back(const char *s, double v, fp_kind kind)
{
	switch (kind) {
	case FP_F32:
		return strtof(s, NULL) == (float)v;
	case FP_F16:
		return f64_to_f16(strtod(s, NULL)) == f64_to_f16(v);
	case FP_BF16:
		return f64_to_bf16(strtod(s, NULL)) == f64_to_bf16(v);
	default:
		return strtod(s, NULL) == v;
	}
}

/*
 * Whether a p-digit decimal reads back, as a `kind` value, to v (> 0,
 * finite); if so, the closest such one is *m x 10^*scale. Only the
 * correctly rounded p-digit decimal and its two neighbours can: any other
 * p-digit decimal that reads back lies beyond one of them, which then lies
 * between it and v, so inside the (contiguous) interval that reads back.
 * The neighbours matter when v is a power of two (a lopsided interval).
 */
static bool digits_read_back(double v, fp_kind kind, int p, uint64_t *m, int *scale)
{
	char buf[48], cand[48];
	snprintf(buf, sizeof buf, "%.*e", p - 1, v);
	uint64_t r = 0;
	const char *q = buf;
	for (; *q && *q != 'e'; q++)
		if (isdigit((unsigned char)*q))
			r = r * 10 + (uint64_t)(*q - '0');
	*scale = (*q ? atoi(q + 1) : 0) - p + 1;
	if (reads_back(buf, v, kind)) {
		*m = r;
		return true;
	}
	int e2;
	if (frexp(v, &e2) != 0.5) /* not a power of two: its interval is symmetric */
		return false;
	double bestd = INFINITY;
	for (int dir = -1; dir <= 1; dir += 2) {
		uint64_t c = dir < 0 ? r - 1 : r + 1;
		if (c == 0)
			continue;
		snprintf(cand, sizeof cand, "%" PRIu64 "e%d", c, *scale);
		double dd = fabs(strtod(cand, NULL) - v);
		if (reads_back(cand, v, kind) && dd < bestd) {
			bestd = dd;
			*m = c;
		}
	}
	return bestd < INFINITY;
}

/*
 * The shortest digits that read back to v (> 0, finite) and, among those,
 * the closest to v: into dig (no trailing zeros), their count in *nd; returns
 * X with v ~ d1.d2d3... x 10^X. A p-digit decimal that reads back is also a
 * (p+1)-digit one, so the shortest p is found by bisection.
 */
static int shortest_digits(double v, fp_kind kind, char *dig, int *nd)
{
	/* enough digits for any value of the type: 17, 9, 5, 4 */
	static const int max_digits[] = { [FP_F64] = 17, [FP_F32] = 9, [FP_F16] = 5, [FP_BF16] = 4 };
	uint64_t m, best = 0;
	int scale, best_scale = 0, lo = 1, hi = max_digits[kind];
	if (!digits_read_back(v, kind, hi, &best, &best_scale)) /* not reached */
		snprintf(dig, 24, "0");
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (digits_read_back(v, kind, mid, &m, &scale)) {
			hi = mid;
			best = m;
			best_scale = scale;
		} else {
			lo = mid + 1;
		}
	}
	int len = snprintf(dig, 24, "%" PRIu64, best);
	int x = best_scale + len - 1;
	while (len > 1 && dig[len - 1] == '0')
		len--;
	dig[len] = 0;
	*nd = len;
	return x;
}

/* v as NumPy's str() of a scalar of that type writes it; out has room for
 * 48 bytes. Returns the length. */
static size_t format_float(double v, fp_kind kind, char *out)
{
	if (isnan(v))
		return (size_t)snprintf(out, 48, "nan");
	if (isinf(v))
		return (size_t)snprintf(out, 48, v < 0 ? "-inf" : "inf");
	if (v == 0)
		return (size_t)snprintf(out, 48, signbit(v) ? "-0.0" : "0.0");
	char dig[24];
	int nd, at = 0;
	int x = shortest_digits(fabs(v), kind, dig, &nd);
	if (v < 0)
		out[at++] = '-';
	long double a = fabsl((long double)v);
	if (a >= 1e-4L && a < 1e16L) {
		if (x >= 0) {
			for (int i = 0; i <= x; i++)
				out[at++] = i < nd ? dig[i] : '0';
			out[at++] = '.';
			if (nd > x + 1)
				for (int i = x + 1; i < nd; i++)
					out[at++] = dig[i];
			else
				out[at++] = '0';
		} else {
			out[at++] = '0';
			out[at++] = '.';
			for (int i = 0; i < -x - 1; i++)
				out[at++] = '0';
			for (int i = 0; i < nd; i++)
				out[at++] = dig[i];
		}
		out[at] = 0;
		return (size_t)at;
	}
	out[at++] = dig[0];
	if (nd > 1) {
		out[at++] = '.';
		for (int i = 1; i < nd; i++)
			out[at++] = dig[i];
	}
	at += snprintf(out + at, (size_t)(48 - at), "e%c%02d", x < 0 ? '-' : '+', abs(x));
	return (size_t)at;
}

/* Element i of a tensor as text; buf has room for 48 bytes. */
typedef size_t (*to_text_fn)(const void *data, int64_t i, char *buf);

#define TO_TEXT_INT(sfx, T, FMT)                                                                   \
	static size_t to_text_##sfx(const void *d, int64_t i, char *buf)                           \
	{                                                                                          \
		return (size_t)snprintf(buf, 48, "%" FMT, ((const T *)d)[i]);                      \
	}
TO_TEXT_INT(i8, int8_t, PRId8)
TO_TEXT_INT(i16, int16_t, PRId16)
TO_TEXT_INT(i32, int32_t, PRId32)
TO_TEXT_INT(i64, int64_t, PRId64)
TO_TEXT_INT(u8, uint8_t, PRIu8)
TO_TEXT_INT(u16, uint16_t, PRIu16)
TO_TEXT_INT(u32, uint32_t, PRIu32)
TO_TEXT_INT(u64, uint64_t, PRIu64)

static size_t to_text_b(const void *d, int64_t i, char *buf)
{
	return (size_t)snprintf(buf, 48, ((const uint8_t *)d)[i] ? "True" : "False");
}
static size_t to_text_f32(const void *d, int64_t i, char *buf)
{
	return format_float(((const float *)d)[i], FP_F32, buf);
}
static size_t to_text_f64(const void *d, int64_t i, char *buf)
{
	return format_float(((const double *)d)[i], FP_F64, buf);
}
static size_t to_text_f16(const void *d, int64_t i, char *buf)
{
	return format_float(gc_f16_to_f32(((const uint16_t *)d)[i]), FP_F16, buf);
}
static size_t to_text_bf16(const void *d, int64_t i, char *buf)
{
	return format_float(gc_bf16_to_f32(((const uint16_t *)d)[i]), FP_BF16, buf);
}

static const to_text_fn to_text[GC_DTYPE_COUNT] = {
    [GC_DTYPE_BOOL] = to_text_b,	[GC_DTYPE_INT8] = to_text_i8,
    [GC_DTYPE_INT16] = to_text_i16,	[GC_DTYPE_INT32] = to_text_i32,
    [GC_DTYPE_INT64] = to_text_i64,	[GC_DTYPE_UINT8] = to_text_u8,
    [GC_DTYPE_UINT16] = to_text_u16,	[GC_DTYPE_UINT32] = to_text_u32,
    [GC_DTYPE_UINT64] = to_text_u64,	[GC_DTYPE_FLOAT] = to_text_f32,
    [GC_DTYPE_DOUBLE] = to_text_f64,	[GC_DTYPE_FLOAT16] = to_text_f16,
    [GC_DTYPE_BFLOAT16] = to_text_bf16,
};

enum { PARSE_OK, PARSE_NOT_NUMBER, PARSE_RANGE };

/* A decimal number with spaces around (no hex), or inf/infinity/nan. */
static int parse_double(const char *s, double *v)
{
	while (isspace((unsigned char)*s))
		s++;
	const char *t = s + (*s == '+' || *s == '-');
	if (!*t || (t[0] == '0' && (t[1] == 'x' || t[1] == 'X')))
		return PARSE_NOT_NUMBER;
	char *end;
	double d = strtod(s, &end);
	if (end == s)
		return PARSE_NOT_NUMBER;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return PARSE_NOT_NUMBER;
	*v = d; /* beyond the range: +-inf, as NumPy reads it */
	return PARSE_OK;
}

/* An integer in decimal with spaces around, within [lo, hi] (signed) or
 * [0, uhi] (unsigned). */
static int parse_int(const char *s, bool is_signed, int64_t lo, int64_t hi, uint64_t uhi,
		     int64_t *iv, uint64_t *uv)
{
	while (isspace((unsigned char)*s))
		s++;
	bool neg = *s == '-';
	const char *t = s + (*s == '+' || *s == '-');
	if (!isdigit((unsigned char)*t))
		return PARSE_NOT_NUMBER;
	const char *d = t;
	while (isdigit((unsigned char)*d))
		d++;
	const char *e = d;
	while (isspace((unsigned char)*e))
		e++;
	if (*e)
		return PARSE_NOT_NUMBER;
	errno = 0;
	if (is_signed) {
		long long v = strtoll(s, NULL, 10);
		if (errno == ERANGE || v < lo || v > hi)
			return PARSE_RANGE;
		*iv = v;
		return PARSE_OK;
	}
	unsigned long long v = strtoull(t, NULL, 10);
	if (errno == ERANGE || v > uhi || (neg && v != 0))
		return PARSE_RANGE;
	*uv = v;
	return PARSE_OK;
}

typedef int (*from_text_fn)(const char *s, void *data, int64_t i);

#define FROM_TEXT_S(sfx, T, LO, HI)                                                                \
	static int from_text_##sfx(const char *s, void *d, int64_t i)                              \
	{                                                                                          \
		int64_t v;                                                                         \
		int rc = parse_int(s, true, LO, HI, 0, &v, NULL);                                  \
		if (!rc)                                                                           \
			((T *)d)[i] = (T)v;                                                        \
		return rc;                                                                         \
	}
#define FROM_TEXT_U(sfx, T, HI)                                                                    \
	static int from_text_##sfx(const char *s, void *d, int64_t i)                              \
	{                                                                                          \
		uint64_t v;                                                                        \
		int rc = parse_int(s, false, 0, 0, HI, NULL, &v);                                  \
		if (!rc)                                                                           \
			((T *)d)[i] = (T)v;                                                        \
		return rc;                                                                         \
	}
#define FROM_TEXT_F(sfx, T, CONV)                                                                  \
	static int from_text_##sfx(const char *s, void *d, int64_t i)                              \
	{                                                                                          \
		double v;                                                                          \
		int rc = parse_double(s, &v);                                                      \
		if (!rc)                                                                           \
			((T *)d)[i] = CONV(v);                                                     \
		return rc;                                                                         \
	}
#define CONV_F32(v) (float)(v)
#define CONV_F64(v) (v)
FROM_TEXT_S(i8, int8_t, INT8_MIN, INT8_MAX)
FROM_TEXT_S(i16, int16_t, INT16_MIN, INT16_MAX)
FROM_TEXT_S(i32, int32_t, INT32_MIN, INT32_MAX)
FROM_TEXT_S(i64, int64_t, INT64_MIN, INT64_MAX)
FROM_TEXT_U(u8, uint8_t, UINT8_MAX)
FROM_TEXT_U(u16, uint16_t, UINT16_MAX)
FROM_TEXT_U(u32, uint32_t, UINT32_MAX)
FROM_TEXT_U(u64, uint64_t, UINT64_MAX)
FROM_TEXT_F(f32, float, CONV_F32)
FROM_TEXT_F(f64, double, CONV_F64)
FROM_TEXT_F(f16, uint16_t, f64_to_f16)
FROM_TEXT_F(bf16, uint16_t, f64_to_bf16)

static int from_text_b(const char *s, void *d, int64_t i)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	uint8_t *o = d;
	if ((len == 4 && !strncasecmp(s, "true", 4)) || (len == 5 && !strncasecmp(s, "false", 5))) {
		o[i] = len == 4;
		return PARSE_OK;
	}
	double v;
	int rc = parse_double(s, &v);
	if (!rc)
		o[i] = v != 0; /* NaN is true, as a float NaN cast to bool */
	return rc;
}

static const from_text_fn from_text[GC_DTYPE_COUNT] = {
    [GC_DTYPE_BOOL] = from_text_b,	  [GC_DTYPE_INT8] = from_text_i8,
    [GC_DTYPE_INT16] = from_text_i16,	  [GC_DTYPE_INT32] = from_text_i32,
    [GC_DTYPE_INT64] = from_text_i64,	  [GC_DTYPE_UINT8] = from_text_u8,
    [GC_DTYPE_UINT16] = from_text_u16,	  [GC_DTYPE_UINT32] = from_text_u32,
    [GC_DTYPE_UINT64] = from_text_u64,	  [GC_DTYPE_FLOAT] = from_text_f32,
    [GC_DTYPE_DOUBLE] = from_text_f64,	  [GC_DTYPE_FLOAT16] = from_text_f16,
    [GC_DTYPE_BFLOAT16] = from_text_bf16,
};

typedef struct text_cast {
	to_text_fn to_text;
	from_text_fn from_text;
	gc_dtype to;
	locale_t c_locale; /* numbers are text in the C locale */
} text_cast;

static void text_cast_free(void *state)
{
	text_cast *c = state;
	if (c->c_locale)
		freelocale(c->c_locale);
	gc_free(c);
}

static int run_to_text(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const text_cast *c = n->state;
	int64_t count = gc_tensor_numel(in[0]);
	char **y = out[0]->data, buf[48];
	locale_t old = uselocale(c->c_locale);
	for (int64_t i = 0; i < count; i++) {
		size_t len = c->to_text(in[0]->data, i, buf);
		char *s = gc_kstr(k, len);
		if (!s)
			break;
		memcpy(s, buf, len);
		y[i] = s;
	}
	uselocale(old);
	return gc_kok(k);
}

/* s for a message: at most 60 bytes, control bytes as '?'. */
static void quote(const char *s, char *buf, size_t len)
{
	size_t j = 0;
	for (; s[j] && j + 1 < len && j < 60; j++)
		buf[j] = (unsigned char)s[j] < 0x20 || s[j] == 0x7f ? '?' : s[j];
	buf[j] = 0;
	if (s[j] && len > j + 4)
		strcpy(buf + j, "...");
}

static int run_from_text(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const text_cast *c = n->state;
	int64_t count = gc_tensor_numel(in[0]);
	int rc = PARSE_OK;
	int64_t i = 0;
	locale_t old = uselocale(c->c_locale);
	for (; i < count && !rc; i++)
		rc = c->from_text(gc_str_at(in[0], i), out[0]->data, i);
	uselocale(old);
	if (!rc)
		return 0;
	char q[72];
	quote(gc_str_at(in[0], i - 1), q, sizeof q);
	if (rc == PARSE_RANGE)
		return gc_kerr(k, GC_EINVAL,
			       "input element %" PRId64 ", \"%s\", is out of the range "
			       "of %s",
			       i - 1, q, gc_dtype_name(c->to));
	return gc_kerr(k, GC_EINVAL, "input element %" PRId64 ", \"%s\", is not %s (Cast reads %s)",
		       i - 1, q, c->to == GC_DTYPE_BOOL ? "a bool" : "a number",
		       c->to == GC_DTYPE_BOOL ? "true, false or a number"
		       : c->to == GC_DTYPE_FLOAT || c->to == GC_DTYPE_DOUBLE ||
			       c->to == GC_DTYPE_FLOAT16 || c->to == GC_DTYPE_BFLOAT16
			   ? "decimal numbers, inf, -inf and nan"
			   : "integers in decimal");
}

static int run_copy_strings(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			    gc_tensor *const *out)
{
	(void)k;
	(void)n;
	if (out[0]->data != in[0]->data)
		memcpy(out[0]->data, in[0]->data, (size_t)gc_tensor_nbytes(in[0]));
	return 0;
}

static int prepare_text_cast(gc_kctx *k, gc_node *n, const gc_tensor *x, gc_tensor *out,
			     gc_dtype to)
{
	gc_dtype from = x->dtype;
	gc_set_shape(out, to, x->rank, x->dims);
	if (from == to) {
		n->run = run_copy_strings;
		n->inplace_ok = true;
		return 0;
	}
	gc_dtype other = from == GC_DTYPE_STRING ? to : from;
	if ((unsigned)other >= GC_DTYPE_COUNT || !to_text[other])
		return gc_kerr(k, GC_EUNSUPPORTED, "cannot cast from %s to %s", gc_dtype_name(from),
			       gc_dtype_name(to));
	text_cast *c = gc_calloc(1, sizeof *c);
	if (!c)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = c;
	n->state_free = text_cast_free;
	c->c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
	if (!c->c_locale)
		return gc_kerr(k, GC_ENOMEM, "cannot make a C locale for number text");
	c->to = to;
	c->to_text = to_text[other];
	c->from_text = from_text[other];
	n->run = from == GC_DTYPE_STRING ? run_from_text : run_to_text;
	return 0;
}

/* ---- float8 (Cast-19) and float4e2m1 (Cast-23): through float32, with
 * the saturate attribute (float8) ---- */

typedef struct f8_cast {
	gc_dtype from, to;
	bool saturate;
	gc_ew_fn to_f32, from_f32; /* the other side's kernels, or NULL */
} f8_cast;

static int run_cast_f8(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	(void)k;
	const f8_cast *c = n->state;
	enum { CHUNK = 256 };
	float buf[CHUNK];
	const int64_t one = 1, count = gc_tensor_numel(in[0]);
	size_t fs = gc_dtype_size(c->from), ts = gc_dtype_size(c->to);
	for (int64_t i = 0; i < count; i += CHUNK) {
		int64_t m = count - i < CHUNK ? count - i : CHUNK;
		const char *src = (const char *)in[0]->data + (size_t)i * fs;
		char *dst = (char *)out[0]->data + (size_t)i * ts;
		if (gc_fsmall_is(c->from)) {
			for (int64_t j = 0; j < m; j++)
				buf[j] = gc_fsmall_to_f32((uint8_t)src[j], c->from);
		} else {
			const void *ins[1] = {src};
			c->to_f32(m, ins, &one, buf, NULL);
		}
		if (gc_fsmall_is(c->to)) {
			for (int64_t j = 0; j < m; j++)
				((uint8_t *)dst)[j] = gc_f32_to_fsmall(buf[j], c->to, c->saturate);
		} else {
			const void *ins[1] = {buf};
			c->from_f32(m, ins, &one, dst, NULL);
		}
	}
	return 0;
}

static int prepare_cast_f8(gc_kctx *k, gc_node *n, const gc_tensor *x, gc_tensor *out,
			   gc_dtype to)
{
	gc_dtype from = x->dtype;
	if (from == GC_DTYPE_STRING || to == GC_DTYPE_STRING ||
	    from == GC_DTYPE_INT4 || from == GC_DTYPE_UINT4 || to == GC_DTYPE_INT4 ||
	    to == GC_DTYPE_UINT4)
		return gc_kerr(k, GC_EUNSUPPORTED, "cannot cast from %s to %s",
			       gc_dtype_name(from), gc_dtype_name(to));
	int64_t sat = gc_attr_i(k, "saturate", 1);
	if (gc_kok(k))
		return gc_kok(k);
	f8_cast *c = gc_kstate(k, n, sizeof *c);
	if (!c)
		return gc_kok(k);
	*c = (f8_cast){from, to, sat != 0, NULL, NULL};
	if (!gc_fsmall_is(from) && !(c->to_f32 = cast_fns[from][GC_DTYPE_FLOAT]))
		return gc_kerr(k, GC_EUNSUPPORTED, "cannot cast from %s to %s", gc_dtype_name(from),
			       gc_dtype_name(to));
	if (!gc_fsmall_is(to) && !(c->from_f32 = cast_fns[GC_DTYPE_FLOAT][to]))
		return gc_kerr(k, GC_EUNSUPPORTED, "cannot cast from %s to %s", gc_dtype_name(from),
			       gc_dtype_name(to));
	gc_set_shape(out, to, x->rank, x->dims);
	n->inplace_ok = gc_dtype_size(from) == gc_dtype_size(to);
	n->run = run_cast_f8;
	return 0;
}

static int prepare_cast(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			gc_dtype to)
{
	if (in[0] && (in[0]->dtype == GC_DTYPE_FLOAT4E2M1 || to == GC_DTYPE_FLOAT4E2M1))
		return n->opset < 23 ? gc_kerr(k, GC_EINVAL, "float4e2m1 needs Cast from opset 23")
				     : prepare_cast_f8(k, n, in[0], out[0], to);
	if (in[0] && (gc_f8_is(in[0]->dtype) || gc_f8_is(to)))
		return n->opset < 19 ? gc_kerr(k, GC_EINVAL, "float8 types need Cast from opset 19")
				     : prepare_cast_f8(k, n, in[0], out[0], to);
	if (gc_ew_check_input(k, in, 0, GC_EW_NUM | GC_EW_BIT(BOOL) | GC_EW_BIT(STRING)))
		return k->err->code;
	const gc_tensor *x = in[0];
	gc_dtype from = x->dtype;
	if (from == GC_DTYPE_STRING || to == GC_DTYPE_STRING)
		return prepare_text_cast(k, n, x, out[0], to);
	gc_ew_fn fn = cast_fns[from][to];
	if (!fn)
		return gc_kerr(k, GC_EINVAL, "cannot cast from %s to %s", gc_dtype_name(from),
			       gc_dtype_name(to));
	gc_ew_state *s = gc_ew_state_new(k, n, 1);
	if (!s)
		return k->err->code;
	gc_set_shape(out[0], to, x->rank, x->dims);
	gc_ew_plan_init(&s->plans[0], 1, &x, x->rank, x->dims, to);
	s->fn = fn;
	if (from == to) {
		s->fn = copy_run;
		s->arg = &elem_size[from];
	}
	n->inplace_ok = gc_dtype_size(from) == gc_dtype_size(to);
	n->run = gc_ew_run;
	return gc_kok(k);
}

int gc_prepare_Cast(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	static const struct {
		const char *name;
		gc_dtype dtype;
	} names[] = {
#define GC_X_(name, value, size, text) {#name, GC_DTYPE_##name},
	    GC_DTYPE_LIST(GC_X_)
#undef GC_X_
	};
	const gc_attr *a = gc_attr_find(n, "to");
	if (!a)
		return gc_kerr(k, GC_EINVAL, "attribute 'to' is required");
	int64_t to = -1;
	if (a->type == GC_ATTR_INT) {
		to = a->v.i;
	} else if (a->type == GC_ATTR_STRING) { /* opset 1 names the type */
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (!strcmp(a->v.s, names[i].name))
				to = names[i].dtype;
		if (to < 0)
			return gc_kerr(k, GC_EINVAL, "attribute 'to' is \"%s\", not a type name",
				       a->v.s);
	} else {
		return gc_kerr(k, GC_EINVAL, "attribute 'to' is %s, expected int",
			       gc_attr_type_name(a->type));
	}
	if (to <= GC_DTYPE_UNDEFINED || to >= GC_DTYPE_COUNT)
		return gc_kerr(k, to >= GC_DTYPE_COUNT ? GC_EUNSUPPORTED : GC_EINVAL,
			       "attribute 'to' is %" PRId64 ", not a supported data type", to);
	return prepare_cast(k, n, in, out, (gc_dtype)to);
}

int gc_prepare_CastLike(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (n->n_in < 2 || !in[1])
		return gc_kerr(k, GC_EINVAL, "input 1 (target_type) is missing");
	return prepare_cast(k, n, in, out, in[1]->dtype);
}
