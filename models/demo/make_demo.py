#!/usr/bin/python3
"""The demo model: a small ShuffleNet-style classifier with two custom
operations, as a PyTorch user would write and export it.

  make_demo.py --export DIR     writes DIR/model.onnx (the file in the repo)
  make_demo.py --reference DIR  writes DIR/x.npy (seeded input) and
                                DIR/y_ref.npy (PyTorch's output for it)

The custom operations are defined on the torch side with torch.library (so
the model runs in PyTorch) and exported into the ONNX domain
com.graphcc.demo (version 1) by symbolics registered with
torch.onnx.register_custom_op_symbolic:

  graphcc_demo::channel_shuffle(Tensor x, int groups)
      -> com.graphcc.demo::ChannelShuffle(x), int attribute `group`
         (ShuffleNet's channel shuffle as one fused copy instead of
         Reshape -> Transpose -> Reshape)
  graphcc_demo::scaled_swish(Tensor x, float[] beta, float scale)
      -> com.graphcc.demo::ScaledSwish(x), floats attribute `beta` (one per
         channel, or one for all), float attribute `scale` (left out when 1,
         the op's default): y = scale * x * sigmoid(beta[c] * x), c = axis 1
         (Swish-beta with a per-channel beta learned in training and frozen
         into the node at export)

plugins/demo/ is the op package that lets graphcc compile and run them.
Weights come from torch.manual_seed(0), so the exported file and the
reference agree without shipping anything but the .onnx file.
"""
import argparse
import os
import warnings

import numpy as np
import torch
import torch.nn as nn
from torch.library import Library

DOMAIN = "com.graphcc.demo"
DOMAIN_VERSION = 1

# ---------------------------------------------------------------- torch side

_lib = Library("graphcc_demo", "DEF")
_lib.define("channel_shuffle(Tensor x, int groups) -> Tensor")
_lib.define("scaled_swish(Tensor x, float[] beta, float scale) -> Tensor")


def _channel_shuffle(x, groups):
    n, c = x.shape[0], x.shape[1]
    rest = list(x.shape[2:])
    return x.reshape([n, groups, c // groups] + rest).transpose(1, 2).reshape(x.shape).clone()


def _scaled_swish(x, beta, scale):
    b = torch.tensor(beta, dtype=x.dtype).reshape([1, -1] + [1] * (x.dim() - 2))
    return scale * x * torch.sigmoid(b * x)


_lib.impl("channel_shuffle", _channel_shuffle, "CPU")
_lib.impl("scaled_swish", _scaled_swish, "CPU")

# ---------------------------------------------------------------- ONNX side


def _channel_shuffle_symbolic(g, x, groups):
    groups = torch.onnx.symbolic_helper._get_const(groups, "i", "groups")
    return g.op(DOMAIN + "::ChannelShuffle", x, group_i=groups).setType(x.type())


def _scaled_swish_symbolic(g, x, beta, scale):
    beta = torch.onnx.symbolic_helper._get_const(beta, "fs", "beta")
    scale = torch.onnx.symbolic_helper._get_const(scale, "f", "scale")
    attrs = {"beta_f": list(beta)}
    if scale != 1.0:
        attrs["scale_f"] = scale
    return g.op(DOMAIN + "::ScaledSwish", x, **attrs).setType(x.type())


torch.onnx.register_custom_op_symbolic("graphcc_demo::channel_shuffle",
                                       _channel_shuffle_symbolic, 9)
torch.onnx.register_custom_op_symbolic("graphcc_demo::scaled_swish",
                                       _scaled_swish_symbolic, 9)

# ---------------------------------------------------------------- the model


class ChannelShuffle(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        return torch.ops.graphcc_demo.channel_shuffle(x, self.groups)


class ScaledSwish(nn.Module):
    """Swish with a per-channel beta (or one for all) and an output scale;
    the values are plain floats because the exporter freezes them into the
    node's attributes."""

    def __init__(self, beta, scale=1.0):
        super().__init__()
        self.beta = [float(b) for b in beta]
        self.scale = float(scale)

    def forward(self, x):
        return torch.ops.graphcc_demo.scaled_swish(x, self.beta, self.scale)


class ShuffleUnit(nn.Module):
    """ShuffleNet unit (stride 1): grouped 1x1 conv, shuffle, depthwise 3x3,
    grouped 1x1 conv, residual."""

    def __init__(self, ch, groups):
        super().__init__()
        self.branch = nn.Sequential(
            nn.Conv2d(ch, ch, 1, groups=groups, bias=False), nn.BatchNorm2d(ch), nn.ReLU(),
            ChannelShuffle(groups),
            nn.Conv2d(ch, ch, 3, padding=1, groups=ch, bias=False), nn.BatchNorm2d(ch),
            nn.Conv2d(ch, ch, 1, groups=groups, bias=False), nn.BatchNorm2d(ch),
        )

    def forward(self, x):
        return torch.relu(x + self.branch(x))


class DemoNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        beta = (0.5 + 1.5 * torch.rand(32, generator=g)).tolist()
        self.features = nn.Sequential(
            nn.Conv2d(3, 24, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(24), nn.ReLU(),
            nn.MaxPool2d(2),                                     # 24 x 16 x 16
            ShuffleUnit(24, groups=3),
            nn.Conv2d(24, 32, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(32),
            ScaledSwish(beta, scale=1.25),                       # 32 x 8 x 8, per channel
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32, 64),
                                  ScaledSwish([1.702]),          # one beta, default scale
                                  nn.Linear(64, classes))

    def forward(self, x):
        return torch.softmax(self.head(self.features(x)), dim=-1)


def build():
    torch.manual_seed(0)
    m = DemoNet()
    # Non-trivial batch-norm statistics and affine terms, so folding them shows.
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.3, 0.3)
    # A trained classifier is confident: a larger head spreads the classes.
    with torch.no_grad():
        for mod in m.head:
            if isinstance(mod, nn.Linear):
                mod.weight.mul_(6.0)
    return m.eval()


def seeded_input():
    return np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", metavar="DIR", help="write DIR/model.onnx")
    ap.add_argument("--reference", metavar="DIR", help="write DIR/x.npy and DIR/y_ref.npy")
    a = ap.parse_args()
    if not (a.export or a.reference):
        ap.error("nothing to do: give --export DIR and/or --reference DIR")
    m = build()
    if a.export:
        os.makedirs(a.export, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(m, torch.zeros(1, 3, 64, 64), os.path.join(a.export, "model.onnx"),
                              input_names=["x"], output_names=["y"], opset_version=13,
                              custom_opsets={DOMAIN: DOMAIN_VERSION})
    if a.reference:
        os.makedirs(a.reference, exist_ok=True)
        x = seeded_input()
        with torch.no_grad():
            y = m(torch.from_numpy(x)).numpy()
        np.save(os.path.join(a.reference, "x.npy"), x)
        np.save(os.path.join(a.reference, "y_ref.npy"), y)


if __name__ == "__main__":
    main()
