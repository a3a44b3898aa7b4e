#!/usr/bin/python3
"""The random ops through `graphcc run`: exact against NumPy's legacy
RandomState streams that docs/random.md promises, statistically against
the distributions (mean, variance, Kolmogorov-Smirnov), reproducible
across thread counts, different across seeds and runs.

Usage: check.py --graphcc PATH --work DIR      (ends with "N passed, N failed")

Bounds: means and frequencies within 5 standard errors, sample variances
within 5 standard errors of the variance estimate, the KS distance below
1.95/sqrt(n) (the 0.001 critical value): with the fixed seeds used here a
correct kernel passes every time, and a wrong distribution (a shifted
mean, a scale off by a few percent, another shape) fails.
"""
import argparse
import math
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

RESULTS = []


def check(name, ok, detail=""):
    RESULTS.append(ok)
    print("%s %s%s" % ("PASS" if ok else "FAIL", name, (": " + detail) if detail else ""))


class Runner:
    def __init__(self, graphcc, work):
        self.graphcc, self.work, self.n = graphcc, work, 0

    def run(self, nodes, outputs, inputs=(), opset=18, args=(), expect_fail=False):
        """-> [arrays] (or stderr when expect_fail)."""
        self.n += 1
        d = os.path.join(self.work, "m%d" % self.n)
        os.makedirs(d, exist_ok=True)
        ins = [helper.make_tensor_value_info(n, {np.dtype(np.float32): TensorProto.FLOAT,
                                                 np.dtype(np.float64): TensorProto.DOUBLE,
                                                 np.dtype(np.bool_): TensorProto.BOOL}[a.dtype],
                                             a.shape) for n, a in inputs]
        outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
        g = helper.make_graph(nodes, "random", ins, outs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        onnx.save(m, os.path.join(d, "model.onnx"))
        cmd = [self.graphcc, "run", os.path.join(d, "model.onnx"), "--output-dir",
               os.path.join(d, "out")] + list(args)
        for n, a in inputs:
            np.save(os.path.join(d, n + ".npy"), a)
            cmd += ["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if expect_fail:
            return p.returncode, p.stderr.decode()
        if p.returncode:
            raise RuntimeError("graphcc exit %d: %s" % (p.returncode, p.stderr.decode()[:300]))
        return [np.load(os.path.join(d, "out", o + ".npy")) for o in outputs]


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def fnv1a(name):
    h = 2166136261
    for c in name.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def rs_node(seed, name, run=0):
    """The stream of a node without a seed attribute under --seed (docs/random.md)."""
    key = np.array([seed & 0xFFFFFFFF, seed >> 32, fnv1a(name), run, 0, 0], dtype=np.uint32)
    return np.random.RandomState(key)


def exact(r):
    y, = r.run([node("RandomUniform", [], ["y"], seed=5.0, shape=[3, 4], low=-1.0, high=2.0)],
               ["y"])
    check("exact/uniform seed attribute", np.array_equal(
        y, np.random.RandomState(5).uniform(-1, 2, (3, 4)).astype(np.float32)))
    y, = r.run([node("RandomNormal", [], ["y"], seed=7.0, shape=[5, 3], mean=1.0, scale=2.0,
                     dtype=TensorProto.DOUBLE)], ["y"])
    want = np.random.RandomState(7).normal(1, 2, (5, 3))
    check("exact/normal float64 seed attribute", np.allclose(y, want, rtol=1e-15, atol=0),
          "max diff %g" % np.abs(y - want).max())
    x = np.random.RandomState(0).random_sample((4, 5)).astype(np.float32)
    y, = r.run([node("Bernoulli", ["x"], ["y"], seed=3.0)], ["y"], inputs=[("x", x)])
    check("exact/bernoulli", np.array_equal(
        y, (np.random.RandomState(3).random_sample(x.shape) < x).astype(np.float32)))
    y, = r.run([node("RandomNormalLike", ["x"], ["y"], name="noise")], ["y"], inputs=[("x", x)],
               args=["--seed", "42"])
    check("exact/normal-like --seed stream", np.array_equal(
        y, rs_node(42, "noise").normal(0, 1, x.shape).astype(np.float32)))
    big = (1 << 40) + 12345
    y, = r.run([node("Relu", ["x"], ["x1"]), node("RandomUniformLike", ["x1"], ["y"])], ["y"],
               inputs=[("x", x)], args=["--seed", str(big)])
    check("exact/uniform-like 64-bit --seed, unnamed second node", np.array_equal(
        y, rs_node(big, "#1").random_sample(x.shape).astype(np.float32)))
    y, = r.run([node("RandomUniform", [], ["y"], shape=[6], seed=11.0)], ["y"],
               args=["--repeat", "3"])
    rs = np.random.RandomState(np.array([11, 2, 0, 0], dtype=np.uint32))
    check("exact/third run of a session (--repeat 3 writes the last)",
          np.array_equal(y, rs.random_sample(6).astype(np.float32)))
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.1, 0.1, 0.1]], np.float32))
    y, = r.run([node("Multinomial", ["x"], ["y"], seed=9.0, sample_size=7,
                     dtype=TensorProto.INT64)], ["y"], inputs=[("x", logits)])
    u = np.random.RandomState(9).random_sample((2, 7))
    p = np.exp(logits.astype(np.float64) - logits.max(1, keepdims=True))
    want = np.stack([np.searchsorted(np.cumsum(p[i]), u[i] * p[i].sum(), side="right")
                     for i in range(2)])
    check("exact/multinomial", y.dtype == np.int64 and np.array_equal(y, want), "%s vs %s" % (
        y.tolist(), want.tolist()))
    xs = np.random.RandomState(1).standard_normal((3, 4, 5)).astype(np.float32)
    y, m = r.run([node("Dropout", ["x", "r", "t"], ["y", "m"], seed=0)], ["y", "m"],
                 inputs=[("x", xs), ("r", np.array(0.75, np.float32)), ("t", np.array(True))])
    mask = np.random.RandomState(0).uniform(0, 1, xs.shape) >= 0.75
    check("exact/training dropout", np.array_equal(m, mask) and np.allclose(y, xs * mask * 4.0))


