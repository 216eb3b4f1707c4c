// serve/runtime/team_runner.hpp — runs an Executor's phases on a fixed StarPU team.
//
// The team is a combined worker over the first `width` CPU workers (hwloc order, so neighbours share
// caches); tasks go to it with execute_on_a_specific_worker, which bypasses the engine's policy: the
// rank -> worker mapping is the combined worker's member order, the same for every task, so a member's
// weight blocks stay in its core's L2 (WCS). Two modes (ExecMode):
//   wcs       one SPMD task per request; members loop over every phase and meet at a SpinBarrier per step;
//   per_step  one SPMD task per phase, chained with explicit dependencies (StarPU's start barrier of a
//             parallel task then separates the steps);
//   resident  WCS in one long-lived SPMD task that takes requests from a mailbox (spinning, then yielding,
//             between them) and leaves the workers after 1 ms without a request or when the runner ends;
//   on_caller no task: the calling thread runs the request at width 1 ("inline").
// The task structures are created once and resubmitted (starpu_task_clean between requests); what StarPU
// allocates per submission (its job and the members' task aliases) is the runtime's, not ours.
#pragma once

#include "serve/kernels/executor.hpp"

#include <memory>
#include <string>

namespace corun::serve {

class TeamRunner {
 public:
  /// Creates (or reuses) the team of `width` workers. Throws corun::Error when the engine has fewer workers.
  explicit TeamRunner(int width);
  ~TeamRunner();
  TeamRunner(const TeamRunner&) = delete;
  TeamRunner& operator=(const TeamRunner&) = delete;

  /// Runs every phase of the executor's current request in `mode` and waits. Throws corun::Error when a
  /// member failed. `on_caller` runs it on this thread (width 1); `resident` posts it to the team's
  /// long-lived task (submitted by the first request, and again after it left the team when idle).
  void run(Executor& exec, ExecMode mode);
  /// Ends the resident task now if one runs (the destructor does too), so the team's workers are free.
  void release();
  int width() const;
  /// Creates the task structures for requests of up to `ntasks` tasks (mode per_step: layers * (seq + 1);
  /// wcs: 1) now, so no request allocates them.
  void reserve(int ntasks);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Workers of the running StarPU (CPU workers).
int starpu_cpu_workers();

}  // namespace corun::serve
