/*
 * graphcc run: sequence and optional values as files.
 *
 * In: a model input of a sequence type reads an ONNX SequenceProto .pb, one
 * of an optional type an OptionalProto .pb (what ONNX's test data holds).
 *
 * Out, in the output folder, for an output named NAME:
 *   a sequence          NAME/ holding 0.npy, 1.npy, ... (an empty sequence:
 *                       an empty folder)
 *   an optional with a  NAME.npy for a tensor, NAME/ for a sequence
 *   value
 *   an empty optional   NAME.none, an empty file
 * Whatever an earlier run left under the other names of NAME goes, so the
 * folder says one thing. A sequence folder is written under a temporary name
 * and renamed into place: a reader never sees half of one.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/fileio.h"
#include "cli.h"

/* The 1-byte types NumPy lacks: a .npy holds their bits as '|V1' items
 * (ml_dtypes' np.save), read as uint8. */
static bool bits_type(gc_dtype dt)
{
	return (dt >= GC_DTYPE_FLOAT8E4M3FN && dt <= GC_DTYPE_FLOAT8E5M2FNUZ) ||
	       dt == GC_DTYPE_INT4 || dt == GC_DTYPE_UINT4 || dt == GC_DTYPE_FLOAT4E2M1;
}

int cli_read_value(const char *path, gc_dtype dtype, gc_tensor *t, gc_error *err)
{
	if (!gc_dtype_is_value(dtype)) {
		size_t len = strlen(path);
		bool npy = len >= 4 && !strcmp(path + len - 4, ".npy");
		if (cli_read_tensor(path, t, err))
			return err->code;
		/* '|V1' (or '|u1') bits for a float8/int4 input take its type */
		if (npy && bits_type(dtype) && t->dtype == GC_DTYPE_UINT8) {
			int64_t n = gc_tensor_numel(t);
			bool nibble = dtype == GC_DTYPE_UINT4 || dtype == GC_DTYPE_FLOAT4E2M1;
			for (int64_t i = 0; dtype == GC_DTYPE_INT4 || nibble ? i < n : 0; i++) {
				uint8_t v = ((uint8_t *)t->data)[i];
				if (nibble ? v > 15 : (v > 7 && v < 0xf8)) {
					gc_tensor_release(t);
					return gc_error_set(err, GC_EINVAL,
							    "%s: element %" PRId64 " (byte %u) is not an %s "
							    "value (one per byte, as ml_dtypes holds them)",
							    path, i, v, gc_dtype_name(dtype));
				}
			}
			t->dtype = dtype;
		}
		return 0;
	}
	size_t n = strlen(path);
	if (n < 3 || strcmp(path + n - 3, ".pb"))
		return gc_error_set(err, GC_EINVAL,
				    "%s: the input is a %s; give it as a .pb file holding an ONNX "
				    "%s",
				    path, gc_dtype_name(dtype),
				    gc_dtype_is_optional(dtype) ? "OptionalProto" : "SequenceProto");
	return gc_pb_read_value(path, dtype, t, err);
}

int cli_check_value(const gc_tensor *t, const char *what, gc_error *err)
{
	if (!gc_dtype_is_value(t->dtype))
		return gc_npy_check(t, what, err);
	if (!t->data)
		return gc_error_set(err, GC_EINVAL, "%s holds no value", what);
	if (gc_dtype_is_optional(t->dtype)) {
		const gc_optional *o = t->data;
		return o->has_value ? cli_check_value(&o->value, what, err) : 0;
	}
	const gc_sequence *s = t->data;
	for (int32_t i = 0; i < s->n; i++) {
		char w[400];
		snprintf(w, sizeof w, "%.300s, tensor %d", what, (int)i);
		if (gc_npy_check(&s->items[i], w, err))
			return err->code;
	}
	return 0;
}

/* Formats a path into buf; one that does not fit is refused (a cut path
 * would name another file). */
__attribute__((format(printf, 4, 5))) static int path_fmt(char *buf, size_t len, gc_error *err,
							   const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len)
		return gc_error_set(err, GC_EINVAL, "%.300s...: path too long (%zu bytes at most)",
				    buf, len - 1);
	return 0;
}

