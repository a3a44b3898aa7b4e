#!/usr/bin/python3
"""Run ONNX's backend node and simple tests through `graphcc run`.

Usage: runner.py --graphcc PATH --data DIR --work DIR [--expected FILE]
                 [--jobs N] [--timeout S] [--only SUBSTRING]... [--list-failures]

DIR holds what tests/conformance/generate.py wrote (DIR/node/<test>/ and
DIR/simple/<test>/, each with model.onnx and test_data_set_*/). Every test
runs in its own `graphcc run` process (inputs as the .pb files ONNX ships,
bound by name in graph-input order, initializers left out) with a timeout;
each output graphcc writes (OUT/<name>.npy; a sequence as OUT/<name>/ with
0.npy, 1.npy, ...; an empty optional as OUT/<name>.none) is compared with
ONNX's expected output_*.pb (a TensorProto, SequenceProto or OptionalProto)
using ONNX's own tolerances: rtol 1e-3, atol 1e-7, NaN equals NaN, exact for
integer, bool and string tensors. An output that cannot be compared (a map,
a type .npy cannot hold) is a failure with that reason, never a skip.
Bernoulli's expected outputs are NumPy's unseeded binomial draws, which ONNX
says an implementation need not reproduce (graphcc's draws are
RandomState(seed) ones, docs/random.md, checked in tests/random): there the
output's shape and dtype must match and every value be 0 or 1, since equal
draws would be chance.

The expected-failures file lists `test_name  reason` lines (# comments).
The run fails if a test fails that is not on the list, or if a test on the
list passes (so the list stays true), or if the list names a test that does
not exist. It prints a per-op-type table and ends with "N passed, N failed"
(N failed counts the unexpected results: failures not on the list plus
listed tests that passed).
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTOL, ATOL = 1e-3, 1e-7


def snake(name):
    """ONNX op type -> the snake_case its node tests are named with."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s)
    return s.lower()


