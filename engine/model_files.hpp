// engine/model_files.hpp — keeping StarPU's saved perfmodels usable.
#pragma once

#include <filesystem>
#include <string>

namespace corun::engine {

/// Where StarPU keeps this process's performance models: STARPU_PERF_MODEL_DIR, else
/// $XDG_CACHE_HOME, $STARPU_HOME or $HOME followed by .starpu/sampling; empty when none is set.
std::filesystem::path sampling_dir();

/// The corun policy's remembered width climbs for `machine_key` (sched/corun/climb_memory.hpp), beside
/// StarPU's models: <sampling dir>/corun-climbs.<key>.json; empty when there is no sampling dir or key.
std::string climb_memory_path(const std::string& machine_key);

/// Checks corun's history-model files for this machine key before StarPU loads them. StarPU aborts the
/// process on a malformed file; a corrupt or truncated one is renamed to `<file>.corrupt` with a warning,
/// so the run recalibrates that op instead of crashing.
void quarantine_corrupt_models(const char* machine_key, bool quiet);

/// Held around starpu_init: an exclusive lock on this machine key's bus-calibration files (a lock file
/// beside them). StarPU 1.3.10 writes those files on first use without a lock, and a process reading them
/// half-written asserts (check_bus_affinity_file, src/core/perfmodel/perfmodel_bus.c:1078): four MPI
/// ranks starting on a fresh STARPU_HOME did. With the lock, the first process calibrates and the others
/// read complete files. Without a writable home it locks nothing (StarPU cannot write there either).
class BusFilesLock {
 public:
  explicit BusFilesLock(const char* machine_key);
  ~BusFilesLock();
  BusFilesLock(const BusFilesLock&) = delete;
  BusFilesLock& operator=(const BusFilesLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace corun::engine
