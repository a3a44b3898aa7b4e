"""Opset 18: the Reduce*/Split/Pad forms that moved attributes to inputs,
Bitwise*, CenterCropPad, Col2Im, LpPool ceil_mode, Resize antialias and
keep_aspect_ratio_policy, ScatterElements/ScatterND reduction max/min,
OptionalHasElement on tensors. (GroupNormalization-18: cases/opset21.py.)"""
import numpy as np

from caselib import Case

R = np.random.default_rng(18)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def reduce_cases():
    x = f32(2, 3, 4)
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
    x = f32(7, 2)
    yield Case("split18_num_outputs_uneven", "Split", 18, {"X": x},
               attrs={"num_outputs": 3, "axis": 0}, outputs=["A", "B", "C"],
               ref=lambda X: [X[0:3], X[3:6], X[6:7]])
    yield Case("split18_num_outputs_axis1", "Split", 18, {"X": f32(2, 5)},
               attrs={"num_outputs": 2, "axis": 1}, outputs=["A", "B"],
               ref=lambda X: [X[:, 0:3], X[:, 3:5]])
    yield Case("split18_num_outputs_mismatch", "Split", 18, {"X": x},
               attrs={"num_outputs": 2}, outputs=["A", "B", "C"],
               error="attribute 'num_outputs' is 2, but the node has 3 outputs")
    yield Case("split18_last_part_empty", "Split", 18, {"X": f32(4)},
               attrs={"num_outputs": 3}, outputs=["A", "B", "C"],
               error="does not split into 3 parts of 2")
    yield Case("split18_neither_split_nor_num_outputs", "Split", 18, {"X": f32(4)},
               outputs=["A", "B"], error="needs input 'split' or attribute 'num_outputs'")
    p = f32(2, 3)
    yield Case("pad18_axes_reflect", "Pad", 18,
               {"X": p, "pads": np.array([2, 1], np.int64), "value": None,
                "axes": np.array([1], np.int64)},
               attrs={"mode": "reflect"},
               ref=lambda X, pads, axes: [np.pad(X, ((0, 0), (2, 1)), mode="reflect")])


def cases():
    yield from reduce_cases()
    yield from split_pad_cases()
