"""Opset 19: Cast/CastLike with saturate and the float8 types,
DeformConv, Equal on strings (Q/DQ on float8: qdq_float8.py),
Pad mode wrap, AveragePool dilations (Resize-18/19: resize18.py)."""
import numpy as np

import dtypes
from caselib import Case, In, rng

F8 = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")
# Where ONNX Runtime 1.30 departs from Cast-19's tables (graphcc follows them).
ORT_F8_DIFFERS = {
    ("float8e4m3fnuz", 1): "ONNX Runtime 1.30 saturates +-inf to +-240; Cast-19 says NaN",
    ("float8e5m2fnuz", 1): "ONNX Runtime 1.30 saturates +-inf to +-57344; Cast-19 says NaN",
}

def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def equal_cases():
    r = rng('equal_cases')
    a = np.array([["a", "bc", ""], ["x", "yz", "é"]], dtype=object)
    b = np.array(["a", "yz", ""], dtype=object)
    yield Case("equal19_strings_broadcast", "Equal", 19, {"A": a, "B": b},
               ref=lambda A, B: [np.equal(A.astype(str), B.astype(str))])
    yield Case("equal19_strings_empty", "Equal", 19,
               {"A": np.zeros((0, 2), dtype=object), "B": np.array(["q", "r"], dtype=object)},
               ref=lambda A, B: [np.zeros((0, 2), np.bool_)])
    yield Case("equal19_string_vs_int", "Equal", 19,
               {"A": np.array(["1"], dtype=object), "B": np.array([1], np.int64)},
               error="int64", out_types={"Y": "bool"})


def cast_cases():
    r = rng("cast_cases")
    # values around every float8 range: tiny, subnormal, normal, ties, beyond
    # max, infinities, NaN, signed zeros
    for name in F8:
        code = dtypes.CODES[name]
        top = dtypes.f8_max(code)
        mids = dtypes.decode(np.arange(256, dtype=np.uint8), code) * 1.0625
        # in range: normal and subnormal values, ties, signed zeros, NaN
        x = np.concatenate([f32(r, 40) * top / 8, f32(r, 20) * top / 1e4, f32(r, 20) * top / 1e6,
                            np.array([0.0, -0.0, np.nan, top, -top, 1e-9, -1e-9], np.float32),
                            mids[np.isfinite(mids) & (np.abs(mids) < top)]]
                           ).astype(np.float32)
        # out of range: rounding just past the max, far past it, infinities
        big = np.array([top * 1.03, -top * 1.03, top * 1.07, top * 4, -top * 1e3, 3e38, np.inf,
                        -np.inf], np.float32)
        for sat in (1, 0):
            yield Case("cast19_float_to_%s_sat%d" % (name, sat), "Cast", 19, {"X": x},
                       attrs={"to": code, "saturate": sat}, out_types={"Y": name},
                       ref=lambda X, c=code, s=sat: [dtypes.decode(dtypes.encode(X, c, bool(s)), c)])
            yield Case("cast19_overflow_to_%s_sat%d" % (name, sat), "Cast", 19, {"X": big},
                       attrs={"to": code, "saturate": sat}, out_types={"Y": name},
                       ref=lambda X, c=code, s=sat: [dtypes.decode(dtypes.encode(X, c, bool(s)), c)],
                       ort_differs=ORT_F8_DIFFERS.get((name, sat)))
        vals = dtypes.decode(np.arange(256, dtype=np.uint8), code)
        yield Case("cast19_%s_to_float" % name, "Cast", 19, {"X": In(vals, name)},
                   attrs={"to": 1}, ref=lambda X: [X.astype(np.float32)])
        yield Case("cast19_%s_to_float16" % name, "Cast", 19, {"X": In(vals, name)},
                   attrs={"to": 10}, ref=lambda X: [X.astype(np.float16)])
    h = (f32(r, 30) * 50).astype(np.float16)
    yield Case("cast19_float16_to_float8e4m3fn", "Cast", 19, {"X": h}, attrs={"to": 17},
               out_types={"Y": "float8e4m3fn"},
               ref=lambda X: [dtypes.decode(dtypes.encode(X.astype(np.float32), 17), 17)])
    yield Case("cast19_float8e5m2_to_float8e4m3fn", "Cast", 19,
               {"X": In(dtypes.decode(np.arange(256, dtype=np.uint8), 19), "float8e5m2")},
               attrs={"to": 17}, out_types={"Y": "float8e4m3fn"},
               ref=lambda X: [dtypes.decode(dtypes.encode(X, 17), 17)])
    yield Case("cast19_float_to_float8_empty", "Cast", 19, {"X": np.zeros((0, 3), np.float32)},
               attrs={"to": 19}, out_types={"Y": "float8e5m2"}, ref=lambda X: [X])
    yield Case("castlike19_float_to_float8e4m3fnuz", "CastLike", 19,
               {"X": x, "like": In(np.zeros(1), "float8e4m3fnuz")}, attrs={"saturate": 0},
               out_types={"Y": "float8e4m3fnuz"},
               ref=lambda X, L: [dtypes.decode(dtypes.encode(X, 18, False), 18)])
    yield Case("cast18_float8_needs_opset19", "Cast", 18, {"X": x}, attrs={"to": 17},
               out_types={"Y": "float8e4m3fn"}, error="float8 types need Cast from opset 19")


