#!/usr/bin/env bash
# bench/simulate_scaling.sh — every policy at 2..128 simulated cores, per model, under both scaling laws
# (docs/simulation.md, issue 17). Needs a native build and build/simgrid (scripts/setup.sh simgrid).
#
#   bench/simulate_scaling.sh [--build DIR] [--models "lstm:small pathnet:small ..."] [--policies "..."]
#                             [--cores "2 8 16 32 64 128"] [--laws "optimistic pessimistic"] [--iters N]
#                             [--validate] [--repeats N] [--measured-dir DIR] [--ignore-width2] [--numa "1 2 4"]
#                             [--gantt "lstm:small pathnet:small ..."] [--gantt-cores 64] [--keep-models DIR]
#                             [--onnx-batch 16] [--image-size 64] [--python PY] [-o FILE]
#
# A model is "<built-in model>:<size>" (cifar-quick and wide-deep: any size) or "onnx:<name>", a classifier of
# scripts/export-onnx.py (resnet50, inception_v3, googlenet, ...; needs python3-torch): exported here with random
# weights at --image-size px (Inception-v3 at 128 px at least) and trained by `corun train --onnx` at
# --onnx-batch (softmax cross-entropy, SGD with momentum), as bench/onnx_models.sh does natively.
#
# 1. Calibrates each model natively, in a private STARPU_HOME: lws with STARPU_CALIBRATE=1 (every op at
#    width 1) and cpf with one executor of all cores (every op at width 2 on this 2-core machine).
#    --measured-dir DIR skips this and uses models calibrated before (a STARPU_PERF_MODEL_DIR).
# 2. --validate: measured vs simulated (2c-1numa, optimistic law: it reproduces the measured widths)
#    median ms/iteration per model and policy on this machine. The measured side is the median of
#    --repeats native runs (default 3; one run is noisier than the error sought), with their spread
#    ((max - min) / median); the simulated side is one run (deterministic for given models). Each of the
#    --repeats rounds calibrates the model once more (appending to its history) and then measures every
#    policy once, so the models average over the same minutes as the measured runs. The table ends with
#    the median and worst |error| over the cells that ran.
# 3. Per law, core count, model and policy: `corun simulate --machine machines/<c>c-1numa.json` (2 cores:
#    2c-1numa), median ms/iteration and makespan / lower bound of the last iteration. "sequential" is one
#    op at a time at full width: cpf with one executor of all cores (CORUN_EXECUTORS=1x<c>).
#    --numa "1 2 4": every core count that has machines/<c>c-<n>numa.json is run once per NUMA layout
#    (NUMA acts through the pessimistic law only: docs/simulation.md); default 1.
# 4. --gantt MODELS: for each, the corun policy's last iteration at --gantt-cores (default 64) simulated
#    cores under the first law, drawn by `corun plot-trace` next to FILE (<FILE stem>-<model>-corun.png).
# 5. --keep-models DIR: copies the measured models (codelets/45/corun_*) to DIR, so the tables can be redone.
# Tables go to stdout and to FILE (default bench/results/simulate-scaling-<date>.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$root/bench/lib.sh"

build=
models="lstm:small lstm:medium pathnet:small googlenet:small cifar-quick:small wide-deep:small"
policies="lws dmdas pheft cpf corun sequential"
cores_list="2 8 16 32 64 128"
laws="optimistic pessimistic"
iters=6
validate=0
repeats=3
measured_dir=
ignore_width2=
numa_list="1"
gantt=
gantt_cores=64
keep_models=
onnx_batch=16
image_size=64
torch_py=
out=
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --cores) cores_list=$2; shift 2 ;;
    --laws) laws=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --validate) validate=1; shift ;;
    --repeats) repeats=$2; shift 2 ;;
    --measured-dir) measured_dir=$2; shift 2 ;;
    --ignore-width2) ignore_width2=--ignore-width2; shift ;;
    --numa) numa_list=$2; shift 2 ;;
    --gantt) gantt=$2; shift 2 ;;
    --gantt-cores) gantt_cores=$2; shift 2 ;;
    --keep-models) keep_models=$2; shift 2 ;;
    --onnx-batch) onnx_batch=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --python) torch_py=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    *) echo "simulate_scaling.sh: unknown argument '$1' (see the header of this script)" >&2; exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
simgrid_corun="$root/build/simgrid/cli/corun"
[[ -x "$simgrid_corun" ]] || { echo "simulate_scaling.sh: no $simgrid_corun: run scripts/setup.sh simgrid" >&2; exit 1; }
out=${out:-$root/bench/results/simulate-scaling-$(date +%Y%m%d-%H%M%S).md}
work=$(mktemp -d /tmp/corun-simscale-XXXXXX)
trap 'rm -rf "$work"' EXIT
unset STARPU_PERF_MODEL_DIR STARPU_SCHED CORUN_SCHED CORUN_EXECUTORS CORUN_PROFILE STARPU_NCPU STARPU_HOSTNAME
calibrate=1
if [[ -n "$measured_dir" ]]; then
  calibrate=0
  export STARPU_PERF_MODEL_DIR="$measured_dir"
