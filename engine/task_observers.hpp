// engine/task_observers.hpp — the Engine's task observers (corun/observer.hpp) and the one place that calls them.
//
// watch() makes a task observed: it keeps the task's own completion callback in the task's Record (a submitted
// run's count-down, the replicated step's context check, CORUN_NUMA=off's remote reads) and points the task at
// exited(), which calls every observer's on_exit and then that callback. The start comes from the codelets'
// trampoline (codelets::set_task_entry_hook, installed only while an observer is attached), which finds the
// Record through the task's callback_arg. With no observer the engine never calls watch(): one branch per run.
//
// Threading: the list changes only while no run is in flight (the Engine holds Impl::mu and has waited for
// the runs in flight, and a recorded run is alone), and submission orders each change before the workers that
// read it, so they read it without a lock.
#pragma once

#include <corun/observer.hpp>

#include <cstdint>
#include <memory>
#include <vector>

struct starpu_task;

namespace corun::engine {

class TaskObservers {
 public:
  /// What a watched task carries until its callback returns. The caller owns it (one per task of a run).
  struct Record {
    ObservedTask task;
    const TaskObservers* observers = nullptr;
    void (*then)(void*) = nullptr;  // the task's own callback, called after the observers' on_exit
    void* then_arg = nullptr;
    bool entered = false;  // on_entry was called (under SimGrid no kernel runs: exited() calls it then)
  };

  TaskObservers() = default;
  ~TaskObservers();
  TaskObservers(const TaskObservers&) = delete;
  TaskObservers& operator=(const TaskObservers&) = delete;

  bool empty() const { return calls_.empty(); }
  /// A user's observer (Engine::add_observer): set_up(workers) now, then every task watched from now on.
  /// Returns false, changing nothing, when it is attached already.
  bool add(std::shared_ptr<TaskObserver> observer, int workers);
  /// Returns false when `observer` was not attached with add().
  bool remove(const TaskObserver* observer);
  /// The engine's own observer for the runs it records (the trace recorder): not owned, no set_up.
  void attach(TaskObserver* observer);
  void detach(TaskObserver* observer);

  /// The number of the next run whose tasks are watched (ObservedTask::run).
  uint64_t next_run() { return ++runs_; }
  /// Makes `task` observed, as task `node` of run `run` (-1: one of the engine's own tasks). After every other
  /// field of the task is set; `record` must live until the task's callback has returned.
  void watch(starpu_task* task, Record& record, int node, uint64_t run) const;

 private:
  static void entered(starpu_task* task);  // the codelets' entry hook
  static void exited(void* record);        // the watched tasks' callback
  void list_changed();                     // installs or removes the entry hook

  std::vector<std::shared_ptr<TaskObserver>> owned_;  // the users' observers
  std::vector<TaskObserver*> calls_;                  // every attached observer, in the order attached
  uint64_t runs_ = 0;
};

/// Attaches the engine's own `observer` (nullptr: none) for one scope, a recorded run, even when it throws.
class ScopedObserver {
 public:
  ScopedObserver(TaskObservers& list, TaskObserver* observer) : list_(list), observer_(observer) {
    if (observer_ != nullptr) list_.attach(observer_);
  }
  ~ScopedObserver() {
    if (observer_ != nullptr) list_.detach(observer_);
  }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  TaskObservers& list_;
  TaskObserver* observer_;
};

}  // namespace corun::engine
