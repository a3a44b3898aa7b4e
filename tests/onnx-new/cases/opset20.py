"""Opset 20: AffineGrid, ConstantOfShape (float8), DFT with the axis as
input, Gelu, GridSample linear/cubic in N-d, IsInf/IsNaN on the new float
types, ReduceMax/ReduceMin on bool, RegexFullMatch, StringConcat,
StringSplit."""
import math

import numpy as np

from caselib import Case, rng

def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def gelu_ref(x, approximate="none"):
    x64 = x.astype(np.float64)
    if approximate == "tanh":
        y = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)))
    else:
        y = 0.5 * x64 * (1 + np.vectorize(math.erf)(x64 / math.sqrt(2)))
    return y.astype(x.dtype)


def gelu_cases():
    r = rng('gelu_cases')
    x = f32(r, 3, 4) * 3
    yield Case("gelu_default", "Gelu", 20, {"X": x}, ref=lambda X: [gelu_ref(X)])
    yield Case("gelu_tanh", "Gelu", 20, {"X": x}, attrs={"approximate": "tanh"},
               ref=lambda X: [gelu_ref(X, "tanh")])
    yield Case("gelu_none_float64", "Gelu", 20, {"X": x.astype(np.float64)},
               attrs={"approximate": "none"}, ref=lambda X: [gelu_ref(X)], rtol=1e-10, atol=1e-12,
               ort_differs="ONNX Runtime 1.30 has no float64 Erf kernel for Gelu's function body")
    yield Case("gelu_tanh_float64", "Gelu", 20, {"X": x.astype(np.float64)},
               attrs={"approximate": "tanh"}, ref=lambda X: [gelu_ref(X, "tanh")], rtol=1e-6,
               atol=1e-9, note="rtol 1e-6: ONNX Runtime's function body holds the constants "
               "as float32")
    yield Case("gelu_empty", "Gelu", 20, {"X": np.zeros((2, 0), np.float32)},
               ref=lambda X: [X])
    yield Case("gelu_bad_approximate", "Gelu", 20, {"X": x}, attrs={"approximate": "fast"},
               error="attribute 'approximate' is \"fast\"")
    yield Case("gelu_int32", "Gelu", 20, {"X": np.arange(3, dtype=np.int32)}, error="int32")
    yield Case("gelu_at_opset19", "Gelu", 19, {"X": x},
               error="Gelu is an ONNX operator since opset 20")


def reduce_bool_cases():
    r = rng('reduce_bool_cases')
    b = r.random((3, 4)) > 0.5
    b[1] = False
    yield Case("reduce_max20_bool", "ReduceMax", 20, {"X": b, "axes": np.array([1], np.int64)},
               ref=lambda X, a: [X.max(axis=1, keepdims=True)])
    yield Case("reduce_min20_bool_all", "ReduceMin", 20, {"X": b}, attrs={"keepdims": 0},
               ref=lambda X: [np.array(X.min())])


def S(*v):
    return np.array(v, dtype=object)


def split_ref(X, delimiter=None, maxsplit=-1):
    parts = [(s.split(delimiter, maxsplit) if delimiter else s.split(None, maxsplit))
             for s in X.ravel().tolist()]
    width = max([len(p) for p in parts] + [0])
    y = np.array([p + [""] * (width - len(p)) for p in parts], dtype=object)
    return [y.reshape(X.shape + (width,)), np.array([len(p) for p in parts],
                                                    np.int64).reshape(X.shape)]


