#!/usr/bin/python3
"""The demo model: a small image classifier exported by PyTorch.

  make_demo.py --export DIR     writes DIR/model.onnx (the file in the repo)
  make_demo.py --reference DIR  writes DIR/x.npy (seeded input) and
                                DIR/y_ref.npy (PyTorch's output for it)

The weights come from torch.manual_seed(0), so the exported file and the
reference agree without shipping anything but the .onnx file.
"""
import argparse
import os

import numpy as np
import torch
import torch.nn as nn


class SmallNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, groups=1), nn.BatchNorm2d(32), nn.ReLU6(),
            nn.Conv2d(32, 32, 3, padding=1, groups=32), nn.Hardswish(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(32, 64), nn.GELU(), nn.Linear(64, classes))

    def forward(self, x):
        return torch.softmax(self.head(self.features(x)), dim=-1)


def build():
    torch.manual_seed(0)
    m = SmallNet()
    # Non-trivial batch-norm statistics, so folding them is visible.
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
    return m.eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--export")
    ap.add_argument("--reference")
    a = ap.parse_args()
    m = build()
    if a.export:
        os.makedirs(a.export, exist_ok=True)
        torch.onnx.export(m, torch.zeros(1, 3, 64, 64), os.path.join(a.export, "model.onnx"),
                          input_names=["x"], output_names=["y"], opset_version=13,
                          dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
    if a.reference:
        os.makedirs(a.reference, exist_ok=True)
        x = np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)
        with torch.no_grad():
            y = m(torch.from_numpy(x)).numpy()
        np.save(os.path.join(a.reference, "x.npy"), x)
        np.save(os.path.join(a.reference, "y_ref.npy"), y)


if __name__ == "__main__":
    main()
