/*
 * String tensors: the string pool, UTF-8, .npy ('<U', '|S') and .pb strings,
 * the string kernels (StringNormalizer, Cast to and from strings) and the
 * session's handling of string memory (inputs copied, pool reset per run,
 * arena bytes shared with float tensors, folded constants owned by the
 * program). Expected texts of Cast come from NumPy's str() (pasted; the e2e
 * suite compares whole ranges with NumPy at test time); case mappings from
 * Python's str.upper/str.lower.
 */
#include <graphcc/graphcc.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "check.h"
#include "harness.h"
#include "onnx-tensor.h"
#include "program-impl.h"
#include "utf8.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})

/* ---- string pool -------------------------------------------------------- */

static void test_strpool(void)
{
	gc_strpool *sp = gc_strpool_new();
	CHECK(sp);
	char *keep[300];
	for (int i = 0; i < 300; i++) { /* ~30 KiB: several chunks */
		keep[i] = gc_strpool_alloc(sp, 100);
		CHECK(keep[i]);
		memset(keep[i], 'a' + i % 26, 99);
		keep[i][99] = 0;
	}
	char *big = gc_strpool_alloc(sp, 100000); /* larger than any chunk so far */
	CHECK(big);
	memset(big, 'z', 100000);
	for (int i = 0; i < 300; i++) /* nothing moved or was overwritten */
		CHECK(keep[i][0] == 'a' + i % 26 && keep[i][98] == 'a' + i % 26 && !keep[i][99]);
	CHECK_INT(gc_strpool_used(sp), 300 * 100 + 100000);
	size_t cap = gc_strpool_capacity(sp);
	/* A second run of the same size: the reset merges the chunks into one
	 * and the run allocates nothing. */
	gc_strpool_reset(sp);
	CHECK_INT(gc_strpool_used(sp), 0);
	CHECK_INT(gc_strpool_capacity(sp), cap);
	long long before = gc_alloc_count();
	for (int i = 0; i < 300; i++)
		CHECK(gc_strpool_alloc(sp, 100));
	CHECK(gc_strpool_alloc(sp, 100000));
	CHECK_INT(gc_alloc_count() - before, 0);
	CHECK_INT(gc_strpool_capacity(sp), cap);
	gc_strpool_free(sp);
	gc_strpool_free(NULL);
}

/* ---- UTF-8 -------------------------------------------------------------- */

static void test_utf8(void)
{
	static const char ok[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a é € 😀 */
	size_t bad = 99, n = 0, at = 0;
	CHECK(gc_utf8_valid(ok, strlen(ok), &bad, &n));
	CHECK_INT(n, 4);
	uint32_t cps[4], cp;
	for (int i = 0; i < 4; i++)
		CHECK(gc_utf8_next((const unsigned char *)ok, strlen(ok), &at, &cps[i]));
	CHECK_INT(cps[0], 'a');
	CHECK_INT(cps[1], 0xE9);
	CHECK_INT(cps[2], 0x20AC);
	CHECK_INT(cps[3], 0x1F600);
	char out[4];
	for (int i = 0; i < 4; i++)
		CHECK_INT(gc_utf8_put(cps[i], out), gc_utf8_len(cps[i]));
	CHECK(!memcmp(out, "\xf0\x9f\x98\x80", 4));
	static const struct {
		const char *s;
		size_t bad;
	} bads[] = {
	    {"ab\xff", 2},	     /* not a lead byte */
	    {"\x80", 0},	     /* lone continuation */
	    {"\xc0\xaf", 0},	     /* overlong '/' */
	    {"\xe0\x80\xaf", 0},     /* overlong, 3 bytes */
	    {"x\xed\xa0\x80", 1},    /* surrogate U+D800 */
	    {"\xf4\x90\x80\x80", 0}, /* above U+10FFFF */
	    {"\xe2\x82", 0},	     /* truncated */
	    {"\xc3\x28", 0},	     /* bad continuation */
	};
	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		CHECK(!gc_utf8_valid(bads[i].s, strlen(bads[i].s), &bad, NULL));
		CHECK_INT(bad, bads[i].bad);
	}
	at = 0;
	CHECK(!gc_utf8_next((const unsigned char *)"", 0, &at, &cp));
}

/* ---- .npy ----------------------------------------------------------------- */

static size_t make_npy(unsigned char *buf, const char *dict, const void *data, size_t n)
{
	size_t hl = strlen(dict), total = 10 + hl + 1, pad = (64 - total % 64) % 64;
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	size_t h = hl + pad + 1;
	buf[8] = (unsigned char)(h & 0xff);
	buf[9] = (unsigned char)(h >> 8);
	memcpy(buf + 10, dict, hl);
	memset(buf + 10 + hl, ' ', pad);
	buf[10 + hl + pad] = '\n';
	memcpy(buf + 10 + h, data, n);
	return 10 + h + n;
}

