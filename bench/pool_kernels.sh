#!/usr/bin/env bash
# Benchmark: the max pool fast kernels of two builds side by side (bench/pool_kernels.cpp), one thread, on the
# models' pool shapes; the measurement behind issue 52 item 1 (NaN through max pooling at the vector speed).
#
#   bench/pool_kernels.sh --before DIR --after DIR [--runs 7] [--rounds 15] [--label-before T] [--label-after T]
#                         [--out FILE]
#
# DIR is a build directory with bench/pool_kernels (build the target in both). The two builds' programs run
# --runs times each, interleaved and alternating which goes first, so drift in the machine's load hits both
# alike; each run prints per case and op the median of --rounds timed batches. The table gives the median of
# the runs, their min-max and after/before, then the PathNet small step's pools (six modules per layer, three
# layers) summed from the per-call medians; last, one --nan run of the after build (every plane holding NaN:
# the NaN-aware path) for what a NaN costs. Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

before= after= out= runs=7 rounds=15 label_before=before label_after=after
usage="usage: $0 --before DIR --after DIR [--runs N] [--rounds R] [--label-before T] [--label-after T] [--out FILE]"
while (($#)); do
  case "$1" in
    --before) before=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --label-before) label_before=$2; shift 2 ;;
    --label-after) label_after=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[[ -n "$before" && -n "$after" ]] || { echo "error: --before and --after are required" >&2; echo "$usage" >&2; exit 2; }
for d in "$before" "$after"; do
  [[ -x "$d/bench/pool_kernels" ]] || { echo "error: no $d/bench/pool_kernels: build the pool_kernels target" >&2; exit 1; }
done
[[ -n "$out" ]] || out="$root/bench/results/pool-kernels-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

load_start=$(bench_load)
for r in $(seq 1 "$runs"); do
  echo "[bench] run $r/$runs" >&2
  if ((r % 2)); then order="before after"; else order="after before"; fi
  for b in $order; do
    dir=$before; [[ $b == after ]] && dir=$after
    "$dir/bench/pool_kernels" --rounds "$rounds" > "$work/$b.$r.tsv"
  done
done
"$after/bench/pool_kernels" --rounds "$rounds" --nan > "$work/nan.tsv"
load_end=$(bench_load)

{
  echo "# corun: max pool kernels of two builds side by side"
  echo
  echo "- command: \`bench/pool_kernels.sh --runs $runs --rounds $rounds\`"
  echo "- git: $(bench_git_sha)"
  bench_cpu_lines
  echo "- $(bench_load_note "$load_start" "$load_end")"
  echo "- before = $label_before"
  echo "- after = $label_after"
  echo "- one thread (width 1), fast kernels; X uniform in [-1, 1), no NaN; runs interleaved (the builds alternate,"
  echo "  and which goes first); each run's value is the median of $rounds batches of >= 5 ms; the table shows the"
  echo "  median of the $runs runs and their min-max"
  if [[ -x "$after/cli/corun" ]]; then
    echo
    echo "<details><summary>corun info</summary>"
    echo
    echo '```'
    bench_corun_info "$after/cli/corun"
    echo '```'
    echo "</details>"
  fi
  echo
  python3 - "$work" "$runs" <<'PY'
import statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
vals = {}
order = []
for b in ("before", "after"):
    for r in range(1, runs + 1):
        for line in open(f"{work}/{b}.{r}.tsv"):
            case, op, ms = line.rstrip("\n").split("\t")
            if (case, op) not in order:
                order.append((case, op))
            vals.setdefault((case, op, b), []).append(float(ms))
nan = {}
for line in open(f"{work}/nan.tsv"):
    case, op, ms = line.rstrip("\n").split("\t")
    nan[(case, op)] = float(ms)
med = {k: statistics.median(v) for k, v in vals.items()}
print("| case | op | before ms | min-max | after ms | min-max | after / before | after, NaN in every plane ms |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for case, op in order:
    cells = []
    for b in ("before", "after"):
        v = vals[(case, op, b)]
        cells += [f"{med[(case, op, b)]:.4f}", f"{min(v):.4f}-{max(v):.4f}"]
    ratio = med[(case, op, "after")] / med[(case, op, "before")]
    print(f"| {case} | {op} | " + " | ".join(cells) + f" | {ratio:.3f} | {nan.get((case, op), float('nan')):.4f} |")
print()
print("PathNet small's pools per training step, one thread: six calls of each layer's shape, summed.")
print()
print("| layout | op | before ms/step | after ms/step | after / before | after, NaN everywhere ms/step |")
print("|---|---|---:|---:|---:|---:|")
for layout in ("nChw16c", "plain"):
    for op in ("max_pool", "max_pool_grad"):
        cases = [c for c, o in order if o == op and c.startswith("pathnet") and c.endswith(layout)]
        tb = 6 * sum(med[(c, op, "before")] for c in cases)
        ta = 6 * sum(med[(c, op, "after")] for c in cases)
        tn = 6 * sum(nan[(c, op)] for c in cases)
        print(f"| {layout} | {op} | {tb:.3f} | {ta:.3f} | {ta / tb:.3f} | {tn:.3f} |")
PY
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