def op_namer():
    """-> function(test name) -> op type, by the longest matching prefix
    test_<snake(op)> over every op ONNX defines."""
    ops = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        ops.setdefault("test_" + snake(schema.name), schema.name)
    # Spellings the test generators use that snake() does not produce.
    extra = {"test_lrn": "LRN", "test_gru": "GRU", "test_rnn": "RNN", "test_lstm": "LSTM",
             "test_nllloss": "NegativeLogLikelihoodLoss", "test_sce": "SoftmaxCrossEntropyLoss",
             "test_basic_conv": "Conv", "test_conv_with": "Conv", "test_basic_convinteger": "ConvInteger",
             "test_convinteger": "ConvInteger", "test_convtranspose": "ConvTranspose",
             "test_averagepool": "AveragePool", "test_maxpool": "MaxPool", "test_maxunpool": "MaxUnpool",
             "test_globalaveragepool": "GlobalAveragePool", "test_globalmaxpool": "GlobalMaxPool",
             "test_logsoftmax": "LogSoftmax", "test_batchnorm": "BatchNormalization",
             "test_instancenorm": "InstanceNormalization", "test_layer_normalization": "LayerNormalization",
             "test_argmax": "ArgMax", "test_argmin": "ArgMin", "test_matmulinteger": "MatMulInteger",
             "test_qlinearconv": "QLinearConv", "test_qlinearmatmul": "QLinearMatMul",
             "test_dynamicquantizelinear": "DynamicQuantizeLinear", "test_quantizelinear": "QuantizeLinear",
             "test_dequantizelinear": "DequantizeLinear", "test_nonzero": "NonZero",
             "test_nonmaxsuppression": "NonMaxSuppression", "test_onehot": "OneHot",
             "test_topk": "TopK", "test_cumsum": "CumSum", "test_tfidfvectorizer": "TfIdfVectorizer",
             "test_strnorm": "StringNormalizer", "test_gathernd": "GatherND", "test_scatternd": "ScatterND",
             "test_scatter_elements": "ScatterElements", "test_gather_elements": "GatherElements",
             "test_hardmax": "Hardmax", "test_eyelike": "EyeLike", "test_simple_rnn": "RNN", "test_hardsigmoid": "HardSigmoid", "test_hardswish": "HardSwish",
             "test_thresholdedrelu": "ThresholdedRelu", "test_leakyrelu": "LeakyRelu",
             "test_isinf": "IsInf", "test_isnan": "IsNaN", "test_prelu": "PRelu",
             "test_reversesequence": "ReverseSequence", "test_roialign": "RoiAlign",
             "test_depthtospace": "DepthToSpace", "test_spacetodepth": "SpaceToDepth",
             "test_castlike": "CastLike", "test_constantofshape": "ConstantOfShape",
             "test_bitshift": "BitShift", "test_optional": "Optional", "test_if": "If",
             "test_loop": "Loop", "test_scan": "Scan", "test_sequence": "Sequence*",
             "test_split_to_sequence": "SplitToSequence", "test_blackmanwindow": "BlackmanWindow",
             "test_hannwindow": "HannWindow", "test_hammingwindow": "HammingWindow",
             "test_dft": "DFT", "test_stft": "STFT", "test_melweightmatrix": "MelWeightMatrix",
             "test_clip": "Clip", "test_momentum": "Momentum", "test_adagrad": "Adagrad",
             "test_adam": "Adam", "test_nesterov_momentum": "Momentum", "test_training_dropout": "Dropout",
             "test_bernoulli": "Bernoulli", "test_edge_pad": "Pad", "test_reflect_pad": "Pad",
             "test_constant_pad": "Pad", "test_shrink": "Shrink", "test_gridsample": "GridSample",
             "test_reduce_log_sum_exp": "ReduceLogSumExp", "test_mvn": "MeanVarianceNormalization",
             "test_unique": "Unique", "test_upsample": "Upsample", "test_resize": "Resize",
             "test_einsum": "Einsum", "test_det": "Det", "test_col2im": "Col2Im",
             "test_center_crop_pad": "CenterCropPad", "test_cast": "Cast", "test_gemm": "Gemm",
             "test_matmul": "MatMul", "test_softmax": "Softmax", "test_min": "Min", "test_max": "Max",
             "test_mean": "Mean", "test_sum": "Sum", "test_tril": "Trilu", "test_triu": "Trilu",
             "test_lppool": "LpPool", "test_lpnorm": "LpNormalization",
             "test_shape": "Shape", "test_size": "Size", "test_pow": "Pow", "test_mod": "Mod",
             "test_and": "And", "test_or": "Or", "test_xor": "Xor", "test_not": "Not",
             "test_bitwise_and": "BitwiseAnd", "test_bitwise_or": "BitwiseOr", "test_bitwise_xor": "BitwiseXor",
             "test_bitwise_not": "BitwiseNot", "test_identity_opt": "Identity",
             "test_identity_sequence": "Identity", "test_string_concat": "StringConcat",
             "test_expand": "Expand", "test_slice": "Slice", "test_squeeze": "Squeeze",
             "test_unsqueeze": "Unsqueeze", "test_reshape": "Reshape", "test_flatten": "Flatten"}
    ops.update(extra)
    keys = sorted(ops, key=len, reverse=True)

    def name(test):
        for k in keys:
            if test == k or test.startswith(k + "_") or (test.startswith(k) and k in extra):
                return ops[k]
        return "?"
    return name


def op_families():
    """op type -> the graphcc kernel family (runtime/kernels/<family>.h) that
    implements it; ops graphcc has no kernel for are 'missing'."""
    fam = {}
    kdir = os.path.join(ROOT, "runtime", "kernels")
    for f in sorted(os.listdir(kdir)):
        if not f.endswith(".h") or "impl" in f:
            continue
        with open(os.path.join(kdir, f)) as fh:
            text = fh.read()
        for m in re.finditer(r"\bX\((\w+),", text):
            fam[m.group(1)] = f[:-2]
    return fam


