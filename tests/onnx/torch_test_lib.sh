# Sourced by the onnx tests that compare corun with PyTorch (test_onnx_torch.sh, test_onnx_models_torch.sh,
# test_dcgan_torch.sh) after they set `corun` and `src`: finds a Python with torch, onnx and numpy (exit 77,
# skipped, when there is none), enters a temporary directory removed at exit, and defines
#   fail MESSAGE                      counts a failure in $fails
#   export_model ARGS...              scripts/export-onnx.py ARGS, exit 1 when the export fails
#   compare NAME CORUN.npy REF.npy    equal shapes and max relative difference <= 1e-4, else counts a failure
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
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export_model() { "$py" "$src/scripts/export-onnx.py" "$@" >/dev/null || { echo "export failed: $*"; exit 1; }; }
compare() {  # name corun-output reference
  "$py" - "$1" "$2" "$3" <<'PY' || fails=$((fails + 1))
import sys, numpy as np
name, got, want = sys.argv[1], np.load(sys.argv[2]), np.load(sys.argv[3])
if got.shape != want.shape:
    sys.exit("FAIL: %s: shape %s, PyTorch %s" % (name, got.shape, want.shape))
rel = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
print("%s: max relative difference to PyTorch %.2e" % (name, rel))
if not rel <= 1e-4:
    sys.exit("FAIL: %s differs from PyTorch by %.2e relative" % (name, rel))
PY
}
