/* NumPy .npy files: format versions 1.0, 2.0 and 3.0, C order, little-endian
 * or single-byte types. Strings: NumPy's fixed-width Unicode ('<U<n>': n
 * UTF-32 code units per element, NUL-padded) is read into and written from
 * graphcc's UTF-8 strings; byte strings ('|S<n>') are read as they are.
 * Object arrays ('|O') need pickle and are refused. */
#include <graphcc/runtime.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "api-check.h"
#include "fileio.h"
#include "utf8.h"

static const struct {
	const char *descr;
	gc_dtype dtype;
} descrs[] = {
	{ "<f4", GC_DTYPE_FLOAT },     { "<f8", GC_DTYPE_DOUBLE },   { "<f2", GC_DTYPE_FLOAT16 },
	{ "|i1", GC_DTYPE_INT8 },      { "|u1", GC_DTYPE_UINT8 },    { "<i2", GC_DTYPE_INT16 },
	{ "<u2", GC_DTYPE_UINT16 },    { "<i4", GC_DTYPE_INT32 },    { "<u4", GC_DTYPE_UINT32 },
	{ "<i8", GC_DTYPE_INT64 },     { "<u8", GC_DTYPE_UINT64 },   { "|b1", GC_DTYPE_BOOL },
	{ "<c8", GC_DTYPE_COMPLEX64 }, { "<c16", GC_DTYPE_COMPLEX128 },
	{ "<i1", GC_DTYPE_INT8 },      { "<u1", GC_DTYPE_UINT8 },    { "<b1", GC_DTYPE_BOOL },
	/* The types NumPy lacks, as ml_dtypes' np.save writes them: void items
	 * of the type's size holding the bits. These are the forms graphcc
	 * writes (the first entry of a type is its written form). A 2-byte
	 * void item is bfloat16 (the only such ONNX type); a 1-byte one is
	 * read as uint8 bits, which the caller retags as the model's float8
	 * or int4 type (graphcc run does: cli_read_value). */
	{ "<V2", GC_DTYPE_BFLOAT16 },  { "|V2", GC_DTYPE_BFLOAT16 },
	{ "|V1", GC_DTYPE_FLOAT8E4M3FN }, { "|V1", GC_DTYPE_FLOAT8E4M3FNUZ },
	{ "|V1", GC_DTYPE_FLOAT8E5M2 }, { "|V1", GC_DTYPE_FLOAT8E5M2FNUZ },
	{ "|V1", GC_DTYPE_UINT4 },     { "|V1", GC_DTYPE_INT4 },
	{ "|V1", GC_DTYPE_FLOAT4E2M1 },
	/* ml_dtypes' type names, which a header written with str(dtype) holds */
	{ "bfloat16", GC_DTYPE_BFLOAT16 }, { "float8_e4m3fn", GC_DTYPE_FLOAT8E4M3FN },
	{ "float8_e4m3fnuz", GC_DTYPE_FLOAT8E4M3FNUZ }, { "float8_e5m2", GC_DTYPE_FLOAT8E5M2 },
	{ "float8_e5m2fnuz", GC_DTYPE_FLOAT8E5M2FNUZ }, { "uint4", GC_DTYPE_UINT4 },
	{ "int4", GC_DTYPE_INT4 },     { "float4_e2m1fn", GC_DTYPE_FLOAT4E2M1 },
};

/* Reading: the void forms that several types share. */
static gc_dtype read_void(const char *descr)
{
	if (!strcmp(descr, "|V1") || !strcmp(descr, "<V1"))
		return GC_DTYPE_UINT8;
	return GC_DTYPE_UNDEFINED;
}

/* Finds 'key': in the header dict and returns what follows the colon. */
static const char *dict_value(const char *h, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof pat, "'%s'", key);
	const char *p = strstr(h, pat);
	if (!p) {
		snprintf(pat, sizeof pat, "\"%s\"", key);
		p = strstr(h, pat);
	}
	if (!p)
		return NULL;
	p += strlen(pat);
	while (isspace((unsigned char)*p))
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/* How elements are stored in the file. */
typedef enum { ELEM_RAW, ELEM_UTF32, ELEM_BYTES } elem_kind;
typedef struct elem_format {
	elem_kind kind;
	uint64_t item; /* bytes per element in the file */
} elem_format;

/* 'U<n>' / 'S<n>' after the byte-order character: n must be a plain
 * number whose byte size fits. */
