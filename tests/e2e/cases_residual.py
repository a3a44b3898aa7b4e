"""fuse-residual (lib/pass-residual.c): Conv -> Add(z) [-> Relu] becomes one
Conv carrying z as a fused residual (_gc_residual), end to end.

  residual/<case>      onnx.helper graphs: `graphcc compile` reports the
                       fusion ("pass fuse-residual N changes") and gives the
                       stated node count and op types (`graphcc info` of the
                       .gcb: no Add left where it fused); the .gcb run at 1
                       and 2 threads, and the .onnx with GRAPHCC_NN_REFERENCE=1
                       (the reference kernels), matches NumPy in float64 (|err| <=
                       1e-5 x max|ref| + 1e-6) and `graphcc run --no-optimize`
                       (the unfused graph). Every conv kernel class: 3x3
                       (channel kernel), 1x1 and strided 1x1 (row GEMM),
                       7x7 stride 2, grouped, depthwise, float64, batch 2.
                       z that dies at the Add (dies-*), z that is the Conv's
                       own input too (self-residual).
                       Refused: a residual that broadcasts where its shape is
                       known, a Conv output read twice or that is a graph
                       output; a broadcast the pass could not see is fused
                       and broadcast by the kernel as Add would.
  residual/torch-resnet  torchvision's BasicBlock and Bottleneck (with a
                       downsample branch), exported by torch.onnx.export:
                       no Add or Relu left, output against PyTorch's
"""
import os
import re
import subprocess

import numpy as np

import run

_EXPORT_LOCK = run.TORCH_EXPORT
COMPILED_RE = re.compile(r"compiled .*?: (\d+) nodes \((\d+) in the model\)")
PASS_RE = re.compile(r"pass fuse-residual\s+(\d+) change")
HIST_RE = re.compile(r"^\s+(\d+)\s+(\S+)\s*$", re.M)
REL = 1e-5