static void test_npy_unicode_read(void)
{
	/* ["a", "é€", "😀", ""] as NumPy saves it: '<U2', UTF-32LE, NUL-padded */
	static const uint32_t u[8] = {'a', 0, 0xE9, 0x20AC, 0x1F600, 0, 0, 0};
	unsigned char buf[512];
	size_t n = make_npy(buf, "{'descr': '<U2', 'fortran_order': False, 'shape': (2, 2), }", u,
			    sizeof u);
	gc_tensor t;
	gc_error err = {0};
	CHECK_INT(gc_npy_read_mem(buf, n, "u.npy", &t, &err), 0);
	CHECK_INT(t.dtype, GC_DTYPE_STRING);
	CHECK_INT(t.rank, 2);
	char **s = t.data;
	CHECK_STR(s[0], "a");
	CHECK_STR(s[1], "\xc3\xa9\xe2\x82\xac");
	CHECK_STR(s[2], "\xf0\x9f\x98\x80");
	CHECK_STR(s[3], "");
	gc_tensor_release(&t);
	/* bytes: '|S3' */
	static const char b[9] = {'a', 'b', 'c', 'x', 0, 0, 0, 0, 0};
	n = make_npy(buf, "{'descr': '|S3', 'fortran_order': False, 'shape': (3,), }", b, 9);
	CHECK_INT(gc_npy_read_mem(buf, n, "s.npy", &t, &err), 0);
	s = t.data;
	CHECK_STR(s[0], "abc");
	CHECK_STR(s[1], "x");
	CHECK_STR(s[2], "");
	gc_tensor_release(&t);
	/* zero-width strings */
	n = make_npy(buf, "{'descr': '<U0', 'fortran_order': False, 'shape': (2,), }", b, 0);
	CHECK_INT(gc_npy_read_mem(buf, n, "u0.npy", &t, &err), 0);
	CHECK_STR(((char **)t.data)[1], "");
	gc_tensor_release(&t);
}

static void npy_refused(const char *dict, const void *data, size_t len, const char *must)
{
	unsigned char buf[512];
	size_t n = make_npy(buf, dict, data, len);
	gc_tensor t;
	gc_error err = {0};
	CHECK(gc_npy_read_mem(buf, n, "bad.npy", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "bad.npy");
	CHECK_CONTAINS(err.msg, must);
	CHECK(t.data == NULL);
}

static void test_npy_unicode_refusals(void)
{
	static const uint32_t surrogate[2] = {'a', 0xDC00}, big[2] = {0x110000, 0},
			      nul[2] = {0, 'b'};
	static const char snul[4] = {'a', 0, 'b', 0};
	npy_refused("{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }", surrogate, 8,
		    "0xDC00");
	npy_refused("{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }", big, 8,
		    "0x110000");
	npy_refused("{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }", nul, 8, "NUL");
	npy_refused("{'descr': '|S4', 'fortran_order': False, 'shape': (1,), }", snul, 4, "NUL");
	npy_refused("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", snul, 4, "pickle");
	npy_refused("{'descr': '<U99999999999999999999', 'fortran_order': False, 'shape': (1,), }",
		    snul, 4, "descr");
	npy_refused("{'descr': '<U', 'fortran_order': False, 'shape': (1,), }", snul, 4, "width");
	npy_refused("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", big, 8,
		    "truncated");
	npy_refused("{'descr': '>U2', 'fortran_order': False, 'shape': (1,), }", big, 8,
		    "big-endian");
	npy_refused("{'descr': '<U9999999999999', 'fortran_order': False, 'shape': (4,), }", big, 8,
		    "too large");
}

static void test_npy_unicode_round_trip(void)
{
	char path[] = "/tmp/gc-strings-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	const char *v[6] = {"",
			    "plain",
			    "\xc3\x9f\xc3\xa9",
			    "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
			    "\xf0\x9f\x98\x80!",
			    NULL /* an unwritten slot: "" */};
	gc_tensor t = {.data = v, .dims = {3, 2}, .rank = 2, .dtype = GC_DTYPE_STRING};
	gc_error err = {0};
	CHECK_INT(gc_npy_check(&t, "output 'y'", &err), 0);
	CHECK_INT(gc_npy_write(path, &t, &err), 0);
	FILE *f = fopen(path, "rb");
	CHECK(f);
	char head[128] = {0};
	size_t got = fread(head, 1, sizeof head - 1, f);
	fclose(f);
	CHECK(got > 64);
	CHECK(strstr(head + 10, "'descr': '<U5'")); /* "plain": 5 code points, the longest */
	gc_tensor r;
	CHECK_INT(gc_npy_read(path, &r, &err), 0);
	unlink(path);
	CHECK_INT(r.dtype, GC_DTYPE_STRING);
	CHECK_INT(r.dims[0], 3);
	for (int i = 0; i < 6; i++)
		CHECK_STR(((char **)r.data)[i], v[i] ? v[i] : "");
	gc_tensor_release(&r);
	/* invalid UTF-8 cannot be written: the message names what */
	const char *bad[2] = {"ok", "\xff"};
	gc_tensor tb = {.data = bad, .dims = {2}, .rank = 1, .dtype = GC_DTYPE_STRING};
	memset(&err, 0, sizeof err);
	CHECK(gc_npy_check(&tb, "output 'y'", &err) != 0);
	CHECK_CONTAINS(err.msg, "output 'y'");
	CHECK_CONTAINS(err.msg, "element 1");
	CHECK_CONTAINS(err.msg, "UTF-8");
}

