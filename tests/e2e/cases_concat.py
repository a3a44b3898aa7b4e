"""Concat in place (runtime/liveness.c gc_share_memory): the memory plan puts
each Concat input at its slice of the output, its writer writes there and the
Concat copies nothing, end to end.

  concat/<case>     onnx.helper graphs (tensors 1x16x64x64 float32 = 0.25 MiB,
                    so `graphcc compile`'s "arena N MiB" tells what was
                    shared): the arena is the stated size (the marker that
                    the inputs were placed, or were not); the .gcb at 1 and 2
                    threads, the .onnx with --no-optimize, with --no-arena,
                    and the .gcb under --trace --check-nan --dump-dir (every
                    tensor dumped holds its NumPy value, members included)
                    match NumPy in float64 (|err| <= 1e-5 x max|ref| + 1e-6).
                    Cases: two members (a fire module), inputs that must be
                    copied (an initializer, a graph input, one tensor twice),
                    a tensor in two Concats, a member read again after the
                    Concat, a member a later node would update in place, a
                    member that is a graph output, nested Concats, a densenet
                    block (Concats of a growing list, placed in one block),
                    batch 2 on axis 1 and axis 2 (not contiguous: copied),
                    batch 2 on axis 0 (contiguous), a custom kernel (the demo
                    package's ScaledSwish, in place of its input too) writing
                    a member (also under --guard), and --dynamic (copied).
  concat/hostile-gcb  a .gcb whose Concat inputs were moved off their slices
                    (onto another's, or swapped) is refused by the loader's
                    plan check (exit 1, "corrupted program", "shares arena
                    bytes").
  concat/torch      squeezenet's Fire modules and a densenet block in a small
                    PyTorch model, exported by torch.onnx.export, against
                    PyTorch's output.
"""
import os
import re

import numpy as np

import run

