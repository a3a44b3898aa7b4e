/* .gcb write (lib/gcb-write.c) and read (runtime/gcb-read.c): a program
 * saved and loaded again runs to the same bytes and describes itself the
 * same way; damaged files are refused, never run. */
#include <graphcc/graphcc.h>

#include <unistd.h>

#include "check.h"

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

static void cleanup(void)
{
	const char *names[] = { "a.gcb", "b.gcb", "cut.gcb", "flip.gcb" };
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

TEST_MAIN(TEST(test_setup), TEST(test_roundtrip), TEST(test_damaged_files_refused))
