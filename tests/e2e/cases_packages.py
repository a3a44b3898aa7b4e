"""The op-package contract, end to end, through the real dlopen path.

Fixture packages come from tests/packages/ (built by `make test-packages`
into BUILD/tests/packages/<fixture>/: <fixture>.yaml beside lib/*.so). The
good one, `good`, serves AddOne (domain test.fixtures, from opset version 2):
y = x + delta, with params delta (float, default 1.0) and axes (int[2],
default [0, 1]); every broken fixture is a variation of it (its first
lines say how).

Cases (all named packages/...):
  good/...       check, compile, info and run succeed (defaults, explicit
                 params, renamed attributes, Glow's key spellings, version
                 selection, a custom op named like a built-in, constant
                 inputs, GRAPHCC_OPS_PATH); outputs equal NumPy's (float32,
                 rtol 1e-6, atol 0: one or two additions per element)
  manifest/...   a broken manifest, for `check PKG` and for `compile`/`run`
                 of a good model with `--ops PKG`: exit 1, one message
                 naming file:line:column and the key
  loading/...    missing or bad libraries and symbols, wrong ABI major:
                 exit 1, one message naming the library (and symbol)
  binding/...    a model that misuses a good package, or a package whose
                 functions misbehave: exit 1 from compile and run, one
                 message naming the node (and attribute)
Every refusal must also write nothing (graphcc runs in a fresh, empty
working folder, `run` with --output-dir another one; both must stay empty),
not crash (no signal, no sanitizer report) and not hang.
"""
import os
import re
import subprocess

import numpy as np
from onnx import helper, TensorProto

import run

DOMAIN = "test.fixtures"
RTOL = 1e-6  # one float32 addition (two for bias) per element, same order as NumPy


# ---------------------------------------------------------------- running

def graphcc(ctx, args, cwd, env=None):
    """-> (returncode, or None on timeout; stdout; stderr), run in cwd."""
    e = dict(run.ENV)
    e.pop("GRAPHCC_OPS_PATH", None)  # only the packages a case names
    e.update(env or {})
    try:
        p = subprocess.run([ctx.graphcc] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=run.TIMEOUT, cwd=cwd, env=e)
    except subprocess.TimeoutExpired as x:
        return None, run._txt(x.stdout), run._txt(x.stderr)
    out, err = run._txt(p.stdout), run._txt(p.stderr)
    if run.SANITIZER_RE.search(err):
        return run.SANITIZER_RC, out, err
    return p.returncode, out, err


def crashed(rc):
    return rc is None or rc < 0 or rc in run.CRASH_CODES


def boxes(ctx, tag):
    """A fresh empty working folder and a fresh empty output folder."""
    box = run.fresh_dir(os.path.join(ctx.out, "packages", tag.replace("/", "_")))
    return run.fresh_dir(os.path.join(box, "cwd")), run.fresh_dir(os.path.join(box, "out"))


def written(*dirs):
    names = []
    for d in dirs:
        names += sorted(os.listdir(d)) if os.path.isdir(d) else []
    return names


def named(msg, must):
    """None if msg has every string / matches every regex of must, else the first missing."""
    for s in must:
        if not (s.search(msg) if hasattr(s, "search") else s in msg):
            return getattr(s, "pattern", s)
    return None


def refusal(ctx, tag, args, must, env=None):
    """graphcc must exit 1 with one short message on stderr naming every
    item of must, write nothing anywhere, not crash, not hang."""
    cwd, out = boxes(ctx, tag)
    if args[0] == "run":
        args = args + ["--output-dir", out]
    rc, sout, err = graphcc(ctx, args, cwd, env)
    if crashed(rc):
        return run.Result(False, "crashed or hung: " + run.describe_rc(rc), err)
    if rc != 1:
        return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), err + sout)
    msg = err.strip()
    if not msg:
        return run.Result(False, "exit 1 but nothing on stderr", sout)
    lines = [ln for ln in msg.splitlines() if ln.strip()]
    if len(lines) > 5:
        return run.Result(False, "%d lines on stderr, expected one message" % len(lines), err)
    miss = named(msg, must)
    if miss is not None:
        return run.Result(False, "message does not name %r" % miss, err)
    w = written(cwd, out)
    if w:
        return run.Result(False, "written anyway: %s" % ", ".join(w), err)
    return run.Result(True)


