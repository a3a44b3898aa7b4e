"""QuantizeLinear / DequantizeLinear on the float8 types (opset 19), blocked
(21), DequantizeLinear-23's output_dtype. The reference: y = x / scale +
zero_point rounded to the float8 type as Cast-19 does (saturate or not),
and x - zero_point times scale back, in float32 (dtypes.py)."""
import numpy as np

import dtypes
from caselib import Case, In, rng

F8 = ("float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz")


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def _expand(S, X, axis, block):
    """A scale or zero point laid out against X (per tensor, axis, block)."""
    S = np.asarray(S, np.float32)
    if block:
        return np.repeat(S, block, axis=axis).take(range(X.shape[axis]), axis=axis)
    if S.ndim == 1 and S.size > 1:
        shape = [1] * X.ndim
        shape[axis] = S.size
        return S.reshape(shape)
    return S


def quantize(X, S, Z, code, saturate=True, axis=1, block=0):
    S = _expand(S, X, axis, block)
    zp = 0 if Z is None else _expand(Z, X, axis, block)
    v = (X.astype(np.float32) / S + zp).astype(np.float32)
    return dtypes.decode(dtypes.encode(v, code, saturate), code)


def dequantize(X, S, Z, axis=1):
    S = np.asarray(S, np.float32)
    if S.ndim == 1 and S.size > 1:
        shape = [1] * X.ndim
        shape[axis] = S.size
        S, Z = S.reshape(shape), (None if Z is None else np.asarray(Z).reshape(shape))
    zp = 0 if Z is None else np.asarray(Z, np.float32)
    return ((X.astype(np.float32) - zp) * S).astype(np.float32)


def qdq19_cases():
    r = rng("qdq_float8")
    for name in F8:
        code = dtypes.CODES[name]
        top = dtypes.f8_max(code)
        x = np.concatenate([f32(r, 30) * top / 40, f32(r, 10) * top / 1e4,
                            np.array([0, top * 0.9, top * 1.5, -top * 3, np.nan], np.float32)])
        x = x.astype(np.float32) * np.float32(0.25)  # scale 0.25 below
        s = np.array(0.25, np.float32)
        for sat in (1, 0):
            yield Case("quantize19_%s_sat%d" % (name, sat), "QuantizeLinear", 19,
                       {"x": x, "y_scale": s, "y_zero_point": In(np.zeros(()), name)},
                       attrs={"saturate": sat}, outputs=["y"], out_types={"y": name},
                       ref=lambda X, S, Z, c=code, t=sat: [quantize(X, S, Z, c, bool(t))])
        codes = dtypes.decode(np.arange(256, dtype=np.uint8), code).reshape(16, 16)
        ps = (np.abs(f32(r, 16)) + 0.1).astype(np.float32)
        yield Case("dequantize19_%s_per_axis" % name, "DequantizeLinear", 19,
                   {"x": In(codes, name), "x_scale": ps,
                    "x_zero_point": In(np.zeros(16), name)},
                   attrs={"axis": 1}, outputs=["y"],
                   ref=lambda X, S, Z: [dequantize(X, S, Z, 1)])
    x = f32(r, 4, 6) * 30
    ps = (np.abs(f32(r, 6)) + 0.5).astype(np.float32)
    yield Case("quantize19_float8e5m2_per_axis_no_zero_point", "QuantizeLinear", 19,
               {"x": x, "y_scale": ps, "y_zero_point": In(np.zeros(6), "float8e5m2")},
               attrs={"axis": -1}, outputs=["y"], out_types={"y": "float8e5m2"},
               ref=lambda X, S, Z: [quantize(X, S, Z, 19, axis=1)])
    h = (f32(r, 3, 5) * 10).astype(np.float16)
    yield Case("quantize19_float16_to_float8e4m3fn", "QuantizeLinear", 19,
               {"x": h, "y_scale": np.array(0.5, np.float16),
                "y_zero_point": In(np.zeros(()), "float8e4m3fn")},
               outputs=["y"], out_types={"y": "float8e4m3fn"},
               ref=lambda X, S, Z: [quantize(X.astype(np.float32), S, Z, 17)])
    yield Case("dequantize19_float8e4m3fn_to_float16", "DequantizeLinear", 19,
               {"x": In(f32(r, 3, 5) * 20, "float8e4m3fn"), "x_scale": np.array(0.5, np.float16)},
               outputs=["y"],
               ref=lambda X, S: [dequantize(X, S, None).astype(np.float16)])
    # errors: float8 before opset 19; a zero point of a type that is not quantized
    yield Case("quantize18_float8_needs_19", "QuantizeLinear", 18,
               {"x": x, "y_scale": np.array(1, np.float32),
                "y_zero_point": In(np.zeros(()), "float8e4m3fn")},
               outputs=["y"], out_types={"y": "float8e4m3fn"},
               error="quantizing to float8e4m3fn (type 17, y_zero_point's) is not supported: "
               "graphcc quantizes to int8, uint8 at opset 18")
    yield Case("quantize19_float_zero_point", "QuantizeLinear", 19,
               {"x": x, "y_scale": np.array(1, np.float32),
                "y_zero_point": np.zeros((), np.float32)},
               outputs=["y"], out_types={"y": "float32"},
               error="quantizing to float32 (type 1, y_zero_point's) is not supported")


