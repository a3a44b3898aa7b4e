"""Opset 18: the Reduce*/Split/Pad forms that moved attributes to inputs,
Bitwise*, CenterCropPad, Col2Im, LpPool ceil_mode, Resize antialias and
keep_aspect_ratio_policy, ScatterElements/ScatterND reduction max/min,
OptionalHasElement on tensors. (GroupNormalization-18: cases/opset21.py.)"""
import numpy as np

from caselib import Case, rng

def f32(r, *shape):
    return r.standard_normal(shape).astype(np.float32)


def reduce_cases():
    r = rng('reduce_cases')
    x = f32(r, 2, 3, 4)
    yield Case("reduce_max18_axes_input", "ReduceMax", 18,
               {"X": x, "axes": np.array([0, -1], np.int64)},
               ref=lambda X, a: [X.max(axis=(0, 2), keepdims=True)], outputs=["Y"])
    yield Case("reduce_sum_square18_noop_empty_axes", "ReduceSumSquare", 18,
               {"X": x, "axes": np.array([], np.int64)},
               attrs={"noop_with_empty_axes": 1}, ref=lambda X, a: [X * X])
    yield Case("reduce_l2_18_keepdims0", "ReduceL2", 18,
               {"X": x, "axes": np.array([1], np.int64)}, attrs={"keepdims": 0},
               ref=lambda X, a: [np.sqrt((X.astype(np.float64) ** 2).sum(1)).astype(np.float32)])
    for op, f in (("ReduceL1", np.abs), ("ReduceL2", np.abs), ("ReduceLogSumExp", lambda v: v),
                  ("ReduceMin", lambda v: v)):
        yield Case("reduce_%s_18_noop_empty_axes" % op[6:].lower(), op, 18,
                   {"X": x, "axes": np.array([], np.int64)},
                   attrs={"noop_with_empty_axes": 1}, ref=lambda X, a, f=f: [f(X)])
    pos = np.abs(x) + 0.5
    yield Case("logsum18_noop_absent_axes", "ReduceLogSum", 18, {"X": pos, "axes": None},
               attrs={"noop_with_empty_axes": 1}, ref=lambda X: [np.log(X)])
    yield Case("reduce_max18_axis_out_of_range", "ReduceMax", 18,
               {"X": x, "axes": np.array([3], np.int64)}, error="axis 3",
               out_types={"Y": "float32"})


def split_pad_cases():
    r = rng('split_pad_cases')
    x = f32(r, 7, 2)
    yield Case("split18_num_outputs_uneven", "Split", 18, {"X": x},
               attrs={"num_outputs": 3, "axis": 0}, outputs=["A", "B", "C"],
               ref=lambda X: [X[0:3], X[3:6], X[6:7]])
    yield Case("split18_num_outputs_axis1", "Split", 18, {"X": f32(r, 2, 5)},
               attrs={"num_outputs": 2, "axis": 1}, outputs=["A", "B"],
               ref=lambda X: [X[:, 0:3], X[:, 3:5]])
    yield Case("split18_num_outputs_mismatch", "Split", 18, {"X": x},
               attrs={"num_outputs": 2}, outputs=["A", "B", "C"],
               error="attribute 'num_outputs' is 2, but the node has 3 outputs")
    yield Case("split18_last_part_empty", "Split", 18, {"X": f32(r, 4)},
               attrs={"num_outputs": 3}, outputs=["A", "B", "C"],
               error="does not split into 3 parts of 2")
    yield Case("split18_neither_split_nor_num_outputs", "Split", 18, {"X": f32(r, 4)},
               outputs=["A", "B"], error="needs input 'split' or attribute 'num_outputs'")
    p = f32(r, 2, 3)
    yield Case("pad18_axes_reflect", "Pad", 18,
               {"X": p, "pads": np.array([2, 1], np.int64), "value": None,
                "axes": np.array([1], np.int64)},
               attrs={"mode": "reflect"},
               ref=lambda X, pads, axes: [np.pad(X, ((0, 0), (2, 1)), mode="reflect")])


def ints(r, dtype, *shape):
    info = np.iinfo(dtype)
    return r.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


