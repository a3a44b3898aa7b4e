#!/usr/bin/python3
"""Writes tests/unit/test-training-data.h: inputs and expected outputs for
tests/unit/test-training.c, computed with ONNX's own reference functions
(onnx/backend/test/case/node/{adagrad,adam,momentum,batchnorm}.py) in
float64 from the very inputs the C tests feed (float32 values are printed
exactly with %.9g).

    /usr/bin/python3 tests/unit/gen-training-data.py > tests/unit/test-training-data.h
"""
import numpy as np

from onnx.backend.test.case.node.adagrad import apply_adagrad
from onnx.backend.test.case.node.adam import apply_adam
from onnx.backend.test.case.node.momentum import apply_momentum, apply_nesterov

OUT = []


def emit(name, arr, ctype):
    a = np.asarray(arr).ravel()
    vals = ", ".join(("%.17g" % v) if ctype == "double" else ("%.9g" % v) for v in a)
    OUT.append("static const %s %s[] = {%s};" % (ctype, name, vals or "0"))


def f32(v):
    """An attribute as the node holds it (ONNX float attributes are float32)."""
    return v if isinstance(v, str) else float(np.float32(v))


def tensors(prefix, rng, shapes, dtype, lo=-1.0, hi=1.0, given=None):
    """Random tensors of those shapes (or the `given` ones), rounded to dtype;
    emitted as inputs."""
    out = []
    for i, s in enumerate(shapes):
        a = (np.array(given[i]) if given else rng.uniform(lo, hi, s)).astype(dtype)
        emit("%s%d" % (prefix, i + 1), a, "float" if dtype == np.float32 else "double")
        out.append(a.astype(np.float64))
    return out


def optimizer_case(name, kind, dtype, shapes, r, t, attrs, seed, given=None):
    """given: {"x": [...], "g": [...], ...} instead of random tensors."""
    rng = np.random.default_rng(seed)
    ct = "float" if dtype == np.float32 else "double"
    OUT.append("/* %s: %s, %s, R=%r, T=%d, %s */" % (name, kind, ct, r, t, attrs))
    attrs = {k: f32(v) for k, v in attrs.items()}
    given = given or {}
    xs = tensors(name + "_x", rng, shapes, dtype, given=given.get("x"))
    gs = tensors(name + "_g", rng, shapes, dtype, given=given.get("g"))
    r = float(np.array(r, dtype))
    res = []
    if kind == "adagrad":
        hs = tensors(name + "_h", rng, shapes, dtype, 0, 2)
        for x, g, h in zip(xs, gs, hs):
            res.append(apply_adagrad(r, t, x, g, h, attrs["norm_coefficient"],
                                     attrs["epsilon"], attrs["decay_factor"]))
    elif kind == "adam":
        vs = tensors(name + "_v", rng, shapes, dtype, given=given.get("v"))
        hs = tensors(name + "_h", rng, shapes, dtype, 0, 2, given=given.get("h"))
        for x, g, v, h in zip(xs, gs, vs, hs):
            res.append(apply_adam(r, t, x, g, v, h, attrs["norm_coefficient"],
                                  attrs["norm_coefficient_post"], attrs["alpha"],
                                  attrs["beta"], attrs["epsilon"]))
    else:
        vs = tensors(name + "_v", rng, shapes, dtype)
        f = apply_nesterov if attrs["mode"] == "nesterov" else apply_momentum
        for x, g, v in zip(xs, gs, vs):
            res.append(f(r, t, x, g, v, attrs["norm_coefficient"], attrs["alpha"],
                         attrs["beta"]))
    for k in range(len(res[0])):
        for i, outs in enumerate(res):
            emit("%s_want%d_%d" % (name, k, i + 1), outs[k], "double")


