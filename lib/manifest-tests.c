/*
 * Parsing an operation's `tests:` list (see manifest-tests.h and
 * config/manifest-reference.yaml):
 *
 *   tests:
 *     - name: ones                       # optional
 *       inputs:                          # in the operation's input order
 *         - {shape: [2, 3], dtype: float32, values: [1, 2, 3, 4, 5, 6]}
 *         - data/x.npy                   # or {npy: data/x.npy}
 *       params: {alpha: 2.0}             # by param name; the rest take defaults
 *       outputs:                         # expected, same forms as inputs
 *         - {shape: [2, 3], values: [...]}
 *       sameAs: scaledTanhF32            # instead of outputs: another flavour's
 *       tolerance: 1e-5                  # |got - want| <= tol * max(1, |want|)
 *       flavours: [scaledTanhF32]        # optional: the flavours the case is for
 */
#include "manifest-tests.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/build.h"

#define MAX_TESTS 1024
#define MAX_VALUES (1 << 24)

typedef struct tparser {
	const char *path, *dir;
	yaml_document_t *doc;
	gc_pool *pool;
	gc_error *err;
	const gc_op_spec *op;
	const char *test; /* "test 2 ('ones')" for messages */
} tparser;

static int tfail(tparser *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int tfail(tparser *p, const yaml_node_t *n, const char *key, const char *fmt, ...)
{
	char msg[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int line = n ? (int)n->start_mark.line + 1 : 1, col = n ? (int)n->start_mark.column + 1 : 1;
	return gc_error_set(p->err, GC_EINVAL, "%s:%d:%d: key '%s': %s%s%s", p->path, line, col,
			    key, p->test ? p->test : "", p->test ? ": " : "", msg);
}

static const char *sval(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *item(tparser *p, const yaml_node_t *seq, int i)
{
	return yaml_document_get_node(p->doc, seq->data.sequence.items.start[i]);
}

static int seq_len(const yaml_node_t *seq)
{
	return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

/* Keys of a mapping must be among `keys`; returns the value of each. */
static int mapping(tparser *p, const yaml_node_t *map, const char *what, const char *const *keys,
		   yaml_node_t **vals)
{
	for (int i = 0; keys[i]; i++)
		vals[i] = NULL;
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top;
	     a++) {
		yaml_node_t *kn = yaml_document_get_node(p->doc, a->key);
		const char *k = sval(kn);
		if (!k)
			return tfail(p, kn, "tests", "%s: keys must be plain names", what);
		int found = -1;
		for (int i = 0; keys[i]; i++)
			if (!strcmp(keys[i], k))
				found = i;
		if (found < 0) {
			char list[256] = "";
			size_t at = 0;
			for (int i = 0; keys[i] && at < sizeof list; i++)
				at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
						       i ? ", " : "", keys[i]);
			return tfail(p, kn, k, "unknown key in %s (known keys: %s)", what, list);
		}
		if (vals[found])
			return tfail(p, kn, k, "given twice in %s", what);
		vals[found] = yaml_document_get_node(p->doc, a->value);
	}
	return 0;
}

static int parse_double(const char *s, double *out)
{
	if (!s || !*s)
		return -1;
	if (!strcmp(s, "true") || !strcmp(s, "false")) {
		*out = s[0] == 't';
		return 0;
	}
	if (!strcmp(s, ".nan") || !strcmp(s, "nan") || !strcmp(s, "NaN")) {
		*out = NAN;
		return 0;
	}
	if (!strcmp(s, ".inf") || !strcmp(s, "inf")) {
		*out = INFINITY;
		return 0;
	}
	if (!strcmp(s, "-.inf") || !strcmp(s, "-inf")) {
		*out = -INFINITY;
		return 0;
	}
	char *end;
	errno = 0;
	*out = strtod(s, &end);
	return *end || errno == ERANGE ? -1 : 0;
}

/* Flattens a (possibly nested) list of numbers into vals. */
static int flatten(tparser *p, const yaml_node_t *n, const char *key, double *vals, int64_t *count,
		   int64_t cap)
{
	if (n->type == YAML_SCALAR_NODE) {
		if (*count >= cap)
			return tfail(p, n, key, "more than %" PRId64 " values", cap);
		if (parse_double(sval(n), &vals[*count]))
			return tfail(p, n, key, "'%s' is not a number", sval(n));
		(*count)++;
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return tfail(p, n, key, "expected numbers or lists of numbers, not a mapping");
	for (int i = 0; i < seq_len(n); i++)
		if (flatten(p, item(p, n, i), key, vals, count, cap))
			return p->err->code;
	return 0;
}

static int64_t count_scalars(tparser *p, const yaml_node_t *n)
{
	if (n->type == YAML_SCALAR_NODE)
		return 1;
	if (n->type != YAML_SEQUENCE_NODE)
		return 1;
	int64_t c = 0;
	for (int i = 0; i < seq_len(n) && c <= MAX_VALUES; i++)
		c += count_scalars(p, item(p, n, i));
	return c;
}

static uint16_t to_half(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	uint32_t sign = (u >> 16) & 0x8000, man = u & 0x7fffff;
	int exp = (int)((u >> 23) & 0xff) - 127 + 15;
	if (((u >> 23) & 0xff) == 0xff)
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 : 0));
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		if (exp < -10)
			return (uint16_t)sign;
		man |= 0x800000;
		uint32_t shift = (uint32_t)(14 - exp), h = man >> shift;
		uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
	uint32_t rem = man & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	return (uint16_t)h;
}

static void store(void *data, gc_dtype dt, int64_t i, double v)
{
	switch (dt) {
	case GC_DTYPE_FLOAT16: ((uint16_t *)data)[i] = to_half((float)v); break;
	case GC_DTYPE_FLOAT: ((float *)data)[i] = (float)v; break;
	case GC_DTYPE_DOUBLE: ((double *)data)[i] = v; break;
	case GC_DTYPE_INT8: ((int8_t *)data)[i] = (int8_t)v; break;
	case GC_DTYPE_INT16: ((int16_t *)data)[i] = (int16_t)v; break;
	case GC_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)v; break;
	case GC_DTYPE_INT64: ((int64_t *)data)[i] = (int64_t)v; break;
	case GC_DTYPE_UINT8: ((uint8_t *)data)[i] = (uint8_t)v; break;
	case GC_DTYPE_UINT16: ((uint16_t *)data)[i] = (uint16_t)v; break;
	case GC_DTYPE_UINT32: ((uint32_t *)data)[i] = (uint32_t)v; break;
	case GC_DTYPE_UINT64: ((uint64_t *)data)[i] = (uint64_t)v; break;
	case GC_DTYPE_BOOL: ((uint8_t *)data)[i] = v != 0; break;
	default: break;
	}
}

