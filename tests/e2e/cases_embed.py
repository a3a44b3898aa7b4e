"""Embedding (issue 18): what a server hosting the runtime relies on.

  embed/cpu-cross/ref-to-fast  the demo compiled on the reference kernel path
                               (GRAPHCC_NN_REFERENCE=1, what a CPU without AVX-512
                               takes) runs on this CPU's fast path, and
  embed/cpu-cross/fast-to-ref  the other way round; both equal the .onnx run on
                               the running path (max abs error <= 1e-5 * max|y|)
  embed/cpu-cross/convs-*      the same both ways for a net of every conv kind
                               (strided 1x1, 3x3 with a fused residual,
                               depthwise, grouped strided, MaxPool, Gemm) and
  embed/cpu-cross/strided-1x1-* a strided 1x1 Conv whose scratch, the arena's
                               last block, grows on the reference path: scratch
                               that grows or shrinks between the kernel paths is
                               planned again, never taken for a corrupted file
  embed/moved/map-library      a .gcb and its package installed in other folders
                               runs with --map-library FROM=TO (gc_load_options.
                               library_map) bit-identically to before the move;
                               refused without it, and refused when the mapped
                               library's SHA-256 differs
  embed/dynamic/torch-cnn      a PyTorch CNN exported with dynamic_axes (batch N,
                               a Reshape to (N, -1)) compiled once with --dynamic
                               runs N = 1, 3, 8 from one .gcb: outputs equal
                               torch's (max abs error <= 1e-5); a wrong channel
                               count is refused naming the input; without
                               --dynamic the compile names the symbolic dim
  embed/dynamic/custom         the demo package's ScaledSwish and ChannelShuffle
                               behind a Relu with a symbolic batch, compiled once
                               with --dynamic, run N = 1, 3, 8 against NumPy
                               (1e-5); with the functions library (inferShape)
                               swapped, info still reads the program and loads
                               nothing, run is refused naming the library
  embed/no-getenv              no runtime source reads the environment except
                               gc_runtime_init (runtime/init.c) and the opt-in
                               OPENBLAS_CORETYPE choice (runtime/blas.c): a
                               kernel reading GRAPHCC_* would change a host's
                               behaviour behind gc_init_options
"""
import glob
import re
import shutil
import os
import subprocess

import numpy as np
import onnx
from onnx import helper, numpy_helper

import run


def _run(ctx, args, reference):
    env = dict(run.ENV)
    env.pop("GRAPHCC_NN_REFERENCE", None)
    if reference:
        env["GRAPHCC_NN_REFERENCE"] = "1"
    try:
        p = subprocess.run([ctx.graphcc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=run.TIMEOUT, cwd=ctx.work, env=env)
    except subprocess.TimeoutExpired:
        return None, ""
    err = run._txt(p.stderr)
    if run.SANITIZER_RE.search(err):
        return run.SANITIZER_RC, err
    return p.returncode, err


def strided_1x1_model(path):
    """One strided 1x1 Conv: its scratch (the gathered pixels on the fast
    path) is the arena's last block, and larger on the reference path; ->
    input shape."""
    w = numpy_helper.from_array(
        (np.random.default_rng(6).standard_normal((128, 64, 1, 1)) * 0.1).astype(np.float32), "w")
    shape = (1, 64, 56, 56)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1], strides=[2, 2])],
        "s2", [helper.make_tensor_value_info("x", 1, shape)],
        [helper.make_tensor_value_info("y", 1, None)], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return shape


