/*
 * graphcc runtime API: tensors, errors, compiled programs and sessions.
 *
 * This header is all a program needs to load a compiled model (.gcb) and run
 * it; it does not pull in the compiler (ONNX import, manifests). The compiler
 * API in <graphcc/graphcc.h> includes this header.
 *
 * Conventions:
 *  - Fallible functions return int: 0 on success, a negative GC_E* code on
 *    failure. When `err` is non-NULL it receives the code and a message that
 *    names what is at fault (file, node, tensor, key).
 *  - Objects made by *_new / *_load are released with the matching *_free;
 *    *_free(NULL) does nothing.
 *  - Pointers returned by the library are borrowed from their owner and live
 *    as long as it does.
 */
#ifndef GRAPHCC_RUNTIME_H
#define GRAPHCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GC_VERSION_MAJOR 0
#define GC_VERSION_MINOR 1
#define GC_VERSION_PATCH 0
#define GC_VERSION_STRING "0.1.0"

/* Error codes: X(name, value, description). */
#define GC_ERRNO_LIST(X)                                                       \
	X(OK, 0, "success")                                                    \
	X(INVAL, -1, "invalid input")                                          \
	X(NOMEM, -2, "out of memory")                                          \
	X(IO, -3, "input/output error")                                        \
	X(UNSUPPORTED, -4, "unsupported")                                      \
	X(KERNEL, -5, "kernel failed")                                         \
	X(CRASH, -6, "kernel crashed or misbehaved")                           \
	X(CHANGED, -7, "library changed since compile")                        \
	X(LIMIT, -8, "size limit exceeded")                                    \
	X(BUSY, -9, "session in use by another call")                          \
	X(CANCELED, -10, "canceled or past its deadline")

typedef enum gc_errno {
#define GC_X_(name, value, text) GC_E##name = value,
	GC_ERRNO_LIST(GC_X_)
#undef GC_X_
} gc_errno;

/* Rewords an error code. Never NULL. */
const char *gc_strerror(int code);

#define GC_ERROR_MSG_MAX 1024
/* Where a failing call reports what went wrong. Zero-initialise it. */
typedef struct gc_error {
	int code;
	char msg[GC_ERROR_MSG_MAX];
} gc_error;

/* Records an error (when err is non-NULL and holds none yet: the first
 * error is the one that explains) and returns code. */
int gc_error_set(gc_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 3, 4)))
#endif
	;