def load_expected(path):
    exp = {}
    if not path or not os.path.exists(path):
        return exp
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 1)
            if len(parts) < 2:
                sys.exit("%s:%d: '%s' has no reason" % (path, ln, parts[0]))
            if parts[0] in exp:
                sys.exit("%s:%d: '%s' listed twice" % (path, ln, parts[0]))
            exp[parts[0]] = parts[1].strip()
    return exp


def read_proto_output(path, vtype):
    """Expected output -> a numpy array (a tensor), a list of them (a
    sequence), None (an empty optional); or raise ValueError(reason)."""
    kind = vtype.WhichOneof("value")
    with open(path, "rb") as f:
        data = f.read()
    if kind == "sequence_type":
        p = onnx.SequenceProto()
        p.ParseFromString(data)
        return numpy_helper.to_list(p), None
    if kind == "optional_type":
        p = onnx.OptionalProto()
        p.ParseFromString(data)
        return numpy_helper.to_optional(p), None
    if kind != "tensor_type":
        raise ValueError("%s output: graphcc has no %s values" %
                         (kind.replace("_type", ""), kind.replace("_type", "")))
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return numpy_helper.to_array(t), t.data_type


def read_output(out, name):
    """What graphcc wrote for output `name` (README, "Sequences and
    optionals"): NAME.npy -> array, NAME/ with 0.npy, 1.npy, ... -> list,
    NAME.none -> None. Raises ValueError(reason) when there is nothing
    readable."""
    npy, folder, none = (os.path.join(out, name + ".npy"), os.path.join(out, name),
                         os.path.join(out, name + ".none"))
    found = [p for p in (npy, folder, none) if os.path.exists(p)]
    if len(found) != 1:
        raise ValueError("graphcc wrote %s for output %s" % (
            " and ".join(os.path.basename(p) for p in found) if found else "nothing", name))
    if found[0] == none:
        return None
    try:
        if found[0] == npy:
            return np.load(npy, allow_pickle=False)
        files = os.listdir(folder)
        if sorted(files) != sorted("%d.npy" % i for i in range(len(files))):
            raise ValueError("output %s/ holds %s, not 0.npy, 1.npy, ..." % (name, sorted(files)))
        return [np.load(os.path.join(folder, "%d.npy" % i), allow_pickle=False)
                for i in range(len(files))]
    except ValueError:
        raise
    except Exception as e:
        raise ValueError("cannot read output %s: %s" % (name, first_line(str(e))))


def compare_value(name, want, got):
    """compare() for tensors, sequences (lists) and optionals (None)."""
    if want is None or got is None:
        if want is None and got is None:
            return None
        return "output %s: %s, expected %s" % (name, "no value" if got is None else "a value",
                                              "no value" if want is None else "a value")
    if isinstance(want, list) or isinstance(got, list):
        if not isinstance(want, list) or not isinstance(got, list):
            return "output %s: a %s, expected a %s" % (
                name, "sequence" if isinstance(got, list) else "tensor",
                "sequence" if isinstance(want, list) else "tensor")
        if len(want) != len(got):
            return "output %s: a sequence of %d tensors, expected %d" % (name, len(got), len(want))
        for i, (w, g) in enumerate(zip(want, got)):
            why = compare("%s[%d]" % (name, i), w, g)
            if why:
                return why
        return None
    return compare(name, want, got)


