"""End-to-end tests of `graphcc dot` and `graphcc run --compare-flavours`.

  dot/demo                 the demo model with its package: exit 0, `dot -Tsvg`
                           renders it, the SVG names every custom node's bound
                           flavour, custom nodes drawn unlike built-in ones
  dot/gcb                  the demo compiled to .gcb: drawn with its bindings
  dot/demo-without-ops     the demo model without its package (does not
                           compile): still drawn, the custom nodes in red
  dot/unsupported          a model with ops nobody provides: drawn from the
                           graph as imported, exactly those nodes red
  dot/escaping             node, tensor, input and output names with quotes,
                           backslashes, <, &, a line break: the SVG shows them
                           as they are
  dot/usage/<what>         usage errors: exit 2
  flavours/worst-pair      tests/flavours' RowSum: three flavours, the worst pair
                           is the one with rowSumSkewed (off by 1e-3 on element
                           0), with its abs and rel difference; the two others
                           agree to float rounding; exit 0; the bound flavour's
                           output is written and right
  flavours/gcb             the same from a .gcb (no registry: the manifest the
                           binding records is loaded again)
  flavours/failing         a fourth flavour that writes into its input: named
                           with the tensor, exit 1
  flavours/demo            the demo: on the 4-D float32 ScaledSwish both flavours
                           run and differ by float rounding; on the 2-D one the
                           plane-wise flavour declines (reported); exit 0
  flavours/plain-run       without the option: no comparison report

The fixture package is built by `make test-packages` into
BUILD/tests/flavours/ (from tests/flavours/), the demo package by
`make plugins`.
"""
import os
import re
import subprocess
import threading
import xml.etree.ElementTree as ET

import numpy as np

import run

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO_DOMAIN = "com.graphcc.demo"
# The demo's custom nodes and the flavour the package binds each to.
DEMO_BOUND = {
    "/features/features.4/branch/branch.3/ChannelShuffle": "channelShuffleCopy",
    "/features/features.7/ScaledSwish": "scaledSwishPlanesF32",
    "/head/head.2/ScaledSwish": "scaledSwishGeneric",
}
SKEW = 1e-3  # rowSumSkewed's deliberate error on element 0
WORST_RE = re.compile(r"worst pair: (\w+) vs (\w+): max abs diff (\S+) \(output '([^']*)'"
                      r"(\[[\d,]*\]): (\S+) vs (\S+)\), max rel diff (\S+)")


def _demo(ctx):
    return (os.path.join(ctx.root, "models", "demo", "model.onnx"),
            os.path.join(ctx.plugins, "demo", "demo.yaml"))


def _flavours(ctx, name="flavours.yaml"):
    return os.path.join(ctx.build, "tests", "flavours", name)


def _need(*paths):
    for p in paths:
        if not os.path.exists(p):
            return run.Result(False, "%s is missing (make plugins test-packages)" % p)
    return None


def _work(ctx, *parts):
    d = os.path.join(ctx.work, "dot_flavours", *parts)
    os.makedirs(d, exist_ok=True)
    return d


def _render(dot_text, svg_path):
    """Runs `dot -Tsvg`; -> (None, svg text) or (why, "")."""
    try:
        p = subprocess.run(["dot", "-Tsvg", "-o", svg_path], input=dot_text.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except FileNotFoundError:
        return "graphviz's dot is not installed (tools/install-deps.sh installs it)", ""
    except subprocess.TimeoutExpired:
        return "dot -Tsvg timed out", ""
    if p.returncode != 0 or not os.path.exists(svg_path):
        return "dot -Tsvg exited %d: %s" % (p.returncode, run._txt(p.stderr)[-500:]), ""
    with open(svg_path, encoding="utf-8") as f:
        return None, f.read()


def _svg_texts(svg):
    """-> (every <text> content, every xlink:title) of an SVG, unescaped."""
    root = ET.fromstring(svg)
    texts = ["".join(e.itertext()) for e in root.iter() if e.tag.endswith("}text")]
    titles = [v for e in root.iter() for k, v in e.attrib.items() if k.endswith("}title")]
    return texts, titles


def _dot_and_render(ctx, tag, args):
    """graphcc dot ARGS, then dot -Tsvg. -> (Result or None, dot text, svg, stderr)."""
    rc, out, err = run.run_graphcc(ctx, ["dot"] + args)
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err), out, "", err
    if not out.lstrip().startswith("digraph"):
        return run.Result(False, "stdout is not a DOT digraph", out[:500] + err), out, "", err
    with open(os.path.join(_work(ctx, "dot"), tag + ".dot"), "w") as f:
        f.write(out)
    why, svg = _render(out, os.path.join(_work(ctx, "dot"), tag + ".svg"))
    if why:
        return run.Result(False, why, err), out, "", err
    return None, out, svg, err


