/* Debugging instruments: value statistics, names of nodes and tensors, the
 * trace line. */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "custom.h"
#include "debug-impl.h"

static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
	if (exp == 0) {
		float f = ldexpf((float)man, -24); /* zero or subnormal */
		return sign ? -f : f;
	}
	uint32_t bits =
	    exp == 31 ? sign | 0x7f800000u | (man << 13) : sign | ((exp + 112) << 23) | (man << 13);
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

static float bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof f);
	return f;
}

static bool is_float_type(gc_dtype t)
{
	return t == GC_DTYPE_FLOAT || t == GC_DTYPE_DOUBLE || t == GC_DTYPE_FLOAT16 ||
	       t == GC_DTYPE_BFLOAT16;
}

/* Element i as a double; false for types without numbers. */
static bool value_at(const gc_tensor *t, int64_t i, double *v)
{
	const void *d = t->data;
	switch (t->dtype) {
	case GC_DTYPE_FLOAT:
		*v = ((const float *)d)[i];
		return true;
	case GC_DTYPE_DOUBLE:
		*v = ((const double *)d)[i];
		return true;
	case GC_DTYPE_FLOAT16:
		*v = half_to_float(((const uint16_t *)d)[i]);
		return true;
	case GC_DTYPE_BFLOAT16:
		*v = bf16_to_float(((const uint16_t *)d)[i]);
		return true;
	case GC_DTYPE_INT8:
		*v = ((const int8_t *)d)[i];
		return true;
	case GC_DTYPE_UINT8:
		*v = ((const uint8_t *)d)[i];
		return true;
	case GC_DTYPE_BOOL:
		*v = ((const uint8_t *)d)[i] != 0;
		return true;
	case GC_DTYPE_INT16:
		*v = ((const int16_t *)d)[i];
		return true;
	case GC_DTYPE_UINT16:
		*v = ((const uint16_t *)d)[i];
		return true;
	case GC_DTYPE_INT32:
		*v = ((const int32_t *)d)[i];
		return true;
	case GC_DTYPE_UINT32:
		*v = ((const uint32_t *)d)[i];
		return true;
	case GC_DTYPE_INT64:
		*v = (double)((const int64_t *)d)[i];
		return true;
	case GC_DTYPE_UINT64:
		*v = (double)((const uint64_t *)d)[i];
		return true;
	default:
		return false;
	}
}

/* Running minimum, maximum and sum of the finite values seen so far. */
typedef struct running {
	double mn, mx, sum;
} running;

/* Value i, x, goes into st (non-finite) or r (finite). */
static void take(gc_dstats *st, running *r, int64_t i, double x)
{
	if (isfinite(x)) {
		r->mn = x < r->mn ? x : r->mn;
		r->mx = x > r->mx ? x : r->mx;
		r->sum += x;
		return;
	}
	if (st->first_bad < 0) {
		st->first_bad = i;
		st->first_bad_value = x;
	}
	if (isnan(x))
		st->nan++;
	else
		st->inf++;
}

static void finish(gc_dstats *st, int64_t n, const running *r)
{
	st->finite = n - st->nan - st->inf;
	st->min = r->mn;
	st->max = r->mx;
	st->mean = st->finite ? r->sum / (double)st->finite : NAN;
	if (!st->finite)
		st->min = st->max = NAN;
}

/*
 * float32, the common case, in blocks: LANES independent partial sums,
 * minima and maxima that the compiler turns into SIMD. A NaN or Inf (or a
 * sum that overflows) makes the block's sum non-finite; only such a block
 * is gone through again one value at a time, in double.
 */
#define LANES 16
#define BLOCK 4096