def success(ctx, tag, args, env=None):
    """-> (Result or None when fine, stdout, stderr, output folder)."""
    cwd, out = boxes(ctx, tag)
    if args[0] == "run":
        args = args + ["--output-dir", out]
    rc, sout, err = graphcc(ctx, args, cwd, env)
    if crashed(rc):
        return run.Result(False, "crashed or hung: " + run.describe_rc(rc), err), sout, err, out
    if rc != 0:
        return run.Result(False, "%s, expected exit 0" % run.describe_rc(rc), err), sout, err, out
    stray = written(cwd)
    if stray:
        return run.Result(False, "wrote into its working folder: %s" % ", ".join(stray),
                          err), sout, err, out
    return None, sout, err, out


# ---------------------------------------------------------------- manifests

def pkg(ctx, fixture, name=None):
    """Path of a built fixture manifest."""
    return os.path.join(ctx.packages, fixture, (name or fixture) + ".yaml")


def find(path, text, nth=1):
    """1-based (line, column) of the nth occurrence of text in the file,
    comment lines left out."""
    with open(path) as f:
        lines = f.read().split("\n")
    seen = 0
    for i, ln in enumerate(lines):
        if ln.lstrip().startswith("#"):
            continue
        j = ln.find(text)
        while j >= 0:
            seen += 1
            if seen == nth:
                return i + 1, j + 1
            j = ln.find(text, j + 1)
    raise AssertionError("%r not in %s" % (text, path))


def at_key(path, key, nth=1):
    """Regex for 'FILE:LINE:COL' at `key: value` (the key's column or the value's)."""
    line, col = find(path, key + ":", nth)
    with open(path) as f:
        text = f.read().split("\n")[line - 1]
    rest = text[col - 1 + len(key) + 1:]
    vcol = col + len(key) + 1 + (len(rest) - len(rest.lstrip()))
    return pos_re(path, [line], [col, vcol])


def pos_re(path, lines, cols=None):
    c = "|".join(str(x) for x in cols) if cols else r"\d+"
    return re.compile(r"%s:(%s):(%s)(?!\d)"
                      % (re.escape(os.path.basename(path)), "|".join(str(x) for x in lines), c))


def doc_lines(path, first, last=None):
    """Lines first..last (default: end of file) as a list."""
    with open(path) as f:
        n = len(f.read().rstrip("\n").split("\n"))
    return list(range(first, (last or n) + 1))


def first_content_line(path):
    with open(path) as f:
        for i, ln in enumerate(f.read().split("\n")):
            if ln.strip() and not ln.lstrip().startswith("#"):
                return i + 1
    return 1


# ---------------------------------------------------------------- models

def _save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def model(path, nodes, inputs, outputs, version=2, inits=()):
    """No ONNX checker: it does not know test.fixtures."""
    g = helper.make_graph(nodes, "packages", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(DOMAIN, version)],
                          producer_name="graphcc-e2e")
    m.ir_version = 8
    return _save(m, path)


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, list(shape))


def addone(name, ins, out, **attrs):
    return helper.make_node("AddOne", ins, [out], name=name, domain=DOMAIN, **attrs)


def addone_model(path, node_name, shape=(2, 3), t=TensorProto.FLOAT, version=2, **attrs):
    return model(path, [addone(node_name, ["x"], "y", **attrs)],
                 [vi("x", shape, t)], [vi("y", shape, t)], version=version)