static int string_descr(const char *descr, const char *what, elem_format *f, gc_error *err)
{
	const char *d = descr + 2;
	uint64_t n = 0;
	if (!*d)
		return gc_error_set(err, GC_EINVAL, "%s: element type '%s' has no width", what, descr);
	for (; *d; d++) {
		if (!isdigit((unsigned char)*d) || n > (UINT64_MAX - 9) / 40)
			return gc_error_set(err, GC_EINVAL,
					    "%s: element type '%s' has a malformed or huge width", what,
					    descr);
		n = n * 10 + (uint64_t)(*d - '0');
	}
	f->kind = descr[1] == 'U' ? ELEM_UTF32 : ELEM_BYTES;
	f->item = descr[1] == 'U' ? 4 * n : n;
	return 0;
}

static int parse_header(const char *h, const char *what, gc_tensor *t, elem_format *ef,
			gc_error *err)
{
	const char *d = dict_value(h, "descr");
	if (!d || (*d != '\'' && *d != '"'))
		return gc_error_set(err, GC_EINVAL, "%s: .npy header has no 'descr'", what);
	char q = *d++;
	const char *e = strchr(d, q);
	if (!e || e - d > 15)
		return gc_error_set(err, GC_EINVAL, "%s: .npy header has a malformed 'descr'", what);
	char descr[16];
	memcpy(descr, d, (size_t)(e - d));
	descr[e - d] = 0;
	t->dtype = read_void(descr);
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0] && !t->dtype; i++)
		if (!strcmp(descrs[i].descr, descr))
			t->dtype = descrs[i].dtype;
	ef->kind = ELEM_RAW;
	ef->item = gc_dtype_size(t->dtype);
	if ((descr[0] == '<' || descr[0] == '|') && descr[1] == 'U') {
		if (string_descr(descr, what, ef, err))
			return err->code;
		t->dtype = GC_DTYPE_STRING;
	} else if ((descr[0] == '|' || descr[0] == '<') && descr[1] == 'S') {
		if (string_descr(descr, what, ef, err))
			return err->code;
		t->dtype = GC_DTYPE_STRING;
	} else if (descr[1] == 'O') {
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: element type '%s' is a Python object array, which only "
				    "pickle can read (refused); save strings with a fixed-width "
				    "type: np.save(path, arr.astype(str))",
				    what, descr);
	}
	if (t->dtype == GC_DTYPE_UNDEFINED) {
		if (descr[0] == '>')
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: big-endian data ('%s') is not supported; save it "
					    "little-endian (arr.astype(arr.dtype.newbyteorder('<')))",
					    what, descr);
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: element type '%s' is not supported (numeric, bool and "
				    "string ('<U', '|S') types are)",
				    what, descr);
	}
	const char *f = dict_value(h, "fortran_order");
	if (!f)
		return gc_error_set(err, GC_EINVAL, "%s: .npy header has no 'fortran_order'", what);
	if (!strncmp(f, "True", 4))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: the array is stored in Fortran order; save it in C order "
				    "(np.ascontiguousarray)",
				    what);
	if (strncmp(f, "False", 5))
		return gc_error_set(err, GC_EINVAL, "%s: .npy header has a malformed 'fortran_order'",
				    what);
	const char *s = dict_value(h, "shape");
	if (!s || *s != '(')
		return gc_error_set(err, GC_EINVAL, "%s: .npy header has no 'shape'", what);
	s++;
	t->rank = 0;
	for (;;) {
		while (isspace((unsigned char)*s) || *s == ',')
			s++;
		if (*s == ')')
			break;
		if (!isdigit((unsigned char)*s))
			return gc_error_set(err, GC_EINVAL, "%s: .npy header has a malformed 'shape'",
					    what);
		if (t->rank == GC_MAX_RANK)
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: rank above graphcc's limit of %d", what, GC_MAX_RANK);
		char *end;
		unsigned long long v = strtoull(s, &end, 10);
		if (v > (unsigned long long)INT64_MAX)
			return gc_error_set(err, GC_EINVAL, "%s: dimension too large", what);
		t->dims[t->rank++] = (int64_t)v;
		s = end;
		while (*s == 'L')
			s++;
	}
	return 0;
}

/* One element of a '<U' array: n UTF-32LE code units, NUL-padded at the
 * end. Returns its UTF-8 form (gc_malloc'd) in *out. */
