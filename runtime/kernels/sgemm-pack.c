/*
 * The row GEMM of sgemm-pack.h: 8 x 48 register tiles, S packed in panels
 * of 8 rows, V plain or packed in panels of 48 columns; and what the packed
 * kernels share (CPU check, epilogue).
 */
#include "sgemm-pack.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../fileio.h"
#include "../kernel.h"
#include "nn-par.h"
#include "nn-split.h"
#include "lanes.h"
#include "qconv.h"
#include "vmath.h"
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define PK_X86 1
#include <immintrin.h>

#include "sgemm-pack-impl.h"
#endif

int gc_pk_usable(void)
{
	if (gc_reference_kernels())
		return 0;
#ifdef PK_X86
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
	       __builtin_cpu_supports("fma");
#else
	return 0;
#endif
}

void gc_pk_epi_init(gc_pk_epi *e, const gc_nn_act *act)
{
	memset(e, 0, sizeof *e);
	e->alpha = 1;
	e->beta = 1;
	e->act = act->kind;
	e->lo = (float)act->lo;
	e->hi = (float)act->hi;
	e->slope = (float)act->alpha;
	e->offset = (float)act->beta;
}

int64_t gc_pk_s_floats(int64_t m, int64_t k)
{
	return (m + GC_PK_MR - 1) / GC_PK_MR * GC_PK_MR * k;
}

#ifdef PK_X86
/* A full panel of 8 rows of a (rs apart) into [k][8], 8 x 8 blocks at a
 * time transposed in registers; the last k % 8 columns one by one. The
 * scalar loop wrote 8 floats 32 bytes apart per row read, which made packing
 * a MatMul's activations ~8 % of a transformer's run (issue 19). */
static __attribute__((target("avx2"))) void pack_s_rows8(const float *ap, int64_t rs, int64_t k, float *dst)
{
	int64_t p = 0;
	for (; p + 8 <= k; p += 8) {
		__m256 r0 = _mm256_loadu_ps(ap + p), r1 = _mm256_loadu_ps(ap + rs + p),
		       r2 = _mm256_loadu_ps(ap + 2 * rs + p), r3 = _mm256_loadu_ps(ap + 3 * rs + p),
		       r4 = _mm256_loadu_ps(ap + 4 * rs + p), r5 = _mm256_loadu_ps(ap + 5 * rs + p),
		       r6 = _mm256_loadu_ps(ap + 6 * rs + p), r7 = _mm256_loadu_ps(ap + 7 * rs + p);
		__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
		       t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
		       t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
		       t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
		__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee),
		       u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee),
		       u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee),
		       u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
		float *d = dst + p * GC_PK_MR;
		_mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
		_mm256_storeu_ps(d + 8, _mm256_permute2f128_ps(u1, u5, 0x20));
		_mm256_storeu_ps(d + 16, _mm256_permute2f128_ps(u2, u6, 0x20));
		_mm256_storeu_ps(d + 24, _mm256_permute2f128_ps(u3, u7, 0x20));
		_mm256_storeu_ps(d + 32, _mm256_permute2f128_ps(u0, u4, 0x31));
		_mm256_storeu_ps(d + 40, _mm256_permute2f128_ps(u1, u5, 0x31));
		_mm256_storeu_ps(d + 48, _mm256_permute2f128_ps(u2, u6, 0x31));
		_mm256_storeu_ps(d + 56, _mm256_permute2f128_ps(u3, u7, 0x31));
	}
	for (; p < k; p++)
		for (int64_t i = 0; i < GC_PK_MR; i++)
			dst[p * GC_PK_MR + i] = ap[i * rs + p];
}

static int pack_s_fast(void)
{
	/* atomic: the pool's threads pack too (every one computes the same) */
	static atomic_int v = -1;
	int r = atomic_load_explicit(&v, memory_order_relaxed);
	if (r < 0) {
		__builtin_cpu_init();
		r = __builtin_cpu_supports("avx2") != 0;
		atomic_store_explicit(&v, r, memory_order_relaxed);
	}
	return r;
}
#endif

void gc_pk_pack_s(const float *a, int64_t rs, int64_t cs, int64_t m, int64_t k, float *dst)
{
	for (int64_t i0 = 0; i0 < m; i0 += GC_PK_MR) {
		int64_t mr = m - i0 < GC_PK_MR ? m - i0 : GC_PK_MR;
		const float *ap = a + i0 * rs;
#ifdef PK_X86
		if (cs == 1 && mr == GC_PK_MR && pack_s_fast()) {
			pack_s_rows8(ap, rs, k, dst);
			dst += GC_PK_MR * k;
			continue;
		}
#endif
		if (cs == 1) { /* rows of a: read along k, write strided */
			for (int64_t i = 0; i < GC_PK_MR; i++)
				for (int64_t p = 0; p < k; p++)
					dst[p * GC_PK_MR + i] = i < mr ? ap[i * rs + p] : 0;
		} else {
			for (int64_t p = 0; p < k; p++)
				for (int64_t i = 0; i < GC_PK_MR; i++)
					dst[p * GC_PK_MR + i] = i < mr ? ap[i * rs + p * cs] : 0;
		}
		dst += GC_PK_MR * k;
	}
}

int64_t gc_pk_v_floats(int64_t k, int64_t n)
{
	return (n + GC_PK_NR - 1) / GC_PK_NR * GC_PK_NR * k;
}

#ifdef PK_X86
/* Phases 2 apart: the even and odd lanes of the 32 floats (a, b). */
static inline __attribute__((always_inline)) GC_PK_TARGET void split2(__m512 a, __m512 b,
								      __m512 *even, __m512 *odd)
{
	const __m512i ie =
	    _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i io = _mm512_add_epi32(ie, _mm512_set1_epi32(1));
	*even = _mm512_permutex2var_ps(a, ie, b);
	*odd = _mm512_permutex2var_ps(a, io, b);
}

/* 16 floats of a padded row from its element p: src's [p - lo, p - lo +
 * 16), the lanes outside [0, w) zeros and not read. */
static inline __attribute__((always_inline)) GC_PK_TARGET __m512
pad_load(const float *src, int64_t lo, int64_t w, int64_t p)
{
	/* (the address of a load wholly before src, all lanes masked, is
	 * formed as an integer: no pointer before the array) */
	const float *at = (const float *)((uintptr_t)src + (uintptr_t)((p - lo) * 4));
	return _mm512_maskz_loadu_ps(gc_lanes16_between(lo - p, lo + w - p), at);
}

/* gc_pk_split_pad's stride 2 and 4, 16 of each phase at a time: two and six
 * lane permutes for 32 and 64 floats rather than a load and a store each
 * (the first layers of CNNs, 3 input channels, spend ~half of the tap
 * path's copy here); the pads and the row's ends by masked loads of just
 * the floats it may read and masked stores. Element by element, that
 * tail was most of the copy of a strided 1x1 convolution to 28x28 or
 * 14x14 (resnet's downsampling: 28 and 14 of each phase a row). The pads
 * are made here, not in a padded copy of the row split after: this
 * function's loads of what that copy had just stored, each from several
 * stores at other alignments, waited for them to leave the store buffer
 * (the 3 -> 32 3x3 s2 stem at 224x224 spent 18 % of its time here, 55 %
 * of that on one load). */
