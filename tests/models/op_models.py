#!/usr/bin/python3
"""Build the one-op (and few-op) ONNX test models, with NumPy references.

Usage: op_models.py OUTDIR [-k FILTER]

Each case is written to OUTDIR/<case>/:
  model.onnx            built with onnx.helper
  input_<i>.npy         the i-th fed graph input (seeded random, right dtype)
  expected_<j>.npy      the j-th graph output, computed independently here
                        (NumPy; torch.nn.functional in float64 for Conv/pools)
  case.json             {"inputs": [names], "outputs": [names], "rtol", "atol",
                         "dtypes": [output dtypes], "note": why a looser
                         tolerance, if any}

The references never use onnx.reference or graphcc. Generation is cached: a
stamp in OUTDIR records this script's hash and the case list.
"""
import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import time
import zlib

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

F32_RTOL, F32_ATOL = 1e-4, 1e-5
F64_RTOL, F64_ATOL = 1e-9, 1e-12
ACC_ATOL = 5e-5
ACC_NOTE = ("float32 accumulation of many products (conv/gemm/matmul): atol "
            "raised to 5e-5 for outputs near zero")
INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min

f32, f64, i64 = np.float32, np.float64, np.int64


def elem_type(dt):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dt)]


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


class Case:
    def __init__(self, name, nodes, inputs, outputs, inits=None, opset=13,
                 opsets=None, rtol=None, atol=None, note=None, in_shapes=None,
                 out_shapes=None, inits_as_inputs=False, external=False):
        self.name = name
        self.nodes = nodes
        self.inputs = [(n, np.asarray(a)) for n, a in inputs]
        self.outputs = [(n, np.asarray(a)) for n, a in outputs]
        self.inits = [(n, np.asarray(a)) for n, a in (inits or {}).items()]
        self.opset = opset
        self.opsets = opsets or {}
        self.rtol, self.atol, self.note = rtol, atol, note
        self.in_shapes = in_shapes or {}
        self.out_shapes = out_shapes or {}
        self.inits_as_inputs = inits_as_inputs
        self.external = external

    def model(self):
        for i, n in enumerate(self.nodes):
            if not n.name:
                n.name = "%s_%d" % (n.op_type.lower(), i)
        ins = [helper.make_tensor_value_info(
            n, elem_type(a.dtype), self.in_shapes.get(n, list(a.shape)))
            for n, a in self.inputs]
        if self.inits_as_inputs:
            fed = {n for n, _ in self.inputs}
            ins += [helper.make_tensor_value_info(n, elem_type(a.dtype), list(a.shape))
                    for n, a in self.inits if n not in fed]
        outs = [helper.make_tensor_value_info(
            n, elem_type(a.dtype), self.out_shapes.get(n, list(a.shape)))
            for n, a in self.outputs]
        g = helper.make_graph(self.nodes, self.name, ins, outs,
                              [numpy_helper.from_array(a, n) for n, a in self.inits])
        imports = [helper.make_opsetid("", self.opset)]
        imports += [helper.make_opsetid(d, v) for d, v in self.opsets.items()]
        m = helper.make_model(g, opset_imports=imports, producer_name="graphcc-tests")
        m.ir_version = 8
        return m

    def tolerance(self):
        kinds = {a.dtype for _, a in self.outputs}
        rtol, atol = 0.0, 0.0
        if np.dtype(f32) in kinds or np.dtype(np.float16) in kinds:
            rtol, atol = F32_RTOL, F32_ATOL
        elif np.dtype(f64) in kinds:
            rtol, atol = F64_RTOL, F64_ATOL
        if self.rtol is not None:
            rtol = self.rtol
        if self.atol is not None:
            atol = self.atol
        return rtol, atol

    def check(self, m):
        onnx.checker.check_model(m)
        inf = onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
        got = {v.name: v for v in inf.graph.output}
        for n, a in self.outputs:
            t = got[n].type.tensor_type
            assert t.elem_type == elem_type(a.dtype), (self.name, n, t.elem_type)
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            want = self.out_shapes.get(n, list(a.shape))
            assert all(isinstance(w, str) or d is None or d == w
                       for d, w in zip(dims, want)) and len(dims) == len(want), \
                (self.name, n, dims, want)
        # Shapes inferred by ONNX, without the declared outputs, must agree too.
        bare = onnx.ModelProto()
        bare.CopyFrom(m)
        del bare.graph.output[:]
        bare.graph.output.extend(helper.make_empty_tensor_value_info(n) for n, _ in self.outputs)
        inf = onnx.shape_inference.infer_shapes(bare, check_type=True, strict_mode=True)
        for v, (n, a) in zip(inf.graph.output, self.outputs):
            t = v.type.tensor_type
            assert t.elem_type == elem_type(a.dtype), (self.name, n, t.elem_type)
            if t.HasField("shape"):
                dims = [d.dim_value if d.HasField("dim_value") else None
                        for d in t.shape.dim]
                want = self.out_shapes.get(n, list(a.shape))
                assert len(dims) == len(want) and all(
                    d is None or isinstance(w, str) or d == w
                    for d, w in zip(dims, want)), (self.name, n, dims, want)

    def write(self, outdir):
        d = os.path.join(outdir, self.name)
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
        m = self.model()
        self.check(m)
        path = os.path.join(d, "model.onnx")
        if self.external:
            onnx.save_model(m, path, save_as_external_data=True,
                            all_tensors_to_one_file=True, location="weights.bin",
                            size_threshold=0)
        else:
            onnx.save_model(m, path)
        for i, (_, a) in enumerate(self.inputs):
            np.save(os.path.join(d, "input_%d.npy" % i), a)
        for j, (_, a) in enumerate(self.outputs):
            np.save(os.path.join(d, "expected_%d.npy" % j), a)
        rtol, atol = self.tolerance()
        meta = {"inputs": [n for n, _ in self.inputs],
                "outputs": [n for n, _ in self.outputs],
                "rtol": rtol, "atol": atol,
                "dtypes": [str(a.dtype) for _, a in self.outputs]}
        if self.note:
            meta["note"] = self.note
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)


# ---------------------------------------------------------------- references

def erf(x):
    return np.vectorize(math.erf, otypes=[f64])(x.astype(f64))


def sigmoid(x):
    x = x.astype(f64)
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, axis):
    x = x.astype(f64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def torch_f64(a):
    import torch
    return torch.from_numpy(np.ascontiguousarray(a, dtype=f64))


def conv_ref(x, w, b=None, strides=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), groups=1):
    import torch.nn.functional as F
    t, l, bo, r = pads
    xt = F.pad(torch_f64(x), (l, r, t, bo))
    y = F.conv2d(xt, torch_f64(w), None if b is None else torch_f64(b),
                 stride=tuple(strides), padding=0, dilation=tuple(dil), groups=groups)
    return y.numpy().astype(f32)


