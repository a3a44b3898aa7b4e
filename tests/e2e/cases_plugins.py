"""End-to-end tests of the op packages that ship in plugins/.

  seed-lenet  (org.glow.lenet, seed interface): ScaledTanh, L2Pool
  gcx-ops     (org.graphcc.examples, graphcc interface): PackedLinear,
              RowSoftmax, ClampedAdd

Models are built here with onnx.helper (no ONNX checker: custom domains)
into WORK/models/plugins/<case>/ with their inputs (.npy) and NumPy
references (never graphcc's), cached by this file's hash. Cases:

  plugins/run/<case>       graphcc run MODEL --ops ... against the reference
                           (<case>.repeat: --repeat 3 --threads 2)
  plugins/compile/<case>   graphcc compile exits 0 and prints, for every
                           custom node, a line with its operation, flavour,
                           library and symbol
  plugins/check/<pkg>      graphcc check on each manifest exits 0
  plugins/refuse/<what>    verify rejections, manifest constraints (size,
                           maxDims, dtypes, constant), a kernel failing
                           through set_error, a model without its package:
                           exit 1, one message naming the node, no output
  plugins/env/<what>       GRAPHCC_OPS_PATH (files, a folder) instead of --ops

The packages are built by `make plugins` into BUILD/plugins/<pkg>/.
"""
import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import zlib

import numpy as np

import run

LENET, GCX = "org.glow.lenet", "org.graphcc.examples"
PKG_OF_DOMAIN = {LENET: "seed-lenet", GCX: "gcx-ops"}
# (domain, op_type, flavour) -> (implementation library, kernel symbol), as
# the manifests say.
BINDINGS = {
    (LENET, "ScaledTanh", "scaledTanhF32"): ("libscaledtanh_interp.so", "scaledTanhF32"),
    (LENET, "ScaledTanh", "scaledTanhF16"): ("libscaledtanh_interp.so", "scaledTanhF16"),
    (LENET, "L2Pool", "l2PoolF32"): ("libl2pool_interp.so", "l2PoolF32"),
    (GCX, "PackedLinear", "packedLinearF32"): ("libgcx_interp.so", "packed_linear_f32"),
    (GCX, "RowSoftmax", "rowSoftmaxF32"): ("libgcx_interp.so", "row_softmax_f32"),
    (GCX, "ClampedAdd", "clampedAddF32"): ("libgcx_interp.so", "clamped_add_f32"),
    (GCX, "ClampedAdd", "clampedAddI32"): ("libgcx_interp.so", "clamped_add_i32"),
}
ST_ALPHA, ST_BETA = 1.7159, 0.6667  # the manifest's defaults

# Tolerances (rtol, atol), with why.
EXACT = (0.0, 0.0)            # clamp of one float32 add, int32: bit-exact
ELEMWISE = (1e-5, 1e-6)       # tanhf / exp in float32 vs float64
ACCUM = (1e-4, 5e-5)          # float32 sums of many products (conv, gemm)
HALF = (2e-3, 1e-3)           # float16 output: one ulp at 1.7 is ~1e-3

f16, f32, f64, i32 = np.float16, np.float32, np.float64, np.int32
HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------- references

def windows(x, kh, kw, sh=1, sw=1):
    """[N, C, H, W] -> [N, C, OH, OW, kh, kw] views, no padding."""
    v = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    return v[:, :, ::sh, ::sw]


