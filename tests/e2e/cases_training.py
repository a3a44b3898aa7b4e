"""Training graphs end to end (ai.onnx.preview.training): the Gradient pass
against torch.autograd, and a whole training step (Gradient feeding Adam and
Momentum) against torch.autograd plus the optimizers' formulas from ONNX's
reference written out in NumPy.

  training/gradient/<case>   onnx.helper models with a Gradient node over
                             several ops (broadcasting, 1-D and batched
                             MatMul, zs, a gradient taken at other values,
                             float64); each output compared with the
                             gradient torch.autograd computes in float64:
                             |got - torch| <= 1e-4 * max(1, max|torch|)
                             (float32) or 1e-10 * max(1, max|torch|)
                             (float64)
  training/step/<case>       Gradient -> Adam / Momentum(nesterov) on an
                             MLP, run as .onnx and as a compiled .gcb, and
                             with --no-optimize (the Gradient pass is a
                             lowering and still runs); same tolerance
  training/info              `graphcc info` on a training graph: Gradient and
                             the optimizers are not listed as unsupported,
                             exit 0
  training/refuse/<case>     a Gradient through an op without a rule, or
                             over a tensor of unknown shape, or through a
                             Transpose with a bad perm: exit 1, one
                             message naming the Gradient, the node and op
"""
import os

import numpy as np

import run

TRAINING = "ai.onnx.preview.training"
TOL32, TOL64 = 1e-4, 1e-10


def _torch():
    import torch
    torch.set_grad_enabled(True)
    return torch


def _save(path, nodes, inputs, outputs, inits=None, opset=13):
    """inputs: {name: array or (dtype, shape)}; outputs: [(name, np dtype, shape)]."""
    from onnx import helper, numpy_helper
    from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE as T

    def vi(name, dt, shape):
        return helper.make_tensor_value_info(name, T[np.dtype(dt)], shape)

    ins = [vi(k, v.dtype, v.shape) if isinstance(v, np.ndarray) else vi(k, *v)
           for k, v in inputs.items()]
    g = helper.make_graph(nodes, "training", ins, [vi(*o) for o in outputs],
                          [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(TRAINING, 1)],
                          producer_name="graphcc-e2e")
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def _grad_node(xs, outs, y, zs=(), inputs=None, name="grad"):
    from onnx import helper
    kw = {"xs": list(xs), "y": y}
    if zs:
        kw["zs"] = list(zs)
    return helper.make_node("Gradient", list(inputs or list(xs) + list(zs)), list(outs),
                            name=name, domain=TRAINING, **kw)


def _autograd(fn, values, wrt, dtype):
    """Gradients of sum(fn(**tensors)) (fn returns y; the seed is ones like y)
    with respect to the names in wrt, in float64. -> {name: array of dtype}."""
    torch = _torch()
    ts = {k: torch.tensor(np.asarray(v, np.float64), requires_grad=k in wrt)
          for k, v in values.items()}
    y = fn(torch, **ts)
    y.backward(torch.ones_like(y))
    return {k: (ts[k].grad.numpy() if ts[k].grad is not None
                else np.zeros_like(values[k], np.float64)).astype(dtype) for k in wrt}


# ---------------------------------------------------------------- gradients

def _case_elementwise(path):
    """Broadcasting through Add, Sub, Mul, Div, Neg, Identity, Relu, Sigmoid,
    Tanh, Exp, Log, Sqrt and Sum: a (2,3,4), b (3,1), c (4)."""
    from onnx import helper
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((3, 1)).astype(np.float32)
    c = rng.uniform(0.5, 1.5, 4).astype(np.float32)
    half = np.array(0.5, np.float32)
    n = helper.make_node
    nodes = [n("Mul", ["a", "b"], ["ab"], name="mul"),
             n("Tanh", ["ab"], ["t"], name="tanh"),
             n("Exp", ["t"], ["e"], name="exp"),
             n("Mul", ["c", "c"], ["cc"], name="sq"),
             n("Add", ["cc", "half"], ["cc1"], name="add"),
             n("Div", ["e", "cc1"], ["q"], name="div"),
             n("Sigmoid", ["a"], ["s"], name="sigmoid"),
             n("Add", ["s", "half"], ["s1"], name="add2"),
             n("Log", ["s1"], ["l"], name="log"),
             n("Neg", ["l"], ["nl"], name="neg"),
             n("Identity", ["c"], ["ci"], name="id"),
             n("Sub", ["b", "ci"], ["d"], name="sub"),
             n("Relu", ["d"], ["r"], name="relu"),
             n("Sqrt", ["cc1"], ["sr"], name="sqrt"),
             n("Sum", ["q", "nl", "r", "sr"], ["y"], name="sum"),
             _grad_node(["a", "b", "c"], ["da", "db", "dc"], "y")]
    _save(path, nodes, {"a": a, "b": b, "c": c},
          [("y", np.float32, [2, 3, 4]), ("da", np.float32, [2, 3, 4]),
           ("db", np.float32, [3, 1]), ("dc", np.float32, [4])], {"half": half})

    def fn(torch, a, b, c):
        cc1 = c * c + 0.5
        return (torch.exp(torch.tanh(a * b)) / cc1 - torch.log(torch.sigmoid(a) + 0.5)
                + torch.relu(b - c) + torch.sqrt(cc1))
    g = _autograd(fn, {"a": a, "b": b, "c": c}, ["a", "b", "c"], np.float32)
    return {"a": a, "b": b, "c": c}, {"da": g["a"], "db": g["b"], "dc": g["c"]}, TOL32


