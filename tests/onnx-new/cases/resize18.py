"""Resize-18/19: antialias (linear and cubic), keep_aspect_ratio_policy,
axes, and coordinate_transformation_mode half_pixel_symmetric (19).

The reference is ONNX's (onnx/reference/ops/op_resize.py) written again
here in NumPy: axis by axis, each output position mapped to an input
coordinate x_ori whose ratio to the left neighbour is in (0, 1]; the taps
are edge-clamped, or dropped and renormalised with exclude_outside.
Antialias (downsampling, scale < 1) stretches the linear / cubic kernel by
1 / scale and normalises its weights."""
import math

import numpy as np

from caselib import Case, rng


def _ct(mode, x, scale, in_len, out_len, r0, r1):
    if mode == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        adjustment = out_len / (scale * in_len)
        return in_len / 2 * (1 - adjustment) + (x + 0.5) / scale - 0.5
    if mode == "pytorch_half_pixel":
        return (x + 0.5) / scale - 0.5 if out_len > 1 else 0.0
    if mode == "align_corners":
        return 0.0 if out_len == 1 else x * (in_len - 1) / (out_len - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_crop_and_resize":
        if out_len > 1:
            return r0 * (in_len - 1) + x * (r1 - r0) * (in_len - 1) / (out_len - 1)
        return 0.5 * (r0 + r1) * (in_len - 1)
    raise ValueError(mode)


def _coeffs(mode, ratio, scale, antialias, a, nearest_mode, x_ori):
    """-> (offset of the first tap from floor-left, weights)."""
    if mode == "nearest":
        if nearest_mode == "round_prefer_floor":
            right = ratio > 0.5
        elif nearest_mode == "round_prefer_ceil":
            right = ratio >= 0.5
        elif nearest_mode == "floor":
            right = ratio == 1
        else:
            right = True
        return 0, np.array([0.0, 1.0]) if right else np.array([1.0, 0.0])
    s = min(scale, 1.0) if antialias else 1.0
    if mode == "linear":
        start = int(math.floor(-1 / s) + 1)
        args = (np.arange(start, 2 - start) - ratio) * s
        c = np.clip(1 - np.abs(args), 0, 1)
        return start, c / c.sum()

    def w(t):
        t = abs(t)
        if t <= 1:
            return ((a + 2) * t - (a + 3)) * t * t + 1
        if t < 2:
            return (((t - 5) * t + 8) * t - 4) * a
        return 0.0
    start = int(math.floor(-2 / s) + 1)
    c = np.array([w(s * (i - ratio)) for i in range(start, 2 - start)])
    return start, (c / c.sum() if antialias else c)


def _resize_axis(data, axis, scale, out_len, o):
    data = np.moveaxis(data, axis, -1)
    in_len = data.shape[-1]
    out = np.zeros(data.shape[:-1] + (out_len,))
    for x in range(out_len):
        x_ori = _ct(o["ct"], x, scale, in_len, out_len, *o["roi"][axis])
        if o["ct"] == "tf_crop_and_resize" and not 0 <= x_ori <= in_len - 1:
            out[..., x] = o["extrapolation"]
            continue
        base = math.floor(x_ori)
        ratio = x_ori - base
        if ratio == 0:
            base, ratio = base - 1, 1.0
        start, c = _coeffs(o["mode"], ratio, scale, o["antialias"], o["a"], o["nearest"], x_ori)
        idx = base + start + np.arange(len(c))
        if o["exclude"]:
            c = np.where((idx < 0) | (idx >= in_len), 0.0, c)
            c = c / c.sum()
        out[..., x] = data[..., np.clip(idx, 0, in_len - 1)] @ c
    return np.moveaxis(out, -1, axis)


def resize_ref(X, scales=None, sizes=None, axes=None, mode="nearest", ct="half_pixel",
               antialias=0, policy="stretch", a=-0.75, exclude=0, nearest="round_prefer_floor",
               roi=None, extrapolation=0.0):
    """ONNX's Resize-19 on X, in float64."""
    r = X.ndim
    axes = list(range(r)) if axes is None else [ax % r for ax in axes]
    full_scales, out = [1.0] * r, list(X.shape)
    if sizes is not None:
        sizes = [int(v) for v in sizes]
        if policy != "stretch":
            ratios = [sizes[i] / X.shape[ax] for i, ax in enumerate(axes)]
            s = min(ratios) if policy == "not_larger" else max(ratios)
            for ax in axes:
                full_scales[ax] = s
                out[ax] = int(s * X.shape[ax] + 0.5)
        else:
            for i, ax in enumerate(axes):
                full_scales[ax] = sizes[i] / X.shape[ax]
                out[ax] = sizes[i]
    else:
        for i, ax in enumerate(axes):
            full_scales[ax] = float(scales[i])
            out[ax] = int(math.floor(float(scales[i]) * X.shape[ax]))
    full_roi = [(0.0, 1.0)] * r
    if roi is not None:
        n = len(axes)
        for i, ax in enumerate(axes):
            full_roi[ax] = (float(roi[i]), float(roi[n + i]))
    o = {"mode": mode, "ct": ct, "antialias": antialias, "a": a, "exclude": exclude,
         "nearest": nearest, "roi": full_roi, "extrapolation": extrapolation}
    y = X.astype(np.float64)
    for ax in reversed(range(r)):
        if out[ax] != X.shape[ax] or full_scales[ax] != 1.0 or ct == "tf_crop_and_resize":
            y = _resize_axis(y, ax, full_scales[ax], out[ax], o)
    return y


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def _case(name, opset, x, scales=None, sizes=None, roi=None, attrs=None, **kw):
    attrs = dict(attrs or {})
    ref_kw = {"mode": attrs.get("mode", "nearest"),
              "ct": attrs.get("coordinate_transformation_mode", "half_pixel"),
              "antialias": attrs.get("antialias", 0),
              "policy": attrs.get("keep_aspect_ratio_policy", "stretch"),
              "a": attrs.get("cubic_coeff_a", -0.75),
              "exclude": attrs.get("exclude_outside", 0),
              "nearest": attrs.get("nearest_mode", "round_prefer_floor"),
              "axes": attrs.get("axes"), "extrapolation": attrs.get("extrapolation_value", 0.0)}
    sc = None if scales is None else np.array(scales, np.float32)
    sz = None if sizes is None else np.array(sizes, np.int64)
    ro = None if roi is None else np.array(roi, np.float32)

    def ref(X, *rest):
        y = resize_ref(X, scales=sc, sizes=sz, roi=ro, **ref_kw)
        if X.dtype.kind in "iu":
            info = np.iinfo(X.dtype)
            y = np.clip(np.trunc(y), info.min, info.max)
        return [y.astype(X.dtype)]
    return Case(name, "Resize", opset, {"X": x, "roi": ro, "scales": sc, "sizes": sz},
                attrs=attrs, ref=ref, **kw)


def antialias_cases():
    r = rng("resize18_antialias")
    x = f32(r, 1, 2, 9, 11)
    for mode in ("linear", "cubic"):
        yield _case("resize18_antialias_%s_scales" % mode, 18, x, scales=[1, 1, 0.6, 0.45],
                    attrs={"mode": mode, "antialias": 1})
        yield _case("resize18_antialias_%s_sizes" % mode, 18, x, sizes=[1, 2, 4, 3],
                    attrs={"mode": mode, "antialias": 1})
        # upsampling one axis and downsampling the other: no widening upwards
        yield _case("resize18_antialias_%s_mixed" % mode, 18, x, scales=[1, 1, 1.7, 0.3],
                    attrs={"mode": mode, "antialias": 1})
    yield _case("resize18_antialias_cubic_a_exclude", 18, x, sizes=[1, 2, 5, 4],
                attrs={"mode": "cubic", "antialias": 1, "cubic_coeff_a": -0.5,
                       "exclude_outside": 1})
    yield _case("resize18_antialias_linear_align_corners", 18, x, sizes=[1, 2, 4, 5],
                attrs={"mode": "linear", "antialias": 1,
                       "coordinate_transformation_mode": "align_corners"})
    yield _case("resize18_antialias_nearest_ignored", 18, x, scales=[1, 1, 0.5, 0.5],
                attrs={"mode": "nearest", "antialias": 1},
                ort_differs="ONNX Runtime 1.30 refuses antialias with mode nearest; the spec "
                "applies it to linear and cubic only, as ONNX's reference does")
    yield _case("resize18_antialias_uint8", 18,
                (r.random((1, 1, 8, 8)) * 255).astype(np.uint8), sizes=[1, 1, 3, 3],
                attrs={"mode": "linear", "antialias": 1},
                ort_differs="ONNX Runtime 1.30 filters uint8 in 22-bit fixed point and rounds; "
                "ONNX's reference truncates, as ONNX Runtime's other uint8 kernels do")

    img = (r.random((1, 5, 7, 3)) * 255).astype(np.uint8)
    # scale 2: weights 1/4, 3/4, exact in float32 and double, so that the
    # truncation of ONNX Runtime's float32 sums and of graphcc's double ones
    # meet the same values (not ties of rounding error)
    yield _case("resize18_linear_uint8_hwc", 18, img, sizes=[10, 14], attrs={"mode": "linear",
                "axes": [1, 2]})
    yield _case("resize18_cubic_int32", 18, (f32(r, 2, 6) * 1000).astype(np.int32),
                scales=[1, 0.5], attrs={"mode": "cubic"},
                ort_differs="ONNX Runtime 1.30 fails at run time on int32 cubic (a tensor type "
                "mismatch inside its kernel)")


def aspect_axes_cases():
    r = rng("resize18_aspect")
    x = f32(r, 1, 3, 6, 8)
    for policy in ("not_larger", "not_smaller"):
        yield _case("resize18_keep_aspect_%s" % policy, 18, x, sizes=[5, 5],
                    attrs={"mode": "linear", "keep_aspect_ratio_policy": policy, "axes": [2, 3]})
        yield _case("resize18_keep_aspect_%s_up" % policy, 18, x, sizes=[9, 14],
                    attrs={"mode": "cubic", "keep_aspect_ratio_policy": policy,
                           "axes": [2, 3]})
    yield _case("resize18_keep_aspect_negative_axes", 18, x, sizes=[9, 14],
                attrs={"mode": "linear", "keep_aspect_ratio_policy": "not_larger",
                       "axes": [-2, -1]},
                ort_differs="ONNX Runtime 1.30 leaves X unresized when keep_aspect_ratio_policy "
                "meets negative axes")
    yield _case("resize18_keep_aspect_all_axes", 18, x, sizes=[1, 3, 4, 4],
                attrs={"mode": "nearest", "keep_aspect_ratio_policy": "not_larger"})
    yield _case("resize18_axes_scales", 18, x, scales=[0.5, 1.5],
                attrs={"mode": "linear", "axes": [3, 2]})
    yield _case("resize18_axes_sizes_one", 18, x, sizes=[3],
                attrs={"mode": "cubic", "axes": [-1], "antialias": 1})
    yield _case("resize18_axes_tf_crop_roi", 18, x, sizes=[4, 5], roi=[0.1, 0.2, 0.8, 0.9],
                attrs={"mode": "linear", "axes": [2, 3],
                       "coordinate_transformation_mode": "tf_crop_and_resize",
                       "extrapolation_value": -1.0})
    yield _case("resize18_keep_aspect_stretch", 18, x, sizes=[1, 3, 3, 7],
                attrs={"mode": "linear", "keep_aspect_ratio_policy": "stretch"})
    # errors
    yield Case("resize18_axes_duplicate", "Resize", 18,
               {"X": x, "roi": None, "scales": np.array([2, 2], np.float32)},
               attrs={"axes": [2, -2]}, error="repeats axis")
    yield Case("resize18_axes_out_of_range", "Resize", 18,
               {"X": x, "roi": None, "scales": np.array([2], np.float32)},
               attrs={"axes": [4]}, error="axis 4")
    yield Case("resize18_axes_count_mismatch", "Resize", 18,
               {"X": x, "roi": None, "scales": np.array([2, 2, 2], np.float32)},
               attrs={"axes": [2, 3]}, error="input 'scales' has 3 values for 2 axes")
    yield Case("resize18_keep_aspect_bad_policy", "Resize", 18,
               {"X": x, "roi": None, "scales": None, "sizes": np.array([4, 4], np.int64)},
               attrs={"keep_aspect_ratio_policy": "fit", "axes": [2, 3]},
               error="keep_aspect_ratio_policy")


def symmetric_cases():
    r = rng("resize19_symmetric")
    x = f32(r, 1, 2, 5, 7)
    yield _case("resize19_half_pixel_symmetric_down", 19, x, scales=[1, 1, 0.6, 0.5],
                attrs={"mode": "linear",
                       "coordinate_transformation_mode": "half_pixel_symmetric"})
    yield _case("resize19_half_pixel_symmetric_up_cubic", 19, x, scales=[1, 1, 1.5, 2.3],
                attrs={"mode": "cubic",
                       "coordinate_transformation_mode": "half_pixel_symmetric"})
    yield _case("resize19_half_pixel_symmetric_nearest_sizes", 19, x, sizes=[1, 2, 8, 4],
                attrs={"mode": "nearest",
                       "coordinate_transformation_mode": "half_pixel_symmetric"})
    yield _case("resize19_half_pixel_symmetric_antialias", 19, x, scales=[1, 1, 0.7, 0.45],
                attrs={"mode": "linear", "antialias": 1,
                       "coordinate_transformation_mode": "half_pixel_symmetric"})
    yield Case("resize18_half_pixel_symmetric_needs_19", "Resize", 18,
               {"X": x, "roi": None, "scales": np.array([1, 1, 0.6, 0.5], np.float32)},
               attrs={"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"},
               error="half_pixel_symmetric",
               ort_differs="ONNX Runtime 1.30 runs half_pixel_symmetric at opset 18 too")


def cases():
    yield from antialias_cases()
    yield from aspect_axes_cases()
    yield from symmetric_cases()
