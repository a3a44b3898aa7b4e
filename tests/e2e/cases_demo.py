"""The demo (make demo) as tests: models/demo/model.onnx, a PyTorch export with
custom nodes in the domain com.graphcc.demo, and its op package plugins/demo/
(built into BUILD/plugins/demo/).

  demo/check                 graphcc check accepts the package, names both ops
  demo/info-without-ops      exit 1, every custom node listed with its op and domain
  demo/info-with-ops         exit 0
  demo/run-without-ops       refused (exit 1) naming a custom node and its domain,
                             nothing written
  demo/compile               exit 0; one line per custom node with the flavour the
                             package's selection picks, the library and the symbol
  demo/run                   graphcc run --repeat 20 against PyTorch's own output:
                             max abs error <= 1e-4 x max|torch|, same top class
  demo/op/<case>             the package's operations alone, in onnx.helper models,
                             against NumPy: other element types, ranks and flavours
  demo/refuse/<case>         nodes the package's verify (or manifest) must refuse:
                             exit 1, naming the node and what is wrong
"""
import os
import re
import subprocess
import sys
import threading

import numpy as np

import run

DOMAIN = "com.graphcc.demo"
KERNELS = "libdemo_kernels.so"
# The custom nodes of the shipped model and what the package must bind each
# to: (op_type, flavour, symbol). The ScaledSwish on a feature map (float32
# NCHW) takes the fast path, the one on the [1, 64] hidden vector the generic.
EXPECTED = {
    "/features/features.4/branch/branch.3/ChannelShuffle":
        ("ChannelShuffle", "channelShuffleCopy", "channel_shuffle_copy"),
    "/features/features.7/ScaledSwish":
        ("ScaledSwish", "scaledSwishPlanesF32", "scaled_swish_planes_f32"),
    "/head/head.2/ScaledSwish":
        ("ScaledSwish", "scaledSwishGeneric", "scaled_swish_generic"),
}
REL = 1e-4


def _paths(ctx):
    return (os.path.join(ctx.root, "models", "demo", "model.onnx"),
            os.path.join(ctx.plugins, "demo", "demo.yaml"))


def _custom_nodes(model):
    """[(name, domain, op_type)] of the model's non-default-domain nodes, read
    with onnx itself."""
    import onnx
    m = onnx.load(model)
    return [(n.name, n.domain, n.op_type) for n in m.graph.node
            if n.domain not in ("", "ai.onnx")]


def _need_package(ops):
    if not os.path.exists(ops):
        return run.Result(False, "%s is missing (make plugins)" % ops)
    return None


def check_package(ctx):
    _, ops = _paths(ctx)
    missing = _need_package(ops)
    if missing:
        return missing
    rc, out, err = run.run_graphcc(ctx, ["check", ops])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    for op in ("ChannelShuffle", "ScaledSwish"):
        if op not in out + err:
            return run.Result(False, "output does not name the operation " + op, out + err)
    return run.Result(True)


def model_matches(ctx):
    """The shipped model still has exactly the custom nodes these tests expect."""
    model, _ = _paths(ctx)
    found = {name: op for name, domain, op in _custom_nodes(model) if domain == DOMAIN}
    want = {name: e[0] for name, e in EXPECTED.items()}
    if found != want:
        return run.Result(False, "custom nodes of %s are %s, the tests expect %s (update "
                          "EXPECTED in %s)" % (model, found, want, os.path.basename(__file__)))
    return None


def info_without_ops(ctx):
    model, _ = _paths(ctx)
    bad = model_matches(ctx)
    if bad:
        return bad
    rc, out, err = run.run_graphcc(ctx, ["info", model])
    text = out + err
    if rc != 1:
        return run.Result(False, run.describe_rc(rc) + ", expected 1", text)
    lines = text.splitlines()
    for name, (op, _, _) in EXPECTED.items():
        hit = [ln for ln in lines if name in ln]
        if not hit:
            return run.Result(False, "custom node %s is not listed" % name, text)
        if not any(op in ln and DOMAIN in ln for ln in hit):
            return run.Result(False, "node %s is listed without its op %s and domain %s"
                              % (name, op, DOMAIN), text)
    conv = "/features/features.0/Conv"
    if any(conv in ln and re.search(r"unsupported|unknown|no op package", ln, re.I)
           for ln in lines):
        return run.Result(False, "built-in node %s is listed as unsupported" % conv, text)
    return run.Result(True)


def info_with_ops(ctx):
    model, ops = _paths(ctx)
    missing = _need_package(ops)
    if missing:
        return missing
    rc, out, err = run.run_graphcc(ctx, ["info", model, "--ops", ops])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", out + err)
    return run.Result(True)


