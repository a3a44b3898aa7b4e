"""Quantized custom ops: QDQ edges bound to int8 kernels (lib/pass-qdq.c),
with the qsilu package of plugins/ (org.graphcc.quant::Silu: a table kernel
for qint8/quint8 x, a float kernel for float32 x).

The model: a PyTorch MLP (Linear 16->32, SiLU, Linear 32->8) exported by
torch.onnx.export (opset 13); its Sigmoid*Mul becomes a Silu node (the float
model), and onnx.helper wraps that node in QDQ with scales calibrated in
NumPy on 64 samples (the QDQ model): x of Silu per-tensor int8 (symmetric),
y per-tensor uint8 (asymmetric, a non-zero zero point).

  quant/silu-int8      compile prints both edges bound quantized (qint8,
                       quint8 with their scales) and flavour siluTable; the
                       integer tensors of --dump-dir (scale and zero point in
                       tensors.tsv) satisfy the NumPy int8 reference exactly
                       (table from float64 SiLU, round half to even,
                       saturate); the output equals NumPy's chain from the
                       dumped int8 input (float64, 1e-5); against the float
                       model (graphcc and PyTorch) within the bound the
                       scales allow: sum_j |W2[i,j]| (1.1 s_x / 2 + s_y / 2)
  quant/silu-gcb       the same through a .gcb: info lists the bound edges,
                       the run gives the same bytes; --trace shows the edges
                       quantized
  quant/float-manifest the package without qint8/quint8 in its dtypes: no
                       edge bound, flavour siluFloat, the QDQ nodes run;
                       output within one output step of the int8 run
  quant/per-axis       a per-axis DequantizeLinear before Silu: not bound
                       (float path, right output); with a manifest listing
                       only quantized types: refused, naming the node, the
                       input and "per-axis"
  quant/hostile-gcb    a .gcb whose quantized edge has a NaN scale, or a
                       bound type that is not its tensor's: refused at load
                       (checksums recomputed, so the meaning checks are hit)
"""
import os
import re
import subprocess
import threading

import numpy as np

import run

DOMAIN = "org.graphcc.quant"
LIPSCHITZ = 1.1  # max |d silu / dx| = 1.0998
_BUILD = threading.Lock()  # the cases share the models: built once


def silu64(x):
    x = np.asarray(x, np.float64)
    return x / (1.0 + np.exp(-x))


def quantize(y, scale, zp, dtype):
    info = np.iinfo(dtype)
    q = np.rint(np.asarray(y, np.float64) / np.float64(np.float32(scale))) + zp
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(q, scale, zp):
    return (q.astype(np.float64) - zp) * np.float64(np.float32(scale))


def silu_int8_ref(xq, sx, zx, sy, zy, ydtype):
    """The int8 reference: what the table kernel must give, bit for bit."""
    return quantize(silu64(dequantize(xq, sx, zx)), sy, zy, ydtype)


def _torch_mlp(d):
    import torch

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(16, 32)
            self.act = torch.nn.SiLU()
            self.fc2 = torch.nn.Linear(32, 8)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    torch.manual_seed(23)
    m = MLP().eval()
    calib = torch.randn(64, 16) * 1.5
    path = os.path.join(d, "exported.onnx")
    with run.TORCH_EXPORT:
        torch.onnx.export(m, calib, path, opset_version=13, input_names=["x"],
                          output_names=["out"], dynamic_axes=None)
    with torch.no_grad():
        want = m(calib).numpy()
    return path, calib.numpy(), want


def _silu_node(g):
    """Replaces the exported Sigmoid*Mul by one Silu node; its input name."""
    from onnx import helper
    sig = next(n for n in g.node if n.op_type == "Sigmoid")
    mul = next(n for n in g.node if n.op_type == "Mul" and sig.output[0] in n.input)
    h = sig.input[0]
    silu = helper.make_node("Silu", [h], [mul.output[0]], name="silu", domain=DOMAIN)
    at = list(g.node).index(sig)
    g.node.remove(sig)
    g.node.remove(mul)
    g.node.insert(at, silu)
    return silu


def _gemm_weights(g):
    from onnx import numpy_helper
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    gemms = [n for n in g.node if n.op_type in ("Gemm", "MatMul")]
    ws = []
    for n in gemms:
        w = inits[n.input[1]]
        trans = any(a.name == "transB" and a.i for a in n.attribute)
        ws.append(w.T if trans else w)  # [in, out]
    return ws, inits, gemms


def build(ctx):
    """-> dict of paths and parameters (cached per work dir)."""
    with _BUILD:
        return _build(ctx)


def _build(ctx):
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    d = os.path.join(ctx.fix, "quant", "models")
    meta = os.path.join(d, "params.npz")
    if os.path.exists(meta):
        p = dict(np.load(meta, allow_pickle=False))
        p["dir"] = d
        return p
    d = run.fresh_dir(d)
    exported, calib, torch_out = _torch_mlp(d)
    m = onnx.load(exported)
    g = m.graph
    silu = _silu_node(g)
    m.opset_import.append(helper.make_opsetid(DOMAIN, 1))
    onnx.save(m, os.path.join(d, "float.onnx"))

    # Calibration in NumPy: the float model's activations on 64 samples.
    ws, inits, gemms = _gemm_weights(g)
    b1 = inits[gemms[0].input[2]] if len(gemms[0].input) > 2 else 0
    h = calib.astype(np.float64) @ ws[0].astype(np.float64) + b1
    sx = np.float32(np.abs(h).max() / 127.0)
    y = silu64(h)
    lo, hi = min(float(y.min()), 0.0), float(y.max())
    sy = np.float32((hi - lo) / 255.0)
    zy = int(np.clip(np.rint(-lo / np.float64(sy)), 0, 255))

    # The QDQ model: Q/DQ around the Silu node's input and output.
    h_name, y_name = silu.input[0], silu.output[0]
    g.initializer.extend([
        numpy_helper.from_array(np.array(sx, np.float32), "sx"),
        numpy_helper.from_array(np.array(0, np.int8), "zx"),
        numpy_helper.from_array(np.array(sy, np.float32), "sy"),
        numpy_helper.from_array(np.array(zy, np.uint8), "zy")])
    for n in g.node:
        if n.name == "silu":
            n.input[0], n.output[0] = "hd", "y"
        elif y_name in n.input:
            n.input[list(n.input).index(y_name)] = "yd"
    at = [n.name for n in g.node].index("silu")
    qdq_in = [helper.make_node("QuantizeLinear", [h_name, "sx", "zx"], ["hq"], name="q_h"),
              helper.make_node("DequantizeLinear", ["hq", "sx", "zx"], ["hd"], name="dq_h")]
    qdq_out = [helper.make_node("QuantizeLinear", ["y", "sy", "zy"], ["yq"], name="q_y"),
               helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["yd"], name="dq_y")]
    nodes = list(g.node)
    nodes = nodes[:at] + qdq_in + [nodes[at]] + qdq_out + nodes[at + 1:]
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(m, os.path.join(d, "qdq.onnx"))

    # Per-axis: the Silu input's DequantizeLinear with one scale per feature.
    g2 = onnx.load(os.path.join(d, "qdq.onnx"))
    sxa = (np.abs(h).max(axis=0) / 127.0).astype(np.float32)
    g2.graph.initializer.extend([numpy_helper.from_array(sxa, "sxa"),
                                 numpy_helper.from_array(np.zeros(32, np.int8), "zxa")])
    for n in g2.graph.node:
        if n.name in ("q_h", "dq_h"):
            n.input[1], n.input[2] = "sxa", "zxa"
            n.attribute.extend([helper.make_attribute("axis", 1)])
    onnx.save(g2, os.path.join(d, "per-axis.onnx"))

    np.save(os.path.join(d, "x.npy"), calib)
    p = {"sx": sx, "sy": sy, "zy": np.int32(zy), "w2": ws[1].astype(np.float64),
         "b2": inits[gemms[1].input[2]].astype(np.float64), "torch": torch_out,
         "sxa": sxa}
    np.savez(meta, **p)
    p["dir"] = d
    return p


def manifest(ctx, variant):
    """The qsilu manifest, or a variant of it in the work dir (absolute library
    paths): 'float' lists no quantized type, 'qonly' only quantized ones."""
    src = os.path.join(ctx.plugins, "qsilu", "qsilu.yaml")
    if variant is None:
        return src
    text = open(src).read().replace("lib/", os.path.join(ctx.plugins, "qsilu", "lib") + "/")
    if variant == "float":
        text = text.replace("[float32, qint8, quint8]", "[float32]")
    else:
        text = text.replace("dtypes: [float32, qint8, quint8]", "dtypes: [qint8, quint8]", 1)
    d = os.path.join(ctx.fix, "quant", "manifests")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "qsilu-%s.yaml" % variant)
    with open(path, "w") as f:
        f.write(text)
    return path


def _run(ctx, model, ops, d, extra=()):
    o = run.fresh_dir(os.path.join(d, "out"))
    x = os.path.join(ctx.fix, "quant", "models", "x.npy")
    args = ["run", model] + (["--ops", ops] if ops else []) + \
        ["--input", "x=" + x, "--output-dir", o] + list(extra)
    rc, out, err = run.run_graphcc(ctx, args)
    return rc, out, err, o


BOUND_RE = re.compile(r"(input|output) 0 \('([^']*)'\) bound quantized: (\w+), scale ([\d.e+-]+), "
                      r"zero point (-?\d+)")


def _quant_bound(p, pred):
    """Max |quantized - float| allowed per output element."""
    step = LIPSCHITZ * float(p["sx"]) / 2 + float(p["sy"]) / 2
    return np.abs(p["w2"]).sum(axis=0) * step + 1e-5


