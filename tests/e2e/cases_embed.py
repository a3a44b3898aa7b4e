"""Embedding (issue 18): what a server hosting the runtime relies on.

  embed/cpu-cross/ref-to-fast  the demo compiled on the reference kernel path
                               (GRAPHCC_NN_REFERENCE=1, what a CPU without AVX-512
                               takes) runs on this CPU's fast path, and
  embed/cpu-cross/fast-to-ref  the other way round; both equal the .onnx run on
                               the running path (max abs error <= 1e-5 * max|y|)
"""
import os
import subprocess

import numpy as np

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


def cpu_cross(ctx, compile_ref):
    """A .gcb compiled on one kernel path loads and runs on the other."""
    tag = "ref-to-fast" if compile_ref else "fast-to-ref"

    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "embed", "cpu-cross", tag))
        model = os.path.join(ctx.root, "models", "demo", "model.onnx")
        ops = ["--ops", os.path.join(ctx.plugins, "demo", "demo.yaml")]
        x = os.path.join(d, "x.npy")
        np.save(x, np.random.default_rng(18).standard_normal((1, 3, 64, 64)).astype(np.float32))
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


def cases(ctx):
    return [cpu_cross(ctx, True), cpu_cross(ctx, False)]
