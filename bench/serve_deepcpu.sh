#!/usr/bin/env bash
# Benchmark: the DeepCPU Table 1 LSTM configurations (issue 6) for corun's serving runtime against two
# baselines written for it (corun serve-bench --impl): (a) `gemms`, per step one OpenBLAS GEMM per gate and
# input (8 for LSTM), (b) `fused`, per step one fused GEMM over [x_t, h_{t-1}] (TensorFlow/CNTK); both on
# multithreaded OpenBLAS with one thread per allocated core, without StarPU.
#
#   bench/serve_deepcpu.sh [--reps 3] [--configs "E,H,B,T ..."] [--build DIR] [--out FILE] [--note TEXT]
#
# corun plans each configuration first (calibration into a fresh plan cache, not timed); then --reps rounds,
# each running every configuration under the three implementations in turn (interleaved, so a noisy period
# hits all three), each run timing N requests after a warm-up (N from the request's flops: 10 to 300). The
# table gives the median over rounds of each run's median latency, the p99 of the best round, GFLOP/s and
# the ratios. L2 misses come from `perf stat` when the machine exposes hardware counters (checked, and said).
# Not a test; do not compile or run other jobs meanwhile.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

configs="64,64,1,100 256,64,1,100 1024,64,1,100 64,256,1,100 64,1024,1,100 1024,1024,1,100 256,256,1,1 \
256,256,1,10 256,256,1,100 64,64,10,100 256,256,10,100 256,256,20,100 1024,1024,10,100"
reps=3
build=
out=
note=
while (($#)); do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --note) note=$2; shift 2 ;;
    *) echo "usage: $0 [--reps R] [--configs \"E,H,B,T ...\"] [--build DIR] [--out FILE] [--note TEXT]" >&2; exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
[[ -x "$corun" ]] || { echo "error: $corun not found (build first)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/serve-deepcpu-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export STARPU_HOME="$work/starpu-home" CORUN_SERVE_PLANS="$work/plans" CORUN_QUIET=1
unset XDG_CACHE_HOME STARPU_SCHED CORUN_SCHED STARPU_NCPU OPENBLAS_NUM_THREADS

requests_for() {  # E H B T -> requests: about 3 GFLOP per run, 10 to 300 requests
  python3 -c "import sys; e,h,b,t=map(int,sys.argv[1:]); f=2*b*4*h*(e+h)*t; print(max(10, min(300, int(3e9/f))))" "$@"
}
run() {  # config impl round
  local e h b t
  IFS=, read -r e h b t <<<"$1"
  local n; n=$(requests_for "$e" "$h" "$b" "$t")
  "$corun" serve-bench --cell lstm --input "$e" --hidden "$h" --batch "$b" --seq "$t" --requests "$n" --impl "$2" \
    >"$work/$1.$2.$3.txt" 2>&1 || { echo "[bench] $1 $2 failed:"; cat "$work/$1.$2.$3.txt"; exit 1; } >&2
}

for c in $configs; do
  echo "[bench] planning $c" >&2
  run "$c" corun plan
done
for ((r = 1; r <= reps; ++r)); do
  for c in $configs; do
    for impl in corun fused gemms; do
      echo "[bench] round $r $c $impl" >&2
      run "$c" "$impl" "$r"
    done
  done
done

perf_note="L2 misses: not measured — \`perf stat -e cache-misses\` reports <not supported> (no hardware PMU in this VM)"
if perf stat -e cache-misses true 2>&1 | grep -q "not supported\|not counted\|parser error"; then :; elif command -v perf >/dev/null; then
  perf_note="L2 misses: perf works here; run \`perf stat -e cache-misses corun serve-bench ...\` per row (not automated yet)"
fi

python3 - "$work" "$out" "$reps" "$configs" "$corun" "$(bench_git_sha)" "$note" "$perf_note" <<'PY'
import os, re, statistics, subprocess, sys
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown CPU")
work, out, reps, configs, corun, git, note, perf_note = sys.argv[1:9]
reps = int(reps)
lat = re.compile(r"latency: median ([0-9.]+) ms p99 ([0-9.]+) ms over (\d+) requests; ([0-9.]+) GFLOP/s")
def parse(c, impl, r):
    text = open(f"{work}/{c}.{impl}.{r}.txt").read()
    m = lat.search(text)
    plan = re.search(r"^plan: (.*)$", text, re.M).group(1)
    return float(m.group(1)), float(m.group(2)), int(m.group(3)), plan
info = subprocess.run([corun, "info"], capture_output=True, text=True).stdout
l2_total = 2 * 1024 * 1024  # unless `corun info`'s topology line says otherwise ("2x L2 1 MiB")
m = re.search(r"(\d+)x L2 (\d+) (KiB|MiB)", info)
if m:
    l2_total = int(m.group(1)) * int(m.group(2)) * (1024 if m.group(3) == "KiB" else 1024 * 1024)
rows = []
for c in configs.split():
    e, h, b, t = map(int, c.split(","))
    flops = 2 * b * 4 * h * (e + h) * t
    w_bytes = 4 * 4 * h * (e + h)
    res = {}
    for impl in ("corun", "fused", "gemms"):
        runs = [parse(c, impl, r) for r in range(1, reps + 1)]
        med = statistics.median(x[0] for x in runs)
        best = min(runs, key=lambda x: x[0])
        res[impl] = (med, best[1], runs[0][2], runs[0][3])
    plan = parse(c, "corun", "plan")[3]
    rows.append((c, flops, w_bytes, res, plan))
lines = [f"# corun serve-bench: DeepCPU Table 1 LSTM configurations\n",
         f"- command: `bench/serve_deepcpu.sh --reps {reps}`",
         f"- git: {git}",
         f"- cpu: {os.cpu_count()} x {cpu_model} (nproc {os.cpu_count()}); StarPU, its caps and the BLAS core type: `corun info` below",
         "- machine: the `corun info` below; the load at the time is in the note (medians of interleaved rounds; "
         "read ratios, not absolute times)",
         f"- baselines: OpenBLAS with one thread per allocated core, no StarPU; corun: StarPU workers, OpenBLAS 1 thread",
         f"- weights fit L2: 4H(E+H) x 4 bytes <= {l2_total // 1024} KiB (the private L2s taken together)",
         f"- {perf_note}"]
if note:
    lines.append(f"- note: {note}")
lines.append("\n<details><summary>corun info</summary>\n\n```\n" + info.strip() + "\n```\n</details>\n")
lines.append("| E,H,B,T | MFLOP | weights fit L2 | corun ms (p99) | (b) fused ms (p99) | (a) gemms ms (p99) | corun GFLOP/s | fused GFLOP/s | gemms GFLOP/s | fused / corun | gemms / corun | requests |")
lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
for c, flops, wb, res, plan in rows:
    g = lambda impl: flops / (res[impl][0] * 1e6)
    lines.append(f"| {c} | {flops/1e6:.1f} | {'yes' if wb <= l2_total else 'no'} ({wb/1024:.0f} KiB) | "
                 f"{res['corun'][0]:.3f} ({res['corun'][1]:.3f}) | {res['fused'][0]:.3f} ({res['fused'][1]:.3f}) | "
                 f"{res['gemms'][0]:.3f} ({res['gemms'][1]:.3f}) | {g('corun'):.1f} | {g('fused'):.1f} | {g('gemms'):.1f} | "
                 f"{res['fused'][0]/res['corun'][0]:.2f} | {res['gemms'][0]/res['corun'][0]:.2f} | {res['corun'][2]} |")
lines.append("\nPlans corun chose (calibrated once per configuration, `corun serve-bench` output):\n")
for c, flops, wb, res, plan in rows:
    lines.append(f"- {c}: {plan}")
open(out, "w").write("\n".join(lines) + "\n")
print(out)
PY
