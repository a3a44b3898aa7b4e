/*
 * Unit tests for the elementwise kernels, second half: unary math, Clip,
 * Cast (see test-elementwise.c for the sources of the expected values and
 * the tolerances).
 */
#include "test-elementwise-impl.h"

/* ---- unary ----------------------------------------------------------------- */

typedef struct {
	const char *op, *attrs;
	float x[10], y[10];
} unary_case;

/* clang-format off */
/* numpy, float32, following the ONNX reference formulas */
static const unary_case unary_cases[] = {
	{ "Sqrt", "", { 0, 0.00999999978, 0.25, 0.5, 1, 2, 3, 10, 100, 0.00100000005 }, { 0, 0.100000001, 0.5, 0.707106769, 1, 1.41421354, 1.73205078, 3.1622777, 10, 0.0316227786 } },
	{ "Exp", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.0820850059, 0.367879421, 0.606530666, 1, 1.34985876, 1.64872122, 2.71828198, 4.48168898, 12.1824932, 54.5981483 } },
	{ "Log", "", { 0.00999999978, 0.25, 0.5, 1, 2, 3, 10, 100, 0.00100000005, 7 }, { -4.60517025, -1.38629436, -0.693147182, 0, 0.693147182, 1.09861231, 2.30258512, 4.60517025, -6.90775537, 1.94591022 } },
	{ "Tanh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.986614287, -0.761594176, -0.462117195, 0, 0.291312635, 0.462117195, 0.761594176, 0.905148208, 0.986614287, 0.999329329 } },
	{ "Sigmoid", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.0758581832, 0.268941402, 0.377540678, 0.5, 0.574442506, 0.622459352, 0.731058598, 0.817574501, 0.924141824, 0.982013762 } },
	{ "Erf", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.999593019, -0.842700779, -0.520499885, 0, 0.328626782, 0.520499885, 0.842700779, 0.966105163, 0.999593019, 1 } },
	{ "Floor", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -3, -1, -1, 0, 0, 0, 1, 1, 2, 4 } },
	{ "Ceil", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -2, -1, -0, 0, 1, 1, 1, 2, 3, 4 } },
	{ "Round", "", { -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49000001, 0.50999999, -0.50999999, 3.70000005 }, { -2, -2, -0, 0, 2, 2, 0, 1, -1, 4 } },
	{ "Sign", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1, -1, -1, 0, 1, 1, 1, 1, 1, 1 } },
	{ "Abs", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 2.5, 1, 0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Neg", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 2.5, 1, 0.5, -0, -0.300000012, -0.5, -1, -1.5, -2.5, -4 } },
	{ "Reciprocal", "", { 1, 1.00999999, 1.5, 2, 3, 5, 10, 20, 100, 1.25 }, { 1, 0.990099013, 0.666666687, 0.5, 0.333333343, 0.200000003, 0.100000001, 0.0500000007, 0.00999999978, 0.800000012 } },
	{ "Sin", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.598472178, -0.841471016, -0.47942555, 0, 0.295520216, 0.47942555, 0.841471016, 0.997494996, 0.598472178, -0.756802499 } },
	{ "Cos", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.801143587, 0.540302277, 0.87758255, 1, 0.955336511, 0.87758255, 0.540302277, 0.070737198, -0.801143587, -0.653643608 } },
	{ "Tan", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.747022271, -1.55740774, -0.546302497, 0, 0.309336275, 0.546302497, 1.55740774, 14.1014204, -0.747022271, 1.15782118 } },
	{ "Asin", "", { -0.99000001, -0.75, -0.5, -0.100000001, 0, 0.100000001, 0.300000012, 0.5, 0.75, 0.99000001 }, { -1.42925692, -0.848062158, -0.52359879, -0.100167423, 0, 0.100167423, 0.304692656, 0.52359879, 0.848062158, 1.42925692 } },
	{ "Acos", "", { -0.99000001, -0.75, -0.5, -0.100000001, 0, 0.100000001, 0.300000012, 0.5, 0.75, 0.99000001 }, { 3.00005341, 2.41885853, 2.09439516, 1.67096376, 1.57079637, 1.47062898, 1.26610374, 1.04719758, 0.722734213, 0.14153941 } },
	{ "Atan", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.19028997, -0.785398185, -0.463647604, 0, 0.291456819, 0.463647604, 0.785398185, 0.982793748, 1.19028997, 1.3258177 } },
	{ "Sinh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -6.05020428, -1.17520118, -0.521095276, 0, 0.304520309, 0.521095276, 1.17520118, 2.12927938, 6.05020428, 27.289917 } },
	{ "Cosh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 6.13228989, 1.54308069, 1.12762606, 1, 1.04533839, 1.12762606, 1.54308069, 2.3524096, 6.13228989, 27.3082352 } },
	{ "Asinh", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.6472311, -0.881373584, -0.481211811, 0, 0.295673072, 0.481211811, 0.881373584, 1.19476318, 1.6472311, 2.0947125 } },
	{ "Acosh", "", { 1, 1.00999999, 1.5, 2, 3, 5, 10, 20, 100, 1.25 }, { 0, 0.141303703, 0.962423623, 1.31695795, 1.76274717, 2.29243159, 2.99322295, 3.68825388, 5.29829216, 0.693147182 } },
	{ "Atanh", "", { -0.99000001, -0.75, -0.5, -0.100000001, 0, 0.100000001, 0.300000012, 0.5, 0.75, 0.99000001 }, { -2.64665294, -0.972955048, -0.549306154, -0.100335352, 0, 0.100335352, 0.309519619, 0.549306154, 0.972955048, 2.64665294 } },
	{ "Relu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0, 0, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "LeakyRelu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.0249999985, -0.00999999978, -0.00499999989, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "LeakyRelu", "alpha=0.2", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.5, -0.200000003, -0.100000001, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "HardSigmoid", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0.300000012, 0.400000006, 0.5, 0.560000002, 0.600000024, 0.699999988, 0.800000012, 1, 1 } },
	{ "HardSigmoid", "alpha=0.5 beta=0.6", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0.100000024, 0.350000024, 0.600000024, 0.75, 0.850000024, 1, 1, 1, 1 } },
	{ "HardSwish", "", { -4, -3, -2.5, -1, 0, 0.300000012, 1, 2.9000001, 3, 4 }, { -0, -0, -0.208333284, -0.333333313, 0, 0.165000007, 0.666666687, 2.85166669, 3, 4 } },
	{ "Elu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.917914987, -0.632120609, -0.393469334, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Elu", "alpha=2", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.83582997, -1.26424122, -0.786938667, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Selu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.61378574, -1.11133075, -0.691758215, 0, 0.315210313, 0.525350511, 1.05070102, 1.57605147, 2.62675261, 4.20280409 } },
	{ "Selu", "alpha=2 gamma=3", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -5.50749016, -3.79272366, -2.360816, 0, 0.900000036, 1.5, 3, 4.5, 7.5, 12 } },
	{ "Celu", "alpha=2", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -1.42699051, -0.786938667, -0.442398548, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Softplus", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0.0788897499, 0.313261658, 0.474076986, 0.693147182, 0.854355216, 0.974076986, 1.31326175, 1.70141327, 2.57888961, 4.01814985 } },
	{ "Softsign", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.714285731, -0.5, -0.333333343, 0, 0.230769247, 0.333333343, 0.5, 0.600000024, 0.714285731, 0.800000012 } },
	{ "ThresholdedRelu", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0, 0, 0, 0, 0, 0, 1.5, 2.5, 4 } },
	{ "ThresholdedRelu", "alpha=0.4", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { 0, 0, 0, 0, 0, 0.5, 1, 1.5, 2.5, 4 } },
	{ "Shrink", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -2.5, -1, 0, 0, 0, 0, 1, 1.5, 2.5, 4 } },
	{ "Shrink", "lambd=1.5 bias=0.5", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -2, 0, 0, 0, 0, 0, 0, 0, 2, 3.5 } },
	{ "Mish", "", { -2.5, -1, -0.5, 0, 0.300000012, 0.5, 1, 1.5, 2.5, 4 }, { -0.196816206, -0.30340147, -0.220743775, 0, 0.208001375, 0.375245214, 0.865098417, 1.40337825, 2.47139239, 3.99741292 } },
};
/* clang-format on */

