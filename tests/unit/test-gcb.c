/* .gcb write (lib/gcb-write.c) and read (runtime/gcb-read.c): a program
 * saved and loaded again runs to the same bytes and describes itself the
 * same way; damaged files are refused, never run. */
#include <graphcc/graphcc.h>

#include <unistd.h>

#include "check.h"
#include "kernel.h"
#include "kernels/sgemm-pack.h"
#include "program-impl.h"

/* y = relu(x) + c, x float 2x3, c a constant. */
static gc_program *program(void)
{
	gc_graph *g = gc_graph_new("gcb-unit");
	gc_error err = { 0 };
	int64_t d[2] = { 2, 3 };
	float cv[6] = { 0.5f, -1, 2, 0, 3, -4 };
	gc_tensor c = { .dtype = GC_DTYPE_FLOAT, .rank = 2, .dims = { 2, 3 }, .data = cv };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	gc_graph_add_constant(g, "c", &c, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "r" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	const char *a_in[] = { "r", "c" }, *a_out[] = { "y" };
	gc_graph_add_node(g, "add", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_program *p = NULL;
	if (err.code || gc_compile(g, NULL, &p, &err))
		fprintf(stderr, "program: %s\n", err.msg);
	gc_graph_free(g);
	return p;
}

static int run(const gc_program *p, float *y)
{
	gc_error err = { 0 };
	gc_session *s = NULL;
	float x[6] = { -1, 2, -3, 4, -5, 6 };
	gc_tensor in = { .data = x, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	int rc = gc_session_new(p, NULL, &s, &err) || gc_session_set_input(s, 0, &in, &err) ||
		 gc_session_run(s, &err);
	if (!rc)
		memcpy(y, gc_session_output(s, 0)->data, 6 * sizeof *y);
	else
		fprintf(stderr, "run: %s\n", err.msg);
	gc_session_free(s);
	return rc;
}

static char dir[64];

static const char *path_in(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

static void test_roundtrip(void)
{
	gc_program *p = program();
	CHECK(p);
	gc_error err = { 0 };
	char path[128];
	CHECK_INT(gc_program_save(p, path_in("a.gcb", path, sizeof path), &err), 0);
	CHECK(gc_is_program_file(path));
	gc_program *q = NULL;
	CHECK_INT(gc_program_load(path, NULL, &q, &err), 0);
	float y1[6], y2[6];
	CHECK_INT(run(p, y1), 0);
	CHECK_INT(run(q, y2), 0);
	CHECK(!memcmp(y1, y2, sizeof y1));
	const float want[6] = { 0.5f, 1, 2, 4, 3, 2 }; /* relu(x) + c */
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(y2[i], want[i], 0);
	CHECK_INT(gc_program_num_nodes(q), gc_program_num_nodes(p));
	CHECK_INT(gc_program_num_inputs(q), 1);
	const char *name;
	const gc_tensor *o = gc_program_output(q, 0, &name);
	CHECK_STR(name, "y");
	CHECK_INT(o->rank, 2);
	gc_program_origin og;
	gc_program_get_origin(q, &og);
	CHECK(og.format_version > 0);
	CHECK(og.file_bytes > 0);
	gc_program_free(q);
	gc_program_free(p);
}

static void test_damaged_files_refused(void)
{
	gc_program *p = program();
	CHECK(p);
	gc_error err = { 0 };
	char path[128], cut[128];
	CHECK_INT(gc_program_save(p, path_in("b.gcb", path, sizeof path), &err), 0);
	gc_program_free(p);
	FILE *f = fopen(path, "rb");
	CHECK(f);
	static unsigned char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	CHECK(n > 200 && n < sizeof buf);
	/* cut short at several places, and one byte of the metadata flipped */
	size_t cuts[] = { 0, 7, 100, n / 2, n - 1 };
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		FILE *w = fopen(path_in("cut.gcb", cut, sizeof cut), "wb");
		CHECK(w);
		fwrite(buf, 1, cuts[i], w);
		fclose(w);
		gc_program *q = NULL;
		err = (gc_error){ 0 };
		CHECK(gc_program_load(cut, NULL, &q, &err) != 0);
		CHECK(q == NULL);
		CHECK_CONTAINS(err.msg, "cut.gcb");
	}
	buf[128 + 5] ^= 0x5a; /* in META, just past the 128-byte header (runtime/gcb.h) */
	FILE *w = fopen(path_in("flip.gcb", cut, sizeof cut), "wb");
	CHECK(w);
	fwrite(buf, 1, n, w);
	fclose(w);
	gc_program *q = NULL;
	err = (gc_error){ 0 };
	CHECK(gc_program_load(cut, NULL, &q, &err) != 0);
	CHECK(q == NULL);
	CHECK_CONTAINS(err.msg, "flip.gcb");
}

/* Weights packed at compile time are stored packed (only packed, when
 * every reader packs them) and taken from the file at load; a loader on the
 * reference kernels rebuilds the plain values. Conv 3x3 (channel-vector
 * kernel, 40 channels: a padded panel), Conv 1x1 (row GEMM), MatMul (V). */
static float wval(int i)
{
	return (float)((i * 7919 + 13) % 201 - 100) / 100.0f;
}

static gc_program *packed_program(float *w1, float *w2, float *b)
{
	gc_graph *g = gc_graph_new("gcb-packed");
	gc_error err = { 0 };
	int64_t dx[4] = { 2, 8, 10, 10 }, da[2] = { 64, 40 };
	for (int i = 0; i < 40 * 8 * 9; i++)
		w1[i] = wval(i);
	for (int i = 0; i < 48 * 40; i++)
		w2[i] = wval(i + 5);
	for (int i = 0; i < 40 * 56; i++)
		b[i] = wval(i + 11);
	gc_tensor t1 = { .dtype = GC_DTYPE_FLOAT, .rank = 4, .dims = { 40, 8, 3, 3 }, .data = w1 };
	gc_tensor t2 = { .dtype = GC_DTYPE_FLOAT, .rank = 4, .dims = { 48, 40, 1, 1 }, .data = w2 };
	gc_tensor tb = { .dtype = GC_DTYPE_FLOAT, .rank = 2, .dims = { 40, 56 }, .data = b };
	int64_t pads[4] = { 1, 1, 1, 1 };
	gc_attr pa = { .name = "pads", .type = GC_ATTR_INTS, .n = 4, .v.ints = pads };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 4, dx, NULL, &err);
	gc_graph_add_input(g, "a", GC_DTYPE_FLOAT, 2, da, NULL, &err);
	gc_graph_add_constant(g, "w1", &t1, &err);
	gc_graph_add_constant(g, "w2", &t2, &err);
	gc_graph_add_constant(g, "b", &tb, &err);
	const char *c1_in[] = { "x", "w1" }, *c1_out[] = { "c1" };
	gc_graph_add_node(g, "conv3", "", "Conv", 2, c1_in, 1, c1_out, 1, &pa, &err);
	const char *c2_in[] = { "c1", "w2" }, *c2_out[] = { "c2" };
	gc_graph_add_node(g, "conv1", "", "Conv", 2, c2_in, 1, c2_out, 0, NULL, &err);
	const char *m_in[] = { "a", "b" }, *m_out[] = { "mm" };
	gc_graph_add_node(g, "mm", "", "MatMul", 2, m_in, 1, m_out, 0, NULL, &err);
	gc_graph_add_output(g, "c2", &err);
	gc_graph_add_output(g, "mm", &err);
	gc_program *p = NULL;
	if (err.code || gc_compile(g, NULL, &p, &err))
		fprintf(stderr, "packed_program: %s\n", err.msg);
	gc_graph_free(g);
	return p;
}

enum { NC2 = 2 * 48 * 100, NMM = 64 * 56 };

static int run_packed(const gc_program *p, float *c2, float *mm)
{
	static float x[2 * 8 * 100], a[64 * 40];
	for (int i = 0; i < 1600; i++)
		x[i] = wval(i + 3);
	for (int i = 0; i < 2560; i++)
		a[i] = wval(i + 17);
	gc_tensor tx = { .data = x, .dims = { 2, 8, 10, 10 }, .rank = 4, .dtype = GC_DTYPE_FLOAT };
	gc_tensor ta = { .data = a, .dims = { 64, 40 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	gc_error err = { 0 };
	gc_session *s = NULL;
	int rc = gc_session_new(p, NULL, &s, &err) || gc_session_set_input(s, 0, &tx, &err) ||
		 gc_session_set_input(s, 1, &ta, &err) || gc_session_run(s, &err);
	if (!rc) {
		memcpy(c2, gc_session_output(s, 0)->data, NC2 * sizeof *c2);
		memcpy(mm, gc_session_output(s, 1)->data, NMM * sizeof *mm);
	} else {
		fprintf(stderr, "run_packed: %s\n", err.msg);
	}
	gc_session_free(s);
	return rc;
}

/* Tensors of q held only packed, and whether their plain values match. */
static int packed_only_count(const gc_program *q, const float *const *plain, int *unpacked_ok)
{
	int n = 0;
	*unpacked_ok = 1;
	for (int32_t t = 0; t < q->n_tensors; t++) {
		const gc_ptensor *pt = &q->tensors[t];
		if (!pt->packed)
			continue;
		n++;
		const float *want = !strcmp(pt->name, "w1") ? plain[0]
				    : !strcmp(pt->name, "w2") ? plain[1]
							      : plain[2];
		if (pt->t.data && memcmp(pt->t.data, want, pt->nbytes))
			*unpacked_ok = 0;
	}
	return n;
}

static void test_packed_weights(void)
{
	static float w1[40 * 72], w2[48 * 40], b[40 * 56];
	static float c2p[NC2], mmp[NMM], c2q[NC2], mmq[NMM], c2r[NC2], mmr[NMM];
	const float *plain[3] = { w1, w2, b };
	gc_program *p = packed_program(w1, w2, b);
	CHECK(p);
	gc_error err = { 0 };
	char path[128];
	CHECK_INT(gc_program_save(p, path_in("packed.gcb", path, sizeof path), &err), 0);
	gc_program *q = NULL;
	CHECK_INT(gc_program_load(path, NULL, &q, &err), 0);
	int ok, want = gc_pk_usable() ? 3 : 0;
	CHECK_INT(packed_only_count(q, plain, &ok), want);
	for (int32_t i = 0; i < q->n_nodes; i++) /* taken from the file, not packed again */
		for (int32_t e = 0; e < q->nodes[i].n_packed; e++)
			CHECK(!q->nodes[i].packed[e].owned);
	CHECK_INT(run_packed(p, c2p, mmp), 0);
	CHECK_INT(run_packed(q, c2q, mmq), 0);
	CHECK(!memcmp(c2p, c2q, sizeof c2p));
	CHECK(!memcmp(mmp, mmq, sizeof mmp));
	/* the reference kernels want the plain weights: rebuilt exactly */
	gc_runtime_init(&(gc_init_options){ .reference_kernels = 1 }, NULL);
	gc_program *r = NULL;
	CHECK_INT(gc_program_load(path, NULL, &r, &err), 0);
	CHECK_INT(packed_only_count(r, plain, &ok), want);
	CHECK(ok);
	for (int32_t t = 0; t < r->n_tensors; t++)
		CHECK(!r->tensors[t].packed || r->tensors[t].t.data);
	CHECK_INT(run_packed(r, c2r, mmr), 0);
	gc_runtime_init(NULL, NULL);
	for (int i = 0; i < NC2; i++)
		CHECK_NEAR(c2r[i], c2p[i], 1e-4 * (1 + fabsf(c2p[i])));
	for (int i = 0; i < NMM; i++)
		CHECK_NEAR(mmr[i], mmp[i], 1e-4 * (1 + fabsf(mmp[i])));
	gc_program_free(r);
	gc_program_free(q);
	gc_program_free(p);
}

/* Every layout unpacks to what was packed; keys that do not match the
 * sizes, or that this build does not know, are refused. */
static void test_packed_layouts(void)
{
	enum { M = 37, K = 13, N = 50 };
	static float a[M * K], pk[64 * 64 * 2], back[M * K];
	for (int i = 0; i < M * K; i++)
		a[i] = wval(i);
	char key[64];
	uint64_t sb = (uint64_t)gc_pk_s_floats(M, K) * 4, nb = M * K * 4;
	gc_pk_pack_s(a, K, 1, M, K, pk);
	snprintf(key, sizeof key, "pk-s1 1 %d %d", M, K);
	CHECK_INT(gc_packed_unpack(key, pk, sb, back, nb), 0);
	CHECK(!memcmp(a, back, nb));
	CHECK(gc_packed_unpack(key, pk, sb - 4, back, nb) != 0);
	CHECK(gc_packed_unpack(key, pk, sb, back, nb + 4) != 0);
	/* V of a K x N operand, as rows and as its transpose */
	float *bk = a; /* K x N = 13 x 37 read as rows */
	uint64_t vb = (uint64_t)gc_pk_v_floats(K, M) * 4;
	gc_pk_pack_v(bk, M, 1, K, M, pk);
	snprintf(key, sizeof key, "pk-v1 %d %d %d 1", K, M, M);
	CHECK_INT(gc_packed_unpack(key, pk, vb, back, nb), 0);
	CHECK(!memcmp(a, back, nb));
	gc_pk_pack_v(bk, 1, K, K, M, pk);
	snprintf(key, sizeof key, "pk-v1 %d %d 1 %d", K, M, K);
	CHECK_INT(gc_packed_unpack(key, pk, vb, back, nb), 0);
	CHECK(!memcmp(a, back, nb));
	snprintf(key, sizeof key, "pk-v1 %d %d 2 %d", K, M, K); /* strides of no layout */
	CHECK(gc_packed_unpack(key, pk, vb, back, nb) != 0);
	/* the channel-vector conv's panels (37 channels: one of 32, one of 16) */
	uint64_t cb = (uint64_t)gc_pk_conv_floats(M, K) * 4;
	CHECK_INT(gc_pk_conv_floats(M, K), 48 * K);
	gc_pk_conv_pack(a, 1, M, K, 1, 1, pk);
	snprintf(key, sizeof key, "pk-cv1 1 %d %d", M, K);
	CHECK_INT(gc_packed_unpack(key, pk, cb, back, nb), 0);
	CHECK(!memcmp(a, back, nb));
	CHECK(gc_packed_unpack("pk-cv1 1 37 13 9", pk, cb, back, nb) != 0);
	/* by window row: K = 13 channels of one row of 1 tap is the same as
	 * ONNX's order; a window of K rows of 1 tap (one channel) too, read
	 * back through its own key; 13 does not split into 2 x 3 taps */
	snprintf(key, sizeof key, "pk-cv2 1 %d %d 1 1", M, K);
	CHECK_INT(gc_packed_unpack(key, pk, cb, back, nb), 0);
	CHECK(!memcmp(a, back, nb));
	gc_pk_conv_pack(a, 1, M, K, K, 1, pk);
	snprintf(key, sizeof key, "pk-cv2 1 %d %d %d 1", M, K, K);
	CHECK_INT(gc_packed_unpack(key, pk, cb, back, nb), 0);
	CHECK(!memcmp(a, back, nb));
	snprintf(key, sizeof key, "pk-cv2 1 %d %d 2 3", M, K);
	CHECK(gc_packed_unpack(key, pk, cb, back, nb) != 0);
	/* 2 channels of 2 rows of 3 taps (k 12): step 3 is channel 1's first
	 * tap of row 0 (ONNX index 6), step 6 channel 0's first of row 1 (3) */
	gc_pk_conv_pack(a, 1, M, 12, 2, 3, pk);
	CHECK(pk[3 * 32 + 5] == a[5 * 12 + 6] && pk[6 * 32 + 5] == a[5 * 12 + 3]);
	CHECK_INT(gc_packed_unpack("pk-cv2 1 37 12 2 3", pk, (uint64_t)gc_pk_conv_floats(M, 12) * 4,
				   back, (uint64_t)M * 12 * 4),
		  0);
	CHECK(!memcmp(a, back, (size_t)M * 12 * 4));
	snprintf(key, sizeof key, "pk-cv2 1 %d %d 0 1", M, K);
	CHECK(gc_packed_unpack(key, pk, cb, back, nb) != 0);
	CHECK(gc_packed_unpack("pk-zz 1 2 3", pk, cb, back, nb) != 0);
	CHECK(gc_packed_unpack("pk-s1 -1 37 13", pk, sb, back, nb) != 0);
	/* sizes from a hostile file: refused before any size is multiplied out
	 * (UBSan would see an overflow) or a panel count looped over */
	CHECK(gc_packed_unpack("pk-s1 1 1099511627776 1099511627776", pk, sb, back, nb) != 0);
	CHECK(gc_packed_unpack("pk-cv1 1 1099511627776 1", pk, cb, back, nb) != 0);
	CHECK(gc_packed_unpack("pk-v1 1099511627776 2 2 1", pk, vb, back, nb) != 0);
}

static void cleanup(void)
{
	const char *names[] = { "a.gcb", "b.gcb", "cut.gcb", "flip.gcb", "packed.gcb" };
	char p[128];
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		unlink(path_in(names[i], p, sizeof p));
	rmdir(dir);
}

static void test_setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/graphcc-test-gcb-XXXXXX");
	CHECK(mkdtemp(dir));
	atexit(cleanup);
}

TEST_MAIN(TEST(test_setup), TEST(test_roundtrip), TEST(test_damaged_files_refused),
	  TEST(test_packed_weights), TEST(test_packed_layouts))
