#include "onnx-tensor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/build.h"

/* Reads `length` bytes at `offset` of the file `location` (relative to
 * base_dir, and not allowed to leave it) into dst; or, with map_pool, maps
 * them there when they are big and aligned (*dst set to them). */
static int read_external(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
			 gc_tensor *out, uint64_t nbytes, gc_pool *map_pool, bool *mapped,
			 gc_error *err)
{
	const char *location = NULL;
	uint64_t offset = 0, length = UINT64_MAX;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];
		if (!e->key || !e->value)
			continue;
		char *end;
		if (!strcmp(e->key, "location")) {
			location = e->value;
		} else if (!strcmp(e->key, "offset") || !strcmp(e->key, "length")) {
			errno = 0;
			unsigned long long v = strtoull(e->value, &end, 10);
			if (errno || *end || e->value[0] == '-' || !e->value[0])
				return gc_error_set(err, GC_EINVAL,
						    "%s: external data %s '%s' is not a number",
						    where, e->key, e->value);
			if (e->key[0] == 'o')
				offset = v;
			else
				length = v;
		}
	}
	if (!location || !location[0])
		return gc_error_set(err, GC_EINVAL, "%s: external data has no location", where);
	if (!base_dir)
		return gc_error_set(err, GC_EINVAL,
				    "%s: external data is not allowed here (location '%s')", where,
				    location);
	if (location[0] == '/')
		return gc_error_set(err, GC_EINVAL,
				    "%s: external data location '%s' is an absolute path; it must "
				    "be relative to the model's folder",
				    where, location);
	if (length != UINT64_MAX && length != nbytes)
		return gc_error_set(err, GC_EINVAL,
				    "%s: external data length %" PRIu64 " does not match the %" PRIu64
				    " bytes its shape needs",
				    where, length, nbytes);
	char path[PATH_MAX], real_base[PATH_MAX], real_path[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", base_dir, location) >= (int)sizeof path)
		return gc_error_set(err, GC_EINVAL, "%s: external data path too long", where);
	if (!realpath(base_dir, real_base))
		return gc_error_set(err, GC_EIO, "%s: cannot resolve folder '%s': %s", where,
				    base_dir, strerror(errno));
	if (!realpath(path, real_path))
		return gc_error_set(err, GC_EIO, "%s: external data file '%s': %s", where, path,
				    strerror(errno));
	size_t bl = strlen(real_base);
	if (strncmp(real_path, real_base, bl) || (real_path[bl] != '/' && bl > 1))
		return gc_error_set(err, GC_EINVAL,
				    "%s: external data location '%s' leaves the model's folder %s",
				    where, location, real_base);
	int fd;
	uint64_t size;
	if (gc_open_regular(real_path, &fd, &size, err))
		return gc_error_prefix(err, "%s: external data", where);
	if (size < offset || size - offset < nbytes) {
		close(fd);
		return gc_error_set(err, GC_EINVAL,
				    "%s: external data file '%s' is too short for %" PRIu64
				    " bytes at offset %" PRIu64,
				    where, path, nbytes, offset);
	}
	if (map_pool && nbytes >= GC_ONNX_MAP_MIN && offset % 64 == 0 && nbytes <= SIZE_MAX) {
		void *m = gc_pool_map(map_pool, fd, offset, (size_t)nbytes);
		int e = errno;
		close(fd);
		if (!m)
			return gc_error_set(err, GC_EIO, "%s: external data file '%s': cannot map %" PRIu64
				" bytes at offset %" PRIu64 ": %s", where, path, nbytes, offset, strerror(e));
		out->data = m;
		*mapped = true;
		return 0;
	}
	if (gc_tensor_alloc(out, err)) {
		close(fd);
		return gc_error_prefix(err, "%s", where);
	}
	int rc = gc_read_fd_at(fd, out->data, (size_t)nbytes, offset, path, err);
	close(fd);
	if (rc)
		gc_tensor_release(out);
	return rc ? gc_error_prefix(err, "%s: external data", where) : 0;
}

