"""Opset 22: bfloat16 for the float element-wise ops that lacked it,
computed in float32 and rounded to bfloat16. ONNX Runtime 1.30's CPU
provider has no bfloat16 kernel for these: the NumPy reference alone
decides (ort_differs says so)."""
import numpy as np

from caselib import Case, In

R = np.random.default_rng(2222)
NO_BF16 = "ONNX Runtime 1.30's CPU provider has no bfloat16 kernel for this op"


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _np(fn):
    return lambda X: [fn(X.astype(np.float64)).astype(np.float32)]


def bf16_cases():
    x = np.clip(f32(3, 7) * 0.4, -0.95, 0.95)
    big = np.abs(f32(3, 7)) * 3 + 1.1
    sel_a, sel_g = 1.67326319217681884765625, 1.05070102214813232421875
    table = [
        ("Sin", x, np.sin, {}), ("Cos", x, np.cos, {}), ("Tan", x, np.tan, {}),
        ("Asin", x, np.arcsin, {}), ("Acos", x, np.arccos, {}), ("Atan", x, np.arctan, {}),
        ("Sinh", x, np.sinh, {}), ("Cosh", x, np.cosh, {}), ("Asinh", x, np.arcsinh, {}),
        ("Acosh", big, np.arccosh, {}), ("Atanh", x, np.arctanh, {}),
        ("Round", x * 10, np.round, {}),
        ("Softplus", x * 4, lambda v: np.log1p(np.exp(v)), {}),
        ("Softsign", x * 4, lambda v: v / (1 + np.abs(v)), {}),
        ("HardSwish", x * 6, lambda v: v * np.clip(v / 6 + 0.5, 0, 1), {}),
        ("HardSigmoid", x * 6, lambda v: np.clip(0.3 * v + 0.4, 0, 1),
         {"alpha": 0.3, "beta": 0.4}),
        ("Elu", x * 4, lambda v: np.where(v > 0, v, 0.7 * (np.exp(v) - 1)), {"alpha": 0.7}),
        ("Selu", x * 4, lambda v: sel_g * np.where(v > 0, v, sel_a * (np.exp(v) - 1)), {}),
        ("ThresholdedRelu", x * 4, lambda v: np.where(v > 0.5, v, 0), {"alpha": 0.5}),
    ]
    for op, vals, fn, attrs in table:
        yield Case("%s22_bfloat16" % op.lower(), op, 22, {"X": In(vals, "bfloat16")},
                   attrs=attrs, ref=_np(fn), out_types={"Y": "bfloat16"}, rtol=1e-2, atol=1e-2,
                   ort_differs=NO_BF16,
                   note="bfloat16 keeps 8 significant bits: 1e-2 relative")
    yield Case("sin21_bfloat16_refused", "Sin", 21, {"X": In(x, "bfloat16")},
               error="input 0 has type bfloat16, which Sin does not take",
               out_types={"Y": "bfloat16"})



def cases():
    yield from bf16_cases()