static GC_PK_TARGET void split_512(const float *src, int64_t lo, int64_t w, int64_t s, int64_t n,
				   int phases, float *dst, int64_t ld)
{
	for (int64_t i = 0; i < n; i += 16) {
		int64_t p = s * i;
		__mmask16 st = gc_lanes16(n - i);
		__m512 q[4];
		if (s == 2) {
			split2(pad_load(src, lo, w, p), pad_load(src, lo, w, p + 16), &q[0], &q[1]);
		} else {
			__m512 e0, o0, e1, o1;
			split2(pad_load(src, lo, w, p), pad_load(src, lo, w, p + 16), &e0, &o0);
			split2(pad_load(src, lo, w, p + 32), pad_load(src, lo, w, p + 48), &e1, &o1);
			split2(e0, e1, &q[0], &q[2]);
			split2(o0, o1, &q[1], &q[3]);
		}
		for (int r = 0; r < phases; r++)
			_mm512_mask_storeu_ps(dst + r * ld + i, st, q[r]);
	}
}
#endif

#ifdef PK_X86
/* NaN where x is NaN, else r. */
static inline __attribute__((always_inline)) GC_PK_TARGET __m512 keep_nan(__m512 x, __m512 r)
{
	return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

GC_PK_TARGET void gc_pk_sigmoid(float *v, int64_t n)
{
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = gc_lanes16(n - i);
		__m512 x = _mm512_maskz_loadu_ps(m, v + i), t, w;
		gc_pk_sig_parts(x, &t, &w);
		__mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
		_mm512_mask_storeu_ps(v + i, m, keep_nan(x, _mm512_mask_mul_ps(w, neg, w, t)));
	}
}

/* tanh: vmath.h's odd polynomial below GC_VM_TANH_SMALL (gc_vm_tanhf's),
 * above it (1 - t) / (1 + t) with t = e^-2|x|, the sign of x. */
GC_PK_TARGET void gc_pk_tanh(float *v, int64_t n)
{
	const __m512 sign = _mm512_set1_ps(-0.0f);
	for (int64_t i = 0; i < n; i += 16) {
		__mmask16 m = gc_lanes16(n - i);
		__m512 x = _mm512_maskz_loadu_ps(m, v + i), z = _mm512_mul_ps(x, x), t, w;
		__m512 q = _mm512_set1_ps(GC_VM_TANH_P0);
		q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(GC_VM_TANH_P1));
		q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(GC_VM_TANH_P2));
		q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(GC_VM_TANH_P3));
		q = _mm512_fmadd_ps(q, z, _mm512_set1_ps(GC_VM_TANH_P4));
		__m512 small = _mm512_fmadd_ps(_mm512_mul_ps(x, z), q, x);
		gc_pk_sig_parts(_mm512_add_ps(x, x), &t, &w);
		__m512 big = _mm512_mul_ps(_mm512_sub_ps(_mm512_set1_ps(1.0f), t), w);
		big = _mm512_or_ps(big, _mm512_and_ps(x, sign));
		__mmask16 lo = _mm512_cmp_ps_mask(_mm512_andnot_ps(sign, x),
						  _mm512_set1_ps(GC_VM_TANH_SMALL), _CMP_LT_OQ);
		_mm512_mask_storeu_ps(v + i, m, keep_nan(x, _mm512_mask_mov_ps(big, lo, small)));
	}
}

#else
/* Off x86-64, where gc_pk_usable is 0 and no kernel calls them, vmath.h's
 * scalar functions: a call is still right, not a no-op. */
void gc_pk_sigmoid(float *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = gc_vm_sigmoidf(v[i]);
}

void gc_pk_tanh(float *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = gc_vm_tanhf(v[i]);
}
#endif

void gc_pk_split_pad(const float *src, int64_t lo, int64_t w, int64_t s, int64_t n, int phases,
		     float *dst, int64_t ld)
{
#ifdef PK_X86
	if (s == 2 || s == 4) {
		split_512(src, lo, w, s, n, phases, dst, ld);
		return;
	}
#endif
	for (int r = 0; r < phases; r++)
		for (int64_t i = 0; i < n; i++) {
			int64_t j = s * i + r - lo;
			dst[r * ld + i] = j >= 0 && j < w ? src[j] : 0.0f;
		}
}

void gc_pk_split(const float *src, int64_t s, int64_t n, int phases, float *dst, int64_t ld)
{
	if (s == 1) {
		memcpy(dst, src, (size_t)n * sizeof *dst);
		return;
	}
	gc_pk_split_pad(src, 0, s * (n - 1) + phases, s, n, phases, dst, ld);
}

void gc_pk_pack_v(const float *b, int64_t rs, int64_t cs, int64_t k, int64_t n, float *dst)
{
	for (int64_t j0 = 0; j0 < n; j0 += GC_PK_NR) {
		int64_t nr = n - j0 < GC_PK_NR ? n - j0 : GC_PK_NR;
		for (int64_t p = 0; p < k; p++) {
			const float *bp = b + p * rs + j0 * cs;
			float *d = dst + p * GC_PK_NR;
			for (int64_t j = 0; j < GC_PK_NR; j++)
				d[j] = j < nr ? bp[j * cs] : 0;
		}
		dst += GC_PK_NR * k;
	}
}

void gc_pk_unpack_s(const float *src, int64_t m, int64_t k, float *a)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t p = 0; p < k; p++)
			a[i * k + p] = src[(i / GC_PK_MR) * GC_PK_MR * k + p * GC_PK_MR + i % GC_PK_MR];
}

void gc_pk_unpack_v(const float *src, int64_t rs, int64_t cs, int64_t k, int64_t n, float *b)
{
	for (int64_t p = 0; p < k; p++)
		for (int64_t j = 0; j < n; j++)
			b[p * rs + j * cs] =
			    src[(j / GC_PK_NR) * GC_PK_NR * k + p * GC_PK_NR + j % GC_PK_NR];
}

/* The layouts of gc_kpacked's keys this file and conv-direct.c make:
 *   "pk-s1 G M K"      G groups of M x K rows, each packed as S
 *   "pk-v1 K N RS CS"  V of a K x N operand b[p * RS + j * CS]
 *   "pk-cv2 G MG K R C"  the channel-vector kernel's weights, G groups of MG x K,
 *                      the window R rows of C taps (its step order)
 *   "pk-cv1 G MG K"    the same in ONNX's order along k (R = C = 1): files
 *                      of graphcc before the steps went by window row */
/* Whether the key's nv numbers lie in [1, 2^40] and their product (in
 * floats) is the plain size nbytes, which no packed form is smaller than:
 * then both are bounded by the file, and the packed sizes are computed
 * without overflow. */
