"""Which code graphcc runs, and what it writes (issue 15, the security items),
end to end with real planted libraries, edited programs and symlinks.

Fixture packages come from tests/packages/ (AddOne, domain test.fixtures):
`good`, and `ctor-marker` (its implementation library's constructor creates
the file $GRAPHCC_TEST_MARKER: the marker existing proves graphcc loaded
it), `ctor-exit`, `ctor-segv`, `kernel-exit`.

  security/pin/...       a .gcb whose binding is edited (valid checksums,
                         tests/e2e/gcbedit.py) to name an unpinned, planted
                         library is refused before anything is loaded; paths
                         are relative to the program, never the cwd
  security/inspect/...   info and dot on a .gcb, check --dry-run, never load
                         a library; a file whose content disagrees with its
                         extension is refused naming both
  security/attribution/...  exit(0) or a crash in a library's constructor,
                         exit(0) in a kernel: exit 3, the library (or node,
                         flavour, symbol) named, nothing written
"""
import os
import shutil
import subprocess

import numpy as np
from onnx import helper, TensorProto

import gcbedit
import run

DOMAIN = "test.fixtures"


def graphcc(ctx, args, cwd, env=None):
    """-> (returncode or None on timeout, stdout, stderr), run in cwd."""
    e = dict(run.ENV)
    e.update(env or {})
    try:
        p = subprocess.run([ctx.graphcc] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=run.TIMEOUT, cwd=cwd, env=e)
    except subprocess.TimeoutExpired as x:
        return None, run._txt(x.stdout), run._txt(x.stderr)
    out, err = run._txt(p.stdout), run._txt(p.stderr)
    if run.SANITIZER_RE.search(err):
        return run.SANITIZER_RC, out, err
    return p.returncode, out, err


def addone_model(path):
    """x (float32 2x3) -> test.fixtures::AddOne 'bump' -> y."""
    n = helper.make_node("AddOne", ["x"], ["y"], domain=DOMAIN, name="bump", delta=2.0)
    g = helper.make_graph([n], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid(DOMAIN, 2)])
    import onnx
    onnx.save(m, path)


class Box:
    """A fresh folder with the AddOne model, an input, a copy of a fixture
    package (pkg/) and a marker path; compile() makes prog/m.gcb."""

    def __init__(self, ctx, tag, fixture="good"):
        self.ctx = ctx
        self.dir = run.fresh_dir(os.path.join(ctx.out, "security", tag.replace("/", "_")))
        self.model = os.path.join(self.dir, "m.onnx")
        addone_model(self.model)
        self.x = os.path.join(self.dir, "x.npy")
        self.xval = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.save(self.x, self.xval)
        self.pkg = os.path.join(self.dir, "pkg")
        shutil.copytree(os.path.join(ctx.packages, fixture), self.pkg)
        self.manifest = os.path.join(self.pkg, fixture + ".yaml")
        self.marker = os.path.join(self.dir, "MARKER")
        self.out = os.path.join(self.dir, "out")
        self.cwd = run.fresh_dir(os.path.join(self.dir, "cwd"))
        self.env = {"GRAPHCC_TEST_MARKER": self.marker}

    def graphcc(self, args, cwd=None, env=None):
        e = dict(self.env)
        e.update(env or {})
        return graphcc(self.ctx, args, cwd or self.cwd, e)

    def compile(self, gcb=None):
        gcb = gcb or os.path.join(self.dir, "prog", "m.gcb")
        os.makedirs(os.path.dirname(gcb), exist_ok=True)
        rc, out, err = self.graphcc(["compile", self.model, "--ops", self.manifest, "-o", gcb])
        if os.path.exists(self.marker):
            os.unlink(self.marker)  # compiling loads the package: that is allowed
        if rc != 0:
            raise RuntimeError("compile failed: %s: %s" % (run.describe_rc(rc), err))
        return gcb

    def loaded(self):
        return os.path.exists(self.marker)

    def output_ok(self, out=None):
        """None if out/y.npy is x + 2 (AddOne with delta 2; float32, exact)."""
        return run.compare(os.path.join(out or self.out, "y.npy"), self.xval + np.float32(2),
                           0, 0)


def need(msg, *parts):
    """None when msg names every part, else the first missing."""
    for p in parts:
        if p not in msg:
            return p
    return None


def refused(rc, err, box, parts, status=1):
    """Result for a case that must exit `status`, name parts, load nothing,
    write nothing."""
    if rc != status:
        return run.Result(False, "%s, expected exit %d" % (run.describe_rc(rc), status), err)
    miss = need(err, *parts)
    if miss:
        return run.Result(False, "message does not name %r" % miss, err)
    if box.loaded():
        return run.Result(False, "the planted library was loaded (its constructor ran)", err)
    if os.path.isdir(box.out) and os.listdir(box.out):
        return run.Result(False, "wrote %s" % os.listdir(box.out), err)
    return run.Result(True, err.strip().splitlines()[-1][:150] if err.strip() else "")


# ---------------------------------------------------------------- item 1: pins