static bool f32_block_fast(const float *v, int64_t n, float *lo_out, float *hi_out, double *sum_out)
{
	float s[LANES], lo[LANES], hi[LANES];
	for (int k = 0; k < LANES; k++) {
		s[k] = 0.0f;
		lo[k] = INFINITY;
		hi[k] = -INFINITY;
	}
	int64_t i = 0;
	for (; i + LANES <= n; i += LANES)
		for (int k = 0; k < LANES; k++) {
			float x = v[i + k];
			s[k] += x;
			lo[k] = x < lo[k] ? x : lo[k];
			hi[k] = x > hi[k] ? x : hi[k];
		}
	for (; i < n; i++) {
		s[0] += v[i];
		lo[0] = v[i] < lo[0] ? v[i] : lo[0];
		hi[0] = v[i] > hi[0] ? v[i] : hi[0];
	}
	double sum = 0;
	float mn = INFINITY, mx = -INFINITY;
	for (int k = 0; k < LANES; k++) {
		sum += s[k];
		mn = lo[k] < mn ? lo[k] : mn;
		mx = hi[k] > mx ? hi[k] : mx;
	}
	if (!isfinite(sum))
		return false;
	*lo_out = mn;
	*hi_out = mx;
	*sum_out = sum;
	return true;
}

static void f32_stats(const float *v, int64_t n, gc_dstats *st)
{
	running r = { INFINITY, -INFINITY, 0 };
	for (int64_t b = 0; b < n; b += BLOCK) {
		int64_t len = n - b < BLOCK ? n - b : BLOCK;
		float lo, hi;
		double s;
		if (f32_block_fast(v + b, len, &lo, &hi, &s)) {
			r.mn = lo < r.mn ? lo : r.mn;
			r.mx = hi > r.mx ? hi : r.mx;
			r.sum += s;
			continue;
		}
		for (int64_t i = b; i < b + len; i++)
			take(st, &r, i, v[i]);
	}
	finish(st, n, &r);
}

void gc_debug_stats(const gc_tensor *t, gc_dstats *st)
{
	memset(st, 0, sizeof *st);
	st->first_bad = -1;
	st->is_float = is_float_type(t->dtype);
	int64_t n = gc_tensor_numel(t);
	double probe;
	if (n < 0 || (n > 0 && !t->data) || (n > 0 && !value_at(t, 0, &probe)))
		return;
	st->numeric = true;
	st->count = n;
	if (t->dtype == GC_DTYPE_FLOAT) {
		f32_stats(t->data, n, st);
		return;
	}
	running r = { INFINITY, -INFINITY, 0 };
	for (int64_t i = 0; i < n; i++) {
		double x;
		value_at(t, i, &x);
		take(st, &r, i, x);
	}
	finish(st, n, &r);
}

int64_t gc_debug_first_nonfinite(const gc_tensor *t, double *value)
{
	if (!is_float_type(t->dtype) || !t->data)
		return -1;
	int64_t n = gc_tensor_numel(t);
	if (t->dtype == GC_DTYPE_FLOAT) {
		const float *v = t->data;
		for (int64_t b = 0; b < n; b += BLOCK) {
			int64_t len = n - b < BLOCK ? n - b : BLOCK;
			float acc[LANES] = {0};
			int64_t i = b;
			for (; i + LANES <= b + len; i += LANES)
				for (int k = 0; k < LANES; k++)
					acc[k] += v[i + k] - v[i + k]; /* NaN for NaN and Inf */
			bool clean = true;
			for (int k = 0; k < LANES; k++)
				clean &= acc[k] == 0.0f;
			for (; i < b + len; i++)
				clean &= isfinite(v[i]) != 0;
			if (clean)
				continue;
			for (i = b; i < b + len; i++)
				if (!isfinite(v[i])) {
					*value = v[i];
					return i;
				}
		}
		return -1;
	}
	for (int64_t i = 0; i < n; i++) {
		double x;
		value_at(t, i, &x);
		if (!isfinite(x)) {
			*value = x;
			return i;
		}
	}
	return -1;
}

/* ------------------------------------------------------------ names */

/* snprintf that appends at *at and never runs past len. */
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	if (*at + 1 >= len)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

const char *gc_debug_op_str(const gc_node *n, char *buf, size_t len)
{
	bool dom = n->domain && n->domain[0];
	snprintf(buf, len, "%s%s%s", dom ? n->domain : "", dom ? "::" : "", n->op_type);
	return buf;
}