def silu_int8(ctx):
    p = build(ctx)
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "silu-int8"))
    qdq = os.path.join(p["dir"], "qdq.onnx")
    rc, out, err = run.run_graphcc(ctx, ["compile", qdq, "--ops", manifest(ctx, None)])
    if rc != 0:
        return run.Result(False, "compile: " + run.describe_rc(rc), err)
    bound = {m.group(1): m.groups()[1:] for m in BOUND_RE.finditer(out)}
    if "flavour 'siluTable'" not in out or sorted(bound) != ["input", "output"]:
        return run.Result(False, "compile did not bind both edges quantized with siluTable",
                          out)
    if bound["input"][1] != "qint8" or bound["output"][1] != "quint8" or \
            int(bound["output"][3]) != int(p["zy"]) or \
            abs(float(bound["output"][2]) - float(p["sy"])) > 1e-6 * float(p["sy"]):
        return run.Result(False, "bound edges %s; want qint8 and quint8 (scale %g, zero point "
                          "%d)" % (bound, p["sy"], p["zy"]), out)
    dump = os.path.join(d, "dump")
    rc, _, err, o = _run(ctx, qdq, manifest(ctx, None), d, ["--dump-dir", dump])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    rows = [ln.rstrip("\n").split("\t") for ln in open(os.path.join(dump, "tensors.tsv"))]
    head, rows = rows[0], {r[0]: r for r in rows[1:]}
    if head[-2:] != ["scale", "zero point"] or rows.get("hq", [""])[-1] != "0" or \
            rows.get("yq", [""])[-1] != str(int(p["zy"])) or rows.get("yd", ["", "-"])[-1] != "-":
        return run.Result(False, "tensors.tsv lacks the scale and zero point of hq/yq: %s"
                          % [rows.get("hq"), rows.get("yq")])
    hq = np.load(os.path.join(dump, "hq.npy"))
    yq = np.load(os.path.join(dump, "yq.npy"))
    if hq.dtype != np.int8 or yq.dtype != np.uint8:
        return run.Result(False, "dumped hq %s, yq %s; want int8, uint8" % (hq.dtype, yq.dtype))
    ref = silu_int8_ref(hq, p["sx"], 0, p["sy"], int(p["zy"]), np.uint8)
    if not np.array_equal(yq, ref):
        k = int((yq != ref).sum())
        return run.Result(False, "the int8 kernel differs from the NumPy int8 reference in "
                          "%d of %d values" % (k, ref.size))
    got = np.load(os.path.join(o, "out.npy"))
    chain = dequantize(ref, p["sy"], int(p["zy"])) @ p["w2"] + p["b2"]
    why = run.compare(os.path.join(o, "out.npy"), chain.astype(np.float32), 1e-5, 1e-5)
    if why:
        return run.Result(False, "vs the NumPy int8 chain: " + why)
    rc, _, err, of = _run(ctx, os.path.join(p["dir"], "float.onnx"), manifest(ctx, None),
                          run.fresh_dir(os.path.join(d, "float")))
    if rc != 0:
        return run.Result(False, "float model: " + run.describe_rc(rc), err)
    flt = np.load(os.path.join(of, "out.npy"))
    if not np.allclose(flt, p["torch"], rtol=1e-4, atol=1e-5):
        return run.Result(False, "the float model differs from PyTorch")
    lim = _quant_bound(p, None)
    err_q = np.abs(got.astype(np.float64) - flt)
    if (err_q > lim).any():
        return run.Result(False, "quantized vs float: max error %.4g exceeds the bound %.4g"
                          % (err_q.max(), lim.min()))
    return run.Result(True, "int8 kernel exact on %d values; vs float max |err| %.4g (bound "
                      "%.4g, output range %.3g)" % (ref.size, err_q.max(), lim.min(),
                                                   np.abs(flt).max()))


def silu_gcb(ctx):
    p = build(ctx)
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "silu-gcb"))
    qdq, gcb = os.path.join(p["dir"], "qdq.onnx"), os.path.join(d, "qdq.gcb")
    rc, _, err = run.run_graphcc(ctx, ["compile", qdq, "--ops", manifest(ctx, None), "-o", gcb])
    if rc != 0:
        return run.Result(False, "compile: " + run.describe_rc(rc), err)
    rc, out, err = run.run_graphcc(ctx, ["info", gcb])
    if rc != 0 or len(BOUND_RE.findall(out)) != 2:
        return run.Result(False, "info of the .gcb does not list the two bound edges", out + err)
    rc, _, err, o1 = _run(ctx, gcb, None, run.fresh_dir(os.path.join(d, "gcb")), ["--trace"])
    if rc != 0:
        return run.Result(False, "run .gcb: " + run.describe_rc(rc), err)
    trace = [ln for ln in err.splitlines() if ln.startswith("trace #") and "'silu'" in ln]
    if not trace or "hq int8" not in trace[0] or "quantized qint8 (scale" not in trace[0] or \
            "quantized quint8" not in trace[0] or "real min" not in trace[0]:
        return run.Result(False, "--trace does not show the quantized edges", err)
    rc, _, err, o2 = _run(ctx, qdq, manifest(ctx, None), run.fresh_dir(os.path.join(d, "onnx")))
    if rc != 0:
        return run.Result(False, "run .onnx: " + run.describe_rc(rc), err)
    a, b = np.load(os.path.join(o1, "out.npy")), np.load(os.path.join(o2, "out.npy"))
    if a.tobytes() != b.tobytes():
        return run.Result(False, "the .gcb and the model give different bytes")
    return run.Result(True, trace[0][:160])


def float_manifest(ctx):
    p = build(ctx)
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "float-manifest"))
    qdq = os.path.join(p["dir"], "qdq.onnx")
    rc, out, err = run.run_graphcc(ctx, ["compile", qdq, "--ops", manifest(ctx, "float")])
    if rc != 0:
        return run.Result(False, "compile: " + run.describe_rc(rc), err)
    if "bound quantized" in out or "flavour 'siluFloat'" not in out or \
            not re.search(r"pass bind-qdq\s+0 changes", out):
        return run.Result(False, "a manifest without quantized types bound an edge", out)
    rc, _, err, o = _run(ctx, qdq, manifest(ctx, "float"), d, ["--dump-dir", os.path.join(d, "dump")])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    if not os.path.exists(os.path.join(d, "dump", "hd.npy")):
        return run.Result(False, "the DequantizeLinear did not run (no hd in the dump)")
    hq = np.load(os.path.join(d, "dump", "hq.npy"))
    ref = silu_int8_ref(hq, p["sx"], 0, p["sy"], int(p["zy"]), np.uint8)
    chain = dequantize(ref, p["sy"], int(p["zy"])) @ p["w2"] + p["b2"]
    # float32 SiLU then QuantizeLinear may round a value sitting on a step
    # boundary the other way: one output step.
    step = np.abs(p["w2"]).max(axis=0) * float(p["sy"]) + 1e-5
    got = np.load(os.path.join(o, "out.npy")).astype(np.float64)
    if (np.abs(got - chain) > step).any():
        return run.Result(False, "float path vs NumPy: max error %.4g" % np.abs(got - chain).max())
    return run.Result(True, "float path: max |float - int8 chain| %.3g" % np.abs(got - chain).max())


def per_axis(ctx):
    p = build(ctx)
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "per-axis"))
    model = os.path.join(p["dir"], "per-axis.onnx")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "--ops", manifest(ctx, None)])
    if rc != 0 or "input 0 ('hq') bound" in out or "flavour 'siluFloat'" not in out:
        return run.Result(False, "per-axis input: want the float path (siluFloat, not bound)",
                          out + err)
    rc, _, err, o = _run(ctx, model, manifest(ctx, None), d, ["--dump-dir", os.path.join(d, "dump")])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    hq = np.load(os.path.join(d, "dump", "hq.npy"))
    hd = hq.astype(np.float64) * p["sxa"].astype(np.float64)
    # the output stays bound quantized (its QuantizeLinear is per tensor)
    yq = np.load(os.path.join(d, "dump", "yq.npy"))
    ref = quantize(silu64(hd.astype(np.float32)), p["sy"], int(p["zy"]), np.uint8)
    if np.abs(yq.astype(int) - ref.astype(int)).max() > 1:
        return run.Result(False, "per-axis float path: output off by more than one step")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "--ops", manifest(ctx, "qonly")])
    if rc != 1 or not all(s in err for s in ("per-axis", "'silu'", "input 'x'", "dq_h")):
        return run.Result(False, "quantized-only input with per-axis parameters: want exit 1 "
                          "naming node, input and per-axis; got " + run.describe_rc(rc), err)
    return run.Result(True, err.strip().splitlines()[-1][:200])


def _gcb():
    import sys
    sys.path.insert(0, os.path.join(run.ROOT, "tests", "hostile"))
    import gcbfile
    return gcbfile


