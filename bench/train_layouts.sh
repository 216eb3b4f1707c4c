#!/usr/bin/env bash
# bench/train_layouts.sh — training with activations and their gradients in oneDNN's blocked layout
# (Graph::block_layouts after backward(), `corun train`'s default) against the same run with --keep-layouts
# (every tensor NCHW, each convolution reordering its own), side by side in interleaved rounds: median ms per
# training step and the ratio (NCHW / blocked; > 1: the blocked layouts are faster).
#
#   bench/train_layouts.sh [--workloads "googlenet cifar-quick onnx:resnet50 ..."] [--policies "lws cpf"]
#                          [--rounds 3] [--iters 10] [--train-batch 16] [--image-size 64] [--build DIR]
#                          [--python PY] [--out FILE]
#
# A workload is a built-in model (googlenet and pathnet at --size small, cifar-quick on Fashion-MNIST) or
# onnx:MODEL, a classifier of scripts/export-onnx.py (random weights, needs Debian's python3-torch; Inception-v3
# at 128 px at least) trained at --train-batch. Each run is `corun train --iters N`; its median leaves out the
# first two iterations (calibration of new perfmodel footprints); a table cell is the median over the rounds.
# The losses of the two runs must be bitwise equal (a layout changes where bytes sit, not the arithmetic), else
# the script fails. Results go to stdout and to FILE (default bench/results/train-layouts-<date>.md).
# Not a test; run it on a quiet machine: flock -x /tmp/corun-quiet.lock bench/train_layouts.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

workloads="googlenet cifar-quick onnx:resnet50 onnx:resnet18 onnx:mobilenet_v2 onnx:inception_v3"
policies="lws cpf"
rounds=3
iters=10
train_batch=16
image_size=64
build=
torch_py=
out=
while (($#)); do
  case "$1" in
    --workloads) workloads=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --train-batch) train_batch=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --python) torch_py=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "train_layouts.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$train_batch" "$image_size"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "train_layouts.sh: '$n' is not a positive integer" >&2; exit 2; }
done
[[ "$iters" =~ ^[0-9]+$ ]] && ((iters >= 4)) || { echo "train_layouts.sh: --iters must be at least 4, got '$iters'" >&2; exit 2; }
for w in $workloads; do
  case "$w" in
    googlenet | pathnet | cifar-quick | onnx:?*) ;;
    *) echo "train_layouts.sh: unknown workload '$w' (googlenet, pathnet, cifar-quick or onnx:MODEL)" >&2; exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
[[ -n "$torch_py" ]] || { torch_py=/usr/bin/python3; [[ -x "$torch_py" ]] || torch_py=python3; }
out=${out:-$root/bench/results/train-layouts-$(date +%Y%m%d-%H%M%S).md}
work=$(mktemp -d /tmp/corun-train-layouts-XXXXXX)
trap 'rm -rf "$work"' EXIT
unset CORUN_SCHED CORUN_EXECUTORS STARPU_SCHED
load_start=$(bench_load)

for w in $workloads; do
  [[ "$w" == onnx:* ]] || continue
  m=${w#onnx:}
  "$torch_py" -c 'import torch, torchvision, onnx' 2>/dev/null ||
    { echo "train_layouts.sh: $torch_py lacks torch, torchvision or onnx (scripts/setup.sh installs them)" >&2; exit 1; }
  size=$image_size
  [[ "$m" == inception_v3 ]] && ((size < 128)) && size=128
  echo "train_layouts: exporting $m" >&2
  "$torch_py" "$root/scripts/export-onnx.py" --model "$m" --out "$work/$m.onnx" --dynamic-batch --image-size "$size" \
    >/dev/null 2>"$work/export.err" || { cat "$work/export.err" >&2; exit 1; }
done

# One run: prints "<median ms per step> <blocked tensors> <losses joined by commas>".
train() {  # workload policy variant(blocked|nchw)
  local args=() flags=()
  case "$1" in
    onnx:*) args=(--onnx "$work/${1#onnx:}.onnx" --batch "$train_batch") ;;
    cifar-quick) args=(--model cifar-quick --eval-images 0) ;;
    *) args=(--model "$1" --size small) ;;
  esac
  [[ "$3" == nchw ]] && flags=(--keep-layouts)
  env CORUN_QUIET=1 CORUN_SCHED="$2" "$corun" train "${args[@]}" --iters "$iters" --json "$work/run.json" \
    "${flags[@]}" >/dev/null 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
  "$torch_py" -c '
import json, statistics, sys
j = json.load(open(sys.argv[1]))
print("%.2f" % statistics.median(j["ms_per_iter"][2:]), j["config"]["blocked_tensors"], ",".join(repr(x) for x in j["loss"]))
' "$work/run.json"
}

declare -A runs=() count=()
for ((r = 1; r <= rounds; ++r)); do
  echo "train_layouts: round $r of $rounds" >&2
  for w in $workloads; do
    for p in $policies; do
      # Alternate which variant goes first, so that neither always runs on a warmer machine.
      order="blocked nchw"
      ((r % 2 == 0)) && order="nchw blocked"
      declare -A losses=()
      for v in $order; do
        read -r ms n l < <(train "$w" "$p" "$v")
        runs[$w.$p.$v]+="$ms "
        losses[$v]=$l
        [[ "$v" == blocked ]] && count[$w]=$n
      done
      [[ "${losses[blocked]}" == "${losses[nchw]}" ]] ||
        { echo "train_layouts.sh: $w under $p: the losses differ between the layouts: ${losses[blocked]} against ${losses[nchw]}" >&2; exit 1; }
    done
  done
done
load_end=$(bench_load)

{
  echo "# Blocked layouts in training (Graph::block_layouts after backward)"
  echo
  echo "- command: \`bench/train_layouts.sh --workloads \"$workloads\" --policies \"$policies\" --rounds $rounds --iters $iters --train-batch $train_batch --image-size $image_size\`"
  echo "- git: $(bench_git_sha)"
  bench_cpu_lines
  echo "- $(bench_load_note "$load_start" "$load_end")"
  echo "- cell: median over $rounds interleaved rounds of each run's median ms per training step (iterations 3 to $iters);"
  echo "  ratio = NCHW / blocked (NCHW: --keep-layouts; > 1: the blocked layouts are faster). The two runs' losses were"
  echo "  bitwise equal in every round. ONNX models at batch $train_batch, $image_size px (Inception-v3 at 128 px at least);"
  echo "  googlenet and pathnet at --size small, cifar-quick at its batch of 128."
  echo
  echo '<details><summary>corun info</summary>'
  echo
  echo '```'
  bench_corun_info "$corun"
  echo '```'
  echo '</details>'
  echo
  echo "| workload | blocked tensors | policy | blocked ms | NCHW ms | ratio | blocked, each round | NCHW, each round |"
  echo "|---|---:|---|---:|---:|---:|---|---|"
  for w in $workloads; do
    for p in $policies; do
      b=$(bench_median <<<"${runs[$w.$p.blocked]}")
      k=$(bench_median <<<"${runs[$w.$p.nchw]}")
      awk -v w="$w" -v n="${count[$w]}" -v p="$p" -v b="$b" -v k="$k" -v rb="${runs[$w.$p.blocked]}" \
        -v rk="${runs[$w.$p.nchw]}" 'BEGIN { printf "| %s | %s | %s | %.1f | %.1f | %.3f | %s | %s |\n", w, n, p, b, k, k / b, rb, rk }'
    done
  done
} | tee "$out"
echo "results: $out" >&2
