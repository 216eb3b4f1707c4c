#!/usr/bin/env bash
# Sets everything up and runs the whole test suite; exits non-zero on any failure.
#   1. the suite against the StarPU setup.sh chooses for this machine (all labels);
#   2. the StarPU-dependent labels (engine, cli, install) again against the source-built StarPU with STARPU_NCPU=8
#      (oversubscribed on small machines: checks correctness with teams of width 1/2/4/8, not speed).
# CORUN_TEST_NCPU8=0 skips step 2 (for quick local runs only; CI runs both).
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
echo "== all corun tests passed"