def hostile_gcb(ctx):
    p = build(ctx)
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "hostile"))
    qdq, gcb = os.path.join(p["dir"], "qdq.onnx"), os.path.join(d, "qdq.gcb")
    # on the reference kernels nothing is stored packed (format 4's addition),
    # so the file claiming format 2 below differs from one only by the flag
    r = subprocess.run([ctx.graphcc, "compile", qdq, "--ops", manifest(ctx, None), "-o", gcb],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ctx.work,
                       env=dict(run.ENV, GRAPHCC_NN_REFERENCE="1"), timeout=run.TIMEOUT)
    if r.returncode != 0:
        return run.Result(False, "compile: " + run.describe_rc(r.returncode),
                          r.stderr.decode(errors="replace"))
    gcbfile = _gcb()

    def edge(g):
        c = next(n.custom for n in g.program.nodes if n.custom)
        return c, c.quant[0]  # input 0: qint8

    edits = {
        "nan-scale": (lambda g: g.set(edge(g)[1].scale, float("nan")), "scale"),
        "offset-range": (lambda g: g.set(edge(g)[1].offset, 300), "offset"),
        "wrong-type": (lambda g: g.set(edge(g)[1].dtype, 4), "is int8"),  # DTQUInt8
        "plain-with-scale": (lambda g: g.set(edge(g)[0].quant[-1].dtype, 18), "plain edge"),
        "no-edge": (lambda g: [g.set(q.dtype, 18) or g.set(q.scale, 1.0) or g.set(q.offset, 0)
                               for q in edge(g)[0].quant], "has none"),
        "flag-old-format": (lambda g: g.set(gcbfile.F(8, "I", 3), 2), "unknown to format version 2"),
    }
    seen = []
    for name, (edit, must) in edits.items():
        g = gcbfile.Gcb(gcb)
        edit(g)
        bad = os.path.join(d, name + ".gcb")
        g.save(bad)
        rc, _, err, _ = _run(ctx, bad, None, run.fresh_dir(os.path.join(d, name)))
        if rc != 1 or must not in err or "corrupted program" not in err:
            return run.Result(False, "%s: want exit 1, 'corrupted program' naming '%s'; %s"
                              % (name, must, run.describe_rc(rc)), err)
        seen.append(name)
    return run.Result(True, ", ".join(seen) + " refused")


# ---------------------------------------------------------------- int8 built-ins

