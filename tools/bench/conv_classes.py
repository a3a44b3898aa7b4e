#!/usr/bin/python3
"""Per-class convolution throughput, graphcc against ONNX Runtime.

Usage: conv_classes.py --graphcc BIN --ort-modules DIR --model M.onnx
                       --input NAME=FILE.npy [--threads 1] [--repeat 10] [--channels]

Runs the model `--repeat` times in each runtime with per-node profiling
(graphcc's bench worker, BUILD/bench/graphcc-worker next to BUILD/bin/graphcc,
and its `profile` request; ONNX Runtime's enableProfiling through
onnxruntime-node), after warm-up runs, takes each node's fastest run (the machine is shared:
the minimum is the least disturbed), and sums the Conv nodes by class:
kernel size, stride, output spatial size (grouped convolutions apart). Each
row gives both runtimes' milliseconds and GFLOP/s (2 x multiply-adds);
the last rows are the other nodes and the total. Shapes come from each
profile's own records, so fused nodes (ORT's FusedConv, graphcc's fused
epilogues) are classed by their convolution; QLinearConv too (its weight is
input 3), ORT's (NHWC, its prepacked weight not recorded) as graphcc's node of
the same name.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import tempfile

ORT_JS = r"""
'use strict';
const fs = require('fs'), path = require('path');
async function main() {
  const [ortDir, model, threads, repeat, prefix, ...inputs] = process.argv.slice(2);
  const ort = require(path.resolve(ortDir, 'onnxruntime-node'));
  const s = await ort.InferenceSession.create(model, {intraOpNumThreads: +threads,
    interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all',
    enableProfiling: true, profileFilePrefix: prefix});
  const feeds = {};
  for (const a of inputs) {  // NAME=FILE.npy, float32, C order, version 1
    const [name, file] = a.split('=');
    const buf = fs.readFileSync(file), hlen = buf.readUInt16LE(8);
    const header = buf.toString('latin1', 10, 10 + hlen);
    const dims = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
      .map((x) => x.trim()).filter((x) => x).map(Number);
    const n = dims.reduce((p, q) => p * q, 1);
    const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + hlen,
      buf.byteOffset + 10 + hlen + 4 * n));
    feeds[name] = new ort.Tensor('float32', data, dims);
  }
  for (let i = 0; i < +repeat; i++) await s.run(feeds);
  s.endProfiling();
}
main().catch((e) => { console.error(e); process.exit(1); });
"""

SHAPE_RE = re.compile(r"(?:float32|u?int8|int32) ([0-9x]+|scalar)")


def conv_class(x, w, y, channels=False):
    """('3x3 s2 -> 28', GFLOP) from input, weight and output dims
    (channels: '3x3 s2 -> 28 64->128', one row per channel pair)."""
    k = "x".join(str(d) for d in w[2:])
    s = max(1, round(x[2] / y[2])) if len(x) > 2 else 1
    g = x[1] // w[1]
    label = "%s s%d -> %s" % (k, s, "x".join(str(d) for d in y[2:]))
    if g > 1:
        label += " g%s" % ("dw" if g == x[1] else g)
    if channels:
        label += " %d->%d" % (x[1], y[1])
    n = 1
    for d in y:
        n *= d
    taps = 1
    for d in w[1:]:
        taps *= d
    return label, 2.0 * n * taps / 1e9


def graphcc_nodes(a, d):
    """Warm runs of the bench worker (graphcc-worker's `profile` request),
    each node's fastest."""
    worker = os.path.join(os.path.dirname(os.path.dirname(a.graphcc)), "bench", "graphcc-worker")
    p = subprocess.Popen([worker, "--threads", str(a.threads), a.model] + a.input,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def request(line):
        p.stdin.write(line + "\n")
        p.stdin.flush()
        r = p.stdout.readline()
        if not r.startswith("ok"):
            raise SystemExit("graphcc-worker: %s -> %s" % (line, r.strip()))

    if not p.stdout.readline().startswith("ready"):
        raise SystemExit("graphcc-worker did not start")
    request("run 3")
    best = {}
    for i in range(a.repeat):
        prof = os.path.join(d, "graphcc-%d.json" % i)
        request("profile " + prof)
        for e in json.load(open(prof))["traceEvents"]:
            if e.get("ph") != "X" or "op" not in e.get("args", {}):
                continue
            key = e["args"]["index"]
            shapes = [[int(v) for v in m.group(1).split("x") if v != "scalar"] for m in
                      SHAPE_RE.finditer(e["args"]["inputs"] + ", " + e["args"]["outputs"])]
            if key not in best or e["dur"] < best[key][1]:
                best[key] = (e["args"]["op"], e["dur"], shapes, e["name"])
    p.stdin.write("quit\n")
    p.stdin.close()
    p.wait()
    return list(best.values())


def ort_nodes(a, d):
    js = os.path.join(d, "ort-prof.js")
    with open(js, "w") as f:
        f.write(ORT_JS)
    prefix = os.path.join(d, "ort")
    subprocess.run(["node", js, os.path.abspath(a.ort_modules), a.model, str(a.threads),
                    str(a.repeat), prefix] + a.input, check=True)
    trace = json.load(open(sorted(glob.glob(prefix + "*.json"))[-1]))
    best = {}
    for e in trace:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        ar = e["args"]
        shapes = [list(next(iter(t.values()))) for t in ar.get("input_type_shape", [])]
        shapes += [list(next(iter(t.values()))) for t in ar.get("output_type_shape", [])]
        name = re.sub(r"(_token_\d+)?_kernel_time$", "", e["name"])
        if name not in best or e["dur"] < best[name][1]:
            best[name] = (ar.get("op_name", "?"), e["dur"], shapes, name)
    return list(best.values())


def tabulate(nodes, named=None, channels=False):
    """named: node name -> graphcc's shapes, for ORT's QLinearConv (NHWC, its
    prepacked weight not in the record), classed as graphcc's node of that name."""
    rows, other = {}, 0.0
    for op, us, shapes, name in nodes:
        if op == "QLinearConv" and named and name in named:
            shapes = named[name]
        w = 3 if op == "QLinearConv" else 1  # QLinearConv: x, x_scale, x_zero_point, w, ...
        if op in ("Conv", "FusedConv", "QLinearConv") and len(shapes) > w + 1 and \
                len(shapes[w]) >= 3:
            label, gf = conv_class(shapes[0], shapes[w], shapes[-1], channels)
            r = rows.setdefault(label, [0.0, 0.0, 0])
            r[0] += us / 1000.0
            r[1] += gf
            r[2] += 1
        else:
            other += us / 1000.0
    return rows, other


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--ort-modules", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--channels", action="store_true",
                    help="one row per class and input->output channels")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        gn = graphcc_nodes(a, d)
        g, gother = tabulate(gn, None, a.channels)
        o, oother = tabulate(ort_nodes(a, d), {n[3]: n[2] for n in gn if n[0] == "QLinearConv"},
                             a.channels)
    print("| conv class (kernel, stride -> output) | n | GFLOP | graphcc ms | GFLOP/s "
          "| ORT ms | GFLOP/s | graphcc/ORT |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    tg = to = 0.0
    for label in sorted(set(g) | set(o), key=lambda k: -(g.get(k, o.get(k))[1])):
        gm, gf, n = g.get(label, [0.0, 0.0, 0])
        om, of, _ = o.get(label, [0.0, 0.0, 0])
        tg += gm
        to += om
        gfl = gf or of
        print("| %s | %d | %.3f | %.2f | %.0f | %.2f | %.0f | %.2f |" % (
            label, n, gfl, gm, gfl / gm * 1e3 if gm else 0, om, gfl / om * 1e3 if om else 0,
            gm / om if om else 0))
    print("| other nodes | | | %.2f | | %.2f | | |" % (gother, oother))
    print("| total (sum of per-node minima) | | | %.2f | | %.2f | | %.2f |" % (
        tg + gother, to + oother, (tg + gother) / (to + oother)))


if __name__ == "__main__":
    main()
