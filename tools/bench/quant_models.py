#!/usr/bin/python3
"""Quantized bench models, made from the float ones (not part of make test).

    quant_models.py SRC_MODEL.onnx OUT_DIR

mlp-dynq / mlp64-dynq: the torch MLP (784-1024-1024-10, Gemm + Relu) made
dynamically quantized as ONNX Runtime's quantize_dynamic writes it: each
Gemm(x, W, b) becomes DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q,
x_zero_point) -> Cast(float) -> Mul(x_scale * W_scale) -> Add(b), with W_q
int8, per tensor, symmetric (W_scale = max|W| / 127, computed in NumPy).
Writes OUT_DIR/model.onnx and OUT_DIR/input.npy (the float model's input).
"""
import os
import sys

import numpy as np


def dynq(src, out_dir):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes, new_inits = [], []
    for n in g.node:
        if n.op_type != "Gemm":
            nodes.append(n)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or \
                attrs.get("beta", 1.0) != 1.0:
            sys.exit("quant_models.py: Gemm %s is not x W^T + b" % n.name)
        w = inits[n.input[1]]
        w = w.T if attrs.get("transB", 0) else w  # [in, out]
        ws = np.float32(np.abs(w).max() / 127.0)
        wq = np.clip(np.rint(w / ws), -127, 127).astype(np.int8)
        p = n.name or n.output[0]
        new_inits += [numpy_helper.from_array(wq, p + "_Wq"),
                      numpy_helper.from_array(np.array(0, np.int8), p + "_Wzp"),
                      numpy_helper.from_array(np.array(ws, np.float32), p + "_Ws")]
        x, y = n.input[0], n.output[0]
        nodes += [
            helper.make_node("DynamicQuantizeLinear", [x], [p + "_xq", p + "_xs", p + "_xz"],
                             name=p + "_dql"),
            helper.make_node("MatMulInteger", [p + "_xq", p + "_Wq", p + "_xz", p + "_Wzp"],
                             [p + "_acc"], name=p + "_mmi"),
            helper.make_node("Cast", [p + "_acc"], [p + "_accf"], name=p + "_cast",
                             to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_xs", p + "_Ws"], [p + "_s"], name=p + "_scale"),
            helper.make_node("Mul", [p + "_accf", p + "_s"], [p + "_deq"], name=p + "_mul"),
            helper.make_node("Add", [p + "_deq", n.input[2]] if len(n.input) > 2 else
                             [p + "_deq", p + "_zero"], [y], name=p + "_bias"),
        ]
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    os.makedirs(out_dir, exist_ok=True)
    tmp = os.path.join(out_dir, "model.onnx.tmp")
    onnx.save(m, tmp)
    src_in = os.path.join(os.path.dirname(src), "input.npy")
    np.save(os.path.join(out_dir, "input.npy"), np.load(src_in))
    os.replace(tmp, os.path.join(out_dir, "model.onnx"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dynq(sys.argv[1], sys.argv[2])