static bool unpack_sizes_ok(const int64_t *v, int nv, uint64_t src_bytes, uint64_t nbytes)
{
	double floats = 1;
	for (int i = 0; i < nv; i++) {
		if (v[i] < 1 || v[i] > ((int64_t)1 << 40))
			return false;
		floats *= (double)v[i];
	}
	return nbytes <= src_bytes && floats * 4 == (double)nbytes;
}

int gc_packed_unpack(const char *key, const void *src, uint64_t src_bytes, void *dst,
		     uint64_t nbytes)
{
	int64_t v[4] = { 0 };
	char tail;
	if (!strncmp(key, "q8w", 3)) /* the integer convolution's (qconv.h) */
		return gc_qconv_unpack(key, src, src_bytes, dst, nbytes);
	if (!strncmp(key, "q8b", 3)) /* the integer GEMM's B (qgemm.h) */
		return gc_qgemm_unpack_b(key, src, src_bytes, dst, nbytes);
	if (sscanf(key, "pk-s1 %" SCNd64 " %" SCNd64 " %" SCNd64 " %c", &v[0], &v[1], &v[2],
		   &tail) == 3) {
		if (!unpack_sizes_ok(v, 3, src_bytes, nbytes) ||
		    (uint64_t)(v[0] * gc_pk_s_floats(v[1], v[2]) * 4) != src_bytes)
			return GC_EINVAL;
		for (int64_t g = 0; g < v[0]; g++)
			gc_pk_unpack_s((const float *)src + g * gc_pk_s_floats(v[1], v[2]), v[1],
				       v[2], (float *)dst + g * v[1] * v[2]);
		return 0;
	}
	if (sscanf(key, "pk-v1 %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %c", &v[0], &v[1],
		   &v[2], &v[3], &tail) == 4) {
		bool rows = v[2] == v[1] && v[3] == 1, cols = v[2] == 1 && v[3] == v[0];
		if (!(rows || cols) || !unpack_sizes_ok(v, 2, src_bytes, nbytes) ||
		    (uint64_t)gc_pk_v_floats(v[0], v[1]) * 4 != src_bytes)
			return GC_EINVAL;
		gc_pk_unpack_v(src, v[2], v[3], v[0], v[1], dst);
		return 0;
	}
	int64_t rc[2] = {1, 1};
	if (sscanf(key, "pk-cv1 %" SCNd64 " %" SCNd64 " %" SCNd64 " %c", &v[0], &v[1], &v[2],
		   &tail) == 3 ||
	    sscanf(key, "pk-cv2 %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %" SCNd64 " %c",
		   &v[0], &v[1], &v[2], &rc[0], &rc[1], &tail) == 5) {
		/* R x C taps divide k (the channels are k / (R C)) */
		if (!unpack_sizes_ok(v, 3, src_bytes, nbytes) || rc[0] < 1 || rc[1] < 1 ||
		    rc[1] > v[2] || rc[0] > v[2] / rc[1] || v[2] % (rc[0] * rc[1]) ||
		    (uint64_t)(v[0] * gc_pk_conv_floats(v[1], v[2]) * 4) != src_bytes)
			return GC_EINVAL;
		gc_pk_conv_unpack(src, v[0], v[1], v[2], rc[0], rc[1], dst);
		return 0;
	}
	return GC_EINVAL;
}

double gc_pk_gemm_cost(int64_t m, int64_t n, int64_t k)
{
	/* a tile of 8 rows and 16 nv columns is 8 nv vector FMAs per k step
	 * (fewer rows: 3 mr, but at least ~8 for the loads) and a store of
	 * ~50 nv cycles; the last panel is as wide as its columns need */
	int64_t full = m / GC_PK_MR, mr = m % GC_PK_MR;
	double cols = (double)(n / GC_PK_NR) * 3 + (double)((n % GC_PK_NR + 15) / 16);
	double tile = (double)k * 8 + 50;
	double part = mr ? (double)k * (mr > 3 ? mr : 3) + 35 : 0;
	return cols * ((double)full * tile + part);
}

/* Whether g's tiles read V's rows in place at v_rows (a convolution's
 * taps: gc_pk_gemm.v_rows without v_buf): its column panels are then
 * cut at each output row's end, so that a panel's columns are
 * contiguous in every row of V, or with v_wrap run on across the rows. */
static int direct_taps(const gc_pk_gemm *g)
{
	return g->v_rows && !g->v_buf && g->v_ow > 0;
}

static int wrapped(const gc_pk_gemm *g)
{
	return direct_taps(g) && g->v_wrap;
}

/* Columns of a wrapped product: every output row v_oh_ld, the last v_ow. */
static int64_t wrap_cols(const gc_pk_gemm *g)
{
	return (g->n / g->v_ow - 1) * g->v_oh_ld + g->v_ow;
}

int64_t gc_pk_gemm_panels(const gc_pk_gemm *g)
{
	if (wrapped(g))
		return (wrap_cols(g) + GC_PK_NR - 1) / GC_PK_NR;
	if (direct_taps(g))
		return g->n / g->v_ow * ((g->v_ow + GC_PK_NR - 1) / GC_PK_NR);
	return (g->n + GC_PK_NR - 1) / GC_PK_NR;
}

/* Column panel jp's first column (*n0: in c, where a wrapped one's may be
 * past its row's end), its columns (*nr, up to 48, more for the last panel
 * of plain V: the masks clamp) and where they start in a row of plain V
 * (*voff). */
static void panel_at(const gc_pk_gemm *g, int64_t jp, int64_t *n0, int64_t *nr, int64_t *voff)
{
	if (wrapped(g)) {
		int64_t u = jp * GC_PK_NR, left = wrap_cols(g) - u;
		*n0 = u / g->v_oh_ld * g->v_ow + u % g->v_oh_ld;
		*nr = left < GC_PK_NR ? left : GC_PK_NR;
		*voff = u;
		return;
	}
	if (!direct_taps(g)) {
		*n0 = *voff = jp * GC_PK_NR;
		*nr = g->n - *n0;
		return;
	}
	int64_t per = (g->v_ow + GC_PK_NR - 1) / GC_PK_NR, oh = jp / per,
		o = jp % per * GC_PK_NR;
	*n0 = oh * g->v_ow + o;
	*nr = g->v_ow - o < GC_PK_NR ? g->v_ow - o : GC_PK_NR;
	*voff = oh * g->v_oh_ld + o;
}

void gc_pk_gemm_panel_rows(const gc_pk_gemm *g, int64_t p0, int64_t p1, int64_t *oh0,
			   int64_t *oh1)
{
	int64_t n0, nr, voff;
	if (wrapped(g)) { /* by V's columns: a panel may start past a row's end */
		*oh0 = p0 * GC_PK_NR / g->v_oh_ld;
		panel_at(g, p1 - 1, &n0, &nr, &voff);
		*oh1 = (voff + nr - 1) / g->v_oh_ld;
		return;
	}
	panel_at(g, p0, &n0, &nr, &voff);
	*oh0 = n0 / g->v_ow;
	panel_at(g, p1 - 1, &n0, &nr, &voff);
	nr = nr < GC_PK_NR ? nr : GC_PK_NR;
	*oh1 = (n0 + nr - 1) / g->v_ow;
}

