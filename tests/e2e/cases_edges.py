"""Edge values through the kernels, run like any model (`graphcc run`):

  empty/<case>              an input with a dimension of 0 (or an output
                            that comes out empty) must give NumPy's answer,
                            exact: empty results of the right shape, and the
                            zeros, ones or values an empty reduction or
                            contraction makes. Hardmax and Unique once called
                            memset and memcpy on the NULL an empty tensor has
                            (UBSan), Softmax over an empty axis read past its
                            buffer (SIGSEGV), so every family gets one here.
  empty/gridsample-far/...  grid points far outside (and NaN) against
                            PyTorch.
  empty/eyelike-k-*         EyeLike with k at the ends of int64 (i + k
                            overflowed) against NumPy.
"""
import os

import numpy as np

import run

f32, i64 = np.float32, np.int64


def _cases():
    """-> [(name, nodes, {input: array}, {output: expected}, opset)]."""
    from onnx import helper as h

    def N(op, ins, outs, **attrs):
        return h.make_node(op, ins, outs, **attrs)

    x04 = np.zeros((0, 4), f32)
    x30 = np.zeros((3, 0), f32)
    x43 = np.arange(12, dtype=f32).reshape(4, 3)
    img0 = np.zeros((0, 1, 4, 4), f32)
    c = []

    def add(name, nodes, ins, outs, opset=13):
        c.append((name, nodes, ins, outs, opset))

    for op, fn in (("Relu", lambda a: np.maximum(a, 0)), ("Exp", np.exp), ("Neg", np.negative),
                   ("Sqrt", np.sqrt), ("Sigmoid", lambda a: a)):
        add("unary-" + op.lower(), [N(op, ["x"], ["y"])], {"x": x04}, {"y": fn(x04)})
    add("add-broadcast", [N("Add", ["x", "b"], ["y"])], {"x": x04, "b": np.ones(4, f32)},
        {"y": x04 + 1})
    add("where", [N("Where", ["c", "x", "z"], ["y"])],
        {"c": np.zeros((0, 4), bool), "x": x04, "z": x04}, {"y": x04})
    add("cast", [N("Cast", ["x"], ["y"], to=7)], {"x": x04}, {"y": x04.astype(i64)})
    add("matmul-no-rows", [N("MatMul", ["a", "b"], ["y"])],
        {"a": np.zeros((0, 3), f32), "b": x43.T.copy()}, {"y": np.zeros((0, 4), f32)})
    add("matmul-no-inner", [N("MatMul", ["a", "b"], ["y"])],
        {"a": np.zeros((2, 0), f32), "b": np.zeros((0, 4), f32)}, {"y": np.zeros((2, 4), f32)})
    add("gemm-no-inner", [N("Gemm", ["a", "b"], ["y"])],
        {"a": np.zeros((2, 0), f32), "b": np.zeros((0, 3), f32)}, {"y": np.zeros((2, 3), f32)})
    add("einsum-no-inner", [N("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")],
        {"a": np.zeros((2, 0), f32), "b": np.zeros((0, 3), f32)}, {"y": np.zeros((2, 3), f32)},
        opset=12)
    add("softmax-no-rows", [N("Softmax", ["x"], ["y"], axis=-1)], {"x": x04}, {"y": x04})
    add("softmax-empty-axis", [N("Softmax", ["x"], ["y"], axis=-1)], {"x": x30}, {"y": x30})
    add("logsoftmax-empty-axis", [N("LogSoftmax", ["x"], ["y"], axis=-1)], {"x": x30},
        {"y": x30})
    add("hardmax-no-rows", [N("Hardmax", ["x"], ["y"])], {"x": x04}, {"y": x04})
    add("hardmax-empty-axis", [N("Hardmax", ["x"], ["y"], axis=-1)], {"x": x30}, {"y": x30})
    add("argmax-no-rows", [N("ArgMax", ["x"], ["y"], axis=1)], {"x": x04},
        {"y": np.zeros((0, 1), i64)})
    add("reducesum-empty-axis", [N("ReduceSum", ["x", "ax"], ["y"], keepdims=1)],
        {"x": x04, "ax": np.array([0], i64)}, {"y": np.zeros((1, 4), f32)})
    add("reduceprod-empty-axis", [N("ReduceProd", ["x"], ["y"], axes=[0], keepdims=0)],
        {"x": x04}, {"y": np.ones(4, f32)})
    add("cumsum-empty", [N("CumSum", ["x", "ax"], ["y"])],
        {"x": np.zeros(0, f32), "ax": np.array(0, i64)}, {"y": np.zeros(0, f32)})
    add("topk-empty", [N("TopK", ["x", "k"], ["v", "i"])],
        {"x": np.zeros(0, f32), "k": np.array([0], i64)},
        {"v": np.zeros(0, f32), "i": np.zeros(0, i64)})
    add("topk-no-rows", [N("TopK", ["x", "k"], ["v", "i"])],
        {"x": np.zeros((0, 5), f32), "k": np.array([2], i64)},
        {"v": np.zeros((0, 2), f32), "i": np.zeros((0, 2), i64)})
    add("unique-empty", [N("Unique", ["x"], ["y", "idx", "inv", "cnt"])],
        {"x": np.zeros(0, f32)},
        {"y": np.zeros(0, f32), "idx": np.zeros(0, i64), "inv": np.zeros(0, i64),
         "cnt": np.zeros(0, i64)}, opset=11)
    add("unique-empty-axis", [N("Unique", ["x"], ["y", "idx", "inv", "cnt"], axis=0)],
        {"x": np.zeros((0, 3), f32)},
        {"y": np.zeros((0, 3), f32), "idx": np.zeros(0, i64), "inv": np.zeros(0, i64),
         "cnt": np.zeros(0, i64)}, opset=11)
    add("concat-with-empty", [N("Concat", ["a", "b"], ["y"], axis=0)],
        {"a": np.zeros((0, 3), f32), "b": x43}, {"y": x43})
    add("split-empty", [N("Split", ["x"], ["a", "b"], axis=0)], {"x": x04},
        {"a": x04, "b": x04})
    add("gather-no-indices", [N("Gather", ["x", "i"], ["y"])],
        {"x": x43, "i": np.zeros(0, i64)}, {"y": np.zeros((0, 3), f32)})
    add("gatherelements-empty", [N("GatherElements", ["x", "i"], ["y"], axis=0)],
        {"x": x43, "i": np.zeros((0, 3), i64)}, {"y": np.zeros((0, 3), f32)})
    add("scatterelements-no-updates", [N("ScatterElements", ["x", "i", "u"], ["y"], axis=0)],
        {"x": x43, "i": np.zeros((0, 3), i64), "u": np.zeros((0, 3), f32)}, {"y": x43})
    add("transpose", [N("Transpose", ["x"], ["y"])], {"x": x04}, {"y": x04.T.copy()})
    add("slice-to-empty", [N("Slice", ["x", "s", "e"], ["y"])],
        {"x": np.arange(4, dtype=f32), "s": np.array([2], i64), "e": np.array([2], i64)},
        {"y": np.zeros(0, f32)})
    add("pad-empty", [N("Pad", ["x", "p"], ["y"])],
        {"x": np.zeros((0, 2), f32), "p": np.array([1, 0, 1, 0], i64)},
        {"y": np.zeros((2, 2), f32)})
    add("tile-empty", [N("Tile", ["x", "r"], ["y"])],
        {"x": np.zeros((0, 2), f32), "r": np.array([3, 2], i64)}, {"y": np.zeros((0, 4), f32)})
    add("expand-to-empty", [N("Expand", ["x", "s"], ["y"])],
        {"x": np.ones((1, 4), f32), "s": np.array([0, 4], i64)}, {"y": x04})
    add("nonzero-empty", [N("NonZero", ["x"], ["y"])], {"x": np.zeros((0, 3), f32)},
        {"y": np.zeros((2, 0), i64)})
    add("compress-empty", [N("Compress", ["x", "c"], ["y"], axis=0)],
        {"x": np.zeros((0, 2), f32), "c": np.zeros(0, bool)}, {"y": np.zeros((0, 2), f32)})
    add("trilu-empty", [N("Trilu", ["x"], ["y"])], {"x": x30}, {"y": x30}, opset=14)
    add("flatten-empty", [N("Flatten", ["x"], ["y"])], {"x": np.zeros((0, 3, 4), f32)},
        {"y": np.zeros((0, 12), f32)})
    add("shape-of-empty", [N("Shape", ["x"], ["y"])], {"x": x04},
        {"y": np.array([0, 4], i64)})
    add("range-empty", [N("Range", ["s", "l", "d"], ["y"])],
        {"s": np.array(0, f32), "l": np.array(0, f32), "d": np.array(1, f32)},
        {"y": np.zeros(0, f32)}, opset=11)
    add("conv-no-batch", [N("Conv", ["x", "w"], ["y"])],
        {"x": img0, "w": np.ones((2, 1, 2, 2), f32)}, {"y": np.zeros((0, 2, 3, 3), f32)})
    add("maxpool-no-batch", [N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])], {"x": img0},
        {"y": np.zeros((0, 1, 3, 3), f32)})
    add("globalavgpool-no-batch", [N("GlobalAveragePool", ["x"], ["y"])], {"x": img0},
        {"y": np.zeros((0, 1, 1, 1), f32)})
    add("layernorm-no-rows", [N("LayerNormalization", ["x", "g"], ["y"], axis=-1)],
        {"x": x04, "g": np.ones(4, f32)}, {"y": x04}, opset=17)
    add("resize-no-batch", [N("Resize", ["x", "", "s"], ["y"])],
        {"x": img0, "s": np.array([1, 1, 2, 2], f32)}, {"y": np.zeros((0, 1, 8, 8), f32)})
    add("depthtospace-no-batch", [N("DepthToSpace", ["x"], ["y"], blocksize=2)],
        {"x": np.zeros((0, 4, 2, 2), f32)}, {"y": np.zeros((0, 1, 4, 4), f32)})
    add("spacetodepth-no-batch", [N("SpaceToDepth", ["x"], ["y"], blocksize=2)],
        {"x": img0}, {"y": np.zeros((0, 4, 2, 2), f32)})
    add("nms-no-boxes", [N("NonMaxSuppression", ["b", "s", "m"], ["y"])],
        {"b": np.zeros((1, 0, 4), f32), "s": np.zeros((1, 1, 0), f32),
         "m": np.array([5], i64)}, {"y": np.zeros((0, 3), i64)}, opset=11)
    add("gridsample-no-points", [N("GridSample", ["x", "g"], ["y"])],
        {"x": np.ones((1, 1, 3, 3), f32), "g": np.zeros((1, 0, 2, 2), f32)},
        {"y": np.zeros((1, 1, 0, 2), f32)}, opset=16)
    add("det-no-matrices", [N("Det", ["x"], ["y"])], {"x": np.zeros((0, 2, 2), f32)},
        {"y": np.zeros(0, f32)})
    add("quantize-empty", [N("QuantizeLinear", ["x", "s"], ["y"])],
        {"x": x04, "s": np.array(0.5, f32)}, {"y": np.zeros((0, 4), np.uint8)})
    BIG = np.iinfo(i64).max
    add("eyelike-k-int64-max", [N("EyeLike", ["x"], ["y"], k=int(BIG))], {"x": np.ones((3, 4), f32)},
        {"y": np.eye(3, 4, dtype=f32, k=4)}, opset=9)
    add("eyelike-k-int64-min", [N("EyeLike", ["x"], ["y"], k=int(-BIG - 1))],
        {"x": np.ones((3, 4), f32)}, {"y": np.eye(3, 4, dtype=f32, k=-3)}, opset=9)
    add("eyelike-empty", [N("EyeLike", ["x"], ["y"])], {"x": np.ones((0, 0), f32)},
        {"y": np.zeros((0, 0), f32)}, opset=9)
    add("sequence-of-empty", [N("SplitToSequence", ["x"], ["s"], axis=0),
                              N("ConcatFromSequence", ["s"], ["y"], axis=0)],
        {"x": np.zeros((2, 0), f32)}, {"y": np.zeros((2, 0), f32)}, opset=13)
    return c


