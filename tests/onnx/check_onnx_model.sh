#!/usr/bin/env bash
# Runs check_onnx_model.py (one exported model against PyTorch) with the first Python that has torch,
# torchvision, onnx and numpy (Debian's /usr/bin/python3 when another Python comes first on the PATH).
#   check_onnx_model.sh CORUN_BINARY SOURCE_DIR MODEL [check_onnx_model.py options]
# Exit 77 (skipped) when no such Python is found.
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c "import torch, torchvision, onnx, numpy" 2>/dev/null; then
    exec "$cand" "$(dirname "$0")/check_onnx_model.py" "$@"
  fi
done
echo "SKIP: no python3 with torch, torchvision, onnx and numpy (apt-get install python3-torch python3-torchvision python3-onnx)"
exit 77
