"""What a case file (tests/onnx-new/cases/*.py) builds: Case objects, one
single-op model each, with its inputs, its NumPy reference and the
tolerance; see README.md for the whole flow.

A case file defines cases() yielding Case(...):

    Case("bitwise_and_broadcast", "BitwiseAnd", 18,
         inputs={"A": a, "B": b},            # name -> array (or In(array, type))
         ref=lambda A, B: [A & B],           # the independent reference
         attrs={...}, outputs=["C"], rtol=..., atol=...)

A case that must be refused gives error="words graphcc's message must
contain" instead of ref; ONNX Runtime must refuse it too. Element types
NumPy lacks travel as In(values, "bfloat16" | "float8e4m3fn" | ...) for
inputs and out_types={"Y": "float8e5m2"} for outputs, values in the
carrier type of dtypes.py (float32, int8/uint8 for int4/uint4).
"""
import zlib

import numpy as np
from onnx import TensorProto, helper

import dtypes

NP_TO_ONNX = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3,
              np.dtype(np.uint16): 4, np.dtype(np.int16): 5, np.dtype(np.int32): 6,
              np.dtype(np.int64): 7, np.dtype(np.bool_): 9, np.dtype(np.float16): 10,
              np.dtype(np.float64): 11, np.dtype(np.uint32): 12, np.dtype(np.uint64): 13}


def rng(key):
    """A NumPy generator seeded from key (a group of cases' name), so that
    adding cases elsewhere leaves the stored data of a group unchanged."""
    return np.random.default_rng(zlib.crc32(key.encode()))


class In:
    """An input of an element type NumPy lacks (values in the carrier type),
    or a string tensor (type "string", values a NumPy array of str)."""

    def __init__(self, values, type_name):
        self.code = dtypes.CODES[type_name]
        carrier = dtypes.CARRIER.get(self.code, object)
        self.values = np.asarray(values, dtype=carrier)
        if self.code in dtypes.SPECIAL:  # as the type holds them
            self.values = dtypes.round_trip(self.values, self.code, saturate=False)


def type_code(value):
    if isinstance(value, In):
        return value.code
    a = np.asarray(value)
    if a.dtype.kind in "UO":
        return TensorProto.STRING
    if a.dtype not in NP_TO_ONNX:
        raise ValueError("no ONNX type for NumPy %s" % a.dtype)
    return NP_TO_ONNX[a.dtype]


def values_of(value):
    return value.values if isinstance(value, In) else np.asarray(value)


# Opset of the default domain -> the IR version ONNX released it with.
IR_VERSION = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11}


class Case:
    def __init__(self, name, op, opset, inputs, ref=None, attrs=None, outputs=("Y",),
                 out_types=None, rtol=1e-4, atol=1e-6, error=None, domain="", note="",
                 ort_differs=None, declined=False):
        """ort_differs: when ONNX Runtime 1.30 is known to disagree with the
        spec (and NumPy) on this case, the reason; the generator then
        requires the disagreement instead of agreement and keeps NumPy's
        values. declined (with error): graphcc refuses what the spec allows
        and ONNX Runtime runs; the message must name what is declined.
        Empty inputs (a name mapped to None) become absent optional
        inputs (the node gets "")."""
        if (ref is None) == (error is None):
            raise ValueError("case %s: give exactly one of ref and error" % name)
        self.name, self.op, self.opset, self.domain = name, op, opset, domain
        self.inputs = dict(inputs)
        self.ref, self.attrs, self.outputs = ref, dict(attrs or {}), list(outputs)
        self.out_types = {k: dtypes.CODES[v] for k, v in (out_types or {}).items()}
        self.rtol, self.atol, self.error, self.note = rtol, atol, error, note
        self.ort_differs, self.declined = ort_differs, declined

    def feeds(self):
        """The graph inputs: [(name, value)] without the absent ones."""
        return [(k, v) for k, v in self.inputs.items() if v is not None]

    def expected(self):
        """-> [(name, type code, carrier values)] from the reference."""
        vals = [values_of(v) for _, v in self.feeds()]
        got = self.ref(*vals)
        if len(got) != len(self.outputs):
            raise ValueError("case %s: ref gave %d outputs for %d" % (
                self.name, len(got), len(self.outputs)))
        res = []
        for name, v in zip(self.outputs, got):
            code = self.out_types.get(name)
            if code is None:
                code = type_code(np.asarray(v))
                v = np.asarray(v)
            else:
                v = dtypes.round_trip(np.asarray(v, dtypes.CARRIER[code]), code, saturate=False)
            res.append((name, code, v))
        return res

    def model(self, out_codes):
        """The single-op model; out_codes: the output types (None: unknown)."""
        node = helper.make_node(self.op, [k if v is not None else "" for k, v in
                                          self.inputs.items()], self.outputs,
                                name=self.name, domain=self.domain or None, **self.attrs)
        ins = [helper.make_tensor_value_info(k, type_code(v), values_of(v).shape)
               for k, v in self.feeds()]
        outs = [helper.make_tensor_value_info(n, c if c is not None else 0, None)
                for n, c in zip(self.outputs, out_codes)]
        g = helper.make_graph([node], self.name, ins, outs)
        opsets = [helper.make_opsetid("", self.opset if not self.domain else 18)]
        if self.domain:
            opsets.append(helper.make_opsetid(self.domain, self.opset))
        m = helper.make_model(g, opset_imports=opsets, producer_name="graphcc onnx-new")
        m.ir_version = IR_VERSION.get(self.opset, 8)
        return m
