#!/usr/bin/env bash
# Sets everything up and runs the whole test suite; exits non-zero on any failure.
#   1. the suite against the StarPU setup.sh chooses for this machine (all labels);
#   2. the StarPU-dependent labels (engine, cli, install) again against the source-built StarPU with STARPU_NCPU=8
#      (oversubscribed on small machines: checks correctness with teams of width 1/2/4/8, not speed).
#   3. the unit and engine labels again under AddressSanitizer + UndefinedBehaviorSanitizer.
# CORUN_TEST_NCPU8=0 skips step 2, CORUN_TEST_SANITIZE=0 step 3 (quick local runs only; CI runs all).
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
if [[ "${CORUN_TEST_SANITIZE:-1}" != 0 ]]; then
  # 3. AddressSanitizer + UndefinedBehaviorSanitizer over the unit and engine labels (system StarPU, one
  #    worker per core). StarPU and OpenBLAS are not instrumented; their memory is still checked at our
  #    boundaries. Leak checking is off: StarPU 1.3 keeps allocations until exit by design (docs/testing.md).
  #    Any report fails the test (halt_on_error / abort_on_error).
  root=$(cd "$here/.." && pwd)
  san="$root/build/sanitize"
  flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  echo "== corun tests: $san (ASan + UBSan; labels unit, engine)"
  cmake -S "$root" -B "$san" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >"$san.configure.log" 2>&1 \
    || { cat "$san.configure.log" >&2; echo "error: sanitizer configure failed" >&2; exit 1; }
  cmake --build "$san" -j"$jobs" >"$san.build.log" 2>&1 \
    || { tail -n 60 "$san.build.log" >&2; echo "error: sanitizer build failed (log: $san.build.log)" >&2; exit 1; }
  (cd "$san" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ctest --output-on-failure -L 'unit|engine' -j"$jobs")
fi
echo "== all corun tests passed"
