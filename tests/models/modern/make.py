#!/usr/bin/python3
"""Write the models of builders.py with their inputs and NumPy reference
outputs, optionally checked against ONNX Runtime 1.30.

Usage: make.py OUTDIR [--size test|bench] [--only NAME...] [--ort ORT_MODULES]

OUTDIR/NAME/ gets model.onnx, one <input>.npy per graph input and
expected/<output>.npy per graph output (the NumPy reference, float64 cast
to float32). With --ort (the bench/node_modules folder `make bench-ort`
fills) each model also runs in ONNX Runtime through
tools/bench/ort-worker.js; the largest difference from the reference is
written to OUTDIR/NAME/ort.json and must be within the tolerance the test
uses (tests/suites/modern-models), else nothing is written.

The test-size files are kept in the tree (tests/models/modern/data), made
by `make.py tests/models/modern/data --ort bench/node_modules`;
tools/bench/bench_models.py makes the bench-size ones.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
import builders  # noqa: E402

# |got - want| <= ATOL + RTOL * max|want|, per output (float32 against a
# float64 reference through a few hundred sums per value)
RTOL, ATOL = 1e-4, 1e-5


def max_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return float("inf"), "shape %s, expected %s" % (got.shape, want.shape)
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    bound = ATOL + RTOL * (float(np.max(np.abs(want))) if want.size else 0.0)
    return err, None if err <= bound else "max error %.3g > %.3g" % (err, bound)


def run_ort(ort_modules, model_path, feeds, n_out):
    with tempfile.TemporaryDirectory() as tmp:
        args = []
        for k, v in feeds.items():
            p = os.path.join(tmp, k + ".npy")
            np.save(p, v)
            args.append("%s=%s" % (k, p))
        worker = os.path.join(ROOT, "tools", "bench", "ort-worker.js")
        r = subprocess.run(["node", worker, os.path.abspath(ort_modules), model_path, "1"] + args,
                           input="run 1\ndump %s\nquit\n" % tmp, capture_output=True, text=True)
        if r.returncode or "error" in r.stdout:
            sys.exit("make.py: ONNX Runtime failed on %s: %s%s" % (model_path, r.stdout,
                                                                  r.stderr))
        version = r.stdout.split()[2] if r.stdout.startswith("ready") else "?"
        return [np.load(os.path.join(tmp, "%d.npy" % i)) for i in range(n_out)], version


def write(name, outdir, size, ort):
    model, feeds, want, names = builders.MODELS[name](size)
    d = os.path.join(outdir, name)
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    mpath = os.path.join(d, "model.onnx")
    onnx.save(model, mpath)
    if ort:
        got, version = run_ort(ort, mpath, feeds, len(names))
        report = {"onnxruntime": version, "rtol": RTOL, "atol": ATOL, "max_abs_err": {}}
        for n, g, w in zip(names, got, want):
            err, bad = max_err(g, w)
            if bad:
                os.remove(mpath)
                sys.exit("make.py: %s: ONNX Runtime's %s differs from NumPy's: %s"
                         % (name, n, bad))
            report["max_abs_err"][n] = err
        with open(os.path.join(d, "ort.json"), "w") as f:
            json.dump(report, f, indent=1, sort_keys=True)
            f.write("\n")
    for k, v in feeds.items():
        np.save(os.path.join(d, k + ".npy"), v)
    for n, w in zip(names, want):
        np.save(os.path.join(d, "expected", n + ".npy"), w)
    print("%-10s %s: %d nodes, %s%s" % (name, size, len(model.graph.node),
                                        ", ".join(names), " (checked against ONNX Runtime)"
                                        if ort else ""), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--size", choices=["test", "bench"], default="test")
    ap.add_argument("--only", nargs="+", choices=sorted(builders.MODELS))
    ap.add_argument("--ort", metavar="ORT_MODULES")
    a = ap.parse_args(argv)
    for name in a.only or sorted(builders.MODELS):
        write(name, a.outdir, a.size, a.ort)
    return 0


if __name__ == "__main__":
    sys.exit(main())
