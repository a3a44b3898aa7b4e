/* The custom-call layer (runtime/custom.c): the one place that calls into
 * a package. Package functions of both interfaces are defined here and
 * called through gc_custom_call_*, as bind-custom.c, flavours.c, selftest.c
 * and the runtime call them. */
#include <graphcc/customop.h>

#include "check.h"
#include "custom.h"

/* ---- a package written to the seed interface ---- */

static const char *seed_backend_seen;

static bool seed_verify(CustomOpIOTensor *in, int32_t n_in, CustomOpIOTensor *out, int32_t n_out,
			CustomOpParam *p, int32_t n_p)
{
	(void)out;
	(void)p;
	(void)n_p;
	return n_in == 1 && n_out == 1 && in[0].dtype == DTFloat32;
}

static bool seed_infer(CustomOpIOTensor *out, const int32_t n_out, const CustomOpIOTensor *in,
		       const int32_t n_in, const CustomOpParam *p, const int32_t n_p)
{
	(void)n_out;
	(void)n_in;
	(void)p;
	(void)n_p;
	out[0].rank = in[0].rank;
	for (int i = 0; i < in[0].rank; i++)
		out[0].dims[i] = in[0].dims[i];
	out[0].dtype = in[0].dtype;
	return in[0].rank > 0;
}

static const char *seed_select(CustomOpIOTensor *in, int32_t n_in, CustomOpIOTensor *out,
			       int32_t n_out, CustomOpParam *p, int32_t n_p, const char *backend)
{
	(void)in;
	(void)n_in;
	(void)out;
	(void)n_out;
	(void)p;
	(void)n_p;
	seed_backend_seen = backend;
	return strcmp(backend, "Interpreter") ? NULL : "seedFloat";
}

/* y = x * params[0] */
static void seed_kernel(CustomOpIOTensor *in, int32_t n_in, CustomOpIOTensor *out, int32_t n_out,
			CustomOpParam *p, int32_t n_p)
{
	(void)n_in;
	(void)n_out;
	(void)n_p;
	float a = *(const float *)p[0].data;
	for (int64_t i = 0; i < in[0].numel; i++)
		((float *)out[0].data)[i] = ((const float *)in[0].data)[i] * a;
}

/* ---- a package written to the graphcc interface ---- */

static GcStatus gc_verify(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			  const CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *p,
			  int32_t n_p)
{
	(void)out;
	(void)n_out;
	(void)p;
	(void)n_p;
	if (n_in != 1 || in[0].rank != 2) {
		ctx->set_error(ctx, "wants one 2-D input, has %d of rank %d", n_in, in[0].rank);
		return GC_STATUS_FAIL;
	}
	return GC_STATUS_OK;
}

static GcStatus gc_select(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			  const CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *p,
			  int32_t n_p, const char **flavour)
{
	(void)in;
	(void)n_in;
	(void)out;
	(void)n_out;
	(void)p;
	(void)n_p;
	*flavour = !strcmp(ctx->backend, "Interpreter") ? "gcFloat" : NULL;
	return GC_STATUS_OK; /* OK with no flavour: still no choice */
}

static GcStatus gc_scratch(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			   const CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *p,
			   int32_t n_p, uint64_t *bytes)
{
	(void)ctx;
	(void)n_in;
	(void)out;
	(void)n_out;
	(void)p;
	(void)n_p;
	*bytes = (uint64_t)in[0].numel * sizeof(float);
	return GC_STATUS_OK;
}

static int state_value = 7;
static int destroyed;

static GcStatus gc_init(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			const CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *p,
			int32_t n_p)
{
	(void)in;
	(void)n_in;
	(void)out;
	(void)n_out;
	(void)p;
	(void)n_p;
	ctx->state = &state_value;
	return GC_STATUS_OK;
}

static void gc_destroy(GcOpContext *ctx)
{
	destroyed += ctx->state == &state_value;
}

/* y = x + state; fails on a negative input, saying why */
static GcStatus gc_kernel(GcOpContext *ctx, const CustomOpIOTensor *in, int32_t n_in,
			  CustomOpIOTensor *out, int32_t n_out, const CustomOpParam *p, int32_t n_p)
{
	(void)n_in;
	(void)n_out;
	(void)p;
	(void)n_p;
	int add = *(const int *)ctx->state;
	for (int64_t i = 0; i < in[0].numel; i++) {
		float x = ((const float *)in[0].data)[i];
		if (x < 0) {
			ctx->set_error(ctx, "negative input at %lld", (long long)i);
			return GC_STATUS_FAIL;
		}
		((float *)out[0].data)[i] = x + (float)add;
	}
	return GC_STATUS_OK;
}

