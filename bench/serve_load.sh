#!/usr/bin/env bash
# Benchmark (issue 49): `corun serve` under load on 127.0.0.1, batch-1 requests of ResNet-18, MobileNetV2 and
# the text-similarity bi-GRU, throughput and p50/p99 latency against offered load (closed loop at each
# --concurrency level, bench/serve_load.py), for these server configurations in the same run:
#   - corun adaptive: one `corun serve` on every core, its defaults (dynamic batching, runners = workers: the
#     policy decides how many requests co-run and how wide each op runs);
#   - corun fixed streams of width W for W in --fixed-widths: cores/W `corun serve` processes, each pinned
#     (taskset) to its own W cores with --max-in-flight 1 --max-batch 1, the clients spread over them
#     round-robin (OpenVINO's streams, Triton's instance groups, set by hand); W = every core is the issue's
#     (a), one request at a time on every core, the smaller widths its (b);
#   - PyTorch (bench/serve_torch.py, the ThreadingHTTPServer a user would write around the same network and
#     weights) in cores/W processes of W threads each, pinned the same way, for W in --torch-widths;
# and `corun infer --onnx --iters` alone (batch 1, every core; before and after each model's sessions of a
# round), the latency a served request should approach at low load. Each round runs every configuration of
# every model once, in turn (a noisy period hits them all); the tables give medians over rounds. Before its
# measured levels, each server session is prewarmed at the highest level in bursts of --prewarm s until its
# rate settles (unmeasured: corun imports a batch bucket the first time a runner needs it, and a request that
# comes first waits for that import). One answer of every configuration is compared with `corun infer`'s
# output on the same input.
#
#   bench/serve_load.sh [--rounds R] [--models "resnet18 mobilenet_v2 text_similarity"]
#                       [--concurrency "1 2 4 8"] [--duration S] [--warmup S] [--prewarm S]
#                       [--fixed-widths "1 2"] [--torch-widths "1 2"] [--adaptive "default"]
#                       [--image-size N] [--infer-iters N] [--quick] [--build DIR] [--out FILE] [--note TEXT]
#                       [--work DIR]
#
# --adaptive: one corun adaptive row per entry POLICY[:B], CORUN_SCHED=POLICY ("default": the variable unset) and
# --max-batch B (default: corun serve's); "default:1" co-runs requests without merging them. --quick (under 3
# minutes on 2 cores): one round, 1 and 4 clients, 1 s windows. Every server runs in its own process group and
# is stopped (SIGTERM, then SIGKILL after 10 s) when its session ends and, whatever happens, when this script
# exits. Not a test; run it on a quiet machine: flock -x /tmp/corun-quiet.lock bench/serve_load.sh
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"

rounds=3
models="resnet18 mobilenet_v2 text_similarity"
levels="1 2 4 8"
duration=1.5
warmup=0.3
prewarm=1
fixed_widths=
torch_widths=
adaptive=default
image_size=64
infer_iters=30
build=
out=
note=
work=
usage="usage: $0 [--rounds R] [--models \"M ...\"] [--concurrency \"C ...\"] [--duration S] [--warmup S] [--prewarm S] [--fixed-widths \"W ...\"] [--torch-widths \"W ...\"] [--adaptive \"P[:B] ...\"] [--image-size N] [--infer-iters N] [--quick] [--build DIR] [--out FILE] [--note TEXT] [--work DIR]"
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --concurrency) levels=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --prewarm) prewarm=$2; shift 2 ;;
    --fixed-widths) fixed_widths=$2; shift 2 ;;
    --torch-widths) torch_widths=$2; shift 2 ;;
    --adaptive) adaptive=$2; shift 2 ;;
    --image-size) image_size=$2; shift 2 ;;
    --infer-iters) infer_iters=$2; shift 2 ;;
    --quick) rounds=1; levels="1 4"; duration=1; warmup=0.3; prewarm=0.7; infer_iters=10; shift ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --note) note=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done

