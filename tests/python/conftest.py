"""Fixtures of the Python module's pytest suite (tests/suites/python runs it
with PYTHONPATH=<build>/python and GRAPHCC_BUILD=<build>)."""
import os

import graphcc  # noqa: F401  before NumPy loads OpenBLAS (see docs/python.md, BLAS)
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("GRAPHCC_BUILD", os.path.join(ROOT, "build")))


@pytest.fixture(scope="session")
def build():
    return BUILD


@pytest.fixture(scope="session")
def graphcc_bin():
    return os.path.join(BUILD, "bin", "graphcc")


def plugin(name):
    return os.path.join(BUILD, "plugins", name, name + ".yaml")


def fixture_pkg(folder, name):
    return os.path.join(BUILD, "tests", folder, name + ".yaml")


def model(nodes, inputs, outputs, opsets=(("", 17),), initializers=()):
    """An ONNX model (bytes) from onnx.helper pieces; inputs/outputs are
    (name, elem_type, shape) or ready ValueInfoProtos."""
    def vi(x):
        return x if isinstance(x, onnx.ValueInfoProto) else helper.make_tensor_value_info(*x)
    g = helper.make_graph(nodes, "g", [vi(i) for i in inputs], [vi(o) for o in outputs],
                          initializer=list(initializers))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m.SerializeToString()


def identity_model(dtype=TensorProto.FLOAT, shape=(1, 4)):
    return model([helper.make_node("Identity", ["x"], ["y"])], [("x", dtype, list(shape))],
                 [("y", dtype, list(shape))])


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
