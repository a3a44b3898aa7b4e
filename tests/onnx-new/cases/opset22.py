"""Opset 22: MaxRoiPool and GlobalLpPool (older ops graphcc lacked;
bfloat16 from 22). The bfloat16 element-wise cases: opset22_bfloat16.py."""
import numpy as np

from caselib import Case

R = np.random.default_rng(22)
NO_ROI22 = ("ONNX Runtime 1.30 has no MaxRoiPool-22 kernel (its opset-1 kernel matched the "
            "same reference: maxroipool1_2x3)")


NO_GLP22 = ("ONNX Runtime 1.30 has no GlobalLpPool-22 kernel (its opset-2 kernel matched the "
            "same reference: global_lp_pool2_p2)")


NO_GLP1 = "ONNX Runtime 1.30 registers GlobalLpPool from opset 2 (p an int) only"


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def maxroipool_ref(X, rois, pooled, scale=1.0):
    ph, pw = pooled
    N, C, H, W = X.shape
    out = np.zeros((len(rois), C, ph, pw), X.dtype)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = (int(np.floor(v * scale + 0.5)) for v in roi[1:])
        bh, bw = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for i in range(ph):
            h0 = min(max(int(np.floor(i * bh)) + y1, 0), H)
            h1 = min(max(int(np.ceil((i + 1) * bh)) + y1, 0), H)
            for j in range(pw):
                w0 = min(max(int(np.floor(j * bw)) + x1, 0), W)
                w1 = min(max(int(np.ceil((j + 1) * bw)) + x1, 0), W)
                if h1 > h0 and w1 > w0:
                    out[r, :, i, j] = X[b, :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def maxroipool_cases():
    x = f32(2, 3, 10, 12)
    rois = np.array([[0, 1.2, 0.8, 7.1, 6.3], [1, 0, 0, 11, 9], [1, 6.2, 4.1, 6.3, 4.2],
                     [0, 9.1, 8.2, 30.3, 20.4]], np.float32)
    for opset in (1, 22):
        yield Case("maxroipool%d_2x3" % opset, "MaxRoiPool", opset, {"X": x, "rois": rois},
                   attrs={"pooled_shape": [2, 3]},
                   ref=lambda X, Rr: [maxroipool_ref(X, Rr, (2, 3))],
                   ort_differs=None if opset == 1 else NO_ROI22)
    scaled = rois.copy()
    scaled[:, 1:] *= 2.1
    yield Case("maxroipool22_spatial_scale", "MaxRoiPool", 22, {"X": x, "rois": scaled},
               attrs={"pooled_shape": [3, 2], "spatial_scale": 0.5},
               ref=lambda X, Rr: [maxroipool_ref(X, Rr, (3, 2), 0.5)], ort_differs=NO_ROI22)
    yield Case("maxroipool22_bad_rois", "MaxRoiPool", 22, {"X": x, "rois": rois[:, :4]},
               attrs={"pooled_shape": [2, 2]}, error="must be (num_rois, 5)")


def global_lp_cases():
    x = f32(2, 3, 5, 4)
    for opset, p in ((2, None), (2, 3), (1, 1.5), (22, 2)):
        attrs = {} if p is None else {"p": float(p) if opset == 1 else int(p)}
        pp = 2 if p is None else p
        yield Case("global_lp_pool%d_p%s" % (opset, str(pp).replace(".", "_")), "GlobalLpPool",
                   opset, {"X": x}, attrs=attrs,
                   ref=lambda X, pp=pp: [((np.abs(X.astype(np.float64)) ** pp).sum(
                       axis=(2, 3), keepdims=True) ** (1 / pp)).astype(np.float32)],
                   ort_differs={22: NO_GLP22, 1: NO_GLP1}.get(opset))
    yield Case("global_lp_pool2_3d", "GlobalLpPool", 2, {"X": f32(2, 4, 7)},
               ref=lambda X: [np.sqrt((X.astype(np.float64) ** 2).sum(axis=2, keepdims=True))
                              .astype(np.float32)])


def cases():
    yield from maxroipool_cases()
    yield from global_lp_cases()