static bool inline_dtype(gc_dtype dt)
{
	return dt == GC_DTYPE_FLOAT || dt == GC_DTYPE_DOUBLE || dt == GC_DTYPE_FLOAT16 || dt == GC_DTYPE_INT8 ||
	       dt == GC_DTYPE_INT16 || dt == GC_DTYPE_INT32 || dt == GC_DTYPE_INT64 ||
	       dt == GC_DTYPE_UINT8 || dt == GC_DTYPE_UINT16 || dt == GC_DTYPE_UINT32 ||
	       dt == GC_DTYPE_UINT64 || dt == GC_DTYPE_BOOL;
}

static int parse_tensor(tparser *p, const yaml_node_t *n, const char *key, gc_test_tensor *tt)
{
	memset(tt, 0, sizeof *tt);
	tt->line = (int)n->start_mark.line + 1;
	tt->col = (int)n->start_mark.column + 1;
	const char *npy = sval(n);
	yaml_node_t *v[5] = { 0 };
	if (!npy) {
		static const char *const keys[] = { "values", "shape", "dtype", "npy", NULL };
		if (n->type != YAML_MAPPING_NODE)
			return tfail(p, n, key,
				     "a tensor is a .npy path or a mapping {values:, shape:, dtype:}");
		if (mapping(p, n, "a test tensor", keys, v))
			return p->err->code;
		if (v[3]) {
			if (v[0] || v[1] || v[2])
				return tfail(p, v[3], "npy", "give either npy: or values:, not both");
			npy = sval(v[3]);
			if (!npy)
				return tfail(p, v[3], "npy", "expected a file path");
		} else if (!v[0]) {
			return tfail(p, n, key, "a tensor needs values: (or npy: FILE)");
		}
	}
	if (npy) {
		if (!*npy)
			return tfail(p, n, key, "empty .npy path");
		char buf[PATH_MAX];
		if (npy[0] == '/')
			snprintf(buf, sizeof buf, "%s", npy);
		else
			snprintf(buf, sizeof buf, "%s/%s", p->dir, npy);
		tt->npy = p->pool ? gc_pool_strdup(p->pool, buf) : "";
		return 0;
	}
	gc_tensor *t = &tt->t;
	t->dtype = GC_DTYPE_FLOAT;
	if (v[2]) {
		const char *d = sval(v[2]);
		t->dtype = d ? gc_dtype_from_name(d) : GC_DTYPE_UNDEFINED;
		if (d && !strcmp(d, "float"))
			t->dtype = GC_DTYPE_FLOAT;
		if (!inline_dtype(t->dtype))
			return tfail(p, v[2], "dtype",
				     "'%s' is not an element type inline values can have (float32, "
				     "float64, float16, int8..int64, uint8..uint64, bool; others: use a .npy "
				     "file)",
				     d ? d : "(not a name)");
	}
	int64_t total = count_scalars(p, v[0]);
	if (total > MAX_VALUES)
		return tfail(p, v[0], "values", "more than %d values", MAX_VALUES);
	double *vals = gc_calloc((size_t)total + 1, sizeof *vals);
	if (!vals)
		return gc_error_set(p->err, GC_ENOMEM, "out of memory");
	int64_t count = 0;
	if (flatten(p, v[0], "values", vals, &count, total)) {
		gc_free(vals);
		return p->err->code;
	}
	if (v[1]) {
		if (v[1]->type != YAML_SEQUENCE_NODE) {
			gc_free(vals);
			return tfail(p, v[1], "shape", "expected a list of dimensions, e.g. [2, 3]");
		}
		if (seq_len(v[1]) > GC_MAX_RANK) {
			gc_free(vals);
			return tfail(p, v[1], "shape", "rank above %d", GC_MAX_RANK);
		}
		t->rank = seq_len(v[1]);
		int64_t numel = 1;
		for (int i = 0; i < t->rank; i++) {
			const char *s = sval(item(p, v[1], i));
			char *end;
			long long d = s ? strtoll(s, &end, 10) : -1;
			if (!s || *end || d < 0 || d > MAX_VALUES) {
				gc_free(vals);
				return tfail(p, item(p, v[1], i), "shape",
					     "dimension %d is not a size (0 .. %d)", i, MAX_VALUES);
			}
			t->dims[i] = d;
			numel *= d;
			if (numel > MAX_VALUES)
				numel = MAX_VALUES + 1;
		}
		if (numel != count) {
			gc_free(vals);
			char sb[128];
			return tfail(p, v[0], "values", "%" PRId64 " values for shape %s (%" PRId64
				     " elements)", count, gc_shape_str(t->dims, t->rank, sb, sizeof sb),
				     numel);
		}
	} else {
		t->rank = v[0]->type == YAML_SEQUENCE_NODE ? 1 : 0;
		t->dims[0] = count;
	}
	if (p->pool) {
		size_t es = gc_dtype_size(t->dtype);
		t->data = gc_pool_alloc(p->pool, (size_t)count * es + es);
		if (!t->data) {
			gc_free(vals);
			return gc_error_set(p->err, GC_ENOMEM, "out of memory");
		}
		for (int64_t i = 0; i < count; i++)
			store(t->data, t->dtype, i, vals[i]);
	}
	gc_free(vals);
	return 0;
}

