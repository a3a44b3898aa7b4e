/*
 * String ops of opset 20: StringConcat (elementwise, broadcast) and
 * StringSplit (as Python's str.split, which ONNX's reference runs: on runs
 * of whitespace -- space, tab, newline, CR, VT, FF -- without a delimiter,
 * else on each delimiter, "" giving one empty substring; maxsplit splits
 * at most that often, the rest kept as it is; the
 * substrings padded with "" to the longest count, which the output's last
 * dim takes, so the node is prepared when its input is known).
 */
#include <inttypes.h>
#include <string.h>

#include "../ops.h"
#include "kutil.h"

/* ---- StringConcat -------------------------------------------------------------- */

typedef struct concat_plan {
	int32_t rank;
	int64_t dims[GC_MAX_RANK], sa[GC_MAX_RANK], sb[GC_MAX_RANK];
} concat_plan;

static int run_concat(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const concat_plan *p = n->state;
	int64_t count = gc_tensor_numel(out[0]), idx[GC_MAX_RANK] = {0}, ia = 0, ib = 0;
	char **y = out[0]->data;
	for (int64_t i = 0; i < count; i++) {
		const char *a = gc_str_at(in[0], ia), *b = gc_str_at(in[1], ib);
		size_t la = strlen(a), lb = strlen(b);
		char *s = gc_kstr(k, la + lb);
		if (!s)
			return gc_kok(k);
		memcpy(s, a, la);
		memcpy(s + la, b, lb + 1);
		y[i] = s;
		for (int d = p->rank - 1; d >= 0; d--) {
			ia += p->sa[d];
			ib += p->sb[d];
			if (++idx[d] < p->dims[d])
				break;
			ia -= p->sa[d] * p->dims[d];
			ib -= p->sb[d] * p->dims[d];
			idx[d] = 0;
		}
	}
	return 0;
}

int gc_prepare_StringConcat(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	for (int j = 0; j < 2; j++)
		if (in[j]->dtype != GC_DTYPE_STRING)
			return gc_kerr(k, GC_EINVAL,
				       "input '%s' has type %s; StringConcat takes strings",
				       j ? "Y" : "X", gc_dtype_name(in[j]->dtype));
	concat_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p ||
	    gc_broadcast_shapes(k, 2, (const gc_tensor *const[]){in[0], in[1]}, &p->rank, p->dims))
		return gc_kok(k);
	gc_broadcast_strides(in[0], p->rank, p->dims, p->sa);
	gc_broadcast_strides(in[1], p->rank, p->dims, p->sb);
	gc_set_shape(out[0], GC_DTYPE_STRING, p->rank, p->dims);
	n->run = run_concat;
	return 0;
}

/* ---- StringSplit ----------------------------------------------------------------- */

typedef struct split_plan {
	const char *delim; /* NULL: runs of whitespace */
	int64_t maxsplit;  /* < 0: no limit */
	int64_t width;	   /* the output's last dim */
} split_plan;

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Calls emit(ctx, start, len) for each substring of s; returns the count. */
static int64_t split_one(const split_plan *p, const char *s,
			 int (*emit)(void *ctx, const char *at, size_t len), void *ctx)
{
	int64_t count = 0;
	if (!p->delim) {
		const char *c = s;
		for (;;) {
			while (*c && is_space(*c))
				c++;
			if (!*c)
				break;
			const char *start = c;
			if (p->maxsplit >= 0 && count == p->maxsplit) {
				/* the rest, as it is (Python keeps its trailing
				 * whitespace) */
				if (emit && emit(ctx, start, strlen(start)))
					return -1;
				return count + 1;
			}
			while (*c && !is_space(*c))
				c++;
			if (emit && emit(ctx, start, (size_t)(c - start)))
				return -1;
			count++;
		}
		return count;
	}
	size_t dl = strlen(p->delim);
	const char *c = s;
	for (;;) {
		const char *hit =
		    p->maxsplit >= 0 && count == p->maxsplit ? NULL : strstr(c, p->delim);
		size_t len = hit ? (size_t)(hit - c) : strlen(c);
		if (emit && emit(ctx, c, len))
			return -1;
		count++;
		if (!hit)
			return count;
		c = hit + dl;
	}
}

typedef struct split_out {
	gc_kctx *k;
	char **y;
	int64_t at;
} split_out;

static int emit_str(void *ctx, const char *at, size_t len)
{
	split_out *o = ctx;
	char *s = gc_kstr(o->k, len);
	if (!s)
		return -1;
	memcpy(s, at, len);
	s[len] = 0;
	o->y[o->at++] = s;
	return 0;
}

static int run_split(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const split_plan *p = n->state;
	int64_t count = gc_tensor_numel(in[0]);
	split_out o = {k, out[0]->data, 0};
	for (int64_t i = 0; i < count; i++) {
		o.at = i * p->width;
		int64_t c = split_one(p, gc_str_at(in[0], i), emit_str, &o);
		if (c < 0)
			return gc_kok(k);
		for (int64_t j = c; j < p->width; j++)
			o.y[i * p->width + j] = "";
		if (n->n_out > 1 && out[1] && out[1]->data)
			((int64_t *)out[1]->data)[i] = c;
	}
	return 0;
}

int gc_prepare_StringSplit(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (x->dtype != GC_DTYPE_STRING)
		return gc_kerr(k, GC_EINVAL, "input 'X' has type %s; StringSplit takes strings",
			       gc_dtype_name(x->dtype));
	if (x->rank >= GC_MAX_RANK)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input 'X' has rank %d; the output would pass "
			       "graphcc's limit of %d",
			       x->rank, GC_MAX_RANK);
	split_plan *p = gc_kstate(k, n, sizeof *p);
	if (!p)
		return gc_kok(k);
	const char *d = gc_attr_s(k, "delimiter", "");
	p->maxsplit = gc_attr_i(k, "maxsplit", -1);
	if (gc_kok(k))
		return gc_kok(k);
	p->delim = d[0] ? d : NULL;
	if (gc_attr_find(n, "maxsplit") && p->maxsplit < 0)
		return gc_kerr(k, GC_EINVAL, "attribute 'maxsplit' is negative (%" PRId64 ")",
			       p->maxsplit);
	int64_t dims[GC_MAX_RANK];
	memcpy(dims, x->dims, sizeof dims);
	if (n->n_out > 1 && out[1])
		gc_set_shape(out[1], GC_DTYPE_INT64, x->rank, x->dims);
	if (!x->data)
		return gc_kneed_value(k,
				      "the output's last dim is the most substrings of an "
				      "element of input 'X', whose values are not known when the "
				      "program is built");
	int64_t count = gc_tensor_numel(x);
	p->width = 0;
	for (int64_t i = 0; i < count; i++) {
		int64_t c = split_one(p, gc_str_at(x, i), NULL, NULL);
		p->width = c > p->width ? c : p->width;
	}
	dims[x->rank] = p->width;
	gc_set_shape(out[0], GC_DTYPE_STRING, x->rank + 1, dims);
	n->run = run_split;
	return 0;
}
