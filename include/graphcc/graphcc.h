/*
 * graphcc compiler API: build a graph (by hand or from an ONNX file), compile
 * it into a program, run it with the runtime API of <graphcc/runtime.h>.
 *
 * The ONNX importer is a client of this same builder API.
 */
#ifndef GRAPHCC_H
#define GRAPHCC_H

#include <graphcc/runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_graph gc_graph;

/*
 * Op packages. A registry holds loaded packages; a package loads whole or
 * not at all. Two packages claiming the same (domain, type, version) are
 * refused naming both manifests. Registries are safe to use from several
 * threads once loaded; loading into one registry is not concurrent.
 */
typedef struct gc_registry gc_registry;

gc_registry *gc_registry_new(void);
void gc_registry_free(gc_registry *r);
/* Where notes go (implementations skipped because this build lacks their
 * backend). Default: none. */
void gc_registry_set_note_handler(gc_registry *r, void (*note)(void *user, const char *msg),
				  void *user);
/* Which libraries a registry may load (set before loading; copied). */
typedef struct gc_registry_options {
	size_t size; /* sizeof(gc_registry_options), or 0 */
	/* When n_library_dirs > 0: every library a manifest names must lie
	 * (real path, symlinks resolved) under one of these folders, or the
	 * package is refused before any of its libraries is opened. */
	const char *const *library_dirs;
	int32_t n_library_dirs;
	/* Dry run (graphcc check --dry-run): manifests are parsed and every
	 * library is read as a file -- an ELF shared object for this machine
	 * exporting the symbols the manifest names, with a compatible ABI
	 * version -- but none is loaded, so no package code runs. Such a
	 * registry describes packages; it cannot bind nodes. */
	int dry_run;
} gc_registry_options;
int gc_registry_set_options(gc_registry *r, const gc_registry_options *opt);
/* Parses the manifest, opens its libraries, resolves every symbol. */
int gc_registry_load(gc_registry *r, const char *manifest, gc_error *err);
/* Loads each entry of a colon-separated list: a manifest, or a folder whose
 * *.yaml files are manifests (GRAPHCC_OPS_PATH). */
int gc_registry_load_path(gc_registry *r, const char *list, gc_error *err);

/* What a registry holds, for tools. */
typedef struct gc_op_desc {
	const char *manifest, *name, *domain, *type;
	int64_t version; /* -1: every version */
	int32_t n_inputs, n_outputs, n_params, n_impls;
	const char *functions_library;
	int graphcc_interface; /* of the functions library */
	int pure;
} gc_op_desc;
typedef struct gc_impl_desc {
	const char *backend, *type, *library, *symbol, *config;
	int graphcc_interface; /* of the implementation library */
	int skipped;	       /* backend not in this build */
	int has_init, has_scratch;
} gc_impl_desc;
/* An operation's declared inputs and outputs (gc_registry_op_io). */
typedef struct gc_io_desc {
	const char *name;
	int32_t max_dims;
	int constant, optional, variadic;
	uint32_t dtypes; /* bit (1 << gc_dtype) per allowed type; 0: any; 1 (bit
			    0 alone): no plain type, only quantized ones (qint8 ...) */
} gc_io_desc;
/* An operation's declared params (gc_registry_op_param). */
typedef struct gc_param_desc {
	const char *name, *attribute;
	const char *datatype; /* "bool", "int", "float" or "string" */
	int scalar;
	int32_t size; /* vectors: the required length, or -1 */
	int has_default;
	int32_t default_count; /* vectors: entries in the default */
	/* The default as functions get it: a scalar is one int64_t, float,
	 * uint8_t (bool) or the text itself; a vector an array of those (of
	 * char * for strings). */
	const void *default_data;
} gc_param_desc;
/* Input (is_output 0) or output k of operation op; zeroed when out of range. */
void gc_registry_op_io(const gc_registry *r, int op, int is_output, int k, gc_io_desc *d);
/* Param k of operation op; zeroed when out of range. */
void gc_registry_op_param(const gc_registry *r, int op, int k, gc_param_desc *d);
/* The symbol names of an operation's functions (in its functions library). */
typedef struct gc_op_functions {
	const char *verify, *infer_shape, *select_impl;
} gc_op_functions;
void gc_registry_op_functions(const gc_registry *r, int op, gc_op_functions *f);
/* An implementation's optional functions (NULL: none) and its settings. */
typedef struct gc_impl_functions {
	const char *init, *destroy, *scratch;
	uint64_t scratch_bytes;
	int has_scratch_bytes, inplace;
} gc_impl_functions;
void gc_registry_impl_functions(const gc_registry *r, int op, int j, gc_impl_functions *f);
/* Whether r has an operation for (domain, type) at that opset version
 * (-1: any). */
