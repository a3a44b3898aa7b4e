"""The Gradient pass's rules for network ops, each against torch.autograd.

  gradient-nn/<case>   one onnx.helper model per op (or small chain): the
                       op's output o, y = ReduceSum(o * R) with a random R
                       (so that no rule is hidden behind a seed of ones),
                       a Gradient node over every float input; random
                       shapes with broadcasting and non-default attributes
                       (groups, strides, asymmetric pads, dilations,
                       transposes, ignore_index, weights, axes...). The
                       reference is torch.autograd in float64 on the same
                       inputs: |got - torch| <= 1e-4 * max(1, max|torch|).
"""
import os

import numpy as np

import run
from cases_training import TRAINING, _grad_node

TOL = 1e-4


def _rng(seed):
    return np.random.default_rng(seed)


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _save(path, nodes, inputs, wrt, out_shape, opset, inits):
    from onnx import helper, numpy_helper
    from onnx.mapping import NP_TYPE_TO_TENSOR_TYPE as T
    n = helper.make_node
    nodes = list(nodes) + [n("Mul", ["o", "R"], ["oR"], name="weigh"),
                           n("ReduceSum", ["oR"], ["y"], name="total", keepdims=0),
                           _grad_node(wrt, ["d_" + k for k in wrt], "y")]
    ins = [helper.make_tensor_value_info(k, T[v.dtype], v.shape) for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info("y", T[np.dtype(np.float32)], [])]
    outs += [helper.make_tensor_value_info("d_" + k, T[inputs[k].dtype], inputs[k].shape)
             for k in wrt]
    g = helper.make_graph(nodes, "grad", ins, outs,
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid(TRAINING, 1)])
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


# Each case: (nodes, inputs {name: array}, inits {name: array}, opset,
# torch fn(torch, F, **tensors) -> o). Float inputs are differentiated.

def c_conv_groups():
    r = _rng(1)
    v = {"X": _f(r, 2, 4, 7, 6), "W": _f(r, 6, 2, 3, 2), "B": _f(r, 6)}
    a = dict(group=2, strides=[2, 1], pads=[1, 0, 0, 1], dilations=[1, 2])
    from onnx import helper
    nodes = [helper.make_node("Conv", ["X", "W", "B"], ["o"], name="conv", **a)]

    def fn(torch, F, X, W, B):
        return F.conv2d(F.pad(X, (0, 1, 1, 0)), W, B, stride=(2, 1), dilation=(1, 2), groups=2)
    return nodes, v, {}, 13, fn


def c_conv1d():
    r = _rng(2)
    v = {"X": _f(r, 2, 3, 9), "W": _f(r, 4, 3, 3)}
    from onnx import helper
    nodes = [helper.make_node("Conv", ["X", "W"], ["o"], strides=[2], pads=[1, 1])]

    def fn(torch, F, X, W):
        return F.conv1d(X, W, stride=2, padding=1)
    return nodes, v, {}, 13, fn


def c_conv_transpose():
    r = _rng(3)
    v = {"X": _f(r, 2, 4, 4, 5), "W": _f(r, 4, 3, 3, 3), "B": _f(r, 6)}
    from onnx import helper
    nodes = [helper.make_node("ConvTranspose", ["X", "W", "B"], ["o"], group=2, strides=[2, 2],
                              pads=[1, 1, 1, 1], output_padding=[1, 0])]

    def fn(torch, F, X, W, B):
        return F.conv_transpose2d(X, W, B, stride=2, padding=1, output_padding=(1, 0), groups=2)
    return nodes, v, {}, 13, fn


def c_gemm_trans():
    r = _rng(4)
    v = {"A": _f(r, 4, 3), "Bm": _f(r, 5, 4), "C": _f(r, 5)}
    from onnx import helper
    nodes = [helper.make_node("Gemm", ["A", "Bm", "C"], ["o"], transA=1, transB=1, alpha=0.7,
                              beta=1.3)]

    def fn(torch, F, A, Bm, C):
        return 0.7 * A.t() @ Bm.t() + 1.3 * C
    return nodes, v, {}, 13, fn


