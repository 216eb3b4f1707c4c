#!/usr/bin/env bash
# Benchmark: LSTM training under a list of scheduling policies, side by side in one run.
#
#   bench/lstm_policies.sh [--sizes "small medium"] [--policies "eager lws dmdas pheft peager"]
#                          [--iters 10] [--repeats 3] [--build DIR] [--out FILE]
#
# Every (size, policy) pair runs `corun train` --repeats times (interleaved: repeat r of every pair before
# repeat r+1, so drift in the machine's load hits all policies alike); each run reports the median ms/iter
# of its iterations (first excluded). The table gives the median over repeats, the spread (min-max of the
# run medians) and the ratio to the first policy. Machine info heads the table. Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

sizes="small medium"
policies="eager lws dmdas pheft peager"
iters=10
repeats=3
build=
out=
while (($#)); do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes S] [--policies P] [--iters N] [--repeats R] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
[[ -x "$corun" ]] || { echo "error: $corun not found (build first)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/lstm-policies-$(date -u +%Y%m%d-%H%M%S).md"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for r in $(seq 1 "$repeats"); do
  for size in $sizes; do
    for p in $policies; do
      echo "[bench] repeat $r/$repeats size=$size policy=$p" >&2
      # STARPU_SCHED is removed, not emptied: StarPU 1.3 runs lws for an empty one (corun builds before the
      # engine unset it themselves reported the requested policy while running lws).
      env -u STARPU_SCHED CORUN_QUIET=1 CORUN_SCHED="$p" "$corun" train --model lstm --size "$size" --iters "$iters" \
        --json "$work/$size.$p.$r.json" >/dev/null
    done
  done
done

python3 "$here/summarize.py" --dir "$work" --sizes "$sizes" --policies "$policies" --repeats "$repeats" \
  --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)" \
  --command "bench/lstm_policies.sh --sizes \"$sizes\" --policies \"$policies\" --iters $iters --repeats $repeats" \
  > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