int gc_registry_provides(const gc_registry *r, const char *domain, const char *type,
			 int64_t version);
int gc_registry_num_ops(const gc_registry *r);
void gc_registry_op(const gc_registry *r, int i, gc_op_desc *d);
void gc_registry_impl(const gc_registry *r, int op, int j, gc_impl_desc *d);

/* An empty graph. `origin` names it in messages (a file path; may be NULL). */
gc_graph *gc_graph_new(const char *origin);
void gc_graph_free(gc_graph *g);

/* The opset version the graph imports for `domain` ("" is ONNX's default);
 * -1 when it imports none. */
int64_t gc_graph_opset_version(const gc_graph *g, const char *domain);
/* Sets the opset version the graph imports for `domain`. */
int gc_graph_set_opset(gc_graph *g, const char *domain, int64_t version, gc_error *err);

/* A graph input. dims[i] < 0 is a dynamic dimension; `dim_names` (may be
 * NULL, or hold NULLs) gives symbolic names for messages and --shape. */
int gc_graph_add_input(gc_graph *g, const char *name, gc_dtype dtype, int32_t rank,
		       const int64_t *dims, const char *const *dim_names, gc_error *err);
/* A constant (initializer). The data is copied. */
int gc_graph_add_constant(gc_graph *g, const char *name, const gc_tensor *value, gc_error *err);
/* A node. Inputs are names of tensors ("" for an absent optional input);
 * outputs are names of new tensors. Attributes are deep-copied. A domain
 * other than "" / "ai.onnx" makes the node a custom node. */
int gc_graph_add_node(gc_graph *g, const char *name, const char *domain, const char *op_type,
		      int32_t n_in, const char *const *inputs, int32_t n_out,
		      const char *const *outputs, int32_t n_attr, const gc_attr *attrs,
		      gc_error *err);
/* A subgraph for a control-flow node's graph attribute (If's branches, a
 * Loop's or Scan's body): owned by g and freed with it; the names it reads
 * without defining them are g's tensors (or those of g's own enclosing
 * graphs). Build it like any graph; pass it as a GC_ATTR_GRAPH attribute's
 * v.g. NULL when out of memory. */
gc_graph *gc_graph_add_subgraph(gc_graph *g, const char *origin);
/* Marks a tensor as a graph output. */
int gc_graph_add_output(gc_graph *g, const char *name, gc_error *err);
/* Type/shape information about a tensor, as ONNX value_info gives it:
 * used to check inferred shapes. */
int gc_graph_set_value_info(gc_graph *g, const char *name, gc_dtype dtype, int32_t rank,
			    const int64_t *dims, gc_error *err);

/* Loads an ONNX model file (external data resolved next to it). */
int gc_onnx_load(const char *path, gc_graph **out, gc_error *err);
/* Loads an ONNX model from memory (the buffer is only read during the
 * call). `origin` names it in messages. A model whose tensors refer to
 * external data is refused: there is no folder to resolve it in. */
int gc_onnx_load_mem(const void *buf, size_t len, const char *origin, gc_graph **out,
		     gc_error *err);
/* Reads an ONNX TensorProto file (.pb) into a tensor the caller releases
 * with gc_tensor_release. `name` (may be NULL) receives the tensor's name,
 * malloc'd. */
int gc_pb_read(const char *path, gc_tensor *out, char **name, gc_error *err);
/* Reads a value of type dtype from a .pb file: for a sequence type an
 * ONNX SequenceProto, for an optional type an OptionalProto (as in ONNX's
 * test data), a TensorProto otherwise. The element type is checked against
 * dtype's (when dtype says one). Release with gc_tensor_release. */
int gc_pb_read_value(const char *path, gc_dtype dtype, gc_tensor *out, gc_error *err);

/* Reading what a graph holds (for tools). */
int gc_graph_num_inputs(const gc_graph *g);
int gc_graph_num_outputs(const gc_graph *g);
int gc_graph_num_nodes(const gc_graph *g);
const char *gc_graph_input_name(const gc_graph *g, int i);
const char *gc_graph_output_name(const gc_graph *g, int i);
/* Whether input i also has an initializer: a default value, used (as a
 * constant) unless the caller drops it to supply the input itself. */
