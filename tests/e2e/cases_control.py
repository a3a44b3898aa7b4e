"""Control flow, sequences and optionals through `graphcc run`: models built
with onnx.helper, checked against NumPy computations written here (onnx
1.12 has no reference evaluator).

  control/<case>          results against NumPy, exact unless a tolerance is
                          named (float32 sums: rtol 1e-6)
  control/refuse/<case>   bad models and run-time failures: exit 1, one
                          message naming the node (and, inside a body, the
                          enclosing node), nothing written
  control/limits/<case>   an endless loop: its growing scan output stops at
                          GRAPHCC_MAX_BYTES; without a scan output, --timeout
                          names the Loop (exit 3)
"""
import os
import subprocess
import sys

import numpy as np

import run

# What graphcc wrote for an output (array, list for a sequence folder, None
# for NAME.none; exactly one of them): the conformance runner's reader.
sys.path.insert(0, os.path.join(os.path.dirname(run.HERE), "conformance"))
from runner import read_output  # noqa: E402

RTOL = 1e-6


def _save(d, graph, opset=16):
    import onnx
    from onnx import helper
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    return path


def _feed(d, feeds):
    """name -> value: .npy for arrays, a SequenceProto/OptionalProto .pb for
    lists and ('optional', v)."""
    from onnx import numpy_helper
    args = []
    for k, v in feeds.items():
        if isinstance(v, list):
            p = os.path.join(d, k + ".pb")
            with open(p, "wb") as f:
                f.write(numpy_helper.from_list(v, k).SerializeToString())
        elif isinstance(v, tuple) and v[0] == "optional":
            p = os.path.join(d, k + ".pb")
            with open(p, "wb") as f:
                f.write(numpy_helper.from_optional(v[1], k).SerializeToString())
        else:
            p = os.path.join(d, k + ".npy")
            np.save(p, v)
        args += ["--input", "%s=%s" % (k, p)]
    return args


def _same(name, got, want, rtol=0.0):
    if want is None or got is None:
        return None if want is None and got is None else "%s: %r, expected %r" % (
            name, type(got).__name__, type(want).__name__)
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "%s: %s, expected a sequence of %d" % (
                name, "%d tensors" % len(got) if isinstance(got, list) else "a tensor", len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            why = _same("%s[%d]" % (name, i), g, w, rtol)
            if why:
                return why
        return None
    if isinstance(got, list) or got.dtype != want.dtype or got.shape != want.shape:
        return "%s: %s %s, expected %s %s" % (name, getattr(got, "dtype", "list"),
                                               getattr(got, "shape", ""), want.dtype, want.shape)
    ok = np.allclose(got, want, rtol=rtol, atol=0) if rtol else np.array_equal(got, want)
    return None if ok else "%s: got %s, expected %s" % (name, got.ravel()[:8], want.ravel()[:8])


def run_case(ctx, name, make, runs):
    """make(helper, TP) -> graph; runs: [(feeds, {output: expected}, rtol)],
    each a separate `graphcc run` of the model, and again of the program
    `graphcc compile -o` saved from it (compiled without input values, so
    every run-time shape stays one)."""
    def fn():
        from onnx import TensorProto as TP, helper
        d = os.path.join(ctx.work, "control", name)
        model = _save(d, make(helper, TP))
        gcb = os.path.join(d, "model.gcb")
        rc, _, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
        if rc != 0:
            return run.Result(False, "compile -o: %s" % run.describe_rc(rc), err)
        for r, (feeds, want, rtol) in enumerate(runs):
            rd = os.path.join(d, "run%d" % r)
            os.makedirs(rd, exist_ok=True)
            args = _feed(rd, feeds)
            for kind, prog in (("onnx", model), ("gcb", gcb)):
                od = run.fresh_dir(os.path.join(ctx.out, "control", name, kind, "run%d" % r))
                rc, _, err = run.run_graphcc(ctx, ["run", prog] + args + ["--output-dir", od])
                if rc != 0:
                    return run.Result(False, "%s run %d: %s" % (kind, r, run.describe_rc(rc)),
                                      err)
                for k, w in want.items():
                    try:
                        got = read_output(od, k)
                    except ValueError as e:
                        return run.Result(False, "%s run %d: output %s: %s" % (kind, r, k, e),
                                          err)
                    why = _same(k, got, w, rtol)
                    if why:
                        return run.Result(False, "%s run %d: %s" % (kind, r, why), err)
        return run.Result(True, "%d runs, .onnx and .gcb" % len(runs))
    return ("control/" + name, fn)


def refuse_case(ctx, name, make, feeds, must, env=None, opset=16):
    def fn():
        from onnx import TensorProto as TP, helper
        d = os.path.join(ctx.work, "control", "refuse", name)
        model = _save(d, make(helper, TP), opset)
        args = ["run", model] + _feed(d, feeds)
        if env:
            od = run.fresh_dir(os.path.join(ctx.out, "control", "refuse", name))
            p = subprocess.run([ctx.graphcc] + args + ["--output-dir", od],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=dict(run.ENV, **env), timeout=run.TIMEOUT)
            err = p.stderr.decode("utf-8", "replace")
            ok = p.returncode == 1 and all(s in err for s in must) and not os.listdir(od)
            return run.Result(ok, "exit %d: %s" % (p.returncode, err.strip()[:200]), err)
        return run.expect_refusal(ctx, "control-" + name, args, must)
    return ("control/refuse/" + name, fn)


# ---------------------------------------------------------------- models

def if_model(h, TP):
    """y = If(cond) { x * 2 } else { concat(x, -x) }: the branches read x
    from the graph; their shapes differ."""
    two = h.make_tensor("two", TP.FLOAT, [1], [2.0])
    then = h.make_graph([h.make_node("Mul", ["x", "two"], ["t"])], "then", [],
                        [h.make_tensor_value_info("t", TP.FLOAT, None)], [two])
    els = h.make_graph([h.make_node("Neg", ["x"], ["nx"]),
                        h.make_node("Concat", ["x", "nx"], ["e"], axis=0)], "else", [],
                       [h.make_tensor_value_info("e", TP.FLOAT, None)])
    return h.make_graph(
        [h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=els, name="branch")],
        "if", [h.make_tensor_value_info("cond", TP.BOOL, []),
               h.make_tensor_value_info("x", TP.FLOAT, [3])],
        [h.make_tensor_value_info("y", TP.FLOAT, None)])


