#!/usr/bin/python3
"""The hostile-input corpus: models, manifests, tensor files and compiled
programs built to hurt a reader. Generated at test time (ONNX models through
onnx.helper and protobuf, never hand-written bytes, except where the bytes are
the point: truncations, bad headers).

cases(work, graphcc) -> list of Case. Each case is one graphcc command that
must exit 1, print a message naming the culprit (every string of `must`
appears in stderr), write nothing to `outputs`, and finish within the time
bound. tests/suites/hostile runs them.
"""
import ctypes
import os
import re
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gcbfile  # noqa: E402

OPSET = [helper.make_opsetid("", 13)]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the last opset of ONNX's default domain graphcc reads (runtime/ops.h)
with open(os.path.join(ROOT, "runtime", "ops.h")) as _f:
    OPSET_MAX = int(re.search(r"#define GC_ONNX_OPSET_MAX (\d+)", _f.read()).group(1))


class Case:
    def __init__(self, name, args, must, outputs):
        self.name, self.args, self.must, self.outputs = name, args, must, outputs


def _vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def _model(nodes, inputs, outputs, inits=(), opsets=None):
    g = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=opsets or OPSET, producer_name="hostile")


def _save(m, path):
    # No checker: these models are wrong on purpose.
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    return path


def _relu(shape=(1, 4)):
    return _model([helper.make_node("Relu", ["x"], ["y"], name="relu0")],
                  [_vi("x", list(shape))], [_vi("y", list(shape))])


def _add_w(w, shape=(2, 3), name="w"):
    """y = x + initializer w (w is a TensorProto built by the caller)."""
    return _model([helper.make_node("Add", ["x", name], ["y"], name="add0")],
                  [_vi("x", list(shape))], [_vi("y", list(shape))], inits=[w])


def _tensor_raw(name, dims, raw, dt=TensorProto.FLOAT):
    t = TensorProto()
    t.name, t.data_type = name, dt
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def model_cases(d):
    """-> [(name, path, must)]: models refused by `graphcc compile`."""
    out = []

    def add(name, m, must=None):
        out.append((name, _save(m, os.path.join(d, name.replace("/", "-") + ".onnx")), must))

    good = _relu()
    good_bytes = good.SerializeToString()
    for frac in (0.1, 0.3, 0.5, 0.8, 0.95):
        n = max(1, int(len(good_bytes) * frac))
        p = os.path.join(d, "truncated-%d.onnx" % int(frac * 100))
        with open(p, "wb") as f:
            f.write(good_bytes[:n])
        out.append(("model/truncated-%d" % int(frac * 100), p, None))
    p = os.path.join(d, "empty.onnx")
    open(p, "wb").close()
    out.append(("model/empty", p, None))
    p = os.path.join(d, "garbage.onnx")
    with open(p, "wb") as f:
        f.write(np.random.default_rng(8).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    out.append(("model/garbage", p, None))

    add("model/oversized-dims", _relu((1 << 31, 1 << 31)))
    add("model/dims-product-overflows", _relu((1 << 40, 1 << 40, 1 << 40)))
    add("model/negative-dims", _relu((1, -5)))
    add("model/rank-100", _relu((1,) * 100))
    add("model/init-negative-dims",
        _add_w(_tensor_raw("w", [2, -3], b"\0" * 24)), ["'w'"])
    add("model/init-dims-overflow",
        _add_w(_tensor_raw("w", [1 << 32, 1 << 32, 1 << 32], b"\0" * 24)), ["'w'"])
    add("model/init-raw-short",
        _add_w(_tensor_raw("w", [2, 3], b"\0" * 20)), ["'w'"])
    add("model/init-raw-long",
        _add_w(_tensor_raw("w", [2, 3], b"\0" * 28)), ["'w'"])
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3], float_data=[1.0, 2.0])
    add("model/init-float-data-short", _add_w(w), ["'w'"])
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1000000, 1000000],
                    float_data=[1.0])
    add("model/init-huge-float-data-short", _add_w(w), ["'w'"])
    add("model/init-bad-dtype",
        _add_w(_tensor_raw("w", [2, 3], b"\0" * 24, dt=999)), ["'w'"])
    add("model/init-undefined-dtype",
        _add_w(_tensor_raw("w", [2, 3], b"\0" * 24, dt=0)), ["'w'"])
    w = helper.make_tensor("w", TensorProto.STRING, [2, 3], [b"a"] * 6)
    add("model/init-string-into-add", _add_w(w), ["add0"])

    # external data
    def ext(name, location, offset=None, length=None, must=None, make_file=True):
        t = TensorProto()
        t.name, t.data_type = "w", TensorProto.FLOAT
        t.dims.extend([2, 3])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", offset), ("length", length)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
        if make_file:
            with open(os.path.join(d, "weights.bin"), "wb") as f:
                f.write(b"\0" * 24)
        add(name, _add_w(t), must or ["'w'"])

    ext("model/external-escapes-dotdot", "../../../../../../etc/passwd")
    ext("model/external-escapes-subdir", "sub/../../../etc/hostname")
    ext("model/external-absolute", "/etc/passwd")
    ext("model/external-missing", "no-such-file.bin")
    ext("model/external-offset-past-end", "weights.bin", offset=1 << 40)
    ext("model/external-length-wrong", "weights.bin", length=7)
    ext("model/external-offset-not-number", "weights.bin", offset="12abc")
    ext("model/external-negative-offset", "weights.bin", offset=-24)
    ext("model/external-empty-location", "")
    ext("model/external-is-directory", ".")
    ext("model/external-dev-zero", "../../../../../../dev/zero")
    os.makedirs(os.path.join(d, "ext-link"), exist_ok=True)
    lnk = os.path.join(d, "ext-link", "evil.bin")
    if not os.path.lexists(lnk):
        os.symlink("/etc/passwd", lnk)
    ext("model/external-symlink-escapes", "ext-link/evil.bin")

    # graph structure
    add("model/cyclic", _model(
        [helper.make_node("Relu", ["b"], ["a"], name="n1"),
         helper.make_node("Relu", ["a"], ["b"], name="n2"),
         helper.make_node("Add", ["x", "b"], ["y"], name="n3")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]))
    add("model/self-referencing", _model(
        [helper.make_node("Add", ["x", "y"], ["y"], name="selfref")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]), ["selfref"])
    add("model/undefined-input", _model(
        [helper.make_node("Relu", ["nowhere"], ["y"], name="lost")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]), ["nowhere"])
    add("model/output-never-produced", _model(
        [helper.make_node("Relu", ["x"], ["z"], name="r")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]), ["'y'"])
    add("model/duplicate-producer", _model(
        [helper.make_node("Relu", ["x"], ["y"], name="p1"),
         helper.make_node("Relu", ["x"], ["y"], name="p2")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]), ["'y'"])
    attrs = {"a%d" % i: i for i in range(100000)}
    add("model/huge-attribute-count", _model(
        [helper.make_node("Relu", ["x"], ["y"], name="many", **attrs)],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]), ["many"])
    add("model/attr-wrong-type", _model(
        [helper.make_node("Transpose", ["x"], ["y"], name="tp", perm=1.5)],
        [_vi("x", [1, 4])], [_vi("y", [4, 1])]), ["tp"])
    add("model/transpose-perm-dup", _model(
        [helper.make_node("Transpose", ["x"], ["y"], name="tp", perm=[0, 0])],
        [_vi("x", [1, 4])], [_vi("y", [4, 1])]), ["tp"])
    add("model/transpose-perm-huge", _model(
        [helper.make_node("Transpose", ["x"], ["y"], name="tp", perm=[0, 1 << 40])],
        [_vi("x", [1, 4])], [_vi("y", [4, 1])]), ["tp"])
    add("model/concat-axis-out-of-range", _model(
        [helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=1 << 40)],
        [_vi("x", [1, 4])], [_vi("y", [2, 4])]), ["cat"])
    add("model/reshape-huge", _model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])],
        inits=[numpy_helper.from_array(np.array([1 << 40, 1 << 40], np.int64), "s")]), ["rs"])
    add("model/reshape-two-minus-one", _model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])],
        inits=[numpy_helper.from_array(np.array([-1, -1], np.int64), "s")]), ["rs"])
    add("model/expand-huge", _model(
        [helper.make_node("Expand", ["x", "s"], ["y"], name="ex")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])],
        inits=[numpy_helper.from_array(np.array([1 << 30, 1 << 30, 4], np.int64), "s")]), ["ex"])
    add("model/constantofshape-huge", _model(
        [helper.make_node("ConstantOfShape", ["s"], ["y"], name="cos")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])],
        inits=[numpy_helper.from_array(np.array([1 << 62, 1 << 62], np.int64), "s")]), ["cos"])
    add("model/matmul-mismatch", _model(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])],
        inits=[numpy_helper.from_array(np.zeros((5, 4), np.float32), "w")]), ["mm"])
    add("model/conv-kernel-larger-than-input", _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="cv")],
        [_vi("x", [1, 1, 2, 2])], [_vi("y", [1, 1, 1, 1])],
        inits=[numpy_helper.from_array(np.zeros((1, 1, 5, 5), np.float32), "w")]), ["cv"])
    add("model/conv-zero-stride", _model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="cv", strides=[0, 0])],
        [_vi("x", [1, 1, 4, 4])], [_vi("y", [1, 1, 4, 4])],
        inits=[numpy_helper.from_array(np.zeros((1, 1, 1, 1), np.float32), "w")]), ["cv"])
    add("model/slice-zero-step", _model(
        [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="sl")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])],
        inits=[numpy_helper.from_array(np.array([0], np.int64), n)
               for n in ("st", "ax")] +
              [numpy_helper.from_array(np.array([4], np.int64), "en"),
               numpy_helper.from_array(np.array([0], np.int64), "sp")]), ["sl"])
    add("model/gather-index-out-of-range", _model(
        [helper.make_node("Gather", ["x", "i"], ["y"], name="ga", axis=1)],
        [_vi("x", [1, 4])], [_vi("y", [1, 1])],
        inits=[numpy_helper.from_array(np.array([1 << 40], np.int64), "i")]), ["ga"])
    add("model/empty-op-type", _model(
        [helper.make_node("", ["x"], ["y"], name="noop")],
        [_vi("x", [1, 4])], [_vi("y", [1, 4])]), ["noop"])
    add("model/input-bad-elem-type", _model(
        [helper.make_node("Relu", ["x"], ["y"], name="r")],
        [_vi("x", [1, 4], t=999)], [_vi("y", [1, 4])]), ["'x'"])
    return out