/* attrs: "name=value ..." (floats) */
static int parse_attrs(const char *s, gc_attr *attrs, char names[][16])
{
	int n = 0;
	while (*s) {
		float v;
		int used = 0;
		if (sscanf(s, " %15[a-z]=%f%n", names[n], &v, &used) != 2)
			break;
		attrs[n] = attr_f(names[n], v);
		n++;
		s += used;
	}
	return n;
}

/* Which unary ops ONNX restricts: no bfloat16 / only float32. */
static int takes_bf16(const char *op)
{
	static const char *const ops[] = {"Sqrt", "Exp",	"Log",	"Tanh",	     "Sigmoid",
					  "Erf",  "Floor",	"Ceil", "Sign",	     "Abs",
					  "Neg",  "Reciprocal", "Relu", "LeakyRelu", "Mish"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

/* float32 Sqrt (vectorised): correctly rounded, as sqrt in double then
 * rounded is, over 2^20 inputs spread across every binade, with -0, +inf,
 * NaN and negatives (NaN). */
static void test_sqrt_sweep(void)
{
	enum { N = 1 << 20 };
	float *x = malloc(N * sizeof *x);
	CHECK(x != NULL);
	for (int i = 0; i < N; i++) {
		uint32_t bits = (uint32_t)i * 4093u + 7u; /* every exponent, both signs */
		memcpy(&x[i], &bits, 4);
	}
	x[0] = -0.0f;
	x[1] = INFINITY;
	x[2] = NAN;
	x[3] = -1.0f;
	harness_run h;
	gc_tensor tx = vec(GC_DTYPE_FLOAT, N, x);
	gc_tensor *in[1] = {&tx};
	CHECK_INT(run(&h, gc_prepare_Sqrt, "Sqrt", 13, 1, in, 0, NULL), 0);
	const float *y = h.out[0].data;
	int64_t bad = 0;
	for (int i = 0; i < N; i++) {
		float want = (float)sqrt((double)x[i]);
		if (isnan(want) ? !isnan(y[i]) : memcmp(&want, &y[i], 4))
			bad++;
	}
	CHECK_INT(bad, 0);
	harness_free(&h);
	free(x);
}

/* The float ops that opset 22 gave bfloat16. */
static int bf16_from_22(const char *op)
{
	static const char *const ops[] = {"Round",    "Sin",	   "Cos",	  "Tan",   "Asin",
					  "Acos",     "Atan",	   "Sinh",	  "Cosh",  "Asinh",
					  "Acosh",    "Atanh",	   "HardSwish",	  "Softplus",
					  "Softsign", "HardSigmoid", "Elu",	  "Selu",
					  "ThresholdedRelu"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (!strcmp(op, ops[i]))
			return 1;
	return 0;
}

static void test_unary_table(void)
{
	static const gc_dtype types[4] = {GC_DTYPE_FLOAT, GC_DTYPE_DOUBLE, GC_DTYPE_FLOAT16,
					  GC_DTYPE_BFLOAT16};
	/* bfloat16 keeps 8 significant bits: rounding the input alone moves
	 * atanh(-0.99) by 3% */
	static const double tol[4] = {1e-5, 1e-6, 1e-2, 4e-2};
	for (int opset = 17; opset <= 22; opset += 5)
	for (size_t c = 0; c < sizeof unary_cases / sizeof unary_cases[0]; c++) {
		const unary_case *uc = &unary_cases[c];
		gc_prepare_fn fn = prep(uc->op);
		CHECK(fn != NULL);
		gc_attr attrs[4];
		char names[4][16];
		int na = parse_attrs(uc->attrs, attrs, names);
		for (int t = 0; t < 4; t++) {
			gc_dtype dt = types[t];
			union {
				float f[10];
				double d[10];
				uint16_t h[10];
			} x;
			for (int i = 0; i < 10; i++) {
				if (dt == GC_DTYPE_FLOAT)
					x.f[i] = uc->x[i];
				else if (dt == GC_DTYPE_DOUBLE)
					x.d[i] = uc->x[i];
				else if (dt == GC_DTYPE_FLOAT16)
					x.h[i] = gc_f32_to_f16(uc->x[i]);
				else
					x.h[i] = gc_f32_to_bf16(uc->x[i]);
			}
			gc_tensor tx = tensor(dt, 2, DIMS(2, 5), &x);
			gc_tensor *in[1] = {&tx};
			harness_run h;
			int rc = run(&h, fn, uc->op, opset, 1, in, na, attrs);
			int allowed = !strcmp(uc->op, "Celu") ? dt == GC_DTYPE_FLOAT
				      : dt == GC_DTYPE_BFLOAT16
					      ? takes_bf16(uc->op) ||
							(opset >= 22 && bf16_from_22(uc->op))
					      : 1;
			if (!allowed) {
				if (rc != GC_EINVAL)
					fprintf(stderr, "  %s on %s: rc %d\n", uc->op,
						gc_dtype_name(dt), rc);
				CHECK_INT(rc, GC_EINVAL);
				CHECK_CONTAINS(h.err.msg, gc_dtype_name(dt));
				harness_free(&h);
				continue;
			}
			if (rc)
				fprintf(stderr, "  %s on %s: %s\n", uc->op, gc_dtype_name(dt),
					h.err.msg);
			CHECK_INT(rc, 0);
			CHECK_SHAPE(&h.out[0], dt, 2, 2, 5);
			double want[10];
			for (int i = 0; i < 10; i++)
				want[i] = uc->y[i];
			int ok = near(&h.out[0], want, 10, t < 2 ? 1e-6 : tol[t], tol[t]);
			if (!ok)
				fprintf(stderr, "  %s %s on %s\n", uc->op, uc->attrs,
					gc_dtype_name(dt));
			harness_free(&h);
			CHECK(ok);
		}
	}
}

static void test_unary_int(void)
{
	harness_run h;
	int64_t a[4] = {INT64_MIN + 1, -5, 0, 7};
	gc_tensor ta = vec(GC_DTYPE_INT64, 4, a);
	gc_tensor *in[1] = {&ta};
	CHECK_INT(run(&h, gc_prepare_Abs, "Abs", 13, 1, in, 0, NULL), 0);
	CHECK(((int64_t *)h.out[0].data)[0] == INT64_MAX);
	CHECK_INT(((int64_t *)h.out[0].data)[1], 5);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Sign, "Sign", 13, 1, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, -1, 0, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Neg, "Neg", 13, 1, in, 0, NULL), 0);
	CHECK(((int64_t *)h.out[0].data)[0] == INT64_MAX);
	CHECK_INT(((int64_t *)h.out[0].data)[3], -7);
	harness_free(&h);
	int8_t r[4] = {-128, -1, 0, 100};
	gc_tensor tr = vec(GC_DTYPE_INT8, 4, r);
	gc_tensor *inr[1] = {&tr};
	CHECK_INT(run(&h, gc_prepare_Relu, "Relu", 14, 1, inr, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 100);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Neg, "Neg", 13, 1, inr, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -128, 1, 0, -100);
	harness_free(&h);
	uint8_t u[3] = {0, 3, 255};
	gc_tensor tu = vec(GC_DTYPE_UINT8, 3, u);
	gc_tensor *inu[1] = {&tu};
	CHECK_INT(run(&h, gc_prepare_Sign, "Sign", 13, 1, inu, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Abs, "Abs", 13, 1, inu, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 3, 255);
	harness_free(&h);
	/* Neg and Relu take no unsigned types */
	CHECK_INT(run(&h, gc_prepare_Neg, "Neg", 13, 1, inu, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "uint8");
	harness_free(&h);
	/* integer Shrink computes in floating point, then truncates */
	int32_t s[5] = {-3, -1, 0, 1, 3};
	gc_tensor ts = vec(GC_DTYPE_INT32, 5, s);
	gc_tensor *ins[1] = {&ts};
	gc_attr sa[2] = {attr_f("lambd", 1.5f), attr_f("bias", 1)};
	CHECK_INT(run(&h, gc_prepare_Shrink, "Shrink", 9, 1, ins, 2, sa), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 0, 0, 2);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Erf, "Erf", 13, 1, ins, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 0, 0);
	harness_free(&h);
}

static void test_isnan_isinf(void)
{
	harness_run h;
	/* ONNX isinf example: [-1.2, nan, inf, 2.8, -inf, inf] */
	float x[6] = {-1.2f, NAN, INFINITY, 2.8f, -INFINITY, INFINITY};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 6, x);
	gc_tensor *in[1] = {&tx};
	CHECK_INT(run(&h, gc_prepare_IsNaN, "IsNaN", 13, 1, in, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 6);
	CHECK_EXACT(&h.out[0], 0, 1, 0, 0, 0, 0);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_IsInf, "IsInf", 10, 1, in, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 1, 0, 1, 1);
	harness_free(&h);
	gc_attr neg = attr_i("detect_positive", 0);
	CHECK_INT(run(&h, gc_prepare_IsInf, "IsInf", 10, 1, in, 1, &neg), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 0, 0, 1, 0);
	harness_free(&h);
	gc_attr pos = attr_i("detect_negative", 0);
	CHECK_INT(run(&h, gc_prepare_IsInf, "IsInf", 10, 1, in, 1, &pos), 0);
	CHECK_EXACT(&h.out[0], 0, 0, 1, 0, 0, 1);
	harness_free(&h);
	/* float16 IsNaN through the adapter: bool output */
	uint16_t hx[3] = {0x7e00, 0x7c00, 0x3c00};
	gc_tensor thx = vec(GC_DTYPE_FLOAT16, 3, hx);
	gc_tensor *inh[1] = {&thx};
	CHECK_INT(run(&h, gc_prepare_IsNaN, "IsNaN", 13, 1, inh, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 3);
	CHECK_EXACT(&h.out[0], 1, 0, 0);
	harness_free(&h);
}

static void test_attr_errors(void)
{
	harness_run h;
	float x[2] = {1, 2};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 2, x);
	gc_tensor *in[1] = {&tx};
	gc_attr bad = attr_i("alpha", 2);
	CHECK_INT(run(&h, gc_prepare_LeakyRelu, "LeakyRelu", 16, 1, in, 1, &bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'alpha'");
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Elu, "Elu", 6, 1, in, 1, &bad), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'alpha'");
	harness_free(&h);
	/* string input is unsupported rather than invalid */
	const char *strs[2] = {"a", "b"};
	gc_tensor ts = vec(GC_DTYPE_STRING, 2, strs);
	gc_tensor *ins[1] = {&ts};
	CHECK_INT(run(&h, gc_prepare_Exp, "Exp", 13, 1, ins, 0, NULL), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "string");
	harness_free(&h);
}

/*
 * The float32 kernels of Exp, Sigmoid, Tanh and Erf use their own
 * vectorisable approximations: sweep them against double-precision libm
 * (the reference here), special values included. Bounds: exp and sigmoid
 * 2.5e-7 relative (2 ulp), tanh 2.5e-7 relative, erf 5e-7 absolute;
 * results below the normal float range may flush to 0 (as float32 sigmoid
 * does in NumPy, where exp(-x) overflows first).
 */
static void test_transcendental_sweep(void)
{
	enum { N = 4000 };
	static float x[N + 8];
	for (int i = 0; i < N; i++)
		x[i] = -110.0f + 220.0f * (float)i / N + (float)(i % 7) * 1e-3f;
	const float special[8] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, -88.5f, 88.7f};
	memcpy(x + N, special, sizeof special);
	gc_tensor tx = tensor(GC_DTYPE_FLOAT, 1, DIMS(N + 8), x);
	gc_tensor *in[1] = {&tx};
	static const char *const ops[4] = {"Exp", "Sigmoid", "Tanh", "Erf"};
	for (int o = 0; o < 4; o++) {
		harness_run h;
		CHECK_INT(run(&h, prep(ops[o]), ops[o], 13, 1, in, 0, NULL), 0);
		const float *y = h.out[0].data;
		for (int i = 0; i < N + 8; i++) {
			double v = x[i], want;
			switch (o) {
			case 0:
				want = exp(v);
				break;
			case 1:
				want = 1 / (1 + exp(-v));
				break;
			case 2:
				want = tanh(v);
				break;
			default:
				want = erf(v);
				break;
			}
			double err = fabs(y[i] - want);
			double bound = o == 3 ? 5e-7 : 2.5e-7 * fabs(want) + 1e-45;
			int ok = isnan(want) ? isnan(y[i])
				 : isinf((float)want)
				     ? y[i] == (float)want
				     : err <= bound || (fabs(want) < 1.2e-38 && err < 1.2e-38);
			if (!ok)
				fprintf(stderr, "  %s(%.9g) = %.9g, want %.9g\n", ops[o], v, y[i],
					want);
			CHECK(ok);
		}
		harness_free(&h);
	}
}

/* Long float16/bfloat16 runs cross the adapter's 256-element chunks. */
static void test_half_long(void)
{
	enum { N = 1000 };
	static uint16_t a[N], b16[N];
	for (int i = 0; i < N; i++) {
		a[i] = gc_f32_to_f16((float)(i % 97) * 0.25f - 12);
		b16[i] = gc_f32_to_bf16((float)(i % 89) * 0.5f - 20);
	}
	gc_tensor ta = tensor(GC_DTYPE_FLOAT16, 2, DIMS(2, N / 2), a);
	gc_tensor *in[1] = {&ta};
	harness_run h;
	CHECK_INT(run(&h, gc_prepare_Relu, "Relu", 14, 1, in, 0, NULL), 0);
	for (int i = 0; i < N; i++) {
		float v = gc_f16_to_f32(a[i]);
		CHECK_INT(((uint16_t *)h.out[0].data)[i], gc_f32_to_f16(v < 0 ? 0 : v));
	}
	harness_free(&h);
	uint16_t three = gc_f32_to_bf16(3);
	gc_tensor tb = vec(GC_DTYPE_BFLOAT16, N, b16), t3 = scalar(GC_DTYPE_BFLOAT16, &three);
	gc_tensor *in2[2] = {&t3, &tb};
	CHECK_INT(run(&h, gc_prepare_Mul, "Mul", 14, 2, in2, 0, NULL), 0);
	for (int i = 0; i < N; i++)
		CHECK_INT(((uint16_t *)h.out[0].data)[i],
			  gc_f32_to_bf16(3 * gc_bf16_to_f32(b16[i])));
	harness_free(&h);
}

/* ---- Clip ----------------------------------------------------------------- */

static void test_clip(void)
{
	harness_run h;
	float x[4] = {-2, 0, 2, 5};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 4, x);
	gc_tensor *in1[1] = {&tx};
	/* opset 6: attributes */
	gc_attr mm[2] = {attr_f("min", -1), attr_f("max", 1)};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 1, in1, 2, mm), 0);
	CHECK_EXACT(&h.out[0], -1, 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 1, in1, 1, &mm[1]), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 1, 1);
	harness_free(&h);
	/* opset 6 with a min input is refused */
	float lo = -1, hi = 1;
	gc_tensor tlo = scalar(GC_DTYPE_FLOAT, &lo), thi = scalar(GC_DTYPE_FLOAT, &hi);
	gc_tensor *in3[3] = {&tx, &tlo, &thi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 3, in3, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "opset 11");
	harness_free(&h);
	/* opset 13: inputs; the attributes are ignored */
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, in3, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, 0, 1, 1);
	harness_free(&h);
	gc_tensor *in_min[2] = {&tx, &tlo};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, in_min, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, 0, 2, 5);
	harness_free(&h);
	gc_tensor *in_max[3] = {&tx, NULL, &thi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, in_max, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 1, in1, 2, mm), 0);
	CHECK_EXACT(&h.out[0], -2, 0, 2, 5);
	harness_free(&h);
	/* min > max: everything becomes max */
	gc_tensor *swapped[3] = {&tx, &thi, &tlo};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, swapped, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -1, -1, -1, -1);
	harness_free(&h);
	/* the bounds are read when the node runs, not when it is prepared */
	float lo2 = 1;
	tlo.data = &lo2;
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, in_min, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 1, 1, 2, 5);
	harness_free(&h);
	/* integer Clip (int64, int8 with one bound) */
	int64_t xi[4] = {-200, 0, 50, INT64_MAX}, li = -100, hi64 = 100;
	gc_tensor txi = vec(GC_DTYPE_INT64, 4, xi), tli = scalar(GC_DTYPE_INT64, &li),
		  thi64 = scalar(GC_DTYPE_INT64, &hi64);
	gc_tensor *ini[3] = {&txi, &tli, &thi64};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, ini, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], -100, 0, 50, 100);
	harness_free(&h);
	int8_t x8[3] = {-128, 5, 127}, zero8 = 0;
	gc_tensor tx8 = vec(GC_DTYPE_INT8, 3, x8), tz8 = scalar(GC_DTYPE_INT8, &zero8);
	gc_tensor *in8[2] = {&tx8, &tz8};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, in8, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 5, 127);
	harness_free(&h);
	/* float16 */
	uint16_t hx[3] = {0xc000, 0x3800, 0x4400}, hlo = 0x0000, hhi = 0x3c00; /* -2 0.5 4; 0 1 */
	gc_tensor thx = vec(GC_DTYPE_FLOAT16, 3, hx), thlo = scalar(GC_DTYPE_FLOAT16, &hlo),
		  thhi = scalar(GC_DTYPE_FLOAT16, &hhi);
	gc_tensor *inh[3] = {&thx, &thlo, &thhi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 3, inh, 0, NULL), 0);
	CHECK_EXACT(&h.out[0], 0, 0.5, 1);
	harness_free(&h);
	/* errors: bound of another type, bound not a scalar */
	gc_tensor *mixed[2] = {&tx, &tli};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, mixed, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "min");
	harness_free(&h);
	gc_tensor t2 = vec(GC_DTYPE_FLOAT, 2, x);
	gc_tensor *vec[2] = {&tx, &t2};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 13, 2, vec, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "scalar");
	harness_free(&h);
	/* integer Clip did not exist before opset 12's types: opset 6 refuses it */
	gc_tensor *in6[1] = {&txi};
	CHECK_INT(run(&h, gc_prepare_Clip, "Clip", 6, 1, in6, 0, NULL), GC_EINVAL);
	harness_free(&h);
}

