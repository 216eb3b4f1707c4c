#!/usr/bin/env bash
# Benchmark (issue 18): corun against PyTorch on the same cores, every row of the issue's table, plus
# OpenBLAS's sgemm rate on the same machine.
#
#   bench/vs_pytorch.sh [--rounds R] [--policies "lws dmdas cpf corun"] [--passes "off auto"]
#                       [--iters N] [--lstm-medium-iters N] [--googlenet-iters N] [--cifar-iters N] [--requests N]
#                       [--quick] [--build DIR] [--out FILE]
#
# Rows: PathNet small training, GoogLeNet small training (corun's `googlenet`: 64 px, batch 32; the same
# network in PyTorch is vs_pytorch_ref.py's GoogLeNet, not torchvision's), CIFAR-quick on Fashion-MNIST
# (batch 128; the epoch time is the median step times the epoch's 468 steps, so a run of --cifar-iters steps
# stands for the epoch: said in the table),
# LSTM small and medium training, LSTM serving 256/256 batch 10 seq 100, LSTM serving batch 1 (E = H = 64,
# 256, 1024, seq 100), wide&deep batch-1 inference (inline). Training rows run corun under every policy
# of --policies, once per parallel-op pass setting of --passes (CORUN_PARALLEL_OPS: off, auto = corun
# train's default, on = every group), and PyTorch (Debian's python3-torch, bench/vs_pytorch_ref.py) at 1
# and 2 threads, each with and without tcmalloc (LD_PRELOAD). Each round runs every configuration once, in turn (interleaved, so a noisy period hits
# all of them); the table gives the median over rounds of each run's own median. The serving and
# inference rows do not depend on the policy (planned serving runtime, inline runner).
#
# Perfmodels start empty (a private STARPU_HOME) and are calibrated first by one untimed run per training
# workload under the corun policy with STARPU_CALIBRATE=1, so the auto pass decides from models on every
# machine the same way. Installs python3-torch and python3-torchvision when missing (apt-get, as the
# developers' guide allows for benchmarks). Not a test; run it on a quiet machine:
#   flock -x /tmp/corun-quiet.lock bench/vs_pytorch.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

rounds=3
policies="lws dmdas cpf corun"
passes="off auto"
iters=10
lstm_medium_iters=6
googlenet_iters=8
cifar_iters=40
requests=200
build=
out=
usage="usage: $0 [--rounds R] [--policies \"P ...\"] [--passes \"off auto on\"] [--iters N] [--lstm-medium-iters N] [--googlenet-iters N] [--cifar-iters N] [--requests N] [--quick] [--build DIR] [--out FILE]"
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --lstm-medium-iters) lstm_medium_iters=$2; shift 2 ;;
    --googlenet-iters) googlenet_iters=$2; shift 2 ;;
    --cifar-iters) cifar_iters=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --quick) rounds=1; iters=3; lstm_medium_iters=2; googlenet_iters=2; cifar_iters=5; requests=20; shift ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
for n in "$rounds" "$iters" "$lstm_medium_iters" "$googlenet_iters" "$cifar_iters" "$requests"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: counts must be positive integers, got '$n'" >&2; echo "$usage" >&2; exit 2; }
done
for p in $passes; do
  [[ "$p" == off || "$p" == auto || "$p" == on ]] || { echo "error: --passes takes off, auto and on, got '$p'" >&2; exit 2; }
done

# Debian's python3-torch lives in the system Python; a python3 earlier in PATH (pyenv, a venv) lacks it.
torch_py=/usr/bin/python3
[[ -x "$torch_py" ]] || torch_py=python3
if ! "$torch_py" -c 'import torch' 2>/dev/null; then
  echo "vs_pytorch: installing python3-torch python3-torchvision (PyTorch from Debian)" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-torch python3-torchvision >&2; then
    echo "error: PyTorch is missing and apt-get could not install it; run as root: apt-get install python3-torch python3-torchvision" >&2
    exit 1
  fi
  "$torch_py" -c 'import torch' || { echo "error: $torch_py cannot import torch after the install" >&2; exit 1; }
fi

# tcmalloc (Debian's libgoogle-perftools4) for the PyTorch runs with LD_PRELOAD, as PyTorch's own CPU tuning
# guide recommends; each PyTorch configuration runs with and without it and the table quotes the best.
tcmalloc=$(bench_tcmalloc vs_pytorch)
allocators="default${tcmalloc:+ tcmalloc}"

# PyTorch once per thread count and allocator, each result recorded:
#   torch_record RECORD-NAME ROUND JSON-KEY UNIT -- bench/vs_pytorch_ref.py ARGS...
torch_record() {
  local name=$1 round=$2 key=$3 unit=$4 t alloc impl line pre
  shift 5
  for t in 1 2; do
    for alloc in $allocators; do
      impl=pytorch pre=()
      [[ "$alloc" == tcmalloc ]] && impl=pytorch-tcmalloc pre=(env LD_PRELOAD="$tcmalloc")
      line=$("${pre[@]}" "$torch_py" "$ref" "$@" --threads "$t") || return 1
      record "$name" "$impl" - - "$t" "$round" \
        "$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$line" "$key")" "$unit"
    done
  done
}

