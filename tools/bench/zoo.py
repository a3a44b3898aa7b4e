#!/usr/bin/python3
"""The PyTorch model zoo of `make bench`: what users export, at bench time.

Usage: zoo.py OUTDIR [--only NAME...] [--list]

For each model writes OUTDIR/NAME/model.onnx and one OUTDIR/NAME/<input>.npy
per graph input (seeded). torchvision models are built with weights=None
(nothing is downloaded), their BatchNorms given realistic statistics (as the
test set's tests/models/torch_models.py does), exported with
torch.onnx.export at opset 13, 1x3x224x224 (inception_v3 299x299, the
segmentation model 256x256). Attention is exported from
modules with batch_first=False, which keeps PyTorch on its math path (plain
MatMul / Softmax / LayerNorm pieces, as a user's export has them). A model
whose files exist and are newer than this script is kept.

`--list` prints "NAME<TAB>label<TAB>input,input..." for each model (the
driver, tools/bench/bench.py, reads it).
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPSET = 13
torch = nn = None


def _import_torch():
    global torch, nn
    if torch is None:
        import torch as t
        import torch.nn
        torch, nn = t, t.nn


def _tv(name, shape=(1, 3, 224, 224), **kw):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None, **kw), {"input": _randn(shape)}
    return make


def _segmentation(name, shape=(1, 3, 256, 256)):
    """A torchvision segmentation model; its "out" map is the output."""
    def make():
        import torchvision.models.segmentation as seg

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.m = getattr(seg, name)(weights=None, weights_backbone=None)

            def forward(self, x):
                return self.m(x)["out"]
        return M(), {"input": _randn(shape)}
    return make


def _randn(shape, seed=1234):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _rnn(kind, bidirectional):
    def make():
        cls = nn.LSTM if kind == "lstm" else nn.GRU

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = cls(64, 64, num_layers=2, bidirectional=bidirectional)

            def forward(self, x):
                return self.rnn(x)[0]
        return M(), {"input": _randn((20, 2, 64))}  # seq 20, batch 2, features 64
    return make


def _seq2seq():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.t = nn.Transformer(d_model=256, nhead=4, num_encoder_layers=2,
                                    num_decoder_layers=2, dim_feedforward=1024,
                                    dropout=0.0, batch_first=False)
            self.register_buffer("tgt_mask", self.t.generate_square_subsequent_mask(32))

        def forward(self, src, tgt):
            return self.t(src, tgt, tgt_mask=self.tgt_mask)
    return M(), {"src": _randn((64, 1, 256)), "tgt": _randn((32, 1, 256), 99)}


def _bert():
    """Token and position embeddings, 4 encoder layers, a padding mask
    (the last 32 of 128 tokens are padding)."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(1000, 256)
            self.pos = nn.Parameter(torch.randn(128, 1, 256) * 0.02)
            self.norm = nn.LayerNorm(256)
            layer = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, activation="gelu",
                                               batch_first=False)
            self.enc = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)

        def forward(self, ids, mask):
            x = self.norm(self.tok(ids).transpose(0, 1) + self.pos)
            return self.enc(x, src_key_padding_mask=mask == 0)
    ids = np.random.default_rng(5).integers(0, 1000, (1, 128)).astype(np.int64)
    mask = np.ones((1, 128), np.int64)
    mask[:, 96:] = 0
    return M(), {"ids": ids, "mask": mask}


def _unet():
    """A small U-Net: GroupNorm and InstanceNorm, MaxPool down, ConvTranspose
    and bilinear Resize up, skip Concats."""
    def block(cin, cout, norm):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), norm(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, padding=1), norm(cout), nn.ReLU())
    gn = lambda c: nn.GroupNorm(4, c)
    inorm = lambda c: nn.InstanceNorm2d(c, affine=True)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = block(3, 32, gn), block(32, 64, gn), block(64, 128, inorm)
            self.pool = nn.MaxPool2d(2)
            self.up2 = nn.ConvTranspose2d(128, 64, 2, stride=2)
            self.d2 = block(128, 64, gn)
            self.up1 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.d1 = block(96, 32, inorm)
            self.out = nn.Conv2d(32, 2, 1)

        def forward(self, x):
            a = self.e1(x)
            b = self.e2(self.pool(a))
            c = self.e3(self.pool(b))
            d = self.d2(torch.cat([self.up2(c), b], 1))
            return self.out(self.d1(torch.cat([self.up1(d), a], 1)))
    return M(), {"input": _randn((1, 3, 128, 128))}


