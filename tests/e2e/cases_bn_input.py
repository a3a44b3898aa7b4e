"""fuse-batchnorm-input (lib/pass-batchnorm.c): BatchNormalization [-> Relu]
-> 1x1 Conv (a pre-activation block, as densenet's) becomes one Conv that
applies the normalisation as it reads its input (_gc_input_affine), end to
end.

  bn-input/<case>      onnx.helper graphs: `graphcc compile` reports the
                       fusion ("pass fuse-batchnorm-input N changes") and
                       the stated node count and op types (`graphcc info` of
                       the .gcb: no BatchNormalization or Relu left where it
                       fused); the .gcb run at 1 and 2 threads, and the .onnx
                       with GRAPHCC_NN_REFERENCE=1 (the reference kernels
                       with a transformed copy of the input), matches NumPy
                       in float64 (|err| <= 1e-5 x max|ref| + 1e-6) and
                       `graphcc run --no-optimize` (the unfused graph).
                       Column counts around the row GEMM's 48-column panels,
                       weights in more than one block of the row GEMM, batch 2, a bias, a fused residual and Relu on the
                       Conv, float64, no Relu, inputs below zero and a NaN.
                       Refused: a 3x3, strided or grouped Conv, the
                       BatchNormalization's output read twice or a graph
                       output, a Clip rather than a Relu.
  bn-input/hostile-<case>  a model's Conv with the extra inputs the fused
                       forms use, each refused with one message naming the
                       node: an empty 4th input without the residual mark,
                       5 inputs marked _gc_input_affine (input 5 missing:
                       it used to be read from past the node's inputs), 6
                       unmarked, and a b of the wrong length.
  bn-input/torch-dense   a torchvision densenet _DenseBlock of three layers
                       and a _Transition, exported by torch.onnx.export: four
                       BatchNormalizations moved into 1x1 Convs, output
                       against PyTorch's.
"""
import os
import re

import numpy as np

import cases_residual as cr
import run

PASS_RE = re.compile(r"pass fuse-batchnorm-input\s+(\d+) change")