/* The typed field holding the values for a dtype, and its element count. */
static int typed_count(const Onnx__TensorProto *tp, gc_dtype dt, size_t *count)
{
	switch (dt) {
	case GC_DTYPE_FLOAT:
	case GC_DTYPE_COMPLEX64:
		*count = tp->n_float_data;
		return 0;
	case GC_DTYPE_INT32:
	case GC_DTYPE_INT16:
	case GC_DTYPE_INT8:
	case GC_DTYPE_UINT16:
	case GC_DTYPE_UINT8:
	case GC_DTYPE_BOOL:
	case GC_DTYPE_FLOAT16:
	case GC_DTYPE_BFLOAT16:
	case GC_DTYPE_FLOAT8E4M3FN:
	case GC_DTYPE_FLOAT8E4M3FNUZ:
	case GC_DTYPE_FLOAT8E5M2:
	case GC_DTYPE_FLOAT8E5M2FNUZ:
	case GC_DTYPE_UINT4: /* (two per int32, packed as in raw_data) */
	case GC_DTYPE_INT4:
	case GC_DTYPE_FLOAT4E2M1:
		*count = tp->n_int32_data;
		return 0;
	case GC_DTYPE_INT64:
		*count = tp->n_int64_data;
		return 0;
	case GC_DTYPE_STRING:
		*count = tp->n_string_data;
		return 0;
	case GC_DTYPE_DOUBLE:
	case GC_DTYPE_COMPLEX128:
		*count = tp->n_double_data;
		return 0;
	case GC_DTYPE_UINT32:
	case GC_DTYPE_UINT64:
		*count = tp->n_uint64_data;
		return 0;
	default:
		return -1;
	}
}