def _conv_ref(x, w, b, stride, pad, group, dil=1):
    """NumPy float64 convolution (NCHW, symmetric pads)."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    y = np.zeros((n, m, oh, ow))
    mg = m // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                a, c = dil * i, dil * j
                patch = xs[:, :, a:a + stride * oh:stride, c:c + stride * ow:stride]
                y[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", patch, w[g * mg:(g + 1) * mg, :, i, j])
    if b is not None:
        y += b.astype(np.float64)[None, :, None, None]
    return y


def save_model(path, nodes, inits, inputs, outputs, dt=None):
    """An opset-13 model of one graph: inputs (name -> array) and outputs
    (names) of element type dt (float32 when None), initializers inits."""
    from onnx import TensorProto, helper, numpy_helper
    dt = TensorProto.FLOAT if dt is None else dt
    g = helper.make_graph(
        nodes, "fusion",
        [helper.make_tensor_value_info(k, dt, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, dt, None) for k in outputs],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="graphcc-e2e")
    m.ir_version = 8
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def _fixtures():
    """name -> (build(path) -> ({input: array}, {output: expected}), node
    count, fusions reported, op types required, op types forbidden)."""
    from onnx import TensorProto, helper
    save = save_model
    rng = np.random.default_rng(190)
    n = helper.make_node

    def block(path, c=16, m=16, hw=10, k=3, stride=1, group=1, batch=1, relu=True,
              bias=True, z="input", f64=False, z_shape=None, second_reader=False,
              conv_output=False, reuse=True, dil=1):
        """Conv(x) + z [-> Relu]. z: "input" (a graph input of the Conv
        output's shape or z_shape), "conv" (another Conv's output), "relu-in"
        (Relu of a graph input: a shape the pass cannot see), "self" (the
        Conv's own input, x = Relu(xin)); reuse: z is read again after the
        Add (else it dies there, and the output may take its memory)."""
        dt = np.float64 if f64 else np.float32
        pad = dil * (k // 2)
        x = rng.standard_normal((batch, c, hw, hw)).astype(dt)
        w = (rng.standard_normal((m, c // group, k, k)) / np.sqrt(c // group * k * k)).astype(dt)
        b = rng.standard_normal(m).astype(dt) if bias else None
        oh = (hw + 2 * pad - dil * (k - 1) - 1) // stride + 1
        inits = {"W": w}
        if bias:
            inits["B"] = b
        inputs = {"x": x}
        nodes = []
        if z == "self":
            inputs = {"xin": x}
            nodes.append(n("Relu", ["xin"], ["x"]))
            x = np.maximum(x, 0)
        conv = _conv_ref(x, w, b, stride, pad, group, dil)
        nodes.append(n("Conv", ["x", "W"] + (["B"] if bias else []), ["c"], kernel_shape=[k, k],
                       strides=[stride, stride], pads=[pad] * 4, group=group,
                       dilations=[dil, dil]))
        shape = z_shape or (batch, m, oh, oh)
        if z == "conv":  # a 1x1 projection of x, as a downsample branch
            w2 = (rng.standard_normal((m, c, 1, 1)) / np.sqrt(c)).astype(dt)
            inits["W2"] = w2
            nodes.append(n("Conv", ["x", "W2"], ["zz"], strides=[stride, stride]))
            zval = _conv_ref(x, w2, None, stride, 0, 1)
        elif z == "self":
            zval = x
            nodes.append(n("Identity", ["x"], ["zz"]))
        elif z == "relu-in":
            zin = rng.standard_normal(shape).astype(dt)
            inputs["zin"] = zin
            nodes.append(n("Relu", ["zin"], ["zz"]))
            zval = np.maximum(zin.astype(np.float64), 0)
        else:
            zval = rng.standard_normal(shape).astype(dt)
            inputs["zz"] = zval
        nodes.append(n("Add", ["c", "zz"] if rng.integers(2) else ["zz", "c"],
                       ["s" if relu else "y"]))
        y = conv + zval.astype(np.float64)
        if relu:
            nodes.append(n("Relu", ["s"], ["y"]))
            y = np.maximum(y, 0)
        outs = {"y": y}
        if second_reader:  # the Conv's output is read again: no fusion
            nodes.append(n("Neg", ["c"], ["nc"]))
            outs["nc"] = -conv
        if conv_output:
            outs["c"] = conv
        if z != "input" and reuse:  # z read again after the Add
            nodes.append(n("Mul", ["zz", "y"], ["zy"]))
            outs["zy"] = zval.astype(np.float64) * y
        save(path, nodes, inits, inputs, outs,
             TensorProto.DOUBLE if f64 else TensorProto.FLOAT)
        return inputs, outs

    F = block
    return {
        # name: (build, nodes, fused, must have, must not have)
        "3x3-relu": (F, 1, 1, {"Conv"}, {"Add", "Relu"}),
        "3x3-plain": (lambda p: F(p, relu=False), 1, 1, {"Conv"}, {"Add"}),
        "3x3-nobias-batch2": (lambda p: F(p, bias=False, batch=2), 1, 1, {"Conv"}, {"Add"}),
        "1x1-wide": (lambda p: F(p, c=32, m=40, hw=30, k=1), 1, 1, {"Conv"}, {"Add"}),
        "1x1-stride2": (lambda p: F(p, c=24, m=48, hw=28, k=1, stride=2), 1, 1, {"Conv"},
                        {"Add"}),
        "7x7-stride2": (lambda p: F(p, c=3, m=20, hw=33, k=7, stride=2), 1, 1, {"Conv"},
                        {"Add"}),
        "grouped": (lambda p: F(p, c=16, m=32, group=4), 1, 1, {"Conv"}, {"Add"}),
        "depthwise": (lambda p: F(p, c=32, m=32, hw=12, group=32), 1, 1, {"Conv"}, {"Add"}),
        "float64": (lambda p: F(p, f64=True), 1, 1, {"Conv"}, {"Add"}),
        # taps that read only padding dropped (a 1x1 of the centre), or
        # read it at some outputs (runtime/kernels/conv-live.c)
        "dilated-centre": (lambda p: F(p, c=24, m=32, hw=12, dil=16), 1, 1, {"Conv"}, {"Add"}),
        "dilated-edges": (lambda p: F(p, c=24, m=32, hw=16, dil=12), 1, 1, {"Conv"}, {"Add"}),
        "dilated-depthwise": (lambda p: F(p, c=32, m=32, hw=12, group=32, dil=12), 1, 1,
                              {"Conv"}, {"Add"}),
        "from-conv": (lambda p: F(p, c=8, m=24, hw=14, z="conv"), 3, 1, {"Conv", "Mul"},
                      {"Add", "Relu"}),
        # z dies at the Add (an output written over it would have to be
        # safe on every kernel path), or is the Conv's own input too
        "dies-1x1": (lambda p: F(p, c=16, m=16, hw=32, k=1, z="relu-in", reuse=False), 2, 1,
                         {"Conv"}, {"Add"}),
        "dies-3x3": (lambda p: F(p, c=16, m=16, hw=32, z="relu-in", reuse=False), 2, 1,
                         {"Conv"}, {"Add"}),
        "self-residual": (lambda p: F(p, c=16, m=16, hw=32, k=1, z="self", reuse=False), 2, 1,
                          {"Conv"}, {"Add"}),
        "from-conv-stride2": (lambda p: F(p, c=8, m=24, hw=14, stride=2, z="conv"), 3, 1,
                              {"Conv", "Mul"}, {"Add"}),
        # broadcasts the pass can see: refused
        "bcast-channel": (lambda p: F(p, z_shape=(1, 16, 1, 1)), 3, 0, {"Add"}, None),
        "bcast-plane": (lambda p: F(p, z_shape=(1, 1, 10, 10)), 3, 0, {"Add"}, None),
        "bcast-rank3": (lambda p: F(p, z_shape=(16, 10, 10)), 3, 0, {"Add"}, None),
        # broadcasts it cannot see (z behind a Relu): fused, broadcast by the kernel
        "hidden-bcast-smaller": (lambda p: F(p, z="relu-in", z_shape=(1, 16, 1, 10)), 3, 1,
                                 {"Conv"}, {"Add"}),
        "hidden-bcast-larger": (lambda p: F(p, c=8, m=6, hw=1, k=1, z="relu-in",
                                            z_shape=(2, 6, 5, 4)), 3, 1, {"Conv"}, {"Add"}),
        # the Conv's output read elsewhere, or a graph output: no fusion
        "second-reader": (lambda p: F(p, second_reader=True), 4, 0, {"Add"}, None),
        "conv-output": (lambda p: F(p, conv_output=True), 3, 0, {"Add"}, None),
    }


def _histogram(ctx, gcb):
    rc, out, err = run.run_graphcc(ctx, ["info", gcb])
    if rc != 0:
        return None, err
    return {m.group(2) for m in HIST_RE.finditer(out.split("nodes:", 1)[-1].split("custom")[0])}, ""


def _run(ctx, model, inputs, d, extra, env=None):
    args = []
    for k, v in inputs.items():
        p = os.path.join(d, k + ".npy")
        np.save(p, v)
        args += ["--input", "%s=%s" % (k, p)]
    tag = "".join(extra).replace("-", "_") + ("_ref" if env else "")
    o = run.fresh_dir(os.path.join(d, "out" + tag))
    if env is None:
        rc, _, err = run.run_graphcc(ctx, ["run", model] + args + ["--output-dir", o] + extra)
        return o, rc, err
    e = dict(run.ENV)
    e.update(env)
    p = subprocess.run([ctx.graphcc, "run", model] + args + ["--output-dir", o] + extra,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=run.TIMEOUT,
                       cwd=ctx.work, env=e)
    err = p.stderr.decode("utf-8", "replace")
    rc = run.SANITIZER_RC if run.SANITIZER_RE.search(err) else p.returncode
    return o, rc, err


def _check(ctx, gcb, model, inputs, outs, d):
    """The .gcb's outputs at 1 and 2 threads and on the reference kernels
    against `outs` (float64) and the unfused graph; None or why not."""
    plain, rc, err = _run(ctx, model, inputs, d, ["--no-optimize"])
    if rc != 0:
        return "run --no-optimize: %s %s" % (run.describe_rc(rc), err)
    # the reference kernels compile the .onnx: a .gcb planned for the packed
    # kernels' scratch is refused under GRAPHCC_NN_REFERENCE (an arena check)
    for extra, env in ((["--threads", "1"], None), (["--threads", "2"], None),
                       (["--threads", "2"], {"GRAPHCC_NN_REFERENCE": "1"})):
        o, rc, err = _run(ctx, model if env else gcb, inputs, d, extra, env)
        label = " ".join(extra) + (" reference kernels" if env else "")
        if rc != 0:
            return "run %s: %s %s" % (label, run.describe_rc(rc), err)
        for k, want in outs.items():
            dt = next(iter(inputs.values())).dtype
            want = np.asarray(want, dt)
            tol = REL * float(np.nanmax(np.abs(want))) + 1e-6
            why = run.compare(os.path.join(o, k + ".npy"), want, 0, tol)
            if why:
                return "%s, vs NumPy: %s" % (label, why)
            why = run.compare(os.path.join(o, k + ".npy"),
                              np.load(os.path.join(plain, k + ".npy")), 0, tol)
            if why:
                return "%s, vs the unfused graph: %s" % (label, why)
    return None


def _compile(ctx, model, d):
    gcb = os.path.join(d, "model.gcb")
    rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb])
    if rc != 0:
        return None, None, "compile: " + run.describe_rc(rc), err
    ops, herr = _histogram(ctx, gcb)
    return gcb, ops, out, err + herr


def check_fixture(ctx, folder, pass_name, spec):
    """Builds fixture spec (build, nodes, fused, must have, must not have) in
    folder, compiles it and checks what pass_name reported, the program's
    node count and op types, and its outputs (_check)."""
    build, count, fused, must, must_not = spec
    d = run.fresh_dir(os.path.join(ctx.fix, folder))
    model = os.path.join(d, "model.onnx")
    inputs, outs = build(model)
    gcb, ops, out, err = _compile(ctx, model, d)
    if gcb is None:
        return run.Result(False, out, err)
    m = COMPILED_RE.search(out)
    r = re.search(r"pass %s\s+(\d+) change" % re.escape(pass_name), out)
    if not r or int(r.group(1)) != fused:
        return run.Result(False, "%s reported %s, expected %d"
                          % (pass_name, r.group(1) if r else "nothing", fused), out)
    if not m or int(m.group(1)) != count:
        return run.Result(False, "compiled to %s nodes, expected %d"
                          % (m.group(1) if m else "?", count), out)
    if ops is None or (must and not must <= ops) or (must_not and must_not & ops):
        return run.Result(False, "program has %s; expected %s and none of %s"
                          % (sorted(ops or []), sorted(must or []), sorted(must_not or [])),
                          err)
    why = _check(ctx, gcb, model, inputs, outs, d)
    return run.Result(not why, why or "%s nodes, %d fused" % (m.group(1), fused))


def fixture_case(ctx, name):
    return check_fixture(ctx, os.path.join("residual", name), "fuse-residual",
                         _fixtures()[name])


def export_eval(make, model, seed):
    """torch.onnx.export of the module make() returns with its input, in eval
    mode with its BatchNorm2d statistics and affine drawn at random, all from
    `seed`; (the input, the module's output) as NumPy."""
    import torch
    # torch.onnx.export keeps global state: hold the locks the other suites'
    # exports take (each holds only its own, so no order can deadlock)
    with _EXPORT_LOCK:
        torch.manual_seed(seed)
        m, x = make()
        m = m.eval()
        with torch.no_grad():
            for mod in m.modules():
                if isinstance(mod, torch.nn.BatchNorm2d):
                    mod.running_mean.normal_(0, 0.2)
                    mod.running_var.uniform_(0.5, 1.5)
                    mod.weight.uniform_(0.5, 1.5)
                    mod.bias.normal_(0, 0.2)
        torch.onnx.export(m, x, model, opset_version=13, input_names=["x"],
                          output_names=["y"])
        with torch.no_grad():
            return x.numpy(), m(x).numpy()


def torch_case(ctx):
    import torch
    import torchvision
    d = run.fresh_dir(os.path.join(ctx.fix, "residual", "torch-resnet"))
    R = torchvision.models.resnet

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            ds = torch.nn.Sequential(torch.nn.Conv2d(16, 64, 1, stride=2, bias=False),
                                     torch.nn.BatchNorm2d(64))
            self.b1 = R.BasicBlock(16, 16)
            self.b2 = R.Bottleneck(16, 16, stride=2, downsample=ds)

        def forward(self, x):
            return self.b2(self.b1(x))

    model = os.path.join(d, "model.onnx")
    x, want = export_eval(lambda: (Net(), torch.randn(2, 16, 20, 20)), model, 19)
    gcb, ops, out, err = _compile(ctx, model, d)
    if gcb is None:
        return run.Result(False, out, err)
    r = PASS_RE.search(out)
    if not r or int(r.group(1)) != 2 or ops != {"Conv"}:
        return run.Result(False, "fuse-residual %s, ops %s; expected 2 fused, Conv alone"
                          % (r.group(1) if r else "?", sorted(ops or [])), out + err)
    why = _check(ctx, gcb, model, {"x": x}, {"y": want}, d)
    return run.Result(not why, why or COMPILED_RE.search(out).group(0))


def cases(ctx):
    out = [("residual/" + k, (lambda k=k: fixture_case(ctx, k))) for k in _fixtures()]
    out.append(("residual/torch-resnet", lambda: torch_case(ctx)))
    return out