def compare_draws(name, want, got):
    """Bernoulli's outputs: -> None if got could be draws of want's kind."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return "output %s: %s %s, expected %s %s" % (name, got.dtype, got.shape, want.dtype,
                                                     want.shape)
    if not np.all((got == 0) | (got == 1)):
        return "output %s: values other than 0 and 1: %r" % (name, np.unique(got)[:8])
    return None


def compare(name, want, got):
    """-> None if equal within ONNX's tolerances, else a one-line reason."""
    if got.shape != want.shape:
        return "output %s: shape %s, expected %s" % (name, got.shape, want.shape)
    if want.dtype.kind in "fc":
        if got.dtype != want.dtype:
            return "output %s: dtype %s, expected %s" % (name, got.dtype, want.dtype)
        w = want.astype(np.float64) if want.dtype.kind == "f" else want
        g = got.astype(np.float64) if got.dtype.kind == "f" else got
        nan_w, nan_g = np.isnan(w), np.isnan(g)
        if np.any(nan_w != nan_g):
            i = int(np.argmax((nan_w != nan_g).ravel()))
            return "output %s: NaN mismatch at flat index %d (got %r, expected %r)" % (
                name, i, g.ravel()[i], w.ravel()[i])
        ok = np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
        if not np.all(ok):
            i = int(np.argmin(ok.ravel()))
            return ("output %s: %d of %d values differ beyond rtol %g atol %g; first at flat "
                    "index %d: got %r, expected %r" % (name, int((~ok).sum()), ok.size, RTOL, ATOL,
                                                       i, g.ravel()[i], w.ravel()[i]))
        return None
    if want.dtype == object:
        # ONNX's strings (numpy_helper gives an object array of str);
        # graphcc writes NumPy's fixed-width Unicode ('<U'): equal text.
        if got.dtype.kind != "U":
            return "output %s: dtype %s, expected strings" % (name, got.dtype)
        got, want = got.astype(object), want.astype(object)
    elif got.dtype != want.dtype:
        return "output %s: dtype %s, expected %s" % (name, got.dtype, want.dtype)
    if not np.array_equal(got, want):
        diff = (got != want).ravel()
        i = int(np.argmax(diff))
        return "output %s: %d of %d values differ (exact comparison); first at flat index %d: " \
            "got %r, expected %r" % (name, int(diff.sum()), diff.size, i, got.ravel()[i],
                                     want.ravel()[i])
    return None


GROUPS = [
    (("RNN", "LSTM", "GRU"), "RNN/LSTM/GRU: no kernel"),
    (("StringConcat", "RegexFullMatch", "StringSplit"),
     "string ops (StringConcat, RegexFullMatch, StringSplit): no kernel"),
    (("Momentum", "Adam", "Adagrad", "Gradient"),
     "ai.onnx.preview.training (Gradient, Adam, Adagrad, Momentum): training not supported"),
]


def classify(why, test=""):
    """A raw failure message (of test) -> the one-line reason the list groups by."""
    m = re.search(r"no (?:built-in op|op package provides) '(\w+)'", why)
    if m:
        for ops, reason in GROUPS:
            if m.group(1) in ops:
                return reason
        return "%s: no kernel" % m.group(1)
    if "output: graphcc has no" in why or "is a map" in why:
        return "maps: graphcc has no map values"
    if "cannot write bfloat16" in why:
        return "bfloat16 output: .npy has no bfloat16 type, so graphcc cannot write the result"
    if "but the model expects" in why:
        return ("test data contradicts the model (input 'like' is 1 element, the model declares "
                "3x4; ONNX 1.12 test bug): graphcc refuses such inputs")
    if "training_mode" in why:
        return "BatchNormalization training_mode=1: graphcc runs inference only"
    return why


def write_expected(path, failures):
    """Write the list of failures [(test, raw reason)], grouped by reason."""
    groups = {}
    for t, why in failures:
        groups.setdefault(classify(why, t), []).append(t)
    with open(path, "w") as f:
        f.write("# ONNX backend tests graphcc still fails, one per line: test name, then the\n"
                "# reason. tests/conformance/runner.py fails if a listed test passes or an\n"
                "# unlisted one fails. Regenerate: runner.py ... --write-expected FILE\n"
                "# (then check the reasons).\n")
        for reason in sorted(groups, key=lambda r: (-len(groups[r]), r)):
            f.write("\n# %s (%d)\n" % (reason, len(groups[reason])))
            for t in sorted(groups[reason]):
                f.write("%-50s %s\n" % (t, reason))