/* ---- Cast ----------------------------------------------------------------- */

static void test_cast(void)
{
	harness_run h;
	/* float -> int64 truncates toward zero; out of range saturates, NaN -> 0 */
	float x[7] = {1.9f, -1.9f, 0.5f, -0.5f, 1e10f, 1e20f, NAN};
	gc_tensor tx = vec(GC_DTYPE_FLOAT, 7, x);
	gc_tensor *in[1] = {&tx};
	gc_attr to64 = attr_i("to", GC_DTYPE_INT64);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &to64), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_INT64, 1, 7);
	const int64_t *o = h.out[0].data;
	CHECK_INT(o[0], 1);
	CHECK_INT(o[1], -1);
	CHECK_INT(o[2], 0);
	CHECK_INT(o[3], 0);
	CHECK_INT(o[4], 10000000000LL);
	CHECK(o[5] == INT64_MAX);
	CHECK_INT(o[6], 0);
	harness_free(&h);
	/* float -> float16 -> float (numpy bit patterns and values) */
	float f[8] = {0.1f, 1.0f / 3, 65504, 70000, 1e-8f, 6e-8f, -2.5f, 0.000123f};
	gc_tensor tf = vec(GC_DTYPE_FLOAT, 8, f);
	gc_tensor *inf[1] = {&tf};
	gc_attr to16 = attr_i("to", GC_DTYPE_FLOAT16);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inf, 1, &to16), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_FLOAT16);
	static const uint16_t want16[8] = {0x2e66, 0x3555, 0x7bff, 0x7c00,
					   0x0000, 0x0001, 0xc100, 0x0808};
	for (int i = 0; i < 8; i++)
		CHECK_INT(((uint16_t *)h.out[0].data)[i], want16[i]);
	gc_tensor half = h.out[0];
	gc_tensor *inh[1] = {&half};
	gc_attr tof = attr_i("to", GC_DTYPE_FLOAT);
	harness_run h2;
	CHECK_INT(run(&h2, gc_prepare_Cast, "Cast", 13, 1, inh, 1, &tof), 0);
	CHECK_EXACT(&h2.out[0], 0.0999755859375, 0.333251953125, 65504.0, INFINITY, 0.0,
		    5.960464477539063e-08, -2.5, 0.00012302398681640625);
	harness_free(&h2);
	harness_free(&h);
	/* float -> bfloat16 truncates (ONNX 1.12 test_cast_FLOAT_to_BFLOAT16) */
	float bf[4] = {0.47892547f, 0.48033667f, NAN, -INFINITY};
	gc_tensor tbf = vec(GC_DTYPE_FLOAT, 4, bf);
	gc_tensor *inbf[1] = {&tbf};
	gc_attr tob = attr_i("to", GC_DTYPE_BFLOAT16);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inbf, 1, &tob), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[0], 16117);
	CHECK_INT(((uint16_t *)h.out[0].data)[1], 16117);
	CHECK(isnan(gc_bf16_to_f32(((uint16_t *)h.out[0].data)[2])));
	CHECK_INT(((uint16_t *)h.out[0].data)[3], 0xff80);
	harness_free(&h);
	/* to and from bool */
	float fb[4] = {0, -0.0f, 2, NAN};
	gc_tensor tfb = vec(GC_DTYPE_FLOAT, 4, fb);
	gc_tensor *infb[1] = {&tfb};
	gc_attr tobool = attr_i("to", GC_DTYPE_BOOL);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, infb, 1, &tobool), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_BOOL, 1, 4);
	CHECK_EXACT(&h.out[0], 0, 0, 1, 1);
	harness_free(&h);
	uint8_t bools[3] = {0, 1, 7};
	gc_tensor tbools = vec(GC_DTYPE_BOOL, 3, bools);
	gc_tensor *inb[1] = {&tbools};
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inb, 1, &tof), 0);
	CHECK_EXACT(&h.out[0], 0, 1, 1);
	harness_free(&h);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inb, 1, &to16), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[2], 0x3c00);
	harness_free(&h);
	/* integer narrowing wraps like numpy astype; float -> uint8 via int64 */
	int64_t wide[4] = {300, -129, 127, -128};
	gc_tensor twide = vec(GC_DTYPE_INT64, 4, wide);
	gc_tensor *inw[1] = {&twide};
	gc_attr to8 = attr_i("to", GC_DTYPE_INT8);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inw, 1, &to8), 0);
	CHECK_EXACT(&h.out[0], 44, 127, 127, -128);
	harness_free(&h);
	float fu[4] = {-1, 255.9f, 256, 3.7f};
	gc_tensor tfu = vec(GC_DTYPE_FLOAT, 4, fu);
	gc_tensor *infu[1] = {&tfu};
	gc_attr tou8 = attr_i("to", GC_DTYPE_UINT8);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, infu, 1, &tou8), 0);
	CHECK_EXACT(&h.out[0], 255, 255, 0, 3);
	harness_free(&h);
	/* uint8 -> float16, double -> float */
	uint8_t u8[3] = {0, 255, 3};
	gc_tensor tu8 = vec(GC_DTYPE_UINT8, 3, u8);
	gc_tensor *inu8[1] = {&tu8};
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, inu8, 1, &to16), 0);
	CHECK_INT(((uint16_t *)h.out[0].data)[1], 0x5bf8);
	CHECK_INT(((uint16_t *)h.out[0].data)[2], 0x4200);
	harness_free(&h);
	double d[3] = {0.1, 1e40, 1.0 / 3};
	gc_tensor td = vec(GC_DTYPE_DOUBLE, 3, d);
	gc_tensor *ind[1] = {&td};
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, ind, 1, &tof), 0);
	CHECK(((float *)h.out[0].data)[0] == 0.1f);
	CHECK(isinf(((float *)h.out[0].data)[1]));
	CHECK(((float *)h.out[0].data)[2] == 1.0f / 3);
	harness_free(&h);
	/* same type: a copy */
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, ind, 1,
		      &(gc_attr){.name = "to", .type = GC_ATTR_INT, .v.i = GC_DTYPE_DOUBLE}),
		  0);
	CHECK(((double *)h.out[0].data)[0] == 0.1);
	harness_free(&h);
	/* opset 1 names the type */
	gc_attr tos = attr_s("to", "INT32");
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 1, 1, in, 1, &tos), 0);
	CHECK_INT(h.out[0].dtype, GC_DTYPE_INT32);
	CHECK_INT(((int32_t *)h.out[0].data)[1], -1);
	harness_free(&h);
	/* CastLike takes the type of its second input */
	gc_tensor *like[2] = {&tf, &tu8};
	CHECK_INT(run(&h, gc_prepare_CastLike, "CastLike", 15, 2, like, 0, NULL), 0);
	CHECK_SHAPE(&h.out[0], GC_DTYPE_UINT8, 1, 8);
	CHECK_INT(((uint8_t *)h.out[0].data)[2], 224); /* 65504 mod 256 */
	harness_free(&h);
	/* errors */
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 0, NULL), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "'to'");
	harness_free(&h);
	/* strings convert to numbers (test-strings.c), not to complex ones */
	const char *strs[1] = {"1"};
	gc_tensor tstr = vec(GC_DTYPE_STRING, 1, strs);
	gc_tensor *ins[1] = {&tstr};
	gc_attr toc = attr_i("to", GC_DTYPE_COMPLEX64);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, ins, 1, &toc), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "string");
	harness_free(&h);
	gc_attr tobad = attr_i("to", 99);
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &tobad), GC_EUNSUPPORTED);
	CHECK_CONTAINS(h.err.msg, "99");
	harness_free(&h);
	gc_attr tobadname = attr_s("to", "FLOAT7");
	CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 1, 1, in, 1, &tobadname), GC_EINVAL);
	CHECK_CONTAINS(h.err.msg, "FLOAT7");
	harness_free(&h);
}

