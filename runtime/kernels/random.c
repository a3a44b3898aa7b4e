/*
 * Random ops: RandomUniform, RandomNormal, their *Like forms, Bernoulli,
 * Multinomial, and the mask of training-mode Dropout.
 *
 * Every draw comes from MT19937 exactly as NumPy's legacy RandomState
 * makes it, so that a NumPy script reproduces graphcc's values
 * (docs/random.md):
 *   - a node with a `seed` attribute s, on a session's first run of a
 *     program's main graph: RandomState(s) (s an integer in [0, 2^32); any
 *     other value: the xor of the halves of its float64 bits); on run r > 0
 *     or inside a subgraph: RandomState([s, r, salt_lo, salt_hi]);
 *   - a node without one: RandomState([S_lo, S_hi, h, r, salt_lo,
 *     salt_hi]) with S the session's seed (gc_session_options.seed,
 *     `graphcc run --seed`; else drawn from the OS per session) and h the
 *     32-bit FNV-1a hash of the node's name (an unnamed node's is "#i").
 * Uniform values are random_sample()'s (53 bits), normal ones its legacy
 * polar Box-Muller gauss(). One generator per node and run, drawn in
 * element order on one thread: the values do not depend on --threads.
 */
#include "random.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "../ops.h"
#include "value-impl.h"

/* ---- MT19937 as NumPy's legacy RandomState --------------------------------- */

#define MT_N 624
#define MT_M 397

typedef struct mt_state {
	uint32_t mt[MT_N];
	int mti;
	int has_gauss;
	double gauss;
} mt_state;

static void mt_seed(mt_state *s, uint32_t seed)
{
	s->mt[0] = seed;
	for (int i = 1; i < MT_N; i++)
		s->mt[i] = 1812433253u * (s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) + (uint32_t)i;
	s->mti = MT_N;
	s->has_gauss = 0;
	s->gauss = 0;
}

static void mt_seed_array(mt_state *s, const uint32_t *key, int len)
{
	mt_seed(s, 19650218u);
	int i = 1, j = 0;
	for (int k = MT_N > len ? MT_N : len; k; k--) {
		s->mt[i] = (s->mt[i] ^ ((s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) * 1664525u)) +
			   key[j] + (uint32_t)j;
		i++;
		j++;
		if (i >= MT_N) {
			s->mt[0] = s->mt[MT_N - 1];
			i = 1;
		}
		if (j >= len)
			j = 0;
	}
	for (int k = MT_N - 1; k; k--) {
		s->mt[i] = (s->mt[i] ^ ((s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) * 1566083941u)) -
			   (uint32_t)i;
		i++;
		if (i >= MT_N) {
			s->mt[0] = s->mt[MT_N - 1];
			i = 1;
		}
	}
	s->mt[0] = 0x80000000u;
}