def conv_int_ref(x, w, zx, zw, stride, pad, dil, group):
    """ConvInteger in NumPy (int64): x [N, C, H, W], w [M, C/g, KH, KW]."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64) - zx, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (h + pad[0] + pad[2] - (kh - 1) * dil[0] - 1) // stride[0] + 1
    ow = (wd + pad[1] + pad[3] - (kw - 1) * dil[1] - 1) // stride[1] + 1
    wz = w.astype(np.int64) - np.asarray(zw, np.int64).reshape(-1, 1, 1, 1)
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for i in range(kh):
        for j in range(kw):
            win = xp[:, :, i * dil[0]:i * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                     j * dil[1]:j * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
            for g in range(group):
                y[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", win[:, g * cg:(g + 1) * cg], wz[g * mg:(g + 1) * mg, :, i, j])
    return y


CONV_CASES = [  # name, x shape, w shape, stride, pads, dilation, group, x type, w type, per-channel
    ("plain-u8s8", (1, 8, 9, 9), (16, 8, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, np.uint8, np.int8, True),
    ("stride2-s8s8", (2, 6, 11, 10), (10, 6, 3, 3), (2, 2), (1, 0, 1, 2), (1, 1), 1, np.int8, np.int8, False),
    ("grouped-u8u8", (1, 12, 7, 8), (12, 4, 3, 3), (1, 2), (0, 1, 2, 1), (2, 1), 3, np.uint8, np.uint8, True),
    ("depthwise-1x1", (1, 16, 5, 5), (16, 1, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 16, np.uint8, np.int8, False),
    ("wide-k", (1, 3, 20, 20), (8, 3, 7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1, np.uint8, np.int8, True),
    # qconv.c: 1x1 read straight from x (whole 96-pixel blocks), int8 x, 19 rows (8-row tiles)
    ("pointwise-direct-s8s8", (1, 20, 12, 16), (19, 20, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, np.int8, np.int8, True),
    # 1x1 with a partial last block (im2col), K = 13 (not a multiple of 4), two images
    ("pointwise-tail-u8s8", (2, 13, 10, 20), (24, 13, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, np.uint8, np.int8, True),
    # K = 2340 (> 2304: one-chunk blocks), 7 output channels
    ("wide-kdim-u8u8", (1, 260, 6, 7), (7, 260, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, np.uint8, np.uint8, True),
    # stride 1 with dilations and uneven pads (the channel-quad path), int8 x, uint8 w
    ("dilated-pads-s8u8", (1, 6, 9, 11), (10, 6, 3, 2), (1, 1), (2, 0, 1, 3), (2, 3), 1, np.int8, np.uint8, True),
    # 1x1 stride 2 (one phase), and stride with dilation on one axis (im2col blocks)
    ("pointwise-stride2", (1, 8, 11, 9), (12, 8, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, np.uint8, np.int8, True),
    ("strided-dilated-im2col", (1, 5, 13, 12), (6, 5, 3, 3), (2, 2), (1, 1, 1, 1), (2, 2), 1, np.uint8, np.int8, True),
    # enough work for two threads (blocks and row ranges split over the pool)
    ("two-threads-u8s8", (1, 32, 20, 21), (40, 32, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, np.uint8, np.int8, False),
    # weights' zero point 0 (128 for uint8 w): the channel-quad path without
    # pixel sums; rows of 16+ pixels read in place (stride 1), phase-major
    # channels (3x3 stride 2, 13 channels: quads rounded up per phase)
    ("zw0-rows-u8s8", (1, 10, 9, 37), (12, 10, 3, 3), (1, 1), (1, 2, 0, 1), (1, 1), 1, np.uint8, np.int8, True),
    ("zw0-rows-s8u8", (2, 5, 6, 16), (7, 5, 1, 3), (1, 1), (0, 1, 0, 1), (1, 1), 1, np.int8, np.uint8, False),
    ("zw0-stride2-u8s8", (1, 13, 15, 17), (20, 13, 3, 3), (2, 2), (1, 1, 0, 1), (1, 1), 1, np.uint8, np.int8, True),
    ("zw0-stride2-1x1-s8s8", (1, 24, 9, 40), (16, 24, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, np.int8, np.int8, False),
    # stride-2 rows of 16+ phase pixels with a tail (the gather's last 16
    # overlapping), odd width, a left pad (phase 0 starts at pixel 1)
    ("zw0-stride2-tail-u8s8", (1, 7, 5, 47), (9, 7, 3, 3), (2, 2), (1, 1, 1, 0), (1, 1), 1, np.uint8, np.int8, True),
    # qconv.c's AVX-512 packing (strides 1 or 2 along the width, rows not
    # read in place): phase rows of more than 32 pixels (two segments), odd
    # widths, pads on either side, x's zero point at the type's limits
    ("zw0-stride2-wide-zxmax-u8s8", (1, 6, 7, 75), (8, 6, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, np.uint8, np.int8, True),
    ("stride2-wide-zxmin-s8s8", (1, 5, 6, 70), (7, 5, 3, 3), (2, 2), (0, 2, 1, 1), (1, 1), 1, np.int8, np.int8, True),
    ("stride2-1x1-wide-zxmin-u8u8", (1, 9, 5, 67), (5, 9, 1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, np.uint8, np.uint8, True),
    ("zw0-stride1x2-zxmax-s8s8", (1, 4, 6, 40), (6, 4, 3, 3), (1, 2), (1, 1, 1, 1), (1, 1), 1, np.int8, np.int8, False),
    ("stride2x1-u8s8", (1, 5, 9, 37), (6, 5, 3, 3), (2, 1), (1, 0, 1, 2), (1, 1), 1, np.uint8, np.int8, True),
    # one tap along the width (no padding columns): the epilogue's runs go on
    # across output rows, up to the padding rows below them
    ("zw0-k3x1-u8s8", (1, 6, 10, 13), (5, 6, 3, 1), (1, 1), (1, 0, 2, 0), (1, 1), 1, np.uint8, np.int8, True),
]


def _rand_q(r, shape, dt):
    info = np.iinfo(dt)
    a = r.integers(info.min, info.max + 1, size=shape)
    a.flat[::7] = info.max
    a.flat[3::11] = info.min
    return a.astype(dt)


def _run_env(ctx, args, extra):
    """run.run_graphcc with more environment (this case's own copy)."""
    import subprocess
    env = dict(run.ENV)
    env.update(extra)
    try:
        p = subprocess.run([ctx.graphcc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=run.TIMEOUT, cwd=ctx.work, env=env)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    err = p.stderr.decode("utf-8", "replace")
    return (run.SANITIZER_RC if run.SANITIZER_RE.search(err) else p.returncode), err


def int8_builtins(ctx):
    """ConvInteger and QLinearConv on the integer GEMM (qgemm.c, qconv.c:
    channel quads read in place, strides as phases, im2col blocks for stride
    with dilation) against NumPy: the int32 sums exactly, QLinearConv's output
    within one step of NumPy's float64 requantization (a value on a rounding
    boundary), and byte for byte the same as the reference loops
    (GRAPHCC_NN_REFERENCE=1). (MatMulInteger and QLinearMatMul: the unit
    test-qgemm and the ONNX node tests.)"""
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "int8-builtins"))
    r = np.random.default_rng(2323)
    T = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
    done = []
    for (name, xs, ws, st, pads, dil, group, xt, wt, per_ch) in CONV_CASES:
        x, w = _rand_q(r, xs, xt), _rand_q(r, ws, wt)
        zx = np.array(r.integers(1, 5) + (3 if xt == np.uint8 else -6), xt)  # never 0
        if "-zxmax" in name or "-zxmin" in name:
            zx = np.array(np.iinfo(xt).max if "-zxmax" in name else np.iinfo(xt).min, xt)
        zw = (_rand_q(r, (ws[0],), wt) // 16 if per_ch else np.array(1, wt)).astype(wt)
        if name.startswith("zw0"):
            zw = np.full(zw.shape, 128 if wt == np.uint8 else 0, wt)
        want = conv_int_ref(x, w, int(zx), zw.astype(np.int64), st, pads, dil, group)
        sx, sy = np.float32(0.02), np.float32(0.5 * np.abs(want).max() * 0.02 * 0.01 / 127 + 1e-3)
        sw = (r.random(ws[0]) * 0.02 + 0.005).astype(np.float32) if per_ch else np.array(0.01, np.float32)
        bias = r.integers(-2000, 2000, ws[0]).astype(np.int32)
        zy = np.array(7, np.uint8)
        attrs = dict(strides=list(st), pads=[pads[0], pads[1], pads[2], pads[3]],
                     dilations=list(dil), group=group)
        inits = [numpy_helper.from_array(a, n) for a, n in
                 ((w, "w"), (zx, "zx"), (zw, "zw"), (np.array(sx), "sx"), (sw, "sw"),
                  (np.array(sy), "sy"), (zy, "zy"), (bias, "bias"))]
        oshape = list(want.shape)
        g = helper.make_graph(
            [helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["acc"], **attrs),
             helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"],
                              ["yq"], **attrs)],
            name, [helper.make_tensor_value_info("x", T[xt], list(xs))],
            [helper.make_tensor_value_info("acc", TensorProto.INT32, oshape),
             helper.make_tensor_value_info("yq", TensorProto.UINT8, oshape)], inits)
        model = os.path.join(d, name + ".onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
        xin = os.path.join(d, name + "-x.npy")
        np.save(xin, x)
        outs = {}
        for label, env in (("fast", {}), ("reference", {"GRAPHCC_NN_REFERENCE": "1"})):
            o = run.fresh_dir(os.path.join(d, name + "-" + label))
            rc, err = _run_env(ctx, ["run", model, "--input", "x=" + xin, "--output-dir", o,
                                     "--threads", "2"], env)
            if rc != 0:
                return run.Result(False, "%s (%s): %s" % (name, label, run.describe_rc(rc)), err)
            outs[label] = (np.load(os.path.join(o, "acc.npy")), np.load(os.path.join(o, "yq.npy")))
        acc, yq = outs["fast"]
        if not np.array_equal(acc, want):
            return run.Result(False, "%s: ConvInteger differs from NumPy in %d values"
                              % (name, int((acc != want).sum())))
        mult = (np.float64(np.float32(sx) * sw.astype(np.float32)) / np.float64(sy))
        mult = mult.reshape(1, -1, 1, 1) if per_ch else mult
        yref = np.clip(np.rint((want + bias.reshape(1, -1, 1, 1)) * mult) + 7, 0, 255)
        if np.abs(yq.astype(np.int64) - yref).max() > 1:
            return run.Result(False, "%s: QLinearConv off NumPy by more than one step" % name)
        if any(a.tobytes() != b.tobytes() for a, b in zip(outs["fast"], outs["reference"])):
            return run.Result(False, "%s: the integer GEMM and the reference loops differ" % name)
        done.append(name)
    return run.Result(True, "ConvInteger/QLinearConv exact vs NumPy and = reference loops: "
                      + ", ".join(done))


def qdq_conv_fusion(ctx):
    """fuse-qdq-conv: Conv+Relu and Conv (float bias, int32 DequantizeLinear
    bias; per-channel and per-tensor weights) between QDQ nodes become
    QLinearConv; the output stays within one quantization step of the
    unfused float path (--no-optimize) and mostly equal to it, and a Conv
    whose output something else reads stays float."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "qdq-conv"))
    r = np.random.default_rng(77)
    x = (r.standard_normal((1, 4, 10, 10)) * 2).astype(np.float32)
    w1 = (r.standard_normal((8, 4, 3, 3)) * 0.3).astype(np.float32)
    w2 = (r.standard_normal((6, 8, 3, 3)) * 0.3).astype(np.float32)
    b1 = (r.standard_normal(8) * 0.5).astype(np.float32)
    b2 = (r.standard_normal(6) * 0.5).astype(np.float32)
    sx, s1, s2 = np.float32(6.0 / 255), np.float32(0.05), np.float32(0.08)
    ws1 = (np.abs(w1).reshape(8, -1).max(axis=1) / 127).astype(np.float32)
    ws2 = np.float32(np.abs(w2).max() / 127)
    q = lambda a, s: np.clip(np.rint(a / (s.reshape(-1, 1, 1, 1) if np.ndim(s) else s)), -127, 127).astype(np.int8)
    bq2 = np.rint(b2 / (sx * 0 + s1 * ws2)).astype(np.int32)  # conv2 reads conv1's output (scale s1)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (np.array(sx), "sx"), (np.array(128, np.uint8), "zx"), (q(w1, ws1), "w1q"), (ws1, "ws1"),
        (np.zeros(8, np.int8), "wz1"), (b1, "b1"), (np.array(s1), "s1"), (np.array(0, np.uint8), "z1"),
        (q(w2, ws2), "w2q"), (np.array(ws2), "ws2"), (np.array(0, np.int8), "wz2"),
        (bq2, "b2q"), (np.array(s1 * ws2, np.float32), "bs2"), (np.array(0, np.int32), "bz2"),
        (np.array(s2), "s2"), (np.array(120, np.uint8), "z2"))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w1q", "ws1", "wz1"], ["w1d"], axis=0),
        helper.make_node("Conv", ["xd", "w1d", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("QuantizeLinear", ["r1", "s1", "z1"], ["h1q"]),
        helper.make_node("DequantizeLinear", ["h1q", "s1", "z1"], ["h1d"]),
        helper.make_node("DequantizeLinear", ["w2q", "ws2", "wz2"], ["w2d"]),
        helper.make_node("DequantizeLinear", ["b2q", "bs2", "bz2"], ["b2d"]),
        helper.make_node("Conv", ["h1d", "w2d", "b2d"], ["c2"], name="conv2", strides=[2, 2]),
        helper.make_node("QuantizeLinear", ["c2", "s2", "z2"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "s2", "z2"], ["y"]),
        # a third Conv whose output is also a graph output: stays float
        helper.make_node("Conv", ["xd", "w1d"], ["c3"], name="conv3"),
        helper.make_node("QuantizeLinear", ["c3", "s1", "z1"], ["c3q"])]
    g = helper.make_graph(nodes, "qdq-conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("c3", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("c3q", TensorProto.UINT8, None)], inits)
    model = os.path.join(d, "model.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    xin = os.path.join(d, "x.npy")
    np.save(xin, x)
    gcb = os.path.join(d, "model.gcb")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
    if rc != 0 or not re.search(r"pass fuse-qdq-conv\s+2 changes", out):
        return run.Result(False, "compile: %s; want fuse-qdq-conv 2 changes" % run.describe_rc(rc),
                          out + err)
    rc, info, err = run.run_graphcc(ctx, ["info", gcb])
    if rc != 0 or info.count("QLinearConv") < 1 or " Conv" not in info:
        return run.Result(False, "info: want QLinearConv and the one float Conv", info + err)
    outs = {}
    for label, extra in (("fused", []), ("float", ["--no-optimize"])):
        o = run.fresh_dir(os.path.join(d, label))
        rc, _, err = run.run_graphcc(ctx, ["run", model, "--input", "x=" + xin, "--output-dir", o]
                                     + extra)
        if rc != 0:
            return run.Result(False, "%s: %s" % (label, run.describe_rc(rc)), err)
        outs[label] = np.load(os.path.join(o, "y.npy"))
    steps = np.abs(outs["fused"] - outs["float"]) / s2
    if steps.max() > 1.001 or (steps > 0.5).mean() > 0.05:
        return run.Result(False, "fused vs float path: max %.2f steps, %.1f%% differ"
                          % (steps.max(), 100 * (steps > 0.5).mean()))
    return run.Result(True, "2 Convs fused; vs float path: %.1f%% of values one step apart"
                      % (100 * (steps > 0.5).mean()))


def _fused_unfused_reference(ctx, d, nodes, inits, inputs, outs_v, pass_name, changes):
    """Saves the graph, checks that `graphcc compile` reports pass_name making
    `changes` changes, and runs it three ways at 2 threads: fused, unfused
    (--no-optimize) and on the reference kernels. Returns {label: [arrays in
    outs_v's order]}, or a failed run.Result."""
    import onnx
    from onnx import helper, TensorProto
    g = helper.make_graph(nodes, pass_name,
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape))
                           for n, a in inputs.items()], outs_v, inits)
    model = os.path.join(d, "model.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    feeds = []
    for n, a in inputs.items():
        np.save(os.path.join(d, n + ".npy"), a)
        feeds += ["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", os.path.join(d, "m.gcb")])
    if rc != 0 or not re.search(r"pass %s\s+%d changes" % (pass_name, changes), out):
        return run.Result(False, "compile: %s; want %s %d changes"
                          % (run.describe_rc(rc), pass_name, changes), out + err)
    outs = {}
    for label, extra, env in (("fused", [], {}), ("unfused", ["--no-optimize"], {}),
                              ("reference", [], {"GRAPHCC_NN_REFERENCE": "1"})):
        o = run.fresh_dir(os.path.join(d, label))
        rc, err = _run_env(ctx, ["run", model] + feeds + ["--output-dir", o, "--threads", "2"]
                           + extra, env)
        if rc != 0:
            return run.Result(False, "%s: %s" % (label, run.describe_rc(rc)), err)
        outs[label] = [np.load(os.path.join(o, v.name + ".npy")) for v in outs_v]
    return outs


