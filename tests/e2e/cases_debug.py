"""Kernel debugging, end to end: crash capture and the instruments of
`graphcc run` (--trace, --dump-dir, --check-nan, --guard, --profile,
--break-before, --timeout).

The culprits are the deliberately broken kernels of the test.debug fixture
package (tests/debug/, built by `make test-packages` into
BUILD/tests/debug/buggy/): op Buggy copies x to y and then misbehaves as
its flavour (chosen by the string attribute `bug`) says; op Scale is a
correct y = factor * x. The fixture model is

    x[1,3,8,8] -> Scale 'pre' (factor 3) -> t -> Buggy 'culprit' -> u
               -> Scale 'post' (factor 2) -> y

Cases (all named debug/...):
  gcb/...          a crash, a guard violation and a NaN origin through a
                   program compiled with `compile -o` and run without --ops
  crash/...        no option needed: a NULL store (graphcc and seed
                   interfaces), abort(), a stack overflow, an integer
                   division by zero: exit 3, the report names the signal,
                   node, op, operation, flavour, library, symbol and the
                   input shapes; nothing written
  guard/...        --guard names a write past an output's end, before its
                   start (byte offsets) and into an input (its name); clean
                   kernels (fixture, demo) give the plain run's outputs
  check-nan/...    --check-nan names the node and the first bad index; an
                   index the shape does not reach, or a NaN that comes in
                   with the graph input, is not blamed
  timeout/...      --timeout 2 names the spinning node, exit 3, within
                   seconds; a generous limit changes nothing
  trace/...        one line per node with op, shapes, time and statistics
                   (resnet18 when the suite generated it, else the demo)
  dump/...         one .npy per tensor plus tensors.tsv; dumped
                   intermediates equal NumPy's recomputation; file names
                   file-safe and unique
  profile/...      Chrome trace-event JSON with one X event per node
                   (custom nodes with flavour and library) and the
                   per-op-type summary on stderr; at 2 threads a Conv's
                   jobs on the worker pool (args.pool), none at 1 thread
  break-before/... without a debugger: a message naming gdb, exit 0; an
                   unknown node: exit 1; under gdb (required: part of the
                   base image; missing gdb FAILS the case): SIGTRAP before
                   the node, and `break SYMBOL` + `continue` lands in the
                   kernel
Every case runs graphcc as its own process, in a fresh working folder, with
a fresh --output-dir that must stay empty whenever the run fails.
"""
import json
import os
import re
import shutil
import subprocess
import threading
import time

import numpy as np

import run

DOMAIN = "test.debug"
SHAPE = (1, 3, 8, 8)
NBYTES = 4 * int(np.prod(SHAPE))  # 768: the output's size in bytes


# ---------------------------------------------------------------- helpers

def package(ctx):
    return os.path.join(ctx.build, "tests", "debug", "buggy", "buggy.yaml")


def demo(ctx):
    return (os.path.join(ctx.root, "models", "demo", "model.onnx"),
            os.path.join(ctx.plugins, "demo", "demo.yaml"))


def graphcc(ctx, args, cwd, timeout=run.TIMEOUT, prefix=None):
    """-> (returncode or None on timeout, stdout, stderr, seconds)."""
    t0 = time.time()
    try:
        p = subprocess.run((prefix or []) + [ctx.graphcc] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, cwd=cwd, env=run.ENV)
    except subprocess.TimeoutExpired as x:
        return None, run._txt(x.stdout), run._txt(x.stderr), time.time() - t0
    out, err = run._txt(p.stdout), run._txt(p.stderr)
    if run.SANITIZER_RE.search(err):
        return run.SANITIZER_RC, out, err, time.time() - t0
    return p.returncode, out, err, time.time() - t0


def boxes(ctx, tag):
    """A fresh empty working folder and a fresh empty output folder."""
    box = run.fresh_dir(os.path.join(ctx.out, "debug", tag.replace("/", "_")))
    return run.fresh_dir(os.path.join(box, "cwd")), run.fresh_dir(os.path.join(box, "out")), box


def missing(msg, must):
    """The first of must (strings or regexes) that msg lacks, or None."""
    for s in must:
        if not (s.search(msg) if hasattr(s, "search") else s in msg):
            return getattr(s, "pattern", s)
    return None


def listing(*dirs):
    names = []
    for d in dirs:
        names += sorted(os.listdir(d)) if os.path.isdir(d) else []
    return names


def need_package(ctx):
    if not os.path.exists(package(ctx)):
        return run.Result(False, "fixture package %s is not built (make test-packages)"
                          % package(ctx))
    return None


