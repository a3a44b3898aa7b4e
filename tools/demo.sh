#!/bin/sh
# make demo: the main job on the model that ships in the repository.
#   tools/demo.sh GRAPHCC WORKDIR
set -eu
GRAPHCC=${1:-build/bin/graphcc}
WORK=${2:-build/demo}
PY=/usr/bin/python3
MODEL=models/demo/model.onnx
mkdir -p "$WORK"

echo "== graphcc info $MODEL"
"$GRAPHCC" info "$MODEL"

echo
echo "== input: a seeded random image (NumPy), reference output: PyTorch"
$PY models/demo/make_demo.py --reference "$WORK"

echo
echo "== graphcc run $MODEL --input x=$WORK/x.npy --output-dir $WORK/out --repeat 20"
"$GRAPHCC" run "$MODEL" --input "x=$WORK/x.npy" --output-dir "$WORK/out" --repeat 20

echo
$PY - "$WORK" <<'PYEOF'
import sys, numpy as np
w = sys.argv[1]
got = np.load(f"{w}/out/y.npy")
ref = np.load(f"{w}/y_ref.npy")
err = float(np.max(np.abs(got - ref)))
scale = float(np.max(np.abs(ref)))
print(f"graphcc output {got.shape} {got.dtype}; max |graphcc - torch| = {err:.3g} "
      f"(max |torch| = {scale:.3g})")
print("top-3 classes graphcc:", np.argsort(-got[0])[:3].tolist(),
      " torch:", np.argsort(-ref[0])[:3].tolist())
if not err <= 1e-4 * scale:
    sys.exit("demo: graphcc and torch disagree")
print("demo: OK")
PYEOF