MANIFEST_OK = """name: Hostile
type: Hostile
domain: org.hostile
version: 1
inputs: [{name: x, maxDims: 4}]
outputs: [{name: y, maxDims: 4}]
functionsLibrary: %s
implementations:
  - {backend: Interpreter, type: k, impl: %s}
"""


def manifest_cases(d):
    out = []

    def add(name, text, must=None):
        p = os.path.join(d, name.replace("/", "-") + ".yaml")
        with open(p, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        out.append(("manifest/" + name, p, must))

    add("empty", "")
    add("not-yaml", "name: [unclosed\n  type: {\n")
    add("binary-garbage", np.random.default_rng(9).integers(0, 256, 2048,
                                                            dtype=np.uint8).tobytes())
    add("scalar-document", "42\n")
    # billion laughs: aliases that expand exponentially
    lol = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        lol.append("a%d: &a%d [%s]" % (i, i, ", ".join(["*a%d" % (i - 1)] * 10)))
    add("billion-laughs", "\n".join(lol) + "\nname: *a9\n")
    add("deep-nesting", "name: " + "[" * 10000 + "]" * 10000 + "\n")
    add("functions-library-escapes",
        MANIFEST_OK % ("../../../../../../../../etc/passwd", "lib/x.so"), ["functionsLibrary"])
    add("functions-library-dev-zero",
        MANIFEST_OK % ("/dev/zero", "/dev/zero"), ["/dev/zero"])
    add("functions-library-directory", MANIFEST_OK % (".", "."))
    add("functions-library-text-file", MANIFEST_OK % ("empty.yaml", "empty.yaml"), ["empty.yaml"])
    add("maxdims-huge", (MANIFEST_OK % ("lib/f.so", "lib/k.so")).replace(
        "maxDims: 4}]\nout", "maxDims: 99999999999999999999}]\nout"), ["maxDims"])
    add("maxdims-negative", (MANIFEST_OK % ("lib/f.so", "lib/k.so")).replace(
        "maxDims: 4}]\nout", "maxDims: -4}]\nout"), ["maxDims"])
    many = "".join("  - {name: x%d, maxDims: 4}\n" % i for i in range(20000))
    add("many-inputs", (MANIFEST_OK % ("lib/f.so", "lib/k.so")).replace(
        "inputs: [{name: x, maxDims: 4}]\n", "inputs:\n" + many))
    add("key-with-nul", b"name: Hos\x00tile\ntype: X\n")
    add("huge-string", "name: " + "A" * (4 << 20) + "\n")
    add("invalid-utf8", b"name: \xff\xfe\xfd\ntype: \xc3\x28\n")
    add("many-documents", "---\n" * 50000)
    add("version-huge", (MANIFEST_OK % ("lib/f.so", "lib/k.so")).replace(
        "version: 1", "version: 1e400"), ["version"])
    return out


def _npy(header_dict, data=b"", magic=b"\x93NUMPY", ver=(1, 0), hlen=None):
    h = header_dict.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * (pad % 64) + b"\n"
    n = len(h) if hlen is None else hlen
    return magic + bytes(ver) + struct.pack("<H", n) + h + data


def tensor_cases(d):
    """-> [(name, path, must)]: input files refused by `graphcc run` of a
    Relu model with input x: float32[1,4]."""
    out = []

    def add(name, data, ext="npy", must=None):
        p = os.path.join(d, name.replace("/", "-") + "." + ext)
        with open(p, "wb") as f:
            f.write(data)
        out.append(("tensor/" + name, p, must))

    ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4), }"
    add("npy-empty", b"")
    add("npy-bad-magic", _npy(ok, b"\0" * 16, magic=b"\x93NUMPZ"))
    add("npy-version-9", _npy(ok, b"\0" * 16, ver=(9, 0)))
    add("npy-header-past-end", _npy(ok, b"", hlen=60000))
    add("npy-truncated-header", _npy(ok, b"\0" * 16)[:20])
    add("npy-data-short", _npy(ok, b"\0" * 15))
    add("npy-shape-overflow", _npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
        b"\0" * 16))
    add("npy-shape-huge", _npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
        b"\0" * 16))
    add("npy-negative-shape", _npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }", b"\0" * 16))
    add("npy-fortran", _npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1, 4), }",
                            b"\0" * 16))
    add("npy-complex", _npy("{'descr': '<c16', 'fortran_order': False, 'shape': (1, 4), }",
                            b"\0" * 64))
    add("npy-object", _npy("{'descr': '|O', 'fortran_order': False, 'shape': (1, 4), }",
                           b"\0" * 32))
    add("npy-rank-1000", _npy("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }"
                              % ("1, " * 1000), b"\0" * 4))
    add("npy-header-not-dict", _npy("[1, 2, 3]", b"\0" * 16))
    add("npy-header-unterminated", _npy("{'descr': '<f4', 'shape': (1, 4", b"\0" * 16))
    add("npy-wrong-dtype-for-model", _npy(
        "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 4), }", b"\0" * 32), must=["'x'"])
    # regression: graphcc run compiled with the file's values before
    # checking its shape, and the kernels read past the smaller buffer
    add("npy-smaller-than-model", _npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }", b"\0" * 8), must=["'x'"])
    add("npy-wrong-shape-for-model", _npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", b"\0" * 32), must=["'x'"])

    def pb(name, t):
        add(name, t.SerializeToString(), ext="pb")

    pb("pb-raw-short", _tensor_raw("x", [1, 4], b"\0" * 15))
    pb("pb-dims-overflow", _tensor_raw("x", [1 << 40, 1 << 40], b"\0" * 16))
    pb("pb-negative-dims", _tensor_raw("x", [-1, 4], b"\0" * 16))
    pb("pb-bad-dtype", _tensor_raw("x", [1, 4], b"\0" * 16, dt=12345))
    # regression (fuzz-pb): an empty string in string_data was copied from NULL
    pb("pb-empty-string", TensorProto(name="x", data_type=TensorProto.STRING, dims=[1, 4],
                                      string_data=[b"", b"a", b"", b"b"]))
    good = _tensor_raw("x", [1, 4], b"\0" * 16).SerializeToString()
    add("pb-truncated", good[:len(good) // 2], ext="pb")
    add("pb-garbage", b"\xff" * 64, ext="pb")
    return out


def string_tensor_cases(d):
    """-> [(name, path, must)]: string input files refused by `graphcc run` of
    a StringNormalizer (UPPER) model with input x: string[2]."""
    out = []

    def add(name, data, ext="npy", must=None):
        p = os.path.join(d, name.replace("/", "-") + "." + ext)
        with open(p, "wb") as f:
            f.write(data)
        out.append(("tensor/" + name, p, must))

    def u32(*cps):
        return struct.pack("<%dI" % len(cps), *cps)

    def hdr(descr, shape="(2,)"):
        return "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)

    add("str-npy-surrogate", _npy(hdr("<U1"), u32(0x61, 0xD800)), must=["0xD800", "element 1"])
    add("str-npy-above-unicode", _npy(hdr("<U1"), u32(0x110000, 0x61)), must=["0x110000"])
    add("str-npy-nul-inside", _npy(hdr("<U3"), u32(0x61, 0, 0x62, 0x63, 0, 0)), must=["NUL"])
    add("str-npy-width-huge", _npy(hdr("<U9999999999999"), u32(0x61, 0x62)),
        must=["too large"])
    add("str-npy-width-overflow", _npy(hdr("<U99999999999999999999"), u32(0x61, 0x62)),
        must=["descr"])
    add("str-npy-width-not-a-number", _npy(hdr("<Uab"), u32(0x61, 0x62)), must=["width"])
    add("str-npy-width-missing", _npy(hdr("<U"), u32(0x61, 0x62)), must=["width"])
    add("str-npy-data-short", _npy(hdr("<U3"), u32(0x61, 0x62, 0x63, 0x64, 0x65)),
        must=["truncated"])
    add("str-npy-big-endian", _npy(hdr(">U1"), struct.pack(">2I", 0x61, 0x62)),
        must=["big-endian"])
    add("str-npy-bytes-nul-inside", _npy(hdr("|S3"), b"a\x00bxyz"), must=["NUL"])
    add("str-npy-object", _npy(hdr("|O"), b"\x00" * 16), must=["pickle"])
    add("str-npy-wrong-shape-for-model", _npy(hdr("<U1", "(3,)"), u32(0x61, 0x62, 0x63)),
        must=["'x'"])

    def pb(name, t, must=None):
        add(name, t.SerializeToString(), ext="pb", must=must)

    def st(strings, dims=(2,)):
        return TensorProto(name="x", data_type=TensorProto.STRING, dims=list(dims),
                           string_data=strings)

    pb("str-pb-nul-inside", st([b"ok", b"a\x00b"]), must=["NUL", "string 1"])
    pb("str-pb-count-short", st([b"ok"]), must=["1 strings"])
    pb("str-pb-count-long", st([b"a", b"b", b"c"]), must=["3 strings"])
    t = st([])
    t.raw_data = b"ab"
    pb("str-pb-raw-data", t, must=["string_data"])
    pb("str-pb-huge-dims", st([b"a", b"b"], dims=(1 << 40, 1 << 40)))
    return out


def _xxh3(buf):
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return lib.XXH3_64bits(bytes(buf), len(buf))


def program_cases(d, good_gcb):
    """-> [(name, path, must)]: .gcb files refused by `graphcc run`, made
    from a good one. Header: file_size @48, meta_offset/size/xxh3 @56/64/72,
    weights_offset/size/xxh3 @80/88/96."""
    out = []
    with open(good_gcb, "rb") as f:
        g = bytearray(f.read())

    def add(name, data):
        p = os.path.join(d, name + ".gcb")
        with open(p, "wb") as f:
            f.write(bytes(data))
        out.append(("program/" + name, p, None))

    def u64(b, off, v):
        b = bytearray(b)
        struct.pack_into("<Q", b, off, v & (2**64 - 1))
        return b

    def rehash(b):
        mo, ms = struct.unpack_from("<QQ", b, 56)
        wo, ws = struct.unpack_from("<QQ", b, 80)
        b = u64(b, 72, _xxh3(b[mo:mo + ms]))
        return u64(b, 96, _xxh3(b[wo:wo + ws]))

    mo, ms = struct.unpack_from("<QQ", g, 56)
    for frac in (0.0, 0.05, 0.5, 0.99):
        add("truncated-%d" % int(frac * 100), g[:int(len(g) * frac)] if frac else g[:64])
    add("bad-magic", b"XXXXXXXX" + g[8:])
    b = bytearray(g)
    struct.pack_into("<I", b, 8, 99)
    add("version-99", b)
    add("meta-flipped", bytes(g[:mo + 10]) + bytes([g[mo + 10] ^ 0xff]) + bytes(g[mo + 11:]))
    add("meta-offset-past-end", u64(g, 56, 1 << 62))
    add("meta-size-overflows", u64(g, 64, 2**64 - 8))
    add("weights-offset-wraps", u64(g, 80, 2**64 - 64))
    add("file-size-lies", u64(g, 48, len(g) * 2))
    # Deeper: a valid checksum over a META whose counts lie.
    add("strtab-size-huge", rehash(bytes(g[:mo]) + struct.pack("<I", 0xfffffff0) + bytes(g[mo + 4:])))
    st = struct.unpack_from("<I", g, mo)[0]
    lib_off = mo + 4 + st
    add("library-count-huge", rehash(bytes(g[:lib_off]) + struct.pack("<I", 0x7fffffff)
                                     + bytes(g[lib_off + 4:])))
    # Every byte of META in turn set to 0xff would be too many runs: a few
    # spread positions, each with a recomputed checksum.
    for k in range(1, 9):
        pos = mo + 4 + st + (ms - 4 - st) * k // 9
        b = bytearray(g)
        b[pos:pos + 4] = b"\xff\xff\xff\x7f"
        add("meta-field-%d" % k, rehash(b))
    return out


def kernel_cases(d):
    """-> [(name, model, {input: npy path}, must)]: sizes and indices that
    reach the kernels as values (inputs, attributes): each product must go
    through the checked multiply, each float -> index conversion must be
    range-checked, each data-sized buffer must obey GRAPHCC_MAX_BYTES."""
    out = []

    def add(name, nodes, feeds, must, opset=13, out_types=None):
        ins = []
        for k, v in feeds.items():
            vi = helper.make_tensor_value_info(
                k, helper.np_dtype_to_tensor_dtype(v.dtype) if hasattr(
                    helper, "np_dtype_to_tensor_dtype") else
                onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype],
                ["%s%d" % (k, i) for i in range(v.ndim)])
            ins.append(vi)
        outs = [helper.make_tensor_value_info(o, t, None)
                for o, t in (out_types or [("y", TensorProto.FLOAT)])]
        m = _model(nodes, ins, outs, opsets=[helper.make_opsetid("", opset)])
        base = os.path.join(d, "kernel-" + name)
        paths = {}
        for k, v in feeds.items():
            paths[k] = "%s-%s.npy" % (base, k)
            np.save(paths[k], v)
        out.append(("kernel/" + name, _save(m, base + ".onnx"), paths, must))

    img = np.ones((1, 4, 2, 2), np.float32)
    add("depthtospace-blocksize-2^32", [helper.make_node(
        "DepthToSpace", ["x"], ["y"], name="d2s", blocksize=1 << 32)], {"x": img}, ["'d2s'"])
    add("spacetodepth-blocksize-2^62", [helper.make_node(
        "SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=1 << 62)],
        {"x": np.ones((1, 1, 0, 0), np.float32)}, ["'s2d'"])
    add("spacetodepth-blocksize-2^32", [helper.make_node(
        "SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=1 << 32)],
        {"x": np.ones((1, 3, 0, 0), np.float32)}, ["'s2d'"])
    x14 = np.ones((1, 4), np.float32)
    add("pad-overflows", [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
        {"x": x14, "p": np.array([0, 0, 1 << 62, 1 << 62], np.int64)}, ["'pad'"])
    add("pad-int64-extremes", [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
        {"x": x14, "p": np.array([0, -(1 << 63), 0, (1 << 63) - 1], np.int64)}, ["'pad'"])
    add("pad-value-1e30-into-int8", [helper.make_node(
        "Pad", ["x"], ["y"], name="pad", pads=[0, 1, 0, 1], value=1e30)],
        {"x": np.ones((1, 4), np.int8)}, ["'pad'", "int8"], opset=2,
        out_types=[("y", TensorProto.INT8)])
    add("pad-value-nan-into-int32", [helper.make_node(
        "Pad", ["x"], ["y"], name="pad", pads=[0, 1, 0, 1], value=float("nan"))],
        {"x": np.ones((1, 4), np.int32)}, ["'pad'"], opset=2,
        out_types=[("y", TensorProto.INT32)])
    seq = [("y", TensorProto.FLOAT)]
    split_nodes = [helper.make_node("SplitToSequence", ["x", "s"], ["q"], name="s2s", axis=1),
                   helper.make_node("ConcatFromSequence", ["q"], ["y"], name="cat", axis=1)]
    add("splittosequence-sizes-wrap", split_nodes,
        {"x": x14, "s": np.array([1 << 62] * 3 + [(1 << 62) + 4], np.int64)}, ["'s2s'"],
        out_types=seq)
    # (no rows: every item is empty, so the wrapped sizes made a wrong
    # result instead of a failure)
    add("splittosequence-sizes-wrap-no-rows", split_nodes,
        {"x": np.ones((0, 4), np.float32),
         "s": np.array([1 << 62] * 3 + [(1 << 62) + 4], np.int64)}, ["'s2s'"], out_types=seq)
    add("split-sizes-wrap-no-rows", [helper.make_node("Split", ["x", "s"], ["y", "z"],
                                                       name="split", axis=1)],
        {"x": np.ones((0, 4), np.float32),
         "s": np.array([(1 << 63) - 1, -(1 << 63) + 5], np.int64)}, ["'split'"],
        out_types=[("y", TensorProto.FLOAT), ("z", TensorProto.FLOAT)])
    add("split-sizes-wrap-positive-no-rows", [helper.make_node(
        "Split", ["x", "s"], ["a", "b", "c", "y"], name="split", axis=1)],
        {"x": np.ones((0, 4), np.float32),
         "s": np.array([1 << 62] * 3 + [(1 << 62) + 4], np.int64)}, ["'split'"],
        out_types=[(o, TensorProto.FLOAT) for o in "abcy"])
    for tag, sc in (("2.5e7", 2.5e7), ("inf", float("inf")), ("1e30", 1e30),
                    ("nan", float("nan"))):
        add("resize-scales-" + tag, [helper.make_node("Resize", ["x", "", "s"], ["y"],
                                                      name="rs")],
            {"x": np.ones((1, 1, 2, 2), np.float32),
             "s": np.array([1, 1, sc, sc], np.float32)}, ["'rs'"])
        add("upsample-scales-" + tag, [helper.make_node("Upsample", ["x", "s"], ["y"],
                                                        name="up")],
            {"x": np.ones((1, 1, 2, 2), np.float32),
             "s": np.array([1, 1, sc, sc], np.float32)}, ["'up'"], opset=9)
    add("resize-sizes-2^40", [helper.make_node("Resize", ["x", "", "", "z"], ["y"], name="rs")],
        {"x": np.ones((1, 1, 2, 2), np.float32),
         "z": np.array([1, 1, 1 << 40, 1 << 40], np.int64)}, ["'rs'"])
    add("tile-repeats-overflow", [helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
        {"x": np.ones((2, 2), np.float32), "r": np.array([1 << 62, 1 << 62], np.int64)},
        ["'tile'"])
    add("tile-repeats-int64-max-no-rows", [helper.make_node("Tile", ["x", "r"], ["y"],
                                                             name="tile")],
        {"x": np.ones((0, 2), np.float32), "r": np.array([(1 << 63) - 1] * 2, np.int64)},
        ["'tile'"])
    add("topk-k-int64-max", [helper.make_node("TopK", ["x", "k"], ["y", "i"], name="tk")],
        {"x": np.ones(3, np.float32), "k": np.array([(1 << 63) - 1], np.int64)}, ["'tk'"],
        out_types=[("y", TensorProto.FLOAT), ("i", TensorProto.INT64)])
    return out


def _cf_model():
    """A program with control flow, two-output nodes and a constant: Loop
    (body: badd, bid, brelu), If (then: trelu; else: eneg), Split, Mul."""
    body = helper.make_graph([
        helper.make_node("Add", ["acc_in", "x"], ["acc_out"], name="badd"),
        helper.make_node("Identity", ["cond_in"], ["cond_out"], name="bid"),
        helper.make_node("Relu", ["acc_out"], ["scan"], name="brelu")],
        "body", [_vi("i", [], TensorProto.INT64), _vi("cond_in", [], TensorProto.BOOL),
                 _vi("acc_in", [1, 4])],
        [_vi("cond_out", [], TensorProto.BOOL), _vi("acc_out", [1, 4]), _vi("scan", [1, 4])])
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["t"], name="trelu")], "then", [],
                             [_vi("t", [1, 4])])
    els = helper.make_graph([helper.make_node("Neg", ["x"], ["e"], name="eneg")], "else", [],
                            [_vi("e", [1, 4])])
    return _model([
        helper.make_node("Loop", ["n", "c", "x"], ["acc", "scans"], name="loop", body=body),
        helper.make_node("If", ["c"], ["z"], name="iff", then_branch=then, else_branch=els),
        helper.make_node("Split", ["x"], ["s1", "s2"], name="split", axis=1),
        helper.make_node("Mul", ["s1", "s2"], ["m"], name="mul")],
        [_vi("x", [1, 4]), _vi("c", [], TensorProto.BOOL)],
        [_vi("acc", [1, 4]), _vi("scans", None), _vi("z", [1, 4]), _vi("m", [1, 2])],
        inits=[numpy_helper.from_array(np.array(3, np.int64), "n")])


def _topk_model():
    """TopK, whose kernel needs scratch memory."""
    return _model([helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")],
                  [_vi("x", [1, 4])], [_vi("v", [1, 2]), _vi("i", [1, 2], TensorProto.INT64)],
                  inits=[numpy_helper.from_array(np.array([2], np.int64), "k")])


def meaning_cases(d, good_gcb, topk_gcb):
    """-> [(name, path, must)]: programs whose checksums are right and whose
    every count and index is in range, but which mean nothing: each must be
    refused at load naming the node or tensor (tests/hostile/gcbfile.py
    edits them). good_gcb is _cf_model compiled, topk_gcb _topk_model."""
    out = []

    def add(name, edit, must, base=good_gcb):
        g = gcbfile.Gcb(base)
        edit(g, g.program)
        out.append(("program/meaning/" + name, g.save(os.path.join(d, name + ".gcb")), must))

    def node(g, name):
        return g.node(name)

    def tensor(g, prog, name):
        return gcbfile.Gcb.tensor(g, prog, name)

    # data flow
    add("reads-own-output", lambda g, P: g.set(node(g, "mul").ins[0], tensor(g, P, "m")),
        ["'mul'", "'m'"])
    add("reads-never-written", lambda g, P: g.set(node(g, "split").outs[1], -1),
        ["'mul'", "'s2'"])
    add("body-reads-later-tensor",
        lambda g, P: g.set(node(g, "badd").ins[0], tensor(g, node(g, "loop").subs[0], "scan")),
        ["'badd'", "'scan'"])
    add("branch-reads-its-output",
        lambda g, P: g.set(node(g, "trelu").ins[0], tensor(g, node(g, "iff").subs[0], "t")),
        ["'trelu'"])
    add("two-outputs-one-tensor", lambda g, P: g.set(node(g, "split").outs[1],
                                                     tensor(g, P, "s1")), ["'split'", "'s1'"])
    add("writes-program-input", lambda g, P: g.set(node(g, "iff").outs[0], tensor(g, P, "x")),
        ["'iff'", "'x'"])
    add("writes-another-nodes-output",
        lambda g, P: g.set(node(g, "mul").outs[0], tensor(g, P, "s1")), ["'mul'", "'s1'"])
    add("inputs-listed-twice", lambda g, P: g.set(P.inputs[1], P.inputs[0].val), ["'x'"])
    add("body-inputs-listed-twice",
        lambda g, P: g.set(node(g, "loop").subs[0].inputs[1],
                           node(g, "loop").subs[0].inputs[2].val), ["'acc_in'"])
    # control flow: the tensors a node passes to its subgraphs
    add("loop-passes-nothing-to-body", lambda g, P: g.set(node(g, "loop").ins[3], -1),
        ["'loop'"])
    add("if-passes-nothing-to-branches", lambda g, P: g.set(node(g, "iff").ins[1], -1),
        ["'iff'"])
    add("loop-passes-int-for-float", lambda g, P: g.set(node(g, "loop").ins[3],
                                                        tensor(g, P, "n")), ["'loop'", "'n'"])
    add("if-as-loop", lambda g, P: g.set(node(g, "iff").op_type, g.string_at["Loop"]),
        ["'iff'"])
    add("loop-as-if", lambda g, P: g.set(node(g, "loop").op_type, g.string_at["If"]),
        ["'loop'"])
    add("body-reads-past-node-inputs", lambda g, P: g.set(node(g, "loop").n_explicit_in, 4),
        ["'loop'"])
    # the memory plan
    add("arena-overlaps-live-output",
        lambda g, P: g.set(P.tensors[tensor(g, P, "s2")].offset,
                           P.tensors[tensor(g, P, "s1")].offset.val), ["'s2'", "'s1'"])
    add("arena-output-over-input",
        lambda g, P: g.set(P.tensors[tensor(g, P, "m")].offset,
                           P.tensors[tensor(g, P, "x")].offset.val), ["'m'", "'x'"])
    add("arena-inputs-overlap",
        lambda g, P: g.set(P.tensors[tensor(g, P, "c")].offset,
                           P.tensors[tensor(g, P, "x")].offset.val), ["'c'", "'x'"])

    def scratch_over_input(g, P):
        g.set(node(g, "topk").scratch_offset, P.tensors[tensor(g, P, "x")].offset.val)
    add("scratch-over-input", scratch_over_input, ["'topk'", "'x'"], base=topk_gcb)
    # GRAPHCC_MAX_BYTES: a patched arena made sessions reserve 15 GiB
    add("arena-15-gib", lambda g, P: g.set(P.arena_bytes, 15 << 30), ["15"])
    add("body-arena-15-gib", lambda g, P: g.set(node(g, "loop").subs[0].arena_bytes, 15 << 30),
        ["15"])
    # opsets
    add("opset-int-max", lambda g, P: g.set(node(g, "mul").opset, 2**31 - 1),
        ["'mul'", "1 to %d" % OPSET_MAX])
    add("opset-negative", lambda g, P: g.set(node(g, "mul").opset, -3), ["'mul'", "-3"])
    add("opset-zero", lambda g, P: g.set(node(g, "badd").opset, 0), ["'badd'"])
    return out


def _opset_max():
    """GC_ONNX_OPSET_MAX of runtime/ops.h: the last opset graphcc implements."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(root, "runtime", "ops.h")) as f:
        return int(re.search(r"#define GC_ONNX_OPSET_MAX (\d+)", f.read()).group(1))


OPSET_MAX = _opset_max()


def opset_cases(d):
    """-> [(name, path, must)]: models importing opsets graphcc does not
    implement."""
    out = []
    relu = helper.make_node("Relu", ["x"], ["y"], name="r")
    for name, opsets, must in (
            ("default-2^40", [helper.make_opsetid("", 1 << 40)],
             ["1099511627776", "1 to %d" % OPSET_MAX]),
            ("default-negative", [helper.make_opsetid("", -3)], ["-3", "1 to %d" % OPSET_MAX]),
            ("default-zero", [helper.make_opsetid("", 0)], ["opset 0"]),
            ("default-above-max", [helper.make_opsetid("", OPSET_MAX + 1)],
             ["opset %d" % (OPSET_MAX + 1), "1 to %d" % OPSET_MAX]),
            ("ai.onnx-2^40", [helper.make_opsetid("ai.onnx", 1 << 40)], ["ai.onnx"]),
            ("custom-2^40", [helper.make_opsetid("", 13),
                             helper.make_opsetid("com.example", 1 << 40)], ["'com.example'"]),
            ("custom-negative", [helper.make_opsetid("", 13),
                                 helper.make_opsetid("com.example", -1)], ["'com.example'"]),
            ("training-2", [helper.make_opsetid("", 13),
                            helper.make_opsetid("ai.onnx.preview.training", 2)],
             ["'ai.onnx.preview.training'", "1 to 1"])):
        m = _model([relu], [_vi("x", [1, 4])], [_vi("y", [1, 4])], opsets=opsets)
        out.append(("model/opset/" + name, _save(m, os.path.join(d, "opset-%s.onnx" % name)), must))
    return out


def _deep_if(depth):
    """A model whose If nests depth deep (each then-branch holds the next
    If). onnx.helper makes each level; the levels are linked in place with
    protobuf's API (helper.make_graph would copy the whole chain per level)."""
    leaf = helper.make_graph([helper.make_node("Relu", ["x"], ["y0"], name="leaf")], "g0", [],
                             [_vi("y0", [1, 4])])
    m = _model([helper.make_node("If", ["c"], ["y"], name="top", else_branch=leaf)],
               [_vi("x", [1, 4]), _vi("c", [], TensorProto.BOOL)], [_vi("y", [1, 4])])
    node = m.graph.node[0]
    for i in range(depth - 1, 0, -1):
        a = node.attribute.add()
        a.name, a.type = "then_branch", onnx.AttributeProto.GRAPH
        a.g.name = "g%d" % i
        a.g.output.add().CopyFrom(_vi("y%d" % i, [1, 4]))
        node = a.g.node.add()
        node.CopyFrom(helper.make_node("If", ["c"], ["y%d" % i], name="if%d" % i,
                                       else_branch=leaf))
    a = node.attribute.add()
    a.name, a.type = "then_branch", onnx.AttributeProto.GRAPH
    a.g.CopyFrom(leaf)
    return m


def _deep_sequence_type(depth):
    """A model whose input type is a sequence of sequences ... depth deep
    (linked in place, as _deep_if)."""
    x = helper.make_value_info("x", helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 4]))
    m = _model([helper.make_node("Identity", ["x"], ["y"], name="id")], [x],
               [helper.make_value_info("y", helper.make_sequence_type_proto(
                   helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 4])))],
               opsets=[helper.make_opsetid("", 13)])
    t = m.graph.input[0].type
    for _ in range(depth):
        t = t.sequence_type.elem_type
    t.tensor_type.elem_type = TensorProto.FLOAT
    return m


def nesting_cases(d):
    """-> [(name, path, must)]: models nested past what the readers take."""
    out = []
    for name, make in (("if-10000-deep", lambda: _deep_if(10000)),
                       ("if-100-deep", lambda: _deep_if(100)),
                       ("sequence-type-20000-deep", lambda: _deep_sequence_type(20000))):
        # onnx.helper builds the nesting; serializing it needs protobuf's
        # recursion limit raised on the python side only
        p = os.path.join(d, "nesting-%s.onnx" % name)
        if not os.path.exists(p):
            sys.setrecursionlimit(max(sys.getrecursionlimit(), 200000))
            _save(make(), p)
        out.append(("model/nesting/" + name, p, ["deep"]))
    return out


def nonregular_cases(d, good_gcb, relu_onnx, plugins):
    """-> [(name, args, must, outputs)]: a FIFO and /dev/zero given where
    graphcc reads a file: each refused before any read (a read of a FIFO
    without a writer waits forever; /dev/zero never ends)."""
    fifo = os.path.join(d, "fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    out_dir = os.path.join(d, "out")
    res = []
    for kind, path in (("fifo", fifo), ("dev-zero", "/dev/zero")):
        what = "FIFO" if kind == "fifo" else "character device"
        res.append(("special/%s/model" % kind, ["compile", path, "-o",
                                                 os.path.join(d, "o.gcb")], [path, what],
                    [os.path.join(d, "o.gcb")]))
        res.append(("special/%s/model-run" % kind, ["run", path, "--output-dir", out_dir],
                    [path, what], [out_dir]))
        res.append(("special/%s/program-info" % kind, ["info", path], [path, what], []))
        res.append(("special/%s/input" % kind, ["run", relu_onnx, "--input", "x=" + path,
                                                 "--output-dir", out_dir], [path, what],
                    [out_dir]))
        res.append(("special/%s/manifest" % kind, ["check", path], [path, what], []))
        res.append(("special/%s/ops" % kind, ["run", relu_onnx, "--ops", path, "--output-dir",
                                               out_dir], [path, what], [out_dir]))
        # external data
        t = TensorProto()
        t.name, t.data_type = "w", TensorProto.FLOAT
        t.dims.extend([2, 3])
        t.data_location = TensorProto.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", os.path.basename(path) if kind == "fifo" else "zero"
        if kind != "fifo":
            lnk = os.path.join(d, "zero")
            if not os.path.lexists(lnk):
                os.symlink("/dev/zero", lnk)
        m = _save(_add_w(t), os.path.join(d, "external-%s.onnx" % kind))
        # (/dev/zero can only be reached through a symlink, which leaves the
        # model's folder: refused for that)
        res.append(("special/%s/external-data" % kind, ["compile", m, "-o",
                                                         os.path.join(d, "o.gcb")],
                    ["'w'"] + ([what] if kind == "fifo" else []), [os.path.join(d, "o.gcb")]))
        # a kernel library
        man = os.path.join(d, "lib-%s.yaml" % kind)
        with open(man, "w") as f:
            f.write(MANIFEST_OK % (path, path))
        res.append(("special/%s/functions-library" % kind, ["check", man], [path], []))
        # a program's pinned library: the pin and the binding name it
        if good_gcb:
            g = gcbfile.Gcb(good_gcb)
            at = g.add_string(path)
            for lib in g.libraries:
                g.set(lib.path, at)
            for n in g.program.nodes:
                if n.custom:
                    g.set(n.custom.library, at)
            p = g.save(os.path.join(d, "pinned-%s.gcb" % kind))
            # (`info` only reads a program: an unreadable pinned library is a
            # warning there, not a refusal -- see security/inspect; running
            # it must refuse)
            res.append(("special/%s/pinned-library-run" % kind,
                        ["run", p, "--output-dir", out_dir], [path, what], [out_dir]))
    return res


def cases(work, graphcc):
    """Builds the corpus under work/corpus; -> [Case]."""
    d = os.path.join(work, "corpus")
    os.makedirs(os.path.join(d, "models"), exist_ok=True)
    os.makedirs(os.path.join(d, "manifests", "lib"), exist_ok=True)
    os.makedirs(os.path.join(d, "tensors"), exist_ok=True)
    os.makedirs(os.path.join(d, "programs"), exist_ok=True)
    out_dir = os.path.join(work, "out")
    gcb_dir = os.path.join(work, "gcb-out")
    os.makedirs(gcb_dir, exist_ok=True)
    gcb_out = os.path.join(gcb_dir, "out.gcb")
    res = []
    for name, path, must in model_cases(os.path.join(d, "models")):
        # A message about one node names the node; any other names the file.
        res.append(Case(name, ["compile", path, "-o", gcb_out],
                        must or [os.path.basename(path)], [gcb_out]))
    for name, path, must in manifest_cases(os.path.join(d, "manifests")):
        res.append(Case(name, ["check", path], [os.path.basename(path)] + (must or []), []))
    relu = _save(_relu(), os.path.join(d, "relu.onnx"))
    for name, path, must in tensor_cases(os.path.join(d, "tensors")):
        res.append(Case(name, ["run", relu, "--input", "x=" + path, "--output-dir", out_dir],
                        [os.path.basename(path)] + (must or []), [out_dir]))
    strnorm = _save(_model([helper.make_node("StringNormalizer", ["x"], ["y"], name="sn0",
                                             case_change_action="UPPER")],
                           [_vi("x", [2], TensorProto.STRING)], [_vi("y", [2], TensorProto.STRING)],
                           opsets=[helper.make_opsetid("", 10)]),
                    os.path.join(d, "strnorm.onnx"))
    for name, path, must in string_tensor_cases(os.path.join(d, "tensors")):
        res.append(Case(name, ["run", strnorm, "--input", "x=" + path, "--output-dir", out_dir],
                        [os.path.basename(path)] + (must or []), [out_dir]))
    # A good program to corrupt: conv + relu with weights.
    m = _model([helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv"),
                helper.make_node("Relu", ["c"], ["y"], name="relu")],
               [_vi("x", [1, 2, 5, 5])], [_vi("y", [1, 3, 3, 3])],
               inits=[numpy_helper.from_array(np.ones((3, 2, 3, 3), np.float32), "w"),
                      numpy_helper.from_array(np.ones(3, np.float32), "b")])
    conv = _save(m, os.path.join(d, "conv.onnx"))
    good = os.path.join(d, "conv.gcb")
    r = subprocess.run([graphcc, "compile", conv, "-o", good], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("cannot compile the base program: " + r.stderr.decode())
    x = os.path.join(d, "x.npy")
    np.save(x, np.ones((1, 2, 5, 5), np.float32))
    for name, path, must in program_cases(os.path.join(d, "programs"), good):
        res.append(Case(name, ["run", path, "--input", "x=" + x, "--output-dir", out_dir],
                        [os.path.basename(path)] + (must or []), [out_dir]))
    # Programs that mean nothing, with valid checksums.
    cf = _save(_cf_model(), os.path.join(d, "cf.onnx"))
    cf_gcb = os.path.join(d, "cf.gcb")
    r = subprocess.run([graphcc, "compile", cf, "-o", cf_gcb], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("cannot compile the control-flow program: " + r.stderr.decode())
    cx = os.path.join(d, "c.npy")
    np.save(cx, np.array(True))
    x4 = os.path.join(d, "x4.npy")
    np.save(x4, np.ones((1, 4), np.float32))
    topk_gcb = os.path.join(d, "topk.gcb")
    r = subprocess.run([graphcc, "compile", _save(_topk_model(), os.path.join(d, "topk.onnx")),
                        "-o", topk_gcb], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("cannot compile the TopK program: " + r.stderr.decode())
    for name, path, must in meaning_cases(os.path.join(d, "programs"), cf_gcb, topk_gcb):
        args = ["run", path, "--input", "x=" + x4, "--output-dir", out_dir]
        if "scratch" not in name:
            args[2:2] = ["--input", "c=" + cx]
        res.append(Case(name, args, [os.path.basename(path)] + must, [out_dir]))
    for name, path, must in opset_cases(os.path.join(d, "models")) + nesting_cases(
            os.path.join(d, "models")):
        res.append(Case(name, ["compile", path, "-o", gcb_out], [os.path.basename(path)] + must,
                        [gcb_out]))
    deep = os.path.join(d, "manifests", "deep-nesting-80000.yaml")
    with open(deep, "w") as f:
        f.write("name: " + "[" * 80000 + "]" * 80000 + "\n")
    res.append(Case("manifest/deep-nesting-80000", ["check", deep],
                    [os.path.basename(deep), "64 deep"], []))
    deep = os.path.join(d, "manifests", "deep-block-nesting.yaml")
    with open(deep, "w") as f:
        f.write("".join("  " * i + "- \n" for i in range(5000)))
    res.append(Case("manifest/deep-block-nesting", ["check", deep],
                    [os.path.basename(deep), "64 deep"], []))
    for name, model, feeds, must in kernel_cases(os.path.join(d, "models")):
        args = ["run", model]
        for k, p in feeds.items():
            args += ["--input", "%s=%s" % (k, p)]
        res.append(Case(name, args + ["--output-dir", out_dir], must, [out_dir]))
    # A FIFO and /dev/zero wherever graphcc reads a file; the program with
    # a pinned library is the demo's (its package ships with graphcc).
    plugins = os.path.join(os.path.dirname(os.path.dirname(graphcc)), "plugins")
    demo_gcb = os.path.join(d, "demo.gcb")
    r = subprocess.run([graphcc, "compile", os.path.join(ROOT, "models", "demo", "model.onnx"),
                        "--ops", os.path.join(plugins, "demo", "demo.yaml"), "-o", demo_gcb],
                       capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("cannot compile the demo program: " + r.stderr.decode())
    os.makedirs(os.path.join(d, "special"), exist_ok=True)
    for name, args, must, outs in nonregular_cases(os.path.join(d, "special"), demo_gcb, relu,
                                                   plugins):
        res.append(Case(name, args, must, outs))
    return res
