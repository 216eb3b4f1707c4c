// corun/observer.hpp — watching an Engine's tasks start and end (Taskflow's ObserverInterface).
//
//   struct Counter : corun::TaskObserver {
//     std::atomic<int> ended{0};
//     void set_up(int) override {}
//     void on_entry(int, const corun::ObservedTask&) override {}
//     void on_exit(int, const corun::ObservedTask&) override { ++ended; }
//   };
//   auto counter = std::make_shared<Counter>();
//   engine.add_observer(counter);   // every task of the following runs
//   engine.run(g);                  // returns after every on_exit of its tasks
//   engine.remove_observer(counter);
//
// The engine calls its observers from one place (engine/task_observers.cpp): on_entry on the worker that runs
// the task (rank 0 of a team) right before its kernel, on_exit on that worker once every member finished. With
// no observer attached the engine does nothing per task. Observers see every task the engine submits: a graph's
// nodes under run, run_on_root, submit and run_replicated, and run_replicated's own reductions and copies.
#pragma once

#include <cstdint>

namespace corun {

/// A task as an observer sees it. Valid only during the call.
struct ObservedTask {
  const char* name = "";  ///< the node's name; for run_replicated's own tasks what they do ("grad_sum", ...)
  int node = -1;          ///< the node's index in its graph's node order; -1 for run_replicated's own tasks
  /// Which run the task belongs to: the Engine numbers its runs from 1, observed or not (one Engine::run,
  /// run_on_root, submit or run_replicated step each). Runs in flight together have their tasks interleaved.
  uint64_t run = 0;
  int width = 1;  ///< cores running it together (a team of StarPU's combined worker; 1: one worker)
};

/// Receives the start and end of every task the Engine runs while it is attached. The calls come from
/// StarPU's worker threads, several at once: an observer must be thread-safe, and fast (it runs on the
/// critical path of every task). An exception must not escape it.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  /// Once, from Engine::add_observer: the engine's CPU workers; every `worker` below is in [0, num_workers).
  virtual void set_up(int num_workers) = 0;
  /// On the worker that runs the task (of a team: rank 0's), right before its kernel, after the team's members
  /// met. Under a simulated StarPU (SimGrid) kernels do not run: it comes just before on_exit.
  virtual void on_entry(int worker, const ObservedTask& task) = 0;
  /// On the same worker after the kernel ended on every member, before the run counts the task as done:
  /// Engine::run and Engine::wait return after the on_exit of each of their tasks. Tasks that read this one's
  /// outputs may already have started.
  virtual void on_exit(int worker, const ObservedTask& task) = 0;
};

}  // namespace corun
