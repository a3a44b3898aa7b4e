#!/usr/bin/python3
"""Models and inputs for the test.kbugs package (kbugs.h), one per bug:

    kbugs_models.py OUTDIR [--domain test.kbugs|test.kbugs.seed] [--no-value-info]

writes OUTDIR/<bug>.onnx for each bug below and OUTDIR/x.npy (float32
2x3x4, values in [-1, 1]). Every model is x -> Scale 'pre' (factor 0.5) ->
the culprit(s) -> ... with the value_info an exporter such as PyTorch
writes (each intermediate's type and shape); --no-value-info leaves it out.

    scratch    AccumSum 'culprit', then Scale 'post'
    nchw       ChannelBias 'culprit' (bias 3 values) on a rank-3 tensor, 'post'
    overrun    PrefixSum 'culprit', 'post'
    inplace    Clip6 'culprit' reading pre's output, which 'post' reads too
    nan        SafeLog 'culprit', 'post'
    static     Gamma 'gamma_a' (2.0) and Gamma 'gamma_b' (0.5) in parallel,
               added by 'post' (an Add)
    shape      PadEnd 'culprit' (2x3x5), then MatMul 'post' with W 5x2
    dtype      ArgMaxLast 'culprit' (int64 2x3), the graph output
    slow       SlowCopy 'culprit' on 1x64x64x4 (x_big.npy), 'post'
"""
import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

SHAPE = [2, 3, 4]
BIG = [1, 64, 64, 4]
BUGS = ["scratch", "nchw", "overrun", "inplace", "nan", "static", "shape", "dtype", "slow"]


def build(bug, domain, value_info=True):
    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    shape = BIG if bug == "slow" else SHAPE

    def custom(op, ins, outs, name, **attrs):
        return helper.make_node(op, ins, outs, name=name, domain=domain, **attrs)

    nodes = [custom("Scale", ["x"], ["t"], "pre", factor=0.5)]
    inits = []
    vi = {"t": (F, shape)}
    out = ("y", F, shape)
    single = {"scratch": "AccumSum", "nchw": "ChannelBias", "overrun": "PrefixSum",
              "nan": "SafeLog", "slow": "SlowCopy"}
    if bug in single:
        attrs = {"bias": [10.0, 20.0, 30.0]} if bug == "nchw" else {}
        nodes += [custom(single[bug], ["t"], ["u"], "culprit", **attrs),
                  custom("Scale", ["u"], ["y"], "post", factor=2.0)]
        vi["u"] = (F, shape)
    elif bug == "inplace":
        nodes += [custom("Clip6", ["t"], ["u"], "culprit"),
                  helper.make_node("Add", ["t", "u"], ["y"], name="post")]
        vi["u"] = (F, shape)
    elif bug == "static":
        nodes += [custom("Gamma", ["t"], ["a"], "gamma_a", gamma=2.0),
                  custom("Gamma", ["t"], ["b"], "gamma_b", gamma=0.5),
                  helper.make_node("Add", ["a", "b"], ["y"], name="post")]
        vi["a"] = vi["b"] = (F, shape)
    elif bug == "shape":
        w = (np.arange(10, dtype=np.float32).reshape(5, 2) / 10).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "W"))
        nodes += [custom("PadEnd", ["t"], ["u"], "culprit"),
                  helper.make_node("MatMul", ["u", "W"], ["y"], name="post")]
        vi["u"] = (F, shape[:-1] + [shape[-1] + 1])
        out = ("y", F, shape[:-1] + [2])
    elif bug == "dtype":
        nodes += [custom("ArgMaxLast", ["t"], ["y"], "culprit")]
        out = ("y", I64, shape[:-1])
    else:
        raise ValueError(bug)
    g = helper.make_graph(nodes, "kbugs_" + bug, [helper.make_tensor_value_info("x", F, shape)],
                          [helper.make_tensor_value_info(*out)], initializer=inits)
    if value_info:
        g.value_info.extend(helper.make_tensor_value_info(n, *tv) for n, tv in vi.items())
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(domain, 1)],
                          producer_name="kbugs_models.py")
    m.ir_version = 8
    return m


def inputs():
    x = np.linspace(-1, 1, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)
    big = np.random.default_rng(3).uniform(-1, 1, BIG).astype(np.float32)
    return x, big


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--domain", default="test.kbugs")
    ap.add_argument("--no-value-info", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    for bug in BUGS:
        m = build(bug, a.domain, not a.no_value_info)
        with open(os.path.join(a.outdir, bug + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
    x, big = inputs()
    np.save(os.path.join(a.outdir, "x.npy"), x)
    np.save(os.path.join(a.outdir, "x_big.npy"), big)


if __name__ == "__main__":
    main()