/* ---- the calls ---- */

typedef struct fixture {
	float x[6], y[6];
	gc_tensor tx, ty;
	CustomOpIOTensor v[2];
	int64_t dims[2 * GC_MAX_RANK];
	float alpha;
	CustomOpParam param;
	gc_custom_args a;
	GcOpContext ctx;
	gc_custom_host host;
} fixture;

static void fixture_init(fixture *f, const char *backend)
{
	memset(f, 0, sizeof *f);
	for (int i = 0; i < 6; i++)
		f->x[i] = (float)i;
	f->tx = (gc_tensor){ .dtype = GC_DTYPE_FLOAT, .rank = 2, .dims = { 2, 3 }, .data = f->x };
	f->ty = (gc_tensor){ .dtype = GC_DTYPE_FLOAT, .rank = 2, .dims = { 2, 3 }, .data = f->y };
	gc_custom_view(&f->v[0], f->dims, &f->tx, 4);
	gc_custom_view(&f->v[1], f->dims + GC_MAX_RANK, &f->ty, 4);
	f->alpha = 2.5f;
	f->param = (CustomOpParam){ .data = &f->alpha, .dtype = DTFloat32, .name = "alpha" };
	f->a = (gc_custom_args){ .in = &f->v[0], .n_in = 1, .out = &f->v[1], .n_out = 1,
				 .params = &f->param, .n_params = 1 };
	gc_custom_ctx_init(&f->ctx, &f->host, "Op", "com.test", "Op", "node", backend, NULL,
			   NULL);
}

static void test_view(void)
{
	fixture f;
	fixture_init(&f, "Interpreter");
	CHECK(f.v[0].data == f.x);
	CHECK_INT(f.v[0].rank, 2);
	CHECK_INT(f.v[0].numel, 6);
	CHECK_INT(f.v[0].maxDims, 4);
	CHECK_INT(f.v[0].dtype, DTFloat32);
	CHECK(f.v[0].dims == f.dims); /* a copy: package code never writes graphcc's */
	CHECK_INT(f.v[0].dims[1], 3);
	CustomOpIOTensor absent;
	int64_t d[GC_MAX_RANK];
	gc_custom_view(&absent, d, NULL, 3);
	CHECK(absent.data == NULL);
	CHECK_INT(absent.dtype, DTCustomOpDataTypeCount);
	for (int dt = 0; dt < 32; dt++) {
		CustomOpDataType co = gc_custom_dtype((gc_dtype)dt);
		if (co != DTCustomOpDataTypeCount)
			CHECK_INT(gc_custom_dtype_back(co), dt);
	}
	CHECK_INT(gc_custom_dtype(GC_DTYPE_STRING), DTString);
	CHECK_INT(gc_custom_dtype_back(DTQInt8), GC_DTYPE_INT8);
	CHECK_STR(gc_custom_dtype_name(DTFloat32), "DTFloat32");
}

static void test_seed_interface(void)
{
	fixture f;
	fixture_init(&f, "Interpreter");
	CHECK_INT(gc_custom_call_verify((gc_fnptr)seed_verify, false, &f.ctx, &f.a), GC_STATUS_OK);
	f.v[0].dtype = DTIInt32;
	CHECK_INT(gc_custom_call_verify((gc_fnptr)seed_verify, false, &f.ctx, &f.a),
		  GC_STATUS_FAIL);
	f.v[0].dtype = DTFloat32;
	f.v[1].rank = 0;
	CHECK_INT(gc_custom_call_infer((gc_fnptr)seed_infer, false, &f.ctx, &f.a), GC_STATUS_OK);
	CHECK_INT(f.v[1].rank, 2);
	CHECK_INT(f.v[1].dims[0], 2);
	const char *flavour = "x";
	CHECK_INT(gc_custom_call_select((gc_fnptr)seed_select, false, &f.ctx, &f.a, &flavour),
		  GC_STATUS_OK);
	CHECK_STR(flavour, "seedFloat");
	CHECK_STR(seed_backend_seen, "Interpreter"); /* the seed gets ctx->backend */
	fixture_init(&f, "Vulkan");
	CHECK_INT(gc_custom_call_select((gc_fnptr)seed_select, false, &f.ctx, &f.a, &flavour),
		  GC_STATUS_FAIL);
	CHECK(flavour == NULL);
	fixture_init(&f, "Interpreter");
	CHECK_INT(gc_custom_call_kernel((gc_fnptr)seed_kernel, false, NULL, &f.a), GC_STATUS_OK);
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(f.y[i], 2.5f * (float)i, 0);
	gc_error err = { 0 };
	CHECK_INT(gc_custom_check_iface("libseed.so", false, false, &err), 0);
	CHECK_INT(gc_custom_check_iface("libseed.so", true, true, &err), 0);
	CHECK_INT(gc_custom_check_iface("libseed.so", false, true, &err), GC_EINVAL);
	CHECK_CONTAINS(err.msg, "library libseed.so is written to the seed interface");
}

