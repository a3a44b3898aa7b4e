#!/usr/bin/python3
"""Compare a `graphcc run --dump-dir` folder with reference intermediates.

    tools/compare_intermediates.py DUMP_DIR REF_DIR [--rtol R] [--atol A] [--all]

REF_DIR holds .npy files named by ONNX value name, made file-safe the way
graphcc names its files (safe_name below: the same rule as --dump-dir and
--output-dir), e.g. written by PyTorch forward hooks (save_module_outputs
below). Tensors are taken in the order graphcc produced them (DUMP_DIR/
tensors.tsv); the first one that differs beyond the tolerance is printed
with the node that produced it, where, and the two values:

    DIFF /blocks/blocks.1/fc/Gemm_output_0, produced by node
         '/blocks/blocks.1/fc/Gemm': 16 of 16 elements differ; worst at
         [0, 3]: graphcc 0.8125 vs reference 0.3125 (abs diff 0.5)

Everything before it agrees, so that node (or what feeds it that the dump
does not show, such as a weight: --dump-weights dumps those) is where the
two computations part. Tensors graphcc fused or folded away are not in the
dump; reference files for them are listed, not compared.

Exit status: 0 all compared tensors agree, 1 a difference, 2 usage or
unreadable folders.

As a library (import compare_intermediates):
  safe_name(value_name)           the file name (without .npy) graphcc uses
  module_values(onnx_path)        {torch module name: ONNX value name} for an
                                  exported model (torch.onnx scope names)
  save_module_outputs(model, onnx_path, ref_dir)  forward hooks that save
                                  each module's output as REF_DIR/<value>.npy
  compare(dump_dir, ref_dir, rtol, atol, stop_at_first) -> (rows, first)
"""
import argparse
import os
import sys

import numpy as np

SAFE_NAME_MAX = 100  # GC_SAFE_NAME_MAX in runtime/fileio.h


def safe_name(name):
    """gc_file_safe_name: leading '/' dropped, bytes outside [A-Za-z0-9._-]
    (and a leading '.') become '_', cut at 100 bytes; 'unnamed' if empty."""
    out = []
    for c in name.encode("utf-8").lstrip(b"/"):
        if len(out) == SAFE_NAME_MAX:
            break
        ch = chr(c)
        ok = ch.isascii() and (ch.isalnum() or ch in "_-" or (ch == "." and out))
        out.append(ch if ok else "_")
    return "".join(out) or "unnamed"


def _unescape(cell):
    out, i = [], 0
    while i < len(cell):
        if cell[i] == "\\" and i + 1 < len(cell):
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}.get(cell[i + 1],
                                                                      cell[i + 1]))
            i += 2
        else:
            out.append(cell[i])
            i += 1
    return "".join(out)