static uint32_t mt_next(mt_state *s)
{
	if (s->mti >= MT_N) {
		int k;
		uint32_t y;
		for (k = 0; k < MT_N - MT_M; k++) {
			y = (s->mt[k] & 0x80000000u) | (s->mt[k + 1] & 0x7fffffffu);
			s->mt[k] = s->mt[k + MT_M] ^ (y >> 1) ^ (-(y & 1u) & 0x9908b0dfu);
		}
		for (; k < MT_N - 1; k++) {
			y = (s->mt[k] & 0x80000000u) | (s->mt[k + 1] & 0x7fffffffu);
			s->mt[k] = s->mt[k + (MT_M - MT_N)] ^ (y >> 1) ^ (-(y & 1u) & 0x9908b0dfu);
		}
		y = (s->mt[MT_N - 1] & 0x80000000u) | (s->mt[0] & 0x7fffffffu);
		s->mt[MT_N - 1] = s->mt[MT_M - 1] ^ (y >> 1) ^ (-(y & 1u) & 0x9908b0dfu);
		s->mti = 0;
	}
	uint32_t y = s->mt[s->mti++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

/* random_sample(): [0, 1) in 53 bits */
static double mt_double(mt_state *s)
{
	uint32_t a = mt_next(s) >> 5, b = mt_next(s) >> 6;
	return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* legacy gauss(): the polar method, the second value kept for the next call */
static double mt_gauss(mt_state *s)
{
	if (s->has_gauss) {
		s->has_gauss = 0;
		return s->gauss;
	}
	double f, x1, x2, r2;
	do {
		x1 = 2.0 * mt_double(s) - 1.0;
		x2 = 2.0 * mt_double(s) - 1.0;
		r2 = x1 * x1 + x2 * x2;
	} while (r2 >= 1.0 || r2 == 0.0);
	f = sqrt(-2.0 * log(r2) / r2);
	s->gauss = f * x1;
	s->has_gauss = 1;
	return f * x2;
}

/* ---- per-node settings ------------------------------------------------------- */

typedef struct rnd_state {
	bool has_seed;
	uint32_t seed; /* the attribute, as RandomState takes it */
	uint32_t name_hash;
	gc_dtype dt;	 /* output type */
	double a, b;	 /* low/high (uniform), mean/scale (normal) */
	int64_t samples; /* Multinomial's sample_size */
	double ratio;	 /* Dropout's */
	float scale;	 /* Dropout's 1 / (1 - ratio) */
} rnd_state;

/* Starts the node's generator for this run (see the top of the file). */
static void rnd_start(const gc_kctx *k, const rnd_state *st, mt_state *mt)
{
	uint32_t run = k->rng_run, salt_lo = (uint32_t)k->rng_salt,
		 salt_hi = (uint32_t)(k->rng_salt >> 32);
	if (st->has_seed) {
		if (run == 0 && k->rng_salt == 0) {
			mt_seed(mt, st->seed);
			return;
		}
		const uint32_t key[4] = {st->seed, run, salt_lo, salt_hi};
		mt_seed_array(mt, key, 4);
		return;
	}
	const uint32_t key[6] = {(uint32_t)k->rng_seed,
				 (uint32_t)(k->rng_seed >> 32),
				 st->name_hash,
				 run,
				 salt_lo,
				 salt_hi};
	mt_seed_array(mt, key, 6);
}

/* Reads the `seed` attribute (ONNX's is a float; some exporters write an
 * int). */
static int read_seed(gc_kctx *k, const gc_node *n, rnd_state *st)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)n->name; *c; c++)
		h = (h ^ *c) * 16777619u;
	st->name_hash = h;
	const gc_attr *a = gc_attr_find(n, "seed");
	if (!a)
		return 0;
	double v;
	if (a->type == GC_ATTR_FLOAT)
		v = a->v.f;
	else if (a->type == GC_ATTR_INT)
		v = (double)a->v.i;
	else
		return gc_kerr(k, GC_EINVAL, "attribute 'seed' must be a float, it is %s",
			       gc_attr_type_name(a->type));
	st->has_seed = true;
	if (v >= 0 && v <= 4294967295.0 && v == floor(v)) {
		st->seed = (uint32_t)v;
	} else {
		uint64_t bits;
		memcpy(&bits, &v, 8);
		st->seed = (uint32_t)bits ^ (uint32_t)(bits >> 32);
	}
	return 0;
}

/* ---- RandomUniform, RandomNormal and their *Like forms ------------------------ */

static int run_fill(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
		    bool normal)
{
	(void)in;
	const rnd_state *st = n->state;
	mt_state mt;
	rnd_start(k, st, &mt);
	int64_t count = gc_tensor_numel(out[0]);
	for (int64_t i = 0; i < count; i++)
		gc_kv_store(out[0], i,
			    normal ? st->a + st->b * mt_gauss(&mt)
				   : st->a + (st->b - st->a) * mt_double(&mt));
	return 0;
}

static int run_uniform(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return run_fill(k, n, in, out, false);
}

static int run_normal(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return run_fill(k, n, in, out, true);
}

/* The output type: attribute 'dtype', else def (UNDEFINED: float). */
static int read_dtype(gc_kctx *k, const gc_node *n, gc_dtype def, gc_dtype *dt)
{
	const gc_attr *a = gc_attr_find(n, "dtype");
	int64_t v = gc_attr_i(k, "dtype", def == GC_DTYPE_UNDEFINED ? GC_DTYPE_FLOAT : def);
	if (gc_kok(k))
		return gc_kok(k);
	if (v <= 0 || v >= GC_DTYPE_COUNT || !gc_kv_float((gc_dtype)v))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "%s %s is not a type %s makes (float, double, float16, bfloat16)",
			       a ? "attribute 'dtype'" : "the input's type",
			       v > 0 && v < GC_DTYPE_COUNT ? gc_dtype_name((gc_dtype)v)
							   : "(unknown)",
			       n->op_type);
	*dt = (gc_dtype)v;
	return 0;
}

