/*
 * Text ops.
 *
 * TfIdfVectorizer over integer tokens (pool_int64s): per row, every n-gram
 * with min_gram_length <= n <= max_gram_length whose tokens are 1 + skip
 * apart (skip = 0 .. max_skip_count; unigrams counted once) is looked up in
 * the pool and counted at its ngram_indexes entry; mode TF writes counts,
 * IDF the weight of each present n-gram, TFIDF count x weight (weights
 * default to 1). String tokens (pool_strings) are not supported yet.
 */
#include <ctype.h>
#include <inttypes.h>
#include <string.h>

#include "../alloc.h"
#include "../utf8.h"
#include "shape-impl.h"
#include "text.h"
#include "value-impl.h"

enum { TF, IDF, TFIDF };

typedef struct ngram {
	int32_t len;
	int64_t out;	     /* output index */
	const int64_t *toks; /* into the node's pool attribute */
	double weight;
} ngram;

typedef struct tfidf_plan {
	int mode;
	int64_t min_n, max_n, max_skip, n_out, rows, cols, count;
	ngram g[];
} tfidf_plan;

static int run_tfidf(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const tfidf_plan *p = n->state;
	const gc_tensor *x = in[0];
	double *cnt = k->scratch;
	for (int64_t r = 0; r < p->rows; r++) {
		memset(cnt, 0, (size_t)p->n_out * sizeof(double));
		int64_t base = r * p->cols;
		for (int64_t q = 0; q < p->count; q++) {
			const ngram *g = &p->g[q];
			if (g->len < p->min_n || g->len > p->max_n)
				continue;
			int64_t skips = g->len == 1 ? 0 : p->max_skip;
			for (int64_t s = 0; s <= skips; s++) {
				int64_t step = s + 1, span = (g->len - 1) * step;
				for (int64_t i = 0; i + span < p->cols; i++) {
					bool hit = true;
					for (int32_t t = 0; hit && t < g->len; t++)
						hit = gc_index_at(x, base + i + t * step) ==
						      g->toks[t];
					if (hit)
						cnt[g->out] += 1;
				}
			}
		}
		for (int64_t q = 0; q < p->count; q++) {
			const ngram *g = &p->g[q];
			double c = cnt[g->out];
			double v = p->mode == TF    ? c
				   : p->mode == IDF ? (c > 0 ? g->weight : 0)
						    : c * g->weight;
			gc_kv_store(out[0], r * p->n_out + g->out, v);
		}
	}
	return 0;
}