def _statement(dot, node_name):
    """The DOT statement (one line) of the node whose bold title is node_name
    (as graphcc writes it: an HTML-like label, name escaped)."""
    esc = (node_name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
           .replace('"', "&quot;").replace("\n", "<br/>"))
    hits = [ln for ln in dot.splitlines() if "<b>%s</b>" % esc in ln]
    return hits[0] if len(hits) == 1 else None


def _is_red(stmt):
    return "#d00000" in stmt and "UNSUPPORTED" in stmt


# ---------------------------------------------------------------- dot

def dot_demo(ctx):
    model, ops = _demo(ctx)
    missing = _need(ops)
    if missing:
        return missing
    bad, dot, svg, err = _dot_and_render(ctx, "demo", [model, "--ops", ops])
    if bad:
        return bad
    texts, _ = _svg_texts(svg)
    alltext = "\n".join(texts)
    for node, flavour in DEMO_BOUND.items():
        if flavour not in alltext:
            return run.Result(False, "the SVG does not show flavour %s (node %s)"
                              % (flavour, node), alltext[:2000])
        stmt = _statement(dot, node)
        if not stmt:
            return run.Result(False, "no single DOT node for %s" % node, dot[:3000])
        if "peripheries=2" not in stmt or flavour not in stmt or DEMO_DOMAIN not in stmt:
            return run.Result(False, "custom node %s is not drawn as one (double border, "
                              "domain, flavour): %s" % (node, stmt), "")
    conv = _statement(dot, "/features/features.0/Conv")
    if not conv or "peripheries=2" in conv:
        return run.Result(False, "the built-in Conv is not drawn as a plain box: %s" % conv, "")
    # Graph input and output as their own shapes; edges with type and shape.
    if not re.search(r"shape=invhouse.*input x", dot) or not re.search(r"shape=house.*output", dot):
        return run.Result(False, "graph input/output not drawn as distinct shapes", dot[:2000])
    if "float32 1x3x64x64" not in alltext or "float32 1x24x32x32" not in alltext:
        return run.Result(False, "edges do not carry type and shape", alltext[:2000])
    return run.Result(True, "%d bytes of SVG" % len(svg))


def dot_gcb(ctx):
    """The demo compiled to a .gcb draws like the model it came from."""
    model, ops = _demo(ctx)
    missing = _need(ops)
    if missing:
        return missing
    gcb = os.path.join(_work(ctx, "models"), "demo.gcb")
    rc, _, err = run.run_graphcc(ctx, ["compile", model, "--ops", ops, "-o", gcb])
    if rc != 0:
        return run.Result(False, "compile -o: " + run.describe_rc(rc), err)
    bad, dot, svg, err = _dot_and_render(ctx, "demo-gcb", [gcb])
    if bad:
        return bad
    for node, flavour in DEMO_BOUND.items():
        stmt = _statement(dot, node)
        if not stmt or "peripheries=2" not in stmt or flavour not in stmt:
            return run.Result(False, "custom node %s not drawn with flavour %s: %s"
                              % (node, flavour, stmt), dot[:3000])
    return run.Result(True)