def qdq_matmul_fusion(ctx):
    """fuse-qdq-matmul: MatMul (2-D and batched 3-D A, int8 weights) and Gemm
    (transB, uint8 weights with a zero point, float bias, Relu) between QDQ
    nodes become QLinearMatMul; the outputs stay within one quantization
    step of the float path (--no-optimize), and the integer GEMM gives the
    reference loops' bytes (GRAPHCC_NN_REFERENCE=1)."""
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "qdq-matmul"))
    r = np.random.default_rng(91)
    x = r.standard_normal((6, 20)).astype(np.float32)
    x3 = r.standard_normal((2, 3, 20)).astype(np.float32)
    w1 = r.standard_normal((20, 24)).astype(np.float32)
    w2 = r.standard_normal((16, 24)).astype(np.float32)  # Gemm transB: [N, K]
    ws1 = np.float32(np.abs(w1).max() / 127)
    w1q = np.clip(np.rint(w1 / ws1), -127, 127).astype(np.int8)
    ws2 = np.float32((w2.max() - w2.min()) / 255)
    wz2 = np.uint8(np.clip(np.rint(-w2.min() / ws2), 0, 255))
    w2q = np.clip(np.rint(w2 / ws2) + wz2, 0, 255).astype(np.uint8)
    sx, zx = np.float32(6 / 255), np.uint8(128)
    s1, z1 = np.float32(0.25), np.uint8(120)
    s2, z2 = np.float32(0.5), np.uint8(10)
    b2 = r.standard_normal(16).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (np.array(sx), "sx"), (np.array(zx), "zx"), (w1q, "w1q"), (np.array(ws1), "ws1"),
        (np.array(0, np.int8), "wz1"), (w2q, "w2q"), (np.array(ws2), "ws2"),
        (np.array(wz2), "wz2"), (b2, "b2"), (np.array(s1), "s1"), (np.array(z1), "z1"),
        (np.array(s2), "s2"), (np.array(z2), "z2"))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w1q", "ws1", "wz1"], ["w1d"]),
        helper.make_node("MatMul", ["xd", "w1d"], ["m1"]),
        helper.make_node("QuantizeLinear", ["m1", "s1", "z1"], ["h1q"]),
        helper.make_node("DequantizeLinear", ["h1q", "s1", "z1"], ["h1d"]),
        helper.make_node("DequantizeLinear", ["w2q", "ws2", "wz2"], ["w2d"]),
        helper.make_node("Gemm", ["h1d", "w2d", "b2"], ["g2"], transB=1),
        helper.make_node("Relu", ["g2"], ["r2"]),
        helper.make_node("QuantizeLinear", ["r2", "s2", "z2"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "s2", "z2"], ["y"]),
        helper.make_node("QuantizeLinear", ["x3", "sx", "zx"], ["x3q"]),
        helper.make_node("DequantizeLinear", ["x3q", "sx", "zx"], ["x3d"]),
        helper.make_node("MatMul", ["x3d", "w1d"], ["m3"]),
        helper.make_node("QuantizeLinear", ["m3", "s1", "z1"], ["y3q"]),
        helper.make_node("DequantizeLinear", ["y3q", "s1", "z1"], ["y3"])]
    outs_v = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y3")]
    outs = _fused_unfused_reference(ctx, d, nodes, inits, {"x": x, "x3": x3}, outs_v,
                                    "fuse-qdq-matmul", 3)
    if isinstance(outs, run.Result):
        return outs
    outs["float"] = outs["unfused"]
    for (f, fl, ref, step, name) in zip(outs["fused"], outs["float"], outs["reference"],
                                         (s2, s1), ("y", "y3")):
        steps = np.abs(f - fl) / step
        if steps.max() > 1.001 or (steps > 0.5).mean() > 0.05:
            return run.Result(False, "%s: fused vs float path: max %.2f steps, %.1f%% differ"
                              % (name, steps.max(), 100 * (steps > 0.5).mean()))
        if f.tobytes() != ref.tobytes():
            return run.Result(False, "%s: the integer GEMM and the reference loops differ" % name)
    return run.Result(True, "MatMul (2-D, 3-D) and Gemm+bias+Relu fused; within a step of float")


def dynq_matmul_fusion(ctx):
    """fuse-dynq-matmul: quantize_dynamic's DynamicQuantizeLinear ->
    MatMulInteger -> Cast -> Mul(x_scale * W_scale) [-> Add(bias) -> Relu]
    (2-D A with bias and Relu, 3-D A without; a chain whose Cast output is
    also a graph output stays) becomes one MatMulInteger writing float: byte
    for byte the unfused nodes' result (--no-optimize), and the same with the
    reference loops (GRAPHCC_NN_REFERENCE=1)."""
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "dynq-matmul"))
    r = np.random.default_rng(5)
    x = r.standard_normal((5, 36)).astype(np.float32)
    x3 = r.standard_normal((2, 7, 36)).astype(np.float32)
    w = r.standard_normal((36, 50)).astype(np.float32)
    ws = np.float32(np.abs(w).max() / 127)
    inits = [numpy_helper.from_array(a, n) for a, n in (
        (np.clip(np.rint(w / ws), -127, 127).astype(np.int8), "wq"),
        (np.array(3, np.int8), "wz"), (np.array(ws), "ws"),
        (r.standard_normal(50).astype(np.float32), "b"))]

    def chain(p, xin, bias, out):
        ns = [helper.make_node("DynamicQuantizeLinear", [xin], [p + "q", p + "s", p + "z"]),
              helper.make_node("MatMulInteger", [p + "q", "wq", p + "z", "wz"], [p + "acc"]),
              helper.make_node("Cast", [p + "acc"], [p + "f"], to=TensorProto.FLOAT),
              helper.make_node("Mul", [p + "s", "ws"], [p + "sc"]),
              helper.make_node("Mul", [p + "f", p + "sc"], [p + "m" if bias else out])]
        if bias:
            ns += [helper.make_node("Add", [p + "m", "b"], [p + "a"]),
                   helper.make_node("Relu", [p + "a"], [out])]
        return ns
    nodes = chain("c1", "x", True, "y") + chain("c2", "x3", False, "y3") + \
        chain("c3", "x", False, "y4")
    outs_v = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y3", "y4")]
    outs_v.append(helper.make_tensor_value_info("c3f", TensorProto.FLOAT, None))  # stays
    outs = _fused_unfused_reference(ctx, d, nodes, inits, {"x": x, "x3": x3}, outs_v,
                                    "fuse-dynq-matmul", 2)
    if isinstance(outs, run.Result):
        return outs
    res = {k: [a.tobytes() for a in v[:3]] for k, v in outs.items()}
    if res["fused"] != res["unfused"] or res["fused"] != res["reference"]:
        bad = [n for i, n in enumerate(("y", "y3", "y4"))
               if len({res[k][i] for k in res}) > 1]
        return run.Result(False, "fused, unfused and reference differ in " + ", ".join(bad))
    return run.Result(True, "2 chains fused (bias+Relu, 3-D A), one kept; byte-equal to the nodes")


