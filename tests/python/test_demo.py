"""The demo model run from Python gives make demo's output bit for bit (the
graphcc command on the same input), and agrees with PyTorch."""
import os
import subprocess
import sys

import numpy as np

import graphcc
from conftest import ROOT, plugin


def test_demo_matches_the_command_bit_for_bit(tmp_path, graphcc_bin):
    model = os.path.join(ROOT, "models", "demo", "model.onnx")
    subprocess.run([sys.executable, os.path.join(ROOT, "models", "demo", "make_demo.py"),
                    "--reference", str(tmp_path)], check=True, capture_output=True)
    env = dict(os.environ)
    env.pop("GRAPHCC_OPS_PATH", None)
    subprocess.run([graphcc_bin, "run", model, "--ops", plugin("demo"), "--input",
                    "x=%s" % (tmp_path / "x.npy"), "--output-dir", str(tmp_path / "out")],
                   check=True, capture_output=True, env=env)
    cli = np.load(tmp_path / "out" / "y.npy")
    x = np.load(tmp_path / "x.npy")
    s = graphcc.Session(model, ops=[plugin("demo")])
    assert [i.name for i in s.inputs] == ["x"] and [o.name for o in s.outputs] == ["y"]
    y, = s.run({"x": x})
    assert y.dtype == cli.dtype and y.shape == cli.shape
    assert y.tobytes() == cli.tobytes()
    ref = np.load(tmp_path / "y_ref.npy")
    assert np.abs(y - ref).max() <= 1e-4 * np.abs(ref).max()
    gcb = graphcc.compile(model, ops=[plugin("demo")], path=tmp_path / "demo.gcb")
    assert graphcc.Session(gcb).run({"x": x})[0].tobytes() == cli.tobytes()
