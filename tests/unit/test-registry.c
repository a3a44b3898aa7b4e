/* The op registry (lib/registry.c) and custom-node binding
 * (lib/bind-custom.c), on the fixture packages of tests/packages/ built
 * through the real dlopen path (make test-packages puts them beside this
 * binary, in <build>/tests/packages/). */
#include <graphcc/graphcc.h>

#include <limits.h>
#include <unistd.h>

#include "check.h"
#include "custom.h"
#include "package-impl.h"
#include "program-impl.h"

static char pkgdir[2048];

/* <build>/tests/packages/<fixture>/<fixture>.yaml */
static const char *fixture(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "%.2000s/%.100s/%.100s.yaml", pkgdir, name, name);
	return buf;
}

static void test_setup(void)
{
	char exe[PATH_MAX];
	CHECK_INT(check_exe_dir(exe, sizeof exe), 0);
	snprintf(pkgdir, sizeof pkgdir, "%.2000s/packages", exe);
	char good[PATH_MAX];
	if (access(fixture("good", good, sizeof good), R_OK))
		fprintf(stderr, "%s is missing: run make test-packages\n", good);
	CHECK(access(good, R_OK) == 0);
}

static void test_find_by_version(void)
{
	gc_registry *r = gc_registry_new();
	gc_error err = { 0 };
	char path[PATH_MAX];
	CHECK_INT(gc_registry_load(r, fixture("versions", path, sizeof path), &err), 0);
	/* served from version 1 and from version 3: an opset picks the newest
	 * one not above it; -1 (no opset import) the newest */
	const gc_op_spec *v1 = gc_registry_find(r, "test.fixtures", "AddOne", 1);
	const gc_op_spec *v2 = gc_registry_find(r, "test.fixtures", "AddOne", 2);
	const gc_op_spec *v3 = gc_registry_find(r, "test.fixtures", "AddOne", 3);
	const gc_op_spec *v9 = gc_registry_find(r, "test.fixtures", "AddOne", 9);
	CHECK(v1 && v2 && v3 && v9);
	CHECK_INT(v1->version, 1);
	CHECK(v2 == v1);
	CHECK_INT(v3->version, 3);
	CHECK(v9 == v3);
	CHECK(gc_registry_find(r, "test.fixtures", "AddTwo", 3) == NULL);
	CHECK(gc_registry_find(r, "other.domain", "AddOne", 3) == NULL);
	char have[256];
	gc_registry_list_domain(r, "test.fixtures", have, sizeof have);
	CHECK_CONTAINS(have, "AddOne");
	gc_registry_free(r);
}

static void test_duplicate_claim_names_both(void)
{
	gc_registry *r = gc_registry_new();
	gc_error err = { 0 };
	char good[PATH_MAX], dup[PATH_MAX];
	CHECK_INT(gc_registry_load(r, fixture("good", good, sizeof good), &err), 0);
	CHECK(gc_registry_load(r, fixture("dup-claim", dup, sizeof dup), &err) != 0);
	CHECK_CONTAINS(err.msg, "good.yaml");
	CHECK_CONTAINS(err.msg, "dup-claim.yaml");
	gc_registry_free(r);
}

