"""graphcc.load_package, Operation metadata, eager calls (compiled once per
signature), flavours, debugging options, and every error class; the
references are NumPy."""
import json
import os

import numpy as np
import pytest

import graphcc
from conftest import BUILD, fixture_pkg, plugin


@pytest.fixture(scope="module")
def gcx():
    return graphcc.load_package(plugin("gcx-ops"))


@pytest.fixture(scope="module")
def lenet():
    return graphcc.load_package(plugin("seed-lenet"))


def test_operations_metadata(gcx, lenet):
    assert set(gcx.operations) >= {"PackedLinear", "RowSoftmax", "ClampedAdd"}
    pl = gcx.operations["PackedLinear"]
    assert pl.domain == "org.graphcc.examples" and pl.version == 1 and pl.pure
    assert [i["name"] for i in pl.inputs] == ["x", "W", "b"]
    assert pl.inputs[1]["constant"] and pl.inputs[2]["optional"]
    assert pl.inputs[0]["dtypes"] == ["float32"] and pl.inputs[1]["max_dims"] == 2
    assert [f["type"] for f in pl.flavours] == ["packedLinearF32"]
    ca = gcx.ClampedAdd
    assert [(p["name"], p["datatype"], p["default"]) for p in ca.params] == [
        ("low", "float", 0.0), ("high", "float", 6.0)]
    assert {f["type"] for f in ca.flavours} == {"clampedAddF32", "clampedAddI32"}
    assert ca.flavours[0]["config"] == "nan=error"
    st = lenet.ScaledTanh
    assert st.params[0]["default"] == pytest.approx(1.7159)
    assert not st.flavours[0]["graphcc_interface"]
    assert "ScaledTanh" in dir(lenet)
    with pytest.raises(AttributeError, match="no operation 'Nope'"):
        lenet.Nope


