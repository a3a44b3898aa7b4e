#!/usr/bin/python3
"""The two benchmark models that the test set does not have.

Usage: bench_models.py OUTDIR [--big DIM | --modern NAME...]

  OUTDIR/identity/model.onnx, input.npy   one Identity node on 1x1000 float
      (onnx.helper): what a call costs when there is nothing to compute
  OUTDIR/demo/model-decomposed.onnx, x.npy
      the demo network of models/demo/make_demo.py with the same weights,
      exported with its two custom operations written in standard ONNX ops
      (ChannelShuffle: Reshape -> Transpose -> Reshape; ScaledSwish: Mul,
      Sigmoid) -- the form ONNX Runtime, which cannot load graphcc op
      packages, runs; graphcc runs models/demo/model.onnx with plugins/demo.

  OUTDIR/big-DIM/model.onnx, weights.bin, x.npy   (--big DIM)
      "big weights": six DIM x DIM MatMul weights (float32) in ONNX external
      data (one file), x of 4 x DIM, a GELU-free chain y = x W1 W2 ... W6
      scaled by 1/sqrt(DIM) per step -- issue 19's 1.5 GB model at DIM 8192;
      `make bench` uses a smaller DIM unless told (BIG_DIM).

  OUTDIR/NAME/model.onnx, <input>.npy   (--modern NAME...)
      the opset-23 LLM decoder block and the opset-21 U-Net of
      tests/models/modern/builders.py at bench size (the test set keeps the
      small ones), made with onnx.helper

Files that exist and are newer than this script and make_demo.py are kept.
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEMO_SCRIPT = os.path.join(ROOT, "models", "demo", "make_demo.py")
MODERN_DIR = os.path.join(ROOT, "tests", "models", "modern")


def _fresh(paths, sources):
    newest = max(os.path.getmtime(s) for s in sources)
    return all(os.path.exists(p) and os.path.getmtime(p) > newest for p in paths)


def identity(outdir):
    import onnx
    from onnx import TensorProto, helper
    d = os.path.join(outdir, "identity")
    files = [os.path.join(d, f) for f in ("model.onnx", "input.npy")]
    if _fresh(files, [__file__]):
        return
    os.makedirs(d, exist_ok=True)
    g = helper.make_graph(
        [helper.make_node("Identity", ["input"], ["output"], name="identity")], "identity",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 1000])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 1000])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8  # onnx 1.12's; ONNX Runtime reads it
    onnx.checker.check_model(m)
    onnx.save(m, files[0])
    np.save(files[1], np.random.default_rng(7).standard_normal((1, 1000)).astype(np.float32))
    print("identity       made with onnx.helper", flush=True)


def demo(outdir):
    d = os.path.join(outdir, "demo")
    files = [os.path.join(d, f) for f in ("model-decomposed.onnx", "x.npy")]
    if _fresh(files, [__file__, DEMO_SCRIPT]):
        return
    import importlib.util
    import warnings

    import torch
    spec = importlib.util.spec_from_file_location("make_demo", DEMO_SCRIPT)
    md = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(md)
    # The torch-side definitions of the custom ops, called directly instead of
    # through torch.ops.graphcc_demo: the exporter then traces them into
    # standard ops instead of the custom symbolics.
    md.ChannelShuffle.forward = lambda self, x: md._channel_shuffle(x, self.groups)
    md.ScaledSwish.forward = lambda self, x: md._scaled_swish(x, self.beta, self.scale)
    m = md.build()
    os.makedirs(d, exist_ok=True)
    tmp = files[0] + ".tmp"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, torch.zeros(1, 3, 64, 64), tmp, input_names=["x"],
                          output_names=["y"], opset_version=13)
    import onnx
    custom = [n.op_type for n in onnx.load(tmp).graph.node if n.domain not in ("", "ai.onnx")]
    if custom:
        sys.exit("bench_models.py: decomposed demo still has custom ops %s" % custom)
    np.save(files[1], md.seeded_input())
    os.replace(tmp, files[0])
    print("demo           exported with the custom ops decomposed", flush=True)


def big(outdir, dim):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    d = os.path.join(outdir, "big-%d" % dim)
    files = [os.path.join(d, f) for f in ("model.onnx", "weights.bin", "x.npy")]
    if _fresh(files, [__file__]):
        return
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(11)
    nodes, inits, prev = [], [], "x"
    for i in range(6):
        w = (rng.standard_normal((dim, dim), dtype=np.float32) / np.sqrt(dim)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w%d" % i))
        out = "y" if i == 5 else "h%d" % i
        nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], [out], name="mm%d" % i))
        prev = out
    g = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                       [4, dim])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, dim])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    for f in files[:2]:
        if os.path.exists(f):
            os.remove(f)
    onnx.save_model(m, files[0], save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    np.save(files[2], rng.standard_normal((4, dim)).astype(np.float32))
    print("big-%-10d made with onnx.helper (%.0f MiB of weights in external data)"
          % (dim, os.path.getsize(files[1]) / 2**20), flush=True)


def modern(outdir, names):
    sys.path.insert(0, MODERN_DIR)
    import builders
    import onnx
    for name in names:
        d = os.path.join(outdir, name)
        if _fresh([os.path.join(d, "model.onnx")],
                  [__file__] + [os.path.join(MODERN_DIR, f)
                                for f in ("builders.py", "reference.py")]):
            continue
        model, feeds, _, _ = builders.MODELS[name]("bench")
        os.makedirs(d, exist_ok=True)
        for k, v in feeds.items():
            np.save(os.path.join(d, k + ".npy"), v)
        onnx.save(model, os.path.join(d, "model.onnx"))
        print("%-14s made with onnx.helper (%d nodes)" % (name, len(model.graph.node)),
              flush=True)


def main(argv):
    if len(argv) >= 3 and argv[2] == "--modern":
        modern(argv[1], argv[3:])
        return 0
    if len(argv) == 4 and argv[2] == "--big":
        big(argv[1], int(argv[3]))
        return 0
    if len(argv) != 2:
        sys.exit(__doc__)
    identity(argv[1])
    demo(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
