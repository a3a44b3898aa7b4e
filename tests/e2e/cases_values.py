"""Shapes that depend on input values, as ONNX's own node tests feed them
(a Reshape whose shape is a graph input, Expand, Slice starts, Tile repeats):
`graphcc run` knows the input values when it compiles, so it works them out,
and the nodes still run at run time. Also --no-fold still runs PyTorch's
Shape -> Gather -> Concat -> Reshape chains (values known, nothing folded).

  values/<case>       against NumPy, exact
  values/no-fold/<m>  a torch model with --no-fold against torch (1e-4 x max)
"""
import os

import numpy as np

import run


def _build(d, name, nodes, inputs, outputs, feeds):
    import onnx
    from onnx import helper
    g = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    os.makedirs(d, exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    return run.save_inputs(d, feeds)


def value_case(ctx, name, make):
    def fn():
        from onnx import TensorProto as TP, helper
        d = os.path.join(ctx.work, "values", name)
        nodes, ins, outs, feeds, want = make(helper, TP)
        args = _build(d, name, nodes, ins, outs, feeds)
        od = run.fresh_dir(os.path.join(ctx.out, "values", name))
        rc, _, err = run.run_graphcc(ctx, ["run", os.path.join(d, "model.onnx")] + args +
                                     ["--output-dir", od])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        got = np.load(os.path.join(od, "y.npy"))
        if got.shape != want.shape or not np.array_equal(got, want):
            return run.Result(False, "got %s %s, expected %s" % (got.shape, got.ravel()[:6],
                                                              want.shape))
        return run.Result(True, "shape %s" % (got.shape,))
    return ("values/" + name, fn)


def cases(ctx):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def reshape(h, TP):
        shape = np.array([4, -1], np.int64)
        return ([h.make_node("Reshape", ["x", "shape"], ["y"])],
                [h.make_tensor_value_info("x", TP.FLOAT, [2, 3, 4]),
                 h.make_tensor_value_info("shape", TP.INT64, [2])],
                [h.make_tensor_value_info("y", TP.FLOAT, None)],
                {"x": x, "shape": shape}, x.reshape(4, -1))

    def expand_tile(h, TP):
        v = rng.standard_normal((3, 1)).astype(np.float32)
        return ([h.make_node("Expand", ["v", "s"], ["e"]),
                 h.make_node("Tile", ["e", "r"], ["y"])],
                [h.make_tensor_value_info("v", TP.FLOAT, [3, 1]),
                 h.make_tensor_value_info("s", TP.INT64, [2]),
                 h.make_tensor_value_info("r", TP.INT64, [2])],
                [h.make_tensor_value_info("y", TP.FLOAT, None)],
                {"v": v, "s": np.array([3, 4], np.int64), "r": np.array([2, 1], np.int64)},
                np.tile(np.broadcast_to(v, (3, 4)), (2, 1)))

    def slice_from_shape(h, TP):
        # starts computed from an input's values at run time: Shape -> Sub
        return ([h.make_node("Slice", ["x", "st", "en", "ax"], ["y"])],
                [h.make_tensor_value_info("x", TP.FLOAT, [2, 3, 4]),
                 h.make_tensor_value_info("st", TP.INT64, [1]),
                 h.make_tensor_value_info("en", TP.INT64, [1]),
                 h.make_tensor_value_info("ax", TP.INT64, [1])],
                [h.make_tensor_value_info("y", TP.FLOAT, None)],
                {"x": x, "st": np.array([1], np.int64), "en": np.array([4], np.int64),
                 "ax": np.array([2], np.int64)}, x[:, :, 1:4])

    out = [value_case(ctx, "reshape-shape-input", reshape),
           value_case(ctx, "expand-tile-inputs", expand_tile),
           value_case(ctx, "slice-inputs", slice_from_shape)]

    for m in ("resnet18", "transformer"):
        def nofold(m=m):
            d = os.path.join(ctx.work, "models", "torch", m)
            od = run.fresh_dir(os.path.join(ctx.out, "values", "nofold", m))
            rc, _, err = run.run_graphcc(ctx, ["run", os.path.join(d, "model.onnx"), "--input",
                                               os.path.join(d, "input.npy"), "--no-fold",
                                               "--output-dir", od])
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            got, want = np.load(os.path.join(od, "output.npy")), np.load(
                os.path.join(d, "expected.npy"))
            e = float(np.abs(got - want).max())
            return run.Result(e <= 1e-4 * float(np.abs(want).max()), "maxerr %.1e" % e)
        out.append(("values/no-fold/" + m, nofold))
    out.append(_arena_case(ctx))
    out += [_unique_case(ctx, srt) for srt in (1, 0)]
    out.append(_too_large_case(ctx))
    return out


def _too_large_case(ctx):
    """A saved program whose Expand shape comes from an input at run time:
    a shape whose size overflows is refused naming the node and the output,
    exit 1, nothing written."""
    def fn():
        from onnx import TensorProto as TP, helper
        d = os.path.join(ctx.work, "values", "too-large")
        args = _build(d, "too-large", [helper.make_node("Expand", ["x", "s"], ["y"])],
                      [helper.make_tensor_value_info("x", TP.FLOAT, [1]),
                       helper.make_tensor_value_info("s", TP.INT64, [3])],
                      [helper.make_tensor_value_info("y", TP.FLOAT, None)],
                      {"x": np.ones(1, np.float32), "s": np.array([2 ** 31] * 3, np.int64)})
        gcb = os.path.join(d, "model.gcb")
        rc, _, err = run.run_graphcc(ctx, ["compile", os.path.join(d, "model.onnx"), "-o", gcb])
        if rc != 0:
            return run.Result(False, "compile: " + run.describe_rc(rc), err)
        od = run.fresh_dir(os.path.join(ctx.out, "values", "too-large"))
        rc, _, err = run.run_graphcc(ctx, ["run", gcb] + args + ["--output-dir", od])
        want = "output 'y' of shape 2147483648x2147483648x2147483648 is too large"
        ok = rc == 1 and "(Expand)" in err and want in err and not os.listdir(od)
        return run.Result(ok, err.strip().splitlines()[-1] if err.strip() else run.describe_rc(rc))
    return ("values/too-large-run-time-shape", fn)


def _unique_case(ctx, srt):
    """Unique over 200000 values (150000 distinct, NaNs among them): all
    four outputs against NumPy's unique (NaNs equal, as NumPy 1.24's
    default), exact; it once took quadratic time to plan."""
    name = "unique-large-%s" % ("sorted" if srt else "unsorted")

    def fn():
        from onnx import TensorProto as TP, helper
        x = np.random.default_rng(3).integers(0, 150000, 200000).astype(np.float32)
        x[[5, 9, 77]] = np.nan
        outs = ["y", "idx", "inv", "cnt"]
        d = os.path.join(ctx.work, "values", name)
        args = _build(d, name, [helper.make_node("Unique", ["x"], outs, sorted=srt)],
                      [helper.make_tensor_value_info("x", TP.FLOAT, [x.size])],
                      [helper.make_tensor_value_info(o, TP.FLOAT if o == "y" else TP.INT64,
                                                     None) for o in outs], {"x": x})
        od = run.fresh_dir(os.path.join(ctx.out, "values", name))
        rc, _, err = run.run_graphcc(ctx, ["run", os.path.join(d, "model.onnx")] + args +
                                     ["--output-dir", od])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True)
        if not srt:  # first-occurrence order, as ONNX's sorted=0
            order = np.argsort(idx, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            y, idx, cnt, inv = y[order], idx[order], cnt[order], rank[inv]
        for o, want in zip(outs, (y, idx, inv, cnt)):
            got = np.load(os.path.join(od, o + ".npy"))
            if got.shape != want.shape or not np.array_equal(got, want, equal_nan=True):
                return run.Result(False, "output %s: got %s, expected %s" %
                                  (o, got.ravel()[:6], want.ravel()[:6]))
        return run.Result(True, "%d unique" % y.size)
    return ("values/" + name, fn)


def _arena_case(ctx):
    """The arena cap: every tensor fits under GRAPHCC_MAX_BYTES, but the
    arena they need together does not; refused with the sizes named."""
    def fn():
        import onnx
        from onnx import helper, TensorProto as TP
        d = os.path.join(ctx.work, "values", "arena-cap")
        os.makedirs(d, exist_ok=True)
        nodes = [helper.make_node(op, ["x"], ["y%d" % i]) for i, op in
                 enumerate(["Relu", "Neg", "Exp"])]
        g = helper.make_graph(nodes, "arena", [helper.make_tensor_value_info("x", TP.FLOAT,
                                                                             [1000, 1000])],
                              [helper.make_tensor_value_info("y%d" % i, TP.FLOAT, [1000, 1000])
                               for i in range(3)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        model = os.path.join(d, "model.onnx")
        onnx.save(m, model)
        x = os.path.join(d, "x.npy")
        np.save(x, np.zeros((1000, 1000), np.float32))
        od = run.fresh_dir(os.path.join(ctx.out, "values", "arena-cap"))
        env = dict(run.ENV, GRAPHCC_MAX_BYTES="10000000")
        import subprocess
        p = subprocess.run([ctx.graphcc, "run", model, "--input", "x=" + x, "--output-dir", od],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
        err = p.stderr.decode()
        ok = p.returncode == 1 and "arena" in err and "GRAPHCC_MAX_BYTES" in err and \
            not os.listdir(od)
        return run.Result(ok, err.strip()[:150], err)
    return ("values/limits/arena-cap", fn)