def _case_mlp(path):
    """x (4,3) @ W1 (3,5) + b1 -> Relu -> @ W2 (5,2) + b2 -> Sigmoid, loss =
    ReduceMean((p - t)^2); gradients of the loss for W1, b1, W2, b2; opset 11."""
    from onnx import helper
    rng = np.random.default_rng(12)
    v = {"x": rng.standard_normal((4, 3)), "t": rng.uniform(0, 1, (4, 2)),
         "W1": rng.standard_normal((3, 5)) * 0.7, "b1": rng.standard_normal(5) * 0.1,
         "W2": rng.standard_normal((5, 2)) * 0.7, "b2": rng.standard_normal(2) * 0.1}
    v = {k: a.astype(np.float32) for k, a in v.items()}
    n = helper.make_node
    nodes = [n("MatMul", ["x", "W1"], ["h0"], name="fc1"),
             n("Add", ["h0", "b1"], ["h1"], name="bias1"),
             n("Relu", ["h1"], ["h"], name="relu"),
             n("MatMul", ["h", "W2"], ["o0"], name="fc2"),
             n("Add", ["o0", "b2"], ["o"], name="bias2"),
             n("Sigmoid", ["o"], ["p"], name="sigmoid"),
             n("Sub", ["p", "t"], ["e"], name="err"),
             n("Mul", ["e", "e"], ["e2"], name="square"),
             n("ReduceMean", ["e2"], ["loss"], name="mean", keepdims=0),
             _grad_node(["W1", "b1", "W2", "b2"], ["dW1", "db1", "dW2", "db2"], "loss",
                        zs=["x", "t"])]
    # opset 11: the backward graph's ReduceSum takes its axes as an attribute
    _save(path, nodes, v, [("loss", np.float32, []), ("dW1", np.float32, [3, 5]),
                           ("db1", np.float32, [5]), ("dW2", np.float32, [5, 2]),
                           ("db2", np.float32, [2])], opset=11)

    def fn(torch, x, t, W1, b1, W2, b2):
        p = torch.sigmoid(torch.relu(x @ W1 + b1) @ W2 + b2)
        return ((p - t) ** 2).mean()
    g = _autograd(fn, v, ["W1", "b1", "W2", "b2"], np.float32)
    return v, {"d" + k: g[k] for k in g}, TOL32


