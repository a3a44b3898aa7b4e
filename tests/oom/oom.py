#!/usr/bin/python3
"""Out-of-memory injection: runs one graphcc command with
GRAPHCC_FAIL_ALLOC=N for N = 1, 2, 3, ... until a run completes. Every run
that is failed must end cleanly: exit 1, a one-line message, no sanitizer
report (under SAN=1 that includes LeakSanitizer's leak check at exit), and
no output file written. With GRAPHCC_FAIL_ALLOC_TRACE the allocator names
the call it failed (object+offset), which gives the allocation sites
covered.

Used by tests/suites/oom; also runnable alone:
  oom.py GRAPHCC WORKDIR
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np

SANITIZER_RC = 86
SANITIZER_RE = re.compile(r"ERROR: (Address|Leak)Sanitizer|runtime error: |UndefinedBehaviorSanitizer")
TRACE_RE = re.compile(r"^gc_alloc: injected failure of allocation (\d+) at (\S+)\+(0x[0-9a-f]+)$", re.M)
TIMEOUT = 30
MAX_N = 20000


def make_inputs(work, build):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    # Conv (weights) -> ScaledTanh (custom: package load, bind) -> Relu (fused)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("ScaledTanh", ["c"], ["t"], domain="org.glow.lenet",
                              name="st", alpha=1.5, beta=0.75),
             helper.make_node("Relu", ["t"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "oom",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])],
                          initializer=[numpy_helper.from_array(
                              np.full((3, 2, 3, 3), 0.1, np.float32), "w"),
                              numpy_helper.from_array(np.zeros(3, np.float32), "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("org.glow.lenet", 1)])
    model = os.path.join(work, "oom.onnx")
    onnx.save(m, model)
    x = os.path.join(work, "x.npy")
    np.save(x, np.ones((1, 2, 4, 4), np.float32))
    ops = os.path.join(build, "plugins", "seed-lenet", "seed-lenet.yaml")
    return model, x, ops


def make_control(work):
    """A Loop (a trip count from an input, a carried value that grows, a
    scan output, a Reshape prepared per iteration) inside an If, and a
    sequence input through SequenceInsert/At: the control-flow and
    sequence allocations."""
    import onnx
    from onnx import TensorProto as TP, helper as h, numpy_helper
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]),
         h.make_node("Add", ["i", "one"], ["i1"]),
         h.make_node("Unsqueeze", ["i1", "zero"], ["rows"]),
         h.make_node("Concat", ["rows", "minus1"], ["shape"], axis=0),
         h.make_node("Reshape", ["x", "shape"], ["m"]),
         h.make_node("ReduceSum", ["m"], ["tot"], keepdims=0),
         h.make_node("Unsqueeze", ["tot", "zero"], ["tot1"]),
         h.make_node("Concat", ["acc", "tot1"], ["acc2"], axis=0),
         h.make_node("Identity", ["tot"], ["scan"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []),
                 h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("acc", TP.FLOAT, [None])],
        [h.make_tensor_value_info("c2", TP.BOOL, []), h.make_tensor_value_info("acc2", TP.FLOAT, None),
         h.make_tensor_value_info("scan", TP.FLOAT, [])],
        [h.make_tensor("one", TP.INT64, [], [1]), h.make_tensor("zero", TP.INT64, [1], [0]),
         h.make_tensor("minus1", TP.INT64, [1], [-1])])
    then = h.make_graph([h.make_node("Loop", ["M", "", "acc0"], ["acc", "scans"], body=body)],
                        "then", [], [h.make_tensor_value_info("scans", TP.FLOAT, None)])
    els = h.make_graph([h.make_node("Identity", ["x"], ["same"])], "else", [],
                       [h.make_tensor_value_info("same", TP.FLOAT, None)])
    g = h.make_graph(
        [h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=els),
         h.make_node("SequenceInsert", ["seq", "y"], ["seq2"]),
         h.make_node("SequenceAt", ["seq2", "zero_s"], ["first"])],
        "control", [h.make_tensor_value_info("cond", TP.BOOL, []),
                    h.make_tensor_value_info("M", TP.INT64, []),
                    h.make_tensor_value_info("x", TP.FLOAT, [6]),
                    h.make_tensor_value_info("acc0", TP.FLOAT, [1]),
                    h.make_tensor_sequence_value_info("seq", TP.FLOAT, None)],
        [h.make_tensor_sequence_value_info("seq2", TP.FLOAT, None),
         h.make_tensor_value_info("first", TP.FLOAT, None)],
        [h.make_tensor("zero_s", TP.INT64, [], [0])])
    model = os.path.join(work, "control.onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), model)
    feeds = {"cond": np.array(True), "M": np.array(3, np.int64),
             "x": np.arange(6, dtype=np.float32), "acc0": np.zeros(1, np.float32)}
    args = ["run", model]
    for k, v in feeds.items():
        p = os.path.join(work, "control-%s.npy" % k)
        np.save(p, v)
        args += ["--input", "%s=%s" % (k, p)]
    p = os.path.join(work, "control-seq.pb")
    with open(p, "wb") as f:
        f.write(numpy_helper.from_list([np.ones(2, np.float32)], "seq").SerializeToString())
    return args + ["--input", "seq=" + p]


def make_string_inputs(work):
    """Strings through every piece that holds them: a '<U' .npy input, a
    StringNormalizer with stopwords (values known at compile), Cast from
    and to strings, a '<U' output."""
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("StringNormalizer", ["x"], ["u"], name="sn",
                              case_change_action="UPPER", stopwords=["the"]),
             helper.make_node("Cast", ["u"], ["f"], name="tof", to=TensorProto.FLOAT),
             helper.make_node("Cast", ["f"], ["y"], name="tos", to=TensorProto.STRING)]
    g = helper.make_graph(nodes, "oom-strings",
                          [helper.make_tensor_value_info("x", TensorProto.STRING, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.STRING, [3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model = os.path.join(work, "oom-strings.onnx")
    onnx.save(m, model)
    x = os.path.join(work, "x-strings.npy")
    np.save(x, np.array(["1.5", "The", "2e3", "-inf"]))
    return model, x


def sweep(graphcc, name, args, outputs, env):
    """-> (failed_runs, problems, sites, n_allocs)."""
    problems, sites = [], set()
    n = 1
    while n <= MAX_N:
        for o in outputs:
            shutil.rmtree(o, ignore_errors=True) if os.path.isdir(o) else \
                (os.remove(o) if os.path.exists(o) else None)
        e = dict(env, GRAPHCC_FAIL_ALLOC=str(n), GRAPHCC_FAIL_ALLOC_TRACE="1")
        try:
            r = subprocess.run([graphcc] + args, capture_output=True, timeout=TIMEOUT, env=e)
            rc, err = r.returncode, r.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, err = None, ""
        m = TRACE_RE.search(err)
        if rc == 0 and not m:
            return n - 1, problems, sites
        if m:
            sites.add((os.path.basename(m.group(2)), m.group(3), m.group(2)))
        msg = [l for l in err.splitlines() if not l.startswith("gc_alloc: ")]
        why = []
        if rc != 1:
            why.append("exit %s" % rc)
        if SANITIZER_RE.search(err):
            why.append("sanitizer report")
        if rc == 1 and not any(l.startswith("graphcc: ") for l in msg):
            why.append("no message")
        for o in outputs:
            if os.path.isdir(o) and os.listdir(o) or os.path.isfile(o):
                why.append("wrote %s" % o)
        if why and rc != 0:
            where = "%s+%s" % (m.group(2), m.group(3)) if m else "?"
            problems.append("%s: allocation %d (%s): %s\n%s" % (
                name, n, where, "; ".join(why),
                "\n".join("    | " + l[:200] for l in msg[-8:])))
        elif rc == 0:
            # the failed allocation was survived (a fallback): fine
            pass
        n += 1
    problems.append("%s: still failing at allocation %d" % (name, MAX_N))
    return n - 1, problems, sites


def addr2line(sites):
    """-> {'file:line' for each site} (falls back to object+offset)."""
    by_obj = {}
    for base, off, path in sites:
        by_obj.setdefault(path, []).append(off)
    lines = set()
    for path, offs in by_obj.items():
        try:
            r = subprocess.run(["addr2line", "-e", path] + ["%#x" % (int(o, 16) - 1) for o in offs],
                               capture_output=True, text=True, timeout=60)
            got = r.stdout.splitlines()
        except (OSError, subprocess.TimeoutExpired):
            got = []
        for o, l in zip(offs, got + [None] * len(offs)):
            l = l.split(" (discriminator")[0] if l else l
            lines.add(l if l and not l.startswith("??") else "%s+%s" % (os.path.basename(path), o))
    return lines


def main(graphcc, work):
    graphcc = os.path.abspath(graphcc)
    build = os.path.dirname(os.path.dirname(graphcc))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env.pop("GRAPHCC_OPS_PATH", None)
    for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        env[var] = ":".join(filter(None, [env.get(var), "exitcode=%d" % SANITIZER_RC]))
    model, x, ops = make_inputs(work, build)
    smodel, sx = make_string_inputs(work)
    gcb = os.path.join(work, "oom.gcb")
    good_gcb = os.path.join(work, "good.gcb")
    r = subprocess.run([graphcc, "compile", model, "--ops", ops, "-o", good_gcb],
                       capture_output=True, env=env)
    if r.returncode != 0:
        print("FAIL oom/setup: cannot compile %s: %s" % (model, r.stderr.decode()[-400:]))
        print("0 passed, 1 failed")
        return 1
    control = make_control(work)
    control_gcb = os.path.join(work, "control.gcb")
    r = subprocess.run([graphcc, "compile", control[1], "-o", control_gcb], capture_output=True,
                       env=env)
    if r.returncode != 0:
        print("FAIL oom/setup: cannot compile %s: %s" % (control[1], r.stderr.decode()[-400:]))
        print("0 passed, 1 failed")
        return 1
    # each run writes its own output folder, so the sweeps run side by side
    out = lambda name: os.path.join(work, "out-" + name)
    runs = [
        ("check", ["check", ops], []),
        ("compile", ["compile", model, "--ops", ops, "-o", gcb], [gcb]),
        ("run-onnx", ["run", model, "--ops", ops, "--input", "x=" + x, "--output-dir",
                      out("run-onnx")], [out("run-onnx")]),
        ("run-gcb", ["run", good_gcb, "--input", "x=" + x, "--output-dir", out("run-gcb")],
         [out("run-gcb")]),
        ("info-gcb", ["info", good_gcb], []),
        ("run-control", control + ["--output-dir", out("run-control")], [out("run-control")]),
        ("run-control-gcb", ["run", control_gcb] + control[2:] + [
            "--output-dir", out("run-control-gcb")], [out("run-control-gcb")]),
        ("run-strings", ["run", smodel, "--input", "x=" + sx, "--output-dir", out("run-strings"),
                         "--repeat", "2"], [out("run-strings")]),
    ]
    passed = failed = 0
    all_sites = set()
    total = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        swept = list(pool.map(lambda r: sweep(graphcc, r[0], r[1], r[2], env), runs))
    for (name, args, outputs), (n, problems, sites) in zip(runs, swept):
        all_sites |= sites
        total += n
        if problems:
            failed += 1
            print("FAIL oom/%s: %d of %d failed allocations did not end cleanly" % (
                name, len(problems), n))
            for p in problems[:10]:
                print("  " + p)
        else:
            passed += 1
            print("PASS oom/%s: each of %d allocations failed in turn: clean exit 1 each time, "
                  "%d distinct sites" % (name, n, len(sites)))
    lines = addr2line(all_sites)
    print("oom: %d runs with a failed allocation, %d distinct allocation sites failed "
          "(%d source lines)" % (total, len(all_sites), len(lines)))
    if os.environ.get("OOM_LIST_SITES"):
        for l in sorted(lines):
            print("  site " + l)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
