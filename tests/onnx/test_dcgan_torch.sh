#!/usr/bin/env bash
# onnx.dcgan: the DCGAN of `corun train --model dcgan` exported from PyTorch by scripts/export-onnx.py
# (dcgan_generator: ConvTranspose + BatchNormalization + Relu + Tanh; dcgan_discriminator: Conv + LeakyRelu +
# BatchNormalization, the logit viewed as [B, 1]), imported by `corun infer --onnx`: every output equals
# PyTorch's on the same input and weights within 1e-4 relative (batch norms with random running statistics).
# Exit 77 (skipped) when no Python with torch, onnx and numpy is found. About 30 s on the loaded 2-core VM,
# most of it importing torch.
#   test_dcgan_torch.sh CORUN_BINARY SOURCE_DIR
set -u
corun=$1
src=$2
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c "import torch, onnx, numpy" 2>/dev/null; then py=$cand; break; fi
done
if [ -z "$py" ]; then echo "SKIP: no python3 with torch, onnx and numpy (apt-get install python3-torch python3-onnx)"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export CORUN_QUIET=1 STARPU_SILENT=1
fails=0
for model in dcgan_generator dcgan_discriminator; do
  "$py" "$src/scripts/export-onnx.py" --model "$model" --out "$model.onnx" --batch 5 --seed 3 --reference "ref-$model" \
    >/dev/null || { echo "FAIL: export $model"; fails=$((fails + 1)); continue; }
  "$corun" infer --onnx "$model.onnx" --input "input=ref-$model/input.npy" --output "out-$model" >/dev/null ||
    { echo "FAIL: corun infer $model"; fails=$((fails + 1)); continue; }
  "$py" - "$model" "out-$model/output.npy" "ref-$model/output.npy" <<'PY' || fails=$((fails + 1))
import sys, numpy as np
name, got, want = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
if got.shape != want.shape:
    sys.exit("FAIL: %s: shape %s, PyTorch %s" % (name, got.shape, want.shape))
rel = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
print("%s: output %s, max relative difference to PyTorch %.2e" % (name, got.shape, rel))
if not rel <= 1e-4:
    sys.exit("FAIL: %s differs from PyTorch by %.2e relative" % (name, rel))
PY
done
[ "$fails" = 0 ] && echo "onnx.dcgan: all checks passed" || { echo "onnx.dcgan: $fails failure(s)"; exit 1; }