def convs_model(path):
    """Every conv kind whose kernels differ between the paths; -> input shape."""
    rng = np.random.default_rng(5)

    def w(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)
    n = helper.make_node
    nodes = [n("Conv", ["x", "w1"], ["a"], kernel_shape=[1, 1], strides=[2, 2]),
             n("Relu", ["a"], ["ar"]),
             n("Conv", ["ar", "w2", "b2"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             n("Add", ["c", "ar"], ["r"]), n("Relu", ["r"], ["rr"]),
             n("Conv", ["rr", "w3"], ["dw"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=64),
             n("Conv", ["dw", "w4"], ["g"], kernel_shape=[3, 3], strides=[2, 2], group=2),
             n("Conv", ["g", "w5"], ["p"], kernel_shape=[1, 1]),
             n("MaxPool", ["p"], ["mp"], kernel_shape=[2, 2]),
             n("GlobalAveragePool", ["mp"], ["gp"]), n("Flatten", ["gp"], ["f"]),
             n("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    inits = [w("w1", 64, 32, 1, 1), w("w2", 64, 64, 3, 3), w("b2", 64), w("w3", 64, 1, 3, 3),
             w("w4", 48, 32, 3, 3), w("w5", 24, 48, 1, 1), w("wf", 10, 24), w("bf", 10)]
    shape = (1, 32, 57, 55)
    g = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("x", 1, shape)],
                          [helper.make_tensor_value_info("y", 1, [1, 10])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return shape


def cpu_cross(ctx, compile_ref, net=None):
    """A .gcb compiled on one kernel path loads and runs on the other: the
    demo, or net (a model builder above)."""
    tag = ((net.__name__[:-len("_model")].replace("_", "-") + "-") if net else "") + \
        ("ref-to-fast" if compile_ref else "fast-to-ref")

    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "embed", "cpu-cross", tag))
        if net:
            model, ops = os.path.join(d, "net.onnx"), []
            shape = net(model)
        else:
            model = os.path.join(ctx.root, "models", "demo", "model.onnx")
            ops, shape = ["--ops", os.path.join(ctx.plugins, "demo", "demo.yaml")], (1, 3, 64, 64)
        x = os.path.join(d, "x.npy")
        np.save(x, np.random.default_rng(18).standard_normal(shape).astype(np.float32))
        gcb = os.path.join(d, "m.gcb")
        rc, err = _run(ctx, ["compile", model, "-o", gcb] + ops, compile_ref)
        if rc != 0:
            return run.Result(False, "compile: " + run.describe_rc(rc), err)
        outs = {}
        for what, args in (("gcb", [gcb]), ("onnx", [model] + ops)):
            od = os.path.join(d, what)
            rc, err = _run(ctx, ["run"] + args + ["--input", "x=" + x, "--output-dir", od],
                           not compile_ref)
            if rc != 0:
                return run.Result(False, "run %s: %s" % (what, run.describe_rc(rc)), err)
            outs[what] = np.load(os.path.join(od, "y.npy"))
        a, b = outs["gcb"], outs["onnx"]
        tol = 1e-5 * float(np.abs(b).max())
        diff = float(np.abs(a - b).max())
        if a.shape != b.shape or not diff <= tol:
            return run.Result(False, "max abs diff %g > %g" % (diff, tol))
        return run.Result(True, "max abs diff %g (tolerance %g)" % (diff, tol))
    return ("embed/cpu-cross/" + tag, fn)


def moved(ctx):
    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "embed", "moved"))
        a, b, inst = (os.path.join(d, p) for p in ("a", "b", os.path.join("opt", "demo-2")))
        os.makedirs(b)
        shutil.copytree(os.path.join(ctx.plugins, "demo"), os.path.join(a, "pkg"))
        model = os.path.join(ctx.root, "models", "demo", "model.onnx")
        x = os.path.join(d, "x.npy")
        np.save(x, np.random.default_rng(5).standard_normal((1, 3, 64, 64)).astype(np.float32))
        gcb = os.path.join(a, "m.gcb")
        rc, err = _run(ctx, ["compile", model, "--ops", os.path.join(a, "pkg", "demo.yaml"),
                             "-o", gcb], False)
        if rc != 0:
            return run.Result(False, "compile: " + run.describe_rc(rc), err)
        ys = []

        def go(prog, extra, tag):
            od = os.path.join(d, tag)
            rc, err = _run(ctx, ["run", prog, "--input", "x=" + x, "--output-dir", od] + extra,
                           False)
            if rc == 0:
                ys.append(np.load(os.path.join(od, "y.npy")))
            return rc, err
        rc, err = go(gcb, [], "before")
        if rc != 0:
            return run.Result(False, "run before the move: " + run.describe_rc(rc), err)
        os.rename(gcb, os.path.join(b, "m.gcb"))
        os.renames(os.path.join(a, "pkg"), inst)
        gcb = os.path.join(b, "m.gcb")
        rc, err = go(gcb, [], "unmapped")
        if rc != 1 or "cannot be read" not in err:
            return run.Result(False, "moved, no map: %s (want exit 1, 'cannot be read')"
                              % run.describe_rc(rc), err)
        rc, err = go(gcb, ["--map-library", "pkg=../opt/demo-2"], "mapped")
        if rc != 0:
            return run.Result(False, "moved, mapped: " + run.describe_rc(rc), err)
        if len(ys) != 2 or ys[0].tobytes() != ys[1].tobytes():
            return run.Result(False, "the moved program's output differs from before the move")
        with open(os.path.join(inst, "lib", "libdemo_kernels.so"), "ab") as f:
            f.write(b"x")
        rc, err = go(gcb, ["--map-library", "pkg=../opt/demo-2"], "changed")
        if rc != 1 or "changed since the program was compiled" not in err or \
                "library_map[0]" not in err:
            return run.Result(False, "mapped to a changed library: %s (want exit 1, "
                              "'changed since')" % run.describe_rc(rc), err)
        return run.Result(True, "mapped: bit-identical; unmapped and changed: refused")
    return ("embed/moved/map-library", fn)


