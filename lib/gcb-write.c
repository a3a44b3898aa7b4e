/* Writing compiled programs as .gcb files (format: runtime/gcb.h). */
#include <graphcc/graphcc.h>

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "../runtime/build.h"
#include "strmap.h"

typedef struct buf {
	unsigned char *p;
	size_t n, cap;
	int oom;
} buf;

static void put(buf *b, const void *src, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		unsigned char *p = gc_realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->n, src, n);
	b->n += n;
}

/* The host is little-endian (x86-64, aarch64): values are written as is. */
static void u32(buf *b, uint32_t v)
{
	put(b, &v, 4);
}
static void i32(buf *b, int32_t v)
{
	put(b, &v, 4);
}
static void u64(buf *b, uint64_t v)
{
	put(b, &v, 8);
}
static void i64(buf *b, int64_t v)
{
	put(b, &v, 8);
}
static void bytes(buf *b, const void *p, uint64_t n)
{
	u64(b, n);
	put(b, p, (size_t)n);
}

/* A list of tensor indices: u32 n, i32 v[n]. */
static void index_list(buf *b, int32_t n, const int32_t *v)
{
	u32(b, (uint32_t)n);
	for (int32_t i = 0; i < n; i++)
		i32(b, v[i]);
}

/* The weights section as the pieces it is made of, in order. */
typedef struct wchunk {
	const void *p;
	uint64_t n;
} wchunk;

typedef struct wlist {
	wchunk *c;
	size_t nc, cap;
	uint64_t n; /* bytes */
	int oom;
} wlist;

typedef struct writer {
	buf strings, rec;
	gc_strmap map; /* string -> offset */
	gc_error *err;
	/* Each kernel library as bindings name it, and as the file records it
	 * (relative to the program's folder). */
	const char **libs, **lib_rel;
	int32_t n_libs;
} writer;

static void str(writer *w, const char *s)
{
	if (!s) {
		u32(&w->rec, GCB_NO_STRING);
		return;
	}
	int32_t off = gc_strmap_get(&w->map, s);
	if (off < 0) {
		off = (int32_t)w->strings.n;
		put(&w->strings, s, strlen(s) + 1);
		/* s lives in the program, which outlives the writer */
		if (!w->strings.oom && gc_strmap_put(&w->map, s, off))
			w->strings.oom = 1;
	}
	u32(&w->rec, (uint32_t)off);
}

static int tensor_record(writer *w, const gc_tensor *t)
{
	u32(&w->rec, (uint32_t)t->dtype);
	i32(&w->rec, t->rank);
	for (int i = 0; i < t->rank; i++)
		i64(&w->rec, t->dims[i]);
	int64_t n = gc_tensor_numel(t);
	if (t->dtype == GC_DTYPE_STRING) {
		for (int64_t i = 0; i < n; i++) {
			const char *s = ((char *const *)t->data)[i];
			bytes(&w->rec, s, strlen(s));
		}
		return 0;
	}
	bytes(&w->rec, t->data, (uint64_t)gc_tensor_nbytes(t));
	return 0;
}

static int attr_record(writer *w, const gc_node *n, const gc_attr *a)
{
	str(w, a->name);
	u32(&w->rec, (uint32_t)a->type);
	i64(&w->rec, a->n);
	switch (a->type) {
	case GC_ATTR_FLOAT:
		put(&w->rec, &a->v.f, 4);
		return 0;
	case GC_ATTR_INT:
		i64(&w->rec, a->v.i);
		return 0;
	case GC_ATTR_STRING:
		bytes(&w->rec, a->v.s, (uint64_t)a->n);
		return 0;
	case GC_ATTR_INTS:
		put(&w->rec, a->v.ints, (size_t)a->n * 8);
		return 0;
	case GC_ATTR_FLOATS:
		put(&w->rec, a->v.floats, (size_t)a->n * 4);
		return 0;
	case GC_ATTR_STRINGS:
		for (int64_t i = 0; i < a->n; i++)
			bytes(&w->rec, a->v.strings[i], strlen(a->v.strings[i]));
		return 0;
	case GC_ATTR_TENSOR:
		return tensor_record(w, a->v.t);
	case GC_ATTR_TENSORS:
		for (int64_t i = 0; i < a->n; i++)
			tensor_record(w, &a->v.tensors[i]);
		return 0;
	default:
		return gc_error_set(w->err, GC_EUNSUPPORTED,
				    "node '%s' (%s): its attribute '%s' (%s) cannot be saved in a "
				    ".gcb program",
				    n->name, n->op_type, a->name, gc_attr_type_name(a->type));
	}
}

