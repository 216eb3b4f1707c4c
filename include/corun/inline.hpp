// corun/inline.hpp — running a tiny latency-critical graph on the calling thread, without StarPU.
//
//   corun::InlineRunner run(g);          // once: resolves every node's kernel and buffer pointers
//   for (...) {
//     std::copy(x.begin(), x.end(), g.data(input));   // the graph is not bound: its host buffers are the data
//     run.run();                          // every node's kernel at width 1, in node (topological) order
//     float y = g.data(output)[0];
//   }
//
// Why: a StarPU task costs about 7 us of submission, scheduling and completion on this machine; a batch-1
// wide&deep inference is ~13 tasks of well under a microsecond of work each, so the runtime, not the
// kernels, sets its latency. Running the kernels directly removes that cost for graphs too small to gain
// from parallelism.
//
// The coherence rule: an inline run is allowed only while the graph is bound to no Engine (never run with
// Engine::run, or released with Engine::release). StarPU may then hold no copy of any value, so the graph's
// host buffers (Graph::data) are the only and valid copy, and the kernels read and write them directly.
// run() on a bound graph throws corun::Error (it never silently falls back to StarPU, and never touches
// buffers StarPU may have a newer copy of elsewhere). Conversely, Engine::run binds the graph and after that
// run() refuses until Engine::release: the two paths never interleave on stale data.
//
// The results are bitwise those of Engine::run (every kernel is width-independent, and node order is the
// order StarPU derives its dependencies from). run() allocates nothing; conv2d's column buffer is the
// calling thread's and only grows in the first runs. OpenBLAS is pinned to one thread per call, as under
// the Engine. The runner keeps a reference to the graph: the graph must outlive it and must not change
// (no new nodes or values, no pass) after the runner was made; run() checks the counts and throws if they
// changed.
#pragma once

#include <corun/graph.hpp>

#include <memory>

namespace corun {

class InlineRunner {
 public:
  /// Prepares `graph` for inline runs with the fast kernels (ref_kernels: the plain-loop references).
  /// Throws corun::Error if the graph is bound to an Engine or has a node no kernel runs inline, or if
  /// CORUN_CONV_KERNEL (read here as the Engine reads it, so both give the same bits) is malformed.
  explicit InlineRunner(Graph& graph, bool ref_kernels = false);
  ~InlineRunner();
  InlineRunner(const InlineRunner&) = delete;
  InlineRunner& operator=(const InlineRunner&) = delete;

  /// Runs every node once, in order, on the calling thread. Throws corun::Error if the graph has been bound
  /// to an Engine or changed since the runner was made; a kernel's error propagates as it was thrown.
  void run();

  /// Nodes one run executes (the tasks Engine::run would submit).
  int nodes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace corun
