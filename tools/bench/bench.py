#!/usr/bin/python3
"""make bench: graphcc and ONNX Runtime side by side, in the same run.

Usage: bench.py --build B --ort-modules DIR [--only NAME,...] [--threads 1,2]
                [--min-runs 20] [--min-seconds 1.0] [--procs 2]

For each model and thread count, long-lived workers hold the model ready:
graphcc-worker (C, graphcc linked in-process) and ort-worker.js (Node,
onnxruntime-node), --procs processes of each (a process's memory placement
alone moves its times by a few %: start_and_interleave). All of a model's
workers (both runtimes, every thread count) are warmed up, then asked to
run in turn, round-robin in blocks of ~0.2 s, each timing its own runs
inside the process, until each side has at least --min-runs samples and
--min-seconds of measured time over its processes; the table gives the
medians of each side's pooled samples. One round-robin for all thread counts means that each
runtime's speedup over 1 thread is measured under the same load as the
ratio between the runtimes. Each worker is left to go idle before the next
runs (Worker.quiesce: both runtimes' thread pools spin for a
while after a run). In each round the single-threaded workers all run on
one CPU, the next CPU in the next round (interleave_all's pin). Fast
models run K times per request (K chosen in the warm-up so that a request
lasts ~10 ms); a sample is the mean of those K.
Then both write their outputs, which must agree (a check that they run the
same model on the same inputs), their peak RSS (VmHWM) is read, and the
graphcc worker profiles PROFILE_RUNS warm runs (`profile` request: the
per-node times of --profile), summed by op type: the table's top three op
types say where graphcc's time goes, so a regression shows where it comes
from.

The models: the test set's PyTorch exports (tests/models/torch_models.py),
the Identity floor and the demo (bench_models.py), and the zoo of
tools/bench/zoo.py (torchvision and nn.Module exports made at bench time).

After the table: mobilenet_v2 and resnet18 again with busy loops beside the
workers, on all cores but one (bench_busy: a second thread must not be
slower than one on a machine that has other work); resnet18's `graphcc compile` time, its .gcb load time and
size; "big weights" (bench_models.py --big DIM: six DIM x DIM MatMul weights
in ONNX external data): time to the first result and peak RSS of `graphcc
run model.onnx`, `graphcc compile`, `graphcc run model.gcb` and ONNX
Runtime's session create + first run, each a fresh process (median of 3),
against the size of the weights; and the custom-call overhead from `make bench-custom-call` (read from
B/bench/custom-call.txt). Everything is printed and written to B/bench.md.
"""
import argparse
import json
import math
import os
import re
import select
import shutil
import statistics
import subprocess
import sys
import time

import zoo

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = "/usr/bin/python3"
SAMPLE_MS = 10.0         # a timed request lasts about this long
WARMUP_MS = 200.0        # per side, and at least WARMUP_RUNS runs
WARMUP_RUNS = 3
MAX_SAMPLES = 400
BLOCK_MS = 200.0         # A B A B in blocks of about this much measured time
QUIESCE_MAX_S = 0.5
REPLY_TIMEOUT_S = 300
CUSTOM_CALL_LIMIT_NS = 50.0
PROFILE_RUNS = 3

# key: the table's label
MODELS = {
    "resnet18": "resnet18",
    "mobilenet_v2": "mobilenet_v2",
    "squeezenet1_0": "squeezenet1_0",
    "transformer": "TransformerEncoderLayer d256, 4 heads, seq 128",
    "mlp": "MLP 784-1024-1024-10, batch 1",
    "mlp64": "MLP 784-1024-1024-10, batch 64",
    "resnet18-qdq": "resnet18 QDQ (int8 Conv, per-channel weights)",
    "mlp-dynq": "MLP batch 1, dynamically quantized (int8 MatMulInteger)",
    "mlp64-dynq": "MLP batch 64, dynamically quantized (int8 MatMulInteger)",
    "transformer-dynq": "TransformerEncoderLayer d256 seq 128, dynamically quantized "
                        "(int8 MatMulInteger)",
    "identity": "Identity 1x1000 (per-call floor)",
    "demo": "demo, custom ops (see 1)",
}
MODELS.update((k, v[0]) for k, v in zoo.MODELS.items())
# onnx.helper models of tests/models/modern/builders.py at bench size
MODERN_MODELS = {
    "llm_block": "LLM decoder, opset 23: 2 blocks d512, GQA 8/2 heads, RoPE, 32 new + 224 "
                 "cached tokens, SwiGLU, vocab 8000",
    "unet_gn": "U-Net 128x128, opset 21 GroupNormalization, SiLU, Resize",
}
MODELS.update(MODERN_MODELS)
# Timed again on a busy machine (bench_busy): the depthwise net of many
# small jobs and a plain one of larger ones.
BUSY_MODELS = ["mobilenet_v2", "resnet18"]
TORCH_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "transformer", "mlp", "mlp64"]
# quantized from a float one by tools/bench/quant_models.py
QUANT_MODELS = {"mlp-dynq": "mlp", "mlp64-dynq": "mlp64", "transformer-dynq": "transformer",
                "resnet18-qdq": "resnet18"}
QUANT_REL = 2e-2  # QDQ rows: max abs diff against max |ORT output|


class WorkerError(Exception):
    pass


