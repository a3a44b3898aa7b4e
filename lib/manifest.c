/*
 * Manifest parsing with libyaml's document API. Every error names
 * file:line:column and the key; unknown keys get a "did you mean".
 */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../runtime/build.h"
#include "manifest-tests.h"
#include "package-impl.h"

#define MAX_ITEMS 1024 /* inputs, outputs, params, implementations per op */
#define MAX_OPS 4096   /* operations per manifest */
#define GC_MANIFEST_MAX_DEPTH 64 /* lists and maps inside each other (README) */

typedef struct parser {
	const char *path;
	const char *file; /* path, copied into the package's pool */
	char dir[PATH_MAX];
	yaml_document_t *doc;
	gc_pool *pool;
	gc_error *err;
	void (*note)(void *, const char *);
	void *user;
	bool skip_tests; /* loading to run: self-tests matter to test-package only */
} parser;


static int fail_at(parser *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int fail_at(parser *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int line = n ? (int)n->start_mark.line + 1 : 1, col = n ? (int)n->start_mark.column + 1 : 1;
	if (key)
		return gc_error_set(p->err, GC_EINVAL, "%s:%d:%d: key '%s': %s", p->path, line, col,
				    key, msg);
	return gc_error_set(p->err, GC_EINVAL, "%s:%d:%d: %s", p->path, line, col, msg);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Every key the parser knows, per kind of mapping: the tables it checks
 * with, and what tests/unit/test-manifest-schema.c checks
 * config/manifest.schema.json against (gc_manifest_sections). */
static const char *const op_keys[] = {
	"name",		    "type",   "package",    "domain",	  "version",
	"pure",		    "inputs", "outputs",    "params",	  "parameters",
	"functionsLibrary", "verify", "inferShape", "selectImpl", "implementations",
	"tests",	    NULL,
};
static const char *const in_keys[] = { "name",	   "maxDims",  "constant", "dtypes",
				       "optional", "variadic", NULL };
static const char *const out_keys[] = { "name", "maxDims", "dtypes", "optional", NULL };
static const char *const param_keys[] = { "name", "datatype", "dataType", "scalar",
					  "size", "default",  "attribute", NULL };
static const char *const impl_keys[] = { "backend", "type",	     "impl",	 "symbol",
					 "config",  "init",	     "destroy", "scratch",
					 "scratchBytes", "inplace", "accepts", NULL };
static const char *const accepts_keys[] = { "input", "dtypes", "ranks", "lastDimMultipleOf",
					    NULL };

const gc_manifest_section gc_manifest_sections[] = {
	{ "operation", op_keys },
	{ "input", in_keys },
	{ "output", out_keys },
	{ "param", param_keys },
	{ "implementation", impl_keys },
	{ "acceptsRule", accepts_keys },
	{ "test", gc_manifest_test_keys },
	{ "testTensor", gc_manifest_tensor_keys },
	{ NULL, NULL },
};

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 40 || lb > 40)
		return 99;
	size_t d[41][41];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t c = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1])
					   ? 0
					   : 1;
			size_t m = d[i - 1][j - 1] + c;
			if (d[i - 1][j] + 1 < m)
				m = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < m)
				m = d[i][j - 1] + 1;
			d[i][j] = m;
		}
	return d[la][lb];
}

/* The keys a mapping may hold. */
typedef struct keyset {
	const char *const *keys;
} keyset;

/* Checks a mapping's keys: scalars, known, not repeated. */
static int check_keys(parser *p, const yaml_node_t *map, const char *what,
		      const char *const *keys)
{
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top;
	     a++) {
		yaml_node_t *kn = yaml_document_get_node(p->doc, a->key);
		const char *k = scalar(kn);
		if (!k)
			return fail_at(p, kn, NULL, "%s: keys must be plain names", what);
		bool known = false;
		for (int i = 0; keys[i]; i++)
			known |= !strcmp(keys[i], k);
		if (!known && !strcmp(k, "inferType") && !strcmp(what, "an operation"))
			return fail_at(p, kn, k,
				       "unknown key in %s: graphcc has no separate inferType; "
				       "inferShape sets each output's dtype with its shape (checked "
				       "against the output's dtypes:)",
				       what);
		if (!known) {
			const char *best = gc_manifest_suggest(k, keys);
			if (best)
				return fail_at(p, kn, k, "unknown key in %s; did you mean '%s'?", what,
					       best);
			char list[512] = "";
			size_t at = 0;
			for (int i = 0; keys[i] && at < sizeof list; i++)
				at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
						       i ? ", " : "", keys[i]);
			return fail_at(p, kn, k, "unknown key in %s (known keys: %s)", what, list);
		}
		for (yaml_node_pair_t *b = map->data.mapping.pairs.start; b < a; b++) {
			const char *k2 = scalar(yaml_document_get_node(p->doc, b->key));
			if (k2 && !strcmp(k, k2))
				return fail_at(p, kn, k, "given twice in %s", what);
		}
	}
	return 0;
}

