/*
 * The runtime's insides that the compiler (lib/) builds programs with: the
 * one internal header lib/ includes from runtime/ (besides the public
 * <graphcc/runtime.h>). It is the contract between the two halves; what is
 * not reachable from here, lib/ does not use. Nothing here is exported from
 * libgraphcc-runtime.so (see libgraphcc-runtime.map): lib/ links the
 * runtime's static archive.
 *
 *   backend.h       the backends of this build (name, op table, prepare,
 *                   memory, threading): manifests, selection, binding
 *   program-impl.h  a program: tensors, storage kinds, nodes (the compiler
 *                   fills one; lib/plan-memory.c plans its arena)
 *   liveness.h      tensor lifetimes, in-place chains and Concat inputs at
 *                   their slices (the plan's and the .gcb loader's one
 *                   definition)
 *   kernel.h ops.h  built-in ops: the op table, prepare/run, kernel context
 *                   (binding prepares nodes; folding runs them)
 *   custom.h        custom nodes: the binding record and the one layer that
 *                   calls into a package (gc_custom_call_*)
 *   dynlib.h        loading packages' libraries and checking their ABI
 *   run-hooks.h     the executor's loop with hooks (--compare-flavours)
 *   gcb.h sha256.h  the .gcb format (lib/gcb-write.c writes what the
 *                   runtime's gcb-read.c reads)
 *   value.h kernels/value-impl.h  sequences, optionals, element access
 *   kernels/control.h kernels/training.h kernels/kutil.h
 *                   control flow bodies, training ops, kernel helpers the
 *                   passes reuse
 *   alloc.h pool.h strpool.h fileio.h options.h crash.h
 *                   allocation (OOM injection), arenas, files and limits,
 *                   options structs, crash context for package calls
 *   api-check.h     the API's argument checks (GC_ARG_NONNULL, ...)
 */
#ifndef GC_RUNTIME_BUILD_H
#define GC_RUNTIME_BUILD_H

#include <graphcc/runtime.h>

#include "alloc.h"
#include "api-check.h"
#include "backend.h"
#include "crash.h"
#include "custom.h"
#include "dynlib.h"
#include "fileio.h"
#include "gcb.h"
#include "kernel.h"
#include "kernels/control.h"
#include "kernels/kutil.h"
#include "kernels/training.h"
#include "kernels/value-impl.h"
#include "liveness.h"
#include "ops.h"
#include "options.h"
#include "pool.h"
#include "program-impl.h"
#include "run-hooks.h"
#include "sha256.h"
#include "strpool.h"
#include "value.h"

#endif
