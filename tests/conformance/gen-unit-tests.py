#!/usr/bin/python3
"""Writes the unit tests of the kernel families added for ONNX conformance
(tests/unit/test-{loss,algebra,select,quant,resample,signal,detection}.c).

Every expected value is computed here, independently of graphcc, with NumPy
1.24 (and PyTorch / torchvision where they define the op: interpolate,
grid_sample, nms), then pasted into the C file as literals, so the C tests
need nothing at run time. Rerun after changing a case:

    /usr/bin/python3 tests/conformance/gen-unit-tests.py
"""
import os

import numpy as np
import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(20261122)

CTYPE = {np.float32: ("float", "GC_DTYPE_FLOAT"), np.float64: ("double", "GC_DTYPE_DOUBLE"),
         np.int8: ("int8_t", "GC_DTYPE_INT8"), np.uint8: ("uint8_t", "GC_DTYPE_UINT8"),
         np.int32: ("int32_t", "GC_DTYPE_INT32"), np.int64: ("int64_t", "GC_DTYPE_INT64"),
         np.bool_: ("uint8_t", "GC_DTYPE_BOOL"), np.float16: ("uint16_t", "GC_DTYPE_FLOAT16")}


def lit(a):
    a = np.asarray(a)
    t = a.dtype.type
    if t == np.float16:
        return ", ".join(str(int(v)) for v in a.view(np.uint16).ravel())
    if t == np.bool_:
        return ", ".join("1" if v else "0" for v in a.ravel())
    if t in (np.float32, np.float64):
        return ", ".join(repr(float(v)) for v in a.ravel()) or "0"
    return ", ".join(str(int(v)) + ("LL" if t == np.int64 else "") for v in a.ravel()) or "0"


def dims(a):
    return "D(%s)" % ", ".join(str(d) for d in a.shape) if a.ndim else "NULL"


class Case:
    def __init__(self, name, op, opset, inputs, attrs=None, outputs=(), tol=1e-5, error=None,
                 n_out=None, note=""):
        self.name, self.op, self.opset = name, op, opset
        self.inputs, self.attrs, self.outputs = inputs, attrs or {}, list(outputs)
        self.tol, self.error, self.note = tol, error, note
        self.n_out = n_out if n_out is not None else max(1, len(self.outputs))

    def row(self, arrays):
        """This case's row of the cases[] table; its literals go to arrays."""
        ins = []
        for a in self.inputs:
            if a is None:
                ins.append("{0}")
                continue
            a = np.asarray(a)
            ct, dt = CTYPE[a.dtype.type]
            ins.append("{%s, %d, %s, %s}" % (dt, a.ndim, dims(a), arrays.name("in", ct, lit(a))))
        at = []
        for k, v in getattr(self, "strings", {}).items():
            at.append('{.name = "%s", .type = GC_ATTR_STRINGS, .n = %d, .v.strings = (const char *const[]){%s}}'
                      % (k, len(v), ", ".join('"%s"' % x for x in v)))
        for k, v in getattr(self, "floats", {}).items():
            at.append('{.name = "%s", .type = GC_ATTR_FLOATS, .n = %d, .v.floats = (const float[]){%s}}'
                      % (k, len(v), ", ".join("%rf" % float(x) for x in v)))
        for k, v in self.attrs.items():
            if isinstance(v, str):
                at.append('{.name = "%s", .type = GC_ATTR_STRING, .n = %d, .v.s = "%s"}' % (k, len(v), v))
            elif isinstance(v, float):
                at.append('{.name = "%s", .type = GC_ATTR_FLOAT, .v.f = %rf}' % (k, v))
            elif isinstance(v, (list, tuple)):
                at.append('{.name = "%s", .type = GC_ATTR_INTS, .n = %d, .v.ints = D(%s)}'
                          % (k, len(v), ", ".join("%dLL" % x for x in v)))
            else:
                at.append('{.name = "%s", .type = GC_ATTR_INT, .v.i = %d}' % (k, v))
        outs = []
        for o in ([] if self.error else self.outputs):
            if o is None:
                outs.append("{0}")
                continue
            o = np.asarray(o)
            _, dt = CTYPE[o.dtype.type]
            tol = 0 if o.dtype.kind in "iub" else self.tol
            outs.append("{%s, %d, %s, %s, %d, %r}" % (
                dt, o.ndim, dims(o), arrays.name("want", "double", lit(o.astype(np.float64)) if o.size else "0"),
                o.size, tol))
        def part(head, items):
            """One list field: on one line when it fits, else an item a line."""
            one = "\t " + head + ", ".join(items) + "},"
            return one if len(one.expandtabs()) <= 100 else "\t " + head + "\n\t\t" + (",\n\t\t").join(items) + "},"
        L = []
        if self.note:
            L.append("\t/* %s */" % self.note)
        L.append('\t{.name = "%s", .file = __FILE__, .line = __LINE__,' % self.name)
        L.append('\t .prepare = gc_prepare_%s, .op = "%s",' % (self.op, self.op))
        L.append('\t .opset = %d, .n_out = %d,' % (self.opset, self.n_out))
        if ins:
            L.append(part(".n_in = %d, .in = (const op_input[]){" % len(ins), ins))
        if at:
            L.append(part(".n_attr = %d, .attrs = (gc_attr[]){" % len(at), at))
        if outs:
            L.append(part(".n_want = %d, .want = (const op_output[]){" % len(outs), outs))
        if self.error:
            L.append('\t .error = %s, .error_msg = "%s",' % self.error)
        L.append("\t},")
        return "\n".join(L)


