"""End-to-end tests of what a new op-package author runs into (issue 16),
on the test.authors fixture package (tests/authors/, built by
`make test-packages` into BUILD/tests/authors/). Models are built with
onnx.helper; references are NumPy's.

  authors/optional-input/<how>   RMSNorm without its optional weight (left
                                 out, or given as ""), graphcc and seed
                                 interface, and with it: the kernel reads
                                 inputs[1].data, which must be NULL when
                                 absent (it used to be the output's view)
  authors/optional-output/<how>  TopKMask with only its first output used
                                 (the optional int64 indices dropped or
                                 unnamed), and with both
  authors/output-dtype           an output declared [int32] that inference
                                 makes int64: compile refuses, naming node,
                                 output, declared and inferred types
  authors/test-package/<what>    the good package passes; a crashing kernel
                                 gives exit 3, names the test, operation,
                                 flavour, library and symbol, and the PASS
                                 lines printed before it survive
  authors/manifest/<what>        a typo in a self-test key: "did you mean" from
                                 check and test-package, while run still loads
                                 the package; an inferType key is explained;
                                 a seed verify returning false: graphcc names
                                 the shapes and params it was given
  authors/host-services/<n>      gcx-ops' LinearGelu (ctx->sgemm, temp_alloc,
                                 parallel_for) against NumPy at --threads 1
                                 and 2, same bytes either way
  authors/flavours/<what>        --compare-flavours runs only flavours valid
                                 for the node (accepts:), guards their
                                 outputs, prints NaN as nan and exits 3 when
                                 flavours disagree beyond --tolerance
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

import run

DOMAIN = "test.authors"
EPS = 1e-6
TOL = (1e-5, 1e-6)  # float32 rsqrt of a float64-accumulated mean


def _pkg(ctx, name="authors.yaml"):
    return os.path.join(ctx.build, "tests", "authors", name)


def _dir(ctx, *parts):
    d = os.path.join(ctx.work, "authors", *parts)
    os.makedirs(d, exist_ok=True)
    return d


def rms_ref(x, w=None):
    r = x / np.sqrt((x.astype(np.float64) ** 2).mean(-1, keepdims=True) + EPS)
    return (r * (1 if w is None else w)).astype(np.float32)


def _model(path, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                            helper.make_opsetid(DOMAIN, 1)])
    onnx.save(m, path)
    return path


def _vi(name, dt, shape):
    return helper.make_tensor_value_info(name, dt, shape)


def _need(ctx, name="authors.yaml"):
    p = _pkg(ctx, name)
    if not os.path.exists(p):
        return run.Result(False, "%s is missing (make test-packages)" % p)
    return None


def _run(ctx, tag, model, arrays, pkg="authors.yaml", extra=()):
    """graphcc run; -> (rc, out dir, stderr)."""
    d = _dir(ctx, tag)
    args = ["run", model, "--ops", _pkg(ctx, pkg), "--output-dir", run.fresh_dir(
        os.path.join(d, "out"))] + list(extra)
    for name, a in arrays.items():
        p = os.path.join(d, name + ".npy")
        np.save(p, a)
        args += ["--input", "%s=%s" % (name, p)]
    rc, _, err = run.run_graphcc(ctx, args)
    return rc, os.path.join(d, "out"), err


def _rng(tag):
    return np.random.default_rng(abs(hash(tag)) % (1 << 32))


# ------------------------------------------------------------ optional input

def optional_input(ctx, how):
    bad = _need(ctx)
    if bad:
        return bad
    op = "RMSNormSeed" if how == "seed" else "RMSNorm"
    x = np.random.default_rng(1).standard_normal((3, 5), dtype=np.float32) * 3
    w = np.linspace(0.5, 2.0, 5, dtype=np.float32)
    ins = {"left-out": ["x"], "seed": ["x"], "empty-name": ["x", ""],
           "with-weight": ["x", "w"]}[how]
    d = _dir(ctx, "optional-input", how)
    inputs = [_vi("x", TP.FLOAT, [3, 5])]
    arrays = {"x": x}
    if "w" in ins:
        inputs.append(_vi("w", TP.FLOAT, [5]))
        arrays["w"] = w
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node(op, ins, ["y"], domain=DOMAIN, name="norm")],
                   inputs, [_vi("y", TP.FLOAT, [3, 5])])
    rc, out, err = _run(ctx, "optional-input-" + how, model, arrays)
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    why = run.compare(os.path.join(out, "y.npy"), rms_ref(x, w if "w" in ins else None), *TOL)
    return run.Result(why is None, why or "matches NumPy", err)


# ------------------------------------------------------------ optional output

def optional_output(ctx, how):
    bad = _need(ctx)
    if bad:
        return bad
    x = np.array([[1, 4, 2, 3, 9], [-1, -3, 0, 5, 2]], np.float32)
    outs = {"dropped": ["values"], "unnamed": ["values", ""],
            "both": ["values", "indices"]}[how]
    d = _dir(ctx, "optional-output", how)
    graph_outs = [_vi("values", TP.FLOAT, [2, 2])]
    if "indices" in outs:
        graph_outs.append(_vi("indices", TP.INT64, [2, 2]))
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node("TopKMask", ["x"], outs, domain=DOMAIN, name="topk", k=2)],
                   [_vi("x", TP.FLOAT, [2, 5])], graph_outs)
    rc, out, err = _run(ctx, "optional-output-" + how, model, {"x": x})
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    idx = np.argsort(-x, axis=-1, kind="stable")[:, :2]
    why = run.compare(os.path.join(out, "values.npy"), np.take_along_axis(x, idx, -1), 0, 0)
    if why is None and "indices" in outs:
        why = run.compare(os.path.join(out, "indices.npy"), idx.astype(np.int64), 0, 0)
    if why is None and "indices" not in outs and os.path.exists(os.path.join(out, "indices.npy")):
        why = "indices.npy written for an output the model does not have"
    return run.Result(why is None, why or "matches NumPy", err)


def output_dtype(ctx):
    bad = _need(ctx, "wrong-dtype.yaml")
    if bad:
        return bad
    d = _dir(ctx, "output-dtype")
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node("TopKMask", ["x"], ["values", "indices"], domain=DOMAIN,
                                     name="topk", k=2)],
                   [_vi("x", TP.FLOAT, [2, 5])],
                   [_vi("values", TP.FLOAT, [2, 2]), _vi("indices", TP.INT64, [2, 2])])
    rc, _, err = run.run_graphcc(ctx, ["compile", model, "--ops", _pkg(ctx, "wrong-dtype.yaml"),
                                       "-o", os.path.join(d, "model.gcb")])
    must = ["topk", "'indices'", "int64", "int32", "wrong-dtype.yaml"]
    missing = [m for m in must if m not in err]
    ok = rc == 1 and not missing and not os.path.exists(os.path.join(d, "model.gcb"))
    return run.Result(ok, "%s; missing from the message: %s" % (run.describe_rc(rc), missing)
                      if not ok else err.strip().splitlines()[0][:160], err)


# ------------------------------------------------------------ test-package

def test_package_good(ctx):
    bad = _need(ctx)
    if bad:
        return bad
    rc, out, err = run.run_graphcc(ctx, ["test-package", _pkg(ctx)])
    last = (out.strip().splitlines() or [""])[-1]
    ok = rc == 0 and last.endswith(" 0 failed") and "SKIP" in out and "rmsNormBy8" in out
    return run.Result(ok, "%s: %s" % (run.describe_rc(rc), last), out[-3000:] + err)


def test_package_crash(ctx):
    bad = _need(ctx, "crash.yaml")
    if bad:
        return bad
    rc, out, err = run.run_graphcc(ctx, ["test-package", _pkg(ctx, "crash.yaml")])
    must = ["'stores through NULL'", "crash.yaml:", "'Crashy'", "'crashF32'",
            "libauthors_impl.so", "crash_f32", "SIGSEGV"]
    missing = [m for m in must if m not in err]
    passes = [ln for ln in out.splitlines() if ln.startswith("PASS  RMSNorm")]
    ok = rc == 3 and not missing and len(passes) >= 7
    return run.Result(ok, "%s, %d RMSNorm PASS lines kept; missing from stderr: %s"
                      % (run.describe_rc(rc), len(passes), missing), out[-2000:] + err)


# ------------------------------------------------------------ compare-flavours

def _rms_model(ctx, tag, cols):
    d = _dir(ctx, "flavours", tag)
    return _model(os.path.join(d, "model.onnx"),
                  [helper.make_node("RMSNorm", ["x"], ["y"], domain=DOMAIN, name="norm")],
                  [_vi("x", TP.FLOAT, [2, cols])], [_vi("y", TP.FLOAT, [2, cols])])


def flavours(ctx, what):
    pkg = {"valid-only": "authors.yaml", "both-valid": "authors.yaml",
           "guard": "no-accepts.yaml", "nan": "nan-flavour.yaml"}[what]
    bad = _need(ctx, pkg)
    if bad:
        return bad
    cols = 16 if what == "both-valid" else 12
    x = np.random.default_rng(2).standard_normal((2, cols), dtype=np.float32)
    rc, out, err = _run(ctx, "flavours-" + what, _rms_model(ctx, what, cols), {"x": x}, pkg,
                        ["--compare-flavours"])
    checks = {
        # rmsNormBy8 is not valid for rows of 12: reported, not run, no false alarm
        "valid-only": (0, ["'rmsNormBy8' is not valid for this node",
                           "not a multiple of 8", "only one flavour ran"], ["DISAGREE"]),
        # rows of 16: both run and agree to float rounding
        "both-valid": (0, ["rmsNormF32 vs rmsNormBy8"], ["DISAGREE", "not valid"]),
        # without accepts: the overrun of rmsNormBy8 is caught by the guard zones
        "guard": (3, ["wrote outside output 0", "rms_norm_by8", "byte offset 96"], []),
        # a NaN against a number: printed as nan, disagreement, exit 3
        "nan": (3, ["max abs diff nan", "DISAGREE", "tolerance 0.0001"], ["max abs diff inf"]),
    }
    want_rc, must, must_not = checks[what]
    missing = [m for m in must if m not in err]
    present = [m for m in must_not if m in err]
    why = None
    if rc == 0:  # the bound flavour's output is written and right
        why = run.compare(os.path.join(out, "y.npy"), rms_ref(x), *TOL)
    ok = rc == want_rc and not missing and not present and why is None
    return run.Result(ok, "%s (expected %d); missing: %s; unexpected: %s; %s"
                      % (run.describe_rc(rc), want_rc, missing, present, why or ""), err)


def flavours_tolerance(ctx):
    """tests/flavours' rowSumSkewed is 1e-3 off on one element: beyond the
    default tolerance (exit 3), within --tolerance 1e-2 (exit 0)."""
    pkg = os.path.join(ctx.build, "tests", "flavours", "flavours.yaml")
    if not os.path.exists(pkg):
        return run.Result(False, "%s is missing (make test-packages)" % pkg)
    d = _dir(ctx, "flavours", "tolerance")
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node("RowSum", ["x"], ["y"], domain="test.flavours", name="rs")],
                   [_vi("x", TP.FLOAT, [3, 4])], [_vi("y", TP.FLOAT, [3])])
    m = onnx.load(model)
    m.opset_import[1].domain = "test.flavours"
    onnx.save(m, model)
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    rc1, _, err1 = _run(ctx, "tol-default", model, {"x": x}, pkg, ["--compare-flavours"])
    rc2, _, err2 = _run(ctx, "tol-loose", model, {"x": x}, pkg,
                        ["--compare-flavours", "--tolerance", "1e-2"])
    ok = rc1 == 3 and "DISAGREE" in err1 and rc2 == 0 and "DISAGREE" not in err2
    return run.Result(ok, "default: %s, --tolerance 1e-2: %s"
                      % (run.describe_rc(rc1), run.describe_rc(rc2)), err1 + err2)


# ------------------------------------------------------------ manifest

def _variant(ctx, name, old, new):
    """authors.yaml with old replaced by new, beside it (same lib/)."""
    src = open(_pkg(ctx)).read()
    assert old in src, old
    path = _pkg(ctx, name)
    with open(path, "w") as f:
        f.write(src.replace(old, new, 1))
    return path


def test_key_typo(ctx):
    bad = _need(ctx)
    if bad:
        return bad
    pkg = _variant(ctx, "typo.yaml", "  - name: rows of 8 (both flavours)\n",
                   "  - name: rows of 8 (both flavours)\n    flavors: [rmsNormBy8]\n")
    rc1, _, err1 = run.run_graphcc(ctx, ["check", pkg])
    rc2, out2, err2 = run.run_graphcc(ctx, ["test-package", pkg])
    x = np.random.default_rng(3).standard_normal((3, 5), dtype=np.float32)
    d = _dir(ctx, "typo")
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node("RMSNorm", ["x"], ["y"], domain=DOMAIN, name="norm")],
                   [_vi("x", TP.FLOAT, [3, 5])], [_vi("y", TP.FLOAT, [3, 5])])
    rc3, out, err3 = _run(ctx, "typo", model, {"x": x}, "typo.yaml")
    why = run.compare(os.path.join(out, "y.npy"), rms_ref(x), *TOL) if rc3 == 0 else "run failed"
    hint = "key 'flavors': test 3: unknown key in a test; " \
           "did you mean 'flavours'?"
    ok = rc1 == 1 and hint in err1 and rc2 == 1 and hint in err2 + out2 and why is None
    return run.Result(ok, "check %s, test-package %s, run %s (%s)"
                      % (run.describe_rc(rc1), run.describe_rc(rc2), run.describe_rc(rc3),
                         why or "right"), err1 + err2 + out2 + err3)


def infer_type_key(ctx):
    bad = _need(ctx)
    if bad:
        return bad
    pkg = _variant(ctx, "infer-type.yaml", "inferShape: same_shape\n",
                   "inferShape: same_shape\ninferType: same_type\n")
    rc, _, err = run.run_graphcc(ctx, ["check", pkg])
    ok = rc == 1 and "inferType" in err and "inferShape sets each output's dtype" in err
    return run.Result(ok, run.describe_rc(rc), err)


def seed_verify_false(ctx):
    bad = _need(ctx)
    if bad:
        return bad
    d = _dir(ctx, "seed-verify")
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node("RMSNormSeed", ["x", "w"], ["y"], domain=DOMAIN,
                                     name="norm", epsilon=0.5)],
                   [_vi("x", TP.FLOAT, [3, 5]), _vi("w", TP.FLOAT, [4])],
                   [_vi("y", TP.FLOAT, [3, 5])])
    rc, _, err = run.run_graphcc(ctx, ["compile", model, "--ops", _pkg(ctx), "-o",
                                       os.path.join(d, "m.gcb")])
    must = ["rms_seed_verify", "verify returned false", "x float32 3x5", "weight float32 4",
            "epsilon = 0.5", "'norm'"]
    missing = [m for m in must if m not in err]
    return run.Result(rc == 1 and not missing, "%s; missing: %s" % (run.describe_rc(rc), missing),
                      err)


def host_services(ctx, threads):
    gcx = os.path.join(ctx.plugins, "gcx-ops", "gcx-ops.yaml")
    if not os.path.exists(gcx):
        return run.Result(False, "%s is missing (make plugins)" % gcx)
    import math
    d = _dir(ctx, "host-services")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((67, 33), dtype=np.float32)
    w = rng.standard_normal((19, 33), dtype=np.float32) / 6
    b = rng.standard_normal(19, dtype=np.float32)
    model = _model(os.path.join(d, "model.onnx"),
                   [helper.make_node("LinearGelu", ["x", "W", "b"], ["y"],
                                     domain="org.graphcc.examples", name="lg")],
                   [_vi("x", TP.FLOAT, [67, 33])], [_vi("y", TP.FLOAT, [67, 19])],
                   [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    m = onnx.load(model)
    m.opset_import[1].domain = "org.graphcc.examples"
    onnx.save(m, model)
    t = x.astype(np.float64) @ w.astype(np.float64).T + b
    ref = (0.5 * t * (1 + np.vectorize(math.erf)(t / math.sqrt(2)))).astype(np.float32)
    outs = []
    for th in (1, threads):
        rc, out, err = _run(ctx, "host-services-%d" % th, model, {"x": x}, gcx,
                            ["--threads", str(th)])
        if rc != 0:
            return run.Result(False, "--threads %d: %s" % (th, run.describe_rc(rc)), err)
        why = run.compare(os.path.join(out, "y.npy"), ref, 1e-5, 1e-5)
        if why:
            return run.Result(False, "--threads %d: %s" % (th, why), err)
        outs.append(np.load(os.path.join(out, "y.npy")))
    same = outs[0].tobytes() == outs[1].tobytes()
    return run.Result(same, "matches NumPy at --threads 1 and %d%s" % (
        threads, "" if same else ", but the bytes differ between them"))


def cases(ctx):
    out = []
    for how in ("left-out", "empty-name", "seed", "with-weight"):
        out.append(("authors/optional-input/" + how, lambda h=how: optional_input(ctx, h)))
    for how in ("dropped", "unnamed", "both"):
        out.append(("authors/optional-output/" + how, lambda h=how: optional_output(ctx, h)))
    out.append(("authors/output-dtype", lambda: output_dtype(ctx)))
    out.append(("authors/test-package/good", lambda: test_package_good(ctx)))
    out.append(("authors/test-package/crash", lambda: test_package_crash(ctx)))
    out.append(("authors/manifest/test-key-typo", lambda: test_key_typo(ctx)))
    out.append(("authors/manifest/infer-type", lambda: infer_type_key(ctx)))
    out.append(("authors/manifest/seed-verify-false", lambda: seed_verify_false(ctx)))
    for what in ("valid-only", "both-valid", "guard", "nan"):
        out.append(("authors/flavours/" + what, lambda w=what: flavours(ctx, w)))
    out.append(("authors/flavours/tolerance", lambda: flavours_tolerance(ctx)))
    out.append(("authors/host-services/2", lambda: host_services(ctx, 2)))
    return out