def loop_model(h, TP):
    """Loop(M) carrying s (s = s * r + i) and a growing t = concat(t, [s]),
    with the scan output s: M is an input, so every length is a run-time
    one; r comes from the graph."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]),
         h.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
         h.make_node("Mul", ["s", "r"], ["sr"]),
         h.make_node("Add", ["sr", "fi"], ["s2"]),
         h.make_node("Unsqueeze", ["s2", "zero"], ["s2v"]),
         h.make_node("Concat", ["t", "s2v"], ["t2"], axis=0),
         h.make_node("Identity", ["s2"], ["scan"])],
        "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
         h.make_tensor_value_info("s", TP.FLOAT, []),
         h.make_tensor_value_info("t", TP.FLOAT, [None])],
        [h.make_tensor_value_info("c2", TP.BOOL, []), h.make_tensor_value_info("s2", TP.FLOAT, []),
         h.make_tensor_value_info("t2", TP.FLOAT, [None]),
         h.make_tensor_value_info("scan", TP.FLOAT, [])],
        [h.make_tensor("zero", TP.INT64, [1], [0])])
    return h.make_graph(
        [h.make_node("Loop", ["M", "", "s0", "t0"], ["s", "t", "scans"], body=body, name="lp")],
        "loop", [h.make_tensor_value_info("M", TP.INT64, []),
                 h.make_tensor_value_info("s0", TP.FLOAT, []),
                 h.make_tensor_value_info("t0", TP.FLOAT, [1]),
                 h.make_tensor_value_info("r", TP.FLOAT, [])],
        [h.make_tensor_value_info("s", TP.FLOAT, []), h.make_tensor_value_info("t", TP.FLOAT, None),
         h.make_tensor_value_info("scans", TP.FLOAT, None)])


def loop_reference(m, s0, t0, r):
    s, t, scans = np.float32(s0), list(t0), []
    for i in range(m):
        s = np.float32(s * np.float32(r) + np.float32(i))
        t.append(s)
        scans.append(s)
    return {"s": np.array(s, np.float32), "t": np.array(t, np.float32),
            "scans": np.array(scans, np.float32).reshape(m)}


def while_model(h, TP):
    """No trip count: double x until its sum passes a limit (a graph input);
    the number of iterations is only known when it stops."""
    body = h.make_graph(
        [h.make_node("Mul", ["x", "two"], ["x2"]),
         h.make_node("ReduceSum", ["x2"], ["sm"], keepdims=0),
         h.make_node("Less", ["sm", "limit"], ["go"]),
         h.make_node("Identity", ["sm"], ["sums"])],
        "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
         h.make_tensor_value_info("x", TP.FLOAT, [2])],
        [h.make_tensor_value_info("go", TP.BOOL, []), h.make_tensor_value_info("x2", TP.FLOAT, [2]),
         h.make_tensor_value_info("sums", TP.FLOAT, [])],
        [h.make_tensor("two", TP.FLOAT, [], [2.0])])
    return h.make_graph(
        [h.make_node("Loop", ["", "go0", "x0"], ["x", "sums"], body=body, name="doubling")],
        "while", [h.make_tensor_value_info("go0", TP.BOOL, []),
                  h.make_tensor_value_info("x0", TP.FLOAT, [2]),
                  h.make_tensor_value_info("limit", TP.FLOAT, [])],
        [h.make_tensor_value_info("x", TP.FLOAT, [2]),
         h.make_tensor_value_info("sums", TP.FLOAT, None)], [])


def while_reference(go0, x0, limit):
    x, sums, go = x0.astype(np.float32), [], go0
    while go:
        x = (x * np.float32(2)).astype(np.float32)
        s = np.float32(x.sum())
        sums.append(s)
        go = bool(s < np.float32(limit))
    return {"x": x, "sums": np.array(sums, np.float32)}


def nested_model(h, TP):
    """If(cond) { Loop(n) { acc = acc + x } } else { x }: the loop body
    reads x two graphs up and n one up."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]), h.make_node("Add", ["acc", "x"], ["acc2"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []),
                 h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("acc", TP.FLOAT, [2])],
        [h.make_tensor_value_info("c2", TP.BOOL, []),
         h.make_tensor_value_info("acc2", TP.FLOAT, [2])])
    then = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["acc"], body=body, name="inner")],
                        "then", [], [h.make_tensor_value_info("acc", TP.FLOAT, [2])])
    els = h.make_graph([h.make_node("Identity", ["x"], ["same"])], "else", [],
                       [h.make_tensor_value_info("same", TP.FLOAT, [2])])
    return h.make_graph(
        [h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=els, name="outer")],
        "nested", [h.make_tensor_value_info("cond", TP.BOOL, []),
                   h.make_tensor_value_info("n", TP.INT64, []),
                   h.make_tensor_value_info("x", TP.FLOAT, [2])],
        [h.make_tensor_value_info("y", TP.FLOAT, [2])])