class Arrays:
    """The file's data literals, each written once (cases share inputs) and
    named by what it holds and the order it first appears: in3, want7."""

    def __init__(self):
        self.names, self.defs = {}, []

    def name(self, what, ctype, body):
        key = (what, ctype, body)
        if key not in self.names:
            n = "%s%d" % (what, len(self.defs))
            self.names[key] = n
            self.defs.append("static const %s %s[] = { %s };" % (ctype, n, body))
        return self.names[key]


HEADER = """/*
 * Unit tests for the %s kernels (runtime/kernels/%s.c). Generated by
 * tests/conformance/gen-unit-tests.py: every expected value was computed
 * there with %s, independently of graphcc, and pasted
 * here as literals. Floating results must match within a relative
 * tolerance (stated per case, relative to max(1, |expected|)); integer
 * and bool results exactly; errors by code and message. Each case is a row
 * of cases[] (op, opset, inputs, attributes, expected outputs with their
 * tolerance, or the expected error); op_case_run (expect.h) runs every row.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "expect.h"
#include "kernels/value-impl.h"

"""


def write(family, refs, cases):
    path = os.path.join(ROOT, "tests", "unit", "test-%s.c" % family)
    arrays = Arrays()
    rows = [c.row(arrays) for c in cases]
    with open(path, "w") as f:
        f.write(HEADER % (family, family, refs))
        f.write("\n".join(arrays.defs) + "\n\n")
        f.write("/* clang-format off */\nstatic const op_case cases[] = {\n%s\n};\n/* clang-format on */\n\n"
                % "\n".join(rows))
        f.write("OP_CASES_MAIN(cases)\n")
    print("wrote", os.path.relpath(path, ROOT), len(cases), "cases")


def f32(*shape, lo=-2, hi=2):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


# ---- loss --------------------------------------------------------------------
def nll_ref(x, t, w=None, reduction="mean", ii=None):
    x = x.astype(np.float64)
    N, C = x.shape[:2]
    xr = x.reshape(N, C, -1)
    tr = t.reshape(N, -1)
    loss = np.zeros(tr.shape)
    wt = np.zeros(tr.shape)
    for i in range(N):
        for d in range(tr.shape[1]):
            c = tr[i, d]
            if ii is not None and c == ii:
                continue
            wt[i, d] = 1.0 if w is None else w[c]
            loss[i, d] = -xr[i, c, d] * wt[i, d]
    if reduction == "none":
        return loss.reshape(t.shape).astype(x.dtype)
    if reduction == "sum":
        return np.array(loss.sum())
    if w is None and ii is None:
        return np.array(loss.mean())
    return np.array(loss.sum() / wt.sum())


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def loss_cases():
    x = f32(3, 4, 2)
    t = np.array([[0, 3], [2, 2], [1, -1]], dtype=np.int64)
    w = np.array([0.5, 1.0, 2.0, 1.5], dtype=np.float32)
    tt = np.array([[0, 3], [2, 2], [1, 0]], dtype=np.int64)
    x2 = f32(4, 5)
    t2 = np.array([4, 0, 2, 1], dtype=np.int64)
    s = f32(2, 3, 2, 2).astype(np.float64)
    ts = np.array([[[0, 2], [1, 1]], [[2, 0], [5, 1]]], dtype=np.int64)
    lp = log_softmax(s)
    return [
        Case("nll_mean_weight_ii", "NegativeLogLikelihoodLoss", 13, [x, t, w],
             {"reduction": "mean", "ignore_index": -1},
             [nll_ref(x, t, w, "mean", -1).astype(np.float32)]),
        Case("nll_none", "NegativeLogLikelihoodLoss", 13, [x, tt], {"reduction": "none"},
             [nll_ref(x, tt, None, "none").astype(np.float32)]),
        Case("nll_sum_2d", "NegativeLogLikelihoodLoss", 13, [x2, t2], {"reduction": "sum"},
             [nll_ref(x2, t2, None, "sum").astype(np.float32)]),
        Case("nll_mean_plain", "NegativeLogLikelihoodLoss", 13, [x2, t2], {},
             [nll_ref(x2, t2).astype(np.float32)]),
        Case("sce_mean_ii_log_prob", "SoftmaxCrossEntropyLoss", 13, [s, ts],
             {"ignore_index": 5}, [nll_ref(lp, ts, None, "mean", 5), lp], tol=1e-12),
        Case("nll_bad_reduction", "NegativeLogLikelihoodLoss", 13, [x2, t2], {"reduction": "avg"},
             error=("GC_EINVAL", "attribute 'reduction' is 'avg'")),
        Case("nll_bad_target_shape", "NegativeLogLikelihoodLoss", 13, [x, t2],
             error=("GC_EINVAL", "input 'target' has shape 4")),
        Case("nll_target_out_of_range", "NegativeLogLikelihoodLoss", 13,
             [x2, np.array([4, 0, 7, 1], dtype=np.int64)],
             error=("GC_EINVAL", "target 7 at flat index 2 is outside [0, 5)")),
    ]


