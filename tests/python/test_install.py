"""The module as Python users install it: a wheel built by pip with the
system's setuptools (no network, no build isolation), installed with pip,
imported from there."""
import os
import subprocess
import sys

from conftest import BUILD, ROOT


def test_wheel_builds_installs_and_imports(tmp_path):
    env = dict(os.environ, GRAPHCC_BUILD=BUILD, PIP_NO_CACHE_DIR="1")
    env.pop("PYTHONPATH", None)
    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation",
                        "--no-deps", "--no-index", "-w", str(wheels), ROOT],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    whl = [w for w in os.listdir(wheels) if w.startswith("graphcc-") and w.endswith(".whl")]
    assert len(whl) == 1, whl
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                        "--target", str(target), str(wheels / whl[0])],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    code = ("import graphcc, numpy as np; print(graphcc.__file__); "
            "from onnx import helper, TensorProto as T; "
            "g = helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', "
            "[helper.make_tensor_value_info('x', T.FLOAT, [2])], "
            "[helper.make_tensor_value_info('y', T.FLOAT, [2])]); "
            "m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]); "
            "print(graphcc.Session(m.SerializeToString()).run({'x': np.array([-1, 2], np.float32)})[0])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(env, PYTHONPATH=str(target)), cwd=str(tmp_path), timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines()[0].startswith(str(target))
    assert r.stdout.splitlines()[1] == "[0. 2.]"