int gc_graph_input_has_default(const gc_graph *g, int i);
int gc_graph_drop_default(gc_graph *g, const char *name, gc_error *err);
/* The declared type and shape of a tensor (dims < 0: dynamic). */
int gc_graph_tensor_info(const gc_graph *g, const char *name, gc_tensor *info);
/* The symbolic name of dimension d of a tensor (ONNX dim_param), or NULL
 * (a fixed or unnamed dimension). Borrowed from g. */
const char *gc_graph_dim_name(const gc_graph *g, const char *name, int d);
/* Node i: its name, domain and op type (borrowed). */
void gc_graph_node(const gc_graph *g, int i, const char **name, const char **domain,
		   const char **op_type);

/* Whether graphcc runs (domain, op_type) itself: a built-in op, or one a
 * lowering pass replaces by built-in ops (Gradient). */
int gc_op_is_builtin(const char *domain, const char *op_type);

typedef struct gc_shape_override {
	const char *name; /* a graph input, or a symbolic dim name */
	int32_t rank;	  /* for an input: its full shape; for a dim name: 1 */
	int64_t dims[GC_MAX_RANK];
} gc_shape_override;

/* A graph input's value, known when compiling (see input_values). */
typedef struct gc_input_value {
	const char *name;
	const gc_tensor *value;
} gc_input_value;

typedef struct gc_compile_options {
	size_t size; /* sizeof(gc_compile_options), or 0 (see gc_load_options) */
	const gc_shape_override *shapes;
	int32_t n_shapes;
	/* Packages custom nodes bind to (may be NULL: no custom nodes). */
	const gc_registry *registry;
	/* The backend the program is built for (custom nodes are bound and
	 * built-in nodes prepared for it); NULL: the default one,
	 * "Interpreter". A name this build does not have is refused. */
	const char *backend;
	/* The values the program will run on, when the caller knows them (as
	 * `graphcc run` does): shapes that depend on values -- a Reshape's
	 * shape computed from an input, NonZero -- are worked out from them.
	 * Such a program must then be run on these same values. The nodes
	 * still run at run time; only constants are folded away. */
	const gc_input_value *input_values;
	int32_t n_input_values;
	/* Skip constant folding (for checking the passes). */
	int no_fold;
	/* Skip the graph passes (identity elimination, BatchNormalization
	 * folding, fusions, dead-node removal). */
	int no_optimize;
	/* Told what each pass changed (may be NULL). */
	void (*pass_report)(void *user, const char *pass, int32_t changed);
	void *pass_user;
	/* Bind every custom node to the implementation of this flavour id
	 * (NULL: the one selection picks). Verify, shape inference and
	 * selection still run; an operation without that flavour for the
	 * backend is an error naming the flavours it has. */
	const char *flavour;
	/* Non-zero: a graph input's dimension of unknown size (a symbolic
	 * one such as ONNX's dim_param "N", or -1) that `shapes` does not fix
	 * stays dynamic: the program runs on any size there (the input's
	 * description shows -1), the nodes it reaches are prepared when a
	 * session first sees a new input shape, and the session keeps what
	 * it planned per shape. Zero: such a dimension is refused. (graphcc
	 * compile --dynamic.) */
	int dynamic_dims;
} gc_compile_options;

/*
 * Checks, infers every tensor's type and shape, folds constants and plans
 * memory. The graph is not changed and may be freed afterwards.
 */
int gc_compile(const gc_graph *g, const gc_compile_options *opt, gc_program **out,
	       gc_error *err);

/* Saves a compiled program as a .gcb file (written to a temporary name and
 * renamed into place). Custom nodes keep their binding; every kernel
 * library is recorded with its SHA-256. */
int gc_program_save(const gc_program *p, const char *path, gc_error *err);

/* Describes a compiled program: node count, arena bytes, tensor bytes. */
typedef struct gc_program_stats {
	int32_t n_nodes;
	int32_t n_tensors;
	uint64_t arena_bytes;	   /* peak of the activation arena */
	uint64_t tensor_bytes;	   /* sum of all activation tensors, no reuse */
	uint64_t constant_bytes;
} gc_program_stats;
void gc_program_get_stats(const gc_program *p, gc_program_stats *st);

#ifdef __cplusplus
}
#endif

/* ---- begin: graphcc dot and run --compare-flavours (lib/flavours.c) ---- */
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Tensor t of graph node i's inputs (is_output 0) or outputs (1): its name
 * ("" for an absent optional input), or NULL past the node's last one.
 * *is_constant (may be NULL) is set when the tensor is an initializer. */
const char *gc_graph_node_io(const gc_graph *g, int i, int is_output, int t, int *is_constant);

