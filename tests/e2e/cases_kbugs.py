"""Classic kernel bugs, caught and blamed on the right node (issue 17, items
1, 2, 5, 8): poisoned scratch, checked tensors and dumps that save inputs
as their consumer saw them, test-package's input restore, --no-arena with
an ASan-built package and valgrind.

The culprits are the planted bugs of the test.kbugs fixture package
(tests/kbugs/, built by `make test-packages` into BUILD/tests/kbugs/kbugs/,
and with gcc's ASan into BUILD/tests/kbugs/kbugs-asan/); each op's string
param `flavour` picks the bug:

  Accum  accumNoZero   reads scratch it never zeroed (graphcc interface)
  Clamp  clampInPlace / seedClampInPlace   writes into its input
  Copy   overrunOne / seedOverrunOne       writes one float past y's end

Cases (all named kbugs/...):
  scratch/...     --guard, --compare-flavours and test-package say the
                  kernel reads scratch it did not write (each failed before:
                  exit 0, "max abs 0", PASS)
  test-package/...  after a write into the input, every later check runs on
                  the input as loaded (before: the runtime line PASSed on a
                  clamped input)
"""
import os
import re
import subprocess

import numpy as np

import run
from cases_debug import graphcc, boxes, missing

DOMAIN = "test.kbugs"


def package(ctx, asan=False):
    name = "kbugs-asan" if asan else "kbugs"
    return os.path.join(ctx.build, "tests", "kbugs", name, "kbugs.yaml")


def need_package(ctx):
    if not os.path.exists(package(ctx)):
        return run.Result(False, "fixture package %s is not built (make test-packages)"
                          % package(ctx))
    return None


def _save(m, path):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(m.SerializeToString())
    os.replace(tmp, path)
    return path


def model(path, nodes, ins, outs, shape):
    from onnx import helper, TensorProto
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(shape))  # noqa
    g = helper.make_graph(nodes, "kbugs", [vi(n) for n in ins], [vi(n) for n in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(DOMAIN, 1)],
                          producer_name="graphcc-e2e-kbugs")
    m.ir_version = 8
    return _save(m, path)


def knode(op, ins, outs, name, flavour):
    from onnx import helper
    return helper.make_node(op, ins, outs, name=name, domain=DOMAIN, flavour=flavour)


def check(rc, out, err, want_rc, must, must_not=()):
    text = out + err
    if rc != want_rc:
        return run.Result(False, "exit %s, expected %d" % (rc, want_rc), err)
    m = missing(text, must)
    if m:
        return run.Result(False, "output lacks %r" % m, err)
    for s in must_not:
        if (s.search(text) if hasattr(s, "search") else s in text):
            return run.Result(False, "output has %r" % getattr(s, "pattern", s), err)
    return run.Result(True)


# ---------------------------------------------------------------- item 1

SCRATCH_MUST = ["reads scratch it did not write", "accum_no_zero", "uninitialised"]


