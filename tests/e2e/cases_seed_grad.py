"""A trainable operation written to the seed interface (Glow's C ABI):
tests/packages/seed-grad's ScaledTanh declares ScaledTanhGrad, a seed
interface operation (default-named functions library, void kernels), as its
backward.

  seed-grad/gradcheck        `graphcc gradcheck` passes ScaledTanh's input
                             'x' in float64 (tolerance 1e-6)
  seed-grad/wrong-backward   seed-grad-wrong (ScaledTanhGrad with 1 - tanh
                             for 1 - tanh^2): gradcheck and test-package
                             exit 1, the FAIL line names ScaledTanh and 'x'
  seed-grad/train            x -> Linear -> ScaledTanh -> Linear ->
                             cross-entropy, made with onnx.helper, turned
                             into an SGD-with-momentum training program by
                             train-program and run for 20 steps by
                             example-train; torch.optim on the same weights
                             and batches: every loss within 1e-4 relative,
                             the final weights within 1e-3 * max(1, |torch|)
"""
import os
import re
import subprocess

import numpy as np

import run

STEPS, BATCH, ALPHA, BETA = 20, 8, 1.5, 0.8
PARAMS = ["W1", "b1", "W2", "b2"]


def _manifest(ctx, name):
    return os.path.join(ctx.packages, name, name + ".yaml")


def gradcheck_case(ctx):
    rc, out, err = run.run_graphcc(ctx, ["gradcheck", _manifest(ctx, "seed-grad")])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", out + err)
    ok = [ln for ln in out.splitlines() if ln.startswith("PASS") and "ScaledTanh" in ln
          and "input 'x'" in ln and "float64" in ln]
    if len(ok) != 1:
        return run.Result(False, "expected one float64 PASS line for ScaledTanh's 'x'", out)
    return run.Result(True, re.search(r"worst relative error \S+", ok[0]).group(0))


def wrong_case(ctx):
    manifest = _manifest(ctx, "seed-grad-wrong")
    rc, out, err = run.run_graphcc(ctx, ["gradcheck", manifest])
    fail = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    if rc != 1 or len(fail) != 1 or "ScaledTanh" not in fail[0] or "input 'x'" not in fail[0]:
        return run.Result(False, "%s; expected exit 1 and one FAIL line naming ScaledTanh and "
                          "input 'x'" % run.describe_rc(rc), out + err)
    rc2, out2, err2 = run.run_graphcc(ctx, ["test-package", manifest])
    if rc2 != 1 or not any(ln.startswith("FAIL") and "input 'x'" in ln for ln in out2.splitlines()):
        return run.Result(False, "test-package did not fail on the wrong backward (%s)"
                          % run.describe_rc(rc2), out2 + err2)
    return run.Result(True, fail[0][:160])


def _fixture(ctx):
    from onnx import helper, numpy_helper, TensorProto
    d = run.fresh_dir(os.path.join(ctx.fix, "seed-grad", "train"))
    rng = np.random.default_rng(70)
    init = {"W1": rng.standard_normal((6, 5)) * 0.5, "b1": rng.standard_normal(5) * 0.1,
            "W2": rng.standard_normal((5, 3)) * 0.5, "b2": rng.standard_normal(3) * 0.1}
    init = {k: v.astype(np.float32) for k, v in init.items()}
    teacher = rng.standard_normal((6, 3))
    for k in range(STEPS):
        x = rng.standard_normal((BATCH, 6)).astype(np.float32)
        np.save(os.path.join(d, "x_%d.npy" % k), x)
        np.save(os.path.join(d, "labels_%d.npy" % k), np.argmax(x @ teacher, 1).astype(np.int64))
    n = helper.make_node
    nodes = [n("MatMul", ["x", "W1"], ["h0"]), n("Add", ["h0", "b1"], ["h1"]),
             n("ScaledTanh", ["h1"], ["h"], domain="org.glow.train", alpha=ALPHA, beta=BETA),
             n("MatMul", ["h", "W2"], ["o0"]), n("Add", ["o0", "b2"], ["logits"]),
             n("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"])]
    g = helper.make_graph(
        nodes, "seed-train",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 6]),
         helper.make_tensor_value_info("labels", TensorProto.INT64, [BATCH])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(v, k) for k, v in init.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("org.glow.train", 1)])
    m.ir_version = 8
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    return d, init


def _torch_train(d, init):
    import torch
    torch.set_grad_enabled(True)
    p = {k: torch.tensor(v, requires_grad=True) for k, v in init.items()}
    opt = torch.optim.SGD(list(p.values()), lr=0.1, momentum=0.9)
    losses = []
    for k in range(STEPS):
        x = torch.tensor(np.load(os.path.join(d, "x_%d.npy" % k)))
        y = torch.tensor(np.load(os.path.join(d, "labels_%d.npy" % k)))
        opt.zero_grad()
        h = ALPHA * torch.tanh(BETA * (x @ p["W1"] + p["b1"]))
        loss = torch.nn.functional.cross_entropy(h @ p["W2"] + p["b2"], y)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return np.array(losses), {k: v.detach().numpy() for k, v in p.items()}


def train_case(ctx):
    d, init = _fixture(ctx)
    prog = os.path.join(d, "train.gcb")
    rc, _, err = run.run_graphcc(ctx, ["train-program", os.path.join(d, "model.onnx"), "--ops",
                                       _manifest(ctx, "seed-grad"), "--loss", "loss", "--params",
                                       ",".join(PARAMS), "--optimizer", "sgd", "--lr", "0.1",
                                       "--momentum", "0.9", "-o", prog])
    if rc != 0:
        return run.Result(False, "train-program: " + run.describe_rc(rc), err)
    rc, out, err = run.run_graphcc(ctx, ["info", prog])
    if not re.search(r"org\.glow\.train::ScaledTanhGrad -> .*flavour 'scaledTanhGradF32'", out):
        return run.Result(False, "info does not show ScaledTanhGrad bound to its seed kernel",
                          out + err)
    trainer = os.path.join(os.path.dirname(ctx.graphcc), "example-train")
    p = subprocess.run([trainer, prog, d, str(STEPS)], capture_output=True, text=True,
                       env=run.ENV, timeout=run.TIMEOUT)
    if p.returncode != 0:
        return run.Result(False, "example-train: exit %d" % p.returncode, p.stderr)
    got = np.load(os.path.join(d, "losses.npy"))
    want, weights = _torch_train(d, init)
    rel = np.abs(got - want) / np.abs(want)
    if not (rel <= 1e-4).all():
        k = int(np.argmax(rel))
        return run.Result(False, "step %d: loss %.9g, torch %.9g (relative difference %.2e)"
                          % (k, got[k], want[k], rel[k]))
    worst = 0.0
    for name in PARAMS:
        g = np.load(os.path.join(d, "final", name + ".new.npy"))
        dw = float(np.max(np.abs(g - weights[name]) / np.maximum(1.0, np.abs(weights[name]))))
        worst = max(worst, dw)
        if dw > 1e-3:
            return run.Result(False, "final %s differs from torch's by %.2e" % (name, dw))
    return run.Result(True, "losses %.4f -> %.4f; worst step difference %.1e, final weights %.1e"
                      % (want[0], want[-1], rel.max(), worst))


def cases(ctx):
    return [("seed-grad/gradcheck", lambda: gradcheck_case(ctx)),
            ("seed-grad/wrong-backward", lambda: wrong_case(ctx)),
            ("seed-grad/train", lambda: train_case(ctx))]