def scan_model(h, TP):
    """Scan-9 over axis 1 of x, backwards, output stacked on axis 0: a
    running product of columns from the right, with a constant read from
    the graph."""
    body = h.make_graph(
        [h.make_node("Mul", ["acc", "col"], ["p"]), h.make_node("Add", ["p", "bias"], ["acc2"]),
         h.make_node("Identity", ["acc2"], ["o"])],
        "body", [h.make_tensor_value_info("acc", TP.FLOAT, [3]),
                 h.make_tensor_value_info("col", TP.FLOAT, [3])],
        [h.make_tensor_value_info("acc2", TP.FLOAT, [3]),
         h.make_tensor_value_info("o", TP.FLOAT, [3])])
    return h.make_graph(
        [h.make_node("Scan", ["a0", "x"], ["a", "ys"], body=body, num_scan_inputs=1,
                     scan_input_axes=[1], scan_input_directions=[1], name="scan")],
        "scan", [h.make_tensor_value_info("a0", TP.FLOAT, [3]),
                 h.make_tensor_value_info("x", TP.FLOAT, [3, 4])],
        [h.make_tensor_value_info("a", TP.FLOAT, [3]),
         h.make_tensor_value_info("ys", TP.FLOAT, [4, 3])],
        [h.make_tensor("bias", TP.FLOAT, [], [0.25])])


def scan_reference(a0, x):
    acc, ys = a0.astype(np.float32), []
    for t in range(x.shape[1] - 1, -1, -1):
        acc = (acc * x[:, t] + np.float32(0.25)).astype(np.float32)
        ys.append(acc)
    return {"a": acc, "ys": np.stack(ys)}


