/*
 * --dump-dir: every tensor as DIR/<file-safe name>.npy, and DIR/tensors.tsv
 * mapping tensor names to files (one line per tensor, flushed as it is
 * written, so a crash leaves a map of everything dumped so far).
 *
 * File names keep [A-Za-z0-9._-] of the tensor name and turn every other
 * byte into '_' (a leading '.' too: no hidden files, no ".."; leading '/'
 * are dropped) and are cut at 100 bytes; a name already taken gets "_2",
 * "_3", ... Each .npy goes through a temporary file renamed into place.
 * A tensor that changed between its producer and a consumer is saved once
 * more as <name>.seen-by-<consumer>.npy.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"

#include "alloc.h"
#include "custom.h"
#include "debug-impl.h"
#include "session-impl.h"

#define NAME_MAX_KEEP GC_SAFE_NAME_MAX

struct gc_dumper {
	char *dir;
	FILE *map;
	char **used; /* file names taken (without .npy) */
	int32_t n_used, cap_used;
	int32_t written;
	bool noted[GC_DTYPE_COUNT];
	/* per tensor: the quantization of a custom node's edge bound
	 * quantized through QDQ (scale and zero point in tensors.tsv) */
	gc_custom_quant *quant;
	int32_t n_quant;
};

/* Which tensors are custom nodes' quantized edges (the program's nodes
 * only: a subprogram's tensors are dumped by their own session). */
static int quant_table(gc_dumper *d, const gc_program *p)
{
	d->n_quant = p->n_tensors;
	d->quant = gc_calloc((size_t)p->n_tensors + 1, sizeof *d->quant);
	if (!d->quant)
		return GC_ENOMEM;
	for (int32_t i = 0; i < p->n_nodes; i++) {
		const gc_node *n = &p->nodes[i];
		const gc_custom *c = n->custom;
		for (int32_t j = 0; c && c->quant && j < c->n_in + c->n_out; j++) {
			bool is_in = j < c->n_in;
			int32_t k = is_in ? j : j - c->n_in;
			int32_t t = is_in ? (k < n->n_in ? n->in[k] : -1)
					  : (k < n->n_out ? n->out[k] : -1);
			if (t >= 0 && t < p->n_tensors && gc_custom_quant_on(&c->quant[j]))
				d->quant[t] = c->quant[j];
		}
	}
	return 0;
}

static int mkdir_p(const char *dir, gc_error *err)
{
	char buf[4096];
	if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
		return gc_error_set(err, GC_EINVAL, "--dump-dir %.100s...: path too long", dir);
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return gc_error_set(err, GC_EIO, "--dump-dir: cannot create folder %s: %s",
					    buf, strerror(errno));
		*p = c;
		if (!c)
			break;
	}
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return gc_error_set(err, GC_EIO, "--dump-dir: %s is not a folder", dir);
	return 0;
}

int gc_dumper_open(const char *dir, const gc_program *p, gc_dumper **out, gc_error *err)
{
	*out = NULL;
	gc_dumper *d = gc_calloc(1, sizeof *d);
	if (!d)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	d->cap_used = p->n_tensors + 1;
	d->used = gc_calloc((size_t)d->cap_used, sizeof *d->used);
	d->dir = gc_strdup(dir);
	if (!d->used || !d->dir || quant_table(d, p)) {
		gc_dumper_close(d);
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	}
	if (mkdir_p(dir, err)) {
		gc_dumper_close(d);
		return err->code;
	}
	char path[4200];
	snprintf(path, sizeof path, "%s/tensors.tsv", dir);
	/* a new file, never one a symlink points at (fileio.h) */
	gc_outfile of;
	if (gc_outfile_open(&of, path, err) || gc_outfile_publish(&of, err)) {
		gc_error_prefix(err, "--dump-dir");
		gc_dumper_close(d);
		return err->code;
	}
	d->map = fdopen(of.fd, "w");
	if (!d->map) {
		close(of.fd);
		gc_error_set(err, GC_EIO, "--dump-dir: cannot write %s: %s", path, strerror(errno));
		gc_dumper_close(d);
		return err->code;
	}
	fputs("tensor\tfile\tdtype\tshape\tproduced by\tnote\tscale\tzero point\n", d->map);
	*out = d;
	return 0;
}

int32_t gc_dumper_close(gc_dumper *d)
{
	if (!d)
		return 0;
	int32_t n = d->written;
	if (d->map)
		fclose(d->map);
	for (int32_t i = 0; i < d->n_used; i++)
		gc_free(d->used[i]);
	gc_free(d->used);
	gc_free(d->quant);
	gc_free(d->dir);
	gc_free(d);
	return n;
}

static bool taken(const gc_dumper *d, const char *name)
{
	for (int32_t i = 0; i < d->n_used; i++)
		if (!strcmp(d->used[i], name))
			return true;
	return false;
}

