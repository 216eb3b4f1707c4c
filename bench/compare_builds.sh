#!/usr/bin/env bash
# Benchmark: two builds of corun side by side in one run (a refactor must not change the figures).
#
#   bench/compare_builds.sh --before DIR --after DIR [--workloads "lstm:small pathnet:small"]
#                           [--policies "lws cpf"] [--iters 10] [--repeats 5] [--label-before TEXT]
#                           [--label-after TEXT] [--out FILE]
#
# DIR is a build directory (its cli/corun, or apps/corun for builds before the cli/ layout). Every
# (workload, policy, build) triple runs `corun train --json` --repeats times, interleaved: repeat r of every
# triple runs before repeat r+1, and the two builds alternate within each pair, so drift in the machine's
# load hits both alike. Each run's value is its median ms/iter (first iteration excluded); the table gives
# the median over repeats, the min-max of the run medians and after/before. Both builds start every run
# from one private STARPU_HOME calibrated by a warm-up run of each, so neither inherits the other's models
# in a different state. A policy may name an executor layout for corun's policies: "cpf:1x2" runs
# CORUN_SCHED=cpf CORUN_EXECUTORS=1x2 (one team of both cores: "sequential"). Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

before= after= out=
workloads="lstm:small pathnet:small"
policies="lws cpf"
iters=10
repeats=5
label_before=before label_after=after
usage="usage: $0 --before DIR --after DIR [--workloads \"MODEL:SIZE ...\"] [--policies P] [--iters N] [--repeats R] [--label-before T] [--label-after T] [--out FILE]"
while (($#)); do
  case "$1" in
    --before) before=$2; shift 2 ;;
    --after) after=$2; shift 2 ;;
    --workloads) workloads=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --label-before) label_before=$2; shift 2 ;;
    --label-after) label_after=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[[ -n "$before" && -n "$after" ]] || { echo "error: --before and --after are required" >&2; echo "$usage" >&2; exit 2; }
exe_of() {  # the corun executable of build directory $1
  local d=$1
  for e in "$d/cli/corun" "$d/apps/corun"; do [[ -x "$e" ]] && { echo "$e"; return; }; done
  echo "error: no corun executable under $d (cli/corun or apps/corun): build it first" >&2
  exit 1
}
exe_before=$(exe_of "$before")
exe_after=$(exe_of "$after")
[[ -n "$out" ]] || out="$root/bench/results/compare-builds-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export STARPU_HOME="$work/starpu-home"
unset XDG_CACHE_HOME STARPU_SCHED CORUN_SCHED CORUN_PROFILE CORUN_EXECUTORS CORUN_FIXED_WIDTH CORUN_DETERMINISTIC \
  CORUN_SCHEDULE CORUN_VERBOSE CORUN_WIDTH_INTERVAL CORUN_PARALLEL_OPS

run() {  # build-label exe workload policy repeat
  local label=$1 exe=$2 workload=$3 policy=$4 r=$5
  local model=${workload%%:*} size=${workload#*:}
  local executors=
  [[ "$policy" == *:* ]] && executors=${policy#*:}
  env CORUN_QUIET=1 CORUN_SCHED="${policy%%:*}" CORUN_EXECUTORS="$executors" "$exe" train --model "$model" --size "$size" --iters "$iters" \
    --json "$work/$model-$size.$policy.$label.$r.json" >/dev/null
}
for w in $workloads; do  # warm-up: calibrate the perf models of every policy once per build
  for p in $policies; do
    echo "[bench] warm-up $w $p" >&2
    run warm-before "$exe_before" "$w" "$p" 0
    run warm-after "$exe_after" "$w" "$p" 0
  done
done
rm -f "$work"/*.warm-*.json
for r in $(seq 1 "$repeats"); do
  for w in $workloads; do
    for p in $policies; do
      echo "[bench] repeat $r/$repeats $w $p" >&2
      if ((r % 2)); then
        run before "$exe_before" "$w" "$p" "$r"; run after "$exe_after" "$w" "$p" "$r"
      else
        run after "$exe_after" "$w" "$p" "$r"; run before "$exe_before" "$w" "$p" "$r"
      fi
    done
  done
done

python3 "$here/summarize_compare.py" --dir "$work" --workloads "$workloads" --policies "$policies" \
  --label-before "$label_before" --label-after "$label_after" --info "$(bench_corun_info "$exe_after")" \
  --git "$(bench_git_sha)" \
  --command "bench/compare_builds.sh --workloads \"$workloads\" --policies \"$policies\" --iters $iters --repeats $repeats" \
  > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