def sequence_model(h, TP):
    """A sequence input: insert x at pos, erase the first, take one out,
    split and concatenate: the sequence itself is an output too."""
    return h.make_graph(
        [h.make_node("SequenceInsert", ["seq", "x", "pos"], ["s1"]),
         h.make_node("SequenceErase", ["s1", "zero"], ["s2"]),
         h.make_node("SequenceAt", ["s2", "pos"], ["picked"]),
         h.make_node("SequenceLength", ["s2"], ["n"]),
         h.make_node("SplitToSequence", ["x"], ["parts"], axis=0, keepdims=0),
         h.make_node("ConcatFromSequence", ["parts"], ["stacked"], axis=0, new_axis=1),
         h.make_node("SequenceConstruct", ["x", "x"], ["pair"]),
         h.make_node("ConcatFromSequence", ["pair"], ["joined"], axis=1)],
        "seq", [h.make_tensor_sequence_value_info("seq", TP.FLOAT, None),
                h.make_tensor_value_info("x", TP.FLOAT, [2, 3]),
                h.make_tensor_value_info("pos", TP.INT64, [])],
        [h.make_tensor_sequence_value_info("s2", TP.FLOAT, None),
         h.make_tensor_value_info("picked", TP.FLOAT, None),
         h.make_tensor_value_info("n", TP.INT64, []),
         h.make_tensor_sequence_value_info("parts", TP.FLOAT, None),
         h.make_tensor_value_info("stacked", TP.FLOAT, None),
         h.make_tensor_value_info("joined", TP.FLOAT, None)],
        [h.make_tensor("zero", TP.INT64, [], [0])])


def sequence_reference(seq, x, pos):
    s1 = list(seq)
    s1.insert(pos, x)  # as ONNX's reference: Python's list.insert
    s2 = s1[1:]
    return {"s2": s2, "picked": s2[pos], "n": np.array(len(s2), np.int64),
            "parts": [x[i] for i in range(x.shape[0])], "stacked": np.stack(list(x), axis=0),
            "joined": np.concatenate([x, x], axis=1)}


def string_loop_model(h, TP):
    """Strings made inside a body (Cast to string of i * step) come out as
    a scan output of the loop and as the value it carries: they outlive the
    iteration that made them."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]),
         h.make_node("Mul", ["i", "step"], ["v"]),
         h.make_node("Cast", ["v"], ["txt"], to=TP.STRING),
         h.make_node("Identity", ["txt"], ["last"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []),
                 h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("prev", TP.STRING, [])],
        [h.make_tensor_value_info("c2", TP.BOOL, []),
         h.make_tensor_value_info("last", TP.STRING, []),
         h.make_tensor_value_info("txt", TP.STRING, [])])
    return h.make_graph(
        [h.make_node("Loop", ["M", "", "first"], ["final", "texts"], body=body, name="lp")],
        "strings", [h.make_tensor_value_info("M", TP.INT64, []),
                    h.make_tensor_value_info("step", TP.INT64, []),
                    h.make_tensor_value_info("first", TP.STRING, [])],
        [h.make_tensor_value_info("final", TP.STRING, []),
         h.make_tensor_value_info("texts", TP.STRING, None)])


def value_shapes_model(h, TP):
    """No control flow: a Reshape whose shape is an input and a NonZero. The
    saved program (compiled without the values) prepares them at run time,
    so one .gcb serves every shape."""
    return h.make_graph(
        [h.make_node("Reshape", ["x", "shape"], ["y"]), h.make_node("NonZero", ["y"], ["nz"])],
        "values", [h.make_tensor_value_info("x", TP.FLOAT, [2, 3, 4]),
                   h.make_tensor_value_info("shape", TP.INT64, [2])],
        [h.make_tensor_value_info("y", TP.FLOAT, None), h.make_tensor_value_info("nz", TP.INT64, None)])


def swap_model(h, TP):
    """A body that hands its two carried inputs on as each other's outputs
    (no node between), and an If branch that gives an enclosing tensor as
    its output directly."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"])], "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
         h.make_tensor_value_info("a", TP.FLOAT, [2]), h.make_tensor_value_info("b", TP.FLOAT, [2])],
        [h.make_tensor_value_info("c2", TP.BOOL, []), h.make_tensor_value_info("b", TP.FLOAT, [2]),
         h.make_tensor_value_info("a", TP.FLOAT, [2])])
    then = h.make_graph([], "then", [], [h.make_tensor_value_info("a0", TP.FLOAT, [2])])
    els = h.make_graph([], "else", [], [h.make_tensor_value_info("b0", TP.FLOAT, [2])])
    return h.make_graph(
        [h.make_node("Loop", ["M", "", "a0", "b0"], ["a", "b"], body=body, name="swap"),
         h.make_node("If", ["pick"], ["picked"], then_branch=then, else_branch=els)],
        "swap", [h.make_tensor_value_info("M", TP.INT64, []),
                 h.make_tensor_value_info("a0", TP.FLOAT, [2]),
                 h.make_tensor_value_info("b0", TP.FLOAT, [2]),
                 h.make_tensor_value_info("pick", TP.BOOL, [])],
        [h.make_tensor_value_info("a", TP.FLOAT, [2]), h.make_tensor_value_info("b", TP.FLOAT, [2]),
         h.make_tensor_value_info("picked", TP.FLOAT, [2])])


