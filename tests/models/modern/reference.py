"""NumPy references for the ONNX operators of opsets 18-23 that LLM and
diffusion exports use: RMSNormalization, GroupNormalization (18 and 21),
RotaryEmbedding, Attention, blocked (De)QuantizeLinear. Written from the
ONNX operator documentation (docs/Operators.md), computed in float64 and
cast to the input's type at the end; they never call graphcc, onnx.reference
or ONNX Runtime. Used by tests/models/modern/builders.py (the two models of
issue 21, item 5) and by the single-op cases of tests/onnx-new.
"""
import numpy as np


def rms_norm(X, scale, axis=-1, epsilon=1e-5):
    x = X.astype(np.float64)
    axes = tuple(range(axis % X.ndim, X.ndim))
    rms = np.sqrt((x * x).mean(axis=axes, keepdims=True) + epsilon)
    return (x / rms * scale.astype(np.float64)).astype(X.dtype)


def group_norm(X, scale, bias, num_groups, epsilon=1e-5, per_channel=True):
    """per_channel: opset 21 (scale, bias of C values); False: opset 18 (one
    per group)."""
    n, c = X.shape[:2]
    x = X.astype(np.float64).reshape(n, num_groups, -1)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    y = ((x - mean) / np.sqrt(var + epsilon)).reshape(X.shape)
    bshape = (1, c) + (1,) * (X.ndim - 2)
    reps = 1 if per_channel else c // num_groups
    s = np.repeat(scale.astype(np.float64), reps).reshape(bshape)
    b = np.repeat(bias.astype(np.float64), reps).reshape(bshape)
    return (y * s + b).astype(X.dtype)


def rotary(X, cos, sin, pos=None, interleaved=0, rotary_embedding_dim=0, num_heads=0):
    """X: (B, H, S, D), or (B, S, H*D) with num_heads."""
    x = X.astype(np.float64)
    shp = x.shape
    x = x.transpose(0, 2, 1, 3) if x.ndim == 4 else x.reshape(shp[0], shp[1], num_heads, -1)
    D = x.shape[3]
    R = rotary_embedding_dim or D
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    c = cos.astype(np.float64)[:, :, None, :]
    s = sin.astype(np.float64)[:, :, None, :]
    xr, xp = x[..., :R], x[..., R:]
    if interleaved:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
    else:
        x1, x2 = xr[..., :R // 2], xr[..., R // 2:]
    re, im = c * x1 - s * x2, s * x1 + c * x2
    rot = np.stack([re, im], -1).reshape(xr.shape) if interleaved else np.concatenate([re, im], -1)
    y = np.concatenate([rot, xp], -1)
    y = y.transpose(0, 2, 1, 3) if X.ndim == 4 else y.reshape(shp)
    return y.astype(X.dtype)


def attention(Q, K, V, mask=None, past_k=None, past_v=None, is_causal=0, q_num_heads=0,
              kv_num_heads=0, scale=None, softcap=0.0, qk_mode=None):
    """-> [Y, present_key, present_value] (+ qk_matmul_output when qk_mode
    is given), in Q's type. A query row every key of which is masked is a
    zero row (ONNX's errata to Attention-23)."""
    dt = Q.dtype
    q, k, v = (a.astype(np.float64) for a in (Q, K, V))
    in3d = q.ndim == 3
    if in3d:
        B, S = q.shape[:2]
        q = q.reshape(B, S, q_num_heads, -1).transpose(0, 2, 1, 3)
        k = k.reshape(B, k.shape[1], kv_num_heads, -1).transpose(0, 2, 1, 3)
        v = v.reshape(B, v.shape[1], kv_num_heads, -1).transpose(0, 2, 1, 3)
    P = 0
    if past_k is not None:
        P = past_k.shape[2]
        k = np.concatenate([past_k.astype(np.float64), k], 2)
        v = np.concatenate([past_v.astype(np.float64), v], 2)
    present_k, present_v = k, v
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    sc = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    s = q @ k.transpose(0, 1, 3, 2) * sc
    qk = {0: s.copy()}
    if softcap:
        s = softcap * np.tanh(s / softcap)
    qk[1] = s.copy()
    S, T = s.shape[2], s.shape[3]
    bias = np.zeros(s.shape)
    if mask is not None:
        bias = bias + (np.where(mask, 0.0, -np.inf) if mask.dtype == np.bool_
                       else mask.astype(np.float64))
    if is_causal:
        i, j = np.arange(S)[:, None], np.arange(T)[None, :]
        bias = bias + np.where(j <= i + P, 0.0, -np.inf)
    s = s + bias
    qk[2] = s.copy()
    mx = s.max(-1, keepdims=True)
    dead = np.isneginf(mx)
    e = np.exp(s - np.where(dead, 0, mx))
    p = np.where(dead, 0.0, e / np.where(dead, 1, e.sum(-1, keepdims=True)))
    qk[3] = p
    y = p @ v
    if in3d:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], S, -1)
    out = [y.astype(dt), present_k.astype(dt), present_v.astype(dt)]
    if qk_mode is not None:
        out.append(qk[qk_mode].astype(dt))
    return out


def _expand(a, x, axis, block):
    if a.ndim == 0 or a.size == 1:
        return a.reshape(()).astype(np.float64)
    axis %= x.ndim
    if block:
        return np.repeat(a, block, axis=axis).take(range(x.shape[axis]), axis=axis).astype(
            np.float64)
    shape = [1] * x.ndim
    shape[axis] = -1
    return a.reshape(shape).astype(np.float64)


def quantize(x, scale, zp=None, axis=1, block=0, dtype=np.uint8):
    """QuantizeLinear: saturate(round_half_even(x / scale) + zero_point)."""
    info = np.iinfo(dtype)
    s = _expand(scale, x, axis, block).astype(np.float32)
    z = 0.0 if zp is None else _expand(zp, x, axis, block)
    q = np.rint(x.astype(np.float32) / s).astype(np.float64) + z
    return np.clip(q, info.min, info.max).astype(dtype)


def dequantize(x, scale, zp=None, axis=1, block=0):
    """DequantizeLinear: (x - zero_point) * scale, in the scale's type."""
    s = _expand(scale, x, axis, block)
    z = 0.0 if zp is None else _expand(zp, x, axis, block)
    return ((x.astype(np.float64) - z) * s).astype(scale.dtype)
