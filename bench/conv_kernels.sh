#!/usr/bin/env bash
# Benchmark (issue 5): single-threaded convolution kernels, corun's im2col + OpenBLAS against oneDNN, on the
# CIFAR-quick and PathNet shapes (program bench/conv_kernels.cpp, target conv_kernels, built when oneDNN's
# libdnnl-dev is installed). The measurement behind the kernel choice in docs/models.md.
#
#   bench/conv_kernels.sh [--reps 20] [--build DIR] [--out FILE]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
reps=20
build=
out=
while (($#)); do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--reps N] [--build DIR] [--out FILE]" >&2; exit 2 ;;
  esac
done
build=$(bench_build_dir "$build")
prog="$build/bench/conv_kernels"
[[ -x "$prog" ]] || { echo "error: $prog not found (needs libdnnl-dev; build the conv_kernels target)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/conv-kernels-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"
{
  echo "# Convolution kernels, one thread: corun im2col + OpenBLAS against oneDNN"
  echo
  echo "- command: \`bench/conv_kernels.sh --reps $reps\`"
  echo "- git: $(bench_git_sha)"
  echo "- cpu: $(lscpu | sed -n 's/^Model name: *//p'), nproc $(nproc)"
  echo "- oneDNN: $(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null || echo unknown) (Debian libdnnl-dev), OMP_NUM_THREADS=1; OpenBLAS pinned to 1 thread"
  echo "- median of $reps timed calls after one warm-up, whole batch on one thread (one team member's work at width 1)"
  echo "- corun oneDNN: the conv2d codelets' oneDNN kernels (format any, reorders inside the call; 1x1 windows at stride 1 on the plain NCHW/OIHW buffers, the onednn-plain entry of conv_impls.hpp; -1: not supported here); impl: ONEDNN_VERBOSE=1 on the program shows it per call"
  echo "- $(bench_load_note "$(bench_load)")"
  echo "- vector ISA: $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)${ONEDNN_MAX_CPU_ISA:+, ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA}"
  echo
  OMP_NUM_THREADS=1 "$prog" "$reps"
  echo
  echo '## Machine'
  echo
  echo '```'
  bench_corun_info "$build/cli/corun"
  echo '```'
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