/* The value of key (or its alias) in map, or NULL; *kname gets the spelling
 * used. */
static yaml_node_t *get(parser *p, const yaml_node_t *map, const char *key, const char *alias,
			const char **kname)
{
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top;
	     a++) {
		const char *k = scalar(yaml_document_get_node(p->doc, a->key));
		if (k && (!strcmp(k, key) || (alias && !strcmp(k, alias)))) {
			if (kname)
				*kname = k;
			return yaml_document_get_node(p->doc, a->value);
		}
	}
	if (kname)
		*kname = key;
	return NULL;
}

static int need_string(parser *p, const yaml_node_t *map, const char *key, const char *alias,
		       const char *what, const char **out)
{
	const char *kn;
	yaml_node_t *v = get(p, map, key, alias, &kn);
	if (!v)
		return fail_at(p, map, key, "missing in %s (required)", what);
	const char *s = scalar(v);
	if (!s)
		return fail_at(p, v, kn, "expected a text value");
	if (!s[0])
		return fail_at(p, v, kn, "must not be empty");
	*out = gc_pool_strdup(p->pool, s);
	return *out ? 0 : gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
}

static int opt_string(parser *p, const yaml_node_t *map, const char *key, const char *alias,
		      const char **out)
{
	const char *kn;
	yaml_node_t *v = get(p, map, key, alias, &kn);
	*out = NULL;
	if (!v)
		return 0;
	const char *s = scalar(v);
	if (!s)
		return fail_at(p, v, kn, "expected a text value");
	*out = gc_pool_strdup(p->pool, s);
	return *out ? 0 : gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
}

static int parse_bool_text(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "on", "On", NULL };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "off", "Off", NULL };
	for (int i = 0; yes[i]; i++)
		if (!strcmp(s, yes[i]))
			return *out = true, 0;
	for (int i = 0; no[i]; i++)
		if (!strcmp(s, no[i]))
			return *out = false, 0;
	return -1;
}

static int parse_int_text(const char *s, int64_t *out)
{
	if (!*s)
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_float_text(const char *s, double *out)
{
	if (!*s)
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end || errno == ERANGE) {
		if (!strcmp(s, ".inf") || !strcmp(s, ".Inf"))
			return *out = INFINITY, 0;
		if (!strcmp(s, "-.inf") || !strcmp(s, "-.Inf"))
			return *out = -INFINITY, 0;
		if (!strcmp(s, ".nan") || !strcmp(s, ".NaN"))
			return *out = NAN, 0;
		return -1;
	}
	*out = v;
	return 0;
}

static int opt_bool(parser *p, const yaml_node_t *map, const char *key, bool *out)
{
	yaml_node_t *v = get(p, map, key, NULL, NULL);
	if (!v)
		return 0;
	const char *s = scalar(v);
	if (!s || parse_bool_text(s, out))
		return fail_at(p, v, key, "expected true or false, not '%s'", s ? s : "(a list or map)");
	return 0;
}

static int opt_int(parser *p, const yaml_node_t *map, const char *key, const char *alias,
		   int64_t lo, int64_t hi, bool *present, int64_t *out)
{
	const char *kn;
	yaml_node_t *v = get(p, map, key, alias, &kn);
	*present = v != NULL;
	if (!v)
		return 0;
	const char *s = scalar(v);
	int64_t x;
	if (!s || parse_int_text(s, &x))
		return fail_at(p, v, kn, "expected a whole number, not '%s'",
			       s ? s : "(a list or map)");
	if (x < lo || x > hi)
		return fail_at(p, v, kn, "%" PRId64 " is out of range (%" PRId64 " to %" PRId64 ")",
			       x, lo, hi);
	*out = x;
	return 0;
}

/* A path relative to the manifest's folder. */
static const char *resolve(parser *p, const char *rel)
{
	if (rel[0] == '/' || gc_dynlib_is_inprocess(rel))
		return gc_pool_strdup(p->pool, rel);
	char buf[PATH_MAX * 2];
	snprintf(buf, sizeof buf, "%s/%s", p->dir, rel);
	return gc_pool_strdup(p->pool, buf);
}

static int check_name_unique(parser *p, const yaml_node_t *at, const char *key, const char *name,
			     const char *const *seen, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(seen[i], name))
			return fail_at(p, at, key, "'%s' is declared twice", name);
	return 0;
}

/* The seed's quantized types, as a manifest spells them. */
static const struct {
	const char *name;
	CustomOpDataType dt;
} qtype_names[] = {
	{ "qint8", DTQInt8 }, { "quint8", DTQUInt8 }, { "qint16", DTQInt16 }, { "qint32", DTQInt32 },
};

