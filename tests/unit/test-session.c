/* Sessions: the options' size field, and the executor's loop with hooks
 * (run-hooks.h), which gc_session_run, the debugging instruments and
 * --compare-flavours all run through. */
#include <graphcc/graphcc.h>

#include <stddef.h>

#include "backend.h"
#include "check.h"
#include "run-hooks.h"
#include "session-impl.h"

/* y = relu(x) + x, x float 2x3. */
static gc_program *small_program(void)
{
	gc_graph *g = gc_graph_new("small");
	gc_error err = { 0 };
	int64_t d[2] = { 2, 3 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 2, d, NULL, &err);
	const char *r_in[] = { "x" }, *r_out[] = { "r" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, r_in, 1, r_out, 0, NULL, &err);
	const char *a_in[] = { "r", "x" }, *a_out[] = { "y" };
	gc_graph_add_node(g, "add", "", "Add", 2, a_in, 1, a_out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	gc_program *p = NULL;
	if (err.code || gc_compile(g, NULL, &p, &err))
		fprintf(stderr, "small_program: %s\n", err.msg);
	gc_graph_free(g);
	return p;
}

/* y = relu(x), x float 4 (not compiled). */
static gc_graph *tiny_graph(void)
{
	gc_graph *g = gc_graph_new("tiny");
	gc_error err = { 0 };
	int64_t d[1] = { 4 };
	gc_graph_set_opset(g, "", 13, &err);
	gc_graph_add_input(g, "x", GC_DTYPE_FLOAT, 1, d, NULL, &err);
	const char *in[] = { "x" }, *out[] = { "y" };
	gc_graph_add_node(g, "relu", "", "Relu", 1, in, 1, out, 0, NULL, &err);
	gc_graph_add_output(g, "y", &err);
	return g;
}

static float x_data[6] = { -1, 2, -3, 4, -5, 6 };

static gc_session *small_session(gc_program *p)
{
	gc_error err = { 0 };
	gc_session *s = NULL;
	gc_session_options o = { .threads = 1 };
	gc_tensor in = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	if (gc_session_new(p, &o, &s, &err) || gc_session_set_input(s, 0, &in, &err))
		fprintf(stderr, "small_session: %s\n", err.msg);
	return s;
}

/* An options struct from an older caller (only `size` known), from this
 * version (size 0 or sizeof), from a newer one (larger), or broken. */
static void test_session_options_size(void)
{
	gc_program *p = small_program();
	CHECK(p);
	gc_error err = { 0 };
	gc_session *s = NULL;
	struct {
		gc_session_options o;
		char appended[32]; /* fields a newer header would have */
	} newer = { .o = { .size = sizeof newer, .threads = 3 } };
	memset(newer.appended, 0x7f, sizeof newer.appended);
	CHECK_INT(gc_session_new(p, &newer.o, &s, &err), 0);
	CHECK_INT(s->threads, 3);
	gc_session_free(s);
	gc_session_options o = { .size = sizeof o, .threads = 2 };
	CHECK_INT(gc_session_new(p, &o, &s, &err), 0);
	CHECK_INT(s->threads, 2);
	gc_session_free(s);
	o.size = 0;
	CHECK_INT(gc_session_new(p, &o, &s, &err), 0);
	CHECK_INT(s->threads, 2);
	gc_session_free(s);
	/* An older caller's struct ends before `threads`: what lies after it
	 * is not read; threads takes its default (not 2). */
	o = (gc_session_options){ .size = offsetof(gc_session_options, threads), .threads = -7 };
	CHECK_INT(gc_session_new(p, &o, &s, &err), 0);
	CHECK(s->threads >= 1);
	gc_session_free(s);
	o.size = 3;
	CHECK_INT(gc_session_new(p, &o, &s, &err), GC_EINVAL);
	CHECK(s == NULL);
	CHECK_CONTAINS(err.msg, "gc_session_options: size 3 is too small");
	gc_program_free(p);
}

/* no_arena: every arena tensor in its own block (none inside another's),
 * the same outputs as with the arena; an older caller's struct that ends
 * before the field gets the arena. */
static void test_session_no_arena(void)
{
	gc_program *p = small_program();
	CHECK(p);
	gc_error err = { 0 };
	gc_session *s = NULL, *a = small_session(p);
	gc_tensor in = { .data = x_data, .dims = { 2, 3 }, .rank = 2, .dtype = GC_DTYPE_FLOAT };
	gc_session_options o = { .size = sizeof o, .threads = 1, .no_arena = 1 };
	CHECK_INT(gc_session_new(p, &o, &s, &err), 0);
	CHECK(s->arena == NULL && s->own != NULL);
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (p->tensors[t].storage == GC_STORAGE_ARENA)
			CHECK(s->tensors[t].data == s->own[t] && s->own[t]);
	CHECK_INT(gc_session_set_input(s, 0, &in, &err), 0);
	CHECK_INT(gc_session_run(s, &err), 0);
	CHECK_INT(gc_session_run(a, &err), 0);
	const gc_tensor *y = gc_session_output(s, 0), *ya = gc_session_output(a, 0);
	CHECK(y->data != ya->data);
	CHECK(!memcmp(y->data, ya->data, 6 * sizeof(float)));
	CHECK(((const float *)y->data)[1] == 4.0f && ((const float *)y->data)[0] == -1.0f);
	gc_session_free(s);
	o = (gc_session_options){ .size = offsetof(gc_session_options, no_arena), .no_arena = 1 };
	CHECK_INT(gc_session_new(p, &o, &s, &err), 0);
	CHECK(s->own == NULL);
	gc_session_free(s);
	gc_session_free(a);
	gc_program_free(p);
}

static void test_compile_and_load_options_size(void)
{
	gc_error err = { 0 };
	gc_graph *g = tiny_graph();
	gc_program *p = NULL;
	gc_compile_options co = { .size = 1 };
	CHECK_INT(gc_compile(g, &co, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "gc_compile_options: size 1 is too small");
	co.size = sizeof co;
	err = (gc_error){ 0 };
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	gc_program_free(p);
	gc_graph_free(g);
	gc_load_options lo = { .size = 2 };
	CHECK_INT(gc_program_load("/nonexistent.gcb", &lo, &p, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "gc_load_options: size 2 is too small");
}

typedef struct counts {
	int before, after, failed;
	int32_t order[8];
	int stop_at; /* before-hook of this node fails; -1: none */
	int fail_rc;
} counts;

static int count_before(void *user, gc_run_node *rn, gc_error *err)
{
	counts *c = user;
	if (c->before < 8)
		c->order[c->before] = rn->index;
	c->before++;
	if (rn->index == c->stop_at)
		return gc_error_set(err, GC_ECRASH, "stopped before '%s'", rn->node->name);
	return 0;
}

static int count_after(void *user, const gc_run_node *rn, gc_error *err)
{
	(void)err;
	counts *c = user;
	c->after++;
	/* after a node ran, its output holds its value */
	if (rn->index == 0 && ((float *)rn->out[0]->data)[1] != 2)
		return gc_error_set(err, GC_EINVAL, "relu's output not written");
	return 0;
}

static void count_failed(void *user, const gc_run_node *rn, int rc, gc_error *err)
{
	(void)rn;
	(void)err;
	counts *c = user;
	c->failed++;
	c->fail_rc = rc;
}

static void test_run_hooks(void)
{
	gc_program *p = small_program();
	CHECK(p);
	gc_session *s = small_session(p);
	CHECK(s);
	gc_error err = { 0 };
	counts c = { .stop_at = -1 };
	gc_run_hooks h = { .user = &c, .before = count_before, .after = count_after,
			   .on_failure = count_failed };
	CHECK_INT(gc_session_run_hooked(s, &h, &err), 0);
	CHECK_INT(c.before, 2);
	CHECK_INT(c.after, 2);
	CHECK_INT(c.failed, 0);
	CHECK_INT(c.order[0], 0);
	CHECK_INT(c.order[1], 1);
	const float want[6] = { -1, 4, -3, 8, -5, 12 };
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(((const float *)gc_session_output(s, 0)->data)[i], want[i], 0);
	/* A before-hook's failure stops the run there, with its error. */
	c = (counts){ .stop_at = 1 };
	CHECK_INT(gc_session_run_hooked(s, &h, &err), GC_ECRASH);
	CHECK_CONTAINS(err.msg, "stopped before 'add'");
	CHECK_INT(c.before, 2);
	CHECK_INT(c.after, 1);
	CHECK_INT(c.failed, 0);
	/* No hooks: gc_session_run's loop. */
	err = (gc_error){ 0 };
	CHECK_INT(gc_session_run_hooked(s, NULL, &err), 0);
	gc_session_free(s);
	gc_program_free(p);
}

/* A kernel that fails: on_failure sees it, after does not. */
static int failing_run(gc_kctx *k, const gc_node *n, gc_tensor *const *in,
		       gc_tensor *const *out)
{
	(void)n;
	(void)in;
	(void)out;
	return gc_kerr(k, GC_EKERNEL, "failing on purpose");
}

static void test_run_hooks_kernel_failure(void)
{
	gc_program *p = small_program();
	CHECK(p);
	gc_session *s = small_session(p);
	CHECK(s);
	gc_node *add = &p->nodes[1];
	gc_run_fn saved = add->run;
	add->run = failing_run;
	gc_error err = { 0 };
	counts c = { .stop_at = -1 };
	gc_run_hooks h = { .user = &c, .before = count_before, .after = count_after,
			   .on_failure = count_failed };
	int rc = gc_session_run_hooked(s, &h, &err);
	add->run = saved;
	CHECK_INT(rc, GC_EKERNEL);
	CHECK_CONTAINS(err.msg, "node 'add' (Add): failing on purpose");
	CHECK_INT(c.before, 2);
	CHECK_INT(c.after, 1);
	CHECK_INT(c.failed, 1);
	CHECK_INT(c.fail_rc, GC_EKERNEL);
	gc_session_free(s);
	gc_program_free(p);
}

/* A backend is a value: found by name, the default first; programs and
 * compile options go through it. */
static void test_backend_descriptor(void)
{
	const gc_backend *b = gc_backend_find(NULL);
	CHECK(b);
	CHECK(b == gc_backends[0]);
	CHECK_STR(b->name, "Interpreter");
	CHECK(gc_backend_find("Interpreter") == b);
	CHECK(gc_backend_find("interpreter") == NULL);
	CHECK(gc_backend_find("Vulkan") == NULL);
	CHECK(b->ops == gc_op_table);
	CHECK(b->arena_align >= 16 && (b->arena_align & (b->arena_align - 1)) == 0);
	char names[64];
	CHECK_STR(gc_backend_names(names, sizeof names), "Interpreter");
	gc_program *p = small_program();
	CHECK(p);
	CHECK(p->backend == b);
	/* every arena block starts at the backend's alignment */
	for (int32_t t = 0; t < p->n_tensors; t++)
		if (p->tensors[t].storage == GC_STORAGE_ARENA)
			CHECK_INT(p->tensors[t].offset % b->arena_align, 0);
	gc_program_free(p);
	gc_graph *g = tiny_graph();
	gc_error err = { 0 };
	gc_compile_options co = { .backend = "Vulkan" };
	CHECK_INT(gc_compile(g, &co, &p, &err), GC_EUNSUPPORTED);
	CHECK_CONTAINS(err.msg, "backend 'Vulkan': this build has no such backend (it has: "
				"Interpreter)");
	co.backend = "Interpreter";
	err = (gc_error){ 0 };
	CHECK_INT(gc_compile(g, &co, &p, &err), 0);
	CHECK(p->backend == b);
	gc_program_free(p);
	gc_graph_free(g);
}

TEST_MAIN(TEST(test_backend_descriptor), TEST(test_session_options_size), TEST(test_session_no_arena),
	  TEST(test_compile_and_load_options_size),
	  TEST(test_run_hooks), TEST(test_run_hooks_kernel_failure))