ARENA_RE = re.compile(r"arena ([0-9.]+) MiB")
REL = 1e-5
U = (1, 16, 64, 64)  # 256 KiB
UNIT_MIB = 0.25


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def _fixtures():
    """name -> (build(path) -> (inputs, outputs, dumps), arena in units of U
    or None, extra compile/run flags)."""
    from onnx import TensorProto, helper, numpy_helper

    n = helper.make_node

    def save(path, nodes, inputs, outputs, inits=None, dynamic=False, custom=False):
        def vi(k, v):
            shape = ["N"] + list(v.shape[1:]) if dynamic else list(v.shape)
            return helper.make_tensor_value_info(k, TensorProto.FLOAT, shape)
        g = helper.make_graph(
            nodes, "concat", [vi(k, v) for k, v in inputs.items()],
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, None) for k in outputs],
            [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
        ops = [helper.make_opsetid("", 13)]
        if custom:
            ops.append(helper.make_opsetid("com.graphcc.demo", 1))
        m = helper.make_model(g, opset_imports=ops, producer_name="graphcc-e2e")
        m.ir_version = 8
        with open(path, "wb") as f:
            f.write(m.SerializeToString())

    rng = np.random.default_rng(1919)

    def x_of(shape=U):
        return rng.standard_normal(shape).astype(np.float32)

    def fire(path, shape=U, axis=1):
        """a = Relu(x), b = Sigmoid(x), c = Concat(a, b), y = Neg(c)"""
        x = x_of(shape)
        xd = x.astype(np.float64)
        a, b = np.maximum(xd, 0), _sig(xd)
        c = np.concatenate([a, b], axis)
        save(path, [n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]),
                    n("Concat", ["a", "b"], ["c"], axis=axis), n("Neg", ["c"], ["y"])],
             {"x": x}, ["y"])
        return {"x": x}, {"y": -c}, {"a": a, "b": b, "c": c}

    def copied(path, kind):
        """Concat inputs that cannot be written in place, next to ones that are"""
        x = x_of()
        xd = x.astype(np.float64)
        a, b = np.maximum(xd, 0), _sig(xd)
        inits, nodes = {}, [n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"])]
        if kind == "initializer":
            k = x_of()
            inits["k"] = k
            parts, vals = ["a", "k", "b"], [a, k.astype(np.float64), b]
        elif kind == "graph-input":
            parts, vals = ["x", "a", "b"], [xd, a, b]
        else:  # the same tensor twice
            parts, vals = ["a", "b", "a"], [a, b, a]
        c = np.concatenate(vals, 1)
        nodes += [n("Concat", parts, ["c"], axis=1), n("Neg", ["c"], ["y"])]
        save(path, nodes, {"x": x}, ["y"], inits)
        return {"x": x}, {"y": -c}, {"c": c}

    def two_concats(path):
        """a and b in two Concats, in other orders"""
        x = x_of()
        xd = x.astype(np.float64)
        a, b = np.maximum(xd, 0), _sig(xd)
        c1, c2 = np.concatenate([a, b], 1), np.concatenate([b, a], 1)
        save(path, [n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]),
                    n("Concat", ["a", "b"], ["c1"], axis=1),
                    n("Concat", ["b", "a"], ["c2"], axis=1),
                    n("Neg", ["c1"], ["y1"]), n("Neg", ["c2"], ["y2"])],
             {"x": x}, ["y1", "y2"])
        return {"x": x}, {"y1": -c1, "y2": -c2}, {"c1": c1, "c2": c2}

    def read_after(path, in_place):
        """a is read again after the Concat (z = a + mean(c) comes after it),
        by an Add whose kernel may write its output over its input a, or
        reading only (a is Add's second input), before the Concat's output
        is read again (y = c + mean(z) needs z first)"""
        x = x_of()
        xd = x.astype(np.float64)
        a, b = np.maximum(xd, 0), np.tanh(xd)
        c = np.concatenate([a, b], 1)
        z = a + c.mean()
        save(path, [n("Relu", ["x"], ["a"]), n("Tanh", ["x"], ["b"]),
                    n("Concat", ["a", "b"], ["c"], axis=1),
                    n("ReduceMean", ["c"], ["r"], keepdims=1),
                    n("Add", ["a", "r"] if in_place else ["r", "a"], ["z"]),
                    n("ReduceMean", ["z"], ["w"], keepdims=1), n("Add", ["c", "w"], ["y"])],
             {"x": x}, ["y", "z"])
        return {"x": x}, {"y": c + z.mean(), "z": z}, {"a": a, "c": c}

    def outputs(path):
        """a member and the Concat itself are graph outputs"""
        x = x_of()
        xd = x.astype(np.float64)
        a, b = np.maximum(xd, 0), _sig(xd)
        c = np.concatenate([a, b], 1)
        save(path, [n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]),
                    n("Concat", ["a", "b"], ["c"], axis=1)], {"x": x}, ["a", "c"])
        return {"x": x}, {"a": a, "c": c}, {}

    def nested(path):
        """c2 = Concat(Concat(a, b), d)"""
        x = x_of()
        xd = x.astype(np.float64)
        a, b, d = np.maximum(xd, 0), _sig(xd), np.tanh(xd)
        c1 = np.concatenate([a, b], 1)
        c2 = np.concatenate([c1, d], 1)
        save(path, [n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]),
                    n("Concat", ["a", "b"], ["c1"], axis=1), n("Tanh", ["x"], ["d"]),
                    n("Concat", ["c1", "d"], ["c2"], axis=1), n("Neg", ["c2"], ["y"])],
             {"x": x}, ["y"])
        return {"x": x}, {"y": -c2}, {"a": a, "c1": c1, "c2": c2, "d": d}

    def dense(path, layers=3):
        """densenet's block: layer k reads the Concat of everything before
        it (here Tanh of 16 of its channels) and adds 16 channels"""
        x = x_of()
        feats, names = [np.maximum(x.astype(np.float64), 0)], ["f0"]
        nodes, inits, dumps = [n("Relu", ["x"], ["f0"])], {}, {"f0": feats[0]}
        for k in range(1, layers + 1):
            cat = "cat%d" % k
            nodes.append(n("Concat", list(names), [cat], axis=1))
            whole = np.concatenate(feats, 1)
            dumps[cat] = whole
            lo = 16 * (k - 1) // 2
            inits["s%d" % k] = np.array([lo], np.int64)
            inits["e%d" % k] = np.array([lo + 16], np.int64)
            inits["ax%d" % k] = np.array([1], np.int64)
            nodes += [n("Slice", [cat, "s%d" % k, "e%d" % k, "ax%d" % k], ["sl%d" % k]),
                      n("Tanh", ["sl%d" % k], ["f%d" % k])]
            feats.append(np.tanh(whole[:, lo:lo + 16]))
            names.append("f%d" % k)
            dumps["f%d" % k] = feats[-1]
        nodes += [n("Concat", names, ["out"], axis=1), n("Neg", ["out"], ["y"])]
        out = np.concatenate(feats, 1)
        dumps["out"] = out
        save(path, nodes, {"x": x}, ["y"], inits)
        return {"x": x}, {"y": -out}, dumps

    def custom(path, chain):
        """the demo package's ScaledSwish writes a member (chain: in place of
        a Relu, whose bytes then are the slice)"""
        x = x_of()
        xd = x.astype(np.float64)
        beta = (rng.random(16) + 0.5).astype(np.float32)
        src = np.maximum(xd, 0) if chain else xd
        bb = beta.astype(np.float64)[None, :, None, None]
        a = 1.5 * src * _sig(bb * src)
        b = np.tanh(xd)
        c = np.concatenate([b, a], 1)
        nodes = [n("Relu", ["x"], ["r"])] if chain else []
        nodes += [n("ScaledSwish", ["r" if chain else "x"], ["a"], domain="com.graphcc.demo",
                    beta=[float(v) for v in beta], scale=1.5),
                  n("Tanh", ["x"], ["b"]), n("Concat", ["b", "a"], ["c"], axis=1),
                  n("Neg", ["c"], ["y"])]
        save(path, nodes, {"x": x}, ["y"], custom=True)
        return {"x": x}, {"y": -c}, {"a": a, "c": c}

    def dynamic(path):
        inputs, outs, _ = fire(path)
        x = inputs["x"]
        xd = x.astype(np.float64)
        c = np.concatenate([np.maximum(xd, 0), _sig(xd)], 1)
        save(path, [n("Relu", ["x"], ["a"]), n("Sigmoid", ["x"], ["b"]),
                    n("Concat", ["a", "b"], ["c"], axis=1), n("Neg", ["c"], ["y"])],
             {"x": x}, ["y"], dynamic=True)
        return {"x": x}, {"y": -c}, {}

    B2 = (2,) + U[1:]
    return {
        # x stays live (1 unit); a and b are c's halves, y takes c's bytes: 3
        # (copied: x + a + b + c = 5)
        "fire": (fire, 3, []),
        "copied-initializer": (lambda p: copied(p, "initializer"), 4, []),
        "copied-graph-input": (lambda p: copied(p, "graph-input"), 4, []),
        "same-tensor-twice": (lambda p: copied(p, "twice"), 4, []),
        # c2 (Concat read last) holds b, a; c1 copies them: x + c2 + c1
        # (+ y1 over c1, y2 over c2)
        "two-concats": (two_concats, 5, []),
        # a read again after c (by Mul, or Sigmoid, which could run in
        # place): z never takes a's bytes, y takes c's: x + c + z
        "read-after": (lambda p: read_after(p, False), 4, []),
        "in-place-after": (lambda p: read_after(p, True), 4, []),
        "graph-outputs": (outputs, 3, []),
        "nested": (nested, 4, []),
        # x + one block of 4 units for every Concat (the Slices write into it)
        "densenet-block": (dense, 5, []),
        # batch 2, axis 1: slices not contiguous, copied (x 2 + a 2 + b 2 + c 4)
        "batch2-axis1": (lambda p: fire(p, B2, 1), 10, []),
        "batch2-axis0": (lambda p: fire(p, B2, 0), 6, []),
        "axis2": (lambda p: fire(p, U, 2), 5, []),
        "custom-kernel": (lambda p: custom(p, False), 3, ["ops"]),
        "custom-in-place-chain": (lambda p: custom(p, True), 3, ["ops"]),
        "dynamic": (dynamic, None, ["dynamic"]),
    }


