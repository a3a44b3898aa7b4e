/*
 * The .gcb compiled-program format, shared by the writer (lib/gcb-write.c)
 * and the reader (runtime/gcb-read.c). docs/gcb-format.md describes it for
 * people; this header is the definition.
 *
 * All integers are little-endian. Layout:
 *
 *   header (GCB_HEADER_SIZE bytes)
 *   META section: everything but the weights, as a stream of records
 *   padding to a 4096-byte boundary
 *   WEIGHTS section: constant tensors, each at a 64-byte aligned offset,
 *                    so the file can be mapped and used without copying
 *
 * The header holds the sizes and XXH3-64 checksums of both sections; the
 * META section holds the SHA-256 of every kernel library the program uses.
 */
#ifndef GC_GCB_H
#define GC_GCB_H

#include <stdint.h>

#define GCB_MAGIC "GCBPROG\0"
#define GCB_FORMAT_VERSION 4
/* The oldest format this reader reads: 2 lacks only the quantized edges
 * of custom bindings (3), 3 only the packed weights (4), so each reads as a
 * program without them. */
#define GCB_FORMAT_OLDEST 2
#define GCB_HEADER_SIZE 128
#define GCB_WEIGHTS_ALIGN 4096
#define GCB_TENSOR_ALIGN 64

typedef struct gcb_header {
	char magic[8];
	uint32_t format_version;
	uint32_t header_size;
	char graphcc_version[32];
	uint64_t file_size;
	uint64_t meta_offset, meta_size, meta_xxh3;
	uint64_t weights_offset, weights_size, weights_xxh3;
	uint8_t reserved[128 - 8 - 4 - 4 - 32 - 8 - 6 * 8];
} gcb_header;

_Static_assert(sizeof(gcb_header) == GCB_HEADER_SIZE, "gcb header size");

/* META records, in this order:
 *   u32 n_strings-bytes, the string table (NUL-terminated strings; string
 *       references are u32 offsets into it, 0xffffffff for none)
 *   u32 n_libraries, each: str path, u8 sha256[32]
 *   a program:
 *     u32 n_tensors, each: str name, u32 dtype, i32 rank, i64 dims[rank],
 *         u32 storage (0 arena, 1 const, 2 dynamic), u64 offset, u64 nbytes
 *         (dtype may be a sequence/optional type and rank -1, for dynamic);
 *         (format 4) a constant held only in packed form has offset GCB_PACKED_ONLY,
 *         then str key, u64 packed offset, u64 packed nbytes
 *     u32 n_inputs, i32 tensor[]; u32 n_outputs, i32 tensor[]
 *     u64 arena_bytes, u64 tensor_bytes, u64 const_bytes
 *     i32 n_formal, i32 outer_slot[n_inputs - n_formal]
 *     u32 n_nodes, each:
 *         str name, str domain, str op_type, i32 opset,
 *         u32 n_in, i32 in[], u32 n_out, i32 out[],
 *         u64 scratch_bytes, u64 scratch_offset,
 *         u32 n_attr, attrs (str name, u32 type, i64 n, payload by type),
 *         u32 has_custom, custom binding when 1 (see gcb-write.c; format 3
 *         adds flag 4 and, after the outputs, per input then output: u32
 *         CustomOpDataType, f32 scale, i32 offset; format 4 adds flag 8, a
 *         binding made per input shape: see docs/gcb-format.md),
 *         u32 flags (1: prepared at run time; 2, format 4: packed forms
 *         follow the subprograms), i32 n_explicit_in,
 *         u32 n_sub, n_sub programs (the node's subgraphs, nested),
 *         when flags has 2: u32 n_packed, each: str key, i32 input, u32 replaces,
 *         u64 offset, u64 nbytes (packed forms of its constant inputs,
 *         kernel.h's gc_packed)
 */
#define GCB_PACKED_ONLY UINT64_MAX
#define GCB_NO_STRING 0xffffffffu

#endif
