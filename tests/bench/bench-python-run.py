#!/usr/bin/python3
"""Per-call cost of graphcc.Session.run from Python on a one-input model
(the bench's Identity 1x1000), against the C API's loop
(bench-session-run.c) and, optionally, two threads with a session each
against one thread.

  bench-python-run.py MODEL.onnx [--n N] [--repeat R] [--rounds K] [--seconds S]

The two-thread model is built here: eight MatMul 256x256 by constant
weights, each followed by Relu (one run: a few ms on one core).
"""
import argparse
import statistics
import threading
import time

import graphcc  # first: before NumPy loads OpenBLAS
import numpy as np


def per_call(s, feeds, n, repeat):
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            s.run(feeds)
        out.append((time.perf_counter() - t0) / n * 1e6)
    return sorted(out)


def throughput(model, feeds, threads, seconds):
    count = [0] * threads
    stop = threading.Event()

    def work(k):
        s = graphcc.Session(model, threads=1)
        s.run(feeds)
        while not stop.is_set():
            s.run(feeds)
            count[k] += 1
    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    c0, w0 = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    cpu = (time.process_time() - c0) / (time.perf_counter() - w0)
    stop.set()
    for t in ts:
        t.join()
    return sum(count) / seconds, cpu


def threads_model():
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for k in range(8):
        w = (rng.standard_normal((256, 256)) / 16).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w%d" % k))
        nodes += [helper.make_node("MatMul", [x, "w%d" % k], ["m%d" % k]),
                  helper.make_node("Relu", ["m%d" % k], ["r%d" % k])]
        x = "r%d" % k
    g = helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
                          [helper.make_tensor_value_info(x, TensorProto.FLOAT, [64, 256])],
                          initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    a = ap.parse_args()
    s = graphcc.Session(a.model, threads=1)
    i = s.inputs[0]
    feeds = {i.name: np.zeros(i.shape, i.dtype)}
    t = per_call(s, feeds, a.n, a.repeat)
    print("Session.run: %.3f us per call (median of %d x %d calls; min %.3f, max %.3f)" % (
        t[len(t) // 2], a.repeat, a.n, t[0], t[-1]))
    if a.rounds:
        model = threads_model()
        s = graphcc.Session(model, threads=1)
        feeds = {v.name: np.random.default_rng(0).standard_normal(v.shape).astype(v.dtype)
                 for v in s.inputs}
        ratios = []
        for r in range(a.rounds):
            one, cpu1 = throughput(model, feeds, 1, a.seconds)
            two, cpu2 = throughput(model, feeds, 2, a.seconds)
            ratios.append(two / one)
            # CPU seconds per wall second: above 1 only when both threads
            # ran at once (the GIL held during runs would keep it <= 1).
            print("round %d: one session %.1f runs/s (%.2f CPU), two sessions in two threads "
                  "%.1f runs/s (%.2f CPU) (x%.2f)" % (r + 1, one, cpu1, two, cpu2, two / one))
        print("two threads / one: median x%.2f, min x%.2f, max x%.2f" % (
            statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
