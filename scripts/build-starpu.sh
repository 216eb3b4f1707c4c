#!/usr/bin/env bash
# Build StarPU 1.3.10 from Debian's source package with the caps corun needs.
#
# Why: Debian's libstarpu-dev was configured with 1.3.10's default --enable-maxcpus=auto, which took the
# buildd's core count: 4 CPU workers and 2 NUMA nodes at most. Combined workers (our teams) share the worker
# id space, so a manycore node needs maxcpus well above its core count (see docs/architecture.md).
#
#   scripts/build-starpu.sh [source|simgrid]
#
# source (default): the native build, with StarPU-MPI (libstarpumpi-1.3, Open MPI from Debian), which
# `mpirun -np N corun train` uses (docs/batch-jobs.md#several-nodes); the "-mpi" in the cache key makes
# machines that cached the earlier build without MPI build this one. The source flavour carries corun's
# patches (scripts/starpu-patches/*.patch, each says why; "-p<N>" in the cache key counts them, so a machine
# with an older cache builds again). simgrid: the same StarPU with
# --enable-simgrid against Debian's libsimgrid-dev (3.32), for `corun simulate`: kernels become simulated
# sleeps taken from the perf models (docs/simulation.md). SimGrid forces hwloc off, and MPI off (below).
#
# Result: a prefix outside the repository, reused when present:
#   ${CORUN_CACHE:-$HOME/.cache/corun}/starpu-1.3.10-cpus256-numa16-mpi-p1             (source)
#   ${CORUN_CACHE:-$HOME/.cache/corun}/starpu-1.3.10-simgrid-cpus256-numa16-workers400 (simgrid)
# Prints that prefix on its last line of stdout. Everything else goes to stderr.
set -euo pipefail