/* dtypes: plain element types into *mask (bit 1 << gc_dtype); quantized
 * ones (qint8 ...) into *qmask (bit 1 << CustomOpDataType) where qmask is
 * given (an input's or output's list), refused elsewhere. A list of only
 * quantized types leaves *mask = GC_IO_NO_PLAIN_DTYPES: no plain type. */
static int parse_dtypes(parser *p, const yaml_node_t *v, uint32_t *mask, uint32_t *qmask)
{
	*mask = 0;
	if (qmask)
		*qmask = 0;
	if (v->type != YAML_SEQUENCE_NODE)
		return fail_at(p, v, "dtypes", "expected a list of element types, e.g. [float32]");
	for (yaml_node_item_t *it = v->data.sequence.items.start; it < v->data.sequence.items.top;
	     it++) {
		yaml_node_t *e = yaml_document_get_node(p->doc, *it);
		const char *s = scalar(e);
		bool quantized = false;
		for (size_t q = 0; s && q < sizeof qtype_names / sizeof qtype_names[0]; q++) {
			if (strcmp(s, qtype_names[q].name))
				continue;
			if (!qmask)
				return fail_at(p, e, "dtypes",
					       "'%s' is a quantized type: it belongs in an input's or "
					       "output's dtypes (an accepts rule sees the integer "
					       "type, e.g. int8 for qint8)",
					       s);
			*qmask |= 1u << qtype_names[q].dt;
			quantized = true;
		}
		if (quantized)
			continue;
		gc_dtype dt = s ? gc_dtype_from_name(s) : GC_DTYPE_UNDEFINED;
		if (s && !strcmp(s, "float"))
			dt = GC_DTYPE_FLOAT;
		if (s && !strcmp(s, "double"))
			dt = GC_DTYPE_DOUBLE;
		if (dt == GC_DTYPE_UNDEFINED || dt == GC_DTYPE_STRING || dt >= 32)
			return fail_at(p, e, "dtypes",
				       "'%s' is not an element type (float32, float64, float16, "
				       "bfloat16, int8, int16, int32, int64, uint8, uint16, uint32, "
				       "uint64, bool%s)",
				       s ? s : "(a list or map)",
				       qmask ? "; quantized: qint8, quint8, qint16, qint32" : "");
		*mask |= 1u << dt;
	}
	if (qmask && *qmask && !*mask)
		*mask = GC_IO_NO_PLAIN_DTYPES;
	return 0;
}

static int parse_ios(parser *p, const yaml_node_t *op, const char *key, bool is_input,
		     gc_io_spec **out, int32_t *n_out)
{
	yaml_node_t *list = get(p, op, key, NULL, NULL);
	*out = NULL;
	*n_out = 0;
	if (!list)
		return fail_at(p, op, key, "missing (required; use [] for none)");
	if (list->type != YAML_SEQUENCE_NODE)
		return fail_at(p, list, key, "expected a list");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n > MAX_ITEMS)
		return fail_at(p, list, key, "more than %d entries", MAX_ITEMS);
	gc_io_spec *ios = gc_pool_alloc(p->pool, (n + 1) * sizeof *ios);
	const char **seen = gc_pool_alloc(p->pool, (n + 1) * sizeof *seen);
	if (!ios || !seen)
		return gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = yaml_document_get_node(p->doc, list->data.sequence.items.start[i]);
		char what[64];
		snprintf(what, sizeof what, "%s entry %zu", key, i + 1);
		if (e->type != YAML_MAPPING_NODE)
			return fail_at(p, e, key, "entry %zu: expected a mapping with name and maxDims",
				       i + 1);
		if (check_keys(p, e, what, is_input ? in_keys : out_keys))
			return p->err->code;
		gc_io_spec *io = &ios[i];
		io->line = (int)e->start_mark.line + 1;
		io->col = (int)e->start_mark.column + 1;
		if (need_string(p, e, "name", NULL, what, &io->name) ||
		    check_name_unique(p, get(p, e, "name", NULL, NULL), "name", io->name, seen, (int)i))
			return p->err->code;
		seen[i] = io->name;
		bool present;
		int64_t md = 0;
		if (opt_int(p, e, "maxDims", NULL, 0, GC_MAX_RANK, &present, &md))
			return p->err->code;
		if (!present)
			return fail_at(p, e, "maxDims", "missing in %s '%s' (required: its rank bound)",
				       what, io->name);
		io->max_dims = (int32_t)md;
		if (opt_bool(p, e, "constant", &io->constant) ||
		    opt_bool(p, e, "optional", &io->optional) ||
		    opt_bool(p, e, "variadic", &io->variadic))
			return p->err->code;
		if (io->variadic && i + 1 != n)
			return fail_at(p, get(p, e, "variadic", NULL, NULL), "variadic",
				       "only the last input may be variadic");
		yaml_node_t *dt = get(p, e, "dtypes", NULL, NULL);
		if (dt && parse_dtypes(p, dt, &io->dtypes, &io->qtypes))
			return p->err->code;
	}
	*out = ios;
	*n_out = (int32_t)n;
	return 0;
}