def qdq21_23_cases():
    r = rng("qdq_float8_21")
    x = f32(r, 3, 10) * 50
    s = (np.abs(f32(r, 3, 3)) + 0.5).astype(np.float32)
    yield Case("quantize21_float8e4m3fn_blocked", "QuantizeLinear", 21,
               {"x": x, "y_scale": s, "y_zero_point": In(np.zeros((3, 3)), "float8e4m3fn")},
               attrs={"axis": 1, "block_size": 4}, outputs=["y"],
               out_types={"y": "float8e4m3fn"},
               ref=lambda X, S, Z: [quantize(X, S, Z, 17, axis=1, block=4)])
    yield Case("quantize21_output_dtype_float8e5m2", "QuantizeLinear", 21,
               {"x": x, "y_scale": np.array(2, np.float32)},
               attrs={"output_dtype": 19, "saturate": 0}, outputs=["y"],
               out_types={"y": "float8e5m2"},
               ref=lambda X, S: [quantize(X, S, None, 19, saturate=False)])
    codes = dtypes.decode(np.arange(256, dtype=np.uint8), 18).reshape(8, 32)
    bs = (np.abs(f32(r, 2, 32)) + 0.1).astype(np.float32)
    yield Case("dequantize21_float8e4m3fnuz_blocked", "DequantizeLinear", 21,
               {"x": In(codes, "float8e4m3fnuz"), "x_scale": bs},
               attrs={"axis": 0, "block_size": 4}, outputs=["y"],
               ref=lambda X, S: [X.astype(np.float32) * np.repeat(S, 4, axis=0)])
    xq = r.integers(-100, 100, (4, 6)).astype(np.int8)
    yield Case("dequantize23_output_dtype_float16", "DequantizeLinear", 23,
               {"x": xq, "x_scale": np.array(0.125, np.float32),
                "x_zero_point": np.array(3, np.int8)},
               attrs={"output_dtype": 10}, outputs=["y"],
               ref=lambda X, S, Z: [dequantize(X, S, Z).astype(np.float16)],
               ort_differs="ONNX Runtime 1.30 fails at run time (a tensor type mismatch in "
               "its kernel) when output_dtype differs from x_scale's type")
    yield Case("dequantize23_output_dtype_float8_refused", "DequantizeLinear", 23,
               {"x": xq, "x_scale": np.array(0.125, np.float32)},
               attrs={"output_dtype": 17}, outputs=["y"], out_types={"y": "float8e4m3fn"},
               error="attribute 'output_dtype' = 17 must be float32 (1), float16 (10) or "
               "bfloat16 (16)")
    yield Case("quantize23_precision_float32", "QuantizeLinear", 23,
               {"x": x, "y_scale": np.array(0.5, np.float16),
                "y_zero_point": np.array(0, np.int8)},
               attrs={"precision": 1}, outputs=["y"],
               ref=lambda X, S, Z: [np.clip(np.rint(X / np.float32(S)), -128, 127)
                                    .astype(np.int8)],
               ort_differs="ONNX Runtime 1.30 fails at run time (a tensor type mismatch in "
               "its kernel) when y_scale's type differs from x's")


def cases():
    yield from qdq19_cases()
    yield from qdq21_23_cases()
