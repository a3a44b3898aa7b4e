"""float4e2m1 (ONNX 23, type 23): in and out (.pb two per byte, .npy one
code per '|V1' item as ml_dtypes' float4_e2m1fn), Cast/CastLike to and
from it (round to nearest even, beyond +-6 saturating, NaN +6: ONNX's
reference), Q/DQ with it, and refused by name in arithmetic. The
reference is dtypes.py's table of the 16 codes."""
import numpy as np

import dtypes
from caselib import Case, In, rng

F4 = "float4e2m1"
NO_ORT = ("ONNX Runtime 1.30 has no CPU Cast to or from float4e2m1, so it can neither feed "
          "nor read the type; the reference is ONNX's (float32_to_float4e2m1_unpacked of "
          "onnx.numpy_helper), written again in dtypes.py")
ALL = dtypes.decode(np.arange(16, dtype=np.uint8), dtypes.FLOAT4E2M1)


def f4(x):
    return dtypes.round_trip(np.asarray(x, np.float32), dtypes.FLOAT4E2M1)


def cases():
    r = rng("float4")
    ties = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, -0.25, -0.75, -2.5, -5.0], np.float32)
    near = np.array([0.2, 0.3, 0.7, 0.8, 1.3, 2.6, 3.4, 4.9, 5.1, 5.9, 6.0, 6.5, 100, -7, 1e-30,
                     0.0, -0.0], np.float32)
    x = np.concatenate([ties, near, r.standard_normal(20).astype(np.float32) * 3])
    yield Case("cast23_float_to_float4e2m1", "Cast", 23, {"input": x}, attrs={"to": 23},
               outputs=["output"], out_types={"output": F4}, ref=lambda X: [f4(X)],
               ort_differs=NO_ORT)
    special = np.array([np.inf, -np.inf, np.nan], np.float32)
    yield Case("cast23_inf_nan_to_float4e2m1", "Cast", 23, {"input": special},
               attrs={"to": 23}, outputs=["output"], out_types={"output": F4},
               ref=lambda X: [f4(X)], ort_differs=NO_ORT)
    yield Case("cast23_float4e2m1_to_float", "Cast", 23, {"input": In(ALL.reshape(4, 4), F4)},
               attrs={"to": 1}, outputs=["output"], ref=lambda X: [X.astype(np.float32)],
               ort_differs=NO_ORT)
    yield Case("cast23_float4e2m1_to_float16", "Cast", 23, {"input": In(ALL, F4)},
               attrs={"to": 10}, outputs=["output"], ref=lambda X: [X.astype(np.float16)],
               ort_differs=NO_ORT)
    h = (r.standard_normal(12) * 4).astype(np.float16)
    yield Case("cast23_float16_to_float4e2m1", "Cast", 23, {"input": h}, attrs={"to": 23},
               outputs=["output"], out_types={"output": F4},
               ref=lambda X: [f4(X.astype(np.float32))], ort_differs=NO_ORT)
    yield Case("castlike23_float_to_float4e2m1", "CastLike", 23,
               {"input": x[:9].reshape(3, 3), "target_type": In(np.zeros(1), F4)},
               outputs=["output"], out_types={"output": F4}, ref=lambda X, T: [f4(X)],
               ort_differs=NO_ORT)
    yield Case("identity23_float4e2m1_odd_count", "Identity", 23,
               {"input": In(ALL[:7], F4)}, outputs=["output"], out_types={"output": F4},
               ref=lambda X: [X], ort_differs=NO_ORT)
    yield Case("cast21_float4_needs_opset23", "Cast", 21, {"input": x}, attrs={"to": 23},
               outputs=["output"], out_types={"output": F4},
               error="float4e2m1 needs Cast from opset 23")
    yield Case("add23_float4e2m1_declined", "Add", 23,
               {"A": In(ALL, F4), "B": In(ALL, F4)}, outputs=["C"], out_types={"C": F4},
               error="float4e2m1")
    # quantization with it (opset 23): y = x / scale rounded to float4
    xs = (r.standard_normal((4, 6)) * 8).astype(np.float32)
    s = np.array([0.5, 1, 2, 4], np.float32)
    yield Case("quantize23_float4e2m1_per_axis", "QuantizeLinear", 23,
               {"x": xs, "y_scale": s, "y_zero_point": In(np.zeros(4), F4)},
               attrs={"axis": 0}, outputs=["y"], out_types={"y": F4},
               ref=lambda X, S, Z: [f4(X / S[:, None])], ort_differs=NO_ORT)
    yield Case("dequantize23_float4e2m1", "DequantizeLinear", 23,
               {"x": In(ALL.reshape(2, 8), F4), "x_scale": np.array(0.25, np.float32)},
               outputs=["y"], ref=lambda X, S: [(X * S).astype(np.float32)], ort_differs=NO_ORT)
