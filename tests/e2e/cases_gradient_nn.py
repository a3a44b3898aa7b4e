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


def c_conv_batch_split():
    # enough work that the backward splits the samples (5: uneven parts)
    # and the groups over two threads, each with its own columns
    r = _rng(46)
    v = {"X": _f(r, 5, 8, 20, 20), "W": _f(r, 16, 4, 3, 3), "B": _f(r, 16)}
    from onnx import helper
    nodes = [helper.make_node("Conv", ["X", "W", "B"], ["o"], group=2, pads=[1, 1, 1, 1])]

    def fn(torch, F, X, W, B):
        return F.conv2d(X, W, B, padding=1, groups=2)
    return nodes, v, {}, 13, fn


def c_conv_one_sample_large():
    # one sample: the backward's GEMMs themselves split over the threads
    r = _rng(47)
    v = {"X": _f(r, 1, 8, 40, 36), "W": _f(r, 16, 8, 3, 3)}
    from onnx import helper
    nodes = [helper.make_node("Conv", ["X", "W"], ["o"], strides=[2, 1])]

    def fn(torch, F, X, W):
        return F.conv2d(X, W, stride=(2, 1))
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


def _convt_case(seed, xs, ws, group=1, strides=None, dilations=None, output_padding=None,
                pads=None, auto_pad=None, output_shape=None, bias=True):
    """ConvTranspose with the given attributes. The torch reference is the
    full transposed convolution (padding 0, output_padding) cropped as the
    ONNX spec places the output: `pads` begins, or with output_shape /
    SAME_* total = full - wanted, begin = total/2 (SAME_UPPER) else
    total - total/2, zeros past the full output's end."""
    r = _rng(seed)
    nsp = len(xs) - 2
    v = {"X": _f(r, *xs), "W": _f(r, *ws)}
    if bias:
        v["B"] = _f(r, ws[1] * group)
    st, dl = strides or [1] * nsp, dilations or [1] * nsp
    op = output_padding or [0] * nsp
    full = [st[i] * (xs[2 + i] - 1) + op[i] + (ws[2 + i] - 1) * dl[i] + 1 for i in range(nsp)]
    heads, outs = [], []
    for i in range(nsp):
        if output_shape or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = output_shape[i] if output_shape else xs[2 + i] * st[i]
            total = max(0, full[i] - o)
            h = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        else:
            p = pads or [0] * (2 * nsp)
            h, o = p[i], full[i] - p[i] - p[nsp + i]
        heads.append(h)
        outs.append(o)
    a = {"group": group}
    for k, val in (("strides", strides), ("dilations", dilations), ("pads", pads),
                   ("output_padding", output_padding), ("auto_pad", auto_pad),
                   ("output_shape", output_shape)):
        if val is not None:
            a[k] = val
    from onnx import helper
    nodes = [helper.make_node("ConvTranspose", list(v), ["o"], **a)]

    def fn(torch, F, X, W, B=None):
        conv = getattr(F, "conv_transpose%dd" % nsp)
        y = conv(X, W, None, stride=st, output_padding=op, groups=group, dilation=dl)
        for i, (h, o) in enumerate(zip(heads, outs)):
            ax = 2 + i
            y = y.narrow(ax, h, min(o, y.shape[ax] - h))
            if y.shape[ax] < o:
                shp = list(y.shape)
                shp[ax] = o - y.shape[ax]
                y = torch.cat([y, torch.zeros(shp, dtype=y.dtype)], ax)
        if B is not None:
            y = y + B.reshape([1, -1] + [1] * nsp)
        return y
    return nodes, v, {}, 13, fn


def c_convt_output_shape():
    return _convt_case(40, (2, 4, 3, 4), (4, 3, 3, 2), group=2, strides=[2, 3],
                       dilations=[2, 1], output_shape=[7, 10])


def c_convt_output_shape_larger():
    # wider than the full output: zeros past its end (axis 0), none cropped
    return _convt_case(41, (1, 2, 3, 3), (2, 2, 2, 2), strides=[2, 2], output_padding=[1, 0],
                       output_shape=[9, 6])


def c_convt_same_upper_1d():
    return _convt_case(42, (1, 2, 5), (2, 3, 4), strides=[2], output_padding=[1],
                       auto_pad="SAME_UPPER")


def c_convt_same_lower():
    return _convt_case(43, (2, 3, 3, 3), (3, 2, 3, 3), strides=[2, 2], dilations=[1, 2],
                       auto_pad="SAME_LOWER", bias=False)


def c_convt_pads_groups_dilations():
    # asymmetric pads with output_padding, 3 groups, dilation on one axis
    return _convt_case(44, (1, 3, 4, 3), (3, 1, 3, 2), group=3, strides=[2, 3],
                       dilations=[2, 1], output_padding=[1, 1], pads=[0, 2, 1, 0])


