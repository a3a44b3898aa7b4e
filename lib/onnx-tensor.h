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
int gc_onnx_tensor(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
		   gc_tensor *out, gc_error *err);

/* Big external data (GC_ONNX_MAP_MIN bytes or more, at a 64-byte aligned
 * offset) is mapped into map_pool instead (*mapped set): out->data then
 * belongs to the pool's mapping, and is not released. */
#define GC_ONNX_MAP_MIN ((uint64_t)1 << 20)
int gc_onnx_tensor_mapped(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
			  gc_pool *map_pool, gc_tensor *out, bool *mapped, gc_error *err);

#endif