def _audio():
    """A 1-D convolutional keyword spotter (M5-like) on one second at 16 kHz."""
    def blk(cin, cout, k, s=1):
        return [nn.Conv1d(cin, cout, k, stride=s, padding=k // 2), nn.BatchNorm1d(cout),
                nn.ReLU(), nn.MaxPool1d(4)]

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(*blk(1, 64, 80, 4), *blk(64, 64, 3), *blk(64, 128, 3),
                                   *blk(128, 256, 3))
            self.fc = nn.Linear(256, 35)

        def forward(self, x):
            return self.fc(self.f(x).mean(-1))
    return M(), {"input": _randn((1, 1, 16000))}


# name: (label, maker, ops its export must contain)
MODELS = {
    "resnet50": ("resnet50", _tv("resnet50"), {"Conv", "Gemm"}),
    "densenet121": ("densenet121", _tv("densenet121"), {"Conv", "Concat"}),
    "vgg11": ("vgg11", _tv("vgg11"), {"Conv", "Gemm"}),
    "mobilenet_v3": ("mobilenet_v3_large", _tv("mobilenet_v3_large"), {"Conv", "HardSigmoid"}),
    # outside the models the kernels were tuned on: both slower than ONNX Runtime at two
    # threads when they were added
    "mnasnet1_0": ("mnasnet1_0 (depthwise 3x3 and 5x5, Relu)", _tv("mnasnet1_0"), {"Conv", "Add"}),
    "squeezenet1_1": ("squeezenet1_1", _tv("squeezenet1_1"), {"Conv", "Concat", "MaxPool"}),
    "efficientnet_b0": ("efficientnet_b0", _tv("efficientnet_b0"), {"Conv", "Sigmoid"}),
    "shufflenet_v2": ("shufflenet_v2_x1_0", _tv("shufflenet_v2_x1_0"), {"Conv", "Transpose"}),
    "regnet_y_400mf": ("regnet_y_400mf (grouped convs)", _tv("regnet_y_400mf"), {"Conv"}),
    "convnext_tiny": ("convnext_tiny", _tv("convnext_tiny"), {"Conv", "MatMul", "Erf"}),
    "swin_t": ("swin_t", _tv("swin_t"), {"MatMul", "Softmax"}),
    "maxvit_t": ("maxvit_t (Einsum attention)", _tv("maxvit_t"), {"Einsum", "Conv"}),
    "inception_v3": ("inception_v3 299x299 (Pad + AveragePool)",
                     _tv("inception_v3", (1, 3, 299, 299), aux_logits=False, init_weights=True),
                     {"Pad", "AveragePool", "Concat"}),
    "deeplabv3": ("deeplabv3_mobilenet_v3_large 256x256 (dilated convs)",
                  _segmentation("deeplabv3_mobilenet_v3_large"), {"Conv", "Resize"}),
    "lstm": ("LSTM 2 layers, h64, seq 20, batch 2", _rnn("lstm", False), {"LSTM"}),
    "bilstm": ("bidirectional LSTM, 2 layers", _rnn("lstm", True), {"LSTM"}),
    "gru": ("GRU 2 layers, h64, seq 20, batch 2", _rnn("gru", False), {"GRU"}),
    "bigru": ("bidirectional GRU, 2 layers", _rnn("gru", True), {"GRU"}),
    "seq2seq": ("nn.Transformer 2+2 layers d256, src 64, tgt 32", _seq2seq,
                {"MatMul", "Softmax"}),
    "bert": ("BERT-like encoder, 4 layers d256, seq 128, padding mask", _bert,
             {"Gather", "MatMul", "Softmax", "Equal"}),
    "unet": ("U-Net 128x128 (GroupNorm, InstanceNorm, ConvTranspose, Resize)", _unet,
             {"ConvTranspose", "InstanceNormalization", "Resize", "Concat"}),
    "audio1d": ("1-D conv audio net, 16000 samples", _audio, {"Conv", "MaxPool"}),
}


def _fresh(d, names):
    me = os.path.getmtime(os.path.abspath(__file__))
    files = ["model.onnx"] + [n + ".npy" for n in names]
    return all(os.path.exists(os.path.join(d, f)) and os.path.getmtime(os.path.join(d, f)) > me
               for f in files)


def input_names(name):
    """The input names without building the model (for --list)."""
    return {"seq2seq": ["src", "tgt"], "bert": ["ids", "mask"]}.get(name, ["input"])


def export(name, outdir):
    import importlib.util
    import onnx
    spec = importlib.util.spec_from_file_location(
        "torch_models", os.path.join(ROOT, "tests", "models", "torch_models.py"))
    tm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tm)
    tm._import_torch()
    t0 = time.time()
    torch.manual_seed(0)
    label, make, required = MODELS[name]
    model, feeds = make()
    if name not in ("lstm", "bilstm", "gru", "bigru", "seq2seq", "bert"):
        first = next(iter(feeds.values()))
        tm._realistic_batchnorm(model, first.shape)
    model.eval()
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    tmp = os.path.join(d, "model.onnx.tmp")
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, tmp, opset_version=OPSET, input_names=list(feeds),
                          output_names=["output"], do_constant_folding=True)
    m = onnx.load(tmp)
    ops = {n.op_type for n in m.graph.node}
    if required - ops:
        sys.exit("zoo.py: %s: the export lacks %s (ops: %s)" % (name, sorted(required - ops),
                                                               sorted(ops)))
    graph_inputs = [i.name for i in m.graph.input]
    if graph_inputs != list(feeds):
        sys.exit("zoo.py: %s: exported inputs %s, expected %s" % (name, graph_inputs,
                                                                 list(feeds)))
    for k, v in feeds.items():
        np.save(os.path.join(d, k + ".npy"), v)
    os.replace(tmp, os.path.join(d, "model.onnx"))
    print("%-16s exported in %.1fs (%d nodes)" % (name, time.time() - t0, len(m.graph.node)),
          flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", choices=sorted(MODELS), metavar="NAME")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    if a.list:
        for k, (label, _, _) in MODELS.items():
            print("%s\t%s\t%s" % (k, label, ",".join(input_names(k))))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    for name in a.only or list(MODELS):
        if _fresh(os.path.join(a.outdir, name), input_names(name)):
            continue
        _import_torch()
        export(name, a.outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
