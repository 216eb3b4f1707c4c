#!/usr/bin/env bash
# Benchmark (issue 5, wide&deep and PhasedLSTM): side by side on one machine, runs interleaved.
#   1. wide&deep batch-1 inference latency (`corun infer`), parallel-op pass on and off, per policy, and on
#      the inline path (`corun infer --exec inline`: every kernel on the calling thread, no StarPU);
#   2. wide&deep training ms/iteration (batch 256, bench/wide_deep_train), pass on and off, per policy;
#   3. PhasedLSTM small training ms/iteration (`corun train --model phased-lstm --size small`), per policy.
#
#   bench/zoo_models.sh [--repeats 3] [--infer-iters 2000] [--train-iters 12] [--lstm-iters 6] [--build DIR] [--out FILE]
#
# Policies: sequential (cpf, one executor of all cores, every op at full width), cpf, corun and the StarPU
# built-ins lws, eager, dmdas, pheft (the table marks the best built-in). Each cell is the median over the
# repeats of each run's own median (first iteration excluded). Not a test.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

repeats=3
infer_iters=2000
train_iters=12
lstm_iters=6
configs="sequential cpf corun lws eager dmdas pheft"
build=
out=
while (($#)); do
  case "$1" in
    --repeats) repeats=$2; shift 2 ;;
    --infer-iters) infer_iters=$2; shift 2 ;;
    --train-iters) train_iters=$2; shift 2 ;;
    --lstm-iters) lstm_iters=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--repeats R] [--infer-iters N] [--train-iters N] [--lstm-iters N] [--configs C] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
bench_lstm_prepare zoo-models
unset CORUN_PARALLEL_OPS CORUN_PARALLEL_OPS_MIN
trainer="$build/bench/wide_deep_train"
[[ -x "$trainer" ]] || { echo "error: $trainer not found (build the wide_deep_train target)" >&2; exit 1; }

config_env() {  # $1 = config: NAME=value words for env(1)
  case "$1" in
    sequential) echo "CORUN_SCHED=cpf CORUN_EXECUTORS=1x$cores CORUN_FIXED_WIDTH=$cores" ;;
    *) echo "CORUN_SCHED=$1" ;;
  esac
}

results="$work/results.txt"  # lines: section config pass repeat value tasks
: > "$results"
for r in $(seq 1 "$repeats"); do
  for pass in on off; do
    echo "[bench] repeat $r/$repeats exec=inline pass=$pass: inference" >&2
    line=$(env CORUN_QUIET=1 CORUN_PARALLEL_OPS=$pass "$corun" infer --model wide-deep --exec inline \
      --iters "$infer_iters" 2>/dev/null | grep '^| wide-deep' || true)
    [[ -n "$line" ]] && echo "infer inline $pass $r $(awk -F'|' '{ gsub(/ /, ""); print $5, $8, $6 }' <<<"$line")" >> "$results"
  done
  for c in $configs; do
    for pass in on off; do
      echo "[bench] repeat $r/$repeats config=$c pass=$pass: inference" >&2
      # shellcheck disable=SC2046
      line=$(env CORUN_QUIET=1 CORUN_PARALLEL_OPS=$pass $(config_env "$c") "$corun" infer --model wide-deep \
        --iters "$infer_iters" 2>/dev/null | grep '^| wide-deep' || true)
      [[ -n "$line" ]] && echo "infer $c $pass $r $(awk -F'|' '{ gsub(/ /, ""); print $5, $8, $6 }' <<<"$line")" >> "$results"
      echo "[bench] repeat $r/$repeats config=$c pass=$pass: training" >&2
      # shellcheck disable=SC2046
      line=$(env CORUN_QUIET=1 CORUN_PARALLEL_OPS=$pass $(config_env "$c") "$trainer" "$train_iters" 2>/dev/null || true)
      [[ -n "$line" ]] && echo "train $c $pass $r $(awk '{ print $1, $2, $4 }' <<<"$line")" >> "$results"
    done
    echo "[bench] repeat $r/$repeats config=$c: phased-lstm" >&2
    # shellcheck disable=SC2046
    line=$(env CORUN_QUIET=1 $(config_env "$c") "$corun" train --model phased-lstm --size small --iters "$lstm_iters" \
      2>/dev/null | grep "^| $lstm_iters " || true)
    [[ -n "$line" ]] && echo "phased $c - $r $(awk -F'|' '{ gsub(/ /, ""); print $3, $5, $9 }' <<<"$line")" >> "$results"
  done
