#!/usr/bin/env bash
# Benchmark: the latency of dependent team tasks, builds side by side (docs/scheduling.md, "Team barriers").
#
#   bench/team_latency.sh --builds "build/system build/source" [--tasks 20000] [--repeats 5] [--out FILE]
#
# bench/task_overhead --chain: every task reads and writes one variable, so each starts only after the one
# before ended, and µs per task is end-to-start latency, not throughput. Cases, all under cpf:
#   width 1   (2x1)  a chain of width-1 tasks: the floor without teams;
#   width 2   (1x2)  a chain of team tasks: each pays the team's barriers before and after its kernel;
#   alternate (1x2)  width 1 and width 2 alternating, as an LSTM step alternates elementwise ops on one core
#                    with team GEMMs (the idle member joins the next team from its polling loop).
# Repeats are interleaved (repeat r of every case and build before repeat r + 1); the table gives medians of
# the repeats' medians, their min-max, and each build's ratio to the first. One process per run (StarPU starts
# once per process), each with a fresh STARPU_HOME. Not a test; run it alone on the machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

builds=
tasks=20000
repeats=5
out=
usage="usage: $0 --builds \"DIR DIR ...\" [--tasks N] [--repeats R] [--out FILE]"
while (($#)); do
  case "$1" in
    --builds) builds=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[[ -n "$builds" ]] || { echo "error: --builds is required" >&2; echo "$usage" >&2; exit 2; }
dirs=()
for b in $builds; do
  d=$(bench_build_dir "$b")
  [[ -x "$d/bench/task_overhead" ]] || { echo "error: $d/bench/task_overhead not found (build it first)" >&2; exit 1; }
  dirs+=("$d")
done
[[ -n "$out" ]] || out="$root/bench/results/team-latency-$(date -u +%Y%m%d-%H%M%S).md"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
load_start=$(bench_load)
cases=("width1:2x1:--width 1" "width2:1x2:--width 2" "alternate:1x2:--width 2 --alternate")

for r in $(seq 1 "$repeats"); do
  for c in "${cases[@]}"; do
    IFS=: read -r name layout args <<<"$c"
    for i in "${!dirs[@]}"; do
      echo "[bench] repeat $r/$repeats $name build $i" >&2
      mkdir -p "$work/home"
      # shellcheck disable=SC2086
      env -u XDG_CACHE_HOME -u STARPU_SCHED CORUN_QUIET=1 CORUN_SCHED=cpf CORUN_EXECUTORS="$layout" CORUN_PROFILE= \
        CORUN_FIXED_WIDTH= STARPU_HOME="$work/home" "${dirs[$i]}/bench/task_overhead" --chain $args \
        --tasks "$tasks" --runs 3 --json "$work/$name.$i.$r.json" 2> >(grep -v '^\[starpu\]' >&2) >/dev/null
      rm -rf "$work/home"
    done
  done
done

{
  echo "# Dependent team-task latency ($(date -u +%Y-%m-%dT%H:%MZ), git $(bench_git_sha))"
  echo
  echo "\`bench/team_latency.sh --builds \"$builds\" --tasks $tasks --repeats $repeats\`; $(bench_load_note "$load_start" "$(bench_load)")."
  echo "Empty SPMD tasks in one dependency chain under cpf: µs per task, i.e. from one task's end to the next"
  echo "one's end, as the kernels are empty (median of $repeats interleaved repeats, each the median of 3 runs of"
  echo "$tasks tasks)."
  echo
  for i in "${!dirs[@]}"; do
    echo "Build $i: ${dirs[$i]}"
    echo
    echo '```'
    bench_corun_info "${dirs[$i]}/cli/corun"
    echo '```'
    echo
  done
  python3 - "$work" "${#dirs[@]}" "${cases[@]}" <<'EOF'
import glob, json, os, statistics, sys
work, nbuild, cases = sys.argv[1], int(sys.argv[2]), [c.split(":") for c in sys.argv[3:]]
header = "| case | layout |" + "".join(f" build {i} µs/task | min-max |" for i in range(nbuild))
header += "".join(f" build {i} / build 0 |" for i in range(1, nbuild))
print(header)
print("|---|---|" + "---:|---:|" * nbuild + "---:|" * (nbuild - 1))
for name, layout, _ in cases:
    meds = []
    row = f"| {name} | {layout} |"
    for i in range(nbuild):
        v = [json.load(open(p))["summary"]["median_us"] for p in glob.glob(os.path.join(work, f"{name}.{i}.*.json"))]
        m = statistics.median(v) if v else float("nan")
        meds.append(m)
        row += f" {m:.2f} | {min(v):.2f}-{max(v):.2f} |" if v else " failed | |"
    row += "".join(f" {meds[i] / meds[0]:.2f} |" for i in range(1, nbuild))
    print(row)
EOF
} >"$out"
cat "$out"
echo "[bench] wrote $out" >&2
