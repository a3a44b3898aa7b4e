"""graphcc.python_kernel: a NumPy function as a whole operation (with a
shape function) and as one more flavour of a C operation, in sessions and
eager calls; compare_flavours cross-checks the C kernels against it."""
import re

import numpy as np
import pytest
from onnx import TensorProto, helper

import graphcc
from conftest import fixture_pkg, model, plugin


def swish(x, beta=1.0):
    return x / (1 + np.exp(-beta * x))


def test_whole_operation_in_python(rng, tmp_path):
    pkg = graphcc.python_kernel("my.ops", "Swish", swish, params={"beta": 1.0})
    op = pkg.Swish
    assert [f["type"] for f in op.flavours] == ["python"] and op.params[0]["default"] == 1.0
    x = rng.standard_normal((3, 5)).astype(np.float32)
    np.testing.assert_allclose(op(x, beta=2.0), swish(x, 2.0), rtol=1e-6)
    m = model([helper.make_node("Swish", ["x"], ["s"], domain="my.ops", beta=0.5),
               helper.make_node("Relu", ["s"], ["y"])],
              [("x", TensorProto.FLOAT, [3, 5])], [("y", TensorProto.FLOAT, [3, 5])],
              opsets=(("", 17), ("my.ops", 1)))
    s = graphcc.Session(m, ops=[pkg])
    np.testing.assert_allclose(s.run({"x": x})[0], np.maximum(swish(x, 0.5), 0), rtol=1e-6)
    with pytest.raises(graphcc.ModelError, match="in-process library inprocess:python"):
        graphcc.compile(m, ops=[pkg], path=tmp_path / "p.gcb")


def test_shape_function_and_verify(rng):
    def infer(a, b):
        return (a.shape[0], b.shape[1]), a.dtype

    def verify(a, b):
        if a.shape[1] != b.shape[0]:
            raise ValueError("inner dims %d and %d differ" % (a.shape[1], b.shape[0]))
        return True
    pkg = graphcc.python_kernel("my.ops", "Mm", lambda a, b: a @ b, infer=infer, verify=verify,
                                inputs=("a", "b"), outputs=("c",))
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((3, 4))
    np.testing.assert_allclose(pkg.Mm(a, b), a @ b)
    assert pkg.Mm(a, b).dtype == np.float64
    with pytest.raises(graphcc.InputError, match="inner dims 3 and 2 differ"):
        pkg.Mm(a, a)


def test_python_errors_become_kernel_errors(rng):
    pkg = graphcc.python_kernel("my.ops", "Bad", lambda x: 1 / 0)
    with pytest.raises(graphcc.KernelError, match="ZeroDivisionError"):
        pkg.Bad(np.ones(3, np.float32))
    pkg = graphcc.python_kernel("my.ops", "BadShape", lambda x: x[:1])
    with pytest.raises(graphcc.KernelError, match=r"shape \(1,\); shape inference said \(3,\)"):
        pkg.BadShape(np.ones(3, np.float32))


def test_flavour_of_a_c_operation_and_compare_flavours(rng):
    lenet = graphcc.load_package(plugin("seed-lenet"))
    proto = graphcc.python_kernel(
        "org.glow.lenet", "ScaledTanh", lambda x, alpha, beta: alpha * np.tanh(beta * x),
        package=lenet, flavour="numpy")
    op = proto.ScaledTanh
    assert [f["type"] for f in op.flavours] == ["scaledTanhF32", "scaledTanhF16", "numpy"]
    x = rng.standard_normal((2, 6)).astype(np.float32)
    np.testing.assert_allclose(op(x, flavour="numpy"), op(x), rtol=1e-5, atol=1e-6)
    assert op.bound_flavour(x) == "scaledTanhF32"  # the package's selection still decides
    m = model([helper.make_node("ScaledTanh", ["x"], ["y"], domain="org.glow.lenet")],
              [("x", TensorProto.FLOAT, [2, 6])], [("y", TensorProto.FLOAT, [2, 6])],
              opsets=(("", 17), ("org.glow.lenet", 1)))
    s = graphcc.Session(m, ops=[proto], compare_flavours=True)
    y, = s.run({"x": x})
    cmp = s.last_comparison
    assert cmp["custom_nodes"] == 1 and cmp["compared"] == 1, cmp
    # The pair that matters: the selected C kernel against the prototype.
    # (scaledTanhF16 reads float32 input as float16 -- seed-lenet's own
    # flavour, not for this node -- and is the worst pair.)
    pair = re.search(r"scaledTanhF32 vs numpy: max abs ([0-9.e+-]+)", cmp["report"])
    assert pair and float(pair.group(1)) < 1e-5, cmp["report"]
    # A prototype that is wrong on purpose: the comparison names the pair
    # (RowSum's C flavours agree to 1e-3).
    flav = graphcc.load_package(fixture_pkg("flavours", "flavours"))
    wrong = graphcc.python_kernel(
        "test.flavours", "RowSum", lambda x, scale: scale * x.sum(1) + np.float32(0.25),
        package=flav, flavour="wrong")
    m = model([helper.make_node("RowSum", ["x"], ["y"], domain="test.flavours")],
              [("x", TensorProto.FLOAT, [2, 6])], [("y", TensorProto.FLOAT, [2])],
              opsets=(("", 17), ("test.flavours", 1)))
    cmp = graphcc.Session(m, ops=[wrong]).compare_flavours({"x": x})
    assert cmp["compared"] == 1 and abs(cmp["max_abs"] - 0.25) < 1e-3, cmp
    assert "wrong" in (cmp["flavour_a"], cmp["flavour_b"]), cmp


def test_prototype_flavour_in_a_package_with_state_and_scratch(rng):
    flav = graphcc.load_package(fixture_pkg("flavours", "flavours"))
    proto = graphcc.python_kernel("test.flavours", "RowSum",
                                  lambda x, scale: (scale * x.astype(np.float64).sum(1)).astype(np.float32),
                                  package=flav, flavour="numpyRowSum")
    x = rng.standard_normal((4, 9)).astype(np.float32)
    want = x.astype(np.float64).sum(1)
    for f in ("rowSumForward", "rowSumReverse", "numpyRowSum"):
        np.testing.assert_allclose(proto.RowSum(x, flavour=f), want, rtol=1e-5, atol=1e-5)


def test_several_outputs_and_an_optional_input(rng):
    def infer(x, lo):
        return [((x.shape[0],), x.dtype), ((x.shape[0],), np.int64)]

    def kernel(x, lo):
        m = x.max(1) if lo is None else np.maximum(x.max(1), lo)
        return m, x.argmax(1)
    pkg = graphcc.python_kernel("my.ops", "RowMax", kernel, infer=infer,
                                inputs=("x", {"name": "lo", "optional": True}),
                                outputs=("m", "i"))
    x = rng.standard_normal((4, 6)).astype(np.float32)
    m, i = pkg.RowMax(x, None)
    np.testing.assert_array_equal(m, x.max(1))
    assert i.dtype == np.int64 and (i == x.argmax(1)).all()
    m, _ = pkg.RowMax(x, np.full(4, 10, np.float32))
    assert (m == 10).all()