# ---- algebra -------------------------------------------------------------------
def algebra_cases():
    x = f32(3, 4)
    xi = RNG.integers(-50, 50, size=(2, 5)).astype(np.int64)
    a, b = f32(2, 3, 4), f32(2, 4, 5)
    m = RNG.uniform(-1, 1, size=(2, 3, 3)).astype(np.float64)
    d = f32(2, 5, 5)
    mv = f32(2, 3, 2, 2)
    mean = mv.astype(np.float64).mean(axis=(0, 2, 3), keepdims=True)
    var = (mv.astype(np.float64) ** 2).mean(axis=(0, 2, 3), keepdims=True) - mean ** 2
    mvn = (mv - mean) / (np.sqrt(var) + 1e-9)

    def excl_rev(v, axis):
        r = np.flip(np.cumsum(np.flip(v, axis), axis), axis)
        return r - v
    return [
        Case("cumsum_axis1", "CumSum", 14, [x, np.array(1, dtype=np.int64)], {},
             [np.cumsum(x.astype(np.float64), axis=1).astype(np.float32)]),
        Case("cumsum_excl_rev_int", "CumSum", 14, [xi, np.array([-1], dtype=np.int32)],
             {"exclusive": 1, "reverse": 1}, [excl_rev(xi, 1)]),
        Case("eyelike_k1_int32", "EyeLike", 9, [f32(3, 4)], {"k": 1, "dtype": 6},
             [np.eye(3, 4, k=1, dtype=np.int32)]),
        Case("eyelike_kneg", "EyeLike", 9, [f32(4, 3)], {"k": -2},
             [np.eye(4, 3, k=-2, dtype=np.float32)]),
        Case("einsum_batch_matmul", "Einsum", 12, [a, b], {"equation": "bij,bjk->bik"},
             [np.einsum("bij,bjk->bik", a.astype(np.float64), b.astype(np.float64)).astype(np.float32)]),
        Case("einsum_diag_ellipsis", "Einsum", 12, [d], {"equation": "...ii->...i"},
             [np.einsum("...ii->...i", d)]),
        Case("einsum_implicit_transpose", "Einsum", 12, [x], {"equation": "ji"},
             [np.einsum("ji", x)]),
        Case("einsum_inner", "Einsum", 12, [x[0], x[1]], {"equation": "i,i"},
             [np.array(np.dot(x[0].astype(np.float64), x[1]), dtype=np.float32)]),
        Case("einsum_bad_term", "Einsum", 12, [x], {"equation": "ijk->i"},
             error=("GC_EINVAL", "does not fit an operand of rank 2")),
        Case("det_batch", "Det", 11, [m], {}, [np.linalg.det(m)], tol=1e-12),
        Case("det_singular", "Det", 11, [np.array([[1, 2], [2, 4]], dtype=np.float32)], {},
             [np.array(0, dtype=np.float32)]),
        Case("mvn_default_axes", "MeanVarianceNormalization", 13, [mv], {},
             [mvn.astype(np.float32)], tol=1e-5),
    ]


# ---- select --------------------------------------------------------------------
def select_cases():
    x = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3], [5, 8, 9, 7, 9]], dtype=np.float32)

    def topk(v, k, axis, largest):
        # stable: among equal values the lower index first
        key = -v if largest else v
        idx = np.argsort(key, axis=axis, kind="stable")
        idx = np.take(idx, np.arange(k), axis=axis)
        return np.take_along_axis(v, idx, axis=axis), idx.astype(np.int64)
    v1, i1 = topk(x, 3, 1, True)
    v0, i0 = topk(x, 2, 0, False)
    hx = f32(2, 3, 4)
    hm = (np.arange(4) == hx.argmax(axis=2)[..., None]).astype(np.float32)
    nz = np.array([[0, 1.5, 0], [2, 0, -1]], dtype=np.float32)
    cond = np.array([True, False, True], dtype=np.bool_)
    ux = np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [1, 0, 1]], dtype=np.float32)
    uy, ui, uinv, uc = np.unique(ux, axis=0, return_index=True, return_inverse=True, return_counts=True)
    rs = np.arange(12, dtype=np.float32).reshape(4, 3)
    lens = np.array([1, 3, 2], dtype=np.int64)
    rs_ref = rs.copy()
    for b, L in enumerate(lens):
        rs_ref[:L, b] = rs[:L, b][::-1]
    F = torch.nn.functional
    up_in = torch.from_numpy(f32(2, 3, 6, 8).astype(np.float64))
    pooled_t, idx_t = F.max_pool2d(up_in, 2, 2, return_indices=True)
    unpooled = F.max_unpool2d(pooled_t, idx_t, 2, 2).numpy()
    pooled = pooled_t.numpy().astype(np.float32)
    plane = np.arange(6).reshape(2, 3)[:, :, None, None] * 48  # torch's indices are per plane
    gidx = (idx_t.numpy() + plane).astype(np.int64)
    unpooled_big = np.zeros((2, 3, 7, 9))
    unpooled_big[:, :, :6, :8] = unpooled
    sd = np.zeros((3, 3), dtype=np.float32)
    sidx = np.array([[1, 0, 2], [0, 2, 1]], dtype=np.int64)
    sup = np.array([[1.0, 1.1, 1.2], [2.0, 2.1, 2.2]], dtype=np.float32)
    sref = sd.copy()
    for i in range(2):
        for j in range(3):
            sref[sidx[i, j], j] = sup[i, j]
    return [
        Case("topk_largest_ties", "TopK", 11, [x, np.array([3], dtype=np.int64)], {"axis": 1},
             [v1, i1], n_out=2),
        Case("topk_smallest_axis0", "TopK", 11, [x, np.array([2], dtype=np.int64)],
             {"axis": 0, "largest": 0}, [v0, i0], n_out=2),
        Case("topk_k_too_big", "TopK", 11, [x, np.array([6], dtype=np.int64)], {},
             error=("GC_EINVAL", "K = 6 is outside [0, 5]"), n_out=2),
        Case("hardmax_last", "Hardmax", 13, [hx], {}, [hm]),
        Case("nonzero", "NonZero", 13, [nz], {}, [np.array(np.nonzero(nz), dtype=np.int64)]),
        Case("compress_axis1", "Compress", 11, [x, cond], {"axis": 1},
             [np.compress(cond, x, axis=1)]),
        Case("compress_flat_short", "Compress", 11, [x, cond], {}, [np.compress(cond, x)]),
        Case("unique_axis0_sorted", "Unique", 11, [ux], {"axis": 0},
             [uy, ui.astype(np.int64), uinv.astype(np.int64), uc.astype(np.int64)], n_out=4),
        Case("reversesequence_time0", "ReverseSequence", 10, [rs, lens],
             {"batch_axis": 1, "time_axis": 0}, [rs_ref]),
        Case("scatter_axis0", "Scatter", 9, [sd, sidx, sup], {}, [sref]),
        Case("maxunpool_2x2", "MaxUnpool", 11, [pooled, gidx], {"kernel_shape": [2, 2], "strides": [2, 2]},
             [unpooled.astype(np.float32)], note="reference: torch max_pool2d / max_unpool2d"),
        Case("maxunpool_output_shape", "MaxUnpool", 11,
             [pooled, gidx, np.array([2, 3, 7, 9], dtype=np.int64)],
             {"kernel_shape": [2, 2], "strides": [2, 2]}, [unpooled_big.astype(np.float32)]),
    ]


