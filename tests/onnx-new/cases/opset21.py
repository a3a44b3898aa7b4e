"""Opset 21: GroupNormalization's per-channel scale and bias (and the
per-group form of opset 18), blocked QuantizeLinear/DequantizeLinear
(block_size), int16/uint16 quantization, output_dtype. NumPy references:
tests/models/modern/reference.py."""
import os
import sys

import numpy as np

from caselib import Case

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "models", "modern"))
import reference as ref  # noqa: E402

R = np.random.default_rng(21)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def group_norm_cases():
    x, s, b = f32(2, 6, 5, 4), f32(6), f32(6)
    yield Case("group_norm21_per_channel", "GroupNormalization", 21,
               {"X": x, "scale": s, "bias": b}, attrs={"num_groups": 3},
               ref=lambda X, S, B: [ref.group_norm(X, S, B, 3)])
    x3 = f32(3, 8, 7)
    s8, b8 = f32(8), f32(8)
    yield Case("group_norm21_3d_eps", "GroupNormalization", 21,
               {"X": x3, "scale": s8, "bias": b8}, attrs={"num_groups": 2, "epsilon": 0.1},
               ref=lambda X, S, B: [ref.group_norm(X, S, B, 2, 0.1)])
    yield Case("group_norm21_groups_eq_channels", "GroupNormalization", 21,
               {"X": x3, "scale": s8, "bias": b8}, attrs={"num_groups": 8},
               ref=lambda X, S, B: [ref.group_norm(X, S, B, 8)])
    yield Case("group_norm21_empty_batch", "GroupNormalization", 21,
               {"X": np.zeros((0, 6, 3), np.float32), "scale": s, "bias": b},
               attrs={"num_groups": 3}, ref=lambda X, S, B: [X.copy()],
               ort_differs="ONNX Runtime 1.30 expands GroupNormalization's function body, "
                           "whose Reshape to (0, groups, -1) fails on an empty batch")
    s3, b3 = f32(3), f32(3)
    yield Case("group_norm18_per_group", "GroupNormalization", 18,
               {"X": x, "scale": s3, "bias": b3}, attrs={"num_groups": 3},
               ref=lambda X, S, B: [ref.group_norm(X, S, B, 3, per_channel=False)])
    yield Case("group_norm21_scale_per_group_refused", "GroupNormalization", 21,
               {"X": x, "scale": s3, "bias": b3}, attrs={"num_groups": 3},
               error="must be float32 [6]: one per channel at opset 21")
    yield Case("group_norm21_groups_not_dividing", "GroupNormalization", 21,
               {"X": x, "scale": s, "bias": b}, attrs={"num_groups": 4},
               error="must be positive and divide the 6 channels")


def quant_cases():
    x = f32(3, 10) * 4
    s = np.abs(f32(3, 3)) + 0.05
    z = R.integers(-5, 5, (3, 3)).astype(np.int8)
    yield Case("quantize21_blocked_axis1_partial_block", "QuantizeLinear", 21,
               {"x": x, "y_scale": s, "y_zero_point": z}, attrs={"axis": 1, "block_size": 4},
               outputs=["y"], ref=lambda X, S, Z: [ref.quantize(X, S, Z, 1, 4, np.int8)])
    xq = R.integers(0, 255, (6, 4)).astype(np.uint8)
    s0 = np.abs(f32(2, 4)) + 0.1
    z0 = R.integers(100, 150, (2, 4)).astype(np.uint8)
    yield Case("dequantize21_blocked_axis0", "DequantizeLinear", 21,
               {"x": xq, "x_scale": s0, "x_zero_point": z0}, attrs={"axis": 0, "block_size": 3},
               outputs=["y"], ref=lambda X, S, Z: [ref.dequantize(X, S, Z, 0, 3)])
    yield Case("dequantize21_blocked_no_zero_point", "DequantizeLinear", 21,
               {"x": xq.astype(np.int8), "x_scale": s0}, attrs={"axis": 0, "block_size": 3},
               outputs=["y"], ref=lambda X, S: [ref.dequantize(X, S, None, 0, 3)])
    yield Case("quantize21_blocked_bad_scale_shape", "QuantizeLinear", 21,
               {"x": x, "y_scale": np.abs(f32(3, 2)) + 0.1}, attrs={"axis": 1, "block_size": 4},
               outputs=["y"], error="does not fit x 3x10 in blocks of 4",
               out_types={"y": "uint8"})
    big = f32(4, 5) * 300
    s16 = np.array(0.02, np.float32)
    yield Case("quantize21_int16", "QuantizeLinear", 21,
               {"x": big, "y_scale": s16, "y_zero_point": np.array(100, np.int16)},
               outputs=["y"],
               ref=lambda X, S, Z: [ref.quantize(X, S, Z, dtype=np.int16)])
    yield Case("quantize21_uint16_per_axis", "QuantizeLinear", 21,
               {"x": big, "y_scale": np.abs(f32(5)) + 0.01,
                "y_zero_point": R.integers(0, 60000, 5).astype(np.uint16)},
               outputs=["y"], ref=lambda X, S, Z: [ref.quantize(X, S, Z, 1, dtype=np.uint16)])
    yield Case("quantize21_output_dtype_int16", "QuantizeLinear", 21,
               {"x": big, "y_scale": s16}, attrs={"output_dtype": 5}, outputs=["y"],
               ref=lambda X, S: [ref.quantize(X, S, None, dtype=np.int16)])
    xq16 = R.integers(-30000, 30000, (4, 5)).astype(np.int16)
    yield Case("dequantize21_int16", "DequantizeLinear", 21,
               {"x": xq16, "x_scale": s16, "x_zero_point": np.array(-7, np.int16)},
               outputs=["y"], ref=lambda X, S, Z: [ref.dequantize(X, S, Z)])


def cases():
    yield from group_norm_cases()
    yield from quant_cases()
