#!/usr/bin/env bash
# Benchmark: the input-projection pass (issue 18 item 2) on LSTM training, side by side in one run.
#
#   bench/lstm_input_projection.sh [--sizes "small medium"] [--policies "lws cpf corun"] [--iters 8]
#                                  [--repeats 3] [--quick] [--build DIR] [--out FILE] [--note TEXT]
#
# Every (size, policy, CORUN_INPUT_PROJECTION=off|auto|on) triple runs `corun train --model lstm` --repeats
# times, interleaved (repeat r of every triple before repeat r+1, so drift in the machine's load hits all
# alike). The table gives the median over repeats of each run's median ms/iter and the ratio to the pass
# off under the same policy (< 1: faster), the loss after the last iteration (equal within rounding), and
# tasks per iteration. Then bench/small_gemm's per-shape rates of OpenBLAS, oneDNN and libxsmm.
# --quick: small only, lws, 3 iterations, 1 repeat, the small_gemm --quick shapes (proves the script works).
# Not a test; numbers mean something only on a quiet machine (the header says when they were not).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

sizes="small medium"
policies="lws cpf corun"
iters=8
repeats=3
quick=0
build=
out=
note=
while (($#)); do
  case "$1" in
    --sizes) sizes=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --note) note=$2; shift 2 ;;
    *) echo "usage: $0 [--sizes S] [--policies P] [--iters N] [--repeats R] [--quick] [--build DIR] [--out FILE] [--note TEXT]" >&2
       exit 2 ;;
  esac
done
if ((quick)); then sizes=small policies=lws iters=3 repeats=1; fi
bench_lstm_prepare lstm-input-projection
modes="off auto on"
for r in $(seq 1 "$repeats"); do
  for size in $sizes; do
    for p in $policies; do
      for m in $modes; do
        echo "[bench] repeat $r/$repeats size=$size policy=$p input-projection=$m" >&2
        env -u STARPU_SCHED CORUN_QUIET=1 CORUN_SCHED="$p" CORUN_INPUT_PROJECTION="$m" "$corun" train --model lstm \
          --size "$size" --iters "$iters" --json "$work/$size.$p.$m.$r.json" >/dev/null
      done
    done
  done
done
gemm_flags=()
((quick)) && gemm_flags=(--quick)
gemm_bin="$build/bench/small_gemm"
[[ -x "$gemm_bin" ]] || { echo "error: $gemm_bin not found (build the small_gemm target)" >&2; exit 1; }
OMP_NUM_THREADS=1 "$gemm_bin" "${gemm_flags[@]}" > "$work/small_gemm.jsonl"

python3 - "$work" "$sizes" "$policies" "$modes" "$repeats" "$note" > "$out" <<'PY'
import json, statistics, sys
work, sizes, policies, modes, repeats, note = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split(), int(sys.argv[5]), sys.argv[6]
print("# LSTM training: the input-projection pass off / auto / on, and small-GEMM backends\n")
if note:
    print(f"{note}\n")
print(f"Medians over {repeats} interleaved repeat(s) of each run's median ms/iter; ratio to the pass off under the same policy.\n")
print("| size | policy | pass | ms/iter | vs off | tasks/iter | final loss |")
print("|---|---|---|---:|---:|---:|---:|")
for size in sizes:
    for p in policies:
        base = None
        for m in modes:
            runs = [json.load(open(f"{work}/{size}.{p}.{m}.{r}.json")) for r in range(1, repeats + 1)]
            ms = statistics.median(d["summary"]["median_ms"] for d in runs)
            base = ms if m == "off" else base
            s = runs[-1]["summary"]
            print(f"| {size} | {p} | {m} | {ms:.1f} | {ms / base:.2f} | {s.get('tasks_per_iter', '?')} | {runs[-1]['loss'][-1]:.6f} |")
print("\n## Per-step GEMM shapes, one thread (bench/small_gemm)\n")
print("| M | K | N | OpenBLAS GF/s | oneDNN / OpenBLAS | libxsmm / OpenBLAS |")
print("|---:|---:|---:|---:|---:|---:|")
for line in open(f"{work}/small_gemm.jsonl"):
    d = json.loads(line)
    b = d["openblas_gflops"]
    ratio = lambda k: "n/a" if d.get(k) is None else f"{d[k] / b:.2f}"
    print(f"| {d['m']} | {d['k']} | {d['n']} | {b:.1f} | {ratio('onednn_gflops')} | {ratio('libxsmm_gflops')} |")
PY
{ echo; echo '## Machine'; echo; echo '```'; bench_corun_info "$corun"; echo '```'; } >> "$out"
cat "$out"
echo "[bench] wrote $out" >&2