static void copy_typed(const Onnx__TensorProto *tp, gc_dtype dt, void *dst, size_t n)
{
	if (n == 0) /* the typed arrays are NULL then; memcpy must not see them */
		return;
	switch (dt) {
	case GC_DTYPE_FLOAT:
	case GC_DTYPE_COMPLEX64:
		memcpy(dst, tp->float_data, n * sizeof(float));
		break;
	case GC_DTYPE_DOUBLE:
	case GC_DTYPE_COMPLEX128:
		memcpy(dst, tp->double_data, n * sizeof(double));
		break;
	case GC_DTYPE_INT64:
		memcpy(dst, tp->int64_data, n * sizeof(int64_t));
		break;
	case GC_DTYPE_INT32:
		memcpy(dst, tp->int32_data, n * sizeof(int32_t));
		break;
	case GC_DTYPE_INT16:
		for (size_t i = 0; i < n; i++)
			((int16_t *)dst)[i] = (int16_t)tp->int32_data[i];
		break;
	case GC_DTYPE_INT8:
		for (size_t i = 0; i < n; i++)
			((int8_t *)dst)[i] = (int8_t)tp->int32_data[i];
		break;
	case GC_DTYPE_UINT16:
	case GC_DTYPE_FLOAT16:
	case GC_DTYPE_BFLOAT16:
		for (size_t i = 0; i < n; i++)
			((uint16_t *)dst)[i] = (uint16_t)tp->int32_data[i];
		break;
	case GC_DTYPE_UINT8:
	case GC_DTYPE_FLOAT8E4M3FN:
	case GC_DTYPE_FLOAT8E4M3FNUZ:
	case GC_DTYPE_FLOAT8E5M2:
	case GC_DTYPE_FLOAT8E5M2FNUZ:
	case GC_DTYPE_UINT4: /* the packed bytes: gc_onnx_unpack4 spreads them */
	case GC_DTYPE_INT4:
	case GC_DTYPE_FLOAT4E2M1:
		for (size_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
		break;
	case GC_DTYPE_BOOL:
		for (size_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = tp->int32_data[i] != 0;
		break;
	case GC_DTYPE_UINT32:
		for (size_t i = 0; i < n; i++)
			((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
		break;
	case GC_DTYPE_UINT64:
		memcpy(dst, tp->uint64_data, n * sizeof(uint64_t));
		break;
	default:
		break;
	}
}

const char *gc_onnx_type_text(int32_t code, char *buf, size_t len)
{
	/* TensorProto.DataType values past graphcc's element types */
	static const char *const names[] = {
		[17] = "float8e4m3fn", [18] = "float8e4m3fnuz", [19] = "float8e5m2",
		[20] = "float8e5m2fnuz", [21] = "uint4", [22] = "int4", [23] = "float4e2m1",
		[24] = "float8e8m0", [25] = "uint2", [26] = "int2",
	};
	if (code >= 0 && code < (int32_t)(sizeof names / sizeof names[0]) && names[code])
		snprintf(buf, len, "element type %s (%d), which graphcc does not support",
			 names[code], (int)code);
	else
		snprintf(buf, len, "unknown element type %d", (int)code);
	return buf;
}

static bool is_4bit(gc_dtype dt)
{
	return dt == GC_DTYPE_INT4 || dt == GC_DTYPE_UINT4 || dt == GC_DTYPE_FLOAT4E2M1;
}

void gc_onnx_unpack4(gc_dtype dt, uint8_t *data, int64_t n)
{
	/* back to front, so that the packed bytes at the start are read before
	 * they are overwritten */
	for (int64_t i = n - 1; i >= 0; i--) {
		uint8_t v = (uint8_t)((data[i / 2] >> (4 * (i & 1))) & 0xf);
		data[i] = dt == GC_DTYPE_INT4 && v >= 8 ? (uint8_t)(v | 0xf0) : v;
	}
}

void gc_onnx_pack4(const uint8_t *elems, int64_t n, uint8_t *packed)
{
	for (int64_t i = 0; i < n; i += 2)
		packed[i / 2] = (uint8_t)((elems[i] & 0xf) | (i + 1 < n ? (elems[i + 1] & 0xf) << 4 : 0));
}

int gc_onnx_tensor(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
		   gc_tensor *out, gc_error *err)
{
	bool mapped;
	return gc_onnx_tensor_mapped(tp, base_dir, where, NULL, out, &mapped, err);
}

int gc_onnx_tensor_mapped(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
			  gc_pool *map_pool, gc_tensor *out, bool *mapped, gc_error *err)
{
	memset(out, 0, sizeof *out);
	*mapped = false;
	char tb[96];
	if (!tp->has_data_type || tp->data_type <= 0 || tp->data_type >= GC_DTYPE_COUNT)
		return gc_error_set(err, GC_EUNSUPPORTED, "%s: %s", where,
				    gc_onnx_type_text(tp->data_type, tb, sizeof tb));
	gc_dtype dt = (gc_dtype)tp->data_type;
	if (tp->n_dims > GC_MAX_RANK)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "%s: rank %zu is above graphcc's limit of %d", where, tp->n_dims,
				    GC_MAX_RANK);
	if (tp->segment)
		return gc_error_set(err, GC_EUNSUPPORTED, "%s: segmented tensors are not supported",
				    where);
	out->dtype = dt;
	out->rank = (int32_t)tp->n_dims;
	for (size_t i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0)
			return gc_error_set(err, GC_EINVAL, "%s: dimension %zu is negative (%" PRId64
							    ")",
					    where, i, tp->dims[i]);
		out->dims[i] = tp->dims[i];
	}
	int64_t numel = gc_tensor_numel(out), nbytes = gc_tensor_nbytes(out);
	if (numel < 0 || nbytes < 0 || (uint64_t)nbytes > gc_limit_bytes())
		return gc_error_set(err, GC_ELIMIT,
				    "%s: shape %s of %s is too large (limit %" PRIu64
				    " bytes, " GC_LIMIT_SETTING ")",
				    where, gc_shape_str(out->dims, out->rank, (char[160]){ 0 }, 160),
				    gc_dtype_name(dt), gc_limit_bytes());
	bool external = tp->has_data_location &&
			tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	size_t have = 0;
	typed_count(tp, dt, &have);
	size_t want = (size_t)numel * (dt == GC_DTYPE_COMPLEX64 || dt == GC_DTYPE_COMPLEX128 ? 2 : 1);
	/* int4/uint4: two elements per byte in the file, one per byte here */
	int64_t file_bytes = is_4bit(dt) ? (numel + 1) / 2 : nbytes;
	if (is_4bit(dt))
		want = (size_t)file_bytes;

	if (dt == GC_DTYPE_STRING) {
		if (external || tp->has_raw_data)
			return gc_error_set(err, GC_EINVAL,
					    "%s: string tensors must use string_data", where);
		if (have != want)
			return gc_error_set(err, GC_EINVAL,
					    "%s: holds %zu strings but its shape needs %zu", where,
					    have, want);
		char **s = gc_calloc(want ? want : 1, sizeof(char *));
		if (!s)
			return gc_error_set(err, GC_ENOMEM, "%s: out of memory", where);
		out->data = s;
		/* ONNX strings are bytes; graphcc's are NUL-terminated, so a NUL
		 * inside one cannot be held (any other byte can). */
		for (size_t i = 0; i < want; i++) {
			const void *nul = tp->string_data[i].len
						  ? memchr(tp->string_data[i].data, 0,
							   tp->string_data[i].len)
						  : NULL;
			if (nul) {
				gc_tensor_release(out);
				return gc_error_set(
				    err, GC_EUNSUPPORTED,
				    "%s: string %zu holds a NUL byte (at byte %zu), which graphcc "
				    "strings cannot hold",
				    where, i, (size_t)((const uint8_t *)nul - tp->string_data[i].data));
			}
			s[i] = gc_malloc(tp->string_data[i].len + 1);
			if (!s[i]) {
				gc_tensor_release(out);
				return gc_error_set(err, GC_ENOMEM, "%s: out of memory", where);
			}
			if (tp->string_data[i].len) /* data is NULL for "" */
				memcpy(s[i], tp->string_data[i].data, tp->string_data[i].len);
			s[i][tp->string_data[i].len] = 0;
		}
		return 0;
	}

	if (!external && !tp->has_raw_data && have != want)
		return gc_error_set(err, GC_EINVAL,
				    "%s: holds %zu values but its shape %s needs %zu", where, have,
				    gc_shape_str(out->dims, out->rank, (char[160]){ 0 }, 160), want);
	if (tp->has_raw_data && (uint64_t)tp->raw_data.len != (uint64_t)file_bytes)
		return gc_error_set(err, GC_EINVAL,
				    "%s: raw_data has %zu bytes but shape %s of %s needs %" PRId64,
				    where, tp->raw_data.len,
				    gc_shape_str(out->dims, out->rank, (char[160]){ 0 }, 160),
				    gc_dtype_name(dt), file_bytes);
	if (external) { /* 4-bit ones are unpacked, so never mapped */
		int rc = read_external(tp, base_dir, where, out, (uint64_t)file_bytes,
				       is_4bit(dt) ? NULL : map_pool, mapped, err);
		if (!rc && is_4bit(dt))
			gc_onnx_unpack4(dt, out->data, numel);
		return rc;
	}
	if (map_pool && (uint64_t)nbytes >= GC_ONNX_MAP_MIN) {
		out->data = gc_pool_big(map_pool, (size_t)nbytes);
		if (!out->data)
			return gc_error_set(err, GC_ENOMEM, "%s: out of memory (%" PRId64 " bytes)",
					    where, nbytes);
		*mapped = true;
	} else if (gc_tensor_alloc(out, err))
		return gc_error_prefix(err, "%s", where);
	if (tp->has_raw_data && file_bytes)
		memcpy(out->data, tp->raw_data.data, (size_t)file_bytes);
	else
		copy_typed(tp, dt, out->data, want);
	if (is_4bit(dt))
		gc_onnx_unpack4(dt, out->data, numel);
	return 0;
}
