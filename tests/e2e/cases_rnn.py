"""Recurrent layers as PyTorch exports them (runtime/kernels/rnn.c's fast
path: GEMM input projection, packed weights, directions on two threads).

  rnn/<model>-t<N>   torch.onnx.export (opset 13) of a 2-layer LSTM, a 2-layer
                     bidirectional GRU and a bidirectional tanh RNN (hidden
                     sizes a multiple of 16 and not; x of 9 steps, batch 3),
                     an LSTM of hidden 320 at batch 1 (R^T in column panels,
                     a step's product split over 2 threads) and a batch-first
                     GRU at batch 16 (each step one GEMM for the batch, its
                     gates split over threads), run with --threads N against
                     PyTorch's own output: |err| <= 1e-5 x max|torch| + 1e-6
"""
import os

import numpy as np

import run

MODELS = {
    "lstm2": lambda t: t.nn.LSTM(24, 64, num_layers=2),
    "gru2-bi": lambda t: t.nn.GRU(24, 40, num_layers=2, bidirectional=True),
    "rnn-bi": lambda t: t.nn.RNN(24, 20, bidirectional=True),
    "lstm320-b1": lambda t: t.nn.LSTM(24, 320),
    "gru-b16": lambda t: t.nn.GRU(24, 300, batch_first=True),
}
X_SHAPE = {"lstm320-b1": (9, 1, 24), "gru-b16": (16, 9, 24)}  # else (9, 3, 24)


_lock = run.TORCH_EXPORT  # torch.onnx.export keeps global state


def _export(ctx, name):
    with _lock:
        return _export_locked(ctx, name)


def _export_locked(ctx, name):
    import torch
    d = os.path.join(ctx.fix, "rnn", name)
    model, x_path, y_path = (os.path.join(d, f) for f in ("model.onnx", "x.npy", "y.npy"))
    if os.path.exists(y_path):
        return model, x_path, y_path
    os.makedirs(d, exist_ok=True)

    class Wrap(torch.nn.Module):
        def __init__(self, r):
            super().__init__()
            self.r = r

        def forward(self, x):
            y, h = self.r(x)
            return y

    torch.manual_seed(7)
    m = Wrap(MODELS[name](torch)).eval()
    x = torch.randn(*X_SHAPE.get(name, (9, 3, 24)))
    torch.onnx.export(m, x, model, opset_version=13, input_names=["x"], output_names=["y"])
    with torch.no_grad():
        np.save(y_path, m(x).numpy())
    np.save(x_path, x.numpy())
    return model, x_path, y_path


def case(ctx, name, threads):
    model, x, y = _export(ctx, name)
    o = run.fresh_dir(os.path.join(ctx.out, "rnn", "%s-t%d" % (name, threads)))
    rc, _, err = run.run_graphcc(ctx, ["run", model, "--input", "x=" + x, "--output-dir", o,
                                       "--threads", str(threads)])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc), err)
    want = np.load(y)
    tol = 1e-5 * float(np.abs(want).max()) + 1e-6
    why = run.compare(os.path.join(o, "y.npy"), want, 0, tol)
    return run.Result(not why, why or "within %.1e of torch" % tol, err)


def cases(ctx):
    return [("rnn/%s-t%d" % (n, t), (lambda n=n, t=t: case(ctx, n, t)))
            for n in MODELS for t in (1, 2)]
