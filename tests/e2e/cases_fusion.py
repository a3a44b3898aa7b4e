"""The fusion passes of lib/passes.c (fuse-layernorm, pow-to-mul, fuse-gelu,
fuse-swish, fuse-activation into the normalizations) end to end, on small onnx.helper graphs and a PyTorch export.

  fusion/<case>        `graphcc compile` gives the stated node count and op
                       types (`graphcc info` of the .gcb); `graphcc run`
                       matches NumPy in float64 (|err| <= 1e-5 x max|ref| +
                       1e-6) and matches `graphcc run --no-optimize` (the
                       unfused graph) to the same tolerance. The *-shared and
                       *-output cases have a middle tensor that another node
                       reads or that is a graph output: nothing may fuse.
  fusion/torch-blocks  LayerNorm, GELU, SiLU and x**2 exported by
                       torch.onnx.export (opset 13): every chain fused,
                       output against PyTorch's
  fusion/torch-se-<act>-<gate>  squeeze-and-excitation blocks as torchvision
                       writes them (MobileNetV3: ReLU, Hardsigmoid; EfficientNet:
                       SiLU, Sigmoid; and no activation), between convolutions:
                       each becomes one com.graphcc::SqueezeExcite (no
                       GlobalAveragePool or gate left), output against PyTorch's
                       and the unfused graph's; torch-se-shared (the pooled
                       tensor also read elsewhere) must not fuse
"""
import math
import os
import re

import numpy as np

import run

# torch.onnx.export keeps global state: one export at a time (cases run in threads)
_EXPORT_LOCK = run.TORCH_EXPORT
COMPILED_RE = re.compile(r"compiled .*?: (\d+) nodes \((\d+) in the model\)")
HIST_RE = re.compile(r"^\s+(\d+)\s+(\S+)\s*$", re.M)
REL = 1e-5

_erf = np.vectorize(math.erf)