def read_map(dump_dir):
    """tensors.tsv as a list of dicts, in the order graphcc wrote them."""
    with open(os.path.join(dump_dir, "tensors.tsv"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    head = lines[0].split("\t")
    rows = []
    for ln in lines[1:]:
        if ln:
            cells = [_unescape(c) for c in ln.split("\t")]
            rows.append(dict(zip(head, cells + [""] * (len(head) - len(cells)))))
    return rows


def _module_of_scope(scope):
    """'/blocks/blocks.0/act' -> 'blocks.0.act' (torch.onnx scope names:
    one component per module, a child of a container named by its path)."""
    name = ""
    for part in [p for p in scope.split("/") if p]:
        name = part if not name or part.startswith(name + ".") else name + "." + part
    return name


def module_values(onnx_path):
    """{module name: ONNX value name}: for each module scope, the output of
    the last node inside it (its result, in the exported graph's order)."""
    import onnx
    g = onnx.load(onnx_path).graph
    out = {"": g.output[0].name} if g.output else {}  # the model itself
    for node in g.node:
        scope = node.name.rsplit("/", 1)[0] if "/" in node.name else ""
        while scope:
            if node.output and node.op_type != "Constant":
                out[_module_of_scope(scope)] = node.output[0]
            scope = scope.rsplit("/", 1)[0]
    return out


def save_module_outputs(model, onnx_path, ref_dir):
    """Registers forward hooks on model's modules that save each module's
    output tensor as REF_DIR/<safe_name(ONNX value)>.npy; returns the hook
    handles (call .remove() on each when done)."""
    values = module_values(onnx_path)
    os.makedirs(ref_dir, exist_ok=True)
    handles = []
    for name, mod in model.named_modules():
        if name not in values:
            continue

        def hook(_m, _inp, out, value=values[name]):
            if hasattr(out, "detach"):
                np.save(os.path.join(ref_dir, safe_name(value) + ".npy"),
                        out.detach().cpu().numpy())
        handles.append(mod.register_forward_hook(hook))
    return handles


def _diff(got, ref, rtol, atol):
    """(number of elements beyond tolerance, worst flat index, abs diff)."""
    g = got.astype(np.float64) if got.dtype.kind in "fiub" else got
    r = ref.astype(np.float64) if ref.dtype.kind in "fiub" else ref
    d = np.abs(g - r)
    bad = ~(d <= atol + rtol * np.abs(r))
    bad &= ~(np.isnan(g) & np.isnan(r))
    d = np.where(np.isnan(d), np.inf, d)
    worst = int(np.argmax(np.where(bad, d, -1))) if bad.any() else int(np.argmax(d)) \
        if d.size else 0
    return int(bad.sum()), worst, float(d.flat[worst]) if d.size else 0.0


def compare(dump_dir, ref_dir, rtol=1e-4, atol=1e-5, stop_at_first=True):
    """-> (rows, first): one dict per compared tensor (tensor, producer,
    file, status 'ok'/'DIFF'/'SHAPE', detail), first = the first row that is
    not 'ok' (None if all agree). Stops there unless stop_at_first is False."""
    rows, first, seen = [], None, set()
    for r in read_map(dump_dir):
        t = r["tensor"]
        if t in seen or r["file"] == "-" or r.get("note"):
            continue  # an as-seen-by copy, or a tensor .npy cannot hold
        seen.add(t)
        ref_path = os.path.join(ref_dir, safe_name(t) + ".npy")
        if not os.path.exists(ref_path):
            continue
        got = np.load(os.path.join(dump_dir, r["file"]))
        ref = np.load(ref_path)
        row = {"tensor": t, "producer": r["produced by"], "file": r["file"]}
        if got.shape != ref.shape:
            row.update(status="SHAPE", detail="graphcc's shape %s, the reference's %s"
                       % (got.shape, ref.shape))
        else:
            n_bad, worst, d = _diff(got, ref, rtol, atol)
            at = list(np.unravel_index(worst, got.shape)) if got.size else []
            if n_bad:
                row.update(status="DIFF", detail="%d of %d elements differ; worst at %s: "
                           "graphcc %.9g vs reference %.9g (abs diff %.3g)"
                           % (n_bad, got.size, at, got.flat[worst], ref.flat[worst], d))
            else:
                row.update(status="ok", detail="max abs diff %.3g" % d)
        rows.append(row)
        if row["status"] != "ok" and first is None:
            first = row
            if stop_at_first:
                break
    return rows, first


def _producer(p):
    return "the caller (a graph input)" if p == "(graph input)" else \
        "a constant" if p == "(constant)" else "node '%s'" % p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dump_dir")
    ap.add_argument("ref_dir")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--all", action="store_true", help="go on past the first difference")
    a = ap.parse_args(argv)
    try:
        rows, first = compare(a.dump_dir, a.ref_dir, a.rtol, a.atol, not a.all)
        ref_files = sorted(f for f in os.listdir(a.ref_dir) if f.endswith(".npy"))
    except (OSError, ValueError, KeyError) as e:
        print("compare_intermediates: %s" % e, file=sys.stderr)
        return 2
    print("%s vs %s: tolerance |graphcc - reference| <= %g + %g x |reference|, tensors in "
          "the order graphcc produced them" % (a.dump_dir, a.ref_dir, a.atol, a.rtol))
    for r in rows:
        print("  %-5s %s, produced by %s: %s" % (r["status"], r["tensor"],
                                                 _producer(r["producer"]), r["detail"]))
    dumped = {safe_name(r["tensor"]) + ".npy" for r in read_map(a.dump_dir)}
    absent = [f for f in ref_files if f not in dumped]
    if absent:
        print("  not in the dump (fused or folded away, or not a value of this model): %d "
              "reference file%s: %s" % (len(absent), "" if len(absent) == 1 else "s",
                                        ", ".join(absent[:8]) + (", ..." if len(absent) > 8
                                                                  else "")))
    if not rows:
        print("no tensor of the dump has a reference file: name them by ONNX value name "
              "made file-safe (compare_intermediates.safe_name)")
        return 1
    if first is None:
        print("all %d compared tensors agree" % len(rows))
        return 0
    print("first difference: tensor '%s', produced by %s: %s" % (
        first["tensor"], _producer(first["producer"]), first["detail"]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
