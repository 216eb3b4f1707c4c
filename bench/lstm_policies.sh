#!/usr/bin/env bash
# Benchmark: LSTM training under a list of configurations (a policy and its environment), side by side.
#
#   bench/lstm_policies.sh [--preset policies|corun|cpf] [--configs "C ..."] [--sizes "small medium"]
#                          [--iters N] [--repeats R] [--build DIR] [--out FILE]
#
# A configuration C is NAME or NAME:VAR=VAL[,VAR=VAL...]. Its runs have CORUN_SCHED=NAME, or only the VARs when
# they set CORUN_SCHED themselves; NAME heads its column. In a value, {cores} is the number of workers and
# {profile} the profile `corun profile` wrote for the size in this run (run first, per size, when a
# configuration names it). `sequential` alone is one executor of all cores, every op at full width:
# sequential:CORUN_SCHED=cpf,CORUN_EXECUTORS=1x{cores},CORUN_FIXED_WIDTH={cores}.
#
# Presets (defaults of --configs, --iters, --repeats, and what follows the timing runs):
#   policies  eager lws dmdas pheft peager; 10 iterations, 3 repeats; the caller's STARPU_HOME and variables
#             (but STARPU_SCHED) kept. Writes lstm-policies-<date>.md.
#   corun     issue 4: corun cpf sequential pheft lws dmdas eager (cpf: the default layout, one executor per
#             core); 12 iterations, 3 repeats; then corun, cpf and sequential traced once per size, with the
#             number of co-running ops over one iteration (the co-run paper's Figure 4, SVG + PNG) and corun's
#             timeline next to the results file. Writes lstm-corun-<date>.md.
#   cpf       issue 3: cpf:CORUN_PROFILE={profile} sequential fifo eager lws dmdas pheft; 10 iterations,
#             5 repeats; then the fastest and the slowest configuration of each size traced and drawn with
#             `corun plot-trace`. Writes lstm-cpf-<date>.md.
# corun and cpf calibrate in a private STARPU_HOME and clear every policy variable (bench_lstm_prepare), so
# every run of the script starts from the same state.
#
# Runs are interleaved: repeat r of every (size, configuration) before repeat r+1, so drift in the machine's
# load hits all configurations alike; each run reports the median ms/iter of its iterations (first excluded).
# The table gives the median over repeats, the spread (min-max of the run medians) and the ratio to the first
# configuration; corun and cpf add each configuration's makespan / lower bound. Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

preset=policies
sizes="small medium"
configs='' iters='' repeats='' build='' out=''
while (($#)); do
  case "$1" in
    --preset) preset=$2; shift 2 ;;
    --configs | --policies) configs=$2; shift 2 ;;  # --policies: the name before configurations had variables
    --sizes) sizes=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--preset policies|corun|cpf] [--configs C] [--sizes S] [--iters N] [--repeats R] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
case "$preset" in
  policies) defaults=("eager lws dmdas pheft peager" 10 3) ;;
  corun) defaults=("corun cpf sequential pheft lws dmdas eager" 12 3) ;;
  cpf) defaults=("cpf:CORUN_PROFILE={profile} sequential fifo eager lws dmdas pheft" 10 5) ;;
  *) echo "error: --preset $preset: not policies, corun or cpf" >&2; exit 2 ;;
esac
configs=${configs:-${defaults[0]}} iters=${iters:-${defaults[1]}} repeats=${repeats:-${defaults[2]}}
# policies keeps the caller's StarPU home (its calibrated models) and variables, as it measured before presets.
if [[ $preset == policies ]]; then bench_lstm_prepare lstm-policies shared; else bench_lstm_prepare "lstm-$preset"; fi

names=
for c in $configs; do names+="${names:+ }${c%%:*}"; done