def scratch_guard(ctx, d):
    """--guard: the kernel that never zeroes its accumulator is named, with
    node, op, flavour and symbol (before: exit 0 and right numbers)."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, out, _ = boxes(ctx, "kbugs/scratch-guard")
    m = model(os.path.join(d, "accum.onnx"),
              [knode("Accum", ["x"], ["t"], "first", "accumZeroed"),
               knode("Accum", ["t"], ["y"], "second", "accumNoZero")], ["x"], ["y"], (2, 3))
    rc, o, e, _ = graphcc(ctx, ["run", m, "--ops", package(ctx), "--input",
                                "x=" + os.path.join(d, "x23.npy"), "--guard",
                                "--output-dir", out], cwd)
    r = check(rc, o, e, 3, SCRATCH_MUST + ["node 'second'", "test.kbugs::Accum",
                                           "flavour 'accumNoZero'", "0xFF", "0x5A"],
              ["node 'first'"])
    if r.ok and os.listdir(out):
        return run.Result(False, "output written after the guard stopped the run", e)
    if not r.ok:
        return r
    # the correct twin alone: clean, and the outputs are right
    m2 = model(os.path.join(d, "accum-ok.onnx"),
               [knode("Accum", ["x"], ["y"], "only", "accumZeroed")], ["x"], ["y"], (2, 3))
    rc, o, e, _ = graphcc(ctx, ["run", m2, "--ops", package(ctx), "--input",
                                "x=" + os.path.join(d, "x23.npy"), "--guard",
                                "--output-dir", out], cwd)
    if rc != 0:
        return run.Result(False, "the zeroing flavour failed under --guard: exit %s" % rc, e)
    y = np.load(os.path.join(out, "y.npy"))
    want = np.load(os.path.join(d, "x23.npy"))
    if not np.array_equal(y, want):
        return run.Result(False, "y = %s, expected x = %s" % (y, want))
    return run.Result(True)


def scratch_compare(ctx, d):
    """--compare-flavours: the reading flavour FAILS naming the scratch read
    (before: 'max abs 0', exit 0)."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, _, _ = boxes(ctx, "kbugs/scratch-compare")
    m = model(os.path.join(d, "accum1.onnx"),
              [knode("Accum", ["x"], ["y"], "acc", "accumZeroed")], ["x"], ["y"], (2, 3))
    rc, o, e, _ = graphcc(ctx, ["run", m, "--ops", package(ctx), "--input",
                                "x=" + os.path.join(d, "x23.npy"), "--compare-flavours"], cwd)
    return check(rc, o, e, 1, SCRATCH_MUST + ["flavour 'accumNoZero'", "node 'acc'"],
                 [re.compile(r"accumZeroed.*accumNoZero: max abs 0\b")])


def scratch_test_package(ctx, d):
    """test-package: the reading flavour FAILs its scratch line, the zeroing
    one PASSes it (before: every line PASSed)."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, _, _ = boxes(ctx, "kbugs/scratch-test-package")
    rc, o, e, _ = graphcc(ctx, ["test-package", package(ctx), "--op", "Accum"], cwd)
    r = check(rc, o, e, 1, [re.compile(r"FAIL .*accumNoZero: kernel 'accum_no_zero' reads "
                                       r"scratch it did not write"),
                            re.compile(r"PASS .*accumZeroed: its outputs do not depend on what "
                                       r"its scratch held")],
              [re.compile(r"PASS .*accumNoZero: output 0 \('y'\) matches")])
    return r


# ---------------------------------------------------------------- item 5

def input_restored(ctx, d):
    """test-package, after 'wrote into its input': the seed flavour's checks
    and the runtime line run on the input as loaded, so each of them FAILs
    (before: the seed flavour 'leaves its inputs alone' and the runtime line
    PASSed on a clamped input)."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, _, _ = boxes(ctx, "kbugs/test-package-input")
    rc, o, e, _ = graphcc(ctx, ["test-package", package(ctx), "--op", "Clamp"], cwd)
    return check(rc, o, e, 1, [
        re.compile(r"FAIL .*clampInPlace: kernel 'clamp_in_place' wrote into its input 0"),
        re.compile(r"FAIL .*seedClampInPlace: kernel 'seed_clamp_in_place' wrote into its "
                   r"input 0"),
        re.compile(r"FAIL .*through the runtime with --guard \(flavour 'clampInPlace'\): "
                   r"--guard: .*wrote into its input 'x'")],
        [re.compile(r"PASS .*leaves its inputs alone"),
         re.compile(r"PASS .*through the runtime")])


def cases(ctx):
    d = run.fresh_dir(os.path.join(ctx.fix, "kbugs"))
    np.save(os.path.join(d, "x23.npy"), np.array([[1, -2, 3], [-4, 5, -6]], np.float32))
    cs = []

    def add(name, fn):
        cs.append(("kbugs/" + name, lambda: fn(ctx, d)))

    add("scratch/guard", scratch_guard)
    add("scratch/compare-flavours", scratch_compare)
    add("scratch/test-package", scratch_test_package)
    add("test-package/input-restored", input_restored)
    return cs
