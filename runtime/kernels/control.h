/*
 * Control flow: ops that run subgraphs (control.c), and sequence and
 * optional values (sequence.c). X(Name, min_in, max_in, min_out, max_out).
 *
 * A control-flow node's subgraphs are compiled by the compiler into
 * subprograms (node->sub, in the order gc_control_sub_names gives) before
 * its prepare runs; the subprograms' inputs are their own, typed by
 * gc_control_formal, then the enclosing graph's tensors they read by name,
 * which the node takes as extra inputs (after node->n_explicit_in). At run
 * time the node runs them in sessions of their own (k->sub), binding their
 * inputs to its tensors without copying.
 *
 * Optional's `type` attribute (an ONNX TypeProto) is imported as an INT
 * attribute holding the gc_dtype code of that type.
 */
#ifndef GC_K_CONTROL_H
#define GC_K_CONTROL_H

#include <stdbool.h>

#include "../kernel.h"

#define GC_OPS_CONTROL(X)                                                                          \
	X(If, 1, 1, 1, GC_ARITY_MAX)                                                               \
	X(Loop, 0, GC_ARITY_MAX, 1, GC_ARITY_MAX)                                                  \
	X(Scan, 0, GC_ARITY_MAX, 1, GC_ARITY_MAX)                                                  \
	X(SequenceMap, 1, GC_ARITY_MAX, 1, GC_ARITY_MAX)

#define GC_OPS_SEQUENCE(X)                                                                         \
	X(SequenceEmpty, 0, 0, 1, 1)                                                               \
	X(SequenceConstruct, 1, GC_ARITY_MAX, 1, 1)                                                \
	X(SequenceInsert, 2, 3, 1, 1)                                                              \
	X(SequenceAt, 2, 2, 1, 1)                                                                  \
	X(SequenceErase, 1, 2, 1, 1)                                                               \
	X(SequenceLength, 1, 1, 1, 1)                                                              \
	X(SplitToSequence, 1, 2, 1, 1)                                                             \
	X(ConcatFromSequence, 1, 1, 1, 1)                                                          \
	X(Optional, 0, 1, 1, 1)                                                                    \
	X(OptionalHasElement, 0, 1, 1, 1)                                                          \
	X(OptionalGetElement, 1, 1, 1, 1)

struct gc_program;

/* Whether op (a gc_op) holds subgraphs. */
bool gc_op_is_control(int op);
/* Whether op takes inputs whose shapes are only known at run time as they
 * are (control flow, sequences, optionals); any other op reading such a
 * tensor is prepared again at run time. */
bool gc_op_takes_dynamic(int op);
/* Whether op takes sequence and optional values (those above, Identity). */
bool gc_op_takes_values(int op);

/* The names of node n's subgraph attributes, in subprogram order. */
int32_t gc_control_sub_names(const gc_node *n, const char *const **names);

/*
 * Compile time: the types of subgraph s's n_formal inputs from the node's
 * inputs (the first n->n_explicit_in), into formal (rank GC_RANK_DYNAMIC:
 * a shape only known at run time). Checks what prepare would check of the
 * inputs; errors name the node.
 */
int gc_control_formal(gc_kctx *k, const gc_node *n, gc_tensor *const *in, int32_t s,
		      int32_t n_formal, gc_tensor *formal);
/*
 * After subgraph s was compiled (sub) with formal: values the node carries
 * from one iteration to the next whose subgraph output does not keep their
 * shape become dynamic in formal, and *again says to compile it once more.
 * Errors (an output of another type than the value it carries) name the
 * node.
 */
int gc_control_refine(gc_kctx *k, const gc_node *n, int32_t s, const struct gc_program *sub,
		      gc_tensor *formal, bool *again);

/* Identity of a sequence or optional (gc_prepare_Identity hands it over). */
int gc_prepare_value_identity(gc_kctx *k, gc_node *n, gc_tensor *const *in,
			      gc_tensor *const *out);

/*
 * Shared by control.c and sequence.c, run time: out (output j of the node
 * k runs) becomes a copy of src: bytes into an arena tensor of the same
 * shape, a dynamic tensor shaped by gc_kout_shape, a sequence or optional
 * copied into the session's container. `what` names src in errors.
 */
int gc_kout_copy(gc_kctx *k, int j, gc_tensor *out, const gc_tensor *src, const char *what);

#endif
