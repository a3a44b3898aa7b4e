"""Opset 23: Attention (3-D and 4-D, MHA/GQA/MQA, bool and float masks,
is_causal with a KV cache, scale, softcap, qk_matmul_output modes, fully
masked rows), RotaryEmbedding (halves and interleaved, partial rotation,
with and without position_ids), RMSNormalization (axis, broadcast scale,
float16). NumPy references: tests/models/modern/reference.py."""
import os
import sys

import numpy as np

from caselib import Case

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "models", "modern"))
import reference as ref  # noqa: E402

R = np.random.default_rng(23)
KV = ["Y", "present_key", "present_value"]


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def attention_cases():
    B, Hq, Hkv, S, L, P, D, Dv = 2, 4, 2, 3, 3, 5, 8, 6
    q, k, v = f32(B, Hq, S, D), f32(B, Hkv, L, D), f32(B, Hkv, L, Dv)
    pk, pv = f32(B, Hkv, P, D), f32(B, Hkv, P, Dv)
    kh, vh = f32(B, Hq, L, D), f32(B, Hq, L, Dv)
    yield Case("attention23_4d_mha", "Attention", 23, {"Q": q, "K": kh, "V": vh},
               ref=lambda Q, K, V: ref.attention(Q, K, V)[:1])
    yield Case("attention23_4d_gqa_past_causal", "Attention", 23,
               {"Q": q, "K": k, "V": v, "attn_mask": None, "past_key": pk, "past_value": pv},
               attrs={"is_causal": 1}, outputs=KV,
               ref=lambda Q, K, V, PK, PV: ref.attention(Q, K, V, None, PK, PV, 1))
    m = R.random((S, P + L)) > 0.3
    yield Case("attention23_bool_mask_broadcast", "Attention", 23,
               {"Q": q, "K": k, "V": v, "attn_mask": m, "past_key": pk, "past_value": pv},
               outputs=KV, ref=lambda Q, K, V, M, PK, PV: ref.attention(Q, K, V, M, PK, PV))
    mf = f32(B, 1, S, P + L)
    yield Case("attention23_float_mask_scale_softcap", "Attention", 23,
               {"Q": q, "K": k, "V": v, "attn_mask": mf, "past_key": pk, "past_value": pv},
               attrs={"scale": 0.3, "softcap": 2.0}, outputs=KV,
               ref=lambda Q, K, V, M, PK, PV: ref.attention(Q, K, V, M, PK, PV, scale=0.3,
                                                            softcap=2.0))
    for mode in (0, 1, 3):
        yield Case("attention23_qk_output_mode%d" % mode, "Attention", 23,
                   {"Q": q, "K": k, "V": v, "attn_mask": mf, "past_key": pk, "past_value": pv},
                   attrs={"is_causal": 1, "softcap": 3.0, "qk_matmul_output_mode": mode},
                   outputs=KV + ["qk"],
                   ref=lambda Q, K, V, M, PK, PV, mode=mode: ref.attention(
                       Q, K, V, M, PK, PV, 1, softcap=3.0, qk_mode=mode))
    yield Case("attention23_qk_output_mode2_masked_is_minus_inf", "Attention", 23,
               {"Q": q, "K": k, "V": v, "attn_mask": mf, "past_key": pk, "past_value": pv},
               attrs={"is_causal": 1, "qk_matmul_output_mode": 2}, outputs=KV + ["qk"],
               ref=lambda Q, K, V, M, PK, PV: ref.attention(Q, K, V, M, PK, PV, 1, qk_mode=2),
               ort_differs="ONNX Runtime 1.30 writes the lowest float (-3.4e38) where the "
                           "spec's causal bias is -inf")
    q3, k3, v3 = f32(B, S, Hq * D), f32(B, L, Hkv * D), f32(B, L, Hkv * Dv)
    yield Case("attention23_3d_gqa_causal", "Attention", 23, {"Q": q3, "K": k3, "V": v3},
               attrs={"q_num_heads": Hq, "kv_num_heads": Hkv, "is_causal": 1},
               ref=lambda Q, K, V: ref.attention(Q, K, V, None, None, None, 1, Hq, Hkv)[:1])
    k1, v1, pk1, pv1 = f32(B, L, D), f32(B, L, Dv), f32(B, 1, P, D), f32(B, 1, P, Dv)
    yield Case("attention23_3d_mqa_kv_cache", "Attention", 23,
               {"Q": q3, "K": k1, "V": v1, "attn_mask": None, "past_key": pk1,
                "past_value": pv1},
               attrs={"q_num_heads": Hq, "kv_num_heads": 1, "is_causal": 1}, outputs=KV,
               ref=lambda Q, K, V, PK, PV: ref.attention(Q, K, V, None, PK, PV, 1, Hq, 1))
    dead = np.ones((S, P + L), bool)
    dead[1] = False
    yield Case("attention23_fully_masked_row_is_zero", "Attention", 23,
               {"Q": q, "K": k, "V": v, "attn_mask": dead, "past_key": pk, "past_value": pv},
               outputs=KV, ref=lambda Q, K, V, M, PK, PV: ref.attention(Q, K, V, M, PK, PV))
    yield Case("attention23_float16", "Attention", 23,
               {"Q": q.astype(np.float16), "K": k.astype(np.float16),
                "V": v.astype(np.float16)}, attrs={"is_causal": 1}, rtol=2e-3, atol=2e-3,
               ref=lambda Q, K, V: ref.attention(Q, K, V, is_causal=1)[:1],
               note="float16 inputs, computed in float32: half-precision tolerance")
    yield Case("attention23_decode_one_token", "Attention", 23,
               {"Q": f32(1, Hq, 1, D), "K": f32(1, Hkv, 1, D), "V": f32(1, Hkv, 1, Dv),
                "attn_mask": None, "past_key": f32(1, Hkv, 40, D),
                "past_value": f32(1, Hkv, 40, Dv)},
               attrs={"is_causal": 1}, outputs=KV,
               ref=lambda Q, K, V, PK, PV: ref.attention(Q, K, V, None, PK, PV, 1))
    # causal rows in several 64-row blocks: each block skips the keys past
    # its last row's frontier
    qL, kL, vL = f32(1, 2, 150, 8), f32(1, 1, 140, 8), f32(1, 1, 140, 8)
    pkL, pvL = f32(1, 1, 10, 8), f32(1, 1, 10, 8)
    yield Case("attention23_causal_long_prefill_past", "Attention", 23,
               {"Q": qL, "K": kL, "V": vL, "attn_mask": None, "past_key": pkL,
                "past_value": pvL}, attrs={"is_causal": 1}, outputs=KV,
               ref=lambda Q, K, V, PK, PV: ref.attention(Q, K, V, None, PK, PV, 1))
    yield Case("attention23_heads_not_multiple", "Attention", 23,
               {"Q": f32(1, 3, 2, D), "K": f32(1, 2, 2, D), "V": f32(1, 2, 2, D)},
               error="must be a multiple of kv heads")
    yield Case("attention23_3d_without_head_counts", "Attention", 23,
               {"Q": q3, "K": k3, "V": v3}, error="need attributes q_num_heads and kv_num_heads")
    yield Case("attention23_mask_does_not_broadcast", "Attention", 23,
               {"Q": q, "K": k, "V": v, "attn_mask": f32(S, L + 1)},
               error="does not broadcast to (batch 2, q heads 4, q length 3, total length 3)")
    yield Case("attention23_float64_declined", "Attention", 23,
               {"Q": q.astype(np.float64), "K": k.astype(np.float64),
                "V": v.astype(np.float64)}, error="float64: not supported", declined=True)