STARPU_VERSION=1.3.10
MAXCPUS=256
MAXNUMANODES=16
cache=${CORUN_CACHE:-$HOME/.cache/corun}
variant=${1:-source}
patches=()
[[ "$variant" == source ]] && patches=("$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"/starpu-patches/*.patch)
case "$variant" in
  source) prefix="$cache/starpu-$STARPU_VERSION-cpus$MAXCPUS-numa$MAXNUMANODES-mpi-p${#patches[@]}" ;;
  # 128 simulated cores need 128 worker ids plus 127 for the aligned power-of-two teams: maxcpus 256.
  # "-workers400": see --enable-maxmpidev below (a build without it, STARPU_NMAXWORKERS 144, is not reused).
  simgrid) prefix="$cache/starpu-$STARPU_VERSION-simgrid-cpus$MAXCPUS-numa$MAXNUMANODES-workers400" ;;
  *) echo "[build-starpu] error: flavour '$variant' is not one of source, simgrid" >&2; exit 2 ;;
esac
stamp="$prefix/.corun-build-complete"

log() { echo "[build-starpu] $*" >&2; }

# What a complete build installs: StarPU, and StarPU-MPI in the source flavour only (MPI is off under
# SimGrid: asking for its file there rebuilt the SimGrid StarPU on every run, issue 52).
installed=("$prefix/lib/pkgconfig/starpu-1.3.pc")
[[ "$variant" == source ]] && installed+=("$prefix/lib/pkgconfig/starpumpi-1.3.pc")
complete=1
for f in "$stamp" "${installed[@]}"; do [[ -f "$f" ]] || complete=0; done
if ((complete)); then
  log "reusing $prefix"
  echo "$prefix"
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  log "error: needs root to add the deb-src entry and install build dependencies (run as root)"
  exit 1
fi

# A deb-src entry of our own, mirroring the machine's Debian sources, so `apt-get source` works without
# editing the system's files.
src_list=/etc/apt/sources.list.d/corun-deb-src.sources
if [[ ! -f "$src_list" ]]; then
  log "adding $src_list"
  cat > "$src_list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -q >&2
fi

export DEBIAN_FRONTEND=noninteractive
# Build dependencies for a CPU-only build with MPI (configure is shipped, no autotools needed).
apt-get install -y -q --no-install-recommends dpkg-dev build-essential patch pkg-config libhwloc-dev \
  openmpi-bin libopenmpi-dev >&2
simgrid_flags=()
if [[ "$variant" == simgrid ]]; then
  apt-get install -y -q --no-install-recommends libsimgrid-dev >&2
  # Last on the configure line, so they win over the native flags: StarPU-MPI under SimGrid would need a
  # static build and smpirun (configure.ac:587-589), so MPI stays off here whatever the native build does.
  # --enable-maxmpidev=1: 1.3.10's configure computes STARPU_NMAXWORKERS as 16 * ceil((maxmpidev * maxcpus
  # + CUDA + OpenCL + MIC slots) / 16) and, under SimGrid only, leaves maxmpidev at 0 (configure.ac:2376-2395),
  # which drops the CPUs: 144 workers whatever maxcpus says, too few for 128 cores + 127 teams. With 1 it is
  # 400. Master-slave MPI stays off (the option only sizes an unused array).
  simgrid_flags=(--enable-simgrid --disable-mpi --enable-maxmpidev=1)
fi

work="$cache/src-$variant"
rm -rf "$work"
mkdir -p "$work"
# apt downloads as the unprivileged _apt user when it can write the target directory (no sandbox warning).
id _apt >/dev/null 2>&1 && chown _apt "$work"
cd "$work"
log "apt-get source starpu"
apt-get source --download-only -q "starpu=$STARPU_VERSION*" >&2 || apt-get source --download-only -q starpu >&2
orig=$(ls starpu_"$STARPU_VERSION"*.orig.tar.* | head -n 1)
tar xf "$orig"
srcdir=$(find . -maxdepth 1 -type d -name "starpu-$STARPU_VERSION*" | head -n 1)
cd "$srcdir"
for p in "${patches[@]}"; do
  log "patch: $(basename "$p")"
  patch -p1 --forward --quiet <"$p" >&2 || { log "error: $(basename "$p") does not apply to $srcdir"; exit 1; }
done

log "configure ($variant, maxcpus=$MAXCPUS, maxnumanodes=$MAXNUMANODES) into $prefix"
./configure --prefix="$prefix" \
  --enable-maxcpus="$MAXCPUS" --enable-maxnumanodes="$MAXNUMANODES" \
  --enable-mpi --with-mpicc="$(command -v mpicc)" --disable-mpi-check \
  --disable-cuda --disable-opencl --disable-fortran \
  --disable-build-doc --disable-build-examples --disable-build-tests \
  --disable-starpufft --disable-socl --disable-starpurm --disable-mlr \
  --disable-gcc-extensions --disable-opengl-render --without-fxt "${simgrid_flags[@]}" >"$work/configure.log" 2>&1 \
  || { log "configure failed, see $work/configure.log"; tail -n 30 "$work/configure.log" >&2; exit 1; }

log "make -j$(nproc)"
make -j"$(nproc)" >"$work/make.log" 2>&1 || { log "make failed, see $work/make.log"; tail -n 30 "$work/make.log" >&2; exit 1; }
make install >"$work/install.log" 2>&1 || { log "make install failed, see $work/install.log"; exit 1; }

grep -q "define STARPU_MAXCPUS $MAXCPUS" "$prefix/include/starpu/1.3/starpu_config.h" \
  || { log "error: built StarPU does not have STARPU_MAXCPUS $MAXCPUS"; exit 1; }
if [[ "$variant" == source ]]; then
  [[ -f "$prefix/lib/pkgconfig/starpumpi-1.3.pc" ]] \
    || { log "error: built StarPU has no StarPU-MPI (starpumpi-1.3.pc); see $work/configure.log"; exit 1; }
fi
if [[ "$variant" == simgrid ]]; then
  grep -q "define STARPU_SIMGRID 1" "$prefix/include/starpu/1.3/starpu_config.h" \
    || { log "error: built StarPU does not have STARPU_SIMGRID"; exit 1; }
  workers=$(sed -n 's/^#define STARPU_NMAXWORKERS \([0-9]*\).*/\1/p' "$prefix/include/starpu/1.3/starpu_config.h")
  ((workers >= MAXCPUS)) || { log "error: built StarPU has STARPU_NMAXWORKERS $workers < $MAXCPUS"; exit 1; }
fi
touch "$stamp"
rm -rf "$work"
log "done: $prefix"
echo "$prefix"