def conv_ref(x, w, b, pad=0):
    x = np.pad(x.astype(f64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    y = np.einsum("ncijhw,ochw->noij", windows(x, w.shape[2], w.shape[3]), w.astype(f64))
    return y + b.astype(f64)[None, :, None, None]


def scaled_tanh_ref(x, alpha=ST_ALPHA, beta=ST_BETA):
    # The kernel gets the params as float32.
    return float(f32(alpha)) * np.tanh(float(f32(beta)) * x.astype(f64))


def l2pool_ref(x, kernel=(2, 2), stride=(2, 2)):
    v = windows(x.astype(f64), kernel[0], kernel[1], stride[0], stride[1])
    return np.sqrt((v * v).sum(axis=(-2, -1)))


def softmax_rows(x, temperature=1.0):
    z = x.astype(f64) / float(f32(temperature))
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def clamped_add_ref(a, b, low=0.0, high=6.0):
    if a.dtype == i32:
        s = a.astype(np.int64) + b.astype(np.int64)
        lo = max(math.ceil(float(f32(low))), np.iinfo(i32).min)
        hi = min(math.floor(float(f32(high))), np.iinfo(i32).max)
        return np.clip(s, lo, hi).astype(i32)
    return np.clip(a + b, f32(low), f32(high)).astype(f32)


# ---------------------------------------------------------------- models

class Case:
    """One model. inputs/outputs: [(name, array)]; outputs hold the
    references. out_shapes[name] = None leaves that output's shape
    undeclared (graphcc must infer it through the package)."""

    def __init__(self, name, nodes, inputs, outputs, inits=None, tol=ELEMWISE,
                 out_shapes=None, flavours=None, note=None):
        self.name, self.nodes = name, nodes
        self.inputs = [(n, np.asarray(a)) for n, a in inputs]
        self.outputs = [(n, np.asarray(a)) for n, a in outputs]
        self.inits = list((inits or {}).items())
        self.tol, self.note = tol, note
        self.out_shapes = out_shapes or {}
        # node name -> flavour graphcc must bind it to
        self.flavours = flavours or {}

    def domains(self):
        return sorted({n.domain for n in self.nodes if n.domain not in ("", "ai.onnx")})

    def model(self):
        import onnx
        from onnx import helper, numpy_helper

        def vi(n, a, shape):
            return helper.make_tensor_value_info(
                n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], shape)

        ins = [vi(n, a, list(a.shape)) for n, a in self.inputs]
        outs = [vi(n, a, self.out_shapes.get(n, list(a.shape))) for n, a in self.outputs]
        inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in self.inits]
        g = helper.make_graph(self.nodes, self.name, ins, outs, inits)
        imports = [helper.make_opsetid("", 13)]
        imports += [helper.make_opsetid(d, 1) for d in self.domains()]
        m = helper.make_model(g, opset_imports=imports, producer_name="graphcc-e2e-plugins")
        m.ir_version = 8
        return m

    def write(self, root):
        d = os.path.join(root, self.name)
        os.makedirs(d)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(self.model().SerializeToString())
        for i, (_, a) in enumerate(self.inputs):
            np.save(os.path.join(d, "input_%d.npy" % i), a)
        for j, (_, a) in enumerate(self.outputs):
            np.save(os.path.join(d, "expected_%d.npy" % j), a)
        custom = [{"node": n.name, "domain": n.domain, "op": n.op_type,
                   "flavour": self.flavours[n.name]}
                  for n in self.nodes if n.domain in PKG_OF_DOMAIN]
        meta = {"inputs": [n for n, _ in self.inputs],
                "outputs": [n for n, _ in self.outputs],
                "rtol": self.tol[0], "atol": self.tol[1],
                "packages": [PKG_OF_DOMAIN[d] for d in self.domains()],
                "custom": custom}
        if self.note:
            meta["note"] = self.note
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump(meta, f, indent=1)


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def node(op, ins, outs, name, domain="", **attrs):
    from onnx import helper
    return helper.make_node(op, ins, outs, name=name, domain=domain, **attrs)