#ifdef PK_X86

#define AI GC_PK_INLINE

/* What a tile brings into cache while it computes (gc_pk_gemm_run_slot):
 * lin (NULL: none), lin_step bytes of it per step along k, into L2 (the
 * next panel of packed V); and the rows of the next tile's output (crow,
 * for writing) and residual (rrow, NULL: none), one row of each (its
 * 192 bytes) every `every` steps along k, rows ld bytes apart. */
typedef struct pk_pf {
	const char *lin;
	int64_t lin_step;
	char *crow;
	const char *rrow;
	int64_t cld, rld, every;
	int rows;
	/* a block of k of a longer product: acc, its sums start from c (what
	 * the blocks before stored); raw, they are stored without the
	 * epilogue (blocks follow) */
	int acc, raw;
	/* V's row p at v + vrows[p] (a convolution's taps read where they
	 * are: gc_pk_gemm.v_rows without v_buf), NULL: ldv apart */
	const int32_t *vrows;
	/* floats of S ahead of a tile's step that its even steps bring into
	 * L1 (run_panels: PK_S_AHEAD), or 0 */
	int64_t s_ahead;
} pk_pf;

/* The next row of the next tile's output and residual, at most pf->rows. */
AI void tile_pf_rows(char **crow, const char **rrow, int *rows, const pk_pf *pf)
{
	if (*rows <= 0)
		return;
	_mm_prefetch(*crow, _MM_HINT_ET0);
	_mm_prefetch(*crow + 64, _MM_HINT_ET0);
	_mm_prefetch(*crow + 128, _MM_HINT_ET0);
	_mm_prefetch(*crow + 188, _MM_HINT_ET0);
	*crow += pf->cld;
	if (*rrow) {
		_mm_prefetch(*rrow, _MM_HINT_T0);
		_mm_prefetch(*rrow + 64, _MM_HINT_T0);
		_mm_prefetch(*rrow + 128, _MM_HINT_T0);
		_mm_prefetch(*rrow + 188, _MM_HINT_T0);
		*rrow += pf->rld;
	}
	--*rows;
}

/* Where a tile's columns go in c: vector q's lanes k[q] at off[q] from the
 * tile's first column (16 q unless wrapped), and with wrap its lanes kw[q],
 * those past the end of the row they start in and of its columns not
 * stored, on the next row: gap columns before (gc_pk_gemm.v_wrap). v[q]:
 * the panel's columns, those V has. */
typedef struct pk_cols {
	int64_t off[3], gap;
	__mmask16 k[3], kw[3], v[3];
} pk_cols;

/* Vector q of a row of c (or of the residual, laid out as c) at p, zeros
 * in the lanes not stored. */
AI __m512 cols_load(const float *p, const pk_cols *cl, int q, const int wrap)
{
	if (!wrap)
		return _mm512_maskz_loadu_ps(cl->k[q], p + 16 * q);
	__m512 v = _mm512_maskz_loadu_ps(cl->k[q], p + cl->off[q]);
	return _mm512_mask_loadu_ps(v, cl->kw[q], p + cl->off[q] - cl->gap);
}

AI void cols_store(float *p, const pk_cols *cl, int q, __m512 v, const int wrap)
{
	if (!wrap) {
		_mm512_mask_storeu_ps(p + 16 * q, cl->k[q], v);
		return;
	}
	_mm512_mask_storeu_ps(p + cl->off[q], cl->k[q], v);
	_mm512_mask_storeu_ps(p + cl->off[q] - cl->gap, cl->kw[q], v);
}

/* A tile's results through the epilogue into c: act is e->act, or -1 for
 * whichever e has (then read at run time). e is copied first (the stores
 * to c cannot change the copy: its terms stay in registers). Unrolled, or
 * the accumulators would live in memory. */
AI void tile_store(__m512 a[GC_PK_MR][3], float *c, int64_t ldc, const gc_pk_epi *e, int64_t m0,
		   int64_t n0, const pk_cols *cl, const int mr, const int nv, const int act,
		   const int wrap)
{
	gc_pk_epi ea = *e;
	if (act >= 0)
		ea.act = act;
	const __m512 alpha = _mm512_set1_ps(ea.alpha), beta = _mm512_set1_ps(ea.beta);
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++) {
		const float *cp = ea.c ? ea.c + (m0 + i) * ea.c_sm : NULL;
		const float *rp = ea.r ? ea.r + (m0 + i) * ea.r_sm + n0 : NULL;
		__m512 cb = cp && !ea.c_sn ? _mm512_set1_ps(*cp) : _mm512_setzero_ps();
#pragma GCC unroll 3
		for (int q = 0; q < nv; q++) {
			__m512 r = a[i][q];
			if (ea.alpha != 1)
				r = _mm512_mul_ps(r, alpha);
			if (cp)
				r = _mm512_fmadd_ps(ea.c_sn ? cols_load(cp + n0, cl, q, wrap) : cb,
						    beta, r);
			if (rp)
				r = _mm512_add_ps(r, cols_load(rp, cl, q, wrap));
			r = gc_pk_act(r, &ea);
			cols_store(c + i * ldc, cl, q, r, wrap);
		}
	}
}

/* Columns [16 q, 16 q + 16) of a row of V: a plain load when the panel is
 * whole (full), else masked by kq. Masked loads cost: with them in every
 * step, resnet50's 1x1 row GEMMs ran at 143-148 GFLOP/s, with plain loads
 * at 157-165 (tools/bench/kernel-time.c, one thread). */
AI __m512 row_load(const float *v, __mmask16 kq, const int full)
{
	return full ? _mm512_loadu_ps(v) : _mm512_maskz_loadu_ps(kq, v);
}

/* One step of row_steps: S's column at s times V's row at vp. */
AI void row_step(__m512 a[GC_PK_MR][3], const float *s, const float *vp, __mmask16 k0,
		 __mmask16 k1, __mmask16 k2, const int mr, const int nv, const int full)
{
	__m512 v0 = row_load(vp, k0, full), v1 = v0, v2 = v0;
	if (nv > 1)
		v1 = row_load(vp + 16, k1, full);
	if (nv > 2)
		v2 = row_load(vp + 32, k2, full);
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++) {
		__m512 b = _mm512_set1_ps(s[i]);
		a[i][0] = _mm512_fmadd_ps(b, v0, a[i][0]);
		if (nv > 1)
			a[i][1] = _mm512_fmadd_ps(b, v1, a[i][1]);
		if (nv > 2)
			a[i][2] = _mm512_fmadd_ps(b, v2, a[i][2]);
	}
}

