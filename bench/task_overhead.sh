#!/usr/bin/env bash
# Benchmark: per-task overhead of scheduling policies with empty SPMD codelets (bench/task_overhead.cpp).
#
#   bench/task_overhead.sh [--policies "cpf fifo eager lws dmdas pheft peager"] [--widths "1 2"]
#                          [--tasks 100000] [--runs 5] [--build DIR] [--out FILE] [--note TEXT]
#
# One process per (policy, width): StarPU initialises once per process. Each process runs a warm-up and then
# --runs timed runs of --tasks empty tasks (submitted in a loop, then wait_for_all) and reports µs per task;
# the table gives the median over runs, their min-max, and the team widths the tasks actually ran at.
# Width 2: corun's policies (cpf, fifo) get CORUN_EXECUTORS=1x2 and a fixed_width=2 hint per task; pheft and
# peager pick the width themselves. Policies the build does not have are skipped with a note in the table.
# Every process gets a fresh STARPU_HOME (the history model calibrates in the warm-up). --note adds a line to
# the header of the results file (e.g. what was built, when it is not a commit). Not a test; do not compile or
# run other jobs meanwhile.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

policies="cpf fifo eager lws dmdas pheft peager"
widths="1 2"
tasks=100000
runs=5
build=
out=
note=
while (($#)); do
  case "$1" in
    --policies) policies=$2; shift 2 ;;
    --widths) widths=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --note) note=$2; shift 2 ;;
    *) echo "usage: $0 [--policies P] [--widths W] [--tasks N] [--runs R] [--build DIR] [--out FILE] [--note TEXT]" >&2
       exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
bin="$build/bench/task_overhead"
[[ -x "$corun" && -x "$bin" ]] || { echo "error: $corun or $bin not found (build first)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/task-overhead-$(date -u +%Y%m%d-%H%M%S).md"

known=$(bench_policies "$corun")
own=$(bench_own_policies "$corun")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
skipped=
failed=
for p in $policies; do
  if ! bench_in_list "$known" "$p"; then
    echo "[bench] $p: not a policy of this build, skipped" >&2
    skipped+="$p: not registered in this build (sched::own_policies() / StarPU built-ins)"$'\n'
    continue
  fi
  for w in $widths; do
    executors=
    if bench_in_list "$own" "$p" && ((w > 1)); then executors=1x$w; fi
    echo "[bench] policy=$p width=$w${executors:+ CORUN_EXECUTORS=$executors}" >&2
    mkdir -p "$work/home.$p.$w"
    # Only this run's settings: no profile or forced width from the caller, models in a fresh STARPU_HOME
    # (XDG_CACHE_HOME would beat it). STARPU_SCHED is removed, not emptied: StarPU 1.3 runs lws for an empty one.
    if ! env -u XDG_CACHE_HOME -u STARPU_SCHED CORUN_QUIET=1 CORUN_SCHED="$p" CORUN_EXECUTORS="$executors" \
         CORUN_PROFILE= CORUN_FIXED_WIDTH= STARPU_HOME="$work/home.$p.$w" \
         "$bin" --tasks "$tasks" --width "$w" --runs "$runs" --json "$work/$p.w$w.json" \
         2> >(grep -v '^\[starpu\]' >&2); then
      echo "[bench] $p width $w failed" >&2
      failed+="$p $w: the run failed (exit status non-zero)"$'\n'
    fi
  done
done

python3 "$here/summarize_overhead.py" --dir "$work" --policies "$policies" --widths "$widths" \
  --skipped "$skipped" --failed "$failed" --note "$note" \
  --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)" \
  --command "bench/task_overhead.sh --policies \"$policies\" --widths \"$widths\" --tasks $tasks --runs $runs" \
  > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
