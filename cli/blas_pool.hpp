// cli/blas_pool.hpp — keeps OpenBLAS from starting its thread pool under an address-space limit.
//
// OpenBLAS starts its pool in its library constructor, before main: one thread per further core, each taking
// a 128 MiB buffer at once. corun never uses the pool (engine/blas.hpp: one thread per call, parallelism from
// StarPU teams). Under `ulimit -v` a pool thread whose allocation fails retries forever at 100% CPU, and both
// fork (OpenBLAS's atfork handler) and exit (its destructor) join that thread: the run never ended (issue 52).
// So, before any library constructor runs (.preinit_array), a process with a finite RLIMIT_AS whose
// OPENBLAS_NUM_THREADS is not 1 executes itself again with OPENBLAS_NUM_THREADS=1, which starts no pool.
// The environment cannot simply be edited there: libc's own initialisation, which runs later, resets it.
#pragma once

namespace corun::cli {

/// Puts back the OPENBLAS_NUM_THREADS the user gave (or unsets it) after the re-execution above, so that
/// `corun info` warns about it and child processes see the user's environment. Call first thing in main.
void restore_user_blas_threads();

}  // namespace corun::cli