/*
 * The k steps of an mr x (16 nv) tile (full: its columns are all there;
 * ind: V's rows at pf->vrows), bringing pf's memory into cache meanwhile
 * (see row_tile).
 *
 * The steps go in pairs, the prefetches' tests once a pair (as
 * conv-direct.c's chan_tile): at one thread (kernel-time, builds in turns)
 * 1x1s as row GEMMs took 2.5-6 % less (resnet50's 256 -> 64 at 56x56
 * 2.4 %, squeezenet's 128 -> 32 at 54x54 6 %, 512 -> 1000 at 13x13 6 %);
 * mobilenet_v2 4.7 % faster at one thread and 3.6 % at two, squeezenet
 * 2.5 %, resnet50 2.4 % at two.
 */
AI void row_steps(__m512 a[GC_PK_MR][3], const float *s, const float *v, int64_t ldv, int64_t k,
		  __mmask16 k0, __mmask16 k1, __mmask16 k2, const pk_pf *pf, const int mr,
		  const int nv, const int full, const int ind)
{
	const int32_t *vrows = pf->vrows;
	const char *lin = pf->lin;
	const int64_t lin_step = pf->lin_step;
	char *crow = pf->crow;
	const char *rrow = pf->rrow;
	int rows = crow ? pf->rows : 0;
	int64_t next = pf->every, ahead = pf->s_ahead;
	for (int64_t p = 0; p < k; p += 2) {
		if (ahead)
			_mm_prefetch((const char *)(s + ahead), _MM_HINT_T0);
		if (lin) {
			_mm_prefetch(lin, _MM_HINT_T1);
			_mm_prefetch(lin + lin_step, _MM_HINT_T1);
			lin += 2 * lin_step;
		}
		/* a row of the next tile's every `every` steps */
		for (next -= 2; next <= 0 && rows > 0; next += pf->every)
			tile_pf_rows(&crow, &rrow, &rows, pf);
		row_step(a, s, ind ? v + vrows[p] : v, k0, k1, k2, mr, nv, full);
		if (p + 1 < k)
			row_step(a, s + GC_PK_MR, ind ? v + vrows[p + 1] : v + ldv, k0, k1, k2, mr,
				 nv, full);
		v += ind ? 0 : 2 * ldv;
		s += 2 * GC_PK_MR;
	}
}

/* An mr x (16 nv) tile: c rows [0, mr) and the columns cl lets through,
 * bringing pf's memory into cache meanwhile. */
AI void row_tile(const float *s, const float *v, int64_t ldv, int64_t k, float *c, int64_t ldc,
		 const gc_pk_epi *e, int64_t m0, int64_t n0, const pk_cols *cols, const pk_pf *pf,
		 const int mr, const int nv, const int wrap)
{
	/* a copy, so that the stores to c cannot change it: it stays in
	 * registers */
	const pk_cols copy = *cols, *cl = &copy;
	__m512 a[GC_PK_MR][3];
	__mmask16 k0 = cl->v[0], k1 = cl->v[1], k2 = cl->v[2];
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++)
		a[i][0] = a[i][1] = a[i][2] = _mm512_setzero_ps();
	if (pf->acc) {
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++)
#pragma GCC unroll 3
			for (int q = 0; q < nv; q++)
				a[i][q] = cols_load(c + i * ldc, cl, q, wrap);
	}
	/* the masks of a whole panel's tile let all of its nv vectors through */
	int full = k0 == 0xffff && (nv < 2 || k1 == 0xffff) && (nv < 3 || k2 == 0xffff);
	/* (wrapped, V is read in place: the plain-row steps never compiled in) */
	if ((wrap || pf->vrows) && full)
		row_steps(a, s, v, ldv, k, k0, k1, k2, pf, mr, nv, 1, 1);
	else if (wrap || pf->vrows)
		row_steps(a, s, v, ldv, k, k0, k1, k2, pf, mr, nv, 0, 1);
	else if (full)
		row_steps(a, s, v, ldv, k, k0, k1, k2, pf, mr, nv, 1, 0);
	else
		row_steps(a, s, v, ldv, k, k0, k1, k2, pf, mr, nv, 0, 0);
	if (pf->raw) {
#pragma GCC unroll 8
		for (int i = 0; i < mr; i++)
#pragma GCC unroll 3
			for (int q = 0; q < nv; q++)
				cols_store(c + i * ldc, cl, q, a[i][q], wrap);
		return;
	}
	/* the common activations with code of their own: what runs is then
	 * a short straight line, not 24 copies of every case */
	if (wrap)
		tile_store(a, c, ldc, e, m0, n0, cl, mr, nv, -1, 1);
	else if (e->act == GC_NN_ACT_NONE)
		tile_store(a, c, ldc, e, m0, n0, cl, mr, nv, GC_NN_ACT_NONE, 0);
	else if (e->act == GC_NN_ACT_CLAMP)
		tile_store(a, c, ldc, e, m0, n0, cl, mr, nv, GC_NN_ACT_CLAMP, 0);
	else
		tile_store(a, c, ldc, e, m0, n0, cl, mr, nv, -1, 0);
}

typedef void (*row_tile_fn)(const float *s, const float *v, int64_t ldv, int64_t k, float *c,
			    int64_t ldc, const gc_pk_epi *e, int64_t m0, int64_t n0,
			    const pk_cols *cl, const pk_pf *pf);

#define ROW_TILE(mr, nv)                                                                           \
	static GC_PK_TARGET void row_tile_##mr##_##nv(                                             \
	    const float *s, const float *v, int64_t ldv, int64_t k, float *c, int64_t ldc,         \
	    const gc_pk_epi *e, int64_t m0, int64_t n0, const pk_cols *cl, const pk_pf *pf)        \
	{                                                                                          \
		if (cl->gap)                                                                       \
			row_tile(s, v, ldv, k, c, ldc, e, m0, n0, cl, pf, mr, nv, 1);              \
		else                                                                               \
			row_tile(s, v, ldv, k, c, ldc, e, m0, n0, cl, pf, mr, nv, 0);              \
	}
#define ROW_TILES(nv)                                                                              \
	ROW_TILE(1, nv)                                                                            \
	ROW_TILE(2, nv)                                                                            \
	ROW_TILE(3, nv)                                                                            \
	ROW_TILE(4, nv)                                                                            \
	ROW_TILE(5, nv)                                                                            \
	ROW_TILE(6, nv)                                                                            \
	ROW_TILE(7, nv)                                                                            \
	ROW_TILE(8, nv)
ROW_TILES(1)
ROW_TILES(2)
ROW_TILES(3)

#define ROW_TABLE(nv)                                                                              \
	{                                                                                          \
		row_tile_1_##nv, row_tile_2_##nv, row_tile_3_##nv, row_tile_4_##nv,                \
		    row_tile_5_##nv, row_tile_6_##nv, row_tile_7_##nv, row_tile_8_##nv             \
	}
