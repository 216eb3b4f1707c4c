#!/usr/bin/env bash
# Benchmark (issue 20, docs/batch-jobs.md#several-nodes): `mpirun -np N corun train` on THIS machine.
#
# All ranks share this machine's cores (--oversubscribe, one StarPU worker each), so the numbers measure the
# overhead of running as N processes and of the StarPU-MPI reduction, NOT multi-node speed: N ranks do the
# work of one solver on the same cores, plus MPI. The table gives, per rank count:
#   - ms/step (median over the repeats of each run's median, first iteration left out);
#   - bytes of gradient sums rank 0 sent per step (exact, from RunStats::cross_rank_bytes; rank 0 sends the
#     total down to its children: one message per child and parameter);
#   - the same global batch in ONE process with N replicas (N workers), where N fits the cores: the same
#     arithmetic and the same reduction tree without MPI, so the difference is what the processes and
#     StarPU-MPI cost (with the reduction's time inside it; the transfers overlap the backward pass and
#     cannot be timed apart from it here).
#
#   bench/multinode.sh [--build DIR] [--ranks "1 2 4"] [--iters 12] [--repeats 3] [--model-args "..."] [--out FILE]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
build=
rank_counts="1 2 4"
iters=12
repeats=3
model_args="--model lstm --layers 2 --seq 16 --hidden 128 --batch 64"
out=
while (($#)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --ranks) rank_counts=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --model-args) model_args=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--ranks \"1 2 4\"] [--iters N] [--repeats R] [--model-args ARGS] [--out FILE]" >&2
       exit 2 ;;
  esac
done
command -v mpirun >/dev/null || { echo "error: mpirun not found (apt-get install openmpi-bin)" >&2; exit 1; }
bench_lstm_prepare multinode
mpirun=(mpirun --oversubscribe --allow-run-as-root -x CORUN_QUIET -x STARPU_NCPU -x STARPU_HOME -x STARPU_SILENT)
export CORUN_QUIET=1 STARPU_SILENT=1

# field FILE KEY: a number of the JSON result's summary.
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary'].get(sys.argv[2], 'nan'))" "$1" "$2"; }
median() { python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:] if x!='nan']; print('%.2f' % statistics.median(v) if v else 'n/a')" "$@"; }

# A warm-up run calibrates nothing here (lws), but loads the bus model once into STARPU_HOME.
# shellcheck disable=SC2086
STARPU_NCPU=1 "$corun" train $model_args --iters 2 >/dev/null 2>&1 || { echo "error: corun train $model_args failed" >&2; exit 1; }

declare -A ms bytes solo
for r in $(seq 1 "$repeats"); do
  for n in $rank_counts; do
    echo "[bench] repeat $r/$repeats: $n rank(s)" >&2
    json="$work/ranks$n.$r.json"
    if ((n == 1)); then
      # shellcheck disable=SC2086
      STARPU_NCPU=1 CORUN_NUMA=off "$corun" train $model_args --iters "$iters" --json "$json" >"$work/log" 2>&1
    else
      # shellcheck disable=SC2086
      STARPU_NCPU=1 "${mpirun[@]}" -np "$n" "$corun" train $model_args --iters "$iters" --json "$json" >"$work/log" 2>&1
    fi || { echo "[bench] failed: $n ranks" >&2; cat "$work/log" >&2; exit 1; }
    ms[$n]+=" $(field "$json" median_ms)"
    bytes[$n]=$(printf '%.0f' "$(field "$json" cross_rank_bytes_last_iter)")
    if ((n > 1 && n <= cores)); then
      json="$work/replicas$n.$r.json"
      # shellcheck disable=SC2086
      STARPU_NCPU=$n CORUN_NUMA=replicate CORUN_REPLICAS=$n "$corun" train $model_args --iters "$iters" --json "$json" \
        >"$work/log" 2>&1 || { echo "[bench] failed: $n replicas" >&2; cat "$work/log" >&2; exit 1; }
      solo[$n]+=" $(field "$json" median_ms)"
    fi
  done
done

{
  echo "# corun train over MPI ranks on one machine (bench/multinode.sh)"
  echo
  echo "Overhead, not speed: every rank runs on this machine's $cores core(s) (mpirun --oversubscribe, one"
  echo "StarPU worker per rank), so N ranks share the cores one process uses. \`$model_args\`, $iters iterations,"
  echo "medians of $repeats runs (each run's median, first iteration excluded). git $(bench_git_sha), $(date -u +%FT%TZ)."
  echo
  echo "| ranks | ms/step | bytes rank 0 sent per step | one process, same replicas, ms/step |"
  echo "|---:|---:|---:|---:|"
  for n in $rank_counts; do
    # shellcheck disable=SC2086
    one=$( ((n == 1)) && echo "(one solver)" || { [[ -n "${solo[$n]:-}" ]] && median ${solo[$n]} || echo "n/a (more replicas than cores)"; })
    # shellcheck disable=SC2086
    echo "| $n | $(median ${ms[$n]}) | $( ((n == 1)) && echo 0 || echo "${bytes[$n]}") | $one |"
  done
  echo
  echo "<details><summary>machine</summary>"
  echo
  echo '```'
  bench_corun_info "$corun"
  echo '```'
  echo "</details>"
} >"$out"
cat "$out"