def _case(ctx, name, nodes, ins, outs, opset):
    def fn():
        import onnx
        from onnx import helper
        elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE
        g = helper.make_graph(
            nodes, name,
            [helper.make_tensor_value_info(k, elem[v.dtype], list(v.shape))
             for k, v in ins.items()],
            [helper.make_tensor_value_info(k, elem[v.dtype], None) for k, v in outs.items()])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        d = os.path.join(ctx.work, "empty", name)
        os.makedirs(d, exist_ok=True)
        onnx.save(m, os.path.join(d, "model.onnx"))
        args = ["run", os.path.join(d, "model.onnx")]
        for k, v in ins.items():
            np.save(os.path.join(d, k + ".npy"), v)
            args += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
        od = run.fresh_dir(os.path.join(ctx.out, "empty", name))
        rc, _, err = run.run_graphcc(ctx, args + ["--output-dir", od])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        for k, want in outs.items():
            got = np.load(os.path.join(od, k + ".npy"))
            if got.dtype != want.dtype or got.shape != want.shape or \
                    not np.array_equal(got, want):
                return run.Result(False, "output %s: got %s %s %s, expected %s %s" %
                                  (k, got.dtype, got.shape, got.ravel()[:4], want.dtype,
                                   want.shape))
        return run.Result(True, ", ".join("%s %s" % (k, v.shape) for k, v in outs.items()))
    return ("empty/" + name, fn)


