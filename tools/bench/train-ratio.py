"""The time of one training step against the forward alone, on two nets:
  conv2   x[16,3,32,32] -> Conv 3->16 3x3 -> Relu -> Conv 16->32 3x3 -> Relu
          -> MaxPool 2 -> Flatten -> Gemm 8192->10 -> cross-entropy
  demo    the training demo's CNN (tests/e2e/cases_train_demo.py: conv 3x3 ->
          ParamSwish -> ChannelScale -> MaxPool -> Linear -> cross-entropy,
          batch 8 of 1x8x8), made here with onnx.helper, the package ops
          as in the demo
Each: the forward model (loss from the batch) and `graphcc train-program
--optimizer sgd` of it, both run through the Python module (one session
each, the batch fixed), timed round-robin (forward, step, forward, ...) over
ROUNDS rounds of REPS runs; prints the median per run and step / forward.

  PYTHONPATH=build/python python3 tools/bench/train-ratio.py build [THREADS] [ROUNDS]
"""
import os
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
sys.path.insert(0, os.path.join(BUILD, "python"))
import graphcc  # noqa: E402  before NumPy loads OpenBLAS (docs/python.md, BLAS)
import numpy as np  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


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


def main():
    build = BUILD
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    r = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as d:
        for name, spec in (("conv2", _conv2(r)), ("demo", _demo(r, build))):
            fwd, prog, ops, xs, classes = _files(d, name, spec, build)
            feeds = {"x": r.standard_normal(xs).astype(np.float32),
                     "labels": r.integers(0, classes, xs[0]).astype(np.int64)}
            sf = graphcc.Session(fwd, ops=ops, threads=threads)
            st = graphcc.Session(prog, threads=threads)
            reps = 20 if name == "conv2" else 200
            times = {"forward": [], "step": []}
            for s in (sf, st):
                s.run(feeds)
            for _ in range(rounds):
                for key, s in (("forward", sf), ("step", st)):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        s.run(feeds, outputs=["loss"])
                    times[key].append((time.perf_counter() - t0) / reps)
            f, s = np.median(times["forward"]), np.median(times["step"])
            print("%-6s threads %d: forward %.3f ms, step %.3f ms, step/forward %.2f"
                  % (name, threads, f * 1e3, s * 1e3, s / f))


if __name__ == "__main__":
    main()
