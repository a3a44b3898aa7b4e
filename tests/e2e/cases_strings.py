"""String tensors end to end, through `graphcc run` with .npy ('<U') and
.pb inputs and '<U' outputs, each against NumPy or Python:

  strings/cast/to-<type>      Cast to string vs NumPy's str() of each scalar
                              (every float16, random float32/float64 bit
                              patterns, powers of two, integers, bools), exact
  strings/cast/from-<type>    Cast from string vs NumPy's astype, bit-exact
  strings/cast/refused-*      unparsable / out-of-range strings: exit 1 naming
                              the node and the string, nothing written
  strings/strnorm/<case>      StringNormalizer vs a Python reference of the
                              ONNX spec (case mapping: Python's str.upper /
                              str.lower of each character, where it gives one
                              character, over the ranges graphcc supports;
                              other characters unchanged)
  strings/io/*                Unicode through .npy and .pb and back, exact;
                              object arrays, NUL and invalid UTF-8 refused
  strings/arena/*             string tensors whose arena bytes float tensors
                              reuse, run 3 times (under SAN=1: ASan)
  strings/debug/*             --trace and --dump-dir on string tensors
"""
import os

import numpy as np

import run

OPSET = 13
# The characters whose case graphcc maps (runtime/kernels/text.c).
CASE_RANGES = [(0x01, 0x7F), (0x80, 0xFF), (0x100, 0x17F), (0x386, 0x3CE), (0x400, 0x45F)]