def _ln_ref(x, axes, eps, gamma=None, beta=None):
    x = x.astype(np.float64)
    m = x.mean(axis=axes, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axes, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def _fixtures():
    """name -> (build(path) -> ({input: array}, {output: expected}), node count,
    op types that must be in the compiled program (None: not checked),
    op types that must not)."""
    from onnx import TensorProto, helper, numpy_helper

    def save(path, nodes, inits, inputs, outputs, opset=13):
        g = helper.make_graph(
            nodes, "fusion",
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape)
             for k, v in inputs.items()],
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, None) for k in outputs],
            [numpy_helper.from_array(np.asarray(v, np.float32) if np.asarray(v).dtype.kind == "f"
                                     else np.asarray(v), k) for k, v in inits.items()])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphcc-e2e")
        m.ir_version = 8
        with open(path, "wb") as f:
            f.write(m.SerializeToString())

    rng = np.random.default_rng(19)
    x = (rng.standard_normal((2, 3, 8)) * 3).astype(np.float32)
    n = helper.make_node

    def swish(path, shared=False, output=False):
        nodes = [n("Sigmoid", ["x"], ["s"]), n("Mul", ["x", "s"], ["y"])]
        outs = {"y": x / (1 + np.exp(-x.astype(np.float64)))}
        if shared:
            nodes.append(n("Add", ["s", "x"], ["z"]))
            outs["z"] = 1 / (1 + np.exp(-x.astype(np.float64))) + x
        if output:
            outs["s"] = 1 / (1 + np.exp(-x.astype(np.float64)))
        save(path, nodes, {}, {"x": x}, outs)
        return {"x": x}, outs

    def gelu(path, half_first=False, output=False):
        if half_first:  # 0.5 x first, Mul by 1/sqrt 2, operands swapped
            nodes = [n("Mul", ["r2", "x"], ["d"]), n("Erf", ["d"], ["e"]),
                     n("Add", ["one", "e"], ["a"]), n("Mul", ["half", "x"], ["h"]),
                     n("Mul", ["a", "h"], ["y"])]
            inits = {"r2": np.float32(1 / math.sqrt(2)), "one": np.float32(1),
                     "half": np.float32(0.5)}
        else:  # as torch.onnx.export writes nn.GELU()
            nodes = [n("Div", ["x", "s2"], ["d"]), n("Erf", ["d"], ["e"]),
                     n("Add", ["e", "one"], ["a"]), n("Mul", ["x", "a"], ["m"]),
                     n("Mul", ["m", "half"], ["y"])]
            inits = {"s2": np.float32(math.sqrt(2)), "one": np.float32(1),
                     "half": np.float32(0.5)}
        xd = x.astype(np.float64)
        outs = {"y": 0.5 * xd * (1 + _erf(xd / math.sqrt(2)))}
        if output:
            outs["e"] = _erf(xd / math.sqrt(2))
        save(path, nodes, inits, {"x": x}, outs)
        return {"x": x}, outs

    def layernorm(path, opset=13, axes=(-1,), affine=True, shared=False, output=False):
        k = len(axes)
        shape = x.shape[-k:]
        gamma = rng.uniform(0.5, 1.5, shape).astype(np.float32)
        beta = rng.standard_normal(shape).astype(np.float32)
        inits = {"two": np.float32(2), "eps": np.float32(1e-5)}
        if opset >= 18:
            inits["axes"] = np.array(axes, np.int64)
            rm = lambda i, o: n("ReduceMean", [i, "axes"], [o])  # noqa: E731
        else:
            rm = lambda i, o: n("ReduceMean", [i], [o], axes=list(axes))  # noqa: E731
        nodes = [rm("x", "m"), n("Sub", ["x", "m"], ["d"]), n("Pow", ["d", "two"], ["p"]),
                 rm("p", "v"), n("Add", ["v", "eps"], ["a"]), n("Sqrt", ["a"], ["s"]),
                 n("Div", ["d", "s"], ["nrm" if affine else "y"])]
        if affine:
            inits.update(gamma=gamma, beta=beta)
            nodes += [n("Mul", ["gamma", "nrm"], ["g"]), n("Add", ["g", "beta"], ["y"])]
        ax = tuple(a % x.ndim for a in axes)
        outs = {"y": _ln_ref(x, ax, 1e-5, *((gamma, beta) if affine else ()))}
        xd = x.astype(np.float64)
        if shared:  # the mean is read by another node
            nodes.append(n("Neg", ["m"], ["z"]))
            outs["z"] = -xd.mean(axis=ax, keepdims=True)
        if output:  # x - mean is a graph output
            outs["d"] = xd - xd.mean(axis=ax, keepdims=True)
        save(path, nodes, inits, {"x": x}, outs, opset)
        return {"x": x}, outs

    def powers(path):
        xp = np.abs(x) + 0.25
        nodes = [n("Pow", ["x", "two"], ["a"]), n("Pow", ["x", "half"], ["b"]),
                 n("Pow", ["x", "minus1"], ["c"]), n("Pow", ["x", "three"], ["d"]),
                 n("Sum", ["a", "b", "c", "d"], ["y"])]
        inits = {"two": np.float32(2), "half": np.float32(0.5), "minus1": np.float32(-1),
                 "three": np.float32(3)}
        xd = xp.astype(np.float64)
        save(path, nodes, inits, {"x": xp}, {"y": None})
        return {"x": xp}, {"y": xd ** 2 + np.sqrt(xd) + 1 / xd + xd ** 3}

    def norm_act(path, kind, act, shared=False):
        """InstanceNormalization (opset 13) or GroupNormalization (opset 21,
        2 groups) followed by an activation, which fuse-activation moves
        into the normalization (not when its output is also read)."""
        xn = (rng.standard_normal((2, 6, 5, 7)) * 2 + 0.5).astype(np.float32)
        sc = rng.uniform(0.5, 1.5, 6).astype(np.float32)
        bi = rng.standard_normal(6).astype(np.float32)
        xd, groups = xn.astype(np.float64), 2 if kind == "gn" else 6
        g = xd.reshape(2, groups, -1)
        nrm = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
        v = nrm.reshape(xd.shape) * sc.reshape(1, 6, 1, 1) + bi.reshape(1, 6, 1, 1)
        if kind == "gn":
            nodes = [n("GroupNormalization", ["x", "sc", "bi"], ["v"], num_groups=2)]
        else:
            nodes = [n("InstanceNormalization", ["x", "sc", "bi"], ["v"])]
        if act == "swish":
            nodes += [n("Sigmoid", ["v"], ["s"]), n("Mul", ["v", "s"], ["y"])]
            outs = {"y": v / (1 + np.exp(-v))}
        elif act == "clip":
            nodes += [n("Clip", ["v", "lo", "hi"], ["y"])]
            outs = {"y": np.clip(v, -0.5, 1.0)}
        else:
            nodes += [n("Relu", ["v"], ["y"])]
            outs = {"y": np.maximum(v, 0)}
        if shared:
            nodes.append(n("Neg", ["v"], ["z"]))
            outs["z"] = -v
        inits = {"sc": sc, "bi": bi, "lo": np.float32(-0.5), "hi": np.float32(1.0)}
        save(path, nodes, inits, {"x": xn}, outs, 21 if kind == "gn" else 13)
        return {"x": xn}, outs
    def batchnorm(path, act="Relu", shared=False):
        # a BatchNormalization after no Conv (fold-batchnorm leaves it, as in
        # densenet's pre-activation blocks), then the activation
        c = x.shape[1]
        sc, b, mean = (rng.standard_normal(c).astype(np.float32) for _ in range(3))
        var = (np.abs(rng.standard_normal(c)) + 0.1).astype(np.float32)
        inits = {"sc": sc, "b": b, "mean": mean, "var": var}
        nodes = [n("BatchNormalization", ["x", "sc", "b", "mean", "var"], ["t"])]
        if act == "Clip":
            inits.update(lo=np.float32(-0.5), hi=np.float32(1.5))
            nodes.append(n("Clip", ["t", "lo", "hi"], ["y"]))
        else:
            nodes.append(n(act, ["t"], ["y"]))
        k = (None, slice(None), None)  # per channel, x is [N, C, L]
        t = ((x.astype(np.float64) - mean[k]) / np.sqrt(var[k].astype(np.float64) + 1e-5) *
             sc[k] + b[k])
        outs = {"y": np.clip(t, -0.5, 1.5) if act == "Clip" else np.maximum(t, 0)}
        if shared:  # the normalized value is read by another node too
            nodes.append(n("Neg", ["t"], ["z"]))
            outs["z"] = -t
        save(path, nodes, inits, {"x": x}, outs)
        return {"x": x}, outs

    L = layernorm
    return {
        "batchnorm-relu": (batchnorm, 1, {"BatchNormalization"}, {"Relu"}),
        "batchnorm-clip": (lambda p: batchnorm(p, "Clip"), 1, {"BatchNormalization"}, {"Clip"}),
        "batchnorm-relu-shared": (lambda p: batchnorm(p, shared=True), 3, {"Relu"}, None),
        "swish": (swish, 1, {"com.graphcc::Swish"}, {"Sigmoid", "Mul"}),
        "swish-shared": (lambda p: swish(p, shared=True), 3, None, {"com.graphcc::Swish"}),
        "swish-output": (lambda p: swish(p, output=True), 2, None, {"com.graphcc::Swish"}),
        "gelu": (gelu, 1, {"com.graphcc::Gelu"}, {"Erf", "Mul"}),
        "gelu-half-first": (lambda p: gelu(p, half_first=True), 1, {"com.graphcc::Gelu"},
                            {"Erf"}),
        "gelu-output": (lambda p: gelu(p, output=True), 5, {"Erf"}, {"com.graphcc::Gelu"}),
        "layernorm": (L, 1, {"LayerNormalization"}, {"ReduceMean", "Pow"}),
        "layernorm-opset18-2axes-plain": (lambda p: L(p, 18, (-2, -1), False), 1,
                                          {"LayerNormalization"}, {"ReduceMean"}),
        "layernorm-shared": (lambda p: L(p, shared=True), 10, {"ReduceMean"},
                             {"LayerNormalization"}),
        "layernorm-output": (lambda p: L(p, output=True), 9, {"ReduceMean"},
                             {"LayerNormalization"}),
        "pow": (powers, 5, {"Mul", "Sqrt", "Reciprocal", "Pow"}, None),
        "groupnorm-swish": (lambda p: norm_act(p, "gn", "swish"), 1, {"GroupNormalization"},
                            {"Sigmoid", "Mul", "com.graphcc::Swish"}),
        "instancenorm-relu": (lambda p: norm_act(p, "in", "relu"), 1,
                              {"InstanceNormalization"}, {"Relu"}),
        "instancenorm-clip": (lambda p: norm_act(p, "in", "clip"), 1,
                              {"InstanceNormalization"}, {"Clip"}),
        "instancenorm-relu-shared": (lambda p: norm_act(p, "in", "relu", shared=True), 3,
                                     {"InstanceNormalization", "Relu", "Neg"}, None),
    }


