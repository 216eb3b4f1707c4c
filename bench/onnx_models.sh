#!/usr/bin/env bash
# Benchmark (issue 19): the classifiers of scripts/export-onnx.py --list (below), imported with `--onnx`, against
# PyTorch running the same network (the exporter's own table, bench/vs_pytorch_ref.py onnx-MODEL) in the
# same run:
#   - ms per training step (`corun train --onnx`, softmax cross-entropy, SGD with momentum) at --train-batch;
#   - batch-1 and batch-32 inference latency (`corun infer --onnx --iters N`), also with `--exec inline` (no
#     StarPU: every kernel on the calling thread, the row "corun inline");
# under every policy of --policies, and PyTorch at 1 and 2 threads (--torch-threads), each also with tcmalloc (LD_PRELOAD)
# (Debian's libgoogle-perftools4, installed when missing); the best PyTorch configuration is quoted. Each round runs every
# configuration once, in turn; the table gives the median over rounds of each run's own median. The last
# round traces one training iteration per policy: the mean number of co-running ops (the co-run paper's
# Figure 4, bench/corun_concurrency.py).
#
#   bench/onnx_models.sh [--rounds R] [--policies "lws dmdas cpf corun"] [--models "mlp cnn ..."]
#                        (a policy may carry an executor layout: cpf@1x2)
#                        [--iters N] [--train-batch N] [--image-size N] [--quick] [--build DIR] [--out FILE]
#                        [--note TEXT] [--torch-threads "1 2"] [--python PY] [--onnx-dir DIR] [--work DIR]
#                        [--tcmalloc LIB]
#
# Image models run at --image-size (default 64; Inception-v3 at 128 at least, its minimum is 75) with
# random weights (nothing downloaded). --quick: one round, 3 iterations, mlp, cnn and resnet18 at 32 px.
# Not a test; run it on a quiet machine: flock -x /tmp/corun-quiet.lock bench/onnx_models.sh
#
# For a machine without a package registry (the 16-core device machine, bench/device/README.md):
# --python the Python that holds torch, torchvision, onnx and numpy; --onnx-dir a folder of <model>.onnx
# files to measure instead of exporting them (bench/onnx_skeleton.py ships them as skeletons and refills
# the weights there); --tcmalloc the library to preload for PyTorch (nothing is installed then);
# --torch-threads PyTorch's thread counts (default 1 and 2; the cores of a larger machine); --work a
# folder to keep the intermediate files in (results.jsonl grows run by run: what finished before a time
# limit is still there).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

rounds=3
policies="lws dmdas cpf corun"
models=
iters=10
train_batch=16
image_size=64
build=
out=
quick=0
note=
torch_threads="1 2"
torch_py=
onnx_dir=
work=
tcmalloc=
usage="usage: $0 [--rounds R] [--policies \"P ...\"] [--models \"M ...\"] [--iters N] [--train-batch N] [--image-size N] [--quick] [--build DIR] [--out FILE] [--note TEXT] [--torch-threads \"T ...\"] [--python PY] [--onnx-dir DIR] [--work DIR] [--tcmalloc LIB]"
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --train-batch) train_batch=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --quick) quick=1; rounds=1; iters=3; image_size=32; train_batch=8; shift ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --note) note=$2; shift 2 ;;  # one more line for the header (e.g. "measured under load")
    --torch-threads) torch_threads=$2; shift 2 ;;
    --python) torch_py=$2; shift 2 ;;
    --onnx-dir) onnx_dir=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --tcmalloc) tcmalloc=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$iters" "$train_batch" "$image_size" $torch_threads; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: counts must be positive integers, got '$n'" >&2; echo "$usage" >&2; exit 2; }
done

# Debian's python3-torch lives in the system Python; a python3 earlier in PATH (pyenv, a venv) lacks it.
if [[ -z "$torch_py" ]]; then
  torch_py=/usr/bin/python3
  [[ -x "$torch_py" ]] || torch_py=python3
fi
"$torch_py" -c 'import torch, torchvision, onnx' 2>/dev/null ||
  { echo "error: $torch_py cannot import torch, torchvision and onnx: apt-get install python3-torch python3-torchvision python3-onnx" >&2; exit 1; }
exporter="$root/scripts/export-onnx.py"
available=$("$torch_py" "$exporter" --list | awk '{ print $1 }')
# The models this benchmark measures: one float input with a dynamic batch, and class scores out (the
# training step is softmax cross-entropy on them, on both sides). The exporter's other models take token ids
# (transformer, text_similarity: no --dynamic-batch) or are a GAN's halves (dcgan_*: `corun train --model
# dcgan` trains them together).
classifiers="mlp cnn resnet18 resnet50 mobilenet_v2 googlenet inception_v3"
if [[ -z "$models" ]]; then
  if ((quick)); then models="mlp cnn resnet18"; else models=$classifiers; fi