# ---------------------------------------------------------------- models

def _save(m, path):
    """Writes the model whole under its name (a temporary file, renamed):
    cases running in parallel may be reading the same model."""
    tmp = "%s.%d.%d.tmp" % (path, os.getpid(), threading.get_ident())
    with open(tmp, "wb") as f:
        f.write(m.SerializeToString())
    os.replace(tmp, path)
    return path


def _model(nodes, n_in="x", n_out="y", shape=SHAPE):
    from onnx import helper, TensorProto
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape))
          for n in (n_in, n_out)]
    g = helper.make_graph(nodes, "debug", [vi[0]], [vi[1]])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(DOMAIN, 1)],
                          producer_name="graphcc-e2e-debug")
    m.ir_version = 8
    return m


def _node(op, ins, outs, name, **attrs):
    from onnx import helper
    return helper.make_node(op, ins, outs, name=name, domain=DOMAIN, **attrs)


def buggy_model(d, bug, **attrs):
    path = os.path.join(d, "buggy_%s%s.onnx" % (bug, "".join("_%s%s" % kv for kv in
                                                             sorted(attrs.items()))))
    nodes = [_node("Scale", ["x"], ["t"], "pre", factor=3.0),
             _node("Buggy", ["t"], ["u"], "culprit", bug=bug, **attrs),
             _node("Scale", ["u"], ["y"], "post")]
    return _save(_model(nodes), path)


def clean_model(d):
    nodes = [_node("Scale", ["x"], ["t"], "pre", factor=3.0),
             _node("Scale", ["t"], ["y"], "post")]
    return _save(_model(nodes), os.path.join(d, "clean.onnx"))


def colliding_model(d):
    """Tensor names that file-safe names would merge: a/b, a_b, a:b."""
    nodes = [_node("Scale", ["x"], ["a/b"], "n1"),
             _node("Scale", ["a/b"], ["a_b"], "n2"),
             _node("Scale", ["a_b"], ["a:b"], "n3"),
             _node("Scale", ["a:b"], ["y"], "n4")]
    return _save(_model(nodes), os.path.join(d, "collide.onnx"))


def inputs(d):
    x = (np.arange(np.prod(SHAPE), dtype=np.float32).reshape(SHAPE) / 10).astype(np.float32)
    np.save(os.path.join(d, "x.npy"), x)
    xn = x.copy()
    xn.flat[7] = np.nan
    np.save(os.path.join(d, "x_nan.npy"), xn)
    return os.path.join(d, "x.npy"), os.path.join(d, "x_nan.npy")


def real_model(ctx):
    """(label, model, input, ops args, expected or None): resnet18 when the
    suite generated it, else the demo model with its package."""
    d = os.path.join(ctx.torch, "resnet18")
    if os.path.exists(os.path.join(d, "model.onnx")):
        return ("resnet18", os.path.join(d, "model.onnx"), os.path.join(d, "input.npy"), [],
                os.path.join(d, "expected.npy"))
    m, ops = demo(ctx)
    return ("demo (resnet18 not generated)", m, demo_input(ctx), ["--ops", ops], None)


def demo_input(ctx):
    p = os.path.join(ctx.fix, "debug", "demo_x.npy")
    if not os.path.exists(p):
        x = np.random.default_rng(5).standard_normal((1, 3, 64, 64)).astype(np.float32)
        np.save(p + ".tmp.npy", x)
        os.replace(p + ".tmp.npy", p)
    return p


def node_count(ctx, model, ops, cwd):
    rc, out, err, _ = graphcc(ctx, ["info", model] + ops, cwd)
    m = re.search(r"compiled: (\d+) nodes", out)
    return int(m.group(1)) if rc == 0 and m else None


# ---------------------------------------------------------------- checks

