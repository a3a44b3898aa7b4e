"""Every classic kernel bug, caught by an instrument that names the right
node, operation, flavour and symbol, and blames no other node.

The package is test.kbugs (tests/debug/kbugs.h: one operation per bug),
built by `make test-packages` into BUILD/tests/debug/kbugs/ in both
interfaces: kbugs.yaml (graphcc interface, domain test.kbugs) and
kbugs-seed.yaml (seed interface, domain test.kbugs.seed; no AccumSum, since
the seed interface has no scratch). The models come from
tests/debug/kbugs_models.py (x -> Scale 'pre' -> the culprit -> 'post', with
the value_info PyTorch writes). Cases, each for both interfaces
(kbugs/<graphcc|seed>/<bug>/<instrument>):

  overrun/guard            PrefixSum writes one float past y: --guard
  inplace/guard            Clip6 clamps its input: --guard
  inplace/check-tensors    the same, blamed by --check-tensors
  nan/check-nan            SafeLog of a negative: --check-nan
  slow/profile             SlowCopy is O(n^2): --profile's table and JSON
  nchw/compare-flavours    ChannelBias's NCHW flavour on rank 3: the
                           flavours disagree on the node
  static/isolate           Gamma's static table: gamma_b alone differs
  static/repro             --repro gamma_b DIR, then DIR/model.onnx run
                           alone gives NumPy's x^0.5, the run gave x^2
  shape/value-info         PadEnd's inference (2x3x4) against value_info
                           (2x3x5), naming pad_end_infer
  shape/producer           the same without value_info: MatMul 'post'
                           fails, naming custom node 'culprit' and
                           pad_end_infer
  dtype/value-info         ArgMaxLast's inference says float32, the model
                           int64, naming argmax_last_infer
  scratch/guard, scratch/repeat  (graphcc only) AccumSum's accumulator:
                           --guard's poisoned scratch, and --repeat 3 with a
                           debugging option, name it
  static/test-package-order  test-package --op Gamma: the cases pass or
                           fail depending on which ran first (seed 1)
  nchw/test-package-model  test-package --model nchw.onnx: rank 3 and a
                           3-value bias no self-test covers; the flavours
                           disagree on node 'culprit' only
  crash/repro              --repro on test.debug's NULL store: the folder is
                           written before the kernel crashes; run alone,
                           the node crashes the same way
  clean/value-info-symbolic  a value_info dim_param fits the inferred size
  clean/isolate-renamed    an Identity renames the node's input in the
                           program: reproducers use the model's names
  clean/test-package-order the demo package: the same results in both orders
  clean/isolate, clean/repeat  no blame where nothing differs (the nan model
                           alone, where NaN meets NaN; the static model run
                           twice, where the table is the same each time)
"""
import os
import re
import shutil
import sys
import threading

import numpy as np

import run
from cases_debug import boxes, graphcc, missing

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "debug"))
import kbugs_models  # noqa: E402

IFACES = {"graphcc": ("kbugs.yaml", "test.kbugs", "libkbugs_impl.so"),
          "seed": ("kbugs-seed.yaml", "test.kbugs.seed", "libkbugs_seed_impl.so")}


def package(ctx, iface):
    return os.path.join(ctx.build, "tests", "debug", "kbugs", IFACES[iface][0])


def models(ctx, iface, value_info=True):
    """The models of kbugs_models.py for iface, made once per suite run."""
    d = os.path.join(ctx.fix, "kbugs", iface + ("" if value_info else "-noinfo"))
    if not os.path.exists(os.path.join(d, "x_big.npy")):
        os.makedirs(d, exist_ok=True)
        for bug in kbugs_models.BUGS:
            m = kbugs_models.build(bug, IFACES[iface][1], value_info)
            tmp = os.path.join(d, bug + ".onnx.%d.%d.tmp" % (os.getpid(), threading.get_ident()))
            with open(tmp, "wb") as f:
                f.write(m.SerializeToString())
            os.replace(tmp, os.path.join(d, bug + ".onnx"))
        x, big = kbugs_models.inputs()
        for name, v in (("x", x), ("x_big", big)):
            tmp = os.path.join(d, "%s.%d.tmp.npy" % (name, threading.get_ident()))
            np.save(tmp, v)
            os.replace(tmp, os.path.join(d, name + ".npy"))
    return d