def maxpool_ref(x, k, strides, pads=(0, 0, 0, 0), ceil_mode=False):
    import torch.nn.functional as F
    t, l, bo, r = pads
    xt = F.pad(torch_f64(x), (l, r, t, bo), value=-math.inf)
    return F.max_pool2d(xt, k, strides, 0, ceil_mode=ceil_mode).numpy().astype(f32)


def avgpool_ref(x, k, strides, pad, count_include_pad):
    import torch.nn.functional as F
    return F.avg_pool2d(torch_f64(x), k, strides, pad,
                        count_include_pad=count_include_pad).numpy().astype(f32)


# ---------------------------------------------------------------- the cases

def N(op, inputs, outputs, name=None, domain=None, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs)


def build_cases():
    C = []

    def add(name, *a, **k):
        C.append(Case(name, *a, **k))

    def rnd(name, shape, lo=-2.0, hi=2.0, dt=f32):
        return rng_for(name).uniform(lo, hi, size=shape).astype(dt)

    def nonzero(name, shape):
        r = rng_for(name)
        return (r.uniform(0.5, 2.0, shape) * r.choice([-1.0, 1.0], shape)).astype(f32)

    # --- binary elementwise with broadcasting
    def binary(op, fn, tag, sa, sb, gen_b=None, gen_a=None):
        name = "%s_%s" % (op.lower(), tag)
        a = (gen_a or rnd)(name + "a", sa)
        b = (gen_b or rnd)(name + "b", sb)
        y = fn(a.astype(f64), b.astype(f64)).astype(f32)
        add(name, [N(op, ["a", "b"], ["y"])], [("a", a), ("b", b)], [("y", y)])

    pos = lambda n, s: rnd(n, s, 0.5, 2.0)
    for op, fn in [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply)]:
        binary(op, fn, "same", [2, 3, 4], [2, 3, 4])
        binary(op, fn, "bcast_last", [2, 3, 4], [4])
        binary(op, fn, "bcast_both", [2, 1, 4], [3, 1])
        binary(op, fn, "scalar", [2, 3, 4], [])
        binary(op, fn, "scalar_first", [], [3, 4])
    binary("Div", np.divide, "same", [2, 3, 4], [2, 3, 4], gen_b=nonzero)
    binary("Div", np.divide, "bcast_last", [2, 3, 4], [4], gen_b=nonzero)
    binary("Div", np.divide, "bcast_both", [2, 1, 4], [3, 1], gen_b=nonzero)
    binary("Div", np.divide, "scalar", [2, 3, 4], [], gen_b=nonzero)
    binary("Pow", np.power, "same", [2, 3, 4], [2, 3, 4], gen_a=pos)
    binary("Pow", np.power, "bcast_last", [2, 3, 4], [4], gen_a=pos)
    binary("Pow", np.power, "bcast_both", [2, 1, 4], [3, 1], gen_a=pos)
    # x ** 2 with negative x and the exponent a scalar initializer, as
    # PyTorch's LayerNorm decomposition exports it.
    a = rnd("pow_square", [2, 3, 4])
    add("pow_square_negative_base", [N("Pow", ["a", "two"], ["y"])], [("a", a)],
        [("y", (a.astype(f64) ** 2).astype(f32))], inits={"two": np.array(2.0, f32)})

    # --- unary
    def unary(name, op, fn, x, opset=13, note=None, rtol=None, atol=None, **attrs):
        y = fn(x.astype(f64)).astype(x.dtype)
        add(name, [N(op, ["x"], ["y"], **attrs)], [("x", x)], [("y", y)],
            opset=opset, note=note, rtol=rtol, atol=atol)

    s = [2, 3, 4, 5]
    unary("sqrt", "Sqrt", np.sqrt, rnd("sqrt", s, 0.0, 4.0))
    unary("erf", "Erf", erf, rnd("erf", s, -3.0, 3.0))
    unary("relu", "Relu", lambda x: np.maximum(x, 0), rnd("relu", s))
    unary("sigmoid", "Sigmoid", sigmoid, rnd("sigmoid", s, -8.0, 8.0))
    unary("tanh", "Tanh", np.tanh, rnd("tanh", s, -4.0, 4.0))
    unary("exp", "Exp", np.exp, rnd("exp", s, -5.0, 5.0))
    unary("log", "Log", np.log, rnd("log", s, 0.01, 10.0))
    unary("neg", "Neg", np.negative, rnd("neg", s))
    unary("abs", "Abs", np.abs, rnd("abs", s))
    unary("leakyrelu", "LeakyRelu", lambda x: np.where(x >= 0, x, 0.1 * x),
          rnd("leakyrelu", s), alpha=0.1)
    unary("leakyrelu_default", "LeakyRelu", lambda x: np.where(x >= 0, x, 0.01 * x),
          rnd("leakyrelu_default", s))
    unary("hardsigmoid", "HardSigmoid", lambda x: np.clip(0.3 * x + 0.6, 0, 1),
          rnd("hardsigmoid", s, -4.0, 4.0), alpha=0.3, beta=0.6)
    unary("hardsigmoid_default", "HardSigmoid", lambda x: np.clip(0.2 * x + 0.5, 0, 1),
          rnd("hardsigmoid_default", s, -4.0, 4.0))
    unary("hardswish", "HardSwish", lambda x: x * np.clip(x / 6.0 + 0.5, 0, 1),
          rnd("hardswish", s, -5.0, 5.0), opset=14)

    # --- Clip
    x = rnd("clip", s, -3, 3)
    lo, hi = np.array(-1.0, f32), np.array(1.5, f32)
    add("clip11_inputs", [N("Clip", ["x", "lo", "hi"], ["y"])], [("x", x)],
        [("y", np.clip(x, lo, hi))], inits={"lo": lo, "hi": hi}, opset=11)
    add("clip11_max_only", [N("Clip", ["x", "", "hi"], ["y"])], [("x", x)],
        [("y", np.minimum(x, hi))], inits={"hi": hi}, opset=11)
    add("clip13_runtime_bounds", [N("Clip", ["x", "lo", "hi"], ["y"])],
        [("x", x), ("lo", lo), ("hi", hi)], [("y", np.clip(x, lo, hi))])
    add("clip13_min_only", [N("Clip", ["x", "lo"], ["y"])], [("x", x)],
        [("y", np.maximum(x, lo))], inits={"lo": lo})
    add("clip6_attrs", [N("Clip", ["x"], ["y"], min=-0.5, max=2.0)], [("x", x)],
        [("y", np.clip(x, -0.5, 2.0))], opset=6)
    add("clip6_relu6", [N("Clip", ["x"], ["y"], min=0.0, max=6.0)],
        [("x", x * 4)], [("y", np.clip(x * 4, 0.0, 6.0))], opset=6)
    # elements enough to split over two threads, NaN kept (NumPy's clip too)
    xl = rnd("clip_long", [300, 400], -3, 3)
    xl[7, ::37] = np.nan
    add("clip13_long_split", [N("Clip", ["x", "lo", "hi"], ["y"])], [("x", xl)],
        [("y", np.clip(xl, lo, hi))], inits={"lo": lo, "hi": hi})
    xi = rng_for("clip_long_i").integers(-1000, 1000, [300, 400]).astype(i64)
    add("clip13_long_split_i64", [N("Clip", ["x", "lo", "hi"], ["y"])], [("x", xi)],
        [("y", np.clip(xi, -7, 300))], inits={"lo": np.array(-7, i64), "hi": np.array(300, i64)})

    # --- Cast
    x = rnd("cast_f32_i64", [3, 4], -200, 200)
    add("cast_f32_i64", [N("Cast", ["x"], ["y"], to=TensorProto.INT64)], [("x", x)],
        [("y", np.trunc(x).astype(i64))])
    xi = rng_for("cast_i64_f32").integers(-100000, 100000, [3, 4]).astype(i64)
    add("cast_i64_f32", [N("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], [("x", xi)],
        [("y", xi.astype(f32))])
    x = rnd("cast_f32_f16", [3, 4], -100, 100)
    add("cast_f32_f16", [N("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)], [("x", x)],
        [("y", x.astype(np.float16))], rtol=0.0, atol=0.0,
        note="float32->float16 is IEEE round-to-nearest-even: exact")
    x = np.array([0.0, -0.0, 1.0, 65504.0, 1e-6, -3e-5, 70000.0, -1e9,
                  0.333333, 1.0009765625, 2049.0, np.inf, -np.inf, np.nan], f32)
    with np.errstate(over="ignore"):
        y16 = x.astype(np.float16)
    add("cast_f32_f16_special", [N("Cast", ["x"], ["y"], to=TensorProto.FLOAT16)],
        [("x", x)], [("y", y16)], rtol=0.0, atol=0.0,
        note="float16 subnormals, overflow to inf, ties to even, NaN: exact")

    # --- Where, Equal
    cond = rng_for("where_c").random([2, 3, 4]) > 0.5
    a, b = rnd("where_a", [2, 3, 4]), rnd("where_b", [4])
    add("where_bcast", [N("Where", ["c", "a", "b"], ["y"])],
        [("c", cond), ("a", a), ("b", b)], [("y", np.where(cond, a, b))])
    # long rows, a random mask: every path of runtime/kernels/elementwise.c's
    # select (all three full, a scalar Y, a full mask with both broadcast)
    cond = rng_for("where_lc").random([3, 1000]) > 0.5
    a, b = rnd("where_la", [3, 1000]), rnd("where_lb", [1000])
    add("where_long_same", [N("Where", ["c", "a", "a2"], ["y"])],
        [("c", cond), ("a", a), ("a2", a[::-1].copy())], [("y", np.where(cond, a, a[::-1]))])
    add("where_long_scalar_y", [N("Where", ["c", "a", "s"], ["y"])],
        [("c", cond), ("a", a), ("s", np.array(7.5, f32))], [("y", np.where(cond, a, f32(7.5)))])
    ai = rng_for("where_li").integers(-9, 9, [1000]).astype(i64)
    add("where_long_bcast_i64", [N("Where", ["c", "x", "z"], ["y"])],
        [("c", cond), ("x", ai), ("z", np.array([-1], i64))],
        [("y", np.where(cond, ai, np.array([-1], i64)))])
    a = rnd("equal_a", [2, 3, 4])
    b = a.copy()
    b[:, ::2] += 1.0
    add("equal_f32", [N("Equal", ["a", "b"], ["y"])], [("a", a), ("b", b)],
        [("y", a == b)])
    ai = rng_for("equal_i64").integers(0, 3, [3, 4]).astype(i64)
    bi = rng_for("equal_i64b").integers(0, 3, [4]).astype(i64)
    add("equal_i64_bcast", [N("Equal", ["a", "b"], ["y"])], [("a", ai), ("b", bi)],
        [("y", ai == bi)])

    # --- variadic Sum/Max/Min
    a, b, c = rnd("var_a", [2, 3, 4]), rnd("var_b", [3, 1]), rnd("var_c", [4])
    for op, fn in [("Sum", lambda *v: v[0] + v[1] + v[2]),
                   ("Max", lambda *v: np.maximum(np.maximum(v[0], v[1]), v[2])),
                   ("Min", lambda *v: np.minimum(np.minimum(v[0], v[1]), v[2]))]:
        y = fn(a.astype(f64), b.astype(f64), c.astype(f64)).astype(f32)
        add("%s_variadic3" % op.lower(), [N(op, ["a", "b", "c"], ["y"])],
            [("a", a), ("b", b), ("c", c)], [("y", y)])
    add("sum_single", [N("Sum", ["a"], ["y"])], [("a", a)], [("y", a)])
    y = np.maximum(a, rnd("var_a2", [2, 3, 4]))
    add("max_two", [N("Max", ["a", "b"], ["y"])],
        [("a", a), ("b", rnd("var_a2", [2, 3, 4]))], [("y", y)])

    # --- Conv
    def conv(name, xs, ws, bias=True, strides=(1, 1), pads=(0, 0, 0, 0),
             dil=(1, 1), groups=1, w_as_input=False):
        x = rnd(name + "x", xs)
        w = rnd(name + "w", ws, -0.5, 0.5)
        b = rnd(name + "b", [ws[0]]) if bias else None
        attrs = dict(kernel_shape=list(ws[2:]), strides=list(strides),
                     pads=list(pads), dilations=list(dil), group=groups)
        ins = ["x", "w"] + (["b"] if bias else [])
        inits = {} if w_as_input else {"w": w}
        feeds = [("x", x)] + ([("w", w)] if w_as_input else [])
        if bias:
            inits["b"] = b
        add(name, [N("Conv", ins, ["y"], **attrs)], feeds,
            [("y", conv_ref(x, w, b, strides, pads, dil, groups))],
            inits=inits, atol=ACC_ATOL, note=ACC_NOTE)

    conv("conv_basic", [1, 3, 8, 8], [4, 3, 3, 3])
    conv("conv_nobias", [1, 3, 8, 8], [4, 3, 3, 3], bias=False)
    conv("conv_pads_strides", [2, 3, 9, 9], [8, 3, 3, 3], strides=(2, 2), pads=(1, 1, 1, 1))
    conv("conv_asym_pads", [1, 2, 7, 6], [3, 2, 3, 2], pads=(0, 1, 2, 1), strides=(1, 2))
    conv("conv_dilations", [1, 4, 10, 10], [5, 4, 3, 3], dil=(2, 2), pads=(2, 2, 2, 2))
    conv("conv_groups", [1, 4, 6, 6], [6, 2, 3, 3], groups=2, pads=(1, 1, 1, 1))
    conv("conv_depthwise", [1, 8, 7, 7], [8, 1, 3, 3], groups=8, pads=(1, 1, 1, 1),
         strides=(2, 2))
    conv("conv_1x1", [1, 16, 5, 5], [8, 16, 1, 1])
    conv("conv_7x7_s2", [1, 3, 32, 32], [8, 3, 7, 7], strides=(2, 2), pads=(3, 3, 3, 3))
    conv("conv_weights_input", [1, 3, 6, 6], [2, 3, 3, 3], w_as_input=True)

    # --- Gemm
    def gemm(name, sa, sb, sc=None, transA=0, transB=0, alpha=1.0, beta=1.0):
        A, B = rnd(name + "A", sa), rnd(name + "B", sb)
        A64, B64 = A.astype(f64), B.astype(f64)
        y = alpha * ((A64.T if transA else A64) @ (B64.T if transB else B64))
        inits = {"B": B}
        ins = ["A", "B"]
        if sc is not None:
            Cm = rnd(name + "C", sc)
            y = y + beta * Cm.astype(f64)
            inits["C"] = Cm
            ins.append("C")
        add(name, [N("Gemm", ins, ["y"], transA=transA, transB=transB,
                     alpha=alpha, beta=beta)], [("A", A)], [("y", y.astype(f32))],
            inits=inits, atol=ACC_ATOL, note=ACC_NOTE)

    gemm("gemm_transB_bias_row", [3, 5], [4, 5], [4], transB=1)
    gemm("gemm_alpha_beta_col", [3, 5], [5, 4], [3, 1], alpha=0.5, beta=2.0)
    gemm("gemm_transA_scalar_c", [5, 3], [5, 4], [], transA=1, beta=-1.0)
    gemm("gemm_full_c_transAB", [6, 3], [4, 6], [3, 4], transA=1, transB=1, alpha=1.5,
         beta=0.25)
    gemm("gemm_no_c", [3, 5], [5, 4])
    gemm("gemm_big", [16, 300], [200, 300], [200], transB=1)

    # --- MatMul
    def matmul(name, sa, sb, b_init=False):
        A, B = rnd(name + "A", sa), rnd(name + "B", sb)
        y = np.matmul(A.astype(f64), B.astype(f64)).astype(f32)
        feeds = [("A", A)] + ([] if b_init else [("B", B)])
        add(name, [N("MatMul", ["A", "B"], ["y"])], feeds, [("y", y)],
            inits={"B": B} if b_init else None, atol=ACC_ATOL, note=ACC_NOTE)

    matmul("matmul_2d", [3, 5], [5, 4])
    matmul("matmul_2d_weights", [7, 33], [33, 17], b_init=True)
    matmul("matmul_batched_3d_2d", [2, 3, 5], [5, 4], b_init=True)
    matmul("matmul_batched_3d_3d", [2, 3, 5], [2, 5, 4])
    matmul("matmul_bcast_4d", [2, 1, 3, 5], [4, 5, 2])
    matmul("matmul_1d_2d", [5], [5, 4])
    matmul("matmul_2d_1d", [3, 5], [5])

    # --- BatchNormalization (inference)
    x = rnd("bn_x", [2, 3, 4, 4])
    sc, bi, mu = rnd("bn_s", [3]), rnd("bn_b", [3]), rnd("bn_m", [3])
    var = rnd("bn_v", [3], 0.1, 2.0)
    for opset, eps in [(9, 1e-5), (15, 1e-3)]:
        y = ((x.astype(f64) - mu[:, None, None]) / np.sqrt(var[:, None, None] + eps)
             * sc[:, None, None] + bi[:, None, None])
        add("batchnorm_opset%d" % opset,
            [N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=eps)],
            [("x", x)], [("y", y.astype(f32))],
            inits={"s": sc, "b": bi, "m": mu, "v": var}, opset=opset)

    # --- pools
    x = rnd("pool_x", [1, 3, 9, 9])
    add("maxpool_k3_s2_p1", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                strides=[2, 2], pads=[1, 1, 1, 1])],
        [("x", x)], [("y", maxpool_ref(x, 3, 2, (1, 1, 1, 1)))])
    add("maxpool_k2_s2", [N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
        [("x", x)], [("y", maxpool_ref(x, 2, 2))])
    add("maxpool_asym_pads", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 2],
                                 pads=[0, 1, 2, 0])],
        [("x", x)], [("y", maxpool_ref(x, (3, 2), 1, (0, 1, 2, 0)))])
    x8 = rnd("pool_x8", [1, 2, 8, 8])
    add("maxpool_ceil_mode", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                 strides=[2, 2], ceil_mode=1)],
        [("x", x8)], [("y", maxpool_ref(x8, 3, 2, ceil_mode=True))])
    add("maxpool_negative_input", [N("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                                      strides=[1, 1], pads=[1, 1, 1, 1])],
        [("x", -np.abs(x) - 1)], [("y", maxpool_ref(-np.abs(x) - 1, 3, 1, (1, 1, 1, 1)))])
    add("averagepool_k3_p1_excl", [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                      pads=[1, 1, 1, 1])],
        [("x", x)], [("y", avgpool_ref(x, 3, 1, 1, False))])
    add("averagepool_k3_s2_p1_incl", [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3],
                                         strides=[2, 2], pads=[1, 1, 1, 1],
                                         count_include_pad=1)],
        [("x", x)], [("y", avgpool_ref(x, 3, 2, 1, True))])
    add("averagepool_k2_s2", [N("AveragePool", ["x"], ["y"], kernel_shape=[2, 2],
                                 strides=[2, 2])],
        [("x", x8)], [("y", avgpool_ref(x8, 2, 2, 0, False))])
    xg = rnd("gap_x", [2, 3, 5, 7])
    add("globalaveragepool", [N("GlobalAveragePool", ["x"], ["y"])], [("x", xg)],
        [("y", xg.astype(f64).mean(axis=(2, 3), keepdims=True).astype(f32))])

    # --- Flatten
    x = rnd("flatten", [2, 3, 4, 5])
    for axis in [1, 0, 2, -1]:
        k = axis % 4
        y = x.reshape(int(np.prod(x.shape[:k], dtype=i64)), -1)
        add("flatten_axis%s" % str(axis).replace("-", "m"),
            [N("Flatten", ["x"], ["y"], axis=axis)], [("x", x)], [("y", y)])

    # --- Softmax
    x = rnd("softmax", [2, 3, 4], -4, 4)
    add("softmax13_axis_m1", [N("Softmax", ["x"], ["y"], axis=-1)], [("x", x)],
        [("y", softmax(x, -1).astype(f32))])
    add("softmax13_axis1", [N("Softmax", ["x"], ["y"], axis=1)], [("x", x)],
        [("y", softmax(x, 1).astype(f32))])
    coerced = softmax(x.reshape(2, 12), 1).reshape(2, 3, 4).astype(f32)
    add("softmax11_axis1_coerced", [N("Softmax", ["x"], ["y"], axis=1)], [("x", x)],
        [("y", coerced)], opset=11)
    add("softmax11_default_axis", [N("Softmax", ["x"], ["y"])], [("x", x)],
        [("y", coerced)], opset=11)
    big = rnd("softmax_big", [2, 5], 80, 100)
    add("softmax13_large_logits", [N("Softmax", ["x"], ["y"])], [("x", big)],
        [("y", softmax(big, -1).astype(f32))])

    # --- LayerNormalization (opset 17)
    def layernorm(name, shape, axis, eps=1e-5, bias=True):
        x = rnd(name + "x", shape)
        k = axis % len(shape)
        sc = rnd(name + "s", shape[k:])
        b = rnd(name + "b", shape[k:])
        x64 = x.astype(f64)
        ax = tuple(range(k, len(shape)))
        mu = x64.mean(axis=ax, keepdims=True)
        var = ((x64 - mu) ** 2).mean(axis=ax, keepdims=True)
        y = (x64 - mu) / np.sqrt(var + eps) * sc
        inits = {"s": sc}
        ins = ["x", "s"]
        if bias:
            y = y + b
            inits["b"] = b
            ins.append("b")
        add(name, [N("LayerNormalization", ins, ["y"], axis=axis, epsilon=eps)],
            [("x", x)], [("y", y.astype(f32))], inits=inits, opset=17)

    layernorm("layernorm_last_axis", [2, 3, 16], -1)
    layernorm("layernorm_axis1", [2, 3, 8], 1, eps=1e-3)
    layernorm("layernorm_no_bias", [4, 10], -1, bias=False)

    # --- Reshape
    x = rnd("reshape", [2, 3, 4])
    for tag, shp, out in [("keep0_m1", [0, -1], [2, 12]), ("m1_4", [-1, 4], [6, 4]),
                          ("mid0", [4, 0, 2], [4, 3, 2]), ("flat", [-1], [24])]:
        add("reshape_" + tag, [N("Reshape", ["x", "shape"], ["y"])], [("x", x)],
            [("y", x.reshape(out))], inits={"shape": np.array(shp, i64)})

    # --- Transpose
    x = rnd("transpose", [2, 3, 4, 5])
    add("transpose_perm", [N("Transpose", ["x"], ["y"], perm=[0, 2, 1, 3])], [("x", x)],
        [("y", x.transpose(0, 2, 1, 3))])
    add("transpose_default", [N("Transpose", ["x"], ["y"])], [("x", x)], [("y", x.T)])
    add("transpose_nchw_nhwc", [N("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])],
        [("x", x)], [("y", x.transpose(0, 2, 3, 1))])

    # --- Slice (opset 13)
    x = rnd("slice", [5, 6, 7])

    def slc(name, starts, ends, axes, steps, ref):
        inits = {"starts": np.array(starts, i64), "ends": np.array(ends, i64)}
        ins = ["x", "starts", "ends"]
        if axes is not None:
            inits["axes"] = np.array(axes, i64)
            ins.append("axes")
        if steps is not None:
            inits["steps"] = np.array(steps, i64)
            ins.append("steps")
        add(name, [N("Slice", ins, ["y"])], [("x", x)], [("y", np.ascontiguousarray(ref))],
            inits=inits)

    slc("slice_basic", [1, 0], [4, 3], [0, 1], None, x[1:4, 0:3])
    slc("slice_neg_step", [1, -1], [4, INT64_MIN], [0, 2], [1, -2], x[1:4, :, ::-2])
    slc("slice_neg_axes_clamp", [-3, 2], [INT64_MAX, 100], [-1, -2], None, x[:, 2:, -3:])
    slc("slice_no_axes", [0, 1, 2], [5, 5, 7], None, None, x[0:5, 1:5, 2:7])
    slc("slice_reverse_all", [-1], [-100], [1], [-1], x[:, ::-1])
    slc("slice_steps3", [0, 6], [5, 0], [0, 2], [3, -3], x[0:5:3, :, 6:0:-3])

    # --- Gather
    data = rnd("gather", [5, 4])
    idx = np.array([[0, -1], [3, -5]], i64)
    add("gather_axis0_neg", [N("Gather", ["d", "i"], ["y"], axis=0)],
        [("d", data), ("i", idx)], [("y", np.take(data, idx, axis=0))])
    data3 = rnd("gather3", [3, 5, 2])
    idx1 = np.array([4, -2, 0], i64)
    add("gather_axis1_neg", [N("Gather", ["d", "i"], ["y"], axis=1)],
        [("d", data3), ("i", idx1)], [("y", np.take(data3, idx1, axis=1))])
    # rows enough to split over two threads (runtime/kernels/shape-index.c)
    data4 = rnd("gather_big", [6, 400, 256])
    idx4 = rng_for("gather_big_i").integers(-400, 400, (2, 150)).astype(i64)
    add("gather_axis1_split", [N("Gather", ["d", "i"], ["y"], axis=1)],
        [("d", data4), ("i", idx4)], [("y", np.take(data4, idx4, axis=1))])
    add("gather_scalar_index", [N("Gather", ["d", "i"], ["y"], axis=0)],
        [("d", data)], [("y", data[-2])], inits={"i": np.array(-2, i64)})
    emb = rnd("gather_emb", [10, 6])
    tok = np.array([[1, 9, 0, 3]], i64)
    add("gather_embedding", [N("Gather", ["w", "t"], ["y"])], [("t", tok)],
        [("y", emb[tok])], inits={"w": emb})

    # --- Shape, Constant, ConstantOfShape, Expand
    x = rnd("shape", [2, 3, 4])
    add("shape", [N("Shape", ["x"], ["y"])], [("x", x)], [("y", np.array(x.shape, i64))])
    add("shape15_start_end", [N("Shape", ["x"], ["y"], start=1, end=-1)], [("x", x)],
        [("y", np.array(x.shape[1:-1], i64))], opset=15)
    cval = rnd("constant", [3, 4])
    add("constant_tensor", [N("Constant", [], ["c"], value=numpy_helper.from_array(cval)),
                            N("Add", ["x", "c"], ["y"])],
        [("x", x)], [("y", (x.astype(f64) + cval).astype(f32))])
    add("constant_value_float", [N("Constant", [], ["c"], value_float=0.25),
                                 N("Mul", ["x", "c"], ["y"])],
        [("x", x)], [("y", x * f32(0.25))])
    add("constant_value_ints", [N("Constant", [], ["c"], value_ints=[4, 6]),
                                N("Reshape", ["x", "c"], ["y"])],
        [("x", x)], [("y", x.reshape(4, 6))])
    fill = numpy_helper.from_array(np.array([1.5], f32))
    add("constantofshape_init", [N("ConstantOfShape", ["s"], ["y"], value=fill)], [],
        [("y", np.full([2, 3, 4], 1.5, f32))], inits={"s": np.array([2, 3, 4], i64)})
    add("constantofshape_from_shape",
        [N("Shape", ["x"], ["s"]),
         N("ConstantOfShape", ["s"], ["z"], value=numpy_helper.from_array(np.array([2], i64))),
         N("Cast", ["z"], ["zf"], to=TensorProto.FLOAT),
         N("Mul", ["x", "zf"], ["y"])],
        [("x", x)], [("y", x * 2)])
    add("constantofshape_default", [N("ConstantOfShape", ["s"], ["y"]),
                                    N("Add", ["x", "y"], ["z"])],
        [("x", x)], [("z", x)], inits={"s": np.array([3, 4], i64)})
    x31 = rnd("expand", [3, 1])
    add("expand_3x1_to_2x3x4", [N("Expand", ["x", "s"], ["y"])], [("x", x31)],
        [("y", np.broadcast_to(x31, [2, 3, 4]).copy())],
        inits={"s": np.array([2, 3, 4], i64)})
    x4 = rnd("expand4", [4])
    add("expand_smaller_shape", [N("Expand", ["x", "s"], ["y"])], [("x", x4)],
        [("y", np.broadcast_to(x4, [2, 4]).copy())], inits={"s": np.array([2, 1], i64)})
    x231 = rnd("expand231", [2, 3, 1])
    add("expand_rank_up", [N("Expand", ["x", "s"], ["y"])], [("x", x231)],
        [("y", np.broadcast_to(x231, [2, 2, 3, 4]).copy())],
        inits={"s": np.array([2, 1, 1, 4], i64)})

    # --- Unsqueeze / Squeeze
    x = rnd("unsq", [3, 4])
    add("unsqueeze11_attr", [N("Unsqueeze", ["x"], ["y"], axes=[0, 3])], [("x", x)],
        [("y", x.reshape(1, 3, 4, 1))], opset=11)
    add("unsqueeze13_input", [N("Unsqueeze", ["x", "a"], ["y"])], [("x", x)],
        [("y", x.reshape(3, 1, 4, 1))], inits={"a": np.array([1, -1], i64)})
    x = rnd("sq", [1, 3, 1, 4])
    add("squeeze11_attr", [N("Squeeze", ["x"], ["y"], axes=[2])], [("x", x)],
        [("y", x.reshape(1, 3, 4))], opset=11)
    add("squeeze13_input", [N("Squeeze", ["x", "a"], ["y"])], [("x", x)],
        [("y", x.reshape(3, 1, 4))], inits={"a": np.array([-4], i64)})
    add("squeeze13_all", [N("Squeeze", ["x"], ["y"])], [("x", x)], [("y", x.reshape(3, 4))])

    # --- Concat, Split
    a, b, c = rnd("cat_a", [2, 1, 4]), rnd("cat_b", [2, 3, 4]), rnd("cat_c", [2, 2, 4])
    add("concat_axis1", [N("Concat", ["a", "b", "c"], ["y"], axis=1)],
        [("a", a), ("b", b), ("c", c)], [("y", np.concatenate([a, b, c], 1))])
    add("concat_axis_m1", [N("Concat", ["a", "b"], ["y"], axis=-1)],
        [("a", b), ("b", b * 2)], [("y", np.concatenate([b, b * 2], -1))])
    k = rnd("cat_k", [1, 3, 4])
    add("concat_axis0_with_init", [N("Concat", ["a", "k"], ["y"], axis=0)],
        [("a", b)], [("y", np.concatenate([b, k], 0))], inits={"k": k})
    x = rnd("split", [2, 6, 3])
    add("split13_input", [N("Split", ["x", "s"], ["y0", "y1"], axis=1)], [("x", x)],
        [("y0", x[:, :2]), ("y1", x[:, 2:])], inits={"s": np.array([2, 4], i64)})
    add("split13_equal3", [N("Split", ["x"], ["y0", "y1", "y2"], axis=1)], [("x", x)],
        [("y0", x[:, 0:2]), ("y1", x[:, 2:4]), ("y2", x[:, 4:6])])
    add("split11_attr", [N("Split", ["x"], ["y0", "y1"], axis=-1, split=[1, 2])],
        [("x", x)], [("y0", x[:, :, :1]), ("y1", x[:, :, 1:])], opset=11)
    # bytes enough to split over two threads, parts crossing chunks and rows
    xb = rnd("split_big", [4, 300, 201])
    add("split13_big_uneven", [N("Split", ["x", "s"], ["y0", "y1", "y2"], axis=1)],
        [("x", xb)], [("y0", xb[:, :70]), ("y1", xb[:, 70:200]), ("y2", xb[:, 200:])],
        inits={"s": np.array([70, 130, 100], i64)})

    # --- ArgMax, ArgMin over a middle axis (a segmentation map's classes):
    # columns in chunks of 256 split over the threads (runtime/kernels/
    # reduce.c), ties (the first index, or the last with select_last_index)
    # and NaN (the first NaN, as NumPy's argmax) against NumPy
    xa = np.round(rnd("argmax_seg", [2, 21, 40, 70]) * 2)
    xa[1, 5, 3, :9] = np.nan
    xa[0, 20, 39, 69] = np.nan

    def arg_last(x, axis, fn):
        n = x.shape[axis]
        return n - 1 - fn(np.flip(x, axis), axis=axis)

    for op, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
        add("%s_seg_axis1" % op.lower(), [N(op, ["x"], ["y"], axis=1, keepdims=0)],
            [("x", xa)], [("y", fn(xa, axis=1).astype(i64))])
        add("%s_seg_axis1_last" % op.lower(),
            [N(op, ["x"], ["y"], axis=1, keepdims=1, select_last_index=1)],
            [("x", xa)], [("y", np.expand_dims(arg_last(xa, 1, fn), 1).astype(i64))])

    # --- LRN: planes in chunks of 256 split over the threads, base^-beta by
    # roots for 0.75 (AlexNet's), 0.5 and 1, by exp/log otherwise
    # (runtime/kernels/norm.c); float32 against NumPy in double
    xl = rnd("lrn_big", [2, 16, 30, 20], -3, 3)
    for tag, size, beta in [("b075", 5, 0.75), ("b05", 3, 0.5), ("b1", 4, 1.0),
                            ("b06", 5, 0.6)]:
        x64 = xl.astype(f64)
        sq = np.zeros_like(x64)
        lo_n, hi_n = (size - 1) // 2, size - 1 - (size - 1) // 2
        for c in range(x64.shape[1]):
            sq[:, c] = (x64[:, max(0, c - lo_n):c + hi_n + 1] ** 2).sum(1)
        y = x64 / (1.5 + 0.4 / size * sq) ** beta
        add("lrn_chunks_%s" % tag,
            [N("LRN", ["x"], ["y"], size=size, alpha=0.4, beta=beta, bias=1.5)],
            [("x", xl)], [("y", y.astype(f32))])

    # --- CumSum over a middle axis: columns in chunks of 256 (and a part)
    # split over the threads (runtime/kernels/algebra.c); exclusive, reverse,
    # int32; float32 summed in double as NumPy's float64 cumsum
    xc = rnd("cumsum_mid", [3, 50, 700])
    xci = rng_for("cumsum_mid_i").integers(-1000, 1000, [3, 50, 700]).astype(np.int32)

    def cumsum_ref(x, exclusive, reverse):
        v = np.flip(x, 1) if reverse else x
        c = np.cumsum(v.astype(f64 if x.dtype == f32 else i64), axis=1)
        if exclusive:
            c = np.concatenate([np.zeros_like(c[:, :1]), c[:, :-1]], 1)
        c = np.flip(c, 1) if reverse else c
        return c.astype(x.dtype)

    for tag, x_, ex, rev in [("f32", xc, 0, 0), ("f32_excl_rev", xc, 1, 1),
                             ("i32_rev", xci, 0, 1)]:
        add("cumsum_mid_%s" % tag, [N("CumSum", ["x", "ax"], ["y"], exclusive=ex, reverse=rev)],
            [("x", x_)], [("y", cumsum_ref(x_, ex, rev))], inits={"ax": np.array(1, i64)})

    # --- ScatterND into a tensor big enough that its copy to the output is
    # split over the threads (runtime/kernels/shape.c gc_copy_bytes): a KV
    # cache's rows updated; Trilu after the same copy
    kv = rnd("scatternd_kv", [4, 300, 201])
    rows = np.array([[1, 7], [3, 299], [0, 0]], i64)
    upd = rnd("scatternd_upd", [3, 201])
    want = kv.copy()
    for (a_, b_), u in zip(rows, upd):
        want[a_, b_] = u
    add("scatternd_big_copy", [N("ScatterND", ["x", "i", "u"], ["y"])],
        [("x", kv), ("u", upd)], [("y", want)], inits={"i": rows})
    add("trilu_big_copy", [N("Trilu", ["x", "k"], ["y"], upper=1)], [("x", kv)],
        [("y", np.triu(kv, -3))], inits={"k": np.array(-3, i64)}, opset=14)

    # --- Einsum of one operand big enough to split over the threads: a
    # permutation (Transpose's tiled copy) and a sum over a label (rows of
    # the gather) (runtime/kernels/einsum.c)
    xe = rnd("einsum_one", [6, 40, 30, 50])
    for tag, eq in [("permute", "abcd->acdb"), ("sum", "abcd->adb")]:
        add("einsum_one_%s" % tag, [N("Einsum", ["x"], ["y"], equation=eq)], [("x", xe)],
            [("y", np.einsum(eq, xe.astype(f64)).astype(f32))])

    # --- ReduceMean (opset 13: axes attribute)
    x = rnd("reducemean", [2, 3, 4])
    x64 = x.astype(f64)
    for tag, axes, kd in [("axis1_keep", [1], 1), ("axes02_nokeep", [0, 2], 0),
                          ("all_nokeep", None, 0), ("last_keep", [-1], 1),
                          ("all_keep", None, 1)]:
        attrs = {"keepdims": kd}
        if axes is not None:
            attrs["axes"] = axes
        y = x64.mean(axis=None if axes is None else tuple(axes), keepdims=bool(kd))
        add("reducemean_" + tag, [N("ReduceMean", ["x"], ["y"], **attrs)], [("x", x)],
            [("y", np.asarray(y).astype(f32))])

    # --- Dropout, Identity
    x = rnd("dropout", [3, 4])
    add("dropout13", [N("Dropout", ["x"], ["y"])], [("x", x)], [("y", x)])
    add("dropout13_ratio", [N("Dropout", ["x", "r"], ["y"])], [("x", x)], [("y", x)],
        inits={"r": np.array(0.5, f32)})
    add("dropout10_ratio_attr", [N("Dropout", ["x"], ["y"], ratio=0.3)], [("x", x)],
        [("y", x)], opset=10)
    add("identity", [N("Identity", ["x"], ["y"])], [("x", x)], [("y", x)])
    add("identity_of_initializer", [N("Identity", ["w"], ["y"])], [], [("y", x)],
        inits={"w": x})

    # --- Pad (opset 13)
    x = rnd("pad", [1, 2, 4, 5])
    pads = [0, 0, 1, 2, 0, 0, 2, 1]
    npp = [(0, 0), (0, 0), (1, 2), (2, 1)]
    add("pad_constant_value", [N("Pad", ["x", "p", "v"], ["y"], mode="constant")],
        [("x", x)], [("y", np.pad(x, npp, constant_values=0.5))],
        inits={"p": np.array(pads, i64), "v": np.array(0.5, f32)})
    add("pad_constant_default", [N("Pad", ["x", "p"], ["y"])], [("x", x)],
        [("y", np.pad(x, npp))], inits={"p": np.array(pads, i64)})
    add("pad_reflect", [N("Pad", ["x", "p"], ["y"], mode="reflect")], [("x", x)],
        [("y", np.pad(x, npp, mode="reflect"))], inits={"p": np.array(pads, i64)})
    # rows enough to split over two threads (runtime/kernels/shape-move.c),
    # every axis padded, a part starting inside the padding of an outer axis
    xb = rnd("pad_big", [3, 40, 50, 60])
    pads = [1, 2, 3, 4, 0, 1, 2, 1]
    npp = [(1, 0), (2, 1), (3, 2), (4, 1)]
    for mode in ["constant", "reflect", "edge"]:
        ref = np.pad(xb, npp, mode=mode, **({"constant_values": -2.5}
                                             if mode == "constant" else {}))
        add("pad_big_%s" % mode, [N("Pad", ["x", "p", "v"], ["y"], mode=mode)],
            [("x", xb)], [("y", ref)],
            inits={"p": np.array(pads, i64), "v": np.array(-2.5, f32)})

    # --- whole-model features
    w, b = rnd("dyn_w", [8, 5]), rnd("dyn_b", [5])
    x = rnd("dyn_x", [3, 8])
    y = np.maximum(x.astype(f64) @ w + b, 0).astype(f32)
    add("dynamic_batch", [N("MatMul", ["x", "w"], ["t"]), N("Add", ["t", "b"], ["u"]),
                          N("Relu", ["u"], ["y"])],
        [("x", x)], [("y", y)], inits={"w": w, "b": b},
        in_shapes={"x": ["N", 8]}, out_shapes={"y": ["N", 5]})
    x = rnd("initin_x", [2, 4])
    w = rnd("initin_w", [4])
    add("initializer_is_input_default", [N("Mul", ["x", "w"], ["y"])], [("x", x)],
        [("y", x * w)], inits={"w": w}, inits_as_inputs=True)
    w2 = rnd("initin_w2", [4])
    add("initializer_is_input_overridden", [N("Mul", ["x", "w"], ["y"])],
        [("x", x), ("w", w2)], [("y", x * w2)], inits={"w": w}, inits_as_inputs=True)
    w, b = rnd("ext_w", [6, 5]), rnd("ext_b", [5])
    x = rnd("ext_x", [2, 6])
    add("external_data", [N("Gemm", ["x", "w", "b"], ["y"])], [("x", x)],
        [("y", (x.astype(f64) @ w + b).astype(f32))], inits={"w": w, "b": b},
        external=True)

    ai = rng_for("int_a").integers(-50, 50, [2, 3]).astype(i64)
    bi = rng_for("int_b").integers(-5, 5, [3]).astype(i64)
    ci = ai * bi + ai
    eq = ci == ai
    add("int64_bool_model",
        [N("Mul", ["a", "b"], ["ab"]), N("Add", ["ab", "a"], ["c"]),
         N("Equal", ["c", "a"], ["eq"]), N("Where", ["eq", "a", "c"], ["w"]),
         N("Sub", ["w", "k"], ["out"])],
        [("a", ai), ("b", bi)], [("eq", eq), ("out", np.where(eq, ai, ci) - 7)],
        inits={"k": np.array(7, i64)})
    bm = rng_for("bool_in").random([2, 3]) > 0.5
    add("bool_input_where", [N("Where", ["m", "a", "b"], ["y"])],
        [("m", bm), ("a", ai), ("b", bi)], [("y", np.where(bm, ai, bi))])

    xd = rng_for("f64_x").uniform(-1, 1, [3, 4])
    yd = rng_for("f64_y").uniform(-1, 1, [4])
    wd = rng_for("f64_w").uniform(-1, 1, [4, 2])
    ref = np.exp(xd * yd + xd) @ wd
    add("float64_model", [N("Mul", ["x", "y"], ["m"]), N("Add", ["m", "x"], ["s"]),
                          N("Exp", ["s"], ["e"]), N("MatMul", ["e", "w"], ["out"])],
        [("x", xd), ("y", yd)], [("out", ref)], inits={"w": wd})

    # TopK over long slices (runtime/kernels/select.c keeps the k best in a
    # heap when k is under a quarter of the slice): NaN (ONNX orders it as
    # the largest), ties (the lower index first), the smallest, a middle
    # axis (strided), several slices (split over threads), int32.
    def topk_ref(x, k, axis, largest):
        xm = np.moveaxis(x, axis, -1)
        idx = np.empty(xm.shape[:-1] + (k,), i64)
        for pos in np.ndindex(*xm.shape[:-1]):
            v = xm[pos].astype(f64)
            nan = np.isnan(v)
            filled = np.where(nan, 0.0, v)
            ar = np.arange(v.size)
            order = (np.lexsort((ar, -filled, ~nan)) if largest
                     else np.lexsort((ar, filled, nan)))
            idx[pos] = order[:k]
        vals = np.take_along_axis(xm, idx, -1)
        return np.moveaxis(vals, -1, axis), np.moveaxis(idx, -1, axis)

    def topk(name, x, k, axis, largest):
        y, ind = topk_ref(x, k, axis, largest)
        add(name, [N("TopK", ["x", "k"], ["y", "ind"], axis=axis, largest=largest)],
            [("x", x)], [("y", y), ("ind", ind)], inits={"k": np.array([k], i64)})

    x = rnd("topk_nan", [3, 2001])
    x[0, [5, 900, 2000]] = np.nan
    x[1, :] = np.round(x[1, :] * 3)  # many ties
    x[2, 1500:] = np.nan  # more NaN than k
    x[2, 10] = -np.inf
    topk("topk_long_largest", x, 20, 1, 1)
    topk("topk_long_smallest", x, 20, -1, 0)
    topk("topk_long_middle_axis", rnd("topk_mid", [2, 1500, 3]), 33, 1, 1)
    xi = rng_for("topk_int").integers(-50, 50, (16, 400)).astype(np.int32)
    topk("topk_long_int32", xi, 7, 1, 0)
    topk("topk_long_k1", rnd("topk_k1", [5, 1000]), 1, 1, 1)

    # PyTorch's flatten: Shape -> Gather(0) -> Unsqueeze -> Concat(-1) -> Reshape
    x = rnd("torch_chain", [2, 3, 4])
    add("torch_shape_chain",
        [N("Shape", ["x"], ["shp"], name="/Shape"),
         N("Constant", [], ["zero"], name="/Constant",
           value=numpy_helper.from_array(np.array(0, i64))),
         N("Gather", ["shp", "zero"], ["batch"], name="/Gather", axis=0),
         N("Constant", [], ["ax0"], name="/Constant_1",
           value=numpy_helper.from_array(np.array([0], i64))),
         N("Unsqueeze", ["batch", "ax0"], ["batch1"], name="/Unsqueeze"),
         N("Constant", [], ["m1"], name="/Constant_2",
           value=numpy_helper.from_array(np.array([-1], i64))),
         N("Concat", ["batch1", "m1"], ["newshape"], name="/Concat", axis=0),
         N("Reshape", ["x", "newshape"], ["y"], name="/Reshape")],
        [("x", x)], [("y", x.reshape(2, 12))])
    return C


def _script_hash():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("-k", dest="filter", help="only cases whose name contains this")
    a = ap.parse_args(argv)
    t0 = time.time()
    stamp = os.path.join(a.outdir, ".stamp.json")
    h = _script_hash()
    if not a.filter and os.path.exists(stamp):
        with open(stamp) as f:
            st = json.load(f)
        if st.get("hash") == h and all(
                os.path.exists(os.path.join(a.outdir, c, "case.json")) for c in st["cases"]):
            print("op models: %d cases cached" % len(st["cases"]), flush=True)
            return 0
    cases = build_cases()
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, dup
    os.makedirs(a.outdir, exist_ok=True)
    if os.path.exists(stamp):
        os.remove(stamp)
    n = 0
    for c in cases:
        if a.filter and a.filter not in c.name:
            continue
        c.write(a.outdir)
        n += 1
    if not a.filter:
        for d in os.listdir(a.outdir):
            p = os.path.join(a.outdir, d)
            if os.path.isdir(p) and d not in names:
                shutil.rmtree(p)
        with open(stamp, "w") as f:
            json.dump({"hash": h, "cases": names}, f)
    print("op models: %d cases written in %.1fs" % (n, time.time() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
