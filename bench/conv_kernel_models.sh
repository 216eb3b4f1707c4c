#!/usr/bin/env bash
# Benchmark (issue 18 item 1): CIFAR-quick and PathNet small training with the convolutions on oneDNN in its
# blocked layouts against im2col + OpenBLAS (CORUN_CONV_KERNEL=dnnl / im2col; auto is the per-shape choice),
# side by side in one run, interleaved (repeat r of every cell before repeat r+1). Not a test.
#
#   bench/conv_kernel_models.sh [--models "cifar-quick pathnet"] [--kernels "im2col dnnl auto"]
#                               [--sched lws] [--iters 6] [--repeats 3] [--build DIR] [--out FILE]
#
# Each cell is the median over repeats of each run's median ms/iter (`corun train --json`, summary.median_ms);
# the last column is the ratio to im2col, the number to read on a loaded machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

models="cifar-quick pathnet"
kernels="im2col dnnl auto"
sched=lws
iters=6
repeats=3
build=
out=
while (($#)); do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --sched) sched=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--models M] [--kernels K] [--sched S] [--iters N] [--repeats R] [--build DIR] [--out FILE]" >&2
       exit 2 ;;
  esac
done
bench_lstm_prepare conv-kernel-models

model_args() {  # $1 = model: the `corun train` arguments
  case "$1" in
    cifar-quick) echo "--model cifar-quick --eval-images 100" ;;
    pathnet) echo "--model pathnet --size small" ;;
    *) echo "error: unknown model $1 (cifar-quick, pathnet)" >&2; exit 2 ;;
  esac
}

load_start=$(bench_load)
for r in $(seq 1 "$repeats"); do
  for m in $models; do
    for k in $kernels; do
      echo "[bench] repeat $r/$repeats model=$m kernel=$k" >&2
      # shellcheck disable=SC2046
      env CORUN_QUIET=1 CORUN_SCHED="$sched" CORUN_CONV_KERNEL="$k" "$corun" train $(model_args "$m") \
        --iters "$iters" --json "$work/$m.$k.$r.json" >/dev/null 2>&1 || echo "[bench] failed: model=$m kernel=$k" >&2
    done
  done
done

{
  echo "# Convolution kernels in training: oneDNN (blocked layouts) against im2col + OpenBLAS"
  echo
  echo "- command: \`bench/conv_kernel_models.sh --models \"$models\" --kernels \"$kernels\" --sched $sched --iters $iters --repeats $repeats\`"
  echo "- git: $(bench_git_sha)"
  echo "- oneDNN: $(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null || echo unknown) (Debian libdnnl-dev); vector ISA: $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)"
  echo "- cpu: $(lscpu | sed -n 's/^Model name: *//p'), $cores workers"
  echo "- $(bench_load_note "$load_start" "$(bench_load)")"
  echo
  echo "| model | kernel | ms/iter (median of $repeats) | vs im2col |"
  echo "|---|---|---:|---:|"
  python3 - "$work" "$models" "$kernels" <<'PY'
import glob, json, os, statistics, sys
work, models, kernels = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
for m in models:
    med = {}
    for k in kernels:
        runs = []
        for p in glob.glob(os.path.join(work, f"{m}.{k}.*.json")):
            with open(p) as f:
                runs.append(json.load(f)["summary"]["median_ms"])
        med[k] = statistics.median(runs) if runs else None
    base = med.get("im2col")
    for k in kernels:
        v = med[k]
        ratio = f"{v / base:.2f}" if v and base else "-"
        print(f"| {m} | {k} | {v:.1f} | {ratio} |" if v else f"| {m} | {k} | failed | - |")
PY
  echo
  echo '## Machine'
  echo
  echo '```'
  bench_corun_info "$corun"
  echo '```'
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