build=$(bench_build_dir "$build")
corun="$build/cli/corun"
sgemm="$build/bench/sgemm_rate"
[[ -x "$corun" ]] || { echo "error: $corun not found (build first)" >&2; exit 1; }
[[ -x "$sgemm" ]] || { echo "error: $sgemm not found (build the sgemm_rate target: cmake --build $build --target sgemm_rate)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/vs-pytorch-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export STARPU_HOME="$work/starpu-home" CORUN_SERVE_PLANS="$work/plans"
mkdir -p "$STARPU_HOME" "$CORUN_SERVE_PLANS"
unset XDG_CACHE_HOME STARPU_SCHED CORUN_SCHED CORUN_PROFILE CORUN_EXECUTORS CORUN_FIXED_WIDTH CORUN_DETERMINISTIC \
  CORUN_SCHEDULE CORUN_VERBOSE CORUN_WIDTH_INTERVAL CORUN_PARALLEL_OPS CORUN_PARALLEL_OPS_MIN
results="$work/results.jsonl"
: >"$results"
ref="$here/vs_pytorch_ref.py"

# name, corun train arguments, PyTorch workload, iterations
train_rows=(
  "pathnet|--model pathnet --size small|pathnet|$iters"
  "googlenet|--model googlenet --size small|googlenet|$googlenet_iters"
  "cifar-quick|--model cifar-quick --batch 128|cifar-quick|$cifar_iters"
  "lstm-small|--model lstm --size small|lstm-small|$iters"
  "lstm-medium|--model lstm --size medium|lstm-medium|$lstm_medium_iters"
)
serve_rows=("256,256,10,100" "64,64,1,100" "256,256,1,100" "1024,1024,1,100")

record() {  # workload impl policy pass threads round value unit
  printf '{"workload":"%s","impl":"%s","policy":"%s","pass":"%s","threads":%s,"round":%s,"value":%s,"unit":"%s"}\n' \
    "$@" >>"$results"
}

load_start=$(bench_load)
echo "vs_pytorch: calibrating the perfmodels (untimed)" >&2
for row in "${train_rows[@]}"; do
  IFS='|' read -r name args _ n <<<"$row"
  # shellcheck disable=SC2086
  env CORUN_QUIET=1 STARPU_CALIBRATE=1 CORUN_SCHED=corun CORUN_PARALLEL_OPS=off "$corun" train $args --iters "$n" \
    >/dev/null 2>"$work/calibrate-$name.err" || { cat "$work/calibrate-$name.err" >&2; exit 1; }
done

for ((r = 1; r <= rounds; ++r)); do
  echo "vs_pytorch: round $r of $rounds" >&2
  for row in "${train_rows[@]}"; do
    IFS='|' read -r name args torch_name n <<<"$row"
    for p in $policies; do
      for pass in $passes; do
        json="$work/$name.$p.$pass.$r.json"
        # shellcheck disable=SC2086
        env CORUN_QUIET=1 CORUN_SCHED="$p" CORUN_PARALLEL_OPS="$pass" "$corun" train $args --iters "$n" --json "$json" \
          >/dev/null 2>"$work/run.err" || { cat "$work/run.err" >&2; exit 1; }
        [[ -f "$work/machine.json" ]] || cp "$json" "$work/machine.json"
        record "$name" corun "$p" "$pass" 2 "$r" \
          "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["median_ms"])' "$json")" ms
        record "$name" corun-tasks "$p" "$pass" 2 "$r" \
          "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["tasks_per_iter"])' "$json")" tasks
      done
    done
    torch_record "$name" "$r" ms_per_iter ms -- "$torch_name" --iters "$n" --warmup 1 || exit 1
  done
  for cfg in "${serve_rows[@]}"; do
    IFS=',' read -r e h b s <<<"$cfg"
    name="serve-$e-$h-$b-$s"
    lat=$(env CORUN_QUIET=1 "$corun" serve-bench --cell lstm --input "$e" --hidden "$h" --batch "$b" --seq "$s" \
      --requests "$requests" 2>&1 | awk '/^latency:/ { print $3 }')
    [[ -n "$lat" ]] || { echo "error: corun serve-bench printed no latency for $cfg" >&2; exit 1; }
    record "$name" corun - - 2 "$r" "$(python3 -c "print($lat * 1000)")" us
    torch_record "$name" "$r" us us -- "$name" --iters "$requests" --warmup 2 || exit 1
  done
  lat=$(env CORUN_QUIET=1 "$corun" infer --model wide-deep --exec inline --iters 2000 --warmup 100 2>/dev/null |
    awk -F'|' '$2 ~ /wide-deep/ { gsub(/ /, "", $5); print $5 }')
  [[ -n "$lat" ]] || { echo "error: corun infer printed no latency" >&2; exit 1; }
  record wide-deep corun - - 1 "$r" "$lat" us
  torch_record wide-deep "$r" us us -- wide-deep --iters 2000 --warmup 100 || exit 1
done

sgemm1=$("$sgemm" 2048 1 10)
sgemm2=$("$sgemm" 2048 2 10)
cmd="bench/vs_pytorch.sh --rounds $rounds --policies \"$policies\" --passes \"$passes\" --iters $iters --lstm-medium-iters $lstm_medium_iters --googlenet-iters $googlenet_iters --cifar-iters $cifar_iters --requests $requests"
python3 "$here/summarize_vs_pytorch.py" --results "$results" --machine "$work/machine.json" --command "$cmd" \
  --git "$(bench_git_sha)" --info "$(bench_corun_info "$corun")" --sgemm "$sgemm1" --sgemm "$sgemm2" \
  --torch "$("$torch_py" -c 'import torch; print(torch.__version__, "with oneDNN" if torch.backends.mkldnn.is_available() else "without oneDNN")')" \
  --cifar-iters "$cifar_iters" --allocators "$allocators" --load "$load_start" --load "$(bench_load)" >"$out"
echo "vs_pytorch: wrote $out" >&2