def _maxpool_ref(q, k, st, pads, ceil=False):
    """MaxPool of an integer array [N, C, H, W] in NumPy (padding never wins)."""
    n, c, h, w = q.shape
    lo = np.iinfo(q.dtype).min
    def out(i, kk, s, p0, p1):
        num = i + p0 + p1 - kk
        return (-(-num // s) if ceil else num // s) + 1
    oh, ow = out(h, k[0], st[0], pads[0], pads[2]), out(w, k[1], st[1], pads[1], pads[3])
    xp = np.full((n, c, h + pads[0] + pads[2] + k[0] + st[0], w + pads[1] + pads[3] + k[1] + st[1]),
                 lo, q.dtype)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = q
    y = np.full((n, c, oh, ow), lo, q.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, xp[:, :, i:i + st[0] * (oh - 1) + 1:st[0], j:j + st[1] * (ow - 1) + 1:st[1]])
    return y


def _qadd_ref(a, sa, za, b, sb, zb, sc, zc, ct, relu=None):
    """QLinearAdd as the float nodes compute it, operation by operation in
    float32 (NumPy's float32 arithmetic is IEEE's): DequantizeLinear both,
    Add, QuantizeLinear [, DequantizeLinear, Relu, QuantizeLinear]."""
    f32 = np.float32
    def q(v, s, z, t):
        info = np.iinfo(t)
        return np.clip(np.rint(v / f32(s)) + f32(z), info.min, info.max).astype(t)
    s = (a.astype(f32) - f32(za)) * f32(sa) + (b.astype(f32) - f32(zb)) * f32(sb)
    c = q(s, sc, zc, ct)
    if relu is None:
        return c
    sr, zr, rt = relu
    return q(np.maximum((c.astype(f32) - f32(zc)) * f32(sc), f32(0)), sr, zr, rt)


def qdq_add_maxpool_fusion(ctx):
    """fuse-qdq-maxpool and fuse-qdq-add: DequantizeLinear -> MaxPool ->
    QuantizeLinear with the same parameters runs MaxPool on the 8-bit tensor
    (uint8 3x3/2 padded, the row path's common case; int8 3x2, strides 2x1,
    ceil_mode, uneven pads); DQ, DQ -> Add -> Q [-> DQ -> Relu -> Q] becomes
    com.graphcc::QLinearAdd (uint8 + uint8 with the Relu tail, uint8 + int8
    broadcast over [1, C, 1, 1] to int8, odd sizes: 13x37 and 7 channels).
    Each output is byte for byte the unfused graph's (--no-optimize), the
    reference kernels' (GRAPHCC_NN_REFERENCE=1) and NumPy's (the integer max;
    the float32 operations in order); a MaxPool whose QuantizeLinear has
    other parameters stays float."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "qdq-add-maxpool"))
    r = np.random.default_rng(2311)
    x = (r.standard_normal((1, 7, 13, 37)) * 3).astype(np.float32)  # 19 outputs a row: 16 + 3
    x2 = (r.standard_normal((1, 7, 13, 37)) * 2).astype(np.float32)
    bb = r.standard_normal((1, 7, 1, 1)).astype(np.float32)
    P = {"sx": (0.047, 128, np.uint8), "s2": (0.031, 120, np.uint8), "sb": (0.02, -3, np.int8),
         "sc": (0.06, 100, np.uint8), "sr": (0.035, 2, np.uint8), "si": (0.05, 5, np.int8),
         "sd": (0.08, -1, np.int8)}
    inits = []
    for k, (s, z, t) in P.items():
        inits += [numpy_helper.from_array(np.array(s, np.float32), k),
                  numpy_helper.from_array(np.array(z, t), k + "_z")]
    inits.append(numpy_helper.from_array(np.array(0.049, np.float32), "sy"))  # != sx
    QD = lambda src, p, q, dq: [helper.make_node("QuantizeLinear", [src, p, p + "_z"], [q]),
                                helper.make_node("DequantizeLinear", [q, p, p + "_z"], [dq])]
    nodes = (QD("x", "sx", "xq", "xd") + QD("x2", "s2", "x2q", "x2d") + QD("bb", "sb", "bq", "bd")
             + QD("x", "si", "xiq", "xid") +
             [helper.make_node("MaxPool", ["xd"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                               pads=[1, 1, 1, 1])] + QD("mp", "sx", "mpq", "mpd") +
             [helper.make_node("MaxPool", ["xid"], ["mp2"], kernel_shape=[3, 2], strides=[2, 1],
                               pads=[0, 1, 1, 0], ceil_mode=1)] + QD("mp2", "si", "mp2q", "mp2d") +
             [helper.make_node("MaxPool", ["xd"], ["mp3"], kernel_shape=[2, 2])] +
             [helper.make_node("QuantizeLinear", ["mp3", "sy", "sx_z"], ["mp3q"]),
              helper.make_node("Add", ["xd", "x2d"], ["s1"])] + QD("s1", "sc", "s1q", "s1d") +
             [helper.make_node("Relu", ["s1d"], ["r1"])] + QD("r1", "sr", "r1q", "r1d") +
             [helper.make_node("Add", ["x2d", "bd"], ["t2"])] + QD("t2", "sd", "s2q", "s2d"))
    outs_v = [helper.make_tensor_value_info(n, t, None) for n, t in (
        ("mpq", TensorProto.UINT8), ("mp2q", TensorProto.INT8), ("mp3q", TensorProto.UINT8),
        ("r1q", TensorProto.UINT8), ("s2q", TensorProto.INT8))]
    outs = _fused_unfused_reference(ctx, d, nodes, inits, {"x": x, "x2": x2, "bb": bb}, outs_v,
                                    "fuse-qdq-add", 2)
    if isinstance(outs, run.Result):
        return outs
    rc, out, err = run.run_graphcc(ctx, ["compile", os.path.join(d, "model.onnx"), "-o",
                                         os.path.join(d, "m2.gcb")])
    if rc != 0 or not re.search(r"pass fuse-qdq-maxpool\s+2 changes", out):
        return run.Result(False, "compile: want fuse-qdq-maxpool 2 changes", out + err)
    def quant(v, key):
        s, z, t = P[key]
        info = np.iinfo(t)
        return np.clip(np.rint(v / np.float32(s)) + np.float32(z), info.min, info.max).astype(t)
    xq, x2q, bq, xiq = quant(x, "sx"), quant(x2, "s2"), quant(bb, "sb"), quant(x, "si")
    want = [_maxpool_ref(xq, (3, 3), (2, 2), (1, 1, 1, 1)),
            _maxpool_ref(xiq, (3, 2), (2, 1), (0, 1, 1, 0), ceil=True),
            None,
            _qadd_ref(xq, *P["sx"][:2], x2q, *P["s2"][:2], *P["sc"], relu=P["sr"]),
            _qadd_ref(x2q, *P["s2"][:2], bq, *P["sb"][:2], *P["sd"])]
    names = [v.name for v in outs_v]
    for i, name in enumerate(names):
        got = {k: v[i] for k, v in outs.items()}
        if len({a.tobytes() for a in got.values()}) > 1:
            return run.Result(False, "%s: fused, unfused and reference kernels differ" % name)
        if want[i] is not None and (got["fused"].dtype != want[i].dtype or
                                    not np.array_equal(got["fused"], want[i])):
            return run.Result(False, "%s: differs from NumPy in %d values" % (
                name, int((got["fused"].astype(np.int64) != want[i]).sum())
                if got["fused"].shape == want[i].shape else -1))
    rc, info, err = run.run_graphcc(ctx, ["info", os.path.join(d, "m2.gcb")])
    if rc != 0 or not re.search(r"\b2\s+com\.graphcc::QLinearAdd\b", info) or \
            not re.search(r"\b3\s+MaxPool\b", info):
        return run.Result(False, "info: want 2 QLinearAdd and 3 MaxPool", info + err)
    return run.Result(True, "2 MaxPool and 2 Add (one with Relu) fused; = unfused, reference, NumPy")


def qadd_fast_sizes(ctx):
    """com.graphcc::QLinearAdd's 64-byte loop (constant scales): 7x53x47
    (17437 outputs: a 64-element tail per call, and calls split over 2
    threads), uint8 + uint8 with the Relu, uint8 + a per-channel int8 broadcast
    to int8, uint8 + a per-column int8 row (47-element calls): byte for
    byte NumPy's float32 operations in order, and the same bytes at 1 and 2
    threads and on the reference kernels."""
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "qadd-fast-sizes"))
    r = np.random.default_rng(4711)
    sh = (1, 7, 53, 47)
    x = (r.standard_normal(sh) * 3).astype(np.float32)
    x2 = (r.standard_normal(sh) * 2).astype(np.float32)
    bc = r.standard_normal((1, 7, 1, 1)).astype(np.float32)
    br = r.standard_normal((1, 1, 1, 47)).astype(np.float32)
    P = {"sx": (0.047, 128, np.uint8), "s2": (0.031, 120, np.uint8), "sb": (0.02, -3, np.int8),
         "sc": (0.06, 100, np.uint8), "sr": (0.035, 2, np.uint8), "sd": (0.08, -1, np.int8),
         "se": (0.0625, 5, np.int8)}
    inits = []
    for k, (s, z, t) in P.items():
        inits += [numpy_helper.from_array(np.array(s, np.float32), k),
                  numpy_helper.from_array(np.array(z, t), k + "_z")]
    QD = lambda src, p, q, dq: [helper.make_node("QuantizeLinear", [src, p, p + "_z"], [q]),
                                helper.make_node("DequantizeLinear", [q, p, p + "_z"], [dq])]
    nodes = (QD("x", "sx", "xq", "xd") + QD("x2", "s2", "x2q", "x2d") + QD("bc", "sb", "bcq", "bcd")
             + QD("br", "sb", "brq", "brd") +
             [helper.make_node("Add", ["xd", "x2d"], ["s1"])] + QD("s1", "sc", "s1q", "s1d") +
             [helper.make_node("Relu", ["s1d"], ["r1"])] + QD("r1", "sr", "r1q", "r1d") +
             [helper.make_node("Add", ["x2d", "bcd"], ["t2"])] + QD("t2", "sd", "t2q", "t2d") +
             [helper.make_node("Add", ["xd", "brd"], ["t3"])] + QD("t3", "se", "t3q", "t3d"))
    outs_v = [helper.make_tensor_value_info(n, t, None) for n, t in (
        ("r1q", TensorProto.UINT8), ("t2q", TensorProto.INT8), ("t3q", TensorProto.INT8))]
    outs = _fused_unfused_reference(ctx, d, nodes, inits, {"x": x, "x2": x2, "bc": bc, "br": br},
                                    outs_v, "fuse-qdq-add", 3)
    if isinstance(outs, run.Result):
        return outs
    o = run.fresh_dir(os.path.join(d, "t1"))
    feeds = sum((["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
                 for n in ("x", "x2", "bc", "br")), [])
    rc, err = _run_env(ctx, ["run", os.path.join(d, "model.onnx")] + feeds +
                       ["--output-dir", o, "--threads", "1"], {})
    if rc != 0:
        return run.Result(False, "1 thread: %s" % run.describe_rc(rc), err)
    outs["1 thread"] = [np.load(os.path.join(o, v.name + ".npy")) for v in outs_v]
    def quant(v, key):
        s, z, t = P[key]
        info = np.iinfo(t)
        return np.clip(np.rint(v / np.float32(s)) + np.float32(z), info.min, info.max).astype(t)
    xq, x2q, bcq, brq = quant(x, "sx"), quant(x2, "s2"), quant(bc, "sb"), quant(br, "sb")
    want = [_qadd_ref(xq, *P["sx"][:2], x2q, *P["s2"][:2], *P["sc"], relu=P["sr"]),
            _qadd_ref(x2q, *P["s2"][:2], bcq, *P["sb"][:2], *P["sd"]),
            _qadd_ref(xq, *P["sx"][:2], brq, *P["sb"][:2], *P["se"])]
    for i, v in enumerate(outs_v):
        for label, o in outs.items():
            a = o[i]
            if a.dtype != want[i].dtype or not np.array_equal(a, want[i]):
                return run.Result(False, "%s (%s): differs from NumPy in %d of %d values" % (
                    v.name, label, int((a.astype(np.int64) != want[i]).sum())
                    if a.shape == want[i].shape else -1, want[i].size))
    return run.Result(True, "3 QLinearAdd of 17437 values (broadcasts, tails) = NumPy at 1, 2 threads")


def maxpool8_wide(ctx):
    """8-bit MaxPool on the row path (qpool.c) with rows wider than its
    vectors: 3x3 stride 2 pad 1 (resnet's) over 131 columns (66 outputs:
    32 + 32 + 2; 133 buffered bytes: 64 + 64 + 5), uint8 and int8, 2x2
    stride 2 over 129; at 1 and 2 threads, exactly NumPy's window maxima."""
    from onnx import helper, TensorProto
    import onnx
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "maxpool8-wide"))
    r = np.random.default_rng(131)
    u = r.integers(0, 256, (2, 5, 23, 131)).astype(np.uint8)
    s = r.integers(-128, 128, (2, 5, 23, 131)).astype(np.int8)
    v = r.integers(0, 256, (1, 3, 9, 129)).astype(np.uint8)
    N = helper.make_node
    g = helper.make_graph(
        [N("MaxPool", ["u"], ["yu"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
         N("MaxPool", ["s"], ["ys"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
         N("MaxPool", ["v"], ["yv"], kernel_shape=[2, 2], strides=[2, 2])], "mp8",
        [helper.make_tensor_value_info("u", TensorProto.UINT8, list(u.shape)),
         helper.make_tensor_value_info("s", TensorProto.INT8, list(s.shape)),
         helper.make_tensor_value_info("v", TensorProto.UINT8, list(v.shape))],
        [helper.make_tensor_value_info(n, t, None) for n, t in (
            ("yu", TensorProto.UINT8), ("ys", TensorProto.INT8), ("yv", TensorProto.UINT8))])
    model = os.path.join(d, "model.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)]), model)
    feeds = []
    for n, a in (("u", u), ("s", s), ("v", v)):
        np.save(os.path.join(d, n + ".npy"), a)
        feeds += ["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
    want = {"yu": _maxpool_ref(u, (3, 3), (2, 2), (1, 1, 1, 1)),
            "ys": _maxpool_ref(s, (3, 3), (2, 2), (1, 1, 1, 1)),
            "yv": _maxpool_ref(v, (2, 2), (2, 2), (0, 0, 0, 0))}
    for t in ("1", "2"):
        o = run.fresh_dir(os.path.join(d, "out" + t))
        rc, err = _run_env(ctx, ["run", model] + feeds + ["--output-dir", o, "--threads", t], {})
        if rc != 0:
            return run.Result(False, "%s threads: %s" % (t, run.describe_rc(rc)), err)
        for n, w in want.items():
            got = np.load(os.path.join(o, n + ".npy"))
            if got.dtype != w.dtype or got.shape != w.shape or not np.array_equal(got, w):
                return run.Result(False, "%s threads: %s %s differs from NumPy in %d values" % (
                    t, n, got.shape, int((got != w).sum()) if got.shape == w.shape else -1))
    return run.Result(True, "uint8/int8 3x3/2 pad 1 over 131 columns, 2x2/2 over 129 = NumPy")


def qadd_all_pairs(ctx):
    """com.graphcc::QLinearAdd on every pair of input bytes (256 x 256), for
    scale sets whose quotients land on or near half-integers (0.1 + 0.1 over
    0.2, a Relu scale twice C's: where a multiply by the reciprocal and the
    division round apart) and odd ones (uint8 + int8 to int8, int8 + int8
    with the Relu to uint8): byte for byte the unfused graph's, the reference
    kernels' and NumPy's float32 operations in order."""
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "qadd-all-pairs"))
    P = {"ua": (0.1, 128, np.uint8), "ub": (0.1, 128, np.uint8), "uc": (0.2, 128, np.uint8),
         "ur": (0.4, 0, np.uint8), "sa": (0.0123, -5, np.int8), "sb": (0.0456, 7, np.int8),
         "tc": (0.0337, -3, np.int8), "tr": (0.0674, 2, np.uint8), "vc": (0.05, 9, np.int8)}
    inits = []
    for k, (s, z, t) in P.items():
        inits += [numpy_helper.from_array(np.array(s, np.float32), k),
                  numpy_helper.from_array(np.array(z, t), k + "_z")]
    def feed(key, rows):
        s, z, t = P[key]
        q = np.arange(np.iinfo(t).min, np.iinfo(t).max + 1, dtype=np.float32)
        g = q[:, None] if rows else q[None, :]
        return np.ascontiguousarray(np.broadcast_to(
            (g - np.float32(z)) * np.float32(s), (256, 256)).reshape(1, 1, 256, 256))
    inputs = {"xa": feed("ua", True), "xb": feed("ub", False), "ya": feed("sa", True),
              "yb": feed("sb", False)}
    QD = lambda src, p, q, dq: [helper.make_node("QuantizeLinear", [src, p, p + "_z"], [q]),
                                helper.make_node("DequantizeLinear", [q, p, p + "_z"], [dq])]
    nodes = (QD("xa", "ua", "xaq", "xad") + QD("xb", "ub", "xbq", "xbd") +
             QD("ya", "sa", "yaq", "yad") + QD("yb", "sb", "ybq", "ybd") +
             [helper.make_node("Add", ["xad", "xbd"], ["s1"])] + QD("s1", "uc", "s1q", "s1d") +
             [helper.make_node("Relu", ["s1d"], ["r1"])] +
             [helper.make_node("QuantizeLinear", ["r1", "ur", "ur_z"], ["r1q"])] +
             [helper.make_node("Add", ["xad", "ybd"], ["s2"])] +
             [helper.make_node("QuantizeLinear", ["s2", "vc", "vc_z"], ["s2q"])] +
             [helper.make_node("Add", ["yad", "ybd"], ["s3"])] + QD("s3", "tc", "s3q", "s3d") +
             [helper.make_node("Relu", ["s3d"], ["r3"])] +
             [helper.make_node("QuantizeLinear", ["r3", "tr", "tr_z"], ["r3q"])])
    outs_v = [helper.make_tensor_value_info(n, t, None) for n, t in (
        ("r1q", TensorProto.UINT8), ("s2q", TensorProto.INT8), ("r3q", TensorProto.UINT8))]
    outs = _fused_unfused_reference(ctx, d, nodes, inits, inputs, outs_v, "fuse-qdq-add", 3)
    if isinstance(outs, run.Result):
        return outs
    u = np.arange(256, dtype=np.uint8)
    i8 = np.arange(-128, 128, dtype=np.int16).astype(np.int8)
    A = lambda v: np.broadcast_to(v[:, None], (256, 256)).reshape(1, 1, 256, 256)
    B = lambda v: np.broadcast_to(v[None, :], (256, 256)).reshape(1, 1, 256, 256)
    want = [_qadd_ref(A(u), *P["ua"][:2], B(u), *P["ub"][:2], *P["uc"], relu=P["ur"]),
            _qadd_ref(A(u), *P["ua"][:2], B(i8), *P["sb"][:2], *P["vc"]),
            _qadd_ref(A(i8), *P["sa"][:2], B(i8), *P["sb"][:2], *P["tc"], relu=P["tr"])]
    for i, v in enumerate(outs_v):
        got = {k: o[i] for k, o in outs.items()}
        for label, a in got.items():
            if a.dtype != want[i].dtype or not np.array_equal(a, want[i]):
                return run.Result(False, "%s (%s): differs from NumPy in %d of 65536 pairs" % (
                    v.name, label, int((a.astype(np.int64) != want[i]).sum())
                    if a.shape == want[i].shape else -1))
    return run.Result(True, "3 QLinearAdd x 65536 byte pairs = unfused, reference, NumPy")


def gcb_packed_conv_weights(ctx):
    """A .gcb keeps the integer kernels' weights only packed (gc_kpacked
    replaces): four fused QDQ Convs (7x7/2 on 3 channels: channel-major
    phases; 3x3/1; 3x3/2 phase-major with uint8 weights; 3x3/2 dilation 2 on
    the im2col path) and two QLinearMatMul (int8 B 37x50, uint8 B 37x20)
    store fewer weight bytes than plain + packed; the .gcb gives the .onnx's
    bytes, and with the reference kernels (which read the plain weights,
    unpacked at load: gc_qconv_unpack, gc_qgemm_unpack_b) the reference
    run's."""
    import gcbedit
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "gcb-packed"))
    r = np.random.default_rng(4242)
    x = (r.standard_normal((1, 3, 23, 21)) * 2).astype(np.float32)
    convs = [("a", 3, 16, 7, dict(strides=[2, 2], pads=[3, 3, 3, 3]), np.int8),
             ("b", 16, 32, 3, dict(pads=[1, 1, 1, 1]), np.int8),
             ("c", 32, 32, 3, dict(strides=[2, 2], pads=[1, 1, 1, 1]), np.uint8),
             ("d", 32, 24, 3, dict(strides=[2, 2], dilations=[2, 2], pads=[2, 2, 2, 2]), np.int8)]
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "sx"),
             numpy_helper.from_array(np.array(128, np.uint8), "zx")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["h"])]
    plain, prev = 0, "h"
    for name, c, m, k, attrs, wt in convs:
        w = r.integers(-127, 128, (m, c, k, k)) if wt == np.int8 else r.integers(0, 256, (m, c, k, k))
        plain += w.size
        ws = (r.random(m) * 0.01 + 0.002).astype(np.float32)
        wz = np.full(m, 0 if wt == np.int8 else 128, wt)
        inits += [numpy_helper.from_array(w.astype(wt), name + "wq"),
                  numpy_helper.from_array(ws, name + "ws"), numpy_helper.from_array(wz, name + "wz"),
                  numpy_helper.from_array(np.array(0.04, np.float32), name + "ys"),
                  numpy_helper.from_array(np.array(100, np.uint8), name + "yz")]
        nodes += [helper.make_node("DequantizeLinear", [name + "wq", name + "ws", name + "wz"],
                                   [name + "wd"], axis=0),
                  helper.make_node("Conv", [prev, name + "wd"], [name + "c"], **attrs),
                  helper.make_node("QuantizeLinear", [name + "c", name + "ys", name + "yz"],
                                   [name + "q"]),
                  helper.make_node("DequantizeLinear", [name + "q", name + "ys", name + "yz"],
                                   [name + "y"])]
        prev = name + "y"
    v = r.standard_normal((5, 37)).astype(np.float32)
    nodes += [helper.make_node("QuantizeLinear", ["v", "sx", "zx"], ["vq"]),
              helper.make_node("DequantizeLinear", ["vq", "sx", "zx"], ["vd"])]
    for name, nn, wt in (("e", 50, np.int8), ("f", 20, np.uint8)):  # QLinearMatMul's B
        w = r.integers(-127, 128, (37, nn)) if wt == np.int8 else r.integers(0, 256, (37, nn))
        plain += w.size
        inits += [numpy_helper.from_array(w.astype(wt), name + "wq"),
                  numpy_helper.from_array(np.array(0.01, np.float32), name + "ws"),
                  numpy_helper.from_array(np.array(0 if wt == np.int8 else 128, wt), name + "wz"),
                  numpy_helper.from_array(np.array(0.3, np.float32), name + "ys"),
                  numpy_helper.from_array(np.array(100, np.uint8), name + "yz")]
        nodes += [helper.make_node("DequantizeLinear", [name + "wq", name + "ws", name + "wz"],
                                   [name + "wd"]),
                  helper.make_node("MatMul", ["vd", name + "wd"], [name + "m"]),
                  helper.make_node("QuantizeLinear", [name + "m", name + "ys", name + "yz"],
                                   [name + "q"])]
    outs_v = [helper.make_tensor_value_info(n + "q", TensorProto.UINT8, None) for n in "abcdef"]
    g = helper.make_graph(nodes, "gcb-packed",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
                           helper.make_tensor_value_info("v", TensorProto.FLOAT, list(v.shape))],
                          outs_v, inits)
    import onnx
    model, gcb = os.path.join(d, "model.onnx"), os.path.join(d, "model.gcb")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    xin, vin = os.path.join(d, "x.npy"), os.path.join(d, "v.npy")
    np.save(xin, x)
    np.save(vin, v)
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
    if rc != 0 or not re.search(r"pass fuse-qdq-conv\s+4 changes", out) or \
            not re.search(r"pass fuse-qdq-matmul\s+2 changes", out):
        return run.Result(False, "compile: %s; want fuse-qdq-conv 4 and fuse-qdq-matmul 2 "
                          "changes" % run.describe_rc(rc), out + err)
    wbytes = len(gcbedit.Program(gcb).weights)
    if wbytes >= 1.5 * plain:  # plain + packed would be twice the plain bytes
        return run.Result(False, "the .gcb holds %d weight bytes for %d plain weight bytes: "
                          "the plain weights are kept beside the packed ones" % (wbytes, plain))
    outs = {}
    for label, src, env in (("onnx", model, {}), ("gcb", gcb, {}),
                            ("onnx-ref", model, {"GRAPHCC_NN_REFERENCE": "1"}),
                            ("gcb-ref", gcb, {"GRAPHCC_NN_REFERENCE": "1"})):
        o = run.fresh_dir(os.path.join(d, label))
        rc, err = _run_env(ctx, ["run", src, "--input", "x=" + xin, "--input", "v=" + vin,
                                 "--output-dir", o], env)
        if rc != 0:
            return run.Result(False, "%s: %s" % (label, run.describe_rc(rc)), err)
        outs[label] = [np.load(os.path.join(o, v.name + ".npy")).tobytes() for v in outs_v]
    if outs["gcb"] != outs["onnx"] or outs["gcb-ref"] != outs["onnx-ref"] or \
            outs["gcb"] != outs["gcb-ref"]:
        return run.Result(False, "the .gcb's outputs differ from the model's (fast %s, reference %s)"
                          % (outs["gcb"] == outs["onnx"], outs["gcb-ref"] == outs["onnx-ref"]))
    return run.Result(True, "%d weight bytes for %d plain; = .onnx with the fast and the "
                      "reference (unpacked) kernels" % (wbytes, plain))