/* Removes path: a file, or a folder of files (what a sequence left). */
static int remove_path(const char *path, gc_error *err)
{
	struct stat st;
	if (lstat(path, &st))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		if (!d)
			return gc_error_set(err, GC_EIO, "%.3000s: cannot open: %s", path, strerror(errno));
		struct dirent *e;
		char p[4200];
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			/* only what a sequence output leaves: N.npy */
			size_t digits = strspn(e->d_name, "0123456789");
			if (!digits || strcmp(e->d_name + digits, ".npy")) {
				closedir(d);
				return gc_error_set(err, GC_EIO,
						    "%.3000s: a folder in the way of an output, holding "
						    "%.200s: not removing it",
						    path, e->d_name);
			}
			if (path_fmt(p, sizeof p, err, "%s/%s", path, e->d_name)) {
				closedir(d);
				return err->code;
			}
			if (unlink(p)) {
				closedir(d);
				return gc_error_set(err, GC_EIO, "%.3000s: cannot remove: %s", p,
						    strerror(errno));
			}
		}
		closedir(d);
		if (rmdir(path))
			return gc_error_set(err, GC_EIO, "%.3000s: cannot remove: %s", path,
					    strerror(errno));
		return 0;
	}
	if (unlink(path))
		return gc_error_set(err, GC_EIO, "%.3000s: cannot remove: %s", path, strerror(errno));
	return 0;
}

static int write_sequence(const char *dir, const char *fname, const gc_sequence *s, gc_error *err)
{
	char tmp[4096], final[4096], p[4200];
	/* an unpredictable new folder (mkdtemp), never one planted in advance */
	if (path_fmt(tmp, sizeof tmp, err, "%s/.%s.XXXXXX", dir, fname) ||
	    path_fmt(final, sizeof final, err, "%s/%s", dir, fname))
		return err->code;
	if (!mkdtemp(tmp))
		return gc_error_set(err, GC_EIO, "%s: cannot create folder: %s", tmp, strerror(errno));
	chmod(tmp, 0755);
	for (int32_t i = 0; i < s->n; i++) {
		if (path_fmt(p, sizeof p, err, "%s/%d.npy", tmp, (int)i) ||
		    gc_npy_write(p, &s->items[i], err)) {
			gc_error e = { 0 };
			remove_path(tmp, &e);
			return err->code;
		}
	}
	if (remove_path(final, err))
		return err->code;
	if (rename(tmp, final))
		return gc_error_set(err, GC_EIO, "%s: cannot rename to %s: %s", tmp, final,
				    strerror(errno));
	return 0;
}

int cli_write_value(const char *dir, const char *fname, const gc_tensor *t, gc_error *err)
{
	char npy[4096], none[4096], folder[4096];
	if (path_fmt(npy, sizeof npy, err, "%s/%s.npy", dir, fname) ||
	    path_fmt(none, sizeof none, err, "%s/%s.none", dir, fname) ||
	    path_fmt(folder, sizeof folder, err, "%s/%s", dir, fname))
		return err->code;
	if (!gc_dtype_is_value(t->dtype)) {
		if (gc_npy_write(npy, t, err))
			return err->code;
		return remove_path(none, err) || remove_path(folder, err) ? err->code : 0;
	}
	if (!t->data)
		return gc_error_set(err, GC_EINVAL, "output '%s' holds no value", fname);
	if (gc_dtype_is_sequence(t->dtype)) {
		if (write_sequence(dir, fname, t->data, err))
			return err->code;
		return remove_path(npy, err) || remove_path(none, err) ? err->code : 0;
	}
	const gc_optional *o = t->data;
	if (o->has_value)
		return cli_write_value(dir, fname, &o->value, err);
	if (gc_write_file_atomic(none, "", 0, NULL, 0, err))
		return err->code;
	return remove_path(npy, err) || remove_path(folder, err) ? err->code : 0;
}

void cli_remove_output(const char *dir, const char *fname)
{
	char p[4096];
	gc_error e = { 0 };
	if (!path_fmt(p, sizeof p, &e, "%s/%s.npy", dir, fname))
		remove_path(p, &e);
	if (!path_fmt(p, sizeof p, &e, "%s/%s.none", dir, fname))
		remove_path(p, &e);
	if (!path_fmt(p, sizeof p, &e, "%s/%s", dir, fname))
		remove_path(p, &e);
}

/* ---------------------------------------------------------------- the ledger */

static bool ledger_has(const cli_ledger *l, const char *entry)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], entry))
			return true;
	return false;
}