int gc_prepare_TfIdfVectorizer(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	const char *mode = gc_attr_s(k, "mode", "TF");
	int64_t min_n = gc_attr_i(k, "min_gram_length", 1),
		max_n = gc_attr_i(k, "max_gram_length", 1);
	int64_t max_skip = gc_attr_i(k, "max_skip_count", 0);
	const int64_t *counts, *indexes, *pool;
	const float *weights;
	int64_t nc = gc_attr_ints(k, "ngram_counts", &counts);
	int64_t ni = gc_attr_ints(k, "ngram_indexes", &indexes);
	int64_t np_ = gc_attr_ints(k, "pool_int64s", &pool);
	int64_t nw = gc_attr_floats(k, "weights", &weights);
	if (gc_kok(k))
		return gc_kok(k);
	if (gc_attr_find(n, "pool_strings"))
		return gc_kerr(k, GC_EUNSUPPORTED, "pool_strings (string tokens) is not supported");
	int m = !strcmp(mode, "TF")	 ? TF
		: !strcmp(mode, "IDF")	 ? IDF
		: !strcmp(mode, "TFIDF") ? TFIDF
					 : -1;
	if (m < 0)
		return gc_kerr(k, GC_EINVAL, "attribute 'mode' = '%s' is not TF, IDF or TFIDF",
			       mode);
	if (x->dtype != GC_DTYPE_INT32 && x->dtype != GC_DTYPE_INT64)
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input 'X' must be int32 or int64 tokens, not %s",
			       gc_dtype_name(x->dtype));
	if (x->rank != 1 && x->rank != 2)
		return gc_kerr(k, GC_EINVAL, "input 'X' must be 1-D or 2-D, not rank %d", x->rank);
	if (min_n < 1 || max_n < min_n || max_skip < 0 || nc < 1 || nc < max_n)
		return gc_kerr(k, GC_EINVAL,
			       "gram lengths %" PRId64 "..%" PRId64 ", max_skip_count %" PRId64
			       " or ngram_counts (%" PRId64 ") are inconsistent",
			       min_n, max_n, max_skip, nc);
	if (nw && nw != ni)
		return gc_kerr(k, GC_EINVAL,
			       "weights has %" PRId64 " values for %" PRId64 " n-grams", nw, ni);
	/* count the n-grams: level L (length L+1) spans pool[counts[L] .. counts[L+1]) */
	int64_t total = 0;
	for (int64_t L = 0; L < nc; L++) {
		int64_t end = L + 1 < nc ? counts[L + 1] : np_;
		if (counts[L] < 0 || end < counts[L] || end > np_ || (end - counts[L]) % (L + 1))
			return gc_kerr(k, GC_EINVAL,
				       "ngram_counts[%" PRId64 "] does not fit pool_int64s", L);
		total += (end - counts[L]) / (L + 1);
	}
	if (total != ni)
		return gc_kerr(k, GC_EINVAL,
			       "ngram_indexes has %" PRId64 " entries for %" PRId64 " n-grams", ni,
			       total);
	tfidf_plan *p = gc_malloc(sizeof *p + (size_t)(total + 1) * sizeof(ngram));
	if (!p)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = p;
	p->mode = m;
	p->min_n = min_n;
	p->max_n = max_n;
	p->max_skip = max_skip;
	p->count = total;
	p->n_out = 0;
	int64_t q = 0;
	for (int64_t L = 0; L < nc; L++) {
		int64_t end = L + 1 < nc ? counts[L + 1] : np_;
		for (int64_t at = counts[L]; at < end; at += L + 1, q++) {
			if (indexes[q] < 0)
				return gc_kerr(k, GC_EINVAL,
					       "ngram_indexes[%" PRId64 "] is negative", q);
			p->g[q].len = (int32_t)(L + 1);
			p->g[q].toks = pool + at;
			p->g[q].out = indexes[q];
			p->g[q].weight = nw ? weights[q] : 1.0;
			if (indexes[q] + 1 > p->n_out)
				p->n_out = indexes[q] + 1;
		}
	}
	p->rows = x->rank == 2 ? x->dims[0] : 1;
	p->cols = x->dims[x->rank - 1];
	int64_t dims[2] = {p->rows, p->n_out};
	if (x->rank == 2)
		gc_set_shape(out[0], GC_DTYPE_FLOAT, 2, dims);
	else
		gc_set_shape(out[0], GC_DTYPE_FLOAT, 1, &p->n_out);
	n->scratch_bytes = (uint64_t)(p->n_out + 1) * sizeof(double);
	n->run = run_tfidf;
	return 0;
}

/* ---- StringNormalizer --------------------------------------------------- */

/*
 * StringNormalizer (opset 10) removes the stopwords from a [C] or [1, C]
 * string tensor (byte for byte when is_case_sensitive, else comparing
 * lowercased text), then changes the case of what is left (LOWER, UPPER or
 * NONE). When every element goes, the output is one "" ([1] or [1, 1]).
 *
 * Case: the simple (one code point to one code point) Unicode mappings of
 * ASCII, Latin-1 Supplement, Latin Extended-A, Greek (U+0386..U+03CE) and
 * Cyrillic (U+0400..U+045F), the same in every locale; other characters,
 * and those whose full mapping changes the length (German sharp s, U+0130,
 * U+0149, U+0390, U+03B0), stay as they are; no context rules (final
 * sigma). Locales whose casing differs from that (Turkish, Azerbaijani:
 * dotted and dotless i; Lithuanian) are refused; every other locale name is
 * accepted. Text must be UTF-8 wherever case matters.
 *
 * The output's length depends on the input values when there are
 * stopwords: it is worked out when the program is built from the values
 * known then, and a run whose input keeps another number of strings fails.
 */

enum { CASE_NONE, CASE_LOWER, CASE_UPPER };

static uint32_t to_lower(uint32_t c)
{
	if (c < 0x80)
		return c >= 'A' && c <= 'Z' ? c + 32 : c;
	if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
		return c + 32;
	if (c >= 0x100 && c <= 0x17F) {
		if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F)
			return c; /* İ ı ĸ ŉ ſ: no one-to-one lowercase */
		if (c == 0x178)
			return 0xFF;
		bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
		return (c & 1) == (odd_upper ? 1u : 0u) ? c + 1 : c;
	}
	if (c >= 0x386 && c <= 0x3AB) {
		if (c == 0x386)
			return 0x3AC;
		if (c >= 0x388 && c <= 0x38A)
			return c + 37;
		if (c == 0x38C)
			return 0x3CC;
		if (c == 0x38E || c == 0x38F)
			return c + 63;
		if (c >= 0x391 && c <= 0x3AB && c != 0x3A2)
			return c + 32;
		return c;
	}
	if (c >= 0x400 && c <= 0x40F)
		return c + 80;
	if (c >= 0x410 && c <= 0x42F)
		return c + 32;
	return c;
}

