"""One comparison rule for the generator (NumPy vs ONNX Runtime) and the
runner (expected vs graphcc)."""
import numpy as np
from onnx import TensorProto

import dtypes


def compare(name, code, want, got, rtol, atol):
    """-> None when equal, else a one-line reason. Floats within rtol/atol
    (NaN equals NaN, infinities must match); float8 results exactly (they
    are the outputs of casts and quantizers, one code each); integers,
    bool and strings exactly."""
    want, got = np.asarray(want), np.asarray(got)
    if got.shape != want.shape:
        return "output %s: shape %s, expected %s" % (name, got.shape, want.shape)
    if code == TensorProto.STRING:
        bad = np.array([a != b for a, b in zip(got.ravel().tolist(), want.ravel().tolist())],
                       dtype=bool)
    elif want.dtype.kind in "fc":
        w, g = want.astype(np.float64), got.astype(np.float64)
        if code in dtypes.F8:
            bad = ~((w == g) | (np.isnan(w) & np.isnan(g)))
        else:
            close = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            same_inf = (np.isinf(w) == np.isinf(g)) & (~np.isinf(w) | (w == g))
            bad = ~(close & same_inf)
    else:
        bad = got.astype(np.int64) != want.astype(np.int64) if want.dtype.kind in "biu" \
            else got != want
    if bad.size and np.any(bad):
        i = int(np.argmax(bad.ravel()))
        return ("output %s: %d of %d values differ (rtol %g, atol %g); first at flat index %d: "
                "got %r, expected %r" % (name, int(bad.sum()), bad.size, rtol, atol, i,
                                         got.ravel()[i], want.ravel()[i]))
    return None