def _check_dir(o, want, label):
    for k, v in want.items():
        v = np.asarray(v, np.float32)
        why = run.compare(os.path.join(o, k + ".npy"), v, 0, REL * float(np.abs(v).max()) + 1e-6)
        if why:
            return "%s: %s" % (label, why)
    return None


def fixture_case(ctx, name):
    build, units, flags = _fixtures()[name]
    d = run.fresh_dir(os.path.join(ctx.fix, "concat", name))
    model = os.path.join(d, "model.onnx")
    inputs, outs, dumps = build(model)
    ops = ["--ops", os.path.join(ctx.plugins, "demo", "demo.yaml")] if "ops" in flags else []
    gcb = os.path.join(d, "model.gcb")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb] + ops +
                                   (["--dynamic"] if "dynamic" in flags else []))
    if rc != 0:
        return run.Result(False, "compile: " + run.describe_rc(rc), err)
    m = ARENA_RE.search(out)
    # (a custom node's parameters take a few bytes more)
    if units is not None and (not m or abs(float(m.group(1)) - units * UNIT_MIB) > 0.01):
        return run.Result(False, "arena %s MiB, expected %.3f" % (
            m.group(1) if m else "?", units * UNIT_MIB), out)
    args = run.save_inputs(d, inputs)
    runs = [(gcb, ["--threads", "1"]), (gcb, ["--threads", "2"]),
            (model, ["--no-optimize"]), (model, ["--no-arena", "--threads", "2"]),
            (gcb, ["--trace", "--check-nan", "--dump-dir", "DUMP"])]
    if ops:
        runs.append((gcb, ["--guard"]))
    for i, (what, extra) in enumerate(runs):
        o = run.fresh_dir(os.path.join(d, "out%d" % i))
        dump = os.path.join(d, "dump%d" % i)
        extra = [dump if e == "DUMP" else e for e in extra]
        label = "%s %s" % (os.path.basename(what), " ".join(extra))
        rc, _, err = run.run_graphcc(ctx, ["run", what, "--output-dir", o] + args + extra +
                                     (ops if what == model else []))
        if rc != 0:
            return run.Result(False, "run %s: %s" % (label, run.describe_rc(rc)), err)
        why = _check_dir(o, outs, label) or (_check_dir(dump, dumps, label + " (dump)")
                                              if "--dump-dir" in extra else None)
        if why:
            return run.Result(False, why, err)
    if "dynamic" in flags:  # another batch on the same program
        x = np.concatenate([inputs["x"], -inputs["x"]], 0)
        xd = x.astype(np.float64)
        want = {"y": -np.concatenate([np.maximum(xd, 0), _sig(xd)], 1)}
        o = run.fresh_dir(os.path.join(d, "out-batch2"))
        rc, _, err = run.run_graphcc(ctx, ["run", gcb, "--output-dir", o] +
                                     run.save_inputs(d, {"x": x}))
        why = run.describe_rc(rc) if rc != 0 else _check_dir(o, want, "batch 2")
        if why:
            return run.Result(False, why, err)
    return run.Result(True, "arena %s MiB" % (m.group(1) if m else "?"))


