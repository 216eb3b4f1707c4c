// sched/hint.hpp — what the engine tells corun's policies about a task (task->sched_data).
//
// A policy never sees a Graph: the engine attaches one TaskHint per submitted task. StarPU's built-in
// policies ignore sched_data, so the engine only sets it when one of our policies runs. A task without
// a hint (sched_data == nullptr) is scheduled with level 0 at its codelet's widest width.
//
// The `placed_*` fields are written by our policies when they place the task and read back by the
// engine after the run (for traces); StarPU's task completion orders the write before the read.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace corun::sched {

struct TaskHint {
  double level_us = NAN;               ///< longest predicted time from this task to the sink, itself included
  int max_width = 0;                   ///< widest team the task may use (0: the codelet's max_parallelism)
  int fixed_width = 0;                 ///< run at exactly this width when the executor allows it (0: policy decides)
  int32_t node = -1;                   ///< graph node index (traces and debugging)
  const double* predicted_us = nullptr;///< predicted µs at width w is predicted_us[w - 1] (NaN: unknown)
  int npredicted = 0;                  ///< entries in predicted_us
  // corun policy (ignored by cpf/fifo).
  int stable_width = 0;                ///< Strategy 2 width of the op's kind (0: the fastest predicted width)
  int kind = -1;                       ///< op signature id for interference feedback (-1: none)
  int fixed_first = -1;                ///< deterministic mode: run on cores [fixed_first, +fixed_width) only
  /// The engine's width search set fixed_width (a tuning run): unlike other fixed widths, the co-tenancy
  /// cap applies, and a task run narrower ends its signature's search (engine/corun_tuning.hpp).
  bool width_search = false;
  bool want_reason = false;            ///< fill placed_reason (tracing, CORUN_VERBOSE=sched)
  /// The graph's first run on this engine: its kernels start cold (oneDNN JIT-compiles and caches its
  /// primitives per thread, buffers and scratch are first touched), so its team timings are no evidence that
  /// another process shares the cores; the co-tenancy governor ignores them.
  bool cold = false;

  // Written by the policy.
  int placed_executor = -1;            ///< executor index
  int placed_first_core = -1;          ///< index of the first core in the policy's ordered worker list
  int placed_width = 0;                ///< team width used
  std::string placed_reason;           ///< corun: candidates considered and why the chosen one won
};

}  // namespace corun::sched