def _histogram(ctx, gcb):
    rc, out, err = run.run_graphcc(ctx, ["info", gcb])
    if rc != 0:
        return None, err
    return {m.group(2) for m in HIST_RE.finditer(out.split("nodes:", 1)[-1].split("custom")[0])}, ""


def _run(ctx, model, inputs, d, extra):
    args = []
    for k, v in inputs.items():
        p = os.path.join(d, k + ".npy")
        np.save(p, v)
        args += ["--input", "%s=%s" % (k, p)]
    o = run.fresh_dir(os.path.join(d, "out" + "".join(extra).replace("-", "_")))
    rc, _, err = run.run_graphcc(ctx, ["run", model] + args + ["--output-dir", o] + extra)
    return o, rc, err


def fixture_case(ctx, name):
    build, count, must, must_not = _fixtures()[name]
    d = run.fresh_dir(os.path.join(ctx.fix, "fusion", name))
    model = os.path.join(d, "model.onnx")
    inputs, outs = build(model)
    gcb = os.path.join(d, "model.gcb")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
    if rc != 0:
        return run.Result(False, "compile: " + run.describe_rc(rc), err)
    m = COMPILED_RE.search(out)
    if not m or int(m.group(1)) != count:
        return run.Result(False, "compiled to %s nodes, expected %d"
                          % (m.group(1) if m else "?", count), out)
    ops, err = _histogram(ctx, gcb)
    if ops is None:
        return run.Result(False, "info failed", err)
    if must and not must <= ops:
        return run.Result(False, "program lacks %s (has %s)" % (sorted(must - ops), sorted(ops)))
    if must_not and must_not & ops:
        return run.Result(False, "program still has %s" % sorted(must_not & ops))
    fused, rc, err = _run(ctx, gcb, inputs, d, [])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    plain, rc, err = _run(ctx, model, inputs, d, ["--no-optimize"])
    if rc != 0:
        return run.Result(False, "run --no-optimize: " + run.describe_rc(rc), err)
    for k, want in outs.items():
        want = np.asarray(want, np.float32)
        tol = REL * float(np.abs(want).max())
        why = run.compare(os.path.join(fused, k + ".npy"), want, 0, tol + 1e-6)
        if why:
            return run.Result(False, "vs NumPy: " + why)
        unfused = np.load(os.path.join(plain, k + ".npy"))
        why = run.compare(os.path.join(fused, k + ".npy"), unfused, 0, tol + 1e-6)
        if why:
            return run.Result(False, "vs the unfused graph: " + why)
    return run.Result(True, "%d nodes of %s; %s" % (count, m.group(2), ", ".join(sorted(ops))))