def bfloat16_input(pb, vi, out):
    """ONNX 1.12's generators store bfloat16 test data as uint16 TensorProtos
    (NumPy has no bfloat16); ONNX Runtime's test runner reads them as the
    model's bfloat16. Do the same: re-tag such a file as BFLOAT16 (same
    bits) in the work dir. Any other file is used as it is."""
    if vi.type.tensor_type.elem_type != onnx.TensorProto.BFLOAT16:
        return pb
    t = onnx.TensorProto()
    with open(pb, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type != onnx.TensorProto.UINT16:
        return pb
    t.data_type = onnx.TensorProto.BFLOAT16
    fixed = os.path.join(out, "bf16-" + os.path.basename(pb))
    with open(fixed, "wb") as f:
        f.write(t.SerializeToString())
    return fixed


def bfloat16_output(got, want, vo):
    """graphcc writes a bfloat16 output as ml_dtypes does ('<V2' items, the
    bits); ONNX 1.12 stores the expected bfloat16 values as uint16 bits (the
    inputs' convention, above): compare the bits."""
    if (vo.type.WhichOneof("value") == "tensor_type"
            and vo.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
            and isinstance(got, np.ndarray) and got.dtype.kind == "V" and got.dtype.itemsize == 2
            and isinstance(want, np.ndarray) and want.dtype == np.uint16):
        return got.view("<u2")
    return got


def first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line:
            return line[:300]
    return ""


def run_test(graphcc, tdir, out_root, timeout):
    """-> (ok, reason)"""
    try:
        model = onnx.load(os.path.join(tdir, "model.onnx"), load_external_data=False)
    except Exception as e:  # a model this onnx cannot read is still a failure
        return False, "cannot load model.onnx: %s" % first_line(str(e))
    g = model.graph
    inits = {t.name for t in g.initializer} | {t.name for t in g.sparse_initializer}
    inputs = [i for i in g.input if i.name not in inits]
    sets = sorted(d for d in os.listdir(tdir) if d.startswith("test_data_set_"))
    if not sets:
        return False, "no test_data_set_* folder"
    for s in sets:
        sdir = os.path.join(tdir, s)
        out = os.path.join(out_root, s)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        cmd = [graphcc, "run", os.path.join(tdir, "model.onnx"), "--output-dir", out]
        for j, vi in enumerate(inputs):
            pb = os.path.join(sdir, "input_%d.pb" % j)
            if not os.path.exists(pb):
                break  # trailing optional inputs the test does not give
            kind = vi.type.WhichOneof("value")
            if kind not in ("tensor_type", "sequence_type", "optional_type"):
                return False, "input %s is a %s: graphcc has no %s values" % (
                    vi.name, kind.replace("_type", ""), kind.replace("_type", ""))
            if kind == "tensor_type":
                pb = bfloat16_input(pb, vi, out)
            cmd += ["--input", "%s=%s" % (vi.name, pb)]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, "timed out after %gs" % timeout
        except OSError as e:
            return False, "cannot run %s: %s" % (graphcc, e)
        if p.returncode != 0:
            msg = first_line(p.stderr.decode("utf-8", "replace"))
            msg = msg.replace(tdir + "/", "").replace(ROOT + "/", "")
            return False, "graphcc exit %d: %s" % (p.returncode, msg)
        for j, vo in enumerate(g.output):
            pb = os.path.join(sdir, "output_%d.pb" % j)
            if not os.path.exists(pb):
                return False, "%s has no output_%d.pb" % (s, j)
            try:
                want, _ = read_proto_output(pb, vo.type)
            except ValueError as e:
                return False, str(e)
            try:
                got = read_output(out, vo.name)
            except ValueError as e:
                return False, str(e)
            got = bfloat16_output(got, want, vo)
            if os.path.basename(tdir).startswith("test_bernoulli"):
                why = compare_draws(vo.name, want, got)
            else:
                why = compare_value(vo.name, want, got)
            if why:
                return False, why
    shutil.rmtree(out_root, ignore_errors=True)
    return True, ""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphcc", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--expected", default=os.path.join(ROOT, "tests", "conformance",
                                                       "expected-failures.txt"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--only", action="append", default=[],
                    help="run only tests whose name contains this (repeatable)")
    ap.add_argument("--list-failures", action="store_true",
                    help="print every failing test with its reason (expected or not)")
    ap.add_argument("--write-expected", metavar="FILE",
                    help="write the current failures, grouped by reason, as an expected-failures list")
    a = ap.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    graphcc = os.path.abspath(a.graphcc)
    if not os.access(graphcc, os.X_OK):
        print("conformance: %s is not an executable (build it first)" % graphcc)
        print("0 passed, 1 failed")
        return 1
    tests = []
    for kind in ("node", "simple"):
        kdir = os.path.join(a.data, kind)
        if not os.path.isdir(kdir):
            print("conformance: %s missing (generate the tests first)" % kdir)
            print("0 passed, 1 failed")
            return 1
        for t in sorted(os.listdir(kdir)):
            if not a.only or any(s in t for s in a.only):
                tests.append((kind, t))
    expected = load_expected(a.expected)
    names = {t for _, t in tests}
    opname, families = op_namer(), op_families()

    def one(kt):
        kind, t = kt
        return kt, run_test(graphcc, os.path.join(a.data, kind, t), os.path.join(a.work, kind, t),
                            a.timeout)

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for (kind, t), r in ex.map(one, tests):
            results[(kind, t)] = r

    table = {}  # (kind, op) -> [passed, failed]
    n_pass = {"node": 0, "simple": 0}
    n_total = {"node": 0, "simple": 0}
    unexpected_fail, unexpected_pass = [], []
    for (kind, t), (ok, why) in sorted(results.items()):
        op = opname(t) if kind == "node" else "(simple)"
        row = table.setdefault((kind, op), [0, 0])
        row[0 if ok else 1] += 1
        n_total[kind] += 1
        n_pass[kind] += ok
        if ok and t in expected:
            unexpected_pass.append((t, expected[t]))
        elif not ok and t not in expected:
            unexpected_fail.append((t, why))
        if not ok and a.list_failures:
            print("FAIL %s/%s: %s" % (kind, t, why))
    if a.write_expected:
        write_expected(a.write_expected, [(t, why) for (k, t), (ok, why) in results.items() if not ok])
    stale = [] if a.only else sorted(set(expected) - names)

    fam_tot = {}
    print("%-28s %-20s %6s %6s" % ("op", "family", "passed", "failed"))
    for (kind, op), (p, f) in sorted(table.items(), key=lambda kv: (kv[0][0] != "node", kv[0][1])):
        fam = families.get(op, "simple" if kind == "simple" else "(no kernel)")
        ft = fam_tot.setdefault(fam, [0, 0])
        ft[0] += p
        ft[1] += f
        print("%-28s %-20s %6d %6d" % (op, fam, p, f))
    print()
    print("%-20s %6s %6s" % ("family", "passed", "failed"))
    for fam, (p, f) in sorted(fam_tot.items()):
        print("%-20s %6d %6d" % (fam, p, f))
    print()
    for kind in ("node", "simple"):
        print("%s tests: %d of %d pass" % (kind, n_pass[kind], n_total[kind]))
    listed_failing = sum(1 for (k, t), (ok, _) in results.items() if not ok and t in expected)
    print("expected failures (listed in %s): %d" % (os.path.relpath(a.expected, ROOT)
                                                   if a.expected.startswith(ROOT) else a.expected,
                                                   listed_failing))
    for t, why in unexpected_fail:
        print("UNEXPECTED FAIL %s: %s" % (t, why))
    for t, why in unexpected_pass:
        print("UNEXPECTED PASS %s (listed as: %s): remove it from the list" % (t, why))
    for t in stale:
        print("STALE %s: listed in the expected failures but no such test" % t)
    bad = len(unexpected_fail) + len(unexpected_pass) + len(stale)
    good = sum(n_pass.values()) + listed_failing
    print("%d passed, %d failed" % (good, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
