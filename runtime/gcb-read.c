/* Loading .gcb programs: every size, count, index and offset read from the
 * file is checked before use; weights are used where the file is mapped. */
#include <graphcc/runtime.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "backend.h"
#include "options.h"
#include "alloc.h"
#include "api-check.h"
#include "log.h"
#include "custom.h"
#include "fileio.h"
#include "kernels/control.h"
#include "gcb-check.h"
#include "gcb.h"
#include "ops.h"
#include "program-impl.h"
#include "sha256.h"

typedef struct rd {
	const unsigned char *p;
	size_t n, at;
	const char *strings;
	size_t n_strings;
	const char *path; /* names the program in messages */
	/* The folder relative library paths are taken in: the program file's
	 * ("dir/", "" for a file named without one), or NULL (loaded from
	 * memory without gc_load_options.program_dir). */
	const char *dir;
	gc_error *err;
	gc_pool *pool;
	const char *what; /* the record being read, for messages */
	/* Of the program whose node list is being read, per node: the scratch
	 * this CPU's kernel needs past what the file planned, else 0. */
	uint64_t *grow;
	const gc_load_options *opt;
	/* The pinned libraries: as the file names them, and resolved against
	 * the program's folder. A binding must name one of them. */
	const char **pin_raw, **pin_path;
	uint32_t n_pins;
	uint32_t version; /* the file's format version */
} rd;

