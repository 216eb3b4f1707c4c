// engine/cross_ranks.hpp — the engine's hook for training over several processes (MPI ranks,
// docs/batch-jobs.md#several-nodes). The engine itself links no MPI: the optional component engine/mpi/
// (CMake option CORUN_MPI) installs an implementation before the Engine starts, and Engine::run_replicated
// then adds every rank's gradient sums along a fixed tree over the ranks, after its in-process tree.
#pragma once

#include <starpu.h>

#include <cstddef>
#include <functional>
#include <vector>

namespace corun::engine {

/// The processes of one job, as the engine sees them.
class CrossRanks {
 public:
  virtual ~CrossRanks() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// After starpu_init / before starpu_shutdown (StarPU-MPI's own start and stop).
  virtual void attach() = 0;
  virtual void detach() = 0;
  /// Submits the sum over every rank of `sums[k]` (each rank's in-process gradient sum of parameter k) along
  /// the rank tree (rank_children), and the broadcast of the total back down the same tree, so that every
  /// rank's `sums[k]` ends up holding the same total, bit for bit. `add(k, h)` submits sums[k] += h (the
  /// engine's task, in its root context); the order of additions at each rank is its children's order.
  virtual void submit_allreduce(const std::vector<starpu_data_handle_t>& sums,
                                const std::function<void(size_t, starpu_data_handle_t)>& add) = 0;
  /// Waits for every submitted task and every transfer of this rank (collective: all ranks call it).
  virtual void wait_all() = 0;
  /// Bytes this rank sent in the last submit_allreduce.
  virtual double last_bytes_sent() const = 0;
};

/// The job's ranks (nullptr: one process, the default). Set by the MPI component before an Engine exists.
CrossRanks* cross_ranks();
void set_cross_ranks(CrossRanks* ranks);

/// The reduction tree over `size` ranks: a binary heap (rank p's parent is (p - 1) / 2, its children 2p + 1
/// and 2p + 2), the same shape as the in-process replica tree (numa/replica_plan.cpp, arity 2), so one
/// replica per rank on N ranks adds in exactly the order of N replicas in one process.
std::vector<int> rank_children(int rank, int size);
inline int rank_parent(int rank) { return rank == 0 ? -1 : (rank - 1) / 2; }

}  // namespace corun::engine