def hostile_case(ctx):
    """A .gcb whose Concat members are not at their slices is refused."""
    import sys
    sys.path.insert(0, os.path.join(run.ROOT, "tests", "hostile"))
    import gcbfile
    build = _fixtures()["fire"][0]
    d = run.fresh_dir(os.path.join(ctx.fix, "concat", "hostile"))
    model, gcb = os.path.join(d, "model.onnx"), os.path.join(d, "model.gcb")
    inputs, _, _ = build(model)
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
    if rc != 0:
        return run.Result(False, "compile: " + run.describe_rc(rc), err)
    args = run.save_inputs(d, inputs)
    unit = 4 * int(np.prod(U))

    def moved(g, offsets):
        prog = g.program
        c = prog.tensors[g.tensor(prog, "c")].offset.val
        for name, k in offsets.items():
            g.set(prog.tensors[g.tensor(prog, name)].offset, c + k * unit)

    edits = {"a-on-b": {"a": 1}, "swapped": {"a": 1, "b": 0}}
    for name, offsets in edits.items():
        g = gcbfile.Gcb(gcb)
        moved(g, offsets)
        bad = g.save(os.path.join(d, name + ".gcb"))
        rc, _, err = run.run_graphcc(ctx, ["run", bad, "--output-dir",
                                           run.fresh_dir(os.path.join(d, name))] + args)
        if rc != 1 or "corrupted program" not in err or "shares arena bytes" not in err:
            return run.Result(False, "%s: want exit 1, 'corrupted program' and 'shares arena "
                              "bytes'; %s" % (name, run.describe_rc(rc)), err)
    return run.Result(True, ", ".join(edits) + " refused")