/* Converts one default value scalar into dst (sized for the kind). */
static int default_value(parser *p, const yaml_node_t *v, gc_param_kind kind, void *dst)
{
	const char *s = scalar(v);
	if (!s)
		return fail_at(p, v, "default", "expected a %s value", gc_param_kind_name(kind));
	switch (kind) {
	case GC_PARAM_BOOL: {
		bool b;
		if (parse_bool_text(s, &b))
			return fail_at(p, v, "default", "'%s' is not a bool (true or false)", s);
		*(uint8_t *)dst = b;
		return 0;
	}
	case GC_PARAM_INT:
		if (parse_int_text(s, dst))
			return fail_at(p, v, "default", "'%s' is not an int", s);
		return 0;
	case GC_PARAM_FLOAT: {
		double d;
		if (parse_float_text(s, &d))
			return fail_at(p, v, "default", "'%s' is not a float", s);
		*(float *)dst = (float)d;
		return 0;
	}
	case GC_PARAM_STRING:
		*(const char **)dst = gc_pool_strdup(p->pool, s);
		return *(const char **)dst ? 0 : gc_error_set(p->err, GC_ENOMEM, "out of memory");
	default:
		return fail_at(p, v, "default", "bad kind");
	}
}

static size_t kind_size(gc_param_kind k)
{
	switch (k) {
	case GC_PARAM_BOOL:
		return 1;
	case GC_PARAM_INT:
		return 8;
	case GC_PARAM_FLOAT:
		return 4;
	default:
		return sizeof(char *);
	}
}

static int parse_params(parser *p, const yaml_node_t *op, gc_op_spec *spec)
{
	const char *kn;
	yaml_node_t *list = get(p, op, "params", "parameters", &kn);
	if (!list)
		return 0;
	if (list->type != YAML_SEQUENCE_NODE)
		return fail_at(p, list, kn, "expected a list");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n > MAX_ITEMS)
		return fail_at(p, list, kn, "more than %d entries", MAX_ITEMS);
	spec->params = gc_pool_alloc(p->pool, (n + 1) * sizeof *spec->params);
	const char **seen = gc_pool_alloc(p->pool, (n + 1) * sizeof *seen);
	if (!spec->params || !seen)
		return gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = yaml_document_get_node(p->doc, list->data.sequence.items.start[i]);
		char what[64];
		snprintf(what, sizeof what, "params entry %zu", i + 1);
		if (e->type != YAML_MAPPING_NODE)
			return fail_at(p, e, kn, "entry %zu: expected a mapping with name and datatype",
				       i + 1);
		if (check_keys(p, e, what, param_keys))
			return p->err->code;
		gc_param_spec *ps = &spec->params[i];
		ps->line = (int)e->start_mark.line + 1;
		ps->col = (int)e->start_mark.column + 1;
		const char *dtname;
		if (need_string(p, e, "name", NULL, what, &ps->name) ||
		    check_name_unique(p, get(p, e, "name", NULL, NULL), "name", ps->name, seen, (int)i) ||
		    need_string(p, e, "datatype", "dataType", what, &dtname))
			return p->err->code;
		seen[i] = ps->name;
		const char *dkey;
		yaml_node_t *dtn = get(p, e, "datatype", "dataType", &dkey);
		ps->kind = GC_PARAM_KIND_COUNT;
		for (int k = 0; k < GC_PARAM_KIND_COUNT; k++)
			if (!strcmp(dtname, gc_param_kind_name((gc_param_kind)k)))
				ps->kind = (gc_param_kind)k;
		if (ps->kind == GC_PARAM_KIND_COUNT)
			return fail_at(p, dtn, dkey, "'%s' is not a param type (bool, int, float, string)",
				       dtname);
		ps->scalar = true;
		if (opt_bool(p, e, "scalar", &ps->scalar) || opt_string(p, e, "attribute", NULL, &ps->attribute))
			return p->err->code;
		if (!ps->attribute)
			ps->attribute = ps->name;
		bool has_size;
		int64_t size = -1;
		if (opt_int(p, e, "size", NULL, 1, 1 << 20, &has_size, &size))
			return p->err->code;
		if (has_size && ps->scalar)
			return fail_at(p, get(p, e, "size", NULL, NULL), "size",
				       "param '%s' is a scalar; only vectors (scalar: false) have a size",
				       ps->name);
		ps->size = has_size ? (int32_t)size : -1;
		yaml_node_t *def = get(p, e, "default", NULL, NULL);
		if (!def)
			continue;
		ps->has_default = true;
		size_t es = kind_size(ps->kind);
		if (ps->scalar) {
			if (def->type != YAML_SCALAR_NODE)
				return fail_at(p, def, "default", "param '%s' is a scalar; the default must "
								  "be one value",
					       ps->name);
			ps->default_data = gc_pool_alloc(p->pool, es);
			if (!ps->default_data)
				return gc_error_set(p->err, GC_ENOMEM, "out of memory");
			if (default_value(p, def, ps->kind, ps->default_data))
				return p->err->code;
			if (ps->kind == GC_PARAM_STRING) /* a scalar string is the text itself */
				ps->default_data = *(char **)ps->default_data;
			continue;
		}
		if (def->type != YAML_SEQUENCE_NODE)
			return fail_at(p, def, "default", "param '%s' is a vector; the default must be "
							  "a list, e.g. [1, 2]",
				       ps->name);
		size_t dn = (size_t)(def->data.sequence.items.top - def->data.sequence.items.start);
		if (dn > (1u << 20))
			return fail_at(p, def, "default", "too many values");
		if (ps->size >= 0 && (int64_t)dn != ps->size)
			return fail_at(p, def, "default",
				       "param '%s' has size %d but its default has %zu values", ps->name,
				       ps->size, dn);
		ps->default_data = gc_pool_alloc(p->pool, (dn + 1) * es);
		if (!ps->default_data)
			return gc_error_set(p->err, GC_ENOMEM, "out of memory");
		for (size_t j = 0; j < dn; j++)
			if (default_value(p, yaml_document_get_node(p->doc, def->data.sequence.items.start[j]),
					  ps->kind, (char *)ps->default_data + j * es))
				return p->err->code;
		ps->default_count = (int32_t)dn;
	}
	spec->n_params = (int32_t)n;
	return 0;
}

