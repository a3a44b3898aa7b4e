#!/usr/bin/python3
"""Run the generated new-opset tests (tests/onnx-new/data/, written by
generate.py) through `graphcc run`; no ONNX Runtime needed.

Usage: run.py --graphcc PATH --work DIR [--only SUBSTR]... [--jobs N] [--verbose]

Each case is one `graphcc run model.onnx --input NAME=input_i.pb ...
--output-dir OUT`. A case with expected outputs passes when every
OUT/<name>.npy equals output_i.pb within the case's rtol/atol (compare.py;
bfloat16, float8 and int4 outputs read as ml_dtypes writes them). A case
with "error" in case.json passes when graphcc exits 1 and its message
contains those words. Ends with "N passed, N failed".
types_check.py adds the element types NumPy lacks through .npy and .pb.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dtypes  # noqa: E402
import tensorio  # noqa: E402
import types_check  # noqa: E402
from compare import compare  # noqa: E402

DATA = os.path.join(HERE, "data")


def run_case(graphcc, name, work, timeout):
    d = os.path.join(DATA, name)
    with open(os.path.join(d, "case.json")) as f:
        meta = json.load(f)
    out = os.path.join(work, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    cmd = [graphcc, "run", os.path.join(d, "model.onnx"), "--output-dir", out]
    for i, n in enumerate(meta["inputs"]):
        cmd += ["--input", "%s=%s" % (n, os.path.join(d, "input_%d.pb" % i))]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out after %gs" % timeout
    err = p.stderr.decode("utf-8", "replace").strip()
    if "error" in meta:
        if p.returncode != 1:
            return "exit %d, expected 1 with a message containing %r" % (p.returncode,
                                                                         meta["error"])
        if meta["error"] not in err:
            return "message %r does not contain %r" % (err[:300], meta["error"])
        return None
    if p.returncode != 0:
        return "graphcc exit %d: %s" % (p.returncode, err.splitlines()[0][:300] if err else "")
    for i, n in enumerate(meta["outputs"]):
        code, want = tensorio.read_pb(os.path.join(d, "output_%d.pb" % i))
        npy = os.path.join(out, n + ".npy")
        if not os.path.exists(npy):
            return "graphcc wrote no %s.npy" % n
        try:
            got = tensorio.from_npy(np.load(npy, allow_pickle=False), code)
        except ValueError as e:
            return "output %s: %s" % (n, e)
        if code not in dtypes.SPECIAL and code != 8 and got.dtype != want.dtype:
            return "output %s: dtype %s, expected %s" % (n, got.dtype, want.dtype)
        why = compare(n, code, want, got, meta["rtol"], meta["atol"])
        if why:
            return why
    shutil.rmtree(out, ignore_errors=True)
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--verbose", action="store_true", help="print every case")
    a = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    graphcc = os.path.abspath(a.graphcc)
    names = sorted(n for n in os.listdir(DATA) if not a.only or any(s in n for s in a.only)) \
        if os.path.isdir(DATA) else []
    if not names:
        print("onnx-new: no cases in %s" % DATA)
        print("0 passed, 1 failed")
        return 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda n: (n, run_case(graphcc, n, a.work, a.timeout)), names))
    ops = {}
    failed = 0
    for n, why in results:
        with open(os.path.join(DATA, n, "case.json")) as f:
            meta = json.load(f)
        key = "%s-%d" % (meta["op"], meta["opset"])
        row = ops.setdefault(key, [0, 0])
        row[1 if why else 0] += 1
        if why:
            failed += 1
            print("FAIL %s: %s" % (n, why))
        elif a.verbose:
            print("ok   %s" % n)
    if not a.only or any(s in "types" for s in a.only):
        for label, why in types_check.run_checks(graphcc, os.path.join(a.work, "types")):
            results.append((label, why))
            if why:
                failed += 1
                print("FAIL %s: %s" % (label, why))
            elif a.verbose:
                print("ok   %s" % label)
    print("onnx-new: %d ops at their opsets: %s" % (len(ops), ", ".join(
        "%s %d/%d" % (k, p, p + f) for k, (p, f) in sorted(ops.items()))))
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
