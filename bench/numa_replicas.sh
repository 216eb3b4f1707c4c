#!/usr/bin/env bash
# Benchmark (issue 7, docs/numa.md): NUMA-Caffe's replicas on StarPU.
#
#  1. Remote bytes per iteration of CIFAR-quick (batch 64) and LSTM medium, replicate vs off (NUMA-oblivious)
#     vs interleave, on a 4-domain hwloc synthetic topology (8 workers on this machine's cores; remote bytes
#     come from the placement, so a fake topology gives the real numbers of a 4-socket machine with the same
#     core counts). Needs StarPU with STARPU_MAXNUMANODES >= 4: the source build (scripts/setup.sh source).
#  2. Real ms/iteration on this machine with 1 and 2 replicas (medians of --repeats runs, the first
#     iteration of each run left out), under the exclusive noise lock when /tmp/corun-quiet.lock exists.
#  3. perf stat -e node-load-misses around one run when the machine's PMU supports it (says so when not).
#
# Run it outside the noise lock (it takes the lock itself, per run).
#
#   bench/numa_replicas.sh [--source-build DIR] [--build DIR] [--iters 4] [--timed-iters 12] [--repeats 3]
#                          [--remote-models "cifar-quick lstm-medium"] [--out FILE]
#
# --repeats 0 leaves parts 2 and 3 out. Models: cifar-quick (batch 64), lstm-medium (batch 64), and
# cifar-quick-b256 (batch 256: the reduction traffic stays, the activations grow).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
source_build="$root/build/source"
build=
iters=4
timed_iters=12
repeats=3
remote_models="cifar-quick lstm-medium"
out=
while (($#)); do
  case "$1" in
    --source-build) source_build=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --timed-iters) timed_iters=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --remote-models) remote_models=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--source-build DIR] [--build DIR] [--iters N] [--timed-iters N] [--repeats R] [--out FILE]" >&2
       exit 2 ;;
  esac
done
bench_lstm_prepare numa-replicas
source_corun="$source_build/cli/corun"
[[ -x "$source_corun" ]] || { echo "error: $source_corun not found (scripts/setup.sh source)" >&2; exit 1; }
synthetic="pack:4 numa:1 core:2 pu:1"

model_args() {  # $1 = model: the `corun train` arguments
  case "$1" in
    cifar-quick) echo "--model cifar-quick --eval-images 100" ;;
    cifar-quick-b256) echo "--model cifar-quick --eval-images 100 --batch 256" ;;
    lstm-medium) echo "--model lstm --size medium" ;;
    *) echo "error: unknown model $1" >&2; exit 2 ;;
  esac
}

# The noise protocol: timed runs hold the lock exclusively, the rest shares it (run this script outside it).
lock=()
shared=()
if [[ -e /tmp/corun-quiet.lock ]]; then
  lock=(flock -x /tmp/corun-quiet.lock)
  shared=(flock -s /tmp/corun-quiet.lock)
fi

# 1. Remote bytes on the fake 4-domain machine (not timed: the shared lock is enough).
for m in $remote_models; do
  for mode in replicate off interleave; do
    echo "[bench] remote bytes: model=$m CORUN_NUMA=$mode on $synthetic" >&2
    # shellcheck disable=SC2046
    "${shared[@]}" env CORUN_QUIET=1 CORUN_SCHED=eager HWLOC_SYNTHETIC="$synthetic" STARPU_NCPU=8 CORUN_NUMA="$mode" \
      "$source_corun" train $(model_args "$m") --iters "$iters" --json "$work/remote.$m.$mode.json" \
      > "$work/remote.$m.$mode.out" 2>&1 || { echo "[bench] failed: $m $mode" >&2; cat "$work/remote.$m.$mode.out" >&2; exit 1; }
  done
done

# 2. ms/iteration on this machine, 1 and 2 replicas, runs interleaved.
for r in $(seq 1 "$repeats"); do
  for m in cifar-quick lstm-medium; do
    for n in 1 2; do
      echo "[bench] timing: repeat $r/$repeats model=$m CORUN_REPLICAS=$n" >&2
      # shellcheck disable=SC2046
      "${lock[@]}" env CORUN_QUIET=1 CORUN_SCHED=lws CORUN_REPLICAS="$n" "$corun" train $(model_args "$m") \
        --iters "$timed_iters" --json "$work/time.$m.$n.$r.json" > "$work/time.$m.$n.$r.out" 2>&1 ||
        { echo "[bench] failed: $m $n" >&2; cat "$work/time.$m.$n.$r.out" >&2; exit 1; }
    done
  done
done

# 3. node-load-misses (hardware: loads that missed the local node's memory).
perf_note="perf stat -e node-load-misses: perf is not installed"
if ((repeats == 0)); then
  perf_note="ms/iteration and perf stat: not run (--repeats 0)"