def _export(m, x, d):
    """torch module m on input x to d/model.onnx (opset 13, input x, output
    y); the caller holds _EXPORT_LOCK. (The model's path, PyTorch's output.)"""
    import torch
    model = os.path.join(d, "model.onnx")
    torch.onnx.export(m, x, model, opset_version=13, input_names=["x"], output_names=["y"])
    with torch.no_grad():
        return model, m(x).numpy()


def _compile(ctx, model, d):
    """graphcc compile model to d/model.gcb: (gcb, its op types, compile's
    stdout, stderr); gcb None when compile failed (stdout then says how)."""
    gcb = os.path.join(d, "model.gcb")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
    if rc != 0:
        return None, None, run.describe_rc(rc), err
    ops, herr = _histogram(ctx, gcb)
    return gcb, ops, out, err + herr


def torch_case(ctx):
    import torch
    d = run.fresh_dir(os.path.join(ctx.fix, "fusion", "torch-blocks"))

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = torch.nn.LayerNorm(32)
            self.fc = torch.nn.Linear(32, 32)
            self.gelu = torch.nn.GELU()
            self.silu = torch.nn.SiLU()

        def forward(self, x):
            h = self.gelu(self.fc(self.ln(x)))
            return self.silu(h) + h ** 2

    with _EXPORT_LOCK:
        torch.manual_seed(19)
        m = Block().eval()
        with torch.no_grad():
            m.ln.weight.uniform_(0.5, 1.5)
            m.ln.bias.normal_()
        x = torch.randn(2, 5, 32)
        model, want = _export(m, x, d)
    gcb, ops, out, err = _compile(ctx, model, d)
    if gcb is None:
        return run.Result(False, "compile: " + out, err)
    # the GELU goes into the Linear's MatMul (fuse-matmul-gelu)
    need = {"LayerNormalization", "MatMul", "com.graphcc::Swish"}
    gone = {"Erf", "Sigmoid", "Pow", "ReduceMean", "com.graphcc::Gelu"}
    if ops is None or not need <= ops or gone & ops:
        return run.Result(False, "compiled ops %s; expected %s and none of %s"
                          % (sorted(ops or []), sorted(need), sorted(gone)), out + err)
    o, rc, err = _run(ctx, gcb, {"x": x.numpy()}, d, [])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    why = run.compare(os.path.join(o, "y.npy"), want, 0,
                      REL * float(np.abs(want).max()) + 1e-6)
    return run.Result(not why, why or COMPILED_RE.search(out).group(0))