/* [nv - 1][mr - 1] */
static const row_tile_fn row_tiles[3][GC_PK_MR] = {ROW_TABLE(1), ROW_TABLE(2), ROW_TABLE(3)};

/* Row p of plain V (gc_pk_gemm.v_rows). */
static inline const float *v_row(const gc_pk_gemm *g, int64_t p)
{
	return g->v + (g->v_rows ? g->v_rows[p] : p * g->ldv);
}

/* Columns [n0, n0 + nr) of plain V as a k x 48 panel (columns past nr are
 * left as they are: the tiles mask them off). */
static GC_PK_TARGET void pack_panel(const gc_pk_gemm *g, int64_t n0, int64_t nr, float *dst)
{
	__mmask16 k0 = gc_lanes16(nr), k1 = gc_lanes16(nr - 16), k2 = gc_lanes16(nr - 32);
	if (!g->v_cols && g->v_a) {
		/* max(0, v): a NaN stays NaN, as the Relu it replaces gives */
		__m512 zero = _mm512_setzero_ps();
		for (int64_t p = 0; p < g->k; p++, dst += GC_PK_NR) {
			const float *src = v_row(g, p) + n0;
			__m512 a = _mm512_set1_ps(g->v_a[p]), b = _mm512_set1_ps(g->v_b[p]);
			__m512 v0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k0, src), a, b);
			__m512 v1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k1, src + 16), a, b);
			__m512 v2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(k2, src + 32), a, b);
			if (g->v_relu) {
				v0 = _mm512_max_ps(zero, v0);
				v1 = _mm512_max_ps(zero, v1);
				v2 = _mm512_max_ps(zero, v2);
			}
			_mm512_storeu_ps(dst, v0);
			_mm512_storeu_ps(dst + 16, v1);
			_mm512_storeu_ps(dst + 32, v2);
		}
		return;
	}
	if (!g->v_cols && g->v_ow) {
		/* the panel's columns by runs within one output row */
		for (int64_t j = 0, len; j < nr; j += len) {
			int64_t o = (n0 + j) % g->v_ow, off = (n0 + j) / g->v_ow * g->v_oh_ld + o;
			len = g->v_ow - o < nr - j ? g->v_ow - o : nr - j;
			for (int64_t p = 0; p < g->k; p++) {
				const float *src = v_row(g, p) + off;
				for (int64_t q = 0; q < len; q += 16) {
					__mmask16 m = gc_lanes16(len - q);
					_mm512_mask_storeu_ps(dst + p * GC_PK_NR + j + q, m,
							      _mm512_maskz_loadu_ps(m, src + q));
				}
			}
		}
		return;
	}
	if (!g->v_cols) {
		for (int64_t p = 0; p < g->k; p++, dst += GC_PK_NR) {
			const float *src = v_row(g, p) + n0;
			_mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(k0, src));
			_mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(k1, src + 16));
			_mm512_storeu_ps(dst + 32, _mm512_maskz_loadu_ps(k2, src + 32));
		}
		return;
	}
	const int32_t *cols = g->v_cols + n0;
	__m512i i0 = _mm512_maskz_loadu_epi32(k0, cols);
	__m512i i1 = _mm512_maskz_loadu_epi32(k1, cols + 16);
	__m512i i2 = _mm512_maskz_loadu_epi32(k2, cols + 32);
	for (int64_t p = 0; p < g->k; p++, dst += GC_PK_NR) {
		const float *src = v_row(g, p);
		_mm512_storeu_ps(dst,
				 _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k0, i0, src, 4));
		_mm512_storeu_ps(dst + 16,
				 _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k1, i1, src, 4));
		_mm512_storeu_ps(dst + 32,
				 _mm512_mask_i32gather_ps(_mm512_setzero_ps(), k2, i2, src, 4));
	}
}

/* Prefetching the next panel of packed V: only when a panel is this large
 * (smaller ones stay in cache from run to run), spread over this many row
 * tiles at most. */
#define PK_PF_MIN_BYTES (64 << 10)
#define PK_PF_TILES 8
/*
 * S's steps ahead that a tile's steps bring in, on the first panel of a
 * pass over a block of S of PK_PF_MIN_BYTES or more: S is then read from
 * memory (a 1x1 convolution's weights: read once a run, the model's other
 * weights streamed since), a line every two steps, and the hardware
 * prefetchers stop at each 4 KiB page; 128 steps of 8 rows is that page
 * ahead. inception_v3's 1x1s of k 1280 and 2048 at 8x8 (n 64: a step is
 * 24 FMAs) took 5.1 ms in the model at one thread, 3.7 with it (32 to 256
 * steps ahead within 5 % of it); single-node, S in cache, within the noise.
 * The panels after the first read the block from L2.
 */
#define PK_S_AHEAD (128 * GC_PK_MR)

void gc_pk_gemm_run(const gc_pk_gemm *g, int64_t p0, int64_t p1)
{
	gc_pk_gemm_run_slot(g, p0, p1, 0);
}

/* Rows of S a block of plain V's product takes at a time (all of them
 * when they fit): the column panels of V are gone over once per block and
 * K block of kc steps (panel_kc), so that the block of S (packed weights,
 * read from memory once a run) is read from L2 by every panel after the
 * first rather than from memory. Sized by the K block, not by all of k:
 * by k, a 2048 -> 512 1x1 at 28x28 went over its 6.4 MB input 8 times
 * (blocks of 64 rows) and took 11.5 ms, 4096 -> 512 16 times and 33 ms
 * (99 GFLOP/s). Not when V's panels are gathered (v_buf): gathering each
 * once costs more than S streamed in order; a panel copied with an input
 * affine (v_a) is copied again for each block, which costs less than S
 * from L3. */
#define PK_S_BLOCK_BYTES (512 << 10)

static int64_t s_block_rows(const gc_pk_gemm *g, int64_t kc)
{
	int64_t r = PK_S_BLOCK_BYTES / 4 / (kc > 0 ? kc : 1) / GC_PK_MR * GC_PK_MR;
	if (g->v_packed || (g->v_buf && !g->v_a) || r >= g->m)
		return g->m;
	return r < GC_PK_MR ? GC_PK_MR : r;
}

/* Plain V's panel (k rows of 192 bytes, ldv apart) is taken in equal
 * blocks of at most PK_KC rows when k is above it, so that the panel stays
 * in L2 beside the block of S (the sums go through c between blocks); not
 * packed or gathered panels (contiguous: the hardware prefetchers follow
 * them). Blocks of 128 rows (24 KiB, to stay in L1) had cost 3-8 % against
 * none at k 256-2048 (kernel-time, one thread, caches cold or hot: a
 * 2048 -> 512 1x1 at 32x32 20.9 ms against 19.6, 256 -> 64 at 56x56 0.917
 * against 0.898): the raw stores and loads of the sums between blocks cost
 * more than reading the rows from L2. Unblocked at k 4096 (768 KiB), a
 * 4096 -> 1024 at 32x32 took 107 ms against 91 in blocks of 512, 87 of
 * 1024. */