/* ---- .pb -------------------------------------------------------------- */

static void test_pb_strings(void)
{
	Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
	int64_t dims[1] = {3};
	ProtobufCBinaryData sd[3] = {{0, NULL},
				     {4, (uint8_t *)"\xc3\xa9t\xc3"}, /* bytes, kept as they are */
				     {5, (uint8_t *)"hello"}};
	tp.has_data_type = 1;
	tp.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
	tp.n_dims = 1;
	tp.dims = dims;
	tp.n_string_data = 3;
	tp.string_data = sd;
	gc_tensor t;
	gc_error err = {0};
	CHECK_INT(gc_onnx_tensor(&tp, NULL, "x.pb", &t, &err), 0);
	CHECK_INT(t.dtype, GC_DTYPE_STRING);
	CHECK_STR(((char **)t.data)[0], "");
	CHECK_STR(((char **)t.data)[1], "\xc3\xa9t\xc3");
	CHECK_STR(((char **)t.data)[2], "hello");
	gc_tensor_release(&t);
	/* a NUL inside a string */
	sd[2] = (ProtobufCBinaryData){3, (uint8_t *)"a\0b"};
	CHECK(gc_onnx_tensor(&tp, NULL, "x.pb", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "x.pb: string 2 holds a NUL byte (at byte 1)");
	/* fewer strings than the shape needs */
	dims[0] = 4;
	sd[2] = (ProtobufCBinaryData){1, (uint8_t *)"c"};
	memset(&err, 0, sizeof err);
	CHECK(gc_onnx_tensor(&tp, NULL, "x.pb", &t, &err) != 0);
	CHECK_CONTAINS(err.msg, "3 strings");
}

/* ---- StringNormalizer --------------------------------------------------- */

static int strnorm(harness_run *h, const char *const *x, int32_t rank, const int64_t *dims,
		   const char *action, int64_t sensitive, int n_stop, const char *const *stop,
		   const char *locale)
{
	gc_tensor t = harness_tensor(GC_DTYPE_STRING, rank, dims, x);
	gc_tensor *in[] = {&t};
	gc_attr at[4] = {
	    {.name = "case_change_action", .type = GC_ATTR_STRING, .v.s = action},
	    {.name = "is_case_sensitive", .type = GC_ATTR_INT, .v.i = sensitive},
	    {.name = "locale", .type = GC_ATTR_STRING, .v.s = locale ? locale : ""},
	    {.name = "stopwords", .type = GC_ATTR_STRINGS, .n = n_stop, .v.strings = stop},
	};
	return harness_op(h, gc_prepare_StringNormalizer, "StringNormalizer", 10, 1, in, 1,
			  n_stop ? 4 : 3, at);
}

static int strs_are(const gc_tensor *t, int n, const char *const *want)
{
	if (t->dtype != GC_DTYPE_STRING || gc_tensor_numel(t) != n)
		return 0;
	for (int i = 0; i < n; i++)
		if (strcmp(((char **)t->data)[i], want[i])) {
			fprintf(stderr, "  element %d: \"%s\", expected \"%s\"\n", i,
				((char **)t->data)[i], want[i]);
			return 0;
		}
	return 1;
}

static void test_strnorm(void)
{
	harness_run h;
	/* ONNX's case: monday, case-sensitive, UPPER */
	const char *days[4] = {"monday", "tuesday", "wednesday", "thursday"};
	const char *monday[1] = {"monday"};
	CHECK_INT(strnorm(&h, days, 1, D(4), "UPPER", 1, 1, monday, NULL), 0);
	CHECK(strs_are(&h.out[0], 3, (const char *[]){"TUESDAY", "WEDNESDAY", "THURSDAY"}));
	CHECK_INT(h.out[0].rank, 1);
	harness_free(&h);
	/* case-insensitive on [1, C], non-ASCII: Python's str.upper() of each
	 * character, ß (no one-character capital) unchanged */
	const char *x[6] = {"Monday",
			    "stra\xc3\x9f"
			    "e",
			    "\xc3\x89T\xc3\x89",
			    "\xc3\xa9t\xc3\xa9",
			    "\xd0\x9f\xd1\x80\xd0\xb8\xd0\xb2\xd0\xb5\xd1\x82",
			    "\xc3\xbf\xc4\xb1\xc5\xbf\xc2\xb5"};
	const char *stop[2] = {"MONDAY", "\xc3\xa9t\xc3\xa9"}; /* été */
	CHECK_INT(strnorm(&h, x, 2, D(1, 6), "UPPER", 0, 2, stop, "en_US.UTF-8"), 0);
	CHECK_INT(h.out[0].rank, 2);
	CHECK_INT(h.out[0].dims[0], 1);
	/* STRAßE, ПРИВЕТ, ŸISΜ (ÿ ı ſ µ) */
	CHECK(strs_are(&h.out[0], 3,
		       (const char *[]){"STRA\xc3\x9f"
					"E",
					"\xd0\x9f\xd0\xa0\xd0\x98\xd0\x92\xd0\x95\xd0\xa2",
					"\xc5\xb8IS\xce\x9c"}));
	harness_free(&h);
	/* LOWER: Greek with accents; Σ -> σ (no final-sigma rule); İ unchanged */
	const char *g[2] = {"\xce\x86\xce\xa3\xce\xa3\xce\x9f\xce\xa3", "\xc4\xb0I"};
	CHECK_INT(strnorm(&h, g, 1, D(2), "LOWER", 1, 0, NULL, NULL), 0);
	CHECK(strs_are(&h.out[0], 2,
		       (const char *[]){"\xce\xac\xcf\x83\xcf\x83\xce\xbf\xcf\x83", "\xc4\xb0i"}));
	harness_free(&h);
	/* NONE keeps the input's own strings (pointers, not copies) */
	CHECK_INT(strnorm(&h, days, 1, D(4), "NONE", 1, 1, monday, NULL), 0);
	CHECK(((char **)h.out[0].data)[0] == days[1]);
	harness_free(&h);
	/* everything removed: one "", [1] or [1, 1] */
	const char *two[2] = {"monday", "MONDAY"};
	CHECK_INT(strnorm(&h, two, 1, D(2), "UPPER", 0, 1, monday, NULL), 0);
	CHECK(strs_are(&h.out[0], 1, (const char *[]){""}));
	CHECK_INT(h.out[0].rank, 1);
	harness_free(&h);
	CHECK_INT(strnorm(&h, two, 2, D(1, 2), "NONE", 0, 1, monday, NULL), 0);
	CHECK(strs_are(&h.out[0], 1, (const char *[]){""}));
	CHECK_INT(h.out[0].rank, 2);
	CHECK_INT(h.out[0].dims[1], 1);
	harness_free(&h);
	/* refusals */
	CHECK_INT(strnorm(&h, days, 1, D(4), "TITLE", 1, 0, NULL, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'TITLE'");
	harness_free(&h);
	CHECK_INT(strnorm(&h, days, 1, D(4), "UPPER", 1, 0, NULL, "tr_TR"), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "tr_TR");
	harness_free(&h);
	CHECK_INT(strnorm(&h, days, 2, D(2, 2), "UPPER", 1, 0, NULL, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "[C] or [1, C]");
	harness_free(&h);
	const char *badtext[2] = {"ok", "\xc3("};
	CHECK_INT(strnorm(&h, badtext, 1, D(2), "UPPER", 1, 0, NULL, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "element 1 is not valid UTF-8");
	harness_free(&h);
	/* the case-sensitive NONE path compares bytes: any bytes pass */
	CHECK_INT(strnorm(&h, badtext, 1, D(2), "NONE", 1, 1, monday, NULL), 0);
	harness_free(&h);
	/* stopwords need the input's values when the program is built */
	gc_tensor unknown = harness_tensor(GC_DTYPE_STRING, 1, D(2), NULL);
	gc_tensor *in[] = {&unknown};
	gc_attr sw = {.name = "stopwords", .type = GC_ATTR_STRINGS, .n = 1, .v.strings = monday};
	CHECK_INT(
	    harness_op(&h, gc_prepare_StringNormalizer, "StringNormalizer", 10, 1, in, 1, 1, &sw),
	    GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "depends on the values of input 'X'");
	harness_free(&h);
	/* without stopwords they are not needed */
	gc_error e = {0};
	gc_node nd = {.name = "t", .domain = "", .op_type = "StringNormalizer", .opset = 10};
	gc_kctx k = {.err = &e, .node = &nd};
	gc_tensor o = {0};
	gc_tensor *op[] = {&o};
	CHECK_INT(gc_prepare_StringNormalizer(&k, &nd, in, op), 0);
	CHECK(o.dtype == GC_DTYPE_STRING && o.rank == 1 && o.dims[0] == 2);
	gc_free(nd.state);
}

/* ---- Cast ----------------------------------------------------------------- */

static int cast(harness_run *h, gc_dtype from, int64_t n, const void *x, gc_dtype to)
{
	gc_tensor t = harness_tensor(from, 1, D(n), x);
	gc_tensor *in[] = {&t};
	gc_attr a = {.name = "to", .type = GC_ATTR_INT, .v.i = to};
	return harness_op(h, gc_prepare_Cast, "Cast", 13, 1, in, 1, 1, &a);
}

static void test_cast_to_string(void)
{
	harness_run h;
	/* float32 as NumPy's str(np.float32(v)) prints them */
	static const float f[] = {0.9767611026763916f,
				  9.999999747378752e-05f,
				  9.989999671233818e-05f,
				  1.0000000272564224e+16f,
				  999999986991104.0f,
				  123456792.0f,
				  16777216.0f,
				  3.4028234663852886e+38f,
				  1.401298464324817e-45f,
				  1.1754943508222875e-38f,
				  0.10000000149011612f,
				  -2.5f,
				  65504.0f,
				  1.2379400392853803e+27f,
				  7.888609052210118e-31f,
				  -0.0f,
				  7.0f,
				  INFINITY,
				  -INFINITY,
				  NAN};
	static const char *const fs[] = {
	    "0.9767611",   "1e-04",	 "9.99e-05",	  "1e+16",	   "1000000000000000.0",
	    "123456790.0", "16777216.0", "3.4028235e+38", "1e-45",	   "1.1754944e-38",
	    "0.1",	   "-2.5",	 "65504.0",	  "1.2379401e+27", "7.888609e-31",
	    "-0.0",	   "7.0",	 "inf",		  "-inf",	   "nan"};
	CHECK_INT(cast(&h, GC_DTYPE_FLOAT, 20, f, GC_DTYPE_STRING), 0);
	CHECK(strs_are(&h.out[0], 20, fs));
	CHECK(!h.node.inplace_ok);
	harness_free(&h);
	static const double d[] = {0.1,
				   0.3333333333333333,
				   0.0001,
				   1e+16,
				   4.9406564584124654e-324,
				   1.7976931348623157e+308,
				   0x1p1000,
				   123456789.0,
				   -1e-07};
	static const char *const ds[] = {"0.1",
					 "0.3333333333333333",
					 "0.0001",
					 "1e+16",
					 "5e-324",
					 "1.7976931348623157e+308",
					 "1.0715086071862673e+301",
					 "123456789.0",
					 "-1e-07"};
	CHECK_INT(cast(&h, GC_DTYPE_DOUBLE, 9, d, GC_DTYPE_STRING), 0);
	CHECK(strs_are(&h.out[0], 9, ds));
	harness_free(&h);
	static const uint16_t hf[] = {0x2e66, 0x7bff, 0x0001, 0x3555, 0x068e, 0x6800};
	static const char *const hs[] = {"0.1", "65500.0", "6e-08", "0.3333", "0.0001", "2048.0"};
	CHECK_INT(cast(&h, GC_DTYPE_FLOAT16, 6, hf, GC_DTYPE_STRING), 0);
	CHECK(strs_are(&h.out[0], 6, hs));
	harness_free(&h);
	static const int64_t i64[] = {0, -1, INT64_MAX, INT64_MIN};
	CHECK_INT(cast(&h, GC_DTYPE_INT64, 4, i64, GC_DTYPE_STRING), 0);
	CHECK(strs_are(&h.out[0], 4,
		       (const char *[]){"0", "-1", "9223372036854775807", "-9223372036854775808"}));
	harness_free(&h);
	static const uint8_t b[] = {1, 0};
	CHECK_INT(cast(&h, GC_DTYPE_BOOL, 2, b, GC_DTYPE_STRING), 0);
	CHECK(strs_are(&h.out[0], 2, (const char *[]){"True", "False"}));
	harness_free(&h);
}

static void test_cast_from_string(void)
{
	harness_run h;
	const char *fx[] = {"0.47892547", "NaN", "INF", "+INF", "-INF", " 1e-5\n", "-0", "1e400"};
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 8, fx, GC_DTYPE_FLOAT), 0);
	const float *y = h.out[0].data;
	CHECK(y[0] == 0.47892547f && isnan(y[1]) && y[2] == INFINITY && y[3] == INFINITY &&
	      y[4] == -INFINITY && y[5] == 1e-5f && y[6] == 0 && signbit(y[6]) && y[7] == INFINITY);
	harness_free(&h);
	const char *ix[] = {"-128", " +127 ", "0"};
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 3, ix, GC_DTYPE_INT8), 0);
	CHECK(((int8_t *)h.out[0].data)[0] == -128 && ((int8_t *)h.out[0].data)[1] == 127);
	harness_free(&h);
	const char *bx[] = {"True", "false", "0", "0.5"};
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 4, bx, GC_DTYPE_BOOL), 0);
	CHECK(!memcmp(h.out[0].data, (uint8_t[]){1, 0, 0, 1}, 4));
	harness_free(&h);
	/* string -> string copies the pointers */
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 3, ix, GC_DTYPE_STRING), 0);
	CHECK(((char **)h.out[0].data)[2] == ix[2]);
	harness_free(&h);
	/* refusals name the element and the string */
	const char *bad[] = {"1", "one point five"};
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 2, bad, GC_DTYPE_DOUBLE), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "node 'test' (Cast): input element 1, \"one point five\", is "
				  "not a number");
	harness_free(&h);
	const char *range[] = {"-129"};
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 1, range, GC_DTYPE_INT8), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "\"-129\", is out of the range of int8");
	harness_free(&h);
	const char *neg[] = {"-1"};
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 1, neg, GC_DTYPE_UINT64), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "out of the range of uint64");
	harness_free(&h);
	const char *ctl[] = {"\x01\x02x"}; /* control bytes are not printed */
	CHECK_INT(cast(&h, GC_DTYPE_STRING, 1, ctl, GC_DTYPE_FLOAT), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "\"??x\"");
	harness_free(&h);
}

