/* Meaning checks of a program read from a .gcb file: past every range
 * check of the reader, the program must make sense as a program (see
 * gc_gcb_check_program), so that the executor and the kernels can trust it. */
#ifndef GC_GCB_CHECK_H
#define GC_GCB_CHECK_H

#include <graphcc/runtime.h>

#include "program-impl.h"

/*
 * Checks p (its nodes read and prepared; not its subprograms, each checked
 * when read): each tensor is written at most once, by one output of one
 * node, never a program input or a constant; every tensor a node or the
 * program's outputs read exists by then (a program input, a constant, or an
 * earlier node's output); the tensors a control-flow node passes to its
 * subgraphs are there; program inputs are distinct; the arena fits
 * GRAPHCC_MAX_BYTES; and no two arena blocks (tensors, node scratch) whose
 * lifetimes overlap share bytes, except a kernel's in-place output on the
 * input it replaces, as the memory planner places them. Messages name the
 * file (path) and the node or tensor.
 */
int gc_gcb_check_program(const gc_program *p, const char *path, gc_error *err);

#endif
