"""Element types NumPy lacks, in and out of `graphcc run` (README.md,
"Running a model"): bfloat16, the float8 types, int4 and uint4 read from
.npy (ml_dtypes' void items, ml_dtypes' type names, and uint8 bits) and
from .pb (int4 packed two per byte), written as .npy void items; each
checked bit for bit through an Identity model. Run by run.py."""
import os
import subprocess

import numpy as np
import onnx
from onnx import helper

import dtypes
import tensorio

TYPES = ("bfloat16", "float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "int4",
         "uint4", "float4e2m1")


def npy_with_descr(path, descr, bits, shape):
    """A .npy whose header names descr (as ml_dtypes' np.save, or a header
    written with str(dtype)), holding the raw items."""
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": descr, "fortran_order": False,
                                                 "shape": shape})
        f.write(np.ascontiguousarray(bits).tobytes())


def values_for(code):
    if code in (dtypes.INT4, dtypes.UINT4):
        lo = -8 if code == dtypes.INT4 else 0
        return (np.arange(15) % 16 + lo).astype(dtypes.CARRIER[code]).reshape(3, 5)
    if code == dtypes.BFLOAT16:
        return dtypes.round_trip(np.linspace(-3, 3, 15, dtype=np.float32), code).reshape(3, 5)
    if code == dtypes.FLOAT4E2M1:  # every code but -6
        return dtypes.decode(np.arange(15, dtype=np.uint8), code).reshape(3, 5)
    v = dtypes.decode(np.arange(0, 256, 17, dtype=np.uint8)[:15], code)
    return v.reshape(3, 5)


def item_bits(values, code):
    """The one item per element graphcc reads and writes (int4: the value in
    a byte, sign-extended)."""
    if code in (dtypes.INT4, dtypes.UINT4):
        return values.astype(np.int8 if code == dtypes.INT4 else np.uint8).view(np.uint8)
    return dtypes.encode(values, code, saturate=False)


def run_checks(graphcc, work):
    """-> [(name, reason or None)]"""
    results = []
    os.makedirs(work, exist_ok=True)
    for name in TYPES:
        code = dtypes.CODES[name]
        vals = values_for(code)
        bits = item_bits(vals, code)
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "types",
                              [helper.make_tensor_value_info("x", code, vals.shape)],
                              [helper.make_tensor_value_info("y", code, vals.shape)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid(
            "", 23 if code == dtypes.FLOAT4E2M1 else 20)])
        model = os.path.join(work, "%s.onnx" % name)
        onnx.save(m, model)
        size = 2 if code == dtypes.BFLOAT16 else 1
        files = {}
        void = os.path.join(work, "%s-void.npy" % name)
        npy_with_descr(void, "<V2" if size == 2 else "|V1", bits, vals.shape)
        files["npy void"] = void
        mlname = {"float8e4m3fn": "float8_e4m3fn", "float8e4m3fnuz": "float8_e4m3fnuz",
                  "float8e5m2": "float8_e5m2", "float8e5m2fnuz": "float8_e5m2fnuz",
                  "float4e2m1": "float4_e2m1fn"}.get(name, name)
        named = os.path.join(work, "%s-named.npy" % name)
        npy_with_descr(named, mlname, bits, vals.shape)
        files["npy ml_dtypes name"] = named
        if size == 1:
            u8 = os.path.join(work, "%s-u8.npy" % name)
            np.save(u8, bits.astype(np.uint8))
            files["npy uint8 bits"] = u8
        pb = os.path.join(work, "%s.pb" % name)
        tensorio.write_pb(pb, "x", code, vals)
        files["pb"] = pb
        for how, path in files.items():
            out = os.path.join(work, "out-%s" % name)
            p = subprocess.run([graphcc, "run", model, "--input", "x=" + path, "--output-dir", out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            label = "types/%s from %s" % (name, how)
            if p.returncode:
                results.append((label, "exit %d: %s" % (p.returncode, p.stderr.decode()[:200])))
                continue
            got = np.load(os.path.join(out, "y.npy"))
            if got.dtype.kind != "V" or got.dtype.itemsize != size:
                results.append((label, "wrote %s, expected void items of %d byte(s)" % (
                    got.dtype.str, size)))
                continue
            gb = got.view("<u2" if size == 2 else np.uint8)
            results.append((label, None if np.array_equal(gb, bits) else
                            "bits %s, expected %s" % (gb.ravel()[:6], bits.ravel()[:6])))
    # an int4 file whose byte is not an int4 value is refused, named
    bad = os.path.join(work, "int4-bad.npy")
    npy_with_descr(bad, "|V1", np.array([3, 0x40], np.uint8), (2,))
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "types",
                          [helper.make_tensor_value_info("x", dtypes.INT4, [2])],
                          [helper.make_tensor_value_info("y", dtypes.INT4, [2])])
    model = os.path.join(work, "int4-bad.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)]), model)
    p = subprocess.run([graphcc, "run", model, "--input", "x=" + bad, "--output-dir",
                        os.path.join(work, "out-bad")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode()
    results.append(("types/int4 byte out of range refused", None if p.returncode == 1 and
                    "element 1 (byte 64) is not an int4 value" in err else
                    "exit %d: %s" % (p.returncode, err[:200])))
    return results