# The environment of configuration $1 for size $2, as NAME=value words for env(1).
config_env() {
  local c=$1 vars=
  [[ $c == sequential ]] && c="sequential:CORUN_SCHED=cpf,CORUN_EXECUTORS=1x{cores},CORUN_FIXED_WIDTH={cores}"
  [[ $c == *:* ]] && vars=${c#*:}
  vars=${vars//,/ }
  [[ " $vars" == *" CORUN_SCHED="* ]] || vars="CORUN_SCHED=${c%%:*}${vars:+ }$vars"
  vars=${vars//\{cores\}/$cores}
  echo "${vars//\{profile\}/$work/profile-$2.txt}"
}

# Runs `corun train` under configuration $1 for size $2; the rest are corun's output options.
train() {
  local c=$1 size=$2
  shift 2
  # STARPU_SCHED is removed, not emptied: StarPU 1.3 runs lws for an empty one (corun builds before the
  # engine unset it themselves reported the requested policy while running lws).
  # shellcheck disable=SC2046
  env -u STARPU_SCHED CORUN_QUIET=1 $(config_env "$c" "$size") "$corun" train --model lstm --size "$size" \
    --iters "$iters" "$@" >/dev/null
}

if [[ $configs == *"{profile}"* ]]; then
  for size in $sizes; do
    echo "[bench] corun profile --size $size" >&2
    "$corun" profile --model lstm --size "$size" -o "$work/profile-$size.txt" >"$work/profile-$size.out" 2>/dev/null
  done
fi
for r in $(seq 1 "$repeats"); do
  for size in $sizes; do
    for c in $configs; do
      echo "[bench] repeat $r/$repeats size=$size config=${c%%:*}" >&2
      train "$c" "$size" --json "$work/$size.${c%%:*}.$r.json"
    done
  done
done

# corun: corun, cpf (default layout) and sequential traced once per size; the co-running ops of each.
trace_concurrency() {
  local size c trace specs
  for size in $sizes; do
    specs=()
    for c in corun cpf sequential; do
      trace="$artifacts-$size-$c.trace.json"
      echo "[bench] trace size=$size config=$c" >&2
      train "$c" "$size" --trace "$trace"
      specs+=("$c=$trace")
    done
    python3 "$here/corun_concurrency.py" --svg "$artifacts-$size-concurrency.svg" "${specs[@]}" \
      >"$work/concurrency-$size.md"
    rsvg-convert "$artifacts-$size-concurrency.svg" -o "$artifacts-$size-concurrency.png"
    "$corun" plot-trace "$artifacts-$size-corun.trace.json" -o "$artifacts-$size-corun.png" >/dev/null
  done
}

# cpf: the fastest and the slowest configuration of each size traced once and drawn.
trace_extremes() {
  local size best worst name c trace
  for size in $sizes; do
    read -r best worst < <(python3 "$here/summarize.py" --dir "$work" --sizes "$size" --policies "$names" \
      --repeats "$repeats" --extremes)
    for name in "$best" "$worst"; do
      for c in $configs; do [[ ${c%%:*} == "$name" ]] && break; done
      trace="$artifacts-$size-$name.trace.json"
      echo "[bench] trace size=$size config=$name" >&2
      train "$c" "$size" --trace "$trace"
      "$corun" plot-trace "$trace" -o "${trace%.trace.json}.png" >/dev/null
    done
  done
}

summarize() {
  local args=(--dir "$work" --sizes "$sizes" --policies "$names" --repeats "$repeats"
    --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)"
    --command "bench/lstm_policies.sh --preset $preset --sizes \"$sizes\" --configs \"$configs\" --iters $iters --repeats $repeats")
  case "$preset" in
    corun) args+=(--bound
      --title "LSTM training step: corun (co-run packing) against cpf, sequential and StarPU built-ins"
      --note "corun = CORUN_SCHED=corun (width search in the first iterations of every process, then packing); cpf = CORUN_SCHED=cpf with ${cores}x1 executors (the layout \`corun profile\` chooses here); sequential = one executor of all $cores cores, every op at full width; the rest are StarPU built-ins"
      --note "ratio to corun > 1: that configuration is slower than corun by that factor") ;;
    cpf) args+=(--bound --title "LSTM training step: cpf (with its profile) against the baselines"
      --note "cpf = CORUN_SCHED=cpf with the profile below; sequential = one executor of all $cores cores, every op at full width (CORUN_EXECUTORS=1x$cores CORUN_FIXED_WIDTH=$cores); fifo = central FIFO over ${cores}x1 executors; the rest are StarPU built-ins") ;;
  esac
  [[ $preset == policies ]] || args+=(--note "makespan / bound: the last iteration's wall time over max(critical path, work / cores) from the same perf models (corun's policies only; median over runs)")
  python3 "$here/summarize.py" "${args[@]}"
}

# The sections under the table: corun's concurrency figures, cpf's profiles and traces.
sections() {
  local size f a
  a=$(basename "$artifacts")
  case "$preset" in
    corun) for size in $sizes; do
        echo "## Co-running ops over one iteration, $size (the paper's Figure 4)"
        echo
        cat "$work/concurrency-$size.md"
        echo
        echo "![concurrency $size]($a-$size-concurrency.png) — corun timeline: [$a-$size-corun.png]($a-$size-corun.png)"
        echo
      done ;;
    cpf)
      if [[ $configs == *"{profile}"* ]]; then
        for size in $sizes; do
          echo "## corun profile, $size"
          echo
          sed -n '/^| layout/,/^$/p' "$work/profile-$size.out"
          echo "profile: \`$(grep '^layout=' "$work/profile-$size.txt")\`"
          echo
        done
      fi
      echo "## Traces of the best and the worst configuration"
      echo
      for f in "$artifacts"-*.png; do echo "- [$(basename "$f")]($(basename "$f")) ($(basename "${f%.png}.trace.json"))"; done ;;
  esac
}

case "$preset" in
  corun) trace_concurrency ;;
  cpf) trace_extremes ;;
esac
{
  summarize
  sections
} >"$out"
cat "$out"
echo "[bench] wrote $out" >&2