def dot_demo_without_ops(ctx):
    model, _ = _demo(ctx)
    bad, dot, svg, err = _dot_and_render(ctx, "demo-without-ops", [model])
    if bad:
        return bad
    for node in DEMO_BOUND:
        stmt = _statement(dot, node)
        if not stmt or not _is_red(stmt):
            return run.Result(False, "custom node %s without its package is not marked "
                              "unsupported: %s" % (node, stmt), dot[:2000])
    conv = _statement(dot, "/features/features.0/Conv")
    if not conv or _is_red(conv):
        return run.Result(False, "the built-in Conv is marked unsupported", conv or "")
    if "does not compile" not in err:
        return run.Result(False, "stderr does not say the model does not compile", err)
    return run.Result(True)


def dot_unsupported(ctx):
    import fixtures
    path = fixtures.unsupported_model(os.path.join(_work(ctx, "models"), "unknown_ops.onnx"))
    bad, dot, svg, err = _dot_and_render(ctx, "unsupported", [path])
    if bad:
        return bad
    for node in ("foo_node", "baz_node", "custom_relu"):
        stmt = _statement(dot, node)
        if not stmt or not _is_red(stmt):
            return run.Result(False, "unsupported node %s is not marked red: %s"
                              % (node, stmt), dot)
    relu = _statement(dot, "builtin_relu")
    if not relu or _is_red(relu):
        return run.Result(False, "built-in Relu is marked unsupported: %s" % relu, dot)
    texts, _ = _svg_texts(svg)
    if sum("UNSUPPORTED" in t for t in texts) != 3:
        return run.Result(False, "the SVG does not show exactly 3 unsupported nodes", "\n".join(texts))
    # The edges still connect the nodes in order: input -> foo -> baz -> relu -> custom -> out.
    if len(re.findall(r"^\s*\w+ -> \w+ ", dot, re.M)) != 5:
        return run.Result(False, "expected 5 edges", dot)
    return run.Result(True)


ODD_NODE = 'say "hi" \\ <b>&amp;\nnext'
ODD_TENSOR = 't "q" \\ back'
ODD_INPUT = 'in "put" \\x'
ODD_OUTPUT = 'out\\"put'


