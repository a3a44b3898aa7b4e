"""Gradients in op packages: the manifest's `gradient:` checked at load, and
`graphcc gradcheck`.

  gradient-manifest/<case>   plugins/trainable's manifest with one mistake
                             in a gradient: key (a backward operation that
                             does not exist, wrong arity, an input neither
                             differentiated nor excluded, a misspelt key, a
                             grad: of no output, a param mapped from
                             nowhere): `graphcc check` exits 1 with one
                             message naming file:line:column and the key
  gradcheck/trainable        every declared gradient of plugins/trainable
                             passes (float64, tolerance 1e-6), one line per
                             input
  gradcheck/wrong-backward   tests/packages/wrong-grad (ParamSwishGrad
                             without the beta x s (1 - s) term): exit 1, the
                             FAIL line names ParamSwish and input 'x';
                             test-package fails on it too
"""
import os
import re
import shutil

import run


def _trainable(ctx):
    return os.path.join(ctx.plugins, "trainable")


def _variant(ctx, name, edit):
    src = _trainable(ctx)
    d = run.fresh_dir(os.path.join(ctx.fix, "gradient-manifest", name))
    shutil.copytree(os.path.join(src, "lib"), os.path.join(d, "lib"))
    text = open(os.path.join(src, "trainable.yaml")).read()
    new = edit(text)
    assert new != text, name
    path = os.path.join(d, "trainable.yaml")
    with open(path, "w") as f:
        f.write(new)
    return path


# name: (edit of the manifest's text, what the message must hold)
MISTAKES = {
    "no-such-backward": (lambda t: t.replace("operation: ParamSwishGrad", "operation: NoSuchGrad", 1),
                         ["key 'gradient.operation'", "NoSuchGrad", "ParamSwish"]),
    "too-many-inputs": (lambda t: t.replace("    - grad: y                   #",
                                            "    - output: y\n    - grad: y   #", 1),
                        ["key 'gradient.inputs'", "3 inputs", "declares 2"]),
    "outputs-arity": (lambda t: t.replace("  outputs: [x, gamma]", "  outputs: [x]\n"
                                          "  notDifferentiable: [gamma]", 1),
                      ["key 'gradient.outputs'", "ChannelScaleGrad has 2 outputs"]),
    "input-unaccounted": (lambda t: t.replace("  outputs: [x, gamma]", "  outputs: [x]", 1),
                          ["key 'gradient'", "input 'gamma' is neither"]),
    "misspelt-key": (lambda t: t.replace("  operation: ChannelScaleGrad", "  operaton: ChannelScaleGrad", 1),
                     ["key 'operaton'", "did you mean 'operation'"]),
    "grad-of-nothing": (lambda t: t.replace("    - grad: y                   #", "    - grad: z   #", 1),
                        ["key 'gradient.inputs'", "'z' is no output of ParamSwish"]),
    "param-from-nowhere": (lambda t: t.replace("  outputs: [x]                  #",
                                               "  params: {beta: gamma}\n  outputs: [x]  #", 1),
                           ["key 'gradient.params'", "'gamma' is no param of ParamSwish"]),
}


def mistake_case(ctx, name):
    edit, must = MISTAKES[name]
    path = _variant(ctx, name, edit)
    rc, _, err = run.run_graphcc(ctx, ["check", path])
    if rc != 1:
        return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    if len(lines) != 1:
        return run.Result(False, "%d lines on stderr, expected one message" % len(lines), err)
    if not re.search(re.escape(path) + r":\d+:\d+: ", err):
        return run.Result(False, "the message does not name file:line:column", err)
    for s in must:
        if s not in err:
            return run.Result(False, "the message does not say %r" % s, err)
    return run.Result(True, lines[0][len("graphcc: "):][:150])


def trainable_case(ctx):
    rc, out, err = run.run_graphcc(ctx, ["gradcheck", os.path.join(_trainable(ctx), "trainable.yaml")])
    if rc != 0:
        return run.Result(False, run.describe_rc(rc) + ", expected 0", out + err)
    lines = [ln for ln in out.splitlines() if ln.startswith("PASS")]
    want = ["ParamSwish / beta 1.5 (line 46) / input 'x'",
            "ChannelScale / three channels (line 138) / input 'x'",
            "ChannelScale / three channels (line 138) / input 'gamma'"]
    for w in want:
        if not any(w in ln for ln in lines):
            return run.Result(False, "no PASS line for %s" % w, out)
    errs = [float(re.search(r"worst relative error (\S+)", ln).group(1)) for ln in lines]
    return run.Result(True, "%d inputs, worst relative error %.1e" % (len(lines), max(errs)))


def wrong_case(ctx):
    manifest = os.path.join(ctx.packages, "wrong-grad", "wrong-grad.yaml")
    rc, out, err = run.run_graphcc(ctx, ["gradcheck", manifest])
    if rc != 1:
        return run.Result(False, run.describe_rc(rc) + ", expected exit 1", out + err)
    fail = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    if len(fail) != 1 or "ParamSwish" not in fail[0] or "input 'x'" not in fail[0]:
        return run.Result(False, "expected one FAIL line naming ParamSwish and input 'x'", out)
    rc2, out2, err2 = run.run_graphcc(ctx, ["test-package", manifest])
    if rc2 != 1 or not any(ln.startswith("FAIL") and "input 'x'" in ln for ln in out2.splitlines()):
        return run.Result(False, "test-package did not fail on the wrong backward (%s)"
                          % run.describe_rc(rc2), out2 + err2)
    return run.Result(True, fail[0][:200])


def cases(ctx):
    out = [("gradient-manifest/" + n, (lambda n=n: mistake_case(ctx, n))) for n in MISTAKES]
    out.append(("gradcheck/trainable", lambda: trainable_case(ctx)))
    out.append(("gradcheck/wrong-backward", lambda: wrong_case(ctx)))
    return out