/* A file-safe (gc_file_safe_name, as --output-dir names files), not yet
 * used name (without .npy) for a tensor name. */
static void file_name(const gc_dumper *d, const char *name, char *out, size_t len)
{
	char base[GC_SAFE_NAME_MAX + 1];
	gc_file_safe_name(name, base, sizeof base);
	snprintf(out, len, "%s", base);
	for (int k = 2; taken(d, out) || !strcmp(out, "tensors"); k++)
		snprintf(out, len, "%s_%d", base, k);
}

/* A map cell: tabs, newlines and backslashes escaped. */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\r')
			fputs("\\r", f);
		else if (*s == '\\')
			fputs("\\\\", f);
		else
			fputc(*s, f);
	}
}

/* Tensor idx as DIR/<file-safe base>.npy, its map line ending with the
 * producer cell (NULL: a graph input) and `note`. */
static int write_one(gc_dumper *d, const gc_session *s, int32_t idx, const char *base,
		     const char *producer, const char *note, gc_error *err)
{
	const gc_tensor *t = &s->tensors[idx];
	const char *name = s->p->tensors[idx].name;
	char fname[NAME_MAX_KEEP + 16], path[4400], shape[160];
	file_name(d, base, fname, sizeof fname);
	if (d->n_used < d->cap_used) {
		char *keep = gc_strdup(fname);
		if (!keep)
			return gc_error_set(err, GC_ENOMEM, "out of memory");
		d->used[d->n_used++] = keep;
	}
	snprintf(path, sizeof path, "%s/%s.npy", d->dir, fname);
	gc_error local = {0};
	int rc = gc_npy_write(path, t, &local);
	cell(d->map, name);
	fputc('\t', d->map);
	if (rc == GC_EUNSUPPORTED) {
		/* No .npy form for it (bfloat16, strings that are not UTF-8): say
		 * so, go on. */
		fprintf(d->map, "-\t%s\t%s\t", gc_dtype_name(t->dtype),
			gc_shape_str(t->dims, t->rank, shape, sizeof shape));
		unsigned dt = (unsigned)t->dtype < GC_DTYPE_COUNT ? (unsigned)t->dtype : 0;
		if (!d->noted[dt])
			gc_log(&s->log, GC_LOG_WARNING,
			       "gc_debug_options.dump_dir (--dump-dir): %s tensors that cannot be "
			       "written as .npy are skipped (marked '-' in tensors.tsv), first "
			       "'%s': %s",
			       gc_dtype_name(t->dtype), name, local.msg);
		d->noted[dt] = true;
	} else if (rc) {
		return gc_error_set(err, rc, "--dump-dir: tensor '%s': %s", name, local.msg);
	} else {
		fprintf(d->map, "%s.npy\t%s\t%s\t", fname, gc_dtype_name(t->dtype),
			gc_shape_str(t->dims, t->rank, shape, sizeof shape));
		d->written++;
	}
	if (producer)
		cell(d->map, producer);
	else
		fputs("(graph input)", d->map);
	fputc('\t', d->map);
	cell(d->map, note);
	/* A quantized edge: its integer values are in the .npy, the real ones
	 * are scale * (q - zero point). */
	if (idx < d->n_quant && gc_custom_quant_on(&d->quant[idx]))
		fprintf(d->map, "\t%.9g\t%d\n", (double)d->quant[idx].scale,
			(int)d->quant[idx].offset);
	else
		fputs("\t-\t-\n", d->map);
	fflush(d->map);
	return 0;
}

int gc_dumper_write(gc_dumper *d, const gc_session *s, int32_t idx, const char *producer,
		    gc_error *err)
{
	return write_one(d, s, idx, s->p->tensors[idx].name, producer, "", err);
}

int gc_dumper_write_seen(gc_dumper *d, const gc_session *s, int32_t idx, const char *producer,
			 const char *consumer, gc_error *err)
{
	const char *name = s->p->tensors[idx].name;
	char base[2 * NAME_MAX_KEEP + 16], note[NAME_MAX_KEEP + 120];
	snprintf(base, sizeof base, "%.*s.seen-by-%.*s", NAME_MAX_KEEP / 2, name,
		 NAME_MAX_KEEP / 2, consumer);
	snprintf(note, sizeof note, "as node '%.*s' read it: changed since it was produced",
		 NAME_MAX_KEEP, consumer);
	int32_t before = d->written;
	int rc = write_one(d, s, idx, base, producer, note, err);
	if (!rc && d->written > before)
		gc_log(&s->log, GC_LOG_WARNING,
		       "gc_debug_options.dump_dir (--dump-dir): tensor '%s' changed after %s%s%s "
		       "produced it, before node '%s' read it: saved as that node saw it in "
		       "%s/%s.npy (run with --check-tensors to name the node that wrote into it)",
		       name, producer ? "node '" : "the caller", producer ? producer : "",
		       producer ? "'" : "", consumer, d->dir, d->used[d->n_used - 1]);
	return rc;
}
