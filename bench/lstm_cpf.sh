#!/usr/bin/env bash
# Benchmark (issue 3): LSTM training step under cpf with its profile against the baselines, side by side.
#
#   bench/lstm_cpf.sh [--sizes "small medium"] [--iters 10] [--repeats 5] [--build DIR] [--out FILE]
#
# Configurations (the names in the table):
#   cpf         CORUN_SCHED=cpf with the profile `corun profile` wrote for that size in this run
#   sequential  one executor with all cores, every op at full width (cpf, CORUN_EXECUTORS=1xN, CORUN_FIXED_WIDTH=N)
#   fifo        naive central FIFO over N x 1 executors (CORUN_SCHED=fifo)
#   eager lws dmdas pheft   StarPU built-ins
# Runs are interleaved (repeat r of every configuration before repeat r+1). Each run reports its median
# ms/iter (first iteration excluded) and its last iteration's makespan and lower bound. After the timing
# runs, the best and the worst configuration of each size are traced once (--trace) and drawn with
# `corun plot-trace`; the traces and PNGs are written next to the table. Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

sizes="small medium"
configs="cpf sequential fifo eager lws dmdas pheft"
iters=10
repeats=5
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
bench_lstm_prepare lstm-cpf

# The environment of a configuration, as NAME=value words for env(1).
config_env() {  # $1 = config, $2 = size
  case "$1" in
    cpf) echo "CORUN_SCHED=cpf CORUN_PROFILE=$work/profile-$2.txt" ;;
    sequential) echo "CORUN_SCHED=cpf CORUN_EXECUTORS=1x$cores CORUN_FIXED_WIDTH=$cores" ;;
    fifo) echo "CORUN_SCHED=fifo" ;;
    *) echo "CORUN_SCHED=$1" ;;
  esac
}

for size in $sizes; do
  echo "[bench] corun profile --size $size" >&2
  "$corun" profile --model lstm --size "$size" -o "$work/profile-$size.txt" > "$work/profile-$size.out" 2>/dev/null
done
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

# Best and worst configuration per size, traced once each.
for size in $sizes; do
  read -r best worst < <(python3 "$here/summarize.py" --dir "$work" --sizes "$size" --policies "$configs" \
    --repeats "$repeats" --extremes)
  for c in "$best" "$worst"; do
    trace="$artifacts-$size-$c.trace.json"
    echo "[bench] trace size=$size config=$c" >&2
    # shellcheck disable=SC2046
    env CORUN_QUIET=1 $(config_env "$c" "$size") "$corun" train --model lstm --size "$size" --iters "$iters" \
      --trace "$trace" >/dev/null 2>&1
    "$corun" plot-trace "$trace" -o "${trace%.trace.json}.png" >/dev/null
  done
done

{
  python3 "$here/summarize.py" --dir "$work" --sizes "$sizes" --policies "$configs" --repeats "$repeats" \
    --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)" --bound \
    --title "LSTM training step: cpf (with its profile) against the baselines" \
    --command "bench/lstm_cpf.sh --sizes \"$sizes\" --configs \"$configs\" --iters $iters --repeats $repeats" \
    --note "cpf = CORUN_SCHED=cpf with the profile below; sequential = one executor of all $cores cores, every op at full width (CORUN_EXECUTORS=1x$cores CORUN_FIXED_WIDTH=$cores); fifo = central FIFO over ${cores}x1 executors; the rest are StarPU built-ins" \
    --note "makespan / bound: the last iteration's wall time over max(critical path, work / cores) from the same perf models (corun's policies only; median over runs)"
  for size in $sizes; do
    echo "## corun profile, $size"
    echo
    sed -n '/^| layout/,/^$/p' "$work/profile-$size.out"
    echo "profile: \`$(grep '^layout=' "$work/profile-$size.txt")\`"
    echo
  done
  echo "## Traces of the best and the worst configuration"
  echo
  for f in "$artifacts"-*.png; do echo "- [$(basename "$f")]($(basename "$f")) ($(basename "${f%.png}.trace.json"))"; done
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