def expect_caught(ctx, tag, model, x, extra, must, timeout=run.TIMEOUT, max_secs=None):
    """Exit 3, every item of must in stderr, nothing written."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, out, _ = boxes(ctx, tag)
    rc, sout, err, secs = graphcc(ctx, ["run", model, "--ops", package(ctx), "--input",
                                        "x=" + x, "--output-dir", out] + extra, cwd, timeout)
    if rc != 3:
        return run.Result(False, "%s, expected exit 3" % run.describe_rc(rc), err)
    miss = missing(err, must)
    if miss:
        return run.Result(False, "report does not name %r" % miss, err)
    wrote = listing(cwd, out)
    if wrote:
        return run.Result(False, "written anyway: %s" % ", ".join(wrote), err)
    if max_secs and secs > max_secs:
        return run.Result(False, "took %.1fs, expected under %ds" % (secs, max_secs), err)
    return run.Result(True, "%.1fs" % secs if max_secs else "")


def crash_must(flavour, symbol, lib="libbuggy_impl.so"):
    return ["graphcc: kernel crashed", "node 'culprit'", "(test.debug::Buggy)",
            "operation 'Buggy'", "flavour '%s'" % flavour, lib, "symbol " + symbol,
            re.compile(r"inputs: t float32 1x3x8x8"), "exit 3"]


def run_ok(ctx, tag, args):
    """-> (Result or None, out dir, stderr)"""
    cwd, out, box = boxes(ctx, tag)
    rc, sout, err, _ = graphcc(ctx, args + ["--output-dir", out], cwd)
    if rc != 0:
        return run.Result(False, "%s, expected exit 0" % run.describe_rc(rc), err), out, err
    return None, out, err


def plain_vs_debug(ctx, tag, model, x, ops, extra):
    """The instrumented run's outputs equal a plain run's, bit for bit."""
    base = ["run", model] + ops + ["--input", "x=" + x]
    r, out_plain, _ = run_ok(ctx, tag + "-plain", base)
    if r:
        return r
    r, out_dbg, err = run_ok(ctx, tag, base + extra)
    if r:
        return r
    # (.graphcc-outputs: the ledger of what graphcc wrote, not an output)
    names = [n for n in listing(out_plain) if n != ".graphcc-outputs"]
    if not names or names != [n for n in listing(out_dbg) if n != ".graphcc-outputs"]:
        return run.Result(False, "outputs %s vs plain %s" % (listing(out_dbg), names), err)
    for n in names:
        a, b = np.load(os.path.join(out_plain, n)), np.load(os.path.join(out_dbg, n))
        if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
            return run.Result(False, "%s differs from the plain run's" % n, err)
    return None


# ---------------------------------------------------------------- cases

def cases(ctx):
    d = run.fresh_dir(os.path.join(ctx.fix, "debug"))
    x, x_nan = inputs(d)
    cs = []

    def add(name, fn):
        cs.append(("debug/" + name, fn))

    def caught(name, bug, extra, must, **kw):
        model = buggy_model(d, bug, **kw.pop("attrs", {}))
        add(name, lambda: expect_caught(ctx, name, model, x, extra, must, **kw))

    # crash capture: always on
    caught("crash/null-write", "nullWrite", [],
           crash_must("nullWrite", "buggy_null_write") + ["SIGSEGV", "0x0"])
    caught("crash/null-write-seed-interface", "seedNullWrite", [],
           crash_must("seedNullWrite", "seed_null_write", "libbuggy_seed.so") + ["SIGSEGV"])
    caught("crash/abort", "callAbort", [],
           crash_must("callAbort", "buggy_abort") + ["SIGABRT", "abort()"])
    caught("crash/stack-overflow", "overflowStack", [],
           crash_must("overflowStack", "buggy_overflow_stack") + ["SIGSEGV", "stack overflow"])
    caught("crash/divide-by-zero", "divideByZero", [],
           crash_must("divideByZero", "buggy_divide_by_zero") + ["SIGFPE", "division by zero"])
    caught("crash/under-trace-and-guard", "nullWrite", ["--trace", "--guard"],
           crash_must("nullWrite", "buggy_null_write") + [re.compile(r"trace #0 'pre'")])

    # package code crashing while the program is built: a pure kernel folded
    # on a constant input at compile time
    def compile_time_crash():
        import onnx
        from onnx import helper, numpy_helper, TensorProto as TP
        pure = os.path.join(ctx.build, "tests", "debug", "buggy", "buggy-pure.yaml")
        if not os.path.exists(pure):
            return run.Result(False, "%s is not built (make test-packages)" % pure)
        w = numpy_helper.from_array(np.ones((1, 3, 8, 8), np.float32), "w")
        nodes = [helper.make_node("Buggy", ["w"], ["u"], domain="test.debug",
                                  name="folded_bug", bug="nullWrite"),
                 helper.make_node("Add", ["x", "u"], ["y"], name="add")]
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TP.FLOAT,
                                                                         [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TP.FLOAT, [1, 3, 8, 8])], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                helper.make_opsetid("test.debug", 1)])
        model = os.path.join(d, "folded-crash.onnx")
        onnx.save(m, model)
        od = run.fresh_dir(os.path.join(ctx.out, "debug", "compile-time-crash"))
        rc, _, err = run.run_graphcc(ctx, ["run", model, "--ops", pure, "--input", "x=" + x,
                                           "--output-dir", od])
        ok = rc == 3 and "package code crashed" in err and "buggy_null_write" in err and \
            "folded_bug" in err and not os.listdir(od)
        return run.Result(ok, (err.strip().splitlines() or ["(no message)"])[0][:150], err)
    add("crash/while-compiling", compile_time_crash)

    # the same through a compiled program (.gcb): no --ops at run time
    def via_gcb(name, bug, extra, must):
        def fn():
            bad = need_package(ctx)
            if bad:
                return bad
            cwd, out, box = boxes(ctx, name + "-compile")
            gcb = os.path.join(box, "model.gcb")
            rc, _, err, _ = graphcc(ctx, ["compile", buggy_model(d, bug), "--ops",
                                          package(ctx), "-o", gcb], cwd)
            if rc != 0 or not os.path.exists(gcb):
                return run.Result(False, "compile -o: " + run.describe_rc(rc), err)
            cwd, out, _ = boxes(ctx, name)
            rc, _, err, _ = graphcc(ctx, ["run", gcb, "--input", "x=" + x, "--output-dir",
                                          out] + extra, cwd)
            if rc != 3:
                return run.Result(False, "%s, expected exit 3" % run.describe_rc(rc), err)
            miss = missing(err, must)
            if miss or listing(cwd, out):
                return run.Result(False, "lacks %r or wrote %s" % (miss, listing(cwd, out)),
                                  err)
            return run.Result(True)
        add(name, fn)
    via_gcb("gcb/crash", "nullWrite", [], crash_must("nullWrite", "buggy_null_write"))
    via_gcb("gcb/guard", "writePastEnd", ["--guard"],
            ["node 'culprit'", "flavour 'writePastEnd'", "past the end of output 'u'",
             "byte offsets %d..%d" % (NBYTES, NBYTES + 11)])
    via_gcb("gcb/check-nan", "nanAt", ["--check-nan", "--trace"],
            ["node 'culprit'", "NaN at flat index 5", "trace #0 'pre'"])

    # --guard
    lib_impl = "libbuggy_impl.so"
    caught("guard/write-past-end", "writePastEnd", ["--guard"],
           ["--guard", "node 'culprit'", "flavour 'writePastEnd'", lib_impl,
            "buggy_write_past_end", "past the end of output 'u'",
            "byte offsets %d..%d" % (NBYTES, NBYTES + 11)])
    caught("guard/write-before-start", "writeBeforeStart", ["--guard"],
           ["node 'culprit'", "flavour 'writeBeforeStart'", lib_impl,
            "before the start of output 'u'", "byte offsets -8..-1"])
    caught("guard/write-into-input", "writeIntoInput", ["--guard"],
           ["node 'culprit'", "flavour 'writeIntoInput'", lib_impl,
            "into its input 't'", "byte offsets 4..7", "flat index 1"])

    def guard_clean_fixture():
        bad = need_package(ctx)
        if bad:
            return bad
        r, out, err = run_ok(ctx, "guard/clean-fixture",
                             ["run", clean_model(d), "--ops", package(ctx), "--input",
                              "x=" + x, "--guard"])
        if r:
            return r
        why = run.compare(os.path.join(out, "y.npy"), np.load(x) * np.float32(3) *
                          np.float32(2), 0, 0)
        return run.Result(not why, why or "", err)
    add("guard/clean-fixture", guard_clean_fixture)

    def guard_clean_demo():
        m, ops = demo(ctx)
        r = plain_vs_debug(ctx, "guard/clean-demo", m, demo_input(ctx), ["--ops", ops],
                           ["--guard"])
        return r or run.Result(True)
    add("guard/clean-demo", guard_clean_demo)

    # --check-nan
    caught("check-nan/origin", "nanAt", ["--check-nan"],
           ["--check-nan", "node 'culprit'", "flavour 'nanAt'", lib_impl, "buggy_nan_at",
            "output 'u'", "NaN at flat index 5", "[0, 0, 0, 5]"])

    def nan_not_blamed(tag, model, xin, note):
        bad = need_package(ctx)
        if bad:
            return bad
        r, out, err = run_ok(ctx, tag, ["run", model, "--ops", package(ctx), "--input",
                                        "x=" + xin, "--check-nan"])
        if r:
            return r
        if note and note not in err:
            return run.Result(False, "no note naming %r" % note, err)
        if not os.path.exists(os.path.join(out, "y.npy")):
            return run.Result(False, "y.npy not written", err)
        return run.Result(True)
    m_far = buggy_model(d, "nanAt", index=100000)
    add("check-nan/index-not-reached",
        lambda: nan_not_blamed("check-nan/index-not-reached", m_far, x, None))
    m_clean = clean_model(d)
    add("check-nan/nan-from-graph-input",
        lambda: nan_not_blamed("check-nan/nan-from-graph-input", m_clean, x_nan,
                               "graph input 'x' already holds NaN"))

    def nan_constant_model():
        from onnx import helper, numpy_helper
        c = np.ones(SHAPE, np.float32)
        c.flat[3] = np.inf
        m = _model([helper.make_node("Add", ["x", "c"], ["y"], name="add_inf")])
        m.graph.initializer.append(numpy_helper.from_array(c, "c"))
        return _save(m, os.path.join(d, "nan_constant.onnx"))
    m_const = nan_constant_model()
    add("check-nan/inf-from-constant",
        lambda: nan_not_blamed("check-nan/inf-from-constant", m_const, x, None))

    # --timeout
    caught("timeout/spin", "spinForever", ["--timeout", "2"],
           ["--timeout", "node 'culprit'", "flavour 'spinForever'", lib_impl, "buggy_spin",
            re.compile(r"has run for [0-9.]+ s"), "limit of 2 s"], timeout=30, max_secs=15)

    def timeout_not_reached():
        bad = need_package(ctx)
        if bad:
            return bad
        r, out, err = run_ok(ctx, "timeout/not-reached",
                             ["run", clean_model(d), "--ops", package(ctx), "--input",
                              "x=" + x, "--timeout", "30"])
        return r or run.Result(os.path.exists(os.path.join(out, "y.npy")), "", err)
    add("timeout/not-reached", timeout_not_reached)

    # --trace
    def trace_fixture():
        bad = need_package(ctx)
        if bad:
            return bad
        r, out, err = run_ok(ctx, "trace/fixture",
                             ["run", buggy_model(d, "nanAt"), "--ops", package(ctx),
                              "--input", "x=" + x, "--trace"])
        if r:
            return r
        lines = [ln for ln in err.splitlines() if ln.startswith("trace #")]
        if len(lines) != 3:
            return run.Result(False, "%d trace lines, expected 3" % len(lines), err)
        want = [["'pre'", "test.debug::Scale", "flavour scaleF32", lib_impl, "in: x float32 "
                 "1x3x8x8", "out: t float32 1x3x8x8", "min 0 max 57.3", "nan 0 inf 0"],
                ["'culprit'", "test.debug::Buggy", "flavour nanAt", "out: u float32 1x3x8x8",
                 "nan 1 inf 0"],
                ["'post'", "nan 1 inf 0", re.compile(r"\d+\.\d us")]]
        for ln, w in zip(lines, want):
            miss = missing(ln, w)
            if miss:
                return run.Result(False, "trace line lacks %r: %s" % (miss, ln), err)
        return run.Result(True)
    add("trace/fixture", trace_fixture)

    def trace_real():
        label, model, xin, ops, expected = real_model(ctx)
        cwd, out, _ = boxes(ctx, "trace/real")
        n = node_count(ctx, model, ops, cwd)
        rc, _, err, secs = graphcc(ctx, ["run", model] + ops + ["--input", "x=" + xin
                                   if not expected else "input=" + xin, "--trace",
                                   "--output-dir", out], cwd)
        if rc != 0:
            return run.Result(False, "%s: %s" % (label, run.describe_rc(rc)), err)
        lines = [ln for ln in err.splitlines() if ln.startswith("trace #")]
        if n is None or len(lines) != n:
            return run.Result(False, "%s: %d trace lines, `graphcc info` says %s nodes"
                              % (label, len(lines), n), err)
        stat = re.compile(r"min -?[0-9.e+-]+ max -?[0-9.e+-]+ mean -?[0-9.e+-]+ nan 0 inf 0")
        for i, ln in enumerate(lines):
            if not ln.startswith("trace #%d '" % i) or not stat.search(ln) or \
               not re.search(r" \d+\.\d us \| in: .* float32 \d+(x\d+)* .*\| out: ", ln):
                return run.Result(False, "%s: malformed trace line: %s" % (label, ln), err)
        if expected:
            if not any("Conv" in ln and "1x64x112x112" in ln for ln in lines):
                return run.Result(False, "no Conv line with shape 1x64x112x112", err)
            got, want = np.load(os.path.join(out, "output.npy")), np.load(expected)
            if not np.abs(got - want).max() <= run.TORCH_REL * np.abs(want).max():
                return run.Result(False, "output differs from torch's under --trace", err)
        elif not any("flavour" in ln and "libdemo_kernels.so" in ln for ln in lines):
            return run.Result(False, "no custom node line with flavour and library", err)
        return run.Result(True, "%s: %d lines, %.2fs" % (label, len(lines), secs))
    add("trace/real-model", trace_real)

    # --dump-dir
    def read_map(dump):
        with open(os.path.join(dump, "tensors.tsv")) as f:
            rows = [ln.rstrip("\n").split("\t") for ln in f]
        return rows[0], {r[0]: r for r in rows[1:]}

    def dump_fixture():
        bad = need_package(ctx)
        if bad:
            return bad
        cwd, out, box = boxes(ctx, "dump/fixture")
        dump = os.path.join(box, "dump")
        rc, _, err, _ = graphcc(ctx, ["run", buggy_model(d, "nanAt"), "--ops", package(ctx),
                                      "--input", "x=" + x, "--dump-dir", dump,
                                      "--output-dir", out], cwd)
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        head, rows = read_map(dump)
        if sorted(rows) != ["t", "u", "x", "y"]:
            return run.Result(False, "map lists %s, expected x, t, u, y" % sorted(rows), err)
        if sorted(listing(dump)) != ["t.npy", "tensors.tsv", "u.npy", "x.npy", "y.npy"]:
            return run.Result(False, "dump folder holds %s" % listing(dump), err)
        xs = np.load(x)
        t = np.load(os.path.join(dump, "t.npy"))
        if not np.array_equal(t, xs * np.float32(3)):
            return run.Result(False, "dumped t is not 3 * x", err)
        u = np.load(os.path.join(dump, "u.npy"))
        want_u = t.copy()
        want_u.flat[5] = np.nan
        if not np.array_equal(u, want_u, equal_nan=True):
            return run.Result(False, "dumped u is not t with NaN at 5", err)
        if rows["u"][4] != "culprit" or rows["x"][4] != "(graph input)":
            return run.Result(False, "map rows: %s" % rows, err)
        return run.Result(True)
    add("dump/fixture", dump_fixture)

    def dump_collisions():
        bad = need_package(ctx)
        if bad:
            return bad
        cwd, out, box = boxes(ctx, "dump/name-collisions")
        dump = os.path.join(box, "dump")
        rc, _, err, _ = graphcc(ctx, ["run", colliding_model(d), "--ops", package(ctx),
                                      "--input", "x=" + x, "--dump-dir", dump,
                                      "--output-dir", out], cwd)
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        _, rows = read_map(dump)
        files = [rows[n][1] for n in ("a/b", "a_b", "a:b")]
        if len(set(files)) != 3 or any("/" in f or ":" in f for f in files):
            return run.Result(False, "file names %s not unique and file-safe" % files, err)
        xs = np.load(x)
        for k, n in enumerate(("a/b", "a_b", "a:b")):
            got = np.load(os.path.join(dump, rows[n][1]))
            want = xs
            for _ in range(k + 1):
                want = want * np.float32(2)
            if not np.array_equal(got, want):
                return run.Result(False, "%s (%s) holds the wrong values" % (n, rows[n][1]),
                                  err)
        return run.Result(True, " ".join(files))
    add("dump/name-collisions", dump_collisions)

    def dump_real():
        import onnx
        label, model, xin, ops, expected = real_model(ctx)
        cwd, out, box = boxes(ctx, "dump/real")
        dump = os.path.join(box, "dump")
        name = "input" if expected else "x"
        rc, _, err, _ = graphcc(ctx, ["run", model] + ops + ["--input", name + "=" + xin,
                                      "--dump-dir", dump, "--output-dir", out], cwd)
        if rc != 0:
            return run.Result(False, "%s: %s" % (label, run.describe_rc(rc)), err)
        _, rows = read_map(dump)
        n = node_count(ctx, model, ops, cwd)
        npys = [f for f in listing(dump) if f.endswith(".npy")]
        if n is None or len(rows) < n + 1 or len(npys) != len(rows):
            return run.Result(False, "%s: %d map rows, %d files, %s nodes"
                              % (label, len(rows), len(npys), n), err)
        for r in rows.values():
            a = np.load(os.path.join(dump, r[1]))
            if str(a.dtype) != r[2] or "x".join(map(str, a.shape)) != r[3]:
                return run.Result(False, "%s: %s is %s %s, map says %s %s"
                                  % (label, r[1], a.dtype, a.shape, r[2], r[3]), err)
        g = onnx.load(model, load_external_data=False).graph
        checked = 0
        for nd in g.node:
            if not all(t in rows for t in list(nd.input) + list(nd.output)):
                continue
            ins = [np.load(os.path.join(dump, rows[t][1])) for t in nd.input]
            got = np.load(os.path.join(dump, rows[nd.output[0]][1]))
            if nd.op_type == "Relu":
                want = np.maximum(ins[0], np.float32(0))
            elif nd.op_type == "Add":
                want = ins[0] + ins[1]
            elif nd.op_type == "Flatten":  # (ResNet's Adds and Relus fuse into its Convs)
                ax = next((a.i for a in nd.attribute if a.name == "axis"), 1)
                want = ins[0].reshape(int(np.prod(ins[0].shape[:ax])), -1)
            else:
                continue
            if not np.array_equal(got, want):
                return run.Result(False, "%s: dumped output of %s '%s' is not NumPy's %s "
                                  "of its dumped inputs" % (label, nd.op_type, nd.name,
                                                            nd.op_type), err)
            checked += 1
        if not checked:
            return run.Result(False, "%s: no Relu/Add/Flatten node to recompute" % label, err)
        return run.Result(True, "%s: %d tensors, %d Relu/Add/Flatten recomputed"
                          % (label, len(rows), checked))
    add("dump/real-model", dump_real)

    # --profile
    def profile(tag, model, xin, ops, custom):
        cwd, out, box = boxes(ctx, tag)
        path = os.path.join(box, "profile.json")
        n = node_count(ctx, model, ops, cwd)
        rc, _, err, _ = graphcc(ctx, ["run", model] + ops + ["--input", xin, "--profile",
                                      path, "--output-dir", out], cwd)
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        with open(path) as f:
            doc = json.load(f)
        ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
        if n is None or len(ev) != n:
            return run.Result(False, "%d X events, %s nodes" % (len(ev), n), err)
        for e in ev:
            if not (isinstance(e.get("name"), str) and e.get("cat") and
                    isinstance(e.get("ts"), (int, float)) and
                    isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0 and
                    "inputs" in e.get("args", {}) and "outputs" in e["args"]):
                return run.Result(False, "malformed event %s" % e, err)
        if any(ev[i + 1]["ts"] < ev[i]["ts"] + ev[i]["dur"] - 1e-3 for i in range(len(ev) - 1)):
            return run.Result(False, "events overlap or go back in time", err)
        cus = [e for e in ev if "::" in e["cat"]]
        if custom and (not cus or not all("flavour" in e["args"] and "library" in e["args"]
                                          for e in cus)):
            return run.Result(False, "custom node events lack flavour/library args", err)
        top = max({e["cat"] for e in ev}, key=lambda c: sum(e["dur"] for e in ev
                                                             if e["cat"] == c))
        table = re.search(r"op type\s+count\s+total ms\s+share\n((?:  .*\n?)+)", err)
        if not table:
            return run.Result(False, "no summary table on stderr", err)
        first = table.group(1).splitlines()[0].split()
        if first[0] != top or not first[-1].endswith("%"):
            return run.Result(False, "summary's first row %s, expected %s with a share"
                              % (first, top), err)
        return run.Result(True, "%d events, top %s" % (len(ev), top))

    def profile_real():
        label, model, xin, ops, expected = real_model(ctx)
        r = profile("profile/real-model", model, ("input=" if expected else "x=") + xin, ops,
                    not expected)
        if r.ok:
            r.detail = label + ": " + r.detail
        return r
    add("profile/real-model", profile_real)

    def profile_demo():
        m, ops = demo(ctx)
        return profile("profile/demo", m, "x=" + demo_input(ctx), ["--ops", ops], True)
    add("profile/demo", profile_demo)

    # --profile at 2 threads: each node's jobs on the worker pool (args.pool)
    def profile_pool():
        from onnx import helper, numpy_helper, TensorProto as TP
        rng = np.random.default_rng(11)
        w = numpy_helper.from_array(rng.standard_normal((64, 32, 3, 3)).astype(np.float32), "w")
        g = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")], "pool",
            [helper.make_tensor_value_info("x", TP.FLOAT, [1, 32, 56, 56])],
            [helper.make_tensor_value_info("y", TP.FLOAT, [1, 64, 56, 56])], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        model = _save(m, os.path.join(d, "pool_conv.onnx"))
        xin = os.path.join(d, "pool_x.npy")
        np.save(xin, rng.standard_normal((1, 32, 56, 56)).astype(np.float32))
        got = {}
        for t in (1, 2):
            cwd, out, box = boxes(ctx, "profile/pool-t%d" % t)
            path = os.path.join(box, "profile.json")
            rc, _, err, _ = graphcc(ctx, ["run", model, "--input", "x=" + xin, "--threads",
                                          str(t), "--profile", path, "--output-dir", out], cwd)
            if rc != 0:
                return run.Result(False, "%d threads: %s" % (t, run.describe_rc(rc)), err)
            with open(path) as f:
                ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
            got[t] = {e["name"]: e for e in ev}
        if any("pool" in e["args"] and e["args"]["pool"]["jobs"] for e in got[1].values()):
            return run.Result(False, "1 thread: a node reports pool jobs: %s" % got[1])
        c = got[2].get("conv")
        p = c and c["args"].get("pool")
        if not p or p["jobs"] < 1:
            return run.Result(False, "2 threads: the Conv reports no pool jobs: %s" % c)
        # a job's time is inside the node's; the threads' busy and idle time
        # make up wall x 2 (0.1 us rounding each)
        if not (0 < p["wall"] <= c["dur"] + 1 and 0 < p["busy"] and p["idle"] >= -1 and
                abs(p["busy"] + p["idle"] - 2 * p["wall"]) <= 1 and
                0 <= p["tail"] <= p["wall"] + 1 and 0 <= p["late"]):
            return run.Result(False, "2 threads: inconsistent pool times %s (node %.1f us)"
                              % (p, c["dur"]))
        return run.Result(True, "conv: %d jobs, %.0f us wall, %.0f us idle of 2 threads"
                          % (p["jobs"], p["wall"], p["idle"]))
    add("profile/pool", profile_pool)

    # --break-before
    def break_no_debugger():
        bad = need_package(ctx)
        if bad:
            return bad
        r, out, err = run_ok(ctx, "break-before/no-debugger",
                             ["run", clean_model(d), "--ops", package(ctx), "--input",
                              "x=" + x, "--break-before", "post"])
        if r:
            return r
        miss = missing(err, ["no debugger attached", "node 'post'", "gdb --args"])
        if miss:
            return run.Result(False, "message lacks %r" % miss, err)
        return run.Result(os.path.exists(os.path.join(out, "y.npy")), "", err)
    add("break-before/no-debugger", break_no_debugger)

    def break_unknown():
        bad = need_package(ctx)
        if bad:
            return bad
        cwd, out, _ = boxes(ctx, "break-before/unknown-node")
        rc, _, err, _ = graphcc(ctx, ["run", clean_model(d), "--ops", package(ctx), "--input",
                                      "x=" + x, "--break-before", "no_such_node",
                                      "--output-dir", out], cwd)
        if rc != 1:
            return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), err)
        miss = missing(err, ["'no_such_node' does not exist", "'pre'"])
        if miss or listing(cwd, out):
            return run.Result(False, "message lacks %r or output written" % miss, err)
        return run.Result(True)
    add("break-before/unknown-node", break_unknown)

    def break_gdb():
        bad = need_package(ctx)
        if bad:
            return bad
        gdb = shutil.which("gdb")
        if not gdb:
            return run.Result(False, "gdb is not installed: this case needs it (it is part "
                              "of the base image)")
        cwd, out, _ = boxes(ctx, "break-before/gdb")
        model = buggy_model(d, "nanAt")
        args = ["run", model, "--ops", package(ctx), "--input", "x=" + x,
                "--break-before", "culprit", "--output-dir", out]
        rc, so, se, _ = graphcc(ctx, args, cwd, prefix=[
            gdb, "-nx", "-batch", "-ex", "run", "-ex", "bt", "-ex", "break buggy_nan_at",
            "-ex", "continue", "-ex", "bt 2", "-ex", "kill", "--args"])
        text = so + se
        if rc is None:
            return run.Result(False, "gdb timed out", text)
        miss = missing(text, ["stopping before node 'culprit'", "SIGTRAP",
                              "gc_debug_break_before", "break buggy_nan_at",
                              re.compile(r"#0 +buggy_nan_at \("),
                              re.compile(r"#1 .* gc_custom_call_kernel ")])
        if miss:
            return run.Result(False, "gdb session lacks %r" % miss, text)
        # The trap came before the kernel: the stop is listed before the
        # breakpoint hit, and nothing was written.
        if text.index("SIGTRAP") > text.index("Breakpoint 1, buggy_nan_at"):
            return run.Result(False, "the kernel ran before the SIGTRAP", text)
        if listing(out):
            return run.Result(False, "outputs written from a killed run", text)
        return run.Result(True)
    add("break-before/gdb", break_gdb)

    return cs