# ---- quant ---------------------------------------------------------------------
def quant_cases():
    x = np.array([[-3.1, 0.5, 2.5, 1.5], [100.0, -200.0, 0.26, -0.25]], dtype=np.float32)
    s = np.array([0.5, 2.0], dtype=np.float32)
    z = np.array([-3, 10], dtype=np.int8)
    q = np.clip(np.rint(x / s[:, None]) + z[:, None], -128, 127).astype(np.int8)
    qu = np.clip(np.rint(x / np.float32(0.5)) + 128, 0, 255).astype(np.uint8)
    dq = ((q.astype(np.int32) - z[:, None]) * s[:, None]).astype(np.float32)
    dx = f32(3, 4, lo=-1.5, hi=3)
    mn, mx = min(0, dx.min()), max(0, dx.max())
    sc = np.float32((mx - mn) / np.float32(255))
    zp = np.uint8(np.clip(np.rint(np.float32(0) - mn / sc), 0, 255))
    dy = np.clip(np.rint(dx / sc) + zp, 0, 255).astype(np.uint8)
    A = RNG.integers(0, 255, size=(2, 3, 4)).astype(np.uint8)
    B = RNG.integers(-128, 127, size=(4, 5)).astype(np.int8)
    az = np.array([3, 200, 17], dtype=np.uint8)
    bz = np.array(-4, dtype=np.int8)
    mm = np.matmul(A.astype(np.int32) - az[:, None].astype(np.int32), B.astype(np.int32) - np.int32(bz))
    a_s, b_s, y_s = np.float32(0.02), np.float32(0.05), np.float32(0.9)
    y_z = np.uint8(120)
    Aq = RNG.integers(0, 255, size=(3, 4)).astype(np.uint8)
    Bq = RNG.integers(0, 255, size=(4, 2)).astype(np.uint8)
    acc = np.matmul(Aq.astype(np.int64) - 110, Bq.astype(np.int64) - 130)
    ql = np.clip(np.rint(acc * (np.float64(np.float32(a_s * b_s)) / np.float64(y_s))) + 120, 0, 255).astype(np.uint8)
    return [
        Case("quantize_axis0_int8", "QuantizeLinear", 13, [x, s, z], {"axis": 0}, [q],
             note="round half to even: 2.5/0.5 = 5, 0.26/2 + 10 -> 10, -0.25/2 + 10 -> 10"),
        Case("quantize_default_uint8", "QuantizeLinear", 13,
             [x, np.array(0.5, dtype=np.float32), np.array(128, dtype=np.uint8)], {}, [qu]),
        Case("dequantize_axis0", "DequantizeLinear", 13, [q, s, z], {"axis": 0}, [dq]),
        Case("dynamic_quantize", "DynamicQuantizeLinear", 11, [dx], {},
             [dy, np.array(sc, dtype=np.float32), np.array(zp, dtype=np.uint8)], n_out=3),
        Case("matmulinteger_rows_zp", "MatMulInteger", 10, [A[0], B, az, bz], {},
             [mm[0].astype(np.int32)]),
        Case("qlinearmatmul", "QLinearMatMul", 10,
             [Aq, np.array([a_s]), np.array([110], dtype=np.uint8), Bq, np.array([b_s]),
              np.array([130], dtype=np.uint8), np.array([y_s]), np.array([y_z])], {}, [ql]),
        Case("quantize_bad_axis_len", "QuantizeLinear", 13, [x, s], {"axis": 1},
             error=("GC_EINVAL", "input 'y_scale' has 2 values, but axis 1 of 'x' has 4")),
    ]