static int ledger_add(cli_ledger *l, const char *entry, gc_error *err)
{
	if (ledger_has(l, entry))
		return 0;
	if (l->n == l->cap) {
		int cap = l->cap ? l->cap * 2 : 16;
		char **nn = realloc(l->names, (size_t)cap * sizeof *nn);
		if (!nn)
			return gc_error_set(err, GC_ENOMEM, "out of memory");
		l->names = nn;
		l->cap = cap;
	}
	if (!(l->names[l->n] = strdup(entry)))
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	l->n++;
	return 0;
}

static void ledger_drop(cli_ledger *l, const char *entry)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], entry)) {
			free(l->names[i]);
			l->names[i] = l->names[--l->n];
			return;
		}
}

int cli_ledger_load(cli_ledger *l, const char *dir, gc_error *err)
{
	memset(l, 0, sizeof *l);
	if (!(l->dir = strdup(dir)))
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	char path[4200];
	if (path_fmt(path, sizeof path, err, "%s/%s", dir, CLI_LEDGER_NAME))
		return err->code;
	struct stat st;
	if (lstat(path, &st))
		return 0; /* no ledger yet: graphcc wrote nothing here */
	if (!S_ISREG(st.st_mode))
		return gc_error_set(err, GC_EIO, "%s: not a regular file (graphcc's list of the "
					 "outputs it wrote here)", path);
	void *buf;
	size_t len;
	if (gc_read_file(path, &buf, &len, err))
		return err->code;
	int rc = 0;
	for (char *save = NULL, *line = strtok_r(buf, "\n", &save); line && !rc;
	     line = strtok_r(NULL, "\n", &save))
		rc = ledger_add(l, line, err);
	free(buf);
	return rc;
}

int cli_ledger_check(const cli_ledger *l, const char *fname, gc_error *err)
{
	if (!strcmp(fname, CLI_LEDGER_NAME))
		return gc_error_set(err, GC_EINVAL, "output '%s' would be written over graphcc's "
						     "list of outputs (%s): rename it",
				    fname, CLI_LEDGER_NAME);
	static const char *const forms[] = { "%s.npy", "%s.none", "%s/" };
	for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
		char entry[300], path[4400];
		snprintf(entry, sizeof entry, forms[k], fname);
		if (path_fmt(path, sizeof path, err, "%s/%s", l->dir, entry))
			return err->code;
		size_t pl = strlen(path);
		if (path[pl - 1] == '/')
			path[pl - 1] = 0;
		struct stat st;
		if (lstat(path, &st) || ledger_has(l, entry))
			continue;
		return gc_error_set(err, GC_EINVAL,
				    "%s: already exists and graphcc did not write it (it is not in "
				    "%s/%s), so output '%s' is not written over it: graphcc replaces "
				    "only its own outputs; move it, or choose another --output-dir",
				    path, l->dir, CLI_LEDGER_NAME, fname);
	}
	return 0;
}

int cli_ledger_note(cli_ledger *l, const char *fname, const gc_tensor *t, gc_error *err)
{
	const char *form = "%s.npy";
	if (gc_dtype_is_optional(t->dtype) && t->data) {
		const gc_optional *o = t->data;
		form = !o->has_value			    ? "%s.none"
		       : gc_dtype_is_sequence(o->value.dtype) ? "%s/"
							    : "%s.npy";
	} else if (gc_dtype_is_sequence(t->dtype)) {
		form = "%s/";
	}
	static const char *const forms[] = { "%s.npy", "%s.none", "%s/" };
	char entry[300];
	for (size_t k = 0; k < sizeof forms / sizeof forms[0]; k++) {
		snprintf(entry, sizeof entry, forms[k], fname);
		ledger_drop(l, entry);
	}
	snprintf(entry, sizeof entry, form, fname);
	return ledger_add(l, entry, err);
}

int cli_ledger_save(cli_ledger *l, gc_error *err)
{
	size_t len = 0;
	for (int i = 0; i < l->n; i++)
		len += strlen(l->names[i]) + 1;
	char *buf = malloc(len + 1), path[4200];
	if (!buf)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	size_t at = 0;
	for (int i = 0; i < l->n; i++)
		at += (size_t)sprintf(buf + at, "%s\n", l->names[i]);
	int rc = path_fmt(path, sizeof path, err, "%s/%s", l->dir, CLI_LEDGER_NAME) ||
		 gc_write_file_atomic(path, buf, at, NULL, 0, err);
	free(buf);
	return rc ? err->code : 0;
}

void cli_ledger_free(cli_ledger *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->dir);
	memset(l, 0, sizeof *l);
}