/* What gc_flavours_compare found over a whole run. */
typedef struct gc_flavours_summary {
	int32_t n_custom;   /* custom nodes looked at */
	int32_t n_compared; /* of them, with two or more flavours that ran */
	int32_t n_failed;   /* flavours that failed (each reported): a library or symbol
			     * that does not load, a kernel writing into its inputs */
	int32_t n_declined; /* flavours that returned a failure status (kernel, init
			     * or scratch function): not for this node; reported */
	/* The largest difference between two flavours of one node: the largest
	 * absolute difference of any element, and that pair's largest
	 * relative one, |a - b| / max(|a|, |b|). */
	double max_abs, max_rel;
	char node[256];
	char flavour_a[128], flavour_b[128];
	/* Appended: */
	double tolerance;    /* the one used */
	int32_t n_disagree;  /* pairs of flavours that disagree beyond it (each
			      * reported), a NaN where the other is a number included */
	int32_t n_invalid;   /* flavours not valid for a node (their accepts: rules):
			      * not run there; reported */
	int32_t n_overrun;   /* flavours that wrote outside their outputs (guard
			      * zones), counted in n_failed too */
} gc_flavours_summary;

/*
 * Runs session s once more (its inputs set, as for gc_session_run), node by
 * node. Just before each custom node, runs every implementation of the
 * node's operation for the node's backend on copies of the node's inputs as
 * they are at that point (each with its own outputs, scratch and init /
 * destroy), compares their outputs pairwise and writes what it found to
 * `report` (may be NULL): per node, each pair's largest absolute and
 * relative difference and the worst pair with the element where it is.
 * The implementations come from reg when it holds the binding's manifest
 * (reg may be NULL), else from that manifest (gc_node_desc.manifest)
 * loaded again. `sum` (may be NULL) receives the summary.
 * A flavour whose kernel, init or scratch function returns a failure status
 * has declined the node (verify is per operation, so that is how a flavour
 * says a node is not for it): reported with its reason, not compared, not
 * an error. A flavour fails when its library or symbols do not resolve or
 * its kernel writes into its inputs.
 * Only flavours valid for the node run: one whose `accepts:` rules in the
 * manifest reject the node's inputs is reported and skipped. Each flavour's
 * outputs lie between guard zones; a kernel that writes into them fails.
 * Two flavours disagree when an element differs by more than
 * tolerance x max(1, |a|, |b|), or is NaN in one and not the other
 * (tolerance <= 0: 1e-4).
 * Returns GC_ECRASH when a flavour wrote outside its outputs or flavours
 * disagree, else GC_EKERNEL when a flavour failed (err naming the node,
 * flavour, library and why) -- the run and the comparisons go on to the
 * end either way -- else 0; or the error of a node of the run itself, as
 * gc_session_run.
 */
int gc_flavours_compare(const gc_registry *reg, gc_session *s, FILE *report, double tolerance,
			gc_flavours_summary *sum, gc_error *err);

#ifdef __cplusplus
}
#endif
/* ---- end: graphcc dot and run --compare-flavours ---- */

/* ---- begin: ONNX export (lib/onnx-export.c) ---- */
#ifdef __cplusplus
extern "C" {
#endif

/* Writes g as an ONNX model file (written to a temporary name and renamed
 * into place): opset imports, typed inputs, initializers, nodes in
 * topological order with their attributes, outputs. Graphs whose nodes hold
 * subgraph attributes are refused. */
int gc_onnx_save(const gc_graph *g, const char *path, gc_error *err);

#ifdef __cplusplus
}
#endif
/* ---- end: ONNX export ---- */

/* ---- begin: package self-tests (lib/selftest.c, graphcc test-package) ---- */
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_selftest_counts {
	int passed, failed;
} gc_selftest_counts;

/*
 * Runs the `tests:` of every operation of the manifest (only the one named
 * `only_op`, by name or type, when non-NULL) for every implementation of
 * every backend this build has, plus the checks nobody has to ask for
 * (verify accepts the case, inferred outputs match what the kernel fills,
 * guard zones, determinism, flavours agree, two threads). One line per check
 * on out. Returns 0 when the package loaded (look at counts), else the
 * error (err says why).
 */
int gc_selftest_package(const char *manifest, const char *only_op, FILE *out,
			gc_selftest_counts *counts, gc_error *err);

/* Checks the `tests:` of every operation of the manifest without running
 * anything (graphcc check): 0, or the first mistake (file:line:column and
 * key in err). Loading a package to run models does not look at them. */
int gc_selftest_check(const char *manifest, gc_error *err);

#ifdef __cplusplus
}
#endif
/* ---- end: package self-tests ---- */
#endif