static int parse_tensors(tparser *p, const yaml_node_t *n, const char *key, gc_test_tensor **out,
			 int32_t *nout)
{
	if (n->type != YAML_SEQUENCE_NODE)
		return tfail(p, n, key, "expected a list of tensors, in the operation's %s order",
			     key);
	int len = seq_len(n);
	gc_test_tensor tmp;
	gc_test_tensor *ts = p->pool ? gc_pool_alloc(p->pool, ((size_t)len + 1) * sizeof *ts) : NULL;
	if (p->pool && !ts)
		return gc_error_set(p->err, GC_ENOMEM, "out of memory");
	for (int i = 0; i < len; i++)
		if (parse_tensor(p, item(p, n, i), key, ts ? &ts[i] : &tmp))
			return p->err->code;
	*out = ts;
	*nout = len;
	return 0;
}

static int parse_param(tparser *p, const yaml_node_t *kn, const yaml_node_t *vn,
		       gc_test_param *tp)
{
	const char *name = sval(kn);
	const gc_param_spec *ps = NULL;
	for (int32_t j = 0; j < p->op->n_params; j++)
		if (!strcmp(p->op->params[j].name, name) || !strcmp(p->op->params[j].attribute, name))
			ps = &p->op->params[j];
	if (!ps) {
		char list[256] = "";
		size_t at = 0;
		for (int32_t j = 0; j < p->op->n_params && at < sizeof list; j++)
			at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", j ? ", " : "",
					       p->op->params[j].name);
		return tfail(p, kn, name, "operation '%s' has no param '%s' (it has: %s)",
			     p->op->name, name, at ? list : "none");
	}
	memset(tp, 0, sizeof *tp);
	tp->spec = ps;
	tp->line = (int)kn->start_mark.line + 1;
	tp->col = (int)kn->start_mark.column + 1;
	tp->attr.name = ps->attribute;
	int n = 1;
	if (ps->scalar) {
		if (vn->type != YAML_SCALAR_NODE)
			return tfail(p, vn, name, "param '%s' is a scalar", ps->name);
	} else {
		if (vn->type != YAML_SEQUENCE_NODE)
			return tfail(p, vn, name, "param '%s' is a vector: give a list", ps->name);
		n = seq_len(vn);
		if (ps->size >= 0 && n != ps->size)
			return tfail(p, vn, name, "param '%s' needs %d values, not %d", ps->name,
				     ps->size, n);
	}
	tp->attr.n = ps->scalar ? 0 : n;
	int64_t *ints = NULL;
	float *floats = NULL;
	const char **strs = NULL;
	if (p->pool) {
		ints = gc_pool_alloc(p->pool, ((size_t)n + 1) * sizeof *ints);
		floats = gc_pool_alloc(p->pool, ((size_t)n + 1) * sizeof *floats);
		strs = gc_pool_alloc(p->pool, ((size_t)n + 1) * sizeof *strs);
		if (!ints || !floats || !strs)
			return gc_error_set(p->err, GC_ENOMEM, "out of memory");
	}
	for (int i = 0; i < n; i++) {
		const yaml_node_t *e = ps->scalar ? vn : item(p, vn, i);
		const char *s = sval(e);
		if (!s)
			return tfail(p, e, name, "expected a single value");
		double d;
		if (ps->kind == GC_PARAM_STRING) {
			if (strs)
				strs[i] = gc_pool_strdup(p->pool, s);
			continue;
		}
		if (parse_double(s, &d))
			return tfail(p, e, name, "'%s' is not a %s", s,
				     gc_param_kind_name(ps->kind));
		if (ps->kind == GC_PARAM_BOOL && strcmp(s, "true") && strcmp(s, "false") &&
		    d != 0 && d != 1)
			return tfail(p, e, name, "'%s' is not a bool (true, false, 0, 1)", s);
		if (ps->kind == GC_PARAM_INT && (d != floor(d) || fabs(d) > 9.2e18))
			return tfail(p, e, name, "'%s' is not an int", s);
		if (ints) {
			ints[i] = (int64_t)d;
			floats[i] = (float)d;
		}
	}
	if (!p->pool)
		return 0;
	switch (ps->kind) {
	case GC_PARAM_BOOL:
	case GC_PARAM_INT:
		tp->attr.type = ps->scalar ? GC_ATTR_INT : GC_ATTR_INTS;
		if (ps->scalar)
			tp->attr.v.i = ints[0];
		else
			tp->attr.v.ints = ints;
		break;
	case GC_PARAM_FLOAT:
		tp->attr.type = ps->scalar ? GC_ATTR_FLOAT : GC_ATTR_FLOATS;
		if (ps->scalar)
			tp->attr.v.f = floats[0];
		else
			tp->attr.v.floats = floats;
		break;
	default:
		tp->attr.type = ps->scalar ? GC_ATTR_STRING : GC_ATTR_STRINGS;
		if (ps->scalar)
			tp->attr.v.s = strs[0];
		else
			tp->attr.v.strings = strs;
		break;
	}
	return 0;
}