def batchnorm_case(name, dtype, shape, eps, momentum, seed):
    """ONNX's _batchnorm_training_mode (batchnorm.py), in float64."""
    rng = np.random.default_rng(seed)
    ct = "float" if dtype == np.float32 else "double"
    eps, momentum = f32(eps), f32(momentum)
    c = shape[1]
    OUT.append("/* %s: BatchNormalization training_mode=1, %s %s, epsilon=%r, momentum=%r */"
               % (name, ct, shape, eps, momentum))
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    s, b, m = (rng.standard_normal(c).astype(dtype) for _ in range(3))
    v = rng.uniform(0.5, 1.5, c).astype(dtype)
    for k, a in (("x", x), ("s", s), ("b", b), ("m", m), ("v", v)):
        emit("%s_%s" % (name, k), a, ct)
    x, s, b, m, v = (a.astype(np.float64) for a in (x, s, b, m, v))
    axis = tuple(np.delete(np.arange(len(shape)), 1))
    mean, var = x.mean(axis=axis), x.var(axis=axis)
    dims1 = (1,) * (len(shape) - 2)
    y = (s.reshape(-1, *dims1) * (x - mean.reshape(-1, *dims1))
         / np.sqrt(var.reshape(-1, *dims1) + eps) + b.reshape(-1, *dims1))
    emit(name + "_y", y, "double")
    emit(name + "_rm", m * momentum + mean * (1 - momentum), "double")
    emit(name + "_rv", v * momentum + var * (1 - momentum), "double")


def main():
    optimizer_case("adagrad2", "adagrad", np.float32, [(3,), (2, 2)], 0.1, 2,
                   {"norm_coefficient": 0.01, "epsilon": 1e-5, "decay_factor": 0.1}, 1)
    optimizer_case("adam2", "adam", np.float64, [(4,), (2, 3)], 0.05, 3,
                   {"norm_coefficient": 0.01, "norm_coefficient_post": 0.02, "alpha": 0.9,
                    "beta": 0.99, "epsilon": 1e-6}, 2)
    optimizer_case("adam1", "adam", np.float32, [(5,)], 0.1, 0,
                   {"norm_coefficient": 0.0, "norm_coefficient_post": 0.0, "alpha": 0.9,
                    "beta": 0.999, "epsilon": 1e-6}, 3)
    optimizer_case("mom2", "momentum", np.float32, [(2,), (3, 1)], 0.1, 5,
                   {"norm_coefficient": 0.001, "alpha": 0.95, "beta": 0.85,
                    "mode": "standard"}, 4)
    optimizer_case("nest1", "momentum", np.float64, [(6,)], 0.2, 0,
                   {"norm_coefficient": 0.01, "alpha": 0.9, "beta": 0.5,
                    "mode": "nesterov"}, 5)
    # ONNX 1.12's test_adam_multiple inputs, with the epsilon its expected
    # outputs were computed with (the model lacks the attribute)
    optimizer_case("adamonnx", "adam", np.float32, [(1,), (2,)], 0.1, 0,
                   {"norm_coefficient": 0.001, "norm_coefficient_post": 0.0, "alpha": 0.95,
                    "beta": 0.85, "epsilon": 1e-2}, 0,
                   {"x": [[1.0], [1.0, 2.0]], "g": [[-1.0], [-1.0, -3.0]],
                    "v": [[2.0], [4.0, 1.0]], "h": [[0.5], [1.0, 10.0]]})
    batchnorm_case("bn32", np.float32, (2, 3, 2, 2), 1e-3, 0.8, 6)
    batchnorm_case("bn64", np.float64, (3, 2, 3), 1e-5, 0.9, 7)
    print("/*\n * Reference values for tests/unit/test-training.c, written by\n"
          " * tests/unit/gen-training-data.py with ONNX's reference functions.\n */")
    print("#ifndef GC_TEST_TRAINING_DATA_H\n#define GC_TEST_TRAINING_DATA_H\n")
    print("\n".join(OUT))
    print("\n#endif")


if __name__ == "__main__":
    main()