/* One AddOne node (opset 2 of test.fixtures) on x float 2x3. */
static gc_graph *addone_graph(int n_attr, const gc_attr *attrs)
{
	gc_graph *g = gc_graph_new("bind-unit");
	gc_error err = { 0 };
	int64_t d[2] = { 2, 3 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_set_opset(g, "test.fixtures", 2, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	const char *in[] = { "x" }, *out[] = { "y" };
	gc_graph_add_node(g, "bump", "test.fixtures", "AddOne", 1, in, 1, out, n_attr, attrs, &err);
	gc_graph_add_output(g, "y", &err);
	return g;
}

static void test_bind_records_the_choice(void)
{
	gc_registry *r = gc_registry_new();
	gc_error err = { 0 };
	char path[PATH_MAX];
	CHECK_INT(gc_registry_load(r, fixture("good", path, sizeof path), &err), 0);
	float delta = 0.25f;
	gc_attr a = { .name = "delta", .type = GC_ATTR_FLOAT, .v.f = delta };
	gc_graph *g = addone_graph(1, &a);
	gc_program *p = NULL;
	gc_compile_options co = { .registry = r };
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	CHECK_INT(p->n_nodes, 1);
	const gc_custom *c = p->nodes[0].custom;
	CHECK(c);
	CHECK_STR(c->flavour, "addOneFloat");
	CHECK_STR(c->backend, "Interpreter");
	CHECK_STR(c->domain, "test.fixtures");
	CHECK(strstr(c->library, "libaddone_impl.so") && c->library[0] == '/');
	CHECK_INT(c->n_params, 2);
	CHECK_STR(c->params[0].name, "delta");
	CHECK_NEAR(*(const float *)c->params[0].data, delta, 0);
	CHECK_INT(c->params[1].size, 2); /* axes: its default [0, 1] */
	CHECK_INT(((const int64_t *)c->params[1].data)[1], 1);
	CHECK_INT(c->outs[0].rank, 2);
	CHECK_INT(c->outs[0].dims[1], 3);
	gc_program_free(p);
	gc_graph_free(g);
	/* the registry can go: the program keeps its own copy of the binding */
	g = addone_graph(0, NULL);
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	gc_registry_free(r);
	c = p->nodes[0].custom;
	CHECK_STR(c->op_name, "AddOne");
	CHECK_NEAR(*(const float *)c->params[0].data, 1.0f, 0); /* delta's default */
	gc_program_free(p);
	gc_graph_free(g);
}

static void test_bind_refusals(void)
{
	gc_registry *r = gc_registry_new();
	gc_error err = { 0 };
	char path[PATH_MAX];
	CHECK_INT(gc_registry_load(r, fixture("good", path, sizeof path), &err), 0);
	gc_compile_options co = { .registry = r };
	gc_program *p = NULL;
	const struct {
		gc_attr attr;
		const char *must[2];
	} cases[] = {
		{ { .name = "gamma", .type = GC_ATTR_FLOAT, .v.f = 1 },
		  { "attribute 'gamma' is not declared", "node 'bump'" } },
		{ { .name = "delta", .type = GC_ATTR_STRING, .n = 1, .v.s = "x" },
		  { "attribute 'delta' is of type", "param 'delta'" } },
		{ { .name = "axes", .type = GC_ATTR_INTS, .n = 3,
		    .v.ints = (int64_t[]){ 0, 1, 2 } },
		  { "attribute 'axes' has 3 values", "needs exactly 2" } },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		gc_graph *g = addone_graph(1, &cases[i].attr);
		err = (gc_error){ 0 };
		int rc = gc_compile(g, &co, &p, &err);
		gc_graph_free(g);
		CHECK_INT(rc, GC_EINVAL);
		CHECK(p == NULL);
		CHECK_CONTAINS(err.msg, cases[i].must[0]);
		CHECK_CONTAINS(err.msg, cases[i].must[1]);
	}
	/* no package for the domain: said so, with how to give one */
	gc_graph *g = addone_graph(0, NULL);
	err = (gc_error){ 0 };
	gc_compile_options none = { .registry = gc_registry_new() };
	CHECK_INT(gc_compile(g, &none, &p, &err), GC_EUNSUPPORTED);
	CHECK_CONTAINS(err.msg, "no op package provides 'AddOne' in domain 'test.fixtures'");
	gc_registry_free((gc_registry *)none.registry);
	gc_graph_free(g);
	gc_registry_free(r);
}

TEST_MAIN(TEST(test_setup), TEST(test_find_by_version), TEST(test_duplicate_claim_names_both),
	  TEST(test_bind_records_the_choice), TEST(test_bind_refusals))
