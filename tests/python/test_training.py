"""Training programs (graphcc train-program) driven from Python: the session
keeps the parameters and the optimizer's buffers (Session.state), each run
is fed only the batch, and the loss and the parameters match torch.optim
step by step (losses within 1e-4 relative, parameters within
1e-4 * max(1, |torch|): Adam's update divides by sqrt(v), which magnifies
float32 rounding of near-zero gradients to ~1e-5)."""
import subprocess

import graphcc
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import model

STEPS, BATCH = 5, 8
PARAMS = ["W1", "b1", "W2", "b2"]
OPTIMIZERS = {"sgd": ["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9"],
              "adam": ["--optimizer", "adam", "--lr", "0.01"]}


def _init():
    r = np.random.default_rng(11)
    return {"W1": (r.standard_normal((5, 6)) * 0.5).astype(np.float32),
            "b1": (r.standard_normal(5) * 0.1).astype(np.float32),
            "W2": (r.standard_normal((3, 5)) * 0.5).astype(np.float32),
            "b2": (r.standard_normal(3) * 0.1).astype(np.float32)}


def _batches():
    r = np.random.default_rng(12)
    teacher = r.standard_normal((6, 3))
    out = []
    for _ in range(STEPS):
        x = r.standard_normal((BATCH, 6)).astype(np.float32)
        out.append((x, np.argmax(x @ teacher, 1).astype(np.int64)))
    return out


def _program(tmp_path, graphcc_bin, fmt, optimizer):
    n = helper.make_node
    src = model([n("Gemm", ["x", "W1", "b1"], ["h0"], transB=1), n("Tanh", ["h0"], ["h"]),
                 n("Gemm", ["h", "W2", "b2"], ["logits"], transB=1),
                 n("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"])],
                [("x", TensorProto.FLOAT, [BATCH, 6]), ("labels", TensorProto.INT64, [BATCH])],
                [("loss", TensorProto.FLOAT, [])], opsets=(("", 13),),
                initializers=[numpy_helper.from_array(v, k) for k, v in _init().items()])
    path = tmp_path / "model.onnx"
    path.write_bytes(src)
    out = tmp_path / ("train." + fmt)
    subprocess.run([graphcc_bin, "train-program", str(path), "--loss", "loss", "--params",
                    ",".join(PARAMS), "-o", str(out)] + OPTIMIZERS[optimizer], check=True,
                   capture_output=True)
    return str(out)


def _torch_steps(optimizer):
    import torch
    torch.set_grad_enabled(True)
    p = {k: torch.tensor(v, requires_grad=True) for k, v in _init().items()}
    opt = (torch.optim.SGD(list(p.values()), lr=0.1, momentum=0.9) if optimizer == "sgd"
           else torch.optim.Adam(list(p.values()), lr=0.01))
    for x, y in _batches():
        opt.zero_grad()
        h = torch.tanh(torch.tensor(x) @ p["W1"].t() + p["b1"])
        loss = torch.nn.functional.cross_entropy(h @ p["W2"].t() + p["b2"], torch.tensor(y))
        loss.backward()
        opt.step()
        yield float(loss), {k: v.detach().numpy().copy() for k, v in p.items()}


@pytest.mark.parametrize("fmt,optimizer", [("gcb", "sgd"), ("onnx", "adam")])
def test_train_steps_match_torch(tmp_path, graphcc_bin, fmt, optimizer):
    with graphcc.Session(_program(tmp_path, graphcc_bin, fmt, optimizer), threads=1) as s:
        assert [v.name for v in s.inputs] == ["x", "labels"]
        assert {k: s.state[k] for k in PARAMS} == {k: k + ".new" for k in PARAMS}
        want = ["loss"] + [s.state[k] for k in PARAMS]
        for step, ((x, y), (t_loss, t_params)) in enumerate(zip(_batches(),
                                                                _torch_steps(optimizer))):
            loss, *params = s.run({"x": x, "labels": y}, outputs=want)
            assert abs(float(loss) - t_loss) <= 1e-4 * abs(t_loss), step
            for k, got in zip(PARAMS, params):
                t = t_params[k]
                assert np.max(np.abs(got - t) / np.maximum(1, np.abs(t))) <= 1e-4, (step, k)


def test_state_fed_resets_it(tmp_path, graphcc_bin):
    """A state input given in the feeds takes that value: the initial
    parameters again give the first step's loss again."""
    (x, y), = _batches()[:1]
    init = _init()
    with graphcc.Session(_program(tmp_path, graphcc_bin, "gcb", "sgd"), threads=1) as s:
        first = float(s.run({"x": x, "labels": y}, outputs=["loss"])[0])
        second = float(s.run({"x": x, "labels": y}, outputs=["loss"])[0])
        assert second < first  # the params were kept and updated
        again = float(s.run(dict(init, x=x, labels=y), outputs=["loss"])[0])
        assert again == pytest.approx(first, rel=1e-6)
        with pytest.raises(graphcc.InputError, match="no value given for input 'labels'"):
            s.run({"x": x})
