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
  security/libraries/... --allow-libraries, GRAPHCC_LIBRARY_PATH (real paths:
                         a symlink out of an allowed folder is refused),
                         --no-libraries, for packages and .gcb pins
  security/tempfile/...  symlinks planted at the old predictable temporary
                         names (<path>.tmp.<pid>) and at final names of
                         outputs, dumps, profiles, .gcb: never written through
  security/output-folder/...  a user's file or folder where an output would
                         go is refused, named, untouched; graphcc's own
                         outputs are replaced run after run
  security/attribution/...  exit(0) or a crash in a library's constructor
                         (package or .gcb), exit(0) in a kernel: exit 3, the
                         library (or node, flavour, symbol) named, nothing
                         written
"""
import os
import shutil
import subprocess

import numpy as np
from onnx import helper, TensorProto

import gcbedit
import run
from cases_packages import graphcc  # (ctx, args, cwd, env) -> (rc, stdout, stderr)

DOMAIN = "test.fixtures"


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
        return refused(rc, err, box, ["model.gcb", ".gcb", "ONNX model"])

    def dry_run_check():
        box = Box(ctx, "inspect/check-dry-run", "ctor-marker")
        rc, out, err = box.graphcc(["check", "--dry-run", box.manifest])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err + out)
        if box.loaded():
            return run.Result(False, "check --dry-run loaded a library (its constructor ran)")
        miss = need(out, "none loaded", "libctor_marker_impl.so", "symbol addOneFloat")
        return run.Result(not miss, "output does not show %r" % miss if miss else "", out)

    def dry_run_refuses(fixture, parts):
        def fn():
            box = Box(ctx, "inspect/check-dry-run-" + fixture, fixture)
            rc, out, err = box.graphcc(["check", "--dry-run", box.manifest])
            return refused(rc, err, box, parts)
        return ("security/inspect/check-dry-run-refuses-" + fixture, fn)

    return [("security/inspect/check-dry-run", dry_run_check),
            dry_run_refuses("missing-verify", ["key 'verify'", "libaddone_fn_noverify.so",
                                               "customOpVerify"]),
            dry_run_refuses("new-abi", ["key 'functionsLibrary'", "libaddone_fn_newabi.so",
                                        "op ABI 2.", "speaks ABI 1."]),
            dry_run_refuses("not-a-library", ["key 'functionsLibrary'", "libx.so",
                                              "not an ELF file"]),
            dry_run_refuses("missing-kernel", ["key 'symbol'", "libaddone_impl.so"]),
            no_load("info-gcb", lambda b, g: ["info", g], ["libctor_marker_impl.so", "bump"]),
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
    def via_gcb(fixture, parts):
        """A .gcb's pinned kernel library replaced by one whose constructor
        misbehaves (run with --allow-changed-kernels): named, exit 3."""
        def fn():
            box = Box(ctx, "attribution/gcb-" + fixture)  # a copy of the good package
            gcb = box.compile()
            bad = os.path.join(ctx.packages, fixture, "lib",
                               "lib%s_impl.so" % fixture.replace("-", "_"))
            shutil.copy(bad, os.path.join(box.pkg, "lib", "libaddone_impl.so"))
            rc, _, err = box.graphcc(["run", gcb, "--allow-changed-kernels", "--input",
                                      "x=" + box.x, "--output-dir", box.out])
            return refused(rc, err, box, parts, status=3)
        return ("security/attribution/gcb-" + fixture, fn)

    return [via_gcb("ctor-exit", ["libaddone_impl.so", "exit()", "constructor"]),
            via_gcb("ctor-segv", ["libaddone_impl.so", "SIGSEGV", "constructor"]),
            case("ctor-exit", ["libctor_exit_fn.so", "exit()", "constructor"]),
            case("ctor-segv", ["libctor_segv_fn.so", "SIGSEGV", "constructor"]),
            case("kernel-exit", ["exit()", "node 'bump'", "addOneFloat",
                                 "libkernel_exit_impl.so"])]


# ---------------------------------------------------------------- item 2: temporary files

VICTIM_TEXT = b"the user's file: graphcc must not write here\n"


def plant_tmp_links(path, victim, n=1500):
    """Symlinks to victim at the names older graphcc wrote path through,
    <path>.tmp.<pid> (and <path>.tmp<pid>), for the next n process ids.
    Returns how many were planted."""
    try:
        last = int(open("/proc/sys/kernel/ns_last_pid").read())
        pid_max = int(open("/proc/sys/kernel/pid_max").read())
    except OSError:
        return 0
    count = 0
    for k in range(1, n + 1):
        pid = (last + k) % pid_max
        for name in ("%s.tmp.%d" % (path, pid), "%s.tmp%d" % (path, pid)):
            try:
                os.symlink(victim, name)
                count += 1
            except FileExistsError:
                pass
    return count


def victim_file(box):
    v = os.path.join(box.dir, "victim.txt")
    with open(v, "wb") as f:
        f.write(VICTIM_TEXT)
    return v


def victim_intact(v):
    return open(v, "rb").read() == VICTIM_TEXT


def tempfile_cases(ctx):
    def outputs_old_name():
        box = Box(ctx, "tempfile/outputs-old-name")
        v = victim_file(box)
        os.makedirs(box.out)
        if not plant_tmp_links(os.path.join(box.out, "y.npy"), v):
            return run.Result(False, "test error: no process ids to plant at")
        rc, _, err = box.graphcc(["run", box.model, "--ops", box.manifest, "--input",
                                  "x=" + box.x, "--output-dir", box.out])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        if not victim_intact(v):
            return run.Result(False, "wrote through a symlink planted at a temporary name")
        y = os.path.join(box.out, "y.npy")
        if os.path.islink(y):
            return run.Result(False, "out/y.npy is a planted symlink renamed into place")
        why = box.output_ok()
        return run.Result(not why, why or "")

    def final_name(kind):
        """A symlink at the final name: never written through."""
        def fn():
            box = Box(ctx, "tempfile/final-" + kind)
            v = victim_file(box)
            if kind == "output":
                os.makedirs(box.out)
                os.symlink(v, os.path.join(box.out, "y.npy"))
                args = ["run", box.model, "--ops", box.manifest, "--input", "x=" + box.x,
                        "--output-dir", box.out]
            elif kind == "dump-map":
                dump = os.path.join(box.dir, "dump")
                os.makedirs(dump)
                os.symlink(v, os.path.join(dump, "tensors.tsv"))
                args = ["run", box.model, "--ops", box.manifest, "--input", "x=" + box.x,
                        "--dump-dir", dump]
            elif kind == "profile":
                os.symlink(v, os.path.join(box.dir, "p.json"))
                args = ["run", box.model, "--ops", box.manifest, "--input", "x=" + box.x,
                        "--profile", os.path.join(box.dir, "p.json")]
            else:  # the .gcb
                os.symlink(v, os.path.join(box.dir, "m.gcb"))
                args = ["compile", box.model, "--ops", box.manifest, "-o",
                        os.path.join(box.dir, "m.gcb")]
            rc, _, err = box.graphcc(args)
            if not victim_intact(v):
                return run.Result(False, "wrote through the symlink at the final name", err)
            if kind == "output":
                # the symlink is not graphcc's: refused, named (item 11)
                if rc != 1 or os.path.join(box.out, "y.npy") not in err:
                    return run.Result(False, "%s, expected exit 1 naming out/y.npy"
                                      % run.describe_rc(rc), err)
                if not os.path.islink(os.path.join(box.out, "y.npy")):
                    return run.Result(False, "removed the user's symlink", err)
                return run.Result(True)
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            return run.Result(True)
        return ("security/tempfile/symlink-at-final-name-" + kind, fn)

    def old_name(kind):
        """Symlinks at the old predictable temporary names of a .gcb, a
        profile, a dumped tensor."""
        def fn():
            box = Box(ctx, "tempfile/old-name-" + kind)
            v = victim_file(box)
            if kind == "gcb":
                target = os.path.join(box.dir, "m.gcb")
                args = ["compile", box.model, "--ops", box.manifest, "-o", target]
            elif kind == "profile":
                target = os.path.join(box.dir, "p.json")
                args = ["run", box.model, "--ops", box.manifest, "--input", "x=" + box.x,
                        "--profile", target]
            else:
                dump = os.path.join(box.dir, "dump")
                os.makedirs(dump)
                target = os.path.join(dump, "y.npy")
                args = ["run", box.model, "--ops", box.manifest, "--input", "x=" + box.x,
                        "--dump-dir", dump]
            if not plant_tmp_links(target, v):
                return run.Result(False, "test error: no process ids to plant at")
            rc, _, err = box.graphcc(args)
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            if not victim_intact(v):
                return run.Result(False, "wrote through a symlink planted at a temporary name")
            if os.path.islink(target) or not os.path.isfile(target):
                return run.Result(False, "%s is not a regular file graphcc wrote" % target)
            return run.Result(True)
        return ("security/tempfile/symlink-at-old-temporary-name-" + kind, fn)

    return [("security/tempfile/symlink-at-old-temporary-name-output", outputs_old_name),
            old_name("gcb"), old_name("profile"), old_name("dump"),
            final_name("output"), final_name("dump-map"), final_name("profile"),
            final_name("gcb")]


# ---------------------------------------------------------------- item 11: the output folder

def output_folder_cases(ctx):
    def collision(tag, make, path_named):
        def fn():
            box = Box(ctx, "outdir/" + tag)
            os.makedirs(box.out)
            made = make(box.out)
            before = snapshot(box.out)
            rc, _, err = box.graphcc(["run", box.model, "--ops", box.manifest, "--input",
                                      "x=" + box.x, "--output-dir", box.out])
            if rc != 1:
                return run.Result(False, "%s, expected exit 1" % run.describe_rc(rc), err)
            miss = need(err, os.path.join(box.out, path_named))
            if miss:
                return run.Result(False, "message does not name %r" % miss, err)
            if snapshot(box.out) != before:
                return run.Result(False, "the folder changed: %s -> %s"
                                  % (before, snapshot(box.out)), err)
            return run.Result(True, made)
        return ("security/output-folder/" + tag, fn)

    def user_file(out):
        open(os.path.join(out, "y"), "w").write("notes\n")
        return "a user's file out/y beside output 'y'"

    def user_folder(out):
        os.makedirs(os.path.join(out, "y"))
        np.save(os.path.join(out, "y", "0.npy"), np.zeros(2))
        return "a user's folder out/y/ holding 0.npy"

    def user_none(out):
        open(os.path.join(out, "y.none"), "w").close()
        return "a user's out/y.none"

    def user_npy(out):
        np.save(os.path.join(out, "y.npy"), np.zeros(3))
        return "a .npy graphcc did not write"

    def rerun():
        """graphcc's own outputs are replaced run after run (its ledger)."""
        box = Box(ctx, "outdir/rerun")
        for k in range(2):
            rc, _, err = box.graphcc(["run", box.model, "--ops", box.manifest, "--input",
                                      "x=" + box.x, "--output-dir", box.out])
            if rc != 0:
                return run.Result(False, "run %d: %s" % (k + 1, run.describe_rc(rc)), err)
        why = box.output_ok()
        return run.Result(not why, why or " ".join(sorted(os.listdir(box.out))))

    return [collision("unrelated-file", user_file, "y"),
            collision("unrelated-folder", user_folder, "y"),
            collision("unrelated-none", user_none, "y.none"),
            collision("unrelated-npy", user_npy, "y.npy"),
            ("security/output-folder/rerun", rerun)]


