/* NumPy .npy files: format versions 1.0, 2.0 and 3.0, C order, little-endian
 * or single-byte types. */
#include <graphcc/runtime.h>

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fileio.h"

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
};

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

static int parse_header(const char *h, const char *what, gc_tensor *t, gc_error *err)
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
	t->dtype = GC_DTYPE_UNDEFINED;
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0]; i++)
		if (!strcmp(descrs[i].descr, descr))
			t->dtype = descrs[i].dtype;
	if (t->dtype == GC_DTYPE_UNDEFINED) {
		if (descr[0] == '>')
			return gc_error_set(err, GC_EUNSUPPORTED,
					    "%s: big-endian data ('%s') is not supported; save it "
					    "little-endian (arr.astype(arr.dtype.newbyteorder('<')))",
					    what, descr);
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: element type '%s' is not supported (numeric and bool types "
				    "are)",
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

int gc_npy_read_mem(const void *buf, size_t len, const char *what, gc_tensor *out, gc_error *err)
{
	memset(out, 0, sizeof *out);
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
	int rc = parse_header(h, what, &t, err);
	gc_free(h);
	if (rc)
		return rc;
	int64_t nb = gc_tensor_nbytes(&t);
	size_t have = len - start - hlen;
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

int gc_npy_read(const char *path, gc_tensor *out, gc_error *err)
{
	void *buf;
	size_t len;
	memset(out, 0, sizeof *out);
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	int rc = gc_npy_read_mem(buf, len, path, out, err);
	gc_free(buf);
	return rc;
}

int gc_npy_write(const char *path, const gc_tensor *t, gc_error *err)
{
	const char *descr = NULL;
	for (size_t i = 0; i < sizeof descrs / sizeof descrs[0] && !descr; i++)
		if (descrs[i].dtype == t->dtype)
			descr = descrs[i].descr;
	if (!descr)
		return gc_error_set(err, GC_EUNSUPPORTED, "%s: cannot write %s tensors as .npy", path,
				    gc_dtype_name(t->dtype));
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
	int64_t nb = gc_tensor_nbytes(t);
	if (nb < 0)
		return gc_error_set(err, GC_EINVAL, "%s: tensor has an invalid shape", path);
	return gc_write_file_atomic(path, head, padded, t->data, (size_t)nb, err);
}