static int parse_accepts(parser *p, const yaml_node_t *list, const gc_op_spec *spec,
			 gc_impl_spec *im);

static int parse_impls(parser *p, const yaml_node_t *op, gc_op_spec *spec)
{
	yaml_node_t *list = get(p, op, "implementations", NULL, NULL);
	if (!list)
		return fail_at(p, op, "implementations", "missing (required: at least one kernel)");
	if (list->type != YAML_SEQUENCE_NODE)
		return fail_at(p, list, "implementations", "expected a list");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n == 0)
		return fail_at(p, list, "implementations", "empty: at least one kernel is needed");
	if (n > MAX_ITEMS)
		return fail_at(p, list, "implementations", "more than %d entries", MAX_ITEMS);
	spec->impls = gc_pool_alloc(p->pool, (n + 1) * sizeof *spec->impls);
	if (!spec->impls)
		return gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = yaml_document_get_node(p->doc, list->data.sequence.items.start[i]);
		char what[64];
		snprintf(what, sizeof what, "implementations entry %zu", i + 1);
		if (e->type != YAML_MAPPING_NODE)
			return fail_at(p, e, "implementations", "entry %zu: expected a mapping", i + 1);
		if (check_keys(p, e, what, impl_keys))
			return p->err->code;
		gc_impl_spec *im = &spec->impls[i];
		im->line = (int)e->start_mark.line + 1;
		im->col = (int)e->start_mark.column + 1;
		const char *impl;
		if (need_string(p, e, "backend", NULL, what, &im->backend) ||
		    need_string(p, e, "type", NULL, what, &im->type) ||
		    need_string(p, e, "impl", NULL, what, &impl) ||
		    opt_string(p, e, "symbol", NULL, &im->symbol) ||
		    opt_string(p, e, "config", NULL, &im->config) ||
		    opt_string(p, e, "init", NULL, &im->init) ||
		    opt_string(p, e, "destroy", NULL, &im->destroy) ||
		    opt_string(p, e, "scratch", NULL, &im->scratch) ||
		    opt_bool(p, e, "inplace", &im->inplace))
			return p->err->code;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(spec->impls[j].type, im->type) &&
			    !strcmp(spec->impls[j].backend, im->backend))
				return fail_at(p, get(p, e, "type", NULL, NULL), "type",
					       "implementation '%s' for backend %s is declared twice",
					       im->type, im->backend);
		int64_t sb = 0;
		if (opt_int(p, e, "scratchBytes", NULL, 0, INT64_MAX, &im->has_scratch_bytes, &sb))
			return p->err->code;
		im->scratch_bytes = (uint64_t)sb;
		if (im->has_scratch_bytes && im->scratch)
			return fail_at(p, get(p, e, "scratchBytes", NULL, NULL), "scratchBytes",
				       "give either scratch (a function) or scratchBytes, not both");
		if (!(im->destroy == NULL || im->init))
			return fail_at(p, get(p, e, "destroy", NULL, NULL), "destroy",
				       "a destroy function needs an init function");
		yaml_node_t *acc = get(p, e, "accepts", NULL, NULL);
		if (acc && parse_accepts(p, acc, spec, im))
			return p->err->code;
		im->impl = resolve(p, impl);
		if (!im->symbol)
			im->symbol = im->type;
		if (!im->config)
			im->config = "";
		if (!im->impl)
			return gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
		if (!gc_backend_find(im->backend)) {
			im->skipped = true;
			if (p->note) {
				char msg[512], names[128];
				snprintf(msg, sizeof msg,
					 "%s:%d:%d: implementation '%s' for backend '%s' skipped: this "
					 "build has only the %s backend%s",
					 p->path, im->line, im->col, im->type, im->backend,
					 gc_backend_names(names, sizeof names), gc_n_backends > 1 ? "s" : "");
				p->note(p->user, msg);
			}
		}
	}
	spec->n_impls = (int32_t)n;
	return 0;
}

