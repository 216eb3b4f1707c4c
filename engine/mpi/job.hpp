// engine/mpi/job.hpp — the processes of one training job (docs/batch-jobs.md#several-nodes): `mpirun -np N
// corun train ...` or `srun corun train ...` runs N ranks, each with its replicas over its share of the global
// batch. The CLI asks this header, which exists in every build: built with the MPI component (CMake option
// CORUN_MPI) it starts MPI when a launcher started several ranks and installs the engine's cross-rank
// reduction (engine/cross_ranks.hpp); built without it, one process is the only job there is, and being
// started as one of several ranks is an error (each rank would train alone and overwrite the others' files).
#pragma once

#include "base/hash.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace corun::job {

/// This process's place in the job. One process: rank 0 of 1.
struct World {
  int rank = 0;
  int size = 1;
  bool distributed() const { return size > 1; }
};

/// Whether this corun was built with the MPI component.
bool built_with_mpi();

/// The number of ranks the launcher says it started (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or PMIX_RANK with
/// SLURM_STEP_NUM_TASKS), 1 when none is set.
int launcher_size();

/// Starts the job once per process, before any Engine: with several ranks, MPI (MPI_THREAD_MULTIPLE: the
/// main thread's collectives run beside StarPU-MPI's progress thread) and the engine's cross-rank hook.
/// Throws corun::Error when several ranks were launched and MPI is not available (a build without the
/// component, or an MPI library without thread support).
const World& start();
/// The job start() made (rank 0 of 1 before it).
const World& world();

/// One thing every rank must agree on before training (the binary, the arguments, the configuration).
struct Fingerprint {
  std::string what;  ///< "binary", "arguments", ...: named in the error
  uint64_t hash = 0;
};
/// Collective: compares every rank's fingerprints with rank 0's and throws corun::Error (on every rank, with
/// the same text) naming each mismatching item and the ranks that differ. Nothing to compare in one process.
void check_same(const std::vector<Fingerprint>& mine);

/// Collective: every rank's `mine` (the same count on every rank), concatenated in rank order.
std::vector<double> all_gather(const std::vector<double>& mine);

/// Collective: rank 0's `count` floats at `data` replace every other rank's (a resumed checkpoint's tensors).
void broadcast(float* data, size_t count);
/// Collective: rank 0's value, on every rank.
long broadcast(long value);

/// Ends every rank of the job at once with `exit_code` (MPI_Abort: the launcher kills the others and names
/// this rank); in one process, std::exit.
[[noreturn]] void abort_job(int exit_code);

/// Ends the job normally (MPI_Finalize) after the Engine is gone; nothing in one process.
void finish();

/// FNV-1a of `text`, continuing from `seed` (the fingerprints' hash).
uint64_t hash_text(const std::string& text, uint64_t seed = hash::kFnvBasis);
/// Hash of this process's executable file (/proc/self/exe): ranks running different builds differ.
uint64_t executable_hash();

}  // namespace corun::job
