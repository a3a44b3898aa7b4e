"""The training demo: a small CNN from PyTorch whose middle is an op package's
operations (plugins/trainable: ParamSwish, then ChannelScale with a
trainable per-channel gamma), each with a backward declared in its manifest,

    conv 3x3 -> ParamSwish -> ChannelScale -> MaxPool 2 -> Linear -> cross-entropy

exported to ONNX (the custom ops through symbolic functions), turned into a
training program by `graphcc train-program`, and trained for 50 steps by
build/bin/example-train (one session; the session keeps the params) and by
torch.optim from the same initial weights on the same batches.

  train-demo/<optimizer>   every step's loss within 1e-4 relative of
                           torch's, the final weights within
                           1e-3 * max(1, |torch|); the largest differences
                           are in the detail line
  train-demo/onnx-roundtrip
                           train-program -o train.onnx, compiled again:
                           the params stay session state (the .onnx keeps
                           the pairing), the first step's loss is torch's
  train-demo/backward-nodes  the backward operations are ordinary custom
                           nodes of the .gcb: `info` shows each bound to its
                           flavour and kernel; a step runs under --guard and
                           --check-nan
  train-demo/refuse-no-gradient
                           the same model with a package whose ParamSwish
                           declares no gradient: exit 1, one message naming
                           the node and its operation
"""
import os
import re
import shutil

import numpy as np

import run

STEPS, BATCH, BETA = 50, 8, 1.5
PARAMS = ["net.conv.weight", "net.conv.bias", "net.gamma", "net.fc.weight", "net.fc.bias"]
LOSS_RTOL, WEIGHT_TOL = 1e-4, 1e-3
# torch's ONNX export sets a process-wide "exporting" flag that the model
# reads: no training while another case exports.
TORCH_LOCK = run.TORCH_EXPORT
OPTIMIZERS = {"sgd": ["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9"],
              "adam": ["--optimizer", "adam", "--lr", "0.01"]}


def _net(torch):
    nn, F = torch.nn, torch.nn.functional

    class Swish(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * torch.sigmoid(BETA * x)

        @staticmethod
        def symbolic(g, x):
            return g.op("com.graphcc.trainable::ParamSwish", x, beta_f=BETA)

    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, gamma):
            return x * gamma.view(1, -1, 1, 1)

        @staticmethod
        def symbolic(g, x, gamma):
            return g.op("com.graphcc.trainable::ChannelScale", x, gamma)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1)
            self.gamma = nn.Parameter(torch.rand(4) + 0.5)
            self.fc = nn.Linear(64, 5)

        def forward(self, x):
            h = self.conv(x)
            if torch.onnx.is_in_onnx_export():  # the package's operations
                h = Scale.apply(Swish.apply(h), self.gamma)
            else:  # the same in torch's ops, which autograd differentiates
                h = h * torch.sigmoid(BETA * h) * self.gamma.view(1, -1, 1, 1)
            return self.fc(torch.flatten(F.max_pool2d(h, 2), 1))

    class WithLoss(nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x, labels):
            return F.cross_entropy(self.net(x), labels)
    return WithLoss(Net())


def _fixture(ctx):
    """The model, its initial weights and the batches (made once)."""
    with TORCH_LOCK:
        return _make_fixture(ctx)


def _make_fixture(ctx):
    final = os.path.join(ctx.fix, "train-demo")
    if os.path.exists(os.path.join(final, "done")):
        return final
    import torch
    torch.manual_seed(5)
    m = _net(torch)
    # made aside and renamed into place: cases run in parallel
    d = final + ".%d" % os.getpid()
    os.makedirs(d, exist_ok=True)
    # labels a fixed linear map of the images decides: there is something to learn
    rng = np.random.default_rng(6)
    teacher = rng.standard_normal((64, 5))
    for k in range(STEPS):
        x = rng.standard_normal((BATCH, 1, 8, 8)).astype(np.float32)
        np.save(os.path.join(d, "x_%d.npy" % k), x)
        np.save(os.path.join(d, "labels_%d.npy" % k),
                np.argmax(x.reshape(BATCH, 64) @ teacher, 1).astype(np.int64))
    torch.onnx.export(m, (torch.zeros(BATCH, 1, 8, 8), torch.zeros(BATCH, dtype=torch.int64)),
                      os.path.join(d, "model.onnx"), opset_version=13,
                      input_names=["x", "labels"], output_names=["loss"],
                      custom_opsets={"com.graphcc.trainable": 1}, do_constant_folding=False)
    torch.save(m.state_dict(), os.path.join(d, "init.pt"))
    open(os.path.join(d, "done"), "w").close()
    try:
        os.rename(d, final)
    except OSError:  # another case made it first
        shutil.rmtree(d, ignore_errors=True)
    return final