def lenet_cases():
    cs = []

    r = rng("st_f32")
    x = (r.standard_normal((2, 3, 4, 5)) * 2).astype(f32)
    cs.append(Case("lenet_scaled_tanh_f32",
                   [node("ScaledTanh", ["x"], ["y"], "squash", LENET, alpha=1.5, beta=0.8)],
                   [("x", x)], [("y", scaled_tanh_ref(x, 1.5, 0.8).astype(f32))],
                   flavours={"squash": "scaledTanhF32"}))

    r = rng("st_defaults")
    x = (r.standard_normal((6, 7)) * 3).astype(f32)
    cs.append(Case("lenet_scaled_tanh_defaults",
                   [node("ScaledTanh", ["x"], ["y"], "squash_defaults", LENET)],
                   [("x", x)], [("y", scaled_tanh_ref(x).astype(f32))],
                   flavours={"squash_defaults": "scaledTanhF32"}))

    r = rng("st_f16")
    x = (r.standard_normal((4, 16)) * 2).astype(f16)
    x[0, :4] = [0.0, -0.0, 6e-5, -6e-8]  # zeros and float16 subnormals
    cs.append(Case("lenet_scaled_tanh_f16",
                   [node("ScaledTanh", ["x"], ["y"], "squash_half", LENET, beta=1.25)],
                   [("x", x)], [("y", scaled_tanh_ref(x, beta=1.25).astype(f16))],
                   tol=HALF, flavours={"squash_half": "scaledTanhF16"},
                   note="float16 flavour: computed in float32, rounded to half"))

    r = rng("l2_default")
    x = r.standard_normal((2, 3, 6, 8)).astype(f32)
    cs.append(Case("lenet_l2pool_defaults",
                   [node("L2Pool", ["x"], ["y"], "pool_defaults", LENET)],
                   [("x", x)], [("y", l2pool_ref(x).astype(f32))],
                   flavours={"pool_defaults": "l2PoolF32"}))

    r = rng("l2_overlap")
    x = r.standard_normal((1, 2, 7, 9)).astype(f32)
    cs.append(Case("lenet_l2pool_overlap_inferred",
                   [node("L2Pool", ["x"], ["y"], "pool_overlap", LENET,
                         kernel_size=[3, 2], stride=[1, 3])],
                   [("x", x)], [("y", l2pool_ref(x, (3, 2), (1, 3)).astype(f32))],
                   out_shapes={"y": None}, flavours={"pool_overlap": "l2PoolF32"},
                   note="output shape left undeclared: inferred by the package"))

    # Conv -> ScaledTanh -> L2Pool -> Sub -> Relu: built-in ops around
    # custom ones, intermediate shapes known only through the package.
    r = rng("lenet_mix")
    x = r.standard_normal((1, 1, 12, 12)).astype(f32)
    w = (r.standard_normal((4, 1, 3, 3)) * 0.5).astype(f32)
    b = (r.standard_normal(4) * 0.1).astype(f32)
    c = np.array(0.9, f32)
    h = l2pool_ref(scaled_tanh_ref(conv_ref(x, w, b)))
    cs.append(Case("lenet_conv_mix",
                   [node("Conv", ["x", "w", "b"], ["c1"], "conv"),
                    node("ScaledTanh", ["c1"], ["t1"], "conv_squash", LENET),
                    node("L2Pool", ["t1"], ["p1"], "conv_pool", LENET),
                    node("Sub", ["p1", "shift"], ["s1"], "shift_down"),
                    node("Relu", ["s1"], ["y"], "relu")],
                   [("x", x)], [("y", np.maximum(h - float(c), 0).astype(f32))],
                   inits={"w": w, "b": b, "shift": c}, tol=ACCUM,
                   flavours={"conv_squash": "scaledTanhF32", "conv_pool": "l2PoolF32"}))

    # LeNet-5 with its original squashing and (L2) subsampling layers.
    r = rng("lenet5")
    x = r.standard_normal((2, 1, 28, 28)).astype(f32)

    def param(*shape, fan_in):
        return (r.standard_normal(shape) / math.sqrt(fan_in)).astype(f32)
    w1, b1 = param(6, 1, 5, 5, fan_in=25), param(6, fan_in=25)
    w2, b2 = param(16, 6, 5, 5, fan_in=150), param(16, fan_in=150)
    w3, b3 = param(120, 400, fan_in=400), param(120, fan_in=400)
    w4, b4 = param(84, 120, fan_in=120), param(84, fan_in=120)
    w5, b5 = param(10, 84, fan_in=84), param(10, fan_in=84)
    h = l2pool_ref(scaled_tanh_ref(conv_ref(x, w1, b1, pad=2)))          # 6x14x14
    h = l2pool_ref(scaled_tanh_ref(conv_ref(h, w2, b2)))                 # 16x5x5
    h = h.reshape(2, 400)
    h = scaled_tanh_ref(h @ w3.T.astype(f64) + b3)
    h = np.maximum(h @ w4.T.astype(f64) + b4, 0)
    y = h @ w5.T.astype(f64) + b5
    cs.append(Case("lenet5",
                   [node("Conv", ["x", "w1", "b1"], ["c1"], "c1", pads=[2, 2, 2, 2]),
                    node("ScaledTanh", ["c1"], ["t1"], "t1", LENET),
                    node("L2Pool", ["t1"], ["s2"], "s2", LENET),
                    node("Conv", ["s2", "w2", "b2"], ["c3"], "c3"),
                    node("ScaledTanh", ["c3"], ["t3"], "t3", LENET),
                    node("L2Pool", ["t3"], ["s4"], "s4", LENET, kernel_size=[2, 2],
                         stride=[2, 2]),
                    node("Flatten", ["s4"], ["f"], "flatten", axis=1),
                    node("Gemm", ["f", "w3", "b3"], ["g5"], "f5", transB=1),
                    node("ScaledTanh", ["g5"], ["t5"], "t5", LENET),
                    node("Gemm", ["t5", "w4", "b4"], ["g6"], "f6", transB=1),
                    node("Relu", ["g6"], ["r6"], "r6"),
                    node("Gemm", ["r6", "w5", "b5"], ["logits"], "out", transB=1)],
                   [("x", x)], [("logits", y.astype(f32))],
                   inits={"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "b3": b3,
                          "w4": w4, "b4": b4, "w5": w5, "b5": b5},
                   tol=ACCUM,
                   flavours={"t1": "scaledTanhF32", "t3": "scaledTanhF32",
                             "t5": "scaledTanhF32", "s2": "l2PoolF32", "s4": "l2PoolF32"}))
    return cs


