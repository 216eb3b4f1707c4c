#!/usr/bin/env bash
# Runs test_save_onnx.py (corun train --onnx --save-onnx against PyTorch) with the first Python that has torch,
# onnx and numpy (Debian's /usr/bin/python3 when another Python comes first on the PATH).
#   test_save_onnx.sh CORUN_BINARY SOURCE_DIR
# Exit 77 (skipped) when no such Python is found.
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c "import torch, onnx, numpy" 2>/dev/null; then
    exec "$cand" "$(dirname "$0")/test_save_onnx.py" "$@"
  fi
done
echo "SKIP: no python3 with torch, onnx and numpy (apt-get install python3-torch python3-onnx)"
exit 77
