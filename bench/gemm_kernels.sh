#!/usr/bin/env bash
# Benchmark (issue 18 item 2): the matmul kernel's tiles on OpenBLAS against oneDNN's sgemm, one thread, on the
# LSTM, CNN and serving products (program bench/gemm_kernels.cpp, target gemm_kernels). The measurement behind
# CORUN_GEMM_KERNEL=auto (docs/models.md, "Products: OpenBLAS or oneDNN").
#
#   bench/gemm_kernels.sh [--reps 9] [--build DIR] [--out FILE]
#
# Run it again with ONEDNN_MAX_CPU_ISA=AVX2 or another OPENBLAS_CORETYPE to see the other ISAs' columns.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
source "$here/lib.sh"
reps=9
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
prog="$build/bench/gemm_kernels"
[[ -x "$prog" ]] || { echo "error: $prog not found (build the gemm_kernels target)" >&2; exit 1; }
[[ -n "$out" ]] || out="$root/bench/results/gemm-kernels-$(date -u +%Y%m%d-%H%M%S).md"
mkdir -p "$(dirname "$out")"
{
  echo "# Products, one thread: the matmul kernel's tiles on OpenBLAS and on oneDNN's sgemm"
  echo
  echo "- command: \`bench/gemm_kernels.sh --reps $reps\`"
  echo "- git: $(bench_git_sha)"
  echo "- cpu: $(lscpu | sed -n 's/^Model name: *//p'), nproc $(nproc)"
  echo "- vector ISA: $(grep -q avx512f /proc/cpuinfo && echo AVX-512 || echo AVX2)${ONEDNN_MAX_CPU_ISA:+, ONEDNN_MAX_CPU_ISA=$ONEDNN_MAX_CPU_ISA}; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}"
  echo "- oneDNN: $(dpkg-query -W -f='${Version}' libdnnl-dev 2>/dev/null || echo unknown) (Debian libdnnl-dev), its OpenMP team bounded to the calling thread; OpenBLAS pinned to 1 thread"
  echo "- matmul_fast at width 1 (every tile of C, one sgemm call each), the two libraries alternating round by round; GF/s = median of $reps rounds of ~2 ms after a warm-up round"
  echo "- $(bench_load_note "$(bench_load)")"
  echo
  "$prog" "$reps"
  echo
  echo '## Machine'
  echo
  echo '```'
  bench_corun_info "$build/cli/corun"
  echo '```'
} > "$out"
cat "$out"
echo "[bench] wrote $out" >&2
