"""CenterCropPad (opset 18) and Col2Im (opset 18)."""
import itertools

import numpy as np

from caselib import Case, rng


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def center_crop_pad_ref(X, shape, axes=None):
    """ONNX's reference: a cut or pad of d puts floor(d / 2) in front."""
    axes = list(range(X.ndim)) if axes is None else [a % X.ndim for a in axes]
    src, dst, new = [slice(None)] * X.ndim, [slice(None)] * X.ndim, list(X.shape)
    for a, s in zip(axes, shape):
        d = int(s) - X.shape[a]
        new[a] = int(s)
        if d < 0:
            src[a] = slice(-d // 2, -d // 2 + int(s))
        elif d > 0:
            dst[a] = slice(d // 2, d // 2 + X.shape[a])
    Y = np.zeros(new, X.dtype) if X.dtype != object else np.full(new, "", dtype=object)
    Y[tuple(dst)] = X[tuple(src)]
    return [Y]


def crop_cases():
    r = rng("center_crop_pad")
    x = f32(r, 5, 6, 3)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    yield Case("center_crop_pad_crop_and_pad", "CenterCropPad", 18,
               {"input_data": x, "shape": i64(8, 3, 3)}, outputs=["Y"],
               ref=lambda X, s: center_crop_pad_ref(X, s))
    yield Case("center_crop_pad_odd_differences", "CenterCropPad", 18,
               {"input_data": x, "shape": i64(2, 9)}, attrs={"axes": [0, 1]},
               ref=lambda X, s: center_crop_pad_ref(X, s, [0, 1]))
    yield Case("center_crop_pad_negative_axes_int32_shape", "CenterCropPad", 18,
               {"input_data": x, "shape": np.array([4, 7], np.int32)}, attrs={"axes": [-1, -3]},
               ref=lambda X, s: center_crop_pad_ref(X, s, [-1, -3]),
               ort_differs="ONNX Runtime 1.30's function body for CenterCropPad mixes the int32 "
               "shape with int64 in a Max node and refuses the model")
    yield Case("center_crop_pad_strings", "CenterCropPad", 18,
               {"input_data": np.array([["a", "bc", "d"], ["e", "", "fg"]], dtype=object),
                "shape": i64(4, 1)}, ref=lambda X, s: center_crop_pad_ref(X, s),
               ort_differs="ONNX Runtime 1.30 has no string Pad kernel for CenterCropPad's "
               "function body")
    yield Case("center_crop_pad_int64_pad_only", "CenterCropPad", 18,
               {"input_data": np.arange(12, dtype=np.int64).reshape(3, 4), "shape": i64(6)},
               attrs={"axes": [1]}, ref=lambda X, s: center_crop_pad_ref(X, s, [1]))
    yield Case("center_crop_pad_uint8_image", "CenterCropPad", 18,
               {"input_data": r.integers(0, 255, (7, 9, 3), dtype=np.uint8),
                "shape": i64(4, 4)}, attrs={"axes": [0, 1]},
               ref=lambda X, s: center_crop_pad_ref(X, s, [0, 1]))
    yield Case("center_crop_pad_bool", "CenterCropPad", 18,
               {"input_data": r.random((3, 4)) > 0.5, "shape": i64(5, 2)},
               ref=lambda X, s: center_crop_pad_ref(X, s))
    yield Case("center_crop_pad_to_empty", "CenterCropPad", 18,
               {"input_data": x, "shape": i64(0)}, attrs={"axes": [1]},
               ref=lambda X, s: center_crop_pad_ref(X, s, [1]))
    yield Case("center_crop_pad_from_empty", "CenterCropPad", 18,
               {"input_data": np.zeros((0, 3), np.float32), "shape": i64(2, 5)},
               ref=lambda X, s: center_crop_pad_ref(X, s))
    yield Case("center_crop_pad_shape_length", "CenterCropPad", 18,
               {"input_data": x, "shape": i64(2, 2)}, error="input 'shape' has 2 values for 3 axes",
               out_types={"Y": "float32"})
    yield Case("center_crop_pad_axis_out_of_range", "CenterCropPad", 18,
               {"input_data": x, "shape": i64(2)}, attrs={"axes": [3]},
               error="axis 3 is out of range", out_types={"Y": "float32"})
    yield Case("center_crop_pad_at_opset17", "CenterCropPad", 17,
               {"input_data": x, "shape": i64(2, 2, 2)},
               error="CenterCropPad is an ONNX operator since opset 18", out_types={"Y": "float32"})


def cases():
    yield from crop_cases()
