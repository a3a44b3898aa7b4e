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
  check-tensors/... an overrun into a live neighbour (graphcc and seed
                  interfaces) and a write into an input are blamed on the
                  node that wrote, not on the Add that reads next; a clean
                  real model passes with the plain run's outputs
  dump/seen-by-consumer  --dump-dir saves the corrupted input as the Add saw
                  it, beside the correct dump made when it was produced
  compare/...     tools/compare_intermediates.py against PyTorch forward
                  hooks: a clean export agrees everywhere; a planted change of
                  one bias is found at the first tensor it touches and
                  blamed on the node that produced it; --output-dir and
                  --dump-dir give a tensor the same file name
  no-arena/...    an ASan-built package in a graphcc without ASan is refused
                  with what to do (before: ASan's own line, exit 1, nothing
                  from graphcc); with the ASan runtime, --no-arena lets ASan
                  see the overrun the arena hides; --no-arena changes no
                  output (make valgrind adds the valgrind side)

The overrun model (the memory plan puts the small tensor 'a' right after
'b', so one float past b's end lands in a):

    x[1,32] -> ReduceSum 'sum' -> a[1,1] ---------------------.
    x -> Neg 'neg' -> c -> test.kbugs::Copy 'culprit' -> b -> Add 'add' -> y
"""
import os
import re
import subprocess
import sys

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


# ---------------------------------------------------------------- item 2

def overrun_model(d, flavour):
    from onnx import helper
    nodes = [helper.make_node("ReduceSum", ["x"], ["a"], name="sum", keepdims=1),
             helper.make_node("Neg", ["x"], ["c"], name="neg"),
             knode("Copy", ["c"], ["b"], "culprit", flavour),
             helper.make_node("Add", ["b", "a"], ["y"], name="add")]
    return model(os.path.join(d, "overrun_%s.onnx" % flavour), nodes, ["x"], ["y"], (1, 32))


def x32(d):
    return os.path.join(d, "x32.npy")


def check_tensors_overrun(ctx, d, flavour, symbol, lib):
    """--check-tensors names the overrunning node, the tensor it hit, that
    tensor's producer and next reader (before: unknown option; and a plain
    run silently gives a wrong y)."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, out, _ = boxes(ctx, "kbugs/check-tensors-" + flavour)
    m = overrun_model(d, flavour)
    rc, o, e, _ = graphcc(ctx, ["run", m, "--ops", package(ctx), "--input", "x=" + x32(d),
                                "--output-dir", out], cwd)
    if rc != 0:
        return run.Result(False, "plain run: exit %s" % rc, e)
    x = np.load(x32(d))
    want = -x + x.sum(axis=1, keepdims=True)
    if np.allclose(np.load(os.path.join(out, "y.npy")), want):
        return run.Result(False, "the overrun did not land in 'a' (memory plan changed?): "
                          "the case would prove nothing")
    cwd, out, _ = boxes(ctx, "kbugs/check-tensors-" + flavour + "-2")
    rc, o, e, _ = graphcc(ctx, ["run", m, "--ops", package(ctx), "--input", "x=" + x32(d),
                                "--check-tensors", "--output-dir", out], cwd)
    r = check(rc, o, e, 3, ["--check-tensors: node 'culprit' (test.kbugs::Copy)",
                            "flavour '%s'" % flavour, "symbol " + symbol, lib,
                            "changed tensor 'a' (float32 1x1)", "node 'sum' (ReduceSum)",
                            "read next by 'add' (Add)"],
              [re.compile(r"--check-tensors: node 'add'")])
    if r.ok and os.listdir(out):
        return run.Result(False, "outputs written after --check-tensors stopped the run", e)
    return r


def check_tensors_input_write(ctx, d):
    """A write into an input that another node reads later: named, with
    'wrote into its input' (the guard is not needed)."""
    bad = need_package(ctx)
    if bad:
        return bad
    from onnx import helper
    cwd, _, _ = boxes(ctx, "kbugs/check-tensors-input")
    m = model(os.path.join(d, "clamp.onnx"),
              [helper.make_node("Neg", ["x"], ["c"], name="neg"),
               knode("Clamp", ["c"], ["b"], "clamper", "seedClampInPlace"),
               helper.make_node("Add", ["c", "b"], ["y"], name="add")], ["x"], ["y"], (1, 32))
    rc, o, e, _ = graphcc(ctx, ["run", m, "--ops", package(ctx), "--input", "x=" + x32(d),
                                "--check-tensors"], cwd)
    return check(rc, o, e, 3, ["node 'clamper'", "flavour 'seedClampInPlace'",
                               "symbol seed_clamp_in_place", "changed tensor 'c'",
                               "it wrote into its input", "node 'neg' (Neg)", "'add' (Add)"])


