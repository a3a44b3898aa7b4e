#!/usr/bin/python3
"""Generate the tests of operators newer than ONNX 1.12 (opsets 18..23):
each case of tests/onnx-new/cases/*.py becomes a single-op model, its
inputs and its expected outputs under tests/onnx-new/data/<case>/, after
ONNX Runtime 1.30 has run the same model and agreed with the case's NumPy
reference (or, for an error case, refused it too).

Usage: generate.py [--ort DIR] [--only SUBSTR]... [--list] [--keep-going]

--ort is where `make bench-ort` installed onnxruntime-node (default
bench/node_modules of this tree). Needs node; `make test` never runs this
script, only tests/onnx-new/run.py over what it wrote. Nothing is written
unless every selected case agrees (with --keep-going the agreeing ones
are written and the rest listed). Without --only, folders of cases that
no longer exist are removed.
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import caselib  # noqa: E402
import dtypes  # noqa: E402
import tensorio  # noqa: E402
from compare import compare  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")
ORT_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
             7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
             13: "uint64"}


def load_cases(only):
    cases, seen = [], {}
    cdir = os.path.join(HERE, "cases")
    for f in sorted(os.listdir(cdir)):
        if not f.endswith(".py") or f.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location("cases_" + f[:-3], os.path.join(cdir, f))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for c in mod.cases():
            if c.name in seen:
                sys.exit("case %s defined in %s and %s" % (c.name, seen[c.name], f))
            seen[c.name] = f
            c.file = f
            if not only or any(s in c.name for s in only):
                cases.append(c)
    return cases


def ort_model(model, case, out_codes):
    """The model ONNX Runtime runs: the same, with Casts from float32 (int8
    for int4) in front of inputs and behind outputs whose type its
    JavaScript API cannot carry (bfloat16, float8, int4). The carried
    values are exact in both types, so the casts change nothing."""
    m = onnx.ModelProto()  # a copy: the case's own model keeps its types
    m.CopyFrom(model)
    g = m.graph
    wrap_in = [vi for vi in g.input if vi.type.tensor_type.elem_type in dtypes.SPECIAL]
    wrap_out = [vi for vi in g.output if vi.type.tensor_type.elem_type in dtypes.SPECIAL]
    if not wrap_in and not wrap_out:
        return model, {}
    renamed = {}
    for vi in wrap_in:
        code = vi.type.tensor_type.elem_type
        carrier = caselib.NP_TO_ONNX[np.dtype(dtypes.CARRIER[code])]
        new = vi.name + "__carrier"
        extra = {"saturate": 0} if code in dtypes.F8 else {}  # keep inf and NaN as they are
        g.node.insert(0, helper.make_node("Cast", [new], [vi.name], to=code, **extra))
        vi.name = new
        vi.type.tensor_type.elem_type = carrier
        renamed[new] = carrier
    for vi in wrap_out:
        code = vi.type.tensor_type.elem_type
        carrier = caselib.NP_TO_ONNX[np.dtype(dtypes.CARRIER[code])]
        new = vi.name + "__carrier"
        g.node.append(helper.make_node("Cast", [vi.name], [new], to=carrier))
        vi.name = new
        vi.type.tensor_type.elem_type = carrier
    return m, renamed


def prepare(case, work):
    """-> the ORT job for the case and what the writer needs."""
    d = os.path.join(work, case.name)
    os.makedirs(d)
    if case.error is None:
        exp = case.expected()
        out_codes = [c for _, c, _ in exp]
    else:
        exp = None
        first = case.feeds()[0][1] if case.feeds() else np.zeros(0, np.float32)
        out_codes = [case.out_types.get(n, caselib.type_code(first)) for n in case.outputs]
    model = case.model(out_codes)
    om, _ = ort_model(model, case, out_codes)
    onnx.save(om, os.path.join(d, "ort.onnx"))
    inputs = []
    for i, (name, v) in enumerate(case.feeds()):
        code, vals = caselib.type_code(v), caselib.values_of(v)
        if code in dtypes.SPECIAL:
            code = caselib.NP_TO_ONNX[np.dtype(dtypes.CARRIER[code])]
            name = name + "__carrier"
        f = os.path.join(d, "in%d.bin" % i)
        if code == TensorProto.STRING:
            with open(f, "w") as fh:
                json.dump([str(s) for s in vals.ravel().tolist()], fh)
        else:
            np.ascontiguousarray(vals).astype(vals.dtype.newbyteorder("<")).tofile(f)
        inputs.append({"name": name, "type": ORT_TYPES[code], "dims": list(vals.shape),
                       "file": f})
    job = {"model": os.path.join(d, "ort.onnx"), "inputs": inputs,
           "outdir": os.path.join(d, "out")}
    return job, model, exp, out_codes


def run_ort(ort, jobs, work):
    """-> one result per job. ONNX Runtime aborts on some malformed
    models (an assertion in a kernel): the job it died on counts as refused
    ("crashed") and the rest run in a new process."""
    results = []
    while len(results) < len(jobs):
        path = os.path.join(work, "jobs-%d.json" % len(results))
        with open(path, "w") as f:
            json.dump(jobs[len(results):], f)
        p = subprocess.run(["node", os.path.join(HERE, "ort-run.js"), ort, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        results += [json.loads(line) for line in p.stdout.decode().splitlines()]
        if p.returncode != 0 and len(results) < len(jobs):
            why = p.stderr.decode("utf-8", "replace").strip().splitlines()
            results.append({"error": "ONNX Runtime crashed (exit %d): %s" % (
                p.returncode, why[-1][:200] if why else "")})
    return results


def ort_value(o, code):
    if o["type"] == "string":
        with open(o["file"]) as f:
            return np.array(json.load(f), dtype=object).reshape(o["dims"])
    npt = {"float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
           "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
           "int64": np.int64, "uint64": np.uint64, "bool": np.bool_, "float16": np.float16}
    a = np.fromfile(o["file"], dtype=np.dtype(npt[o["type"]]).newbyteorder("<"))
    return a.reshape(o["dims"])


def check(case, exp, result):
    """-> None when ONNX Runtime agrees with the case, else the reason."""
    if case.error is not None:
        if case.ort_differs:  # ONNX Runtime runs what the spec forbids
            return None if "error" not in result else \
                "ONNX Runtime refuses it too (%s): drop ort_differs" % result["error"][:100]
        if "error" in result or case.declined:
            return None
        return "ONNX Runtime ran a case that must be refused (%s)" % case.error
    if "error" in result:  # ort_differs: ONNX Runtime 1.30 lacks the kernel
        return None if case.ort_differs else "ONNX Runtime refused it: %s" % result["error"]
    outs = result["outputs"]
    if len(outs) != len(exp):
        return "ONNX Runtime gave %d outputs, the reference %d" % (len(outs), len(exp))
    whys = []
    for (name, code, want), o in zip(exp, outs):
        got = ort_value(o, code)
        why = compare(name, code, want, got, case.rtol, case.atol)
        if why:
            whys.append(why)
    if case.ort_differs:
        return None if whys else "ONNX Runtime agrees, but the case says it differs (%s)" % \
            case.ort_differs
    return "; ".join(whys) or None


def write_case(case, model, exp, out_codes, ort_result):
    d = os.path.join(DATA, case.name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    names = []
    for i, (name, v) in enumerate(case.feeds()):
        tensorio.write_pb(os.path.join(d, "input_%d.pb" % i), name, caselib.type_code(v),
                          caselib.values_of(v))
        names.append(name)
    meta = {"op": case.op, "opset": case.opset, "domain": case.domain, "file": case.file,
            "inputs": names, "outputs": case.outputs,
            "output_types": [dtypes.NAMES.get(c, str(c)) for c in out_codes],
            "rtol": case.rtol, "atol": case.atol}
    if case.note:
        meta["note"] = case.note
    if case.error is not None:
        meta["error"] = case.error
        meta["onnxruntime"] = ort_result.get("error", "runs it")
    else:
        for i, (name, code, want) in enumerate(exp):
            tensorio.write_pb(os.path.join(d, "output_%d.pb" % i), name, code, want)
    if case.ort_differs:
        meta["onnxruntime_differs"] = case.ort_differs
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ort", default=os.path.join(ROOT, "bench", "node_modules"))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--keep-going", action="store_true")
    a = ap.parse_args(argv)
    cases = load_cases(a.only)
    if a.list:
        for c in cases:
            print("%-44s %-22s opset %d  %s" % (c.name, c.op, c.opset, c.file))
        return 0
    if not os.path.isdir(os.path.join(a.ort, "onnxruntime-node")):
        sys.exit("generate: no onnxruntime-node in %s (run `make bench-ort`)" % a.ort)
    with tempfile.TemporaryDirectory(prefix="onnx-new-") as work:
        prepared = [prepare(c, work) for c in cases]
        results = run_ort(a.ort, [p[0] for p in prepared], work)
        bad = []
        for c, (job, model, exp, codes), r in zip(cases, prepared, results):
            why = check(c, exp, r)
            if why:
                bad.append((c, why))
                print("DISAGREE %s: %s" % (c.name, why))
        if bad and not a.keep_going:
            print("generate: %d of %d cases disagree with ONNX Runtime; nothing written"
                  % (len(bad), len(cases)))
            return 1
        badnames = {c.name for c, _ in bad}
        for c, (job, model, exp, codes), r in zip(cases, prepared, results):
            if c.name not in badnames:
                write_case(c, model, exp, codes, r)
    if not a.only and os.path.isdir(DATA):
        names = {c.name for c in cases}
        for d in os.listdir(DATA):
            if d not in names:
                shutil.rmtree(os.path.join(DATA, d))
    print("generate: %d cases written, %d disagree" % (len(cases) - len(bad), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