def empty_sequence_model(h, TP):
    """A sequence input handed back, its length, and SequenceEmpty: empty
    sequences come out as empty folders."""
    return h.make_graph(
        [h.make_node("Identity", ["seq"], ["same"]), h.make_node("SequenceLength", ["seq"], ["n"]),
         h.make_node("SequenceEmpty", [], ["made"], dtype=TP.FLOAT)],
        "empty", [h.make_tensor_sequence_value_info("seq", TP.FLOAT, None)],
        [h.make_tensor_sequence_value_info("same", TP.FLOAT, None),
         h.make_tensor_value_info("n", TP.INT64, []),
         h.make_tensor_sequence_value_info("made", TP.FLOAT, None)])


def optional_model(h, TP):
    """An optional input passed through, its presence, and an If that gives
    an empty optional or one holding a sequence."""
    opt_seq = h.make_optional_type_proto(h.make_sequence_type_proto(
        h.make_tensor_type_proto(TP.FLOAT, None)))
    then = h.make_graph([h.make_node("Optional", [], ["none"], type=opt_seq.optional_type.elem_type)],
                        "then", [], [h.make_value_info("none", opt_seq)])
    els = h.make_graph([h.make_node("SequenceConstruct", ["v", "v"], ["sq"]),
                        h.make_node("Optional", ["sq"], ["some"])], "else", [],
                       [h.make_value_info("some", opt_seq)])
    opt_t = h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT, [2]))
    return h.make_graph(
        [h.make_node("Identity", ["o"], ["o2"]),
         h.make_node("OptionalHasElement", ["o"], ["has"]),
         h.make_node("If", ["empty"], ["maybe"], then_branch=then, else_branch=els)],
        "opt", [h.make_value_info("o", opt_t), h.make_tensor_value_info("empty", TP.BOOL, []),
                h.make_tensor_value_info("v", TP.FLOAT, [2])],
        [h.make_value_info("o2", opt_t), h.make_tensor_value_info("has", TP.BOOL, []),
         h.make_value_info("maybe", opt_seq)])


# ---------------------------------------------------------------- refusals

def bad_loop_types(h, TP):
    body = h.make_graph([h.make_node("Identity", ["c"], ["c2"]),
                         h.make_node("Cast", ["v"], ["v2"], to=TP.INT64, name="widen")],
                        "body", [h.make_tensor_value_info("i", TP.INT64, []),
                                 h.make_tensor_value_info("c", TP.BOOL, []),
                                 h.make_tensor_value_info("v", TP.FLOAT, [1])],
                        [h.make_tensor_value_info("c2", TP.BOOL, []),
                         h.make_tensor_value_info("v2", TP.INT64, [1])])
    return h.make_graph([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body, name="lp")], "g",
                        [h.make_tensor_value_info("M", TP.INT64, []),
                         h.make_tensor_value_info("v0", TP.FLOAT, [1])],
                        [h.make_tensor_value_info("v", TP.FLOAT, [1])])


def bad_if_types(h, TP):
    then = h.make_graph([h.make_node("Constant", [], ["a"], value_float=1.0)], "then", [],
                        [h.make_tensor_value_info("a", TP.FLOAT, [])])
    els = h.make_graph([h.make_node("Constant", [], ["b"], value_int=1)], "else", [],
                       [h.make_tensor_value_info("b", TP.INT64, [])])
    return h.make_graph([h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=els,
                                     name="choose")], "g",
                        [h.make_tensor_value_info("cond", TP.BOOL, [])],
                        [h.make_tensor_value_info("y", TP.FLOAT, [])])


def unknown_outer(h, TP):
    then = h.make_graph([h.make_node("Neg", ["missing"], ["a"], name="reader")], "then", [],
                        [h.make_tensor_value_info("a", TP.FLOAT, [1])])
    els = h.make_graph([h.make_node("Identity", ["x"], ["b"])], "else", [],
                       [h.make_tensor_value_info("b", TP.FLOAT, [1])])
    return h.make_graph([h.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=els,
                                     name="choose")], "g",
                        [h.make_tensor_value_info("cond", TP.BOOL, []),
                         h.make_tensor_value_info("x", TP.FLOAT, [1])],
                        [h.make_tensor_value_info("y", TP.FLOAT, [1])])


