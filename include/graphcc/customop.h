/*
 * graphcc op-package ABI.
 *
 * An op package is a YAML manifest plus shared libraries: a *functions
 * library* (verify, shape inference, implementation selection) and one or
 * more *implementation libraries* holding kernels. This header is all a
 * package needs: it uses only the C standard headers and compiles as C99 and
 * as C++.
 *
 * Two interfaces, both first class:
 *
 * 1. The seed interface (Glow's external custom operations): the functions
 *    library exports customOpVerify, customOpInferShape and
 *    customOpSelectImpl (or names the manifest gives), and a kernel is
 *        void NAME(CustomOpIOTensor *inputs, int32_t numInputs,
 *                  CustomOpIOTensor *outputs, int32_t numOutputs,
 *                  CustomOpParam *params, int32_t numParams);
 *
 * 2. The graphcc interface, chosen by a library that says
 *        GC_CUSTOMOP_EXPORT_ABI();
 *    at file scope (it exports the symbol `graphcc_customop_abi`). Then every
 *    function gets a GcOpContext first and returns a GcStatus, and the
 *    manifest may name optional init/destroy and scratch entry points (and
 *    say `inplace: true`). There is no separate inferType: inferShape sets
 *    each output's dtype along with its rank and dims, and graphcc checks
 *    it against the output's `dtypes:` in the manifest. A library whose major ABI version differs from graphcc's
 *    is refused with both versions in the message.
 *
 * Lifecycle (both interfaces):
 *  - graphcc loads each library once with dlopen(RTLD_NOW | RTLD_LOCAL) and
 *    never unloads it while a program that uses it is alive.
 *  - verify, inferShape and selectImpl run at compile time,
 *    once per node, in that order. They MUST NOT keep pointers to the
 *    tensors or params they are given: those live only for the call.
 *    Inputs whose values are constant (initializers) arrive with `data` set;
 *    other inputs arrive with data == NULL.
 *  - init (graphcc interface) runs once per node when a program is loaded,
 *    after selection; it may read constant inputs (e.g. to pre-pack weights)
 *    and set ctx->state. destroy runs once when the program is freed.
 *  - A kernel runs once per execution of its node. It MUST NOT allocate
 *    memory it does not free before returning; it SHOULD use ctx->scratch
 *    (sized by the scratch function, or the manifest, before the first run).
 *
 * Threading:
 *  - verify, inferShape, selectImpl, init and destroy are called
 *    from one thread at a time.
 *  - A kernel MAY be called concurrently from several threads for the same
 *    node (one compiled program run by several sessions), each call with
 *    its own tensors and scratch. It MUST NOT write to ctx->state or to
 *    global data without its own locking; state is read-only after init.
 *  - ctx->num_threads tells how many threads the kernel may use.
 *
 * Memory: all tensors are dense and row-major. dims are 64-bit. Inputs MUST
 * NOT be written. A kernel writes exactly its outputs' bytes; graphcc's
 * --guard option checks that.
 */
