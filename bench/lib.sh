# bench/lib.sh — helpers shared by the benchmark scripts (source it; needs $root = the repository root).

# The build directory: $1 if given, otherwise the one scripts/setup.sh builds (and prints last).
# Always absolute: some benchmarks start corun from another directory (co_tenancy.sh's second training).
bench_build_dir() {
  if [[ -n "${1:-}" ]]; then
    [[ -d "$1" ]] || { echo "error: build directory $1 does not exist" >&2; return 1; }
    (cd "$1" && pwd)
  else
    "$root/scripts/setup.sh" | tail -n 1
  fi
}

# Short git revision of the tree, or "unknown"; "+dirty" when tracked files differ from it (the table then
# measured code no commit holds). CORUN_BENCH_GIT, when set, is the revision instead: bench/device/run.sh
# sets it from the bundle, since the device machine's copy of the tree may carry an older .git.
bench_git_sha() {
  local sha
  [[ -n "${CORUN_BENCH_GIT:-}" ]] && { echo "$CORUN_BENCH_GIT"; return; }
  sha=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; return; }
  git -C "$root" diff --quiet HEAD 2>/dev/null || sha="$sha+dirty"
  echo "$sha"
}

# The 1-, 5- and 15-minute load averages, for a results header: on the shared 2-core VM a load near 0 at
# the start means nobody else was running, above 2 that every ms is inflated (read the ratios only).
bench_load() {
  cut -d' ' -f1-3 /proc/loadavg
}

# The results-header phrase for load averages: $1 at the start, $2 (optional) at the end.
bench_load_note() {
  echo "load average (1/5/15 min) at the start: $1${2:+; at the end: $2} (the VM is shared: above 2, read the ratios, not the ms)"
}

# The path of shared library $1 (e.g. libtcmalloc.so.4) in the system's multiarch directories, or nothing.
bench_find_lib() {
  ls /usr/lib/*/"$1" 2>/dev/null | head -n 1 || true
}

# tcmalloc (Debian's libgoogle-perftools4) for PyTorch runs with LD_PRELOAD, as PyTorch's own CPU tuning
# guide recommends: prints the library's path, installing the package when it is missing (as root), or
# nothing (with a warning on stderr naming $1, the calling script) when it cannot.
bench_tcmalloc() {
  local lib
  lib=$(bench_find_lib libtcmalloc.so.4)
  if [[ -z "$lib" ]]; then
    echo "$1: installing libgoogle-perftools4 (tcmalloc, for the PyTorch runs)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libgoogle-perftools4 >&2 ||
      echo "$1: warning: apt-get could not install libgoogle-perftools4; PyTorch runs without tcmalloc only" >&2
    lib=$(bench_find_lib libtcmalloc.so.4)
  fi
  echo "$lib"
}

# `corun info` (topology, workers, StarPU caps, BLAS, git) for the details block of a results file.
# $1 = the corun executable.
bench_corun_info() {
  "$1" info 2>/dev/null || true
}

# Every policy name the build knows (corun's own first, then StarPU's built-ins), one per line.
# $1 = the corun executable.
bench_policies() {
  env -u STARPU_SCHED CORUN_SCHED=help "$1" info 2>/dev/null | awk '/^  / && $1 != "(none" { print $1 }'
}

# corun's own policies only, one per line. $1 = the corun executable.
bench_own_policies() {
  env -u STARPU_SCHED CORUN_SCHED=help "$1" info 2>/dev/null |
    awk '/^corun policies/ { own = 1; next } /^StarPU/ { own = 0 } own && /^  / && $1 != "(none" { print $1 }'
}

# Whether $2 is in the newline-separated list $1.
bench_in_list() {
  grep -qxF -- "$2" <<<"$1"
}

# The common start of an LSTM benchmark script, after its options are parsed. Uses $build and $out (may be
# empty) and $1 = the results name ("lstm-cpf"); sets corun, out, artifacts, work (a temporary directory
# removed at exit), cores, and a private STARPU_HOME so models calibrate from the same state on every
# machine; clears every policy variable so each configuration sets its own. $2 = shared keeps the caller's
# STARPU_HOME and variables instead (bench/lstm_policies.sh --preset policies: what it always measured).
bench_lstm_prepare() {
  build=$(bench_build_dir "$build")
  corun="$build/cli/corun"
  [[ -x "$corun" ]] || { echo "error: $corun not found (build first)" >&2; exit 1; }
  [[ -n "$out" ]] || out="$root/bench/results/$1-$(date -u +%Y%m%d-%H%M%S).md"
  artifacts="${out%.md}"
  mkdir -p "$(dirname "$out")"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  if [[ ${2:-} != shared ]]; then
    export STARPU_HOME="$work/starpu-home"
    unset XDG_CACHE_HOME STARPU_SCHED CORUN_SCHED CORUN_PROFILE CORUN_EXECUTORS CORUN_FIXED_WIDTH CORUN_DETERMINISTIC \
      CORUN_SCHEDULE CORUN_VERBOSE CORUN_WIDTH_INTERVAL
  fi
  cores=$(env CORUN_QUIET=1 "$corun" info | awk '/^workers/ { print $2 }')
}

# The median of the numbers on standard input (separated by spaces or newlines).
bench_median() {
  tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The results-header lines of the CPU: model, cores and vector flags, then OPENBLAS_CORETYPE.
bench_cpu_lines() {
  echo "- cpu: $(lscpu | sed -n 's/^Model name: *//p'), nproc $(nproc); flags: $(grep -o -w 'avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "- OPENBLAS_CORETYPE: ${OPENBLAS_CORETYPE:-unset}"
}