def _torch_run(d, optimizer):
    with TORCH_LOCK:
        return _torch_train(d, optimizer)


def _torch_train(d, optimizer):
    import torch
    torch.set_grad_enabled(True)
    m = _net(torch)
    m.load_state_dict(torch.load(os.path.join(d, "init.pt")))
    opt = (torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if optimizer == "sgd"
           else torch.optim.Adam(m.parameters(), lr=0.01))
    losses = []
    for k in range(STEPS):
        x = torch.tensor(np.load(os.path.join(d, "x_%d.npy" % k)))
        y = torch.tensor(np.load(os.path.join(d, "labels_%d.npy" % k)))
        opt.zero_grad()
        loss = m(x, y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    sd = m.state_dict()
    return np.array(losses), {k: sd[k].numpy() for k in PARAMS}


def _train_program(ctx, d, out, extra):
    ops = os.path.join(ctx.plugins, "trainable", "trainable.yaml")
    return run.run_graphcc(ctx, ["train-program", os.path.join(d, "model.onnx"), "--ops", ops,
                                 "--loss", "loss", "--params", ",".join(PARAMS), "-o", out]
                           + extra)


def demo_case(ctx, optimizer):
    import subprocess
    d = _fixture(ctx)
    w = run.fresh_dir(os.path.join(ctx.out, "train-demo", optimizer))
    for f in os.listdir(d):
        if f.endswith(".npy"):
            shutil.copy(os.path.join(d, f), w)
    prog = os.path.join(w, "train.gcb")
    rc, _, err = _train_program(ctx, d, prog, OPTIMIZERS[optimizer])
    if rc != 0:
        return run.Result(False, "train-program: " + run.describe_rc(rc), err)
    trainer = os.path.join(os.path.dirname(ctx.graphcc), "example-train")
    p = subprocess.run([trainer, prog, w, str(STEPS)], capture_output=True, text=True,
                       env=run.ENV, timeout=run.TIMEOUT)
    if p.returncode != 0:
        return run.Result(False, "example-train: exit %d" % p.returncode, p.stderr)
    got = np.load(os.path.join(w, "losses.npy"))
    want, weights = _torch_run(d, optimizer)
    rel = np.abs(got - want) / np.abs(want)
    np.save(os.path.join(w, "torch_losses.npy"), want)
    if not (rel <= LOSS_RTOL).all():
        k = int(np.argmax(rel))
        return run.Result(False, "step %d: loss %.9g, torch %.9g (relative difference %.2e > %g)"
                          % (k, got[k], want[k], rel[k], LOSS_RTOL))
    worst_w = 0.0
    for name in PARAMS:
        g = np.load(os.path.join(w, "final", name + ".new.npy"))
        t = weights[name]
        dw = float(np.max(np.abs(g - t) / np.maximum(1.0, np.abs(t))))
        worst_w = max(worst_w, dw)
        if dw > WEIGHT_TOL:
            return run.Result(False, "final %s differs from torch's by %.2e (> %g)"
                              % (name, dw, WEIGHT_TOL))
    np.save(os.path.join(w, "torch_losses.npy"), want)
    return run.Result(True, "losses %.4f -> %.4f over %d steps; worst step difference %.1e "
                      "(relative), final weights %.1e; %s"
                      % (want[0], want[-1], STEPS, rel.max(), worst_w, p.stdout.strip()))


def roundtrip_case(ctx):
    d = _fixture(ctx)
    w = run.fresh_dir(os.path.join(ctx.out, "train-demo", "onnx"))
    onnx_prog = os.path.join(w, "train.onnx")
    rc, _, err = _train_program(ctx, d, onnx_prog, OPTIMIZERS["sgd"])
    if rc != 0:
        return run.Result(False, "train-program -o .onnx: " + run.describe_rc(rc), err)
    gcb = os.path.join(w, "train.gcb")
    rc, _, err = run.run_graphcc(ctx, ["compile", onnx_prog, "--ops",
                                       os.path.join(ctx.plugins, "trainable", "trainable.yaml"),
                                       "-o", gcb])
    if rc != 0:
        return run.Result(False, "compile train.onnx: " + run.describe_rc(rc), err)
    # two runs on the same batch: the second loss is lower (the params were
    # kept and updated), the first is torch's first
    rc, _, err = run.run_graphcc(ctx, ["run", gcb, "--input", "x=" + os.path.join(d, "x_0.npy"),
                                       "--input", "labels=" + os.path.join(d, "labels_0.npy"),
                                       "--repeat", "2", "--output-dir", w])
    if rc != 0:
        return run.Result(False, "run: " + run.describe_rc(rc), err)
    first = _torch_first_loss(d)
    got = float(np.load(os.path.join(w, "loss.npy")))
    step = int(np.load(os.path.join(w, "train.step.new.npy")))
    if step != 3:
        return run.Result(False, "after two runs the step count is %d, expected 3" % step)
    if not got < first:
        return run.Result(False, "the second run's loss %.6g is not below the first's %.6g: "
                          "the params were not kept" % (got, first))
    return run.Result(True, "loss %.6f after one step of %.6f" % (got, first))


def _torch_first_loss(d):
    import torch
    with TORCH_LOCK:
        m = _net(torch)
        m.load_state_dict(torch.load(os.path.join(d, "init.pt")))
        x = torch.tensor(np.load(os.path.join(d, "x_0.npy")))
        y = torch.tensor(np.load(os.path.join(d, "labels_0.npy")))
        return float(m(x, y))


def backward_nodes_case(ctx):
    d = _fixture(ctx)
    w = run.fresh_dir(os.path.join(ctx.out, "train-demo", "backward-nodes"))
    prog = os.path.join(w, "train.gcb")
    rc, _, err = _train_program(ctx, d, prog, OPTIMIZERS["sgd"])
    if rc != 0:
        return run.Result(False, "train-program: " + run.describe_rc(rc), err)
    rc, out, err = run.run_graphcc(ctx, ["info", prog])
    for op, flavour in (("ParamSwishGrad", "paramSwishGradF32"),
                        ("ChannelScaleGrad", "channelScaleGradF32")):
        if not re.search(r"com\.graphcc\.trainable::%s -> operation '%s'.*flavour '%s'"
                         % (op, op, flavour), out):
            return run.Result(False, "info does not show %s bound to %s" % (op, flavour),
                              out + err)
    rc, _, err = run.run_graphcc(ctx, ["run", prog, "--input", "x=" + os.path.join(d, "x_0.npy"),
                                       "--input", "labels=" + os.path.join(d, "labels_0.npy"),
                                       "--guard", "--check-nan", "--output-dir", w])
    if rc != 0:
        return run.Result(False, "run --guard --check-nan: " + run.describe_rc(rc), err)
    return run.Result(True)


def refuse_case(ctx):
    d = _fixture(ctx)
    w = run.fresh_dir(os.path.join(ctx.fix, "train-demo-refuse"))
    src = os.path.join(ctx.plugins, "trainable")
    text = open(os.path.join(src, "trainable.yaml")).read()
    start = text.index("\ngradient:") + 1
    end = text.index("functionsLibrary:", start)
    text = text[:start] + text[end:]  # ParamSwish without its gradient:
    shutil.copytree(os.path.join(src, "lib"), os.path.join(w, "lib"))
    with open(os.path.join(w, "trainable.yaml"), "w") as f:
        f.write(text)
    rc, _, err = run.run_graphcc(ctx, ["train-program", os.path.join(d, "model.onnx"), "--ops",
                                       os.path.join(w, "trainable.yaml"), "--loss", "loss",
                                       "--params", ",".join(PARAMS), "-o",
                                       os.path.join(w, "t.gcb")])
    if rc != 1:
        return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), err)
    for s in ("cannot differentiate", "ParamSwish", "declares no gradient"):
        if s not in err:
            return run.Result(False, "the message does not say %r" % s, err)
    return run.Result(True, err.strip()[:160])


def cases(ctx):
    out = [("train-demo/" + o, (lambda o=o: demo_case(ctx, o))) for o in OPTIMIZERS]
    out.append(("train-demo/onnx-roundtrip", lambda: roundtrip_case(ctx)))
    out.append(("train-demo/backward-nodes", lambda: backward_nodes_case(ctx)))
    out.append(("train-demo/refuse-no-gradient", lambda: refuse_case(ctx)))
    return out
