#!/usr/bin/python3
"""make bench-embed: per-request latency of the embedding example
(tools/examples/server.c: the API's part of a request -- inputs set or bound,
a run with a deadline, outputs read) on an Identity 1x1000 program (the API
overhead itself) and on the demo model, from 1 and 4 host threads, with
zero-copy inputs/outputs and with gc_session_set_input copies.

Usage: bench-embed.py --graphcc G --server S --work DIR --out TABLE.md
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for a in ("--graphcc", "--server", "--work", "--out"):
        ap.add_argument(a, required=True)
    ap.add_argument("--requests", type=int, default=20000)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    build = os.path.dirname(os.path.dirname(os.path.abspath(a.graphcc)))
    ident_onnx = os.path.join(a.work, "identity.onnx")
    import onnx
    from onnx import helper, TensorProto as TP
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id",
                          [helper.make_tensor_value_info("x", TP.FLOAT, [1, 1000])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [1, 1000])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), ident_onnx)
    progs = {"Identity 1x1000": (os.path.join(a.work, "identity.gcb"), [ident_onnx], a.requests),
             "demo": (os.path.join(a.work, "demo.gcb"),
                      [os.path.join(ROOT, "models", "demo", "model.onnx"), "--ops",
                       os.path.join(build, "plugins", "demo", "demo.yaml")], a.requests // 10)}
    rows = []
    for name, (gcb, args, n) in progs.items():
        subprocess.run([a.graphcc, "compile"] + args + ["-o", gcb], check=True,
                       stdout=subprocess.DEVNULL)
        for threads in (1, 4):
            for mode in ("zero-copy", "copy"):
                out = subprocess.run([a.server, gcb, str(threads), str(n)] +
                                     (["copy"] if mode == "copy" else []), check=True,
                                     stdout=subprocess.PIPE).stdout.decode()
                m = re.search(r"median ([\d.]+) us, p99 ([\d.]+) us", out)
                rows.append((name, threads, mode, float(m.group(1)), float(m.group(2))))
                print("%-16s %d thread(s) %-9s median %8.2f us  p99 %8.2f us" % rows[-1],
                      flush=True)
    with open(a.out, "w") as f:
        f.write("| program | host threads | inputs/outputs | median µs | p99 µs |\n")
        f.write("|---|---|---|---|---|\n")
        for r in rows:
            f.write("| %s | %d | %s | %.2f | %.2f |\n" % r)
        f.write("\nLatency of the API's part of one request (set or bind the inputs, "
                "gc_session_run_with with a deadline, gc_session_output), one session per "
                "thread (threads=1 each), measured by tools/examples/server.c with "
                "CLOCK_MONOTONIC. On Identity it is the per-request API overhead.\n")
    print("table: %s" % a.out)


if __name__ == "__main__":
    sys.exit(main())
