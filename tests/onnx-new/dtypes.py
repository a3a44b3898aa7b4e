"""Element types NumPy and ONNX 1.12 lack, done by hand so the test
generator and runner need neither ml_dtypes nor a newer onnx: bfloat16,
the four float8 types, int4/uint4 (ONNX TensorProto.DataType 16..22),
float4e2m1 (23).

Values travel as float32 (or int8/uint8 for int4) arrays; the stored form
is the type's bit pattern (uint16 for bfloat16, uint8 for the others), as
.pb raw_data and, for graphcc's .npy outputs, the ml_dtypes convention
('<V2' / '|V1', one element per item; see README.md "Element types").
"""
import numpy as np

BFLOAT16, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, UINT4, INT4, FLOAT4E2M1 = \
    range(16, 24)

# ONNX type code -> name (the name graphcc's messages and .npy use)
NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
         8: "string", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
         16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
         20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1"}
CODES = {v: k for k, v in NAMES.items()}

# The NumPy type that carries values of a special type in the test scripts.
CARRIER = {BFLOAT16: np.float32, FLOAT8E4M3FN: np.float32, FLOAT8E4M3FNUZ: np.float32,
           FLOAT8E5M2: np.float32, FLOAT8E5M2FNUZ: np.float32, UINT4: np.uint8, INT4: np.int8,
           FLOAT4E2M1: np.float32}
PACKED4 = (UINT4, INT4, FLOAT4E2M1)  # two per byte in .pb raw_data
F4_MAGNITUDES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)


def f4_encode(x):
    """float32 -> float4e2m1 codes: nearest, ties to the even code, beyond 6
    (and infinity) +-6, NaN +6, as ONNX's reference (Cast-23)."""
    x = np.asarray(x, np.float32)
    a = np.abs(x)
    # upper bounds of each code's interval; <= where the tie goes down to an even code
    code = np.select([a <= 0.25, a < 0.75, a <= 1.25, a < 1.75, a <= 2.5, a < 3.5, a <= 5.0],
                     [0, 1, 2, 3, 4, 5, 6], 7).astype(np.uint8)
    code |= np.where(np.signbit(x), 8, 0).astype(np.uint8)
    return np.where(np.isnan(x), np.uint8(7), code).astype(np.uint8)


def f4_decode(bits):
    b = np.asarray(bits, np.uint8)
    m = F4_MAGNITUDES[b & 7]
    return np.where(b & 8, -m, m).astype(np.float32)
SPECIAL = set(CARRIER)

# float8 layouts: (exponent bits, mantissa bits, bias, fnuz?, has inf?)
F8 = {FLOAT8E4M3FN: (4, 3, 7, False, False), FLOAT8E4M3FNUZ: (4, 3, 8, True, False),
      FLOAT8E5M2: (5, 2, 15, False, True), FLOAT8E5M2FNUZ: (5, 2, 16, True, False)}


def _f8_decode_table(code):
    e_bits, m_bits, bias, fnuz, has_inf = F8[code]
    table = np.zeros(256, np.float64)
    for b in range(256):
        s, e, m = b >> 7, (b >> m_bits) & ((1 << e_bits) - 1), b & ((1 << m_bits) - 1)
        if fnuz and b == 0x80:
            v = np.nan
        elif not fnuz and has_inf and e == (1 << e_bits) - 1:
            v = np.inf if m == 0 else np.nan
        elif not fnuz and not has_inf and e == (1 << e_bits) - 1 and m == (1 << m_bits) - 1:
            v = np.nan
        elif e == 0:
            v = m * 2.0 ** (1 - bias - m_bits)
        else:
            v = (1 + m / 2.0 ** m_bits) * 2.0 ** (e - bias)
        table[b] = -v if s else v
    return table


_F8_TABLES = {c: _f8_decode_table(c) for c in F8}


def f8_max(code):
    t = _F8_TABLES[code][:128]
    return float(np.max(t[np.isfinite(t)]))


def f8_decode(bits, code):
    return _F8_TABLES[code][np.asarray(bits, np.uint8)].astype(np.float32)