def _case_matmul_shapes(path):
    """MatMul with a 1-D left operand, a 1-D right operand and batch
    broadcasting ((2,1,3,4) @ (5,4,2)), then Transpose, Reshape, ReduceSum."""
    from onnx import helper
    rng = np.random.default_rng(13)
    v = {"A": rng.standard_normal((2, 1, 3, 4)), "B": rng.standard_normal((5, 4, 2)),
         "u": rng.standard_normal(3), "M": rng.standard_normal((3, 4)),
         "w": rng.standard_normal(4)}
    v = {k: a.astype(np.float32) for k, a in v.items()}
    n = helper.make_node
    nodes = [n("MatMul", ["A", "B"], ["C"], name="batched"),                  # (2,5,3,2)
             n("Transpose", ["C"], ["Ct"], name="tr", perm=[1, 0, 3, 2]),    # (5,2,2,3)
             n("Reshape", ["Ct", "shape"], ["Cr"], name="reshape"),          # (10,2,3)
             n("ReduceSum", ["Cr", "axes"], ["Cs"], name="rsum", keepdims=1),  # (1,2,1)
             n("MatMul", ["u", "M"], ["uM"], name="vecmat"),                 # (4,)
             n("MatMul", ["M", "w"], ["Mw"], name="matvec"),                 # (3,)
             n("MatMul", ["uM", "w"], ["s"], name="dot"),                    # ()
             n("Mul", ["Cs", "Mw"], ["P"], name="scale"),                    # (1,2,3)
             n("Add", ["P", "s"], ["y"], name="plus"),
             _grad_node(["A", "B", "u", "M", "w"], ["dA", "dB", "du", "dM", "dw"], "y")]
    _save(path, nodes, v, [("y", np.float32, [1, 2, 3]), ("dA", np.float32, [2, 1, 3, 4]),
                           ("dB", np.float32, [5, 4, 2]), ("du", np.float32, [3]),
                           ("dM", np.float32, [3, 4]), ("dw", np.float32, [4])],
          {"axes": np.array([0, 2], np.int64), "shape": np.array([10, 2, 3], np.int64)})

    def fn(torch, A, B, u, M, w):
        Cr = (A @ B).permute(1, 0, 3, 2).reshape(10, 2, 3)
        Cs = Cr.sum(dim=(0, 2), keepdim=True)
        return Cs * (M @ w) + (u @ M) @ w
    g = _autograd(fn, v, list(v), np.float32)
    return v, {"d" + k: g[k] for k in g}, TOL32


def _case_zs_and_unused(path):
    """z = Relu(x) * 3 is listed in zs: no gradient flows through it, so
    y = x * z has dy/dx = z (as torch with z detached); w does not reach y
    and gets zeros."""
    from onnx import helper
    rng = np.random.default_rng(14)
    v = {"x": rng.standard_normal((2, 3)).astype(np.float32),
         "w": rng.standard_normal(3).astype(np.float32)}
    n = helper.make_node
    nodes = [n("Relu", ["x"], ["r"], name="relu"),
             n("Mul", ["r", "three"], ["z"], name="triple"),
             n("Mul", ["x", "z"], ["y"], name="mul"),
             n("Add", ["w", "w"], ["unused"], name="other"),
             _grad_node(["x", "w"], ["dx", "dw"], "y", zs=["z"])]
    _save(path, nodes, v, [("y", np.float32, [2, 3]), ("dx", np.float32, [2, 3]),
                           ("dw", np.float32, [3]), ("unused", np.float32, [3])],
          {"three": np.array(3, np.float32)})

    def fn(torch, x, w):
        return x * (torch.relu(x) * 3).detach()
    g = _autograd(fn, v, ["x", "w"], np.float32)
    return v, {"dx": g["x"], "dw": np.zeros(3, np.float32)}, TOL32


def _case_at_other_values(path):
    """The Gradient's input is h1, not the h that xs names: the forward graph
    from h to y is copied to read h1, and the gradient is dy/dh at h = h1."""
    from onnx import helper
    rng = np.random.default_rng(15)
    v = {"x": rng.standard_normal((2, 3)).astype(np.float32),
         "W": rng.standard_normal((3, 3)).astype(np.float32),
         "h1": rng.standard_normal((2, 3)).astype(np.float32)}
    n = helper.make_node
    nodes = [n("MatMul", ["x", "W"], ["h"], name="fc"),
             n("Tanh", ["h"], ["t"], name="tanh"),
             n("Mul", ["t", "h"], ["y"], name="mul"),
             _grad_node(["h"], ["dh"], "y", inputs=["h1"])]
    _save(path, nodes, v, [("y", np.float32, [2, 3]), ("dh", np.float32, [2, 3])])

    def fn(torch, h1):
        return torch.tanh(h1) * h1
    g = _autograd(fn, {"h1": v["h1"]}, ["h1"], np.float32)
    return v, {"dh": g["h1"]}, TOL32