_TORCH_CNN = r"""
import sys, numpy as np, torch
torch.manual_seed(0)
class M(torch.nn.Module):
    def __init__(s):
        super().__init__()
        s.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        s.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        s.fc = torch.nn.Linear(16 * 8 * 8, 10)
    def forward(s, x):
        y = torch.relu(s.c1(x))
        y = torch.relu(s.c2(y))
        return torch.softmax(s.fc(y.reshape(y.shape[0], -1)), -1)
m = M().eval()
d = sys.argv[1]
torch.onnx.export(m, torch.randn(2, 3, 16, 16), d + "/cnn.onnx", input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {0: "N"}, "y": {0: "N"}},
                  opset_version=13)
with torch.no_grad():
    for n in (1, 3, 8):
        x = np.random.default_rng(n).standard_normal((n, 3, 16, 16)).astype(np.float32)
        np.save(d + "/x%d.npy" % n, x)
        np.save(d + "/ref%d.npy" % n, m(torch.from_numpy(x)).numpy())
"""


def dynamic_torch(ctx):
    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "embed", "dynamic"))
        p = subprocess.run(["/usr/bin/python3", "-c", _TORCH_CNN, d], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=run.TIMEOUT)
        if p.returncode != 0:
            return run.Result(False, "torch export failed", run._txt(p.stderr))
        model, gcb = os.path.join(d, "cnn.onnx"), os.path.join(d, "cnn.gcb")
        rc, err = _run(ctx, ["compile", model, "-o", gcb], False)
        if rc != 1 or "dynamic dimension 0 ('N')" not in err or "--dynamic" not in err:
            return run.Result(False, "compile without --dynamic: %s (want exit 1 naming 'N' "
                              "and --dynamic)" % run.describe_rc(rc), err)
        rc, err = _run(ctx, ["compile", model, "--dynamic", "-o", gcb], False)
        if rc != 0:
            return run.Result(False, "compile --dynamic: " + run.describe_rc(rc), err)
        worst = 0.0
        for n in (1, 3, 8):
            od = os.path.join(d, "out%d" % n)
            rc, err = _run(ctx, ["run", gcb, "--input", "x=" + os.path.join(d, "x%d.npy" % n),
                                 "--output-dir", od], False)
            if rc != 0:
                return run.Result(False, "run N=%d: %s" % (n, run.describe_rc(rc)), err)
            y, ref = np.load(os.path.join(od, "y.npy")), np.load(os.path.join(d, "ref%d.npy" % n))
            if y.shape != ref.shape:
                return run.Result(False, "N=%d: shape %s, torch %s" % (n, y.shape, ref.shape))
            worst = max(worst, float(np.abs(y - ref).max()))
        if not worst <= 1e-5:
            return run.Result(False, "max abs error %g > 1e-5" % worst)
        bad = os.path.join(d, "bad.npy")
        np.save(bad, np.zeros((2, 4, 16, 16), np.float32))
        rc, err = _run(ctx, ["run", gcb, "--input", "x=" + bad, "--output-dir",
                             os.path.join(d, "bad")], False)
        if rc != 1 or "input 'x'" not in err:
            return run.Result(False, "4 channels: %s (want exit 1 naming input 'x')"
                              % run.describe_rc(rc), err)
        return run.Result(True, "N = 1, 3, 8 from one .gcb: max abs error %g" % worst)
    return ("embed/dynamic/torch-cnn", fn)


def _demo_ops_model(path):
    """y = ChannelShuffle(ScaledSwish(Relu(x)), group 3) + x, x [N, 6, 4, 4]:
    the demo package's two operations behind a built-in op, batch symbolic."""
    import onnx
    from onnx import helper as h, TensorProto as T
    nodes = [h.make_node("Relu", ["x"], ["r"]),
             h.make_node("ScaledSwish", ["r"], ["s"], domain="com.graphcc.demo",
                         beta=list(DEMO_BETA), scale=1.5),
             h.make_node("ChannelShuffle", ["s"], ["c"], domain="com.graphcc.demo", group=3),
             h.make_node("Add", ["c", "x"], ["y"])]
    g = h.make_graph(nodes, "dyn-custom",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N", 6, 4, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", 6, 4, 4])])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13),
                                             h.make_opsetid("com.graphcc.demo", 1)]), path)


DEMO_BETA = (0.5, 1.0, 1.5, 2.0, 0.25, 3.0)


def _demo_ops_reference(x):
    """The model above in NumPy (float64)."""
    x = x.astype(np.float64)
    r = np.maximum(x, 0)
    s = 1.5 * r / (1 + np.exp(-np.array(DEMO_BETA).reshape(1, 6, 1, 1) * r))
    n = x.shape[0]
    return s.reshape(n, 3, 2, 4, 4).transpose(0, 2, 1, 3, 4).reshape(n, 6, 4, 4) + x