def int8_conv3d(ctx):
    """A 3D ConvInteger/QLinearConv with one tap along the width (kernel
    3x2x1, pads on depth and height: padding rows between the depth slabs of
    the channel-quad planes, where the epilogue's runs must stop) on two
    threads: the int32 sums exactly as NumPy's, QLinearConv byte for byte as
    the reference loops."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "int8-conv3d"))
    r = np.random.default_rng(33)
    x = _rand_q(r, (1, 5, 4, 6, 9), np.uint8)
    w = _rand_q(r, (7, 5, 3, 2, 1), np.int8)
    zx = np.array(9, np.uint8)
    pads = (1, 1, 0, 1, 0, 0)  # d, h, w begins; d, h, w ends
    xp = np.pad(x.astype(np.int64) - 9, ((0, 0), (0, 0), (1, 1), (1, 0), (0, 0)))
    od, oh, ow = xp.shape[2] - 2, xp.shape[3] - 1, xp.shape[4]
    want = np.zeros((1, 7, od, oh, ow), np.int64)
    for i in range(3):
        for j in range(2):
            want += np.einsum("ncdhw,mc->nmdhw", xp[:, :, i:i + od, j:j + oh, :],
                              w[:, :, i, j, 0].astype(np.int64))
    attrs = dict(pads=list(pads))
    inits = [numpy_helper.from_array(a, n) for a, n in
             ((w, "w"), (zx, "zx"), (np.array(0, np.int8), "zw"), (np.array(np.float32(0.02)), "sx"),
              (np.full(7, 0.01, np.float32), "sw"), (np.array(np.float32(0.5)), "sy"),
              (np.array(7, np.uint8), "zy"), (np.arange(7, dtype=np.int32) * 100, "bias"))]
    oshape = list(want.shape)
    g = helper.make_graph(
        [helper.make_node("ConvInteger", ["x", "w", "zx", "zw"], ["acc"], **attrs),
         helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"],
                          ["yq"], **attrs)],
        "conv3d", [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
        [helper.make_tensor_value_info("acc", TensorProto.INT32, oshape),
         helper.make_tensor_value_info("yq", TensorProto.UINT8, oshape)], inits)
    model = os.path.join(d, "conv3d.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
    xin = os.path.join(d, "x.npy")
    np.save(xin, x)
    outs = {}
    for label, env in (("fast", {}), ("reference", {"GRAPHCC_NN_REFERENCE": "1"})):
        o = run.fresh_dir(os.path.join(d, label))
        rc, err = _run_env(ctx, ["run", model, "--input", "x=" + xin, "--output-dir", o,
                                 "--threads", "2"], env)
        if rc != 0:
            return run.Result(False, "%s: %s" % (label, run.describe_rc(rc)), err)
        outs[label] = (np.load(os.path.join(o, "acc.npy")), np.load(os.path.join(o, "yq.npy")))
    if not np.array_equal(outs["fast"][0], want):
        return run.Result(False, "ConvInteger differs from NumPy in %d values"
                          % int((outs["fast"][0] != want).sum()))
    if outs["fast"][1].tobytes() != outs["reference"][1].tobytes():
        return run.Result(False, "QLinearConv: the integer GEMM and the reference loops differ")
    return run.Result(True, "3D, kernel 3x2x1: exact vs NumPy and = reference loops")


def quantize_threads(ctx):
    """QuantizeLinear of a float tensor per tensor on two threads (quant.c
    cuts it into runs of 64-element lines over the pool): every element as
    NumPy's float32 rint(x / scale) + zero point, saturated (ties, values
    past the range, NaN -> zero point as graphcc documents), uint8 and int8,
    an element count not a multiple of 64."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "quant", "quantize-threads"))
    r = np.random.default_rng(77)
    shape = (1, 37, 61, 59)  # 133,163 elements: 2,083 lines and a tail of 11
    sc = np.float32(0.05)
    x = (r.standard_normal(shape) * 4).astype(np.float32)
    x.flat[::13] = (np.rint(x.flat[::13] / sc) + 0.5) * sc  # near the ties
    x.flat[5::101] = 1e4
    x.flat[7::103] = -1e4
    for name, zt, z, tt in (("u8", np.uint8, 250, TensorProto.UINT8), ("s8", np.int8, -127, TensorProto.INT8)):
        g = helper.make_graph(
            [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
            [helper.make_tensor_value_info("y", tt, list(shape))],
            [numpy_helper.from_array(np.array(sc), "s"), numpy_helper.from_array(np.array(z, zt), "z")])
        model = os.path.join(d, name + ".onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), model)
        xin = os.path.join(d, "x.npy")
        np.save(xin, x)
        o = run.fresh_dir(os.path.join(d, name))
        rc, err = _run_env(ctx, ["run", model, "--input", "x=" + xin, "--output-dir", o,
                                 "--threads", "2"], {})
        if rc != 0:
            return run.Result(False, "%s: %s" % (name, run.describe_rc(rc)), err)
        info = np.iinfo(zt)
        want = np.clip(np.rint(x / sc) + np.float32(z), info.min, info.max).astype(zt)
        got = np.load(os.path.join(o, "y.npy"))
        if not np.array_equal(got, want):
            return run.Result(False, "%s: %d of %d elements differ from NumPy"
                              % (name, int((got != want).sum()), want.size))
    return run.Result(True, "uint8 and int8, %d elements on two threads, exact" % x.size)


def cases(ctx):
    return [("quant/silu-int8", lambda: silu_int8(ctx)),
            ("quant/silu-gcb", lambda: silu_gcb(ctx)),
            ("quant/float-manifest", lambda: float_manifest(ctx)),
            ("quant/per-axis", lambda: per_axis(ctx)),
            ("quant/hostile-gcb", lambda: hostile_gcb(ctx)),
            ("quant/int8-conv", lambda: int8_builtins(ctx)),
            ("quant/int8-conv3d", lambda: int8_conv3d(ctx)),
            ("quant/qdq-conv-fusion", lambda: qdq_conv_fusion(ctx)),
            ("quant/qdq-matmul-fusion", lambda: qdq_matmul_fusion(ctx)),
            ("quant/qdq-add-maxpool-fusion", lambda: qdq_add_maxpool_fusion(ctx)),
            ("quant/qadd-all-pairs", lambda: qadd_all_pairs(ctx)),
            ("quant/qadd-fast-sizes", lambda: qadd_fast_sizes(ctx)),
            ("quant/maxpool8-wide", lambda: maxpool8_wide(ctx)),
            ("quant/quantize-threads", lambda: quantize_threads(ctx)),
            ("quant/gcb-packed-weights", lambda: gcb_packed_conv_weights(ctx)),
            ("quant/dynq-matmul-fusion", lambda: dynq_matmul_fusion(ctx))]
