#!/bin/sh
# make valgrind: representative graphcc commands under valgrind, each
# required to give its usual exit status with zero valgrind errors and zero
# definitely-lost bytes (--errors-for-leak-kinds=definite: a definite leak
# is an error, exit 99). Uses the models `make test` generated
# (BUILD/e2e/models) and the demo.
#   tests/fuzz/valgrind.sh GRAPHCC WORKDIR
set -u
GRAPHCC=$(realpath "$1")
WORK=$2
BUILD=$(dirname "$(dirname "$GRAPHCC")")
M=$BUILD/e2e/models
PY=/usr/bin/python3
unset GRAPHCC_OPS_PATH
rm -rf "$WORK" && mkdir -p "$WORK"
if [ ! -f "$M/torch/resnet18/model.onnx" ]; then
	echo "valgrind: $M/torch/resnet18/model.onnx is missing: run make test (or make e2e) first" >&2
	exit 1
fi
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite"
DEMO_OPS=$BUILD/plugins/demo/demo.yaml
LENET_OPS=$BUILD/plugins/seed-lenet/seed-lenet.yaml
GCX_OPS=$BUILD/plugins/gcx-ops/gcx-ops.yaml
$PY - "$WORK" <<'PYEOF'
import sys, numpy as np, onnx
m = onnx.load("models/demo/model.onnx")
i = m.graph.input[0]
shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
np.save(sys.argv[1] + "/demo-x.npy", np.random.default_rng(1).standard_normal(shape).astype(np.float32))
np.save(sys.argv[1] + "/small-x.npy", np.ones((1, 3, 8, 8), np.float32))
open(sys.argv[1] + "/demo-input", "w").write(i.name)
open(sys.argv[1] + "/bad.npy", "wb").write(b"\x93NUMPY\x01\x00\xff\xff{'descr'")
open(sys.argv[1] + "/bad.onnx", "wb").write(b"\x08\x07\x12\x05hello\x3a\xff\xff")
# a dynamic batch (compile --dynamic): y = Reshape(Relu(x W), Shape(x W)), x [N, 4]
from onnx import helper, numpy_helper, TensorProto
W = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 6 - 1, "W")
g = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["xw"]),
                       helper.make_node("Relu", ["xw"], ["r"]),
                       helper.make_node("Shape", ["xw"], ["s"]),
                       helper.make_node("Reshape", ["r", "s"], ["y"])], "dyn",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], [W])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1] + "/dyn.onnx")
np.save(sys.argv[1] + "/dyn-x.npy", np.ones((5, 4), np.float32))
# custom ops under the dynamic batch: ChannelShuffle(ScaledSwish(Relu(x))) + x
g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                       helper.make_node("ScaledSwish", ["r"], ["s"], domain="com.graphcc.demo",
                                        beta=[0.5, 1.0, 1.5, 2.0, 0.25, 3.0], scale=1.5),
                       helper.make_node("ChannelShuffle", ["s"], ["c"],
                                        domain="com.graphcc.demo", group=3),
                       helper.make_node("Add", ["c", "x"], ["y"])], "dyncustom",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 6, 4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 6, 4, 4])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                              helper.make_opsetid("com.graphcc.demo", 1)]),
          sys.argv[1] + "/dyncustom.onnx")
np.save(sys.argv[1] + "/dyncustom-x.npy", np.ones((3, 6, 4, 4), np.float32))
PYEOF
DEMO_IN=$(cat "$WORK/demo-input")

