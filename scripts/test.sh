#!/usr/bin/env bash
# Sets everything up and runs the whole test suite; exits non-zero on any failure.
#   1. the suite against the StarPU setup.sh chooses for this machine (all labels; label mpi, `mpirun -np 2|4
#      corun train`, exists only when CMake found the MPI component and mpirun: about 30 s, run serially);
#   2. the StarPU-dependent labels (engine, cli, install) again against the source-built StarPU with STARPU_NCPU=8
#      (oversubscribed on small machines: checks correctness with teams of width 1/2/4/8, not speed), but not the
#      PyTorch comparisons (label torch) and the few tests that use no StarPU worker (below);
#   3. the unit and engine labels, and the file, checkpoint and signal tests of the cli label (corun itself
#      instrumented: the children inherit ASAN_OPTIONS), again under AddressSanitizer + UndefinedBehaviorSanitizer;
#   4. the engine label and the serving executor's threads and spin barrier again under ThreadSanitizer.
# CORUN_TEST_NCPU8=0 skips step 2, CORUN_TEST_SANITIZE=0 steps 3 and 4 (quick local runs only). CI (.ci/run)
# sets CORUN_TEST_REQUIRE_ALL=1: then a skipped pass is an error, and the last line lists the passes run.
# Every ctest call has --no-tests=error: a label or pattern that selects nothing fails instead of passing.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=$(nproc)
passes_run=() passes_skipped=()

build=$("$here/setup.sh" | tail -n 1)
echo "== corun tests: $build"
# -LE onnx-models: the large ONNX models against PyTorch (ResNet-50, Inception-v3, ...; minutes, docs/testing.md)
# are run by hand, not here.
(cd "$build" && ctest --output-on-failure --no-tests=error -LE onnx-models -j"$jobs")
passes_run+=(all-labels)

if [[ "${CORUN_TEST_NCPU8:-1}" != 0 ]]; then
  # Only the executables of those labels (tests_<label>, tests/CMakeLists.txt): the unit, onnx and serve tests'
  # executables would take minutes to build and never run here.
  source_build=$(CORUN_SETUP_TARGETS="tests_engine tests_cli tests_install" "$here/setup.sh" source | tail -n 1)
  echo "== corun tests: $source_build with STARPU_NCPU=8 (labels engine, cli, install)"
  # Not again here: what neither the StarPU build nor the worker count can change. The PyTorch comparisons
  # (label torch: the same numbers at every width, checked by test_ops; most of their time is torch's), the
  # random kill -9 loop (file-system atomicity of the checkpoint writer), the sbatch templates and plot-trace
  # (no StarPU at all), and the finite-difference checks of the ops' gradients (test_op_gradients*: a quarter
  # of this pass; they run under the default policy, whose tasks are one worker wide at any worker count, and
  # the kernels' bits at widths 1 to 8 are the op harness's, label unit).
  (cd "$source_build" && STARPU_NCPU=8 ctest --output-on-failure --no-tests=error -L 'engine|cli|install' -LE torch \
    -E '^(slurm\.templates|Checkpoint\.KillNineAtRandomMomentsNeverBreaksTheNewestCheckpoint|PlotTrace\..*|(OpGradient|Transposes/MatmulGradient|Geometries/ConvGradient|WithAndWithoutConvBias/FoldBatchNorm)\..*)$' -j1)
  passes_run+=(ncpu8)
else
  passes_skipped+=(ncpu8)
fi
# sanitized_build NAME FLAGS TARGETS: configures build/NAME with the sanitizer FLAGS and builds TARGETS ("all" or
# a list). sanitized_run NAME CTEST-SELECTION ENV...: runs the tests selected there (ctest arguments, e.g.
# "-L engine") with the ENV assignments. Any report fails the pass.
sanitized_build() {
  local name=$1 flags=$2 targets=$3
  local root dir
  root=$(cd "$here/.." && pwd)
  dir="$root/build/$name"
  echo "== corun tests: building $dir ($flags)"
  # -O1 -g1, as the sanitizers' documentation advises: reports keep their function names and lines, and the
  # build takes about half the time of -O2 -g (the instrumented test files took 25 s each to compile at -O2 -g).
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log" >&2; echo "error: $name configure failed" >&2; exit 1; }
  local t=()
  [[ "$targets" == all ]] || for x in $targets; do t+=(--target "$x"); done
  cmake --build "$dir" -j"$jobs" "${t[@]}" >"$dir.build.log" 2>&1 \
    || { tail -n 60 "$dir.build.log" >&2; echo "error: $name build failed (log: $dir.build.log)" >&2; exit 1; }
}
sanitized_run() {
  local name=$1 select=$2; shift 2
  local root
  root=$(cd "$here/.." && pwd)
  echo "== corun tests: $root/build/$name (ctest $select)"
  local args=()
  read -r -a args <<<"$select"
  (cd "$root/build/$name" && env "$@" ctest --output-on-failure --no-tests=error "${args[@]}" -j"$jobs")
}

if [[ "${CORUN_TEST_SANITIZE:-1}" != 0 ]]; then
  # 3. AddressSanitizer + UndefinedBehaviorSanitizer over the unit and engine labels (system StarPU, one
  #    worker per core). StarPU and OpenBLAS are not instrumented; their memory is still checked at our
  #    boundaries. Leak checking is off: StarPU 1.3 keeps allocations until exit by design (docs/testing.md).
  #    The unit label includes the reader fuzzer (tests/fuzz). Of the cli label, the tests whose corun reads or
  #    writes files, checkpoints and handles signals (below): the whole label would add about as much
  #    as the first pass's cli label times the ASan slowdown, more than CI can spare (docs/testing.md).
  asan=(ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
  sanitized_build sanitize "-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
    "tests_unit tests_engine tests_cli"
  #    Not the PyTorch comparisons (label torch): their kernels are the ones the engine label's gradient checks
  #    run, and most of their time is spent in torch.
  sanitized_run sanitize "-L unit|engine -LE torch" "${asan[@]}"
  #    (Not the random kill -9 loop: 24 trainings, a minute uninstrumented; KillInsideWrite covers the writes.)
  sanitized_run sanitize \
    "-L cli -R ^(Table/BadInputs|Checkpoint|Each/Signals|Each/KillInsideWrite|CheckpointKill|CliValues)\. -E KillNine" \
    "${asan[@]}"
  passes_run+=(asan-ubsan)
  # 4. ThreadSanitizer over the engine label (the engine, the policies and the scheduler stress test) and the
  #    serving executor (its team threads and spin barrier), with the suppressions of scripts/tsan.supp: each
  #    one names the third-party report it covers (docs/testing.md).
  tsan=(TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$here/tsan.supp")
  sanitized_build tsan "-fsanitize=thread -fno-omit-frame-pointer" "tests_engine test_serve_executor"
  sanitized_run tsan "-L engine -LE torch" "${tsan[@]}"
  sanitized_run tsan "-R ^(ServeExecutor|ServeBaselines)\." "${tsan[@]}"
  passes_run+=(tsan)
else
  passes_skipped+=(asan-ubsan tsan)
fi
echo "== passes run: ${passes_run[*]}; skipped: ${passes_skipped[*]:-none}"
if [[ "${CORUN_TEST_REQUIRE_ALL:-0}" == 1 && ${#passes_skipped[@]} -gt 0 ]]; then
  echo "error: CORUN_TEST_REQUIRE_ALL=1 but passes were skipped: ${passes_skipped[*]}" >&2
  exit 1
fi
echo "== all corun tests passed"