def f8_encode(x, code, saturate=True):
    """float32 -> float8 codes, rounding to nearest even, out-of-range
    values as ONNX's Cast-19 tables say: saturate: +-max (+-inf too, except
    in the fnuz types, where it is NaN); not saturating: NaN, or +-inf in
    e5m2."""
    e_bits, m_bits, bias, fnuz, has_inf = F8[code]
    t = _F8_TABLES[code]
    pos = t[:128]
    n_fin = int(np.sum(np.isfinite(pos)))  # codes 0..n_fin-1 are finite, increasing
    vals = pos[:n_fin]
    top = vals[-1] + (vals[-1] - vals[-2])  # the value one step past the max
    grid = np.append(vals, top)
    x = np.asarray(x, np.float32).astype(np.float64)
    a = np.abs(x)
    hi = np.clip(np.searchsorted(grid, a), 1, n_fin)
    lo = hi - 1
    dl, dh = a - grid[lo], grid[hi] - a
    pick = np.where(dl < dh, lo, np.where(dh < dl, hi, np.where(lo % 2 == 0, lo, hi)))
    pick = np.where(a <= 0, 0, pick)
    over = (pick >= n_fin) | np.isinf(a)
    nan_code = 0x80 if fnuz else 0x7F
    inf_code = 0x7C
    sign = np.where(np.signbit(x), 0x80, 0)
    out = (pick.clip(0, n_fin - 1) | sign).astype(np.int64)
    if fnuz:
        out = np.where(out == 0x80, 0, out)  # no negative zero
    if saturate:
        sat = (n_fin - 1) | sign
        if fnuz:
            out = np.where(np.isinf(a), nan_code, np.where(over, sat, out))
        else:
            out = np.where(over, sat, out)
    else:
        if has_inf:
            out = np.where(over, inf_code | sign, out)
        else:
            out = np.where(over, nan_code, out)
    out = np.where(np.isnan(x), nan_code if fnuz else (0x7F if not has_inf else 0x7F), out)
    return out.astype(np.uint8)


def bf16_encode(x):
    """float32 -> bfloat16 bits, rounding to nearest even (NaN stays NaN)."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(np.asarray(x, np.float32)), np.uint16(0x7FC0), r).astype(np.uint16)


def bf16_decode(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def encode(x, code, saturate=True):
    """Carrier values -> the stored bits (uint16 / uint8 array)."""
    if code == BFLOAT16:
        return bf16_encode(x)
    if code in F8:
        return f8_encode(x, code, saturate)
    if code in (INT4, UINT4):
        return np.asarray(x).astype(np.int8 if code == INT4 else np.uint8).view(np.uint8)
    if code == FLOAT4E2M1:
        return f4_encode(x)
    raise ValueError("type %d is not special" % code)


def decode(bits, code):
    """Stored bits -> carrier values."""
    if code == BFLOAT16:
        return bf16_decode(bits)
    if code in F8:
        return f8_decode(bits, code)
    if code == INT4:
        b = np.asarray(bits, np.uint8) & 0xF
        return np.where(b >= 8, b.astype(np.int16) - 16, b).astype(np.int8)
    if code == UINT4:
        return (np.asarray(bits, np.uint8) & 0xF).astype(np.uint8)
    if code == FLOAT4E2M1:
        return f4_decode(bits)
    raise ValueError("type %d is not special" % code)


def round_trip(x, code, saturate=True):
    """Values as the type holds them (what a cast to it and back gives)."""
    return decode(encode(x, code, saturate), code)


def pack4(codes):
    """int4/uint4 nibbles, two per byte, the first element in the low half
    (ONNX's raw_data layout)."""
    c = np.asarray(codes, np.uint8).ravel() & 0xF
    if c.size % 2:
        c = np.append(c, np.uint8(0))
    return (c[0::2] | (c[1::2] << 4)).astype(np.uint8)


def unpack4(raw, n):
    r = np.frombuffer(raw, np.uint8)
    out = np.empty(r.size * 2, np.uint8)
    out[0::2], out[1::2] = r & 0xF, r >> 4
    return out[:n]