def _save_model(d, name, nodes, inputs, outputs, opset=OPSET):
    import onnx
    from onnx import helper
    g = helper.make_graph(nodes, name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    return path


def _vi(name, t, shape):
    from onnx import helper
    return helper.make_tensor_value_info(name, t, shape)


def _run(ctx, tag, model, feeds, extra=()):
    """Runs model on feeds ({name: array or path}); -> (rc, err, outdir)."""
    d = os.path.dirname(model)
    args = ["run", model]
    for k, v in feeds.items():
        if isinstance(v, str):
            p = v
        else:
            p = os.path.join(d, k + ".npy")
            np.save(p, v, allow_pickle=False)
        args += ["--input", "%s=%s" % (k, p)]
    od = run.fresh_dir(os.path.join(ctx.out, "strings", tag))
    rc, _, err = run.run_graphcc(ctx, args + ["--output-dir", od] + list(extra))
    return rc, err, od


def _same_strings(got, want):
    """None if got ('<U' array) holds want's text, else why not."""
    if got.dtype.kind != "U":
        return "dtype %s, expected '<U'" % got.dtype
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    diff = np.nonzero(got.ravel().astype(object) != want.ravel().astype(object))[0]
    if len(diff):
        i = int(diff[0])
        return "%d of %d differ; first at %d: got %r, expected %r" % (
            len(diff), got.size, i, got.ravel()[i], want.ravel()[i])
    width = max([len(s) for s in want.ravel()] + [1])
    if got.dtype.itemsize != 4 * width:
        return "dtype %s, expected <U%d (the longest string)" % (got.dtype, width)
    return None


def _cast_model(ctx, tag, frm, to, n):
    return _save_model(os.path.join(ctx.work, "strings", tag), tag.replace("/", "-"),
                       [_node("Cast", ["x"], ["y"], name="cast0", to=to)],
                       [_vi("x", frm, [n])], [_vi("y", to, [n])])


def _node(op, ins, outs, **kw):
    from onnx import helper
    return helper.make_node(op, ins, outs, **kw)


# ------------------------------------------------------------------ Cast

def _float_values(rng, dt, n):
    bits = {np.float32: np.uint32, np.float64: np.uint64}[dt]
    info = np.finfo(dt)
    raw = rng.integers(0, np.iinfo(bits).max, n, dtype=np.uint64, endpoint=True).astype(bits)
    v = raw.view(dt)
    v = v[np.isfinite(v)]
    pow2 = np.array([2.0 ** k for k in range(info.minexp - info.nmant, info.maxexp)], dt)
    special = np.array([0.0, 1e-4, 1e16, 9.999e15, 1e15, 123456789, 16777216, 65504, 0.1,
                        1 / 3, info.max, info.tiny, np.inf, np.nan], dt)
    v = np.concatenate([v, pow2, special])
    return np.concatenate([v, -v])


def cast_cases(ctx):
    from onnx import TensorProto as TP
    out = []
    rng = np.random.default_rng(11)
    half = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    to_string = [
        ("to-float32", TP.FLOAT, _float_values(rng, np.float32, 20000)),
        ("to-float64", TP.DOUBLE, _float_values(rng, np.float64, 20000)),
        ("to-float16", TP.FLOAT16, half),  # every float16, NaNs and infinities too
        ("to-int64", TP.INT64, np.concatenate([rng.integers(-2**63, 2**63 - 1, 500,
                                                            dtype=np.int64),
                                               np.array([0, -1, 2**63 - 1, -2**63], np.int64)])),
        ("to-uint64", TP.UINT64, np.array([0, 1, 2**64 - 1, 2**63], np.uint64)),
        ("to-int8", TP.INT8, np.arange(-128, 128, dtype=np.int8)),
        ("to-bool", TP.BOOL, np.array([True, False, True])),
    ]
    for tag, t, x in to_string:
        def fn(tag=tag, t=t, x=x):
            model = _cast_model(ctx, "cast/" + tag, t, TP.STRING, len(x))
            rc, err, od = _run(ctx, "cast-" + tag, model, {"x": x})
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            want = np.array([str(v) for v in x])
            why = _same_strings(np.load(os.path.join(od, "y.npy")), want)
            return run.Result(why is None, why or "%d values as NumPy prints them" % len(x))
        out.append(("strings/cast/" + tag, fn))

    f = rng.standard_normal(3000) * 10.0 ** rng.integers(-40, 40, 3000)
    texts = ["0.47892547", "NaN", "INF", "+INF", "-INF", "nan", "inf", "-inf", "Infinity",
             " 1.5 ", "\t2e3\n", "1e-5", "1E8", "-0", "+0.0", ".5", "5.", "1e400", "-1e400",
             "1e-400", "3.4028235e38", "3.4028236e38", "1e-45", "65519.99", "65520",
             "123456789012345678901234567890"] + [repr(v) for v in f] + \
        ["%.3g" % v for v in f[:300]]
    texts = np.array(texts)
    ints = np.array(["0", "-1", "+7", " 42 ", "9223372036854775807", "-9223372036854775808",
                     "00012", "-0"])
    from_string = [
        ("from-float32", TP.FLOAT, np.float32, texts),
        ("from-float64", TP.DOUBLE, np.float64, texts),
        ("from-float16", TP.FLOAT16, np.float16, texts),
        ("from-int64", TP.INT64, np.int64, ints),
        ("from-uint8", TP.UINT8, np.uint8, np.array(["0", "255", " 17", "+3", "-0"])),
    ]
    for tag, t, dt, x in from_string:
        def fn(tag=tag, t=t, dt=dt, x=x):
            model = _cast_model(ctx, "cast/" + tag, TP.STRING, t, len(x))
            rc, err, od = _run(ctx, "cast-" + tag, model, {"x": x})
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            got = np.load(os.path.join(od, "y.npy"))
            with np.errstate(over="ignore"):
                want = x.astype(dt)
            if got.dtype != want.dtype or got.shape != want.shape:
                return run.Result(False, "got %s %s" % (got.dtype, got.shape))
            same = got.view(np.uint8).reshape(len(x), -1) == want.view(np.uint8).reshape(
                len(x), -1)
            ok = same.all(1)
            if want.dtype.kind == "f":
                ok |= np.isnan(got) & np.isnan(want)
            bad = np.nonzero(~ok)[0]
            if len(bad):
                i = int(bad[0])
                return run.Result(False, "%d differ; %r -> %r, NumPy %r" % (
                    len(bad), x[i], got[i], want[i]))
            return run.Result(True, "%d strings, bit-exact" % len(x))
        out.append(("strings/cast/" + tag, fn))

    def round_trip():
        """bool -> string -> bool, and the strings NumPy cannot read back."""
        d = os.path.join(ctx.work, "strings", "cast", "bool-round-trip")
        model = _save_model(d, "rt", [_node("Cast", ["x"], ["s"], to=TP.STRING),
                                      _node("Cast", ["s"], ["y"], to=TP.BOOL),
                                      _node("Cast", ["t"], ["z"], to=TP.BOOL)],
                            [_vi("x", TP.BOOL, [4]), _vi("t", TP.STRING, [5])],
                            [_vi("y", TP.BOOL, [4]), _vi("z", TP.BOOL, [5])])
        x = np.array([True, False, False, True])
        rc, err, od = _run(ctx, "cast-bool-rt", model, {
            "x": x, "t": np.array(["true", " FALSE ", "0", "2.5", "nan"])})
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        y, z = np.load(os.path.join(od, "y.npy")), np.load(os.path.join(od, "z.npy"))
        ok = np.array_equal(y, x) and np.array_equal(z, [True, False, False, True, True])
        return run.Result(ok, "y %s z %s" % (y, z))
    out.append(("strings/cast/bool-round-trip", round_trip))

    def bf16_round_trip():
        """Every bfloat16 (NumPy has none to compare with): to string and back
        gives the same value, with no more digits than NumPy's str() of the
        same value as float32, and bfloat16's 4 digits at most."""
        from onnx import helper
        d = os.path.join(ctx.work, "strings", "cast", "bf16")
        model = _save_model(d, "bf16", [_node("Cast", ["x"], ["s"], to=TP.STRING),
                                        _node("Cast", ["s"], ["b"], to=TP.BFLOAT16),
                                        _node("Cast", ["b"], ["y"], to=TP.FLOAT)],
                            [_vi("x", TP.BFLOAT16, [65536])],
                            [_vi("y", TP.FLOAT, [65536]), _vi("s", TP.STRING, [65536])])
        bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
        pb = os.path.join(d, "x.pb")
        t = helper.make_tensor("x", TP.BFLOAT16, [65536], bits.tobytes(), raw=True)
        with open(pb, "wb") as fh:
            fh.write(t.SerializeToString())
        rc, err, od = _run(ctx, "cast-bf16", model, {"x": pb})
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        x = (bits.astype(np.uint32) << 16).view(np.float32)
        y, s = np.load(os.path.join(od, "y.npy")), np.load(os.path.join(od, "s.npy"))
        same = (y.view(np.uint32) == x.view(np.uint32)) | (np.isnan(x) & np.isnan(y))
        if not same.all():
            i = int(np.argmin(same))
            return run.Result(False, "%r -> %r -> %r" % (x[i], s[i], y[i]))

        def ndig(text):
            m = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0").rstrip("0")
            return len(m)
        fin = np.isfinite(x) & (x != 0)
        longer = [i for i in np.nonzero(fin)[0] if ndig(s[i]) > min(4, ndig(str(x[i])))]
        if longer:
            i = longer[0]
            return run.Result(False, "%d texts too long; %r as %r (float32 %r)" % (
                len(longer), x[i], s[i], str(x[i])))
        return run.Result(True, "65536 values round-trip, shortest digits")
    out.append(("strings/cast/bf16-round-trip", bf16_round_trip))

    for tag, t, text, must in [("refused-not-a-number", TP.FLOAT, "12abc", "not a number"),
                               ("refused-hex", TP.DOUBLE, "0x1p3", "not a number"),
                               ("refused-fraction-to-int", TP.INT32, "2.5", "integers"),
                               ("refused-out-of-range", TP.UINT8, "256", "out of the range"),
                               ("refused-empty", TP.FLOAT, "", "not a number")]:
        def fn(tag=tag, t=t, text=text, must=must):
            model = _cast_model(ctx, "cast/" + tag, TP.STRING, t, 3)
            rc, err, od = _run(ctx, "cast-" + tag, model, {"x": np.array(["1", text, "2"])})
            ok = rc == 1 and "cast0" in err and '"%s"' % text in err and must in err and \
                "element 1" in err and not os.listdir(od)
            return run.Result(ok, err.strip()[:200], err)
        out.append(("strings/cast/" + tag, fn))
    return out


# ------------------------------------------------------- StringNormalizer

def _map_char(c, f):
    cp = ord(c)
    if not any(lo <= cp <= hi for lo, hi in CASE_RANGES):
        return c
    r = f(c)
    return r if len(r) == 1 else c


def _lower(s):
    return "".join(_map_char(c, str.lower) for c in s)


def _upper(s):
    return "".join(_map_char(c, str.upper) for c in s)


def strnorm_ref(x, action="NONE", sensitive=0, stopwords=()):
    """The ONNX spec of StringNormalizer, in Python."""
    flat = list(x.ravel())
    if sensitive:
        kept = [s for s in flat if s not in set(stopwords)]
    else:
        stops = {_lower(w) for w in stopwords}
        kept = [s for s in flat if _lower(s) not in stops]
    f = {"NONE": lambda s: s, "LOWER": _lower, "UPPER": _upper}[action]
    kept = [f(s) for s in kept] or [""]
    y = np.array(kept)
    return y.reshape(1, -1) if x.ndim == 2 else y


def strnorm_cases(ctx):
    from onnx import TensorProto as TP
    words = np.array(["Monday", "tuesday", "Straße", "ÉTÉ", "été", "Ωμέγα", "ΣΊΣΥΦΟΣ",
                      "Привет", "ÿ", "ı", "ſ", "µ", "İstanbul", "日本語", "😀 emoji", "",
                      "MiXeD ǅ Ա"])
    table = np.array([chr(c) for lo, hi in CASE_RANGES for c in range(lo, hi + 1)] +
                     ["ǅ", "Ա", "ա", "Ꭰ", "ꭰ", "ﬀ", "ẞ", "K", "😀"])
    cases = [
        ("none-sensitive", words, dict(stopwords=["Monday", "été"], is_case_sensitive=1)),
        ("lower-insensitive", words, dict(stopwords=["monday", "ÉTÉ", "ωμέγα"],
                                          case_change_action="LOWER")),
        ("upper-insensitive-2d", words.reshape(1, -1), dict(stopwords=["straße", "привет"],
                                                            case_change_action="UPPER")),
        ("upper-no-stopwords", words, dict(case_change_action="UPPER", locale="en_US")),
        ("all-removed-1d", np.array(["a", "A"]), dict(stopwords=["a"])),
        ("all-removed-2d", np.array([["a", "A", "a"]]), dict(stopwords=["A"],
                                                             case_change_action="LOWER")),
        ("table-upper", table, dict(case_change_action="UPPER")),
        ("table-lower", table, dict(case_change_action="LOWER")),
        ("table-stopwords-insensitive", table, dict(stopwords=["a", "Ä", "σ", "Ж", "ǅ"])),
    ]
    out = []
    for tag, x, attrs in cases:
        def fn(tag=tag, x=x, attrs=attrs):
            model = _save_model(os.path.join(ctx.work, "strings", "strnorm", tag), tag,
                                [_node("StringNormalizer", ["x"], ["y"], name="sn0", **attrs)],
                                [_vi("x", TP.STRING, list(x.shape))],
                                [_vi("y", TP.STRING, None)], opset=10)
            rc, err, od = _run(ctx, "strnorm-" + tag, model, {"x": x})
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            want = strnorm_ref(x, attrs.get("case_change_action", "NONE"),
                               attrs.get("is_case_sensitive", 0), attrs.get("stopwords", ()))
            why = _same_strings(np.load(os.path.join(od, "y.npy")), want)
            return run.Result(why is None, why or "%d -> %d strings" % (x.size, want.size))
        out.append(("strings/strnorm/" + tag, fn))

    # the same through a .pb input (ONNX's own test data format)
    def pb_input():
        from onnx import numpy_helper
        x = words
        d = os.path.join(ctx.work, "strings", "strnorm", "pb")
        model = _save_model(d, "pb", [_node("StringNormalizer", ["x"], ["y"],
                                            case_change_action="LOWER", stopwords=["ı"])],
                            [_vi("x", TP.STRING, [len(x)])], [_vi("y", TP.STRING, None)],
                            opset=10)
        pb = os.path.join(d, "x.pb")
        with open(pb, "wb") as fh:
            fh.write(numpy_helper.from_array(x.astype(object), "x").SerializeToString())
        rc, err, od = _run(ctx, "strnorm-pb", model, {"x": pb})
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        why = _same_strings(np.load(os.path.join(od, "y.npy")),
                            strnorm_ref(x, "LOWER", 0, ["ı"]))
        return run.Result(why is None, why or "ok")
    out.append(("strings/strnorm/pb-input", pb_input))

    for tag, attrs, x, must in [
            ("refused-turkish-locale", dict(locale="tr_TR", case_change_action="UPPER"),
             np.array(["i"]), "tr_TR"),
            ("refused-bad-action", dict(case_change_action="TITLE"), np.array(["i"]), "TITLE"),
            ("refused-rank-3", dict(), np.array([[["a"]]]), "[C] or [1, C]")]:
        def fn(tag=tag, attrs=attrs, x=x, must=must):
            model = _save_model(os.path.join(ctx.work, "strings", "strnorm", tag), tag,
                                [_node("StringNormalizer", ["x"], ["y"], name="sn0", **attrs)],
                                [_vi("x", TP.STRING, list(x.shape))],
                                [_vi("y", TP.STRING, None)], opset=10)
            rc, err, od = _run(ctx, "strnorm-" + tag, model, {"x": x})
            ok = rc == 1 and "sn0" in err and must in err and not os.listdir(od)
            return run.Result(ok, err.strip()[:200], err)
        out.append(("strings/strnorm/" + tag, fn))
    return out


# ------------------------------------------------------------ files

def io_cases(ctx):
    from onnx import TensorProto as TP, numpy_helper
    out = []
    text = np.array([["", "a", "é", "€uro"], ["日本語テキスト", "😀🎉", "tab\there", "Ω"]])

    def identity_model(tag, shape, no_opt=False):
        return _save_model(os.path.join(ctx.work, "strings", "io", tag), tag,
                           [_node("Identity", ["x"], ["i"]), _node("Reshape", ["i", "s"], ["y"])],
                           [_vi("x", TP.STRING, shape), _vi("s", TP.INT64, [1])],
                           [_vi("y", TP.STRING, None), _vi("i", TP.STRING, shape)])

    def npy_round_trip(no_opt):
        def fn():
            tag = "npy-round-trip" + ("-no-optimize" if no_opt else "")
            model = identity_model(tag, list(text.shape))
            rc, err, od = _run(ctx, tag, model, {"x": text, "s": np.array([-1], np.int64)},
                               ["--no-optimize", "--repeat", "3"] if no_opt else [])
            if rc != 0:
                return run.Result(False, run.describe_rc(rc), err)
            why = _same_strings(np.load(os.path.join(od, "y.npy")), text.ravel()) or \
                _same_strings(np.load(os.path.join(od, "i.npy")), text)
            return run.Result(why is None, why or "8 strings, 1-4 byte UTF-8, exact")
        return fn
    out.append(("strings/io/npy-round-trip", npy_round_trip(False)))
    out.append(("strings/io/npy-round-trip-no-optimize", npy_round_trip(True)))

    def pb_round_trip():
        model = identity_model("pb-round-trip", list(text.shape))
        d = os.path.dirname(model)
        pb = os.path.join(d, "x.pb")
        with open(pb, "wb") as fh:
            fh.write(numpy_helper.from_array(text.astype(object), "x").SerializeToString())
        rc, err, od = _run(ctx, "pb-round-trip", model, {"x": pb, "s": np.array([-1], np.int64)})
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        why = _same_strings(np.load(os.path.join(od, "i.npy")), text)
        return run.Result(why is None, why or "ok")
    out.append(("strings/io/pb-round-trip", pb_round_trip))

    def gcb():
        """Compiled to .gcb and run from it (string activations; no string
        constants, which .gcb cannot hold yet)."""
        d = os.path.join(ctx.work, "strings", "io", "gcb")
        model = _save_model(d, "gcb", [
            _node("StringNormalizer", ["x"], ["u"], case_change_action="LOWER"),
            _node("Cast", ["u"], ["f"], to=TP.DOUBLE),
            _node("Cast", ["f"], ["y"], to=TP.STRING)],
            [_vi("x", TP.STRING, [4])], [_vi("y", TP.STRING, [4]), _vi("u", TP.STRING, [4])])
        prog = os.path.join(d, "model.gcb")
        rc, _, err = run.run_graphcc(ctx, ["compile", model, "-o", prog])
        if rc != 0:
            return run.Result(False, "compile: " + run.describe_rc(rc), err)
        x = np.array(["1.5E3", "-INF", "NaN", "0.1"])
        rc, err, od = _run(ctx, "gcb", prog, {"x": x}, ["--repeat", "2"])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        want = np.array([str(v) for v in np.char.lower(x).astype(np.float64)])
        why = _same_strings(np.load(os.path.join(od, "y.npy")), want) or _same_strings(
            np.load(os.path.join(od, "u.npy")), np.char.lower(x))
        return run.Result(why is None, why or "ok")
    out.append(("strings/io/gcb", gcb))

    def bytes_npy():
        model = identity_model("bytes-npy", [3])
        x = np.array([b"abc", b"", b"xy"])  # '|S3'
        rc, err, od = _run(ctx, "bytes-npy", model, {"x": x, "s": np.array([-1], np.int64)})
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        why = _same_strings(np.load(os.path.join(od, "i.npy")), np.array(["abc", "", "xy"]))
        return run.Result(why is None, why or "ok")
    out.append(("strings/io/bytes-npy", bytes_npy))

    def refused(tag, write, must):
        def fn():
            model = identity_model(tag, [2])
            p = os.path.join(os.path.dirname(model), tag + (".pb" if "pb" in tag else ".npy"))
            write(p)
            rc, err, od = _run(ctx, tag, model, {"x": p, "s": np.array([-1], np.int64)})
            ok = rc == 1 and all(m in err for m in must) and not os.listdir(od)
            return run.Result(ok, err.strip()[:200], err)
        return ("strings/io/" + tag, fn)

    def w_object(p):
        np.save(p, np.array(["a", "b"], dtype=object), allow_pickle=True)

    def w_pb_nul(p):
        t = numpy_helper.from_array(np.array([b"ok", b"a\x00b"], dtype=object), "x")
        open(p, "wb").write(t.SerializeToString())

    def w_pb_bad_utf8(p):
        t = numpy_helper.from_array(np.array([b"ok", b"\xff\xfe"], dtype=object), "x")
        open(p, "wb").write(t.SerializeToString())

    def w_npy_surrogate(p):
        np.save(p, np.array(["ok", "\ud800"]))

    def w_npy_nul(p):
        np.save(p, np.array(["ok", "a\x00b"]))

    out.append(refused("object-npy", w_object, ["object-npy.npy", "pickle"]))

    def upper_invalid_utf8():
        """Bytes that are not UTF-8 where case matters: refused naming the node."""
        model = _save_model(os.path.join(ctx.work, "strings", "io", "upper-invalid-utf8"), "u",
                            [_node("StringNormalizer", ["x"], ["y"], name="up0",
                                   case_change_action="UPPER")],
                            [_vi("x", TP.STRING, [2])], [_vi("y", TP.STRING, [2])], opset=10)
        p = os.path.join(os.path.dirname(model), "x.pb")
        w_pb_bad_utf8(p)
        rc, err, od = _run(ctx, "upper-invalid-utf8", model, {"x": p})
        ok = rc == 1 and all(m in err for m in ["'up0'", "element 1", "UTF-8"]) and \
            not os.listdir(od)
        return run.Result(ok, err.strip()[:200], err)
    out.append(("strings/io/upper-invalid-utf8", upper_invalid_utf8))
    out.append(refused("pb-nul", w_pb_nul, ["pb-nul.pb", "NUL", "string 1"]))
    # bytes are fine as input; the output cannot be Unicode text
    out.append(refused("pb-invalid-utf8-output", w_pb_bad_utf8, ["output '", "UTF-8",
                                                                 "element 1"]))
    out.append(refused("npy-surrogate", w_npy_surrogate, ["npy-surrogate.npy", "0xD800",
                                                          "element 1"]))
    out.append(refused("npy-nul-inside", w_npy_nul, ["npy-nul-inside.npy", "NUL", "element 1"]))
    return out


# ------------------------------------------------------- arena, debug

def arena_case(ctx):
    """x -> string -> double -> Neg -> Add -> string -> float, and the
    string tensors' arena bytes are reused by the float ones in between: run
    3 times (strings re-made each run, floats written over their slots)."""
    from onnx import TensorProto as TP

    def fn():
        n = 257
        nodes = [_node("Cast", ["x"], ["s1"], to=TP.STRING),
                 _node("Cast", ["s1"], ["d1"], to=TP.DOUBLE),
                 _node("Neg", ["d1"], ["d2"]),
                 _node("Add", ["d2", "d2"], ["d3"]),
                 _node("Sqrt", ["d3"], ["d4"]),
                 _node("Cast", ["d4"], ["s2"], to=TP.STRING),
                 _node("StringNormalizer", ["s2"], ["s3"], case_change_action="UPPER"),
                 _node("Cast", ["s3"], ["y"], to=TP.FLOAT)]
        model = _save_model(os.path.join(ctx.work, "strings", "arena"), "arena", nodes,
                            [_vi("x", TP.FLOAT, [n])], [_vi("y", TP.FLOAT, [n]),
                                                        _vi("s2", TP.STRING, [n])])
        rng = np.random.default_rng(5)
        x = (rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)).astype(np.float32)
        x[:3] = [-np.inf, np.nan, -0.0]
        rc, err, od = _run(ctx, "arena", model, {"x": x}, ["--repeat", "3", "--no-optimize"])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        d1 = np.array([str(v) for v in x]).astype(np.float64)
        with np.errstate(invalid="ignore"):
            d4 = np.sqrt(-d1 * 2)
        want_s2 = np.array([str(v) for v in d4])
        want_y = np.char.upper(want_s2).astype(np.float32)
        y, s2 = np.load(os.path.join(od, "y.npy")), np.load(os.path.join(od, "s2.npy"))
        why = _same_strings(s2, want_s2)
        if why is None and not np.array_equal(y, want_y, equal_nan=True):
            why = "y differs from NumPy"
        return run.Result(why is None, why or "%d values, 3 runs" % n)
    return ("strings/arena/reuse-3-runs", fn)


