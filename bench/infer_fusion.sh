#!/usr/bin/env bash
# bench/infer_fusion.sh — one of `corun infer --onnx`'s inference passes on (the default) against the same run
# with it off, side by side in interleaved rounds: median ms per inference and the ratio (kept / fused; > 1: the
# pass is faster). --compare picks the pass:
#   activations  every Relu / Clip after a convolution fused into it (Graph::fuse_conv_activation) against
#                --keep-activations (the default);
#   layouts      activations kept in oneDNN's blocked layout between convolutions (Graph::block_layouts)
#                against --keep-layouts (every tensor NCHW, each convolution reordering its own).
#
#   bench/infer_fusion.sh [--compare activations|layouts] [--models "resnet50 mobilenet_v2 googlenet"]
#                         [--batches "1 32"] [--policies "lws cpf"] [--rounds 3] [--iters 10] [--image-size 64]
#                         [--build DIR] [--python PY] [--out FILE]
#
# Models are classifiers of scripts/export-onnx.py (random weights, needs Debian's python3-torch); inputs are
# random. Each cell runs `corun infer --iters N --warmup 1` (the median of N inferences); a table cell is the
# median over the rounds. The outputs of the two runs are compared: they must be bitwise equal (the fused
# kernels apply the ops' own formulas; a layout changes where bytes sit, not the arithmetic), else the script
# fails. Results go to stdout and to FILE (default bench/results/infer-fusion-<date>.md, infer-layouts-<date>.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

compare=activations
models="resnet50 mobilenet_v2 googlenet"
batches="1 32"
policies="lws cpf"
rounds=3
iters=10
image_size=64
build=
torch_py=
out=
while (($#)); do
  case "$1" in
    --compare) compare=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --python) torch_py=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "infer_fusion.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
  esac
done
case "$compare" in
  activations) keep_flag=--keep-activations; count_key=fused_activations; count_title="fused activations"
    title="Conv + activation fusion at inference (Graph::fuse_conv_activation)"; name=infer-fusion ;;
  layouts) keep_flag=--keep-layouts; count_key=blocked_tensors; count_title="blocked tensors"
    title="Blocked layouts between convolutions at inference (Graph::block_layouts)"; name=infer-layouts ;;
  *) echo "infer_fusion.sh: --compare takes activations or layouts, not '$compare'" >&2; exit 2 ;;
esac
for n in "$rounds" "$iters" "$image_size" $batches; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "infer_fusion.sh: '$n' is not a positive integer" >&2; exit 2; }
done
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
# Debian's python3-torch lives in the system Python; a python3 earlier in PATH (pyenv, a venv) lacks it.
[[ -n "$torch_py" ]] || { torch_py=/usr/bin/python3; [[ -x "$torch_py" ]] || torch_py=python3; }
"$torch_py" -c 'import torch, torchvision, onnx' 2>/dev/null ||
  { echo "infer_fusion.sh: $torch_py lacks torch, torchvision or onnx (scripts/setup.sh installs them)" >&2; exit 1; }
out=${out:-$root/bench/results/$name-$(date +%Y%m%d-%H%M%S).md}
work=$(mktemp -d /tmp/corun-infer-fusion-XXXXXX)
trap 'rm -rf "$work"' EXIT
unset CORUN_SCHED CORUN_EXECUTORS STARPU_SCHED
load_start=$(bench_load)

size_of() {  # Inception-v3's minimum input is 75 px: 128 at least, as bench/onnx_models.sh
  case "$1" in
    inception_v3) echo $((image_size < 128 ? 128 : image_size)) ;;
    *) echo "$image_size" ;;
  esac
}
for m in $models; do
  echo "infer_fusion: exporting $m" >&2
  "$torch_py" "$root/scripts/export-onnx.py" --model "$m" --out "$work/$m.onnx" --dynamic-batch \
    --image-size "$(size_of "$m")" >/dev/null 2>"$work/export.err" || { cat "$work/export.err" >&2; exit 1; }
  for b in $batches; do
    "$torch_py" - "$work/$m.onnx" "$b" "$work/$m.in$b.npy" <<'PY'
