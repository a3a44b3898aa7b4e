#!/usr/bin/python3
"""Quantized bench models, made from the float ones (not part of make test).

    quant_models.py SRC_MODEL.onnx OUT_DIR                 (mlp*-dynq, transformer-dynq)
    quant_models.py --qdq GRAPHCC SRC_MODEL.onnx OUT_DIR   (resnet18-qdq)

mlp-dynq / mlp64-dynq: the torch MLP (784-1024-1024-10, Gemm + Relu) made
dynamically quantized as ONNX Runtime's quantize_dynamic writes it: each
Gemm(x, W, b) becomes DynamicQuantizeLinear(x) -> MatMulInteger(x_q, W_q,
x_zero_point) -> Cast(float) -> Mul(x_scale * W_scale) -> Add(b), with W_q
int8, per tensor, symmetric (W_scale = max|W| / 127, computed in NumPy).
transformer-dynq: the bench TransformerEncoderLayer the same way: its Gemm
(out_proj) as above, each MatMul with a constant 2-D weight (in_proj, the
two feed-forward layers) as DynamicQuantizeLinear -> MatMulInteger -> Cast
-> Mul(x_scale * W_scale); the attention MatMuls (two computed inputs) stay
float, as quantize_dynamic leaves them by default.
Writes OUT_DIR/model.onnx and OUT_DIR/input.npy (the float model's input).

resnet18-qdq: the torch resnet18 in QDQ form, as ONNX Runtime's static
quantizer writes it: QuantizeLinear/DequantizeLinear (uint8, per tensor) on
the input and on every Relu, MaxPool and Add output and every Conv output no
Relu follows; Conv weights int8 per output channel (DequantizeLinear axis 0),
biases int32 with scale x_scale * w_scale. Activation ranges are calibrated
on the model's input.npy from `graphcc run --no-optimize --dump-dir` of the
float model (every tensor), scales computed in NumPy.
"""
import os
import sys

import numpy as np


def _weight_q(w, p, new_inits):
    """W [in, out] as int8, per tensor, symmetric: the initializers' names."""
    from onnx import numpy_helper
    ws = np.float32(np.abs(w).max() / 127.0)
    wq = np.clip(np.rint(w / ws), -127, 127).astype(np.int8)
    new_inits += [numpy_helper.from_array(wq, p + "_Wq"),
                  numpy_helper.from_array(np.array(0, np.int8), p + "_Wzp"),
                  numpy_helper.from_array(np.array(ws, np.float32), p + "_Ws")]


def _dynq_matmul(n, w, new_inits):
    """MatMul(x, W) with a constant 2-D W, as quantize_dynamic writes it:
    DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul(x_scale * W_scale)."""
    from onnx import TensorProto, helper
    p = n.name or n.output[0]
    _weight_q(w, p, new_inits)
    x, y = n.input[0], n.output[0]
    return [
        helper.make_node("DynamicQuantizeLinear", [x], [p + "_xq", p + "_xs", p + "_xz"],
                         name=p + "_dql"),
        helper.make_node("MatMulInteger", [p + "_xq", p + "_Wq", p + "_xz", p + "_Wzp"],
                         [p + "_acc"], name=p + "_mmi"),
        helper.make_node("Cast", [p + "_acc"], [p + "_accf"], name=p + "_cast",
                         to=TensorProto.FLOAT),
        helper.make_node("Mul", [p + "_xs", p + "_Ws"], [p + "_s"], name=p + "_scale"),
        helper.make_node("Mul", [p + "_accf", p + "_s"], [y], name=p + "_mul"),
    ]


def dynq(src, out_dir):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes, new_inits = [], []
    for n in g.node:
        if n.op_type == "MatMul" and n.input[1] in inits and inits[n.input[1]].ndim == 2:
            nodes += _dynq_matmul(n, inits[n.input[1]], new_inits)
            continue
        if n.op_type != "Gemm":
            nodes.append(n)
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or \
                attrs.get("beta", 1.0) != 1.0:
            sys.exit("quant_models.py: Gemm %s is not x W^T + b" % n.name)
        w = inits[n.input[1]]
        w = w.T if attrs.get("transB", 0) else w  # [in, out]
        p = n.name or n.output[0]
        _weight_q(w, p, new_inits)
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


