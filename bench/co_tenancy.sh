#!/usr/bin/env bash
# Benchmark (issue 21 item 7): training under co-tenancy. PathNet small and LSTM small under lws, cpf, corun
# and dmdas in up to four conditions: alone; with a second identical training (same model and policy) running at
# the same time on the same cores (pair); with two more (trio); with a busy process pinned to the first CPU
# (busy: taskset -c of a spin loop).
# Ratios are against lws in the same condition; the goal is every policy within 1.1x of lws.
#
#   bench/co_tenancy.sh [--models "pathnet lstm"] [--configs "lws cpf corun dmdas"] [--iters 8] [--repeats 3]
#                       [--conditions "alone pair trio busy"] [--note TEXT] [--build DIR] [--out FILE]
#
# A config is a policy name, optionally with environment settings for it after colons, e.g.
# "corun:CORUN_IDLE_NAPS=off" (the same build with a knob changed; the co-tenant gets them too).
# Runs are interleaved (repeat r of every cell before repeat r+1); each (model, policy) first runs once alone,
# unrecorded, so that its StarPU history models are calibrated before anything is timed. Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

models="pathnet lstm"
configs="lws cpf corun dmdas"
conditions="alone pair trio busy"
iters=8
repeats=3
build=
out=
notes=()
while (($#)); do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --conditions) conditions=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --note) notes+=(--note "$2"); shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--models M] [--configs C] [--conditions C] [--iters N] [--repeats R] [--note T] [--build DIR] [--out FILE]" >&2
       exit 2 ;;
  esac
done
for cond in $conditions; do
  case "$cond" in alone|pair|trio|busy) ;; *) echo "error: unknown condition '$cond' (alone, pair, trio, busy)" >&2; exit 2 ;; esac
done
command -v taskset >/dev/null || { echo "error: taskset is needed for the busy condition (util-linux)" >&2; exit 1; }
bench_lstm_prepare co-tenancy
unset CORUN_COTENANCY
first_cpu=$(taskset -cp $$ | sed 's/.*: //; s/[-,].*//')

model_args() {  # $1 = model: the `corun train` arguments
  case "$1" in
    pathnet) echo "--model pathnet --size small" ;;
    lstm) echo "--model lstm --size small" ;;
    *) echo "error: unknown model $1" >&2; exit 2 ;;
  esac
}

bg=()
stop_bg() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done
  bg=()
}
trap 'stop_bg; rm -rf "$work"' EXIT

# $1 model, $2 config (policy[:VAR=VALUE...]), $3 condition, $4 json path (empty: not recorded)
run_one() {
  local m=$1 cond=$3 json=$4
  local c=${2%%:*} extra=()
  [[ "$2" == *:* ]] && IFS=: read -r -a extra <<<"${2#*:}"
  local others=0
  case "$cond" in pair) others=1 ;; trio) others=2 ;; esac
  for k in $(seq 1 "$others"); do
    # The same training, long enough to cover the timed one, in its own directory.
    mkdir -p "$work/bg$k"
    # shellcheck disable=SC2046
    (cd "$work/bg$k" && exec env CORUN_QUIET=1 CORUN_SCHED="$c" "${extra[@]}" "$corun" train $(model_args "$m") \
      --iters 100000 >/dev/null 2>"$work/bg$k.err") &
    bg+=($!)
  done
  if ((others > 0)); then
    sleep 2  # past their start-up, into their iterations
    # A co-tenant that died at start would make "pair" a second "alone" run without a word.
    for k in $(seq 1 "$others"); do
      kill -0 "${bg[k - 1]}" 2>/dev/null ||
        { echo "error: co-tenant training $k ($m, $c) did not keep running: $(tail -1 "$work/bg$k.err")" >&2; exit 1; }
    done
  fi
  case "$cond" in
    busy)
      taskset -c "$first_cpu" sh -c 'while :; do :; done' &
      bg+=($!) ;;
  esac
  # shellcheck disable=SC2046
  env CORUN_QUIET=1 CORUN_SCHED="$c" "${extra[@]}" "$corun" train $(model_args "$m") --iters "$iters" \
    ${json:+--json "$json"} >/dev/null 2>"$work/last.err" || echo "[bench] failed: $m $c $cond: $(tail -1 "$work/last.err")" >&2
  stop_bg
}

load_start=$(bench_load)
for m in $models; do
  for c in $configs; do
    echo "[bench] calibrating model=$m config=$c" >&2
    run_one "$m" "$c" alone ""
  done
done
for r in $(seq 1 "$repeats"); do
  for m in $models; do
    for cond in $conditions; do
      for c in $configs; do
        echo "[bench] repeat $r/$repeats model=$m condition=$cond config=$c" >&2
        run_one "$m" "$c" "$cond" "$work/$m.$c.$cond.$r.json"
      done
    done
  done
done

{
  python3 "$here/summarize_co_tenancy.py" --dir "$work" --models "$models" --configs "$configs" \
    --conditions "$conditions" --repeats "$repeats" --info "$(bench_corun_info "$corun")" --git "$(bench_git_sha)" \
    --command "bench/co_tenancy.sh --models \"$models\" --configs \"$configs\" --conditions \"$conditions\" --iters $iters --repeats $repeats" \
    --note "alone: nothing else started by the benchmark; pair: a second identical training (same model and policy) runs at the same time; trio: two more; busy: a spin loop pinned to cpu $first_cpu (taskset -c)" \
    --note "corun's policies narrow their teams while they measure teams waiting on busy cores (CORUN_COTENANCY=auto, the default: docs/testing.md#bad-inputs)" \
    --note "$(bench_load_note "$load_start" "$(bench_load)")" \
    "${notes[@]}"
} > "$out"
cat "$out"
