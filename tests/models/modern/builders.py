"""The two models of issue 21, item 5, built with onnx.helper, with their
NumPy references (tests/models/modern/reference.py, float64):

  llm_block  a decoder block as LLM toolchains export it at opset 23:
             token embedding (Gather), RMSNormalization, Q/K/V projections,
             RotaryEmbedding (position_ids into cos/sin caches), Attention
             with grouped-query heads, causal mask and a KV cache (past_key,
             past_value in; present_key, present_value out), output
             projection, residuals, a SwiGLU MLP (SiLU(x W_gate) * x W_up,
             W_down), a final RMSNormalization and the LM head.
  unet_gn    a small U-Net at opset 21: 3x3 convolutions, GroupNormalization
             (per-channel scale and bias, the opset-21 form), SiLU (Sigmoid,
             Mul), MaxPool down, nearest Resize up, skip Concats, a 1x1 head.

Each builder takes a size ("test": small enough to keep in the tree;
"bench": the `make bench` rows) and returns (model, feeds, reference
outputs, output names).
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

import reference as ref

IR_VERSION = 10  # what onnx 1.12's helper writes and ONNX Runtime 1.30 reads

LLM_SIZES = {
    # batch, new tokens, past tokens, vocab, hidden, q heads, kv heads, head
    # size, MLP width, layers
    "test": dict(B=2, S=5, P=7, V=64, H=32, Hq=4, Hkv=2, D=8, F=64, layers=1),
    "bench": dict(B=1, S=32, P=224, V=8000, H=512, Hq=8, Hkv=2, D=64, F=1536, layers=2),
}
UNET_SIZES = {
    "test": dict(N=1, C=3, HW=16, ch=(4, 8, 16), groups=2),
    "bench": dict(N=1, C=3, HW=128, ch=(32, 64, 128), groups=8),
}


class _Graph:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.n = [], [], 0

    def weight(self, name, shape, std):
        w = (self.rng.standard_normal(shape) * std).astype(np.float32)
        self.inits.append(numpy_helper.from_array(w, name))
        return name, w

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def node(self, op, inputs, n_out=1, **attrs):
        self.n += 1
        outs = ["%s_%d%s" % (op.lower(), self.n, "" if i == 0 else "_%d" % i)
                for i in range(n_out)]
        self.nodes.append(helper.make_node(op, inputs, outs, name="%s_%d" % (op, self.n),
                                           **attrs))
        return outs if n_out > 1 else outs[0]

    def model(self, name, inputs, outputs, opset):
        g = helper.make_graph(self.nodes, name, inputs, outputs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphcc tests/models/modern")
        m.ir_version = IR_VERSION
        return m


def _silu(x):
    return x / (1 + np.exp(-x))


def _rope_caches(max_pos, D, base=10000.0):
    inv = 1.0 / base ** (np.arange(0, D, 2, dtype=np.float64) / D)
    ang = np.arange(max_pos, dtype=np.float64)[:, None] * inv[None, :]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


def llm_block(size="test", seed=23):
    c = LLM_SIZES[size]
    B, S, P, V, H, Hq, Hkv, D, F = (c[k] for k in "B S P V H Hq Hkv D F".split())
    g = _Graph(seed)
    rng = g.rng
    emb_name, emb = g.weight("embed_tokens", (V, H), 1.0)
    cos, sin = _rope_caches(P + S, D)
    cos_n, sin_n = g.const("rope_cos", cos), g.const("rope_sin", sin)
    feeds = {"input_ids": rng.integers(0, V, (B, S)).astype(np.int64),
             "position_ids": np.tile(np.arange(P, P + S, dtype=np.int64), (B, 1))}
    for i in range(c["layers"]):
        feeds["past_key_%d" % i] = rng.standard_normal((B, Hkv, P, D)).astype(np.float32)
        feeds["past_value_%d" % i] = rng.standard_normal((B, Hkv, P, D)).astype(np.float32)

    x_name = g.node("Gather", [emb_name, "input_ids"], axis=0)
    x = emb[feeds["input_ids"]].astype(np.float64)
    presents, want = [], {}
    for i in range(c["layers"]):
        w = {k: g.weight("l%d_%s" % (i, k), shape, std) for k, shape, std in [
            ("ln1", (H,), 0.1), ("wq", (H, Hq * D), H ** -0.5), ("wk", (H, Hkv * D), H ** -0.5),
            ("wv", (H, Hkv * D), H ** -0.5), ("wo", (Hq * D, H), (Hq * D) ** -0.5),
            ("ln2", (H,), 0.1), ("wg", (H, F), H ** -0.5), ("wu", (H, F), H ** -0.5),
            ("wd", (F, H), F ** -0.5)]}
        for k in ("ln1", "ln2"):  # norm weights around 1
            arr = w[k][1]
            arr += 1.0
            g.inits[[t.name for t in g.inits].index(w[k][0])].CopyFrom(
                numpy_helper.from_array(arr, w[k][0]))
        pk, pv = "past_key_%d" % i, "past_value_%d" % i
        h_name = g.node("RMSNormalization", [x_name, w["ln1"][0]], axis=-1, epsilon=1e-6)
        q_name = g.node("MatMul", [h_name, w["wq"][0]])
        k_name = g.node("MatMul", [h_name, w["wk"][0]])
        v_name = g.node("MatMul", [h_name, w["wv"][0]])
        qr = g.node("RotaryEmbedding", [q_name, cos_n, sin_n, "position_ids"], num_heads=Hq)
        kr = g.node("RotaryEmbedding", [k_name, cos_n, sin_n, "position_ids"], num_heads=Hkv)
        att, prk, prv = g.node("Attention", [qr, kr, v_name, "", pk, pv], n_out=3,
                               q_num_heads=Hq, kv_num_heads=Hkv, is_causal=1)
        o_name = g.node("MatMul", [att, w["wo"][0]])
        x2_name = g.node("Add", [x_name, o_name])
        h2_name = g.node("RMSNormalization", [x2_name, w["ln2"][0]], axis=-1, epsilon=1e-6)
        gate = g.node("MatMul", [h2_name, w["wg"][0]])
        up = g.node("MatMul", [h2_name, w["wu"][0]])
        silu = g.node("Mul", [gate, g.node("Sigmoid", [gate])])
        down = g.node("MatMul", [g.node("Mul", [silu, up]), w["wd"][0]])
        x_name = g.node("Add", [x2_name, down])
        presents += [(prk, "present_key_%d" % i), (prv, "present_value_%d" % i)]

        # the reference, in float64
        W = {k: v[1].astype(np.float64) for k, v in w.items()}
        h = ref.rms_norm(x, W["ln1"], -1, 1e-6)
        pos = feeds["position_ids"]
        q = ref.rotary(h @ W["wq"], cos, sin, pos, num_heads=Hq)
        k = ref.rotary(h @ W["wk"], cos, sin, pos, num_heads=Hkv)
        y, rk, rv = ref.attention(q, k, h @ W["wv"], None, feeds[pk], feeds[pv], 1, Hq, Hkv)
        want["present_key_%d" % i], want["present_value_%d" % i] = rk, rv
        x2 = x + y @ W["wo"]
        h2 = ref.rms_norm(x2, W["ln2"], -1, 1e-6)
        x = x2 + (_silu(h2 @ W["wg"]) * (h2 @ W["wu"])) @ W["wd"]

    lnf_name, lnf = g.weight("norm", (H,), 0.1)
    lnf += 1.0
    g.inits[-1].CopyFrom(numpy_helper.from_array(lnf, lnf_name))
    head_name, head = g.weight("lm_head", (H, V), H ** -0.5)
    hf = g.node("RMSNormalization", [x_name, lnf_name], axis=-1, epsilon=1e-6)
    logits = g.node("MatMul", [hf, head_name])
    want["logits"] = ref.rms_norm(x, lnf.astype(np.float64), -1, 1e-6) @ head.astype(np.float64)
    # name the outputs as exporters do
    rename = dict([(logits, "logits")] + presents)
    for n in g.nodes:
        n.output[:] = [rename.get(o, o) for o in n.output]
        n.input[:] = [rename.get(i, i) for i in n.input]
    T = P + S
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [B, S]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, [B, S])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [B, S, V])]
    for i in range(c["layers"]):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info("past_%s_%d" % (kind, i),
                                                        TensorProto.FLOAT, [B, Hkv, P, D]))
            outputs.append(helper.make_tensor_value_info("present_%s_%d" % (kind, i),
                                                         TensorProto.FLOAT, [B, Hkv, T, D]))
    names = [o.name for o in outputs]
    m = g.model("llm_block", inputs, outputs, 23)
    return m, feeds, [want[n].astype(np.float32) for n in names], names


def _conv(x, w, b, pad):
    n, cin, hh, ww = x.shape
    cout, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    cols = np.stack([xp[:, :, i:i + oh, j:j + ow] for i in range(kh) for j in range(kw)], 2)
    y = np.einsum("nckhw,ock->nohw", cols, w.reshape(cout, cin, kh * kw))
    return y + b[None, :, None, None]


def unet_gn(size="test", seed=21):
    c = UNET_SIZES[size]
    N, C, HW, groups = c["N"], c["C"], c["HW"], c["groups"]
    c1, c2, c3 = c["ch"]
    g = _Graph(seed)
    feeds = {"image": g.rng.standard_normal((N, C, HW, HW)).astype(np.float32)}
    scales = g.const("up_scales", np.array([1, 1, 2, 2], np.float32))

    def conv(xn, x, cin, cout, k, tag):
        wn, w = g.weight(tag + "_w", (cout, cin, k, k), (cin * k * k) ** -0.5)
        bn, b = g.weight(tag + "_b", (cout,), 0.1)
        yn = g.node("Conv", [xn, wn, bn], kernel_shape=[k, k], pads=[k // 2] * 4)
        return yn, _conv(x, w.astype(np.float64), b.astype(np.float64), k // 2)

    def gn_silu(xn, x, ch, tag):
        sn, s = g.weight(tag + "_gn_scale", (ch,), 0.2)
        s += 1.0
        g.inits[-1].CopyFrom(numpy_helper.from_array(s, sn))
        bn, b = g.weight(tag + "_gn_bias", (ch,), 0.1)
        yn = g.node("GroupNormalization", [xn, sn, bn], num_groups=groups, epsilon=1e-5)
        y = ref.group_norm(x, s.astype(np.float64), b.astype(np.float64), groups, 1e-5)
        return g.node("Mul", [yn, g.node("Sigmoid", [yn])]), _silu(y)

    def block(xn, x, cin, cout, tag):
        xn, x = gn_silu(*conv(xn, x, cin, cout, 3, tag + "a"), cout, tag + "a")
        return gn_silu(*conv(xn, x, cout, cout, 3, tag + "b"), cout, tag + "b")

    def down(xn, x):
        n, ch, h, w = x.shape
        y = x.reshape(n, ch, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        return g.node("MaxPool", [xn], kernel_shape=[2, 2], strides=[2, 2]), y

    def up(xn, x):
        yn = g.node("Resize", [xn, "", scales], mode="nearest",
                    coordinate_transformation_mode="asymmetric", nearest_mode="floor")
        return yn, x.repeat(2, axis=2).repeat(2, axis=3)

    def cat(an, a, bn, b):
        return g.node("Concat", [an, bn], axis=1), np.concatenate([a, b], 1)

    x = feeds["image"].astype(np.float64)
    an, a = block("image", x, C, c1, "enc1")
    bn, b = block(*down(an, a), c1, c2, "enc2")
    mn, m = block(*down(bn, b), c2, c3, "mid")
    dn, d = block(*cat(*up(mn, m), bn, b), c3 + c2, c2, "dec2")
    en, e = block(*cat(*up(dn, d), an, a), c2 + c1, c1, "dec1")
    on, o = conv(en, e, c1, 2, 1, "head")
    g.nodes[-1].output[0] = "mask"
    inputs = [helper.make_tensor_value_info("image", TensorProto.FLOAT, [N, C, HW, HW])]
    outputs = [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [N, 2, HW, HW])]
    return g.model("unet_gn", inputs, outputs, 21), feeds, [o.astype(np.float32)], ["mask"]


MODELS = {"llm_block": llm_block, "unet_gn": unet_gn}