/* accepts: [{input: NAME, dtypes: [...], ranks: [...], lastDimMultipleOf: N}] */
static int parse_accepts(parser *p, const yaml_node_t *list, const gc_op_spec *spec,
			 gc_impl_spec *im)
{
	if (list->type != YAML_SEQUENCE_NODE)
		return fail_at(p, list, "accepts",
			       "expected a list of rules, e.g. [{input: x, lastDimMultipleOf: 8}]");
	size_t n = (size_t)(list->data.sequence.items.top - list->data.sequence.items.start);
	if (n > MAX_ITEMS)
		return fail_at(p, list, "accepts", "more than %d rules", MAX_ITEMS);
	im->accepts = gc_pool_alloc(p->pool, (n + 1) * sizeof *im->accepts);
	if (!im->accepts)
		return gc_error_set(p->err, GC_ENOMEM, "%s: out of memory", p->path);
	for (size_t i = 0; i < n; i++) {
		yaml_node_t *e = yaml_document_get_node(p->doc, list->data.sequence.items.start[i]);
		gc_accept_rule *r = &im->accepts[i];
		const char *name;
		if (e->type != YAML_MAPPING_NODE)
			return fail_at(p, e, "accepts", "rule %zu: expected a mapping", i + 1);
		if (check_keys(p, e, "an accepts rule", accepts_keys) ||
		    need_string(p, e, "input", NULL, "an accepts rule", &name))
			return p->err->code;
		r->line = (int)e->start_mark.line + 1;
		r->input = -1;
		for (int32_t k = 0; k < spec->n_inputs; k++)
			if (!strcmp(spec->inputs[k].name, name))
				r->input = k;
		if (r->input < 0)
			return fail_at(p, get(p, e, "input", NULL, NULL), "input",
				       "operation '%s' has no input named '%s'", spec->name, name);
		yaml_node_t *v = get(p, e, "dtypes", NULL, NULL);
		if (v && parse_dtypes(p, v, &r->dtypes, NULL))
			return p->err->code;
		if ((v = get(p, e, "ranks", NULL, NULL))) {
			if (v->type != YAML_SEQUENCE_NODE)
				return fail_at(p, v, "ranks", "expected a list of ranks, e.g. [2, 3]");
			for (yaml_node_item_t *it = v->data.sequence.items.start;
			     it < v->data.sequence.items.top; it++) {
				const char *t = scalar(yaml_document_get_node(p->doc, *it));
				int64_t rk;
				if (!t || parse_int_text(t, &rk) || rk < 0 || rk > GC_MAX_RANK)
					return fail_at(p, v, "ranks", "'%s' is not a rank (0 to %d)",
						       t ? t : "(a list or map)", GC_MAX_RANK);
				r->ranks |= 1u << rk;
			}
		}
		bool present;
		if (opt_int(p, e, "lastDimMultipleOf", NULL, 1, INT32_MAX, &present,
			    &r->last_dim_multiple))
			return p->err->code;
	}
	im->n_accepts = (int32_t)n;
	return 0;
}