def snapshot(d):
    """{relative path: bytes or 'dir' or 'link->target'} of a folder."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            out[rel] = ("link->" + os.readlink(p) if os.path.islink(p) else
                        "dir" if os.path.isdir(p) else open(p, "rb").read())
    return out


# ---------------------------------------------------------------- item 4: restricting libraries

def library_cases(ctx):
    def case(tag, setup, want_ok, parts=()):
        """setup(box) -> (args, env); the ctor-marker package's library shows
        whether anything was loaded."""
        def fn():
            box = Box(ctx, "libraries/" + tag, "ctor-marker")
            args, env = setup(box)
            rc, out, err = box.graphcc(args, env=env)
            if not want_ok:
                return refused(rc, err, box, list(parts))
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            if not box.loaded():
                return run.Result(False, "the allowed library was not loaded")
            why = box.output_ok() if "--output-dir" in args else None
            return run.Result(not why, why or "")
        return ("security/libraries/" + tag, fn)

    def run_onnx(box, extra):
        return ["run", box.model, "--ops", box.manifest, "--input", "x=" + box.x,
                "--output-dir", box.out] + extra

    def elsewhere(box):
        d = os.path.join(box.dir, "elsewhere")
        os.makedirs(d, exist_ok=True)
        return d

    def symlink_escape(box):
        """A library inside the allowed folder that is a symlink to one
        outside: judged by its real path."""
        lib = os.path.join(box.pkg, "lib", "libctor_marker_impl.so")
        outside = os.path.join(elsewhere(box), "libreal.so")
        shutil.move(lib, outside)
        os.symlink(outside, lib)
        return run_onnx(box, ["--allow-libraries", box.pkg]), None

    def gcb(box, extra):
        g = box.compile()
        return ["run", g, "--input", "x=" + box.x, "--output-dir", box.out] + extra

    lib = "libaddone_fn.so"
    return [
        case("allow-outside", lambda b: (run_onnx(b, ["--allow-libraries", elsewhere(b)]), None),
             False, [lib, "--allow-libraries", "outside"]),
        case("allow-inside", lambda b: (run_onnx(b, ["--allow-libraries", elsewhere(b),
                                                     "--allow-libraries", b.pkg]), None), True),
        case("env-outside", lambda b: (run_onnx(b, []), {"GRAPHCC_LIBRARY_PATH": elsewhere(b)}),
             False, [lib, "GRAPHCC_LIBRARY_PATH"]),
        case("env-inside", lambda b: (run_onnx(b, []),
                                      {"GRAPHCC_LIBRARY_PATH": elsewhere(b) + ":" + b.pkg}), True),
        case("symlink-out-of-allowed", symlink_escape, False,
             ["libctor_marker_impl.so", "libreal.so", "outside"]),
        case("compile-outside", lambda b: (["compile", b.model, "--ops", b.manifest, "-o",
                                            os.path.join(b.out, "m.gcb"), "--allow-libraries",
                                            elsewhere(b)], None),
             False, [lib, "outside"]),
        case("gcb-outside", lambda b: (gcb(b, ["--allow-libraries", elsewhere(b)]), None),
             False, ["libctor_marker_impl.so", "outside"]),
        case("gcb-inside", lambda b: (gcb(b, ["--allow-libraries", b.pkg]), None), True),
        case("gcb-no-libraries", lambda b: (gcb(b, ["--no-libraries"]), None), False,
             ["libctor_marker_impl.so", "--no-libraries"]),
        case("onnx-no-libraries", lambda b: (run_onnx(b, ["--no-libraries"]), None), False,
             ["--no-libraries", "ctor-marker.yaml"]),
    ]


def cases(ctx):
    return (library_cases(ctx) + pin_cases(ctx) + inspect_cases(ctx) + attribution_cases(ctx) + tempfile_cases(ctx)
            + output_folder_cases(ctx))