def gcx_cases():
    cs = []

    r = rng("pl")
    x = r.standard_normal((3, 16)).astype(f32)
    w = r.standard_normal((8, 16)).astype(f32)
    b = r.standard_normal(8).astype(f32)
    cs.append(Case("gcx_packed_linear",
                   [node("PackedLinear", ["x", "W", "b"], ["y"], "dense", GCX)],
                   [("x", x)], [("y", (x.astype(f64) @ w.T.astype(f64) + b).astype(f32))],
                   inits={"W": w, "b": b}, tol=ACCUM,
                   flavours={"dense": "packedLinearF32"}))

    r = rng("pl_nobias")
    x = r.standard_normal((2, 5, 12)).astype(f32)
    w = r.standard_normal((7, 12)).astype(f32)
    cs.append(Case("gcx_packed_linear_no_bias_rank3",
                   [node("PackedLinear", ["x", "W"], ["y"], "dense_nobias", GCX)],
                   [("x", x)], [("y", (x.astype(f64) @ w.T.astype(f64)).astype(f32))],
                   inits={"W": w}, tol=ACCUM,
                   flavours={"dense_nobias": "packedLinearF32"}))

    r = rng("pl_empty")
    x = r.standard_normal((4, 6)).astype(f32)
    w = r.standard_normal((3, 6)).astype(f32)
    cs.append(Case("gcx_packed_linear_empty_bias",
                   [node("PackedLinear", ["x", "W", ""], ["y"], "dense_emptyb", GCX)],
                   [("x", x)], [("y", (x.astype(f64) @ w.T.astype(f64)).astype(f32))],
                   inits={"W": w}, tol=ACCUM,
                   flavours={"dense_emptyb": "packedLinearF32"},
                   note='optional input b given as "" (absent)'))

    r = rng("sm")
    x = (r.standard_normal((4, 10)) * 3).astype(f32)
    cs.append(Case("gcx_row_softmax",
                   [node("RowSoftmax", ["x"], ["y"], "soft", GCX, temperature=0.5)],
                   [("x", x)], [("y", softmax_rows(x, 0.5).astype(f32))],
                   flavours={"soft": "rowSoftmaxF32"}))

    # A wide row (scratch of 8000 bytes), fed by a built-in node: a
    # candidate for running in place.
    r = rng("sm_wide")
    x = r.standard_normal((2, 3, 1000)).astype(f32)
    cs.append(Case("gcx_row_softmax_wide_after_mul",
                   [node("Mul", ["x", "two"], ["x2"], "double"),
                    node("RowSoftmax", ["x2"], ["y"], "soft_wide", GCX)],
                   [("x", x)], [("y", softmax_rows(x * f32(2)).astype(f32))],
                   inits={"two": np.array(2, f32)}, tol=(1e-5, 1e-9),
                   flavours={"soft_wide": "rowSoftmaxF32"}))

    r = rng("ca_f32")
    a = r.standard_normal((2, 3, 4)).astype(f32)
    b = r.standard_normal((2, 3, 4)).astype(f32)
    cs.append(Case("gcx_clamped_add_f32",
                   [node("ClampedAdd", ["a", "b"], ["y"], "clamp_f", GCX, low=-0.5,
                         high=0.75)],
                   [("a", a), ("b", b)], [("y", clamped_add_ref(a, b, -0.5, 0.75))],
                   tol=EXACT, flavours={"clamp_f": "clampedAddF32"}))

    r = rng("ca_f32_def")
    a = (r.standard_normal((5, 6)) * 5).astype(f32)
    b = (r.standard_normal((5, 6)) * 5).astype(f32)
    cs.append(Case("gcx_clamped_add_f32_defaults",
                   [node("ClampedAdd", ["a", "b"], ["y"], "clamp_f_def", GCX)],
                   [("a", a), ("b", b)], [("y", clamped_add_ref(a, b))],
                   tol=EXACT, flavours={"clamp_f_def": "clampedAddF32"}))

    r = rng("ca_i32")
    big = np.iinfo(i32).max
    a = r.integers(-2000, 2000, (3, 4)).astype(i32)
    b = r.integers(-2000, 2000, (3, 4)).astype(i32)
    a[0, :] = [big, big - 5, -big - 1, 7]  # sums past int32 must clamp, not wrap
    b[0, :] = [big, 10, -3, -1500]
    cs.append(Case("gcx_clamped_add_i32",
                   [node("ClampedAdd", ["a", "b"], ["y"], "clamp_i", GCX, low=-1000.5,
                         high=2.5e9)],
                   [("a", a), ("b", b)], [("y", clamped_add_ref(a, b, -1000.5, 2.5e9))],
                   tol=EXACT, flavours={"clamp_i": "clampedAddI32"}))

    r = rng("ca_i32_def")
    a = r.integers(-10, 10, (7,)).astype(i32)
    b = r.integers(-10, 10, (7,)).astype(i32)
    cs.append(Case("gcx_clamped_add_i32_defaults",
                   [node("ClampedAdd", ["a", "b"], ["y"], "clamp_i_def", GCX)],
                   [("a", a), ("b", b)], [("y", clamped_add_ref(a, b))],
                   tol=EXACT, flavours={"clamp_i_def": "clampedAddI32"}))

    # Both flavours in one model.
    r = rng("ca_both")
    af, bf = r.standard_normal((2, 3)).astype(f32), r.standard_normal((2, 3)).astype(f32)
    ai = r.integers(-5, 10, (2, 3)).astype(i32)
    bi = r.integers(-5, 10, (2, 3)).astype(i32)
    cs.append(Case("gcx_clamped_add_both_flavours",
                   [node("ClampedAdd", ["af", "bf"], ["yf"], "both_float", GCX, low=-1.0,
                         high=1.0),
                    node("ClampedAdd", ["ai", "bi"], ["yi"], "both_int", GCX, low=-2.0,
                         high=9.0)],
                   [("af", af), ("bf", bf), ("ai", ai), ("bi", bi)],
                   [("yf", clamped_add_ref(af, bf, -1, 1)),
                    ("yi", clamped_add_ref(ai, bi, -2, 9))],
                   tol=EXACT,
                   flavours={"both_float": "clampedAddF32", "both_int": "clampedAddI32"}))

    # All three operations among built-in ones.
    r = rng("gcx_mix")
    x = r.standard_normal((4, 16)).astype(f32)
    w = (r.standard_normal((16, 16)) * 0.5).astype(f32)
    b = r.standard_normal(16).astype(f32)
    h = np.maximum(x, 0).astype(f64) @ w.T.astype(f64) + b
    h = clamped_add_ref(h.astype(f32), x, -2.0, 2.0)
    y = softmax_rows(h, 0.7) * 10
    cs.append(Case("gcx_mixed",
                   [node("Relu", ["x"], ["rx"], "relu"),
                    node("PackedLinear", ["rx", "W", "b"], ["h"], "mix_dense", GCX),
                    node("ClampedAdd", ["h", "x"], ["hc"], "mix_residual", GCX, low=-2.0,
                         high=2.0),
                    node("RowSoftmax", ["hc"], ["s"], "mix_soft", GCX, temperature=0.7),
                    node("Mul", ["s", "ten"], ["y"], "scale")],
                   [("x", x)], [("y", y.astype(f32))],
                   inits={"W": w, "b": b, "ten": np.array(10, f32)}, tol=ACCUM,
                   flavours={"mix_dense": "packedLinearF32", "mix_residual": "clampedAddF32",
                             "mix_soft": "rowSoftmaxF32"}))

    # A pure operation on constants only (graphcc may fold it at compile
    # time, running the kernel then): the result must not change.
    r = rng("ca_const")
    c1 = r.standard_normal((3, 4)).astype(f32) * 4
    c2 = r.standard_normal((3, 4)).astype(f32) * 4
    x = r.standard_normal((3, 4)).astype(f32)
    cs.append(Case("gcx_clamped_add_on_constants",
                   [node("ClampedAdd", ["c1", "c2"], ["c"], "const_clamp", GCX),
                    node("Add", ["x", "c"], ["y"], "add")],
                   [("x", x)], [("y", (x + clamped_add_ref(c1, c2)).astype(f32))],
                   inits={"c1": c1, "c2": c2}, tol=EXACT,
                   flavours={"const_clamp": "clampedAddF32"}))
    # The same with init/destroy state and scratch memory, which folding must
    # provide as a run would.
    r = rng("pl_sm_const")
    c = r.standard_normal((3, 5)).astype(f32)
    w = r.standard_normal((6, 5)).astype(f32)
    b = r.standard_normal(6).astype(f32)
    x = r.standard_normal((3, 6)).astype(f32)
    s = softmax_rows(c.astype(f64) @ w.T.astype(f64) + b)
    cs.append(Case("gcx_stateful_on_constants",
                   [node("PackedLinear", ["c", "W", "b"], ["h"], "const_dense", GCX),
                    node("RowSoftmax", ["h"], ["s"], "const_soft", GCX),
                    node("Add", ["x", "s"], ["y"], "add")],
                   [("x", x)], [("y", (x + s).astype(f32))],
                   inits={"c": c, "W": w, "b": b}, tol=ACCUM,
                   flavours={"const_dense": "packedLinearF32",
                             "const_soft": "rowSoftmaxF32"}))

    # Both packages in one model.
    r = rng("both_pkgs")
    x = r.standard_normal((2, 1, 12, 12)).astype(f32)
    cw = (r.standard_normal((4, 1, 3, 3)) * 0.5).astype(f32)
    cb = (r.standard_normal(4) * 0.1).astype(f32)
    w = (r.standard_normal((10, 100)) * 0.2).astype(f32)
    b = r.standard_normal(10).astype(f32)
    h = l2pool_ref(scaled_tanh_ref(conv_ref(x, cw, cb))).reshape(2, 100)
    y = softmax_rows(h @ w.T.astype(f64) + b)
    cs.append(Case("mix_both_packages",
                   [node("Conv", ["x", "cw", "cb"], ["c"], "conv"),
                    node("ScaledTanh", ["c"], ["t"], "both_squash", LENET),
                    node("L2Pool", ["t"], ["p"], "both_pool", LENET),
                    node("Flatten", ["p"], ["f"], "flatten", axis=1),
                    node("PackedLinear", ["f", "W", "b"], ["z"], "both_dense", GCX),
                    node("RowSoftmax", ["z"], ["y"], "both_soft", GCX)],
                   [("x", x)], [("y", y.astype(f32))],
                   inits={"cw": cw, "cb": cb, "W": w, "b": b}, tol=ACCUM,
                   flavours={"both_squash": "scaledTanhF32", "both_pool": "l2PoolF32",
                             "both_dense": "packedLinearF32", "both_soft": "rowSoftmaxF32"}))
    return cs