static int utf32_element(const unsigned char *p, uint64_t n, int64_t idx, const char *what,
			 char **out, gc_error *err)
{
	uint64_t used = n, bytes = 0;
	while (used > 0 && !(p[4 * (used - 1)] | p[4 * (used - 1) + 1] | p[4 * (used - 1) + 2] |
			     p[4 * (used - 1) + 3]))
		used--;
	for (uint64_t c = 0; c < used; c++) {
		const unsigned char *q = p + 4 * c;
		uint32_t cp = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
			      (uint32_t)q[3] << 24;
		if (cp == 0)
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: string element %" PRId64 " holds a NUL character "
					    "(at character %" PRIu64 ") inside its text, which graphcc "
					    "strings cannot hold",
					    what, idx, c);
		if (!gc_utf8_scalar(cp))
			return gc_error_set(err, GC_EINVAL,
					    "%s: string element %" PRId64 " holds 0x%" PRIX32
					    " at character %" PRIu64 ", which is not a Unicode code "
					    "point (a surrogate or above U+10FFFF)",
					    what, idx, cp, c);
		bytes += gc_utf8_len(cp);
	}
	char *s = gc_malloc((size_t)bytes + 1);
	if (!s)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", what);
	size_t at = 0;
	for (uint64_t c = 0; c < used; c++) {
		const unsigned char *q = p + 4 * c;
		at += gc_utf8_put((uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
					  (uint32_t)q[3] << 24,
				  s + at);
	}
	s[at] = 0;
	*out = s;
	return 0;
}

/* One element of a '|S' array: n bytes, NUL-padded at the end. */
static int bytes_element(const unsigned char *p, uint64_t n, int64_t idx, const char *what,
			 char **out, gc_error *err)
{
	uint64_t used = n;
	while (used > 0 && !p[used - 1])
		used--;
	if (memchr(p, 0, (size_t)used))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: string element %" PRId64 " holds a NUL byte inside its "
				    "text, which graphcc strings cannot hold",
				    what, idx);
	char *s = gc_malloc((size_t)used + 1);
	if (!s)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", what);
	memcpy(s, p, (size_t)used);
	s[used] = 0;
	*out = s;
	return 0;
}

static int read_strings(gc_tensor *t, const elem_format *f, const unsigned char *data,
			size_t have, const char *what, gc_tensor *out, gc_error *err)
{
	char s[160];
	int64_t n = gc_tensor_numel(t), nb = gc_tensor_nbytes(t);
	if (n < 0 || nb < 0 || (uint64_t)nb > gc_limit_bytes() ||
	    (f->item && (uint64_t)n > gc_limit_bytes() / f->item))
		return gc_error_set(err, GC_ELIMIT,
				    "%s: shape %s of %" PRIu64 "-byte strings is too large (limit "
				    "%" PRIu64 " bytes, " GC_LIMIT_SETTING ")",
				    what, gc_shape_str(t->dims, t->rank, s, sizeof s), f->item,
				    gc_limit_bytes());
	if ((uint64_t)n * f->item != have)
		return gc_error_set(err, GC_EINVAL,
				    "%s: shape %s of %" PRIu64 "-byte strings needs %" PRIu64
				    " bytes of data, the file has %zu (truncated or corrupted)",
				    what, gc_shape_str(t->dims, t->rank, s, sizeof s), f->item,
				    (uint64_t)n * f->item, have);
	if (gc_tensor_alloc(t, err))
		return gc_error_prefix(err, "%s", what);
	char **str = t->data;
	for (int64_t i = 0; i < n; i++) {
		const unsigned char *p = data + (uint64_t)i * f->item;
		int rc = f->kind == ELEM_UTF32
				 ? utf32_element(p, f->item / 4, i, what, &str[i], err)
				 : bytes_element(p, f->item, i, what, &str[i], err);
		if (rc) {
			gc_tensor_release(t);
			return rc;
		}
	}
	*out = *t;
	return 0;
}

