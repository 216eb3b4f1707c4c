#!/usr/bin/env bash
# Benchmark (issue 5): one training step of the convolutional models (docs/models.md) under sequential, cpf,
# corun and StarPU built-ins, with the tasks per iteration.
#
#   bench/cnn_models.sh [--models "cifar-quick pathnet googlenet"] [--configs C] [--iters 8] [--repeats 3]
#                       [--image 64] [--passes "on off"] [--build DIR] [--out FILE]
#
# Models: cifar-quick (Fashion-MNIST, batch 64), pathnet small (image 32, 16 filters, batch 64), googlenet
# small shrunk to --image PX (default 64; the paper's 128 is ~4x the work) at batch 32.
# Configurations: sequential (one executor of all cores, every op at full width), cpf (one executor per
# core), corun (co-run packing; width search in each process's first iterations), then StarPU built-ins
# (lws dmdas pheft eager). Each with the parallel-op pass on and off (CORUN_PARALLEL_OPS; the tasks per
# iteration of both are in the table). Runs are interleaved (repeat r of every cell before repeat r+1). Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

models="cifar-quick pathnet googlenet"
configs="sequential cpf corun lws dmdas pheft eager"
builtins="lws dmdas pheft eager"
iters=8
repeats=3
image=64
passes="on off"
build=
out=
while (($#)); do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --image) image=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--models M] [--configs C] [--iters N] [--repeats R] [--image PX] [--passes P] [--build DIR] [--out FILE]" >&2
       exit 2 ;;
  esac
done
bench_lstm_prepare cnn-models

config_env() {  # $1 = config: NAME=value words for env(1)
  case "$1" in
    sequential) echo "CORUN_SCHED=cpf CORUN_EXECUTORS=1x$cores CORUN_FIXED_WIDTH=$cores" ;;
    *) echo "CORUN_SCHED=$1" ;;
  esac
}
model_args() {  # $1 = model: the `corun train` arguments
  case "$1" in
    cifar-quick) echo "--model cifar-quick --eval-images 100" ;;
    pathnet) echo "--model pathnet --size small" ;;
    googlenet) echo "--model googlenet --size small --image $image" ;;
    *) echo "error: unknown model $1" >&2; exit 2 ;;
  esac
}

for r in $(seq 1 "$repeats"); do
  for m in $models; do
    for c in $configs; do
      for p in $passes; do
        echo "[bench] repeat $r/$repeats model=$m config=$c pass=$p" >&2
        # shellcheck disable=SC2046
        env CORUN_QUIET=1 CORUN_PARALLEL_OPS=$p $(config_env "$c") "$corun" train $(model_args "$m") --iters "$iters" \
          --json "$work/$m.$c.$p.$r.json" >/dev/null 2>&1 || echo "[bench] failed: model=$m config=$c pass=$p" >&2
      done
    done
  done
done

{
  python3 "$here/summarize_cnn.py" --dir "$work" --models "$models" --configs "$configs" --builtins "$builtins" \
    --repeats "$repeats" --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)" \
    --command "bench/cnn_models.sh --models \"$models\" --configs \"$configs\" --iters $iters --repeats $repeats --image $image --passes \"$passes\"" \
    --note "sequential = CORUN_SCHED=cpf with one executor of all $cores cores, every op at full width; cpf = one executor per core; corun = CORUN_SCHED=corun; the rest are StarPU built-ins" \
    --note "timed under an exclusive lock that keeps the other engineers' builds and tests on this shared 2-core VM waiting (flock -x /tmp/corun-quiet.lock)" \
    --note "tasks/iter counts forward, backward and update nodes; pass on = the parallel-op grouping pass (CORUN_PARALLEL_OPS=on), off = one task per node"
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