def c_convt_3d_valid():
    return _convt_case(45, (1, 2, 2, 3, 2), (2, 2, 2, 1, 2), strides=[1, 2, 2],
                       auto_pad="VALID")


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


def c_maxpool_inside_split():
    # overlapping windows all inside X (the no-clipping path), enough
    # channels to split over two threads
    r = _rng(48)
    v = {"X": _f(r, 4, 16, 24, 24)}
    from onnx import helper
    nodes = [helper.make_node("MaxPool", ["X"], ["o"], kernel_shape=[3, 3], strides=[2, 2])]

    def fn(torch, F, X):
        return F.max_pool2d(X, 3, stride=2)
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


def _slice_case(seed, shape, starts, ends, axes, steps, opset=13):
    """A Slice with the given inputs (axes/steps None: omitted); torch picks
    the same elements with index_select on Python's slice of range(d),
    whose clamping rules are ONNX's."""
    r = _rng(seed)
    v = {"X": _f(r, *shape)}
    from onnx import helper
    names = ["X", "st", "en"]
    inits = {"st": np.array(starts, np.int64), "en": np.array(ends, np.int64)}
    for k, a in (("ax", axes), ("sp", steps)):
        names.append(k if a is not None else "")
        if a is not None:
            inits[k] = np.array(a, np.int64)
    while names[-1] == "":
        names.pop()
    nodes = [helper.make_node("Slice", names, ["o"])]
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)

    def fn(torch, F, X):
        for a, s0, e0, k in zip(axes, starts, ends, steps):
            d = X.shape[a]
            X = X.index_select(a, torch.tensor(list(range(d))[slice(s0, e0, k)], dtype=torch.long))
        return X
    return nodes, v, inits, opset, fn


BIG = np.iinfo(np.int64)


def c_slice_steps():
    # reversed by 2 from the end to INT64_MIN; 3 apart past the end; -1 on a negative axis
    return _slice_case(30, (5, 4, 7), [-1, 1, 3], [BIG.min, 100, 0], [0, 2, -2], [-2, 3, -1])


def c_slice_steps_clamped():
    # starts past either end, INT64_MAX ends, a step larger than the axis
    return _slice_case(31, (3, 6, 5, 4), [100, -100, 2, 1], [-100, BIG.max, BIG.max, 2],
                       [1, 3, 2, 0], [-3, 2, 9, 1])


def c_slice_no_axes():
    # axes omitted (the leading axes), steps given
    return _slice_case(32, (6, 5), [0, -2], [6, -6], None, [4, -1])


def c_slice_opset11_negative_axes():
    # steps omitted, negative axes, negative starts and ends
    return _slice_case(33, (4, 5, 6), [-3, -5], [-1, 4], [-1, -3], None, opset=11)


def c_slice_empty():
    # one axis takes nothing: the gradient is all zeros
    return _slice_case(34, (3, 4), [0, 3], [3, 1], [0, 1], [1, 1])


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


def c_conv3d_same_upper():
    r = _rng(50)
    v = {"X": _f(r, 1, 2, 5, 4, 6), "W": _f(r, 3, 2, 2, 3, 2), "B": _f(r, 3)}
    from onnx import helper
    nodes = [helper.make_node("Conv", ["X", "W", "B"], ["o"], strides=[2, 1, 2],
                              auto_pad="SAME_UPPER")]

    def fn(torch, F, X, W, B):
        # SAME_UPPER: total = (out - 1) s + k - in, the odd one at the end
        return F.conv3d(F.pad(X, (0, 0, 1, 1, 0, 1)), W, B, stride=(2, 1, 2))
    return nodes, v, {}, 13, fn


def c_conv_same_lower_dilated():
    r = _rng(51)
    v = {"X": _f(r, 2, 3, 6), "W": _f(r, 3, 1, 3)}
    from onnx import helper
    nodes = [helper.make_node("Conv", ["X", "W"], ["o"], group=3, dilations=[2],
                              auto_pad="SAME_LOWER")]

    def fn(torch, F, X, W):
        return F.conv1d(F.pad(X, (2, 2)), W, dilation=2, groups=3)
    return nodes, v, {}, 11, fn


def c_maxpool_ceil_1d():
    r = _rng(52)
    v = {"X": _f(r, 2, 3, 10)}
    from onnx import helper
    nodes = [helper.make_node("MaxPool", ["X"], ["o"], kernel_shape=[3], strides=[2],
                              ceil_mode=1)]

    def fn(torch, F, X):
        return F.max_pool1d(X, 3, stride=2, ceil_mode=True)
    return nodes, v, {}, 12, fn


def c_avgpool_ceil_3d():
    r = _rng(53)
    v = {"X": _f(r, 1, 2, 5, 4, 5)}
    from onnx import helper
    nodes = [helper.make_node("AveragePool", ["X"], ["o"], kernel_shape=[2, 2, 3],
                              strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 1], ceil_mode=1)]

    def fn(torch, F, X):
        return _avgpool_exclude(torch, F, X)
    return nodes, v, {}, 13, fn


