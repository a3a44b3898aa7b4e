"""Tensors to and from ONNX TensorProto (.pb) and graphcc's .npy outputs,
for every element type including those ONNX 1.12's numpy_helper lacks
(bfloat16, float8, int4: see dtypes.py)."""
import numpy as np
from onnx import TensorProto, numpy_helper

import dtypes


def to_proto(name, code, values):
    """(name, ONNX type code, carrier values) -> TensorProto."""
    values = np.asarray(values)
    if code == TensorProto.STRING:
        t = TensorProto()
        t.name, t.data_type = name, code
        t.dims.extend(values.shape)
        t.string_data.extend(s.encode("utf-8") if isinstance(s, str) else bytes(s)
                             for s in values.ravel().tolist())
        return t
    if code not in dtypes.SPECIAL:
        return numpy_helper.from_array(values, name)
    t = TensorProto()
    t.name, t.data_type = name, code
    t.dims.extend(values.shape)
    bits = dtypes.encode(values, code, saturate=False)  # exact: inf stays inf
    if code in dtypes.PACKED4:
        t.raw_data = dtypes.pack4(bits).tobytes()
    else:
        t.raw_data = bits.astype("<u2" if code == dtypes.BFLOAT16 else np.uint8).tobytes()
    return t


def from_proto(t):
    """TensorProto -> (type code, carrier values)."""
    code = t.data_type
    if code not in dtypes.SPECIAL:
        a = numpy_helper.to_array(t)
        if code == TensorProto.STRING:
            a = np.array([s.decode("utf-8") if isinstance(s, bytes) else s
                          for s in a.ravel().tolist()], dtype=object).reshape(a.shape)
        return code, a
    shape = tuple(t.dims)
    n = int(np.prod(shape)) if shape else 1
    if code in dtypes.PACKED4:
        bits = dtypes.unpack4(t.raw_data, n) if t.raw_data else \
            np.array(t.int32_data, np.int64).astype(np.uint8)
    elif t.raw_data:
        bits = np.frombuffer(t.raw_data, "<u2" if code == dtypes.BFLOAT16 else np.uint8)
    else:  # int32_data holds the bit patterns, one per element
        bits = np.array(t.int32_data, np.int64).astype(
            np.uint16 if code == dtypes.BFLOAT16 else np.uint8)
    if bits.size != n:
        raise ValueError("tensor %s: %d elements for shape %s" % (t.name, bits.size, shape))
    return code, dtypes.decode(bits, code).reshape(shape)


def read_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return from_proto(t)


def write_pb(path, name, code, values):
    with open(path, "wb") as f:
        f.write(to_proto(name, code, values).SerializeToString())


def from_npy(a, code):
    """An array graphcc wrote as .npy, for an output of ONNX type code ->
    carrier values. The types NumPy lacks come as ml_dtypes writes them:
    void items of the type's size ('<V2' bfloat16, '|V1' float8, int4,
    uint4) holding the bit pattern, int4 one element per byte."""
    if code not in dtypes.SPECIAL:
        if code == TensorProto.STRING:
            if a.dtype.kind != "U":
                raise ValueError("dtype %s, expected strings" % a.dtype)
            return a.astype(object)
        return a
    size = 2 if code == dtypes.BFLOAT16 else 1
    if a.dtype.kind != "V" or a.dtype.itemsize != size:
        raise ValueError("dtype %s, expected %s as void items of %d byte%s (ml_dtypes' .npy)"
                         % (a.dtype.str, dtypes.NAMES[code], size, "s" if size > 1 else ""))
    bits = a.view("<u2" if size == 2 else np.uint8)
    return dtypes.decode(bits, code)