fi
for m in $models; do
  bench_in_list "$available" "$m" || { echo "error: unknown model '$m' (export-onnx.py --list: $(echo $available))" >&2; exit 2; }
  bench_in_list "$(tr " " "\n" <<<"$classifiers")" "$m" ||
    { echo "error: model '$m' is not one this benchmark measures (one float input, class scores out): $classifiers" >&2; exit 2; }
done
if [[ -n "$onnx_dir" ]]; then
  for m in $models; do
    [[ -f "$onnx_dir/$m.onnx" ]] || { echo "error: --onnx-dir: $onnx_dir/$m.onnx does not exist" >&2; exit 2; }
  done
fi
if [[ -n "$tcmalloc" ]]; then
  [[ -f "$tcmalloc" ]] || { echo "error: --tcmalloc: $tcmalloc does not exist" >&2; exit 2; }
else
  tcmalloc=$(bench_tcmalloc onnx_models)
fi

build=$(bench_build_dir "$build")
corun="$build/cli/corun"
[[ -x "$corun" ]] || { echo "error: $corun not found (build first)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/onnx-models-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"
if [[ -n "$work" ]]; then
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
export STARPU_HOME="$work/starpu-home"
unset XDG_CACHE_HOME STARPU_SCHED CORUN_SCHED CORUN_PROFILE CORUN_EXECUTORS CORUN_FIXED_WIDTH CORUN_DETERMINISTIC \
  CORUN_SCHEDULE CORUN_VERBOSE CORUN_WIDTH_INTERVAL
results="$work/results.jsonl"
: >"$results"
ref="$here/vs_pytorch_ref.py"
# A policy of --policies: a CORUN_SCHED name, or NAME@NxK for an executor layout (cpf@1x2: one executor of
# both cores; cpf's default is one per core, Graphi's layout for branchy graphs, which leaves a chain-like
# network on one core at a time; `corun profile` picks the layout per graph).
policy_env() {
  if [[ "$1" == *@* ]]; then echo "CORUN_SCHED=${1%%@*} CORUN_EXECUTORS=${1#*@}"; else echo "CORUN_SCHED=$1"; fi
}
for p in $policies; do
  [[ "$p" =~ ^[a-z]+(@[1-9][0-9]*x[1-9][0-9]*)?$ ]] ||
    { echo "error: --policies: '$p' is neither a policy name nor NAME@NxK (e.g. cpf@1x2)" >&2; exit 2; }
done
json_field() { "$torch_py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval("d" + sys.argv[2]))' "$@"; }
record() {  # model kind impl config ms
  printf '{"model":"%s","kind":"%s","impl":"%s","config":"%s","ms":%s}\n' "$@" >>"$results"
}
image_args() {  # the --image-size a model runs at: none for mlp and cnn (fixed inputs), Inception-v3 128 px at least
  case "$1" in
    inception_v3) echo "--image-size $((image_size < 128 ? 128 : image_size))" ;;
    resnet18 | resnet50 | mobilenet_v2 | mobilenet_v3_small | mobilenet_v3_large | googlenet) echo "--image-size $image_size" ;;
  esac
}

for m in $models; do
  if [[ -n "$onnx_dir" ]]; then
    cp "$onnx_dir/$m.onnx" "$work/$m.onnx"
  else
    echo "onnx_models: exporting $m" >&2
    # shellcheck disable=SC2046
    "$torch_py" "$exporter" --model "$m" --out "$work/$m.onnx" --dynamic-batch $(image_args "$m") \
      >/dev/null 2>"$work/export.err" || { cat "$work/export.err" >&2; exit 1; }
  fi
  # Random inputs of batch 1 and 32, shaped like the model's input.
  for b in 1 32; do
    "$torch_py" - "$work/$m.onnx" "$b" "$work/$m.in$b.npy" <<'PY'
import sys, numpy as np, onnx
dims = [d.dim_value for d in onnx.load(sys.argv[1], load_external_data=False).graph.input[0].type.tensor_type.shape.dim]
np.save(sys.argv[3], np.random.default_rng(0).standard_normal([int(sys.argv[2])] + dims[1:]).astype(np.float32))
PY
  done
done

