"""LpPool at opsets 1, 2, 11, 18 (ceil_mode, dilations) and 22: the p-norm
of each window's taps inside the input (the padding is zeros)."""
import itertools
import math

import numpy as np

from caselib import Case, rng


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def out_size(n, k, s, d, lo, hi, ceil_mode):
    eff = (k - 1) * d + 1
    span = n + lo + hi - eff
    if ceil_mode:
        o = -(-span // s) + 1
        if (o - 1) * s >= n + lo:  # the last window starts in the end padding
            o -= 1
        return o
    return span // s + 1


def lp_pool_ref(X, kernel, p=2, strides=None, pads=None, dilations=None, ceil_mode=0,
                auto_pad="NOTSET"):
    nsp = X.ndim - 2
    strides = strides or [1] * nsp
    dilations = dilations or [1] * nsp
    pads = pads or [0] * (2 * nsp)
    lo, hi, outs = list(pads[:nsp]), list(pads[nsp:]), []
    for i in range(nsp):
        n, k, s, d = X.shape[2 + i], kernel[i], strides[i], dilations[i]
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-n // s)
            total = max((o - 1) * s + (k - 1) * d + 1 - n, 0)
            lo[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            hi[i] = total - lo[i]
        elif auto_pad == "VALID":
            lo[i] = hi[i] = 0
        outs.append(out_size(n, k, s, d, lo[i], hi[i], ceil_mode and auto_pad == "NOTSET"))
    x = np.abs(X.astype(np.float64)) ** p
    Y = np.zeros(X.shape[:2] + tuple(outs))
    for o in itertools.product(*[range(v) for v in outs]):
        acc = np.zeros(X.shape[:2])
        for t in itertools.product(*[range(v) for v in kernel]):
            idx = [o[i] * strides[i] - lo[i] + t[i] * dilations[i] for i in range(nsp)]
            if all(0 <= idx[i] < X.shape[2 + i] for i in range(nsp)):
                acc += x[(slice(None), slice(None)) + tuple(idx)]
        Y[(slice(None), slice(None)) + o] = acc ** (1.0 / p)
    return [Y.astype(X.dtype)]


def cases():
    r = rng("lp_pool")
    x = f32(r, 2, 3, 6, 7)
    yield Case("lp_pool2_default_p", "LpPool", 2, {"X": x}, attrs={"kernel_shape": [3, 2]},
               ref=lambda X: lp_pool_ref(X, [3, 2]))
    yield Case("lp_pool1_float_p", "LpPool", 1, {"X": x}, attrs={"kernel_shape": [2, 2], "p": 1.5},
               ref=lambda X: lp_pool_ref(X, [2, 2], p=1.5),
               ort_differs="ONNX Runtime 1.30 registers LpPool from opset 2 (p an int) only")
    yield Case("lp_pool11_p3_strides_pads", "LpPool", 11, {"X": x},
               attrs={"kernel_shape": [3, 3], "p": 3, "strides": [2, 2], "pads": [1, 0, 2, 1]},
               ref=lambda X: lp_pool_ref(X, [3, 3], 3, [2, 2], [1, 0, 2, 1]))
    yield Case("lp_pool11_p1_same_upper", "LpPool", 11, {"X": x},
               attrs={"kernel_shape": [2, 3], "p": 1, "strides": [2, 2], "auto_pad": "SAME_UPPER"},
               ref=lambda X: lp_pool_ref(X, [2, 3], 1, [2, 2], auto_pad="SAME_UPPER"))
    yield Case("lp_pool11_same_lower", "LpPool", 11, {"X": x},
               attrs={"kernel_shape": [3, 2], "auto_pad": "SAME_LOWER"},
               ref=lambda X: lp_pool_ref(X, [3, 2], auto_pad="SAME_LOWER"))
    yield Case("lp_pool11_valid_1d", "LpPool", 11, {"X": f32(r, 2, 3, 9)},
               attrs={"kernel_shape": [4], "strides": [3], "auto_pad": "VALID"},
               ref=lambda X: lp_pool_ref(X, [4], strides=[3]))
    yield Case("lp_pool11_3d", "LpPool", 11, {"X": f32(r, 1, 2, 4, 5, 3)},
               attrs={"kernel_shape": [2, 3, 2], "pads": [1, 0, 0, 0, 1, 1]},
               ref=lambda X: lp_pool_ref(X, [2, 3, 2], pads=[1, 0, 0, 0, 1, 1]))
    yield Case("lp_pool18_ceil_mode", "LpPool", 18, {"X": x},
               attrs={"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1},
               ref=lambda X: lp_pool_ref(X, [3, 3], strides=[2, 2], ceil_mode=1))
    yield Case("lp_pool18_dilations_p4", "LpPool", 18, {"X": x},
               attrs={"kernel_shape": [2, 2], "dilations": [2, 3], "p": 4, "pads": [1, 1, 1, 1]},
               ref=lambda X: lp_pool_ref(X, [2, 2], 4, pads=[1, 1, 1, 1], dilations=[2, 3]))
    yield Case("lp_pool22_strides", "LpPool", 22, {"X": x},
               attrs={"kernel_shape": [2, 3], "strides": [1, 2]},
               ref=lambda X: lp_pool_ref(X, [2, 3], strides=[1, 2]))
    yield Case("lp_pool18_float64", "LpPool", 18, {"X": x.astype(np.float64)},
               attrs={"kernel_shape": [2, 3], "p": 3}, rtol=1e-12, atol=1e-12,
               ref=lambda X: lp_pool_ref(X, [2, 3], 3),
               ort_differs="ONNX Runtime 1.30 has LpPool kernels for float32 only")
    yield Case("lp_pool18_empty_batch", "LpPool", 18, {"X": np.zeros((0, 3, 4, 4), np.float32)},
               attrs={"kernel_shape": [2, 2]}, ref=lambda X: [np.zeros((0, 3, 3, 3), np.float32)])
    yield Case("lp_pool18_kernel_too_big", "LpPool", 18, {"X": f32(r, 1, 1, 3, 3)},
               attrs={"kernel_shape": [4, 4]}, error="does not fit spatial axis 0",
               out_types={"Y": "float32"},
               ort_differs="ONNX Runtime 1.30 runs a window larger than the padded input")
    yield Case("lp_pool18_no_kernel_shape", "LpPool", 18, {"X": x},
               error="attribute 'kernel_shape' is required", out_types={"Y": "float32"})
    yield Case("lp_pool11_ceil_mode_needs_18", "LpPool", 11, {"X": x},
               attrs={"kernel_shape": [2, 2], "ceil_mode": 1},
               error="attribute 'ceil_mode' is LpPool-18's", out_types={"Y": "float32"})
    yield Case("lp_pool18_int32", "LpPool", 18, {"X": np.ones((1, 1, 3, 3), np.int32)},
               attrs={"kernel_shape": [2, 2]}, error="int32", out_types={"Y": "int32"})
