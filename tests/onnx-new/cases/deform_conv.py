"""DeformConv (opsets 19, 22), 2-D: a NumPy reference, itself checked
against torchvision's deform_conv2d (symmetric pads) when the cases are
built, since ONNX Runtime 1.30 may lack a CPU kernel."""
import numpy as np

from caselib import Case, rng


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def bilinear(img, h, w):
    """img (C, H, W); h, w arrays of one shape S -> (C, *S); taps outside read 0."""
    C, H, W = img.shape
    h0, w0 = np.floor(h), np.floor(w)
    out = np.zeros((C,) + h.shape)
    for dy in (0, 1):
        for dx in (0, 1):
            y, x = h0 + dy, w0 + dx
            wt = (1 - np.abs(h - y)) * (1 - np.abs(w - x))
            ok = (y >= 0) & (y < H) & (x >= 0) & (x < W)
            yi, xi = np.where(ok, y, 0).astype(int), np.where(ok, x, 0).astype(int)
            out += np.where(ok, wt, 0) * img[:, yi, xi]
    return out


def deform_conv_ref(X, Wt, offset, B=None, mask=None, strides=(1, 1), pads=(0, 0, 0, 0),
                    dilations=(1, 1), group=1, offset_group=1):
    N, C, H, W = X.shape
    OC, cg, kh, kw = Wt.shape
    OH, OW = offset.shape[2:]
    K = kh * kw
    x64 = X.astype(np.float64)
    off = offset.astype(np.float64).reshape(N, offset_group, kh, kw, 2, OH, OW)
    m = (np.ones((N, offset_group, kh, kw, OH, OW)) if mask is None
         else mask.astype(np.float64).reshape(N, offset_group, kh, kw, OH, OW))
    oy = np.arange(OH)[:, None] * strides[0] - pads[0]
    ox = np.arange(OW)[None, :] * strides[1] - pads[1]
    cols = np.zeros((N, C, kh, kw, OH, OW))
    cpo = C // offset_group
    for n in range(N):
        for g in range(offset_group):
            for i in range(kh):
                for j in range(kw):
                    h = oy + i * dilations[0] + off[n, g, i, j, 0]
                    w = ox + j * dilations[1] + off[n, g, i, j, 1]
                    cols[n, g * cpo:(g + 1) * cpo, i, j] = (
                        bilinear(x64[n, g * cpo:(g + 1) * cpo], h, w) * m[n, g, i, j])
    Y = np.zeros((N, OC, OH, OW))
    ocg = OC // group
    for g in range(group):
        Y[:, g * ocg:(g + 1) * ocg] = np.einsum(
            "ncijyx,ocij->noyx", cols[:, g * cg:(g + 1) * cg],
            Wt[g * ocg:(g + 1) * ocg].astype(np.float64))
    if B is not None:
        Y += B.astype(np.float64)[None, :, None, None]
    return [Y.astype(X.dtype)]


def torchvision_check(X, Wt, offset, B, mask, strides, pads, dilations):
    """The NumPy reference must agree with torchvision (symmetric pads)."""
    import torch
    from torchvision.ops import deform_conv2d
    t = lambda a: None if a is None else torch.from_numpy(a.astype(np.float64))  # noqa: E731
    got = deform_conv2d(t(X), t(offset), t(Wt), t(B), stride=strides, padding=pads[:2],
                        dilation=dilations, mask=t(mask)).numpy()
    want = deform_conv_ref(X.astype(np.float64), Wt, offset, B, mask, strides, pads, dilations)[0]
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
        raise AssertionError("deform_conv_ref disagrees with torchvision: max diff %g"
                             % np.abs(got - want).max())