def at_out_of_range(h, TP):
    return h.make_graph([h.make_node("SequenceConstruct", ["x", "x"], ["s"]),
                         h.make_node("SequenceAt", ["s", "pos"], ["y"], name="take")], "g",
                        [h.make_tensor_value_info("x", TP.FLOAT, [2]),
                         h.make_tensor_value_info("pos", TP.INT64, [])],
                        [h.make_tensor_value_info("y", TP.FLOAT, None)])


def reshape_in_body(h, TP):
    """Inside the body, Reshape to [i + 1, -1] of a 6-element tensor: fine
    for i = 0, 1, 2, refused (not a divisor) at iteration 3."""
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]),
         h.make_node("Add", ["i", "one"], ["i1"]),
         h.make_node("Unsqueeze", ["i1", "zero"], ["rows"]),
         h.make_node("Concat", ["rows", "minus1"], ["shape"], axis=0),
         h.make_node("Reshape", ["x", "shape"], ["m"], name="fold"),
         h.make_node("ReduceSum", ["m"], ["tot"], keepdims=0),
         h.make_node("Add", ["acc", "tot"], ["acc2"])],
        "body", [h.make_tensor_value_info("i", TP.INT64, []),
                 h.make_tensor_value_info("c", TP.BOOL, []),
                 h.make_tensor_value_info("acc", TP.FLOAT, [])],
        [h.make_tensor_value_info("c2", TP.BOOL, []),
         h.make_tensor_value_info("acc2", TP.FLOAT, [])],
        [h.make_tensor("one", TP.INT64, [], [1]), h.make_tensor("zero", TP.INT64, [1], [0]),
         h.make_tensor("minus1", TP.INT64, [1], [-1])])
    return h.make_graph([h.make_node("Loop", ["M", "", "acc0"], ["acc"], body=body,
                                     name="reshaper")], "g",
                        [h.make_tensor_value_info("M", TP.INT64, []),
                         h.make_tensor_value_info("acc0", TP.FLOAT, []),
                         h.make_tensor_value_info("x", TP.FLOAT, [6])],
                        [h.make_tensor_value_info("acc", TP.FLOAT, [])])


def endless(h, TP, with_scan):
    outs = [h.make_tensor_value_info("c2", TP.BOOL, [])]
    nodes = [h.make_node("Identity", ["c"], ["c2"])]
    if with_scan:
        nodes.append(h.make_node("Identity", ["big"], ["row"]))
        outs.append(h.make_tensor_value_info("row", TP.FLOAT, [1000]))
    body = h.make_graph(nodes, "body", [h.make_tensor_value_info("i", TP.INT64, []),
                                        h.make_tensor_value_info("c", TP.BOOL, [])], outs,
                        [h.make_tensor("big", TP.FLOAT, [1000], np.ones(1000, np.float32))]
                        if with_scan else [])
    return h.make_graph([h.make_node("Loop", ["", "go"], ["rows"] if with_scan else [],
                                     body=body, name="forever")], "g",
                        [h.make_tensor_value_info("go", TP.BOOL, [])],
                        [h.make_tensor_value_info("rows", TP.FLOAT, None)] if with_scan else [])


def _endless_timeout(ctx):
    """A Loop whose condition never goes false and carries nothing that
    grows: --timeout names it (exit 3) instead of hanging."""
    def fn():
        from onnx import TensorProto as TP, helper
        import onnx
        d = os.path.join(ctx.work, "control", "limits", "timeout")
        body = helper.make_graph([helper.make_node("Identity", ["c"], ["c2"]),
                                  helper.make_node("Add", ["v", "one"], ["v2"])], "body",
                                 [helper.make_tensor_value_info("i", TP.INT64, []),
                                  helper.make_tensor_value_info("c", TP.BOOL, []),
                                  helper.make_tensor_value_info("v", TP.FLOAT, [])],
                                 [helper.make_tensor_value_info("c2", TP.BOOL, []),
                                  helper.make_tensor_value_info("v2", TP.FLOAT, [])],
                                 [helper.make_tensor("one", TP.FLOAT, [], [1.0])])
        g = helper.make_graph([helper.make_node("Loop", ["", "go", "v0"], ["v"], body=body,
                                                name="forever")], "g",
                              [helper.make_tensor_value_info("go", TP.BOOL, []),
                               helper.make_tensor_value_info("v0", TP.FLOAT, [])],
                              [helper.make_tensor_value_info("v", TP.FLOAT, [])])
        model = _save(d, g)
        args = _feed(d, {"go": np.array(True), "v0": np.array(0, np.float32)})
        od = run.fresh_dir(os.path.join(ctx.out, "control", "limits", "timeout"))
        rc, _, err = run.run_graphcc(ctx, ["run", model] + args + ["--timeout", "1",
                                                                    "--output-dir", od])
        ok = rc == 3 and "forever" in err and "Loop" in err and not os.listdir(od)
        return run.Result(ok, "%s: %s" % (run.describe_rc(rc), err.strip()[:160]), err)
    return ("control/limits/timeout", fn)