elif command -v perf > /dev/null; then
  if perf stat -x, -e node-load-misses true 2> "$work/perf.probe" > /dev/null && ! grep -q "not supported" "$work/perf.probe"; then
    perf_note="perf stat -e node-load-misses (CIFAR-quick, $timed_iters iterations):"
    for n in 1 2; do
      "${lock[@]}" env CORUN_QUIET=1 CORUN_SCHED=lws CORUN_REPLICAS="$n" perf stat -x, -e node-load-misses \
        -o "$work/perf.$n.txt" "$corun" train --model cifar-quick --eval-images 100 --iters "$timed_iters" > /dev/null 2>&1
      perf_note+=" $n replica(s): $(grep node-load-misses "$work/perf.$n.txt" | cut -d, -f1);"
    done
  else
    perf_note="perf stat -e node-load-misses: not supported on this machine (perf says: $(tr '\n' ' ' < "$work/perf.probe" | sed 's/  */ /g' | cut -c1-160)); a VM without an exposed uncore/NUMA PMU"
  fi
fi

PYTHONPATH="$here" python3 - "$work" "$repeats" "$(bench_git_sha)" "$(bench_corun_info "$corun")" "$synthetic" "$perf_note" \
  "bench/numa_replicas.sh --iters $iters --timed-iters $timed_iters --repeats $repeats --remote-models \"$remote_models\"" \
  "$remote_models" > "$out" <<'PY'
import json, statistics, sys
work, repeats, git, info, synthetic, perf_note, command, remote_models = sys.argv[1:9]
from benchlib import machine_header
models = remote_models.split()
timed = ["cifar-quick", "lstm-medium"] if int(repeats) > 0 else []
load = lambda p: json.load(open(f"{work}/{p}.json"))
src = load(f"remote.{models[0]}.off")
first = load("time.cifar-quick.1.1") if timed else src
print(machine_header("NUMA replicas (issue 7): remote bytes and ms/iteration", command, git, first["machine"],
                     first["engine"], notes=[
                         f"remote bytes: source-built StarPU {src['engine']['starpu_version']} (STARPU_MAXNUMANODES "
                         f"{src['engine']['starpu_maxnumanodes']}) on HWLOC_SYNTHETIC=\"{synthetic}\" with STARPU_NCPU=8, "
                         "policy eager; counted from the placement (home node of every tensor, the worker or replica "
                         "that read it), not from hardware counters; median over the iterations of one run",
                         "off: every tensor on the main thread's domain, a task's reads remote when its worker is on "
                         "another domain; interleave: (D-1)/D of every read; replicate: one replica per domain, "
                         "tensors on their replica's domain, so only the tree's gradient sums and the weight copies",
                         "ms/iteration: this machine (one NUMA domain), policy lws, CORUN_REPLICAS=1 and 2; the median "
                         f"of {repeats} runs' medians (first iteration of each run left out); each run under "
                         "`flock -x /tmp/corun-quiet.lock` (no other engineer's build or test running)",
                         perf_note][:None if timed else 2] + ([perf_note] if not timed else []), info=info))
print("## Remote bytes per iteration, 4 synthetic NUMA domains\n")
print("| model | batch | replicate | off (NUMA-oblivious) | interleave | replicate vs off | replicate vs interleave |")
print("|---|---:|---:|---:|---:|---:|---:|")
for m in models:
    r = {mode: load(f"remote.{m}.{mode}") for mode in ("replicate", "off", "interleave")}
    b = {k: v["summary"]["remote_bytes_per_iter"] for k, v in r.items()}
    assert r["replicate"]["engine"]["replicas"] == 4, r["replicate"]["engine"]
    mb = lambda x: f"{x / 1e6:.2f} MB"
    print(f"| {m} | {r['off']['config']['batch']} | {mb(b['replicate'])} | {mb(b['off'])} | {mb(b['interleave'])} | "
          f"{100 * (1 - b['replicate'] / b['off']):.1f}% fewer | {100 * (1 - b['replicate'] / b['interleave']):.1f}% fewer |")
print("\n(The modes train the same: final loss with replicate vs off: " + "; ".join(
    f"{m} {load(f'remote.{m}.replicate')['summary']['final_loss']:.4f} vs {load(f'remote.{m}.off')['summary']['final_loss']:.4f}"
    for m in models) + ")\n")
if not timed:
    sys.exit(0)
print("## ms/iteration on this machine (1 NUMA domain, 2 cores)\n")
print("| model | replicas | median ms/iter | runs' medians | tasks/iter | final loss |")
print("|---|---:|---:|---|---:|---:|")
for m in timed:
    for n in (1, 2):
        runs = [load(f"time.{m}.{n}.{r}") for r in range(1, int(repeats) + 1)]
        meds = [x["summary"]["median_ms"] for x in runs]
        print(f"| {m} | {n} | {statistics.median(meds):.1f} | {', '.join(f'{v:.1f}' for v in meds)} | "
              f"{runs[0]['summary']['tasks_per_iter']} | {runs[0]['summary']['final_loss']:.4f} |")
PY
cat "$out"
echo "[bench] wrote $out" >&2