def _ranges(graphcc, src, work):
    """{tensor name: (min, max)} of every tensor of the float model's run."""
    import subprocess
    dump, out = os.path.join(work, "calib-dump"), os.path.join(work, "calib-out")
    src_in = os.path.join(os.path.dirname(src), "input.npy")
    subprocess.run([graphcc, "run", src, "--no-optimize", "--input", "input=" + src_in,
                    "--dump-dir", dump, "--output-dir", out], check=True,
                   stdout=subprocess.DEVNULL)
    ranges = {}
    with open(os.path.join(dump, "tensors.tsv")) as f:
        next(f)
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if cols[1].endswith(".npy") and cols[2] == "float32":
                a = np.load(os.path.join(dump, cols[1]))
                ranges[cols[0]] = (float(a.min()) if a.size else 0.0,
                                   float(a.max()) if a.size else 0.0)
    return ranges


def qdq(graphcc, src, out_dir):
    import onnx
    from onnx import helper, numpy_helper
    os.makedirs(out_dir, exist_ok=True)
    ranges = _ranges(graphcc, src, out_dir)
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    act = {}  # tensor -> (scale, zero point)

    def qparams(t):
        lo, hi = ranges[t]
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        s = np.float32((hi - lo) / 255.0 or 1.0)
        return s, np.uint8(np.clip(np.rint(-lo / np.float64(s)), 0, 255))

    todo = [g.input[0].name]
    for n in g.node:
        if n.op_type in ("Relu", "MaxPool", "Add"):
            todo.append(n.output[0])
        elif n.op_type == "Conv" and not all(r.op_type == "Relu"
                                             for r in readers.get(n.output[0], [])):
            todo.append(n.output[0])
    new_inits, nodes = [], []
    for t in todo:
        act[t] = qparams(t)
        new_inits += [numpy_helper.from_array(np.array(act[t][0]), t + "_s"),
                      numpy_helper.from_array(np.array(act[t][1]), t + "_z")]
    renamed = {t: t + "_dq" for t in todo}

    def qdq_nodes(t):
        return [helper.make_node("QuantizeLinear", [t, t + "_s", t + "_z"], [t + "_q"]),
                helper.make_node("DequantizeLinear", [t + "_q", t + "_s", t + "_z"], [t + "_dq"])]

    nodes += qdq_nodes(g.input[0].name)
    for n in g.node:
        ins = [renamed.get(i, i) for i in n.input]
        if n.op_type == "Conv":
            w = inits[n.input[1]]
            ws = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127).astype(np.float32)
            ws[ws == 0] = 1
            wq = np.clip(np.rint(w / ws.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
            p = n.name or n.output[0]
            xs = act[n.input[0]][0]
            new_inits += [numpy_helper.from_array(wq, p + "_wq"),
                          numpy_helper.from_array(ws, p + "_ws"),
                          numpy_helper.from_array(np.zeros(len(ws), np.int8), p + "_wz")]
            nodes.append(helper.make_node("DequantizeLinear", [p + "_wq", p + "_ws", p + "_wz"],
                                          [p + "_wd"], axis=0))
            ins[1] = p + "_wd"
            if len(n.input) > 2:
                bs = (np.float32(xs) * ws).astype(np.float32)
                bq = np.rint(inits[n.input[2]] / bs.astype(np.float64)).astype(np.int32)
                new_inits += [numpy_helper.from_array(bq, p + "_bq"),
                              numpy_helper.from_array(bs, p + "_bs"),
                              numpy_helper.from_array(np.zeros(len(bs), np.int32), p + "_bz")]
                nodes.append(helper.make_node("DequantizeLinear",
                                              [p + "_bq", p + "_bs", p + "_bz"], [p + "_bd"],
                                              axis=0))
                ins[2] = p + "_bd"
        n2 = helper.make_node(n.op_type, ins, list(n.output), name=n.name)
        n2.attribute.extend(n.attribute)
        nodes.append(n2)
        if n.output and n.output[0] in act:
            nodes += qdq_nodes(n.output[0])
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(new_inits)
    used = {i for n in g.node for i in n.input}
    keep = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    tmp = os.path.join(out_dir, "model.onnx.tmp")
    onnx.save(m, tmp)
    src_in = os.path.join(os.path.dirname(src), "input.npy")
    np.save(os.path.join(out_dir, "input.npy"), np.load(src_in))
    os.replace(tmp, os.path.join(out_dir, "model.onnx"))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--qdq":
        qdq(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 3:
        dynq(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)