static int prepare_fill(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			bool normal, bool like)
{
	rnd_state *st = gc_kstate(k, n, sizeof *st);
	if (!st || read_seed(k, n, st))
		return gc_kok(k);
	st->a = gc_attr_f(k, normal ? "mean" : "low", 0.0f);
	st->b = gc_attr_f(k, normal ? "scale" : "high", 1.0f);
	if (gc_kok(k))
		return gc_kok(k);
	int32_t rank;
	int64_t dims[GC_MAX_RANK];
	if (like) {
		if (read_dtype(k, n, in[0]->dtype, &st->dt))
			return gc_kok(k);
		rank = in[0]->rank;
		memcpy(dims, in[0]->dims, sizeof dims);
	} else {
		if (read_dtype(k, n, GC_DTYPE_UNDEFINED, &st->dt))
			return gc_kok(k);
		const int64_t *v;
		int64_t r = gc_attr_ints(k, "shape", &v);
		if (gc_kok(k))
			return gc_kok(k);
		if (!gc_attr_find(n, "shape"))
			return gc_kerr(k, GC_EINVAL, "attribute 'shape' is required");
		if (r > GC_MAX_RANK)
			return gc_kerr(k, GC_EUNSUPPORTED,
				       "attribute 'shape' has rank %" PRId64
				       "; graphcc supports up to %d",
				       r, GC_MAX_RANK);
		for (int i = 0; i < r; i++)
			if (v[i] < 0)
				return gc_kerr(k, GC_EINVAL,
					       "attribute 'shape' has a negative dim (%" PRId64 ")",
					       v[i]);
		rank = (int32_t)r;
		memcpy(dims, v, (size_t)r * sizeof *v);
		if (gc_kout_fits(k, 0, st->dt, rank, dims))
			return gc_kok(k);
	}
	if (!normal && !(st->b >= st->a))
		return gc_kerr(k, GC_EINVAL, "attribute 'high' (%g) is below 'low' (%g)", st->b,
			       st->a);
	if (normal && !(st->b >= 0))
		return gc_kerr(k, GC_EINVAL, "attribute 'scale' (%g) is negative", st->b);
	gc_set_shape(out[0], st->dt, rank, dims);
	n->impure = true;
	n->run = normal ? run_normal : run_uniform;
	return 0;
}

int gc_prepare_RandomUniform(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_fill(k, n, in, out, false, false);
}

int gc_prepare_RandomNormal(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_fill(k, n, in, out, true, false);
}

int gc_prepare_RandomUniformLike(gc_kctx *k, gc_node *n, gc_tensor *const *in,
				 gc_tensor *const *out)
{
	return prepare_fill(k, n, in, out, false, true);
}

int gc_prepare_RandomNormalLike(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	return prepare_fill(k, n, in, out, true, true);
}

/* ---- Bernoulli: 1 where random_sample() < p ----------------------------------- */

static int run_bernoulli(gc_kctx *k, const gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const rnd_state *st = n->state;
	mt_state mt;
	rnd_start(k, st, &mt);
	int64_t count = gc_tensor_numel(in[0]);
	for (int64_t i = 0; i < count; i++) {
		double p = gc_kv_load(in[0], i);
		if (!(p >= 0 && p <= 1))
			return gc_kerr(k, GC_EINVAL,
				       "input 'input' holds %g at flat index %" PRId64
				       ": a probability must be in [0, 1]",
				       p, i);
		gc_kv_store(out[0], i, mt_double(&mt) < p);
	}
	return 0;
}

int gc_prepare_Bernoulli(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	if (!gc_kv_float(in[0]->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input 'input' has type %s; probabilities are float, double, "
			       "float16 or bfloat16",
			       gc_dtype_name(in[0]->dtype));
	rnd_state *st = gc_kstate(k, n, sizeof *st);
	if (!st || read_seed(k, n, st))
		return gc_kok(k);
	int64_t v = gc_attr_i(k, "dtype", in[0]->dtype);
	if (gc_kok(k))
		return gc_kok(k);
	if (v <= 0 || v >= GC_DTYPE_COUNT || !gc_kv_numeric((gc_dtype)v))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "attribute 'dtype' (%" PRId64 ") is not a number type graphcc has",
			       v);
	st->dt = (gc_dtype)v;
	gc_set_shape(out[0], st->dt, in[0]->rank, in[0]->dims);
	n->impure = true;
	n->run = run_bernoulli;
	return 0;
}

/* ---- Multinomial: sample_size class indices per row of logits -------------------
 * Class c is drawn when random_sample() < cdf[c] for the first such c, the
 * cdf of softmax(row) in double; draws in row order, samples inner. */