def cases(ctx):
    rng = np.random.default_rng(11)
    x3 = rng.standard_normal(3).astype(np.float32)
    out = [run_case(ctx, "if-both-branches", if_model,
                    [({"cond": np.array(c), "x": x3},
                      {"y": x3 * np.float32(2) if c else np.concatenate([x3, -x3])}, 0)
                     for c in (True, False, True)])]
    runs = []
    for m in (0, 1, 4, 9):
        s0, t0, r = np.float32(0.5), np.array([7], np.float32), np.float32(1.5)
        runs.append(({"M": np.array(m, np.int64), "s0": np.array(s0), "t0": t0,
                      "r": np.array(r)}, loop_reference(m, s0, t0, r), RTOL))
    out.append(run_case(ctx, "loop-trip-count-input", loop_model, runs))
    x0 = np.array([1, 2], np.float32)
    out.append(run_case(ctx, "loop-while-condition", while_model,
                        [({"go0": np.array(g), "x0": x0, "limit": np.array(lim, np.float32)},
                          while_reference(g, x0, lim), 0)
                         for g, lim in ((True, 100.0), (True, 1.0), (False, 100.0))]))
    out.append(run_case(ctx, "nested-loop-in-if", nested_model,
                        [({"cond": np.array(c), "n": np.array(n, np.int64), "x": x0},
                          {"y": (x0 * np.float32(n + 1)) if c else x0}, RTOL)
                         for c, n in ((True, 3), (False, 3), (True, 0))]))
    xs = rng.standard_normal((3, 4)).astype(np.float32)
    a0 = rng.standard_normal(3).astype(np.float32)
    out.append(run_case(ctx, "scan-axis1-reverse", scan_model,
                        [({"a0": a0, "x": xs}, scan_reference(a0, xs), 1e-5)]))
    seq = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(3)]
    x23 = rng.standard_normal((2, 3)).astype(np.float32)
    out.append(run_case(ctx, "sequence-roundtrip", sequence_model,
                        [({"seq": seq, "x": x23, "pos": np.array(p, np.int64)},
                          sequence_reference(seq, x23, p), 0) for p in (1, -1, 0)]))
    out.append(run_case(ctx, "sequence-empty", empty_sequence_model,
                        [({"seq": []}, {"n": np.array(0, np.int64), "same": [], "made": []}, 0),
                         ({"seq": [x23]}, {"n": np.array(1, np.int64), "same": [x23],
                                           "made": []}, 0)]))
    out.append(run_case(ctx, "loop-strings", string_loop_model,
                        [({"M": np.array(m, np.int64), "step": np.array(7, np.int64),
                           "first": np.array("start")},
                          {"final": np.array(str(7 * (m - 1)) if m else "start"),
                           "texts": np.array([str(7 * i) for i in range(m)])}, 0)
                         for m in (4, 1)]))
    a0, b0 = np.array([1, 2], np.float32), np.array([3, 4], np.float32)
    out.append(run_case(ctx, "loop-swap-and-pass-through", swap_model,
                        [({"M": np.array(m, np.int64), "a0": a0, "b0": b0, "pick": np.array(m % 2 == 0)},
                          {"a": b0 if m % 2 else a0, "b": a0 if m % 2 else b0,
                           "picked": a0 if m % 2 == 0 else b0}, 0) for m in (0, 1, 2, 3)]))
    xv = np.where(rng.standard_normal((2, 3, 4)) > 0, 1.0, 0.0).astype(np.float32)
    out.append(run_case(ctx, "value-shapes-at-run-time", value_shapes_model,
                        [({"x": xv, "shape": np.array(sh, np.int64)},
                          {"y": xv.reshape(sh), "nz": np.array(np.nonzero(xv.reshape(sh)),
                                                                np.int64)}, 0)
                         for sh in ((4, 6), (2, 12), (-1, 8))]))
    v = np.array([3, 4], np.float32)
    out.append(run_case(ctx, "optionals", optional_model,
                        [({"o": ("optional", v), "empty": np.array(e), "v": v},
                          {"o2": v, "has": np.array(True), "maybe": None if e else [v, v]}, 0)
                         for e in (True, False)] +
                        [({"o": ("optional", None), "empty": np.array(True), "v": v},
                          {"o2": None, "has": np.array(False), "maybe": None}, 0)]))

    out += [
        refuse_case(ctx, "loop-body-type", bad_loop_types,
                    {"M": np.array(2, np.int64), "v0": np.zeros(1, np.float32)},
                    ["node 'lp' (Loop)", "'v2') is int64", "float32"]),
        refuse_case(ctx, "if-branch-types", bad_if_types, {"cond": np.array(True)},
                    ["node 'choose' (If)", "then_branch", "else_branch"]),
        refuse_case(ctx, "unknown-outer-name", unknown_outer,
                    {"cond": np.array(True), "x": np.zeros(1, np.float32)},
                    ["node 'choose' (If)", "node 'reader' (Neg)", "'missing'"]),
        refuse_case(ctx, "sequence-at-out-of-range", at_out_of_range,
                    {"x": np.zeros(2, np.float32), "pos": np.array(2, np.int64)},
                    ["node 'take' (SequenceAt)", "position 2 is out of range"]),
        refuse_case(ctx, "negative-trip-count", bad_loop_types_ok_negative,
                    {"M": np.array(-3, np.int64), "v0": np.zeros(1, np.float32)},
                    ["node 'lp' (Loop)", "-3, negative"]),
        refuse_case(ctx, "error-inside-body", reshape_in_body,
                    {"M": np.array(5, np.int64), "acc0": np.array(0, np.float32),
                     "x": np.arange(6, dtype=np.float32)},
                    ["node 'reshaper' (Loop), iteration 3", "node 'fold' (Reshape)"]),
        refuse_case(ctx, "scan-output-growth", lambda h, TP: endless(h, TP, True),
                    {"go": np.array(True)}, ["node 'forever' (Loop)", "GRAPHCC_MAX_BYTES"],
                    env={"GRAPHCC_MAX_BYTES": "20000000"}),
        _endless_timeout(ctx),
    ]
    # a Reshape in a body works for the trip counts whose rows divide 6
    runs = []
    for m in (1, 3):
        acc = np.float32(0)
        for i in range(m):
            acc = np.float32(acc + np.float32(np.arange(6, dtype=np.float32).sum()))
        runs.append(({"M": np.array(m, np.int64), "acc0": np.array(0, np.float32),
                      "x": np.arange(6, dtype=np.float32)}, {"acc": np.array(acc)}, 0))
    out.append(run_case(ctx, "reshape-per-iteration", reshape_in_body, runs))
    out.append(_long_output_path(ctx))
    return out