def debug_cases(ctx):
    from onnx import TensorProto as TP

    def fn():
        model = _save_model(os.path.join(ctx.work, "strings", "debug"), "dbg",
                            [_node("StringNormalizer", ["x"], ["u"], case_change_action="UPPER"),
                             _node("Cast", ["u"], ["y"], to=TP.FLOAT)],
                            [_vi("x", TP.STRING, [3])], [_vi("y", TP.FLOAT, [3])], opset=13)
        dump = run.fresh_dir(os.path.join(ctx.out, "strings", "debug-dump"))
        rc, err, od = _run(ctx, "debug", model, {"x": np.array(["1.5", "7", "-2e-3"])},
                           ["--trace", "--dump-dir", dump, "--check-nan"])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        u = np.load(os.path.join(dump, "u.npy"))
        why = _same_strings(u, np.array(["1.5", "7", "-2E-3"]))
        if why is None and "StringNormalizer" not in err:
            why = "--trace printed no StringNormalizer line"
        return run.Result(why is None, why or "trace and dump of string tensors", err)
    def not_utf8():
        """--dump-dir skips (with a note) a string tensor that .npy cannot hold."""
        from onnx import numpy_helper
        d = os.path.join(ctx.work, "strings", "debug-bytes")
        model = _save_model(d, "b", [_node("Shape", ["x"], ["y"])],
                            [_vi("x", TP.STRING, [2])], [_vi("y", TP.INT64, [1])])
        p = os.path.join(d, "x.pb")
        with open(p, "wb") as fh:
            fh.write(numpy_helper.from_array(np.array([b"ok", b"\xff"], dtype=object),
                                             "x").SerializeToString())
        dump = run.fresh_dir(os.path.join(ctx.out, "strings", "debug-bytes-dump"))
        rc, err, od = _run(ctx, "debug-bytes", model, {"x": p}, ["--dump-dir", dump])
        if rc != 0:
            return run.Result(False, run.describe_rc(rc), err)
        tsv = open(os.path.join(dump, "tensors.tsv")).read()
        ok = "skipped" in err and "'x'" in err and "UTF-8" in err and "x\t-\tstring" in tsv \
            and np.array_equal(np.load(os.path.join(od, "y.npy")), [2])
        return run.Result(ok, err.strip()[:200], err)
    return [("strings/debug/trace-dump", fn), ("strings/debug/dump-skips-bytes", not_utf8)]


def cases(ctx):
    return cast_cases(ctx) + strnorm_cases(ctx) + io_cases(ctx) + [arena_case(ctx)] + \
        debug_cases(ctx)