class Worker:
    """One worker process and its line protocol (see graphcc-worker.c)."""

    def __init__(self, name, argv, log_path, threads=0):
        self.name = name
        self.threads = threads
        self.log_path = log_path
        env = dict(os.environ)
        env.pop("GRAPHCC_OPS_PATH", None)  # only the packages named on the command line
        self.log = open(log_path, "w")
        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self.log, text=True, bufsize=1, env=env)
        except OSError as e:
            self.log.close()
            raise WorkerError("%s: cannot start %s: %s" % (name, argv[0], e))
        self.ready = self._reply("ready").split()

    def _reply(self, expect):
        r, _, _ = select.select([self.p.stdout], [], [], REPLY_TIMEOUT_S)
        line = self.p.stdout.readline() if r else ""
        if not line.startswith(expect):
            self.close()
            with open(self.log_path) as f:
                err = f.read().strip()
            raise WorkerError("%s: %s%s" % (
                self.name, line.strip() or ("no reply in %d s" % REPLY_TIMEOUT_S if not r
                                            else "exited with status %s" % self.p.returncode),
                ("\n" + err[-2000:]) if err else ""))
        return line[len(expect):].strip()

    def request(self, line, expect="ok"):
        try:
            self.p.stdin.write(line + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            pass  # _reply reports how it ended
        return self._reply(expect)

    def run(self, k):
        """Mean ms per run over k back-to-back runs."""
        return float(self.request("run %d" % k))

    def cpu_ns(self):
        """CPU time of all the worker's threads so far (ns)."""
        total = 0
        for t in os.listdir("/proc/%d/task" % self.p.pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (self.p.pid, t)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass  # a thread that just ended
        return total

    def quiesce(self):
        """Waits until the worker's threads stop using the CPU (under 10% of
        a core over 5 ms; at most QUIESCE_MAX_S). After a run, ONNX Runtime's
        pool threads spin for tens of ms and OpenBLAS's for ~0.1 s; on a
        small machine that spinning would slow the other worker's runs."""
        t0 = time.monotonic()
        c = self.cpu_ns()
        while time.monotonic() - t0 < QUIESCE_MAX_S:
            time.sleep(0.005)
            c2 = self.cpu_ns()
            if c2 - c < 0.1 * 0.005 * 1e9:
                return
            c = c2

    def pin(self, cpus):
        """Restricts every thread of the worker to the CPUs `cpus` (threads
        it starts later inherit it). A worker that cannot be pinned is a
        WorkerError: the report says the 1-thread workers were."""
        try:
            tasks = os.listdir("/proc/%d/task" % self.p.pid)
        except OSError as e:
            raise WorkerError("%s: cannot list its threads to pin them: %s" % (self.name, e))
        for t in tasks:
            try:
                os.sched_setaffinity(int(t), cpus)
            except ProcessLookupError:
                pass  # a thread that just ended
            except OSError as e:
                raise WorkerError("%s: cannot pin thread %s to CPUs %s: %s" % (
                    self.name, t, sorted(cpus), e))

    def peak_rss_mib(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            m = re.search(r"^VmHWM:\s*(\d+)\s*kB", f.read(), re.M)
        return int(m.group(1)) / 1024.0

    def close(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write("quit\n")
                self.p.stdin.close()
            except (BrokenPipeError, ValueError):
                pass
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.log.close()


def warm_up(w):
    """Runs w until WARMUP_RUNS runs and WARMUP_MS have passed; returns the
    number of runs per request that makes one last about SAMPLE_MS."""
    k, runs, spent, per_run = 1, 0, 0.0, None
    while runs < WARMUP_RUNS or spent < WARMUP_MS:
        per_run = w.run(k)
        runs += k
        spent += per_run * k
        if per_run * k < SAMPLE_MS / 2:
            k *= 2
    w.quiesce()
    return max(1, int(round(SAMPLE_MS / max(per_run, 1e-6)))) if per_run < SAMPLE_MS else 1


def interleave_all(ws, min_runs, min_ms, pin=False):
    """A B C ... A B C ... in blocks, after warming each up; per worker: a
    list of samples (ms per run), the runs per sample, and the round of
    each sample (paired_ratio). A block is
    BLOCK_MS of requests to one worker, which is then left to go idle before
    the next starts (see Worker.quiesce). Turns are this short so that every
    worker sees the same load on a shared machine; each round starts one
    worker later than the last, so no worker always follows the same one.
    With `pin`, the single-threaded workers of a round all run on the same
    CPU, a different one each round (round_cpus): a virtual CPU's speed can
    change for seconds at a time, and unpinned, one runtime could sit on the
    slow one for a whole row while the other does not."""
    ks = [warm_up(w) for w in ws]
    ss = [[] for _ in ws]
    rs = [[] for _ in ws]
    turn = 0
    while True:
        # each round starts one worker later: whatever a worker's place in
        # the order costs (the one before it still spinning down) is shared
        order = list(zip(ws, ss, ks, rs))
        order = order[turn % len(order):] + order[:turn % len(order)]
        cpus = round_cpus(turn)
        for w, s, k, r in order:
            if pin and w.threads == 1 and cpus:
                w.pin(cpus)
            spent = 0.0
            while spent < BLOCK_MS and len(s) < MAX_SAMPLES:
                s.append(w.run(k))
                r.append(turn)
                spent += s[-1] * k
            w.quiesce()
        turn += 1
        enough = all(len(s) >= min_runs and sum(s) * k >= min_ms for s, k in zip(ss, ks))
        if enough or any(len(s) >= MAX_SAMPLES for s in ss):
            return list(zip(ss, ks, rs))


def paired_ratio(a, ra, b, rb):
    """The median over rounds of (a's median in the round / b's): samples a
    and b with their rounds ra and rb (interleave_all). A round's blocks
    run a second or so apart (on one CPU, pinned), so a change of the
    machine's speed that lasts seconds is mostly the same for both sides
    of a round's ratio, where the ratio of the two overall medians depends
    on how many slow rounds each side happened to get."""
    def medians(samples, rounds):
        by = {}
        for x, r in zip(samples, rounds):
            by.setdefault(r, []).append(x)
        return {r: statistics.median(v) for r, v in by.items()}
    ma, mb = medians(a, ra), medians(b, rb)
    q = [ma[r] / mb[r] for r in ma if r in mb]
    return statistics.median(q) if q else float("nan")


def round_cpus(turn):
    """The CPU set of round `turn`'s single-threaded workers: one of the
    CPUs this process may use, in turn; None on a single-CPU machine."""
    allowed = sorted(os.sched_getaffinity(0))
    return {allowed[turn % len(allowed)]} if len(allowed) > 1 else None


def npy_outputs(d):
    import numpy as np
    out, i = [], 0
    while os.path.exists(os.path.join(d, "%d.npy" % i)):
        out.append(np.load(os.path.join(d, "%d.npy" % i), allow_pickle=False))
        i += 1
    return out


def compare(gdir, odir, rel=1e-3):
    """(max abs diff, max |ORT|, ok) over all outputs."""
    import numpy as np
    g, o = npy_outputs(gdir), npy_outputs(odir)
    if not g or len(g) != len(o):
        return float("inf"), 0.0, False
    diff = scale = 0.0
    for x, y in zip(g, o):
        if x.shape != y.shape:
            return float("inf"), 0.0, False
        diff = max(diff, float(np.max(np.abs(x.astype(np.float64) - y))) if x.size else 0.0)
        scale = max(scale, float(np.max(np.abs(y))) if y.size else 0.0)
    return diff, scale, diff <= rel * scale + 1e-6


def model_spec(key, b, work):
    """(graphcc model, ORT model, [(input name, file)], [op packages])."""
    if key in TORCH_MODELS:
        d = os.path.join(b, "e2e", "models", "torch", key)
        m = os.path.join(d, "model.onnx")
        return m, m, [("input", os.path.join(d, "input.npy"))], []
    d = os.path.join(work, "models", key)
    if key == "identity":
        m = os.path.join(d, "model.onnx")
        return m, m, [("input", os.path.join(d, "input.npy"))], []
    if key == "demo":
        return (os.path.join(ROOT, "models", "demo", "model.onnx"),
                os.path.join(d, "model-decomposed.onnx"), [("x", os.path.join(d, "x.npy"))],
                [os.path.join(b, "plugins", "demo", "demo.yaml")])
    if key in zoo.MODELS:
        d = os.path.join(work, "zoo", key)
        m = os.path.join(d, "model.onnx")
        return m, m, [(n, os.path.join(d, n + ".npy")) for n in zoo.input_names(key)], []
    if key in MODERN_MODELS:
        m = os.path.join(d, "model.onnx")
        return m, m, [(f[:-4], os.path.join(d, f)) for f in sorted(os.listdir(d))
                      if f.endswith(".npy")], []
    if key in QUANT_MODELS:
        m = os.path.join(d, "model.onnx")
        return m, m, [("input", os.path.join(d, "input.npy"))], []
    raise KeyError(key)


def make_models(keys, b, work):
    quant_keys = [k for k in keys if k in QUANT_MODELS]
    torch_keys = sorted({k for k in keys if k in TORCH_MODELS} |
                        {QUANT_MODELS[k] for k in quant_keys})
    if torch_keys:  # the test set's own generator, cached in the e2e folder
        run_quiet([PY, os.path.join(ROOT, "tests", "models", "torch_models.py"),
                   os.path.join(b, "e2e", "models", "torch"), "--only"] + torch_keys)
    if {"identity", "demo"} & set(keys):
        run_quiet([PY, os.path.join(ROOT, "tools", "bench", "bench_models.py"),
                   os.path.join(work, "models")])
    modern = [k for k in keys if k in MODERN_MODELS]
    if modern:
        run_quiet([PY, os.path.join(ROOT, "tools", "bench", "bench_models.py"),
                   os.path.join(work, "models"), "--modern"] + modern)
    zoo_keys = [k for k in keys if k in zoo.MODELS]
    if zoo_keys:
        run_quiet([PY, os.path.join(ROOT, "tools", "bench", "zoo.py"),
                   os.path.join(work, "zoo"), "--only"] + zoo_keys)
    for k in quant_keys:
        src = os.path.join(b, "e2e", "models", "torch", QUANT_MODELS[k], "model.onnx")
        qdq = ["--qdq", os.path.join(b, "bin", "graphcc")] if k.endswith("-qdq") else []
        run_quiet([PY, os.path.join(ROOT, "tools", "bench", "quant_models.py")] + qdq +
                  [src, os.path.join(work, "models", k)])


def profile_top(w, d, k, runs=PROFILE_RUNS, top=3):
    """Profiles `runs` warm runs of graphcc worker w (files under d): the
    `top` op types by kernel time, as [(op type, ms per run, share)]. Each
    profiled run follows k unprofiled ones, as a timed sample's runs follow
    each other: a run after the worker sat idle (its pool asleep, its
    weights out of cache) took up to 8x a warm one at two threads (the
    MLP's Gemm: 1.11 ms against 0.137), and the table showed that instead
    of where the timed runs' time goes."""
    import json
    by_op, total = {}, 0.0
    os.makedirs(d, exist_ok=True)
    for i in range(runs):
        path = os.path.join(d, "profile-%d.json" % i)
        w.run(k)
        w.request("profile " + path)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        for e in events:
            if e.get("ph") == "X":
                by_op[e["cat"]] = by_op.get(e["cat"], 0.0) + e["dur"] / 1000.0
                total += e["dur"] / 1000.0
    rows = sorted(by_op.items(), key=lambda kv: -kv[1])[:top]
    return [(op, ms / runs, ms / total if total else 0.0) for op, ms in rows]


def spread(samples):
    """Half the interquartile range, relative to the median."""
    if len(samples) < 4:
        return 0.0
    q = statistics.quantiles(samples, n=4)
    return (q[2] - q[0]) / 2 / statistics.median(samples)


def run_quiet(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for ln in r.stdout.splitlines():
        if "Warning" not in ln and not ln.startswith(" ") and ln.strip():
            print("  " + ln, flush=True)
    if r.returncode:
        sys.exit("bench: %s failed:\n%s" % (" ".join(argv), r.stdout[-3000:]))


def start_and_interleave(key, threads, a, work, logs, builds, sets, tag_sfx="", pin=True):
    """Starts a.procs workers of each build in `builds` (name, build dir)
    and of ORT at each thread count into `sets` (threads, tag, {name:
    Worker}, process p > 0 of a side named name#p; the caller closes them),
    runs them round-robin (interleave_all, with `pin`), and returns
    {(set index, name): (samples, K, rounds)}, each side's processes' samples
    pooled (K: its first process's). A side runs in more than one process
    because a process's memory placement alone moves its times: the same
    graphcc build in two fresh processes, in turns, differed by up to 6 %
    for a whole run (inception_v3, 6 pairs). Each process takes its share of
    the side's minimum samples and time."""
    gm, om, inputs, ops = model_spec(key, a.build, work)
    feeds = ["%s=%s" % (n, f) for n, f in inputs]
    procs = a.procs
    for t in threads:
        tag = "%s-t%d%s" % (key, t, tag_sfx)
        ws = {}
        sets.append((t, tag, ws))
        for q in range(procs):
            sfx = "#%d" % q if q else ""
            for name, b in builds:
                gargv = [os.path.join(b, "bench", "graphcc-worker"), "--threads", str(t)]
                for o in ops:
                    gargv += ["--ops", o]
                ws[name + sfx] = Worker("%s worker%s (%s)" % (name, sfx, tag),
                                        gargv + [gm] + feeds,
                                        os.path.join(logs, "%s-%s%d.log" % (tag, name, q)), t)
            ws["ort" + sfx] = Worker("ORT worker%s (%s)" % (sfx, tag),
                                     ["node", os.path.join(ROOT, "tools", "bench", "ort-worker.js"),
                                      a.ort_modules, om, str(t)] + feeds,
                                     os.path.join(logs, "%s-ort%d.log" % (tag, q)), t)
    order = [(i, name) for i, (_, _, ws) in enumerate(sets) for name in ws]
    got = dict(zip(order, interleave_all([sets[i][2][n] for i, n in order],
                                         -(-a.min_runs // procs),
                                         a.min_seconds * 1000.0 / procs, pin)))
    return pool_processes(got)


def pool_processes(got):
    """{(set index, name or name#p): (samples, K, rounds)} to {(set index,
    name): ...}: each side's processes' samples and their rounds, in one
    list each, K the first process's."""
    res = {}
    for (i, name), (s, k, r) in got.items():
        side = name.split("#")[0]
        if (i, side) in res:
            s0, k0, r0 = res[(i, side)]
            res[(i, side)] = (s0 + list(s), k0, r0 + list(r))
        else:
            res[(i, side)] = (list(s), k, list(r))
    return res


def busy_loops():
    """How many busy loops bench_busy runs: all of the cores but one."""
    return max(1, (os.cpu_count() or 2) - 1)


def bench_busy(key, threads, a, work, logs):
    """graphcc and ORT at each thread count while other processes keep all
    but one of the machine's cores busy (busy_loops() busy loops of the
    default priority, for the whole round-robin): a server's other work. A
    second thread then has a core only part of the time; it must not make
    a run slower than one thread does. Rows: model, threads, medians."""
    loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(busy_loops())]
    builds = [("graphcc", a.build)] + ([("base", a.baseline_build)] if a.baseline_build else [])
    sets = []
    try:
        res = start_and_interleave(key, threads, a, work, logs, builds, sets, "-busy",
                                   pin=False)
    finally:
        for p in loops:
            p.kill()
            p.wait()
        for _, _, ws in sets:
            for w in ws.values():
                w.close()
    rows = []
    for i, (t, _, _) in enumerate(sets):
        r = {"model": key, "threads": t}
        for name, _ in builds + [("ort", None)]:
            r[name + "_ms"] = statistics.median(res[(i, name)][0])
            r[name + "_spread"] = spread(res[(i, name)][0])
        rows.append(r)
    return rows


def bench_one(key, threads, a, work, logs):
    """Rows for each thread count of `threads`: graphcc and ORT workers for
    every thread count, all in one round-robin (so that the speedup over one
    thread is measured under the same load as the runtimes' ratio); with
    --baseline-build, a worker of that build too (graphcc before a change),
    in the same round-robin."""
    builds = [("graphcc", a.build)] + ([("base", a.baseline_build)] if a.baseline_build else [])
    sets = []  # (threads, tag, {name: Worker})
    try:
        res = start_and_interleave(key, threads, a, work, logs, builds, sets)
        rows = []
        for i, (t, tag, ws) in enumerate(sets):
            (gs, gk, gr), (os_, ok_, or_) = res[(i, "graphcc")], res[(i, "ort")]
            g, o = ws["graphcc"], ws["ort"]
            out = {}
            for name, w in (("graphcc", g), ("ort", o)):
                d = os.path.join(work, "out", tag, name)
                shutil.rmtree(d, ignore_errors=True)
                os.makedirs(d)
                w.request("dump " + d)
                out[name] = d
            row = {
                "model": key, "threads": t,
                "graphcc_ms": statistics.median(gs), "ort_ms": statistics.median(os_),
                "graphcc_samples": len(gs), "graphcc_k": gk,
                "ort_samples": len(os_), "ort_k": ok_,
                "graphcc_rss": g.peak_rss_mib(), "ort_rss": o.peak_rss_mib(),
                "graphcc_prepare_ms": float(g.ready[0]), "ort_prepare_ms": float(o.ready[0]),
                "blas_core": g.ready[1], "ort_version": o.ready[1],
                "graphcc_spread": spread(gs), "ort_spread": spread(os_),
                "graphcc_min": min(gs), "ort_min": min(os_),
                "paired": paired_ratio(gs, gr, os_, or_), "rounds": len(set(gr)),
            }
            if "base" in ws:
                bs = res[(i, "base")][0]
                row["base_ms"], row["base_spread"] = statistics.median(bs), spread(bs)
                row["base_min"] = min(bs)
            row["top_ops"] = profile_top(g, os.path.join(work, "out", tag, "profile"), gk)
            # A QDQ model's float Add/MaxPool between the QDQ nodes round
            # differently from ORT's fused integer ones: a value one step off
            # moves the logits by about a step.
            # The dynamically quantized Transformer: its float parts' last-bit
            # differences move DynamicQuantizeLinear's roundings the same way.
            rel = QUANT_REL if key.endswith("-qdq") or key == "transformer-dynq" else 1e-3
            row["diff"], row["scale"], row["same"] = compare(out["graphcc"], out["ort"], rel)
            rows.append(row)
        return rows
    finally:
        for _, _, ws in sets:
            for w in ws.values():
                w.close()


def node_baseline(a, logs):
    w = Worker("ORT baseline", ["node", os.path.join(ROOT, "tools", "bench", "ort-worker.js"),
                                a.ort_modules, "--baseline"],
               os.path.join(logs, "ort-baseline.log"))
    try:
        if w.ready[2] != "mapped":
            raise WorkerError("ORT baseline: libonnxruntime is not in the process after require")
        return w.peak_rss_mib(), w.ready[1]
    finally:
        w.close()


def compile_and_load(a, work):
    """resnet18: `graphcc compile` wall time (median of 5), .gcb size, and
    gc_program_load + first session (median of 20, in one process)."""
    model = os.path.join(a.build, "e2e", "models", "torch", "resnet18", "model.onnx")
    gcb = os.path.join(work, "resnet18.gcb")
    times = []
    for _ in range(5):
        t0 = time.monotonic()
        r = subprocess.run([os.path.join(a.build, "bin", "graphcc"), "compile", model, "-o", gcb],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append((time.monotonic() - t0) * 1000.0)
        if r.returncode:
            raise WorkerError("graphcc compile %s: %s" % (model, r.stderr.strip()))
    r = subprocess.run([os.path.join(a.build, "bench", "graphcc-worker"), "--load-time", "20",
                        gcb], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    m = re.match(r"load (\S+) (\S+) (\d) (\S+)", r.stdout)
    if r.returncode or not m:
        raise WorkerError("graphcc-worker --load-time %s: %s" % (gcb, r.stdout.strip()))
    return {"compile_ms": statistics.median(times), "load_ms": float(m.group(1)),
            "load_min_ms": float(m.group(2)), "mapped": m.group(3) == "1",
            "page_in_ms": float(m.group(4)),
            "gcb_mib": os.path.getsize(gcb) / 2**20,
            "onnx_mib": os.path.getsize(model) / 2**20}


def run_measured(argv):
    """Runs argv to its end: (wall ms, peak RSS MiB of that process)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode(errors="replace")  # small; read before waiting
    _, status, ru = os.wait4(p.pid, 0)
    ms = (time.monotonic() - t0) * 1000.0
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise WorkerError("%s: exit %d: %s" % (" ".join(argv), p.returncode, err.strip()[-1000:]))
    return ms, ru.ru_maxrss / 1024.0


def big_weights(a, work, dim, repeat=3):
    """The big-weights rows: [(what, ms to first result, peak RSS MiB)],
    and the weights' size in MiB."""
    run_quiet([PY, os.path.join(ROOT, "tools", "bench", "bench_models.py"),
               os.path.join(work, "models"), "--big", str(dim)])
    d = os.path.join(work, "models", "big-%d" % dim)
    model, x = os.path.join(d, "model.onnx"), os.path.join(d, "x.npy")
    gcb, out = os.path.join(work, "big.gcb"), os.path.join(work, "out", "big")
    g = os.path.join(a.build, "bin", "graphcc")
    cmds = [
        ("graphcc run model.onnx", [g, "run", model, "--threads", "1", "--input", "x=" + x,
                                    "--output-dir", out]),
        ("graphcc compile model.onnx", [g, "compile", model, "-o", gcb]),
        ("graphcc run model.gcb", [g, "run", gcb, "--threads", "1", "--input", "x=" + x,
                                   "--output-dir", out]),
    ]
    rows = []
    for what, argv in cmds:
        m = [run_measured(argv) for _ in range(repeat)]
        rows.append((what, statistics.median(v[0] for v in m), max(v[1] for v in m)))
    ort = []
    for _ in range(repeat):
        t0 = time.monotonic()
        w = Worker("ORT big", ["node", os.path.join(ROOT, "tools", "bench", "ort-worker.js"),
                               a.ort_modules, model, "1", "x=" + x],
                   os.path.join(work, "logs", "big-ort.log"))
        ort.append(((time.monotonic() - t0) * 1000.0, w.peak_rss_mib()))
        w.close()
    rows.append(("ONNX Runtime: create + first run (Node)", statistics.median(v[0] for v in ort),
                 max(v[1] for v in ort)))
    return rows, os.path.getsize(os.path.join(d, "weights.bin")) / 2**20


def custom_call(b):
    """The lines of `make bench-custom-call` and the largest overhead (ns)."""
    path = os.path.join(b, "bench", "custom-call.txt")
    if not os.path.exists(path):
        return [], None
    with open(path) as f:
        lines = [ln.strip() for ln in f if ln.startswith("custom node")]
    over = [float(x) for ln in lines for x in re.findall(r"overhead (\S+) ns", ln)]
    return lines, max(over) if over else None


def lscpu_model():
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
        m = re.search(r"^Model name:\s*(.+)$", out, re.M)
        return m.group(1).strip() if m else "unknown"
    except OSError:
        return "unknown"


def fmt(x):
    """Three significant digits, never an exponent (0.000107, 0.105, 77.1)."""
    if x >= 100 or x <= 0:
        return "%.1f" % x
    return "%.*f" % (max(0, 2 - math.floor(math.log10(x))), x)


def busy_report(busy):
    """The lines of the busy-machine table (bench_busy's rows)."""
    L = ["## On a busy machine", "",
         "The same workers while busy loops (`sh -c 'while :; do :; done'`, default "
         "priority) keep all but one of the machine's cores busy: a server's other work. "
         "Each runtime's time at more threads over its time at 1 (above 1: slower; "
         "a second thread must not make a run slower).", "",
         "| model | threads | graphcc ms | ORT ms | graphcc/ORT | time over 1 thread: graphcc / ORT |",
         "|---|---:|---:|---:|---:|---:|"]
    one = {r["model"]: r for r in busy if r["threads"] == 1}
    for r in busy:
        r1 = one.get(r["model"])
        over = ("%.2f / %.2f" % (r["graphcc_ms"] / r1["graphcc_ms"], r["ort_ms"] / r1["ort_ms"])
                if r1 and r["threads"] > 1 else "")
        L.append("| %s | %d | %s ±%.0f%% | %s ±%.0f%% | %.2f | %s |" % (
            MODELS[r["model"]], r["threads"], fmt(r["graphcc_ms"]), 100 * r["graphcc_spread"],
            fmt(r["ort_ms"]), 100 * r["ort_spread"], r["graphcc_ms"] / r["ort_ms"], over))
    L.append("")
    if any("base_ms" in r for r in busy):
        L.append("The baseline build in the same round-robin, on the busy machine: "
                 + "; ".join("%s %d thread(s) %s ms (after: %s)" % (
                     r["model"], r["threads"], fmt(r["base_ms"]), fmt(r["graphcc_ms"]))
                     for r in busy if "base_ms" in r) + ".")
        L.append("")
    return L


def report(rows, base_rss, ort_version, cl, cc_lines, cc_max, args, big=None, busy=None):
    L = []
    L.append("# graphcc vs ONNX Runtime (`make bench`)")
    L.append("")
    L.append("| model | threads | graphcc ms | ORT ms | graphcc/ORT | by round: graphcc/ORT "
             "| fastest samples: graphcc/ORT | speedup over 1 thread: graphcc / ORT "
             "| graphcc peak RSS MiB | ORT peak RSS MiB (minus Node baseline) | max abs diff |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    one = {r["model"]: r for r in rows if r["threads"] == 1}
    for r in rows:
        r1 = one.get(r["model"])
        speed = ("%.2f / %.2f" % (r1["graphcc_ms"] / r["graphcc_ms"], r1["ort_ms"] / r["ort_ms"])
                 if r1 and r["threads"] > 1 else "")
        ratios = (r["graphcc_ms"] / r["ort_ms"], r["paired"], r["graphcc_min"] / r["ort_min"])
        L.append("| %s | %d | %s ±%.0f%% | %s ±%.0f%% | %.2f | %.2f | %.2f | %s | %.1f | %.1f (%.1f) "
                 "| %.1e%s |" % (
            MODELS[r["model"]], r["threads"], fmt(r["graphcc_ms"]),
            100 * r.get("graphcc_spread", 0.0), fmt(r["ort_ms"]), 100 * r.get("ort_spread", 0.0),
            *ratios, speed, r["graphcc_rss"], r["ort_rss"],
            r["ort_rss"] - base_rss, r["diff"], "" if r["same"] else " MISMATCH"))
    L.append("")
    rounds = [r["rounds"] for r in rows] or [0]
    L.append("± is half the interquartile range of the samples, relative to the median. "
             "By round: the median over the round-robin's rounds of the ratio of the two "
             "sides' medians in that round (their blocks a second or so apart, at one "
             "thread on the same CPU), %d-%d rounds a row: a paired comparison, which a "
             "change of the machine's speed lasting seconds moves less than the ratio of "
             "the overall medians. Fastest samples: the ratio of each side's fastest "
             "sample. Both are to read where the medians spread: on a shared host (a VM "
             "whose cores' other hyperthreads run other tenants' work) every kernel runs "
             "up to 1.5x slower for seconds at a time, graphcc's more than ORT's. "
             "Speedup: the model's 1-thread median over this row's (above 1: faster)." % (
                 min(rounds), max(rounds)))
    L.append("")
    if busy:
        L += busy_report(busy)
    if any("base_ms" in r for r in rows):
        L.append("## Before and after (the baseline build in the same round-robin)")
        L.append("")
        L.append("| model | threads | before ms | after ms | ORT ms | before/ORT | after/ORT "
                 "| speedup over 1 thread: before / after / ORT | fastest sample: before / "
                 "after / ORT ms |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            if "base_ms" not in r:
                continue
            r1 = one.get(r["model"])
            speed = ("%.2f / %.2f / %.2f" % (r1["base_ms"] / r["base_ms"],
                                              r1["graphcc_ms"] / r["graphcc_ms"],
                                              r1["ort_ms"] / r["ort_ms"])
                     if r1 and "base_ms" in r1 and r["threads"] > 1 else "")
            L.append("| %s | %d | %s ±%.0f%% | %s ±%.0f%% | %s | %.2f | %.2f | %s | %s / %s / %s |"
                     % (MODELS[r["model"]], r["threads"], fmt(r["base_ms"]),
                        100 * r["base_spread"], fmt(r["graphcc_ms"]),
                        100 * r.get("graphcc_spread", 0.0), fmt(r["ort_ms"]),
                        r["base_ms"] / r["ort_ms"], r["graphcc_ms"] / r["ort_ms"], speed,
                        fmt(r["base_min"]), fmt(r["graphcc_min"]), fmt(r["ort_min"])))
        L.append("")
    if any(r.get("top_ops") for r in rows):
        L.append("## Where graphcc's time goes (top three op types)")
        L.append("")
        L.append("| model | threads | 1st | 2nd | 3rd |")
        L.append("|---|---:|---|---|---|")
        for r in rows:
            ops = ["%s %s ms (%.0f%%)" % (op, fmt(ms), 100 * share)
                   for op, ms, share in r.get("top_ops", [])]
            L.append("| %s | %d | %s |" % (MODELS[r["model"]], r["threads"],
                                          " | ".join((ops + ["", "", ""])[:3])))
        L.append("")
        L.append("Kernel time per op type (gc_session_run_debug's profile, the graphcc "
                 "worker's session, warm), ms per run over %d runs and its share of the "
                 "kernels' total." % PROFILE_RUNS)
        L.append("")
    L.append("Times: median ms per run. Each side runs in %d long-lived processes, their "
             "samples pooled (a process's memory placement alone moved the same build's "
             "times by up to 6 %% for a whole run), and each process "
             "times itself (graphcc: CLOCK_MONOTONIC around `gc_session_run`; ORT: "
             "`process.hrtime` around `await session.run`, so ORT's times include the "
             "Node binding's per-call cost, which the Identity row shows). After a "
             "warm-up the workers take turns (graphcc and ORT at 1 thread, then at 2, "
             "...: one round-robin per model, so the speedups over 1 thread are measured "
             "under the same load as the ratios) in blocks of ~%.1f s, each worker left "
             "to go idle before the next runs (both runtimes' pool threads spin for "
             "up to ~0.1 s after a run), until each side has at least %d samples and "
             "%.1f s; a fast model runs K times per sample (samples x K, graphcc | ORT: "
             "%s). In each round all the 1-thread workers are pinned to the same CPU, "
             "the next CPU in the next round: a virtual CPU's speed can change for "
             "seconds at a time, and unpinned, one runtime could sit on the slow one "
             "for a whole row (busy-machine rows are not pinned). "
             "ORT: onnxruntime-node, intraOpNumThreads = threads, "
             "interOpNumThreads 1, sequential, graph optimization 'all'. graphcc: "
             "`gc_session_new` with `threads` (its kernels split their work over its own "
             "worker pool; OpenBLAS runs single-threaded)." % (
                 args.procs, BLOCK_MS / 1000.0, args.min_runs, args.min_seconds, ", ".join(
                     "%s/%d %dx%d | %dx%d" % (r["model"], r["threads"], r["graphcc_samples"],
                                              r["graphcc_k"], r["ort_samples"], r["ort_k"])
                     for r in rows)))
    L.append("")
    L.append("Peak RSS: VmHWM of each worker. graphcc's worker imports and compiles the "
             ".onnx in-process, so its peak includes that. ORT is shown raw and, in "
             "parentheses, minus a Node process with onnxruntime-node loaded and no "
             "session (%.1f MiB)." % base_rss)
    L.append("")
    L.append("max abs diff: between the two workers' outputs for the same input "
             "(the model's real input.npy); a row over 1e-3 x max|ORT output| (QDQ "
             "rows and transformer-dynq: %g x, rounding steps) says MISMATCH." % QUANT_REL)
    L.append("")
    if any(r["model"] == "demo" for r in rows):
        L.append("1. demo: graphcc runs models/demo/model.onnx with its op package "
                 "plugins/demo (ChannelShuffle and two ScaledSwish nodes are custom nodes "
                 "calling the package's kernels). ONNX Runtime cannot load graphcc packages: "
                 "it runs the same network and weights exported with the two operations "
                 "decomposed into standard ONNX ops (Reshape, Transpose, Reshape; Sigmoid, "
                 "Mul), by tools/bench/bench_models.py.")
        L.append("")
    if cl:
        L.append("## Load and compile (resnet18)")
        L.append("")
        L.append("- `graphcc compile model.onnx -o resnet18.gcb`: %.0f ms wall "
                 "(median of 5, whole process; .onnx %.1f MiB)" % (cl["compile_ms"],
                                                                  cl["onnx_mib"]))
        L.append("- .gcb load (`gc_program_load` + first `gc_session_new`): %.2f ms median, "
                 "%.2f ms min (20 loads in one process); page-in (the file mapped afresh "
                 "and every byte read once, between the loads): %.2f ms median, so "
                 "graphcc's own part is %.2f ms; weights mapped from the file, "
                 "not copied: %s" % (cl["load_ms"], cl["load_min_ms"], cl["page_in_ms"],
                                     cl["load_ms"] - cl["page_in_ms"],
                                     "yes (the .gcb is in /proc/self/maps)" if cl["mapped"]
                                     else "NO: the .gcb is not mapped"))
        L.append("- .gcb size: %.1f MiB" % cl["gcb_mib"])
        r18 = [r for r in rows if r["model"] == "resnet18"]
        if r18:
            L.append("- prepare in the workers (.onnx to a session ready to run, %d "
                     "thread%s): graphcc %.0f ms (import + compile + session), ORT %.0f ms "
                     "(`InferenceSession.create`)" % (
                         r18[0]["threads"], "" if r18[0]["threads"] == 1 else "s",
                         r18[0]["graphcc_prepare_ms"], r18[0]["ort_prepare_ms"]))
        L.append("")
    if big:
        brows, wmib = big
        L.append("## Big weights (%.0f MiB of MatMul weights in ONNX external data)" % wmib)
        L.append("")
        L.append("| command (fresh process, 1 thread) | time to first result ms | peak RSS MiB "
                 "| RSS / weights |")
        L.append("|---|---:|---:|---:|")
        for what, ms, rss in brows:
            L.append("| %s | %.0f | %.0f | %.2f |" % (what, ms, rss, rss / wmib))
        L.append("")
        L.append("Wall time of the whole process (graphcc: `graphcc run` includes writing "
                 "the output; ORT: Node start, `InferenceSession.create`, one run), median "
                 "of 3; peak RSS: the largest of the 3 (wait4's ru_maxrss; ORT: VmHWM, "
                 "Node's %.0f MiB included)." % base_rss)
        L.append("")
    L.append("## Custom-op call overhead (`make bench-custom-call`)")
    L.append("")
    if cc_lines:
        for ln in cc_lines:
            L.append("- " + ln)
        L.append("- largest overhead %.1f ns: %s the %.0f ns limit" % (
            cc_max, "within" if cc_max <= CUSTOM_CALL_LIMIT_NS else "OVER", CUSTOM_CALL_LIMIT_NS))
    else:
        L.append("- not measured (run through `make bench`)")
    L.append("")
    cores = sorted({r["blas_core"] for r in rows if r["blas_core"] != "-"})
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = ["?"]
    L.append("Machine: %s, %d CPUs; ONNX Runtime %s (onnxruntime-node, CPU); OpenBLAS core "
             "%s; Node %s; load average %s at the end of the run (other work on the "
             "machine makes the numbers noisy)." % (
                 lscpu_model(), os.cpu_count() or 0, ort_version,
                 ", ".join(cores) or "not loaded", node_version(), " ".join(load)))
    return "\n".join(L) + "\n"


def node_version():
    try:
        return subprocess.run(["node", "--version"], stdout=subprocess.PIPE,
                              text=True).stdout.strip()
    except OSError:
        return "?"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--ort-modules", default=os.path.join(ROOT, "bench", "node_modules"))
    ap.add_argument("--only", default="", help="comma- or space-separated model names")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--min-runs", type=int, default=20)
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--procs", type=int, default=2,
                    help="worker processes a side (their samples pooled)")
    ap.add_argument("--baseline-build", default="",
                    help="also time this build's graphcc-worker (before a change), in the "
                         "same round-robin")
    ap.add_argument("--big-dim", type=int, default=2048,
                    help="big weights: DIM x DIM MatMul weights (8192: issue 19's 1.5 GB)")
    a = ap.parse_args(argv)
    if a.procs < 1:
        ap.error("--procs %d: at least 1 worker process a side" % a.procs)
    keys = [k for k in re.split(r"[,\s]+", a.only) if k] or list(MODELS) + ["big"]
    want_big = "big" in keys
    keys = [k for k in keys if k != "big"]
    bad = [k for k in keys if k not in MODELS]
    if bad:
        sys.exit("bench: unknown model %s; the models are: %s, big" % (", ".join(bad),
                                                                       ", ".join(MODELS)))
    threads = [int(t) for t in re.split(r"[,\s]+", a.threads) if t]
    if not threads or min(threads) < 1:
        sys.exit("bench: --threads wants positive counts, e.g. 1,2")
    if not os.path.exists(os.path.join(a.ort_modules, "onnxruntime-node", "package.json")):
        sys.exit("bench: onnxruntime-node is not installed in %s (make bench installs it)"
                 % a.ort_modules)
    work = os.path.join(a.build, "bench")
    logs = os.path.join(work, "logs")
    os.makedirs(logs, exist_ok=True)
    t_start = time.monotonic()

    print("== models", flush=True)
    make_models(keys, a.build, work)
    base_rss, ort_version = node_baseline(a, logs)
    print("== timing (A B A B in blocks; graphcc | ORT, median ms per run)", flush=True)
    rows, failed = [], []
    for key in keys:
        try:
            rs = bench_one(key, threads, a, work, logs)
        except WorkerError as e:
            print("  %s: FAILED: %s" % (key, e), flush=True)
            failed.append(key)
            continue
        for r in rs:
            rows.append(r)
            t = r["threads"]
            print("  %-14s t=%d  graphcc %9s ms | ORT %9s ms   ratio %.2f   max|diff| %.1e%s%s"
                  % (key, t, fmt(r["graphcc_ms"]), fmt(r["ort_ms"]),
                     r["graphcc_ms"] / r["ort_ms"], r["diff"],
                     "" if r["same"] else "  MISMATCH",
                     "   (before: %s ms)" % fmt(r["base_ms"]) if "base_ms" in r else ""),
                  flush=True)
            if not r["same"]:
                failed.append("%s/%d (outputs differ)" % (key, t))
    busy = []
    busy_keys = [k for k in BUSY_MODELS if k in keys] if len(threads) > 1 else []
    if busy_keys:
        print("== on a busy machine (%d busy loop(s) beside the workers)" % busy_loops(),
              flush=True)
    for key in busy_keys:
        try:
            rs = bench_busy(key, threads, a, work, logs)
        except WorkerError as e:
            print("  %s: FAILED: %s" % (key, e), flush=True)
            failed.append(key + " (busy)")
            continue
        busy += rs
        for r in rs:
            print("  %-14s t=%d  graphcc %9s ms | ORT %9s ms" % (
                key, r["threads"], fmt(r["graphcc_ms"]), fmt(r["ort_ms"])), flush=True)
    cl = None
    if "resnet18" in keys:
        print("== resnet18: graphcc compile, .gcb load", flush=True)
        try:
            cl = compile_and_load(a, work)
        except WorkerError as e:
            print("  FAILED: %s" % e, flush=True)
            failed.append("resnet18 compile/load")
    big = None
    if want_big:
        print("== big weights (%d x %d, six of them, external data)" % (a.big_dim, a.big_dim),
              flush=True)
        try:
            big = big_weights(a, work, a.big_dim)
            for what, ms, rss in big[0]:
                print("  %-42s %8.0f ms  %8.0f MiB" % (what, ms, rss), flush=True)
        except WorkerError as e:
            print("  FAILED: %s" % e, flush=True)
            failed.append("big weights")
    cc_lines, cc_max = custom_call(a.build)
    md = report(rows, base_rss, ort_version, cl, cc_lines, cc_max, a, big, busy)
    out = os.path.join(a.build, "bench.md")
    with open(out + ".tmp", "w") as f:
        f.write(md)
    os.replace(out + ".tmp", out)
    with open(os.path.join(work, "bench.json"), "w") as f:
        json.dump({"rows": rows, "busy_rows": busy, "node_baseline_rss_mib": base_rss,
                   "compile_load": cl,
                   "big_weights": big,
                   "custom_call": cc_lines}, f, indent=1)
    print()
    print(md)
    print("bench: written to %s (%.0f s)" % (out, time.monotonic() - t_start))
    if cc_max is not None and cc_max > CUSTOM_CALL_LIMIT_NS:
        failed.append("custom-call overhead %.1f ns > %.0f ns" % (cc_max, CUSTOM_CALL_LIMIT_NS))
    if failed:
        print("bench: FAILED: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
