#!/usr/bin/python3
"""Write docs/operators.md: every operator of ONNX's default domain up to
opset 23 (and the ai.onnx kernels ONNX Runtime's CPU provider has beyond
them), with its versions, its element types, whether graphcc runs it, and
what graphcc does not support and why.

Usage:
  gen-operators.py --graphcc BUILD/bin/graphcc [--check] [--out FILE]
      writes docs/operators.md (or FILE); --check compares instead and
      exits 1 when the file is out of date (tests/suites/operator-table)
  gen-operators.py --import-onnx ONNX_REPO_DOCS [--onnx-commit SHA]
      rewrites tools/opsets/onnx-ops.tsv from ONNX's docs/Operators.md and
      docs/Changelog.md (a checkout of github.com/onnx/onnx)

Inputs, all in the tree or built from it:
  graphcc ops                   the built-in op table, the declined op
                                versions, types and attributes with their
                                reasons (runtime/op-declines.c), the opsets
                                and the element types graphcc has
  tools/opsets/onnx-ops.tsv     ONNX's operators: versions, function ops,
                                element types per version
  tools/opsets/ort-cpu-kernels.tsv  ONNX Runtime's CPU kernels (ai.onnx)
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ONNX_TSV = os.path.join(HERE, "onnx-ops.tsv")
ORT_TSV = os.path.join(HERE, "ort-cpu-kernels.tsv")
DOC = os.path.join(ROOT, "docs", "operators.md")
MAX_OPSET = 23
# ONNX type names -> graphcc's (gc_dtype_name)
TYPE_NAMES = {"float": "float32", "double": "float64"}

# ai.onnx kernels of ONNX Runtime that are not ONNX operators (ONNX's
# experimental ops of opset 1, removed since, and ONNX Runtime's own), and
# why graphcc does not run them.
ORT_EXTRA = {
    "Affine": "experimental op of ONNX 1.2, removed from ONNX (write Mul and Add)",
    "Crop": "experimental op of ONNX 1.2, removed from ONNX (write Slice)",
    "DynamicSlice": "experimental op of ONNX 1.2, removed from ONNX (write Slice)",
    "ImageScaler": "experimental op of ONNX 1.2, removed from ONNX (write Mul and Add)",
    "ParametricSoftplus": "experimental op of ONNX 1.2, removed from ONNX (write Softplus "
                          "with Mul)",
    "Scale": "experimental op of ONNX 1.2, removed from ONNX (write Mul)",
    "ScaledTanh": "experimental op of ONNX 1.2, removed from ONNX (write Tanh with Mul; "
                  "plugins/seed-lenet serves it as an op package)",
    "MemcpyFromHost": "ONNX Runtime's own device-copy node, never in an exported model",
    "MemcpyToHost": "ONNX Runtime's own device-copy node, never in an exported model",
    "SimplifiedLayerNormalization": "ONNX Runtime's own fusion (its optimizer writes it); "
                                    "exporters write RMSNormalization, which graphcc runs",
}


# ---------------------------------------------------------------- inputs

def import_onnx(docs, commit):
    ops_md = open(os.path.join(docs, "Operators.md"), encoding="utf-8").read()
    log = open(os.path.join(docs, "Changelog.md"), encoding="utf-8").read()
    default = ops_md.split("### ai.onnx.preview")[0]
    functions = set()
    if "|**Function**|" in default:
        for m in re.finditer(r'^\|(?:<a href="#\w+">)?(\w+)(?:</a>)?\|',
                             default.split("|**Function**|")[1], re.M):
            functions.add(m.group(1))
    deprecated = set(re.findall(r'<a href="#(\w+)">\w+</a> \(deprecated\)', default))
    body = log.split("# ai.onnx.preview")[0]
    sections = re.split(r'^### <a name="(\w+)-(\d+)"></a>', body, flags=re.M)
    rows = []
    for i in range(1, len(sections) - 2, 3):
        op, ver, text = sections[i], int(sections[i + 1]), sections[i + 2]
        types = sorted(set(re.findall(r"tensor\((\w+)\)", text)))
        rows.append((op, ver, types))
    rows.sort(key=lambda r: (r[0], r[1]))
    head = commit or subprocess.run(["git", "-C", docs, "rev-parse", "HEAD"],
                                    capture_output=True, text=True).stdout.strip() or "?"
    with open(ONNX_TSV, "w") as f:
        f.write("# ONNX's default-domain operators: OP<TAB>VERSION<TAB>FLAGS<TAB>element types\n"
                "# of that version (inputs, outputs, type constraints). FLAGS: f = has a\n"
                "# function body (ONNX Runtime expands it when it has no kernel), d =\n"
                "# deprecated. From onnx/onnx docs/Operators.md and docs/Changelog.md at\n"
                "# commit %s, by tools/opsets/gen-operators.py --import-onnx.\n" % head)
        for op, ver, types in rows:
            flags = ("f" if op in functions else "") + ("d" if op in deprecated else "")
            f.write("%s\t%d\t%s\t%s\n" % (op, ver, flags or "-", ",".join(types) or "-"))
    print("wrote %s: %d op versions" % (ONNX_TSV, len(rows)))


def read_tsv(path):
    with open(path) as f:
        return [ln.rstrip("\n").split("\t") for ln in f if ln.strip() and ln[0] != "#"]


def read_onnx():
    ops = {}
    for op, ver, flags, types in read_tsv(ONNX_TSV):
        e = ops.setdefault(op, {"versions": {}, "function": "f" in flags,
                                "deprecated": "d" in flags})
        e["versions"][int(ver)] = [] if types == "-" else types.split(",")
    return ops


def read_ort():
    return {r[0]: [int(v) for v in r[1].split()] for r in read_tsv(ORT_TSV)}


def read_graphcc(graphcc):
    r = subprocess.run([graphcc, "ops"], capture_output=True, text=True)
    if r.returncode:
        sys.exit("gen-operators.py: %s ops failed: %s" % (graphcc, r.stderr.strip()))
    g = {"ops": {}, "declines": [], "dtypes": set(), "opsets": (1, 1), "versions": {}}
    for ln in r.stdout.splitlines():
        f = ln.split("\t")
        if f[0] == "op":
            g["ops"][(f[2] if f[2] != "-" else "", f[1])] = f[3:]
        elif f[0] == "decline":
            g["declines"].append({"op": f[1], "since": int(f[2]),
                                  "what": None if f[3] == "-" else f[3], "reason": f[4]})
        elif f[0] == "version":
            g["versions"].setdefault(f[1], []).append((int(f[2]), None if f[4] == "-" else f[4]))
        elif f[0] == "dtypes":
            g["dtypes"] = set(f[1].split(","))
        elif f[0] == "opsets":
            g["opsets"] = (int(f[1]), int(f[2]))
    return g


# ---------------------------------------------------------------- the table

def status(op, info, g):
    """-> (runs: {version: bool}, reasons: [str]) for ONNX op versions <= MAX_OPSET."""
    versions = sorted(v for v in info["versions"] if v <= MAX_OPSET)
    builtin = ("", op) in g["ops"]
    rows = [d for d in g["declines"] if d["op"] == op]
    vrows = [d for d in rows if d["what"] is None]
    runs, reasons = {}, []
    vtab = sorted(g["versions"].get(op, []))  # op-versions.h: the newest row <= v decides
    for v in versions:
        declined = [d for d in vrows if d["since"] <= v and v <= g["opsets"][1]]
        row = [r for r in vtab if r[0] <= v]
        refused = bool(row) and row[-1][1] is not None
        runs[v] = builtin and not declined and not refused and v <= g["opsets"][1]
    for d in vrows:
        reasons.append("%s-%d and later: %s" % (op, d["since"], d["reason"]))
    for ver, why in vtab:
        if why is not None:
            reasons.append("%s-%d: %s" % (op, ver, why))
    if not builtin and not vrows:
        reasons.append("declined: graphcc has no kernel for it")
    for d in rows:
        if d["what"] is not None:
            reasons.append("%s: %s" % (d["what"], d["reason"]))
    newest = info["versions"][versions[-1]] if versions else []
    missing = sorted(t for t in newest if TYPE_NAMES.get(t, t) not in g["dtypes"])
    if missing and g["dtypes"]:
        reasons.append("element types %s: graphcc has no such tensors" % ", ".join(missing))
    return runs, reasons


def ort_cell(op, info, ort):
    starts = [v for v in ort.get(op, []) if v <= MAX_OPSET]
    if starts:
        return ", ".join("%d" % v for v in starts)
    if info and info["function"]:
        return "function"
    return "-"


def counts(onnx, g, ort):
    """Per opset: op versions new at it; how many graphcc runs, declines."""
    lines = []
    tot_run = tot_dec = 0
    for n in range(1, MAX_OPSET + 1):
        new = [(op, info) for op, info in onnx.items() if n in info["versions"]]
        if not new:
            continue
        run = sum(1 for op, info in new if status(op, info, g)[0][n])
        ort_n = sum(1 for op, info in new
                    if any(s <= n for s in ort.get(op, [])) or info["function"])
        tot_run += run
        tot_dec += len(new) - run
        lines.append("| %d | %d | %d | %d | %d |" % (n, len(new), run, len(new) - run, ort_n))
    return lines, tot_run, tot_dec


def render(onnx, ort, g):
    ops = sorted(op for op, info in onnx.items() if min(info["versions"]) <= MAX_OPSET)
    L = ["<!-- generated by tools/opsets/gen-operators.py; do not edit -->",
         "# Operators",
         "",
         "Every operator of ONNX's default domain up to opset %d: its versions, whether "
         "graphcc runs it, what ONNX Runtime 1.30 runs on CPU, its element types, and what "
         "graphcc does not support, with the reason. graphcc reads models of opsets %d to %d; "
         "a node graphcc declines is refused when the model is compiled, with a message "
         "that names the op, the version or type, and the reason."
         % (MAX_OPSET, g["opsets"][0], g["opsets"][1]),
         "",
         "Generated by `tools/opsets/gen-operators.py --graphcc build/bin/graphcc` from "
         "`graphcc ops` (the built-in op table and runtime/op-declines.c), "
         "tools/opsets/onnx-ops.tsv (ONNX's operator documentation) and "
         "tools/opsets/ort-cpu-kernels.tsv (ONNX Runtime's CPU kernels); "
         "tests/suites/operator-table fails when this file is out of date.",
         ""]
    lines, tot_run, tot_dec = counts(onnx, g, ort)
    at_max = [op for op in ops]
    run_max = [op for op in at_max
               if status(op, onnx[op], g)[0].get(max(v for v in onnx[op]["versions"]
                                                      if v <= MAX_OPSET))]
    L += ["## Counts", "",
          "At opset %d, ONNX's default domain has %d operators; graphcc runs %d of them at "
          "their opset-%d version and declines %d (named below with the reason)."
          % (MAX_OPSET, len(at_max), len(run_max), MAX_OPSET, len(at_max) - len(run_max)),
          "",
          "Op versions by the opset that introduced them (an op version is supported when "
          "graphcc runs it, declined otherwise; ONNX Runtime: a CPU kernel, or the ONNX "
          "function body it expands):",
          "",
          "| opset | op versions | graphcc runs | declined | ONNX Runtime 1.30 CPU |",
          "|---|---|---|---|---|"] + lines + [
          "| all | %d | %d | %d | |" % (tot_run + tot_dec, tot_run, tot_dec), ""]
    L += ["## The operators", "",
          "Versions: the opsets at which ONNX changed the op (up to %d). graphcc: the versions "
          "it runs. ONNX Runtime: the first opset of each CPU kernel (\"function\": it expands "
          "the op's ONNX function body). Types: the element types of the op's newest version."
          % MAX_OPSET, "",
          "| op | versions | graphcc | ONNX Runtime 1.30 CPU | types | not supported, and why |",
          "|---|---|---|---|---|---|"]
    for op in ops:
        info = onnx[op]
        vs = sorted(v for v in info["versions"] if v <= MAX_OPSET)
        runs, reasons = status(op, info, g)
        ok = [v for v in vs if runs[v]]
        cell = ("all" if len(ok) == len(vs) else "none" if not ok
                else ", ".join(str(v) for v in ok))
        types = ", ".join(TYPE_NAMES.get(t, t) for t in info["versions"][vs[-1]]) or "-"
        name = op + (" (deprecated)" if info["deprecated"] else "")
        L.append("| %s | %s | %s | %s | %s | %s |" % (
            name, ", ".join(str(v) for v in vs), cell, ort_cell(op, info, ort), types,
            "; ".join(reasons) or ""))
    extra = sorted(op for op in ort if op not in onnx)
    L += ["", "## ONNX Runtime's other ai.onnx kernels", "",
          "ONNX Runtime's CPU provider registers these in the ai.onnx domain, but they are "
          "not ONNX operators (any more); graphcc runs none of them:", "",
          "| op | why not |", "|---|---|"]
    for op in extra:
        if op not in ORT_EXTRA:
            sys.exit("gen-operators.py: ONNX Runtime's %s is no ONNX op and has no reason "
                     "in ORT_EXTRA" % op)
        L.append("| %s | %s |" % (op, ORT_EXTRA[op]))
    unknown = sorted({d["op"] for d in g["declines"]} - set(onnx))
    if unknown:
        sys.exit("gen-operators.py: runtime/op-declines.c names ops ONNX has not: %s"
                 % unknown)
    return "\n".join(L) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphcc")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--out", default=DOC)
    ap.add_argument("--import-onnx", metavar="ONNX_REPO_DOCS")
    ap.add_argument("--onnx-commit", help="the commit the docs are from (when not a checkout)")
    a = ap.parse_args(argv)
    if a.import_onnx:
        import_onnx(a.import_onnx, a.onnx_commit)
        return 0
    if not a.graphcc:
        ap.error("--graphcc is required")
    text = render(read_onnx(), read_ort(), read_graphcc(a.graphcc))
    if a.check:
        old = open(a.out, encoding="utf-8").read() if os.path.exists(a.out) else ""
        if old != text:
            new_lines, old_lines = text.splitlines(), old.splitlines()
            diff = [ln for ln in new_lines if ln not in set(old_lines)][:5]
            print("%s is out of date (regenerate: tools/opsets/gen-operators.py --graphcc "
                  "build/bin/graphcc); new or changed lines:\n  %s"
                  % (os.path.relpath(a.out, ROOT), "\n  ".join(diff) or "(lines removed)"))
            return 1
        print("%s is up to date" % os.path.relpath(a.out, ROOT))
        return 0
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
