/* The op registry: loaded packages, their libraries, and lookup by
 * (domain, type, version). */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../runtime/build.h"
#include "elf-check.h"
#include "package-impl.h"

struct gc_registry {
	gc_package **pkgs;
	int32_t n_pkgs, cap_pkgs;
	void (*note)(void *, const char *);
	void *note_user;
	char **dirs; /* gc_registry_options.library_dirs, copied */
	int32_t n_dirs;
	bool dry_run;
};

gc_registry *gc_registry_new(void)
{
	return gc_calloc(1, sizeof(gc_registry));
}

void gc_registry_free(gc_registry *r)
{
	if (!r)
		return;
	for (int32_t i = 0; i < r->n_pkgs; i++)
		gc_package_free(r->pkgs[i]);
	for (int32_t i = 0; i < r->n_dirs; i++)
		gc_free(r->dirs[i]);
	gc_free(r->dirs);
	gc_free(r->pkgs);
	gc_free(r);
}

int gc_registry_set_options(gc_registry *r, const gc_registry_options *opt_in)
{
	gc_registry_options o;
	gc_error e = { 0 };
	if (!r || gc_options_copy(&o, sizeof o, opt_in, "gc_registry_options", &e))
		return GC_EINVAL;
	if (o.n_library_dirs < 0 || (o.n_library_dirs && !o.library_dirs))
		return GC_EINVAL;
	for (int32_t i = 0; i < o.n_library_dirs; i++)
		if (!o.library_dirs[i])
			return GC_EINVAL;
	const gc_registry_options *opt = &o;
	for (int32_t i = 0; i < r->n_dirs; i++)
		gc_free(r->dirs[i]);
	gc_free(r->dirs);
	r->dirs = NULL;
	r->n_dirs = 0;
	r->dry_run = opt && opt->dry_run;
	if (!opt || opt->n_library_dirs <= 0)
		return 0;
	r->dirs = gc_calloc((size_t)opt->n_library_dirs, sizeof *r->dirs);
	if (!r->dirs)
		return GC_ENOMEM;
	for (int32_t i = 0; i < opt->n_library_dirs; i++) {
		if (!(r->dirs[i] = gc_strdup(opt->library_dirs[i])))
			return GC_ENOMEM;
		r->n_dirs = i + 1;
	}
	return 0;
}

void gc_registry_set_note_handler(gc_registry *r, void (*note)(void *user, const char *msg),
				  void *user)
{
	if (!r)
		return;
	r->note = note;
	r->note_user = user;
}

/* Prefixes a library error with where the manifest names it. */
static int at(gc_error *err, const gc_op_spec *op, int line, int col, const char *key)
{
	return gc_error_prefix(err, "%s:%d:%d: key '%s' (operation %s)", op->file, line, col, key,
			       op->name);
}

static int load_impl(gc_op_spec *op, gc_impl_spec *im, gc_error *err)
{
	if (gc_dynlib_open(im->impl, &im->lib, err) || gc_dynlib_abi(im->lib, &im->graphcc_iface, err))
		return at(err, op, im->line, im->col, "impl");
	if (!gc_dynlib_fn(im->lib, im->symbol, err))
		return at(err, op, im->line, im->col, "symbol");
	const char *extra[3] = { im->init, im->destroy, im->scratch };
	const char *names[3] = { "init", "destroy", "scratch" };
	for (int k = 0; k < 3; k++) {
		if (!extra[k])
			continue;
		if (!im->graphcc_iface) {
			gc_error_set(err, GC_EINVAL,
				     "'%s' is a graphcc-interface entry point, but library %s is "
				     "written to the seed interface (it does not say "
				     "GC_CUSTOMOP_EXPORT_ABI())",
				     names[k], im->impl);
			return at(err, op, im->line, im->col, names[k]);
		}
		if (!gc_dynlib_fn(im->lib, extra[k], err))
			return at(err, op, im->line, im->col, names[k]);
	}
	return 0;
}

int gc_package_load_libraries(gc_package *pkg, gc_error *err)
{
	for (int32_t i = 0; i < pkg->n_ops; i++) {
		gc_op_spec *op = &pkg->ops[i];
		if (gc_dynlib_open(op->functions_library, &op->fnlib, err) ||
		    gc_dynlib_abi(op->fnlib, &op->graphcc_iface, err))
			return at(err, op, op->fl_line, op->fl_col, "functionsLibrary");
		if (!(op->verify_fn = gc_dynlib_fn(op->fnlib, op->verify, err)) ||
		    !(op->infer_fn = gc_dynlib_fn(op->fnlib, op->infer_shape, err)) ||
		    !(op->select_fn = gc_dynlib_fn(op->fnlib, op->select_impl, err)))
			return at(err, op, op->fl_line, op->fl_col,
				  !op->verify_fn  ? "verify"
				  : !op->infer_fn ? "inferShape"
						  : "selectImpl");
		for (int32_t j = 0; j < op->n_impls; j++)
			if (!op->impls[j].skipped && load_impl(op, &op->impls[j], err))
				return err->code;
	}
	return 0;
}