static uint32_t to_upper(uint32_t c)
{
	if (c < 0x80)
		return c >= 'a' && c <= 'z' ? c - 32 : c;
	if (c == 0xB5)
		return 0x39C; /* micro sign -> Greek capital mu */
	if (c >= 0xE0 && c <= 0xFE && c != 0xF7)
		return c - 32;
	if (c == 0xFF)
		return 0x178;
	if (c >= 0x100 && c <= 0x17F) {
		if (c == 0x131)
			return 'I';
		if (c == 0x17F)
			return 'S';
		if (c == 0x130 || c == 0x138 || c == 0x149 || c == 0x178)
			return c;
		bool odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
		return (c & 1) == (odd_upper ? 0u : 1u) ? c - 1 : c;
	}
	if (c >= 0x3AC && c <= 0x3CE) {
		if (c == 0x3AC)
			return 0x386;
		if (c >= 0x3AD && c <= 0x3AF)
			return c - 37;
		if (c == 0x3CC)
			return 0x38C;
		if (c == 0x3CD || c == 0x3CE)
			return c - 63;
		if (c == 0x3C2)
			return 0x3A3; /* final sigma */
		if (c >= 0x3B1 && c <= 0x3CB)
			return c - 32;
		return c;
	}
	if (c >= 0x430 && c <= 0x44F)
		return c - 32;
	if (c >= 0x450 && c <= 0x45F)
		return c - 80;
	return c;
}

typedef struct strnorm_plan {
	int action;
	bool sensitive;
	bool two_d;
	int64_t kept; /* elements the known input keeps; -1: all of them */
	int64_t n_stop;
	const char **stop; /* as given, or lowercased (into the plan) */
	size_t *stop_len;
} strnorm_plan;

/* Lowercased s (valid UTF-8) into out (room for the same bytes: the
 * mapping never lengthens its text); returns the length. */
static size_t lower_into(const char *s, size_t len, char *out)
{
	size_t at = 0, o = 0;
	uint32_t cp;
	while (gc_utf8_next((const unsigned char *)s, len, &at, &cp))
		o += gc_utf8_put(to_lower(cp), out + o);
	return o;
}

/* s (valid UTF-8) equals the lowercased stopword w once lowercased. */
static bool lower_equal(const char *s, size_t len, const char *w, size_t wlen)
{
	size_t a = 0, b = 0;
	uint32_t x, y;
	while (a < len && b < wlen) {
		gc_utf8_next((const unsigned char *)s, len, &a, &x);
		gc_utf8_next((const unsigned char *)w, wlen, &b, &y);
		if (to_lower(x) != y)
			return false;
	}
	return a == len && b == wlen;
}

/* Walks the input: counts the kept elements into *kept and, when y is set,
 * writes them (at most cap) with their case changed. */
static int strnorm_scan(gc_kctx *k, const strnorm_plan *p, const gc_tensor *x, char **y,
			int64_t cap, int64_t *kept)
{
	int64_t count = gc_tensor_numel(x), at = 0;
	bool text = p->action != CASE_NONE || (!p->sensitive && p->n_stop);
	for (int64_t i = 0; i < count; i++) {
		const char *s = gc_str_at(x, i);
		size_t len = strlen(s), bad;
		if (text && !gc_utf8_valid(s, len, &bad, NULL))
			return gc_kerr(k, GC_EINVAL,
				       "input 'X' element %" PRId64
				       " is not valid UTF-8 (at byte %zu)",
				       i, bad);
		bool stop = false;
		for (int64_t q = 0; q < p->n_stop && !stop; q++)
			stop = p->sensitive ? p->stop_len[q] == len && !memcmp(p->stop[q], s, len)
					    : lower_equal(s, len, p->stop[q], p->stop_len[q]);
		if (stop)
			continue;
		if (y && at < cap) {
			if (p->action == CASE_NONE) {
				y[at] = (char *)s; /* the input's string: nobody frees it */
			} else {
				size_t o = 0, a = 0;
				uint32_t cp;
				while (gc_utf8_next((const unsigned char *)s, len, &a, &cp))
					o += gc_utf8_len(p->action == CASE_LOWER ? to_lower(cp)
										 : to_upper(cp));
				char *t = gc_kstr(k, o);
				if (!t)
					return gc_kok(k);
				for (a = 0, o = 0;
				     gc_utf8_next((const unsigned char *)s, len, &a, &cp);)
					o += gc_utf8_put(p->action == CASE_LOWER ? to_lower(cp)
										 : to_upper(cp),
							 t + o);
				y[at] = t;
			}
		}
		at++;
	}
	*kept = at;
	return 0;
}