def c_gemm_plain():
    r = _rng(5)
    v = {"A": _f(r, 3, 4), "Bm": _f(r, 4, 5), "C": _f(r, 3, 1)}
    from onnx import helper
    nodes = [helper.make_node("Gemm", ["A", "Bm", "C"], ["o"])]

    def fn(torch, F, A, Bm, C):
        return A @ Bm + C
    return nodes, v, {}, 11, fn


def c_maxpool():
    r = _rng(6)
    v = {"X": _f(r, 2, 3, 7, 8)}
    from onnx import helper
    nodes = [helper.make_node("MaxPool", ["X"], ["o"], kernel_shape=[3, 2], strides=[2, 2],
                              pads=[1, 0, 1, 1], dilations=[1, 2])]

    def fn(torch, F, X):
        return F.max_pool2d(F.pad(X, (0, 1, 1, 1), value=-np.inf), (3, 2), stride=2,
                            dilation=(1, 2))
    return nodes, v, {}, 13, fn


def c_avgpool_exclude_pad():
    r = _rng(7)
    v = {"X": _f(r, 2, 3, 7, 8)}
    from onnx import helper
    nodes = [helper.make_node("AveragePool", ["X"], ["o"], kernel_shape=[3, 3], strides=[2, 1],
                              pads=[1, 1, 1, 1])]

    def fn(torch, F, X):
        return F.avg_pool2d(X, 3, stride=(2, 1), padding=1, count_include_pad=False)
    return nodes, v, {}, 13, fn


def c_avgpool_include_pad():
    r = _rng(8)
    v = {"X": _f(r, 1, 2, 6, 5)}
    from onnx import helper
    nodes = [helper.make_node("AveragePool", ["X"], ["o"], kernel_shape=[2, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], count_include_pad=1)]

    def fn(torch, F, X):
        return F.avg_pool2d(X, (2, 3), stride=2, padding=1, count_include_pad=True)
    return nodes, v, {}, 13, fn


def c_global_avgpool_flatten():
    r = _rng(9)
    v = {"X": _f(r, 2, 5, 3, 4)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("GlobalAveragePool", ["X"], ["g"]), n("Flatten", ["g"], ["o"], axis=1)]

    def fn(torch, F, X):
        return X.mean(dim=(2, 3)).reshape(2, 5)
    return nodes, v, {}, 13, fn


def c_squeeze_unsqueeze():
    r = _rng(10)
    v = {"X": _f(r, 2, 3, 1, 4)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Squeeze", ["X", "ax2"], ["s"]), n("Unsqueeze", ["s", "ax0"], ["u"]),
             n("Flatten", ["u"], ["o"], axis=2)]
    inits = {"ax2": np.array([2], np.int64), "ax0": np.array([0], np.int64)}

    def fn(torch, F, X):
        return X.reshape(1, 2, 12)[0].reshape(2, 12) * 1 + 0 * X.sum()
    return nodes, v, inits, 13, fn


def _softmax_case(op, axis, opset, seed):
    r = _rng(seed)
    v = {"X": _f(r, 2, 3, 4)}
    from onnx import helper
    nodes = [helper.make_node(op, ["X"], ["o"], axis=axis)]

    def fn(torch, F, X):
        f = F.log_softmax if op == "LogSoftmax" else F.softmax
        if opset < 13:
            return f(X.reshape(2, 12), dim=1).reshape(2, 3, 4)
        return f(X, dim=axis)
    return nodes, v, {}, opset, fn


def c_softmax():
    return _softmax_case("Softmax", 1, 13, 11)


def c_logsoftmax():
    return _softmax_case("LogSoftmax", -1, 13, 12)


def c_softmax_opset11():
    return _softmax_case("Softmax", 1, 11, 13)


def c_sce_weight_ignore():
    r = _rng(14)
    v = {"S": _f(r, 6, 4), "L": np.array([0, 2, 3, 1, 2, 0], np.int64)}
    wc = r.uniform(0.5, 2, 4).astype(np.float32)
    from onnx import helper
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["S", "L", "Wc"], ["o"],
                              ignore_index=2)]

    def fn(torch, F, S, L):
        return F.cross_entropy(S, L, weight=torch.tensor(wc.astype(np.float64)), ignore_index=2)
    return nodes, v, {"Wc": wc}, 13, fn