def check_tensors_clean(ctx, d):
    """No false alarm on a real model: exit 0 and the plain run's outputs,
    with --check-tensors and with --guard (which turns it on)."""
    from cases_debug import real_model
    label, m, x, ops, _ = real_model(ctx)
    outs = []
    for extra in ([], ["--check-tensors"], ["--guard"]):
        cwd, out, _ = boxes(ctx, "kbugs/check-tensors-clean%d" % len(outs))
        rc, o, e, secs = graphcc(ctx, ["run", m] + ops + ["--input", x, "--output-dir", out]
                                 + extra, cwd, timeout=300)
        if rc != 0:
            return run.Result(False, "%s %s: exit %s" % (label, " ".join(extra), rc), e)
        outs.append(({f: np.load(os.path.join(out, f)) for f in os.listdir(out)
                      if f.endswith(".npy")}, secs))
    for got, _ in outs[1:]:
        if sorted(got) != sorted(outs[0][0]) or any(
                not np.array_equal(got[f], outs[0][0][f]) for f in got):
            return run.Result(False, "%s: outputs differ from the plain run's" % label)
    return run.Result(True, "%s: plain %.2fs, --check-tensors %.2fs, --guard %.2fs"
                      % (label, outs[0][1], outs[1][1], outs[2][1]))


def dump_seen(ctx, d):
    """--dump-dir: 'a' as produced (= NumPy's sum) and as 'add' saw it
    (corrupted), the map says which is which, stderr says why (before: only
    the correct a.npy, so the Add looked guilty)."""
    bad = need_package(ctx)
    if bad:
        return bad
    cwd, out, box = boxes(ctx, "kbugs/dump-seen")
    dump = os.path.join(box, "dump")
    rc, o, e, _ = graphcc(ctx, ["run", overrun_model(d, "overrunOne"), "--ops", package(ctx),
                                "--input", "x=" + x32(d), "--dump-dir", dump], cwd)
    if rc != 0:
        return run.Result(False, "exit %s" % rc, e)
    x = np.load(x32(d))
    try:
        a = np.load(os.path.join(dump, "a.npy"))
        seen = np.load(os.path.join(dump, "a.seen-by-add.npy"))
    except OSError as ex:
        return run.Result(False, str(ex), e)
    if not np.allclose(a, x.sum(axis=1, keepdims=True), rtol=1e-6):
        return run.Result(False, "a.npy %s is not sum(x) %s" % (a, x.sum()))
    if np.allclose(seen, a):
        return run.Result(False, "a.seen-by-add.npy equals a.npy: the corruption is not shown")
    rows = [ln.rstrip("\n").split("\t") for ln in open(os.path.join(dump, "tensors.tsv"))]
    head = rows[0]
    if head[:6] != ["tensor", "file", "dtype", "shape", "produced by", "note"] \
            or ["a", "a.seen-by-add.npy", "sum"] != [rows[-2][k] for k in (0, 1, 4)] or \
            "as node 'add' read it" not in rows[-2][5]:
        return run.Result(False, "tensors.tsv lacks the seen-by line: %r" % rows)
    return check(rc, o, e, 0, ["tensor 'a' changed after node 'sum' produced it, before node "
                               "'add' read it", "--check-tensors"])


# ---------------------------------------------------------------- item 8