def linear_gelu_case(ctx, shared):
    """torch Linear + GELU on a 3-D input (a transformer's feed-forward
    block): MatMul + Add + the Erf chain become one MatMul with the bias and
    the GELU in its epilogue (fuse-gelu, fuse-matmul-bias, fuse-matmul-gelu);
    `shared`: the Linear's output is read by the GELU and by an Add, so the
    GELU must stay a node of its own. Checked against PyTorch."""
    import torch
    name = "torch-linear-gelu" + ("-shared" if shared else "")
    d = run.fresh_dir(os.path.join(ctx.fix, "fusion", name))

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(64, 200)
            self.gelu = torch.nn.GELU()

        def forward(self, x):
            h = self.fc(x)
            return self.gelu(h) + h if shared else self.gelu(h)

    with _EXPORT_LOCK:
        torch.manual_seed(23)
        m = Block().eval()
        x = torch.randn(3, 50, 64)
        model, want = _export(m, x, d)
    gcb, ops, out, err = _compile(ctx, model, d)
    if gcb is None:
        return run.Result(False, "compile: " + out, err)
    want_ops = {"MatMul", "com.graphcc::Gelu", "Add"} if shared else {"MatMul"}
    if ops != want_ops:
        return run.Result(False, "compiled ops %s; expected %s"
                          % (sorted(ops or []), sorted(want_ops)), out + err)
    for threads in ("1", "2"):
        o, rc, err = _run(ctx, gcb, {"x": x.numpy()}, d, ["--threads", threads])
        if rc != 0:
            return run.Result(False, "run: " + run.describe_rc(rc), err)
        why = run.compare(os.path.join(o, "y.npy"), want, 0,
                          REL * float(np.abs(want).max()) + 1e-6)
        if why:
            return run.Result(False, "%s threads, vs PyTorch: %s" % (threads, why))
    return run.Result(True, COMPILED_RE.search(out).group(0))