# Models graphcc must refuse: (name, case, command, [strings the message
# must contain]). `compile` refusals are bind-time; `run` ones may be either.
def refusal_cases():
    out = []
    x3 = np.zeros((2, 6, 8), f32)
    x4 = np.zeros((1, 2, 6, 8), f32)

    def pool(tag, x, **attrs):
        return Case("refuse_" + tag, [node("L2Pool", ["x"], ["y"], tag, LENET, **attrs)],
                    [("x", x)], [("y", np.zeros((1, 1, 1, 1), f32))], out_shapes={"y": None},
                    flavours={tag: "l2PoolF32"})
    # The seed verify says no (it cannot say why): the message names the node.
    out.append(("l2pool-rank3-verify", pool("pool_rank3", x3), "compile", ["pool_rank3"]))
    out.append(("l2pool-zero-kernel-verify",
                pool("pool_zero_kernel", x4, kernel_size=[0, 2]), "compile",
                ["pool_zero_kernel"]))
    out.append(("l2pool-window-too-big-verify",
                pool("pool_too_big", x4, kernel_size=[7, 2]), "compile", ["pool_too_big"]))
    # The manifest's size: 2 is graphcc's to enforce.
    out.append(("l2pool-kernel-size-length",
                pool("pool_three_dims", x4, kernel_size=[2, 2, 2]), "compile",
                ["pool_three_dims", "kernel_size"]))
    # maxDims: 4.
    out.append(("scaled-tanh-rank5-maxdims",
                Case("refuse_rank5", [node("ScaledTanh", ["x"], ["y"], "squash_rank5", LENET)],
                     [("x", np.zeros((1, 1, 1, 2, 2), f32))],
                     [("y", np.zeros((1, 1, 1, 2, 2), f32))],
                     flavours={"squash_rank5": "scaledTanhF32"}),
                "compile", ["squash_rank5"]))
    # The graphcc verify explains itself through set_error.
    out.append(("clamped-add-shape-mismatch-verify",
                Case("refuse_clamp_shapes",
                     [node("ClampedAdd", ["a", "b"], ["y"], "clamp_mismatch", GCX)],
                     [("a", np.zeros((2, 3), f32)), ("b", np.zeros((3, 2), f32))],
                     [("y", np.zeros((2, 3), f32))], flavours={"clamp_mismatch": "-"}),
                "compile", ["clamp_mismatch", "must have the same shape"]))
    # dtypes: [float32, int32].
    out.append(("clamped-add-float64-dtypes",
                Case("refuse_clamp_f64",
                     [node("ClampedAdd", ["a", "b"], ["y"], "clamp_double", GCX)],
                     [("a", np.zeros((2, 3), f64)), ("b", np.zeros((2, 3), f64))],
                     [("y", np.zeros((2, 3), f64))], flavours={"clamp_double": "-"}),
                "compile", ["clamp_double"]))
    # constant: true on W.
    out.append(("packed-linear-W-not-constant",
                Case("refuse_pl_input_w",
                     [node("PackedLinear", ["x", "W"], ["y"], "dense_fed_w", GCX)],
                     [("x", np.zeros((2, 4), f32)), ("W", np.zeros((3, 4), f32))],
                     [("y", np.zeros((2, 3), f32))], flavours={"dense_fed_w": "-"}),
                "compile", ["dense_fed_w", "W"]))
    # A kernel failure reported with set_error fails the run with exit 1.
    a = np.arange(12, dtype=f32).reshape(3, 4)
    b = np.ones((3, 4), f32)
    a[1, 0] = np.nan
    out.append(("clamped-add-nan-kernel-failure",
                Case("refuse_clamp_nan",
                     [node("ClampedAdd", ["a", "b"], ["y"], "clamp_sees_nan", GCX),
                      node("Relu", ["y"], ["out"], "after")],
                     [("a", a), ("b", b)], [("out", np.zeros((3, 4), f32))],
                     flavours={"clamp_sees_nan": "clampedAddF32"}),
                "run", ["clamp_sees_nan", "NaN at flat index 4", "nan=error"]))
    return out