def c_sce_spatial_sum():
    r = _rng(15)
    v = {"S": _f(r, 2, 3, 4), "L": r.integers(0, 3, (2, 4)).astype(np.int64)}
    from onnx import helper
    nodes = [helper.make_node("SoftmaxCrossEntropyLoss", ["S", "L"], ["o", "lp"],
                              reduction="sum")]

    def fn(torch, F, S, L):
        return F.cross_entropy(S, L, reduction="sum")
    return nodes, v, {}, 13, fn


def c_nll_none():
    r = _rng(16)
    v = {"P": _f(r, 5, 4), "L": np.array([3, 0, 1, 1, 2], np.int64)}
    from onnx import helper
    nodes = [helper.make_node("NegativeLogLikelihoodLoss", ["P", "L"], ["o"], reduction="none")]

    def fn(torch, F, P, L):
        return F.nll_loss(P, L, reduction="none")
    return nodes, v, {}, 13, fn


def c_layernorm():
    r = _rng(17)
    v = {"X": _f(r, 2, 3, 5), "Sc": _f(r, 3, 5), "Bi": _f(r, 5)}
    from onnx import helper
    nodes = [helper.make_node("LayerNormalization", ["X", "Sc", "Bi"], ["o"], axis=1,
                              epsilon=1e-3)]

    def fn(torch, F, X, Sc, Bi):
        return F.layer_norm(X, (3, 5), Sc, None, eps=1e-3) + Bi
    return nodes, v, {}, 17, fn


def c_batchnorm_training():
    r = _rng(23)
    v = {"X": _f(r, 4, 3, 5, 2), "Sc": _f(r, 3), "Bi": _f(r, 3)}
    inits = {"Mu": r.standard_normal(3).astype(np.float32),
             "Var": r.uniform(0.5, 2, 3).astype(np.float32)}
    from onnx import helper
    nodes = [helper.make_node("BatchNormalization", ["X", "Sc", "Bi", "Mu", "Var"],
                              ["o", "rm", "rv"], epsilon=1e-3, momentum=0.8, training_mode=1)]

    def fn(torch, F, X, Sc, Bi):
        return F.batch_norm(X, None, None, Sc, Bi, training=True, eps=1e-3)
    return nodes, v, inits, 15, fn


def c_batchnorm_inference():
    r = _rng(24)
    v = {"X": _f(r, 2, 3, 4), "Sc": _f(r, 3), "Bi": _f(r, 3)}
    mu, var = r.standard_normal(3).astype(np.float32), r.uniform(0.5, 2, 3).astype(np.float32)
    from onnx import helper
    nodes = [helper.make_node("BatchNormalization", ["X", "Sc", "Bi", "Mu", "Var"], ["o"],
                              epsilon=1e-2)]

    def fn(torch, F, X, Sc, Bi):
        t = lambda a: torch.tensor(a.astype(np.float64))
        return F.batch_norm(X, t(mu), t(var), Sc, Bi, training=False, eps=1e-2)
    return nodes, v, {"Mu": mu, "Var": var}, 13, fn


def c_concat_split():
    r = _rng(18)
    v = {"A": _f(r, 2, 3), "Bx": _f(r, 2, 1), "C": _f(r, 2, 4)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Concat", ["A", "Bx", "C"], ["cat"], axis=1),
             n("Split", ["cat", "parts"], ["p0", "p1", "p2"], axis=-1),
             n("Mul", ["p0", "p2"], ["o"])]
    inits = {"parts": np.array([3, 2, 3], np.int64)}

    def fn(torch, F, A, Bx, C):
        cat = torch.cat([A, Bx, C], 1)
        return cat[:, :3] * cat[:, 5:]
    return nodes, v, inits, 13, fn


def c_slice():
    r = _rng(19)
    v = {"X": _f(r, 4, 3, 6)}
    from onnx import helper
    nodes = [helper.make_node("Slice", ["X", "st", "en", "ax"], ["o"])]
    inits = {"st": np.array([1, -4], np.int64), "en": np.array([3, 100], np.int64),
             "ax": np.array([0, 2], np.int64)}

    def fn(torch, F, X):
        return X[1:3, :, 2:]
    return nodes, v, inits, 13, fn


