"""AffineGrid (opset 20) and GridSample-20/-22 (modes linear, nearest,
cubic; N-d grids), with GridSample-16's mode names at opset 16."""
import itertools

import numpy as np

from caselib import Case, rng


def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def affine_grid_ref(theta, size, align_corners=0):
    """ONNX's reference: base points (x, y[, z], 1) times theta."""
    sp = [int(v) for v in size[2:]]
    r = len(sp)

    def axis(n):
        if align_corners:
            return np.linspace(-1, 1, n) if n > 1 else np.array([-1.0])
        return (2 * np.arange(n) + 1) / n - 1
    mesh = np.meshgrid(*[axis(n) for n in sp], indexing="ij")  # D, H, W order
    base = np.stack([m for m in mesh[::-1]] + [np.ones(sp)], -1)  # x, y[, z], 1
    g = np.einsum("...j,nij->n...i", base, theta.astype(np.float64))
    return [g.astype(theta.dtype)]


def _reflect(v, lo, hi):
    rng_ = hi - lo
    if rng_ == 0:
        return lo
    if v < lo:
        dx = lo - v
        n = int(dx // rng_)
        r = dx - n * rng_
        return lo + r if n % 2 == 0 else hi - r
    if v > hi:
        dx = v - hi
        n = int(dx // rng_)
        r = dx - n * rng_
        return hi - r if n % 2 == 0 else lo + r
    return v


def _cubic(t):
    a = -0.75
    return [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]


def grid_sample_ref(X, grid, mode="linear", padding_mode="zeros", align_corners=0):
    """ONNX's reference algorithm (onnx/reference/ops/op_grid_sample.py),
    written afresh: the coordinate is padded, then every tap -- except that
    cubic pads its taps only, as PyTorch's grid_sample and ONNX Runtime do
    (ONNX's reference clamps the coordinate first, which differs from both
    within two pixels of the border)."""
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    N, C = X.shape[:2]
    dims = X.shape[2:]
    r = len(dims)
    lo = [0.0 if align_corners else -0.5] * r
    hi = [d - 1.0 if align_corners else d - 0.5 for d in dims]
    Y = np.zeros((N, C) + grid.shape[1:-1])
    x64 = X.astype(np.float64)

    def tap(a, i):
        d = dims[a]
        if padding_mode == "zeros":
            return i if 0 <= i < d else None
        if padding_mode == "border":
            return min(max(i, 0), d - 1)
        return min(max(int(_reflect(i, lo[a], hi[a])), 0), d - 1)

    for n in range(N):
        for o in itertools.product(*[range(v) for v in grid.shape[1:-1]]):
            g = grid[(n,) + o][::-1].astype(np.float64)  # per axis, first axis first
            c = [(g[a] + 1) / 2 * (dims[a] - 1) if align_corners
                 else ((g[a] + 1) * dims[a] - 1) / 2 for a in range(r)]
            if mode == "nearest":
                c = [float(np.rint(v)) for v in c]
            for a in range(r if mode != "cubic" else 0):
                if c[a] < lo[a] or c[a] > hi[a]:
                    if padding_mode == "border":
                        c[a] = min(max(c[a], 0), dims[a] - 1)
                    elif padding_mode == "reflection":
                        c[a] = _reflect(c[a], lo[a], hi[a])
            taps = []
            for a in range(r):
                if mode == "nearest":
                    taps.append([(int(c[a]), 1.0)])
                elif mode == "linear":
                    x0 = int(np.floor(c[a]))
                    t = c[a] - x0
                    taps.append([(x0, 1 - t), (x0 + 1, t)])
                else:
                    x0 = int(np.floor(c[a]))
                    taps.append(list(zip(range(x0 - 1, x0 + 3), _cubic(c[a] - x0))))
            v = np.zeros(C)
            for combo in itertools.product(*taps):
                idx = [tap(a, i) for a, (i, _) in enumerate(combo)]
                if any(i is None for i in idx):
                    continue
                w = np.prod([wt for _, wt in combo])
                v += w * x64[(n, slice(None)) + tuple(idx)]
            Y[(n, slice(None)) + o] = v
    return [Y.astype(X.dtype)]


NO_ND = "ONNX Runtime 1.30 samples 4-D and 5-D X only"


def affine_cases():
    r = rng("affine_grid")
    t2 = f32(r, 2, 2, 3)
    t3 = f32(r, 2, 3, 4)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    for al in (0, 1):
        yield Case("affine_grid_2d_align%d" % al, "AffineGrid", 20,
                   {"theta": t2, "size": i64(2, 3, 4, 5)}, attrs={"align_corners": al},
                   outputs=["grid"], ref=lambda T, S, al=al: affine_grid_ref(T, S, al))
        yield Case("affine_grid_3d_align%d" % al, "AffineGrid", 20,
                   {"theta": t3, "size": i64(2, 1, 3, 4, 2)}, attrs={"align_corners": al},
                   outputs=["grid"], ref=lambda T, S, al=al: affine_grid_ref(T, S, al))
    yield Case("affine_grid_float64", "AffineGrid", 20,
               {"theta": t2.astype(np.float64), "size": i64(2, 1, 2, 3)}, outputs=["grid"],
               rtol=1e-6, atol=1e-7, ref=lambda T, S: affine_grid_ref(T, S),
               note="rtol 1e-6: ONNX Runtime builds the base grid in float32")
    yield Case("affine_grid_empty", "AffineGrid", 20,
               {"theta": t2, "size": i64(2, 3, 0, 4)}, outputs=["grid"],
               ref=lambda T, S: [np.zeros((2, 0, 4, 2), np.float32)],
               ort_differs="ONNX Runtime 1.30 refuses a size of 0")
    yield Case("affine_grid_size_length", "AffineGrid", 20,
               {"theta": t2, "size": i64(2, 3, 4)}, outputs=["grid"],
               error="expected 4 (N, C, H, W) or 5", out_types={"grid": "float32"})
    yield Case("affine_grid_theta_shape", "AffineGrid", 20,
               {"theta": t3, "size": i64(2, 3, 4, 4)}, outputs=["grid"],
               error="must be (2, 2, 3)", out_types={"grid": "float32"})
    yield Case("affine_grid_at_opset19", "AffineGrid", 19,
               {"theta": t2, "size": i64(2, 3, 4, 4)}, outputs=["grid"],
               error="AffineGrid is an ONNX operator since opset 20",
               out_types={"grid": "float32"})


def grid_sample_cases():
    r = rng("grid_sample")
    x4 = f32(r, 2, 3, 4, 5)
    g4 = (r.random((2, 3, 6, 2)) * 2.6 - 1.3).astype(np.float32)
    for opset, modes in ((20, ("linear", "nearest", "cubic")), (22, ("linear", "nearest"))):
        for mode in modes:
            for pad in ("zeros", "border", "reflection"):
                for al in (0, 1):
                    if opset == 22 and al == 1:
                        continue
                    name = "grid_sample%d_4d_%s_%s%s" % (opset, mode, pad, "_align" if al else "")
                    yield Case(name, "GridSample", opset, {"X": x4, "grid": g4},
                               attrs={"mode": mode, "padding_mode": pad, "align_corners": al},
                               ref=lambda X, G, m=mode, p=pad, a=al: grid_sample_ref(X, G, m, p, a))
    x5 = f32(r, 1, 2, 3, 4, 5)
    g5 = (r.random((1, 2, 3, 4, 3)) * 2.6 - 1.3).astype(np.float32)
    for mode in ("linear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for al in (0, 1):
                name = "grid_sample20_5d_%s_%s%s" % (mode, pad, "_align" if al else "")
                yield Case(name, "GridSample", 20, {"X": x5, "grid": g5},
                           attrs={"mode": mode, "padding_mode": pad, "align_corners": al},
                           ref=lambda X, G, m=mode, p=pad, a=al: grid_sample_ref(X, G, m, p, a))
    yield Case("grid_sample20_default_mode_linear", "GridSample", 20, {"X": x4, "grid": g4},
               ref=lambda X, G: grid_sample_ref(X, G))
    yield Case("grid_sample20_float64", "GridSample", 20,
               {"X": x4.astype(np.float64), "grid": g4.astype(np.float64)},
               attrs={"mode": "cubic", "padding_mode": "border"}, rtol=1e-10, atol=1e-12,
               ref=lambda X, G: grid_sample_ref(X, G, "cubic", "border"))
    yield Case("grid_sample16_bicubic_reflection", "GridSample", 16, {"X": x4, "grid": g4},
               attrs={"mode": "bicubic", "padding_mode": "reflection"},
               ref=lambda X, G: grid_sample_ref(X, G, "bicubic", "reflection"))
    yield Case("grid_sample20_3d_input_1d_grid", "GridSample", 20,
               {"X": f32(r, 2, 2, 7), "grid": (r.random((2, 5, 1)) * 2.4 - 1.2).astype(np.float32)},
               attrs={"padding_mode": "reflection"},
               ref=lambda X, G: grid_sample_ref(X, G, "linear", "reflection"), ort_differs=NO_ND)
    yield Case("grid_sample20_5d_cubic", "GridSample", 20, {"X": x5, "grid": g5},
               attrs={"mode": "cubic"}, ref=lambda X, G: grid_sample_ref(X, G, "cubic"),
               ort_differs="ONNX Runtime 1.30 has cubic sampling of 4-D X only")
    yield Case("grid_sample20_empty_grid", "GridSample", 20,
               {"X": x4, "grid": np.zeros((2, 0, 3, 2), np.float32)},
               ref=lambda X, G: [np.zeros((2, 3, 0, 3), np.float32)])
    yield Case("grid_sample20_bilinear_name", "GridSample", 20, {"X": x4, "grid": g4},
               attrs={"mode": "bilinear"}, error="attribute 'mode' is \"bilinear\"")
    yield Case("grid_sample16_linear_name", "GridSample", 16, {"X": x4, "grid": g4},
               attrs={"mode": "linear"},
               error="attribute 'mode' is \"linear\"; expected bilinear, nearest or bicubic")
    yield Case("grid_sample20_grid_last_dim", "GridSample", 20,
               {"X": x4, "grid": np.zeros((2, 3, 3, 3), np.float32)},
               error="expected X (N, C, D1, ..., Dr) and grid", out_types={"Y": "float32"})
    yield Case("grid_sample20_int32_x", "GridSample", 20,
               {"X": np.arange(20, dtype=np.int32).reshape(1, 1, 4, 5), "grid": g4[:1]},
               error="'X' (int32)", out_types={"Y": "int32"})
    yield Case("grid_sample16_5d", "GridSample", 16, {"X": x5, "grid": g5},
               error="GridSample-16 samples 4-D X", out_types={"Y": "float32"},
               ort_differs="ONNX Runtime 1.30 samples 5-D X at opset 16 too")


def cases():
    yield from affine_cases()
    yield from grid_sample_cases()