static void test_graphcc_interface(void)
{
	fixture f;
	fixture_init(&f, "Interpreter");
	CHECK_INT(gc_custom_call_verify((gc_fnptr)gc_verify, true, &f.ctx, &f.a), GC_STATUS_OK);
	f.v[0].rank = 3;
	CHECK_INT(gc_custom_call_verify((gc_fnptr)gc_verify, true, &f.ctx, &f.a), GC_STATUS_FAIL);
	CHECK_STR(f.host.msg, "wants one 2-D input, has 1 of rank 3"); /* set_error lands here */
	f.v[0].rank = 2;
	const char *flavour = NULL;
	CHECK_INT(gc_custom_call_select((gc_fnptr)gc_select, true, &f.ctx, &f.a, &flavour),
		  GC_STATUS_OK);
	CHECK_STR(flavour, "gcFloat");
	fixture_init(&f, "Vulkan");
	CHECK_INT(gc_custom_call_select((gc_fnptr)gc_select, true, &f.ctx, &f.a, &flavour),
		  GC_STATUS_FAIL); /* OK but no flavour is no choice */
	CHECK(flavour == NULL);
	fixture_init(&f, "Interpreter");
	uint64_t bytes = 1;
	CHECK_INT(gc_custom_call_scratch((gc_fnptr)gc_scratch, &f.ctx, &f.a, &bytes), GC_STATUS_OK);
	CHECK_INT(bytes, 24);
	CHECK_INT(gc_custom_call_init((gc_fnptr)gc_init, &f.ctx, &f.a), GC_STATUS_OK);
	CHECK(f.ctx.state == &state_value);
	CHECK_INT(gc_custom_call_kernel((gc_fnptr)gc_kernel, true, &f.ctx, &f.a), GC_STATUS_OK);
	for (int i = 0; i < 6; i++)
		CHECK_NEAR(f.y[i], (float)i + 7, 0);
	f.x[4] = -1;
	CHECK_INT(gc_custom_call_kernel((gc_fnptr)gc_kernel, true, &f.ctx, &f.a), GC_STATUS_FAIL);
	CHECK_STR(f.host.msg, "negative input at 4");
	destroyed = 0;
	gc_custom_call_destroy((gc_fnptr)gc_destroy, &f.ctx);
	CHECK_INT(destroyed, 1);
	/* the context a package sees */
	CHECK_INT(f.ctx.struct_size, sizeof(GcOpContext));
	CHECK_INT(f.ctx.abi_version, GC_CUSTOMOP_ABI_VERSION);
	CHECK_STR(f.ctx.config, "");
	CHECK_STR(f.ctx.node_name, "node");
}

/* ---- what inferShape left in an output view (gc_custom_inferred) ---- */

/* An output view as inferShape gets it (maxDims 3), then filled as a
 * well-behaved inference would: float32 2x5. */
typedef struct inferred_fixture {
	CustomOpIOTensor o;
	int64_t dims[GC_CUSTOM_DIMS_SLOTS];
	gc_custom_out_decl decl;
	gc_tensor t;
	char msg[600];
} inferred_fixture;

static void inferred_init(inferred_fixture *f)
{
	memset(f, 0, sizeof *f);
	gc_custom_infer_view(&f->o, f->dims, 3);
	f->o.rank = 2;
	f->dims[0] = 2;
	f->dims[1] = 5;
	f->decl = (gc_custom_out_decl){.library = "libp.so",
				       .function = "p_infer",
				       .op_name = "Op",
				       .index = 1,
				       .name = "y",
				       .max_dims = 3};
}

static int inferred_check(inferred_fixture *f)
{
	f->msg[0] = 0;
	return gc_custom_inferred(&f->o, f->dims, &f->decl, &f->t, f->msg, sizeof f->msg);
}