def se_case(ctx, act, gate, shared=False):
    import torch
    name = "torch-se-shared" if shared else "torch-se-%s-%s" % (act, gate)
    d = run.fresh_dir(os.path.join(ctx.fix, "fusion", name))
    acts = {"relu": torch.nn.ReLU, "silu": torch.nn.SiLU, "none": torch.nn.Identity}
    gates = {"hardsigmoid": torch.nn.Hardsigmoid, "sigmoid": torch.nn.Sigmoid}

    class SE(torch.nn.Module):  # torchvision.ops.SqueezeExcitation's shape
        def __init__(self, c, cm):
            super().__init__()
            self.pool = torch.nn.AdaptiveAvgPool2d(1)
            self.fc1, self.fc2 = torch.nn.Conv2d(c, cm, 1), torch.nn.Conv2d(cm, c, 1)
            self.act, self.gate = acts[act](), gates[gate]()

        def forward(self, x):
            s = self.pool(x)
            y = x * self.gate(self.fc2(self.act(self.fc1(s))))
            return y + s if shared else y

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c0, self.se1 = torch.nn.Conv2d(3, 24, 3, padding=1), SE(24, 8)
            self.c1, self.se2 = torch.nn.Conv2d(24, 40, 3, stride=2), SE(40, 12)

        def forward(self, x):
            return self.se2(self.c1(self.se1(self.c0(x))))

    with _EXPORT_LOCK:
        torch.manual_seed(23)
        m = Net().eval()
        x = torch.randn(2, 3, 17, 17)
        model, want = _export(m, x, d)
    gcb, ops, out, err = _compile(ctx, model, d)
    if gcb is None:
        return run.Result(False, "compile: " + out, err)
    left = {"GlobalAveragePool", "HardSigmoid", "Sigmoid"} & (ops or set())
    fused = ops is not None and "com.graphcc::SqueezeExcite" in ops
    if ops is None or fused == shared or (not shared and left):
        return run.Result(False, "compiled ops %s; expected %s" % (
            sorted(ops or []), "no SqueezeExcite" if shared else
            "SqueezeExcite and no GlobalAveragePool/gate"), out + err)
    o, rc, err = _run(ctx, gcb, {"x": x.numpy()}, d, [])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    tol = REL * float(np.abs(want).max()) + 1e-6
    why = run.compare(os.path.join(o, "y.npy"), want, 0, tol)
    if why:
        return run.Result(False, "vs PyTorch: " + why)
    plain, rc, err = _run(ctx, model, {"x": x.numpy()}, d, ["--no-optimize"])
    if rc != 0:
        return run.Result(False, "run --no-optimize: " + run.describe_rc(rc), err)
    why = run.compare(os.path.join(o, "y.npy"), np.load(os.path.join(plain, "y.npy")), 0, tol)
    return run.Result(not why, why and "vs the unfused graph: " + why or
                      COMPILED_RE.search(out).group(0))


def cases(ctx):
    out = [("fusion/" + k, (lambda k=k: fixture_case(ctx, k))) for k in _fixtures()]
    out.append(("fusion/torch-blocks", lambda: torch_case(ctx)))
    out.append(("fusion/torch-linear-gelu", lambda: linear_gelu_case(ctx, False)))
    out.append(("fusion/torch-linear-gelu-shared", lambda: linear_gelu_case(ctx, True)))
    for act, gate in (("relu", "hardsigmoid"), ("silu", "sigmoid"), ("none", "sigmoid")):
        out.append(("fusion/torch-se-%s-%s" % (act, gate),
                    lambda a=act, g=gate: se_case(ctx, a, g)))
    out.append(("fusion/torch-se-shared", lambda: se_case(ctx, "relu", "hardsigmoid", True)))
    return out