# The CPUs this script may use (its affinity mask: taskset/cgroups around it are respected), as an array.
cpu_list() {
  local spec part lo hi
  spec=$(taskset -cp $$ | sed 's/.*: //')
  for part in ${spec//,/ }; do
    lo=${part%-*} hi=${part#*-}
    seq "$lo" "$hi"
  done
}
mapfile -t cpus < <(cpu_list)
ncpu=${#cpus[@]}
# Fixed widths: the powers of two that divide the cores, every core included (the issue's (a)). PyTorch: one
# thread per process pinned to each core (TorchServe's pinned workers) and one process of every core.
if [[ -z "$fixed_widths" ]]; then
  for ((w = 1; w <= ncpu; w *= 2)); do ((ncpu % w)) || fixed_widths+="$w "; done
  ((ncpu & (ncpu - 1))) && fixed_widths+="$ncpu"
fi
[[ -n "$torch_widths" ]] || torch_widths=$( ((ncpu > 1)) && echo "1 $ncpu" || echo 1)

for n in "$rounds" "$image_size" "$infer_iters" $levels $fixed_widths $torch_widths; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: counts must be positive integers, got '$n'" >&2; echo "$usage" >&2; exit 2; }
done
for s in "$duration" "$warmup" "$prewarm"; do
  [[ "$s" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "error: --duration, --warmup and --prewarm take seconds, got '$s'" >&2; exit 2; }
done
for w in $fixed_widths $torch_widths; do
  ((ncpu % w == 0)) || { echo "error: width $w does not divide the $ncpu CPUs of this process (${cpus[*]})" >&2; exit 2; }
done
for p in $adaptive; do
  [[ "$p" =~ ^[a-z]+(:[1-9][0-9]*)?$ ]] || { echo "error: --adaptive: '$p' is not POLICY or POLICY:MAXBATCH" >&2; exit 2; }
done
served_models="resnet18 mobilenet_v2 text_similarity"
for m in $models; do
  bench_in_list "$(tr ' ' '\n' <<<"$served_models")" "$m" ||
    { echo "error: --models: '$m' is not one this benchmark serves ($served_models)" >&2; exit 2; }
done

py=/usr/bin/python3
[[ -x "$py" ]] || py=python3
"$py" -c 'import torch, torchvision, onnx, numpy' 2>/dev/null ||
  { echo "error: $py cannot import torch, torchvision, onnx and numpy: apt-get install python3-torch python3-torchvision python3-onnx" >&2; exit 1; }
command -v setsid >/dev/null && command -v taskset >/dev/null || { echo "error: setsid and taskset are needed (util-linux)" >&2; exit 1; }
build=$(bench_build_dir "$build")
corun="$build/cli/corun"
[[ -x "$corun" ]] || { echo "error: $corun not found (build first: cmake --build $build --target corun_cli)" >&2; exit 1; }
serve_help=$("$corun" serve --help 2>&1) ||
  { echo "error: '$corun serve --help' failed: this build has no corun serve (issue 49)" >&2; echo "$serve_help" >&2; exit 1; }
grep -q -- --max-in-flight <<<"$serve_help" ||
  { echo "error: corun serve has no --max-in-flight: the fixed-stream configurations need it (one request at a time per server)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/serve-load-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"

# Servers: every one started by start_server is in its own process group (setsid), listed here, and stopped by
# stop_servers when its session ends or by the EXIT trap whatever the way out (error, ^C, SIGTERM).
server_pids=()
stop_servers() {
  local pid t
  for pid in "${server_pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  for pid in "${server_pids[@]}"; do
    for ((t = 0; t < 100; ++t)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  server_pids=()
}
keep_work=1
if [[ -n "$work" ]]; then
  mkdir -p "$work"
  work=$(cd "$work" && pwd)
else
  work=$(mktemp -d)
  keep_work=0
fi
cleanup() {
  stop_servers
  ((keep_work)) || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

export STARPU_HOME="$work/starpu-home"
unset XDG_CACHE_HOME STARPU_SCHED CORUN_SCHED CORUN_PROFILE CORUN_EXECUTORS CORUN_FIXED_WIDTH CORUN_DETERMINISTIC \
  CORUN_SCHEDULE CORUN_VERBOSE CORUN_WIDTH_INTERVAL STARPU_NCPU OMP_NUM_THREADS
results="$work/results.jsonl"
: >"$results"
start_load=$(bench_load)

# start_server LOG CPUS COMMAND...: starts COMMAND pinned to CPUS in a new process group; once it prints
# "listening on http://HOST:PORT" (corun serve and serve_torch.py both do), prints that URL. Fails, showing the
# log's end, when the server exits first or says nothing within 120 s (an import of a large model on 2 busy
# cores takes seconds, not minutes).
start_server() {
  local log=$1 group=$2 pid url t
  shift 2
  setsid taskset -c "$group" "$@" >"$log" 2>&1 </dev/null &
  pid=$!
  server_pids+=("$pid")
  for ((t = 0; t < 1200; ++t)); do
    url=$(grep -o -m1 'listening on http://[0-9A-Za-z.:-]*' "$log" 2>/dev/null | sed 's/listening on //') || true
    [[ -n "$url" ]] && { echo "$url"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "server on cpus $group did not start: $*" >&2
  tail -n 5 "$log" >&2
  return 1
}

# The CPU groups of width W: "0,1 2,3 ..." from this process's CPUs.
cpu_groups() {
  local w=$1 i j g
  for ((i = 0; i < ncpu; i += w)); do
    g=${cpus[i]}
    for ((j = i + 1; j < i + w; ++j)); do g+=",${cpus[j]}"; done
    echo "$g"
  done
}

# Configurations: "label|kind|width|policy[:max batch]". kind corun-adaptive, corun-fixed or torch.
configs=()
for p in $adaptive; do
  label="corun adaptive"
  extra=()
  [[ "${p%%:*}" == default ]] || extra+=("${p%%:*}")
  [[ "$p" == *:* ]] && extra+=("max batch ${p##*:}")
  ((${#extra[@]})) && label+=" ($(IFS=,; echo "${extra[*]}" | sed 's/,/, /g'))"
  configs+=("$label|corun-adaptive|$ncpu|$p")
done
for w in $fixed_widths; do
  if ((w == ncpu)); then label="corun (a) 1 x $w: one request at a time"; else label="corun (b) streams $((ncpu / w)) x $w"; fi
  configs+=("$label|corun-fixed|$w|default")
done
for w in $torch_widths; do configs+=("PyTorch $((ncpu / w)) x $w|torch|$w|-"); done

# The model files and inputs: bench/serve_torch.py exports the network PyTorch serves (same weights), with a
# dynamic batch axis, and draws batch-1 inputs; corun infer reads float32 .npy (token ids as exact integers).
prepare_model() {
  local m=$1 f
  mkdir -p "$work/$m"
  echo "serve_load: exporting $m" >&2
  "$py" "$here/serve_torch.py" export --model "$m" --image-size "$image_size" --out "$work/$m/$m.onnx" \
    >/dev/null 2>"$work/export.err" || { cat "$work/export.err" >&2; exit 1; }
  "$py" "$here/serve_torch.py" input --model "$m" --image-size "$image_size" --out-dir "$work/$m/in" >"$work/$m/inputs"
  : >"$work/$m/infer-inputs"
  while IFS='=' read -r name f; do
    "$py" -c 'import sys, numpy as np; np.save(sys.argv[2], np.load(sys.argv[1]).astype("<f4"))' "$f" "${f%.npy}.f32.npy"
    echo "$name=${f%.npy}.f32.npy" >>"$work/$m/infer-inputs"
  done <"$work/$m/inputs"
}

# corun infer alone, batch 1, every core, the default policy: its median ms goes into the results.
run_infer() {
  local m=$1 r=$2 args=() spec json
  json="$work/$m/infer.$r.json"
  while read -r spec; do args+=(--input "$spec"); done <"$work/$m/infer-inputs"
  env CORUN_QUIET=1 "$corun" infer --onnx "$work/$m/$m.onnx" --batch 1 "${args[@]}" --iters "$infer_iters" --warmup 2 \
    --json "$json" --output "$work/$m/ref" >/dev/null 2>"$work/infer.err" || { cat "$work/infer.err" >&2; exit 1; }
  "$py" -c 'import json, sys; print(json.dumps({"kind": "infer", "model": sys.argv[2], "round": int(sys.argv[3]),
    "ms": json.load(open(sys.argv[1]))["wall_ms"]}))' "$json" "$m" "$r" >>"$results"
}

# The servers of one configuration for model $1; prints their URLs, one per line.
start_config() {
  local m=$1 kind=$2 w=$3 policy=${4%%:*} batch=() g k=0 env_args=(env CORUN_QUIET=1)
  [[ "$4" == *:* ]] && batch=(--max-batch "${4##*:}")
  [[ "$policy" == default || "$policy" == - ]] || env_args+=(CORUN_SCHED="$policy")
  case "$kind" in
    corun-adaptive)
      start_server "$work/server.0.log" "$(IFS=,; echo "${cpus[*]}")" "${env_args[@]}" "$corun" serve \
        --onnx "$m=$work/$m/$m.onnx" --port 0 "${batch[@]}" ;;
    corun-fixed)
      for g in $(cpu_groups "$w"); do
        start_server "$work/server.$((k++)).log" "$g" "${env_args[@]}" "$corun" serve --onnx "$m=$work/$m/$m.onnx" \
          --port 0 --max-in-flight 1 --max-batch 1 || return 1
      done ;;
    torch)
      for g in $(cpu_groups "$w"); do
        start_server "$work/server.$((k++)).log" "$g" "$py" "$here/serve_torch.py" serve --model "$m" \
          --image-size "$image_size" --threads "$w" --port 0 || return 1
      done ;;
  esac
}

# The prewarm of a session (url_args, in_args set): bursts of --prewarm s at the highest level until two in a
# row give req/s within 15% of each other (at most 8 bursts). corun serve imports a bucket's graph the first
# time a runner merges a batch of its size: ResNet-18's first 2 s at 4 clients ran at a tenth of the steady rate.
prewarm_session() {
  local m=$1 top k rps prev=0 line
  top=$(tr ' ' '\n' <<<"$levels" | sort -n | tail -n 1)
  for ((k = 1; k <= 8; ++k)); do
    line=$("$py" "$here/serve_load.py" "${url_args[@]}" --model "$m" "${in_args[@]}" --concurrency "$top" \
      --duration "$prewarm" --warmup 0) || true
    rps=$("$py" -c 'import json, sys; print(json.loads(sys.argv[1])["throughput_rps"])' "$line" 2>/dev/null) || rps=0
    awk -v a="$rps" -v b="$prev" 'BEGIN { exit !(a > 0 && b > 0 && a <= 1.15 * b && b <= 1.15 * a) }' && break
    prev=$rps
  done
  echo "serve_load:   prewarm: $((k > 8 ? 8 : k)) burst(s), last $rps req/s" >&2
}

# One session: the configuration's servers up, one answer checked (round 1), the prewarm, each level measured.
run_session() {
  local m=$1 r=$2 cfg=$3 label kind w policy urls=() url_args=() in_args=() spec c t0 meta reason
  IFS='|' read -r label kind w policy <<<"$cfg"
  t0=$EPOCHREALTIME
  # Not in a $(...) or <(...): a subshell's server_pids would be lost to stop_servers and the EXIT trap.
  start_config "$m" "$kind" "$w" "$policy" >"$work/urls" || true
  mapfile -t urls <"$work/urls"
  if ((${#urls[@]} < ncpu / w)); then
    reason=$(grep -h -m1 -i 'error\|corun:' "$work"/server.*.log 2>/dev/null | head -n 1 | cut -c1-200)
    "$py" -c 'import json, sys; print(json.dumps({"kind": "unserved", "model": sys.argv[1], "config": sys.argv[2],
      "round": int(sys.argv[3]), "reason": sys.argv[4], "family": sys.argv[5]}))' "$m" "$label" "$r" "${reason:-did not start}" "$kind" \
      >>"$results"
    stop_servers
    rm -f "$work"/server.*.log
    return 0
  fi
  for u in "${urls[@]}"; do url_args+=(--url "$u"); done
  while read -r spec; do in_args+=(--input "$spec"); done <"$work/$m/inputs"
  meta=$("$py" -c 'import json, sys; print(json.dumps({"model": sys.argv[1], "config": sys.argv[2], "round": int(sys.argv[3]),
    "family": sys.argv[6], "servers": int(sys.argv[4]), "startup_s": round(float(sys.argv[5]), 2)}))' "$m" "$label" "$r" "${#urls[@]}" \
    "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')" "$kind")
  if ((r == 1)); then
    "$py" "$here/serve_load.py" "${url_args[@]}" --model "$m" "${in_args[@]}" --probe "$work/probe.npz" \
      --reference "$work/$m/ref" --meta "{\"kind\": \"check\", \"model\": \"$m\", \"config\": \"$label\"}" >>"$results"
  fi
  prewarm_session "$m"
  for c in $levels; do
    "$py" "$here/serve_load.py" "${url_args[@]}" --model "$m" "${in_args[@]}" --concurrency "$c" --duration "$duration" \
      --warmup "$warmup" --meta "${meta%\}}, \"kind\": \"load\"}" >>"$results" || true
  done
  stop_servers
  rm -f "$work"/server.*.log
}

for m in $models; do prepare_model "$m"; done
for ((r = 1; r <= rounds; ++r)); do
  for m in $models; do
    echo "serve_load: round $r of $rounds, $m" >&2
    run_infer "$m" "$r"
    for cfg in "${configs[@]}"; do run_session "$m" "$r" "$cfg"; done
    run_infer "$m" "$r"  # before and after the sessions: a noisy moment moves the reference less
  done
done

cmd="bench/serve_load.sh --rounds $rounds --models \"$models\" --concurrency \"$levels\" --duration $duration --warmup $warmup --prewarm $prewarm --fixed-widths \"$(echo $fixed_widths)\" --torch-widths \"$(echo $torch_widths)\" --adaptive \"$adaptive\" --image-size $image_size --infer-iters $infer_iters"
notes=("$(bench_load_note "$start_load" "$(bench_load)")"
  "$(bench_cpu_lines | head -n 1 | sed 's/^- //')" "$(bench_cpu_lines | tail -n 1 | sed 's/^- //')"
  "PyTorch $("$py" -c 'import torch; print(torch.__version__)') ($py), torch.set_num_threads = the width, no tcmalloc"
  "image models at $image_size px, random weights (export-onnx.py's seed), 1000 classes; text_similarity served batch-first, inputs [B, 7] and [B, 5] transposed inside (serve_torch.py): corun serve refuses export-onnx.py's sequence-first file (\"input 'target_ids' [5, 1] has no batch axis first\")"
  "each level: ${warmup} s of load unmeasured, then ${duration} s measured; per server session first a prewarm at the highest level, bursts of ${prewarm} s until two give req/s within 15%")
[[ -n "$note" ]] && notes+=("$note")
note_args=()
for n in "${notes[@]}"; do note_args+=(--note "$n"); done
"$py" "$here/summarize_serve_load.py" --results "$results" --command "$cmd" --git "$(bench_git_sha)" \
  --info "$(bench_corun_info "$corun")" --levels "$levels" "${note_args[@]}" >"$out"
echo "serve_load: wrote $out" >&2