def string_cases():
    a = np.array([["ab", "", "çé"], ["x y", "1", "z"]], dtype=object)
    yield Case("string_concat_broadcast", "StringConcat", 20, {"X": a, "Y": S("-", "+", "")},
               outputs=["Z"],
               ref=lambda X, Y: [np.array([[x + y for x, y in zip(r, Y)] for r in X],
                                          dtype=object)])
    yield Case("string_concat_scalar", "StringConcat", 20,
               {"X": np.array("pre_", dtype=object), "Y": a}, outputs=["Z"],
               ref=lambda X, Y: [np.array([[str(X) + y for y in r] for r in Y], dtype=object)])
    yield Case("string_concat_empty", "StringConcat", 20,
               {"X": np.zeros((0, 3), dtype=object), "Y": S("a", "b", "c")}, outputs=["Z"],
               ref=lambda X, Y: [np.zeros((0, 3), dtype=object)])
    yield Case("string_concat_int", "StringConcat", 20,
               {"X": S("a"), "Y": np.array([1], np.int64)}, error="int64",
               out_types={"Z": "string"}, outputs=["Z"])
    w = S("  hello  world", "", "one", "x  y z")
    yield Case("string_split_spaces", "StringSplit", 20, {"X": w}, outputs=["Y", "Z"],
               ref=lambda X: split_ref(X))
    yield Case("string_split_spaces_maxsplit", "StringSplit", 20, {"X": w},
               attrs={"maxsplit": 1}, outputs=["Y", "Z"], ref=lambda X: split_ref(X, None, 1))
    yield Case("string_split_tabs_newlines", "StringSplit", 20, {"X": S("a\tb\nc d", "x")},
               outputs=["Y", "Z"], ref=lambda X: split_ref(X),
               ort_differs="ONNX Runtime 1.30 splits on spaces only; ONNX's reference "
               "(str.split) on all whitespace")
    yield Case("string_split_maxsplit_keeps_rest", "StringSplit", 20, {"X": S(" a b  ")},
               attrs={"maxsplit": 1}, outputs=["Y", "Z"], ref=lambda X: split_ref(X, None, 1),
               ort_differs="ONNX Runtime 1.30 strips the rest's trailing spaces; ONNX's "
               "reference (str.split) keeps them")
    yield Case("string_split_delimiter_empty_string", "StringSplit", 20, {"X": S("", "a")},
               attrs={"delimiter": ","}, outputs=["Y", "Z"], ref=lambda X: split_ref(X, ","),
               ort_differs="ONNX Runtime 1.30 gives \"\" no substring; ONNX's reference "
               "(str.split) one empty one")
    c = np.array([["a,b,,c", "x"], [",", "abc"]], dtype=object)
    yield Case("string_split_delimiter", "StringSplit", 20, {"X": c},
               attrs={"delimiter": ","}, outputs=["Y", "Z"], ref=lambda X: split_ref(X, ","))
    yield Case("string_split_multichar_maxsplit", "StringSplit", 20,
               {"X": S("a::b::c::d", "::", "x")}, attrs={"delimiter": "::", "maxsplit": 2},
               outputs=["Y", "Z"], ref=lambda X: split_ref(X, "::", 2))
    yield Case("string_split_float", "StringSplit", 20, {"X": np.zeros(2, np.float32)},
               outputs=["Y", "Z"], out_types={"Y": "string", "Z": "int64"}, error="float32")


def dft_ref(X, length=None, axis=-2, onesided=False, inverse=False):
    r = X.ndim
    ax = axis + r if axis < 0 else axis
    c = X[..., 0].astype(np.float64) + (1j * X[..., 1] if X.shape[-1] == 2 else 0)
    n = length or c.shape[ax]
    y = (np.fft.ifft if inverse else np.fft.fft)(c, n=n, axis=ax)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=ax)
    return [np.stack([y.real, y.imag], -1).astype(X.dtype)]


def dft_cases():
    r = rng("dft_cases")
    real = f32(r, 2, 8, 1)
    cplx = f32(r, 3, 6, 2)
    yield Case("dft20_default_axis", "DFT", 20, {"X": real}, ref=lambda X: dft_ref(X),
               atol=1e-5)
    yield Case("dft20_axis_input_0_complex", "DFT", 20,
               {"X": cplx, "dft_length": None, "axis": np.array(0, np.int64)},
               ref=lambda X, a: dft_ref(X, axis=0), atol=1e-5)
    yield Case("dft20_negative_axis_rank4", "DFT", 20,
               {"X": f32(r, 2, 5, 3, 2), "dft_length": None, "axis": np.array(-3, np.int64)},
               ref=lambda X, a: dft_ref(X, axis=-3), atol=1e-5)
    yield Case("dft20_onesided_length", "DFT", 20,
               {"X": real, "dft_length": np.array(10, np.int64), "axis": np.array(1, np.int64)},
               attrs={"onesided": 1}, ref=lambda X, n, a: dft_ref(X, 10, 1, onesided=True),
               atol=1e-5)
    yield Case("dft20_inverse_truncated", "DFT", 20,
               {"X": cplx, "dft_length": np.array(4, np.int64)}, attrs={"inverse": 1},
               ref=lambda X, n: dft_ref(X, 4, inverse=True), atol=1e-5)
    yield Case("dft20_axis_is_complex_dim", "DFT", 20,
               {"X": real, "dft_length": None, "axis": np.array(-1, np.int64)},
               error="axis -1 is outside")
    yield Case("dft20_axis_attribute", "DFT", 20, {"X": real}, attrs={"axis": 1},
               error="attribute 'axis' is not allowed at opset 20")


def cases():
    yield from dft_cases()
    yield from string_cases()
    yield from gelu_cases()
    yield from reduce_bool_cases()
