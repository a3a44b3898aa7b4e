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


def col2im_ref(X, image_shape, block_shape, strides=None, pads=None, dilations=None):
    r = len(image_shape)
    strides, dilations = strides or [1] * r, dilations or [1] * r
    pads = pads or [0] * (2 * r)
    outs = [(image_shape[i] + pads[i] + pads[r + i] - ((block_shape[i] - 1) * dilations[i] + 1))
            // strides[i] + 1 for i in range(r)]
    K = int(np.prod(block_shape))
    N, C = X.shape[0], X.shape[1] // K
    Y = np.zeros((N, C) + tuple(int(v) for v in image_shape), np.float64)
    cols = X.reshape(N, C, K, -1).astype(np.float64)
    for ki, kd in enumerate(itertools.product(*[range(b) for b in block_shape])):
        for li, ld in enumerate(itertools.product(*[range(o) for o in outs])):
            idx = [ld[i] * strides[i] - pads[i] + kd[i] * dilations[i] for i in range(r)]
            if all(0 <= idx[i] < image_shape[i] for i in range(r)):
                Y[(slice(None), slice(None)) + tuple(idx)] += cols[:, :, ki, li]
    return [Y.astype(X.dtype)]


def col2im_cases():
    r = rng("col2im")
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    doc = np.arange(1, 26, dtype=np.float32).reshape(5, 5).T.reshape(1, 5, 5)
    yield Case("col2im_onnx_doc_example", "Col2Im", 18,
               {"input": doc, "image_shape": i64(5, 5), "block_shape": i64(1, 5)},
               ref=lambda X, i, b: [np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)])
    x = f32(r, 2, 3 * 6, 12)
    yield Case("col2im_strides_pads_dilations", "Col2Im", 18,
               {"input": x, "image_shape": i64(5, 7), "block_shape": i64(2, 3)},
               attrs={"strides": [2, 1], "pads": [1, 0, 0, 1], "dilations": [1, 2]},
               ref=lambda X, i, b: col2im_ref(X, i, b, [2, 1], [1, 0, 0, 1], [1, 2]))
    yield Case("col2im_overlapping_blocks", "Col2Im", 18,
               {"input": f32(r, 1, 2 * 9, 16), "image_shape": i64(6, 6), "block_shape": i64(3, 3)},
               ref=lambda X, i, b: col2im_ref(X, i, b))
    yield Case("col2im_1d", "Col2Im", 18,
               {"input": f32(r, 2, 4 * 3, 4), "image_shape": i64(9), "block_shape": i64(3)},
               attrs={"strides": [2]}, ref=lambda X, i, b: col2im_ref(X, i, b, [2]))
    yield Case("col2im_3d", "Col2Im", 18,
               {"input": f32(r, 1, 2 * 8, 12), "image_shape": i64(3, 4, 5),
                "block_shape": i64(2, 2, 2)},
               attrs={"strides": [1, 2, 2], "pads": [0, 1, 0, 0, 0, 1]},
               ref=lambda X, i, b: col2im_ref(X, i, b, [1, 2, 2], [0, 1, 0, 0, 0, 1]))
    yield Case("col2im_float64", "Col2Im", 18,
               {"input": f32(r, 1, 4, 9).astype(np.float64), "image_shape": i64(4, 4),
                "block_shape": i64(2, 2)}, rtol=1e-12, atol=1e-12,
               ref=lambda X, i, b: col2im_ref(X, i, b),
               ort_differs="ONNX Runtime 1.30 has a float32 Col2Im kernel only")
    yield Case("col2im_empty_batch", "Col2Im", 18,
               {"input": np.zeros((0, 4, 9), np.float32), "image_shape": i64(4, 4),
                "block_shape": i64(2, 2)}, ref=lambda X, i, b: [np.zeros((0, 1, 4, 4), np.float32)])
    yield Case("col2im_wrong_block_count", "Col2Im", 18,
               {"input": f32(r, 1, 4, 8), "image_shape": i64(4, 4), "block_shape": i64(2, 2)},
               error="9 block positions", out_types={"Y": "float32"})
    yield Case("col2im_int32", "Col2Im", 18,
               {"input": np.ones((1, 4, 9), np.int32), "image_shape": i64(4, 4),
                "block_shape": i64(2, 2)}, error="type int32", out_types={"Y": "int32"})
    yield Case("col2im_shape_lengths_differ", "Col2Im", 18,
               {"input": f32(r, 1, 4, 9), "image_shape": i64(4, 4), "block_shape": i64(4)},
               error="must be 1-D and of one length", out_types={"Y": "float32"})


def cases():
    yield from crop_cases()
    yield from col2im_cases()