/* ---- sessions ----------------------------------------------------------- */

/* A graph from (op, input, output, attr) rows over named tensors. */
typedef struct {
	const char *op, *in, *out;
	int64_t to; /* Cast's 'to'; -1: StringNormalizer UPPER; 0: none */
} row;

static gc_graph *chain(const char *x, gc_dtype xt, int64_t n, const row *rows, int n_rows,
		       const char *const *outs, int n_outs)
{
	gc_graph *g = gc_graph_new("strings");
	gc_error err = {0};
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, x, xt, 1, D(n), NULL, &err);
	for (int i = 0; i < n_rows; i++) {
		const char *in2[2] = {rows[i].in, rows[i].in};
		gc_attr a = {.name = "to", .type = GC_ATTR_INT, .v.i = rows[i].to};
		if (rows[i].to < 0)
			a = (gc_attr){.name = "case_change_action",
				      .type = GC_ATTR_STRING,
				      .n = 5,
				      .v.s = "UPPER"};
		int n_in = !strcmp(rows[i].op, "Add") ? 2 : 1;
		gc_graph_add_node(g, "", "", rows[i].op, n_in, in2, 1, &rows[i].out,
				  rows[i].to ? 1 : 0, &a, &err);
	}
	for (int i = 0; i < n_outs; i++)
		gc_graph_add_output(g, outs[i], &err);
	if (err.code) {
		fprintf(stderr, "  %s\n", err.msg);
		gc_graph_free(g);
		return NULL;
	}
	return g;
}

