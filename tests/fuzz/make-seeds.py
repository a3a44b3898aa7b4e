#!/usr/bin/python3
"""Generates the fuzz targets' seed corpora from the current writers, so
that no committed binary goes stale (the .gcb seeds once stayed at format
version 1 while the reader wanted 2: every input stopped at the version
check).

Usage: make-seeds.py GRAPHCC OUT_DIR

Writes OUT_DIR/seeds/<target>/ (every file must be accepted by its reader:
tests/suites/fuzz-seeds checks that) and OUT_DIR/regress/<target>/ (inputs
that once crashed a reader: refused with a message, never a crash). Models
come from onnx.helper, programs from `GRAPHCC compile`, tensors from NumPy
and onnx.numpy_helper, the manifest is the seed-lenet package's.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "hostile"))
sys.dont_write_bytecode = True
import gcbfile  # noqa: E402


def _vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def _model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "seed", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                             producer_name="graphcc-fuzz-seeds")


def _f32(name, shape, seed):
    return numpy_helper.from_array(
        np.random.default_rng(seed).standard_normal(shape).astype(np.float32), name)


def models():
    """-> {name: ModelProto}: small models covering the op families, control
    flow and sequences; each compiles."""
    m = {}
    m["relu"] = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [1, 4])],
                       [_vi("y", [1, 4])])
    m["conv-gemm"] = _model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Flatten", ["r"], ["f"]),
         helper.make_node("Gemm", ["f", "gw", "gb"], ["y"], transB=1)],
        [_vi("x", [1, 2, 4, 4])], [_vi("y", [1, 3])],
        [_f32("w", (2, 2, 3, 3), 1), _f32("b", (2,), 2), _f32("gw", (3, 32), 3),
         _f32("gb", (3,), 4)])
    m["shape-ops"] = _model(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
         helper.make_node("Concat", ["t", "t"], ["c"], axis=0),
         helper.make_node("Shape", ["c"], ["sh"]),
         helper.make_node("ConstantOfShape", ["sh"], ["z"]),
         helper.make_node("Add", ["c", "z"], ["y"])],
        [_vi("x", [2, 3])], [_vi("y", [6, 2])])
    m["zero-size-init"] = _model(
        [helper.make_node("Concat", ["x", "e"], ["y"], axis=0)], [_vi("x", [2, 3])],
        [_vi("y", [2, 3])], [numpy_helper.from_array(np.zeros((0, 3), np.float32), "e")])
    m["reduce-softmax"] = _model(
        [helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
         helper.make_node("Sub", ["x", "m"], ["d"]),
         helper.make_node("Softmax", ["d"], ["s"], axis=-1),
         helper.make_node("TopK", ["s", "k"], ["v", "i"])],
        [_vi("x", [2, 5])], [_vi("v", [2, 2]), _vi("i", [2, 2], TensorProto.INT64)],
        [numpy_helper.from_array(np.array([2], np.int64), "k")])
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Relu", ["acc_out"], ["scan"])],
        "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL),
                 _vi("acc_in", [1, 4])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", [1, 4]), _vi("scan", [1, 4])])
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                             [_vi("t", [1, 4])])
    els = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                            [_vi("e", [1, 4])])
    m["control-flow"] = _model(
        [helper.make_node("Loop", ["n", "c", "x"], ["acc", "scans"], body=body),
         helper.make_node("If", ["c"], ["z"], then_branch=then, else_branch=els),
         helper.make_node("Split", ["x"], ["s1", "s2"], axis=1),
         helper.make_node("Mul", ["s1", "s2"], ["m"])],
        [_vi("x", [1, 4]), _vi("c", [], TensorProto.BOOL)],
        [_vi("acc", [1, 4]), _vi("scans", None), _vi("z", [1, 4]), _vi("m", [1, 2])],
        [numpy_helper.from_array(np.array(3, np.int64), "n")])
    m["sequence"] = _model(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1),
         helper.make_node("SequenceLength", ["s"], ["n"]),
         helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
        [_vi("x", [2, 3])], [_vi("n", [], TensorProto.INT64), _vi("y", None)])
    m["strings"] = _model(
        [helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action="UPPER")],
        [_vi("x", [2], TensorProto.STRING)], [_vi("y", [2], TensorProto.STRING)], opset=10)
    m["image-regex"] = _image_regex_model()
    return m


def _image_regex_model():
    """ImageDecoder on constant JPEG and PNG bytes (decoded when compiling, so
    the fuzzer mutates what libjpeg and libpng read) and RegexFullMatch on a
    constant string (its pattern compiled by PCRE2)."""
    import io

    from PIL import Image
    px = (np.random.default_rng(7).random((6, 9, 3)) * 255).astype(np.uint8)
    blobs = []
    for fmt in ("JPEG", "PNG"):
        b = io.BytesIO()
        Image.fromarray(px).save(b, format=fmt)
        blobs.append(numpy_helper.from_array(np.frombuffer(b.getvalue(), np.uint8).copy(),
                                             fmt.lower()))
    text = helper.make_tensor("text", TensorProto.STRING, [2], [b"ab12", b"x"])
    return _model(
        [helper.make_node("ImageDecoder", ["jpeg"], ["rgb"]),
         helper.make_node("ImageDecoder", ["png"], ["grey"], pixel_format="Grayscale"),
         helper.make_node("RegexFullMatch", ["text"], ["hit"], pattern=r"[a-z]+\d*")],
        [], [_vi("rgb", None, TensorProto.UINT8), _vi("grey", None, TensorProto.UINT8),
             _vi("hit", [2], TensorProto.BOOL)], blobs + [text], opset=20)


def tensors():
    """-> ({name: npy bytes}, {name: TensorProto})."""
    import io
    npy = {}
    for name, a in (("f32", np.arange(6, dtype=np.float32).reshape(2, 3)),
                    ("i64", np.arange(6, dtype=np.int64).reshape(3, 2)),
                    ("scalar-f64", np.array(2.5)),
                    ("bool", np.array([True, False, True])),
                    ("f16", np.arange(4, dtype=np.float16)),
                    ("bytes", np.array([b"ab", b"c"])),
                    ("unicode", np.array(["graph", "cc"])),
                    ("empty", np.zeros((0, 3), np.float32))):
        b = io.BytesIO()
        np.save(b, a)
        npy[name] = b.getvalue()
    pb = {
        "f32": numpy_helper.from_array(np.arange(4, dtype=np.float32).reshape(2, 2), "x"),
        "i64-typed": TensorProto(name="x", data_type=TensorProto.INT64, dims=[3],
                                 int64_data=[1, -2, 3]),
        "strings": TensorProto(name="x", data_type=TensorProto.STRING, dims=[3],
                               string_data=[b"a", b"", "\u00e9".encode()]),
        "empty-string": TensorProto(data_type=TensorProto.STRING, dims=[1], string_data=[b""]),
        "bool": numpy_helper.from_array(np.array([True, False]), "b"),
    }
    return npy, pb


def _write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    graphcc, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    seeds, regress = os.path.join(out, "seeds"), os.path.join(out, "regress")
    for d in (seeds, regress):
        shutil.rmtree(d, ignore_errors=True)
    for name, m in models().items():
        onnx_path = os.path.join(seeds, "onnx", name + ".onnx")
        _write(onnx_path, m.SerializeToString())
        gcb = os.path.join(seeds, "gcb", name + ".gcb")
        os.makedirs(os.path.dirname(gcb), exist_ok=True)
        r = subprocess.run([graphcc, "compile", onnx_path, "-o", gcb], capture_output=True,
                           text=True)
        if r.returncode != 0:
            print("make-seeds: cannot compile %s: %s" % (name, r.stderr.strip()))
            return 1
    npy, pb = tensors()
    for name, data in npy.items():
        _write(os.path.join(seeds, "npy", name + ".npy"), data)
    for name, t in pb.items():
        _write(os.path.join(seeds, "pb", name + ".pb"), t.SerializeToString())
    man = os.path.join(ROOT, "plugins", "seed-lenet", "seed-lenet.yaml")
    with open(man, "rb") as f:
        _write(os.path.join(seeds, "manifest", "seed-lenet.yaml"), f.read())

    # Regressions: inputs that crashed a reader once.
    # Conv whose weight names no tensor (its input name is a NUL byte).
    m = models()["conv-gemm"]
    m.graph.node[0].input[1] = "\0"
    _write(os.path.join(regress, "onnx", "conv-empty-weight-name.onnx"), m.SerializeToString())
    base = os.path.join(seeds, "gcb", "conv-gemm.gcb")
    g = gcbfile.Gcb(base)
    g.set(g.program.nodes[0].outs[0], -1)
    os.makedirs(os.path.join(regress, "gcb"), exist_ok=True)
    g.save(os.path.join(regress, "gcb", "required-output-empty.gcb"))
    g = gcbfile.Gcb(base)
    x = g.program.tensors[g.program.inputs[0].val]
    g.set(x.dims[2], 0)
    g.set(x.nbytes, 0)
    g.save(os.path.join(regress, "gcb", "conv-zero-dim.gcb"))
    count = sum(len(fs) for _, _, fs in os.walk(out))
    print("make-seeds: %d files in %s" % (count, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