/* A library as the file records it (relative to the program's folder). */
static const char *lib_rel(const writer *w, const char *path)
{
	for (int32_t j = 0; j < w->n_libs; j++)
		if (!strcmp(w->libs[j], path))
			return w->lib_rel[j];
	return path;
}

/* Flag 8: bound per input shape (custom.h, gc_custom_dyn). */
static void custom_dyn_record(writer *w, const gc_custom *c)
{
	const gc_custom_dyn *y = c->dyn;
	str(w, lib_rel(w, y->fn_library));
	str(w, y->verify);
	str(w, y->infer);
	str(w, y->select);
	for (int32_t i = 0; i < c->n_in + c->n_out; i++)
		u32(&w->rec, y->in_dtypes[i]);
	i32(&w->rec, y->n_impls);
	for (int32_t j = 0; j < y->n_impls; j++) {
		const gc_custom_impl *im = &y->impls[j];
		const char *s[] = { im->flavour,  lib_rel(w, im->library), im->symbol,
				    im->config,	  im->init_sym,		   im->destroy_sym,
				    im->scratch_sym };
		for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
			str(w, s[i]);
		u64(&w->rec, im->scratch_bytes);
		u32(&w->rec, im->inplace);
		i32(&w->rec, im->n_accepts);
		for (int32_t r = 0; r < im->n_accepts; r++) {
			i32(&w->rec, im->accepts[r].input);
			u32(&w->rec, im->accepts[r].dtypes);
			u32(&w->rec, im->accepts[r].ranks);
			i64(&w->rec, im->accepts[r].last_dim_multiple);
		}
	}
}

static void custom_record(writer *w, const gc_custom *c)
{
	const char *s[] = { c->manifest, c->op_name, c->domain,	 c->op_type,
			    c->flavour,	 c->backend, c->config,	 lib_rel(w, c->library),
			    c->symbol,	 c->init_sym, c->destroy_sym };
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		str(w, s[i]);
	u64(&w->rec, c->kernel_scratch);
	u32(&w->rec, (uint32_t)c->inplace | (uint32_t)c->pure << 1 | (uint32_t)(c->quant != NULL) << 2 |
			     (uint32_t)(c->dyn != NULL) << 3);
	i32(&w->rec, c->n_params);
	for (int32_t i = 0; i < c->n_params; i++) {
		const CustomOpParam *p = &c->params[i];
		str(w, p->name);
		u32(&w->rec, (uint32_t)p->dtype);
		i32(&w->rec, p->size);
		if (p->dtype == DTString) {
			if (p->size == 0)
				str(w, p->data);
			for (int32_t j = 0; j < p->size; j++)
				str(w, ((char *const *)p->data)[j]);
			continue;
		}
		size_t es = gcDataTypeSize(p->dtype);
		bytes(&w->rec, p->data, (uint64_t)es * (uint64_t)(p->size ? p->size : 1));
	}
	i32(&w->rec, c->n_in);
	for (int32_t i = 0; i < c->n_in; i++)
		i32(&w->rec, c->in_max_dims[i]);
	i32(&w->rec, c->n_out);
	for (int32_t i = 0; i < c->n_out; i++) {
		i32(&w->rec, c->out_max_dims[i]);
		if (c->dyn)
			continue; /* outputs inferred per shape */
		u32(&w->rec, (uint32_t)c->outs[i].dtype);
		i32(&w->rec, c->outs[i].rank);
		for (int k = 0; k < c->outs[i].rank; k++)
			i64(&w->rec, c->outs[i].dims[k]);
	}
	if (c->dyn)
		custom_dyn_record(w, c);
	/* Format 3: the edges bound quantized (flag 4). */
	for (int32_t i = 0; c->quant && i < c->n_in + c->n_out; i++) {
		uint32_t bits;
		memcpy(&bits, &c->quant[i].scale, 4);
		u32(&w->rec, (uint32_t)c->quant[i].dtype);
		u32(&w->rec, bits);
		i32(&w->rec, c->quant[i].offset);
	}
}

