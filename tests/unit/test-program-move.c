/* Movable programs (issue 18 item 5): a .gcb of the demo model and its op
 * package moved to other folders loads with gc_load_options.library_map,
 * the SHA-256 pins still hold (a mapped library with another hash is
 * refused; allowed, it is a warning on the program's log); a program
 * loaded from memory (gc_program_load_mem) runs bit-identically to the
 * same file; truncated and garbage buffers are refused with a message. */
#include <graphcc/graphcc.h>

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "session-impl.h"

static char root[PATH_MAX + 8];	 /* the source tree */
static char plugins[PATH_MAX + 16]; /* <build>/plugins */
static char tmp[] = "/tmp/gc-move-XXXXXX";
static float x_data[3 * 64 * 64];
static float y_ref[16];
static int64_t y_n;

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmp);
}

static const char *in_tmp(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmp, rel);
	return buf;
}

static int sh(const char *fmt, const char *a, const char *b)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, fmt, a, b);
	return system(cmd);
}

/* The demo program's output for x_data, from the session s: into y (n
 * floats); 0 on success. */
static int run_demo(const gc_program *p, float *y, int64_t *n, gc_error *err)
{
	gc_session *s = NULL;
	int rc = gc_session_new(p, NULL, &s, err);
	gc_tensor t = { .data = x_data, .dims = { 1, 3, 64, 64 }, .rank = 4,
			.dtype = GC_DTYPE_FLOAT };
	if (!rc)
		rc = gc_session_set_input(s, 0, &t, err);
	if (!rc)
		rc = gc_session_run(s, err);
	if (!rc) {
		const gc_tensor *o = gc_session_output(s, 0);
		*n = gc_tensor_numel(o);
		if (*n > 16)
			rc = gc_error_set(err, GC_EINVAL, "output of %lld elements", (long long)*n);
		else
			memcpy(y, o->data, (size_t)*n * sizeof(float));
	}
	gc_session_free(s);
	return rc;
}

/* a/m.gcb compiled with the package at a/pkg (its libraries recorded as
 * pkg/lib/...), and its output. */
static void test_compile(void)
{
	char exe[PATH_MAX], buf[PATH_MAX + 32], gcb[PATH_MAX];
	CHECK_INT(check_exe_dir(exe, sizeof exe), 0); /* <build>/tests */
	snprintf(plugins, sizeof plugins, "%.4000s/../plugins", exe);
	*strrchr(exe, '/') = 0; /* <build> */
	snprintf(root, sizeof root, "%.4000s/..", exe);
	CHECK(mkdtemp(tmp) != NULL);
	atexit(cleanup);
	CHECK_INT(sh("mkdir -p '%s/a%s'", tmp, ""), 0);
	CHECK_INT(sh("cp -r '%s/demo' '%s/a/pkg'", plugins, tmp), 0);
	srand(5);
	for (size_t i = 0; i < sizeof x_data / sizeof *x_data; i++)
		x_data[i] = (float)rand() / (float)RAND_MAX * 2 - 1;
	gc_error err = { 0 };
	gc_registry *reg = gc_registry_new();
	CHECK_INT(gc_registry_load(reg, in_tmp(buf, "a/pkg/demo.yaml"), &err), 0);
	gc_graph *g = NULL;
	snprintf(buf, sizeof buf, "%.4000s/models/demo/model.onnx", root);
	CHECK_INT(gc_onnx_load(buf, &g, &err), 0);
	gc_compile_options co = { .registry = reg };
	gc_program *p = NULL;
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	CHECK_INT(gc_program_save(p, in_tmp(gcb, "a/m.gcb"), &err), 0);
	CHECK_INT(run_demo(p, y_ref, &y_n, &err), 0);
	gc_program_free(p);
	gc_graph_free(g);
	gc_registry_free(reg);
	/* as saved: relative to the program */
	CHECK_INT(gc_program_load(gcb, NULL, &p, &err), 0);
	gc_program_origin o;
	gc_program_get_origin(p, &o);
	CHECK_INT(o.n_libraries, 1);
	CHECK_CONTAINS(o.library_paths[0], "a/pkg/lib/libdemo_kernels.so");
	gc_program_free(p);
}

static int n_warned, n_busy;
static void program_log(void *user, gc_log_level level, const char *msg)
{
	if (user != &n_warned)
		return;
	if (level == GC_LOG_WARNING && strstr(msg, "changed since the program was compiled") &&
	    strstr(msg, "allowed by gc_load_options.allow_changed_kernels"))
		n_warned++;
	if (level == GC_LOG_WARNING && strstr(msg, "is in use by another call"))
		n_busy++;
}