def float8_io_cases():
    r = rng("float8_io_cases")
    for name in F8:
        code = dtypes.CODES[name]
        v = dtypes.decode(np.arange(256, dtype=np.uint8), code).reshape(4, 64)
        yield Case("identity19_%s" % name, "Identity", 19, {"X": In(v, name)},
                   ref=lambda X: [X], out_types={"Y": name})
        yield Case("reshape19_%s" % name, "Reshape", 19,
                   {"X": In(v, name), "shape": np.array([8, -1], np.int64)},
                   ref=lambda X, s: [X.reshape(8, -1)], out_types={"Y": name},
                   ort_differs="ONNX Runtime 1.30 has no float8 Reshape kernel on CPU")
    b = f32(r, 3, 5)
    yield Case("identity19_bfloat16", "Identity", 19, {"X": In(b, "bfloat16")},
               ref=lambda X: [X], out_types={"Y": "bfloat16"})
    yield Case("cast19_float_to_bfloat16", "Cast", 19,
               {"X": dtypes.round_trip(b, dtypes.BFLOAT16)}, attrs={"to": 16},
               ref=lambda X: [X], out_types={"Y": "bfloat16"},
               note="values already bfloat16-exact: the rounding of Cast to bfloat16 is "
               "ONNX 1.12's truncation in graphcc (the 1.12 node tests) and rounding in "
               "ONNX Runtime")
    yield Case("add19_float8_declined", "Add", 19,
               {"A": In(b, "float8e4m3fn"), "B": In(b, "float8e4m3fn")},
               out_types={"C": "float8e4m3fn"}, outputs=["C"], error="float8e4m3fn")


def pad_pool_cases():
    r = rng("pad_pool_cases")
    x = f32(r, 2, 3, 4)
    yield Case("pad19_wrap", "Pad", 19, {"X": x, "pads": np.array([0, 1, 2, 0, 2, 1], np.int64)},
               attrs={"mode": "wrap"},
               ref=lambda X, p: [np.pad(X, ((0, 0), (1, 2), (2, 1)), mode="wrap")])
    yield Case("pad19_wrap_axes", "Pad", 19,
               {"X": x, "pads": np.array([3, 1], np.int64), "value": None,
                "axes": np.array([-1], np.int64)},
               attrs={"mode": "wrap"},
               ref=lambda X, p, a: [np.pad(X, ((0, 0), (0, 0), (3, 1)), mode="wrap")])
    yield Case("pad19_bad_mode", "Pad", 19, {"X": x, "pads": np.zeros(6, np.int64)},
               attrs={"mode": "mirror"}, error="attribute 'mode' is 'mirror'")
    img = f32(r, 1, 2, 7, 7)

    def avg_dilated(X):
        # kernel 2x2, dilation 2, stride 1, no padding
        out = np.zeros((1, 2, 5, 5), np.float32)
        for i in range(5):
            for j in range(5):
                out[:, :, i, j] = X[:, :, i:i + 3:2, j:j + 3:2].mean(axis=(2, 3))
        return [out]
    yield Case("averagepool19_dilations", "AveragePool", 19, {"X": img},
               attrs={"kernel_shape": [2, 2], "dilations": [2, 2]}, ref=avg_dilated)


def cases():
    yield from pad_pool_cases()
    yield from cast_cases()
    yield from float8_io_cases()
    yield from equal_cases()