def cases(ctx):
    return [_case(ctx, *c) for c in _cases()] + _far_grid_cases(ctx) + \
        [("pool/maxpool-2x2-threads", lambda: _maxpool_2x2_threads(ctx))]


def _maxpool_2x2_threads(ctx):
    """Float MaxPool 2x2 stride 2 (pool.c's own loop) on odd sizes, big
    enough to split over threads: [2, 67, 45, 51] with -inf and ties, at 1
    and 2 threads, exactly NumPy's maximum over each window."""
    import onnx
    from onnx import helper
    r = np.random.default_rng(225)
    x = r.integers(-50, 50, (2, 67, 45, 51)).astype(f32) / f32(8)
    x.flat[::13] = -np.inf
    want = x[:, :, :44, :50].reshape(2, 67, 22, 2, 25, 2).max(axis=(3, 5))
    g = helper.make_graph([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                            strides=[2, 2])], "mp",
                          [helper.make_tensor_value_info("x", 1, list(x.shape))],
                          [helper.make_tensor_value_info("y", 1, None)])
    d = run.fresh_dir(os.path.join(ctx.work, "pool", "maxpool-2x2"))
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(d, "model.onnx"))
    np.save(os.path.join(d, "x.npy"), x)
    for t in ("1", "2"):
        od = run.fresh_dir(os.path.join(d, "out" + t))
        rc, _, err = run.run_graphcc(ctx, ["run", os.path.join(d, "model.onnx"), "--input",
                                           "x=" + os.path.join(d, "x.npy"), "--threads", t,
                                           "--output-dir", od])
        if rc != 0:
            return run.Result(False, "%s threads: %s" % (t, run.describe_rc(rc)), err)
        got = np.load(os.path.join(od, "y.npy"))
        if got.shape != want.shape or not np.array_equal(got, want):
            return run.Result(False, "%s threads: %s differs from NumPy in %d values" % (
                t, got.shape, int((got != want).sum()) if got.shape == want.shape else -1))
    return run.Result(True, "[2, 67, 45, 51] -> [2, 67, 22, 25] = NumPy at 1 and 2 threads")