/* Does op serve (domain, type) at the model's opset version? */
static bool serves(const gc_op_spec *op, const char *domain, const char *type, int64_t version)
{
	return !strcmp(op->domain, domain) && !strcmp(op->type, type) &&
	       (op->version < 0 || version < 0 || op->version <= version);
}

const gc_op_spec *gc_registry_find(const gc_registry *r, const char *domain, const char *type,
				   int64_t version)
{
	const gc_op_spec *best = NULL;
	for (int32_t i = 0; r && i < r->n_pkgs; i++)
		for (int32_t j = 0; j < r->pkgs[i]->n_ops; j++) {
			const gc_op_spec *op = &r->pkgs[i]->ops[j];
			if (serves(op, domain, type, version) && (!best || op->version > best->version))
				best = op;
		}
	return best;
}

void gc_registry_list_domain(const gc_registry *r, const char *domain, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = 0;
	for (int32_t i = 0; r && i < r->n_pkgs; i++)
		for (int32_t j = 0; j < r->pkgs[i]->n_ops && at < len; j++) {
			const gc_op_spec *op = &r->pkgs[i]->ops[j];
			if (strcmp(op->domain, domain))
				continue;
			int w = op->version >= 0
					? snprintf(buf + at, len - at, "%s%s (version %" PRId64 ")",
						   at ? ", " : "", op->type, op->version)
					: snprintf(buf + at, len - at, "%s%s", at ? ", " : "", op->type);
			if (w < 0)
				break;
			at += (size_t)w;
		}
}

/* Every library of pkg lies under the allowed folders (before any opens). */
static int check_dirs(const gc_registry *r, const gc_package *pkg, gc_error *err)
{
	const char *const *dirs = (const char *const *)r->dirs;
	for (int32_t i = 0; i < pkg->n_ops; i++) {
		const gc_op_spec *op = &pkg->ops[i];
		if (gc_dynlib_check_dirs(op->functions_library, dirs, r->n_dirs, err))
			return at(err, op, op->fl_line, op->fl_col, "functionsLibrary");
		for (int32_t j = 0; j < op->n_impls; j++) {
			const gc_impl_spec *im = &op->impls[j];
			if (!im->skipped && gc_dynlib_check_dirs(im->impl, dirs, r->n_dirs, err))
				return at(err, op, im->line, im->col, "impl");
		}
	}
	return 0;
}

/* The interface and ABI of a library read as a file (dry run). */
static int elf_abi(const gc_elf *e, const char *path, bool *graphcc, gc_error *err)
{
	uint32_t v = 0;
	*graphcc = gc_elf_exports(e, "graphcc_customop_abi");
	if (!*graphcc)
		return 0;
	if (!gc_elf_u32(e, "graphcc_customop_abi", &v))
		return gc_error_set(err, GC_EINVAL,
				    "library %s exports graphcc_customop_abi, but its value is not "
				    "in the file",
				    path);
	if ((int)(v >> 16) != GC_CUSTOMOP_ABI_MAJOR)
		return gc_error_set(err, GC_EINVAL,
				    "library %s is built for graphcc op ABI %u.%u; this graphcc "
				    "speaks ABI %d.%d (major versions must match: rebuild the "
				    "package against this graphcc's customop.h)",
				    path, v >> 16, v & 0xffff, GC_CUSTOMOP_ABI_MAJOR,
				    GC_CUSTOMOP_ABI_MINOR);
	return 0;
}

static int elf_sym(const gc_elf *e, const char *path, const char *sym, gc_error *err)
{
	if (gc_elf_exports(e, sym))
		return 0;
	return gc_error_set(err, GC_EINVAL,
			    "library %s has no symbol '%s' (its exported symbols were read from "
			    "the file; gc_registry_options.dry_run, --dry-run, loads nothing)",
			    path, sym);
}