def quant_conv_cases():
    F = torch.nn.functional
    x = RNG.integers(0, 255, size=(1, 4, 6, 5)).astype(np.uint8)
    w = RNG.integers(-128, 127, size=(6, 2, 3, 2)).astype(np.int8)
    zx = np.uint8(77)
    zw = RNG.integers(-5, 5, size=(6,)).astype(np.int8)
    xf = torch.from_numpy(x.astype(np.float64) - 77)
    wf = torch.from_numpy(w.astype(np.float64) - zw[:, None, None, None])
    ref = F.conv2d(xf, wf, stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2).numpy()
    attrs = {"group": 2, "strides": [2, 1], "pads": [1, 2, 1, 2], "dilations": [1, 2]}
    xs, ys = np.float32(0.03), np.float32(4.0)
    ws = RNG.uniform(0.01, 0.05, size=(6,)).astype(np.float32)
    yz = np.uint8(100)
    mult = (xs * ws).astype(np.float32).astype(np.float64)[None, :, None, None] / np.float64(ys)
    q = np.clip(np.rint(ref * mult) + 100, 0, 255).astype(np.uint8)
    return [
        Case("convinteger_groups_strided_dilated", "ConvInteger", 10, [x, w, np.array(zx), zw], attrs,
             [ref.astype(np.int32)], note="reference: torch conv2d in float64 (exact integers)"),
        Case("qlinearconv_per_channel", "QLinearConv", 10,
             [x, np.array(xs), np.array(zx), w, ws, zw, np.array(ys), np.array(yz)], attrs, [q]),
        Case("convinteger_bad_group", "ConvInteger", 10, [x, w], {"group": 3},
             error=("GC_EINVAL", "do not fit group 3")),
    ]