static int parse_test(tparser *p, const yaml_node_t *n, int idx, gc_op_test *t)
{
	static const char *const keys[] = { "name",    "inputs",    "params", "outputs",
					    "sameAs", "tolerance", "flavours", NULL };
	char label[160];
	snprintf(label, sizeof label, "test %d", idx + 1);
	p->test = label;
	memset(t, 0, sizeof *t);
	t->line = (int)n->start_mark.line + 1;
	t->col = (int)n->start_mark.column + 1;
	t->tolerance = 1e-5;
	if (n->type != YAML_MAPPING_NODE)
		return tfail(p, n, "tests", "a test is a mapping (name:, inputs:, outputs:, ...)");
	yaml_node_t *v[7];
	if (mapping(p, n, "a test", keys, v))
		return p->err->code;
	if (v[0]) {
		const char *nm = sval(v[0]);
		if (!nm)
			return tfail(p, v[0], "name", "expected a text");
		snprintf(label, sizeof label, "test %d ('%.100s')", idx + 1, nm);
		t->name = p->pool ? gc_pool_strdup(p->pool, nm) : NULL;
	} else {
		char b[32];
		snprintf(b, sizeof b, "test %d", idx + 1);
		t->name = p->pool ? gc_pool_strdup(p->pool, b) : NULL;
	}
	if (p->pool && !t->name)
		return gc_error_set(p->err, GC_ENOMEM, "out of memory");
	if (!v[1])
		return tfail(p, n, "inputs", "a test needs inputs:");
	if (parse_tensors(p, v[1], "inputs", &t->inputs, &t->n_inputs))
		return p->err->code;
	if (t->n_inputs < p->op->n_inputs) {
		bool all_optional = true;
		for (int32_t i = t->n_inputs; i < p->op->n_inputs; i++)
			all_optional &= p->op->inputs[i].optional;
		if (!all_optional)
			return tfail(p, v[1], "inputs", "%d inputs; operation '%s' takes %d",
				     t->n_inputs, p->op->name, p->op->n_inputs);
	}
	if (v[2]) {
		if (v[2]->type != YAML_MAPPING_NODE)
			return tfail(p, v[2], "params", "expected a mapping {param: value, ...}");
		int len = (int)(v[2]->data.mapping.pairs.top - v[2]->data.mapping.pairs.start);
		gc_test_param tmp;
		t->params = p->pool ? gc_pool_alloc(p->pool, ((size_t)len + 1) * sizeof *t->params)
				    : NULL;
		if (p->pool && !t->params)
			return gc_error_set(p->err, GC_ENOMEM, "out of memory");
		for (int i = 0; i < len; i++) {
			yaml_node_pair_t *pr = &v[2]->data.mapping.pairs.start[i];
			yaml_node_t *kn = yaml_document_get_node(p->doc, pr->key);
			if (!sval(kn))
				return tfail(p, kn, "params", "param names must be plain names");
			for (int j = 0; j < i; j++)
				if (!strcmp(sval(kn), sval(yaml_document_get_node(
							      p->doc, v[2]->data.mapping.pairs.start[j].key))))
					return tfail(p, kn, sval(kn), "given twice in params");
			if (parse_param(p, kn, yaml_document_get_node(p->doc, pr->value),
					t->params ? &t->params[i] : &tmp))
				return p->err->code;
		}
		t->n_params = len;
	}
	if (v[3] && v[4])
		return tfail(p, v[4], "sameAs", "give either outputs: or sameAs:, not both");
	if (v[3]) {
		if (parse_tensors(p, v[3], "outputs", &t->outputs, &t->n_outputs))
			return p->err->code;
		if (t->n_outputs != p->op->n_outputs)
			return tfail(p, v[3], "outputs", "%d expected outputs; operation '%s' has %d",
				     t->n_outputs, p->op->name, p->op->n_outputs);
	}
	if (v[4]) {
		const char *f = sval(v[4]);
		bool known = false;
		for (int32_t j = 0; f && j < p->op->n_impls; j++)
			known |= !strcmp(p->op->impls[j].type, f);
		if (!known)
			return tfail(p, v[4], "sameAs",
				     "'%s' is not a flavour (implementation type) of operation '%s'",
				     f ? f : "?", p->op->name);
		t->same_as = p->pool ? gc_pool_strdup(p->pool, f) : NULL;
	}
	if (v[5]) {
		double tol;
		if (parse_double(sval(v[5]), &tol) || !(tol >= 0) || tol > 1e6)
			return tfail(p, v[5], "tolerance", "expected a number >= 0");
		t->tolerance = tol;
	}
	if (v[6]) {
		if (v[6]->type != YAML_SEQUENCE_NODE || seq_len(v[6]) == 0)
			return tfail(p, v[6], "flavours", "expected a list of flavour names");
		int len = seq_len(v[6]);
		t->flavours = p->pool ? gc_pool_alloc(p->pool, ((size_t)len + 1) * sizeof(char *))
				      : NULL;
		if (p->pool && !t->flavours)
			return gc_error_set(p->err, GC_ENOMEM, "out of memory");
		for (int i = 0; i < len; i++) {
			const char *f = sval(item(p, v[6], i));
			bool known = false;
			for (int32_t j = 0; f && j < p->op->n_impls; j++)
				known |= !strcmp(p->op->impls[j].type, f);
			if (!known)
				return tfail(p, item(p, v[6], i), "flavours",
					     "'%s' is not a flavour (implementation type) of operation "
					     "'%s'",
					     f ? f : "?", p->op->name);
			if (t->flavours && !(t->flavours[i] = gc_pool_strdup(p->pool, f)))
				return gc_error_set(p->err, GC_ENOMEM, "out of memory");
		}
		t->n_flavours = len;
	}
	p->test = NULL;
	return 0;
}