static int run_strnorm(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const strnorm_plan *p = n->state;
	char **y = out[0]->data;
	int64_t cap = gc_tensor_numel(out[0]), kept;
	if (strnorm_scan(k, p, in[0], y, cap, &kept))
		return gc_kok(k);
	int64_t want = p->kept >= 0 ? p->kept : gc_tensor_numel(in[0]);
	if (kept != want)
		return gc_kerr(k, GC_EINVAL,
			       "input 'X' keeps %" PRId64
			       " strings once the stopwords are removed, "
			       "but the program was built for %" PRId64 " (the output's shape was "
			       "worked out from the input values known when it was compiled)",
			       kept, want);
	if (kept == 0)
		y[0] = (char *)"";
	return 0;
}

int gc_prepare_StringNormalizer(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	const char *action = gc_attr_s(k, "case_change_action", "NONE");
	int64_t sensitive = gc_attr_i(k, "is_case_sensitive", 0);
	const char *locale = gc_attr_s(k, "locale", "");
	const gc_attr *sw = gc_attr_find(n, "stopwords");
	if (gc_kok(k))
		return gc_kok(k);
	if (sw && sw->type != GC_ATTR_STRINGS)
		return gc_kerr(k, GC_EINVAL, "attribute 'stopwords' is %s, expected strings",
			       gc_attr_type_name(sw->type));
	int act = !strcmp(action, "NONE")    ? CASE_NONE
		  : !strcmp(action, "LOWER") ? CASE_LOWER
		  : !strcmp(action, "UPPER") ? CASE_UPPER
					     : -1;
	if (act < 0)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'case_change_action' = '%s' is not LOWER, UPPER or NONE",
			       action);
	if (sensitive != 0 && sensitive != 1)
		return gc_kerr(k, GC_EINVAL,
			       "attribute 'is_case_sensitive' = %" PRId64 " is not 0 or 1",
			       sensitive);
	static const char *const refused[] = {"tr", "az", "lt"};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		if (!strncmp(locale, refused[i], 2) && !isalpha((unsigned char)locale[2]))
			return gc_kerr(
			    k, GC_EUNSUPPORTED,
			    "locale '%s' is not supported: its case rules differ from the "
			    "locale-independent Unicode mappings graphcc applies",
			    locale);
	if (x->dtype != GC_DTYPE_STRING)
		return gc_kerr(k, GC_EINVAL, "input 'X' must be a string tensor, not %s",
			       gc_dtype_name(x->dtype));
	if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1))) {
		char sh[160];
		return gc_kerr(k, GC_EINVAL, "input 'X' must be of shape [C] or [1, C], not %s",
			       gc_shape_str(x->dims, x->rank, sh, sizeof sh));
	}
	int64_t n_stop = sw ? sw->n : 0;
	size_t bytes =
	    sizeof(strnorm_plan) + (size_t)(n_stop + 1) * (sizeof(char *) + sizeof(size_t));
	for (int64_t q = 0; q < n_stop && !sensitive; q++)
		bytes += strlen(sw->v.strings[q]) + 1;
	strnorm_plan *p = gc_calloc(1, bytes);
	if (!p)
		return gc_kerr(k, GC_ENOMEM, "out of memory");
	n->state = p;
	p->action = act;
	p->sensitive = sensitive;
	p->two_d = x->rank == 2;
	p->n_stop = n_stop;
	p->stop = (const char **)(p + 1);
	p->stop_len = (size_t *)(p->stop + n_stop + 1);
	char *text = (char *)(p->stop_len + n_stop + 1);
	for (int64_t q = 0; q < n_stop; q++) {
		const char *w = sw->v.strings[q];
		size_t len = strlen(w), bad;
		if (sensitive) {
			p->stop[q] = w; /* the node's attribute lives as long as the node */
			p->stop_len[q] = len;
			continue;
		}
		if (!gc_utf8_valid(w, len, &bad, NULL))
			return gc_kerr(k, GC_EINVAL,
				       "stopword %" PRId64 " is not valid UTF-8 (at byte %zu)", q,
				       bad);
		p->stop[q] = text;
		p->stop_len[q] = lower_into(w, len, text);
		text[p->stop_len[q]] = 0;
		text += p->stop_len[q] + 1;
	}
	int64_t c = x->dims[x->rank - 1];
	p->kept = -1;
	if (n_stop) {
		if (!x->data)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "with stopwords, the output's shape depends on the values "
				       "of input 'X', "
				       "which are not known when the program is built (give them "
				       "as a constant "
				       "or an input value)");
		if (strnorm_scan(k, p, x, NULL, 0, &p->kept))
			return gc_kok(k);
		c = p->kept;
	}
	int64_t dims[2] = {1, c ? c : 1};
	gc_set_shape(out[0], GC_DTYPE_STRING, x->rank, x->rank == 2 ? dims : dims + 1);
	n->run = run_strnorm;
	return 0;
}
