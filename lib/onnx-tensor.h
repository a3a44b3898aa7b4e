/* ONNX TensorProto -> gc_tensor, shared by the importer and .pb inputs. */
#ifndef GC_ONNX_TENSOR_H
#define GC_ONNX_TENSOR_H

#include <graphcc/runtime.h>

#include "onnx.pb-c.h"
#include "../runtime/build.h"

/*
 * Converts a TensorProto. `base_dir` is where external data is resolved (NULL
 * refuses external data); `where` names the tensor's origin in messages (a
 * file, "initializer 'w' of model.onnx"). out->data is gc_malloc'd; release
 * with gc_tensor_release.
 */
/* Describes an ONNX element type graphcc has no tensors for, for messages:
 * "float4e2m1 (23), which graphcc does not support" or "unknown (99)". */
const char *gc_onnx_type_text(int32_t code, char *buf, size_t len);

/* int4/uint4 between the files' form (two elements per byte, the first in
 * the low nibble) and graphcc's (one element per byte, sign-extended for
 * int4): unpack4 spreads the (n + 1) / 2 packed bytes at the start of data
 * over its n bytes, in place; pack4 writes (n + 1) / 2 bytes. */
void gc_onnx_unpack4(gc_dtype dt, uint8_t *data, int64_t n);
void gc_onnx_pack4(const uint8_t *elems, int64_t n, uint8_t *packed);
int gc_onnx_tensor(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
		   gc_tensor *out, gc_error *err);

/* With map_pool, big tensors (GC_ONNX_MAP_MIN bytes or more) are kept by
 * the pool (*mapped set: out->data belongs to it, and is not released):
 * external data at a 64-byte aligned offset mapped, data held in the model
 * itself read into a block of the pool's own (gc_pool_big), which the
 * graphs and programs made from it share rather than copy. */
#define GC_ONNX_MAP_MIN ((uint64_t)1 << 20)
int gc_onnx_tensor_mapped(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
			  gc_pool *map_pool, gc_tensor *out, bool *mapped, gc_error *err);

#endif