const char *gc_debug_node_str(const gc_node *n, char *buf, size_t len)
{
	char op[256];
	size_t at = 0;
	buf[0] = 0;
	add(buf, len, &at, "node '%s' (%s)", n->name, gc_debug_op_str(n, op, sizeof op));
	const gc_custom *c = n->custom;
	if (c)
		add(buf, len, &at, ", operation '%s', flavour '%s', library %s, symbol %s",
		    c->op_name, c->flavour, c->library, c->symbol);
	return buf;
}

const char *gc_debug_tensor_str(const gc_session *s, int32_t idx, char *buf, size_t len)
{
	if (idx < 0) {
		snprintf(buf, len, "(absent)");
		return buf;
	}
	const gc_tensor *t = &s->tensors[idx];
	char shape[160];
	snprintf(buf, len, "%s %s %s", s->p->tensors[idx].name, gc_dtype_name(t->dtype),
		 gc_shape_str(t->dims, t->rank, shape, sizeof shape));
	return buf;
}

const char *gc_debug_index_str(const gc_tensor *t, int64_t i, char *buf, size_t len)
{
	int64_t idx[GC_MAX_RANK];
	for (int d = t->rank - 1; d >= 0; d--) {
		int64_t dim = t->dims[d] > 0 ? t->dims[d] : 1;
		idx[d] = i % dim;
		i /= dim;
	}
	size_t at = 0;
	buf[0] = 0;
	add(buf, len, &at, "[");
	for (int d = 0; d < t->rank; d++)
		add(buf, len, &at, "%s%" PRId64, d ? ", " : "", idx[d]);
	add(buf, len, &at, "]");
	return buf;
}

/* ------------------------------------------------------------ trace */

/* q: the edge's quantization when a custom node has it bound quantized
 * (the values shown are the integers; the real range follows). */
static void trace_tensor(FILE *f, const gc_session *s, int32_t idx, bool stats,
			 const gc_custom_quant *q)
{
	char desc[512];
	fputs(gc_debug_tensor_str(s, idx, desc, sizeof desc), f);
	if (idx < 0)
		return;
	if (gc_custom_quant_on(q))
		fprintf(f, " quantized %s", gc_custom_quant_str(q, desc, sizeof desc));
	if (s->p->tensors[idx].storage == GC_STORAGE_CONST)
		fputs(" (constant)", f);
	if (!stats)
		return;
	gc_dstats st;
	gc_debug_stats(&s->tensors[idx], &st);
	if (!st.numeric)
		return;
	if (!st.count) {
		fputs(" (empty)", f);
		return;
	}
	if (st.is_float)
		fprintf(f, " min %.6g max %.6g mean %.6g nan %" PRId64 " inf %" PRId64, st.min,
			st.max, st.mean, st.nan, st.inf);
	else
		fprintf(f, " min %.15g max %.15g mean %.6g", st.min, st.max, st.mean);
	if (gc_custom_quant_on(q) && !st.is_float)
		fprintf(f, " (real min %.6g max %.6g)", (double)q->scale * (st.min - q->offset),
			(double)q->scale * (st.max - q->offset));
}

static const gc_custom_quant *edge_quant(const gc_custom *c, bool is_out, int j)
{
	if (!c || !c->quant || j >= (is_out ? c->n_out : c->n_in))
		return NULL;
	return &c->quant[is_out ? c->n_in + j : j];
}

void gc_debug_trace_line(FILE *f, const gc_session *s, int32_t i, double us)
{
	const gc_node *n = &s->p->nodes[i];
	const gc_custom *c = n->custom;
	char op[256];
	fprintf(f, "trace #%d '%s' %s", (int)i, n->name, gc_debug_op_str(n, op, sizeof op));
	if (c)
		fprintf(f, " (flavour %s, library %s)", c->flavour, c->library);
	fprintf(f, " %.1f us | in: ", us);
	for (int j = 0; j < n->n_in; j++) {
		if (j)
			fputs(", ", f);
		trace_tensor(f, s, n->in[j], false, edge_quant(c, false, j));
	}
	fputs(" | out: ", f);
	for (int j = 0; j < n->n_out; j++) {
		if (j)
			fputs("; ", f);
		trace_tensor(f, s, n->out[j], true, edge_quant(c, true, j));
	}
	fputc('\n', f);
	fflush(f); /* a crash in the next kernel must not eat this line */
}
