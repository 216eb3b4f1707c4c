#!/usr/bin/env bash
# Sets up everything corun needs on a Debian 12 machine (as root) and builds it.
#
#   scripts/setup.sh [system|source|simgrid]     builds into build/<flavour>, prints that directory last
#
# Flavour (which StarPU to build against), in order of precedence: the argument, $CORUN_STARPU, or auto:
#   system  Debian's libstarpu-dev (capped at 4 CPU workers and 2 NUMA nodes)
#   source  StarPU 1.3.10 built from Debian's source package with maxcpus 256 / maxnumanodes 16
#           (scripts/build-starpu.sh; cached in ${CORUN_CACHE:-~/.cache/corun})
#   simgrid the same StarPU built with --enable-simgrid against Debian's libsimgrid-dev (build-starpu.sh simgrid):
#           programs run in simulated time; `corun simulate` of a native build runs this build's corun
#           (docs/simulation.md). Only the tests labelled simgrid are built here; no benchmarks or examples.
#   auto    system when the machine's cores plus the teams we create fit in its caps, source otherwise
# CORUN_SETUP_TARGETS: the CMake targets to build, space-separated (default: all of them). scripts/test.sh builds
# only the tests_<label> targets a pass runs (tests/CMakeLists.txt).
# Idempotent: packages already installed and a StarPU build already cached are reused.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
log() { echo "[setup] $*" >&2; }

flavour=${1:-${CORUN_STARPU:-auto}}
case "$flavour" in
  auto|system|source|simgrid) ;;
  *) log "error: StarPU flavour '$flavour' is not one of auto, system, source, simgrid (argument or CORUN_STARPU)"; exit 2 ;;
esac

# librsvg2-bin: rsvg-convert, which `corun plot-trace -o X.png` uses to rasterise its SVG.
# zlib1g-dev + dataset-fashion-mnist: `corun train --model cifar-quick` reads the gzip'ed IDX files.
# nlohmann-json3-dev: the JSON library every corun file format is read and written with (base/json.hpp).
# libdnnl-dev: oneDNN, the conv2d codelets' blocked-layout kernels (codelets/conv2d/conv2d_dnnl.cpp; optional at build
# time) and bench/conv_kernels.sh.
# libxsmm-dev: libxsmm's JIT small-GEMM kernels, measured against OpenBLAS by bench/small_gemm (optional there).
# ccache: the builds of scripts/test.sh (and a CI clone in another folder) share compiled objects (cmake/ccache.cmake).
# libonnx-dev + libprotobuf-dev: the ONNX importer (onnx/, corun::import_onnx); python3-onnx, python3-torch and
# python3-torchvision: scripts/export-onnx.py and the onnx tests' models (skipped without torch).
# openmpi-bin + libopenmpi-dev: mpirun and MPI for `mpirun -np N corun train` over StarPU-MPI (the MPI
# component, CMake option CORUN_MPI; docs/batch-jobs.md#several-nodes) and the tests of label mpi.
# libcpp-httplib-dev: the HTTP server of `corun serve` (serve/http/); curl, python3-requests and wrk: the clients of
# its tests (label serve-http) and of bench/serve_load.sh.
packages=(build-essential cmake pkg-config git libstarpu-dev libopenblas-dev libhwloc-dev libnuma-dev
          libgtest-dev nlohmann-json3-dev python3 python3-numpy librsvg2-bin zlib1g-dev dataset-fashion-mnist libdnnl-dev
          openmpi-bin libopenmpi-dev libonnx-dev libprotobuf-dev python3-onnx python3-torch python3-torchvision libxsmm-dev
          ccache libcpp-httplib-dev curl python3-requests wrk)
# libsimgrid-dev: SimGrid 3.32, which the simgrid flavour's StarPU is built against and links at run time.
if [[ "$flavour" == simgrid ]]; then packages+=(libsimgrid-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    log "error: missing Debian packages (${missing[*]}); run as root or install them: apt-get install ${missing[*]}"
    exit 1
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >&2
  apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

if [[ "$flavour" == auto ]]; then
  # A machine of n cores needs n worker ids plus up to n-1 ids for aligned power-of-two teams.
  cores=$(nproc)
  numa=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
  ((numa > 0)) || numa=1
  sys_cpus=$(sed -n 's/^#define STARPU_MAXCPUS \([0-9]*\).*/\1/p' /usr/include/starpu/1.3/starpu_config.h)
  sys_numa=$(sed -n 's/^#define STARPU_MAXNUMANODES \([0-9]*\).*/\1/p' /usr/include/starpu/1.3/starpu_config.h)
  if ((2 * cores <= sys_cpus && numa <= sys_numa)); then flavour=system; else flavour=source; fi
  log "auto: $cores cores, $numa NUMA node(s), Debian StarPU caps $sys_cpus CPUs / $sys_numa NUMA -> $flavour"
fi

pkgpath=
cmake_flags=()
if [[ "$flavour" == source ]]; then
  prefix=$("$here/build-starpu.sh" | tail -n 1)
  pkgpath="$prefix/lib/pkgconfig"
elif [[ "$flavour" == simgrid ]]; then
  prefix=$("$here/build-starpu.sh" simgrid | tail -n 1)
  pkgpath="$prefix/lib/pkgconfig"
  # Every program linked against a SimGrid StarPU runs simulated: benchmarks and examples would measure nothing.
  # No MPI: the SimGrid StarPU has no StarPU-MPI, and Debian's starpumpi-1.3 (found beside it) does not match it.
  cmake_flags=(-DCORUN_BUILD_BENCH=OFF -DCORUN_BUILD_EXAMPLES=OFF -DCORUN_MPI=OFF)
fi

build="$root/build/$flavour"
mkdir -p "$build"
log "configuring and building corun in $build (StarPU: $flavour)"
PKG_CONFIG_PATH="$pkgpath${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cmake_flags[@]}" >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log" >&2; log "error: cmake configure failed"; exit 1; }
targets=()
for t in ${CORUN_SETUP_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}" >"$build.build.log" 2>&1 \
  || { tail -n 60 "$build.build.log" >&2; log "error: build failed (full log: $build.build.log)"; exit 1; }
log "built $build"
echo "$build"