import sys, numpy as np, onnx
dims = [d.dim_value for d in onnx.load(sys.argv[1], load_external_data=False).graph.input[0].type.tensor_type.shape.dim]
np.save(sys.argv[3], np.random.default_rng(0).standard_normal([int(sys.argv[2])] + dims[1:]).astype(np.float32))
PY
  done
done

# One run: prints "<median ms> <what the pass counted>" (fused activations or blocked tensors).
infer() {  # model batch policy variant(fused|kept) outdir
  local flags=()
  [[ "$4" == kept ]] && flags=("$keep_flag")
  env CORUN_QUIET=1 CORUN_SCHED="$3" "$corun" infer --onnx "$work/$1.onnx" --batch "$2" --input "input=$work/$1.in$2.npy" \
    --output "$5" --iters "$iters" --warmup 1 --json "$work/run.json" "${flags[@]}" >/dev/null 2>"$work/run.err" ||
    { cat "$work/run.err" >&2; exit 1; }
  "$torch_py" -c 'import json, sys; j = json.load(open(sys.argv[1])); print("%.2f" % j["wall_ms"], j["config"][sys.argv[2]])' \
    "$work/run.json" "$count_key"
}

declare -A runs=() fused_count=()
for ((r = 1; r <= rounds; ++r)); do
  echo "infer_fusion: round $r of $rounds" >&2
  for m in $models; do
    for b in $batches; do
      for p in $policies; do
        # Alternate which variant goes first, so that neither always runs on a warmer machine.
        order="fused kept"
        ((r % 2 == 0)) && order="kept fused"
        for v in $order; do
          read -r ms n < <(infer "$m" "$b" "$p" "$v" "$work/out.$v")
          runs[$m.$b.$p.$v]+="$ms "
          [[ "$v" == fused ]] && fused_count[$m]=$n
        done
        "$torch_py" -c '
import numpy as np, sys, glob, os
for f in glob.glob(os.path.join(sys.argv[1], "*.npy")):
    a, b = np.load(f), np.load(os.path.join(sys.argv[2], os.path.basename(f)))
    if not np.array_equal(a, b):
        sys.exit("infer_fusion.sh: %s: fused and kept outputs differ by %g" % (os.path.basename(f), np.abs(a - b).max()))
' "$work/out.fused" "$work/out.kept"
      done
    done
  done
done
load_end=$(bench_load)

{
  echo "# $title"
  echo
  echo "- command: \`bench/infer_fusion.sh --compare $compare --models \"$models\" --batches \"$batches\" --policies \"$policies\" --rounds $rounds --iters $iters --image-size $image_size\`"
  echo "- git: $(bench_git_sha)"
  bench_cpu_lines
  echo "- $(bench_load_note "$load_start" "$load_end")"
  echo "- cell: median over $rounds interleaved rounds of each run's median of $iters inferences (after 1 warm-up), ms;"
  echo "  ratio = kept / fused (kept: $keep_flag; > 1: the pass is faster). Outputs checked bitwise equal in every round."
  echo
  echo '<details><summary>corun info</summary>'
  echo
  echo '```'
  bench_corun_info "$corun"
  echo '```'
  echo '</details>'
  echo
  echo "| model | $count_title | batch | policy | fused ms | kept ms | ratio | fused, each round | kept, each round |"
  echo "|---|---:|---:|---|---:|---:|---:|---|---|"
  for m in $models; do
    for b in $batches; do
      for p in $policies; do
        f=$(bench_median <<<"${runs[$m.$b.$p.fused]}")
        k=$(bench_median <<<"${runs[$m.$b.$p.kept]}")
        awk -v m="$m" -v n="${fused_count[$m]}" -v b="$b" -v p="$p" -v f="$f" -v k="$k" -v rf="${runs[$m.$b.$p.fused]}" \
          -v rk="${runs[$m.$b.$p.kept]}" 'BEGIN { printf "| %s | %s | %s | %s | %.2f | %.2f | %.3f | %s | %s |\n", m, n, b, p, f, k, k / f, rf, rk }'

      done
    done
  done
} | tee "$out"
echo "results: $out" >&2