static void test_session_string_input(void)
{
	const row rows[] = {{"StringNormalizer", "x", "u", -1}};
	const char *outs[] = {"u"};
	gc_graph *g = chain("x", GC_DTYPE_STRING, 3, rows, 1, outs, 1);
	CHECK(g);
	gc_program *p;
	gc_error err = {0};
	int rc = gc_compile(g, NULL, &p, &err);
	gc_graph_free(g);
	if (rc)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK_INT(rc, 0);
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	/* the session copies the strings: the caller's tensor may go */
	gc_tensor in = {.dims = {3}, .rank = 1, .dtype = GC_DTYPE_STRING};
	CHECK_INT(gc_tensor_alloc(&in, &err), 0);
	const char *v[3] = {"abc", "\xc3\xa9t\xc3\xa9", ""};
	for (int i = 0; i < 3; i++)
		((char **)in.data)[i] = gc_strdup(v[i]);
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	gc_tensor_release(&in);
	CHECK_INT(gc_session_run(s, &err), 0);
	const gc_tensor *u = gc_session_output(s, 0);
	CHECK(strs_are(u, 3, (const char *[]){"ABC", "\xc3\x89T\xc3\x89", ""}));
	/* Running again on the same input: the pool is reset and reused,
	 * nothing is allocated. */
	long long before = gc_alloc_count();
	for (int r = 0; r < 3; r++)
		CHECK_INT(gc_session_run(s, &err), 0);
	CHECK_INT(gc_alloc_count() - before, 0);
	CHECK(
	    strs_are(gc_session_output(s, 0), 3, (const char *[]){"ABC", "\xc3\x89T\xc3\x89", ""}));
	/* a new input replaces the session's copy */
	const char *w[3] = {"x", "y", NULL};
	gc_tensor in2 = {.data = w, .dims = {3}, .rank = 1, .dtype = GC_DTYPE_STRING};
	CHECK_INT(gc_session_set_input(s, 0, &in2, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(strs_are(gc_session_output(s, 0), 3, (const char *[]){"X", "Y", ""}));
	gc_session_free(s);
	gc_program_free(p);
}

/* Setting a string input again reuses the session's copy of the strings
 * (nothing allocated), also when the new strings are the session's own
 * output passing the old ones through, in another order. */
static void test_session_string_input_again(void)
{
	const row rows[] = {{"Identity", "x", "y", 0}};
	const char *outs[] = {"y"};
	gc_graph *g = chain("x", GC_DTYPE_STRING, 3, rows, 1, outs, 1);
	CHECK(g);
	gc_program *p;
	gc_error err = {0};
	gc_compile_options opt = {.no_optimize = 1};
	int rc = gc_compile(g, &opt, &p, &err);
	gc_graph_free(g);
	if (rc)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK_INT(rc, 0);
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	const char *v[3] = {"a", "bb", "ccc"};
	gc_tensor in = {.data = v, .dims = {3}, .rank = 1, .dtype = GC_DTYPE_STRING};
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	long long before = gc_alloc_count();
	for (int r = 0; r < 3; r++) {
		CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
		CHECK_INT(gc_session_run(s, &err), 0);
	}
	CHECK_INT(gc_alloc_count() - before, 0);
	CHECK(strs_are(gc_session_output(s, 0), 3, (const char *[]){"a", "bb", "ccc"}));
	/* the output's strings are the input's: handed back reversed */
	char *const *y = gc_session_output(s, 0)->data;
	char *back[3] = {y[2], y[1], y[0]};
	in.data = back;
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(strs_are(gc_session_output(s, 0), 3, (const char *[]){"ccc", "bb", "a"}));
	/* a tensor without its data is refused, not read */
	in.data = NULL;
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "input 'x': a string tensor without its data");
	gc_session_free(s);
	gc_program_free(p);
}

/* x -> string -> double -> Neg -> Add -> Sqrt -> string -> UPPER -> float:
 * a string tensor dies and float tensors take its arena bytes. */
static void test_arena_shared_with_floats(void)
{
	const row rows[] = {
	    {"Cast", "x", "s1", GC_DTYPE_STRING},
	    {"Cast", "s1", "d1", GC_DTYPE_DOUBLE},
	    {"Neg", "d1", "d2", 0},
	    {"Add", "d2", "d3", 0},
	    {"Sqrt", "d3", "d4", 0},
	    {"Cast", "d4", "s2", GC_DTYPE_STRING},
	    {"StringNormalizer", "s2", "s3", -1},
	    {"Cast", "s3", "y", GC_DTYPE_FLOAT},
	};
	const char *outs[] = {"y"};
	gc_graph *g = chain("x", GC_DTYPE_FLOAT, 4, rows, 8, outs, 1);
	CHECK(g);
	gc_program *p;
	gc_error err = {0};
	gc_compile_options opt = {.no_optimize = 1};
	int rc = gc_compile(g, &opt, &p, &err);
	gc_graph_free(g);
	if (rc)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK_INT(rc, 0);
	/* some string tensor shares arena bytes with some float tensor */
	int shared = 0;
	for (int32_t a = 0; a < p->n_tensors; a++)
		for (int32_t b = 0; b < p->n_tensors; b++) {
			const gc_ptensor *s = &p->tensors[a], *f = &p->tensors[b];
			if (s->storage != GC_STORAGE_ARENA || f->storage != GC_STORAGE_ARENA ||
			    s->t.dtype != GC_DTYPE_STRING || f->t.dtype == GC_DTYPE_STRING)
				continue;
			shared |=
			    s->offset < f->offset + f->nbytes && f->offset < s->offset + s->nbytes;
		}
	CHECK(shared);
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	float x[4] = {-0.5f, -12.5f, 2.0f, -0.0f};
	gc_tensor in = {.data = x, .dims = {4}, .rank = 1, .dtype = GC_DTYPE_FLOAT};
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	for (int r = 0; r < 3; r++) {
		CHECK_INT(gc_session_run(s, &err), 0);
		const float *y = gc_session_output(s, 0)->data;
		/* sqrt(-2x): decimals that read back exactly */
		CHECK(y[0] == 1.0f && y[1] == 5.0f && isnan(y[2]) && y[3] == 0.0f);
	}
	gc_session_free(s);
	gc_program_free(p);
}

/* StringNormalizer's output length was fixed from the values given when
 * compiling: other values that keep as many strings run, others fail. */
static void test_strnorm_values_fixed_at_compile(void)
{
	gc_graph *g = gc_graph_new("strnorm");
	gc_error err = {0};
	gc_graph_set_opset(g, "", 10, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_STRING, 1, D(3), NULL, &err);
	const char *stop[1] = {"the"};
	gc_attr sw = {.name = "stopwords", .type = GC_ATTR_STRINGS, .n = 1, .v.strings = stop};
	const char *in[1] = {"x"}, *out[1] = {"y"};
	gc_graph_add_node(g, "sn", "", "StringNormalizer", 1, in, 1, out, 1, &sw, &err);
	gc_graph_add_output(g, "y", &err);
	CHECK_INT(err.code, 0);
	const char *v[3] = {"the", "cat", "The"};
	gc_tensor val = {.data = v, .dims = {3}, .rank = 1, .dtype = GC_DTYPE_STRING};
	gc_input_value iv = {"x", &val};
	gc_compile_options opt = {.input_values = &iv, .n_input_values = 1};
	gc_program *p;
	CHECK_INT(gc_compile(g, &opt, &p, &err), 0);
	gc_graph_free(g);
	CHECK_INT(gc_program_output(p, 0, NULL)->dims[0], 1);
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	const char *same[3] = {"a", "THE", "the"};
	gc_tensor t = {.data = same, .dims = {3}, .rank = 1, .dtype = GC_DTYPE_STRING};
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(strs_are(gc_session_output(s, 0), 1, (const char *[]){"a"}));
	const char *other[3] = {"a", "b", "the"};
	t.data = other;
	CHECK_INT(gc_session_set_input(s, 0, &t, &err), 0);
	CHECK_INT(gc_session_run(s, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "node 'sn' (StringNormalizer): input 'X' keeps 2 strings");
	CHECK_CONTAINS(err.msg, "built for 1");
	gc_session_free(s);
	gc_program_free(p);
}

/* A string constant folded through StringNormalizer: the program keeps its
 * own copy of the result (the graph and the compiler's strings are gone). */
static void test_folded_strings_owned_by_program(void)
{
	gc_graph *g = gc_graph_new("folded");
	gc_error err = {0};
	gc_graph_set_opset(g, "", 13, &err);
	const char *cv[3] = {"one", "two", "3.5"};
	gc_tensor c = {.data = cv, .dims = {3}, .rank = 1, .dtype = GC_DTYPE_STRING};
	gc_graph_add_constant(g, "c", &c, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, D(1), NULL, &err);
	gc_attr up = {.name = "case_change_action", .type = GC_ATTR_STRING, .n = 5, .v.s = "UPPER"};
	const char *i1[1] = {"c"}, *o1[1] = {"u"};
	gc_graph_add_node(g, "up", "", "StringNormalizer", 1, i1, 1, o1, 1, &up, &err);
	int64_t start = 2, end = 3;
	gc_tensor ts = {.data = &start, .dims = {1}, .rank = 1, .dtype = GC_DTYPE_INT64};
	gc_tensor te = {.data = &end, .dims = {1}, .rank = 1, .dtype = GC_DTYPE_INT64};
	gc_graph_add_constant(g, "st", &ts, &err);
	gc_graph_add_constant(g, "en", &te, &err);
	const char *i2[3] = {"u", "st", "en"}, *o2[1] = {"last"};
	gc_graph_add_node(g, "sl", "", "Slice", 3, i2, 1, o2, 0, NULL, &err);
	gc_attr tof = {.name = "to", .type = GC_ATTR_INT, .v.i = GC_DTYPE_FLOAT};
	const char *i3[1] = {"last"}, *o3[1] = {"f"};
	gc_graph_add_node(g, "cast", "", "Cast", 1, i3, 1, o3, 1, &tof, &err);
	const char *i4[2] = {"x", "f"}, *o4[1] = {"y"};
	gc_graph_add_node(g, "add", "", "Add", 2, i4, 1, o4, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_graph_add_output(g, "u", &err);
	CHECK_INT(err.code, 0);
	gc_program *p;
	int rc = gc_compile(g, NULL, &p, &err);
	gc_graph_free(g);
	if (rc)
		fprintf(stderr, "  %s\n", err.msg);
	CHECK_INT(rc, 0);
	CHECK_INT(gc_program_num_nodes(p), 1); /* only the Add runs */
	gc_session *s;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	float x = 1;
	gc_tensor in = {.data = &x, .dims = {1}, .rank = 1, .dtype = GC_DTYPE_FLOAT};
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK(((float *)gc_session_output(s, 0)->data)[0] == 4.5f);
	CHECK(strs_are(gc_session_output(s, 1), 3, (const char *[]){"ONE", "TWO", "3.5"}));
	gc_session_free(s);
	gc_program_free(p);
}

TEST_MAIN(TEST(test_strpool), TEST(test_utf8), TEST(test_npy_unicode_read),
	  TEST(test_npy_unicode_refusals), TEST(test_npy_unicode_round_trip), TEST(test_pb_strings),
	  TEST(test_strnorm), TEST(test_cast_to_string), TEST(test_cast_from_string),
	  TEST(test_session_string_input), TEST(test_session_string_input_again),
	  TEST(test_arena_shared_with_floats),
	  TEST(test_strnorm_values_fixed_at_compile), TEST(test_folded_strings_owned_by_program))