def _long_output_path(ctx):
    """An empty optional output whose NAME.none path is one byte longer than
    graphcc's path buffer: refused as too long, not written cut short (as
    'nothing.non')."""
    def fn():
        from onnx import helper as h, TensorProto as TP
        opt = h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT, [2]))
        g = h.make_graph([h.make_node("Optional", [], ["nothing"],
                                      type=opt.optional_type.elem_type)], "g", [],
                         [h.make_value_info("nothing", opt)])
        model = _save(os.path.join(ctx.work, "control", "long-path"), g)
        od = run.fresh_dir(os.path.join(ctx.out, "control", "long-path"))
        while len(od) + 1 + 200 < 4096 - len("/nothing.none"):
            od = os.path.join(od, "d" * 200)
        od = os.path.join(od, "e" * (4096 - len("/nothing.none") - len(od) - 1))
        os.makedirs(od)
        rc, _, err = run.run_graphcc(ctx, ["run", model, "--output-dir", od])
        written = os.listdir(od)
        ok = rc == 1 and "path too long" in err and not written
        return run.Result(ok, "%s, wrote %s" % (run.describe_rc(rc), written), err)
    return ("control/long-output-path", fn)


def bad_loop_types_ok_negative(h, TP):
    """A well-typed loop; the trip count given is negative."""
    body = h.make_graph([h.make_node("Identity", ["c"], ["c2"]),
                         h.make_node("Neg", ["v"], ["v2"])],
                        "body", [h.make_tensor_value_info("i", TP.INT64, []),
                                 h.make_tensor_value_info("c", TP.BOOL, []),
                                 h.make_tensor_value_info("v", TP.FLOAT, [1])],
                        [h.make_tensor_value_info("c2", TP.BOOL, []),
                         h.make_tensor_value_info("v2", TP.FLOAT, [1])])
    return h.make_graph([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body, name="lp")], "g",
                        [h.make_tensor_value_info("M", TP.INT64, []),
                         h.make_tensor_value_info("v0", TP.FLOAT, [1])],
                        [h.make_tensor_value_info("v", TP.FLOAT, [1])])
