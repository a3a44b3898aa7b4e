"""Big weights cost their bytes once (issue 19, item 7).

  bigweights/<cmd>   a model of four 1536x1536 MatMul weights (36 MiB) in ONNX
                     external data: `run model.onnx`, `compile` and `run model.gcb`
                     each give NumPy's result (tolerance 1e-4 x max|y|), and
                     their peak RSS above a tiny model's run (the process's own
                     libraries) is at most 1.2x the weights for run, 1.5x for
                     compile. Before external data was mapped and the .gcb writer
                     streamed, run took 2x and compile 3x.
                     Under a sanitizer build (whose shadow memory grows with every
                     byte touched) only the results are checked.
  bigweights/run-onnx-inline  the same weights inside the .onnx (raw_data, as
                     torch.onnx.export writes a model under 2 GB): at most 2.2x,
                     reading the file (1x) and parsing it (1x) being the floor.
                     Before the file's bytes and each parsed initializer were
                     freed as soon as the graph had them, the file, the parse,
                     the graph's copy and a transient copy of each tensor
                     overlapped: 3.3x (vgg11: 1.85 GB for 0.5 GB of weights);
                     before the graph read each big initializer into a block its
                     program shares (gc_pool_big) rather than copies, 2.32x.
"""
import os
import subprocess
import threading

import numpy as np

import run

DIM, LAYERS = 1536, 4


def _sanitized(ctx):
    """Whether graphcc is built with ASan or TSan (their shadow memory counts
    in RSS): whether it imports their __asan_init or __tsan_init. (Not the
    bytes of the file: runtime/dynlib-san.c names both in every build, which
    left every RSS limit here unjudged.)"""
    p = subprocess.run(["readelf", "--dyn-syms", "-W", ctx.graphcc], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    syms = p.stdout.split()
    return b"__asan_init" in syms or b"__tsan_init" in syms


def _make(d):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    model, x = os.path.join(d, "model.onnx"), os.path.join(d, "x.npy")
    rng = np.random.default_rng(5)
    ws = [(rng.standard_normal((DIM, DIM)) / np.sqrt(DIM)).astype(np.float32)
          for _ in range(LAYERS)]
    inline = os.path.join(d, "model-inline.onnx")
    if not (os.path.exists(model) and os.path.exists(inline)):
        nodes, prev = [], "x"
        for i in range(LAYERS):
            out = "y" if i == LAYERS - 1 else "h%d" % i
            nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], [out], name="mm%d" % i))
            prev = out
        g = helper.make_graph(nodes, "bigweights",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, DIM])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, DIM])],
                              initializer=[numpy_helper.from_array(w, "w%d" % i)
                                           for i, w in enumerate(ws)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save_model(m, inline)
        onnx.save_model(m, model, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=0)
    xv = rng.standard_normal((4, DIM)).astype(np.float32)
    np.save(x, xv)
    y = xv.astype(np.float64)
    for w in ws:
        y = y @ w.astype(np.float64)
    return model, x, y


# A child's peak RSS counts what it held before exec too: graphcc is started
# from a bare Python (about 10 MiB), not from this one (numpy, onnx loaded).
_SPAWN = """import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, ru = os.wait4(pid, 0)
sys.stderr.write("\\n@rss %d\\n" % ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _measured(ctx, args):
    """(returncode, stderr, peak RSS MiB) of one graphcc run."""
    p = subprocess.run(["/usr/bin/python3", "-S", "-c", _SPAWN, ctx.graphcc] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ctx.work,
                       env=run.ENV, timeout=run.TIMEOUT)
    err = p.stderr.decode(errors="replace")
    head, _, rss = err.rpartition("\n@rss ")
    return p.returncode, head, int(rss.split()[0]) / 1024.0 if rss.strip() else 0.0


def cases(ctx):
    d = os.path.join(ctx.work, "bigweights")
    state = {}
    lock = threading.Lock()

    def setup():
        with lock:
            return _setup()

    gcb_lock = threading.Lock()

    def _setup():
        if "model" not in state:
            os.makedirs(d, exist_ok=True)
            state["model"], state["x"], state["y"] = _make(d)
            for stale in ("model.gcb", "run.gcb"):  # from an earlier build
                if os.path.exists(os.path.join(d, stale)):
                    os.remove(os.path.join(d, stale))
            # the process's own size: a one-Relu model on the same input
            from onnx import TensorProto, helper
            import onnx
            tiny = os.path.join(d, "tiny.onnx")
            vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, DIM]) for n in "xy"]
            onnx.save(helper.make_model(helper.make_graph(
                [helper.make_node("Relu", ["x"], ["y"])], "tiny", vi[:1], vi[1:]),
                opset_imports=[helper.make_opsetid("", 13)]), tiny)
            rc, err, rss = _measured(ctx, ["run", tiny, "--threads", "1", "--input",
                                           "x=" + state["x"], "--output-dir",
                                           os.path.join(d, "tiny-out")])
            state["base"] = rss if rc == 0 else None
            state["base_err"] = err
        return state

    weights_mib = DIM * DIM * 4 * LAYERS / 2**20

    def case(what, limit):
        def fn():
            s = setup()
            if s["base"] is None:
                return run.Result(False, "the tiny baseline run failed", s["base_err"])
            gcb = os.path.join(d, "model.gcb")
            out = run.fresh_dir(os.path.join(d, "out-" + what.replace(" ", "-")))
            if what == "compile":
                args = ["compile", s["model"], "-o", gcb]
            else:
                with gcb_lock:  # its own copy: the compile case may be writing gcb
                    gcb = os.path.join(d, "run.gcb")
                    if what == "run gcb" and not os.path.exists(gcb):
                        rc, err, _ = _measured(ctx, ["compile", s["model"], "-o", gcb])
                        if rc:
                            return run.Result(False, "compile: " + run.describe_rc(rc), err)
                src = {"run onnx": s["model"],
                       "run onnx inline": os.path.join(d, "model-inline.onnx")}.get(what, gcb)
                args = ["run", src, "--threads", "1", "--input", "x=" + s["x"],
                        "--output-dir", out]
            rc, err, rss = _measured(ctx, args)
            if rc:
                return run.Result(False, "%s: %s" % (what, run.describe_rc(rc)), err)
            detail = ""
            if what != "compile":
                y = np.load(os.path.join(out, "y.npy"))
                e = float(np.abs(y - s["y"]).max() / np.abs(s["y"]).max())
                if not e <= 1e-4:
                    return run.Result(False, "max error %.2e x max|y| > 1e-4" % e)
                detail = "max error %.1e x max|y|; " % e
            extra = rss - s["base"]
            detail += "peak RSS %.0f MiB, %.0f above a tiny run, weights %.0f MiB (%.2fx)" % (
                rss, extra, weights_mib, extra / weights_mib)
            if _sanitized(ctx):
                return run.Result(True, detail + "; sanitizer build: RSS not judged")
            if extra > limit * weights_mib:
                return run.Result(False, detail + " > %.1fx" % limit)
            return run.Result(True, detail + " <= %.1fx" % limit)
        return fn

    return [("bigweights/run-onnx", case("run onnx", 1.2)),
            ("bigweights/compile", case("compile", 1.5)),
            ("bigweights/run-gcb", case("run gcb", 1.2)),
            ("bigweights/run-onnx-inline", case("run onnx inline", 2.2))]