static int parse_op(parser *p, const yaml_node_t *root, gc_op_spec *spec)
{
	if (root->type != YAML_MAPPING_NODE)
		return fail_at(p, root, NULL,
			       "an operation must be a mapping (name:, type:, package:, ...), not a "
			       "%s",
			       root->type == YAML_SEQUENCE_NODE ? "list" : "single value");
	if (check_keys(p, root, "an operation", op_keys))
		return p->err->code;
	spec->file = p->file; /* the pool's copy: the caller's string may not live */
	spec->line = (int)root->start_mark.line + 1;
	spec->col = (int)root->start_mark.column + 1;
	if (need_string(p, root, "type", NULL, "the operation", &spec->type) ||
	    opt_string(p, root, "name", NULL, &spec->name) ||
	    need_string(p, root, "package", "domain", "the operation", &spec->domain) ||
	    opt_bool(p, root, "pure", &spec->pure))
		return p->err->code;
	if (!spec->name)
		spec->name = spec->type;
	if (!strcmp(spec->domain, "ai.onnx")) {
		const char *kn;
		yaml_node_t *dn = get(p, root, "package", "domain", &kn);
		return fail_at(p, dn, kn,
			       "'%s' is ONNX's default domain; an op package needs a domain of its "
			       "own (e.g. com.example.vision)",
			       spec->domain);
	}
	bool has_version;
	spec->version = -1;
	if (opt_int(p, root, "version", NULL, 1, INT32_MAX, &has_version, &spec->version))
		return p->err->code;
	if (!has_version)
		spec->version = -1;
	if (parse_ios(p, root, "inputs", true, &spec->inputs, &spec->n_inputs) ||
	    parse_ios(p, root, "outputs", false, &spec->outputs, &spec->n_outputs) ||
	    parse_params(p, root, spec))
		return p->err->code;
	if (spec->n_outputs == 0)
		return fail_at(p, get(p, root, "outputs", NULL, NULL), "outputs",
			       "an operation needs at least one output");
	const char *fl;
	if (need_string(p, root, "functionsLibrary", NULL, "the operation", &fl))
		return p->err->code;
	yaml_node_t *fln = get(p, root, "functionsLibrary", NULL, NULL);
	spec->fl_line = (int)fln->start_mark.line + 1;
	spec->fl_col = (int)fln->start_mark.column + 1;
	spec->functions_library = resolve(p, fl);
	if (opt_string(p, root, "verify", NULL, &spec->verify) ||
	    opt_string(p, root, "inferShape", NULL, &spec->infer_shape) ||
	    opt_string(p, root, "selectImpl", NULL, &spec->select_impl))
		return p->err->code;
	if (!spec->verify)
		spec->verify = "customOpVerify";
	if (!spec->infer_shape)
		spec->infer_shape = "customOpInferShape";
	if (!spec->select_impl)
		spec->select_impl = "customOpSelectImpl";
	if (parse_impls(p, root, spec))
		return p->err->code;
	/* Self-tests (lib/manifest-tests.c): checked here, run by test-package. */
	yaml_node_t *tests = get(p, root, "tests", NULL, NULL);
	if (tests && !p->skip_tests && gc_manifest_tests_parse(p->path, p->dir, p->doc, tests, spec, NULL, NULL, NULL,
					     p->err))
		return p->err->code;
	return 0;
}

void gc_package_free(gc_package *pkg)
{
	if (!pkg)
		return;
	for (int32_t i = 0; i < pkg->n_ops; i++) {
		gc_dynlib_release(pkg->ops[i].fnlib);
		for (int32_t j = 0; j < pkg->ops[i].n_impls; j++)
			gc_dynlib_release(pkg->ops[i].impls[j].lib);
	}
	gc_pool_free(pkg->pool);
	gc_free(pkg);
}

/*
 * Bounds the nesting of flow and block collections before libyaml builds
 * documents: it takes time quadratic in the depth (80,000 levels: 14 s) and
 * the manifest's own structure is a few levels deep (test values add one
 * per tensor dimension). Syntax errors are left for the loader to report.
 */
static int check_yaml_depth(const char *path, const void *buf, size_t len, gc_error *err)
{
	yaml_parser_t yp;
	if (!yaml_parser_initialize(&yp))
		return gc_error_set(err, GC_ENOMEM, "%s: cannot start the YAML parser", path);
	yaml_parser_set_input_string(&yp, buf, len);
	int rc = 0, depth = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&yp, &ev))
			break;
		yaml_event_type_t t = ev.type;
		if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
			if (++depth > GC_MANIFEST_MAX_DEPTH)
				rc = gc_error_set(err, GC_ELIMIT,
						  "%s:%zu:%zu: lists and maps nest more than %d deep "
						  "(the most a manifest may)",
						  path, ev.start_mark.line + 1, ev.start_mark.column + 1,
						  GC_MANIFEST_MAX_DEPTH);
		} else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		yaml_event_delete(&ev);
		if (rc || t == YAML_STREAM_END_EVENT)
			break;
	}
	yaml_parser_delete(&yp);
	return rc;
}