/* Every cast pair against a double round trip, on values every type holds. */
static void test_cast_matrix(void)
{
	static const gc_dtype types[] = {
	    GC_DTYPE_BOOL,   GC_DTYPE_INT8,    GC_DTYPE_INT16,	  GC_DTYPE_INT32,  GC_DTYPE_INT64,
	    GC_DTYPE_UINT8,  GC_DTYPE_UINT16,  GC_DTYPE_UINT32,	  GC_DTYPE_UINT64, GC_DTYPE_FLOAT,
	    GC_DTYPE_DOUBLE, GC_DTYPE_FLOAT16, GC_DTYPE_BFLOAT16,
	};
	const int nt = (int)(sizeof types / sizeof types[0]);
	static const double vals[4] = {0, 1, 2, 100};
	for (int a = 0; a < nt; a++) {
		uint8_t buf[4 * 8];
		gc_dtype from = types[a];
		for (int i = 0; i < 4; i++) {
			double v = from == GC_DTYPE_BOOL ? (vals[i] != 0) : vals[i];
			void *p = buf + i * gc_dtype_size(from);
			/* clang-format off */
#define SET_(DT, T, e) case GC_DTYPE_##DT: *(T *)p = (e); break;
			switch (from) {
			SET_(BOOL, uint8_t, (uint8_t)v) SET_(INT8, int8_t, (int8_t)v)
			SET_(INT16, int16_t, (int16_t)v) SET_(INT32, int32_t, (int32_t)v)
			SET_(INT64, int64_t, (int64_t)v) SET_(UINT8, uint8_t, (uint8_t)v)
			SET_(UINT16, uint16_t, (uint16_t)v) SET_(UINT32, uint32_t, (uint32_t)v)
			SET_(UINT64, uint64_t, (uint64_t)v) SET_(FLOAT, float, (float)v)
			SET_(DOUBLE, double, v) SET_(FLOAT16, uint16_t, gc_f32_to_f16((float)v))
			default: *(uint16_t *)p = gc_f32_to_bf16((float)v); break;
#undef SET_
				/* clang-format on */
			}
		}
		gc_tensor tx = tensor(from, 1, DIMS(4), buf);
		gc_tensor *in[1] = {&tx};
		for (int b = 0; b < nt; b++) {
			gc_attr to = attr_i("to", types[b]);
			harness_run h;
			CHECK_INT(run(&h, gc_prepare_Cast, "Cast", 13, 1, in, 1, &to), 0);
			CHECK_INT(h.out[0].dtype, types[b]);
			for (int i = 0; i < 4; i++) {
				double src = harness_at(&tx, i);
				double want = types[b] == GC_DTYPE_BOOL ? (src != 0) : src;
				double got = harness_at(&h.out[0], i);
				if (got != want)
					fprintf(stderr, "  %s -> %s [%d]: %g, want %g\n",
						gc_dtype_name(from), gc_dtype_name(types[b]), i,
						got, want);
				CHECK(got == want);
			}
			harness_free(&h);
		}
	}
}

TEST_MAIN(TEST(test_unary_table), TEST(test_sqrt_sweep), TEST(test_unary_int), TEST(test_isnan_isinf),
	  TEST(test_attr_errors), TEST(test_transcendental_sweep), TEST(test_half_long),
	  TEST(test_clip), TEST(test_cast), TEST(test_cast_matrix))
