#!/usr/bin/env bash
# Benchmark (issue 4): LSTM training step under corun against cpf, sequential and StarPU built-ins, side by
# side, with the number of co-running ops over one iteration (the co-run paper's Figure 4).
#
#   bench/lstm_corun.sh [--sizes "small medium"] [--configs C] [--iters 12] [--repeats 3] [--build DIR] [--out FILE]
#
# Configurations (the names in the table):
#   corun       CORUN_SCHED=corun (its width search runs in each process's first iterations: 2 runs on 2 cores)
#   cpf         CORUN_SCHED=cpf, default layout (one executor per core: what `corun profile` picks here)
#   sequential  one executor with all cores, every op at full width (cpf, CORUN_EXECUTORS=1xN, CORUN_FIXED_WIDTH=N)
#   pheft lws dmdas eager   StarPU built-ins
# Runs are interleaved (repeat r of every configuration before repeat r+1); each reports its median ms/iter
# (first iteration excluded). Afterwards corun, cpf and sequential are traced once per size; the traces,
# the concurrency figure (SVG + PNG) and its table are written next to the results file. Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

sizes="small medium"
configs="corun cpf sequential pheft lws dmdas eager"
iters=12
repeats=3
build=
out=
while (($#)); do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes S] [--configs C] [--iters N] [--repeats R] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
bench_lstm_prepare lstm-corun

config_env() {  # $1 = config: NAME=value words for env(1)
  case "$1" in
    sequential) echo "CORUN_SCHED=cpf CORUN_EXECUTORS=1x$cores CORUN_FIXED_WIDTH=$cores" ;;
    *) echo "CORUN_SCHED=$1" ;;
  esac
}

for r in $(seq 1 "$repeats"); do
  for size in $sizes; do
    for c in $configs; do
      echo "[bench] repeat $r/$repeats size=$size config=$c" >&2
      # shellcheck disable=SC2046
      env CORUN_QUIET=1 $(config_env "$c" "$size") "$corun" train --model lstm --size "$size" --iters "$iters" \
        --json "$work/$size.$c.$r.json" >/dev/null 2>&1
    done
  done
done

traced="corun cpf sequential"
for size in $sizes; do
  specs=()
  for c in $traced; do
    trace="$artifacts-$size-$c.trace.json"
    echo "[bench] trace size=$size config=$c" >&2
    # shellcheck disable=SC2046
    env CORUN_QUIET=1 $(config_env "$c") "$corun" train --model lstm --size "$size" --iters "$iters" \
      --trace "$trace" >/dev/null 2>&1
    specs+=("$c=$trace")
  done
  python3 "$here/corun_concurrency.py" --svg "$artifacts-$size-concurrency.svg" "${specs[@]}" \
    > "$work/concurrency-$size.md"
  rsvg-convert "$artifacts-$size-concurrency.svg" -o "$artifacts-$size-concurrency.png"
  "$corun" plot-trace "$artifacts-$size-corun.trace.json" -o "$artifacts-$size-corun.png" >/dev/null
done

{
  python3 "$here/summarize.py" --dir "$work" --sizes "$sizes" --policies "$configs" --repeats "$repeats" \
    --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)" --bound \
    --title "LSTM training step: corun (co-run packing) against cpf, sequential and StarPU built-ins" \
    --command "bench/lstm_corun.sh --sizes \"$sizes\" --configs \"$configs\" --iters $iters --repeats $repeats" \
    --note "corun = CORUN_SCHED=corun (width search in the first iterations of every process, then packing); cpf = CORUN_SCHED=cpf with ${cores}x1 executors (the layout \`corun profile\` chooses here); sequential = one executor of all $cores cores, every op at full width; the rest are StarPU built-ins" \
    --note "ratio to corun > 1: that configuration is slower than corun by that factor" \
    --note "makespan / bound: the last iteration's wall time over max(critical path, work / cores) from the same perf models (corun's policies only; median over runs)"
  for size in $sizes; do
    echo "## Co-running ops over one iteration, $size (the paper's Figure 4)"
    echo
    cat "$work/concurrency-$size.md"
    echo
    echo "![concurrency $size]($(basename "$artifacts")-$size-concurrency.png) — corun timeline: [$(basename "$artifacts")-$size-corun.png]($(basename "$artifacts")-$size-corun.png)"
    echo
  done
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