# ---- resample ------------------------------------------------------------------
def resample_cases():
    x = f32(1, 2, 3, 4)
    t = torch.from_numpy(x.astype(np.float64))
    F = torch.nn.functional
    lin = F.interpolate(t, scale_factor=(2.0, 1.5), mode="bilinear", align_corners=False).numpy()
    ac = F.interpolate(t, size=(5, 3), mode="bilinear", align_corners=True).numpy()
    near = F.interpolate(t, scale_factor=(2.0, 2.0), mode="nearest").numpy()
    cub = F.interpolate(t, size=(6, 8), mode="bicubic", align_corners=False).numpy()
    g = RNG.uniform(-1.2, 1.2, size=(1, 3, 5, 2))
    gs = {}
    for mode in ("bilinear", "nearest", "bicubic"):
        for pad in ("zeros", "border", "reflection"):
            for al in (False, True):
                gs[(mode, pad, al)] = F.grid_sample(t, torch.from_numpy(g), mode=mode, padding_mode=pad,
                                                    align_corners=al).numpy()
    scales = lambda *v: np.array(v, dtype=np.float32)
    cases = [
        Case("resize_linear_half_pixel", "Resize", 13, [x, None, scales(1, 1, 2, 1.5)],
             {"mode": "linear"}, [lin.astype(np.float32)], note="torch bilinear, align_corners=False"),
        Case("resize_linear_align_corners_sizes", "Resize", 13,
             [x, None, None, np.array([1, 2, 5, 3], dtype=np.int64)],
             {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
             [ac.astype(np.float32)]),
        Case("resize_nearest_asymmetric_floor", "Resize", 13, [x, None, scales(1, 1, 2, 2)],
             {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
             [near.astype(np.float32)], note="torch 'nearest' is asymmetric + floor"),
        Case("resize_cubic_half_pixel", "Resize", 13,
             [x, None, None, np.array([1, 2, 6, 8], dtype=np.int64)], {"mode": "cubic"},
             [cub.astype(np.float32)], note="torch bicubic: A = -0.75, edge-clamped taps"),
        Case("upsample_nearest_opset9", "Upsample", 9, [x, scales(1, 1, 2, 2)], {},
             [near.astype(np.float32)]),
        Case("resize_scales_and_sizes", "Resize", 13,
             [x, None, scales(1, 1, 2, 2), np.array([1, 2, 6, 8], dtype=np.int64)], {},
             error=("GC_EINVAL", "give 'scales' or 'sizes', not both")),
    ]
    for (mode, pad, al), ref in gs.items():
        cases.append(Case("gridsample_%s_%s%s" % (mode, pad, "_align" if al else ""), "GridSample", 16,
                          [x, g.astype(np.float32)],
                          {"mode": mode, "padding_mode": pad, "align_corners": int(al)},
                          [ref.astype(np.float32)], tol=1e-4))
    return cases


# ---- signal --------------------------------------------------------------------
def signal_cases():
    n = 12
    k = np.arange(n)
    hann_p = 0.5 - 0.5 * np.cos(2 * np.pi * k / n)
    ham_s = np.hamming(n)            # symmetric, a0 = 0.54 in NumPy; ONNX uses 25/46
    ham_s = 25 / 46 - 21 / 46 * np.cos(2 * np.pi * k / (n - 1))
    black_p = 0.42 - 0.5 * np.cos(2 * np.pi * k / n) + 0.08 * np.cos(4 * np.pi * k / n)
    x = f32(2, 6, 3, 1)
    y = np.fft.fft(x[..., 0].astype(np.float64), axis=1)
    dft = np.stack([y.real, y.imag], -1).astype(np.float32)
    xc = f32(2, 5, 2)
    c = xc[..., 0].astype(np.float64) + 1j * xc[..., 1]
    yi = np.fft.ifft(c, n=8, axis=1)
    idft = np.stack([yi.real, yi.imag], -1).astype(np.float32)
    yo = np.fft.rfft(x[..., 0].astype(np.float64), axis=1)
    odft = np.stack([yo.real, yo.imag], -1).astype(np.float32)
    sig = f32(1, 40, 1)
    win = np.hanning(10).astype(np.float32)
    frames = 1 + (40 - 10) // 4
    st = np.stack([np.fft.rfft(sig[0, f * 4:f * 4 + 10, 0].astype(np.float64) * win) for f in range(frames)])
    stft = np.stack([st.real, st.imag], -1)[None].astype(np.float32)
    # MelWeightMatrix: ONNX's reference construction, transcribed
    mels, dl, rate, lo, hi = 5, 32, 16000, np.float32(100), np.float32(7000)
    fb = np.arange(0, mels + 2)
    lm, hm = 2595 * np.log10(1 + lo / 700), 2595 * np.log10(1 + hi / 700)
    fb = fb * ((hm - lm) / fb.shape[0]) + lm
    fb = ((dl + 1) * (700 * (np.power(10, fb / 2595) - 1))) // rate
    fb = fb.astype(int)
    mel = np.zeros((dl // 2 + 1, mels))
    for i in range(mels):
        l, cc, h = fb[i], fb[i + 1], fb[i + 2]
        if cc == l:
            mel[cc, i] = 1
        else:
            for j in range(l, cc + 1):
                mel[j, i] = (j - l) / (cc - l)
        for j in range(cc, h):
            mel[j, i] = (h - j) / (h - cc)
    i32 = lambda v: np.array(v, dtype=np.int32)
    return [
        Case("hann_periodic", "HannWindow", 17, [i32(n)], {}, [hann_p.astype(np.float32)]),
        Case("hamming_symmetric_double", "HammingWindow", 17, [np.array(n, dtype=np.int64)],
             {"periodic": 0, "output_datatype": 11}, [ham_s], tol=1e-12),
        Case("blackman_periodic", "BlackmanWindow", 17, [i32(n)], {}, [black_p.astype(np.float32)]),
        Case("dft_axis1_real", "DFT", 17, [x], {"axis": 1}, [dft], tol=1e-5),
        Case("dft_inverse_len8", "DFT", 17, [xc, np.array(8, dtype=np.int64)], {"axis": 1, "inverse": 1},
             [idft], tol=1e-5, note="dft_length 8 > 5: the signal is zero-padded"),
        Case("dft_onesided", "DFT", 17, [x], {"axis": 1, "onesided": 1}, [odft], tol=1e-5),
        Case("stft_hann_window", "STFT", 17, [sig, np.array(4, dtype=np.int64), win], {},
             [stft], tol=1e-5),
        Case("melweightmatrix", "MelWeightMatrix", 17, [i32(mels), i32(dl), i32(rate), lo, hi], {},
             [mel.astype(np.float32)]),
        Case("dft_bad_last_axis", "DFT", 17, [f32(2, 3, 3)], {},
             error=("GC_EINVAL", "input must be (..., 1) real or (..., 2) complex")),
    ]


# ---- detection -----------------------------------------------------------------
def detection_cases():
    B, N, C = 2, 8, 2
    ctr = RNG.uniform(0, 10, size=(B, N, 2))
    wh = RNG.uniform(1, 5, size=(B, N, 2))
    boxes = np.concatenate([ctr - wh / 2, ctr + wh / 2], -1).astype(np.float32)  # x1 y1 x2 y2
    scores = RNG.uniform(0, 1, size=(B, C, N)).astype(np.float32)
    max_out, iou_t, score_t = 3, 0.3, 0.2

    def ref(center):
        sel = []
        for b in range(B):
            for c in range(C):
                s = torch.from_numpy(scores[b, c].astype(np.float64))
                keep_mask = s > score_t
                idx = torch.nonzero(keep_mask).flatten()
                bx = torch.from_numpy(boxes[b].astype(np.float64))[idx]
                kept = torchvision.ops.nms(bx, s[idx], iou_t)[:max_out]
                sel += [[b, c, int(idx[k])] for k in kept]
        return np.array(sel, dtype=np.int64).reshape(-1, 3)
    # ONNX corners are [y1, x1, y2, x2] (either diagonal); torchvision takes [x1, y1, x2, y2]
    onnx_boxes = boxes[..., [1, 0, 3, 2]].copy()
    onnx_boxes[0, 1] = onnx_boxes[0, 1, [2, 3, 0, 1]]  # a flipped box: same box
    centers = np.concatenate([ctr, wh], -1).astype(np.float32)
    boxes_c = np.concatenate([centers[..., :2] - centers[..., 2:] / 2,
                              centers[..., :2] + centers[..., 2:] / 2], -1)
    s1 = lambda v, t: np.array([v], dtype=t)
    r = ref(False)
    boxes_saved = boxes.copy()
    boxes[:] = boxes_c
    rc = ref(True)
    boxes[:] = boxes_saved
    F = torch.nn.functional
    X = f32(2, 3, 6, 7)
    rois = np.array([[0.5, 1.0, 4.2, 5.5], [1.3, 0.2, 6.8, 3.1], [2.0, 2.0, 2.4, 2.6]], dtype=np.float32)
    bidx = np.array([1, 0, 1], dtype=np.int64)
    trois = torch.from_numpy(np.concatenate([bidx[:, None], rois], 1).astype(np.float64))
    ra_t = torchvision.ops.roi_align(torch.from_numpy(X.astype(np.float64)), trois, (3, 4), 0.5, 2,
                                     aligned=True).numpy()
    ra_f = torchvision.ops.roi_align(torch.from_numpy(X.astype(np.float64)), trois, (3, 4), 0.5, 0,
                                     aligned=False).numpy()
    return [
        Case("roialign_half_pixel", "RoiAlign", 16, [X, rois, bidx],
             {"output_height": 3, "output_width": 4, "spatial_scale": 0.5, "sampling_ratio": 2},
             [ra_t.astype(np.float32)], tol=1e-5, note="reference: torchvision.ops.roi_align(aligned=True)"),
        Case("roialign_output_half_pixel_adaptive", "RoiAlign", 16, [X, rois, bidx],
             {"output_height": 3, "output_width": 4, "spatial_scale": 0.5,
              "coordinate_transformation_mode": "output_half_pixel"},
             [ra_f.astype(np.float32)], tol=1e-5, note="aligned=False, sampling_ratio 0 (adaptive)"),
        Case("nms_corners", "NonMaxSuppression", 11,
             [onnx_boxes, scores, s1(max_out, np.int64), s1(iou_t, np.float32), s1(score_t, np.float32)],
             {}, [r], note="reference: torchvision.ops.nms per batch and class"),
        Case("nms_center_point", "NonMaxSuppression", 11,
             [centers, scores, s1(max_out, np.int64), s1(iou_t, np.float32), s1(score_t, np.float32)],
             {"center_point_box": 1}, [rc]),
        Case("nms_no_max_output", "NonMaxSuppression", 11, [onnx_boxes, scores], {},
             [np.zeros((0, 3), dtype=np.int64)], note="max_output_boxes_per_class absent: 0"),
    ]


# ---- rnn -----------------------------------------------------------------------
def rnn_cases():
    torch.manual_seed(7)
    T, N, I, H = 4, 2, 3, 5
    x = f32(T, N, I)
    xt = torch.from_numpy(x.astype(np.float64))

    def onnx_weights(mod, dirs, order):
        """torch's gate blocks -> ONNX's order (a permutation of block indices)."""
        W, R, B = [], [], []
        for d in range(dirs):
            sfx = "_reverse" if d else ""
            wi = getattr(mod, "weight_ih_l0" + sfx).detach().numpy()
            wh = getattr(mod, "weight_hh_l0" + sfx).detach().numpy()
            bi = getattr(mod, "bias_ih_l0" + sfx).detach().numpy()
            bh = getattr(mod, "bias_hh_l0" + sfx).detach().numpy()
            blk = lambda a: np.concatenate([a[j * H:(j + 1) * H] for j in order])
            W.append(blk(wi))
            R.append(blk(wh))
            B.append(np.concatenate([blk(bi), blk(bh)]))
        return [np.stack(W).astype(np.float32), np.stack(R).astype(np.float32),
                np.stack(B).astype(np.float32)]

    def run(mod, dirs, order, h0=None, c0=None):
        mod = mod.double()
        W, R, B = onnx_weights(mod, dirs, order)
        # recompute with the float32-rounded weights, as the kernel sees them
        with torch.no_grad():
            for d in range(dirs):
                sfx = "_reverse" if d else ""
                inv = np.argsort(order)
                unblk = lambda a: np.concatenate([a[j * H:(j + 1) * H] for j in inv])
                getattr(mod, "weight_ih_l0" + sfx).copy_(torch.from_numpy(unblk(W[d]).astype(np.float64)))
                getattr(mod, "weight_hh_l0" + sfx).copy_(torch.from_numpy(unblk(R[d]).astype(np.float64)))
                getattr(mod, "bias_ih_l0" + sfx).copy_(torch.from_numpy(unblk(B[d][:len(order) * H]).astype(np.float64)))
                getattr(mod, "bias_hh_l0" + sfx).copy_(torch.from_numpy(unblk(B[d][len(order) * H:]).astype(np.float64)))
            args = (xt,) if h0 is None else ((xt, (h0, c0)) if c0 is not None else (xt, h0))
            y, st = mod(*args)
        return W, R, B, y.numpy(), st
    cases = []
    # LSTM: torch i, f, g, o -> ONNX i, o, f, c
    h0 = torch.from_numpy(RNG.uniform(-1, 1, size=(2, N, H)).astype(np.float32).astype(np.float64))
    c0 = torch.from_numpy(RNG.uniform(-1, 1, size=(2, N, H)).astype(np.float32).astype(np.float64))
    W, R, B, y, (hn, cn) = run(torch.nn.LSTM(I, H, bidirectional=True), 2, [0, 3, 1, 2], h0, c0)
    Y = y.reshape(T, N, 2, H).transpose(0, 2, 1, 3)
    cases.append(Case("lstm_bidirectional_initial_state", "LSTM", 14,
                      [x, W, R, B, None, h0.numpy().astype(np.float32), c0.numpy().astype(np.float32)],
                      {"hidden_size": H, "direction": "bidirectional"},
                      [Y.astype(np.float32), hn.numpy().astype(np.float32), cn.numpy().astype(np.float32)],
                      tol=1e-5, n_out=3, note="reference: torch.nn.LSTM (gates i, f, g, o reordered)"))
    # GRU: torch r, z, n with the reset applied after the matmul = linear_before_reset 1
    W, R, B, y, hn = run(torch.nn.GRU(I, H), 1, [1, 0, 2])
    cases.append(Case("gru_linear_before_reset", "GRU", 14, [x, W, R, B],
                      {"hidden_size": H, "linear_before_reset": 1},
                      [y.reshape(T, 1, N, H).astype(np.float32), hn.numpy().astype(np.float32)],
                      tol=1e-5, n_out=2, note="reference: torch.nn.GRU"))
    W, R, B, y, hn = run(torch.nn.RNN(I, H, nonlinearity="relu"), 1, [0])
    cases.append(Case("rnn_relu_layout1", "RNN", 14,
                      [np.ascontiguousarray(x.transpose(1, 0, 2)), W, R, B],
                      {"hidden_size": H, "activations_": 0, "layout": 1},
                      [np.ascontiguousarray(y.reshape(T, 1, N, H).transpose(2, 0, 1, 3)).astype(np.float32),
                       np.ascontiguousarray(hn.numpy().transpose(1, 0, 2)).astype(np.float32)],
                      tol=1e-5, n_out=2, note="reference: torch.nn.RNN(relu), batch-first layout"))
    cases[-1].attrs.pop("activations_")
    cases[-1].strings = {"activations": ["Relu"]}
    cases.append(Case("rnn_bad_direction", "RNN", 14, [x, W, R], {"direction": "sideways"},
                      error=("GC_EINVAL", "attribute 'direction' = 'sideways'"), n_out=2))
    return cases


# ---- text ----------------------------------------------------------------------
def tfidf_ref(x, pool, counts, indexes, weights, mode, min_n, max_n, max_skip):
    """Brute force over (start, skip) per n-gram in the pool."""
    grams = []
    for L in range(len(counts)):
        end = counts[L + 1] if L + 1 < len(counts) else len(pool)
        for at in range(counts[L], end, L + 1):
            grams.append(tuple(pool[at:at + L + 1]))
    n_out = max(indexes) + 1
    rows = x.reshape(-1, x.shape[-1])
    res = np.zeros((rows.shape[0], n_out))
    for r, row in enumerate(rows):
        cnt = np.zeros(n_out)
        for q, g in enumerate(grams):
            if not (min_n <= len(g) <= max_n):
                continue
            hits = set()
            for s in ([0] if len(g) == 1 else range(max_skip + 1)):
                for i in range(len(row)):
                    pos = [i + t * (s + 1) for t in range(len(g))]
                    if pos[-1] < len(row) and tuple(row[pos]) == g:
                        hits.add((i, s))
            cnt[indexes[q]] += len(hits)
        for q in range(len(grams)):
            c = cnt[indexes[q]]
            w = weights[q] if weights else 1.0
            res[r, indexes[q]] = c if mode == "TF" else (w if c > 0 else 0) if mode == "IDF" else c * w
    return res.reshape(x.shape[:-1] + (n_out,)).astype(np.float32)


def text_cases():
    x = RNG.integers(1, 6, size=(3, 9)).astype(np.int64)
    pool = [2, 3, 5, 2, 3, 3, 4, 5, 1, 1, 2, 3, 4]
    counts = [0, 3, 7]  # unigrams 2,3,5; bigrams (2,3),(3,4); trigrams (5,1,1),(2,3,4)
    idx = [6, 0, 1, 2, 3, 4, 5]
    wts = [0.5, 1.5, 2.0, 0.25, 1.0, 3.0, 0.75]
    base = {"pool_int64s": pool, "ngram_counts": counts, "ngram_indexes": idx}
    cases = []
    for mode, mn, mx, sk in (("TF", 1, 3, 2), ("TFIDF", 2, 3, 1), ("IDF", 1, 2, 0)):
        a = dict(base, mode=mode, min_gram_length=mn, max_gram_length=mx, max_skip_count=sk)
        c = Case("tfidf_%s_%d_%d_skip%d" % (mode.lower(), mn, mx, sk), "TfIdfVectorizer", 9, [x], a,
                 [tfidf_ref(x, pool, counts, idx, wts if mode != "TF" else None, mode, mn, mx, sk)])
        if mode != "TF":
            c.floats = {"weights": wts}
        cases.append(c)
    x1 = x[0].astype(np.int32)
    cases.append(Case("tfidf_1d_int32", "TfIdfVectorizer", 9, [x1],
                      dict(base, mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=3),
                      [tfidf_ref(x1, pool, counts, idx, None, "TF", 1, 2, 3)]))
    cases.append(Case("tfidf_bad_counts", "TfIdfVectorizer", 9, [x],
                      dict(base, ngram_counts=[0, 4], mode="TF", min_gram_length=1, max_gram_length=2),
                      error=("GC_EINVAL", "ngram_counts[1] does not fit pool_int64s")))
    return cases


if __name__ == "__main__":
    write("loss", "NumPy (log-softmax and the loss loops written out)", loss_cases())
    write("algebra", "NumPy (np.cumsum, np.eye, np.einsum, np.linalg.det)", algebra_cases())
    write("select", "NumPy (stable argsort, np.nonzero, np.compress, np.unique)", select_cases())
    write("quant", "NumPy (np.rint is round half to even) and torch conv2d", quant_cases() + quant_conv_cases())
    write("resample", "PyTorch (interpolate, grid_sample) in float64", resample_cases())
    write("signal", "NumPy (np.fft, the window formulas, ONNX's mel construction)", signal_cases())
    write("detection", "torchvision.ops.nms", detection_cases())
    write("rnn", "PyTorch (nn.LSTM, nn.GRU, nn.RNN) in float64", rnn_cases())
    write("text", "a brute-force Python n-gram counter", text_cases())