def _case_double(path):
    """float64 throughout: y = Sum(Exp(a) * b, Log(b) / a) with b (3,) broadcast."""
    from onnx import helper
    rng = np.random.default_rng(16)
    v = {"a": rng.uniform(0.5, 2, (2, 3)), "b": rng.uniform(0.5, 2, 3)}
    n = helper.make_node
    nodes = [n("Exp", ["a"], ["e"], name="exp"),
             n("Mul", ["e", "b"], ["eb"], name="mul"),
             n("Log", ["b"], ["lb"], name="log"),
             n("Div", ["lb", "a"], ["q"], name="div"),
             n("Sum", ["eb", "q"], ["y"], name="sum"),
             _grad_node(["a", "b"], ["da", "db"], "y")]
    _save(path, nodes, v, [("y", np.float64, [2, 3]), ("da", np.float64, [2, 3]),
                           ("db", np.float64, [3])])

    def fn(torch, a, b):
        return torch.exp(a) * b + torch.log(b) / a
    g = _autograd(fn, v, ["a", "b"], np.float64)
    return v, {"da": g["a"], "db": g["b"]}, TOL64


GRADIENT_CASES = {"elementwise-broadcast": _case_elementwise, "mlp-loss": _case_mlp,
                  "matmul-shapes": _case_matmul_shapes, "zs-and-unused-x": _case_zs_and_unused,
                  "at-other-values": _case_at_other_values, "float64": _case_double}


def _run_and_compare(ctx, tag, model, inputs, want, tol, extra=()):
    d = os.path.dirname(model)
    args = []
    for k, a in inputs.items():
        p = os.path.join(d, k + ".npy")
        np.save(p, a)
        args += ["--input", "%s=%s" % (k, p)]
    o = run.fresh_dir(os.path.join(ctx.out, "training", tag))
    rc, _, err = run.run_graphcc(ctx, ["run", model] + args + ["--output-dir", o] + list(extra))
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    worst = 0.0
    for name, w in want.items():
        scale = max(1.0, float(np.abs(w).max()) if w.size else 1.0)
        why = run.compare(os.path.join(o, name + ".npy"), w, 0, tol * scale)
        if why:
            return run.Result(False, why, err)
        got = np.load(os.path.join(o, name + ".npy"))
        worst = max(worst, float(np.abs(got.astype(np.float64) - w).max()) / scale)
    return run.Result(True, "max error %.1e x max(1, max|torch|) (tolerance %g)" % (worst, tol))


def gradient_case(ctx, name):
    d = run.fresh_dir(os.path.join(ctx.fix, "training", name))
    model = os.path.join(d, "model.onnx")
    inputs, want, tol = GRADIENT_CASES[name](model)
    return _run_and_compare(ctx, name, model, inputs, want, tol)


# ---------------------------------------------------------------- training steps

def _adam(r, t, x, g, v, h, norm, norm_post, alpha, beta, eps):
    """ONNX's reference Adam (onnx/backend/test/case/node/adam.py)."""
    gr = norm * x + g
    v2 = alpha * v + (1 - alpha) * gr
    h2 = beta * h + (1 - beta) * gr * gr
    ra = r * np.sqrt(1 - beta ** t) / (1 - alpha ** t) if t > 0 else r
    return (1 - norm_post) * (x - ra * v2 / (np.sqrt(h2) + eps)), v2, h2


def _nesterov(r, t, x, g, v, norm, alpha, beta):
    """ONNX's reference Nesterov momentum (momentum.py)."""
    gr = norm * x + g
    v2 = alpha * v + (beta if t > 0 else 1) * gr
    return x - r * (gr + alpha * v2), v2