class Models:
    """Every model and input of the suite, built once per run (cheap)."""

    def __init__(self, d):
        rng = np.random.default_rng(2024)
        self.d = d
        self.x23 = rng.standard_normal((2, 3)).astype(np.float32)
        self.x2345 = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
        self.bias = rng.standard_normal((2, 3)).astype(np.float32)
        self.x23_npy = self._npy("x23.npy", self.x23)
        self.x2345_npy = self._npy("x2345.npy", self.x2345)
        self.x5 = self._npy("x_rank5.npy", np.ones((1, 1, 2, 1, 3), np.float32))
        self.x23_i32 = self._npy("x23_int32.npy", np.arange(6, dtype=np.int32).reshape(2, 3))
        p = self.path
        # good models
        self.plain = addone_model(p("plain.onnx"), "bump_plain")
        self.rank4 = addone_model(p("rank4.onnx"), "bump_rank4", shape=(2, 3, 4, 5))
        self.explicit = addone_model(p("explicit.onnx"), "bump_explicit", delta=2.5, axes=[1, 0])
        self.v3 = addone_model(p("v3.onnx"), "bump_v3", version=3)
        self.mixed = model(p("mixed.onnx"), [
            addone("bump_first", ["x"], "t1"),
            helper.make_node("Relu", ["t1"], ["t2"], name="builtin_relu"),
            addone("bump_second", ["t2"], "y", delta=-0.5)],
            [vi("x", (2, 3))], [vi("y", (2, 3))])
        self.const_bias = model(p("const_bias.onnx"), [addone("bump_const", ["x", "bias"], "y")],
                                [vi("x", (2, 3))], [vi("y", (2, 3))],
                                inits=[helper.make_tensor("bias", TensorProto.FLOAT, [2, 3],
                                                          self.bias.flatten().tolist())])
        # binding errors
        self.undeclared = addone_model(p("undeclared.onnx"), "bump_undeclared", gamma=0.5)
        self.no_delta = addone_model(p("no_delta.onnx"), "bump_no_delta")
        self.axes_str = addone_model(p("axes_str.onnx"), "bump_axes_str", axes="zero")
        self.axes_3 = addone_model(p("axes_3.onnx"), "bump_axes_3", axes=[0, 1, 2])
        self.rank5 = model(p("rank5.onnx"), [addone("bump_rank5", ["deep_x"], "y")],
                           [vi("deep_x", (1, 1, 2, 1, 3))], [vi("y", (1, 1, 2, 1, 3))])
        self.int32 = model(p("int32.onnx"), [addone("bump_int32", ["x"], "y")],
                           [vi("x", (2, 3), TensorProto.INT32)],
                           [vi("y", (2, 3), TensorProto.INT32)])
        self.bias_fed = model(p("bias_fed.onnx"), [addone("bump_bias_fed", ["x", "bias"], "y")],
                              [vi("x", (2, 3)), vi("bias", (2, 3))], [vi("y", (2, 3))])
        self.bias_npy = self._npy("bias.npy", self.bias)
        self.negative_axis = addone_model(p("negative_axis.onnx"), "bump_negative_axis",
                                          axes=[0, -1])
        self.too_deep = addone_model(p("too_deep.onnx"), "bump_too_deep")
        self.flavour = addone_model(p("flavour.onnx"), "bump_flavour")
        self.null = addone_model(p("null.onnx"), "bump_null")
        self.two_inputs = model(p("two_inputs.onnx"), [addone("bump_two_inputs", ["x", "x2"], "y")],
                                [vi("x", (2, 3)), vi("x2", (2, 3))], [vi("y", (2, 3))])
        self.v1 = addone_model(p("v1.onnx"), "bump_v1", version=1)
        self.v4 = addone_model(p("v4.onnx"), "bump_v4", version=4)
        self.shift = addone_model(p("shift.onnx"), "bump_shift", shift=3.0)
        self.delta3 = addone_model(p("delta3.onnx"), "bump_delta3", delta=3.0)
        self.shadow = model(p("shadow.onnx"), [
            helper.make_node("Relu", ["x"], ["t"], name="shadow_relu", domain=DOMAIN),
            helper.make_node("Relu", ["t"], ["y"], name="onnx_relu")],
            [vi("x", (2, 3))], [vi("y", (2, 3))])

    def path(self, name):
        return os.path.join(self.d, name)

    def _npy(self, name, a):
        np.save(self.path(name), a)
        return self.path(name)


# ---------------------------------------------------------------- the cases

