// sched/toolbox/idle_napper.hpp — the mechanism of idle naps (issue 52 item 8): a worker whose pop_task found
// nothing sleeps on its core's condition variable instead of spinning, and the policy wakes it when it
// places a task on that core. The decision (when, how long) is sched/planner/idle_nap.hpp's.
//
// The nap runs inside pop_task, with the worker "relaxed" (starpu_worker_relax_on): StarPU 1.3 lets other
// threads push to a worker's local queue or change its state only while it is relaxed or between scheduling
// operations, so a napping worker never blocks a push to it (which would hold the policy mutex meanwhile).
// With blocking drivers (STARPU_NON_BLOCKING_DRIVERS unset: the SimGrid build) StarPU already puts idle
// workers to sleep, and nap() returns at once.
//
// Threading: nap(core) runs on core's worker only; wake(core) from any thread, with or without the policy
// mutex. A wake that comes before the nap (the task was pushed just before) ends the next nap at once.
#pragma once

#include <starpu.h>

#include <atomic>
#include <memory>

namespace corun::sched {

class IdleNapper {
 public:
  IdleNapper() = default;
  ~IdleNapper();
  IdleNapper(const IdleNapper&) = delete;
  IdleNapper& operator=(const IdleNapper&) = delete;

  /// One sleeper per core of the policy (add_workers).
  void set_up(int cores);
  /// Sleeps on `core`'s worker for `us` µs at most, until wake(core). Returns whether it slept.
  bool nap(int core, double us);
  /// Ends `core`'s nap (or the next one) now. Cheap when nobody naps there: one atomic load.
  void wake(int core);

 private:
  struct Sleeper {
    starpu_pthread_mutex_t mutex;
    starpu_pthread_cond_t cond;
    std::atomic<bool> napping{false};
    std::atomic<bool> woken{false};
  };
  std::unique_ptr<Sleeper[]> sleepers_;
  int cores_ = 0;
};

}  // namespace corun::sched
