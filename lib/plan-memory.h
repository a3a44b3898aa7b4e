/* The compiler's last step: the memory plan of a program. */
#ifndef GC_PLAN_MEMORY_H
#define GC_PLAN_MEMORY_H

#include "../runtime/build.h"

/*
 * Plans the arena: gives each ARENA tensor an offset such that tensors whose
 * lifetimes overlap do not share bytes (lifetime: from the node that writes
 * it, or the start for inputs, to its last reader, or the end for outputs),
 * plus each node's scratch, every block aligned to `align` (the backend's
 * arena_align, a power of two). In-place outputs take their input's bytes
 * and Concat inputs their slice of the output (gc_share_memory), which is
 * then one block live from its first member's write. Fills offsets,
 * arena_bytes and tensor_bytes.
 */
int gc_program_plan_memory(gc_program *p, uint32_t align, gc_error *err);

#endif