def c_gather():
    r = _rng(20)
    v = {"D": _f(r, 3, 5, 2), "I": np.array([[4, 0, 4], [1, -1, 2]], np.int64)}
    from onnx import helper
    nodes = [helper.make_node("Gather", ["D", "I"], ["o"], axis=1)]

    def fn(torch, F, D, I):
        return D[:, I % 5, :]
    return nodes, v, {}, 13, fn


def c_where_pow():
    r = _rng(21)
    v = {"Cnd": r.integers(0, 2, (3, 1)).astype(bool), "A": r.uniform(0.5, 2, (3, 4)).astype(np.float32),
         "E": _f(r, 4)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Pow", ["A", "E"], ["p"]), n("Where", ["Cnd", "p", "E"], ["o"])]

    def fn(torch, F, Cnd, A, E):
        return torch.where(Cnd, A ** E, E.expand(3, 4))
    return nodes, v, {}, 13, fn


def c_activations():
    r = _rng(22)
    v = {"X": _f(r, 3, 1)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Expand", ["X", "shp"], ["e"]), n("Erf", ["e"], ["f"]),
             n("LeakyRelu", ["e"], ["l"], alpha=0.2), n("Clip", ["e", "Lo", "hi"], ["c"]),
             n("Dropout", ["c"], ["dr"], ratio=0.3),
             n("Sum", ["f", "l", "dr"], ["o"])]
    inits = {"shp": np.array([2, 3, 4], np.int64), "hi": np.array(0.4, np.float32),
             "Lo": np.array(-0.5, np.float32)}

    def fn(torch, F, X):
        e = X.expand(2, 3, 4)
        return torch.erf(e) + F.leaky_relu(e, 0.2) + torch.clamp(e, min=-0.5, max=0.4)
    return nodes, v, inits, 13, fn


CASES = {k[2:].replace("_", "-"): f for k, f in sorted(globals().items()) if k.startswith("c_")}


def gradient_nn_case(ctx, name):
    import torch
    import torch.nn.functional as F
    torch.set_grad_enabled(True)
    nodes, v, inits, opset, fn = CASES[name]()
    wrt = [k for k, a in v.items() if a.dtype == np.float32]
    ts = {k: torch.tensor(a.astype(np.float64) if a.dtype == np.float32 else a,
                          requires_grad=k in wrt) for k, a in v.items()}
    o = fn(torch, F, **ts)
    R = _rng(99).standard_normal(tuple(o.shape)).astype(np.float32)
    (o * torch.tensor(R.astype(np.float64))).sum().backward()
    want = {"d_" + k: ts[k].grad.numpy().astype(np.float32) for k in wrt}
    d = run.fresh_dir(os.path.join(ctx.fix, "gradient-nn", name))
    model = os.path.join(d, "model.onnx")
    _save(model, nodes, v, wrt, list(o.shape), opset, dict(inits, R=R))
    args = []
    for k, a in v.items():
        p = os.path.join(d, k + ".npy")
        np.save(p, a)
        args += ["--input", "%s=%s" % (k, p)]
    out = run.fresh_dir(os.path.join(ctx.out, "gradient-nn", name))
    rc, _, err = run.run_graphcc(ctx, ["run", model] + args + ["--output-dir", out])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    worst = 0.0
    for k, w in want.items():
        scale = max(1.0, float(np.abs(w).max()))
        why = run.compare(os.path.join(out, k + ".npy"), w, 0, TOL * scale)
        if why:
            return run.Result(False, "%s: %s" % (k, why), err)
        got = np.load(os.path.join(out, k + ".npy")).astype(np.float64)
        worst = max(worst, float(np.abs(got - w).max()) / scale)
    return run.Result(True, "max error %.1e x max(1, max|torch|)" % worst)


def cases(ctx):
    return [("gradient-nn/" + n, (lambda n=n: gradient_nn_case(ctx, n))) for n in CASES]