def ks(sample, cdf):
    s = np.sort(sample.astype(np.float64))
    n = s.size
    c = cdf(s)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


def within(name, got, want, se, k=5.0):
    check(name, abs(got - want) <= k * se, "%.6g vs %.6g (5 standard errors: %.3g)" % (
        got, want, k * se))


def stats(r):
    n = 200000
    lo, hi = -2.0, 3.0
    y, = r.run([node("RandomUniform", [], ["y"], shape=[n], low=lo, high=hi)], ["y"],
               args=["--seed", "1"])
    var = (hi - lo) ** 2 / 12
    within("stats/uniform mean", y.mean(), (lo + hi) / 2, math.sqrt(var / n))
    within("stats/uniform variance", y.var(), var, var * math.sqrt(0.8 / n))
    d = ks(y, lambda v: (v - lo) / (hi - lo))
    check("stats/uniform KS", d < 1.95 / math.sqrt(n), "D = %.5f, bound %.5f" % (
        d, 1.95 / math.sqrt(n)))
    check("stats/uniform range", y.min() >= lo and y.max() < hi)
    mu, sd = 1.5, 0.5
    for dt, name in ((TensorProto.FLOAT, "float32"), (TensorProto.DOUBLE, "float64"),
                     (TensorProto.FLOAT16, "float16")):
        y, = r.run([node("RandomNormal", [], ["y"], shape=[n], mean=mu, scale=sd, dtype=dt)],
                   ["y"], args=["--seed", "2"])
        y = y.astype(np.float64)
        within("stats/normal %s mean" % name, y.mean(), mu, sd / math.sqrt(n))
        within("stats/normal %s variance" % name, y.var(), sd * sd,
               sd * sd * math.sqrt(2.0 / n) + (1e-3 if name == "float16" else 0))
        bound = 1.95 / math.sqrt(n) + (2e-3 if name == "float16" else 0)
        d = ks(y, lambda v: 0.5 * (1 + np.vectorize(math.erf)((v - mu) / (sd * math.sqrt(2)))))
        check("stats/normal %s KS" % name, d < bound, "D = %.5f, bound %.5f" % (d, bound))
    p = np.repeat(np.array([0.0, 0.05, 0.5, 0.9, 1.0], np.float32), 40000).reshape(5, 40000)
    y, = r.run([node("Bernoulli", ["p"], ["y"], dtype=TensorProto.BOOL)], ["y"],
               inputs=[("p", p)], args=["--seed", "3"])
    for i, q in enumerate((0.0, 0.05, 0.5, 0.9, 1.0)):
        within("stats/bernoulli p=%g" % q, y[i].mean(), q,
               max(math.sqrt(q * (1 - q) / 40000), 1e-12))
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    y, = r.run([node("Multinomial", ["x"], ["y"], sample_size=100000)], ["y"],
               inputs=[("x", np.log(probs).astype(np.float32)[None])], args=["--seed", "4"])
    for c, q in enumerate(probs):
        within("stats/multinomial class %d" % c, np.mean(y == c), q, math.sqrt(q * (1 - q) / 1e5))
    x = np.ones((1, 100000), np.float32)
    y, m = r.run([node("Dropout", ["x", "r", "t"], ["y", "m"])], ["y", "m"],
                 inputs=[("x", x), ("r", np.array(0.3, np.float32)), ("t", np.array(True))],
                 args=["--seed", "5"])
    within("stats/dropout keep rate", m.mean(), 0.7, math.sqrt(0.21 / 1e5))
    check("stats/dropout scale", np.all(y[m] == np.float32(1 / 0.7)) and np.all(y[~m] == 0))


