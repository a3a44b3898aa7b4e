/* ONNX TensorProto -> gc_tensor, shared by the importer and .pb inputs. */
#ifndef GC_ONNX_TENSOR_H
#define GC_ONNX_TENSOR_H

#include <graphcc/runtime.h>

#include "onnx.pb-c.h"

/*
 * Converts a TensorProto. `base_dir` is where external data is resolved (NULL
 * refuses external data); `where` names the tensor's origin in messages (a
 * file, "initializer 'w' of model.onnx"). out->data is gc_malloc'd; release
 * with gc_tensor_release.
 */
int gc_onnx_tensor(const Onnx__TensorProto *tp, const char *base_dir, const char *where,
		   gc_tensor *out, gc_error *err);

#endif
