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
 *    manifest may name optional init/destroy, inferType, scratch and inplace
 *    entry points. A library whose major ABI version differs from graphcc's
 *    is refused with both versions in the message.
 *
 * Lifecycle (both interfaces):
 *  - graphcc loads each library once with dlopen(RTLD_NOW | RTLD_LOCAL) and
 *    never unloads it while a program that uses it is alive.
 *  - verify, inferShape (and inferType) and selectImpl run at compile time,
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
 *  - verify, inferShape, inferType, selectImpl, init and destroy are called
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

/* A tensor handed to a package function or kernel. */
typedef struct CustomOpIOTensor {
	void *data;		/* NULL at compile time unless constant */
	int64_t *dims;		/* rank entries */
	int32_t rank;
	CustomOpDataType dtype;
	float scale;		/* quantized types: real = scale * (q - offset) */
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
#define GC_CUSTOMOP_ABI_MINOR 0
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
	/* Kernels only (NULL elsewhere): non-zero once the run this call
	 * serves was canceled or passed its deadline (the host's
	 * gc_run_options). A kernel that runs long SHOULD check it now and
	 * then and return GC_STATUS_FAIL when it is set; graphcc then reports
	 * the run as canceled at this node. Cheap (an atomic load and a clock
	 * read); thread-safe. Check struct_size before reading it. */
	int32_t (*should_stop)(GcOpContext *ctx);
};

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