def dynamic_custom(ctx):
    """Custom ops under a symbolic batch: one .gcb runs N = 1, 3, 8 against
    NumPy; the functions library (inferShape) is pinned: swapped, the run is
    refused naming it and no package code runs, while info still reads the
    program without loading it."""
    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "embed", "dynamic-custom"))
        model = os.path.join(d, "m.onnx")
        _demo_ops_model(model)
        pkg = os.path.join(d, "pkg")
        shutil.copytree(os.path.join(ctx.plugins, "demo"), pkg)
        gcb = os.path.join(d, "m.gcb")
        rc, err = _run(ctx, ["compile", model, "--dynamic", "--ops",
                             os.path.join(pkg, "demo.yaml"), "-o", gcb], False)
        if rc != 0:
            return run.Result(False, "compile --dynamic: " + run.describe_rc(rc), err)
        worst = 0.0
        for n in (1, 3, 8):
            x = np.random.default_rng(n).standard_normal((n, 6, 4, 4)).astype(np.float32)
            xp = os.path.join(d, "x%d.npy" % n)
            np.save(xp, x)
            od = os.path.join(d, "out%d" % n)
            rc, err = _run(ctx, ["run", gcb, "--input", "x=" + xp, "--output-dir", od], False)
            if rc != 0:
                return run.Result(False, "N=%d: %s" % (n, run.describe_rc(rc)), err)
            y = np.load(os.path.join(od, "y.npy"))
            ref = _demo_ops_reference(x)
            if y.shape != ref.shape:
                return run.Result(False, "N=%d: output shape %s, want %s" % (n, y.shape,
                                                                             ref.shape))
            worst = max(worst, float(np.abs(y - ref).max()))
        if worst > 1e-5:
            return run.Result(False, "max abs error %g against NumPy (tolerance 1e-5)" % worst)
        # the functions library swapped for one whose constructor leaves a marker
        marker = os.path.join(d, "MARKER")
        shutil.copy(os.path.join(ctx.packages, "ctor-marker", "lib", "libctor_marker_impl.so"),
                    os.path.join(pkg, "lib", "libdemo_functions.so"))
        env = dict(run.ENV)
        env["GRAPHCC_TEST_MARKER"] = marker
        p = subprocess.run([ctx.graphcc, "info", gcb], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=run.TIMEOUT, cwd=d, env=env)
        info = run._txt(p.stdout) + run._txt(p.stderr)
        if p.returncode != 0 or os.path.exists(marker) or "bound per input shape" not in info:
            return run.Result(False, "info on the swapped program: %s%s" % (
                run.describe_rc(p.returncode),
                ", and it loaded the library" if os.path.exists(marker) else ""), info)
        p = subprocess.run([ctx.graphcc, "run", gcb, "--input", "x=" + xp, "--output-dir",
                            os.path.join(d, "swapped")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=run.TIMEOUT, cwd=d, env=env)
        err = run._txt(p.stderr)
        want = ["libdemo_functions.so", "changed since the program was compiled"]
        if p.returncode != 1 or any(w not in err for w in want) or os.path.exists(marker):
            return run.Result(False, "run with the functions library swapped: %s (want exit 1 "
                              "naming it, nothing loaded)" % run.describe_rc(p.returncode), err)
        return run.Result(True, "N = 1, 3, 8 from one .gcb: max abs error %g; a swapped "
                          "functions library refused" % worst)
    return ("embed/dynamic/custom", fn)


def no_getenv(ctx):
    allowed = {"runtime/init.c": None, "runtime/blas.c": "OPENBLAS_CORETYPE"}

    def fn():
        bad = []
        for path in sorted(glob.glob(os.path.join(ctx.root, "runtime", "**", "*.c"),
                                     recursive=True)):
            rel = os.path.relpath(path, ctx.root)
            with open(path, encoding="utf-8") as f:
                for no, line in enumerate(f, 1):
                    m = re.search(r"\b(secure_)?getenv\s*\(\s*\"?([A-Z_]*)", line)
                    if not m or rel in allowed and allowed[rel] in (None, m.group(2)):
                        continue
                    bad.append("%s:%d: %s" % (rel, no, line.strip()))
        if bad:
            return run.Result(False, "the runtime reads the environment outside "
                              "gc_runtime_init", "\n".join(bad))
        return run.Result(True, "only runtime/init.c (and blas.c's opt-in) call getenv")
    return ("embed/no-getenv", fn)


def cases(ctx):
    return [cpu_cross(ctx, to_fast, net) for net in (None, convs_model, strided_1x1_model)
            for to_fast in (True, False)] + [moved(ctx), dynamic_torch(ctx), dynamic_custom(ctx),
            no_getenv(ctx)]