static int parse_manifest(const char *path, gc_package **out, void (*note)(void *, const char *),
			  void *user, bool skip_tests, gc_error *err)
{
	*out = NULL;
	void *buf;
	size_t len;
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	if (check_yaml_depth(path, buf, len, err)) {
		gc_free(buf);
		return err->code;
	}
	parser p = { .path = path, .err = err, .note = note, .user = user,
		     .skip_tests = skip_tests };
	/* Library paths become absolute: a compiled program names them, and
	 * it may run from another folder. */
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	if (!realpath(dirname(tmp), p.dir))
		snprintf(p.dir, sizeof p.dir, "%s", dirname(tmp));

	gc_package *pkg = gc_calloc(1, sizeof *pkg);
	gc_pool *pool = gc_pool_new();
	yaml_parser_t yp;
	bool yp_ok = false;
	int rc = 0;
	int32_t cap = 0;
	if (!pkg || !pool) {
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	pkg->pool = pool;
	/* Operations remember their manifest by absolute path: compiled
	 * programs record it (for --compare-flavours), and may run elsewhere. */
	char real[PATH_MAX];
	pkg->path = gc_pool_strdup(pool, realpath(path, real) ? real : path);
	p.file = pkg->path;
	p.pool = pool;
	if (!pkg->path) {
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
		goto out;
	}
	if (!yaml_parser_initialize(&yp)) {
		rc = gc_error_set(err, GC_ENOMEM, "%s: cannot start the YAML parser", path);
		goto out;
	}
	yp_ok = true;
	yaml_parser_set_input_string(&yp, buf, len);
	for (;;) {
		yaml_document_t doc;
		if (!yaml_parser_load(&yp, &doc)) {
			/* Point at what is left open (the context) when libyaml
			 * names one: that is where the mistake is; it notices
			 * only later. */
			if (yp.context)
				rc = gc_error_set(err, GC_EINVAL,
						  "%s:%zu:%zu: YAML syntax error %s: %s (noticed at "
						  "line %zu, column %zu)",
						  path, yp.context_mark.line + 1,
						  yp.context_mark.column + 1, yp.context,
						  yp.problem ? yp.problem : "malformed",
						  yp.problem_mark.line + 1, yp.problem_mark.column + 1);
			else
				rc = gc_error_set(err, GC_EINVAL, "%s:%zu:%zu: YAML syntax error: %s",
						  path, yp.problem_mark.line + 1,
						  yp.problem_mark.column + 1,
						  yp.problem ? yp.problem : "malformed");
			goto out;
		}
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			break;
		}
		if (pkg->n_ops == MAX_OPS) {
			yaml_document_delete(&doc);
			rc = gc_error_set(err, GC_ELIMIT, "%s: more than %d operations", path, MAX_OPS);
			goto out;
		}
		if (pkg->n_ops == cap) {
			cap = cap ? cap * 2 : 8;
			gc_op_spec *ops = gc_pool_alloc(pool, (size_t)cap * sizeof *ops);
			if (!ops) {
				yaml_document_delete(&doc);
				rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
				goto out;
			}
			if (pkg->n_ops)
				memcpy(ops, pkg->ops, (size_t)pkg->n_ops * sizeof *ops);
			pkg->ops = ops;
		}
		p.doc = &doc;
		gc_op_spec *spec = &pkg->ops[pkg->n_ops];
		memset(spec, 0, sizeof *spec);
		rc = parse_op(&p, root, spec);
		yaml_document_delete(&doc);
		if (rc)
			goto out;
		for (int32_t i = 0; i < pkg->n_ops; i++) {
			const gc_op_spec *o = &pkg->ops[i];
			if (!strcmp(o->domain, spec->domain) && !strcmp(o->type, spec->type) &&
			    o->version == spec->version) {
				rc = gc_error_set(err, GC_EINVAL,
						  "%s:%d:%d: operation %s::%s (version %" PRId64
						  ") is declared twice (first at line %d)",
						  path, spec->line, spec->col, spec->domain, spec->type,
						  spec->version, o->line);
				goto out;
			}
		}
		pkg->n_ops++;
	}
	if (pkg->n_ops == 0)
		rc = gc_error_set(err, GC_EINVAL, "%s: the manifest declares no operation (it is empty)",
				  path);
out:
	if (yp_ok)
		yaml_parser_delete(&yp);
	gc_free(buf);
	if (rc) {
		if (pkg)
			pkg->n_ops = 0;
		gc_package_free(pkg);
		if (!pkg)
			gc_pool_free(pool);
		return rc;
	}
	*out = pkg;
	return 0;
}

int gc_manifest_parse(const char *path, gc_package **out, void (*note)(void *, const char *),
		      void *user, gc_error *err)
{
	return parse_manifest(path, out, note, user, false, err);
}

int gc_manifest_parse_to_run(const char *path, gc_package **out,
			     void (*note)(void *, const char *), void *user, gc_error *err)
{
	return parse_manifest(path, out, note, user, true, err);
}

const char *gc_manifest_suggest(const char *key, const char *const *keys)
{
	const char *best = NULL;
	size_t bd = 3;
	for (int i = 0; keys[i]; i++) {
		size_t d = edit_distance(key, keys[i]);
		if (d < bd) {
			bd = d;
			best = keys[i];
		}
	}
	return best;
}