int gc_npy_read_mem(const void *buf, size_t len, const char *what, gc_tensor *out, gc_error *err)
{
	GC_ARG_NONNULL(err, out);
	memset(out, 0, sizeof *out);
	GC_ARG_NONNULL(err, buf);
	if (!what)
		what = "buffer";
	const unsigned char *b = buf;
	if (len < 10 || memcmp(b, "\x93NUMPY", 6))
		return gc_error_set(err, GC_EINVAL, "%s: not a .npy file (bad magic)", what);
	unsigned major = b[6];
	size_t hlen, start;
	if (major == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		start = 10;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return gc_error_set(err, GC_EINVAL, "%s: truncated .npy header", what);
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		start = 12;
	} else {
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: .npy format version %u.%u is not supported (1.0-3.0 are)",
				    what, major, b[7]);
	}
	if (hlen > len - start)
		return gc_error_set(err, GC_EINVAL, "%s: truncated .npy header", what);
	char *h = gc_malloc(hlen + 1);
	if (!h)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", what);
	memcpy(h, b + start, hlen);
	h[hlen] = 0;
	gc_tensor t = { 0 };
	elem_format f;
	int rc = parse_header(h, what, &t, &f, err);
	gc_free(h);
	if (rc)
		return rc;
	size_t have = len - start - hlen;
	if (t.dtype == GC_DTYPE_STRING)
		return read_strings(&t, &f, b + start + hlen, have, what, out, err);
	int64_t nb = gc_tensor_nbytes(&t);
	if (nb < 0 || (uint64_t)nb > gc_limit_bytes()) {
		char s[160];
		return gc_error_set(err, GC_ELIMIT, "%s: shape %s is too large", what,
				    gc_shape_str(t.dims, t.rank, s, sizeof s));
	}
	if ((uint64_t)nb != have) {
		char s[160];
		return gc_error_set(err, GC_EINVAL,
				    "%s: shape %s of %s needs %" PRId64 " bytes of data, the file has "
				    "%zu (truncated or corrupted)",
				    what, gc_shape_str(t.dims, t.rank, s, sizeof s),
				    gc_dtype_name(t.dtype), nb, have);
	}
	if (gc_tensor_alloc(&t, err))
		return gc_error_prefix(err, "%s", what);
	memcpy(t.data, b + start + hlen, (size_t)nb);
	*out = t;
	return 0;
}

/* int4/uint4 items hold their value in a byte (ml_dtypes' layout), and
 * float4e2m1 items their code: a byte outside the type's range is an
 * error, not a value to wrap. */
static int check_4bit(const gc_tensor *t, const char *what, gc_error *err)
{
	if (t->dtype == GC_DTYPE_FLOAT4E2M1) {
		for (int64_t i = 0; i < gc_tensor_numel(t); i++)
			if (((const uint8_t *)t->data)[i] > 15)
				return gc_error_set(err, GC_EINVAL, "%s: element %" PRId64 " is byte %u, "
						    "not a float4e2m1 code (0..15)", what, i,
						    ((const uint8_t *)t->data)[i]);
		return 0;
	}
	if (t->dtype != GC_DTYPE_INT4 && t->dtype != GC_DTYPE_UINT4)
		return 0;
	int64_t n = gc_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		int v = t->dtype == GC_DTYPE_INT4 ? ((const int8_t *)t->data)[i]
						  : ((const uint8_t *)t->data)[i];
		if (v < (t->dtype == GC_DTYPE_INT4 ? -8 : 0) || v > (t->dtype == GC_DTYPE_INT4 ? 7 : 15))
			return gc_error_set(err, GC_EINVAL, "%s: element %" PRId64 " is %d, outside %s",
					    what, i, v, gc_dtype_name(t->dtype));
	}
	return 0;
}

int gc_npy_read(const char *path, gc_tensor *out, gc_error *err)
{
	void *buf;
	size_t len;
	GC_ARG_NONNULL(err, out);
	memset(out, 0, sizeof *out);
	GC_ARG_NONNULL(err, path);
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	int rc = gc_npy_read_mem(buf, len, path, out, err);
	gc_free(buf);
	if (!rc && (rc = check_4bit(out, path, err)))
		gc_tensor_release(out);
	return rc;
}

/* The widest string of t in code points; checks that every string is
 * UTF-8. */
static int string_width(const gc_tensor *t, const char *what, uint64_t *width, gc_error *err)
{
	int64_t n = gc_tensor_numel(t);
	uint64_t w = 0;
	for (int64_t i = 0; i < n; i++) {
		const char *str = ((char *const *)t->data)[i];
		size_t len = str ? strlen(str) : 0, bad = 0, cps = 0;
		if (!gc_utf8_valid(str, len, &bad, &cps))
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: string element %" PRId64 " is not valid UTF-8 (at "
					    "byte %zu); .npy holds Unicode text",
					    what, i, bad);
		if (cps > w)
			w = cps;
	}
	*width = w;
	return 0;
}