else
  measured_dir="$work/models"  # models calibrate from scratch, private to this run
  export STARPU_PERF_MODEL_DIR="$measured_dir"
fi

# ONNX models: exported once into $work (Debian's python3-torch lives in the system Python; a python3 earlier in
# PATH, pyenv or a venv, lacks it).
onnx_image_size() {  # Inception-v3's minimum input is 75 px; bench/onnx_models.sh runs it at 128 at least
  case "$1" in
    inception_v3) echo $((image_size < 128 ? 128 : image_size)) ;;
    *) echo "$image_size" ;;
  esac
}
for m in $models $gantt; do
  [[ "$m" == onnx:* ]] || continue
  name=${m#onnx:}
  [[ -f "$work/$name.onnx" ]] && continue
  if [[ -z "$torch_py" ]]; then
    torch_py=/usr/bin/python3
    [[ -x "$torch_py" ]] || torch_py=python3
  fi
  echo "simulate_scaling: exporting $name ($(onnx_image_size "$name") px)" >&2
  "$torch_py" "$root/scripts/export-onnx.py" --model "$name" --out "$work/$name.onnx" --dynamic-batch \
    --image-size "$(onnx_image_size "$name")" >/dev/null 2>"$work/export.err" ||
    { echo "simulate_scaling.sh: exporting '$name' failed:" >&2; cat "$work/export.err" >&2; exit 1; }
done

# `corun train` args of "model:size" (cifar-quick and wide-deep have one size: no --size) or "onnx:name".
train_args() {
  case "${1%%:*}" in
    onnx) echo "--onnx $work/${1#onnx:}.onnx --batch $onnx_batch" ;;
    cifar-quick) echo "--model cifar-quick --eval-images 0" ;;  # no evaluation: it runs once per run, never calibrated
    wide-deep) echo "--model wide-deep" ;;
    *) echo "--model ${1%%:*} --size ${1##*:}" ;;
  esac
}
# Median ms/iter from a train results table (5th-from-last row layout: | iters | median | min | ...).
median_ms() { awk -F'|' '/^\| [0-9]+ \|/ { gsub(/ /, "", $3); print $3 }' | tail -n 1; }
# "ratio R" of the "last iteration: makespan ... ratio R" line.
ratio() { sed -n 's/.*ratio \([0-9.]*\).*/\1/p' | tail -n 1; }
# Environment of one policy column at $1 cores.
policy_env() {
  case "$2" in
    sequential) echo "CORUN_SCHED=cpf CORUN_EXECUTORS=1x$1" ;;
    *) echo "CORUN_SCHED=$2" ;;
  esac
}

{
  echo "# Simulated scaling ($(date -u +%Y-%m-%dT%H:%MZ), git $(bench_git_sha))"
  echo
  echo "Models measured on this machine ($(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p'); load average"
  echo "(1/5/15 min) at the start $(bench_load): on the shared VM above 2 means other jobs ran while measuring),"
  echo "scaled by the named law of docs/simulation.md (model source (b)); machines/<c>c-1numa.json. $iters"
  echo "iterations, median ms/iteration (simulated) and makespan / lower bound of the last iteration."
  case " $models " in
    *" onnx:"*) echo "ONNX models (onnx:<name>): scripts/export-onnx.py, random weights, ${image_size} px (Inception-v3 at"
                echo "$(onnx_image_size inception_v3) px), \`corun train --onnx\` at batch $onnx_batch." ;;
  esac
  echo
  echo '```'
  bench_corun_info "$corun"
  echo '```'
  echo
} | tee "$out"

cores_here=$(nproc)
calibrate_model() {
  # shellcheck disable=SC2046
  STARPU_CALIBRATE=1 STARPU_HISTORY_MAX_ERROR=100000 CORUN_SCHED=lws "$corun" train $(train_args "$1") --iters 12 >/dev/null 2>&1
  # shellcheck disable=SC2046
  STARPU_CALIBRATE=1 STARPU_HISTORY_MAX_ERROR=100000 CORUN_SCHED=cpf CORUN_EXECUTORS=1x"$cores_here" \
    "$corun" train $(train_args "$1") --iters 12 >/dev/null 2>&1
}
# --validate calibrates inside its rounds instead (below): the shared VM's speed drifts over minutes.
if ((calibrate && !validate)); then
  for m in $models; do calibrate_model "$m"; done
fi

