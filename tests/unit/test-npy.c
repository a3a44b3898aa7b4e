/* .npy reading and writing. */
#include <graphcc/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"

static size_t make_npy(unsigned char *buf, int major, const char *dict, const void *data,
		       size_t n)
{
	size_t hl = strlen(dict), pre = major == 1 ? 10 : 12;
	size_t total = pre + hl + 1, pad = (64 - total % 64) % 64;
	memcpy(buf, "\x93NUMPY", 6);
	buf[6] = (unsigned char)major;
	buf[7] = 0;
	size_t h = hl + pad + 1;
	buf[8] = (unsigned char)(h & 0xff);
	buf[9] = (unsigned char)(h >> 8);
	if (major != 1)
		buf[10] = buf[11] = 0;
	memcpy(buf + pre, dict, hl);
	memset(buf + pre + hl, ' ', pad);
	buf[pre + hl + pad] = '\n';
	memcpy(buf + pre + h, data, n);
	return pre + h + n;
}

static void test_read_v1_v2_v3(void)
{
	float v[6] = { 1, 2, 3, 4, 5, 6 };
	unsigned char buf[512];
	for (int major = 1; major <= 3; major++) {
		size_t n = make_npy(buf, major,
				    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v,
				    sizeof v);
		gc_tensor t;
		gc_error err = { 0 };
		CHECK_INT(gc_npy_read_mem(buf, n, "x.npy", &t, &err), 0);
		CHECK_INT(t.dtype, GC_DTYPE_FLOAT);
		CHECK_INT(t.rank, 2);
		CHECK_INT(t.dims[0], 2);
		CHECK_INT(t.dims[1], 3);
		CHECK_NEAR(((float *)t.data)[5], 6.0, 0);
		gc_tensor_release(&t);
	}
}

static void test_scalar_and_1d(void)
{
	int64_t v = 42;
	unsigned char buf[512];
	size_t n = make_npy(buf, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", &v,
			    8);
	gc_tensor t;
	gc_error err = { 0 };
	CHECK_INT(gc_npy_read_mem(buf, n, "s.npy", &t, &err), 0);
	CHECK_INT(t.rank, 0);
	CHECK_INT(*(int64_t *)t.data, 42);
	gc_tensor_release(&t);
	n = make_npy(buf, 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "\1", 1);
	CHECK_INT(gc_npy_read_mem(buf, n, "b.npy", &t, &err), 0);
	CHECK_INT(t.dtype, GC_DTYPE_BOOL);
	CHECK_INT(t.dims[0], 1);
	gc_tensor_release(&t);
}

static void test_refusals(void)
{
	float v[6] = { 0 };
	unsigned char buf[512];
	gc_tensor t;
	gc_error err = { 0 };
	size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", v,
			    sizeof v);
	CHECK(gc_npy_read_mem(buf, n, "f.npy", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "f.npy");
	CHECK_CONTAINS(err.msg, "Fortran");

	memset(&err, 0, sizeof err);
	n = make_npy(buf, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", v,
		     sizeof v);
	CHECK(gc_npy_read_mem(buf, n, "be.npy", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "big-endian");

	memset(&err, 0, sizeof err);
	n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v,
		     sizeof v);
	CHECK(gc_npy_read_mem(buf, n - 1, "short.npy", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "truncated");

	memset(&err, 0, sizeof err);
	CHECK(gc_npy_read_mem("hello world", 11, "txt.npy", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "not a .npy");

	/* dims whose product overflows */
	memset(&err, 0, sizeof err);
	n = make_npy(buf, 1,
		     "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, "
		     "4294967296), }",
		     v, sizeof v);
	CHECK(gc_npy_read_mem(buf, n, "huge.npy", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "too large");

	/* header length past the end */
	memset(&err, 0, sizeof err);
	n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v,
		     sizeof v);
	CHECK(gc_npy_read_mem(buf, 20, "cut.npy", &t, &err) != 0);
}

static void test_roundtrip(void)
{
	char path[] = "/tmp/gc-npy-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	double v[4] = { 1.5, -2, 3e300, 0 };
	gc_tensor t = { .data = v, .dims = { 4, 1 }, .rank = 2, .dtype = GC_DTYPE_DOUBLE };
	gc_error err = { 0 };
	CHECK_INT(gc_npy_write(path, &t, &err), 0);
	gc_tensor r;
	CHECK_INT(gc_npy_read(path, &r, &err), 0);
	unlink(path);
	CHECK_INT(r.dtype, GC_DTYPE_DOUBLE);
	CHECK_INT(r.rank, 2);
	CHECK_INT(r.dims[0], 4);
	CHECK(!memcmp(r.data, v, sizeof v));
	gc_tensor_release(&r);
}

TEST_MAIN(TEST(test_read_v1_v2_v3), TEST(test_scalar_and_1d), TEST(test_refusals),
	  TEST(test_roundtrip))
