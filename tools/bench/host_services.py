#!/usr/bin/python3
"""make bench-host-services: the speedup of a custom kernel that uses
graphcc's host services (gcx-ops' LinearGelu: ctx->sgemm into
ctx->temp_alloc memory, then GELU over rows with ctx->parallel_for) at
--threads 1 and 2, through `graphcc run --repeat`. The output is checked
against NumPy first (max abs error <= 1e-4 x max(1, max|ref|)).

Usage: host_services.py GRAPHCC GCX_MANIFEST WORKDIR [ROWS M K] [REPEAT]
"""
import math
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper


def main():
    graphcc, manifest, work = sys.argv[1:4]
    rows, m, k = (int(v) for v in (sys.argv[4:7] or (2048, 512, 256)))
    repeat = int(sys.argv[7]) if len(sys.argv) > 7 else 30
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, k), dtype=np.float32)
    w = (rng.standard_normal((m, k), dtype=np.float32) / math.sqrt(k)).astype(np.float32)
    b = rng.standard_normal(m, dtype=np.float32)
    node = helper.make_node("LinearGelu", ["x", "W", "b"], ["y"], domain="org.graphcc.examples")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TP.FLOAT, [rows, k])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [rows, m])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = os.path.join(work, "linear_gelu.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                                  helper.make_opsetid("org.graphcc.examples", 1)]),
              model)
    np.save(os.path.join(work, "x.npy"), x)
    t = x.astype(np.float64) @ w.astype(np.float64).T + b
    ref = 0.5 * t * (1 + np.vectorize(math.erf)(t / math.sqrt(2)))
    times = {}
    for threads in (1, 2):
        out = os.path.join(work, "out%d" % threads)
        p = subprocess.run([graphcc, "run", model, "--ops", manifest, "--input",
                            "x=" + os.path.join(work, "x.npy"), "--output-dir", out,
                            "--threads", str(threads), "--repeat", str(repeat)],
                           capture_output=True, text=True, timeout=600)
        mt = re.search(r"median ([\d.]+) ms", p.stderr)
        if p.returncode or not mt:
            sys.exit("graphcc run --threads %d failed (exit %d): %s" % (threads, p.returncode,
                                                                       p.stderr[-2000:]))
        y = np.load(os.path.join(out, "y.npy"))
        err = float(abs(y - ref).max())
        if err > 1e-4 * max(1.0, float(abs(ref).max())):
            sys.exit("--threads %d: max abs error %.3g against NumPy" % (threads, err))
        times[threads] = float(mt.group(1))
        print("LinearGelu %dx%d @ %dx%d^T, --threads %d: median %.3f ms of %d runs "
              "(max abs error %.2g)" % (rows, k, m, k, threads, times[threads], repeat, err))
    print("speedup at 2 threads: %.2fx" % (times[1] / times[2]))


if __name__ == "__main__":
    main()