#define PK_KC 1024

int gc_pk_gemm_c_once(int64_t k)
{
	return k <= PK_KC;
}

static int64_t panel_kc(const gc_pk_gemm *g, int64_t ldv)
{
	if (ldv == GC_PK_NR || g->k <= PK_KC)
		return g->k;
	int64_t blocks = (g->k + PK_KC - 1) / PK_KC;
	return (g->k + blocks - 1) / blocks;
}

/* Where the columns of panel jp (its first n0 in c, nv of them) go in c. */
static void panel_cols(const gc_pk_gemm *g, int64_t jp, int64_t n0, int64_t nv, pk_cols *cl)
{
	int64_t ld = g->v_oh_ld, ow = g->v_ow;
	cl->gap = wrapped(g) ? ld - ow : 0;
	for (int q = 0; q < 3; q++) {
		cl->v[q] = cl->k[q] = gc_lanes16(nv - 16 * q);
		cl->kw[q] = 0;
		cl->off[q] = 16 * q;
	}
	for (int q = 0; cl->gap && q < 3; q++) {
		int64_t u = jp * GC_PK_NR + 16 * q, w = u % ld;
		cl->off[q] = u / ld * ow + w - n0;
		cl->k[q] &= gc_lanes16(ow - w);
		cl->kw[q] = cl->v[q] & (__mmask16)~gc_lanes16(ld - w);
	}
}

/* The row tiles [i_lo, i_hi) of column panel jp (V at v, ldv apart), each
 * bringing the next tile's output rows into L1 as it computes (the output
 * is written 8 rows of 192 bytes at a time, rows far apart: no hardware
 * prefetcher follows that); the last one those of (i_lo, jp_next) when
 * jp_next >= 0; over the one K block [kb, kb + kl) (gc_pk_gemm_run_slot's
 * blocks of panel_kc steps). lin, lin_tiles, lin_share: see run_panels. */
static void run_panel(const gc_pk_gemm *g, int64_t jp, int64_t jp_next, int64_t i_lo, int64_t i_hi,
		      int64_t kb, int64_t kl, const float *v, int64_t ldv, pk_pf *pf,
		      int64_t lin_tiles, int64_t lin_share)
{
	int64_t n0, nv, skip;
	panel_at(g, jp, &n0, &nv, &skip);
	pk_cols cl;
	panel_cols(g, jp, n0, nv, &cl);
	int nv_used = nv >= 48 ? 3 : (int)((nv + 15) / 16);
	const char *lin = pf->lin;
	int direct = direct_taps(g);
	pf->acc = kb > 0;
	pf->raw = kb + kl < g->k;
	pf->vrows = direct ? g->v_rows + kb : NULL;
	for (int64_t i0 = i_lo; i0 < i_hi; i0 += GC_PK_MR) {
		int64_t mr = g->m - i0 < GC_PK_MR ? g->m - i0 : GC_PK_MR;
		int64_t ti = (i0 - i_lo) / GC_PK_MR;
		pf->lin = lin && ti < lin_tiles ? lin + ti * lin_share + kb * pf->lin_step
						: NULL;
		int64_t ni = i0 + GC_PK_MR, nj = n0;
		if (ni >= i_hi) {
			ni = i_lo;
			if (jp_next >= 0)
				panel_at(g, jp_next, &nj, &skip, &skip);
		}
		pf->crow = NULL;
		if (ni < i_hi && (ni != i_lo || jp_next >= 0)) {
			pf->rows = (int)(g->m - ni < GC_PK_MR ? g->m - ni : GC_PK_MR);
			pf->crow = (char *)(g->c + ni * g->ldc + nj);
			pf->rrow = g->epi.r ? (const char *)(g->epi.r +
							     (g->m0 + ni) * g->epi.r_sm + nj)
					    : NULL;
			pf->every = kl / (pf->rows + 1) > 0 ? kl / (pf->rows + 1) : 1;
		}
		row_tiles[nv_used - 1][mr - 1](g->s + i0 * g->k + kb * GC_PK_MR,
					       direct ? v : v + kb * ldv,
					       ldv, kl, g->c + i0 * g->ldc + n0, g->ldc,
					       &g->epi, g->m0 + i0, n0, &cl, pf);
	}
}

/* The distance between the rows of V's panel as the tiles read it:
 * packed or copied to buf, a panel's width; else V's own rows. */
static int64_t panel_ldv(const gc_pk_gemm *g, const float *buf)
{
	return g->v_packed || buf ? GC_PK_NR : g->ldv;
}

/* Panels [p0, p1) of rows [ib, ie) of S over V's K steps [kb, kb + kl). */
static void run_panels(const gc_pk_gemm *g, int64_t p0, int64_t p1, int64_t ib, int64_t ie,
		       int64_t kb, int64_t kl, float *buf, pk_pf *pf)
{
	for (int64_t jp = p0; jp < p1; jp++) {
		int64_t n0, nv, voff;
		panel_at(g, jp, &n0, &nv, &voff);
		const float *v = g->v_packed ? g->v + jp * GC_PK_NR * g->k : g->v + voff;
		int64_t ldv = panel_ldv(g, buf);
		if (buf) {
			pack_panel(g, n0, nv < GC_PK_NR ? nv : GC_PK_NR, buf);
			v = buf;
		}
		/* Packed V streams from memory (weights are read once a run; a
		 * product of few rows is bound by that): the next panel is
		 * brought into L2 while this one is computed, a share of it
		 * during each of its first PK_PF_TILES row tiles (an LLM block
		 * ran 1.4-1.6x faster at one thread; issue 19). */
		pf->lin = NULL;
		int64_t lin_tiles = (g->m + GC_PK_MR - 1) / GC_PK_MR, lin_share = 0;
		if (g->v_packed && jp + 1 < p1 && g->k * GC_PK_NR * 4 >= PK_PF_MIN_BYTES) {
			lin_tiles = lin_tiles < PK_PF_TILES ? lin_tiles : PK_PF_TILES;
			lin_share = g->k * GC_PK_NR * 4 / lin_tiles;
			pf->lin_step = lin_share / g->k;
			pf->lin = (const char *)(g->v + (jp + 1) * GC_PK_NR * g->k);
		}
		/* Plain V: its next panel's rows (192 bytes each, ldv apart, in
		 * as many pages: no hardware prefetcher sees them) are brought
		 * in, one line of each row by each of the first 4 row tiles (a
		 * 1x1 convolution's input, issue 19) */
		if (!g->v_packed && !buf && !g->v_rows && jp + 1 < p1) {
			lin_tiles = 4;
			lin_share = 64;
			pf->lin_step = g->ldv * 4;
			pf->lin = (const char *)(v + GC_PK_NR);
		}
		pf->s_ahead = jp == p0 && (ie - ib) * kl * 4 >= PK_PF_MIN_BYTES ? PK_S_AHEAD : 0;
		run_panel(g, jp, jp + 1 < p1 ? jp + 1 : -1, ib, ie, kb, kl, v, ldv, pf, lin_tiles,
			  lin_share);
	}
}