/* Puts "prefix: " in front of the message in err. Returns err->code. */
int gc_error_prefix(gc_error *err, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;

/* The version of the library the program runs with (GC_VERSION_STRING of
 * its build), and of its ABI: a program built against major version M
 * runs with any library of the same GC_ABI_VERSION (the .so's soname is
 * libgraphcc-runtime.so.GC_ABI_VERSION). */
#define GC_ABI_VERSION 0
const char *gc_version(void);
int gc_abi_version(void);

/*
 * Library-wide settings, all optional: without a call every field has its
 * default. The library reads no environment variable and changes nothing
 * of its host's process by itself; what a host wants of either it asks for
 * here (the graphcc command does, from its environment). Call it before
 * loading programs; a later call changes the settings for what follows.
 */
typedef struct gc_init_options {
	size_t size; /* sizeof(gc_init_options), or 0 */
	/* The largest single buffer the library allocates (arena, file read,
	 * a tensor grown at run time); 0: 16 GiB. */
	uint64_t max_bytes;
	/* Non-zero: the portable reference kernels only, as on a CPU without
	 * AVX-512 (for comparisons). */
	int reference_kernels;
	/* Non-zero: set OPENBLAS_CORETYPE=SkylakeX in the process environment
	 * on CPUs with AVX-512F/DQ/BW/VL, and OPENBLAS_NUM_THREADS=1, each
	 * unless it is set, before OpenBLAS loads (OpenBLAS 0.3.21 takes AMD
	 * Zen 4/5 for Haswell otherwise and runs GEMMs at half speed; graphcc
	 * runs it on one thread, and the threads it starts at load would spin
	 * for ~0.1 s on the cores the worker pool runs on). A process-wide
	 * change: opt-in. */
	int blas_coretype;
	/* Non-zero: the environment overrides the fields above:
	 * GRAPHCC_MAX_BYTES=N, GRAPHCC_NN_REFERENCE=1; and amx below:
	 * GRAPHCC_AMX=0. */
	int from_environment;
	/* Non-zero: on CPUs with Intel AMX-INT8, ask Linux for the tile state
	 * (arch_prctl ARCH_REQ_XCOMP_PERM), so that MatMulInteger and
	 * QLinearMatMul run on AMX tiles. A process-wide change: every signal
	 * frame grows by ~8 KiB and Linux then refuses an alternate signal
	 * stack smaller than that: opt-in. Without it graphcc still uses AMX
	 * when something else in the process has asked (oneDNN does). */
	int amx;
} gc_init_options;
int gc_runtime_init(const gc_init_options *opt, gc_error *err);

/*
 * In-process op libraries: functions of the calling process (a binding's
 * trampolines into another language, such as graphcc's Python kernels)
 * that an op package may name as its functionsLibrary or an
 * implementation's impl, spelled "inprocess:NAME" (taken as is, not
 * relative to the manifest). Their functions follow the graphcc interface
 * of customop.h (verify, inferShape, selectImpl, kernel, ...), looked up
 * by the symbol names given here. Registered once per name for the life of
 * the process; programs using them cannot be saved as .gcb files (there is
 * no file to pin). The name and symbols are copied.
 */
int gc_inprocess_library_add(const char *name, int32_t n, const char *const *symbols,
			     void (*const *functions)(void), gc_error *err);

/* Element types, numbered as ONNX's TensorProto.DataType:
 * X(NAME, onnx value, element bytes, display name). float8 values are their
 * 8-bit patterns; int4 and uint4 hold one element per byte in memory (the
 * value sign- or zero-extended, as ml_dtypes holds them), two per byte only
 * in .pb and .onnx files; float4e2m1 (opset 23) likewise, its 4-bit pattern
 * in the low nibble (ml_dtypes' float4_e2m1fn). */
#define GC_DTYPE_LIST(X)                                                       \
	X(UNDEFINED, 0, 0, "undefined")                                        \
	X(FLOAT, 1, 4, "float32")                                              \
	X(UINT8, 2, 1, "uint8")                                                \
	X(INT8, 3, 1, "int8")                                                  \
	X(UINT16, 4, 2, "uint16")                                              \
	X(INT16, 5, 2, "int16")                                                \
	X(INT32, 6, 4, "int32")                                                \
	X(INT64, 7, 8, "int64")                                                \
	X(STRING, 8, sizeof(char *), "string")                                 \
	X(BOOL, 9, 1, "bool")                                                  \
	X(FLOAT16, 10, 2, "float16")                                           \
	X(DOUBLE, 11, 8, "float64")                                            \
	X(UINT32, 12, 4, "uint32")                                             \
	X(UINT64, 13, 8, "uint64")                                             \
	X(COMPLEX64, 14, 8, "complex64")                                       \
	X(COMPLEX128, 15, 16, "complex128")                                    \
	X(BFLOAT16, 16, 2, "bfloat16")                                         \
	X(FLOAT8E4M3FN, 17, 1, "float8e4m3fn")                                 \
	X(FLOAT8E4M3FNUZ, 18, 1, "float8e4m3fnuz")                             \
	X(FLOAT8E5M2, 19, 1, "float8e5m2")                                     \
	X(FLOAT8E5M2FNUZ, 20, 1, "float8e5m2fnuz")                             \
	X(UINT4, 21, 1, "uint4")                                               \
	X(INT4, 22, 1, "int4")                                                 \
	X(FLOAT4E2M1, 23, 1, "float4e2m1")

typedef enum gc_dtype {
#define GC_X_(name, value, size, text) GC_DTYPE_##name = value,
	GC_DTYPE_LIST(GC_X_)
#undef GC_X_
	GC_DTYPE_COUNT,
	/* Values that are not tensors, outside ONNX's numbering: the whole
	 * type fits the dtype field. A sequence of tensors of element type E
	 * is GC_DTYPE_SEQUENCE | E; an optional of type T is
	 * GC_DTYPE_OPTIONAL | T (optional(sequence(float32)) is
	 * GC_DTYPE_OPTIONAL | GC_DTYPE_SEQUENCE | GC_DTYPE_FLOAT). Such a
	 * gc_tensor has rank 0 and its data points at a gc_sequence or a
	 * gc_optional. E may be UNDEFINED where it is not known yet. */
	GC_DTYPE_SEQUENCE = 0x100,
	GC_DTYPE_OPTIONAL = 0x200,
} gc_dtype;

#define GC_DTYPE_ELEM_MASK 0xff
/* Whether dtype is a sequence or optional value type (not a tensor). */
static inline int gc_dtype_is_value(gc_dtype dtype)
{
	return (dtype & (GC_DTYPE_SEQUENCE | GC_DTYPE_OPTIONAL)) != 0;
}
static inline int gc_dtype_is_sequence(gc_dtype dtype)
{
	return (dtype & (GC_DTYPE_SEQUENCE | GC_DTYPE_OPTIONAL)) == GC_DTYPE_SEQUENCE;
}
static inline int gc_dtype_is_optional(gc_dtype dtype)
{
	return (dtype & GC_DTYPE_OPTIONAL) != 0;
}
/* The element type of a sequence, the contained type of an optional. */
static inline gc_dtype gc_dtype_inner(gc_dtype dtype)
{
	if (dtype & GC_DTYPE_OPTIONAL)
		return (gc_dtype)(dtype & ~GC_DTYPE_OPTIONAL);
	return (gc_dtype)(dtype & GC_DTYPE_ELEM_MASK);
}

/* Bytes per element; 0 for an unknown type. */
size_t gc_dtype_size(gc_dtype dtype);
/* "float32", "int64", ...; "invalid" for an unknown type. */
const char *gc_dtype_name(gc_dtype dtype);
/* Looks a type up by its display name; GC_DTYPE_UNDEFINED if unknown. */
gc_dtype gc_dtype_from_name(const char *name);

#define GC_MAX_RANK 8

/*
 * A dense row-major tensor. `data` is not owned by the struct: the code that
 * filled it says who frees it. For GC_DTYPE_STRING, data is an array of
 * NUL-terminated `char *` (bytes; UTF-8 where text is meant; no NUL inside).
 * A tensor filled by gc_tensor_alloc, gc_npy_read or gc_pb_read owns each
 * string (gc_tensor_release frees them); the strings of a session's inputs,
 * outputs and constants belong to the session or program, never to the
 * tensor.
 */
typedef struct gc_tensor {
	void *data;
	int64_t dims[GC_MAX_RANK];
	int32_t rank;
	gc_dtype dtype;
} gc_tensor;

/*
 * The values behind a sequence or optional gc_tensor. Where a session hands
 * one out (gc_session_output) it is borrowed from the session; one given to
 * gc_session_set_input is copied.
 */
typedef struct gc_sequence {
	gc_dtype elem_dtype; /* of every item (UNDEFINED: an empty sequence of unknown type) */
	int32_t n;
	gc_tensor *items; /* n dense tensors */
} gc_sequence;

typedef struct gc_optional {
	int32_t has_value;
	/* When has_value: a tensor, or a sequence (dtype GC_DTYPE_SEQUENCE | E,
	 * data a gc_sequence). dtype says the type even when empty. */
	gc_tensor value;
} gc_optional;

/* A sequence or optional value allocated by the library (gc_pb_read_value):
 * frees every item; gc_tensor_release calls it for such tensors. */
void gc_value_release(gc_tensor *t);

/* Number of elements (1 for rank 0); -1 if a dim is negative or it overflows. */
int64_t gc_tensor_numel(const gc_tensor *t);
/* numel * element size; -1 on overflow. */
int64_t gc_tensor_nbytes(const gc_tensor *t);
/* "1x3x224x224" (or "scalar") into buf. Returns buf. */
char *gc_shape_str(const int64_t *dims, int32_t rank, char *buf, size_t len);
/* Allocates t->data for t's dtype and dims (zeroed). */
int gc_tensor_alloc(gc_tensor *t, gc_error *err);
/* Frees t->data (and each string of a string tensor); sets data to NULL. */
void gc_tensor_release(gc_tensor *t);

/* Node attributes, numbered as ONNX's AttributeProto.AttributeType. */
typedef enum gc_attr_type {
	GC_ATTR_UNDEFINED = 0,
	GC_ATTR_FLOAT = 1,
	GC_ATTR_INT = 2,
	GC_ATTR_STRING = 3,
	GC_ATTR_TENSOR = 4,
	GC_ATTR_GRAPH = 5,
	GC_ATTR_FLOATS = 6,
	GC_ATTR_INTS = 7,
	GC_ATTR_STRINGS = 8,
	GC_ATTR_TENSORS = 9,
	GC_ATTR_GRAPHS = 10,
	GC_ATTR_TYPE_COUNT
} gc_attr_type;

/* One attribute. `n` counts the elements of list types and the bytes of a
 * STRING (which is also NUL-terminated). */
typedef struct gc_attr {
	const char *name;
	gc_attr_type type;
	int64_t n;
	union {
		float f;
		int64_t i;
		const char *s;
		const gc_tensor *t;
		const void *g;
		const float *floats;
		const int64_t *ints;
		const char *const *strings;
		const gc_tensor *tensors;
		const void *const *graphs;
	} v;
} gc_attr;

const char *gc_attr_type_name(gc_attr_type type);

/* NumPy .npy files (format versions 1-3, C order). String tensors are read
 * from NumPy's fixed-width Unicode ('<U') or byte-string ('|S') arrays (the
 * tensor owns its strings: free with gc_tensor_release) and written as
 * '<U' text, so their strings must be UTF-8. */
int gc_npy_read(const char *path, gc_tensor *out, gc_error *err);
int gc_npy_read_mem(const void *buf, size_t len, const char *what, gc_tensor *out, gc_error *err);
int gc_npy_write(const char *path, const gc_tensor *t, gc_error *err);
/* Whether gc_npy_write can write t (its type has a .npy form; a string
 * tensor's strings are UTF-8), with the message it would give, naming what. */
int gc_npy_check(const gc_tensor *t, const char *what, gc_error *err);

/*
 * Threads. What may be shared:
 *  - A gc_program is immutable once gc_compile or gc_program_load returns:
 *    any number of threads MAY call the gc_program_* getters and
 *    gc_session_new on the same program at once (its weights, plan and the
 *    per-node state custom kernels made in `init` are only read; see
 *    customop.h for what a kernel MUST NOT write). gc_program_free MUST wait
 *    until every session of the program is freed.
 *  - A gc_session is one execution's state (arena, inputs, outputs): it
 *    MUST be used by one thread at a time. Run a program concurrently by
 *    giving each thread its own session (tests/unit/test-threads.c: four
 *    threads, one program, bit-identical outputs).
 *  - A gc_error belongs to the call it is passed to; use one per thread.
 *  - gc_registry (graphcc.h) and gc_graph: one thread at a time per object;
 *    separate objects MAY be used from separate threads.
 */
/* A compiled program: immutable once built, shareable between sessions. */
typedef struct gc_program gc_program;
/* The execution state of one program: activation memory and tensor views.
 * One session is used by one thread at a time. */
typedef struct gc_session gc_session;

void gc_program_free(gc_program *p);

/*
 * Options structs (gc_load_options, gc_session_options, gc_compile_options)
 * start with `size`: set it to sizeof the struct, or leave it 0 (this
 * version's size). Fields are only appended; a library newer than the
 * caller's header reads the caller's `size` bytes and uses the defaults
 * (zero) for the fields it appended since.
 */
/*
 * Logging. The library never writes to stdout or stderr: what it has to
 * say beyond a failing call's gc_error goes to a callback set per program
 * (gc_load_options.log) or per session (gc_session_options.log; NULL: the
 * program's). No callback: the message is dropped. The callback MAY be
 * called from any thread that calls into the program or session (one call
 * at a time per session); msg is valid during the call only.
 */
typedef enum gc_log_level {
	GC_LOG_ERROR = 0,
	GC_LOG_WARNING = 1,
	GC_LOG_INFO = 2,
	GC_LOG_DEBUG = 3,
	GC_LOG_LEVEL_COUNT
} gc_log_level;
typedef void (*gc_log_fn)(void *user, gc_log_level level, const char *msg);

/*
 * Moving programs: where a pinned library is looked for when the program
 * and its packages are installed elsewhere than where they were compiled.
 * A library the program records as a path equal to `from` or under the
 * folder `from` -- compared with the path as recorded (relative to the
 * program's folder, as `graphcc info` shows it) and as resolved against the
 * program's folder -- is looked for at `to` plus the rest of the path; a
 * relative `to` is taken in the program's folder. The first entry that
 * matches is used. The SHA-256 pin still holds: a library found there with
 * the recorded hash loads; any other is refused (GC_ECHANGED) unless
 * allow_changed_kernels, and library_dirs applies to the mapped path.
 * The strings are read during gc_program_load* only.
 */
typedef struct gc_path_map {
	const char *from;
	const char *to;
} gc_path_map;

typedef struct gc_load_options {
	size_t size; /* sizeof(gc_load_options), or 0 */
	/* Accept kernel libraries whose SHA-256 changed since compile (a
	 * warning is logged). */
	int allow_changed_kernels;
	/* Older spelling of a warning-only log: used when `log` is NULL. */
	void (*warn)(void *user, const char *msg);
	void *user;
	/* Inspect only (graphcc info, dot): no library is opened, so no package
	 * code runs; a library that is missing or changed is a warning. Such a
	 * program cannot run: gc_session_new refuses it. */
	int inspect_only;
	/* When n_library_dirs > 0: a library whose real path (symlinks
	 * resolved) does not lie under one of these folders is refused before
	 * anything reads it (--allow-libraries, GRAPHCC_LIBRARY_PATH). */
	const char *const *library_dirs;
	int32_t n_library_dirs;
	/* Refuse every library: a program with custom nodes is refused, naming
	 * its first library (--no-libraries: only built-in ops may run). */
	int no_libraries;
	/* The program's log (see gc_log_fn), and its user pointer. */
	gc_log_fn log;
	void *log_user;
	/* Pinned library paths rewritten (see gc_path_map): n entries. */
	const gc_path_map *library_map;
	int32_t n_library_map;
	/* gc_program_load_mem: the folder the program's relative library paths
	 * (and a relative library_map `to`) are taken in, as if the program
	 * file lay there; NULL: none (such a path is then refused, naming it).
	 * gc_program_load ignores it (the file's folder is used). */
	const char *program_dir;
} gc_load_options;

/*
 * Loads a .gcb program: the file is mapped, checked (format version,
 * checksums, every size and offset), the weights are used in place, every
 * kernel library is checked against its recorded SHA-256 and every node is
 * prepared. Needs only the runtime (no YAML, no protobuf).
 *
 * Which code it runs: a custom node's binding must name one of the pinned
 * libraries, or the program is refused before any library is opened.
 * Relative library paths are resolved against the program file's folder,
 * never the current directory.
 */
int gc_program_load(const char *path, const gc_load_options *opt, gc_program **out,
		    gc_error *err);
/*
 * gc_program_load from `len` bytes at buf (a program kept in a database or
 * an archive): buf is copied, so the caller may free it on return. The
 * checks are the same as for a file (a truncated or corrupted buffer is
 * refused with a message naming `name`, never a crash); the kernel
 * libraries still come from files, found through their pinned paths and
 * gc_load_options.program_dir / library_map. `name` names the program in
 * messages (NULL: "(program in memory)").
 */
int gc_program_load_mem(const void *buf, size_t len, const char *name,
			const gc_load_options *opt, gc_program **out, gc_error *err);
/* Whether the file starts like a .gcb program. */
int gc_is_program_file(const char *path);

/* What a loaded program records about itself (0 / NULL for programs made
 * in memory). */
typedef struct gc_program_origin {
	uint32_t format_version;
	const char *graphcc_version;
	int32_t n_libraries;
	const char *const *library_paths;
	const char *const *library_sha256; /* hex */
	uint64_t file_bytes, weights_bytes;
} gc_program_origin;
void gc_program_get_origin(const gc_program *p, gc_program_origin *o);
int gc_program_num_inputs(const gc_program *p);
int gc_program_num_outputs(const gc_program *p);
/* Description of an input/output: name, dtype, dims. Borrowed from p. */
const gc_tensor *gc_program_input(const gc_program *p, int i, const char **name);
const gc_tensor *gc_program_output(const gc_program *p, int i, const char **name);
int gc_program_find_input(const gc_program *p, const char *name);
/* Session state (training programs): the output whose value input i takes
 * after each successful run, or -1 when i is an ordinary input. Every new
 * session starts such an input at the value the program holds for it. */
int gc_program_input_state(const gc_program *p, int i);

/* One node of a program, as tools show it. Strings are borrowed from p. */
typedef struct gc_node_desc {
	const char *name, *domain, *op_type;
	int32_t n_inputs, n_outputs;
	/* Custom nodes only (NULL otherwise): */
	const char *op_name;  /* the package's name for the operation */
	const char *flavour;  /* the implementation selection chose */
	const char *library;  /* the implementation library */
	const char *symbol;   /* the kernel */
	const char *manifest; /* the package it came from */
} gc_node_desc;
int gc_program_num_nodes(const gc_program *p);
void gc_program_node(const gc_program *p, int i, gc_node_desc *d);
/* Tensor t of node i's inputs (is_output 0) or outputs (1); NULL if absent. */
const gc_tensor *gc_program_node_tensor(const gc_program *p, int i, int is_output, int t,
					const char **name);
/* Whether custom node i is bound per input shape (a dynamic dimension
 * reaches it, gc_compile_options.dynamic_dims): 1 with the functions
 * library whose verify / inferShape / selectImpl run when a session first
 * sees a new input shape, and how many implementations the program pins
 * for selection to choose from (each may be NULL); else 0. gc_node_desc
 * then shows the first of those implementations. */
int gc_program_node_per_shape(const gc_program *p, int i, const char **functions_library,
			      int *n_flavours);
/* Whether input (is_output 0) or output (1) t of node i is a custom node's
 * edge bound quantized through QDQ (the kernel sees the integer tensor with
 * real = scale * (q - zero_point)): 1 with *qtype ("qint8", "quint8",
 * "qint16", "qint32"), *scale and *zero_point set (each may be NULL), else
 * 0. */
int gc_program_node_quant(const gc_program *p, int i, int is_output, int t, const char **qtype,
			  float *scale, int32_t *zero_point);

typedef struct gc_session_options {
	size_t size; /* sizeof(gc_session_options), or 0 */
	int threads; /* 0: all cores */
	/* Names the session in messages (GC_EBUSY, inputs never set,
	 * GC_ECANCELED); copied, at most 63 bytes kept. NULL: its address. */
	const char *name;
	/* The session's log; NULL: its program's. */
	gc_log_fn log;
	void *log_user;
	/* Non-zero: no arena. Every activation tensor and every node's scratch
	 * gets its own allocation of exactly its size (more memory, no reuse),
	 * so AddressSanitizer, valgrind and --guard see a kernel's overrun or
	 * read past the end, which the arena hides in a neighbour's bytes
	 * (graphcc run --no-arena). */
	int no_arena;
	/* Random ops without a seed attribute (RandomNormal, Bernoulli,
	 * training Dropout, ...) draw from streams derived from `seed` when
	 * use_seed is non-zero (the same values for the same program, seed
	 * and run count, whatever the threads); else from a seed the OS gives
	 * each session. docs/random.md says how. */
	int use_seed;
	uint64_t seed;
} gc_session_options;

int gc_session_new(const gc_program *p, const gc_session_options *opt, gc_session **out,
		   gc_error *err);
void gc_session_free(gc_session *s);
/* Copies t into input i after checking its dtype and shape against the
 * program's (rank 0 to GC_MAX_RANK, no negative dim). A string input's
 * strings are copied too (t keeps its own).
 *
 * Inputs persist: once set, an input keeps its value for every later run
 * of the session until it is set again. A run before every input was set
 * at least once since gc_session_new fails with GC_EINVAL naming the inputs
 * never set (it never runs on zeros). */
int gc_session_set_input(gc_session *s, int i, const gc_tensor *t, gc_error *err);
/*
 * Zero-copy input: as gc_session_set_input, but without copying when it
 * can: input i reads t's memory (which MUST stay valid and unchanged until
 * the runs that use it end) until it is set or used again. Inputs that
 * live in session storage (strings, sequences, optionals, shapes only known
 * at run time) are copied as by gc_session_set_input. Nothing writes into
 * t: the memory plan never lets a kernel work in place on a graph input.
 * Alignment: t->data MUST be aligned for its element type (else GC_EINVAL);
 * no further alignment is needed. Several sessions MAY read one buffer at
 * once.
 */
int gc_session_use_input(gc_session *s, int i, const gc_tensor *t, gc_error *err);
/*
 * Caller-provided output: the next runs write output i straight into
 * `data` (no copy, no arena slot), until called again; data NULL goes back
 * to the session's own memory. `bytes` MUST cover the output
 * (gc_tensor_nbytes of gc_program_output(p, i)); data MUST be aligned for
 * its element type and stay valid while the session may run. The buffer
 * holds the output after each successful run (undefined after a failed
 * one); gc_session_output(s, i)->data then points at it. Only outputs of a
 * shape known when compiling (not strings, not in session storage, not an
 * output that is also an input or another output) can be bound:
 * GC_EUNSUPPORTED otherwise, naming the output.
 */
int gc_session_use_output(gc_session *s, int i, void *data, size_t bytes, gc_error *err);
/*
 * Runs the program on the inputs set. A session serves one call at a time:
 * a call on a session that another thread is running (gc_session_run,
 * gc_session_run_with, gc_session_run_debug, gc_session_set_input) fails
 * with GC_EBUSY naming the session and touches nothing.
 */
int gc_session_run(gc_session *s, gc_error *err);

/*
 * A run that can be stopped. Both are checked between nodes (also the nodes
 * of a control-flow body, each iteration) and offered to custom kernels
 * (GcOpContext.should_stop, customop.h); a run stopped by either fails with
 * GC_ECANCELED naming the node it reached, and leaves the session usable
 * (its outputs are undefined until the next run that succeeds).
 */
typedef struct gc_run_options {
	size_t size; /* sizeof(gc_run_options), or 0 */
	/* gc_now_ns() time after which the run stops; 0: no deadline. */
	int64_t deadline_ns;
	/* Non-NULL: the run stops once *cancel is non-zero. Another thread
	 * sets it (read with an atomic load; it MUST stay valid during the
	 * run). */
	const int *cancel;
} gc_run_options;
int gc_session_run_with(gc_session *s, const gc_run_options *opt, gc_error *err);
/* CLOCK_MONOTONIC in nanoseconds: the clock of gc_run_options.deadline_ns. */
int64_t gc_now_ns(void);
/* Output i of the last run. Borrowed; valid until the next run or free (the
 * strings of a string output also until the input they may come from is set
 * again). Undefined after a failed run. */
const gc_tensor *gc_session_output(const gc_session *s, int i);

#ifdef __cplusplus
}
#endif
#endif
