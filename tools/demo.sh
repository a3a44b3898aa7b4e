#!/bin/sh
# make demo: graphcc's main job on the model and op package that ship in the
# repository. A PyTorch model with two custom operations (models/demo/, the
# torch side in make_demo.py) exported to ONNX in the domain
# com.graphcc.demo; graphcc compiles and runs it with the op package
# plugins/demo/ and must agree with PyTorch.
#   tools/demo.sh GRAPHCC WORKDIR [PKG.yaml]
set -eu
GRAPHCC=${1:-build/bin/graphcc}
WORK=${2:-build/demo}
BUILD=$(dirname "$(dirname "$GRAPHCC")")
OPS=${3:-$BUILD/plugins/demo/demo.yaml}
PY=/usr/bin/python3
MODEL=models/demo/model.onnx
# The demo names its package with --ops; packages from the environment
# would hide what the first step shows.
unset GRAPHCC_OPS_PATH

die() { echo "demo: FAILED: $*" >&2; exit 1; }
[ -f "$OPS" ] || die "$OPS is missing (build it with: make plugins)"
mkdir -p "$WORK"

echo "== graphcc info $MODEL    (without the op package)"
rc=0; "$GRAPHCC" info "$MODEL" || rc=$?
[ "$rc" -eq 1 ] || die "graphcc info without --ops exited $rc; expected 1 (custom nodes unsupported)"
echo "   -> exit 1, as it should: the com.graphcc.demo nodes need an op package"

echo
echo "== graphcc check $OPS"
"$GRAPHCC" check "$OPS" || die "graphcc check refused the demo package"

echo
echo "== graphcc compile $MODEL --ops $OPS"
"$GRAPHCC" compile "$MODEL" --ops "$OPS" || die "graphcc compile failed"

echo
echo "== input: a seeded random image (NumPy); reference output: PyTorch, running the"
echo "   same model with its torch.library ops"
$PY models/demo/make_demo.py --reference "$WORK"

echo
echo "== graphcc run $MODEL --ops $OPS --input x=$WORK/x.npy --output-dir $WORK/out --repeat 20"
rm -rf "$WORK/out"
"$GRAPHCC" run "$MODEL" --ops "$OPS" --input "x=$WORK/x.npy" --output-dir "$WORK/out" \
	--repeat 20 || die "graphcc run failed"

echo
$PY - "$WORK" <<'PYEOF'
import sys
import numpy as np
w = sys.argv[1]
try:
    got = np.load(f"{w}/out/y.npy", allow_pickle=False)
except OSError as e:
    sys.exit(f"demo: FAILED: graphcc wrote no readable {w}/out/y.npy: {e}")
ref = np.load(f"{w}/y_ref.npy")
if got.shape != ref.shape or got.dtype != ref.dtype:
    sys.exit(f"demo: FAILED: graphcc output is {got.dtype} {got.shape}, "
             f"torch's is {ref.dtype} {ref.shape}")
np.set_printoptions(precision=5, suppress=True, linewidth=100)
print("graphcc:", got[0])
print("torch:  ", ref[0])
err = float(np.max(np.abs(got.astype(np.float64) - ref)))
scale = float(np.max(np.abs(ref)))
print(f"max |graphcc - torch| = {err:.3g}   (max |torch| = {scale:.3g}, "
      f"allowed {1e-4 * scale:.3g})")
top = lambda y: [(int(k), round(float(y[0][k]), 4)) for k in np.argsort(-y[0])[:3]]
print("top-3 classes (class, probability)  graphcc:", top(got), " torch:", top(ref))
if not err <= 1e-4 * scale:
    sys.exit("demo: FAILED: graphcc and torch disagree")
print("demo: OK")
PYEOF