def _far_grid_cases(ctx):
    """GridSample with grid points far outside the image (1e30, -1e30,
    2.5e7) against PyTorch's grid_sample, every mode and padding: the
    coordinates once became indices through an undefined float->int64
    conversion. NaN points must run too (no reference: PyTorch's own
    answer there depends on the mode), and so must reflection of 1e30."""
    out = []
    for v in (1e30, -1e30, 2.5e7, float("nan")):
        for mode in ("bilinear", "nearest", "bicubic"):
            for pad in ("zeros", "border", "reflection"):
                name = "gridsample-far/%s-%s-%g" % (mode, pad, v)

                def fn(v=v, mode=mode, pad=pad, name=name):
                    import onnx
                    import torch
                    from onnx import TensorProto as TP, helper
                    x = (np.arange(9, dtype=f32) + 1).reshape(1, 1, 3, 3)
                    g = np.full((1, 2, 2, 2), v, f32)
                    g[0, 1, 1] = [0.25, -0.5]
                    m = helper.make_model(helper.make_graph(
                        [helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                                          padding_mode=pad)], "gs",
                        [helper.make_tensor_value_info("x", TP.FLOAT, [1, 1, 3, 3]),
                         helper.make_tensor_value_info("g", TP.FLOAT, [1, 2, 2, 2])],
                        [helper.make_tensor_value_info("y", TP.FLOAT, None)]),
                        opset_imports=[helper.make_opsetid("", 16)])
                    d = os.path.join(ctx.work, "empty", name.replace("/", "-"))
                    os.makedirs(d, exist_ok=True)
                    onnx.save(m, os.path.join(d, "model.onnx"))
                    np.save(os.path.join(d, "x.npy"), x)
                    np.save(os.path.join(d, "g.npy"), g)
                    od = run.fresh_dir(os.path.join(ctx.out, "empty", name.replace("/", "-")))
                    rc, _, err = run.run_graphcc(ctx, [
                        "run", os.path.join(d, "model.onnx"), "--input",
                        "x=" + os.path.join(d, "x.npy"), "--input",
                        "g=" + os.path.join(d, "g.npy"), "--output-dir", od])
                    if rc != 0:
                        return run.Result(False, run.describe_rc(rc), err)
                    got = np.load(os.path.join(od, "y.npy"))
                    if pad == "reflection" and abs(v) > 1e20:
                        # PyTorch reflects 1e30 through an int overflow of its
                        # own: no reference; any pixel of the image will do
                        ok = bool(np.all((got >= 1) & (got <= 9)))
                        return run.Result(ok, "values %s" % got.ravel())
                    if v != v:
                        # the in-image point is still right
                        want = torch.nn.functional.grid_sample(
                            torch.from_numpy(x), torch.from_numpy(g), mode=mode,
                            padding_mode=pad, align_corners=False).numpy()
                        ok = abs(float(got[0, 0, 1, 1]) - float(want[0, 0, 1, 1])) <= 1e-5
                        return run.Result(ok, "in-image point %g" % got[0, 0, 1, 1])
                    want = torch.nn.functional.grid_sample(
                        torch.from_numpy(x).double(), torch.from_numpy(g).double(), mode=mode,
                        padding_mode=pad, align_corners=False).numpy()
                    e = float(np.abs(got - want).max())
                    return run.Result(e <= 1e-4, "maxerr %.1e (%s vs %s)" % (
                        e, got.ravel(), want.ravel()))
                out.append(("empty/" + name, fn))
    return out
