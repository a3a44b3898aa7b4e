"""graphcc.Session: ONNX path/bytes and .gcb, metadata, runs on NumPy
arrays (in place when possible), outputs that own their memory, sequences,
optionals, strings, threads, graphcc.compile; references are NumPy."""
import os
import threading
import time

import numpy as np
import pytest
from onnx import TensorProto, helper

import graphcc
from conftest import identity_model, model, plugin


def relu_model():
    return model([helper.make_node("Relu", ["x"], ["y"])],
                 [("x", TensorProto.FLOAT, ["N", 4])], [("y", TensorProto.FLOAT, ["N", 4])])


def test_import_and_version():
    assert graphcc.__version__.count(".") == 2
    assert issubclass(graphcc.ModelError, graphcc.Error)


def test_onnx_bytes_and_path_agree_with_numpy(tmp_path, rng):
    b = relu_model()
    p = tmp_path / "relu.onnx"
    p.write_bytes(b)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    for m in (b, str(p), p):
        y, = graphcc.Session(m).run({"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_metadata_with_symbolic_dims():
    s = graphcc.Session(relu_model())
    assert s.inputs == [graphcc.ValueInfo("x", "float32", ("N", 4))]
    assert s.inputs[0].dtype == np.float32
    assert [o.name for o in s.outputs] == ["y"]
    assert s.outputs[0].shape[1] == 4


def test_shapes_fix_a_symbolic_dim():
    s = graphcc.Session(relu_model(), shapes={"N": 2})
    y, = s.run({"x": np.ones((2, 4), np.float32)})
    assert y.shape == (2, 4)
    with pytest.raises(graphcc.InputError, match="'x'"):
        s.run({"x": np.ones((3, 4), np.float32)})


def test_dynamic_dims_compile_per_shape(rng):
    s = graphcc.Session(relu_model())
    for n in (1, 5, 1, 7):
        x = rng.standard_normal((n, 4)).astype(np.float32)
        y, = s.run({"x": x})
        np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert len(s._runners) == 3


def test_inputs_in_place_and_copies():
    s = graphcc.Session(identity_model(shape=(64, 64)))
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y, = s.run({"x": x})
    assert s._last_copies == 0
    np.testing.assert_array_equal(y, x)
    y, = s.run({"x": np.asfortranarray(x)})  # not C order: converted
    assert s._last_copies == 1
    np.testing.assert_array_equal(y, x)
    y, = s.run({"x": x[:, ::1]})
    assert s._last_copies == 0
    y, = s.run({"x": x.tolist()})  # a list: converted
    assert s._last_copies == 1
    np.testing.assert_array_equal(y, x)


def test_outputs_own_their_memory():
    s = graphcc.Session(model([helper.make_node("Relu", ["x"], ["y"])],
                              [("x", TensorProto.FLOAT, [4])], [("y", TensorProto.FLOAT, [4])]))
    a, = s.run({"x": np.array([1, 2, 3, 4], np.float32)})
    b, = s.run({"x": np.array([5, 6, 7, 8], np.float32)})
    assert a.flags.owndata and b.flags.owndata and a.base is None
    np.testing.assert_array_equal(a, [1, 2, 3, 4])  # not overwritten by the second run
    x = np.array([1, 2, 3, 4], np.float32)
    y, = graphcc.Session(identity_model(shape=(4,))).run({"x": x})
    y[0] = 99  # an Identity's output is not the input's memory
    assert x[0] == 1


def test_every_numeric_dtype_round_trips():
    types = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
             TensorProto.FLOAT16: np.float16, TensorProto.INT8: np.int8,
             TensorProto.INT16: np.int16, TensorProto.INT32: np.int32,
             TensorProto.INT64: np.int64, TensorProto.UINT8: np.uint8,
             TensorProto.UINT16: np.uint16, TensorProto.UINT32: np.uint32,
             TensorProto.UINT64: np.uint64, TensorProto.BOOL: np.bool_}
    for et, nt in types.items():
        x = (np.arange(6) % 3).astype(nt).reshape(2, 3)
        y, = graphcc.Session(identity_model(et, (2, 3))).run({"x": x})
        assert y.dtype == nt
        np.testing.assert_array_equal(y, x)


def test_strings_in_and_out():
    s = graphcc.Session(identity_model(TensorProto.STRING, (3,)))
    assert s.inputs[0].type == "string"
    for x in (np.array(["a", "bé", ""]), np.array([b"a", "bé".encode(), b""]),
              np.array(["a", "bé", ""], dtype=object)):
        y, = s.run({"x": x})
        assert y.dtype == object and y.tolist() == ["a", "bé", ""]
    with pytest.raises(graphcc.InputError, match="NUL"):
        s.run({"x": np.array(["a\0b", "c", "d"], dtype=object)})


def test_sequences_are_lists(rng):
    seq_out = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    m = model([helper.make_node("SequenceConstruct", ["a", "b"], ["s"])],
              [("a", TensorProto.FLOAT, [2]), ("b", TensorProto.FLOAT, [3])], [seq_out])
    a, b = np.ones(2, np.float32), np.arange(3, dtype=np.float32)
    out, = graphcc.Session(m).run({"a": a, "b": b})
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[1], b)
    seq_in = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    m2 = model([helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)], [seq_in],
               [("y", TensorProto.FLOAT, None)])
    s2 = graphcc.Session(m2)
    assert s2.inputs[0].type.startswith("sequence")
    y, = s2.run({"s": [a, b]})
    np.testing.assert_array_equal(y, np.concatenate([a, b]))
    with pytest.raises(graphcc.InputError, match="list of arrays"):
        s2.run({"s": a})