void gc_pk_gemm_run_slot(const gc_pk_gemm *g, int64_t p0, int64_t p1, int slot)
{
	float *buf =
	    g->v_buf && !g->v_packed ? g->v_buf + slot * gc_pk_v_floats(g->k, GC_PK_NR) : NULL;
	/* plain V in K blocks: a block of S rows goes over the panels once per
	 * K block, the sums through c between them (pk_pf.acc and raw) */
	int64_t kc = panel_kc(g, panel_ldv(g, buf));
	int64_t mc = s_block_rows(g, kc);
	pk_pf pf = {.cld = g->ldc * 4, .rld = g->epi.r_sm * 4};
	for (int64_t ib = 0; ib < g->m; ib += mc) {
		int64_t ie = g->m - ib < mc ? g->m : ib + mc;
		for (int64_t kb = 0; kb < g->k; kb += kc)
			run_panels(g, p0, p1, ib, ie, kb, g->k - kb < kc ? g->k - kb : kc, buf, &pf);
	}
}

/*
 * gc_pk_gemm_par's split (a 1x1 convolution's row GEMM: conv.c): items are
 * (column panel, block of output channels), in guided parts (nn-split.h:
 * they shrink toward the end, so that the threads end together). The
 * channels are cut into blocks of whole 8-row tiles only where the column
 * panels are fewer than 2 a thread (a 7x7 output is a panel of 48 pixels
 * and one of 1: it ran on one thread): as many blocks as give every thread
 * ~2 items, each at least 4 tiles (each block reads, or gathers, its
 * panel of V again).
 *
 * With split_m, the items go block by block instead (bmajor), a block a
 * thread: each thread's home range (nn-par.c) is its block's every panel,
 * the rows a depthwise reader's home range takes too. Measured at two
 * threads on mobilenet_v2's 96 -> 576 1x1 at 14x14 then its depthwise
 * 3x3 (single-node models, one run after another): the 1x1 took 76 us
 * split by panels, 61 by rows; the whole model 3.2 -> 3.1 ms. Not for a
 * product larger than GC_PK_SPLIT_M_BYTES: its c leaves the writers' L2
 * before the reader comes (mobilenet_v2's 16 -> 96 at 112x112, 4.8 MB: 12 %
 * slower by rows, each thread reading all of V); nor where m < 2k, V then
 * as large as c (shufflenet_v2's 1x1s of m = k: the model 3 % slower).
 *
 * So too, without split_m, where the panels are fewer than 2 a thread and
 * S is PK_SPLIT_S_BYTES or more: S then comes from L3 or memory, and panel
 * by panel each thread read all of it, block by block its block once.
 * inception_v3's 2048 -> 192-448 and 1280 -> 320-448 1x1s at 8x8 took
 * 2.2-2.4 ms in all at two threads, 1.8-1.9 block by block (ONNX Runtime
 * 1.74-1.87); the model 1.5 % faster at two threads, densenet121 the same.
 */
#define PK_SPLIT_S_BYTES (512 << 10)
typedef struct gemm_job {
	const gc_pk_gemm *g;
	int64_t panels, blocks, brows;
	int threads;
	bool bmajor; /* items block by block, not panel by panel */
} gemm_job;

static void gemm_part(void *arg, int part, int parts, int slot)
{
	const gemm_job *j = arg;
	int64_t lo, hi;
	gc_nn_guided_range(j->panels * j->blocks, j->threads, 1, part, parts, &lo, &hi);
	if (j->blocks == 1) {
		gc_pk_gemm_run_slot(j->g, lo, hi, slot);
		return;
	}
	/* block by block, a block's run of panels in one call: its S is read
	 * from memory (and prefetched: PK_S_AHEAD) on the first panel only */
	for (int64_t np = 1; lo < hi; lo += np) {
		int64_t jp = j->bmajor ? lo % j->panels : lo / j->blocks;
		int64_t i0 = (j->bmajor ? lo / j->panels : lo % j->blocks) * j->brows;
		if (j->bmajor) /* the rest of the block's panels in the part */
			np = hi - lo < j->panels - jp ? hi - lo : j->panels - jp;
		gc_pk_gemm sub = *j->g;
		sub.m = j->g->m - i0 < j->brows ? j->g->m - i0 : j->brows;
		sub.s += i0 * sub.k; /* S is packed in panels of 8 rows */
		sub.c += i0 * sub.ldc;
		sub.m0 += i0;
		gc_pk_gemm_run_slot(&sub, jp, jp + np, slot);
	}
}

void gc_pk_gemm_par(const gc_pk_gemm *g, int threads)
{
	gemm_job j = {.g = g, .panels = gc_pk_gemm_panels(g), .blocks = 1};
	int t = gc_nn_par_threads(threads, gc_pk_gemm_cost(g->m, g->n, g->k));
	if (g->v_buf && t > GC_PK_GEMM_SLOTS)
		t = GC_PK_GEMM_SLOTS; /* a buffer each */
	int64_t tiles = (g->m + GC_PK_MR - 1) / GC_PK_MR;
	int64_t full = direct_taps(g) ? j.panels : g->n / GC_PK_NR;
	j.bmajor = t > 1 && tiles >= 4 * t &&
		   ((g->split_m && g->m >= 2 * g->k &&
		     (double)g->m * (double)g->n * sizeof(float) <= GC_PK_SPLIT_M_BYTES) ||
		    (full < 2 * t && (double)g->m * (double)g->k * sizeof(float) >= PK_SPLIT_S_BYTES));
	if (j.bmajor || (t > 1 && full < 2 * t)) {
		int64_t want = (2 * t + (full > 0 ? full : 1) - 1) / (full > 0 ? full : 1);
		int64_t most = tiles / 4 > 1 ? tiles / 4 : 1;
		j.blocks = j.bmajor ? t : want < most ? want : most;
		j.brows = (tiles + j.blocks - 1) / j.blocks * GC_PK_MR;
		j.blocks = (g->m + j.brows - 1) / j.brows;
	}
	j.threads = t;
	gc_nn_parallel(t, gc_nn_guided_parts(j.panels * j.blocks, t, 1), gemm_part, &j);
}

#else

int gc_pk_gemm_c_once(int64_t k)
{
	(void)k;
	return 0;
}

void gc_pk_gemm_par(const gc_pk_gemm *g, int threads)
{
	(void)g;
	(void)threads;
}

void gc_pk_gemm_run(const gc_pk_gemm *g, int64_t p0, int64_t p1)
{
	(void)g;
	(void)p0;
	(void)p1;
}

void gc_pk_gemm_run_slot(const gc_pk_gemm *g, int64_t p0, int64_t p1, int slot)
{
	(void)g;
	(void)p0;
	(void)p1;
	(void)slot;
}

#endif
