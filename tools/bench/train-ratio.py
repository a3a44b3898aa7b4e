"""The time of one training step against the forward alone, on two nets:
  conv2   x[16,3,32,32] -> Conv 3->16 3x3 -> Relu -> Conv 16->32 3x3 -> Relu
          -> MaxPool 2 -> Flatten -> Gemm 8192->10 -> cross-entropy
  demo    the training demo's CNN (tests/e2e/cases_train_demo.py: conv 3x3 ->
          ParamSwish -> ChannelScale -> MaxPool -> Linear -> cross-entropy,
          batch 8 of 1x8x8), made here with onnx.helper, the package ops
          as in the demo
Each: the forward model (loss from the batch) and `graphcc train-program
--optimizer sgd` of it, each in a bench worker (tools/bench/graphcc-worker.c:
one session, the batch set once, the session keeping the params), timed
round-robin (forward, step, forward, ...) over ROUNDS rounds of REPS runs of
every build given; prints the median ms per run and step / forward.

  make build/bench/graphcc-worker
  python3 tools/bench/train-ratio.py THREADS ROUNDS build [build-old ...]
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def _conv2(r):
    n = helper.make_node
    w = {"W1": r.standard_normal((16, 3, 3, 3)) * 0.2, "B1": np.zeros(16),
         "W2": r.standard_normal((32, 16, 3, 3)) * 0.1, "B2": np.zeros(32),
         "Wf": r.standard_normal((10, 8192)) * 0.01, "Bf": np.zeros(10)}
    nodes = [n("Conv", ["x", "W1", "B1"], ["c1"], pads=[1, 1, 1, 1]), n("Relu", ["c1"], ["r1"]),
             n("Conv", ["r1", "W2", "B2"], ["c2"], pads=[1, 1, 1, 1]), n("Relu", ["c2"], ["r2"]),
             n("MaxPool", ["r2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             n("Flatten", ["p"], ["f"]), n("Gemm", ["f", "Wf", "Bf"], ["logits"], transB=1),
             n("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"])]
    return nodes, w, (16, 3, 32, 32), 10, [], []


def _demo(r, build):
    n = helper.make_node
    w = {"Wc": r.standard_normal((4, 1, 3, 3)) * 0.3, "Bc": np.zeros(4),
         "gamma": r.uniform(0.5, 1.5, 4), "Wf": r.standard_normal((5, 64)) * 0.1,
         "Bf": np.zeros(5)}
    nodes = [n("Conv", ["x", "Wc", "Bc"], ["c"], pads=[1, 1, 1, 1]),
             n("ParamSwish", ["c"], ["s"], domain="com.graphcc.trainable", beta=1.5),
             n("ChannelScale", ["s", "gamma"], ["g"], domain="com.graphcc.trainable"),
             n("MaxPool", ["g"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             n("Flatten", ["p"], ["f"]), n("Gemm", ["f", "Wf", "Bf"], ["logits"], transB=1),
             n("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"])]
    ops = [os.path.join(build, "plugins", "trainable", "trainable.yaml")]
    return nodes, w, (8, 1, 8, 8), 5, ops, [("com.graphcc.trainable", 1)]


def _files(d, name, spec, build):
    nodes, w, xs, classes, ops, opsets = spec
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs)),
                      helper.make_tensor_value_info("labels", TensorProto.INT64, [xs[0]])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in w.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)] +
                          [helper.make_opsetid(a, b) for a, b in opsets])
    m.ir_version = 8
    fwd = os.path.join(d, name + ".onnx")
    with open(fwd, "wb") as f:
        f.write(m.SerializeToString())
    prog = os.path.join(d, name + "-train.gcb")
    cmd = [os.path.join(build, "bin", "graphcc"), "train-program", fwd, "--loss", "loss",
           "--params", ",".join(w), "--optimizer", "sgd", "--lr", "0.01", "-o", prog]
    for o in ops:
        cmd += ["--ops", o]
    subprocess.run(cmd, check=True, capture_output=True)
    return fwd, prog, ops, xs, classes


class Worker:
    def __init__(self, build, threads, model, ops, feeds):
        cmd = [os.path.join(build, "bench", "graphcc-worker"), "--threads", str(threads)]
        for o in ops:
            cmd += ["--ops", o]
        self.p = subprocess.Popen(cmd + [model] + ["%s=%s" % kv for kv in feeds.items()],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        if not line.startswith("ready"):
            raise SystemExit("%s: %s" % (model, line))

    def run(self, k):
        self.p.stdin.write("run %d\n" % k)
        self.p.stdin.flush()
        line = self.p.stdout.readline().split()
        if line[:1] != ["ok"]:
            raise SystemExit("worker: %s" % line)
        return float(line[1])

    def close(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait()


def main():
    threads, rounds, builds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    r = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        for name, spec in (("conv2", _conv2(r)), ("demo", _demo(r, builds[0]))):
            fwd, prog, ops, xs, classes = _files(d, name, spec, builds[0])
            feeds = {"x": os.path.join(d, "x.npy"), "labels": os.path.join(d, "labels.npy")}
            np.save(feeds["x"], r.standard_normal(xs).astype(np.float32))
            np.save(feeds["labels"], r.integers(0, classes, xs[0]).astype(np.int64))
            work = []
            for b in builds:
                # each build makes its own training program from the model
                p = _files(d, "%s-%d" % (name, len(work)), spec, b)[1] if b != builds[0] else prog
                work.append((b, Worker(b, threads, fwd, ops, feeds), Worker(b, threads, p, [], feeds)))
            reps = 20 if name == "conv2" else 200
            times = {(b, k): [] for b, _, _ in work for k in ("forward", "step")}
            for _ in range(rounds):
                for b, wf, ws in work:
                    times[(b, "forward")].append(wf.run(reps))
                    times[(b, "step")].append(ws.run(reps))
            for b, wf, ws in work:
                f, s = np.median(times[(b, "forward")]), np.median(times[(b, "step")])
                print("%-6s %-24s threads %d: forward %.3f ms, step %.3f ms, step/forward %.2f"
                      % (name, b, threads, f, s, s / f))
                wf.close()
                ws.close()


if __name__ == "__main__":
    main()
