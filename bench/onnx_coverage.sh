#!/usr/bin/env bash
# ONNX import coverage of torchvision's classification models (issue 51 item 4): export with the model's
# own initialisation, import and infer against PyTorch, one training step; the table goes to
# bench/results/onnx-coverage-<date>.md (bench/onnx_coverage.py describes the columns).
#
#   bench/onnx_coverage.sh [--build DIR] [--models "resnet18 squeezenet1_0 ..."] [--image-size N] [--timeout S]
#
# Without --models, every model torchvision.models.list_models() names (80 in 0.14; hours on 2 cores).
# Not a test; run it niced on a shared machine: nice bench/onnx_coverage.sh --models "..."
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

build=
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --models|--image-size|--timeout) args+=("$1" "$2"); shift 2 ;;
    *) echo "usage: bench/onnx_coverage.sh [--build DIR] [--models \"...\"] [--image-size N] [--timeout S]" >&2; exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
python=/usr/bin/python3  # Debian's: torch 1.13, torchvision 0.14, onnx
out="$here/results/onnx-coverage-$(date +%Y%m%d-%H%M%S).md"
header="# ONNX import coverage: torchvision $("$python" -c 'import torchvision; print(torchvision.__version__)') classification models

- git: $(bench_git_sha); $(bench_load_note "$(bench_load)")
$(bench_cpu_lines)
- each model: default initialisation, 10 classes, batch 2, opset 13, dynamic batch; error = max |corun - PyTorch| of the logits
"
cd "$root/bench"  # not /tmp: an onnx.py there shadows the module
"$python" "$here/onnx_coverage.py" "$build/cli/corun" "$out" --header "$header" "${args[@]}"
echo "wrote $out"
