#!/usr/bin/env bash
# bench/device/run.sh [bench/onnx_models.sh options]: runs on the lent 16-core machine (bench/device/README.md),
# from the repository's root: unpacks the carried .dev/bundle.tar.xz (bench/device/bundle.sh) to
# /tmp/corun-device, refills the ONNX skeletons' weights (bench/onnx_skeleton.py fill), then runs
# bench/onnx_models.sh with that machine's Python (it holds torch, torchvision, onnx and numpy) and the
# bundle's corun. The results file, machine.txt (corun info, lscpu), results.jsonl and log.txt go to $OUT.
#
# CORUN_DEVICE_LIMIT (seconds, default 360): the benchmark is stopped there, and the rounds and models that
# finished are still summarised (marked partial), so one call of the device tool always brings a table back.
# CORUN_DEVICE_PYTHON (default python3): the Python with torch.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:?"run.sh: OUT (the folder the device tool brings back) is not set"}
py=${CORUN_DEVICE_PYTHON:-python3}
limit=${CORUN_DEVICE_LIMIT:-360}
d=/tmp/corun-device
rm -rf "$d" && mkdir -p "$d/models" || exit 1
tar -C "$d" -xJf "$root/.dev/bundle.tar.xz" || { echo "run.sh: cannot unpack $root/.dev/bundle.tar.xz (carry .dev)" >&2; exit 1; }
export CORUN_BENCH_GIT
CORUN_BENCH_GIT=$(cat "$d/GIT")
{ "$d/cli/corun" info; echo; nproc; lscpu; "$py" -c 'import torch; print("torch", torch.__version__, torch.__config__.parallel_info())'; } \
  >"$out/machine.txt" 2>&1
"$d/cli/corun" info >/dev/null || { cat "$out/machine.txt"; echo "run.sh: the bundle's corun does not start" >&2; exit 1; }
for f in "$d"/onnx/*.onnx; do
  "$py" "$root/bench/onnx_skeleton.py" fill "$f" "$d/models/$(basename "$f")" || exit 1
done
tc=()
[[ -f "$d/tclib/libtcmalloc.so.4" ]] && tc=(--tcmalloc "$d/tclib/libtcmalloc.so.4")
stamp=$(date -u +%Y%m%d-%H%M%S)
table="$out/onnx-models-$stamp-$(nproc)core.md"
# tclib holds tcmalloc and its libunwind only: the preloaded tcmalloc finds libunwind, nothing else moves.
LD_LIBRARY_PATH="$d/tclib" timeout "$limit" "$root/bench/onnx_models.sh" --build "$d" --python "$py" \
  --onnx-dir "$d/models" --work "$d/work" "${tc[@]}" --out "$table" "$@" 2>&1 | tee "$out/log.txt"
rc=${PIPESTATUS[0]}
cp "$d/work/results.jsonl" "$out/" 2>/dev/null
if ((rc != 0)) && [[ -s "$d/work/results.jsonl" && -f "$d/work/machine.json" ]]; then
  echo "run.sh: the benchmark stopped (exit $rc, limit ${limit}s): summarising what finished" >&2
  "$py" "$root/bench/summarize_onnx_models.py" --results "$d/work/results.jsonl" --machine "$d/work/machine.json" \
    --command "bench/device/run.sh $* (partial: stopped after ${limit}s)" --git "$CORUN_BENCH_GIT" \
    --info "$("$d/cli/corun" info 2>/dev/null)" --torch "$("$py" -c 'import torch; print(torch.__version__)') ($py)" \
    --note "partial: the runs that finished before the ${limit}s limit" >"$table"
fi
exit "$rc"