#ifndef GRAPHCC_CUSTOMOP_H
#define GRAPHCC_CUSTOMOP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#include <cstdbool>
extern "C" {
#else
#include <stdbool.h>
#endif

/* ------------------------------------------------------------------------
 * The seed interface. Names, members and their order as in Glow's design.
 * ---------------------------------------------------------------------- */

/* Element types. The first eleven are the seed's, in its order; the rest
 * cover the other ONNX types. Values only ever grow at the end. */
typedef enum CustomOpDataType {
	DTFloat32,
	DTFloat16,
	DTBFloat16,
	DTQInt8,
	DTQUInt8,
	DTQInt16,
	DTQInt32,
	DTIInt32,
	DTIInt64,
	DTBool,
	DTString,
	DTFloat64,
	DTIInt8,
	DTIInt16,
	DTUInt8,
	DTUInt16,
	DTUInt32,
	DTUInt64,
	DTCustomOpDataTypeCount
} CustomOpDataType;

/* A tensor handed to a package function or kernel.
 *
 * Inputs and outputs are given by declaration: every function and kernel
 * gets one view per input and per output the manifest declares, in the
 * manifest's order, so numInputs and numOutputs always equal the declared
 * counts (a variadic last input: the node's actual count, at least the
 * inputs before it). A view is *absent* when the node leaves that optional
 * input or output out (ONNX: an empty name, or trailing ones dropped):
 *     data == NULL, rank == 0, numel == 0, dtype == DTCustomOpDataTypeCount,
 *     and dims pointing at values no tensor has (do not read them).
 * Test with gcInputPresent(&inputs[i]) / gcOutputPresent(&outputs[i])
 * (never with `data != NULL`: at compile time a present input that is not
 * a constant has data == NULL too). A kernel MUST NOT write an absent
 * output. An absent output's shape is still inferred (inferShape sets
 * every declared output); it is not computed by anyone. graphcc --guard
 * and graphcc test-package make any read through an absent view fail
 * loudly: data is NULL (crash capture names the kernel) and the dims hold
 * 0xdeadbeefdeadbeef. */
typedef struct CustomOpIOTensor {
	void *data;		/* NULL at compile time unless constant */
	int64_t *dims;		/* rank entries */
	int32_t rank;
	CustomOpDataType dtype;
	/* Quantized types (DTQInt8 ... DTQInt32): real = scale * (q - offset).
	 * An edge the manifest lists qint8 (quint8, ...) for and that graphcc
	 * bound through QDQ (a DequantizeLinear before an input, QuantizeLinear
	 * nodes after an output, constant per-tensor parameters) has its
	 * quantized dtype and these set, in every call (a bound output's too,
	 * from verify on). Any other tensor: scale 1, offset 0. */
	float scale;
	int32_t offset;
	/* Appended by graphcc (not in the seed): */
	int64_t numel;		/* product of dims */
	int32_t maxDims;	/* the manifest's bound on rank */
	int32_t reserved;
} CustomOpIOTensor;

/* A parameter: a node attribute, as the manifest declares it. A scalar has
 * size 0 and data points at one value; a vector has size entries. float
 * params are DTFloat32 (float), int params DTIInt64 (int64_t), bool params
 * DTBool (one byte each, 0 or 1), string params DTString (data is the
 * NUL-terminated text for a scalar, an array of `const char *` for a
 * vector). */
typedef struct CustomOpParam {
	void *data;
	CustomOpDataType dtype;
	const char *name;
	int32_t size;
} CustomOpParam;

/* Whether an input's view holds a tensor (see CustomOpIOTensor). */
static inline bool gcInputPresent(const CustomOpIOTensor *t)
{
	return t && t->dtype != DTCustomOpDataTypeCount;
}

/* Whether an output's view is one the node computes (see CustomOpIOTensor). */
static inline bool gcOutputPresent(const CustomOpIOTensor *t)
{
	return gcInputPresent(t);
}

/* Params by position. graphcc hands every function and kernel exactly the
 * params the manifest declares, in the manifest's order, each of its
 * declared datatype: an attribute of another type, a vector of the wrong
 * size, a missing attribute without a default are refused when the model is
 * compiled, naming the node and the param. So a kernel reads param i
 * directly, with no strcmp and no type test per call (number them once,
 * e.g. `enum { P_ALPHA, P_AXES };` in the manifest's order):
 *     float alpha = gcParamFloat(params, P_ALPHA);
 *     int32_t n; const int64_t *axes = gcParamInts(params, P_AXES, &n);
 * (A string param's text: gcParamString; a vector of strings:
 * gcParamStrings.) */
static inline float gcParamFloat(const CustomOpParam *params, int32_t i)
{
	return *(const float *)params[i].data;
}

static inline int64_t gcParamInt(const CustomOpParam *params, int32_t i)
{
	return *(const int64_t *)params[i].data;
}

static inline bool gcParamBool(const CustomOpParam *params, int32_t i)
{
	return *(const uint8_t *)params[i].data != 0;
}

static inline const char *gcParamString(const CustomOpParam *params, int32_t i)
{
	return (const char *)params[i].data;
}

static inline const float *gcParamFloats(const CustomOpParam *params, int32_t i, int32_t *n)
{
	if (n)
		*n = params[i].size;
	return (const float *)params[i].data;
}

static inline const int64_t *gcParamInts(const CustomOpParam *params, int32_t i, int32_t *n)
{
	if (n)
		*n = params[i].size;
	return (const int64_t *)params[i].data;
}

/* Bools of a vector param: one byte each, 0 or 1. */
static inline const uint8_t *gcParamBools(const CustomOpParam *params, int32_t i, int32_t *n)
{
	if (n)
		*n = params[i].size;
	return (const uint8_t *)params[i].data;
}

static inline const char *const *gcParamStrings(const CustomOpParam *params, int32_t i,
						 int32_t *n)
{
	if (n)
		*n = params[i].size;
	return (const char *const *)params[i].data;
}

typedef bool (*customOpVerify_t)(CustomOpIOTensor *inputs, int32_t numInputs,
				 CustomOpIOTensor *outputs, int32_t numOutputs,
				 CustomOpParam *params, int32_t numParams);

/* Outputs arrive with rank = maxDims, a dims buffer of maxDims entries and
 * dtype DTFloat32; the function sets rank, dims and dtype. */
typedef bool (*customOpInferShape_t)(CustomOpIOTensor *outputs, const int32_t numOutputs,
				     const CustomOpIOTensor *inputs, const int32_t numInputs,
				     const CustomOpParam *params, const int32_t numParams);

/* Returns the flavour (an implementation's `type` in the manifest) to use
 * for this node on `backend`, or NULL if none fits. The string must stay
 * valid after the call (a literal). */
typedef const char *(*customOpSelectImpl_t)(CustomOpIOTensor *inputs, int32_t numInputs,
					    CustomOpIOTensor *outputs, int32_t numOutputs,
					    CustomOpParam *params, int32_t numParams,
					    const char *backend);

typedef void (*customOpInterpreterKernel_t)(CustomOpIOTensor *inputs, int32_t numInputs,
					    CustomOpIOTensor *outputs, int32_t numOutputs,
					    CustomOpParam *params, int32_t numParams);

/* ------------------------------------------------------------------------
 * The graphcc interface.
 * ---------------------------------------------------------------------- */

#define GC_CUSTOMOP_ABI_MAJOR 1
#define GC_CUSTOMOP_ABI_MINOR 1 /* 1: host services in GcOpContext */
#define GC_CUSTOMOP_ABI_VERSION ((uint32_t)GC_CUSTOMOP_ABI_MAJOR << 16 | GC_CUSTOMOP_ABI_MINOR)

#if defined(_WIN32)
#define GC_CUSTOMOP_API __declspec(dllexport)
#elif defined(__GNUC__)
#define GC_CUSTOMOP_API __attribute__((visibility("default")))
#else
#define GC_CUSTOMOP_API
#endif

#ifdef __cplusplus
#define GC_CUSTOMOP_EXTERN_C extern "C"
#else
#define GC_CUSTOMOP_EXTERN_C
#endif

/* Put once at file scope in each library written to the graphcc interface. */
#define GC_CUSTOMOP_EXPORT_ABI()                                               \
	GC_CUSTOMOP_EXTERN_C GC_CUSTOMOP_API const uint32_t graphcc_customop_abi = \
		GC_CUSTOMOP_ABI_VERSION

/* Status: 0 ok, anything else failed (say why with ctx->set_error). */
typedef int32_t GcStatus;
#define GC_STATUS_OK 0
#define GC_STATUS_FAIL 1

typedef struct GcOpContext GcOpContext;

/* Every versioned struct starts with its size and ABI version; fields are
 * only appended. */
struct GcOpContext {
	uint32_t struct_size;	 /* sizeof(GcOpContext) as graphcc built it */
	uint32_t abi_version;	 /* GC_CUSTOMOP_ABI_VERSION of graphcc */
	const char *op_name;	 /* the manifest's name */
	const char *op_domain;	 /* the ONNX domain (package) */
	const char *op_type;	 /* the ONNX op_type */
	const char *node_name;	 /* the node being served */
	const char *backend;	 /* "Interpreter" */
	const char *flavour;	 /* the selected implementation (NULL before selection) */
	const char *config;	 /* the implementation's `config` string, or "" */
	void *state;		 /* per-node state set by init, read-only in kernels */
	void *scratch;		 /* scratch memory for kernels (NULL elsewhere) */
	uint64_t scratch_bytes;	 /* its size */
	int32_t num_threads;	 /* threads the kernel may use */
	int32_t reserved;
	/* Records why a function failed; graphcc prints it with the node's
	 * name. printf-style. */
	void (*set_error)(GcOpContext *ctx, const char *fmt, ...);
	void *host;		 /* graphcc's own; do not touch */

	/* ---- ABI 1.1: host services, for kernels (NULL in the other
	 * functions). Present when gcHostServices(ctx) says so: a graphcc
	 * older than 1.1 hands a smaller struct. ---- */

	/* Runs fn(arg, begin, end) over [0, n) in contiguous ranges on
	 * graphcc's own worker pool, with up to ctx->num_threads threads
	 * (--threads), and returns when all ranges are done. fn MUST be safe to
	 * run concurrently on disjoint ranges; it must not call parallel_for
	 * itself (it would run serially). GC_STATUS_OK. */
	GcStatus (*parallel_for)(GcOpContext *ctx, int64_t n,
				 void (*fn)(void *arg, int64_t begin, int64_t end), void *arg);
	/* C = alpha * op(A) op(B) + beta * C, row-major, float32, op(X) = X or
	 * X^T; graphcc's GEMM (OpenBLAS), so a package need not link a BLAS.
	 * A failure (dims too large) says why through set_error. */
	GcStatus (*sgemm)(GcOpContext *ctx, bool trans_a, bool trans_b, int64_t m, int64_t n,
			  int64_t k, float alpha, const float *a, int64_t lda, const float *b,
			  int64_t ldb, float beta, float *c, int64_t ldc);
	/* Temporary memory beyond ctx->scratch: `bytes` bytes, 64-byte
	 * aligned, valid until the kernel returns (graphcc frees it then);
	 * NULL when it cannot be had (at most 16 blocks per call). */
	void *(*temp_alloc)(GcOpContext *ctx, uint64_t bytes);

	/* Kernels only (NULL elsewhere): non-zero once the run this call
	 * serves was canceled or passed its deadline (the host's
	 * gc_run_options). A kernel that runs long SHOULD check it now and
	 * then and return GC_STATUS_FAIL when it is set; graphcc then reports
	 * the run as canceled at this node. Cheap (an atomic load and a clock
	 * read); thread-safe. ABI 1.1; check struct_size before reading it. */
	int32_t (*should_stop)(GcOpContext *ctx);
};

/* Whether ctx has the ABI 1.1 host services (parallel_for, sgemm,
 * temp_alloc): a kernel built against this header may run in an older
 * graphcc, which hands a smaller GcOpContext. */
static inline bool gcHostServices(const GcOpContext *ctx)
{
	return ctx->struct_size >= offsetof(GcOpContext, temp_alloc) + sizeof ctx->temp_alloc &&
	       ctx->parallel_for && ctx->sgemm && ctx->temp_alloc;
}

typedef GcStatus (*gcOpVerify_t)(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				 int32_t numInputs, const CustomOpIOTensor *outputs,
				 int32_t numOutputs, const CustomOpParam *params, int32_t numParams);
/* Sets each output's rank, dims and dtype (rank <= maxDims). */
typedef GcStatus (*gcOpInferShape_t)(GcOpContext *ctx, CustomOpIOTensor *outputs,
				     int32_t numOutputs, const CustomOpIOTensor *inputs,
				     int32_t numInputs, const CustomOpParam *params,
				     int32_t numParams);
/* Sets *flavour to an implementation's `type` (a string that stays valid). */
typedef GcStatus (*gcOpSelectImpl_t)(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				     int32_t numInputs, const CustomOpIOTensor *outputs,
				     int32_t numOutputs, const CustomOpParam *params,
				     int32_t numParams, const char **flavour);
/* Bytes of scratch the kernel needs for this node (after selection). */
typedef GcStatus (*gcOpScratch_t)(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				  int32_t numInputs, const CustomOpIOTensor *outputs,
				  int32_t numOutputs, const CustomOpParam *params,
				  int32_t numParams, uint64_t *bytes);
/* Per-node state: init may set ctx->state; destroy releases it. */
typedef GcStatus (*gcOpInit_t)(GcOpContext *ctx, const CustomOpIOTensor *inputs,
			       int32_t numInputs, const CustomOpIOTensor *outputs,
			       int32_t numOutputs, const CustomOpParam *params, int32_t numParams);
typedef void (*gcOpDestroy_t)(GcOpContext *ctx);
typedef GcStatus (*gcOpKernel_t)(GcOpContext *ctx, const CustomOpIOTensor *inputs,
				 int32_t numInputs, CustomOpIOTensor *outputs, int32_t numOutputs,
				 const CustomOpParam *params, int32_t numParams);

/* Bytes per element of a CustomOpDataType (0 for DTString and unknown). */
static inline size_t gcDataTypeSize(CustomOpDataType t)
{
	switch (t) {
	case DTFloat32: case DTQInt32: case DTIInt32: case DTUInt32: return 4;
	case DTFloat16: case DTBFloat16: case DTQInt16: case DTIInt16: case DTUInt16: return 2;
	case DTQInt8: case DTQUInt8: case DTBool: case DTIInt8: case DTUInt8: return 1;
	case DTIInt64: case DTFloat64: case DTUInt64: return 8;
	default: return 0;
	}
}

#ifdef __cplusplus
}
#endif
#endif