static int run_multinomial(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			   gc_tensor *const *out)
{
	const rnd_state *st = n->state;
	const gc_tensor *x = in[0];
	int64_t rows = x->dims[0], classes = x->dims[1];
	double *cdf = k->scratch;
	mt_state mt;
	rnd_start(k, st, &mt);
	for (int64_t r = 0; r < rows; r++) {
		double mx = -INFINITY, sum = 0;
		for (int64_t c = 0; c < classes; c++) {
			double v = gc_kv_load(x, r * classes + c);
			if (isnan(v) || v == INFINITY)
				return gc_kerr(k, GC_EINVAL,
					       "row %" PRId64 " of input 'input' holds %g", r, v);
			mx = v > mx ? v : mx;
		}
		if (mx == -INFINITY)
			return gc_kerr(
			    k, GC_EINVAL,
			    "row %" PRId64 " of input 'input' gives every class probability 0", r);
		for (int64_t c = 0; c < classes; c++) {
			sum += exp(gc_kv_load(x, r * classes + c) - mx);
			cdf[c] = sum;
		}
		for (int64_t j = 0; j < st->samples; j++) {
			double u = mt_double(&mt) * sum;
			int64_t lo = 0, hi = classes - 1;
			while (lo < hi) { /* the first c with u < cdf[c] */
				int64_t mid = lo + (hi - lo) / 2;
				if (u < cdf[mid])
					hi = mid;
				else
					lo = mid + 1;
			}
			gc_kv_store(out[0], r * st->samples + j, (double)lo);
		}
	}
	return 0;
}

int gc_prepare_Multinomial(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out)
{
	const gc_tensor *x = in[0];
	if (!gc_kv_float(x->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input 'input' has type %s; logits are float, "
			       "double, float16 or bfloat16",
			       gc_dtype_name(x->dtype));
	if (x->rank != 2)
		return gc_kerr(k, GC_EINVAL,
			       "input 'input' must be [batch_size, class_size], it has rank %d",
			       x->rank);
	if (x->dims[1] < 1 && x->dims[0] > 0)
		return gc_kerr(k, GC_EINVAL, "input 'input' has no classes");
	rnd_state *st = gc_kstate(k, n, sizeof *st);
	if (!st || read_seed(k, n, st))
		return gc_kok(k);
	st->samples = gc_attr_i(k, "sample_size", 1);
	int64_t v = gc_attr_i(k, "dtype", GC_DTYPE_INT32);
	if (gc_kok(k))
		return gc_kok(k);
	if (st->samples < 0)
		return gc_kerr(k, GC_EINVAL, "attribute 'sample_size' is negative (%" PRId64 ")",
			       st->samples);
	if (v != GC_DTYPE_INT32 && v != GC_DTYPE_INT64)
		return gc_kerr(k, GC_EINVAL, "attribute 'dtype' must be int32 or int64, it is %s",
			       v > 0 && v < GC_DTYPE_COUNT ? gc_dtype_name((gc_dtype)v)
							   : "unknown");
	st->dt = (gc_dtype)v;
	int64_t dims[2] = {x->dims[0], st->samples};
	if (gc_kout_fits(k, 0, st->dt, 2, dims))
		return gc_kok(k);
	gc_set_shape(out[0], st->dt, 2, dims);
	n->scratch_bytes = (uint64_t)(x->dims[1] > 0 ? x->dims[1] : 1) * sizeof(double);
	n->impure = true;
	n->run = run_multinomial;
	return 0;
}

/* ---- training-mode Dropout ------------------------------------------------------ */

static int run_dropout_train(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
			     gc_tensor *const *out)
{
	const rnd_state *st = n->state;
	mt_state mt;
	rnd_start(k, st, &mt);
	const gc_tensor *x = in[0];
	uint8_t *mask = n->n_out > 1 && out[1] && out[1]->data ? out[1]->data : NULL;
	int64_t count = gc_tensor_numel(x);
	for (int64_t i = 0; i < count; i++) {
		bool keep = mt_double(&mt) >= st->ratio;
		/* as ONNX's reference: x * mask * scale, in x's type (float32 for
		 * the half types) */
		double v = gc_kv_load(x, i);
		if (x->dtype == GC_DTYPE_DOUBLE)
			v = keep ? v * (1.0 / (1.0 - st->ratio)) : 0.0;
		else
			v = keep ? (double)((float)v * st->scale) : 0.0;
		gc_kv_store(out[0], i, v);
		if (mask)
			mask[i] = keep;
	}
	return 0;
}

int gc_random_dropout_setup(gc_kctx *k, gc_node *n, gc_tensor *const *in, gc_tensor *const *out,
			    double ratio)
{
	if (!gc_kv_float(in[0]->dtype))
		return gc_kerr(k, GC_EUNSUPPORTED,
			       "input 'data' has type %s; training mode takes "
			       "float, double, float16 or bfloat16",
			       gc_dtype_name(in[0]->dtype));
	rnd_state *st = gc_kstate(k, n, sizeof *st);
	if (!st || read_seed(k, n, st))
		return gc_kok(k);
	st->ratio = ratio;
	st->scale = (float)(1.0 / (1.0 - ratio));
	gc_set_shape(out[0], in[0]->dtype, in[0]->rank, in[0]->dims);
	if (n->n_out > 1 && out[1])
		gc_set_shape(out[1], GC_DTYPE_BOOL, in[0]->rank, in[0]->dims);
	n->impure = true;
	n->run = run_dropout_train;
	return 0;
}