def _avgpool_exclude(torch, F, X):
    # ONNX divides by the taps inside the input; ceil_mode's extra window too
    ones = torch.ones_like(X)
    pad = (1, 1, 0, 1, 1, 0)
    s = F.avg_pool3d(F.pad(X, pad), (2, 2, 3), stride=(2, 1, 2), ceil_mode=True,
                     divisor_override=1)
    n = F.avg_pool3d(F.pad(ones, pad), (2, 2, 3), stride=(2, 1, 2), ceil_mode=True,
                     divisor_override=1)
    return s / n


def c_nll_weight_ignore_spatial():
    r = _rng(54)
    v = {"P": _f(r, 2, 4, 3, 2), "L": r.integers(0, 4, (2, 3, 2)).astype(np.int64)}
    v["L"][0, 1, 1] = 1
    wc = r.uniform(0.5, 2, 4).astype(np.float32)
    from onnx import helper
    nodes = [helper.make_node("NegativeLogLikelihoodLoss", ["P", "L", "Wc"], ["o"],
                              ignore_index=1)]

    def fn(torch, F, P, L):
        return F.nll_loss(P, L, weight=torch.tensor(wc.astype(np.float64)), ignore_index=1)
    return nodes, v, {"Wc": wc}, 13, fn


def c_gemm_scalar_c():
    r = _rng(55)
    v = {"A": _f(r, 5, 3), "Bm": _f(r, 5, 4), "C": _f(r)}
    from onnx import helper
    nodes = [helper.make_node("Gemm", ["A", "Bm", "C"], ["o"], transA=1, beta=-0.5)]

    def fn(torch, F, A, Bm, C):
        return A.t() @ Bm - 0.5 * C
    return nodes, v, {}, 13, fn


def c_shape_ops_defaults():
    # Squeeze without axes, Unsqueeze at a negative axis, Flatten at 0,
    # Concat on a negative axis, Split into equal parts (opset 11 attrs)
    r = _rng(56)
    v = {"X": _f(r, 1, 3, 1, 4), "Y": _f(r, 3, 2)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Squeeze", ["X"], ["s"]), n("Unsqueeze", ["s"], ["u"], axes=[-1]),
             n("Flatten", ["u"], ["f"], axis=0), n("Reshape", ["f", "shp"], ["f2"]),
             n("Concat", ["f2", "Y"], ["cat"], axis=-1),
             n("Split", ["cat"], ["p0", "p1", "p2"], axis=1),
             n("Sub", ["p0", "p2"], ["o"])]
    inits = {"shp": np.array([3, 4], np.int64)}

    def fn(torch, F, X, Y):
        cat = torch.cat([X.reshape(3, 4), Y], -1)
        return cat[:, 0:2] - cat[:, 4:6]
    return nodes, v, inits, 11, fn


def c_layernorm_last_axis_broadcast():
    r = _rng(57)
    v = {"X": _f(r, 3, 2, 6), "Sc": _f(r, 6)}
    from onnx import helper
    nodes = [helper.make_node("LayerNormalization", ["X", "Sc"], ["o"])]

    def fn(torch, F, X, Sc):
        return F.layer_norm(X, (6,), Sc, None, eps=1e-5)
    return nodes, v, {}, 17, fn


def c_clip_min_only_leaky_default():
    r = _rng(58)
    v = {"X": _f(r, 4, 5), "Lo": _f(r)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Clip", ["X", "Lo"], ["c"]), n("LeakyRelu", ["X"], ["l"]),
             n("Mul", ["c", "l"], ["o"])]

    def fn(torch, F, X, Lo):
        return torch.maximum(X, Lo) * F.leaky_relu(X, 0.01)
    return nodes, v, {}, 13, fn


def c_clip_both_bounds():
    r = _rng(60)
    v = {"X": _f(r, 3, 4, 2), "Lo": np.array(-0.6, np.float32), "Hi": np.array(0.7, np.float32)}
    from onnx import helper
    nodes = [helper.make_node("Clip", ["X", "Lo", "Hi"], ["o"])]

    def fn(torch, F, X, Lo, Hi):
        return torch.minimum(torch.maximum(X, Lo), Hi)
    return nodes, v, {}, 12, fn


def c_gather_axis0_scalar_pow_broadcast():
    r = _rng(59)
    v = {"D": _f(r, 4, 3), "I": np.array(-2, np.int64), "A": r.uniform(0.5, 2, (2, 1, 3)).astype(np.float32)}
    from onnx import helper
    n = helper.make_node
    nodes = [n("Gather", ["D", "I"], ["g"], axis=0), n("Pow", ["A", "g"], ["o"])]

    def fn(torch, F, D, I, A):
        return A ** D[-2]
    return nodes, v, {}, 13, fn


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