def built_with(ctx, what):
    """Whether the graphcc binary links a sanitizer runtime (SAN=1: 'libasan',
    SAN=thread: 'libtsan'), as ldd lists it."""
    p = subprocess.run(["ldd", ctx.graphcc], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    return what + ".so" in p.stdout


def asan_env(ctx):
    """The environment to run graphcc with an ASan package: the ASan runtime
    preloaded unless graphcc has it built in; None under TSan (the two
    runtimes cannot share a process)."""
    env = dict(run.ENV)
    env["ASAN_OPTIONS"] = "detect_leaks=0:exitcode=%d" % run.SANITIZER_RC
    if built_with(ctx, "libtsan"):
        return None
    if not built_with(ctx, "libasan"):
        lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.strip()
        env["LD_PRELOAD"] = lib
    return env


ASAN_REFUSED = ["libkbugs_fn.so is built with AddressSanitizer",
                "LD_PRELOAD=$(gcc -print-file-name=libasan.so) graphcc", "--no-arena",
                "make SAN=1"]


def asan_refused(ctx, d):
    """A graphcc without ASan and an ASan-built package: exit 1 and graphcc
    says what to do (an ASan graphcc, `make test SAN=1`, loads it)."""
    if not os.path.exists(package(ctx, asan=True)):
        return run.Result(False, "%s is not built" % package(ctx, asan=True))
    cwd, out, _ = boxes(ctx, "kbugs/no-arena-refused")
    rc, o, e, _ = graphcc(ctx, ["run", overrun_model(d, "copyExact"), "--ops",
                                package(ctx, asan=True), "--input", "x=" + x32(d),
                                "--output-dir", out], cwd)
    if built_with(ctx, "libasan"):
        return check(rc, o, e, 0, [], ["is built with AddressSanitizer"])
    return check(rc, o, e, 1, ASAN_REFUSED)


def asan_sees_overrun(ctx, d):
    """With the ASan runtime (preloaded, or built into graphcc), the arena
    hides the overrun from ASan (exit 0, wrong y) and --no-arena shows it:
    heap-buffer-overflow in overrun_one."""
    cwd, out, _ = boxes(ctx, "kbugs/no-arena-asan")
    env = asan_env(ctx)
    args = [ctx.graphcc, "run", overrun_model(d, "overrunOne"), "--ops",
            package(ctx, asan=True), "--input", "x=" + x32(d)]
    if env is None:  # ThreadSanitizer build: the refusal is what must happen
        rc, o, e, _ = graphcc(ctx, args[1:], cwd)
        return check(rc, o, e, 1, ASAN_REFUSED)
    runs = []
    for extra in ([], ["--no-arena"]):
        p = subprocess.run(args + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=cwd, env=env, timeout=run.TIMEOUT)
        runs.append((p.returncode, run._txt(p.stderr)))
    (rc0, e0), (rc1, e1) = runs
    if rc0 != 0 or "AddressSanitizer" in e0:
        return run.Result(False, "with the arena: exit %s (expected 0: ASan is blind "
                          "there)" % rc0, e0)
    if rc1 != run.SANITIZER_RC or not re.search(
            r"AddressSanitizer: heap-buffer-overflow.*\n(.*\n)*.*in overrun_one ", e1):
        return run.Result(False, "--no-arena: exit %s, no heap-buffer-overflow in "
                          "overrun_one" % rc1, e1)
    return run.Result(True)


def no_arena_same(ctx, d):
    """--no-arena (alone and with --guard) gives the arena run's outputs."""
    from cases_debug import real_model
    label, m, x, ops, _ = real_model(ctx)
    outs = []
    for extra in ([], ["--no-arena"], ["--no-arena", "--guard"]):
        cwd, out, _ = boxes(ctx, "kbugs/no-arena-same%d" % len(outs))
        rc, o, e, secs = graphcc(ctx, ["run", m] + ops + ["--input", x, "--output-dir", out]
                                 + extra, cwd, timeout=300)
        if rc != 0:
            return run.Result(False, "%s %s: exit %s" % (label, " ".join(extra), rc), e)
        outs.append({f: np.load(os.path.join(out, f)) for f in os.listdir(out)
                     if f.endswith(".npy")})
    for got in outs[1:]:
        if sorted(got) != sorted(outs[0]) or any(
                not np.array_equal(got[f], outs[0][f]) for f in got):
            return run.Result(False, "%s: outputs differ from the arena run's" % label)
    return run.Result(True, label)


# ---------------------------------------------------------------- item 9

def _compare_tool(ctx):
    import importlib.util
    path = os.path.join(ctx.root, "tools", "compare_intermediates.py")
    spec = importlib.util.spec_from_file_location("compare_intermediates", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def torch_hooks(ctx, d):
    """A PyTorch model exported to ONNX; reference intermediates written by
    real forward hooks (save_module_outputs); graphcc's --dump-dir compared
    with them by the tool: all agree, then with one bias changed in the
    ONNX file (blocks.1.fc.bias[3] += 0.5) the first difference is
    /blocks/blocks.1/fc/Gemm_output_0 from node /blocks/blocks.1/fc/Gemm,
    and nothing before it differs."""
    import torch
    import onnx
    from onnx import numpy_helper
    tool, ci = _compare_tool(ctx)
    torch.manual_seed(0)

    class Blk(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.act = torch.nn.Linear(8, 8), torch.nn.GELU()

        def forward(self, x):
            return self.act(self.fc(x)) + x

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inp, self.relu = torch.nn.Linear(4, 8), torch.nn.ReLU()
            self.blocks, self.out = torch.nn.Sequential(Blk(), Blk()), torch.nn.Linear(8, 3)

        def forward(self, x):
            return self.out(self.blocks(self.relu(self.inp(x))))

    net = Net().eval()
    x = torch.randn(2, 4)
    box = run.fresh_dir(os.path.join(ctx.out, "kbugs", "compare"))
    clean, planted = os.path.join(box, "net.onnx"), os.path.join(box, "net-planted.onnx")
    with run.TORCH_EXPORT:
        torch.onnx.export(net, (x,), clean, input_names=["x"], output_names=["y"],
                          opset_version=17)
    np.save(os.path.join(box, "x.npy"), x.numpy())
    ref = os.path.join(box, "ref")
    handles = ci.save_module_outputs(net, clean, ref)
    with torch.no_grad():
        net(x)
    for h in handles:
        h.remove()
    m = onnx.load(clean)
    for init in m.graph.initializer:
        if init.name == "blocks.1.fc.bias":
            b = numpy_helper.to_array(init).copy()
            b[3] += 0.5
            init.CopyFrom(numpy_helper.from_array(b, init.name))
    onnx.save(m, planted)
    res = []
    for model in (clean, planted):
        dump = os.path.join(box, "dump-" + os.path.basename(model))
        rc, o, e, _ = graphcc(ctx, ["run", model, "--input", "x=" + os.path.join(box, "x.npy"),
                                    "--dump-dir", dump], box)
        if rc != 0:
            return run.Result(False, "graphcc run %s: exit %s" % (model, rc), e)
        p = subprocess.run([sys.executable, tool, dump, ref], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        res.append((p.returncode, p.stdout + p.stderr))
    (rc0, o0), (rc1, o1) = res
    if rc0 != 0 or "all 8 compared tensors agree" not in o0:
        return run.Result(False, "clean export: exit %s" % rc0, o0)
    want = ("first difference: tensor '/blocks/blocks.1/fc/Gemm_output_0', produced by node "
            "'/blocks/blocks.1/fc/Gemm': 2 of 16 elements differ; worst at [")
    if rc1 != 1 or want not in o1 or o1.count("  ok ") != 4:
        return run.Result(False, "planted difference: exit %s, expected 1 naming the fc "
                          "Gemm of blocks.1 after 4 agreeing tensors" % rc1, o1)
    return run.Result(True)


def same_file_names(ctx, d):
    """An output whose name is not file-safe gets the same file name from
    --output-dir as from --dump-dir (before: '_out_Gemm:0.npy' and
    'out_Gemm_0.npy'), and it is the tool's safe_name."""
    from onnx import helper
    _, ci = _compare_tool(ctx)
    cwd, out, box = boxes(ctx, "kbugs/compare-names")
    name = "/out/Gemm:0"
    m = model(os.path.join(d, "names.onnx"),
              [helper.make_node("Relu", ["x"], [name], name="r")], ["x"], [name], (2, 3))
    dump = os.path.join(box, "dump")
    rc, o, e, _ = graphcc(ctx, ["run", m, "--input", "x=" + os.path.join(d, "x23.npy"),
                                "--dump-dir", dump, "--output-dir", out], cwd)
    if rc != 0:
        return run.Result(False, "exit %s" % rc, e)
    row = [r for r in ci.read_map(dump) if r["tensor"] == name]
    outs = [f for f in os.listdir(out) if f.endswith(".npy")]
    if not row or outs != [row[0]["file"]] or outs[0] != ci.safe_name(name) + ".npy":
        return run.Result(False, "--output-dir wrote %s, --dump-dir %s, safe_name %s"
                          % (outs, row and row[0]["file"], ci.safe_name(name)))
    return run.Result(True, outs[0])


def cases(ctx):
    # its own folder: tests/e2e/cases_kernel_bugs.py keeps its models in kbugs/
    d = run.fresh_dir(os.path.join(ctx.fix, "kbugs-instruments"))
    np.save(os.path.join(d, "x23.npy"), np.array([[1, -2, 3], [-4, 5, -6]], np.float32))
    np.save(x32(d), (np.arange(32, dtype=np.float32) - 8).reshape(1, 32) / 4)
    cs = []

    def add(name, fn):
        cs.append(("kbugs/" + name, lambda: fn(ctx, d)))

    add("scratch/guard", scratch_guard)
    add("scratch/compare-flavours", scratch_compare)
    add("scratch/test-package", scratch_test_package)
    add("test-package/input-restored", input_restored)
    add("check-tensors/overrun", lambda c, dd: check_tensors_overrun(
        c, dd, "overrunOne", "overrun_one", "libkbugs_impl.so"))
    add("check-tensors/overrun-seed-interface", lambda c, dd: check_tensors_overrun(
        c, dd, "seedOverrunOne", "seed_overrun_one", "libkbugs_seed.so"))
    add("check-tensors/input-write", check_tensors_input_write)
    add("check-tensors/real-model-clean", check_tensors_clean)
    add("dump/seen-by-consumer", dump_seen)
    add("compare/torch-hooks", torch_hooks)
    add("compare/same-file-names", same_file_names)
    add("no-arena/asan-package-refused", asan_refused)
    add("no-arena/asan-sees-overrun", asan_sees_overrun)
    add("no-arena/same-outputs", no_arena_same)
    return cs