static int add_lib(const char ***libs, int32_t *n, int32_t *cap, const char *path)
{
	for (int32_t j = 0; j < *n; j++)
		if (!strcmp((*libs)[j], path))
			return 0;
	if (*n == *cap) {
		int32_t nc = *cap * 2 + 8;
		const char **l = gc_realloc(*libs, (size_t)nc * sizeof *l);
		if (!l)
			return GC_ENOMEM;
		*libs = l;
		*cap = nc;
	}
	(*libs)[(*n)++] = path;
	return 0;
}

/* Every distinct library of p and its subprograms: the kernel libraries,
 * and the functions libraries of bindings made per input shape. */
static int collect_libs(const gc_program *p, const char ***libs, int32_t *n, int32_t *cap,
			int depth)
{
	if (depth > 64)
		return GC_ELIMIT;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *nd = &p->nodes[i];
		for (int32_t j = 0; j < nd->n_sub; j++)
			if (collect_libs(nd->sub[j], libs, n, cap, depth + 1))
				return GC_ENOMEM;
		const gc_custom *c = nd->custom;
		if (!c)
			continue;
		if (add_lib(libs, n, cap, c->library))
			return GC_ENOMEM;
		/* bound per shape: its functions library and every implementation's */
		for (int32_t j = -1; c->dyn && j < c->dyn->n_impls; j++)
			if (add_lib(libs, n, cap, j < 0 ? c->dyn->fn_library : c->dyn->impls[j].library))
				return GC_ENOMEM;
	}
	return 0;
}

/* Graph attributes are what the subprograms were compiled from: not
 * saved (the subprograms are). */
static bool saved_attr(const gc_attr *a)
{
	return a->type != GC_ATTR_GRAPH && a->type != GC_ATTR_GRAPHS;
}

/* Places n bytes at the next 64-byte boundary of the weights: the offset.
 * The bytes are not copied: they are written from where they are (the
 * program's constants and packed forms) when the file is. */
static uint64_t put_weight(wlist *weights, const void *data, uint64_t n)
{
	static const unsigned char zeros[GCB_TENSOR_ALIGN];
	uint64_t pad = (GCB_TENSOR_ALIGN - weights->n % GCB_TENSOR_ALIGN) % GCB_TENSOR_ALIGN;
	if (weights->nc + 2 > weights->cap) {
		size_t cap = weights->cap * 2 + 64;
		wchunk *c = gc_realloc(weights->c, cap * sizeof *c);
		if (!c) {
			weights->oom = 1;
			return 0;
		}
		weights->c = c;
		weights->cap = cap;
	}
	if (pad)
		weights->c[weights->nc++] = (wchunk){ zeros, pad };
	weights->n += pad;
	uint64_t off = weights->n;
	if (n)
		weights->c[weights->nc++] = (wchunk){ data, n };
	weights->n += n;
	return off;
}

/* The packed form (node i, entry e) that stands for constant t when every
 * reader of t keeps one that replaces it and t is no output: then the file
 * holds only the packed forms. */
static bool packed_only(const gc_program *p, int32_t t, int32_t *node, int32_t *entry)
{
	*node = -1;
	for (int32_t j = 0; j < p->n_outputs; j++)
		if (p->outputs[j] == t)
			return false;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		for (int32_t j = 0; j < n->n_in; j++) {
			if (n->in[j] != t)
				continue;
			if (n->reprepare)
				return false;
			int32_t e = 0;
			while (e < n->n_packed && !(n->packed[e].input == j && n->packed[e].replaces))
				e++;
			if (e == n->n_packed)
				return false;
			if (*node < 0) {
				*node = i;
				*entry = e;
			}
		}
	}
	return *node >= 0;
}