def cases(ctx):
    d = run.fresh_dir(os.path.join(ctx.fix, "packages"))
    m = Models(d)
    out = []

    def add(name, fn):
        out.append(("packages/" + name, fn))

    def built(*fixtures):
        for f in fixtures:
            if not os.path.exists(pkg(ctx, f)):
                return run.Result(False, "fixture %s not built (run `make test-packages`)"
                                  % pkg(ctx, f))
        return None

    feed23 = ["--input", "x=" + m.x23_npy]

    # ---- manifest errors: check, and compile/run of the good plain model

    def manifest_error(name, fixture, must):
        path = pkg(ctx, fixture)
        for cmd, args in [("check", ["check", path]),
                          ("compile", ["compile", m.plain, "--ops", path]),
                          ("run", ["run", m.plain, "--ops", path] + feed23)]:
            tag = "manifest/%s/%s" % (name, cmd)
            add(tag, lambda t=tag, a=args, f=fixture:
                built(f) or refusal(ctx, t, a, [os.path.basename(path)] + must(path)))

    manifest_error("unknown-key", "unknown-key",
                   lambda p: ["colour", at_key(p, "colour")])
    manifest_error("unknown-key-did-you-mean", "near-miss-key",
                   lambda p: ["maxDim", re.compile(r"(?i)did you mean\W+maxDims\b"),
                              at_key(p, "maxDim")])
    manifest_error("bad-datatype", "bad-datatype",
                   lambda p: ["double", at_key(p, "datatype")])
    manifest_error("scalar-with-size", "scalar-with-size",
                   lambda p: ["size", at_key(p, "size")])
    # A missing key is reported where the mapping that lacks it is.
    manifest_error("missing-type", "missing-type",
                   lambda p: [re.compile(r"\btype\b"),
                              pos_re(p, doc_lines(p, first_content_line(p)))])
    manifest_error("missing-functionsLibrary", "missing-functions-library",
                   lambda p: ["functionsLibrary",
                              pos_re(p, doc_lines(p, first_content_line(p)))])
    manifest_error("missing-implementations", "missing-implementations",
                   lambda p: ["implementations",
                              pos_re(p, doc_lines(p, first_content_line(p)))])
    manifest_error("missing-input-maxDims", "missing-maxdims",
                   lambda p: ["maxDims", pos_re(p, range(find(p, "- name: x")[0],
                                                          find(p, "outputs:")[0] + 1))])
    # libyaml finds the problem on line 10; the bracket left open is on line 9.
    manifest_error("yaml-syntax-unclosed-bracket", "bad-syntax",
                   lambda p: [re.compile(r"%s:%d:\d+|\b%d:%d\b" % (
                       re.escape(os.path.basename(p)), find(p, "[float32")[0],
                       find(p, "[float32")[0], find(p, "[float32")[1]))])
    manifest_error("empty-file", "empty", lambda p: [])
    manifest_error("document-is-a-list", "list-document",
                   lambda p: [pos_re(p, [first_content_line(p)])])
    manifest_error("maxDims-not-a-number", "maxdims-string",
                   lambda p: ["maxDims", at_key(p, "maxDims")])
    manifest_error("maxDims-99", "maxdims-99",
                   lambda p: ["maxDims", at_key(p, "maxDims")])
    manifest_error("default-wrong-type", "default-wrong-type",
                   lambda p: ["default", at_key(p, "default")])
    manifest_error("duplicate-operation", "duplicate-op",
                   lambda p: ["AddOne", pos_re(p, doc_lines(p, find(p, "---")[0]))])
    manifest_error("empty-domain", "empty-domain",
                   lambda p: ["package", at_key(p, "package")])
    manifest_error("ai.onnx-domain", "onnx-domain",
                   lambda p: ["package", "ai.onnx", at_key(p, "package")])

    # Two packages claiming (test.fixtures, AddOne, 2): the message names both.
    good, dup = pkg(ctx, "good"), pkg(ctx, "dup-claim")
    for cmd, args in [("compile", ["compile", m.plain, "--ops", good, "--ops", dup]),
                      ("run", ["run", m.plain, "--ops", good, "--ops", dup] + feed23)]:
        tag = "manifest/two-packages-same-operation/" + cmd
        add(tag, lambda t=tag, a=args: built("good", "dup-claim") or refusal(
            ctx, t, a, ["good.yaml", "dup-claim.yaml", "AddOne"]))
    tag = "manifest/two-packages-same-operation/ops-path"
    add(tag, lambda t=tag: built("good", "dup-claim") or refusal(
        ctx, t, ["run", m.plain] + feed23, ["good.yaml", "dup-claim.yaml", "AddOne"],
        env={"GRAPHCC_OPS_PATH": good + ":" + dup}))

    # ---- loading errors

    def loading_error(name, fixture, must):
        path = pkg(ctx, fixture)
        for cmd, args in [("check", ["check", path]),
                          ("compile", ["compile", m.plain, "--ops", path]),
                          ("run", ["run", m.plain, "--ops", path] + feed23)]:
            tag = "loading/%s/%s" % (name, cmd)
            add(tag, lambda t=tag, a=args, f=fixture: built(f) or refusal(ctx, t, a, must))

    loading_error("missing-functions-library", "missing-fn-lib", ["lib/libaddone_fn.so"])
    loading_error("missing-implementation-library", "missing-impl-lib",
                  ["lib/libaddone_impl.so"])
    loading_error("not-a-library", "not-a-library", ["lib/libx.so"])
    loading_error("missing-verify-symbol", "missing-verify",
                  ["libaddone_fn_noverify.so", "customOpVerify"])
    loading_error("missing-kernel-symbol", "missing-kernel",
                  ["libaddone_impl.so", "addOneFloatMissing", "undefined symbol"])
    # A package loads whole or not at all: AddTwo's missing kernel makes
    # AddOne, from the same file, unusable too.
    loading_error("package-loads-whole-or-not-at-all", "half-broken",
                  ["half-broken.yaml", "addTwoMissing"])
    loading_error("newer-abi-major", "new-abi",
                  ["libaddone_fn_newabi.so",
                   re.compile(r"(?<![\w.])2(\.\d+)*(?![\w.])"),   # the library's major
                   re.compile(r"(?<![\w.])1(\.\d+)*(?![\w.])")])  # graphcc's

    # ---- binding errors: compile and run

    def binding_error(name, fixture, model_path, must, inputs=None):
        path = pkg(ctx, fixture) if fixture else None
        ops = ["--ops", path] if path else []
        feed = feed23 if inputs is None else inputs
        for cmd, args in [("compile", ["compile", model_path] + ops),
                          ("run", ["run", model_path] + ops + feed)]:
            tag = "binding/%s/%s" % (name, cmd)
            add(tag, lambda t=tag, a=args: (built(fixture) if fixture else None)
                or refusal(ctx, t, a, must))

    binding_error("undeclared-attribute", "good", m.undeclared, ["bump_undeclared", "gamma"])
    binding_error("missing-param-without-default", "nodefault", m.no_delta,
                  ["bump_no_delta", "delta"])
    binding_error("attribute-string-for-int", "good", m.axes_str, ["bump_axes_str", "axes"])
    binding_error("vector-size-mismatch", "good", m.axes_3, ["bump_axes_3", "axes"])
    binding_error("input-rank-above-maxDims", "good", m.rank5,
                  ["bump_rank5", re.compile(r"(?i)maxDims|rank")],
                  ["--input", "deep_x=" + m.x5])
    # maxDims: 0 is legal (scalars only): the package loads, and a rank-2
    # input is refused when a node binds, naming the node and the bound.
    binding_error("input-rank-above-maxDims-zero", "maxdims-zero", m.plain,
                  ["bump_plain", re.compile(r"maxDims 0")])
    binding_error("dtype-not-allowed", "good", m.int32,
                  ["bump_int32", re.compile(r"(?i)int32")], ["--input", "x=" + m.x23_i32])
    binding_error("constant-input-fed-at-run-time", "const-input", m.bias_fed,
                  ["bump_bias_fed", "bias"], feed23 + ["--input", "bias=" + m.bias_npy])
    binding_error("verify-returns-false", "good", m.negative_axis,
                  ["bump_negative_axis", re.compile(r"(?i)verif")])
    binding_error("infer-shape-rank-above-maxDims", "infer-too-deep", m.too_deep,
                  ["bump_too_deep", re.compile(r"(?i)maxDims|rank")])
    binding_error("select-unknown-flavour", "select-unknown", m.flavour,
                  ["bump_flavour", "addOneNoSuchFlavour"])
    binding_error("select-returns-null", "select-null", m.null, ["bump_null"])
    binding_error("unregistered-domain", None, m.plain, ["bump_plain", DOMAIN, "AddOne"])
    binding_error("wrong-number-of-inputs", "good", m.two_inputs, ["bump_two_inputs"],
                  feed23 + ["--input", "x2=" + m.x23_npy])
    # attr-rename reads delta from the attribute 'shift': 'delta' is not one.
    binding_error("param-read-from-other-attribute", "attr-rename", m.delta3,
                  ["bump_delta3", "delta"])
    # good serves version 2: a model importing test.fixtures at 1 gets nothing.
    binding_error("domain-version-below-package", "good", m.v1,
                  ["bump_v1", re.compile(r"(?<![\w.])1(?![\w.])"),
                   re.compile(r"(?<![\w.])2(?![\w.])")])

    # ---- good paths

    def check_ok(tag, fixture, must):
        def fn():
            r, sout, err, _ = success(ctx, tag, ["check", pkg(ctx, fixture)])
            if r:
                return r
            miss = named(sout + err, must)
            if miss is not None:
                return run.Result(False, "check does not mention %r" % miss, sout + err)
            return run.Result(True)
        add(tag, lambda: built(fixture) or fn())

    check_ok("good/check", "good", ["AddOne", DOMAIN, "addOneFloat"])
    check_ok("good/check-dup-claim-alone", "dup-claim", ["AddOne"])
    check_ok("good/check-maxdims-zero", "maxdims-zero", ["AddOne"])
    check_ok("good/check-glow-aliases", "glow-aliases", ["AddOne", DOMAIN, "addOneFloat"])
    # The CPU implementation is skipped with a note; the package loads.
    check_ok("good/check-other-backend-skipped", "other-backend", ["AddOne", "CPU"])

    def compile_ok(tag, fixture, model_path, nodes):
        def fn():
            r, sout, err, _ = success(ctx, tag, ["compile", model_path, "--ops",
                                                 pkg(ctx, fixture)])
            if r:
                return r
            hits = [ln for ln in sout.splitlines()
                    if "AddOne" in ln and "addOneFloat" in ln and "libaddone_impl.so" in ln]
            if len(hits) != nodes:
                return run.Result(False, "%d lines name AddOne, addOneFloat and "
                                  "libaddone_impl.so; expected one per custom node (%d)"
                                  % (len(hits), nodes), sout + err)
            return run.Result(True)
        add(tag, lambda: built(fixture) or fn())

    compile_ok("good/compile", "good", m.plain, 1)

    # --backend goes through the backend descriptors (runtime/backend.c):
    # the one this build has is accepted, any other is refused, naming it
    # and the ones there are.
    def backend_ok():
        tag = "good/backend/interpreter"
        r, sout, err, _ = success(ctx, tag, ["compile", m.plain, "--ops", pkg(ctx, "good"),
                                             "--backend", "Interpreter"])
        if r:
            return r
        if not ("addOneFloat" in sout and "libaddone_impl.so" in sout):
            return run.Result(False, "the binding is not shown", sout + err)
        return run.Result(True)
    add("good/backend/interpreter", lambda: built("good") or backend_ok())
    for cmd in ("compile", "run"):
        tag = "good/backend/unknown-" + cmd
        args = [cmd, m.plain, "--ops", None, "--backend", "Vulkan"] + (
            feed23 if cmd == "run" else [])
        add(tag, lambda t=tag, a=args: built("good") or refusal(
            ctx, t, [x if x is not None else pkg(ctx, "good") for x in a],
            ["backend 'Vulkan'", "no such backend", "it has: Interpreter"]))
    compile_ok("good/compile-two-custom-nodes", "good", m.mixed, 2)

    def run_ok(tag, fixtures, model_path, feed, want, ops=None, env=None):
        def fn():
            args = ["run", model_path]
            for f in (fixtures if ops is None else ops):
                args += ["--ops", pkg(ctx, f)]
            r, sout, err, outdir = success(ctx, tag, args + feed, env)
            if r:
                return r
            why = run.compare(os.path.join(outdir, "y.npy"), want, RTOL, 0.0)
            return run.Result(not why, why or "", err)
        add(tag, lambda: built(*fixtures) or fn())

    one = np.float32(1.0)
    run_ok("good/run-default-delta", ["good"], m.plain, feed23, m.x23 + one)
    run_ok("good/run-rank-4-at-maxDims", ["good"], m.rank4, ["--input", "x=" + m.x2345_npy],
           m.x2345 + one)
    run_ok("good/run-explicit-delta", ["good"], m.explicit, feed23, m.x23 + np.float32(2.5))
    run_ok("good/run-domain-version-3", ["good"], m.v3, feed23, m.x23 + one)
    run_ok("good/run-with-builtin-between", ["good"], m.mixed, feed23,
           np.maximum(m.x23 + one, np.float32(0)) + np.float32(-0.5))
    run_ok("good/run-constant-input", ["const-input"], m.const_bias, feed23,
           (m.x23 + one) + m.bias)
    run_ok("good/run-other-backend-skipped", ["other-backend"], m.plain, feed23, m.x23 + one)
    run_ok("good/run-ops-path-file", ["good"], m.plain, feed23, m.x23 + one, ops=[],
           env={"GRAPHCC_OPS_PATH": pkg(ctx, "good")})
    run_ok("good/run-ops-path-dir", ["good"], m.plain, feed23, m.x23 + one, ops=[],
           env={"GRAPHCC_OPS_PATH": os.path.join(ctx.packages, "good") + os.sep})
    run_ok("good/run-glow-aliases", ["glow-aliases"], m.plain, feed23, m.x23 + one)
    run_ok("good/run-param-from-attribute", ["attr-rename"], m.shift, feed23,
           m.x23 + np.float32(3.0))
    # versions serves AddOne from 1 (delta default 10) and from 3 (default 100).
    for v, mp, delta in [(1, m.v1, 10.0), (2, m.plain, 10.0), (3, m.v3, 100.0),
                         (4, m.v4, 100.0)]:
        run_ok("good/run-highest-version-at-most-%d" % v, ["versions"], mp, feed23,
               m.x23 + np.float32(delta))
    # test.fixtures::Relu (adds delta) must not replace ONNX's Relu, nor be replaced.
    run_ok("good/run-custom-op-named-like-builtin", ["shadow-builtin"], m.shadow, feed23,
           np.maximum(m.x23 + one, np.float32(0)))

    def info_case(tag, ops, want_rc):
        def fn():
            args = ["info", m.plain] + sum([["--ops", pkg(ctx, f)] for f in ops], [])
            cwd, _ = boxes(ctx, tag)
            rc, sout, err = graphcc(ctx, args, cwd)
            text = sout + err
            if crashed(rc) or rc != want_rc:
                return run.Result(False, "%s, expected exit %d" % (run.describe_rc(rc), want_rc),
                                  text)
            flagged = [ln for ln in text.splitlines() if "AddOne" in ln and
                       re.search(r"(?i)unsupported|no op package|unknown", ln)]
            listed = [ln for ln in flagged if "bump_plain" in ln and DOMAIN in ln]
            if ops and flagged:
                return run.Result(False, "AddOne is listed as unsupported", text)
            if not ops and not listed:
                return run.Result(False, "node bump_plain (test.fixtures::AddOne) is not "
                                  "listed as unsupported", text)
            return run.Result(True)
        add(tag, lambda: built("good") or fn())

    info_case("good/info-lists-custom-node-without-package", [], 1)
    info_case("good/info-with-package", ["good"], 0)
    return out