def _step_model(path, optimizer):
    """One training step of a two-layer MLP: the loss's gradients for W1 and
    W2 go into Adam (or Nesterov Momentum), whose outputs are the new
    weights and state. -> (inputs, expected outputs)."""
    from onnx import helper
    rng = np.random.default_rng(21 if optimizer == "adam" else 22)
    f = np.float32
    v = {"x": rng.standard_normal((6, 4)).astype(f), "t": rng.standard_normal((6, 1)).astype(f),
         "W1": (rng.standard_normal((4, 8)) * 0.5).astype(f),
         "W2": (rng.standard_normal((8, 1)) * 0.5).astype(f),
         "R": np.array(0.05, f), "T": np.array(3, np.int64)}
    state = {"V1": rng.standard_normal((4, 8)).astype(f) * 0.1,
             "V2": rng.standard_normal((8, 1)).astype(f) * 0.1,
             "H1": rng.uniform(0, 0.2, (4, 8)).astype(f),
             "H2": rng.uniform(0, 0.2, (8, 1)).astype(f)}
    n = helper.make_node
    nodes = [n("MatMul", ["x", "W1"], ["a"], name="fc1"),
             n("Tanh", ["a"], ["h"], name="tanh"),
             n("MatMul", ["h", "W2"], ["p"], name="fc2"),
             n("Sub", ["p", "t"], ["e"], name="err"),
             n("Mul", ["e", "e"], ["e2"], name="sq"),
             n("ReduceSum", ["e2"], ["loss"], name="sum", keepdims=0),
             _grad_node(["W1", "W2"], ["G1", "G2"], "loss", zs=["x", "t"])]
    outs = [("loss", f, []), ("W1_new", f, [4, 8]), ("W2_new", f, [8, 1])]
    if optimizer == "adam":
        v.update(state)
        nodes.append(n("Adam", ["R", "T", "W1", "W2", "G1", "G2", "V1", "V2", "H1", "H2"],
                       ["W1_new", "W2_new", "V1_new", "V2_new", "H1_new", "H2_new"],
                       name="adam", domain=TRAINING, alpha=0.9, beta=0.99, epsilon=1e-3,
                       norm_coefficient=0.01, norm_coefficient_post=0.001))
        outs += [("V1_new", f, [4, 8]), ("V2_new", f, [8, 1]), ("H1_new", f, [4, 8]),
                 ("H2_new", f, [8, 1])]
    else:
        v.update({"V1": state["V1"], "V2": state["V2"]})
        nodes.append(n("Momentum", ["R", "T", "W1", "W2", "G1", "G2", "V1", "V2"],
                       ["W1_new", "W2_new", "V1_new", "V2_new"], name="momentum",
                       domain=TRAINING, alpha=0.9, beta=0.5, norm_coefficient=0.01,
                       mode="nesterov"))
        outs += [("V1_new", f, [4, 8]), ("V2_new", f, [8, 1])]
    _save(path, nodes, v, outs)

    def fn(torch, x, t, W1, W2):
        return ((torch.tanh(x @ W1) @ W2 - t) ** 2).sum()
    fv = {k: v[k] for k in ("x", "t", "W1", "W2")}
    g = _autograd(fn, fv, ["W1", "W2"], np.float64)
    d = {k: a.astype(np.float64) for k, a in v.items() if k not in ("R", "T")}
    r, tt = float(v["R"]), int(v["T"])
    want = {}
    for i in ("1", "2"):
        x, gr = d["W" + i], g["W" + i]
        if optimizer == "adam":
            xn, vn, hn = _adam(r, tt, x, gr, d["V" + i], d["H" + i], 0.01, 0.001, 0.9, 0.99,
                               1e-3)
            want["H%s_new" % i] = hn
        else:
            xn, vn = _nesterov(r, tt, x, gr, d["V" + i], 0.01, 0.9, 0.5)
        want["W%s_new" % i], want["V%s_new" % i] = xn, vn
    return v, {k: a.astype(f) for k, a in want.items()}


def step_case(ctx, optimizer, mode):
    d = run.fresh_dir(os.path.join(ctx.fix, "training", "step-%s-%s" % (optimizer, mode)))
    model = os.path.join(d, "model.onnx")
    inputs, want = _step_model(model, optimizer)
    extra = ["--no-optimize"] if mode == "no-optimize" else []
    if mode == "gcb":
        gcb = os.path.join(d, "model.gcb")
        rc, _, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
        if rc != 0:
            return run.Result(False, "compile: " + run.describe_rc(rc), err)
        model = gcb
    return _run_and_compare(ctx, "step-%s-%s" % (optimizer, mode), model, inputs, want, TOL32,
                            extra)


# ---------------------------------------------------------------- refusals

def _refuse_softmax(path):
    from onnx import helper
    n = helper.make_node
    nodes = [n("Mul", ["x", "x"], ["m"], name="sq"),
             n("Sin", ["m"], ["s"], name="soft"),
             n("ReduceSum", ["s"], ["y"], name="total", keepdims=0),
             _grad_node(["x"], ["dx"], "y", name="g")]
    _save(path, nodes, {"x": (np.float32, [2, 3])}, [("dx", np.float32, [2, 3])])
    return ["Gradient 'g'", "cannot differentiate", "node 'soft' (Sin)"]


def _refuse_dynamic(path):
    from onnx import helper
    nodes = [helper.make_node("Mul", ["x", "x"], ["y"], name="sq"),
             _grad_node(["x"], ["dx"], "y", name="g")]
    _save(path, nodes, {"x": (np.float32, ["n", 3])}, [("dx", np.float32, ["n", 3])])
    return ["Gradient 'g'", "input 'x'", "dynamic dimension"]