/* b/m.gcb, and the package installed at opt/demo-2: found through the map
 * (absolute or relative `to`), refused without it, refused when the mapped
 * library has another hash, a warning on the program's log when allowed. */
static void test_moved_with_map(void)
{
	char a[PATH_MAX], gcb[PATH_MAX], inst[PATH_MAX];
	CHECK_INT(sh("mkdir -p '%s/b' '%s/opt'", tmp, tmp), 0);
	CHECK_INT(rename(in_tmp(a, "a/m.gcb"), in_tmp(gcb, "b/m.gcb")), 0);
	CHECK_INT(rename(in_tmp(a, "a/pkg"), in_tmp(inst, "opt/demo-2")), 0);
	gc_program *p = NULL;
	gc_error err = { 0 };
	CHECK(gc_program_load(gcb, NULL, &p, &err) != 0);
	CHECK_CONTAINS(err.msg, "cannot be read");
	CHECK(p == NULL);

	/* as recorded, absolute `to`; a `from` that matches nothing; as
	 * resolved, relative `to` */
	char bpkg[PATH_MAX];
	in_tmp(bpkg, "b/pkg/");
	gc_path_map maps[][1] = { { { "pkg", inst } }, { { "../opt/demo-2", "../opt/demo-2" } },
				  { { bpkg, "../opt/demo-2" } } };
	for (int i = 0; i < 3; i++) {
		gc_load_options lo = { .library_map = maps[i], .n_library_map = 1 };
		err = (gc_error){ 0 };
		if (i == 1) /* a `from` that matches nothing leaves the path alone */
			CHECK(gc_program_load(gcb, &lo, &p, &err) != 0);
		if (i == 1)
			continue;
		CHECK_INT(gc_program_load(gcb, &lo, &p, &err), 0);
		float y[16];
		int64_t n;
		CHECK_INT(run_demo(p, y, &n, &err), 0);
		CHECK_INT(n, y_n);
		CHECK(!memcmp(y, y_ref, (size_t)n * sizeof *y));
		gc_program_free(p);
	}

	/* another library at the mapped place: the pin refuses it */
	char lib[PATH_MAX + 32], keep[PATH_MAX];
	snprintf(lib, sizeof lib, "%.4000s/lib/libdemo_kernels.so", inst);
	snprintf(keep, sizeof keep, "%s/kernels.keep", tmp);
	/* (files the process has mapped are replaced by renaming a new one
	 * over them, never rewritten in place) */
	CHECK_INT(sh("cp '%s' '%s'", lib, keep), 0);
	CHECK_INT(sh("cp '%s' '%s.new'", keep, lib), 0);
	CHECK_INT(sh("printf 'x' >> '%s.new'%s", lib, ""), 0);
	CHECK_INT(sh("mv '%s.new' '%s'", lib, lib), 0);
	gc_load_options lo = { .library_map = maps[0], .n_library_map = 1, .log = program_log,
			       .log_user = &n_warned };
	err = (gc_error){ 0 };
	CHECK_INT(gc_program_load(gcb, &lo, &p, &err), GC_ECHANGED);
	CHECK_CONTAINS(err.msg, "changed since the program was compiled");
	CHECK_CONTAINS(err.msg, "mapped by gc_load_options.library_map[0]");
	CHECK_INT(n_warned, 0);
	/* allowed: the program's log says so, and its sessions log there too */
	lo.allow_changed_kernels = 1;
	err = (gc_error){ 0 };
	CHECK_INT(gc_program_load(gcb, &lo, &p, &err), 0);
	CHECK_INT(n_warned, 1);
	gc_session *s = NULL;
	CHECK_INT(gc_session_new(p, NULL, &s, &err), 0);
	/* a session without a log of its own uses the program's */
	CHECK_INT(gc_session_claim(s, "first", &err), 0);
	gc_error busy = { 0 };
	CHECK_INT(gc_session_claim(s, "second", &busy), GC_EBUSY);
	gc_session_unclaim(s);
	CHECK_INT(n_busy, 1);
	gc_session_free(s);
	gc_program_free(p);
	CHECK_INT(sh("cp '%s' '%s.new'", keep, lib), 0);
	CHECK_INT(sh("mv '%s.new' '%s'", lib, lib), 0);
}