static void test_inferred(void)
{
	inferred_fixture f;
	inferred_init(&f);
	CHECK_INT(f.o.rank, 2);
	CHECK(f.o.dims == f.dims);
	CHECK_INT(f.dims[3], GC_CUSTOM_CANARY); /* guarded past maxDims */
	CHECK_INT(f.dims[GC_CUSTOM_DIMS_SLOTS - 1], GC_CUSTOM_CANARY);
	CHECK_INT(inferred_check(&f), 0);
	CHECK_INT(f.t.dtype, GC_DTYPE_FLOAT);
	CHECK_INT(f.t.rank, 2);
	CHECK_INT(f.t.dims[1], 5);
	/* rank above maxDims, and negative */
	f.o.rank = 4;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_STR(f.msg, "shape inference libp.so:p_infer set output 1 ('y') to rank 4, above its "
			 "maxDims 3");
	f.o.rank = -1;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_CONTAINS(f.msg, "to rank -1");
	/* a write past maxDims, at the first guarded slot and at the last */
	inferred_init(&f);
	f.dims[3] = 7;
	CHECK_INT(inferred_check(&f), GC_ECRASH);
	CHECK_STR(f.msg, "shape inference libp.so:p_infer wrote past the 3 dims of output 1 ('y')");
	inferred_init(&f);
	f.dims[GC_CUSTOM_DIMS_SLOTS - 1] = 0;
	CHECK_INT(inferred_check(&f), GC_ECRASH);
	/* the dims pointer replaced (even with the same values) */
	inferred_init(&f);
	int64_t other[GC_CUSTOM_DIMS_SLOTS];
	memcpy(other, f.dims, sizeof other);
	f.o.dims = other;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_STR(f.msg, "shape inference libp.so:p_infer replaced the dims pointer of output 1 "
			 "('y'); it must fill the buffer it is given");
	/* types: none, string, out of the enum, one not declared */
	inferred_init(&f);
	f.o.dtype = DTString;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	char want[200];
	snprintf(want, sizeof want,
		 "shape inference libp.so:p_infer gave output 1 ('y') an invalid type %d",
		 (int)DTString);
	CHECK_STR(f.msg, want);
	f.o.dtype = (CustomOpDataType)99;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_CONTAINS(f.msg, "an invalid type 99");
	inferred_init(&f);
	f.o.dtype = DTIInt64;
	f.decl.dtypes = 1u << GC_DTYPE_FLOAT | 1u << GC_DTYPE_DOUBLE;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_STR(f.msg, "shape inference libp.so:p_infer made output 1 ('y') int64, but operation "
			 "'Op' declares it [float32, float64]");
	f.decl.dtypes_file = "op.yaml";
	f.decl.dtypes_line = 12;
	f.decl.name = NULL; /* a binding made at run time knows no names */
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_STR(f.msg, "shape inference libp.so:p_infer made output 1 int64, but operation 'Op' "
			 "declares it [float32, float64] (dtypes at op.yaml:12)");
	f.o.dtype = DTFloat64;
	CHECK_INT(inferred_check(&f), 0);
	CHECK_INT(f.t.dtype, GC_DTYPE_DOUBLE);
	/* quantized: only as bound, and only when bound */
	inferred_init(&f);
	f.o.dtype = DTQInt8;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_CONTAINS(f.msg,
		       "made output 1 ('y') DTQInt8, but that output is not bound quantized");
	gc_custom_quant q = {.dtype = DTQUInt8, .scale = 0.5f, .offset = 3};
	f.decl.quant = &q;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_CONTAINS(f.msg, "made output 1 ('y') DTQInt8, but it is bound quint8");
	CHECK_CONTAINS(f.msg, "it arrives as DTQUInt8 and must keep that dtype");
	f.o.dtype = DTQUInt8;
	f.decl.dtypes = 1u << GC_DTYPE_FLOAT; /* the bound type stands for the declared one */
	CHECK_INT(inferred_check(&f), 0);
	CHECK_INT(f.t.dtype, GC_DTYPE_UINT8);
	/* a negative dimension; one past the rank is not read */
	inferred_init(&f);
	f.dims[1] = -4;
	CHECK_INT(inferred_check(&f), GC_EINVAL);
	CHECK_STR(f.msg,
		  "shape inference libp.so:p_infer gave output 1 ('y') a negative dimension -4");
	f.dims[1] = 5;
	f.dims[2] = -4;
	CHECK_INT(inferred_check(&f), 0);
	/* sizes: past int64, and past a limit */
	inferred_init(&f);
	f.o.rank = 3;
	f.dims[0] = f.dims[1] = f.dims[2] = INT64_C(1) << 30;
	CHECK_INT(inferred_check(&f), GC_ELIMIT);
	CHECK_STR(f.msg, "output 1 ('y') is too large");
	inferred_init(&f);
	f.decl.limit_bytes = 39; /* 2x5 float32: 40 bytes */
	CHECK_INT(inferred_check(&f), GC_ELIMIT);
	f.decl.limit_bytes = 40;
	CHECK_INT(inferred_check(&f), 0);
}

TEST_MAIN(TEST(test_view), TEST(test_seed_interface), TEST(test_graphcc_interface),
	  TEST(test_inferred))