/* What gc_package_load_libraries checks, from the files alone. */
static int dry_run(gc_package *pkg, gc_error *err)
{
	for (int32_t i = 0; i < pkg->n_ops; i++) {
		gc_op_spec *op = &pkg->ops[i];
		gc_elf *e;
		if (gc_elf_open(op->functions_library, &e, err) ||
		    elf_abi(e, op->functions_library, &op->graphcc_iface, err))
			goto fn_fail;
		const char *syms[3] = { op->verify, op->infer_shape, op->select_impl };
		const char *keys[3] = { "verify", "inferShape", "selectImpl" };
		for (int k = 0; k < 3; k++)
			if (elf_sym(e, op->functions_library, syms[k], err)) {
				gc_elf_free(e);
				return at(err, op, op->fl_line, op->fl_col, keys[k]);
			}
		gc_elf_free(e);
		for (int32_t j = 0; j < op->n_impls; j++) {
			gc_impl_spec *im = &op->impls[j];
			if (im->skipped)
				continue;
			if (gc_elf_open(im->impl, &e, err) ||
			    elf_abi(e, im->impl, &im->graphcc_iface, err)) {
				gc_elf_free(e);
				return at(err, op, im->line, im->col, "impl");
			}
			if ((im->init || im->destroy || im->scratch) && !im->graphcc_iface) {
				gc_elf_free(e);
				gc_error_set(err, GC_EINVAL,
					     "'%s' is a graphcc-interface entry point, but library %s is "
					     "written to the seed interface (it does not say "
					     "GC_CUSTOMOP_EXPORT_ABI())",
					     im->init ? "init" : im->destroy ? "destroy" : "scratch",
					     im->impl);
				return at(err, op, im->line, im->col,
					  im->init ? "init" : im->destroy ? "destroy" : "scratch");
			}
			const char *isyms[4] = { im->symbol, im->init, im->destroy, im->scratch };
			const char *ikeys[4] = { "symbol", "init", "destroy", "scratch" };
			for (int k = 0; k < 4; k++)
				if (isyms[k] && elf_sym(e, im->impl, isyms[k], err)) {
					gc_elf_free(e);
					return at(err, op, im->line, im->col, ikeys[k]);
				}
			gc_elf_free(e);
		}
		continue;
	fn_fail:
		gc_elf_free(e);
		return at(err, op, op->fl_line, op->fl_col, "functionsLibrary");
	}
	return 0;
}

int gc_registry_load(gc_registry *r, const char *manifest, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	gc_package *pkg;
	GC_ARG_NONNULL(err, r);
	GC_ARG_NONNULL(err, manifest);
	if (gc_manifest_parse_to_run(manifest, &pkg, r->note, r->note_user, err))
		return err->code;
	int rc = check_dirs(r, pkg, err);
	if (!rc)
		rc = r->dry_run ? dry_run(pkg, err) : gc_package_load_libraries(pkg, err);
	for (int32_t j = 0; !rc && j < pkg->n_ops; j++) {
		const gc_op_spec *a = &pkg->ops[j];
		for (int32_t i = 0; !rc && i < r->n_pkgs; i++)
			for (int32_t k = 0; !rc && k < r->pkgs[i]->n_ops; k++) {
				const gc_op_spec *b = &r->pkgs[i]->ops[k];
				if (strcmp(a->domain, b->domain) || strcmp(a->type, b->type) ||
				    a->version != b->version)
					continue;
				char ver[32] = "every version";
				if (a->version >= 0)
					snprintf(ver, sizeof ver, "version %" PRId64, a->version);
				rc = gc_error_set(err, GC_EINVAL,
						  "%s:%d:%d: operation %s::%s (%s) is already "
						  "provided by %s:%d:%d; a (domain, type, version) may "
						  "come from one package only",
						  a->file, a->line, a->col, a->domain, a->type, ver,
						  b->file, b->line, b->col);
			}
	}
	if (!rc && r->n_pkgs == r->cap_pkgs) {
		int32_t cap = r->cap_pkgs ? r->cap_pkgs * 2 : 4;
		gc_package **p = gc_realloc(r->pkgs, (size_t)cap * sizeof *p);
		if (!p)
			rc = gc_error_set(err, GC_ENOMEM, "%s: out of memory", manifest);
		else {
			r->pkgs = p;
			r->cap_pkgs = cap;
		}
	}
	if (rc) {
		gc_package_free(pkg);
		return rc;
	}
	r->pkgs[r->n_pkgs++] = pkg;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(gc_registry *r, const char *dir, gc_error *err)
{
	DIR *d = opendir(dir);
	if (!d)
		return gc_error_set(err, GC_EIO, "GRAPHCC_OPS_PATH: cannot read folder %s", dir);
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".yaml"))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			char **nn = gc_realloc(names, cap * sizeof *nn);
			if (!nn) {
				rc = gc_error_set(err, GC_ENOMEM, "out of memory");
				break;
			}
			names = nn;
		}
		names[n] = gc_malloc(strlen(dir) + l + 2);
		if (!names[n]) {
			rc = gc_error_set(err, GC_ENOMEM, "out of memory");
			break;
		}
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	if (!rc && n)
		qsort(names, n, sizeof *names, by_name);
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = gc_registry_load(r, names[i], err);
		gc_free(names[i]);
	}
	gc_free(names);
	return rc;
}