def rotary_cases():
    B, S, H, D = 2, 5, 3, 8
    ang = R.uniform(0, 6, (16, D // 2))
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    pos = R.integers(0, 16, (B, S)).astype(np.int64)
    x4, x3 = f32(B, H, S, D), f32(B, S, H * D)
    ins = {"X": x4, "cos_cache": cos, "sin_cache": sin, "position_ids": pos}
    yield Case("rotary23_4d_halves", "RotaryEmbedding", 23, ins,
               ref=lambda X, C, Sn, P: [ref.rotary(X, C, Sn, P)])
    yield Case("rotary23_4d_interleaved", "RotaryEmbedding", 23, ins, attrs={"interleaved": 1},
               ref=lambda X, C, Sn, P: [ref.rotary(X, C, Sn, P, 1)])
    yield Case("rotary23_3d_num_heads", "RotaryEmbedding", 23, dict(ins, X=x3),
               attrs={"num_heads": H}, ref=lambda X, C, Sn, P: [ref.rotary(X, C, Sn, P, 0, 0, H)])
    c2, s2 = cos[:, :2].copy(), sin[:, :2].copy()
    yield Case("rotary23_partial_interleaved", "RotaryEmbedding", 23,
               {"X": x3, "cos_cache": c2, "sin_cache": s2, "position_ids": pos},
               attrs={"num_heads": H, "rotary_embedding_dim": 4, "interleaved": 1},
               ref=lambda X, C, Sn, P: [ref.rotary(X, C, Sn, P, 1, 4, H)])
    cb, sb = cos[pos], sin[pos]
    yield Case("rotary23_no_position_ids", "RotaryEmbedding", 23,
               {"X": x4, "cos_cache": cb, "sin_cache": sb},
               ref=lambda X, C, Sn: [ref.rotary(X, C, Sn)])
    yield Case("rotary23_float16", "RotaryEmbedding", 23,
               {"X": x4.astype(np.float16), "cos_cache": cos.astype(np.float16),
                "sin_cache": sin.astype(np.float16), "position_ids": pos},
               rtol=1e-3, atol=1e-3, ref=lambda X, C, Sn, P: [ref.rotary(X, C, Sn, P)])
    yield Case("rotary23_cache_width_mismatch", "RotaryEmbedding", 23,
               dict(ins, cos_cache=c2, sin_cache=s2), error="(rotary dims / 2)")
    yield Case("rotary23_3d_without_num_heads", "RotaryEmbedding", 23, dict(ins, X=x3),
               error="needs attribute num_heads")


def rms_cases():
    x = f32(2, 5, 8)
    yield Case("rms_norm23_last_axis", "RMSNormalization", 23, {"X": x, "scale": f32(8)},
               ref=lambda X, S: [ref.rms_norm(X, S)])
    x4 = f32(2, 3, 4, 6)
    yield Case("rms_norm23_axis2_epsilon", "RMSNormalization", 23,
               {"X": x4, "scale": f32(4, 6)}, attrs={"axis": 2, "epsilon": 1e-3},
               ref=lambda X, S: [ref.rms_norm(X, S, 2, 1e-3)])
    yield Case("rms_norm23_scale_broadcast", "RMSNormalization", 23,
               {"X": x4, "scale": f32(1, 6)}, attrs={"axis": -2},
               ref=lambda X, S: [ref.rms_norm(X, S, -2)])
    yield Case("rms_norm23_float16", "RMSNormalization", 23,
               {"X": x.astype(np.float16), "scale": f32(8).astype(np.float16)},
               rtol=2e-3, atol=2e-3, ref=lambda X, S: [ref.rms_norm(X, S)])
    yield Case("rms_norm23_empty_rows", "RMSNormalization", 23,
               {"X": np.zeros((0, 8), np.float32), "scale": f32(8)},
               ref=lambda X, S: [X.copy()])
    yield Case("rms_norm23_scale_wrong_width", "RMSNormalization", 23,
               {"X": x, "scale": f32(7)}, error="must have X's type and broadcast")


def cases():
    yield from attention_cases()
    yield from rotary_cases()
    yield from rms_cases()