def reproducible(r):
    nodes = [node("RandomNormal", [], ["a"], shape=[50000]),
             node("RandomUniform", [], ["b"], shape=[50000], seed=8.0)]
    a1, b1 = r.run(nodes, ["a", "b"], args=["--seed", "77", "--threads", "1"])
    a2, b2 = r.run(nodes, ["a", "b"], args=["--seed", "77", "--threads", "2"])
    check("repro/--seed across thread counts", np.array_equal(a1, a2) and np.array_equal(b1, b2))
    a3, b3 = r.run(nodes, ["a", "b"], args=["--seed", "78"])
    check("repro/another --seed changes only unseeded nodes",
          not np.array_equal(a1, a3) and np.array_equal(b1, b3))
    a4, _ = r.run(nodes, ["a", "b"])
    a5, _ = r.run(nodes, ["a", "b"])
    check("repro/no --seed: a fresh seed per session", not np.array_equal(a4, a5))
    y1, = r.run([node("RandomNormal", [], ["y"], shape=[8], seed=8.0)], ["y"],
                args=["--repeat", "2"])
    y0, = r.run([node("RandomNormal", [], ["y"], shape=[8], seed=8.0)], ["y"])
    check("repro/each run of a session draws anew", not np.array_equal(y0, y1))
    code, err = r.run([node("RandomNormal", [], ["y"], shape=[4])], ["y"],
                      args=["--seed", "-1"], expect_fail=True)
    check("repro/--seed -1 is a usage error", code == 2 and "--seed" in err, err.strip())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    r = Runner(os.path.abspath(a.graphcc), a.work)
    for part in (exact, stats, reproducible):
        try:
            part(r)
        except Exception as e:  # a crash of one part is a failure, the rest still run
            check("%s: %s" % (part.__name__, type(e).__name__), False, str(e)[:300])
    passed = sum(RESULTS)
    print("%d passed, %d failed" % (passed, len(RESULTS) - passed))
    return 0 if passed == len(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