def run_without_ops(ctx):
    model, _ = _paths(ctx)
    ref = _reference(ctx)
    if isinstance(ref, run.Result):
        return ref
    x, _ = ref
    names = re.compile("|".join(re.escape(n) for n in EXPECTED))
    return run.expect_refusal(ctx, "demo_without_ops", ["run", model, "--input", "x=" + x],
                              [names, DOMAIN])


def compile_model(ctx):
    model, ops = _paths(ctx)
    missing = _need_package(ops) or model_matches(ctx)
    if missing:
        return missing
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "--ops", ops])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    lines = out.splitlines()
    for name, (op, flavour, symbol) in EXPECTED.items():
        hit = [ln for ln in lines if name in ln]
        if not hit:
            return run.Result(False, "no line for custom node %s" % name, out)
        if not any(flavour in ln and KERNELS in ln and symbol in ln for ln in hit):
            return run.Result(False, "node %s: no line with flavour %s, library %s and "
                              "symbol %s" % (name, flavour, KERNELS, symbol), out)
    return run.Result(True)


_ref_lock = threading.Lock()
_ref_done = []


def _reference(ctx):
    """-> (x.npy path, y_ref.npy path), written once per test run by the
    model's own script (seeded input, PyTorch's output), or a failed Result."""
    d = os.path.join(ctx.work, "demo")
    x, y = os.path.join(d, "x.npy"), os.path.join(d, "y_ref.npy")
    with _ref_lock:
        if not _ref_done:
            script = os.path.join(ctx.root, "models", "demo", "make_demo.py")
            p = subprocess.run([sys.executable, script, "--reference", d],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if p.returncode != 0:
                return run.Result(False, "make_demo.py --reference: exit %d" % p.returncode,
                                  p.stdout.decode("utf-8", "replace"))
            _ref_done.append(True)
    return x, y


def run_model(ctx):
    model, ops = _paths(ctx)
    missing = _need_package(ops)
    if missing:
        return missing
    ref = _reference(ctx)
    if isinstance(ref, run.Result):
        return ref
    x, y = ref
    out = run.fresh_dir(os.path.join(ctx.out, "demo", "run"))
    rc, _, err = run.run_graphcc(ctx, ["run", model, "--ops", ops, "--input", "x=" + x,
                                       "--output-dir", out, "--repeat", "20"])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    path = os.path.join(out, "y.npy")
    if not os.path.exists(path):
        return run.Result(False, "output y.npy was not written", err)
    got, want = np.load(path, allow_pickle=False), np.load(y)
    if got.dtype != want.dtype or got.shape != want.shape:
        return run.Result(False, "got %s %s, torch gives %s %s"
                          % (got.dtype, got.shape, want.dtype, want.shape), err)
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    maxerr = float(diff.max()) if np.isfinite(diff).all() else float("inf")
    scale = float(np.abs(want).max())
    msg = "maxerr=%.1e (rel %.1e)" % (maxerr, maxerr / scale if scale else maxerr)
    if not maxerr <= REL * scale:
        return run.Result(False, msg + ": above %g x max|torch| = %.1e; graphcc %s, torch %s"
                          % (REL, REL * scale, got.ravel().tolist(), want.ravel().tolist()),
                          err)
    if int(np.argmax(got)) != int(np.argmax(want)):
        return run.Result(False, msg + ": top class %d, torch's is %d"
                          % (np.argmax(got), np.argmax(want)), err)
    return run.Result(True, msg)


# ---------------------------------------------------------------- the ops alone

def _op_model(path, op, x, attrs):
    """x -> one com.graphcc.demo node named 'demo_node' -> y, saved without the
    checker (it does not know the domain)."""
    from onnx import helper, mapping
    t = mapping.NP_TYPE_TO_TENSOR_TYPE[x.dtype]
    node = helper.make_node(op, ["x"], ["y"], name="demo_node", domain=DOMAIN, **attrs)
    g = helper.make_graph([node], "demo_op", [helper.make_tensor_value_info("x", t, x.shape)],
                          [helper.make_tensor_value_info("y", t, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(DOMAIN, 1)],
                          producer_name="graphcc-e2e")
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def _shuffle_ref(x, g):
    n, c = x.shape[:2]
    return x.reshape((n, g, c // g) + x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def _swish_ref(x, beta, scale):
    b = np.asarray(beta, np.float32).astype(np.float64).reshape((1, -1) + (1,) * (x.ndim - 2))
    v = x.astype(np.float64)
    return (np.float64(np.float32(scale)) * v / (1.0 + np.exp(-b * v))).astype(x.dtype)


def _op_cases():
    rng = np.random.default_rng(7)
    beta5 = [0.25, 0.5, 1.0, 1.5, 2.0]
    # name: (op, x, attrs, rtol, atol)
    spec = {
        "channel-shuffle-int64-rank3": ("ChannelShuffle", rng.integers(-99, 99, (2, 12, 5)),
                                        {"group": 4}, 0, 0),
        "channel-shuffle-uint8-rank2": ("ChannelShuffle",
                                        rng.integers(0, 255, (3, 6)).astype(np.uint8),
                                        {"group": 2}, 0, 0),
        "channel-shuffle-float32-one-group": ("ChannelShuffle",
                                              rng.standard_normal((2, 8, 3, 3)).astype(np.float32),
                                              {"group": 1}, 0, 0),
        "scaled-swish-float64-per-channel": ("ScaledSwish", rng.standard_normal((2, 5, 3, 3)) * 4,
                                             {"beta": beta5, "scale": 0.5}, 1e-12, 1e-12),
        "scaled-swish-float32-rank3-default-scale": (
            "ScaledSwish", (rng.standard_normal((2, 5, 7)) * 4).astype(np.float32),
            {"beta": beta5}, 1e-5, 1e-6),
        "scaled-swish-float32-nchw-one-beta": (
            "ScaledSwish", (rng.standard_normal((2, 3, 4, 5)) * 30).astype(np.float32),
            {"beta": [1.702], "scale": 2.0}, 1e-5, 1e-6),
    }
    for name, (op, x, attrs, rtol, atol) in spec.items():
        if op == "ChannelShuffle":
            want = _shuffle_ref(x, attrs["group"])
        else:
            want = _swish_ref(x, attrs["beta"], attrs.get("scale", 1.0))
        yield name, op, x, attrs, want, rtol, atol


def op_case(ctx, name, op, x, attrs, want, rtol, atol):
    _, ops = _paths(ctx)
    missing = _need_package(ops)
    if missing:
        return missing
    d = run.fresh_dir(os.path.join(ctx.fix, "demo", name))
    model = _op_model(os.path.join(d, "model.onnx"), op, x, attrs)
    np.save(os.path.join(d, "x.npy"), x)
    out = run.fresh_dir(os.path.join(ctx.out, "demo", name))
    rc, _, err = run.run_graphcc(ctx, ["run", model, "--ops", ops, "--input",
                                       "x=" + os.path.join(d, "x.npy"), "--output-dir", out])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    why = run.compare(os.path.join(out, "y.npy"), want, rtol, atol)
    return run.Result(not why, why or "", err)


def _refusals():
    x4 = np.zeros((1, 24, 4, 4), np.float32)
    # name: (op, x, attrs, strings the message must hold besides the node name)
    return {
        "group-does-not-divide-channels": ("ChannelShuffle", x4, {"group": 5}, ["groups"]),
        "group-zero": ("ChannelShuffle", x4, {"group": 0}, ["groups"]),
        "group-missing": ("ChannelShuffle", x4, {}, ["group"]),
        "shuffle-rank1": ("ChannelShuffle", np.zeros(24, np.float32), {"group": 3}, ["rank"]),
        "beta-size-mismatch": ("ScaledSwish", x4, {"beta": [1.0, 2.0]}, ["beta"]),
        "beta-missing": ("ScaledSwish", x4, {}, ["beta"]),
        "swish-int32-input": ("ScaledSwish", np.zeros((1, 4), np.int32), {"beta": [1.0]},
                              [re.compile(r"int32|dtype|type")]),
    }


def refuse_case(ctx, name, op, x, attrs, must):
    _, ops = _paths(ctx)
    missing = _need_package(ops)
    if missing:
        return missing
    d = run.fresh_dir(os.path.join(ctx.fix, "demo", "refuse-" + name))
    model = _op_model(os.path.join(d, "model.onnx"), op, x, attrs)
    np.save(os.path.join(d, "x.npy"), x)
    return run.expect_refusal(ctx, "demo_" + name,
                              ["run", model, "--ops", ops, "--input",
                               "x=" + os.path.join(d, "x.npy")],
                              ["demo_node"] + must)


def cases(ctx):
    extra = [("demo/op/" + c[0], (lambda c=c: op_case(ctx, *c))) for c in _op_cases()]
    extra += [("demo/refuse/" + n, (lambda n=n, s=s: refuse_case(ctx, n, *s)))
              for n, s in _refusals().items()]
    return extra + [
        ("demo/check", lambda: check_package(ctx)),
        ("demo/info-without-ops", lambda: info_without_ops(ctx)),
        ("demo/info-with-ops", lambda: info_with_ops(ctx)),
        ("demo/run-without-ops", lambda: run_without_ops(ctx)),
        ("demo/compile", lambda: compile_model(ctx)),
        ("demo/run", lambda: run_model(ctx)),
    ]