def bitwise_cases():
    r = rng('bitwise_cases')
    fns = {"And": np.bitwise_and, "Or": np.bitwise_or, "Xor": np.bitwise_xor}
    for op, f in fns.items():
        for dt in (np.int8, np.uint16, np.int32, np.uint64):
            name = "bitwise_%s_%s" % (op.lower(), np.dtype(dt).name)
            yield Case(name, "Bitwise" + op, 18, {"A": ints(r, dt, 3, 4), "B": ints(r, dt, 3, 4)},
                       ref=lambda A, B, f=f: [f(A, B)])
        yield Case("bitwise_%s_broadcast_int64" % op.lower(), "Bitwise" + op, 18,
                   {"A": ints(r, np.int64, 2, 1, 4), "B": ints(r, np.int64, 3, 1)},
                   ref=lambda A, B, f=f: [f(A, B)])
    yield Case("bitwise_and_empty", "BitwiseAnd", 18,
               {"A": np.zeros((0, 3), np.uint8), "B": ints(r, np.uint8, 3)},
               ref=lambda A, B: [A & B])
    for dt in (np.int16, np.uint32, np.int64):
        yield Case("bitwise_not_%s" % np.dtype(dt).name, "BitwiseNot", 18, {"X": ints(r, dt, 2, 5)},
                   ref=lambda X: [np.invert(X)])
    yield Case("bitwise_and_mixed_types", "BitwiseAnd", 18,
               {"A": ints(r, np.int32, 3), "B": ints(r, np.int64, 3)}, error="int64",
               out_types={"Y": "int32"})
    yield Case("bitwise_or_float", "BitwiseOr", 18,
               {"A": np.ones(3, np.float32), "B": np.ones(3, np.float32)}, error="float32")
    yield Case("bitwise_not_bool", "BitwiseNot", 18, {"X": np.ones(3, np.bool_)}, error="bool")
    yield Case("bitwise_xor_at_opset17", "BitwiseXor", 17,
               {"A": ints(r, np.int8, 3), "B": ints(r, np.int8, 3)},
               error="BitwiseXor is an ONNX operator since opset 18")


def optional_cases():
    r = rng('optional_cases')
    yield Case("optional_has_element_tensor", "OptionalHasElement", 18, {"X": f32(r, 2, 3)},
               ref=lambda X: [np.array(True)])
    yield Case("optional_has_element_absent", "OptionalHasElement", 18, {"X": None},
               ref=lambda: [np.array(False)])
    yield Case("optional_get_element_tensor", "OptionalGetElement", 18, {"X": f32(r, 4)},
               ref=lambda X: [X])


def scatter_cases():
    r = rng("scatter_cases")
    data = f32(r, 3, 4)
    idx = np.array([[0, 1, 0, 2], [2, 1, 0, 0]], np.int64)
    upd = f32(r, 2, 4)

    def scatter_elements(D, I, U, red):
        out = D.copy()
        for i in range(I.shape[0]):
            for j in range(I.shape[1]):
                out[I[i, j], j] = red(out[I[i, j], j], U[i, j])
        return [out]
    for red, f in (("max", max), ("min", min)):
        yield Case("scatter_elements18_%s" % red, "ScatterElements", 18,
                   {"data": data, "indices": idx, "updates": upd},
                   attrs={"axis": 0, "reduction": red},
                   ref=lambda D, I, U, f=f: scatter_elements(D, I, U, f))

        def scatter_nd(D, I, U, f=f):
            out = D.copy()
            for k in range(I.shape[0]):
                out[tuple(I[k])] = np.array([f(a, b) for a, b in zip(out[tuple(I[k])], U[k])])
            return [out]
        yield Case("scatter_nd18_%s" % red, "ScatterND", 18,
                   {"data": data, "indices": np.array([[2], [0], [2]], np.int64),
                    "updates": f32(r, 3, 4)},
                   attrs={"reduction": red}, ref=scatter_nd)
    yield Case("scatter_elements18_bad_reduction", "ScatterElements", 18,
               {"data": data, "indices": idx, "updates": upd},
               attrs={"axis": 0, "reduction": "avg"}, error="avg",
               ort_differs="ONNX Runtime 1.30 runs an unknown reduction (as none)")


def cases():
    yield from scatter_cases()
    yield from bitwise_cases()
    yield from optional_cases()
    yield from reduce_cases()
    yield from split_pad_cases()