def test_eager_calls_match_numpy(gcx, lenet, rng):
    x = rng.standard_normal((3, 5)).astype(np.float32)
    y = lenet.ScaledTanh(x)
    np.testing.assert_allclose(y, 1.7159 * np.tanh(0.6667 * x), rtol=1e-5, atol=1e-6)
    y = lenet.ScaledTanh(x, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(y, 2.0 * np.tanh(0.5 * x), rtol=1e-5, atol=1e-6)
    a, b = (rng.standard_normal((2, 7)) * 5).astype(np.float32), rng.standard_normal((2, 7)).astype(np.float32)
    np.testing.assert_allclose(gcx.ClampedAdd(a, b, low=-1, high=2), np.clip(a + b, -1, 2),
                               rtol=1e-6)
    ai, bi = np.arange(6, dtype=np.int32).reshape(2, 3), np.full((2, 3), 3, np.int32)
    yi = graphcc.call(gcx, "ClampedAdd", ai, bi)
    assert yi.dtype == np.int32
    np.testing.assert_array_equal(yi, np.clip(ai + bi, 0, 6))
    w, bias = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(gcx.PackedLinear(x, w, bias), x @ w.T + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gcx.PackedLinear(x, w, None), x @ w.T, rtol=1e-5, atol=1e-5)
    sm = gcx.RowSoftmax(x, temperature=2.0)
    e = np.exp((x - x.max(1, keepdims=True)) / 2)
    np.testing.assert_allclose(sm, e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_compiled_once_per_signature(lenet, rng):
    op = lenet.ScaledTanh
    op._cache.clear()
    x = rng.standard_normal((2, 3)).astype(np.float32)
    for _ in range(5):
        op(x)
    assert len(op._cache) == 1
    op(x, alpha=1.0)
    op(rng.standard_normal((4, 3)).astype(np.float32))
    assert len(op._cache) == 3
    op(x)
    assert len(op._cache) == 3


def test_flavour_is_chosen_by_keyword(gcx, lenet, rng):
    x = rng.standard_normal((2, 3)).astype(np.float32)
    assert lenet.ScaledTanh.bound_flavour(x) == "scaledTanhF32"
    a = rng.standard_normal((2, 3)).astype(np.float32)
    assert gcx.ClampedAdd.bound_flavour(a, a) == "clampedAddF32"
    with pytest.raises(graphcc.InputError, match="flavour 'nope'.*clampedAddF32"):
        gcx.ClampedAdd(a, a, flavour="nope")
    flav = graphcc.load_package(fixture_pkg("flavours", "flavours"))
    x = rng.standard_normal((3, 8)).astype(np.float32)
    fwd = flav.RowSum(x, flavour="rowSumForward")
    rev = flav.RowSum(x, flavour="rowSumReverse")
    skew = flav.RowSum(x, flavour="rowSumSkewed")
    np.testing.assert_allclose(fwd, x.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rev, x.sum(1), rtol=1e-5, atol=1e-5)
    assert abs(skew[0] - fwd[0]) > 1e-4 and np.allclose(skew[1:], fwd[1:], atol=1e-5)
    assert flav.RowSum.bound_flavour(x, flavour="rowSumReverse") == "rowSumReverse"


def test_eager_bad_input(gcx, lenet):
    x = np.ones((2, 3), np.float32)
    with pytest.raises(graphcc.InputError, match="no param 'alpah'"):
        lenet.ScaledTanh(x, alpah=1.0)
    with pytest.raises(graphcc.InputError, match="takes 1 inputs"):
        lenet.ScaledTanh(x, x)
    with pytest.raises(graphcc.InputError, match="float64|dtype|type"):
        gcx.RowSoftmax(x.astype(np.float64))
    with pytest.raises(graphcc.InputError, match="maxDims|rank"):
        gcx.RowSoftmax(np.ones((1,) * 5, np.float32))


def test_kernel_failure_is_a_kernel_error(gcx):
    a = np.array([1.0, np.nan], np.float32)
    with pytest.raises(graphcc.KernelError, match="nan=error") as e:
        gcx.ClampedAdd(a, a)
    assert e.value.reason == "kernel failed"


def test_package_errors():
    with pytest.raises(graphcc.PackageError, match="missing-kernel.yaml|symbol"):
        graphcc.load_package(fixture_pkg("packages/missing-kernel", "missing-kernel"))
    with pytest.raises(graphcc.PackageError, match="nope.yaml"):
        graphcc.load_package("/nonexistent/nope.yaml")
    with pytest.raises(graphcc.PackageError, match="maxDim"):
        graphcc.load_package(fixture_pkg("packages/near-miss-key", "near-miss-key"))


def test_debug_options_on_eager_calls(tmp_path, rng):
    dbg = graphcc.load_package(fixture_pkg("debug/buggy", "buggy"))
    x = rng.standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(dbg.Scale(x, factor=3.0, guard=True), 3 * x, rtol=1e-6)
    trace = tmp_path / "t.txt"
    prof = tmp_path / "p.json"
    dbg.Scale(x, trace=str(trace), profile=str(prof))
    assert "Scale" in trace.read_text()
    events = json.loads(prof.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert any(e.get("ph") == "X" for e in events)
    with pytest.raises(graphcc.KernelError, match="writePastEnd"):
        dbg.Buggy(x, bug="writePastEnd", guard=True)
    with pytest.raises(graphcc.KernelError, match="NaN|nanAt"):
        dbg.Buggy(x, bug="nanAt", index=1, check_nan=True)
    with pytest.raises(TypeError, match="unknown option"):
        graphcc.Session(os.path.join(BUILD, "..", "models", "demo", "model.onnx"), tracee=True)


def test_check_tensors_and_dump_weights(tmp_path):
    """check_tensors=True blames the node whose overrun hit a neighbouring
    tensor (tests/kbugs' Copy 'overrunOne'), not the Add that reads it next;
    dump_weights=True adds the constants to dump_dir."""
    from onnx import TensorProto, helper
    from conftest import model
    F = TensorProto.FLOAT
    nodes = [helper.make_node("ReduceSum", ["x"], ["a"], name="sum", keepdims=1),
             helper.make_node("Neg", ["x"], ["c"], name="neg"),
             helper.make_node("Copy", ["c"], ["b"], name="culprit", domain="test.kbugs",
                              flavour="overrunOne"),
             helper.make_node("Add", ["b", "a"], ["y"], name="add")]
    m = model(nodes, [("x", F, [1, 32])], [("y", F, [1, 32])],
              opsets=(("", 13), ("test.kbugs", 1)))
    x = (np.arange(32, dtype=np.float32) - 8).reshape(1, 32) / 4
    ops = fixture_pkg("kbugs/kbugs", "kbugs")
    with pytest.raises(graphcc.KernelError, match="node 'culprit'.*changed tensor 'a'"):
        graphcc.Session(m, ops=ops, check_tensors=True).run({"x": x})
    # the correct flavour, each tensor in its own block: the arena's result
    nodes[2] = helper.make_node("Copy", ["c"], ["b"], name="culprit", domain="test.kbugs",
                                flavour="copyExact")
    m1 = model(nodes, [("x", F, [1, 32])], [("y", F, [1, 32])],
               opsets=(("", 13), ("test.kbugs", 1)))
    y = graphcc.Session(m1, ops=ops, no_arena=True, guard=True).run({"x": x})[0]
    np.testing.assert_allclose(y, -x + x.sum(axis=1, keepdims=True), rtol=1e-6)
    w = helper.make_tensor("w", F, [1, 32], np.ones(32, np.float32).tolist())
    m2 = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [("x", F, [1, 32])],
               [("y", F, [1, 32])], initializers=[w])
    graphcc.Session(m2, dump_dir=str(tmp_path / "d"), dump_weights=True).run({"x": x})
    np.testing.assert_array_equal(np.load(tmp_path / "d" / "w.npy"), np.ones((1, 32)))