def blames_only(err, culprit, others):
    """None when no instrument's report blames one of others: the node a
    report blames is the first it names ("graphcc: --guard: node 'n' ...";
    later ones are context, such as the producer of a tensor). Else the
    line blaming another."""
    for line in err.splitlines():
        m = re.match(r"graphcc: --[a-z-]+: .*?node '([^']*)'", line)
        if m and m.group(1) in others:
            return line
    return None


def gamma_lut(x, g):
    v = np.clip(x, 0, 1)
    lut = (np.arange(256, dtype=np.float32) / np.float32(255)) ** np.float32(g)
    return lut[(v * np.float32(255) + np.float32(0.5)).astype(np.int64)]


def cases(ctx):
    cs = []

    def check(tag, iface, bug, extra, rc_want, must, others=("pre", "post"), value_info=True,
              inp="x.npy"):
        pkg = package(ctx, iface)
        if not os.path.exists(pkg):
            return run.Result(False, "fixture package %s is not built (make test-packages)"
                              % pkg)
        d = models(ctx, iface, value_info)
        cwd, out, _ = boxes(ctx, tag)
        rc, _, err, _ = graphcc(ctx, ["run", os.path.join(d, bug + ".onnx"), "--ops", pkg,
                                      "--input", "x=" + os.path.join(d, inp),
                                      "--output-dir", out] + extra, cwd)
        # --isolate keeps the reproducers of nodes that differ (in TMPDIR): not ours to keep.
        for kept in re.findall(r"reproducer kept in (\S*/graphcc-isolate-\w+)/", err):
            shutil.rmtree(kept, ignore_errors=True)
        if rc != rc_want:
            return run.Result(False, "%s, expected exit %d" % (run.describe_rc(rc), rc_want),
                              err)
        miss = missing(err, must)
        if miss:
            return run.Result(False, "report lacks %r" % miss, err)
        wrong = blames_only(err, "culprit", others)
        if wrong:
            return run.Result(False, "blames another node: %s" % wrong, err)
        if rc_want and os.listdir(out):
            return run.Result(False, "outputs written by a failed run", err)
        return run.Result(True)

    def kernel(iface, node, op, flavour, symbol):
        dom, lib = IFACES[iface][1], IFACES[iface][2]
        return ["node '%s' (%s::%s)" % (node, dom, op), "operation '%s'" % op,
                "flavour '%s'" % flavour, lib, "symbol " + symbol]

    for iface in IFACES:
        def add(bug, instrument, *args, model=None, **kw):
            tag = "kbugs/%s/%s/%s" % (iface, bug, instrument)
            cs.append((tag, lambda t=tag, i=iface: check(t, i, model or bug, *args, **kw)))

        add("overrun", "guard", ["--guard"], 3,
            kernel(iface, "culprit", "PrefixSum", "prefixSumF32", "prefix_sum_f32") +
            ["wrote past the end of output 'u'", "byte offsets 96..99"])
        add("inplace", "guard", ["--guard"], 3,
            kernel(iface, "culprit", "Clip6", "clip6F32", "clip6_f32") +
            ["wrote into its input 't'"])
        add("nan", "check-nan", ["--check-nan"], 3,
            kernel(iface, "culprit", "SafeLog", "safeLogF32", "safe_log_f32") +
            ["holds NaN at flat index 0"])
        add("nchw", "compare-flavours", ["--compare-flavours"], 3,
            ["node 'culprit' (%s::ChannelBias), bound to flavour 'channelBiasNchw'"
             % IFACES[iface][1], "symbol channel_bias_nchw",
             re.compile(r"channelBiasGeneric vs channelBiasNchw: max abs 20\b.*DISAGREE"),
             "1 pair DISAGREE"])
        add("static", "isolate", ["--isolate"], 3,
            kernel(iface, "gamma_b", "Gamma", "gammaLutF32", "gamma_lut_f32") +
            ["gives other values alone", "output 'b'", "hidden state shared between nodes",
             "2 gave the values of the run", "1 custom node gave other values"],
            others=("pre", "gamma_a", "post"))
        add("shape", "value-info", [], 1,
            ["node 'culprit' (%s::PadEnd)" % IFACES[iface][1],
             re.compile(r"lib%s_fn\.so:pad_end_infer inferred output 0 \('y', tensor 'u'\) "
                        r"as 2x3x4, but the model's value_info says 2x3x5"
                        % ("kbugs" if iface == "graphcc" else "kbugs_seed"))])
        add("shape", "producer", [], 1,
            ["node 'post' (MatMul)", "comes from custom node 'culprit' (%s::PadEnd, flavour "
             "'padEndF32'), whose shape inference" % IFACES[iface][1], ":pad_end_infer gave"],
            others=(), value_info=False)
        add("dtype", "value-info", [], 1,
            ["node 'culprit' (%s::ArgMaxLast)" % IFACES[iface][1],
             ":argmax_last_infer made output 0 ('y', tensor 'y') float32, but the model "
             "declares that tensor int64"])
        add("clean", "isolate", ["--isolate"], 0,
            ["3 custom nodes run again alone, each in a fresh process: 3 gave the values"],
            others=("pre", "culprit", "post"), model="nan")
        add("inplace", "check-tensors", ["--check-tensors"], 3,
            kernel(iface, "culprit", "Clip6", "clip6F32", "clip6_f32") +
            ["it changed tensor 't'", "it wrote into its input"])
        if iface == "graphcc":
            add("scratch", "guard", ["--guard"], 3,
                kernel(iface, "culprit", "AccumSum", "accumSumF32", "accum_sum_f32") +
                ["the kernel reads scratch it did not write"])
            add("scratch", "repeat", ["--repeat", "3", "--trace"], 3,
                kernel(iface, "culprit", "AccumSum", "accumSumF32", "accum_sum_f32") +
                ["gives other values in run 2 than in run 1 on the same inputs",
                 "reads scratch before writing it"])
        add("clean", "repeat", ["--repeat", "2", "--guard"], 0,
            ["2 runs with debugging options; every node gave the same values each run"],
            others=("pre", "gamma_a", "gamma_b", "post"), model="static")

        def test_package(tag, args, rc_want, must, must_not, iface):
            pkg = package(ctx, iface)
            cwd, _, _ = boxes(ctx, tag)
            rc, out, err, _ = graphcc(ctx, ["test-package", pkg] + args, cwd)
            if rc != rc_want:
                return run.Result(False, "%s, expected exit %d" % (run.describe_rc(rc),
                                                                    rc_want), out + err)
            miss = missing(out, must)
            if miss:
                return run.Result(False, "report lacks %r" % miss, out + err)
            for bad in must_not:
                if re.search(bad, out, re.M):
                    return run.Result(False, "report has %r" % bad, out)
            return run.Result(True)

        tag = "kbugs/%s/static/test-package-order" % iface
        cs.append((tag, lambda t=tag, i=iface: test_package(
            t, ["--op", "Gamma"], 1,
            ["FAIL  order: Gamma / root (line 208) fails in the manifest's order but passes in "
             "a shuffled one (seed 1): its result depends on which cases ran before it",
             "FAIL  order: Gamma / square (line 201) passes in the manifest's order but fails",
             "      shuffled: FAIL  Gamma / square (line 201) / gammaLutF32: output 0 ('y') "
             "element 1 is"], [], i)))
        tag = "kbugs/%s/nchw/test-package-model" % iface
        cs.append((tag, lambda t=tag, i=iface: test_package(
            t, ["--model", os.path.join(models(ctx, i), "nchw.onnx")], 1,
            ["warning: ChannelBias: node 'culprit' input 0 ('x') has rank 3, which no "
             "self-test of ChannelBias covers (their ranks: 2, 4)",
             "warning: ChannelBias: node 'culprit' has param 'bias' with 3 values, a length "
             "no self-test of ChannelBias uses",
             "FAIL  ChannelBias / node 'culprit' of the model: flavours 'channelBiasGeneric' "
             "and 'channelBiasNchw' agree on output 0 ('y'): max abs difference 20",
             "PASS  Scale / node 'post' of the model: through the runtime with --guard"],
            [r"^FAIL .*node '(pre|post)'", r"^FAIL  order"], i)))

        def slow(iface=iface):
            tag = "kbugs/%s/slow/profile" % iface
            prof = os.path.join(boxes(ctx, tag + "-json")[2], "p.json")
            r = check(tag, iface, "slow", ["--profile", prof], 0,
                      [re.compile(r"test\.kbugs(\.seed)?::SlowCopy +1 +[0-9.]+ +(9\d|100)\.\d%")],
                      inp="x_big.npy")
            if not r.ok:
                return r
            import json
            ev = [e for e in json.load(open(prof))["traceEvents"] if e.get("ph") == "X"]
            top = max(ev, key=lambda e: e["dur"])
            if top["name"] != "culprit":
                return run.Result(False, "the longest event is %r, not 'culprit'" % top["name"])
            return run.Result(True)
        cs.append(("kbugs/%s/slow/profile" % iface, slow))

        def repro(iface=iface):
            tag = "kbugs/%s/static/repro" % iface
            pkg = package(ctx, iface)
            d = models(ctx, iface)
            cwd, out, box = boxes(ctx, tag)
            rdir = os.path.join(box, "repro")
            rc, _, err, _ = graphcc(ctx, ["run", os.path.join(d, "static.onnx"), "--ops", pkg,
                                          "--input", "x=" + os.path.join(d, "x.npy"),
                                          "--repro", "gamma_b", rdir], cwd)
            if rc != 0:
                return run.Result(False, "%s, expected exit 0" % run.describe_rc(rc), err)
            m = re.search(r"\n  graphcc (run .*)\n", err)
            if not m or "node 'gamma_b'" not in err:
                return run.Result(False, "no command line to reproduce gamma_b", err)
            rc, _, err2, _ = graphcc(ctx, m.group(1).split(" "), cwd)
            if rc != 0:
                return run.Result(False, "the reproducer: %s" % run.describe_rc(rc), err2)
            x = np.load(os.path.join(d, "x.npy")) * np.float32(0.5)
            if not np.array_equal(np.load(os.path.join(rdir, "t.npy")), x):
                return run.Result(False, "t.npy is not what gamma_b saw")
            alone = np.load(os.path.join(rdir, "alone", "b.npy"))
            as_run = np.load(os.path.join(rdir, "as-run", "b.npy"))
            # Alone, gamma_b builds its own table (x^0.5); in the run it used
            # gamma_a's (x^2): the state shows.
            if np.abs(alone - gamma_lut(x, 0.5)).max() > 1e-6:
                return run.Result(False, "alone: %s, NumPy: %s" % (alone, gamma_lut(x, 0.5)))
            if np.abs(as_run - gamma_lut(x, 2.0)).max() > 1e-6:
                return run.Result(False, "as run: %s, NumPy x^2: %s" % (as_run,
                                                                        gamma_lut(x, 2.0)))
            return run.Result(True)
        cs.append(("kbugs/%s/static/repro" % iface, repro))

    def symbolic_fits():
        # value_info with a symbolic dimension (dim_param) fits any size.
        from onnx import helper, TensorProto
        pkg = package(ctx, "graphcc")
        cwd, out, box = boxes(ctx, "kbugs/clean/value-info-symbolic")
        m = kbugs_models.build("overrun", IFACES["graphcc"][1])
        del m.graph.value_info[:]
        m.graph.value_info.extend([helper.make_tensor_value_info("t", TensorProto.FLOAT,
                                                                 ["batch", 3, 4])])
        path = os.path.join(box, "symbolic.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        x = os.path.join(models(ctx, "graphcc"), "x.npy")
        rc, _, err, _ = graphcc(ctx, ["run", path, "--ops", pkg, "--input", "x=" + x,
                                      "--output-dir", out], cwd)
        if rc != 0:
            return run.Result(False, "%s, expected exit 0" % run.describe_rc(rc), err)
        want = np.cumsum(np.load(x).ravel() * np.float32(0.5)).reshape(2, 3, 4) * 2
        got = np.load(os.path.join(out, "y.npy"))
        if np.abs(got - want).max() > 1e-5:
            return run.Result(False, "y differs from NumPy's running sum")
        return run.Result(True)
    cs.append(("kbugs/clean/value-info-symbolic", symbolic_fits))

    def isolate_renamed():
        # An Identity before the node: the program reads 't' where the model
        # says 't2'; the reproducer uses the model's names.
        from onnx import helper, TensorProto
        pkg = package(ctx, "graphcc")
        cwd, out, box = boxes(ctx, "kbugs/clean/isolate-renamed")
        dom, F = IFACES["graphcc"][1], TensorProto.FLOAT
        nodes = [helper.make_node("Scale", ["x"], ["t"], name="pre", domain=dom, factor=0.5),
                 helper.make_node("Identity", ["t"], ["t2"], name="id"),
                 helper.make_node("Scale", ["t2"], ["y"], name="culprit", domain=dom,
                                  factor=3.0)]
        g = helper.make_graph(nodes, "renamed", [helper.make_tensor_value_info("x", F, [2, 3])],
                              [helper.make_tensor_value_info("y", F, [2, 3])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                                helper.make_opsetid(dom, 1)])
        m.ir_version = 8
        path = os.path.join(box, "renamed.onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        x = os.path.join(box, "x.npy")
        np.save(x, np.arange(6, dtype=np.float32).reshape(2, 3))
        rc, _, err, _ = graphcc(ctx, ["run", path, "--ops", pkg, "--input", "x=" + x,
                                      "--isolate", "--repro", "culprit",
                                      os.path.join(box, "r")], cwd)
        if rc != 0 or "2 custom nodes run again alone, each in a fresh process: 2 gave" not in err:
            return run.Result(False, "%s, expected exit 0, both agreeing" % run.describe_rc(rc),
                              err)
        t2 = np.load(os.path.join(box, "r", "t2.npy"))
        if not np.array_equal(t2, np.load(x) * np.float32(0.5)):
            return run.Result(False, "t2.npy is not what 'culprit' saw")
        return run.Result(True)
    cs.append(("kbugs/clean/isolate-renamed", isolate_renamed))

    def repro_crash():
        import cases_debug
        pkg = cases_debug.package(ctx)
        if not os.path.exists(pkg):
            return run.Result(False, "fixture package %s is not built" % pkg)
        cwd, out, box = boxes(ctx, "kbugs/crash/repro")
        model = cases_debug.buggy_model(box, "nullWrite")
        x, _ = cases_debug.inputs(box)
        rdir = os.path.join(box, "repro")
        rc, _, err, _ = graphcc(ctx, ["run", model, "--ops", pkg, "--input", "x=" + x,
                                      "--repro", "culprit", rdir, "--output-dir", out], cwd)
        if rc != 3 or "written to %s before its kernel runs" % rdir not in err:
            return run.Result(False, "%s, expected exit 3 and the note" % run.describe_rc(rc),
                              err)
        # The node alone, on the input it saw, crashes the same way.
        t = np.load(os.path.join(rdir, "t.npy"))
        if not np.array_equal(t, np.load(x) * np.float32(3)):
            return run.Result(False, "t.npy is not what 'culprit' saw")
        rc, _, err, _ = graphcc(ctx, ["run", os.path.join(rdir, "model.onnx"), "--ops", pkg,
                                      "--input", "t=" + os.path.join(rdir, "t.npy")], cwd)
        miss = missing(err, ["kernel crashed: SIGSEGV", "node 'culprit' (test.debug::Buggy)",
                             "symbol buggy_null_write"])
        if rc != 3 or miss:
            return run.Result(False, "the reproducer: %s, lacks %r" % (run.describe_rc(rc), miss),
                              err)
        return run.Result(True)
    cs.append(("kbugs/crash/repro", repro_crash))

    def order_clean():
        cwd, _, _ = boxes(ctx, "kbugs/clean/test-package-order")
        rc, out, err, _ = graphcc(ctx, ["test-package", os.path.join(ctx.plugins, "demo",
                                                                       "demo.yaml")], cwd)
        if rc != 0 or not re.search(r"^PASS  order: the 3 cases give the same results in a "
                                    r"fresh process in a shuffled order \(seed 1", out, re.M):
            return run.Result(False, "%s; no clean order line" % run.describe_rc(rc), out + err)
        return run.Result(True)
    cs.append(("kbugs/clean/test-package-order", order_clean))
    return cs