def out_hw(H, W, kh, kw, s, p, d):
    return ((H + p[0] + p[2] - (kh - 1) * d[0] - 1) // s[0] + 1,
            (W + p[1] + p[3] - (kw - 1) * d[1] - 1) // s[1] + 1)


def cases():
    r = rng("deform_conv")
    configs = [
        # name, N, C, H, W, OC, kh, kw, strides, pads, dilations, group, og, bias, mask, opset
        ("deform_conv19_basic", 1, 2, 5, 5, 3, 3, 3, (1, 1), (0, 0, 0, 0), (1, 1), 1, 1, 0, 0, 19),
        ("deform_conv19_bias_mask_pads", 2, 4, 6, 7, 4, 3, 2, (1, 1), (1, 1, 1, 1), (1, 1), 1, 1,
         1, 1, 19),
        ("deform_conv19_strides_dilations", 1, 3, 9, 8, 2, 2, 3, (2, 1), (1, 2, 1, 2), (2, 1), 1, 1,
         1, 0, 19),
        ("deform_conv19_groups_offset_groups", 2, 4, 6, 6, 6, 3, 3, (1, 1), (1, 1, 1, 1), (1, 1), 2,
         2, 1, 1, 19),
        ("deform_conv22_offset_group4", 1, 4, 5, 6, 2, 2, 2, (1, 2), (0, 1, 0, 1), (1, 1), 1, 4, 0,
         1, 22),
        ("deform_conv19_asymmetric_pads", 1, 2, 5, 5, 2, 3, 3, (1, 1), (0, 1, 2, 0), (1, 1), 1, 1,
         1, 1, 19),
    ]
    for (name, N, C, H, W, OC, kh, kw, s, p, d, group, og, has_b, has_m, opset) in configs:
        OH, OW = out_hw(H, W, kh, kw, s, p, d)
        x = f32(r, N, C, H, W)
        wt = f32(r, OC, C // group, kh, kw)
        # offsets up to +-2.5 pixels: taps land between pixels, across
        # borders and outside the image
        off = (r.random((N, og * kh * kw * 2, OH, OW)) * 5 - 2.5).astype(np.float32)
        inputs = {"X": x, "W": wt, "offset": off}
        b = f32(r, OC) if has_b else None
        m = r.random((N, og * kh * kw, OH, OW)).astype(np.float32) if has_m else None
        if has_b or has_m:
            inputs["B"] = b
        if has_m:
            inputs["mask"] = m
        attrs = {"kernel_shape": [kh, kw], "strides": list(s), "pads": list(p),
                 "dilations": list(d), "group": group, "offset_group": og}
        if p[0] == p[2] and p[1] == p[3] and group == 1 and og == 1:
            torchvision_check(x, wt, off, b, m, s, p, d)

        def ref(*a, b=has_b, m=has_m, s=s, p=p, d=d, group=group, og=og):
            X, Wt, O = a[:3]
            B = a[3] if b else None
            M = a[-1] if m else None
            return deform_conv_ref(X, Wt, O, B, M, s, p, d, group, og)
        yield Case(name, "DeformConv", opset, inputs, attrs=attrs, ref=ref, rtol=1e-4, atol=1e-5)
    x = f32(r, 1, 2, 4, 4)
    wt = f32(r, 2, 2, 2, 2)
    off = (r.random((1, 8, 3, 3)) * 2 - 1).astype(np.float32)
    yield Case("deform_conv19_zero_offsets_is_conv", "DeformConv", 19,
               {"X": x, "W": wt, "offset": np.zeros((1, 8, 3, 3), np.float32)},
               ref=lambda X, Wt, O: [np.einsum("nchwkl,ockl->nohw", np.lib.stride_tricks
                                               .sliding_window_view(X, (2, 2), axis=(2, 3)),
                                               Wt).astype(np.float32)])
    yield Case("deform_conv19_float64", "DeformConv", 19,
               {"X": x.astype(np.float64), "W": wt.astype(np.float64),
                "offset": off.astype(np.float64)}, rtol=1e-10, atol=1e-12,
               ref=lambda X, Wt, O: deform_conv_ref(X, Wt, O))
    yield Case("deform_conv19_empty_batch", "DeformConv", 19,
               {"X": np.zeros((0, 2, 4, 4), np.float32), "W": wt,
                "offset": np.zeros((0, 8, 3, 3), np.float32)},
               ref=lambda X, Wt, O: [np.zeros((0, 2, 3, 3), np.float32)])
    yield Case("deform_conv19_offset_shape", "DeformConv", 19,
               {"X": x, "W": wt, "offset": off[:, :6]}, error="input 'offset' has shape",
               out_types={"Y": "float32"})
    yield Case("deform_conv19_mask_shape", "DeformConv", 19,
               {"X": x, "W": wt, "offset": off, "B": None,
                "mask": np.ones((1, 3, 3, 3), np.float32)},
               error="input 'mask' has shape", out_types={"Y": "float32"})
    yield Case("deform_conv19_group_mismatch", "DeformConv", 19,
               {"X": x, "W": wt, "offset": off}, attrs={"group": 2},
               error="C and oC must divide by group", out_types={"Y": "float32"})
    yield Case("deform_conv19_3d", "DeformConv", 19,
               {"X": f32(r, 1, 1, 3, 3, 3), "W": f32(r, 1, 1, 2, 2, 2),
                "offset": np.zeros((1, 24, 2, 2, 2), np.float32)},
               error="graphcc's DeformConv is 2-D", out_types={"Y": "float32"})
    yield Case("deform_conv18", "DeformConv", 18, {"X": x, "W": wt, "offset": off},
               error="DeformConv is an ONNX operator since opset 19", out_types={"Y": "float32"})