if ((validate)); then
  echo "## Validation on this machine: measured vs simulated (2c-1numa, optimistic law)" | tee -a "$out"
  echo | tee -a "$out"
  echo "Measured: median of $repeats native runs (spread = (max - min) / median of the runs), each after one more calibration run of the model; simulated: one run of the models calibrated over those rounds." | tee -a "$out"
  echo | tee -a "$out"
  echo "| model | policy | measured ms/iter | spread | simulated ms/iter | error |" | tee -a "$out"
  echo "|---|---|---:|---:|---:|---:|" | tee -a "$out"
  errors=()
  for m in $models; do
    # Round r: one calibration run (appended to the model's history), then one measured run per policy. The
    # models are then the mean over the same minutes as the measured medians: on the shared VM one op's time
    # drifts by 2x between runs minutes apart (wide&deep's sgd 42-77 µs, its concat 65-237 µs, width 1 alone),
    # and a single calibration run of wide&deep (36 ms of tasks) caught one phase of that drift for every op.
    declare -A runs=()
    for ((r = 0; r < repeats; ++r)); do
      ((calibrate)) && calibrate_model "$m"
      for p in $policies; do
        # shellcheck disable=SC2046
        # `|| true`: one failed run is a "failed" cell, not the end of the table (set -e, pipefail).
        v=$(env $(policy_env "$cores_here" "$p") "$corun" train $(train_args "$m") --iters "$iters" 2>/dev/null | median_ms || true)
        [[ -n "$v" ]] && runs[$p]+="$v "
      done
    done
    for p in $policies; do
      meas=; spread=
      if [[ -n "${runs[$p]:-}" ]]; then
        # shellcheck disable=SC2086
        read -r meas spread < <(printf '%s\n' ${runs[$p]} | sort -g | awk '{ v[NR] = $1 } END {
          med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          printf "%.2f %.0f%%\n", med, 100 * (v[NR] - v[1]) / med }')
      fi
      # shellcheck disable=SC2046
      sim=$(env $(policy_env "$cores_here" "$p") "$corun" simulate --machine "$root/machines/2c-1numa.json" \
            --law optimistic --measured-dir "$measured_dir" --dir "$work/sim" -- train $(train_args "$m") \
            --iters "$iters" 2>/dev/null | median_ms || true)
      err=$(awk -v a="${meas:-0}" -v b="${sim:-0}" 'BEGIN { if (a > 0 && b > 0) printf "%+.1f%%", 100 * (b - a) / a; else print "n/a" }')
      [[ "$err" != n/a ]] && errors+=("${err%\%}")
      echo "| $m | $p | ${meas:-failed} | ${spread:-} | ${sim:-failed} | $err |" | tee -a "$out"
    done
  done
  echo | tee -a "$out"
  if ((${#errors[@]})); then
    printf '%s\n' "${errors[@]#[+-]}" | sort -g | awk '{ v[NR] = $1; if ($1 <= 5) ok++ } END {
      n = NR; med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      printf "Median |error| %.1f%% over %d cells (%d within 5%%), worst %.1f%%.\n", med, n, ok, v[n] }' | tee -a "$out"
    echo | tee -a "$out"
  fi
fi

if [[ -n "$keep_models" ]]; then
  mkdir -p "$keep_models"
  cp "$measured_dir"/codelets/45/corun_* "$keep_models"/
  echo "Models used (model source (b), measured here): $keep_models" | tee -a "$out"
  echo | tee -a "$out"
fi

# The machine files of a core count: "<c>c-<n>numa" for each NUMA layout that exists (2 cores: 2c-1numa).
machines_of() {
  local n
  for n in $numa_list; do [[ -f "$root/machines/${1}c-${n}numa.json" ]] && echo "${1}c-${n}numa"; done
}

for law in $laws; do
  for m in $models; do
    echo "## $m, $law law${ignore_width2:+ (width-2 times ignored)}: ms/iteration (makespan / lower bound)" | tee -a "$out"
    echo | tee -a "$out"
    header="| policy |"; rule="|---|"; columns=()
    for c in $cores_list; do
      for mach in $(machines_of "$c"); do
        columns+=("$mach"); header+=" ${mach%-1numa} |"; rule+="---:|"
      done
    done
    echo "$header" | tee -a "$out"; echo "$rule" | tee -a "$out"
    for p in $policies; do
      row="| $p |"
      for mach in "${columns[@]}"; do
        c=${mach%%c-*}
        # shellcheck disable=SC2046
        text=$(env $(policy_env "$c" "$p") "$corun" simulate --machine "$root/machines/$mach.json" --law "$law" \
               $ignore_width2 --measured-dir "$measured_dir" --dir "$work/sim" -- train $(train_args "$m") \
               --iters "$iters" 2>&1 || true)
        ms=$(median_ms <<<"$text"); r=$(ratio <<<"$text")
        row+=" ${ms:-failed}${r:+ ($r)} |"
      done
      echo "$row" | tee -a "$out"
    done
    echo | tee -a "$out"
  done
done

first_law=${laws%% *}
for m in $gantt; do
  png="${out%.md}-${m%%:*}-${m##*:}-corun-${gantt_cores}c.png"
  # shellcheck disable=SC2046
  if CORUN_SCHED=corun "$corun" simulate --machine "$root/machines/${gantt_cores}c-1numa.json" --law "$first_law" \
       $ignore_width2 --measured-dir "$measured_dir" --dir "$work/sim" -- train $(train_args "$m") --iters "$iters" \
       --trace "$work/gantt.json" >/dev/null 2>&1 && "$corun" plot-trace "$work/gantt.json" -o "$png" >/dev/null 2>&1; then
    echo "Gantt chart, $m, corun, ${gantt_cores} simulated cores, $first_law law: $(basename "$png")" | tee -a "$out"
  else
    echo "Gantt chart, $m: failed" | tee -a "$out"
  fi
done
echo "results: $out" >&2