def pin_cases(ctx):
    def retarget(how):
        def fn():
            box = Box(ctx, "pin/" + how)
            gcb = box.compile()
            planted = os.path.join(box.dir, "planted", "libevil.so")
            os.makedirs(os.path.dirname(planted))
            # a library with the same kernel symbol, whose constructor shows it ran
            shutil.copy(os.path.join(ctx.packages, "ctor-marker", "lib",
                                     "libctor_marker_impl.so"), planted)
            prog = gcbedit.Program(gcb)
            (old, _), = prog.libraries()
            new = planted if how == "absolute" else os.path.relpath(planted, os.path.dirname(gcb))
            if prog.retarget_binding(old, new) != 1:
                return run.Result(False, "test error: binding not found in the .gcb")
            prog.save(gcb)
            rc, _, err = box.graphcc(["run", gcb, "--input", "x=" + box.x, "--output-dir",
                                      box.out])
            return refused(rc, err, box, ["node 'bump'", new, "does not pin"])
        return ("security/pin/edited-binding-" + how, fn)

    def moved_folder():
        """Program and package moved together: still loads (paths relative
        to the program); a trojan at the same relative path from the cwd is
        never loaded."""
        box = Box(ctx, "pin/moved-folder")
        # the package inside the folder that moves: a/pkg, a/prog/m.gcb
        shutil.move(box.pkg, os.path.join(box.dir, "a", "pkg"))
        box.manifest = os.path.join(box.dir, "a", "pkg", os.path.basename(box.manifest))
        box.compile(os.path.join(box.dir, "a", "prog", "m.gcb"))
        moved = os.path.join(box.dir, "b")
        shutil.move(os.path.join(box.dir, "a"), moved)
        gcb = os.path.join(moved, "prog", "m.gcb")
        (rel, _), = gcbedit.Program(gcb).libraries()
        if os.path.isabs(rel):
            return run.Result(False, "the .gcb records an absolute library path: %s" % rel)
        # the trojan: rel resolved against the cwd
        trojan = os.path.normpath(os.path.join(box.cwd, rel))
        os.makedirs(os.path.dirname(trojan), exist_ok=True)
        shutil.copy(os.path.join(ctx.packages, "ctor-marker", "lib", "libctor_marker_impl.so"),
                    trojan)
        rc, _, err = box.graphcc(["run", gcb, "--input", "x=" + box.x, "--output-dir", box.out])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        if box.loaded():
            return run.Result(False, "loaded the library at %s, relative to the cwd" % trojan)
        why = box.output_ok()
        return run.Result(not why, why or "records %s; moved folder runs" % rel, err)

    return [retarget("absolute"), retarget("relative"),
            ("security/pin/moved-folder-and-cwd-trojan", moved_folder)]


# ---------------------------------------------------------------- item 3: inspecting

def inspect_cases(ctx):
    def no_load(tag, args_fn, must_out):
        def fn():
            box = Box(ctx, "inspect/" + tag, "ctor-marker")
            gcb = box.compile()
            rc, out, err = box.graphcc(args_fn(box, gcb))
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err + out)
            if box.loaded():
                return run.Result(False, "a library was loaded (its constructor ran)", err)
            miss = need(out, *must_out)
            if miss:
                return run.Result(False, "output does not show %r" % miss, out)
            return run.Result(True)
        return ("security/inspect/" + tag, fn)

    def misnamed(cmd):
        def fn():
            box = Box(ctx, "inspect/gcb-named-onnx-" + cmd, "ctor-marker")
            gcb = box.compile()
            # the program beside its library, named like an ONNX model
            fake = os.path.join(os.path.dirname(gcb), "model.onnx")
            shutil.copy(gcb, fake)
            args = [cmd, fake] + (["--input", "x=" + box.x, "--output-dir", box.out]
                                  if cmd == "run" else [])
            rc, _, err = box.graphcc(args)
            return refused(rc, err, box, ["model.onnx", ".onnx", ".gcb"])
        return ("security/inspect/gcb-named-onnx-" + cmd, fn)

    def onnx_named_gcb():
        box = Box(ctx, "inspect/onnx-named-gcb")
        fake = os.path.join(box.dir, "model.gcb")
        shutil.copy(box.model, fake)
        rc, _, err = box.graphcc(["run", fake, "--input", "x=" + box.x, "--output-dir", box.out])
        return refused(rc, err, box, ["model.gcb", ".gcb"])

    return [no_load("info-gcb", lambda b, g: ["info", g], ["libctor_marker_impl.so", "bump"]),
            no_load("dot-gcb", lambda b, g: ["dot", g], ["digraph", "bump"]),
            misnamed("info"), misnamed("run"), misnamed("dot"),
            ("security/inspect/onnx-named-gcb", onnx_named_gcb)]


# ---------------------------------------------------------------- item 12: attribution

def attribution_cases(ctx):
    def case(fixture, parts):
        def fn():
            box = Box(ctx, "attribution/" + fixture, fixture)
            rc, out, err = box.graphcc(["run", box.model, "--ops", box.manifest, "--input",
                                        "x=" + box.x, "--output-dir", box.out])
            return refused(rc, err, box, parts, status=3)
        return ("security/attribution/" + fixture, fn)
    return [case("ctor-exit", ["libctor_exit_fn.so", "exit()", "constructor"]),
            case("ctor-segv", ["libctor_segv_fn.so", "SIGSEGV", "constructor"]),
            case("kernel-exit", ["exit()", "node 'bump'", "addOneFloat",
                                 "libkernel_exit_impl.so"])]


def cases(ctx):
    return pin_cases(ctx) + inspect_cases(ctx) + attribution_cases(ctx)