# ---------------------------------------------------------------- generation

def generate(root):
    """Writes every model under root (cached by this file's hash)."""
    with open(os.path.abspath(__file__), "rb") as f:
        stamp = hashlib.sha256(f.read() + np.__version__.encode()).hexdigest()
    stamp_path = os.path.join(root, "stamp")
    try:
        with open(stamp_path) as f:
            if f.read().strip() == stamp:
                return
    except OSError:
        pass
    tmp = root + ".tmp"
    if os.path.isdir(tmp):
        shutil.rmtree(tmp)
    os.makedirs(tmp)
    for c in lenet_cases() + gcx_cases() + [c for _, c, _, _ in refusal_cases()]:
        c.write(tmp)
    with open(os.path.join(tmp, "stamp"), "w") as f:
        f.write(stamp + "\n")
    if os.path.isdir(root):
        shutil.rmtree(root)
    os.replace(tmp, root)


# ---------------------------------------------------------------- running

def graphcc(ctx, args, ops_path=None):
    """run.run_graphcc, with GRAPHCC_OPS_PATH set to ops_path or unset."""
    env = dict(run.ENV)
    env.pop("GRAPHCC_OPS_PATH", None)
    if ops_path is not None:
        env["GRAPHCC_OPS_PATH"] = ops_path
    try:
        p = subprocess.run([ctx.graphcc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=run.TIMEOUT, cwd=ctx.work, env=env)
    except subprocess.TimeoutExpired as e:
        return None, run._txt(e.stdout), run._txt(e.stderr)
    err = run._txt(p.stderr)
    if run.SANITIZER_RE.search(err):
        return run.SANITIZER_RC, run._txt(p.stdout), err
    return p.returncode, run._txt(p.stdout), err


def manifest(ctx, pkg):
    return os.path.join(ctx.plugins, pkg, pkg + ".yaml")


def missing_packages(ctx, pkgs):
    gone = [manifest(ctx, p) for p in pkgs if not os.path.exists(manifest(ctx, p))]
    if gone:
        return run.Result(False, "package not built: %s (make plugins)" % ", ".join(gone))
    return None


def load(ctx, root, name):
    d = os.path.join(root, name)
    with open(os.path.join(d, "case.json")) as f:
        return d, json.load(f)


def ops_args(ctx, meta):
    args = []
    for p in meta["packages"]:
        args += ["--ops", manifest(ctx, p)]
    return args


def input_args(d, meta):
    args = []
    for i, n in enumerate(meta["inputs"]):
        args += ["--input", "%s=%s" % (n, os.path.join(d, "input_%d.npy" % i))]
    return args


def run_case(ctx, root, name, ops_path=None, tag="run", extra=()):
    d, meta = load(ctx, root, name)
    gone = missing_packages(ctx, meta["packages"])
    if gone:
        return gone
    out = run.fresh_dir(os.path.join(ctx.out, "plugins", tag, name))
    args = ["run", os.path.join(d, "model.onnx")]
    if ops_path is None:
        args += ops_args(ctx, meta)
    args += input_args(d, meta) + list(extra) + ["--output-dir", out]
    rc, _, err = graphcc(ctx, args, ops_path)
    if rc != 0:
        return run.Result(False, run.describe_rc(rc), err)
    for j, n in enumerate(meta["outputs"]):
        want = np.load(os.path.join(d, "expected_%d.npy" % j))
        why = run.compare(os.path.join(out, n + ".npy"), want, meta["rtol"], meta["atol"])
        if why:
            return run.Result(False, why, err)
    return run.Result(True, "rtol %g atol %g" % (meta["rtol"], meta["atol"]))


def compile_case(ctx, root, name):
    """Every custom node gets its own line naming the operation, the flavour,
    the implementation library and the kernel symbol."""
    d, meta = load(ctx, root, name)
    gone = missing_packages(ctx, meta["packages"])
    if gone:
        return gone
    args = ["compile", os.path.join(d, "model.onnx")] + ops_args(ctx, meta)
    rc, sout, err = graphcc(ctx, args)
    if rc != 0:
        return run.Result(False, run.describe_rc(rc), err)
    lines = sout.splitlines()
    want = {}
    for c in meta["custom"]:
        lib, sym = BINDINGS[(c["domain"], c["op"], c["flavour"])]
        want.setdefault((c["op"], c["flavour"], lib, sym), []).append(c["node"])
    for (op, flavour, lib, sym), nodes in sorted(want.items()):
        hits = [ln for ln in lines
                if re.search(r"\b%s\b" % op, ln) and re.search(r"\b%s\b" % flavour, ln)
                and lib in ln and re.search(r"\b%s\b" % sym, ln)]
        if len(hits) < len(nodes):
            return run.Result(False, "%d line(s) name %s, flavour %s, %s and symbol %s; "
                              "expected one for each of the nodes %s"
                              % (len(hits), op, flavour, lib, sym, ", ".join(nodes)),
                              sout + err)
    return run.Result(True)


def check_case(ctx, pkg, ops):
    gone = missing_packages(ctx, [pkg])
    if gone:
        return gone
    rc, sout, err = graphcc(ctx, ["check", manifest(ctx, pkg)])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc), err)
    missing = [op for op in ops if op not in sout + err]
    if missing:
        return run.Result(False, "check does not mention %s" % ", ".join(missing), sout + err)
    return run.Result(True)