int gc_npy_check(const gc_tensor *t, const char *what, gc_error *err)
{
	GC_ARG_NONNULL(err, t);
	if (!what)
		what = "tensor";
	if (gc_tensor_check_shape(t, what, err))
		return err->code;
	if (gc_tensor_nbytes(t) < 0)
		return gc_error_set(err, GC_EINVAL, "%s: tensor has an invalid shape", what);
	if (t->dtype == GC_DTYPE_STRING) {
		uint64_t w;
		return string_width(t, what, &w, err);
	}
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
		if (descrs[i].dtype == t->dtype)
			return 0;
	return gc_error_set(err, GC_EUNSUPPORTED, "%s: cannot write %s tensors as .npy", what,
			    gc_dtype_name(t->dtype));
}

/* A string tensor as NumPy's '<U<width>' elements (at least 1 wide, as
 * NumPy makes them). */
static int encode_strings(const gc_tensor *t, const char *what, char *descr, size_t dlen,
			  void **body, size_t *body_len, gc_error *err)
{
	uint64_t w;
	if (string_width(t, what, &w, err))
		return err->code;
	if (w == 0)
		w = 1;
	int64_t n = gc_tensor_numel(t);
	if (w > gc_limit_bytes() / 4 || (uint64_t)n > gc_limit_bytes() / (4 * w))
		return gc_error_set(err, GC_ELIMIT,
				    "%s: %" PRId64 " strings of up to %" PRIu64 " characters are "
				    "too large for .npy (" GC_LIMIT_SETTING ")",
				    what, n, w);
	size_t bytes = (size_t)((uint64_t)n * 4 * w);
	unsigned char *out = gc_calloc(bytes ? bytes : 1, 1);
	if (!out)
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", what);
	for (int64_t i = 0; i < n; i++) {
		const char *str = ((char *const *)t->data)[i];
		size_t len = str ? strlen(str) : 0, at = 0;
		unsigned char *o = out + (uint64_t)i * 4 * w;
		uint32_t cp;
		while (gc_utf8_next((const unsigned char *)str, len, &at, &cp)) {
			o[0] = (unsigned char)cp;
			o[1] = (unsigned char)(cp >> 8);
			o[2] = (unsigned char)(cp >> 16);
			o[3] = 0;
			o += 4;
		}
	}
	snprintf(descr, dlen, "<U%" PRIu64, w);
	*body = out;
	*body_len = bytes;
	return 0;
}

int gc_npy_write(const char *path, const gc_tensor *t, gc_error *err)
{
	GC_ARG_NONNULL(err, path);
	if (gc_npy_check(t, path, err))
		return err->code;
	if (!t->data && gc_tensor_nbytes(t) > 0)
		return gc_error_set(err, GC_EINVAL, "%s: tensor without its data", path);
	const char *descr = NULL;
	char sdescr[32];
	void *body = t->data, *owned = NULL;
	size_t body_len = 0;
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0] && !descr; i++)
		if (descrs[i].dtype == t->dtype)
			descr = descrs[i].descr;
	if (t->dtype == GC_DTYPE_STRING) {
		if (encode_strings(t, path, sdescr, sizeof sdescr, &owned, &body_len, err))
			return err->code;
		descr = sdescr;
		body = owned;
	} else {
		body_len = (size_t)gc_tensor_nbytes(t);
	}
	char shape[GC_MAX_RANK * 24 + 8] = "(";
	size_t at = 1;
	for (int i = 0; i < t->rank; i++)
		at += (size_t)snprintf(shape + at, sizeof shape - at, "%" PRId64 ",%s", t->dims[i],
				       i + 1 < t->rank ? " " : "");
	if (t->rank > 1)
		shape[--at] = 0; /* (2, 3) but (2,) */
	snprintf(shape + at, sizeof shape - at, ")");
	char head[512];
	int n = snprintf(head + 10, sizeof head - 10,
			 "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
	size_t total = 10 + (size_t)n + 1;
	size_t padded = (total + 63) & ~(size_t)63;
	memset(head + 10 + n, ' ', padded - total);
	head[padded - 1] = '\n';
	memcpy(head, "\x93NUMPY\x01\x00", 8);
	head[8] = (char)((padded - 10) & 0xff);
	head[9] = (char)((padded - 10) >> 8);
	int rc = gc_write_file_atomic(path, head, padded, body, body_len, err);
	gc_free(owned);
	return rc;
}
