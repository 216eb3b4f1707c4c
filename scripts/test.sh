#!/usr/bin/env bash
# Sets everything up and runs the whole test suite; exits non-zero on any failure.
#   1. the suite against the StarPU setup.sh chooses for this machine (all labels; label mpi, `mpirun -np 2|4
#      corun train`, exists only when CMake found the MPI component and mpirun: about 30 s, run serially);
#   2. the StarPU-dependent labels (engine, cli, install) again against the source-built StarPU with STARPU_NCPU=8
#      (oversubscribed on small machines: checks correctness with teams of width 1/2/4/8, not speed).
#   3. the unit and engine labels again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   4. the engine label again under ThreadSanitizer.
# CORUN_TEST_NCPU8=0 skips step 2, CORUN_TEST_SANITIZE=0 steps 3 and 4 (quick local runs only; CI runs all).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=$(nproc)

build=$("$here/setup.sh" | tail -n 1)
echo "== corun tests: $build"
(cd "$build" && ctest --output-on-failure -j"$jobs")

if [[ "${CORUN_TEST_NCPU8:-1}" != 0 ]]; then
  source_build=$("$here/setup.sh" source | tail -n 1)
  echo "== corun tests: $source_build with STARPU_NCPU=8 (labels engine, cli, install)"
  (cd "$source_build" && STARPU_NCPU=8 ctest --output-on-failure -L 'engine|cli|install' -j1)
fi
# sanitized_pass NAME FLAGS TARGETS LABELS ENV...: configures build/NAME with the sanitizer FLAGS, builds TARGETS
# ("all" or a list) and runs the LABELS there with the ENV assignments. Any report fails the pass.
sanitized_pass() {
  local name=$1 flags=$2 targets=$3 labels=$4; shift 4
  local root dir
  root=$(cd "$here/.." && pwd)
  dir="$root/build/$name"
  echo "== corun tests: $dir ($flags; labels $labels)"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log" >&2; echo "error: $name configure failed" >&2; exit 1; }
  local t=()
  [[ "$targets" == all ]] || for x in $targets; do t+=(--target "$x"); done
  cmake --build "$dir" -j"$jobs" "${t[@]}" >"$dir.build.log" 2>&1 \
    || { tail -n 60 "$dir.build.log" >&2; echo "error: $name build failed (log: $dir.build.log)" >&2; exit 1; }
  (cd "$dir" && env "$@" ctest --output-on-failure -L "$labels" -j"$jobs")
}

if [[ "${CORUN_TEST_SANITIZE:-1}" != 0 ]]; then
  # 3. AddressSanitizer + UndefinedBehaviorSanitizer over the unit and engine labels (system StarPU, one
  #    worker per core). StarPU and OpenBLAS are not instrumented; their memory is still checked at our
  #    boundaries. Leak checking is off: StarPU 1.3 keeps allocations until exit by design (docs/testing.md).
  sanitized_pass sanitize "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    all 'unit|engine' ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # 4. ThreadSanitizer over the engine label (the engine, the policies and the scheduler stress test), with
  #    the suppressions of scripts/tsan.supp: each one names the third-party report it covers (docs/testing.md).
  sanitized_pass tsan "-fsanitize=thread -fno-omit-frame-pointer" tests_engine engine \
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tsan.supp"
fi
echo "== all corun tests passed"