def _refuse_unknown_x(path):
    from onnx import helper
    nodes = [helper.make_node("Mul", ["x", "x"], ["y"], name="sq"),
             _grad_node(["nothing"], ["dx"], "y", inputs=["x"], name="g")]
    _save(path, nodes, {"x": (np.float32, [3])}, [("dx", np.float32, [3])])
    return ["Gradient 'g'", "xs", "'nothing'"]


def _refuse_run_time_shape(path):
    """A forward tensor whose shape depends on an input's value (Reshape to
    the shape input s): the backward graph would have no fixed shapes (this
    once reached the graph builder as a constant of rank -1)."""
    from onnx import helper
    n = helper.make_node
    nodes = [n("Reshape", ["x", "s"], ["r"], name="shape_it"),
             n("Mul", ["r", "r"], ["m"], name="sq"),
             n("ReduceSum", ["m"], ["y"], name="total", keepdims=0),
             _grad_node(["x"], ["dx"], "y", name="g")]
    _save(path, nodes, {"x": (np.float32, [6]), "s": (np.int64, [2])},
          [("dx", np.float32, [6])])
    return ["Gradient 'g'", "node 'shape_it' (Reshape)", "'r'", "only known at run time"]


def _refuse_transpose_perm(path, perm, why):
    """A Transpose whose perm is no permutation of x's axes (a repeated
    axis, or too few entries): refused, as the forward Transpose refuses it,
    never differentiated with a made-up inverse (the rule once left axes of
    a repeated entry unset and read a short perm as the reversed axes)."""
    from onnx import helper
    n = helper.make_node
    nodes = [n("Transpose", ["x"], ["t"], name="tr", perm=perm),
             n("Mul", ["t", "t"], ["m"], name="sq"),
             n("ReduceSum", ["m"], ["y"], name="total", keepdims=0),
             _grad_node(["x"], ["dx"], "y", name="g")]
    _save(path, nodes, {"x": (np.float32, [2, 3, 4])}, [("dx", np.float32, [2, 3, 4])])
    return ["Gradient 'g'", "node 'tr' (Transpose)", why]


REFUSALS = {"softmax": _refuse_softmax, "dynamic-shape": _refuse_dynamic,
            "unknown-x": _refuse_unknown_x, "run-time-shape": _refuse_run_time_shape,
            "transpose-perm-repeated": lambda p: _refuse_transpose_perm(
                p, [0, 0, 2], "attribute 'perm' is not a permutation of 0..2 (entry 1 is 0)"),
            "transpose-perm-short": lambda p: _refuse_transpose_perm(
                p, [1, 0], "attribute 'perm' has 2 entries for input of rank 3")}


def refuse_case(ctx, name):
    d = run.fresh_dir(os.path.join(ctx.fix, "training", "refuse-" + name))
    model = os.path.join(d, "model.onnx")
    must = REFUSALS[name](model)
    rc, _, err = run.run_graphcc(ctx, ["compile", model])
    if rc is None or rc < 0 or rc in run.CRASH_CODES:
        return run.Result(False, "crashed or hung: " + run.describe_rc(rc), err)
    if rc != 1:
        return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if len(lines) != 1:
        return run.Result(False, "%d lines on stderr, expected one message" % len(lines), err)
    for s in must:
        if s not in err:
            return run.Result(False, "message does not name %r" % s, err)
    return run.Result(True, lines[0][:160])


def info_case(ctx):
    d = run.fresh_dir(os.path.join(ctx.fix, "training", "info"))
    model = os.path.join(d, "model.onnx")
    _step_model(model, "adam")
    rc, out, err = run.run_graphcc(ctx, ["info", model])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", out + err)
    for op in ("Gradient", "Adam"):
        line = next((ln for ln in out.splitlines() if ln.endswith("::" + op)), None)
        if line is None:
            return run.Result(False, "the op histogram has no plain line for %s" % op, out)
    if "unsupported" in out:
        return run.Result(False, "something is listed as unsupported", out)
    return run.Result(True)


def cases(ctx):
    out = [("training/gradient/" + n, (lambda n=n: gradient_case(ctx, n)))
           for n in GRADIENT_CASES]
    for opt in ("adam", "nesterov"):
        for mode in ("onnx", "gcb", "no-optimize"):
            out.append(("training/step/%s-%s" % (opt, mode),
                        (lambda o=opt, m=mode: step_case(ctx, o, m))))
    out.append(("training/info", lambda: info_case(ctx)))
    out += [("training/refuse/" + n, (lambda n=n: refuse_case(ctx, n))) for n in REFUSALS]
    return out
