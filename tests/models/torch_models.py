#!/usr/bin/python3
"""Export the real-model test set with PyTorch (random weights, nothing downloaded).

Usage: torch_models.py OUTDIR [--only NAME...]

For each model writes OUTDIR/NAME/model.onnx, input.npy (float32, seeded) and
expected.npy (PyTorch's own output under torch.no_grad()). A model whose three
files exist and are newer than this script is not exported again.
"""
import argparse
import os
import sys
import time

import numpy as np

torch = nn = None  # imported only when something has to be exported (slow)


def _import_torch():
    global torch, nn
    if torch is None:
        import torch as t
        import torch.nn
        torch, nn = t, t.nn

OPSET = 13


def _resnet18():
    import torchvision
    return torchvision.models.resnet18(weights=None), (1, 3, 224, 224)


def _mobilenet_v2():
    import torchvision
    return torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)


def _squeezenet1_0():
    import torchvision
    return torchvision.models.squeezenet1_0(weights=None), (1, 3, 224, 224)


def _transformer():
    # batch_first=False keeps PyTorch off its fused fast path, so the export is
    # made of plain ONNX ops (MatMul, Softmax, LayerNormalization pieces...).
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, batch_first=False)
    return layer, (128, 1, 256)


def _mlp(batch):
    def make():
        m = nn.Sequential(nn.Linear(784, 1024), nn.ReLU(),
                          nn.Linear(1024, 1024), nn.ReLU(),
                          nn.Linear(1024, 10))
        return m, (batch, 784)
    return make


MODELS = {
    "resnet18": _resnet18,
    "mobilenet_v2": _mobilenet_v2,
    "squeezenet1_0": _squeezenet1_0,
    "transformer": _transformer,
    "mlp": _mlp(1),
    "mlp64": _mlp(64),
}

# Ops that must appear in an export (sanity check that it is what we think).
REQUIRED_OPS = {
    "resnet18": {"Conv", "Relu", "MaxPool", "Add", "Gemm"},
    "mobilenet_v2": {"Conv", "Clip", "Add", "Gemm"},
    "squeezenet1_0": {"Conv", "Relu", "MaxPool", "Concat"},
    "transformer": {"MatMul", "Softmax"},
    "mlp": {"Gemm", "Relu"},
    "mlp64": {"Gemm", "Relu"},
}


def _realistic_batchnorm(model, shape):
    """torchvision's init leaves BatchNorm as identity-like scale-and-shift and
    lets activations fade (mobilenet_v2's logits come out near 1e-9). Give
    every BatchNorm a random affine part and running statistics measured on a
    random batch, as training would, so the network computes at a normal scale."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    g = torch.Generator().manual_seed(1)
    for m in bns:
        with torch.no_grad():
            m.weight.copy_(torch.rand(m.weight.shape, generator=g) + 0.5)
            m.bias.copy_(torch.rand(m.bias.shape, generator=g) - 0.5)
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batch
    model.train()
    with torch.no_grad():
        model(torch.randn((8,) + tuple(shape[1:]), generator=g))
    model.eval()


def _fresh(d):
    me = os.path.getmtime(os.path.abspath(__file__))
    for f in ("model.onnx", "input.npy", "expected.npy"):
        p = os.path.join(d, f)
        if not os.path.exists(p) or os.path.getmtime(p) <= me:
            return False
    return True


def _check_ops(name, path):
    import onnx
    m = onnx.load(path)
    ops = {n.op_type for n in m.graph.node}
    missing = REQUIRED_OPS.get(name, set()) - ops
    if missing:
        raise SystemExit("%s: exported graph lacks %s (ops: %s)"
                         % (name, sorted(missing), sorted(ops)))
    custom = sorted({n.domain + "::" + n.op_type for n in m.graph.node
                     if n.domain not in ("", "ai.onnx")})
    if custom:
        raise SystemExit("%s: exported graph has non-standard ops %s" % (name, custom))


def export(name, outdir):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    torch.manual_seed(0)
    model, shape = MODELS[name]()
    _realistic_batchnorm(model, shape)
    model.eval()
    rng = np.random.default_rng(1234)
    x = rng.standard_normal(shape).astype(np.float32)
    xt = torch.from_numpy(x)
    with torch.no_grad():
        y = model(xt)
    y = y.detach().numpy().astype(np.float32)
    tmp = os.path.join(d, "model.onnx.tmp")
    with torch.no_grad():
        torch.onnx.export(model, (xt,), tmp, opset_version=OPSET,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=True)
    _check_ops(name, tmp)
    np.save(os.path.join(d, "input.npy"), x)
    np.save(os.path.join(d, "expected.npy"), y)
    os.replace(tmp, os.path.join(d, "model.onnx"))
    print("%-14s exported in %.1fs (input %s, output %s)"
          % (name, time.time() - t0, "x".join(map(str, shape)),
             "x".join(map(str, y.shape))), flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--only", nargs="+", choices=sorted(MODELS), metavar="NAME")
    a = ap.parse_args(argv)
    t0 = time.time()
    for name in a.only or list(MODELS):
        if _fresh(os.path.join(a.outdir, name)):
            print("%-14s cached" % name, flush=True)
            continue
        _import_torch()
        export(name, a.outdir)
    print("torch models: %.1fs" % (time.time() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
