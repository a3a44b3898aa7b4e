#!/usr/bin/python3
"""End-to-end tests of the graphcc command.

Usage: run.py --graphcc PATH --work DIR [-k FILTER]... [-j JOBS]

Generates the op models and the PyTorch models into DIR/models (cached), then
runs every case as its own graphcc process with a timeout, printing one line
per case (PASS/FAIL name, and for a failure the reason and the tail of
graphcc's stderr), and last the line "N passed, N failed". Exit 1 if any
case failed (or none ran).

Cases:
  op/<case>                  each op model against its NumPy reference
  torch/<model>[.pb|.positional|.repeat]
                             real models: max abs error <= 1e-4 * max|reference|
  info/...                   `graphcc info` on a good model and on unknown ops
  malformed/...              broken models and inputs: exit 1, one message naming
                             the culprit, no output written, no crash
  usage/...                  usage errors: exit 2
  and the suites of tests/e2e/cases_*.py (op packages, ...)
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import numpy as np

# torch.onnx.export keeps global state: one export in the whole process at a
# time (cases run in threads; every cases_*.py that exports takes this lock)
TORCH_EXPORT = threading.RLock()

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # keep the source tree clean

import fixtures  # noqa: E402

TIMEOUT = 60
TORCH_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_0", "transformer", "mlp", "mlp64"]
TORCH_REL = 1e-4
# Under `make test SAN=1` a sanitizer report must fail the case, whatever the
# expected exit status (ASan exits 1 by default, which a refusal test expects).
SANITIZER_RC = 86
# abort, SIGFPE, SIGKILL, SIGSEGV (as a shell reports them), sanitizer report
CRASH_CODES = {134, 136, 137, 139, SANITIZER_RC}
SANITIZER_RE = re.compile(r"ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error: |"
                          r"UndefinedBehaviorSanitizer")
ENV = dict(os.environ)
# Cases say which packages they load; a user's own setting must not leak in.
ENV.pop("GRAPHCC_OPS_PATH", None)
for _var in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
    if "exitcode" not in ENV.get(_var, ""):
        ENV[_var] = ":".join(filter(None, [ENV.get(_var), "exitcode=%d" % SANITIZER_RC]))


class Ctx:
    def __init__(self, graphcc, work):
        self.graphcc = graphcc
        self.work = work
        self.models = os.path.join(work, "models")
        self.ops = os.path.join(self.models, "ops")
        self.torch = os.path.join(self.models, "torch")
        self.fix = os.path.join(work, "fixtures")
        self.out = os.path.join(work, "out")
        self.root = ROOT
        # graphcc is BUILD/bin/graphcc; plugins and fixture packages are built
        # under BUILD/plugins/<name>/ and BUILD/tests/packages/<name>/.
        self.build = os.path.dirname(os.path.dirname(graphcc))
        self.plugins = os.path.join(self.build, "plugins")
        self.packages = os.path.join(self.build, "tests", "packages")


class Result:
    def __init__(self, ok, detail="", stderr=""):
        self.ok, self.detail, self.stderr = ok, detail, stderr


def run_graphcc(ctx, args):
    """-> (returncode or None on timeout, stdout, stderr)."""
    try:
        p = subprocess.run([ctx.graphcc] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT, cwd=ctx.work, env=ENV)
    except subprocess.TimeoutExpired as e:
        return None, _txt(e.stdout), _txt(e.stderr)
    err = _txt(p.stderr)
    if SANITIZER_RE.search(err):
        return SANITIZER_RC, _txt(p.stdout), err
    return p.returncode, _txt(p.stdout), err


def _txt(b):
    return (b or b"").decode("utf-8", "replace")


def fresh_dir(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def describe_rc(rc):
    if rc is None:
        return "timed out after %ds" % TIMEOUT
    if rc < 0:
        return "killed by signal %d" % -rc
    if rc == SANITIZER_RC:
        return "sanitizer report"
    return "exit %d" % rc


# ---------------------------------------------------------------- comparisons

def save_inputs(d, inputs):
    """Writes each {name: array} as d/name.npy; the `--input name=file` arguments."""
    args = []
    for k, v in inputs.items():
        p = os.path.join(d, k + ".npy")
        np.save(p, v)
        args += ["--input", "%s=%s" % (k, p)]
    return args


def compare(got_path, want, rtol, atol):
    """None if the file at got_path holds `want` within tolerance, else why not."""
    if not os.path.exists(got_path):
        return "output %s was not written" % os.path.basename(got_path)
    try:
        got = np.load(got_path, allow_pickle=False)
    except Exception as e:
        return "output %s is not a readable .npy: %s" % (os.path.basename(got_path), e)
    name = os.path.basename(got_path)
    if got.dtype != want.dtype:
        return "%s: dtype %s, expected %s" % (name, got.dtype, want.dtype)
    if got.shape != want.shape:
        return "%s: shape %s, expected %s" % (name, got.shape, want.shape)
    if want.size == 0:
        return None
    if want.dtype.kind in "fc":
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if ok.all():
            return None
        bad = np.argwhere(~ok)
        idx = tuple(bad[0])
        err = np.where(np.isnan(g) | np.isnan(w), np.inf, np.abs(g - w))
        worst = np.unravel_index(np.nanargmax(np.where(ok, -1, err)), err.shape)
        return ("%s: %d of %d values differ (rtol %g atol %g); first at %s: got %r, "
                "expected %r; worst at %s: got %r, expected %r"
                % (name, len(bad), want.size, rtol, atol, list(idx), g[idx], w[idx],
                   list(worst), g[worst], w[worst]))
    if np.array_equal(got, want):
        return None
    bad = np.argwhere(got != want)
    idx = tuple(bad[0])
    return ("%s: %d of %d values differ; first at %s: got %r, expected %r"
            % (name, len(bad), want.size, list(idx), got[idx], want[idx]))


# ---------------------------------------------------------------- op models

def op_case(ctx, name):
    d = os.path.join(ctx.ops, name)
    with open(os.path.join(d, "case.json")) as f:
        meta = json.load(f)
    out = fresh_dir(os.path.join(ctx.out, "op", name))
    args = ["run", os.path.join(d, "model.onnx")]
    for i, n in enumerate(meta["inputs"]):
        args += ["--input", "%s=%s" % (n, os.path.join(d, "input_%d.npy" % i))]
    args += ["--output-dir", out]
    rc, _, err = run_graphcc(ctx, args)
    if rc != 0:
        return Result(False, describe_rc(rc), err)
    for j, n in enumerate(meta["outputs"]):
        want = np.load(os.path.join(d, "expected_%d.npy" % j))
        why = compare(os.path.join(out, n + ".npy"), want, meta["rtol"], meta["atol"])
        if why:
            return Result(False, why, err)
    return Result(True)


# ---------------------------------------------------------------- torch models

def torch_input_pb(ctx, name):
    from onnx import numpy_helper
    d = os.path.join(ctx.torch, name)
    npy, pb = os.path.join(d, "input.npy"), os.path.join(d, "input.pb")
    if not os.path.exists(pb) or os.path.getmtime(pb) < os.path.getmtime(npy):
        t = numpy_helper.from_array(np.load(npy), "input")
        with open(pb + ".tmp", "wb") as f:
            f.write(t.SerializeToString())
        os.replace(pb + ".tmp", pb)
    return pb


def torch_case(ctx, name, variant):
    d = os.path.join(ctx.torch, name)
    tag = name + ("." + variant if variant else "")
    out = fresh_dir(os.path.join(ctx.out, "torch", tag))
    args = ["run", os.path.join(d, "model.onnx")]
    if variant == "pb":
        args += ["--input", "input=" + torch_input_pb(ctx, name)]
    elif variant == "positional":
        args += ["--input", os.path.join(d, "input.npy")]
    elif variant == "repeat":
        # The last of several runs on one input must still be right (the
        # arena must not reuse an input's memory), on one thread.
        args += ["--input", "input=" + os.path.join(d, "input.npy"),
                 "--repeat", "3", "--threads", "1"]
    else:
        args += ["--input", "input=" + os.path.join(d, "input.npy")]
    args += ["--output-dir", out]
    t0 = time.time()
    rc, _, err = run_graphcc(ctx, args)
    secs = time.time() - t0
    if rc != 0:
        return Result(False, describe_rc(rc), err)
    want = np.load(os.path.join(d, "expected.npy"))
    path = os.path.join(out, "output.npy")
    if not os.path.exists(path):
        return Result(False, "output output.npy was not written", err)
    got = np.load(path, allow_pickle=False)
    if got.dtype != want.dtype or got.shape != want.shape:
        return Result(False, "got %s %s, expected %s %s"
                      % (got.dtype, got.shape, want.dtype, want.shape), err)
    ref = float(np.abs(want).max())
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    maxerr = float(np.inf) if not np.isfinite(diff).all() else float(diff.max())
    rel = maxerr / ref if ref else maxerr
    msg = "maxerr=%.1e (rel %.1e) %.2fs" % (maxerr, rel, secs)
    if not maxerr <= TORCH_REL * ref:
        return Result(False, msg + ": above %g x max|reference| = %.1e"
                      % (TORCH_REL, TORCH_REL * ref), err)
    return Result(True, msg)


# ---------------------------------------------------------------- info

def info_resnet(ctx):
    rc, out, err = run_graphcc(ctx, ["info", os.path.join(ctx.torch, "resnet18", "model.onnx")])
    if rc != 0:
        return Result(False, describe_rc(rc), err)
    if "Conv" not in out:
        return Result(False, "stdout does not mention Conv", out)
    if not re.search(r"\b1\D{1,4}3\D{1,4}224\D{1,4}224\b", out):
        return Result(False, "stdout does not show the input shape 1x3x224x224", out)
    return Result(True)


def info_unsupported(ctx):
    path = fixtures.unsupported_model(os.path.join(ctx.fix, "unknown_ops.onnx"))
    rc, out, err = run_graphcc(ctx, ["info", path])
    text = out + err
    if rc != 1:
        return Result(False, "%s, expected exit 1" % describe_rc(rc), text)
    lines = text.splitlines()
    for node, op, domain in [("foo_node", "FooBar", None), ("baz_node", "Baz", "com.x"),
                             ("custom_relu", "Relu", "com.x")]:
        hit = [ln for ln in lines if node in ln]
        if not hit:
            return Result(False, "node %s (%s) is not listed" % (node, op), text)
        if not any(op in ln and (domain is None or domain in ln) for ln in hit):
            return Result(False, "node %s is listed without its op type %s%s"
                          % (node, op, " and domain " + domain if domain else ""), text)
    if any("builtin_relu" in ln and re.search(r"unsupported|unknown", ln, re.I)
           for ln in lines):
        return Result(False, "the built-in Relu node is listed as unsupported", text)
    return Result(True)


# ---------------------------------------------------------------- malformed

def expect_refusal(ctx, tag, args, must_name, outputs=("scores",)):
    """graphcc must exit 1 with a short stderr message that contains every
    string (or matches every regex) of must_name, write no output, not crash
    and not hang."""
    out = fresh_dir(os.path.join(ctx.out, "malformed", tag))
    rc, sout, err = run_graphcc(ctx, args + ["--output-dir", out])
    if rc is None or rc < 0 or rc in CRASH_CODES:
        return Result(False, "crashed or hung: " + describe_rc(rc), err)
    if rc != 1:
        return Result(False, "%s, expected exit 1" % describe_rc(rc), err)
    msg = err.strip()
    if not msg:
        return Result(False, "exit 1 but nothing on stderr", sout)
    lines = [ln for ln in msg.splitlines() if ln.strip()]
    if len(lines) > 5:
        return Result(False, "%d lines on stderr, expected one message" % len(lines), err)
    for s in must_name:
        if not (s.search(msg) if hasattr(s, "search") else s in msg):
            return Result(False, "message does not name %r"
                          % getattr(s, "pattern", s), err)
    written = os.listdir(out) if os.path.isdir(out) else []
    if written:
        return Result(False, "output written anyway: %s" % ", ".join(sorted(written)), err)
    return Result(True)


def malformed_cases(ctx):
    """-> list of (name, fn). Builds the fixtures (cheap) first."""
    d = fresh_dir(os.path.join(ctx.fix, "malformed"))
    base = fixtures.base_model(os.path.join(d, "base.onnx"))
    good = fixtures.good_input(os.path.join(d, "pixels.npy"))
    feed = ["--input", "%s=%s" % (fixtures.IN, good)]
    cases = []

    def refuse(name, args, must_name):
        cases.append(("malformed/" + name,
                      lambda: expect_refusal(ctx, name.replace("/", "_"), args, must_name)))

    def bad_model(name, path, extra=()):
        refuse(name, ["run", path] + feed, [os.path.basename(path)] + list(extra))

    src = os.path.join(ctx.ops, "conv_pads_strides", "model.onnx")
    for cut, p in fixtures.truncated_copies(src, d, "conv"):
        bad_model("onnx-truncated-at-%d" % cut, p)
    big = os.path.join(ctx.torch, "squeezenet1_0", "model.onnx")
    if os.path.exists(big):
        with open(big, "rb") as f:
            data = f.read()
        p = os.path.join(d, "squeezenet_cut_half.onnx")
        with open(p, "wb") as f:
            f.write(data[:len(data) // 2])
        bad_model("onnx-truncated-large-model", p)
    bad_model("onnx-random-bytes", fixtures.random_bytes(os.path.join(d, "noise.onnx"), 4096, 3))
    bad_model("onnx-random-bytes-small", fixtures.random_bytes(os.path.join(d, "tiny_noise.onnx"), 17, 4))
    empty = os.path.join(d, "empty.onnx")
    open(empty, "wb").close()
    bad_model("onnx-empty-file", empty)
    bad_model("onnx-nonexistent", os.path.join(d, "no_such_model.onnx"))
    bad_model("onnx-directory", fresh_dir(os.path.join(d, "a_directory.onnx")))
    for name, p in sorted(fixtures.npy_variants(d).items()):
        refuse(name, ["run", base, "--input", "%s=%s" % (fixtures.IN, p)],
               [os.path.basename(p)])
    bad_model("model-undefined-tensor",
              fixtures.undefined_tensor_model(os.path.join(d, "ghost.onnx")), ["uses_ghost"])
    bad_model("model-cycle", fixtures.cycle_model(os.path.join(d, "cycle.onnx")),
              [re.compile(r"cycle_[ab]")])
    bad_model("model-duplicate-producer",
              fixtures.duplicate_producer_model(os.path.join(d, "dup.onnx")), ["twice_made"])
    refuse("missing-required-input", ["run", base], [fixtures.IN])
    refuse("outputs-same-file-name",
           ["run", fixtures.clashing_outputs_model(os.path.join(d, "clash.onnx"))] + feed,
           ["'out/a'", "'out_a'"])
    return cases


# ---------------------------------------------------------------- usage

def usage_cases(ctx):
    base = os.path.join(ctx.fix, "usage_base.onnx")
    fixtures.base_model(base)
    spec = [("no-arguments", []),
            ("unknown-subcommand", ["frobnicate", base]),
            ("run-without-model", ["run"]),
            ("unknown-option", ["run", base, "--no-such-option"]),
            ("input-without-value", ["run", base, "--input"]),
            ("output-dir-without-value", ["run", base, "--output-dir"]),
            ("shape-malformed-dims", ["run", base, "--shape", "pixels=2xbanana"]),
            ("shape-without-equals", ["run", base, "--shape", "pixels"]),
            ("shape-empty-dim", ["run", base, "--shape", "pixels=2xx3"])]
    return [("usage/" + n, (lambda a=a: expect_usage(ctx, a))) for n, a in spec]


def expect_usage(ctx, args):
    rc, out, err = run_graphcc(ctx, args)
    if rc != 2:
        return Result(False, "%s, expected exit 2" % describe_rc(rc), err)
    if not (err.strip() or out.strip()):
        return Result(False, "exit 2 but no message", "")
    return Result(True)


# ---------------------------------------------------------------- driver

def generate(ctx, need_torch):
    py = sys.executable
    t0 = time.time()
    for script, dst, on in [("op_models.py", ctx.ops, True),
                            ("torch_models.py", ctx.torch, need_torch)]:
        if not on:
            continue
        r = subprocess.run([py, os.path.join(ROOT, "tests", "models", script), dst],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        text = _txt(r.stdout)
        for ln in text.splitlines():
            if "Warning" in ln or ln.startswith(" "):
                continue  # torch.onnx's chatter
            print("  " + ln)
        if r.returncode != 0:
            print(text)
            print("FAIL generation/%s: exit %d" % (script, r.returncode))
            return False
    print("generation: %.1fs" % (time.time() - t0), flush=True)
    return True


def selected(name, filters):
    return not filters or any(f in name for f in filters)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-k", dest="filters", action="append", default=[],
                    help="run only cases whose name contains this (repeatable)")
    ap.add_argument("-j", dest="jobs", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    t0 = time.time()
    ctx = Ctx(os.path.abspath(a.graphcc), os.path.abspath(a.work))
    os.makedirs(ctx.work, exist_ok=True)
    os.makedirs(ctx.fix, exist_ok=True)

    torch_names = ["info/resnet18"] + ["torch/%s%s" % (m, v) for m in TORCH_MODELS
                                       for v in ("", ".pb", ".positional", ".repeat")]
    torch_names.append("malformed/onnx-truncated-large-model")
    need_torch = any(selected(n, a.filters) for n in torch_names)
    if not generate(ctx, need_torch):
        print("0 passed, 1 failed")
        return 1

    cases = []
    for name in sorted(os.listdir(ctx.ops)):
        if os.path.exists(os.path.join(ctx.ops, name, "case.json")):
            cases.append(("op/" + name, (lambda n=name: op_case(ctx, n))))
    for m in TORCH_MODELS:
        for v in ("", "pb", "positional", "repeat"):
            cases.append(("torch/%s%s" % (m, "." + v if v else ""),
                          (lambda m=m, v=v: torch_case(ctx, m, v))))
    cases.append(("info/resnet18", lambda: info_resnet(ctx)))
    cases.append(("info/unsupported-ops", lambda: info_unsupported(ctx)))
    cases += malformed_cases(ctx)
    cases += usage_cases(ctx)
    # More suites live in tests/e2e/cases_*.py, each with cases(ctx) -> [(name, fn)].
    import importlib
    for fname in sorted(os.listdir(HERE)):
        if fname.startswith("cases_") and fname.endswith(".py"):
            mod = importlib.import_module(fname[:-3])
            cases += mod.cases(ctx)
    cases = [(n, f) for n, f in cases if selected(n, a.filters)]

    if not os.access(ctx.graphcc, os.X_OK):
        for n, _ in cases:
            print("FAIL %s: %s is not an executable" % (n, ctx.graphcc))
        print("%d passed, %d failed" % (0, len(cases)))
        return 1

    def guarded(fn):
        try:
            return fn()
        except Exception as e:  # a bug in a check must show, not stop the run
            return Result(False, "test error: %s: %s" % (type(e).__name__, e))

    passed = failed = 0
    t1 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        futs = [(n, pool.submit(guarded, f)) for n, f in cases]
        for n, fut in futs:
            r = fut.result()
            if r.ok:
                passed += 1
                print("PASS %s%s" % (n, " " + r.detail if r.detail else ""), flush=True)
            else:
                failed += 1
                print("FAIL %s: %s" % (n, r.detail), flush=True)
                lines = [ln for ln in (r.stderr or "").splitlines() if ln.strip()]
                first = next((i for i, ln in enumerate(lines) if SANITIZER_RE.search(ln)), None)
                shown = lines[first:first + 10] if first is not None else lines[-8:]
                for ln in shown:
                    print("    | " + ln[:300])
    print("e2e: %d cases in %.1fs (total with generation %.1fs)"
          % (len(cases), time.time() - t1, time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
