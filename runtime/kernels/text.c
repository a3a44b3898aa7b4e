/*
 * TfIdfVectorizer over integer tokens (pool_int64s): per row, every n-gram
 * with min_gram_length <= n <= max_gram_length whose tokens are 1 + skip
 * apart (skip = 0 .. max_skip_count; unigrams counted once) is looked up in
 * the pool and counted at its ngram_indexes entry; mode TF writes counts,
 * IDF the weight of each present n-gram, TFIDF count x weight (weights
 * default to 1). String tokens (pool_strings) are not supported yet.
 */
#include <inttypes.h>
#include <string.h>

#include "../alloc.h"
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