def refuse_compile(ctx, root, name, must_name, with_ops=True):
    """compile must exit 1 with one short message naming every string of
    must_name."""
    d, meta = load(ctx, root, name)
    gone = missing_packages(ctx, meta["packages"])
    if gone:
        return gone
    out = run.fresh_dir(os.path.join(ctx.out, "plugins", "refuse", name))
    args = ["compile", os.path.join(d, "model.onnx")]
    if with_ops:
        args += ops_args(ctx, meta)
    rc, sout, err = graphcc(ctx, args)
    return judge_refusal(rc, sout, err, must_name, out)


def refuse_run(ctx, root, name, must_name, with_ops=True):
    d, meta = load(ctx, root, name)
    gone = missing_packages(ctx, meta["packages"])
    if gone:
        return gone
    out = run.fresh_dir(os.path.join(ctx.out, "plugins", "refuse", name))
    args = ["run", os.path.join(d, "model.onnx")]
    if with_ops:
        args += ops_args(ctx, meta)
    args += input_args(d, meta) + ["--output-dir", out]
    rc, sout, err = graphcc(ctx, args)
    return judge_refusal(rc, sout, err, must_name, out)


def judge_refusal(rc, sout, err, must_name, out):
    if rc is None or rc < 0 or rc in run.CRASH_CODES:
        return run.Result(False, "crashed or hung: " + run.describe_rc(rc), err)
    if rc != 1:
        return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), sout + err)
    msg = err.strip()
    if not msg:
        return run.Result(False, "exit 1 but nothing on stderr", sout)
    lines = [ln for ln in msg.splitlines() if ln.strip()]
    if len(lines) > 5:
        return run.Result(False, "%d lines on stderr, expected one message" % len(lines), err)
    for s in must_name:
        if s not in msg:
            return run.Result(False, "message does not name %r" % s, err)
    written = os.listdir(out) if os.path.isdir(out) else []
    if written:
        return run.Result(False, "output written anyway: %s" % ", ".join(sorted(written)), err)
    return run.Result(True)