static void tensor_records(writer *w, const gc_program *p, wlist *weights,
			   uint64_t *const *packed_off)
{
	u32(&w->rec, (uint32_t)p->n_tensors);
	for (int32_t t = 0; t < p->n_tensors; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		str(w, pt->name);
		u32(&w->rec, (uint32_t)pt->t.dtype);
		i32(&w->rec, pt->t.rank);
		for (int i = 0; i < pt->t.rank; i++)
			i64(&w->rec, pt->t.dims[i]);
		u32(&w->rec, (uint32_t)pt->storage);
		int32_t node, entry;
		if (pt->storage == GC_STORAGE_CONST && pt->nbytes && packed_only(p, t, &node, &entry)) {
			const gc_packed *e = &p->nodes[node].packed[entry];
			u64(&w->rec, GCB_PACKED_ONLY);
			u64(&w->rec, pt->nbytes);
			str(w, e->key);
			u64(&w->rec, packed_off[node][entry]);
			u64(&w->rec, e->nbytes);
			continue;
		}
		uint64_t off = pt->offset;
		if (pt->storage == GC_STORAGE_CONST)
			off = put_weight(weights, pt->t.data, pt->nbytes);
		u64(&w->rec, off);
		u64(&w->rec, pt->nbytes);
	}
}

/* One program (the whole file's, or a subprogram, recursively): tensors,
 * inputs and outputs, plan, where a subprogram's outer inputs come from,
 * nodes. Constants and packed forms go to the shared weights section. */
static int program_record(writer *w, const gc_program *p, wlist *weights, const char *path)
{
	int rc = 0;
	for (int32_t t = 0; t < p->n_tensors; t++) {
		const gc_ptensor *pt = &p->tensors[t];
		if (pt->storage == GC_STORAGE_CONST && pt->t.dtype == GC_DTYPE_STRING)
			return gc_error_set(w->err, GC_EUNSUPPORTED,
					    "%s: constant string tensor '%s' cannot be saved yet",
					    path, pt->name);
	}
	/* the packed forms first: tensors kept only in packed form point at them */
	uint64_t **packed_off = gc_calloc((size_t)p->n_nodes + 1, sizeof *packed_off);
	if (!packed_off)
		return gc_error_set(w->err, GC_ENOMEM, "%s: out of memory", path);
	for (int32_t i = 0; i < p->n_nodes && !rc; i++) {
		const gc_node *n = &p->nodes[i];
		if (!n->n_packed || n->reprepare)
			continue;
		if (!(packed_off[i] = gc_calloc((size_t)n->n_packed, sizeof(uint64_t))))
			rc = gc_error_set(w->err, GC_ENOMEM, "%s: out of memory", path);
		for (int32_t e = 0; e < n->n_packed && !rc; e++)
			packed_off[i][e] = put_weight(weights, n->packed[e].data, n->packed[e].nbytes);
	}
	if (!rc)
		tensor_records(w, p, weights, packed_off);
	index_list(&w->rec, p->n_inputs, p->inputs);
	index_list(&w->rec, p->n_outputs, p->outputs);
	u64(&w->rec, p->arena_bytes);
	u64(&w->rec, p->tensor_bytes);
	u64(&w->rec, p->const_bytes);
	/* a subprogram's inputs after n_formal: the enclosing node's inputs */
	int32_t n_outer = p->outer_slot ? p->n_inputs - p->n_formal : 0;
	i32(&w->rec, p->outer_slot ? p->n_formal : p->n_inputs);
	for (int32_t j = 0; j < n_outer; j++)
		i32(&w->rec, p->outer_slot[j]);
	u32(&w->rec, (uint32_t)p->n_nodes);
	for (int32_t i = 0; i < p->n_nodes && !rc; i++) {
		const gc_node *n = &p->nodes[i];
		str(w, n->name);
		str(w, n->domain);
		str(w, n->op_type);
		i32(&w->rec, n->opset);
		index_list(&w->rec, n->n_in, n->in);
		index_list(&w->rec, n->n_out, n->out);
		u64(&w->rec, n->scratch_bytes);
		u64(&w->rec, p->scratch_offset ? p->scratch_offset[i] : 0);
		uint32_t n_attr = 0;
		for (int j = 0; j < n->n_attr; j++)
			n_attr += saved_attr(&n->attrs[j]);
		u32(&w->rec, n_attr);
		for (int j = 0; j < n->n_attr && !rc; j++)
			if (saved_attr(&n->attrs[j]))
				rc = attr_record(w, n, &n->attrs[j]);
		u32(&w->rec, n->custom ? 1 : 0);
		if (n->custom)
			custom_record(w, n->custom);
		int32_t n_packed = packed_off[i] ? n->n_packed : 0;
		/* flags: 1 prepared at run time, 2 packed forms follow (format 4) */
		u32(&w->rec, (n->reprepare ? 1u : 0u) | (n_packed ? 2u : 0u));
		i32(&w->rec, n->n_sub ? n->n_explicit_in : n->n_in);
		u32(&w->rec, (uint32_t)n->n_sub);
		for (int32_t j = 0; j < n->n_sub && !rc; j++)
			rc = program_record(w, n->sub[j], weights, path);
		if (n_packed)
			u32(&w->rec, (uint32_t)n_packed);
		for (int32_t e = 0; e < n_packed; e++) {
			str(w, n->packed[e].key);
			i32(&w->rec, n->packed[e].input);
			u32(&w->rec, n->packed[e].replaces);
			u64(&w->rec, packed_off[i][e]);
			u64(&w->rec, n->packed[e].nbytes);
		}
	}
	for (int32_t i = 0; i < p->n_nodes; i++)
		gc_free(packed_off[i]);
	gc_free(packed_off);
	return rc;
}