def _fixtures():
    """name -> (build(path) -> (inputs, outputs), node count, fusions, op
    types required, op types forbidden)."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(1919)
    n = helper.make_node

    def block(path, c=24, m=40, hw=9, batch=1, act="Relu", k=1, stride=1, group=1,
              bias=False, residual=False, conv_act=False, second_reader=False,
              bn_output=False, nan=False, f64=False):
        """x -> BatchNormalization [-> act] -> Conv(W[, B]) [+ z] [-> Relu]."""
        dt = np.float64 if f64 else np.float32
        x = rng.standard_normal((batch, c, hw, hw)).astype(dt)
        if nan:
            x[0, 1, 2, 3] = np.nan
        scale = rng.uniform(0.5, 1.5, c).astype(dt)
        beta = rng.normal(0, 0.5, c).astype(dt)
        mean = rng.normal(0, 0.5, c).astype(dt)
        var = rng.uniform(0.5, 1.5, c).astype(dt)
        w = (rng.standard_normal((m, c // group, k, k)) / np.sqrt(c // group * k * k)).astype(dt)
        inits = {"scale": scale, "beta": beta, "mean": mean, "var": var, "W": w}
        inputs = {"x": x}
        sh = lambda v: v.astype(np.float64)[None, :, None, None]  # noqa: E731
        t = (x.astype(np.float64) - sh(mean)) / np.sqrt(sh(var) + 1e-5) * sh(scale) + sh(beta)
        nodes = [n("BatchNormalization", ["x", "scale", "beta", "mean", "var"],
                   ["t" if act else "u"], epsilon=1e-5)]
        if act == "Relu":
            nodes.append(n("Relu", ["t"], ["u"]))
            t = np.where(np.isnan(t), t, np.maximum(t, 0))
        elif act == "Clip":
            inits["lo"], inits["hi"] = np.array(0, dt), np.array(6, dt)
            nodes.append(n("Clip", ["t", "lo", "hi"], ["u"]))
            t = np.clip(t, 0, 6)
        pad = k // 2
        conv_in = ["u", "W"]
        b = None
        if bias:
            b = rng.standard_normal(m).astype(dt)
            inits["B"] = b
            conv_in.append("B")
        y = cr._conv_ref(t, w, b, stride, pad, group)
        last = "y"
        if residual or conv_act:
            last = "c"
        nodes.append(n("Conv", conv_in, [last], kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group))
        if residual:
            z = rng.standard_normal(y.shape).astype(dt)
            inputs["z"] = z
            nodes.append(n("Add", ["c", "z"], ["s" if conv_act else "y"]))
            y = y + z
            last = "s"
        if conv_act:
            nodes.append(n("Relu", [last], ["y"]))
            y = np.maximum(y, 0)
        outs = {"y": y}
        if second_reader:
            nodes.append(n("Neg", ["u"], ["nu"]))
            outs["nu"] = -t
        if bn_output:
            outs["u"] = t
        cr.save_model(path, nodes, inits, inputs, outs,
                TensorProto.DOUBLE if f64 else TensorProto.FLOAT)
        return inputs, outs

    F = block
    gone = {"BatchNormalization", "Relu"}
    return {
        # name: (build, nodes, fused, must have, must not have)
        "relu": (F, 1, 1, {"Conv"}, gone),
        "relu-nan": (lambda p: F(p, nan=True), 1, 1, {"Conv"}, gone),
        "no-relu": (lambda p: F(p, act=None), 1, 1, {"Conv"}, gone),
        # 48-column panels: 2x2 = 4 columns, 7x7 = 49, 12x12 = 144, 30x30
        "one-panel-part": (lambda p: F(p, hw=2, c=8, m=8), 1, 1, {"Conv"}, gone),
        "panel-plus-one": (lambda p: F(p, hw=7, c=64, m=32), 1, 1, {"Conv"}, gone),
        "three-panels-batch2": (lambda p: F(p, hw=12, batch=2, bias=True), 1, 1, {"Conv"},
                                gone),
        "wide-residual-relu": (lambda p: F(p, hw=30, c=48, m=72, residual=True,
                                           conv_act=True), 1, 1, {"Conv"}, gone | {"Add"}),
        # weights past the row GEMM's 512 KiB blocks of S: V's panels
        # copied (and normalised) again for each block
        "s-blocks": (lambda p: F(p, c=512, m=300, hw=8), 1, 1, {"Conv"}, gone),
        "float64": (lambda p: F(p, f64=True, bias=True), 1, 1, {"Conv"}, gone),
        # not a 1x1 stride-1 unpadded ungrouped Conv, or the normalised
        # tensor read elsewhere: left alone
        "3x3": (lambda p: F(p, k=3), 2, 0, {"BatchNormalization", "Conv"}, None),
        "strided": (lambda p: F(p, stride=2), 2, 0, {"BatchNormalization", "Conv"}, None),
        "grouped": (lambda p: F(p, group=4), 2, 0, {"BatchNormalization", "Conv"}, None),
        "second-reader": (lambda p: F(p, second_reader=True), 3, 0,
                          {"BatchNormalization", "Neg"}, None),
        "bn-output": (lambda p: F(p, bn_output=True), 2, 0, {"BatchNormalization"}, None),
        "clip": (lambda p: F(p, act="Clip"), 2, 0, {"BatchNormalization"}, None),
    }


def fixture_case(ctx, name):
    return cr.check_fixture(ctx, os.path.join("bn-input", name), "fuse-batchnorm-input",
                            _fixtures()[name])


def torch_case(ctx):
    import torch
    import torchvision
    d = run.fresh_dir(os.path.join(ctx.fix, "bn-input", "torch-dense"))
    D = torchvision.models.densenet

    model = os.path.join(d, "model.onnx")
    x, want = cr.export_eval(
        lambda: (torch.nn.Sequential(D._DenseBlock(3, 16, bn_size=2, growth_rate=8,
                                                   drop_rate=0), D._Transition(40, 20)),
                 torch.randn(2, 16, 14, 14)), model, 1919)
    gcb, ops, out, err = cr._compile(ctx, model, d)
    if gcb is None:
        return run.Result(False, out, err)
    r = PASS_RE.search(out)
    if not r or int(r.group(1)) != 4 or "BatchNormalization" in (ops or ()):
        return run.Result(False, "fuse-batchnorm-input %s, ops %s; expected 4 fused, no "
                          "BatchNormalization" % (r.group(1) if r else "?", sorted(ops or [])),
                          out + err)
    why = cr._check(ctx, gcb, model, {"x": x}, {"y": want}, d)
    return run.Result(not why, why or cr.COMPILED_RE.search(out).group(0))


HOSTILE = {
    # name -> (Conv inputs, _gc_input_affine or None, what the message says)
    "empty-4th": (["x", "W", "B", ""], None, "Conv takes 2 or 3 inputs (X, W, B), not 4"),
    "five": (["x", "W", "B", "", "a"], 1, "inputs 4 and 5, but Conv has 5 inputs"),
    "six-unmarked": (["x", "W", "B", "", "a", "a"], None, "not 6"),
    "b-length": (["x", "W", "B", "", "a", "B"], 2, "needs two [4] tensors"),
}


def hostile_case(ctx, name):
    from onnx import helper
    ins, mark, says = HOSTILE[name]
    d = run.fresh_dir(os.path.join(ctx.fix, "bn-input", "hostile-" + name))
    attrs = {} if mark is None else {"_gc_input_affine": mark}
    x = np.ones((1, 4, 5, 5), np.float32)
    inits = {"W": np.ones((2, 4, 1, 1), np.float32), "B": np.ones(2, np.float32),
             "a": np.ones(4, np.float32)}
    model = os.path.join(d, "model.onnx")
    cr.save_model(model, [helper.make_node("Conv", ins, ["y"], **attrs)], inits, {"x": x},
                  ["y"])
    xp = os.path.join(d, "x.npy")
    np.save(xp, x)
    return run.expect_refusal(ctx, "bn-input-" + name, ["run", model, "--input", "x=" + xp],
                              ["(Conv)", says])


def cases(ctx):
    out = [("bn-input/" + k, (lambda k=k: fixture_case(ctx, k))) for k in _fixtures()]
    out += [("bn-input/hostile-" + k, (lambda k=k: hostile_case(ctx, k))) for k in HOSTILE]
    out.append(("bn-input/torch-dense", lambda: torch_case(ctx)))
    return out