# ---------------------------------------------------------------- cases

def cases(ctx):
    root = os.path.join(ctx.work, "models", "plugins")
    try:
        generate(root)
    except Exception as e:  # show it as a failing case, not a crash of run.py
        why = "%s: %s" % (type(e).__name__, e)
        return [("plugins/generation", lambda: run.Result(False, why))]

    out = []
    names = sorted(n for n in os.listdir(root)
                   if os.path.isdir(os.path.join(root, n)) and not n.startswith("refuse_"))
    for n in names:
        out.append(("plugins/run/" + n, lambda n=n: run_case(ctx, root, n)))
        if not n.endswith("_on_constants"):  # their nodes may be folded away
            out.append(("plugins/compile/" + n, lambda n=n: compile_case(ctx, root, n)))

    # Several runs of one loaded program (state from init, scratch and the
    # arena reused), allowed two threads: the last outputs must still be right.
    for n in ("lenet5", "gcx_mixed", "mix_both_packages"):
        out.append(("plugins/run/%s.repeat" % n,
                    lambda n=n: run_case(ctx, root, n, tag="repeat",
                                         extra=["--repeat", "3", "--threads", "2"])))

    out.append(("plugins/check/seed-lenet",
                lambda: check_case(ctx, "seed-lenet", ["ScaledTanh", "L2Pool"])))
    out.append(("plugins/check/gcx-ops",
                lambda: check_case(ctx, "gcx-ops", ["PackedLinear", "RowSoftmax",
                                                    "ClampedAdd"])))

    for tag, c, cmd, must in refusal_cases():
        fn = refuse_compile if cmd == "compile" else refuse_run
        out.append(("plugins/refuse/" + tag,
                    lambda fn=fn, n=c.name, m=must: fn(ctx, root, n, m)))
    # Without its package a custom node cannot run: named, not a crash.
    out.append(("plugins/refuse/no-package-for-node",
                lambda: refuse_run(ctx, root, "lenet_scaled_tanh_f32", ["squash"],
                                   with_ops=False)))

    # GRAPHCC_OPS_PATH instead of --ops: manifest files, then a folder.
    both = ":".join([manifest(ctx, "seed-lenet"), manifest(ctx, "gcx-ops")])
    out.append(("plugins/env/ops-path-manifests",
                lambda: run_case(ctx, root, "mix_both_packages", ops_path=both,
                                 tag="env-files")))
    folder = os.path.join(ctx.plugins, "gcx-ops") + os.sep
    out.append(("plugins/env/ops-path-folder",
                lambda: run_case(ctx, root, "gcx_mixed", ops_path=folder, tag="env-dir")))
    return out