static int read_file(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	*buf = malloc((size_t)n + 1);
	*len = *buf && fread(*buf, 1, (size_t)n, f) == (size_t)n ? (size_t)n : 0;
	fclose(f);
	return *len ? 0 : -1;
}

/* The same program from a buffer: the libraries through program_dir (the
 * recorded relative path) or the map; output bit-identical to the file's. */
static void test_load_mem(void)
{
	char gcb[PATH_MAX], bdir[PATH_MAX], inst[PATH_MAX];
	unsigned char *buf = NULL;
	size_t len = 0;
	CHECK_INT(read_file(in_tmp(gcb, "b/m.gcb"), &buf, &len), 0);
	in_tmp(bdir, "b");
	in_tmp(inst, "opt/demo-2");
	gc_path_map map = { "pkg", inst }, rel = { "pkg", "../opt/demo-2" };
	gc_program *p = NULL;
	gc_error err = { 0 };
	/* relative pins and no folder to take them in */
	CHECK_INT(gc_program_load_mem(buf, len, "db:demo", NULL, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "db:demo: kernel library pkg/lib/libdemo_kernels.so is relative");
	CHECK_CONTAINS(err.msg, "gc_load_options.program_dir");
	gc_load_options los[] = { { .library_map = &map, .n_library_map = 1 },
				  { .library_map = &rel, .n_library_map = 1, .program_dir = bdir } };
	for (int i = 0; i < 2; i++) {
		err = (gc_error){ 0 };
		CHECK_INT(gc_program_load_mem(buf, len, NULL, &los[i], &p, &err), 0);
		/* the buffer is the caller's again */
		unsigned char keep = buf[len / 2];
		buf[len / 2] ^= 0xff;
		float y[16];
		int64_t n;
		CHECK_INT(run_demo(p, y, &n, &err), 0);
		buf[len / 2] = keep;
		CHECK_INT(n, y_n);
		CHECK(!memcmp(y, y_ref, (size_t)n * sizeof *y));
		gc_program_origin o;
		gc_program_get_origin(p, &o);
		CHECK_INT(o.file_bytes, len);
		gc_program_free(p);
	}
	free(buf);
}

/* Truncated, flipped and garbage buffers: refused with a message. */
static void test_load_mem_hostile(void)
{
	char gcb[PATH_MAX], inst[PATH_MAX];
	unsigned char *buf = NULL;
	size_t len = 0;
	CHECK_INT(read_file(in_tmp(gcb, "b/m.gcb"), &buf, &len), 0);
	gc_path_map map = { "pkg", in_tmp(inst, "opt/demo-2") };
	gc_load_options lo = { .library_map = &map, .n_library_map = 1 };
	gc_program *p = (gc_program *)1;
	gc_error err = { 0 };
	CHECK_INT(gc_program_load_mem(NULL, 10, NULL, &lo, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "'buf' is NULL");
	CHECK(p == NULL);
	size_t step = len / 97 + 1;
	for (size_t n = 0; n < len; n += n < 300 ? 1 : step) {
		err = (gc_error){ 0 };
		CHECK(gc_program_load_mem(buf, n, "cut", &lo, &p, &err) != 0);
		CHECK(p == NULL && err.msg[0]);
	}
	for (size_t at = 0; at < len; at += step) {
		buf[at] ^= 0x5a;
		err = (gc_error){ 0 };
		/* (a byte no check covers, such as padding, may load) */
		if (gc_program_load_mem(buf, len, "flipped", &lo, &p, &err) == 0)
			gc_program_free(p);
		else
			CHECK_CONTAINS(err.msg, "flipped: ");
		buf[at] ^= 0x5a;
	}
	srand(18);
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)rand();
	err = (gc_error){ 0 };
	CHECK_INT(gc_program_load_mem(buf, len, "garbage", &lo, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "garbage: not a graphcc program");
	/* bad options */
	gc_path_map bad = { "pkg", NULL };
	gc_load_options blo = { .library_map = &bad, .n_library_map = 1 };
	err = (gc_error){ 0 };
	CHECK_INT(gc_program_load_mem(buf, len, NULL, &blo, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "gc_load_options.library_map[0].to is NULL");
	blo = (gc_load_options){ .n_library_map = 2 };
	err = (gc_error){ 0 };
	CHECK_INT(gc_program_load(gcb, &blo, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "gc_load_options.n_library_map is 2 with library_map NULL");
	free(buf);
}

TEST_MAIN(TEST(test_compile), TEST(test_moved_with_map), TEST(test_load_mem),
	  TEST(test_load_mem_hostile))