int gc_manifest_tests_parse(const char *path, const char *dir, yaml_document_t *doc,
			    const yaml_node_t *tests, const gc_op_spec *op, gc_pool *pool,
			    gc_op_test **out, int32_t *n, gc_error *err)
{
	tparser p = { .path = path, .dir = dir, .doc = doc, .pool = out ? pool : NULL, .err = err,
		      .op = op };
	if (out) {
		*out = NULL;
		*n = 0;
	}
	if (tests->type != YAML_SEQUENCE_NODE)
		return tfail(&p, tests, "tests", "expected a list");
	int len = seq_len(tests);
	if (len > MAX_TESTS)
		return tfail(&p, tests, "tests", "more than %d tests", MAX_TESTS);
	gc_op_test tmp;
	gc_op_test *ts = p.pool ? gc_pool_alloc(p.pool, ((size_t)len + 1) * sizeof *ts) : NULL;
	if (p.pool && !ts)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	for (int i = 0; i < len; i++)
		if (parse_test(&p, item(&p, tests, i), i, ts ? &ts[i] : &tmp))
			return err->code;
	if (out) {
		*out = ts;
		*n = len;
	}
	return 0;
}

int gc_manifest_tests_load(const char *path, int32_t op_index, const gc_op_spec *op,
			   gc_pool *pool, gc_op_test **out, int32_t *n, gc_error *err)
{
	*out = NULL;
	*n = 0;
	void *buf;
	size_t len;
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	char tmp[PATH_MAX], dir[PATH_MAX];
	snprintf(tmp, sizeof tmp, "%s", path);
	char *slash = strrchr(tmp, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(tmp, sizeof tmp, ".");
	if (!realpath(tmp, dir))
		snprintf(dir, sizeof dir, "%s", tmp);
	yaml_parser_t yp;
	if (!yaml_parser_initialize(&yp)) {
		gc_free(buf);
		return gc_error_set(err, GC_ENOMEM, "%s: cannot start the YAML parser", path);
	}
	yaml_parser_set_input_string(&yp, buf, len);
	int rc = 0;
	for (int32_t i = 0;; i++) {
		yaml_document_t doc;
		if (!yaml_parser_load(&yp, &doc)) {
			rc = gc_error_set(err, GC_EINVAL, "%s: YAML syntax error", path);
			break;
		}
		yaml_node_t *root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			rc = gc_error_set(err, GC_EINVAL, "%s: has no operation %d", path, op_index + 1);
			break;
		}
		if (i == op_index) {
			const yaml_node_t *tests = NULL;
			if (root->type == YAML_MAPPING_NODE)
				for (yaml_node_pair_t *a = root->data.mapping.pairs.start;
				     a < root->data.mapping.pairs.top; a++) {
					const char *k = sval(yaml_document_get_node(&doc, a->key));
					if (k && !strcmp(k, "tests"))
						tests = yaml_document_get_node(&doc, a->value);
				}
			if (tests)
				rc = gc_manifest_tests_parse(path, dir, &doc, tests, op, pool, out, n,
							     err);
			yaml_document_delete(&doc);
			break;
		}
		yaml_document_delete(&doc);
	}
	yaml_parser_delete(&yp);
	gc_free(buf);
	return rc;
}