def torch_case(ctx):
    """Fire modules and a densenet block exported by PyTorch."""
    with run.TORCH_EXPORT:
        import torch
        import torch.nn as nn

        class Fire(nn.Module):
            def __init__(self, cin, sq, e):
                super().__init__()
                self.s = nn.Conv2d(cin, sq, 1)
                self.e1 = nn.Conv2d(sq, e, 1)
                self.e3 = nn.Conv2d(sq, e, 3, padding=1)

            def forward(self, x):
                x = torch.relu(self.s(x))
                return torch.cat([torch.relu(self.e1(x)), torch.relu(self.e3(x))], 1)

        class Dense(nn.Module):
            def __init__(self, cin, growth, layers):
                super().__init__()
                self.layers = nn.ModuleList(
                    nn.Sequential(nn.BatchNorm2d(cin + k * growth), nn.ReLU(),
                                  nn.Conv2d(cin + k * growth, growth, 3, padding=1))
                    for k in range(layers))

            def forward(self, x):
                feats = [x]
                for layer in self.layers:
                    feats.append(layer(torch.cat(feats, 1)))
                return torch.cat(feats, 1)

        torch.manual_seed(19)
        net = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2), nn.ReLU(),
                            nn.MaxPool2d(3, 2, ceil_mode=True), Fire(16, 8, 16),
                            Fire(32, 8, 16), Dense(32, 8, 4)).eval()
        x = torch.randn(1, 3, 48, 48)
        d = run.fresh_dir(os.path.join(ctx.fix, "concat", "torch"))
        model = os.path.join(d, "model.onnx")
        with torch.no_grad():
            want = net(x).numpy()
            torch.onnx.export(net, x, model, opset_version=13, input_names=["x"],
                              output_names=["y"])
    args = run.save_inputs(d, {"x": x.numpy()})
    for extra in (["--threads", "1"], ["--threads", "2"], ["--no-arena"]):
        o = run.fresh_dir(os.path.join(d, "out" + "".join(extra)))
        rc, _, err = run.run_graphcc(ctx, ["run", model, "--output-dir", o] + args + extra)
        if rc != 0:
            return run.Result(False, "run %s: %s" % (extra, run.describe_rc(rc)), err)
        why = run.compare(os.path.join(o, "y.npy"), want, 0,
                          run.TORCH_REL * float(np.abs(want).max()))
        if why:
            return run.Result(False, "%s: %s" % (" ".join(extra), why), err)
    return run.Result(True)


def cases(ctx):
    out = [("concat/" + k, (lambda k=k: fixture_case(ctx, k))) for k in _fixtures()]
    out.append(("concat/torch", lambda: torch_case(ctx)))
    out.append(("concat/hostile-gcb", lambda: hostile_case(ctx)))
    return out
