"""Compiled programs (.gcb): save, load, run; refusals.

  gcb/roundtrip/<model>        compile -o then run the .gcb: outputs bit-identical
                               to running the .onnx (five torch models, the demo,
                               dilated convolutions whose taps read padding)
  gcb/info                     `graphcc info` on a .gcb: bindings, library hashes
  gcb/changed-library[...]     a kernel library rebuilt after compiling is refused
                               (both hashes named); --allow-changed-kernels warns
  gcb/missing-library          a library that is gone is refused, named
  gcb/corrupt/<how>            truncated at every section boundary and elsewhere,
                               flipped bytes, newer format: exit 1, named, no crash,
                               nothing written
  gcb/runtime-alone/...        libgraphcc-runtime.so links neither libyaml nor
                               protobuf-c; the .gcb path needs neither; it exports
                               exactly the functions of graphcc/runtime.h and debug.h
  gcb/example                  the builder-API example program
"""
import os
import re
import shutil
import struct
import subprocess

import numpy as np

import run

HEADER = 128  # runtime/gcb.h


def _onnx_helper():
    import onnx
    from onnx import helper, TensorProto
    return onnx, helper, TensorProto


def lenet_model(path):
    """x -> org.glow.lenet::ScaledTanh -> Relu, built with onnx.helper."""
    onnx, helper, TP = _onnx_helper()
    nodes = [helper.make_node("ScaledTanh", ["x"], ["t"], domain="org.glow.lenet",
                              name="st", alpha=1.5, beta=0.75),
             helper.make_node("Relu", ["t"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "lenet",
                          [helper.make_tensor_value_info("x", TP.FLOAT, [2, 3, 4])],
                          [helper.make_tensor_value_info("y", TP.FLOAT, [2, 3, 4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("org.glow.lenet", 1)])
    onnx.save(m, path)


def dilated_model(path, x_path):
    """Convolutions whose taps read padding (runtime/kernels/conv-live.c) on
    16x16: 3x3 at dilation 12 (by regions), 24 (its centre: a 1x1), 4 (by
    regions), a depthwise 3x3 at 24 (its centre), each with its weights
    packed or copied at prepare."""
    onnx, helper, TP = _onnx_helper()
    from onnx import numpy_helper
    rng = np.random.default_rng(5)
    inits, nodes, prev = [], [], "x"
    layers = (("a", 48, 40, 3, 12, 1), ("b", 40, 40, 3, 24, 1), ("c", 40, 40, 3, 24, 40),
              ("d", 40, 32, 3, 4, 1))
    for name, c, m, k, d, g in layers:
        w = (rng.standard_normal((m, c // g, k, k)) * 0.2).astype(np.float32)
        inits += [numpy_helper.from_array(w, name + "_w"),
                  numpy_helper.from_array(rng.standard_normal(m).astype(np.float32),
                                          name + "_b")]
        nodes += [helper.make_node("Conv", [prev, name + "_w", name + "_b"], [name + "_c"],
                                   kernel_shape=[k, k], dilations=[d, d], pads=[d] * 4,
                                   group=g, name=name),
                  helper.make_node("Relu", [name + "_c"], [name + "_r"], name=name + "_relu")]
        prev = name + "_r"
    g = helper.make_graph(nodes, "dilated",
                          [helper.make_tensor_value_info("x", TP.FLOAT, [1, 48, 16, 16])],
                          [helper.make_tensor_value_info(prev, TP.FLOAT, [1, 32, 16, 16])],
                          inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    np.save(x_path, rng.standard_normal((1, 48, 16, 16)).astype(np.float32))


def rc_ok(rc):
    return rc is not None and rc >= 0 and rc not in run.CRASH_CODES


def roundtrip(ctx, name, model, inputs, ops):
    def fn():
        d = run.fresh_dir(os.path.join(ctx.out, "gcb", "roundtrip", name))
        gcb = os.path.join(d, "m.gcb")
        rc, out, err = run.run_graphcc(ctx, ["compile", model, "-o", gcb] + ops)
        if rc != 0:
            return run.Result(False, "compile: " + run.describe_rc(rc), err)
        feed = []
        for k, v in inputs:
            feed += ["--input", "%s=%s" % (k, v)]
        for tag, args in (("gcb", [gcb]), ("onnx", [model] + ops)):
            rc, _, err = run.run_graphcc(ctx, ["run"] + args + feed +
                                         ["--output-dir", os.path.join(d, tag)])
            if rc != 0:
                return run.Result(False, "run %s: %s" % (tag, run.describe_rc(rc)), err)
        outs = sorted(os.listdir(os.path.join(d, "onnx")))
        if not outs or outs != sorted(os.listdir(os.path.join(d, "gcb"))):
            return run.Result(False, "different output files: %s" % outs)
        for f in outs:
            a = open(os.path.join(d, "onnx", f), "rb").read()
            b = open(os.path.join(d, "gcb", f), "rb").read()
            if a != b:
                return run.Result(False, "%s differs between the .onnx and .gcb runs" % f)
        return run.Result(True, "%d outputs bit-identical, %d bytes" %
                          (len(outs), os.path.getsize(gcb)))
    return ("gcb/roundtrip/" + name, fn)


def refusal(ctx, name, args, must, expect=1):
    """graphcc must exit `expect`, naming everything in must (regexes or text),
    write nothing, not crash."""
    def fn():
        out = run.fresh_dir(os.path.join(ctx.out, "gcb", "refuse", name))
        a = list(args)
        if a[0] == "run":
            a += ["--output-dir", out]
        rc, sout, err = run.run_graphcc(ctx, a)
        if not rc_ok(rc):
            return run.Result(False, run.describe_rc(rc), err)
        if rc != expect:
            return run.Result(False, "exit %s, expected %d" % (rc, expect), sout + err)
        for m in must:
            if not (m.search(err) if hasattr(m, "search") else m in err):
                return run.Result(False, "message does not name %r" % getattr(m, "pattern", m),
                                  err)
        if os.listdir(out):
            return run.Result(False, "wrote %s" % os.listdir(out), err)
        return run.Result(True, err.strip().splitlines()[-1][:140] if err.strip() else "")
    return ("gcb/" + name, fn)


def corrupt_cases(ctx, good, x):
    """Truncations at every section boundary and inside each section, and flipped
    bytes in the header, the metadata and the weights."""
    data = open(good, "rb").read()
    (meta_off, meta_size, _, w_off, w_size, _) = struct.unpack_from("<6Q", data, 56)
    d = os.path.join(ctx.out, "gcb", "corrupt-files")
    os.makedirs(d, exist_ok=True)
    cuts = sorted({0, 1, 8, 12, 16, HEADER - 1, HEADER, meta_off + 4, meta_off + meta_size // 2,
                   meta_off + meta_size - 1, meta_off + meta_size, w_off - 1, w_off,
                   w_off + w_size // 2, len(data) - 1})
    flips = sorted({0, 8, 12, 48, 56, 64, 72, 96, HEADER, HEADER + 5, meta_off + meta_size // 3,
                    meta_off + meta_size - 2, w_off, w_off + w_size // 2, len(data) - 1})
    cases = []
    for c in cuts:
        if c >= len(data):
            continue
        p = os.path.join(d, "cut-%d.gcb" % c)
        open(p, "wb").write(data[:c])
        cases.append(refusal(ctx, "corrupt/truncated-at-%d" % c,
                             ["run", p, "--input", x], [os.path.basename(p)]))
    for f in flips:
        b = bytearray(data)
        b[f] ^= 0x5A
        p = os.path.join(d, "flip-%d.gcb" % f)
        open(p, "wb").write(bytes(b))
        cases.append(refusal(ctx, "corrupt/flipped-byte-%d" % f,
                             ["run", p, "--input", x], [os.path.basename(p)]))
    newer = bytearray(data)
    version = struct.unpack_from("<I", data, 8)[0] + 1
    struct.pack_into("<I", newer, 8, version)
    p = os.path.join(d, "newer.gcb")
    open(p, "wb").write(bytes(newer))
    cases.append(refusal(ctx, "corrupt/newer-format", ["run", p, "--input", x],
                         ["newer.gcb", re.compile(r"format version %d" % version)]))
    return cases


def runtime_alone(ctx):
    so = os.path.join(ctx.build, "lib", "libgraphcc-runtime.so")

    def ldd():
        p = subprocess.run(["ldd", so], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        text = p.stdout.decode()
        if p.returncode:
            return run.Result(False, "ldd failed", p.stderr.decode())
        bad = [l for l in text.splitlines() if re.search(r"yaml|protobuf", l)]
        if bad:
            return run.Result(False, "links %s" % bad, text)
        return run.Result(True, "needs only: " + ", ".join(
            l.split()[0] for l in text.splitlines() if "=>" in l))

    def nm():
        p = subprocess.run(["nm", "-u", so], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        bad = [l for l in p.stdout.decode().splitlines() if re.search(r"yaml_|protobuf_c", l)]
        if p.returncode or bad:
            return run.Result(False, "undefined yaml/protobuf symbols: %s" % bad[:5])
        return run.Result(True, "no yaml_ or protobuf_c symbols referenced")
    def exports():
        # The public API: every function (not static inline) that
        # include/graphcc/runtime.h and debug.h declare, as the compiler
        # lists them (-aux-info).
        inc = os.path.join(run.ROOT, "include")
        tmp = os.path.join(ctx.work, "exports")
        os.makedirs(tmp, exist_ok=True)
        src, aux = os.path.join(tmp, "pub.c"), os.path.join(tmp, "pub.aux")
        open(src, "w").write("#include <graphcc/runtime.h>\n#include <graphcc/debug.h>\n")
        p = subprocess.run(["gcc", "-std=c11", "-fsyntax-only", "-I" + inc, "-aux-info", aux,
                            src], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode:
            return run.Result(False, "gcc -aux-info failed", p.stdout.decode())
        public = set()
        for line in open(aux):
            m = re.match(r"/\* (\S+):\d+:\w+ \*/ extern .*?\b(gc_\w+) \(", line)
            if m and m.group(1).startswith(inc):
                public.add(m.group(2))
        p = subprocess.run(["nm", "-D", "--defined-only", so], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode:
            return run.Result(False, "nm -D failed", p.stderr.decode())
        exported = set()
        for l in p.stdout.decode().splitlines():
            f = l.split()
            if len(f) == 3 and f[1] in "TDBRVWiu" and f[2].startswith("gc_"):
                exported.add(f[2])
        extra, missing = sorted(exported - public), sorted(public - exported)
        if extra or missing or len(public) < 30:
            return run.Result(False, "exports beyond the public API: %s; public functions "
                              "not exported: %s (of %d public)" % (extra[:20], missing,
                                                                    len(public)))
        return run.Result(True, "exports exactly the %d public functions" % len(public))
    return [("gcb/runtime-alone/ldd", ldd), ("gcb/runtime-alone/nm", nm),
            ("gcb/runtime-alone/exports", exports)]


def cases(ctx):
    out = []
    torch = os.path.join(ctx.work, "models", "torch")
    for m in run.TORCH_MODELS:
        d = os.path.join(torch, m)
        out.append(roundtrip(ctx, m, os.path.join(d, "model.onnx"),
                             [("input", os.path.join(d, "input.npy"))], []))
    demo_dir = os.path.join(ctx.work, "gcb-demo")
    demo_ops = ["--ops", os.path.join(ctx.plugins, "demo", "demo.yaml")]
    demo_x = os.path.join(demo_dir, "x.npy")

    def demo_case():
        os.makedirs(demo_dir, exist_ok=True)
        if not os.path.exists(demo_x):
            subprocess.run(["/usr/bin/python3", os.path.join(ctx.root, "models", "demo",
                                                             "make_demo.py"),
                            "--reference", demo_dir], check=True, stdout=subprocess.DEVNULL)
        return roundtrip(ctx, "demo", os.path.join(ctx.root, "models", "demo", "model.onnx"),
                         [("x", demo_x)], demo_ops)[1]()
    out.append(("gcb/roundtrip/demo", demo_case))

    def dilated_case():
        d = os.path.join(ctx.work, "gcb-dilated")
        os.makedirs(d, exist_ok=True)
        model, x = os.path.join(d, "model.onnx"), os.path.join(d, "x.npy")
        dilated_model(model, x)
        return roundtrip(ctx, "dilated", model, [("x", x)], [])[1]()
    out.append(("gcb/roundtrip/dilated", dilated_case))

    # Each case below gets its own copy of the seed-lenet package (cases run
    # in parallel, and some change or move its library).
    def setup(tag):
        pkg = os.path.join(ctx.work, "gcb-pkg", tag)
        shutil.rmtree(pkg, ignore_errors=True)
        shutil.copytree(os.path.join(ctx.plugins, "seed-lenet"), pkg)
        env = {"manifest": os.path.join(pkg, "seed-lenet.yaml"),
               "model": os.path.join(pkg, "lenet.onnx"), "x": os.path.join(pkg, "x.npy"),
               "gcb": os.path.join(pkg, "lenet.gcb"),
               "lib": os.path.join(pkg, "lib", "libscaledtanh_interp.so")}
        lenet_model(env["model"])
        np.save(env["x"], np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32))
        rc, sout, err = run.run_graphcc(ctx, ["compile", env["model"], "--ops", env["manifest"],
                                              "-o", env["gcb"]])
        return env, (None if rc == 0 else run.Result(False, "compile: " + run.describe_rc(rc),
                                                     err))

    def info():
        e, r = setup("info")
        if r:
            return r
        rc, sout, err = run.run_graphcc(ctx, ["info", e["gcb"]])
        if rc != 0 or "libscaledtanh_interp.so" not in sout or \
                not re.search(r"\b[0-9a-f]{64}\b", sout):
            return run.Result(False, "info does not show the library and its hash", sout + err)
        return run.Result(True, "info names the library and its SHA-256")
    out.append(("gcb/info", info))

    def changed(allow):
        def fn():
            e, r = setup("changed-%s" % allow)
            if r:
                return r
            with open(e["lib"], "ab") as f:  # "rebuilt": still a valid library, new bytes
                f.write(b"\0rebuilt")
            od = run.fresh_dir(os.path.join(ctx.out, "gcb", "changed", str(allow)))
            args = ["run", e["gcb"], "--input", "x=" + e["x"], "--output-dir", od]
            if allow:
                args.append("--allow-changed-kernels")
            rc, sout, err = run.run_graphcc(ctx, args)
            hashes = re.findall(r"\b[0-9a-f]{64}\b", err)
            if allow:
                ok = rc == 0 and "libscaledtanh_interp.so" in err and len(set(hashes)) == 2 \
                    and os.path.exists(os.path.join(od, "y.npy"))
            else:
                ok = rc == 1 and "libscaledtanh_interp.so" in err and \
                    len(set(hashes)) == 2 and not os.listdir(od)
            return run.Result(ok, err.strip().splitlines()[0][:150] if err.strip() else
                              run.describe_rc(rc), err)
        return fn
    out.append(("gcb/changed-library", changed(False)))
    out.append(("gcb/changed-library-allowed", changed(True)))

    def missing():
        e, r = setup("missing")
        if r:
            return r
        os.remove(e["lib"])
        return refusal(ctx, "missing-library", ["run", e["gcb"], "--input", "x=" + e["x"]],
                       ["libscaledtanh_interp.so", "lenet.gcb"])[1]()
    out.append(("gcb/missing-library", missing))

    # Corruptions of a real program with weights (squeezenet: small, has both sections).
    sq = os.path.join(torch, "squeezenet1_0")
    good = os.path.join(ctx.work, "gcb-squeezenet.gcb")
    if os.path.exists(os.path.join(sq, "model.onnx")):
        rc, _, err = run.run_graphcc(ctx, ["compile", os.path.join(sq, "model.onnx"), "-o", good])
        if rc == 0:
            out += corrupt_cases(ctx, good, os.path.join(sq, "input.npy"))
        else:
            out.append(("gcb/corrupt/setup", lambda e=err: run.Result(
                False, "compiling squeezenet failed", e)))
    out.append(refusal(ctx, "usage/shape-on-gcb",
                       ["run", os.path.join(ctx.work, "example.gcb"), "--shape", "x=1x2"],
                       ["--shape"], expect=2))
    # --ops means nothing for a compiled program: its kernels are recorded
    out.append(refusal(ctx, "usage/ops-on-gcb",
                       ["run", os.path.join(ctx.work, "example.gcb"), "--ops",
                        os.path.join(ctx.plugins, "seed-lenet", "seed-lenet.yaml")],
                       ["--ops", "already compiled"], expect=2))
    out += runtime_alone(ctx)

    def example():
        exe = os.path.join(ctx.build, "bin", "example-custom-graph")
        p = subprocess.run([exe, os.path.join(ctx.plugins, "seed-lenet", "seed-lenet.yaml"),
                            os.path.join(ctx.work, "example.gcb")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        text = (p.stdout + p.stderr).decode()
        return run.Result(p.returncode == 0, text.strip()[:150], text)
    out.append(("gcb/example", example))
    return out