int gc_registry_load_path(gc_registry *r, const char *list, gc_error *err)
{
	GC_ERR_OR_LOCAL(err);
	GC_ARG_NONNULL(err, r);
	GC_ARG_NONNULL(err, list);
	char *copy = gc_strdup(list);
	if (!copy)
		return gc_error_set(err, GC_ENOMEM, "out of memory");
	int rc = 0;
	for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok && !rc;
	     tok = strtok_r(NULL, ":", &save)) {
		struct stat st;
		if (stat(tok, &st))
			rc = gc_error_set(err, GC_EIO, "GRAPHCC_OPS_PATH: %s does not exist", tok);
		else if (S_ISDIR(st.st_mode))
			rc = load_dir(r, tok, err);
		else
			rc = gc_registry_load(r, tok, err);
	}
	gc_free(copy);
	return rc;
}

static const gc_op_spec *nth(const gc_registry *r, int i)
{
	if (!r || i < 0)
		return NULL;
	for (int32_t k = 0; k < r->n_pkgs; k++) {
		if (i < r->pkgs[k]->n_ops)
			return &r->pkgs[k]->ops[i];
		i -= r->pkgs[k]->n_ops;
	}
	return NULL;
}

int gc_registry_num_ops(const gc_registry *r)
{
	int n = 0;
	if (!r)
		return GC_EINVAL;
	for (int32_t k = 0; k < r->n_pkgs; k++)
		n += r->pkgs[k]->n_ops;
	return n;
}

void gc_registry_op(const gc_registry *r, int i, gc_op_desc *d)
{
	const gc_op_spec *op = nth(r, i);
	if (!d)
		return;
	memset(d, 0, sizeof *d);
	if (!op)
		return;
	*d = (gc_op_desc){ op->file,	     op->name,	     op->domain,     op->type,
			   op->version,	     op->n_inputs,   op->n_outputs,  op->n_params,
			   op->n_impls,	     op->functions_library, op->graphcc_iface, op->pure };
}

void gc_registry_impl(const gc_registry *r, int i, int j, gc_impl_desc *d)
{
	const gc_op_spec *op = nth(r, i);
	if (!d)
		return;
	memset(d, 0, sizeof *d);
	if (!op || j < 0 || j >= op->n_impls)
		return;
	const gc_impl_spec *im = &op->impls[j];
	*d = (gc_impl_desc){ im->backend,	  im->type,    im->impl, im->symbol,
			     im->config,	  im->graphcc_iface, im->skipped,
			     im->init != NULL, im->scratch != NULL || im->has_scratch_bytes };
}

int gc_registry_provides(const gc_registry *r, const char *domain, const char *type,
			 int64_t version)
{
	return r && type && gc_registry_find(r, domain ? domain : "", type, version) != NULL;
}

bool gc_impl_accepts(const gc_op_spec *op, const gc_impl_spec *im, gc_tensor *const *in,
		     int32_t n_in, char *why, size_t len)
{
	for (int32_t i = 0; i < im->n_accepts; i++) {
		const gc_accept_rule *r = &im->accepts[i];
		const gc_tensor *t = r->input < n_in ? in[r->input] : NULL;
		const char *name = op->inputs[r->input].name;
		char shp[160];
		if (!t) /* absent: nothing to check */
			continue;
		if (r->dtypes && !(t->dtype < 32 && (r->dtypes >> t->dtype & 1))) {
			snprintf(why, len, "input '%s' is %s (accepts at %s:%d)", name,
				 gc_dtype_name(t->dtype), op->file, r->line);
			return false;
		}
		if (r->ranks && !(t->rank >= 0 && t->rank < 32 && (r->ranks >> t->rank & 1))) {
			snprintf(why, len, "input '%s' has rank %d (accepts at %s:%d)", name, t->rank,
				 op->file, r->line);
			return false;
		}
		if (r->last_dim_multiple &&
		    (t->rank < 1 || t->dims[t->rank - 1] % r->last_dim_multiple)) {
			snprintf(why, len,
				 "input '%s' is %s: its last dimension is not a multiple of %" PRId64
				 " (accepts at %s:%d)",
				 name, gc_shape_str(t->dims, t->rank, shp, sizeof shp),
				 r->last_dim_multiple, op->file, r->line);
			return false;
		}
	}
	return true;
}