# vg NAME EXPECTED_EXIT ARGS... queues one command as a job of its own;
# vg_then queues it in the previous command's job, after it (it reads what
# that one wrote). run_all runs the jobs, as many at once as there are cores,
# then reports in queue order.
mkdir -p "$WORK/jobs"
queued=0 then=
q() { printf " '%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
vg() {
	name=$1 want=$2
	shift 2
	[ -n "$then" ] || queued=$((queued + 1))
	{
		printf '%s%s' "${VG_ENV:-}" "$VG"
		q "$GRAPHCC"
		for a in "$@"; do q "$a"; done
		printf ' >%s 2>%s; echo $? >%s\n' "'$WORK/$name.out'" "'$WORK/$name.err'" "'$WORK/$name.rc'"
	} >>"$(printf '%s/jobs/%03d.sh' "$WORK" "$queued")"
	echo "$name $want" >>"$WORK/jobs/names"
}
vg_then() { then=1; vg "$@"; then=; }
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS valgrind/$1"; }
fail() { failed=$((failed + 1)); echo "FAIL valgrind/$1"; }
run_all() {
	ls "$WORK"/jobs/*.sh | xargs -P "$(nproc 2>/dev/null || echo 1)" -n 1 sh
	while read -r name want; do
		rc=$(cat "$WORK/$name.rc" 2>/dev/null || echo "?")
		if [ "$rc" = "$want" ]; then
			pass "$name"
		else
			fail "$name: exit $rc, expected $want (99: valgrind found errors or a leak)"
			grep -v "^$" "$WORK/$name.err" | tail -25 | sed 's/^/    | /'
		fi
	done <"$WORK/jobs/names"
}
vg resnet18-run 0 run "$M/torch/resnet18/model.onnx" --input "$M/torch/resnet18/input.npy" --output-dir "$WORK/out-resnet"
vg resnet18-info 0 info "$M/torch/resnet18/model.onnx"
vg resnet18-compile 0 compile "$M/torch/resnet18/model.onnx" -o "$WORK/resnet18.gcb"
vg_then resnet18-gcb-run 0 run "$WORK/resnet18.gcb" --input "$M/torch/resnet18/input.npy" --output-dir "$WORK/out-gcb"
vg_then resnet18-gcb-info 0 info "$WORK/resnet18.gcb"
vg transformer-run 0 run "$M/torch/transformer/model.onnx" --input "$M/torch/transformer/input.npy" --output-dir "$WORK/out-tf"
vg demo-check 0 check "$DEMO_OPS"
vg lenet-check 0 check "$LENET_OPS"
vg gcx-check 0 check "$GCX_OPS"
vg demo-run 0 run models/demo/model.onnx --ops "$DEMO_OPS" --input "$DEMO_IN=$WORK/demo-x.npy" --output-dir "$WORK/out-demo"
vg demo-compile 0 compile models/demo/model.onnx --ops "$DEMO_OPS" -o "$WORK/demo.gcb"
vg_then demo-gcb-run 0 run "$WORK/demo.gcb" --input "$DEMO_IN=$WORK/demo-x.npy" --output-dir "$WORK/out-demo-gcb"
vg demo-dot 0 dot models/demo/model.onnx --ops "$DEMO_OPS"
vg dynamic-compile 0 compile "$WORK/dyn.onnx" --dynamic -o "$WORK/dyn.gcb"
vg_then dynamic-gcb-run 0 run "$WORK/dyn.gcb" --input "x=$WORK/dyn-x.npy" --repeat 3 --output-dir "$WORK/out-dyn"
vg dynamic-custom-compile 0 compile "$WORK/dyncustom.onnx" --dynamic --ops "$DEMO_OPS" -o "$WORK/dyncustom.gcb"
vg_then dynamic-custom-gcb-run 0 run "$WORK/dyncustom.gcb" --input "x=$WORK/dyncustom-x.npy" --repeat 3 --output-dir "$WORK/out-dyncustom"
vg op-conv 0 run "$M/ops/conv_1x1/model.onnx" --input "$M/ops/conv_1x1/input_0.npy" --output-dir "$WORK/out-conv"
# refusals: exit 1, still no error and no leak on the way out
vg refuse-demo-without-ops 1 info models/demo/model.onnx
vg refuse-bad-model 1 compile "$WORK/bad.onnx"
vg refuse-bad-npy 1 run "$M/torch/resnet18/model.onnx" --input "$WORK/bad.npy" --output-dir "$WORK/out-refuse-bad-npy"
vg refuse-wrong-shape 1 run "$M/torch/resnet18/model.onnx" --input "$WORK/small-x.npy" --output-dir "$WORK/out-refuse-wrong-shape"
vg refuse-smaller-input 1 run models/demo/model.onnx --ops "$DEMO_OPS" --input "$DEMO_IN=$WORK/small-x.npy" --output-dir "$WORK/out-refuse-smaller-input"
vg pb-input 0 run "$M/torch/mlp/model.onnx" --input "$M/torch/mlp/input.pb" --output-dir "$WORK/out-mlp"
vg refuse-missing-file 1 run "$WORK/nothing.gcb" --output-dir "$WORK/out-refuse-missing-file"
vg refuse-bad-manifest 1 check "$WORK/bad.npy"
vg usage 2 run
# Control flow and sequences (models and inputs from tests/e2e/cases_control.py):
# .onnx and the saved .gcb, and a failure inside a loop body.
C=$BUILD/e2e/control
for c in loop-trip-count-input sequence-roundtrip optionals nested-loop-in-if; do
	if [ ! -f "$C/$c/model.gcb" ]; then
		fail "control-$c: $C/$c is missing: run make e2e first"
		continue
	fi
	set --
	for f in "$C/$c"/run1/*; do n=$(basename "$f"); set -- "$@" --input "${n%.*}=$f"; done
	vg "control-$c" 0 run "$C/$c/model.onnx" "$@" --output-dir "$WORK/out-$c"
	vg "control-$c-gcb" 0 run "$C/$c/model.gcb" "$@" --output-dir "$WORK/out-$c-gcb"
done
# --no-arena (tests/e2e/cases_kbugs.py's fixtures): valgrind is blind to a
# kernel's write one float past its output inside the arena (exit 0), and
# names it with --no-arena (exit 99: "Invalid write ... overrun_one").
K=$BUILD/e2e/fixtures/kbugs-instruments
KB=$BUILD/tests/kbugs/kbugs/kbugs.yaml
if [ -f "$K/overrun_overrunOne.onnx" ]; then
	vg kbugs-overrun-arena-hides 0 run "$K/overrun_overrunOne.onnx" --ops "$KB" --input "x=$K/x32.npy"
	vg kbugs-overrun-no-arena 99 run "$K/overrun_overrunOne.onnx" --ops "$KB" --input "x=$K/x32.npy" --no-arena
	vg demo-run-no-arena 0 run models/demo/model.onnx --ops "$DEMO_OPS" --input "$DEMO_IN=$WORK/demo-x.npy" --output-dir "$WORK/out-demo-na" --no-arena
else
	fail "kbugs: $K is missing: run make e2e first"
fi
# ImageDecoder and RegexFullMatch (tests/onnx-new/data): libjpeg, libpng and
# PCRE2 opened with dlopen, malformed images refused through their longjmp.
# libjpeg-turbo's SIMD code is not Memcheck-clean (uninitialised padding its
# own docs call false positives): its plain C path runs here.
N=tests/onnx-new/data
VG_ENV="JSIMD_FORCENONE=1 "
for c in jpeg_bgr png_palette jpeg_truncated_in_scan png_bad_crc; do
	want=0
	case $c in *truncated* | *bad*) want=1 ;; esac
	vg "image-$c" "$want" run "$N/image_decoder20_$c/model.onnx" \
		--input "encoded_stream=$N/image_decoder20_$c/input_0.pb" --output-dir "$WORK/out-img-$c"
done
VG_ENV=
vg regex-email 0 run "$N/regex_full_match20_email/model.onnx" \
	--input "X=$N/regex_full_match20_email/input_0.pb" --output-dir "$WORK/out-regex"
R=$C/refuse/error-inside-body
vg control-refuse-in-body 1 run "$R/model.onnx" --input "M=$R/M.npy" --input "acc0=$R/acc0.npy" --input "x=$R/x.npy" --output-dir "$WORK/out-control-refuse-in-body"
run_all
if [ -f "$K/overrun_overrunOne.onnx" ] && { ! grep -q "Invalid write of size 4" "$WORK/kbugs-overrun-no-arena.err" ||
	! grep -q "overrun_one" "$WORK/kbugs-overrun-no-arena.err"; }; then
	fail "kbugs-overrun-no-arena: no 'Invalid write' in overrun_one"
fi
echo "valgrind: $passed passed, $failed failed"
[ "$failed" = 0 ]