def _odd_names_model(path):
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Relu", [ODD_INPUT], [ODD_TENSOR], name=ODD_NODE),
             helper.make_node("Neg", [ODD_TENSOR], [ODD_OUTPUT], name="plain")]
    g = helper.make_graph(nodes, 'g"raph\\',
                          [helper.make_tensor_value_info(ODD_INPUT, TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info(ODD_OUTPUT, TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def dot_escaping(ctx):
    path = _odd_names_model(os.path.join(_work(ctx, "models"), "odd_names.onnx"))
    bad, dot, svg, err = _dot_and_render(ctx, "escaping", [path])
    if bad:
        return bad
    texts, titles = _svg_texts(svg)
    first, second = ODD_NODE.split("\n")
    for want, where, what in [(first, texts, "node name (first line)"),
                              (second, texts, "node name (second line)"),
                              ("input " + ODD_INPUT, texts, "input name"),
                              ("output " + ODD_OUTPUT, texts, "output name"),
                              (ODD_TENSOR, titles, "tensor name (edge tooltip)")]:
        if want not in where:
            return run.Result(False, "the SVG does not show the %s %r as it is" % (what, want),
                              "\n".join(texts + titles))
    return run.Result(True)


def dot_usage(ctx, args):
    rc, out, err = run.run_graphcc(ctx, ["dot"] + args)
    if rc != 2:
        return run.Result(False, run.describe_rc(rc) + ", expected 2", err)
    return run.Result(True)


# ---------------------------------------------------------------- --compare-flavours

_rowsum_lock = threading.Lock()
_rowsum_made = {}


def _rowsum_case(ctx):
    """A model Relu -> RowSum(scale 0.5) -> Neg, its input and the reference
    output; made once per run (cases run in parallel)."""
    with _rowsum_lock:
        if ctx.work not in _rowsum_made:
            _rowsum_made[ctx.work] = _make_rowsum_case(ctx)
        return _rowsum_made[ctx.work]


def _make_rowsum_case(ctx):
    d = _work(ctx, "models", "rowsum")
    model, x_path = os.path.join(d, "model.onnx"), os.path.join(d, "x.npy")
    import onnx
    from onnx import TensorProto, helper
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("RowSum", ["r"], ["s"], name="row_sum", domain="test.flavours",
                              scale=0.5),
             helper.make_node("Neg", ["s"], ["y"], name="neg")]
    g = helper.make_graph(nodes, "rowsum",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("test.flavours", 1)])
    m.ir_version = 8
    onnx.save(m, model)
    x = np.random.default_rng(7).random((6, 256), dtype=np.float32) * 2 - 0.5
    np.save(x_path, x)
    want = -0.5 * np.maximum(x, 0).astype(np.float64).sum(axis=1)
    return model, x_path, want


def flavours_worst_pair(ctx):
    ops = _flavours(ctx)
    missing = _need(ops)
    if missing:
        return missing
    model, x, want = _rowsum_case(ctx)
    out = run.fresh_dir(os.path.join(ctx.out, "dot_flavours", "worst-pair"))
    rc, sout, err = run.run_graphcc(ctx, ["run", model, "--ops", ops, "--input", "x=" + x,
                                          "--output-dir", out, "--compare-flavours"])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    text = sout + err
    m = WORST_RE.search(text)
    if not m:
        return run.Result(False, "no 'worst pair' line", text)
    a, b, absd, oname, idx, va, vb, reld = m.groups()
    absd, reld = float(absd), float(reld)
    if "rowSumSkewed" not in (a, b):
        return run.Result(False, "worst pair %s vs %s does not include rowSumSkewed" % (a, b), text)
    if not 0.5 * SKEW <= absd <= 2 * SKEW:
        return run.Result(False, "max abs diff %g, expected about %g" % (absd, SKEW), text)
    if idx != "[0]" or oname != "s":
        return run.Result(False, "worst element %s%s, expected s[0]" % (oname, idx), text)
    expect_rel = absd / max(abs(float(va)), abs(float(vb)))
    if not 0.9 * expect_rel <= reld <= 1.1 * expect_rel:
        return run.Result(False, "max rel diff %g, expected %g" % (reld, expect_rel), text)
    # The two honest flavours agree to float rounding.
    agree = re.search(r"rowSumForward vs rowSumReverse: max abs (\S+), max rel (\S+)", text)
    if not agree or float(agree.group(2)) > 1e-5:
        return run.Result(False, "rowSumForward and rowSumReverse do not agree to 1e-5 "
                          "relative", text)
    if "largest difference" not in text or "rowSumSkewed" not in text.split("largest difference")[-1]:
        return run.Result(False, "no summary line naming the worst pair", text)
    why = run.compare(os.path.join(out, "y.npy"), want.astype(np.float32), 1e-5, 1e-5)
    if why:
        return run.Result(False, why, text)
    return run.Result(True, "abs %.3g rel %.3g; honest pair rel %s" % (absd, reld, agree.group(2)))


def flavours_gcb(ctx):
    """A .gcb has no registry: the flavours come from the manifest its binding
    records, loaded again."""
    ops = _flavours(ctx)
    missing = _need(ops)
    if missing:
        return missing
    model, x, _ = _rowsum_case(ctx)
    gcb = os.path.join(_work(ctx, "models"), "rowsum.gcb")
    rc, _, err = run.run_graphcc(ctx, ["compile", model, "--ops", ops, "-o", gcb])
    if rc != 0:
        return run.Result(False, "compile -o: " + run.describe_rc(rc), err)
    rc, sout, err = run.run_graphcc(ctx, ["run", gcb, "--input", "x=" + x,
                                          "--compare-flavours"])
    text = sout + err
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", text)
    m = WORST_RE.search(text)
    if not m or "rowSumSkewed" not in (m.group(1), m.group(2)):
        return run.Result(False, "no worst pair naming rowSumSkewed", text)
    return run.Result(True)


def flavours_failing(ctx):
    ops = _flavours(ctx, "flavours-failing.yaml")
    missing = _need(ops)
    if missing:
        return missing
    model, x, _ = _rowsum_case(ctx)
    rc, sout, err = run.run_graphcc(ctx, ["run", model, "--ops", ops, "--input", "x=" + x,
                                          "--compare-flavours"])
    text = sout + err
    if rc != 1:
        return run.Result(False, run.describe_rc(rc) + ", expected 1", text)
    for s in ("rowSumBroken", "row_sum", "wrote into its input", "'r'", "libflav_impl.so"):
        if s not in err:
            return run.Result(False, "stderr does not name %r" % s, text)
    if not WORST_RE.search(text):
        return run.Result(False, "the other flavours were not compared", text)
    return run.Result(True)


def flavours_demo(ctx):
    model, ops = _demo(ctx)
    missing = _need(ops)
    if missing:
        return missing
    x = os.path.join(_work(ctx, "models"), "demo_x.npy")
    np.save(x, np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32))
    rc, sout, err = run.run_graphcc(ctx, ["run", model, "--ops", ops, "--input", "x=" + x,
                                          "--compare-flavours"])
    text = sout + err
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", text)
    blocks = re.split(r"(?m)^(?=compare-flavours: node )", text)
    swish4 = [b for b in blocks
              if b.startswith("compare-flavours: node '/features/features.7/ScaledSwish'")]
    swish2 = [b for b in blocks
              if b.startswith("compare-flavours: node '/head/head.2/ScaledSwish'")]
    if len(swish4) != 1 or len(swish2) != 1:
        return run.Result(False, "not one report per ScaledSwish node", text)
    m = WORST_RE.search(swish4[0])
    if not m or {m.group(1), m.group(2)} != {"scaledSwishGeneric", "scaledSwishPlanesF32"}:
        return run.Result(False, "the 4-D ScaledSwish does not compare both flavours", text)
    absd, reld = float(m.group(3)), float(m.group(8))
    if not (absd < 1e-5 and reld < 1e-5):
        return run.Result(False, "flavours differ by abs %g rel %g, expected float rounding"
                          % (absd, reld), text)
    if not re.search(r"flavour 'scaledSwishPlanesF32'.*\n\s+declined the node", swish2[0]):
        return run.Result(False, "the plane-wise flavour on the 2-D node is not reported as "
                          "declining it", text)
    return run.Result(True, "ScaledSwish flavours: abs %.3g rel %.3g" % (absd, reld))


def flavours_plain_run(ctx):
    ops = _flavours(ctx)
    missing = _need(ops)
    if missing:
        return missing
    model, x, _ = _rowsum_case(ctx)
    rc, sout, err = run.run_graphcc(ctx, ["run", model, "--ops", ops, "--input", "x=" + x])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", err)
    if "compare-flavours" in sout + err:
        return run.Result(False, "a comparison report without --compare-flavours", sout + err)
    return run.Result(True)


def cases(ctx):
    model, _ = _demo(ctx)
    cs = [("dot/demo", lambda: dot_demo(ctx)),
          ("dot/demo-without-ops", lambda: dot_demo_without_ops(ctx)),
          ("dot/gcb", lambda: dot_gcb(ctx)),
          ("dot/unsupported", lambda: dot_unsupported(ctx)),
          ("dot/escaping", lambda: dot_escaping(ctx)),
          ("flavours/worst-pair", lambda: flavours_worst_pair(ctx)),
          ("flavours/failing", lambda: flavours_failing(ctx)),
          ("flavours/gcb", lambda: flavours_gcb(ctx)),
          ("flavours/demo", lambda: flavours_demo(ctx)),
          ("flavours/plain-run", lambda: flavours_plain_run(ctx))]
    for name, args in [("no-model", []),
                       ("input-option", [model, "--input", "x=x.npy"]),
                       ("two-models", [model, model])]:
        cs.append(("dot/usage/" + name, lambda a=args: dot_usage(ctx, a)))
    return cs