def test_optionals_are_none():
    opt_in = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    m = model([helper.make_node("OptionalHasElement", ["o"], ["h"])], [opt_in],
              [("h", TensorProto.BOOL, [])], opsets=(("", 18),))
    s = graphcc.Session(m)
    assert s.run({"o": None})[0] == np.bool_(False)
    assert s.run({"o": np.ones(2, np.float32)})[0] == np.bool_(True)
    opt_out = helper.make_value_info("p", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    m2 = model([helper.make_node("Optional", [], ["p"], type=helper.make_tensor_type_proto(
        TensorProto.FLOAT, [2]))], [("x", TensorProto.FLOAT, [2])], [opt_out],
        opsets=(("", 18),))
    assert graphcc.Session(m2).run({"x": np.ones(2, np.float32)}) == [None]


def test_bad_input_raises_the_named_exception():
    s = graphcc.Session(model([helper.make_node("Relu", ["x"], ["y"])],
                              [("x", TensorProto.FLOAT, [2, 3])],
                              [("y", TensorProto.FLOAT, [2, 3])]))
    x = np.ones((2, 3), np.float32)
    with pytest.raises(graphcc.InputError, match="expects float32, got a float64"):
        s.run({"x": x.astype(np.float64)})
    with pytest.raises(graphcc.InputError, match="'x'.*2x3.*3x2|3x2.*2x3"):
        s.run({"x": np.ones((3, 2), np.float32)})
    with pytest.raises(graphcc.InputError, match="no value given for input 'x'"):
        s.run({})
    with pytest.raises(graphcc.InputError, match="no input named 'z'"):
        s.run({"x": x, "z": x})
    with pytest.raises(graphcc.InputError, match="no output named 'q'"):
        s.run({"x": x}, outputs=["q"])
    with pytest.raises(graphcc.InputError, match="float32"):
        s.run({"x": [["a", "b", "c"], ["d", "e", "f"]]})
    assert s.run({"x": x}, outputs=["y"])[0].shape == (2, 3)
    s.close()
    with pytest.raises(graphcc.Error, match="closed"):
        s.run({"x": x})
    with graphcc.Session(identity_model()) as t:
        pass
    with pytest.raises(graphcc.Error, match="closed"):
        t.run({"x": np.ones((1, 4), np.float32)})


def test_bad_models_raise_model_error(tmp_path):
    with pytest.raises(graphcc.ModelError, match="not a valid ONNX model"):
        graphcc.Session(b"\x08\x07garbage")
    with pytest.raises(graphcc.ModelError, match="nope.onnx"):
        graphcc.Session(str(tmp_path / "nope.onnx"))
    m = model([helper.make_node("NoSuchOp", ["x"], ["y"])], [("x", TensorProto.FLOAT, [1])],
              [("y", TensorProto.FLOAT, [1])])
    with pytest.raises(graphcc.ModelError, match="NoSuchOp"):
        graphcc.Session(m)


def test_compile_then_gcb_session(tmp_path, rng):
    path = graphcc.compile(relu_model(), path=tmp_path / "r.gcb", shapes={"N": 3})
    s = graphcc.Session(path)
    assert s.path == os.path.abspath(path)
    assert s.inputs[0].shape == (3, 4)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(s.run({"x": x})[0], np.maximum(x, 0))
    with pytest.raises(graphcc.ModelError, match="compiled program"):
        graphcc.Session(path, ops=[plugin("demo")])
    bad = tmp_path / "bad.gcb"
    data = open(path, "rb").read()
    bad.write_bytes(data[:len(data) // 2])
    with pytest.raises(graphcc.ModelError, match="bad.gcb"):
        graphcc.Session(str(bad))


def matmul_model(n):
    return model([helper.make_node("MatMul", ["a", "b"], ["c"])],
                 [("a", TensorProto.FLOAT, [n, n]), ("b", TensorProto.FLOAT, [n, n])],
                 [("c", TensorProto.FLOAT, [n, n])])


def test_gil_is_released_during_a_run():
    """While a long run goes on in one thread, Python code runs in another."""
    m = model([helper.make_node("Sin", ["x"], ["a"]), helper.make_node("Cos", ["a"], ["b"]),
               helper.make_node("Sin", ["b"], ["y"])], [("x", TensorProto.FLOAT, [1 << 22])],
              [("y", TensorProto.FLOAT, [1 << 22])])
    s = graphcc.Session(m, threads=1)
    x = np.linspace(0, 1, 1 << 22, dtype=np.float32)
    s.run({"x": x})
    t0 = time.perf_counter()
    for _ in range(3):
        s.run({"x": x})
    one = (time.perf_counter() - t0) / 3
    done = threading.Event()

    def work():
        for _ in range(3):
            s.run({"x": x})
        done.set()
    th = threading.Thread(target=work)
    ticks = 0
    th.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    th.join()
    # Holding the GIL for a whole run would leave about one tick per run.
    assert ticks > 20, (ticks, one)


def test_two_sessions_in_two_threads_agree(rng):
    m = matmul_model(96)
    a = rng.standard_normal((96, 96)).astype(np.float32)
    b = rng.standard_normal((96, 96)).astype(np.float32)
    want, = graphcc.Session(m, threads=1).run({"a": a, "b": b})
    results = []

    def work():
        s = graphcc.Session(m, threads=1)
        for _ in range(20):
            results.append(s.run({"a": a, "b": b})[0])
    ths = [threading.Thread(target=work) for _ in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert len(results) == 40
    for r in results:
        np.testing.assert_array_equal(r, want)
    np.testing.assert_allclose(want, a @ b, rtol=1e-4, atol=1e-4)


def test_one_session_shared_by_threads_takes_turns(rng):
    s = graphcc.Session(matmul_model(64), threads=1)
    a = rng.standard_normal((64, 64)).astype(np.float32)
    want = s.run({"a": a, "b": a})[0]
    out = []
    ths = [threading.Thread(target=lambda: out.extend(s.run({"a": a, "b": a})[0]
                                                       for _ in range(10))) for _ in range(3)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert len(out) == 30 and all(np.array_equal(o, want) for o in out)