/* file as a path relative to the folder of the program at path (both
 * real paths), so that a folder moved with the program and its packages
 * still loads; NULL when out of memory. Absolute when either cannot be
 * resolved. */
static char *relative_path(const char *path, const char *file)
{
	char dir[PATH_MAX], dreal[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	if (dl >= sizeof dir)
		return gc_strdup(file);
	if (!slash)
		strcpy(dir, ".");
	else if (!dl)
		strcpy(dir, "/");
	else {
		memcpy(dir, path, dl);
		dir[dl] = 0;
	}
	if (!realpath(dir, dreal) || !realpath(file, real))
		return gc_strdup(file);
	/* c: the end of the longest common folder (at a '/') */
	size_t c = 0;
	for (size_t i = 0;; i++) {
		if ((dreal[i] == '/' || !dreal[i]) && real[i] == '/')
			c = i;
		if (!dreal[i] || dreal[i] != real[i])
			break;
	}
	size_t ups = 0;
	for (size_t i = c; dreal[i] && strcmp(dreal, "/"); i++)
		ups += dreal[i] == '/';
	size_t rest = strlen(real + c + 1);
	char *out = gc_malloc(ups * 3 + rest + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < ups; i++)
		memcpy(out + 3 * i, "../", 3);
	memcpy(out + 3 * ups, real + c + 1, rest + 1);
	return out;
}

/* The header and META, then the weights streamed from where they are. */
static int write_program(const char *path, const buf *head, const wlist *weights, gc_error *err)
{
	gc_outfile f;
	if (gc_outfile_open(&f, path, err))
		return err->code;
	int rc = gc_outfile_write(&f, head->p, head->n, err);
	for (size_t i = 0; i < weights->nc && !rc; i++)
		rc = gc_outfile_write(&f, weights->c[i].p, (size_t)weights->c[i].n, err);
	if (rc) {
		gc_outfile_abort(&f);
		return rc;
	}
	return gc_outfile_commit(&f, err);
}

int gc_program_save(const gc_program *p, const char *path, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, p);
	GC_ARG_NONNULL(err, path);
	writer w = { .err = err };
	wlist weights = { 0 };
	int rc = 0;
	/* Libraries: one entry per distinct kernel library, with its SHA-256. */
	const char **libs = NULL;
	int32_t n_libs = 0, cap_libs = 0;
	if (collect_libs(p, &libs, &n_libs, &cap_libs, 0)) {
		gc_free(libs);
		return gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	}
	u32(&w.rec, (uint32_t)n_libs);
	w.libs = libs;
	w.lib_rel = gc_calloc((size_t)n_libs + 1, sizeof *w.lib_rel);
	if (!w.lib_rel)
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
	for (int32_t j = 0; j < n_libs && !rc; j++) {
		uint8_t sha[32];
		if (gc_dynlib_is_inprocess(libs[j])) {
			rc = gc_error_set(err, GC_EINVAL,
					  "%s: the program runs kernels of the in-process library %s "
					  "(a Python prototype): there is no file to save and pin",
					  path, libs[j]);
			break;
		}
		if ((rc = gc_sha256_file(libs[j], sha, err)))
			break;
		if (!(w.lib_rel[j] = relative_path(path, libs[j]))) {
			rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", path);
			break;
		}
		w.n_libs = j + 1;
		str(&w, w.lib_rel[j]);
		put(&w.rec, sha, 32);
	}
	if (rc)
		goto out;
	if ((rc = program_record(&w, p, &weights, path)))
		goto out;
	if (p->n_states) { /* optional trailing block: session state */
		u32(&w.rec, (uint32_t)p->n_states);
		for (int32_t k = 0; k < p->n_states; k++) {
			i32(&w.rec, p->states[k].input);
			i32(&w.rec, p->states[k].output);
			i32(&w.rec, p->states[k].init);
		}
	}
	if (w.rec.oom || w.strings.oom || weights.oom) {
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory writing the program", path);
		goto out;
	}
	/* META = u32 string-table size, string table, records. */
	buf meta = { 0 };
	u32(&meta, (uint32_t)w.strings.n);
	put(&meta, w.strings.p, w.strings.n);
	put(&meta, w.rec.p, w.rec.n);
	gcb_header h;
	memset(&h, 0, sizeof h);
	memcpy(h.magic, GCB_MAGIC, 8);
	h.format_version = GCB_FORMAT_VERSION;
	h.header_size = GCB_HEADER_SIZE;
	snprintf(h.graphcc_version, sizeof h.graphcc_version, "%s", GC_VERSION_STRING);
	h.meta_offset = GCB_HEADER_SIZE;
	h.meta_size = meta.n;
	h.meta_xxh3 = XXH3_64bits(meta.p, meta.n);
	h.weights_offset =
		(h.meta_offset + h.meta_size + GCB_WEIGHTS_ALIGN - 1) & ~(uint64_t)(GCB_WEIGHTS_ALIGN - 1);
	h.weights_size = weights.n;
	XXH3_state_t *xs = XXH3_createState();
	if (!xs || XXH3_64bits_reset(xs)) {
		XXH3_freeState(xs);
		gc_free(meta.p);
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory writing the program", path);
		goto out;
	}
	for (size_t i = 0; i < weights.nc; i++)
		XXH3_64bits_update(xs, weights.c[i].p, (size_t)weights.c[i].n);
	h.weights_xxh3 = XXH3_64bits_digest(xs);
	XXH3_freeState(xs);
	h.file_size = h.weights_offset + h.weights_size;
	buf head = { 0 };
	put(&head, &h, sizeof h);
	put(&head, meta.p, meta.n);
	static const unsigned char zeros[GCB_WEIGHTS_ALIGN];
	put(&head, zeros, (size_t)(h.weights_offset - h.meta_offset - h.meta_size));
	gc_free(meta.p);
	if (head.oom || meta.oom)
		rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory writing the program", path);
	else
		rc = write_program(path, &head, &weights, err);
	gc_free(head.p);
out:
	for (int32_t j = 0; j < w.n_libs; j++)
		gc_free((char *)w.lib_rel[j]);
	gc_free(w.lib_rel);
	gc_free(libs);
	gc_free(w.rec.p);
	gc_free(w.strings.p);
	gc_free(weights.c);
	gc_strmap_clear(&w.map);
	return rc;
}
