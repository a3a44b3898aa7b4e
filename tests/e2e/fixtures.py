"""Small models and broken files for the CLI tests, all built at test time.

Broken models are made with onnx.helper and saved without the checker, so
they are exactly as broken as intended; broken files are cut from good ones.
"""
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

IN, OUT = "pixels", "scores"  # distinctive names, so a message naming them is no accident


def _save(model, path):
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def _model(nodes, inputs, outputs, opsets=None, inits=()):
    g = helper.make_graph(nodes, "e2e", inputs, outputs, list(inits))
    imports = [helper.make_opsetid("", 13)]
    imports += [helper.make_opsetid(d, v) for d, v in (opsets or {}).items()]
    m = helper.make_model(g, opset_imports=imports, producer_name="graphcc-e2e")
    m.ir_version = 8
    return m


def _vi(name, shape=(2, 3), t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, list(shape))


def base_model(path):
    """pixels[2,3] -> Relu (node 'act') -> scores[2,3]; valid."""
    m = _model([helper.make_node("Relu", [IN], [OUT], name="act")], [_vi(IN)], [_vi(OUT)])
    onnx.checker.check_model(m)
    return _save(m, path)


def unsupported_model(path):
    """Three nodes no built-in op serves, around one that is built in."""
    nodes = [
        helper.make_node("FooBar", [IN], ["t1"], name="foo_node"),
        helper.make_node("Baz", ["t1"], ["t2"], name="baz_node", domain="com.x"),
        helper.make_node("Relu", ["t2"], ["t3"], name="builtin_relu"),
        helper.make_node("Relu", ["t3"], [OUT], name="custom_relu", domain="com.x"),
    ]
    m = _model(nodes, [_vi(IN)], [_vi(OUT)], opsets={"com.x": 1})
    return _save(m, path)


def undefined_tensor_model(path):
    nodes = [helper.make_node("Relu", [IN], ["a"], name="fine_node"),
             helper.make_node("Add", ["a", "ghost_tensor"], [OUT], name="uses_ghost")]
    return _save(_model(nodes, [_vi(IN)], [_vi(OUT)]), path)


def cycle_model(path):
    nodes = [helper.make_node("Add", [IN, "loop_b"], ["loop_a"], name="cycle_a"),
             helper.make_node("Relu", ["loop_a"], ["loop_b"], name="cycle_b"),
             helper.make_node("Neg", ["loop_b"], [OUT], name="after_cycle")]
    return _save(_model(nodes, [_vi(IN)], [_vi(OUT)]), path)


def duplicate_producer_model(path):
    nodes = [helper.make_node("Relu", [IN], ["twice_made"], name="maker_one"),
             helper.make_node("Neg", [IN], ["twice_made"], name="maker_two"),
             helper.make_node("Abs", ["twice_made"], [OUT], name="consumer")]
    return _save(_model(nodes, [_vi(IN)], [_vi(OUT)]), path)


def clashing_outputs_model(path):
    """Outputs 'out/a' and 'out_a': both would be written as out_a.npy."""
    nodes = [helper.make_node("Relu", [IN], ["out/a"], name="first"),
             helper.make_node("Neg", [IN], ["out_a"], name="second")]
    return _save(_model(nodes, [_vi(IN)], [_vi("out/a"), _vi("out_a")]), path)


def good_input(path):
    x = np.random.default_rng(7).standard_normal((2, 3)).astype(np.float32)
    np.save(path, x)
    return path


def truncated_copies(src, dstdir, tag):
    """Cuts of src at several points, keeping only those that really are no
    longer a parseable ModelProto (a cut at a field boundary can still parse)."""
    with open(src, "rb") as f:
        data = f.read()
    n = len(data)
    out = []
    for cut in sorted({1, 2, 7, 16, n // 5, n // 3, n // 2, (3 * n) // 4, n - 2, n - 1}):
        if cut <= 0 or cut >= n:
            continue
        p = os.path.join(dstdir, "%s_cut%d.onnx" % (tag, cut))
        with open(p, "wb") as f:
            f.write(data[:cut])
        if _parses(onnx.ModelProto, p):
            os.remove(p)  # a cut at a field boundary still parses: not a test
        else:
            out.append((cut, p))
    return out


def _parses(cls, path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        cls().ParseFromString(data)
        return True
    except Exception:
        return False


def random_bytes(path, n, seed):
    data = np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()
    with open(path, "wb") as f:
        f.write(data)
    return path


def npy_variants(d):
    """name -> path of a broken input for base_model's 'pixels' [2,3] float32."""
    rng = np.random.default_rng(11)
    v = {}
    p = os.path.join(d, "pixels_float64.npy")
    np.save(p, rng.standard_normal((2, 3)))
    v["npy-wrong-dtype"] = p
    p = os.path.join(d, "pixels_int32.npy")
    np.save(p, rng.integers(0, 9, (2, 3)).astype(np.int32))
    v["npy-wrong-dtype-int"] = p
    p = os.path.join(d, "pixels_2x5.npy")
    np.save(p, rng.standard_normal((2, 5)).astype(np.float32))
    v["npy-wrong-shape"] = p
    p = os.path.join(d, "pixels_rank3.npy")
    np.save(p, rng.standard_normal((1, 2, 3)).astype(np.float32))
    v["npy-wrong-rank"] = p
    good = os.path.join(d, "pixels_good.npy")
    np.save(good, rng.standard_normal((2, 3)).astype(np.float32))
    with open(good, "rb") as f:
        data = f.read()
    p = os.path.join(d, "pixels_cut_header.npy")
    with open(p, "wb") as f:
        f.write(data[:30])
    v["npy-truncated-header"] = p
    p = os.path.join(d, "pixels_cut_data.npy")
    with open(p, "wb") as f:
        f.write(data[:-5])
    v["npy-truncated-data"] = p
    v["npy-random-bytes"] = random_bytes(os.path.join(d, "pixels_junk.npy"), 300, 5)
    p = os.path.join(d, "pixels_fortran.npy")
    a = np.asfortranarray(rng.standard_normal((2, 3)).astype(np.float32))
    np.save(p, a)
    with open(p, "rb") as f:
        assert b"'fortran_order': True" in f.read(128)
    v["npy-fortran-order"] = p
    p = os.path.join(d, "pixels_junk.pb")
    v["pb-random-bytes"] = random_bytes(p, 300, 6)
    p = os.path.join(d, "pixels_cut.pb")
    t = numpy_helper.from_array(rng.standard_normal((2, 3)).astype(np.float32), IN)
    with open(p, "wb") as f:
        f.write(t.SerializeToString()[:-3])
    assert not _parses(onnx.TensorProto, p), p
    v["pb-truncated"] = p
    return v