done

python3 - "$results" "$configs" > "$out" <<PY
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
configs = sys.argv[2].split()
builtins = [c for c in configs if c not in ("sequential", "cpf", "corun")]
def cell(section, config, p):
    v = [float(r[4]) for r in rows if r[0] == section and r[1] == config and r[2] == p]
    t = [r[5] for r in rows if r[0] == section and r[1] == config and r[2] == p]
    return (statistics.median(v), min(v), max(v), t[0]) if v else None
def fmt(c, unit):
    return "n/a" if c is None else f"{c[0]:.1f} ({c[1]:.1f}-{c[2]:.1f})" if unit == "us" else f"{c[0]:.2f} ({c[1]:.2f}-{c[2]:.2f})"
def best_builtin(section, p):
    cs = [(cell(section, b, p), b) for b in builtins if cell(section, b, p)]
    return min(cs)[1] if cs else None
print("# Model zoo (issue 5): wide&deep inference and training, PhasedLSTM training")
print()
print("- command: \`bench/zoo_models.sh --repeats $repeats --infer-iters $infer_iters --train-iters $train_iters --lstm-iters $lstm_iters --configs \"$configs\"\`")
print("- git: $(bench_git_sha)")
print("- timed under an exclusive lock that keeps the other engineers' builds and tests on this shared VM waiting (flock -x /tmp/corun-quiet.lock)")
print("- each cell: median over $repeats interleaved runs of each run's own median (min-max of the runs in brackets); first iteration of each run excluded")
print("- sequential = CORUN_SCHED=cpf with one executor of all $cores cores and every op at full width; cpf = one executor per core; corun = co-run packing (its width search runs in the first iterations of each process); the rest are StarPU built-ins, best one marked *")
print("- parallel-op pass: CORUN_PARALLEL_OPS=on|off (graphs/passes/group_parallel_ops)")
print("- inline (inference only) = \`corun infer --exec inline\`: the calling thread runs every node's fast kernel in order at width 1, no StarPU task (corun/inline.hpp); its tasks column counts the nodes run")
print()
print("<details><summary>corun info</summary>")
print()
print("\`\`\`")
print("""$(bench_corun_info "$corun")""")
print("\`\`\`")
print()
print("</details>")
print()
for section, title, unit in (("infer", "wide&deep batch-1 inference latency, us per inference ($infer_iters inferences per run)", "us"),
                             ("train", "wide&deep training, batch 256, ms per iteration ($train_iters iterations per run)", "ms")):
    print(f"## {title}")
    print()
    print("| config | pass on | pass off | off / on | tasks on | tasks off |")
    print("|---|---:|---:|---:|---:|---:|")
    bb = best_builtin(section, "on")
    for c in configs + (["inline"] if section == "infer" else []):
        on, off = cell(section, c, "on"), cell(section, c, "off")
        ratio = f"{off[0] / on[0]:.2f}" if on and off else "n/a"
        mark = " *" if c == bb else ""
        print(f"| {c}{mark} | {fmt(on, unit)} | {fmt(off, unit)} | {ratio} | {on[3] if on else 'n/a'} | {off[3] if off else 'n/a'} |")
    print()
print("## PhasedLSTM small training (4 layers, seq 20, hidden 128, batch 64), ms per iteration ($lstm_iters iterations per run)")
print()
print("| config | ms/iter | tasks/iter | final loss (last run) |")
print("|---|---:|---:|---:|")
bb = best_builtin("phased", "-")
for c in configs:
    v = cell("phased", c, "-")
    loss = [r[6] for r in rows if r[0] == "phased" and r[1] == c]
    print(f"| {c}{' *' if c == bb else ''} | {fmt(v, 'ms')} | {v[3] if v else 'n/a'} | {loss[-1] if loss else 'n/a'} |")
print()
PY
cat "$out"
echo "[bench] wrote $out" >&2