echo "onnx_models: calibrating the perfmodels (untimed)" >&2
for m in $models; do
  env CORUN_QUIET=1 STARPU_CALIBRATE=1 CORUN_SCHED=corun "$corun" train --onnx "$work/$m.onnx" --batch "$train_batch" \
    --iters 2 >/dev/null 2>"$work/calibrate.err" || { cat "$work/calibrate.err" >&2; exit 1; }
done

for ((r = 1; r <= rounds; ++r)); do
  echo "onnx_models: round $r of $rounds" >&2
  for m in $models; do
    read -ra img <<<"$(image_args "$m")"
    for p in $policies; do
      json="$work/$m.$p.train.json"
      trace=()
      ((r == rounds)) && trace=(--trace "$work/$m.$p.trace.json")
      env CORUN_QUIET=1 $(policy_env "$p") "$corun" train --onnx "$work/$m.onnx" --batch "$train_batch" --iters "$iters" \
        --json "$json" "${trace[@]}" >/dev/null 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
      [[ -f "$work/machine.json" ]] || cp "$json" "$work/machine.json"
      record "$m" train corun "$p" "$(json_field "$json" '["summary"]["median_ms"]')"
      ((r == rounds)) && printf '{"model":"%s","impl":"trace","policy":"%s","file":"%s"}\n' "$m" "$p" \
        "$work/$m.$p.trace.json" >>"$results"
      for b in 1 32; do
        json="$work/$m.$p.infer$b.json"
        env CORUN_QUIET=1 $(policy_env "$p") "$corun" infer --onnx "$work/$m.onnx" --batch "$b" --input "input=$work/$m.in$b.npy" \
          --output "$work/out.$m.$p.$b.$r" --iters "$iters" --warmup 1 --json "$json" >/dev/null 2>"$work/run.err" ||
          { cat "$work/run.err" >&2; exit 1; }
        record "$m" "infer$b" corun "$p" "$(json_field "$json" '["wall_ms"]')"
      done
    done
    # Inference without StarPU (`--exec inline`: every kernel on the calling thread at width 1), the route
    # for a batch-1 inference whose tasks are shorter than a StarPU round trip; its row has no training column.
    for b in 1 32; do
      json="$work/$m.inline.infer$b.json"
      env CORUN_QUIET=1 "$corun" infer --onnx "$work/$m.onnx" --batch "$b" --input "input=$work/$m.in$b.npy" --exec inline \
        --output "$work/out.$m.inline.$b.$r" --iters "$iters" --warmup 1 --json "$json" >/dev/null 2>"$work/run.err" ||
        { cat "$work/run.err" >&2; exit 1; }
      record "$m" "infer$b" corun inline "$(json_field "$json" '["wall_ms"]')"
    done
    for t in $torch_threads; do
      for alloc in glibc tcmalloc; do
        pre=()
        if [[ "$alloc" == tcmalloc ]]; then
          [[ -n "$tcmalloc" ]] || continue
          pre=(env LD_PRELOAD="$tcmalloc")
        fi
        for kind in train infer1 infer32; do
          case "$kind" in
            train) args=(--mode train --batch "$train_batch") ;;
            infer1) args=(--mode infer --batch 1) ;;
            infer32) args=(--mode infer --batch 32) ;;
          esac
          line=$("${pre[@]}" "$torch_py" "$ref" "onnx-$m" --threads "$t" --iters "$iters" --warmup 1 \
            "${img[@]}" "${args[@]}") || exit 1
          record "$m" "$kind" pytorch "$t thread(s) $alloc" \
            "$("$torch_py" -c 'import json,sys; print(json.loads(sys.argv[1])["ms_per_iter"])' "$line")"
        done
      done
    done
  done
done

cmd="bench/onnx_models.sh --rounds $rounds --policies \"$policies\" --models \"$(echo $models)\" --iters $iters --train-batch $train_batch --image-size $image_size --torch-threads \"$torch_threads\""
notes=("training at batch $train_batch; image models at ${image_size} px (Inception-v3 at 128 px at least), random weights, 1000 classes")
[[ -n "$tcmalloc" ]] || notes+=("tcmalloc (libgoogle-perftools4) could not be installed: PyTorch ran with glibc's malloc only")
[[ -n "$note" ]] && notes+=("$note")
note_args=()
for n in "${notes[@]}"; do note_args+=(--note "$n"); done
"$torch_py" "$here/summarize_onnx_models.py" --results "$results" --machine "$work/machine.json" --command "$cmd" \
  --git "$(bench_git_sha)" --info "$(bench_corun_info "$corun")" \
  --torch "$("$torch_py" -c 'import torch; print(torch.__version__)') ($torch_py)" "${note_args[@]}" >"$out"
echo "onnx_models: wrote $out" >&2