static int bad(rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(rd *r, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return gc_error_set(r->err, GC_EINVAL, "%s: corrupted program (%s at byte %zu of the metadata): %s",
			    r->path, r->what, r->at, msg);
}

static int take(rd *r, void *dst, size_t n)
{
	if (r->n - r->at < n) {
		memset(dst, 0, n);
		return bad(r, "truncated: needs %zu more bytes", n);
	}
	memcpy(dst, r->p + r->at, n);
	r->at += n;
	return 0;
}

#define READER(name, type)                                                     \
	static int name(rd *r, type *v)                                        \
	{                                                                      \
		return take(r, v, sizeof *v);                                  \
	}
READER(r_u32, uint32_t)
READER(r_i32, int32_t)
READER(r_u64, uint64_t)
READER(r_i64, int64_t)

/* A count of records each at least `min_bytes` long: never more than the
 * bytes left can hold. */
static int r_count(rd *r, uint32_t *n, size_t min_bytes, uint32_t limit)
{
	if (r_u32(r, n))
		return r->err->code;
	if (*n > limit || (min_bytes && *n > (r->n - r->at) / min_bytes))
		return bad(r, "count %u is impossible here", *n);
	return 0;
}

static int r_str(rd *r, const char **s, bool optional)
{
	uint32_t off;
	if (r_u32(r, &off))
		return r->err->code;
	if (off == GCB_NO_STRING) {
		if (!optional)
			return bad(r, "a required name is missing");
		*s = NULL;
		return 0;
	}
	if (off >= r->n_strings)
		return bad(r, "string reference %u is outside the string table", off);
	*s = r->strings + off;
	return 0;
}

/* Length-prefixed bytes, copied into the pool (NUL-terminated). */
static int r_bytes(rd *r, void **out, uint64_t *len)
{
	if (r_u64(r, len))
		return r->err->code;
	if (*len > r->n - r->at)
		return bad(r, "a %" PRIu64 "-byte field runs past the end", *len);
	*out = gc_pool_alloc(r->pool, (size_t)*len + 1);
	if (!*out)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	memcpy(*out, r->p + r->at, (size_t)*len);
	r->at += (size_t)*len;
	return 0;
}

/* A tensor's type and shape. dynamic: a program tensor whose storage may
 * be dynamic: its rank may be GC_RANK_DYNAMIC, its dtype a sequence or
 * optional type or (not known before run time) UNDEFINED. */
static int r_type(rd *r, gc_tensor *t, bool dynamic)
{
	uint32_t dt;
	if (r_u32(r, &dt) || r_i32(r, &t->rank))
		return r->err->code;
	bool value = dt & (GC_DTYPE_SEQUENCE | GC_DTYPE_OPTIONAL);
	uint32_t inner = dt & GC_DTYPE_ELEM_MASK;
	if (value) {
		if (!dynamic || (dt & ~(uint32_t)(GC_DTYPE_SEQUENCE | GC_DTYPE_OPTIONAL |
						  GC_DTYPE_ELEM_MASK)) ||
		    inner >= GC_DTYPE_COUNT || t->rank != 0)
			return bad(r, "value type %#x is unknown", dt);
	} else if (dt >= GC_DTYPE_COUNT || (dt == 0 && !dynamic) ||
		   (dt && !gc_dtype_size((gc_dtype)dt))) {
		return bad(r, "element type %u is unknown", dt);
	}
	t->dtype = (gc_dtype)dt;
	if (t->rank == GC_RANK_DYNAMIC && dynamic)
		return 0;
	if (t->rank < 0 || t->rank > GC_MAX_RANK)
		return bad(r, "rank %d is out of range", t->rank);
	bool unknown = false;
	for (int i = 0; i < t->rank; i++) {
		if (r_i64(r, &t->dims[i]))
			return r->err->code;
		/* (-1: a dynamic tensor's dimension of unknown size) */
		if (t->dims[i] < 0 && !(dynamic && t->dims[i] == -1))
			return bad(r, "negative dimension %" PRId64, t->dims[i]);
		unknown |= t->dims[i] < 0;
	}
	if (!unknown && gc_tensor_nbytes(t) < 0)
		return bad(r, "a tensor's size overflows");
	return 0;
}

static int r_shape(rd *r, gc_tensor *t)
{
	return r_type(r, t, false);
}

static int r_tensor_value(rd *r, gc_tensor *t)
{
	if (r_shape(r, t))
		return r->err->code;
	int64_t n = gc_tensor_numel(t);
	if (t->dtype == GC_DTYPE_STRING) {
		if ((uint64_t)n > (r->n - r->at) / 8)
			return bad(r, "string tensor too large");
		char **s = gc_pool_alloc(r->pool, (size_t)(n + 1) * sizeof *s);
		if (!s)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		for (int64_t i = 0; i < n; i++) {
			uint64_t len;
			if (r_bytes(r, (void **)&s[i], &len))
				return r->err->code;
		}
		t->data = s;
		return 0;
	}
	uint64_t len;
	if (r_bytes(r, &t->data, &len))
		return r->err->code;
	if (len != (uint64_t)gc_tensor_nbytes(t))
		return bad(r, "tensor value has %" PRIu64 " bytes, its shape needs %" PRId64, len,
			   gc_tensor_nbytes(t));
	return 0;
}

static int r_attr(rd *r, gc_attr *a)
{
	uint32_t type;
	if (r_str(r, &a->name, false) || r_u32(r, &type) || r_i64(r, &a->n))
		return r->err->code;
	a->type = (gc_attr_type)type;
	if (a->n < 0 || (uint64_t)a->n > r->n - r->at + 1)
		return bad(r, "attribute '%s' has an impossible count %" PRId64, a->name, a->n);
	uint64_t len;
	void *data;
	switch (type) {
	case GC_ATTR_FLOAT:
		return take(r, &a->v.f, 4);
	case GC_ATTR_INT:
		return r_i64(r, &a->v.i);
	case GC_ATTR_STRING:
		if (r_bytes(r, &data, &len))
			return r->err->code;
		a->v.s = data;
		return 0;
	case GC_ATTR_INTS:
	case GC_ATTR_FLOATS: {
		size_t es = type == GC_ATTR_INTS ? 8 : 4;
		if ((uint64_t)a->n > (r->n - r->at) / es)
			return bad(r, "attribute '%s' runs past the end", a->name);
		data = gc_pool_alloc(r->pool, (size_t)a->n * es + 8);
		if (!data)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		if (take(r, data, (size_t)a->n * es))
			return r->err->code;
		if (type == GC_ATTR_INTS)
			a->v.ints = data;
		else
			a->v.floats = data;
		return 0;
	}
	case GC_ATTR_STRINGS: {
		if ((uint64_t)a->n > (r->n - r->at) / 8)
			return bad(r, "attribute '%s' runs past the end", a->name);
		char **ss = gc_pool_alloc(r->pool, (size_t)(a->n + 1) * sizeof *ss);
		if (!ss)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		for (int64_t i = 0; i < a->n; i++)
			if (r_bytes(r, (void **)&ss[i], &len))
				return r->err->code;
		a->v.strings = (const char *const *)ss;
		return 0;
	}
	case GC_ATTR_TENSOR: {
		gc_tensor *t = gc_pool_alloc(r->pool, sizeof *t);
		if (!t)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		a->v.t = t;
		return r_tensor_value(r, t);
	}
	case GC_ATTR_TENSORS: {
		if ((uint64_t)a->n > (r->n - r->at) / 8)
			return bad(r, "attribute '%s' runs past the end", a->name);
		gc_tensor *ts = gc_pool_alloc(r->pool, (size_t)(a->n + 1) * sizeof *ts);
		if (!ts)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		for (int64_t i = 0; i < a->n; i++)
			if (r_tensor_value(r, &ts[i]))
				return r->err->code;
		a->v.tensors = ts;
		return 0;
	}
	default:
		return bad(r, "attribute '%s' has type %u, which programs cannot hold", a->name, type);
	}
}

/* The quantized edges of a binding (format 3): each a quantized type with
 * a finite positive scale and an offset in its range, or a plain edge;
 * gcb-check.c then checks them against the tensors. */
static int r_custom_quant(rd *r, gc_custom *c)
{
	size_t k = (size_t)c->n_in + (size_t)c->n_out;
	if (k > (r->n - r->at) / 12)
		return bad(r, "the quantized edges run past the end");
	c->quant = gc_pool_alloc(r->pool, (k + 1) * sizeof *c->quant);
	if (!c->quant)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	bool any = false;
	for (size_t i = 0; i < k; i++) {
		uint32_t dt, bits;
		gc_custom_quant *q = &c->quant[i];
		if (r_u32(r, &dt) || r_u32(r, &bits) || r_i32(r, &q->offset))
			return r->err->code;
		memcpy(&q->scale, &bits, 4);
		q->dtype = dt > DTCustomOpDataTypeCount ? -1 : (int32_t)dt;
		const char *why;
		if (!gc_custom_quant_valid(q, &why))
			return bad(r, "%s %zu of the binding (type %u, scale %g, offset %d): %s",
				   i < (size_t)c->n_in ? "input" : "output",
				   i < (size_t)c->n_in ? i : i - (size_t)c->n_in, dt, (double)q->scale,
				   (int)q->offset, why);
		any |= gc_custom_quant_on(q);
	}
	if (!any)
		return bad(r, "the binding says it has quantized edges but has none");
	return 0;
}

/* Flag 8: a binding made per input shape (custom.h, gc_custom_dyn). */
static int r_custom_dyn(rd *r, gc_custom *c)
{
	gc_custom_dyn *y = gc_pool_alloc(r->pool, sizeof *y);
	uint32_t *masks = gc_pool_alloc(r->pool, ((size_t)c->n_in + (size_t)c->n_out + 1) * 4);
	if (!y || !masks)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	memset(y, 0, sizeof *y);
	y->in_dtypes = masks;
	y->out_dtypes = masks + c->n_in;
	if (r_str(r, &y->fn_library, false) || r_str(r, &y->verify, false) ||
	    r_str(r, &y->infer, false) || r_str(r, &y->select, false))
		return r->err->code;
	for (int32_t i = 0; i < c->n_in + c->n_out; i++)
		if (r_u32(r, &masks[i]))
			return r->err->code;
	if (r_i32(r, &y->n_impls) || y->n_impls < 1 || (uint64_t)y->n_impls > (r->n - r->at) / 40)
		return r->err->code ? r->err->code : bad(r, "impossible implementation count");
	gc_custom_impl *ims = gc_pool_alloc(r->pool, (size_t)y->n_impls * sizeof *ims);
	if (!ims)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (int32_t j = 0; j < y->n_impls; j++) {
		gc_custom_impl *im = &ims[j];
		const char **s[] = { &im->flavour,  &im->library,     &im->symbol,     &im->config,
				     &im->init_sym, &im->destroy_sym, &im->scratch_sym };
		uint32_t inplace;
		for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
			if (r_str(r, s[i], i >= 4))
				return r->err->code;
		if (r_u64(r, &im->scratch_bytes) || r_u32(r, &inplace))
			return r->err->code;
		if (inplace > 1 || im->scratch_bytes > ((uint64_t)1 << 40))
			return bad(r, "implementation '%s': inplace %u, %" PRIu64 " bytes of scratch",
				   im->flavour, inplace, im->scratch_bytes);
		im->inplace = inplace;
		if (r_i32(r, &im->n_accepts) || im->n_accepts < 0 ||
		    (uint64_t)im->n_accepts > (r->n - r->at) / 20)
			return r->err->code ? r->err->code : bad(r, "impossible accepts count");
		im->accepts = gc_pool_alloc(r->pool, ((size_t)im->n_accepts + 1) * sizeof *im->accepts);
		if (!im->accepts)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		for (int32_t k = 0; k < im->n_accepts; k++) {
			gc_custom_accept *a = &im->accepts[k];
			if (r_i32(r, &a->input) || r_u32(r, &a->dtypes) || r_u32(r, &a->ranks) ||
			    r_i64(r, &a->last_dim_multiple))
				return r->err->code;
			if (a->input < 0 || a->input >= c->n_in || a->last_dim_multiple < 0)
				return bad(r, "implementation '%s': accepts rule for input %d",
					   im->flavour, a->input);
		}
	}
	y->impls = ims;
	c->dyn = y;
	return 0;
}

static int r_custom(rd *r, gc_custom *c)
{
	const char **s[] = { &c->manifest, &c->op_name, &c->domain,  &c->op_type,
			     &c->flavour,  &c->backend, &c->config,  &c->library,
			     &c->symbol,   &c->init_sym, &c->destroy_sym };
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		if (r_str(r, s[i], i >= 9))
			return r->err->code;
	uint32_t flags;
	if (r_u64(r, &c->kernel_scratch) || r_u32(r, &flags) || r_i32(r, &c->n_params))
		return r->err->code;
	c->inplace = flags & 1;
	c->pure = flags >> 1 & 1;
	/* flags: 1 inplace, 2 pure, 4 (format 3) quantized edges, 8 (format 4)
	 * bound per input shape */
	if (flags >> (r->version >= 4 ? 4 : r->version >= 3 ? 3 : 2) || (flags & 12) == 12)
		return bad(r, "binding flags %#x are unknown to format version %u", flags,
			   r->version);
	if (c->kernel_scratch > ((uint64_t)1 << 40))
		return bad(r, "kernel scratch of %" PRIu64 " bytes", c->kernel_scratch);
	if (c->n_params < 0 || (uint64_t)c->n_params > (r->n - r->at) / 12)
		return bad(r, "impossible param count %d", c->n_params);
	c->params = gc_pool_alloc(r->pool, ((size_t)c->n_params + 1) * sizeof *c->params);
	if (!c->params)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (int32_t i = 0; i < c->n_params; i++) {
		CustomOpParam *p = &c->params[i];
		uint32_t dt;
		if (r_str(r, &p->name, false) || r_u32(r, &dt) || r_i32(r, &p->size))
			return r->err->code;
		if (dt >= DTCustomOpDataTypeCount || p->size < 0)
			return bad(r, "param '%s' has type %u and size %d", p->name, dt, p->size);
		p->dtype = (CustomOpDataType)dt;
		if (p->dtype == DTString) {
			if (p->size == 0) {
				const char *t;
				if (r_str(r, &t, false))
					return r->err->code;
				p->data = (void *)t;
				continue;
			}
			if ((uint64_t)p->size > (r->n - r->at) / 4)
				return bad(r, "param '%s' runs past the end", p->name);
			const char **v = gc_pool_alloc(r->pool, ((size_t)p->size + 1) * sizeof *v);
			if (!v)
				return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
			for (int32_t j = 0; j < p->size; j++)
				if (r_str(r, &v[j], false))
					return r->err->code;
			p->data = v;
			continue;
		}
		uint64_t len;
		if (r_bytes(r, &p->data, &len))
			return r->err->code;
		if (len != (uint64_t)gcDataTypeSize(p->dtype) * (uint64_t)(p->size ? p->size : 1))
			return bad(r, "param '%s' holds %" PRIu64 " bytes", p->name, len);
	}
	if (r_i32(r, &c->n_in) || c->n_in < 0 || (uint64_t)c->n_in > (r->n - r->at) / 4)
		return r->err->code ? r->err->code : bad(r, "impossible input count");
	c->in_max_dims = gc_pool_alloc(r->pool, ((size_t)c->n_in + 1) * sizeof(int32_t));
	if (!c->in_max_dims)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (int32_t i = 0; i < c->n_in; i++)
		if (r_i32(r, &c->in_max_dims[i]))
			return r->err->code;
		else if (c->in_max_dims[i] < 0 || c->in_max_dims[i] > GC_MAX_RANK)
			return bad(r, "input %d has maxDims %d", (int)i, c->in_max_dims[i]);
	if (r_i32(r, &c->n_out) || c->n_out < 0 || (uint64_t)c->n_out > (r->n - r->at) / 12)
		return r->err->code ? r->err->code : bad(r, "impossible output count");
	c->out_max_dims = gc_pool_alloc(r->pool, ((size_t)c->n_out + 1) * sizeof(int32_t));
	c->outs = gc_pool_alloc(r->pool, ((size_t)c->n_out + 1) * sizeof *c->outs);
	if (!c->out_max_dims || !c->outs)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (int32_t i = 0; i < c->n_out; i++)
		if (r_i32(r, &c->out_max_dims[i]) || (!(flags & 8) && r_shape(r, &c->outs[i])))
			return r->err->code;
		else if (c->out_max_dims[i] < 0 || c->out_max_dims[i] > GC_MAX_RANK)
			return bad(r, "output %d has maxDims %d", (int)i, c->out_max_dims[i]);
	if (flags & 8)
		return r_custom_dyn(r, c);
	return flags & 4 ? r_custom_quant(r, c) : 0;
}

/* Where `path` lies under the folder (or file) `from`: the rest of path
 * ("" or "/..."), or NULL. */
static const char *path_under(const char *path, const char *from)
{
	size_t n = strlen(from);
	while (n > 1 && from[n - 1] == '/')
		n--;
	if (n == 1 && from[0] == '/')
		return path[0] == '/' ? path : NULL;
	if (strncmp(path, from, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

/* a then b, in the pool; NULL (and err) when out of memory. */
static char *pool_cat(rd *r, const char *a, const char *b)
{
	size_t al = strlen(a), bl = strlen(b);
	char *s = gc_pool_alloc(r->pool, al + bl + 1);
	if (!s) {
		gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		return NULL;
	}
	memcpy(s, a, al);
	memcpy(s + al, b, bl + 1);
	return s;
}

/* The library the program records as `raw`, as a path to open: rewritten
 * by the first entry of gc_load_options.library_map whose `from` holds it
 * (as recorded, or as resolved), and a relative path taken relative to the
 * program's folder (r->dir), never the current directory. NULL with err
 * set when it cannot be. *how says what was done, for messages. */
static const char *resolve_library(rd *r, const char *raw, char *how, size_t how_len)
{
	const gc_load_options *o = r->opt;
	const char *path = raw, *resolved = raw[0] == '/' || !r->dir ? raw : pool_cat(r, r->dir, raw);
	how[0] = 0;
	if (!resolved)
		return NULL;
	for (int32_t i = 0; o && i < o->n_library_map; i++) {
		const gc_path_map *m = &o->library_map[i];
		const char *rest = path_under(raw, m->from);
		if (!rest)
			rest = path_under(resolved, m->from);
		if (!rest)
			continue;
		if (!(path = pool_cat(r, m->to, rest)))
			return NULL;
		snprintf(how, how_len, " (recorded as %s, mapped by gc_load_options.library_map[%d] "
			 "'%s' -> '%s')", raw, (int)i, m->from, m->to);
		break;
	}
	if (path[0] == '/')
		return path == raw ? pool_cat(r, "", raw) : path;
	if (!r->dir) {
		gc_error_set(r->err, GC_EINVAL,
			     "%s: kernel library %s%s is relative to the program's folder, and a "
			     "program loaded from memory has none: give gc_load_options.program_dir "
			     "or a gc_load_options.library_map entry for it",
			     r->path, path, how);
		return NULL;
	}
	return pool_cat(r, r->dir, path);
}

/* A library that cannot be read or changed: refused, or only a warning
 * when inspecting (or when --allow-changed-kernels allows a change). */
static int library_problem(rd *r, int code, const char *msg, bool allowed)
{
	const gc_load_options *opt = r->opt;
	if (!allowed && !(opt && opt->inspect_only))
		return gc_error_set(r->err, code, "%s", msg);
	gc_log_sink sink = { 0 };
	if (opt)
		sink = (gc_log_sink){ .log = opt->log, .user = opt->log_user, .warn = opt->warn,
				      .warn_user = opt->user };
	gc_log(&sink, GC_LOG_WARNING, "%s", msg);
	return 0;
}

static int check_libraries(rd *r, gc_program *p, const gc_load_options *opt)
{
	uint32_t n;
	r->what = "library list";
	if (r_count(r, &n, 36, 1 << 16))
		return r->err->code;
	p->n_libs = (int32_t)n;
	p->lib_paths = gc_pool_alloc(p->pool, (n + 1) * sizeof(char *));
	p->lib_sha = gc_pool_alloc(p->pool, (n + 1) * sizeof(char *));
	r->pin_raw = gc_pool_alloc(p->pool, (n + 1) * sizeof(char *));
	if (!p->lib_paths || !p->lib_sha || !r->pin_raw)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	r->pin_path = p->lib_paths;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t want[32], have[32];
		const char *raw;
		char how[1200];
		if (r_str(r, &raw, false) || take(r, want, 32))
			return r->err->code;
		const char *path = resolve_library(r, raw, how, sizeof how);
		if (!path)
			return r->err->code;
		char hw[65], hh[65];
		gc_sha256_hex(want, hw);
		if (!(p->lib_sha[i] = gc_pool_strdup(p->pool, hw)))
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		r->pin_raw[i] = raw;
		p->lib_paths[i] = path;
		r->n_pins = i + 1;
		if (opt && opt->no_libraries && !opt->inspect_only)
			return gc_error_set(r->err, GC_EINVAL,
					    "%s: the program needs kernel library %s, and "
					    "gc_load_options.no_libraries (graphcc: --no-libraries) "
					    "refuses every library",
					    r->path, path);
		gc_error e = { 0 };
		if (opt && !opt->inspect_only &&
		    gc_dynlib_check_dirs(path, opt->library_dirs, opt->n_library_dirs, &e))
			return gc_error_set(r->err, e.code, "%s: %s", r->path, e.msg);
		char msg[3072];
		if (gc_sha256_file(path, have, &e)) {
			snprintf(msg, sizeof msg,
				 "%s: kernel library %s%s, which the program was compiled with, cannot "
				 "be read: %s",
				 r->path, path, how, e.msg);
			if (library_problem(r, GC_EIO, msg, false))
				return r->err->code;
			continue;
		}
		if (!memcmp(want, have, 32))
			continue;
		gc_sha256_hex(have, hh);
		snprintf(msg, sizeof msg,
			 "%s: kernel library %s%s changed since the program was compiled: SHA-256 "
			 "was %s, is now %s%s",
			 r->path, path, how, hw, hh,
			 opt && opt->allow_changed_kernels ? " (allowed by gc_load_options.allow_changed_kernels)"
			 : opt && opt->inspect_only	   ? ""
							   : " (compile the model again, or set "
							     "gc_load_options.allow_changed_kernels "
							     "(graphcc: --allow-changed-kernels) to "
							     "run it anyway)");
		if (library_problem(r, GC_ECHANGED, msg, opt && opt->allow_changed_kernels))
			return r->err->code;
	}
	return 0;
}

/* A binding may name only a pinned library; it then uses the pin's path
 * (resolved against the program's folder). */
static int check_pin(rd *r, const gc_node *n, const gc_custom *c, const char **lib)
{
	for (uint32_t i = 0; i < r->n_pins; i++)
		if (!strcmp(*lib, r->pin_raw[i])) {
			*lib = r->pin_path[i];
			return 0;
		}
	return gc_error_set(r->err, GC_EINVAL,
			    "%s: node '%s' (%s::%s) is bound to library %s, which the program "
			    "does not pin (no SHA-256 recorded for it): refused before any library "
			    "is loaded (corrupted or edited program)",
			    r->path, n->name, c->domain, c->op_type, *lib);
}

/* The libraries of a binding made per input shape too: its functions
 * library and every implementation's. */
static int check_binding(rd *r, const gc_node *n, gc_custom *c)
{
	if (check_pin(r, n, c, &c->library))
		return r->err->code;
	gc_custom_dyn *y = (gc_custom_dyn *)c->dyn;
	for (int32_t j = -1; y && j < y->n_impls; j++)
		if (check_pin(r, n, c, j < 0 ? &y->fn_library : &y->impls[j].library))
			return r->err->code;
	return 0;
}

static int read_tensors(rd *r, gc_program *p, const unsigned char *weights, uint64_t wsize)
{
	uint32_t n;
	r->what = "tensor list";
	if (r_count(r, &n, 32, 1u << 24))
		return r->err->code;
	p->tensors = gc_pool_alloc(p->pool, ((size_t)n + 1) * sizeof *p->tensors);
	if (!p->tensors)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	p->n_tensors = (int32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		gc_ptensor *t = &p->tensors[i];
		uint32_t storage;
		if (r_str(r, &t->name, false) || r_type(r, &t->t, true) || r_u32(r, &storage) ||
		    r_u64(r, &t->offset) || r_u64(r, &t->nbytes))
			return r->err->code;
		if (storage > GC_STORAGE_DYNAMIC)
			return bad(r, "tensor '%s' has storage %u", t->name, storage);
		t->storage = (gc_storage)storage;
		if (storage == GC_STORAGE_DYNAMIC) {
			if (t->nbytes || t->offset)
				return bad(r, "dynamic tensor '%s' claims a place", t->name);
			continue;
		}
		if (t->t.rank == GC_RANK_DYNAMIC || gc_dtype_is_value(t->t.dtype) ||
		    t->t.dtype == GC_DTYPE_UNDEFINED)
			return bad(r, "tensor '%s' has no static type but static storage", t->name);
		if (t->nbytes != (uint64_t)gc_tensor_nbytes(&t->t))
			return bad(r, "tensor '%s' claims %" PRIu64 " bytes, its shape needs %" PRId64,
				   t->name, t->nbytes, gc_tensor_nbytes(&t->t));
		/* Activations may hold strings (the session owns them); a constant's
		 * bytes would be read as pointers, and the writer never makes one. */
		if (t->t.dtype == GC_DTYPE_STRING && storage == GC_STORAGE_CONST)
			return bad(r, "constant '%s' holds strings, which programs cannot yet",
				   t->name);
		if (storage == GC_STORAGE_CONST && t->offset == GCB_PACKED_ONLY && r->version >= 4) {
			if (r_str(r, &t->packed_key, false) || r_u64(r, &t->offset) ||
			    r_u64(r, &t->packed_nbytes))
				return r->err->code;
			if (!t->nbytes || t->offset > wsize || t->packed_nbytes > wsize - t->offset ||
			    t->offset % GCB_TENSOR_ALIGN)
				return bad(r, "constant '%s' lies outside the weights", t->name);
			t->packed = weights + t->offset;
			t->offset = 0;
		} else if (storage == GC_STORAGE_CONST) {
			if (t->offset > wsize || t->nbytes > wsize - t->offset ||
			    t->offset % GCB_TENSOR_ALIGN)
				return bad(r, "constant '%s' lies outside the weights", t->name);
			t->t.data = (void *)(weights + t->offset);
		}
	}
	return 0;
}

static int r_index_list(rd *r, gc_program *p, int32_t **out, int32_t *count)
{
	uint32_t n;
	if (r_count(r, &n, 4, (uint32_t)p->n_tensors))
		return r->err->code;
	*out = gc_pool_alloc(p->pool, ((size_t)n + 1) * sizeof(int32_t));
	if (!*out)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	*count = (int32_t)n;
	for (uint32_t i = 0; i < n; i++) {
		if (r_i32(r, &(*out)[i]))
			return r->err->code;
		if ((*out)[i] < 0 || (*out)[i] >= p->n_tensors)
			return bad(r, "tensor index %d out of range", (*out)[i]);
	}
	return 0;
}

/* What prepare says of an output against what the file records: the same,
 * or, for session storage, a type the record completes (an element type
 * compile took from the model's declarations). */
static bool output_fits(const gc_ptensor *rec, const gc_tensor *got)
{
	if (rec->storage != GC_STORAGE_DYNAMIC)
		return got->dtype == rec->t.dtype && gc_same_shape(got, &rec->t);
	if (got->rank != rec->t.rank)
		return false;
	if (got->dtype == rec->t.dtype || got->dtype == GC_DTYPE_UNDEFINED)
		return true;
	return (got->dtype & ~GC_DTYPE_ELEM_MASK) == (rec->t.dtype & ~GC_DTYPE_ELEM_MASK) &&
	       !(got->dtype & GC_DTYPE_ELEM_MASK);
}

static int read_program(rd *r, gc_program *p, const unsigned char *weights, uint64_t wsize,
			int depth);

/*
 * A .gcb runs on any CPU graphcc supports: the kernels chosen at load may be
 * another variant (AVX-512 packed, reference) than at compile, with other
 * scratch needs. Nodes run one at a time, so every node that outgrew its
 * planned scratch shares one region appended to the arena, sized for the
 * largest of them; the rest of the plan stays as compiled.
 */
static int replan_scratch(rd *r, gc_program *p, const uint64_t *grow)
{
	uint64_t extra = 0;
	for (int32_t i = 0; i < p->n_nodes; i++)
		extra = grow[i] > extra ? grow[i] : extra;
	if (!extra)
		return 0;
	uint64_t at = (p->arena_bytes + GCB_TENSOR_ALIGN - 1) / GCB_TENSOR_ALIGN * GCB_TENSOR_ALIGN;
	if (extra > ((uint64_t)1 << 44) || at > ((uint64_t)1 << 44))
		return bad(r, "a node needs %" PRIu64 " bytes of scratch", extra);
	int32_t n = 0;
	for (int32_t i = 0; i < p->n_nodes; i++)
		if (grow[i]) {
			p->scratch_offset[i] = at;
			p->nodes[i].scratch_bytes = grow[i];
			n++;
		}
	gc_log(&p->log, GC_LOG_INFO,
	       "%s: %d node%s need%s more scratch with this CPU's kernels than the program "
	       "planned (compiled on another CPU or build): the arena grows from %" PRIu64
	       " to %" PRIu64 " bytes",
	       r->path, (int)n, n == 1 ? "" : "s", n == 1 ? "s" : "", p->arena_bytes, at + extra);
	p->arena_bytes = at + extra;
	return 0;
}

/* The packed forms the file holds for a node (gcb.h): for prepare to use
 * instead of packing its constant inputs again. */
static int read_packed(rd *r, gc_program *p, gc_node *n, const unsigned char *weights,
		       uint64_t wsize, gc_packed **out, int32_t *count)
{
	uint32_t np;
	r->what = "packed weights";
	if (r_count(r, &np, 28, 64))
		return r->err->code;
	*out = gc_pool_alloc(p->pool, ((size_t)np + 1) * sizeof **out);
	if (!*out)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	*count = (int32_t)np;
	for (uint32_t e = 0; e < np; e++) {
		gc_packed *pk = &(*out)[e];
		uint32_t replaces;
		uint64_t off;
		*pk = (gc_packed){ 0 };
		if (r_str(r, &pk->key, false) || r_i32(r, &pk->input) || r_u32(r, &replaces) ||
		    r_u64(r, &off) || r_u64(r, &pk->nbytes))
			return r->err->code;
		if (pk->input < 0 || pk->input >= n->n_in || replaces > 1 || off > wsize ||
		    pk->nbytes > wsize - off || off % GCB_TENSOR_ALIGN)
			return bad(r, "node '%s': packed weights %u lie outside the weights", n->name,
				   e);
		pk->replaces = replaces;
		pk->data = weights + off;
	}
	return 0;
}

/* A constant the file holds only in packed form, which some kernel (of
 * this CPU, or a reader that does not pack it) wants as it is: rebuilt
 * once, owned by the program. */
static int unpack_tensor(rd *r, gc_ptensor *pt)
{
	/* no layout packs smaller than the plain values: the packed size (within
	 * the file) bounds what is allocated */
	if (pt->nbytes > pt->packed_nbytes)
		return bad(r, "constant '%s' is packed as '%s' in %" PRIu64 " bytes, fewer than "
			      "its %" PRIu64 " bytes",
			   pt->name, pt->packed_key, pt->packed_nbytes, pt->nbytes);
	void *data = gc_aligned_alloc(64, (size_t)pt->nbytes, 0);
	if (!data)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory unpacking '%s'", r->path,
				    pt->name);
	if (gc_packed_unpack(pt->packed_key, pt->packed, pt->packed_nbytes, data, pt->nbytes)) {
		gc_free(data);
		return bad(r, "constant '%s' is packed as '%s', which this graphcc cannot unpack "
			      "to %" PRIu64 " bytes",
			   pt->name, pt->packed_key, pt->nbytes);
	}
	pt->t.data = data;
	return 0;
}

/* Input j of node n is a constant held only in packed form, still without
 * its plain value, and the node's kernel did not take a packed form that
 * replaces it. */
static bool wants_unpacked(const gc_program *p, const gc_node *n, int j)
{
	if (n->in[j] < 0)
		return false;
	const gc_ptensor *pt = &p->tensors[n->in[j]];
	if (!pt->packed || pt->t.data)
		return false;
	for (int32_t e = 0; e < n->n_packed; e++)
		if (n->packed[e].input == j && n->packed[e].replaces)
			return false;
	return true;
}

/* After prepare: when the kernel wants the plain value of a constant the
 * file holds only packed (this CPU's kernels differ from the compiling
 * machine's), the value is rebuilt and the node prepared again. */
static int prepare_unpacked(rd *r, gc_program *p, gc_node *n, gc_kctx *k, gc_tensor *ins,
			    gc_tensor **inp, gc_tensor *outs, gc_tensor **outp)
{
	bool again = false;
	for (int j = 0; j < n->n_in; j++)
		if (wants_unpacked(p, n, j)) {
			if (unpack_tensor(r, &p->tensors[n->in[j]]))
				return r->err->code;
			again = true;
		}
	if (!again)
		return 0;
	gc_node_release_state(n);
	n->state_free = NULL;
	n->run = NULL;
	n->scratch_bytes = 0;
	n->inplace_ok = false;
	n->inplace_in = 0;
	for (int j = 0; j < n->n_in; j++)
		if (inp[j])
			ins[j].data = p->tensors[n->in[j]].t.data;
	for (int j = 0; j < n->n_out; j++)
		if (outp[j])
			outs[j] = (gc_tensor){ .dtype = GC_DTYPE_UNDEFINED };
	int rc = p->backend->prepare(k, n, inp, outp);
	if (rc)
		gc_error_prefix(r->err, "%s", r->path);
	return rc;
}

/* Reads node i and prepares it: its kernel is chosen again by this build
 * (a node prepared at run time is only checked). */
static int read_node(rd *r, gc_program *p, int32_t i, const unsigned char *weights,
		     uint64_t wsize, int depth)
{
	gc_node *n = &p->nodes[i];
	uint64_t *grow = r->grow; /* before a subgraph's reading sets its own */
	uint32_t nin, nout, nattr, has_custom, flags, n_sub;
	uint64_t scratch_bytes;
	r->what = "node";
	if (r_str(r, &n->name, false) || r_str(r, &n->domain, false) ||
	    r_str(r, &n->op_type, false) || r_i32(r, &n->opset) ||
	    r_count(r, &nin, 4, 1u << 20))
		return r->err->code;
	int64_t lo, hi;
	if (!gc_opset_supported(n->domain, n->opset, &lo, &hi))
		return bad(r, "node '%s' has opset %d of domain '%s'; graphcc implements %" PRId64
			      " to %" PRId64,
			   n->name, n->opset, n->domain, lo, hi);
	n->n_in = (int32_t)nin;
	n->in = gc_pool_alloc(p->pool, ((size_t)nin + 1) * sizeof(int32_t));
	if (!n->in)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (uint32_t j = 0; j < nin; j++)
		if (r_i32(r, &n->in[j]) || n->in[j] < -1 || n->in[j] >= p->n_tensors)
			return r->err->code ? r->err->code : bad(r, "node '%s' input index", n->name);
	if (r_count(r, &nout, 4, 1u << 20))
		return r->err->code;
	n->n_out = (int32_t)nout;
	n->out = gc_pool_alloc(p->pool, ((size_t)nout + 1) * sizeof(int32_t));
	if (!n->out)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (uint32_t j = 0; j < nout; j++)
		if (r_i32(r, &n->out[j]) || n->out[j] < -1 || n->out[j] >= p->n_tensors ||
		    (n->out[j] >= 0 && p->tensors[n->out[j]].storage == GC_STORAGE_CONST))
			return r->err->code ? r->err->code : bad(r, "node '%s' output index", n->name);
	if (r_u64(r, &scratch_bytes) || r_u64(r, &p->scratch_offset[i]) ||
	    r_count(r, &nattr, 16, 1u << 16))
		return r->err->code;
	if (scratch_bytes > p->arena_bytes || p->scratch_offset[i] > p->arena_bytes - scratch_bytes ||
	    p->scratch_offset[i] % GCB_TENSOR_ALIGN)
		return bad(r, "node '%s' scratch lies outside the arena", n->name);
	n->n_attr = (int32_t)nattr;
	n->attrs = gc_pool_alloc(p->pool, ((size_t)nattr + 1) * sizeof *n->attrs);
	if (!n->attrs)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (uint32_t j = 0; j < nattr; j++)
		if (r_attr(r, &n->attrs[j]))
			return r->err->code;
	if (r_u32(r, &has_custom))
		return r->err->code;
	gc_custom *c = NULL;
	if (has_custom) {
		c = gc_pool_alloc(p->pool, sizeof *c);
		if (!c)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		r->what = "custom binding";
		if (r_custom(r, c) || check_binding(r, n, c))
			return r->err->code;
		if (!gc_backend_find(c->backend)) {
			char names[128];
			return gc_error_set(r->err, GC_EUNSUPPORTED,
					    "%s: a custom node is bound for backend '%s', which this "
					    "graphcc build does not have (it has: %s)",
					    r->path, c->backend, gc_backend_names(names, sizeof names));
		}
	}
	r->what = "node";
	if (r_u32(r, &flags) || r_i32(r, &n->n_explicit_in) || r_count(r, &n_sub, 16, 64))
		return r->err->code;
	/* flags: 1 prepared at run time; 2 (format 4) packed forms follow */
	uint32_t known = r->version >= 4 ? 3 : 1;
	/* a custom node is prepared at run time exactly when bound per shape */
	if ((flags & ~known) || n->n_explicit_in < 0 || n->n_explicit_in > n->n_in ||
	    (!n_sub && n->n_explicit_in != n->n_in) || ((flags & 1) && n_sub) ||
	    (has_custom && (flags & 1) != (c->dyn != NULL)) ||
	    (flags == 3) || ((flags & 2) && (n_sub || has_custom)))
		return bad(r, "node '%s' has flags %u, %d own inputs of %d and %u subgraphs",
			   n->name, flags, n->n_explicit_in, n->n_in, n_sub);
	n->reprepare = flags & 1;
	if (n_sub) {
		if (depth >= 64)
			return bad(r, "subgraphs nest deeper than 64");
		n->sub = gc_pool_alloc(p->pool, ((size_t)n_sub + 1) * sizeof *n->sub);
		if (!n->sub)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		for (uint32_t j = 0; j < n_sub; j++) {
			gc_program *sp = gc_program_alloc();
			if (!sp)
				return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
			n->sub[n->n_sub++] = sp; /* freed with p, whatever happens next */
			if (read_program(r, sp, weights, wsize, depth + 1))
				return r->err->code;
			r->what = "node";
			for (int32_t k = 0; k + sp->n_formal < sp->n_inputs; k++)
				if (sp->outer_slot[k] < n->n_explicit_in || sp->outer_slot[k] >= n->n_in)
					return bad(r, "node '%s': subgraph %u reads input %d", n->name, j,
						   sp->outer_slot[k]);
		}
	}
	gc_packed *stored = NULL;
	int32_t n_stored = 0;
	if ((flags & 2) && read_packed(r, p, n, weights, wsize, &stored, &n_stored))
		return r->err->code;
	r->what = "node";
	if (has_custom) {
		n->custom = c;
		n->op = GC_OP_CUSTOM;
	} else {
		n->op = gc_op_lookup(n->domain, n->op_type);
		if (n->op == GC_OP_NONE)
			return gc_error_set(r->err, GC_EUNSUPPORTED,
					    "%s: node '%s' uses op '%s', which this graphcc build does "
					    "not have",
					    r->path, n->name, n->op_type);
		const gc_op_info *info = &p->backend->ops[n->op];
		int32_t own = n->n_explicit_in;
		if (own < info->min_in || own > info->max_in || n->n_out < info->min_out ||
		    n->n_out > info->max_out ||
		    n_sub != (!gc_op_is_control(n->op) ? 0u : n->op == GC_OP_If ? 2u : 1u))
			return bad(r, "node '%s' has %d inputs, %d outputs and %u subgraphs", n->name,
				   own, n->n_out, n_sub);
		/* kernels take required inputs and outputs as given */
		for (int j = 0; j < info->min_in; j++)
			if (n->in[j] < 0)
				return bad(r, "node '%s' leaves its required input %d empty",
					   n->name, j);
		for (int j = 0; j < info->min_out; j++)
			if (n->out[j] < 0)
				return bad(r, "node '%s' leaves its required output %d empty",
					   n->name, j);
	}
	if (n->reprepare || n->custom || n->n_sub)
		for (int j = 0; j < n->n_in; j++)
			if (wants_unpacked(p, n, j) && unpack_tensor(r, &p->tensors[n->in[j]]))
				return r->err->code;
	if (n->reprepare) {
		/* Prepared before each run, on what its inputs hold then: its
		 * outputs are the session's. */
		for (int j = 0; j < n->n_out; j++)
			if (n->out[j] >= 0 && p->tensors[n->out[j]].storage != GC_STORAGE_DYNAMIC)
				return bad(r, "node '%s' is prepared at run time, but output %d has "
					      "static storage",
					   n->name, j);
		return 0;
	}
	/* Prepare with the tensors as recorded; the outputs must come out as
	 * recorded too. */
	size_t nio = (size_t)n->n_in + (size_t)n->n_out + 2;
	gc_tensor *ins = gc_calloc(nio, sizeof *ins), *outs = ins + n->n_in + 1;
	gc_tensor **inp = gc_calloc(nio, sizeof *inp), **outp = inp + n->n_in + 1;
	int rc = 0;
	if (!ins || !inp) {
		rc = gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		goto out;
	}
	bool takes_dynamic = gc_op_takes_dynamic(n->op);
	for (int j = 0; j < n->n_in; j++)
		if (n->in[j] >= 0) {
			ins[j] = p->tensors[n->in[j]].t;
			inp[j] = &ins[j];
			const gc_ptensor *pt = &p->tensors[n->in[j]];
			if ((pt->storage == GC_STORAGE_DYNAMIC && !takes_dynamic &&
			     !(n->op == GC_OP_Identity && gc_dtype_is_value(pt->t.dtype))) ||
			    (has_custom && pt->storage == GC_STORAGE_DYNAMIC)) {
				rc = bad(r, "node '%s' reads '%s', whose shape is only known at run "
					    "time, but is prepared now",
					 n->name, pt->name);
				goto out;
			}
			/* (control flow decides on constants only) */
			if (gc_op_is_control(n->op) && pt->storage != GC_STORAGE_CONST)
				ins[j].data = NULL;
		}
	for (int j = 0; j < n->n_out; j++)
		outp[j] = n->out[j] >= 0 ? &outs[j] : NULL;
	gc_kctx k = { .err = r->err, .node = n, .threads = 1, .stored = stored,
		      .n_stored = n_stored };
	/* a custom node runs no package code yet: every binding is checked
	 * first (bind_libraries opens the libraries after the whole file) */
	if ((rc = n->custom ? gc_custom_describe(&k, n, inp, outp)
			    : p->backend->prepare(&k, n, inp, outp))) {
		gc_error_prefix(r->err, "%s", r->path);
		goto out;
	}
	if ((rc = prepare_unpacked(r, p, n, &k, ins, inp, outs, outp)))
		goto out;
	for (int j = 0; j < n->n_out; j++) {
		if (!outp[j])
			continue;
		const gc_ptensor *want = &p->tensors[n->out[j]];
		outs[j].data = NULL;
		bool dyn_out = gc_dtype_is_value(outs[j].dtype) || outs[j].rank == GC_RANK_DYNAMIC;
		if (!output_fits(want, &outs[j]) || dyn_out != (want->storage == GC_STORAGE_DYNAMIC)) {
			char a[160], b[160];
			rc = gc_error_set(r->err, GC_EINVAL,
					  "%s: node '%s' (%s): output %d comes out as %s %s here but "
					  "was compiled as %s %s (corrupted, or compiled by another "
					  "graphcc)",
					  r->path, n->name, n->op_type, j, gc_dtype_name(outs[j].dtype),
					  gc_shape_str(outs[j].dims, outs[j].rank, a, sizeof a),
					  gc_dtype_name(want->t.dtype),
					  gc_shape_str(want->t.dims, want->t.rank, b, sizeof b));
			goto out;
		}
	}
	/* A kernel variant of this CPU (or of GRAPHCC_NN_REFERENCE) may need
	 * more scratch than the compiling machine's did: read_program gives
	 * such nodes a region past the planned arena, after the arena's
	 * layout is checked as the file has it (with this CPU's sizes, a
	 * block that shrank or moved would leave the arena larger than its
	 * blocks, which the check takes for a corrupted file). One that needs
	 * less keeps its planned region. */
	if (n->scratch_bytes > scratch_bytes)
		grow[i] = n->scratch_bytes;
	n->scratch_bytes = scratch_bytes;
out:
	gc_free(ins);
	gc_free(inp);
	return rc;
}

/* The optional trailing block: session state (input, output, initial
 * value): indices checked, the input and output of the initial value's
 * type and shape, the initial value a constant. */
static int read_states(rd *r, gc_program *p)
{
	uint32_t n;
	int rc;
	r->what = "session state";
	if ((rc = r_count(r, &n, 12, (uint32_t)p->n_inputs)))
		return rc;
	if (!(p->states = gc_pool_alloc(p->pool, ((size_t)n + 1) * sizeof *p->states)))
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	for (uint32_t k = 0; k < n; k++) {
		gc_pstate *s = &p->states[k];
		if ((rc = r_i32(r, &s->input)) || (rc = r_i32(r, &s->output)) ||
		    (rc = r_i32(r, &s->init)))
			return rc;
		if (s->input < 0 || s->input >= p->n_inputs || s->output < 0 ||
		    s->output >= p->n_outputs || s->init < 0 || s->init >= p->n_tensors)
			return bad(r, "state %u names no input, output or tensor", k);
		const gc_ptensor *in = &p->tensors[p->inputs[s->input]];
		const gc_ptensor *out = &p->tensors[p->outputs[s->output]];
		const gc_ptensor *init = &p->tensors[s->init];
		if (init->storage != GC_STORAGE_CONST || in->storage == GC_STORAGE_DYNAMIC ||
		    !gc_same_shape(&in->t, &out->t) || !gc_same_shape(&in->t, &init->t) ||
		    in->t.dtype != out->t.dtype || in->t.dtype != init->t.dtype)
			return bad(r, "state %u: its input, output and initial value differ", k);
		for (uint32_t j = 0; j < k; j++)
			if (p->states[j].input == s->input)
				return bad(r, "state %u: input %d is given twice", k, s->input);
	}
	p->n_states = (int32_t)n;
	return 0;
}

/* One program record: the file's, or (depth > 0) a control-flow node's
 * subgraph. */
static int read_program(rd *r, gc_program *p, const unsigned char *weights, uint64_t wsize,
			int depth)
{
	int rc;
	if ((rc = read_tensors(r, p, weights, wsize)))
		return rc;
	r->what = "inputs and outputs";
	if ((rc = r_index_list(r, p, &p->inputs, &p->n_inputs)) ||
	    (rc = r_index_list(r, p, &p->outputs, &p->n_outputs)) ||
	    (rc = r_u64(r, &p->arena_bytes)) || (rc = r_u64(r, &p->tensor_bytes)) ||
	    (rc = r_u64(r, &p->const_bytes)) || (rc = r_i32(r, &p->n_formal)))
		return rc;
	if (p->n_formal < 0 || p->n_formal > p->n_inputs || (!depth && p->n_formal != p->n_inputs))
		return bad(r, "%d of %d inputs are the program's own", p->n_formal, p->n_inputs);
	if (depth) {
		int32_t n_outer = p->n_inputs - p->n_formal;
		p->outer_slot = gc_pool_alloc(p->pool, ((size_t)n_outer + 1) * sizeof(int32_t));
		if (!p->outer_slot)
			return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		for (int32_t j = 0; j < n_outer; j++)
			if ((rc = r_i32(r, &p->outer_slot[j])))
				return rc;
	}
	if (p->arena_bytes > ((uint64_t)1 << 44))
		return bad(r, "arena of %" PRIu64 " bytes", p->arena_bytes);
	uint64_t consts = 0;
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (p->tensors[t].storage == GC_STORAGE_CONST)
			consts += p->tensors[t].nbytes; /* each at most the weights' size */
	if (consts != p->const_bytes)
		return bad(r, "the constants take %" PRIu64 " bytes, the program says %" PRIu64,
			   consts, p->const_bytes);
	for (int32_t t = 0; t < p->n_tensors; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		if (pt->storage == GC_STORAGE_ARENA &&
		    (pt->offset > p->arena_bytes || pt->nbytes > p->arena_bytes - pt->offset ||
		     pt->offset % GCB_TENSOR_ALIGN))
			return bad(r, "tensor '%s' lies outside the arena", pt->name);
		p->dynamic |= pt->storage == GC_STORAGE_DYNAMIC;
	}
	for (int32_t i = 0; i < p->n_inputs; i++)
		if (p->tensors[p->inputs[i]].storage == GC_STORAGE_CONST)
			return bad(r, "input '%s' is not an activation", p->tensors[p->inputs[i]].name);
	uint32_t nn;
	r->what = "node list";
	if ((rc = r_count(r, &nn, 40, 1u << 24)))
		return rc;
	p->nodes = gc_pool_alloc(p->pool, ((size_t)nn + 1) * sizeof *p->nodes);
	p->scratch_offset = gc_pool_alloc(p->pool, ((size_t)nn + 1) * sizeof(uint64_t));
	if (!p->nodes || !p->scratch_offset)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	uint64_t *grow = gc_pool_alloc(p->pool, ((size_t)nn + 1) * sizeof *grow);
	if (!grow)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	memset(p->nodes, 0, ((size_t)nn + 1) * sizeof *p->nodes);
	memset(grow, 0, ((size_t)nn + 1) * sizeof *grow);
	for (uint32_t i = 0; i < nn; i++) {
		p->n_nodes = (int32_t)i + 1; /* so a failure releases what was prepared */
		r->grow = grow; /* (a subgraph's node list sets its own) */
		if ((rc = read_node(r, p, (int32_t)i, weights, wsize, depth)))
			return rc;
		p->dynamic |= p->nodes[i].reprepare || p->nodes[i].n_sub;
	}
	for (int32_t j = 0; j < p->n_outputs; j++) {
		gc_ptensor *pt = &p->tensors[p->outputs[j]];
		if (pt->packed && !pt->t.data && (rc = unpack_tensor(r, pt)))
			return rc;
	}
	/* Meaning first (on what the file says), then this CPU's scratch. */
	rc = gc_gcb_check_program(p, r->path, r->err);
	return rc ? rc : replan_scratch(r, p, grow);
}

/* The libraries of a binding made per input shape, opened now (after
 * their SHA-256 was checked) and held by the program's node: every later
 * open of the same path shares them, so a library replaced on disk after
 * the load never runs. */
typedef struct held_libs {
	int32_t n;
	gc_dynlib *l[];
} held_libs;

static void held_free(void *state)
{
	held_libs *h = state;
	for (int32_t i = 0; i < h->n; i++)
		gc_dynlib_release(h->l[i]);
	gc_free(h);
}

static int hold_libraries(rd *r, gc_node *n)
{
	const gc_custom_dyn *y = ((const gc_custom *)n->custom)->dyn;
	held_libs *h = gc_calloc(1, sizeof *h + ((size_t)y->n_impls + 1) * sizeof h->l[0]);
	if (!h)
		return gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
	n->state = h;
	n->state_free = held_free;
	bool graphcc;
	for (int32_t j = -1; j < y->n_impls; j++) {
		const char *lib = j < 0 ? y->fn_library : y->impls[j].library;
		if (gc_dynlib_open(lib, &h->l[h->n], r->err) ||
		    gc_dynlib_abi(h->l[h->n++], &graphcc, r->err))
			return gc_error_prefix(r->err, "%s: node '%s'", r->path, n->name);
	}
	return 0;
}

/* Opens every custom node's library, finds its kernel and runs its init:
 * the first package code that runs, after every binding was checked. */
static int bind_libraries(rd *r, gc_program *p)
{
	for (int32_t i = 0; i < p->n_nodes; i++) {
		gc_node *n = &p->nodes[i];
		for (int32_t j = 0; j < n->n_sub; j++)
			if (bind_libraries(r, n->sub[j]))
				return r->err->code;
		if (!n->custom)
			continue;
		if (((const gc_custom *)n->custom)->dyn) {
			if (hold_libraries(r, n))
				return r->err->code;
			continue;
		}
		size_t nio = (size_t)n->n_in + (size_t)n->n_out + 2;
		gc_tensor *ins = gc_calloc(nio, sizeof *ins), *outs = ins + n->n_in + 1;
		gc_tensor **inp = gc_calloc(nio, sizeof *inp), **outp = inp + n->n_in + 1;
		int rc;
		if (!ins || !inp) {
			rc = gc_error_set(r->err, GC_ENOMEM, "%s: out of memory", r->path);
		} else {
			for (int j = 0; j < n->n_in; j++)
				if (n->in[j] >= 0) {
					ins[j] = p->tensors[n->in[j]].t;
					inp[j] = &ins[j];
				}
			for (int j = 0; j < n->n_out; j++)
				outp[j] = n->out[j] >= 0 ? &outs[j] : NULL;
			gc_kctx k = { .err = r->err, .node = n, .threads = 1 };
			if ((rc = p->backend->prepare(&k, n, inp, outp)))
				gc_error_prefix(r->err, "%s", r->path);
		}
		gc_free(ins);
		gc_free(inp);
		if (rc)
			return rc;
	}
	return 0;
}

int gc_is_program_file(const char *path)
{
	char magic[8];
	if (!path)
		return 0;
	int fd;
	uint64_t size;
	gc_error e = { 0 };
	if (gc_open_regular(path, &fd, &size, &e))
		return 0;
	int got = size >= sizeof magic && !gc_read_fd_at(fd, magic, sizeof magic, 0, path, &e);
	close(fd);
	return got && !memcmp(magic, GCB_MAGIC, 8);
}

/* The caller's gc_load_options into *o, checked as far as they can be
 * without the program. */
static int load_options(gc_load_options *o, const gc_load_options *opt_in, gc_error *err)
{
	if (gc_options_copy(o, sizeof *o, opt_in, "gc_load_options", err) ||
	    gc_arg_list(o->n_library_dirs, o->library_dirs, "gc_load_options", "library_dirs", err) ||
	    gc_arg_list(o->n_library_map, o->library_map, "gc_load_options", "library_map", err))
		return err->code;
	for (int32_t i = 0; i < o->n_library_dirs; i++)
		if (!o->library_dirs[i] || !o->library_dirs[i][0])
			return gc_error_set(err, GC_EINVAL, "gc_load_options.library_dirs[%d] is %s",
					    (int)i, o->library_dirs[i] ? "empty" : "NULL");
	for (int32_t i = 0; i < o->n_library_map; i++) {
		const gc_path_map *m = &o->library_map[i];
		if (!m->from || !m->from[0] || !m->to || !m->to[0])
			return gc_error_set(err, GC_EINVAL,
					    "gc_load_options.library_map[%d].%s is %s", (int)i,
					    !m->from || !m->from[0] ? "from" : "to",
					    (!m->from || !m->from[0] ? m->from : m->to) ? "empty" : "NULL");
	}
	if (o->program_dir && !o->program_dir[0])
		return gc_error_set(err, GC_EINVAL,
				    "gc_load_options.program_dir is empty (NULL: none)");
	return 0;
}

static int load_mapped(void *map, size_t len, const char *path, const char *dir,
		       const gc_load_options *opt, gc_program **out, gc_error *err);

int gc_program_load(const char *path, const gc_load_options *opt_in, gc_program **out,
		    gc_error *err)
{
	GC_ARG_NONNULL(err, out);
	*out = NULL;
	GC_ARG_NONNULL(err, path);
	gc_load_options lo;
	if (load_options(&lo, opt_in, err))
		return err->code;
	int fd;
	uint64_t size;
	if (gc_open_regular(path, &fd, &size, err))
		return err->code;
	size_t len = (size_t)size;
	if (len < GCB_HEADER_SIZE) {
		close(fd);
		return gc_error_set(err, GC_EINVAL, "%s: not a graphcc program (%zu bytes, too short)",
				    path, len);
	}
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return gc_error_set(err, GC_EIO, "%s: cannot map: %s", path, strerror(errno));
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
	char *dir = gc_malloc(dl + 1);
	if (!dir) {
		munmap(map, len);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	}
	memcpy(dir, path, dl);
	dir[dl] = 0;
	int rc = load_mapped(map, len, path, dir, &lo, out, err);
	gc_free(dir);
	return rc;
}

int gc_program_load_mem(const void *buf, size_t len, const char *name,
			const gc_load_options *opt_in, gc_program **out, gc_error *err)
{
	GC_ARG_NONNULL(err, out);
	*out = NULL;
	GC_ARG_NONNULL(err, buf);
	gc_load_options lo;
	if (load_options(&lo, opt_in, err))
		return err->code;
	if (!name)
		name = "(program in memory)";
	if (len < GCB_HEADER_SIZE)
		return gc_error_set(err, GC_EINVAL, "%s: not a graphcc program (%zu bytes, too short)",
				    name, len);
	if ((uint64_t)len > gc_limit_bytes())
		return gc_error_set(err, GC_ELIMIT,
				    "%s: the program is %zu bytes, over the limit of %" PRIu64
				    " (" GC_LIMIT_SETTING ")",
				    name, len, gc_limit_bytes());
	/* A copy of its own, page-aligned as a mapped file is (the weights are
	 * used in place, aligned), read-only as one. */
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return gc_error_set(err, GC_ENOMEM, "%s: cannot allocate %zu bytes: %s", name, len,
				    strerror(errno));
	memcpy(map, buf, len);
	mprotect(map, len, PROT_READ);
	char *dir = NULL;
	if (lo.program_dir) {
		size_t dl = strlen(lo.program_dir);
		if (!(dir = gc_malloc(dl + 2))) {
			munmap(map, len);
			return gc_error_set(err, GC_ENOMEM, "%s: out of memory", name);
		}
		memcpy(dir, lo.program_dir, dl);
		strcpy(dir + dl, lo.program_dir[dl - 1] == '/' ? "" : "/");
	}
	int rc = load_mapped(map, len, name, dir, &lo, out, err);
	gc_free(dir);
	return rc;
}

/* Takes map (len bytes, owned from here on: the program unmaps it). */
static int load_mapped(void *map, size_t len, const char *path, const char *dir,
		       const gc_load_options *opt, gc_program **out, gc_error *err)
{
	gc_program *p = gc_program_alloc();
	if (!p) {
		munmap(map, len);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	}
	p->map = map;
	p->map_len = len;
	p->log = (gc_log_sink){ .log = opt->log, .user = opt->log_user, .warn = opt->warn,
				.warn_user = opt->user };
	const unsigned char *base = map;
	gcb_header h;
	memcpy(&h, base, sizeof h);
	int rc = 0;
	if (memcmp(h.magic, GCB_MAGIC, 8)) {
		rc = gc_error_set(err, GC_EINVAL, "%s: not a graphcc program (bad magic)", path);
		goto fail;
	}
	char ver[33];
	memcpy(ver, h.graphcc_version, 32);
	ver[32] = 0;
	for (char *c = ver; *c; c++)
		if (*c < 32 || *c > 126)
			*c = '?';
	if (h.format_version < GCB_FORMAT_OLDEST || h.format_version > GCB_FORMAT_VERSION ||
	    h.header_size != GCB_HEADER_SIZE) {
		rc = gc_error_set(err, GC_EUNSUPPORTED,
				  "%s: program format version %u (written by graphcc %s); this "
				  "graphcc %s reads versions %d to %d: compile the model again",
				  path, h.format_version, ver, GC_VERSION_STRING, GCB_FORMAT_OLDEST,
				  GCB_FORMAT_VERSION);
		goto fail;
	}
	if (h.file_size != len) {
		rc = gc_error_set(err, GC_EINVAL,
				  "%s: the program is %zu bytes but says it is %" PRIu64
				  " (truncated or corrupted)",
				  path, len, h.file_size);
		goto fail;
	}
	if (h.meta_offset != GCB_HEADER_SIZE || h.meta_size > len - h.meta_offset ||
	    h.weights_offset < h.meta_offset + h.meta_size || h.weights_offset > len ||
	    h.weights_size != len - h.weights_offset || h.weights_offset % GCB_WEIGHTS_ALIGN) {
		rc = gc_error_set(err, GC_EINVAL, "%s: corrupted program (section table)", path);
		goto fail;
	}
	if (XXH3_64bits(base + h.meta_offset, h.meta_size) != h.meta_xxh3 ||
	    XXH3_64bits(base + h.weights_offset, h.weights_size) != h.weights_xxh3) {
		rc = gc_error_set(err, GC_EINVAL,
				  "%s: corrupted program: the %s checksum does not match", path,
				  XXH3_64bits(base + h.meta_offset, h.meta_size) != h.meta_xxh3
					  ? "metadata"
					  : "weights");
		goto fail;
	}
	p->format_version = h.format_version;
	p->graphcc_version = gc_pool_strdup(p->pool, ver);
	rd r = { .p = base + h.meta_offset, .n = (size_t)h.meta_size, .path = path, .dir = dir,
		 .err = err, .pool = p->pool, .what = "string table", .opt = opt,
		 .version = h.format_version };
	uint32_t nstr;
	if ((rc = r_u32(&r, &nstr)))
		goto fail;
	if (nstr > r.n - r.at || (nstr && r.p[r.at + nstr - 1] != 0)) {
		rc = bad(&r, "the string table is malformed");
		goto fail;
	}
	r.strings = (const char *)r.p + r.at;
	r.n_strings = nstr;
	r.at += nstr;
	if ((rc = check_libraries(&r, p, opt)) ||
	    (rc = read_program(&r, p, base + h.weights_offset, h.weights_size, 0)))
		goto fail;
	if (r.at != r.n && (rc = read_states(&r, p)))
		goto fail;
	if (r.at != r.n) {
		rc = bad(&r, "%zu bytes of metadata left over", r.n - r.at);
		goto fail;
	}
	p->inspect_only = opt && opt->inspect_only;
	if (!p->inspect_only && (rc = bind_libraries(&r, p)))
		goto fail;
	*out = p;
	return 0;
fail:
	gc_program_free(p);
	return rc;
}
